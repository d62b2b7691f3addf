"""Error against step size for rk4 (Ganapathi 2005, fig. 2) on the symmetric top.

I = [2 2 8], omega0 = [1 0 1], 30 s, rk4 at h = 0.08, 0.04, 0.02, 0.01 and
0.005 s, against the closed form. Success: the body-rate error falls as
h^4 (fitted slope within 0.2 of 4), and the finest step is within 1e-6.
"""

from __future__ import annotations

import sys

import numpy as np

import attsim
from attsim import analysis

STEPS = (0.08, 0.04, 0.02, 0.01, 0.005)


def build(out_dir=None):
    return [attsim.Propagation(f"time_step_{h:g}", [2.0, 2.0, 8.0], (1.0, 0.0, 1.0), duration=30.0, method="rk4",
                               max_step=h, allow_nonphysical=True, description=__doc__.splitlines()[0],
                               out_dir=None if out_dir is None else f"{out_dir}/h_{h:g}")
            for h in STEPS]


def criteria(runs):
    errors = []
    for run in runs:
        exact = analysis.symmetric_top([2, 2, 8], [1, 0, 1], run.df.index)
        errors.append(np.abs(run.df[["wx", "wy", "wz"]].to_numpy() - exact[["wx", "wy", "wz"]].to_numpy()).max())
    steps = np.array([run.meta["max_step_s"] for run in runs])
    slope = np.polyfit(np.log(steps), np.log(errors), 1)[0]
    rows = [(f"h = {h:g} s: max body-rate error [rad/s]", e, True, "reported") for h, e in zip(steps, errors)]
    rows.append(("fitted order of convergence [-]", slope, abs(slope - 4.0) < 0.2, "4 +- 0.2"))
    rows.append(("error at the finest step [rad/s]", errors[-1], errors[-1] < 1e-6, "< 1e-6"))
    return rows


if __name__ == "__main__":
    sys.exit(attsim.cli.run_script(build, criteria))
