"""Runge-Kutta-Nyström on the second-order quaternion equation.

Mandre (2008), sec. 6: with ``ω = 2 q̄ ⊗ q̇`` the attitude obeys a
second-order equation in the quaternion alone::

    q̈ = q̇ ⊗ q̄ ⊗ q̇ + ½ q ⊗ (0, J⁻¹ (τ - 4 (q̄ ⊗ q̇) × J (q̄ ⊗ q̇)))

integrated by the fourth-order Runge-Kutta-Nyström scheme for
``y'' = f(t, y, y')``::

    k1 = f(t, q, q̇)
    k2 = f(t + h/2, q + h/2 q̇ + h²/8 k1, q̇ + h/2 k1)
    k3 = f(t + h/2, q + h/2 q̇ + h²/8 k1, q̇ + h/2 k2)
    k4 = f(t + h,   q + h q̇ + h²/2 k3,   q̇ + h k3)
    q₁ = q + h q̇ + h²/6 (k1 + k2 + k3),   q̇₁ = q̇ + h/6 (k1 + 2 k2 + 2 k3 + k4)

Each step starts from ``q̇ = ½ q ⊗ (0, ω)``, recovers ``ω₁ = vec(2 q̄₁ ⊗ q̇₁)
/ |q₁|²`` and renormalises ``q₁`` (the seed renormalises occasionally;
every step costs little and keeps the output on the unit sphere).
"""

from __future__ import annotations

from .._core.jit import njit
from ..dynamics import axpy4, euler_rates, normalized4, qconj, qmul, rk4_combine4
from .base import FixedStepIntegrator, stage_torque


@njit(cache=True, nogil=True)
def quaternion_acceleration(targs, t, q, qd, J, Jinv):
    """``q̈(t, q, q̇)`` of the seed's second-order form."""
    half_w = qmul(qconj(q), qd)  # ½ (0, ω) for a unit q
    w = (2.0 * half_w[1], 2.0 * half_w[2], 2.0 * half_w[3])
    wd = euler_rates(w, stage_torque(t, q, w, targs), J, Jinv)
    a = qmul(qmul(qd, qconj(q)), qd)
    b = qmul(q, (0.0, wd[0], wd[1], wd[2]))
    return (a[0] + 0.5 * b[0], a[1] + 0.5 * b[1], a[2] + 0.5 * b[2], a[3] + 0.5 * b[3])


@njit(cache=True, nogil=True)
def rkn_step(targs, t, h, state, J, Jinv, params):
    q, w = state
    qd = qmul(q, (0.0, 0.5 * w[0], 0.5 * w[1], 0.5 * w[2]))
    hh, h2 = 0.5 * h, h * h
    k1 = quaternion_acceleration(targs, t, q, qd, J, Jinv)
    mid = axpy4(axpy4(q, hh, qd), h2 / 8.0, k1)
    k2 = quaternion_acceleration(targs, t + hh, mid, axpy4(qd, hh, k1), J, Jinv)
    k3 = quaternion_acceleration(targs, t + hh, mid, axpy4(qd, hh, k2), J, Jinv)
    end = axpy4(axpy4(q, h, qd), 0.5 * h2, k3)
    k4 = quaternion_acceleration(targs, t + h, end, axpy4(qd, h, k3), J, Jinv)
    s2 = h2 / 6.0
    q1 = axpy4(axpy4(axpy4(axpy4(q, h, qd), s2, k1), s2, k2), s2, k3)
    qd1 = rk4_combine4(qd, h / 6.0, k1, k2, k3, k4)
    norm2 = q1[0] * q1[0] + q1[1] * q1[1] + q1[2] * q1[2] + q1[3] * q1[3]
    rate = qmul(qconj(q1), qd1)
    return normalized4(q1), (2.0 * rate[1] / norm2, 2.0 * rate[2] / norm2, 2.0 * rate[3] / norm2)


class RKN(FixedStepIntegrator):
    name = "rkn"
    mission_ready = True
    description = "Runge-Kutta-Nystrom 4 on the second-order quaternion equation (Mandre 2008); any torque"
    order = 4
    torque = "any"
    invariants = ("unit quaternion (renormalised)",)
    step = rkn_step
