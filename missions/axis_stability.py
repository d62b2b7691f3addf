"""Stability of spin about the major, minor and intermediate axes (Bhattu 2019, Advitiy mini project).

I = diag(1, 5, 3) with omega0 = (0.1, 0.08, 1) (about the intermediate axis
z: unstable) and (0.1, 1, 0.1) (about the major axis y: stable); I =
diag(3, 1, 4) with (0.1, 1, 0.1) (about the minor axis y: stable without
dissipation). rk4 at 0.01 s, 60 s, torque-free. Success: each spin
classified as expected, the stable ones staying within 15 deg of their
axis, the intermediate one reversing, with the growth rate of the
linearised perturbation reported.
"""

from __future__ import annotations

import sys

import numpy as np

import attsim
from attsim.analysis import classify_spin

CASES = {
    "axis_stability_intermediate": (np.diag([1.0, 5.0, 3.0]), (0.1, 0.08, 1.0), 2, "intermediate"),
    "axis_stability_major": (np.diag([1.0, 5.0, 3.0]), (0.1, 1.0, 0.1), 1, "major"),
    "axis_stability_minor": (np.diag([3.0, 1.0, 4.0]), (0.1, 1.0, 0.1), 1, "minor"),
}


def build(out_dir=None):
    return [attsim.Propagation(name, J, omega0, duration=60.0, method="rk4", max_step=0.01, telemetry_every=5,
                               allow_nonphysical=True, description=__doc__.splitlines()[0],
                               out_dir=None if out_dir is None else f"{out_dir}/{name}")
            for name, (J, omega0, _, _) in CASES.items()]


def criteria(runs):
    rows = []
    for run, (name, (J, omega0, axis, expected)) in zip(runs, CASES.items()):
        spin = classify_spin(np.diag(J), omega0)
        w = run.df[["wx", "wy", "wz"]].to_numpy()
        rows.append((f"{name}: classified", spin["axis"], spin["axis"].startswith(expected), expected))
        if expected == "intermediate":
            reversed_ = bool(w[:, axis].min() < 0 < w[:, axis].max())
            rows.append((f"{name}: spin reverses; growth rate {spin['growth_rate_rad_s']:.3f} rad/s", float(reversed_),
                         reversed_, "= 1"))
        else:
            angle = np.degrees(np.arccos(np.abs(w[:, axis]) / np.linalg.norm(w, axis=1))).max()
            rows.append((f"{name}: largest angle between omega and its axis [deg]", angle, angle < 15.0, "< 15"))
    return rows


if __name__ == "__main__":
    sys.exit(attsim.cli.run_script(build, criteria))
