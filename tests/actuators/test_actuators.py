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
