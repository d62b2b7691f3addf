"""Timing helpers shared by the benchmark and study scripts."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def median_time(fn, repeats: int) -> float:
    """Median wall time (s) of ``fn()`` over ``repeats`` runs after one warm-up
    run (which compiles or loads the numba cache outside the timing)."""
    fn()
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def in_fresh_interpreter(code: str, env: dict | None = None) -> str:
    """Run ``code`` in a new Python process of this environment; its stdout."""
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True, text=True, check=True, cwd=ROOT, env={**os.environ, **(env or {})},
    )
    return result.stdout.strip()
