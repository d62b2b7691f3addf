"""The Sun: direction from the low-precision ephemeris, and the Earth's shadow.

Solar position: the Astronomical Almanac's low-precision formula (valid
1950-2050, accuracy 0.01 deg in direction), giving the geocentric direction
in the mean equator and equinox of date, which is the ECI frame of
:mod:`.frames` to within that accuracy::

    n = JD - 2451545.0
    L = 280.460 + 0.9856474 n,   g = 357.528 + 0.9856003 n            (deg)
    λ = L + 1.915 sin g + 0.020 sin 2g,   ε = 23.439 - 0.0000004 n
    s = (cos λ, cos ε sin λ, sin ε sin λ),   R = 1.00014 - 0.01671 cos g - 0.00014 cos 2g  (AU)

Shadow (Montenbruck & Gill, *Satellite Orbits*, sec. 3.4.2):

* cylindrical: in shadow behind the Earth within one Earth radius of the
  Sun-Earth line; lit fraction 0 or 1;
* conical: umbra and penumbra from the apparent radii of the Sun and the
  Earth seen from the satellite; the lit fraction is the visible share of
  the solar disc.
"""

from __future__ import annotations

import numpy as np

from ..constants import AU_M, R_EARTH_M, R_SUN_M, SOLAR_PRESSURE_N_M2

__all__ = ["sun_direction_eci", "sun_distance_m", "sun_eci", "lit_fraction_cylindrical", "lit_fraction_conical",
           "AU_M", "R_SUN_M", "SOLAR_PRESSURE_N_M2"]



def _angles(jd):
    n = np.asarray(jd, dtype=float) - 2451545.0
    L = np.radians(280.460 + 0.9856474 * n)
    g = np.radians(357.528 + 0.9856003 * n)
    lam = L + np.radians(1.915) * np.sin(g) + np.radians(0.020) * np.sin(2 * g)
    eps = np.radians(23.439 - 0.0000004 * n)
    return lam, eps, g


def _direction(lam, eps) -> np.ndarray:
    sin_lam = np.sin(lam)
    return np.stack([np.cos(lam), np.cos(eps) * sin_lam, np.sin(eps) * sin_lam], axis=-1)


def _distance_m(g) -> np.ndarray:
    return (1.00014 - 0.01671 * np.cos(g) - 0.00014 * np.cos(2 * g)) * AU_M


def sun_direction_eci(jd) -> np.ndarray:
    """Unit vector from the Earth's centre to the Sun, (..., 3)."""
    lam, eps, _ = _angles(jd)
    return _direction(lam, eps)


def sun_distance_m(jd) -> np.ndarray:
    """Distance from the Earth's centre to the Sun (m)."""
    return _distance_m(_angles(jd)[2])


def sun_eci(jd) -> tuple[np.ndarray, np.ndarray]:
    """``(sun_direction_eci(jd), sun_distance_m(jd))`` from one evaluation of the ephemeris' angles."""
    lam, eps, g = _angles(jd)
    return _direction(lam, eps), _distance_m(g)


def lit_fraction_cylindrical(r_eci_m, sun_unit) -> np.ndarray:
    """1 in sunlight, 0 inside the cylinder of the Earth's shadow."""
    r = np.asarray(r_eci_m, dtype=float)
    s = np.asarray(sun_unit, dtype=float)
    along = np.sum(r * s, axis=-1)
    perpendicular = np.linalg.norm(r - along[..., None] * s, axis=-1)
    return np.where((along < 0.0) & (perpendicular < R_EARTH_M), 0.0, 1.0)


def lit_fraction_conical(r_eci_m, sun_eci_m) -> np.ndarray:
    """Visible fraction of the solar disc (0 umbra, between 0 and 1 penumbra, 1 lit).

    ``sun_eci_m`` is the Sun's position (m), not only its direction.
    """
    r = np.asarray(r_eci_m, dtype=float)
    to_sun = np.asarray(sun_eci_m, dtype=float) - r
    d_sun = np.linalg.norm(to_sun, axis=-1)
    d_earth = np.linalg.norm(r, axis=-1)
    a = np.arcsin(np.clip(R_SUN_M / d_sun, -1, 1))  # apparent radius of the Sun
    b = np.arcsin(np.clip(R_EARTH_M / d_earth, -1, 1))  # of the Earth
    c = np.arccos(np.clip(np.sum(-r * to_sun, axis=-1) / (d_earth * d_sun), -1.0, 1.0))  # separation of the centres
    fraction = np.ones_like(c)
    partial = (np.abs(a - b) < c) & (c < a + b)
    with np.errstate(divide="ignore", invalid="ignore"):  # c = 0 only where the disc is not partial
        x = (c**2 + a**2 - b**2) / (2 * c)
        y = np.sqrt(np.maximum(a**2 - x**2, 0.0))
        overlap = a**2 * np.arccos(np.clip(x / a, -1, 1)) + b**2 * np.arccos(np.clip((c - x) / b, -1, 1)) - c * y
    fraction = np.where(partial, 1.0 - overlap / (np.pi * a**2), fraction)
    fraction = np.where(c <= b - a, 0.0, fraction)  # Sun disc wholly behind the Earth: umbra
    return fraction
