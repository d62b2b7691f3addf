"""Time to first result on an empty compile cache, and what comes after: each case a whole fresh process.

Prints, for each case, the wall time of the whole command (Python start,
imports, set-up, compiling or not, the run) and its peak memory; a "+" row
is the extra time over the same command run again at once (warm). Cases:

1. ``attsim run advitiy_detumble --no-report`` with an empty ``NUMBA_CACHE_DIR``;
2. ``attsim run wheel_slew --no-report`` with another empty cache, then with
   the cache the earlier rows left: ``cubesat_target_tracking``,
   ``wheel_slew --method rkmk4`` and a mission script with a new
   ``NumbaController`` law;
3. the first ``attsim campaign wheel_slew --runs 200`` (2 workers) on an
   empty cache, and a small one (``--runs 60``) warm (the median of
   ``--repeats`` runs);
4. an :class:`attsim.Ensemble`'s first ten steps (4,096 bodies, three
   wheels, rk4), without and with a field, each on an empty cache: the extra
   over the same process warm is what its compile adds (issue 24: at most
   20 s);
5. the first ``attsim.estimation.quest`` of a batch (an empty cache; the
   extra over the same process warm is its compile);
6. with ``--make-test``: ``make test`` on a fresh clone (empty cache).

``--only missions,campaign,ensemble,estimation`` runs those groups alone.

By default (``--backend auto``) a run on a machine without the units it
needs runs interpreted and starts compiling every unit in the background;
the script then waits for that compile before the next row (its time and
peak memory are printed on a line of their own), so that each row sees "the
cache the earlier rows left". ``--backend compiled`` shows the other way:
compiling in the foreground first.

Run: ``python tools/bench_coldstart.py [--backend auto|compiled] [--make-test]``.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ATTSIM = str(Path(sys.executable).parent / "attsim")
TIME = shutil.which("time") or "/usr/bin/time"

USER_LAW_SCRIPT = '''"""wheel_slew with a user's compiled law (a new NumbaController law: {tag})."""
import sys
import numba
import numpy as np
import attsim
sys.path.insert(0, {missions!r})
import wheel_slew


@numba.njit
def law(t_s, readings, parameters, memory, commands):
    q, w = readings[0], readings[1]
    sign = 1.0 if q[0] >= 0.0 else -1.0
    for i in range(3):
        commands[i] = parameters[0] * sign * q[i + 1] + parameters[1] * w[i] + {tag}e-30


def build(out_dir=None):
    mission = attsim.Mission("user_law", wheel_slew.J_KG_M2, (0.0, 0.0, 0.0), duration=300.0, max_step=0.1,
                             telemetry_dt=0.5, out_dir=out_dir)
    wheels = [mission.add(attsim.ReactionWheel(f"rw_{{a}}", axis, 2e-5, 2e-3, 600.0))
              for a, axis in zip("xyz", np.eye(3))]
    tracker = mission.add(attsim.StarTracker(rate_hz=10.0, noise_arcsec=5.0))
    gyro = mission.add(attsim.Gyro(rate_hz=10.0, arw_rad_sqrt_s=1e-5))
    mission.add(attsim.NumbaController(law, period_s=0.1, sensors=[tracker, gyro], wheels=wheels,
                                       parameters=(2e-3, 2e-2)))
    return mission


def criteria(tel):
    return []


if __name__ == "__main__":
    sys.exit(attsim.cli.run_script(build, criteria))
'''


ENSEMBLE_SCRIPT = """import sys
import numpy as np
import attsim
wheels = [attsim.ReactionWheel(f"rw{k}", axis, 1e-5, 1e-3, 600.0)
          for k, axis in enumerate(((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)))]
field = (2e-5, 0.0, 0.0) if sys.argv[1] == "field" else None
ensemble = attsim.Ensemble(4096, (0.1, 0.12, 0.09), wheels=wheels, field=field, duration=10.0)
for _ in range(10):
    ensemble.step(wheel_torque_Nm=np.full((4096, 3), 1e-4))
"""
GROUPS = ("missions", "campaign", "ensemble", "estimation")

# a batch of attitude solutions from two directions each (a user's first QUEST)
QUEST_SCRIPT = """
import numpy as np
from attsim import estimation
rng = np.random.default_rng(1)
r = rng.normal(size=(100, 2, 3))
print(estimation.quest(r, r).shape)
"""


def run(command: list[str], cache: Path, out: Path, backend: str, accept=(0, 1)) -> tuple[float, float, str]:
    """``(wall s, peak MB, stderr)`` of ``command`` as a fresh process with ``cache`` as numba's cache; an exit code
    not in ``accept`` stops the script (1: a run whose criteria failed, which still counts)."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), ATTSIM_BACKEND=backend)
    env.pop("ATTSIM_BACKGROUND_COMPILE", None)
    start = time.perf_counter()
    done = subprocess.run([TIME, "-f", "%M"] + command, cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode not in accept:
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}): {done.stderr.strip()[-2000:]}")
    peak_kb = float(done.stderr.strip().splitlines()[-1])
    return wall, peak_kb / 1024.0, done.stderr


def wait_for_background(cache: Path) -> str:
    """Wait for a background compile that the last run started; its line for the table (or "")."""
    log = cache / "attsim-compile" / "background.log"
    if not log.exists():
        return ""
    start = time.perf_counter()
    # finished when its last line is written (the lock alone races: the child takes it only after its imports)
    while "units compiled in" not in log.read_text() and time.perf_counter() - start < 1800.0:
        time.sleep(1.0)
    text = log.read_text()
    compiled = re.findall(r"(\d+) units compiled in (\d+) s", text)
    peak = re.findall(r"peak memory (\d+) MB", text)
    waited = time.perf_counter() - start
    if not compiled:
        return f"  (background compile: waited {waited:.0f} s)"
    return (f"  background compile started by the run above: {compiled[-1][0]} units in {compiled[-1][1]} s "
            f"(one core; waited {waited:.0f} s more), peak {peak[-1] if peak else '?'} MB")


def row(label: str, wall: float, peak: float, warm: float | None = None) -> str:
    extra = f"+{wall - warm:6.1f} s (warm {warm:5.1f} s)" if warm is not None else f"{wall:7.1f} s"
    return f"{label:62s} {extra:>26s} {peak:7.0f} MB"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="auto", choices=("auto", "compiled"))
    parser.add_argument("--make-test", action="store_true", help="also time make test on a fresh clone")
    parser.add_argument("--repeats", type=int, default=5, help="runs of the warm small campaign (their median)")
    parser.add_argument("--only", default=",".join(GROUPS), help="the groups of cases to run (default: all): "
                        + ", ".join(GROUPS))
    args = parser.parse_args()
    groups = set(args.only.split(","))
    if not groups <= set(GROUPS):
        parser.error(f"--only: {', '.join(sorted(groups - set(GROUPS)))} is not one of {', '.join(GROUPS)}")
    scratch = Path(tempfile.mkdtemp(prefix="attsim-coldstart-"))
    lines = [f"{'case (a whole process each; ' + args.backend + ' backend)':62s} {'time':>26s} {'peak':>10s}"]

    def case(label, command, cache, plus=False, accept=(0, 1)):
        wall, peak, _ = run(command, cache, scratch / "out", args.backend, accept)
        background = wait_for_background(cache) if args.backend == "auto" else ""
        warm = run(command, cache, scratch / "out", args.backend, accept)[0] if plus else None
        lines.append(row(label, wall, peak, warm))
        if background:
            lines.append(background)
        print(lines[-2] if background else lines[-1], flush=True)
        if background:
            print(background, flush=True)
        (cache / "attsim-compile" / "background.log").unlink(missing_ok=True)

    out = str(scratch / "runs")
    if "missions" in groups:
        first = scratch / "cache-1"
        case("attsim run advitiy_detumble --no-report, cold", [ATTSIM, "run", "advitiy_detumble", "--no-report",
                                                               "--out", out + "/d"], first)
        second = scratch / "cache-2"
        case("attsim run wheel_slew --no-report, cold", [ATTSIM, "run", "wheel_slew", "--no-report", "--out",
                                                         out + "/w"], second)
        case("then cubesat_target_tracking, same cache", [ATTSIM, "run", "cubesat_target_tracking", "--no-report",
                                                          "--out", out + "/c"], second, plus=True)
        case("then wheel_slew --method rkmk4, same cache", [ATTSIM, "run", "wheel_slew", "--method", "rkmk4",
                                                            "--no-report", "--out", out + "/r"], second, plus=True)
        script = scratch / "user_law.py"
        script.write_text(USER_LAW_SCRIPT.format(tag=int(time.time()), missions=str(ROOT / "missions")))
        case("then a mission with a new NumbaController law, same cache", [ATTSIM, "run", str(script), "--no-report",
                                                                            "--out", out + "/u"], second, plus=True)
    if "campaign" in groups:
        campaign = scratch / "cache-3"
        case("first attsim campaign wheel_slew --runs 200, empty cache, 2 workers",
             [ATTSIM, "campaign", "wheel_slew", "--runs", "200", "--workers", "2", "--out", out + "/k"], campaign)
        # warm, the row is a few seconds that the machine's other work moves by a second: the median of several
        walls, peaks = zip(*(run([ATTSIM, "campaign", "wheel_slew", "--runs", "60", "--workers", "2", "--out",
                                  f"{out}/s{k}"], campaign, scratch / "out", args.backend)[:2]
                             for k in range(args.repeats)))
        lines.append(row(f"a small campaign, warm (--runs 60, 2 workers), median of {args.repeats}",
                         statistics.median(walls), max(peaks)))
        print(lines[-1], flush=True)
    if "ensemble" in groups:
        for kind in ("none", "field"):
            case(f"an Ensemble's first 10 steps, 4,096 bodies, field: {kind}, cold", [sys.executable, "-c",
                 ENSEMBLE_SCRIPT, kind], scratch / f"cache-ensemble-{kind}", plus=True, accept=(0,))
    if "estimation" in groups:
        case("the first attsim.estimation.quest of a batch, cold", [sys.executable, "-c", QUEST_SCRIPT],
             scratch / "cache-quest", plus=True, accept=(0,))
    if args.make_test:
        clone = scratch / "clone"
        subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
        start = time.perf_counter()
        done = subprocess.run(["make", "test"], cwd=clone, capture_output=True, text=True)
        verdict = "green" if done.returncode == 0 else f"FAILED ({done.returncode})"
        lines.append(f"{'make test on a fresh clone (empty cache, venv included)':62s} "
                     f"{time.perf_counter() - start:7.1f} s  {verdict}")
        print(lines[-1], flush=True)
    print()
    print("\n".join(lines))
    shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
