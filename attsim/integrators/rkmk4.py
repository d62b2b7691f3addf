"""Runge-Kutta-Munthe-Kaas of order 4 on S^3 × R^3.

The attitude lives on the unit quaternions; each step moves it by the
group exponential of a rotation vector ``θ`` in body axes,
``q_{n+1} = q_n ⊗ exp(θ)``, so ``|q|`` stays 1 to round-off without any
renormalisation, and the rates ``ω`` evolve in the vector space R^3
(Munthe-Kaas 1998; Iserles, Munthe-Kaas, Nørsett & Zanna, "Lie-group
methods", Acta Numerica 2000, sec. 4).

``θ(t)`` solves ``dθ/dt = dexp⁻¹_θ(ω)`` with the inverse of the right
Jacobian of SO(3)::

    dexp⁻¹_θ(ω) = ω + ½ θ × ω + (1/|θ|² − (1 + cos|θ|) / (2|θ| sin|θ|)) θ × (θ × ω)

and the classical RK4 tableau is applied to ``(θ, ω)``. Any torque form is
accepted; the method is not symplectic (energy drifts like RK4's).
"""

from __future__ import annotations

import math

from .._core.jit import njit
from ..dynamics import axpy3, euler_rates, qexp, qmul, rk4_combine3
from .base import FixedStepIntegrator, stage_torque

ZERO = (0.0, 0.0, 0.0)


@njit(cache=True, nogil=True)
def dexpinv(theta, w):
    """``dexp⁻¹_θ(ω)`` for SO(3), with the series of its coefficient near 0."""
    t2 = theta[0] * theta[0] + theta[1] * theta[1] + theta[2] * theta[2]
    if t2 < 1e-6:
        coefficient = 1.0 / 12.0 + t2 / 720.0
    else:
        a = math.sqrt(t2)
        coefficient = 1.0 / t2 - (1.0 + math.cos(a)) / (2.0 * a * math.sin(a))
    cx = theta[1] * w[2] - theta[2] * w[1]
    cy = theta[2] * w[0] - theta[0] * w[2]
    cz = theta[0] * w[1] - theta[1] * w[0]
    ccx = theta[1] * cz - theta[2] * cy
    ccy = theta[2] * cx - theta[0] * cz
    ccz = theta[0] * cy - theta[1] * cx
    return (
        w[0] + 0.5 * cx + coefficient * ccx,
        w[1] + 0.5 * cy + coefficient * ccy,
        w[2] + 0.5 * cz + coefficient * ccz,
    )


@njit(cache=True, nogil=True)
def rkmk4_step(targs, t, h, state, J, Jinv, params):
    q, w = state
    hh = 0.5 * h
    # stage 1: theta = 0, so dexpinv is the identity
    k1 = w
    l1 = euler_rates(w, stage_torque(t, q, w, targs), J, Jinv)
    th2, w2 = axpy3(ZERO, hh, k1), axpy3(w, hh, l1)
    q2 = qmul(q, qexp(th2))
    k2 = dexpinv(th2, w2)
    l2 = euler_rates(w2, stage_torque(t + hh, q2, w2, targs), J, Jinv)
    th3, w3 = axpy3(ZERO, hh, k2), axpy3(w, hh, l2)
    q3 = qmul(q, qexp(th3))
    k3 = dexpinv(th3, w3)
    l3 = euler_rates(w3, stage_torque(t + hh, q3, w3, targs), J, Jinv)
    th4, w4 = axpy3(ZERO, h, k3), axpy3(w, h, l3)
    q4 = qmul(q, qexp(th4))
    k4 = dexpinv(th4, w4)
    l4 = euler_rates(w4, stage_torque(t + h, q4, w4, targs), J, Jinv)
    s = h / 6.0
    theta = rk4_combine3(ZERO, s, k1, k2, k3, k4)
    return qmul(q, qexp(theta)), rk4_combine3(w, s, l1, l2, l3, l4)


class RKMK4(FixedStepIntegrator):
    name = "rkmk4"
    mission_ready = True
    description = "Lie-group Runge-Kutta-Munthe-Kaas 4 on S^3: unit quaternion kept without renormalising; any torque"
    order = 4
    torque = "any"
    invariants = ("unit quaternion (by construction)",)
    step = rkmk4_step
