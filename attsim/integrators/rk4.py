"""Classical fourth-order Runge-Kutta on the coupled quaternion/rate state.

The scheme of Ganapathi (2005), sec. 3.4, with the torque re-evaluated at
each stage's time and state (sec. 7) and the quaternion renormalised after
every step. It is what Basilisk and 42 use, kept as the parity reference:
local error O(h^5), global O(h^4); energy and |H| drift linearly in time.
"""

from __future__ import annotations

from .._core.jit import njit
from ..dynamics import axpy3, axpy4, normalized4, rigid_body_derivs, rk4_combine3, rk4_combine4
from .base import FixedStepIntegrator, stage_torque


@njit(cache=True, nogil=True)
def rk4_step(targs, t, h, state, J, Jinv, params):
    """One RK4 step of length ``h`` from ``(t, q, w)``; see the module docstring."""
    q, w = state
    hh = 0.5 * h
    a_q, a_w = rigid_body_derivs(q, w, stage_torque(t, q, w, targs), J, Jinv)
    q2, w2 = axpy4(q, hh, a_q), axpy3(w, hh, a_w)
    b_q, b_w = rigid_body_derivs(q2, w2, stage_torque(t + hh, q2, w2, targs), J, Jinv)
    q3, w3 = axpy4(q, hh, b_q), axpy3(w, hh, b_w)
    c_q, c_w = rigid_body_derivs(q3, w3, stage_torque(t + hh, q3, w3, targs), J, Jinv)
    q4, w4 = axpy4(q, h, c_q), axpy3(w, h, c_w)
    d_q, d_w = rigid_body_derivs(q4, w4, stage_torque(t + h, q4, w4, targs), J, Jinv)
    s = h / 6.0
    return normalized4(rk4_combine4(q, s, a_q, b_q, c_q, d_q)), rk4_combine3(w, s, a_w, b_w, c_w, d_w)


class RK4(FixedStepIntegrator):
    name = "rk4"
    mission_ready = True
    description = "classical Runge-Kutta 4, fixed step, quaternion renormalised each step (parity with Basilisk/42)"
    order = 4
    torque = "any"
    invariants = ("unit quaternion",)
    step = rk4_step
