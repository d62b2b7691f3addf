"""Mode management: transitions on conditions, controllers stopped and started, both paths alike."""

import numpy as np
import pytest

import attsim
from attsim import modes
from attsim.environment import Environment, Face, KeplerOrbit
from attsim.guidance.targets import NadirPointing, SunPointing

from tests.paths.test_mission_loop import J, _orbit_environment, _wheels, assert_same_run, both_ways


def detumble_then_point(out):
    # detumbled and pointing from ~97 s; safe mode from 200 s, 100 s shown
    m = attsim.Mission("modes", J, (0.015, -0.01, 0.012), duration=300.0, telemetry_dt=2.0, seed=2,
                       environment=_orbit_environment(), out_dir=out)
    wheels = _wheels(m, max_torque_Nm=2e-3)
    mag = m.add(attsim.Magnetometer(2.0, noise_T=2e-8, name="mag"))
    mtq = m.add(attsim.Magnetorquer(0.5))
    gyro = m.add(attsim.Gyro(10.0, arw_rad_sqrt_s=1e-5))
    tracker = m.add(attsim.StarTracker(2.0, noise_arcsec=10.0))
    mekf = m.add(attsim.MEKF(gyro, star_tracker=tracker))
    bdot = m.add(attsim.BDot(mag, mtq, gain=1e6, period_s=0.5))
    point = m.add(attsim.QuaternionPD(kp=5e-4, kd=9e-3, period_s=0.5, wheels=wheels, target=NadirPointing(),
                                      attitude_source=mekf, rate_source=mekf))
    m.add(attsim.ModeManager(
        modes=[("detumble", [bdot]), ("point", [point]), ("safe", [bdot])],
        transitions=[("detumble", "point", modes.rate_below(0.01, dwell_s=5.0, source=mekf)),
                     ("*", "safe", modes.at_time(200.0)),
                     ("point", "detumble", modes.rate_above(0.2, source=attsim.TRUTH))],
        initial="detumble", period_s=1.0))
    return m


def test_modes_run_alike_on_both_paths(tmp_path):
    python, compiled = both_ways(tmp_path, detumble_then_point)
    assert_same_run(python, compiled)


def test_a_detumble_hands_over_to_pointing_then_a_command_to_safe_mode(tmp_path):
    tel = detumble_then_point(tmp_path).run()
    df, events = tel.df, tel.events
    switches = events[events["kind"] == "mode"]
    assert list(switches["after"]) == ["point", "safe"] and list(switches["before"]) == ["detumble", "point"]
    t_point = float(switches["t"].iloc[0])
    rate = np.linalg.norm(df[["wx", "wy", "wz"]].to_numpy(), axis=1)
    # the switch came after the estimated rate stayed below 0.01 rad/s for 5 s (the estimate follows the truth
    # to a fraction of a percent here), not before
    before = (df.index >= t_point - 5.0) & (df.index <= t_point)
    assert rate[before].max() < 0.0105 and rate[df.index < t_point - 10.0].max() > 0.01
    row = df.index[df.index >= t_point][0]  # the first row at or after the switch
    assert df["mode"].loc[row] == 1.0 and df["mode"].iloc[-1] == 2.0
    assert tel.meta["modes"] == ["detumble", "point", "safe"]
    # in pointing the magnetorquers are off (B-dot stopped, its dipole zeroed); in safe mode the wheels are
    pointing = (df.index > t_point) & (df.index < 200.0)
    assert np.abs(df.loc[pointing, ["mtq_m_x", "mtq_m_y", "mtq_m_z"]].to_numpy()).max() == 0.0
    assert np.abs(df.loc[df.index > 200.0, [f"rw_{a}_torque" for a in "xyz"]].to_numpy()).max() == 0.0
    assert switches["t"].iloc[1] == 200.0 and "at time 200" in switches["reason"].iloc[1]


@pytest.mark.parametrize("build, rule", [
    (lambda c: attsim.ModeManager([("a", [c])], [("a", "b", modes.timeout(1.0))], "a", 1.0),
     "^transitions\\[0\\]: to must name a mode"),
    (lambda c: attsim.ModeManager([("a", [c])], [], "b", 1.0), "^initial: must name a mode"),
    (lambda c: attsim.ModeManager([("a", [c]), ("a", [c])], [], "a", 1.0), "^modes: must be one or more modes"),
    (lambda c: attsim.ModeManager([("a", [c])], [("a", "a", "soon")], "a", 1.0), "^transitions\\[0\\]: condition"),
    (lambda c: modes.rate_below(0.01, source=attsim.Gyro(1.0)), "^source: must be an estimator"),
    (lambda c: modes.wheel_speed_above(1.5), "^fraction: must be in"),
    (lambda c: modes.pointing_error_below(5.0, controller=c), "^controller: must be an attitude law"),
    (lambda c: modes.pointing_error_below(200.0, controller=attsim.QuaternionPD((1, 0, 0, 0), kp=1.0, kd=1.0,
                                                                                period_s=1.0, wheels=["w"])),
     "^threshold_deg: must be at most 180"),
])
def test_bad_mode_logic_is_refused_naming_the_rule(build, rule):
    controller = attsim.BDot(attsim.Magnetometer(1.0), attsim.Magnetorquer(0.1), gain=1.0, period_s=1.0)
    with pytest.raises(attsim.InputError, match=rule):
        build(controller)


def test_eclipse_and_wheel_speed_conditions(tmp_path):
    # the orbit of the other tests started 111 deg further on: it enters the Earth's shadow at ~60 s, so 120 s see
    # the switch after its 20 s dwell (from its start the orbit took 1850 s to get there: 15 times the cost)
    orbit = KeplerOrbit.circular(600.0, 97.8, epoch="2024-03-20T00:00:00", mean_anomaly_deg=111.0)
    environment = Environment(orbit, field="dipole", faces=Face.cube(0.1, (1e-3, -1e-3, 2e-3)),
                              residual_dipole_Am2=(1e-3, 0.0, 5e-4))

    def build(out):
        m = attsim.Mission("eclipse", J, (0.0, 0.0, 0.0), duration=120.0, telemetry_dt=10.0, environment=environment,
                           out_dir=out)
        wheels = _wheels(m, max_torque_Nm=1e-4, max_speed_rad_s=300.0)
        hold = m.add(attsim.QuaternionPD(kp=1e-4, kd=2e-3, period_s=1.0, wheels=wheels, target=NadirPointing(),
                                         attitude_source=attsim.TRUTH, rate_source=attsim.TRUTH))
        m.add(attsim.ModeManager(modes=[("sun", [hold]), ("dark", []), ("saturated", [])],
                                 transitions=[("sun", "dark", modes.in_eclipse(dwell_s=20.0)),
                                              ("*", "saturated", modes.wheel_speed_above(0.5))],
                                 initial="sun", period_s=10.0))
        return m

    python, compiled = both_ways(tmp_path, build)
    assert_same_run(python, compiled)
    switches = compiled.events[compiled.events["kind"] == "mode"]
    lit = compiled.df["lit"]
    assert len(switches)  # the mission is long enough to switch
    t = float(switches["t"].iloc[0])
    assert switches["after"].iloc[0] in ("dark", "saturated")
    if switches["after"].iloc[0] == "dark":
        assert lit.loc[t] == 0.0 and lit.loc[t - 20.0] == 0.0


def five_saturated_bdots_switched_off(out):
    m = attsim.Mission("off", J, (0.05, -0.04, 0.06), duration=12.0, telemetry_dt=1.0, environment=_orbit_environment(),
                       out_dir=out)
    bdots = []
    for k in range(5):
        mag = m.add(attsim.Magnetometer(1.0, name=f"mag{k}"))
        mtq = m.add(attsim.Magnetorquer(1e-3, name=f"mtq{k}"))
        bdots.append(m.add(attsim.BDot(mag, mtq, gain=1e9, period_s=1.0, name=f"bdot{k}")))
    m.add(attsim.ModeManager(modes=[("detumble", bdots), ("off", [])], transitions=[("detumble", "off",
                                                                                   modes.at_time(10.0))],
                             initial="detumble", period_s=1.0))
    return m


def test_controllers_stopped_by_a_switch_are_zeroed_in_the_missions_order_on_both_paths(tmp_path):
    python, compiled = both_ways(tmp_path, five_saturated_bdots_switched_off)
    assert_same_run(python, compiled)
    for tel in (python, compiled):
        ends = tel.events[(tel.events["t"] == 10.0) & (tel.events["kind"] == "saturation_end")]
        assert list(ends["actuator"]) == [f"mtq{k}" for k in range(5)]


def magnetorquers_taking_turns(out, threshold_deg=20.0):
    """Three laws on one set of magnetorquers in three modes (Advitiy's chain, fast): B-dot, Sun pointing, nadir;
    an MEKF without a star tracker (TRIAD start) feeds the pointing laws; Sun pointing ends on its own error."""
    m = attsim.Mission("turns", J, (0.02, -0.015, 0.01), duration=900.0, telemetry_dt=2.0, seed=4,
                       environment=_orbit_environment(), out_dir=out)
    mag = m.add(attsim.Magnetometer(1.0, noise_T=5e-8, name="mag"))
    mtq = m.add(attsim.Magnetorquer(2.0, saturation="scale"))
    gyro = m.add(attsim.Gyro(1.0, arw_rad_sqrt_s=1e-5))
    css = m.add(attsim.SunSensor(1.0, noise=0.005))
    mekf = m.add(attsim.MEKF(gyro, magnetometer=mag, sun_sensor=css, sigma_attitude0_deg=2.0))
    bdot = m.add(attsim.BDot(mag, mtq, gain=5e5, period_s=1.0))
    sun = m.add(attsim.QuaternionPD(kp=2e-3, kd=3e-2, period_s=1.0, magnetorquer=mtq, magnetometer=mag,
                                    target=SunPointing((0, 0, 1), (1, 0, 0), (0, 0, 1)), attitude_source=mekf,
                                    rate_source=mekf, dipole_compensation_Am2=(1e-3, 0.0, -1e-3), name="sun_pd"))
    nadir = m.add(attsim.MagneticPD(mag, mtq, kp=2e-3, kd=3e-2, period_s=1.0, attitude_source=mekf,
                                    rate_source=mekf, name="nadir_pd"))
    m.add(attsim.ModeManager(
        modes=[("detumble", [bdot]), ("sun", [sun]), ("nadir", [nadir])],
        transitions=[("detumble", "sun", modes.rate_below(0.02, dwell_s=10.0, source=mekf)),
                     ("sun", "nadir", modes.pointing_error_below(threshold_deg, dwell_s=20.0, controller=sun))],
        initial="detumble", period_s=1.0))
    return m


def test_laws_taking_turns_on_one_actuator_run_alike_on_both_paths(tmp_path):
    python, compiled = both_ways(tmp_path, magnetorquers_taking_turns)
    assert_same_run(python, compiled)
    switches = compiled.events[compiled.events["kind"] == "mode"]
    assert list(switches["after"]) == ["sun", "nadir"]  # every mode ran, and its law commanded the torquers


def test_the_pointing_columns_follow_the_law_running_now(tmp_path):
    tel = magnetorquers_taking_turns(tmp_path).run()
    df, events = tel.df, tel.events
    sun_s, nadir_s = (float(events[(events["kind"] == "mode") & (events["after"] == m)]["t"].iloc[0])
                      for m in ("sun", "nadir"))
    assert df.loc[: sun_s - 1.0, "att_err_deg"].isna().all()  # detumbling: nothing to point at
    # then the reference is the Sun's, then the orbit frame's, each computed here independently
    env = _orbit_environment()
    t = df.index.to_numpy()
    r, v = env.orbit.state_eci(t)
    z = -r / np.linalg.norm(r, axis=1, keepdims=True)
    y = -np.cross(r, v)
    y /= np.linalg.norm(y, axis=1, keepdims=True)
    nadir_ref = np.stack([np.cross(y, z), y, z], axis=-1)
    from scipy.spatial.transform import Rotation

    q_ref = df[["q_ref_w", "q_ref_x", "q_ref_y", "q_ref_z"]].to_numpy()
    in_nadir = t >= nadir_s
    R_nadir = Rotation.from_quat(q_ref[in_nadir], scalar_first=True).as_matrix()
    assert np.abs(R_nadir - nadir_ref[in_nadir]).max() < 1e-6
    in_sun = (t >= sun_s) & (t < nadir_s)
    boresight = Rotation.from_quat(q_ref[in_sun], scalar_first=True).apply([0.0, 0.0, 1.0])
    sun_dir = np.array([env_sun(tel, tt) for tt in t[in_sun]])
    assert np.degrees(np.arccos(np.clip(np.sum(boresight * sun_dir, axis=1), -1, 1))).max() < 0.02  # the formula


def env_sun(tel, t_s):
    """The Sun's direction (ECI) at ``t_s`` from the run's epoch, by the Astronomical Almanac's low-precision
    formulae (0.01 deg), not attsim's."""
    jd = 2451545.0 + (np.datetime64(tel.meta["environment"]["epoch"]) - np.datetime64("2000-01-01T12:00:00")) \
        / np.timedelta64(1, "s") / 86400.0 + t_s / 86400.0
    n = jd - 2451545.0
    L, g = np.radians((280.460 + 0.9856474 * n) % 360), np.radians((357.528 + 0.9856003 * n) % 360)
    lam = L + np.radians(1.915) * np.sin(g) + np.radians(0.020) * np.sin(2 * g)
    eps = np.radians(23.439 - 4e-7 * n)
    return np.array([np.cos(lam), np.cos(eps) * np.sin(lam), np.sin(eps) * np.sin(lam)])


def test_two_laws_that_can_run_together_may_not_share_an_actuator(tmp_path):
    m = magnetorquers_taking_turns(tmp_path)
    manager = next(c for c in m.components if isinstance(c, attsim.ModeManager))
    sun = next(c for c in m.components if getattr(c, "name", "") == "sun_pd")
    manager.modes[0] = manager.modes[0]._replace(controllers=(*manager.modes[0].controllers, sun))
    with pytest.raises(attsim.InputError, match="^actuators: actuator 'mtq' is commanded by controllers 'bdot' and "
                                                "'sun_pd', which can run at the same time"):
        m.run()


def test_a_conditions_words_carry_its_unit():
    """The issue-25 outsider read 'rate below 0.0174533 for 10 s' in its mode switch's reason: no unit."""
    from attsim import modes

    assert modes.rate_below(np.radians(1.0), dwell_s=10.0, source=attsim.TRUTH).describe() == \
        "rate below 0.0174533 rad/s (1 deg/s) for 10 s"
    assert modes.rate_above(0.1, source=attsim.TRUTH).describe() == "rate above 0.1 rad/s (5.72958 deg/s)"
    assert modes.wheel_speed_above(0.8).describe() == "wheel speed above 0.8 of its speed limit"
    assert modes.timeout(60.0).describe() == "timeout 60 s in the mode"
    assert modes.at_time(800.0).describe() == "at time 800 s"
    assert modes.Condition(modes.POINTING_BELOW, 0.5, 5.0).describe() == "pointing error below 0.5 deg for 5 s"
