"""Compiling every unit once per machine, ahead of need: ``attsim compile``, and in the background.

:func:`all_needs` lists every unit a mission can use on this machine: each
kind's own (:attr:`LoopPart.units`), each component class's (a sensor's
``sample_unit``, a law's ``loop_unit``), the engine's writer, the advance of
every mission method with and without integrated wheels, the loop and the
Python path's advance, and an :class:`~attsim.Ensemble`'s step (``rk4``,
without and with a field, and the chunk's parts:
:func:`attsim.ensemble.ensemble.step_units`).
:func:`compile_all` compiles those not yet on disk, holding a machine-wide
lock (two processes never compile the same units at once; the second waits
and then finds them on disk), in child processes that each stop at a memory
limit (:mod:`attsim.engine.compile_processes`; each child is this module,
finding its units by name in :func:`all_needs`), and keeps how long each
took (:func:`~attsim.engine.compile_record.compile_estimate` reads it back). A user's
:class:`~attsim.NumbaController` law is compiled by the run that uses it.

``python -m attsim.engine.precompile`` (what ``attsim compile`` and
:func:`background_compile` run) compiles them all; the environment variable
``ATTSIM_BACKGROUND_COMPILE=0`` stops runs from starting it on their own. The
background compile runs at a lower scheduling priority (niceness
:data:`BACKGROUND_NICENESS` more than its parent's, POSIX): it uses idle
cores, and yields a busy one to the user's own work (a training, the run that
started it).
"""

from __future__ import annotations

import argparse
import importlib
import math
import os
import pkgutil
import subprocess
import sys
import time

import numpy as np

from .. import actuators, control, estimation, guidance, sensors
from ..ensemble.ensemble import step_units as ensemble_step_units
from ..integrators import REGISTRY
from ..telemetry.lock import RunLock
from .backend import Need, RunUnits, advance_needs, loop_needs, missing
from .compile_processes import compile_apart, compile_here, feed, peak_memory_mb
from .compile_record import (LOG_FILE_NAME, announce, announce_compiled, announce_rest, compiling, directory, take_lock,
                             print_compiled)
from .component import Component
from .plant import WRITE_HEAD, advance_unit_for
from .world import KIND_PARTS, example_world, world_signatures

__all__ = ["all_needs", "compile_all", "compile_needs", "background_compile", "running", "main",
           "BACKGROUND_NICENESS", "BACKGROUND_ARGS"]

BACKGROUND_NICENESS = 10  # added to the parent's: below the user's foreground work, above nothing else
BACKGROUND_ARGS = ("--background",)  # what background_compile adds to the command line


KIND_PACKAGES = (sensors, actuators, control, estimation, guidance)


def _import_every_kind_module() -> None:
    """Import every module of the kinds' packages, so that every component class, and so every unit, is known: a
    class in a module of its own that its package does not import is compiled ahead of need too."""
    for package in KIND_PACKAGES:
        for module in pkgutil.iter_modules(package.__path__):
            importlib.import_module(f"{package.__name__}.{module.name}")


def all_needs():
    """Every unit this machine's missions can use (but a user's law): ``(Unit, signature, options)`` each."""
    _import_every_kind_module()
    world = example_world()
    sig = world_signatures(world)
    kinds = {"sample": sig.sample, "at_time": sig.at_time, "write": sig.write, "hold": sig.hold}
    needs = [Need(unit, kinds[kind], options) for part in KIND_PARTS for unit, kind, options in part.units()]
    for cls in _subclasses(Component):
        part = getattr(cls, "loop_part", None)
        for unit, kind in (part.class_units(cls) if part is not None and hasattr(part, "class_units") else []):
            needs.append(Need(unit, kinds[kind], {}))
    needs.append(Need(WRITE_HEAD, sig.write, {}))
    methods = [REGISTRY[name] for name in REGISTRY.mission_ready()]
    for integrator in methods:
        for integrated in (False, True):
            needs.append(Need(advance_unit_for(integrator, integrated), sig.advance, {}))
    needs += [Need(unit, signature, options) for unit, signature, options in ensemble_step_units()]
    hold = next(part.hold_unit for part in KIND_PARTS if hasattr(part, "hold_unit"))
    loop = loop_needs(world, RunUnits([], [], [], advance_unit_for(methods[0], False), hold, {}))
    needs += loop[-3:] + advance_needs(methods[0], world)[1:2]
    seen, unique = set(), []
    for need in needs:
        if need.unit.cache_name() not in seen:
            seen.add(need.unit.cache_name())
            unique.append(need)
    return unique


def _subclasses(cls) -> list:
    found = []
    for sub in cls.__subclasses__():
        found += [sub] + _subclasses(sub)
    return found


def compile_all(needs=None, say=None, jobs: int = 1) -> dict:
    """Compile the units of ``needs`` (default: :func:`all_needs`) not yet on disk, under the machine-wide lock;
    returns ``{unit: seconds}`` of those it compiled, each said as it is done by ``say(unit, seconds)`` when given
    (:func:`~attsim.engine.compile_record.print_compiled`, :func:`~attsim.engine.compile_record.announce_compiled`).

    Every unit (``needs`` None: ``attsim compile``, the background compile) is compiled in processes of their
    own while this one holds the lock (:func:`~attsim.engine.compile_processes.compile_apart`): ``jobs`` at a time
    (``attsim compile --jobs N``), so that no process grows with the number of units. Of the units of one mission
    (``needs`` given), those every mission may use go to such processes the same way, and what is left (a user's
    law, which only this process can build) is compiled in this one: a campaign's first compile on a 2-core machine
    took 63 s and grew its process to 719 MB when all of them were compiled here.
    """
    with compiling():
        if needs is None:
            return compile_apart(all_needs(), jobs, say)
        shared = {n.unit.cache_name() for n in all_needs()}
        done = compile_apart([n for n in needs if n.unit.cache_name() in shared], jobs, say)
        done.update(compile_here(needs, say))
        return done


def compile_needs(needs, jobs: int = 1) -> list[str]:
    """Compile the units of ``needs`` this machine lacks, under the machine-wide lock, ``jobs`` processes at a time
    (:func:`compile_all`), saying so on stderr first (with the estimate) and then each; returns the names
    compiled."""
    absent = missing(needs)
    if not absent:
        return []
    announce(absent, jobs)
    done = list(compile_all(needs, say=announce_compiled, jobs=jobs))
    announce_rest(len(absent), len(done))
    return done


def running() -> bool:
    """True when a process of this machine is compiling units now (it holds the lock)."""
    lock = RunLock(directory())
    if take_lock(lock, blocking=False):
        lock.release()
        return False
    return True


def background_compile() -> bool:
    """Start compiling every unit in a process of its own, unless one runs already or runs must not
    (``ATTSIM_BACKGROUND_COMPILE=0``); True when one is (now) compiling."""
    if os.environ.get("ATTSIM_BACKGROUND_COMPILE", "1") == "0":
        return False
    if running():
        return True
    log = open(directory() / LOG_FILE_NAME, "ab")  # noqa: SIM115 - the child's, for as long as it runs
    subprocess.Popen([sys.executable, "-m", "attsim.engine.precompile", *BACKGROUND_ARGS], stdout=log, stderr=log,
                     stdin=subprocess.DEVNULL, start_new_session=True, close_fds=True)
    log.close()
    return True


def main(argv=None) -> int:
    """Compile every unit this machine lacks, saying each (``--jobs N``: in N processes).

    ``--feed`` is one of those processes (its parent holds the lock): it compiles the units whose cache names it
    reads on stdin, one at a time (:func:`~attsim.engine.compile_processes.feed`)."""
    parser = argparse.ArgumentParser(prog="python -m attsim.engine.precompile")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--feed", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--parent", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--limit-mb", type=float, default=math.inf, help=argparse.SUPPRESS)
    parser.add_argument("--background", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.background and hasattr(os, "nice"):  # POSIX; the children of --jobs inherit it
        print(f"attsim: compiling in the background at niceness {os.nice(BACKGROUND_NICENESS)}", flush=True)
    if args.feed:
        feed({n.unit.cache_name(): n for n in all_needs()}, sys.stdin, args.limit_mb, sys.stdout, args.parent)
        return 0
    start = time.perf_counter()
    done = compile_all(say=print_compiled, jobs=max(args.jobs, 1))
    print(f"attsim: {len(done)} units compiled in {time.perf_counter() - start:.0f} s", flush=True)
    peak = max(peak_memory_mb(), peak_memory_mb(children=True))  # for tools/bench_coldstart.py
    if peak > 0.0:
        print(f"attsim: peak memory {peak:.0f} MB (the largest of its processes)", flush=True)
    return 0


if __name__ == "__main__":
    np.seterr(all="ignore")
    sys.exit(main())
