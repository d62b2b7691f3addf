"""Derived quantities and analytic references.

Everything here reads a propagated frame (columns ``qw..qz``, ``wx..wz``
indexed by ``t``) and the inertia. When the inertia is omitted it is taken
from ``df.attrs["inertia_kg_m2"]``, which :func:`attsim.propagate` records.

Torque-free invariants (Vilmart, "Rigid body dynamics", eqs. 5-6):
the inertial angular momentum ``H_I = R_IB J ω`` is constant, hence so is
its norm (the Casimir), and so is the kinetic energy ``T = ½ ω·J ω``.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import pandas as pd

from . import rotations
from ._core.validate import unit_quaternion, vector3
from .errors import InputError
from .inertia import check_inertia, principal_axes
from .telemetry.schema import ESTIMATOR_SUFFIXES, QUATERNION_COLUMNS, RATE_COLUMNS, STATE_COLUMNS, TIME_INDEX

__all__ = [
    "angular_momentum_body",
    "angular_momentum_inertial",
    "kinetic_energy",
    "wheel_momentum_body",
    "total_momentum",
    "MomentumParts",
    "SCALE_FLOOR",
    "classify_spin",
    "relative_drift",
    "nutation_angle",
    "invariants",
    "symmetric_top",
    "body_rate_deg_s",
    "estimation_error_rad",
    "estimation_error_deg",
]


def _inertia(df: pd.DataFrame, inertia) -> np.ndarray:
    if inertia is None:
        if "inertia_kg_m2" not in df.attrs:
            raise InputError("inertia", "must be given when the frame's attrs do not record it",
                             "a mission's telemetry: inertia=tel.meta['inertia_kg_m2'], the body without its wheels' "
                             "axial inertia; with wheels, attsim.analysis.total_momentum adds their momentum")
        inertia = df.attrs["inertia_kg_m2"]
    return check_inertia(inertia, allow_nonphysical=True).matrix_kg_m2


def _columns(df: pd.DataFrame, names) -> np.ndarray:
    missing = [c for c in names if c not in df.columns]
    if missing:
        raise InputError("df", f"must have the columns {list(names)}", f"missing {missing}")
    return df[list(names)].to_numpy(dtype=np.float64)


def body_rate_deg_s(df: pd.DataFrame) -> np.ndarray:
    """``|ω|`` per row, deg/s: the body rate's norm (columns ``wx wy wz``, rad/s).

    Parameters
    ----------
    df : DataFrame
        A run's telemetry (or a propagated frame).
    """
    return np.degrees(np.linalg.norm(_columns(df, RATE_COLUMNS), axis=1))


def estimation_error_rad(df: pd.DataFrame, estimator: str) -> np.ndarray:
    """An estimator's attitude error per row: the rotation vector of ``q_err = q_IB* ⊗ q̂_IB`` (rad, body axes).

    ``q̂_IB`` is the estimate (columns ``<estimator>_qw .. _qz``), ``q_IB``
    the true attitude (``qw .. qz``); ``q_err`` is taken with a non-negative
    scalar part, so the angle ``|e|`` is the shortest rotation between
    them, in [0, π]. Rows without an estimate (NaN or zero, before the
    filter's first fix) are NaN.

    Parameters
    ----------
    df : DataFrame
        A run's telemetry.
    estimator : str
        The estimator's name (an :class:`~attsim.MEKF`'s ``name``).

    Returns
    -------
    ndarray (N, 3)
    """
    names = [f"{estimator}_{suffix}" for suffix in ESTIMATOR_SUFFIXES[:4]]
    if not all(c in df.columns for c in names):
        raise InputError("estimator", "must name an estimator whose estimate the telemetry holds",
                         f"no columns {names}")
    estimate, truth = df[names].to_numpy(dtype=np.float64), _columns(df, QUATERNION_COLUMNS)
    error = np.full((len(df), 3), np.nan)
    valid = np.all(np.isfinite(estimate), axis=1) & (np.linalg.norm(estimate, axis=1) > 0)
    if valid.any():
        q_err = rotations.quat_canonical(rotations.quat_multiply(rotations.quat_conjugate(truth[valid]),
                                                                 estimate[valid]))
        error[valid] = rotations.quat_to_rotvec(q_err)
    return error


def estimation_error_deg(df: pd.DataFrame, estimator: str) -> np.ndarray:
    """The angle between an estimator's attitude and the truth per row, deg: ``|e|`` of
    :func:`estimation_error_rad` (NaN before the filter's first estimate).

    Parameters
    ----------
    df : DataFrame
        A run's telemetry.
    estimator : str
        The estimator's name.
    """
    return np.degrees(np.linalg.norm(estimation_error_rad(df, estimator), axis=1))


def angular_momentum_body(df: pd.DataFrame, inertia=None) -> pd.DataFrame:
    """``H_B = J ω`` (N m s, body axes): columns ``H_x H_y H_z``.

    Parameters
    ----------
    df : pandas.DataFrame
        Telemetry with ``wx wy wz`` (rad/s).
    inertia : array_like or CompositeBody, optional
        kg m^2 (default: from ``df.attrs``, as :func:`attsim.propagate` records it).
    """
    J = _inertia(df, inertia)
    H = _columns(df, RATE_COLUMNS) @ J.T
    return pd.DataFrame(H, index=df.index, columns=["H_x", "H_y", "H_z"])


def angular_momentum_inertial(df: pd.DataFrame, inertia=None) -> pd.DataFrame:
    """``H_I = R_IB J ω`` (N m s, inertial axes): columns ``H_I_x H_I_y H_I_z``.

    Parameters
    ----------
    df : pandas.DataFrame
        Telemetry with ``qw qx qy qz wx wy wz``.
    inertia : array_like or CompositeBody, optional
        kg m^2 (default: from ``df.attrs``).
    """
    H_B = angular_momentum_body(df, inertia).to_numpy()
    H_I = rotations.quat_rotate(_columns(df, QUATERNION_COLUMNS), H_B)
    return pd.DataFrame(H_I, index=df.index, columns=["H_I_x", "H_I_y", "H_I_z"])


def wheel_momentum_body(df: pd.DataFrame, components) -> np.ndarray:
    """Total reaction-wheel momentum in body axes (N m s), (n, 3).

    ``components`` is a run's ``meta["components"]``: each wheel's axis and
    its ``<name>_h`` telemetry column give ``Σ h_i a_i``.

    Parameters
    ----------
    df : pandas.DataFrame
        Telemetry with each wheel's ``<name>_h`` column (N m s).
    components : sequence of dict
        A run's ``meta["components"]``.
    """
    total = np.zeros((len(df), 3))
    for component in components:
        if component.get("type") == "ReactionWheel" and "axis" in component and f"{component['name']}_h" in df:
            total += np.outer(df[f"{component['name']}_h"].to_numpy(), component["axis"])
    return total


# The floor of the scale a relative change is measured against (N m s, J): below it the quantity is zero to
# round-off, and a change relative to it would only measure that round-off.
SCALE_FLOOR = 1e-30


class MomentumParts(NamedTuple):
    """The angular momentum of a run with wheels, (n, 3) each (N m s).

    ``inertial``: ``R_IB (J ω + Σ h_i a_i)``; ``body``: the rigid body's own
    ``J ω`` in body axes; ``wheels``: ``Σ h_i a_i`` in body axes;
    ``scale``: the largest momentum either part carries (at least
    :data:`SCALE_FLOOR`), against which a change of the total is relative —
    a body at rest with spinning wheels has no total to compare with.

    Parameters
    ----------
    inertial : ndarray (n, 3)
        ``R_IB (J ω + Σ h_i a_i)``, N m s.
    body : ndarray (n, 3)
        ``J ω``, body axes, N m s.
    wheels : ndarray (n, 3)
        ``Σ h_i a_i``, body axes, N m s.
    scale : float
        The largest momentum either part carries, N m s.
    """

    inertial: np.ndarray
    body: np.ndarray
    wheels: np.ndarray
    scale: float


def total_momentum(df: pd.DataFrame, inertia=None, components=()) -> MomentumParts:
    """The inertial angular momentum of body and wheels (see :class:`MomentumParts`).

    ``components`` is a run's ``meta["components"]`` (the wheels' axes).

    Parameters
    ----------
    df : pandas.DataFrame
        Telemetry with ``qw qx qy qz wx wy wz`` and the wheels' ``<name>_h``.
    inertia : array_like or CompositeBody, optional
        kg m^2 (default: from ``df.attrs``).
    components : sequence of dict, optional
        A run's ``meta["components"]`` (none: no wheels).
    """
    body = angular_momentum_body(df, inertia).to_numpy()
    wheels = wheel_momentum_body(df, components)
    inertial = rotations.quat_rotate(_columns(df, QUATERNION_COLUMNS), body + wheels)
    scale = max(float(np.linalg.norm(body, axis=1).max(initial=0.0)),
                float(np.linalg.norm(wheels, axis=1).max(initial=0.0)), SCALE_FLOOR)
    return MomentumParts(inertial, body, wheels, scale)


def kinetic_energy(df: pd.DataFrame, inertia=None) -> pd.Series:
    """Rotational kinetic energy ``T = ½ ω·J ω`` (J).

    Parameters
    ----------
    df : pandas.DataFrame
        Telemetry with ``wx wy wz`` (rad/s).
    inertia : array_like or CompositeBody, optional
        kg m^2 (default: from ``df.attrs``).
    """
    J = _inertia(df, inertia)
    w = _columns(df, RATE_COLUMNS)
    return pd.Series(0.5 * np.einsum("ni,ij,nj->n", w, J, w), index=df.index, name="T_rot")


def relative_drift(values) -> np.ndarray:
    """Relative change from the first sample.

    For a series of scalars ``(x(t) - x(0)) / |x(0)|``; for a series of
    vectors (n, 3) ``|x(t) - x(0)| / |x(0)|``. A zero initial value makes
    the drift undefined and is refused.

    Parameters
    ----------
    values : array_like (n,) or (n, 3)
        A series of scalars or vectors.
    """
    x = np.asarray(values, dtype=np.float64)
    if x.ndim == 1:
        scale = abs(x[0])
        change = x - x[0]
    else:
        scale = float(np.linalg.norm(x[0]))
        change = np.linalg.norm(x - x[0], axis=-1)
    if scale == 0.0:
        raise InputError("values", "must be non-zero at the first sample to define a relative drift")
    return change / scale


def nutation_angle(df: pd.DataFrame, inertia=None, axis_B=None) -> pd.Series:
    """Angle (rad) between a body axis and the angular momentum.

    ``axis_B`` defaults to the principal axis of largest moment, the spin
    axis of a major-axis spinner; when that moment is shared by two axes
    (a prolate axisymmetric body) its direction is undefined, and the
    symmetry axis, of the distinct moment, is used instead. Computed in body axes as
    ``atan2(|a × H_B|, a·H_B)``, accurate at small angles.

    Parameters
    ----------
    df : pandas.DataFrame
        Telemetry with ``wx wy wz`` (rad/s).
    inertia : array_like or CompositeBody, optional
        kg m^2 (default: from ``df.attrs``).
    axis_B : array_like (3,), optional
        The body axis (default: the principal axis of largest moment, see above).
    """
    J = _inertia(df, inertia)
    if axis_B is None:
        moments, axes = principal_axes(J)
        degenerate_top = moments[2] - moments[1] <= 1e-12 * moments[2]
        axis = axes[:, 0] if degenerate_top else axes[:, 2]
    else:
        axis = vector3(axis_B, "axis_B")
        if not np.any(axis):
            raise InputError("axis_B", "must be a non-zero vector")
        axis = axis / np.linalg.norm(axis)
    H = _columns(df, RATE_COLUMNS) @ J.T
    angle = np.arctan2(np.linalg.norm(np.cross(axis, H), axis=-1), H @ axis)
    return pd.Series(angle, index=df.index, name="nutation")


def invariants(df: pd.DataFrame, inertia=None) -> pd.DataFrame:
    """The conservation check in one frame.

    Columns ``H_I_x H_I_y H_I_z H_norm T_rot`` and their relative drifts
    ``H_I_drift`` (vector, ``|H_I(t) - H_I(0)| / |H_I(0)|``), ``H_norm_drift``
    and ``T_rot_drift``. Under zero torque all three drifts measure the
    integrator's error.

    Parameters
    ----------
    df : pandas.DataFrame
        Telemetry with ``qw qx qy qz wx wy wz``.
    inertia : array_like or CompositeBody, optional
        kg m^2 (default: from ``df.attrs``).
    """
    H_I = angular_momentum_inertial(df, inertia)
    out = H_I.copy()
    out["H_norm"] = np.linalg.norm(H_I.to_numpy(), axis=1)
    out["T_rot"] = kinetic_energy(df, inertia)
    out["H_I_drift"] = relative_drift(H_I.to_numpy())
    out["H_norm_drift"] = relative_drift(out["H_norm"].to_numpy())
    out["T_rot_drift"] = relative_drift(out["T_rot"].to_numpy())
    return out


def symmetric_top(moments_kg_m2, omega0, t_s, q0=(1.0, 0.0, 0.0, 0.0)) -> pd.DataFrame:
    """Exact torque-free motion of an axisymmetric body.

    With principal moments ``I_t, I_t, I_a`` (the symmetry axis ``e_a`` may
    be any of x, y, z) the body rate splits into a precession about the
    fixed ``H`` and a spin about ``e_a`` (Landau & Lifshitz, sec. 33;
    Ganapathi 2005, eqs. 10-11; Bhattu 2019, eqs. 30-36)::

        ω_B = H_B / I_t + λ e_a,     λ = ω_a (I_t - I_a) / I_t
        R_IB(t) = exp(t |H|/I_t [ĥ_I]×) R_IB(0) exp(t λ [e_a]×)
        H_B(t) = exp(-t λ [e_a]×) H_B(0)

    so ``q(t) = q(ĥ_I, |H| t / I_t) ⊗ q0 ⊗ q(e_a, λ t)``.

    Parameters
    ----------
    moments_kg_m2 : array_like, shape (3,) or (3, 3)
        Principal moments (or a diagonal tensor) with two of them equal.
    omega0 : array_like, shape (3,)
        Initial body rate, rad/s.
    t_s : array_like
        Times, s.
    q0 : array_like, shape (4,)
        Initial ``q_IB``.

    Returns
    -------
    pandas.DataFrame
        Indexed by ``t`` with columns ``qw qx qy qz wx wy wz``.
    """
    moments = np.asarray(check_inertia(moments_kg_m2, allow_nonphysical=True, field_name="moments_kg_m2").matrix_kg_m2)
    if np.any(np.abs(moments - np.diag(np.diag(moments))) > 0.0):
        raise InputError("moments_kg_m2", "must be diagonal (principal axes are the body axes)")
    I = np.diag(moments)
    axis_index = None
    for a in range(3):
        others = [I[k] for k in range(3) if k != a]
        if abs(others[0] - others[1]) <= 1e-12 * max(others):
            axis_index = a
            break
    if axis_index is None:
        raise InputError("moments_kg_m2", "must have two equal moments (an axisymmetric body)", f"got {I.tolist()}")
    I_t = [I[k] for k in range(3) if k != axis_index][0]
    I_a = I[axis_index]
    w0 = vector3(omega0, "omega0")
    q0 = unit_quaternion(q0, "q0")
    t = np.asarray(t_s, dtype=np.float64)
    e_a = np.zeros(3)
    e_a[axis_index] = 1.0
    H_B0 = I * w0
    H_I = rotations.quat_rotate(q0, H_B0)
    H_norm = float(np.linalg.norm(H_I))
    lam = w0[axis_index] * (I_t - I_a) / I_t
    if H_norm > 0.0:
        precession = rotations.axis_angle_to_quat(H_I / H_norm, H_norm / I_t * t)
    else:
        precession = np.tile([1.0, 0.0, 0.0, 0.0], (t.size, 1))
    spin = rotations.axis_angle_to_quat(e_a, lam * t)
    q = rotations.quat_multiply(rotations.quat_multiply(precession, q0), spin)
    H_B = rotations.quat_rotate(rotations.axis_angle_to_quat(e_a, -lam * t), H_B0)
    state = np.column_stack([q, H_B / I])
    return pd.DataFrame(state, index=pd.Index(t, name=TIME_INDEX), columns=list(STATE_COLUMNS))


def classify_spin(moments, omega0) -> dict:
    """About which principal axis the body spins, and whether that spin is stable.

    ``moments`` are the principal moments and ``omega0`` the body rate in
    the same axes. The spin axis is the principal axis nearest to the
    angular momentum: spin near the major or the minor axis is stable
    without dissipation, near the intermediate axis unstable (Bhattu 2019;
    Landau & Lifshitz, sec. 37). Also returns which axis the polhode
    encircles (from ``d = 2E - M²/I_mid``: major for ``d < 0``, minor for
    ``d > 0``) and the growth rate of a small perturbation about the
    intermediate axis, ``λ = (M / I_mid) sqrt((I_mid - I_min)(I_max - I_mid) / (I_min I_max))``.

    Parameters
    ----------
    moments : array_like (3,)
        Principal moments, kg m^2.
    omega0 : array_like (3,)
        Body rate in the same axes, rad/s.
    """
    moments = vector3(moments, "moments")  # finite: a NaN rate classified as a stable spin about the minor axis
    m = moments * vector3(omega0, "omega0")
    I = np.sort(moments)
    M2 = float(m @ m)
    if M2 == 0.0:
        return {"axis": "none (at rest)", "stable": True, "growth_rate_rad_s": 0.0, "polhode_encircles": "none"}
    growth = math.sqrt(M2) / I[1] * math.sqrt((I[1] - I[0]) * (I[2] - I[1]) / (I[0] * I[2]))
    nearest = int(np.argmax(np.abs(m)))
    rank = int(np.argsort(np.argsort(moments))[nearest])  # 0 minor, 1 intermediate, 2 major
    axis = ("minor", "intermediate", "major")[rank]
    if np.sum(np.isclose(moments, moments[nearest], rtol=1e-9)) > 1:
        axis = "transverse (axisymmetric body)"  # neutral: any axis of the equal pair is principal
    d = float(np.sum(m * m / moments)) - M2 / I[1]
    return {"axis": axis, "stable": axis != "intermediate", "growth_rate_rad_s": growth,
            "polhode_encircles": "major" if d < 0 else ("minor" if d > 0 else "separatrix")}
