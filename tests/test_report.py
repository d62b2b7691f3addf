"""The HTML report: sections, decimation, escaping, banners, comparison, and a
render check in headless Chromium (skipped, with the reason, only where no
Chromium can be had)."""

import re
import shutil
import subprocess

import numpy as np
import pytest

import attsim
from attsim import analysis
from attsim import reporting as report_module
from attsim.environment import Environment, Face, KeplerOrbit

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
SECTIONS = ["summary", "rates", "attitude", "momentum", "nutation", "stability", "attitude3d", "actuators", "sensors", "environment"]


@pytest.fixture(scope="module")
def full_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("full")
    env = Environment(KeplerOrbit.circular(600.0, 97.8), field="dipole", faces=Face.cube(0.1, (0.001, 0, -0.002)),
                      residual_dipole_Am2=(1e-4, 0, 0))
    mission = attsim.Mission("<b>full</b> & report", np.diag([0.02, 0.03, 0.025]), (0.05, -0.03, 0.04), duration=600.0,
                             telemetry_dt=2.0, environment=env, out_dir=out, description="tests <script>alert(1)</script>")
    mag = mission.add(attsim.Magnetometer(rate_hz=1.0, noise_T=1e-8))
    mtq = mission.add(attsim.Magnetorquer(0.01))
    mission.add(attsim.BDot(mag, mtq, gain=2e4, period_s=1.0))
    tel = mission.run()
    path = attsim.report(tel, criteria=[("final rate [rad/s]", 0.01, True, "< 0.1"), ("made up", 2.0, False, "< 1")])
    return tel, path


def test_every_section_is_present_and_user_text_is_escaped(full_run):
    tel, path = full_run
    page = path.read_text()
    for section in SECTIONS:
        assert f"id='{section}'" in page, section
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<b>full</b>" not in page and "&lt;b&gt;full&lt;/b&gt; &amp; report" in page
    assert page.count("plotly.js v") == 1 and '<script src="http' not in page  # plotly.js embedded once: works offline
    assert "<td>PASS</td>" in page and "<td>FAIL</td>" in page


def test_banners_for_partial_and_nonphysical_runs(tmp_path):
    mission = attsim.Mission("textbook", [2.0, 8.0, 4.0], (0.0, 1.0, 0.1), duration=20.0, allow_nonphysical=True, out_dir=tmp_path)
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
        mission = attsim.Mission(f"free_{method}", np.diag([1.0, 2.0, 2.5]), (0.3, 0.2, -0.1), duration=50.0, method=method,
                                 max_step=0.05, out_dir=tmp_path / method)
        runs.append(mission.run())
    page = attsim.report(runs, tmp_path / "compare.html").read_text()
    assert "id='comparison'" in page and "free_rk4" in page and "free_rkmk4" in page and "max attitude difference" in page


def test_report_refuses_what_is_not_telemetry(tmp_path):
    with pytest.raises(attsim.InputError, match="telemetry: must be attsim Telemetry"):
        attsim.report(["not a run"], tmp_path / "x.html")


@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium on this machine (.ci/run installs Debian's chromium)")
def test_report_renders_in_headless_chromium(full_run, tmp_path):
    _, path = full_run
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", f"--user-data-dir={tmp_path / 'profile'}", "--enable-logging=stderr",
             "--v=0", "--virtual-time-budget=30000"]
    dom = subprocess.run([CHROMIUM, *flags, "--dump-dom", path.as_uri()], capture_output=True, text=True, timeout=180)
    assert dom.returncode == 0, dom.stderr[-2000:]
    errors = [line for line in dom.stderr.splitlines() if "CONSOLE" in line and ("Uncaught" in line or ":ERROR:" in line or "Error" in line.split('"')[1:2][0] if '"' in line else False)]
    assert not errors, errors
    html = dom.stdout
    for section in SECTIONS[1:]:
        body = html.split(f'id="{section}"')[1].split("</section>")[0]
        assert "main-svg" in body, f"section {section} has no rendered plot"
    shot = tmp_path / "report.png"
    subprocess.run([CHROMIUM, *flags, "--window-size=1300,5000", f"--screenshot={shot}", path.as_uri()],
                   capture_output=True, timeout=180, check=True)
    assert shot.stat().st_size > 50_000
