"""Advitiy without control, starting aligned with and at rest in the orbit frame.

One orbit twice: with no disturbance at all, and with gravity gradient only.
At rest in the orbit frame means turning with it, at the orbit rate about
the negative orbit normal. Reports the drift from the orbit frame.

Success: without torques the body keeps turning with the orbit frame (drift
below 5 deg over the orbit, left by the small products of inertia, which
make the pitch axis not quite principal). With gravity gradient Advitiy's
nearly equal moments give a weak torque: pitch is restoring (I_x > I_z) but
I_y is the smallest moment, outside the Lagrange region for roll and yaw,
so nothing holds the frame; over one orbit the drift stays within 10 deg.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _advitiy as advitiy  # noqa: E402

import attsim  # noqa: E402
from attsim import rotations  # noqa: E402
from attsim.environment import lvlh_quaternion  # noqa: E402


def drift_deg(tel, env) -> np.ndarray:
    r, v = env.orbit.state_eci(tel.df.index.to_numpy())
    return np.degrees(rotations.quat_angle_between(lvlh_quaternion(r, v), tel.df[["qw", "qx", "qy", "qz"]].to_numpy()))


def _mission(gravity_gradient: bool, out_dir=None) -> attsim.Mission:
    env = advitiy.environment(field="dipole", disturbances=False, gravity_gradient=gravity_gradient)
    n = env.orbit.mean_motion_rad_s
    name = "advitiy_orbit_hold" + ("_gg" if gravity_gradient else "_free")
    return attsim.Mission(name, advitiy.INERTIA_KG_M2, omega0=(0.0, -n, 0.0), q0=advitiy.orbit_frame_attitude(env),
                          duration=env.orbit.period_s, method="rk4", max_step=1.0, telemetry_dt=10.0, environment=env,
                          out_dir=None if out_dir is None else f"{out_dir}/{name}", description=__doc__.splitlines()[0])


def build(out_dir=None):
    return [_mission(False, out_dir), _mission(True, out_dir)]


def criteria(runs):
    env = advitiy.environment(field="dipole", disturbances=False)
    free, gg = (drift_deg(run, env) for run in runs)
    return [
        ("max drift from the orbit frame, no torque [deg]", free.max(), free.max() < 5.0, "< 5"),
        ("max drift from the orbit frame, gravity gradient [deg]", gg.max(), gg.max() < 10.0, "< 10"),
    ]


if __name__ == "__main__":
    sys.exit(attsim.cli.run_script(build, criteria))
