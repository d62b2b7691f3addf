"""TRIAD, QUEST and Davenport's q-method against known attitudes, and QUEST's covariance against Monte Carlo.

References are built here by other means: body vectors from a known ``q_IB``
through :func:`attsim.rotations.quat_rotate` (or written out by hand), and
the error statistics from samples drawn with numpy's generator."""

import numpy as np
import pytest

from attsim import estimation, rotations
from attsim.estimation import determination
from attsim.errors import InputError

from tests.conftest import random_quaternions


def unit_rows(v):
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def observe(q_IB, r):
    """Body-axis vectors of inertial directions ``r``: ``b = R_IBᵀ r``."""
    return rotations.quat_rotate(rotations.quat_conjugate(q_IB), r)


def angle(q1, q2):
    return rotations.quat_angle_between(q1, q2)


def test_convention_by_hand():
    # q_IB = 90 deg about z: the body x axis points along inertial y, body z along inertial z
    expected = np.array([np.sqrt(0.5), 0.0, 0.0, np.sqrt(0.5)])
    b = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    r = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    for q in (estimation.quest(b, r), estimation.davenport(b, r), estimation.triad(b[0], b[1], r[0], r[1])):
        np.testing.assert_allclose(q, expected, atol=1e-15)


def test_one_compiled_solver_serves_weights_given_broadcast_or_left_out(rng):
    # a broadcast view is read-only, and numba would compile the solver again (~20 s) for each mix of read-only and
    # writable arrays: whatever the caller passes, the solver gets writable copies, so one specialisation serves all
    q_true = random_quaternions(rng, 3)
    r = unit_rows(rng.normal(size=(3, 2, 3)))
    b = observe(q_true[:, None, :], r)
    for weights in (None, np.array([1.0, 0.3]), np.ones((3, 2))):
        for method in (estimation.quest, estimation.davenport):
            assert np.max(angle(method(b, r, weights), q_true)) < 1e-12
    estimation.quest(b, r[0], sigma_rad=np.array([1e-3, 2e-3]), covariance=True)  # the reference broadcast too
    assert len(determination._solve_many.signatures) == 1, determination._solve_many.signatures


def near_pi_and_identity(rng):
    axes = unit_rows(rng.normal(size=(6, 3)))
    angles = np.array([0.0, 1e-9, np.pi, np.pi - 1e-9, np.pi - 1e-4, 3.0])  # identity, near it, π and near π
    return rotations.axis_angle_to_quat(axes, angles)


@pytest.mark.parametrize("method", [estimation.quest, estimation.davenport])
def test_noise_free_observations_give_the_attitude(rng, method):
    # π about each axis is QUEST's worst case: the closed form is 0/0 there
    half_turns = rotations.axis_angle_to_quat(np.eye(3), np.full(3, np.pi))
    q_true = np.concatenate([random_quaternions(rng, 200), near_pi_and_identity(rng), half_turns])
    r = unit_rows(rng.normal(size=(q_true.shape[0], 4, 3)))
    b = observe(q_true[:, None, :], r)
    weights = rng.uniform(0.1, 2.0, size=(q_true.shape[0], 4))
    q = method(b, r, weights)
    assert q.shape == q_true.shape
    assert np.all(q[:, 0] >= 0.0)
    assert np.max(angle(q, q_true)) < 1e-12
    # the vectors need not be unit: scaling each observation changes nothing
    q_scaled = method(b * rng.uniform(0.5, 3.0, size=(q_true.shape[0], 4, 1)), r * 7.0, weights)
    assert np.max(angle(q_scaled, q_true)) < 1e-12


def test_triad_noise_free_and_equal_to_quest_on_two_exact_vectors(rng):
    q_true = np.concatenate([random_quaternions(rng, 200), near_pi_and_identity(rng)])
    r = unit_rows(rng.normal(size=(q_true.shape[0], 2, 3)))
    b = observe(q_true[:, None, :], r)
    q_triad = estimation.triad(b[:, 0], b[:, 1], r[:, 0], r[:, 1])
    assert np.max(angle(q_triad, q_true)) < 1e-12
    q_quest = estimation.quest(b, r, np.array([1.0, 0.3]))
    assert np.max(angle(q_triad, q_quest)) < 1e-12
    assert np.all(q_triad[:, 0] >= 0.0)


def test_triad_matches_the_first_pair_exactly(rng):
    # with inconsistent pairs TRIAD keeps b1 -> r1 and only uses b2 for the roll about it
    q_true = random_quaternions(rng, 1)[0]
    r1, r2 = unit_rows(rng.normal(size=(2, 3)))
    b1, b2 = observe(q_true, r1), observe(q_true, r2) + np.array([0.01, -0.02, 0.015])
    q = estimation.triad(b1, b2, r1, r2)
    np.testing.assert_allclose(rotations.quat_rotate(q, b1), r1, atol=1e-15)
    normal = np.cross(r1, r2)
    assert abs(np.dot(rotations.quat_rotate(q, np.cross(b1, b2)) / np.linalg.norm(np.cross(b1, b2)),
                      normal / np.linalg.norm(normal)) - 1.0) < 1e-15


def noisy(b, sigma, rng):
    """The QUEST measurement model: each unit vector tilted by isotropic noise of ``sigma`` rad normal to it."""
    n = rng.normal(size=b.shape) * sigma[..., None]
    n -= np.sum(n * b, axis=-1, keepdims=True) * b
    return unit_rows(b + n)


def test_quest_covariance_matches_monte_carlo(rng):
    draws = 2000
    sigma = np.array([1e-3, 3e-3, 2e-3])  # a star tracker-like, a Sun sensor-like and a magnetometer-like direction
    q_true = random_quaternions(rng, 1)[0]
    r = unit_rows(np.array([[1.0, 0.2, 0.1], [0.1, 1.0, -0.3], [-0.4, 0.2, 1.0]]))
    b_true = observe(q_true, r)
    b = noisy(np.broadcast_to(b_true, (draws, 3, 3)), np.broadcast_to(sigma, (draws, 3)), rng)
    solution = estimation.quest(b, r, sigma_rad=sigma, covariance=True)
    # δθ in body axes with q_est = q_true ⊗ (1, δθ/2): small-angle rotation vector of q_true* ⊗ q_est
    error = rotations.quat_to_rotvec(rotations.quat_multiply(rotations.quat_conjugate(q_true), solution.q_IB))
    # Shuster's P at the true directions, written out here
    information = sum((np.eye(3) - np.outer(v, v)) / s**2 for v, s in zip(b_true, sigma))
    P = np.linalg.inv(information)
    sample = np.cov(error.T)
    assert abs(np.trace(sample) / np.trace(P) - 1.0) < 0.06  # 1σ of the ratio is ~2 % at 2,000 draws
    assert np.all(np.abs(error.mean(axis=0)) < 4.0 * np.sqrt(np.diag(P) / draws))
    # the normalised estimation error squared is χ² with 3 degrees of freedom: mean 3, 1σ of the mean sqrt(6/N)
    nees = np.einsum("ni,ij,nj->n", error, information, error)
    assert abs(nees.mean() - 3.0) < 4.0 * np.sqrt(6.0 / draws)
    # the returned covariance uses the measured directions: equal to P to first order in σ
    np.testing.assert_allclose(solution.covariance_rad2, np.broadcast_to(P, (draws, 3, 3)), rtol=0.02,
                               atol=0.02 * np.max(np.abs(P)))
    np.testing.assert_allclose(estimation.quest_covariance(b_true, sigma), P, rtol=1e-12, atol=1e-12 * np.max(P))


def test_weights_default_to_inverse_variances(rng):
    q_true = random_quaternions(rng, 1)[0]
    r = unit_rows(rng.normal(size=(3, 3)))
    sigma = np.array([1e-3, 1e-2, 5e-3])
    b = noisy(observe(q_true, r), sigma, rng)
    np.testing.assert_allclose(estimation.quest(b, r, sigma_rad=sigma), estimation.quest(b, r, 1.0 / sigma**2),
                               atol=1e-15)
    # QUEST and the eigen-decomposition solve the same problem with noise too
    assert angle(estimation.quest(b, r, sigma_rad=sigma), estimation.davenport(b, r, sigma_rad=sigma)) < 1e-12


def test_compiled_kernels_match_the_python_api(rng):
    q_true = random_quaternions(rng, 1)[0]
    r = unit_rows(rng.normal(size=(3, 3)))
    b = noisy(observe(q_true, r), np.full(3, 1e-3), rng)
    w = np.array([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(estimation.quest_kernel(b, r, w), estimation.quest(b, r, w))
    np.testing.assert_array_equal(estimation.davenport_kernel(b, r, w), estimation.davenport(b, r, w))
    np.testing.assert_array_equal(estimation.triad_kernel(tuple(b[0]), tuple(b[1]), tuple(r[0]), tuple(r[1])),
                                  estimation.triad(b[0], b[1], r[0], r[1]))


def test_kernel_skips_a_missing_direction(rng):
    # in the loop a sensor with nothing to see (the Sun sensor in eclipse) reports a zero vector
    q_true = random_quaternions(rng, 1)[0]
    r = unit_rows(rng.normal(size=(3, 3)))
    b = noisy(observe(q_true, r), np.full(3, 1e-3), rng)
    w = np.array([1.0, 2.0, 3.0])
    b_missing = b.copy()
    b_missing[1] = 0.0
    kept = [0, 2]
    np.testing.assert_allclose(estimation.quest_kernel(b_missing, r, w), estimation.quest(b[kept], r[kept], w[kept]),
                               atol=1e-15)


def refused(call, field, rule):
    with pytest.raises(InputError) as info:
        call()
    assert info.value.field == field and rule in info.value.rule, str(info.value)


def test_bad_inputs_are_refused():
    x, y, z = np.eye(3)
    b, r = np.array([x, y]), np.array([y, z])
    refused(lambda: estimation.triad(x, 2 * x, y, z), "b2", "parallel")
    refused(lambda: estimation.triad(x, -x, y, z), "b2", "parallel")
    refused(lambda: estimation.triad(x, y, z, -z), "r2", "parallel")
    refused(lambda: estimation.triad(np.zeros(3), y, y, z), "b1", "zero vector")
    refused(lambda: estimation.triad(x, y, y, [1.0, 2.0]), "r2", "last axis of length 3")
    refused(lambda: estimation.triad(x, y, y, [np.nan, 0.0, 1.0]), "r2", "finite")
    refused(lambda: estimation.quest(x, y), "body_vectors", "(..., n, 3)")
    refused(lambda: estimation.quest(b, np.array([y, z, x])), "reference_vectors", "shape of body_vectors")
    refused(lambda: estimation.quest(np.array([x, 2 * x, -x]), np.array([y, z, x])), "body_vectors", "2 non-parallel")
    refused(lambda: estimation.quest(b, np.array([z, z])), "reference_vectors", "2 non-parallel")
    refused(lambda: estimation.quest(np.array([x, [0.0, 0.0, 0.0]]), r), "body_vectors", "zero vector")
    refused(lambda: estimation.quest(b, r, [1.0, 0.0]), "weights", "> 0")
    refused(lambda: estimation.quest(b, r, [1.0, -1.0]), "weights", "> 0")
    refused(lambda: estimation.quest(b, r, [1.0, 1.0, 1.0]), "weights", "one entry per direction")
    # a batch's weights: the shape that fits is said (it once offered "(..., n)" and refused (4, 2) for 5 problems)
    refused(lambda: estimation.quest(np.stack([b] * 5), np.stack([r] * 5), np.ones((4, 2))), "weights",
            "or shape (5, 2) (a row per problem of the batch)")
    refused(lambda: estimation.quest(b, r, sigma_rad=[1e-3, 0.0]), "sigma_rad", "> 0")
    refused(lambda: estimation.quest(b, r, covariance=True), "sigma_rad", "needed for the covariance")
    refused(lambda: estimation.davenport(b, r, [1.0, np.inf]), "weights", "finite")
