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
