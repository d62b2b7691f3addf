"""Percentile envelopes: against numpy.percentile within the documented
accuracy (negatives, zeros, NaNs, a wide span), merge equal to adding every
run to one, the state's round trip, and memory flat over 10,000 runs."""

import math
import tracemalloc

import numpy as np
import pandas as pd
import pytest

from attsim.campaign.envelope import Envelope, load_envelopes, save_envelopes
from attsim.errors import InputError

PERCENTILES = (0, 1, 5, 25, 50, 75, 95, 99, 100)


def campaign_values(rng, runs, n_times):
    """Runs of a quantity that decays and crosses zero, with exact zeros, gaps (NaN) and a heavy tail."""
    t = np.linspace(0.0, 1.0, n_times)
    values = rng.standard_normal((runs, n_times)) * np.exp(-3.0 * t) + 0.5 * np.sin(6.0 * t)
    tail = rng.random((runs, n_times)) < 0.05
    values[tail] *= rng.lognormal(0.0, 3.0, size=int(tail.sum()))
    values[rng.random((runs, n_times)) < 0.1] = 0.0
    values[rng.random((runs, n_times)) < 0.05] = np.nan
    values[:, 5] = rng.lognormal(0.0, 1.0, runs)  # positive, three orders of magnitude
    values[: runs // 2, 7] = np.nan  # a time point that half the runs did not reach
    values[:, 9] = np.nan  # one that none reached
    return t, values


def bound(envelope, values, p):
    """The module docstring's guarantee for percentile p at every time point."""
    a = envelope.relative_accuracy
    gamma = (1 + a) / (1 - a)
    lo = np.nanpercentile(values, p, axis=0, method="lower")
    hi = np.nanpercentile(values, p, axis=0, method="higher")
    reach = np.nanmax(np.abs(values), axis=0) * gamma ** (2 - envelope.max_buckets)
    return a * np.maximum(np.abs(lo), np.abs(hi)) + reach


def build(t, values, **kwargs):
    envelope = Envelope(t, PERCENTILES, **kwargs)
    for run in values:
        envelope.add(run)
    return envelope


@pytest.mark.filterwarnings("ignore:All-NaN slice:RuntimeWarning")
@pytest.mark.parametrize("kwargs", [{}, {"relative_accuracy": 1e-2}, {"max_buckets": 64}])
def test_against_numpy_percentile_within_the_documented_accuracy(rng, kwargs):
    t, values = campaign_values(rng, 801, 40)
    envelope = build(t, values, **kwargs)
    result = envelope.result()
    assert list(result.columns) == [f"p{p}" for p in PERCENTILES] + ["runs"]
    np.testing.assert_array_equal(result.index, t)
    np.testing.assert_array_equal(result["runs"], np.sum(np.isfinite(values), axis=0))
    assert result.iloc[9].drop("runs").isna().all()
    reached = np.isfinite(values).any(axis=0)
    for p in PERCENTILES:
        expected = np.nanpercentile(values, p, axis=0)
        error = np.abs(result[f"p{p}"].to_numpy() - expected)[reached]
        tolerance = bound(envelope, values, p)[reached] * (1 + 1e-9) + 1e-15
        assert np.all(error <= tolerance), (p, np.max(error / tolerance))
    np.testing.assert_array_equal(result["p0"].to_numpy()[reached], np.nanmin(values, axis=0)[reached])
    np.testing.assert_array_equal(result["p100"].to_numpy()[reached], np.nanmax(values, axis=0)[reached])
    # the wide positive column is within the relative accuracy of each value (no lowest-bucket term with defaults)
    if not kwargs:
        column = values[:, 5]
        for p in (1, 50, 99):
            assert result[f"p{p}"].iloc[5] == pytest.approx(np.percentile(column, p), rel=1.001e-3)


def test_one_run_and_repeated_values_are_exact():
    envelope = Envelope([0.0, 1.0, 2.0])
    envelope.add([-2.5, 0.0, 7.0])
    assert (envelope.result().drop(columns="runs").to_numpy() == [[-2.5], [0.0], [7.0]]).all()
    for _ in range(10):
        envelope.add([-2.5, 0.0, 7.0])
    assert (envelope.result().drop(columns="runs").to_numpy() == [[-2.5], [0.0], [7.0]]).all()


def test_merge_equals_adding_everything_to_one(rng):
    t, values = campaign_values(rng, 600, 30)
    single = build(t, values, max_buckets=256)
    # two workers, each with its own share of the runs in its own order
    first = build(t, values[1::2][::-1], max_buckets=256)
    second = build(t, values[::2], max_buckets=256)
    first.merge(second)
    pd.testing.assert_frame_equal(first.result(), single.result())
    for key in ("count", "zeros", "min", "max"):
        np.testing.assert_array_equal(first.state()[key], single.state()[key])


@pytest.mark.parametrize("max_buckets", [16, 256, 4096])
def test_add_runs_equals_adding_each_run(rng, max_buckets):
    """A campaign adds the runs that arrived in one batch: the envelope of adding them one at a time."""
    t, values = campaign_values(rng, 500, 30)
    one_by_one = build(t, values, max_buckets=max_buckets)
    batched = Envelope(t, PERCENTILES, max_buckets=max_buckets)
    for chunk in np.array_split(values, [1, 40, 41, 300]):  # batches of 1, 39, 1, 259 and 200 runs
        batched.add_runs(chunk)
    batched.add_runs(np.empty((0, t.size)))
    pd.testing.assert_frame_equal(batched.result(), one_by_one.result(), check_exact=True)
    for key in ("count", "zeros", "min", "max"):
        np.testing.assert_array_equal(batched.state()[key], one_by_one.state()[key])


def test_state_round_trip_through_an_npz_file(rng, tmp_path):
    t, values = campaign_values(rng, 200, 20)
    envelope = build(t, values[:100])
    again = Envelope.from_state(envelope.state())
    pd.testing.assert_frame_equal(again.result(), envelope.result())
    path = save_envelopes(tmp_path / "envelopes.npz", {"rate_norm": envelope, "pointing/err": build(t, values)})
    with np.load(path) as data:
        assert "rate_norm/counts" in data.files and "pointing/err/count" in data.files
    loaded = load_envelopes(path)
    assert set(loaded) == {"rate_norm", "pointing/err"}
    # a loaded envelope carries on as if it had never been saved
    for run in values[100:]:
        loaded["rate_norm"].add(run)
    pd.testing.assert_frame_equal(loaded["rate_norm"].result(), loaded["pointing/err"].result())


def test_memory_is_flat_over_ten_thousand_runs():
    n_times, rng = 500, np.random.default_rng(3)
    t = np.linspace(0.0, 5000.0, n_times)
    block = rng.standard_normal((1000, n_times)) * np.exp(-t / 2000.0)  # drawn before tracing: only add() is measured
    block[rng.random(block.shape) < 0.02] = np.nan
    envelope = Envelope(t)
    tracemalloc.start()
    try:
        for k in range(10_000):
            # each pass over the block stretches it, so later runs keep setting new extremes
            envelope.add(block[k % 1000] * (1.0 + k // 1000 * 0.01))
            if k == 499:
                size_early = envelope.nbytes
                traced_early, _ = tracemalloc.get_traced_memory()
        traced_late, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert envelope.nbytes == size_early <= n_times * (8 * envelope.max_buckets + 80) + 1024
    assert traced_late - traced_early < 256 * 1024, (traced_early, traced_late)
    assert envelope.result()["runs"].min() > 9_000


@pytest.mark.parametrize("call,field", [
    (lambda: Envelope([0.0, 0.0]), "times_s"),
    (lambda: Envelope([]), "times_s"),
    (lambda: Envelope([0.0, 1.0], percentiles=(50, 101)), "percentiles"),
    (lambda: Envelope([0.0, 1.0], relative_accuracy=0.0), "relative_accuracy"),
    (lambda: Envelope([0.0, 1.0], max_buckets=8), "max_buckets"),
    (lambda: Envelope([0.0, 1.0]).add([1.0]), "values"),
    (lambda: Envelope([0.0, 1.0]).add_runs([1.0, 2.0]), "values"),
    (lambda: Envelope([0.0, 1.0]).merge(Envelope([0.0, 2.0])), "other"),
    (lambda: Envelope([0.0, 1.0]).merge(Envelope([0.0, 1.0], relative_accuracy=0.01)), "other"),
    (lambda: Envelope.from_state({"times_s": np.zeros(2)}), "state"),
])
def test_bad_arguments_are_refused_naming_the_field(call, field):
    with pytest.raises(InputError) as info:
        call()
    assert info.value.field == field


def test_accuracy_is_not_vacuous():
    """The estimates are not exact: the test above would catch an error larger than the bucket width."""
    values = np.random.default_rng(0).lognormal(0.0, 1.0, (1000, 1))
    envelope = build([0.0], values)
    error = abs(envelope.result()["p50"].iloc[0] / np.percentile(values, 50) - 1.0)
    assert 0.0 < error <= 1e-3 and not math.isnan(error)


def test_the_campaign_directory_keeps_the_envelope_state_compressed(rng, tmp_path):
    # a pointing error converging from degrees to micro-degrees spans ~1900 buckets at some time point, so the
    # histogram rows are that wide but nearly empty: written raw, 20 runs made a 12.8 MB envelopes.npz
    from attsim.campaign import records as store

    t = np.linspace(0.0, 300.0, 500)
    values = 30.0 * np.exp(-t / 10.0)[None, :] * rng.lognormal(0.0, 1.0, (20, t.size))
    envelope = Envelope(t)
    envelope.add_runs(values)
    store.save_envelopes(tmp_path, {"att_err_deg": envelope}, range(20), {"att_err_deg": "deg"})
    size = (tmp_path / store.ENVELOPES_FILE).stat().st_size
    assert envelope.nbytes > 4e6 and size < envelope.nbytes / 20, (envelope.nbytes, size)
    loaded, runs, units = store.load_envelopes(tmp_path, Envelope)
    assert runs == set(range(20)) and units == {"att_err_deg": "deg"}
    pd.testing.assert_frame_equal(loaded["att_err_deg"].result(), envelope.result(), check_exact=True)


def test_shifting_a_window_keeps_every_count_and_moves_the_spill_to_the_lowest_bucket(rng):
    from attsim.campaign.envelope import _LogHistogram

    hist = _LogHistogram(40, 64)
    hist.counts = rng.integers(0, 1000, size=hist.counts.shape).astype(np.uint32)
    before = hist.counts.astype(np.int64)
    rows = np.array([0, 3, 7, 8, 20, 39])
    shift = np.array([1, 5, 63, 64, 200, 17])
    hist._shift(rows, shift)
    width = before.shape[1]
    for r, s in zip(rows, shift):  # column j holds the key j below the top: after a shift s, old column j - s
        expected = np.zeros(width, dtype=np.int64)
        if s < width:
            expected[s:] = before[r, : width - s]
        expected[-1] += before[r].sum() - expected.sum()
        assert np.array_equal(hist.counts[r], expected), (r, s)
    untouched = np.setdiff1d(np.arange(40), rows)
    assert np.array_equal(hist.counts[untouched], before[untouched])
