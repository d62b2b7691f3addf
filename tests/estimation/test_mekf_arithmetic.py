"""The MEKF kernels' written-out arithmetic against the textbook numpy formulation, and compiled against Python.

The reference below is the filter as numpy matrix algebra (``@``,
``np.linalg.inv``) as the kernels had it: Markley & Crassidis (2014)
sec. 6.2 for the propagation ``P ← Φ P Φᵀ + Q``, and the update ``S = H P Hᵀ + R``,
``K = P Hᵀ S⁻¹``, Joseph form ``(I − KH) P (I − KH)ᵀ + K R Kᵀ``. It is
written here, not imported: the kernels must agree with it up to the order
of summation (their own sums, a Cholesky inverse in place of LU), and the
kernels compiled and run as plain Python (:func:`attsim._core.interpret.interpret`)
must agree to the bit.
"""

import math

import numpy as np
import pytest

from attsim._core.interpret import interpret
from attsim.dynamics import qconj, qrotate
from attsim.estimation.kernels import (DIVERGED, mekf_cycle, mekf_propagate, mekf_update_quaternion,
                                       mekf_update_vector, new_memory)

from tests.conftest import random_quaternions

CASES = 300
# the kernels sum in another order than numpy's BLAS and invert S by Cholesky rather than LU: the results differ
# in the last digits, a few eps times the condition of S at most (kept below 1e3 by the draws below)
AGREE = 1e-12


def qmul(p, q):
    w1, v1, w2, v2 = p[0], p[1:], q[0], q[1:]
    return np.concatenate([[w1 * w2 - v1 @ v2], w1 * v2 + w2 * v1 + np.cross(v1, v2)])


def qexp(v):
    angle = np.linalg.norm(v)
    scale = 0.5 - angle**2 / 48.0 if angle < 1e-4 else math.sin(0.5 * angle) / angle
    return np.concatenate([[math.cos(0.5 * angle)], scale * v])


def skew(v):
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


def rotate_to_body(q, r):
    """``R_BI r`` for ``q = q_IB``, by attsim's own rotation: the innovation is a difference of nearly equal
    vectors, and a rotation rounded otherwise would change its last digits by more than the filter's arithmetic."""
    return np.array(qrotate(qconj(tuple(q)), tuple(r)))


def reference_propagate(q, bias, P, w_meas, dt, sigma_v, sigma_u):
    w = w_meas - bias
    qn = qmul(q, qexp(w * dt))
    n = np.linalg.norm(w)
    W = skew(w)
    a = n * dt
    if a < 1e-4:
        c1, c2, c3 = dt * (1 - a * a / 6), dt * dt * (0.5 - a * a / 24), dt**3 * (1 / 6 - a * a / 120)
    else:
        c1, c2, c3 = math.sin(a) / n, (1 - math.cos(a)) / n**2, (a - math.sin(a)) / n**3
    Phi = np.eye(6)
    Phi[:3, :3] = np.eye(3) - c1 * W + c2 * W @ W
    Phi[:3, 3:] = c2 * W - dt * np.eye(3) - c3 * W @ W
    su2 = sigma_u**2
    Q = np.block([[(sigma_v**2 * dt + su2 * dt**3 / 3) * np.eye(3), -0.5 * su2 * dt**2 * np.eye(3)],
                  [-0.5 * su2 * dt**2 * np.eye(3), su2 * dt * np.eye(3)]])
    Pn = Phi @ P @ Phi.T + Q
    return qn / np.linalg.norm(qn), 0.5 * (Pn + Pn.T)


def reference_update(q, bias, P, y, H, R, gate):
    S = H @ P @ H.T + R
    S_inv = np.linalg.inv(S)
    nis = y @ S_inv @ y
    if not nis <= gate:
        return nis, False, q, bias, P
    K = P @ H.T @ S_inv
    dx = K @ y
    qn = qmul(q, np.concatenate([[1.0], 0.5 * dx[:3]]))
    A = np.eye(6) - K @ H
    Pn = A @ P @ A.T + K @ R @ K.T
    return nis, True, qn / np.linalg.norm(qn), bias + dx[3:], 0.5 * (Pn + Pn.T)


def random_covariance(rng, sigma_attitude, sigma_bias):
    """A covariance of (δθ, Δβ) with correlations, its eigenvalues within a factor 30 of each other per block."""
    scale = np.diag([sigma_attitude] * 3 + [sigma_bias] * 3)
    basis, _ = np.linalg.qr(rng.normal(size=(6, 6)))
    core = basis @ np.diag(rng.uniform(0.2, 6.0, 6)) @ basis.T
    return scale @ core @ scale


def close(actual, expected, scale):
    return np.max(np.abs(np.asarray(actual) - np.asarray(expected))) <= AGREE * scale


def draw_state(rng):
    q = random_quaternions(rng, 1)[0]
    return q, rng.normal(0, 1e-3, 3), random_covariance(rng, rng.uniform(1e-4, 0.1), rng.uniform(1e-6, 1e-3))


def test_propagation_agrees_with_the_matrix_formulation(rng):
    for k in range(CASES):
        q, bias, P = draw_state(rng)
        # rates from the series branch (|ω| Δt < 1e-4) to several radians per step
        w = bias + rng.normal(size=3) * 10.0 ** rng.uniform(-7, 1)
        dt, sigma_v, sigma_u = rng.uniform(0.01, 1.0), 10.0 ** rng.uniform(-6, -3), 10.0 ** rng.uniform(-9, -5)
        q_ref, P_ref = reference_propagate(q, bias, P, w, dt, sigma_v, sigma_u)
        q_new, bias_new, P_new = q.copy(), bias.copy(), P.copy()
        assert mekf_propagate(q_new, bias_new, P_new, w, dt, sigma_v, sigma_u)
        assert np.array_equal(bias_new, bias)
        assert close(q_new, q_ref, 1.0), k
        assert close(P_new, P_ref, np.max(np.abs(P_ref))), k
        assert np.array_equal(P_new, P_new.T)


def _vector_case(rng, q, P):
    r_ref = rng.normal(size=3)
    r_ref /= np.linalg.norm(r_ref)
    b_hat = rotate_to_body(q, r_ref)
    H = np.zeros((3, 6))
    H[:, :3] = skew(b_hat)
    # the measurement noise comparable with the attitude's: S's condition stays small
    sigma = math.sqrt(np.max(np.abs(H @ P @ H.T))) * rng.uniform(0.3, 3.0)
    y = rng.normal(0, 1.5 * sigma, 3)
    return r_ref, b_hat + y, sigma, y, H, np.eye(3) * sigma**2


def _quaternion_case(rng, q, P):
    sigma = np.sqrt(np.diag(P)[:3]) * rng.uniform(0.3, 3.0, 3)
    noise = rng.normal(0, 1.5, 3) * sigma
    q_meas = qmul(q, qexp(noise))
    d = qmul(q * np.array([1.0, -1.0, -1.0, -1.0]), q_meas)
    y = np.sign(d[0]) * 2.0 * d[1:]
    H = np.hstack([np.eye(3), np.zeros((3, 3))])
    return q_meas, sigma, y, H, np.diag(sigma**2)


@pytest.mark.parametrize("kind", ["vector", "quaternion"])
def test_updates_agree_with_the_matrix_formulation(rng, kind):
    accepted = 0
    for k in range(CASES):
        q, bias, P = draw_state(rng)
        gate = rng.uniform(3.0, 20.0)
        q_new, bias_new, P_new = q.copy(), bias.copy(), P.copy()
        if kind == "vector":
            r_ref, b_meas, sigma, y, H, R = _vector_case(rng, q, P)
            nis, ok = mekf_update_vector(q_new, bias_new, P_new, b_meas, r_ref, sigma, gate)
        else:
            q_meas, sigma, y, H, R = _quaternion_case(rng, q, P)
            nis, ok = mekf_update_quaternion(q_new, bias_new, P_new, q_meas, sigma, gate, (1.0, 0.0, 0.0, 0.0))
        nis_ref, ok_ref, q_ref, bias_ref, P_ref = reference_update(q, bias, P, y, H, R, gate)
        assert abs(nis - nis_ref) <= AGREE * max(1.0, nis_ref), k
        if abs(nis_ref - gate) > 1e-9 * gate:  # (at the gate itself the two may round to either side)
            assert ok == ok_ref, k
        if ok and ok_ref:
            accepted += 1
            assert close(q_new, q_ref, 1.0), k
            assert close(bias_new, bias_ref, np.max(np.abs(bias_ref))), k
            assert close(P_new, P_ref, np.max(np.abs(P_ref))), k
            assert np.array_equal(P_new, P_new.T)
        elif not ok:
            assert np.array_equal(q_new, q) and np.array_equal(bias_new, bias) and np.array_equal(P_new, P)
    assert CASES // 4 < accepted < CASES  # both branches were exercised


def _kernel_calls(rng):
    """Random inputs of each kernel: (kernel, arguments, indices of the arrays it changes)."""
    calls = []
    for _ in range(60):
        q, bias, P = draw_state(rng)
        w = bias + rng.normal(size=3) * 10.0 ** rng.uniform(-7, 1)
        calls.append((mekf_propagate, [q, bias, P, w, rng.uniform(0.01, 1.0), 1e-5, 1e-7]))
        r_ref, b_meas, sigma, *_ = _vector_case(rng, q, P)
        calls.append((mekf_update_vector, [q, bias, P, b_meas, r_ref, sigma, 16.27]))
        q_meas, sigma, *_ = _quaternion_case(rng, q, P)
        mount = tuple(rng.normal(size=4) / 2.0)
        mount = tuple(np.array(mount) / np.linalg.norm(mount))
        calls.append((mekf_update_quaternion, [q, bias, P, q_meas, sigma, 16.27, (1.0, 0.0, 0.0, 0.0)]))
        calls.append((mekf_update_quaternion, [q, bias, P, q_meas, sigma, 16.27, mount]))
    return calls


def test_the_kernels_give_the_same_bits_compiled_and_as_python(rng):
    # what makes the interpreted backend's telemetry the compiled one's to the bit (tests/paths/test_mekf_backends.py)
    for kernel, arguments in _kernel_calls(rng):
        compiled = [a.copy() if isinstance(a, np.ndarray) else a for a in arguments]
        python = [a.copy() if isinstance(a, np.ndarray) else a for a in arguments]
        result_compiled = kernel(*compiled)
        result_python = interpret(kernel)(*python)
        assert result_compiled == result_python, kernel.__name__
        for a, b in zip(compiled[:3], python[:3]):
            assert np.array_equal(a, b), kernel.__name__


def _cycle_arguments(P):
    q, bias = np.array([1.0, 0.0, 0.0, 0.0]), np.zeros(3)
    memory = new_memory(True)
    params = np.array([1e-5, 1e-7, 1e-4, 1e-4, 1e-4, 1e-7, 0.01, 16.27, 0.01, 1.0, 0.0, 0.0, 0.0])  # PARAMETERS
    q_st = np.array([math.cos(5e-5), math.sin(5e-5), 0.0, 0.0])
    return [q, bias, P, memory, 0.0, np.zeros(3), True, q_st, False, np.zeros(3), np.zeros(3), False, np.zeros(6),
            np.zeros(18), np.zeros(3), params, np.zeros(3)]


@pytest.mark.parametrize("backend", ["compiled", "python"])
def test_an_update_with_a_covariance_that_is_no_longer_one_stops_the_filter(backend):
    # a P with a negative attitude block (finite: nothing else notices) gives an innovation covariance that is not
    # positive definite: the update must neither use it nor reject the measurement as an outlier for good
    cycle = mekf_cycle if backend == "compiled" else interpret(mekf_cycle)
    P = np.diag([-1e-4] * 3 + [1e-8] * 3)
    arguments = _cycle_arguments(P)
    q, bias = arguments[0].copy(), arguments[1].copy()
    assert cycle(*arguments) == DIVERGED
    assert np.array_equal(arguments[0], q) and np.array_equal(arguments[1], bias)
    assert np.array_equal(arguments[2], P)
    healthy = _cycle_arguments(np.diag([1e-4] * 3 + [1e-8] * 3))
    assert cycle(*healthy) == 0 and healthy[16][0] < 16.27


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")  # the overflow is the case under test
@pytest.mark.parametrize("backend", ["compiled", "python"])
def test_a_rotation_beyond_floating_point_stops_the_propagation_on_both_backends(backend):
    # |ω| Δt overflows: the sine of an infinite angle is NaN compiled but raises in Python; the kernel refuses first
    propagate = mekf_propagate if backend == "compiled" else interpret(mekf_propagate)
    q, bias, P = np.array([1.0, 0.0, 0.0, 0.0]), np.zeros(3), np.eye(6) * 1e-6
    before = q.copy(), P.copy()
    assert not propagate(q, bias, P, np.array([1e200, 0.0, 0.0]), 0.1, 1e-5, 1e-7)
    assert np.array_equal(q, before[0]) and np.array_equal(P, before[1])
    assert propagate(q, bias, P, np.array([1.0, 0.0, 0.0]), 0.1, 1e-5, 1e-7)
