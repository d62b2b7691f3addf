"""The ADCS chain in the compiled loop against the Python path: estimators, guidance targets, pointing columns."""

import numpy as np
import pytest

import attsim
from attsim import rotations
from attsim.guidance.targets import GroundTarget, NadirPointing, Slew, SunPointing

from tests.paths.test_mission_loop import J, _orbit_environment, _wheels, assert_same_run, both_ways


def mekf_star_tracker_pointing(out):
    m = attsim.Mission("mekf_st", J, (0.01, -0.02, 0.005), duration=60.0, telemetry_dt=0.5, seed=3, out_dir=out)
    wheels = _wheels(m)
    gyro = m.add(attsim.Gyro(10.0, arw_rad_sqrt_s=1e-5, bias_rad_s=(3e-4, -2e-4, 1e-4), bias_rw_rad_s_sqrt_s=1e-7))
    tracker = m.add(attsim.StarTracker(2.0, noise_arcsec=(8.0, 8.0, 30.0), phase_s=0.5))
    mekf = m.add(attsim.MEKF(gyro, star_tracker=tracker, q0=(1.0, 0.0, 0.0, 0.0)))
    target = rotations.axis_angle_to_quat([0.2, 0.5, -0.8], np.radians(20.0))
    m.add(attsim.QuaternionPD(target, kp=5e-4, kd=9e-3, period_s=0.2, wheels=wheels, attitude_source=mekf,
                              rate_source=mekf))
    return m


def mekf_vectors_nadir(out):
    m = attsim.Mission("mekf_vec", J, (0.001, -0.0005, 0.0012), duration=300.0, telemetry_dt=2.0, seed=5,
                       environment=_orbit_environment(), out_dir=out)
    mag = m.add(attsim.Magnetometer(1.0, noise_T=1e-7, name="mag"))
    gyro = m.add(attsim.Gyro(5.0, arw_rad_sqrt_s=2e-5, bias_rad_s=(1e-4, 0.0, -1e-4)))
    css = m.add(attsim.SunSensor(1.0, noise=0.01))
    wheels = _wheels(m)
    mekf = m.add(attsim.MEKF(gyro, magnetometer=mag, sun_sensor=css, q0=(1.0, 0.0, 0.0, 0.0),
                             magnetometer_noise_T=3e-7))
    m.add(attsim.QuaternionPD(kp=2e-4, kd=5e-3, period_s=1.0, wheels=wheels, target=NadirPointing(),
                              attitude_source=mekf, rate_source=mekf))
    return m


def outliers_logged(out):
    m = attsim.Mission("outliers", J, (0.02, 0.01, -0.01), duration=20.0, telemetry_dt=1.0, seed=1, out_dir=out)
    gyro = m.add(attsim.Gyro(10.0, arw_rad_sqrt_s=1e-5))
    tracker = m.add(attsim.StarTracker(1.0, noise_arcsec=20.0))
    m.add(attsim.MEKF(gyro, star_tracker=tracker, star_tracker_noise_arcsec=0.3))  # over-trusted: outliers
    return m


def every_target(out):
    env = _orbit_environment()
    m = attsim.Mission("targets", J, (0.0, 0.0, 0.0), duration=120.0, telemetry_dt=1.0, seed=0, environment=env,
                       out_dir=out)
    wheels = _wheels(m, max_torque_Nm=5e-3)
    gyro = m.add(attsim.Gyro(4.0))
    tracker = m.add(attsim.StarTracker(4.0))
    slew = Slew((1.0, 0.0, 0.0, 0.0), rotations.axis_angle_to_quat([0, 0, 1], 0.5), 0.02, 1e-3, t_start_s=5.0)
    m.add(attsim.QuaternionPD(kp=5e-4, kd=9e-3, period_s=0.25, wheels=wheels, target=slew, attitude_source=tracker,
                              rate_source=gyro))
    return m


@pytest.mark.parametrize("build", [mekf_star_tracker_pointing, mekf_vectors_nadir, outliers_logged, every_target])
def test_the_chain_gives_the_same_run_both_ways(tmp_path, build):
    python, compiled = both_ways(tmp_path, build)
    assert_same_run(python, compiled)


def test_outliers_are_events_on_both_paths(tmp_path):
    python, compiled = both_ways(tmp_path, outliers_logged)
    assert (compiled.events["kind"] == "outlier").sum() > 0


@pytest.mark.parametrize("target", [SunPointing((1, 0, 0), (0, 0, 1), (0, 0, 1)),
                                    GroundTarget(19.13, 72.92, 10.0, min_elevation_deg=5.0)],
                         ids=["sun", "ground"])
def test_moving_targets_run_alike_and_fill_the_pointing_columns(tmp_path, target):
    def build(out):
        m = attsim.Mission("moving", J, (0.0, 0.0, 0.0), duration=60.0, telemetry_dt=1.0,
                           environment=_orbit_environment(), out_dir=out)
        wheels = _wheels(m, max_torque_Nm=5e-3)
        m.add(attsim.QuaternionPD(kp=5e-4, kd=9e-3, period_s=0.5, wheels=wheels, target=target,
                                  attitude_source=attsim.TRUTH, rate_source=attsim.TRUTH))
        return m

    python, compiled = both_ways(tmp_path, build)
    assert_same_run(python, compiled)
    df = compiled.df
    q_ref = df[["q_ref_w", "q_ref_x", "q_ref_y", "q_ref_z"]].to_numpy()
    expected = np.degrees(rotations.quat_angle_between(df[["qw", "qx", "qy", "qz"]].to_numpy(), q_ref))
    assert np.allclose(df["att_err_deg"], expected, atol=1e-9)


def test_a_target_that_needs_an_orbit_is_refused_without_one(tmp_path):
    m = attsim.Mission("no_orbit", J, (0.0, 0.0, 0.0), duration=5.0, out_dir=tmp_path)
    wheels = _wheels(m)
    m.add(attsim.QuaternionPD(kp=1e-3, kd=1e-2, period_s=1.0, wheels=wheels, target=NadirPointing(),
                              attitude_source=attsim.TRUTH, rate_source=attsim.TRUTH))
    with pytest.raises(attsim.InputError, match="^target: controller 'qpd''s NadirPointing target needs an orbit"):
        m.run()


def pyramid_with_null_space_and_unloading(out):
    from attsim.control.allocation import pyramid_axes

    env = _orbit_environment()
    m = attsim.Mission("pyramid", J, (0.002, -0.001, 0.001), duration=200.0, telemetry_dt=1.0, environment=env,
                       out_dir=out)
    wheels = [m.add(attsim.ReactionWheel(f"rw{k}", axis, 2e-5, 1e-3, 600.0, speed0_rad_s=s0))
              for k, (axis, s0) in enumerate(zip(pyramid_axes(4), (40.0, -10.0, 5.0, 80.0)))]
    tracker = m.add(attsim.StarTracker(2.0))
    gyro = m.add(attsim.Gyro(2.0))
    mag = m.add(attsim.Magnetometer(1.0, name="mag"))
    mtq = m.add(attsim.Magnetorquer(0.2))
    m.add(attsim.QuaternionPD(kp=5e-4, kd=9e-3, period_s=0.5, wheels=wheels, target=NadirPointing(),
                              attitude_source=tracker, rate_source=gyro, null_space_gain_Nm_s=2e-6,
                              wheel_speed_target_rad_s=30.0))
    m.add(attsim.MomentumUnloading(mag, mtq, gain_per_s=0.01, period_s=1.0))
    return m


def test_pyramid_null_space_and_unloading_run_alike(tmp_path):
    python, compiled = both_ways(tmp_path, pyramid_with_null_space_and_unloading)
    assert_same_run(python, compiled)


def wheels_listed_out_of_mission_order(out):
    m = attsim.Mission("reversed", J, (0.05, -0.04, 0.03), duration=30.0, telemetry_dt=0.5, out_dir=out)
    wheels = _wheels(m, max_torque_Nm=1e-4, max_speed_rad_s=50.0)
    # allocation="clip": each wheel clips its own command, so several saturate in one cycle (scaled commands
    # never reach a clip: they stop at the limits)
    m.add(attsim.QuaternionPD(rotations.axis_angle_to_quat([0.3, -0.5, 0.8], 2.0), kp=5e-2, kd=2e-1, period_s=0.5,
                              wheels=wheels[::-1], attitude_source=attsim.TRUTH, rate_source=attsim.TRUTH,
                              allocation="clip"))
    return m


def test_wheel_events_of_one_cycle_come_in_the_controllers_order_on_both_paths(tmp_path):
    # at 0 s all three clip, at 10 s rw_z and rw_x: the QPD commands rw_z first, then rw_y, then rw_x
    python, compiled = both_ways(tmp_path, wheels_listed_out_of_mission_order)
    assert_same_run(python, compiled)
    assert list(compiled.events[compiled.events["t"] == 0.0]["actuator"]) == ["rw_z", "rw_y", "rw_x"]
    assert list(compiled.events[compiled.events["t"] == 10.0]["actuator"]) == ["rw_z", "rw_x"]
