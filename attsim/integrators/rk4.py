"""Classical fourth-order Runge-Kutta on the coupled quaternion/rate state.

The scheme of Ganapathi (2005), sec. 3.4, with the torque re-evaluated at
each stage's time and state (sec. 7) and the quaternion renormalised after
every step. It is what Basilisk and 42 use, kept as the parity reference:
local error O(h^5), global O(h^4); energy and |H| drift linearly in time.
"""

from __future__ import annotations

import math

from numba import njit

from ..dynamics import rigid_body_derivs
from .base import FixedStepIntegrator, stage_torque


@njit(cache=True, nogil=True)
def rk4_step(targs, t, h, state, J, Jinv, params):
    """One RK4 step of length ``h`` from ``(t, q, w)``; see the module docstring."""
    q, w = state
    hh = 0.5 * h
    a_q, a_w = rigid_body_derivs(q, w, stage_torque(t, q, w, targs), J, Jinv)
    q2 = (q[0] + hh * a_q[0], q[1] + hh * a_q[1], q[2] + hh * a_q[2], q[3] + hh * a_q[3])
    w2 = (w[0] + hh * a_w[0], w[1] + hh * a_w[1], w[2] + hh * a_w[2])
    b_q, b_w = rigid_body_derivs(q2, w2, stage_torque(t + hh, q2, w2, targs), J, Jinv)
    q3 = (q[0] + hh * b_q[0], q[1] + hh * b_q[1], q[2] + hh * b_q[2], q[3] + hh * b_q[3])
    w3 = (w[0] + hh * b_w[0], w[1] + hh * b_w[1], w[2] + hh * b_w[2])
    c_q, c_w = rigid_body_derivs(q3, w3, stage_torque(t + hh, q3, w3, targs), J, Jinv)
    q4 = (q[0] + h * c_q[0], q[1] + h * c_q[1], q[2] + h * c_q[2], q[3] + h * c_q[3])
    w4 = (w[0] + h * c_w[0], w[1] + h * c_w[1], w[2] + h * c_w[2])
    d_q, d_w = rigid_body_derivs(q4, w4, stage_torque(t + h, q4, w4, targs), J, Jinv)
    s = h / 6.0
    n0 = q[0] + s * (a_q[0] + 2.0 * b_q[0] + 2.0 * c_q[0] + d_q[0])
    n1 = q[1] + s * (a_q[1] + 2.0 * b_q[1] + 2.0 * c_q[1] + d_q[1])
    n2 = q[2] + s * (a_q[2] + 2.0 * b_q[2] + 2.0 * c_q[2] + d_q[2])
    n3 = q[3] + s * (a_q[3] + 2.0 * b_q[3] + 2.0 * c_q[3] + d_q[3])
    inv_norm = 1.0 / math.sqrt(n0 * n0 + n1 * n1 + n2 * n2 + n3 * n3)
    return (
        (n0 * inv_norm, n1 * inv_norm, n2 * inv_norm, n3 * inv_norm),
        (
            w[0] + s * (a_w[0] + 2.0 * b_w[0] + 2.0 * c_w[0] + d_w[0]),
            w[1] + s * (a_w[1] + 2.0 * b_w[1] + 2.0 * c_w[1] + d_w[1]),
            w[2] + s * (a_w[2] + 2.0 * b_w[2] + 2.0 * c_w[2] + d_w[2]),
        ),
    )


class RK4(FixedStepIntegrator):
    name = "rk4"
    description = "classical Runge-Kutta 4, fixed step, quaternion renormalised each step (parity with Basilisk/42)"
    order = 4
    torque = "any"
    invariants = ("unit quaternion",)
    step = rk4_step
