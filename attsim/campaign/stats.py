"""SCAFFOLD (feat/campaign only; campaign-stats provides the real module): pass rates and the requirement."""

from __future__ import annotations

from typing import NamedTuple

import pandas as pd
from scipy import stats as _st


class Rate(NamedTuple):
    passed: int
    runs: int
    rate: float
    low: float
    high: float
    confidence: float
    method: str


def pass_rate(passed: int, runs: int, confidence: float = 0.95, method: str = "clopper-pearson") -> Rate:
    alpha = 1.0 - confidence
    low = 0.0 if passed == 0 else float(_st.beta.ppf(alpha / 2, passed, runs - passed + 1))
    high = 1.0 if passed == runs else float(_st.beta.ppf(1 - alpha / 2, passed + 1, runs - passed))
    return Rate(passed, runs, passed / runs if runs else float("nan"), low, high, confidence, method)


def requirement_met(passed: int, runs: int, required_rate: float = 0.99, confidence: float = 0.95) -> bool:
    if runs == 0:
        return False
    low = 0.0 if passed == 0 else float(_st.beta.ppf(1.0 - confidence, passed, runs - passed + 1))
    return low >= required_rate


def criterion_summary(records: pd.DataFrame) -> pd.DataFrame:
    labels = [c[3:] for c in records.columns if c.startswith("ok:")]
    return pd.DataFrame({"passed": [int(records[f"ok:{label}"].sum()) for label in labels]}, index=labels)
