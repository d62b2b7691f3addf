"""Environment models against independent references shipped in tests/data
(each produced by a script in tools/: make_*_reference.py) and against
analytic geometry."""

import datetime as dt
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import attsim
from attsim import rotations
from attsim.dynamics import matrix_to_tuple
from attsim.environment.table import WIDTH as ENV_WIDTH
from attsim.engine.plant import PlantInputs, plant_torque
from attsim.environment import Environment, Face, KeplerOrbit, TLEOrbit, make_tle
from attsim.environment.atmosphere import ExponentialAtmosphere
from attsim.environment.frames import R_EARTH_M, Epoch, ecef_to_eci, ecef_to_geodetic, lvlh_quaternion
from attsim.environment.magnetic import IGRF, TiltedDipole
from attsim.environment.sun import (AU_M, lit_fraction_conical, lit_fraction_cylindrical, sun_direction_eci,
                                   sun_distance_m, sun_eci)
from attsim.errors import InputError

DATA = Path(__file__).resolve().parents[1] / "data"
WGS84_A, WGS84_F = 6378137.0, 1 / 298.257223563


def geodetic_to_ecef(lat_deg, lon_deg, alt_m):
    lat, lon = np.radians(lat_deg), np.radians(lon_deg)
    e2 = WGS84_F * (2 - WGS84_F)
    N = WGS84_A / np.sqrt(1 - e2 * np.sin(lat) ** 2)
    return np.stack([(N + alt_m) * np.cos(lat) * np.cos(lon), (N + alt_m) * np.cos(lat) * np.sin(lon),
                     (N * (1 - e2) + alt_m) * np.sin(lat)], axis=-1)


def test_igrf_matches_published_values_to_1_nT():
    ref = pd.read_csv(DATA / "igrf_reference.csv")
    worst = 0.0
    for _, row in ref.iterrows():
        r = geodetic_to_ecef(row.geodetic_lat_deg, row.lon_deg, row.alt_km * 1e3)
        B = IGRF().field_ecef_T(r, dt.datetime.fromisoformat(row.date_iso))[0] * 1e9
        lat, lon = math.radians(row.geodetic_lat_deg), math.radians(row.lon_deg)
        north = np.array([-math.sin(lat) * math.cos(lon), -math.sin(lat) * math.sin(lon), math.cos(lat)])
        east = np.array([-math.sin(lon), math.cos(lon), 0.0])
        down = -np.array([math.cos(lat) * math.cos(lon), math.cos(lat) * math.sin(lon), math.sin(lat)])
        ned = np.array([B @ north, B @ east, B @ down])
        worst = max(worst, np.abs(ned - [row.B_north_nT, row.B_east_nT, row.B_down_nT]).max())
    assert worst < 1.0, worst


def test_tilted_dipole_is_the_degree_one_part_of_igrf():
    import ppigrf

    when = dt.datetime(2018, 4, 3, 12)
    from attsim.environment.frames import ecef_to_eci, eci_to_ecef

    r = geodetic_to_ecef(np.array([10.0, -45.0, 70.0]), np.array([20.0, 170.0, -60.0]), 700e3)
    epoch = Epoch(when)
    B = TiltedDipole().field_eci_T(ecef_to_eci(r, epoch.jd), epoch, np.zeros(3))
    B_ecef = eci_to_ecef(B, epoch.jd)
    rn = np.linalg.norm(r, axis=1)
    theta, phi = np.degrees(np.arccos(r[:, 2] / rn)), np.degrees(np.arctan2(r[:, 1], r[:, 0]))
    Br = np.asarray(ppigrf.igrf_gc(rn / 1e3, theta, phi, when, max_degree=1)[0]).reshape(-1) * 1e-9
    assert np.allclose(np.sum(B_ecef * r / rn[:, None], axis=1), Br, rtol=1e-9, atol=0)


def test_sgp4_matches_vallado_verification_output():
    ref = pd.read_csv(DATA / "sgp4_reference.csv")
    for (line1, line2), rows in ref.groupby(["line1", "line2"]):
        orbit = TLEOrbit(line1, line2)
        r, v = orbit.state_eci(rows.tsince_min.to_numpy() * 60.0)
        assert np.abs(r / 1e3 - rows[["x_km", "y_km", "z_km"]].to_numpy()).max() < 1e-6, line1[2:7]
        assert np.abs(v / 1e3 - rows[["vx_km_s", "vy_km_s", "vz_km_s"]].to_numpy()).max() < 1e-8, line1[2:7]


def test_sun_direction_within_the_almanac_accuracy():
    ref = pd.read_csv(DATA / "sun_reference.csv")
    ours = sun_direction_eci(ref.jd_utc.to_numpy())
    angle = np.degrees(np.arccos(np.clip(np.sum(ours * ref[["teme_x", "teme_y", "teme_z"]].to_numpy(), axis=1), -1, 1)))
    assert angle.max() < 0.01, angle.max()  # the Astronomical Almanac formula's stated 0.01 deg


@pytest.mark.parametrize("altitude_km, beta_deg", [(400.0, 0.0), (700.0, 20.0), (1500.0, -35.0)])
def test_cylindrical_eclipse_entry_and_exit_times(altitude_km, beta_deg):
    # circular orbit in the x-y plane; the Sun beta degrees above it, along +x projected
    r_orbit = R_EARTH_M + altitude_km * 1e3
    n = math.sqrt(3.986004418e14 / r_orbit**3)
    beta = math.radians(beta_deg)
    sun = np.array([math.cos(beta), 0.0, math.sin(beta)])
    position = lambda t: r_orbit * np.array([math.cos(n * t), math.sin(n * t), 0.0])  # noqa: E731
    lit = lambda t: lit_fraction_cylindrical(position(t)[None], sun)[0]  # noqa: E731
    half = math.acos(math.sqrt(1 - (R_EARTH_M / r_orbit) ** 2) / math.cos(beta))
    t_in, t_out = (math.pi - half) / n, (math.pi + half) / n

    def edge(a, b):
        for _ in range(80):
            mid = 0.5 * (a + b)
            a, b = (mid, b) if lit(mid) == lit(a) else (a, mid)
        return 0.5 * (a + b)

    assert abs(edge(t_in - 60, t_in + 60) - t_in) < 1e-6
    assert abs(edge(t_out - 60, t_out + 60) - t_out) < 1e-6
    # the conical model's umbra lies inside the cylinder and its penumbra straddles the edges
    assert lit_fraction_conical(position(0.5 * (t_in + t_out))[None], sun * 1.496e11)[0] == 0.0


def test_gravity_gradient_pitch_libration_at_the_analytic_frequency(tmp_path):
    # inside the Lagrange region (I_y > I_x > I_z): pitch librates at n sqrt(3 (I_x - I_z) / I_y)
    I = np.diag([2.0, 3.0, 1.2])
    orbit = KeplerOrbit.circular(700.0, 51.6)
    env = Environment(orbit, field=None, atmosphere=None, gravity_gradient=True, aerodynamic=False,
                      solar_pressure=False, table_dt_s=2.0)
    n = orbit.mean_motion_rad_s
    r, v = orbit.state_eci([0.0])
    q0 = rotations.quat_multiply(lvlh_quaternion(r[0], v[0]),
                                 rotations.axis_angle_to_quat([0, 1, 0], math.radians(2.0)))
    mission = attsim.Mission("libration", I, (0.0, -n, 0.0), q0=q0, duration=6 * orbit.period_s, max_step=5.0,
                             telemetry_dt=10.0, environment=env, out_dir=tmp_path)
    tel = mission.run()
    t = tel.df.index.to_numpy()
    r, v = orbit.state_eci(t)
    q_OB = rotations.quat_multiply(rotations.quat_conjugate(lvlh_quaternion(r, v)),
                                   tel.df[["qw", "qx", "qy", "qz"]].to_numpy())
    pitch = rotations.quat_to_rotvec(q_OB)[:, 1]  # sign-safe: q and -q give the same rotation vector
    crossings = t[:-1][np.diff(np.sign(pitch)) != 0]
    measured = math.pi / np.mean(np.diff(crossings))
    expected = n * math.sqrt(3 * (2.0 - 1.2) / 3.0)
    assert abs(measured / expected - 1) < 0.01, (measured, expected)
    assert np.abs(tel.df["tau_gg_y"]).max() > 0 and np.abs(tel.df["tau_aero_x"]).max() == 0


def test_magnetorquer_torque_test_vector():
    # Advitiy's actuator test: m = (1, 2, 3) A m^2 in B = (4, 9, 3) T gives tau = (-21, 9, 1) N m
    from attsim.environment.table import B_I
    from attsim.environment.torques import DisturbanceSwitches

    table = np.zeros((2, ENV_WIDTH))
    table[:, B_I:B_I + 3] = (4.0, 9.0, 3.0)
    J = matrix_to_tuple(np.eye(3))
    zero = (0.0, 0.0, 0.0)
    inputs = PlantInputs(t0_s=0.0, tau_ext_Nm=zero, dipole_Am2=(1.0, 2.0, 3.0), tau_wheels_Nm=zero, h_wheels0_Nms=zero,
                         env_t=np.array([0.0, 1.0]), env_v=table, faces=np.empty((0, 10)),
                         switches=DisturbanceSwitches(0.0, 0.0, 0.0, 3.986004418e14), J=J, residual_dipole_Am2=zero)
    assert plant_torque(0.5, (1.0, 0.0, 0.0, 0.0), (0.0, 0.0, 0.0), inputs) == (-21.0, 9.0, 1.0)
    # and through the engine: a body too heavy to turn measurably in 1 s
    mission = attsim.Mission("mtq_vector", 1e12 * np.eye(3), (0, 0, 0), duration=1.0, field=(4.0, 9.0, 3.0),
                             out_dir="/tmp/attsim_mtq_vector")
    mission.add(attsim.Magnetorquer(dipole_max_Am2=10.0))
    mission.add(attsim.CommandSchedule("mtq", [(0.0, (1.0, 2.0, 3.0))]))
    tel = mission.run()
    assert np.allclose(tel.df[["wx", "wy", "wz"]].iloc[-1].to_numpy() * 1e12, (-21.0, 9.0, 1.0), rtol=1e-9, atol=0)


def test_bdot_law_test_vector():
    # two samples 2 s apart: rate form m = -k dB/dt, direction form m = -(k/|B|) d(B/|B|)/dt
    b1, b2 = np.array([2e-5, -1e-5, 3e-5]), np.array([2.2e-5, -1.1e-5, 2.9e-5])
    rate = attsim.BDot("mag", "mtq", gain=5e4, period_s=2.0, form="rate")
    direction = attsim.BDot("mag", "mtq", gain=3e-3, period_s=2.0, form="direction")
    for law in (rate, direction):
        law._mag, law._mtq, law._previous = "mag", "mtq", None
        law.gain_used = law.gain
        assert law.decide(0.0, {"mag": b1}) == {}
    m_rate = rate.decide(2.0, {"mag": b2})["mtq"]
    assert np.allclose(m_rate, -5e4 * (b2 - b1) / 2.0, rtol=1e-15, atol=0)
    assert np.allclose(m_rate, (-0.05, 0.025, 0.025), rtol=1e-12, atol=0)
    m_dir = direction.decide(2.0, {"mag": b2})["mtq"]
    expected = -3e-3 / np.linalg.norm(b2) * (b2 / np.linalg.norm(b2) - b1 / np.linalg.norm(b1)) / 2.0
    assert np.allclose(m_dir, expected, rtol=1e-15, atol=0)


def test_avanzini_giulietti_gain():
    assert attsim.BDot.avanzini_giulietti_gain(1e-3, math.radians(30.0), 2e-3) == pytest.approx(2 * 1e-3 * 1.5 * 2e-3)


@pytest.mark.parametrize(
    "make, error, pattern",
    [
        (lambda: TLEOrbit(*[line[:-1] + str((int(line[-1]) + 1) % 10) if k == 0 else line
                            for k, line in enumerate(make_tle(98.0, 0.001, 14.6, "2018-04-03T12:00:00"))]),
         InputError, "line1: checksum"),
        (lambda: TLEOrbit("1 00005U 58002B", "2 00005"), InputError, "line1: must be 69 characters long"),
        (lambda: TLEOrbit(*make_tle(98.0, 0.001, 17.5, "2018-04-03T12:00:00")), InputError,
         "orbit: perigee altitude must be at least 100 km"),
        (lambda: KeplerOrbit(7e6, 1.2, 50.0), InputError, "eccentricity: must be in \\[0, 1\\)"),
        (lambda: KeplerOrbit.circular(80.0, 50.0), InputError, r"altitude_km: must be in \[100, "),
        (lambda: Environment(KeplerOrbit.circular(700.0, 98.0, epoch="2031-01-01T00:00:00"), field="igrf"), InputError,
         "epoch: must lie within the IGRF-14 model's validity"),
        (lambda: Face(0.0, (1, 0, 0), (0, 0, 0)), InputError, "area_m2: must be finite and > 0"),
        (lambda: Face(0.01, (1, 1, 0), (0, 0, 0)), InputError, "normal: must be a unit vector"),
    ],
)
def test_bad_environment_input(make, error, pattern):
    with pytest.raises(error, match=pattern):
        make()


def test_make_tle_round_trips_the_elements():
    line1, line2 = make_tle(98.1258, 0.0032873, 14.62910114, "2018-04-03T12:50:19", raan_deg=12.5, arg_perigee_deg=40.0,
                            mean_anomaly_deg=300.0)
    orbit = TLEOrbit(line1, line2)
    assert abs(orbit.epoch.datetime - dt.datetime(2018, 4, 3, 12, 50, 19)) < dt.timedelta(milliseconds=1)
    assert orbit.satrec.ecco == pytest.approx(0.0032873)
    assert math.degrees(orbit.inclination_rad) == pytest.approx(98.1258)
    assert orbit.mean_motion_rad_s * 86400 / (2 * math.pi) == pytest.approx(14.62910114, rel=1e-9)


def test_drag_and_solar_pressure_on_an_offset_cube():
    # a cube whose centre of pressure is offset from the centre of mass feels a torque cp x F
    from attsim.environment.torques import face_torques

    faces = np.array([f.row() for f in Face.cube(0.1, (0.0, 0.0, -0.01), drag_coefficient=2.0, specular=0.0,
                                                 diffuse=0.0)])
    aero, srp = face_torques(faces, (7500.0, 0.0, 0.0), 1e-12, (1.0, 0.0, 0.0), 4.56e-6)
    F_drag = -0.5 * 1e-12 * 2.0 * 0.01 * 7500.0**2  # along x, on the +x face only
    assert np.allclose(aero, np.cross([0.05, 0.0, -0.01], [F_drag, 0.0, 0.0]), rtol=1e-12, atol=0)
    F_light = -4.56e-6 * 0.01  # fully absorbed, normal incidence
    assert np.allclose(srp, np.cross([0.05, 0.0, -0.01], [F_light, 0.0, 0.0]), rtol=1e-12, atol=0)


def test_ecef_to_geodetic_inverts_the_closed_form_forward_map():
    # geodetic_to_ecef above is the textbook closed form (N = a / sqrt(1 - e² sin²φ)); it shares no code
    # with the iterated Bowring inverse. Poles, equator, below the surface, LEO, GEO and random points.
    rng = np.random.default_rng(3)
    lat = np.concatenate([[90.0, -90.0, 0.0, 45.0, -60.0, 89.999], rng.uniform(-90.0, 90.0, 5000)])
    lon = np.concatenate([[0.0, 10.0, -179.0, 100.0, 33.0, -20.0], rng.uniform(-180.0, 180.0, 5000)])
    h = np.concatenate([[0.0, 550e3, 35786e3, -5e3, 550e3, 400e3], rng.uniform(-10e3, 40000e3, 5000)])
    where = ecef_to_geodetic(geodetic_to_ecef(lat, lon, h))
    assert where.lat_rad.shape == where.lon_rad.shape == where.height_m.shape == lat.shape
    assert np.abs(where.lat_rad - np.radians(lat)).max() < 1e-14
    assert np.abs(where.height_m - h).max() < 1e-7  # metres, at up to 6.4e7 m from the centre
    off_pole = np.abs(lat) < 90.0
    dlon = (np.degrees(where.lon_rad) - lon + 180.0) % 360.0 - 180.0
    assert np.abs(dlon[off_pole]).max() < 1e-11
    one = ecef_to_geodetic(geodetic_to_ecef(30.0, 40.0, 700e3))  # a single point keeps scalar shape
    assert np.ndim(one.height_m) == 0 and abs(one.height_m - 700e3) < 1e-8


def test_exponential_density_is_vallados_table_at_the_geodetic_height():
    # Vallado table 8-4, band 500-600 km: rho0 = 6.967e-13 kg/m^3, H = 63.822 km, at h = 550 km above
    # WGS-84. At 60 deg latitude |r| - a is 534 km: indexing by it gives a density 28 % too high.
    expected = 6.967e-13 * math.exp(-(550.0 - 500.0) / 63.822)
    epoch = Epoch("2020-03-20T03:00:00")
    t = np.array([0.0, 1000.0, 2000.0])
    r_ecef = geodetic_to_ecef(np.array([60.0, -60.0, 0.0]), np.array([20.0, 200.0, -75.0]), 550e3)
    r_eci = ecef_to_eci(r_ecef, epoch.jd_at(t))
    rho = ExponentialAtmosphere().density_kg_m3(r_eci, epoch, t)
    assert np.allclose(rho, expected, rtol=1e-9, atol=0), rho / expected


def _with_field(line: str, first: int, last: int, text: str) -> str:
    """``line`` with columns ``first..last`` (1-based) replaced and the checksum made valid again."""
    from attsim.environment.orbit import tle_checksum

    body = line[:first - 1] + text + line[last:68]
    return body + str(tle_checksum(body))


@pytest.mark.parametrize(
    "line, first, last, text, pattern",
    [
        # SGP4 read these as dates (2000-01-00 and the like)
        (0, 19, 32, "XXXXXXXXXXXXXX", r"^line1: epoch year \(columns 19-20\) is not in TLE format"),
        (0, 21, 32, "XXXXXXXXXXXX", r"^line1: epoch day of year \(columns 21-32\) is not in TLE format"),
        (0, 21, 32, "400.00000000", r"^line1: epoch day of year \(columns 21-32\) must be in \[1, 367\)"),
        (0, 54, 61, " 1234X-3", r"^line1: bstar \(columns 54-61\) is not in TLE format"),
        (1, 9, 16, "  abc.de", r"^line2: inclination \(columns 9-16\) is not in TLE format"),
        (1, 53, 63, "fifteen.000", r"^line2: mean motion \(columns 53-63\) is not in TLE format"),
    ],
)
def test_a_garbled_tle_field_with_a_valid_checksum_is_refused(line, first, last, text, pattern):
    lines = list(make_tle(98.0, 0.001, 14.6, "2018-04-03T12:00:00"))
    lines[line] = _with_field(lines[line], first, last, text)
    assert len(lines[line]) == 69
    with pytest.raises(InputError, match=pattern):
        TLEOrbit(*lines)


@pytest.mark.parametrize(
    "kwargs, pattern",
    [
        (dict(atmosphere="bogus"), r"^atmosphere: must be one of \['exponential', 'msis'\] \(got 'bogus'\)"),
        (dict(atmosphere=5), r"^atmosphere: must be 'exponential', 'msis', a model"),
        (dict(gravity_gradient="no"), r"^gravity_gradient: must be True or False"),  # 'no' counted as true
        (dict(faces=5), r"^faces: must be a sequence"),
        (dict(faces=[5]), r"^faces\[0\]: must be an attsim.environment.Face"),
        (dict(shadow={}), r"^shadow: must be one of"),
    ],
)
def test_environment_arguments_are_checked(kwargs, pattern):
    with pytest.raises(InputError, match=pattern):
        Environment(KeplerOrbit.circular(500.0, 50.0), **kwargs)


def test_a_user_atmosphere_model_is_used_and_described(tmp_path):
    class Uniform:  # no name attribute: the run's metadata falls back to the class name
        def density_kg_m3(self, r_eci_m, epoch, t_s):
            return np.full(len(np.atleast_2d(r_eci_m)), 1e-12)

    env = Environment(KeplerOrbit.circular(500.0, 50.0), atmosphere=Uniform(), faces=Face.cube(0.1))
    assert np.all(env.table(10.0)[1][:, 9] == 1e-12)
    tel = attsim.Mission("uniform", np.eye(3) * 1e-2, (0, 0, 0), duration=2.0, environment=env, out_dir=tmp_path).run()
    assert tel.meta["environment"]["atmosphere"] == "Uniform"


def test_the_run_records_and_reports_which_effects_are_on(tmp_path):
    """meta.json's environment lists the effects switched on, the report's summary says them (issue 22, item 7)."""
    orbit = KeplerOrbit(7.2e6, 0.01, 50.0, true_anomaly_deg=30.0, j2=False, mu_m3_s2=3.98600436e14)
    assert Environment.orbit_only(orbit).effects() == []
    defaults = Environment(orbit)
    assert defaults.effects() == ["magnetic field (dipole)", "gravity gradient", "eclipses (conical)"]  # no faces
    some = Environment.orbit_only(orbit, gravity_gradient=True, residual_dipole_Am2=(1e-3, 0.0, 0.0))
    for environment, shown in ((Environment.orbit_only(orbit), "no effect switched on"),
                               (some, "gravity gradient, residual dipole [0.001, 0, 0] A m²")):
        out = tmp_path / str(len(shown))
        tel = attsim.Mission("effects", np.diag([1.0, 2.0, 3.0]), (0.0, 0.0, 0.01), duration=2.0, max_step=0.5,
                             environment=environment, out_dir=out).run(compiled=False)
        meta = json.loads((out / "meta.json").read_text())
        assert meta["environment"]["effects"] == environment.effects() and meta["path"] == "objects"
        assert meta["environment"]["kepler"] | {"mean_anomaly_deg": 0} == {
            "semi_major_axis_m": 7.2e6, "eccentricity": 0.01, "inclination_deg": pytest.approx(50.0, abs=1e-12),
            "raan_deg": 0.0, "arg_perigee_deg": 0.0, "mean_anomaly_deg": 0, "j2": False, "mu_m3_s2": 3.98600436e14,
            "earth_radius_m": R_EARTH_M}
        assert f"<th>Environment</th><td>{shown}</td>" in attsim.report(tel, out / "r.html").read_text()
        if environment is some:  # the gravity gradient acts, no other disturbance does
            assert tel.df["tau_gg_x"].abs().max() > 0 and tel.df[["B_I_x", "tau_res_x"]].abs().max().max() == 0


def test_the_sun_from_one_evaluation_is_its_direction_and_distance():
    jd = 2460000.5 + np.linspace(0.0, 400.0, 9)
    direction, distance_m = sun_eci(jd)
    np.testing.assert_array_equal(direction, sun_direction_eci(jd))
    np.testing.assert_array_equal(distance_m, sun_distance_m(jd))
    assert np.all((0.98 * AU_M < distance_m) & (distance_m < 1.02 * AU_M))  # the Earth's orbit: e = 0.0167
