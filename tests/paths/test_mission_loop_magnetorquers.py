"""Magnetorquer arrays and torque-bar feed-forward in the compiled loop against the Python path."""

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
