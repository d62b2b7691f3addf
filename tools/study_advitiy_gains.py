"""Which magnetic pointing gains carry advitiy_adcs through its dispersions: a campaign per gain pair.

For each pair of nadir gains (``k_p`` N m, ``k_d`` N m s) on a grid around
the mission's own (Lovera & Astolfi's scaling ``k_p ~ 3 J n^2``,
``k_d ~ 6 J n``), this runs the same dispersed campaign of
``missions/advitiy_adcs.py`` (its ``dispersions()``, the same seed, so run
k has the same release, inertia, gyro bias and coil scale in every column)
on one dask ``LocalCluster`` and prints each criterion's pass count, the
pass rate of the whole run with its 95 % Clopper-Pearson interval, and the
median and 90th percentile of the fourth orbit's worst pointing error.
``--sun`` scans the Sun-acquisition gains instead (the nadir ones held).

Each gain pair is a two-line mission script (written to a temporary
directory) that passes the pair on to ``advitiy_adcs.build``: the study uses
only the public campaign API.

Run: ``python tools/study_advitiy_gains.py [--runs 48] [--workers 2] [--sun] [--scales 0.5 1 2]``
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "missions"))
import advitiy_adcs as base  # noqa: E402

import attsim  # noqa: E402

WORST = "max error to the orbit frame over the fourth orbit [deg]"
SCALES = (0.5, 1.0, 2.0)

WRAPPER = """\
import sys
sys.path.insert(0, {missions!r})
import advitiy_adcs as base

dispersions, criteria = base.dispersions, base.criteria


def build(out_dir=None, **params):
    return base.build(out_dir, **{gains!r}, **params)
"""


def grid(sun: bool, scales) -> list[dict]:
    if sun:
        return [dict(sun_kp=base.SUN_KP * a, sun_kd=base.SUN_KD * b) for a, b in itertools.product(scales, scales)]
    return [dict(nadir_kp=base.NADIR_KP * a, nadir_kd=base.NADIR_KD * b) for a, b in itertools.product(scales, scales)]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=48)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sun", action="store_true", help="scan the Sun-acquisition gains instead of the nadir ones")
    parser.add_argument("--scales", type=float, nargs="+", default=SCALES,
                        help="multiples of the mission's gains, for k_p and k_d each (default: 0.5 1 2)")
    args = parser.parse_args(argv)
    from dask.distributed import Client, LocalCluster

    labels = None
    with tempfile.TemporaryDirectory() as tmp, \
            LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                         dashboard_address=None) as cluster, Client(cluster) as client:
        print(f"advitiy_adcs: {args.runs} dispersed runs (seed {args.seed}) per gain pair, {args.workers} workers")
        for k, gains in enumerate(grid(args.sun, args.scales)):
            script = Path(tmp) / f"advitiy_gains_{k}.py"
            script.write_text(WRAPPER.format(missions=str(ROOT / "missions"), gains=gains))
            result = attsim.Campaign(script, runs=args.runs, seed=args.seed, out_dir=Path(tmp) / f"c{k}").run(
                client=client, report=False)
            records = result.records
            if labels is None:
                labels = [c[3:] for c in records.columns if c.startswith("ok:")]
                print("  criteria: " + "; ".join(f"{i + 1} {label}" for i, label in enumerate(labels)))
            counts = " ".join(f"{int(records['ok:' + label].sum()):>3}" for label in labels)
            worst = records["v:" + WORST].to_numpy(dtype=float)
            rate = result.rate
            pair = "  ".join(f"{name} {value:.2e}" for name, value in gains.items())
            print(f"  {pair}   passes per criterion {counts}   all: {rate.passed:>3}/{rate.runs}"
                  f" [{rate.low:.2f}, {rate.high:.2f}]   worst 4th-orbit error p50 {np.nanmedian(worst):5.1f}"
                  f" p90 {np.nanpercentile(worst, 90):5.1f} deg", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
