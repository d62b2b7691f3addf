"""Direction-cosine propagation with the Gray-Rubinoff-Sohon corrections.

Gray, Rubinoff & Sohon (1950s), secs. 3-5: the rows ``r_i`` of ``R_IB`` (the
inertial axes in body coordinates) obey ``dr_i/dt = r_i × ω``, with no
singular orientation. Two rows, ``r_2`` and ``r_3``, are integrated (RK4,
together with Euler's equation), then corrected to first order, which
avoids square roots::

    ε  = |r_3|² - 1               r_3 ← r_3 (1 - ε/2)
    ε₁ = |r_2|² - 1, ε₂ = r_2·r_3  r_2 ← r_2 (1 - ε₁/2) - ε₂ r_3
    r_1 = r_2 × r_3

Applied every step, the correction squares the residual, so the matrix
stays orthonormal to round-off. The quaternion columns are computed from
the matrix (Shepperd), with the sign kept continuous.
"""

from __future__ import annotations

from .._core.jit import njit
from ..dynamics import axpy3, cross3, dcm_to_quat_tuple, euler_rates, normalized4, rk4_combine3
from .base import FixedStepIntegrator, stage_torque


@njit(cache=True, nogil=True)
def _quat_of_rows(r2, r3, previous):
    r1 = cross3(r2, r3)
    # the nearest unit quaternion: the corrected matrix is orthonormal only to
    # the square of the step's residual, which a coarse step leaves visible
    q = normalized4(dcm_to_quat_tuple(r1[0], r1[1], r1[2], r2[0], r2[1], r2[2], r3[0], r3[1], r3[2]))
    if q[0] * previous[0] + q[1] * previous[1] + q[2] * previous[2] + q[3] * previous[3] < 0.0:
        return (-q[0], -q[1], -q[2], -q[3])
    return q


@njit(cache=True, nogil=True)
def dcm_state(q, w, J, params):
    """``(r2, r3, ω, q)``: two rows of ``R_IB``, the rate, and the last quaternion."""
    qw, qx, qy, qz = q[0], q[1], q[2], q[3]
    r2 = (2.0 * (qx * qy + qw * qz), 1.0 - 2.0 * (qx * qx + qz * qz), 2.0 * (qy * qz - qw * qx))
    r3 = (2.0 * (qx * qz - qw * qy), 2.0 * (qy * qz + qw * qx), 1.0 - 2.0 * (qx * qx + qy * qy))
    return r2, r3, (w[0], w[1], w[2]), (qw, qx, qy, qz)


@njit(cache=True, nogil=True)
def dcm_output(state, J, params):
    return state[3], state[2]


@njit(cache=True, nogil=True)
def dcm_pack(state, out):
    """The state into 13 floats of ``out``: r2, r3, ω, q."""
    r2, r3, w, q = state
    out[0], out[1], out[2] = r2
    out[3], out[4], out[5] = r3
    out[6], out[7], out[8] = w
    out[9], out[10], out[11], out[12] = q


@njit(cache=True, nogil=True)
def dcm_unpack(a):
    return (a[0], a[1], a[2]), (a[3], a[4], a[5]), (a[6], a[7], a[8]), (a[9], a[10], a[11], a[12])


@njit(cache=True, nogil=True)
def _derivs(targs, t, r2, r3, w, q_hint, J, Jinv):
    q = _quat_of_rows(r2, r3, q_hint)
    return cross3(r2, w), cross3(r3, w), euler_rates(w, stage_torque(t, q, w, targs), J, Jinv)


@njit(cache=True, nogil=True)
def dcm_step(targs, t, h, state, J, Jinv, params):
    r2, r3, w, q_prev = state
    hh = 0.5 * h
    a2, a3, aw = _derivs(targs, t, r2, r3, w, q_prev, J, Jinv)
    b2, b3, bw = _derivs(targs, t + hh, axpy3(r2, hh, a2), axpy3(r3, hh, a3), axpy3(w, hh, aw), q_prev, J, Jinv)
    c2, c3, cw = _derivs(targs, t + hh, axpy3(r2, hh, b2), axpy3(r3, hh, b3), axpy3(w, hh, bw), q_prev, J, Jinv)
    d2, d3, dw = _derivs(targs, t + h, axpy3(r2, h, c2), axpy3(r3, h, c3), axpy3(w, h, cw), q_prev, J, Jinv)
    s = h / 6.0
    r2n = rk4_combine3(r2, s, a2, b2, c2, d2)
    r3n = rk4_combine3(r3, s, a3, b3, c3, d3)
    wn = rk4_combine3(w, s, aw, bw, cw, dw)
    # Gray-Rubinoff-Sohon: normalise r3, then turn and scale r2 onto it
    eps = r3n[0] * r3n[0] + r3n[1] * r3n[1] + r3n[2] * r3n[2] - 1.0
    f = 1.0 - 0.5 * eps
    r3n = (r3n[0] * f, r3n[1] * f, r3n[2] * f)
    eps1 = r2n[0] * r2n[0] + r2n[1] * r2n[1] + r2n[2] * r2n[2] - 1.0
    eps2 = r2n[0] * r3n[0] + r2n[1] * r3n[1] + r2n[2] * r3n[2]
    g = 1.0 - 0.5 * eps1
    r2n = (r2n[0] * g - eps2 * r3n[0], r2n[1] * g - eps2 * r3n[1], r2n[2] * g - eps2 * r3n[2])
    return r2n, r3n, wn, _quat_of_rows(r2n, r3n, q_prev)


class DCM(FixedStepIntegrator):
    name = "dcm"
    mission_ready = True
    description = "direction cosines (no singularity) with Gray-Rubinoff-Sohon normalisation and orthogonalisation, RK4"
    order = 4
    torque = "any"
    invariants = ("orthonormal direction-cosine matrix (to round-off, by correction)",)
    step = dcm_step
    initial_state = dcm_state
    output_state = dcm_output
    pack_state = dcm_pack
    unpack_state = dcm_unpack
