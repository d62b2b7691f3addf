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

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "missions")]

import basilisk_mtb_momentum_management as mission  # noqa: E402

from attsim import rotations  # noqa: E402
from tools.peers import basilisk_mtb_momentum as peer  # noqa: E402
from tools.peers import timing  # noqa: E402

TARGETS = {"attitude_deg": 1e-3, "wheel_speed_rpm": 0.1, "bar_dipole_Am2": 1e-4}
SPEED_TARGET = 20.0
WHEELS = ("rw1", "rw2", "rw3", "rw4")
BARS = ("mtb_bar1", "mtb_bar2", "mtb_bar3", "mtb_bar4")


def build_attsim(telemetry_dt_s: float):
    """The attsim mission logging every ``telemetry_dt_s``."""
    built = mission.build()
    built.telemetry_dt_s = telemetry_dt_s
    return built


def run_attsim(telemetry_dt_s: float, backend: str = "compiled"):
    """The attsim mission's telemetry (in memory) logging every ``telemetry_dt_s``."""
    return build_attsim(telemetry_dt_s).run(in_memory=True, backend=backend)


def _stats(difference) -> tuple[float, float]:
    d = np.abs(np.asarray(difference, dtype=float))
    return float(d.max()), float(np.sqrt(np.mean(d ** 2)))


def agreement(bsk: dict, tel) -> dict:
    """``{quantity: (max, rms)}`` of attsim against Basilisk, sample by sample (both logging every step)."""
    df = tel.df
    t = df.index.to_numpy()
    if len(t) != len(bsk["t_s"]) or not np.allclose(t, bsk["t_s"], rtol=0.0, atol=1e-9):
        raise ValueError(f"the runs logged different times: {len(t)} rows against Basilisk's {len(bsk['t_s'])}")
    q_bsk = rotations.mrp_to_quat(bsk["sigma_BN"])
    angle = np.degrees(rotations.quat_angle_between(df[["qw", "qx", "qy", "qz"]].to_numpy(), q_bsk))
    rate = np.linalg.norm(df[["wx", "wy", "wz"]].to_numpy() - bsk["omega_rad_s"], axis=1)
    speeds = df[[f"{w}_speed" for w in WHEELS]].to_numpy()
    request = df[[f"{w}_torque_cmd" for w in WHEELS]].to_numpy()
    applied = df[[f"{w}_torque" for w in WHEELS]].to_numpy()
    return {
        "attitude_deg": _stats(angle),
        "body_rate_rad_s": _stats(rate),
        "wheel_speed_rpm": _stats((speeds - bsk["wheel_speed_rad_s"]) / mission.RPM),
        "motor_request_Nm": _stats(request - bsk["motor_final_Nm"]),
        "motor_applied_Nm": _stats(applied[:-1] - bsk["motor_applied_Nm"][1:]),  # Basilisk logs it a step later
        "bar_dipole_Am2": _stats(df[list(BARS)].to_numpy() - bsk["dipoles_Am2"]),
        "field_body_T": _stats(df[["tam_x", "tam_y", "tam_z"]].to_numpy() - bsk["tam_B_T"]),
    }


def speed_ratio(repeats: int) -> tuple[float, float, float]:
    """:func:`tools.peers.timing.speed_ratio` of this mission logging at the example's interval."""
    return timing.speed_ratio(peer, lambda: build_attsim(peer.EXAMPLE_RECORD_S), repeats)


def compare(repeats: int = 7) -> tuple[dict, tuple[float, float, float]]:
    """The agreement and the speed ratio (see the module docstring)."""
    return agreement(peer.run(peer.DT_S), run_attsim(peer.DT_S)), speed_ratio(repeats)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7, help="interleaved timing repeats (default 7)")
    args = parser.parse_args(argv)
    if not peer.available():
        print("Basilisk (bsk) is not importable: install the bench extra", file=sys.stderr)
        return 2
    figures, (b, a, ratio) = compare(args.repeats)
    print(f"scenarioMtbMomentumManagementSimple (Basilisk {peer.version()}) vs attsim, 7200 s, every 0.5 s step")
    ok = True
    for name, (worst, rms) in figures.items():
        target = TARGETS.get(name)
        met = target is None or worst <= target
        ok &= met
        print(f"  {name:18s} max {worst:.3e}  rms {rms:.3e}" + ("" if target is None else
                                                                f"  target {target:g}: {'ok' if met else 'MISSED'}"))
    met = ratio >= SPEED_TARGET
    ok &= met
    print(f"  speed: Basilisk ExecuteSimulation {b * 1e3:.1f} ms, attsim Mission.run {a * 1e3:.1f} ms (medians of "
          f"{args.repeats}, logging every {peer.EXAMPLE_RECORD_S:g} s): {ratio:.1f}x  target {SPEED_TARGET:g}x: "
          f"{'ok' if met else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
