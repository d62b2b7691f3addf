"""Attitude representations and their algebra.

Conventions (``docs/architecture.md``): Hamilton quaternions, scalar first,
``q = (w, x, y, z)``. The attitude quaternion ``q_IB`` rotates body-frame
vectors into the inertial frame, ``v_I = q ⊗ (0, v_B) ⊗ q*``, and its matrix
is the direction-cosine matrix ``R_IB`` (``v_I = R_IB v_B``).

Every function takes one attitude or a batch stacked along leading axes:
quaternions have shape ``(..., 4)``, matrices ``(..., 3, 3)``, vectors and
angle triples ``(..., 3)``. Angles are radians.

Euler angles are the aerospace 3-2-1 sequence: ``R_IB = Rz(yaw) Ry(pitch)
Rx(roll)``, i.e. starting from the inertial axes, yaw about z, then pitch
about the new y, then roll about the newest x. Triples are ordered
``(yaw, pitch, roll)``. Pitch is confined to [-pi/2, pi/2]; at +-pi/2 the
sequence is singular (gimbal lock) and :func:`quat_to_euler321` puts all of
the rotation about the vertical into yaw, with roll = 0.

References: Markley & Crassidis, *Fundamentals of Spacecraft Attitude
Determination and Control* (2014), ch. 2; Shepperd, "Quaternion from rotation
matrix", J. Guidance and Control 1(3), 1978 (robust branch choice).
"""

from __future__ import annotations

import numpy as np

from .errors import InputError

__all__ = [
    "quat_multiply",
    "quat_conjugate",
    "quat_normalize",
    "quat_rotate",
    "quat_to_dcm",
    "dcm_to_quat",
    "quat_to_euler321",
    "euler321_to_quat",
    "euler321_to_dcm",
    "dcm_to_euler321",
    "axis_angle_to_quat",
    "quat_to_axis_angle",
    "rotvec_to_quat",
    "quat_to_rotvec",
    "quat_to_mrp",
    "mrp_to_quat",
    "quat_angle_between",
    "quat_canonical",
]


def _last_axis(array, size: int, field: str) -> np.ndarray:
    a = np.asarray(array, dtype=np.float64)
    if a.ndim == 0 or a.shape[-1] != size:
        raise InputError(field, f"must have a last axis of length {size}", f"got shape {a.shape}")
    return a


def _matrices(array, field: str) -> np.ndarray:
    a = np.asarray(array, dtype=np.float64)
    if a.ndim < 2 or a.shape[-2:] != (3, 3):
        raise InputError(field, "must have shape (..., 3, 3)", f"got shape {a.shape}")
    return a


def quat_multiply(p, q) -> np.ndarray:
    """Hamilton product ``p ⊗ q``.

    ``(p0 q0 - p.q,  p0 q + q0 p + p x q)``; the rotation ``p ⊗ q`` applies
    ``q`` first, then ``p``.

    Parameters
    ----------
    p, q : array_like (..., 4)
        Quaternions ``(w, x, y, z)``, scalar first; broadcast against each other.
    """
    p = _last_axis(p, 4, "p")
    q = _last_axis(q, 4, "q")
    pw, px, py, pz = np.moveaxis(p, -1, 0)
    qw, qx, qy, qz = np.moveaxis(q, -1, 0)
    return np.stack(
        [
            pw * qw - px * qx - py * qy - pz * qz,
            pw * qx + px * qw + py * qz - pz * qy,
            pw * qy - px * qz + py * qw + pz * qx,
            pw * qz + px * qy - py * qx + pz * qw,
        ],
        axis=-1,
    )


def quat_conjugate(q) -> np.ndarray:
    """``q* = (w, -x, -y, -z)``: the inverse rotation of a unit quaternion.

    Parameters
    ----------
    q : array_like (..., 4)
        Quaternion(s) ``(w, x, y, z)``, scalar first, along the last axis.
    """
    q = _last_axis(q, 4, "q")
    return q * np.array([1.0, -1.0, -1.0, -1.0])


def quat_normalize(q) -> np.ndarray:
    """Scale to unit norm; a zero quaternion is an error.

    Parameters
    ----------
    q : array_like (..., 4)
        Quaternion(s) ``(w, x, y, z)``, scalar first, along the last axis.
    """
    q = _last_axis(q, 4, "q")
    norm = np.linalg.norm(q, axis=-1, keepdims=True)
    if np.any(norm == 0.0) or not np.all(np.isfinite(norm)):
        raise InputError("q", "must be finite and non-zero to be normalised")
    return q / norm


def quat_canonical(q) -> np.ndarray:
    """The representative of ``±q`` with ``w >= 0`` (ties broken on x, y, z).

    Parameters
    ----------
    q : array_like (..., 4)
        Quaternion(s) ``(w, x, y, z)``, scalar first, along the last axis.
    """
    q = _last_axis(q, 4, "q")
    # The first non-zero component decides the sign, so the choice is unique.
    lead = np.where(q[..., 0] != 0, q[..., 0],
                    np.where(q[..., 1] != 0, q[..., 1], np.where(q[..., 2] != 0, q[..., 2], q[..., 3])))
    return np.where((lead < 0)[..., None], -q, q)


def quat_rotate(q, v) -> np.ndarray:
    """Rotate vectors: ``q ⊗ (0, v) ⊗ q*``, e.g. body to inertial with ``q_IB``.

    Uses ``v + 2w (u x v) + 2 u x (u x v)`` with ``u = (x, y, z)``, which is
    the sandwich product expanded for a unit quaternion.

    Parameters
    ----------
    q : array_like (..., 4)
        Unit quaternion(s), scalar first (``q_IB`` takes body vectors to inertial axes).
    v : array_like (..., 3)
        Vector(s) to rotate, any unit.
    """
    q = _last_axis(q, 4, "q")
    v = _last_axis(v, 3, "v")
    w = q[..., :1]
    u = q[..., 1:]
    t = 2.0 * np.cross(u, v)
    return v + w * t + np.cross(u, t)


def quat_to_dcm(q) -> np.ndarray:
    """Rotation matrix of a unit quaternion: ``R_IB`` from ``q_IB``.

    Parameters
    ----------
    q : array_like (..., 4)
        Unit quaternion(s), scalar first.
    """
    q = _last_axis(q, 4, "q")
    w, x, y, z = np.moveaxis(q, -1, 0)
    xx, yy, zz = x * x, y * y, z * z
    xy, xz, yz = x * y, x * z, y * z
    wx, wy, wz = w * x, w * y, w * z
    rows = [
        [1.0 - 2.0 * (yy + zz), 2.0 * (xy - wz), 2.0 * (xz + wy)],
        [2.0 * (xy + wz), 1.0 - 2.0 * (xx + zz), 2.0 * (yz - wx)],
        [2.0 * (xz - wy), 2.0 * (yz + wx), 1.0 - 2.0 * (xx + yy)],
    ]
    return np.stack([np.stack(row, axis=-1) for row in rows], axis=-2)


def dcm_to_quat(R) -> np.ndarray:
    """Unit quaternion of a rotation matrix, with ``w >= 0``.

    Shepperd's method: of the four algebraically equivalent formulas, use the
    one whose pivot (``4w^2``, ``4x^2``, ``4y^2`` or ``4z^2``) is largest, so
    the division is never by a small number.

    Parameters
    ----------
    R : array_like (..., 3, 3)
        Rotation matrix (matrices), ``R_IB``.
    """
    R = _matrices(R, "R")
    r00, r11, r22 = R[..., 0, 0], R[..., 1, 1], R[..., 2, 2]
    pivots = np.stack([r00 + r11 + r22, r00, r11, r22], axis=-1)
    case = np.argmax(pivots, axis=-1)
    d21 = R[..., 2, 1] - R[..., 1, 2]
    d02 = R[..., 0, 2] - R[..., 2, 0]
    d10 = R[..., 1, 0] - R[..., 0, 1]
    s01 = R[..., 0, 1] + R[..., 1, 0]
    s02 = R[..., 0, 2] + R[..., 2, 0]
    s12 = R[..., 1, 2] + R[..., 2, 1]
    # 4 * (square of the pivot component) for each case
    four_sq = np.stack(
        [1.0 + r00 + r11 + r22, 1.0 + r00 - r11 - r22, 1.0 - r00 + r11 - r22, 1.0 - r00 - r11 + r22],
        axis=-1,
    )
    pivot = 0.5 * np.sqrt(np.maximum(np.take_along_axis(four_sq, case[..., None], -1)[..., 0], 0.0))
    inv = 0.25 / pivot
    candidates = np.stack(
        [
            np.stack([pivot, d21 * inv, d02 * inv, d10 * inv], axis=-1),
            np.stack([d21 * inv, pivot, s01 * inv, s02 * inv], axis=-1),
            np.stack([d02 * inv, s01 * inv, pivot, s12 * inv], axis=-1),
            np.stack([d10 * inv, s02 * inv, s12 * inv, pivot], axis=-1),
        ],
        axis=-2,
    )
    q = np.take_along_axis(candidates, case[..., None, None], -2)[..., 0, :]
    return quat_canonical(q)


def euler321_to_dcm(angles) -> np.ndarray:
    """``R_IB = Rz(yaw) Ry(pitch) Rx(roll)`` from ``(yaw, pitch, roll)``.

    Parameters
    ----------
    angles : array_like (..., 3)
        ``(yaw, pitch, roll)``, rad.
    """
    angles = _last_axis(angles, 3, "angles")
    return quat_to_dcm(euler321_to_quat(angles))


def euler321_to_quat(angles) -> np.ndarray:
    """``q_IB = q_z(yaw) ⊗ q_y(pitch) ⊗ q_x(roll)`` from ``(yaw, pitch, roll)``.

    Parameters
    ----------
    angles : array_like (..., 3)
        ``(yaw, pitch, roll)``, rad.
    """
    angles = _last_axis(angles, 3, "angles")
    half = 0.5 * angles
    cy, cp, cr = np.cos(half[..., 0]), np.cos(half[..., 1]), np.cos(half[..., 2])
    sy, sp, sr = np.sin(half[..., 0]), np.sin(half[..., 1]), np.sin(half[..., 2])
    return np.stack(
        [
            cy * cp * cr + sy * sp * sr,
            cy * cp * sr - sy * sp * cr,
            cy * sp * cr + sy * cp * sr,
            sy * cp * cr - cy * sp * sr,
        ],
        axis=-1,
    )


def dcm_to_euler321(R) -> np.ndarray:
    """``(yaw, pitch, roll)`` of ``R_IB``; see the module note on gimbal lock.

    Parameters
    ----------
    R : array_like (..., 3, 3)
        Rotation matrix (matrices), ``R_IB``.
    """
    return quat_to_euler321(dcm_to_quat(_matrices(R, "R")))


def quat_to_euler321(q) -> np.ndarray:
    """``(yaw, pitch, roll)`` of ``q_IB``; see the module note on gimbal lock.

    Works from half-angle sums, which stay accurate up to the singularity
    (the approach of Bernardes & Viollet, PLoS ONE 17(11), 2022). Expanding
    ``q = q_z(yaw) ⊗ q_y(pitch) ⊗ q_x(roll)`` gives, with ``c, s`` the cosine
    and sine of half the pitch::

        (w + y, z - x) = (c + s) (cos, sin)((yaw - roll) / 2)
        (w - y, z + x) = (c - s) (cos, sin)((yaw + roll) / 2)

    and ``pitch = 2 atan2(c + s, c - s) - pi/2``.

    Parameters
    ----------
    q : array_like (..., 4)
        Unit quaternion(s) ``q_IB``, scalar first.
    """
    q = _last_axis(q, 4, "q")
    w, x, y, z = np.moveaxis(q, -1, 0)
    a = np.hypot(w + y, z - x)
    b = np.hypot(w - y, z + x)
    pitch = 2.0 * np.arctan2(a, b) - 0.5 * np.pi
    difference = 2.0 * np.arctan2(z - x, w + y)
    total = 2.0 * np.arctan2(z + x, w - y)
    # At +-90 deg pitch one of the two combinations is undefined: put the
    # whole rotation about the vertical into yaw and set roll to zero.
    eps = 1e-12 * (a + b)
    up, down = b <= eps, a <= eps
    yaw = np.where(up, difference, np.where(down, total, 0.5 * (total + difference)))
    roll = np.where(up | down, 0.0, 0.5 * (total - difference))
    return np.stack([_wrap_pi(yaw), pitch, _wrap_pi(roll)], axis=-1)


def _wrap_pi(angle):
    return np.arctan2(np.sin(angle), np.cos(angle))


def axis_angle_to_quat(axis, angle_rad) -> np.ndarray:
    """Rotation by ``angle_rad`` about ``axis`` (normalised here): ``(cos a/2, sin a/2 n)``.

    Parameters
    ----------
    axis : array_like (..., 3)
        Rotation axis, any non-zero length.
    angle_rad : float or array_like (...)
        Rotation angle, rad (right-handed about ``axis``).
    """
    axis = _last_axis(axis, 3, "axis")
    norm = np.linalg.norm(axis, axis=-1, keepdims=True)
    if np.any(norm == 0.0):
        raise InputError("axis", "must be a non-zero vector")
    half = 0.5 * np.asarray(angle_rad, dtype=np.float64)[..., None]
    return np.concatenate([np.cos(half), np.sin(half) * axis / norm], axis=-1)


def quat_to_axis_angle(q) -> tuple[np.ndarray, np.ndarray]:
    """Unit axis and angle in [0, pi] of ``q`` (axis (1, 0, 0) for the identity).

    Parameters
    ----------
    q : array_like (..., 4)
        Unit quaternion(s), scalar first.
    """
    rotvec = quat_to_rotvec(q)
    angle = np.linalg.norm(rotvec, axis=-1)
    safe = np.where(angle > 0.0, angle, 1.0)[..., None]
    axis = np.where((angle > 0.0)[..., None], rotvec / safe, np.array([1.0, 0.0, 0.0]))
    return axis, angle


def rotvec_to_quat(rotvec) -> np.ndarray:
    """Quaternion exponential: rotation vector ``phi n`` to ``(cos phi/2, sin phi/2 n)``.

    Uses ``sin(phi/2)/phi`` with its Taylor series for tiny angles, so the
    map is smooth through zero (the Lie-group integrators rely on this).

    Parameters
    ----------
    rotvec : array_like (..., 3)
        Rotation vector ``phi n``, rad.
    """
    rotvec = _last_axis(rotvec, 3, "rotvec")
    angle = np.linalg.norm(rotvec, axis=-1, keepdims=True)
    half = 0.5 * angle
    small = angle < 1e-4
    safe = np.where(small, 1.0, angle)
    sinc_half = np.where(small, 0.5 - angle * angle / 48.0, np.sin(half) / safe)
    return np.concatenate([np.cos(half), sinc_half * rotvec], axis=-1)


def quat_to_rotvec(q) -> np.ndarray:
    """Quaternion logarithm: the rotation vector with angle in [0, pi].

    Parameters
    ----------
    q : array_like (..., 4)
        Unit quaternion(s), scalar first.
    """
    q = quat_canonical(_last_axis(q, 4, "q"))
    vec_norm = np.linalg.norm(q[..., 1:], axis=-1, keepdims=True)
    angle = 2.0 * np.arctan2(vec_norm, q[..., :1])
    small = vec_norm < 1e-8
    scale = np.where(small, 2.0 / np.where(small, q[..., :1], 1.0), angle / np.where(small, 1.0, vec_norm))
    return scale * q[..., 1:]


def quat_to_mrp(q) -> np.ndarray:
    """Modified Rodrigues parameters ``p = u / (1 + w)``, with ``|p| <= 1``.

    ``q`` and ``-q`` give the same rotation; choosing the representative with
    ``w >= 0`` picks the MRP set of norm at most one (the shadow set of the
    other sign has norm at least one).

    Parameters
    ----------
    q : array_like (..., 4)
        Unit quaternion(s), scalar first.
    """
    q = quat_canonical(_last_axis(q, 4, "q"))
    return q[..., 1:] / (1.0 + q[..., :1])


def mrp_to_quat(p) -> np.ndarray:
    """Inverse of :func:`quat_to_mrp`: ``((1 - |p|^2), 2p) / (1 + |p|^2)``.

    Parameters
    ----------
    p : array_like (..., 3)
        Modified Rodrigues parameters.
    """
    p = _last_axis(p, 3, "p")
    sq = np.sum(p * p, axis=-1, keepdims=True)
    return np.concatenate([1.0 - sq, 2.0 * p], axis=-1) / (1.0 + sq)


def quat_angle_between(q1, q2) -> np.ndarray:
    """Angle in [0, pi] of the rotation taking attitude ``q1`` to ``q2``.

    ``2 atan2(|vec(q1* ⊗ q2)|, |scal(q1* ⊗ q2)|)``, which stays accurate for
    tiny angles where ``2 acos(|q1 . q2|)`` loses half the digits.

    Parameters
    ----------
    q1, q2 : array_like (..., 4)
        Unit quaternions, scalar first (the sign of each does not matter).
    """
    d = quat_multiply(quat_conjugate(q1), q2)
    return 2.0 * np.arctan2(np.linalg.norm(d[..., 1:], axis=-1), np.abs(d[..., 0]))
