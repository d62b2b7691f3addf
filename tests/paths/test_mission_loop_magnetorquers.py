"""Magnetorquer arrays, a user's law commanding each bar, and torque-bar feed-forward in the compiled loop against the
Python path."""

import numba
import numpy as np
import pytest

import attsim
from attsim.control.allocation import pyramid_axes

from tests.paths.test_mission_loop import J, assert_same_run, both_ways

S = 0.70710678
BARS = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [S, S, 0.0]]  # Basilisk's GtMatrix_B columns


def _field(t):
    t = np.asarray(t)
    return 3e-5 * np.stack([np.cos(2e-2 * t), np.sin(2e-2 * t), 0.3 + 0 * t], axis=-1)


def arrays_detumbling(out):
    m = attsim.Mission("bars", J * 0.05, (0.05, -0.04, 0.06), duration=60.0, max_step=0.1, telemetry_dt=1.0, seed=5,
                       out_dir=out, field=_field)
    mag = m.add(attsim.Magnetometer(rate_hz=1.0, noise_T=5e-8))
    bars = m.add(attsim.Magnetorquer((0.004, 0.006, 0.006, 0.002), bar_axes=BARS, name="bars"))  # clip
    m.add(attsim.BDot(mag, bars, gain=2e3, period_s=1.0))
    mag2 = m.add(attsim.Magnetometer(rate_hz=0.5, noise_T=5e-8, name="mag2"))
    plane = m.add(attsim.Magnetorquer(0.003, saturation="scale", bar_axes=[[1, 1, 0], [0, 0, 1]], name="plane"))
    m.add(attsim.BDot(mag2, plane, gain=1e-3, period_s=2.0, form="direction", name="bdot2", command_delay_s=1.0))
    m.add(attsim.Magnetorquer(0.01, bar_axes=BARS, name="played"))
    m.add(attsim.CommandSchedule("played", [(5.0, (0.02, 0.0, 0.0)), (20.0, (0.0, 0.0, 0.0))]))
    # a steering given as Basilisk's dipoleMapping takes it: the fourth bar idle, the third at half
    m.add(attsim.Magnetorquer(0.01, bar_axes=BARS, name="steered",
                              steering_matrix=[[1, 0, 0], [0, 1, 0], [0, 0, 0.5], [0, 0, 0]]))
    m.add(attsim.CommandSchedule("steered", [(3.0, (0.004, -0.02, 0.012)), (30.0, (0.0, 0.0, 0.0))]))
    return m


def feedforward(out, law="qpd", unload_period_s=1.0, law_period_s=0.5, delay_s=0.0, momentum="total"):
    """Four wheels unloaded by four bars, the wheel law feeding their torque forward; the laws' periods and delays
    differ, so that at a shared instant the Python path must bring the unloading law up to date first."""
    m = attsim.Mission("ff", J, (0.002, -0.001, 0.001), duration=20.0, telemetry_dt=0.5, out_dir=out, seed=2,
                       field=_field)
    wheels = [m.add(attsim.ReactionWheel(f"rw{k}", axis, 2e-5, 1e-3, 600.0, speed0_rad_s=s0))
              for k, (axis, s0) in enumerate(zip(pyramid_axes(4), (40.0, -10.0, 5.0, 80.0)))]
    mag = m.add(attsim.Magnetometer(2.0, name="mag", noise_T=1e-8))
    mtb = m.add(attsim.Magnetorquer((0.2, 0.1, 0.2, 0.15), bar_axes=BARS, name="mtb"))
    m.add(attsim.MomentumUnloading(mag, mtb, gain_per_s=0.5, period_s=unload_period_s, command_delay_s=delay_s,
                                   momentum=momentum))
    sources = {"attitude_source": attsim.TRUTH, "rate_source": attsim.TRUTH}
    if law == "qpd":
        m.add(attsim.QuaternionPD((1, 0, 0, 0), kp=5e-4, kd=9e-3, period_s=law_period_s, wheels=wheels,
                                  magnetorquer_feedforward=mtb, magnetometer=mag, command_delay_s=delay_s, **sources))
    else:
        m.add(attsim.MRPFeedback(1e-3, 1e-2, law_period_s, wheels, target_q=(1, 0, 0, 0), allocation="clip",
                                 null_space_gain_Nm_s=1e-6, wheel_speed_target_rad_s=(30.0, -30.0, 30.0, -30.0),
                                 magnetorquer_feedforward=mtb, magnetometer=mag, **sources))
    return m


def test_magnetorquer_arrays_run_alike(tmp_path):
    python, compiled = both_ways(tmp_path, arrays_detumbling)
    assert_same_run(python, compiled)
    columns = compiled.df.columns
    assert "bars_bar4" in columns and "plane_bar2" in columns and "plane_bar3" not in columns
    steered = compiled.df.loc[10.0, ["steered_bar1", "steered_bar2", "steered_bar3", "steered_bar4",
                                     "steered_m_x", "steered_m_y", "steered_m_z"]].to_numpy()
    assert np.array_equal(steered, [0.004, -0.01, 0.006, 0.0, 0.004, -0.01, 0.006])  # bar 2 at its limit
    assert (compiled.events["kind"] == "saturation").sum() > 2


@pytest.mark.parametrize("law, unload_period_s, law_period_s, delay_s, momentum", [
    ("qpd", 1.0, 0.5, 0.0, "total"),
    ("qpd", 0.5, 1.0, 0.5, "relative"),
    ("mrp", 0.5, 1.0, 0.0, "relative"),
], ids=["qpd_fast", "qpd_slow_delayed", "mrp_slow"])
def test_feedforward_runs_alike(tmp_path, law, unload_period_s, law_period_s, delay_s, momentum):
    python, compiled = both_ways(tmp_path, lambda out: feedforward(out, law, unload_period_s, law_period_s, delay_s,
                                                                   momentum))
    assert_same_run(python, compiled)
    assert np.abs(compiled.df[["mtb_bar1", "mtb_bar2", "mtb_bar3", "mtb_bar4"]].to_numpy()).max() > 1e-3


@numba.njit
def bar_law(t_s, readings, parameters, memory, commands):
    """Entry k: amplitude ``parameters[k]`` times cos(0.7 t + k); every fourth cycle leaves every entry NaN (each
    vector holds, whole)."""
    memory[0] += 1.0
    for k in range(commands.shape[0]):
        if memory[0] % 4.0 != 0.0:
            commands[k] = parameters[k] * np.cos(0.7 * t_s + k)


BAR_LIMITS = (0.004, 0.006, 0.006, 0.002)
BAR_AMPLITUDES = (0.006, 0.003, -0.008, 0.003)


def bars_commanded_one_by_one(out):
    """Users' laws commanding each bar's dipole (magnetorquer_command="bars"): four bars clipping, two in a plane
    scaling with a body torque after them and a delay, three body-axis bars given by name and stopped by a mode."""
    m = attsim.Mission("bar_commands", J * 0.05, (0.01, -0.02, 0.015), duration=6.0, max_step=0.1, telemetry_dt=0.5,
                       out_dir=out, field=_field)
    bars = m.add(attsim.Magnetorquer(BAR_LIMITS, bar_axes=BARS, name="bars"))
    m.add(attsim.NumbaController(bar_law, 0.5, magnetorquer=bars, magnetorquer_command="bars",
                                 parameters=BAR_AMPLITUDES, name="bar_law"))
    plane = m.add(attsim.Magnetorquer(0.003, saturation="scale", bar_axes=[[1, 1, 0], [0, 0, 1]], name="plane"))
    bt = m.add(attsim.BodyTorque("bt"))
    m.add(attsim.NumbaController(bar_law, 1.0, magnetorquer=plane, body_torque=bt, magnetorquer_command="bars",
                                 parameters=(0.004, -0.002, 1e-6, -2e-6, 3e-6), command_delay_s=0.5,
                                 name="plane_law"))
    m.add(attsim.Magnetorquer(0.01, name="mtq"))
    axes_law = m.add(attsim.NumbaController(bar_law, 0.5, magnetorquer="mtq", magnetorquer_command="bars",
                                            parameters=(0.02, 0.005, -0.005), name="axes_law"))
    # stopped at 4.2 s, an instant no law shares (at a shared one the paths may log its events in another order)
    m.add(attsim.ModeManager([("on", [axes_law]), ("off", [])], [("on", "off", attsim.modes.at_time(4.0))],
                             initial="on", period_s=0.3))
    return m


def test_a_users_law_commands_each_bar_alike_on_both_paths(tmp_path):
    python, compiled = both_ways(tmp_path, bars_commanded_one_by_one)
    assert_same_run(python, compiled)
    df = compiled.df
    bars = [f"bars_bar{k + 1}" for k in range(4)]
    G = np.array(BARS).T / np.linalg.norm(BARS, axis=1)
    for i, t in enumerate(df.index):  # a cycle at every row: each bar its own command, clipped at its own limit
        if (i + 1) % 4 != 0:
            wanted = np.array(BAR_AMPLITUDES) * np.cos(0.7 * t + np.arange(4))
            assert np.array_equal(df.loc[t, bars].to_numpy(), np.clip(wanted, -np.array(BAR_LIMITS), BAR_LIMITS))
        else:  # the law left every entry NaN: every bar holds
            assert np.array_equal(df.loc[t, bars].to_numpy(), df[bars].iloc[i - 1].to_numpy())
        assert np.allclose(df.loc[t, ["bars_m_x", "bars_m_y", "bars_m_z"]].to_numpy(), G @ df.loc[t, bars].to_numpy(),
                           rtol=0, atol=1e-18)
    assert (np.abs(df[bars].to_numpy()) == BAR_LIMITS).any(axis=0).tolist() == [True, False, True, True]
    # two bars in a plane scaled together, half a second after the decision, the body torque after them
    decided = np.array([0.004, -0.002]) * np.cos(0.7 * 1.0 + np.arange(2))
    applied = df.loc[1.5, ["plane_bar1", "plane_bar2"]].to_numpy()
    assert np.allclose(applied, decided * 0.003 / np.abs(decided).max(), rtol=1e-15, atol=0)
    assert df.loc[1.0, "bt_tau_decided_x"] == df.loc[1.5, "bt_tau_x"] == pytest.approx(1e-6 * np.cos(2.7), rel=1e-15)
    # three body-axis bars commanded by name: the body dipole's components, zero once the mode stops the law
    assert df.loc[0.5, "mtq_m_x"] == 0.01 and df.loc[0.5, "mtq_m_y"] == 0.005 * np.cos(1.35)
    assert df.loc[4.0, "mtq_m_y"] != 0.0 and np.all(df.loc[4.5:, ["mtq_m_x", "mtq_m_y", "mtq_m_z"]].to_numpy() == 0.0)
    saturated = set(compiled.events.loc[compiled.events["kind"] == "saturation", "actuator"])
    assert saturated == {"bars", "plane", "mtq"}
    laws = {c["name"]: c for c in compiled.meta["components"]}
    assert laws["bar_law"]["magnetorquer_command"] == "bars"
