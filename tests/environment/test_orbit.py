"""KeplerOrbit from the true anomaly or from a state, with its own μ and Earth radius, point mass or J2."""

import math

import numpy as np
import pytest

from attsim.environment import Environment, KeplerOrbit
from attsim.environment.orbit import elements_from_state, mean_from_true_anomaly_rad
from attsim.environment.torques import DisturbanceSwitches, disturbance_torques
from attsim.environment.table import R, WIDTH
from attsim.errors import InputError

MU_BASILISK = 3.98600436e14  # Basilisk's createEarth()


def _rotation(axis: int, angle: float) -> np.ndarray:
    """The matrix turning a vector by ``angle`` about coordinate axis ``axis`` (0, 1, 2), written out here."""
    c, s = math.cos(angle), math.sin(angle)
    j, k = (axis + 1) % 3, (axis + 2) % 3
    m = np.eye(3)
    m[j, j], m[j, k], m[k, j], m[k, k] = c, -s, s, c
    return m


def _elem2rv(mu, a, e, i, raan, argp, f):
    """Position and velocity from the true anomaly, as Basilisk's orbitalMotion.elem2rv (the perifocal formula
    turned into ECI by the node, the inclination and the argument of perigee, one rotation at a time)."""
    p = a * (1.0 - e * e)
    r = p / (1.0 + e * math.cos(f))
    R_ = _rotation(2, raan) @ _rotation(0, i) @ _rotation(2, argp)
    return (R_ @ [r * math.cos(f), r * math.sin(f), 0.0],
            R_ @ (math.sqrt(mu / p) * np.array([-math.sin(f), e + math.cos(f), 0.0])))


def test_true_anomaly_gives_basilisks_state_of_the_guidance_scenario():
    # scenarioAttitudeGuidance's orbit: a = 10000 km, e = 0.1, i = 33.3, Omega = 48.2, omega = 347.8, f = 85.3 deg
    orbit = KeplerOrbit(10e6, 0.1, 33.3, 48.2, 347.8, true_anomaly_deg=85.3, j2=False, mu_m3_s2=MU_BASILISK)
    r, v = orbit.state_eci([0.0])
    r_ref, v_ref = _elem2rv(MU_BASILISK, 10e6, 0.1, *np.radians([33.3, 48.2, 347.8, 85.3]))
    assert np.abs(r[0] - r_ref).max() < 1e-8 * 1e7 and np.abs(v[0] - v_ref).max() < 1e-12 * 1e4
    # an orbit later: back where it was (point mass: no drift), the period from this μ
    assert orbit.period_s == pytest.approx(2 * math.pi * math.sqrt(1e21 / MU_BASILISK), rel=1e-15)
    r1, v1 = orbit.state_eci([orbit.period_s])
    assert np.abs(r1[0] - r_ref).max() < 1e-6 and orbit.raan_rate == orbit.argp_rate == 0.0


@pytest.mark.parametrize("e", [0.0, 0.1, 0.7])
def test_mean_from_true_anomaly_inverts_keplers_equation_in_every_quadrant(e):
    for f in np.radians([0.0, 45.0, 135.0, 180.0, 225.0, 315.0]):
        M = mean_from_true_anomaly_rad(f, e)
        E = math.atan2(math.sqrt(1 - e * e) * math.sin(f), e + math.cos(f))
        assert M == pytest.approx(E - e * math.sin(E), abs=1e-15)
        assert math.atan2(math.sin(M - (E - e * math.sin(E))), 1.0) == pytest.approx(0.0, abs=1e-15)


@pytest.mark.parametrize("r, v", [
    ((-3e6, 6e6, 2e6), (6107.7, 4039.6, -2607.4)),
    ((7e6, 0.0, 0.0), (0.0, 7546.0, 0.0)),        # equatorial: node undefined
    ((7e6, 0.0, 0.0), (0.0, -7546.0, 0.0)),       # retrograde equatorial
    ((7e6, 0.0, 0.0), (0.0, 0.0, 7546.0)),        # polar
    ((0.0, 0.0, 7.2e6), (7440.0, 0.0, 0.0)),      # over the pole
])
def test_from_state_gives_back_the_state_and_its_motion(r, v):
    orbit = KeplerOrbit.from_state(r, v, j2=False)
    rb, vb = orbit.state_eci([0.0])
    assert np.abs(rb[0] - r).max() < 1e-8 and np.abs(vb[0] - v).max() < 1e-10  # m, m/s
    # its elements rebuild the same orbit through the true anomaly
    e = elements_from_state(r, v)
    again = KeplerOrbit(e.semi_major_axis_m, e.eccentricity, e.inclination_deg, e.raan_deg, e.arg_perigee_deg,
                        true_anomaly_deg=e.true_anomaly_deg, j2=False)
    t = np.linspace(0.0, 3000.0, 4)
    assert np.abs(again.state_eci(t)[0] - orbit.state_eci(t)[0]).max() < 1e-6


def test_mu_and_earth_radius_are_the_orbits_own():
    orbit = KeplerOrbit.circular(500.0, 45.0, j2=False, mu_m3_s2=3.985e14, earth_radius_m=6.371e6)
    assert orbit.a == 6.871e6 and orbit.mean_motion_rad_s == math.sqrt(3.985e14 / 6.871e6**3)
    v = np.linalg.norm(orbit.state_eci([0.0])[1])
    assert v == pytest.approx(math.sqrt(3.985e14 / 6.871e6), rel=1e-14)
    # the J2 rates scale with (R/p)^2
    small = KeplerOrbit.circular(500.0, 45.0, earth_radius_m=6.36e6)
    big = KeplerOrbit(small.a, 0.0, 45.0, earth_radius_m=6.36e6 * 1.005)
    assert big.raan_rate / small.raan_rate == pytest.approx(1.005**2, rel=1e-12)
    # the perigee check uses this radius: 6460 km is 82 km up from 6378 km but 110 km from 6350 km
    with pytest.raises(InputError, match="perigee"):
        KeplerOrbit(6.46e6, 0.0, 10.0)
    assert KeplerOrbit(6.46e6, 0.0, 10.0, earth_radius_m=6.35e6).a == 6.46e6


def test_gravity_gradient_uses_the_orbits_mu():
    J = (2.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 3.0)
    q = (math.cos(0.3), math.sin(0.3) * 0.6, 0.0, math.sin(0.3) * 0.8)
    table = np.zeros((2, WIDTH))
    table[:, R:R + 3] = (7e6, 1e6, -2e6)
    torques = []
    for mu in (3.98e14, 3.99e14):
        environment = Environment.orbit_only(KeplerOrbit.circular(600.0, 50.0, mu_m3_s2=mu), gravity_gradient=True)
        assert environment.flags == (1.0, 0.0, 0.0, mu)
        d = disturbance_torques(0.5, q, np.array([0.0, 1.0]), table, np.empty((0, 10)),
                                DisturbanceSwitches(*environment.flags), J, (0.0, 0.0, 0.0))
        torques.append(np.array(d.gg))
    assert np.abs(torques[0]).max() > 0 and np.allclose(torques[1], 3.99 / 3.98 * torques[0], rtol=1e-14, atol=0)


@pytest.mark.parametrize("make, field", [
    (lambda: KeplerOrbit(7e6, 0.0, 10.0, mean_anomaly_deg=5.0, true_anomaly_deg=5.0), "true_anomaly_deg"),
    (lambda: KeplerOrbit(7e6, 0.0, 10.0, true_anomaly_deg=float("nan")), "true_anomaly_deg"),
    (lambda: KeplerOrbit(7e6, 0.0, 10.0, mu_m3_s2=-1.0), "mu_m3_s2"),
    (lambda: KeplerOrbit(7e6, 0.0, 10.0, earth_radius_m=0.0), "earth_radius_m"),
    (lambda: KeplerOrbit(7e6, 0.0, 10.0, mu_m3_s2=398600.4418), "mu_m3_s2"),       # km^3/s^2 given as SI
    (lambda: KeplerOrbit(7e6, 0.0, 10.0, earth_radius_m=6378.137), "earth_radius_m"),  # km given as m
    (lambda: KeplerOrbit.from_state((7e6, 0, 0), (0, 7500.0, 0), mu_m3_s2=4.3e13), "mu_m3_s2"),  # Mars's
    (lambda: KeplerOrbit.circular(500.0, 10.0, earth_radius_m="6e6"), "earth_radius_m"),
    (lambda: KeplerOrbit.from_state((7e6, 0, 0), (0, 20000.0, 0)), "v_m_s"),       # beyond escape speed
    (lambda: KeplerOrbit.from_state((7e6, 0, 0), (7000.0, 0, 0)), "v_m_s"),        # radial
    (lambda: KeplerOrbit.from_state((0, 0, 0), (0, 7000.0, 0)), "r_m"),
    (lambda: KeplerOrbit.from_state((7e6, 0, 0), (0, 7000.0)), "v_m_s"),
    (lambda: KeplerOrbit.from_state((7e6, 0, 0), (0, 7500.0, 0), mu_m3_s2=0.0), "mu_m3_s2"),
    (lambda: KeplerOrbit.from_state((6.4e6, 0, 0), (0, 7000.0, 0)), "orbit"),       # perigee inside the Earth
])
def test_bad_orbit_input_is_refused_by_name(make, field):
    with pytest.raises(InputError) as caught:
        make()
    assert caught.value.field == field
