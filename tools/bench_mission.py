"""Benchmark of the mission engine.

Prints, as medians of several runs on this machine:

* events/s of a pure-event load: a controller cycling at 100 Hz that does
  nothing, so what is measured is SimPy plus the engine's per-event work
  (plant advance, sensor sample, telemetry);
* the wall time of a 3-orbit magnetic detumble (dipole field along a
  circular 700 km polar orbit, 1 Hz magnetometer and B-dot, rk4 with a
  0.1 s maximum step, 1 Hz telemetry, 17,400 s simulated) — target 1.0 s;
  the same run in Basilisk (package ``bsk``) in this process, and the ratio,
  when Basilisk is importable;
* the wall time of ``missions/advitiy_detumble.py`` (2 orbits, IGRF-14,
  all disturbances), building the mission and its IGRF table included —
  target 3 s — in this process and as a fresh ``python`` run of the script;
* the peak resident memory of a run that writes 10^7 telemetry rows —
  target 500 MB (``--quick`` writes 10^6).

Run: ``python tools/bench_mission.py [--quick]``
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

MU_EARTH_M3_S2 = 3.986004418e14
R_EARTH_M = 6378137.0
B_EQUATOR_T = 3.12e-5
ALTITUDE_M = 700e3
ADVITIY_J = np.diag([1.52529e-3, 1.45111e-3, 1.476e-3])
OMEGA0 = (0.05, -0.1, 0.08)
GAIN = 5e4  # A m^2 s / T
DIPOLE_MAX_AM2 = 0.068


def polar_orbit_dipole_field(t_s):
    """Aligned-dipole field (T, inertial) along a circular polar orbit at 700 km.

    ``B = B0 (R/r)^3 (3 (r̂·m̂) r̂ - m̂)`` with the dipole axis ``m̂ = -z``.
    """
    radius = R_EARTH_M + ALTITUDE_M
    n = np.sqrt(MU_EARTH_M3_S2 / radius**3)
    u = n * np.asarray(t_s, dtype=float)
    r_hat = np.stack([np.cos(u), np.zeros_like(u), np.sin(u)], axis=-1)
    m_hat = np.array([0.0, 0.0, -1.0])
    strength = B_EQUATOR_T * (R_EARTH_M / radius) ** 3
    return strength * (3.0 * (r_hat @ m_hat)[..., None] * r_hat - m_hat)


def detumble_mission(out_dir) -> attsim.Mission:
    mission = attsim.Mission("bench_detumble", ADVITIY_J, OMEGA0, duration=17400.0, method="rk4", max_step=0.1,
                             telemetry_dt=1.0, out_dir=out_dir, field=polar_orbit_dipole_field)
    mag = mission.add(attsim.Magnetometer(rate_hz=1.0, noise_T=1e-8))
    mtq = mission.add(attsim.Magnetorquer(dipole_max_Am2=DIPOLE_MAX_AM2))
    mission.add(attsim.BDot(mag, mtq, gain=GAIN, period_s=1.0))
    return mission


def bench_events(out_dir, repeats: int) -> float:
    mission = attsim.Mission("bench_events", ADVITIY_J, OMEGA0, duration=1000.0, max_step=0.1, telemetry_dt=1.0, out_dir=out_dir)
    mission.add(attsim.FunctionController(lambda t, readings: None, period_s=0.01, name="idle"))
    cycles = 100_000
    return (cycles + 1000) / median_time(mission.run, repeats)


def bench_advitiy(out_dir, repeats: int) -> tuple[float, float]:
    """Median in-process wall (build + IGRF table + run) and one fresh-interpreter script run."""
    import time

    sys.path.insert(0, str(ROOT / "missions"))
    import advitiy_detumble

    in_process = median_time(lambda: advitiy_detumble.build(out_dir=out_dir).run(), repeats)
    start = time.perf_counter()
    in_fresh_interpreter(f"""
        import sys, runpy
        sys.argv = ["advitiy_detumble.py"]
        sys.path.insert(0, {str(ROOT / 'missions')!r})
        import advitiy_detumble
        advitiy_detumble.build(out_dir={str(out_dir)!r}).run()
    """)
    return in_process, time.perf_counter() - start


def bench_memory(rows: int) -> tuple[float, float]:
    """Peak RSS (MB) of a fresh process whose mission writes ``rows`` telemetry rows."""
    code = f"""
        import resource, tempfile, attsim
        with tempfile.TemporaryDirectory() as out:
            m = attsim.Mission("rows", [1.0, 2.0, 2.5], (0.1, 0.2, 0.3), duration={rows - 1} * 0.01, max_step=0.01,
                               telemetry_dt=0.01, out_dir=out)
            tel = m.run()
            assert tel.meta["rows"] == {rows}, tel.meta["rows"]
            print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, tel.meta["wall_s"])
    """
    peak, wall = in_fresh_interpreter(code).split()
    return float(peak), float(wall)


def bench_basilisk(repeats: int):
    try:
        from tools.peers import basilisk_peer
    except ImportError:
        return None
    if not basilisk_peer.available() or not hasattr(basilisk_peer, "run_detumble"):
        return None
    runs = [basilisk_peer.run_detumble(ADVITIY_J, OMEGA0, duration_s=17400.0, dt_s=0.1, control_period_s=1.0, gain=GAIN,
                                       dipole_max_Am2=DIPOLE_MAX_AM2, altitude_km=ALTITUDE_M / 1e3, inclination_deg=90.0)
            for _ in range(repeats)]
    return statistics.median(r["wall_s"] for r in runs), runs[-1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats and 10^6 rows for the memory run")
    args = parser.parse_args()
    repeats = 3 if args.quick else 5
    rows = 10**6 if args.quick else 10**7
    print(f"attsim {attsim.__version__} mission benchmark, median of {repeats}")
    with tempfile.TemporaryDirectory() as tmp:
        events = bench_events(Path(tmp) / "events", repeats)
        print(f"  {'pure-event load':38s} {events:12,.0f} events/s")
        mission = detumble_mission(Path(tmp) / "detumble")
        wall = median_time(mission.run, repeats)
        tel = attsim.load(Path(tmp) / "detumble")
        rate = np.linalg.norm(tel.df[["wx", "wy", "wz"]].to_numpy(), axis=1)
        print(f"  {'3-orbit detumble, 17,400 s simulated':38s} {wall:12.3f} s wall  target <= 1.0 {'met' if wall <= 1.0 else 'MISSED'}"
              f"  (|omega| {rate[0]:.3f} -> {rate[5926]:.4f} after one orbit -> {rate[-1]:.4f} rad/s)")
        advitiy_s, fresh_s = bench_advitiy(Path(tmp) / "advitiy", repeats)
        print(f"  {'advitiy_detumble, 2 orbits, IGRF':38s} {advitiy_s:12.3f} s wall  target < 3 {'met' if advitiy_s < 3 else 'MISSED'}"
              f"  ({fresh_s:.2f} s as a fresh process, imports included)")
    bsk = bench_basilisk(max(1, repeats // 2))
    if bsk is None:
        print("  Basilisk: not importable (pip install -e '.[bench]'); peer comparison skipped")
    else:
        bsk_wall, run = bsk
        print(f"  {'Basilisk, same detumble':38s} {bsk_wall:12.3f} s wall  (B-dot: {run.get('bdot_impl', '?')}; "
              f"|omega| end {run.get('rate_norm_end_rad_s', float('nan')):.4f} rad/s)")
        print(f"  {'ratio Basilisk / attsim':38s} {bsk_wall / wall:12.1f} x")
    peak, rows_wall = bench_memory(rows)
    print(f"  {'peak RSS, %.0e telemetry rows [MB]' % rows:38s} {peak:12.1f}  target < 500 {'met' if peak < 500 else 'MISSED'}"
          f"  ({rows_wall:.1f} s wall)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
