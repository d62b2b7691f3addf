"""The reports under attack (issue 13 review): what a hostile tester and a new ADCS engineer found, each checked here.

Every test failed before its fix. References are computed here, sharing no code with attsim's reports: scipy's
rotations, chi-square quantiles, plain numpy.
"""

import gzip
import re
import os
import subprocess
import sys
from pathlib import Path


import numpy as np
import pytest

import attsim
from attsim.reporting import page as page_module

from tests.reporting.test_report import _bdata, _figures, _telemetry

ROOT = Path(__file__).resolve().parents[2]


# ---- a page is written whole or not at all ----

def test_a_failed_write_leaves_the_earlier_page_whole(tmp_path):
    """A disk that fills up mid-write (here a file-size limit) leaves the earlier page as it was, and no litter."""
    script = f"""
import resource, signal, sys
from pathlib import Path
sys.path.insert(0, {str(ROOT)!r})
import numpy as np
import pytest

import attsim
from tests.reporting.test_report import _telemetry
out = Path(sys.argv[1])
tel = _telemetry(out, {{}})
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (200_000, resource.RLIM_INFINITY))
try:
    attsim.report(tel, out / "report.html")
except attsim.AttsimError as exc:
    print(exc)
"""
    earlier = b"<!doctype html><html><body>the earlier page</body></html>"
    (tmp_path / "report.html").write_bytes(earlier)
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert "must be a file that can be written" in done.stdout, done.stdout + done.stderr
    assert (tmp_path / "report.html").read_bytes() == earlier
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html"]


def test_two_writers_of_one_shared_plotly_js_both_finish(tmp_path, monkeypatch):
    """Two missions' reports writing the shared plotly.js at once: each completes, and the file is whole."""
    target = tmp_path / "plotly.min.js"
    library = page_module._library(False)
    replace, interleaved = os.replace, []

    def another_writer_first(source, destination):
        if not interleaved:  # the other process writes the same file between this one's write and its rename
            interleaved.append(True)
            page_module._share_plotly(target, library)
        replace(source, destination)

    monkeypatch.setattr(os, "replace", another_writer_first)
    page_module._share_plotly(target, library)
    assert interleaved and target.read_bytes() == gzip.decompress(library.gzipped)
    assert [p.name for p in tmp_path.iterdir()] == [target.name]


def test_a_page_written_to_a_device_writes_to_it(tmp_path):
    """``attsim.report(tel, "/dev/null")`` writes to the device; it never replaces it with a file."""
    assert attsim.report(_telemetry(tmp_path, {}), "/dev/null") == Path("/dev/null")
    assert Path("/dev/null").is_char_device()


# ---- a mission's own figures ----

def _hooked(tmp_path, figures, capsys):
    """Run a small mission through the command line's ``execute`` with ``figures``; (exit code, page, stderr)."""
    from attsim import cli

    def build(out_dir=None):
        return attsim.Propagation("hooked", [1.0, 2.0, 2.5], (0.3, 0.2, -0.1), duration=5.0, max_step=0.05,
                                  out_dir=out_dir)

    code = cli._guard(lambda: cli.execute(build, lambda tel: [("x [-]", 1.0, True, "= 1")],
                                          out=str(tmp_path / "run"), figures=figures), debug=False)
    page = tmp_path / "run" / "report.html"
    return code, page.read_text() if page.is_file() else None, capsys.readouterr().err


def test_figures_may_return_one_figure(tmp_path, capsys):
    import plotly.graph_objects as go

    code, page, _ = _hooked(tmp_path, lambda tel: go.Figure(go.Scatter(x=[0, 1], y=[1, 2]), layout={"title": "one"}),
                            capsys)
    assert code == 0 and "data-title='one'" in page


def test_figures_that_raise_cost_the_figures_not_the_report(tmp_path, capsys):
    def figures(tel):
        raise RuntimeError("a bug in my plotting")

    code, page, err = _hooked(tmp_path, figures, capsys)
    assert code == 2  # an error in the mission script, as the command line's exit codes say
    assert "RuntimeError: a bug in my plotting" in err and "the report was written without the mission's figures" in err
    assert "id='pointing'" not in page and "id='attitude3d'" in page  # the whole report
    assert "figures(telemetry) failed" in page and "RuntimeError: a bug in my plotting" in page


def test_figures_that_are_not_figures_are_named(tmp_path, capsys):
    import plotly.graph_objects as go

    code, page, err = _hooked(tmp_path, lambda tel: [go.Figure(), "not a figure"], capsys)
    assert code == 2 and "figures(telemetry)[1]: must be a plotly figure (got str)" in err
    assert "id='figures'" in page and "figures(telemetry)[1]: must be a plotly figure" in page


def test_extra_figures_name_the_bad_one_and_take_a_single_figure(tmp_path):
    import plotly.graph_objects as go

    class Broken(go.Figure):
        def to_dict(self):
            raise ValueError("cannot serialise")

        to_plotly_json = to_dict

    tel = _telemetry(tmp_path, {})
    with pytest.raises(attsim.InputError, match=r"extra_figures\[1\]: must be a plotly figure \(got int\)"):
        attsim.report(tel, tmp_path / "r.html", extra_figures=[go.Figure(), 3])
    with pytest.raises(attsim.InputError, match=r"extra_figures\[0\]: must be a plotly figure that can be drawn"):
        attsim.report(tel, tmp_path / "r.html", extra_figures=[Broken()])
    page = attsim.report(tel, tmp_path / "r.html", extra_figures=go.Figure(layout={"title": "alone"})).read_text()
    assert "data-title='alone'" in page


def test_a_users_figure_keeps_a_readable_height_and_shows_its_title_as_plotly_would():
    import plotly.graph_objects as go

    from attsim.reporting.page import as_plot

    plot = as_plot(go.Figure(go.Scatter(x=[0, 1], y=[1, 2]), layout={"title": "Wheel<br><b>speed</b> &amp; limits"}))
    assert plot.figure["layout"]["height"] >= 400  # was none: drawn 120 px tall, the page's empty-box height
    assert plot.title == "Wheel speed & limits"  # plotly's <br> and <b> are not shown as text above the plot
    assert as_plot(go.Figure(layout={"height": 300})).figure["layout"]["height"] == 300


# ---- the load-time figures: a standard definition beside the report's own ----

def test_time_to_interactive_is_lighthouses():
    sys.path.insert(0, str(ROOT))
    from tools.browser import time_to_interactive

    # paint at 200 ms; long tasks at 300 (+900), 1500 (+100), then 4000 (+600): a 5 s quiet window only after it
    tti, tbt = time_to_interactive([(4000.0, 600.0), (300.0, 900.0), (1500.0, 100.0)], 200.0)
    assert tti == 4600.0 and tbt == 850.0 + 50.0 + 550.0
    tti, tbt = time_to_interactive([(300.0, 900.0), (7000.0, 600.0)], 200.0)  # 5.8 s quiet after 1.2 s: done then
    assert tti == 1200.0 and tbt == 850.0
    assert time_to_interactive([], 250.0) == (250.0, 0.0)


# ---- the numbers drawn, against independent references ----

def _scipy_rotation(q):
    from scipy.spatial.transform import Rotation

    q = np.asarray(q, dtype=float)
    return Rotation.from_quat(np.column_stack([q[:, 1], q[:, 2], q[:, 3], q[:, 0]]))  # scipy: (x, y, z, w)


def _trace(figure, name):
    return next(t for t in figure["data"] if t["name"] == name)


def test_the_per_axis_pointing_error_is_the_rotation_vector_at_any_angle(tmp_path):
    """Recorded att_err_x/y/z is 2 vec(q_RB), small-angle: the per-axis panel drew a 150 deg error as 111 deg."""
    n = 400
    angle = np.radians(np.linspace(1.0, 170.0, n))
    axis = np.array([0.48, -0.6, 0.64])
    q = np.column_stack([np.cos(angle / 2), np.outer(np.sin(angle / 2), axis)])  # the reference is the identity
    q_ref = np.tile([1.0, 0.0, 0.0, 0.0], (n, 1))
    error = _scipy_rotation(q_ref).inv() * _scipy_rotation(q)
    two_vec = 2.0 * error.as_quat()[:, :3] * np.sign(error.as_quat()[:, 3:])
    columns = {"att_err_deg": np.degrees(error.magnitude())} | {
        f"att_err_{a}": two_vec[:, k] for k, a in enumerate("xyz")} | {
        f"q_ref_{c}": q_ref[:, k] for k, c in enumerate("wxyz")} | {f"q{c}": q[:, k] for k, c in enumerate("wxyz")}
    tel = _telemetry(tmp_path, {k: (lambda _t, v=v: v) for k, v in columns.items()},
                     [{"name": "qpd", "type": "QuaternionPD"}], n=n)
    figure = next(f for f in _figures(attsim.report(tel, tmp_path / "r.html").read_text())
                  if f["title"] == "Pointing error")
    expected = np.degrees(error.as_rotvec())
    for k, a in enumerate("xyz"):
        drawn = _bdata(_trace(figure, f"{a} (body)")["y"])
        assert np.allclose(drawn, expected[:, k], rtol=1e-5, atol=1e-4), a
    assert np.allclose(_bdata(_trace(figure, "pointing error")["y"]), np.degrees(error.magnitude()), rtol=1e-5)


def test_each_kind_of_update_has_the_nis_band_of_its_degrees_of_freedom(tmp_path):
    """A Sun-direction update is a unit vector: its NIS has two degrees of freedom, not the three of a star tracker."""
    from scipy.stats import chi2

    from attsim.telemetry.schema import ESTIMATOR_SUFFIXES

    # independently: the innovation of a noisy unit vector against the truth, with the filter's R = sigma^2 I
    rng = np.random.default_rng(3)
    sigma, truth = 0.01, np.array([0.6, 0.0, 0.8])
    measured = truth + sigma * rng.standard_normal((20000, 3))
    measured /= np.linalg.norm(measured, axis=1, keepdims=True)
    nis = np.sum((measured - truth) ** 2, axis=1) / sigma**2
    assert abs(nis.mean() - 2.0) < 0.05  # chi-square with 2 degrees of freedom, not 3

    columns = {f"ekf_{suffix}": 1e-6 for suffix in ESTIMATOR_SUFFIXES}
    columns |= {"ekf_qw": 1.0, "ekf_qx": 0.0, "ekf_qy": 0.0, "ekf_qz": 0.0, "ekf_nis_mag": np.nan,
                "ekf_nis_st": lambda t: 3.0 + 0 * t, "ekf_nis_sun": lambda t: nis[: len(t)]}
    tel = _telemetry(tmp_path, columns, [{"name": "ekf", "type": "MEKF"}])
    estimation = next(f for f in _figures(attsim.report(tel, tmp_path / "r.html").read_text())
                      if f["title"].startswith("ekf"))
    bands = {t["name"]: sorted(v for v in t["y"] if v is not None) for t in estimation["data"]
             if t.get("meta", {}).get("limit") and "95%" in t["name"] and t.get("showlegend", True)}
    sun = next(v for k, v in bands.items() if k.startswith("2 dof (Sun):"))
    tracker = next(v for k, v in bands.items() if k.startswith("3 dof (ST):"))
    assert sun[-1] == pytest.approx(chi2.ppf(0.975, 2)) and tracker[-1] == pytest.approx(chi2.ppf(0.975, 3))
    assert all(len(name) <= 36 for name in bands)  # whole in a 390 px legend
    lows = {t["name"]: t["y"][0] for t in estimation["data"] if t.get("showlegend") is False and "95%" in t["name"]}
    assert pytest.approx(chi2.ppf(0.025, 2)) in lows.values() and pytest.approx(chi2.ppf(0.025, 3)) in lows.values()


@pytest.mark.parametrize("mounted", [False, True])
def test_sun_sensors_are_a_direction_error_in_degrees(tmp_path, mounted):
    """The six cosine detectors' error was drawn on an axis titled '[sensor unit]'; the natural unit is the angle.
    A sensor mounted turned (its detector normals in body axes recorded by the run) is read through its normals."""
    n = 400
    t = np.arange(n) * 0.5
    true = np.column_stack([np.cos(0.01 * t), np.sin(0.01 * t), 0.3 + 0 * t])
    true /= np.linalg.norm(true, axis=1, keepdims=True)
    error_deg = 0.5 + 2.0 * np.abs(np.sin(0.05 * t))  # a known angle, about an axis square to the Sun
    axis = np.cross(true, [0.0, 0.0, 1.0])
    axis /= np.linalg.norm(axis, axis=1, keepdims=True)
    measured = _scipy_rotation(np.column_stack([np.cos(np.radians(error_deg) / 2),
                                                axis * np.sin(np.radians(error_deg) / 2)[:, None]])).apply(true)
    normals = np.array([[1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1]], dtype=float)
    if mounted:  # turned 35 deg about (1, 1, 0) and 20 deg about z: no detector along a body axis
        turn = _scipy_rotation(np.array([[np.cos(0.305), 0.0, 0.0, np.sin(0.305)]])) * \
            _scipy_rotation(np.array([[np.cos(0.305), np.sin(0.305) / np.sqrt(2), np.sin(0.305) / np.sqrt(2), 0.0]]))
        normals = turn.apply(normals)
    dark = (t > 100) & (t < 120)  # an eclipse: every detector reads zero
    columns = {}
    for prefix, s in (("css_", measured), ("css_true_", true)):
        for k, face in enumerate(("px", "mx", "py", "my", "pz", "mz")):
            columns[f"{prefix}{face}"] = np.where(dark, 0.0, np.maximum(0.0, s @ normals[k]))
    sensor = {"name": "css", "type": "SunSensor"} | ({"normals_nominal": normals.tolist()} if mounted else {})
    tel = _telemetry(tmp_path, {k: (lambda _t, v=v: v) for k, v in columns.items()}, [sensor], n=n)
    page = attsim.report(tel, tmp_path / "r.html").read_text()
    plot = next(f for f in _figures(page) if f["title"].startswith("css (SunSensor)"))
    titles = [v["title"]["text"] for k, v in plot["layout"].items() if k.startswith("yaxis")]
    assert titles == ["direction error [deg]", "detector error [fraction of full scale]"]
    drawn = _bdata(_trace(plot, "angle to the true Sun")["y"])
    assert np.allclose(drawn[~dark], error_deg[~dark], atol=1e-4) and np.all(np.isnan(drawn[dark]))
    colours = [t["line"]["color"] for t in plot["data"]]
    assert len(set(colours)) == len(colours)  # the angle and the six detectors apart


def test_a_run_records_its_sun_sensors_detector_normals_as_mounted():
    from attsim.engine.mission import _describe_component

    q_BS = (np.cos(0.2), 0.0, 0.0, np.sin(0.2))  # 0.4 rad about z
    described = _describe_component(attsim.SunSensor(1.0, sun_inertial=(1.0, 0.0, 0.0), q_BS=q_BS))
    expected = _scipy_rotation(np.array([q_BS])).apply(np.array([[1.0, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0],
                                                                 [0, 0, 1], [0, 0, -1]]))
    assert np.allclose(described["normals_nominal"], expected, atol=1e-12)


# ---- comparisons ----

def test_runs_of_one_directory_name_are_told_apart_in_a_comparison(tmp_path):
    """reports/wheel_slew against /elsewhere/wheel_slew (same seed and method) were both 'wheel_slew (seed 1, rk4)',
    with one legend entry for both."""
    a = _telemetry(tmp_path / "main" / "wheel_slew", {}, name="wheel_slew")
    b = _telemetry(tmp_path / "branch" / "wheel_slew", {}, name="wheel_slew")
    page = attsim.report([a, b, b], tmp_path / "c.html").read_text()
    for label in ("main/wheel_slew (seed 7, rk4)", "branch/wheel_slew #1 (seed 7, rk4)",
                  "branch/wheel_slew #2 (seed 7, rk4)"):
        assert f"<td>{label}</td>" in page
    rates = next(f for f in _figures(page) if f["title"].startswith("Body rates of every run"))
    shown = [t["name"] for t in rates["data"] if t.get("showlegend", True)]
    assert len(shown) == 3 and len(set(shown)) == 3


def test_missions_whose_runs_sit_side_by_side_keep_their_comparisons_apart(tmp_path):
    """free_rigid_body, axis_stability, asymmetric_top, gimbal_lock and time_step_study all wrote
    reports/comparison.html: each mission run overwrote the last one's."""
    from attsim.reporting import report_runs

    def mission(*names):
        return report_runs([_telemetry(tmp_path / name, {}, name=name) for name in names])[-1]

    first = mission("free_rigid_body_exact", "free_rigid_body_rk4")
    second = mission("axis_stability_major", "axis_stability_minor")
    assert first.name == "free_rigid_body_comparison.html" and second.name == "axis_stability_comparison.html"
    assert "free_rigid_body_exact" in first.read_text() and "axis_stability_major" in second.read_text()
    assert mission("without_unloading", "with_unloading").name == "comparison.html"  # no word in common


# ---- runs still going, killed, empty ----

def test_a_report_of_a_run_still_going_says_so(tmp_path, capsys):
    """``attsim report`` on a live run said it 'holds a partial run (killed)' and its page 'stopped early (killed)'."""
    import time

    from attsim import cli

    script = f"""
import sys
sys.path.insert(0, {str(ROOT)!r})
import numpy as np
import attsim
mission = attsim.Mission("live", np.diag([0.06, 0.055, 0.02]), (0.01, -0.02, 0.03), duration=1e7, max_step=0.1,
                         telemetry_dt=10.0, out_dir={str(tmp_path / 'live')!r})
mission.add(attsim.Gyro(10.0))
mission.run()
"""
    writer = subprocess.Popen([sys.executable, "-c", script])
    try:
        rows = tmp_path / "live" / "telemetry.f64"
        start = time.monotonic()
        while not (rows.is_file() and rows.stat().st_size > 10_000) and time.monotonic() - start < 120:
            time.sleep(0.2)
        assert cli.main(["report", str(tmp_path / "live"), "--out", str(tmp_path / "page")]) == 0
        assert "is still running" in capsys.readouterr().out
        page = (tmp_path / "page.html").read_text()
        assert "Still running" in page and "stopped early" not in page
        assert cli.main(["report", str(tmp_path / "live"), str(tmp_path / "live"), "--out", str(tmp_path / "c")]) == 0
        assert "<td>running</td>" in (tmp_path / "c.html").read_text()
    finally:
        writer.kill()
        writer.wait()


# ---- what a new engineer reads ----

def test_the_total_pointing_error_is_not_drawn_in_the_x_axis_colour_and_its_requirement_reads_well(tmp_path):
    from attsim.reporting.style import AXIS_COLOURS
    from .test_report import TARGET, WHEELS, _wheel_columns

    tel = _telemetry(tmp_path, _wheel_columns(), WHEELS + [{"name": "qpd", "type": "QuaternionPD", "target_q": TARGET}])
    page = attsim.report(tel, tmp_path / "r.html",
                         criteria=[("max error to the orbit frame [deg]", 17.5, True, "< 25")]).read_text()
    figure = next(f for f in _figures(page) if f["title"] == "Pointing error")
    assert _trace(figure, "pointing error")["line"]["color"] not in AXIS_COLOURS.values()  # was the x axis's blue
    # was "[deg] 25.0 deg"; a tuple's window is not known, and the page says so
    assert "Requirement (red line, 25 deg): max error to the orbit frame [deg]; its window is not declared" in page


def test_a_controlled_run_without_a_reference_says_why_it_has_no_pointing(tmp_path):
    """advitiy_detumble's page promised 'pointing, rates and actuators first' and had no pointing section."""
    from .test_report import TARGET, WHEELS, _wheel_columns

    mtq = {"name": "mtq", "type": "Magnetorquer", "dipole_max_Am2": 0.1}
    detumble = _telemetry(tmp_path, {f"mtq_m_{a}": 0.01 for a in "xyz"}, [mtq, {"name": "bdot", "type": "BDot"}])
    page = attsim.report(detumble, tmp_path / "d.html").read_text()
    assert "id='pointing'" not in page and "It has no pointing section: no attitude reference is recorded" in page
    pointing = _telemetry(tmp_path, _wheel_columns(), WHEELS + [{"name": "qpd", "type": "QuaternionPD",
                                                                   "target_q": TARGET}])
    page = attsim.report(pointing, tmp_path / "p.html").read_text()
    assert "id='pointing'" in page and "no pointing section" not in page


def test_report_out_an_existing_directory_is_refused_not_written_beside_it(tmp_path, capsys):
    """``attsim report RUN --out some/dir`` wrote some/dir.html beside the directory, without a word."""
    from attsim import cli

    run = attsim.Propagation("p", [1.0, 2.0, 3.0], (0.1, 1.0, 0.1), duration=2.0, method="rk4", max_step=0.01,
                             out_dir=tmp_path / "run").run()
    (tmp_path / "pages").mkdir()
    assert cli.main(["report", str(run.path), "--out", str(tmp_path / "pages")]) == 2
    assert "out: must be a file path, not a directory" in capsys.readouterr().err
    assert not (tmp_path / "pages.html").exists() and not any((tmp_path / "pages").iterdir())


def test_a_propagation_pushed_by_a_torque_is_not_reported_as_torque_free(tmp_path):
    """constant_torque and rockets said 'A torque-free run: the free-body diagnostics describe the whole run' and drew
    the momentum their torque changes as a 'conservation' drift."""
    constant = attsim.Propagation("pushed", 2.0 * np.eye(3), (0.1, 1.0, -0.1), duration=5.0, method="rk4",
                                  max_step=0.01, torque=(1.0, 1.0, 0.0), out_dir=tmp_path / "constant").run()
    damping = lambda t, q, w: -0.01 * w  # noqa: E731
    function = attsim.Propagation("damped", [1.0, 2.0, 3.0], (0.1, 1.0, -0.1), duration=5.0, method="rk4",
                                  max_step=0.01, torque=damping, out_dir=tmp_path / "function").run()
    free = attsim.Propagation("free", [1.0, 2.0, 3.0], (0.1, 1.0, -0.1), duration=5.0, method="rk4",
                              max_step=0.01, out_dir=tmp_path / "free").run()
    for run, words in ((constant, "a constant body torque [1, 1, 0] N m"),
                       (function, "a torque function of time and state (&lt;lambda&gt;)")):
        page = attsim.report(run).read_text()
        sections = re.findall(r"<section id='(\w+)'", page)
        # no free-body section (the torque acts throughout); the summary says what acts
        assert "momentum" not in sections and "stability" not in sections and "freebody" not in sections
        assert "A torque-free run" not in page and f"<th>Applied torque</th><td>{words}</td>" in page
    page = attsim.report(free).read_text()
    assert "A torque-free run" in page and "id='momentum'" in page and "Applied torque" not in page


def test_a_missing_rate_is_not_classified_as_a_stable_spin(tmp_path):
    """A NaN rate came out as 'about the minor axis, stable ... nan rad/s' on the page."""
    from attsim import analysis

    with pytest.raises(attsim.InputError, match="omega0"):
        analysis.classify_spin([1.0, 2.0, 3.0], [np.nan, 0.0, 0.0])
    nan = lambda t: np.full_like(t, np.nan)  # noqa: E731
    page = attsim.report(_telemetry(tmp_path, {"wx": nan, "wy": nan, "wz": nan}), tmp_path / "r.html").read_text()
    assert "Spin: not classified, the rate at the start of this interval is missing" in page and "stable" not in page
