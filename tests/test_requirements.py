"""Declared criteria (attsim.Requirement, attsim.Window): values, verdicts, margins and windows computed by attsim,
kept with the run, and the old (label, value, ok, bound) tuples judged as before."""

import json
import math
import pickle

import numpy as np
import pandas as pd
import pytest

import attsim
from attsim import Requirement, Window
from attsim.criteria import Criterion, judge, record_criteria
from attsim.errors import InputError
from attsim.telemetry.recorder import Telemetry
from attsim.testing import NotEvaluated


def _run(n=101, dt=1.0, meta=None, **columns):
    t = np.arange(n) * dt
    df = pd.DataFrame({"wx": 0.01, "wy": 0.0, "wz": 0.0, **{k: v(t) if callable(v) else v for k, v in columns.items()}},
                      index=pd.Index(t, name="t"))
    return Telemetry(None, meta or {}, df=df)


DECAY = _run(att_err_deg=lambda t: 10.0 * np.exp(-t / 10.0), mode=lambda t: np.where(t < 50, 0, 1),
             meta={"modes": ["acquire", "point"], "environment": {"period_s": 40.0}})


@pytest.mark.parametrize("statistic, window, value, at_s", [
    ("max", Window.after(30.0), 10.0 * math.exp(-3.0), 30.0),
    ("min", Window.between(10.0, 20.0), 10.0 * math.exp(-2.0), 20.0),
    ("final", Window.mode("point", skip_s=10.0), 10.0 * math.exp(-10.0), 100.0),
    ("max", Window.orbit(2), 10.0 * math.exp(-4.0), 40.0),
    ("mean", Window.intervals([(0.0, 1.0)], label="the first second"), 5.0 * (1 + math.exp(-0.1)), None),
    ("rms", Window.between(0.0, 1.0), math.sqrt(50.0 * (1 + math.exp(-0.2))), None),
])
def test_a_declared_criterion_is_computed_over_its_window(statistic, window, value, at_s):
    judged = Requirement("error [deg]", "att_err_deg", statistic, "<", 1.0, window=window).evaluate(DECAY)
    assert isinstance(judged, Criterion) and judged.value == pytest.approx(value, rel=1e-12)
    assert judged.ok is (value < 1.0) and judged.bound == "< 1"
    record = judged.declared
    assert record["at_s"] == at_s and record["margin"] == pytest.approx(1.0 - value)
    assert record["window"] == window.describe() and record["quantity"] == "att_err_deg" and record["unit"] == "deg"
    label, *_ = judged  # still the (label, value, ok, bound) it always was
    assert label == "error [deg]" and len(judged) == 4


def test_the_window_is_kept_as_this_runs_intervals():
    judged = Requirement("e [deg]", "att_err_deg", "max", "<", 1.0, window=Window.mode("point", skip_s=10.0)
                         ).evaluate(DECAY)
    assert judged.declared["intervals"] == [[60.0, 100.0]]  # the mode from 50 s, its first 10 s left out
    assert judged.declared["window"] == "while in mode point, after the first 10 s of each"


def test_settling_time_is_from_the_window_start_and_infinite_when_it_never_settles():
    judged = Requirement("settle [s]", "att_err_deg", "settle", "<=", 30.0, settle_below=0.5).evaluate(DECAY)
    # 10 exp(-t/10) < 0.5 from t = 10 ln 20 = 29.96 s on: the first row below is at 30 s
    assert judged.value == 30.0 and judged.ok and judged.declared["at_s"] == 30.0
    late = Requirement("settle [s]", "att_err_deg", "settle", "<=", 30.0, settle_below=0.5,
                       window=Window.after(20.0)).evaluate(DECAY)
    assert late.value == 10.0  # from the window's start
    never = Requirement("settle [s]", "att_err_deg", "settle", "<=", 30.0, settle_below=1e-9).evaluate(DECAY)
    assert never.value == math.inf and not never.ok and never.declared["margin"] is None


def test_a_window_the_run_does_not_cover_is_not_judged():
    for window, reason in ((Window.after(200.0), "the run ends at 100 s, before 200 s"),
                           (Window.orbit(3), "before the end of orbit 3 (80 to 120 s)"),
                           (Window.between(50.0, 150.0), "before the end of from 50 to 150 s"),
                           (Window.mode("safe"), "no mode named 'safe'"),
                           (Window.intervals([], label="passes"), "passes: none in this run"),
                           (Window.passes(), "0 controllers with a ground target")):
        judged = judge([Requirement("e [deg]", "att_err_deg", "max", "<", 1.0, window=window)], DECAY)[0]
        assert isinstance(judged.value, NotEvaluated) and not judged.ok, window
        assert reason in judged.value.reason, (reason, judged.value.reason)
    no_modes = _run(att_err_deg=0.0)
    judged = Requirement("e [deg]", "att_err_deg", "max", "<", 1.0, window=Window.mode("point")).evaluate(no_modes)
    assert "no mode column" in judged.value.reason


def test_a_nan_inside_the_window_is_not_skipped():
    gap = _run(att_err_deg=lambda t: np.where(t == 70.0, np.nan, 0.01))
    inside = Requirement("e [deg]", "att_err_deg", "max", "<", 1.0, window=Window.after(50.0)).evaluate(gap)
    assert isinstance(inside.value, NotEvaluated) and "NaN at t = 70 s" in inside.value.reason and not inside.ok
    outside = Requirement("e [deg]", "att_err_deg", "max", "<", 1.0, window=Window.between(0.0, 60.0)).evaluate(gap)
    assert outside.ok and outside.value == 0.01


def test_values_computed_outside_the_telemetry_and_derived_quantities():
    independent = np.linspace(0.0, 2.0, len(DECAY.df))
    judged = Requirement("e [deg]", "att_err_deg", "max", "<", 1.0, window=Window.after(90.0),
                         values=independent).evaluate(DECAY)
    assert judged.value == 2.0 and not judged.ok and judged.declared["margin"] == -1.0
    rate = Requirement("rate [deg/s]", "rate_deg_s", "max", "<", 1.0).evaluate(DECAY)
    assert rate.value == pytest.approx(np.degrees(0.01)) and rate.declared["unit"] == "deg/s"
    above = Requirement("fraction [-]", None, "mean", ">", 0.97, values=np.ones(len(DECAY.df))).evaluate(DECAY)
    assert above.ok and above.declared["margin"] == pytest.approx(0.03) and above.declared["quantity"] is None
    missing = Requirement("e [deg]", "no_such_column", "max", "<", 1.0).evaluate(DECAY)
    assert "no column 'no_such_column'" in missing.value.reason
    with pytest.raises(InputError) as info:
        Requirement("e [deg]", None, "max", "<", 1.0, values=np.ones(3)).evaluate(DECAY)
    assert info.value.field == "values"


def test_absmax_is_the_largest_magnitude_of_either_sign_marked_at_the_signed_sample():
    wheel = _run(rw0_speed=lambda t: np.where(t == 40.0, -300.0, 100.0 * np.sin(t / 10.0)))
    judged = Requirement("wheel speed [rad/s]", "rw0_speed", "absmax", "<", 250.0).evaluate(wheel)
    assert judged.value == 300.0 and not judged.ok and judged.declared["margin"] == -50.0
    assert judged.declared["at_s"] == 40.0 and judged.declared["at_value"] == -300.0
    # "max" of the same column sees only the positive side
    assert Requirement("w [rad/s]", "rw0_speed", "max", "<", 250.0).evaluate(wheel).ok


def test_an_estimators_error_against_the_truth_is_a_quantity_a_requirement_can_name():
    """The issue-25 outsider had no column for the MEKF's error against the truth to bound."""
    from scipy.spatial.transform import Rotation

    t = np.arange(101) * 1.0
    truth = Rotation.from_rotvec(np.outer(t, [0.0, 0.01, 0.02]))  # turning
    error_deg = np.where(t < 10.0, 20.0, 0.5 * np.exp(-t / 50.0))
    error = Rotation.from_rotvec(np.radians(error_deg)[:, None] * np.array([0.6, 0.0, -0.8]))
    estimate = (truth * error).as_quat(scalar_first=True)
    estimate[:3] = np.nan  # no estimate before the first fix
    q = truth.as_quat(scalar_first=True)
    columns = {c: q[:, k] for k, c in enumerate(("qw", "qx", "qy", "qz"))}
    columns |= {f"mekf_q{a}": estimate[:, k] for k, a in enumerate("wxyz")}
    run = _run(**{k: (lambda t, v=v: v) for k, v in columns.items()})
    whole = Requirement("knowledge [deg]", "mekf_err_deg", "max", "<", 1.0).evaluate(run)
    assert isinstance(whole.value, NotEvaluated) and "NaN at t = 0 s" in whole.value.reason
    converged = Requirement("knowledge [deg]", "mekf_err_deg", "max", "<", 1.0, window=Window.after(10.0)
                            ).evaluate(run)
    assert converged.ok and converged.value == pytest.approx(0.5 * np.exp(-0.2), rel=1e-9)
    assert converged.declared["unit"] == "deg" and converged.declared["at_s"] == 10.0
    assert "no column 'kf_err_deg' (nor is it one attsim derives" in \
        Requirement("e [deg]", "kf_err_deg", "max", "<", 1.0).evaluate(run).value.reason


@pytest.mark.parametrize("args, field", [
    (("", "att_err_deg", "max", "<", 1.0), "label"),
    (("e", "att_err_deg", "largest", "<", 1.0), "statistic"),
    (("e", "att_err_deg", "max", "=<", 1.0), "op"),
    (("e", "att_err_deg", "max", "<", float("nan")), "limit"),
    (("e", None, "max", "<", 1.0), "quantity"),
    (("e", "att_err_deg", "settle", "<", 1.0), "settle_below"),
])
def test_a_declaration_that_makes_no_sense_is_refused_by_name(args, field):
    with pytest.raises(InputError) as info:
        Requirement(*args)
    assert info.value.field == field


def test_windows_refuse_what_is_not_a_window():
    for make, field in ((lambda: Window.between(5.0, 1.0), "stop_s"), (lambda: Window.orbit(0), "number"),
                        (lambda: Window.mode(""), "name"), (lambda: Window.intervals([(3.0, 1.0)]), "intervals[0]"),
                        (lambda: Window.after(float("inf")), "t_s"), (lambda: Window.mode("a", skip_s=-1), "skip_s")):
        with pytest.raises(InputError) as info:
            make()
        assert info.value.field == field
    with pytest.raises(InputError) as info:
        Requirement("e", "att_err_deg", "max", "<", 1.0, window=(0, 10))
    assert info.value.field == "window"


def test_judge_evaluates_a_declared_criterion_on_the_run_and_old_tuples_as_before():
    declared = Requirement("e after 30 s [deg]", "att_err_deg", "max", "<", 1.0, window=Window.after(30.0))
    rows = judge([declared, ("old [-]", 1.0, True, "< 2"), ("nan [-]", np.nan, True, "< 2")], DECAY)
    assert [r.ok for r in rows] == [True, True, False] and rows[0].declared["at_s"] == 30.0
    assert rows[1] == ("old [-]", 1.0, True, "< 2") and rows[1].declared is None
    alone = judge([declared])[0]  # no telemetry to evaluate it on: a failure that says so
    assert not alone.ok and "no telemetry" in alone.value.reason
    several = judge([declared], [DECAY, DECAY])[0]
    assert not several.ok and "requirement.evaluate(run)" in several.value.reason
    restored = pickle.loads(pickle.dumps(rows[0]))  # a campaign's worker sends it back
    assert restored == rows[0] and restored.declared == rows[0].declared


def test_a_declared_criterion_is_kept_in_meta_json_with_its_record(tmp_path):
    (tmp_path / "meta.json").write_text(json.dumps({"name": "x"}))
    rows = judge([Requirement("e [deg]", "att_err_deg", "max", "<", 1.0, window=Window.after(30.0)),
                  ("old [-]", 1.0, True, "< 2")], DECAY)
    record_criteria(tmp_path, rows)
    kept = json.loads((tmp_path / "meta.json").read_text())["criteria"]
    assert kept[1] == ["old [-]", 1.0, True, "< 2"]
    assert kept[0][:4] == ["e [deg]", rows[0].value, True, "< 1"] and kept[0][4]["intervals"] == [[30.0, 100.0]]


def test_a_campaign_record_keeps_the_declared_criterion_without_this_runs_worst_point():
    from attsim.campaign.worker import judge as campaign_judge

    columns, status, criteria = campaign_judge(
        [Requirement("e [deg]", "att_err_deg", "max", "<", 1.0, window=Window.after(30.0)), ("old", 1, True, "= 1")],
        DECAY)
    assert status == "OK" and columns["v:e [deg]"] == pytest.approx(10.0 * math.exp(-3.0))
    (label, bound, declared), old = criteria
    assert (label, bound) == ("e [deg]", "< 1") and declared["window"] == "after 30 s" and "at_s" not in declared
    assert old == ("old", "= 1", None)


def test_the_public_names():
    assert attsim.Requirement is Requirement and attsim.Window is Window


def test_station_passes_come_from_the_orbit_and_station_the_run_records(tmp_path):
    """Window.passes() of cubesat_target_tracking's recorded orbit and station gives the pass the mission computes
    from its own orbit (missions/cubesat_target_tracking.py, passes())."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "missions" / "cubesat_target_tracking.py"
    spec = importlib.util.spec_from_file_location("ctt_passes", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    meta = module.build(out_dir=tmp_path).meta()
    t = np.arange(0.0, 6000.0, 2.0)
    tel = Telemetry(None, meta, df=pd.DataFrame({"wx": np.zeros(t.size)}, index=pd.Index(t, name="t")))
    resolved = Window.passes(skip_s=120.0).resolve(tel)
    assert module.passes(tel) == [(1266.0, 1738.0)]
    assert resolved.intervals == [(1386.0, 1738.0)] and resolved.missing is None
    assert resolved.rows.sum() == (1738 - 1386) // 2 + 1
    assert Window.passes("qpd").resolve(tel).intervals == [(1266.0, 1738.0)]
    assert "0 controllers named 'other'" in Window.passes("other").resolve(tel).missing.reason
