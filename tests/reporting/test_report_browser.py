"""The reports in headless Chromium (DevTools over a pipe, tools/browser.py).

For a controlled wheel mission, a magnetic detumbling with an orbit, a torque-free case and the estimator mission:
every expected section is there, every plot is drawn (SVG traces, or a WebGL canvas for 3D), no console error, no
legend over an axis title or the mode bar and nothing off the page at 1280 and 390 px. Load times are printed;
screenshots of the first screen are kept in reports/test-artifacts/. The escaping of user text is checked in a page
full of HTML and script: nothing in it runs.
"""

import importlib.util
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from tools.browser import CHROMIUM, Browser  # noqa: E402

import attsim  # noqa: E402

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no Chromium (.ci/run installs Debian's chromium)")
ARTIFACTS = ROOT / "reports" / "test-artifacts"

# mission, shortened duration (s), the sections its page must have
CASES = {
    "wheel_slew": (60.0, ["summary", "pointing", "rates", "actuators", "sensors", "attitude3d"]),
    "advitiy_detumble": (600.0, ["summary", "rates", "actuators", "sensors", "environment", "attitude",
                                 "attitude3d"]),
    "asymmetric_top": (20.0, ["summary", "rates", "attitude", "momentum", "nutation", "stability", "attitude3d"]),
    "cubesat_target_tracking": (1500.0, ["summary", "pointing", "rates", "actuators", "estimation", "sensors",
                                         "timeline", "environment", "attitude3d"]),
}


def _mission(name):
    spec = importlib.util.spec_from_file_location(f"browser_{name}", ROOT / "missions" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def browser():
    with Browser() as b:
        b.call("Page.addScriptToEvaluateOnNewDocument",
               source="window.__alerts = []; window.alert = function (m) { window.__alerts.push(String(m)); };")
        yield b


def _check_page(browser, page, expected, name):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for width in (1280, 390):
        result = browser.load(page, width_px=width)
        print(f"{name} at {width} px: interactive {result.interactive_s:.2f} s, all plots {result.load_s:.2f} s, "
              f"{page.stat().st_size / 1e6:.2f} MB")
        # the first screen, what a reader sees first (a whole page is one capture per screen: tools/ take those)
        shot = browser.screenshot(ARTIFACTS / f"{name}_{width}.png", full_page=False)
        assert shot.stat().st_size > 10_000
        assert result.sections == expected
        assert not result.console_errors, result.console_errors
        assert browser.evaluate("window.__alerts") == []
        assert result.scroll_width_px <= result.window_width_px, "something runs off the page"
        assert result.plots, "no plot on the page"
        for plot in result.plots:
            assert plot["error"] is None, plot
            assert plot["svgTraces"] > 0 or plot["gl"] > 0, f"not drawn: {plot}"
            assert not plot["overlaps"], f"legend over an axis title or the mode bar: {plot}"
            assert plot["right"] <= width + 1, plot
    shutil.copy(page, ARTIFACTS / page.name)


@pytest.mark.parametrize("name", list(CASES))
def test_report_in_the_browser(name, browser, tmp_path):
    duration, expected = CASES[name]
    module = _mission(name)
    built = module.build(out_dir=str(tmp_path / name))
    mission = built[0] if isinstance(built, list) else built
    mission.duration_s = duration
    tel = mission.run()
    results = None if isinstance(built, list) else module.criteria(tel)  # a list's criteria need all its runs
    page = attsim.report(tel, tmp_path / f"{name}.html", criteria=results)
    _check_page(browser, page, expected, name)


def test_hostile_text_stays_text_in_the_browser(browser, tmp_path):
    """HTML and script in every piece of user text (description, components, modes, events, criteria)."""
    import pandas as pd

    from attsim.telemetry.recorder import Telemetry

    evil = "<script>alert('x')</script> ü 😀 </script><img src=x onerror=alert(1)><!--"
    n = 120
    t = np.arange(n) * 1.0
    df = pd.DataFrame({"qw": np.cos(0.01 * t), "qx": np.sin(0.01 * t), "qy": 0.0, "qz": 0.0, "wx": 0.02, "wy": 0.0,
                       "wz": 0.0}, index=pd.Index(t, name="t"))
    for a in "xyz":
        df[f"{evil}_m_{a}"] = 0.01 * np.sin(0.1 * t)
    df["mode"] = np.where(t < 60, 0, 1)
    meta = {"name": evil, "description": evil, "inertia_kg_m2": np.diag([0.05, 0.06, 0.02]).tolist(),
            "omega0_rad_s": [0.02, 0, 0], "q0": [1, 0, 0, 0], "duration_s": float(t[-1]), "method": "rk4", "seed": 1,
            "components": [{"name": evil, "type": "Magnetorquer", "dipole_max_Am2": 0.1}], "modes": [evil, "point"]}
    events = pd.DataFrame([(3.0, evil, evil, evil), (4.0, "saturation", evil, "dipole")],
                          columns=["t", "kind", "actuator", "what"])
    tel = Telemetry(tmp_path, meta, df=df, events=events)
    page = attsim.report(tel, tmp_path / "hostile.html",
                         criteria=[(f"{evil} pointing error [deg]", 0.1, True, "< 1"), (evil, np.nan, False, evil)])
    text = page.read_text()
    assert "<script>alert" not in text and "<img src=x" not in text and "<!--<" not in text
    _check_page(browser, page, ["summary", "rates", "actuators", "timeline", "attitude", "attitude3d"],
                "hostile")
    legend = browser.evaluate("Array.from(document.querySelectorAll('.legendtext')).map(e => e.textContent)")
    assert any(evil.split(" ü")[0] in entry for entry in legend)  # shown as the text it is
