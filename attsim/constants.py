"""Physical and Earth constants: the one place every layer takes them from.

SI units throughout. Sources: WGS-84 (NIMA TR8350.2, 3rd ed., 2000) for
the Earth's shape and rotation; EGM-96 / JGM-3 for μ and J2 as used by
Vallado, *Fundamentals of Astrodynamics and Applications*, 4th ed.,
table D-1; IAU 2012 resolution B2 for the astronomical unit.
"""

from __future__ import annotations

import math

__all__ = [
    "MU_EARTH_M3_S2", "R_EARTH_M", "WGS84_FLATTENING", "WGS84_E2", "J2_EARTH", "OMEGA_EARTH_RAD_S",
    "AU_M", "R_SUN_M", "SOLAR_PRESSURE_N_M2", "ARCSEC_RAD", "DEG_RAD",
    "ECLIPTIC_OBLIQUITY_RAD", "SUN_MEAN_MOTION_RAD_S",
]

MU_EARTH_M3_S2 = 3.986004418e14  # gravitational parameter (EGM-96)
R_EARTH_M = 6378137.0  # WGS-84 equatorial radius
WGS84_FLATTENING = 1.0 / 298.257223563
WGS84_E2 = WGS84_FLATTENING * (2.0 - WGS84_FLATTENING)  # first eccentricity squared
J2_EARTH = 1.08262668e-3
OMEGA_EARTH_RAD_S = 7.2921150e-5  # sidereal rotation rate; the atmosphere co-rotates with it
AU_M = 149597870700.0
R_SUN_M = 696.0e6
SOLAR_PRESSURE_N_M2 = 4.56e-6  # at 1 AU, absorbing surface (1367 W/m^2 / c)
ARCSEC_RAD = math.pi / (180.0 * 3600.0)
DEG_RAD = math.pi / 180.0
# The Sun's apparent motion, from the Astronomical Almanac's low-precision formula (attsim.environment.sun):
# obliquity of the ecliptic at J2000 and the rate of the Sun's mean longitude, 0.9856474 deg per day.
ECLIPTIC_OBLIQUITY_RAD = 23.439 * DEG_RAD
SUN_MEAN_MOTION_RAD_S = 0.9856474 * DEG_RAD / 86400.0
