"""Geomagnetic field models: IGRF-14 and a tilted dipole.

Both return the field in ECI, in tesla, at positions in ECI (m) and Julian
dates; ECEF is reached through :func:`~.frames.eci_to_ecef`.

* :class:`IGRF` — the International Geomagnetic Reference Field, 14th
  generation (Alken et al. 2025), through the ``ppigrf`` package and its
  bundled coefficient file, so nothing is downloaded at run time. Valid
  1900-01-01 to 2030-01-01; an epoch outside is refused. It costs tens of
  milliseconds a call, so the engine evaluates it once, vectorised along the
  orbit, and interpolates during the run.
* :class:`TiltedDipole` — the degree-1 part of IGRF at the epoch,
  ``B = (a/r)^3 [3 (g·r̂) r̂ - g]`` with ``g = (g11, h11, g10)`` in ECEF: fast,
  but off the full field by up to tens of percent in low Earth orbit (the
  South Atlantic Anomaly is not in it): a model for studies and tests, not
  for predicting a real pass.
"""

from __future__ import annotations

import datetime as _dt

import numpy as np

from .._core.validate import finite_number
from ..errors import InputError
from .frames import Epoch, ecef_to_eci, eci_to_ecef

__all__ = ["FieldModel", "IGRF", "TiltedDipole", "IGRF_VALID_FROM", "IGRF_VALID_UNTIL"]

IGRF_VALID_FROM = _dt.datetime(1900, 1, 1)
IGRF_VALID_UNTIL = _dt.datetime(2030, 1, 1)
IGRF_REFERENCE_RADIUS_M = 6371200.0


def _check_epoch(when: _dt.datetime, field: str = "epoch") -> None:
    if not IGRF_VALID_FROM <= when < IGRF_VALID_UNTIL:
        raise InputError(field, "must lie within the IGRF-14 model's validity, 1900-01-01 to 2030-01-01",
                         f"got {when.isoformat()}")


class FieldModel:
    """``field_eci_T(r_eci_m, epoch, t_s) -> (n, 3)`` tesla."""

    name = "field"

    def field_eci_T(self, r_eci_m, epoch: Epoch, t_s) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError


class IGRF(FieldModel):
    """IGRF-14 through ``ppigrf`` (degree 13), evaluated for one date per call.

    Secular variation over a run of days is a few nT; the date used is the
    middle of the requested times.
    """

    name = "igrf"

    def field_eci_T(self, r_eci_m, epoch: Epoch, t_s) -> np.ndarray:
        t = np.atleast_1d(np.asarray(t_s, dtype=float))
        _check_epoch(epoch.plus(t[0]))
        _check_epoch(epoch.plus(t[-1]))
        jd = epoch.jd_at(t)
        r_ecef = eci_to_ecef(np.asarray(r_eci_m, dtype=float), jd)
        return ecef_to_eci(self.field_ecef_T(r_ecef, epoch.plus(0.5 * (t[0] + t[-1]))), jd)

    def field_ecef_T(self, r_ecef_m, when: _dt.datetime) -> np.ndarray:
        """Field (T, ECEF) at Earth-fixed positions (m) on one date."""
        import ppigrf

        _check_epoch(when)
        r_ecef = np.atleast_2d(np.asarray(r_ecef_m, dtype=float))
        x, y, z = r_ecef[:, 0], r_ecef[:, 1], r_ecef[:, 2]
        r = np.linalg.norm(r_ecef, axis=1)
        theta = np.arccos(np.clip(z / r, -1.0, 1.0))
        phi = np.arctan2(y, x)
        Br, Btheta, Bphi = (np.asarray(b, dtype=float).reshape(-1) for b in
                            ppigrf.igrf_gc(r / 1e3, np.degrees(theta), np.degrees(phi), when))
        st, ct, sp, cp = np.sin(theta), np.cos(theta), np.sin(phi), np.cos(phi)
        return np.stack([
            Br * st * cp + Btheta * ct * cp - Bphi * sp,
            Br * st * sp + Btheta * ct * sp + Bphi * cp,
            Br * ct - Btheta * st,
        ], axis=-1) * 1e-9


class TiltedDipole(FieldModel):
    """Degree-1 geomagnetic field; coefficients (nT) default to IGRF-14 at the epoch.

    Parameters
    ----------
    g10_nT, g11_nT, h11_nT : float, optional
        The degree-1 Gauss coefficients, nT (default: IGRF-14's at the mission's epoch; give ``g10_nT`` to set
        them, the others default to 0).
    """

    name = "dipole"

    def __init__(self, g10_nT: float | None = None, g11_nT: float | None = None, h11_nT: float | None = None):
        if g10_nT is None:
            if g11_nT is not None or h11_nT is not None:
                raise InputError("g10_nT", "must be given with g11_nT and h11_nT (or none of them: IGRF at the epoch)")
            self.coefficients = None
        else:
            g11, h11 = (0.0 if g11_nT is None else g11_nT), (0.0 if h11_nT is None else h11_nT)
            self.coefficients = (finite_number(g10_nT, "g10_nT"), finite_number(g11, "g11_nT"),
                                 finite_number(h11, "h11_nT"))

    def coefficients_at(self, epoch: Epoch) -> tuple[float, float, float]:
        if self.coefficients is not None:
            return self.coefficients
        _check_epoch(epoch.datetime)
        return igrf_dipole_coefficients(epoch.datetime)

    def field_eci_T(self, r_eci_m, epoch: Epoch, t_s) -> np.ndarray:
        t = np.atleast_1d(np.asarray(t_s, dtype=float))
        g10, g11, h11 = self.coefficients_at(epoch)
        g = np.array([g11, h11, g10]) * 1e-9
        jd = epoch.jd_at(t)
        r_ecef = eci_to_ecef(np.asarray(r_eci_m, dtype=float), jd)
        r = np.linalg.norm(r_ecef, axis=1, keepdims=True)
        r_hat = r_ecef / r
        B_ecef = (IGRF_REFERENCE_RADIUS_M / r) ** 3 * (3.0 * (r_hat @ g)[:, None] * r_hat - g)
        return ecef_to_eci(B_ecef, jd)

    def axis_eci(self, epoch: Epoch, t_s: float = 0.0) -> np.ndarray:
        """Unit dipole moment direction in ECI (points south: ``g / |g|`` with g10 < 0)."""
        g10, g11, h11 = self.coefficients_at(epoch)
        g = np.array([g11, h11, g10])
        return ecef_to_eci(g / np.linalg.norm(g), epoch.jd_at(t_s))


def igrf_dipole_coefficients(when: _dt.datetime) -> tuple[float, float, float]:
    """``(g10, g11, h11)`` in nT of IGRF-14 at ``when``, interpolated from ppigrf's table."""
    import ppigrf

    r = np.array([IGRF_REFERENCE_RADIUS_M / 1e3])
    with np.errstate(invalid="ignore", divide="ignore"):  # ppigrf divides by sin(theta) at the pole
        return _dipole_from_radial_field(ppigrf, r, when)


def _dipole_from_radial_field(ppigrf, r, when):
    # the degree-1 field at three points recovers the three coefficients exactly
    Br_pole = ppigrf.igrf_gc(r, np.array([0.0]), np.array([0.0]), when, max_degree=1)[0].item()
    Br_x = ppigrf.igrf_gc(r, np.array([90.0]), np.array([0.0]), when, max_degree=1)[0].item()
    Br_y = ppigrf.igrf_gc(r, np.array([90.0]), np.array([90.0]), when, max_degree=1)[0].item()
    # at r = a, B_r = 2 (g · r̂): pole -> 2 g10, (90, 0) -> 2 g11, (90, 90) -> 2 h11
    return Br_pole / 2.0, Br_x / 2.0, Br_y / 2.0
