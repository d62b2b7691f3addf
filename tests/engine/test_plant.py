"""The running plant: divergence is caught where it happens, not written to telemetry."""

import math

import numpy as np
import pytest

import attsim
from attsim.errors import DivergenceError, ImplausibleValueWarning

STATE = ["qw", "qx", "qy", "qz", "wx", "wy", "wz"]


def _assert_stopped_cleanly(tmp_path, info):
    tel = attsim.load(tmp_path)
    assert tel.partial and "DivergenceError" in tel.meta["stopped"]
    assert np.all(np.isfinite(tel.df[STATE].to_numpy()))  # no NaN row reached the disk
    assert tel.df.index[-1] <= info.value.t_s
    return tel


def test_a_step_too_coarse_for_the_spin_stops_the_run_naming_max_step(tmp_path):
    with pytest.warns(ImplausibleValueWarning, match="^omega0: "):  # 20 rad/s on 2.5 kg m^2: warned of, still run
        mission = attsim.Mission("fast_spin", np.diag([1.0, 2.0, 2.5]), (0.0, 0.5, 20.0), duration=60.0,
                                 max_step=1.0, out_dir=tmp_path)
    with pytest.raises(DivergenceError, match=r"^max_step: the plant diverged between t = 0 s and 1 s") as info:
        mission.run()
    assert info.value.max_step_s == 1.0 and info.value.t_s == 1.0
    assert isinstance(info.value, attsim.AttsimError)
    _assert_stopped_cleanly(tmp_path, info)


def test_a_torque_that_spins_the_body_past_the_step_stops_the_run_at_that_time(tmp_path):
    # 1 N m on I = 1 kg m^2: |omega| max_step exceeds pi once omega > pi / 5 rad/s, i.e. after ~0.63 s
    mission = attsim.Mission("spin_up", np.eye(3), (0.0, 0.0, 0.0), duration=100.0, max_step=5.0, telemetry_dt=1.0,
                             out_dir=tmp_path)
    mission.add(attsim.TorqueSchedule([(0.0, 100.0, (0.0, 0.0, 1.0))]))
    with pytest.raises(DivergenceError) as info:
        mission.run()
    assert info.value.t_s == 1.0 and "half a turn per step" in info.value.reason
    tel = _assert_stopped_cleanly(tmp_path, info)
    assert list(tel.df.index) == [0.0]


def test_a_resolved_fast_spin_is_not_refused(tmp_path):
    with pytest.warns(ImplausibleValueWarning, match="^omega0: "):
        mission = attsim.Mission("resolved", np.diag([1.0, 2.0, 2.5]), (0.0, 0.5, 20.0), duration=5.0,
                                 max_step=0.001, telemetry_dt=1.0, out_dir=tmp_path)
    tel = mission.run()
    assert not tel.partial
    J = np.array([1.0, 2.0, 2.5])
    h_end = np.linalg.norm(J * tel.df[["wx", "wy", "wz"]].iloc[-1].to_numpy())  # torque-free: |H| is conserved
    assert math.isclose(h_end, math.hypot(2.0 * 0.5, 2.5 * 20.0), rel_tol=1e-9)
