"""The HTML report: sections by run kind, decimation, escaping, banners, comparison, shared plotly.js.

The browser checks (headless Chromium) are in tests/reporting/test_report_browser.py.
"""

import json
import re

import numpy as np
import pytest

import attsim
from attsim import analysis
from attsim import reporting as report_module
from attsim.environment import Environment, Face, FieldHistory, KeplerOrbit

# a detumbling on magnetorquers in a field has no torque-free interval: no free-body section (issue 23: no section
# or link for what a run does not have)
SECTIONS = ["summary", "rates", "actuators", "sensors", "environment", "attitude", "attitude3d"]


@pytest.fixture(scope="module")
def full_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("full")
    env = Environment(KeplerOrbit.circular(600.0, 97.8), field="dipole", faces=Face.cube(0.1, (0.001, 0, -0.002)),
                      residual_dipole_Am2=(1e-4, 0, 0))
    mission = attsim.Mission("full_report", np.diag([0.02, 0.03, 0.025]), (0.05, -0.03, 0.04), duration=600.0,
                             telemetry_dt=2.0, environment=env, out_dir=out,
                             description="tests <script>alert(1)</script>")
    mag = mission.add(attsim.Magnetometer(rate_hz=1.0, noise_T=1e-8))
    mtq = mission.add(attsim.Magnetorquer(0.01))
    mission.add(attsim.BDot(mag, mtq, gain=2e4, period_s=1.0))
    tel = mission.run()
    # a run's name must be a safe file name: user text reaches the page through the description and the criteria
    path = attsim.report(tel, criteria=[("final rate [rad/s]", 0.01, True, "< 0.1"), ("made up", 2.0, False, "< 1"),
                                        ("<b>full</b> & report", 1.0, True, "< 2")])
    return tel, path


def test_every_section_is_present_and_user_text_is_escaped(full_run):
    tel, path = full_run
    page = path.read_text()
    for section in SECTIONS:
        assert f"id='{section}'" in page, section
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<b>full</b>" not in page and "&lt;b&gt;full&lt;/b&gt; &amp; report" in page
    assert page.count("id='plotlyjs-gz'") == 1 and "src=" not in page  # plotly.js embedded once: works offline
    assert "<td>PASS</td>" in page and "<td>FAIL</td>" in page


def test_banners_for_partial_and_nonphysical_runs(tmp_path):
    mission = attsim.Mission("textbook", [2.0, 8.0, 4.0], (0.0, 1.0, 0.1), duration=20.0, allow_nonphysical=True,
                             out_dir=tmp_path)
    tel = mission.run()
    tel.meta["partial"], tel.meta["stopped"] = True, "killed"
    page = attsim.report(tel, tmp_path / "r.html").read_text()
    assert "Partial telemetry" in page and "Non-physical inertia" in page
    assert re.search(r"Spin: about the <b>(major|minor|intermediate)</b> axis", page)


def test_decimation_keeps_extremes_and_the_limit():
    t = np.linspace(0.0, 100.0, 1_000_001)
    y = np.sin(t) + (t == t[123457]) * 5.0  # one spike must survive
    x_out, y_out = report_module._decimate(t, y)
    assert len(x_out) <= report_module.MAX_POINTS
    assert y_out.max() == pytest.approx(y.max(), rel=1e-6) and y_out.min() == pytest.approx(y.min(), rel=1e-6)


def test_spin_classification():
    assert analysis.classify_spin([1, 5, 3], [0.1, 1.0, 0.1])["axis"] == "major"
    assert analysis.classify_spin([3, 1, 4], [0.1, 1.0, 0.1])["axis"] == "minor"
    unstable = analysis.classify_spin([1, 5, 3], [0.1, 0.08, 1.0])  # Bhattu's intermediate-axis case
    assert unstable["axis"] == "intermediate" and not unstable["stable"]
    # Ganapathi's [2 8 4] top spun near z: intermediate and unstable, though its polhode circles the major axis
    flip = analysis.classify_spin([2, 8, 4], [0.0, 0.1, 1.0])
    assert flip["axis"] == "intermediate" and flip["polhode_encircles"] == "major"
    # growth rate (M / I_mid) sqrt((I_mid - I_min)(I_max - I_mid) / (I_min I_max))
    m = np.array([0.1, 0.4, 3.0])
    expected = np.linalg.norm(m) / 3.0 * np.sqrt((3 - 1) * (5 - 3) / (1 * 5))
    assert analysis.classify_spin([1, 5, 3], m / [1, 5, 3])["growth_rate_rad_s"] == pytest.approx(expected)
    # the axes may come in any order: the same body and spin relabelled
    assert analysis.classify_spin([5, 3, 1], [1.0, 0.1, 0.1])["axis"] == "major"


def test_comparison_report(tmp_path):
    runs = []
    for method in ("rk4", "rkmk4"):
        mission = attsim.Mission(f"free_{method}", np.diag([1.0, 2.0, 2.5]), (0.3, 0.2, -0.1), duration=50.0,
                                 method=method, max_step=0.05, out_dir=tmp_path / method)
        runs.append(mission.run())
    runs[1].meta["partial"], runs[1].meta["stopped"] = True, "DivergenceError: max_step too large"
    criteria = [("rk4: error [-]", 1e-9, True, "< 1e-8"), ("rkmk4: error [-]", 1e-9, True, "< 1e-8")]
    page = attsim.report(runs, tmp_path / "compare.html", criteria=criteria).read_text()
    assert "id='comparison'" in page and "max attitude difference" in page
    # each run named by its directory, seed and method; its own criteria and status in its row
    assert "rk4 (seed 0, rk4)" in page and "rkmk4 (seed 0, rkmk4)" in page
    rows = {m: re.search(rf"<tr class='\w+'><td>(\w+)</td><td>{m} \(seed 0", page).group(1) for m in ("rk4", "rkmk4")}
    assert rows == {"rk4": "complete", "rkmk4": "failed"}
    # each run's criteria side by side: a row per criterion, a column per run
    side = page.split("<table class='criteria side'>")[1].split("</table>")[0]
    assert "<td>rk4: error [-]</td><td>&lt; 1e-8</td><td class='num'><span class='pass'>PASS</span> 1e-9</td>" \
        "<td class='num'>–</td>" in side


def test_report_refuses_what_is_not_telemetry(tmp_path):
    with pytest.raises(attsim.InputError, match="telemetry: must be attsim Telemetry"):
        attsim.report(["not a run"], tmp_path / "x.html")




# ---- sections by run kind, on synthetic telemetry (the real Telemetry class, written by hand) ----

def _telemetry(tmp_path, columns: dict, components=(), environment=None, events=(), n=400, dt=0.5, **meta):
    import pandas as pd

    from attsim.telemetry.recorder import Telemetry

    t = np.arange(n) * dt
    df = pd.DataFrame({"qw": np.cos(0.001 * t), "qx": np.sin(0.001 * t), "qy": 0.0 * t, "qz": 0.0 * t,
                       "wx": 0.002 + 0 * t, "wy": 0.0 * t, "wz": 0.0 * t}, index=pd.Index(t, name="t"))
    for name, values in columns.items():
        df[name] = values(t) if callable(values) else values
    base = {"name": "synthetic", "inertia_kg_m2": np.diag([0.05, 0.06, 0.02]).tolist(), "omega0_rad_s": [0.002, 0, 0],
            "q0": [1, 0, 0, 0], "duration_s": float(t[-1]) if n else 0.0, "method": "rk4", "seed": 7, "max_step_s": 0.1,
            "telemetry_dt_s": dt, "components": list(components), "environment": environment, **meta}
    events = pd.DataFrame(list(events), columns=["t", "kind", "actuator", "what"]) if events else \
        pd.DataFrame(columns=["t", "kind"])
    return Telemetry(tmp_path, base, df=df, events=events)


WHEELS = [{"name": f"rw_{a}", "type": "ReactionWheel", "axis": list(v), "max_torque_Nm": 2e-3, "max_speed_rad_s": 600.0,
           "inertia_kg_m2": 2e-5} for a, v in zip("xyz", np.eye(3))]
TARGET = [np.cos(0.2), np.sin(0.2), 0.0, 0.0]


def _wheel_columns(torque_x=lambda t: 1e-4 * np.sin(t)):
    columns = {}
    for a in "xyz":
        columns[f"rw_{a}_speed"] = lambda t: 100.0 * np.sin(0.01 * t)
        columns[f"rw_{a}_h"] = lambda t: 2e-3 * np.sin(0.01 * t)
        columns[f"rw_{a}_torque"] = torque_x if a == "x" else (lambda t: 1e-5 * np.cos(t))
    return columns


def _figures(page: str) -> list[dict]:
    """The figure data of a page, in order, with the title above each."""
    found = re.findall(r"data-title='([^']*)'[^>]*></div>"
                       r"<script type='application/json' id='plot-\d+-data'>(.*?)</script>", page, flags=re.S)
    return [dict(json.loads(data.replace("<\\/", "</")), title=title) for title, data in found]


def _sections(page: str) -> list[str]:
    return re.findall(r"<section id='(\w+)'", page)


def test_a_controlled_run_has_no_polhode_and_says_why(tmp_path):
    pd_law = {"name": "qpd", "type": "QuaternionPD", "period_s": 1.0, "target_q": TARGET}
    tel = _telemetry(tmp_path, _wheel_columns(), WHEELS + [pd_law])
    page = attsim.report(tel, tmp_path / "r.html").read_text()
    sections = _sections(page)
    assert "stability" not in sections and "momentum" not in sections and "nutation" not in sections
    assert sections[:4] == ["summary", "pointing", "rates", "actuators"]  # what is looked at first, first
    # no torque-free interval: no free-body section and no link to one (it said only that it was left out)
    assert "freebody" not in sections and "#freebody" not in page and "Free-body" not in page


def test_a_torque_free_run_has_the_free_body_sections(tmp_path):
    tel = _telemetry(tmp_path, {})
    page = attsim.report(tel, tmp_path / "r.html").read_text()
    sections = _sections(page)
    for section in ("momentum", "nutation", "stability", "attitude3d"):
        assert section in sections
    assert "freebody" not in sections and "actuators" not in sections and "pointing" not in sections
    assert any(t.startswith("Polhode") for t in (f["title"] for f in _figures(page)))


def test_free_body_diagnostics_over_the_torque_free_interval_of_a_controlled_run(tmp_path):
    schedule = {"name": "kick", "type": "TorqueSchedule"}
    torque = {f"kick_tau_{a}": (lambda t: np.where(t < 20.0, 1e-5, 0.0)) for a in "xyz"}
    tel = _telemetry(tmp_path, torque, [schedule])
    page = attsim.report(tel, tmp_path / "r.html").read_text()
    assert "momentum" in _sections(page) and "Over the longest torque-free interval, t = 20 to 199.5 s" in page
    schedule_plot = next(f for f in _figures(page) if f["title"].startswith("kick"))
    assert not schedule_plot["layout"]["shapes"]  # a torque schedule cannot saturate: never shaded


def test_saturation_is_shaded_only_for_the_wheel_that_saturated_and_only_there(tmp_path):
    events = [(10.0, "saturation", "rw_x", "torque"), (12.5, "saturation_end", "rw_x", "torque")]
    tel = _telemetry(tmp_path, _wheel_columns(), WHEELS, events=events)
    wheels = next(f for f in _figures(attsim.report(tel, tmp_path / "r.html").read_text())
                  if f["title"].startswith("Reaction wheels"))
    shapes = wheels["layout"]["shapes"]
    assert [(s["name"], s["x0"], s["x1"]) for s in shapes] == [("rw_x torque-limited", 10.0, 12.5)]
    torque_axis = next(k.replace("axis", "") for k, v in wheels["layout"].items()
                       if k.startswith("yaxis") and v["title"]["text"] == "motor torque [N m]")
    assert any(t["name"] == "rw_x" and t["yaxis"] == torque_axis for t in wheels["data"])
    assert shapes[0]["yref"] == f"{torque_axis} domain"  # on the torque panel, not the speed panel
    rw_x_colour = next(t["line"]["color"] for t in wheels["data"] if t["name"] == "rw_x")
    assert shapes[0]["fillcolor"] == rw_x_colour
    # a run where no wheel saturated has no shading at all
    quiet = _telemetry(tmp_path / "quiet", _wheel_columns(), WHEELS)
    quiet_wheels = next(f for f in _figures(attsim.report(quiet, tmp_path / "q.html").read_text())
                        if f["title"].startswith("Reaction wheels"))
    assert quiet_wheels["layout"]["shapes"] == []


def test_wheel_panels_have_their_units_and_limits(tmp_path):
    tel = _telemetry(tmp_path, _wheel_columns(), WHEELS)
    wheels = next(f for f in _figures(attsim.report(tel, tmp_path / "r.html").read_text())
                  if f["title"].startswith("Reaction wheels"))
    titles = [v["title"]["text"] for k, v in wheels["layout"].items() if k.startswith("yaxis")]
    assert titles == ["wheel speed [RPM]", "wheel momentum h [N m s]", "array momentum [N m s]", "motor torque [N m]"]
    names = [t["name"] for t in wheels["data"]]
    assert "speed limit ±5730 RPM" in names  # 600 rad/s, to four digits; every wheel's limit
    assert "capacity ±0.012 N m s" in names
    # torques of 1e-4 N m against a 2e-3 N m limit: the panel fits the torques, the limit is named off scale
    assert "torque limit ±0.002 N m (off scale)" in names
    torque_axis = next(v for k, v in wheels["layout"].items()
                       if k.startswith("yaxis") and v["title"]["text"] == "motor torque [N m]")
    assert 1e-4 < torque_axis["range"][1] < 1.2e-4 and -1.2e-4 < torque_axis["range"][0] < -1e-4
    assert "envelope along h (array)" in names


def test_pointing_error_from_the_controller_target_with_the_requirement_line(tmp_path):
    pd_law = {"name": "qpd", "type": "QuaternionPD", "period_s": 1.0, "target_q": TARGET}
    tel = _telemetry(tmp_path, _wheel_columns(), WHEELS + [pd_law])
    criteria = [("pointing error after 240 s [deg]", 0.05, True, "< 0.1")]
    figures = _figures(attsim.report(tel, tmp_path / "r.html", criteria=criteria).read_text())
    pointing = next(f for f in figures if f["title"] == "Pointing error")
    axis = pointing["layout"]["yaxis"]
    assert axis["type"] == "log" and axis["title"]["text"] == "pointing error [deg]"
    requirement = next(t for t in pointing["data"] if t["name"].startswith("requirement"))
    assert requirement["y"] == [0.1, 0.1]
    error = next(t for t in pointing["data"] if t["name"] == "pointing error")
    first = np.frombuffer(__import__("base64").b64decode(error["y"]["bdata"]), dtype=np.float32)[0]
    assert first == pytest.approx(np.degrees(0.4), rel=1e-5)  # q = identity at t = 0, target 0.4 rad about x


def test_the_engine_records_a_controllers_target_and_a_wheels_inertia():
    from attsim.engine.mission import _describe_component

    wheel = attsim.ReactionWheel("rw", (1, 0, 0), inertia_kg_m2=2e-5, max_torque_Nm=1e-3, max_speed_rad_s=500.0)
    law = attsim.QuaternionPD(TARGET, kp=1e-3, kd=1e-2, period_s=1.0, wheels=[wheel],
                              attitude_source=attsim.TRUTH, rate_source=attsim.TRUTH)
    assert _describe_component(law)["target_q"] == pytest.approx(TARGET)
    assert _describe_component(wheel)["inertia_kg_m2"] == 2e-5


def test_sensors_are_errors_in_natural_units(tmp_path):
    gyro = {"name": "gyro", "type": "Gyro"}
    columns = {f"gyro_{a}": (lambda t: 1e-6 + 0 * t) for a in "xyz"}
    columns.update({f"gyro_true_{a}": 0.0 for a in "xyz"})
    columns.update({f"mag_{a}": 2e-8 for a in "xyz"})
    columns.update({f"mag_true_{a}": 0.0 for a in "xyz"})
    tel = _telemetry(tmp_path, columns, [gyro, {"name": "mag", "type": "Magnetometer"}])
    figures = _figures(attsim.report(tel, tmp_path / "r.html").read_text())
    gyro_plot = next(f for f in figures if f["title"].startswith("gyro"))
    assert gyro_plot["layout"]["yaxis"]["title"]["text"] == "error [deg/h]"
    y = np.frombuffer(__import__("base64").b64decode(gyro_plot["data"][0]["y"]["bdata"]), dtype=np.float32)
    assert y[0] == pytest.approx(np.degrees(1e-6) * 3600, rel=1e-5)
    mag_plot = next(f for f in figures if f["title"].startswith("mag"))
    assert mag_plot["layout"]["yaxis"]["title"]["text"] == "error [nT]"


def test_estimation_and_modes_sections_come_with_their_columns(tmp_path):
    from attsim.telemetry.schema import ESTIMATOR_SUFFIXES

    columns = {f"ekf_{suffix}": 1e-6 for suffix in ESTIMATOR_SUFFIXES}  # the columns attsim.MEKF writes
    columns.update({"ekf_qw": 1.0, "ekf_qx": 1e-5, "ekf_qy": 0.0, "ekf_qz": 0.0, "ekf_nis_st": 3.0,
                    "mode": lambda t: np.where(t < 100, 0, 1)})
    columns.update({f"ekf_sigma3_att_{a}": 1e-4 for a in "xyz"})
    tel = _telemetry(tmp_path, columns, [{"name": "ekf", "type": "Estimator"}], modes=["detumble", "point"])
    page = attsim.report(tel, tmp_path / "r.html").read_text()
    assert "estimation" in _sections(page) and "timeline" in _sections(page)
    estimation = next(f for f in _figures(page) if f["title"].startswith("ekf"))
    names = [t["name"] for t in estimation["data"]]
    assert "±3σ x" in names and "NIS star tracker" in names and "bias x error" in names
    timeline = next(f for f in _figures(page) if f["title"] == "Modes and events")
    assert timeline["layout"]["yaxis"]["ticktext"] == ["detumble", "point"]
    plain = _telemetry(tmp_path / "plain", _wheel_columns(), WHEELS)
    assert "estimation" not in _sections(attsim.report(plain, tmp_path / "p.html").read_text())


def test_extra_figures_get_their_own_section(tmp_path):
    import plotly.graph_objects as go

    tel = _telemetry(tmp_path, {})
    figure = go.Figure(go.Scatter(x=[0, 1], y=[2, 3]), layout=dict(title="my </script> figure"))
    page = attsim.report(tel, tmp_path / "r.html", extra_figures=[figure]).read_text()
    assert _sections(page)[-1] == "figures" and "my &lt;/script&gt; figure" in page
    with pytest.raises(attsim.InputError, match=r"extra_figures\[0\]: must be a plotly figure \(got str\)"):
        attsim.report(tel, tmp_path / "r.html", extra_figures=["no"])


def test_pages_written_together_share_one_plotly_js(tmp_path):
    from attsim.reporting import report_runs

    runs = [_telemetry(tmp_path / name, {}, name=name) for name in ("a", "b")]
    pages = report_runs(runs, criteria=[("a: x [-]", 1.0, True, "< 2")])
    shared = list(tmp_path.glob("plotly-*.min.js"))
    assert len(shared) == 1 and [p.name for p in pages] == ["report.html", "report.html", "comparison.html"]
    for page in pages:
        text = page.read_text()
        relative = f"{'../' if page.name == 'report.html' else ''}{shared[0].name}"
        assert "id='plotlyjs-gz'" not in text and f"<script defer src='{relative}'>" in text
        assert page.stat().st_size < 300_000
    single = attsim.report(runs[0], tmp_path / "single.html")
    assert "id='plotlyjs-gz'" in single.read_text() and single.stat().st_size < 2_500_000  # embedded, compressed


def test_summary_rounds_numbers_and_tabulates_the_environment(full_run):
    tel, path = full_run
    page = path.read_text()
    assert "{'orbit'" not in page and "<table class='environment'>" in page
    assert re.search(r"Simulated time \[s\]</th><td>600 of 600</td>", page)


def test_number_formatting_and_palette():
    from attsim.reporting.style import PALETTE, fmt, style

    assert fmt(11812.07227609611, 6) == "11812.1" and fmt(0.5) == "0.5" and fmt(1e-9) == "1e-9" and fmt(3) == "3"
    assert fmt(1.23456e7) == "1.235e7" and fmt(float("nan")) == "nan"
    looks = [(style(k)["color"], style(k)["dash"]) for k in range(24)]
    assert len(set(PALETTE)) == 12 and len(set(looks)) == 24  # twelve colours, then dashed


def test_a_mission_scripts_figures_hook_reaches_its_report(tmp_path):
    import plotly.graph_objects as go

    from attsim import cli

    def build(out_dir=None):
        return attsim.Propagation("hooked", [1.0, 2.0, 2.5], (0.3, 0.2, -0.1), duration=5.0, max_step=0.05,
                                  out_dir=out_dir)

    def figures(tel):
        return [go.Figure(go.Scatter(x=tel.df.index, y=tel.df["wx"]), layout=dict(title="my own wx"))]

    assert cli.execute(build, lambda tel: [], out=str(tmp_path / "run"), figures=figures) == 0
    page = (tmp_path / "run" / "report.html").read_text()
    assert "id='figures'" in page and "data-title='my own wx'" in page


def test_a_real_estimator_run_has_its_estimation_and_pointing_sections(tmp_path):
    from attsim import rotations

    m = attsim.Mission("mekf_report", np.diag([0.06, 0.055, 0.02]), (0.0, 0.0, 0.0), duration=60.0, telemetry_dt=1.0,
                       out_dir=tmp_path)
    wheels = [m.add(attsim.ReactionWheel(f"rw_{a}", d, 2e-5, 2e-3, 600.0)) for a, d in zip("xyz", np.eye(3))]
    gyro = m.add(attsim.Gyro(10.0, arw_rad_sqrt_s=1e-5, bias_rad_s=(2e-4, 0.0, -1e-4)))
    tracker = m.add(attsim.StarTracker(1.0, noise_arcsec=10.0))
    mekf = m.add(attsim.MEKF(gyro, star_tracker=tracker))
    m.add(attsim.QuaternionPD(rotations.axis_angle_to_quat([0, 0, 1], 0.3), kp=5e-4, kd=9e-3, period_s=0.5,
                              wheels=wheels, attitude_source=mekf, rate_source=mekf))
    page = attsim.report(m.run()).read_text()
    sections = _sections(page)
    assert sections.index("pointing") < sections.index("estimation")
    estimation = next(f for f in _figures(page) if f["title"].startswith("mekf"))
    names = [t["name"] for t in estimation["data"]]
    assert "±3σ x" in names and "bias x error" in names and "NIS star tracker" in names


def test_sensor_gaps_are_shaded_and_faults_are_timeline_events(tmp_path):
    m = attsim.Mission("gaps", np.diag([0.05, 0.06, 0.02]), (0.01, -0.02, 0.015), duration=60.0, telemetry_dt=1.0,
                       field=(2e-5, -1e-5, 3e-5), out_dir=tmp_path / "run")
    m.add(attsim.Magnetometer(1.0, noise_T=1e-8, faults=[attsim.SensorFault(10.0, "dropout", 5.0),
                                                        attsim.SensorFault(30.0, "stuck", 5.0)]))
    m.add(attsim.StarTracker(1.0, noise_arcsec=5.0, faults=[attsim.SensorFault(40.0, "dropout")]))
    tel = m.run()
    page = attsim.report(tel, tmp_path / "r.html").read_text()
    figures = _figures(page)
    mag = next(f for f in figures if f["title"].startswith("mag"))
    gaps = [(s["x0"], s["x1"]) for s in mag["layout"]["shapes"] if s["name"] == "mag: no output"]
    assert gaps == [(10.0, 15.0)]  # from the first sample without output to the next with one
    tracker = next(f for f in figures if f["title"].startswith("st"))
    assert [(s["x0"], s["x1"]) for s in tracker["layout"]["shapes"]] == [(40.0, 60.0)]
    timeline = next(f for f in figures if f["title"] == "Modes and events")
    fault = next(t for t in timeline["data"] if t["name"] == "fault")
    assert fault["text"] == ["mag", "mag", "st"]


# ---- what an outsider found (issue 13, item 3) and the rules added with it ----

def _bdata(values):
    import base64

    if isinstance(values, dict):
        return np.frombuffer(base64.b64decode(values["bdata"]), dtype={"f4": np.float32, "f8": np.float64}[
            values["dtype"]])
    return np.asarray(values, dtype=float)


def test_an_estimator_started_with_a_large_covariance_is_shown_converged(tmp_path):
    from attsim.telemetry.schema import ESTIMATOR_SUFFIXES

    n = 400
    decay = lambda t: 1e-5 * (1.0 + 1e3 * np.exp(-t / 5.0))  # noqa: E731  3σ from 1e-2 rad down to 1e-5
    columns = {f"ekf_{suffix}": 0.0 for suffix in ESTIMATOR_SUFFIXES}
    columns.update({"ekf_qw": lambda t: np.cos(0.001 * t), "ekf_qx": lambda t: np.sin(0.001 * t),  # the truth
                    "ekf_nis_st": lambda t: np.where(np.arange(len(t)) % 2 == 0, 3.0, np.nan),
                    "ekf_nis_mag": np.nan, "ekf_nis_sun": np.nan})  # a star tracker's updates only
    columns.update({f"ekf_sigma3_att_{a}": decay for a in "xyz"})
    columns.update({f"ekf_sigma3_bias_{a}": 1e-6 for a in "xyz"})
    tel = _telemetry(tmp_path, columns, [{"name": "ekf", "type": "Estimator"}], n=n)
    page = attsim.report(tel, tmp_path / "r.html").read_text()
    plot = next(f for f in _figures(page) if f["title"].startswith("ekf"))
    layout = plot["layout"]
    attitude_axis = next(v for k, v in layout.items() if k.startswith("yaxis") and "attitude" in v["title"]["text"])
    steady_arcsec = 1e-5 * 180 / np.pi * 3600
    # settled from the first row within 3 times the steady 1e-5 rad: 1 + 1e3 exp(-t/5) <= 3 from t = 5 ln 500 =
    # 31.07 s, i.e. the row at 31.5 s; the range holds the bounds from there (and 10 %), not the 1e-2 rad start
    assert attitude_axis["range"][1] == pytest.approx(1.1 * (1.0 + 1e3 * np.exp(-31.5 / 5.0)) * steady_arcsec,
                                                      rel=1e-4)
    assert "double-click twice" in plot["title"]
    nis_axis = next(k for k, v in layout.items() if k.startswith("yaxis") and "NIS" in v["title"]["text"])
    names = [t["name"] for t in plot["data"] if t["yaxis"] == nis_axis.replace("axis", "")]
    # chi-square, 3 degrees of freedom: 2.5% and 97.5% points 0.2158 and 9.348 (statistical tables)
    assert "95% band 0.216 to 9.35" in names and "mean 3 (consistent filter)" in names
    nis = next(t for t in plot["data"] if t["name"] == "NIS star tracker")
    assert nis["mode"] == "markers" and np.all(_bdata(nis["y"]) == 3.0)  # the rows without an update left out


def test_disturbances_each_on_its_own_scale_with_their_magnitudes_on_a_log_axis(tmp_path):
    columns = {}
    for k, source in enumerate(("gg", "aero", "srp", "res")):
        for a in "xyz":
            columns[f"tau_{source}_{a}"] = 10.0 ** (-6 - 2 * k)  # four sources, two decades apart
    env = {"gravity_gradient": True}
    tel = _telemetry(tmp_path, columns, environment=env)
    plot = next(f for f in _figures(attsim.report(tel, tmp_path / "r.html").read_text())
                if f["title"].startswith("Disturbance torques"))
    titles = [v["title"]["text"] for k, v in sorted(plot["layout"].items()) if k.startswith("yaxis")]
    assert titles[0] == "|τ| [N m]" and plot["layout"]["yaxis"]["type"] == "log"
    assert set(titles[1:]) == {"gravity gradient [N m]", "aerodynamic [N m]", "solar pressure [N m]",
                               "residual dipole [N m]"}
    magnitude = next(t for t in plot["data"] if t["name"] == "residual dipole")
    assert _bdata(magnitude["y"])[0] == pytest.approx(np.sqrt(3) * 1e-12, rel=1e-6)


def test_the_ground_track_has_coastlines_and_the_ground_target(tmp_path):
    from attsim.reporting import environment

    coast = environment._coastline()
    assert coast is not None and 4000 < np.isfinite(coast[0]).sum() < 20000
    finite = np.isfinite(coast[0])
    assert np.all(np.abs(coast[0][finite]) <= 180.0) and np.all(np.abs(coast[1][finite]) <= 90.0)
    # no stroke across the map: consecutive points of one polyline are close
    step = np.abs(np.diff(coast[0]))
    assert np.nanmax(step) < 180.0
    orbit = {"orbit": "KeplerOrbit", "epoch": "2025-06-21T06:00:00",
             "kepler": {"semi_major_axis_m": 6.928e6, "eccentricity": 0.0, "inclination_deg": 97.6, "raan_deg": 80.0,
                        "arg_perigee_deg": 0.0, "mean_anomaly_deg": 0.0, "j2": True}}
    station = {"name": "qpd", "type": "QuaternionPD", "ground_target": {"lat_deg": 19.13, "lon_deg": 72.92,
                                                                         "min_elevation_deg": 10.0}}
    tel = _telemetry(tmp_path, {}, [station], environment=orbit)
    plot = next(f for f in _figures(attsim.report(tel, tmp_path / "r.html").read_text())
                if f["title"].startswith("Ground track"))
    names = [t["name"] for t in plot["data"]]
    assert names[:3] == ["coastline", "ground track", "start"]
    target = next(t for t in plot["data"] if t["name"].startswith("ground target of qpd"))
    assert target["x"] == [72.92] and target["y"] == [19.13]


def test_the_engine_records_a_ground_target():
    from attsim.engine.mission import _describe_component
    from attsim.guidance.targets import GroundTarget

    wheels = [attsim.ReactionWheel(f"rw{k}", axis, 2e-5, 1e-3, 600.0) for k, axis in enumerate(np.eye(3))]
    law = attsim.QuaternionPD(kp=1e-3, kd=1e-2, period_s=1.0, wheels=wheels, target=GroundTarget(19.13, 72.92, 50.0),
                              attitude_source=attsim.TRUTH, rate_source=attsim.TRUTH)
    assert _describe_component(law)["ground_target"] == {"lat_deg": 19.13, "lon_deg": 72.92, "min_elevation_deg": 10.0}


def test_nutation_is_the_angle_to_the_axis_either_way_along_it(tmp_path):
    # J = diag(0.05, 0.06, 0.02): a spin about the major axis y with H along -y is 0 deg of nutation, not 180
    tel = _telemetry(tmp_path, {"wx": 0.0, "wy": -0.3})
    plot = next(f for f in _figures(attsim.report(tel, tmp_path / "r.html").read_text())
                if f["title"].startswith("Nutation"))
    assert np.allclose(_bdata(plot["data"][0]["y"]), 0.0, atol=1e-6)


def test_a_comparison_shares_the_criteria_by_their_labels(tmp_path):
    from attsim.reporting import comparison

    runs = [_telemetry(tmp_path / m, {}, name=f"free_{m}", method=m) for m in ("exact", "rk4", "dmv")]
    criteria = [("exact: error vs exact [-]", 1e-16, True, "< 1e-11"),
                ("rk4: error vs exact [-]", 1e-9, True, "< 1e-8"),
                ("error of free dmv [-]", 1e-12, False, "< 1e-13"), ("energy of every run [-]", 1.0, True, "< 2")]
    own, common = comparison.share_criteria(runs, criteria)
    assert own == [[criteria[0]], [criteria[1]], [criteria[2]]] and common == [criteria[3]]
    page = attsim.report(runs, tmp_path / "c.html", criteria=criteria).read_text()
    status = {run: state for state, run in re.findall(r"<tr class='\w+'><td>(\w+)</td><td>(\w+) \(seed", page)}
    assert status == {"exact": "complete", "rk4": "complete", "dmv": "failed"}  # dmv's own criterion failed
    assert "Criteria of the mission (naming no single run)" in page and "energy of every run" in page
    many = [_telemetry(tmp_path / f"m{k}", {}, name=f"run{k}") for k in range(5)]
    assert comparison.title(many).startswith("Comparison of 5 runs:")
    plot = next(f for f in _figures(attsim.report(many, tmp_path / "m.html").read_text())
                if f["title"].startswith("Body rates of every run"))
    wx = [t for t in plot["data"] if t["yaxis"] == "y"]
    assert len({t["line"]["color"] for t in wx}) == 5  # a colour per run


def test_a_comparison_of_runs_with_different_columns_and_an_empty_run(tmp_path):
    full = _telemetry(tmp_path / "a", _wheel_columns(), WHEELS, name="a")
    short = _telemetry(tmp_path / "b", {}, name="b", n=30)
    short = type(short)(tmp_path / "b", short.meta, df=short.df.drop(columns=["wz"]), events=short.events)
    empty = _telemetry(tmp_path / "c", {}, name="c", n=0)
    page = attsim.report([full, short, empty], tmp_path / "c.html").read_text()
    rows = re.findall(r"<tr class='\w+'><td>\w+</td><td>(\w) \(seed 7, rk4\)</td><td class='num'>(\d+)</td>", page)
    assert rows == [("a", "400"), ("b", "30"), ("c", "0")]


def test_a_sensor_without_output_is_a_sentence_and_no_plot_is_ever_empty(tmp_path):
    nan = np.nan
    columns = {f"gyro_{a}": nan for a in "xyz"} | {f"gyro_true_{a}": 0.0 for a in "xyz"}
    columns |= {f"st_q{a}": nan for a in "wxyz"} | {f"st_true_q{a}": 0.5 for a in "wxyz"}
    tel = _telemetry(tmp_path, columns, [{"name": "gyro", "type": "Gyro"}, {"name": "st", "type": "StarTracker"}])
    page = attsim.report(tel, tmp_path / "r.html").read_text()
    assert page.count("No output over the whole run: every measurement is NaN") == 2
    assert not any(f["title"].startswith(("gyro", "st ")) for f in _figures(page))
    for figure in _figures(page):  # every figure left has something to draw
        drawn = [t for t in figure["data"] if isinstance(t.get("y"), dict)
                 or isinstance(t.get("y"), list) and None not in t["y"]]
        assert any(np.isfinite(_bdata(t["y"])).any() for t in drawn), figure["title"]


@pytest.mark.parametrize("rows", [0, 1, 2])
def test_a_run_of_no_one_or_two_rows_has_a_page(tmp_path, rows):
    tel = _telemetry(tmp_path, _wheel_columns(), WHEELS, n=rows)
    page = attsim.report(tel, tmp_path / "r.html").read_text()
    assert "id='summary'" in page and (rows > 0 or _sections(page) == ["summary"])


def test_user_text_is_never_markup_in_the_page_nor_in_its_plots(tmp_path):
    evil = "<script>alert(1)</script><!--<b>x</b>&amp;"
    columns = {f"{evil}_m_{a}": 0.01 for a in "xyz"} | {"mode": lambda t: np.where(t < 50, 0, 1)}
    tel = _telemetry(tmp_path, columns, [{"name": evil, "type": "Magnetorquer", "dipole_max_Am2": 0.1}],
                     events=[(3.0, evil, evil, evil)], modes=[evil, "b"], description=evil)
    page = attsim.report(tel, tmp_path / "r.html", criteria=[(evil, 1.0, True, evil)]).read_text()
    assert "<script>alert" not in page and "<!--<b>" not in page and "<b>x</b>" not in page
    for block in re.findall(r"<script type='application/json'[^>]*>(.*?)</script>", page, flags=re.S):
        assert "<" not in block and ">" not in block and "&" not in block  # \u escapes only
    figures = _figures(page)
    timeline = next(f for f in figures if f["title"] == "Modes and events")
    # plotly reads HTML in names: attsim's figures give it escaped text, shown as written
    event = next(t for t in timeline["data"] if t["name"].startswith("&lt;script&gt;alert(1)&lt;/script&gt;"))
    assert event["name"].endswith("…")  # a long name is cut in the legend, whole in the hover
    assert "&lt;script&gt;alert(1)&lt;/script&gt;&lt;!--&lt;b&gt;x&lt;/b&gt;&amp;amp;" in event["hovertemplate"]
    assert timeline["layout"]["yaxis"]["ticktext"][0].endswith("…")  # a long mode name cut on the axis


def test_the_page_carries_the_small_plotly_bundle_unless_a_figure_needs_the_full_one(tmp_path):
    import plotly.graph_objects as go

    from attsim.reporting import page as page_module

    tel = _telemetry(tmp_path, {})
    small = attsim.report(tel, tmp_path / "small.html")
    assert "(gl3d partial bundle)" in small.read_text() and small.stat().st_size < 1_500_000
    bars = attsim.report(tel, tmp_path / "bars.html", extra_figures=[go.Figure(go.Bar(x=[1, 2], y=[3, 4]))])
    assert "(gl3d partial bundle)" not in bars.read_text() and bars.stat().st_size > 2_000_000
    assert page_module._library(False).label.startswith(f"plotly.js v{page_module._plotly_version()}")


def test_a_torque_free_interval_at_rest_has_no_free_body_section(tmp_path):
    schedule = {"name": "kick", "type": "TorqueSchedule"}
    kick = {f"kick_tau_{a}": (lambda t: np.where(t >= 150.0, 1e-5, 0.0)) for a in "xyz"}
    at_rest = {"wx": lambda t: np.where(t >= 150.0, 0.01 * (t - 150.0), 0.0)}
    tel = _telemetry(tmp_path, kick | at_rest, [schedule])
    page = attsim.report(tel, tmp_path / "r.html").read_text()
    assert "momentum" not in _sections(page) and "freebody" not in _sections(page) and "#freebody" not in page


def test_a_saturation_of_an_instant_is_still_shaded(tmp_path):
    events = [(10.0, "saturation", "rw_y", "speed"), (10.0, "saturation_end", "rw_y", "speed")]
    tel = _telemetry(tmp_path, _wheel_columns(), WHEELS, events=events)
    wheels = next(f for f in _figures(attsim.report(tel, tmp_path / "r.html").read_text())
                  if f["title"].startswith("Reaction wheels"))
    shape = wheels["layout"]["shapes"][0]
    assert shape["name"] == "rw_y at its speed limit" and shape["x1"] - shape["x0"] == pytest.approx(199.5 / 400)


def test_commanded_and_delivered_wheel_torque_and_twelve_plus_wheels_apart(tmp_path):
    wheels = [{**WHEELS[k % 3], "name": f"w{k}"} for k in range(14)]
    columns = {}
    for k in range(14):
        columns |= {f"w{k}_speed": 50.0 + k, f"w{k}_h": 1e-3, f"w{k}_torque": 1e-3, f"w{k}_torque_cmd": 1.5e-3}
    tel = _telemetry(tmp_path, columns, wheels)
    plot = next(f for f in _figures(attsim.report(tel, tmp_path / "r.html").read_text())
                if f["title"].startswith("Reaction wheels"))
    assert "solid: delivered, dotted: commanded" in plot["title"]
    commanded = next(t for t in plot["data"] if t["name"] == "w3 commanded")
    assert commanded["line"]["dash"] == "dot" and np.all(_bdata(commanded["y"]) == np.float32(1.5e-3))
    speeds = [t for t in plot["data"] if t["yaxis"] == "y" and t["name"].startswith("w")]
    assert len({(t["line"]["color"], t["line"]["dash"]) for t in speeds}) == 14
    legend = [t["name"] for t in plot["data"] if t.get("showlegend", True)]
    assert legend.count("w0") == 1  # one entry for a wheel's speed, momentum and torque


def test_a_real_wheel_run_logs_the_commanded_torque_on_both_paths(tmp_path):
    def run(compiled):
        m = attsim.Mission("cmd", np.diag([0.06, 0.055, 0.02]), (0.0, 0.0, 0.0), duration=5.0, telemetry_dt=0.5,
                           out_dir=tmp_path / str(compiled))
        m.add(attsim.ReactionWheel("rw", (1.0, 0.0, 0.0), 2e-5, 1e-4, 600.0))
        # asks for 3e-4 N m of a 1e-4 N m motor, then -5e-5 N m
        m.add(attsim.CommandSchedule("rw", [(0.0, 3e-4), (2.0, -5e-5)]))
        return m.run(compiled=compiled).df

    python, compiled = run(False), run(True)
    for df in (python, compiled):
        t = df.index.to_numpy()
        assert np.array_equal(df["rw_torque_cmd"].to_numpy(), np.where(t < 2.0, 3e-4, -5e-5))  # before the limit
        assert np.array_equal(df["rw_torque"].to_numpy(), np.where(t < 2.0, 1e-4, -5e-5))  # what the motor gives


def test_the_pointing_requirement_is_never_the_estimators():
    from attsim.reporting.pointing import _requirement_deg

    criteria = [("MEKF attitude error over the last two orbits [deg]", 0.9, True, "< 3"),
                ("time to leave detumbling [s]", 3566.0, True, "<= 5906"),
                ("max error to the orbit frame over the fourth orbit [deg]", 17.5, True, "< 25"),
                ("attitude error of nav inside its bound [fraction]", 0.96, True, "> 0.9")]
    meta = {"components": [{"name": "nav", "type": "MEKF"}]}
    deg, found = _requirement_deg(criteria, meta)
    assert deg == 25.0 and found.label.startswith("max error to the orbit frame")
    deg, found = _requirement_deg(criteria + [("pointing error after 60 s [arcsec]", 20.0, True, "< 36")], meta)
    assert deg == pytest.approx(0.01) and found.unit == "arcsec"  # a criterion naming pointing comes first
    assert _requirement_deg(criteria[:2], meta) is None


def test_a_body_torque_is_drawn_as_its_held_torque(tmp_path):
    actuator = {"name": "bt", "type": "BodyTorque"}
    torque = {f"bt_tau_{a}": (lambda t: np.where(t < 50.0, 2e-5, 0.0)) for a in "xyz"}
    page = attsim.report(_telemetry(tmp_path, torque, [actuator]), tmp_path / "r.html").read_text()
    plot = next(f for f in _figures(page) if f["title"].startswith("bt (BodyTorque)"))
    assert [t["name"] for t in plot["data"]] == ["τ_x", "τ_y", "τ_z"] and not plot["layout"]["shapes"]


def test_the_nis_bands_are_the_chi_square_quantiles():
    from scipy.stats import chi2

    from attsim.reporting.estimation import _chi2_quantiles

    for dof in (2, 3):
        assert np.allclose(_chi2_quantiles([0.025, 0.975], dof), chi2.ppf([0.025, 0.975], dof), rtol=1e-14, atol=0)
    assert np.allclose(_chi2_quantiles([0.025, 0.975], 2), [-2 * np.log(0.975), -2 * np.log(0.025)], rtol=1e-14)


def _turning_field(t):
    return 3e-5 * np.stack([np.cos(1e-3 * np.asarray(t)), 0.0 * np.asarray(t), np.sin(1e-3 * np.asarray(t))], -1)


_HISTORY = FieldHistory([0.0, 1.0, 3.0], [[2e-5, 0.0, 0.0], [0.0, 2e-5, 0.0], [0.0, 0.0, 2e-5]], "hold")


@pytest.mark.parametrize("field, said", [(_turning_field, "_turning_field (a function of time"),
                                         ((2e-5, 0.0, 0.0), "a constant [2e-05, 0, 0] T"),
                                         (_HISTORY, "a field history (hold, 3 samples)")])
def test_a_field_given_without_an_environment_is_said_in_the_meta_and_the_summary(tmp_path, field, said):
    """Not 'Environment none' while a field acts on the body (the RL outsider's policy mission)."""
    mission = attsim.Mission("given_field", np.diag([0.02, 0.03, 0.025]), (0.01, 0.0, 0.0), duration=2.0,
                             max_step=0.5, field=field, out_dir=tmp_path / "run")
    mission.add(attsim.Magnetorquer(0.01))
    tel = mission.run(backend="interpreted")
    meta = json.loads((tmp_path / "run" / "meta.json").read_text())
    assert meta["environment"] is None and meta["field"]["other_effects"] == "none"
    given = {tuple: "constant", FieldHistory: "field history"}.get(type(field), "function of time")
    assert meta["field"]["given"] == given  # a history is tabulated at its samples, not every field_dt_s
    page = attsim.report(tel, tmp_path / "r.html").read_text()
    module = "tests.reporting.test_report." if given == "function of time" else ""
    assert f"magnetic field given: {module}{said}" in page
    assert "no orbit, no other effect" in page
    assert not re.search(r"<th>Environment</th><td>none", page)
