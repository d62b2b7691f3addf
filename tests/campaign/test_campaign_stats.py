"""Campaign statistics against hand-computed values: Clopper-Pearson against
scipy's exact binomial test and the closed forms at the edges, Wilson against
its formula typed out, the requirement at the edge of 299 runs, percentiles."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binomtest

from attsim.campaign import stats
from attsim.errors import InputError

CASES = [(0, 10), (10, 10), (7, 10), (99, 100), (1, 3), (9990, 10000)]


@pytest.mark.parametrize("passed,runs", CASES)
def test_clopper_pearson_against_scipys_exact_binomial_test(passed, runs):
    rate = stats.pass_rate(passed, runs, 0.95)
    reference = binomtest(passed, runs).proportion_ci(confidence_level=0.95, method="exact")
    assert rate.low == pytest.approx(reference.low, abs=1e-12) and rate.high == pytest.approx(reference.high, abs=1e-12)
    assert rate == (passed, runs, passed / runs, rate.low, rate.high, 0.95, "clopper-pearson")


def test_clopper_pearson_closed_forms_at_the_edges():
    # x = 0: the upper bound solves (1 - p)^n = a/2; x = n: the lower bound solves p^n = a/2
    assert stats.pass_rate(0, 10).high == pytest.approx(1.0 - 0.025 ** (1 / 10), rel=1e-12)
    assert stats.pass_rate(0, 10).low == 0.0
    assert stats.pass_rate(10, 10).low == pytest.approx(0.025 ** (1 / 10), rel=1e-12)
    assert stats.pass_rate(10, 10).high == 1.0
    # published values (Clopper & Pearson's tables reproduced in most texts): 7/10 -> [0.3475, 0.9333]
    rate = stats.pass_rate(7, 10)
    assert (round(rate.low, 4), round(rate.high, 4)) == (0.3475, 0.9333)


@pytest.mark.parametrize("passed,runs", CASES)
def test_wilson_against_its_formula_typed_out(passed, runs):
    z = 1.959963984540054  # the normal 97.5 % quantile
    p = passed / runs
    centre = (passed + z**2 / 2) / (runs + z**2)
    half = z * math.sqrt(runs) / (runs + z**2) * math.sqrt(p * (1 - p) + z**2 / (4 * runs))
    rate = stats.pass_rate(passed, runs, 0.95, method="wilson")
    assert rate.low == pytest.approx(max(0.0, centre - half), abs=1e-12)
    assert rate.high == pytest.approx(min(1.0, centre + half), abs=1e-12)
    reference = binomtest(passed, runs).proportion_ci(confidence_level=0.95, method="wilson")
    assert rate.low == pytest.approx(reference.low, abs=1e-12) and rate.high == pytest.approx(reference.high, abs=1e-12)


def _tail(passed, runs, p):
    """P(X >= passed) for X ~ Binomial(runs, p), summed term by term."""
    return sum(math.comb(runs, k) * p**k * (1 - p) ** (runs - k) for k in range(passed, runs + 1))


def test_requirement_at_the_edges():
    assert stats.requirement_met(299, 299, 0.99, 0.95)  # 0.99^299 = 0.0495 <= 0.05
    assert not stats.requirement_met(298, 298, 0.99, 0.95)  # 0.99^298 = 0.0500 > 0.05
    assert not stats.requirement_met(298, 299, 0.99, 0.95)
    assert math.ceil(math.log(0.05) / math.log(0.99)) == 299
    # met exactly when a true rate of r makes x or more passes no likelier than 1 - c
    for passed, runs in [(299, 299), (298, 299), (470, 473), (471, 473), (950, 1000), (1000, 1000), (5, 5)]:
        for r, c in [(0.99, 0.95), (0.9, 0.9), (0.5, 0.99)]:
            assert stats.requirement_met(passed, runs, r, c) == (_tail(passed, runs, r) <= 1 - c), (passed, runs, r, c)
    assert stats.lower_bound(299, 299, 0.95) == pytest.approx(0.05 ** (1 / 299), rel=1e-12)
    assert stats.lower_bound(0, 5) == 0.0


@pytest.mark.parametrize("runs", [1, 298, 299, 300, 1000, 5000, 123_457])
def test_the_passes_a_requirement_needs_are_the_fewest_an_exact_binomial_test_accepts(runs):
    # met when a true rate of 0.99 would make x or more passes no likelier than 5 % (scipy's exact one-sided test)
    from scipy.stats import binom

    def accepted(x: int) -> bool:
        return x > 0 and binom.sf(x - 1, runs, 0.99) <= 0.05

    needed = stats.passes_needed(runs)
    if runs < 299:
        assert needed is None and not accepted(runs)
    else:
        assert accepted(needed) and not accepted(needed - 1)
        assert stats.requirement_met(needed, runs) and not stats.requirement_met(needed - 1, runs)
    assert stats.passes_needed(1000) == 996 and stats.passes_needed(299) == 299


def test_the_fewest_runs_that_can_meet_a_requirement():
    assert stats.runs_needed() == 299  # ln(0.05) / ln(0.99) = 298.07
    assert stats.runs_needed(0.9, 0.9) == 22 and stats.runs_needed(1.0, 0.95) is None
    for rate, confidence in ((0.99, 0.95), (0.999, 0.99), (0.5, 0.5)):
        n = stats.runs_needed(rate, confidence)
        assert stats.requirement_met(n, n, rate, confidence)
        assert n == 1 or not stats.requirement_met(n - 1, n - 1, rate, confidence)
    assert stats.needs(1000) == "996 of 1000 runs must pass (at most 4 may fail)"
    assert stats.needs(100) == "cannot be met by 100 runs, even with none failing: it needs at least 299 runs"


def test_percentiles_by_hand():
    values = np.concatenate([np.arange(1.0, 102.0), [np.nan]])  # 1..101: rank k/100 * 100 lands on a value
    out = stats.percentiles(values)
    assert out == {"p1": 2.0, "p5": 6.0, "p50": 51.0, "p95": 96.0, "p99": 100.0, "min": 1.0, "max": 101.0}
    assert stats.percentiles([1.0, 2.0], ps=(25,)) == {"p25": 1.25, "min": 1.0, "max": 2.0}  # 1 + 0.25 (2 - 1)
    assert all(math.isnan(v) for v in stats.percentiles([np.nan]).values())


def _records():
    return pd.DataFrame({
        "run": np.arange(6, dtype=np.int64),
        "status": ["OK", "OK", "FAIL", "OK", "ERROR", "FAIL"],
        "v:final rate": [0.01, 0.02, 0.5, 0.03, np.nan, 0.04],
        "ok:final rate": [True, True, False, True, False, True],
        "v:no saturation": [np.nan] * 6,
        "ok:no saturation": [True, True, True, True, True, False],
    })


def test_criterion_summary_counts_errors_as_failures():
    records = _records()
    records.loc[4, "ok:no saturation"] = True  # written before the run raised: still a failure
    summary = stats.criterion_summary(records)
    assert list(summary.index) == ["final rate", "no saturation"]
    rate = summary.loc["final rate"]
    assert (rate.passed, rate.runs, rate.rate) == (4, 6, 4 / 6)
    reference = binomtest(4, 6).proportion_ci(method="exact")
    assert rate.low == pytest.approx(reference.low) and rate.high == pytest.approx(reference.high)
    assert rate.p50 == 0.03 and rate["min"] == 0.01 and rate["max"] == 0.5
    assert rate.p99 == pytest.approx(0.04 + 0.96 * (0.5 - 0.04))  # rank 0.99 * 4 = 3.96 among 5 values
    assert summary.loc["no saturation", "passed"] == 4 and math.isnan(summary.loc["no saturation", "p50"])


def test_requirement_on_records():
    decision = stats.requirement(_records(), 0.5, 0.6)
    assert decision.passed == 3 and decision.runs == 6 and decision.lower_bound == stats.lower_bound(3, 6, 0.6)
    assert decision.met == (decision.lower_bound >= 0.5)
    assert not stats.requirement(_records().iloc[:0]).met


@pytest.mark.parametrize("call,field", [
    (lambda: stats.pass_rate(3, 0), "runs"),
    (lambda: stats.pass_rate(11, 10), "passed"),
    (lambda: stats.pass_rate(-1, 10), "passed"),
    (lambda: stats.pass_rate(1.5, 10), "passed"),
    (lambda: stats.pass_rate(1, 10, confidence=1.0), "confidence"),
    (lambda: stats.pass_rate(1, 10, method="wald"), "method"),
    (lambda: stats.requirement_met(1, 10, required_rate=0.0), "required_rate"),
    (lambda: stats.requirement_met(1, 10, required_rate=1.2), "required_rate"),
])
def test_bad_arguments_are_refused_naming_the_field(call, field):
    with pytest.raises(InputError) as info:
        call()
    assert info.value.field == field


def test_spearman_rho_is_scipys_with_ties_and_by_hand():
    from scipy.stats import spearmanr

    rng = np.random.default_rng(7)
    for n in (3, 10, 200):
        x = rng.integers(0, 5, n).astype(float)  # many ties
        y = x * rng.normal(1.0, 0.3, n) + rng.normal(0.0, 1.0, n)
        assert stats.spearman_rho(x, y) == pytest.approx(spearmanr(x, y).statistic, rel=1e-13, abs=1e-15)
    # by hand: ranks (1, 2.5, 2.5, 4) and (4, 3, 2, 1): rho = -sum(dx dy) / ... = -0.9486832980505138
    assert stats.spearman_rho([1.0, 2.0, 2.0, 3.0], [9.0, 5.0, 4.0, 0.0]) == pytest.approx(-0.9486832980505138,
                                                                                          rel=1e-15)
    assert stats.spearman_rho([1.0, 2.0, 3.0], [10.0, 20.0, 30.0]) == 1.0
