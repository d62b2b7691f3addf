"""Benchmark of the HTML report: build time and file size against telemetry length.

For 10^4, 10^5 and 10^6 rows of a torque-free asymmetric body (written as a
run directory by attsim.Propagation), prints the median time of
``attsim.report`` and the size of the page. Targets (issue 6): a 10^6-row
telemetry gives a page under 10 MB built in under 5 s.

Run: ``python tools/bench_report.py``
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import attsim  # noqa: E402
from tools.benchutil import median_time  # noqa: E402


def main() -> int:
    print(f"attsim {attsim.__version__} report benchmark (median of 3 builds)")
    with tempfile.TemporaryDirectory() as tmp:
        for rows in (10**4, 10**5, 10**6):
            run = attsim.Propagation(f"rows_{rows}", [[1.2, 0.1, 0.05], [0.1, 1.0, 0.02], [0.05, 0.02, 0.8]], (0.3, 1.0, -0.4),
                                     duration=(rows - 1) * 0.01, max_step=0.01, out_dir=Path(tmp) / str(rows)).run()
            page = Path(tmp) / f"report_{rows}.html"
            seconds = median_time(lambda: attsim.report(run, page), 3)
            size_mb = page.stat().st_size / 1e6
            verdict = "" if rows != 10**6 else (f"  targets < 5 s {'met' if seconds < 5 else 'MISSED'}, "
                                                f"< 10 MB {'met' if size_mb < 10 else 'MISSED'}")
            print(f"  {rows:>9,} rows: {seconds:6.2f} s, {size_mb:6.2f} MB{verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
