"""Reaction-wheel friction and imbalance jitter against analytic and independent references computed here."""

import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import attsim
from attsim import rotations
from attsim.engine.mission import ENGINE_METHODS

J_DIAG = np.diag([0.05, 0.06, 0.04])
I_W = 2e-5


def _inverse_effective_inertia(axis, I_w, J):
    """1/I_eff = 1/I_w + a.J^-1 a: how a torque between wheel and body turns them apart."""
    a = np.asarray(axis, dtype=float)
    return 1.0 / I_w + a @ np.linalg.solve(J, a)


def _spin_down(tmp_path, compiled=True, method="rk4", max_step=0.05, duration=30.0, J=J_DIAG, speed0=50.0, **friction):
    m = attsim.Mission("spin_down", J, (0.0, 0.0, 0.0), duration=duration, max_step=max_step, telemetry_dt=max_step,
                       method=method, out_dir=tmp_path / f"{method}_{max_step}_{compiled}")
    m.add(attsim.ReactionWheel("rw", (0, 0, 1), I_W, 1e-3, 600.0, speed0_rad_s=speed0, **friction))
    return m.run(compiled=compiled)


# --- friction against the body: spin-down ---------------------------------------------------------------------------

@pytest.mark.parametrize("compiled", [False, True])
def test_viscous_spin_down_is_exponential_with_the_effective_inertia(tmp_path, compiled):
    # a wheel on a principal axis, the body at rest: w stays along the axis (no gyroscopic term) and the relative
    # speed obeys dOmega/dt = -c Omega / I_eff exactly; the body takes up what the wheel loses
    c = 2e-7
    tel = _spin_down(tmp_path, compiled, viscous_friction_Nm_s_rad=c)
    t, df = tel.df.index.to_numpy(), tel.df
    speed = 50.0 * np.exp(-c * _inverse_effective_inertia((0, 0, 1), I_W, J_DIAG) * t)
    assert np.allclose(df["rw_speed"], speed, rtol=1e-10, atol=0)
    body = I_W * (50.0 - speed) / (J_DIAG[2, 2] + I_W)  # J_z w + I_w (Omega + w) = I_w Omega_0
    assert np.allclose(df["wz"], body, rtol=1e-9, atol=1e-15)
    assert np.allclose(df["rw_friction"], -c * speed, rtol=1e-10, atol=0)


@pytest.mark.parametrize("compiled", [False, True])
def test_coulomb_spin_down_is_linear_to_zero_then_stays_there(tmp_path, compiled):
    fc, h = 5e-5, 0.05
    tel = _spin_down(tmp_path, compiled, max_step=h, coulomb_friction_Nm=fc)
    t, speed = tel.df.index.to_numpy(), tel.df["rw_speed"].to_numpy()
    inverse = _inverse_effective_inertia((0, 0, 1), I_W, J_DIAG)
    t_stop = 50.0 / (fc * inverse)
    analytic = np.maximum(50.0 - fc * inverse * t, 0.0)
    band = fc / (1.0 / inverse / h)  # the documented default, max(F_c, F_s) / (I_eff / h - c): the narrowest band
    outside = speed > band
    assert np.allclose(speed[outside], analytic[outside], rtol=0, atol=1e-9)  # constant torque: RK4 is exact
    assert np.all(np.abs(speed - analytic) <= band)
    assert np.all(speed >= 0.0) and np.all(np.diff(speed) <= 0.0)  # never through zero, no chatter
    settled = t > t_stop + 20 * h
    assert settled.sum() > 50 and np.all(speed[settled] < 1e-6 * band)  # and it stays at rest
    assert np.all(np.abs(tel.df["rw_friction"].to_numpy()[outside] + fc) <= 1e-15)


def test_a_coarse_step_does_not_make_coulomb_friction_chatter(tmp_path):
    # a strong Coulomb level on a light wheel: 0.2 s steps change the speed by 2.5 rad/s; the band grows to match
    tel = _spin_down(tmp_path, max_step=0.2, coulomb_friction_Nm=2.5e-4, speed0=40.0)
    speed = tel.df["rw_speed"].to_numpy()
    assert np.all(speed >= 0.0) and np.all(np.diff(speed) <= 0.0)
    assert speed[-1] < 1e-6


def test_stribeck_spin_down_follows_the_friction_curve(tmp_path):
    fc, fs, vs, c, h = 4e-5, 1e-4, 5.0, 1e-7, 0.02
    tel = _spin_down(tmp_path, max_step=h, coulomb_friction_Nm=fc, static_friction_Nm=fs, stribeck_speed_rad_s=vs,
                     viscous_friction_Nm_s_rad=c, speed0=30.0, duration=20.0)
    inverse = _inverse_effective_inertia((0, 0, 1), I_W, J_DIAG)

    def rate(_, y):
        return [-(fc + (fs - fc) * math.exp(-(y[0] / vs) ** 2) + c * y[0]) * inverse]

    def stopped(_, y):
        return y[0] - 1.0

    stopped.terminal = True
    t = tel.df.index.to_numpy()
    reference = solve_ivp(rate, (0.0, t[-1]), [30.0], rtol=1e-12, atol=1e-12, dense_output=True, events=stopped)
    valid = t < reference.t[-1]
    speed = tel.df["rw_speed"].to_numpy()
    assert valid.sum() > 100
    assert np.allclose(speed[valid], reference.sol(t[valid])[0], rtol=0, atol=1e-7)
    # the breakaway level: friction grows as the wheel slows, then it stops without reversing
    friction = -tel.df["rw_friction"].to_numpy()
    assert friction[valid][-1] > 2.0 * friction[0] and np.all(speed >= 0.0) and speed[-1] < 1e-6


@pytest.mark.parametrize("method", ENGINE_METHODS)
def test_every_mission_method_integrates_the_wheels_to_fourth_order(tmp_path, method):
    # a light body so the recoil matters; the wheel's state follows the method's own stages (the module's contract):
    # the error at the end falls 16-fold when the step halves
    J = np.diag([2e-4, 3e-4, 1e-4])
    c = 1.5e-5
    errors = []
    for h in (0.05, 0.025):  # rkn is still short of its asymptotic order at 0.1 s (the body turns 0.3 rad a step)
        tel = _spin_down(tmp_path, method=method, max_step=h, duration=4.0, J=J, viscous_friction_Nm_s_rad=c,
                         speed0=20.0)
        exact = 20.0 * math.exp(-c * _inverse_effective_inertia((0, 0, 1), I_W, J) * 4.0)
        errors.append(abs(tel.df["rw_speed"].iloc[-1] - exact))
    assert errors[1] < 1e-6 and errors[0] / errors[1] > 12.0, errors


# --- friction inside a tumbling gyrostat --------------------------------------------------------------------------

AXES = np.array([[1.0, 0.0, 0.0], [0.0, 0.6, 0.8], [0.48, -0.6, 0.64]])
J_FULL = np.array([[0.06, 0.001, -0.0005], [0.001, 0.055, 0.0008], [-0.0005, 0.0008, 0.02]])


def _tumbling_with_friction(tmp_path, compiled):
    m = attsim.Mission("tumble", J_FULL, (0.05, -0.03, 0.08), duration=20.0, max_step=0.01, telemetry_dt=0.01,
                       out_dir=tmp_path / f"tumble_{compiled}")
    m.add(attsim.ReactionWheel("rw0", AXES[0], I_W, 1e-3, 600.0, speed0_rad_s=300.0, coulomb_friction_Nm=4e-5,
                               viscous_friction_Nm_s_rad=2e-7))
    m.add(attsim.ReactionWheel("rw1", AXES[1], 3e-5, 1e-3, 600.0, speed0_rad_s=-200.0, coulomb_friction_Nm=2e-5,
                               static_friction_Nm=6e-5, stribeck_speed_rad_s=20.0))
    m.add(attsim.ReactionWheel("rw2", AXES[2], I_W, 1e-3, 600.0, speed0_rad_s=150.0, viscous_friction_Nm_s_rad=5e-7))
    return m.run(compiled=compiled)


@pytest.mark.parametrize("compiled", [False, True])
def test_friction_keeps_the_total_momentum_and_dissipates_energy(tmp_path, compiled):
    df = _tumbling_with_friction(tmp_path, compiled).df
    inertia = np.array([I_W, 3e-5, I_W])
    w = df[["wx", "wy", "wz"]].to_numpy()
    h = df[["rw0_h", "rw1_h", "rw2_h"]].to_numpy()
    H_I = rotations.quat_rotate(df[["qw", "qx", "qy", "qz"]].to_numpy(), w @ J_FULL.T + h @ AXES)
    assert np.abs(H_I - H_I[0]).max() < 1e-10 * np.linalg.norm(H_I[0])
    T = 0.5 * np.einsum("ij,jk,ik->i", w, J_FULL, w) + 0.5 * np.sum(h * h / inertia, axis=1)
    assert np.all(np.diff(T) < 0.0)
    # the energy lost is the friction's work on the relative motion: dT/dt = sum tau_f Omega
    power = sum(df[f"rw{k}_friction"].to_numpy() * df[f"rw{k}_speed"].to_numpy() for k in range(3))
    work = np.concatenate([[0.0], np.cumsum(0.5 * (power[1:] + power[:-1]) * np.diff(df.index.to_numpy()))])
    assert np.allclose(T - T[0], work, rtol=0, atol=1e-6 * (T[0] - T[-1]))
    assert T[0] - T[-1] > 0.05 * T[0]


def test_the_motor_torque_column_is_the_motor_and_the_body_feels_motor_plus_friction(tmp_path):
    # a held motor torque against viscous friction: the wheel tends to tau / c; the total momentum stays put
    c, tau = 1e-6, 2e-4
    m = attsim.Mission("motor", J_DIAG, (0.0, 0.0, 0.0), duration=40.0, max_step=0.05, telemetry_dt=0.05,
                       out_dir=tmp_path)
    m.add(attsim.ReactionWheel("rw", (0, 0, 1), I_W, 1e-3, 600.0, viscous_friction_Nm_s_rad=c))
    m.add(attsim.CommandSchedule("rw", [(0.0, tau)]))
    df = m.run().df
    inverse = _inverse_effective_inertia((0, 0, 1), I_W, J_DIAG)
    t = df.index.to_numpy()
    # about the one axis, dOmega/dt = (tau - c Omega) (1/I_w + 1/J_z)
    speed = tau / c * (1.0 - np.exp(-c * inverse * t))
    assert np.allclose(df["rw_speed"], speed, rtol=1e-9, atol=1e-12)
    assert np.all(df["rw_torque"] == tau)
    assert np.allclose(J_DIAG[2, 2] * df["wz"] + df["rw_h"], 0.0, atol=1e-15)


# --- imbalance jitter -----------------------------------------------------------------------------------------------

def _jitter_run(tmp_path, static, dynamic, position, speed0=2 * math.pi * 20):
    m = attsim.Mission("jitter", J_DIAG, (0.0, 0.0, 0.0), duration=2.0, max_step=1e-3, telemetry_dt=1e-3,
                       out_dir=tmp_path / "jitter")
    m.add(attsim.ReactionWheel("rw", (0, 0, 1), 1e-5, 1e-3, 300.0, speed0_rad_s=speed0, static_imbalance_kg_m=static,
                               dynamic_imbalance_kg_m2=dynamic, position_m=position))
    return m.run()


def _amplitude(t, x, frequency):
    """Amplitude of the harmonic at ``frequency`` (rad/s) in ``x``, by least squares with an offset and a trend."""
    basis = np.column_stack([np.ones_like(t), t, np.cos(frequency * t), np.sin(frequency * t)])
    coefficients = np.linalg.lstsq(basis, x, rcond=None)[0]
    return math.hypot(coefficients[2], coefficients[3])


def test_jitter_spectrum_peaks_at_the_wheel_speed_with_the_imbalance_amplitude(tmp_path):
    us, ud, r, speed0 = 1e-6, 2e-7, np.array([0.1, -0.05, 0.2]), 2 * math.pi * 20
    tel = _jitter_run(tmp_path, static=us, dynamic=ud, position=tuple(r), speed0=speed0)
    df, t = tel.df, tel.df.index.to_numpy()
    speed = df["rw_speed"].to_numpy()
    assert np.ptp(speed) < 1e-3 * speed0  # the wheel keeps its speed: the forcing is at one frequency
    # the heavy side turns about +z at Omega: u(t) = Re(e^{i Omega t} (x - i y) e^{i phi}) for some phase phi,
    # so the torque is Re(T e^{i Omega t}), T = Omega^2 (U_s r x w + U_d w), w = x - i y (up to that phase)
    w_hat = np.array([1.0, -1.0j, 0.0])
    torque = speed0 ** 2 * (us * np.cross(r, w_hat) + ud * w_hat)
    # the body's linear response, J dw/dt = T(t) + H_w x w (w x J w is second order):
    H_w = np.array([0.0, 0.0, 1e-5 * speed0])
    cross = np.array([[0, -H_w[2], H_w[1]], [H_w[2], 0, -H_w[0]], [-H_w[1], H_w[0], 0]])
    rate = np.linalg.solve(1j * speed0 * J_DIAG - cross, torque)
    n = len(t) - 1  # the last row repeats the first of the next period: 40 whole periods in the rest
    for k, axis in enumerate("xyz"):
        x = df[f"w{axis}"].to_numpy()[:n]
        spectrum = np.abs(np.fft.rfft((x - x.mean()) * np.hanning(n)))
        frequencies = 2 * math.pi * np.fft.rfftfreq(n, d=t[1] - t[0])
        assert abs(frequencies[np.argmax(spectrum[1:]) + 1] - speed0) <= frequencies[1]
        assert _amplitude(t, df[f"w{axis}"].to_numpy(), speed0) == pytest.approx(abs(rate[k]), rel=1e-3)
    # the logged force and torque: |F| = U_s Omega^2 normal to the axis, torque r x F + (U_d / U_s) F
    force = df[["rw_jitter_F_x", "rw_jitter_F_y", "rw_jitter_F_z"]].to_numpy()
    assert np.allclose(np.linalg.norm(force, axis=1), us * speed ** 2, rtol=1e-12) and np.all(force[:, 2] == 0.0)
    tau = df[["rw_jitter_tau_x", "rw_jitter_tau_y", "rw_jitter_tau_z"]].to_numpy()
    assert np.allclose(tau, np.cross(r, force) + ud / us * force, rtol=0, atol=1e-15)
    for k in range(3):
        assert _amplitude(t, tau[:, k], speed0) == pytest.approx(abs(torque[k]), rel=1e-3)
    # the rotor angle advances at the relative speed
    turned = np.unwrap(df["rw_angle"].to_numpy())
    assert np.allclose(turned - turned[0], np.concatenate([[0.0], np.cumsum(0.5 * (speed[1:] + speed[:-1])
                                                                              * np.diff(t))]), atol=1e-5)


def test_dynamic_imbalance_alone_needs_no_position_and_gives_a_pure_rotating_torque(tmp_path):
    tel = _jitter_run(tmp_path, static=0.0, dynamic=5e-7, position=None)
    df = tel.df
    assert np.all(df[["rw_jitter_F_x", "rw_jitter_F_y", "rw_jitter_F_z"]].to_numpy() == 0.0)
    tau = df[["rw_jitter_tau_x", "rw_jitter_tau_y", "rw_jitter_tau_z"]].to_numpy()
    assert np.allclose(np.linalg.norm(tau, axis=1), 5e-7 * df["rw_speed"].to_numpy() ** 2, rtol=1e-12)


# --- defaults and input ---------------------------------------------------------------------------------------------

def test_a_plain_wheel_has_only_the_usual_columns(tmp_path):
    wheel = attsim.ReactionWheel("rw", (0, 0, 1), I_W, 1e-3, 600.0)
    assert wheel.columns() == ["rw_speed", "rw_h", "rw_torque", "rw_torque_cmd"]
    rough = attsim.ReactionWheel("rw", (0, 0, 1), I_W, 1e-3, 600.0, viscous_friction_Nm_s_rad=1e-7,
                                 dynamic_imbalance_kg_m2=1e-7)
    assert rough.columns() == ["rw_speed", "rw_h", "rw_torque", "rw_torque_cmd", "rw_friction", "rw_angle",
                               "rw_jitter_F_x", "rw_jitter_F_y", "rw_jitter_F_z", "rw_jitter_tau_x",
                               "rw_jitter_tau_y", "rw_jitter_tau_z"]


@pytest.mark.parametrize("kwargs, field, rule", [
    (dict(coulomb_friction_Nm=-1e-5), "coulomb_friction_Nm", ">= 0"),
    (dict(viscous_friction_Nm_s_rad=math.nan), "viscous_friction_Nm_s_rad", "finite"),
    (dict(coulomb_friction_Nm=2e-5, static_friction_Nm=1e-5, stribeck_speed_rad_s=1.0), "static_friction_Nm",
     "at least coulomb_friction_Nm"),
    (dict(coulomb_friction_Nm=2e-5, static_friction_Nm=5e-5), "stribeck_speed_rad_s", "is needed"),
    (dict(stribeck_speed_rad_s=1.0), "stribeck_speed_rad_s", "needs a static_friction_Nm"),
    (dict(viscous_friction_Nm_s_rad=1e-7, friction_band_rad_s=0.1), "friction_band_rad_s", "needs a coulomb"),
    (dict(friction_band_rad_s=0.0, coulomb_friction_Nm=1e-5), "friction_band_rad_s", "> 0"),
    (dict(static_imbalance_kg_m=1e-6), "position_m", "is needed"),
    (dict(dynamic_imbalance_kg_m2=-1e-7), "dynamic_imbalance_kg_m2", ">= 0"),
    (dict(static_imbalance_kg_m=1e-6, position_m=(0.1, math.inf, 0.0)), "position_m", "finite"),
])
def test_bad_friction_or_imbalance_is_refused_naming_the_rule(kwargs, field, rule):
    with pytest.raises(attsim.InputError) as info:
        attsim.ReactionWheel("rw", (0, 0, 1), I_W, 1e-3, 600.0, **kwargs)
    assert info.value.field == field and rule in info.value.rule


@pytest.mark.parametrize("kwargs, max_step, what", [
    (dict(static_imbalance_kg_m=1e-6, position_m=(0.1, 0, 0)), 0.011, "imbalance jitter"),
    (dict(dynamic_imbalance_kg_m2=1e-7), 0.02, "imbalance jitter"),
    (dict(coulomb_friction_Nm=1e-4, friction_band_rad_s=1e-3), 0.05, "friction band"),
    (dict(viscous_friction_Nm_s_rad=1e-4), 0.5, "viscous friction"),
    (dict(coulomb_friction_Nm=1e308), 0.05, "Coulomb friction"),  # it would stop the wheel from its limit in a step
])
def test_a_max_step_that_cannot_resolve_the_wheel_is_refused_before_the_run(tmp_path, kwargs, max_step, what):
    m = attsim.Mission("unresolved", J_DIAG, (0.0, 0.0, 0.0), duration=1.0, max_step=max_step, out_dir=tmp_path)
    m.add(attsim.ReactionWheel("rw", (0, 0, 1), I_W, 1e-3, 300.0, **kwargs))
    with pytest.raises(attsim.InputError) as info:
        m.run()
    assert info.value.field == "max_step" and what in info.value.rule and "'rw'" in info.value.rule


def test_a_max_step_that_resolves_the_wheel_runs(tmp_path):
    # the limits of the test above, just inside: pi / 300 rad/s for the jitter, I_eff / (2 c) for viscous friction
    h = math.pi / 300.0 * 0.999
    m = attsim.Mission("resolved", J_DIAG, (0.0, 0.0, 0.0), duration=0.1, max_step=h, out_dir=tmp_path)
    c = 0.999 / (2.0 * h * _inverse_effective_inertia((0, 0, 1), I_W, J_DIAG))
    m.add(attsim.ReactionWheel("rw", (0, 0, 1), I_W, 1e-3, 300.0, dynamic_imbalance_kg_m2=1e-7,
                               viscous_friction_Nm_s_rad=c))
    assert not m.run().partial
