"""A 20 s reaction-wheel slew for the campaign tests (short enough for a test, compiled, with noise).

Dispersed: the inertia (each principal moment x N(1, 0.05)), the tip-off
rate (N(0, 2e-3) rad/s per axis) and the initial attitude error (rotation
vector N(0, 5 deg) per axis). The rate criterion's bound sits inside the
spread of the final rates, so a campaign has runs that pass and runs that
fail.
"""

from __future__ import annotations

import sys

import numpy as np

import attsim
from attsim import rotations
from attsim.dispersions import Normal

J_KG_M2 = np.diag([0.06, 0.055, 0.02])
TARGET_Q = np.array([1.0, 0.0, 0.0, 0.0])
RATE_BOUND_DEG_S = 0.2


def dispersions():
    return {
        "inertia_scale": Normal([1.0, 1.0, 1.0], [0.05, 0.05, 0.05]),
        "omega0_rad_s": Normal([0.0, 0.0, 0.0], [2e-3, 2e-3, 2e-3]),
        "attitude_error_rad": Normal([0.0, 0.0, 0.0], [np.radians(5.0)] * 3),
    }


def build(out_dir=None, inertia_scale=(1.0, 1.0, 1.0), omega0_rad_s=(0.0, 0.0, 0.0),
          attitude_error_rad=(0.0, 0.0, 0.0)) -> attsim.Mission:
    scale = np.sqrt(np.asarray(inertia_scale, dtype=float))
    mission = attsim.Mission("campaign_slew", scale[:, None] * J_KG_M2 * scale[None, :], omega0=omega0_rad_s,
                             q0=rotations.rotvec_to_quat(attitude_error_rad), duration=20.0, method="rk4",
                             max_step=0.1, telemetry_dt=0.5, seed=1, out_dir=out_dir)
    wheels = [mission.add(attsim.ReactionWheel(f"rw_{a}", d, inertia_kg_m2=2e-5, max_torque_Nm=2e-3,
                                               max_speed_rad_s=600.0)) for a, d in zip("xyz", np.eye(3))]
    gyro = mission.add(attsim.Gyro(rate_hz=10.0, arw_rad_sqrt_s=1e-5))
    tracker = mission.add(attsim.StarTracker(rate_hz=10.0, noise_arcsec=(5.0, 5.0, 30.0)))
    mission.add(attsim.QuaternionPD(TARGET_Q, kp=5e-4, kd=9e-3, period_s=0.1, wheels=wheels, attitude_sensor=tracker,
                                    rate_sensor=gyro))
    return mission


def criteria(tel):
    rate_deg_s = float(np.degrees(np.linalg.norm(tel.df[["wx", "wy", "wz"]].to_numpy()[-1])))
    error_deg = float(np.degrees(rotations.quat_angle_between(tel.df[["qw", "qx", "qy", "qz"]].to_numpy()[-1],
                                                              TARGET_Q)))
    return [
        ("final rate [deg/s]", rate_deg_s, rate_deg_s < RATE_BOUND_DEG_S, f"< {RATE_BOUND_DEG_S}"),
        ("final pointing error [deg]", error_deg, error_deg < 30.0, "< 30"),
    ]


if __name__ == "__main__":
    sys.exit(attsim.cli.run_script(build, criteria))
