"""Time and reference frames of the environment models.

Frames, named once here and used everywhere:

``ECI``
    The plant's inertial frame: the TEME frame of SGP4 (true equator, mean
    equinox of date) treated as inertial. Over a CubeSat mission of days its
    slow precession (< 0.02 deg/yr) is far below what attitude work resolves,
    and it is the frame SGP4 delivers, so no conversion adds error.
``ECEF``
    Earth-fixed: ECI rotated about z by the Greenwich mean sidereal angle
    (IAU-82, with UT1 = UTC); polar motion (< 15 m at the surface) is
    neglected. The geomagnetic models work in it.
``LVLH``
    The orbit frame: z toward nadir, y along the negative orbit normal, x
    completing the triad (along the velocity for a circular orbit).
``geodetic``
    Latitude, longitude and height above the WGS-84 ellipsoid, from ECEF
    (:func:`ecef_to_geodetic`); what atmosphere tables and models are indexed by.

Time is UTC; an :class:`Epoch` plus seconds since it locate an instant.
"""

from __future__ import annotations

import datetime as _dt
import math
from typing import NamedTuple

import numpy as np

from ..constants import J2_EARTH, MU_EARTH_M3_S2, OMEGA_EARTH_RAD_S, R_EARTH_M, WGS84_E2, WGS84_FLATTENING
from ..errors import InputError
from .kernels import ecef_to_eci_tuple, lvlh_axes_tuple

__all__ = ["Epoch", "gmst_rad", "gmst_unwrapped_rad", "eci_to_ecef", "ecef_to_eci", "lvlh_axes", "lvlh_quaternion",
           "Geodetic", "ecef_to_geodetic", "geodetic_to_ecef", "geodetic_up",
           "R_EARTH_M", "WGS84_FLATTENING", "MU_EARTH_M3_S2", "J2_EARTH", "OMEGA_EARTH_RAD_S"]

_J2000_JD = 2451545.0


class Epoch:
    """A UTC instant, from a ``datetime`` (naive means UTC) or an ISO string.

    Parameters
    ----------
    when : datetime, str or Epoch
        The instant: a ``datetime`` (naive means UTC) or an ISO 8601 string such as ``"2018-04-03T12:50:19"``.
    """

    def __init__(self, when):
        if isinstance(when, Epoch):
            when = when.datetime
        if isinstance(when, str):
            try:
                when = _dt.datetime.fromisoformat(when.replace("Z", "+00:00"))
            except ValueError as exc:
                raise InputError("epoch", "must be an ISO 8601 UTC time such as '2018-04-03T12:50:19'",
                                 f"got {when!r}") from exc
        if not isinstance(when, _dt.datetime):
            raise InputError("epoch", "must be a datetime or an ISO 8601 string", f"got {type(when).__name__}")
        if when.tzinfo is not None:
            when = when.astimezone(_dt.timezone.utc).replace(tzinfo=None)
        self.datetime = when

    @property
    def jd(self) -> float:
        """Julian date (UTC)."""
        delta = self.datetime - _dt.datetime(2000, 1, 1, 12)
        return _J2000_JD + delta.days + (delta.seconds + delta.microseconds * 1e-6) / 86400.0

    def jd_at(self, t_s) -> np.ndarray:
        """Julian dates of ``t_s`` seconds after the epoch."""
        return self.jd + np.asarray(t_s, dtype=float) / 86400.0

    def plus(self, t_s: float) -> _dt.datetime:
        return self.datetime + _dt.timedelta(seconds=float(t_s))

    @property
    def decimal_year(self) -> float:
        year = self.datetime.year
        start = _dt.datetime(year, 1, 1)
        return year + (self.datetime - start).total_seconds() / (_dt.datetime(year + 1, 1, 1) - start).total_seconds()

    def __repr__(self) -> str:
        return f"Epoch('{self.datetime.isoformat()}')"


def _gmst_s(jd_ut1) -> np.ndarray:
    """Greenwich mean sidereal time in seconds, not reduced to a day (IAU-82; Vallado, *Fundamentals of
    Astrodynamics*, eq. 3-47)."""
    T = (np.asarray(jd_ut1, dtype=float) - _J2000_JD) / 36525.0
    return 67310.54841 + (876600.0 * 3600.0 + 8640184.812866) * T + 0.093104 * T**2 - 6.2e-6 * T**3


def gmst_rad(jd_ut1) -> np.ndarray:
    """Greenwich mean sidereal angle in [0, 2π) (IAU-82; Vallado, *Fundamentals of Astrodynamics*, eq. 3-47)."""
    return np.mod(_gmst_s(jd_ut1), 86400.0) / 86400.0 * 2.0 * math.pi


def gmst_unwrapped_rad(jd_ut1) -> np.ndarray:
    """The Greenwich mean sidereal angle at increasing Julian dates ``jd_ut1`` (1-D), continuous: the first in
    [0, 2π), each next one more by the Earth's turn since (no jump back at 2π; an environment table interpolates
    it). Whole days are taken off the seconds before scaling, exactly (the day count is an integer far below
    2**53), so no precision is lost to the angle's growth."""
    seconds = _gmst_s(jd_ut1)
    days = math.floor(seconds[0] / 86400.0)
    return (seconds - 86400.0 * days) / 86400.0 * 2.0 * math.pi


def _components(v) -> np.ndarray:
    """Vectors (..., 3) as their three component arrays (3, ...): the form the kernels take for arrays."""
    return np.moveaxis(np.asarray(v, dtype=float), -1, 0)


def ecef_to_eci(v_ecef, jd) -> np.ndarray:
    """``R3(-GMST) v`` for Earth-fixed vectors (..., 3) at Julian dates (UT1) broadcastable to them
    (:func:`attsim.environment.kernels.ecef_to_eci_tuple`).

    Parameters
    ----------
    v_ecef : array_like (..., 3)
        Vectors in Earth-fixed axes (any unit; the result has the same).
    jd : float or array_like
        Julian date (UT1), broadcastable to ``v_ecef[..., 0]``.
    """
    return np.stack(ecef_to_eci_tuple.py_func(_components(v_ecef), gmst_rad(jd)), axis=-1)


def eci_to_ecef(v_eci, jd) -> np.ndarray:
    """``R3(GMST) v`` for ECI vectors (..., 3) at Julian dates broadcastable to them: the inverse of
    :func:`ecef_to_eci`.

    Parameters
    ----------
    v_eci : array_like (..., 3)
        Vectors in ECI axes (any unit; the result has the same).
    jd : float or array_like
        Julian date (UT1), broadcastable to ``v_eci[..., 0]``.
    """
    return np.stack(ecef_to_eci_tuple.py_func(_components(v_eci), -gmst_rad(jd)), axis=-1)


def lvlh_axes(r, v) -> np.ndarray:
    """Columns x, y, z of the orbit frame in ECI: ``R_IO`` (..., 3, 3)
    (:func:`attsim.environment.kernels.lvlh_axes_tuple`).

    Parameters
    ----------
    r : array_like (..., 3)
        Position, ECI, m.
    v : array_like (..., 3)
        Velocity, ECI, m/s.
    """
    axes = lvlh_axes_tuple.py_func(_components(r), _components(v))
    return np.stack([np.stack(axis, axis=-1) for axis in axes], axis=-1)


def lvlh_quaternion(r, v) -> np.ndarray:
    """``q_IO``: rotates orbit-frame vectors into ECI.

    Parameters
    ----------
    r : array_like (..., 3)
        Position, ECI, m.
    v : array_like (..., 3)
        Velocity, ECI, m/s.
    """
    from ..rotations import dcm_to_quat

    return dcm_to_quat(lvlh_axes(r, v))


class Geodetic(NamedTuple):
    """A position on or above the WGS-84 ellipsoid; arrays of the input's leading shape."""

    lat_rad: np.ndarray
    lon_rad: np.ndarray
    height_m: np.ndarray


def ecef_to_geodetic(r_ecef_m) -> Geodetic:
    """Geodetic latitude, longitude and height above the WGS-84 ellipsoid of ECEF points (..., 3).

    Bowring's method (Bowring, *Survey Review* 23(181), 1976), iterated: with
    ``p = sqrt(x² + y²)``, ``b = a (1 - f)``, ``e² = f (2 - f)``, ``e'² = e² / (1 - e²)``
    and the reduced latitude ``β``::

        tan φ = (z + e'² b sin³β) / (p - e² a cos³β),   tan β = (1 - f) tan φ

    starting from ``tan β = z / ((1 - f) p)``. It converges cubically; three
    passes leave below 1e-15 rad from the surface to beyond geostationary
    height. The height is taken without dividing by ``cos φ`` (exact for the
    given ``φ`` and well conditioned at the poles)::

        h = p cos φ + z sin φ - a sqrt(1 - e² sin²φ)
    """
    r = np.asarray(r_ecef_m, dtype=float)
    x, y, z = r[..., 0], r[..., 1], r[..., 2]
    a, f = R_EARTH_M, WGS84_FLATTENING
    b, e2 = a * (1.0 - f), WGS84_E2
    ep2 = e2 / (1.0 - e2)
    p = np.hypot(x, y)
    beta = np.arctan2(z, (1.0 - f) * p)
    for _ in range(3):
        lat = np.arctan2(z + ep2 * b * np.sin(beta) ** 3, p - e2 * a * np.cos(beta) ** 3)
        beta = np.arctan2((1.0 - f) * np.sin(lat), np.cos(lat))
    sin_lat = np.sin(lat)
    height = p * np.cos(lat) + z * sin_lat - a * np.sqrt(1.0 - e2 * sin_lat**2)
    return Geodetic(lat, np.arctan2(y, x), height)


def geodetic_to_ecef(lat_rad, lon_rad, height_m) -> np.ndarray:
    """ECEF position (..., 3) of geodetic latitude, longitude and height above the WGS-84 ellipsoid.

    With the prime-vertical radius ``N = a / sqrt(1 - e² sin²φ)`` (Vallado,
    *Fundamentals of Astrodynamics*, 4th ed., eq. 3-14)::

        x = (N + h) cos φ cos λ,   y = (N + h) cos φ sin λ,   z = (N (1 - e²) + h) sin φ
    """
    lat = np.asarray(lat_rad, dtype=float)
    lon = np.asarray(lon_rad, dtype=float)
    h = np.asarray(height_m, dtype=float)
    sin_lat, cos_lat = np.sin(lat), np.cos(lat)
    n = R_EARTH_M / np.sqrt(1.0 - WGS84_E2 * sin_lat**2)
    return np.stack([(n + h) * cos_lat * np.cos(lon), (n + h) * cos_lat * np.sin(lon),
                     (n * (1.0 - WGS84_E2) + h) * sin_lat], axis=-1)


def geodetic_up(lat_rad, lon_rad) -> np.ndarray:
    """The local vertical (ellipsoid normal, unit, ECEF) at geodetic latitude and longitude: (..., 3)."""
    lat = np.asarray(lat_rad, dtype=float)
    lon = np.asarray(lon_rad, dtype=float)
    return np.stack([np.cos(lat) * np.cos(lon), np.cos(lat) * np.sin(lon), np.sin(lat) * np.ones_like(lon)], axis=-1)
