"""How a run's units become code (layer 7): compiled (once per machine, cached) or interpreted (no compiler).

A :class:`Backend` turns the units a run needs (:mod:`attsim._core.units`)
into callables and makes the loop over them (:mod:`attsim.engine.loop`):

* :class:`Compiled` compiles each unit alone for its signature (or loads it
  from numba's disk cache, in milliseconds) and the loop once;
* :class:`Interpreted` runs the same units as plain Python
  (:mod:`attsim._core.interpret`): the same telemetry to the bit, no
  compile time, about a hundred times the cost per cycle.

:func:`choose` picks one for a run: compiled when every unit it needs is
cached (or when asked), otherwise whichever finishes first by the estimates
below, saying so where the user sees it.
"""

from __future__ import annotations

import time
from typing import NamedTuple

import numpy as np
from numba import typeof, types

from .._core.fastcall import entry_point
from .._core.interpret import FUNCTIONS, interpret, interpret_unit
from .._core.units import (Unit, compile_records, compile_unit, from_address, jit_address, pin, release,
                           unit_is_cached)
from .loop import Units, run_loop
from .plant import advance_held, advance_unit_for
from .world import World, world_signatures

__all__ = ["UnitCompileError", "Backend", "Compiled", "Interpreted", "RunUnits", "BACKENDS", "missing"]

def pin_world(world):
    """The World's pinned copy (:func:`~attsim._core.units.pin`): its address."""
    return pin(world)


def release_world(address):
    release(address)
    return 0


class UnitCompileError(Exception):
    """A unit did not compile (its cause says why); the run names the component it belongs to."""

    def __init__(self, unit: Unit):
        super().__init__(unit.name)
        self.unit = unit


class RunUnits(NamedTuple):
    """The units a compiled run needs, by slot: samplers, clock and timeline work, writers, the advance and the
    actuators' hold, and per unit name the options it compiles with (a part's ``unit_options``)."""

    samplers: list
    at_time: list
    writers: list
    advance: Unit
    hold: Unit
    options: dict

    def all(self) -> list[tuple[Unit, str]]:
        """Every unit with the kind of its signature."""
        return ([(u, "sample") for u in self.samplers] + [(u, "at_time") for u in self.at_time]
                + [(u, "write") for u in self.writers] + [(self.advance, "advance"), (self.hold, "hold")])


class Backend:
    """Turns units into callables; the contract of :class:`Compiled` and :class:`Interpreted`."""

    name = "backend"

    def callable(self, unit: Unit, signature, **options):  # pragma: no cover - abstract
        """``unit`` ready to call with ``signature``."""
        raise NotImplementedError

    def address(self, function, signature) -> int:  # pragma: no cover - abstract
        """What :func:`~attsim._core.units.as_function` calls ``function`` by."""
        raise NotImplementedError

    def loop(self, world: World, units: Units):  # pragma: no cover - abstract
        """``f(t_horizon) -> (status, t_from)``: the loop over ``world`` with ``units``."""
        raise NotImplementedError

    def advance_call(self, unit: Unit, world: World):  # pragma: no cover - abstract
        raise NotImplementedError

    def close(self) -> None:  # pragma: no cover - abstract
        """Release what the run's Worlds held (the compiled backend's pinned copies)."""
        raise NotImplementedError

    def _made(self, unit: Unit, signature, options: dict) -> int:
        try:
            return self.address(self.callable(unit, signature, **options.get(unit.name, {})), signature)
        except Exception as exc:  # noqa: BLE001 - the run names the component whose unit it is
            raise UnitCompileError(unit) from exc

    def units(self, world: World, needed: RunUnits) -> Units:
        """The run's :class:`~attsim.engine.loop.Units`: each needed unit made ready, by address."""
        sig = world_signatures(world)

        def addresses(units, signature):
            return np.array([self._made(u, signature, needed.options) for u in units], dtype=np.int64)

        return Units(addresses(needed.samplers, sig.sample), addresses(needed.at_time, sig.at_time),
                     addresses(needed.writers, sig.write), addresses([needed.advance], sig.advance),
                     addresses([needed.hold], sig.hold))

    def plant_advance(self, integrator, world: World):
        """``f(t0, t1, tau_ext, dipole) -> status``: the Python path's advance of ``world``'s plant."""
        wheels = world.actuators.wheels
        integrated = wheels.work[0, 2] != 0.0  # W_INTEGRATED: friction or imbalance
        return self.advance_call(advance_unit_for(integrator, bool(integrated)), world)


class Compiled(Backend):
    """Each unit compiled alone for its signature, or loaded from numba's disk cache (``attsim._core.units``).

    The loop and the Python path's advance take the World as the address of a pinned copy
    (:meth:`pinned`), so a call from Python unboxes no bank (a World holds some eighty arrays).
    """

    name = "compiled"

    def __init__(self):
        self._alive = []  # the dispatchers whose code the addresses point at
        self._pinned = {}  # id(world) -> (world, address): the World stays alive while its copy is used

    def pinned(self, world: World) -> int:
        """The address of ``world``'s pinned copy (made once per World)."""
        if id(world) not in self._pinned:
            sig = world_signatures(world)
            pin_ = self.callable(Unit(pin_world, "pin_world", {}), types.intp(sig.world))
            self._pinned[id(world)] = (world, pin_(world))
        return self._pinned[id(world)][1]

    def close(self) -> None:
        """Free the pinned copies of this run's Worlds."""
        for _, address in self._pinned.values():
            self.callable(Unit(release_world, "release_world", {}), types.int64(types.intp))(address)
        self._pinned.clear()

    def _bound(self, template, name: str, world: World) -> Unit:
        """``template`` with ``world_at`` bound for ``world``'s type."""
        return Unit(template, name, {"world_at": from_address(types.CPointer(world_signatures(world).world))})

    def callable(self, unit: Unit, signature, **options):
        dispatcher = compile_unit(unit, signature, **options)
        self._alive.append(dispatcher)
        return dispatcher

    def address(self, function, signature) -> int:
        return jit_address(function, signature)

    def loop(self, world: World, units: Units):
        address = self.pinned(world)
        loop = self.callable(self._bound(run_loop, "run_loop", world),
                             types.Tuple((types.int64, types.float64))(types.intp, typeof(units), types.float64))
        entry = entry_point(loop, address, units, 0.0)  # no type dispatch at each call
        return lambda t_horizon: entry(address, units, t_horizon)

    def advance_call(self, unit: Unit, world: World):
        sig = world_signatures(world)
        advance = self.address(self.callable(unit, sig.advance), sig.advance)
        address = self.pinned(world)
        three = types.UniTuple(types.float64, 3)
        trampoline = self.callable(self._bound(advance_held, "advance_held", world),
                                   types.int64(types.int64, types.intp, types.float64, types.float64, three, three))
        entry = entry_point(trampoline, advance, address, 0.0, 0.0, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0))
        return lambda t0, t1, tau_ext, dipole: entry(advance, address, t0, t1, tau_ext, dipole)


class Interpreted(Backend):
    """The same units as plain Python (:mod:`attsim._core.interpret`): nothing is compiled."""

    name = "interpreted"

    def callable(self, unit: Unit, signature, **options):
        return interpret_unit(unit)

    def address(self, function, signature) -> int:
        FUNCTIONS.append(function)
        return len(FUNCTIONS) - 1

    def loop(self, world: World, units: Units):
        loop = interpret(run_loop, world_at=_same)  # the "address" of a World is the World itself
        return lambda t_horizon: loop(world, units, t_horizon)

    def advance_call(self, unit: Unit, world: World):
        advance, trampoline = self.address(interpret_unit(unit), None), interpret(advance_held, world_at=_same)
        return lambda t0, t1, tau_ext, dipole: trampoline(advance, world, t0, t1, tau_ext, dipole)

    def close(self) -> None:
        return None


def _same(value):
    return value


BACKENDS = {"compiled": Compiled, "interpreted": Interpreted}


def missing(world: World, needed: RunUnits) -> list[str]:
    """The names of the units ``needed`` that are not compiled on this machine yet (nor in this process)."""
    sig = world_signatures(world)
    signature = {"sample": sig.sample, "at_time": sig.at_time, "write": sig.write, "advance": sig.advance,
                 "hold": sig.hold}
    return [unit.name for unit, kind in needed.all()
            if not unit_is_cached(unit, signature[kind], **needed.options.get(unit.name, {}))]


def compile_seconds() -> float:
    """Wall seconds this process has spent compiling units so far (not loading them)."""
    return sum(r.seconds for r in compile_records() if r.compiled)


def now() -> float:
    return time.perf_counter()
