"""The MEKF kernels: consistency over many seeds, bias convergence, outlier rejection.

The truth, the gyro and the measurements are simulated here with numpy and
scipy's Rotation (no attsim kernel), by the discrete gyro model of Markley &
Crassidis (2014) eq. 6.95: ``β_{k+1} = β_k + σ_u √Δt N_u``,
``ω_m = ω + ½ (β_{k+1} + β_k) + √(σ_v²/Δt + σ_u² Δt/12) N_v``.
"""

import numpy as np
import pytest
from scipy.spatial.transform import Rotation
from scipy.stats import chi2

from attsim.estimation.kernels import (NIS_GATE_3DOF, attitude_error_rad, mekf_cycle, mekf_propagate,
                                       mekf_update_quaternion, mekf_update_vector, new_memory, new_state)

ARCSEC = np.pi / 180 / 3600
W_TRUE = np.array([0.01, -0.02, 0.015])  # rad/s, constant: the truth attitude is exact, q0 ⊗ exp(ω t)
SIGMA_V, SIGMA_U = 1e-5, 1e-8  # rad/sqrt(s), rad/s/sqrt(s): a tactical-grade gyro
DT_GYRO, STEPS_PER_UPDATE = 0.1, 10


def _rotation(q_wxyz):
    return Rotation.from_quat(np.roll(q_wxyz, -1))


def _quat(rotation):
    q = np.roll(rotation.as_quat(), 1)
    return q if q[0] >= 0 else -q


def _error_state(state, q_true, bias_true):
    # q_true = q̂ ⊗ exp(δθ)  =>  exp(δθ) = q̂* ⊗ q_true; rotation vector via scipy
    d = _rotation(state.q).inv() * _rotation(q_true)
    return np.concatenate([d.as_rotvec(), bias_true - state.bias_rad_s])


def _run(seed, duration_s, update, bias0=(2e-4, -1e-4, 1.5e-4), outlier_at=None):
    """One filter run: (NEES, NIS, accepted) at each update, the final error state, the final filter state."""
    rng = np.random.default_rng(seed)
    q0 = _rotation(np.array([1.0, 0.0, 0.0, 0.0])) * Rotation.from_rotvec(rng.normal(0, 0.3, 3))
    bias = np.array(bias0, dtype=float)
    sigma_att0, sigma_bias0 = 0.02, 3e-4
    # the filter starts from a draw of its own initial covariance around the truth
    q_start = q0 * Rotation.from_rotvec(rng.normal(0, sigma_att0, 3))
    state = new_state(_quat(q_start), bias + rng.normal(0, sigma_bias0, 3), sigma_att0, sigma_bias0)
    nees, steps = [], int(round(duration_s / DT_GYRO))
    for k in range(1, steps + 1):
        bias_next = bias + SIGMA_U * np.sqrt(DT_GYRO) * rng.normal(size=3)
        noise = np.sqrt(SIGMA_V**2 / DT_GYRO + SIGMA_U**2 * DT_GYRO / 12) * rng.normal(size=3)
        # the bias this reading saw, the mean over its interval, is what the filter estimates
        seen = 0.5 * (bias_next + bias)
        w_meas = W_TRUE + seen + noise
        bias = bias_next
        mekf_propagate(state.q, state.bias_rad_s, state.P, w_meas, DT_GYRO, SIGMA_V, SIGMA_U)
        q_true = _quat(q0 * Rotation.from_rotvec(W_TRUE * k * DT_GYRO))
        if k % STEPS_PER_UPDATE == 0:
            nis, accepted = update(state, q_true, rng, outlier=(outlier_at is not None and k == outlier_at))
            e = _error_state(state, q_true, seen)
            nees.append((e @ np.linalg.solve(state.P, e), nis, accepted))
    return nees, _error_state(state, q_true, seen), state


def _star_tracker(sigma_rad):
    def update(state, q_true, rng, outlier=False):
        noise = rng.normal(size=3) * sigma_rad
        if outlier:
            noise = noise + np.radians([5.0, 0.0, 0.0])
        q_meas = _quat(_rotation(q_true) * Rotation.from_rotvec(noise))
        return mekf_update_quaternion(state.q, state.bias_rad_s, state.P, q_meas, sigma_rad, NIS_GATE_3DOF,
                                      (1.0, 0.0, 0.0, 0.0))

    return update


def _mounted_star_tracker(sigma_rad, q_BS):
    """A tracker whose noise is about its own axes, mounted at ``q_BS``: in body axes its noise is not diagonal."""
    mount = _rotation(q_BS)

    def update(state, q_true, rng, outlier=False):
        noise_B = mount.apply(rng.normal(size=3) * sigma_rad)
        q_meas = _quat(_rotation(q_true) * Rotation.from_rotvec(noise_B))
        return mekf_update_quaternion(state.q, state.bias_rad_s, state.P, q_meas, sigma_rad, NIS_GATE_3DOF,
                                      tuple(q_BS))

    return update


# boresight (the tracker's z, its noisy axis) turned to a direction of no body axis
MOUNT = _quat(Rotation.from_rotvec([0.7, -1.1, 0.4]))

SUN_I = np.array([0.6, 0.8, 0.0])
MAG_I = np.array([0.2, -0.3, 0.93]) / np.linalg.norm([0.2, -0.3, 0.93])


def _two_vectors(sigma):
    def update(state, q_true, rng, outlier=False):
        nis, ok = 0.0, True
        for r in (SUN_I, MAG_I):
            b = _rotation(q_true).inv().apply(r) + sigma * rng.normal(size=3)
            value, accepted = mekf_update_vector(state.q, state.bias_rad_s, state.P, b, r, sigma, NIS_GATE_3DOF)
            nis, ok = nis + value, ok and accepted
        return nis / 2.0, ok  # the mean of two chi-square(3) values

    return update


def _mean_bounds(samples, dof, confidence=0.99):
    """Two-sided bounds of the mean of ``samples`` independent χ²(dof) values (their sum is χ²(dof·samples))."""
    lower = chi2.ppf((1 - confidence) / 2, dof * samples) / samples
    upper = chi2.ppf(1 - (1 - confidence) / 2, dof * samples) / samples
    return lower, upper


@pytest.mark.parametrize("update, vectors", [(_star_tracker(np.array([10.0, 10.0, 40.0]) * ARCSEC), 1),
                                             (_mounted_star_tracker(np.array([6.0, 6.0, 40.0]) * ARCSEC, MOUNT), 1),
                                             (_two_vectors(2e-3), 2)],
                         ids=["star_tracker", "mounted_star_tracker", "sun_and_magnetometer"])
def test_the_filter_is_consistent_over_many_seeds(update, vectors):
    seeds, duration_s = 24, 200.0
    runs = np.array([[row[:2] for row in _run(seed, duration_s, update)[0]] for seed in range(seeds)])
    nees, nis = runs[..., 0], runs[..., 1]  # seeds x updates
    # an optimal filter's innovations are white: the NIS over time and seeds is a set of independent
    # chi-square(3 x vectors) values (with two vectors, `nis` is the mean of two chi-square(3) values)
    lower, upper = _mean_bounds(nis.size, 3 * vectors)
    assert lower <= (nis * vectors).mean() <= upper, ((nis * vectors).mean(), lower, upper)
    # the estimation errors are correlated in time but independent across seeds: each seed's time-averaged NEES
    # has mean 6 and a variance at most that of one chi-square(6) value, so their mean over seeds lies inside the
    # bounds of a mean of `seeds` independent chi-square(6) values (conservatively)
    lower, upper = _mean_bounds(seeds, 6)
    assert lower <= nees.mean() <= upper, (nees.mean(), lower, upper)


def test_the_bias_estimate_converges_to_the_true_bias():
    _, error, state = _run(3, 600.0, _star_tracker(np.array([5.0, 5.0, 20.0]) * ARCSEC), bias0=(1e-3, -2e-3, 5e-4))
    sigma_bias = np.sqrt(np.diag(state.P)[3:])
    assert np.all(np.abs(error[3:]) < 4 * sigma_bias)
    assert np.all(sigma_bias < 5e-6) and np.linalg.norm(error[3:]) < 1e-5  # from 3e-4 rad/s initial uncertainty


def test_an_outlier_is_rejected_and_leaves_the_state_alone():
    nees, error, _ = _run(5, 60.0, _star_tracker(np.array([10.0, 10.0, 40.0]) * ARCSEC), outlier_at=300)
    flags = [accepted for _, _, accepted in nees]
    assert flags.count(False) == 1 and not flags[29]  # update 30 is the step 300 one
    assert np.degrees(np.linalg.norm(error[:3])) < 0.01  # a 5 deg jump would have pulled the estimate


def test_propagation_without_rate_noise_follows_the_rate_exactly():
    state = new_state([1.0, 0.0, 0.0, 0.0], [1e-3, 0.0, -1e-3], 0.01, 1e-4)
    w_meas = W_TRUE + state.bias_rad_s
    for _ in range(1000):
        mekf_propagate(state.q, state.bias_rad_s, state.P, w_meas, 0.1, 0.0, 0.0)
    expected = _quat(Rotation.from_rotvec(W_TRUE * 100.0))
    assert np.abs(np.array(attitude_error_rad(state.q, expected))).max() < 1e-12
    # without rotation and noise the bias uncertainty integrates into attitude exactly: σ² = σ_θ0² + σ_β² t²
    still = new_state([1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0], 0.01, 1e-4)
    for _ in range(1000):
        mekf_propagate(still.q, still.bias_rad_s, still.P, np.zeros(3), 0.1, 0.0, 0.0)
    assert np.diag(still.P)[:3] == pytest.approx([0.01**2 + (1e-4 * 100.0) ** 2] * 3, rel=1e-12)
    assert still.P[0, 3] == pytest.approx(-1e-8 * 100.0, rel=1e-12)


def test_a_nan_measurement_is_rejected():
    state = new_state([1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0], 0.01, 1e-4)
    before = state.P.copy()
    nis, accepted = mekf_update_vector(state.q, state.bias_rad_s, state.P, np.array([np.nan, 0, 1.0]), SUN_I, 1e-3,
                                       NIS_GATE_3DOF)
    assert not accepted and np.array_equal(state.P, before) and np.array_equal(state.q, [1.0, 0, 0, 0])


def _cycle(state, memory, t, w_meas, q_st=None, css=None):
    nis = np.full(3, np.nan)
    params = np.array([SIGMA_V, SIGMA_U, 10 * ARCSEC, 10 * ARCSEC, 40 * ARCSEC, 1e-7, 1e-2, NIS_GATE_3DOF])
    rejected = mekf_cycle(state.q, state.bias_rad_s, state.P, memory, t, np.asarray(w_meas, dtype=float),
                          q_st is not None, np.zeros(4) if q_st is None else np.asarray(q_st, dtype=float),
                          False, np.zeros(3), np.zeros(3), css is not None,
                          np.zeros(6) if css is None else np.asarray(css, dtype=float),
                          np.array([[1.0, -1, 0, 0, 0, 0], [0, 0, 1, -1, 0, 0], [0, 0, 0, 0, 1, -1]]).ravel(), SUN_I,
                          params, nis)
    return rejected, nis


def test_a_measurement_without_output_is_skipped_neither_used_nor_rejected():
    state = new_state([1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0], 0.01, 1e-4)
    memory = new_memory(True)
    _cycle(state, memory, 0.0, W_TRUE)
    q_before, P_before, counts = state.q.copy(), state.P.copy(), memory[5:8].copy()
    rejected, nis = _cycle(state, memory, 0.1, W_TRUE, q_st=np.full(4, np.nan), css=np.full(6, np.nan))
    assert rejected == 0 and np.all(np.isnan(nis)) and np.array_equal(memory[5:8], counts)
    # propagated only: the attitude turned by the rate, the covariance grew by the process noise
    expected = _quat(_rotation(q_before) * Rotation.from_rotvec(W_TRUE * 0.1))
    assert np.abs(np.array(attitude_error_rad(state.q, expected))).max() < 1e-12
    assert np.all(np.diag(state.P)[:3] > np.diag(P_before)[:3])


def test_a_gyro_without_output_is_replaced_by_its_last_good_reading():
    state = new_state([1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0], 0.01, 1e-4)
    memory = new_memory(True)
    _cycle(state, memory, 0.0, W_TRUE)
    for k in range(1, 11):  # a second of dropout: the body is taken to keep turning at the last rate
        _cycle(state, memory, 0.1 * k, np.full(3, np.nan))
    expected = _quat(Rotation.from_rotvec(W_TRUE * 1.0))
    assert np.abs(np.array(attitude_error_rad(state.q, expected))).max() < 1e-12
    assert np.array_equal(memory[2:5], W_TRUE) and np.all(np.isfinite(state.P))
    fresh = new_state([1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0], 0.01, 1e-4)
    memory = new_memory(True)
    for k in range(3):  # no good reading yet: at rest, never NaN
        _cycle(fresh, memory, 0.1 * k, np.full(3, np.nan))
    assert np.array_equal(fresh.q, [1.0, 0.0, 0.0, 0.0]) and np.all(np.isfinite(fresh.P))
