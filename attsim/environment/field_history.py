"""A magnetic field given as a table of times and vectors: a field history from another model.

Basilisk's momentum-management example computes the WMM field along its
orbit; fed that history, an attsim mission sees the same field. The history
is held (the latest sample until the next, as a flight computer or a
simulator stepping at the samples' rate sees it) or interpolated linearly.

A mission's environment table holds the history's own times
(:meth:`FieldHistory.knot_times`), so the table's linear interpolation
gives the history exactly: at each held step the table steps within one
floating-point spacing of the sample's time.
"""

from __future__ import annotations

import numpy as np

from .._core.validate import finite_array, one_of
from ..errors import InputError
from .magnetic import FieldModel

__all__ = ["FieldHistory", "INTERPOLATIONS"]

INTERPOLATIONS = ("linear", "hold")


class FieldHistory(FieldModel):
    """The inertial magnetic field as samples ``B_inertial_T[k]`` at times ``t_s[k]``.

    Parameters
    ----------
    t_s : array_like (n,)
        Sample times, s from the mission's start (the orbit's epoch), strictly
        increasing, at least two; they must cover the run (checked when the
        run starts: the first at or before 0, the last at or after its end).
    B_inertial_T : array_like (n, 3)
        The field at each time, inertial (ECI) axes, T.
    interpolation : {"linear", "hold"}
        ``"linear"`` between samples, or ``"hold"``: each sample holds until
        the next one's time.

    Use it as a mission's ``field=`` or an environment's ``field=`` (the orbit
    then gives position only to the other models).
    """

    name = "history"

    def __init__(self, t_s, B_inertial_T, interpolation: str = "linear"):
        t = finite_array(t_s, "t_s")
        if t.ndim != 1 or t.size < 2:
            raise InputError("t_s", "must be a 1-D sequence of at least two times", f"got shape {t.shape}")
        steps = np.diff(t)
        if np.any(steps <= 0.0):
            k = int(np.argmax(steps <= 0.0))
            raise InputError("t_s", "must be strictly increasing", f"t_s[{k}] = {t[k]!r}, t_s[{k + 1}] = {t[k + 1]!r}")
        self.t_s = t
        self.B_inertial_T = finite_array(B_inertial_T, "B_inertial_T", (t.size, 3))
        self.interpolation = one_of(interpolation, "interpolation", INTERPOLATIONS)
        self.name = f"history ({self.interpolation}, {t.size} samples)"

    def at(self, t_s) -> np.ndarray:
        """The field (T, inertial, ``(n, 3)``) at times ``t_s`` (held beyond the ends)."""
        t = np.atleast_1d(np.asarray(t_s, dtype=float))
        if self.interpolation == "hold":
            k = np.clip(np.searchsorted(self.t_s, t, side="right") - 1, 0, self.t_s.size - 1)
            return self.B_inertial_T[k]
        return np.stack([np.interp(t, self.t_s, self.B_inertial_T[:, j]) for j in range(3)], axis=-1)

    def __call__(self, t_s) -> np.ndarray:
        """As a mission's ``field=``: ``(3,)`` at one time, ``(n, 3)`` at an array of times."""
        b = self.at(t_s)
        return b[0] if np.ndim(t_s) == 0 else b

    def field_eci_T(self, r_eci_m, epoch, t_s) -> np.ndarray:
        return self.at(t_s)

    def knot_times(self, duration_s: float) -> np.ndarray:
        """The times in ``[0, duration_s]`` a linearly interpolated table needs to give the history exactly.

        Raises :class:`~attsim.errors.InputError` (``field``) when the
        history does not cover the run: a field held beyond its last sample
        would be a guess.
        """
        return self.knot_table(duration_s)[0]

    def knot_table(self, duration_s: float) -> tuple[np.ndarray, np.ndarray]:
        """``(knot_times(duration_s), the field there)``: the table a mission with this field alone interpolates.

        The times come in order by construction (the samples are increasing:
        no sort), and held, each knot's sample is known by construction too
        (no search): at a sample's time the sample, one float spacing before
        it the one before.
        """
        if self.t_s[0] > 0.0 or self.t_s[-1] < duration_s:
            raise InputError("field", "a field history must cover the run (from t = 0 to its duration)",
                             f"samples from {self.t_s[0]:g} s to {self.t_s[-1]:g} s, run from 0 to {duration_s:g} s")
        first = int(np.searchsorted(self.t_s, 0.0, side="right"))  # the first sample after 0
        if self.interpolation == "linear":
            inside_end = int(np.searchsorted(self.t_s, duration_s, side="left"))  # before the end: [first, here)
            t = _distinct(np.concatenate([[0.0], self.t_s[first:inside_end], [float(duration_s)]]))
            return t, self.at(t)
        # held: each step up to the end, the previous sample up to one float spacing before the step's time
        steps_end = int(np.searchsorted(self.t_s, duration_s, side="right"))
        steps = self.t_s[first:steps_end]
        t = np.empty(2 * steps.size + 2)
        index = np.empty(2 * steps.size + 2, dtype=np.int64)
        t[0], index[0] = 0.0, first - 1  # the last sample at or before 0
        t[1:-1:2], index[1:-1:2] = np.nextafter(steps, -np.inf), np.arange(first - 1, steps_end - 1)
        t[2:-1:2], index[2:-1:2] = steps, np.arange(first, steps_end)
        t[-1], index[-1] = float(duration_s), steps_end - 1  # the last sample at or before the end (given twice
        keep = _first_of_equal(t)  # when a sample is at the end itself, as a step and as the end)
        return t[keep], self.B_inertial_T[index[keep]]


def _first_of_equal(t: np.ndarray) -> np.ndarray:
    """Where an ordered ``t`` holds a value not equal to the one before (a sample one float spacing after the one
    before it gives a knot twice)."""
    keep = np.ones(t.size, dtype=bool)
    keep[1:] = t[1:] != t[:-1]
    return keep


def _distinct(t: np.ndarray) -> np.ndarray:
    return t[_first_of_equal(t)]
