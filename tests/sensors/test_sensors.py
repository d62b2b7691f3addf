"""Sensor noise models against their parameters, over 10^5 samples taken
through the engine (a controller samples each sensor every cycle)."""

import numpy as np
import pytest

import attsim
from attsim import rotations

N = 100_000  # cycles at k / RATE_HZ for k = 0..N: N + 1 samples, the last at the final instant
RATE_HZ = 100.0


def collect(tmp_path, sensor, field=None, omega0=(0.0, 0.0, 0.0), q0=(1, 0, 0, 0)):
    readings = []
    mission = attsim.Mission("noise", np.eye(3), omega0, q0=q0, duration=N / RATE_HZ, max_step=1.0 / RATE_HZ,
                             telemetry_dt=100.0, out_dir=tmp_path, field=field, seed=7)
    mission.add(sensor)
    mission.add(attsim.FunctionController(lambda t, r: readings.append(r[sensor.name]) or {}, period_s=1.0 / RATE_HZ,
                                          sensors=[sensor]))
    mission.run()
    return np.array(readings)


def test_gyro_white_noise_and_bias(tmp_path):
    arw, bias = 2e-4, np.array([1e-3, -2e-3, 5e-4])
    omega = np.array([0.01, -0.02, 0.03])  # sphere: constant rate
    readings = collect(tmp_path, attsim.Gyro(RATE_HZ, arw_rad_sqrt_s=arw, bias_rad_s=bias), omega0=omega)
    assert readings.shape == (N + 1, 3)
    sigma = arw * np.sqrt(RATE_HZ)  # sigma_v / sqrt(dt)
    error = readings - omega - bias
    assert np.all(np.abs(error.mean(axis=0)) < 5 * sigma / np.sqrt(N))
    assert np.all(np.abs(error.std(axis=0) / sigma - 1) < 5 / np.sqrt(2 * N))


@pytest.mark.parametrize("lag", [1, 100])
def test_gyro_bias_random_walk_grows_as_sqrt_time(tmp_path, lag):
    # Markley-Crassidis: b_k = b_(k-1) + u_k, y_k = (b_k + b_(k-1)) / 2 + v_k with var u = s^2 dt, var v = s^2 dt / 12
    # (no angle random walk here). Then y_(k+m) - y_k = (b_(k+m-1) - b_k) + (u_(k+m) + u_k) / 2 + v_(k+m) - v_k, whose
    # variance is s^2 dt (m - 1 + 1/2 + 1/6) = s^2 dt (m - 1/3): over 1 s (m = 100) the walk's own s^2 (1 s) to 0.3 %.
    sigma_u, dt = 1e-5, 1.0 / RATE_HZ
    readings = collect(tmp_path, attsim.Gyro(RATE_HZ, bias_rw_rad_s_sqrt_s=sigma_u))[1:]  # the first sample has no walk
    increments = readings[lag::lag] - readings[:-lag:lag]  # non-overlapping windows
    expected = sigma_u * np.sqrt(dt * (lag - 1.0 / 3.0))
    n = len(increments)
    # consecutive lag-1 increments share a u and a v: correlation (1/4 - 1/12) / (2/3) = 1/4, which widens the
    # spread of their sample deviation by sqrt(1 + 2 rho^2)
    spread = 5 * np.sqrt((1.0 + 2 * 0.25**2) / (2 * n)) if lag == 1 else 5 / np.sqrt(2 * n)
    assert np.all(np.abs(increments.std(axis=0) / expected - 1) < spread)
    assert np.all(np.abs(increments.mean(axis=0)) < 5 * expected / np.sqrt(n))


def run_gyro_read_by_controller(tmp_path, gyro, read_period_s, duration_s, seed=11):
    """The gyro read by a controller every ``read_period_s``: (times, readings, bias after each read)."""
    times, readings, biases = [], [], []

    def record(t, r):
        times.append(t)
        readings.append(r[gyro.name].copy())
        biases.append(gyro.bias.copy())
        return {}

    mission = attsim.Mission("gyro", np.eye(3), (0.01, -0.02, 0.03), duration=duration_s, max_step=1.0,
                             telemetry_dt=duration_s, out_dir=tmp_path, seed=seed)
    mission.add(gyro)
    mission.add(attsim.FunctionController(record, period_s=read_period_s, sensors=[gyro]))
    mission.run()
    return np.array(times), np.array(readings), np.array(biases)


@pytest.mark.parametrize("read_period_s", [0.1, 1.0], ids=["read-at-10Hz", "read-at-1Hz"])
def test_gyro_bias_walk_is_a_process_in_time_not_in_reads(tmp_path, read_period_s):
    # the audit's gyro: 10 Hz, sigma_u = 3e-5 rad/s/sqrt(s). Whether a controller reads it every 0.1 s or
    # every 1 s, the bias moves by sigma_u^2 * 1 s in variance over each second.
    sigma_u, duration_s = 3e-5, 3000.0
    gyro = attsim.Gyro(rate_hz=10.0, bias_rw_rad_s_sqrt_s=sigma_u)
    times, _, biases = run_gyro_read_by_controller(tmp_path, gyro, read_period_s, duration_s)
    per_second = biases[np.isclose(times % 1.0, 0.0, atol=1e-9) | np.isclose(times % 1.0, 1.0, atol=1e-9)]
    increments = np.diff(per_second, axis=0).ravel()  # three independent axes pooled
    n = increments.size
    assert n >= 3 * (duration_s - 1)
    variance_ratio = np.mean(increments**2) / (sigma_u**2 * 1.0)
    assert abs(variance_ratio - 1.0) < 5.0 * np.sqrt(2.0 / n), variance_ratio
    assert abs(increments.mean()) < 5.0 * sigma_u / np.sqrt(n)


@pytest.mark.parametrize("read_period_s", [0.1, 1.0], ids=["read-at-10Hz", "read-at-1Hz"])
def test_gyro_white_noise_follows_the_time_between_reads(tmp_path, read_period_s):
    # ω_m - ω - ½ (b_(k+1) + b_k) ~ N(0, σ_v²/Δt + σ_u² Δt/12); σ_u is large here so both terms show
    sigma_v, sigma_u, duration_s = 1e-4, 1e-3, 1000.0 if read_period_s == 0.1 else 10000.0
    omega = np.array([0.01, -0.02, 0.03])  # a sphere: the rate stays constant
    gyro = attsim.Gyro(rate_hz=10.0, arw_rad_sqrt_s=sigma_v, bias_rw_rad_s_sqrt_s=sigma_u)
    times, readings, biases = run_gyro_read_by_controller(tmp_path, gyro, read_period_s, duration_s)
    # the first read has no elapsed time: no bias step, white noise of one nominal 0.1 s sample
    assert np.array_equal(biases[0], np.zeros(3))
    error = (readings[1:] - omega - 0.5 * (biases[1:] + biases[:-1])).ravel()
    n = error.size
    variance = sigma_v**2 / read_period_s + sigma_u**2 * read_period_s / 12.0
    assert abs(np.mean(error**2) / variance - 1.0) < 5.0 * np.sqrt(2.0 / n), np.mean(error**2) / variance
    assert abs(error.mean()) < 5.0 * np.sqrt(variance / n)


def test_gyro_noise_is_deterministic_for_a_seed(tmp_path):
    make = lambda: attsim.Gyro(rate_hz=10.0, arw_rad_sqrt_s=1e-4, bias_rw_rad_s_sqrt_s=1e-5)  # noqa: E731
    a = run_gyro_read_by_controller(tmp_path / "a", make(), 1.0, 50.0, seed=5)
    b = run_gyro_read_by_controller(tmp_path / "b", make(), 1.0, 50.0, seed=5)
    c = run_gyro_read_by_controller(tmp_path / "c", make(), 1.0, 50.0, seed=6)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert not np.array_equal(a[1], c[1])


def test_magnetometer_noise_bias_and_quantisation(tmp_path):
    B = np.array([2e-5, -1e-5, 3e-5])
    noise, bias = 1e-7, np.array([5e-8, 0.0, -2e-7])
    readings = collect(tmp_path, attsim.Magnetometer(RATE_HZ, noise_T=noise, bias_T=bias), field=B)
    error = readings - B - bias
    assert np.all(np.abs(error.mean(axis=0)) < 5 * noise / np.sqrt(N))
    assert np.all(np.abs(error.std(axis=0) / noise - 1) < 5 / np.sqrt(2 * N))
    quantised = collect(tmp_path / "q", attsim.Magnetometer(RATE_HZ, noise_T=noise, quantization_T=5e-8), field=B)
    assert np.allclose(quantised / 5e-8, np.round(quantised / 5e-8), rtol=0, atol=1e-9)


def test_star_tracker_attitude_noise(tmp_path):
    sigma_arcsec = np.array([5.0, 5.0, 40.0])
    q0 = rotations.axis_angle_to_quat([1, 2, 3], 0.7)
    readings = collect(tmp_path, attsim.StarTracker(RATE_HZ, noise_arcsec=sigma_arcsec), q0=q0)
    error = rotations.quat_to_rotvec(rotations.quat_multiply(rotations.quat_conjugate(q0), readings))
    sigma = np.radians(sigma_arcsec / 3600)
    assert np.all(np.abs(error.std(axis=0) / sigma - 1) < 5 / np.sqrt(2 * N))
    assert np.all(np.abs(error.mean(axis=0)) < 5 * sigma / np.sqrt(N))


def test_sun_sensor_faces_and_eclipse(tmp_path):
    sun = np.array([0.6, 0.0, 0.8])
    css = attsim.SunSensor(10.0, sun_inertial=sun, eclipse=lambda t: t >= 5.0)
    mission = attsim.Mission("css", np.eye(3), (0, 0, 0), duration=10.0, out_dir=tmp_path)
    mission.add(css)
    tel = mission.run()
    lit = tel.df.loc[4.0, ["css_px", "css_mx", "css_py", "css_my", "css_pz", "css_mz"]].to_numpy()
    assert np.allclose(lit, [0.6, 0, 0, 0, 0.8, 0], rtol=0, atol=1e-15)
    assert np.allclose(css.sun_vector(lit), sun)
    assert not np.any(tel.df.loc[6.0, ["css_px", "css_pz"]].to_numpy())
    assert np.all(np.isnan(css.sun_vector(np.zeros(6))))


@pytest.mark.parametrize(
    "sun, eclipse, pattern",
    [
        (lambda t: (np.nan, 0.0, 1.0) if t >= 2.0 else (0.0, 0.0, 1.0), None,
         r"^sun_inertial: callable must return finite values \(at t = 2\.0 s"),
        (lambda t: (0.6, 0.0, 0.9), None,
         r"^sun_inertial: callable must return a unit vector \(at t = 0(\.0)? s \|s\| = 1\.08"),
        (lambda t: "001", None, r"^sun_inertial: callable must return finite numbers of shape \(3,\)"),
        (lambda t: (0.0, 0.0, 1.0), lambda t: "no", r"^eclipse: callable must return True or False \(at t = 0(\.0)? s"),
    ],
)
def test_sun_sensor_callables_are_checked_where_they_enter_the_run(tmp_path, sun, eclipse, pattern):
    # unchecked, a NaN or a non-unit Sun direction filled the telemetry with NaN or wrong currents
    mission = attsim.Mission("css", np.eye(3), (0.0, 0.0, 0.1), duration=5.0, out_dir=tmp_path)
    mission.add(attsim.SunSensor(1.0, sun_inertial=sun, eclipse=eclipse))
    with pytest.raises(attsim.InputError, match=pattern):
        mission.run()
    tel = attsim.load(tmp_path)
    assert tel.partial and tel.meta["stopped"].startswith("InputError: ")
