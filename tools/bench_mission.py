"""Benchmark of the mission engine.

Prints, as medians of several runs on this machine:

* events/s of a pure-event load: a controller cycling at 100 Hz that does
  nothing, so what is measured is SimPy plus the engine's per-event work
  (plant advance, sensor sample, telemetry);
* the wall time of a 3-orbit magnetic detumble (dipole field along a
  circular 700 km polar orbit, 1 Hz magnetometer and B-dot, rk4 with a
  0.1 s maximum step, 1 Hz telemetry, 17,400 s simulated) — target 0.3 s;
  the same run in Basilisk (package ``bsk``) in this process, and the ratio,
  when Basilisk is importable;
* the wall time of ``missions/advitiy_detumble.py`` (2 orbits, IGRF-14,
  all disturbances), building the mission and its IGRF table included —
  target 3 s — in this process and as a fresh ``python`` run of the script;
* the wall times of ``missions/advitiy_adcs.py`` (4 orbits, IGRF-14, every
  disturbance: B-dot, Sun acquisition and nadir modes on magnetorquers, an
  MEKF on a magnetometer, sun sensors and a gyro) and
  ``missions/cubesat_target_tracking.py`` (3 orbits: 10 Hz MEKF and
  ground-station pointing with four wheels, unloading, every disturbance) —
  target 3 s each, their criteria checked before a time counts;
* the peak resident memory of a run that writes 10^7 telemetry rows —
  target 500 MB (``--quick`` writes 10^6);
* closed-loop reaction-wheel pointing for one LEO orbit (5,800 s): three
  wheels on the body axes, perfect attitude and rate sensing, an
  inertial-pointing PD law at 10 Hz, rk4 with a 0.1 s step, 1 Hz telemetry —
  attsim's ``QuaternionPD`` against Basilisk's ``mrpFeedback`` chain, run in
  turns in this process: both wall times, the ratio, the time per control
  cycle, and each run's final pointing error;
* the same orbit with a user's Python controller at 10 Hz (a numpy PD in a
  ``FunctionController``; in Basilisk the same function in a Python
  ``SysModel``): the engine's overhead per control cycle, i.e. wall time
  minus the time spent in the user's code, over the number of cycles (the
  user's code: the function given to ``FunctionController``; the Basilisk
  module's ``UpdateState``, which also reads and writes the messages).

attsim's wall time is the whole ``Mission.run()`` (building the run, writing
and reloading telemetry included); Basilisk's is ``ExecuteSimulation`` only,
its setup printed aside.

Every closed-loop run is checked (pointing error, rate, and for the shared
user law the agreement of the two tools) before its time counts; a failed
check stops the script with exit code 1.

Run: ``python tools/bench_mission.py [--quick] [--only SECTION ...]``
"""

from __future__ import annotations

import os

import argparse
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
from attsim import rotations  # noqa: E402
from attsim.cli import judge  # noqa: E402
from tools.benchutil import in_fresh_interpreter, interleaved_times, median_time  # noqa: E402

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
    mission = attsim.Mission("bench_events", ADVITIY_J, OMEGA0, duration=1000.0, max_step=0.1, telemetry_dt=1.0,
                             out_dir=out_dir)
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
    runs = [basilisk_peer.run_detumble(ADVITIY_J, OMEGA0, duration_s=17400.0, dt_s=0.1, control_period_s=1.0,
                                       gain=GAIN, dipole_max_Am2=DIPOLE_MAX_AM2, altitude_km=ALTITUDE_M / 1e3,
                                       inclination_deg=90.0)
            for _ in range(repeats)]
    return statistics.median(r["wall_s"] for r in runs), runs[-1]


# --------------------------------------------------------------------------
# Closed-loop reaction-wheel pointing, one LEO orbit
# --------------------------------------------------------------------------
# The spacecraft of Basilisk's scenarioAttitudeFeedbackRW: 900/800/600 kg m^2 is the WHOLE spacecraft, wheels'
# axial inertia included. Basilisk 2.12's balanced wheels add no mass properties, so this is its hub inertia;
# attsim's mission inertia excludes the axial inertia the wheels carry: J - Js * sum(a a^T) = J - Js * I here.
RW_ORBIT_S = 5800.0
RW_INERTIA_KG_M2 = np.diag([900.0, 800.0, 600.0])
RW_JS_KG_M2 = 0.08  # HR16-like: 50 N m s at 6000 rpm is 0.0796 kg m^2
RW_MAX_TORQUE_NM = 0.2
RW_MAX_SPEED_RAD_S = 6000.0 * 2.0 * np.pi / 60.0
RW_SPEED0_RAD_S = np.array([100.0, 200.0, 300.0]) * 2.0 * np.pi / 60.0  # relative to the body
RW_TARGET_Q = rotations.axis_angle_to_quat([0.2, -0.5, 0.8], np.radians(30.0))
RW_Q0 = rotations.quat_multiply(RW_TARGET_Q, rotations.axis_angle_to_quat([1.0, 2.0, -3.0], np.radians(45.0)))
RW_OMEGA0_RAD_S = (0.001, -0.002, 0.0015)
RW_DT_S = 0.1  # dynamics step and control period (10 Hz)
# attsim: tau = -kp sign(dq_w) dq_v - kd omega.  Basilisk's mrpFeedback (inertial reference): L = -K sigma - P omega.
# sigma = dq_v / (1 + dq_w) = dq_v / 2 + O(|dq_v|^3) (both ~ theta/4 vs theta/2 about the error axis), so K = 2 kp
# and P = kd are the same law to first order in the error; at the initial 45 deg they differ by 4 %
# (K tan(theta/4) = 0.199 vs kp sin(theta/2) = 0.191 N m).  kp gives w_n = sqrt(kp / (2 J)) = 0.017..0.020 rad/s
# and kd a damping ratio 0.9..1.1 on the three axes; the torque stays below the 0.2 N m limit.
RW_KP_NM = 0.5
RW_KD_NMS = 25.0
RW_K_MRP_NM = 2.0 * RW_KP_NM
RW_P_MRP_NMS = RW_KD_NMS
# A run that did not converge is not timed: after one orbit the PD has settled to round-off.
RW_CONVERGED_DEG = 1e-3
RW_CONVERGED_RAD_S = 1e-6
# The user law is the same function in both tools, so the trajectories must agree to round-off (they do to
# ~1e-13 deg); forgetting the wheels' axial inertia on one side alone already makes them differ by 5e-4 deg.
RW_SAME_LAW_DEG = 1e-6
RW_SAME_LAW_RAD_S = 1e-6  # wheel speeds
RW_WARMUP_S = 10.0  # length of the untimed warm-up runs
RW_OVERHEAD_TARGET_US = 15.0  # issue 10: the engine's own time per cycle around a user's Python controller


class BenchCheckError(Exception):
    """A benchmark run produced a result that must not be timed."""


def user_pd_law(q_wxyz, omega_rad_s) -> np.ndarray:
    """A user's PD law in numpy: wheel motor torques toward ``RW_TARGET_Q``.

    ``dq = q_target* (x) q`` (Hamilton), ``tau = -kp sign(dq_w) dq_v - kd omega``
    (Wie, *Space Vehicle Dynamics and Control*, sec. 7.3), and the wheels
    along the body axes apply ``-u`` to the body, so ``u = -tau``.
    """
    t_w, t_v = RW_TARGET_Q[0], RW_TARGET_Q[1:]
    q_w, q_v = q_wxyz[0], q_wxyz[1:]
    dq_w = t_w * q_w + t_v @ q_v
    dq_v = t_w * q_v - q_w * t_v - np.cross(t_v, q_v)
    return (RW_KP_NM if dq_w >= 0.0 else -RW_KP_NM) * dq_v + RW_KD_NMS * omega_rad_s


class TimedUserController:
    """The function given to ``FunctionController``: calls :func:`user_pd_law` and times itself."""

    def __init__(self):
        self.seconds = 0.0
        self.calls = 0

    def __call__(self, t_s, readings):
        start = time.perf_counter()
        u_Nm = user_pd_law(readings["st"], readings["gyro"])
        commands = {"rw_x": u_Nm[0], "rw_y": u_Nm[1], "rw_z": u_Nm[2]}
        self.seconds += time.perf_counter() - start
        self.calls += 1
        return commands


def rw_mission(out_dir, controller: str, duration_s: float | None = None, q0=RW_Q0, omega0_rad_s=RW_OMEGA0_RAD_S):
    """The attsim side: ``(mission, TimedUserController or None)``; ``controller`` is "pd" or "user"."""
    duration_s = RW_ORBIT_S if duration_s is None else duration_s
    inertia = RW_INERTIA_KG_M2 - RW_JS_KG_M2 * np.eye(3)  # wheels on the body axes: sum(a a^T) = I
    mission = attsim.Mission(f"bench_rw_{controller}", inertia, omega0_rad_s, q0=q0, duration=duration_s,
                             method="rk4", max_step=RW_DT_S, telemetry_dt=1.0, out_dir=out_dir)
    wheels = [mission.add(attsim.ReactionWheel(f"rw_{name}", axis, inertia_kg_m2=RW_JS_KG_M2,
                                               max_torque_Nm=RW_MAX_TORQUE_NM, max_speed_rad_s=RW_MAX_SPEED_RAD_S,
                                               speed0_rad_s=speed))
              for name, axis, speed in zip("xyz", np.eye(3), RW_SPEED0_RAD_S)]
    gyro = mission.add(attsim.Gyro(rate_hz=1.0 / RW_DT_S))
    tracker = mission.add(attsim.StarTracker(rate_hz=1.0 / RW_DT_S))
    if controller == "pd":
        mission.add(attsim.QuaternionPD(RW_TARGET_Q, RW_KP_NM, RW_KD_NMS, period_s=RW_DT_S, wheels=wheels,
                                        attitude_sensor=tracker, rate_sensor=gyro))
        return mission, None
    timed = TimedUserController()
    mission.add(attsim.FunctionController(timed, period_s=RW_DT_S, sensors=[tracker, gyro], actuators=wheels,
                                          name="user_pd"))
    return mission, timed


def rw_basilisk(controller: str, duration_s: float | None = None) -> dict:
    """The Basilisk side of the same run (``tools/peers/basilisk_rw.py``)."""
    duration_s = RW_ORBIT_S if duration_s is None else duration_s
    from tools.peers import basilisk_rw

    common = dict(inertia_kg_m2=RW_INERTIA_KG_M2, q0_wxyz=RW_Q0, omega0_rad_s=RW_OMEGA0_RAD_S,
                  wheel_js_kg_m2=RW_JS_KG_M2, wheel_max_torque_Nm=RW_MAX_TORQUE_NM,
                  wheel_max_speed_rad_s=RW_MAX_SPEED_RAD_S, wheel_speed0_rad_s=RW_SPEED0_RAD_S,
                  duration_s=duration_s, dt_s=RW_DT_S, control_period_s=RW_DT_S, record_period_s=1.0)
    if controller == "pd":
        return basilisk_rw.run_rw_pointing(target_q_wxyz=RW_TARGET_Q, K=RW_K_MRP_NM, P=RW_P_MRP_NMS, **common)
    return basilisk_rw.run_rw_user_controller(user_pd_law, **common)


def check_pointing(label: str, t_s, q_wxyz, omega_rad_s) -> float:
    """Final pointing error (deg) of a run; raises :class:`BenchCheckError` if it did not converge."""
    t_s, q_wxyz, omega_rad_s = np.asarray(t_s), np.asarray(q_wxyz), np.asarray(omega_rad_s)
    expected = int(round(RW_ORBIT_S)) + 1
    if len(t_s) != expected or abs(t_s[-1] - RW_ORBIT_S) > 1e-9:
        raise BenchCheckError(f"{label}: {len(t_s)} samples ending at t = {t_s[-1] if len(t_s) else None} s, "
                              f"expected {expected} ending at {RW_ORBIT_S} s")
    if not (np.all(np.isfinite(q_wxyz)) and np.all(np.isfinite(omega_rad_s))):
        raise BenchCheckError(f"{label}: non-finite attitude or rate")
    error_deg = float(np.degrees(rotations.quat_angle_between(q_wxyz[-1], RW_TARGET_Q)))
    rate = float(np.linalg.norm(omega_rad_s[-1]))
    if not (error_deg < RW_CONVERGED_DEG and rate < RW_CONVERGED_RAD_S):
        raise BenchCheckError(f"{label}: did not converge: pointing error {error_deg:.3g} deg (needs < "
                              f"{RW_CONVERGED_DEG}), |omega| {rate:.3g} rad/s (needs < {RW_CONVERGED_RAD_S})")
    return error_deg


def attitude_difference_deg(q_a, q_b) -> float:
    """Largest angle (deg) between two attitude histories sampled at the same times."""
    return float(np.degrees(np.max(rotations.quat_angle_between(np.asarray(q_a), np.asarray(q_b)))))


def _telemetry_arrays(tel):
    df = tel.df
    return (df.index.to_numpy(), df[["qw", "qx", "qy", "qz"]].to_numpy(), df[["wx", "wy", "wz"]].to_numpy(),
            df[["rw_x_speed", "rw_y_speed", "rw_z_speed"]].to_numpy())


def bench_rw(out_dir, repeats: int, with_basilisk: bool) -> None:
    """Closed-loop pointing and the user controller: attsim and (when importable) Basilisk, in turns."""
    last = {}
    users = {"attsim user": [], "Basilisk user": []}

    def attsim_run(controller):
        mission, timed = rw_mission(Path(out_dir) / controller, controller)

        def run():
            start = time.perf_counter()
            tel = mission.run()
            wall_s = time.perf_counter() - start
            t_s, q, w, wheel_speed = _telemetry_arrays(tel)
            label = f"attsim {controller}"
            last[label] = {"error_deg": check_pointing(label, t_s, q, w), "q": q, "wheel_speed": wheel_speed}
            if timed is not None:
                users[label].append((timed.seconds, timed.calls))
                timed.seconds, timed.calls = 0.0, 0
            return wall_s
        return run

    def basilisk_run(controller):
        def run():
            result = rw_basilisk(controller)
            label = f"Basilisk {controller}"
            last[label] = {"error_deg": check_pointing(label, result["t_s"], result["q_wxyz"], result["omega_rad_s"]),
                           "q": result["q_wxyz"], "wheel_speed": result["wheel_speed_rad_s"], "run": result}
            if controller == "user":
                users[label].append((result["user_s"], result["cycles"]))
            return result["wall_s"]
        return run

    runs = {"attsim pd": attsim_run("pd"), "attsim user": attsim_run("user")}
    if with_basilisk:
        runs = {"attsim pd": runs["attsim pd"], "Basilisk pd": basilisk_run("pd"),
                "attsim user": runs["attsim user"], "Basilisk user": basilisk_run("user")}

    def warmup():
        for controller in ("pd", "user"):
            rw_mission(Path(out_dir) / "warmup", controller, RW_WARMUP_S)[0].run()
            if with_basilisk:
                rw_basilisk(controller, RW_WARMUP_S)

    times = interleaved_times(runs, repeats, warmup)
    cycles = int(round(RW_ORBIT_S / RW_DT_S)) + 1  # t = 0 .. RW_ORBIT_S inclusive
    if with_basilisk:
        # The same law in both tools must give the same trajectory; otherwise the comparison times different work.
        same_law_deg = attitude_difference_deg(last["attsim user"]["q"], last["Basilisk user"]["q"])
        speeds = last["attsim user"]["wheel_speed"] - last["Basilisk user"]["wheel_speed"]
        same_law_rad_s = float(np.max(np.abs(speeds)))
        if not (same_law_deg < RW_SAME_LAW_DEG and same_law_rad_s < RW_SAME_LAW_RAD_S):
            raise BenchCheckError(f"the same user law gives attitudes {same_law_deg:.3g} deg (needs < "
                                  f"{RW_SAME_LAW_DEG}) and wheel speeds {same_law_rad_s:.3g} rad/s (needs < "
                                  f"{RW_SAME_LAW_RAD_S}) apart in attsim and Basilisk: not the same scenario")
    pd_vs_user_deg = attitude_difference_deg(last["attsim pd"]["q"], last["attsim user"]["q"])

    print(f"  closed-loop RW pointing, one orbit ({RW_ORBIT_S:,.0f} s), 10 Hz PD, 0.1 s rk4, 1 Hz telemetry; "
          f"{cycles:,} control cycles")
    wall = statistics.median(times["attsim pd"])
    print(f"  {'attsim QuaternionPD (run())':38s} {wall:12.3f} s wall  {1e6 * wall / cycles:8.1f} us/cycle"
          f"  (final pointing error {last['attsim pd']['error_deg']:.2e} deg)")
    if with_basilisk:
        bsk_wall = statistics.median(times["Basilisk pd"])
        run = last["Basilisk pd"]["run"]
        print(f"  {'Basilisk mrpFeedback chain (Execute)':38s} {bsk_wall:12.3f} s wall  "
              f"{1e6 * bsk_wall / cycles:8.1f} us/cycle  (final pointing error "
              f"{last['Basilisk pd']['error_deg']:.2e} deg; setup {run['setup_s']:.3f} s not counted)")
        law_deg = attitude_difference_deg(last["attsim pd"]["q"], last["Basilisk pd"]["q"])
        print(f"  {'ratio Basilisk / attsim':38s} {bsk_wall / wall:12.2f} x"
              f"  (largest attitude difference, quaternion PD vs MRP law: {law_deg:.3f} deg)")

    print("  user Python controller at 10 Hz, one orbit: a numpy PD in attsim's FunctionController / in a Basilisk "
          "Python SysModel")
    print("  (overhead = (wall - user code) / cycles; Basilisk's user code is its UpdateState: message I/O, "
          "MRP -> quaternion, the law)")
    for tool in ("attsim", "Basilisk") if with_basilisk else ("attsim",):
        label = f"{tool} user"
        overheads = [(w - u) / n for w, (u, n) in zip(times[label], users[label])]
        overhead_us = 1e6 * statistics.median(overheads)
        in_user = statistics.median(u / n for u, n in users[label])
        user_wall = statistics.median(times[label])
        met = "met" if overhead_us <= RW_OVERHEAD_TARGET_US else "MISSED"
        target = f"  target <= {RW_OVERHEAD_TARGET_US:.0f} {met}" if tool == "attsim" else ""
        print(f"  {label + ' controller':38s} {user_wall:12.3f} s wall  engine overhead "
              f"{overhead_us:7.1f} us/cycle{target}  (user code {1e6 * in_user:.1f} us/cycle; "
              f"final pointing error {last[label]['error_deg']:.2e} deg)")
    if with_basilisk:
        print(f"  {'ratio Basilisk / attsim':38s} "
              f"{statistics.median(times['Basilisk user']) / statistics.median(times['attsim user']):12.2f} x"
              f"  (same law: trajectories agree to {same_law_deg:.1e} deg; attsim user law vs QuaternionPD "
              f"{pd_vs_user_deg:.1e} deg)")


SECTIONS = ["events", "detumble", "advitiy", "adcs", "rw", "memory"]


def _basilisk_available() -> bool:
    try:
        from tools.peers import basilisk_peer
    except ImportError:
        return False
    return basilisk_peer.available()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats and 10^6 rows for the memory run")
    parser.add_argument("--only", nargs="+", choices=SECTIONS, default=SECTIONS, metavar="SECTION",
                        help=f"run only these sections: {', '.join(SECTIONS)} (default: all)")
    args = parser.parse_args()
    repeats = 3 if args.quick else 5
    rows = 10**6 if args.quick else 10**7
    print(f"attsim {attsim.__version__} mission benchmark, median of {repeats}")
    with_basilisk = _basilisk_available()
    with tempfile.TemporaryDirectory() as tmp:
        if "events" in args.only:
            events = bench_events(Path(tmp) / "events", repeats)
            print(f"  {'pure-event load':38s} {events:12,.0f} events/s")
        if "detumble" in args.only:
            mission = detumble_mission(Path(tmp) / "detumble")
            wall = median_time(mission.run, repeats)
            tel = attsim.load(Path(tmp) / "detumble")
            rate = np.linalg.norm(tel.df[["wx", "wy", "wz"]].to_numpy(), axis=1)
            print(f"  {'3-orbit detumble, 17,400 s simulated':38s} {wall:12.3f} s wall  target <= 0.3 "
                  f"{'met' if wall <= 0.3 else 'MISSED'}"
                  f"  (|omega| {rate[0]:.3f} -> {rate[5926]:.4f} after one orbit -> {rate[-1]:.4f} rad/s)")
        if "advitiy" in args.only:
            advitiy_s, fresh_s = bench_advitiy(Path(tmp) / "advitiy", repeats)
            print(f"  {'advitiy_detumble, 2 orbits, IGRF':38s} {advitiy_s:12.3f} s wall  target < 3 "
                  f"{'met' if advitiy_s < 3 else 'MISSED'}  ({fresh_s:.2f} s as a fresh process, imports included)")
        if "adcs" in args.only:
            sys.path.insert(0, str(ROOT / "missions"))
            import advitiy_adcs
            import cubesat_target_tracking

            for label, module, what in (
                    ("advitiy_adcs, 4 orbits, IGRF", advitiy_adcs,
                     "B-dot, Sun, nadir modes on magnetorquers; TRIAD-started MEKF"),
                    ("cubesat_target_tracking, 3 orbits", cubesat_target_tracking,
                     "10 Hz MEKF and pointing, 4 wheels with friction, PID, unloading")):
                out = Path(tmp) / "adcs"
                wall = median_time(lambda module=module, out=out: module.build(out_dir=out).run(), repeats)
                failed = [c.label for c in judge(module.criteria(attsim.load(out))) if not c.ok]
                if failed:
                    raise SystemExit(f"{label}: criteria failed, not timed: {failed}")
                print(f"  {label:38s} {wall:12.3f} s wall  target <= 3 {'met' if wall <= 3.0 else 'MISSED'}  "
                      f"({what}; build + table + run)")
        if "detumble" in args.only:
            bsk = bench_basilisk(max(1, repeats // 2))
            if bsk is None:
                print("  Basilisk: not importable (pip install -e '.[bench]'); peer comparison skipped")
            else:
                bsk_wall, run = bsk
                print(f"  {'Basilisk, same detumble':38s} {bsk_wall:12.3f} s wall  "
                      f"(B-dot: {run.get('bdot_impl', '?')}; "
                      f"|omega| end {run.get('rate_norm_end_rad_s', float('nan')):.4f} rad/s)")
                print(f"  {'ratio Basilisk / attsim':38s} {bsk_wall / wall:12.1f} x")
        if "rw" in args.only:
            if not with_basilisk:
                print("  Basilisk: not importable (pip install -e '.[bench]'); closed-loop peer runs skipped")
            try:
                bench_rw(Path(tmp) / "rw", repeats, with_basilisk)
            except BenchCheckError as exc:
                print(f"  CHECK FAILED, closed-loop timings discarded: {exc}")
                return 1
    if "memory" in args.only:
        peak, rows_wall = bench_memory(rows)
        label = f"peak RSS, {rows:.0e} telemetry rows [MB]"
        print(f"  {label:38s} {peak:12.1f}  target < 500 "
              f"{'met' if peak < 500 else 'MISSED'}  ({rows_wall:.1f} s wall)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
