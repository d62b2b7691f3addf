"""Asymmetric top of Ganapathi (2005), figs. 4-5: I = [2 8 4], spin about the major and the intermediate axis.

I = [2 8 4] (non-physical: 2 + 4 < 8, a textbook body) with omega0 = [0 1 0.1]
(near the major axis: stable, the spin axis wobbles but stays) and
[0 0.1 1] (near the intermediate axis: unstable, the spin flips). rk4 at
0.01 s for 40 s, torque-free. Success: the classification of each case, the
stable spin staying within 15 deg of its axis, the unstable one reversing,
and momentum and energy kept in both.
"""

from __future__ import annotations

import sys

import numpy as np

import attsim
from attsim import analysis
from attsim.analysis import classify_spin

INERTIA = [2.0, 8.0, 4.0]
CASES = {"asymmetric_top_major": (0.0, 1.0, 0.1), "asymmetric_top_intermediate": (0.0, 0.1, 1.0)}


def build(out_dir=None):
    return [attsim.Propagation(name, INERTIA, omega0, duration=40.0, method="rk4", max_step=0.01, telemetry_every=5,
                               allow_nonphysical=True, description=__doc__.splitlines()[0],
                               out_dir=None if out_dir is None else f"{out_dir}/{name}")
            for name, omega0 in CASES.items()]


def criteria(runs):
    major, intermediate = runs
    w_major = major.df[["wx", "wy", "wz"]].to_numpy()
    wobble = np.degrees(np.arccos(np.abs(w_major[:, 1]) / np.linalg.norm(w_major, axis=1))).max()
    flipped = intermediate.df["wz"].min() < 0 < intermediate.df["wz"].max()
    drift = max(analysis.invariants(run.df, INERTIA)[["H_I_drift", "T_rot_drift"]].abs().max().max() for run in runs)
    c_major = classify_spin(INERTIA, CASES["asymmetric_top_major"])
    c_int = classify_spin(INERTIA, CASES["asymmetric_top_intermediate"])
    return [
        ("[0 1 0.1]: classified major axis, stable", c_major["axis"], c_major["axis"] == "major" and c_major["stable"],
         "major"),
        ("[0 1 0.1]: largest angle between omega and the y axis [deg]", wobble, wobble < 15.0, "< 15"),
        ("[0 0.1 1]: classified intermediate axis, unstable", c_int["axis"],
         c_int["axis"].startswith("intermediate") and not c_int["stable"], "intermediate"),
        ("[0 0.1 1]: the spin about z reverses (wz changes sign)", float(flipped), flipped, "= 1"),
        ("largest momentum or energy drift [-]", drift, drift < 1e-6, "< 1e-6"),
    ]


if __name__ == "__main__":
    sys.exit(attsim.cli.run_script(build, criteria))
