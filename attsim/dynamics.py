"""Equations of motion of the rigid body (layer 3).

Euler's equation with the full inertia tensor about the centre of mass,
body axes (Bhattu 2019, eq. 28; Ganapathi 2005, sec. 7)::

    J dω/dt = τ - ω × (J ω)

and the quaternion kinematics of ``q_IB`` (DESIGN.md)::

    dq/dt = ½ q ⊗ (0, ω)

The kernels below work on plain tuples of floats so numba keeps them in
registers; ``J`` and ``J⁻¹`` are row-major 9-tuples. They are compiled
lazily and cached on disk; their pure-Python originals (``.py_func``) give
the same arithmetic to the slow path that calls user code.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["quat_rates", "euler_rates", "rigid_body_derivs", "rigid_body_rates", "matrix_to_tuple"]

_JIT = dict(cache=True, nogil=True, error_model="numpy")


@njit(**_JIT)
def quat_rates(q, w):
    """``½ q ⊗ (0, ω)`` for ``q = (w, x, y, z)`` and body rate ``ω``."""
    return (
        0.5 * (-q[1] * w[0] - q[2] * w[1] - q[3] * w[2]),
        0.5 * (q[0] * w[0] + q[2] * w[2] - q[3] * w[1]),
        0.5 * (q[0] * w[1] + q[3] * w[0] - q[1] * w[2]),
        0.5 * (q[0] * w[2] + q[1] * w[1] - q[2] * w[0]),
    )


@njit(**_JIT)
def euler_rates(w, tau, J, Jinv):
    """``J⁻¹ (τ - ω × J ω)`` with ``J``, ``J⁻¹`` as row-major 9-tuples."""
    hx = J[0] * w[0] + J[1] * w[1] + J[2] * w[2]
    hy = J[3] * w[0] + J[4] * w[1] + J[5] * w[2]
    hz = J[6] * w[0] + J[7] * w[1] + J[8] * w[2]
    rx = tau[0] - (w[1] * hz - w[2] * hy)
    ry = tau[1] - (w[2] * hx - w[0] * hz)
    rz = tau[2] - (w[0] * hy - w[1] * hx)
    return (
        Jinv[0] * rx + Jinv[1] * ry + Jinv[2] * rz,
        Jinv[3] * rx + Jinv[4] * ry + Jinv[5] * rz,
        Jinv[6] * rx + Jinv[7] * ry + Jinv[8] * rz,
    )


def rigid_body_rates(state, torque_N_m, inertia_kg_m2, inertia_inv) -> np.ndarray:
    """Time derivative of the 7-state ``(qw, qx, qy, qz, wx, wy, wz)``.

    A NumPy-facing convenience for callers such as ``scipy.integrate``; the
    fixed-step integrators call the tuple kernels directly.
    """
    q = (state[0], state[1], state[2], state[3])
    w = (state[4], state[5], state[6])
    tau = (float(torque_N_m[0]), float(torque_N_m[1]), float(torque_N_m[2]))
    return np.array(quat_rates(q, w) + euler_rates(w, tau, matrix_to_tuple(inertia_kg_m2), matrix_to_tuple(inertia_inv)))


def matrix_to_tuple(matrix) -> tuple:
    """A 3x3 matrix as the row-major 9-tuple the kernels take."""
    return tuple(float(v) for v in np.asarray(matrix, dtype=np.float64).reshape(9))


@njit(**_JIT)
def rigid_body_derivs(q, w, tau, J, Jinv):
    """``(dq/dt, dω/dt)`` of the rigid body: one integrator stage's work."""
    return quat_rates(q, w), euler_rates(w, tau, J, Jinv)
