"""Compiled guidance: every target's reference attitude, rate and acceleration, and the control errors.

One entry point, :func:`reference`, evaluates any target from its kind code
and flat parameter array (built and validated by :mod:`attsim.guidance`), so
a compiled loop can hold a bank of targets as a ``(n, PARAMETER_LENGTH)``
array and a kind vector::

    q_IR, omega_R_rad_s, omegadot_R_rad_s2 = reference(kind, params, t_s, r_I, v_I, s_I, gmst_rad)

Inputs: time (s), the orbit state in ECI (m, m/s), the Sun's unit vector in
ECI and the Greenwich sidereal angle (rad), all at ``t_s``; 3-tuples (or
anything indexable). Outputs are tuples: ``q_IR`` in attsim's ``q_IB``
convention (R is the body frame when on target), ``ω_R`` and ``ω̇_R`` in R
axes.

Two-vector frames (nadir, Sun, ground): a body triad ``E = [e1 e2 e3]`` is
built once from the primary body axis ``a`` and the secondary ``c``
(``e1 = â``, ``e2 = (a × c)^``, ``e3 = e1 × e2``), an inertial triad ``F`` the
same way from the primary direction ``p`` and the secondary ``s`` at ``t``,
and ``R_IR = F Eᵀ``: ``a`` points exactly along ``p``, and ``c`` lies in the
``(p, s)`` plane on the side of ``s`` (the TRIAD construction).

Rates:

* inertial and slew: exact;
* nadir: exact for a two-body state. The orbit plane is fixed, ``r̂`` turns
  in it at ``|h|/r²``, so the frame turns at ``ω_I = r × v / r²`` and, ``h``
  being constant, ``ω̇_I = -2 (r·v) / r² ω_I``. In R axes both are rotated
  by ``R_RI`` (``d/dt (R_RI ω_I) = R_RI ω̇_I``, the ``ω × ω`` term vanishing).
  A perturbed orbit (J2, drag) turns the plane too; that part is left out;
* Sun and ground tracking: central differences of the reference attitude at
  ``t ± δ`` about ``q(t)``, with ``X(τ) = log(q(t)* ⊗ q(t + τ)) = ω τ + ½ ω̇ τ²
  + O(τ³)`` in R axes::

      ω ≈ (X(δ) - X(-δ)) / 2δ,   ω̇ ≈ (X(δ) + X(-δ)) / δ²

  both with truncation error O(δ²). The Sun is turned about the ecliptic
  pole at its mean motion (the true rate differs by ±3.4 % with the Earth's
  orbital eccentricity, on a rate of 2e-7 rad/s), δ = 1000 s: truncation
  ~ (nδ)² ω = 4e-8 ω, round-off 1e-16/δ² rad/s². Ground tracking: the orbit
  is carried to ``t ± δ`` by one RK4 step of the two-body equation (local
  error ~ (δ √(μ/r³))⁵ r ≈ 1e-22 m) and the Earth turns at
  ``OMEGA_EARTH_RAD_S``; δ = 0.02 s: on a pass 500 km overhead (ω up to
  0.015 rad/s, changing on a time scale of 70 s) the error is ~1e-8 of ω
  and ~1e-7 of ω̇ (truncation; the round-off of the positions, 1e-9 m over
  500 km, adds ~5e-12 rad/s² to ω̇). Evaluated on a J2 or SGP4 state, the
  two-body step leaves out ~1e-3 of the acceleration over ±δ.
"""

from __future__ import annotations

import math

from .._core.jit import LOOP_CALLED, LOOP_INLINED, njit
from ..constants import MU_EARTH_M3_S2, OMEGA_EARTH_RAD_S
from ..dynamics import cross3, dcm_to_quat_tuple, qconj, qmul, qrotate
from ..environment.kernels import ecef_to_eci_tuple
from ..environment.table import GMST, R, V, lerp1, lerp3, table_cell
from ..environment.table import SUN as SUN_COLUMN

__all__ = ["INERTIAL", "NADIR", "SUN", "SLEW", "GROUND", "KIND_NAMES", "PARAMETER_LENGTH", "SUN_DELTA_S",
           "GROUND_DELTA_S", "reference", "reference_many", "frame_quaternion", "two_body_step",
           "station_elevation_sin", "attitude_error", "error_angle_deg", "axis_error_deg", "error_vector",
           "rate_error", "reference_now"]

_JIT = dict(cache=True, nogil=True, error_model="numpy", **LOOP_CALLED)  # attsim._core.jit: no refcounts

INERTIAL, NADIR, SUN, SLEW, GROUND = 0, 1, 2, 3, 4
KIND_NAMES = ("inertial", "nadir", "sun", "slew", "ground")
PARAMETER_LENGTH = 20  # every target's parameters padded to this, so a bank is one 2-D array

SUN_DELTA_S = 1000.0
GROUND_DELTA_S = 0.02

# Parameter layouts (offsets into the flat array), written by attsim.guidance:
#   inertial  q_IR [0:4]
#   nadir     body triad E [0:9] (e1, e2, e3)
#   sun       E [0:9], secondary inertial unit [9:12], ecliptic pole (ECI) [12:15], Sun mean motion [15] (rad/s)
#   slew      from q [0:4], to q (sign of the short way) [4:8], axis [8:11], angle [11], accel [12], peak rate [13],
#             accel time [14], coast time [15], start time [16]
#   ground    E [0:9], station ECEF [9:12] (m), station up (ECEF unit) [12:15], sin(min elevation) [15]


@njit(**_JIT)
def _dot(u, v):
    return u[0] * v[0] + u[1] * v[1] + u[2] * v[2]


@njit(**_JIT)
def _scale(k, v):
    return (k * v[0], k * v[1], k * v[2])


@njit(**_JIT)
def _unit(v):
    return _scale(1.0 / math.sqrt(_dot(v, v)), v)


@njit(**_JIT)
def frame_quaternion(params, p, s):
    """``q_IR`` of ``R_IR = F Eᵀ``: body triad ``E`` in ``params[0:9]``, inertial triad from ``p`` and ``s``.

    Where ``s`` is within 1e-12 rad of ``±p`` the roll about ``p`` is
    undefined; the inertial axis least aligned with ``p`` stands in for ``s``
    so the result stays finite.
    """
    f1 = _unit(p)
    n = cross3(f1, s)
    if _dot(n, n) <= 1e-24 * _dot(s, s):
        ax, ay, az = abs(f1[0]), abs(f1[1]), abs(f1[2])
        if ax <= ay and ax <= az:
            n = cross3(f1, (1.0, 0.0, 0.0))
        elif ay <= az:
            n = cross3(f1, (0.0, 1.0, 0.0))
        else:
            n = cross3(f1, (0.0, 0.0, 1.0))
    f2 = _unit(n)
    f3 = cross3(f1, f2)
    e = params
    return dcm_to_quat_tuple(_entry(f1, f2, f3, e, 0, 0), _entry(f1, f2, f3, e, 0, 1), _entry(f1, f2, f3, e, 0, 2),
                             _entry(f1, f2, f3, e, 1, 0), _entry(f1, f2, f3, e, 1, 1), _entry(f1, f2, f3, e, 1, 2),
                             _entry(f1, f2, f3, e, 2, 0), _entry(f1, f2, f3, e, 2, 1), _entry(f1, f2, f3, e, 2, 2))


@njit(**_JIT)
def _entry(f1, f2, f3, e, i, j):
    """``(F Eᵀ)_ij`` with the body triad's columns ``e1, e2, e3`` stored one after the other in ``e[0:9]``."""
    return f1[i] * e[j] + f2[i] * e[3 + j] + f3[i] * e[6 + j]


@njit(**_JIT)
def _two_body_acceleration(r):
    r2 = _dot(r, r)
    return _scale(-MU_EARTH_M3_S2 / (r2 * math.sqrt(r2)), r)


@njit(**_JIT)
def _add(u, k, v):
    return (u[0] + k * v[0], u[1] + k * v[1], u[2] + k * v[2])


@njit(**_JIT)
def two_body_step(r, v, h_s):
    """``(r, v)`` after one classical RK4 step of ``r̈ = -μ r / |r|³`` of ``h_s`` seconds (may be negative)."""
    a1 = _two_body_acceleration(r)
    r2, v2 = _add(r, 0.5 * h_s, v), _add(v, 0.5 * h_s, a1)
    a2 = _two_body_acceleration(r2)
    r3, v3 = _add(r, 0.5 * h_s, v2), _add(v, 0.5 * h_s, a2)
    a3 = _two_body_acceleration(r3)
    r4, v4 = _add(r, h_s, v3), _add(v, h_s, a3)
    a4 = _two_body_acceleration(r4)
    k = h_s / 6.0
    return _rk4_sum(r, k, v, v2, v3, v4), _rk4_sum(v, k, a1, a2, a3, a4)


@njit(**_JIT)
def _rk4_sum(y, k, d1, d2, d3, d4):
    return (y[0] + k * (d1[0] + 2.0 * d2[0] + 2.0 * d3[0] + d4[0]),
            y[1] + k * (d1[1] + 2.0 * d2[1] + 2.0 * d3[1] + d4[1]),
            y[2] + k * (d1[2] + 2.0 * d2[2] + 2.0 * d3[2] + d4[2]))


@njit(**_JIT)
def _rotvec(q):
    """Rotation vector (rad) of ``±q``, the shorter way: ``2 atan2(|u|, |w|) u / |u|``."""
    w, x, y, z = q
    if w < 0.0:
        w, x, y, z = -w, -x, -y, -z
    n = math.sqrt(x * x + y * y + z * z)
    if n < 1e-8:
        k = 2.0 / w  # angle / n to second order, as 2 atan(n/w)/n = (2/w)(1 - n²/3w²) and n² < 1e-16
    else:
        k = 2.0 * math.atan2(n, w) / n
    return (k * x, k * y, k * z)


@njit(**_JIT)
def _differenced(q_minus, q0, q_plus, delta):
    """``(q0, ω, ω̇)`` from central differences of the logs about ``q0`` (module docstring)."""
    c = qconj(q0)
    xm = _rotvec(qmul(c, q_minus))
    xp = _rotvec(qmul(c, q_plus))
    a, b = 0.5 / delta, 1.0 / (delta * delta)
    return q0, ((xp[0] - xm[0]) * a, (xp[1] - xm[1]) * a, (xp[2] - xm[2]) * a), \
        ((xp[0] + xm[0]) * b, (xp[1] + xm[1]) * b, (xp[2] + xm[2]) * b)


@njit(**_JIT)
def _nadir(params, r, v):
    q = frame_quaternion(params, _scale(-1.0, r), v)
    r2 = _dot(r, r)
    w_i = _scale(1.0 / r2, cross3(r, v))
    wd_i = _scale(-2.0 * _dot(r, v) / r2, w_i)
    qc = qconj(q)
    return q, qrotate(qc, w_i), qrotate(qc, wd_i)


@njit(**_JIT)
def _sun_at(params, s, tau):
    """The reference with the Sun turned about the ecliptic pole by its mean motion over ``tau`` (Rodrigues)."""
    k = (params[12], params[13], params[14])
    angle = params[15] * tau
    c, sn = math.cos(angle), math.sin(angle)
    kxs = cross3(k, s)
    ks = _dot(k, s) * (1.0 - c)
    p = (s[0] * c + kxs[0] * sn + k[0] * ks, s[1] * c + kxs[1] * sn + k[1] * ks, s[2] * c + kxs[2] * sn + k[2] * ks)
    return frame_quaternion(params, p, (params[9], params[10], params[11]))


@njit(**_JIT)
def _sun(params, s):
    return _differenced(_sun_at(params, s, -SUN_DELTA_S), _sun_at(params, s, 0.0), _sun_at(params, s, SUN_DELTA_S),
                        SUN_DELTA_S)


@njit(**_JIT)
def _slew(params, t_s):
    tau = t_s - params[16]
    theta, accel, peak, t_acc, t_coast = params[11], params[12], params[13], params[14], params[15]
    total = 2.0 * t_acc + t_coast
    zero = (0.0, 0.0, 0.0)
    if tau <= 0.0:
        return (params[0], params[1], params[2], params[3]), zero, zero
    if tau >= total:
        return (params[4], params[5], params[6], params[7]), zero, zero
    if tau < t_acc:
        phi, rate, acc = 0.5 * accel * tau * tau, accel * tau, accel
    elif tau <= t_acc + t_coast:
        phi, rate, acc = 0.5 * accel * t_acc * t_acc + peak * (tau - t_acc), peak, 0.0
    else:
        left = total - tau
        phi, rate, acc = theta - 0.5 * accel * left * left, accel * left, -accel
    e = (params[8], params[9], params[10])
    half = 0.5 * phi
    sh = math.sin(half)
    q = qmul((params[0], params[1], params[2], params[3]), (math.cos(half), sh * e[0], sh * e[1], sh * e[2]))
    return q, _scale(rate, e), _scale(acc, e)


@njit(**_JIT)
def station_elevation_sin(params, r_I, gmst_rad):
    """Sine of the satellite's elevation seen from the station in ``params[9:15]`` (ECEF position, up)."""
    station = ecef_to_eci_tuple((params[9], params[10], params[11]), gmst_rad)
    up = ecef_to_eci_tuple((params[12], params[13], params[14]), gmst_rad)
    d = (r_I[0] - station[0], r_I[1] - station[1], r_I[2] - station[2])
    return _dot(d, up) / math.sqrt(_dot(d, d))


@njit(**_JIT)
def _ground_at(params, r, v, gmst_rad, tau):
    if tau != 0.0:
        r, v = two_body_step(r, v, tau)
    station = ecef_to_eci_tuple((params[9], params[10], params[11]), gmst_rad + OMEGA_EARTH_RAD_S * tau)
    return frame_quaternion(params, (station[0] - r[0], station[1] - r[1], station[2] - r[2]), v)


@njit(**_JIT)
def _ground(params, r, v, gmst_rad):
    if station_elevation_sin(params, r, gmst_rad) < params[15]:
        return _nadir(params, r, v)
    d = GROUND_DELTA_S
    return _differenced(_ground_at(params, r, v, gmst_rad, -d), _ground_at(params, r, v, gmst_rad, 0.0),
                        _ground_at(params, r, v, gmst_rad, d), d)


@njit(**_JIT)
def reference(kind, params, t_s, r_I, v_I, s_I, gmst_rad):
    """``(q_IR, ω_R, ω̇_R)`` of the target ``(kind, params)`` at ``t_s`` (tuples; module docstring)."""
    r = (float(r_I[0]), float(r_I[1]), float(r_I[2]))
    v = (float(v_I[0]), float(v_I[1]), float(v_I[2]))
    if kind == NADIR:
        return _nadir(params, r, v)
    if kind == SUN:
        return _sun(params, (float(s_I[0]), float(s_I[1]), float(s_I[2])))
    if kind == SLEW:
        return _slew(params, t_s)
    if kind == GROUND:
        return _ground(params, r, v, gmst_rad)
    # INERTIAL (and any unknown kind: hold the attitude in params[0:4])
    zero = (0.0, 0.0, 0.0)
    return (params[0], params[1], params[2], params[3]), zero, zero


@njit(**_JIT)
def reference_many(kind, params, t_s, r_I, v_I, s_I, gmst_rad, q_out, w_out, wd_out):
    """:func:`reference` at each of ``n`` instants: inputs ``(n,)`` and ``(n, 3)``, outputs written in place."""
    for i in range(t_s.shape[0]):
        q, w, wd = reference(kind, params, t_s[i], (r_I[i, 0], r_I[i, 1], r_I[i, 2]),
                             (v_I[i, 0], v_I[i, 1], v_I[i, 2]), (s_I[i, 0], s_I[i, 1], s_I[i, 2]), gmst_rad[i])
        for j in range(4):
            q_out[i, j] = q[j]
        for j in range(3):
            w_out[i, j] = w[j]
            wd_out[i, j] = wd[j]


# --- control errors -------------------------------------------------------------------------------------------------


@njit(**_JIT)
def attitude_error(q_IB, q_IR):
    """``q_RB = q_IR* ⊗ q_IB`` with ``w >= 0``: the body attitude relative to the reference, the shorter way."""
    e = qmul(qconj(q_IR), q_IB)
    if e[0] < 0.0:
        return (-e[0], -e[1], -e[2], -e[3])
    return e


@njit(**_JIT)
def error_angle_deg(q_IB, q_IR):
    """Angle of the rotation from reference to body (deg, [0, 180]): ``2 atan2(|vec q_RB|, |w|)``."""
    e = attitude_error(q_IB, q_IR)
    return math.degrees(2.0 * math.atan2(math.sqrt(e[1] * e[1] + e[2] * e[2] + e[3] * e[3]), e[0]))


@njit(**_JIT)
def axis_error_deg(q_IB, q_IR, body_axis):
    """Angle (deg) between where ``body_axis`` points and where the reference wants it: ``∠(R_IB a, R_IR a)``."""
    u = qrotate(q_IB, body_axis)
    w = qrotate(q_IR, body_axis)
    return math.degrees(math.atan2(math.sqrt(_dot(cross3(u, w), cross3(u, w))), _dot(u, w)))


@njit(**_JIT)
def error_vector(q_IB, q_IR):
    """``2 vec(q_RB)`` (rad, body axes): the small-angle error per axis."""
    e = attitude_error(q_IB, q_IR)
    return (2.0 * e[1], 2.0 * e[2], 2.0 * e[3])


@njit(**_JIT)
def rate_error(q_IB, q_IR, omega_B, omega_R):
    """``ω_B - R_BR ω_R`` (rad/s, body axes): the body rate relative to the reference frame."""
    w = qrotate(qconj(attitude_error(q_IB, q_IR)), omega_R)
    return (omega_B[0] - w[0], omega_B[1] - w[1], omega_B[2] - w[2])


@njit(cache=True, nogil=True, error_model="numpy", **LOOP_INLINED)
def reference_now(kind, params, t_s, env_t, env_v):
    """``(q_IR, ω_R, ω̇_R)`` of the target ``(kind, params)`` at ``t_s``, its inputs from the environment table.

    Without a table (no environment) the target gets zeros: only targets
    that need no orbit, Sun or Earth rotation are allowed there.
    """
    if env_t.shape[0] == 0:
        zero = (0.0, 0.0, 0.0)
        return reference(kind, params, t_s, zero, zero, zero, 0.0)
    k, f = table_cell(env_t, t_s)
    return reference(kind, params, t_s, lerp3(env_v, k, f, R), lerp3(env_v, k, f, V), lerp3(env_v, k, f, SUN_COLUMN),
                     lerp1(env_v, k, f, GMST))
