"""Compiled control laws: the arithmetic of the built-in controllers.

Plain tuples of floats in SI, compiled with numba. The Python controllers
(:mod:`attsim.control`) call these kernels once per cycle, and the compiled
mission loop calls the same kernels, so both paths share one source and give
the same result to the last bit.
"""

from __future__ import annotations

import math

from .._core.jit import njit
from ..dynamics import cross3, qconj, qmul, qrotate

__all__ = ["pd_torque", "pid_torque", "dipole_for_torque", "bdot_rate", "bdot_direction",
           "orbit_rate_inertial", "body_rate_relative", "known", "mrp_error", "add_wheel_momentum",
           "mrp_feedback_torque", "mrp_feedback", "dipole_feedforward"]

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
def dipole_feedforward(tau, m, b):
    """``τ - m × B``: the body torque left for the wheels when magnetorquers holding the dipole ``m`` (A m², body
    axes) in the field ``B`` (T, body axes, as measured) already apply ``m × B`` (Basilisk's ``mtbFeedforward``),
    so that together they apply ``τ`` and unloading does not disturb the pointing."""
    c = cross3(m, b)
    return (tau[0] - c[0], tau[1] - c[1], tau[2] - c[2])


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


@njit(**_JIT)
def mrp_error(q, q_ref, w_ref, wd_ref):
    """``(σ_BR, ω_RN, ω̇_RN)``: the attitude error as MRPs and the reference's rate and acceleration, body axes.

    ``q_RB = q_IR* ⊗ q_IB`` taken with ``w >= 0`` gives ``σ_BR = vec(q_RB) / (1 + w)`` (|σ| <= 1, the short way
    round, as Basilisk's ``attTrackingError`` gives it); ``ω_R``, ``ω̇_R`` (R axes, :mod:`attsim.guidance.kernels`)
    are turned into body axes by ``R_BR``.
    """
    e = qmul(qconj(q_ref), q)
    if e[0] < 0.0:
        e = (-e[0], -e[1], -e[2], -e[3])
    d = 1.0 + e[0]
    back = qconj(e)
    return (e[1] / d, e[2] / d, e[3] / d), qrotate(back, w_ref), qrotate(back, wd_ref)


@njit(**_JIT)
def add_wheel_momentum(h, axis, inertia_kg_m2, speed_rad_s, w):
    """``h + J_s (ĝ·ω + Ω) ĝ``: one wheel's momentum (spin inertia ``J_s``, axis ``ĝ``, speed ``Ω`` relative to
    the body) added to ``h`` (N m s, body axes), with the body rate ``w`` the law knows."""
    hs = inertia_kg_m2 * (w[0] * axis[0] + w[1] * axis[1] + w[2] * axis[2] + speed_rad_s)
    return (h[0] + hs * axis[0], h[1] + hs * axis[1], h[2] + hs * axis[2])


@njit(**_JIT)
def _matvec(m, v):
    """``M v`` for a 3x3 matrix given row by row as 9 values."""
    return (m[0] * v[0] + m[1] * v[1] + m[2] * v[2], m[3] * v[0] + m[4] * v[1] + m[5] * v[2],
            m[6] * v[0] + m[7] * v[1] + m[8] * v[2])


@njit(**_JIT)
def mrp_feedback_torque(sigma, w_BR, w_RN, wd_RN, inertia, h_wheels, gains, integral, dt_s, known_torque):
    """Basilisk's ``mrpFeedback`` law (control law type 0): the body torque ``u`` and its integral state.

    ``gains = (K, P, K_i, limit)``. With ``K_i > 0`` the integral
    ``s ← s + K σ Δt``, each component scaled back to ``±limit``, and
    ``z = s + I δω``; else ``z = 0`` and ``s`` is left as it was. Then
    ``L_r = K σ + P δω + P K_i z - (ω_r + K_i z) × (I ω + G_s h_s)
    + I (ω × ω_r - ω̇_r) + L`` and ``u = -L_r``, with ``δω = ω_BR``,
    ``ω = δω + ω_r`` (Schaub & Junkins, *Analytical Mechanics of Space
    Systems*, 4th ed., sec. 8.4; Basilisk ``src/fswAlgorithms/attControl/mrpFeedback/mrpFeedback.c``,
    ``Update_mrpFeedback``). ``inertia`` is ``I`` row by row (9 values), ``h_wheels`` the wheels' ``G_s h_s``.
    Returns ``(u, s)``.
    """
    K, P, ki, limit = gains[0], gains[1], gains[2], gains[3]
    w = (w_BR[0] + w_RN[0], w_BR[1] + w_RN[1], w_BR[2] + w_RN[2])
    s = (integral[0], integral[1], integral[2])
    z = (0.0, 0.0, 0.0)
    if ki > 0.0:
        s = (s[0] + K * dt_s * sigma[0], s[1] + K * dt_s * sigma[1], s[2] + K * dt_s * sigma[2])
        s = (_scaled_back(s[0], limit), _scaled_back(s[1], limit), _scaled_back(s[2], limit))
        i_dw = _matvec(inertia, w_BR)
        z = (s[0] + i_dw[0], s[1] + i_dw[1], s[2] + i_dw[2])
    i_w = _matvec(inertia, w)
    H = (i_w[0] + h_wheels[0], i_w[1] + h_wheels[1], i_w[2] + h_wheels[2])
    gyro = cross3((w_RN[0] + ki * z[0], w_RN[1] + ki * z[1], w_RN[2] + ki * z[2]), H)
    c = cross3(w, w_RN)
    ff = _matvec(inertia, (c[0] - wd_RN[0], c[1] - wd_RN[1], c[2] - wd_RN[2]))
    return (-_required(K, P, ki, sigma, w_BR, z, gyro, ff, known_torque, 0),
            -_required(K, P, ki, sigma, w_BR, z, gyro, ff, known_torque, 1),
            -_required(K, P, ki, sigma, w_BR, z, gyro, ff, known_torque, 2)), s


@njit(**_JIT)
def _required(K, P, ki, sigma, w_BR, z, gyro, ff, known_torque, i):
    """Component ``i`` of ``L_r``, summed in Basilisk's order."""
    return known_torque[i] + (ff[i] + (((K * sigma[i] + P * w_BR[i]) + P * (ki * z[i])) - gyro[i]))


@njit(**_JIT)
def _scaled_back(x, limit):
    """``x`` scaled back to ``±limit`` when beyond it (Basilisk scales each component of its integral)."""
    a = abs(x)
    return x * (limit / a) if a > limit else x


@njit(**_JIT)
def mrp_feedback(q, w, q_ref, w_ref, wd_ref, inertia, h_wheels, gains, integral, dt_s, known_torque):
    """:func:`mrp_feedback_torque` for the attitude ``q`` and rate ``w`` the law knows and the guidance reference
    ``(q_IR, ω_R, ω̇_R)`` (:func:`mrp_error`; ``δω = ω - ω_r``). Returns ``(u, s)``."""
    sigma, w_RN, wd_RN = mrp_error(q, q_ref, w_ref, wd_ref)
    w_BR = (w[0] - w_RN[0], w[1] - w_RN[1], w[2] - w_RN[2])
    return mrp_feedback_torque(sigma, w_BR, w_RN, wd_RN, inertia, h_wheels, gains, integral, dt_s, known_torque)
