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


def interleaved_times(runs: dict, repeats: int, warmup=None) -> dict:
    """Wall times (s) of several runs measured in turns.

    ``warmup()`` (when given) runs first, untimed: imports, the numba cache.
    Then the runs take turns ``repeats`` times (a, b, a, b, ...), so a change
    in the machine's load during the measurement reaches all of them alike;
    on a shared machine the ratio of their medians is fairer than when one
    run's repeats all come before the other's.

    Parameters
    ----------
    runs : dict
        ``{name: run}``; ``run()`` times itself and returns its seconds, so it
        can leave out what is not to be compared (building a Basilisk
        simulation, checking a result).
    repeats : int
        Timed calls of each run.
    warmup : callable, optional

    Returns
    -------
    dict
        ``{name: [seconds of each call, in order]}``.
    """
    if warmup is not None:
        warmup()
    samples = {name: [] for name in runs}
    for _ in range(repeats):
        for name, run in runs.items():
            samples[name].append(float(run()))
    return samples


def in_fresh_interpreter(code: str, env: dict | None = None) -> str:
    """Run ``code`` in a new Python process of this environment; its stdout."""
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True, text=True, check=True, cwd=ROOT, env={**os.environ, **(env or {})},
    )
    return result.stdout.strip()
