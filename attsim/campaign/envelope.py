"""SCAFFOLD (feat/campaign only; campaign-stats provides the real module): percentile envelopes (exact, in memory)."""

from __future__ import annotations

import numpy as np
import pandas as pd


class Envelope:
    def __init__(self, times_s: np.ndarray, percentiles=(0, 1, 50, 99, 100), relative_accuracy: float = 1e-3):
        self.times_s = np.asarray(times_s, dtype=float)
        self.percentiles = tuple(percentiles)
        self._values = np.empty((0, len(self.times_s)))

    def add(self, values: np.ndarray) -> None:
        self._values = np.vstack([self._values, np.asarray(values, dtype=float)[None, :]])

    def result(self) -> pd.DataFrame:
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            data = {f"p{p:g}": np.nanpercentile(self._values, p, axis=0) if len(self._values) else np.nan
                    for p in self.percentiles}
        data["runs"] = np.isfinite(self._values).sum(axis=0)
        return pd.DataFrame(data, index=pd.Index(self.times_s, name="t_s"))

    def state(self) -> dict[str, np.ndarray]:
        return {"times_s": self.times_s, "percentiles": np.asarray(self.percentiles, dtype=float),
                "values": self._values}

    @classmethod
    def from_state(cls, state) -> Envelope:
        envelope = cls(state["times_s"], tuple(state["percentiles"]))
        envelope._values = np.asarray(state["values"], dtype=float).reshape(-1, len(envelope.times_s))
        return envelope

    def merge(self, other) -> None:
        self._values = np.vstack([self._values, other._values])
