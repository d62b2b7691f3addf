"""The reports in headless Chromium (DevTools over a pipe, tools/browser.py): for a controlled wheel mission, a
magnetic detumbling with an orbit and a torque-free case, every expected section is there, every plot is drawn
(SVG traces, or a WebGL canvas for 3D), no console error, no legend over an axis title and nothing off the page at
1280 and 390 px. Load times are printed; screenshots are kept in reports/test-artifacts/."""

import importlib.util
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tools.browser import CHROMIUM, Browser  # noqa: E402

import attsim  # noqa: E402

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no Chromium (.ci/run installs Debian's chromium)")
ARTIFACTS = ROOT / "reports" / "test-artifacts"

# mission, shortened duration (s), the sections its page must have
CASES = {
    "wheel_slew": (60.0, ["summary", "pointing", "rates", "actuators", "sensors", "freebody", "attitude3d"]),
    "advitiy_detumble": (600.0, ["summary", "rates", "actuators", "sensors", "environment", "attitude", "freebody",
                                 "attitude3d"]),
    "asymmetric_top": (20.0, ["summary", "rates", "attitude", "momentum", "nutation", "stability", "attitude3d"]),
}


def _mission(name):
    spec = importlib.util.spec_from_file_location(f"browser_{name}", ROOT / "missions" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def browser():
    with Browser() as b:
        yield b


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
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for width in (1280, 390):
        result = browser.load(page, width_px=width)
        print(f"{name} at {width} px: interactive {result.interactive_s:.2f} s, all plots {result.load_s:.2f} s, "
              f"{page.stat().st_size / 1e6:.2f} MB")
        shot = browser.screenshot(ARTIFACTS / f"{name}_{width}.png")
        assert shot.stat().st_size > 10_000
        assert result.sections == expected
        assert not result.console_errors, result.console_errors
        assert result.scroll_width_px <= result.window_width_px, "something runs off the page"
        for plot in result.plots:
            assert plot["error"] is None, plot
            assert plot["svgTraces"] > 0 or plot["gl"] > 0, f"not drawn: {plot}"
            assert not plot["overlaps"], f"legend over an axis title: {plot}"
            assert plot["right"] <= width + 1, plot
    shutil.copy(page, ARTIFACTS / page.name)
