"""Write ``tests/data/sun_reference.csv``: geocentric Sun direction, 2000-2030.

Source: astropy (``astropy.coordinates.get_sun``), which uses ERFA's ``epv00``
(a simplified VSOP2000 Earth ephemeris, stated good to ~4 km in the Sun-Earth vector
over 1900-2100, i.e. ~0.01 arcsec) and applies annual aberration, giving the
apparent geocentric direction of the Sun in GCRS axes. Light-time and light
deflection are not applied (each < 0.02 arcsec). Only astropy's built-in data are
used: no JPL ephemeris, no IERS download (``iers.conf.auto_download = False``,
``allow_internet = False``).

Grid: 200 UTC instants evenly spaced from 2000-01-01T00:00:00 to 2030-12-31T23:59:59
(step ~56.9 days, so the time of day and season both vary), rounded to whole
seconds. Deterministic; no random numbers.

Columns:
* ``t_utc_iso`` - UTC, ISO 8601; ``jd_utc`` - the same instant as a UTC Julian date
  (astropy/ERFA convention; on a day with a leap second the fraction is scaled by
  86401 s, irrelevant at this accuracy);
* ``gcrs_x``, ``gcrs_y``, ``gcrs_z`` - unit vector Earth->Sun in GCRS (ICRS axes,
  J2000 equator/equinox to ~0.02 arcsec);
* ``teme_x``, ``teme_y``, ``teme_z`` - the same direction in TEME of date (true equator,
  mean equinox at the same instant; the SGP4 output frame), via astropy's
  GCRS -> CIRS -> ITRS -> TEME chain (IAU 2006/2000A, ERA, GMST 1982);
* ``distance_au`` - geocentric distance of the Sun, au.

Notes on the frame conversion. The ITRS step needs UT1-UTC and polar motion; the
bundled IERS-A table ends in late 2027 and later instants use its last UT1-UTC value and
mean polar motion (astropy warns). Both cancel out of GCRS -> TEME: polar motion exactly
and UT1 to < 0.01 arcsec for 1 s of UT1 error, because TEME differs from CIRS only
by the angle GMST82 - ERA. The script checks this by building the
GCRS -> TEME matrix directly from ERFA as R3(ERA - GMST82) . C(GCRS->CIRS) with UT1 = UTC
and no polar motion, and prints the largest difference (1.4e-5 arcsec with astropy
8.0.2). UTC after the last leap second (2016-12-31) assumes no new leap seconds; ERFA
flags far-future years as "dubious year" (warnings silenced). A future leap second
would shift those instants by 1 s (0.04 arcsec of solar motion).
Accuracy of the columns: ~0.02 arcsec in direction, ~1e-7 au in distance.

What to expect from the Astronomical Almanac low-precision formula (AA section C,
"Sun - low precision": L = 280.460 + 0.9856474 n, g = 357.528 + 0.9856003 n,
lambda = L + 1.915 sin g + 0.020 sin 2g, eps = 23.439 - 0.0000004 n, n = JD - 2451545.0;
the same as Vallado's Algorithm 29 "SUN"): the AA states 0.01 deg accuracy for
1950-2050. Its output is *of date* (equator and equinox of date), not GCRS/J2000.
This script evaluates it and prints the largest angle to each column set:
0.0085 deg against TEME, but up to 0.43 deg against GCRS by 2030 (precession,
50.3 arcsec/yr from J2000). A test of such an implementation should therefore compare
against the TEME columns with a bound of ~0.01-0.015 deg, or first rotate the formula's
output from mean-of-date to GCRS (precession) before comparing with the GCRS columns.
The AA distance formula (R = 1.00014 - 0.01671 cos g - 0.00014 cos 2g) agrees with
``distance_au`` to 8e-5 au (printed too).

Run: ``/tmp/ref-venv/bin/python tools/make_sun_reference.py`` (needs astropy, numpy).
"""

from __future__ import annotations

import csv
import warnings
from pathlib import Path

import numpy as np
from astropy.utils import iers
from astropy.utils.data import conf as data_conf

iers.conf.auto_download = False
iers.conf.auto_max_age = None  # the bundled IERS-A is "stale"; we never download
iers.conf.iers_degraded_accuracy = "warn"
data_conf.allow_internet = False

import astropy  # noqa: E402
import astropy.units as u  # noqa: E402
import erfa  # noqa: E402
from astropy.coordinates import TEME, get_sun  # noqa: E402
from astropy.time import Time  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "data" / "sun_reference.csv"
N = 200


def grid() -> Time:
    t0 = Time("2000-01-01T00:00:00", scale="utc")
    t1 = Time("2030-12-31T23:59:59", scale="utc")
    # uniform in elapsed seconds, rounded to whole seconds, then back to UTC
    s = np.round(np.linspace(0.0, (t1 - t0).to_value(u.s), N))
    return t0 + s * u.s


def unit(xyz):
    xyz = np.asarray(xyz, float)
    return xyz / np.linalg.norm(xyz, axis=-1, keepdims=True)


def angle_deg(a, b):
    return np.degrees(np.arctan2(np.linalg.norm(np.cross(a, b), axis=-1), np.sum(a * b, axis=-1)))


def almanac_low_precision(jd):
    """AA low-precision apparent Sun, equator and equinox of date; (unit vector, R au)."""
    n = jd - 2451545.0
    L = np.radians((280.460 + 0.9856474 * n) % 360.0)
    g = np.radians((357.528 + 0.9856003 * n) % 360.0)
    lam = L + np.radians(1.915) * np.sin(g) + np.radians(0.020) * np.sin(2 * g)
    eps = np.radians(23.439 - 0.0000004 * n)
    r = 1.00014 - 0.01671 * np.cos(g) - 0.00014 * np.cos(2 * g)
    v = np.stack([np.cos(lam), np.cos(eps) * np.sin(lam), np.sin(eps) * np.sin(lam)], axis=-1)
    return v, r


def erfa_gcrs_to_teme(t: Time):
    """R3(ERA - GMST82) . C(GCRS->CIRS), UT1 taken = UTC, no polar motion."""
    tt = t.tt
    c = erfa.c2i06a(tt.jd1, tt.jd2)
    ut1_1, ut1_2 = t.utc.jd1, t.utc.jd2
    ang = erfa.era00(ut1_1, ut1_2) - erfa.gmst82(ut1_1, ut1_2)
    r3 = np.zeros((len(ang), 3, 3))
    ca, sa = np.cos(ang), np.sin(ang)
    r3[:, 0, 0], r3[:, 0, 1], r3[:, 1, 0], r3[:, 1, 1], r3[:, 2, 2] = ca, sa, -sa, ca, 1.0
    return r3 @ c


def main():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", erfa.ErfaWarning)  # "dubious year" for far-future UTC
        warnings.simplefilter("ignore", astropy.utils.exceptions.AstropyWarning)  # PM after IERS-A end
        t = grid()
        sun = get_sun(t)
        gcrs_xyz = sun.cartesian.xyz.to_value(u.au).T
        teme = sun.transform_to(TEME(obstime=t))
        teme_xyz = teme.cartesian.xyz.to_value(u.au).T
        iso = t.utc.isot
        jd = t.utc.jd1 + t.utc.jd2
        m = erfa_gcrs_to_teme(t)
    dist = np.linalg.norm(gcrs_xyz, axis=1)
    g, e = unit(gcrs_xyz), unit(teme_xyz)
    assert np.allclose(np.linalg.norm(teme_xyz, axis=1), dist, rtol=1e-12)

    cols = ["t_utc_iso", "jd_utc", "gcrs_x", "gcrs_y", "gcrs_z", "teme_x", "teme_y", "teme_z",
            "distance_au"]
    OUT.parent.mkdir(parents=True, exist_ok=True)
    with OUT.open("w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(cols)
        for i in range(len(t)):
            w.writerow([iso[i].split(".")[0], f"{jd[i]:.8f}",
                        *(f"{x:.12f}" for x in g[i]), *(f"{x:.12f}" for x in e[i]),
                        f"{dist[i]:.10f}"])
    print(f"wrote {OUT} ({len(t)} rows, {OUT.stat().st_size} bytes; astropy {astropy.__version__}, "
          f"pyerfa {erfa.__version__})")

    # checks (printed, not written)
    e2 = np.einsum("nij,nj->ni", m, g)
    print(f"check: astropy TEME vs ERFA R3(ERA-GMST82).C (UT1=UTC, no PM): "
          f"max {angle_deg(e, e2).max() * 3600:.2e} arcsec")
    v, r = almanac_low_precision(jd)
    print(f"AA low-precision formula vs TEME columns: max {angle_deg(v, e).max():.4f} deg; "
          f"vs GCRS columns: max {angle_deg(v, g).max():.4f} deg; "
          f"distance: max |dR| {np.abs(r - dist).max():.1e} au")


if __name__ == "__main__":
    main()
