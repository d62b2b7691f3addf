"""Pages that decide at a glance (issue 23), on the written pages: the requirement over its window, the summary
first (verdict, saturation per kind of actuator, what the result assumes), only what the run has, units that fit,
and comparisons in the run pages' units with a chosen reference run. The browser checks are in
tests/test_report_decide_browser.py."""

import json

import numpy as np
import pytest

import attsim
from attsim import Requirement, Window
from attsim.criteria import judge

from tests.reporting.test_report import TARGET, WHEELS, _bdata, _figures, _sections, _telemetry, _wheel_columns

PD_LAW = {"name": "qpd", "type": "QuaternionPD", "period_s": 1.0, "target_q": TARGET}


def _pointing_run(tmp_path, **meta):
    error = {"att_err_deg": lambda t: 20.0 * np.exp(-t / 10.0) + 0.01,
             "att_err_x": lambda t: 2 * np.sin(np.radians(20.0 * np.exp(-t / 10.0) + 0.01) / 2),
             "att_err_y": 0.0, "att_err_z": 0.0}
    return _telemetry(tmp_path, _wheel_columns() | error, WHEELS + [PD_LAW], **meta)


def _trace(figure, prefix):
    """The first trace whose name (as shown: attsim's figure text is taken literally, so escaped) starts so."""
    import html

    return next(t for t in figure["data"] if html.unescape(str(t["name"])).startswith(prefix))


def test_a_declared_requirement_is_drawn_over_its_window_with_its_worst_point(tmp_path):
    tel = _pointing_run(tmp_path)
    criteria = judge([Requirement("pointing error after 100 s [deg]", "att_err_deg", "max", "<", 0.1,
                                  window=Window.between(100.0, 150.0))], tel)
    page = attsim.report(tel, tmp_path / "r.html", criteria=criteria).read_text()
    pointing = next(f for f in _figures(page) if f["title"] == "Pointing error")
    requirement = _trace(pointing, "requirement: max < 0.1 deg")
    assert requirement["x"] == [100.0, 150.0] and requirement["y"] == [0.1, 0.1]  # over its window, not the run
    worst = _trace(pointing, "worst")
    assert worst["x"] == [100.0] and worst["y"][0] == pytest.approx(20.0 * np.exp(-10.0) + 0.01)
    window = [s for s in pointing["layout"]["shapes"] if str(s.get("name")).startswith("window")]
    assert {(s["x0"], s["x1"]) for s in window} == {(100.0, 150.0)} and len(window) == 2  # both panels shaded
    # the window is a quarter of the run: a zoomed plot of it follows
    zoomed = next(f for f in _figures(page) if f["title"].startswith("Pointing error over the requirement windows"))
    assert 100.0 - 12.5 <= zoomed["layout"]["xaxis"]["range"][0] and zoomed["layout"]["xaxis"]["range"][1] <= 162.5
    # the summary: where it applies and where its value was reached, and its margin
    assert "from 100 to 150 s; reached at t = 100 s" in page and "0.08909 deg inside" in page


def test_a_bound_on_the_windows_mean_is_drawn_beside_the_measured_mean_not_as_a_threshold(tmp_path):
    """The review of issue 23: advitiy_adcs drew 'requirement: mean < 15 deg' over the instantaneous error, so the
    trace crossing it looked like a failure; what is judged is the mean over orbit 4."""
    tel = _pointing_run(tmp_path)
    criteria = judge([Requirement("mean pointing error [deg]", "att_err_deg", "mean", "<", 5.0,
                                  window=Window.between(0.0, 50.0))], tel)
    page = attsim.report(tel, tmp_path / "r.html", criteria=criteria).read_text()
    pointing = next(f for f in _figures(page) if f["title"] == "Pointing error")
    bound = _trace(pointing, "requirement: window mean < 5 deg")
    assert bound["x"] == [0.0, 50.0] and bound["y"] == [5.0, 5.0]
    measured = _trace(pointing, "measured window mean")
    mean = criteria[0].value
    assert mean == pytest.approx(np.mean(20.0 * np.exp(-np.arange(0.0, 50.5, 0.5) / 10.0) + 0.01), rel=0.05)
    assert measured["x"] == [0.0, 50.0] and measured["y"] == [pytest.approx(mean)] * 2
    assert measured["line"]["width"] > bound["line"]["width"]  # the value stands out from its bound
    # the instantaneous error crosses the bound (20 deg at the start): no worst point is marked on the trace
    assert not [t for t in pointing["data"] if str(t["name"]).startswith("worst")]


def test_a_tuple_requirement_is_drawn_across_the_run_as_before(tmp_path):
    tel = _pointing_run(tmp_path)
    page = attsim.report(tel, tmp_path / "r.html",
                         criteria=[("pointing error after 100 s [deg]", 0.05, True, "< 0.1")]).read_text()
    pointing = next(f for f in _figures(page) if f["title"] == "Pointing error")
    line = _trace(pointing, "requirement 0.1 deg")
    assert line["x"] == [0.0, 199.5] and not [s for s in pointing["layout"]["shapes"] if "window" in str(s["name"])]
    assert "where (window" not in page  # no column of windows and margins without a declared criterion


def test_a_rate_requirement_reads_in_the_axis_unit(tmp_path):
    """The demo's legend said 'requirement 0.0035 rad/s' on a deg/s axis."""
    tel = _telemetry(tmp_path, {}, [{"name": "bdot", "type": "BDot"}])
    page = attsim.report(tel, tmp_path / "r.html",
                         criteria=[("|omega| after one orbit [rad/s]", 1e-3, True, "< 3.5e-3")]).read_text()
    rates = next(f for f in _figures(page) if f["title"].startswith("Body rates"))
    line = _trace(rates, "requirement")
    assert line["name"] == "requirement 0.2005 deg/s (0.0035 rad/s)" and line["y"][0] == pytest.approx(0.20054, 1e-4)
    assert "(red line, 0.2005 deg/s = 0.0035 rad/s)" in page


def test_the_summary_answers_first_did_it_work_and_under_what_assumptions(tmp_path):
    events = [(10.0, "saturation", "rw_x", "torque"), (12.5, "saturation_end", "rw_x", "torque"),
              (11.0, "saturation", "rw_y", "speed"), (14.0, "saturation_end", "rw_y", "speed"),
              (50.0, "saturation", "rw_x", "torque")]  # open to the end of the run (199.5 s)
    magnetorquer = {"name": "mtq", "type": "Magnetorquer", "dipole_max_Am2": 0.1}
    env = {"field": "igrf", "gravity_gradient": True, "aerodynamic": False, "solar_pressure": False,
           "residual_dipole_Am2": [0.0, 0.0, 0.0], "shadow": "conical"}
    columns = _wheel_columns() | {f"mtq_m_{a}": 0.0 for a in "xyz"}
    tel = _telemetry(tmp_path, columns, WHEELS + [magnetorquer], environment=env, events=events, wall_s=12.0,
                     realtime_factor_achieved=16.6, compile_s=41.5, backend="compiled", path="loop",
                     knowledge={"qpd": {"attitude": "true state", "rate": "gyro"}})
    criteria = [("a [-]", 1.0, True, "< 2"), ("b [-]", 3.0, False, "< 2")]
    page = attsim.report(tel, tmp_path / "r.html", criteria=criteria).read_text()
    summary = page.split("<section id='summary'")[1].split("</section>")[0]
    assert "FAIL: 1 of 2 criteria not met — b [-]." in summary
    # the wheels: first at 10 s; the union of [10, 14] and [50, 199.5] is 153.5 s; three episodes
    # the wheels: torque-limited [10, 12.5] and [50, 199.5] (rw_x), speed-saturated [11, 14] (rw_y), each apart
    assert ("<th>Reaction wheels (3)</th><td><span class='fail'>torque-limited</span>: first at t = 10 s (rw_x); "
            "152 s in total over 2 episodes (rw_x 152 s)<br><span class='fail'>speed-saturated</span>: first at "
            "t = 11 s (rw_y); 3 s in total over 1 episode (rw_y 3 s)</td>") in summary
    assert "<th>Magnetorquers (1)</th><td><span class='pass'>none saturated</span></td>" in summary
    assert "<th>Environment</th><td>magnetic field (igrf), gravity gradient, eclipses (conical)</td>" in summary
    assert ("12 s wall, real-time factor 16.6; ran on the mission loop (compiled); compiling took 41.5 s more (not "
            "in the wall time)") in summary
    assert "qpd: attitude from true state, rate from gyro" in summary
    # the order: the verdict and criteria, then the assumptions, then the parameters
    assert summary.index("verdict") < summary.index("Success criteria") < summary.index("Assumptions") < \
        summary.index("Spacecraft and run parameters")


def test_a_wheel_torque_on_its_limit_counts_as_torque_limited_without_an_event(tmp_path):
    """The review of issue 23: cubesat_target_tracking's slews held the motor torque on its ±max_torque limit (the
    controller scales its allocation to the limits, so the wheel clips nothing and logs no event), while the summary
    said 'none saturated' in green."""
    limit = WHEELS[0]["max_torque_Nm"]
    def slews(t):
        return np.where((t >= 20.0) & (t <= 30.0), limit, np.where((t >= 100.0) & (t <= 105.0), -limit, 0.0))
    tel = _telemetry(tmp_path, _wheel_columns(torque_x=slews), WHEELS)
    page = attsim.report(tel, tmp_path / "r.html").read_text()
    summary = page.split("<section id='summary'")[1].split("</section>")[0]
    assert ("<span class='fail'>torque-limited</span>: first at t = 20 s (rw_x); 15 s in total over 2 episodes "
            "(rw_x 15 s)<br><span class='pass'>never speed-saturated</span> (peak |speed| 0.17 of the limit)"
            ) in summary
    assert "none saturated" not in summary
    wheels = next(f for f in _figures(page) if f["title"].startswith("Reaction wheels"))
    shaded = [s for s in wheels["layout"]["shapes"] if s.get("name") == "rw_x torque-limited"]
    assert [(s["x0"], s["x1"]) for s in shaded] == [(20.0, 30.0), (100.0, 105.0)]
    torque_axis = next(key for key, axis in wheels["layout"].items()
                       if key.startswith("yaxis") and "motor torque" in str(axis.get("title")))
    assert {s["yref"] for s in shaded} == {f"y{torque_axis[5:]} domain"}  # on the motor-torque panel


def test_saturation_seen_at_single_rows_is_counted_as_such_not_as_zero_seconds(tmp_path):
    """The issue-25 outsider read "0 s in total over 5 episodes": each episode was one telemetry row on the limit,
    so it had no measurable length, and the total of 0 s read as no saturation at all."""
    limit = WHEELS[0]["max_torque_Nm"]
    def blips(t):  # on the limit at three isolated rows (the rows are 0.5 s apart)
        return np.where(np.isin(t, (20.0, 40.0, 60.0)), limit, 0.0)
    def blips_and_slew(t):
        return np.where(np.isin(t, (20.0,)) | ((t >= 100.0) & (t <= 105.0)), -limit, 0.0)
    for torque_x, said in ((blips, "3 episodes, each at a single telemetry row (rw_x 3 single rows)"),
                           (blips_and_slew, "5 s in total over 2 episodes (1 of them at a single telemetry row) "
                                            "(rw_x 5 s)")):
        tel = _telemetry(tmp_path, _wheel_columns(torque_x=torque_x), WHEELS)
        page = attsim.report(tel, tmp_path / "r.html").read_text()
        summary = page.split("<section id='summary'")[1].split("</section>")[0]
        assert f"<span class='fail'>torque-limited</span>: first at t = 20 s (rw_x); {said}" in summary
        assert " 0 s in total" not in summary


def test_a_requirement_on_an_estimators_error_is_drawn_on_its_plot_with_the_angle(tmp_path):
    from attsim.telemetry.schema import ESTIMATOR_SUFFIXES

    def estimate(k):  # the truth (see _telemetry) turned by 0.01 deg about x
        return lambda t: (np.cos(0.001 * t + np.radians(0.005)), np.sin(0.001 * t + np.radians(0.005)), 0.0, 0.0)[k]
    columns = {f"mekf_{s}": 0.0 for s in ESTIMATOR_SUFFIXES} | {f"mekf_q{a}": estimate(k) for k, a in enumerate("wxyz")}
    tel = _telemetry(tmp_path, columns)
    criteria = judge([Requirement("knowledge [deg]", "mekf_err_deg", "max", "<", 0.05, window=Window.after(10.0)),
                      Requirement("wheel [deg]", "qy", "absmax", "<", 0.5)], tel)
    assert criteria[0].ok and criteria[0].value == pytest.approx(0.01, rel=1e-6)
    page = attsim.report(tel, tmp_path / "r.html", criteria=criteria).read_text()
    plot = next(f for f in _figures(page) if f["title"].startswith("mekf: estimate against the truth"))
    angle = _trace(plot, "|error|")
    assert np.allclose(_bdata(angle["y"]), 36.0, rtol=1e-5)  # arcsec
    bound = _trace(plot, "requirement: max < 180 arcsec")
    assert bound["x"] == [10.0, 199.5] and bound["y"] == [180.0, 180.0]


def test_an_absmax_requirement_is_drawn_at_both_signs():
    from attsim.reporting.style import requirement_marks
    from attsim.reporting.runinfo import judged

    wheel = Requirement("speed [rad/s]", "rw_x_speed", "absmax", "<", 150.0)
    tel_like = {"rw_x_speed": -np.linspace(0.0, 120.0, 5)}
    import pandas as pd
    row = judge([wheel], pd.DataFrame(tel_like, index=pd.Index(np.arange(5.0), name="t")))
    traces, _ = requirement_marks(judged(row), {"rad/s": 1.0}, "rad/s")
    bound = _trace({"data": traces}, "requirement: max |value| < 150 rad/s")
    assert bound["y"] == [150.0, 150.0, None, -150.0, -150.0] and bound["x"] == [0.0, 4.0, None, 0.0, 4.0]
    worst = _trace({"data": traces}, "worst 120 rad/s")
    assert worst["y"] == [-120.0] and worst["x"] == [4.0]  # on the signed sample


@pytest.mark.parametrize("error, said", [
    (lambda t: np.full_like(t, np.nan), "No row has a pointing error: no law with a pointing target ran"),
    (lambda t: np.where(t < 100.0, 2.0 * np.exp(-t / 20.0), np.nan),
     "Last pointing error 0.01382 deg at t = 99.5 s (rows after it have no pointing target); largest over the run "
     "2 deg."),
])
def test_a_run_that_ends_without_a_pointing_target_says_so_instead_of_nan(tmp_path, error, said):
    """The issue-25 outsider's run that never left its detumble mode got a numpy All-NaN warning and a report
    saying "Final error nan deg"."""
    import warnings

    tel = _telemetry(tmp_path, _wheel_columns() | {"att_err_deg": error}, WHEELS + [PD_LAW])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        page = attsim.report(tel, tmp_path / "r.html").read_text()
    assert said in page and "nan deg" not in page


def test_what_other_issues_record_is_shown_only_when_recorded(tmp_path):
    tel = _telemetry(tmp_path, {}, [], wall_s=3.0)
    page = attsim.report(tel, tmp_path / "r.html").read_text()
    assert "3 s wall" in page and "compiling" not in page and "mission loop" not in page
    assert "<th>Environment</th><td>none</td>" in page and "Reaction wheels (" not in page
    effects = _telemetry(tmp_path / "e", {}, [], environment={"effects": ["IGRF-14 field", "J2"], "field": "x"})
    assert "<th>Environment</th><td>IGRF-14 field, J2</td>" in attsim.report(effects, tmp_path / "e.html").read_text()


def test_a_disturbance_switched_off_has_no_panel(tmp_path):
    columns = {f"tau_{kind}_{a}": (1e-7 if kind == "gg" else 0.0) for kind in ("gg", "aero", "srp", "res")
               for a in "xyz"}
    tel = _telemetry(tmp_path, columns, environment={"gravity_gradient": True, "aerodynamic": False,
                                                     "solar_pressure": False, "residual_dipole_Am2": [0, 0, 0]})
    plot = next(f for f in _figures(attsim.report(tel, tmp_path / "r.html").read_text())
                if f["title"].startswith("Disturbance torques"))
    titles = [v["title"]["text"] for k, v in plot["layout"].items() if k.startswith("yaxis")]
    assert titles == ["|τ| [N m]", "gravity gradient [N m]"]


def test_the_arrays_envelope_runs_over_the_whole_run(tmp_path):
    """The envelope along h stopped where the array held next to no momentum (its direction is noise there)."""
    still = {f"rw_{a}_h": (lambda t: np.where(t < 100.0, 0.0, 1e-3 * (t - 100.0) / 100.0)) for a in "xyz"}
    tel = _telemetry(tmp_path, _wheel_columns() | still, WHEELS)
    wheels = next(f for f in _figures(attsim.report(tel, tmp_path / "r.html").read_text())
                  if f["title"].startswith("Reaction wheels"))
    envelope = _bdata(_trace(wheels, "envelope along h")["y"])
    x = _bdata(_trace(wheels, "envelope along h")["x"])
    assert np.isfinite(envelope).all() and x[0] == 0.0 and x[-1] == 199.5
    # along (1, 1, 1)/√3 three orthogonal wheels of 0.012 N m s hold √3 · 0.012
    assert envelope == pytest.approx(np.sqrt(3.0) * 0.012, rel=1e-5)


@pytest.mark.parametrize("error_rad, unit", [(1e-5, "arcsec"), (0.05, "deg")])
def test_an_estimators_attitude_error_is_in_the_unit_its_size_reads_in(tmp_path, error_rad, unit):
    """An MEKF on magnetometer and Sun sensors read '10k arcsec'."""
    from attsim.telemetry.schema import ESTIMATOR_SUFFIXES

    columns = {f"ekf_{suffix}": 0.0 for suffix in ESTIMATOR_SUFFIXES}
    columns.update({"ekf_qw": lambda t: np.cos(0.001 * t + error_rad / 2), "ekf_qx": lambda t: np.sin(
        0.001 * t + error_rad / 2)})
    columns.update({f"ekf_sigma3_att_{a}": 3.0 * error_rad for a in "xyz"})
    tel = _telemetry(tmp_path, columns, [{"name": "ekf", "type": "Estimator"}])
    page = attsim.report(tel, tmp_path / "r.html").read_text()
    plot = next(f for f in _figures(page) if f["title"].startswith("ekf"))
    assert plot["layout"]["yaxis"]["title"]["text"] == f"attitude error [{unit}]"
    scale = 180 / np.pi * (3600 if unit == "arcsec" else 1)
    assert np.nanmax(np.abs(_bdata(_trace(plot, "x error")["y"]))) == pytest.approx(error_rad * scale, rel=1e-3)


def test_a_comparison_has_the_run_pages_units_and_a_chosen_reference(tmp_path):
    a = _pointing_run(tmp_path / "a", name="a")
    b = _telemetry(tmp_path / "b", _wheel_columns() | {"att_err_deg": 0.5, "wx": 0.004}, WHEELS + [PD_LAW], name="b")
    page = attsim.report([a, b], tmp_path / "c.html", reference=1).read_text()
    assert _sections(page) == ["comparison", "pointing", "rates", "wheels", "differences"]
    figures = _figures(page)
    rates = next(f for f in figures if f["title"].startswith("Body rates of every run"))
    titles = [v["title"]["text"] for k, v in rates["layout"].items() if k.startswith("yaxis")]
    assert titles == ["ω_x [deg/s]", "ω_y [deg/s]", "ω_z [deg/s]", "|ω| [deg/s]"]
    assert np.nanmax(_bdata(rates["data"][1]["y"])) == pytest.approx(np.degrees(0.004), rel=1e-6)  # b's ω_x, deg/s
    wheels = next(f for f in figures if f["title"].startswith("Reaction wheels of every run"))
    assert [v["title"]["text"] for k, v in wheels["layout"].items() if k.startswith("yaxis")] == [
        "rw_x [RPM]", "rw_y [RPM]", "rw_z [RPM]", "array momentum [N m s]"]
    differences = next(f for f in figures if f["title"].startswith("Differences to the reference run"))
    assert [t["name"] for t in differences["data"]] == ["a (seed 7, rk4)"] * 2  # against b, the reference
    assert "max attitude difference to b (seed 7, rk4) [deg]" in page
    with pytest.raises(attsim.InputError) as info:
        attsim.report([a, b], tmp_path / "x.html", reference=2)
    assert info.value.field == "reference"


def test_attsim_report_takes_the_reference_run_by_its_directory(tmp_path, capsys):
    from attsim.cli import main

    runs = []
    for name in ("first", "second"):
        mission = attsim.Mission(name, np.diag([1.0, 2.0, 2.5]), (0.3, 0.2, -0.1), duration=5.0, max_step=0.05,
                                 out_dir=tmp_path / name)
        runs.append(mission.run())
    out = tmp_path / "c.html"
    assert main(["report", str(runs[0].path), str(runs[1].path), "--out", str(out), "--reference",
                 str(runs[1].path)]) == 0
    assert "max attitude difference to second (seed 0, rk4) [deg]" in out.read_text()
    assert main(["report", str(runs[0].path), str(runs[1].path), "--reference", str(tmp_path)]) == 2
    assert "reference: must be one of the run directories given" in capsys.readouterr().err


def test_a_declared_criterion_survives_attsim_report_of_the_directory(tmp_path):
    """The page written later from the run directory draws the same window as the one written with the run."""
    from attsim.criteria import record_criteria

    tel = _pointing_run(tmp_path)
    (tmp_path / "meta.json").write_text(json.dumps(tel.meta))
    criteria = judge([Requirement("e [deg]", "att_err_deg", "max", "<", 0.1, window=Window.after(150.0))], tel)
    record_criteria(tmp_path, criteria)
    tel.meta["criteria"] = json.loads((tmp_path / "meta.json").read_text())["criteria"]
    page = attsim.report(tel, tmp_path / "r.html").read_text()
    pointing = next(f for f in _figures(page) if f["title"] == "Pointing error")
    assert _trace(pointing, "requirement: max < 0.1 deg")["x"] == [150.0, 199.5]


def test_a_run_cut_short_gets_no_green_pass(tmp_path):
    """Criteria met over the part of a killed run that ran decide nothing: the verdict says so, not PASS."""
    tel = _telemetry(tmp_path, {}, [], partial=True, stopped="killed")
    page = attsim.report(tel, tmp_path / "r.html", criteria=[("a [-]", 1.0, True, "< 2")]).read_text()
    assert "PASS: all" not in page and "NOT DECIDED: all 1 criteria met over the part that ran, but the run is " \
        "cut short." in page
    whole = _telemetry(tmp_path / "w", {}, [])
    assert "PASS: all 1 criteria met." in attsim.report(whole, tmp_path / "w.html",
                                                        criteria=[("a [-]", 1.0, True, "< 2")]).read_text()


def test_a_comparison_shows_each_runs_margin_and_runs_that_agree_both(tmp_path):
    """Two runs passing a 0.1 deg bound by 0.03 and by 0.0002 read alike as 'PASS'; their margins tell them apart.
    Runs that agree were drawn over each other in one style: the later hid the earlier."""
    runs = []
    for name, worst in (("near", 0.0998), ("far", 0.07)):
        tel = _telemetry(tmp_path / name, _wheel_columns() | {"att_err_deg": worst}, WHEELS + [PD_LAW], name=name)
        criteria = judge([Requirement("pointing error after 100 s [deg]", "att_err_deg", "max", "<", 0.1,
                                      window=Window.after(100.0))], tel)
        tel.meta["criteria"] = [[*row, row.declared] for row in criteria]
        runs.append(tel)
    page = attsim.report(runs, tmp_path / "c.html").read_text()
    side = page.split("<table class='criteria side'>")[1].split("</table>")[0]
    assert "PASS</span> 0.0998<br><small>2e-4 deg inside (0.2 % of the bound)</small>" in side
    assert "PASS</span> 0.07<br><small>0.03 deg inside</small>" in side
    rates = next(f for f in _figures(page) if f["title"].startswith("Body rates of every run"))
    dashes = {t["name"]: t["line"]["dash"] for t in rates["data"] if t["yaxis"] == "y"}
    assert dashes == {"near (seed 7, rk4)": "solid", "far (seed 7, rk4)": "dash"}


def _near_and_far(tmp_path, **far_meta):
    runs = []
    for name, worst, meta in (("near", 0.0998, {}), ("far", 0.07, far_meta)):
        tel = _telemetry(tmp_path / name, _wheel_columns() | {"att_err_deg": worst}, WHEELS + [PD_LAW], name=name,
                         **meta)
        criteria = judge([Requirement("pointing error after 100 s [deg]", "att_err_deg", "max", "<", 0.1,
                                      window=Window.after(100.0))], tel)
        tel.meta["criteria"] = [[*row, row.declared] for row in criteria]
        runs.append((tel, criteria))
    return runs


def test_a_pass_by_a_thin_margin_is_flagged_amber_on_the_run_and_the_comparison_page(tmp_path):
    """The review of issue 23: a pass by 0.2 % of its bound read in the same green as one by 30 %."""
    (near, near_criteria), (far, far_criteria) = _near_and_far(tmp_path)
    page = attsim.report(near, tmp_path / "near.html", criteria=near_criteria).read_text()
    assert "<tr class='thin'><td>PASS</td><td class='name'>pointing error after 100 s [deg]</td>" in page
    assert "2e-4 deg inside (0.2 % of the bound)" in page
    assert ("PASS: all 1 criteria met. 1 by a thin margin (under 5 % of the bound): <span class='thin'>pointing "
            "error after 100 s [deg]</span>.") in page
    assert "tr.thin td:first-child{color:#b36b00" in page  # amber, not the pass green
    far_page = attsim.report(far, tmp_path / "far.html", criteria=far_criteria).read_text()
    assert "<tr class='pass'><td>PASS</td>" in far_page and "thin margin" not in far_page
    side = attsim.report([near, far], tmp_path / "c.html").read_text().split("<table class='criteria side'>")[1]
    assert "<span class='thin'>PASS</span> 0.0998" in side and "<span class='pass'>PASS</span> 0.07" in side


def test_a_comparisons_requirement_has_a_style_of_its_own_and_the_page_says_what_differs(tmp_path):
    """The review of issue 23: the second run (red, dashed) and the requirement (red, dashed) met at the bound;
    and nothing said what differed between 'nominal' and 'biased'."""
    (near, _), (far, _) = _near_and_far(tmp_path, seed=8, max_step_s=0.05)
    page = attsim.report([near, far], tmp_path / "c.html").read_text()
    pointing = next(f for f in _figures(page) if f["title"].startswith("Pointing error of every run"))
    bound = _trace(pointing, "requirement")
    runs = [t for t in pointing["data"] if str(t["name"]).startswith(("near", "far"))]
    assert len(runs) == 2
    assert all((bound["line"]["color"], bound["line"]["dash"]) != (t["line"]["color"], t["line"]["dash"])
               for t in runs)
    assert bound["line"]["color"] not in {t["line"]["color"] for t in runs}
    differs = page.split("<table class='params differs'>")[1].split("</table>")[0]
    assert "<tr><th>seed</th><td>7</td><td>8</td></tr>" in differs
    assert "<tr><th>max_step_s</th><td>0.1</td><td>0.05</td></tr>" in differs
    assert "<th>method</th>" not in differs and "components" not in differs  # the same in both: not listed
    same = attsim.report([near, _near_and_far(tmp_path / "again")[1][0]], tmp_path / "s.html").read_text()
    assert "nothing the runs record as input" in same  # said, rather than a table left out


def test_a_margin_in_no_unit_reads_as_a_number(tmp_path):
    from attsim.reporting.summary import margin_text

    assert margin_text({"margin": 0.06182, "unit": "-"}) == "0.06182 inside"
    assert margin_text({"margin": -0.02, "unit": "deg"}) == "0.02 deg beyond"  # not "-0.02 deg beyond"
