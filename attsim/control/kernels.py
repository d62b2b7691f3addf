"""Compiled control laws: the arithmetic of the built-in controllers.

Plain tuples of floats in SI, compiled with numba. The Python controllers
(:mod:`attsim.control`) call these kernels once per cycle, and the compiled
mission loop calls the same kernels, so both paths share one source and give
the same result to the last bit.
"""

from __future__ import annotations

import math

from .._core.jit import njit
from ..dynamics import dcm_to_quat_tuple, qconj, qmul, qrotate

__all__ = ["pd_torque", "pid_torque", "dipole_for_torque", "bdot_rate", "bdot_direction", "lvlh_quaternion_tuple",
           "orbit_rate_inertial", "body_rate_relative", "known"]

_JIT = dict(cache=True, nogil=True, error_model="numpy")


@njit(**_JIT)
def pd_torque(q_target, q, w_rel, kp, kd):
    """Quaternion-feedback PD torque, the shorter way round.

    ``τ = -k_p sign(δq_w) δq_v - k_d ω_rel`` with ``δq = q_target* ⊗ q`` the
    attitude error in body axes (Wie, *Space Vehicle Dynamics and Control*,
    2nd ed., sec. 7.3.1).
    """
    e = qmul(qconj(q_target), q)
    s = kp if e[0] >= 0.0 else -kp
    return (-s * e[1] - kd * w_rel[0], -s * e[2] - kd * w_rel[1], -s * e[3] - kd * w_rel[2])


@njit(**_JIT)
def pid_torque(q_target, q, w_rel, kp, kd, ki, z, dt_s, limit):
    """Quaternion-feedback PID torque, and the integrated attitude error after this cycle.

    ``z_k = clamp(z_{k-1} + Δt sign(δq_w) δq_v, ±z_max)`` (each component) and
    ``τ = -k_p sign(δq_w) δq_v - k_d ω_rel - k_i z_k``, with
    ``δq = q_target* ⊗ q`` as in :func:`pd_torque`. The integral of the
    attitude error (rectangle rule over the control period ``dt_s``; clamped
    to ``±limit``, the anti-windup) removes the standing error ``τ_d / k_p``
    that a constant disturbance ``τ_d`` leaves under PD alone. It is Schaub's
    integral feedback (Schaub & Junkins, *Analytical Mechanics of Space
    Systems*, 4th ed., ch. 8, eq. 8.104 and example 8.14, the law of
    Basilisk's ``mrpFeedback``, whose ``integralLimit`` bounds each component
    of ``∫σ dt`` the same way) with the quaternion error of Wie (*Space
    Vehicle Dynamics and Control*, 2nd ed., sec. 7.3) in place of the MRPs.
    ``z`` is a 3-tuple (rad s); returns ``(τ, z_k)``.
    """
    e = qmul(qconj(q_target), q)
    s = 1.0 if e[0] >= 0.0 else -1.0
    z0 = min(max(z[0] + dt_s * (s * e[1]), -limit), limit)
    z1 = min(max(z[1] + dt_s * (s * e[2]), -limit), limit)
    z2 = min(max(z[2] + dt_s * (s * e[3]), -limit), limit)
    tau = (-kp * (s * e[1]) - kd * w_rel[0] - ki * z0, -kp * (s * e[2]) - kd * w_rel[1] - ki * z1,
           -kp * (s * e[3]) - kd * w_rel[2] - ki * z2)
    return tau, (z0, z1, z2)


@njit(**_JIT)
def dipole_for_torque(b, tau):
    """``m = B × τ / |B|²``: the dipole whose torque ``m × B`` is the part of ``τ`` normal to ``B``.

    Zero where the field is zero (no dipole can make a torque there).
    """
    b2 = b[0] * b[0] + b[1] * b[1] + b[2] * b[2]
    if b2 == 0.0:
        return (0.0, 0.0, 0.0)
    return ((b[1] * tau[2] - b[2] * tau[1]) / b2, (b[2] * tau[0] - b[0] * tau[2]) / b2,
            (b[0] * tau[1] - b[1] * tau[0]) / b2)


@njit(**_JIT)
def bdot_rate(b, b_previous, gain, period_s):
    """``m = -k (B_k - B_{k-1}) / Δt``: B-dot on the field's rate (k in A m² s / T)."""
    c = -gain / period_s
    return (c * (b[0] - b_previous[0]), c * (b[1] - b_previous[1]), c * (b[2] - b_previous[2]))


@njit(**_JIT)
def bdot_direction(b, b_previous, gain, period_s):
    """``m = -(k / |B|) d(B/|B|)/dt``: B-dot on the field direction (k in A m² s).

    Insensitive to the field's strength along the orbit (Avanzini &
    Giulietti, JGCD 35(4), 2012). Zero when either sample is zero.
    """
    nb = math.sqrt(b[0] * b[0] + b[1] * b[1] + b[2] * b[2])
    npr = math.sqrt(b_previous[0] * b_previous[0] + b_previous[1] * b_previous[1] + b_previous[2] * b_previous[2])
    if nb == 0.0 or npr == 0.0:
        return (0.0, 0.0, 0.0)
    c = -gain / nb / period_s
    return (c * (b[0] / nb - b_previous[0] / npr), c * (b[1] / nb - b_previous[1] / npr),
            c * (b[2] / nb - b_previous[2] / npr))


@njit(**_JIT)
def lvlh_quaternion_tuple(r, v):
    """``q_IO`` of the orbit frame (z to nadir, y along the negative orbit normal) from ECI ``r``, ``v``.

    The same frame as :func:`attsim.environment.frames.lvlh_quaternion`, for
    one state, by Shepperd's branch choice on ``R_IO = [x y z]``.
    """
    rn = math.sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2])
    z = (-r[0] / rn, -r[1] / rn, -r[2] / rn)
    h = (r[1] * v[2] - r[2] * v[1], r[2] * v[0] - r[0] * v[2], r[0] * v[1] - r[1] * v[0])
    hn = math.sqrt(h[0] * h[0] + h[1] * h[1] + h[2] * h[2])
    y = (-h[0] / hn, -h[1] / hn, -h[2] / hn)
    x = (y[1] * z[2] - y[2] * z[1], y[2] * z[0] - y[0] * z[2], y[0] * z[1] - y[1] * z[0])
    return dcm_to_quat_tuple(x[0], y[0], z[0], x[1], y[1], z[1], x[2], y[2], z[2])


@njit(**_JIT)
def orbit_rate_inertial(r, v):
    """The orbit frame's angular velocity in ECI, ``r × v / |r|²`` (rad/s)."""
    r2 = r[0] * r[0] + r[1] * r[1] + r[2] * r[2]
    return ((r[1] * v[2] - r[2] * v[1]) / r2, (r[2] * v[0] - r[0] * v[2]) / r2, (r[0] * v[1] - r[1] * v[0]) / r2)


@njit(**_JIT)
def body_rate_relative(q, w, w_frame_inertial):
    """``ω - R_IBᵀ ω_F``: the body rate relative to a frame turning at ``ω_F`` (given in inertial axes)."""
    wf = qrotate(qconj(q), w_frame_inertial)
    return (w[0] - wf[0], w[1] - wf[1], w[2] - wf[2])


@njit(**_JIT)
def known(q, w):
    """False while an estimator has no estimate yet (NaN): an attitude law then holds its commands for the cycle."""
    return not (math.isnan(q[0]) or math.isnan(w[0]) or math.isnan(w[1]) or math.isnan(w[2]))
