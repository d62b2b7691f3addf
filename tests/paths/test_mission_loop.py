"""The compiled mission loop against the Python path: the same telemetry and events, component by component
and mission by mission (one test suite, both backends)."""

import importlib.util
from pathlib import Path

import numba
import numpy as np
import pandas as pd
import pytest

import attsim
from attsim import rotations
from attsim.engine.build import compiled_form
from attsim.environment import Environment, Face, FieldHistory, KeplerOrbit
from attsim.guidance import NadirPointing, Slew

ROOT = Path(__file__).resolve().parents[2]
J = np.array([[0.06, 0.001, -0.0005], [0.001, 0.055, 0.0008], [-0.0005, 0.0008, 0.02]])
# Bit-for-bit is what the shared kernels give; the bound leaves room only for the different order of
# floating-point sums where the two paths assemble held inputs differently.
TOLERANCE = 1e-12


def assert_same_run(a, b):
    assert list(a.df.columns) == list(b.df.columns)
    assert np.array_equal(a.df.index.to_numpy(), b.df.index.to_numpy())
    x, y = a.df.to_numpy(), b.df.to_numpy()
    assert np.array_equal(np.isnan(x), np.isnan(y))
    # NaN where both are NaN (checked above): a column that is NaN throughout, like an update that never happened
    scale = np.maximum(1.0, np.max(np.abs(np.nan_to_num(x)), axis=0)) if len(x) else np.ones(0)
    difference = np.max(np.abs(np.nan_to_num(x - y)), axis=0) / scale if len(x) else np.zeros(0)
    worst = int(np.argmax(difference)) if difference.size else 0
    assert difference.size == 0 or difference.max() <= TOLERANCE, (a.df.columns[worst], difference.max())
    ea, eb = a.events, b.events
    assert len(ea) == len(eb) and list(ea.columns) == list(eb.columns)
    if len(ea):
        assert np.allclose(ea["t"], eb["t"], rtol=0, atol=1e-12)
        for column in ea.columns.drop("t"):
            left, right = ea[column].tolist(), eb[column].tolist()
            assert [str(v) for v in left] == [str(v) for v in right] or np.allclose(
                np.array(left, dtype=float), np.array(right, dtype=float), rtol=1e-12, atol=0), column


def both_ways(tmp_path, build):
    """The mission run on the Python path and in the mission loop (compiled); the loop's interpreted backend is
    run beside and must give the compiled backend's telemetry (one code, two backends)."""
    python = build(tmp_path / "python")
    compiled = build(tmp_path / "compiled")
    interpreted = build(tmp_path / "interpreted")
    assert compiled_form(compiled), [type(c).__name__ for c in compiled.components]
    loop = compiled.run(compiled=True, backend="compiled")
    assert_same_run(loop, interpreted.run(compiled=True, backend="interpreted"))
    return python.run(compiled=False), loop


def _wheels(mission, max_torque_Nm=2e-3, max_speed_rad_s=600.0):
    return [mission.add(attsim.ReactionWheel(f"rw_{a}", d, 2e-5, max_torque_Nm, max_speed_rad_s))
            for a, d in zip("xyz", np.eye(3))]


def _orbit_environment(**switches):
    return Environment(KeplerOrbit.circular(600.0, 97.8, epoch="2024-03-20T00:00:00"), field="dipole",
                       faces=Face.cube(0.1, (1e-3, -1e-3, 2e-3)), residual_dipole_Am2=(1e-3, 0.0, 5e-4), **switches)


def wheel_pd_with_noisy_sensors(out):
    m = attsim.Mission("qpd", J, (0.01, -0.02, 0.0), duration=120.0, max_step=0.1, telemetry_dt=0.5, seed=3,
                       out_dir=out)
    wheels = _wheels(m, max_torque_Nm=1e-3, max_speed_rad_s=80.0)  # both limits are reached
    gyro = m.add(attsim.Gyro(rate_hz=5.0, arw_rad_sqrt_s=1e-5, bias_rad_s=(2e-5, 0, -1e-5), bias_rw_rad_s_sqrt_s=1e-6,
                             quantization_rad_s=1e-7))
    tracker = m.add(attsim.StarTracker(rate_hz=2.0, noise_arcsec=(5.0, 5.0, 30.0)))
    m.add(attsim.QuaternionPD(rotations.axis_angle_to_quat([0.3, -0.5, 0.8], 2.0), kp=5e-3, kd=2e-2, period_s=0.5,
                              wheels=wheels, attitude_sensor=tracker, rate_sensor=gyro))
    m.add(attsim.Gyro(rate_hz=3.0, arw_rad_sqrt_s=2e-5, name="free_gyro", phase_s=0.1))
    m.add(attsim.TorqueSchedule([(10.0, 20.0, (1e-5, 0.0, 0.0)), (15.0, 40.0, (0.0, -2e-5, 0.0))]))
    return m


def detumble_both_forms(out):
    m = attsim.Mission("bdot", J * 0.05, (0.05, -0.04, 0.06), duration=600.0, max_step=0.1, telemetry_dt=2.0, seed=5,
                       out_dir=out,
                       field=lambda t: 3e-5 * np.stack([np.cos(1e-3 * np.asarray(t)), np.sin(1e-3 * np.asarray(t)),
                                                        0.3 + 0 * np.asarray(t)], axis=-1))
    mag = m.add(attsim.Magnetometer(rate_hz=1.0, noise_T=5e-8, bias_T=(1e-7, 0, 0), quantization_T=1e-8))
    mtq = m.add(attsim.Magnetorquer(dipole_max_Am2=0.02, saturation="clip"))
    m.add(attsim.BDot(mag, mtq, gain=2e3, period_s=1.0, form="rate"))
    mag2 = m.add(attsim.Magnetometer(rate_hz=0.5, noise_T=5e-8, name="mag2"))
    mtq2 = m.add(attsim.Magnetorquer(dipole_max_Am2=(0.01, 0.02, 0.01), saturation="scale", name="mtq2"))
    m.add(attsim.BDot(mag2, mtq2, gain=1e-3, period_s=2.0, form="direction", name="bdot2"))
    return m


def orbit_frame_hold(out):
    m = attsim.Mission("mpd", J * 0.05, (0.001, -0.002, 0.001), duration=900.0, max_step=0.2, telemetry_dt=5.0, seed=7,
                       out_dir=out, environment=_orbit_environment())
    mag = m.add(attsim.Magnetometer(rate_hz=0.5, noise_T=5e-8))
    mtq = m.add(attsim.Magnetorquer(dipole_max_Am2=0.05, saturation="scale"))
    tracker = m.add(attsim.StarTracker(rate_hz=0.5, noise_arcsec=20.0))
    m.add(attsim.MagneticPD(mag, mtq, kp=1e-6, kd=1e-4, period_s=2.0, attitude_sensor=tracker,
                            dipole_compensation_Am2=(5e-4, 0.0, 0.0), rate_source=attsim.TRUTH))
    m.add(attsim.SunSensor(rate_hz=1.0, noise=0.01, quantization=1e-3))
    return m


def magnetic_pd_torque_to_dipole(out):
    m = attsim.Mission("qpd_mtq", J * 0.05, (0.01, 0.0, 0.0), duration=200.0, max_step=0.1, telemetry_dt=1.0, seed=2,
                       out_dir=out, field=(2e-5, -1e-5, 3e-5))
    mag = m.add(attsim.Magnetometer(rate_hz=1.0, noise_T=1e-8))
    mtq = m.add(attsim.Magnetorquer(dipole_max_Am2=0.05))
    m.add(attsim.QuaternionPD(rotations.axis_angle_to_quat([0, 0, 1], 0.3), kp=1e-4, kd=1e-3, period_s=1.0,
                              magnetorquer=mtq, magnetometer=mag,
                              attitude_source=attsim.TRUTH, rate_source=attsim.TRUTH))
    return m


def playback_to_wheels_and_magnetorquers(out):
    m = attsim.Mission("playback", J, (0.0, 0.0, 0.0), duration=60.0, max_step=0.1, telemetry_dt=0.25, seed=4,
                       out_dir=out, field=(2e-5, -1e-5, 3e-5))
    m.add(attsim.ReactionWheel("rw", (0.6, 0.0, 0.8), 5e-4, max_torque_Nm=0.05, max_speed_rad_s=100.0))
    m.add(attsim.Magnetorquer(dipole_max_Am2=0.2, name="mtq"))
    m.add(attsim.CommandSchedule("rw", [(0.0, 0.02), (5.2, 0.08), (30.0, -0.01)]))  # speed limit, then back off
    m.add(attsim.CommandSchedule("mtq", [(1.0, (0.1, 0.0, -0.1)), (2.5, (0.5, 0.0, 0.0)), (4.0, (0.0, 0.0, 0.0))]))
    return m


def wheels_with_friction_and_imbalance(out):
    m = attsim.Mission("rough_wheels", J, (0.02, -0.03, 0.01), duration=30.0, max_step=0.01, telemetry_dt=0.1,
                       seed=6, out_dir=out)
    rough = dict(coulomb_friction_Nm=2e-5, viscous_friction_Nm_s_rad=1e-7, static_friction_Nm=5e-5,
                 stribeck_speed_rad_s=10.0, static_imbalance_kg_m=5e-7, dynamic_imbalance_kg_m2=1e-7)
    wheels = [m.add(attsim.ReactionWheel("rw_x", (1, 0, 0), 2e-5, 1e-3, 300.0, speed0_rad_s=-5.0, **rough,
                                         position_m=(0.05, 0.02, -0.03))),  # driven through zero
              m.add(attsim.ReactionWheel("rw_y", (0, 1, 0), 2e-5, 1e-3, 300.0, speed0_rad_s=280.0,
                                         viscous_friction_Nm_s_rad=2e-7)),  # into its speed limit
              m.add(attsim.ReactionWheel("rw_z", (0, 0, 1), 2e-5, 1e-3, 300.0, dynamic_imbalance_kg_m2=2e-7,
                                         speed0_rad_s=-100.0))]
    gyro = m.add(attsim.Gyro(rate_hz=10.0, arw_rad_sqrt_s=1e-5))
    tracker = m.add(attsim.StarTracker(rate_hz=5.0, noise_arcsec=10.0))
    m.add(attsim.QuaternionPD(rotations.axis_angle_to_quat([0.2, 0.9, -0.4], 0.8), kp=5e-3, kd=2e-2, period_s=0.1,
                              wheels=wheels, attitude_sensor=tracker, rate_sensor=gyro))
    m.add(attsim.TorqueSchedule([(5.0, 15.0, (0.0, 4e-4, 0.0))]))
    return m


@numba.njit
def point_z_to_nadir(t_s, readings, parameters, memory, commands):
    # readings: row 0 the horizon sensor's nadir n, row 1 the gyro's rate; body torque k (z × n) - c ω, and the
    # wheels' motor torques are its opposite (wheels along x, y, z)
    n, w = readings[0], readings[1]
    tau = (-parameters[0] * n[1] - parameters[1] * w[0], parameters[0] * n[0] - parameters[1] * w[1],
           -parameters[1] * w[2])
    for i in range(3):
        commands[i] = -tau[i]


def horizon_in_a_pointing_loop(out):
    """Horizon sensors free-running (one mounted, misaligned, with faults) and one read by a compiled law: the
    sensor in each role a sensor has in the compiled loop."""
    m = attsim.Mission("horizon_loop", J, (0.003, -0.002, 0.001), duration=120.0, max_step=0.1, telemetry_dt=0.5,
                       seed=8, environment=_orbit_environment(table_dt_s=1.0), out_dir=out)
    wheels = _wheels(m)
    gyro = m.add(attsim.Gyro(5.0, arw_rad_sqrt_s=1e-5))
    horizon = m.add(attsim.HorizonSensor(2.0, noise_rad=2e-3, name="hs"))
    m.add(attsim.NumbaController(point_z_to_nadir, period_s=0.5, sensors=[horizon, gyro], wheels=wheels,
                                 parameters=(2e-3, 2e-2)))
    faults = [attsim.SensorFault(20.0, "bias_jump", 30.0, bias=(0.0, 2e-3, 0.0)),
              attsim.SensorFault(60.0, "dropout", 5.0), attsim.SensorFault(80.0, "stuck", 4.0)]
    m.add(attsim.HorizonSensor(1.0, noise_rad=5e-4, phase_s=0.25, name="hs_mounted", faults=faults,
                               q_BS=rotations.axis_angle_to_quat([1.0, 0.0, 0.0], 0.7), misalignment_rad=(1e-3, 0, 0)))
    return m


def mrp_feedback_slew(out):
    """Basilisk's mrpFeedback (attsim.MRPFeedback) through a slew, from a star tracker and a gyro, to a
    four-wheel pyramid with null-space management, integral action reaching its limit and a known torque."""
    m = attsim.Mission("mrp", J, (0.01, -0.005, 0.004), duration=90.0, max_step=0.1, telemetry_dt=0.5, seed=12,
                       out_dir=out)
    wheels = [m.add(attsim.ReactionWheel(f"rw{k}", axis, 2e-5, 2e-3, 600.0, speed0_rad_s=50.0 * (k - 1.5)))
              for k, axis in enumerate(attsim.allocation.pyramid_axes(4))]
    gyro = m.add(attsim.Gyro(5.0, arw_rad_sqrt_s=1e-5, bias_rw_rad_s_sqrt_s=1e-6))
    tracker = m.add(attsim.StarTracker(2.0, noise_arcsec=(5.0, 5.0, 30.0)))
    target = Slew((1, 0, 0, 0), rotations.axis_angle_to_quat([0.3, -0.5, 0.8], 0.6), 0.05, 2e-3, t_start_s=5.0)
    m.add(attsim.MRPFeedback(2e-2, 6e-2, 0.5, wheels, target=target, Ki_per_kg_m2=5.0, integral_limit_Nms=2e-4,
                             known_torque_Nm=(1e-6, 0.0, -1e-6), attitude_source=tracker, rate_source=gyro,
                             null_space_gain_Nm_s=1e-5, wheel_speed_target_rad_s=(80.0, -80.0, 80.0, -80.0)))
    m.add(attsim.TorqueSchedule([(10.0, 60.0, (2e-5, -1e-5, 1e-5))]))
    return m


def body_torques_and_delayed_commands(out):
    """Ideal body torques (attsim.BodyTorque) driven by a QuaternionPD, an MRPFeedback and a user's law, and
    wheels by a clipping MRPFeedback, with command delays below, at and above one control period."""
    m = attsim.Mission("delays", J, (0.01, -0.02, 0.015), duration=12.0, max_step=0.1, telemetry_dt=0.25, seed=4,
                       out_dir=out)
    gyro = m.add(attsim.Gyro(4.0, arw_rad_sqrt_s=1e-5))
    torques = [m.add(attsim.BodyTorque(f"bt{k}")) for k in range(3)]
    q_ref = rotations.axis_angle_to_quat([0.3, -0.5, 0.8], 0.3)
    m.add(attsim.QuaternionPD(q_ref, kp=2e-3, kd=1e-2, period_s=0.5, body_torque=torques[0], rate_source=gyro,
                              attitude_source=attsim.TRUTH, command_delay_s=0.3))
    m.add(attsim.MRPFeedback(4e-3, 2e-2, 0.5, body_torque=torques[1], target_q=q_ref, attitude_source=attsim.TRUTH,
                             rate_source=attsim.TRUTH, command_delay_s=0.5, name="mrp_bt"))
    tracker = m.add(attsim.StarTracker(rate_hz=4.0, noise_arcsec=10.0))
    # user_pd (below; its unit compiled once for the suite) on a body torque: its "motor torque" sign turned
    m.add(attsim.NumbaController(user_pd, 0.25, sensors=[tracker, gyro], body_torque=torques[2],
                                 parameters=(-1e-3, -1e-2), command_delay_s=0.6, name="damper"))
    wheels = _wheels(m, max_torque_Nm=5e-4)
    m.add(attsim.MRPFeedback(2e-2, 6e-2, 0.2, wheels, target_q=q_ref, attitude_source=attsim.TRUTH,
                             rate_source=attsim.TRUTH, allocation="clip", command_delay_s=0.2))
    m.add(attsim.CommandSchedule("bt0", [(11.0, (1e-4, 0.0, 0.0))]))
    return m


def _field_history(duration_s, interpolation):
    t = np.arange(0.0, duration_s + 1.0, 1.0)  # a sample a second, as another simulator would log it
    return FieldHistory(t, 3e-5 * np.stack([np.cos(0.05 * t), np.sin(0.03 * t), 0.5 + 0.1 * np.cos(0.2 * t)], axis=-1),
                        interpolation=interpolation)


def hill_pointing_on_basilisks_orbit(out):
    """Issue 22 item 7's options: a point-mass orbit from its true anomaly with its own μ, an environment with
    nothing switched on but the gravity gradient and a held field history, MRPFeedback to Hill pointing, unloading."""
    orbit = KeplerOrbit(10e6, 0.1, 33.3, 48.2, 347.8, true_anomaly_deg=85.3, j2=False, mu_m3_s2=3.98600436e14)
    environment = Environment.orbit_only(orbit, gravity_gradient=True, field=_field_history(30.0, "hold"),
                                         table_dt_s=0.5)
    m = attsim.Mission("hill", J, (0.01, -0.005, 0.004), duration=30.0, max_step=0.1, telemetry_dt=0.5, seed=13,
                       out_dir=out, environment=environment)
    wheels = _wheels(m)
    mag = m.add(attsim.Magnetometer(2.0, noise_T=1e-8))
    m.add(attsim.MRPFeedback(2e-2, 6e-2, 0.1, wheels, target=NadirPointing(), attitude_source=attsim.TRUTH,
                             rate_source=attsim.TRUTH))
    m.add(attsim.MomentumUnloading(mag, m.add(attsim.Magnetorquer(0.1)), gain_per_s=0.2, period_s=1.0))
    return m


def detumble_in_a_linear_field_history(out):
    m = attsim.Mission("bdot_history", J * 0.05, (0.05, -0.04, 0.06), duration=30.0, max_step=0.1, telemetry_dt=0.5,
                       seed=5, out_dir=out, field=_field_history(30.0, "linear"))
    mag = m.add(attsim.Magnetometer(rate_hz=2.0, noise_T=5e-8))
    m.add(attsim.BDot(mag, m.add(attsim.Magnetorquer(dipole_max_Am2=0.02)), gain=2e3, period_s=0.5))
    return m


@pytest.mark.parametrize("build", [wheel_pd_with_noisy_sensors, detumble_both_forms, orbit_frame_hold,
                                   magnetic_pd_torque_to_dipole, playback_to_wheels_and_magnetorquers,
                                   wheels_with_friction_and_imbalance, horizon_in_a_pointing_loop,
                                   mrp_feedback_slew, body_torques_and_delayed_commands,
                                   hill_pointing_on_basilisks_orbit, detumble_in_a_linear_field_history],
                         ids=lambda f: f.__name__)
def test_every_built_in_component_gives_the_same_run_both_ways(tmp_path, build):
    python, compiled = both_ways(tmp_path, build)
    assert_same_run(python, compiled)
    assert len(python.df) > 10 and not python.partial and not compiled.partial
    assert (python.meta["path"], compiled.meta["path"], compiled.meta["backend"]) == ("objects", "loop", "compiled")


def test_saturations_happen_and_are_logged_alike(tmp_path):
    python, compiled = both_ways(tmp_path / "qpd", wheel_pd_with_noisy_sensors)
    whats = set(compiled.events.get("what", pd.Series(dtype=object)).dropna())
    # the PD's torques are scaled to the motor limits as a whole (attsim.allocation): no command is clipped
    assert whats == {"speed"}, whats
    assert compiled.df[[f"rw_{a}_torque" for a in "xyz"]].abs().to_numpy().max() == pytest.approx(1e-3)
    python, compiled = both_ways(tmp_path / "playback", playback_to_wheels_and_magnetorquers)
    assert {"torque", "speed", "dipole"} <= set(compiled.events["what"].dropna())


def test_rough_wheels_cross_zero_reach_their_limit_and_jitter_alike(tmp_path):
    python, compiled = both_ways(tmp_path, wheels_with_friction_and_imbalance)
    df = compiled.df
    assert "speed" in set(compiled.events["what"].dropna())  # rw_y reaches its limit
    assert df["rw_x_speed"].min() < 0.0 < df["rw_x_speed"].max()  # rw_x crosses zero, through its friction band
    assert df["rw_x_friction"].abs().max() > 2e-5 and df["rw_y_friction"].abs().max() > 0.0
    assert df["rw_x_jitter_F_y"].abs().max() > 0.0 and "rw_y_angle" not in df
    assert df["rw_z_jitter_tau_x"].abs().max() > 2e-7 * 100.0 ** 2 * 0.5


def _mission_builders():
    for path in sorted((ROOT / "missions").glob("*.py")):
        if path.name.startswith("_"):
            continue
        yield pytest.param(path, id=path.stem)


def _load(path):
    import sys

    sys.path.insert(0, str(path.parent))
    spec = importlib.util.spec_from_file_location(f"equivalence_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("path", list(_mission_builders()))
def test_each_mission_gives_the_same_run_both_ways(tmp_path, path):
    module = _load(path)
    missions = module.build(out_dir=tmp_path / "python")
    if not isinstance(missions, attsim.Mission):
        pytest.skip("not an engine mission (an integrator study)")
    if not compiled_form(missions):
        pytest.skip(f"has components without a compiled form: {[type(c).__name__ for c in missions.components]}")
    duration = min(missions.duration_s, 1200.0)  # enough for every component to act; keeps the suite short
    missions.duration_s = duration
    python = missions.run(compiled=False)
    again = module.build(out_dir=tmp_path / "compiled")
    again.duration_s = duration
    assert_same_run(python, again.run(compiled=True))


def test_compiled_true_refuses_a_mission_with_a_python_component(tmp_path):
    m = attsim.Mission("mixed", J, (0.0, 0.0, 0.0), duration=1.0, out_dir=tmp_path)
    m.add(attsim.FunctionController(lambda t, r: {}, period_s=0.1))
    with pytest.raises(attsim.InputError, match="compiled"):
        m.run(compiled=True)
    assert not m.run().partial  # and by default it simply runs the Python path


@numba.njit
def user_pd(t_s, readings, parameters, memory, commands):
    # readings: row 0 the star tracker's q, row 1 the gyro's rate; parameters: kp, kd; memory[0] counts cycles
    q, w = readings[0], readings[1]
    sign = 1.0 if q[0] >= 0.0 else -1.0
    for i in range(3):
        commands[i] = parameters[0] * sign * q[i + 1] + parameters[1] * w[i]  # motor torque = -(body torque)
    memory[0] += 1.0


@numba.njit
def user_law_that_fails(t_s, readings, parameters, memory, commands):
    if t_s >= 3.0:
        commands[1] = np.inf
    else:
        commands[0] = 1e-4  # wheel 0 only; the others hold


def user_numba_law(out):
    m = attsim.Mission("user", J, (0.02, -0.01, 0.01), duration=120.0, max_step=0.1, telemetry_dt=0.5, seed=9,
                       out_dir=out)
    wheels = _wheels(m)
    tracker = m.add(attsim.StarTracker(rate_hz=2.0, noise_arcsec=10.0))
    gyro = m.add(attsim.Gyro(rate_hz=2.0, arw_rad_sqrt_s=1e-5, bias_rw_rad_s_sqrt_s=1e-6))
    m.add(attsim.NumbaController(user_pd, period_s=0.5, sensors=[tracker, gyro], wheels=wheels,
                                 parameters=(2e-3, 2e-2), memory_size=1))
    return m


def test_a_users_numba_law_runs_compiled_and_in_python_alike(tmp_path):
    python, compiled = both_ways(tmp_path, user_numba_law)
    assert_same_run(python, compiled)
    df = compiled.df
    # the law steers: the rate decays from its start
    assert np.linalg.norm(df[["wx", "wy", "wz"]].iloc[-1]) < 0.2 * np.linalg.norm(df[["wx", "wy", "wz"]].iloc[0])


def test_a_users_law_keeps_its_memory(tmp_path):
    mission = user_numba_law(tmp_path)
    mission.run(compiled=True)
    assert mission.components[-1].memory[0] == 241.0  # cycles at 0, 0.5, ..., 120 s


@pytest.mark.parametrize("compiled", [False, True])
def test_an_infinite_command_from_a_users_law_stops_the_run(tmp_path, compiled):
    mission = attsim.Mission("bad_law", J, (0.0, 0.0, 0.0), duration=10.0, max_step=0.1, out_dir=tmp_path)
    wheels = _wheels(mission)
    mission.add(attsim.NumbaController(user_law_that_fails, period_s=1.0, wheels=wheels, name="law"))
    with pytest.raises(attsim.ControllerError, match=r"controller 'law' at t = 3 s wrote an infinite command"):
        mission.run(compiled=compiled)
    tel = attsim.load(tmp_path)
    assert tel.partial and tel.df["rw_x_torque"].iloc[-1] == 1e-4 and tel.df["rw_y_torque"].max() == 0.0


def test_a_numba_controller_needs_a_compiled_law():
    with pytest.raises(attsim.InputError, match="decide: must be a numba.njit-compiled function"):
        attsim.NumbaController(lambda *a: None, period_s=1.0, wheels=["rw"])


# --- found by an outside review of the compiled loop ---------------------------------------------------------------

def test_schedules_reaching_past_the_end_finish_alike(tmp_path):
    def build(out):
        m = attsim.Mission("past_end", J, (0.01, 0.0, 0.0), duration=30.0, out_dir=out)
        m.add(attsim.ReactionWheel("rw", (0, 0, 1), 2e-5, 2e-3, 600.0))
        m.add(attsim.TorqueSchedule([(5.0, 100.0, (0.0, 0.0, 1e-4))]))
        m.add(attsim.CommandSchedule("rw", [(0.0, 1e-4), (40.0, 0.0), (50.0, 1e-4)]))
        return m

    python, compiled = both_ways(tmp_path, build)  # the compiled loop used to spin forever here
    assert_same_run(python, compiled)
    assert compiled.events["t"].max() <= 30.0


def test_many_simultaneous_switches_neither_crash_nor_lose_events(tmp_path):
    def build(out):
        m = attsim.Mission("switches", J, (0.01, 0.0, 0.0), duration=20.0, out_dir=out)
        for k in range(40):
            m.add(attsim.TorqueSchedule.pulse_train(0.0, 0.2, 0.1, 100, (1e-7 * (k + 1), 0.0, 0.0), name=f"p{k}"))
        return m

    python, compiled = both_ways(tmp_path, build)
    assert_same_run(python, compiled)
    assert len(compiled.events) == 40 * 200


def test_commands_due_at_one_time_all_act_before_the_row(tmp_path):
    def build(out):
        m = attsim.Mission("dup", J, (0.0, 0.0, 0.0), duration=10.0, out_dir=out)
        m.add(attsim.ReactionWheel("rw", (0, 0, 1), 2e-5, 2e-3, 600.0))
        m.add(attsim.CommandSchedule("rw", [(0.0, 1e-3), (5.0, 1e-3), (5.0, -1e-3)]))
        return m

    python, compiled = both_ways(tmp_path, build)
    assert_same_run(python, compiled)
    assert compiled.df.loc[5.0, "rw_torque"] == -1e-3


def test_two_controllers_may_not_command_one_actuator(tmp_path):
    m = attsim.Mission("shared", J, (0.0, 0.0, 0.0), duration=5.0, field=(2e-5, 0, 0), out_dir=tmp_path)
    mag_a, mag_b = m.add(attsim.Magnetometer(1.0, name="a")), m.add(attsim.Magnetometer(1.0, name="b"))
    mtq = m.add(attsim.Magnetorquer(0.1))
    m.add(attsim.BDot(mag_a, mtq, gain=1.0, period_s=0.5, name="first"))
    m.add(attsim.BDot(mag_b, mtq, gain=1.0, period_s=1.0, name="second"))
    with pytest.raises(attsim.InputError, match="^actuators: actuator 'mtq' is commanded by controllers 'first' and "
                                                "'second', which can run at the same time"):
        m.run()


def _factory(gain):
    @numba.njit
    def law(t_s, readings, parameters, memory, commands):
        for i in range(3):
            commands[i] = -gain * readings[0, i]

    return law


def test_laws_that_differ_only_in_frozen_values_each_run_their_own(tmp_path):
    torques = []
    for k, gain in enumerate((1e-3, 1e-1)):
        m = attsim.Mission("factory", J, (0.01, -0.02, 0.03), duration=2.0, out_dir=tmp_path / str(k))
        wheels = _wheels(m, max_torque_Nm=0.05)  # far from saturating the laws' 1e-5 and 1e-3 N m
        gyro = m.add(attsim.Gyro(10.0))
        m.add(attsim.NumbaController(_factory(gain), period_s=0.5, sensors=[gyro], wheels=wheels))
        torques.append(m.run(compiled=True).df.loc[0.0, "rw_x_torque"])
    assert torques[0] == pytest.approx(-1e-3 * 0.01) and torques[1] == pytest.approx(-1e-1 * 0.01)


@numba.njit
def law_that_raises(t_s, readings, parameters, memory, commands):
    if t_s >= 3.5:
        raise ValueError("estimator diverged")
    commands[0] = 1e-4


@numba.njit
def law_writing_past_its_commands(t_s, readings, parameters, memory, commands):
    commands[3] = 1.0  # one wheel: commands has one entry


@pytest.mark.parametrize("compiled", [False, True])
def test_a_law_that_raises_is_a_controller_error_and_the_rows_are_kept(tmp_path, compiled):
    m = attsim.Mission("raises", J, (0.0, 0.0, 0.0), duration=10.0, out_dir=tmp_path)
    wheels = _wheels(m)
    m.add(attsim.NumbaController(law_that_raises, period_s=0.5, wheels=wheels, name="law"))
    with pytest.raises(attsim.ControllerError, match=r"controller 'law' raised at t = 3.5 s: .*estimator diverged"):
        m.run(compiled=compiled)
    tel = attsim.load(tmp_path)
    assert tel.partial and tel.df.index[-1] >= 3.0 and tel.df["rw_x_torque"].iloc[-1] == 1e-4


@pytest.mark.parametrize("compiled", [False, True])
def test_a_law_writing_out_of_bounds_is_stopped_not_let_corrupt_memory(tmp_path, compiled):
    m = attsim.Mission("oob", J, (0.0, 0.0, 0.0), duration=2.0, out_dir=tmp_path)
    wheel = m.add(attsim.ReactionWheel("rw", (0, 0, 1), 2e-5, 2e-3, 600.0))
    m.add(attsim.NumbaController(law_writing_past_its_commands, period_s=0.5, wheels=[wheel], name="law"))
    # numba's message names no array: the layout of the commands it most likely ran past is said
    with pytest.raises(attsim.ControllerError, match=r"controller 'law' raised at t = 0 s: IndexError.*\(its commands "
                                                     r"array holds 1 entry: 0 the wheels' motor torques\)$"):
        m.run(compiled=compiled)


@numba.njit
def law_thinking_in_three_axes(t_s, readings, parameters, memory, commands):
    for k in range(3):  # a dipole's three components, for a magnetorquer of four bars
        commands[k] = 0.01


@numba.njit
def law_with_a_torque_half_written(t_s, readings, parameters, memory, commands):
    commands[0] = 1e-4
    if t_s >= 1.0:
        commands[1] = 1e-4  # the torque's y and z; x was written, z is left NaN


@pytest.mark.parametrize("compiled", [False, True])
def test_a_vector_written_in_part_stops_the_run_instead_of_holding_for_ever(tmp_path, compiled):
    """A law writing three dipoles for four bars left the fourth NaN, so the whole bar vector held its initial zero
    for the whole run, silently (issue-22 attack): a vector is commanded whole or held whole."""
    m = attsim.Mission("three_of_four", J, (0.01, 0.0, 0.0), duration=2.0, out_dir=tmp_path / "bars",
                       field=(2e-5, 1e-5, -3e-5))
    bars = m.add(attsim.Magnetorquer(0.02, bar_axes=[[1, 0, 0], [0, 1, 0], [0, 0, 1], [0.6, 0.8, 0.0]], name="mtq"))
    m.add(attsim.NumbaController(law_thinking_in_three_axes, period_s=0.5, magnetorquer=bars,
                                 magnetorquer_command="bars", name="law"))
    with pytest.raises(attsim.ControllerError, match=r"^controller 'law' at t = 0 s wrote 3 of the 4 entries 0-3 of a "
                                                     r"vector, 3 left NaN: a vector is commanded whole or held whole "
                                                     r"\(every entry NaN\); its commands array holds 4 entries: 0-3 "
                                                     r"the bars' dipoles$"):
        m.run(compiled=compiled)
    m = attsim.Mission("half_torque", J, (0.0, 0.0, 0.0), duration=2.0, out_dir=tmp_path / "torque")
    m.add(attsim.NumbaController(law_with_a_torque_half_written, period_s=0.5, body_torque=m.add(attsim.BodyTorque()),
                                 name="law"))
    with pytest.raises(attsim.ControllerError, match=r"^controller 'law' at t = 0 s wrote 1 of the 3 entries 0-2 of a "
                                                     r"vector, 1, 2 left NaN"):
        m.run(compiled=compiled)
    assert attsim.load(tmp_path / "torque").partial


def test_a_shared_law_sees_each_controllers_own_readings_and_commands(tmp_path):
    def build(out):
        m = attsim.Mission("shared_law", J, (0.01, -0.02, 0.03), duration=20.0, out_dir=out)
        wheels = _wheels(m)
        g1, g2, g3 = (m.add(attsim.Gyro(2.0, name=f"g{k}")) for k in (1, 2, 3))
        m.add(attsim.NumbaController(mean_rate_law, period_s=0.5, sensors=[g1, g2], wheels=wheels[:2], name="c1"))
        m.add(attsim.NumbaController(mean_rate_law, period_s=0.5, sensors=[g3], wheels=wheels[2:], name="c2"))
        return m

    python, compiled = both_ways(tmp_path, build)
    assert_same_run(python, compiled)


@numba.njit
def mean_rate_law(t_s, readings, parameters, memory, commands):
    # uses the array shapes: rows = this controller's sensors, entries = this controller's wheels
    for i in range(commands.shape[0]):
        total = 0.0
        for r in range(readings.shape[0]):
            total += readings[r, i]
        commands[i] = 1e-3 * total / readings.shape[0]


def test_empty_out_dir_is_refused():
    with pytest.raises(attsim.InputError, match="^out_dir: must be a directory path"):
        attsim.Mission("empty", J, (0.0, 0.0, 0.0), out_dir="")


def test_a_telemetry_period_whose_multiples_round_apart_still_finishes(tmp_path):
    # 12 * 13.7 + 13.7 rounds below 13 * 13.7: a horizon of t_now + telemetry_dt fell short of the next row, the
    # loop returned without doing anything, and the run never ended (audit review)
    assert 12 * 13.7 + 13.7 < 13 * 13.7
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(ROOT)!r})
        import numpy as np, attsim
        m = attsim.Mission("dt", np.diag([0.04, 0.045, 0.05]), (0.01, 0.02, 0.03), duration=400.0, max_step=0.5,
                           telemetry_dt=13.7, out_dir={str(tmp_path)!r})
        m.add(attsim.Gyro(rate_hz=0.01))
        print(len(m.run(compiled=True).df))
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert int(result.stdout.strip()) == 31  # 0, 13.7, ..., 397.3 and the row at 400


@pytest.mark.parametrize("compiled", [None, False])
def test_a_row_shows_the_sample_of_its_own_time_when_the_grids_round_apart(tmp_path, compiled):
    # 3 * 0.1 is 0.30000000000000004 and 1 * 0.3 is 0.3: the 10 Hz sample "at 0.3 s" came after the row at 0.3 s,
    # which showed the sample of 0.2 s (two rows in three, here); a user's schedule time 0.9 missed 3 * 0.3 too
    mission = attsim.Mission("grid", J, (0.01, 0.02, 0.03), duration=6.0, max_step=0.05, telemetry_dt=0.3,
                             out_dir=tmp_path)
    mission.add(attsim.Gyro(rate_hz=10.0))
    mission.add(attsim.StarTracker(rate_hz=10.0))
    mission.add(attsim.TorqueSchedule([(0.0, 6.0, (1e-3, -2e-3, 1e-3))]))
    df = mission.run(compiled=compiled).df
    assert len(df) == 21 and 0.9 in df.index
    for axis in "xyz":
        assert np.array_equal(df[f"gyro_true_{axis}"].to_numpy(), df[f"w{axis}"].to_numpy())
    assert np.array_equal(df["st_true_qw"].to_numpy(), df["qw"].to_numpy())
