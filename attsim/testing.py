"""Assertions for users' own tests of control laws and torque schedules.

Each takes a :class:`~attsim.telemetry.Telemetry` (or a telemetry frame)
and raises ``AssertionError`` with the measured value, the time and the bound
when the claim does not hold, so a failing pytest says what went wrong::

    from attsim.testing import assert_rate_below
    tel = mission.run()
    assert_rate_below(tel, 3.5e-3, within_s=5900.0)

A mission script's ``criteria(telemetry)`` returns ``[(label, value, ok,
bound), ...]``; a criterion that cannot be judged on this run (its time
window lies after the end of a shortened run) gives a :class:`NotEvaluated`
value instead of a number, which ``attsim run`` reports as a failure with
its reason::

    late = ended_before(tel, 240.0) or error_deg[tel.df.index >= 240.0].max()
"""

from __future__ import annotations

import numpy as np

from . import rotations
from .analysis import total_momentum
from .errors import InputError
from .reporting.actuators import limited_intervals

__all__ = ["assert_rate_below", "assert_pointing_within", "assert_momentum_conserved", "assert_no_saturation",
           "NotEvaluated", "ended_before"]


class NotEvaluated:
    """The value of a criterion that could not be evaluated on a run, and why.

    ``attsim run`` (:func:`attsim.script_runs.execute`) counts such a criterion as
    FAIL and prints ``not evaluated: <reason>``, whatever its ``ok`` says.
    Order comparisons with it are False, as with NaN, so a criterion written
    ``(label, value, value < bound, ...)`` needs no special case; unlike NaN,
    it says why and it is never printed as a number.

    Parameters
    ----------
    reason : str
        Why the criterion could not be judged on this run (printed after ``not evaluated:``).
    """

    __slots__ = ("reason",)

    def __init__(self, reason: str):
        self.reason = str(reason)

    def __str__(self) -> str:
        return f"not evaluated: {self.reason}"

    def __repr__(self) -> str:
        return f"NotEvaluated({self.reason!r})"

    def __eq__(self, other) -> bool:
        return isinstance(other, NotEvaluated) and other.reason == self.reason

    def __hash__(self) -> int:
        return hash((NotEvaluated, self.reason))

    def _never(self, other) -> bool:
        return False

    __lt__ = __le__ = __gt__ = __ge__ = _never


def ended_before(telemetry, t_s: float) -> NotEvaluated | None:
    """``NotEvaluated("the run ends at 120 s")`` when the telemetry has no row at or after ``t_s``, else None.

    Parameters
    ----------
    telemetry : Telemetry or pandas.DataFrame
        A run's telemetry (or its ``df``).
    t_s : float
        The time a criterion's window starts, s.
    """
    t = _frame(telemetry).index
    if len(t) == 0:
        return NotEvaluated("the run has no telemetry")
    if t[-1] < t_s:
        return NotEvaluated(f"the run ends at {t[-1]:.6g} s, before {t_s:.6g} s")
    return None


def _frame(telemetry):
    return telemetry.df if hasattr(telemetry, "df") else telemetry


def assert_rate_below(telemetry, rad_s: float, within_s: float) -> float:
    """``|ω|`` stays below ``rad_s`` from ``within_s`` on; returns the time it first stays below.

    Parameters
    ----------
    telemetry : Telemetry or pandas.DataFrame
        A run's telemetry (or its ``df``).
    rad_s : float
        The bound on ``|ω|``, rad/s.
    within_s : float
        The time from which it must hold, s.
    """
    df = _frame(telemetry)
    t = df.index.to_numpy()
    rate = np.linalg.norm(df[["wx", "wy", "wz"]].to_numpy(), axis=1)
    late = t >= within_s
    if not late.any():
        raise InputError("within_s", "lies after the end of the telemetry", f"within_s = {within_s} s, end {t[-1]} s")
    worst = int(np.argmax(np.where(late, rate, -np.inf)))
    if rate[worst] >= rad_s:
        raise AssertionError(f"|omega| = {rate[worst]:.4g} rad/s at t = {t[worst]:.6g} s, not below {rad_s:.4g} rad/s "
                             f"from t = {within_s:.6g} s on")
    above = np.nonzero(rate >= rad_s)[0]
    return float(t[0] if above.size == 0 else t[above[-1] + 1])


def assert_pointing_within(telemetry, target, deg: float, after_s: float) -> float:
    """The attitude stays within ``deg`` of ``target`` from ``after_s`` on.

    ``target`` is a quaternion ``q_IB`` or a callable ``f(t_array) -> (n, 4)``
    (e.g. the orbit frame along the orbit). Returns the largest error (deg).

    Parameters
    ----------
    telemetry : Telemetry or pandas.DataFrame
        A run's telemetry (or its ``df``).
    target : array_like (4,) or callable
        The attitude ``q_IB`` to hold (scalar first), or ``f(t_array) -> (n, 4)``.
    deg : float
        The bound on the error angle, deg.
    after_s : float
        The time from which it must hold, s.
    """
    df = _frame(telemetry)
    late = df[df.index >= after_s]
    if late.empty:
        raise InputError("after_s", "lies after the end of the telemetry", f"after_s = {after_s} s")
    t = late.index.to_numpy()
    goal = np.asarray(target(t) if callable(target) else target, dtype=float)
    error = np.degrees(rotations.quat_angle_between(late[["qw", "qx", "qy", "qz"]].to_numpy(), goal))
    worst = int(np.argmax(error))
    if error[worst] > deg:
        raise AssertionError(f"pointing error {error[worst]:.4g} deg at t = {t[worst]:.6g} s exceeds {deg:.4g} deg "
                             f"(from t = {after_s:.6g} s on)")
    return float(error[worst])


def assert_momentum_conserved(telemetry, rtol: float, inertia=None) -> float:
    """The inertial angular momentum (body plus wheels) stays within ``rtol`` of its start.

    The inertia comes from the telemetry's metadata unless given; wheel
    momenta are read from the ``<wheel>_h`` columns with the axes recorded
    in the mission metadata. The change is relative to the largest momentum
    the body or the wheels carry (a body at rest with spinning wheels has no
    total to compare with). Returns the largest relative change.

    Parameters
    ----------
    telemetry : Telemetry or pandas.DataFrame
        A run's telemetry (a DataFrame needs ``inertia``).
    rtol : float
        The bound on the relative change.
    inertia : array_like (3, 3), optional
        Inertia, kg m^2 (default: the run's ``meta["inertia_kg_m2"]``).
    """
    df = _frame(telemetry)
    meta = getattr(telemetry, "meta", {})
    J = np.asarray(inertia if inertia is not None else meta.get("inertia_kg_m2"), dtype=float)
    if J.shape != (3, 3):
        raise InputError("inertia", "must be given (3x3) when the telemetry does not record it")
    parts = total_momentum(df, J, meta.get("components", []))
    change = np.linalg.norm(parts.inertial - parts.inertial[0], axis=1) / parts.scale
    worst = int(np.argmax(change))
    if change[worst] > rtol:
        raise AssertionError(f"inertial angular momentum changed by {change[worst]:.3g} (relative) at t = "
                             f"{df.index[worst]:.6g} s, more than rtol = {rtol:.3g}")
    return float(change[worst])


def assert_no_saturation(telemetry, actuator: str) -> None:
    """No saturation of ``actuator``: none logged, and for a wheel no motor torque held on its limit.

    A law that scales its torques to the wheels' limits (``QuaternionPD`` does) never has a wheel clip a
    command, so no saturation event is logged, yet the slew is torque-limited: the wheel's torque column on
    its ``max_torque_Nm`` counts as saturation too (as the report's summary counts it).

    Parameters
    ----------
    telemetry : Telemetry
        A run's telemetry (its events and columns are read).
    actuator : str
        The actuator's name.
    """
    spans = sorted((start, what) for (name, what), found in limited_intervals(telemetry).items()
                   if name == actuator for start, _ in found)
    if spans:
        t_first, what = spans[0]
        raise AssertionError(f"{actuator} saturated {len(spans)} time(s), first at t = {t_first:.6g} s "
                             f"({what or '?'}); expected none")
