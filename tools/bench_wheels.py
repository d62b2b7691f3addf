"""What wheel friction and imbalance cost a mission: the same three-wheel pointing run, plain and rough.

Prints the median CPU time (``time.process_time``, less swayed than wall
time by other processes on a shared machine) of a compiled run (and of the Python path with
``--python``) of a 10 Hz three-wheel QPD mission with a 0.01 s step, for
wheels without friction (the momenta are then linear in time, not
integrated), with Coulomb, viscous and Stribeck friction (the momenta are
integrated on the method's stages), and with friction and static and
dynamic imbalance; and each one's ratio to the plain wheels. The runs take
turns (``benchutil.interleaved_times``), so the machine's load reaches them
alike.

Run: ``python tools/bench_wheels.py [--repeats 7] [--python]``.
"""

from __future__ import annotations

import os

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

# warm figures: every run on the compiled backend (the first, untimed, compiles what is missing)
os.environ.setdefault("ATTSIM_BACKEND", "compiled")

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import attsim  # noqa: E402
from tools.benchutil import interleaved_times  # noqa: E402

J = np.array([[0.06, 0.001, -0.0005], [0.001, 0.055, 0.0008], [-0.0005, 0.0008, 0.02]])
FRICTION = dict(coulomb_friction_Nm=2e-5, viscous_friction_Nm_s_rad=1e-7, static_friction_Nm=5e-5,
                stribeck_speed_rad_s=10.0)
IMBALANCE = dict(static_imbalance_kg_m=5e-7, dynamic_imbalance_kg_m2=1e-7, position_m=(0.05, 0.02, -0.03))
VARIANTS = {"plain": {}, "friction": FRICTION, "friction + imbalance": {**FRICTION, **IMBALANCE}}


def build(out_dir: Path, model: dict, duration_s: float) -> attsim.Mission:
    m = attsim.Mission("bench_wheels", J, (0.02, -0.03, 0.01), duration=duration_s, max_step=0.01,
                       telemetry_dt=1.0, seed=1, out_dir=out_dir)
    wheels = [m.add(attsim.ReactionWheel(f"rw_{a}", d, 2e-5, 1e-3, 300.0, speed0_rad_s=s0, **model))
              for a, d, s0 in zip("xyz", np.eye(3), (-5.0, 120.0, -80.0))]
    gyro = m.add(attsim.Gyro(rate_hz=10.0, arw_rad_sqrt_s=1e-5))
    tracker = m.add(attsim.StarTracker(rate_hz=10.0, noise_arcsec=10.0))
    m.add(attsim.QuaternionPD(attsim.rotations.axis_angle_to_quat([0.2, 0.9, -0.4], 0.8), kp=5e-3, kd=2e-2,
                              period_s=0.1, wheels=wheels, attitude_sensor=tracker, rate_sensor=gyro))
    return m


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--duration", type=float, default=600.0, help="simulated seconds per run")
    parser.add_argument("--python", action="store_true", help="also time the Python path")
    args = parser.parse_args()
    paths = [True] + ([False] if args.python else [])
    with tempfile.TemporaryDirectory() as tmp:
        runs = {}
        for compiled in paths:
            for name, model in VARIANTS.items():
                def run(model=model, compiled=compiled, name=name):
                    mission = build(Path(tmp) / f"{name}_{compiled}".replace(" ", ""), model, args.duration)
                    start = time.process_time()
                    mission.run(compiled=compiled)
                    return time.process_time() - start

                runs[(compiled, name)] = run

        def warmup():
            for run in runs.values():
                run()

        samples = interleaved_times(runs, args.repeats, warmup)
    print(f"three-wheel QPD, 10 Hz, max_step 0.01 s, {args.duration:g} s simulated; medians of {args.repeats} "
          "interleaved runs")
    for compiled in paths:
        base = statistics.median(samples[(compiled, "plain")])
        for name in VARIANTS:
            median = statistics.median(samples[(compiled, name)])
            label = "compiled" if compiled else "python"
            print(f"  {label:8s} {name:22s} {median:7.3f} s   x{median / base:5.2f} of plain")


if __name__ == "__main__":
    main()
