"""attsim.propagate with rk4: physics against analytic and independent
references, the torque forms, output layout, and refusal of bad input."""

import warnings

import numpy as np
import pandas as pd
import pytest

import attsim
from attsim import analysis, rotations
from attsim.errors import AttsimError, AttsimWarning, InputError, NonPhysicalInertiaError, TorqueError

from tests.reference import reference_solution

ASYMMETRIC_J = np.array([[1.2, 0.1, 0.05], [0.1, 1.0, 0.02], [0.05, 0.02, 0.8]])  # full tensor, physical
Q_COLS = ["qw", "qx", "qy", "qz"]
W_COLS = ["wx", "wy", "wz"]


def attitude_error(df, q_ref):
    return rotations.quat_angle_between(df[Q_COLS].to_numpy(), q_ref)


def test_symmetric_top_matches_analytic_solution_over_100_s():
    # Ganapathi (2005), fig. 1: I = [2 2 8], omega0 = [1 0 1]
    df = attsim.propagate([2, 2, 8], [1, 0, 1], t_end=100.0, dt=0.01, allow_nonphysical=True)
    exact = analysis.symmetric_top([2, 2, 8], [1, 0, 1], df.index)
    rate_error = np.abs(df[W_COLS].to_numpy() - exact[W_COLS].to_numpy()).max()
    angle_error = attitude_error(df, exact[Q_COLS].to_numpy()).max()
    # RK4's global error C h^4 t: at h = 0.01 over 100 s it is ~2e-6 here
    assert rate_error < 5e-6
    assert angle_error < 5e-6
    assert df.index[-1] == 100.0 and len(df) == 10001
    # w3 is constant and the transverse rate turns at (I3 - I1)/I1 w3 = 3 rad/s
    assert np.allclose(df["wz"], 1.0, rtol=0, atol=1e-12)


def test_rk4_converges_at_fourth_order_on_an_asymmetric_body():
    omega0, q0 = (0.3, 1.0, -0.4), rotations.euler321_to_quat([0.2, -0.3, 0.5])
    t_end = 8.0
    ref = reference_solution(ASYMMETRIC_J, omega0, q0, [0.0, t_end])[-1]
    steps = np.array([0.04, 0.02, 0.01, 0.005])
    errors = []
    for h in steps:
        last = attsim.propagate(ASYMMETRIC_J, omega0, q0, t_end=t_end, dt=h).iloc[-1]
        rate_err = np.linalg.norm(last[W_COLS].to_numpy() - ref[4:])
        angle_err = rotations.quat_angle_between(last[Q_COLS].to_numpy(), ref[:4])
        errors.append(rate_err + angle_err)
    slopes = np.diff(np.log(errors)) / np.diff(np.log(steps))
    assert np.all(np.abs(slopes - 4.0) < 0.2), slopes


def test_constant_torque_on_a_sphere_is_linear_in_time():
    # J = 2*1 makes omega x J omega vanish: omega(t) = omega0 + tau t / I exactly
    df = attsim.propagate(2.0 * np.eye(3), (0.1, 1.0, -0.1), t_end=10.0, dt=0.01, torque=(1.0, 1.0, 0.0))
    assert np.allclose(df[W_COLS].iloc[-1], [5.1, 6.0, -0.1], rtol=0, atol=1e-12)
    t = df.index.to_numpy()
    expected = np.array([0.1, 1.0, -0.1]) + np.outer(t, [0.5, 0.5, 0.0])
    assert np.allclose(df[W_COLS].to_numpy(), expected, rtol=0, atol=1e-12)


def test_torque_free_invariants_hold_to_rk4_level():
    omega0 = (0.3, 1.0, -0.4)
    drifts = {}
    for h in (0.02, 0.01):
        inv = analysis.invariants(attsim.propagate(ASYMMETRIC_J, omega0, t_end=200.0, dt=h))
        drifts[h] = inv[["H_I_drift", "H_norm_drift", "T_rot_drift"]].abs().max()
    for name in drifts[0.01].index:
        assert drifts[0.01][name] < 1e-7, name
        # halving the step cuts the drift by ~2^4: the error is truncation, not a bug
        assert drifts[0.02][name] / drifts[0.01][name] > 2**3.5, name


def test_callable_torque_equals_the_compiled_constant_path():
    tau = (0.01, -0.02, 0.005)
    compiled = attsim.propagate(ASYMMETRIC_J, (0.1, 0.2, 0.3), t_end=5.0, dt=0.01, torque=tau)
    python = attsim.propagate(ASYMMETRIC_J, (0.1, 0.2, 0.3), t_end=5.0, dt=0.01, torque=lambda t, q, w: np.array(tau))
    assert compiled.attrs["torque"] == "constant" and python.attrs["torque"] == "callable"
    assert np.max(np.abs(compiled.to_numpy() - python.to_numpy())) < 1e-13


def two_rockets(t, q, w):
    """Ganapathi (2005) sec. 7: torque z_world x x_top, expressed in the body."""
    R = rotations.quat_to_dcm(q)
    top_axis_I = R[:, 2]
    return R.T @ np.cross([0.0, 0.0, 1.0], top_axis_I)


def test_orientation_dependent_torque_against_independent_reference():
    q0 = rotations.axis_angle_to_quat([1, 0, 0], 0.4)
    errors = []
    for h in (0.01, 0.005):
        df = attsim.propagate([2, 2, 8], (0.0, 0.0, 3.0), q0, t_end=20.0, dt=h, torque=two_rockets,
                              allow_nonphysical=True)
        ref = reference_solution([2, 2, 8], (0.0, 0.0, 3.0), q0, df.index.to_numpy(), torque=two_rockets)
        errors.append(np.abs(df[W_COLS].to_numpy() - ref[:, 4:]).max() + attitude_error(df, ref[:, :4]).max())
    assert errors[1] < 3e-7
    # the difference is RK4 truncation, shrinking as h^4 (a stage-time or
    # stage-state bug in the torque evaluation would leave an O(h) error)
    assert errors[0] / errors[1] > 2**3.5, errors
    # the torque is horizontal in the world: the vertical momentum is conserved
    H_I = analysis.angular_momentum_inertial(df)
    assert np.ptp(H_I["H_I_z"]) < 1e-10 * abs(H_I["H_I_z"].iloc[0])
    assert np.ptp(H_I["H_I_x"]) > 0.1  # while the horizontal part precesses


def test_time_dependent_torque_is_evaluated_at_stage_times():
    # tau = (0, 0, t^2) on a sphere: w_z(t) = t^3 / 3, which RK4 (Simpson's rule
    # on the time dependence) integrates exactly, but only with the right stage times
    for method in ("rk4", "rkmk4", "dcm", "euler321"):  # the methods whose rate update is RK4's
        df = attsim.propagate(np.eye(3), (0, 0, 0), t_end=3.0, dt=0.1, method=method,
                              torque=lambda t, q, w: (0.0, 0.0, t * t))
        assert np.allclose(df["wz"], df.index.to_numpy() ** 3 / 3, rtol=0, atol=1e-12), method


def test_record_every_and_a_final_partial_step():
    full = attsim.propagate(ASYMMETRIC_J, (0.3, 0.1, 0.2), t_end=1.0, dt=0.01)
    sparse = attsim.propagate(ASYMMETRIC_J, (0.3, 0.1, 0.2), t_end=1.0, dt=0.01, record_every=7)
    assert list(sparse.index[:3]) == [0.0, 0.07, 0.14]
    assert sparse.index[-1] == 1.0
    assert len(sparse) == 100 // 7 + 2
    assert np.array_equal(sparse.iloc[:-1].to_numpy(), full.iloc[::7].to_numpy())
    assert np.array_equal(sparse.iloc[-1].to_numpy(), full.iloc[-1].to_numpy())
    # 1.0 / 0.3 is not whole: three full steps and one of 0.1 s, ending at 1.0
    odd = attsim.propagate(2 * np.eye(3), (0, 0, 0), t_end=1.0, dt=0.3, torque=(0.2, 0, 0))
    assert np.allclose(odd.index, [0.0, 0.3, 0.6, 0.9, 1.0], rtol=0, atol=1e-15) and odd.index[-1] == 1.0
    assert np.isclose(odd["wx"].iloc[-1], 0.1, atol=1e-15)


def test_frame_layout_and_metadata():
    df = attsim.propagate([2, 8, 4], (0, 1, 0.1), t_end=1.0, dt=0.1, allow_nonphysical=True)
    assert isinstance(df, pd.DataFrame)
    assert list(df.columns) == Q_COLS + W_COLS
    assert df.index.name == "t"
    assert df.attrs["nonphysical_inertia"] is True
    assert df.attrs["method"] == "rk4"
    assert np.allclose(np.linalg.norm(df[Q_COLS], axis=1), 1.0, rtol=0, atol=1e-15)
    assert "rk4" in attsim.methods()


def test_composite_body_is_accepted_as_inertia():
    from attsim import inertia as ai

    body = ai.CompositeBody([ai.Part(ai.SolidCuboid(1.0, (0.1, 0.2, 0.3))),
                             ai.Part(ai.PointMass(0.1), position_m=(0.2, 0, 0))])
    df = attsim.propagate(body, (0.1, 0.0, 0.0), t_end=0.1, dt=0.01)
    assert np.array_equal(df.attrs["inertia_kg_m2"], body.inertia_kg_m2)


def test_diverging_fixed_step_runs_are_refused():
    # a step far too long for the rates: the methods blow up or alias; never return that
    for method in ("rk4", "dcm", "rkn"):
        with pytest.raises(InputError, match="^dt: "):
            attsim.propagate([2.0, 3.0, 4.0], (1.0, 2.0, 3.0), t_end=50.0, dt=1.0, method=method)


@pytest.mark.parametrize(
    "kwargs, error, pattern",
    [
        (dict(inertia=[[1, 0.5, 0], [0, 1, 0], [0, 0, 1]]), InputError, "inertia: must be symmetric"),
        (dict(inertia=[1, -2, 3]), InputError, "inertia: must be positive definite"),
        (dict(inertia=[2, 8, 4]), NonPhysicalInertiaError,
         "inertia: principal moments must obey the triangle inequality"),
        (dict(omega0=(0, np.nan, 0)), InputError, "omega0: must be finite"),
        (dict(omega0=(0, np.inf, 0)), InputError, "omega0: must be finite"),
        (dict(omega0=(0, 1)), InputError, r"omega0: must have shape \(3,\)"),
        (dict(q0=(0, 0, 0, 0)), InputError, "q0: must be a non-zero quaternion"),
        (dict(q0=(np.nan, 0, 0, 1)), InputError, "q0: must be finite"),
        (dict(dt=0.0), InputError, "dt: must be finite and > 0"),
        (dict(dt=-0.1), InputError, "dt: must be finite and > 0"),
        (dict(t_end=0.0), InputError, "t_end: must be finite and > 0"),
        (dict(t_end=np.nan), InputError, "t_end: must be finite and > 0"),
        (dict(method="rk5"), InputError, r"method: must be one of \[.*'rk4'.*\] \(got 'rk5'\)"),
        (dict(record_every=0), InputError, r"record_every: must be an integer in \[1, "),
        (dict(record_every=2**70), InputError, r"record_every: must be an integer in \[1, "),
        (dict(dt="0.5"), InputError, "dt: must be a real number"),
        (dict(t_end=True), InputError, "t_end: must be a real number"),
        (dict(t_end=1e13, dt=1e-3), InputError, "t_end: with this dt and record_every would keep about 1e\\+16 rows"),
        (dict(dt=20.0), InputError, r"dt: must resolve the rotation: \|omega\| dt must stay below pi"),
        (dict(torque=(1, 2)), InputError, r"torque: must have shape \(3,\)"),
        (dict(torque=lambda t, q, w: (1.0, 2.0)), TorqueError,
         r"torque: callable must return a 3-vector.*at t = 0.0 s"),
        (dict(torque=lambda t, q, w: np.zeros((3, 1))), TorqueError, "torque: callable must return a 3-vector"),
        (dict(torque=lambda t, q, w: "abc"), TorqueError, "torque: callable must return a 3-vector"),
        (dict(torque=lambda t, q, w: (0.0, 0.0, np.nan if t >= 0.25 else 0.0)), TorqueError,
         r"finite values.*at t = 0.25 s"),
        # a string of three digits unpacks into three numbers, and True converts to 1: neither is a torque
        (dict(torque=lambda t, q, w: "123"), TorqueError, "torque: callable must return a 3-vector of numbers"),
        (dict(torque=lambda t, q, w: (True, 0.0, 0.0)), TorqueError, "torque: callable must return a 3-vector of num"),
        (dict(torque=lambda t, q, w: np.array(["1", "2", "3"])), TorqueError, "torque: callable must return a 3-vec"),
        (dict(torque="123"), InputError, "torque: must be numeric"),
        (dict(allow_nonphysical="no"), InputError, "allow_nonphysical: must be True or False"),
        (dict(inertia=[2, 2, 8], allow_nonphysical="no"), InputError, "allow_nonphysical: must be True or False"),
        # extreme magnitudes are blamed on the inertia or the rate that has them, not on dt
        (dict(inertia=[1e308] * 3), InputError, r"inertia: entries must not exceed 1e\+12"),
        (dict(inertia=[1e-310] * 3), InputError, "inertia: principal moments must be at least 1e-12"),
        (dict(omega0=(1e200, 0.0, 0.0)), InputError, "omega0: with this inertia, the angular momentum"),
        # the work is bounded, not only the memory
        (dict(t_end=1e300, dt=1e300, method="dop853"), InputError, "t_end: needs more than MAX_EVALUATIONS"),
        (dict(t_end=1e12, dt=1e-3, record_every=2**40), InputError, r"t_end: would take about 1e\+15 steps"),
        (dict(method=["rk4"]), InputError, "method: must be one of"),
    ],
)
def test_bad_input_is_refused_with_field_and_rule(kwargs, error, pattern):
    args = dict(inertia=ASYMMETRIC_J, omega0=(0.1, 0.2, 0.3), t_end=1.0, dt=0.05)
    args.update(kwargs)
    with pytest.raises(error, match=pattern) as info:
        attsim.propagate(**args)
    assert isinstance(info.value, AttsimError) and isinstance(info.value, ValueError)


def test_non_unit_quaternion_is_normalised_with_a_warning():
    with pytest.warns(AttsimWarning, match="q0: quaternion norm is 2"):
        df = attsim.propagate(ASYMMETRIC_J, (0, 0, 0), q0=(2, 0, 0, 0), t_end=0.1, dt=0.05)
    assert np.array_equal(df[Q_COLS].iloc[0], [1, 0, 0, 0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        attsim.propagate(ASYMMETRIC_J, (0, 0, 0), q0=(1 + 1e-12, 0, 0, 0), t_end=0.1, dt=0.05)


def test_a_quaternion_near_the_overflow_limit_names_the_same_attitude():
    expected = attsim.propagate(ASYMMETRIC_J, (0.1, 0.2, 0.3), q0=(0.6, 0.8, 0.0, 0.0), t_end=0.5, dt=0.05)
    for scale in (1e300, 1e-300):
        with pytest.warns(AttsimWarning, match="q0: quaternion norm is"):
            df = attsim.propagate(ASYMMETRIC_J, (0.1, 0.2, 0.3), q0=(0.6 * scale, 0.8 * scale, 0.0, 0.0), t_end=0.5,
                                  dt=0.05)
        assert np.allclose(df.to_numpy(), expected.to_numpy(), rtol=0, atol=1e-15)


def test_dop853_stops_after_its_evaluation_budget_naming_t_end(monkeypatch):
    from attsim.integrators import dop853

    monkeypatch.setattr(dop853, "MAX_EVALUATIONS", 2000)  # the real budget takes minutes to exhaust
    spin_up = lambda t, q, w: (0.0, 0.0, 1e-3)  # noqa: E731 - a torque: no free-motion bound applies up front
    with pytest.raises(InputError, match=r"^t_end: needs more than MAX_EVALUATIONS = 2e\+03 .*stopped at t = ") as info:
        attsim.propagate(ASYMMETRIC_J, (0.1, 0.2, 0.3), t_end=1e6, dt=1e5, method="dop853", torque=spin_up)
    assert info.value.field == "t_end"
