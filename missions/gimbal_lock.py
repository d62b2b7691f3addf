"""Gimbal lock (Gray, Rubinoff & Sohon): one tumble through pitch 90 deg, three attitude representations.

A body turning at 0.5 rad/s about its y axis from level passes pitch = 90
deg at t = pi s. 3-2-1 Euler angles stop there with a GimbalLockError (the
run is kept as partial telemetry); direction cosines with the GRS
corrections and quaternions go through. Success: euler321 stops within a
degree of the singularity, before 3.2 s; dcm and rk4 finish and match the
exact rotation to 1e-9 rad.
"""

from __future__ import annotations

import math
import sys

import attsim
from attsim import rotations
from attsim.testing import NotEvaluated

INERTIA = [1.0, 2.0, 2.5]
OMEGA0 = (0.0, 0.5, 0.0)
SINGULAR_S = (math.pi / 2) / OMEGA0[1]  # pitch reaches 90 deg


def build(out_dir=None):
    return [attsim.Propagation(f"gimbal_lock_{method}", INERTIA, OMEGA0, duration=10.0, method=method, max_step=0.01,
                               description=__doc__.splitlines()[0], out_dir=None if out_dir is None else f"{out_dir}/{method}")
            for method in ("euler321", "dcm", "rk4")]


def criteria(runs):
    euler, dcm, rk4 = runs
    stopped, t_stop = float(euler.partial), euler.df.index[-1]
    if not euler.partial and t_stop < SINGULAR_S:  # a shortened run never reaches pitch 90 deg
        stopped = t_stop = NotEvaluated(f"the run ends at {t_stop:.6g} s, before the singularity at {SINGULAR_S:.6g} s")
    rows = [("euler321: stopped at the singularity (partial run)", stopped, euler.partial, "= 1"),
            ("euler321: time it stopped [s]", t_stop, t_stop < 3.2, "< 3.2")]
    for run in (dcm, rk4):
        t = run.df.index.to_numpy()
        exact = rotations.axis_angle_to_quat([0, 1, 0], 0.5 * t)
        error = rotations.quat_angle_between(run.df[["qw", "qx", "qy", "qz"]].to_numpy(), exact).max()
        rows.append((f"{run.meta['method']}: complete, attitude error vs exact [rad]", error, (not run.partial) and error < 1e-9, "< 1e-9"))
    return rows


if __name__ == "__main__":
    sys.exit(attsim.cli.run_script(build, criteria))
