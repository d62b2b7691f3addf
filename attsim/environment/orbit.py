"""Orbits: two-body Kepler (point mass, or with the secular J2 drift), and SGP4 from a TLE.

Both give position and velocity in the ECI frame of :mod:`.frames` (TEME
treated as inertial), in metres and metres per second, at seconds after the
orbit's epoch, vectorised over time.
"""

from __future__ import annotations

import datetime as _dt
import math
import re
from typing import NamedTuple

import numpy as np

from .._core.validate import boolean, finite_number, int_in, number_in, positive_scalar, vector3
from ..errors import AttsimError, InputError
from .frames import J2_EARTH, MU_EARTH_M3_S2, R_EARTH_M, Epoch

__all__ = ["Orbit", "KeplerOrbit", "KeplerElements", "elements_from_state", "mean_from_true_anomaly_rad", "TLEOrbit",
           "make_tle", "tle_checksum", "MIN_PERIGEE_ALTITUDE_M", "MAX_SEMI_MAJOR_AXIS_M"]

MIN_PERIGEE_ALTITUDE_M = 100e3  # below this the atmosphere ends the orbit within hours
# Earth's Hill sphere (1.5 million km): beyond it the Sun, not the Earth, holds the orbit
MAX_SEMI_MAJOR_AXIS_M = 1.5e9


class Orbit:
    """Base of the orbit models: ``epoch``, ``state_eci(t_s)``, mean motion, inclination, the ``μ`` of the
    Earth's gravity (for the gravity-gradient torque)."""

    epoch: Epoch
    mu_m3_s2: float = MU_EARTH_M3_S2
    mean_motion_rad_s: float
    inclination_rad: float

    def state_eci(self, t_s) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover - abstract
        """``(r_m, v_m_s)``, each (n, 3), at ``t_s`` seconds after the epoch."""
        raise NotImplementedError

    @property
    def period_s(self) -> float:
        return 2.0 * math.pi / self.mean_motion_rad_s


def _check_orbit(a_m: float, e: float, given: str = "", earth_radius_m: float = R_EARTH_M) -> None:
    """Refuse an orbit that is no Earth satellite's; ``given`` names the inputs the elements came from."""
    if not 0.0 <= e < 1.0:
        raise InputError("eccentricity", "must be in [0, 1): parabolic and hyperbolic orbits are not satellites",
                         f"got {e!r}")
    perigee_alt = a_m * (1.0 - e) - earth_radius_m
    if perigee_alt < MIN_PERIGEE_ALTITUDE_M:
        raise InputError("orbit", "perigee altitude must be at least 100 km",
                         f"perigee altitude {perigee_alt / 1e3:.1f} km{'; from ' + given if given else ''}")
    if a_m > MAX_SEMI_MAJOR_AXIS_M:
        raise InputError("orbit", f"semi-major axis must not exceed {MAX_SEMI_MAJOR_AXIS_M:g} m (Earth's Hill sphere)",
                         f"a = {a_m:.6g} m{'; from ' + given if given else ''}")


# The Earth's own figures, within the spread of the models in use (EGM-96, WGS-84, Basilisk's astroConstants.h), with
# room; a value outside is another body's or a unit slip (km^3/s^2 or km given as SI) and is refused: the orbit's
# J2, field, atmosphere and shadow are the Earth's.
EARTH_MU_RANGE_M3_S2 = (3.98e14, 3.99e14)
EARTH_RADIUS_RANGE_M = (6.35e6, 6.40e6)


def _earth(mu_m3_s2, earth_radius_m) -> tuple[float, float]:
    """The checked ``μ`` and equatorial radius of an Earth orbit (SI)."""
    return (number_in(mu_m3_s2, "mu_m3_s2", *EARTH_MU_RANGE_M3_S2),
            number_in(earth_radius_m, "earth_radius_m", *EARTH_RADIUS_RANGE_M))


def mean_from_true_anomaly_rad(true_anomaly_rad: float, e: float) -> float:
    """Mean anomaly (rad) of the true anomaly ``f`` on an ellipse of eccentricity ``e``: ``E`` from
    ``tan(E/2) = √((1-e)/(1+e)) tan(f/2)`` (as atan2, so every quadrant), then Kepler's ``M = E - e sin E``."""
    E = math.atan2(math.sqrt(1.0 - e * e) * math.sin(true_anomaly_rad), e + math.cos(true_anomaly_rad))
    return E - e * math.sin(E)


class KeplerElements(NamedTuple):
    """Osculating elements: ``a`` in m, the angles in degrees, ``true_anomaly_deg`` where the orbit is."""

    semi_major_axis_m: float
    eccentricity: float
    inclination_deg: float
    raan_deg: float
    arg_perigee_deg: float
    true_anomaly_deg: float


def elements_from_state(r_m, v_m_s, mu_m3_s2: float = MU_EARTH_M3_S2) -> KeplerElements:
    """The osculating elements of the position ``r_m`` and velocity ``v_m_s`` (ECI) about a body of ``μ``.

    Where an angle is undefined it is set to zero and the next one measured
    from its origin: an equatorial orbit's node is the x axis, a circular
    orbit's perigee is its node (the true anomaly is then the argument of
    latitude), so the elements always rebuild the same state.
    """
    r = vector3(r_m, "r_m")
    v = vector3(v_m_s, "v_m_s")
    mu = _earth(mu_m3_s2, R_EARTH_M)[0]
    rn = float(np.linalg.norm(r))
    if rn == 0.0:
        raise InputError("r_m", "must not be zero (the centre of the Earth)")
    h = np.cross(r, v)
    hn = float(np.linalg.norm(h))
    if hn <= 1e-12 * rn * max(float(np.linalg.norm(v)), 1e-300):
        raise InputError("v_m_s", "must not be parallel to r_m (a radial, degenerate orbit)", f"r {r}, v {v}")
    energy = 0.5 * float(v @ v) - mu / rn
    if energy >= 0.0:
        raise InputError("v_m_s", "must be below escape speed (a closed orbit)",
                         f"|v| = {np.linalg.norm(v):.6g} m/s, escape speed {math.sqrt(2.0 * mu / rn):.6g} m/s")
    a = -mu / (2.0 * energy)
    e_vec = np.cross(v, h) / mu - r / rn
    e = float(np.linalg.norm(e_vec))
    inclination = math.acos(max(-1.0, min(1.0, h[2] / hn)))
    raan = math.atan2(h[0], -h[1]) if math.hypot(h[0], h[1]) > 1e-15 * hn else 0.0
    node = np.array([math.cos(raan), math.sin(raan), 0.0])
    across = np.cross(h / hn, node)  # in the plane, 90 deg ahead of the node
    latitude = math.atan2(float(r @ across), float(r @ node))  # argument of latitude
    argp = math.atan2(float(e_vec @ across), float(e_vec @ node)) if e > 0.0 else 0.0
    return KeplerElements(a, e, math.degrees(inclination), math.degrees(raan), math.degrees(argp),
                          math.degrees(latitude - argp))


class KeplerOrbit(Orbit):
    """Keplerian orbit, point-mass gravity, or with the secular J2 drift of node, perigee and mean anomaly.

    ``dΩ/dt = -3/2 n J2 (R/p)² cos i``, ``dω/dt = 3/4 n J2 (R/p)² (5 cos² i - 1)``,
    ``dM/dt = n [1 + 3/4 J2 (R/p)² √(1-e²) (3 cos² i - 1)]`` (Vallado, sec. 9.6).

    Parameters
    ----------
    semi_major_axis_m, eccentricity, inclination_deg, raan_deg, arg_perigee_deg
        Elements at ``epoch``.
    mean_anomaly_deg, true_anomaly_deg : float, optional
        Where the orbit is at ``epoch``: one of the two (neither: perigee).
    epoch : datetime or ISO string (UTC)
    j2 : bool
        Include the secular J2 rates (default True); ``j2=False`` is the
        point-mass (two-body) orbit that Basilisk's examples fly.
    mu_m3_s2 : float
        Gravitational parameter, the Earth's (within 3.98e14 to 3.99e14; default EGM-96's 3.986004418e14; Basilisk's
        ``createEarth`` uses 3.98600436e14, its ``astroConstants.h``). The gravity-gradient torque of
        an :class:`~attsim.environment.Environment` uses the same value.
    earth_radius_m : float
        Equatorial radius in the J2 rates, the 100 km perigee check and
        :meth:`circular`'s altitude (within 6350 to 6400 km; default WGS-84's
        6378137 m, Basilisk's 6378136.6 m).

    Notes
    -----
    ``period_s`` is ``2π / n`` with the orbit's mean motion ``n``
    (``mean_motion_rad_s``); ``state_eci(t_s)`` gives ECI position and
    velocity (m, m/s) at times after the epoch (s).
    """

    def __init__(self, semi_major_axis_m: float, eccentricity: float, inclination_deg: float, raan_deg: float = 0.0,
                 arg_perigee_deg: float = 0.0, mean_anomaly_deg: float | None = None, epoch="2018-04-03T12:50:19",
                 j2: bool = True, true_anomaly_deg: float | None = None, mu_m3_s2: float = MU_EARTH_M3_S2,
                 earth_radius_m: float = R_EARTH_M):
        semi_major_axis_m = positive_scalar(semi_major_axis_m, "semi_major_axis_m")
        eccentricity = finite_number(eccentricity, "eccentricity")
        inclination_deg = number_in(inclination_deg, "inclination_deg", 0.0, 180.0)
        raan_deg = finite_number(raan_deg, "raan_deg")
        arg_perigee_deg = finite_number(arg_perigee_deg, "arg_perigee_deg")
        if mean_anomaly_deg is not None and true_anomaly_deg is not None:
            raise InputError("true_anomaly_deg", "give either mean_anomaly_deg or true_anomaly_deg, not both",
                             f"got {mean_anomaly_deg!r} and {true_anomaly_deg!r}")
        j2 = boolean(j2, "j2")
        self.mu_m3_s2, self.earth_radius_m = _earth(mu_m3_s2, earth_radius_m)
        _check_orbit(semi_major_axis_m, eccentricity, f"semi_major_axis_m = {semi_major_axis_m:g} m, eccentricity = "
                     f"{eccentricity:g} and earth_radius_m = {self.earth_radius_m:g} m", self.earth_radius_m)
        self.epoch = Epoch(epoch)
        self.a = float(semi_major_axis_m)
        self.e = float(eccentricity)
        self.inclination_rad = math.radians(inclination_deg)
        self.raan0 = math.radians(raan_deg)
        self.argp0 = math.radians(arg_perigee_deg)
        if true_anomaly_deg is not None:
            self.M0 = mean_from_true_anomaly_rad(math.radians(finite_number(true_anomaly_deg, "true_anomaly_deg")),
                                                 self.e)
        else:
            self.M0 = math.radians(finite_number(0.0 if mean_anomaly_deg is None else mean_anomaly_deg,
                                                 "mean_anomaly_deg"))
        self.j2 = j2
        n = math.sqrt(self.mu_m3_s2 / self.a**3)
        p = self.a * (1.0 - self.e**2)
        k = J2_EARTH * (self.earth_radius_m / p) ** 2 if j2 else 0.0
        ci = math.cos(self.inclination_rad)
        self.raan_rate = -1.5 * n * k * ci
        self.argp_rate = 0.75 * n * k * (5.0 * ci * ci - 1.0)
        self.mean_motion_rad_s = n * (1.0 + 0.75 * k * math.sqrt(1.0 - self.e**2) * (3.0 * ci * ci - 1.0))

    @classmethod
    def circular(cls, altitude_km: float, inclination_deg: float, **kwargs) -> KeplerOrbit:
        """A circular orbit at ``altitude_km`` above the equatorial radius (``earth_radius_m`` if given)."""
        radius_m = _earth(MU_EARTH_M3_S2, kwargs.get("earth_radius_m", R_EARTH_M))[1]
        altitude_km = number_in(altitude_km, "altitude_km", MIN_PERIGEE_ALTITUDE_M / 1e3,
                                (MAX_SEMI_MAJOR_AXIS_M - radius_m) / 1e3)
        return cls(radius_m + 1e3 * altitude_km, 0.0, inclination_deg, **kwargs)

    @classmethod
    def from_state(cls, r_m, v_m_s, epoch="2018-04-03T12:50:19", j2: bool = True,
                   mu_m3_s2: float = MU_EARTH_M3_S2, earth_radius_m: float = R_EARTH_M) -> KeplerOrbit:
        """The orbit through position ``r_m`` and velocity ``v_m_s`` (ECI, m and m/s) at ``epoch``.

        Its osculating elements (:func:`elements_from_state`) become the
        orbit's elements, so ``state_eci(0)`` gives back ``(r_m, v_m_s)``;
        with ``j2`` they then drift as mean elements would.
        """
        elements = elements_from_state(r_m, v_m_s, mu_m3_s2)
        return cls(elements.semi_major_axis_m, elements.eccentricity, elements.inclination_deg, elements.raan_deg,
                   elements.arg_perigee_deg, epoch=epoch, j2=j2, true_anomaly_deg=elements.true_anomaly_deg,
                   mu_m3_s2=mu_m3_s2, earth_radius_m=earth_radius_m)

    def state_eci(self, t_s):
        t = np.atleast_1d(np.asarray(t_s, dtype=float))
        M = self.M0 + self.mean_motion_rad_s * t
        E = M.copy()
        for _ in range(30):  # Newton on Kepler's equation; converges in a handful for e < 0.9
            step = (E - self.e * np.sin(E) - M) / (1.0 - self.e * np.cos(E))
            E -= step
            if np.max(np.abs(step)) < 1e-15:
                break
        cos_E, sin_E = np.cos(E), np.sin(E)
        root = math.sqrt(1.0 - self.e**2)
        x, y = self.a * (cos_E - self.e), self.a * root * sin_E  # perifocal position (m); z is 0
        factor = math.sqrt(self.mu_m3_s2 * self.a) / (self.a * (1.0 - self.e * cos_E))
        vx, vy = -factor * sin_E, factor * root * cos_E
        # the perifocal x and y axes in ECI (the first two columns of R3(-Ω) R1(-i) R3(-ω)); constant without J2
        p_axis, q_axis = _perifocal_axes(self.raan0 + self.raan_rate * t if self.raan_rate else self.raan0,
                                         self.inclination_rad,
                                         self.argp0 + self.argp_rate * t if self.argp_rate else self.argp0)
        return x[:, None] * p_axis + y[:, None] * q_axis, vx[:, None] * p_axis + vy[:, None] * q_axis


def _perifocal_axes(raan, inc, argp) -> tuple[np.ndarray, np.ndarray]:
    """The perifocal frame's x (to perigee) and y axes in ECI, ``(..., 3)`` each, for node ``raan``, inclination
    ``inc`` and argument of perigee ``argp`` (rad; ``raan`` and ``argp`` scalars or arrays of one shape)."""
    ci, si = math.cos(inc), math.sin(inc)
    if np.ndim(raan) == 0 and np.ndim(argp) == 0:  # the frame of an orbit without J2: two 3-vectors, no arrays
        cO, sO, cw, sw = math.cos(raan), math.sin(raan), math.cos(argp), math.sin(argp)
        return (np.array([cO * cw - sO * sw * ci, sO * cw + cO * sw * ci, sw * si]),
                np.array([-cO * sw - sO * cw * ci, -sO * sw + cO * cw * ci, cw * si]))
    cO, sO = np.cos(raan), np.sin(raan)
    cw, sw = np.cos(argp), np.sin(argp)
    return (np.stack(np.broadcast_arrays(cO * cw - sO * sw * ci, sO * cw + cO * sw * ci, sw * si), axis=-1),
            np.stack(np.broadcast_arrays(-cO * sw - sO * cw * ci, -sO * sw + cO * cw * ci, cw * si), axis=-1))


def tle_checksum(line: str) -> int:
    """TLE checksum of the first 68 columns: digits summed, '-' counts 1, mod 10."""
    return sum(int(c) if c.isdigit() else (1 if c == "-" else 0) for c in line[:68]) % 10


# The numeric fields of a TLE (1-based columns, inclusive) and their formats (CelesTrak, "NORAD Two-Line Element Set
# Format"). SGP4's parser reads what it can of a garbled field and does not say so (an epoch of twelve X's read as
# 2000-01-00), so each field is checked here before it sees them.
_TLE_FIELDS = {
    1: (("epoch year", 19, 20, r"\d\d"), ("epoch day of year", 21, 32, r"[ \d]{2}\d\.\d+ *"),
        ("mean motion derivative", 34, 43, r"[ +-]\.\d{8}|[ +-]?\d\.\d{7}"),
        ("mean motion second derivative", 45, 52, r"[ +-]\d{5}[+-]\d"), ("bstar", 54, 61, r"[ +-]\d{5}[+-]\d")),
    2: (("inclination", 9, 16, r" *\d+\.\d+"), ("right ascension of the node", 18, 25, r" *\d+\.\d+"),
        ("eccentricity", 27, 33, r"\d{7}"), ("argument of perigee", 35, 42, r" *\d+\.\d+"),
        ("mean anomaly", 44, 51, r" *\d+\.\d+"), ("mean motion", 53, 63, r" *\d+\.\d+")),
}


def _check_tle_fields(line: str, number: int) -> None:
    for name, first, last, pattern in _TLE_FIELDS[number]:
        text = line[first - 1:last]
        if not re.fullmatch(pattern, text):
            raise InputError(f"line{number}", f"{name} (columns {first}-{last}) is not in TLE format", f"got {text!r}")
    if number == 1:
        day = float(line[20:32])
        if not 1.0 <= day < 367.0:
            raise InputError("line1", "epoch day of year (columns 21-32) must be in [1, 367)", f"got {day!r}")


def _check_tle_line(line: str, number: int) -> None:
    field = f"line{number}"
    if not isinstance(line, str):
        raise InputError(field, "must be a string", f"got {type(line).__name__}")
    if len(line.rstrip()) != 69:
        raise InputError(field, "must be 69 characters long (TLE format)", f"got {len(line.rstrip())}")
    if not line.startswith(f"{number} "):
        raise InputError(field, f"must start with '{number} ' (TLE line number)", f"got {line[:2]!r}")
    if not line[68].isdigit() or int(line[68]) != tle_checksum(line):
        raise InputError(field, "checksum (column 69) does not match",
                         f"expected {tle_checksum(line)}, found {line[68]!r}")
    _check_tle_fields(line, number)


class TLEOrbit(Orbit):
    """SGP4 propagation of a two-line element set (``sgp4`` package, WGS-72).

    The TLE is checked (length, line numbers, checksums, matching satellite
    numbers, a perigee above 100 km) before SGP4 sees it; an SGP4 error
    during propagation (decay, eccentricity out of range) is raised with its
    time and code.

    Parameters
    ----------
    line1, line2 : str
        The two lines of the element set (69 characters each, with checksums; :func:`make_tle` writes them).
    """

    def __init__(self, line1: str, line2: str):
        from sgp4.api import Satrec

        _check_tle_line(line1, 1)
        _check_tle_line(line2, 2)
        if line1[2:7] != line2[2:7]:
            raise InputError("line2", "satellite number must match line 1", f"{line1[2:7]!r} vs {line2[2:7]!r}")
        try:
            self.satrec = Satrec.twoline2rv(line1, line2)
        except ValueError as exc:
            raise InputError("tle", "could not be parsed", str(exc)) from exc
        _check_orbit(self.satrec.a * self.satrec.radiusearthkm * 1e3, self.satrec.ecco, "the TLE's mean motion and "
                     "eccentricity")
        if self.satrec.error:
            raise InputError("tle", "was refused by SGP4", f"error code {self.satrec.error}")
        self.line1, self.line2 = line1, line2
        jd = self.satrec.jdsatepoch + self.satrec.jdsatepochF
        self.epoch = Epoch(_dt.datetime(2000, 1, 1, 12) + _dt.timedelta(days=jd - 2451545.0))
        self._jd0, self._fr0 = self.satrec.jdsatepoch, self.satrec.jdsatepochF
        self.mean_motion_rad_s = self.satrec.no_kozai / 60.0
        self.inclination_rad = self.satrec.inclo

    def state_eci(self, t_s):
        t = np.atleast_1d(np.asarray(t_s, dtype=float))
        jd = np.full(t.shape, self._jd0)
        fr = self._fr0 + t / 86400.0
        error, r_km, v_km_s = self.satrec.sgp4_array(jd, fr)
        if np.any(error):
            k = int(np.argmax(error != 0))
            raise AttsimError(f"sgp4: propagation failed at t = {t[k]:.6g} s after the TLE epoch "
                              f"(SGP4 error code {error[k]})")
        return r_km * 1e3, v_km_s * 1e3


def make_tle(inclination_deg: float, eccentricity: float, mean_motion_rev_day: float, epoch, raan_deg: float = 0.0,
             arg_perigee_deg: float = 0.0, mean_anomaly_deg: float = 0.0, bstar: float = 0.0, satnum: int = 99999,
             international_designator: str = "18004A") -> tuple[str, str]:
    """Two TLE lines (with checksums) from mean elements, e.g. a mission's published orbit.

    Parameters
    ----------
    inclination_deg : float
        Inclination, deg.
    eccentricity : float
        Eccentricity, in [0, 1).
    mean_motion_rev_day : float
        Mean motion, revolutions per day.
    epoch : datetime or str
        Epoch of the elements, UTC (ISO string or datetime).
    raan_deg, arg_perigee_deg, mean_anomaly_deg : float, optional
        Right ascension of the ascending node, argument of perigee, mean anomaly, deg (default 0).
    bstar : float, optional
        SGP4's drag term B*, 1/Earth radii (default 0).
    satnum : int, optional
        Catalogue number (default 99999).
    international_designator : str, optional
        COSPAR designator (default ``"18004A"``).
    """
    when = Epoch(epoch).datetime
    day_of_year = (when - _dt.datetime(when.year, 1, 1)).total_seconds() / 86400.0 + 1.0
    inclination_deg = number_in(inclination_deg, "inclination_deg", 0.0, 180.0)
    eccentricity = finite_number(eccentricity, "eccentricity")
    if not 0.0 <= eccentricity < 1.0:
        raise InputError("eccentricity", "must be in [0, 1)", f"got {eccentricity!r}")
    mean_motion_rev_day = number_in(mean_motion_rev_day, "mean_motion_rev_day", 1e-3, 99.0)  # the field's 2 digits
    raan_deg = finite_number(raan_deg, "raan_deg")
    arg_perigee_deg = finite_number(arg_perigee_deg, "arg_perigee_deg")
    mean_anomaly_deg = finite_number(mean_anomaly_deg, "mean_anomaly_deg")
    bstar = number_in(bstar, "bstar", -1.0, 1.0)
    satnum = int_in(satnum, "satnum", 0, 99999)
    if not (isinstance(international_designator, str) and len(international_designator) <= 8):
        raise InputError("international_designator", "must be a string of at most 8 characters",
                         f"got {international_designator!r}")

    def exponent_field(x: float) -> str:
        if x == 0.0:
            return " 00000+0"
        exponent = math.floor(math.log10(abs(x))) + 1
        mantissa = round(abs(x) / 10.0**exponent * 1e5)
        return f"{'-' if x < 0 else ' '}{mantissa:05d}{'-' if exponent < 0 else '+'}{abs(exponent)}"

    line1 = (f"1 {satnum:05d}U {international_designator:<8s} {when.year % 100:02d}{day_of_year:012.8f} "
             f" .00000000  00000+0 {exponent_field(bstar)} 0  999")
    line2 = (f"2 {satnum:05d} {inclination_deg:8.4f} {raan_deg % 360:8.4f} {f'{eccentricity:.7f}'[2:]} "
             f"{arg_perigee_deg % 360:8.4f} {mean_anomaly_deg % 360:8.4f} {mean_motion_rev_day:11.8f}    1")
    return line1 + str(tle_checksum(line1)), line2 + str(tle_checksum(line2))
