"""attsim.rotations against scipy's Rotation (scalar-last, converted at the
boundary) and against hand-worked cases."""

import numpy as np
import pytest
from hypothesis import given, settings
from scipy.spatial.transform import Rotation

from attsim import rotations as rot
from attsim.errors import InputError

from tests.conftest import random_quaternions, unit_quaternions, vectors3

TOL = 1e-12


def scipy_rotation(q):
    return Rotation.from_quat(q, scalar_first=True)


def same_rotation(q1, q2):
    """q and -q are the same attitude."""
    q1, q2 = np.asarray(q1), np.asarray(q2)
    return min(np.max(np.abs(q1 - q2)), np.max(np.abs(q1 + q2)))


@settings(max_examples=200, deadline=None)
@given(unit_quaternions, unit_quaternions)
def test_product_matches_scipy_composition(p, q):
    expected = (scipy_rotation(p) * scipy_rotation(q)).as_quat(scalar_first=True)
    assert same_rotation(rot.quat_multiply(p, q), expected) < TOL


@settings(max_examples=200, deadline=None)
@given(unit_quaternions, vectors3)
def test_rotate_matches_scipy_apply(q, v):
    assert np.allclose(rot.quat_rotate(q, v), scipy_rotation(q).apply(v), rtol=0, atol=TOL * 10)


@settings(max_examples=200, deadline=None)
@given(unit_quaternions)
def test_dcm_matches_scipy_and_round_trips(q):
    R = rot.quat_to_dcm(q)
    assert np.max(np.abs(R - scipy_rotation(q).as_matrix())) < TOL
    assert same_rotation(rot.dcm_to_quat(R), q) < TOL


@settings(max_examples=200, deadline=None)
@given(unit_quaternions)
def test_euler321_matches_scipy_zyx(q):
    angles = rot.quat_to_euler321(q)
    if np.cos(angles[1]) > 1e-3:  # away from gimbal lock both are unique
        difference = angles - scipy_rotation(q).as_euler("ZYX")
        assert np.max(np.abs(np.angle(np.exp(1j * difference)))) < 1e-10  # +pi and -pi agree
    assert same_rotation(rot.euler321_to_quat(angles), q) < 1e-10
    assert np.max(np.abs(rot.euler321_to_dcm(angles) - rot.quat_to_dcm(q))) < 1e-10
    assert same_rotation(rot.euler321_to_quat(rot.dcm_to_euler321(rot.quat_to_dcm(q))), q) < 1e-10


@settings(max_examples=200, deadline=None)
@given(unit_quaternions)
def test_mrp_and_rotvec_match_scipy(q):
    r = scipy_rotation(q)
    mrp = rot.quat_to_mrp(q)
    # at 180 deg both p and -p have norm 1 and name the same rotation
    on_the_shadow_boundary = abs(np.linalg.norm(mrp) - 1.0) < 1e-9
    assert np.allclose(mrp, r.as_mrp(), rtol=0, atol=TOL) \
        or (on_the_shadow_boundary and np.allclose(mrp, -r.as_mrp(), rtol=0, atol=TOL))
    assert np.linalg.norm(rot.quat_to_mrp(q)) <= 1.0 + 1e-15
    assert same_rotation(rot.mrp_to_quat(rot.quat_to_mrp(q)), q) < TOL
    rv = rot.quat_to_rotvec(q)
    assert np.allclose(rv, r.as_rotvec(), rtol=0, atol=1e-10) or (
        abs(np.linalg.norm(rv) - np.pi) < 1e-9 and np.allclose(rv, -r.as_rotvec(), rtol=0, atol=1e-10)
    )
    assert same_rotation(rot.rotvec_to_quat(rv), q) < TOL


def test_batches_match_single_calls(rng):
    q = random_quaternions(rng, 50)
    p = random_quaternions(rng, 50)
    v = rng.normal(size=(50, 3))
    batched = rot.quat_multiply(p, q)
    for i in range(50):
        assert np.array_equal(batched[i], rot.quat_multiply(p[i], q[i]))
    assert rot.quat_to_dcm(q.reshape(5, 10, 4)).shape == (5, 10, 3, 3)
    assert np.allclose(rot.quat_rotate(q, v), Rotation.from_quat(q, scalar_first=True).apply(v), rtol=0, atol=TOL * 10)
    assert np.allclose(np.abs(np.sum(rot.dcm_to_quat(rot.quat_to_dcm(q)) * q, axis=1)), 1.0, rtol=0, atol=TOL)


def test_hand_cases():
    # 90 deg about z takes body x to inertial y
    q = rot.axis_angle_to_quat([0, 0, 1], np.pi / 2)
    assert np.allclose(q, [np.sqrt(0.5), 0, 0, np.sqrt(0.5)], rtol=0, atol=1e-15)
    assert np.allclose(rot.quat_rotate(q, [1.0, 0, 0]), [0, 1, 0], rtol=0, atol=1e-15)
    assert np.allclose(rot.quat_to_euler321(q), [np.pi / 2, 0, 0], rtol=0, atol=1e-15)
    # i * j = k (Hamilton)
    assert np.array_equal(rot.quat_multiply([0, 1, 0, 0], [0, 0, 1, 0]), [0, 0, 0, 1])
    # pitch +30 deg about y: the body x axis tips towards inertial -z
    R = rot.euler321_to_dcm([0.0, np.radians(30), 0.0])
    assert np.allclose(R[:, 0], [np.cos(np.radians(30)), 0, -np.sin(np.radians(30))], rtol=0, atol=1e-15)
    # identity has a defined axis and zero angle
    axis, angle = rot.quat_to_axis_angle([1.0, 0, 0, 0])
    assert angle == 0.0 and np.array_equal(axis, [1.0, 0, 0])


def test_dcm_to_quat_is_robust_near_180_degrees():
    # trace = -1: the naive w-pivot formula divides by zero here
    for axis in ([1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 1]):
        q = rot.axis_angle_to_quat(axis, np.pi - 1e-14)
        assert same_rotation(rot.dcm_to_quat(rot.quat_to_dcm(q)), q) < TOL


def test_gimbal_lock_euler_angles_reconstruct_attitude():
    q = rot.euler321_to_quat([0.7, np.pi / 2, 0.2])
    angles = rot.quat_to_euler321(q)
    assert np.isclose(angles[1], np.pi / 2)
    assert same_rotation(rot.euler321_to_quat(angles), q) < 1e-10


def test_small_angle_between_is_accurate():
    q1 = rot.axis_angle_to_quat([0.3, -1, 2], 0.4)
    q2 = rot.quat_multiply(q1, rot.axis_angle_to_quat([1, 0, 0], 1e-12))
    assert np.isclose(rot.quat_angle_between(q1, q2), 1e-12, rtol=1e-3)
    assert np.isclose(rot.quat_angle_between(q1, -q2), 1e-12, rtol=1e-3)


def test_bad_shapes_and_zero_quaternion_are_refused():
    with pytest.raises(InputError, match="last axis of length 4"):
        rot.quat_to_dcm([1.0, 0, 0])
    with pytest.raises(InputError, match=r"shape \(\.\.\., 3, 3\)"):
        rot.dcm_to_quat(np.eye(2))
    with pytest.raises(InputError, match="non-zero"):
        rot.quat_normalize([0.0, 0, 0, 0])
    with pytest.raises(InputError, match="axis"):
        rot.axis_angle_to_quat([0.0, 0, 0], 1.0)
