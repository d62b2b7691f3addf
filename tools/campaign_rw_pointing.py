"""One orbit of 10 Hz three-wheel inertial pointing, dispersed: the mission of ``tools/bench_campaign.py``.

The closed-loop scenario of ``tools/bench_mission.py`` (``rw_mission``, the
``QuaternionPD`` variant: perfect sensing, 10 Hz control, rk4 at 0.1 s, 1 Hz
telemetry) with its initial attitude and rate dispersed. Success: after one
orbit the PD has settled (pointing error below 1e-3 deg, |omega| below
1e-6 rad/s), as the mission benchmark checks each of its runs.

Run: ``attsim campaign tools/campaign_rw_pointing.py --runs 200``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import attsim  # noqa: E402
from attsim import rotations  # noqa: E402
from attsim.dispersions import Normal  # noqa: E402
from tools.bench_mission import (  # noqa: E402
    RW_CONVERGED_DEG, RW_CONVERGED_RAD_S, RW_OMEGA0_RAD_S, RW_Q0, RW_TARGET_Q, rw_mission,
)

ATTITUDE_STD_DEG = 10.0  # about each axis, around the benchmark's start (45 deg from the target)
RATE_STD_RAD_S = 5e-4    # per axis, around the benchmark's initial rate (about 2e-3 rad/s)


def dispersions():
    return {
        "attitude_error_rad": Normal([0.0, 0.0, 0.0], [np.radians(ATTITUDE_STD_DEG)] * 3),
        "omega0_rad_s": Normal(list(RW_OMEGA0_RAD_S), [RATE_STD_RAD_S] * 3),
    }


def initial_attitude(attitude_error_rad) -> np.ndarray:
    """The run's ``q_IB`` at t = 0: the benchmark's start turned by the drawn rotation vector (body axes)."""
    return rotations.quat_multiply(RW_Q0, rotations.rotvec_to_quat(attitude_error_rad))


def build(out_dir=None, attitude_error_rad=(0.0, 0.0, 0.0), omega0_rad_s=RW_OMEGA0_RAD_S) -> attsim.Mission:
    mission, _ = rw_mission(out_dir, "pd", q0=initial_attitude(attitude_error_rad), omega0_rad_s=omega0_rad_s)
    return mission


def final_state(t_s, q_wxyz, omega_rad_s):
    """``(pointing error deg, |omega| rad/s)`` at the end of a run (shared with Basilisk's side of the bench)."""
    error_deg = float(np.degrees(rotations.quat_angle_between(np.asarray(q_wxyz)[-1], RW_TARGET_Q)))
    return error_deg, float(np.linalg.norm(np.asarray(omega_rad_s)[-1]))


def criteria(tel):
    df = tel.df
    error_deg, rate = final_state(df.index, df[["qw", "qx", "qy", "qz"]].to_numpy(), df[["wx", "wy", "wz"]].to_numpy())
    return [
        ("pointing error after one orbit [deg]", error_deg, error_deg < RW_CONVERGED_DEG, f"< {RW_CONVERGED_DEG}"),
        ("|omega| after one orbit [rad/s]", rate, rate < RW_CONVERGED_RAD_S, f"< {RW_CONVERGED_RAD_S}"),
    ]


if __name__ == "__main__":
    sys.exit(attsim.cli.run_script(build, criteria))
