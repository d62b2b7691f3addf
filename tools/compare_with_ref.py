"""Does this checkout change a plain-wheel mission against another commit? Telemetry bit for bit, and speed.

Exports ``--ref`` (default ``main``) with ``git archive`` to a temporary
directory, then runs the same three-wheel QPD pointing mission (plain wheels:
no friction, no imbalance; 10 Hz star tracker and gyro, max_step 0.01 s) with
each source tree in turn, in fresh interpreters that alternate (ref, this,
ref, this, ...) so the machine's load reaches both alike. Each interpreter
times only ``mission.run`` in CPU time (``time.process_time``: less swayed
than wall time by other processes on a shared machine; the recorder's
thread counts too), its numba cache warmed first. Prints whether the
telemetry of the two is identical bit for bit (NaN where both are NaN), and
the median run time of each and their ratio, for the compiled loop and the
Python path.

Run: ``python tools/compare_with_ref.py [--ref main] [--repeats 5]``.
"""

from __future__ import annotations

import os

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

# warm figures: every run on the compiled backend (the first, untimed, compiles what is missing)
os.environ.setdefault("ATTSIM_BACKEND", "compiled")

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

RUN = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
import numpy as np, attsim
J = np.array([[0.06, 0.001, -0.0005], [0.001, 0.055, 0.0008], [-0.0005, 0.0008, 0.02]])
compiled, duration, out = sys.argv[2] == "compiled", float(sys.argv[3]), sys.argv[4]
m = attsim.Mission("compare", J, (0.02, -0.03, 0.01), duration=duration, max_step=0.01, telemetry_dt=1.0, seed=2,
                   out_dir=out)
wheels = [m.add(attsim.ReactionWheel(f"rw_{a}", d, 2e-5, 1e-3, 300.0, speed0_rad_s=s))
          for a, d, s in zip("xyz", np.eye(3), (-5.0, 120.0, -80.0))]
gyro = m.add(attsim.Gyro(rate_hz=10.0, arw_rad_sqrt_s=1e-5))
tracker = m.add(attsim.StarTracker(rate_hz=10.0, noise_arcsec=10.0))
m.add(attsim.QuaternionPD(attsim.rotations.axis_angle_to_quat([0.2, 0.9, -0.4], 0.8), kp=5e-3, kd=2e-2,
                          period_s=0.1, wheels=wheels, attitude_sensor=tracker, rate_sensor=gyro))
start = time.process_time()
tel = m.run(compiled=compiled)
elapsed = time.process_time() - start
np.save(out + ".npy", tel.df.to_numpy())
print(json.dumps(elapsed))
"""


def run(source: Path, path: str, duration_s: float, out: Path) -> float:
    result = subprocess.run([sys.executable, "-c", RUN, str(source), path, str(duration_s), str(out)],
                            capture_output=True, text=True, check=True, cwd=source)
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ref", default="main")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        reference = Path(tmp) / "ref"
        reference.mkdir()
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.ref], capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", str(reference)], input=archive.stdout, check=True)
        trees = {args.ref: reference, "this": ROOT}
        for path, duration in (("compiled", 3000.0), ("python", 300.0)):
            for name, source in trees.items():  # warm each tree's numba cache, untimed
                run(source, path, 1.0, Path(tmp) / f"warm_{name}")
            times = {name: [] for name in trees}
            for k in range(args.repeats):
                for name, source in trees.items():
                    times[name].append(run(source, path, duration, Path(tmp) / f"{name}_{path}_{k}"))
            a, b = (np.load(Path(tmp) / f"{name}_{path}_0.npy") for name in trees)
            same = a.shape == b.shape and np.array_equal(a, b, equal_nan=True)
            medians = {name: statistics.median(t) for name, t in times.items()}
            print(f"{path} path, {duration:g} s simulated ({duration / 0.01:.0f} steps): telemetry identical to "
                  f"{args.ref}: {same}; median CPU {medians[args.ref]:.3f} s ({args.ref}), {medians['this']:.3f} s "
                  f"(this), ratio {medians['this'] / medians[args.ref]:.3f} ({args.repeats} alternating runs each)")


if __name__ == "__main__":
    main()
