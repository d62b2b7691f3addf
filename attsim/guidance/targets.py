"""Guidance targets: the reference attitude, rate and acceleration a controller tracks.

A target is configured (and validated) once; at time ``t`` with the orbit
state ``r_I, v_I`` (ECI, m and m/s), the Sun's unit vector ``s_I`` (ECI) and
the Greenwich sidereal angle ``gmst_rad`` it evaluates to a
:class:`Reference` ``(q_IR, omega_R_rad_s, omegadot_R_rad_s2)``: ``q_IR`` in
attsim's ``q_IB`` convention (R is where the body frame should be), the
reference frame's angular velocity and its derivative in R axes.

Targets: :class:`Inertial`, :class:`NadirPointing` (LVLH by default),
:class:`SunPointing`, :class:`Slew` (eigen-axis, bang-coast-bang) and
:class:`GroundTarget` (tracks a station while it sees the satellite above a
minimum elevation, holds nadir otherwise).

Compiled form: each target has ``kind`` (an int code) and ``parameters`` (a
float64 array of :data:`PARAMETER_LENGTH`); the numba function
:func:`attsim.guidance.kernels.reference` evaluates any of them, so a compiled
loop can hold a bank of targets (``np.stack([t.parameters for t in bank])``).
The equations, the rates' derivations and the central-difference steps and
errors are documented in :mod:`attsim.guidance.kernels`.

Control errors, here batched over leading axes (numpy) and in
:mod:`attsim.guidance.kernels` as compiled tuple kernels of the same names:
:func:`attitude_error` ``q_RB = q_IR* ⊗ q_IB`` (w >= 0),
:func:`error_angle_deg`, :func:`axis_error_deg`, :func:`error_vector`
(``2 vec q_RB``) and :func:`rate_error` (``ω_B - R_BR ω_R``).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from . import kernels as _k
from .._core.validate import finite_array, positive_scalar, real_number, unit_quaternion, vector3
from ..constants import DEG_RAD, ECLIPTIC_OBLIQUITY_RAD, SUN_MEAN_MOTION_RAD_S
from ..environment.frames import geodetic_to_ecef, geodetic_up
from ..errors import InputError
from ..rotations import quat_conjugate, quat_multiply, quat_rotate

__all__ = ["Reference", "Target", "Inertial", "NadirPointing", "SunPointing", "Slew", "GroundTarget",
           "attitude_error", "error_angle_deg", "axis_error_deg", "error_vector", "rate_error", "PARAMETER_LENGTH",
           "UNIT_QUATERNION_TOLERANCE"]

PARAMETER_LENGTH = _k.PARAMETER_LENGTH

# A configured attitude further than this from unit norm is a mistake, not round-off, and is refused.
UNIT_QUATERNION_TOLERANCE = 1e-6

# |â × ĉ| below which two body axes count as parallel (the secondary would not fix the roll about the primary).
_PARALLEL_TOLERANCE = 1e-6


class Reference(NamedTuple):
    """The reference attitude ``q_IR``, its rate ``ω_R`` (rad/s) and acceleration ``ω̇_R`` (rad/s²) in R axes.

    Parameters
    ----------
    q_IR : ndarray (4,)
        The reference attitude, scalar first.
    omega_R_rad_s : ndarray (3,)
        Its rate, rad/s, R axes.
    omegadot_R_rad_s2 : ndarray (3,)
        Its acceleration, rad/s², R axes.
    """

    q_IR: np.ndarray
    omega_R_rad_s: np.ndarray
    omegadot_R_rad_s2: np.ndarray


# --- configuration checks -------------------------------------------------------------------------------------------


def _unit_quaternion(value, field: str) -> np.ndarray:
    q = finite_array(value, field, (4,))
    norm = float(np.linalg.norm(q))
    if abs(norm - 1.0) > UNIT_QUATERNION_TOLERANCE:
        raise InputError(field, f"must be a unit quaternion (w, x, y, z), | |q| - 1 | <= {UNIT_QUATERNION_TOLERANCE:g}",
                         f"|q| = {norm:.9g}")
    return unit_quaternion(q, field)


def _axis(value, field: str) -> np.ndarray:
    v = vector3(value, field)
    norm = float(np.linalg.norm(v))
    if norm == 0.0:
        raise InputError(field, "must be a non-zero 3-vector", f"got {value!r}")
    return v / norm


def _not_parallel(primary: np.ndarray, secondary: np.ndarray, field: str, primary_field: str) -> None:
    if np.linalg.norm(np.cross(primary, secondary)) < _PARALLEL_TOLERANCE:
        raise InputError(field, f"must not be parallel to {primary_field} (it fixes the rotation about it)",
                         f"{primary_field} = {primary.tolist()}, {field} = {secondary.tolist()}")


def _body_triad(a: np.ndarray, c: np.ndarray) -> np.ndarray:
    """``(e1, e2, e3)`` flattened: ``e1 = â``, ``e2 = (a × c)^``, ``e3 = e1 × e2``."""
    e2 = np.cross(a, c)
    e2 /= np.linalg.norm(e2)
    return np.concatenate([a, e2, np.cross(a, e2)])


def _least_aligned_axis(a: np.ndarray) -> np.ndarray:
    return np.eye(3)[int(np.argmin(np.abs(a)))]


def _batch(value, field: str, n: int | None, width: int) -> np.ndarray:
    array = finite_array(value, field)
    if array.shape[-1:] != (width,) or array.ndim > 2:
        raise InputError(field, f"must have shape ({width},) or (n, {width})", f"got shape {array.shape}")
    if n is None and array.ndim == 2:
        raise InputError(field, f"must have shape ({width},) for a single time t_s", f"got shape {array.shape}")
    if n is not None and array.ndim == 2 and array.shape[0] != n:
        raise InputError(field, f"must have one row per time ({n})", f"got shape {array.shape}")
    return array


# --- targets --------------------------------------------------------------------------------------------------------


class Target:
    """A guidance target: ``kind``, ``parameters`` (the compiled form) and :meth:`reference_at`.

    ``uses_orbit``, ``uses_sun`` and ``uses_earth_rotation`` say which of the
    evaluation's inputs the target reads.
    """

    kind: int = -1
    uses_orbit = False
    uses_sun = False
    uses_earth_rotation = False

    def _set_parameters(self, *groups) -> None:
        values = np.concatenate([np.atleast_1d(np.asarray(g, dtype=np.float64)) for g in groups])
        parameters = np.zeros(PARAMETER_LENGTH)
        parameters[: values.size] = values
        parameters.setflags(write=False)
        self.parameters = parameters

    def reference_at(self, t_s, r_I=None, v_I=None, s_I=None, gmst_rad=None) -> Reference:
        """The reference at ``t_s`` (s): one time, or an array of ``n`` times with inputs of one row each.

        ``r_I``, ``v_I`` (ECI, m, m/s), ``s_I`` (ECI unit vector) and
        ``gmst_rad`` are needed only by the targets that read them; each is a
        3-vector (scalar for ``gmst_rad``) or one row per time. The result
        has shapes ``(4,), (3,), (3,)`` for a scalar time, else ``(n, 4), (n, 3), (n, 3)``.
        """
        t = finite_array(t_s, "t_s")
        if t.ndim > 1:
            raise InputError("t_s", "must be a number or a 1-D array of times", f"got shape {t.shape}")
        n = t.size if t.ndim == 1 else None
        needs = (("r_I", r_I, self.uses_orbit, 3), ("v_I", v_I, self.uses_orbit, 3), ("s_I", s_I, self.uses_sun, 3),
                 ("gmst_rad", gmst_rad, self.uses_earth_rotation, 1))
        inputs = []
        for field, value, needed, width in needs:
            if value is None:
                if needed:
                    raise InputError(field, f"is needed by {type(self).__name__}")
                value = np.zeros(width)
            elif width == 1:
                value = finite_array(value, field)[..., None]
            inputs.append(_batch(value, field, n, width))
        count = 1 if n is None else n
        r, v, s, g = (np.ascontiguousarray(np.broadcast_to(a, (count, a.shape[-1]))) for a in inputs)
        q_out, w_out, wd_out = np.empty((count, 4)), np.empty((count, 3)), np.empty((count, 3))
        _k.reference_many(self.kind, self.parameters, np.atleast_1d(t).astype(np.float64), r, v, s,
                          np.ascontiguousarray(g[:, 0]), q_out, w_out, wd_out)
        if n is None:
            return Reference(q_out[0], w_out[0], wd_out[0])
        return Reference(q_out, w_out, wd_out)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(kind={self.kind})"


class Inertial(Target):
    """Hold a fixed inertial attitude ``q_IR`` (unit quaternion, scalar first): zero rate and acceleration.

    Parameters
    ----------
    q_IR : array_like (4,)
        The attitude to hold, scalar first, of unit norm (to ``UNIT_QUATERNION_TOLERANCE``).
    """

    kind = _k.INERTIAL

    def __init__(self, q_IR):
        self.q_IR = _unit_quaternion(q_IR, "q_IR")
        self._set_parameters(self.q_IR)


class NadirPointing(Target):
    """Point ``body_axis`` to nadir (``-r̂``) with ``along_track_axis`` in the orbit plane toward the velocity.

    The defaults (+z to nadir, +x along track) make R the LVLH frame of
    :mod:`attsim.environment.frames` (z to nadir, y along the negative orbit
    normal). Rate and acceleration are exact for a two-body orbit state,
    circular or not: ``ω_I = r × v / r²``, ``ω̇_I = -2 (r·v) / r² ω_I``.

    Parameters
    ----------
    body_axis : array_like (3,), optional
        The body axis pointed to nadir (default +z).
    along_track_axis : array_like (3,), optional
        The body axis kept in the orbit plane toward the velocity (default +x; not parallel to ``body_axis``).
    """

    kind = _k.NADIR
    uses_orbit = True

    def __init__(self, body_axis=(0.0, 0.0, 1.0), along_track_axis=(1.0, 0.0, 0.0)):
        self.body_axis = _axis(body_axis, "body_axis")
        self.along_track_axis = _axis(along_track_axis, "along_track_axis")
        _not_parallel(self.body_axis, self.along_track_axis, "along_track_axis", "body_axis")
        self._set_parameters(_body_triad(self.body_axis, self.along_track_axis))


class SunPointing(Target):
    """Point ``body_axis`` at the Sun; ``secondary_body_axis`` toward the fixed inertial ``secondary_inertial``.

    The secondary axis lies in the plane of the Sun and
    ``secondary_inertial``, on the side of ``secondary_inertial`` (e.g. the
    ecliptic pole, ``(0, -sin ε, cos ε)`` in ECI, for a panel normal kept out
    of the ecliptic). Where the Sun comes within 1e-12 rad of
    ``±secondary_inertial`` the roll is undefined (see
    :func:`attsim.guidance.kernels.frame_quaternion`). Rate and acceleration:
    central differences over ±1000 s with the Sun turning about the ecliptic
    pole at its mean motion (about 2e-7 rad/s).

    Parameters
    ----------
    body_axis : array_like (3,)
        The body axis pointed at the Sun (a panel's normal).
    secondary_body_axis : array_like (3,)
        The body axis turned toward ``secondary_inertial`` (not parallel to ``body_axis``).
    secondary_inertial : array_like (3,)
        A fixed inertial direction (ECI), e.g. the ecliptic pole.
    """

    kind = _k.SUN
    uses_sun = True

    def __init__(self, body_axis, secondary_body_axis, secondary_inertial):
        self.body_axis = _axis(body_axis, "body_axis")
        self.secondary_body_axis = _axis(secondary_body_axis, "secondary_body_axis")
        _not_parallel(self.body_axis, self.secondary_body_axis, "secondary_body_axis", "body_axis")
        self.secondary_inertial = _axis(secondary_inertial, "secondary_inertial")
        pole = np.array([0.0, -math.sin(ECLIPTIC_OBLIQUITY_RAD), math.cos(ECLIPTIC_OBLIQUITY_RAD)])
        self._set_parameters(_body_triad(self.body_axis, self.secondary_body_axis), self.secondary_inertial, pole,
                             SUN_MEAN_MOTION_RAD_S)


class Slew(Target):
    """Eigen-axis slew from ``from_q`` to ``to_q`` (the shorter way), starting at ``t_start_s``.

    The angle ``θ`` about the fixed axis ``e`` of ``from_q* ⊗ to_q`` follows
    a bang-coast-bang profile: accelerate at ``α = max_accel_rad_s2`` to
    ``ω_max = max_rate_rad_s``, coast, decelerate to rest; when
    ``θ < ω_max² / α`` the coast would be negative and the profile is
    bang-bang with peak ``sqrt(θ α)``. Duration (Wie, *Space Vehicle Dynamics
    and Control*, 2nd ed., sec. 7.5)::

        T = θ / ω_max + ω_max / α   (bang-coast-bang),   T = 2 sqrt(θ / α)   (bang-bang)

    ``q_IR(t) = from_q ⊗ (cos φ/2, sin φ/2 e)``, ``ω_R = φ̇ e``,
    ``ω̇_R = φ̈ e``; ``from_q`` before the start, ``to_q`` (with the sign of the
    path) from ``t_start_s + T`` on, both at rest.

    Parameters
    ----------
    from_q, to_q : array_like (4,)
        Start and end attitudes ``q_IR``, scalar first.
    max_rate_rad_s : float
        Coast rate about the eigen-axis, rad/s (> 0).
    max_accel_rad_s2 : float
        Acceleration and deceleration, rad/s² (> 0).
    t_start_s : float, optional
        Time the slew starts, s since the start of the run (default 0).
    """

    kind = _k.SLEW

    def __init__(self, from_q, to_q, max_rate_rad_s, max_accel_rad_s2, t_start_s=0.0):
        self.from_q = _unit_quaternion(from_q, "from_q")
        to = _unit_quaternion(to_q, "to_q")
        self.max_rate_rad_s = positive_scalar(max_rate_rad_s, "max_rate_rad_s")
        self.max_accel_rad_s2 = positive_scalar(max_accel_rad_s2, "max_accel_rad_s2")
        self.t_start_s = real_number(t_start_s, "t_start_s")
        if not math.isfinite(self.t_start_s):
            raise InputError("t_start_s", "must be finite", f"got {t_start_s!r}")
        relative = quat_multiply(quat_conjugate(self.from_q), to)
        if relative[0] < 0.0:  # the shorter way round: go to -to_q, the same attitude
            relative, to = -relative, -to
        self.to_q = to
        sin_half = float(np.linalg.norm(relative[1:]))
        self.angle_rad = 2.0 * math.atan2(sin_half, relative[0])
        self.axis = relative[1:] / sin_half if sin_half > 0.0 else np.array([1.0, 0.0, 0.0])
        alpha = self.max_accel_rad_s2
        self.peak_rate_rad_s = min(self.max_rate_rad_s, math.sqrt(self.angle_rad * alpha))
        if self.peak_rate_rad_s > 0.0:
            t_accel = self.peak_rate_rad_s / alpha
            t_coast = max(self.angle_rad / self.peak_rate_rad_s - t_accel, 0.0)
        else:
            t_accel = t_coast = 0.0
        self.accel_time_s, self.coast_time_s = t_accel, t_coast
        self.duration_s = 2.0 * t_accel + t_coast
        self.t_end_s = self.t_start_s + self.duration_s
        self._set_parameters(self.from_q, self.to_q, self.axis, self.angle_rad, alpha, self.peak_rate_rad_s,
                             t_accel, t_coast, self.t_start_s)


class GroundTarget(Target):
    """Point ``body_axis`` at a ground station while the satellite is above ``min_elevation_deg``, else at nadir.

    The station: geodetic ``lat_deg``, ``lon_deg`` and height ``alt_m`` above
    the WGS-84 ellipsoid (fixed to the Earth, turning with it at
    ``OMEGA_EARTH_RAD_S`` from ``gmst_rad``). Visible when the satellite's
    elevation above the station's horizon (the ellipsoid's tangent plane) is
    at least ``min_elevation_deg``. ``along_track_axis`` is kept in the plane
    of the line of sight and the velocity, toward the velocity (and toward
    it in the nadir hold, as :class:`NadirPointing`); by default the body
    axis least aligned with ``body_axis``. Tracking rate and acceleration:
    central differences over ±0.1 s, the orbit carried by a two-body RK4 step.

    Parameters
    ----------
    lat_deg, lon_deg : float
        Geodetic latitude and longitude of the station, deg.
    alt_m : float
        Height above the WGS-84 ellipsoid, m.
    body_axis : array_like (3,), optional
        The body axis pointed at the station (default +z; at nadir while it is not visible).
    min_elevation_deg : float, optional
        The station sees the satellite above this elevation, deg (default 10).
    along_track_axis : array_like (3,), optional
        The body axis kept toward the velocity (default: the body axis least aligned with ``body_axis``).
    """

    kind = _k.GROUND
    uses_orbit = True
    uses_earth_rotation = True

    def __init__(self, lat_deg, lon_deg, alt_m, body_axis=(0.0, 0.0, 1.0), min_elevation_deg=10.0,
                 along_track_axis=None):
        self.lat_deg = real_number(lat_deg, "lat_deg")
        if not -90.0 <= self.lat_deg <= 90.0:
            raise InputError("lat_deg", "must be in [-90, 90] (geodetic latitude, deg)", f"got {lat_deg!r}")
        self.lon_deg = real_number(lon_deg, "lon_deg")
        self.alt_m = real_number(alt_m, "alt_m")
        for field, value in (("lon_deg", self.lon_deg), ("alt_m", self.alt_m)):
            if not math.isfinite(value):
                raise InputError(field, "must be finite", f"got {value!r}")
        if not -11e3 <= self.alt_m <= 100e3:  # -1e7 m put the 'station' past the Earth's centre
            raise InputError("alt_m", "must be in [-11000, 100000] (m above the ellipsoid: from the deepest ocean "
                             "floor to the Karman line, a point on or near the ground)", f"got {alt_m!r}")
        self.min_elevation_deg = real_number(min_elevation_deg, "min_elevation_deg")
        if not 0.0 <= self.min_elevation_deg < 90.0:
            raise InputError("min_elevation_deg", "must be in [0, 90) (deg above the horizon)",
                             f"got {min_elevation_deg!r}")
        self.body_axis = _axis(body_axis, "body_axis")
        if along_track_axis is None:
            along_track_axis = _least_aligned_axis(self.body_axis)
        self.along_track_axis = _axis(along_track_axis, "along_track_axis")
        _not_parallel(self.body_axis, self.along_track_axis, "along_track_axis", "body_axis")
        lat, lon = self.lat_deg * DEG_RAD, self.lon_deg * DEG_RAD
        self.station_ecef_m = geodetic_to_ecef(lat, lon, self.alt_m)
        self.up_ecef = geodetic_up(lat, lon)
        self._set_parameters(_body_triad(self.body_axis, self.along_track_axis), self.station_ecef_m, self.up_ecef,
                             math.sin(self.min_elevation_deg * DEG_RAD))

    def visible(self, r_I, gmst_rad) -> np.ndarray:
        """True where the satellite at ``r_I`` (ECI, (..., 3)) is at or above the minimum elevation."""
        return self.elevation_deg(r_I, gmst_rad) >= self.min_elevation_deg

    def elevation_deg(self, r_I, gmst_rad) -> np.ndarray:
        """The satellite's elevation above the station's horizon (deg) at ECI positions ``r_I`` (..., 3)."""
        r = finite_array(r_I, "r_I")
        g = finite_array(gmst_rad, "gmst_rad")
        c, s = np.cos(g), np.sin(g)
        x, y, z = r[..., 0], r[..., 1], r[..., 2]
        r_ecef = np.stack(np.broadcast_arrays(c * x + s * y, -s * x + c * y, z), axis=-1)  # R3(GMST) r
        d = r_ecef - self.station_ecef_m
        return np.degrees(np.arcsin(np.clip(d @ self.up_ecef / np.linalg.norm(d, axis=-1), -1.0, 1.0)))


# --- control errors, batched ----------------------------------------------------------------------------------------


def attitude_error(q_IB, q_IR) -> np.ndarray:
    """``q_RB = q_IR* ⊗ q_IB`` with ``w >= 0`` (..., 4): the body attitude relative to the reference.

    Parameters
    ----------
    q_IB : array_like (..., 4)
        Body attitude(s), scalar first.
    q_IR : array_like (..., 4)
        Reference attitude(s), scalar first.
    """
    e = quat_multiply(quat_conjugate(q_IR), q_IB)
    return np.where((e[..., :1] < 0.0), -e, e)


def error_angle_deg(q_IB, q_IR) -> np.ndarray:
    """Angle (deg) of the rotation from the reference to the body: ``2 atan2(|vec q_RB|, w)``.

    Parameters
    ----------
    q_IB : array_like (..., 4)
        Body attitude(s), scalar first.
    q_IR : array_like (..., 4)
        Reference attitude(s), scalar first.
    """
    e = attitude_error(q_IB, q_IR)
    return np.degrees(2.0 * np.arctan2(np.linalg.norm(e[..., 1:], axis=-1), e[..., 0]))


def axis_error_deg(q_IB, q_IR, body_axis) -> np.ndarray:
    """Angle (deg) between where ``body_axis`` points and where the reference wants it.

    Parameters
    ----------
    q_IB : array_like (..., 4)
        Body attitude(s), scalar first.
    q_IR : array_like (..., 4)
        Reference attitude(s), scalar first.
    body_axis : array_like (3,)
        The body axis whose pointing is compared (unit vector).
    """
    u = quat_rotate(q_IB, body_axis)
    w = quat_rotate(q_IR, body_axis)
    return np.degrees(np.arctan2(np.linalg.norm(np.cross(u, w), axis=-1), np.sum(u * w, axis=-1)))


def error_vector(q_IB, q_IR) -> np.ndarray:
    """``2 vec(q_RB)`` (rad, body axes, (..., 3)): the small-angle attitude error per axis.

    Parameters
    ----------
    q_IB : array_like (..., 4)
        Body attitude(s), scalar first.
    q_IR : array_like (..., 4)
        Reference attitude(s), scalar first.
    """
    return 2.0 * attitude_error(q_IB, q_IR)[..., 1:]


def rate_error(q_IB, q_IR, omega_B, omega_R) -> np.ndarray:
    """``ω_B - R_BR ω_R`` (rad/s, body axes): the body rate relative to the reference frame.

    Parameters
    ----------
    q_IB : array_like (..., 4)
        Body attitude(s), scalar first.
    q_IR : array_like (..., 4)
        Reference attitude(s), scalar first.
    omega_B : array_like (..., 3)
        Body rate, rad/s, body axes.
    omega_R : array_like (..., 3)
        Reference rate, rad/s, R axes.
    """
    return np.asarray(omega_B, dtype=float) - quat_rotate(quat_conjugate(attitude_error(q_IB, q_IR)), omega_R)

