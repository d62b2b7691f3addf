"""Actuators against hand-computed torques."""

import numpy as np
import pytest

import attsim


@pytest.mark.parametrize("compiled", [False, True])
def test_two_magnetorquer_sets_add(tmp_path, compiled):
    # two sets held at m1 and m2 in a constant field: the body feels (m1 + m2) x B, not only the last command
    B = np.array([2e-5, -1e-5, 3e-5])
    m1, m2 = np.array([0.01, 0.0, 0.0]), np.array([0.0, 0.02, -0.01])
    mission = attsim.Mission("two_sets", np.eye(3), (0.0, 0.0, 0.0), duration=2.0, max_step=0.1, field=B,
                             out_dir=tmp_path)
    mission.add(attsim.Magnetorquer(1.0, name="a"))
    mission.add(attsim.Magnetorquer(1.0, name="b"))
    mission.add(attsim.CommandSchedule("a", [(0.0, m1)]))
    mission.add(attsim.CommandSchedule("b", [(0.0, m2)]))
    tel = mission.run(compiled=compiled)
    w_end = tel.df[["wx", "wy", "wz"]].iloc[-1].to_numpy()
    # the body turns by ~1e-6 rad in 2 s, so B moves by as much in body axes: agreement to ~1e-6 relative; either
    # set alone would be off by a factor of order one
    assert np.allclose(w_end, np.cross(m1 + m2, B) * 2.0, rtol=1e-5, atol=0)


def test_a_torque_segment_to_infinity_is_held_to_the_end_of_any_run(tmp_path):
    """The issue-22 outsider could not hold Basilisk's constant extTorquePntB_B for the whole run: an end at
    math.inf was refused, and an end tied to the duration at build time silently stopped under --duration."""
    import math

    from tests.paths.test_mission_loop import assert_same_run

    def make(out):
        m = attsim.Mission("held", np.diag([900.0, 800.0, 600.0]), (0.0, 0.0, 0.0), duration=20.0, telemetry_dt=5.0,
                           out_dir=out)
        m.add(attsim.TorqueSchedule([(0.0, math.inf, (0.0, 0.0, 0.3))]))  # about a principal axis: w_z = tau t / J
        return m

    python = make(tmp_path / "python").run(compiled=False)
    loop = make(tmp_path / "loop").run(compiled=True, backend="interpreted")
    assert_same_run(python, loop)
    assert python.df["wz"].iloc[-1] == pytest.approx(0.3 * 20.0 / 600.0, rel=1e-12)
    assert (python.df["schedule_tau_z"] == 0.3).all()
    for bad in (-math.inf, math.nan, "inf"):
        with pytest.raises(attsim.errors.InputError) as info:
            attsim.TorqueSchedule([(0.0, bad, (0.0, 0.0, 0.3))])
        assert info.value.field == "segments[0].t_end_s"
