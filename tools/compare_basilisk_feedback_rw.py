"""Basilisk's ``scenarioAttitudeFeedbackRW`` and attsim's ``missions/basilisk_attitude_feedback_rw.py`` side by side.

Runs Basilisk's example (:mod:`tools.peers.basilisk_feedback_rw`: the
example's modules and numbers) and the attsim mission built from built-ins
only, and prints, sample by sample over the whole 10 min:

* agreement, logging every 0.1 s step: max and RMS of the attitude
  difference (deg), the body-rate difference (rad/s), the wheel speeds
  (rpm), the motor torques requested (``rwMotorTorque``'s output against
  ``<wheel>_torque_cmd``) and applied (each wheel's ``u_current``, the
  torque it applied over the step ending at ``t``, against
  ``<wheel>_torque`` decided at ``t - 0.1 s``), in N m;
* speed: Basilisk's ``ExecuteSimulation`` against attsim's ``Mission.run``
  (compiled, in memory), both warm in this process, each logging at the
  example's interval (6 s), the median of interleaved repeats.

Needs Basilisk (``bsk``, the bench extra) beside attsim::

    python tools/compare_basilisk_feedback_rw.py [--repeats 7]

Exit status 0 when every target is met (attitude 1e-9 deg, wheel speeds
1e-6 rpm, torques 1e-9 N m, attsim at least 20x faster), 1 otherwise.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "missions")]

import basilisk_attitude_feedback_rw as mission  # noqa: E402

from tools.peers import basilisk_feedback_rw as peer  # noqa: E402
from tools.peers import agreement as figures  # noqa: E402
from tools.peers import command  # noqa: E402

TARGETS = {"attitude_deg": 1e-9, "wheel_speed_rpm": 1e-6, "motor_request_Nm": 1e-9, "motor_applied_Nm": 1e-9}
SPEED_TARGET = 20.0
TITLE = "scenarioAttitudeFeedbackRW (Basilisk {version}) vs attsim, 600 s, every 0.1 s step"
WHEELS = ("rw1", "rw2", "rw3")


def run_attsim(telemetry_dt_s: float, backend: str = "compiled"):
    """The attsim mission's telemetry (in memory) logging every ``telemetry_dt_s``."""
    return command.logging_every(mission.build, telemetry_dt_s).run(in_memory=True, backend=backend)


def agreement(bsk: dict, tel) -> dict:
    """``{quantity: (max, rms)}`` of attsim against Basilisk, sample by sample (both logging every step)."""
    return figures.wheel_mission(tel.df, bsk, WHEELS, mission.RPM, "motor_request_Nm")


def main(argv=None) -> int:
    """The command line (see the module docstring); the exit status."""
    return command.main(__doc__, peer, lambda repeats: command.report_every_step(
        TITLE, peer, mission.build, agreement, TARGETS, SPEED_TARGET, repeats), argv)


if __name__ == "__main__":
    sys.exit(main())
