"""Compiled measurement models of the built-in sensors (layer 5).

Each model turns the truth and a set of standard normal draws into a
measurement, on plain tuples in SI. The Python sensors (:mod:`attsim.sensors`)
draw the normals from their own generator and call these kernels; the
compiled mission loop feeds the same draws in the same order, so both paths
give the same numbers. Noise models: Markley & Crassidis, *Fundamentals of
Spacecraft Attitude Determination and Control* (2014), secs. 4.7 and 6.1.
"""

from __future__ import annotations

import math

from ._jit import njit
from .dynamics import qconj, qexp, qmul, qrotate
from .environment.table import B_I, lerp3, table_cell

__all__ = ["quantize", "gyro_measure", "field_body", "magnetometer_measure", "star_tracker_measure", "sun_sensor_truth",
           "sun_sensor_measure", "SUN_SENSOR_NORMALS"]

_JIT = dict(cache=True, nogil=True, error_model="numpy")

# outward normals of the six coarse sun sensors: +x -x +y -y +z -z
SUN_SENSOR_NORMALS = ((1.0, 0.0, 0.0), (-1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, -1.0, 0.0),
                      (0.0, 0.0, 1.0), (0.0, 0.0, -1.0))


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
