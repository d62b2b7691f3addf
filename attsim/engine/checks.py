"""Whether the plant's state is sound: the check after every advance, on both paths.

A non-finite state, a quaternion off unit norm or a rate that turns the body
more than half a revolution per ``max_step`` means the integration diverged
or cannot resolve the motion: the run stops with a
:class:`~attsim.errors.DivergenceError` naming ``max_step`` and the interval.
"""

from __future__ import annotations

import math

from .._core.jit import LOOP_INLINED, njit
from ..errors import DivergenceError

__all__ = ["QUATERNION_DRIFT_LIMIT", "SOUND", "NOT_FINITE", "OFF_UNIT_NORM", "UNRESOLVED_TURN", "state_fault"]


# A quaternion this far off unit norm after an advance means the integration
# diverged; the fixed-step methods renormalise, so anything larger is not round-off.
QUATERNION_DRIFT_LIMIT = 1e-6
# what state_fault finds
SOUND, NOT_FINITE, OFF_UNIT_NORM, UNRESOLVED_TURN = 0, 1, 2, 3


@njit(cache=True, nogil=True, error_model="numpy", **LOOP_INLINED)
def state_fault(q, w, max_step):
    """What is wrong with a plant state, if anything: ``SOUND``, ``NOT_FINITE``, ``OFF_UNIT_NORM`` (|q| - 1 beyond
    :data:`QUATERNION_DRIFT_LIMIT`) or ``UNRESOLVED_TURN`` (|ω| max_step > π: more than half a turn a step)."""
    q2 = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]
    w2 = w[0] * w[0] + w[1] * w[1] + w[2] * w[2]
    if not (math.isfinite(q2) and math.isfinite(w2)):
        return NOT_FINITE
    if abs(math.sqrt(q2) - 1.0) > QUATERNION_DRIFT_LIMIT:
        return OFF_UNIT_NORM
    if math.sqrt(w2) * max_step > math.pi:
        return UNRESOLVED_TURN
    return SOUND


def _check_state(q, w, t0_s: float, t1_s: float, max_step_s: float) -> None:
    """Refuse a plant state that diverged over ``[t0_s, t1_s]`` (see :class:`DivergenceError`)."""
    fault = state_fault(q, w, max_step_s)
    if fault == NOT_FINITE:
        raise DivergenceError(t1_s, "the state is no longer finite", t0_s, max_step_s)
    if fault == OFF_UNIT_NORM:
        norm = math.sqrt(sum(x * x for x in q))
        raise DivergenceError(t1_s, f"|q| - 1 reached {norm - 1.0:.2g}", t0_s, max_step_s)
    if fault == UNRESOLVED_TURN:
        turn = math.sqrt(sum(x * x for x in w)) * max_step_s
        raise DivergenceError(t1_s, f"|omega| max_step reached {turn:.3g} rad (more than half a turn per step)",
                              t0_s, max_step_s)
