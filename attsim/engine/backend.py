"""How a run's units become code: compiled (once per machine, cached) or interpreted (no compiler).

A :class:`Backend` turns the units a run needs (:mod:`attsim._core.units`)
into callables and makes the loop over them (:mod:`attsim.engine.loop`):

* :class:`Compiled` compiles each unit alone for its signature (or loads it
  from numba's disk cache, in milliseconds), the loop once;
* :class:`Interpreted` runs the same units as plain Python
  (:mod:`attsim._core.interpret`): the same telemetry, no compile time,
  about a hundred times the cost per cycle.

:mod:`attsim.engine.choice` picks one for a run. The loop and the Python
path's advance take the World as the address of a pinned copy
(:func:`~attsim._core.units.pin`), so a call from Python unboxes no bank (a
World holds some eighty arrays; unboxing them costs more than a cycle).
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np
from numba import typeof, types

from .._core.interpret import FUNCTIONS, interpret, interpret_unit
from .._core.units import (Unit, compile_records, compile_unit, from_address, jit_address, pin, release,
                           unit_entry, unit_is_cached)
from .compile_record import announce, announce_compiled, compiling, remember
from .loop import Units, run_loop
from .plant import advance_held, advance_unit_for
from .world import World, world_signatures

__all__ = ["UnitCompileError", "Backend", "Compiled", "Interpreted", "RunUnits", "Need", "BACKENDS", "missing",
           "loop_needs", "advance_needs"]

_THREE = types.UniTuple(types.float64, 3)


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


class Need(NamedTuple):
    """A unit, the signature it is compiled for, and its options."""

    unit: Unit
    signature: object
    options: dict


def _bound(template, name: str, world: World) -> Unit:
    """``template`` with ``world_at`` bound for ``world``'s type (the pinned copy's address to the units'
    pointer)."""
    return Unit(template, name, {"world_at": from_address(world_signatures(world).pointer)})


def _pinning(world: World) -> list[Need]:
    sig = world_signatures(world)
    return [Need(Unit(pin_world, "pin_world", {}), sig.pin, {}),
            Need(Unit(release_world, "release_world", {}), _RELEASE, {})]


_RELEASE = types.int64(types.intp)


@functools.cache
def _loop_signature():
    """The loop's signature (made once: the units' table is of one type; see :func:`attsim._core.units.jit_address`
    for why signatures are kept)."""
    units = Units(*(np.zeros(1, dtype=np.int64) for _ in Units._fields))
    return types.Tuple((types.int64, types.float64))(types.intp, typeof(units), types.float64)


def loop_needs(world: World, needed: RunUnits) -> list[Need]:
    """Every unit a compiled loop run of ``world`` compiles: its kinds' units, the loop, pinning."""
    sig = world_signatures(world)
    needs = [Need(u, sig.sample, needed.options.get(u.name, {})) for u in needed.samplers]
    needs += [Need(u, sig.at_time, needed.options.get(u.name, {})) for u in needed.at_time]
    needs += [Need(u, sig.write, {}) for u in needed.writers]
    needs += [Need(needed.advance, sig.advance, {}), Need(needed.hold, sig.hold, {})]
    needs.append(Need(_bound(run_loop, "run_loop", world), _loop_signature(), {}))
    return needs + _pinning(world)


def advance_needs(integrator, world: World) -> list[Need]:
    """Every unit the Python path's advance of ``world`` compiles: the advance, its trampoline, pinning."""
    sig = world_signatures(world)
    integrated = bool(world.actuators.wheels.work[0, 2] != 0.0)  # W_INTEGRATED: friction or imbalance
    return [Need(advance_unit_for(integrator, integrated), sig.advance, {}),
            Need(_bound(advance_held, "advance_held", world),
                 types.int64(types.int64, types.intp, types.float64, types.float64, _THREE, _THREE), {})
            ] + _pinning(world)


def missing(needs: list[Need]) -> list[str]:
    """The names of the units in ``needs`` not compiled on this machine yet (nor in this process)."""
    return [n.unit.name for n in needs if not unit_is_cached(n.unit, n.signature, **n.options)]


class Backend:
    """Turns units into callables; the contract of :class:`Compiled` and :class:`Interpreted`."""

    name = "backend"

    def callable(self, need: Need):  # pragma: no cover - abstract
        """The unit of ``need`` ready to call from Python."""
        raise NotImplementedError

    def address(self, need: Need) -> int:  # pragma: no cover - abstract
        """What :func:`~attsim._core.units.as_function` calls the unit of ``need`` by."""
        raise NotImplementedError

    def pinned(self, world: World):  # pragma: no cover - abstract
        """What the loop and the advance take for ``world``."""
        raise NotImplementedError

    def compile_s(self) -> float:
        """Wall seconds this backend spent compiling (not loading) units."""
        return 0.0

    def close(self) -> None:
        """Release what the run's Worlds held (the compiled backend's pinned copies)."""

    def units(self, world: World, needed: RunUnits) -> Units:
        """The run's :class:`~attsim.engine.loop.Units`: each needed unit made ready, by address."""
        return self._made(loop_needs(world, needed), needed)

    def _made(self, needs: list[Need], needed: RunUnits) -> Units:
        count = [len(needed.samplers), len(needed.at_time), len(needed.writers), 1, 1]
        made, k = [], 0
        for n in count:
            made.append(np.array([self._address(need) for need in needs[k:k + n]], dtype=np.int64))
            k += n
        self._loop_need = needs[k]
        return Units(*made)

    def _address(self, need: Need) -> int:
        try:
            return self.address(need)
        except Exception as exc:  # noqa: BLE001 - the run names the component whose unit it is
            raise UnitCompileError(need.unit) from exc

    def loop(self, world: World, units: Units):
        """``f(t_horizon) -> (status, t_from)``: the loop over ``world`` with ``units``."""
        address, loop = self.pinned(world), self.callable(self._loop_need)
        return lambda t_horizon: loop(address, units, t_horizon)

    def plant_advance(self, integrator, world: World):
        """``f(t0, t1, tau_ext, dipole) -> status``: the Python path's advance of ``world``'s plant."""
        unit, trampoline = advance_needs(integrator, world)[:2]
        advance, address, call = self._address(unit), self.pinned(world), self.callable(trampoline)
        return lambda t0, t1, tau_ext, dipole: call(advance, address, t0, t1, tau_ext, dipole)


# the Units of every set of needs this process made ready, by identity (each entry keeps its needs alive, so no id
# in its key is reused): a run like an earlier one finds its addresses without asking numba about each unit
_MADE: dict[tuple, tuple] = {}
# the entry point of every need this process made callable (the loop, pinning), by identity likewise: a run does not
# ask numba's disk cache again whether the unit is there
_CALLABLE: dict[tuple, tuple] = {}


def _identity(need: Need) -> tuple:
    """What ``need``'s unit and address depend on, by identity: template, name, tag, bound objects, signature,
    options."""
    unit = need.unit
    return (id(unit.template), unit.name, unit.tag, tuple((k, id(v)) for k, v in unit.bindings.items()),
            id(need.signature), tuple(need.options.items()))


class Compiled(Backend):
    """Each unit compiled alone for its signature, or loaded from numba's disk cache (``attsim._core.units``);
    with ``progress``, each one compiled is said on stderr."""

    name = "compiled"

    def __init__(self, progress: bool = False, announced: bool = False):
        self._alive = []  # the dispatchers whose code the addresses point at
        self._pinned = {}  # id(world) -> (world, address): the World stays alive while its copy is used
        self._first_record = len(compile_records())
        self._progress = progress
        self._announced = announced  # whoever chose this backend said already that it compiles

    def _announce(self, needs: list[Need]) -> None:
        """Say on stderr, once, that this run compiles units and about how long it takes: never a silent wait."""
        if self._announced:
            return
        self._announced = True
        absent = missing(needs)
        if absent:
            self._progress = True
            announce(absent)

    def units(self, world: World, needed: RunUnits) -> Units:
        needs = loop_needs(world, needed)
        key = tuple(_identity(need) for need in needs)
        if key not in _MADE:  # else every unit is ready in this process, at the addresses kept
            self._announce(needs)
            _MADE[key] = (self._made(needs, needed), self._loop_need, needs)
        units, self._loop_need, _ = _MADE[key]
        return units

    def plant_advance(self, integrator, world: World):
        self._announce(advance_needs(integrator, world))
        return super().plant_advance(integrator, world)

    def _dispatcher(self, need: Need):
        before = len(compile_records())
        if unit_is_cached(need.unit, need.signature, **need.options):
            dispatcher = compile_unit(need.unit, need.signature, **need.options)  # loaded from the disk cache
        else:
            with compiling():  # another process may be compiling it: then it is on disk when the lock comes
                dispatcher = compile_unit(need.unit, need.signature, **need.options)
        self._alive.append(dispatcher)
        records = compile_records()[before:]
        if records and records[-1].compiled:
            remember({need.unit.name: records[-1].seconds})
            if self._progress:
                announce_compiled(need.unit.name, records[-1].seconds)
        return dispatcher

    def callable(self, need: Need):
        # a call from Python without numba's type dispatch (a World is large to type)
        key = _identity(need)
        if key not in _CALLABLE:
            _CALLABLE[key] = (unit_entry(self._dispatcher(need), need.signature), need)
        return _CALLABLE[key][0]

    def address(self, need: Need) -> int:
        return jit_address(self._dispatcher(need), need.signature)

    def pinned(self, world: World) -> int:
        if id(world) not in self._pinned:
            self._pinned[id(world)] = (world, self.callable(_pinning(world)[0])(world))
        return self._pinned[id(world)][1]

    def compile_s(self) -> float:
        return sum(r.seconds for r in compile_records()[self._first_record:] if r.compiled)

    def close(self) -> None:
        if self._pinned:
            release = self.callable(_pinning(next(iter(self._pinned.values()))[0])[1])
            for _, address in self._pinned.values():
                release(address)
            self._pinned.clear()


class Interpreted(Backend):
    """The same units as plain Python (:mod:`attsim._core.interpret`): nothing is compiled."""

    name = "interpreted"

    def callable(self, need: Need):
        if need.unit.name in ("run_loop", "advance_held"):
            return interpret(need.unit.template, world_at=_same)  # the "address" of a World is the World itself
        return interpret_unit(need.unit)

    def address(self, need: Need) -> int:
        FUNCTIONS.append(self.callable(need))
        return len(FUNCTIONS) - 1

    def pinned(self, world: World):
        return world


def _same(value):
    return value


BACKENDS = {"compiled": Compiled, "interpreted": Interpreted}
