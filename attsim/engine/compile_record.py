"""What this machine has compiled: the machine-wide compile lock and the compile times kept.

Numba writes each compiled unit to its disk cache (:mod:`attsim._core.jit`);
two processes compiling the same unit at once would both pay for it.
:func:`compiling` is a lock of the whole machine (an OS lock on a file in the
cache, dead with its process): a process compiles under it, and the next one
finds the units on disk. The seconds each unit took are kept beside the cache
(:func:`remember`), so :func:`compile_estimate` says how long compiling will
take here. :func:`announce` is what every process says before it compiles: a
mission's run, an ensemble's (or a Gymnasium environment's) first use, and
``attsim compile`` use this one wording.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from contextlib import contextmanager, suppress
from pathlib import Path

from .._core.jit import cache_root
from ..errors import InputError
from ..telemetry.lock import RunLock

__all__ = ["compiling", "remember", "compile_estimate", "unit_estimates", "deal", "directory", "announce",
           "announce_compiled", "announce_rest", "notice", "compiled_line", "print_compiled", "take_lock",
           "LOCK_DIR_NAME", "DEFAULT_COMPILE_S", "LOG_FILE_NAME"]

LOCK_DIR_NAME = "attsim-compile"
TIMES_FILE = "compile-times.json"
LOG_FILE_NAME = "background.log"  # what a background compile says
# a unit's compile time before this machine has compiled it once (s), by the start of its name: the plant's advance
# (the engine's own, an integrator's stages with the whole plant torque), an ensemble's chunk (the same stages in a
# loop over bodies: 7 s with a field, 4 s without, on an empty cache here beside another compile; its commands and
# checks are parts of their own since f7c9fc2, where it took 18.5 s), any other unit (a sample, a law's cycle, a
# writer, a chunk's part: 0.5-15 s)
DEFAULT_COMPILE_S = {"advance_": 12.0, "step_chunk_": 7.0, "": 4.0}


def directory() -> Path:
    """This machine's compile lock and times, beside the compiled code; refused by name when it cannot be made
    (``NUMBA_CACHE_DIR`` a file, read-only, full, or the package's own folder read-only)."""
    path = cache_root() / LOCK_DIR_NAME
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _unwritable(path, exc) from exc
    return path


def _unwritable(path: Path, exc: OSError) -> InputError:
    """The cache's folder refused by name: compiled code cannot be kept (or the machine's compile lock taken)."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return InputError("NUMBA_CACHE_DIR", "must name a directory this user can write compiled code to",
                          f"got {os.environ['NUMBA_CACHE_DIR']!r}: {exc.strerror or exc}")
    return InputError("NUMBA_CACHE_DIR", "must be set to a writable directory: attsim's own folder, where "
                      "compiled code is kept by default, cannot be written", f"{path.parent}: {exc.strerror or exc}")


def take_lock(lock: RunLock, blocking: bool) -> bool:
    """``lock.acquire(blocking)`` on the machine's compile lock; a lock file that cannot be made (a read-only cache
    folder) refused by name, not as the system's error at attsim's line."""
    try:
        return lock.acquire(blocking=blocking)
    except OSError as exc:
        raise _unwritable(lock.path.parent, exc) from exc


def _times() -> dict:
    try:
        return json.loads((directory() / TIMES_FILE).read_text())
    except (OSError, ValueError):
        return {}


_REMEMBERING = threading.Lock()  # a read, update and write of the times at a time in this process


def remember(seconds: dict) -> None:
    """Keep the compile seconds of units compiled here (a write beside, then a rename: readers see all or none)."""
    if not seconds:
        return
    with _REMEMBERING:  # an interrupted compile's thread and its retry's both wrote one file: FileNotFoundError
        times = _times()
        times.update(seconds)
        path = directory() / TIMES_FILE
        partial = path.with_suffix(f".{os.getpid()}-{threading.get_ident()}")
        try:
            partial.write_text(json.dumps(times, indent=1, sort_keys=True))
            partial.replace(path)
        except OSError:  # a full or read-only disk (said where the code could not be cached): only estimates
            with suppress(OSError):
                partial.unlink(missing_ok=True)


def unit_estimates(names: list[str]) -> dict:
    """About how long compiling each unit of ``names`` takes here (s): this machine's last time, else the default."""
    times = _times()
    return {name: times.get(name, next(s for start, s in DEFAULT_COMPILE_S.items() if name.startswith(start)))
            for name in names}


def _dealt(estimates: dict, jobs: int) -> tuple[list[list[str]], list[float]]:
    """``(shares, loads)``: the units of ``estimates`` (name: seconds) dealt to ``jobs`` processes, the longest
    to the least loaded first, and each process's sum."""
    shares, loads = [[] for _ in range(max(jobs, 1))], [0.0] * max(jobs, 1)
    for name in sorted(estimates, key=lambda n: -estimates[n]):
        k = loads.index(min(loads))
        shares[k].append(name)
        loads[k] += estimates[name]
    return shares, loads


def deal(names: list[str], jobs: int) -> list[list[str]]:
    """The units ``names`` dealt to ``jobs`` processes compiling at once: the longest compile (by this machine's
    times) to the least loaded process first."""
    return _dealt(unit_estimates(names), jobs)[0]


def compile_estimate(names: list[str], jobs: int = 1) -> float:
    """About how long compiling the units ``names`` takes here (s), ``jobs`` processes at once (:func:`deal`): the
    longest process's sum of this machine's last times, else of the defaults."""
    return max(_dealt(unit_estimates(names), jobs)[1])


def notice(names: list[str], jobs: int = 1) -> str:
    """What a process says before it compiles the units ``names`` in ``jobs`` processes at once: how many, that it
    is once per machine, about how long (:func:`compile_estimate`), and which."""
    return (f"compiling {len(names)} units for this machine, once (about {compile_estimate(names, jobs):.0f} s): "
            + ", ".join(names))


def announce(names: list[str], jobs: int = 1) -> None:
    """Say :func:`notice` on stderr (the run's own output stays on stdout): never a silent wait."""
    print(f"attsim: {notice(names, jobs)}", file=sys.stderr, flush=True)


def compiled_line(name: str, seconds: float) -> str:
    """What is said of the unit ``name`` once it compiled, in ``seconds``."""
    return f"compiled {name} ({seconds:.1f} s)"


def announce_compiled(name: str, seconds: float) -> None:
    """Say on stderr that the unit ``name`` compiled, in ``seconds`` (after :func:`announce`, one line a unit)."""
    print(f"attsim:   {compiled_line(name, seconds)}", file=sys.stderr, flush=True)


def announce_rest(absent: int, done: int) -> None:
    """After :func:`announce` of ``absent`` units of which ``done`` compiled here, say what became of the others:
    "compiling 12 units" then "11 compiled" must not read as one lost."""
    if done < absent:
        print(f"attsim:   the other {absent - done} were on disk by their turn (compiled by another process, such "
              "as the background compile, or along with a unit that calls them)", file=sys.stderr, flush=True)


def print_compiled(name: str, seconds: float) -> None:
    """Say on stdout that the unit ``name`` compiled: ``attsim compile``'s own output, a line a unit."""
    print(f"attsim: {compiled_line(name, seconds)}", flush=True)


@contextmanager
def compiling():
    """Hold the machine-wide compile lock (processes compile one at a time; the next finds the units on disk)."""
    lock = RunLock(directory())
    if not take_lock(lock, blocking=False):  # a wait of minutes behind "about 18 s" was silent
        print("attsim: another process is compiling for this machine (the background compile, a run, attsim "
              "compile); waiting for it: what it compiles is then loaded from disk", file=sys.stderr, flush=True)
        take_lock(lock, blocking=True)
    try:
        yield
    finally:
        lock.release()
