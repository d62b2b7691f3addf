"""The compiled mission's event rows: what a unit logs, for Python to turn into the run's events.

An event row is ``(t, kind, what, index, v0, v1, v2, v3)``: the kind is a
code of the part that logs it (its meaning, and of ``what``, ``index`` and
the values, is that part's: :meth:`attsim.engine.component.LoopPart.event`
reads it back). The buffer is the World's (``world.buffers``); the loop
keeps room for the most events one instant can log before every instant.
"""

from __future__ import annotations

from .jit import LOOP_CALLED, njit

__all__ = ["log_event"]


@njit(cache=True, nogil=True, error_model="numpy", **LOOP_CALLED)
def log_event(buffers, t, kind, what, index, v0, v1, v2):
    """Append the event row ``(t, kind, what, index, v0, v1, v2, 0)`` to the buffers."""
    n = buffers.counts[1]
    if n >= buffers.events.shape[0]:  # never reached: the loop keeps events_per_instant free before each instant
        return
    e = buffers.events[n]
    e[0], e[1], e[2], e[3], e[4], e[5], e[6], e[7] = t, kind, what, index, v0, v1, v2, 0.0
    buffers.counts[1] = n + 1
