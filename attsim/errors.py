"""Exceptions and warnings raised by attsim.

Every error attsim raises derives from :class:`AttsimError`. Errors caused by
the caller's input also derive from :class:`ValueError`, so code that already
guards against ``ValueError`` keeps working. Each message names the offending
field and the rule it broke, e.g.::

    inertia: must be symmetric (|J - J^T| = 0.2 > 1e-09 * max|J|)
"""

from __future__ import annotations

import os
import sys

__all__ = [
    "caller_stacklevel",
    "AttsimError",
    "AttsimWarning",
    "ControllerError",
    "DivergenceError",
    "EstimatorDivergenceError",
    "GimbalLockError",
    "IdealKnowledgeWarning",
    "ImplausibleValueWarning",
    "InputError",
    "NonPhysicalInertiaError",
    "TorqueError",
    "add_note",
    "exit_as_error",
    "one_line",
]


class AttsimError(Exception):
    """Base class of every exception raised by attsim.

    Contract of every subclass: ``args`` holds exactly the constructor's
    arguments, so ``type(exc)(*exc.args)`` rebuilds an equal exception (same
    type, message and fields). SimPy re-raises a failed process's exception
    that way, and pickling (to and from worker processes) relies on it too.
    Subclasses that format a message from their fields override
    :meth:`__str__` instead of passing the message to ``Exception``.
    """


class InputError(AttsimError, ValueError):
    """An input broke a rule.

    Parameters
    ----------
    field : str
        Name of the offending argument or attribute, as the caller wrote it.
    rule : str
        The rule that was broken, phrased as what the value must be.
    detail : str, optional
        The measured value or any other context that helps fix the input.
    """

    def __init__(self, field: str, rule: str, detail: str = ""):
        self.field = field
        self.rule = rule
        self.detail = detail
        super().__init__(field, rule, detail)

    def __str__(self) -> str:
        message = f"{self.field}: {self.rule}"
        return f"{message} ({self.detail})" if self.detail else message


class NonPhysicalInertiaError(InputError):
    """Principal moments break the triangle inequality I_a + I_b >= I_c.

    No real body has such moments; pass ``allow_nonphysical=True`` to run a
    textbook case anyway (the result's metadata records that you did).
    """


class TorqueError(InputError):
    """A torque callable returned something that is not a finite 3-vector."""


class GimbalLockError(AttsimError):
    """Euler-angle propagation reached its singularity (pitch near +-90 deg).

    Attributes
    ----------
    t_s : float
        Simulation time at which the run stopped.
    pitch_deg : float
        The pitch angle there.
    partial : object
        What was computed up to that time (a DataFrame from
        ``attsim.propagate``), so no result is lost.
    """

    def __init__(self, t_s: float, pitch_deg: float, margin_deg: float, partial=None):
        self.t_s = t_s
        self.pitch_deg = pitch_deg
        self.margin_deg = margin_deg
        self.partial = partial
        super().__init__(t_s, pitch_deg, margin_deg, partial)

    def __str__(self) -> str:
        return (f"euler321: pitch reached {self.pitch_deg:.4f} deg at t = {self.t_s:.6g} s, within {self.margin_deg:g} "
                "deg of the 3-2-1 singularity (gimbal lock); use 'dcm', 'rk4' or 'rkmk4', "
                "which have no singular attitude")


class DivergenceError(AttsimError):
    """A mission's plant integration diverged: its step cannot resolve the motion.

    Attributes
    ----------
    t_s : float
        The event time the plant was being advanced to when the state failed
        the check (it failed somewhere in ``(t_from_s, t_s]``).
    reason : str
        What failed: a non-finite state, a quaternion off unit norm, or a
        rate that turns the body more than half a revolution per step.
    t_from_s : float
        Where that advance started (the state there was sound).
    max_step_s : float
        The mission's integration step.
    """

    def __init__(self, t_s: float, reason: str, t_from_s: float, max_step_s: float):
        self.t_s, self.reason, self.t_from_s, self.max_step_s = t_s, reason, t_from_s, max_step_s
        super().__init__(t_s, reason, t_from_s, max_step_s)

    def __str__(self) -> str:
        return (f"max_step: the plant diverged between t = {self.t_from_s:.6g} s and {self.t_s:.6g} s ({self.reason}) "
                f"with max_step = {self.max_step_s:g} s; reduce max_step or the torques")


class EstimatorDivergenceError(InputError):
    """An estimator's state stopped being finite in a running mission.

    Its gyro's readings or its noise settings went beyond what floating
    point carries (a bias of 1e200 rad/s, say). The run stops at the cycle
    where it happened, naming the estimator and its gyro; the telemetry up to
    the cycle before is on disk, marked partial.
    """

    def __init__(self, estimator: str, gyro: str, t_s: float):
        super().__init__(f"estimator {estimator!r}",
                         "its state must stay finite: the readings of its gyro and its noise settings must be within "
                         "what floating point carries",
                         f"it became non-finite at t = {t_s:.6g} s, propagating with gyro {gyro!r}")
        self.estimator, self.gyro, self.t_s = estimator, gyro, t_s
        self.args = (estimator, gyro, t_s)  # what SimPy re-raises the error from


class ControllerError(AttsimError):
    """A controller raised or returned something the engine cannot apply.

    The message names the controller and the simulation time; the telemetry
    up to that moment is on disk (``Mission.run`` flushed it first).
    """


class AttsimWarning(UserWarning):
    """attsim corrected an input (e.g. normalised a quaternion) or doubts one, and says so."""


class IdealKnowledgeWarning(AttsimWarning):
    """A law acts on the simulator's true state without having asked for it (:mod:`attsim.control.knowledge`)."""


class ImplausibleValueWarning(AttsimWarning):
    """A value far outside any spacecraft's range, most likely a unit slip (:mod:`attsim.plausibility`)."""


def add_note(exc: BaseException, text: str) -> None:
    """``exc.add_note(text)`` (Python 3.11), also on 3.10: tracebacks and the command line's one line show notes.

    Parameters
    ----------
    exc : BaseException
        The exception.
    text : str
        The note.
    """
    notes = getattr(exc, "__notes__", None)
    if isinstance(notes, list):
        notes.append(text)
        return
    try:
        exc.__notes__ = [text]
    except AttributeError:  # an exception type without a __dict__: the note is lost, not the error
        pass


def exit_as_error(exc: BaseException, field: str, rule: str) -> InputError:
    """``exc``, a ``SystemExit`` (or another exception that is no ``Exception``) raised by a user's code that attsim
    called, as an :class:`InputError` naming ``field`` and ``rule``.

    Raised as it is, it would end the process with the user's exit code (0: a command that ran and judged nothing
    says it succeeded; 3: attsim's own bug) or kill a campaign's worker. The error's traceback is the exit's, so it
    names the user's line, and its cause is the exit.

    Parameters
    ----------
    exc : BaseException
        The ``SystemExit`` (or other non-``Exception``) the user's code raised.
    field, rule : str
        The :class:`InputError`'s field and rule.
    """
    code = f"({exc.code!r})" if isinstance(exc, SystemExit) else ""
    error = InputError(field, rule, f"it raised {type(exc).__name__}{code}")
    error.__cause__ = exc
    return error.with_traceback(exc.__traceback__)


def one_line(value) -> str:
    """``str(value)`` on one line (whitespace runs folded), for any object: also an exception whose ``__str__``
    raises (a user's), which must not cost the message it was part of.

    Parameters
    ----------
    value : object
        Anything.
    """
    try:
        text = str(value)
    except Exception:  # noqa: BLE001 - an object that cannot say what it is still gets a line
        text = f"<{type(value).__name__}>"
    return " ".join(text.split())


def caller_stacklevel() -> int:
    """The ``stacklevel`` that makes a warning point at the first line outside attsim (the user's), however deep
    in attsim it is raised: for ``warnings.warn(..., stacklevel=caller_stacklevel())``."""
    package = os.path.dirname(os.path.abspath(__file__)) + os.sep
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename.startswith(package):
        frame, level = frame.f_back, level + 1
    return level
