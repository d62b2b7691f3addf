"""Write ``tests/data/sgp4_reference.csv``: published SGP4/SDP4 verification values.

Source: the official SGP4 verification set of Vallado, Crawford, Hujsak & Kelso,
"Revisiting Spacetrack Report #3", AIAA 2006-6753 - the element sets
``SGP4-VER.TLE`` and the expected output ``tcppver.out`` written by Vallado's C++
reference code. Both files ship inside the PyPI package ``sgp4`` (python-sgp4,
Brandon Rhodes; read from the installed package directory, nothing is
propagated here). The position/velocity columns are the published numbers copied
as text from ``tcppver.out``; this script never runs SGP4 to produce them.

Conventions of the published run (the code under test must use the same):
* gravity model WGS-72 (mu = 398600.8 km^3/s^2, Re = 6378.135 km, J2..J4 of WGS-72),
  not WGS-84;
* operation mode ``'i'`` ("improved"; python-sgp4's default) - the ``'a'`` (AFSPC)
  mode differs slightly in the GST and epoch handling;
* output frame TEME (true equator, mean equinox of the TLE epoch), km and km/s;
* ``tsince_min`` is minutes from the TLE epoch (negative values are before it).
Accuracy: ``tcppver.out`` prints positions to 1e-8 km and velocities to 1e-9 km/s.
python-sgp4 2.27 (C++ core, WGS72, 'i') reproduces these rows to 5e-9 km and
5e-10 km/s, i.e. to the printed precision (``--check``); a correct wrapper of it should
pass with atol ~1e-6 km and ~1e-8 km/s. A re-implementation in float64 that follows
Vallado's code should still be within ~1e-5 km.

Selection (12 satellites, every published line for each, error cases skipped):
  00005  TEME example (near Earth, e = 0.186)
  06251  DELTA 1 DEB, near-Earth normal drag, perigee 377 km
  08195  MOLNIYA 2-14, 12 h resonant, e 0.65-0.7
  09880  MOLNIYA 1-36, 12 h resonant, e 0.7-0.715
  11801  original STR#3 SDP4 test
  14128  EUTELSAT 1-F1, deep space, Lyddane choice
  24208  ITALSAT 2, 24 h resonant GEO, incl > 3 deg
  25954  AMC-4, low inclination, tsince -1440..+1440 min
  28057  CBERS 2, near Earth, e < 1e-4
  28129  NAVSTAR 53, 12 h non-resonant GPS
  29238  SL-12 DEB, near Earth, perigee 212 km < 220 km (simplified drag)
  88888  original STR#3 SGP4 test
Skipped on purpose: the error-code cases (22312, 28350, 28872, 29141 decay;
33333-33335 deliberately bad elements with bad checksums), and 20413 (it appears
twice in the set with different elements).

``line1``/``line2`` are the standard 69-character TLE lines; the verification
file appends start/stop/step times to line 2 after column 69, which are dropped.
The first published line of each satellite is always tsince = 0 and has only
position and velocity; the later lines also carry osculating elements and a calendar
date, which are not copied. For 25954 the t = 0 line is published twice (once as the
first line, once inside its -1440..1440 sweep); the exact duplicate is dropped.

Run: ``/tmp/ref-venv/bin/python tools/make_sgp4_reference.py`` (needs the ``sgp4``
package installed only as the container of the two data files). If run with
``--check`` it additionally propagates with python-sgp4 and prints the largest
difference from the published values (diagnostic only; it does not change the CSV).
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "data" / "sgp4_reference.csv"

SELECTED = [5, 6251, 8195, 9880, 11801, 14128, 24208, 25954, 28057, 28129, 29238, 88888]


def sgp4_data_dir() -> Path:
    import sgp4

    return Path(sgp4.__file__).resolve().parent


def tle_checksum_ok(line: str) -> bool:
    s = sum(int(c) if c.isdigit() else (1 if c == "-" else 0) for c in line[:68])
    return s % 10 == int(line[68])


def read_tles(path: Path):
    """List of (satnum, line1, line2) in file order."""
    lines = path.read_text().replace("\r", "").splitlines()
    out = []
    for i, l1 in enumerate(lines):
        if l1.startswith("1 "):
            l2 = lines[i + 1]
            assert l2.startswith("2 ")
            out.append((int(l1[2:7]), l1[:69], l2[:69]))
    return out


def read_tcppver(path: Path):
    """List of (satnum, [fields of each data line]) in file order."""
    blocks = []
    for line in path.read_text().replace("\r", "").splitlines():
        if line.strip().endswith("xx"):
            blocks.append((int(line.split()[0]), []))
        elif line.strip():
            blocks[-1][1].append(line.split()[:7])
    return blocks


def main(argv):
    d = sgp4_data_dir()
    tles = read_tles(d / "SGP4-VER.TLE")
    blocks = read_tcppver(d / "tcppver.out")
    assert len(tles) == len(blocks) == 33, (len(tles), len(blocks))
    rows = []
    for (satnum, l1, l2), (bsat, data) in zip(tles, blocks):
        assert satnum == bsat, (satnum, bsat)
        if satnum not in SELECTED:
            continue
        assert len(l1) == len(l2) == 69 and tle_checksum_ok(l1) and tle_checksum_ok(l2), satnum
        seen = set()
        for f in data:
            if tuple(f) in seen:  # 25954 repeats its t = 0 line verbatim
                continue
            seen.add(tuple(f))
            rows.append([satnum, l1, l2, *f])
    assert sorted({r[0] for r in rows}) == sorted(SELECTED)

    cols = ["satnum", "line1", "line2", "tsince_min", "x_km", "y_km", "z_km",
            "vx_km_s", "vy_km_s", "vz_km_s"]
    OUT.parent.mkdir(parents=True, exist_ok=True)
    with OUT.open("w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(cols)
        w.writerows(rows)
    from importlib.metadata import version

    print(f"wrote {OUT} ({len(rows)} rows, {len(SELECTED)} satellites, {OUT.stat().st_size} bytes) "
          f"from {d}/tcppver.out (sgp4 {version('sgp4')})")

    if "--check" in argv:
        from sgp4.api import WGS72, Satrec

        worst_r = worst_v = 0.0
        for _satnum, l1, l2, t, *rv in rows:
            sat = Satrec.twoline2rv(l1, l2, WGS72)
            e, r, v = sat.sgp4_tsince(float(t))
            assert e == 0
            worst_r = max(worst_r, *(abs(a - float(b)) for a, b in zip(r, rv[:3])))
            worst_v = max(worst_v, *(abs(a - float(b)) for a, b in zip(v, rv[3:])))
        print(f"check: python-sgp4 (WGS72, opsmode 'i') vs published: max |dr| = {worst_r:.2e} km, "
              f"max |dv| = {worst_v:.2e} km/s")


if __name__ == "__main__":
    main(sys.argv[1:])
