"""A PID law that saturates its wheels for a long time, against an independent single-axis reference.

The body turns about z only, from 86 deg at rest, with a wheel torque limit well below what the gains ask for, so the
motor is saturated for most of the slew. The reference is computed here with ``scipy.integrate.solve_ivp``:
``J_z θ̈ = sat(τ_k)`` held over each control period (zero-order hold), with the law's own sampled recursion
``e_k = sign(cos(θ_k/2)) sin(θ_k/2)``, ``z_k = clamp(z_{k-1} + Δt e_k, ±L)``,
``τ_k = -k_p e_k - k_d ω_k - k_i z_k``. About one axis the wheel momentum stays parallel to the rate, so no
gyroscopic term enters. Without the clamp the integral winds up during the saturated slew and the body overshoots
far; with it the overshoot is the bounded one the reference predicts.
"""

import functools
import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import attsim

J = np.diag([0.03, 0.04, 0.02])
KP, KD, KI, PERIOD_S, MAX_TORQUE_NM = 4e-3, 2e-2, 1e-4, 0.1, 5e-5
THETA0_RAD, DURATION_S = 1.5, 400.0


@functools.cache  # both paths' tests compare with the same two references (~1.5 s each)
def reference(limit_rad_s):
    """θ (rad) and ω (rad/s) at each control instant, and the integral at the end, by solve_ivp."""
    theta, w, z = THETA0_RAD, 0.0, 0.0
    steps = int(round(DURATION_S / PERIOD_S))
    thetas, rates = np.empty(steps + 1), np.empty(steps + 1)
    for k in range(steps + 1):
        thetas[k], rates[k] = theta, w
        c, s = math.cos(theta / 2), math.sin(theta / 2)
        e = s if c >= 0.0 else -s
        z = min(max(z + PERIOD_S * e, -limit_rad_s), limit_rad_s)
        if k == steps:  # the law's cycle at the last instant still advances its integral
            break
        tau = min(max(-KP * e - KD * w - KI * z, -MAX_TORQUE_NM), MAX_TORQUE_NM)
        sol = solve_ivp(lambda t, y, tau=tau: (y[1], tau / J[2, 2]), (0.0, PERIOD_S), (theta, w),
                        rtol=1e-12, atol=1e-15)
        theta, w = sol.y[0, -1], sol.y[1, -1]
    thetas.flags.writeable = rates.flags.writeable = False  # shared by the tests (cached)
    return thetas, rates, z


def build(out, limit_rad_s):
    m = attsim.Mission("windup", J, (0.0, 0.0, 0.0), q0=(math.cos(THETA0_RAD / 2), 0.0, 0.0, math.sin(THETA0_RAD / 2)),
                       duration=DURATION_S, max_step=PERIOD_S, telemetry_dt=PERIOD_S, out_dir=out)
    wheels = [m.add(attsim.ReactionWheel(f"rw_{a}", d, 1e-3, MAX_TORQUE_NM, 600.0)) for a, d in zip("xyz", np.eye(3))]
    m.add(attsim.QuaternionPD((1.0, 0.0, 0.0, 0.0), kp=KP, kd=KD, period_s=PERIOD_S, wheels=wheels, ki=KI,
                              integral_limit_rad_s=limit_rad_s, attitude_source=attsim.TRUTH, rate_source=attsim.TRUTH))
    return m


@pytest.mark.parametrize("compiled", [False, True], ids=["python", "compiled"])
def test_a_long_saturated_slew_follows_the_reference_and_the_clamp_prevents_windup(tmp_path, compiled):
    limit = 0.2  # rad s: k_i L = 2e-5 N m, 40 % of the motor's limit
    mission = build(tmp_path, limit)
    tel = mission.run(compiled=compiled)
    thetas, rates, z_end = reference(limit)
    q = tel.df[["qw", "qx", "qy", "qz"]].to_numpy()
    assert np.abs(q[:, 1:3]).max() < 1e-12  # about z only
    theta = 2.0 * np.arctan2(q[:, 3], q[:, 0])
    assert len(theta) == len(thetas)
    assert np.abs(theta - thetas).max() < 1e-7
    assert np.abs(tel.df["wz"].to_numpy() - rates).max() < 1e-9
    saturated_s = PERIOD_S * np.count_nonzero(np.abs(tel.df["rw_z_torque_cmd"].to_numpy()) == MAX_TORQUE_NM)
    assert saturated_s > 40.0  # the motor at its limit for most of the slew
    assert mission.components[-1].integral[2] == pytest.approx(z_end, abs=1e-9)
    # the clamp matters: unclamped, the integral winds up and the body overshoots more than five times as far
    free, _, _ = reference(1e6)
    overshoot, free_overshoot = -thetas.min(), -free.min()
    assert -theta.min() == pytest.approx(overshoot, abs=1e-7)
    assert free_overshoot > 5.0 * overshoot
    assert abs(theta[-1]) < 1e-6 and abs(free[-1]) > 1e-4  # the clamped law has settled, the wound-up one not yet
