"""Campaign statistics: pass rates with confidence intervals,
percentiles of numeric criteria, and the campaign-level requirement.

A campaign of ``n`` runs in which ``x`` passed estimates the pass
probability ``p`` by ``x / n``; the interval says how far ``p`` may be from
it. Two intervals are offered:

* **Clopper-Pearson** (exact; Clopper & Pearson, Biometrika 26, 1934): the
  ``p`` not rejected by either one-sided binomial test at ``(1 - c)/2``,

      low = B(a/2; x, n - x + 1),   high = B(1 - a/2; x + 1, n - x),   a = 1 - c,

  with ``B(q; a, b)`` the Beta quantile (``low = 0`` when ``x = 0``,
  ``high = 1`` when ``x = n``). Never covers less than ``c``: the default.
* **Wilson** (score interval; Wilson, JASA 22, 1927), with ``z`` the normal
  quantile at ``1 - a/2`` and ``p^ = x/n``:

      (p^ + z^2/2n -+ z sqrt(p^(1 - p^)/n + z^2/4n^2)) / (1 + z^2/n).

A requirement "at least ``r`` of runs pass with confidence ``c``" is met
when the one-sided Clopper-Pearson lower bound ``B(1 - c; x, n - x + 1)`` is
at least ``r`` — equivalently, when a true pass rate of ``r`` would make
``x`` or more passes in ``n`` runs no likelier than ``1 - c``. With no
failure this needs ``n >= ln(1 - c) / ln(r)`` runs: 299 for 99 % at 95 %
(:func:`runs_needed`); :func:`passes_needed` is the fewest passing runs of
``n`` that meet it (996 of 1000 for 99 % at 95 %), both found with
:func:`requirement_met` itself, so what a campaign announces is what it judges.

Records follow the campaign's contract: columns ``status`` ("OK", "FAIL",
"ERROR"), ``v:<label>`` (float, NaN when not evaluated) and ``ok:<label>``
(bool) per criterion.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import pandas as pd

from .._core.validate import real_number
from ..errors import InputError

__all__ = ["Rate", "Requirement", "pass_rate", "requirement_met", "requirement", "lower_bound", "passes_needed",
           "runs_needed", "needs", "percentiles", "criterion_summary", "criterion_labels", "spearman_rho", "METHODS",
           "PERCENTILES"]

METHODS = ("clopper-pearson", "wilson")
PERCENTILES = (1, 5, 50, 95, 99)


class Rate(NamedTuple):
    """A pass rate and its two-sided confidence interval."""

    passed: int
    runs: int
    rate: float
    low: float
    high: float
    confidence: float
    method: str


class Requirement(NamedTuple):
    """The campaign-level decision: did at least ``required_rate`` of runs pass, with ``confidence``?"""

    passed: int
    runs: int
    required_rate: float
    confidence: float
    lower_bound: float  # the one-sided Clopper-Pearson lower bound of the pass rate at `confidence`
    met: bool


def _counts(passed, runs) -> tuple[int, int]:
    for value, field in ((runs, "runs"), (passed, "passed")):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise InputError(field, "must be an integer", f"got {value!r}")
    if runs < 1:
        raise InputError("runs", "must be >= 1", f"got {runs}")
    if not 0 <= passed <= runs:
        raise InputError("passed", "must be in [0, runs]", f"got {passed} of {runs}")
    return int(passed), int(runs)


def _probability(value, field: str, closed_high: bool = False) -> float:
    number = real_number(value, field)
    if not (0.0 < number < 1.0 or closed_high and number == 1.0):
        raise InputError(field, f"must be in (0, 1{']' if closed_high else ')'}", f"got {value!r}")
    return number


def lower_bound(passed: int, runs: int, confidence: float = 0.95) -> float:
    """One-sided Clopper-Pearson lower bound of the pass probability: ``B(1 - c; x, n - x + 1)``."""
    from scipy.special import betaincinv

    passed, runs = _counts(passed, runs)
    confidence = _probability(confidence, "confidence")
    return 0.0 if passed == 0 else float(betaincinv(passed, runs - passed + 1, 1.0 - confidence))


def pass_rate(passed: int, runs: int, confidence: float = 0.95, method: str = "clopper-pearson") -> Rate:
    """The pass rate ``passed / runs`` and its two-sided interval at ``confidence``.

    Parameters
    ----------
    passed, runs : int
        Runs that passed, and runs in all (``0 <= passed <= runs``, ``runs >= 1``).
    confidence : float
        Coverage of the interval, in (0, 1).
    method : {"clopper-pearson", "wilson"}
        The interval (module docstring for both formulas).

    Returns
    -------
    Rate
    """
    from scipy.special import betaincinv, ndtri

    passed, runs = _counts(passed, runs)
    confidence = _probability(confidence, "confidence")
    alpha = 1.0 - confidence
    if method == "clopper-pearson":
        low = 0.0 if passed == 0 else float(betaincinv(passed, runs - passed + 1, alpha / 2.0))
        high = 1.0 if passed == runs else float(betaincinv(passed + 1, runs - passed, 1.0 - alpha / 2.0))
    elif method == "wilson":
        z = float(ndtri(1.0 - alpha / 2.0))
        p = passed / runs
        centre = p + z * z / (2 * runs)
        half = z * math.sqrt(p * (1.0 - p) / runs + z * z / (4 * runs * runs))
        scale = 1.0 + z * z / runs
        low, high = max(0.0, (centre - half) / scale), min(1.0, (centre + half) / scale)
    else:
        raise InputError("method", f"must be one of {', '.join(METHODS)}", f"got {method!r}")
    return Rate(passed, runs, passed / runs, low, high, confidence, method)


def requirement_met(passed: int, runs: int, required_rate: float = 0.99, confidence: float = 0.95) -> bool:
    """Whether at least ``required_rate`` of runs pass with ``confidence``.

    True when the one-sided Clopper-Pearson lower bound at ``confidence`` is
    at least ``required_rate`` (e.g. 299 passes of 299 runs meet 99 % at 95 %;
    298 of 299 do not).
    """
    required_rate = _probability(required_rate, "required_rate", closed_high=True)
    return lower_bound(passed, runs, confidence) >= required_rate


def passes_needed(runs: int, required_rate: float = 0.99, confidence: float = 0.95) -> int | None:
    """The fewest passing runs of ``runs`` that meet the requirement (:func:`requirement_met`); None when not even
    ``runs`` of ``runs`` do (too few runs: see :func:`runs_needed`).

    The lower bound grows with the passes, so the first count that meets it is
    found by bisection (at most ~30 Beta quantiles, for any ``runs``).
    """
    _, runs = _counts(0, runs)
    if not requirement_met(runs, runs, required_rate, confidence):
        return None
    low, high = 0, runs  # the count that meets it lies in (low, high]: 0 passes never meet a rate > 0
    while high - low > 1:
        middle = (low + high) // 2
        if requirement_met(middle, runs, required_rate, confidence):
            high = middle
        else:
            low = middle
    return high


def runs_needed(required_rate: float = 0.99, confidence: float = 0.95) -> int | None:
    """The fewest runs that can meet the requirement, all of them passing (``ceil(ln(1 - c) / ln(r))``, checked
    with :func:`requirement_met` around it); None for a required rate of 1, which no campaign can show."""
    required_rate = _probability(required_rate, "required_rate", closed_high=True)
    confidence = _probability(confidence, "confidence")
    if required_rate == 1.0:
        return None
    runs = max(1, math.ceil(math.log(1.0 - confidence) / math.log(required_rate)))
    while runs > 1 and requirement_met(runs - 1, runs - 1, required_rate, confidence):  # round-off at the boundary
        runs -= 1
    while not requirement_met(runs, runs, required_rate, confidence):
        runs += 1
    return runs


def needs(runs: int, required_rate: float = 0.99, confidence: float = 0.95) -> str:
    """What the requirement needs of ``runs`` runs, in words (the campaign says it before and after its runs, and
    warns when it cannot be met): "996 of 1000 runs must pass (at most 4 may fail)", or why no count can."""
    passes = passes_needed(runs, required_rate, confidence)
    if passes is not None:
        return f"{passes} of {runs} runs must pass (at most {runs - passes} may fail)"
    fewest = runs_needed(required_rate, confidence)
    least = f"it needs at least {fewest} runs" if fewest is not None else "no number of runs can show a rate of 1"
    return f"cannot be met by {runs} runs, even with none failing: {least}"


def requirement(records: pd.DataFrame, required_rate: float = 0.99, confidence: float = 0.95) -> Requirement:
    """The campaign-level decision on its records: a run passes when its status is "OK" (every criterion passed)."""
    runs = len(records)
    passed = int((records["status"] == "OK").sum()) if runs else 0
    if runs == 0:
        return Requirement(0, 0, _probability(required_rate, "required_rate", True), confidence, 0.0, False)
    bound = lower_bound(passed, runs, confidence)
    return Requirement(passed, runs, float(required_rate), float(confidence), bound,
                       requirement_met(passed, runs, required_rate, confidence))


def percentiles(values, ps=PERCENTILES) -> dict[str, float]:
    """Percentiles ``p<k>`` (numpy's linear interpolation between order statistics), ``min`` and ``max`` of the
    finite values; NaN for each when there is none."""
    array = np.asarray(values, dtype=np.float64).ravel()
    array = array[np.isfinite(array)]
    keys = [f"p{p:g}" for p in ps] + ["min", "max"]
    if array.size == 0:
        return dict.fromkeys(keys, math.nan)
    out = dict(zip(keys[:-2], (float(v) for v in np.percentile(array, ps))))
    out["min"], out["max"] = float(array.min()), float(array.max())
    return out


def criterion_labels(records: pd.DataFrame) -> list[str]:
    """The criteria's labels, in the records' column order (from the ``ok:<label>`` columns)."""
    return [c[3:] for c in records.columns if isinstance(c, str) and c.startswith("ok:")]


def criterion_summary(records: pd.DataFrame, confidence: float = 0.95, method: str = "clopper-pearson") -> pd.DataFrame:
    """One row per criterion: its pass rate and interval and, for numeric values, their percentiles.

    An ERROR run counts as a failure of every criterion (its ``ok:`` may say
    otherwise if it was written before the error). Percentiles are over the
    finite values (NaN when a criterion has none).

    Returns
    -------
    DataFrame
        Indexed by ``label``; columns ``passed``, ``runs``, ``rate``, ``low``,
        ``high``, ``p1``, ``p5``, ``p50``, ``p95``, ``p99``, ``min``, ``max``.
    """
    labels = criterion_labels(records)
    columns = ["passed", "runs", "rate", "low", "high"] + [f"p{p}" for p in PERCENTILES] + ["min", "max"]
    rows = []
    runs = len(records)
    errored = (records["status"] == "ERROR").to_numpy() if runs else np.zeros(0, dtype=bool)
    for label in labels:
        ok = records[f"ok:{label}"].fillna(False).to_numpy(dtype=bool) & ~errored
        row = {}
        if runs:
            rate = pass_rate(int(ok.sum()), runs, confidence, method)
            row.update(passed=rate.passed, runs=runs, rate=rate.rate, low=rate.low, high=rate.high)
        else:
            row.update(passed=0, runs=0, rate=math.nan, low=math.nan, high=math.nan)
        value = records.get(f"v:{label}")
        numeric = value is not None and pd.api.types.is_numeric_dtype(value) and not pd.api.types.is_bool_dtype(value)
        row.update(percentiles(value.to_numpy(dtype=np.float64) if numeric else []))
        rows.append(row)
    frame = pd.DataFrame(rows, columns=columns, index=pd.Index(labels, name="label"))
    return frame.astype({"passed": "int64", "runs": "int64"})


def _average_ranks(x: np.ndarray) -> np.ndarray:
    """The ranks 1..n of ``x``, tied values sharing the mean of the ranks they span."""
    order = np.argsort(x, kind="mergesort")
    ordered = x[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])  # where each run of equal values starts
    counts = np.diff(np.r_[starts, x.size])
    ranks = np.empty(x.size)
    ranks[order] = np.repeat(starts + (counts + 1) / 2.0, counts)
    return ranks


def spearman_rho(x, y) -> float:
    """Spearman's rank correlation of ``x`` and ``y`` (finite, same length, at least two distinct values each): the
    Pearson correlation of their average ranks (Spearman 1904; ties as in scipy.stats.spearmanr), without importing
    scipy.stats, which costs a campaign's report a second and a half."""
    rx, ry = _average_ranks(np.asarray(x, dtype=float)), _average_ranks(np.asarray(y, dtype=float))
    dx, dy = rx - rx.mean(), ry - ry.mean()
    return float(np.dot(dx, dy) / math.sqrt(np.dot(dx, dx) * np.dot(dy, dy)))
