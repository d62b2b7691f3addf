"""The times of periodic work: one rule for the Python path and the compiled loop.

``phase + k period`` in floating point is not the same double for grids that
meet in exact arithmetic: ``3 * 0.1`` is 0.30000000000000004 while
``1 * 0.3`` is 0.3, so a 10 Hz sensor's sample "at 0.3 s" came just after the
telemetry row at 0.3 s, which showed the sample of 0.2 s. :func:`grid_time`
snaps a time that lies within a few ulps of a multiple of a nanosecond (a
microsecond, ... for long runs, keeping several bits to spare) to that
multiple's double, so such grids (and times a user writes, like 0.3) meet
exactly; any other time is left as it is.
"""

from __future__ import annotations

import math

from .jit import njit

__all__ = ["grid_time", "snap_time"]

_RELATIVE_TOLERANCE = 1e-15  # about 4.5 ulps: the rounding of phase + k period is at most ~2


@njit(cache=True, nogil=True)
def snap_time(t):
    """``t`` snapped to the nearest multiple of 1 ns (1 us, 1 ms past 2**48 ns...) when within a few ulps of it."""
    scale = 1e9
    while scale >= 1.0 and abs(t) * scale >= 2.0**48:
        scale /= 1000.0
    if scale < 1.0 or not math.isfinite(t):
        return t
    u = math.floor(t * scale + 0.5) / scale
    if abs(u - t) <= _RELATIVE_TOLERANCE * abs(t):
        return u
    return t


@njit(cache=True, nogil=True)
def grid_time(phase_s, k, period_s):
    """The ``k``-th time of a periodic process: ``phase_s + k period_s``, snapped (:func:`snap_time`)."""
    return snap_time(phase_s + k * period_s)
