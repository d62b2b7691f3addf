"""Symmetric top of Ganapathi (2005), fig. 1: I = [2 2 8], omega0 = [1 0 1].

Propagates 100 s with rk4 at dt = 0.01 s and checks the run against the
closed-form solution (body-rate circle and precession cone) and the
conservation laws. Prints one PASS/FAIL line per criterion and exits
non-zero when one fails.

Run: ``python missions/symmetric_top.py`` or ``attsim run symmetric_top``.
"""

from __future__ import annotations

import sys
import time

import numpy as np

import attsim
from attsim import analysis, rotations

INERTIA_KG_M2 = (2.0, 2.0, 8.0)  # breaks I_a + I_b >= I_c: a textbook body
OMEGA0_RAD_S = (1.0, 0.0, 1.0)
T_END_S, DT_S = 100.0, 0.01

# bounds: RK4's global error C h^4 t at h = 0.01 s is ~2e-6 here
CRITERIA = {
    "body-rate error vs analytic [rad/s]": 1e-5,
    "attitude error vs analytic [rad]": 1e-5,
    "inertial momentum drift [-]": 1e-7,
    "kinetic energy drift [-]": 1e-7,
    "nutation deviation from atan(2/8) [rad]": 1e-7,
}


def main() -> int:
    start = time.perf_counter()
    df = attsim.propagate(INERTIA_KG_M2, OMEGA0_RAD_S, t_end=T_END_S, dt=DT_S, allow_nonphysical=True)
    wall_s = time.perf_counter() - start
    exact = analysis.symmetric_top(INERTIA_KG_M2, OMEGA0_RAD_S, df.index)
    inv = analysis.invariants(df)
    measured = {
        "body-rate error vs analytic [rad/s]": np.abs(df[["wx", "wy", "wz"]].to_numpy() - exact[["wx", "wy", "wz"]].to_numpy()).max(),
        "attitude error vs analytic [rad]": rotations.quat_angle_between(
            df[["qw", "qx", "qy", "qz"]].to_numpy(), exact[["qw", "qx", "qy", "qz"]].to_numpy()
        ).max(),
        "inertial momentum drift [-]": inv["H_I_drift"].abs().max(),
        "kinetic energy drift [-]": inv["T_rot_drift"].abs().max(),
        "nutation deviation from atan(2/8) [rad]": np.abs(analysis.nutation_angle(df) - np.arctan2(2.0, 8.0)).max(),
    }
    print(f"symmetric_top: I = {list(INERTIA_KG_M2)} kg m^2 (non-physical, allowed), omega0 = {list(OMEGA0_RAD_S)} rad/s")
    print(f"  rk4, dt = {DT_S} s, {len(df) - 1} steps to t = {T_END_S} s in {wall_s:.3f} s wall (including first-call setup)")
    precession_rad_s = np.linalg.norm(inv[["H_I_x", "H_I_y", "H_I_z"]].iloc[0]) / INERTIA_KG_M2[0]
    print(f"  |H| = {inv['H_norm'].iloc[0]:.6f} N m s, precession rate |H|/I1 = {precession_rad_s:.6f} rad/s, "
          f"body-rate circle at (I3 - I1)/I1 w3 = {(INERTIA_KG_M2[2] - INERTIA_KG_M2[0]) / INERTIA_KG_M2[0] * OMEGA0_RAD_S[2]:.1f} rad/s")
    failed = 0
    for name, bound in CRITERIA.items():
        ok = measured[name] <= bound
        failed += not ok
        print(f"{'PASS' if ok else 'FAIL'}  {name}: {measured[name]:.3e} (bound {bound:.0e})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
