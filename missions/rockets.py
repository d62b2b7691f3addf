"""Two opposed rockets on a symmetric top (Ganapathi 2005, sec. 7): torque z_world x x_top.

A symmetric top I = [2 2 8] spinning at 3 rad/s about its axis, tilted
0.4 rad from the world vertical, carries two rockets on opposite rims
pushing opposite ways, so the net force is zero and the torque, fixed to
the top's geometry, is z_world x (top axis): like gravity on a heavy top.
The torque is a function of the attitude, evaluated at every RK4 stage.
Success: the vertical component of the angular momentum is conserved (the
torque is always horizontal), while the horizontal part precesses.
"""

from __future__ import annotations

import sys

import numpy as np

import attsim
from attsim import analysis, rotations

INERTIA = [2.0, 2.0, 8.0]


def rockets(t, q, omega):
    """Body torque of the two rockets: z_world x (the top's axis in the world), in body axes."""
    R = rotations.quat_to_dcm(q)
    return R.T @ np.cross([0.0, 0.0, 1.0], R[:, 2])


def build(out_dir=None):
    return attsim.Propagation("rockets", INERTIA, (0.0, 0.0, 3.0), q0=rotations.axis_angle_to_quat([1, 0, 0], 0.4),
                              duration=20.0, method="rk4", max_step=0.005, telemetry_every=4, torque=rockets,
                              allow_nonphysical=True, out_dir=out_dir, description=__doc__.splitlines()[0])


def criteria(tel):
    H_I = analysis.angular_momentum_inertial(tel.df, INERTIA).to_numpy()
    vertical = np.ptp(H_I[:, 2]) / np.abs(H_I[0, 2])
    horizontal = np.degrees(np.ptp(np.unwrap(np.arctan2(H_I[:, 1], H_I[:, 0]))))
    return [
        ("vertical momentum change, relative [-]", vertical, vertical < 1e-9, "< 1e-9"),
        ("precession of the horizontal momentum [deg]", horizontal, horizontal > 10.0, "> 10"),
    ]


if __name__ == "__main__":
    sys.exit(attsim.cli.run_script(build, criteria))
