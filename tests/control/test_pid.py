"""QuaternionPD's integral feedback (ki, integral_limit_rad_s) against analytic references, on both paths.

The references are computed here from the telemetry and the closed-form equilibria of a rigid body under a
constant body-axes disturbance ``τ_d``, with a quaternion product of the test's own:

* PD: at rest ``0 = τ_d - k_p δq_v``, so ``δq_v = τ_d / k_p`` and the error angle is
  ``δθ = 2 asin(|τ_d| / k_p) ≈ 2 |τ_d| / k_p`` (small angle: ``δq_v ≈ δθ / 2``);
* PID: at rest ``ż = δq_v = 0``: no error, the integral holding ``z = τ_d / k_i``;
* PID with the integral clamped at ``±L`` on an axis where ``|τ_d / k_i| > L``: ``δq_v = (τ_d - k_i L sign τ_d) / k_p``.
"""

import math

import numpy as np
import pytest

import attsim
from attsim import modes

from tests.paths.test_mission_loop import assert_same_run, both_ways

J = np.diag([0.05, 0.06, 0.02])
TAU_D = np.array([1e-5, -6e-6, 3e-6])  # N m, body axes
KP, KD, KI, PERIOD_S = 1e-3, 7e-3, 2e-5, 0.1  # KI well inside the Routh bound k_d k_p / J_max = 1.2e-4


def _qmul(a, b):
    aw, ax, ay, az = a
    bw, bx, by, bz = b
    return np.array([aw * bw - ax * bx - ay * by - az * bz, aw * bx + ax * bw + ay * bz - az * by,
                     aw * by - ax * bz + ay * bw + az * bx, aw * bz + ax * by - ay * bx + az * bw])


def _error(q_ref, q):
    """``sign(δq_w) δq_v`` of ``δq = q_ref* ⊗ q``."""
    e = _qmul(np.array([q_ref[0], -q_ref[1], -q_ref[2], -q_ref[3]]), np.asarray(q, float))
    return (1.0 if e[0] >= 0.0 else -1.0) * e[1:]


def _body_torque(row, wheels="xyz"):
    """The torque the wheels were commanded to put on the body at a row: ``-u`` for wheels along x, y, z."""
    return -np.array([row[f"rw_{a}_torque_cmd"] for a in wheels])


def disturbed(out, duration_s=600.0, **integral):
    m = attsim.Mission("pid", J, (0.0, 0.0, 0.0), duration=duration_s, max_step=0.1, telemetry_dt=1.0, out_dir=out)
    # heavy wheels: they absorb the disturbance's momentum (6e-3 N m s over the run) far from their speed limit
    wheels = [m.add(attsim.ReactionWheel(f"rw_{a}", d, 1e-3, 5e-3, 600.0)) for a, d in zip("xyz", np.eye(3))]
    m.add(attsim.TorqueSchedule([(0.0, duration_s + 1.0, tuple(TAU_D))]))
    m.add(attsim.QuaternionPD((1.0, 0.0, 0.0, 0.0), kp=KP, kd=KD, period_s=PERIOD_S, wheels=wheels, **integral,
                              attitude_source=attsim.TRUTH, rate_source=attsim.TRUTH))
    return m


@pytest.mark.parametrize("compiled", [False, True], ids=["python", "compiled"])
def test_pd_leaves_the_standing_error_2_tau_over_kp_and_the_integral_removes_it(tmp_path, compiled):
    pd = disturbed(tmp_path / "pd").run(compiled=compiled)
    q_end = pd.df[["qw", "qx", "qy", "qz"]].to_numpy()[-1]
    assert np.allclose(_error((1, 0, 0, 0), q_end), TAU_D / KP, rtol=1e-7, atol=0)
    angle = 2.0 * math.asin(np.linalg.norm(q_end[1:]))
    assert angle == pytest.approx(2.0 * math.asin(np.linalg.norm(TAU_D) / KP), rel=1e-7)
    assert angle == pytest.approx(2.0 * np.linalg.norm(TAU_D) / KP, rel=1e-4)  # the small-angle form, 1.4 deg here
    assert pd.df["att_err_deg"].iloc[-1] == pytest.approx(math.degrees(angle), rel=1e-9)

    mission = disturbed(tmp_path / "pid", ki=KI, integral_limit_rad_s=2.0)
    law = mission.components[-1]
    pid = mission.run(compiled=compiled)
    q_end = pid.df[["qw", "qx", "qy", "qz"]].to_numpy()[-1]
    assert 2.0 * math.asin(np.linalg.norm(q_end[1:])) < 1e-6 * angle
    assert np.allclose(law.integral, TAU_D / KI, rtol=1e-5, atol=0)  # the integral carries the disturbance
    # at rest the commanded torque cancels the disturbance: -k_i z = -τ_d
    assert np.allclose(_body_torque(pid.df.iloc[-1]), -TAU_D, rtol=1e-5, atol=0)


@pytest.mark.parametrize("compiled", [False, True], ids=["python", "compiled"])
def test_the_integral_clamps_at_its_limit_and_leaves_the_error_of_the_torque_it_cannot_carry(tmp_path, compiled):
    limit = 0.1  # rad s; |τ_d / k_i| = (0.5, 0.3, 0.15) exceeds it on every axis
    mission = disturbed(tmp_path, ki=KI, integral_limit_rad_s=limit)
    law = mission.components[-1]
    tel = mission.run(compiled=compiled)
    assert np.array_equal(law.integral, limit * np.sign(TAU_D))  # held exactly at the bound, not beyond
    q_end = tel.df[["qw", "qx", "qy", "qz"]].to_numpy()[-1]
    assert np.allclose(_error((1, 0, 0, 0), q_end), (TAU_D - KI * limit * np.sign(TAU_D)) / KP, rtol=1e-6, atol=0)


def taking_turns(out):
    """The PID runs 100 s, coasts 20 s (its wheels zeroed, the disturbance turning the body), runs again."""
    m = attsim.Mission("pid_modes", J, (0.0, 0.0, 0.0), duration=160.0, max_step=0.1, telemetry_dt=0.5, out_dir=out)
    wheels = [m.add(attsim.ReactionWheel(f"rw_{a}", d, 1e-3, 5e-3, 600.0)) for a, d in zip("xyz", np.eye(3))]
    m.add(attsim.TorqueSchedule([(0.0, 200.0, tuple(5 * TAU_D))]))
    law = m.add(attsim.QuaternionPD((1.0, 0.0, 0.0, 0.0), kp=KP, kd=KD, period_s=PERIOD_S, wheels=wheels, ki=KI,
                                    integral_limit_rad_s=5.0, attitude_source=attsim.TRUTH, rate_source=attsim.TRUTH))
    m.add(attsim.ModeManager([("point", [law]), ("coast", [])],
                             [("point", "coast", modes.timeout(100.0)), ("coast", "point", modes.timeout(20.0))],
                             initial="point", period_s=1.0))
    return m


def test_the_integral_starts_afresh_when_a_mode_switch_runs_the_law_again(tmp_path):
    python, compiled = both_ways(tmp_path, taking_turns)
    assert_same_run(python, compiled)
    switches = compiled.events[compiled.events["kind"] == "mode"]
    assert list(switches["t"]) == [100.0, 120.0] and list(switches["after"]) == ["coast", "point"]
    df = compiled.df
    assert np.abs(_body_torque(df.loc[100.0:119.5])).max() == 0.0  # coasting: its wheels zeroed
    row = df.loc[120.0]  # the first cycle after the law is entered again: one step of integral, nothing older
    fresh = -KP * _error((1, 0, 0, 0), row[["qw", "qx", "qy", "qz"]].to_numpy(float)) \
        - KD * row[["wx", "wy", "wz"]].to_numpy(float) \
        - KI * PERIOD_S * _error((1, 0, 0, 0), row[["qw", "qx", "qy", "qz"]].to_numpy(float))
    assert np.allclose(_body_torque(row), fresh, rtol=1e-9, atol=1e-15)
    # the integral the law held when it stopped (from its last command, at 99.5 s): a stale one would have
    # added k_i z to that command, far beyond the tolerance above
    last = df.loc[99.5]
    e = _error((1, 0, 0, 0), last[["qw", "qx", "qy", "qz"]].to_numpy(float))
    z_stale = -(_body_torque(last) + KP * e + KD * last[["wx", "wy", "wz"]].to_numpy(float)) / KI
    assert np.linalg.norm(KI * z_stale) > 0.3 * np.linalg.norm(5 * TAU_D)


def estimator_late(out):
    """The MEKF has no estimate until its star tracker's first output at 2 s (a dropout before it)."""
    m = attsim.Mission("pid_mekf", J, (0.002, -0.001, 0.0015), duration=20.0, max_step=0.1, telemetry_dt=0.1,
                       seed=4, out_dir=out)
    wheels = [m.add(attsim.ReactionWheel(f"rw_{a}", d, 1e-3, 5e-3, 600.0)) for a, d in zip("xyz", np.eye(3))]
    gyro = m.add(attsim.Gyro(10.0, arw_rad_sqrt_s=1e-5, bias_rad_s=(2e-4, 0.0, -1e-4)))
    tracker = m.add(attsim.StarTracker(2.0, noise_arcsec=10.0, faults=[attsim.SensorFault(0.0, "dropout", 2.0)]))
    mekf = m.add(attsim.MEKF(gyro, star_tracker=tracker))
    m.add(attsim.TorqueSchedule([(0.0, 30.0, tuple(TAU_D))]))
    target = attsim.rotations.axis_angle_to_quat([0.3, -0.2, 0.9], 0.05)
    m.add(attsim.QuaternionPD(target, kp=KP, kd=KD, period_s=PERIOD_S, wheels=wheels, attitude_source=mekf,
                              rate_source=mekf, ki=KI, integral_limit_rad_s=1.0))
    return m


def test_no_integral_builds_up_while_the_attitude_is_unknown(tmp_path):
    python, compiled = both_ways(tmp_path, estimator_late)
    assert_same_run(python, compiled)
    df = compiled.df
    unknown = df["mekf_qw"].isna()
    assert unknown.loc[:1.9].all() and not unknown.loc[2.0:].any()
    assert np.abs(_body_torque(df.loc[:1.9])).max() == 0.0  # no command while the attitude is unknown
    row = df.loc[2.0]  # the first cycle with an estimate: one step of integral, nothing from before
    q_ref = attsim.rotations.axis_angle_to_quat([0.3, -0.2, 0.9], 0.05)
    e = _error(q_ref, row[[f"mekf_q{c}" for c in "wxyz"]].to_numpy(float))
    w = row[[f"gyro_{a}" for a in "xyz"]].to_numpy(float) - row[[f"mekf_bias_{a}" for a in "xyz"]].to_numpy(float)
    # the target is at rest, so the rate error is the estimated rate itself
    expected = -KP * e - KD * w - KI * PERIOD_S * e
    assert np.allclose(_body_torque(row), expected, rtol=1e-9, atol=1e-15)


def magnetorquer_pid(out):
    m = attsim.Mission("pid_mtq", J * 0.05, (0.01, 0.0, 0.0), duration=200.0, max_step=0.1, telemetry_dt=1.0,
                       seed=2, out_dir=out, field=(2e-5, -1e-5, 3e-5))
    mag = m.add(attsim.Magnetometer(rate_hz=1.0, noise_T=1e-8))
    mtq = m.add(attsim.Magnetorquer(dipole_max_Am2=0.05))
    m.add(attsim.TorqueSchedule([(0.0, 300.0, (2e-7, 0.0, -1e-7))]))
    m.add(attsim.QuaternionPD(attsim.rotations.axis_angle_to_quat([0, 0, 1], 0.3), kp=1e-4, kd=1e-3, period_s=1.0,
                              magnetorquer=mtq, magnetometer=mag, ki=2e-6, integral_limit_rad_s=0.5,
                              attitude_source=attsim.TRUTH, rate_source=attsim.TRUTH))
    return m


def test_a_magnetorquer_pid_runs_alike_and_its_integral_stays_inside_the_limit(tmp_path):
    missions = [magnetorquer_pid(tmp_path / "python"), magnetorquer_pid(tmp_path / "compiled")]
    python, compiled = missions[0].run(compiled=False), missions[1].run(compiled=True)
    assert_same_run(python, compiled)
    laws = [m.components[-1] for m in missions]
    assert np.array_equal(laws[0].integral, laws[1].integral)  # the compiled loop hands its integral back
    # a fixed field makes no torque along itself: that part of the error is never corrected, and its integral
    # stops at the bound (anti-windup) instead of growing without end
    assert np.abs(laws[1].integral).max() == 0.5
    assert np.abs(compiled.df[["mtq_m_x", "mtq_m_y", "mtq_m_z"]].to_numpy()).max() > 0.0


@pytest.mark.parametrize("integral", [dict(ki=0.0), dict(ki=0.0, integral_limit_rad_s=1.0)],
                         ids=["ki_zero", "ki_zero_with_limit"])
@pytest.mark.parametrize("compiled", [False, True], ids=["python", "compiled"])
def test_ki_zero_is_todays_pd_to_the_bit(tmp_path, compiled, integral):
    plain = disturbed(tmp_path / "plain", duration_s=60.0).run(compiled=compiled)
    zero = disturbed(tmp_path / "zero", duration_s=60.0, **integral).run(compiled=compiled)
    assert list(plain.df.columns) == list(zero.df.columns)
    assert np.array_equal(plain.df.to_numpy(), zero.df.to_numpy())
    assert plain.events.equals(zero.events)


@pytest.mark.parametrize("arguments, rule", [
    (dict(ki=-1e-5, integral_limit_rad_s=1.0), r"^ki: must be finite and >= 0"),
    (dict(ki=math.nan, integral_limit_rad_s=1.0), r"^ki: must be finite and >= 0"),
    (dict(ki="1e-5", integral_limit_rad_s=1.0), r"^ki: must be a real number"),
    (dict(ki=1e-5), r"^integral_limit_rad_s: is required \(> 0\) when ki > 0"),
    (dict(ki=1e-5, integral_limit_rad_s=0.0), r"^integral_limit_rad_s: must be finite and > 0"),
    (dict(ki=1e-5, integral_limit_rad_s=-1.0), r"^integral_limit_rad_s: must be finite and > 0"),
    (dict(ki=1e-5, integral_limit_rad_s=math.nan), r"^integral_limit_rad_s: must be finite and > 0"),
    (dict(ki=1e-5, integral_limit_rad_s=math.inf), r"^integral_limit_rad_s: must be finite and > 0"),
], ids=["negative", "nan", "string", "limit_missing", "limit_zero", "limit_negative", "limit_nan", "limit_inf"])
def test_bad_integral_settings_are_refused_naming_the_field_and_rule(arguments, rule):
    with pytest.raises(attsim.InputError, match=rule):
        attsim.QuaternionPD((1.0, 0.0, 0.0, 0.0), kp=1.0, kd=1.0, period_s=1.0, wheels=["w"], **arguments)


def alternating(out):
    """The PID and a PD to another attitude take turns four times; the PD's period (0.25 s) is off the PID's grid."""
    m = attsim.Mission("pid_pd", J, (0.01, -0.005, 0.002), duration=200.0, max_step=0.1, telemetry_dt=0.5, out_dir=out)
    wheels = [m.add(attsim.ReactionWheel(f"rw_{a}", d, 1e-3, 5e-3, 600.0)) for a, d in zip("xyz", np.eye(3))]
    m.add(attsim.TorqueSchedule([(0.0, 300.0, tuple(5 * TAU_D))]))
    pid = m.add(attsim.QuaternionPD((1.0, 0.0, 0.0, 0.0), kp=KP, kd=KD, period_s=PERIOD_S, wheels=wheels, ki=KI,
                                    integral_limit_rad_s=5.0, name="pid",
                                    attitude_source=attsim.TRUTH, rate_source=attsim.TRUTH))
    pd = m.add(attsim.QuaternionPD(attsim.rotations.axis_angle_to_quat([0, 0, 1], 0.2), kp=2e-3, kd=1e-2,
                                   period_s=0.25, wheels=wheels, name="pd",
                                   attitude_source=attsim.TRUTH, rate_source=attsim.TRUTH))
    m.add(attsim.ModeManager([("pid", [pid]), ("pd", [pd])],
                             [("pid", "pd", modes.timeout(23.0)), ("pd", "pid", modes.timeout(17.3))],
                             initial="pid", period_s=0.5))
    return m


def test_a_pid_taking_turns_with_a_pd_off_its_grid_runs_alike_on_both_paths(tmp_path):
    # before: the compiled loop stopped its plant at the stopped PD's 0.25 s instants, the Python path (whose stopped
    # law reads no state) did not; the steps' round-off grew to 2e-10 of the attitude error over 200 s
    python, compiled = both_ways(tmp_path, alternating)
    assert_same_run(python, compiled)
    assert (compiled.events["kind"] == "mode").sum() == 9
