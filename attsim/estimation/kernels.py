"""Multiplicative extended Kalman filter: compiled propagation and updates.

The filter estimates the attitude ``q̂ = q̂_IB`` and the gyro bias ``β̂``
(rad/s) from a rate gyro and attitude measurements. Its error state is six
long: the small rotation ``δθ`` (rad, body axes) with
``q_IB = q̂_IB ⊗ (1, δθ/2)``, and the bias error ``Δβ = β − β̂``. The
attitude itself is never part of the linearisation; after each update the
error is folded into ``q̂`` and reset to zero (the "multiplicative" step).

Models (Markley & Crassidis, *Fundamentals of Spacecraft Attitude
Determination and Control*, 2014, secs. 6.2.3-6.2.4; Crassidis & Junkins,
*Optimal Estimation of Dynamic Systems*, 2nd ed., 2012, sec. 7.2):

* gyro ``ω_m = ω + β + η_v``, ``β̇ = η_u`` with spectral densities ``σ_v²``
  (angle random walk, rad²/s) and ``σ_u²`` (rate random walk, rad²/s³);
* error dynamics ``δθ̇ = −[ω̂×] δθ − Δβ − η_v``, ``Δβ̇ = η_u`` with
  ``ω̂ = ω_m − β̂``, discretised exactly for ``ω̂`` held over ``Δt``:
  ``Φ₁₁ = I − sin(ωΔt)/ω [ω̂×] + (1 − cos ωΔt)/ω² [ω̂×]²`` and
  ``Φ₁₂ = (1 − cos ωΔt)/ω² [ω̂×] − IΔt − (ωΔt − sin ωΔt)/ω³ [ω̂×]²``;
  process noise ``Q₁₁ = (σ_v²Δt + σ_u²Δt³/3) I``, ``Q₁₂ = −σ_u²Δt²/2 I``,
  ``Q₂₂ = σ_u²Δt I``;
* a body-axis vector ``b = R_BI r + ν`` (magnetometer, Sun vector) with
  ``H = [[b̂×] 0]``, since ``R_BI(q) ≈ (I − [δθ×]) R_BI(q̂)``;
* a star-tracker quaternion ``q_m = q ⊗ exp(ν)`` with the residual
  ``2 vec(q̂* ⊗ q_m)`` and ``H = [I 0]``.

Each update first forms the innovation ``y`` and its covariance
``S = H P Hᵀ + R``; a measurement whose normalised innovation squared
``yᵀ S⁻¹ y`` exceeds the gate is rejected (outlier), otherwise the Joseph
form ``P⁺ = (I − KH) P (I − KH)ᵀ + K R Kᵀ`` keeps ``P`` symmetric and
positive definite in floating point.

State lives in plain arrays (``q`` (4,), ``bias`` (3,), ``P`` (6, 6)),
updated in place, so the same kernels serve the Python component and the
compiled mission loop.

The matrix arithmetic is written out over the fixed sizes, on tuples and on
``P`` itself: no array is allocated and no numpy matrix routine is called,
so the kernels compile without reference counting (``_nrt=False``), compile
quickly, and give the same doubles compiled and run as plain Python (every
sum is evaluated in the order written; numpy's BLAS and LAPACK round
differently in each). Two structures do the saving: ``Φ = [[Φ₁₁ Φ₁₂] [0 I]]``
and ``H = [H_θ 0]`` (neither measurement sees the bias), so ``Φ P Φᵀ`` and
``(I − KH) P (I − KH)ᵀ`` are applied in place, a column and then a row at a
time, each needing three numbers of scratch.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .._core.jit import njit
from ..dynamics import qconj, qexp, qmul, qrotate
from .determination import triad_kernel

__all__ = ["MEKFState", "mekf_propagate", "mekf_update_vector", "mekf_update_quaternion", "attitude_error_rad",
           "NIS_GATE_3DOF", "UpdateResult", "DIVERGED", "P_SIGMA_V", "P_SIGMA_U", "P_SIGMA_ST", "P_SIGMA_MAG",
           "P_SIGMA_SUN", "P_GATE", "P_SIGMA_ATTITUDE0", "P_Q_BS_ST"]

# _nrt=False: nothing here allocates (module docstring), so nothing needs numba's reference counting, and the
# compiled mission's units, which count no references, call the filter as they call every other kernel
_JIT = dict(cache=True, nogil=True, error_model="numpy", _nrt=False)

# chi-square with 3 degrees of freedom: P(NIS > 16.27) = 0.001 for a consistent filter
NIS_GATE_3DOF = 16.27
# what mekf_cycle returns instead of a count of rejections when its state stopped being finite (a gyro reading or
# noise setting beyond what floating point carries): both paths then stop the run naming the estimator
DIVERGED = -1


class MEKFState(NamedTuple):
    """The filter's state: ``q`` = ``q̂_IB`` (4,), ``bias_rad_s`` = ``β̂`` (3,), ``P`` (6, 6) of ``(δθ, Δβ)``."""

    q: np.ndarray
    bias_rad_s: np.ndarray
    P: np.ndarray


class UpdateResult(NamedTuple):
    """What one measurement did: its normalised innovation squared and whether it was used."""

    nis: float
    accepted: bool


def new_state(q0, bias0_rad_s, sigma_attitude_rad: float, sigma_bias_rad_s: float) -> MEKFState:
    """A state at ``q0``, ``bias0`` with diagonal initial covariance (1σ per axis)."""
    P = np.zeros((6, 6))
    P[:3, :3] = np.eye(3) * sigma_attitude_rad**2
    P[3:, 3:] = np.eye(3) * sigma_bias_rad_s**2
    return MEKFState(np.array(q0, dtype=float), np.array(bias0_rad_s, dtype=float), P)


# 3 x 3 matrices are tuples of their three rows, vectors 3-tuples. The helpers take no integer constants: numba
# compiles a function once per literal integer argument


@njit(**_JIT)
def _dot3(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@njit(**_JIT)
def _mat_vec(M, v):
    """``M v`` of a 3 x 3 ``M`` (rows)."""
    return (_dot3(M[0], v), _dot3(M[1], v), _dot3(M[2], v))


@njit(**_JIT)
def _column_of(P, j):
    """Column ``j`` of ``P`` as its halves ``(P[0:3, j], P[3:6, j])``."""
    return (P[0, j], P[1, j], P[2, j]), (P[3, j], P[4, j], P[5, j])


@njit(**_JIT)
def _row_of(P, i):
    """Row ``i`` of ``P`` as its halves ``(P[i, 0:3], P[i, 3:6])``."""
    return (P[i, 0], P[i, 1], P[i, 2]), (P[i, 3], P[i, 4], P[i, 5])


@njit(**_JIT)
def _symmetrise(P):
    """``P ← ½ (P + Pᵀ)``, in place (the diagonal is its own mean)."""
    for i in range(6):
        for j in range(i):
            mean = 0.5 * (P[i, j] + P[j, i])
            P[i, j] = mean
            P[j, i] = mean


@njit(**_JIT)
def _transition(wx, wy, wz, dt_s):
    """``(Φ₁₁, Φ₁₂)`` of the module docstring for ``ω̂`` held over ``dt_s`` (Markley & Crassidis 2014,
    sec. 6.2.4): with ``W = [ω̂×]``, ``c₁ = sin(ωΔt)/ω``,
    ``c₂ = (1 − cos ωΔt)/ω²``, ``c₃ = (ωΔt − sin ωΔt)/ω³``, ``Φ₁₁ = I − c₁W + c₂W²`` and
    ``Φ₁₂ = c₂W − IΔt − c₃W²``."""
    n = math.sqrt(wx * wx + wy * wy + wz * wz)
    a = n * dt_s
    if a < 1e-4:  # series of the coefficients: the closed forms lose their digits as ω → 0
        c1 = dt_s * (1.0 - a * a / 6.0)
        c2 = dt_s * dt_s * (0.5 - a * a / 24.0)
        c3 = dt_s * dt_s * dt_s * (1.0 / 6.0 - a * a / 120.0)
    else:
        c1, c2, c3 = math.sin(a) / n, (1.0 - math.cos(a)) / (n * n), (a - math.sin(a)) / (n * n * n)
    W = ((0.0, -wz, wy), (wz, 0.0, -wx), (-wy, wx, 0.0))
    # W² = W W written out (its zero terms dropped: the diagonal of W is zero)
    xx, yy, zz, xy, xz, yz = wx * wx, wy * wy, wz * wz, wx * wy, wx * wz, wy * wz
    W2 = ((-(yy + zz), xy, xz), (xy, -(xx + zz), yz), (xz, yz, -(xx + yy)))
    eye = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0))
    return (_phi11_row(eye[0], W[0], W2[0], c1, c2), _phi11_row(eye[1], W[1], W2[1], c1, c2),
            _phi11_row(eye[2], W[2], W2[2], c1, c2)), \
        (_phi12_row(eye[0], W[0], W2[0], c2, c3, dt_s), _phi12_row(eye[1], W[1], W2[1], c2, c3, dt_s),
         _phi12_row(eye[2], W[2], W2[2], c2, c3, dt_s))


@njit(**_JIT)
def _phi11_row(e, w, w2, c1, c2):
    """A row of ``Φ₁₁ = I − c₁W + c₂W²`` from the rows ``e``, ``w``, ``w2`` of ``I``, ``W``, ``W²``."""
    return (e[0] - c1 * w[0] + c2 * w2[0], e[1] - c1 * w[1] + c2 * w2[1], e[2] - c1 * w[2] + c2 * w2[2])


@njit(**_JIT)
def _phi12_row(e, w, w2, c2, c3, dt_s):
    """A row of ``Φ₁₂ = c₂W − IΔt − c₃W²``."""
    return (c2 * w[0] - e[0] * dt_s - c3 * w2[0], c2 * w[1] - e[1] * dt_s - c3 * w2[1],
            c2 * w[2] - e[2] * dt_s - c3 * w2[2])


@njit(**_JIT)
def _apply_phi(F11, F12, x, z):
    """The first three entries of ``Φ v`` for ``v = (x, z)``; its last three are ``z`` (``Φ₂₁ = 0``,
    ``Φ₂₂ = I``)."""
    return (_dot3(F11[0], x) + _dot3(F12[0], z), _dot3(F11[1], x) + _dot3(F12[1], z),
            _dot3(F11[2], x) + _dot3(F12[2], z))


@njit(**_JIT)
def mekf_propagate(q, bias, P, w_meas, dt_s, sigma_v, sigma_u):
    """Propagate ``q̂``, ``P`` over ``dt_s`` with the gyro reading ``w_meas`` (rad/s), in place.

    ``q̂ ← q̂ ⊗ exp((ω_m − β̂) Δt)`` (the body rate held over the interval),
    ``P ← Φ P Φᵀ + Q`` with ``Φ`` and ``Q`` of the module docstring
    (Markley & Crassidis 2014, sec. 6.2.4), then ``P ← ½ (P + Pᵀ)``. ``Φ P``
    is applied a column of ``P`` at a time and ``(Φ P) Φᵀ`` a row at a
    time, each changing only the first three entries. Returns False, and
    changes nothing, when the rotation over the interval is beyond floating
    point (``|ω̂| Δt`` overflows): the filter cannot propagate.
    """
    wx, wy, wz = w_meas[0] - bias[0], w_meas[1] - bias[1], w_meas[2] - bias[2]
    vx, vy, vz = wx * dt_s, wy * dt_s, wz * dt_s
    angle = math.sqrt(wx * wx + wy * wy + wz * wz) * dt_s
    if not (math.isfinite(vx * vx + vy * vy + vz * vz) and math.isfinite(angle)):
        return False  # the sine of an infinite angle would be NaN compiled, an exception in Python
    qn = qmul((q[0], q[1], q[2], q[3]), qexp((vx, vy, vz)))
    norm = math.sqrt(qn[0] * qn[0] + qn[1] * qn[1] + qn[2] * qn[2] + qn[3] * qn[3])
    for i in range(4):
        q[i] = qn[i] / norm
    F11, F12 = _transition(wx, wy, wz, dt_s)
    for j in range(6):  # Φ P, column j
        x, z = _column_of(P, j)
        top = _apply_phi(F11, F12, x, z)
        P[0, j], P[1, j], P[2, j] = top
    for i in range(6):  # (Φ P) Φᵀ, row i
        x, z = _row_of(P, i)
        left = _apply_phi(F11, F12, x, z)
        P[i, 0], P[i, 1], P[i, 2] = left
    su2 = sigma_u * sigma_u
    q11 = sigma_v * sigma_v * dt_s + su2 * (dt_s * dt_s * dt_s) / 3.0
    q12 = -0.5 * su2 * dt_s * dt_s
    q22 = su2 * dt_s
    for i in range(3):
        P[i, i] += q11
        P[i, 3 + i] += q12
        P[3 + i, i] += q12
        P[3 + i, 3 + i] += q22
    _symmetrise(P)
    return True


@njit(**_JIT)
def _cholesky_inverse(S0, S1, S2):
    """``(ok, L⁻¹)`` of a symmetric positive definite 3 x 3 ``S`` (rows; its lower triangle is read) with
    ``S = L Lᵀ`` (Golub & Van Loan, *Matrix Computations*, 4th ed., 2013, sec. 4.2); ``L⁻¹`` is lower triangular,
    as its rows ``(w00,), (w10, w11), (w20, w21, w22)`` packed in six. ``ok`` is False, and ``L⁻¹`` NaN, when a
    pivot is not positive (``S`` not positive definite, or not finite)."""
    nan = math.nan
    failed = (False, (nan, nan, nan, nan, nan, nan))
    d0 = S0[0]
    if not (d0 > 0.0):
        return failed
    l00 = math.sqrt(d0)
    l10, l20 = S1[0] / l00, S2[0] / l00
    d1 = S1[1] - l10 * l10
    if not (d1 > 0.0):
        return failed
    l11 = math.sqrt(d1)
    l21 = (S2[1] - l20 * l10) / l11
    d2 = S2[2] - l20 * l20 - l21 * l21
    if not (d2 > 0.0):
        return failed
    l22 = math.sqrt(d2)
    w00, w11, w22 = 1.0 / l00, 1.0 / l11, 1.0 / l22
    w10 = -l10 * w00 / l11
    w21 = -l21 * w11 / l22
    w20 = -(l20 * w00 + l21 * w10) / l22
    return True, (w00, w10, w11, w20, w21, w22)


@njit(**_JIT)
def _joseph(P, h, K, r):
    """``P ← (I − KH) P (I − KH)ᵀ + K R Kᵀ`` in place for ``H = [h 0]``, ``R = diag(r)`` and the gain ``K``
    (six rows of three), then ``P ← ½ (P + Pᵀ)`` (the Joseph form of the module docstring's sources).
    ``(I − KH) v = v − K (h v[0:3])``: applied a column of ``P`` at a time, then a row."""
    for j in range(6):  # (I − KH) P, column j
        t = _mat_vec(h, _column_of(P, j)[0])
        for i in range(6):
            P[i, j] -= _dot3(K[i], t)
    for i in range(6):  # ((I − KH) P) (I − KH)ᵀ, row i
        t = _mat_vec(h, _row_of(P, i)[0])
        for j in range(6):
            P[i, j] -= _dot3(K[j], t)
    for i in range(6):
        kr = (K[i][0] * r[0], K[i][1] * r[1], K[i][2] * r[2])
        for j in range(6):
            P[i, j] += _dot3(kr, K[j])
    _symmetrise(P)


@njit(**_JIT)
def _update(q, bias, P, y, h, r, gate):
    """The common update of the error state with innovation ``y`` (3-tuple), ``H = [h 0]`` (``h``: 3 x 3 rows)
    and ``R = diag(r)`` (Markley & Crassidis 2014, sec. 6.2.3; Crassidis & Junkins 2012, sec. 7.2).

    ``U = P Hᵀ`` (6 x 3; its row ``i`` is ``h P[i, 0:3]``), ``S = H U + R``
    (``H U = h U[0:3]``), ``S = L Lᵀ`` and ``W = L⁻¹``, so that
    ``S⁻¹ = Wᵀ W`` and the NIS ``yᵀ S⁻¹ y = |W y|²``; the gain
    ``K = U S⁻¹`` (row ``i``: ``S⁻¹ U[i]``, ``S⁻¹`` symmetric), the
    correction ``δx = K y``. Returns ``(nis, accepted)``; ``nis`` is NaN
    when ``S`` is not positive definite (``P`` is no longer a covariance),
    and nothing changes unless accepted.
    """
    U = (_mat_vec(h, (P[0, 0], P[0, 1], P[0, 2])), _mat_vec(h, (P[1, 0], P[1, 1], P[1, 2])),
         _mat_vec(h, (P[2, 0], P[2, 1], P[2, 2])), _mat_vec(h, (P[3, 0], P[3, 1], P[3, 2])),
         _mat_vec(h, (P[4, 0], P[4, 1], P[4, 2])), _mat_vec(h, (P[5, 0], P[5, 1], P[5, 2])))
    S0 = (_dot3(h[0], (U[0][0], U[1][0], U[2][0])) + r[0],)  # the lower triangle of S, by rows
    S1 = (_dot3(h[1], (U[0][0], U[1][0], U[2][0])), _dot3(h[1], (U[0][1], U[1][1], U[2][1])) + r[1])
    S2 = (_dot3(h[2], (U[0][0], U[1][0], U[2][0])), _dot3(h[2], (U[0][1], U[1][1], U[2][1])),
          _dot3(h[2], (U[0][2], U[1][2], U[2][2])) + r[2])
    ok, w = _cholesky_inverse(S0, S1, S2)
    if not ok:
        return math.nan, False
    z = (w[0] * y[0], w[1] * y[0] + w[2] * y[1], w[3] * y[0] + w[4] * y[1] + w[5] * y[2])
    nis = z[0] * z[0] + z[1] * z[1] + z[2] * z[2]
    if not (nis <= gate):
        return nis, False
    s00, s10, s11 = w[0] * w[0] + w[1] * w[1] + w[3] * w[3], w[1] * w[2] + w[3] * w[4], w[2] * w[2] + w[4] * w[4]
    s20, s21, s22 = w[3] * w[5], w[4] * w[5], w[5] * w[5]
    S_inv = ((s00, s10, s20), (s10, s11, s21), (s20, s21, s22))
    K = (_mat_vec(S_inv, U[0]), _mat_vec(S_inv, U[1]), _mat_vec(S_inv, U[2]), _mat_vec(S_inv, U[3]),
         _mat_vec(S_inv, U[4]), _mat_vec(S_inv, U[5]))
    qn = qmul((q[0], q[1], q[2], q[3]), (1.0, 0.5 * _dot3(K[0], y), 0.5 * _dot3(K[1], y), 0.5 * _dot3(K[2], y)))
    norm = math.sqrt(qn[0] * qn[0] + qn[1] * qn[1] + qn[2] * qn[2] + qn[3] * qn[3])
    for i in range(4):
        q[i] = qn[i] / norm
    for i in range(3):
        bias[i] += _dot3(K[3 + i], y)
    _joseph(P, h, K, r)
    return nis, True


@njit(**_JIT)
def mekf_update_vector(q, bias, P, b_meas, r_ref, sigma, gate):
    """Update with a body-axis measurement ``b_meas`` of the inertial vector ``r_ref`` (same units, noise ``σ``).

    ``y = b − b̂``, ``h = [b̂×]``, ``R = σ² I`` (module docstring). Returns
    ``(nis, accepted)``; a rejected measurement changes nothing.
    """
    b = qrotate(qconj((q[0], q[1], q[2], q[3])), (r_ref[0], r_ref[1], r_ref[2]))
    y = (b_meas[0] - b[0], b_meas[1] - b[1], b_meas[2] - b[2])
    h = ((0.0, -b[2], b[1]), (b[2], 0.0, -b[0]), (-b[1], b[0], 0.0))
    variance = sigma * sigma
    return _update(q, bias, P, y, h, (variance, variance, variance), gate)


@njit(**_JIT)
def attitude_error_rad(q_hat, q):
    """The small rotation ``δθ`` (rad, body axes) with ``q = q̂ ⊗ exp(δθ)``: ``2 vec(q̂* ⊗ q)``, scalar part >= 0."""
    d = qmul(qconj((q_hat[0], q_hat[1], q_hat[2], q_hat[3])), (q[0], q[1], q[2], q[3]))
    s = 2.0 if d[0] >= 0.0 else -2.0
    return (s * d[1], s * d[2], s * d[3])


@njit(**_JIT)
def mekf_update_quaternion(q, bias, P, q_meas, sigma_rad, gate, q_BS):
    """Update with a star-tracker quaternion ``q_meas`` (noise ``σ_i`` rad about the tracker's axis i; the tracker
    mounted at ``q_BS``, its axes into body axes).

    The error ``2 vec(q̂* ⊗ q_m)`` is in body axes, where the tracker's
    noise is ``C_BS diag(σ_i²) C_SB``, not diagonal unless the tracker's axes
    are the body's: the update is made in the tracker's axes, ``y = C_SB
    2 vec(q̂* ⊗ q_m)``, ``h = C_SB``, ``R = diag(σ_i²)`` (the rows of
    ``C_SB`` are the tracker's axes in body axes). With ``q_BS`` the identity
    this is ``h = I`` to the bit. Returns ``(nis, accepted)``; a rejected
    measurement changes nothing.
    """
    e = attitude_error_rad(q, q_meas)
    h = (qrotate(q_BS, (1.0, 0.0, 0.0)), qrotate(q_BS, (0.0, 1.0, 0.0)), qrotate(q_BS, (0.0, 0.0, 1.0)))
    y = (_dot3(h[0], e), _dot3(h[1], e), _dot3(h[2], e))
    return _update(q, bias, P, y, h, (sigma_rad[0] * sigma_rad[0], sigma_rad[1] * sigma_rad[1],
                                      sigma_rad[2] * sigma_rad[2]), gate)


# what a cycle's measurements are, in the order of ``mekf_cycle``'s NIS output
MEASUREMENTS = ("star_tracker", "magnetometer", "sun")
# MEKF parameters, in the order of ``mekf_cycle``'s ``params``
PARAMETERS = ("sigma_v", "sigma_u", "sigma_st_x", "sigma_st_y", "sigma_st_z", "sigma_mag", "sigma_sun", "gate",
              "sigma_attitude0", "q_BS_st_w", "q_BS_st_x", "q_BS_st_y", "q_BS_st_z")
# ... and their columns: the star tracker's sigma (about its own axes) three wide (x y z), its mounting four
P_SIGMA_V, P_SIGMA_U, P_SIGMA_ST, P_SIGMA_MAG, P_SIGMA_SUN, P_GATE, P_SIGMA_ATTITUDE0, P_Q_BS_ST = (
    PARAMETERS.index(name) for name in ("sigma_v", "sigma_u", "sigma_st_x", "sigma_mag", "sigma_sun", "gate",
                                        "sigma_attitude0", "q_BS_st_w"))
# smallest coarse-sun-sensor difference vector (fraction of full scale) that still gives a direction
SUN_VECTOR_MIN = 0.1


@njit(**_JIT)
def _row(E, i, css):
    k = 6 * i
    return E[k] * css[0] + E[k + 1] * css[1] + E[k + 2] * css[2] + E[k + 3] * css[3] + E[k + 4] * css[4] \
        + E[k + 5] * css[5]


@njit(**_JIT)
def sun_vector(css, sun_matrix):
    """``E I`` of the six cosine detectors' outputs ``I``, normalised; zeros when too dim or without output.

    ``E`` (3 x 6, row by row: 18 values) is the sun sensor's
    :attr:`~attsim.sensors.SunSensor.sun_matrix` (its nominal normals, body
    axes); with the default normals ``E I`` is ``(I+x − I−x, I+y − I−y,
    I+z − I−z)``, and with ideal detectors ``s`` itself.
    """
    sx, sy, sz = _row(sun_matrix, 0, css), _row(sun_matrix, 1, css), _row(sun_matrix, 2, css)
    norm = math.sqrt(sx * sx + sy * sy + sz * sz)
    if not (norm >= SUN_VECTOR_MIN):
        return (0.0, 0.0, 0.0)
    return (sx / norm, sy / norm, sz / norm)


# TRIAD from the field and the Sun needs them this far from parallel (sine of the angle between them, 5 deg): nearer,
# the roll about the anchor vector is lost in the noise
TRIAD_MIN_SINE = math.sin(math.radians(5.0))


@njit(**_JIT)
def triad_start(q, P, b_mag, r_mag, css, sun_matrix, r_sun, params):
    """Start ``q̂`` from TRIAD on the field and the Sun direction; False (nothing changed) when it cannot.

    The anchor (the vector TRIAD matches exactly) is the one with the
    smaller angular noise: the field's ``σ_mag / |b|`` or the Sun
    direction's ``σ_sun`` (Markley & Crassidis 2014, sec. 5.2.1: TRIAD
    trusts its first vector). The attitude block of ``P`` restarts at the
    filter's initial ``σ²`` with no correlation to the bias, since the
    attitude no longer comes from the propagation that built the rest.
    """
    s = sun_vector(css, sun_matrix)
    nb = math.sqrt(b_mag[0] * b_mag[0] + b_mag[1] * b_mag[1] + b_mag[2] * b_mag[2])
    nr = math.sqrt(r_mag[0] * r_mag[0] + r_mag[1] * r_mag[1] + r_mag[2] * r_mag[2])
    if (s[0] == 0.0 and s[1] == 0.0 and s[2] == 0.0) or not (nb > 0.0 and nr > 0.0):
        return False
    b = (b_mag[0] / nb, b_mag[1] / nb, b_mag[2] / nb)
    cx, cy, cz = b[1] * s[2] - b[2] * s[1], b[2] * s[0] - b[0] * s[2], b[0] * s[1] - b[1] * s[0]
    if math.sqrt(cx * cx + cy * cy + cz * cz) < TRIAD_MIN_SINE:
        return False
    r = (r_mag[0] / nr, r_mag[1] / nr, r_mag[2] / nr)
    sun_ref = (r_sun[0], r_sun[1], r_sun[2])
    if params[P_SIGMA_MAG] / nb <= params[P_SIGMA_SUN]:
        qn = triad_kernel(b, s, r, sun_ref)
    else:
        qn = triad_kernel(s, b, sun_ref, r)
    for i in range(4):
        q[i] = qn[i]
    for i in range(3):
        for j in range(3):
            P[i, j] = params[P_SIGMA_ATTITUDE0] * params[P_SIGMA_ATTITUDE0] if i == j else 0.0
            P[i, 3 + j] = P[3 + j, i] = 0.0
    return True


# after this many rejections in a row a measurement kind is taken whatever its innovation: an estimate that drifted
# away from the measurements would otherwise shut them all out for good (filter lock-out)
LOCKOUT_REJECTIONS = 5
# ``mekf_cycle``'s memory: t of the last propagation, initialised flag, last good gyro reading (3), rejections in a
# row of each measurement kind (3)
MEMORY_SIZE = 8


def new_memory(initialised: bool):
    """A cycle memory before the first cycle (see :data:`MEMORY_SIZE`)."""
    memory = np.zeros(MEMORY_SIZE)
    memory[0] = memory[2] = memory[3] = memory[4] = np.nan
    memory[1] = 1.0 if initialised else 0.0
    return memory


@njit(**_JIT)
def _gated(rejections, gate):
    """The gate for a measurement kind rejected ``rejections`` times in a row: infinite from
    :data:`LOCKOUT_REJECTIONS` on."""
    return np.inf if rejections >= LOCKOUT_REJECTIONS else gate


@njit(**_JIT)
def _star_tracker_update(q, bias, P, q_st, params, rejected_in_a_row):
    """:func:`mekf_update_quaternion` with the tracker's noise and mounting from ``params`` (:data:`PARAMETERS`)."""
    sigma = (params[P_SIGMA_ST], params[P_SIGMA_ST + 1], params[P_SIGMA_ST + 2])
    q_BS = (params[P_Q_BS_ST], params[P_Q_BS_ST + 1], params[P_Q_BS_ST + 2], params[P_Q_BS_ST + 3])
    return mekf_update_quaternion(q, bias, P, q_st, sigma, _gated(rejected_in_a_row, params[P_GATE]), q_BS)


@njit(**_JIT)
def _booked(memory, nis_out, i, result):
    """Book update ``i``'s ``(nis, accepted)``: its NIS into ``nis_out``, its rejections in a row into
    ``memory``. Returns 1 when it was rejected, 0 when used, :data:`DIVERGED` when its NIS is NaN: the measurements
    are finite, so its innovation covariance was not positive definite (``P`` stopped being a covariance)."""
    nis, accepted = result
    nis_out[i] = nis
    if math.isnan(nis):
        return DIVERGED
    memory[5 + i] = 0.0 if accepted else memory[5 + i] + 1.0
    return 0 if accepted else 1


@njit(**_JIT)
def _finite(v, n):
    for i in range(n):
        if not math.isfinite(v[i]):
            return False
    return True


@njit(**_JIT)
def _finite_filter(q, bias, P, started):
    """Whether the filter's state is finite (``q̂`` only once started: it is NaN until then)."""
    if not (_finite(bias, 3) and (started == 0.0 or _finite(q, 4))):
        return False
    for i in range(6):
        for j in range(6):
            if not math.isfinite(P[i, j]):
                return False
    return True


@njit(**_JIT)
def mekf_cycle(q, bias, P, memory, t_s, w_meas, use_st, q_st, use_mag, b_mag, r_mag, use_sun, css, sun_matrix, r_sun,
               params, nis_out):
    """One estimator cycle at ``t_s``: propagate with the gyro, then update with this cycle's measurements.

    The rate over the interval since the last cycle is the mean of the gyro
    readings at its two ends (the readings are instantaneous rates: the
    trapezoid keeps the attitude propagation second-order accurate while the
    body accelerates). ``memory`` is :func:`new_memory`'s; its entries 2-4
    keep the last good gyro reading, which stands in for a reading without
    output (NaN: a gyro dropout) — the filter keeps propagating and its
    covariance keeps growing — and is the rate the estimator reports. An
    estimator without an initial attitude takes its first star-tracker
    quaternion as it or, without a star tracker, starts from TRIAD on the
    first cycle that measures both the field and the Sun
    (:func:`triad_start`); until then ``q̂`` stays as it was (NaN) and
    nothing is updated. ``nis_out`` (3,) gets the NIS of the star-tracker,
    magnetometer and Sun updates of this cycle (NaN where none was made: a
    measurement without output is skipped, neither used nor rejected). A
    measurement kind rejected :data:`LOCKOUT_REJECTIONS` times in a row is
    accepted the next time. The sun sensor's six detector outputs ``css``
    give a direction by :func:`sun_vector` with its ``sun_matrix`` (no
    update when it is too dim, in eclipse). Returns how many measurements
    were rejected or, at once, :data:`DIVERGED` when the state stopped being
    finite, the rotation over the interval overflows, or an innovation
    covariance is not positive definite (:func:`_booked`).
    """
    if _finite(w_meas, 3):
        wx, wy, wz = w_meas[0], w_meas[1], w_meas[2]
    elif math.isnan(memory[2]):  # no good reading yet: the body taken at rest until one comes
        wx = wy = wz = 0.0
    else:
        wx, wy, wz = memory[2], memory[3], memory[4]
    if not math.isnan(memory[0]):
        dt = t_s - memory[0]
        if dt > 0.0:
            w_mid = (0.5 * (memory[2] + wx), 0.5 * (memory[3] + wy), 0.5 * (memory[4] + wz))
            if not mekf_propagate(q, bias, P, w_mid, dt, params[P_SIGMA_V], params[P_SIGMA_U]) \
                    or not _finite_filter(q, bias, P, memory[1]):
                return DIVERGED
    memory[0] = t_s
    memory[2], memory[3], memory[4] = wx, wy, wz
    nis_out[0] = nis_out[1] = nis_out[2] = np.nan
    rejected = 0
    use_st = use_st and _finite(q_st, 4)
    use_mag = use_mag and _finite(b_mag, 3)
    if use_st:
        if memory[1] == 0.0:
            for i in range(4):
                q[i] = q_st[i]
            memory[1] = 1.0
        else:
            booked = _booked(memory, nis_out, 0, _star_tracker_update(q, bias, P, q_st, params, memory[5]))
            if booked == DIVERGED:
                return DIVERGED
            rejected += booked
    if memory[1] == 0.0 and use_mag and use_sun:  # no star tracker: the first usable field and Sun pair
        if triad_start(q, P, b_mag, r_mag, css, sun_matrix, r_sun, params):
            memory[1] = 1.0
            return rejected  # they made the attitude: updating with them again would count them twice
    if memory[1] == 0.0:  # no attitude yet: nothing to linearise about
        return rejected
    if use_mag:
        booked = _booked(memory, nis_out, 1, mekf_update_vector(q, bias, P, b_mag, r_mag, params[P_SIGMA_MAG],
                                                                _gated(memory[6], params[P_GATE])))
        if booked == DIVERGED:
            return DIVERGED
        rejected += booked
    if use_sun:
        s = sun_vector(css, sun_matrix)
        if s[0] != 0.0 or s[1] != 0.0 or s[2] != 0.0:
            booked = _booked(memory, nis_out, 2, mekf_update_vector(q, bias, P, s, r_sun, params[P_SIGMA_SUN],
                                                                    _gated(memory[7], params[P_GATE])))
            if booked == DIVERGED:
                return DIVERGED
            rejected += booked
    if not _finite_filter(q, bias, P, memory[1]):
        return DIVERGED
    return rejected
