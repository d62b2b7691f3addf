"""Basilisk's ``scenarioMtbMomentumManagementSimple`` and attsim's ``missions/basilisk_mtb_momentum_management.py``.

Runs Basilisk's example (:mod:`tools.peers.basilisk_mtb_momentum`: the
example's modules and numbers, its WMM field) and the attsim mission built
from built-ins only (fed the field history Basilisk computed,
``missions/data/basilisk_mtb_field.npz``), and prints, sample by sample over
the whole 2 hours:

* agreement, logging every 0.5 s step: max and RMS of the attitude
  difference (deg), the body-rate difference (rad/s), the wheel speeds
  (rpm), the motor torques commanded (``rwNullSpace``'s output against
  ``<wheel>_torque_cmd``) and applied (each wheel's ``u_current``, the
  torque it applied over the step ending at ``t``, against
  ``<wheel>_torque`` decided at ``t - 0.5 s``), in N m, the bars' dipoles
  (``dipoleMapping``'s output, what ``MtbEffector`` applies, against
  ``mtb_bar<k>``), A m², and the field each reads (``tamComm``'s against
  the magnetometer's), T;
* speed: Basilisk's ``ExecuteSimulation`` against attsim's ``Mission.run``
  (compiled, in memory), both warm in this process, each logging at the
  example's interval (36 s), the median of interleaved repeats.

Needs Basilisk (``bsk``, the bench extra) and its WMM coefficients beside
attsim (see :mod:`tools.peers.basilisk_mtb_momentum`)::

    python tools/compare_basilisk_mtb_momentum.py [--repeats 7]

Exit status 0 when every target is met (issue 22: attitude 1e-3 deg, wheel
speeds 0.1 rpm, bar dipoles 1e-4 A m², attsim at least 20x faster), 1
otherwise, 2 without Basilisk.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "missions")]

import basilisk_mtb_momentum_management as mission  # noqa: E402

from tools.peers import basilisk_mtb_momentum as peer  # noqa: E402
from tools.peers import agreement as figures  # noqa: E402
from tools.peers import command  # noqa: E402

TARGETS = {"attitude_deg": 1e-3, "wheel_speed_rpm": 0.1, "bar_dipole_Am2": 1e-4}
SPEED_TARGET = 20.0
TITLE = "scenarioMtbMomentumManagementSimple (Basilisk {version}) vs attsim, 7200 s, every 0.5 s step"
WHEELS = ("rw1", "rw2", "rw3", "rw4")
BARS = ("mtb_bar1", "mtb_bar2", "mtb_bar3", "mtb_bar4")


def run_attsim(telemetry_dt_s: float, backend: str = "compiled"):
    """The attsim mission's telemetry (in memory) logging every ``telemetry_dt_s``."""
    return command.logging_every(mission.build, telemetry_dt_s).run(in_memory=True, backend=backend)


def agreement(bsk: dict, tel) -> dict:
    """``{quantity: (max, rms)}`` of attsim against Basilisk, sample by sample (both logging every step); the
    wheels' command is ``rwNullSpace``'s output."""
    df = tel.df
    return {
        **figures.wheel_mission(df, bsk, WHEELS, mission.RPM, "motor_final_Nm"),
        "bar_dipole_Am2": figures.stats(df[list(BARS)].to_numpy() - bsk["dipoles_Am2"]),
        "field_body_T": figures.stats(df[["tam_x", "tam_y", "tam_z"]].to_numpy() - bsk["tam_B_T"]),
    }


def main(argv=None) -> int:
    """The command line (see the module docstring); the exit status."""
    return command.main(__doc__, peer, lambda repeats: command.report_every_step(
        TITLE, peer, mission.build, agreement, TARGETS, SPEED_TARGET, repeats), argv)


if __name__ == "__main__":
    sys.exit(main())
