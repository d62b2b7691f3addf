"""Write ``tests/data/separatrix_reference.csv``: free rigid bodies flipping near the separatrix.

Source: mpmath's Taylor-series ODE solver (``mpmath.odefun``, adaptive degree, tolerance
the working precision) at 34 significant digits on Euler's equations and the quaternion
kinematics, written out here in plain arithmetic (no attsim code)::

    I1 w1' = (I2 - I3) w2 w3  (and cyclic),   q' = 1/2 q ⊗ (0, w),   q = q_IB scalar first

Every case starts from ``q = (1, 0, 0, 0)`` and the body rate of its row at ``t = 0``; the
moments are exact binary fractions, the rates are the double-precision numbers of the row
(taken exactly), so the reference is the motion of the very state a double-precision
code is given. Near the separatrix the motion is ill-conditioned (a relative change of
the small rate components shifts every flip), which is why a double-precision ODE solver
at rtol 1e-13 is no reference here while 34 digits are: the table is compared with a run
at 44 digits when called with ``--check`` (largest difference printed: 6e-35 in the rates
and 2e-35 in the quaternion on ``major-1e-20`` with mpmath 1.4.1).

Cases (moments ``(1, 2, 2.5)`` kg m² unless said; ``e`` the size of the small components):

* ``audit``: ``w0 = (2e-8, 1, 4e-8)`` over 130 s, the audit's case: ``wy`` flips at
  t = 41.8 s and again 81.5 s later.
* ``major-e``: ``w0 = (e, 1, 2e)``, ``d = 2E - M²/I_2 = -2 e²`` (polhode around the major
  axis, ``d/M² ≈ -e²/2``); ``minor-e``: ``w0 = (2e, 1, e)``, ``d = +1.375 e²`` (around the
  minor axis). ``e`` from 1e-3 to 1e-20, i.e. ``|d|/M²`` from ~5e-7 to ~5e-41; each run
  covers the first flip (``1.5 ln(4/e) / λ + 10`` s, ``λ = sqrt(0.2)`` rad/s the rate of
  the separatrix).
* ``separatrix``: moments ``(1, 2, 3)``, ``w0 = (1e-6, 1, 1e-6/sqrt(3))`` over 30 s: ``d`` is
  zero to round-off (the state lies on the separatrix as far as double precision can tell)
  and the motion keeps approaching the intermediate axis.

Columns: ``case``, ``I1 I2 I3`` (kg m²), ``t`` (s, every 2 s), ``qw qx qy qz`` (``q_IB``),
``wx wy wz`` (rad/s), 17 significant digits.

Run: ``python tools/make_separatrix_reference.py [--check]`` (needs mpmath; 10-25 min).
"""

from __future__ import annotations

import argparse
import csv
import math
import time
from pathlib import Path

import mpmath as mp

OUT = Path(__file__).resolve().parents[1] / "tests" / "data" / "separatrix_reference.csv"
DPS, CHECK_DPS = 34, 44
STEP_S = 2.0
BODY = (1.0, 2.0, 2.5)
SEPARATRIX_RATE = math.sqrt(0.2)  # sqrt((I3 - I2)(I2 - I1) / (I1 I3)) w2 for the body above and w2 = 1
SIZES = (1e-3, 1e-5, 1e-7, 1e-10, 1e-15, 1e-20)


def cases():
    yield "audit", BODY, (2e-8, 1.0, 4e-8), 130.0
    for e in SIZES:
        t_end = STEP_S * math.ceil((1.5 * math.log(4.0 / e) / SEPARATRIX_RATE + 10.0) / STEP_S)
        yield f"major-{e:.0e}", BODY, (e, 1.0, 2.0 * e), t_end
        yield f"minor-{e:.0e}", BODY, (2.0 * e, 1.0, e), t_end
    yield "separatrix", (1.0, 2.0, 3.0), (1e-6, 1.0, 1e-6 / math.sqrt(3.0)), 30.0


def solve(moments, w0, times, dps):
    """Rows ``(qw, qx, qy, qz, wx, wy, wz)`` at ``times`` by mpmath's Taylor method at ``dps`` digits."""
    with mp.workdps(dps):
        I1, I2, I3 = (mp.mpf(x) for x in moments)
        c1, c2, c3 = (I2 - I3) / I1, (I3 - I1) / I2, (I1 - I2) / I3
        half = mp.mpf(1) / 2

        def rhs(t, y):
            qw, qx, qy, qz, wx, wy, wz = y
            return [
                half * (-qx * wx - qy * wy - qz * wz),
                half * (qw * wx + qy * wz - qz * wy),
                half * (qw * wy + qz * wx - qx * wz),
                half * (qw * wz + qx * wy - qy * wx),
                c1 * wy * wz,
                c2 * wz * wx,
                c3 * wx * wy,
            ]

        y0 = [mp.mpf(1), mp.mpf(0), mp.mpf(0), mp.mpf(0)] + [mp.mpf(w) for w in w0]
        f = mp.odefun(rhs, 0, y0)
        return [[+v for v in f(mp.mpf(t))] for t in times]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help=f"also solve the last flip case at {CHECK_DPS} digits")
    args = parser.parse_args()
    rows = []
    for name, moments, w0, t_end in cases():
        start = time.perf_counter()
        times = [STEP_S * k for k in range(int(round(t_end / STEP_S)) + 1)]
        states = solve(moments, w0, times, DPS)
        flips = [t for t, a, b in zip(times[1:], states, states[1:]) if a[5] * b[5] < 0]
        if name != "separatrix":
            assert flips, f"{name}: no flip of wy in {t_end} s"
        print(f"{name:12s} t_end {t_end:6.0f} s  wy flips by {flips[:3]}  ({time.perf_counter() - start:.0f} s)")
        for t, y in zip(times, states):
            rows.append([name, *moments, t, *y])
        if args.check and name == f"major-{SIZES[-1]:.0e}":
            fine = solve(moments, w0, times, CHECK_DPS)
            dq = max(abs(a[i] - b[i]) for a, b in zip(states, fine) for i in range(4))
            dw = max(abs(a[i] - b[i]) for a, b in zip(states, fine) for i in range(4, 7))
            print(f"  {DPS} against {CHECK_DPS} digits: quaternion {mp.nstr(dq, 2)}, rates {mp.nstr(dw, 2)}")
    with OUT.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["case", "I1", "I2", "I3", "t", "qw", "qx", "qy", "qz", "wx", "wy", "wz"])
        for name, i1, i2, i3, t, *y in rows:
            digits = [mp.nstr(v, 17, min_fixed=1, max_fixed=0) for v in y]
            writer.writerow([name, repr(i1), repr(i2), repr(i3), repr(t), *digits])
    print(f"wrote {OUT} ({len(rows)} rows)")


if __name__ == "__main__":
    main()
