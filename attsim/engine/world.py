"""The data of a compiled mission: the World, the banks the engine owns, and the units' signatures.

A compiled run keeps all of its state in one :class:`World`, a named tuple
of banks (named tuples of plain arrays, one row per component of a kind).
The kinds own their banks (:mod:`attsim.sensors.loop`,
:mod:`attsim.estimation.loop`, :mod:`attsim.control.loop`,
:mod:`attsim.control.modes_loop`, :mod:`attsim.actuators.loop`); the engine
owns the plant, the environment table, the noise draws, the clock of
periodic work, the timeline of time-tagged work, the telemetry row layout
and the buffers handed to Python.

Units (:mod:`attsim._core.units`) receive a pointer to the World. Their
signatures are fixed here, and the World's type does not depend on the
mission (only on the arrays' dimensions and kinds), so every unit is
compiled once per machine.

Order at one instant (the Python path's, :mod:`attsim.engine.mission`):
timeline work (fault boundaries, schedule switches, command playback), then
the clock's periodic work by role (free-running sensor samples, estimator
cycles, the mode check, control cycles), then the actuators' held commands
and the telemetry row. At ``t = 0`` fault boundaries come after the clock's
work (after what the components do at their start).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import typeof, types

from ..actuators.loop import PART as ACTUATORS
from ..constants import MU_EARTH_M3_S2
from ..control.loop import PART as CONTROLLERS
from ..control.modes_loop import PART as MODES
from ..estimation.loop import PART as ESTIMATORS
from ..sensors.loop import PART as SENSORS

__all__ = ["World", "PlantBank", "EnvironmentBank", "Noise", "Clock", "Timeline", "Rows", "Buffers", "KIND_PARTS",
           "STATE_WIDTH", "PLANT_T", "PLANT_MAX_STEP", "HELD_T0", "HELD_TAU_EXT", "HELD_DIPOLE", "HELD_TAU_W",
           "HELD_H_W", "HELD_WIDTH", "ROLE_SAMPLE", "ROLE_ESTIMATE", "ROLE_MODES", "ROLE_CONTROL", "OK", "DONE",
           "ROWS_FULL", "EVENTS_FULL", "REFILL", "GIMBAL_LOCK", "DIVERGED", "UNIT_FAULT", "EVENT_WIDTH",
           "world_signatures", "Signatures", "example_world", "plant_world", "plant_parts", "PlantParts",
           "environment_bank"]

# the kinds whose banks the World holds (each a Part: its bank, its units, how its events read)
KIND_PARTS = (SENSORS, ESTIMATORS, MODES, CONTROLLERS, ACTUATORS)

# the plant's method state, packed (the widest: a direction-cosine state of 13 floats); PlantBank.time columns
STATE_WIDTH = 16
PLANT_T, PLANT_MAX_STEP = 0, 1
# the held inputs (PlantBank.held): their start time, the external torque, the dipole, the wheels' motor torque and
# momentum at the start time (body axes, SI)
HELD_T0, HELD_TAU_EXT, HELD_DIPOLE, HELD_TAU_W, HELD_H_W, HELD_WIDTH = 0, 1, 4, 7, 10, 13
# the roles of periodic work, in the order they run at one instant
ROLE_SAMPLE, ROLE_ESTIMATE, ROLE_MODES, ROLE_CONTROL = 0, 1, 2, 3
# what a unit or the loop returns: OK (go on), or why the loop hands over to Python
OK, DONE, ROWS_FULL, EVENTS_FULL, REFILL, GIMBAL_LOCK, DIVERGED, UNIT_FAULT = 0, 1, 2, 3, 4, 5, 6, 7
# an event row: (t, kind, what, index, v0, v1, v2, v3); the kinds are the parts' own codes
EVENT_WIDTH = 8


class PlantBank(NamedTuple):
    """The plant: the method's state (packed, ``STATE_WIDTH``), ``q_w`` (q_IB and ω at the plant's time),
    ``time`` (``PLANT_T`` the plant's time, ``PLANT_MAX_STEP`` the largest sub-step), the held inputs since
    ``HELD_T0`` (``HELD_*``), the inertia and its inverse (row-major) and the method's engine parameters."""

    state: np.ndarray
    q_w: np.ndarray
    time: np.ndarray
    held: np.ndarray
    J: np.ndarray
    Jinv: np.ndarray
    params: np.ndarray


class EnvironmentBank(NamedTuple):
    """The environment table (:mod:`attsim.environment.table`; no rows without one), the faces, the disturbance
    switches and the residual dipole (:mod:`attsim.environment.torques`), and ``logged`` (1.0: the rows carry
    the environment's columns)."""

    env_t: np.ndarray
    env_v: np.ndarray
    faces: np.ndarray
    switches: np.ndarray
    residual_Am2: np.ndarray
    logged: np.ndarray


class Noise(NamedTuple):
    """Normal draws of the components that need them (one row each: a sensor's row), consumed from ``cursor``,
    ``draws`` a sample (0: none, the block holds zeros). Python refills a block before it runs out."""

    normals: np.ndarray
    cursor: np.ndarray
    draws: np.ndarray


class Clock(NamedTuple):
    """Periodic work, one row per activity, sorted by role (``ROLE_*``) then mission order: it runs at
    ``phase_s + k period_s`` (``next_k``; ``next_t`` is that time, :func:`~attsim._core.timegrid.grid_time`, kept
    beside it so the loop does not recompute it several times an instant), while ``active`` (a mode may stop a
    controller), calling ``units.at_time[unit]`` with its kind's bank ``row``; ``noise[i]`` the noise rows it may
    draw from (-1 padded)."""

    period_s: np.ndarray
    phase_s: np.ndarray
    next_k: np.ndarray
    next_t: np.ndarray
    active: np.ndarray
    unit: np.ndarray
    row: np.ndarray
    noise: np.ndarray


class Timeline(NamedTuple):
    """Time-tagged work, one row per schedule (fault boundaries, torque schedules, command playback, in that
    order): its times (``inf`` padded), how many, the next one's index, the unit it calls with its ``row``, and
    ``late`` (1.0: at ``t = 0`` it runs after the clock's work)."""

    times_s: np.ndarray
    count: np.ndarray
    next_k: np.ndarray
    unit: np.ndarray
    row: np.ndarray
    late: np.ndarray


class Rows(NamedTuple):
    """The telemetry rows: their period, the run's duration, the next row's index (``next_k[0]``, -1 once the
    row at the end is written) and time (``next_t[0]``), and per component in mission order the writer unit and its
    bank row."""

    dt_s: float
    duration_s: float
    next_k: np.ndarray
    next_t: np.ndarray
    writer: np.ndarray
    row: np.ndarray


class Buffers(NamedTuple):
    """Rows and events written by the loop (``counts[0]`` rows, ``counts[1]`` events), wheel stops, and the most
    events one instant can log (the loop hands over before an instant that might not fit)."""

    rows: np.ndarray
    events: np.ndarray
    counts: np.ndarray
    stops: np.ndarray
    events_per_instant: int


class World(NamedTuple):
    """Everything a compiled run holds: the engine's banks and the kinds' (``KIND_PARTS``)."""

    plant: PlantBank
    environment: EnvironmentBank
    noise: Noise
    clock: Clock
    timeline: Timeline
    rows: Rows
    buffers: Buffers
    sensors: SENSORS.bank_type
    estimators: ESTIMATORS.bank_type
    modes: MODES.bank_type
    controllers: CONTROLLERS.bank_type
    actuators: ACTUATORS.bank_type


class Signatures(NamedTuple):
    """The units' signatures over a pointer to the World (:func:`world_signatures`)."""

    world: types.Type
    pointer: types.Type
    pin: types.Signature
    sample: types.Signature
    at_time: types.Signature
    write: types.Signature
    advance: types.Signature
    hold: types.Signature


_SIGNATURES: dict = {}
_LAST: list = [None, None]  # the World asked about last and its signatures


# numpy's flag bits numba's array type depends on: C_CONTIGUOUS, F_CONTIGUOUS, ALIGNED, WRITEABLE
_TYPED_FLAGS = 0x1 | 0x2 | 0x100 | 0x400


def _layout_key(value):
    """What numba's type of ``value`` depends on, cheaply: each array's dtype, dimensions, layout, writability and
    alignment, each named tuple's class, each scalar's type (a World has a few hundred arrays)."""
    if type(value) is np.ndarray:
        return (value.dtype, value.ndim, value.flags.num & _TYPED_FLAGS)
    if isinstance(value, tuple):
        return (type(value), *map(_layout_key, value))
    return type(value)


def world_signatures(world: World) -> Signatures:
    """The signatures of every unit of a run of ``world`` (the same for every mission: see the module). Typing a
    World costs tens of milliseconds and a run asks several times: the signatures are kept per layout key (what
    the type depends on), which costs a few hundred microseconds to make."""
    if _LAST[0] is world:  # a run asks for its World's several times: the key is walked once
        return _LAST[1]
    key = _layout_key(world)
    if key not in _SIGNATURES:
        _SIGNATURES[key] = _signatures(world)
    _LAST[:] = [world, _SIGNATURES[key]]  # held until the next World is asked about (by identity: ids are reused)
    return _LAST[1]


def _signatures(world: World) -> Signatures:
    w = types.CPointer(typeof(world))
    sample = types.int64(w, types.float64, types.int64)
    samplers = types.Array(types.int64, 1, "C")
    return Signatures(world=w.dtype, pointer=w, pin=types.intp(w.dtype), sample=sample,
                      at_time=types.int64(w, samplers, types.float64, types.int64),
                      write=types.int64(w, types.float64, types.int64, types.int64),
                      advance=types.int64(w, types.float64, types.float64),
                      hold=types.int64(w, types.float64))


def environment_bank(mission, table) -> EnvironmentBank:
    """The environment table and the disturbances' settings of ``mission`` (none without an environment)."""
    environment = mission.environment
    faces = environment.faces_array() if environment is not None else np.empty((0, 10))
    switches = np.array(environment.flags if environment is not None else (0.0, 0.0, 0.0, MU_EARTH_M3_S2), dtype=float)
    residual = environment.residual_dipole_Am2 if environment is not None else (0.0, 0.0, 0.0)
    return EnvironmentBank(np.ascontiguousarray(table[0], dtype=float), np.ascontiguousarray(table[1], dtype=float),
                           np.ascontiguousarray(faces, dtype=float), switches,
                           np.array([float(x) for x in residual]),
                           np.array([1.0 if environment is not None else 0.0]))


class PlantParts(NamedTuple):
    """What a World takes from the plant: its bank, the environment's bank and the rows the wheels' speed stops
    are written to."""

    plant: PlantBank
    environment: EnvironmentBank
    stops: np.ndarray


def plant_parts(mission, integrator, state, table, wheels, J, Jinv, params, t_s: float) -> PlantParts:
    """The :class:`PlantParts` of ``integrator``'s ``state`` at ``t_s``, the held commands (set before each
    advance), the environment and the ``wheels``."""
    packed = np.zeros(STATE_WIDTH)
    integrator.pack_state.py_func(state, packed)  # set-up, once: plain Python
    q, w = integrator.output_state.py_func(state, J, params)
    plant = PlantBank(packed, np.array([*q, *w], dtype=float), np.array([t_s, mission.max_step_s]),
                      np.zeros(HELD_WIDTH), np.array(J, dtype=float), np.array(Jinv, dtype=float),
                      np.array(params, dtype=float))
    return PlantParts(plant, environment_bank(mission, table), np.zeros((max(wheels.axis.shape[0], 1), 3)))


def plant_world(parts: PlantParts, wheels) -> World:
    """A World holding only the plant (``parts``) and the ``wheels``, the kinds' banks empty. The Python path
    advances it; a compiled run builds its own World on the same parts."""
    buffers = Buffers(np.zeros((0, 1)), np.zeros((parts.stops.shape[0], EVENT_WIDTH)), np.zeros(2, dtype=np.int64),
                      parts.stops, 0)
    return World(plant=parts.plant, environment=parts.environment, noise=empty_noise(), clock=empty_clock(),
                 timeline=empty_timeline(), rows=Rows(1.0, 0.0, np.zeros(1, dtype=np.int64), np.zeros(1),
                                                      np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)),
                 buffers=buffers, sensors=SENSORS.empty(), estimators=ESTIMATORS.empty(), modes=MODES.empty(),
                 controllers=CONTROLLERS.empty(), actuators=ACTUATORS.empty()._replace(wheels=wheels))


def empty_noise() -> Noise:
    return Noise(np.zeros((0, 1)), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))


def empty_clock() -> Clock:
    return Clock(np.zeros(0), np.zeros(0), np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0),
                 np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros((0, 1), dtype=np.int64))


def empty_timeline() -> Timeline:
    return Timeline(np.zeros((0, 1)), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64),
                    np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0))


def example_world() -> World:
    """A World with every bank empty: of the type every mission's World has (what units are compiled for)."""
    from ..actuators.kernels import empty_wheel_bank

    plant = PlantBank(np.zeros(STATE_WIDTH), np.zeros(7), np.zeros(2), np.zeros(HELD_WIDTH), np.zeros(9), np.zeros(9),
                      np.zeros(1))
    environment = EnvironmentBank(np.zeros(0), np.zeros((0, 1)), np.zeros((0, 10)), np.zeros(3), np.zeros(3),
                                  np.zeros(1))
    buffers = Buffers(np.zeros((0, 1)), np.zeros((0, EVENT_WIDTH)), np.zeros(2, dtype=np.int64), np.zeros((0, 3)), 0)
    return World(plant=plant, environment=environment, noise=empty_noise(), clock=empty_clock(),
                 timeline=empty_timeline(), rows=Rows(1.0, 0.0, np.zeros(1, dtype=np.int64), np.zeros(1),
                                                      np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)),
                 buffers=buffers, sensors=SENSORS.empty(), estimators=ESTIMATORS.empty(), modes=MODES.empty(),
                 controllers=CONTROLLERS.empty(), actuators=ACTUATORS.empty()._replace(wheels=empty_wheel_bank(0)))
