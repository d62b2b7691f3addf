"""Disturbance torques on the body: one compiled source for the plant and the telemetry.

The plant evaluates :func:`disturbance_torques` at every integrator stage;
the recorder evaluates the same function at each telemetry row, so what is
logged is what acted. All inputs are plain floats and arrays in SI; the
environment comes from an :class:`~attsim.environment.table.EnvironmentTable`.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from .._core.jit import LOOP_INLINED, njit
from ..constants import MU_EARTH_M3_S2, OMEGA_EARTH_RAD_S
from ..dynamics import normalized4, qconj, qrotate
from .table import P_SRP, RHO, SUN, B_I, R, V, lerp1, lerp3, table_cell

__all__ = ["NO_DISTURBANCES", "Disturbances", "DISTURBANCE_NAMES", "FACE_COLUMNS", "gravity_gradient_torque",
           "face_torques", "relative_wind_velocity", "disturbance_torques"]

_JIT = dict(cache=True, nogil=True, error_model="numpy", **LOOP_INLINED)  # attsim._core.jit: inlined, no refcounts

# the short names used in telemetry columns tau_<name>_x/y/z, in the order of Disturbances
DISTURBANCE_NAMES = ("gg", "aero", "srp", "res")
# columns of the faces array (one row per Face)
FACE_COLUMNS = ("area_m2", "nx", "ny", "nz", "cp_x_m", "cp_y_m", "cp_z_m", "drag_coefficient", "specular", "diffuse")


class Disturbances(NamedTuple):
    """The disturbance torques at one instant, each a body-axes 3-tuple in N m."""

    gg: tuple
    aero: tuple
    srp: tuple
    res: tuple


class DisturbanceSwitches(NamedTuple):
    """Which disturbances act (1.0) or not (0.0), as floats for the compiled code, and the ``μ`` of the orbit's
    gravity (m³/s², for the gravity gradient)."""

    gravity_gradient: float
    aerodynamic: float
    solar_pressure: float
    gravity_mu_m3_s2: float


NO_DISTURBANCES = DisturbanceSwitches(0.0, 0.0, 0.0, MU_EARTH_M3_S2)  # no environment: nothing acts


@njit(**_JIT)
def gravity_gradient_torque(n_B, mu_over_r3, J):
    """``3 μ/r³ (n × J n)`` with ``n`` the unit nadir (or zenith) in body axes.

    Wertz, *Spacecraft Attitude Determination and Control*, sec. 17.2.1;
    ``J`` is the inertia as a row-major 9-tuple.
    """
    jx = J[0] * n_B[0] + J[1] * n_B[1] + J[2] * n_B[2]
    jy = J[3] * n_B[0] + J[4] * n_B[1] + J[5] * n_B[2]
    jz = J[6] * n_B[0] + J[7] * n_B[1] + J[8] * n_B[2]
    k = 3.0 * mu_over_r3
    return (k * (n_B[1] * jz - n_B[2] * jy), k * (n_B[2] * jx - n_B[0] * jz), k * (n_B[0] * jy - n_B[1] * jx))


@njit(**_JIT)
def face_torques(faces, v_B, rho, s_B, p_srp):
    """Aerodynamic and solar-pressure torques on a faceted body (body axes).

    ``faces`` rows: :data:`FACE_COLUMNS` (centre of pressure from the centre
    of mass). Per face with outward normal ``n`` (Wertz, secs. 17.2;
    Montenbruck & Gill, *Satellite Orbits*, sec. 3.4)::

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
    r = lerp3(env_v, k, f, R)
    v = lerp3(env_v, k, f, V)
    return (v[0] + OMEGA_EARTH_RAD_S * r[1], v[1] - OMEGA_EARTH_RAD_S * r[0], v[2])


@njit(**_JIT)
def disturbance_torques(t, q, env_t, env_v, faces, switches, J, residual_dipole):
    """Every disturbance torque at time ``t`` and attitude ``q_IB`` (body axes, N m).

    Returns :class:`Disturbances`: gravity gradient, aerodynamic, solar
    pressure (each only when its switch is on and a table exists) and the
    residual dipole's ``m_res × B_B``. Environment quantities are
    interpolated in the table at ``t`` and rotated into the body with ``q``
    (normalised first: integrator stage quaternions are off unit norm by
    O(h²)).
    """
    zero = (0.0, 0.0, 0.0)
    k, f = table_cell(env_t, t)
    if k < 0:
        return Disturbances(zero, zero, zero, zero)
    qc = normalized4(qconj(q))
    gg = aero = srp = zero
    if switches[0] != 0.0:
        r = lerp3(env_v, k, f, R)
        r2 = r[0] * r[0] + r[1] * r[1] + r[2] * r[2]
        rn = math.sqrt(r2)
        gg = gravity_gradient_torque(qrotate(qc, (r[0] / rn, r[1] / rn, r[2] / rn)),
                                     switches.gravity_mu_m3_s2 / (r2 * rn), J)
    if switches[1] != 0.0 or switches[2] != 0.0:
        rho = lerp1(env_v, k, f, RHO) if switches[1] != 0.0 else 0.0
        p_srp = lerp1(env_v, k, f, P_SRP) if switches[2] != 0.0 else 0.0
        aero, srp = face_torques(faces, qrotate(qc, relative_wind_velocity(env_v, k, f)), rho,
                                 qrotate(qc, lerp3(env_v, k, f, SUN)), p_srp)
    b = qrotate(qc, lerp3(env_v, k, f, B_I))
    m = residual_dipole
    res = (m[1] * b[2] - m[2] * b[1], m[2] * b[0] - m[0] * b[2], m[0] * b[1] - m[1] * b[0])
    return Disturbances(gg, aero, srp, res)
