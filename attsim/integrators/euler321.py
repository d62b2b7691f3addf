"""3-2-1 Euler-angle kinematics, with the singularity detected.

Gray, Rubinoff & Sohon, sec. 2: with body rates ``(p, q, r)`` and angles
yaw ``ψ``, pitch ``θ``, roll ``φ`` (``R_IB = Rz(ψ) Ry(θ) Rx(φ)``)::

    dφ/dt = p + (q sin φ + r cos φ) tan θ
    dθ/dt = q cos φ - r sin φ
    dψ/dt = (q sin φ + r cos φ) / cos θ

``1/cos θ`` makes the equations singular at ``θ = ±90°``: the run stops with
:class:`~attsim.errors.GimbalLockError` (time and pitch, the results so far
attached) as soon as ``|θ|`` comes within ``gimbal_margin_deg`` (default
1°) of 90°, rather than return garbage. Integrated with RK4; kept for
teaching and for comparison with the singularity-free methods.
"""

from __future__ import annotations

import math

import numpy as np

from .._core.jit import njit
from ..errors import GimbalLockError, InputError
from .base import FixedStepIntegrator, stage_torque
from ..dynamics import axpy3, euler_rates, rk4_combine3

DEFAULT_MARGIN_DEG = 1.0


@njit(cache=True, nogil=True)
def angles_to_quat(yaw, pitch, roll):
    cy, sy = math.cos(0.5 * yaw), math.sin(0.5 * yaw)
    cp, sp = math.cos(0.5 * pitch), math.sin(0.5 * pitch)
    cr, sr = math.cos(0.5 * roll), math.sin(0.5 * roll)
    return (cy * cp * cr + sy * sp * sr, cy * cp * sr - sy * sp * cr,
            cy * sp * cr + sy * cp * sr, sy * cp * cr - cy * sp * sr)


@njit(cache=True, nogil=True)
def euler_pack(state, out):
    """The state into 6 floats of ``out``: the angles, ω."""
    angles, w = state
    out[0], out[1], out[2] = angles
    out[3], out[4], out[5] = w


@njit(cache=True, nogil=True)
def euler_unpack(a):
    return (a[0], a[1], a[2]), (a[3], a[4], a[5])


@njit(cache=True, nogil=True)
def euler_state(q, w, J, params):
    qw, qx, qy, qz = q[0], q[1], q[2], q[3]
    a = math.hypot(qw + qy, qz - qx)
    b = math.hypot(qw - qy, qz + qx)
    pitch = 2.0 * math.atan2(a, b) - 0.5 * math.pi
    difference = 2.0 * math.atan2(qz - qx, qw + qy)
    total = 2.0 * math.atan2(qz + qx, qw - qy)
    return (0.5 * (total + difference), pitch, 0.5 * (total - difference)), (w[0], w[1], w[2])


@njit(cache=True, nogil=True)
def euler_output(state, J, params):
    angles, w = state
    return angles_to_quat(angles[0], angles[1], angles[2]), w


@njit(cache=True, nogil=True)
def _angle_rates(angles, w):
    sr, cr = math.sin(angles[2]), math.cos(angles[2])
    cp, tp = math.cos(angles[1]), math.tan(angles[1])
    a = w[1] * sr + w[2] * cr
    return (a / cp, w[1] * cr - w[2] * sr, w[0] + a * tp)


@njit(cache=True, nogil=True)
def _derivs(targs, t, angles, w, J, Jinv):
    q = angles_to_quat(angles[0], angles[1], angles[2])
    return _angle_rates(angles, w), euler_rates(w, stage_torque(t, q, w, targs), J, Jinv)


@njit(cache=True, nogil=True)
def euler321_step(targs, t, h, state, J, Jinv, params):
    e, w = state
    hh = 0.5 * h
    ae, aw = _derivs(targs, t, e, w, J, Jinv)
    be, bw = _derivs(targs, t + hh, axpy3(e, hh, ae), axpy3(w, hh, aw), J, Jinv)
    ce, cw = _derivs(targs, t + hh, axpy3(e, hh, be), axpy3(w, hh, bw), J, Jinv)
    de, dw = _derivs(targs, t + h, axpy3(e, h, ce), axpy3(w, h, cw), J, Jinv)
    s = h / 6.0
    return rk4_combine3(e, s, ae, be, ce, de), rk4_combine3(w, s, aw, bw, cw, dw)


@njit(cache=True, nogil=True)
def near_gimbal_lock(state, params):
    return abs(state[0][1]) >= 0.5 * math.pi - params[0]


class Euler321(FixedStepIntegrator):
    name = "euler321"
    mission_ready = True
    description = "3-2-1 Euler angles with RK4; stops with GimbalLockError near pitch +-90 deg (teaching/comparison)"
    order = 4
    torque = "any"
    invariants = ()
    options = ("gimbal_margin_deg",)
    step = euler321_step
    initial_state = euler_state
    output_state = euler_output
    pack_state = euler_pack
    unpack_state = euler_unpack
    must_stop = near_gimbal_lock

    def margin_deg(self, problem) -> float:
        margin = problem.options.get("gimbal_margin_deg", DEFAULT_MARGIN_DEG)
        if isinstance(margin, bool) or not (isinstance(margin, (int, float, np.floating)) and 0.0 < margin < 90.0):
            raise InputError("gimbal_margin_deg", "must be a number in (0, 90)", f"got {margin!r}")
        return float(margin)

    def params(self, problem):
        return (math.radians(self.margin_deg(problem)),)

    @classmethod
    def engine_params(cls) -> tuple:
        return (math.radians(DEFAULT_MARGIN_DEG),)

    def integrate(self, problem):
        from ..rotations import quat_to_euler321

        margin = self.margin_deg(problem)
        pitch_deg = math.degrees(quat_to_euler321(problem.q0)[1])
        if abs(pitch_deg) >= 90.0 - margin:
            raise InputError(
                "q0",
                f"method 'euler321' cannot start within {margin:g} deg of the pitch singularity",
                f"initial pitch {pitch_deg:.4f} deg; use 'dcm', 'rk4' or 'rkmk4'",
            )
        return super().integrate(problem)

    def stopped(self, problem, partial):
        from ..rotations import quat_to_euler321

        pitch_deg = float(np.degrees(quat_to_euler321(partial.q[-1])[1]))
        raise GimbalLockError(float(partial.t_s[-1]), pitch_deg, self.margin_deg(problem), partial=partial)
