"""attsim.analysis: derived quantities against closed forms."""

import numpy as np
import pandas as pd
import pytest

import attsim
from attsim import analysis, rotations
from attsim.errors import InputError


def test_symmetric_top_solution_satisfies_the_equations_of_motion():
    # finite differences of the closed form against Euler's equation and the kinematics
    I = np.array([3.0, 3.0, 1.0])  # prolate, symmetric about z
    q0 = rotations.euler321_to_quat([0.3, -0.4, 1.0])
    t = np.linspace(0.0, 5.0, 5001)
    ref = analysis.symmetric_top(I, (0.2, -0.5, 2.0), t, q0=q0)
    q, w = ref[["qw", "qx", "qy", "qz"]].to_numpy(), ref[["wx", "wy", "wz"]].to_numpy()
    h = t[1] - t[0]
    w_dot = (w[2:] - w[:-2]) / (2 * h)
    expected_w_dot = -np.cross(w[1:-1], w[1:-1] * I) / I
    assert np.abs(w_dot - expected_w_dot).max() < 1e-5
    q_dot = (q[2:] - q[:-2]) / (2 * h)
    expected_q_dot = 0.5 * rotations.quat_multiply(q[1:-1], np.column_stack([np.zeros(len(t) - 2), w[1:-1]]))
    assert np.abs(q_dot - expected_q_dot).max() < 1e-5
    assert np.allclose(ref.iloc[0].to_numpy(), np.concatenate([q0, [0.2, -0.5, 2.0]]), rtol=0, atol=1e-15)


def test_symmetric_top_about_x_axis():
    I = np.array([3.5, 2.0, 2.0])
    df = attsim.propagate(I, (1.0, 0.3, -0.2), t_end=20.0, dt=0.005)
    ref = analysis.symmetric_top(I, (1.0, 0.3, -0.2), df.index)
    assert np.abs(df.to_numpy()[:, 4:] - ref.to_numpy()[:, 4:]).max() < 1e-8
    assert rotations.quat_angle_between(df.to_numpy()[:, :4], ref.to_numpy()[:, :4]).max() < 1e-8


def test_nutation_of_the_seed_top_is_constant_and_analytic():
    df = attsim.propagate([2, 2, 8], [1, 0, 1], t_end=20.0, dt=0.01, allow_nonphysical=True)
    nutation = analysis.nutation_angle(df)
    # H_B = (2, 0, 8): angle to the symmetry axis z is atan(2 / 8)
    assert np.allclose(nutation, np.arctan2(2.0, 8.0), rtol=0, atol=1e-8)
    # about another axis, given explicitly
    assert np.isclose(analysis.nutation_angle(df, axis_B=(1, 0, 0)).iloc[0], np.arctan2(8.0, 2.0))


def test_invariants_and_momentum_frames():
    q0 = rotations.axis_angle_to_quat([0, 0, 1], np.pi / 2)
    df = attsim.propagate([1.0, 2.0, 2.5], (1.0, 0.0, 0.0), q0=q0, t_end=1.0, dt=0.01)
    H_B = analysis.angular_momentum_body(df)
    H_I = analysis.angular_momentum_inertial(df)
    assert np.allclose(H_B.iloc[0], [1.0, 0.0, 0.0], rtol=0, atol=1e-15)
    assert np.allclose(H_I.iloc[0], [0.0, 1.0, 0.0], rtol=0, atol=1e-15)  # body x is inertial y
    inv = analysis.invariants(df)
    assert np.allclose(inv["T_rot"], 0.5, rtol=1e-14, atol=0)  # spin about a principal axis: steady
    assert inv[["H_I_drift", "H_norm_drift", "T_rot_drift"]].abs().max().max() < 1e-14


def test_relative_drift_and_errors():
    assert np.allclose(analysis.relative_drift([2.0, 2.2, 1.8]), [0.0, 0.1, -0.1], rtol=0, atol=1e-15)
    assert np.allclose(analysis.relative_drift([[3, 4, 0], [3, 4, 5]]), [0.0, 1.0], rtol=0, atol=1e-15)
    with pytest.raises(InputError, match="non-zero at the first sample"):
        analysis.relative_drift([0.0, 1.0])
    with pytest.raises(InputError, match="two equal moments"):
        analysis.symmetric_top([1, 2, 3], (0, 0, 1), [0.0])
    df = attsim.propagate([1.0, 2.0, 2.5], (1.0, 0.0, 0.0), t_end=0.1, dt=0.01)
    df.attrs.clear()
    with pytest.raises(InputError, match="inertia: must be given"):
        analysis.kinetic_energy(df)
    with pytest.raises(InputError, match="axis_B: must be a non-zero vector"):
        analysis.nutation_angle(df, [1.0, 2.0, 2.5], axis_B=(0, 0, 0))


def test_estimation_error_is_the_body_axes_rotation_from_the_truth_to_the_estimate():
    from scipy.spatial.transform import Rotation

    truth = Rotation.from_euler("zyx", [[30.0, -10.0, 5.0], [120.0, 40.0, -70.0], [0.0, 0.0, 0.0]], degrees=True)
    error = Rotation.from_rotvec([[1e-3, -2e-3, 5e-4], [0.0, 0.0, 3.0], [0.1, 0.0, 0.0]])
    estimate = (truth * error).as_quat(scalar_first=True)  # q̂_IB = q_IB ⊗ q_err: the error in body axes
    estimate[2] = -estimate[2]  # the same attitude, the other sign
    df = pd.DataFrame(np.column_stack([truth.as_quat(scalar_first=True), estimate]),
                      columns=["qw", "qx", "qy", "qz", "kf_qw", "kf_qx", "kf_qy", "kf_qz"])
    assert np.allclose(analysis.estimation_error_rad(df, "kf"), error.as_rotvec(), atol=1e-12)
    assert np.allclose(analysis.estimation_error_deg(df, "kf"), np.degrees([np.linalg.norm([1e-3, -2e-3, 5e-4]),
                                                                              3.0, 0.1]))
    df.loc[0, "kf_qw":"kf_qz"] = np.nan  # before the first fix
    assert np.isnan(analysis.estimation_error_deg(df, "kf")[0])
    with pytest.raises(InputError) as info:
        analysis.estimation_error_rad(df, "mekf")
    assert info.value.field == "estimator"
