"""Every attsim exception survives being rebuilt from its args (SimPy re-raises a
process's error as ``type(exc)(*exc.args)``; pickling does the same), and errors
raised inside a running mission reach the caller as themselves."""

import pickle

import numpy as np
import pytest

import attsim
from attsim import errors

EXAMPLES = [
    errors.InputError("dt", "must be finite and > 0", "got -1"),
    errors.InputError("name", "must be a non-empty string"),
    errors.NonPhysicalInertiaError("inertia", "principal moments must obey the triangle inequality", "1 + 1 < 3"),
    errors.TorqueError("torque", "must return a finite 3-vector", "got 'abc'"),
    errors.GimbalLockError(12.5, 89.2, 1.0),
    errors.DivergenceError(40.0, "the state is no longer finite", 39.0, 1.0),
    errors.ControllerError("controller 'pd' raised at t = 3 s: RuntimeError('x')"),
    errors.AttsimError("plain message"),
]


@pytest.mark.parametrize("exc", EXAMPLES, ids=lambda e: type(e).__name__)
def test_rebuilt_from_args_keeps_type_message_and_fields(exc):
    rebuilt = type(exc)(*exc.args)
    assert type(rebuilt) is type(exc) and str(rebuilt) == str(exc)
    assert {k: v for k, v in vars(rebuilt).items()} == {k: v for k, v in vars(exc).items()}
    unpickled = pickle.loads(pickle.dumps(exc))
    assert type(unpickled) is type(exc) and str(unpickled) == str(exc)


def test_input_error_names_field_and_rule():
    exc = errors.InputError("dt", "must be finite and > 0", "got -1")
    assert str(exc) == "dt: must be finite and > 0 (got -1)" and isinstance(exc, ValueError)
    assert (exc.field, exc.rule, exc.detail) == ("dt", "must be finite and > 0", "got -1")


def test_gimbal_lock_inside_a_mission_is_a_gimbal_lock_error(tmp_path):
    # pitching at 0.5 rad/s from level reaches 89 deg at t ~ 3.1 s
    mission = attsim.Mission("lock", np.eye(3), (0.0, 0.5, 0.0), duration=10.0, method="euler321", max_step=0.01,
                             out_dir=tmp_path)
    with pytest.raises(attsim.GimbalLockError) as info:
        mission.run()
    assert 3.0 < info.value.t_s < 3.2 and info.value.pitch_deg > 88.9
    tel = attsim.load(tmp_path)
    assert tel.partial and "GimbalLockError" in tel.meta["stopped"] and tel.df.index[-1] <= info.value.t_s


def test_bad_scheduled_command_is_an_input_error_naming_the_actuator(tmp_path):
    mission = attsim.Mission("playback", np.eye(3), (0.0, 0.0, 0.0), duration=5.0, field=(2e-5, 0, 0), out_dir=tmp_path)
    mission.add(attsim.Magnetorquer(dipole_max_Am2=1.0))
    mission.add(attsim.CommandSchedule("mtq", [(1.0, (0.1, 0.2))]))
    with pytest.raises(attsim.InputError, match=r"^mtq_playback\.commands\[0\]: must have shape \(3,\)"):
        mission.run()  # refused when the mission is prepared, before anything runs


def test_sun_sensor_without_a_sun_source_is_an_input_error(tmp_path):
    mission = attsim.Mission("css", np.eye(3), (0.0, 0.0, 0.0), duration=5.0, out_dir=tmp_path)
    mission.add(attsim.SunSensor(rate_hz=1.0))
    with pytest.raises(attsim.InputError) as info:
        mission.run()
    assert info.value.field == "sun_inertial" and "sun sensor 'css'" in info.value.rule


# --- every public constructor refuses hostile values with an AttsimError naming the argument ------------------------

HOSTILE = {"None": None, "'abc'": "abc", "'0.1'": "0.1", "True": True, "nan": float("nan"), "inf": float("inf"),
           "-1": -1, "0": 0, "[1, 2]": [1, 2], "5": 5, "{}": {}, "1e308": 1e308}
# which of the hostile values each kind of argument may accept (all the others must be refused); a kind ending in
# "?" also accepts None, the argument's default
ACCEPTS = {
    "positive": {"5", "1e308"},
    "non_negative": {"0", "5", "1e308"},
    "real": {"-1", "0", "5", "1e308"},
    "vector": set(),
    "vector2": {"[1, 2]"},
    "per_axis_positive": {"5", "1e308"},
    "per_axis_non_negative": {"0", "5", "1e308"},
    "count": {"5"},
    "seed": {"0", "5"},
    "fraction": {"0"},
    "angle_0_180": {"0", "5"},
    "array": {"-1", "0", "[1, 2]", "5", "1e308"},
    "bool": {"True"},
    "choice": set(),
    "callable": set(),
    "sequence": {"[1, 2]"},
    "path": {"'abc'", "'0.1'"},
    "name": {"'abc'", "'0.1'"},
    "signed_fraction": {"-1", "0"},
    "end_or_inf": {"5", "1e308", "inf"},  # a time that may be math.inf: to the end of the run
}


def _wheel(**model):  # a reaction wheel with friction or imbalance
    return attsim.ReactionWheel("w", (0, 0, 1), 1e-4, 1e-3, 600.0, **model)


def _law(t_s, readings, parameters, memory, commands):  # the shape of a NumbaController law (never called here)
    commands[0] = 0.0


def _cases():
    import numba

    from attsim import inertia, studies
    from attsim.environment import (Environment, Face, FieldHistory, KeplerOrbit, MSISAtmosphere, TiltedDipole,
                                    make_tle)

    orbit = KeplerOrbit.circular(500.0, 50.0)
    law = numba.njit(_law)  # compiled lazily, on a first call that never comes
    J = np.diag([1.0, 2.0, 2.5])
    cases = [
        # actuators
        ("segments", "choice", lambda v: attsim.TorqueSchedule(v)),
        ("t_start_s", "non_negative", lambda v: attsim.TorqueSchedule([(v, 10.0, (0, 0, 1))])),
        ("t_end_s", "end_or_inf", lambda v: attsim.TorqueSchedule([(0.0, v, (0, 0, 1))])),
        ("torque", "vector", lambda v: attsim.TorqueSchedule([(0.0, 1.0, v)])),
        ("start_s", "non_negative", lambda v: attsim.TorqueSchedule.pulse_train(v, 2.0, 1.0, 3, (0, 0, 1))),
        ("period_s", "positive", lambda v: attsim.TorqueSchedule.pulse_train(0.0, v, 1.0, 3, (0, 0, 1))),
        ("width_s", "positive", lambda v: attsim.TorqueSchedule.pulse_train(0.0, 1e9, v, 3, (0, 0, 1))),
        ("count", "count", lambda v: attsim.TorqueSchedule.pulse_train(0.0, 2.0, 1.0, v, (0, 0, 1))),
        ("torque_Nm", "vector", lambda v: attsim.TorqueSchedule.pulse_train(0.0, 2.0, 1.0, 3, v)),
        ("commands", "choice", lambda v: attsim.CommandSchedule("mtq", v)),
        ("t_s", "non_negative", lambda v: attsim.CommandSchedule("mtq", [(v, (0, 0, 0))])),
        ("actuator", "name", lambda v: attsim.CommandSchedule(v, [(0.0, (0, 0, 0))])),
        ("position_m", "vector", lambda v: attsim.Thruster("t", v, (1, 0, 0), 1.0)),
        ("direction", "vector", lambda v: attsim.Thruster("t", (0, 1, 0), v, 1.0)),
        ("max_force_N", "positive", lambda v: attsim.Thruster("t", (0, 1, 0), (1, 0, 0), v)),
        ("min_on_time_s", "non_negative", lambda v: attsim.Thruster("t", (0, 1, 0), (1, 0, 0), 1.0, min_on_time_s=v)),
        ("dipole_max_Am2", "per_axis_positive", lambda v: attsim.Magnetorquer(v)),
        ("saturation", "choice", lambda v: attsim.Magnetorquer(1.0, saturation=v)),
        ("bar_axes", "vector?", lambda v: attsim.Magnetorquer(1.0, bar_axes=v)),
        ("axis", "vector", lambda v: attsim.ReactionWheel("w", v, 1e-4, 1e-3, 600.0)),
        ("inertia_kg_m2", "positive", lambda v: attsim.ReactionWheel("w", (0, 0, 1), v, 1e-3, 600.0)),
        ("max_torque_Nm", "positive", lambda v: attsim.ReactionWheel("w", (0, 0, 1), 1e-4, v, 600.0)),
        ("max_speed_rad_s", "positive", lambda v: attsim.ReactionWheel("w", (0, 0, 1), 1e-4, 1e-3, v)),
        ("speed0_rad_s", "real", lambda v: attsim.ReactionWheel("w", (0, 0, 1), 1e-4, 1e-3, 600.0, speed0_rad_s=v)),
        ("coulomb_friction_Nm", "non_negative", lambda v: _wheel(coulomb_friction_Nm=v)),
        ("viscous_friction_Nm_s_rad", "non_negative", lambda v: _wheel(viscous_friction_Nm_s_rad=v)),
        ("static_friction_Nm", "non_negative", lambda v: _wheel(static_friction_Nm=v, stribeck_speed_rad_s=(
            1.0 if type(v) in (int, float) and v > 0 else None))),
        ("stribeck_speed_rad_s", "positive", lambda v: _wheel(static_friction_Nm=1e-4, stribeck_speed_rad_s=v)),
        ("friction_band_rad_s", "positive?", lambda v: _wheel(coulomb_friction_Nm=1e-5, friction_band_rad_s=v)),
        ("static_imbalance_kg_m", "non_negative", lambda v: _wheel(static_imbalance_kg_m=v, position_m=(0.1, 0, 0))),
        ("dynamic_imbalance_kg_m2", "non_negative", lambda v: _wheel(dynamic_imbalance_kg_m2=v)),
        ("position_m", "vector?", lambda v: _wheel(dynamic_imbalance_kg_m2=1e-7, position_m=v)),
        # sensors
        ("rate_hz", "positive", lambda v: attsim.Gyro(v)),
        ("phase_s", "non_negative", lambda v: attsim.Gyro(1.0, phase_s=v)),
        ("arw_rad_sqrt_s", "non_negative", lambda v: attsim.Gyro(1.0, arw_rad_sqrt_s=v)),
        ("bias_rad_s", "vector", lambda v: attsim.Gyro(1.0, bias_rad_s=v)),
        ("bias_rw_rad_s_sqrt_s", "non_negative", lambda v: attsim.Gyro(1.0, bias_rw_rad_s_sqrt_s=v)),
        ("quantization_rad_s", "non_negative", lambda v: attsim.Gyro(1.0, quantization_rad_s=v)),
        ("noise_T", "non_negative", lambda v: attsim.Magnetometer(1.0, noise_T=v)),
        ("bias_T", "vector", lambda v: attsim.Magnetometer(1.0, bias_T=v)),
        ("quantization_T", "non_negative", lambda v: attsim.Magnetometer(1.0, quantization_T=v)),
        ("sun_inertial", "vector?", lambda v: attsim.SunSensor(1.0, sun_inertial=v)),
        ("eclipse", "callable?", lambda v: attsim.SunSensor(1.0, eclipse=v)),
        ("noise", "non_negative", lambda v: attsim.SunSensor(1.0, noise=v)),
        ("quantization", "non_negative", lambda v: attsim.SunSensor(1.0, quantization=v)),
        ("noise_arcsec", "per_axis_non_negative", lambda v: attsim.StarTracker(1.0, noise_arcsec=v)),
        # controllers
        ("function", "callable", lambda v: attsim.FunctionController(v, 1.0)),
        ("period_s", "positive", lambda v: attsim.FunctionController(lambda t, r: {}, v)),
        ("phase_s", "non_negative", lambda v: attsim.FunctionController(lambda t, r: {}, 1.0, phase_s=v)),
        ("sensors", "sequence", lambda v: attsim.FunctionController(lambda t, r: {}, 1.0, sensors=v)),
        ("actuators", "sequence", lambda v: attsim.FunctionController(lambda t, r: {}, 1.0, actuators=v)),
        ("gain", "positive", lambda v: attsim.BDot("mag", "mtq", v, 1.0)),
        ("form", "choice", lambda v: attsim.BDot("mag", "mtq", 1.0, 1.0, form=v)),
        ("momentum", "choice", lambda v: attsim.MomentumUnloading("mag", "mtq", 0.1, 1.0, momentum=v)),
        ("target_q", "vector", lambda v: attsim.QuaternionPD(v, 1.0, 1.0, 1.0, wheels=["w"])),
        ("kp", "positive", lambda v: attsim.QuaternionPD((1, 0, 0, 0), v, 1.0, 1.0, wheels=["w"])),
        ("ki", "non_negative", lambda v: attsim.QuaternionPD((1, 0, 0, 0), 1.0, 1.0, 1.0, wheels=["w"], ki=v,
                                                             integral_limit_rad_s=1.0)),
        ("integral_limit_rad_s", "positive", lambda v: attsim.QuaternionPD((1, 0, 0, 0), 1.0, 1.0, 1.0, wheels=["w"],
                                                                           ki=1e-3, integral_limit_rad_s=v)),
        ("kd", "positive", lambda v: attsim.MagneticPD("mag", "mtq", 1.0, v, 1.0)),
        ("dipole_compensation_Am2", "vector", lambda v: attsim.MagneticPD("mag", "mtq", 1.0, 1.0, 1.0,
                                                                          dipole_compensation_Am2=v)),
        ("decide", "callable", lambda v: attsim.NumbaController(v, 1.0, wheels=["w"])),
        ("period_s", "positive", lambda v: attsim.NumbaController(law, v, wheels=["w"])),
        ("parameters", "array", lambda v: attsim.NumbaController(law, 1.0, wheels=["w"], parameters=v)),
        ("memory_size", "count", lambda v: attsim.NumbaController(law, 1.0, wheels=["w"], memory_size=v)),
        ("wheels", "sequence", lambda v: attsim.NumbaController(law, 1.0, wheels=v)),
        ("reads", "sequence", lambda v: attsim.NumbaController(law, 1.0, wheels=["w"], reads=v)),
        # environment
        ("area_m2", "positive", lambda v: Face(v, (1, 0, 0), (0, 0, 0))),
        ("normal", "vector", lambda v: Face(0.01, v, (0, 0, 0))),
        ("cp_m", "vector", lambda v: Face(0.01, (1, 0, 0), v)),
        ("drag_coefficient", "positive", lambda v: Face(0.01, (1, 0, 0), (0, 0, 0), drag_coefficient=v)),
        ("specular", "fraction", lambda v: Face(0.01, (1, 0, 0), (0, 0, 0), specular=v, diffuse=0.0)),
        ("diffuse", "fraction", lambda v: Face(0.01, (1, 0, 0), (0, 0, 0), specular=0.0, diffuse=v)),
        ("side_m", "positive", lambda v: Face.cube(v)),
        ("cp_offset_m", "vector", lambda v: Face.cube(0.1, v)),
        ("orbit", "choice", lambda v: Environment(v)),
        ("field", "choice?", lambda v: Environment(orbit, field=v)),
        ("atmosphere", "choice?", lambda v: Environment(orbit, atmosphere=v)),
        ("shadow", "choice?", lambda v: Environment(orbit, shadow=v)),
        ("gravity_gradient", "bool", lambda v: Environment(orbit, gravity_gradient=v)),
        ("aerodynamic", "bool", lambda v: Environment(orbit, aerodynamic=v)),
        ("solar_pressure", "bool", lambda v: Environment(orbit, solar_pressure=v)),
        ("residual_dipole_Am2", "vector", lambda v: Environment(orbit, residual_dipole_Am2=v)),
        ("faces", "choice", lambda v: Environment(orbit, faces=v)),
        ("table_dt_s", "positive", lambda v: Environment(orbit, table_dt_s=v)),
        ("semi_major_axis_m", "positive", lambda v: KeplerOrbit(v, 0.0, 50.0)),
        ("eccentricity", "fraction", lambda v: KeplerOrbit(7e6, v, 50.0)),
        ("inclination_deg", "angle_0_180", lambda v: KeplerOrbit(7e6, 0.0, v)),
        ("raan_deg", "real", lambda v: KeplerOrbit(7e6, 0.0, 50.0, raan_deg=v)),
        ("arg_perigee_deg", "real", lambda v: KeplerOrbit(7e6, 0.0, 50.0, arg_perigee_deg=v)),
        ("mean_anomaly_deg", "real?", lambda v: KeplerOrbit(7e6, 0.0, 50.0, mean_anomaly_deg=v)),
        ("true_anomaly_deg", "real?", lambda v: KeplerOrbit(7e6, 0.0, 50.0, true_anomaly_deg=v)),
        ("mu_m3_s2", "choice", lambda v: KeplerOrbit(7e6, 0.0, 50.0, mu_m3_s2=v)),
        ("earth_radius_m", "choice", lambda v: KeplerOrbit(7e6, 0.0, 50.0, earth_radius_m=v)),
        ("r_m", "vector", lambda v: KeplerOrbit.from_state(v, (0.0, 7500.0, 0.0))),
        ("v_m_s", "vector", lambda v: KeplerOrbit.from_state((7e6, 0.0, 0.0), v)),
        ("t_s", "sequence", lambda v: FieldHistory(v, np.zeros((2, 3)))),
        ("B_inertial_T", "choice", lambda v: FieldHistory((0.0, 1.0), v)),
        ("interpolation", "choice", lambda v: FieldHistory((0.0, 1.0), np.zeros((2, 3)), interpolation=v)),
        ("model", "choice", lambda v: attsim.ReactionWheel.from_catalogue(v, "w", (1, 0, 0))),
        ("max_momentum_Nms", "choice", lambda v: attsim.ReactionWheel.from_catalogue("Honeywell HR16", "w",
                                                                                        (1, 0, 0), v)),
        ("max_speed_rad_s", "positive", lambda v: attsim.ReactionWheel.from_catalogue(
            "Blue Canyon RWP050", "w", (1, 0, 0), max_speed_rad_s=v)),
        ("model", "choice", lambda v: attsim.Magnetorquer.from_catalogue(v)),
        ("epoch", "choice", lambda v: KeplerOrbit(7e6, 0.0, 50.0, epoch=v)),
        ("j2", "bool", lambda v: KeplerOrbit(7e6, 0.0, 50.0, j2=v)),
        ("altitude_km", "positive", lambda v: KeplerOrbit.circular(v, 50.0)),
        ("inclination_deg", "angle_0_180", lambda v: make_tle(v, 0.001, 15.0, "2018-04-03T12:00:00")),
        ("eccentricity", "fraction", lambda v: make_tle(50.0, v, 15.0, "2018-04-03T12:00:00")),
        ("mean_motion_rev_day", "count", lambda v: make_tle(50.0, 0.001, v, "2018-04-03T12:00:00")),
        ("bstar", "signed_fraction", lambda v: make_tle(50.0, 0.001, 15.0, "2018-04-03T12:00:00", bstar=v)),
        ("satnum", "seed", lambda v: make_tle(50.0, 0.001, 15.0, "2018-04-03T12:00:00", satnum=v)),
        ("f107", "non_negative", lambda v: MSISAtmosphere(f107=v)),
        ("ap", "non_negative", lambda v: MSISAtmosphere(ap=v)),
        ("g10_nT", "real?", lambda v: TiltedDipole(v)),
        # inertia
        ("mass_kg", "positive", lambda v: inertia.PointMass(v)),
        ("size_m", "vector", lambda v: inertia.SolidCuboid(1.0, v)),
        ("radius_m", "positive", lambda v: inertia.SolidCylinder(1.0, v, 1.0)),
        ("length_m", "positive", lambda v: inertia.SolidCylinder(1.0, 0.1, v)),
        ("inner_radius_m", "fraction", lambda v: inertia.HollowCylinder(1.0, v, 1.0, 1.0)),
        ("radius_m", "positive", lambda v: inertia.SphericalShell(1.0, v)),
        ("semi_axes_m", "vector", lambda v: inertia.SolidEllipsoid(1.0, v)),
        ("size_m", "vector2", lambda v: inertia.ThinPlate(1.0, v)),
        ("shape", "choice", lambda v: inertia.Part(v)),
        ("position_m", "vector", lambda v: inertia.Part(inertia.PointMass(1.0), position_m=v)),
        ("q_body_part", "vector", lambda v: inertia.Part(inertia.PointMass(1.0), q_body_part=v)),
        ("parts", "choice", lambda v: inertia.CompositeBody(v)),
        ("mass_kg", "real", lambda v: inertia.parallel_axis(np.eye(3), v, (1, 0, 0))),
        ("offset_m", "vector", lambda v: inertia.parallel_axis(np.eye(3), 1.0, v)),
        ("inertia", "choice", lambda v: inertia.check_inertia(v)),
        ("allow_nonphysical", "bool", lambda v: inertia.check_inertia([2, 2, 8], allow_nonphysical=v)),
        # the mission and propagation
        ("inertia", "choice", lambda v: attsim.Mission("m", v, (0, 0, 0))),
        ("omega0", "vector", lambda v: attsim.Mission("m", J, v)),
        ("q0", "vector", lambda v: attsim.Mission("m", J, (0, 0, 0), q0=v)),
        ("duration", "positive", lambda v: attsim.Mission("m", J, (0, 0, 0), duration=v)),
        ("method", "choice", lambda v: attsim.Mission("m", J, (0, 0, 0), method=v)),
        ("max_step", "positive", lambda v: attsim.Mission("m", J, (0, 0, 0), max_step=v)),
        ("telemetry_dt", "positive", lambda v: attsim.Mission("m", J, (0, 0, 0), telemetry_dt=v)),
        ("seed", "seed", lambda v: attsim.Mission("m", J, (0, 0, 0), seed=v)),
        ("out_dir", "path?", lambda v: attsim.Mission("m", J, (0, 0, 0), out_dir=v)),
        ("field", "vector?", lambda v: attsim.Mission("m", J, (0, 0, 0), field=v)),
        ("field_dt", "positive?", lambda v: attsim.Mission("m", J, (0, 0, 0), field_dt=v)),
        ("environment", "choice?", lambda v: attsim.Mission("m", J, (0, 0, 0), environment=v)),
        ("allow_nonphysical", "bool", lambda v: attsim.Mission("m", J, (0, 0, 0), allow_nonphysical=v)),
        ("t_end", "positive", lambda v: attsim.propagate(J, (0.1, 0, 0), t_end=v, dt=0.5)),
        ("dt", "positive", lambda v: attsim.propagate(J, (0.1, 0, 0), t_end=1.0, dt=v)),
        ("record_every", "count", lambda v: attsim.propagate(J, (0.1, 0, 0), t_end=1.0, dt=0.5, record_every=v)),
        ("torque", "vector?", lambda v: attsim.propagate(J, (0.1, 0, 0), t_end=1.0, dt=0.5, torque=v)),
        ("duration", "positive", lambda v: studies.Propagation("p", J, (0, 0, 0), duration=v)),
        ("max_step", "positive", lambda v: studies.Propagation("p", J, (0, 0, 0), max_step=v)),
        ("telemetry_every", "count", lambda v: studies.Propagation("p", J, (0, 0, 0), telemetry_every=v)),
        ("method", "choice", lambda v: studies.Propagation("p", J, (0, 0, 0), method=v)),
        ("omega0", "vector", lambda v: studies.Propagation("p", J, v)),
    ]
    return cases


def test_every_public_constructor_refuses_hostile_values_naming_the_argument(recwarn):
    failures = []
    for field, kind, build in _cases():
        for label, value in HOSTILE.items():
            try:
                build(value)
            except errors.AttsimError as exc:
                if field not in str(exc):
                    failures.append(f"{field}={label}: {type(exc).__name__} does not name it: {exc}")
            except Exception as exc:  # noqa: BLE001 - the point: nothing but an AttsimError may escape
                failures.append(f"{field}={label}: raw {type(exc).__name__}: {exc}")
            else:
                if label not in ACCEPTS[kind.rstrip("?")] and not (kind.endswith("?") and value is None):
                    failures.append(f"{field}={label}: accepted")
    assert not failures, "\n".join(failures)


def test_load_and_report_refuse_what_is_not_a_path(tmp_path):
    for value in HOSTILE.values():
        if isinstance(value, str):
            continue
        with pytest.raises(errors.InputError, match="^path: must be a directory path"):
            attsim.load(value)
    tel = attsim.Mission("r", np.eye(3), (0.0, 0.0, 0.1), duration=1.0, out_dir=tmp_path / "r").run()
    for value in HOSTILE.values():
        if not isinstance(value, str) and value is not None:
            with pytest.raises(errors.InputError, match="^path: must be a file path"):
                attsim.report(tel, value)
    with pytest.raises(errors.InputError, match=r"^criteria\[0\]: must be \(label, value, ok, bound\)"):
        attsim.report(tel, tmp_path / "x.html", criteria=["abc"])
    with pytest.raises(errors.InputError, match="^criteria: must be a sequence"):
        attsim.report(tel, tmp_path / "x.html", criteria=5)
    with pytest.raises(errors.InputError, match="^path: must be a file that can be written"):
        attsim.report(tel, tmp_path / "r" / "meta.json" / "report.html")
