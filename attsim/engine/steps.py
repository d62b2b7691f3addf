"""What the compiled mission loop does at one instant, component by component (layer 6).

Sensor samples, the estimators' cycles, the mode manager's checks and the event log, on the banks of
:mod:`attsim.engine.banks`, with the kernels the Python components use
(:mod:`attsim.sensors.kernels`, :mod:`attsim.estimation.kernels`), so both paths give the
same numbers. :mod:`attsim.engine.loop` calls them in the engine's order.
"""

from __future__ import annotations

import math

import numpy as np

from .._core.jit import LOOP_CALLED, LOOP_INLINED, njit
from ..dynamics import qconj, qrotate
from ..environment.table import B_I, P_SRP, R, SUN, lerp1, lerp3, table_cell
from ..estimation.kernels import DIVERGED as FILTER_DIVERGED, mekf_cycle
from ..actuators.kernels import wheel_speed
from .banks import (BOUNDARY_END, BOUNDARY_FAULT, BOUNDARY_SENSOR, BOUNDARY_T, EVENT_FAULT, EVENT_OUTLIER,
                            GYRO, HELD_COLUMN, MAGNETOMETER, REAL_NORMALS_NOMINAL, REAL_NORMALS_TRUE, REAL_OFFSET,
                            REAL_PLAIN, REAL_Q_NOMINAL, REAL_Q_TRUE, REAL_SCALE, REAL_SUN_MATRIX, SUN_SENSOR,
                            VALID_COLUMN)
from ..guidance.kernels import error_angle_deg
from ..control.modes import IN_ECLIPSE, IN_SUNLIGHT, POINTING_BELOW, RATE_ABOVE, RATE_BELOW, TIMEOUT, WHEEL_SPEED_ABOVE
from ..guidance.pointing import reference_now
from .._core.timegrid import grid_time
from ..sensors.faults import faults_at
from ..sensors.kernels import (gyro_measure, gyro_sample, magnetometer_measure, magnetometer_sample,
                               star_tracker_blinded, star_tracker_measure, star_tracker_sample, sun_sensor_any_light,
                               sun_sensor_detect, sun_sensor_measure, sun_sensor_signals, sun_sensor_truth)

__all__ = ["log_event", "log_faults", "next_fault_boundary", "sample_sensor", "estimator_due",
           "estimator_sensors_ready", "estimate", "write_estimator", "mode_due", "mode_check", "law_attitude"]

# _core.jit: what runs every cycle or instant is inlined into the loop, the rest called; neither counts references
_JIT = dict(cache=True, nogil=True, error_model="numpy", **LOOP_INLINED)
_CALLED = dict(cache=True, nogil=True, error_model="numpy", **LOOP_CALLED)


@njit(**_CALLED)
def log_event(buffers, t, kind, what, index, v0, v1, v2):
    """Append the event row ``(t, kind, what, index, v0, v1, v2, 0)`` to the buffers."""
    n = buffers.counts[1]
    if n >= buffers.events.shape[0]:  # never reached: the loop keeps events_per_instant free before each instant
        return
    e = buffers.events[n]
    e[0], e[1], e[2], e[3], e[4], e[5], e[6], e[7] = t, kind, what, index, v0, v1, v2, 0.0
    buffers.counts[1] = n + 1


@njit(**_JIT)
def _keep_output(out, m, width, dropout, stuck, blinded):
    """The sample's output into the sensor's ``out`` row (:meth:`attsim.sensors.base.Sensor.output`): ``m``, the
    held output of a stuck sensor, or NaN without output; dropout over stuck over blinding."""
    if dropout or (blinded and not stuck):
        for i in range(width):
            out[i] = np.nan
        out[VALID_COLUMN] = 0.0
    elif stuck:
        for i in range(width):
            out[i] = out[HELD_COLUMN + i]
        out[VALID_COLUMN] = 0.0 if math.isnan(out[HELD_COLUMN]) else 1.0
    else:
        for i in range(width):
            out[i] = m[i]
            out[HELD_COLUMN + i] = m[i]
        out[VALID_COLUMN] = 1.0


@njit(**_JIT)
def next_fault_boundary(sensors, t):
    """The time of the first fault boundary after ``t`` (infinity when none is left)."""
    times = sensors.boundaries[:, BOUNDARY_T]
    k = np.searchsorted(times, t, side="right")
    return times[k] if k < times.shape[0] else np.inf


@njit(**_JIT)
def log_faults(sensors, t, buffers):
    """Log the fault boundaries at ``t`` (in :func:`attsim.sensors.faults.fault_schedule` order)."""
    b = sensors.boundaries
    for k in range(np.searchsorted(b[:, BOUNDARY_T], t, side="left"), b.shape[0]):
        if b[k, BOUNDARY_T] != t:
            break
        log_event(buffers, t, EVENT_FAULT, int(b[k, BOUNDARY_FAULT]), int(b[k, BOUNDARY_SENSOR]), b[k, BOUNDARY_END],
                  0.0, 0.0)


@njit(**_JIT)
def sample_sensor(sensors, s, t, q, w, env_t, env_v):
    """Take sensor ``s``'s measurement at ``t`` from the true state; returns False when it needs more normals.

    A ``plain`` sensor (every realism setting at its default: mounting,
    scale factor, biases, detectors, no faults) runs the bare models, which
    the mounted ones equal to the bit for it, at their lower cost.
    """
    if sensors.t_last_s[s] == t:  # several readers at one instant share its sample
        return True
    kind = sensors.kind[s]
    need = sensors.draws[s]  # 0 for a noise-free sensor: its block holds zeros and is never used up
    c = sensors.cursor[s]
    if c + need > sensors.normals.shape[1]:
        return False
    n = sensors.normals[s]
    p = sensors.parameters[s]
    out = sensors.output[s]
    r = sensors.realism[s]
    plain = r[REAL_PLAIN] != 0.0
    q_true = (r[REAL_Q_TRUE], r[REAL_Q_TRUE + 1], r[REAL_Q_TRUE + 2], r[REAL_Q_TRUE + 3])
    q_nom = (r[REAL_Q_NOMINAL], r[REAL_Q_NOMINAL + 1], r[REAL_Q_NOMINAL + 2], r[REAL_Q_NOMINAL + 3])
    if plain:
        dropout = stuck = False
        extra = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    else:
        dropout, stuck, extra = faults_at(sensors.faults[s], t)
    k_ = r[REAL_SCALE:REAL_SCALE + 6]
    o = r[REAL_OFFSET:REAL_OFFSET + 6]
    if kind == GYRO:
        # the first sample has no elapsed time: its noise spans one nominal period and the bias has not walked
        first = math.isnan(sensors.t_last_s[s])
        dt = sensors.period_s[s] if first else t - sensors.t_last_s[s]
        if dt > 0.0:
            b = (sensors.bias[s, 0], sensors.bias[s, 1], sensors.bias[s, 2])
            draws = (n[c], n[c + 1], n[c + 2], n[c + 3], n[c + 4], n[c + 5])
            if plain:
                m, b_new = gyro_measure(w, b, dt, p[0], 0.0 if first else p[1], draws, p[2])
            else:
                m, b_new = gyro_sample(w, b, dt, p[0], 0.0 if first else p[1], draws, p[2], q_true, q_nom,
                                       (k_[0], k_[1], k_[2]), (extra[0], extra[1], extra[2]))
            sensors.bias[s, 0], sensors.bias[s, 1], sensors.bias[s, 2] = b_new
            sensors.cursor[s] = c + need
            out[6], out[7], out[8] = w
            _keep_output(out, m, 3, dropout, stuck, False)
    elif kind == MAGNETOMETER:
        k, f = table_cell(env_t, t)
        b_B = qrotate(qconj(q), lerp3(env_v, k, f, B_I))
        if plain:
            m = magnetometer_measure(b_B, (p[1], p[2], p[3]), p[0], (n[c], n[c + 1], n[c + 2]), p[4])
        else:
            m = magnetometer_sample(b_B, (p[1], p[2], p[3]), p[0], (n[c], n[c + 1], n[c + 2]), p[4], q_true, q_nom,
                                    (k_[0], k_[1], k_[2]), (extra[0], extra[1], extra[2]))
        sensors.cursor[s] = c + need
        out[6], out[7], out[8] = b_B
        _keep_output(out, m, 3, dropout, stuck, False)
    elif kind == SUN_SENSOR:
        k, f = table_cell(env_t, t)
        lit = lerp1(env_v, k, f, P_SRP) > 0.0
        s_B = qrotate(qconj(q), lerp3(env_v, k, f, SUN))
        if plain:
            truth = signals = sun_sensor_truth(s_B, lit)
        else:
            truth = sun_sensor_signals(s_B, lit, r[REAL_NORMALS_NOMINAL:REAL_NORMALS_NOMINAL + 18], p[2])
            signals = sun_sensor_signals(s_B, lit, r[REAL_NORMALS_TRUE:REAL_NORMALS_TRUE + 18], p[2])
        if sun_sensor_any_light(signals):
            draws = (n[c], n[c + 1], n[c + 2], n[c + 3], n[c + 4], n[c + 5])
            if plain:
                m = sun_sensor_measure(signals, p[0], draws, p[1])
            else:
                bias = (o[0] + extra[0], o[1] + extra[1], o[2] + extra[2], o[3] + extra[3], o[4] + extra[4],
                        o[5] + extra[5])
                m = sun_sensor_measure(sun_sensor_detect(signals, k_, bias), p[0], draws, p[1])
            sensors.cursor[s] = c + need
        else:
            m = signals
        for i in range(6):
            out[6 + i] = truth[i]
        _keep_output(out, m, 6, dropout, stuck, False)
    else:
        if plain:
            m = star_tracker_measure(q, (p[0], p[1], p[2]), (n[c], n[c + 1], n[c + 2]))
        else:
            m = star_tracker_sample(q, (p[0], p[1], p[2]), (n[c], n[c + 1], n[c + 2]), q_true, q_nom,
                                    (o[0] + extra[0], o[1] + extra[1], o[2] + extra[2]))
        sensors.cursor[s] = c + need
        blinded = False
        if not (math.isnan(p[3]) and math.isnan(p[4])):  # an exclusion cone
            k, f = table_cell(env_t, t)
            blinded = star_tracker_blinded(q, q_true, lerp3(env_v, k, f, SUN), lerp1(env_v, k, f, P_SRP) > 0.0,
                                           lerp3(env_v, k, f, R), p[3], p[4])
        for i in range(4):
            out[6 + i] = q[i]
        _keep_output(out, m, 4, dropout, stuck, blinded)
    sensors.t_last_s[s] = t
    return True


@njit(**_JIT)
def estimator_due(estimators, e, t):
    """True when estimator ``e`` cycles at ``t``."""
    return grid_time(estimators.phase_s[e], estimators.next_k[e], estimators.period_s[e]) == t


@njit(**_JIT)
def _measurement_due(estimators, e, i):
    s = estimators.meas[e, i]
    k = estimators.next_k[e] - estimators.offset[e, i]
    return s >= 0 and k >= 0 and k % estimators.every[e, i] == 0


@njit(**_CALLED)
def estimator_sensors_ready(estimators, e, sensors):
    """False when a sensor estimator ``e`` samples now is short of normal draws (the loop hands over to refill)."""
    s = estimators.gyro[e]
    if sensors.cursor[s] + sensors.draws[s] > sensors.normals.shape[1]:
        return False
    for i in range(3):
        if _measurement_due(estimators, e, i):
            s = estimators.meas[e, i]
            if sensors.cursor[s] + sensors.draws[s] > sensors.normals.shape[1]:
                return False
    return True


@njit(**_CALLED)
def estimate(estimators, e, sensors, t, q, w, env_t, env_v, buffers):
    """Estimator ``e``'s cycle at ``t``: sample its gyro and the measurements due, run :func:`mekf_cycle`.

    A rejected measurement is logged as an outlier event (what = the
    measurement's index in :data:`attsim.estimation.kernels.MEASUREMENTS`, v0 its NIS).
    Returns False when the filter's state stopped being finite (the loop
    then stops; the Python side raises
    :class:`~attsim.errors.EstimatorDivergenceError`).
    """
    g = estimators.gyro[e]
    sample_sensor(sensors, g, t, q, w, env_t, env_v)
    use_st, use_mag, use_sun = _measurement_due(estimators, e, 0), _measurement_due(estimators, e, 1), \
        _measurement_due(estimators, e, 2)
    for i, due in enumerate((use_st, use_mag, use_sun)):
        if due:
            sample_sensor(sensors, estimators.meas[e, i], t, q, w, env_t, env_v)
    w_meas = sensors.output[g, 0:3]
    # views of the sensors' rows, no copies: a measurement that is not due (row -1 when absent) is never read
    st = sensors.output[estimators.meas[e, 0], 0:4]
    mag = sensors.output[estimators.meas[e, 1], 0:3]
    css = sensors.output[estimators.meas[e, 2], 0:6]
    zero = (0.0, 0.0, 0.0)
    r_mag, r_sun = zero, zero
    if (use_mag or use_sun) and env_t.shape[0] > 0:
        k, f = table_cell(env_t, t)
        r_mag, r_sun = lerp3(env_v, k, f, B_I), lerp3(env_v, k, f, SUN)
    p = estimators.parameters[e]
    rejected = mekf_cycle(estimators.q[e], estimators.bias[e], estimators.P[e], estimators.memory[e], t, w_meas,
                          use_st, st, use_mag, mag, r_mag, use_sun, css,
                          sensors.realism[estimators.meas[e, 2], REAL_SUN_MATRIX:REAL_SUN_MATRIX + 18], r_sun, p,
                          estimators.nis[e])
    if rejected == FILTER_DIVERGED:
        return False
    if rejected:
        for i in range(3):
            if estimators.nis[e, i] > p[7] and estimators.memory[e, 5 + i] > 0.0:
                log_event(buffers, t, EVENT_OUTLIER, i, e, estimators.nis[e, i], 0.0, 0.0)
    for i in range(3):  # the last good gyro reading (this one when it has output)
        estimators.w_est[e, i] = estimators.memory[e, 2 + i] - estimators.bias[e, i]
    estimators.next_k[e] += 1
    return True


@njit(**_CALLED)
def write_estimator(row, col, estimators, e, sensors):
    """Estimator ``e``'s telemetry (``schema.ESTIMATOR_SUFFIXES``) into ``row`` from ``col``; returns the next
    column."""
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


@njit(**_JIT)
def mode_due(modes, t):
    """True when the mode manager checks its transitions at ``t`` (never without a manager)."""
    return modes.period_s.shape[0] > 0 and grid_time(modes.phase_s[0], modes.next_k[0], modes.period_s[0]) == t


@njit(**_JIT)
def law_attitude(controllers, c, sensors, estimators, q):
    """The attitude controller ``c`` acts on: its estimator's (``sources``), its attitude sensor's latest sample
    (``roles``; NaN before the first), or the true ``q`` (:meth:`attsim.QuaternionPD.attitude_seen`)."""
    e = controllers.sources[c, 0]
    if e >= 0:
        eq = estimators.q[e]
        return (eq[0], eq[1], eq[2], eq[3])
    s = controllers.roles[c, 0]
    if s >= 0:
        o = sensors.output[s]
        return (o[0], o[1], o[2], o[3])
    return q


@njit(**_CALLED)
def _holds(modes, k, t, q, w, wheels, sensors, estimators, controllers, env_t, env_v):
    kind, value = modes.tr_kind[k], modes.tr_params[k, 0]
    if kind == POINTING_BELOW:  # tr_source: the attitude law watched
        c = modes.tr_source[k]
        seen = law_attitude(controllers, c, sensors, estimators, q)
        if math.isnan(seen[0]):
            return False
        q_ref, _, _ = reference_now(controllers.target_kind[c], controllers.target[c], t, env_t, env_v)
        return error_angle_deg(seen, q_ref) < value
    if kind == RATE_BELOW or kind == RATE_ABOVE:
        e = modes.tr_source[k]
        x, y, z = (w[0], w[1], w[2]) if e < 0 else (estimators.w_est[e, 0], estimators.w_est[e, 1],
                                                    estimators.w_est[e, 2])
        norm = math.sqrt(x * x + y * y + z * z)
        return norm < value if kind == RATE_BELOW else norm > value
    if kind == IN_ECLIPSE or kind == IN_SUNLIGHT:
        c, f = table_cell(env_t, t)
        lit = lerp1(env_v, c, f, P_SRP) > 0.0
        return (not lit) if kind == IN_ECLIPSE else lit
    if kind == WHEEL_SPEED_ABOVE:
        for j in range(wheels.axis.shape[0]):
            if abs(wheel_speed(wheels, j, wheels.h_Nms[j], w)) > value * wheels.max_speed_rad_s[j]:
                return True
        return False
    if kind == TIMEOUT:
        return t - modes.state[1] >= value
    return t >= value  # attsim.modes.AT_TIME


@njit(**_CALLED)
def mode_check(modes, t, q, w, wheels, sensors, estimators, controllers, env_t, env_v):
    """The manager's check at ``t`` (:meth:`attsim.modes.ModeManager.bring_up_to_date`): the transition that
    fires, or -1. Transitions are tried in order; a condition must hold for its dwell time."""
    modes.next_k[0] += 1
    current = int(modes.state[0])
    for k in range(modes.tr_kind.shape[0]):
        if (modes.tr_from[k] >= 0 and modes.tr_from[k] != current) or modes.tr_to[k] == current:
            modes.since[k] = np.nan
            continue
        if _holds(modes, k, t, q, w, wheels, sensors, estimators, controllers, env_t, env_v):
            if math.isnan(modes.since[k]):
                modes.since[k] = t
            if t - modes.since[k] >= modes.tr_params[k, 1]:
                return k
        else:
            modes.since[k] = np.nan
    return -1
