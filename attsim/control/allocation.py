"""Wheel arrays: geometry, torque allocation, null-space speed management, unloading.

A wheel array has spin axes ``a_j`` (unit, body axes), the columns of
``A`` (3 × n). A motor torque ``u_j`` accelerates wheel ``j`` and pushes the
body by ``−u_j a_j``, so the torque the array applies to the body is
``τ = −A u``.

* **Allocation** (minimum-norm): ``u = −A⁺ τ`` with ``A⁺ = Aᵀ (A Aᵀ)⁻¹``
  (Markley & Crassidis 2014, sec. 7.3.2; Basilisk's ``rwMotorTorque``). It
  needs ``A`` of rank 3: the array must span three axes.
* **Control axes** (Basilisk's ``rwMotorTorque``): with ``k`` control axes
  ``C`` (k × 3, rows), only ``C τ`` is asked of the array:
  ``u = −(CA)ᵀ (CA (CA)ᵀ)⁻¹ C τ``, the minimum-norm motor torques giving
  ``C (−A u) = C τ``; ``C = I`` is the allocation above.
* **Saturation-aware scaling** (``allocation="scale"``): when some ``|u_j|``
  would exceed its motor limit, the whole vector is scaled by
  ``s = min_j(limit_j / |u_j|)`` so the body torque keeps its direction.
  **Per-wheel clipping** (``allocation="clip"``, Basilisk's ``rwMotorTorque``
  followed by its wheels' torque saturation) leaves ``u`` as allocated and
  each wheel clips its own command at its limit (the direction may turn).
* **Null space** (redundant arrays, n > 3): ``N = I − A⁺A`` projects onto
  motor torques that leave the body alone (``A N = 0``). Adding
  ``u_ns = −k N (Ω − Ω*)`` drives the wheel speeds toward ``Ω*`` (e.g. away
  from zero crossings) without disturbing the attitude (Basilisk's
  ``rwNullSpace``; Markley & Crassidis sec. 7.3.3).
* **Unloading** with magnetorquers: the external torque ``τ = m × B`` with
  ``m = k (h × B) / |B|²`` is ``−k (h − (h·B̂) B̂)``: it removes the wheel
  momentum ``h`` (body axes) normal to the field at the rate ``k`` (1/s).
  This is the issue's ``m = k (B × h)/|B|²`` with the cross product's order
  chosen so that a positive gain unloads (Camillo & Markley, AIAA 80-1733).

The kernels work on plain arrays in SI; the Python helpers build and check
the configuration once.
"""

from __future__ import annotations

import math

import numpy as np

from .._core.jit import LOOP_INLINED, njit
from .._core.validate import finite_array
from ..errors import InputError

__all__ = ["pyramid_axes", "allocation_matrix", "null_space_projector", "allocate", "allocate_unscaled",
           "null_space_torque", "unloading_dipole", "array_momentum_envelope_Nms", "control_axes_matrix",
           "control_axes_allocation", "ALLOCATIONS"]

# how a wheel law meets its motors' limits: the whole vector scaled to them, or each wheel clipping its own
ALLOCATIONS = ("scale", "clip")

_JIT = dict(cache=True, nogil=True, error_model="numpy", **LOOP_INLINED)  # attsim._core.jit: inlined, no refcounts

# smallest singular value of A (relative to the largest) for which an array still counts as spanning three axes
SPAN_TOLERANCE = 1e-6


def pyramid_axes(count: int = 4, elevation_deg: float = 35.26438968, azimuth0_deg: float = 45.0) -> np.ndarray:
    """Spin axes of ``count`` wheels on a pyramid about body z (rows, unit).

    Wheel ``j`` points at azimuth ``azimuth0 + j·360°/count`` and elevation
    ``elevation_deg`` above the body x-y plane:
    ``a_j = (cos e cos α_j, cos e sin α_j, sin e)``. The default elevation,
    ``atan(1/√2)`` = 35.26°, gives four wheels equal capacity about every
    body axis.

    Parameters
    ----------
    count : int, optional
        Number of wheels (default 4).
    elevation_deg : float, optional
        Elevation of each axis above the body x-y plane, deg (default ``atan(1/√2)``).
    azimuth0_deg : float, optional
        Azimuth of the first wheel, deg (default 45).
    """
    if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 3:
        raise InputError("count", "must be an integer >= 3", f"got {count!r}")
    e = math.radians(float(finite_array(elevation_deg, "elevation_deg", ())))
    a0 = math.radians(float(finite_array(azimuth0_deg, "azimuth0_deg", ())))
    alpha = a0 + 2.0 * math.pi * np.arange(count) / count
    return np.column_stack([np.cos(e) * np.cos(alpha), np.cos(e) * np.sin(alpha), np.full(count, np.sin(e))])


def _axes_matrix(axes) -> np.ndarray:
    matrix = finite_array(axes, "axes")
    if matrix.ndim != 2 or matrix.shape[1] != 3 or matrix.shape[0] < 1:
        raise InputError("axes", "must be an (n, 3) array of spin axes, one row per wheel", f"shape {matrix.shape}")
    norms = np.linalg.norm(matrix, axis=1)
    if np.any(np.abs(norms - 1.0) > 1e-9):
        raise InputError("axes", "must be unit vectors", f"norms {np.round(norms, 12).tolist()}")
    singular = np.linalg.svd(matrix, compute_uv=False)
    if matrix.shape[0] < 3 or singular[-1] < SPAN_TOLERANCE * singular[0]:
        raise InputError("axes", "must span three axes (rank 3) for three-axis control",
                         f"{matrix.shape[0]} wheels, singular values {np.round(singular, 9).tolist()}")
    return matrix.T  # A: the axes as columns


def allocation_matrix(axes) -> np.ndarray:
    """``−A⁺`` (n × 3): the minimum-norm motor torques ``u = −A⁺ τ`` for a body torque ``τ``.

    Parameters
    ----------
    axes : array_like (n, 3)
        The wheels' spin axes, body axes (rows spanning three axes).
    """
    return -np.linalg.pinv(_axes_matrix(axes))


def control_axes_matrix(control_axes) -> np.ndarray:
    """The control axes as a (k, 3) array, 1 <= k <= 3 rows, each non-zero and together of rank k.

    Parameters
    ----------
    control_axes : array_like (k, 3) or (3,)
        The body axes to control (Basilisk's ``controlAxes_B``), one per row.
    """
    matrix = finite_array(control_axes, "control_axes")
    if matrix.ndim == 1 and matrix.shape == (3,):
        matrix = matrix[None, :]
    if matrix.ndim != 2 or matrix.shape[1] != 3 or not 1 <= matrix.shape[0] <= 3:
        raise InputError("control_axes", "must be 1 to 3 rows of 3 (the body axes the wheels control, as Basilisk's "
                         "rwMotorTorque controlAxes_B)", f"shape {matrix.shape}")
    if np.any(np.linalg.norm(matrix, axis=1) == 0.0):
        raise InputError("control_axes", "must have no zero row (each row is an axis to control)")
    if np.linalg.matrix_rank(matrix) < matrix.shape[0]:
        raise InputError("control_axes", "must be independent rows (rank = their number)",
                         f"rank {np.linalg.matrix_rank(matrix)} of {matrix.shape[0]} rows")
    return matrix


def control_axes_allocation(axes, control_axes) -> np.ndarray:
    """``−(CA)ᵀ (CA (CA)ᵀ)⁻¹ C`` (n × 3): the minimum-norm motor torques delivering the body torque's components
    along the control axes ``C`` (Basilisk's ``rwMotorTorque``); the array must span them.

    Parameters
    ----------
    axes : array_like (n, 3)
        The wheels' spin axes ``A``, body axes, one row per wheel.
    control_axes : array_like (k, 3)
        The body axes to control ``C`` (:func:`control_axes_matrix`).
    """
    A = finite_array(axes, "axes")
    if A.ndim != 2 or A.shape[1] != 3 or A.shape[0] < 1:
        raise InputError("axes", "must be an (n, 3) array of spin axes, one row per wheel", f"shape {A.shape}")
    C = control_axes_matrix(control_axes)
    CA = C @ A.T
    singular = np.linalg.svd(CA, compute_uv=False)
    if singular[-1] < SPAN_TOLERANCE * max(singular[0], 1e-300):
        raise InputError("control_axes", "must be spanned by the wheels' axes (rank of C A = number of control axes)",
                         f"singular values of C A {np.round(singular, 9).tolist()}")
    return -(CA.T @ np.linalg.inv(CA @ CA.T) @ C)


def null_space_projector(axes) -> np.ndarray:
    """``N = I − A⁺A`` (n × n): motor torques in its range leave the body torque unchanged.

    Parameters
    ----------
    axes : array_like (n, 3)
        The wheels' spin axes, body axes.
    """
    A = _axes_matrix(axes)
    return np.eye(A.shape[1]) - np.linalg.pinv(A) @ A


def array_momentum_envelope_Nms(axes, max_momentum_Nms, directions) -> np.ndarray:
    """The largest momentum the array can hold along each unit direction ``d`` (rows of ``directions``).

    With wheel momenta bounded by ``|h_j| <= h_max_j``, the array momentum
    ``A h`` projected on ``d`` is largest for ``h_j = h_max_j sign(a_j·d)``:
    ``Σ_j h_max_j |a_j·d|`` (the array's momentum envelope; Markley &
    Crassidis sec. 7.3.1).

    Parameters
    ----------
    axes : array_like (n, 3)
        The wheels' spin axes, body axes.
    max_momentum_Nms : array_like (n,)
        Each wheel's momentum limit, N m s.
    directions : array_like (m, 3)
        Unit directions, body axes.
    """
    A = _axes_matrix(axes)
    h_max = finite_array(max_momentum_Nms, "max_momentum_Nms", (A.shape[1],))
    d = finite_array(directions, "directions")
    return np.abs(np.atleast_2d(d) @ A) @ h_max


@njit(**_JIT)
def allocate(allocation, tau_Nm, null_torque_Nm, limits_Nm, out_Nm):
    """Motor torques ``u = −A⁺ τ + u_ns``, scaled as a whole to the motor limits; returns the scale ``s <= 1``.

    ``allocation`` is ``−A⁺`` (n × 3), ``null_torque_Nm`` a null-space part
    (zeros for none), ``limits_Nm`` each motor's limit; ``out_Nm`` (n,) is
    written. Scaling the whole vector keeps the body torque's direction
    (the null-space part adds no body torque).

    Parameters
    ----------
    allocation : ndarray (n, 3)
        ``−A⁺`` from :func:`allocation_matrix`.
    tau_Nm : ndarray (3,)
        The body torque wanted, N m.
    null_torque_Nm : ndarray (n,)
        A null-space part of the motor torques, N m (zeros for none).
    limits_Nm : ndarray (n,)
        Each motor's torque limit, N m.
    out_Nm : ndarray (n,)
        Written with the motor torques, N m.
    """
    n = allocation.shape[0]
    scale = 1.0
    for j in range(n):
        u = allocation[j, 0] * tau_Nm[0] + allocation[j, 1] * tau_Nm[1] + allocation[j, 2] * tau_Nm[2] \
            + null_torque_Nm[j]
        out_Nm[j] = u
        if abs(u) > limits_Nm[j]:  # the smallest ratio wins, whatever the order of the wheels
            scale = min(scale, limits_Nm[j] / abs(u))
    if scale < 1.0:
        for j in range(n):
            # u (limit / |u|) can round one ulp past the limit: the wheel would then clip it and log a
            # saturation this scaling exists to avoid
            out_Nm[j] = min(limits_Nm[j], max(-limits_Nm[j], out_Nm[j] * scale))
    return scale


@njit(**_JIT)
def allocate_unscaled(allocation, tau_Nm, null_torque_Nm, out_Nm):
    """Motor torques ``u = −A⁺ τ + u_ns`` as allocated, into ``out_Nm``: each wheel clips its own at its limit
    (Basilisk's ``rwMotorTorque`` followed by its wheels' torque saturation).

    Parameters
    ----------
    allocation : ndarray (n, 3)
        The torque-to-motor matrix (``−A⁺``, or :func:`control_axes_allocation`'s).
    tau_Nm : sequence of 3 floats
        The body torque the law asks for, N m.
    null_torque_Nm : ndarray (n,)
        The null-space motor torques added, N m.
    out_Nm : ndarray (n,)
        Where the motor torques are written, N m.
    """
    for j in range(allocation.shape[0]):
        out_Nm[j] = allocation[j, 0] * tau_Nm[0] + allocation[j, 1] * tau_Nm[1] + allocation[j, 2] * tau_Nm[2] \
            + null_torque_Nm[j]


@njit(**_JIT)
def null_space_torque(projector, speed_rad_s, target_rad_s, gain_Nm_s, out_Nm):
    """``u_ns = −k N (Ω − Ω*)`` into ``out_Nm``: drives the speeds toward ``Ω*`` within the null space.

    Parameters
    ----------
    projector : ndarray (n, n)
        ``N`` from :func:`null_space_projector`.
    speed_rad_s : ndarray (n,)
        The wheels' speeds, rad/s.
    target_rad_s : ndarray (n,)
        Their targets, rad/s.
    gain_Nm_s : float
        ``k``, N m s.
    out_Nm : ndarray (n,)
        Written with the null-space motor torques, N m.
    """
    n = projector.shape[0]
    for i in range(n):
        total = 0.0
        for j in range(n):
            total += projector[i, j] * (speed_rad_s[j] - target_rad_s[j])
        out_Nm[i] = -gain_Nm_s * total


@njit(**_JIT)
def unloading_dipole(b_T, h_Nms, gain_per_s):
    """``m = k (h × B) / |B|²`` (A m²): its torque ``m × B = −k (h − (h·B̂)B̂)`` unloads ``h`` (body axes).

    Parameters
    ----------
    b_T : array_like (3,)
        The field, body axes, T.
    h_Nms : array_like (3,)
        The wheels' momentum, body axes, N m s.
    gain_per_s : float
        ``k``, 1/s.
    """
    b2 = b_T[0] * b_T[0] + b_T[1] * b_T[1] + b_T[2] * b_T[2]
    if b2 == 0.0:
        return (0.0, 0.0, 0.0)
    k = gain_per_s / b2
    return (k * (h_Nms[1] * b_T[2] - h_Nms[2] * b_T[1]), k * (h_Nms[2] * b_T[0] - h_Nms[0] * b_T[2]),
            k * (h_Nms[0] * b_T[1] - h_Nms[1] * b_T[0]))

