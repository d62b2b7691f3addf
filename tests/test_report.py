"""The HTML report: sections by run kind, decimation, escaping, banners, comparison, shared plotly.js.

The browser checks (headless Chromium) are in tests/test_report_browser.py.
"""

import json
import re

import numpy as np
import pytest

import attsim
from attsim import analysis
from attsim import reporting as report_module
from attsim.environment import Environment, Face, KeplerOrbit

SECTIONS = ["summary", "rates", "actuators", "sensors", "environment", "attitude", "freebody", "attitude3d"]


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
    assert page.count("id='plotlyjs-gz'") == 1 and "<script src=" not in page  # plotly.js embedded once: works offline
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
    assert "rk4: error [-]: 1e-9" in page


def test_report_refuses_what_is_not_telemetry(tmp_path):
    with pytest.raises(attsim.InputError, match="telemetry: must be attsim Telemetry"):
        attsim.report(["not a run"], tmp_path / "x.html")




# ---- sections by run kind, on synthetic telemetry (the real Telemetry class, written by hand) ----

def _telemetry(tmp_path, columns: dict, components=(), environment=None, events=(), n=400, dt=0.5, **meta):
    import pandas as pd

    from attsim.telemetry import Telemetry

    t = np.arange(n) * dt
    df = pd.DataFrame({"qw": np.cos(0.001 * t), "qx": np.sin(0.001 * t), "qy": 0.0 * t, "qz": 0.0 * t,
                       "wx": 0.002 + 0 * t, "wy": 0.0 * t, "wz": 0.0 * t}, index=pd.Index(t, name="t"))
    for name, values in columns.items():
        df[name] = values(t) if callable(values) else values
    base = {"name": "synthetic", "inertia_kg_m2": np.diag([0.05, 0.06, 0.02]).tolist(), "omega0_rad_s": [0.002, 0, 0],
            "q0": [1, 0, 0, 0], "duration_s": float(t[-1]), "method": "rk4", "seed": 7, "max_step_s": 0.1,
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
    found = re.findall(r"data-title='([^']*)'></div><script type='application/json' id='plot-\d+-data'>(.*?)</script>",
                       page, flags=re.S)
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
    assert "freebody" in sections and "no torque-free interval" in page


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
    assert [(s["name"], s["x0"], s["x1"]) for s in shapes] == [("rw_x torque saturated", 10.0, 12.5)]
    torque_axis = next(t["yaxis"] for t in wheels["data"] if t["name"] == "rw_x delivered")
    assert shapes[0]["yref"] == f"{torque_axis} domain"  # on the torque panel, not the speed panel
    rw_x_colour = next(t["line"]["color"] for t in wheels["data"] if t["name"] == "rw_x delivered")
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
    assert "speed limit ±5730 RPM (rw_x, rw_y, rw_z)" in names  # 600 rad/s, to four digits
    assert "torque limit ±0.002 N m (rw_x, rw_y, rw_z)" in names and "capacity ±0.012 N m s (rw_x, rw_y, rw_z)" in names
    assert "envelope along the array's momentum" in names


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
    from attsim.engine import _describe_component

    wheel = attsim.ReactionWheel("rw", (1, 0, 0), inertia_kg_m2=2e-5, max_torque_Nm=1e-3, max_speed_rad_s=500.0)
    law = attsim.QuaternionPD(TARGET, kp=1e-3, kd=1e-2, period_s=1.0, wheels=[wheel])
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
    from attsim.schema import ESTIMATOR_SUFFIXES

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
    with pytest.raises(attsim.InputError, match="extra_figures: must be plotly figures"):
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
        assert "id='plotlyjs-gz'" not in text and f"<script src='{relative}'>" in text
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
