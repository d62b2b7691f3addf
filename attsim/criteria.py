"""A mission's success criteria: judged as ``attsim run`` prints them, and kept with the run.

``criteria(telemetry)`` of a mission script returns
``[(label, value, ok, bound), ...]``, or declared criteria
(:class:`attsim.Requirement`, evaluated on the run: :mod:`attsim.requirements`).
:func:`judge` makes each row a
:class:`Criterion` whose PASS needs ``ok`` a True bool and a value that is
not NaN, and refuses two criteria of one label (:class:`SharedLabelError`:
a campaign records and counts each criterion under its label);
:func:`passed` is the run's verdict; :func:`record_criteria` writes the judged list into the run's
``meta.json`` (``"criteria"``), so ``attsim report DIR`` later draws the
same criteria table and requirement lines as the report written with the
run. A declared criterion is kept as ``[label, value, ok, bound, declared]``: its window, where its value
was reached and its margin, which the report draws.
"""

from __future__ import annotations

import json
import numbers
import warnings
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd

from .errors import InputError, one_line
from .telemetry.recorder import META_FILE, _write_json_atomic
from .testing import NotEvaluated

__all__ = ["Criterion", "SharedLabelError", "judge", "passed", "record_criteria", "shown", "one_line"]


class SharedLabelError(InputError):
    """Two criteria a mission script returned share a label: the script breaks the criteria's contract.

    Refused rather than judged: a campaign keeps each criterion's value and
    verdict under its label, so a second row of one label would silently
    replace the first (a failed row hidden by a passing one).
    """


class _Row(NamedTuple):
    label: str
    value: object  # the measured number (or text), or a NotEvaluated saying why there is none
    ok: bool
    bound: str


class Criterion(_Row):
    """One judged success criterion, as printed and as the report shows it: ``(label, value, ok, bound)``.

    Attributes
    ----------
    label : str
        What is judged, with its unit in brackets (``"pointing error [deg]"``).
    value : float or object
        What was measured (a :class:`~attsim.testing.NotEvaluated` saying why
        when it could not be).
    ok : bool
        Whether the criterion is met (PASS).
    bound : str
        The bound as shown (``"< 0.5"``).
    declared : dict or None
        The record of a declared criterion (:mod:`attsim.requirements`:
        quantity, statistic, bound, window and its intervals, where the value
        was reached, margin; JSON values), None for a tuple's.
    """

    declared = None

    def __new__(cls, label, value, ok, bound, declared=None):
        self = super().__new__(cls, label, value, ok, bound)
        if declared is not None:
            self.declared = declared
        return self

    def __reduce__(self):  # a tuple pickles its four fields only
        return (Criterion, (*self, self.declared))


def shown(value) -> str:
    """A criterion's value as printed: numbers to 4 significant digits, anything else on one line."""
    if isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_)):
        try:
            return f"{value:.4g}"
        except (TypeError, ValueError, OverflowError):  # a Real without the float format (a Fraction)
            try:
                return f"{float(value):.4g}"
            except (TypeError, ValueError, OverflowError):  # beyond a float (an int of 400 digits)
                pass
    return one_line(value)


def _is_nan(value) -> bool:
    """Whether the value, or anything in it, is NaN or pandas' missing value (``pd.NA``, ``pd.NaT``)."""
    if isinstance(value, (str, bytes, dict, NotEvaluated)):  # text, or an object shown as its text: nothing measured
        return False
    try:
        with warnings.catch_warnings():  # a complex value is judged by its real part's NaN, silently
            warnings.simplefilter("ignore")
            if np.isnan(np.asarray(value, dtype=float)).any():
                return True
    except Exception:  # noqa: BLE001 - not numbers (names, an object, an int beyond a float): nothing to be NaN
        pass
    try:  # pd.NA becomes no float and NaT a huge negative one, yet neither measured anything
        return bool(np.asarray(pd.isna(value)).any())
    except Exception:  # noqa: BLE001 - an object pandas cannot look into: nothing to be missing
        return False


def judge(results, telemetry=None) -> list[Criterion]:
    """The criteria a mission script returned, each judged: PASS needs ``ok`` a True bool and a value that is not NaN.

    A :class:`~attsim.testing.NotEvaluated` value, a NaN value (anywhere in
    an array), an ``ok`` that is not a bool and a row that is not
    ``(label, value, ok, bound)`` are each a FAIL whose value says why. A
    declared criterion not yet evaluated (an :class:`attsim.Requirement`) is
    evaluated on ``telemetry`` (one run's); without it, it fails saying so.

    Parameters
    ----------
    results : list
        What a mission script's ``criteria(telemetry)`` returned:
        ``(label, value, ok, bound)`` tuples and declared criteria
        (:class:`attsim.Requirement`).
    telemetry : Telemetry, optional
        The run's telemetry, on which declared criteria are evaluated.

    Returns
    -------
    list of Criterion
        One per row, in order.

    Raises
    ------
    SharedLabelError
        Two rows have the same label (after folding whitespace, as shown),
        naming it and the rows' positions.
    """
    if isinstance(results, (str, bytes)) or not hasattr(results, "__iter__"):
        returned = NotEvaluated(f"criteria must return a list of (label, value, ok, bound), got {one_line(results)}")
        return [Criterion("criteria(telemetry)", returned, False, "")]
    judged = []
    for row in results:
        if not isinstance(row, tuple) and callable(getattr(row, "evaluate", None)):  # a declared criterion
            row = _evaluated(row, telemetry)
        declared = getattr(row, "declared", None)
        try:
            label, value, ok, bound = row
        except (TypeError, ValueError):
            malformed = NotEvaluated("a criterion must be (label, value, ok, bound)")
            judged.append(Criterion(one_line(row), malformed, False, ""))
            continue
        label, bound = one_line(label), one_line(bound)
        if isinstance(value, NotEvaluated):
            judged.append(Criterion(label, value, False, bound, declared))
        elif _is_nan(value):
            within = "" if np.ndim(value) == 0 else f" in {one_line(value)}"
            judged.append(Criterion(label, NotEvaluated(f"the value is NaN{within}"), False, bound, declared))
        elif not isinstance(ok, (bool, np.bool_)):
            why = f"its verdict must be a bool, got {type(ok).__name__} {one_line(ok)}"
            judged.append(Criterion(label, NotEvaluated(why), False, bound, declared))
        else:
            judged.append(Criterion(label, _plain(value), bool(ok), bound, declared))
    _refuse_shared_labels(judged)
    return judged


def _evaluated(declared, telemetry):
    """A declared criterion evaluated on the run, or a FAIL saying why it could not be."""
    label = one_line(getattr(declared, "label", declared))
    bound = one_line(getattr(declared, "bound", ""))
    if telemetry is None or isinstance(telemetry, (list, tuple)):
        why = ("a declared criterion of a mission of several runs must be evaluated on one of them in criteria(): "
               "requirement.evaluate(run)") if telemetry is not None else "no telemetry to evaluate it on"
        return Criterion(label, NotEvaluated(why), False, bound)
    try:
        return declared.evaluate(telemetry)
    except Exception as exc:  # noqa: BLE001 - its quantity or window does not fit this run: that criterion fails
        return Criterion(label, NotEvaluated(f"it raised {type(exc).__name__}: {one_line(exc)}"), False, bound)


def passed(judged) -> bool:
    """The verdict of a run on its judged criteria: every one passed (``attsim run``'s exit code, a campaign record's
    status)."""
    return all(criterion.ok for criterion in judged)


def _refuse_shared_labels(judged) -> None:
    first: dict[str, int] = {}
    for number, criterion in enumerate(judged, start=1):
        earlier = first.setdefault(criterion.label, number)
        if earlier != number:
            raise SharedLabelError("criteria", "each criterion must have a label of its own (a campaign records and "
                                   "counts each criterion under its label)",
                                   f"{criterion.label!r} labels criteria {earlier} and {number}")


def _plain(value):
    """A number, a bool or an array of numbers as it is; any other value (a dict, an object) as its one-line text,
    so that printing it, the report's table and meta.json each show the same text and none calls the object again."""
    if isinstance(value, (int, float, complex, np.number, np.bool_, str)) or (
            isinstance(value, np.ndarray) and value.dtype.kind in "biufc"):
        return value
    return one_line(value)


def _stored_value(value):
    """A value as JSON keeps it: a number, text (a NotEvaluated as its sentence), or a list of numbers."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        try:
            return float(value)
        except (TypeError, ValueError, OverflowError):  # a Real that no float holds: kept as its text
            return one_line(value)
    if isinstance(value, np.ndarray) and value.dtype.kind in "fiu":
        return value.tolist()
    return one_line(value)


def record_criteria(run_dir, criteria, shared=()) -> None:
    """Keep the judged ``criteria`` in the run's ``meta.json`` (``[[label, value, ok, bound(, declared)], ...]``).

    ``shared``: the rows of a mission of several runs that name none of them
    (``"criteria_shared"``, the same in each of its runs), which a comparison
    of those runs shows.

    Written atomically (a temporary file renamed over it): a kill leaves the
    old or the new file, never half of one. A directory without a
    ``meta.json`` (an in-memory run) is left alone.
    """
    path = Path(run_dir) / META_FILE
    if not path.is_file():
        return
    meta = json.loads(path.read_text(encoding="utf-8"))
    meta["criteria"] = _stored_rows(criteria)
    if shared:
        meta["criteria_shared"] = _stored_rows(shared)
    _write_json_atomic(path, meta)


def _stored_rows(criteria) -> list:
    rows = []
    for c in criteria:
        row = [c.label, _stored_value(c.value), bool(c.ok), c.bound]
        if getattr(c, "declared", None) is not None:
            row.append(c.declared)
        rows.append(row)
    return rows
