"""``attsim.Ensemble``: N spacecraft stepped together, one control period at a time, with a mission's kernels.

Body ``k`` of an ensemble is the :class:`~attsim.Mission` of the same
configuration (inertia, initial state, wheels, magnetorquer, field or
environment, ``method``, ``max_step``) whose controller commands, every
``period_s`` from t = 0, what :meth:`Ensemble.step` was given for row ``k``:
the same compiled kernels, so the same numbers to the last bit (tested in
``tests/ensemble/test_ensemble.py``).

Seeds (a campaign's rule, :mod:`attsim.dispersions`): body ``k`` of an
ensemble seeded ``seed`` is run ``k`` of a campaign seeded ``seed`` — its
dispersed parameters are ``draw_parameters(dispersions, seed, k)`` and its
random stream is that of the Mission seeded ``run_seed(seed, k)``. A body
that is reset (:meth:`Ensemble.reset`) with a new seed ``s`` becomes body
``k`` of an ensemble seeded ``s``.

All bodies share one environment table (one orbit, field and Sun from
``t = 0`` of the orbit's epoch); each body has its own clock, so a body
reset mid-run starts again at ``t = 0`` of that table.
"""

from __future__ import annotations

import contextlib
import functools
import numbers
import time
from typing import NamedTuple

import numba
import numpy as np
import pandas as pd

from .._core.timegrid import grid_time
from .._core.units import call_is_cached, compile_unit, jit_address, unit_is_cached
from .._core.validate import finite_array, int_in, one_of, positive_scalar, seed_int, unit_quaternion, vector3
from ..actuators.devices import Magnetorquer, ReactionWheel
from ..actuators.kernels import WORK_COLUMNS, WheelBank
from ..dispersions import checked as checked_dispersions
from ..dispersions import draw_parameters, run_seed
from ..engine.checks import NOT_FINITE, OFF_UNIT_NORM, SOUND
from ..engine.backend import Need
from ..engine.compile_processes import compile_apart, usable_cores
from ..engine.compile_record import announce, announce_compiled, announce_rest, compiling, remember
from ..engine.plant import NO_FACES
from ..engine.settings import MAX_STEPS
from ..environment.table import EMPTY, EnvironmentTable, field_table
from ..environment.torques import NO_DISTURBANCES, DisturbanceSwitches
from ..errors import AttsimError, DivergenceError, InputError
from ..inertia import check_inertia
from ..integrators import REGISTRY
from ..integrators.base import quaternion_rate_unpack
from ..sensors.devices import Gyro, Magnetometer
from .kernels import CHUNK, GYRO, MAGNETOMETER, P_BIAS, P_BIAS_RW, P_NOISE, P_PERIOD, P_QUANTIZATION, STEP_OPTIONS, \
    STEP_UNIT, STOPPED, body_field, chunk_unit, part_units, sample_sensors, scratch_rows, step_signatures

__all__ = ["Ensemble", "Commands", "DISPERSED", "step_units"]

# the fewest bodies worth a thread of their own: below it a step runs on fewer threads (a thread's wake-up costs
# microseconds on an idle machine, milliseconds on a busy one, against ~1 µs of work a body)
BODIES_PER_THREAD = 512
# a body's arrays take ~0.5-1 kB: 2**36 bodies would need ~50 TB
MAX_BODIES = 2**36

# the parameters a dispersion may set per body (attsim.dispersions), by name
DISPERSED = ("inertia", "omega0", "q0")

_REASONS = {NOT_FINITE: "the state is no longer finite", OFF_UNIT_NORM: "the quaternion left unit norm"}


class Commands(NamedTuple):
    """One control period's commands, a row per body (SI, body axes): what :meth:`Ensemble.step` takes."""

    wheel_torque_Nm: np.ndarray  # (N, wheels)
    dipole_Am2: np.ndarray  # (N, 3)
    torque_Nm: np.ndarray  # (N, 3): an external torque on the body (a TorqueSchedule's)


def _count(n) -> int:
    if isinstance(n, bool) or not isinstance(n, (numbers.Integral, np.integer)) or n <= 0:
        raise InputError("n", "must be an integer >= 1", f"got {n!r}")
    if n > MAX_BODIES:  # numpy refuses such shapes with a ValueError of its own, before any memory is asked for
        raise InputError("n", f"must be at most {MAX_BODIES:.3g} (no machine's memory holds more bodies' arrays)",
                         f"got {n}")
    return int(n)


def _per_body(value, field: str, n: int, shape: tuple) -> np.ndarray:
    """``value`` given once (``shape``) or per body (``(n,) + shape``), as an ``(n,) + shape`` float array."""
    array = finite_array(value, field)
    if array.shape == shape:
        return np.broadcast_to(array, (n,) + shape).copy()
    if array.shape == (n,) + shape:
        return np.ascontiguousarray(array)  # C order: the compiled step's one layout
    raise InputError(field, f"must have shape {shape} (every body) or {(n,) + shape} (one row per body)",
                     f"got shape {array.shape}")


def _laid_out(value, shape: tuple) -> bool:
    """True when ``value`` is an array the compiled step reads as it is: float64, ``shape``, C-ordered, aligned
    and writeable (the step's one array type)."""
    return isinstance(value, np.ndarray) and value.dtype == np.float64 and value.shape == shape and \
        value.flags.c_contiguous and value.flags.writeable and value.flags.aligned


class Ensemble:
    """N spacecraft in lockstep: state in arrays, each body its own parameters and random stream.

    Parameters
    ----------
    n : int
        Number of bodies, >= 1.
    inertia : array_like
        Inertia (kg m²): a 3x3 tensor or 3 moments for every body, or one
        per body ``(n, 3, 3)`` / ``(n, 3)``; each checked as a Mission's.
    omega0, q0 : array_like
        Initial rate (rad/s, body axes) and ``q_IB`` (scalar first), for
        every body or one row per body.
    wheels : sequence of ReactionWheel
        The wheel array every body carries (axes, inertia, limits and
        ``speed0_rad_s`` of each); friction and imbalance are refused (not
        in the ensemble yet). ``wheel_inertia_kg_m2``,
        ``wheel_max_torque_Nm`` and ``wheel_max_speed_rad_s`` of shape
        ``(n, wheels)`` give each body its own.
    magnetorquer : Magnetorquer, optional
        The magnetorquers every body carries (limits and saturation rule): three bars on the body axes
        (an array on other ``bar_axes`` is refused).
    period_s : float
        The control period: :meth:`step` advances every body by it.
    max_step : float, optional
        Largest integration sub-step (default ``period_s``), as a Mission's.
    method : str
        A mission integrator with a quaternion-and-rate state (``rk4``,
        ``rkn``, ``rkmk4``).
    field, field_dt, environment : optional
        The shared environment, as a Mission's.
    duration : float
        The span of the environment's table, s (default 600): a body's time
        beyond it holds the table's last row.
    seed : int
        The ensemble's seed (module docstring: how body ``k`` maps to a
        Mission's seed).
    dispersions : mapping, optional
        ``{name: attsim.dispersions.Dispersion}`` for names in
        :data:`DISPERSED`: body ``k`` draws them as run ``k`` of a campaign.
    sensors : sequence of Gyro or Magnetometer
        Plain sensors (no mounting, scale factor or faults) every body
        carries, sampled by :meth:`sample`. Body ``k``'s sensor ``s`` draws
        its noise from ``SeedSequence(mission_seed(k)).spawn(len(sensors))[s]``:
        the stream sensor ``s`` has in the Mission whose sensors are added in
        this order before any other component that draws.
    wheel_inertia_kg_m2, wheel_max_torque_Nm, wheel_max_speed_rad_s : array_like (n, wheels), optional
        Each body's own wheel spin inertia (kg m²), motor torque limit (N m)
        and speed limit (rad/s), instead of the ``wheels``' own.
    allow_nonphysical : bool
        Accept inertias that violate the triangle inequality, as a
        Mission's ``allow_nonphysical`` (default False).
    """

    samples_per_block = 64
    """Samples' worth of normals each body's sensor draws from its stream at once: any number gives the same
    sequence (a generator's normals do not depend on how many are drawn a call); fewer hold less memory (8 bytes a
    normal, per body and sensor) and cost more Python calls."""

    def __init__(self, n, inertia, omega0=(0.0, 0.0, 0.0), q0=(1.0, 0.0, 0.0, 0.0), *, wheels=(), magnetorquer=None,
                 period_s: float = 0.1, max_step: float | None = None, method: str = "rk4", field=None,
                 field_dt: float | None = None, environment=None, duration: float = 600.0, seed: int = 0,
                 dispersions=None, wheel_inertia_kg_m2=None, wheel_max_torque_Nm=None, wheel_max_speed_rad_s=None,
                 sensors=(), allow_nonphysical: bool = False):
        self.n = n = _count(n)
        self.period_s = positive_scalar(period_s, "period_s")
        self.max_step_s = self.period_s if max_step is None else positive_scalar(max_step, "max_step")
        one_of(method, "method", sorted(REGISTRY))
        integrator = REGISTRY[method]
        if not getattr(integrator, "mission_ready", False) or integrator.unpack_state is not quaternion_rate_unpack:
            raise InputError("method", "must be a mission method with a quaternion-and-rate state "
                             "(rk4, rkn, rkmk4)", f"got {method!r}")
        self.method, self._integrator = method, integrator
        self._params = integrator.engine_params()
        self.duration_s = positive_scalar(duration, "duration")
        # per period only: the duration is the table's span, not a run's (a year's table with a 1 ms step is fine);
        # past this the compiled sub-step count also leaves int64 (it came out as one step)
        if self.period_s / self.max_step_s > MAX_STEPS:
            raise InputError("max_step", f"gives more than {MAX_STEPS:.0e} sub-steps in a period",
                             f"period_s {self.period_s:g} s / max_step {self.max_step_s:g} s")
        self.seed = seed_int(seed)
        self._reseeded: dict[int, tuple] = {}  # body -> (seed, body) of its reset with a seed (mission_seed)
        self.dispersions = checked_dispersions(dispersions or {})
        for name in self.dispersions:
            if name not in DISPERSED:
                raise InputError(f"dispersions[{name!r}]", f"must name one of {DISPERSED}", f"got {name!r}")
        self.allow_nonphysical = allow_nonphysical
        self._nominal = {"inertia": self._nominal_value(inertia, "inertia", ((3, 3), (3,))),
                         "omega0": self._nominal_value(omega0, "omega0", ((3,),)),
                         "q0": self._nominal_value(q0, "q0", ((4,),))}
        self._shared = {name: None if per_body else self._checked(name, array, None, False)
                        for name, (array, per_body) in self._nominal.items()}
        self._wheels = self._check_wheels(wheels)
        self._magnetorquer = self._check_magnetorquer(magnetorquer)
        self._sensors = self._check_sensors(sensors)
        self._table, self._faces, self._switches, self._residual = self._environment(field, field_dt, environment)
        nw = len(self._wheels)
        self.wheel_axes = np.array([w.axis for w in self._wheels]).reshape(nw, 3)
        self.wheel_inertia_kg_m2 = self._wheel_parameter(wheel_inertia_kg_m2, "wheel_inertia_kg_m2", "inertia_kg_m2")
        self.wheel_max_torque_Nm = self._wheel_parameter(wheel_max_torque_Nm, "wheel_max_torque_Nm", "max_torque_Nm")
        self.wheel_max_speed_rad_s = self._wheel_parameter(wheel_max_speed_rad_s, "wheel_max_speed_rad_s",
                                                           "max_speed_rad_s")
        try:
            self._allocate()
        except MemoryError:
            raise InputError("n", "must be a number of bodies whose arrays fit this machine's memory",
                             f"got {n}") from None
        self._compiled = None  # the compiled step and its chunk's address, at the first step (_compile)
        self.reset()

    # --- configuration, checked once --------------------------------------

    def _nominal_value(self, value, field: str, shapes) -> tuple:
        """``(array, per body)``: ``value`` in one of ``shapes`` for every body, or with a leading axis of n."""
        array = finite_array(value, field)
        if array.shape in shapes:
            return array, False
        if array.ndim >= 1 and array.shape[0] == self.n and array.shape[1:] in shapes:
            return array, True
        raise InputError(field, f"must have shape {' or '.join(map(str, shapes))} (every body) or one of these with "
                         f"a leading axis of n = {self.n} (one per body)", f"got shape {array.shape}")

    @staticmethod
    def _check_wheels(wheels) -> list:
        if isinstance(wheels, (str, bytes)) or not hasattr(wheels, "__iter__"):
            raise InputError("wheels", "must be a sequence of attsim.ReactionWheel", f"got {wheels!r:.60}")
        wheels = list(wheels)
        for i, wheel in enumerate(wheels):
            if not isinstance(wheel, ReactionWheel):
                raise InputError(f"wheels[{i}]", "must be an attsim.ReactionWheel", f"got {type(wheel).__name__}")
            if wheel.has_friction or wheel.has_imbalance:
                raise InputError(f"wheels[{i}]", "must have no friction or imbalance in an Ensemble (not supported "
                                 "yet: run a Mission for them)", f"wheel {wheel.name!r}")
        return wheels

    def _check_sensors(self, sensors) -> list:
        if isinstance(sensors, (str, bytes)) or not hasattr(sensors, "__iter__"):
            raise InputError("sensors", "must be a sequence of attsim.Gyro or attsim.Magnetometer",
                             f"got {sensors!r:.60}")
        sensors = list(sensors)
        for i, sensor in enumerate(sensors):
            if not isinstance(sensor, (Gyro, Magnetometer)):
                raise InputError(f"sensors[{i}]", "must be an attsim.Gyro or attsim.Magnetometer",
                                 f"got {type(sensor).__name__}")
            if not sensor.plain or (isinstance(sensor, Gyro) and any(sensor.bias0)):
                raise InputError(f"sensors[{i}]", "must be plain in an Ensemble: no mounting, misalignment, scale "
                                 "factor error, fault or (gyro) initial bias (not supported yet)",
                                 f"sensor {sensor.name!r}")
        names = [s.name for s in sensors]
        if len(set(names)) != len(names):
            raise InputError("sensors", "must have distinct names", f"got {names}")
        return sensors

    @staticmethod
    def _check_magnetorquer(magnetorquer):
        if magnetorquer is not None and not isinstance(magnetorquer, Magnetorquer):
            raise InputError("magnetorquer", "must be an attsim.Magnetorquer or None",
                             f"got {type(magnetorquer).__name__}")
        if magnetorquer is not None and magnetorquer.bar_axes is not None:
            raise InputError("magnetorquer", "must be three bars along the body axes (bar_axes=None) in an Ensemble",
                             f"got {magnetorquer.dipole_max_Am2.size} bars on bar_axes")
        if magnetorquer is not None and magnetorquer.steering_matrix is not None:
            raise InputError("magnetorquer", "must steer its bars by G+ (steering_matrix=None) in an Ensemble",
                             "got a steering_matrix")
        return magnetorquer

    def _environment(self, field, field_dt, environment):
        if environment is not None and field is not None:
            raise InputError("field", "must be None when an environment is given (its field model is used)")
        if environment is not None:
            from ..environment import Environment

            if not isinstance(environment, Environment):
                raise InputError("environment", "must be an attsim.environment.Environment",
                                 f"got {type(environment).__name__}")
            table = EnvironmentTable(*environment.table(self.duration_s))
            return (table, environment.faces_array(), DisturbanceSwitches(*environment.flags),
                    tuple(float(x) for x in environment.residual_dipole_Am2))
        if field is None:
            table = EMPTY
        else:
            spacing = self.max_step_s if field_dt is None else positive_scalar(field_dt, "field_dt")
            field = field if callable(field) else finite_array(field, "field", (3,))
            table = field_table(field, self.duration_s, spacing)
        return table, NO_FACES, NO_DISTURBANCES, (0.0, 0.0, 0.0)

    def _wheel_parameter(self, value, field: str, attribute: str) -> np.ndarray:
        nominal = np.array([getattr(w, attribute) for w in self._wheels], dtype=float)
        if value is None:
            return np.broadcast_to(nominal, (self.n, len(nominal))).copy()
        array = _per_body(value, field, self.n, (len(nominal),))
        if np.any(array <= 0.0):
            raise InputError(field, "must be > 0 for every body and wheel", f"min {array.min():g}")
        return array

    def body_parameters(self, k: int, seed: int | None = None, seed_body: int | None = None) -> dict:
        """Body ``k``'s inertia (3x3), ``omega0`` and ``q0``, checked as a Mission checks them: the nominal values,
        or its draws of :attr:`dispersions` as run ``k`` (``seed_body`` when given) of a campaign seeded ``seed``
        (default: the ensemble's)."""
        run = k if seed_body is None else seed_body
        drawn = draw_parameters(self.dispersions, self.seed if seed is None else seed, run) if self.dispersions else {}
        return {name: self._checked(name, drawn[name], k, True) if name in drawn else
                self._checked(name, array[k], k, False) if per_body else self._shared[name]
                for name, (array, per_body) in self._nominal.items()}

    def _checked(self, name: str, value, k, drawn: bool) -> np.ndarray:
        field = f"dispersions[{name!r}] (body {k})" if drawn else name if k is None else f"{name} (body {k})"
        if name == "inertia":
            return check_inertia(value, allow_nonphysical=self.allow_nonphysical, field_name=field).matrix_kg_m2
        return vector3(value, field) if name == "omega0" else unit_quaternion(value, field)

    def _allocate(self) -> None:
        n, nw = self.n, len(self._wheels)
        self.state = np.zeros((n, 7))  # q_IB (scalar first) and ω (rad/s), body axes; the method's packed state
        self.steps = np.zeros(n, dtype=np.int64)  # control periods since the body's reset: t = steps period_s
        self.J = np.zeros((n, 9))
        self.Jinv = np.zeros((n, 9))
        self.wheel_h_Nms = np.zeros((n, nw))
        self.wheel_torque_Nm = np.zeros((n, nw))
        self.wheel_torque_saturated = np.zeros((n, nw))
        self.wheel_speed_saturated = np.zeros((n, nw))
        self.wheel_requested_Nm = np.zeros((n, nw))
        self._work = np.zeros((nw + 1, WORK_COLUMNS))  # no friction nor imbalance: read only, shared
        limit = np.inf if self._magnetorquer is None else self._magnetorquer.dipole_max_Am2
        self.dipole_max_Am2 = np.broadcast_to(np.asarray(limit, dtype=float), (n, 3)).copy()
        self.dipole_Am2 = np.zeros((n, 3))
        self._stops = np.zeros((n, nw + 1, 3))
        # the compiled step's working rows, one row per thread (attsim.ensemble.kernels: a chunk of bodies at a time)
        self._scratch = self._new_scratch()
        self._parts = np.zeros(3, dtype=np.int64)  # the addresses of the chunk's parts, once compiled (compile)

        self.status = np.zeros(n, dtype=np.int64)
        self._allocate_sensors()
        self._zeros = Commands(np.zeros((n, nw)), np.zeros((n, 3)), np.zeros((n, 3)))

    def _new_scratch(self) -> np.ndarray:
        """The compiled step's working rows: one per numba thread of this process (it indexes them by thread)."""
        return np.zeros((numba.config.NUMBA_NUM_THREADS, scratch_rows(len(self._wheels)) * CHUNK))

    def _allocate_sensors(self) -> None:
        n, count = self.n, len(self._sensors)
        self._sensor_kinds = np.array([GYRO if isinstance(s, Gyro) else MAGNETOMETER for s in self._sensors],
                                      dtype=np.int64)
        self._sensor_draws = np.array([s.draws for s in self._sensors], dtype=np.int64)
        self._sensor_parameters = np.zeros((count, P_BIAS + 3))
        for i, sensor in enumerate(self._sensors):
            row = self._sensor_parameters[i]
            row[P_PERIOD] = sensor.period_s
            row[P_QUANTIZATION] = sensor.quantization
            if isinstance(sensor, Gyro):
                row[P_NOISE], row[P_BIAS_RW] = sensor.arw, sensor.bias_rw
            else:
                row[P_NOISE] = sensor.noise
                row[P_BIAS:P_BIAS + 3] = sensor.bias
        block = self.samples_per_block * max([6] + [int(d) for d in self._sensor_draws])
        self._sensor_bias = np.zeros((n, count, 3))
        self._sensor_last_t = np.full((n, count), np.nan)
        self._sampled = np.full(n, -1, dtype=np.int64)
        self._normals = np.zeros((n, count, block))
        self._position = np.zeros((n, count), dtype=np.int64)
        self._generators = [None] * n
        self.readings_array = np.full((n, count, 3), np.nan)

    def _restart_sensors(self, index, runs=None) -> None:
        """Each sensor of ``bodies`` at its start: no sample yet, its stream from the body's Mission seed
        (``run_seed(*runs[i])`` when given: :meth:`reset`'s seeds)."""
        self._sensor_bias[index] = 0.0
        self._sensor_last_t[index] = np.nan
        self._sampled[index] = -1
        self.readings_array[index] = np.nan
        if not self._sensors:
            return
        for i, k in enumerate(index):
            seed = run_seed(*(runs[i] if runs else (self.seed, int(k))))
            self._generators[k] = [np.random.default_rng(s) for s in
                                   np.random.SeedSequence(seed).spawn(len(self._sensors))]
            self._position[k] = self._normals.shape[2]  # exhausted: the first sample draws the first block

    def _refill(self) -> None:
        """A new block of normals for every sensor whose block is spent (the stream's next values, as a mission's
        sensor draws them: a generator's normals are one sequence however many are drawn a call)."""
        block = np.array([self.samples_per_block * int(d) for d in self._sensor_draws])
        for s in range(len(self._sensors)):
            d = int(self._sensor_draws[s])
            if d == 0:
                continue
            for k in np.flatnonzero(self._position[:, s] + d > block[s]):
                self._normals[k, s, :block[s]] = self._generators[k][s].standard_normal(block[s])
                self._position[k, s] = 0

    def sample(self) -> dict:
        """Sample every body's sensors at its time now (what a controller cycle at that time reads): ``{sensor name:
        (n, 3) readings}`` (rad/s for a gyro, T for a magnetometer, body axes). A second call at the same step
        returns the same readings."""
        if not self._sensors:
            return {}
        self._refill()
        sample_sensors(*self._sample_args())
        return self.readings

    def _sample_args(self) -> tuple:
        env_t, env_v = self._table
        return (self.state, self.steps, self.period_s, env_t, env_v, self._sensor_kinds, self._sensor_draws,
                self._sensor_parameters, self._sensor_bias, self._sensor_last_t, self._sampled, self._normals,
                self._position, self.readings_array)

    @property
    def readings(self) -> dict:
        """The last readings of each sensor, ``{name: (n, 3) view}`` (NaN before the first sample)."""
        return {s.name: self.readings_array[:, i] for i, s in enumerate(self._sensors)}

    # --- resetting bodies ---------------------------------------------------

    def reset(self, bodies=None, seeds=None, *, q0=None, omega0=None, wheel_speed0_rad_s=None,
              seed_body=None) -> None:
        """Put ``bodies`` (indices, a boolean mask or None: all) back at their initial state, at t = 0.

        With ``seeds`` (one per body reset), body ``k`` takes the parameters
        and sensor noise streams body ``k`` of an ensemble seeded
        ``seeds[i]`` would have; with ``seed_body`` too, those of that body
        instead (the reinforcement-learning vector environment gives 0:
        each of its environments then runs as a single one seeded alike). ``q0``
        ``(m, 4)``, ``omega0`` ``(m, 3)`` and ``wheel_speed0_rad_s``
        ``(m, wheels)``, one row per body reset, replace those initial values
        (a reinforcement-learning reset draws them for many bodies at once).
        """
        index = self._indices(bodies)
        if seed_body is not None:
            seed_body = int_in(seed_body, "seed_body", 0)
        if seeds is not None:
            seeds = [seed_int(s) for s in np.atleast_1d(np.asarray(seeds, dtype=object))]
            if len(seeds) != len(index):
                raise InputError("seeds", "must give one seed per body reset", f"{len(seeds)} for {len(index)}")
        # whose Mission each body reset reproduces: (campaign seed, run) for attsim.dispersions.run_seed
        runs = None if seeds is None else [(seed, int(k) if seed_body is None else seed_body)
                                           for seed, k in zip(seeds, index)]
        overrides = self._overrides(len(index), q0, omega0, wheel_speed0_rad_s)
        if seeds is None and not self.dispersions and not any(per_body for _, per_body in self._nominal.values()):
            self._reset_shared(index)
        else:
            self._reset_each(index, runs)
        for array in (self.wheel_torque_Nm, self.wheel_torque_saturated, self.wheel_speed_saturated,
                      self.wheel_requested_Nm, self.dipole_Am2):
            array[index] = 0.0
        if overrides:
            self._override(index, *overrides)
        self._restart_sensors(index, runs)
        for i, k in enumerate(index):  # (mission_seed)
            if runs is None:
                self._reseeded.pop(int(k), None)
            else:
                self._reseeded[int(k)] = runs[i]
        self.steps[index] = 0
        self.status[index] = SOUND

    def _overrides(self, m: int, q0, omega0, speed0) -> tuple:
        if q0 is None and omega0 is None and speed0 is None:
            return ()
        if q0 is not None:
            q0 = finite_array(q0, "q0")
            if q0.shape != (m, 4):
                raise InputError("q0", f"must have shape ({m}, 4): one row per body reset", f"got {q0.shape}")
            norm = np.sqrt(np.sum(q0 * q0, axis=1))
            if np.any(np.abs(norm - 1.0) > 1e-6):
                raise InputError("q0", "must hold unit quaternions (|q| = 1 to 1e-6)",
                                 f"row {int(np.argmax(np.abs(norm - 1.0)))}: |q| = {norm.max():.9g}")
            q0 = q0 / norm[:, None]
        if omega0 is not None:
            omega0 = finite_array(omega0, "omega0")
            if omega0.shape != (m, 3):
                raise InputError("omega0", f"must have shape ({m}, 3): one row per body reset", f"got {omega0.shape}")
        if speed0 is not None:
            speed0 = finite_array(speed0, "wheel_speed0_rad_s")
            if speed0.shape != (m, len(self._wheels)):
                raise InputError("wheel_speed0_rad_s", f"must have shape ({m}, {len(self._wheels)})",
                                 f"got {speed0.shape}")
        return q0, omega0, speed0

    def _override(self, index, q0, omega0, speed0) -> None:
        if q0 is not None:
            self.state[index, :4] = q0
        if omega0 is not None:
            self.state[index, 4:] = omega0
        if omega0 is not None or speed0 is not None:  # each wheel's momentum from its speed and the body rate
            nominal = np.array([w.speed0_rad_s for w in self._wheels])
            speed = nominal if speed0 is None else speed0
            self.wheel_h_Nms[index] = self.wheel_inertia_kg_m2[index] * (speed + self.state[index, 4:] @
                                                                         self.wheel_axes.T)

    def _reset_shared(self, index) -> None:
        """Every body reset from the same nominal values: filled at once (the same numbers as one at a time)."""
        J, w0 = self._shared["inertia"], self._shared["omega0"]
        self.J[index], self.Jinv[index] = J.reshape(9), np.linalg.inv(J).reshape(9)
        self.state[index, :4], self.state[index, 4:] = self._shared["q0"], w0
        for j, wheel in enumerate(self._wheels):
            self.wheel_h_Nms[index, j] = self.wheel_inertia_kg_m2[index, j] * (wheel.speed0_rad_s +
                                                                                 float(wheel.axis @ w0))

    def _reset_each(self, index, runs=None) -> None:
        inverses = {}  # one inverse per distinct inertia: bodies sharing one share its bits
        for i, k in enumerate(index):
            p = self.body_parameters(int(k), *(runs[i] if runs else ()))
            J = p["inertia"]
            if id(J) not in inverses:
                inverses[id(J)] = (J.reshape(9), np.linalg.inv(J).reshape(9))
            self.J[k], self.Jinv[k] = inverses[id(J)]
            self.state[k, :4], self.state[k, 4:] = p["q0"], p["omega0"]
            w0 = p["omega0"]
            for j, wheel in enumerate(self._wheels):  # a ReactionWheel's own start (same expression, same bits)
                self.wheel_h_Nms[k, j] = self.wheel_inertia_kg_m2[k, j] * (wheel.speed0_rad_s + float(wheel.axis @ w0))

    def _indices(self, bodies) -> np.ndarray:
        if bodies is None:
            return np.arange(self.n)
        array = np.asarray(bodies)
        if array.dtype == bool:
            if array.shape != (self.n,):
                raise InputError("bodies", f"a mask must have shape ({self.n},)", f"got shape {array.shape}")
            return np.flatnonzero(array)
        if array.dtype.kind not in "iu" or array.ndim > 1 or (array.size and (array.min() < 0 or
                                                                            array.max() >= self.n)):
            raise InputError("bodies", f"must be body indices in [0, {self.n}) or a boolean mask",
                             f"got {bodies!r:.60}")
        return np.atleast_1d(array).astype(np.int64)

    # --- stepping -----------------------------------------------------------

    def commands(self, wheel_torque_Nm=None, dipole_Am2=None, torque_Nm=None) -> Commands:
        """Checked :class:`Commands` (None: zeros): shapes ``(n, wheels)``, ``(n, 3)``, ``(n, 3)``, finite."""
        n, nw = self.n, len(self._wheels)
        return Commands(self._command(wheel_torque_Nm, "wheel_torque_Nm", (n, nw), self._zeros.wheel_torque_Nm),
                        self._command(dipole_Am2, "dipole_Am2", (n, 3), self._zeros.dipole_Am2,
                                      self._magnetorquer is None),
                        self._command(torque_Nm, "torque_Nm", (n, 3), self._zeros.torque_Nm))

    @staticmethod
    def _command(value, field, shape, zeros, absent: bool = False) -> np.ndarray:
        if value is None:
            return zeros
        if _laid_out(value, shape):
            array = value  # the usual case: checked without a copy (the compiled step's one array type)
            if not np.isfinite(array).all():
                bad = np.argwhere(~np.isfinite(array))[0]
                raise InputError(field, "must be finite", f"body {bad[0]}: {array[tuple(bad)]!r}")
        else:
            array = finite_array(value, field)
            if array.shape != shape:
                raise InputError(field, f"must have shape {shape}", f"got shape {array.shape}")
            array = np.ascontiguousarray(array)
        if absent and np.any(array != 0.0):
            raise InputError(field, "needs a magnetorquer (Ensemble(magnetorquer=...))")
        return array

    def step(self, wheel_torque_Nm=None, dipole_Am2=None, torque_Nm=None) -> None:
        """Advance every body one control period under the commands (N m, A m², N m; None: zeros).

        The commands are held for the period (limits applied as a mission's
        actuators apply them). Raises :class:`~attsim.errors.DivergenceError`
        naming the first body whose state failed the mission's check.
        """
        c = self.commands(wheel_torque_Nm, dipole_Am2, torque_Nm)
        self.step_checked(c)

    def step_checked(self, c: Commands) -> None:
        """:meth:`step` with commands whose values are already checked (:meth:`commands`): their layout is still
        checked here (the compiled step reads the arrays as they are laid out), their values are not."""
        self._check_layout(c)
        threads = numba.get_num_threads()
        wanted = min(threads, max(1, self.n // BODIES_PER_THREAD))
        if wanted != threads:  # a small ensemble runs on fewer threads: waking one costs more than its share
            numba.set_num_threads(wanted)
        try:
            self._step(c)
        finally:
            if wanted != threads:
                numba.set_num_threads(threads)
        if self.status.any():
            self._raise_fault()

    def _check_layout(self, c: Commands) -> None:
        """Refuse commands the compiled step would misread: other than :class:`Commands` of C-ordered float64
        arrays with a row per body (a row short and the step reads past the array's end)."""
        if type(c) is not Commands:  # numba types a subclass as another tuple: its dispatch error, not ours
            raise InputError("commands", "must be Commands (Ensemble.commands makes them)", f"got {type(c).__name__}")
        for name, array, width in zip(Commands._fields, c, (len(self._wheels), 3, 3)):
            if not _laid_out(array, (self.n, width)):
                got = (f"dtype {array.dtype}, shape {array.shape}, C-ordered {array.flags.c_contiguous}, writeable "
                       f"{array.flags.writeable}" if isinstance(array, np.ndarray) else type(array).__name__)
                raise InputError(f"commands.{name}", "must be a writeable C-ordered float64 array of shape "
                                 f"{(self.n, width)} (Ensemble.commands makes one)", f"got {got}")

    def __getstate__(self) -> dict:
        """What a copy in another process (pickle) takes: all but the compiled step's addresses, which are this
        process's own (called there, they crashed it); its first step there makes them again, from the disk
        cache."""
        state = self.__dict__.copy()
        state["_compiled"], state["_parts"] = None, np.zeros_like(self._parts)
        return state

    def __setstate__(self, state: dict) -> None:
        """The working rows are one per thread of *this* process: a copy from a process with fewer numba threads
        stepped past their end (a segmentation fault, a false divergence, helper-40)."""
        self.__dict__.update(state)
        self._scratch = self._new_scratch()

    def _step_args(self, c: Commands) -> tuple:
        """The compiled step's arguments (:func:`attsim.ensemble.kernels.ensemble_step`, after the chunk's address)
        for the commands ``c``."""
        env_t, env_v = self._table
        scale = self._magnetorquer is not None and self._magnetorquer.saturation == "scale"
        return (self.state, self.steps, self.period_s, self.max_step_s, c, WheelBank(
            self.wheel_axes, self.wheel_inertia_kg_m2, self.wheel_max_torque_Nm, self.wheel_max_speed_rad_s,
            self.wheel_h_Nms, self.wheel_torque_Nm, self.wheel_torque_saturated, self.wheel_speed_saturated,
            self.wheel_requested_Nm, self._work), self.dipole_max_Am2, scale, self.dipole_Am2, self.J, self.Jinv,
            self._params, env_t, env_v, self._faces, self._switches, self._residual, self._stops, self.status,
            self._scratch, self._parts)

    def _step(self, c: Commands) -> None:
        if self._compiled is None:
            self.compile()
        step, chunk = self._compiled
        step(chunk, *self._step_args(c))

    def compile(self, calls=(), readers=()) -> list[str]:
        """Make the compiled step ready, and the compiled functions a caller is about to call; the first
        :meth:`step` calls it (an environment calls it at its first reset, with its own functions).

        Each is compiled once per machine, then loaded from the disk cache
        in milliseconds. When any must compile here, this says so on stderr
        first, with the estimate (the wording of a mission's run), and each
        one as it is done: never a silent wait of tens of seconds. On a
        machine with two cores or more, the parallel loop, an ``rk4`` chunk
        and the chunk's three parts (units ``attsim compile`` knows) compile
        in child processes, one per core at once
        (:func:`~attsim.engine.compile_processes.compile_apart`), the rest in
        this process meanwhile.

        Parameters
        ----------
        calls : iterable of (str, numba dispatcher, tuple)
            A name, an ``njit`` function and the arguments it will be called with (their types are what count).
        readers : iterable of str
            The readers the caller will use: ``"field"`` (:meth:`field_body_T`), ``"sensors"`` (:meth:`sample`).

        Returns
        -------
        list of str
            The names compiled (none when everything was on disk).
        """
        units = self._units(self._step_args(self._zeros))
        (step_unit, step_signature, options), (chunk, chunk_signature, _), *parts = units
        calls = list(calls) + self._reader_calls(readers)
        absent_units = [Need(u, sig, opts) for u, sig, opts in units if not unit_is_cached(u, sig, **opts)]
        absent = [n.unit.name for n in absent_units] + [name for name, f, args in calls if not call_is_cached(f, args)]
        # the units a compiling process knows (rk4's, attsim compile's) compile there, in children, a process a core
        # (the loop ~7 s, the chunk ~9 s, its parts ~9 s in all), the rest here meanwhile
        cores = usable_cores()
        known = {(u.cache_name(), str(sig)) for u, sig, _ in step_units()} if cores > 1 else set()
        apart = [n for n in absent_units if (n.unit.cache_name(), str(n.signature)) in known]
        local = [n for n in absent_units if n not in apart]
        jobs = min(len(apart), cores)  # a child a core: the loop, the chunk and its parts share them
        if absent:
            announce(absent, jobs=jobs + (len(apart) < len(absent)))
        seconds = {}

        def here() -> dict:
            # what is still absent once the lock is held: another process may have compiled some meanwhile, and a
            # load from disk must be neither said nor kept as this machine's compile time
            for need in local:
                if not unit_is_cached(need.unit, need.signature, **need.options):
                    _timed(need.unit.name, seconds,
                           functools.partial(compile_unit, need.unit, need.signature, **need.options))
            for name, function, args in calls:
                if not call_is_cached(function, args):
                    _timed(name, seconds, functools.partial(_compile_call, function, args))
            remember(seconds)
            return seconds

        with compiling() if absent else contextlib.nullcontext():  # another process may be compiling them
            done = compile_apart(apart, jobs, announce_compiled, meanwhile=here) if apart else here()
        address = jit_address(compile_unit(chunk, chunk_signature), chunk_signature)  # on disk now: loaded
        self._parts[:] = [jit_address(compile_unit(part, signature), signature) for part, signature, _ in parts]
        self._compiled = (compile_unit(step_unit, step_signature, **options), address)
        compiled = [name for name in absent if name in done]
        announce_rest(len(absent), len(compiled))
        return compiled

    def _reader_calls(self, readers) -> list:
        """``(name, function, arguments)`` of the readers named (those this ensemble has: a field, sensors)."""
        env_t, env_v = self._table
        calls = []
        if "field" in readers and self.has_field:
            calls.append(("body_field", body_field, (self.state, self.steps, self.period_s, env_t, env_v,
                                                     np.empty((self.n, 3)))))
        if "sensors" in readers and self._sensors:
            calls.append(("sample_sensors", sample_sensors, self._sample_args()))
        return calls

    def _units(self, args) -> list:
        """``(unit, signature, options)`` of the compiled step, of its chunk and of the chunk's three parts (in the
        order of their addresses) for the step's arguments ``args``."""
        signatures = step_signatures(args)
        return [(STEP_UNIT, signatures.step, STEP_OPTIONS),
                (chunk_unit(self._integrator, self.has_field), signatures.chunk, {}),
                *[(part, signature, {}) for part, signature in zip(part_units(self._integrator), signatures.parts)]]

    def _raise_fault(self):
        k = int(np.flatnonzero(self.status)[0])
        t1 = grid_time.py_func(0.0, int(self.steps[k]), self.period_s)
        t0 = grid_time.py_func(0.0, int(self.steps[k]) - 1, self.period_s)
        code = int(self.status[k])
        if code == STOPPED:
            raise AttsimError(f"body {k}: the method's parameterisation failed between t = {t0:g} s and {t1:g} s")
        reason = _REASONS.get(code, "the rate turns the body more than half a revolution per max_step")
        raise DivergenceError(t1, f"body {k}: {reason}", t0, self.max_step_s)

    # --- reading -------------------------------------------------------------

    @property
    def t_s(self) -> np.ndarray:
        """Each body's time since its reset (s): a mission controller's time of cycle ``steps``."""
        return np.array([grid_time.py_func(0.0, int(k), self.period_s) for k in self.steps])

    @property
    def q(self) -> np.ndarray:
        """``q_IB`` of every body, (n, 4), scalar first (a view)."""
        return self.state[:, :4]

    @property
    def omega_rad_s(self) -> np.ndarray:
        """Body rates (rad/s, body axes), (n, 3) (a view)."""
        return self.state[:, 4:7]

    @property
    def wheel_speed_rad_s(self) -> np.ndarray:
        """Each wheel's speed relative to its body (rad/s), (n, wheels): ``h / I - a·ω``."""
        return self.wheel_h_Nms / self.wheel_inertia_kg_m2 - self.omega_rad_s @ self.wheel_axes.T

    def field_body_T(self, out=None) -> np.ndarray:
        """The shared field at each body's time in its body axes (T), (n, 3); zeros without a field."""
        out = np.empty((self.n, 3)) if out is None else out
        env_t, env_v = self._table
        body_field(self.state, self.steps, self.period_s, env_t, env_v, out)
        return out

    @property
    def wheel_count(self) -> int:
        return len(self._wheels)

    @property
    def has_field(self) -> bool:
        return self._table.t_s.size > 0

    def frame(self) -> pd.DataFrame:
        """The state now as a pandas frame, one row per body (index ``body``), in the telemetry's column names."""
        data = {"t": self.t_s}
        for i, name in enumerate(("qw", "qx", "qy", "qz", "wx", "wy", "wz")):
            data[name] = self.state[:, i]
        speed = self.wheel_speed_rad_s
        for j, wheel in enumerate(self._wheels):
            data[f"{wheel.name}_speed"] = speed[:, j]
            data[f"{wheel.name}_h"] = self.wheel_h_Nms[:, j]
            data[f"{wheel.name}_torque"] = self.wheel_torque_Nm[:, j]
            data[f"{wheel.name}_torque_cmd"] = self.wheel_requested_Nm[:, j]
        if self._magnetorquer is not None:
            for i, axis in enumerate("xyz"):
                data[f"{self._magnetorquer.name}_m_{axis}"] = self.dipole_Am2[:, i]
        return pd.DataFrame(data, index=pd.RangeIndex(self.n, name="body"))

    def memory_bytes(self) -> int:
        """Bytes held by the ensemble's per-body arrays (the shared environment table included)."""
        arrays = [v for v in vars(self).values() if isinstance(v, np.ndarray)] + list(self._zeros) + list(self._table)
        return int(sum(a.nbytes for a in arrays))

    def mission_seed(self, k: int) -> int:
        """The seed of the Mission that body ``k`` reproduces: ``attsim.dispersions.run_seed(seed, k)``, or, after
        a :meth:`reset` of it with a seed, ``run_seed(that seed, k)`` (``seed_body`` for ``k`` when given)."""
        return run_seed(*self._reseeded.get(int(k), (self.seed, int(k))))



def _compile_call(function, args):
    """``function`` (``njit``) compiled for the types of ``args``, or loaded from the disk cache; not called."""
    return function.compile(tuple(function.typeof_pyval(a) for a in args))


def _timed(name: str, seconds: dict, make) -> None:
    """``make()``, a compile: its wall time into ``seconds`` under ``name``, and said on stderr."""
    start = time.perf_counter()
    make()
    seconds[name] = time.perf_counter() - start
    announce_compiled(name, seconds[name])


def step_units(methods=("rk4",)) -> list:
    """``(unit, signature, options)`` of the compiled steps of ensembles of ``methods``, without and with an
    environment table: what ``attsim compile`` compiles ahead (:mod:`attsim.engine.precompile`). The arguments'
    types do not depend on the ensemble's size, wheels or settings, so these are the very units every such
    ensemble runs. The other methods' chunks (a few seconds each: they share the rest) compile at first use."""
    found = {}
    wheel = ReactionWheel("rw", (1.0, 0.0, 0.0), 1e-5, 1e-3, 600.0)
    for method in methods:
        for field in (None, (1e-5, 0.0, 0.0)):
            ensemble = Ensemble(1, (1.0, 1.0, 1.0), wheels=[wheel], method=method, field=field, duration=1.0)
            for unit, signature, options in ensemble._units(ensemble._step_args(ensemble.commands())):
                found[(unit.cache_name(), str(signature))] = (unit, signature, options)
    return list(found.values())
