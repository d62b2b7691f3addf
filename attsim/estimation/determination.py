"""Attitude determination from vector observations: TRIAD, QUEST, Davenport's q-method.

Each method takes unit vectors measured in body axes (``b``) and the same
directions known in inertial axes (``r``: the Sun from the ephemeris, the
field from IGRF, a star from the catalogue) and returns ``q_IB`` (scalar
first, body → inertial, ``w >= 0``), so that ``r ≈ R_IB b``. Vectors need
not be unit: every method normalises them.

Wahba's problem (Wahba, SIAM Review 7(3), 1965) is to find the attitude
matrix ``A = R_BI`` minimising ``½ Σ a_i |b_i - A r_i|²``. With the attitude
profile matrix ``B = Σ a_i b_i r_iᵀ``, ``S = B + Bᵀ``, ``σ = tr B`` and
``z = Σ a_i b_i × r_i``, the optimal quaternion is the eigenvector of the
largest eigenvalue ``λ_max`` of Davenport's matrix (Markley & Crassidis,
*Fundamentals of Spacecraft Attitude Determination and Control*, 2014,
sec. 5.3, eq. 5.17)::

    K = [[S - σ I, z], [zᵀ, σ]]

in the vector-first convention ``(q_1:3, q_4)`` with
``A(q) = (q4² - |q_1:3|²) I + 2 q_1:3 q_1:3ᵀ - 2 q4 [q_1:3 ×]``. That ``A`` is
``R_BI`` of the Hamilton quaternion ``q_IB = (q4, q_1:3)``, so an eigenvector
``(x, y, z, w)`` of ``K`` is ``q_IB = (w, x, y, z)`` here.

* :func:`davenport` solves the 4×4 symmetric eigenproblem (LAPACK).
* :func:`quest` (Shuster & Oh, JGC 4(1), 1981) finds ``λ_max`` by Newton's
  method on the characteristic equation, from ``λ = Σ a_i`` (in closed form
  for two directions, M&C eq. 5.56), and the
  quaternion in closed form (M&C eqs. 5.50-5.52)::

      λ⁴ - (a + b) λ² - c λ + (a b + c σ - d) = 0,
      a = σ² - κ, b = σ² + zᵀz, c = Δ + zᵀ S z, d = zᵀ S² z,  κ = tr adj S, Δ = det S
      q ∝ ((α I + β S + S²) z, γ),  α = λ² - σ² + κ, β = λ - σ, γ = (λ + σ) α - Δ

  The closed form is 0/0 at a rotation of π (``q4 = 0``). Since
  ``(x, γ) = f'(λ) q4 q`` (it is a column of ``adj(λ I - K) = f'(λ) q qᵀ``),
  ``q4² = γ / f'(λ)`` says how far from it the solution is; below
  ``|q4| = 0.1`` (more than 168.5°) QUEST uses Shuster's **method of
  sequential rotations**: it solves again with the reference frame turned by
  π about x, y and z, keeps the frame with the largest ``|γ|`` (there
  ``q4² >= 1/4``) and turns the answer back, ``q_IB = (0, e_k) ⊗ q'``.
* :func:`triad` (Black, AIAA J. 2(7), 1964) builds orthonormal triads from
  two pairs; the first pair is matched exactly, the second fixes the roll
  about it.

QUEST's attitude error covariance (Shuster & Oh 1981; M&C eq. 5.102) for
the QUEST measurement model (unit vectors with isotropic noise of σ_i rad
normal to ``b_i``), in body axes, of the small error rotation ``δθ`` with
``q_est = q_true ⊗ (1, δθ/2)``::

    P = (Σ σ_i⁻² (I - b_i b_iᵀ))⁻¹

Compiled kernels (``triad_kernel``, ``quest_kernel``, ``davenport_kernel``,
``quest_covariance_kernel``) take one problem on plain arrays and tuples and
do no checking (a zero vector is skipped; fewer than two non-parallel
vectors give a meaningless answer); the Python functions validate and
accept a batch stacked along leading axes.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .._core.jit import njit
from .._core.validate import finite_array
from ..dynamics import cross3, dcm_to_quat_tuple
from ..errors import InputError

__all__ = ["triad", "quest", "davenport", "quest_covariance", "AttitudeSolution", "triad_kernel", "quest_kernel",
           "davenport_kernel", "quest_covariance_kernel", "PARALLEL_TOLERANCE"]

_JIT = dict(cache=True, nogil=True, error_model="numpy")

# |u1 × u2| (the sine of the angle) below which two directions count as parallel: closer than 1e-6 rad, the second
# direction fixes the rotation about the first no better than a micro-radian of noise in the first would spoil it.
PARALLEL_TOLERANCE = 1e-6

# Below this |q4| (rotation angle above 168.5°) QUEST's closed form loses digits as 1/|q4| and the sequential
# rotations take over.
_QUEST_Q4_MIN = 0.1


class AttitudeSolution(NamedTuple):
    """An attitude estimate and its error covariance (of ``δθ`` in body axes, rad²).

    Parameters
    ----------
    q_IB : ndarray (..., 4)
        The attitude estimate, scalar first, ``w >= 0``.
    covariance_rad2 : ndarray (..., 3, 3)
        The covariance of the error rotation ``δθ`` in body axes, rad².
    """

    q_IB: np.ndarray
    covariance_rad2: np.ndarray


# --- compiled kernels ----------------------------------------------------------------------------------------------


@njit(**_JIT)
def _unit(v):
    n = math.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])
    return (v[0] / n, v[1] / n, v[2] / n)


@njit(**_JIT)
def _triad_axes(v1, v2):
    """Orthonormal triad: ``v1``, ``v1 × v2`` and their cross product (unit)."""
    t1 = _unit(v1)
    t2 = _unit(cross3(t1, v2))
    return t1, t2, cross3(t1, t2)


@njit(**_JIT)
def triad_kernel(b1, b2, r1, r2):
    """TRIAD: ``R_IB = [r̂ triad] [b̂ triad]ᵀ``; ``b1 → r1`` exactly, ``b2`` fixes the roll about it.

    Black (1964); M&C sec. 5.2.1. 3-tuples in, ``q_IB`` (w >= 0) out.

    Parameters
    ----------
    b1, b2 : tuple of 3 floats
        The two directions in body axes (the first is matched exactly).
    r1, r2 : tuple of 3 floats
        The same directions in inertial axes.
    """
    s1, s2, s3 = _triad_axes(b1, b2)
    m1, m2, m3 = _triad_axes(r1, r2)
    return dcm_to_quat_tuple(
        m1[0] * s1[0] + m2[0] * s2[0] + m3[0] * s3[0], m1[0] * s1[1] + m2[0] * s2[1] + m3[0] * s3[1],
        m1[0] * s1[2] + m2[0] * s2[2] + m3[0] * s3[2],
        m1[1] * s1[0] + m2[1] * s2[0] + m3[1] * s3[0], m1[1] * s1[1] + m2[1] * s2[1] + m3[1] * s3[1],
        m1[1] * s1[2] + m2[1] * s2[2] + m3[1] * s3[2],
        m1[2] * s1[0] + m2[2] * s2[0] + m3[2] * s3[0], m1[2] * s1[1] + m2[2] * s2[1] + m3[2] * s3[1],
        m1[2] * s1[2] + m2[2] * s2[2] + m3[2] * s3[2])


@njit(**_JIT)
def _profile_matrix(b, r, weights):
    """``B = Σ a_i b̂_i r̂_iᵀ`` (row-major 9-tuple) with the weights scaled to sum 1; zero vectors skipped."""
    b00 = b01 = b02 = b10 = b11 = b12 = b20 = b21 = b22 = 0.0
    total = 0.0
    for i in range(b.shape[0]):
        nb = math.sqrt(b[i, 0] ** 2 + b[i, 1] ** 2 + b[i, 2] ** 2)
        nr = math.sqrt(r[i, 0] ** 2 + r[i, 1] ** 2 + r[i, 2] ** 2)
        if nb == 0.0 or nr == 0.0:
            continue
        a = weights[i] / (nb * nr)
        total += weights[i]
        u0, u1, u2 = a * b[i, 0], a * b[i, 1], a * b[i, 2]
        v0, v1, v2 = r[i, 0], r[i, 1], r[i, 2]
        b00 += u0 * v0
        b01 += u0 * v1
        b02 += u0 * v2
        b10 += u1 * v0
        b11 += u1 * v1
        b12 += u1 * v2
        b20 += u2 * v0
        b21 += u2 * v1
        b22 += u2 * v2
    k = 1.0 / total
    return (b00 * k, b01 * k, b02 * k, b10 * k, b11 * k, b12 * k, b20 * k, b21 * k, b22 * k)


@njit(**_JIT)
def _shuster_terms(B):
    """``(S, σ, z, κ, Δ)`` of a profile matrix; ``S`` symmetric as ``(s00, s01, s02, s11, s12, s22)``."""
    S = (2.0 * B[0], B[1] + B[3], B[2] + B[6], 2.0 * B[4], B[5] + B[7], 2.0 * B[8])
    sigma = B[0] + B[4] + B[8]
    z = (B[5] - B[7], B[6] - B[2], B[1] - B[3])
    m00 = S[3] * S[5] - S[4] * S[4]
    m11 = S[0] * S[5] - S[2] * S[2]
    m22 = S[0] * S[3] - S[1] * S[1]
    delta = S[0] * m00 - S[1] * (S[1] * S[5] - S[4] * S[2]) + S[2] * (S[1] * S[4] - S[3] * S[2])
    return S, sigma, z, m00 + m11 + m22, delta


@njit(**_JIT)
def _sym_mul(S, v):
    return (S[0] * v[0] + S[1] * v[1] + S[2] * v[2], S[1] * v[0] + S[3] * v[1] + S[4] * v[2],
            S[2] * v[0] + S[4] * v[1] + S[5] * v[2])


@njit(**_JIT)
def _quest_unnormalised(B, lam):
    """QUEST's ``(x, γ)`` for the profile ``B`` at ``λ_max``: ``q ∝ (x, γ)`` vector first."""
    S, sigma, z, kappa, delta = _shuster_terms(B)
    alpha = lam * lam - sigma * sigma + kappa
    beta = lam - sigma
    gamma = (lam + sigma) * alpha - delta
    Sz = _sym_mul(S, z)
    SSz = _sym_mul(S, Sz)
    x = (alpha * z[0] + beta * Sz[0] + SSz[0], alpha * z[1] + beta * Sz[1] + SSz[1],
         alpha * z[2] + beta * Sz[2] + SSz[2])
    return x, gamma


@njit(**_JIT)
def _two_observation_lambda(b, r, weights):
    """``λ_max`` in closed form when exactly two directions are usable, else 0 (M&C eq. 5.56).

    ``λ_max² = a1² + a2² + 2 a1 a2 [(b̂1·b̂2)(r̂1·r̂2) + |b̂1 × b̂2| |r̂1 × r̂2|]`` with the weights scaled to sum 1.
    Newton's root carries the round-off of the quartic's coefficients divided by ``f'(λ)``, which is small when
    the two directions are nearly (anti)parallel; the closed form is not.
    """
    first, second, count = -1, -1, 0
    for i in range(b.shape[0]):
        if b[i, 0] ** 2 + b[i, 1] ** 2 + b[i, 2] ** 2 != 0.0 and r[i, 0] ** 2 + r[i, 1] ** 2 + r[i, 2] ** 2 != 0.0:
            count += 1
            if first < 0:
                first = i
            else:
                second = i
    if count != 2:
        return 0.0
    b1 = _unit((b[first, 0], b[first, 1], b[first, 2]))
    b2 = _unit((b[second, 0], b[second, 1], b[second, 2]))
    r1 = _unit((r[first, 0], r[first, 1], r[first, 2]))
    r2 = _unit((r[second, 0], r[second, 1], r[second, 2]))
    cb, cr = cross3(b1, b2), cross3(r1, r2)
    cosine = (b1[0] * b2[0] + b1[1] * b2[1] + b1[2] * b2[2]) * (r1[0] * r2[0] + r1[1] * r2[1] + r1[2] * r2[2]) \
        + math.sqrt((cb[0] ** 2 + cb[1] ** 2 + cb[2] ** 2) * (cr[0] ** 2 + cr[1] ** 2 + cr[2] ** 2))
    a1 = weights[first] / (weights[first] + weights[second])
    a2 = 1.0 - a1
    return math.sqrt(max(a1 * a1 + a2 * a2 + 2.0 * a1 * a2 * cosine, 0.0))


@njit(**_JIT)
def _lambda_max(B, closed_form):
    """``(λ_max, f'(λ_max))``: ``closed_form`` when positive, else Newton on Shuster's characteristic equation
    from ``λ = Σ a_i = 1``."""
    S, sigma, z, kappa, delta = _shuster_terms(B)
    Sz = _sym_mul(S, z)
    a = sigma * sigma - kappa
    b = sigma * sigma + z[0] * z[0] + z[1] * z[1] + z[2] * z[2]
    c = delta + z[0] * Sz[0] + z[1] * Sz[1] + z[2] * Sz[2]
    d = Sz[0] * Sz[0] + Sz[1] * Sz[1] + Sz[2] * Sz[2]
    constant = a * b + c * sigma - d
    lam = closed_form if closed_form > 0.0 else 1.0
    for _ in range(50 if closed_form <= 0.0 else 0):
        lam2 = lam * lam
        f = lam2 * lam2 - (a + b) * lam2 - c * lam + constant
        slope = 4.0 * lam2 * lam - 2.0 * (a + b) * lam - c
        if slope == 0.0:
            break
        step = f / slope
        lam -= step
        if abs(step) <= 1e-15 * abs(lam):
            break
    lam2 = lam * lam
    return lam, 4.0 * lam2 * lam - 2.0 * (a + b) * lam - c


@njit(**_JIT)
def _turned(B, k):
    """The profile with the reference frame turned by π about axis ``k``: ``B diag(±1)``, other columns negated."""
    if k == 0:
        return (B[0], -B[1], -B[2], B[3], -B[4], -B[5], B[6], -B[7], -B[8])
    if k == 1:
        return (-B[0], B[1], -B[2], -B[3], B[4], -B[5], -B[6], B[7], -B[8])
    return (-B[0], -B[1], B[2], -B[3], -B[4], B[5], -B[6], -B[7], B[8])


@njit(**_JIT)
def _canonical(w, x, y, z):
    n = math.sqrt(w * w + x * x + y * y + z * z)
    if w < 0.0:
        n = -n
    return (w / n, x / n, y / n, z / n)


@njit(**_JIT)
def quest_kernel(b, r, weights):
    """QUEST on ``(n, 3)`` arrays ``b`` (body) and ``r`` (inertial) with weights ``(n,)``: ``q_IB`` (w >= 0).

    Newton on the characteristic equation, then Shuster's closed form; the
    method of sequential rotations beyond 168.5° (module docstring).

    Parameters
    ----------
    b : ndarray (n, 3)
        Directions in body axes.
    r : ndarray (n, 3)
        The same directions in inertial axes.
    weights : ndarray (n,)
        Positive weights.
    """
    B = _profile_matrix(b, r, weights)
    lam, slope = _lambda_max(B, _two_observation_lambda(b, r, weights))
    x, gamma = _quest_unnormalised(B, lam)
    if gamma >= _QUEST_Q4_MIN * _QUEST_Q4_MIN * slope:
        return _canonical(gamma, x[0], x[1], x[2])
    # The reference frame turned by π about e_k negates B's other columns; its q4 is the original q_k.
    best_k, best_gamma = -1, gamma
    best_x = x
    for k in range(3):
        xk, gk = _quest_unnormalised(_turned(B, k), lam)
        if abs(gk) > abs(best_gamma):
            best_k, best_gamma, best_x = k, gk, xk
    if best_k < 0:
        return _canonical(gamma, x[0], x[1], x[2])
    # q_IB = (0, e_k) ⊗ (γ, x): scalar -x_k, vector γ e_k + e_k × x
    w, v = best_gamma, best_x
    if best_k == 0:
        return _canonical(-v[0], w, -v[2], v[1])
    if best_k == 1:
        return _canonical(-v[1], v[2], w, -v[0])
    return _canonical(-v[2], -v[1], v[0], w)


@njit(**_JIT)
def davenport_kernel(b, r, weights):
    """Davenport's q-method: the eigenvector of ``K``'s largest eigenvalue (LAPACK ``syevd``), ``q_IB`` (w >= 0).

    Parameters
    ----------
    b : ndarray (n, 3)
        Directions in body axes.
    r : ndarray (n, 3)
        The same directions in inertial axes.
    weights : ndarray (n,)
        Positive weights.
    """
    B = _profile_matrix(b, r, weights)
    S, sigma, z, _, _ = _shuster_terms(B)
    K = np.array([[S[0] - sigma, S[1], S[2], z[0]], [S[1], S[3] - sigma, S[4], z[1]],
                  [S[2], S[4], S[5] - sigma, z[2]], [z[0], z[1], z[2], sigma]])
    _, vectors = np.linalg.eigh(K)
    v = vectors[:, 3]
    return _canonical(v[3], v[0], v[1], v[2])


@njit(**_JIT)
def quest_covariance_kernel(b, sigma_rad):
    """``P = (Σ σ_i⁻² (I - b̂_i b̂_iᵀ))⁻¹`` (rad², body axes) for ``(n, 3)`` ``b`` and ``(n,)`` σ.

    Parameters
    ----------
    b : ndarray (n, 3)
        Directions in body axes.
    sigma_rad : ndarray (n,)
        Each direction's noise, rad.
    """
    F = np.zeros((3, 3))
    for i in range(b.shape[0]):
        nb2 = b[i, 0] ** 2 + b[i, 1] ** 2 + b[i, 2] ** 2
        if nb2 == 0.0:
            continue
        w = 1.0 / (sigma_rad[i] * sigma_rad[i])
        for j in range(3):
            F[j, j] += w
            for k in range(3):
                F[j, k] -= w * b[i, j] * b[i, k] / nb2
    return np.linalg.inv(F)


# The batch loops store each result an element at a time: numba's assignment of a tuple to an array slice
# (``out[i, :] = kernel(...)``) compiled for ~3 s of a first call's ~11 s, the element stores for none.

@njit(**_JIT)
def _triad_many(b1, b2, r1, r2, out):
    for i in range(out.shape[0]):
        q = triad_kernel((b1[i, 0], b1[i, 1], b1[i, 2]), (b2[i, 0], b2[i, 1], b2[i, 2]),
                         (r1[i, 0], r1[i, 1], r1[i, 2]), (r2[i, 0], r2[i, 1], r2[i, 2]))
        for k in range(4):
            out[i, k] = q[k]


@njit(**_JIT)
def _solve_many(b, r, weights, sigma, use_davenport, want_covariance, q_out, p_out):
    for i in range(q_out.shape[0]):
        q = davenport_kernel(b[i], r[i], weights[i]) if use_davenport else quest_kernel(b[i], r[i], weights[i])
        for k in range(4):
            q_out[i, k] = q[k]
        if want_covariance:
            p = quest_covariance_kernel(b[i], sigma[i])
            for j in range(3):
                for k in range(3):
                    p_out[i, j, k] = p[j, k]


# --- Python API: validation and batches ----------------------------------------------------------------------------


def _directions(value, field: str) -> np.ndarray:
    """Non-zero 3-vectors stacked along leading axes, as float64."""
    v = finite_array(value, field)
    if v.ndim == 0 or v.shape[-1] != 3:
        raise InputError(field, "must have a last axis of length 3", f"got shape {v.shape}")
    norms = np.linalg.norm(v, axis=-1)
    if np.any(norms == 0.0):
        where = np.argwhere(norms == 0.0)[0].tolist()
        raise InputError(field, "must not contain a zero vector", f"zero at index {where}")
    return v


def _parallel(u, v) -> np.ndarray:
    """True where the directions of ``u`` and ``v`` are closer than :data:`PARALLEL_TOLERANCE` (or opposite)."""
    cross = np.cross(u / np.linalg.norm(u, axis=-1, keepdims=True), v / np.linalg.norm(v, axis=-1, keepdims=True))
    return np.linalg.norm(cross, axis=-1) < PARALLEL_TOLERANCE


def triad(b1, b2, r1, r2) -> np.ndarray:
    """TRIAD attitude ``q_IB`` (w >= 0) from two body vectors and their inertial counterparts.

    ``b1 → r1`` holds exactly; ``b2`` fixes the rotation about it, so pass the
    more accurate measurement first. Arguments are 3-vectors or batches
    ``(..., 3)`` that broadcast together; the result is ``(..., 4)``.

    Parameters
    ----------
    b1, b2 : array_like (..., 3)
        Two directions measured in body axes (any length; the first is matched exactly).
    r1, r2 : array_like (..., 3)
        The same directions in inertial axes.

    Raises
    ------
    InputError
        A zero vector, or ``b1 ∥ b2`` or ``r1 ∥ r2`` (the pair does not fix an attitude).
    """
    arrays = [_directions(v, name) for v, name in ((b1, "b1"), (b2, "b2"), (r1, "r1"), (r2, "r2"))]
    try:
        arrays = np.broadcast_arrays(*arrays)
    except ValueError as exc:
        raise InputError("b1, b2, r1, r2", "must broadcast to one shape", str(exc)) from exc
    b1a, b2a, r1a, r2a = arrays
    for (u, v), field in (((b1a, b2a), "b2"), ((r1a, r2a), "r2")):
        if np.any(_parallel(u, v)):
            raise InputError(field, f"must not be parallel to {field[0]}1 (|u1 × u2| >= {PARALLEL_TOLERANCE:g})")
    shape = b1a.shape[:-1]
    flat = [np.ascontiguousarray(a.reshape(-1, 3)) for a in (b1a, b2a, r1a, r2a)]
    out = np.empty((flat[0].shape[0], 4))
    _triad_many(*flat, out)
    return out.reshape(shape + (4,))


def _per_direction(values, field: str, batch: tuple, n: int) -> np.ndarray:
    try:
        return np.broadcast_to(values, batch + (n,))
    except ValueError as exc:
        rule = f"must have one entry per direction (n = {n})"
        if batch:  # a batch: a row per problem as well
            rule += f", or shape {batch + (n,)} (a row per problem of the batch), or one that broadcasts to it"
        raise InputError(field, rule, f"got shape {np.shape(values)}") from exc


def _observations(body_vectors, reference_vectors, weights, sigma_rad):
    """Validated ``(b, r, weights, sigma)`` broadcast to ``(m, n, 3)``, ``(m, n)`` and the batch shape."""
    b = _directions(body_vectors, "body_vectors")
    r = _directions(reference_vectors, "reference_vectors")
    if b.ndim < 2 or r.ndim < 2:
        raise InputError("body_vectors", "must have shape (..., n, 3): n observed directions",
                         f"got {b.shape} and {r.shape}")
    try:
        b, r = np.broadcast_arrays(b, r)
    except ValueError as exc:
        raise InputError("reference_vectors", "must have the shape of body_vectors (..., n, 3)", str(exc)) from exc
    n = b.shape[-2]
    sigma = None
    if sigma_rad is not None:
        sigma = finite_array(sigma_rad, "sigma_rad")
        if np.any(sigma <= 0.0):
            raise InputError("sigma_rad", "must be > 0 (the noise of each direction, rad)", f"got {sigma_rad!r}")
    if weights is None:
        weights = np.ones(n) if sigma is None else 1.0 / sigma**2
    else:
        weights = finite_array(weights, "weights")
        if np.any(weights <= 0.0):
            raise InputError("weights", "must be > 0", f"got {weights!r}")
    batch = b.shape[:-2]
    weights = _per_direction(weights, "weights", batch, n)
    sigma = _per_direction(sigma if sigma is not None else np.ones(n), "sigma_rad", batch, n)
    for v, field in ((b, "body_vectors"), (r, "reference_vectors")):
        pairs = _parallel(v[..., :, None, :], v[..., None, :, :])
        if np.any(np.all(pairs, axis=(-2, -1))):
            raise InputError(field, "must hold at least 2 non-parallel directions (one does not fix an attitude)")
    m = int(np.prod(batch))
    # copies, so always writable C arrays of float64: a broadcast view is read-only, and numba compiles _solve_many
    # anew (~20 s) for each mix of read-only and writable arguments it is given
    flat = tuple(np.array(a.reshape(shape), dtype=np.float64, order="C")
                 for a, shape in ((b, (m, n, 3)), (r, (m, n, 3)), (weights, (m, n)), (sigma, (m, n))))
    return flat, batch


def _solve(body_vectors, reference_vectors, weights, sigma_rad, covariance, use_davenport):
    if covariance and sigma_rad is None:
        raise InputError("sigma_rad", "is needed for the covariance (the noise of each direction, rad)")
    (b, r, w, s), batch = _observations(body_vectors, reference_vectors, weights, sigma_rad)
    q = np.empty((b.shape[0], 4))
    p = np.empty((b.shape[0], 3, 3))
    _solve_many(b, r, w, s, use_davenport, covariance, q, p)
    q = q.reshape(batch + (4,))
    if covariance:
        return AttitudeSolution(q, p.reshape(batch + (3, 3)))
    return q


def quest(body_vectors, reference_vectors, weights=None, *, sigma_rad=None, covariance: bool = False):
    """QUEST attitude ``q_IB`` (w >= 0) from ``n >= 2`` vector observations (Shuster & Oh 1981).

    Newton iteration on the characteristic equation for ``λ_max``, the
    closed-form quaternion, and the method of sequential rotations where the
    rotation angle exceeds 168.5° (module docstring).

    Parameters
    ----------
    body_vectors, reference_vectors : array_like, (..., n, 3)
        Directions in body and in inertial axes, row ``i`` of one the same
        direction as row ``i`` of the other (normalised here). A batch along
        the leading axes.
    weights : array_like, (n,) or (..., n), optional
        Positive weights ``a_i``; only their ratios matter. Default ``σ_i⁻²``
        when ``sigma_rad`` is given (the minimum-variance choice), else equal.
    sigma_rad : array_like, (n,) or (..., n), optional
        Each direction's noise (rad, per axis normal to it); needed for the covariance.
    covariance : bool
        Also return Shuster's covariance ``P = (Σ σ_i⁻² (I - b_i b_iᵀ))⁻¹`` of
        the error rotation in body axes (``q_est = q_true ⊗ (1, δθ/2)``), rad².

    Returns
    -------
    numpy.ndarray (..., 4), or AttitudeSolution(q_IB, covariance_rad2) when ``covariance``.

    Raises
    ------
    InputError
        Shapes that do not match, a zero vector, non-positive weights or σ,
        or fewer than 2 non-parallel directions in either frame.

    Notes
    -----
    The closed form is as accurate as ``λ_max`` is separated from ``K``'s
    other eigenvalues: its error grows as ``1 / f'(λ_max)``, the product of
    those gaps. With one weight far above the others the gaps are small:
    weights 2.5, 8676 and 5.7 on exact data at 163° give 2.3e-10 against
    :func:`davenport`'s 5e-14. Below the measurement noise either way; use
    :func:`davenport` where round-off matters.
    """
    return _solve(body_vectors, reference_vectors, weights, sigma_rad, covariance, False)


def davenport(body_vectors, reference_vectors, weights=None, *, sigma_rad=None, covariance: bool = False):
    """Davenport's q-method: ``q_IB`` as the eigenvector of the largest eigenvalue of ``K``.

    Arguments, result and errors as :func:`quest`; the eigen-decomposition
    costs more and has no singular attitude.

    Parameters
    ----------
    body_vectors, reference_vectors : array_like, (..., n, 3)
        Directions in body and in inertial axes, row by row the same direction (normalised here).
    weights : array_like, (n,) or (..., n), optional
        Positive weights (default ``σ_i⁻²`` when ``sigma_rad`` is given, else equal).
    sigma_rad : array_like, (n,) or (..., n), optional
        Each direction's noise, rad; needed for the covariance.
    covariance : bool
        Also return the covariance (an :class:`AttitudeSolution`).
    """
    return _solve(body_vectors, reference_vectors, weights, sigma_rad, covariance, True)


def quest_covariance(body_vectors, sigma_rad) -> np.ndarray:
    """Shuster's ``P = (Σ σ_i⁻² (I - b_i b_iᵀ))⁻¹`` (rad², body axes) for ``(..., n, 3)`` directions.

    Parameters
    ----------
    body_vectors : array_like, (..., n, 3)
        Directions in body axes.
    sigma_rad : array_like, (n,) or (..., n)
        Each direction's noise, rad.
    """
    return quest(body_vectors, body_vectors, sigma_rad=sigma_rad, covariance=True).covariance_rad2
