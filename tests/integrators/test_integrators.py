"""The integrator suite: orders, invariants and exactness against
independent references (tests/reference.py: NumPy right-hand side under
scipy's DOP853 at 1e-13), singularity handling, and refusals."""

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import attsim
from attsim import analysis, integrators, rotations
from attsim.errors import AttsimError, GimbalLockError, InputError

from tests.reference import reference_solution

Q_COLS = ["qw", "qx", "qy", "qz"]
W_COLS = ["wx", "wy", "wz"]
FULL_J = np.array([[1.2, 0.1, 0.05], [0.1, 1.0, 0.02], [0.05, 0.02, 0.8]])
SEED002_I = np.array([0.376, 0.627, 1.0])
SEED002_M0 = np.array([0.0, 0.6, -0.8])
HLW_I = np.array([2.0, 1.0, 2.0 / 3.0])  # Hairer, Lubich & Wanner's free rigid body (non-physical moments)
HLW_M0 = np.array([np.cos(1.1), 0.0, np.sin(1.1)])
Q0 = rotations.euler321_to_quat([0.2, -0.3, 0.5])


def errors_against(df, ref):
    """(max body-rate error, max attitude angle error) of a frame against a reference array."""
    rate = np.abs(df[W_COLS].to_numpy() - ref[:, 4:]).max()
    angle = rotations.quat_angle_between(df[Q_COLS].to_numpy(), ref[:, :4]).max()
    return rate, angle


def measured_order(method, steps, t_end=4.0, **kwargs):
    omega0 = (0.3, 1.0, -0.4)
    ref = reference_solution(FULL_J, omega0, Q0, [0.0, t_end], torque=kwargs.get("torque"))[-1]
    errors = []
    for h in steps:
        last = attsim.propagate(FULL_J, omega0, Q0, t_end=t_end, dt=h, method=method, **kwargs).iloc[-1]
        errors.append(np.linalg.norm(last[W_COLS].to_numpy() - ref[4:])
                      + rotations.quat_angle_between(last[Q_COLS].to_numpy(), ref[:4]))
    return np.diff(np.log(errors)) / np.diff(np.log(steps)), errors


def weak_gravity_gradient(n_rad_s, moments):
    """Gravity-gradient-type torque toward a fixed inertial direction: 3 n^2 (o x J o), o = R^T e_x."""

    def torque(t, q, w):
        o = rotations.quat_rotate(rotations.quat_conjugate(q), [1.0, 0.0, 0.0])
        return 3.0 * n_rad_s**2 * np.cross(o, moments * o)

    return torque


@pytest.mark.parametrize(
    "method, nominal, steps",
    [
        ("rk4", 4, [0.08, 0.04, 0.02]),
        ("rkn", 4, [0.08, 0.04, 0.02]),
        ("rkmk4", 4, [0.08, 0.04, 0.02]),
        ("dcm", 4, [0.08, 0.04, 0.02]),
        ("euler321", 4, [0.08, 0.04, 0.02]),
        ("split2", 2, [0.04, 0.02, 0.01]),
        ("split4", 4, [0.1, 0.05, 0.025]),
        ("split6", 6, [0.2, 0.1, 0.05]),
    ],
)
def test_measured_order_equals_nominal(method, nominal, steps):
    assert integrators.REGISTRY[method].order == nominal
    slopes, errors = measured_order(method, steps)
    assert np.all(np.abs(slopes - nominal) < 0.2), (slopes, errors)


def test_split_exact_orders_with_a_conservative_torque():
    def gravity_gradient(t, q, w):
        o = rotations.quat_rotate(rotations.quat_conjugate(q), [1.0, 0.0, 0.0])
        return 3.0 * 0.3**2 * np.cross(o, FULL_J @ o)

    slopes2, _ = measured_order("split_exact", [0.04, 0.02, 0.01], torque=gravity_gradient)
    slopes4, _ = measured_order("split_exact", [0.2, 0.1, 0.05], torque=gravity_gradient, order=4)
    assert np.all(np.abs(slopes2 - 2) < 0.2), slopes2
    assert np.all(np.abs(slopes4 - 4) < 0.2), slopes4


def test_split_exact_keeps_its_order_with_a_rate_dependent_torque():
    # damping depends on omega: the closing implicit kick keeps the scheme symmetric
    damping = lambda t, q, w: -0.1 * np.asarray(w)  # noqa: E731
    slopes2, _ = measured_order("split_exact", [0.04, 0.02, 0.01], torque=damping)
    slopes4, _ = measured_order("split_exact", [0.2, 0.1, 0.05], torque=damping, order=4)
    assert np.all(np.abs(slopes2 - 2) < 0.2), slopes2
    assert np.all(np.abs(slopes4 - 4) < 0.2), slopes4


def test_principal_frame_methods_hand_the_user_torque_body_axes():
    # a torque of the rate and the attitude on a full tensor, against the independent reference
    def torque(t, q, w):
        down = rotations.quat_rotate(rotations.quat_conjugate(q), [0.0, 0.0, 1.0])
        return -0.05 * np.asarray(w) + 0.02 * np.cross(down, FULL_J @ down)

    df = attsim.propagate(FULL_J, (0.3, 1.0, -0.4), Q0, t_end=5.0, dt=0.005, method="split_exact", torque=torque)
    ref = reference_solution(FULL_J, (0.3, 1.0, -0.4), Q0, df.index.to_numpy(), torque=torque)
    rate, angle = errors_against(df, ref)
    assert rate < 1e-5 and angle < 1e-5, (rate, angle)


def test_dop853_is_eighth_order_when_held_to_a_fixed_step():
    # a loose tolerance with max_step = h makes the controller take the steps we
    # choose; large steps keep the error above round-off
    steps = np.array([0.8, 0.64, 0.48])
    omega0 = (0.3, 1.0, -0.4)
    ref = reference_solution(FULL_J, omega0, Q0, [0.0, 9.6])[-1]
    errors = []
    for h in steps:
        last = attsim.propagate(FULL_J, omega0, Q0, t_end=9.6, dt=9.6, method="dop853", rtol=0.1, atol=1.0,
                                max_step=h).iloc[-1]
        errors.append(np.linalg.norm(last[W_COLS].to_numpy() - ref[4:]))
    slopes = np.diff(np.log(errors)) / np.diff(np.log(steps))
    assert np.all(np.abs(slopes - 8.0) < 0.2), (slopes, errors)


@pytest.mark.parametrize("moments, m0", [(SEED002_I, SEED002_M0), (HLW_I, HLW_M0)], ids=["seed002", "hlw"])
def test_exact_matches_independent_reference_to_1e11(moments, m0):
    df = attsim.propagate(moments, m0 / moments, t_end=40.0, dt=0.01, method="exact", allow_nonphysical=True)
    ref = reference_solution(moments, m0 / moments, (1.0, 0, 0, 0), df.index.to_numpy())
    rate, angle = errors_against(df, ref)
    assert rate < 1e-11 and angle < 1e-11, (rate, angle)


@pytest.mark.parametrize(
    "inertia, m0",
    [
        (FULL_J, np.array([0.3, 1.0, -0.4])),  # full tensor: principal axes found and undone
        (np.array([1.0, 2.0, 3.0]), np.array([1.0, 0.0, np.sqrt(3.0)])),  # on the separatrix: 2E = M^2 / I_mid
        (np.array([2.0, 2.0, 3.0]), np.array([0.3, 0.5, 1.0])),  # axisymmetric
        (np.array([3.0, 2.0, 1.5]), np.array([0.0, 0.0, 0.7])),  # steady spin about a principal axis
        (np.array([1.0, 2.0, 2.5]), np.array([0.0, 0.0, 0.0])),  # at rest
    ],
    ids=["full-tensor", "separatrix", "axisymmetric", "steady-spin", "rest"],
)
def test_exact_special_cases(inertia, m0):
    J = inertia if inertia.ndim == 2 else np.diag(inertia)
    w0 = np.linalg.solve(J, m0)
    df = attsim.propagate(J, w0, Q0, t_end=10.0, dt=0.01, method="exact")
    assert np.all(np.isfinite(df.to_numpy()))
    ref = reference_solution(J, w0, Q0, df.index.to_numpy())
    rate, angle = errors_against(df, ref)
    assert rate < 1e-10 and angle < 1e-10, (rate, angle)


@pytest.mark.parametrize(
    "omega0, t_end, bound",
    [
        ((1.0, 0.15, np.sqrt(3.0) * (1 + 1e-9) / 3.0), 20.0, 1e-9),  # 1 - k^2 ~ 2e-9
        ((1.0, 0.15, np.sqrt(3.0) * (1 + 1e-12) / 3.0), 20.0, 1e-9),  # 1 - k^2 ~ 2e-12
        ((1e-6, 1.0, 1e-6), 100.0, 1e-2),  # intermediate-axis spin: the Dzhanibekov flip (ill-conditioned)
    ],
    ids=["near-separatrix-1e-9", "near-separatrix-1e-12", "dzhanibekov"],
)
def test_exact_near_the_separatrix(omega0, t_end, bound):
    I = np.array([1.0, 2.0, 3.0])
    df = attsim.propagate(I, omega0, t_end=t_end, dt=0.1, method="exact")
    ref = reference_solution(I, omega0, (1.0, 0, 0, 0), df.index.to_numpy())
    rate, angle = errors_against(df, ref)
    assert rate < bound and angle < bound, (rate, angle)
    assert np.abs(df["wy"]).max() < 1.02  # bounded, periodic motion: no blow-up
    kicked = attsim.propagate(I, omega0, t_end=t_end, dt=0.01, method="split_exact", torque=(0.0, 0.0, 0.0))
    assert np.all(np.isfinite(kicked.to_numpy()))


def test_exact_keeps_inertial_momentum_over_ten_thousand_seconds():
    df = attsim.propagate(SEED002_I, SEED002_M0 / SEED002_I, t_end=1e4, dt=1.0, method="exact")
    inv = analysis.invariants(df)
    assert inv["H_I_drift"].abs().max() < 1e-10
    assert inv["T_rot_drift"].abs().max() < 1e-10


def test_exact_is_continuous_and_matches_split6_on_seed002():
    exact = attsim.propagate(SEED002_I, SEED002_M0 / SEED002_I, t_end=40.0, dt=0.01, method="exact")
    q = exact[Q_COLS].to_numpy()
    assert np.all(np.sum(q[1:] * q[:-1], axis=1) > 0.99)  # no sign flips between samples
    split6 = attsim.propagate(SEED002_I, SEED002_M0 / SEED002_I, t_end=40.0, dt=0.01, method="split6")
    rate, angle = errors_against(split6, exact.to_numpy())
    # G3 of the integrator study: the 6th-order splitting against the exact solution
    assert np.abs(split6[W_COLS].to_numpy() * SEED002_I - exact[W_COLS].to_numpy() * SEED002_I).max() < 1e-12
    assert angle < 2e-12


@pytest.mark.parametrize("method", ["split2", "split4", "split6"])
def test_splitting_keeps_the_casimir(method):
    df = attsim.propagate(FULL_J, (0.3, 1.0, -0.4), t_end=200.0, dt=0.05, method=method)
    inv = analysis.invariants(df)
    assert inv["H_norm_drift"].abs().max() < 1e-13
    # and the energy error is bounded, not drifting: the late error is no larger than the early one
    energy = inv["T_rot_drift"].abs().to_numpy()
    assert energy[len(energy) // 2:].max() < 3.0 * energy[: len(energy) // 2].max() + 1e-15


def test_split_exact_beats_axis_splitting_with_a_weak_conservative_torque():
    torque = weak_gravity_gradient(0.04, SEED002_I)
    w0 = SEED002_M0 / SEED002_I
    ref = reference_solution(SEED002_I, w0, (1.0, 0, 0, 0), np.linspace(0, 40, 4001), torque=torque)
    exact_flow = attsim.propagate(SEED002_I, w0, t_end=40.0, dt=0.01, method="split_exact", torque=torque)
    axis_flow = attsim.propagate(SEED002_I, w0, t_end=40.0, dt=0.01, method="split_exact", torque=torque,
                                 free_flow="axes")
    e_exact = sum(errors_against(exact_flow, ref))
    e_axes = sum(errors_against(axis_flow, ref))
    assert e_axes / e_exact > 100, (e_exact, e_axes)


def test_euler_angles_stop_at_gimbal_lock_while_others_pass():
    # a pure spin about body y from level: pitch reaches 90 deg at t = pi / (2 * 0.5)
    with pytest.raises(GimbalLockError, match=r"pitch reached 89\.\d+ deg at t = 3\.1\d* s.*use 'dcm'") as info:
        attsim.propagate([1.0, 2.0, 2.5], (0.0, 0.5, 0.0), t_end=10.0, dt=0.01, method="euler321")
    partial = info.value.partial
    assert isinstance(partial, pd.DataFrame) and partial.index[-1] == pytest.approx(info.value.t_s)
    assert 3.0 < info.value.t_s < np.pi and abs(info.value.pitch_deg) >= 89.0
    assert not isinstance(info.value, ValueError)
    t = np.arange(0, 1001) * 0.01
    expected = rotations.axis_angle_to_quat([0, 1, 0], 0.5 * t)
    for method in ("dcm", "rk4", "rkmk4", "rkn", "exact", "split4"):
        df = attsim.propagate([1.0, 2.0, 2.5], (0.0, 0.5, 0.0), t_end=10.0, dt=0.01, method=method)
        assert rotations.quat_angle_between(df[Q_COLS].to_numpy(), expected).max() < 1e-9, method


def test_gimbal_lock_on_the_last_step_is_not_swallowed():
    # pitch crosses the margin exactly on the final step (t = 3.11 s)
    with pytest.raises(GimbalLockError, match="at t = 3.11 s"):
        attsim.propagate([1.0, 2.0, 2.5], (0.0, 0.5, 0.0), t_end=3.11, dt=0.01, method="euler321")


def test_dcm_matrix_stays_orthonormal():
    from attsim.dynamics import matrix_to_tuple
    from attsim.integrators.dcm import dcm_state, dcm_step

    J = matrix_to_tuple(FULL_J)
    Jinv = matrix_to_tuple(np.linalg.inv(FULL_J))
    state = dcm_state(tuple(Q0), (0.3, 1.0, -0.4), J, (0.0,))
    worst = 0.0
    for i in range(20000):
        state = dcm_step((0.0, 0.0, 0.0), i * 0.01, 0.01, state, J, Jinv, (0.0,))
        r2, r3 = np.array(state[0]), np.array(state[1])
        R = np.vstack([np.cross(r2, r3), r2, r3])
        worst = max(worst, np.abs(R @ R.T - np.eye(3)).max())
    assert worst < 1e-12


@pytest.mark.parametrize("method", ["rkn", "rkmk4", "dcm", "euler321", "split_exact", "dop853"])
def test_callable_torque_path_equals_compiled_path(method):
    tau = np.array([0.01, -0.02, 0.005])
    kwargs = dict(inertia=FULL_J, omega0=(0.1, 0.2, 0.3), q0=Q0, t_end=2.0, dt=0.01, method=method)
    compiled = attsim.propagate(torque=tau, **kwargs)
    python = attsim.propagate(torque=lambda t, q, w: tau, **kwargs)
    assert np.max(np.abs(compiled.to_numpy() - python.to_numpy())) < 1e-12


def test_methods_lists_every_integrator_with_a_description():
    listed = attsim.methods()
    assert set(listed) == {"rk4", "rkn", "dop853", "exact", "split2", "split4", "split6", "split_exact", "dmv", "rkmk4",
                           "dcm", "euler321"}
    assert all(isinstance(d, str) and len(d) > 20 for d in listed.values())


def test_the_closed_form_methods_load_on_use_and_none_of_them_runs_in_a_mission():
    # the registry imports exact and split_exact (and scipy.special with them) when first asked for their class;
    # it may say which methods a mission can use without them only because neither is one
    code = ("import sys; from attsim.integrators import REGISTRY; from attsim.engine.settings import engine_methods; "
            "import attsim.engine.mission; methods = engine_methods(); assert 'exact' in REGISTRY; "
            "before = 'scipy.special' in sys.modules or 'attsim.integrators.exact' in sys.modules; "
            "exact = REGISTRY['exact']; print(before, exact.name, 'scipy.special' in sys.modules, *methods)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    before, name, after, *methods = result.stdout.split()
    assert (before, name, after) == ("False", "exact", "True")
    assert set(methods) == {"rk4", "rkn", "rkmk4", "dcm", "euler321"}
    from attsim.integrators import _ON_USE, REGISTRY

    for method in _ON_USE:
        assert REGISTRY[method].name == method and not REGISTRY[method].mission_ready
    assert list(REGISTRY.mission_ready()) == [name for name, cls in REGISTRY.items() if cls.mission_ready]


@pytest.mark.parametrize(
    "kwargs, pattern",
    [
        (dict(method="exact", torque=(0, 0, 1e-3)),
         r"torque: method 'exact' solves torque-free motion only.*use 'split_exact'"),
        (dict(method="split4", torque=lambda t, q, w: (0.0, 0.0, 0.0)),
         r"torque: method 'split4' solves torque-free.*'rk4'"),
        (dict(method="dop853", rtol=1e-16), r"rtol: must be in \[2.2e-14, 0.1\].*use method='exact'"),
        (dict(method="dop853", atol=0.0), r"atol: must be in \(0, 1\]"),
        (dict(method="dop853", max_step=True), r"max_step: must be a real number"),
        (dict(method="rk4", rtol=1e-9), r"rtol: is not an option of method 'rk4' \(its options: none\)"),
        (dict(method="split_exact", order=3), r"order: must be one of \[2, 4\]"),
        (dict(method="split_exact", free_flow={}), r"free_flow: must be one of \[.exact., .axes.\]"),
        (dict(method="euler321", q0=rotations.euler321_to_quat([0.1, np.radians(89.5), 0.0])),
         r"q0: method 'euler321' cannot start.*use 'dcm'"),
        (dict(method="euler321", gimbal_margin_deg=-1), r"gimbal_margin_deg: must be a number in \(0, 90\)"),
    ],
)
def test_bad_method_input_says_what_to_use(kwargs, pattern):
    args = dict(inertia=FULL_J, omega0=(0.1, 0.2, 0.3), t_end=1.0, dt=0.1)
    args.update(kwargs)
    with pytest.raises(InputError, match=pattern) as info:
        attsim.propagate(**args)
    assert isinstance(info.value, AttsimError)
