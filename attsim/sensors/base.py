"""What every sensor does: sampling, its mounting in the body, faults, and "no output".

A sensor either runs its own SimPy process (sampling at ``phase_s + k /
rate_hz``) or, when a controller or an estimator uses it, is sampled by that
reader inside its cycle, so a cycle's measurement is taken at the cycle's own
time and no ordering of same-time events matters. Each sample logs both the
truth and the measurement to telemetry (``<name>_true_*`` and ``<name>_*``;
NaN before the first sample).

**Mounting** (the built-ins): ``q_BS`` is the nominal sensor-to-body
quaternion (scalar first, rotates sensor-frame vectors into body axes;
default identity) and ``misalignment_rad`` a small rotation vector (sensor
axes): the true mounting is ``q_BS ⊗ exp(δ)``. The sensor measures in its
true frame and reports in body axes through the nominal ``q_BS``, what
calibrated flight software does, so misalignment, scale factor and bias show
as errors against the truth columns (truth in body axes). See
:mod:`attsim.sensors.kernels`.

**No output**, defined once: a sample without an output (a star tracker
blinded inside an exclusion cone, a ``dropout`` fault, a ``stuck`` sensor
that never had a good output) has NaN measurement columns and
``<name>_valid`` = 0; a sensor that can lose its output (an exclusion cone,
a ``dropout`` or ``stuck`` fault) writes that column (1 with an output, 0
without, 0 before the first sample). Readers: the MEKF skips the update
(its NIS stays NaN; a gyro without output propagates on its last good
reading), a controller whose sensor gave no output decides nothing that
cycle (its actuators hold their commands). A sun sensor in eclipse is not
"no output": its detectors read a valid zero.
"""

from __future__ import annotations

import math

import numpy as np

from .._core.validate import finite_array, non_negative_scalar, positive_scalar, unit_quaternion, vector3
from ..engine.component import At, Component, periodic
from ..dynamics import qexp, qmul
from ..errors import InputError
from .faults import checked_faults, fault_fields, fault_schedule, fault_table, faults_at
from .loop import (HELD_COLUMN, PART, REAL_PLAIN, REAL_Q_NOMINAL, REAL_Q_TRUE, REAL_REPORTS_VALID, TRUTH_COLUMN,
                   VALID_COLUMN)

__all__ = ["Sensor", "IDENTITY", "MAX_MISALIGNMENT_RAD", "SAMPLES_PER_DRAW", "mounting", "scale_factor",
           "FAULT_PRIORITY"]

IDENTITY = (1.0, 0.0, 0.0, 0.0)
# a misalignment is a small error of a mounting; a larger turn is a different mounting, given by q_BS
MAX_MISALIGNMENT_RAD = 0.1
SAMPLES_PER_DRAW = 256  # samples' worth of normals a sensor draws from its generator at once
# SimPy priority of the fault events: after the processes' start at t = 0 (URGENT, 0), before everything else
# at a time (NORMAL, 1); each boundary a little later than the one before it (sensors.faults.fault_schedule)
FAULT_PRIORITY = 0.25
_ZEROS = (0.0,) * 6  # the draws of a noise-free sample, and the bias of no fault


def mounting(q_BS, misalignment_rad) -> tuple[tuple, tuple]:
    """``(q_BS, q_BS_true)`` as tuples: the nominal mounting and the true one, ``q_BS ⊗ exp(δ)``."""
    q = unit_quaternion(q_BS, "q_BS")
    delta = vector3(misalignment_rad, "misalignment_rad")
    angle = float(np.linalg.norm(delta))
    if angle > MAX_MISALIGNMENT_RAD:
        raise InputError("misalignment_rad", f"must be a small rotation (|δ| <= {MAX_MISALIGNMENT_RAD} rad); give a "
                         "larger turn as the mounting q_BS", f"|δ| = {angle:.6g} rad")
    nominal = tuple(float(v) for v in q)
    # the kernels' Python twins: set-up arithmetic, once per sensor, must not start numba's compiler
    return nominal, qmul.py_func(nominal, qexp.py_func(tuple(float(v) for v in delta)))


def scale_factor(value, field: str, size: int) -> tuple:
    """Scale factor errors ``k`` (the gain is ``1 + k``): one for all axes or ``size``, each in (-1, 1).

    Real ones are parts per million to a few percent; a gain of zero, below
    or of two and more is not a sensor's error but a wrong sensor (and a
    huge one turned finite readings into meaningless telemetry).
    """
    array = finite_array(value, field)
    if array.shape not in ((), (1,), (size,)):
        raise InputError(field, f"must be one number or {size} (one per {'axis' if size == 3 else 'detector'})",
                         f"got shape {array.shape}")
    array = np.broadcast_to(array, (size,))
    if np.any(array <= -1.0) or np.any(array >= 1.0):
        raise InputError(field, "must be > -1 and < 1 on every axis (the sensor's gain 1 + k is positive and below 2)",
                         f"got {value!r}")
    return tuple(float(v) for v in array)


class Sensor(Component):
    """Base of the sensors: rate, phase, the latest sample, telemetry, mounting, faults, validity.

    Subclasses define ``truth(sc)`` (what an ideal sensor would read) and
    ``measure(truth)`` (the corrupted reading), and ``axes`` (names of the
    output components); the built-ins override :meth:`sample` and call
    :meth:`configure` for their mounting and faults.

    Parameters
    ----------
    name : str
        Its name: the prefix of its telemetry columns.
    rate_hz : float
        Sampling rate, Hz (> 0).
    phase_s : float, optional
        Time of the first sample, s (default 0).
    """

    axes: tuple[str, ...] = ("x", "y", "z")
    # defaults of a sensor without mounting or faults (a user's subclass); the built-ins set their own
    q_BS = q_BS_true = IDENTITY
    misalignment_rad = (0.0, 0.0, 0.0)
    faults: tuple = ()
    _fault_table = None
    _simple = True  # a user's subclass: no faults, every sample is its measurement (start() decides for a run)
    plain = True  # every realism setting at its default: the bare models run (the same numbers, at less cost)
    valid = True  # whether the latest sample gave an output
    # per-run caches, set by start(); these defaults let measure() and normals() work before a run too
    _draws = None
    _drawn, _next_draw = (), 0
    _measure_entry = None
    # the compiled mission: the sensors' part, and the unit that samples this class (None: Python path only)
    loop_part = PART
    sample_unit = None

    def __init__(self, name: str, rate_hz: float, phase_s: float = 0.0):
        self.name = name
        self.rate_hz = positive_scalar(rate_hz, "rate_hz")
        self.period_s = 1.0 / self.rate_hz
        self.phase_s = non_negative_scalar(phase_s, "phase_s")
        self.readers = []  # the controllers and estimators that sample this sensor in their own cycles
        self.latest = None
        self._latest_truth = None

    def configure(self, q_BS, misalignment_rad, faults, bias_size: int, bias_rule: str, bias_scale: float = 1.0):
        """Set the mounting and the faults (each bias of ``bias_size`` values, times ``bias_scale`` into SI)."""
        self.q_BS, self.q_BS_true = mounting(q_BS, misalignment_rad)
        self.misalignment_rad = tuple(float(v) for v in misalignment_rad)
        self.faults = checked_faults(faults, bias_size, bias_rule)
        self._fault_table = fault_table(self.faults, bias_scale) if self.faults else None
        self.plain = self.q_BS == IDENTITY and self.q_BS_true == IDENTITY and not self.faults

    def plain_unless(self, *settings) -> None:
        """Not :attr:`plain` when any of the sensor's own ``settings`` (scale factors, biases) is not zero."""
        self.plain = self.plain and not any(any(v != 0.0 for v in setting) for setting in settings)

    @property
    def reports_validity(self) -> bool:
        """True when the sensor can give no output, so it writes ``<name>_valid``."""
        return any(f.kind != "bias_jump" for f in self.faults)

    def start(self, sc):
        self.rng = sc.rng()
        nan = np.full(len(self.axes), np.nan)
        self.latest, self._latest_truth = nan, nan
        self._held = nan  # the last good output, which a stuck sensor repeats
        self.valid, self._valid_value = True, 0.0
        self._draws = self.draws  # fixed for the run: read once, not at every sample
        self._drawn, self._next_draw = [], 0
        self._t_sample_s = None
        # no fault can act and every sample has an output: the sample is the measurement, nothing else to decide
        self._simple = self._fault_table is None and not self.reports_validity
        self._measure_entry = None  # the measurement kernel for this run's argument types, made at the first sample

    @property
    def draws(self) -> int:
        """Standard normal draws per sample: 0 when the sensor is noise-free (its generator is then never used)."""
        return 0

    def normals(self) -> tuple:
        """The next sample's standard normal draws from the sensor's own generator (zeros when noise-free).

        Drawn :data:`SAMPLES_PER_DRAW` samples at a time: a generator's
        normals are the same sequence however many are drawn per call (the
        compiled loop draws in blocks too), and one call per sample would
        cost more than the sample.
        """
        n = self._draws
        if n is None:
            n = self._draws = self.draws
        if not n:
            return _ZEROS
        k = self._next_draw
        if k == len(self._drawn):
            self._drawn, k = self.rng.standard_normal(n * SAMPLES_PER_DRAW).tolist(), 0
        self._next_draw = k + n
        return tuple(self._drawn[k:k + n])

    def faults_now(self, t: float) -> tuple:
        """``(dropout, stuck, bias)`` of the faults acting at ``t`` (:func:`~attsim.sensors.faults.faults_at`)."""
        table = self._fault_table
        if table is None:
            return False, False, _ZEROS
        return faults_at(table, t)

    def output(self, measured, dropout: bool = False, stuck: bool = False, blinded: bool = False) -> np.ndarray:
        """Keep and return the sample's output: ``measured``, the held output (stuck) or NaN (no output).

        Dropout wins over stuck, stuck over blinding (frozen electronics
        report whatever they hold).
        """
        if dropout or (blinded and not stuck):
            out, valid = np.full(len(self.axes), np.nan), False
        elif stuck:
            out = self._held.copy()
            valid = not math.isnan(out[0])
        else:
            out, valid = np.array(measured), True
            self._held = out
        self.latest, self.valid, self._valid_value = out, valid, 1.0 if valid else 0.0
        return out

    def shares_sample(self, sc) -> bool:
        """True when the sensor was sampled at this instant already (its readers then share that sample); else
        marks it sampled now."""
        t = sc.env._now
        if self._t_sample_s == t:
            return True
        self._t_sample_s = t
        return False

    def sample(self, sc) -> np.ndarray:
        """Take a measurement now (advances the plant), remember and return it.

        ``truth(sc)`` and ``measure(truth)`` work on tuples (the compiled
        models' arguments); the measurement is kept as an array, what readers
        get; the truth only goes to telemetry, so it stays a tuple. Several
        readers at one instant share its sample. A built-in with faults or
        without output at times measures with the faults' extra bias
        (``measure(truth, extra_bias)``) and keeps its output by
        :meth:`output`.
        """
        if self.shares_sample(sc):
            return self.latest
        truth = self.truth(sc)
        self._latest_truth = truth
        if self._simple:  # a user's sensor, or a built-in without faults: the sample is the measurement
            self.latest = np.array(self.measure(truth))
            return self.latest
        dropout, stuck, extra = self.faults_now(sc.env._now)
        measured = self.measure(truth, (extra[0], extra[1], extra[2]))
        return self.output(measured, dropout, stuck, self.blinded(sc, truth))

    def blinded(self, sc, truth) -> bool:
        """True when the sensor cannot measure now (the star tracker's exclusion cones); none by default."""
        return False

    def add_reader(self, reader) -> None:
        """``reader`` (a controller or an estimator) samples this sensor in its cycles, so it stops running alone.

        A sensor may have several readers (a magnetometer read by a B-dot law,
        a pointing law and an estimator): it is sampled once at each instant
        any of them reads it, and every reader at that instant gets that sample.
        """
        if reader not in self.readers:
            self.readers.append(reader)

    def processes(self, env, sc):
        faults = [self._fault_process(env, sc)] if self.faults else []
        if self.readers:
            return faults
        return [periodic(env, self.period_s, self.phase_s, sc.mission.duration_s, lambda: self.sample(sc)), *faults]

    def _fault_process(self, env, sc):
        """Log this sensor's fault starts and ends at their times, in the mission-wide order of
        :func:`~attsim.sensors.faults.fault_schedule` (the compiled loop logs the same list). Like every event,
        the plant is advanced to the time first, so the log stays in time order."""
        sensors = [c for c in sc.mission.components if isinstance(c, Sensor)]
        me = sensors.index(self)
        schedule = fault_schedule(sensors, sc.mission.duration_s)
        step = 0.5 / (len(schedule) + 1)  # every boundary between URGENT and NORMAL, in the schedule's order
        for rank, (t, s, k, end) in enumerate(schedule):
            if s != me:
                continue
            yield At(env, t, FAULT_PRIORITY + step * rank)
            fault = self.faults[k]
            sc.event("fault_end" if end else "fault", **fault_fields(self, k, fault))

    def columns(self):
        valid = [f"{self.name}_valid"] if self.reports_validity else []
        return [f"{self.name}_{a}" for a in self.axes] + [f"{self.name}_true_{a}" for a in self.axes] + valid

    def values(self, sc):
        latest, truth = self.latest, self._latest_truth  # arrays or sequences (a user's sensor may keep either)
        valid = [self._valid_value] if self.reports_validity else []
        return [*(latest.tolist() if type(latest) is np.ndarray else latest),
                *(truth.tolist() if type(truth) is np.ndarray else truth), *valid]

    # --- the compiled mission (attsim.sensors.loop) ---------------------------------------------------------

    def loop_ready(self, mission) -> bool:
        """True when the compiled unit can take this sensor's samples in ``mission`` (a subclass may need more)."""
        return True

    def fill_loop_row(self, parameters, bias, realism, faults) -> None:
        """Fill this sensor's row of the bank: what every sensor shares (mounting, faults, validity); a
        subclass adds its parameters, biases and scale factors."""
        realism[REAL_PLAIN] = 1.0 if self.plain else 0.0
        realism[REAL_Q_TRUE:REAL_Q_TRUE + 4], realism[REAL_Q_NOMINAL:REAL_Q_NOMINAL + 4] = self.q_BS_true, self.q_BS
        realism[REAL_REPORTS_VALID] = 1.0 if self.reports_validity else 0.0
        if self.faults:
            faults[:len(self.faults)] = self._fault_table

    def take_loop_row(self, output, bias) -> None:
        """End as the Python path leaves the sensor: the latest sample, its truth, the held output, validity."""
        axes = len(self.axes)
        self.latest, self._latest_truth = output[:axes].copy(), output[TRUTH_COLUMN:TRUTH_COLUMN + axes].copy()
        self._held = output[HELD_COLUMN:HELD_COLUMN + axes].copy()
        self._valid_value = float(output[VALID_COLUMN])
        self.valid = self._valid_value != 0.0
