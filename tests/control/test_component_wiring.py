"""A law's arguments are what it needs (issue 20, items 3 and 6): a sensor, an actuator or an estimator of the wrong
kind, a wheel listed twice, an estimator never added, an unloading gain beyond its limit and a magnetic law without a
field were run to the end (rad/s read as tesla, NaN commands, a halved axis, a rate left exactly unchanged) or crashed
with a raw ValueError, KeyError or AttributeError. Each is refused by name, on both paths."""

import re

import numba
import numpy as np
import pytest

import attsim
from attsim import modes
from attsim.environment import Environment, KeplerOrbit

J = np.diag([0.06, 0.055, 0.02])
FIELD_T = (2e-5, -1e-5, 3e-5)
PATHS = pytest.mark.parametrize("compiled", [False, True], ids=["python", "compiled"])


def _mission(tmp_path, name="wiring", **kw):
    return attsim.Mission(name, J, (0.01, -0.02, 0.015), duration=3.0, out_dir=tmp_path / name, **kw)


def _hardware(m):
    """A mission's usual parts, added: gyro, star tracker, magnetometer, magnetorquers, three wheels."""
    gyro = m.add(attsim.Gyro(1.0, arw_rad_sqrt_s=1e-5))
    tracker = m.add(attsim.StarTracker(1.0, noise_arcsec=5.0))
    mag = m.add(attsim.Magnetometer(1.0, noise_T=1e-8))
    mtq = m.add(attsim.Magnetorquer(0.2))
    wheels = [m.add(attsim.ReactionWheel(f"rw_{a}", d, 2e-5, 1e-3, 600.0)) for a, d in zip("xyz", np.eye(3))]
    return gyro, tracker, mag, mtq, wheels


def _refused(field, *fragments):
    return pytest.raises(attsim.InputError, match=f"^{re.escape(field)}: .*" + ".*".join(map(re.escape, fragments)))


QPD = dict(target_q=(1.0, 0.0, 0.0, 0.0), kp=1e-3, kd=1e-2, period_s=1.0)
KNOWN = dict(attitude_source="st", rate_source="gyro")  # flight-like sources, by name

# (law built from the mission's parts given as objects, the argument refused, what the refusal says it needs)
WRONG_KIND = [
    (lambda g, st, mag, mtq, w: attsim.BDot(g, mtq, gain=1.0, period_s=1.0), "magnetometer", "magnetometer", "Gyro"),
    (lambda g, st, mag, mtq, w: attsim.BDot(mag, w[0], gain=1.0, period_s=1.0), "magnetorquer", "magnetorquers",
     "ReactionWheel"),
    (lambda g, st, mag, mtq, w: attsim.MomentumUnloading(g, mtq, gain_per_s=0.01, period_s=1.0), "magnetometer",
     "magnetometer", "Gyro"),
    (lambda g, st, mag, mtq, w: attsim.MomentumUnloading(mag, w[0], gain_per_s=0.01, period_s=1.0), "magnetorquer",
     "magnetorquers", "ReactionWheel"),
    (lambda g, st, mag, mtq, w: attsim.QuaternionPD(**QPD, wheels=w, attitude_source=g, rate_source=g),
     "attitude_source", "an attitude source", "Gyro"),
    (lambda g, st, mag, mtq, w: attsim.QuaternionPD(**QPD, wheels=w, attitude_source=st, rate_source=st),
     "rate_source", "a rate source", "StarTracker"),
    (lambda g, st, mag, mtq, w: attsim.QuaternionPD(**QPD, wheels=[*w[:2], mtq], attitude_source=st, rate_source=g),
     "wheels", "reaction wheels", "Magnetorquer"),
    (lambda g, st, mag, mtq, w: attsim.QuaternionPD(**QPD, magnetorquer=mtq, magnetometer=g, attitude_source=st,
                                                    rate_source=g), "magnetometer", "magnetometer", "Gyro"),
    (lambda g, st, mag, mtq, w: attsim.QuaternionPD(**QPD, magnetorquer=w[0], magnetometer=mag, attitude_source=st,
                                                    rate_source=g), "magnetorquer", "magnetorquers", "ReactionWheel"),
    (lambda g, st, mag, mtq, w: attsim.MagneticPD(mag, mtq, 1e-6, 1e-4, 1.0, attitude_source=mag, rate_source=g),
     "attitude_source", "an attitude source", "Magnetometer"),
    (lambda g, st, mag, mtq, w: attsim.MagneticPD(st, mtq, 1e-6, 1e-4, 1.0, attitude_source=st, rate_source=g),
     "magnetometer", "magnetometer", "StarTracker"),
]


@pytest.mark.parametrize("make, field, needs, got", WRONG_KIND)
def test_a_component_of_the_wrong_kind_is_refused_when_the_law_is_made(tmp_path, make, field, needs, got):
    m = _mission(tmp_path, field=FIELD_T)
    with _refused(field, needs, f"(got {got} "):
        make(*_hardware(m))


@PATHS
@pytest.mark.parametrize("make, field, needs", [
    # the same laws with their parts given by name: checked when the mission prepares them, on both paths
    (lambda: attsim.BDot("gyro", "mtq", gain=1.0, period_s=1.0), "magnetometer", "a magnetometer"),
    (lambda: attsim.MomentumUnloading("gyro", "mtq", gain_per_s=0.01, period_s=1.0), "magnetometer", "a magnetometer"),
    # the compiled path's raw KeyError 'rw_x'; the Python path's 'bad command' at the first cycle
    (lambda: attsim.MomentumUnloading("mag", "rw_x", gain_per_s=0.01, period_s=1.0), "magnetorquer", "magnetorquers"),
    # every command NaN (compiled) or numba's TypingError (Python)
    (lambda: attsim.QuaternionPD(**QPD, wheels=["rw_x", "rw_y", "rw_z"], attitude_source="gyro", rate_source="gyro"),
     "attitude_source", "an attitude source"),
    (lambda: attsim.QuaternionPD(**QPD, wheels=["rw_x", "rw_y", "mag"], **KNOWN), "wheels", "reaction wheels"),
    (lambda: attsim.MagneticPD("mag", "mtq", 1e-6, 1e-4, 1.0, attitude_source="mag", rate_source="gyro"),
     "attitude_source", "an attitude source"),
    (lambda: attsim.FunctionController(lambda t, r: {}, 1.0, sensors=["rw_x"]), "sensors", "a sensor"),
    (lambda: attsim.FunctionController(lambda t, r: {}, 1.0, actuators=["gyro"]), "actuators", "actuators it can"),
])
def test_a_part_given_by_name_of_the_wrong_kind_is_refused_on_both_paths(tmp_path, compiled, make, field, needs):
    env = Environment(KeplerOrbit.circular(550.0, 97.6), field="dipole")
    m = _mission(tmp_path, environment=env)
    _hardware(m)
    law = m.add(make())
    with _refused(field, f"controller {law.name!r} needs {needs}"):
        m.run(compiled=compiled)


@PATHS
def test_a_wheel_listed_twice_is_refused_on_both_paths(tmp_path, compiled):
    # the Python path halved that axis's torque, the compiled one raised numpy's broadcast ValueError
    m = _mission(tmp_path)
    gyro, tracker, _, _, wheels = _hardware(m)
    with _refused("wheels", "QuaternionPD 'qpd' lists 'rw_x' more than once"):
        attsim.QuaternionPD(**QPD, wheels=[*wheels, wheels[0]], attitude_source=tracker, rate_source=gyro)
    m.add(attsim.QuaternionPD(**QPD, wheels=[*wheels, "rw_x"], attitude_source=tracker, rate_source=gyro))
    with _refused("wheels", "controller 'qpd' lists 'rw_x' more than once"):  # once by name, once as itself
        m.run(compiled=compiled)


@numba.njit
def _hold(t_s, readings, parameters, memory, commands):
    pass


@pytest.mark.parametrize("make, field, rule", [
    (lambda w, mtq: attsim.NumbaController(_hold, 1.0, wheels=[w[0], w[1], w[0]]), "wheels", "more than once"),
    (lambda w, mtq: attsim.NumbaController(_hold, 1.0, wheels=[mtq]), "wheels", "needs reaction wheels"),
    (lambda w, mtq: attsim.NumbaController(_hold, 1.0, magnetorquer=w[0]), "magnetorquer", "needs magnetorquers"),
])
def test_a_numba_law_needs_distinct_wheels_or_magnetorquers(tmp_path, make, field, rule):
    _, _, _, mtq, wheels = _hardware(_mission(tmp_path))
    with _refused(field, rule):
        make(wheels, mtq)


@PATHS
def test_a_numba_law_given_magnetorquers_as_a_wheel_by_name_is_refused_on_both_paths(tmp_path, compiled):
    m = _mission(tmp_path)
    _hardware(m)
    m.add(attsim.NumbaController(_hold, 1.0, wheels=["rw_x", "mtq"], name="law"))
    with _refused("wheels", "controller 'law' needs reaction wheels", "(got Magnetorquer 'mtq')"):
        m.run(compiled=compiled)


@PATHS
@pytest.mark.parametrize("role", ["attitude_source", "rate_source", "mode condition"])
def test_an_estimator_used_but_never_added_is_refused_by_name(tmp_path, compiled, role):
    # the compiled path's raw "ValueError: <MEKF object> is not in list", the Python path's AttributeError '_k'
    m = _mission(tmp_path)
    gyro, tracker, _, _, wheels = _hardware(m)
    lost = attsim.MEKF(gyro, star_tracker=tracker, name="lost")
    added = m.add(attsim.MEKF(gyro, star_tracker=tracker, name="added"))
    sources = {"attitude_source": added, "rate_source": added}
    if role != "mode condition":
        sources[role] = lost
    law = m.add(attsim.QuaternionPD(**QPD, wheels=wheels, **sources))
    if role == "mode condition":
        m.add(attsim.ModeManager([("point", [law]), ("coast", [])],
                                 [("point", "coast", modes.rate_above(0.5, source=lost))], "point", 1.0))
        refusal = _refused("transitions[0]", "its rate condition reads estimator 'lost', which is not in the mission")
    else:
        refusal = _refused(role, "controller 'qpd' uses 'lost', which is not in the mission (add it with mission.add)")
    with refusal:
        m.run(compiled=compiled)


def test_an_estimator_named_by_a_string_is_refused_for_the_object(tmp_path):
    m = _mission(tmp_path)
    gyro, tracker, _, _, wheels = _hardware(m)
    m.add(attsim.MEKF(gyro, star_tracker=tracker))
    m.add(attsim.QuaternionPD(**QPD, wheels=wheels, attitude_source="mekf", rate_source=gyro))
    with _refused("attitude_source", "reads estimator 'mekf' by name: give the estimator itself"):
        m.run()


@pytest.mark.parametrize("gain_per_s, period_s", [(1e300, 1.0), (2.0, 1.0), (10.5, 0.1)])
def test_an_unloading_gain_beyond_one_per_period_is_refused_naming_the_limit(gain_per_s, period_s):
    # 1e300: the Python path refused the NaN dipole mid-run, the compiled path clipped it and ran to the end
    with _refused("gain_per_s", f"must be at most 1 / period_s = {1.0 / period_s:g} 1/s", f"(got {gain_per_s!r})"):
        attsim.MomentumUnloading(attsim.Magnetometer(1.0), attsim.Magnetorquer(0.2), gain_per_s=gain_per_s,
                                 period_s=period_s)


@PATHS
def test_an_unloading_gain_at_its_limit_runs_and_unloads(tmp_path, compiled):
    m = _mission(tmp_path, field=FIELD_T)
    mag = m.add(attsim.Magnetometer(1.0))
    mtq = m.add(attsim.Magnetorquer(1e3))
    m.add(attsim.ReactionWheel("rw", (0.0, 0.0, 1.0), 2e-5, 1e-3, 600.0, speed0_rad_s=300.0))
    m.add(attsim.MomentumUnloading(mag, mtq, gain_per_s=1.0, period_s=1.0))
    df = m.run(compiled=compiled).df
    assert np.isfinite(df.to_numpy()).all() and np.abs(df[["mtq_m_x", "mtq_m_y"]].to_numpy()).max() > 0.0


def _magnetic_laws(mag, mtq, gyro, tracker):
    return {
        "BDot": attsim.BDot(mag, mtq, gain=1e4, period_s=1.0),
        "MomentumUnloading": attsim.MomentumUnloading(mag, mtq, gain_per_s=0.01, period_s=1.0),
        "MagneticPD": attsim.MagneticPD(mag, mtq, 1e-6, 1e-4, 1.0, attitude_source=tracker, rate_source=gyro),
        "QuaternionPD": attsim.QuaternionPD(**QPD, magnetorquer=mtq, magnetometer=mag, attitude_source=tracker,
                                            rate_source=gyro),
    }


@PATHS
@pytest.mark.parametrize("law", ["BDot", "MomentumUnloading", "MagneticPD", "QuaternionPD"])
def test_a_magnetic_law_without_a_field_is_refused(tmp_path, compiled, law):
    # without field= or an environment's field model, the dipole made no torque: the rate stayed exactly as it was
    no_field = Environment(KeplerOrbit.circular(550.0, 97.6), field=None)
    m = _mission(tmp_path, **({"environment": no_field} if law == "MagneticPD" else {}))
    gyro, tracker, mag, mtq, _ = _hardware(m)
    component = m.add(_magnetic_laws(mag, mtq, gyro, tracker)[law])
    with _refused("field", f"controller {component.name!r} ({law}) needs a magnetic field"):
        m.run(compiled=compiled)


@PATHS
def test_an_estimator_on_a_magnetometer_without_a_field_is_refused(tmp_path, compiled):
    m = _mission(tmp_path, field=(0.0, 0.0, 0.0))  # a zero field is no field: the reference would be zero
    gyro, _, mag, _, _ = _hardware(m)
    m.add(attsim.MEKF(gyro, magnetometer=mag, q0=(1.0, 0.0, 0.0, 0.0)))
    with _refused("field", "estimator 'mekf' updates with magnetometer 'mag' against the mission's field"):
        m.run(compiled=compiled)


@PATHS
def test_a_magnetic_law_with_a_field_still_detumbles(tmp_path, compiled):
    m = attsim.Mission("detumble", J, (0.05, -0.04, 0.03), duration=60.0, field=FIELD_T, out_dir=tmp_path / "d")
    m.add(attsim.BDot(m.add(attsim.Magnetometer(1.0)), m.add(attsim.Magnetorquer(0.2)), gain=1e4, period_s=1.0))
    w = m.run(compiled=compiled).df[["wx", "wy", "wz"]].to_numpy()
    assert np.linalg.norm(w[-1]) < np.linalg.norm(w[0])
