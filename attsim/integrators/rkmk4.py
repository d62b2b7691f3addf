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

from numba import njit

from ..dynamics import euler_rates, qexp, qmul
from .base import FixedStepIntegrator, stage_torque


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
    th2 = (hh * k1[0], hh * k1[1], hh * k1[2])
    w2 = (w[0] + hh * l1[0], w[1] + hh * l1[1], w[2] + hh * l1[2])
    q2 = qmul(q, qexp(th2))
    k2 = dexpinv(th2, w2)
    l2 = euler_rates(w2, stage_torque(t + hh, q2, w2, targs), J, Jinv)
    th3 = (hh * k2[0], hh * k2[1], hh * k2[2])
    w3 = (w[0] + hh * l2[0], w[1] + hh * l2[1], w[2] + hh * l2[2])
    q3 = qmul(q, qexp(th3))
    k3 = dexpinv(th3, w3)
    l3 = euler_rates(w3, stage_torque(t + hh, q3, w3, targs), J, Jinv)
    th4 = (h * k3[0], h * k3[1], h * k3[2])
    w4 = (w[0] + h * l3[0], w[1] + h * l3[1], w[2] + h * l3[2])
    q4 = qmul(q, qexp(th4))
    k4 = dexpinv(th4, w4)
    l4 = euler_rates(w4, stage_torque(t + h, q4, w4, targs), J, Jinv)
    s = h / 6.0
    theta = (
        s * (k1[0] + 2.0 * k2[0] + 2.0 * k3[0] + k4[0]),
        s * (k1[1] + 2.0 * k2[1] + 2.0 * k3[1] + k4[1]),
        s * (k1[2] + 2.0 * k2[2] + 2.0 * k3[2] + k4[2]),
    )
    w_next = (
        w[0] + s * (l1[0] + 2.0 * l2[0] + 2.0 * l3[0] + l4[0]),
        w[1] + s * (l1[1] + 2.0 * l2[1] + 2.0 * l3[1] + l4[1]),
        w[2] + s * (l1[2] + 2.0 * l2[2] + 2.0 * l3[2] + l4[2]),
    )
    return qmul(q, qexp(theta)), w_next


class RKMK4(FixedStepIntegrator):
    name = "rkmk4"
    description = "Lie-group Runge-Kutta-Munthe-Kaas 4 on S^3: unit quaternion kept without renormalising; any torque"
    order = 4
    torque = "any"
    invariants = ("unit quaternion (by construction)",)
    step = rkmk4_step
