"""Exceptions and warnings raised by attsim.

Every error attsim raises derives from :class:`AttsimError`. Errors caused by
the caller's input also derive from :class:`ValueError`, so code that already
guards against ``ValueError`` keeps working. Each message names the offending
field and the rule it broke, e.g.::

    inertia: must be symmetric (|J - J^T| = 0.2 > 1e-09 * max|J|)
"""

from __future__ import annotations

__all__ = [
    "AttsimError",
    "AttsimWarning",
    "GimbalLockError",
    "InputError",
    "NonPhysicalInertiaError",
    "TorqueError",
]


class AttsimError(Exception):
    """Base class of every exception raised by attsim."""


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
        message = f"{field}: {rule}"
        if detail:
            message += f" ({detail})"
        super().__init__(message)


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
        self.partial = partial
        super().__init__(
            f"euler321: pitch reached {pitch_deg:.4f} deg at t = {t_s:.6g} s, within {margin_deg:g} deg of the "
            "3-2-1 singularity (gimbal lock); use 'dcm', 'rk4' or 'rkmk4', which have no singular attitude"
        )


class AttsimWarning(UserWarning):
    """attsim corrected an input (e.g. normalised a quaternion) and says so."""
