"""Free rigid body of Vilmart's entry (seed 002): every integrator against the exact solution.

I = (0.376, 0.627, 1.0), body angular momentum (0, 0.6, -0.8), q0 = identity,
0 <= t <= 40 s, h = 0.01 s: rk4, rkn, rkmk4, dcm, dop853, split2, split4,
split6 and exact itself, in one comparison report. Success: each method
within the error its order predicts at this step (bounds from
tools/study_integrators.py's table, with margin).
"""

from __future__ import annotations

import sys

import numpy as np

import attsim
from attsim import rotations

MOMENTS = np.array([0.376, 0.627, 1.0])
OMEGA0 = np.array([0.0, 0.6, -0.8]) / MOMENTS
BOUNDS = {"exact": 1e-11, "split6": 2e-12, "split4": 1e-9, "split2": 1e-3, "rk4": 5e-9, "rkn": 5e-8, "rkmk4": 5e-9,
          "dcm": 5e-8, "dop853": 1e-7}


def build(out_dir=None):
    return [attsim.Propagation(f"free_rigid_body_{method}", MOMENTS, OMEGA0, duration=40.0, method=method,
                               max_step=0.01, telemetry_every=1, description=__doc__.splitlines()[0],
                               out_dir=None if out_dir is None else f"{out_dir}/{method}")
            for method in BOUNDS]


def criteria(runs):
    exact = attsim.propagate(MOMENTS, OMEGA0, t_end=runs[0].df.index[-1], dt=0.01, method="exact")
    rows = []
    for run in runs:
        method = run.meta["method"]
        df = run.df.reindex(exact.index, method="nearest")
        error = max(np.abs((df[["wx", "wy", "wz"]].to_numpy() - exact[["wx", "wy", "wz"]].to_numpy()) * MOMENTS).max(),
                    rotations.quat_angle_between(df[["qw", "qx", "qy", "qz"]].to_numpy(),
                                                 exact[["qw", "qx", "qy", "qz"]].to_numpy()).max())
        rows.append((f"{method}: max momentum or attitude error vs exact", error, error < BOUNDS[method],
                     f"< {BOUNDS[method]:.0e}"))
    return rows


if __name__ == "__main__":
    sys.exit(attsim.cli.run_script(build, criteria))
