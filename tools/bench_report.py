"""Benchmark of the HTML report: build time, page size and first-visit load time in headless Chromium.

Cases (issue 13's targets: a 10^6-row run's page <= 6 MB and interactive in
<= 3 s on a first visit; free_rigid_body's pages <= 15 MB in total):

* 10^4 and 10^6 rows of a torque-free asymmetric body (``attsim.Propagation``);
* 10^6 rows of a controlled run: three reaction wheels, a gyro and a star
  tracker under quaternion feedback (``telemetry_dt`` 0.01 s over 10^4 s), the
  page with the most sections and traces;
* the free_rigid_body mission's pages written together (nine runs and the
  comparison, one shared plotly.js); the comparison page is loaded.

Each page is loaded ``--loads`` times (default 5), every time in a new
Chromium with a new profile: a first visit, nothing cached (neither the page
nor plotly.js's compiled code). Printed are the medians (and the range) of:

* **interactive**: the time from navigation until the page has drawn the
  plots of its first screen (1280 x 900 px), plus the input delay of a
  mouse click sent at that moment (from the browser taking the click to the
  page's handler running it: a page still busy drawing answers late, and
  that lateness counts). The page's own clock (``performance.now()`` from
  navigation start, ``event.timeStamp``), so the harness's own latency in
  noticing the first screen is not counted;
* **TTI** and **TBT**: Lighthouse's time to interactive (from the first
  paint, the end of the last long task before 5 s without one) and total
  blocking time, for a reader who stays on the first screen: the report
  keeps drawing the plots below it in the background, one long task each
  (up to ~0.6 s for a page's largest plot), so TTI is when that work ends.
  The "interactive" above counts one click at the first screen; TTI counts
  every task a click could wait behind;
* **library**: when plotly.js is unpacked and evaluated (most of the
  interactive time);
* **all plots**: the wall time until every plot is drawn, the page scrolled
  down a window at a time as a reader skimming it would (the report draws a
  plot as the reader nears it; 3D views only then).

The machine's other work shows in the times (the load average is printed at
the start and the end): compare runs made together. Run: ``python tools/bench_report.py [--loads N]``
"""

from __future__ import annotations

import argparse
import importlib.util
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
from attsim.reporting import report_runs  # noqa: E402
from tools.browser import CHROMIUM, Browser  # noqa: E402


def _median(values) -> str:
    values = [v for v in values if np.isfinite(v)]
    if not values:
        return "  –  "
    return f"{statistics.median(values):5.2f} s ({min(values):.2f}-{max(values):.2f})"


def _cold_loads(page: Path, loads: int) -> str:
    """Median first-visit times over ``loads`` loads, each in a new browser with an empty profile."""
    if CHROMIUM is None:
        return "no chromium: load time not measured"
    interactive, tti, tbt, library, every = [], [], [], [], []
    for _ in range(loads):
        with Browser() as browser:
            result = browser.load(page, width_px=1280, height_px=900, tti=True)
        interactive.append(result.interactive_s)
        tti.append(result.tti_s)
        tbt.append(result.tbt_s)
        library.append(result.library_s)
        every.append(result.load_s)
    return (f"first visit (median of {loads}): interactive {_median(interactive)}, TTI {_median(tti)}, "
            f"TBT {_median(tbt)}, library {_median(library)}, all plots {_median(every)}")


def _controlled(rows: int, out: Path):
    """A pointing run of three wheels, a gyro and a star tracker, ``rows`` telemetry rows 0.01 s apart."""
    mission = attsim.Mission("controlled", np.diag([0.06, 0.055, 0.02]), (0.01, -0.005, 0.004),
                             duration=(rows - 1) * 0.01, max_step=0.01, telemetry_dt=0.01, seed=1, out_dir=out)
    wheels = [mission.add(attsim.ReactionWheel(f"rw_{a}", axis, 2e-5, 2e-3, 600.0))
              for a, axis in zip("xyz", np.eye(3))]
    mission.add(attsim.Gyro(10.0, arw_rad_sqrt_s=1e-5))
    mission.add(attsim.StarTracker(10.0, noise_arcsec=5.0))
    target = attsim.rotations.axis_angle_to_quat([0.3, 0.5, 0.8], 1.5)
    mission.add(attsim.QuaternionPD(target, kp=5e-4, kd=9e-3, period_s=0.1, wheels=wheels,
                                    attitude_source=attsim.TRUTH, rate_source=attsim.TRUTH))
    return mission.run()


def _one(label: str, run, page: Path, loads: int) -> None:
    start = time.perf_counter()
    attsim.report(run, page)
    build_s = time.perf_counter() - start
    print(f"  {label}: build {build_s:5.2f} s, {page.stat().st_size / 1e6:5.2f} MB (target <= 6), "
          f"{_cold_loads(page, loads)}", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loads", type=int, default=5, help="first-visit loads per page (median)")
    args = parser.parse_args()
    print(f"attsim {attsim.__version__} report benchmark (Chromium: {CHROMIUM or 'none'}; load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for rows in (10**4, 10**6):
            run = attsim.Propagation(f"rows_{rows}", [[1.2, 0.1, 0.05], [0.1, 1.0, 0.02], [0.05, 0.02, 0.8]],
                                     (0.3, 1.0, -0.4), duration=(rows - 1) * 0.01, max_step=0.01,
                                     out_dir=tmp / str(rows)).run()
            _one(f"{rows:>9,} rows, torque-free", run, tmp / f"report_{rows}.html", args.loads)
            del run
        run = _controlled(10**6, tmp / "controlled")
        _one(f"{len(run.df):>9,} rows, controlled ", run, tmp / "report_controlled.html", args.loads)
        del run
        spec = importlib.util.spec_from_file_location("free_rigid_body", ROOT / "missions" / "free_rigid_body.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        runs = [m.run() for m in module.build(out_dir=f"{tmp}/frb")]
        start = time.perf_counter()
        pages = report_runs(runs, criteria=module.criteria(runs))
        build_s = time.perf_counter() - start
        files = [p for p in Path(f"{tmp}/frb").rglob("*") if p.suffix in (".html", ".js")]
        total_mb = sum(p.stat().st_size for p in files) / 1e6
        print(f"  free_rigid_body: {len(pages)} pages + plotly.js, build {build_s:5.2f} s, {total_mb:5.2f} MB in "
              f"total (target <= 15); comparison page: {_cold_loads(pages[-1], args.loads)}; "
              f"one run's page: {_cold_loads(pages[0], args.loads)}", flush=True)
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
