"""The exclusive lock of a run directory (layer 5): one writer at a time, dead with its process.

A run holds ``fcntl.flock`` on ``<run directory>/.attsim.lock`` from before
it touches any other file until its telemetry is final. The operating system
drops the lock when the process ends, however it ends (even by SIGKILL), so
a killed run never leaves a stale lock. Readers use the same lock: a run
whose lock is held is live and is read without touching its files; one whose
lock is free has no writer and may be recovered, under the lock.
"""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path

from ..errors import AttsimError

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
    """``flock`` on a run directory's lock file; :meth:`acquire` and :meth:`release`."""

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
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                self._fd = fd
                return True
            except BlockingIOError:
                if not blocking or (deadline is not None and time.monotonic() >= deadline):
                    os.close(fd)
                    return False
                time.sleep(0.01)

    def release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def __del__(self):  # a lock object dropped without release still frees the OS lock
        try:
            self.release()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass


def process_alive(pid) -> bool:
    """Whether a process with this id exists (a recorded writer that may still hold its lock)."""
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True
