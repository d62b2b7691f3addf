"""The estimators' part of the compiled mission: the MEKF bank, its cycle unit, its rows and events.

One :class:`EstimatorBank` row per MEKF (:mod:`attsim.estimation.kernels`).
Its cycle (:func:`mekf_unit`, on the engine's clock at its gyro's times)
samples its gyro and the measurements due, runs
:func:`~attsim.estimation.kernels.mekf_cycle` — the kernel the Python
object runs — and logs rejected measurements as outliers. A filter whose
state stopped being finite faults its unit; the engine then raises the
object's :meth:`~attsim.estimation.mekf.MEKF.diverged` error.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .._core.events import log_event
from .._core.jit import LOOP_INLINED, njit
from .._core.units import Unit, deref
from ..dynamics import qrotate
from ..environment.table import B_I, SUN, lerp3, table_cell
from ..sensors.loop import REAL_Q_NOMINAL, REAL_SUN_MATRIX, sample
from .kernels import DIVERGED as FILTER_DIVERGED
from .kernels import MEASUREMENTS, MEMORY_SIZE, P_GATE, PARAMETERS, mekf_cycle

_JIT = dict(cache=True, nogil=True, error_model="numpy", **LOOP_INLINED)  # inlined in the units

__all__ = ["EstimatorBank", "PART", "EVENT_OUTLIER", "ESTIMATOR_DIVERGED"]

# the estimators' event: (t, EVENT_OUTLIER, measurement index in MEASUREMENTS, estimator row, NIS, ...)
EVENT_OUTLIER = 30
# what the cycle unit returns when the filter's state stopped being finite
ESTIMATOR_DIVERGED = 31


class EstimatorBank(NamedTuple):
    """One row per MEKF, cycling with its ``gyro`` (a sensor row) and sampling each measurement sensor
    ``meas[e, i]`` (star tracker, magnetometer, sun sensor; -1 none) at cycles ``offset + j every`` (``cycle``
    counts its cycles). ``parameters`` in :data:`~attsim.estimation.kernels.PARAMETERS` order; the state ``q``,
    ``bias``, ``P``, the cycle ``memory`` (``kernels.new_memory``), the last cycle's ``nis`` and the rate estimate
    ``w_est`` (the last good gyro reading minus bias) are updated in place."""

    cycle: np.ndarray
    gyro: np.ndarray
    meas: np.ndarray
    every: np.ndarray
    offset: np.ndarray
    parameters: np.ndarray
    q: np.ndarray
    bias: np.ndarray
    P: np.ndarray
    memory: np.ndarray
    nis: np.ndarray
    w_est: np.ndarray


@njit(**_JIT)
def _measurement_due(estimators, e, i):
    s = estimators.meas[e, i]
    k = estimators.cycle[e] - estimators.offset[e, i]
    return s >= 0 and k >= 0 and k % estimators.every[e, i] == 0


def mekf_unit(pw, samplers, t, e):
    """Estimator ``e``'s cycle at ``t``: sample its gyro and the measurements due, run the filter.

    A rejected measurement is logged as an outlier event (what: the
    measurement's index in :data:`~attsim.estimation.kernels.MEASUREMENTS`,
    v0 its NIS). Returns ``ESTIMATOR_DIVERGED`` when the filter's state
    stopped being finite.
    """
    world = deref(pw)
    estimators, sensors = world.estimators, world.sensors
    g = estimators.gyro[e]
    sample(samplers, pw, t, g)
    use_st, use_mag, use_sun = _measurement_due(estimators, e, 0), _measurement_due(estimators, e, 1), \
        _measurement_due(estimators, e, 2)
    for i, due in enumerate((use_st, use_mag, use_sun)):
        if due:
            s = estimators.meas[e, i]
            sample(samplers, pw, t, s)
    w_meas = sensors.output[g, 0:3]
    # views of the sensors' rows, no copies: a measurement that is not due (row -1 when absent) is never read
    st = sensors.output[estimators.meas[e, 0], 0:4]
    mag = sensors.output[estimators.meas[e, 1], 0:3]
    css = sensors.output[estimators.meas[e, 2], 0:6]
    zero = (0.0, 0.0, 0.0)
    r_mag, r_sun = zero, zero
    env = world.environment
    if (use_mag or use_sun) and env.env_t.shape[0] > 0:
        k, f = table_cell(env.env_t, t)
        r_mag, r_sun = lerp3(env.env_v, k, f, B_I), lerp3(env.env_v, k, f, SUN)
    p = estimators.parameters[e]
    rejected = mekf_cycle(estimators.q[e], estimators.bias[e], estimators.P[e], estimators.memory[e], t, w_meas,
                          use_st, st, use_mag, mag, r_mag, use_sun, css,
                          sensors.realism[estimators.meas[e, 2], REAL_SUN_MATRIX:REAL_SUN_MATRIX + 18], r_sun, p,
                          estimators.nis[e])
    if rejected == FILTER_DIVERGED:
        return ESTIMATOR_DIVERGED
    if rejected:
        for i in range(3):
            if estimators.nis[e, i] > p[P_GATE] and estimators.memory[e, 5 + i] > 0.0:
                log_event(world.buffers, t, EVENT_OUTLIER, i, e, estimators.nis[e, i], 0.0, 0.0)
    for i in range(3):  # the last good gyro reading (this one when it has output)
        estimators.w_est[e, i] = estimators.memory[e, 2 + i] - estimators.bias[e, i]
    estimators.cycle[e] += 1
    return 0


def write_estimator(pw, t, e, col):
    """Estimator ``e``'s telemetry (``schema.ESTIMATOR_SUFFIXES``) into the row being written from ``col``;
    returns the next column."""
    world = deref(pw)
    estimators, sensors = world.estimators, world.sensors
    row = world.buffers.rows[world.buffers.counts[0]]
    for i in range(4):
        row[col + i] = estimators.q[e, i]
    for i in range(3):
        row[col + 4 + i] = estimators.bias[e, i]
        row[col + 7 + i] = 3.0 * math.sqrt(estimators.P[e, i, i])
        row[col + 10 + i] = 3.0 * math.sqrt(estimators.P[e, 3 + i, 3 + i])
        row[col + 13 + i] = estimators.nis[e, i]
    g = estimators.gyro[e]
    a = sensors.realism[g, REAL_Q_NOMINAL:REAL_Q_NOMINAL + 4]  # the gyro's bias in body axes through its nominal
    b = qrotate((a[0], a[1], a[2], a[3]), (sensors.bias[g, 0], sensors.bias[g, 1], sensors.bias[g, 2]))  # mounting
    row[col + 16], row[col + 17], row[col + 18] = b
    return col + 19


MEKF_CYCLE = Unit(mekf_unit, "mekf_unit", {})
WRITE_ESTIMATOR = Unit(write_estimator, "write_estimator", {})


class EstimatorPart:
    """The estimators in the compiled mission (the protocol: :class:`attsim.engine.component.LoopPart`)."""

    slot = "estimators"
    bank_type = EstimatorBank

    def compiles(self, estimator, mission) -> bool:
        return True

    def empty(self) -> EstimatorBank:
        return self.build([], None)

    def schedule(self, estimators, build):
        """Each filter's cycle on the clock, at its gyro's times, drawing from its sensors' noise."""
        clock = [build.clock_entry("estimate", e, MEKF_CYCLE, build.row(e),
                                   [e.gyro] + [s for s in e.measurement_sensors if s is not None])
                 for e in estimators]
        return clock, []

    def events_per_instant(self, estimators, build) -> int:
        return 3 * len(estimators)

    def build(self, estimators, build) -> EstimatorBank:
        n = len(estimators)
        bank = EstimatorBank(
            cycle=np.zeros(n, dtype=np.int64), gyro=np.array([build.row(e.gyro) for e in estimators], dtype=np.int64),
            meas=np.full((n, 3), -1, dtype=np.int64), every=np.ones((n, 3), dtype=np.int64),
            offset=np.zeros((n, 3), dtype=np.int64), parameters=np.zeros((n, len(PARAMETERS))), q=np.zeros((n, 4)),
            bias=np.zeros((n, 3)), P=np.zeros((n, 6, 6)), memory=np.zeros((n, MEMORY_SIZE)),
            nis=np.full((n, 3), np.nan), w_est=np.full((n, 3), np.nan))
        for e, estimator in enumerate(estimators):  # the state as start() left it: the same start as the Python path
            for i, (sensor, (every, offset)) in enumerate(zip(estimator.measurement_sensors, estimator.grid)):
                if sensor is not None:
                    bank.meas[e, i], bank.every[e, i], bank.offset[e, i] = build.row(sensor), every, offset
            bank.parameters[e], bank.q[e], bank.bias[e] = estimator.parameters, estimator.q, estimator.bias_rad_s
            bank.P[e], bank.memory[e] = estimator.P, estimator.memory
        return bank

    def units(self) -> list:
        """The filter's cycle and writer, each with the kind of its signature and its options."""
        return [(MEKF_CYCLE, "at_time", {}), (WRITE_ESTIMATOR, "write", {})]

    def writer(self, estimator, build):
        return WRITE_ESTIMATOR, build.row(estimator)

    def hand_back(self, bank: EstimatorBank, estimators, build) -> None:
        """Leave the filters as the Python path does: state, covariance, cycle memory, NIS, rate estimate."""
        for e, estimator in enumerate(estimators):
            estimator.q[:], estimator.bias_rad_s[:], estimator.P[:] = bank.q[e], bank.bias[e], bank.P[e]
            estimator.memory[:], estimator.nis[:], estimator.w_est[:] = bank.memory[e], bank.nis[e], bank.w_est[e]

    def event(self, recorder, t: float, kind: int, what: int, index: int, values, build) -> bool:
        if kind != EVENT_OUTLIER:
            return False
        recorder.event(t, "outlier", estimator=build.components(self)[index].name, measurement=MEASUREMENTS[what],
                       nis=float(values[0]))
        return True

    def fault(self, bank, estimators, row: int, t: float, build) -> Exception | None:
        """The error of a filter whose cycle faulted (its state stopped being finite)."""
        return estimators[row].diverged(t)


PART = EstimatorPart()
