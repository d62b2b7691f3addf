"""Headless Chromium driven over the DevTools protocol through a pipe (no extra package, works offline).

Chromium started with ``--remote-debugging-pipe`` reads protocol commands on
file descriptor 3 and writes replies and events on descriptor 4, each a JSON
object ended by a NUL byte. This module opens one page, loads a report,
waits until its first screen is drawn (:meth:`Browser.open`) or until every
plot is (:meth:`Browser.load`: the page sets ``body.dataset.plots`` to
``"done"``), and measures what the report tests and ``tools/bench_report.py``
need: load time, console errors, drawn traces, legend/axis-title overlaps,
screenshots.

Use::

    with Browser() as browser:
        result = browser.load(path, width_px=1280)
        browser.screenshot(path_png)
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--hide-scrollbars",
    # WebGL (the report's 3D views) in software: recent Chromium no longer falls back to SwiftShader by itself
    "--enable-unsafe-swiftshader",
    "--use-angle=swiftshader",
]

# What the page reports about itself once drawn: per plot, its traces and any overlap of a legend with an axis title.
_INSPECT = """
(() => {
  const boxes = (root, sel) => Array.from(root.querySelectorAll(sel)).map(e => e.getBoundingClientRect())
                                 .filter(r => r.width > 0 && r.height > 0);
  const hit = (a, b) => a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1;
  const plots = Array.from(document.querySelectorAll('.attsim-plot')).map(div => {
    const section = div.closest('section');
    const svgTraces = Array.from(div.querySelectorAll('.scatterlayer .trace path.js-line,'
                                 + ' .scatterlayer .trace path.point,'
                                 + ' .barlayer .trace path, .heatmaplayer image'))
                        .filter(p => (p.getAttribute('d') || p.getAttribute('href') || '').length > 4).length;
    const geoTraces = div.querySelectorAll('.geo .trace path, .scattergeo path.js-line').length;
    const gl = div.querySelectorAll('.gl-container canvas').length;
    const legends = boxes(div, '.legend .bg');
    const titles = boxes(div, '[class^="g-x"][class$="title"] text, [class^="g-y"][class$="title"] text');
    const bars = boxes(div, '.modebar');
    const overlaps = legends.some(l => titles.some(t => hit(l, t)) || bars.some(b => hit(l, b)));
    const r = div.getBoundingClientRect();
    return {section: section ? section.id : null, title: div.dataset.title, svgTraces, geoTraces, gl,
            overlaps, width: r.width, right: r.right, error: div.dataset.error || null};
  });
  return {plots, state: document.body.dataset.plots || null, scrollWidth: document.documentElement.scrollWidth,
          innerWidth: window.innerWidth, sections: Array.from(document.querySelectorAll('section')).map(s => s.id)};
})()
"""


# Long tasks (the main thread busy over 50 ms: input waits), recorded from the page's start by the browser itself.
_LONG_TASKS = """
window.__attsimLong = [];
try {
  new PerformanceObserver(list => list.getEntries().forEach(e => window.__attsimLong.push([e.startTime, e.duration])))
    .observe({type: 'longtask', buffered: true});
} catch (e) {}
"""
# the page has drawn the plots of its first screen (or says it cannot draw them)
_FIRST_SCREEN = ("document.readyState === 'complete' && document.body && (document.body.dataset.interactive ? "
                 "'shown' : (document.body.dataset.plots === 'failed' ? 'failed' : null))")
QUIET_WINDOW_MS = 5000.0  # Lighthouse's time to interactive: the end of the last long task before this long a quiet


def time_to_interactive(long_tasks, first_paint_ms: float) -> tuple[float, float]:
    """Lighthouse's time to interactive and total blocking time (ms) from the page's long tasks ``[(start, length)]``.

    TTI: from the first contentful paint, the end of the last long task before the first window of
    :data:`QUIET_WINDOW_MS` with none. TBT: the sum of each long task's time over 50 ms between the paint and TTI.
    """
    tti = first_paint_ms
    for start, length in sorted(long_tasks):
        if start - tti >= QUIET_WINDOW_MS:
            break
        tti = max(tti, start + length)
    tbt = sum(max(0.0, min(start + length, tti) - max(start, first_paint_ms) - 50.0)
              for start, length in long_tasks if start + length > first_paint_ms and start < tti)
    return tti, tbt


class PageResult(NamedTuple):
    """What one page load measured."""

    load_s: float  # from navigation to every plot drawn, scrolling through the page
    interactive_s: float  # from navigation to the first screen drawn, plus a click's input delay then (page's clock)
    plots: list  # per plot: section, title, svgTraces, geoTraces, gl, overlaps (legend over an axis title or the
    # mode bar), width, right, error
    sections: list  # the ids of the page's sections, in order
    console_errors: list  # console errors and uncaught exceptions, as text
    scroll_width_px: int  # the document's width: larger than the window when something runs off the page
    window_width_px: int
    first_screen_s: float  # from navigation to the plots of the first screen drawn (the page's own clock)
    library_s: float  # from navigation to plotly.js unpacked and evaluated
    tti_s: float = float("nan")  # Lighthouse's time to interactive, a reader on the first screen (``load(tti=True)``)
    tbt_s: float = float("nan")  # total blocking time up to it: the long tasks' time over 50 ms each


class Browser:
    """One headless Chromium with one page, controlled through the DevTools pipe."""

    def __init__(self, chromium: str | None = None):
        self.chromium = chromium or CHROMIUM
        self.navigated_at = float("nan")  # perf_counter() when the page last navigated
        if self.chromium is None:
            raise RuntimeError("no chromium on PATH")
        self._profile = tempfile.mkdtemp(prefix="attsim-chromium-")
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()

        def fds():  # the protocol's fixed descriptors in the child (duplicated first: a pipe may already be 3 or 4)
            read_end, write_end = os.dup(to_child_r), os.dup(from_child_w)
            os.dup2(read_end, 3)
            os.dup2(write_end, 4)

        self._process = subprocess.Popen(
            [self.chromium, *FLAGS, f"--user-data-dir={self._profile}", "--remote-debugging-pipe", "about:blank"],
            preexec_fn=fds,
            pass_fds=(3, 4),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_child_r)
        os.close(from_child_w)
        self._buffer = b""
        self._next_id = 0
        self._events: list[dict] = []
        targets = self._call("Target.getTargets")["targetInfos"]
        page = next(t for t in targets if t["type"] == "page")
        self._session = self._call("Target.attachToTarget", targetId=page["targetId"], flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.call(f"{domain}.enable")
        self.call("Page.addScriptToEvaluateOnNewDocument", source=_LONG_TASKS)

    def _send(self, method: str, params: dict, session: str | None) -> int:
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(self._to_child, json.dumps(message).encode() + b"\0")
        return self._next_id

    def _read(self, timeout_s: float) -> dict:
        import select

        while b"\0" not in self._buffer:
            ready, _, _ = select.select([self._from_child], [], [], timeout_s)
            if not ready:
                raise TimeoutError("chromium did not answer")
            chunk = os.read(self._from_child, 1 << 20)
            if not chunk:
                raise RuntimeError("chromium closed the pipe")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def _call(self, method: str, session: str | None = None, timeout_s: float = 60.0, **params):
        wanted = self._send(method, params, session)
        while True:
            message = self._read(timeout_s)
            if message.get("id") == wanted:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})
            if "method" in message:
                self._events.append(message)

    def call(self, method: str, timeout_s: float = 60.0, **params):
        """One protocol command on the page; returns its result."""
        return self._call(method, self._session, timeout_s, **params)

    def evaluate(self, expression: str, timeout_s: float = 60.0):
        """The value of a JavaScript expression in the page (JSON-serialisable); TimeoutError when the page has not
        answered in ``timeout_s`` (a script that never yields)."""
        result = self.call("Runtime.evaluate", timeout_s, expression=expression, returnByValue=True,
                           awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"page script failed: {result['exceptionDetails']}")
        return result["result"].get("value")

    def open(self, path: Path, width_px: int = 1280, height_px: int = 900, timeout_s: float = 120.0) -> str:
        """Open ``path`` at a window ``width_px`` wide and wait until its first screen is drawn; the plots below
        it are left to the page. For what a page's text and layout show (a table's cells, the summary), at a
        fraction of :meth:`load`'s cost, which has every plot drawn. Returns ``"shown"``, or ``"failed"`` when
        the page says its plots could not be drawn."""
        if not Path(path).is_file():
            raise FileNotFoundError(path)
        self.call("Emulation.setDeviceMetricsOverride", width=width_px, height=height_px, deviceScaleFactor=1,
                  mobile=width_px < 600)
        self._events.clear()
        self.navigated_at = time.perf_counter()  # what load() measures from
        self.call("Page.navigate", url=Path(path).resolve().as_uri())
        return self._wait_for(_FIRST_SCREEN, "first screen drawn", path, self.navigated_at, timeout_s)

    def _wait_for(self, expression: str, what: str, path, start: float, timeout_s: float):
        """The first truthy value of ``expression`` in the page, asked every 20 ms until ``timeout_s`` after
        ``start`` (also when the page stops answering: a script in an endless loop)."""
        while True:
            value = self._ask(expression, what, path, start, timeout_s)
            if value:
                return value
            if time.perf_counter() - start > timeout_s:
                raise TimeoutError(f"{path}: {what} not after {timeout_s} s")
            time.sleep(0.02)

    def _ask(self, expression: str, what: str, path, start: float, timeout_s: float):
        """:meth:`evaluate` within what is left of ``timeout_s`` after ``start``."""
        try:
            return self.evaluate(expression, max(1.0, start + timeout_s - time.perf_counter()))
        except TimeoutError:
            raise TimeoutError(f"{path}: {what} not after {timeout_s} s (the page stopped answering)") from None

    def load(self, path: Path, width_px: int = 1280, height_px: int = 900, timeout_s: float = 120.0,
             tti: bool = False) -> PageResult:
        """Open ``path`` at a window ``width_px`` wide, click it once its first screen is drawn, scroll through it.

        What is measured (the page's own clock, from navigation):

        * ``interactive_s``: when the page has drawn the plots of its first screen and answers input: that time
          plus the input delay of a mouse click sent the moment it is drawn (from the browser taking the click to
          the page's handler running: a page still busy answers late, and that lateness counts);
        * ``load_s``: when every plot is drawn, the page scrolled down a window at a time as a reader would
          (the report draws a plot as the reader nears it, 3D ones only then);
        * with ``tti``, ``tti_s`` and ``tbt_s``: Lighthouse's time to interactive and total blocking time
          (:func:`time_to_interactive`) of a reader who stays on the first screen: the page is left alone until
          it has had no long task for 5 s (the report keeps drawing the plots below in the background, one
          task each, and those tasks count), before the scrolling above.
        """
        state = self.open(path, width_px, height_px, timeout_s)
        start = self.navigated_at

        def wait_for(expression: str, what: str):
            return self._wait_for(expression, what, path, start, timeout_s)

        def ask(expression: str):
            return self._ask(expression, "plots all drawn", path, start, timeout_s)

        delay_ms = float("nan")
        if state == "shown":
            # the input delay: from the browser taking the click to the page's handler running it
            self.evaluate("window.__attsimClick = new Promise(r => addEventListener('mousedown', "
                          "e => r(performance.now() - e.timeStamp), {capture: true, once: true})); 1")
            for kind in ("mousePressed", "mouseReleased"):  # on the page's left margin: no plot takes it
                self.call("Input.dispatchMouseEvent", type=kind, x=1, y=1, button="left", clickCount=1)
            delay_ms = max(0.0, self.evaluate("window.__attsimClick"))
        tti_ms = tbt_ms = float("nan")
        if tti:
            quiet = ("(() => { const l = window.__attsimLong || [];"
                     " const end = Math.max(0, ...l.map(e => e[0] + e[1]));"
                     f" return performance.now() - end >= {QUIET_WINDOW_MS}; }})()")
            wait_for(quiet, "a quiet window after the last long task")
            paint = self.evaluate("(performance.getEntriesByName('first-contentful-paint')[0] || {}).startTime || 0")
            tti_ms, tbt_ms = time_to_interactive(self.evaluate("window.__attsimLong || []"), paint)
        # a window down at a time, each position held until the page has rendered it (two animation frames):
        # the page sees where the reader is only when it renders, and a busy page (a 3D plot drawing, a loaded
        # machine) renders late, so a bare scroll could pass a 3D plot unseen and leave it undrawn for ever;
        # from the bottom back to the top, as a reader looking for a plot not drawn yet would
        # (at most a second: a page drawing a 3D plot on a loaded machine may not render a frame for longer, and
        # the sweep comes back to any position it passed)
        frames = ("new Promise(r => { const done = () => r(window.scrollY); setTimeout(done, 1000); "
                  "requestAnimationFrame(() => requestAnimationFrame(done)); })")
        y = 0
        while ask("document.body.dataset.plots") not in ("done", "failed"):
            bottom = ask("window.scrollY + window.innerHeight >= document.documentElement.scrollHeight")
            target = 0 if bottom else f"{y} + window.innerHeight"
            y = ask(f"window.scrollTo(0, {target}); {frames}")
            time.sleep(0.05)
            if time.perf_counter() - start > timeout_s:
                undrawn = self.evaluate("[...document.querySelectorAll('.attsim-plot')].filter(d => !d.dataset.drawn"
                                        " && !d.dataset.error).map(d => d.id + (d.dataset.gl === '1' ? ' (3D)' : ''))")
                raise TimeoutError(f"{path}: plots not all drawn after {timeout_s} s: {', '.join(undrawn)}")
        load_s = time.perf_counter() - start
        self.evaluate("window.scrollTo(0, 0)")
        interactive_ms = self._page_ms("interactive")
        self.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
        report = self.evaluate(_INSPECT)
        self._drain()
        return PageResult(
            load_s,
            (interactive_ms + delay_ms) / 1e3,
            report["plots"],
            report["sections"],
            self._console_errors(),
            report["scrollWidth"],
            report["innerWidth"],
            interactive_ms / 1e3,
            self._page_ms("libraryMs") / 1e3,
            tti_ms / 1e3,
            tbt_ms / 1e3,
        )

    def _page_ms(self, key: str) -> float:
        """The page's own time ``body.dataset[key]`` (ms), NaN when it set none (a page whose plots failed sets
        neither; NaN reaches Python as None, and 0 is no time the page records)."""
        return self.evaluate(f"Number(document.body.dataset.{key} || NaN)") or float("nan")

    def screenshot(self, path: Path, full_page: bool = True) -> Path:
        """The whole page as a PNG, stitched from window-sized captures scrolled down the page (with
        ``full_page=False``, its first screen only: one capture instead of one per screen).

        Chromium's own beyond-the-window capture composites stale layers on a long page of plots (plots drawn
        over their neighbours in the image, though not on the page); scrolling shows what a reader sees.
        """
        from io import BytesIO

        from PIL import Image  # a dependency of bokeh, which attsim's campaigns need

        width, window, height = self.evaluate(
            "[window.innerWidth, window.innerHeight, document.documentElement.scrollHeight]"
        )
        if not full_page:
            height = min(height, window)
        sheet = Image.new("RGB", (width, height), "white")
        y = 0
        while y < height:
            top = self.evaluate(f"window.scrollTo(0, {y}); window.scrollY")
            self.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
            data = self.call("Page.captureScreenshot", format="png", timeout_s=120.0)["data"]
            tile = Image.open(BytesIO(base64.b64decode(data))).convert("RGB")
            sheet.paste(tile.crop((0, y - top, width, min(window, height - top))), (0, y))
            y = top + window
        self.evaluate("window.scrollTo(0, 0)")
        sheet.save(path)
        return Path(path)

    def _drain(self) -> None:
        """Collect the events already sent (console messages arrive asynchronously)."""
        self.evaluate("1")

    def _console_errors(self) -> list:
        errors = []
        for event in self._events:
            params = event.get("params", {})
            if event.get("method") == "Runtime.exceptionThrown":
                details = params.get("exceptionDetails", {})
                errors.append(details.get("exception", {}).get("description") or details.get("text"))
            elif event.get("method") == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                errors.append(" ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", [])))
            elif event.get("method") == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
                errors.append(params["entry"].get("text"))
        return errors

    def close(self) -> None:
        try:
            self._call("Browser.close", timeout_s=10.0)
        except (RuntimeError, TimeoutError, OSError):
            pass
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        for fd in (self._to_child, self._from_child):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self._profile, ignore_errors=True)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
