"""Guidance targets against geometry computed here by other means.

Orbits come from scipy's ``solve_ivp`` on the two-body equation; the Earth's
rotation from a hand-written ``R3(-GMST)``; rates from finite differences of
the reference attitude (``ω = 2 vec(q* ⊗ q̇)``), accelerations from finite
differences of the rate; the slew's end from integrating ``q̇ = ½ q ⊗ ω``."""

import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.optimize import brentq

from attsim import guidance, rotations
from attsim.guidance import kernels as guidance_kernels
from attsim.constants import MU_EARTH_M3_S2, OMEGA_EARTH_RAD_S, R_EARTH_M, WGS84_E2
from attsim.environment import frames, sun
from attsim.errors import InputError

from tests.conftest import random_quaternions


def unit(v):
    return np.asarray(v, dtype=float) / np.linalg.norm(v, axis=-1, keepdims=True)


def two_body(r0, v0, t_span, **kw):
    """Dense two-body solution from ``(r0, v0)`` at ``t_span[0]``: ``state(t) -> (r, v)``."""
    def f(_, y):
        r = y[:3]
        return np.concatenate([y[3:], -MU_EARTH_M3_S2 * r / np.linalg.norm(r) ** 3])
    sol = solve_ivp(f, t_span, np.concatenate([r0, v0]), method="DOP853", rtol=1e-13, atol=1e-9, dense_output=True,
                    **kw)
    return lambda t: (sol.sol(t)[:3].T, sol.sol(t)[3:].T)


def kepler_state(a_m, e, nu, inc, raan, argp):
    """ECI position and velocity from classical elements (perifocal formulas, Vallado alg. 10)."""
    p = a_m * (1 - e * e)
    r_pf = p / (1 + e * math.cos(nu)) * np.array([math.cos(nu), math.sin(nu), 0.0])
    v_pf = math.sqrt(MU_EARTH_M3_S2 / p) * np.array([-math.sin(nu), e + math.cos(nu), 0.0])
    rot = rotations.euler321_to_dcm(np.array([raan, 0.0, 0.0])) @ rotations.euler321_to_dcm(
        np.array([0.0, 0.0, inc])) @ rotations.euler321_to_dcm(np.array([argp, 0.0, 0.0]))
    return rot @ r_pf, rot @ v_pf


def rate_from_attitudes(q_minus, q_plus, q0, h):
    """``ω = 2 vec(q* ⊗ q̇)`` with ``q̇`` by central differences (signs aligned with ``q0``)."""
    q_minus = q_minus * np.sign(np.dot(q_minus, q0))
    q_plus = q_plus * np.sign(np.dot(q_plus, q0))
    return 2.0 * rotations.quat_multiply(rotations.quat_conjugate(q0), (q_plus - q_minus) / (2 * h))[1:]


def rotate_about(q, v):
    return rotations.quat_rotate(q, v)


# --- nadir ------------------------------------------------------------------------------------------------------------

ELLIPTIC = kepler_state(7500e3, 0.1, 0.7, math.radians(51.6), 0.4, 1.1)


@pytest.mark.parametrize("nu", [0.0, 0.7, 2.5, 4.0])
def test_nadir_geometry_and_default_lvlh(nu):
    r, v = kepler_state(7500e3, 0.1, nu, math.radians(51.6), 0.4, 1.1)
    a, c = unit([1.0, 2.0, -0.5]), unit([0.3, -1.0, 2.0])
    q = guidance.NadirPointing(a, c).reference_at(0.0, r, v).q_IR
    np.testing.assert_allclose(rotate_about(q, a), -unit(r), atol=1e-15)
    h_hat = unit(np.cross(r, v))
    c_I = rotate_about(q, c)
    assert abs(np.dot(c_I, h_hat)) < 1e-15  # in the (r, v) plane
    v_perp = v - np.dot(v, unit(r)) * unit(r)
    assert np.dot(c_I, v_perp) > 0.0  # on the side of the velocity
    lvlh = guidance.NadirPointing().reference_at(0.0, r, v).q_IR
    assert rotations.quat_angle_between(lvlh, frames.lvlh_quaternion(r, v)) < 1e-15


@pytest.mark.parametrize("t", [0.0, 900.0, 2500.0, 4000.0])
def test_nadir_rate_and_acceleration_on_an_elliptic_orbit(t):
    state = two_body(*ELLIPTIC, (-10.0, 4100.0))
    target = guidance.NadirPointing(unit([1.0, 2.0, -0.5]), unit([0.3, -1.0, 2.0]))
    h = 0.05
    (rm, r0, rp), (vm, v0, vp) = state(np.array([t - h, t, t + h]))
    ref = target.reference_at(t, r0, v0)
    q_m, q_p = (target.reference_at(t, r_, v_).q_IR for r_, v_ in ((rm, vm), (rp, vp)))
    omega_fd = rate_from_attitudes(q_m, q_p, ref.q_IR, h)
    # the differences' own error is ~ (ω h)² / 12 ~ 2e-10 relative here (it shrinks as h², measured)
    np.testing.assert_allclose(ref.omega_R_rad_s, omega_fd, rtol=0, atol=2e-9 * np.linalg.norm(omega_fd))
    w_m, w_p = (target.reference_at(t, r_, v_).omega_R_rad_s for r_, v_ in ((rm, vm), (rp, vp)))
    wdot_fd = (w_p - w_m) / (2 * h)
    assert np.linalg.norm(wdot_fd) > 1e-8  # an elliptic orbit: the rate changes
    np.testing.assert_allclose(ref.omegadot_R_rad_s2, wdot_fd, rtol=0, atol=1e-8 * np.linalg.norm(wdot_fd))


# --- Sun pointing -----------------------------------------------------------------------------------------------------

JD = 2460500.25
ECLIPTIC_POLE = np.array([0.0, -math.sin(math.radians(23.439)), math.cos(math.radians(23.439))])


def test_sun_pointing_geometry():
    a, c, n = unit([0.0, 0.0, 1.0]), unit([1.0, 1.0, 0.0]), unit([0.2, 0.3, 1.0])
    target = guidance.SunPointing(a, c, n)
    for jd in JD + np.array([0.0, 50.0, 120.0, 250.0]):
        s = sun.sun_direction_eci(jd)
        q = target.reference_at(0.0, s_I=s).q_IR
        np.testing.assert_allclose(rotate_about(q, a), s, atol=1e-15)
        c_I = rotate_about(q, c)
        assert abs(np.dot(c_I, unit(np.cross(s, n)))) < 1e-15  # in the plane of the Sun and the secondary
        assert np.dot(c_I, n - np.dot(n, s) * s) > 0.0  # on its side


def test_sun_pointing_rate_against_the_ephemeris_and_the_mean_motion():
    target = guidance.SunPointing([1.0, 0.0, 0.0], [0.0, 1.0, 0.0], ECLIPTIC_POLE)
    h = 600.0
    for jd in JD + np.array([0.0, 90.0, 200.0]):
        s_m, s0, s_p = sun.sun_direction_eci(jd + np.array([-h, 0.0, h]) / 86400.0)
        ref = target.reference_at(0.0, s_I=s0)
        q_m, q_p = (target.reference_at(0.0, s_I=s).q_IR for s in (s_m, s_p))
        # the ephemeris' Sun moves at its true rate, up to 3.4 % off the mean motion the target assumes
        omega_fd = rate_from_attitudes(q_m, q_p, ref.q_IR, h)
        assert 1.9e-7 < np.linalg.norm(omega_fd) < 2.1e-7
        np.testing.assert_allclose(ref.omega_R_rad_s, omega_fd, rtol=0, atol=0.04 * np.linalg.norm(omega_fd))
        # with the Sun turned at the mean motion about the ecliptic pole (written here), to the differences' error
        turn = rotations.axis_angle_to_quat(ECLIPTIC_POLE, np.array([-h, h]) * 0.9856474 * math.pi / 180 / 86400)
        s_mean = rotate_about(turn, s0)
        q_m, q_p = (target.reference_at(0.0, s_I=s).q_IR for s in s_mean)
        omega_mean = rate_from_attitudes(q_m, q_p, ref.q_IR, h)
        np.testing.assert_allclose(ref.omega_R_rad_s, omega_mean, rtol=0, atol=1e-6 * np.linalg.norm(omega_mean))
        w_m, w_p = (target.reference_at(0.0, s_I=s).omega_R_rad_s for s in s_mean)
        np.testing.assert_allclose(ref.omegadot_R_rad_s2, (w_p - w_m) / (2 * h), rtol=0, atol=1e-20)


# --- ground target ----------------------------------------------------------------------------------------------------

LAT, LON, ALT, MIN_EL = 40.0, -75.0, 100.0, 10.0
GMST0 = 1.3


def station_ecef():
    """WGS-84 geodetic to ECEF, the textbook closed form (N = a / sqrt(1 - e² sin²φ))."""
    lat, lon = math.radians(LAT), math.radians(LON)
    n = R_EARTH_M / math.sqrt(1 - WGS84_E2 * math.sin(lat) ** 2)
    return np.array([(n + ALT) * math.cos(lat) * math.cos(lon), (n + ALT) * math.cos(lat) * math.sin(lon),
                     (n * (1 - WGS84_E2) + ALT) * math.sin(lat)])


def r3(angle):
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c, s, 0.0], [-s, c, 0.0], [0.0, 0.0, 1.0]])


def gmst(t):
    return GMST0 + OMEGA_EARTH_RAD_S * t


def station_eci(t):
    return r3(-gmst(t)) @ station_ecef()


def elevation_deg(r_I, t):
    lat, lon = math.radians(LAT), math.radians(LON)
    up = np.array([math.cos(lat) * math.cos(lon), math.cos(lat) * math.sin(lon), math.sin(lat)])
    d = r3(gmst(t)) @ r_I - station_ecef()
    return math.degrees(math.asin(np.dot(d, up) / np.linalg.norm(d)))


@pytest.fixture(scope="module")
def pass_over_station():
    return make_pass()


def make_pass():
    """A circular 500 km orbit passing near the station 300 s after t = 0: ``state(t)``."""
    up = unit(station_eci(300.0))
    normal = unit(np.cross(up, unit([0.3, 0.2, 1.0])))
    along = np.cross(normal, up)
    radius = R_EARTH_M + 500e3
    speed = math.sqrt(MU_EARTH_M3_S2 / radius)
    theta = 300.0 * speed / radius + 0.03  # start that far back along the orbit, slightly off overhead
    r0 = radius * (math.cos(theta) * up - math.sin(theta) * along)
    v0 = speed * (math.sin(theta) * up + math.cos(theta) * along)
    return two_body(r0, v0, (0.0, 700.0))


def test_ground_target_points_at_the_station_and_switches_at_the_elevation(pass_over_station):
    a, c = unit([0.0, 1.0, 1.0]), unit([1.0, 0.0, 0.0])
    target = guidance.GroundTarget(LAT, LON, ALT, a, MIN_EL, along_track_axis=c)
    nadir = guidance.NadirPointing(a, c)
    elevations = [elevation_deg(pass_over_station(t)[0], t) for t in range(0, 701, 10)]
    assert max(elevations) > 60.0 and elevations[0] < MIN_EL and elevations[-1] < MIN_EL
    rise = brentq(lambda t: elevation_deg(pass_over_station(t)[0], t) - MIN_EL, 0.0, 300.0, xtol=1e-9)
    sets = brentq(lambda t: elevation_deg(pass_over_station(t)[0], t) - MIN_EL, 300.0, 700.0, xtol=1e-9)
    for t, visible in ((rise - 1e-3, False), (rise + 1e-3, True), (200.0, True), (300.0, True), (rise - 30.0, False),
                       (sets - 1e-3, True), (sets + 1e-3, False)):
        r, v = pass_over_station(t)
        ref = target.reference_at(t, r, v, gmst_rad=gmst(t))
        assert bool(target.visible(r, gmst(t))) == visible
        if visible:
            np.testing.assert_allclose(rotate_about(ref.q_IR, a), unit(station_eci(t) - r), atol=1e-14)
            c_I = rotate_about(ref.q_IR, c)
            assert abs(np.dot(c_I, unit(np.cross(station_eci(t) - r, v)))) < 1e-14 and np.dot(c_I, v) > 0.0
        else:
            held = nadir.reference_at(t, r, v)
            assert rotations.quat_angle_between(ref.q_IR, held.q_IR) < 1e-15
            np.testing.assert_array_equal(ref.omega_R_rad_s, held.omega_R_rad_s)
        assert abs(target.elevation_deg(r, gmst(t)) - elevation_deg(r, t)) < 1e-10


@pytest.mark.parametrize("t", [200.0, 290.0, 305.0, 360.0])
def test_ground_tracking_rate_and_acceleration(pass_over_station, t):
    target = guidance.GroundTarget(LAT, LON, ALT, [0.0, 0.0, 1.0], MIN_EL)
    h = 0.01
    (rm, r0, rp), (vm, v0, vp) = pass_over_station(np.array([t - h, t, t + h]))
    ref = target.reference_at(t, r0, v0, gmst_rad=gmst(t))
    at_m, at_p = (target.reference_at(t + d, r_, v_, gmst_rad=gmst(t + d)) for d, r_, v_ in ((-h, rm, vm), (h, rp, vp)))
    omega_fd = rate_from_attitudes(at_m.q_IR, at_p.q_IR, ref.q_IR, h)
    assert np.linalg.norm(omega_fd) > 3e-3  # a fast pass
    # the kernel differences over ±0.02 s (error ~1e-8 relative), the test over ±0.01 s (measured: both shrink as h²)
    np.testing.assert_allclose(ref.omega_R_rad_s, omega_fd, rtol=0, atol=1e-7 * np.linalg.norm(omega_fd))
    w_m, w_p = at_m.omega_R_rad_s, at_p.omega_R_rad_s
    wdot_fd = (w_p - w_m) / (2 * h)
    np.testing.assert_allclose(ref.omegadot_R_rad_s2, wdot_fd, rtol=0, atol=1e-6 * np.linalg.norm(wdot_fd))


# --- slew -------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("angle_deg,bang_bang", [(120.0, False), (179.0, False), (5.0, True)])
def test_slew_profile_limits_and_end_points(rng, angle_deg, bang_bang):
    max_rate, max_accel, t0 = 0.03, 0.002, 12.0
    q_from = random_quaternions(rng, 1)[0]
    q_to = rotations.quat_multiply(q_from, rotations.axis_angle_to_quat(unit(rng.normal(size=3)),
                                                                         math.radians(angle_deg)))
    q_to = -q_to if rng.uniform() < 0.5 else q_to  # either sign names the same attitude
    slew = guidance.Slew(q_from, q_to, max_rate, max_accel, t_start_s=t0)
    theta = rotations.quat_angle_between(q_from, q_to)
    expected = 2 * math.sqrt(theta / max_accel) if bang_bang else theta / max_rate + max_rate / max_accel
    assert (max_rate**2 / max_accel > theta) == bang_bang
    assert slew.duration_s == pytest.approx(expected, rel=1e-14)
    times = np.linspace(t0 - 5.0, t0 + expected + 5.0, 20001)
    ref = slew.reference_at(times)
    rate = np.linalg.norm(ref.omega_R_rad_s, axis=1)
    accel = np.linalg.norm(ref.omegadot_R_rad_s2, axis=1)
    peak = min(max_rate, math.sqrt(theta * max_accel))
    assert np.all(rate <= peak * (1 + 1e-14)) and rate.max() > peak * 0.999
    assert np.all(accel <= max_accel * (1 + 1e-14))
    before, after = times <= t0, times >= t0 + expected
    assert np.max(rotations.quat_angle_between(ref.q_IR[before], q_from)) < 1e-15
    assert np.all(rate[before | after] == 0.0)
    assert np.max(rotations.quat_angle_between(ref.q_IR[after], q_to)) < 1e-15
    # integrating q̇ = ½ q ⊗ (0, ω_R) from the start reaches the end attitude, at rest
    sol = solve_ivp(lambda t, q: 0.5 * rotations.quat_multiply(q, np.concatenate([[0.0], slew.reference_at(t)[1]])),
                    (t0, t0 + expected), q_from, method="DOP853", rtol=1e-12, atol=1e-13, max_step=expected / 50)
    assert rotations.quat_angle_between(sol.y[:, -1], q_to) < 1e-9
    inside = (times > t0 + 0.1) & (times < t0 + expected - 0.1)
    i = np.flatnonzero(inside)[:: 2000]
    h = 1e-3
    for k in i:
        at_m, at_p = slew.reference_at(times[k] - h), slew.reference_at(times[k] + h)
        omega_fd = rate_from_attitudes(at_m.q_IR, at_p.q_IR, ref.q_IR[k], h)
        np.testing.assert_allclose(ref.omega_R_rad_s[k], omega_fd, atol=1e-10)
        if not np.any(np.abs(times[k] - t0 - np.array([slew.accel_time_s, expected - slew.accel_time_s])) < h):
            wdot_fd = (at_p.omega_R_rad_s - at_m.omega_R_rad_s) / (2 * h)  # exact away from the profile's corners
            np.testing.assert_allclose(ref.omegadot_R_rad_s2[k], wdot_fd, atol=1e-12)


def test_slew_to_the_same_attitude_takes_no_time(rng):
    q = random_quaternions(rng, 1)[0]
    slew = guidance.Slew(q, -q, 0.1, 0.01)
    assert slew.duration_s < 1e-6  # the angle is round-off: a bang-bang of 2 sqrt(1e-16 / α)
    ref = slew.reference_at(np.array([-1.0, 0.0, 1.0]))
    assert np.all(ref.omega_R_rad_s == 0.0) and np.max(rotations.quat_angle_between(ref.q_IR, q)) < 1e-15


# --- the compiled contract --------------------------------------------------------------------------------------------


def test_one_compiled_function_evaluates_a_bank_of_targets(rng):
    bank = [guidance.Inertial(random_quaternions(rng, 1)[0]), guidance.NadirPointing(),
            guidance.SunPointing([1, 0, 0], [0, 0, 1], ECLIPTIC_POLE),
            guidance.Slew([1, 0, 0, 0], random_quaternions(rng, 1)[0], 0.05, 0.005, t_start_s=3.0),
            guidance.GroundTarget(LAT, LON, ALT, [0, 0, 1], MIN_EL)]
    kinds = np.array([t.kind for t in bank])
    params = np.stack([t.parameters for t in bank])
    assert params.shape == (5, guidance.PARAMETER_LENGTH) and len(set(kinds)) == 5
    r, v = ELLIPTIC
    s = sun.sun_direction_eci(JD)
    for t in (0.0, 10.0):
        for i, target in enumerate(bank):
            q, w, wd = guidance_kernels.reference(kinds[i], params[i], t, tuple(r), tuple(v), tuple(s), 0.7)
            expected = target.reference_at(t, r, v, s, 0.7)
            np.testing.assert_array_equal(np.array(q), expected.q_IR)
            np.testing.assert_array_equal(np.array(w), expected.omega_R_rad_s)
            np.testing.assert_array_equal(np.array(wd), expected.omegadot_R_rad_s2)
    np.testing.assert_allclose(bank[0].reference_at(5.0).q_IR, bank[0].q_IR, atol=0)


def test_geodetic_round_trip():
    lat, lon, h = np.radians([-89.0, -30.0, 0.0, 45.0, 90.0]), np.radians([0.0, 100.0, -170.0, 20.0, 5.0]), \
        np.array([0.0, 500.0, -100.0, 1e6, 3e3])
    back = frames.ecef_to_geodetic(frames.geodetic_to_ecef(lat, lon, h))
    np.testing.assert_allclose(back.lat_rad, lat, atol=1e-14)
    np.testing.assert_allclose(back.height_m, h, atol=1e-8)
    r0, v0 = ELLIPTIC
    r1, v1 = guidance_kernels.two_body_step(tuple(r0), tuple(v0), -0.1)
    r_ref, v_ref = two_body(r0, v0, (0.0, -0.1))(-0.1)
    np.testing.assert_allclose(r1, r_ref, atol=1e-7)
    np.testing.assert_allclose(v1, v_ref, atol=1e-10)


# --- control errors ---------------------------------------------------------------------------------------------------


def test_control_errors(rng):
    q_IR = random_quaternions(rng, 50)
    delta = rng.normal(size=(50, 3)) * 1e-4
    q_IB = rotations.quat_multiply(q_IR, rotations.rotvec_to_quat(delta)) * np.where(rng.uniform(size=(50, 1)) < 0.5,
                                                                                       -1, 1)
    q_RB = guidance.attitude_error(q_IB, q_IR)
    assert np.all(q_RB[:, 0] >= 0)
    np.testing.assert_allclose(rotations.quat_canonical(rotations.quat_multiply(q_IR, q_RB)),
                               rotations.quat_canonical(q_IB), atol=1e-15)
    # 2 sin(|δ|/2) δ̂ = δ (1 - |δ|²/24 + ...): within 1e-12 rad of δ at |δ| ~ 2e-4
    np.testing.assert_allclose(guidance.error_vector(q_IB, q_IR), delta, atol=1e-12)
    np.testing.assert_allclose(guidance.error_angle_deg(q_IB, q_IR), np.degrees(np.linalg.norm(delta, axis=1)),
                               rtol=1e-9)
    # a tilt of β about an axis normal to the pointing axis is a pointing error of β; a roll about it is none
    a = np.array([0.0, 0.0, 1.0])
    tilt = rotations.quat_multiply(q_IR[0], rotations.axis_angle_to_quat([1.0, 1.0, 0.0], 0.3))
    roll = rotations.quat_multiply(q_IR[0], rotations.axis_angle_to_quat(a, 0.3))
    assert guidance.axis_error_deg(tilt, q_IR[0], a) == pytest.approx(math.degrees(0.3), rel=1e-13)
    assert guidance.axis_error_deg(roll, q_IR[0], a) < 1e-12
    w_B, w_R = rng.normal(size=(50, 3)) * 0.01, rng.normal(size=(50, 3)) * 0.01
    for i in range(3):
        args = (tuple(q_IB[i]), tuple(q_IR[i]))
        np.testing.assert_array_equal(guidance_kernels.attitude_error(*args), q_RB[i])
        np.testing.assert_allclose(guidance_kernels.error_vector(*args), guidance.error_vector(q_IB[i], q_IR[i]),
                                   atol=1e-18)
        assert guidance_kernels.error_angle_deg(*args) == pytest.approx(guidance.error_angle_deg(q_IB[i], q_IR[i]),
                                                                        rel=1e-12)
        assert guidance_kernels.axis_error_deg(*args, (0.0, 0.0, 1.0)) == pytest.approx(
            guidance.axis_error_deg(q_IB[i], q_IR[i], a), rel=1e-9, abs=1e-12)
        np.testing.assert_allclose(guidance_kernels.rate_error(*args, tuple(w_B[i]), tuple(w_R[i])),
                                   guidance.rate_error(q_IB[i], q_IR[i], w_B[i], w_R[i]), atol=1e-18)


def test_rate_error_is_the_rate_of_the_attitude_error(rng):
    # body and reference each turning at a constant rate: d/dt q_RB = ½ q_RB ⊗ (0, ω_B - R_BR ω_R)
    q_b0, q_r0 = random_quaternions(rng, 2)
    w_B, w_R = np.array([0.02, -0.01, 0.03]), np.array([-0.015, 0.005, 0.01])

    def q_RB(t):
        q_IB = rotations.quat_multiply(q_b0, rotations.rotvec_to_quat(w_B * t))
        q_IR = rotations.quat_multiply(q_r0, rotations.rotvec_to_quat(w_R * t))
        return guidance.attitude_error(q_IB, q_IR), q_IB, q_IR

    t, h = 7.0, 1e-4
    e0, q_IB, q_IR = q_RB(t)
    relative = rate_from_attitudes(q_RB(t - h)[0], q_RB(t + h)[0], e0, h)
    np.testing.assert_allclose(guidance.rate_error(q_IB, q_IR, w_B, w_R), relative, atol=1e-10)


# --- bad configuration ------------------------------------------------------------------------------------------------


def refused(call, field, rule):
    with pytest.raises(InputError) as info:
        call()
    assert info.value.field == field and rule in info.value.rule, str(info.value)


def test_bad_configuration_is_refused():
    refused(lambda: guidance.Inertial([1.0, 0.1, 0.0, 0.0]), "q_IR", "unit quaternion")
    refused(lambda: guidance.Inertial([0.0, 0.0, 0.0, 0.0]), "q_IR", "unit quaternion")
    refused(lambda: guidance.Inertial([1.0, 0.0, 0.0]), "q_IR", "shape")
    refused(lambda: guidance.NadirPointing([0, 0, 0], [1, 0, 0]), "body_axis", "non-zero")
    refused(lambda: guidance.NadirPointing([0, 0, 1], [0, 0, -2]), "along_track_axis", "parallel to body_axis")
    refused(lambda: guidance.SunPointing([1, 0, 0], [2, 0, 0], [0, 0, 1]), "secondary_body_axis", "parallel")
    refused(lambda: guidance.SunPointing([1, 0, 0], [0, 1, 0], [0, 0, 0]), "secondary_inertial", "non-zero")
    refused(lambda: guidance.GroundTarget(91.0, 0.0, 0.0), "lat_deg", "[-90, 90]")
    refused(lambda: guidance.GroundTarget(45.0, np.nan, 0.0), "lon_deg", "finite")
    refused(lambda: guidance.GroundTarget(45.0, 0.0, 0.0, min_elevation_deg=90.0), "min_elevation_deg", "[0, 90)")
    refused(lambda: guidance.GroundTarget(45.0, 0.0, 0.0, [1, 0, 0], along_track_axis=[1, 0, 0]), "along_track_axis",
            "parallel")
    q = [1.0, 0.0, 0.0, 0.0]
    refused(lambda: guidance.Slew(q, q, 0.0, 0.01), "max_rate_rad_s", "> 0")
    refused(lambda: guidance.Slew(q, q, 0.1, -0.01), "max_accel_rad_s2", "> 0")
    refused(lambda: guidance.Slew(q, [2.0, 0, 0, 0], 0.1, 0.01), "to_q", "unit quaternion")
    refused(lambda: guidance.Slew(q, q, 0.1, 0.01, t_start_s=np.inf), "t_start_s", "finite")
    refused(lambda: guidance.NadirPointing().reference_at(0.0), "r_I", "needed by NadirPointing")
    refused(lambda: guidance.GroundTarget(0, 0, 0).reference_at(0.0, [7e6, 0, 0], [0, 7e3, 0]), "gmst_rad", "needed")
    refused(lambda: guidance.NadirPointing().reference_at([0.0, 1.0], np.ones((3, 3)), np.ones(3)), "r_I",
            "one row per time")
    refused(lambda: guidance.NadirPointing().reference_at(0.0, np.ones((3, 3)), np.ones(3)), "r_I", "single time")
    refused(lambda: guidance.NadirPointing().reference_at([[0.0]], np.ones(3), np.ones(3)), "t_s", "1-D")
