"""The environment's frame arithmetic, written once for one state and for arrays of states.

The compiled guidance and control laws call these kernels on one state
(tuples of floats); :mod:`attsim.environment.frames` calls the same Python
functions (``.py_func``) with each component an array, so that ECEF to ECI
and the orbit frame have one source. That is why they use only arithmetic,
indexing and ``np.sqrt``/``np.cos``/``np.sin`` (which numba compiles to the
same libm calls as ``math``'s).

Frames (Vallado, *Fundamentals of Astrodynamics and Applications*, 4th ed.,
sec. 3.7 and 2.6): ECEF to ECI is the rotation ``R3(-θ)`` by the Greenwich
sidereal angle θ (precession, nutation and polar motion neglected: below
0.1 deg over a mission, far below a CubeSat's pointing needs); the orbit
frame (LVLH in Basilisk's "Hill" sense rotated so that z points to nadir)
has ``z = -r/|r|``, ``y = -h/|h|`` with ``h = r × v``, and ``x = y × z``.
"""

from __future__ import annotations

import numpy as np

from .._core.jit import LOOP_CALLED, njit
from ..dynamics import dcm_to_quat_tuple

__all__ = ["ecef_to_eci_tuple", "lvlh_axes_tuple", "lvlh_quaternion_tuple"]

_JIT = dict(cache=True, nogil=True, error_model="numpy", **LOOP_CALLED)  # attsim._core.jit: no refcounts


@njit(**_JIT)
def ecef_to_eci_tuple(v, gmst_rad):
    """``R3(-θ) v``: an Earth-fixed vector in ECI axes at Greenwich sidereal angle ``θ = gmst_rad``."""
    c, s = np.cos(gmst_rad), np.sin(gmst_rad)
    return (c * v[0] - s * v[1], s * v[0] + c * v[1], v[2])


@njit(**_JIT)
def lvlh_axes_tuple(r, v):
    """The orbit frame's axes ``x, y, z`` in ECI (the columns of ``R_IO``) from ECI position ``r`` and velocity
    ``v``: ``z = -r/|r|`` (nadir), ``y = -h/|h|`` with ``h = r × v`` (negative orbit normal), ``x = y × z``."""
    rn = np.sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2])
    z = (-r[0] / rn, -r[1] / rn, -r[2] / rn)
    h = (r[1] * v[2] - r[2] * v[1], r[2] * v[0] - r[0] * v[2], r[0] * v[1] - r[1] * v[0])
    hn = np.sqrt(h[0] * h[0] + h[1] * h[1] + h[2] * h[2])
    y = (-h[0] / hn, -h[1] / hn, -h[2] / hn)
    x = (y[1] * z[2] - y[2] * z[1], y[2] * z[0] - y[0] * z[2], y[0] * z[1] - y[1] * z[0])
    return x, y, z


@njit(**_JIT)
def lvlh_quaternion_tuple(r, v):
    """``q_IO`` (scalar first) of the orbit frame of :func:`lvlh_axes_tuple`, by Shepperd's branch choice on
    ``R_IO = [x y z]``: it rotates orbit-frame vectors into ECI."""
    x, y, z = lvlh_axes_tuple(r, v)
    return dcm_to_quat_tuple(x[0], y[0], z[0], x[1], y[1], z[1], x[2], y[2], z[2])
