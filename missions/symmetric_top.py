"""Symmetric top of Ganapathi (2005), fig. 1: I = [2 2 8], omega0 = [1 0 1], against the closed form.

100 s with rk4 at 0.01 s, torque-free. The body-rate vector turns on a
circle at (I3 - I1)/I1 w3 = 3 rad/s and the symmetry axis precesses on a
cone about H at |H|/I1. Success: rates and attitude within RK4's error
(C h^4 t ~ 2e-6 here) of the closed form, momentum and energy kept, and the
nutation angle constant at atan(2/8).
"""

from __future__ import annotations

import sys

import numpy as np

import attsim
from attsim import analysis, rotations

INERTIA_KG_M2 = (2.0, 2.0, 8.0)  # breaks I_a + I_b >= I_c: a textbook body
OMEGA0_RAD_S = (1.0, 0.0, 1.0)


def build(out_dir=None) -> attsim.Mission:
    return attsim.Mission("symmetric_top", INERTIA_KG_M2, OMEGA0_RAD_S, duration=100.0, method="rk4", max_step=0.01,
                          telemetry_dt=0.1, out_dir=out_dir, allow_nonphysical=True,
                          description=__doc__.splitlines()[0])


def criteria(tel):
    df = tel.df
    exact = analysis.symmetric_top(INERTIA_KG_M2, OMEGA0_RAD_S, df.index)
    inv = analysis.invariants(df, INERTIA_KG_M2)
    rate_error = np.abs(df[["wx", "wy", "wz"]].to_numpy() - exact[["wx", "wy", "wz"]].to_numpy()).max()
    angle_error = rotations.quat_angle_between(df[["qw", "qx", "qy", "qz"]].to_numpy(),
                                               exact[["qw", "qx", "qy", "qz"]].to_numpy()).max()
    nutation = np.abs(analysis.nutation_angle(df, INERTIA_KG_M2) - np.arctan2(2.0, 8.0)).max()
    return [
        ("body-rate error vs closed form [rad/s]", rate_error, rate_error < 1e-5, "< 1e-5"),
        ("attitude error vs closed form [rad]", angle_error, angle_error < 1e-5, "< 1e-5"),
        ("inertial momentum drift [-]", inv["H_I_drift"].abs().max(), inv["H_I_drift"].abs().max() < 1e-7, "< 1e-7"),
        ("kinetic energy drift [-]", inv["T_rot_drift"].abs().max(), inv["T_rot_drift"].abs().max() < 1e-7, "< 1e-7"),
        ("nutation deviation from atan(2/8) [rad]", nutation, nutation < 1e-7, "< 1e-7"),
    ]


if __name__ == "__main__":
    sys.exit(attsim.cli.run_script(build, criteria))
