"""Wheel arrays: pyramid geometry, allocation, saturation scaling, null space, unloading, envelope.

References are computed here by other routes: the minimum-norm solution by
numpy's least squares, the null space from an SVD, torques from the cross
product written out, the envelope by brute force over wheel momentum corners.
"""

import itertools
import re

import numpy as np
import pytest

from attsim.control.allocation import (allocate, allocate_unscaled, allocation_matrix, array_momentum_envelope_Nms,
                                      control_axes_allocation, null_space_projector, null_space_torque, pyramid_axes,
                                      unloading_dipole)
from attsim.errors import InputError

RNG = np.random.default_rng(7)
PYRAMID = pyramid_axes(4)


def test_the_default_pyramid_has_equal_capacity_about_every_body_axis():
    A = PYRAMID.T
    assert np.allclose(np.linalg.norm(PYRAMID, axis=1), 1.0)
    # equal capacity: A Aᵀ is a multiple of the identity (4/3 for unit axes)
    assert np.allclose(A @ A.T, 4.0 / 3.0 * np.eye(3), atol=1e-8)


@pytest.mark.parametrize("axes", [PYRAMID, np.eye(3), pyramid_axes(5, 20.0, 10.0), pyramid_axes(6, 60.0)])
def test_unsaturated_allocation_delivers_the_commanded_torque_with_minimum_norm(axes):
    alloc = allocation_matrix(axes)
    for _ in range(20):
        tau = RNG.normal(size=3) * 1e-3
        u = np.empty(len(axes))
        scale = allocate(alloc, tau, np.zeros(len(axes)), np.full(len(axes), 1.0), u)
        assert scale == 1.0
        assert np.allclose(-axes.T @ u, tau, rtol=0, atol=1e-17)
        reference = np.linalg.lstsq(-axes.T, tau, rcond=None)[0]  # numpy's minimum-norm least squares
        assert np.allclose(u, reference, rtol=0, atol=1e-17)


def test_saturation_scales_the_whole_command_and_keeps_the_torque_direction():
    alloc = allocation_matrix(PYRAMID)
    tau = np.array([2e-2, -1e-2, 5e-3])
    limits = np.array([4e-3, 4e-3, 2e-3, 4e-3])
    u = np.empty(4)
    scale = allocate(alloc, tau, np.zeros(4), limits, u)
    delivered = -PYRAMID.T @ u
    assert 0 < scale < 1 and np.all(np.abs(u) <= limits * (1 + 1e-15))
    assert np.isclose(np.max(np.abs(u) / limits), 1.0)  # the binding wheel sits at its limit
    assert np.allclose(np.cross(delivered, tau), 0.0, atol=1e-18) and delivered @ tau > 0
    assert np.allclose(delivered, scale * tau, rtol=1e-14)


def test_a_scaled_command_never_rounds_past_the_limit():
    """The issue-25 outsider's run logged wheel saturations whose request was 1.0000000000000002e-4 against a
    1e-4 N m limit: u (limit / |u|) rounded one ulp past it, so the wheel clipped what the scaling had sized."""
    limits = np.array([1e-4])
    u = np.empty(1)
    for wanted in (0.00035191402383526194, -0.00035191402383526194):  # u * (1e-4 / |u|) = 1.0000000000000002e-4
        assert abs(wanted * (1e-4 / abs(wanted))) > 1e-4
        allocate(np.array([[1.0, 0.0, 0.0]]), np.array([wanted, 0.0, 0.0]), np.zeros(1), limits, u)
        assert abs(u[0]) == 1e-4 and np.sign(u[0]) == np.sign(wanted)


def test_null_space_torques_leave_the_body_alone_and_move_the_speeds_to_their_target():
    N = null_space_projector(PYRAMID)
    U, s, Vt = np.linalg.svd(PYRAMID.T)
    null = Vt[3:].T  # the null space by SVD: one vector for four wheels
    assert np.allclose(N, null @ null.T, atol=1e-14)
    # wheels spinning with the body held: I_w dΩ/dt = u_ns; the array momentum A I_w Ω must not change
    inertia = 2e-5
    speed = np.array([50.0, -3.0, 10.0, 120.0])
    target = np.zeros(4)
    h_body = PYRAMID.T @ (inertia * speed)
    u = np.empty(4)
    for _ in range(20000):
        null_space_torque(N, speed, target, 1e-5, u)
        assert np.abs(PYRAMID.T @ u).max() < 1e-18
        speed = speed + 0.05 * u / inertia
    assert np.allclose(PYRAMID.T @ (inertia * speed), h_body, rtol=1e-12)
    # what remains is the least-squares speed set holding the same momentum (the null-space component is gone)
    assert abs(null[:, 0] @ speed) < 1e-6 * np.linalg.norm(speed)


def test_unloading_torque_removes_the_momentum_normal_to_the_field():
    for _ in range(20):
        b = RNG.normal(size=3) * 3e-5
        h = RNG.normal(size=3) * 1e-2
        m = np.array(unloading_dipole(b, h, 0.01))
        torque = np.array([m[1] * b[2] - m[2] * b[1], m[2] * b[0] - m[0] * b[2], m[0] * b[1] - m[1] * b[0]])
        b_hat = b / np.linalg.norm(b)
        assert np.allclose(torque, -0.01 * (h - (h @ b_hat) * b_hat), rtol=1e-12, atol=1e-20)
    assert unloading_dipole(np.zeros(3), np.ones(3), 1.0) == (0.0, 0.0, 0.0)


def test_the_momentum_envelope_is_the_best_corner_of_the_wheel_momenta():
    h_max = np.array([0.01, 0.01, 0.02, 0.01])
    directions = RNG.normal(size=(30, 3))
    directions /= np.linalg.norm(directions, axis=1)[:, None]
    envelope = array_momentum_envelope_Nms(PYRAMID, h_max, directions)
    corners = np.array(list(itertools.product(*[(-h, h) for h in h_max])))  # every extreme momentum set
    best = (corners @ PYRAMID @ directions.T).max(axis=0)
    assert np.allclose(envelope, best, rtol=1e-14)


@pytest.mark.parametrize("axes, rule", [
    (pyramid_axes(4, 0.0), "must span three axes"),          # all wheels in the x-y plane
    (pyramid_axes(4, 90.0), "must span three axes"),         # all along z
    (np.eye(3)[:2], "must span three axes"),                 # two wheels
    (np.array([[1.0, 0, 0], [0, 2.0, 0], [0, 0, 1.0]]), "must be unit vectors"),
    (np.ones(3), "must be an (n, 3) array"),
])
def test_arrays_that_cannot_control_three_axes_are_refused(axes, rule):
    with pytest.raises(InputError, match="^axes: " + re.escape(rule)):
        allocation_matrix(axes)


def test_bad_pyramid_arguments_are_refused():
    with pytest.raises(InputError, match="^count: must be an integer >= 3"):
        pyramid_axes(2)
    with pytest.raises(InputError, match="^elevation_deg"):
        pyramid_axes(4, "high")


def test_control_axes_allocation_is_basilisks_rw_motor_torque():
    # all three body axes: the minimum-norm allocation itself
    assert np.allclose(control_axes_allocation(PYRAMID, np.eye(3)), allocation_matrix(PYRAMID), rtol=0, atol=1e-15)
    # two control axes (Basilisk's rwMotorTorque with controlAxes_B of two rows): C(-A u) = C tau, minimum norm
    C = np.array([[1.0, 0.0, 0.0], [0.0, 0.6, 0.8]])
    alloc = control_axes_allocation(PYRAMID, C)
    for _ in range(10):
        tau = RNG.normal(size=3) * 1e-3
        u = alloc @ tau
        assert np.allclose(C @ (-PYRAMID.T @ u), C @ tau, rtol=0, atol=1e-17)
        reference = np.linalg.lstsq(-C @ PYRAMID.T, C @ tau, rcond=None)[0]
        assert np.allclose(u, reference, rtol=0, atol=1e-17)
    # two wheels suffice for two axes
    assert control_axes_allocation(np.eye(3)[:2], np.eye(3)[:2]).shape == (2, 3)


@pytest.mark.parametrize("axes, rule", [([[0.0, 0.0, 0.0], [0.0, 1.0, 0.0]], "no zero row"),
                                        ([[1.0, 0.0, 0.0], [2.0, 0.0, 0.0]], "independent"),
                                        (np.eye(4)[:, :3], "1 to 3 rows"), ([[1.0, 0.0]], "rows of 3"),
                                        ([[0.0, 0.0, 1.0]], "spanned")])
def test_control_axes_are_checked_by_name(axes, rule):
    with pytest.raises(InputError, match="control_axes") as caught:
        control_axes_allocation(np.eye(3)[:2], axes)
    assert rule in str(caught.value)


def test_unscaled_allocation_leaves_each_wheel_to_clip_its_own():
    alloc = allocation_matrix(PYRAMID)
    tau = np.array([2e-2, -1e-2, 5e-3])
    scaled, unscaled = np.empty(4), np.empty(4)
    allocate(alloc, tau, np.zeros(4), np.full(4, 4e-3), scaled)
    allocate_unscaled(alloc, tau, np.zeros(4), unscaled)
    assert np.allclose(-PYRAMID.T @ unscaled, tau, rtol=0, atol=1e-17)  # the whole torque, beyond the limits
    assert np.abs(unscaled).max() > 4e-3 >= np.abs(scaled).max() * (1 - 1e-15)
