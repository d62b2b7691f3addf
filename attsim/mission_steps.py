"""What the compiled mission loop does at one instant, component by component (layer 6).

Sensor samples, the estimators' cycles, the mode manager's checks and the event log, on the banks of
:mod:`attsim.mission_banks`, with the kernels the Python components use
(:mod:`attsim.sensor_models`, :mod:`attsim.mekf`), so both paths give the
same numbers. :mod:`attsim.mission_loop` calls them in the engine's order.
"""

from __future__ import annotations

import math

import numpy as np

from ._jit import LOOP_CALLED, LOOP_INLINED, njit
from .dynamics import qconj, qrotate
from .environment.table import B_I, P_SRP, SUN, lerp1, lerp3, table_cell
from .mekf import mekf_cycle
from .actuator_models import wheel_speed
from .mission_banks import EVENT_OUTLIER, GYRO, MAGNETOMETER, SUN_SENSOR
from .guidance_kernels import error_angle_deg
from .modes import IN_ECLIPSE, IN_SUNLIGHT, POINTING_BELOW, RATE_ABOVE, RATE_BELOW, TIMEOUT, WHEEL_SPEED_ABOVE
from .pointing import reference_now
from .timegrid import grid_time
from .sensor_models import (gyro_measure, magnetometer_measure, star_tracker_measure, sun_sensor_any_light,
                            sun_sensor_measure, sun_sensor_truth)

__all__ = ["log_event", "sample_sensor", "estimator_due", "estimator_sensors_ready", "estimate", "write_estimator",
           "mode_due", "mode_check", "law_attitude"]

# attsim._jit: what runs every cycle or instant is inlined into the loop, the rest called; neither counts references
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
def sample_sensor(sensors, s, t, q, w, env_t, env_v):
    """Take sensor ``s``'s measurement at ``t`` from the true state; returns False when it needs more normals."""
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
    if kind == GYRO:
        # the first sample has no elapsed time: its noise spans one nominal period and the bias has not walked
        first = math.isnan(sensors.t_last_s[s])
        dt = sensors.period_s[s] if first else t - sensors.t_last_s[s]
        if dt > 0.0:
            b = (sensors.bias[s, 0], sensors.bias[s, 1], sensors.bias[s, 2])
            m, b_new = gyro_measure(w, b, dt, p[0], 0.0 if first else p[1],
                                    (n[c], n[c + 1], n[c + 2], n[c + 3], n[c + 4], n[c + 5]), p[2])
            sensors.bias[s, 0], sensors.bias[s, 1], sensors.bias[s, 2] = b_new
            sensors.cursor[s] = c + need
            out[0], out[1], out[2] = m
            out[6], out[7], out[8] = w
    elif kind == MAGNETOMETER:
        k, f = table_cell(env_t, t)
        b_B = qrotate(qconj(q), lerp3(env_v, k, f, B_I))
        m = magnetometer_measure(b_B, (p[1], p[2], p[3]), p[0], (n[c], n[c + 1], n[c + 2]), p[4])
        sensors.cursor[s] = c + need
        out[0], out[1], out[2] = m
        out[6], out[7], out[8] = b_B
    elif kind == SUN_SENSOR:
        k, f = table_cell(env_t, t)
        truth = sun_sensor_truth(qrotate(qconj(q), lerp3(env_v, k, f, SUN)), lerp1(env_v, k, f, P_SRP) > 0.0)
        if sun_sensor_any_light(truth):
            m = sun_sensor_measure(truth, p[0], (n[c], n[c + 1], n[c + 2], n[c + 3], n[c + 4], n[c + 5]), p[1])
            sensors.cursor[s] = c + need
        else:
            m = truth
        for i in range(6):
            out[i] = m[i]
            out[6 + i] = truth[i]
    else:
        m = star_tracker_measure(q, (p[0], p[1], p[2]), (n[c], n[c + 1], n[c + 2]))
        sensors.cursor[s] = c + need
        for i in range(4):
            out[i] = m[i]
            out[6 + i] = q[i]
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
    measurement's index in :data:`attsim.mekf.MEASUREMENTS`, v0 its NIS).
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
                          use_st, st, use_mag, mag, r_mag, use_sun, css, r_sun, p, estimators.nis[e])
    if rejected:
        for i in range(3):
            if estimators.nis[e, i] > p[7] and estimators.memory[e, 5 + i] > 0.0:
                log_event(buffers, t, EVENT_OUTLIER, i, e, estimators.nis[e, i], 0.0, 0.0)
    for i in range(3):
        estimators.w_est[e, i] = w_meas[i] - estimators.bias[e, i]
    estimators.next_k[e] += 1


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
        row[col + 16 + i] = sensors.bias[estimators.gyro[e], i]
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
