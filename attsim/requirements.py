"""Declared criteria (layer 8): a quantity, the window where it applies, a statistic and a bound.

A mission script's ``criteria(telemetry)`` may return, beside its
``(label, value, ok, bound)`` tuples, criteria that attsim computes::

    from attsim import Requirement, Window

    def criteria(tel):
        return [
            Requirement("pointing error during passes [deg]", "att_err_deg", "max", "<", 0.1,
                        window=Window.passes(skip_s=120)).evaluate(tel),
            ("passes [-]", n, n >= 1, ">= 1"),                          # an old tuple, judged as before
        ]

:meth:`Requirement.evaluate` gives the judged :class:`attsim.criteria.Criterion`
(a ``(label, value, ok, bound)`` tuple as before) with its ``declared``
record: the quantity, statistic, bound, window (in words and as this run's
intervals), where the value was reached and the margin to the bound
(positive inside it, in the quantity's unit). ``attsim run`` keeps that record
in ``meta.json``, so the report draws the requirement only over its window,
shades the window and marks the worst point, and a campaign orders its worst
runs by margin.

Statistics: ``max``, ``min``, ``absmax`` (the largest ``|value|``: a wheel
speed or a torque of either sign), ``mean``, ``rms``, ``final`` (the last row in
the window), and ``settle``: the time (s, from the window's start) after
which the quantity stays below ``settle_below`` (or above ``settle_above``)
to the window's end (``inf`` when it never does). A NaN inside the window is
not skipped: the criterion is not evaluated, and says where.
"""

from __future__ import annotations

import math
import re

import numpy as np

from ._core.validate import finite_number, one_of
from .analysis import body_rate_deg_s, estimation_error_deg
from .criteria import Criterion
from .telemetry.schema import ESTIMATION_ERROR
from .errors import InputError
from .testing import NotEvaluated
from .windows import Window

__all__ = ["Requirement", "STATISTICS", "OPERATORS", "DERIVED", "MAX_INTERVALS"]

STATISTICS = ("max", "min", "absmax", "mean", "rms", "final", "settle")
OPERATORS = ("<", "<=", ">", ">=")
# quantities attsim derives from the telemetry (attsim.analysis computes them; the campaign's default envelopes use the
# same names); "<estimator>" stands for an estimator's name
DERIVED = {"rate_deg_s": "|ω| in deg/s",
           "<estimator>_err_deg": "the angle between the estimator's attitude and the true attitude, deg "
                                  "(NaN before its first estimate)"}

MAX_INTERVALS = 500  # a window's intervals kept with the run at most (the report shades them)
_UNIT = re.compile(r"\[([^\]]+)\]\s*$")


def _quantity_unit(label: str, quantity) -> str:
    found = _UNIT.search(label)
    if found:
        return found.group(1).strip()
    if isinstance(quantity, str):
        for suffix, unit in (("_deg_s", "deg/s"), ("_rad_s", "rad/s"), ("_deg", "deg"), ("_rad", "rad")):
            if quantity.endswith(suffix):
                return unit
    return ""


class Requirement:
    """A criterion declared by what it constrains (see the module docstring).

    Parameters
    ----------
    label : str
        What ``attsim run`` prints and the report shows; the unit in brackets at its end (``[deg]``).
    quantity : str
        A telemetry column (``"att_err_deg"``, ``"rw0_speed"``) or one attsim derives (:data:`DERIVED`:
        ``"rate_deg_s"``, ``|ω|`` in deg/s; ``"mekf_err_deg"``, the angle between the estimator ``mekf``'s
        attitude and the truth, deg). The report draws the requirement on the plot of that quantity.
    statistic : str
        One of ``max``, ``min``, ``absmax``, ``mean``, ``rms``, ``final``, ``settle``.
    op, limit : str, float
        The bound: the value must be ``op limit`` (``"<"``, ``"<="``, ``">"``, ``">="``).
    window : Window, optional
        Where the criterion applies (default: the whole run).
    values : array, optional
        The quantity per telemetry row when it is computed outside the telemetry (against an independent
        reference, say); ``quantity`` then names the telemetry quantity it is drawn against (or None: not drawn).
    settle_below, settle_above : float, optional
        The threshold of the ``settle`` statistic (exactly one of them).
    """

    __slots__ = ("label", "quantity", "statistic", "op", "limit", "window", "values", "threshold", "unit")

    def __init__(self, label, quantity, statistic, op, limit, window=None, values=None, settle_below=None,
                 settle_above=None):
        if not isinstance(label, str) or not label.strip():
            raise InputError("label", "must be a non-empty string", f"got {label!r}")
        if quantity is not None and (not isinstance(quantity, str) or not quantity):
            raise InputError("quantity", "must be a telemetry column's name (or None with values=)",
                             f"got {quantity!r}")
        if quantity is None and values is None:
            raise InputError("quantity", "must name a telemetry column unless values= gives the quantity")
        self.label, self.quantity = label, quantity
        self.statistic = one_of(statistic, "statistic", STATISTICS)
        self.op = one_of(op, "op", OPERATORS)
        self.limit = finite_number(limit, "limit")
        if window is not None and not isinstance(window, Window):
            raise InputError("window", "must be an attsim.Window (Window.after(120), Window.orbit(4), ...)",
                             f"got {type(window).__name__}")
        self.window = window if window is not None else Window.whole()
        self.values = values
        thresholds = [(k, v) for k, v in (("below", settle_below), ("above", settle_above)) if v is not None]
        if (self.statistic == "settle") != bool(thresholds) or len(thresholds) > 1:
            raise InputError("settle_below", "the settle statistic needs exactly one of settle_below, settle_above "
                             "(and the others none)", f"statistic {statistic!r}, thresholds {dict(thresholds)}")
        self.threshold = (thresholds[0][0], finite_number(thresholds[0][1], f"settle_{thresholds[0][0]}")) \
            if thresholds else None
        self.unit = "s" if self.statistic == "settle" else _quantity_unit(label, quantity)

    @property
    def bound(self) -> str:
        """The bound as text, as the criteria table shows it: ``"< 0.1"``."""
        return f"{self.op} {self.limit:g}"

    def __repr__(self) -> str:
        return f"Requirement({self.label!r}: {self.statistic} of {self.quantity} {self.bound}, {self.window!r})"

    def evaluate(self, telemetry) -> Criterion:
        """The judged criterion on one run, with its ``declared`` record (see the module docstring)."""
        window = self.window.resolve(telemetry)
        record = {"quantity": self.quantity, "statistic": self.statistic, "op": self.op, "limit": self.limit,
                  "unit": self.unit, "window": self.window.describe(), "window_kind": self.window.kind,
                  "intervals": [[a, b] for a, b in window.intervals[:MAX_INTERVALS]], "at_s": None,
                  "margin": None}
        if len(window.intervals) > MAX_INTERVALS:
            record["intervals_left_out"] = len(window.intervals) - MAX_INTERVALS
        if self.threshold is not None:
            record["settle_" + self.threshold[0]] = self.threshold[1]
        if window.missing is not None:
            return Criterion(self.label, window.missing, False, self.bound, record)
        values = self._values(telemetry)
        if isinstance(values, NotEvaluated):
            return Criterion(self.label, values, False, self.bound, record)
        df = telemetry.df if hasattr(telemetry, "df") else telemetry
        t = np.asarray(df.index, dtype=float)[window.rows]
        inside = values[window.rows]
        bad = np.flatnonzero(~np.isfinite(inside))
        if bad.size and self.statistic != "settle":
            value = NotEvaluated(f"{self.quantity or 'the quantity'} is NaN at t = {t[bad[0]]:.6g} s inside the "
                                 f"window ({bad.size} of {inside.size} rows)")
            return Criterion(self.label, value, False, self.bound, record)
        value, at_s = self._statistic(t, inside, window.intervals)
        record["at_s"] = at_s
        if self.statistic == "absmax":  # where the report marks it: the signed sample
            record["at_value"] = float(inside[int(np.argmax(np.abs(inside)))])
        margin = self.limit - value if self.op in ("<", "<=") else value - self.limit
        record["margin"] = float(margin) if math.isfinite(margin) else None
        ok = {"<": value < self.limit, "<=": value <= self.limit, ">": value > self.limit,
              ">=": value >= self.limit}[self.op]
        return Criterion(self.label, float(value), bool(ok), self.bound, record)

    def _values(self, telemetry):
        df = telemetry.df if hasattr(telemetry, "df") else telemetry
        if self.values is not None:
            values = np.asarray(self.values, dtype=float)
            if values.shape != (len(df),):
                raise InputError("values", f"must have one value per telemetry row ({len(df)})",
                                 f"got shape {values.shape}")
            return values
        if self.quantity in df:
            return df[self.quantity].to_numpy(dtype=float)
        if self.quantity == "rate_deg_s":
            return body_rate_deg_s(df)
        estimator = self.quantity[: -len(ESTIMATION_ERROR)] if self.quantity.endswith(ESTIMATION_ERROR) else ""
        if estimator and f"{estimator}_qw" in df:
            return estimation_error_deg(df, estimator)
        return NotEvaluated(f"the telemetry has no column {self.quantity!r} (nor is it one attsim derives: "
                            f"{', '.join(DERIVED)})")

    def _statistic(self, t, values, intervals) -> tuple[float, float | None]:
        """The statistic over the window's rows and the time it was reached (None for a mean or an RMS)."""
        if self.statistic == "max":
            k = int(np.argmax(values))
            return float(values[k]), float(t[k])
        if self.statistic == "min":
            k = int(np.argmin(values))
            return float(values[k]), float(t[k])
        if self.statistic == "absmax":
            k = int(np.argmax(np.abs(values)))
            return float(abs(values[k])), float(t[k])
        if self.statistic == "mean":
            return float(np.mean(values)), None
        if self.statistic == "rms":
            return float(np.sqrt(np.mean(values * values))), None
        if self.statistic == "final":
            return float(values[-1]), float(t[-1])
        side, threshold = self.threshold
        with np.errstate(invalid="ignore"):  # a NaN row is not settled
            settled = values < threshold if side == "below" else values > threshold
        outside = np.flatnonzero(~settled)
        start = float(intervals[0][0])
        if outside.size == 0:
            return 0.0, float(t[0])
        if outside[-1] == values.size - 1:
            return math.inf, None  # never stays there to the window's end
        at = float(t[outside[-1] + 1])
        return at - start, at
