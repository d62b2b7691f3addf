"""Reaction wheels at their limits, checked against the physics of the gyrostat."""

import numpy as np
import pytest

import attsim


def _run_wheel_into_its_limit(tmp_path, max_step, axis=(0.0, 0.0, 1.0), body=(0.04, 0.045, 0.05)):
    # the audit's case: one wheel of 5e-3 kg m^2, limit 100 rad/s, held command 0.01 N m. The body counter-rotates,
    # so the wheel's speed relative to the body grows faster than tau / I_w: by tau (1/I_w + a.J^-1 a).
    mission = attsim.Mission("limit", np.diag(body), (0.0, 0.0, 0.0), duration=60.0, max_step=max_step,
                             telemetry_dt=0.05, out_dir=tmp_path / f"run_{max_step}")
    wheel = mission.add(attsim.ReactionWheel("rw", axis, inertia_kg_m2=5e-3, max_torque_Nm=0.05, max_speed_rad_s=100.0))
    mission.add(attsim.CommandSchedule("rw", [(0.0, 0.01)]))
    tel = mission.run()
    a = np.asarray(axis) / np.linalg.norm(axis)
    rate = 0.01 * (1 / 5e-3 + a @ np.linalg.inv(np.diag(body)) @ a)  # d(speed)/dt before the stop, rad/s^2
    return tel, wheel, rate


@pytest.mark.parametrize("max_step", [0.05, 0.13, 0.3])  # the body ends at 9.1 rad/s: 0.3 s is 0.87 rad a step
def test_wheel_speed_relative_to_the_body_stops_at_its_limit(tmp_path, max_step):
    tel, _, rate = _run_wheel_into_its_limit(tmp_path, max_step)
    speed = tel.df["rw_speed"].to_numpy()
    assert speed.max() <= 100.0 + rate * max_step  # within one step's change
    assert speed.max() >= 100.0 - 1e-9  # and it does reach the limit
    stops = tel.events[(tel.events["kind"] == "saturation") & (tel.events["what"] == "speed")]
    assert len(stops) == 1
    t_expected = 100.0 / rate  # constant torque, so the relative speed grows linearly from rest
    assert t_expected <= stops["t"].iloc[0] <= t_expected + max_step
    after = tel.df.index > stops["t"].iloc[0]
    assert np.all(tel.df.loc[after, "rw_torque"] == 0.0)
    # with the motor stopped nothing acts: body and wheel speeds stay constant
    assert np.ptp(speed[after]) < 1e-9


def test_wheel_on_a_skewed_axis_stops_at_its_limit(tmp_path):
    tel, _, rate = _run_wheel_into_its_limit(tmp_path, 0.25, axis=(0.6, 0.0, 0.8), body=(0.04, 0.045, 0.05))
    assert 100.0 - 1e-9 <= tel.df["rw_speed"].max() <= 100.0 + rate * 0.25


def test_total_momentum_is_conserved_through_the_stop(tmp_path):
    tel, _, _ = _run_wheel_into_its_limit(tmp_path, 0.1)
    from attsim import rotations

    df = tel.df
    J = np.diag([0.04, 0.045, 0.05])
    H_B = df[["wx", "wy", "wz"]].to_numpy() @ J.T + np.outer(df["rw_h"].to_numpy(), [0.0, 0.0, 1.0])
    H_I = rotations.quat_rotate(df[["qw", "qx", "qy", "qz"]].to_numpy(), H_B)
    assert np.abs(H_I).max() < 1e-12  # everything starts at rest: the total stays zero


def test_command_away_from_the_limit_ends_speed_saturation(tmp_path):
    mission = attsim.Mission("reverse", np.diag([0.04, 0.045, 0.05]), (0.0, 0.0, 0.0), duration=40.0, max_step=0.1,
                             telemetry_dt=0.1, out_dir=tmp_path)
    mission.add(attsim.ReactionWheel("rw", (0, 0, 1), inertia_kg_m2=5e-3, max_torque_Nm=0.05, max_speed_rad_s=100.0))
    mission.add(attsim.CommandSchedule("rw", [(0.0, 0.02), (30.0, 0.03), (35.0, -0.01)]))  # limit reached at 22.7 s
    tel = mission.run()
    speed_events = tel.events[tel.events["what"] == "speed"]
    assert list(speed_events["kind"]) == ["saturation", "saturation_end"]
    assert speed_events["t"].iloc[1] == 35.0  # pushing further at 30 s is refused; pulling back at 35 s is not
    assert tel.df.loc[32.0, "rw_torque"] == 0.0 and tel.df.loc[36.0, "rw_torque"] == -0.01
