"""Momentum management in missions: saturation-aware wheel torques, null-space speed management, unloading."""

import numpy as np
import pytest

import attsim
from attsim.control.allocation import pyramid_axes
from attsim.environment import Environment, KeplerOrbit
from attsim.guidance.targets import Inertial

J = np.diag([0.05, 0.06, 0.04])


def _pyramid(m, max_torque_Nm=1e-3, speeds=(0.0, 0.0, 0.0, 0.0)):
    return [m.add(attsim.ReactionWheel(f"rw{k}", axis, 2e-5, max_torque_Nm, 800.0, speed0_rad_s=s0))
            for k, (axis, s0) in enumerate(zip(pyramid_axes(4), speeds))]


def test_saturated_commands_keep_the_torque_direction(tmp_path):
    # a large slew: the PD asks for far more than the motors can give; scaled as a whole, the body torque
    # -A u stays parallel to the PD torque, so the slew turns about the eigen-axis
    m = attsim.Mission("scaled", J, (0.0, 0.0, 0.0), duration=5.0, telemetry_dt=0.5, out_dir=tmp_path)
    wheels = _pyramid(m, max_torque_Nm=1e-4)
    target = attsim.rotations.axis_angle_to_quat([0.3, -0.7, 0.5], np.radians(60.0))
    qpd = m.add(attsim.QuaternionPD(target, kp=0.05, kd=0.5, period_s=0.5, wheels=wheels,
                                    attitude_source=attsim.TRUTH, rate_source=attsim.TRUTH))
    df = m.run().df
    u = df[[f"rw{k}_torque" for k in range(4)]].to_numpy()[0]
    assert np.isclose(np.abs(u).max(), 1e-4)  # the binding motor at its limit
    delivered = -pyramid_axes(4).T @ u
    asked = qpd.torque(np.array([1.0, 0, 0, 0]), np.zeros(3))
    assert np.allclose(np.cross(delivered, asked) / np.linalg.norm(asked), 0.0, atol=1e-12 * np.linalg.norm(delivered))


def test_null_space_gain_moves_wheel_speeds_and_leaves_the_attitude(tmp_path):
    runs = []
    for gain in (0.0, 5e-6):
        m = attsim.Mission("null", J, (0.0, 0.0, 0.0), duration=300.0, telemetry_dt=1.0, out_dir=tmp_path / str(gain))
        wheels = _pyramid(m, speeds=(100.0, -50.0, 20.0, 0.0))
        m.add(attsim.QuaternionPD(kp=5e-4, kd=9e-3, period_s=0.5, wheels=wheels, target=Inertial((1.0, 0, 0, 0)),
                                  null_space_gain_Nm_s=gain, wheel_speed_target_rad_s=40.0,
                                  attitude_source=attsim.TRUTH, rate_source=attsim.TRUTH))
        runs.append(m.run().df)
    still, managed = runs
    speeds = managed[[f"rw{k}_speed" for k in range(4)]].to_numpy()
    null = np.linalg.svd(pyramid_axes(4).T)[2][3]  # the direction of wheel speeds that holds no body momentum
    # the null-space component of (speeds - target) decays; without the gain it stays
    before, after = null @ (speeds[0] - 40.0), null @ (speeds[-1] - 40.0)
    held = null @ (still[[f"rw{k}_speed" for k in range(4)]].to_numpy()[-1] - 40.0)
    assert abs(after) < 0.05 * abs(before) and abs(held) > 0.9 * abs(before)
    assert managed["att_err_deg"].max() < 1e-3 and still["att_err_deg"].max() < 1e-3


def test_unloading_removes_wheel_momentum_against_a_constant_disturbance(tmp_path):
    env = Environment(KeplerOrbit.circular(550.0, 97.6), field="dipole")
    h_end = {}
    for unload in (False, True):
        m = attsim.Mission("dump", J, (0.0, 0.0, 0.0), duration=3000.0, telemetry_dt=10.0, environment=env,
                           out_dir=tmp_path / str(unload))
        wheels = [m.add(attsim.ReactionWheel(f"rw_{a}", d, 2e-5, 2e-3, 2000.0)) for a, d in zip("xyz", np.eye(3))]
        tracker, gyro = m.add(attsim.StarTracker(1.0)), m.add(attsim.Gyro(1.0))
        m.add(attsim.TorqueSchedule([(0.0, 3000.0, (2e-6, -1e-6, 1.5e-6))]))  # a steady disturbance
        m.add(attsim.QuaternionPD((1.0, 0, 0, 0), kp=5e-4, kd=9e-3, period_s=1.0, wheels=wheels,
                                  attitude_source=tracker, rate_source=gyro))
        if unload:
            mag, mtq = m.add(attsim.Magnetometer(1.0, name="mag")), m.add(attsim.Magnetorquer(0.2))
            m.add(attsim.MomentumUnloading(mag, mtq, gain_per_s=0.005, period_s=1.0))
        df = m.run().df
        h_end[unload] = np.linalg.norm(df[[f"rw_{a}_h" for a in "xyz"]].to_numpy()[-1])
    # the disturbance adds |tau| t = 2.7e-6 x 3000 = 8e-3 N m s to the wheels; unloading keeps them near empty
    assert h_end[False] > 7e-3 and h_end[True] < 0.25 * h_end[False]


def test_unloading_needs_wheels(tmp_path):
    m = attsim.Mission("nowheels", J, (0.0, 0.0, 0.0), duration=2.0, field=(2e-5, 0, 0), out_dir=tmp_path)
    mag, mtq = m.add(attsim.Magnetometer(1.0)), m.add(attsim.Magnetorquer(0.2))
    m.add(attsim.MomentumUnloading(mag, mtq, gain_per_s=0.01, period_s=1.0))
    try:
        m.run()
    except attsim.InputError as exc:
        assert str(exc).startswith("wheels: controller 'unload' unloads reaction wheels")
    else:
        raise AssertionError("a mission without wheels was accepted")


def _biased(out, target=(60.0, -60.0, 60.0, -60.0)):
    m = attsim.Mission("bias", J, (0.0, 0.0, 0.0), duration=400.0, telemetry_dt=2.0, out_dir=out)
    wheels = _pyramid(m)
    m.add(attsim.QuaternionPD(kp=5e-4, kd=9e-3, period_s=0.5, wheels=wheels, target=Inertial((1.0, 0, 0, 0)),
                              null_space_gain_Nm_s=5e-6, wheel_speed_target_rad_s=target,
                              attitude_source=attsim.TRUTH, rate_source=attsim.TRUTH))
    return m


def test_a_per_wheel_speed_target_in_the_null_space_is_reached_without_turning_the_body(tmp_path):
    from tests.paths.test_mission_loop import assert_same_run, both_ways

    python, compiled = both_ways(tmp_path, _biased)
    assert_same_run(python, compiled)
    df = compiled.df
    speeds = df[[f"rw{k}_speed" for k in range(4)]].to_numpy()
    # (+60, -60, +60, -60) lies in the pyramid's null space (A s = 0): the wheels, at rest with the body at first,
    # reach it exactly while the array's body momentum A h stays zero and the attitude holds
    target = np.array([60.0, -60.0, 60.0, -60.0])
    assert np.allclose(pyramid_axes(4).T @ target, 0.0, atol=1e-12)
    assert np.allclose(speeds[-1], target, rtol=1e-3) and df["att_err_deg"].max() < 1e-6


def test_a_speed_target_of_the_wrong_length_is_refused():
    try:
        attsim.QuaternionPD((1.0, 0, 0, 0), kp=1.0, kd=1.0, period_s=1.0, wheels=["a", "b", "c", "d"],
                            wheel_speed_target_rad_s=(1.0, 2.0, 3.0))
    except attsim.InputError as exc:
        assert str(exc).startswith("wheel_speed_target_rad_s: must be one number or one per wheel")
    else:
        raise AssertionError("three targets for four wheels were accepted")


@pytest.mark.parametrize("compiled", [False, True], ids=["python", "compiled"])
def test_a_speed_target_beyond_a_wheels_speed_limit_is_refused_naming_it(tmp_path, compiled):
    # before: 1e300 rad/s (or 900 on wheels of 800) was accepted, and the null space pushed at the motors' limit
    mission = _biased(tmp_path, target=(60.0, -900.0, 60.0, -60.0))
    with pytest.raises(attsim.InputError, match=r"^wheel_speed_target_rad_s: must be within each wheel's "
                                                r"max_speed_rad_s \(beyond it for rw1\)"):
        mission.run(compiled=compiled)
