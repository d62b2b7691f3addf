"""CPU cost of the compiled mission loop per control cycle, and of one campaign run outside dask.

The mission is the campaign benchmark's (``tools/campaign_rw_pointing.py``:
one orbit of 10 Hz three-wheel pointing, rk4 at 0.1 s, 1 Hz telemetry),
run in this process with its telemetry in memory, as a campaign's worker
runs it. Printed, as the minimum of ``--repeats`` thread CPU times (CPU
time, not wall time: less sensitive to a loaded machine):

* the whole run (``Mission.run(in_memory=True)``) of one orbit and of a
  short run (``--short`` simulated seconds); their difference over the
  difference in control cycles is the loop's cost per cycle (plant step,
  sensor samples, the PD, wheel commands, a telemetry row every tenth
  cycle), the short run's is mostly the fixed cost of a run;
* a campaign run as a worker does it outside dask
  (:func:`attsim.campaign.worker.run_one`: build, run, criteria, envelopes).

Run: ``python tools/bench_loop.py [--repeats N] [--short S]``
"""

from __future__ import annotations

import os

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
# warm figures: every run on the compiled backend (the first, untimed, compiles what is missing)
os.environ.setdefault("ATTSIM_BACKEND", "compiled")

import attsim  # noqa: E402
from attsim.campaign.worker import RunSpec, run_one  # noqa: E402
from tools import campaign_rw_pointing as scenario  # noqa: E402
from tools.bench_mission import RW_DT_S, RW_ORBIT_S  # noqa: E402

MISSION = ROOT / "tools" / "campaign_rw_pointing.py"


def cpu_s(fn) -> float:
    start = time.thread_time()
    fn()
    return time.thread_time() - start


def run(duration_s: float):
    mission = scenario.build(None)
    mission.duration_s = duration_s
    return mission.run(in_memory=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--short", type=float, default=60.0, help="simulated seconds of the short run")
    args = parser.parse_args(argv)
    run(RW_ORBIT_S)  # imports, the compiled loop from numba's cache
    orbit = min(cpu_s(lambda: run(RW_ORBIT_S)) for _ in range(args.repeats))
    short = min(cpu_s(lambda: run(args.short)) for _ in range(args.repeats))
    cycles = round(RW_ORBIT_S / RW_DT_S) - round(args.short / RW_DT_S)
    campaign = attsim.Campaign(MISSION, runs=args.repeats, seed=0, out_dir=ROOT / "reports" / "bench_loop_campaign")
    spec = campaign.spec()
    runs = [cpu_s(lambda k=k: run_one(RunSpec(spec, k, campaign.parameters(k)))) for k in range(args.repeats)]
    print(f"one orbit of 10 Hz wheel pointing ({RW_ORBIT_S:g} s), thread CPU time, min of {args.repeats}")
    rows = [("Mission.run(in_memory=True), one orbit", orbit * 1e3, "ms", ""),
            (f"Mission.run(in_memory=True), {args.short:g} s", short * 1e3, "ms", ""),
            ("compiled loop per control cycle", (orbit - short) / cycles * 1e6, "us",
             f"  ((one orbit - short run) / {cycles:,} cycles)"),
            ("campaign run_one (build, run, criteria, envelopes)", min(runs) * 1e3, "ms", "")]
    for label, value, unit, note in rows:
        print(f"  {label:52s} {value:7.3f} {unit}{note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
