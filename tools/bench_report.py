"""Benchmark of the HTML report: build time, page size and load time in headless Chromium.

For 10^4 and 10^6 rows of a torque-free asymmetric body (a run directory
written by attsim.Propagation), prints the build time of ``attsim.report``,
the page's size and, when Chromium is installed, the time until the first
screen's plots are drawn ("interactive") and until every plot is drawn;
then the same for the free_rigid_body mission's pages written together
(nine runs and the comparison, one shared plotly.js). Targets (issue 13):
a 10^6-row page <= 6 MB and interactive in <= 3 s; free_rigid_body's pages
<= 15 MB in total.

Run: ``python tools/bench_report.py``
"""

from __future__ import annotations

import importlib.util
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import attsim  # noqa: E402
from attsim.reporting import report_runs  # noqa: E402
from tools.browser import CHROMIUM, Browser  # noqa: E402


def _load(browser, page: Path) -> str:
    if browser is None:
        return "no chromium"
    browser.load(page)  # the first load also compiles plotly.js; a reader's second visit is the cached one
    result = browser.load(page)
    return f"interactive {result.interactive_s:5.2f} s, all plots {result.load_s:5.2f} s (cached)"


def main() -> int:
    print(f"attsim {attsim.__version__} report benchmark")
    browser = Browser() if CHROMIUM else None
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for rows in (10**4, 10**6):
                run = attsim.Propagation(f"rows_{rows}", [[1.2, 0.1, 0.05], [0.1, 1.0, 0.02], [0.05, 0.02, 0.8]],
                                         (0.3, 1.0, -0.4), duration=(rows - 1) * 0.01, max_step=0.01,
                                         out_dir=Path(tmp) / str(rows)).run()
                page = Path(tmp) / f"report_{rows}.html"
                start = time.perf_counter()
                attsim.report(run, page)
                build_s = time.perf_counter() - start
                size_mb = page.stat().st_size / 1e6
                print(f"  {rows:>9,} rows: build {build_s:5.2f} s, {size_mb:5.2f} MB, {_load(browser, page)}")
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
                  f"total (target <= 15), comparison page: {_load(browser, pages[-1])}")
    finally:
        if browser is not None:
            browser.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
