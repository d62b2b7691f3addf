"""What sensor realism costs a mission (issue 11, item 6).

The mission: one orbit (5,800 s) of a 10 Hz MEKF chain — gyro, star tracker
and magnetometer at 10 Hz, the MEKF on the gyro and the tracker, a
quaternion PD on three wheels at 10 Hz, 1 Hz telemetry — run

* with plain sensors (every realism setting at its default), and
* with realism on: every sensor mounted (``q_BS``, misalignment), with
  scale factor errors and biases, a fault each (a tracker dropout, a gyro
  bias jump, a stuck magnetometer) and a Sun exclusion cone on the tracker.

Prints, on the compiled loop and on the Python path (a tenth of the orbit),
the medians of process time over interleaved repeats in this process and the
ratio realism / plain.

``--against TREE`` also compares the plain mission with another source tree
of attsim (e.g. ``git archive main | tar -x -C /tmp/main``): each run in its
own process (``PYTHONPATH=TREE`` and this tree, in turns), process-time
medians and the ratio this tree / that tree, i.e. what the realism code costs
a mission that does not use it.

Run: ``python tools/bench_sensors.py [--repeats N] [--against TREE]``
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# warm figures: every run on the compiled backend (the first, untimed, compiles what is missing)
os.environ.setdefault("ATTSIM_BACKEND", "compiled")

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

ORBIT_S = 5800.0


def build(out, realism: bool, duration_s: float):
    import attsim
    from attsim import rotations
    from attsim.environment import Environment, KeplerOrbit

    J = np.array([[0.06, 0.001, -0.0005], [0.001, 0.055, 0.0008], [-0.0005, 0.0008, 0.02]])
    env = Environment(KeplerOrbit.circular(600.0, 97.8, epoch="2024-03-20T00:00:00"), field="dipole")
    m = attsim.Mission("bench_sensors", J, (0.01, -0.02, 0.005), duration=duration_s, telemetry_dt=1.0, seed=3,
                       out_dir=out, environment=env)
    wheels = [m.add(attsim.ReactionWheel(f"rw_{a}", d, 2e-5, 2e-3, 600.0)) for a, d in zip("xyz", np.eye(3))]
    mount = rotations.axis_angle_to_quat([0.3, -0.2, 0.9], 0.7)
    extra = {}
    if realism:
        extra = dict(q_BS=mount, misalignment_rad=(1e-3, -5e-4, 2e-3))
    gyro = m.add(attsim.Gyro(10.0, arw_rad_sqrt_s=1e-5, bias_rad_s=(3e-4, -2e-4, 1e-4), bias_rw_rad_s_sqrt_s=1e-7,
                             **extra, **(dict(scale_factor_error=1e-3, faults=[attsim.SensorFault(
                                 1000.0, "bias_jump", 100.0, bias=(1e-4, 0.0, 0.0))]) if realism else {})))
    tracker = m.add(attsim.StarTracker(10.0, noise_arcsec=(8.0, 8.0, 30.0), **extra, **(dict(
        bias_arcsec=(5.0, -5.0, 10.0), sun_exclusion_deg=20.0,
        faults=[attsim.SensorFault(2000.0, "dropout", 60.0)]) if realism else {})))
    m.add(attsim.Magnetometer(10.0, noise_T=1e-8, **extra, **(dict(
        scale_factor_error=2e-3, faults=[attsim.SensorFault(3000.0, "stuck", 30.0)]) if realism else {})))
    mekf = m.add(attsim.MEKF(gyro, star_tracker=tracker, q0=(1.0, 0.0, 0.0, 0.0), star_tracker_noise_arcsec=60.0))
    target = rotations.axis_angle_to_quat([0.2, 0.5, -0.8], np.radians(20.0))
    m.add(attsim.QuaternionPD(target, kp=5e-4, kd=9e-3, period_s=0.1, wheels=wheels, attitude_source=mekf,
                              rate_source=mekf))
    return m


def run_once(realism: bool, compiled: bool, duration_s: float) -> float:
    """Process time (s) of one ``Mission.run``."""
    with tempfile.TemporaryDirectory() as out:
        mission = build(out, realism, duration_s)
        start = time.process_time()
        mission.run(compiled=compiled)
        return time.process_time() - start


def in_process(repeats: int) -> None:
    for compiled, duration_s in ((True, ORBIT_S), (False, ORBIT_S / 10)):
        for realism in (False, True):
            run_once(realism, compiled, 60.0)  # compile or load the caches outside the timing
        samples = {False: [], True: []}
        for _ in range(repeats):
            for realism in (False, True):
                samples[realism].append(run_once(realism, compiled, duration_s))
        plain, real = statistics.median(samples[False]), statistics.median(samples[True])
        path = "compiled loop" if compiled else "Python path  "
        print(f"{path} {duration_s:6.0f} s: plain sensors {plain:.3f} s, realism on {real:.3f} s, "
              f"ratio {real / plain:.3f} (process-time medians of {repeats})")


_CHILD = """
import sys, time, tempfile, statistics
sys.path.insert(0, {tools!r})
from bench_sensors import run_once
run_once(False, {compiled}, 60.0)
print(statistics.median([run_once(False, {compiled}, {duration}) for _ in range({repeats})]))
"""


def against(tree: Path, rounds: int, repeats: int) -> None:
    for compiled, duration_s in ((True, ORBIT_S), (False, ORBIT_S / 10)):
        samples = {"this": [], "other": []}
        for _ in range(rounds):
            for name, path in (("other", tree), ("this", ROOT)):
                code = _CHILD.format(tools=str(ROOT / "tools"), compiled=compiled, duration=duration_s,
                                     repeats=repeats)
                env = {**os.environ, "PYTHONPATH": str(path)}
                result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                                        env=env, cwd=tempfile.gettempdir())
                samples[name].append(float(result.stdout.split()[-1]))
        this, other = statistics.median(samples["this"]), statistics.median(samples["other"])
        path = "compiled loop" if compiled else "Python path  "
        print(f"{path} {duration_s:6.0f} s, plain sensors: {tree} {other:.3f} s, this tree {this:.3f} s, "
              f"ratio {this / other:.3f} (process-time medians of {rounds} interleaved processes)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--against", type=Path, help="another attsim source tree to compare the plain mission with")
    parser.add_argument("--rounds", type=int, default=8, help="processes per tree with --against")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    if args.against is not None:
        against(args.against.resolve(), args.rounds, args.repeats)
    else:
        in_process(args.repeats)


if __name__ == "__main__":
    main()
