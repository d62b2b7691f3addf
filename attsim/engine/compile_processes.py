"""Compiling units in processes of their own, each ending at a memory limit.

Numba and LLVM keep what each unit's compilation allocated: one process
compiling every unit grew to ~700 MB, and a campaign's first compile in the
caller's process took 63 s on 2 cores. :func:`compile_apart` compiles units
in child processes instead, ``jobs`` at a time (numba compiles on one core,
so idle cores divide the wait), each ending once it holds
:data:`PROCESS_LIMIT_MB` and a fresh one taking its remaining units. The
caller may compile what only it can build (a user's law, a unit no child
knows) meanwhile (:func:`compile_here`).

A child is ``python -m attsim.engine.precompile --units a,b`` (:data:`CHILD`):
it finds each unit by its cache name among every unit a machine's missions
and ensembles can use (:func:`attsim.engine.precompile.all_needs`), so only
those can be compiled apart. The caller holds the machine-wide compile lock
(:func:`~attsim.engine.compile_record.compiling`) for its children.
"""

from __future__ import annotations

import math
import subprocess
import sys

from .._core.units import compile_records, compile_unit, unit_is_cached
from .compile_record import deal, remember

__all__ = ["compile_apart", "compile_here", "peak_memory_mb", "PROCESS_LIMIT_MB", "CHILD"]

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
    """Compile the units of ``needs`` not on disk in child processes, ``jobs`` at a time (:func:`deal`: the longest
    first), each ending at :data:`PROCESS_LIMIT_MB` (the next round gives what it left to fresh ones), until none
    is left; returns ``{unit name: seconds}`` of those compiled, each said by ``say(name, seconds)`` when given.

    ``meanwhile``: called (no arguments) once the first round's children run, for the caller's own compiles
    (:func:`compile_here`); the ``{name: seconds}`` it returns joins the result.
    """
    done = {}
    while True:
        absent = sorted({n.unit.cache_name() for n in needs if not unit_is_cached(n.unit, n.signature, **n.options)})
        if not absent:
            break
        children = [subprocess.Popen([sys.executable, "-m", CHILD, "--units", ",".join(share),
                                      "--limit-mb", str(PROCESS_LIMIT_MB)], stdout=subprocess.PIPE, text=True)
                    for share in deal(absent, jobs) if share]
        if meanwhile is not None:
            try:
                done.update(meanwhile())
            except BaseException:  # the caller's compile failed (or was interrupted): its children end with it
                for child in children:
                    child.kill()
                    child.wait()
                raise
            meanwhile = None
        compiled = 0
        for child in children:
            for line in child.stdout:
                name, _, seconds = line.strip().partition(" ")
                done[name] = float(seconds)
                compiled += 1
                if say is not None:
                    say(name, float(seconds))
            if child.wait() != 0:
                raise RuntimeError(f"a compiling process failed (exit {child.returncode}); run 'attsim compile' for "
                                   "its error")
        if compiled == 0:  # each child compiles one unit at least (compile_here): none means none of them could
            raise RuntimeError(f"compiling processes compiled none of {len(absent)} units; run 'attsim compile' for "
                               "the error")
    if meanwhile is not None:  # every unit was on disk already
        done.update(meanwhile())
    remember(done)
    return done
