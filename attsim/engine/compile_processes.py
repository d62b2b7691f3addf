"""Compiling units in processes of their own, each ending at a memory limit.

Numba and LLVM keep what each unit's compilation allocated: one process
compiling every unit grew to ~700 MB, and a campaign's first compile in the
caller's process took 63 s on 2 cores. :func:`compile_apart` compiles units
in child processes instead, ``jobs`` at a time (numba compiles on one core,
so idle cores divide the wait), each ending once it holds
:data:`PROCESS_LIMIT_MB` and a fresh one taking its remaining units. The
caller may compile what only it can build (a user's law, a unit no child
knows) meanwhile (:func:`compile_here`).

A child is ``python -m attsim.engine.precompile --feed`` (:data:`CHILD`),
handed one unit's cache name at a time on its stdin (:func:`feed`): it
finds each among every unit a machine's missions and ensembles can use
(:func:`attsim.engine.precompile.all_needs`), so only those can be compiled
apart. The caller holds the machine-wide compile lock
(:func:`~attsim.engine.compile_record.compiling`) for its children.
"""

from __future__ import annotations

import math
import queue
import subprocess
import sys
import threading

from .._core.units import compile_records, compile_unit, unit_is_cached
from .compile_record import remember, unit_estimates

__all__ = ["compile_apart", "compile_here", "feed", "peak_memory_mb", "PROCESS_LIMIT_MB", "CHILD"]

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


def compile_apart(needs, jobs: int, say, meanwhile=None) -> dict:
    """Compile the units of ``needs`` not on disk in child processes, ``jobs`` at a time; returns
    ``{unit name: seconds}`` of those compiled, each said by ``say(name, seconds)`` when given.

    A work queue: the units wait longest compile first (this machine's times, else the defaults), and each child
    is handed the next as soon as it has done one, so that no core idles while units remain (dealing them out in
    shares left one core waiting for the other's last and longest). A child that has reached
    :data:`PROCESS_LIMIT_MB` ends after its unit and a fresh one takes its place. A unit found on disk by its turn
    (compiled along with another) is skipped.

    ``meanwhile``: called (no arguments, in a thread of this process) while the children compile, for the
    caller's own compiles (:func:`compile_here`); the ``{name: seconds}`` it returns joins the result, and what it
    raises is raised here once the children are ended.
    """
    by_name = {n.unit.cache_name(): n for n in needs}
    estimates = unit_estimates(list(by_name))
    pending = sorted((name for name, n in by_name.items() if not unit_is_cached(n.unit, n.signature, **n.options)),
                     key=lambda name: -estimates[name])
    events: queue.SimpleQueue = queue.SimpleQueue()
    done, failure = {}, []
    helper = None
    if meanwhile is not None:
        def own() -> None:
            try:
                events.put(("meanwhile", meanwhile()))
            except BaseException as exc:  # noqa: BLE001 - raised in the caller's thread below
                events.put(("failed", exc))

        helper = threading.Thread(target=own, name="attsim-compile-meanwhile", daemon=True)
        helper.start()
    children: dict = {}  # child -> the unit it compiles now (None: none left for it, or it ends at its limit)
    try:
        for _ in range(min(max(jobs, 1), len(pending))):
            _give(children, _start(children, events), pending, by_name)
        waiting_for_meanwhile = helper is not None
        while children or waiting_for_meanwhile:
            kind, *event = events.get()
            if kind == "meanwhile":
                done.update(event[0])
                waiting_for_meanwhile = False
            elif kind == "failed":
                failure.append(event[0])
                break
            elif kind == "line":
                child, line = event
                word, name, *rest = line.split()
                if word == "compiled":
                    done[name] = float(rest[0])
                    if say is not None:
                        say(name, float(rest[0]))
                elif word == "ready":
                    children[child] = None
                    if rest != ["full"]:  # at its memory limit it ends now; a fresh child takes its place
                        _give(children, child, pending, by_name)
            else:  # "ended": its output is all read
                child = event[0]
                unit = children.pop(child)
                if child.wait() != 0 or unit is not None:
                    raise RuntimeError(f"a compiling process failed (exit {child.returncode}) compiling {unit}; run "
                                       "'attsim compile' for its error")
                if pending and len(children) < max(jobs, 1):
                    _give(children, _start(children, events), pending, by_name)
    finally:
        for child in children:  # on an error or an interrupt: the children end with the caller's compile
            child.kill()
            child.wait()
    if failure:
        raise failure[0]
    remember(done)
    return done


def _start(children: dict, events) -> subprocess.Popen:
    """Start a compiling child fed unit names on its stdin, and return it; a thread of this process puts what it
    prints on ``events`` (``("line", child, text)``, then ``("ended", child)``)."""
    child = subprocess.Popen([sys.executable, "-m", CHILD, "--feed", "--limit-mb", str(PROCESS_LIMIT_MB)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
    children[child] = None

    def read() -> None:
        for line in child.stdout:
            if line.strip():
                events.put(("line", child, line))
        events.put(("ended", child))

    threading.Thread(target=read, name="attsim-compile-child", daemon=True).start()
    return child


def _give(children: dict, child, pending: list, by_name: dict) -> None:
    """Hand ``child`` the next unit not on disk yet, or close its input when none is left (it then ends)."""
    while pending:
        name = pending.pop(0)
        need = by_name[name]
        if not unit_is_cached(need.unit, need.signature, **need.options):
            children[child] = name
            child.stdin.write(name + "\n")
            child.stdin.flush()
            return
    children[child] = None
    child.stdin.close()


def feed(catalog: dict, lines, limit_mb: float, out) -> None:
    """A compiling child's side (:data:`CHILD` ``--feed``): for each unit's cache name read from ``lines``, compile
    it from ``catalog`` (cache name: need), write ``compiled NAME SECONDS`` for each unit compiled and then
    ``ready NAME`` (``ready NAME full`` when this process has reached ``limit_mb``, and end)."""
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
