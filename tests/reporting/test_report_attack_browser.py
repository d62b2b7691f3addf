"""The reports under attack, in headless Chromium (tools/browser.py): what only a browser shows."""

import sys
import time
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from tools.browser import CHROMIUM, Browser  # noqa: E402

import attsim  # noqa: E402

from tests.reporting.test_report import TARGET, WHEELS, _telemetry, _wheel_columns  # noqa: E402

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no Chromium (.ci/run installs Debian's chromium)")
DRAWN = "Array.from(document.querySelectorAll('.attsim-plot')).filter(d => d.dataset.gl !== '1')" \
        ".map(d => Boolean(d.dataset.drawn))"


def _controlled_page(tmp_path):
    columns = _wheel_columns() | {f"st_{c}": (lambda t: np.zeros_like(t)) for c in ("qw", "qx", "qy", "qz")}
    tel = _telemetry(tmp_path, columns, WHEELS + [{"name": "qpd", "type": "QuaternionPD", "target_q": TARGET}], n=4000)
    return attsim.report(tel, tmp_path / "controlled.html")


def test_plots_below_the_first_screen_are_drawn_after_an_early_click_without_scrolling(tmp_path):
    """Clicks while the page loads once stopped Chromium's idle callbacks: the rest were never drawn in the
    background, only when scrolled to."""
    page = _controlled_page(tmp_path)
    with Browser() as browser:
        browser.call("Emulation.setDeviceMetricsOverride", width=1280, height=900, deviceScaleFactor=1, mobile=False)
        browser.call("Page.navigate", url=page.resolve().as_uri())
        start = time.perf_counter()
        while time.perf_counter() - start < 3.0:  # a reader clicking (on the margin) as the page comes up
            for kind in ("mousePressed", "mouseReleased"):
                browser.call("Input.dispatchMouseEvent", type=kind, x=1, y=1, button="left", clickCount=1)
            time.sleep(0.2)
        while time.perf_counter() - start < 60.0 and not all(browser.evaluate(DRAWN) or [False]):
            time.sleep(0.5)
        drawn = browser.evaluate(DRAWN)
        assert browser.evaluate("window.scrollY") == 0
    assert len(drawn) >= 4 and all(drawn), drawn


def test_event_kinds_show_as_written_and_a_users_figure_is_full_height(tmp_path):
    """An event kind '<b>k</b>' showed bold on the events axis (plotly reads HTML in categories); a user's figure
    without a height was drawn 120 px tall."""
    import plotly.graph_objects as go

    kind = "<b>bold</b> & <a href='https://example.com'>link</a>"
    tel = _telemetry(tmp_path, {}, [{"name": "qpd", "type": "QuaternionPD", "target_q": TARGET}],
                     events=[(3.0, kind, "qpd", "")])
    page = attsim.report(tel, tmp_path / "r.html", extra_figures=[go.Figure(go.Scatter(x=[0, 1], y=[1, 2]))])
    with Browser() as browser:
        result = browser.load(page, width_px=1280)
        assert not result.console_errors
        ticks = browser.evaluate("Array.from(document.querySelectorAll('#timeline .ytick text'))"
                                 ".map(e => e.textContent)")
        assert kind[:15] in " ".join(ticks), ticks  # the text as written (cut to 16 characters on the axis)
        marked = "document.querySelectorAll('#timeline svg a, #timeline tspan[style*=bold]').length"
        assert browser.evaluate(marked) == 0
        height = browser.evaluate("document.querySelector('#figures .attsim-plot').getBoundingClientRect().height")
    assert height >= 400


def test_a_page_that_stops_answering_or_cannot_draw_ends_the_wait_as_said(tmp_path):
    """helper-42: the wait for a page's first screen asked a page in an endless script for 60 s whatever its
    timeout, and load() of a report whose plotly.js is damaged raised TypeError (a page that failed has no times)."""
    hang = tmp_path / "hang.html"
    hang.write_text("<!doctype html><html><body><script>setTimeout(() => { while (true) {} }, 200)</script>"
                    "</body></html>")
    page = _controlled_page(tmp_path)
    text = page.read_text(encoding="utf-8")
    start = text.index("id='plotlyjs-gz'>") + len("id='plotlyjs-gz'>")
    broken = tmp_path / "broken.html"
    broken.write_text(text[:start] + "A" * 64 + text[start + 64:], encoding="utf-8")
    with Browser() as browser:
        result = browser.load(broken, timeout_s=60.0)
        assert browser.evaluate("document.body.dataset.plots") == "failed"
        said = browser.evaluate("Array.from(document.querySelectorAll('.attsim-plot')).map(d => d.textContent)")
        assert said and all(said)  # each plot's place says why it is empty
        assert np.isnan(result.library_s) and np.isnan(result.first_screen_s)
        started = time.perf_counter()
        with pytest.raises(TimeoutError, match="first screen drawn not after 3.0 s"):
            browser.open(hang, timeout_s=3.0)
        assert time.perf_counter() - started < 10.0
