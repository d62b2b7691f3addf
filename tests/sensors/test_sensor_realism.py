"""Sensor realism against references computed here: mounting (misalignment, scale factor, bias), star-tracker
exclusion cones, sun-sensor fields of view, time-tagged faults, and the configuration each refuses.

The references use scipy's Rotation (never attsim.rotations or attsim's kernels); scipy's quaternions are
scalar last, attsim's scalar first.
"""

import math

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import attsim
from attsim.environment import Environment, KeplerOrbit
from attsim.sensors.kernels import gyro_measure, gyro_sample, star_tracker_measure, star_tracker_sample

ARCSEC = math.pi / 180 / 3600
R_EARTH_M = 6378137.0
EPOCH = "2024-03-20T00:00:00"


def rot(q_wxyz) -> Rotation:
    return Rotation.from_quat(np.roll(np.asarray(q_wxyz, dtype=float), -1))


def wxyz(rotation: Rotation) -> np.ndarray:
    q = np.roll(rotation.as_quat(), 1)
    return q if q[0] >= 0 else -q


Q_BS = wxyz(Rotation.from_euler("ZYX", [35.0, -20.0, 110.0], degrees=True))  # a tilted mounting
MISALIGNMENT = np.array([1.5e-3, -2.0e-3, 0.8e-3])  # rad, sensor axes
Q_IB = wxyz(Rotation.from_rotvec([0.4, -0.7, 0.2]))


def at_rest(tmp_path, *sensors, duration=2.0, q0=Q_IB, omega0=(0.0, 0.0, 0.0), **kwargs):
    m = attsim.Mission("realism", np.eye(3), omega0, q0=q0, duration=duration, telemetry_dt=1.0, max_step=0.1,
                       seed=1, out_dir=tmp_path, **kwargs)
    for sensor in sensors:
        m.add(sensor)
    return m.run()


def columns(df, name, axes):
    return df[[f"{name}_{a}" for a in axes]].to_numpy()


# --- mounting -----------------------------------------------------------------------------------------------------

def test_a_mounted_magnetometer_reads_the_corrupted_field(tmp_path):
    B_I, k, bias = np.array([2e-5, -1.5e-5, 3.5e-5]), np.array([2e-3, -1e-3, 5e-4]), np.array([1e-7, -3e-7, 2e-7])
    mag = attsim.Magnetometer(1.0, bias_T=bias, q_BS=Q_BS, misalignment_rad=MISALIGNMENT, scale_factor_error=k)
    df = at_rest(tmp_path, mag, field=B_I).df
    R_IB, R_BS = rot(Q_IB), rot(Q_BS)
    R_BS_true = R_BS * Rotation.from_rotvec(MISALIGNMENT)
    B_B = R_IB.inv().apply(B_I)
    expected = R_BS.apply((1.0 + k) * R_BS_true.inv().apply(B_B) + bias)
    assert np.allclose(columns(df, "mag", "xyz"), expected, rtol=0, atol=1e-18)  # 1e-13 of the field
    assert np.allclose(columns(df, "mag", ["true_x", "true_y", "true_z"]), B_B, rtol=0, atol=1e-18)


def test_a_misaligned_magnetometers_error_is_the_misalignment_angle(tmp_path):
    # a field normal to the misalignment's axis (in body axes) is turned by exactly |δ|
    axis_B = rot(Q_BS).apply(MISALIGNMENT / np.linalg.norm(MISALIGNMENT))
    B_B = 3e-5 * np.cross(axis_B, [0.0, 0.0, 1.0]) / np.linalg.norm(np.cross(axis_B, [0.0, 0.0, 1.0]))
    mag = attsim.Magnetometer(1.0, q_BS=Q_BS, misalignment_rad=MISALIGNMENT)
    df = at_rest(tmp_path, mag, field=rot(Q_IB).apply(B_B)).df
    measured = columns(df, "mag", "xyz")[0]
    truth = columns(df, "mag", ["true_x", "true_y", "true_z"])[0]
    angle = math.atan2(np.linalg.norm(np.cross(measured, truth)), measured @ truth)
    assert angle == pytest.approx(np.linalg.norm(MISALIGNMENT), rel=1e-9)
    assert np.linalg.norm(measured) == pytest.approx(3e-5, rel=1e-12)  # a rotation, no scale


def test_a_mounted_gyro_reads_the_corrupted_rate(tmp_path):
    omega_B, k, bias = np.array([0.02, -0.01, 0.03]), np.array([1e-3, 2e-3, -3e-3]), np.array([1e-4, -2e-4, 5e-5])
    gyro = attsim.Gyro(2.0, bias_rad_s=bias, q_BS=Q_BS, misalignment_rad=MISALIGNMENT, scale_factor_error=k)
    df = at_rest(tmp_path, gyro, omega0=omega_B).df  # a sphere: the rate stays constant in body axes
    R_BS = rot(Q_BS)
    R_BS_true = R_BS * Rotation.from_rotvec(MISALIGNMENT)
    expected = R_BS.apply((1.0 + k) * R_BS_true.inv().apply(omega_B) + bias)
    assert np.allclose(columns(df, "gyro", "xyz"), expected, rtol=0, atol=2e-16)  # 1e-14 of the rate
    assert np.allclose(gyro.bias, R_BS.apply(bias), rtol=0, atol=1e-18)  # the bias an estimator sees, body axes


def test_a_mounted_star_tracker_reports_the_body_attitude_through_the_nominal_mounting(tmp_path):
    beta_arcsec = np.array([20.0, -10.0, 60.0])
    tracker = attsim.StarTracker(1.0, q_BS=Q_BS, misalignment_rad=MISALIGNMENT, bias_arcsec=beta_arcsec)
    df = at_rest(tmp_path, tracker).df
    R_BS = rot(Q_BS)
    expected = rot(Q_IB) * R_BS * Rotation.from_rotvec(MISALIGNMENT) * Rotation.from_rotvec(beta_arcsec * ARCSEC) \
        * R_BS.inv()
    measured = columns(df, "st", ["qw", "qx", "qy", "qz"])
    assert np.all(measured[:, 0] >= 0)
    assert np.allclose(measured, wxyz(expected), rtol=0, atol=1e-14)
    # against the truth the error is the mounting error and the bias turned into body axes (first order)
    error_B = (rot(Q_IB).inv() * rot(measured[0])).as_rotvec()
    assert np.allclose(error_B, R_BS.apply(MISALIGNMENT + beta_arcsec * ARCSEC), rtol=0, atol=1e-6)  # ½|δ × β|


def test_a_mounted_sun_sensor_with_its_own_detectors_and_field_of_view(tmp_path):
    a = np.array([1.0, 1.0, 0.0]) / math.sqrt(2.0)
    b = np.array([-1.0, 1.0, 0.0]) / math.sqrt(2.0)
    c = np.array([0.3, 0.0, 1.0]) / np.linalg.norm([0.3, 0.0, 1.0])  # not orthogonal to a: a skewed trio
    normals_S = np.array([a, -a, b, -b, c, -c])
    k = np.array([0.01, -0.02, 0.03, 0.0, -0.01, 0.02])
    bias = np.array([0.002, 0.001, 0.0, -0.003, 0.004, 0.0])
    fov_deg = 70.0
    sun_I = np.array([0.3, -0.5, 0.81])
    sun_I /= np.linalg.norm(sun_I)
    css = attsim.SunSensor(1.0, sun_inertial=sun_I, q_BS=Q_BS, misalignment_rad=MISALIGNMENT,
                           detector_normals=normals_S, fov_deg=fov_deg, scale_factor_error=k, bias=bias)
    df = at_rest(tmp_path, css).df
    s_B = rot(Q_IB).inv().apply(sun_I)
    R_BS = rot(Q_BS)

    def detectors(normals_B):
        d = normals_B @ s_B
        return np.where(d > math.cos(math.radians(fov_deg)), d, 0.0)

    truth = detectors(R_BS.apply(normals_S))
    signals = detectors((R_BS * Rotation.from_rotvec(MISALIGNMENT)).apply(normals_S))
    expected = np.where(signals != 0.0, np.maximum(0.0, (1.0 + k) * signals + bias), 0.0)
    axes = ("px", "mx", "py", "my", "pz", "mz")
    assert np.allclose(columns(df, "css", axes)[0], expected, rtol=0, atol=1e-15)
    assert np.allclose(columns(df, "css", [f"true_{x}" for x in axes])[0], truth, rtol=0, atol=1e-15)
    # the flight-software estimate from the nominal normals of ideal detectors is the Sun itself
    ideal = attsim.SunSensor(1.0, sun_inertial=sun_I, q_BS=Q_BS, detector_normals=normals_S)
    assert np.allclose(ideal.sun_vector(np.maximum(0.0, R_BS.apply(normals_S) @ s_B)), s_B, rtol=0, atol=1e-14)


def test_a_detector_outside_its_field_of_view_reads_zero(tmp_path):
    # the Sun 70 deg from +x and 20 deg from +z, in body axes: with a 60 deg field of view +x is blind
    sun_B = np.array([math.cos(math.radians(70.0)), 0.0, math.cos(math.radians(20.0))])
    narrow = attsim.SunSensor(1.0, sun_inertial=sun_B, fov_deg=60.0, name="narrow")
    wide = attsim.SunSensor(1.0, sun_inertial=sun_B, name="wide")
    df = at_rest(tmp_path, narrow, wide, q0=(1.0, 0.0, 0.0, 0.0)).df
    assert df["wide_px"].iloc[0] == pytest.approx(math.cos(math.radians(70.0)), abs=1e-15)
    assert df["narrow_px"].iloc[0] == 0.0 and df["narrow_true_px"].iloc[0] == 0.0
    assert df["narrow_pz"].iloc[0] == pytest.approx(math.cos(math.radians(20.0)), abs=1e-15)


def test_default_mounting_leaves_the_bare_models_to_the_bit():
    rng = np.random.default_rng(3)
    identity, zero = (1.0, 0.0, 0.0, 0.0), (0.0, 0.0, 0.0)
    for _ in range(200):
        w, b, n = tuple(rng.normal(size=3) * 0.1), tuple(rng.normal(size=3) * 1e-4), tuple(rng.normal(size=6))
        assert gyro_sample(w, b, 0.1, 1e-5, 1e-7, n, 1e-9, identity, identity, zero, zero) == \
            gyro_measure(w, b, 0.1, 1e-5, 1e-7, n, 1e-9)
        q = tuple(wxyz(Rotation.random(random_state=rng)) * rng.choice([-1.0, 1.0]))
        sigma = (5 * ARCSEC, 5 * ARCSEC, 40 * ARCSEC)
        assert star_tracker_sample(q, sigma, n[:3], identity, identity, zero) == star_tracker_measure(q, sigma, n[:3])


# --- star tracker exclusion -----------------------------------------------------------------------------------------

def sun_at(epoch_jd: float) -> np.ndarray:
    """The Sun's direction, equator and equinox of date, by the Astronomical Almanac's low-precision formula
    (about 0.01 deg)."""
    n = epoch_jd - 2451545.0
    L, g = math.radians((280.460 + 0.9856474 * n) % 360), math.radians((357.528 + 0.9856003 * n) % 360)
    lam = L + math.radians(1.915) * math.sin(g) + math.radians(0.020) * math.sin(2 * g)
    eps = math.radians(23.439 - 4e-7 * n)
    return np.array([math.cos(lam), math.cos(eps) * math.sin(lam), math.sin(eps) * math.sin(lam)])


JD_EPOCH = 2460389.5  # 2024-03-20 00:00 UTC
ALTITUDE_KM, INCLINATION_DEG = 600.0, 97.8


def orbit_environment():
    return Environment(KeplerOrbit.circular(ALTITUDE_KM, INCLINATION_DEG, epoch=EPOCH), field="dipole")


def attitude_pointing(boresight_I, q_BS=(1.0, 0.0, 0.0, 0.0)) -> np.ndarray:
    """A q_IB whose tracker boresight (sensor +z through q_BS) points along ``boresight_I``."""
    z_B = rot(q_BS).apply([0.0, 0.0, 1.0])
    turn, _ = Rotation.align_vectors([boresight_I], [z_B])
    return wxyz(turn)


def direction_at(center, angle_deg, towards):
    """A unit vector ``angle_deg`` from ``center``, turned towards ``towards``."""
    axis = np.cross(center, towards)
    return Rotation.from_rotvec(math.radians(angle_deg) * axis / np.linalg.norm(axis)).apply(center)


@pytest.mark.parametrize("angle_deg, blinded", [(29.0, True), (31.0, False)])
def test_the_tracker_gives_no_attitude_inside_its_sun_exclusion_cone(tmp_path, angle_deg, blinded):
    sun = sun_at(JD_EPOCH)  # the orbit starts on the Sun's side (RAAN 0, argument of latitude 0): in sunlight
    boresight = direction_at(sun, angle_deg, [0.0, 0.0, 1.0])
    tracker = attsim.StarTracker(1.0, q_BS=Q_BS, sun_exclusion_deg=30.0)
    tel = at_rest(tmp_path, tracker, duration=1.0, q0=attitude_pointing(boresight, Q_BS),
                  environment=orbit_environment())
    first = tel.df.iloc[0]
    assert first["lit"] == 1.0
    measured = first[["st_qw", "st_qx", "st_qy", "st_qz"]].to_numpy(dtype=float)
    assert np.all(np.isnan(measured)) == blinded and np.all(np.isfinite(measured)) != blinded
    assert first["st_valid"] == (0.0 if blinded else 1.0)
    assert np.all(np.isfinite(tel.df[["st_true_qw", "st_true_qx", "qw", "wx"]].to_numpy()))


@pytest.mark.parametrize("margin_deg, blinded", [(-1.0, True), (1.0, False)])
def test_the_tracker_gives_no_attitude_near_the_earths_limb(tmp_path, margin_deg, blinded):
    a = R_EARTH_M + ALTITUDE_KM * 1e3
    r = np.array([a, 0.0, 0.0])  # circular, RAAN 0, argument of latitude 0 at the epoch
    limb_deg = math.degrees(math.asin(R_EARTH_M / a))
    nadir = -r / a
    boresight = direction_at(nadir, limb_deg + 20.0 + margin_deg, [0.0, 0.3, 1.0])
    tracker = attsim.StarTracker(1.0, earth_exclusion_deg=20.0)
    tel = at_rest(tmp_path, tracker, duration=1.0, q0=attitude_pointing(boresight), environment=orbit_environment())
    assert tel.df["st_valid"].iloc[0] == (0.0 if blinded else 1.0)
    assert np.isnan(tel.df["st_qw"].iloc[0]) == blinded


# --- faults ---------------------------------------------------------------------------------------------------------

def test_each_fault_acts_at_its_times_and_is_logged(tmp_path):
    jump = np.array([1e-6, -2e-6, 5e-7])
    faults = [attsim.SensorFault(2.0, "bias_jump", 2.0, bias=jump), attsim.SensorFault(5.0, "stuck", 2.0),
              attsim.SensorFault(8.0, "dropout", 1.0), attsim.SensorFault(11.0, "dropout")]
    B_I = np.array([2e-5, -1.5e-5, 3.5e-5])
    run = lambda out, f: at_rest(out, attsim.Magnetometer(1.0, noise_T=1e-8, faults=f), duration=12.0,  # noqa: E731
                                 omega0=(0.05, -0.02, 0.04), field=B_I)
    tel = run(tmp_path / "faults", faults)
    df = tel.df
    measured, truth = columns(df, "mag", "xyz"), columns(df, "mag", ["true_x", "true_y", "true_z"])
    t = df.index.to_numpy()
    error = measured - truth
    normal = (t < 2) | ((t >= 4) & (t < 5)) | ((t >= 9) & (t < 11))
    assert np.all(np.abs(error[normal]) < 6e-8)
    jumped = (t >= 2) & (t < 4)
    assert np.allclose(error[jumped], jump, rtol=0, atol=6e-8)
    stuck = (t >= 5) & (t < 7)
    assert np.array_equal(measured[stuck], np.repeat(measured[t == 4.0], stuck.sum(), axis=0))  # frozen at 4 s
    assert not np.allclose(truth[stuck][0], truth[stuck][1])  # while the field turns in body axes
    gone = ((t >= 8) & (t < 9)) | (t >= 11)
    assert np.all(np.isnan(measured[gone])) and np.all(np.isfinite(measured[~gone]))
    assert np.array_equal(df["mag_valid"].to_numpy(), np.where(gone, 0.0, 1.0))
    assert np.all(np.isfinite(truth))
    events = tel.events[tel.events["kind"].isin(["fault", "fault_end"])]
    assert list(zip(events["t"], events["kind"], events["fault"])) == [
        (2.0, "fault", "bias_jump"), (4.0, "fault_end", "bias_jump"), (5.0, "fault", "stuck"),
        (7.0, "fault_end", "stuck"), (8.0, "fault", "dropout"), (9.0, "fault_end", "dropout"),
        (11.0, "fault", "dropout")]
    assert set(events["sensor"]) == {"mag"} and list(events["index"]) == [0, 0, 1, 1, 2, 2, 3]
    # the sensor's noise goes on under its faults: outside them it reads what it reads without any
    without = columns(run(tmp_path / "clean", ()).df, "mag", "xyz")
    assert np.array_equal(measured[normal], without[normal])


def test_a_stuck_star_tracker_holds_its_last_good_attitude_even_when_blinded(tmp_path):
    sun = sun_at(JD_EPOCH)
    boresight = direction_at(sun, 40.0, [0.0, 0.0, 1.0])
    # turning towards the Sun: blinded from about 20 s (10 deg at 0.5 deg/s), stuck from 5 s to 30 s
    axis = np.cross([0.0, 0.0, 1.0], rot(attitude_pointing(boresight)).inv().apply(sun))
    omega = math.radians(0.5) * axis / np.linalg.norm(axis)
    tracker = attsim.StarTracker(1.0, sun_exclusion_deg=30.0, faults=[attsim.SensorFault(5.0, "stuck", 25.0)])
    df = at_rest(tmp_path, tracker, duration=40.0, q0=attitude_pointing(boresight), omega0=omega,
                 environment=orbit_environment()).df
    q = columns(df, "st", ["qw", "qx", "qy", "qz"])
    t = df.index.to_numpy()
    assert np.array_equal(q[(t >= 5) & (t < 30)], np.repeat(q[t == 4.0], 25, axis=0))
    assert np.all(df["st_valid"].to_numpy()[(t >= 5) & (t < 30)] == 1.0)  # the flight software cannot tell
    assert np.all(np.isnan(q[t >= 30])) and np.all(df["st_valid"].to_numpy()[t >= 30] == 0.0)


# --- bad configuration ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("make, field, rule", [
    (lambda: attsim.SensorFault(1.0, "frozen"), "kind", "must be one of"),
    (lambda: attsim.SensorFault(-1.0, "dropout"), "start_s", ">= 0"),
    (lambda: attsim.SensorFault(1.0, "dropout", 0.0), "duration_s", "> 0"),
    (lambda: attsim.SensorFault(1.0, "dropout", math.inf), "duration_s", "finite"),
    (lambda: attsim.SensorFault(1.0, "bias_jump"), "bias", "is needed for a 'bias_jump'"),
    (lambda: attsim.SensorFault(1.0, "stuck", bias=(1.0, 2.0, 3.0)), "bias", "only for a 'bias_jump'"),
    (lambda: attsim.Gyro(1.0, faults=[attsim.SensorFault(1.0, "bias_jump", bias=(1.0, 2.0))]), "faults[0].bias",
     "must have 3 values for a Gyro"),
    (lambda: attsim.SunSensor(1.0, faults=[attsim.SensorFault(1.0, "bias_jump", bias=(1.0, 2.0, 3.0))]),
     "faults[0].bias", "must have 6 values for a SunSensor"),
    (lambda: attsim.Magnetometer(1.0, faults=["dropout"]), "faults[0]", "must be an attsim.SensorFault"),
    (lambda: attsim.Magnetometer(1.0, misalignment_rad=(0.2, 0.0, 0.0)), "misalignment_rad", "small rotation"),
    (lambda: attsim.Magnetometer(1.0, q_BS=(0.0, 0.0, 0.0, 0.0)), "q_BS", "non-zero quaternion"),
    (lambda: attsim.Gyro(1.0, scale_factor_error=(0.0, -1.0, 0.0)), "scale_factor_error", "> -1"),
    (lambda: attsim.Magnetometer(1.0, scale_factor_error=1e300), "scale_factor_error", "< 1"),
    (lambda: attsim.SunSensor(1.0, scale_factor_error=1.0), "scale_factor_error", "< 1"),
    (lambda: attsim.Gyro(1.0, scale_factor_error=(0.0, 0.1)), "scale_factor_error", "one number or 3"),
    (lambda: attsim.SunSensor(1.0, fov_deg=0.0), "fov_deg", "(0, 90]"),
    (lambda: attsim.SunSensor(1.0, fov_deg=120.0), "fov_deg", "(0, 90]"),
    (lambda: attsim.SunSensor(1.0, detector_normals=np.eye(6, 3)), "detector_normals", "opposite pairs"),
    (lambda: attsim.SunSensor(1.0, detector_normals=[[1, 0, 0], [-1, 0, 0]] * 3), "detector_normals", "span 3D"),
    (lambda: attsim.SunSensor(1.0, bias=(0.1, 0.2)), "bias", "one number or six"),
    (lambda: attsim.StarTracker(1.0, sun_exclusion_deg=180.0), "sun_exclusion_deg", "[0, 180)"),
    (lambda: attsim.StarTracker(1.0, earth_exclusion_deg=-5.0), "earth_exclusion_deg", "[0, 180)"),
    (lambda: attsim.StarTracker(1.0, bias_arcsec=(1.0, 2.0)), "bias_arcsec", "shape (3,)"),
])
def test_bad_sensor_configuration_is_refused_naming_the_field_and_the_rule(make, field, rule):
    with pytest.raises(attsim.InputError) as info:
        make()
    assert info.value.field == field and rule in info.value.rule, str(info.value)


def test_an_exclusion_cone_needs_an_environment(tmp_path):
    m = attsim.Mission("no_env", np.eye(3), (0.0, 0.0, 0.0), duration=1.0, out_dir=tmp_path)
    m.add(attsim.StarTracker(1.0, sun_exclusion_deg=30.0))
    with pytest.raises(attsim.InputError, match="^sun_exclusion_deg: star tracker 'st' needs a mission environment"):
        m.run()
