"""Atmospheric density.

* :class:`ExponentialAtmosphere` — the piecewise exponential model of
  Vallado (*Fundamentals of Astrodynamics*, table 8-4): ``ρ = ρ0 exp(-(h - h0) / H)``
  with the band of the altitude ``h``. The default; no inputs but altitude.
* :class:`MSISAtmosphere` — NRLMSIS 2.1 through ``pymsis`` (optional extra
  ``msis``), always given explicit F10.7 and Ap so it never tries to fetch
  space-weather files.

Both are indexed by geodetic height above the WGS-84 ellipsoid (and MSIS by
geodetic latitude), from :func:`~.frames.ecef_to_geodetic`. ``|r| - a`` would
not do: the ellipsoid is 21 km lower at the poles than at the equator, which
at 550 km and 60° latitude makes the exponential model's density 28 % too high.
"""

from __future__ import annotations

import numpy as np

from .._core.validate import non_negative_scalar
from ..errors import InputError
from .frames import Epoch, Geodetic, ecef_to_geodetic, eci_to_ecef

__all__ = ["ExponentialAtmosphere", "MSISAtmosphere"]

# base altitude (km), nominal density (kg/m^3), scale height (km)
_BANDS = np.array([
    (0, 1.225, 7.249), (25, 3.899e-2, 6.349), (30, 1.774e-2, 6.682), (40, 3.972e-3, 7.554), (50, 1.057e-3, 8.382),
    (60, 3.206e-4, 7.714), (70, 8.770e-5, 6.549), (80, 1.905e-5, 5.799), (90, 3.396e-6, 5.382), (100, 5.297e-7, 5.877),
    (110, 9.661e-8, 7.263), (120, 2.438e-8, 9.473), (130, 8.484e-9, 12.636), (140, 3.845e-9, 16.149),
    (150, 2.070e-9, 22.523), (180, 5.464e-10, 29.740), (200, 2.789e-10, 37.105), (250, 7.248e-11, 45.546),
    (300, 2.418e-11, 53.628), (350, 9.518e-12, 53.298), (400, 3.725e-12, 58.515), (450, 1.585e-12, 60.828),
    (500, 6.967e-13, 63.822), (600, 1.454e-13, 71.835), (700, 3.614e-14, 88.667), (800, 1.170e-14, 124.64),
    (900, 5.245e-15, 181.05), (1000, 3.019e-15, 268.00),
])


def geodetic_of(r_eci_m, epoch: Epoch, t_s) -> Geodetic:
    """Geodetic position of ECI points ``r_eci_m`` (..., 3) at ``t_s`` seconds after ``epoch``."""
    return ecef_to_geodetic(eci_to_ecef(np.asarray(r_eci_m, dtype=float), epoch.jd_at(t_s)))


class ExponentialAtmosphere:
    """Vallado's exponential model (table 8-4) at the geodetic height above WGS-84."""

    name = "exponential"

    def density_kg_m3(self, r_eci_m, epoch: Epoch, t_s) -> np.ndarray:
        h_km = geodetic_of(r_eci_m, epoch, t_s).height_m / 1e3
        band = np.clip(np.searchsorted(_BANDS[:, 0], h_km, side="right") - 1, 0, len(_BANDS) - 1)
        h0, rho0, scale = _BANDS[band, 0], _BANDS[band, 1], _BANDS[band, 2]
        return rho0 * np.exp(-(h_km - h0) / scale)


class MSISAtmosphere:
    """NRLMSIS through ``pymsis`` with explicit solar and geomagnetic activity.

    Parameters
    ----------
    f107, f107a : float
        Daily and 81-day mean 10.7 cm solar flux (sfu).
    ap : float
        Daily geomagnetic Ap index.
    """

    name = "msis"

    def __init__(self, f107: float = 150.0, f107a: float = 150.0, ap: float = 4.0):
        # given explicitly, so that pymsis never downloads space weather
        self.f107, self.f107a = non_negative_scalar(f107, "f107"), non_negative_scalar(f107a, "f107a")
        self.ap = non_negative_scalar(ap, "ap")

    def density_kg_m3(self, r_eci_m, epoch: Epoch, t_s) -> np.ndarray:
        try:
            import pymsis
        except ImportError as exc:
            raise InputError("atmosphere",
                             "MSISAtmosphere needs the optional package pymsis (pip install 'attsim[msis]')") from exc
        t = np.atleast_1d(np.asarray(t_s, dtype=float))
        where = geodetic_of(np.atleast_2d(r_eci_m), epoch, t)  # NRLMSIS takes geodetic latitude and height
        lon, lat, alt = np.degrees(where.lon_rad), np.degrees(where.lat_rad), where.height_m / 1e3
        dates = np.array([np.datetime64(epoch.plus(x)) for x in t])
        n = t.size
        out = pymsis.calculate(dates, lon, lat, alt, f107s=np.full(n, self.f107), f107as=np.full(n, self.f107a),
                               aps=np.full((n, 7), self.ap))
        return np.asarray(out)[..., 0].reshape(-1)
