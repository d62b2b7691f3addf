"""Compiled measurement models of the built-in sensors.

Each model turns the truth and a set of standard normal draws into a
measurement, on plain tuples in SI. The Python sensors (:mod:`attsim.sensors`)
draw the normals from their own generator and call these kernels; the
compiled mission loop feeds the same draws in the same order, so both paths
give the same numbers. Noise models: Markley & Crassidis, *Fundamentals of
Spacecraft Attitude Determination and Control* (2014), secs. 4.7 and 6.1.

Mounting (the ``*_sample`` kernels): a sensor sits in the body at the true
sensor-to-body rotation ``q_BS_true = q_BS ⊗ exp(δ)``, the nominal ``q_BS``
turned by the small misalignment ``δ`` (sensor axes). The physical sensor
measures in its true frame, with its scale factor error ``k`` (the gain
``1 + k`` per axis or detector) and its biases, and flight software, which
knows only the nominal mounting, reports the output in body axes through
``q_BS``. With the defaults (``q_BS = 1``, ``δ = 0``, ``k = 0``) every step
is exact in floating point, so the numbers are those of the bare models.
"""

from __future__ import annotations

import math

from .._core.jit import njit
from ..constants import R_EARTH_M
from ..dynamics import qconj, qexp, qmul, qrotate
from ..environment.table import B_I, R, lerp3, table_cell

__all__ = ["quantize", "gyro_measure", "field_body", "magnetometer_measure", "star_tracker_measure", "sun_sensor_truth",
           "sun_sensor_measure", "SUN_SENSOR_NORMALS", "gyro_sample", "magnetometer_sample", "star_tracker_sample",
           "star_tracker_blinded", "sun_sensor_signals", "sun_sensor_detect", "angle_between", "BORESIGHT",
           "nadir_body", "horizon_measure", "horizon_sample"]

_JIT = dict(cache=True, nogil=True, error_model="numpy")

# outward normals of the six coarse sun sensors: +x -x +y -y +z -z
SUN_SENSOR_NORMALS = ((1.0, 0.0, 0.0), (-1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, -1.0, 0.0),
                      (0.0, 0.0, 1.0), (0.0, 0.0, -1.0))
# a star tracker's boresight, sensor axes (as in JAXA's S2E and most trackers' data sheets)
BORESIGHT = (0.0, 0.0, 1.0)


@njit(**_JIT)
def quantize(value, step):
    """``value`` rounded to a multiple of ``step`` (half to even); unchanged for ``step = 0``."""
    if step == 0.0:
        return value
    return round(value / step) * step


@njit(**_JIT)
def field_body(q, env_t, env_v, t):
    """``B_B = R_IBᵀ B_I(t)`` (T): the tabulated inertial field at ``t``, interpolated linearly, in body axes."""
    k, f = table_cell(env_t, t)
    return qrotate(qconj(q), lerp3(env_v, k, f, B_I))


@njit(**_JIT)
def magnetometer_measure(b_B, bias_T, noise_T, normals, quantization_T):
    """``B_m = Rᵀ B_I + b + σ n``, each axis quantised (T)."""
    return (quantize(b_B[0] + bias_T[0] + noise_T * normals[0], quantization_T),
            quantize(b_B[1] + bias_T[1] + noise_T * normals[1], quantization_T),
            quantize(b_B[2] + bias_T[2] + noise_T * normals[2], quantization_T))


@njit(**_JIT)
def star_tracker_measure(q_true, sigma_rad, normals):
    """``q_m = q ⊗ exp(δθ)`` with ``δθ_i = σ_i n_i`` about the body axes, scalar part >= 0."""
    q = qmul(q_true, qexp((sigma_rad[0] * normals[0], sigma_rad[1] * normals[1], sigma_rad[2] * normals[2])))
    if q[0] < 0.0:
        return (-q[0], -q[1], -q[2], -q[3])
    return q


@njit(**_JIT)
def sun_sensor_truth(s_B, lit):
    """The six cosine detectors' ideal outputs ``max(0, n·ŝ_B)``; all zero when not ``lit``."""
    if not lit:
        return (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    return (max(0.0, s_B[0]), max(0.0, -s_B[0]), max(0.0, s_B[1]), max(0.0, -s_B[1]), max(0.0, s_B[2]),
            max(0.0, -s_B[2]))


@njit(**_JIT)
def sun_sensor_any_light(truth):
    """True when any detector sees the Sun (only then is noise drawn)."""
    return (truth[0] != 0.0 or truth[1] != 0.0 or truth[2] != 0.0
            or truth[3] != 0.0 or truth[4] != 0.0 or truth[5] != 0.0)


@njit(**_JIT)
def sun_sensor_measure(truth, noise, normals, quantization):
    """``max(0, truth + σ n)`` per detector, quantised (fraction of full scale)."""
    return (quantize(max(0.0, truth[0] + noise * normals[0]), quantization),
            quantize(max(0.0, truth[1] + noise * normals[1]), quantization),
            quantize(max(0.0, truth[2] + noise * normals[2]), quantization),
            quantize(max(0.0, truth[3] + noise * normals[3]), quantization),
            quantize(max(0.0, truth[4] + noise * normals[4]), quantization),
            quantize(max(0.0, truth[5] + noise * normals[5]), quantization))


@njit(**_JIT)
def gyro_measure(w, bias, dt_s, arw, bias_rw, normals, quantization):
    """One gyro output after ``dt_s`` of propagation.

    ``b⁺ = b + σ_u √Δt n_u`` and
    ``ω_m = ω + ½ (b⁺ + b) + √(σ_v²/Δt + σ_u² Δt / 12) n_v``, with ``n_v``
    the first three normals and ``n_u`` the last three; each axis quantised.
    ``Δt`` is the time since the sensor's state was last propagated, so the
    noise is a process in time whoever reads the gyro, however often.
    Returns ``(ω_m, b⁺)``.
    """
    root = math.sqrt(dt_s)
    b = (bias[0] + bias_rw * root * normals[3], bias[1] + bias_rw * root * normals[4],
         bias[2] + bias_rw * root * normals[5])
    sigma = math.sqrt(arw * arw / dt_s + bias_rw * bias_rw * dt_s / 12.0)
    return ((quantize(w[0] + 0.5 * (b[0] + bias[0]) + sigma * normals[0], quantization),
             quantize(w[1] + 0.5 * (b[1] + bias[1]) + sigma * normals[1], quantization),
             quantize(w[2] + 0.5 * (b[2] + bias[2]) + sigma * normals[2], quantization)), b)


@njit(**_JIT)
def _in_sensor(v_B, q_BS_true, scale, extra):
    """``(1 + k) R_BS_trueᵀ v_B + extra`` per sensor axis: what the physical sensor's axes see."""
    v = qrotate(qconj((q_BS_true[0], q_BS_true[1], q_BS_true[2], q_BS_true[3])), (v_B[0], v_B[1], v_B[2]))
    return ((1.0 + scale[0]) * v[0] + extra[0], (1.0 + scale[1]) * v[1] + extra[1],
            (1.0 + scale[2]) * v[2] + extra[2])


@njit(**_JIT)
def gyro_sample(w_B, bias, dt_s, arw, bias_rw, normals, quantization, q_BS_true, q_BS, scale, extra_bias):
    """The mounted gyro: :func:`gyro_measure` of ``(1 + k) R_BS_trueᵀ ω + b_extra`` in its own axes, reported
    in body axes through the nominal ``q_BS``. ``bias`` (the walking bias) is in the gyro's axes. Returns
    ``(ω_m, b⁺)``: ``ω_m`` in body axes, ``b⁺`` in the gyro's."""
    m, b = gyro_measure(_in_sensor(w_B, q_BS_true, scale, extra_bias), bias, dt_s, arw, bias_rw, normals,
                        quantization)
    return qrotate((q_BS[0], q_BS[1], q_BS[2], q_BS[3]), m), b


@njit(**_JIT)
def magnetometer_sample(b_B, bias_T, noise_T, normals, quantization_T, q_BS_true, q_BS, scale, extra_bias):
    """The mounted magnetometer: :func:`magnetometer_measure` of ``(1 + k) R_BS_trueᵀ B`` with the bias
    ``b + b_extra`` (its own axes), reported in body axes through the nominal ``q_BS`` (T)."""
    zero = (0.0, 0.0, 0.0)
    m = magnetometer_measure(_in_sensor(b_B, q_BS_true, scale, zero), (bias_T[0] + extra_bias[0],
                             bias_T[1] + extra_bias[1], bias_T[2] + extra_bias[2]), noise_T, normals, quantization_T)
    return qrotate((q_BS[0], q_BS[1], q_BS[2], q_BS[3]), m)


@njit(**_JIT)
def star_tracker_sample(q_IB, sigma_rad, normals, q_BS_true, q_BS, bias_rad):
    """The mounted star tracker: its own frame's attitude ``q_IS = q_IB ⊗ q_BS_true ⊗ exp(β)`` (``β`` its
    attitude bias, sensor axes) with :func:`star_tracker_measure`'s noise about its axes (cross-boresight x,
    y; about the boresight z), reported as the body's attitude through the nominal mounting,
    ``q_IB,m = q_IS,m ⊗ q_BS*``, scalar part >= 0."""
    q_IS = qmul(qmul((q_IB[0], q_IB[1], q_IB[2], q_IB[3]), (q_BS_true[0], q_BS_true[1], q_BS_true[2], q_BS_true[3])),
                qexp((bias_rad[0], bias_rad[1], bias_rad[2])))
    q = qmul(star_tracker_measure(q_IS, sigma_rad, normals), qconj((q_BS[0], q_BS[1], q_BS[2], q_BS[3])))
    if q[0] < 0.0:
        return (-q[0], -q[1], -q[2], -q[3])
    return q


@njit(**_JIT)
def angle_between(a, b):
    """The angle between two non-zero 3-vectors (rad), by ``atan2(|a × b|, a · b)`` (accurate at every angle)."""
    cx, cy, cz = a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]
    return math.atan2(math.sqrt(cx * cx + cy * cy + cz * cz), a[0] * b[0] + a[1] * b[1] + a[2] * b[2])


@njit(**_JIT)
def star_tracker_blinded(q_IB, q_BS_true, sun_I, lit, r_I, sun_exclusion_rad, earth_exclusion_rad):
    """True when the tracker's true boresight is inside an exclusion cone (NaN half-angles: no cone).

    Sun: the angle between the boresight and the Sun is below
    ``sun_exclusion_rad`` while the Sun is not hidden (``lit``). Earth: the
    angle between the boresight and the Earth's limb, i.e. the angle to the
    Earth's centre minus its angular radius ``asin(R_E / |r|)`` (a sphere of
    the equatorial radius), is below ``earth_exclusion_rad`` (also when the
    boresight looks into the Earth's disc).
    """
    z_B = qrotate((q_BS_true[0], q_BS_true[1], q_BS_true[2], q_BS_true[3]), BORESIGHT)
    z_I = qrotate((q_IB[0], q_IB[1], q_IB[2], q_IB[3]), z_B)
    if lit and angle_between(z_I, sun_I) < sun_exclusion_rad:
        return True
    r = math.sqrt(r_I[0] * r_I[0] + r_I[1] * r_I[1] + r_I[2] * r_I[2])
    if r > R_EARTH_M:
        limb = angle_between(z_I, (-r_I[0], -r_I[1], -r_I[2])) - math.asin(R_EARTH_M / r)
        return limb < earth_exclusion_rad
    return earth_exclusion_rad == earth_exclusion_rad  # inside the Earth (no orbit): blinded when the cone is on


@njit(**_JIT)
def _detector(normals, i, s_B, cos_fov):
    d = normals[3 * i] * s_B[0] + normals[3 * i + 1] * s_B[1] + normals[3 * i + 2] * s_B[2]
    return d if d > cos_fov else 0.0


@njit(**_JIT)
def sun_sensor_signals(s_B, lit, normals, cos_fov):
    """Each cosine detector's ideal output: ``n·ŝ`` where that exceeds ``cos(fov)`` (the Sun inside the
    detector's field of view), else 0; all zero when not ``lit``. ``normals``: six unit normals in body axes,
    one after the other (18 values)."""
    if not lit:
        return (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    return (_detector(normals, 0, s_B, cos_fov), _detector(normals, 1, s_B, cos_fov),
            _detector(normals, 2, s_B, cos_fov), _detector(normals, 3, s_B, cos_fov),
            _detector(normals, 4, s_B, cos_fov), _detector(normals, 5, s_B, cos_fov))


@njit(**_JIT)
def _respond(signal, scale, bias):
    return (1.0 + scale) * signal + bias if signal != 0.0 else 0.0


@njit(**_JIT)
def sun_sensor_detect(signals, scale, bias):
    """The detectors' responses before noise: ``(1 + k_i) c_i + b_i`` for a detector that sees the Sun
    (``c_i ≠ 0``), 0 for one that does not (its gain and offset act on the photo-current)."""
    return (_respond(signals[0], scale[0], bias[0]), _respond(signals[1], scale[1], bias[1]),
            _respond(signals[2], scale[2], bias[2]), _respond(signals[3], scale[3], bias[3]),
            _respond(signals[4], scale[4], bias[4]), _respond(signals[5], scale[5], bias[5]))


@njit(**_JIT)
def nadir_body(q, env_t, env_v, t):
    """``n_B = -R_IBᵀ r_I / |r_I|``: the unit vector toward the Earth's centre in body axes, from the tabulated
    position at ``t`` (interpolated linearly between the table's rows)."""
    k, f = table_cell(env_t, t)
    r = lerp3(env_v, k, f, R)
    n = math.sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2])
    return qrotate(qconj(q), (-r[0] / n, -r[1] / n, -r[2] / n))


@njit(**_JIT)
def horizon_measure(nadir_B, noise_rad, normals):
    """``n_m = exp(σ ν) n``: the nadir direction turned by a small random rotation, ``ν`` three standard normals
    (rad). The part of ``σ ν`` along ``n`` turns nothing, so the pointing error has ``σ`` on each of the two
    axes across ``n``, and ``n_m`` stays a unit vector. With ``σ = 0`` the output is ``n`` to the bit."""
    return qrotate(qexp((noise_rad * normals[0], noise_rad * normals[1], noise_rad * normals[2])),
                   (nadir_B[0], nadir_B[1], nadir_B[2]))


@njit(**_JIT)
def horizon_sample(nadir_B, noise_rad, normals, q_BS_true, q_BS, bias_rad):
    """The mounted horizon sensor: the nadir in its true axes, ``R_BS_trueᵀ n``, turned by its noise and the
    small rotation ``bias_rad`` (its axes; a fault's bias jump), reported in body axes through the nominal
    ``q_BS``."""
    v = qrotate(qconj((q_BS_true[0], q_BS_true[1], q_BS_true[2], q_BS_true[3])), (nadir_B[0], nadir_B[1], nadir_B[2]))
    m = qrotate(qexp((noise_rad * normals[0] + bias_rad[0], noise_rad * normals[1] + bias_rad[1],
                      noise_rad * normals[2] + bias_rad[2])), v)
    return qrotate((q_BS[0], q_BS[1], q_BS[2], q_BS[3]), m)
