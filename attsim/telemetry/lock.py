"""The exclusive lock of a run directory: one writer at a time, dead with its process.

A run holds an OS lock on ``<run directory>/.attsim.lock`` from before it
touches any other file until its telemetry is final: ``fcntl.flock`` on
POSIX, ``msvcrt.locking`` of the file's first byte on Windows. The operating
system drops either when the process ends, however it ends (even by SIGKILL
or TerminateProcess), so a killed run never leaves a stale lock. Readers use
the same lock: a run whose lock is held is live and is read without touching
its files; one whose lock is free has no writer and may be recovered, under
the lock.

``import attsim`` must not need a POSIX-only module (Windows has no
``fcntl``): ``msvcrt`` is imported at module level under the platform's test,
``fcntl`` only where it is used.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from ..errors import AttsimError

if sys.platform == "win32":
    import ctypes
    import msvcrt

    def _try_lock(fd: int) -> bool:
        os.lseek(fd, 0, os.SEEK_SET)  # msvcrt locks bytes from the file position: always the first one
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:  # held by another process (or by another descriptor of this one)
            return False
        return True

    def _unlock(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)

    _kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
    _kernel32.OpenProcess.argtypes = (ctypes.c_ulong, ctypes.c_int, ctypes.c_ulong)
    _kernel32.OpenProcess.restype = ctypes.c_void_p  # a HANDLE
    _kernel32.GetExitCodeProcess.argtypes = (ctypes.c_void_p, ctypes.POINTER(ctypes.c_ulong))
    _kernel32.CloseHandle.argtypes = (ctypes.c_void_p,)

    def _pid_exists(pid: int) -> bool:
        # os.kill(pid, 0) would terminate the process on Windows: ask for a handle and its exit code instead
        handle = _kernel32.OpenProcess(0x1000, False, pid)  # PROCESS_QUERY_LIMITED_INFORMATION
        if not handle:
            return ctypes.get_last_error() == 5  # ERROR_ACCESS_DENIED: it exists, owned by someone else
        try:
            code = ctypes.c_ulong()
            return bool(_kernel32.GetExitCodeProcess(handle, ctypes.byref(code))) and code.value == 259  # STILL_ACTIVE
        finally:
            _kernel32.CloseHandle(handle)
else:
    def _try_lock(fd: int) -> bool:
        import fcntl  # POSIX only: imported where it is used, so that no import of attsim needs it

        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def _unlock(fd: int) -> None:
        import fcntl

        fcntl.flock(fd, fcntl.LOCK_UN)

    def _pid_exists(pid: int) -> bool:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:  # exists, owned by someone else
            return True
        return True

__all__ = ["RunLock", "RunDirectoryLockedError", "LOCK_FILE", "process_alive"]

LOCK_FILE = ".attsim.lock"


class RunDirectoryLockedError(AttsimError):
    """Another process is writing a run into this directory."""

    def __init__(self, directory: str, holder: str = ""):
        self.directory, self.holder = directory, holder
        super().__init__(directory, holder)

    def __str__(self) -> str:
        who = f" ({self.holder})" if self.holder else ""
        return (f"out_dir: {self.directory} is in use by another run{who}; one run writes a directory at a time "
                "(give this run another out_dir, or wait for that one to end)")


class RunLock:
    """The OS lock on a run directory's lock file; :meth:`acquire` and :meth:`release`."""

    def __init__(self, directory):
        self.path = Path(directory) / LOCK_FILE
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self, blocking: bool = False, timeout_s: float | None = None) -> bool:
        """Take the lock; False if another process holds it (after ``timeout_s`` when blocking).

        Raises ``OSError`` where the lock file cannot be opened (a read-only directory).
        """
        if self._fd is not None:
            return True
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while not _try_lock(fd):
            if not blocking or (deadline is not None and time.monotonic() >= deadline):
                os.close(fd)
                return False
            time.sleep(0.01)
        self._fd = fd
        return True

    def release(self) -> None:
        if self._fd is not None:
            _unlock(self._fd)
            os.close(self._fd)
            self._fd = None

    def __del__(self):  # a lock object dropped without release still frees the OS lock
        try:
            self.release()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass


def process_alive(pid) -> bool:
    """Whether a process with this id exists (a recorded writer that may still hold its lock)."""
    if isinstance(pid, bool) or not isinstance(pid, int) or pid <= 0:
        return False
    return _pid_exists(pid)
