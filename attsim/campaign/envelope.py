"""Percentile envelopes over time, computed incrementally.

A campaign's envelope of a telemetry quantity is, at each time of a fixed
grid, a few percentiles of that quantity over all runs (e.g. p1/p50/p99 with
min/max). Runs are added one at a time and never kept: at each time point
the values go into a log-bucketed histogram in the manner of DDSketch
(Masson, Rim & Lee, "DDSketch: a fast and fully-mergeable quantile sketch
with relative-error guarantees", VLDB 2019), with the exact minimum and
maximum beside it. Memory depends on the grid and the accuracy, never on the
number of runs; two envelopes over one grid merge exactly (the result is
that of adding every run to one).

Buckets. With ``a`` the relative accuracy and ``g = (1 + a)/(1 - a)``, a
value ``x > 0`` goes to bucket ``i = ceil(log_g x)``, which holds
``(g^(i-1), g^i]``; the bucket stands for ``2 g^i / (g + 1)``, within ``a``
relative of everything in it. Negative values go to a mirrored histogram of
``|x|``, zeros to their own count; NaN and infinities are skipped (the run
has no value there). Each histogram keeps at most ``max_buckets`` buckets
below the largest magnitude at its time point; smaller magnitudes are
counted in the lowest kept bucket.

Accuracy (tested against ``numpy.percentile``). Percentile ``p`` of ``n``
values at a time point is numpy's default (linear) estimate: the order
statistics ``x_lo, x_hi`` at ranks ``floor(h), ceil(h)``, ``h = p (n - 1)/100``,
interpolated at ``h - floor(h)``. The envelope interpolates its estimates of
the same two order statistics, so its value ``v`` obeys

    |v - numpy.percentile(x, p)| <= a max(|x_lo|, |x_hi|) + M g^(2 - max_buckets),

with ``M`` the largest magnitude at that time point; the second term (the
lowest bucket's reach; 3e-4 M with the defaults) matters only for values that
many orders of magnitude below the largest. ``p0`` and ``p100`` are the
exact minimum and maximum, and every estimate lies between them.

Memory: ``n_times (8 max_buckets + 80)`` bytes at most (16 MB for 500
times with the defaults); a quantity whose values span fewer orders of
magnitude uses proportionally less.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from .._core.validate import finite_array, positive_int, real_number
from ..errors import InputError

__all__ = ["Envelope", "save_envelopes", "load_envelopes", "DEFAULT_PERCENTILES"]

DEFAULT_PERCENTILES = (0, 1, 50, 99, 100)
_EMPTY = np.iinfo(np.int64).min  # the top key of a histogram that holds nothing yet
_FIRST_WIDTH = 64  # buckets per time point a histogram starts with; it doubles as the values' span needs
_STATE_KEYS = ("times_s", "percentiles", "relative_accuracy", "max_buckets", "count", "zeros", "min", "max",
               "counts", "top", "low")


class _LogHistogram:
    """Per-time-point histograms of positive magnitudes over log buckets (one row per time point).

    Row ``r`` column ``j`` counts the values of bucket key ``top[r] - j``: column 0 is the row's largest
    magnitude, so a row is a window of ``width`` keys below it; ``low[r]`` is the smallest key held.
    """

    def __init__(self, n_times: int, max_buckets: int):
        self.max_buckets = max_buckets
        self.counts = np.zeros((n_times, min(_FIRST_WIDTH, max_buckets)), dtype=np.uint32)
        self.top = np.full(n_times, _EMPTY, dtype=np.int64)
        self.low = np.full(n_times, _EMPTY, dtype=np.int64)

    def insert(self, rows: np.ndarray, keys: np.ndarray, weights: np.ndarray | None = None) -> None:
        """Count ``weights`` (1 each by default; then ``rows`` must be distinct) at bucket ``keys`` of ``rows``."""
        if rows.size == 0:
            return
        if weights is None:  # one value per row (add): the per-row extremes are the keys themselves
            touched, kmax, kmin = rows, keys, keys
        else:
            n = self.top.size
            kmax = np.full(n, _EMPTY, dtype=np.int64)
            kmin = np.full(n, np.iinfo(np.int64).max, dtype=np.int64)
            np.maximum.at(kmax, rows, keys)
            np.minimum.at(kmin, rows, keys)
            touched = np.flatnonzero(kmax != _EMPTY)
            kmax, kmin = kmax[touched], kmin[touched]
        old_top = self.top[touched]
        filled = old_top != _EMPTY
        new_top = np.where(filled, np.maximum(old_top, kmax), kmax)
        new_low = np.where(filled, np.minimum(self.low[touched], kmin), kmin)
        width = self.counts.shape[1]
        needed = int((new_top - new_low).max()) + 1
        if needed > width and width < self.max_buckets:
            # grow every row (one 2-D array keeps add() vectorised); doubling makes growth rare
            width = min(self.max_buckets, max(needed, 2 * width))
            grown = np.zeros((self.top.size, width), dtype=np.uint32)
            grown[:, : self.counts.shape[1]] = self.counts
            self.counts = grown
        moved = filled & (new_top > old_top)
        if moved.any():
            self._shift(touched[moved], (new_top - old_top)[moved])
        self.top[touched] = new_top
        self.low[touched] = np.maximum(new_low, new_top - width + 1)
        column = np.minimum(self.top[rows] - keys, width - 1)  # below the window: the lowest bucket kept
        if weights is None:
            self.counts[rows, column] += np.uint32(1)
        else:
            np.add.at(self.counts, (rows, column), weights.astype(np.uint32))

    def _shift(self, rows: np.ndarray, shift: np.ndarray) -> None:
        """Move rows' windows up by ``shift`` keys; what falls off the bottom joins the lowest bucket.

        A row at a time, as slices: gathered for all rows at once, through an index array as wide as the window
        (up to 4096 columns), the shift took 0.6 s of a 60-run campaign's client, most of its time."""
        counts = self.counts
        width = counts.shape[1]
        for r, s in zip(rows.tolist(), shift.tolist()):
            row = counts[r]
            spill = int(row[max(width - s, 0):].sum(dtype=np.uint64))  # the keys that fall below the window
            if s < width:
                row[s:] = row[: width - s].copy()
                row[:s] = 0
            else:
                row[:] = 0
            row[-1] += np.uint32(spill)


class Envelope:
    """Percentiles over runs at each time of a fixed grid, memory independent of the number of runs.

    The accuracy, the memory and the method are in the module docstring:
    within ``relative_accuracy`` of ``numpy.percentile`` over all runs' values
    at that time (relative to the order statistics interpolated), exact
    ``p0``/``p100``.

    Parameters
    ----------
    times_s : array of float
        The grid (s), strictly increasing; every run's values are given at it.
    percentiles : sequence of float
        The percentiles ``result()`` reports, each in [0, 100].
    relative_accuracy : float
        ``a`` in (0, 1): each order statistic is found within ``a`` relative.
    max_buckets : int
        Buckets per sign per time point at most (>= 16); with the default and
        ``a = 1e-3`` they reach 3.5 orders of magnitude below the largest value.
    """

    def __init__(self, times_s, percentiles=DEFAULT_PERCENTILES, relative_accuracy: float = 1e-3,
                 max_buckets: int = 4096):
        self.times_s = finite_array(times_s, "times_s")
        if self.times_s.ndim != 1 or self.times_s.size == 0:
            raise InputError("times_s", "must be a non-empty 1-D array", f"got shape {self.times_s.shape}")
        if np.any(np.diff(self.times_s) <= 0.0):
            raise InputError("times_s", "must be strictly increasing")
        self.percentiles = finite_array(percentiles, "percentiles").ravel()
        if self.percentiles.size == 0 or np.any((self.percentiles < 0.0) | (self.percentiles > 100.0)):
            raise InputError("percentiles", "must be one or more numbers in [0, 100]", f"got {percentiles!r}")
        self.relative_accuracy = real_number(relative_accuracy, "relative_accuracy")
        if not 0.0 < self.relative_accuracy < 1.0:
            raise InputError("relative_accuracy", "must be in (0, 1)", f"got {relative_accuracy!r}")
        self.max_buckets = positive_int(max_buckets, "max_buckets", maximum=2**20)
        if self.max_buckets < 16:
            raise InputError("max_buckets", "must be >= 16", f"got {max_buckets!r}")
        self._log_gamma = math.log((1.0 + self.relative_accuracy) / (1.0 - self.relative_accuracy))
        n = self.times_s.size
        self.count = np.zeros(n, dtype=np.int64)
        self.zeros = np.zeros(n, dtype=np.int64)
        self.min = np.full(n, np.inf)
        self.max = np.full(n, -np.inf)
        # rows [0, n) hold the positive values, rows [n, 2n) the magnitudes of the negative ones: one
        # insert per run keeps add() at a few dozen vectorised operations
        self._hist = _LogHistogram(2 * n, self.max_buckets)

    def __len__(self) -> int:
        return self.times_s.size

    def _keys(self, magnitudes: np.ndarray) -> np.ndarray:
        return np.ceil(np.log(magnitudes) / self._log_gamma).astype(np.int64)

    def _values(self, keys: np.ndarray) -> np.ndarray:
        gamma = math.exp(self._log_gamma)
        return 2.0 * np.exp(keys * self._log_gamma) / (gamma + 1.0)

    def add(self, values) -> None:
        """Add one run's values at ``times_s`` (NaN where the run has no data).

        Parameters
        ----------
        values : array of float, shape (len(times_s),)
        """
        values = np.asarray(values, dtype=np.float64)
        if values.shape != self.times_s.shape:
            raise InputError("values", f"must have one value per time ({self.times_s.size})",
                             f"got shape {values.shape}")
        finite = np.isfinite(values)
        self.count += finite
        self.zeros += values == 0.0
        self.min = np.fmin(self.min, np.where(finite, values, np.nan))
        self.max = np.fmax(self.max, np.where(finite, values, np.nan))
        rows = np.flatnonzero(np.concatenate([finite & (values > 0.0), finite & (values < 0.0)]))
        self._hist.insert(rows, self._keys(np.abs(np.concatenate([values, values])[rows])))

    def add_runs(self, values) -> None:
        """Add several runs at once: the same envelope as :meth:`add` of each row, in one vectorised insert.

        Parameters
        ----------
        values : array of float, shape (runs, len(times_s))
        """
        values = np.asarray(values, dtype=np.float64)
        if values.ndim != 2 or values.shape[1:] != self.times_s.shape:
            raise InputError("values", f"must have one row per run and one value per time ({self.times_s.size})",
                             f"got shape {values.shape}")
        if values.shape[0] == 0:
            return
        finite = np.isfinite(values)
        self.count += finite.sum(axis=0)
        self.zeros += (values == 0.0).sum(axis=0)
        self.min = np.fmin(self.min, np.fmin.reduce(np.where(finite, values, np.nan), axis=0))
        self.max = np.fmax(self.max, np.fmax.reduce(np.where(finite, values, np.nan), axis=0))
        signed = np.concatenate([finite & (values > 0.0), finite & (values < 0.0)], axis=1)
        runs, rows = np.nonzero(signed)
        keys = self._keys(np.abs(np.concatenate([values, values], axis=1)[runs, rows]))
        self._hist.insert(rows, keys, np.ones(rows.size, dtype=np.int64))

    def merge(self, other: Envelope) -> None:
        """Add every run of ``other`` (an envelope over the same grid, accuracy and bucket limit)."""
        if not isinstance(other, Envelope):
            raise InputError("other", "must be an Envelope", f"got {type(other).__name__}")
        if other.times_s.shape != self.times_s.shape or np.any(other.times_s != self.times_s):
            raise InputError("other", "must have the same times_s")
        if other.relative_accuracy != self.relative_accuracy or other.max_buckets != self.max_buckets:
            raise InputError("other", "must have the same relative_accuracy and max_buckets",
                             f"got {other.relative_accuracy:g}, {other.max_buckets} for {self.relative_accuracy:g}, "
                             f"{self.max_buckets}")
        self.count += other.count
        self.zeros += other.zeros
        self.min = np.minimum(self.min, other.min)
        self.max = np.maximum(self.max, other.max)
        theirs = other._hist
        rows, columns = np.nonzero(theirs.counts)
        self._hist.insert(rows, theirs.top[rows] - columns, theirs.counts[rows, columns])

    def _order_statistics(self, *rank_sets: np.ndarray) -> list[np.ndarray]:
        """Estimates of the order statistics of rank ``ranks[:, k]`` (0-based) at each time point, for each
        ``ranks`` of ``rank_sets`` (one cumulative count serves them all)."""
        n = self.times_s.size
        counts, top = self._hist.counts, self._hist.top
        width = counts.shape[1]
        # ascending values: negatives from the largest magnitude, zeros, positives from the smallest
        cells = np.concatenate([counts[n:], self.zeros[:, None], counts[:n, ::-1]], axis=1)
        cumulative = np.cumsum(cells, axis=1, dtype=np.int64)
        # the cell of a rank is how many cumulative counts of its row are <= it: one sorted search over all rows,
        # each row lifted above the one before (its counts are at most the row's total)
        lift = np.arange(n, dtype=np.int64) * (int(cumulative[:, -1].max(initial=0)) + 1)
        flat = (cumulative + lift[:, None]).ravel()
        start = np.arange(n, dtype=np.int64) * cells.shape[1]
        estimates = []
        for ranks in rank_sets:
            index = np.searchsorted(flat, ranks + lift[:, None], side="right") - start[:, None]
            index = np.minimum(index, cells.shape[1] - 1)
            with np.errstate(over="ignore", invalid="ignore"):
                neg_value = -self._values(top[n:, None] - index)
                pos_value = self._values(top[:n, None] - (2 * width - index))
            estimate = np.where(index < width, neg_value, np.where(index == width, 0.0, pos_value))
            with np.errstate(invalid="ignore"):
                estimates.append(np.clip(estimate, self.min[:, None], self.max[:, None]))
        return estimates

    def result(self) -> pd.DataFrame:
        """The envelope: index ``t_s``, a column ``p<k>`` per percentile (e.g. ``p1``, ``p50``) and ``runs``.

        ``runs`` counts the runs with a finite value at each time; where it is
        zero the percentiles are NaN.
        """
        n = self.count
        h = self.percentiles[None, :] / 100.0 * np.maximum(n - 1, 0)[:, None]
        lo, hi = self._order_statistics(np.floor(h).astype(np.int64), np.ceil(h).astype(np.int64))
        with np.errstate(invalid="ignore"):  # time points without a value: min = +inf, max = -inf (NaN below)
            values = lo + (h - np.floor(h)) * (hi - lo)
        values[:, self.percentiles == 0.0] = self.min[:, None]
        values[:, self.percentiles == 100.0] = self.max[:, None]
        values[n == 0, :] = np.nan
        names = [f"p{p:g}" for p in self.percentiles]
        frame = pd.DataFrame(values, index=pd.Index(self.times_s, name="t_s"), columns=names)
        frame["runs"] = n
        return frame

    def state(self) -> dict[str, np.ndarray]:
        """Everything the envelope holds, as named arrays (saved in the campaign's ``envelopes.npz``)."""
        return {
            "times_s": self.times_s.copy(), "percentiles": self.percentiles.copy(),
            "relative_accuracy": np.array(self.relative_accuracy), "max_buckets": np.array(self.max_buckets),
            "count": self.count.copy(), "zeros": self.zeros.copy(), "min": self.min.copy(), "max": self.max.copy(),
            "counts": self._hist.counts.copy(), "top": self._hist.top.copy(), "low": self._hist.low.copy(),
        }

    @classmethod
    def from_state(cls, state: Mapping[str, np.ndarray]) -> Envelope:
        """The envelope :meth:`state` described."""
        missing = [key for key in _STATE_KEYS if key not in state]
        if missing:
            raise InputError("state", "must hold every array of Envelope.state()", f"missing {', '.join(missing)}")
        envelope = cls(state["times_s"], state["percentiles"], float(state["relative_accuracy"]),
                       int(state["max_buckets"]))
        n = envelope.times_s.size
        for key in ("count", "zeros", "min", "max"):
            array = np.asarray(state[key])
            if array.shape != (n,):
                raise InputError("state", f"must have one {key} per time", f"got shape {array.shape}")
            setattr(envelope, key, array.astype(np.int64 if key in ("count", "zeros") else np.float64))
        counts = np.asarray(state["counts"])
        if counts.ndim != 2 or counts.shape[0] != 2 * n or not 1 <= counts.shape[1] <= envelope.max_buckets:
            raise InputError("state", f"counts must have shape ({2 * n}, <= max_buckets)", f"got {counts.shape}")
        for key in ("top", "low"):
            if np.shape(state[key]) != (2 * n,):
                raise InputError("state", f"{key} must have shape ({2 * n},)", f"got {np.shape(state[key])}")
        envelope._hist.counts = counts.astype(np.uint32)
        envelope._hist.top = np.asarray(state["top"]).astype(np.int64)
        envelope._hist.low = np.asarray(state["low"]).astype(np.int64)
        return envelope

    @property
    def nbytes(self) -> int:
        """Bytes held by the envelope's arrays."""
        return sum(a.nbytes for a in self.state().values())


def save_envelopes(path, envelopes: Mapping[str, Envelope]) -> Path:
    """Write envelopes to one ``.npz``: quantity ``q``'s arrays under ``"<q>/<array name>"``."""
    arrays = {f"{name}/{key}": value for name, envelope in envelopes.items() for key, value in envelope.state().items()}
    path = Path(path)
    with open(path, "wb") as handle:  # a file object: numpy would append ".npz" to a name without it
        np.savez_compressed(handle, **arrays)
    return path


def load_envelopes(path) -> dict[str, Envelope]:
    """The envelopes :func:`save_envelopes` (or a campaign runner, with the same keys) wrote, by quantity."""
    grouped: dict[str, dict[str, np.ndarray]] = {}
    with np.load(Path(path), allow_pickle=False) as data:
        for key in data.files:
            name, _, array = key.rpartition("/")
            if name:  # keys without a quantity are the campaign runner's (the runs the state covers)
                grouped.setdefault(name, {})[array] = data[key]
    return {name: Envelope.from_state(state) for name, state in grouped.items()}
