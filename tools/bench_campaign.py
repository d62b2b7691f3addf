"""Benchmark of Monte Carlo campaigns: runs/hour of attsim's Campaign and of Basilisk's Monte Carlo Controller.

The campaign: ``--runs`` (200) one-orbit runs of closed-loop three-wheel
inertial pointing at 10 Hz (``tools/campaign_rw_pointing.py``: the
closed-loop peer scenario of ``tools/bench_mission.py`` with its initial
attitude turned by a rotation vector of N(0, (10 deg)^2) per axis and its
rate dispersed by N(0, (5e-4 rad/s)^2) per axis), on ``--workers`` processes
(default: all cores).

Prints, for each tool, the campaign's wall time, runs/hour and core-seconds
a run (CPU time of every process of the campaign over the campaign: dask's
workers, scheduler and client; Basilisk's parent and pool processes):

* attsim, ``Campaign.run(client)`` on a running ``LocalCluster`` of processes
  (as on an existing cluster, ``--scheduler``): the whole campaign, records
  streamed to Parquet, envelopes, criteria evaluated in the workers, the
  records compacted at the end (the campaign report, once per campaign, is
  not included);
* attsim, ``Campaign.run()`` starting and closing its own ``LocalCluster``
  (what ``attsim campaign`` does): the same plus the cluster's start and each
  worker's first load of the compiled loop from numba's cache;
* when ``bsk`` is importable, the same campaign through Basilisk's
  ``Controller`` with the same number of processes
  (``tools/peers/basilisk_campaign.py``), timed in turns with attsim's
  (``--repeats`` times each), and the ratio of runs/hour. Target: attsim at
  least 20 times Basilisk's runs/hour.

Every run is checked (attsim: each record OK; Basilisk: no failed run, each
final pointing error below 1e-3 deg and rate below 1e-6 rad/s, the drawn
initial conditions all different) before a timing counts; a failed check
stops the script with exit code 1.

Run: ``python tools/bench_campaign.py [--runs N] [--workers K] [--repeats R] [--no-basilisk]``
"""

from __future__ import annotations

import argparse
import os
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
from tools import bench_mission as bm  # noqa: E402
from tools import campaign_rw_pointing as scenario  # noqa: E402
from tools.benchutil import interleaved_times  # noqa: E402

MISSION = ROOT / "tools" / "campaign_rw_pointing.py"
TARGET_RATIO = 20.0


class BenchCheckError(Exception):
    """A campaign produced results that must not be timed."""


def _cpu_s() -> float:
    return time.process_time()


def attsim_warm(client, out_root: Path, runs: int, seed: int, samples: list):
    """One timed campaign on the running cluster: ``run()`` returns its wall seconds, ``samples`` gets the rest."""
    def run() -> float:
        out = Path(tempfile.mkdtemp(dir=out_root, prefix="attsim-"))
        campaign = attsim.Campaign(MISSION, runs=runs, seed=seed, out_dir=out)
        before = client.run(_cpu_s)
        own, start = time.process_time(), time.perf_counter()
        result = campaign.run(client=client, report=False)
        wall_s = time.perf_counter() - start
        after = client.run(_cpu_s)
        cpu_s = time.process_time() - own + sum(after[w] - before.get(w, 0.0) for w in after)
        bad = result.records[result.records["status"] != "OK"]
        if len(result.records) != runs or len(bad):
            raise BenchCheckError(f"attsim: {len(bad)} of {len(result.records)} runs not OK, e.g. "
                                  f"{bad.iloc[0].to_dict() if len(bad) else ''}")
        samples.append({"wall_s": wall_s, "cpu_s": cpu_s, "per_run_wall_s": float(result.records["wall_s"].median())})
        return wall_s
    return run


def basilisk_campaign(runs: int, processes: int, samples: list):
    from tools.peers import basilisk_campaign as peer

    settings = dict(inertia_kg_m2=bm.RW_INERTIA_KG_M2, wheel_js_kg_m2=bm.RW_JS_KG_M2,
                    wheel_max_torque_Nm=bm.RW_MAX_TORQUE_NM, wheel_max_speed_rad_s=bm.RW_MAX_SPEED_RAD_S,
                    wheel_speed0_rad_s=bm.RW_SPEED0_RAD_S, target_q_wxyz=bm.RW_TARGET_Q, K=bm.RW_K_MRP_NM,
                    P=bm.RW_P_MRP_NMS, duration_s=bm.RW_ORBIT_S, dt_s=bm.RW_DT_S, control_period_s=bm.RW_DT_S,
                    record_period_s=1.0)

    def run() -> float:
        result = peer.run_campaign(runs, processes, bm.RW_Q0, np.radians(scenario.ATTITUDE_STD_DEG),
                                   bm.RW_OMEGA0_RAD_S, [scenario.RATE_STD_RAD_S] * 3, **settings)
        if result["failed"] or len(result["finals"]) != runs:
            raise BenchCheckError(f"Basilisk: runs {result['failed']} failed")
        for k, final in enumerate(result["finals"]):
            error_deg, rate = scenario.final_state(None, [final["q_final_wxyz"]], [final["omega_final_rad_s"]])
            if not (error_deg < bm.RW_CONVERGED_DEG and rate < bm.RW_CONVERGED_RAD_S):
                raise BenchCheckError(f"Basilisk run {k}: did not converge ({error_deg:.3g} deg, {rate:.3g} rad/s)")
        starts = {tuple(np.round(f["sigma_BNInit"] + f["omega_BN_BInit"], 12)) for f in result["finals"]}
        if len(starts) != runs:  # the complaint about Basilisk's campaigns: dispersions silently not applied
            raise BenchCheckError(f"Basilisk: only {len(starts)} distinct initial conditions in {runs} runs")
        samples.append({"wall_s": result["wall_s"], "cpu_s": result["cpu_s"]})
        return result["wall_s"]
    return run


def _line(label: str, wall_s: float, runs: int, cpu_s: float | None, extra: str = "") -> float:
    per_hour = runs / wall_s * 3600.0
    cpu = f"{cpu_s / runs:7.3f} core-s a run" if cpu_s is not None else " " * 22
    print(f"  {label:44s} {wall_s:8.2f} s wall  {per_hour:10,.0f} runs/hour  {cpu}{extra}")
    return per_hour


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--repeats", type=int, default=1, help="timed campaigns of each tool, in turns")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-basilisk", action="store_true")
    args = parser.parse_args(argv)
    import logging

    import distributed

    from tools.peers import basilisk_peer

    with_basilisk = not args.no_basilisk and basilisk_peer.available()
    print(f"campaign: {args.runs} one-orbit runs of 10 Hz three-wheel pointing (dispersed attitude and rate), "
          f"{args.workers} processes; {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
    attsim_samples, bsk_samples = [], []
    with tempfile.TemporaryDirectory(prefix="bench-campaign-") as tmp:
        root = Path(tmp)
        try:
            with distributed.LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                                          silence_logs=logging.ERROR, dashboard_address=":0") as cluster, \
                    distributed.Client(cluster) as client:
                runs = {"attsim": attsim_warm(client, root, args.runs, args.seed, attsim_samples)}
                if with_basilisk:
                    runs["Basilisk"] = basilisk_campaign(args.runs, args.workers, bsk_samples)

                def warmup():  # imports and the compiled loop in every worker, Basilisk's imports here
                    attsim.Campaign(MISSION, runs=2 * args.workers, out_dir=root / "warmup", duration=60.0).run(
                        client=client, report=False)

                interleaved_times(runs, args.repeats, warmup)
            start = time.perf_counter()
            cold = attsim.Campaign(MISSION, runs=args.runs, seed=args.seed, out_dir=root / "cold").run(
                workers=args.workers, report=False)
            cold_wall_s = time.perf_counter() - start
            if (cold.records["status"] != "OK").any():
                raise BenchCheckError("attsim (own cluster): some runs not OK")
        except BenchCheckError as exc:
            print(f"  CHECK FAILED, timings discarded: {exc}")
            return 1
    warm = _median(attsim_samples)
    attsim_rate = _line("attsim Campaign.run(client), running cluster", warm["wall_s"], args.runs, warm["cpu_s"],
                        f"  (a run's own wall time, median: {warm['per_run_wall_s']:.3f} s)")
    _line("attsim Campaign.run(), starting its cluster", cold_wall_s, args.runs, None,
          "  (LocalCluster start and numba cache loads included)")
    if not with_basilisk:
        why = "--no-basilisk" if args.no_basilisk else "not importable (pip install -e '.[bench]')"
        print(f"  Basilisk: {why}; peer campaign skipped")
        return 0
    bsk = _median(bsk_samples)
    bsk_rate = _line("Basilisk MonteCarlo.Controller", bsk["wall_s"], args.runs, bsk["cpu_s"])
    ratio = attsim_rate / bsk_rate
    print(f"  {'ratio of runs/hour, attsim / Basilisk':44s} {ratio:8.1f} x   target >= {TARGET_RATIO:.0f} x "
          f"{'met' if ratio >= TARGET_RATIO else 'MISSED'}")
    return 0


def _median(samples: list) -> dict:
    return {key: statistics.median(s[key] for s in samples) for key in samples[0]}


if __name__ == "__main__":
    sys.exit(main())
