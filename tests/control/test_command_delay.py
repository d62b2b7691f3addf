"""Command latency (``command_delay_s``): a controller's commands act that long after the cycle that decided them,
on both paths; one control period is Basilisk's task-order delay (mrpFeedback -> extForceTorque in one task)."""

import sys
from pathlib import Path

import numba
import numpy as np
import pytest

import attsim
from attsim import modes, rotations

from tests.paths.test_mission_loop import assert_same_run, both_ways

ROOT = Path(__file__).resolve().parents[2]
J_DIAG = np.diag([2.0, 3.0, 4.0])


@numba.njit
def clock_law(t_s, readings, parameters, memory, commands):
    """Commands its own cycle time (N m about x); holds (NaN) every third cycle."""
    memory[0] += 1.0
    if memory[0] % 3.0 != 0.0:
        commands[0], commands[1], commands[2] = t_s, 0.0, 0.0


def _clocked(out, delay_s):
    m = attsim.Mission("delay", J_DIAG, (0.0, 0.0, 0.0), duration=3.0, max_step=0.1, telemetry_dt=0.1, out_dir=out)
    bt = m.add(attsim.BodyTorque())
    m.add(attsim.NumbaController(clock_law, 0.5, body_torque=bt, command_delay_s=delay_s))
    return m


@pytest.mark.parametrize("delay_s", [0.3, 0.5, 1.2])
def test_commands_act_their_delay_after_the_cycle_on_both_paths(tmp_path, delay_s):
    # the loop's interpreted backend (its compiled form: tests/paths, body_torques_and_delayed_commands)
    python = _clocked(tmp_path / "python", delay_s).run(compiled=False)
    compiled = _clocked(tmp_path / "loop", delay_s).run(compiled=True, backend="interpreted")
    assert_same_run(python, compiled)
    held = compiled.df["body_torque_tau_x"]
    decided = [0.0, 0.5, 1.5, 2.0, 3.0]  # the cycles at 1.0 and 2.5 hold (NaN)
    for t in np.round(held.index.to_numpy(), 9):
        due = [d for d in decided if d + delay_s <= t + 1e-9]
        assert held.loc[t] == pytest.approx(due[-1] if due else 0.0, abs=1e-15), t
    law = next(c for c in compiled.meta["components"] if c["type"] == "NumbaController")
    assert law["command_delay_s"] == delay_s


def test_no_delay_is_the_law_as_before(tmp_path):
    held = _clocked(tmp_path, 0.0).run(backend="interpreted").df["body_torque_tau_x"]
    assert held.loc[0.5] == 0.5 and held.loc[1.2] == 0.5 and held.loc[1.5] == 1.5


@pytest.mark.parametrize("value, rule", [(-0.1, ">= 0"), ("0.1", "number"), (np.nan, "finite"), (40.0, "64")])
def test_a_bad_delay_is_refused_by_name(value, rule):
    with pytest.raises(attsim.InputError, match="command_delay_s") as caught:
        attsim.NumbaController(clock_law, 0.5, body_torque="bt", command_delay_s=value)
    assert rule in str(caught.value)


def test_a_law_a_mode_manager_switches_refuses_a_delay(tmp_path):
    m = attsim.Mission("modes", J_DIAG, (0.0, 0.0, 0.0), duration=1.0, out_dir=tmp_path)
    bt = m.add(attsim.BodyTorque())
    law = m.add(attsim.QuaternionPD((1.0, 0.0, 0.0, 0.0), kp=1.0, kd=1.0, period_s=0.5, body_torque=bt,
                                    attitude_source=attsim.TRUTH, rate_source=attsim.TRUTH, command_delay_s=0.5))
    m.add(modes.ModeManager([("hold", [law])], [], initial="hold", period_s=0.5))
    with pytest.raises(attsim.InputError, match="command_delay_s.*ModeManager"):
        m.run(backend="interpreted")


def test_one_control_period_of_delay_is_basilisks_task_order():
    pytest.importorskip("Basilisk.simulation.extForceTorque")
    sys.path.insert(0, str(ROOT))
    from tools.peers.basilisk_body_torque import run_mrp_to_body_torque

    inertia, q0, w0 = np.diag([900.0, 800.0, 600.0]), rotations.axis_angle_to_quat([0.3, -0.5, 0.8], 1.2), \
        (0.001, -0.01, 0.03)
    basilisk = run_mrp_to_body_torque(inertia, q0, w0, (1.0, 0.0, 0.0, 0.0), 3.5, 30.0, 0.1, 60.0)
    worst = {}
    for delay_s in (0.0, 0.1):
        m = attsim.Mission("bsk", inertia, w0, q0=q0, duration=60.0, max_step=0.1, telemetry_dt=0.1)
        bt = m.add(attsim.BodyTorque())
        m.add(attsim.MRPFeedback(3.5, 30.0, 0.1, body_torque=bt, target_q=(1.0, 0.0, 0.0, 0.0),
                                 attitude_source=attsim.TRUTH, rate_source=attsim.TRUTH, command_delay_s=delay_s))
        df = m.run(in_memory=True, backend="interpreted").df
        worst[delay_s] = np.degrees(rotations.quat_angle_between(df[["qw", "qx", "qy", "qz"]].to_numpy(),
                                                                 basilisk["q_wxyz"])).max()
    assert worst[0.1] < 1e-9 < 1e-3 < worst[0.0], worst


def test_a_delayed_magnetic_law_runs_alike_both_ways(tmp_path):
    def build(out):
        m = attsim.Mission("bdot", J_DIAG * 1e-3, (0.05, -0.1, 0.08), duration=8.0, max_step=0.1, telemetry_dt=0.5,
                           field=lambda t: 3e-5 * np.array([np.cos(2e-3 * t), 0.0, np.sin(2e-3 * t)]), out_dir=out)
        mag = m.add(attsim.Magnetometer(rate_hz=2.0))
        mtq = m.add(attsim.Magnetorquer(dipole_max_Am2=0.05))
        m.add(attsim.BDot(mag, mtq, gain=5e4, period_s=1.0, command_delay_s=0.4))
        return m

    python, compiled = both_ways(tmp_path, build)
    assert_same_run(python, compiled)
    dipole = compiled.df["mtq_m_x"]
    assert dipole.loc[1.0] == 0.0 and dipole.loc[1.5] != 0.0  # decided at 1 s (the first difference), acts at 1.4 s
