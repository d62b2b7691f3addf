"""Compiling units in processes of their own, each ending at a memory limit.

Numba and LLVM keep what each unit's compilation allocated: one process
compiling every unit grew to ~700 MB, and a campaign's first compile in the
caller's process took 63 s on 2 cores. :func:`compile_apart` compiles units
in child processes instead, ``jobs`` at a time (numba compiles on one core,
so idle cores divide the wait), from a work queue, each child ending once
it holds :data:`PROCESS_LIMIT_MB` and a fresh one taking its place. The
caller may compile what only it can build (a user's law, a unit no child
knows) meanwhile (:func:`compile_here`).

A child runs :data:`CHILD` ``--feed`` (from the caller's own copy of
attsim) and is handed one unit's cache name at a time on its stdin
(:func:`feed`); it ends with its caller. It finds each among every unit a
machine's missions and ensembles can use
(:func:`attsim.engine.precompile.all_needs`), so only those can be compiled
apart. The caller holds the machine-wide compile lock
(:func:`~attsim.engine.compile_record.compiling`) for its children.
"""

from __future__ import annotations

import math
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

from .._core.units import compile_records, compile_unit, unit_is_cached
from .compile_record import remember, unit_estimates

__all__ = ["compile_apart", "compile_here", "feed", "peak_memory_mb", "usable_cores", "PROCESS_LIMIT_MB", "CHILD"]

# the resident memory (MB) past which a compiling process hands the rest of its units to a fresh one
PROCESS_LIMIT_MB = 360
# the module a compiling child runs (by name: it knows every unit, and so imports what lies above this module)
CHILD = "attsim.engine.precompile"


def compile_here(needs, say, limit_mb: float = math.inf) -> dict:
    """Compile ``needs`` (each with ``unit``, ``signature``, ``options``) not on disk in this process, in order;
    returns ``{unit name: seconds}`` of those compiled, each said by ``say(name, seconds)`` when given. Stops after
    the unit that brings this process's peak memory past ``limit_mb`` (the rest are then left to another)."""
    done = {}
    for need in needs:
        if unit_is_cached(need.unit, need.signature, **need.options):
            continue
        if done and peak_memory_mb() > limit_mb:  # one unit at least, so that a round always makes progress
            break
        before = len(compile_records())
        compile_unit(need.unit, need.signature, **need.options)
        for record in compile_records()[before:]:
            if record.compiled:
                done[need.unit.name] = record.seconds
                if say is not None:
                    say(need.unit.name, record.seconds)
    remember(done)
    return done


def peak_memory_mb(children: bool = False) -> float:
    """This process's peak resident memory (MB; with ``children``, the largest of its ended child processes'), or 0
    where the platform does not say (Windows)."""
    if sys.platform != "win32":
        import resource  # POSIX only

        who = resource.RUSAGE_CHILDREN if children else resource.RUSAGE_SELF
        return resource.getrusage(who).ru_maxrss / 1024.0
    return 0.0


def usable_cores() -> int:
    """The cores this process may run on: its CPU affinity where the platform says it (under ``taskset -c 0`` a
    2-core machine gives one), else the machine's count; at least 1."""
    if sys.platform != "win32":  # POSIX; and of POSIX, Linux's (macOS has none)
        affinity = getattr(os, "sched_getaffinity", None)
        if affinity is not None:
            return max(len(affinity(0)), 1)
    return os.cpu_count() or 1


def compile_apart(needs, jobs: int, say, meanwhile=None) -> dict:
    """Compile the units of ``needs`` not on disk in child processes, ``jobs`` at a time; returns
    ``{unit name: seconds}`` of those compiled, each said by ``say(name, seconds)`` when given.

    A work queue: the units wait longest compile first (this machine's times, else the defaults), and each child
    is handed the next as soon as it has done one, so that no core idles while units remain (dealing them out in
    shares left one core waiting for the other's last and longest). A child that has reached
    :data:`PROCESS_LIMIT_MB` ends after its unit and a fresh one takes its place. A unit found on disk by its turn
    (compiled along with another) is skipped. The children are fed from a thread of this process.

    ``meanwhile``: called (no arguments, in this thread) while the children compile, for the caller's own compiles
    (:func:`compile_here`); the ``{name: seconds}`` it returns joins the result. When it raises (or the caller is
    interrupted), the children are ended and it is raised.

    A child that fails (it cannot start, it is killed: out of memory, say) is said on stderr and its unit is
    handed to a fresh child; a unit whose second child fails too, and every unit once two children in a row have
    failed, is compiled in this process instead, as it comes: a unit that compiles at all is compiled.
    """
    by_name = {n.unit.cache_name(): n for n in needs}
    estimates = unit_estimates(list(by_name))
    pending = sorted((name for name, n in by_name.items() if not unit_is_cached(n.unit, n.signature, **n.options)),
                     key=lambda name: -estimates[name])
    feeder = _Feeder(by_name, pending, max(jobs, 1), say)
    feeder.start()
    done = {}
    try:
        if meanwhile is not None:
            done.update(meanwhile())
        while feeder.is_alive() or not feeder.handed_back.empty():  # what failed children hand back, as it comes
            try:
                name = feeder.handed_back.get(timeout=0.2)
            except queue.Empty:
                continue
            done.update(compile_here([by_name[name]], say))
    except BaseException:
        feeder.stop()
        raise
    remember(feeder.done)  # (the children each keep theirs, racing one another; what this process compiled is kept)
    done.update(feeder.done)
    return done


def _child_command() -> list[str]:
    """A compiling child's command line: :data:`CHILD` run as ``__main__`` with the caller's own ``sys.path``, this
    copy of attsim first (the caller may have it from a checkout that the child's own path would not find, or
    find another copy first), isolated (``-I``: neither the current directory, where a file such as
    ``inspect.py`` would shadow the standard library's, nor ``PYTHONPATH`` comes before them)."""
    root = str(Path(__file__).resolve().parents[2])
    path = [root] + [entry for entry in sys.path if entry != root]
    code = (f"import sys; sys.path[:] = {path!r}; "
            f"sys.argv[1:] = ['--feed', '--limit-mb', {str(PROCESS_LIMIT_MB)!r}, '--parent', {str(os.getpid())!r}]; "
            f"import runpy; runpy.run_module({CHILD!r}, run_name='__main__', alter_sys=True)")
    return [sys.executable, "-I", "-c", code]


def _ended_how(code: int) -> str:
    return f"killed by signal {-code}" if code < 0 else f"exit {code}"


class _Feeder(threading.Thread):
    """Starts the compiling children, hands each the next unit when it is ready, and replaces one that ends at its
    memory limit while units remain."""

    def __init__(self, by_name: dict, pending: list, jobs: int, say):
        super().__init__(name="attsim-compile-feeder", daemon=True)
        self.by_name, self.pending, self.jobs, self.say = by_name, pending, jobs, say
        self.events: queue.SimpleQueue = queue.SimpleQueue()
        self.children: dict = {}  # child -> the unit it compiles now (None: none left for it, or it ends now)
        self.done: dict = {}
        self.handed_back: queue.SimpleQueue = queue.SimpleQueue()  # units left to the caller (compile_apart)
        self.failures: dict = {}  # unit -> children that failed on it
        self.failed_in_a_row = 0
        self.stopped = False
        self._lock = threading.Lock()  # a child is started, or all are ended (stop), never both at once

    def run(self) -> None:
        for _ in range(min(self.jobs, len(self.pending))):
            child = self._start()
            if child is None:
                break
            self._give(child)
        while self.children:
            kind, child, line = self.events.get()
            if kind == "line":
                self._line(child, line)
            else:
                self._ended(child)

    def stop(self) -> None:
        """End every child now, and start no more (the caller failed or was interrupted)."""
        with self._lock:
            self.stopped = True
            children = list(self.children)
        for child in children:
            child.kill()
            child.wait()

    def _start(self) -> subprocess.Popen | None:
        """A new child (None once stopped)."""
        with self._lock:
            if self.stopped:
                return None
            # a session of its own: Ctrl-C at the terminal reaches the caller's process group, and each child
            # printed a KeyboardInterrupt traceback of the compiler's frames (hundreds of lines under the caller's
            # one); the caller stops its children itself (stop), and a child ends with a caller that is gone
            child = subprocess.Popen(_child_command(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                     bufsize=1, start_new_session=True)
            self.children[child] = None

        def read() -> None:
            for line in child.stdout:
                if line.strip():
                    self.events.put(("line", child, line))
            self.events.put(("ended", child, ""))

        threading.Thread(target=read, name="attsim-compile-child", daemon=True).start()
        return child

    def _give(self, child) -> None:
        """Hand ``child`` the next unit not on disk yet, or close its input when none is left (it then ends)."""
        while self.pending and not self.stopped:
            name = self.pending.pop(0)
            need = self.by_name[name]
            if not unit_is_cached(need.unit, need.signature, **need.options):
                self.children[child] = name
                try:
                    child.stdin.write(name + "\n")
                    child.stdin.flush()
                except OSError:  # it has ended already: its end says why (_ended)
                    pass
                return
        self.children[child] = None
        try:
            child.stdin.close()
        except OSError:
            pass

    def _line(self, child, line: str) -> None:
        words = line.split()
        if words[0] == "compiled" and len(words) == 3:
            self.done[words[1]] = float(words[2])
            if self.say is not None:
                self.say(words[1], float(words[2]))
        elif words[0] == "ready" and len(words) in (2, 3):
            self.children[child] = None
            if words[2:] != ["full"]:  # at its memory limit it ends now; a fresh child takes its place
                self._give(child)
        else:  # not the protocol's (numba's debugging output, say): the user's to see
            print(line, end="", file=sys.stderr, flush=True)

    def _ended(self, child) -> None:
        unit = self.children.pop(child)
        code = child.wait()
        if self.stopped:
            return
        if code != 0 or unit is not None:
            self._failed(unit, code)
        else:
            self.failed_in_a_row = 0
        if self.pending and len(self.children) < self.jobs:
            child = self._start()
            if child is not None:
                self._give(child)

    def _failed(self, unit: str | None, code: int) -> None:
        """A child ended before it was done with ``unit``: its unit to a fresh child once, else to the caller; after
        two failed children in a row (they cannot start, say), every unit left to the caller."""
        self.failed_in_a_row += 1
        back = []
        if unit is not None:
            self.failures[unit] = self.failures.get(unit, 0) + 1
            if self.failures[unit] < 2 and self.failed_in_a_row < 2:
                self.pending.insert(0, unit)
            else:
                back.append(unit)
        if self.failed_in_a_row >= 2:
            back += self.pending
            self.pending.clear()
        names = ", ".join(self.by_name[name].unit.name for name in back)
        print(f"attsim: a compiling process ended ({_ended_how(code)}) before it was done; "
              + (f"compiling {names} in this process instead" if back else "a fresh one takes its unit"),
              file=sys.stderr, flush=True)
        for name in back:
            self.handed_back.put(name)


def _leave_with_the_parent(parent: int) -> None:
    """End this compiling child when its parent, process ``parent``, has gone (killed: no one holds the machine's
    lock for it, and the next run compiles the same units), checked now and twice a second."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="attsim-compile-watch", daemon=True).start()


def feed(catalog: dict, lines, limit_mb: float, out, parent: int | None = None) -> None:
    """A compiling child's side (:data:`CHILD` ``--feed``): for each unit's cache name read from ``lines``, compile
    it from ``catalog`` (cache name: need), write ``compiled NAME SECONDS`` for each unit compiled and then
    ``ready NAME`` (``ready NAME full`` when this process has reached ``limit_mb``, and end). It ends with its
    parent, process ``parent`` (given by the parent: one killed while this one started up is gone already)."""
    _leave_with_the_parent(os.getppid() if parent is None else parent)
    for line in lines:
        name = line.strip()
        if not name:
            continue
        for unit, seconds in compile_here([catalog[name]], None).items():
            print("compiled", unit, seconds, file=out, flush=True)
        full = peak_memory_mb() > limit_mb
        print("ready", name, "full" if full else "", file=out, flush=True)
        if full:
            return
