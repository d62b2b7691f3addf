"""Equations of motion of the rigid body.

Euler's equation with the full inertia tensor about the centre of mass,
body axes (Bhattu 2019, eq. 28; Ganapathi 2005, sec. 7)::

    J dω/dt = τ - ω × (J ω)

and the quaternion kinematics of ``q_IB`` (``docs/architecture.md``)::

    dq/dt = ½ q ⊗ (0, ω)

The kernels below work on plain tuples of floats so numba keeps them in
registers; ``J`` and ``J⁻¹`` are row-major 9-tuples. They are compiled
lazily and cached on disk; their pure-Python originals (``.py_func``) give
the same arithmetic to the slow path that calls user code.
"""

from __future__ import annotations

import math

import numpy as np
from ._core.jit import njit

__all__ = [
    "quat_rates",
    "euler_rates",
    "rigid_body_derivs",
    "matrix_to_tuple",
    "cross3",
    "qmul",
    "qconj",
    "qexp",
    "qrotate",
    "dcm_to_quat_tuple",
    "axpy3",
    "axpy4",
    "rk4_combine3",
    "rk4_combine4",
    "normalized4",
    "TUPLE_ARITHMETIC",
]

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


def matrix_to_tuple(matrix) -> tuple:
    """A 3x3 matrix as the row-major 9-tuple the kernels take."""
    return tuple(np.asarray(matrix, dtype=np.float64).reshape(9).tolist())  # Python floats, the same values


@njit(**_JIT)
def rigid_body_derivs(q, w, tau, J, Jinv):
    """``(dq/dt, dω/dt)`` of the rigid body: one integrator stage's work."""
    return quat_rates(q, w), euler_rates(w, tau, J, Jinv)


# --- tuple quaternion kernels shared by the integrators -------------------


@njit(**_JIT)
def cross3(a, b):
    """``a × b`` of two 3-tuples (or 3-arrays), as a tuple."""
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


@njit(**_JIT)
def qmul(p, q):
    """Hamilton product ``p ⊗ q`` of two 4-tuples."""
    return (
        p[0] * q[0] - p[1] * q[1] - p[2] * q[2] - p[3] * q[3],
        p[0] * q[1] + p[1] * q[0] + p[2] * q[3] - p[3] * q[2],
        p[0] * q[2] - p[1] * q[3] + p[2] * q[0] + p[3] * q[1],
        p[0] * q[3] + p[1] * q[2] - p[2] * q[1] + p[3] * q[0],
    )


@njit(**_JIT)
def qconj(q):
    """Conjugate ``q*`` of a 4-tuple."""
    return (q[0], -q[1], -q[2], -q[3])


@njit(**_JIT)
def qexp(v):
    """Unit quaternion of the rotation vector ``v`` (rad): ``(cos |v|/2, sin(|v|/2) v/|v|)``."""
    angle = math.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])
    half = 0.5 * angle
    if angle < 1e-4:
        # sin(a/2)/a by its series: the direct quotient loses digits near 0
        scale = 0.5 - angle * angle / 48.0
    else:
        scale = math.sin(half) / angle
    return (math.cos(half), scale * v[0], scale * v[1], scale * v[2])


@njit(**_JIT)
def qrotate(q, v):
    """``q ⊗ (0, v) ⊗ q*`` for a unit 4-tuple ``q`` and 3-tuple ``v``."""
    tx = 2.0 * (q[2] * v[2] - q[3] * v[1])
    ty = 2.0 * (q[3] * v[0] - q[1] * v[2])
    tz = 2.0 * (q[1] * v[1] - q[2] * v[0])
    return (
        v[0] + q[0] * tx + q[2] * tz - q[3] * ty,
        v[1] + q[0] * ty + q[3] * tx - q[1] * tz,
        v[2] + q[0] * tz + q[1] * ty - q[2] * tx,
    )


@njit(**_JIT)
def dcm_to_quat_tuple(r00, r01, r02, r10, r11, r12, r20, r21, r22):
    """Shepperd's robust quaternion of a rotation matrix ``R_IB`` (w >= 0)."""
    trace = r00 + r11 + r22
    if trace >= r00 and trace >= r11 and trace >= r22:
        w = 0.5 * math.sqrt(max(1.0 + trace, 0.0))
        f = 0.25 / w
        q = (w, (r21 - r12) * f, (r02 - r20) * f, (r10 - r01) * f)
    elif r00 >= r11 and r00 >= r22:
        x = 0.5 * math.sqrt(max(1.0 + r00 - r11 - r22, 0.0))
        f = 0.25 / x
        q = ((r21 - r12) * f, x, (r01 + r10) * f, (r02 + r20) * f)
    elif r11 >= r22:
        y = 0.5 * math.sqrt(max(1.0 - r00 + r11 - r22, 0.0))
        f = 0.25 / y
        q = ((r02 - r20) * f, (r01 + r10) * f, y, (r12 + r21) * f)
    else:
        z = 0.5 * math.sqrt(max(1.0 - r00 - r11 + r22, 0.0))
        f = 0.25 / z
        q = ((r10 - r01) * f, (r02 + r20) * f, (r12 + r21) * f, z)
    if q[0] < 0.0:
        return (-q[0], -q[1], -q[2], -q[3])
    return q


# --- tuple arithmetic of the Runge-Kutta stages ---------------------------


@njit(**_JIT)
def axpy3(y, h, k):
    """``y + h k`` for 3-tuples."""
    return (y[0] + h * k[0], y[1] + h * k[1], y[2] + h * k[2])


@njit(**_JIT)
def axpy4(y, h, k):
    """``y + h k`` for 4-tuples."""
    return (y[0] + h * k[0], y[1] + h * k[1], y[2] + h * k[2], y[3] + h * k[3])


@njit(**_JIT)
def rk4_combine3(y, s, a, b, c, d):
    """``y + s (a + 2b + 2c + d)`` for 3-tuples: the RK4 update with ``s = h/6``."""
    return (
        y[0] + s * (a[0] + 2.0 * b[0] + 2.0 * c[0] + d[0]),
        y[1] + s * (a[1] + 2.0 * b[1] + 2.0 * c[1] + d[1]),
        y[2] + s * (a[2] + 2.0 * b[2] + 2.0 * c[2] + d[2]),
    )


@njit(**_JIT)
def rk4_combine4(y, s, a, b, c, d):
    """``y + s (a + 2b + 2c + d)`` for 4-tuples."""
    return (
        y[0] + s * (a[0] + 2.0 * b[0] + 2.0 * c[0] + d[0]),
        y[1] + s * (a[1] + 2.0 * b[1] + 2.0 * c[1] + d[1]),
        y[2] + s * (a[2] + 2.0 * b[2] + 2.0 * c[2] + d[2]),
        y[3] + s * (a[3] + 2.0 * b[3] + 2.0 * c[3] + d[3]),
    )


@njit(**_JIT)
def normalized4(q):
    """``q / |q|`` for a 4-tuple."""
    inv = 1.0 / math.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
    return (q[0] * inv, q[1] * inv, q[2] * inv, q[3] * inv)


# Called from plain Python (the callable-torque path), these tiny kernels run
# faster as Python than through numba's dispatcher, which costs ~0.5 us a call.
TUPLE_ARITHMETIC = (axpy3, axpy4, rk4_combine3, rk4_combine4, normalized4)
