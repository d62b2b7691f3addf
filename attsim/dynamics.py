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

import math

import numpy as np
from numba import njit

__all__ = [
    "quat_rates",
    "euler_rates",
    "rigid_body_derivs",
    "matrix_to_tuple",
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
    "interpolate_vector",
    "table_cell",
    "lerp3",
    "lerp1",
    "gravity_gradient_torque",
    "face_torques",
    "plant_torque",
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
    return tuple(float(v) for v in np.asarray(matrix, dtype=np.float64).reshape(9))


@njit(**_JIT)
def rigid_body_derivs(q, w, tau, J, Jinv):
    """``(dq/dt, dω/dt)`` of the rigid body: one integrator stage's work."""
    return quat_rates(q, w), euler_rates(w, tau, J, Jinv)


# --- tuple quaternion kernels shared by the integrators -------------------


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


# --- the plant under held commands (used by the mission engine) -----------


@njit(**_JIT)
def table_cell(table_t, t):
    """``(k, f)``: ``t`` lies a fraction ``f`` of the way from row ``k`` to ``k + 1``.

    Held at the ends (``f`` is 0 or 1); ``k = -1`` for an empty table.
    """
    n = table_t.size
    if n == 0:
        return -1, 0.0
    if n == 1 or t <= table_t[0]:
        return 0, 0.0
    if t >= table_t[n - 1]:
        return n - 2, 1.0
    # uniform grids are the common case: guess the cell, then correct
    k = int((t - table_t[0]) / (table_t[n - 1] - table_t[0]) * (n - 1))
    k = min(max(k, 0), n - 2)
    while table_t[k + 1] < t:
        k += 1
    while table_t[k] > t:
        k -= 1
    return k, (t - table_t[k]) / (table_t[k + 1] - table_t[k])


@njit(**_JIT)
def lerp3(table_v, k, f, col):
    """Columns ``col..col+2`` of the table, interpolated in cell ``(k, f)``."""
    if k < 0:
        return (0.0, 0.0, 0.0)
    if table_v.shape[0] == 1:
        return (table_v[0, col], table_v[0, col + 1], table_v[0, col + 2])
    a, b = table_v[k], table_v[k + 1]
    return (a[col] + f * (b[col] - a[col]), a[col + 1] + f * (b[col + 1] - a[col + 1]), a[col + 2] + f * (b[col + 2] - a[col + 2]))


@njit(**_JIT)
def lerp1(table_v, k, f, col):
    if k < 0:
        return 0.0
    if table_v.shape[0] == 1:
        return table_v[0, col]
    return table_v[k, col] + f * (table_v[k + 1, col] - table_v[k, col])


@njit(**_JIT)
def interpolate_vector(table_t, table_v, t):
    """The first three columns of a table at ``t`` (zeros for an empty table)."""
    k, f = table_cell(table_t, t)
    return lerp3(table_v, k, f, 0)


# columns of the environment table (ECI, SI): see attsim.environment.Environment
ENV_B, ENV_R, ENV_V, ENV_RHO, ENV_SUN, ENV_SRP_PRESSURE, ENV_WIDTH = 0, 3, 6, 9, 10, 13, 14
MU_EARTH = 3.986004418e14  # m^3/s^2
OMEGA_EARTH = 7.2921150e-5  # rad/s: the atmosphere co-rotates with the Earth


@njit(**_JIT)
def gravity_gradient_torque(n_B, mu_over_r3, J):
    """``3 μ/r³ (n × J n)`` with ``n`` the unit nadir (or zenith) in body axes."""
    jx = J[0] * n_B[0] + J[1] * n_B[1] + J[2] * n_B[2]
    jy = J[3] * n_B[0] + J[4] * n_B[1] + J[5] * n_B[2]
    jz = J[6] * n_B[0] + J[7] * n_B[1] + J[8] * n_B[2]
    k = 3.0 * mu_over_r3
    return (k * (n_B[1] * jz - n_B[2] * jy), k * (n_B[2] * jx - n_B[0] * jz), k * (n_B[0] * jy - n_B[1] * jx))


@njit(**_JIT)
def face_torques(faces, v_B, rho, s_B, p_srp):
    """Aerodynamic and solar-pressure torques on a faceted body (body axes).

    ``faces`` rows: ``area, nx, ny, nz, cpx, cpy, cpz, cd, specular, diffuse``
    (centre of pressure from the centre of mass). Per face with outward
    normal ``n`` (Wertz, *Spacecraft Attitude Determination and Control*,
    secs. 17.2; Montenbruck & Gill, sec. 3.4)::

        drag, when n·v̂ > 0:  F = -½ ρ C_d A |v|² (n·v̂) v̂
        light, when n·ŝ > 0: F = -p A (n·ŝ) [(1 - ρ_s) ŝ + 2 (ρ_s n·ŝ + ρ_d/3) n]

    with ``v`` the velocity relative to the atmosphere, ``ŝ`` toward the Sun
    and ``p`` the solar pressure (zero in shadow); each torque is ``cp × F``.
    """
    speed = math.sqrt(v_B[0] * v_B[0] + v_B[1] * v_B[1] + v_B[2] * v_B[2])
    ax = ay = az = sx = sy = sz = 0.0
    for i in range(faces.shape[0]):
        area, nx, ny, nz = faces[i, 0], faces[i, 1], faces[i, 2], faces[i, 3]
        cx, cy, cz = faces[i, 4], faces[i, 5], faces[i, 6]
        if rho > 0.0 and speed > 0.0:
            c = (nx * v_B[0] + ny * v_B[1] + nz * v_B[2]) / speed
            if c > 0.0:
                k = -0.5 * rho * faces[i, 7] * area * speed * c
                fx, fy, fz = k * v_B[0], k * v_B[1], k * v_B[2]
                ax += cy * fz - cz * fy
                ay += cz * fx - cx * fz
                az += cx * fy - cy * fx
        if p_srp > 0.0:
            c = nx * s_B[0] + ny * s_B[1] + nz * s_B[2]
            if c > 0.0:
                spec, diff = faces[i, 8], faces[i, 9]
                a = -p_srp * area * c
                ks = a * (1.0 - spec)
                kn = a * 2.0 * (spec * c + diff / 3.0)
                fx, fy, fz = ks * s_B[0] + kn * nx, ks * s_B[1] + kn * ny, ks * s_B[2] + kn * nz
                sx += cy * fz - cz * fy
                sy += cz * fx - cx * fz
                sz += cx * fy - cy * fx
    return (ax, ay, az), (sx, sy, sz)


@njit(**_JIT)
def relative_wind_velocity(env_v, k, f):
    """Velocity relative to the co-rotating atmosphere, ECI: ``v - ω_E × r``."""
    r = lerp3(env_v, k, f, ENV_R)
    v = lerp3(env_v, k, f, ENV_V)
    return (v[0] + OMEGA_EARTH * r[1], v[1] - OMEGA_EARTH * r[0], v[2])


@njit(**_JIT)
def plant_torque(t, q, w, inputs):
    """Torque on the rigid part of a gyrostat spacecraft under held commands.

    ``inputs = (t0, tau_ext_B, dipole_B, tau_wheels_B, h_wheels0_B, env_t,
    env_v, faces, flags, J)``: commands held since ``t0`` (zero-order hold),
    the environment table (ECI; columns ``ENV_*``), the body's faces, the
    switches ``flags = (gravity gradient, aerodynamic, solar pressure)`` and
    the inertia as a row-major 9-tuple::

        h_w(t) = h_w0 + τ_w (t - t0)          wheel momentum, body axes
        τ = τ_ext + m × B_B - τ_w - ω × h_w(t) + τ_gg + τ_aero + τ_srp

    so that Euler's equation for the body, ``J dω/dt = τ - ω × J ω``, is the
    gyrostat's (Markley & Crassidis 2014, sec. 3.3.5). Every environment
    quantity is interpolated in the table at the stage time and rotated into
    the body with the stage attitude, so torques that depend on the attitude
    follow it inside the integration instead of being frozen at the event.
    """
    t0, tau_ext, dipole, tau_w, h0, env_t, env_v, faces, flags, J = inputs
    dt = t - t0
    hx = h0[0] + tau_w[0] * dt
    hy = h0[1] + tau_w[1] * dt
    hz = h0[2] + tau_w[2] * dt
    # stage quaternions are off unit norm by O(h^2): rotate with the unit one
    qc = normalized4(qconj(q))
    k, f = table_cell(env_t, t)
    b = qrotate(qc, lerp3(env_v, k, f, ENV_B))
    tx = tau_ext[0] + dipole[1] * b[2] - dipole[2] * b[1] - tau_w[0] - (w[1] * hz - w[2] * hy)
    ty = tau_ext[1] + dipole[2] * b[0] - dipole[0] * b[2] - tau_w[1] - (w[2] * hx - w[0] * hz)
    tz = tau_ext[2] + dipole[0] * b[1] - dipole[1] * b[0] - tau_w[2] - (w[0] * hy - w[1] * hx)
    if k >= 0 and flags[0] != 0.0:
        r = lerp3(env_v, k, f, ENV_R)
        r2 = r[0] * r[0] + r[1] * r[1] + r[2] * r[2]
        rn = math.sqrt(r2)
        n_B = qrotate(qc, (r[0] / rn, r[1] / rn, r[2] / rn))
        g = gravity_gradient_torque(n_B, MU_EARTH / (r2 * rn), J)
        tx, ty, tz = tx + g[0], ty + g[1], tz + g[2]
    if k >= 0 and (flags[1] != 0.0 or flags[2] != 0.0):
        rho = lerp1(env_v, k, f, ENV_RHO) if flags[1] != 0.0 else 0.0
        p_srp = lerp1(env_v, k, f, ENV_SRP_PRESSURE) if flags[2] != 0.0 else 0.0
        aero, srp = face_torques(faces, qrotate(qc, relative_wind_velocity(env_v, k, f)), rho,
                                 qrotate(qc, lerp3(env_v, k, f, ENV_SUN)), p_srp)
        tx, ty, tz = tx + aero[0] + srp[0], ty + aero[1] + srp[1], tz + aero[2] + srp[2]
    return (tx, ty, tz)


# Called from plain Python (the callable-torque path), these tiny kernels run
# faster as Python than through numba's dispatcher, which costs ~0.5 us a call.
TUPLE_ARITHMETIC = (axpy3, axpy4, rk4_combine3, rk4_combine4, normalized4)
