"""The mission engine: coupling with the plant, timing, determinism, crash safety."""

import math
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

import attsim
from attsim import rotations
from attsim.errors import InputError

ROOT = Path(__file__).resolve().parents[2]
FULL_J = np.array([[1.2, 0.1, 0.05], [0.1, 1.0, 0.02], [0.05, 0.02, 0.8]])
STATE = ["qw", "qx", "qy", "qz", "wx", "wy", "wz"]


def test_engine_with_only_the_recorder_reproduces_propagate(tmp_path):
    mission = attsim.Mission("free", FULL_J, (0.3, 1.0, -0.4), duration=20.0, max_step=0.01, telemetry_dt=1.0,
                             out_dir=tmp_path)
    tel = mission.run()
    df = attsim.propagate(FULL_J, (0.3, 1.0, -0.4), t_end=20.0, dt=0.01, record_every=100)
    assert np.array_equal(tel.df.index.to_numpy(), df.index.to_numpy())
    assert np.abs(tel.df[STATE].to_numpy() - df.to_numpy()).max() < 1e-12
    assert not tel.partial and tel.meta["method"] == "rk4" and tel.meta["rows"] == 21


def test_state_at_each_sensor_sample_equals_propagate_at_that_time(tmp_path):
    samples = []
    mission = attsim.Mission("samples", FULL_J, (0.3, 1.0, -0.4), duration=10.0, max_step=0.01, telemetry_dt=0.7,
                             out_dir=tmp_path)
    gyro = mission.add(attsim.Gyro(rate_hz=1 / 0.37))  # noise-free: reads the true rate
    mission.add(attsim.FunctionController(lambda t, r: samples.append((t, r["gyro"].copy())) or {}, period_s=0.37,
                                          sensors=[gyro]))
    mission.run()
    df = attsim.propagate(FULL_J, (0.3, 1.0, -0.4), t_end=10.0, dt=0.01)
    times = np.array([t for t, _ in samples])
    assert len(times) == 28 and np.allclose(times, 0.37 * np.arange(28), rtol=0, atol=1e-12)
    expected = df[["wx", "wy", "wz"]].to_numpy()[np.round(times / 0.01).astype(int)]
    assert np.abs(np.array([r for _, r in samples]) - expected).max() < 1e-12


def test_torque_pulse_changes_rate_by_tau_dt_over_I(tmp_path):
    tau = np.array([0.02, -0.01, 0.03])
    mission = attsim.Mission("pulse", 2.0 * np.eye(3), (0.1, 0.2, -0.3), duration=3.0, max_step=0.1, out_dir=tmp_path)
    mission.add(attsim.TorqueSchedule([(1.0, 1.25, tau)]))
    tel = mission.run()
    change = tel.df[["wx", "wy", "wz"]].iloc[-1].to_numpy() - np.array([0.1, 0.2, -0.3])
    assert np.abs(change - tau * 0.25 / 2.0).max() < 1e-12
    assert np.allclose(tel.df.loc[2.0, ["schedule_tau_x", "schedule_tau_y", "schedule_tau_z"]], 0.0, rtol=0, atol=0)
    assert list(tel.events["kind"]) == ["command", "command"]


def test_overlapping_schedule_segments_add(tmp_path):
    schedule = attsim.TorqueSchedule([(0.0, 2.0, (1.0, 0, 0)), (1.0, 3.0, (0, 2.0, 0))])
    assert schedule.torque_at(1.5) == (1.0, 2.0, 0.0) and schedule.torque_at(2.0) == (0.0, 2.0, 0.0)
    pulses = attsim.TorqueSchedule.pulse_train(1.0, period_s=2.0, width_s=0.5, count=3, torque_Nm=(0, 0, 1e-3))
    assert [s[:2] for s in pulses.segments] == [(1.0, 1.5), (3.0, 3.5), (5.0, 5.5)]


def test_two_opposite_thrusters_make_a_pure_couple(tmp_path):
    a = attsim.Thruster("a", position_m=(0, 0.2, 0), direction=(1, 0, 0), max_force_N=0.5)
    b = attsim.Thruster("b", position_m=(0, -0.2, 0), direction=(-1, 0, 0), max_force_N=0.5)
    assert np.allclose(a.force_body_N + b.force_body_N, 0.0, rtol=0, atol=0)
    assert np.allclose(a.torque_body_Nm + b.torque_body_Nm, (0, 0, -0.2), rtol=0, atol=1e-15)
    mission = attsim.Mission("couple", 2.0 * np.eye(3), (0, 0, 0), duration=2.0, out_dir=tmp_path)
    for thruster in (a, b):
        mission.add(thruster)
        mission.add(attsim.CommandSchedule(thruster.name, [(0.5, 0.5)]))
    tel = mission.run()
    assert np.allclose(tel.df[["wx", "wy", "wz"]].iloc[-1], (0, 0, -0.2 * 0.5 / 2.0), rtol=0, atol=1e-14)
    assert tel.df.loc[0.0, "a_on"] == 0.0 and tel.df.loc[2.0, "a_on"] == 0.0
    thruster_events = [k for k in tel.events["kind"] if k.startswith("thruster")]
    assert thruster_events == ["thruster_on", "thruster_on", "thruster_off", "thruster_off"]
    assert list(tel.events["kind"]).count("command") == 2


def test_minimum_on_time_is_respected(tmp_path):
    mission = attsim.Mission("mib", np.eye(3), (0, 0, 0), duration=1.0, out_dir=tmp_path)
    mission.add(attsim.Thruster("t", (0, 0.1, 0), (1, 0, 0), 1.0, min_on_time_s=0.02))
    mission.add(attsim.CommandSchedule("t", [(0.1, 0.01)]))
    tel = mission.run()
    assert np.allclose(tel.df[["wx", "wy", "wz"]].iloc[-1], 0.0, rtol=0, atol=0)
    assert "below_min_on_time" in set(tel.events["kind"])


def wheel_triad(max_speed=600.0):
    return [attsim.ReactionWheel(f"rw{k}", axis, inertia_kg_m2=1e-4, max_torque_Nm=0.01, max_speed_rad_s=max_speed)
            for k, axis in enumerate(np.eye(3))]


def test_wheels_exchange_momentum_without_changing_the_total(tmp_path):
    mission = attsim.Mission("wheels", FULL_J, (0.05, -0.02, 0.03), duration=60.0, max_step=0.05, telemetry_dt=0.5,
                             out_dir=tmp_path)
    wheels = [mission.add(w) for w in wheel_triad()]
    mission.add(attsim.FunctionController(
        lambda t, r: {w.name: 0.004 * np.sin(0.3 * t + k) for k, w in enumerate(wheels)}, period_s=1.0,
        actuators=wheels))
    tel = mission.run()
    df = tel.df
    H_B = df[["wx", "wy", "wz"]].to_numpy() @ FULL_J.T + df[["rw0_h", "rw1_h", "rw2_h"]].to_numpy()
    H_I = rotations.quat_rotate(df[["qw", "qx", "qy", "qz"]].to_numpy(), H_B)
    assert np.linalg.norm(H_I - H_I[0], axis=1).max() / np.linalg.norm(H_I[0]) < 1e-10
    assert np.ptp(df["rw0_speed"]) > 1.0  # the wheels really moved


def test_saturation_clamps_and_is_logged(tmp_path):
    mission = attsim.Mission("sat", np.eye(3), (0, 0, 0), duration=5.0, out_dir=tmp_path, field=(0, 0, 3e-5))
    mtq = mission.add(attsim.Magnetorquer(dipole_max_Am2=0.1, saturation="scale"))
    mission.add(attsim.ReactionWheel("rw", (0, 0, 1), inertia_kg_m2=1e-4, max_torque_Nm=1e-3, max_speed_rad_s=20.0))
    mission.add(attsim.CommandSchedule("mtq", [(0.0, (0.4, -0.2, 0.0)), (2.0, (0.05, 0.0, 0.0))]))
    mission.add(attsim.CommandSchedule("rw", [(0.0, 5e-3)]))
    tel = mission.run()
    assert np.allclose(tel.df.loc[1.0, ["mtq_m_x", "mtq_m_y", "mtq_m_z"]], (0.1, -0.05, 0.0), rtol=0, atol=1e-15)
    assert np.allclose(tel.df.loc[3.0, ["mtq_m_x", "mtq_m_y", "mtq_m_z"]], (0.05, 0.0, 0.0), rtol=0, atol=1e-15)
    kinds = tel.events[["kind", "actuator", "what"]].fillna("").astype(str).agg("/".join, axis=1).tolist()
    assert "saturation/mtq/dipole" in kinds and "saturation_end/mtq/dipole" in kinds
    assert "saturation/rw/torque" in kinds and "saturation/rw/speed" in kinds
    # torque limited to 1e-3 N m until the wheel reaches 20 rad/s (at t = 2 s), then held there
    assert tel.df.loc[1.0, "rw_torque"] == 1e-3
    assert abs(tel.df["rw_speed"].abs().max() - 20.0) < 0.02 and tel.df.loc[5.0, "rw_torque"] == 0.0
    assert np.allclose(mtq.saturate((0.3, 0.0, 0.0))[0], (0.1, 0.0, 0.0))


AUDIT_BODY_J = np.diag([0.04, 0.045, 0.05])


def run_one_wheel(tmp_path, axis, omega0, max_step, commands, duration):
    """One wheel (5e-3 kg m^2, 100 rad/s) on the audit's body, telemetry every 0.01 s."""
    mission = attsim.Mission("rwlimit", AUDIT_BODY_J, omega0, duration=duration, max_step=max_step, telemetry_dt=0.01,
                             out_dir=tmp_path)
    mission.add(attsim.ReactionWheel("rw", axis, inertia_kg_m2=5e-3, max_torque_Nm=0.02, max_speed_rad_s=100.0))
    mission.add(attsim.CommandSchedule("rw", commands))
    return mission.run()


def saturation_times(tel, kind="saturation"):
    ev = tel.events
    return ev.loc[(ev["kind"] == kind) & (ev["what"] == "speed"), "t"].to_numpy()


# the body ends near 9 rad/s: steps stay below the engine's half-turn-a-step rule (max_step < pi / 9.1 s)
@pytest.mark.parametrize("max_step", [0.05, 0.2, 0.3])
def test_wheel_stops_at_its_speed_limit_relative_to_the_counter_rotating_body(tmp_path, max_step):
    # the audit's case: the body counter-rotates, so the relative speed grows at
    # tau (1/I_w + 1/J_z) = 0.01 (200 + 20) = 2.2 rad/s^2 (exactly: omega stays along z), not 2.0
    rate = 0.01 * (1 / 5e-3 + 1 / 0.05)
    tel = run_one_wheel(tmp_path, (0, 0, 1), (0, 0, 0), max_step, [(0.0, 0.01)], duration=80.0)
    speed = tel.df["rw_speed"].to_numpy()
    bound = max_step * rate  # one integration step's change of the relative speed
    assert speed.max() <= 100.0 + bound, speed.max()
    assert abs(speed[-1] - 100.0) <= bound  # it does get there, and stays
    assert np.allclose(saturation_times(tel), [100.0 / rate], rtol=0, atol=max_step)
    assert tel.df.loc[79.0, "rw_torque"] == 0.0 and tel.df.loc[45.0, "rw_torque"] == 0.01


@pytest.mark.parametrize("max_step", [0.05, 0.1, 0.25])  # the body ends above 10 rad/s: 0.25 s is 2.6 rad a step
def test_off_axis_wheel_on_a_tumbling_body_stops_at_its_limit(tmp_path, max_step):
    # a pyramid wheel (54.74 deg from z) on a body already turning: the gyroscopic coupling moves the rate
    beta = math.acos(1 / math.sqrt(3))
    axis = (math.sin(beta), 0.0, math.cos(beta))
    tel = run_one_wheel(tmp_path, axis, (0.05, -0.03, 0.02), max_step, [(0.0, -0.01)], duration=80.0)
    speed = tel.df["rw_speed"].to_numpy()
    pushing = tel.df["rw_torque"].to_numpy()[:-1] != 0.0
    rate = np.abs(np.diff(speed) / 0.01)[pushing].max()  # the relative speed's rate of change, measured
    bound = max_step * rate
    assert 2.0 < rate < 2.5
    assert speed.min() >= -100.0 - bound, speed.min()
    assert abs(speed[-1] + 100.0) <= bound
    assert len(saturation_times(tel)) == 1 and not pushing[-100:].any()


def test_wheel_at_its_limit_ignores_more_push_and_takes_a_reversal(tmp_path):
    rate = 0.01 * (1 / 5e-3 + 1 / 0.05)
    step = 0.25  # the body reaches 9.1 rad/s: 2.3 rad a step, inside the engine's half-turn rule
    commands = [(0.0, 0.01), (50.0, 0.01), (55.0, 0.02), (60.0, -0.01), (70.0, -0.01)]
    tel = run_one_wheel(tmp_path, (0, 0, 1), (0, 0, 0), step, commands, duration=170.0)
    df = tel.df
    assert np.abs(df["rw_speed"]).max() <= 100.0 + step * rate
    # pushed again at the limit (t = 50 and 55 s): nothing moves and nothing new is logged
    assert (df.loc[45.5:59.99, "rw_torque"] == 0.0).all()
    assert np.allclose(df.loc[46.0:59.99, "rw_speed"], 100.0, rtol=0, atol=step * rate)
    # reversed at 60 s: runs down from +100 to -100 at the same rate and stops there
    assert df.loc[61.0, "rw_torque"] == -0.01
    assert np.allclose(saturation_times(tel), [100.0 / rate, 60.0 + 200.0 / rate], rtol=0, atol=0.5)
    assert np.allclose(saturation_times(tel, "saturation_end"), [60.0], rtol=0, atol=0)
    assert abs(df["rw_speed"].iloc[-1] + 100.0) <= step * rate


def test_same_seed_same_frame_other_seed_other_noise(tmp_path):
    def run(seed, sub):
        mission = attsim.Mission("noise", FULL_J, (0.1, 0.0, 0.0), duration=20.0, seed=seed, out_dir=tmp_path / sub,
                                 field=(1e-5, 2e-5, 0))
        mission.add(attsim.Gyro(rate_hz=5.0, arw_rad_sqrt_s=1e-4, bias_rw_rad_s_sqrt_s=1e-5))
        mission.add(attsim.Magnetometer(rate_hz=2.0, noise_T=1e-7))
        return mission.run().df

    a, b, c = run(1, "a"), run(1, "b"), run(2, "c")
    assert a.equals(b)
    assert not np.allclose(a["gyro_x"], c["gyro_x"]) and not np.allclose(a["mag_x"], c["mag_x"])
    assert np.array_equal(a["wx"], c["wx"])  # noise never touches the truth


def test_bdot_detumbles_in_a_rotating_field(tmp_path):
    field_rate = 2 * np.pi / 600.0  # the field turns once per 10 minutes, as along an orbit

    def field(t):
        t = np.asarray(t, dtype=float)
        return 3e-5 * np.stack([np.cos(field_rate * t), np.sin(field_rate * t) * 0.6, 0.5 + 0 * t], axis=-1)

    J = np.diag([1.52529e-3, 1.45111e-3, 1.476e-3])
    mission = attsim.Mission("bdot", J, (0.05, -0.04, 0.03), duration=3000.0, out_dir=tmp_path, field=field,
                             field_dt=1.0, telemetry_dt=10.0)
    mag = mission.add(attsim.Magnetometer(rate_hz=1.0, noise_T=1e-9))
    mtq = mission.add(attsim.Magnetorquer(dipole_max_Am2=0.068))
    mission.add(attsim.BDot(mag, mtq, gain=3e4, period_s=1.0))
    tel = mission.run()
    rate = np.linalg.norm(tel.df[["wx", "wy", "wz"]].to_numpy(), axis=1)
    assert rate[-1] < 0.2 * rate[0], (rate[0], rate[-1])


def test_quaternion_pd_with_wheels_slews_90_degrees(tmp_path):
    target = rotations.axis_angle_to_quat([0.3, -0.5, 0.8], np.pi / 2)
    mission = attsim.Mission("slew", FULL_J * 0.01, (0, 0, 0), duration=300.0, max_step=0.1, out_dir=tmp_path)
    wheels = [mission.add(w) for w in wheel_triad()]
    mission.add(attsim.QuaternionPD(target, kp=0.002, kd=0.02, period_s=0.5, wheels=wheels,
                                    attitude_source=attsim.TRUTH, rate_source=attsim.TRUTH))
    tel = mission.run()
    error_deg = np.degrees(rotations.quat_angle_between(tel.df[["qw", "qx", "qy", "qz"]].to_numpy(), target))
    assert error_deg[0] == pytest.approx(90.0)
    assert error_deg[-1] < 0.1


def test_controller_that_raises_stops_the_run_and_keeps_telemetry(tmp_path):
    def faulty(t, readings):
        if t >= 12.0:
            raise RuntimeError("sensor fusion diverged")
        return {}

    mission = attsim.Mission("faulty", FULL_J, (0.1, 0, 0), duration=100.0, out_dir=tmp_path)
    mission.add(attsim.FunctionController(faulty, period_s=1.0, name="fusion"))
    with pytest.raises(attsim.ControllerError,
                       match=r"controller 'fusion' raised at t = 12 s: RuntimeError\('sensor fusion diverged'\)"):
        mission.run()
    tel = attsim.load(tmp_path)
    assert tel.partial and "ControllerError" in tel.meta["stopped"]
    assert tel.df.index[-1] == 12.0 and len(tel.df) == 13


def test_unknown_controller_output_is_refused(tmp_path):
    mission = attsim.Mission("unknown", FULL_J, (0.1, 0, 0), duration=10.0, out_dir=tmp_path,
                             field=(2e-5, 0, 0))  # magnetorquers need a field (else refused first)
    mtq = mission.add(attsim.Magnetorquer(0.1))
    mission.add(attsim.FunctionController(lambda t, r: {"wheel9": 1.0}, period_s=1.0, actuators=[mtq], name="c"))
    with pytest.raises(attsim.ControllerError, match=r"controller 'c' at t = 0 s returned a command for 'wheel9', "
                                                     r"which is not one of its actuators \['mtq'\]"):
        mission.run()
    mission2 = attsim.Mission("badvalue", FULL_J, (0.1, 0, 0), duration=10.0, out_dir=tmp_path / "2",
                              field=(2e-5, 0, 0))
    mtq2 = mission2.add(attsim.Magnetorquer(0.1))
    mission2.add(attsim.FunctionController(lambda t, r: {"mtq": (np.nan, 0, 0)}, period_s=1.0, actuators=[mtq2],
                                           name="c"))
    with pytest.raises(attsim.ControllerError, match="bad command for 'mtq'.*finite"):
        mission2.run()


@pytest.mark.parametrize(
    "make, pattern",
    [
        (lambda: attsim.TorqueSchedule([(0.0, 1.0, (np.nan, 0, 0))]), r"segments\[0\]\.torque: must be finite"),
        (lambda: attsim.TorqueSchedule([(2.0, 1.0, (0, 0, 1))]), r"segments\[0\]: must have t_start_s < t_end_s"),
        (lambda: attsim.TorqueSchedule([(2.0, 3.0, (0, 0, 1)), (1.0, 1.5, (0, 0, 1))]),
         "segments: must be sorted by start time"),
        (lambda: attsim.Gyro(rate_hz=0.0), "rate_hz: must be finite and > 0"),
        (lambda: attsim.Magnetometer(rate_hz=-1.0), "rate_hz: must be finite and > 0"),
        (lambda: attsim.Mission("m", FULL_J, (0, 0, 0), max_step=0.0), "max_step: must be finite and > 0"),
        (lambda: attsim.Mission("m", FULL_J, (0, 0, 0), method="exact"), r"method: must be one of \['rk4'"),
        (lambda: attsim.Magnetorquer(dipole_max_Am2=-1), "dipole_max_Am2: must be finite and > 0"),
        (lambda: attsim.Thruster("t", (0, 0, 0), (1, 1, 0), 1.0), "direction: must be a unit vector"),
        (lambda: attsim.ReactionWheel("w", (0, 0, 1), 1e-4, 1e-3, 10.0, speed0_rad_s=20.0),
         "speed0_rad_s: must not exceed"),
        # run()'s options are checked before anything is written
        (lambda: attsim.Mission("m", FULL_J, (0, 0, 0), out_dir="unused").run(progress="yes"),
         "^progress: must be True"),
        (lambda: attsim.Mission("m", FULL_J, (0, 0, 0), out_dir="unused").run(compiled="no"),
         "^compiled: must be True"),
        (lambda: attsim.Mission("m", FULL_J, (0, 0, 0), out_dir="unused").run(realtime_factor="2"),
         "^realtime_factor: must be a real number"),
    ],
)
def test_bad_component_input_is_refused(make, pattern):
    with pytest.raises(InputError, match=pattern):
        make()


def test_duplicate_names_and_foreign_components_are_refused(tmp_path):
    mission = attsim.Mission("dups", FULL_J, (0, 0, 0), out_dir=tmp_path)
    mission.add(attsim.Gyro(1.0))
    with pytest.raises(InputError, match="names must be unique.*'gyro'"):
        mission.add(attsim.Gyro(2.0))
    with pytest.raises(InputError, match="must be an attsim Component"):
        mission.add("gyro")


def test_realtime_pacing_records_its_lag(tmp_path):
    mission = attsim.Mission("rt", FULL_J, (0.1, 0, 0), duration=2.0, telemetry_dt=0.5, out_dir=tmp_path)
    tel = mission.run(realtime_factor=20.0)
    assert "realtime_max_lag_s" in tel.meta and tel.meta["realtime_max_lag_s"] >= 0.0
    # paced, not free-running: the loop took at least (almost) 2 s / 20
    assert tel.meta["realtime_factor_achieved"] < 40.0


def test_sigkill_mid_mission_leaves_a_readable_partial_run(tmp_path):
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(ROOT)!r})
        import numpy as np, attsim
        m = attsim.Mission("long", np.diag([1.0, 2.0, 2.5]), (0.1, 0.2, 0.3), duration=1e7, max_step=0.5,
                           telemetry_dt=1.0, out_dir={str(tmp_path)!r})
        m.add(attsim.Gyro(rate_hz=1.0, arw_rad_sqrt_s=1e-4))
        print("starting", flush=True)
        m.run()
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    rows = tmp_path / "telemetry.f64"
    try:
        assert proc.stdout.readline().strip() == "starting"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and (not rows.exists() or rows.stat().st_size < 200_000):
            time.sleep(0.05)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    tel = attsim.load(tmp_path)
    assert tel.partial
    df = tel.df
    assert len(df) >= 1000 and np.array_equal(df.index.to_numpy(), np.arange(len(df), dtype=float))
    assert np.all(np.isfinite(df[STATE].to_numpy()))
    assert np.all(np.isfinite(df["gyro_x"].to_numpy()[1:]))  # NaN only before the first sample


def test_a_mission_runs_twice_with_identical_results(tmp_path):
    mission = attsim.Mission("twice", FULL_J, (0.1, -0.2, 0.05), duration=30.0, out_dir=tmp_path,
                             field=(2e-5, -1e-5, 3e-5), seed=4)
    mag = mission.add(attsim.Magnetometer(rate_hz=1.0, noise_T=1e-8))
    mtq = mission.add(attsim.Magnetorquer(0.05))
    mission.add(attsim.BDot(mag, mtq, gain=1e5, period_s=1.0))
    mission.add(attsim.Thruster("jet", (0, 0.1, 0), (0, 0, 1), 0.01))
    mission.add(attsim.CommandSchedule("jet", [(5.0, 2.0)]))
    first = mission.run()
    df1, events1 = first.df.copy(), first.events.copy()
    second = mission.run()
    assert df1.equals(second.df) and events1.equals(second.events)


def test_quaternion_pd_with_magnetorquers_commands_b_cross_tau(tmp_path):
    # the torque law mapped onto magnetorquers: m = B x tau / |B|^2, so m is normal to B
    # and m x B is the part of tau normal to the field
    target = rotations.axis_angle_to_quat([0, 0, 1], 0.3)
    B = np.array([2e-5, -1e-5, 3e-5])
    commands = []
    mission = attsim.Mission("qpd_mtq", FULL_J * 0.01, (0.01, 0.0, 0.0), duration=3.0, field=B, out_dir=tmp_path)
    mag = mission.add(attsim.Magnetometer(rate_hz=1.0))
    mtq = mission.add(attsim.Magnetorquer(dipole_max_Am2=10.0))
    law = mission.add(attsim.QuaternionPD(target, kp=1e-4, kd=1e-3, period_s=1.0, magnetorquer=mtq, magnetometer=mag,
                                          attitude_source=attsim.TRUTH, rate_source=attsim.TRUTH))
    original = mtq.command
    mtq.command = lambda sc, m: (commands.append((np.array(sc.state()[0]), np.array(sc.state()[1]), np.asarray(m))),
                                 original(sc, m))
    mission.run(compiled=False)  # observes the Python component; tests/paths/ checks the compiled one
    assert len(commands) == 4  # cycles at t = 0, 1, 2 and at the final instant 3 (sampled for its row)
    for q, w, m in commands:
        b_body = rotations.quat_rotate(rotations.quat_conjugate(q), B)
        tau = law.torque(q, w)
        tau_normal = tau - b_body * (tau @ b_body) / (b_body @ b_body)
        assert abs(m @ b_body) < 1e-12 * np.linalg.norm(m) * np.linalg.norm(b_body)
        assert np.allclose(np.cross(m, b_body), tau_normal, rtol=1e-9, atol=0)


def test_a_row_shows_the_samples_taken_at_its_own_time(tmp_path):
    # The rate changes every instant (torque on), so a sample from the previous cycle would differ from the row's
    # own omega. One gyro samples on its own process, one is sampled by a controller; both at the telemetry times.
    mission = attsim.Mission("order", FULL_J, (0.1, -0.2, 0.3), duration=5.0, max_step=0.01, telemetry_dt=0.5,
                             out_dir=tmp_path)
    mission.add(attsim.TorqueSchedule([(0.0, 5.0, (0.01, 0.02, -0.03))]))
    mission.add(attsim.Gyro(rate_hz=2.0, name="free_gyro"))
    driven = mission.add(attsim.Gyro(rate_hz=2.0, name="driven_gyro"))
    mission.add(attsim.FunctionController(lambda t, r: {}, period_s=0.5, sensors=[driven]))
    df = mission.run().df
    assert list(df.index) == [0.5 * k for k in range(11)]
    omega = df[["wx", "wy", "wz"]].to_numpy()
    for gyro in ("free_gyro", "driven_gyro"):
        for columns in ([f"{gyro}_x", f"{gyro}_y", f"{gyro}_z"],
                        [f"{gyro}_true_x", f"{gyro}_true_y", f"{gyro}_true_z"]):
            assert np.array_equal(df[columns].to_numpy(), omega), gyro  # including the rows at t = 0 and the end


def test_a_row_shows_the_command_decided_at_its_own_time(tmp_path):
    # the schedule switches at t = 1.0 exactly: the row at 1.0 already holds the new torque
    mission = attsim.Mission("switch", FULL_J, (0.0, 0.0, 0.0), duration=2.0, out_dir=tmp_path)
    mission.add(attsim.TorqueSchedule([(1.0, 2.0, (0.0, 0.0, 1e-3))]))
    df = mission.run().df
    assert df.loc[0.0, "schedule_tau_z"] == 0.0 and df.loc[1.0, "schedule_tau_z"] == 1e-3


@pytest.mark.parametrize("body", [
    attsim.inertia.SolidCuboid(4.0, (0.1, 0.2, 0.3)),
    attsim.inertia.Part(attsim.inertia.SolidCylinder(2.0, 0.1, 0.4), position_m=(0.3, 0.0, 0.0),
                        q_body_part=rotations.axis_angle_to_quat([1, 0, 0], 0.4)),
    attsim.inertia.CompositeBody([attsim.inertia.Part(attsim.inertia.SolidSphere(1.0, 0.1)),
                                  attsim.inertia.Part(attsim.inertia.PointMass(0.5), position_m=(0.0, 0.0, 0.2))]),
], ids=["shape", "part", "composite"])
def test_mission_accepts_any_body_description(tmp_path, body):
    from attsim import inertia

    mission = attsim.Mission("body", body, (0.01, 0.0, 0.0), duration=1.0, out_dir=tmp_path)
    if isinstance(body, inertia.Part):  # a part alone: its shape's tensor turned into body axes, about its own centre
        R = rotations.quat_to_dcm(np.array(body.q_body_part))
        expected = R @ body.shape.inertia_kg_m2() @ R.T
    elif isinstance(body, inertia.CompositeBody):
        expected = body.inertia_kg_m2
    else:
        expected = body.inertia_kg_m2()
    assert np.allclose(mission.inertia_kg_m2, expected, rtol=1e-14, atol=0)
    assert not mission.run().partial


@pytest.mark.parametrize(
    "output, pattern",
    [
        (np.array([1.0, 2.0, 3.0]), r"returned ndarray; expected a dict"),  # its truth value raised ValueError
        ([("th", 1.0)], r"returned list; expected a dict"),
        ({"th": "abc"}, r"bad command for 'th': th\.command: must be numeric"),
        ({"th": "0.5"}, r"bad command for 'th': th\.command: must be numeric"),  # was fired for 0.5 s
        ({"th": True}, r"bad command for 'th': th\.command: must be numeric"),  # was fired for 1 s
    ],
)
def test_a_controller_output_that_is_no_command_is_a_controller_error(tmp_path, output, pattern):
    mission = attsim.Mission("bad_output", FULL_J, (0.1, 0, 0), duration=5.0, out_dir=tmp_path)
    thruster = mission.add(attsim.Thruster("th", (0, 0.5, 0), (1, 0, 0), 1.0))
    mission.add(attsim.FunctionController(lambda t, r: output, period_s=1.0, actuators=[thruster], name="c"))
    with pytest.raises(attsim.ControllerError, match=r"^controller 'c' at t = 0 s.*" + pattern):
        mission.run()


def test_a_file_as_out_dir_is_an_input_error(tmp_path):
    a_file = tmp_path / "taken"
    a_file.write_text("x")
    with pytest.raises(InputError, match="^out_dir: must be a directory, not a file"):
        attsim.Mission("file", FULL_J, (0.1, 0, 0), duration=1.0, out_dir=a_file).run()


@pytest.mark.parametrize(
    "field, pattern",
    [
        (lambda t: ("1e-5", "0", "0"), r"^field: callable must return finite numbers of shape \(3,\) \(at t = 0\.0 s"),
        (lambda t: (1e-5, 0.0, np.nan if np.any(np.asarray(t) >= 2.0) else 0.0),
         r"^field: callable must return finite values"),
        (lambda t: (True, False, False), r"^field: callable must return finite numbers"),
        ((1e-5, 0.0), r"^field: must have shape \(3,\)"),
        ("abc", r"^field: must be numeric"),
    ],
)
def test_a_field_that_is_not_a_finite_vector_is_refused(tmp_path, field, pattern):
    with pytest.raises(InputError, match=pattern):
        attsim.Mission("field", FULL_J, (0.1, 0, 0), duration=5.0, field=field, max_step=0.5, out_dir=tmp_path).run()


def test_a_slow_compiled_run_hands_its_rows_to_disk_within_wall_seconds(tmp_path):
    # the compiled loop held its rows until 10 simulated seconds had passed; with a tiny max_step that is
    # minutes of wall time a kill would lose (README: a kill loses no row older than one wall second)
    warm = attsim.Mission("warm", np.diag([1.0, 2.0, 2.5]), (0.1, 0.2, 0.3), duration=0.5, max_step=0.1,
                          telemetry_dt=0.5, out_dir=tmp_path / "warm")
    warm.add(attsim.Gyro(rate_hz=10.0))
    warm.run(compiled=True)  # the loop compiled and cached: the process below starts it in about a second
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(ROOT)!r})
        import numpy as np, attsim
        m = attsim.Mission("slow", np.diag([1.0, 2.0, 2.5]), (0.1, 0.2, 0.3), duration=100.0, max_step=1e-7,
                           telemetry_dt=0.5, out_dir={str(tmp_path / "slow")!r})
        m.add(attsim.Gyro(rate_hz=10.0))
        m.run(compiled=True)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    rows = tmp_path / "slow" / "telemetry.f64"
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and not rows.exists():  # set-up done, the loop starts
            time.sleep(0.05)
        assert rows.exists()
        started = time.monotonic()
        while time.monotonic() - started < 4.0 and rows.stat().st_size == 0:
            time.sleep(0.05)
        waited = time.monotonic() - started
        live = attsim.load(tmp_path / "slow")
        assert live.running and len(live.df) >= 1 and live.df.index[0] == 0.0, f"no row on disk after {waited:.1f} s"
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    assert len(attsim.load(tmp_path / "slow").df) >= 1
