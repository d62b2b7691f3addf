"""BodyTorque, the ideal body-torque actuator (Basilisk's extForceTorque): the torque commanded acts as given, on both
paths; its checks; the laws that drive it."""

import numpy as np
import pytest

import attsim
from attsim import modes

from tests.control.test_command_delay import clock_law
from tests.paths.test_mission_loop import assert_same_run, both_ways

J_DIAG = np.diag([2.0, 3.0, 4.0])


def _spin_up(out):
    m = attsim.Mission("spin_up", J_DIAG, (0.0, 0.0, 0.0), duration=3.0, max_step=0.1, telemetry_dt=0.5, out_dir=out)
    m.add(attsim.BodyTorque("thrust"))
    m.add(attsim.CommandSchedule("thrust", [(1.0, (0.0, 0.0, 0.02)), (2.0, (0.0, 0.0, 0.0))]))
    return m


def test_a_commanded_torque_acts_as_given_on_both_paths(tmp_path):
    python, compiled = both_ways(tmp_path, _spin_up)
    assert_same_run(python, compiled)
    df = compiled.df
    # about a principal axis from rest: w_z = tau / J_z over the second the torque is held (RK4 is exact here)
    assert df.loc[1.5, "wz"] == pytest.approx(0.02 / 4.0 * 0.5, rel=1e-14)
    assert df.loc[3.0, "wz"] == pytest.approx(0.02 / 4.0, rel=1e-14)
    assert df.loc[1.5, "thrust_tau_z"] == 0.02 and df.loc[2.5, "thrust_tau_z"] == 0.0
    assert np.all(df[["wx", "wy"]].to_numpy() == 0.0)


@pytest.mark.parametrize("command", [(1.0, 2.0), (np.nan, 0.0, 0.0), "abc", (np.inf, 0.0, 0.0)])
def test_a_bad_command_is_refused_naming_the_actuator(tmp_path, command):
    m = attsim.Mission("bad", J_DIAG, (0.0, 0.0, 0.0), duration=1.0, out_dir=tmp_path)
    m.add(attsim.BodyTorque("thrust"))
    m.add(attsim.CommandSchedule("thrust", [(0.5, command)]))
    with pytest.raises(attsim.InputError, match="thrust"):
        m.run(backend="interpreted")


def test_a_name_must_be_given():
    with pytest.raises(attsim.InputError, match="name"):
        attsim.BodyTorque("")


@pytest.mark.parametrize("law", ["qpd", "mrp"])
def test_a_law_drives_it_with_the_torque_it_decides(tmp_path, law):
    m = attsim.Mission("law", J_DIAG, (0.01, -0.02, 0.03), duration=1.0, max_step=0.1, telemetry_dt=0.5,
                       out_dir=tmp_path)
    bt = m.add(attsim.BodyTorque())
    if law == "qpd":
        controller = m.add(attsim.QuaternionPD((1.0, 0.0, 0.0, 0.0), kp=0.1, kd=2.0, period_s=0.5, body_torque=bt,
                                               attitude_source=attsim.TRUTH, rate_source=attsim.TRUTH))
    else:
        controller = m.add(attsim.MRPFeedback(0.1, 2.0, 0.5, body_torque=bt, target_q=(1.0, 0.0, 0.0, 0.0),
                                              attitude_source=attsim.TRUTH, rate_source=attsim.TRUTH))
    df = m.run(backend="interpreted").df
    for t in (0.0, 0.5):
        row = df.loc[t]
        expected = controller.torque(row[["qw", "qx", "qy", "qz"]].to_numpy(), row[["wx", "wy", "wz"]].to_numpy(), t)
        assert row[["body_torque_tau_x", "body_torque_tau_y", "body_torque_tau_z"]].to_numpy() == pytest.approx(
            expected, rel=1e-15, abs=0.0)


@pytest.mark.parametrize("kwargs", [{}, {"wheels": ["rw"], "body_torque": "bt"},
                                    {"magnetorquer": "mtq", "magnetometer": "mag", "body_torque": "bt"}])
def test_a_law_drives_exactly_one_kind_of_actuator(kwargs):
    with pytest.raises(attsim.InputError, match="actuators"):
        attsim.QuaternionPD((1.0, 0.0, 0.0, 0.0), kp=1.0, kd=1.0, period_s=1.0, **kwargs)


def test_a_law_refuses_a_body_torque_that_is_not_one(tmp_path):
    m = attsim.Mission("wrong", J_DIAG, (0.0, 0.0, 0.0), duration=1.0, out_dir=tmp_path)
    m.add(attsim.ReactionWheel("rw", (1.0, 0.0, 0.0), 1e-3, 1e-2, 100.0))
    m.add(attsim.MRPFeedback(0.1, 1.0, 0.5, body_torque="rw", target_q=(1.0, 0.0, 0.0, 0.0),
                             attitude_source=attsim.TRUTH, rate_source=attsim.TRUTH))
    with pytest.raises(attsim.InputError, match="body_torque"):
        m.run(backend="interpreted")


def _commanded(out):
    """Body torques commanded with and without delays, by a user's law, a built-in one, a mode and a schedule."""
    m = attsim.Mission("commanded", J_DIAG, (0.01, -0.02, 0.03), duration=3.0, max_step=0.1, telemetry_dt=0.1,
                       out_dir=out)
    late = m.add(attsim.BodyTorque("late"))  # decides at 0.2, 0.7, (1.2 holds), 1.7, 2.2, (2.7 holds)
    m.add(attsim.NumbaController(clock_law, 0.5, body_torque=late, command_delay_s=0.3, phase_s=0.2, name="late_law"))
    mrp = m.add(attsim.BodyTorque("mrp"))
    m.add(attsim.MRPFeedback(0.1, 1.0, 0.5, body_torque=mrp, target_q=(1.0, 0.0, 0.0, 0.0), command_delay_s=0.5,
                             attitude_source=attsim.TRUTH, rate_source=attsim.TRUTH))
    now = m.add(attsim.BodyTorque("now"))
    law = m.add(attsim.NumbaController(clock_law, 0.5, body_torque=now, name="now_law"))
    m.add(modes.ModeManager([("on", [law]), ("off", [])], [("on", "off", modes.at_time(2.0))], initial="on",
                            period_s=0.5))
    m.add(attsim.BodyTorque("played"))
    m.add(attsim.CommandSchedule("played", [(1.0, (0.01, 0.0, -0.02))]))
    return m


def _columns(name, what):
    return [f"{name}_{what}_{a}" for a in "xyz"]


def test_the_commanded_columns_hold_the_torque_decided_at_each_row_on_both_paths(tmp_path):
    python = _commanded(tmp_path / "python").run(compiled=False)
    loop = _commanded(tmp_path / "loop").run(compiled=True, backend="interpreted")  # compiled: tests/paths
    assert_same_run(python, loop)
    for df in (python.df, loop.df):
        assert list(df.columns[df.columns.str.startswith("late_")]) == _columns("late", "tau") + _columns("late",
                                                                                                            "tau_decided")
        # the command decided at t is applied from t + delay: the applied columns are the commanded ones shifted
        for name, rows in (("late", 3), ("mrp", 5)):
            applied, commanded = df[_columns(name, "tau")].to_numpy(), df[_columns(name, "tau_decided")].to_numpy()
            assert np.array_equal(applied[rows:], commanded[:-rows]) and np.all(applied[:rows] == 0.0)
            assert np.any(commanded[:rows] != 0.0)
        cmd = df["late_tau_decided_x"]  # the last decision at or before each row; zero before the first
        decided = [0.2, 0.7, 1.7, 2.2]
        for t in np.round(cmd.index.to_numpy(), 9):
            due = [d for d in decided if d <= t + 1e-9]
            assert cmd.loc[t] == pytest.approx(due[-1] if due else 0.0, abs=1e-15), t
        # without a delay the two are the same; a mode that stops the law zeroes both
        for name in ("now", "played"):
            assert np.array_equal(df[_columns(name, "tau")].to_numpy(), df[_columns(name, "tau_decided")].to_numpy())
        assert df.loc[1.9, "now_tau_decided_x"] == 1.5 and np.all(df.loc[2.0:, _columns("now", "tau_decided")] == 0.0)
        assert df.loc[0.9, "played_tau_decided_z"] == 0.0 and df.loc[1.0, "played_tau_decided_z"] == -0.02


def test_a_bad_delayed_torque_is_refused_when_it_is_decided(tmp_path):
    m = attsim.Mission("bad", J_DIAG, (0.0, 0.0, 0.0), duration=1.0, out_dir=tmp_path)
    m.add(attsim.BodyTorque("thrust"))
    m.add(attsim.FunctionController(lambda t, readings: {"thrust": (1.0, 2.0)}, 0.5, actuators=["thrust"],
                                    command_delay_s=0.5, name="short"))
    with pytest.raises(attsim.errors.ControllerError, match=r"'short' at t = 0 s: bad command for 'thrust'"):
        m.run(backend="interpreted")
