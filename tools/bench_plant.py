"""Benchmark of the attitude plant: speed, start-up and memory.

Prints, as medians of several runs on this machine:

* steps/s of ``attsim.propagate`` per method (dt = 0.01 s, 10^6 steps,
  every step recorded), torque-free, with a constant torque, and with a
  Python callable torque;
* the time of ``import attsim`` and of a first ``propagate`` call with a cold
  and with a warm compilation cache (each in a fresh interpreter);
* peak resident memory of a run that records 10^6 steps;
* the same torque-free case in Basilisk (package ``bsk``) in this process,
  and the ratio, when Basilisk is importable.

Run: ``python tools/bench_plant.py`` (or ``make bench``); ``--quick`` uses
fewer steps and repeats for a smoke run.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import attsim  # noqa: E402
from tools.benchutil import in_fresh_interpreter, median_time  # noqa: E402

# Seed 002's free rigid body (Vilmart): I = (0.376, 0.627, 1.0), y0 = (0, 0.6, -0.8)
SEED002_INERTIA = np.array([0.376, 0.627, 1.0])
SEED002_OMEGA0 = np.array([0.0, 0.6, -0.8]) / SEED002_INERTIA
# A full tensor (products of inertia) for the torque cases
FULL_TENSOR = np.array([[1.2, 0.1, 0.05], [0.1, 1.0, 0.02], [0.05, 0.02, 0.8]])

TARGETS = {
    "rk4 torque-free": 2_000_000,
    "rk4 constant torque": 2_000_000,
    "rk4 Python callable torque": 50_000,
    "rkmk4 torque-free": 1_000_000,
    "split4 torque-free": 500_000,
}


def bench_steps(n_steps: int, n_callable: int, repeats: int) -> dict[str, float]:
    dt = 0.01
    cases = {
        "rk4 torque-free": (lambda: attsim.propagate(SEED002_INERTIA, SEED002_OMEGA0, t_end=n_steps * dt, dt=dt),
                            n_steps),
        "rk4 constant torque": (
            lambda: attsim.propagate(FULL_TENSOR, (0.1, 0.2, 0.3), t_end=n_steps * dt, dt=dt,
                                     torque=(1e-3, -2e-3, 5e-4)),
            n_steps,
        ),
        "rk4 Python callable torque": (
            lambda: attsim.propagate(FULL_TENSOR, (0.1, 0.2, 0.3), t_end=n_callable * dt, dt=dt,
                                     torque=lambda t, q, w: -0.01 * w),
            n_callable,
        ),
    }
    for method in ("rkn", "rkmk4", "dcm", "split2", "split4", "split6"):
        cases[f"{method} torque-free"] = (
            lambda method=method: attsim.propagate(SEED002_INERTIA, SEED002_OMEGA0, t_end=n_steps * dt, dt=dt,
                                                   method=method),
            n_steps,
        )
    for order in (2, 10):  # the preprocessing costs nothing per step: the same step on modified moments
        cases[f"dmv order={order} torque-free"] = (
            lambda order=order: attsim.propagate(SEED002_INERTIA, SEED002_OMEGA0, t_end=n_steps * dt, dt=dt,
                                                 method="dmv", order=order),
            n_steps,
        )
    rates = {}
    for name, (run, steps) in cases.items():
        rates[name] = steps / median_time(run, repeats)
    return rates


def bench_exact(n_times: int, repeats: int) -> float:
    """Seconds to evaluate the exact solution at ``n_times`` output times."""
    return median_time(lambda: attsim.propagate(SEED002_INERTIA, SEED002_OMEGA0, t_end=n_times * 0.01, dt=0.01,
                                                method="exact"), repeats)


def bench_startup(repeats: int) -> dict[str, float]:
    import_s = statistics.median(
        float(in_fresh_interpreter("import time; t = time.perf_counter(); import attsim; "
                                   "print(time.perf_counter() - t)"))
        for _ in range(repeats)
    )
    first_call = """
        import time; t = time.perf_counter()
        import attsim
        attsim.propagate([1.0, 2.0, 2.5], [0.1, 0.2, 0.3], t_end=1.0, dt=0.01)
        print(time.perf_counter() - t)
    """
    with tempfile.TemporaryDirectory() as cache:
        env = {"NUMBA_CACHE_DIR": cache}
        cold_s = float(in_fresh_interpreter(first_call, env))
        warm_s = statistics.median(float(in_fresh_interpreter(first_call, env)) for _ in range(repeats))
    return {"import attsim [s]": import_s, "first call, cold cache [s]": cold_s, "first call, warm cache [s]": warm_s}


def bench_memory(n_steps: int) -> tuple[float, float]:
    """Peak RSS (MB) of a fresh process recording ``n_steps`` steps, and of
    the same process after a tiny warm-up run (libraries loaded, no data)."""
    code = f"""
        import resource, attsim
        attsim.propagate([1.0, 2.0, 2.5], [0.1, 0.2, 0.3], t_end=0.1, dt=0.01)
        baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        df = attsim.propagate([1.0, 2.0, 2.5], [0.1, 0.2, 0.3], t_end={n_steps} * 0.01, dt=0.01)
        assert len(df) == {n_steps} + 1
        print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, baseline)
    """
    in_fresh_interpreter(code)  # a first process fills the compilation cache if anything was stale
    peak, baseline = in_fresh_interpreter(code).split()
    return float(peak), float(baseline)


def bench_basilisk_memory(n_steps: int) -> float:
    """Peak RSS (MB) of a fresh process recording ``n_steps`` steps in Basilisk."""
    code = f"""
        import resource
        import numpy as np
        from tools.peers import basilisk_peer
        out = basilisk_peer.run_torque_free(np.diag([1.0, 2.0, 2.5]), [0.1, 0.2, 0.3], (1.0, 0.0, 0.0, 0.0), 0.01,
                                            {n_steps}, record_every=1)
        assert len(out["t_s"]) == {n_steps} + 1
        print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    """
    return float(in_fresh_interpreter(code))


def bench_basilisk(n_steps: int, repeats: int) -> float | None:
    try:
        from tools.peers import basilisk_peer
    except ImportError:
        return None
    if not basilisk_peer.available():
        return None
    walls = [
        basilisk_peer.run_torque_free(np.diag(SEED002_INERTIA), SEED002_OMEGA0, (1.0, 0.0, 0.0, 0.0), 0.01, n_steps,
                                      record_every=1)["wall_s"]
        for _ in range(repeats)
    ]
    return n_steps / statistics.median(walls)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer steps and repeats (smoke run)")
    args = parser.parse_args()
    n_steps, n_callable, repeats = (10**5, 10**4, 3) if args.quick else (10**6, 10**5, 5)

    print(f"attsim {attsim.__version__} plant benchmark: dt = 0.01 s, {n_steps:.0e} steps "
          f"(callable: {n_callable:.0e}), median of {repeats}")
    rates = bench_steps(n_steps, n_callable, repeats)
    for name, rate in rates.items():
        target = TARGETS.get(name)
        verdict = "" if target is None else f"  target >= {target:,} {'met' if rate >= target else 'MISSED'}"
        print(f"  {name:32s} {rate:14,.0f} steps/s{verdict}")

    exact_s = bench_exact(n_steps, repeats)
    label = f"exact at {n_steps:.0e} output times [s]"
    print(f"  {label:32s} {exact_s:14.3f}  target < 2 {'met' if exact_s < 2 else 'MISSED'}")

    startup = bench_startup(repeats)
    for name, seconds in startup.items():
        print(f"  {name:32s} {seconds:14.3f}")
    peak_mb, baseline_mb = bench_memory(10**6)
    print(f"  {'peak RSS, 1e6 recorded steps [MB]':32s} {peak_mb:14.1f}  "
          f"target < 250 {'met' if peak_mb < 250 else 'MISSED'}")
    print(f"  {'  of which libraries loaded [MB]':32s} {baseline_mb:14.1f}  (numpy, pandas+pyarrow, numba+LLVM)")
    print(f"  {'  of which the run itself [MB]':32s} {peak_mb - baseline_mb:14.1f}  "
          "(8 float64 columns x 1e6 rows = 64 MB)")

    bsk_rate = bench_basilisk(n_steps, max(1, repeats // 2))
    if bsk_rate is None:
        print("  Basilisk: not importable (pip install -e '.[bench]'); peer comparison skipped")
    else:
        print(f"  {'Basilisk rk4 torque-free':32s} {bsk_rate:14,.0f} steps/s")
        print(f"  {'ratio attsim / Basilisk':32s} {rates['rk4 torque-free'] / bsk_rate:14.1f} x")
        print(f"  {'Basilisk peak RSS, 1e6 steps [MB]':32s} {bench_basilisk_memory(10**6):14.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
