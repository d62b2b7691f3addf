"""The MEKF component in a mission: convergence against the truth, controllers following it, bad configuration."""

import numpy as np
import pytest

import attsim
from attsim import rotations
from attsim.environment import Environment, KeplerOrbit

J = np.diag([0.06, 0.055, 0.02])


def _angle_deg(q_a, q_b):
    return np.degrees(rotations.quat_angle_between(np.asarray(q_a), np.asarray(q_b)))


def _tracking_mission(out_dir, duration_s=300.0, **mekf_options):
    m = attsim.Mission("mekf_track", J, (0.01, -0.02, 0.015), duration=duration_s, telemetry_dt=1.0, seed=4,
                       out_dir=out_dir)
    gyro = m.add(attsim.Gyro(10.0, arw_rad_sqrt_s=1e-5, bias_rad_s=(2e-4, -1e-4, 3e-4), bias_rw_rad_s_sqrt_s=1e-7))
    tracker = m.add(attsim.StarTracker(1.0, noise_arcsec=(10.0, 10.0, 40.0)))
    m.add(attsim.MEKF(gyro, star_tracker=tracker, **mekf_options))
    return m


def test_the_estimate_converges_to_the_truth_and_the_bias(tmp_path):
    tel = _tracking_mission(tmp_path).run()
    df = tel.df
    late = df.index >= 100.0
    q_est = df[[f"mekf_{c}" for c in ("qw", "qx", "qy", "qz")]].to_numpy()
    error_deg = _angle_deg(q_est, df[["qw", "qx", "qy", "qz"]].to_numpy())
    sigma3_deg = np.degrees(df[[f"mekf_sigma3_att_{a}" for a in "xyz"]].to_numpy()).max(axis=1)
    assert error_deg[late].max() < 0.01  # 10-40 arcsec tracker: errors of a few arcsec
    assert np.mean(error_deg[late] < sigma3_deg[late]) > 0.95  # inside the filter's own 3 sigma
    bias_est = df[[f"mekf_bias_{a}" for a in "xyz"]].to_numpy()[-1]
    assert np.allclose(bias_est, (2e-4, -1e-4, 3e-4), atol=2e-5)
    assert np.isfinite(df["mekf_nis_st"].dropna()).all() and df["mekf_nis_st"].notna().sum() >= 290


def test_a_controller_points_from_the_estimate(tmp_path):
    target = rotations.axis_angle_to_quat([0.3, -0.5, 0.8], np.radians(30.0))
    m = attsim.Mission("mekf_point", J, (0.0, 0.0, 0.0), duration=400.0, telemetry_dt=1.0, seed=2, out_dir=tmp_path)
    wheels = [m.add(attsim.ReactionWheel(f"rw_{a}", d, 2e-5, 2e-3, 600.0)) for a, d in zip("xyz", np.eye(3))]
    gyro = m.add(attsim.Gyro(10.0, arw_rad_sqrt_s=1e-5, bias_rad_s=(5e-4, -5e-4, 2e-4)))
    tracker = m.add(attsim.StarTracker(2.0, noise_arcsec=5.0))
    mekf = m.add(attsim.MEKF(gyro, star_tracker=tracker))
    m.add(attsim.QuaternionPD(target, kp=5e-4, kd=9e-3, period_s=0.5, wheels=wheels, attitude_source=mekf,
                              rate_source=mekf))
    df = m.run().df
    error_deg = _angle_deg(df[["qw", "qx", "qy", "qz"]].to_numpy(), target)
    assert error_deg[df.index >= 300.0].max() < 0.05  # 5 arcsec tracker, 10 Hz gyro: a few hundredths of a degree
    # with the raw gyro as the rate source the bias would leave a standing error: the estimate removed it
    assert np.abs(df[[f"mekf_bias_{a}" for a in "xyz"]].to_numpy()[-1] - (5e-4, -5e-4, 2e-4)).max() < 2e-5


def test_vectors_alone_estimate_the_attitude_with_an_environment(tmp_path):
    env = Environment(KeplerOrbit.circular(550.0, 97.6), field="dipole")
    m = attsim.Mission("mekf_vectors", J, (0.002, -0.001, 0.003), duration=600.0, telemetry_dt=2.0, seed=9,
                       environment=env, out_dir=tmp_path)
    gyro = m.add(attsim.Gyro(5.0, arw_rad_sqrt_s=2e-5, bias_rad_s=(1e-4, 0.0, -1e-4)))
    mag = m.add(attsim.Magnetometer(1.0, noise_T=2e-7))
    css = m.add(attsim.SunSensor(1.0, noise=0.01))
    q0 = rotations.axis_angle_to_quat([1.0, 1.0, 0.0], np.radians(3.0))  # a 3 degree initial error
    m.add(attsim.MEKF(gyro, magnetometer=mag, sun_sensor=css, q0=q0, magnetometer_noise_T=5e-7))
    df = m.run().df
    q_est = df[[f"mekf_{c}" for c in ("qw", "qx", "qy", "qz")]].to_numpy()
    error_deg = _angle_deg(q_est, df[["qw", "qx", "qy", "qz"]].to_numpy())
    lit = df["lit"].to_numpy() == 1.0
    assert 0.1 < error_deg[0] < 3.0  # the row at t = 0 is after the first cycle: its updates pulled the start in
    assert error_deg[(df.index >= 300.0) & lit].max() < 1.0


def test_an_outlier_is_logged_and_rejected(tmp_path):
    m = _tracking_mission(tmp_path, duration_s=30.0, star_tracker_noise_arcsec=0.5)  # the filter trusts it too much
    tel = m.run()
    outliers = tel.events[tel.events["kind"] == "outlier"] if len(tel.events) else []
    assert len(outliers) > 0 and set(outliers["measurement"]) == {"star_tracker"}


@pytest.mark.parametrize("build, rule", [
    (lambda g, st, mag: attsim.MEKF(g), "^measurements: an estimator needs at least one attitude measurement"),
    (lambda g, st, mag: attsim.MEKF(None, star_tracker=st), "^gyro: is needed"),
    (lambda g, st, mag: attsim.MEKF(g, magnetometer=mag), "^q0: is needed without a star tracker"),
    (lambda g, st, mag: attsim.MEKF(g, magnetometer=mag, q0=(1, 0, 0, 0)), "^magnetometer_noise_T: must be > 0"),
    (lambda g, st, mag: attsim.MEKF(st, star_tracker=st), "^gyro: must be an attsim.Gyro"),
    (lambda g, st, mag: attsim.MEKF(g, star_tracker=st, gate=-1.0), "^gate: "),
    (lambda g, st, mag: attsim.MEKF(attsim.Gyro(10.0), star_tracker=st), "^gyro_arw_rad_sqrt_s: must be > 0"),
    (lambda g, st, mag: attsim.MEKF(g, star_tracker=st, gyro_arw_rad_sqrt_s=0.0), "^gyro_arw_rad_sqrt_s: must be > 0"),
])
def test_bad_configuration_is_refused_naming_the_rule(build, rule):
    g, st, mag = attsim.Gyro(10.0, arw_rad_sqrt_s=1e-5), attsim.StarTracker(1.0, noise_arcsec=5.0), \
        attsim.Magnetometer(1.0)
    with pytest.raises(attsim.InputError, match=rule):
        build(g, st, mag)


def test_a_tracker_off_the_gyro_grid_is_refused(tmp_path):
    m = attsim.Mission("grid", J, (0.0, 0.0, 0.0), duration=5.0, out_dir=tmp_path)
    gyro = m.add(attsim.Gyro(10.0, arw_rad_sqrt_s=1e-5))
    tracker = m.add(attsim.StarTracker(3.0, noise_arcsec=5.0))  # 1/3 s is not a multiple of 0.1 s
    m.add(attsim.MEKF(gyro, star_tracker=tracker))
    with pytest.raises(attsim.InputError, match="^star_tracker: must sample on the gyro's times"):
        m.run()


def test_a_noise_free_gyro_needs_the_filters_process_noise(tmp_path):
    # a tumbling body and a perfect gyro: the propagation still errs (the rate is sampled), so with Q = 0 the
    # covariance collapses below the real error and good star-tracker samples are rejected as outliers
    m = attsim.Mission("perfect_gyro", J, (0.05, -0.08, 0.04), duration=600.0, telemetry_dt=5.0, seed=3,
                       out_dir=tmp_path)
    gyro = m.add(attsim.Gyro(5.0, bias_rad_s=(3e-4, -2e-4, 1e-4)))
    tracker = m.add(attsim.StarTracker(1.0, noise_arcsec=(5.0, 5.0, 30.0)))
    with pytest.raises(attsim.InputError, match="^gyro_arw_rad_sqrt_s: must be > 0"):
        attsim.MEKF(gyro, star_tracker=tracker)
    m.add(attsim.MEKF(gyro, star_tracker=tracker, gyro_arw_rad_sqrt_s=1e-5))
    events = m.run().events
    assert len(events) == 0 or (events["kind"] == "outlier").sum() <= 3  # of 600 samples


def _field_mission(out_dir, shared: bool, compiled: bool):
    """A magnetometer at 1 Hz, the first component (so its noise generator is the same in every variant): read by
    an MEKF and a B-dot law (``shared``), or running alone."""
    env = Environment(KeplerOrbit.circular(500.0, 97.0), field="dipole")
    m = attsim.Mission("shared", J, (0.02, -0.03, 0.01), duration=60.0, telemetry_dt=1.0, seed=5, out_dir=out_dir,
                       environment=env)
    mag = m.add(attsim.Magnetometer(1.0, noise_T=2e-7))
    if shared:
        gyro = m.add(attsim.Gyro(10.0, arw_rad_sqrt_s=1e-5))
        mtq = m.add(attsim.Magnetorquer(0.2))
        m.add(attsim.MEKF(gyro, magnetometer=mag, q0=(1.0, 0.0, 0.0, 0.0)))
        m.add(attsim.BDot(mag, mtq, gain=1e4, period_s=1.0))
    return m.run(compiled=compiled)


@pytest.mark.parametrize("compiled", [False, True])
def test_a_sensor_read_by_an_estimator_and_a_controller_is_sampled_once_an_instant(tmp_path, compiled):
    # the error of each sample (measurement - truth) is the sensor's own noise draw whatever the body does: read
    # by two components at the same instants, the sensor must draw exactly what it draws running alone
    shared = _field_mission(tmp_path / "shared", True, compiled).df
    alone = _field_mission(tmp_path / "alone", False, compiled).df
    error = [df[[f"mag_{a}" for a in "xyz"]].to_numpy() - df[[f"mag_true_{a}" for a in "xyz"]].to_numpy()
             for df in (shared, alone)]
    assert np.all(np.isfinite(error[0])) and np.abs(error[0]).max() > 1e-7  # real noise, sampled at every row
    np.testing.assert_allclose(error[0], error[1], rtol=0, atol=1e-15)
    assert not np.allclose(shared["mag_true_x"], alone["mag_true_x"])  # the B-dot did act: not the same run


def _triad_mission(out_dir, mean_anomaly_deg, noise: bool, duration_s=400.0, controller=False):
    """A field and Sun MEKF with no star tracker and no q0: it starts from TRIAD (sun-synchronous-like orbit;
    at a mean anomaly of 240 deg the run starts in the Earth's shadow and leaves it at about 130 s)."""
    orbit = KeplerOrbit.circular(500.0, 97.0, mean_anomaly_deg=mean_anomaly_deg, epoch="2025-03-20T12:00:00")
    m = attsim.Mission("triad_start", J, (0.01, -0.02, 0.015), duration=duration_s, telemetry_dt=1.0, seed=8,
                       out_dir=out_dir, environment=Environment(orbit, field="dipole"))
    gyro = m.add(attsim.Gyro(1.0, arw_rad_sqrt_s=1e-5 if noise else 0.0))
    mag = m.add(attsim.Magnetometer(1.0, noise_T=5e-8 if noise else 0.0))
    css = m.add(attsim.SunSensor(1.0, noise=0.005 if noise else 0.0))
    mekf = m.add(attsim.MEKF(gyro, magnetometer=mag, sun_sensor=css, sigma_attitude0_deg=2.0,
                             gyro_arw_rad_sqrt_s=1e-5, magnetometer_noise_T=5e-8, sun_noise=0.007))
    if controller:
        mtq = m.add(attsim.Magnetorquer(0.1))
        m.add(attsim.QuaternionPD((1.0, 0.0, 0.0, 0.0), kp=1e-6, kd=1e-4, period_s=1.0, magnetorquer=mtq,
                                  magnetometer=mag, attitude_source=mekf, rate_source=mekf))
    return m


@pytest.mark.parametrize("compiled", [False, True])
def test_without_a_star_tracker_the_filter_starts_from_triad_on_the_field_and_the_sun(tmp_path, compiled):
    df = _triad_mission(tmp_path, 0.0, noise=False, duration_s=20.0).run(compiled=compiled).df
    q_est = df[[f"mekf_{c}" for c in ("qw", "qx", "qy", "qz")]].to_numpy()
    # noise-free vectors: TRIAD gives the true attitude at the first cycle, to round-off
    assert _angle_deg(q_est[0], df[["qw", "qx", "qy", "qz"]].to_numpy()[0]) < 1e-9
    assert _angle_deg(q_est, df[["qw", "qx", "qy", "qz"]].to_numpy()).max() < 1e-3


@pytest.mark.parametrize("compiled", [False, True])
def test_a_filter_starting_in_eclipse_has_no_estimate_until_the_sun_and_its_controller_holds(tmp_path, compiled):
    tel = _triad_mission(tmp_path, 240.0, noise=True, controller=True).run(compiled=compiled)
    df = tel.df
    dark = df["lit"].to_numpy() == 0.0
    first_lit = df.index[~dark][0]
    assert 60.0 < first_lit < 300.0  # the orbit really starts in shadow
    q_est = df[[f"mekf_{c}" for c in ("qw", "qx", "qy", "qz")]]
    assert q_est[df.index < first_lit].isna().all().all()  # no estimate rather than a made-up one
    started = q_est.notna().all(axis=1)
    assert started.any() and df.index[started.to_numpy()][0] == first_lit  # the first lit cycle starts it
    later = df.index >= first_lit + 60.0
    error_deg = _angle_deg(q_est.to_numpy()[later], df[["qw", "qx", "qy", "qz"]].to_numpy()[later])
    assert error_deg.max() < 2.0  # coarse sun sensors and a magnetometer: about a degree
    dipole = df[[f"mtq_m_{a}" for a in "xyz"]].to_numpy()
    assert np.all(dipole[df.index < first_lit] == 0.0)  # nothing to act on: the law held its (zero) commands
    assert np.abs(dipole[later]).max() > 0.0
    assert np.isfinite(dipole).all()


def test_a_filter_without_star_tracker_or_q0_needs_the_field_and_the_sun(tmp_path):
    m = attsim.Mission("no_start", J, (0.0, 0.0, 0.0), duration=5.0, out_dir=tmp_path)
    gyro = m.add(attsim.Gyro(1.0, arw_rad_sqrt_s=1e-5))
    mag = m.add(attsim.Magnetometer(1.0, noise_T=5e-8))
    with pytest.raises(attsim.InputError, match="^q0: is needed without a star tracker unless a magnetometer and a "
                                                "sun sensor"):
        attsim.MEKF(gyro, magnetometer=mag)


def test_a_triad_start_needs_the_field_and_the_sun_measured_on_a_common_cycle(tmp_path):
    orbit = KeplerOrbit.circular(500.0, 97.0)
    m = attsim.Mission("apart", J, (0.0, 0.0, 0.0), duration=5.0, out_dir=tmp_path,
                       environment=Environment(orbit, field="dipole"))
    gyro = m.add(attsim.Gyro(10.0, arw_rad_sqrt_s=1e-5))
    mag = m.add(attsim.Magnetometer(5.0, noise_T=5e-8))                 # cycles 0, 2, 4, ...
    css = m.add(attsim.SunSensor(5.0, noise=0.01, phase_s=0.1))         # cycles 1, 3, 5, ...
    m.add(attsim.MEKF(gyro, magnetometer=mag, sun_sensor=css))
    with pytest.raises(attsim.InputError, match="^sun_sensor: must sample at some of the magnetometer's times"):
        m.run()


def test_the_filter_survives_a_star_tracker_dropout(tmp_path):
    # 60 s without the tracker: the filter propagates on the gyro, its attitude covariance grows all through the
    # gap, no update is made (NIS NaN) and none is rejected, and it converges again after
    m = attsim.Mission("dropout", J, (0.01, -0.02, 0.015), duration=300.0, telemetry_dt=1.0, seed=4, out_dir=tmp_path)
    gyro = m.add(attsim.Gyro(10.0, arw_rad_sqrt_s=1e-5, bias_rad_s=(2e-4, -1e-4, 3e-4), bias_rw_rad_s_sqrt_s=1e-7))
    tracker = m.add(attsim.StarTracker(1.0, noise_arcsec=(10.0, 10.0, 40.0),
                                       faults=[attsim.SensorFault(100.0, "dropout", 60.0)]))
    m.add(attsim.MEKF(gyro, star_tracker=tracker))
    tel = m.run()
    df, t = tel.df, tel.df.index.to_numpy()
    gap = (t >= 100.0) & (t < 160.0)
    sigma3 = df[[f"mekf_sigma3_att_{a}" for a in "xyz"]].to_numpy()
    assert np.all(np.diff(sigma3[gap], axis=0) > 0)  # grows at every second of the gap
    assert np.all(sigma3[t == 159.0] > 2 * sigma3[t == 99.0])
    assert df.loc[gap, "mekf_nis_st"].isna().all() and df.loc[~gap & (t >= 1.0), "mekf_nis_st"].notna().all()
    assert np.all(df.loc[gap, "st_valid"] == 0.0) and np.all(df.loc[~gap, "st_valid"] == 1.0)
    assert len(tel.events) == 0 or not (tel.events["kind"] == "outlier").any()  # the first sample after is no outlier
    q_est = df[[f"mekf_{c}" for c in ("qw", "qx", "qy", "qz")]].to_numpy()
    error_deg = _angle_deg(q_est, df[["qw", "qx", "qy", "qz"]].to_numpy())
    assert np.all(error_deg[gap] < np.degrees(sigma3[gap].max(axis=1)))  # drifted, inside its own bound
    assert error_deg[t >= 200.0].max() < 0.01 and np.all(sigma3[t == 299.0] < 1.2 * sigma3[t == 99.0])
