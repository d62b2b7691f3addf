"""Assembling a report page: sections, figure data, plotly.js (embedded or shared), escaping.

A page is self-contained and offline by default: plotly.js is embedded
gzip-compressed and unpacked by the browser's ``DecompressionStream``. The
bundle is plotly.js's gl3d partial bundle shipped in ``assets/`` (every
trace type attsim draws; 0.56 MB compressed, and evaluated three times
faster than the full 4.8 MB bundle, which is most of a first visit's load
time); a page with a user's figure of another type embeds the full bundle
of the installed plotly instead. Pages written together (a multi-run
mission, a comparison) can share one ``plotly-gl3d-<version>.min.js``
written beside them instead (``plotlyjs=path``), still offline.

Each figure's data sits in a ``<script type="application/json">`` block with
its arrays as base64 typed arrays (``{"dtype": "f4", "bdata": ...}``, which
plotly.js reads natively); a small loader draws the plots one after another
so the page answers while they come: the first screen's at once, the others
as the reader nears them (and the 2D ones in idle time; WebGL ones only near
the window). It marks each drawn plot ``data-drawn="1"``, the body
``data-interactive`` (ms after navigation when the first screen is drawn)
and ``data-plots="done"`` once all are (the browser tests scroll through the
page and wait for it).
"""

from __future__ import annotations

import base64
import contextlib
import functools
import gzip
import html
import json
import os
import re
import secrets
from pathlib import Path
from typing import NamedTuple

import numpy as np

from .style import MODEBAR_MARGIN_PX, Plot

__all__ = ["Section", "write_page", "plotly_js_path", "as_plot"]


class Section(NamedTuple):
    """One section of a page: its anchor, heading and items (HTML strings or :class:`~.style.Plot`)."""

    anchor: str
    heading: str
    items: list


_CSS = """
*{box-sizing:border-box}
body{font-family:system-ui,sans-serif;margin:0 auto;max-width:1200px;padding:0.5em 1em;color:#222}
h1{margin-bottom:0.2em;overflow-wrap:anywhere} h2{margin:0.4em 0} h3{font-size:1em;margin:1.2em 0 0.2em}
nav{display:flex;flex-wrap:wrap;gap:0.2em 1em} section{margin-top:1.5em;border-top:1px solid #ddd}
.table-wrap{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;margin:0.5em 0}
th,td{border:1px solid #ccc;padding:4px 8px;text-align:left;vertical-align:top}
td.num{text-align:right;font-variant-numeric:tabular-nums}
tr.pass td:first-child{color:#0a0;font-weight:bold} tr.fail td:first-child{color:#c00;font-weight:bold}
tr.thin td:first-child{color:#b36b00;font-weight:bold}
.banner{padding:0.6em 1em;margin:0.5em 0;border-radius:4px;font-weight:bold}
.bad{background:#fdd} .warn{background:#ffd} .good{background:#dfd}
span.pass{color:#080;font-weight:bold} span.fail{color:#c00;font-weight:bold} span.thin{color:#b36b00;font-weight:bold}
.note{color:#555} .attsim-plot{width:100%;min-height:120px}
@media (max-width:600px){body{padding:0.3em 0.4em} th,td{padding:3px 4px;font-size:0.9em}}
@media (max-width:600px){table.cards,table.cards tbody{display:block} table.cards tr:first-child{display:none}
table.cards tr{display:flex;flex-wrap:wrap;border-top:1px solid #ccc;padding:3px 0}
table.cards td{border:none;padding:1px 8px 1px 0} table.cards td.name{flex:1 1 70%;font-weight:bold}
table.cards td.wide{order:9;flex-basis:100%}
table.cards td[data-label]::before{content:attr(data-label) " ";color:#666;font-size:0.85em;font-weight:normal}}
"""

_LOADER = """
(function () {
  // Draws the page's plots: those on the first screen at once, each other one as the reader nears it, and the
  // two-dimensional ones also in the browser's idle time; one plot per task, so the page answers in between.
  // WebGL (3D) plots are drawn only near the window: each costs a long task and a graphics context.
  var divs = [], queue = [], busy = false, left = 0, firstScreen = [], started = false;
  // an idle callback with a deadline: Chromium may stop declaring idle periods after early input (a click while
  // the page loads), and without one the rest of the plots would wait for the reader to scroll to them
  var QUIET_MS = 1500, IDLE_WAIT_MS = 1000, idle = function (f) { return setTimeout(function () {
    if (window.requestIdleCallback) { requestIdleCallback(f, {timeout: IDLE_WAIT_MS}); } else { setTimeout(f, 0); }
  }, 100); };
  function fail(message) {
    document.body.dataset.plots = 'failed';
    divs.forEach(function (div) { div.textContent = message; });
  }
  function settle() {
    var shown = firstScreen.every(function (d) { return d.dataset.drawn || d.dataset.error; });
    if (!document.body.dataset.interactive && shown) {
      document.body.dataset.interactive = String(Math.round(performance.now()));
    }
    if (left === 0) { document.body.dataset.plots = 'done'; }
  }
  function grow(div, figure) {
    // a legend that wraps to more rows on a narrow screen takes its room from the plot: give it back
    var want = figure.layout && figure.layout.meta && figure.layout.meta.plot_px;
    var full = div._fullLayout, size = full && full._size;
    if (!want || !size || size.h >= want - 1) { return null; }
    return Plotly.relayout(div, {height: Math.round(full.height + want - size.h)});
  }
  function pump() {
    if (busy) { return; }
    if (!queue.length) { idle(background); return; }
    busy = true;
    var div = queue.shift(), t0 = performance.now();
    var figure = JSON.parse(document.getElementById(div.id + '-data').textContent);
    Plotly.newPlot(div, figure.data, figure.layout, {responsive: true, displaylogo: false})
      .then(function () { return grow(div, figure); })
      .then(function () { return figure.frames ? Plotly.addFrames(div, figure.frames) : null; })
      .then(function () { div.dataset.drawn = '1'; div.dataset.ms = String(Math.round(performance.now() - t0)); },
            function (error) { div.dataset.error = String(error); div.textContent = 'Plot not drawn: ' + error; })
      .then(function () { busy = false; left -= 1; settle(); setTimeout(pump, 0); });
  }
  function enqueue(div, first) {
    var k = queue.indexOf(div);
    if (div.dataset.drawn || div.dataset.error || (k >= 0 && !first)) { return; }
    if (k >= 0) { queue.splice(k, 1); }
    if (first) { queue.unshift(div); } else { queue.push(div); }
    pump();
  }
  function background() {
    // the rest only once the first screen has been shown a while: a reader's first click is not kept waiting
    if (busy || queue.length || !started || !document.body.dataset.interactive ||
        performance.now() < Number(document.body.dataset.interactive) + QUIET_MS) { idle(background); return; }
    var next = divs.filter(function (d) { return !d.dataset.drawn && !d.dataset.error && d.dataset.gl !== '1'; })[0];
    if (next) { enqueue(next, false); }
  }
  function draw() {
    divs = Array.prototype.slice.call(document.querySelectorAll('.attsim-plot'));
    left = divs.length;
    if (typeof Plotly === 'undefined') { fail('plotly.js could not be loaded: plots are not shown.'); return; }
    document.body.dataset.libraryMs = String(Math.round(performance.now()));
    firstScreen = divs.filter(function (d) {
      var r = d.getBoundingClientRect();
      return r.top < window.innerHeight && r.bottom > 0;
    });
    firstScreen.forEach(function (d) { enqueue(d, false); });
    started = true;
    if ('IntersectionObserver' in window) {
      var near = new IntersectionObserver(function (entries) {
        entries.forEach(function (e) { if (e.isIntersecting) { enqueue(e.target, true); } });
      }, {rootMargin: '100% 0px'});
      divs.forEach(function (d) { if (firstScreen.indexOf(d) < 0) { near.observe(d); } });
    } else {
      divs.forEach(function (d) { enqueue(d, false); });
    }
    settle();
  }
  function whenParsed() {  // this script sits in the page's head: the plots' places come after it
    if (document.readyState === 'loading') { document.addEventListener('DOMContentLoaded', draw); } else { draw(); }
  }
  var packed = document.getElementById('plotlyjs-gz');
  if (!packed) { whenParsed(); return; }  // a shared plotly.js, loaded deferred: it runs before DOMContentLoaded
  // a data: URL decodes the base64 natively; the browser's DecompressionStream unpacks the gzip
  fetch('data:application/octet-stream;base64,' + packed.textContent.trim())
    .then(function (r) { return new Response(r.body.pipeThrough(new DecompressionStream('gzip'))).text(); })
    .then(function (code) {
      var script = document.createElement('script');
      script.text = code;
      document.head.appendChild(script);
      whenParsed();
    }, function (error) {
      document.addEventListener('DOMContentLoaded', function () {
        divs = Array.prototype.slice.call(document.querySelectorAll('.attsim-plot'));
        fail('plotly.js could not be unpacked: ' + error);
      });
      if (document.readyState !== 'loading') { document.dispatchEvent(new Event('DOMContentLoaded')); }
    });
})();
"""


# the trace types of plotly.js's gl3d partial bundle (assets/, tools/make_plotly_bundle.py): every figure attsim draws
GL3D_TRACES = frozenset({"scatter", "scatter3d", "mesh3d", "surface", "cone", "streamtube", "isosurface", "volume"})
_ASSETS = Path(__file__).parent / "assets"


class _Library(NamedTuple):
    """One plotly.js bundle: its file name when shared beside pages, and its source gzip-compressed."""

    name: str
    label: str
    gzipped: bytes


def _plotly_version() -> str:
    from plotly.offline import get_plotlyjs_version

    return get_plotlyjs_version()


@functools.lru_cache(maxsize=2)
def _library(full: bool) -> _Library:
    """The gl3d partial bundle shipped with attsim, or (``full``, or when it is missing) the installed plotly's."""
    bundled = sorted(_ASSETS.glob("plotly-gl3d-*.min.js.gz"))
    if not full and bundled:
        name = bundled[-1].name[: -len(".gz")]
        version = name[len("plotly-gl3d-") : -len(".min.js")]
        return _Library(name, f"plotly.js v{version} (gl3d partial bundle)", bundled[-1].read_bytes())
    import plotly

    source = (Path(plotly.__file__).parent / "package_data" / "plotly.min.js").read_bytes()
    version = _plotly_version()
    return _Library(f"plotly-{version}.min.js", f"plotly.js v{version}", gzip.compress(source, 6, mtime=0))


def _is_gl(kind: str) -> bool:
    """True for a trace drawn with WebGL (a graphics context and a long first draw each)."""
    maps = ("scattermap", "choroplethmap", "densitymap")
    return (kind in GL3D_TRACES and kind != "scatter") or kind.endswith("gl") or kind.startswith(maps)


def _needs_full_bundle(plots) -> bool:
    """True when a figure has a trace type the gl3d bundle lacks (a user's bar chart or map, say)."""
    return any(
        trace.get("type", "scatter") not in GL3D_TRACES for plot in plots for trace in plot.figure.get("data", [])
    )


def plotly_js_path(directory) -> Path:
    """Where a shared plotly.js goes in ``directory`` (named by its bundle and version).

    A page whose figures need the full bundle writes that one beside it, under its own name.
    """
    return Path(directory) / _library(False).name


def _write_atomically(target: Path, data: bytes) -> None:
    """Write ``target`` whole or not at all: a reader (a browser, another process) sees the old file or the new one.

    The bytes go to a temporary file of this writer's own in the same directory, renamed over ``target``: two
    processes writing the same page (or the same shared plotly.js) each rename a complete file, the last one wins;
    a write that fails (a full disk, a kill) leaves the earlier file as it was. A symbolic link is followed (the
    file it names is replaced, the link stays); something that is not a regular file (a device, a pipe) is written
    to as it is.
    """
    target = Path(os.path.realpath(target))
    if target.exists() and not target.is_file():
        with open(target, "wb") as file:
            file.write(data)
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp")
    try:
        with open(tmp, "xb") as file:  # a name no one else has (permissions as for any new file)
            file.write(data)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _share_plotly(target: Path, library: _Library) -> None:
    source = gzip.decompress(library.gzipped)
    if not (target.is_file() and target.stat().st_size == len(source)):
        _write_atomically(target, source)


_DTYPES = {
    np.dtype("float32"): "f4",
    np.dtype("float64"): "f8",
    np.dtype("int32"): "i4",
    np.dtype("int8"): "i1",
    np.dtype("uint8"): "u1",
    np.dtype("int16"): "i2",
    np.dtype("uint32"): "u4",
}


def _encode(value):
    """JSON-ready data: numeric arrays as plotly.js typed-array specs (base64), the rest as JSON values."""
    if isinstance(value, np.ndarray):
        if value.dtype == np.int64:
            value = value.astype(np.int32)
        if value.ndim == 1 and value.dtype in _DTYPES:
            return {
                "dtype": _DTYPES[value.dtype],
                "bdata": base64.b64encode(np.ascontiguousarray(value).tobytes()).decode(),
            }
        return [_encode(v) for v in value.tolist()] if value.dtype == object else value.tolist()
    if isinstance(value, dict):
        return {k: _encode(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_encode(v) for v in value]
    if isinstance(value, (np.floating, float)):
        return float(value) if np.isfinite(value) else None
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.bool_):
        return bool(value)
    return value


USER_FIGURE_HEIGHT_PX = 450  # plotly's own default: a user's figure without a height is not squeezed into its box


# the tags of plotly's HTML subset (plotly shows any other tag as text)
_PLOTLY_TAGS = re.compile(r"<\s*/?\s*(?:br|b|i|em|sup|sub|s|u|span|a)(?:\s[^<>]*)?/?\s*>", re.IGNORECASE)


def _plain(text: str) -> str:
    """A title in plotly's HTML subset as the plain text plotly shows: its tags dropped (``<br>`` a space),
    entities read, any other tag left as the text it is."""
    return " ".join(html.unescape(_PLOTLY_TAGS.sub(" ", text)).split())


def as_plot(figure) -> Plot:
    """A :class:`Plot` from a Plot or a plotly ``go.Figure`` (a user's figure; its title moves above it).

    The figure keeps its height, or gets plotly's default one (the page's box for it would otherwise be 120 px).
    """
    if isinstance(figure, Plot):
        return figure
    if not hasattr(figure, "to_plotly_json"):
        from ..errors import InputError

        raise InputError("extra_figures", "must be plotly figures", f"got {type(figure).__name__}")
    import plotly.io

    spec = json.loads(plotly.io.to_json(figure, validate=False))
    layout = spec.setdefault("layout", {})
    title = layout.pop("title", None)
    text = title.get("text", "") if isinstance(title, dict) else (title or "")
    layout.setdefault("margin", {"l": 10, "r": MODEBAR_MARGIN_PX, "t": 30, "b": 10})
    layout.setdefault("modebar", {"orientation": "v"})
    layout.setdefault("autosize", True)
    if not isinstance(layout.get("height"), (int, float)) or layout["height"] <= 0:
        layout["height"] = USER_FIGURE_HEIGHT_PX
    layout.pop("width", None)
    for key, axis in layout.items():
        if key.startswith(("xaxis", "yaxis")) and isinstance(axis, dict):
            axis.setdefault("automargin", True)
    return Plot(_plain(str(text)), spec, markup=True)


def _literal(value):
    """Plotly text that shows as written: plotly reads a subset of HTML (and entities) in names and labels."""
    if isinstance(value, str):
        return html.escape(value, quote=False)
    if isinstance(value, (list, tuple)):
        return [_literal(v) for v in value]
    return value


_TEXT_KEYS = ("name", "text", "hovertext", "ticktext")


def _literal_text(node):
    """A copy of attsim's own figure with its text (user names among it) taken literally by plotly."""
    if isinstance(node, dict):
        return {k: (_literal(v) if k in _TEXT_KEYS else _literal_text(v)) for k, v in node.items()}
    if isinstance(node, list):
        return [_literal_text(v) for v in node]
    return node


def _has_data(figure: dict) -> bool:
    """True when some trace (limit lines aside) has a value to draw."""
    for trace in figure.get("data", []):
        if isinstance(trace.get("meta"), dict) and trace["meta"].get("limit"):
            continue
        for key in ("z", "y"):
            if key not in trace:
                continue
            values = trace[key]
            if isinstance(values, np.ndarray) and values.dtype.kind in "fiu":
                if np.isfinite(values).any():
                    return True
            elif isinstance(values, (list, tuple)) and any(v is not None for v in values):
                if any(not isinstance(v, float) or np.isfinite(v) for v in values if v is not None):
                    return True
            break
    return False


def _figure_json(plot: Plot) -> str:
    # in a script block "</script" would end it and "<!--" change how it ends: "<", ">" and "&" (only ever inside
    # JSON strings) go as \\u escapes, which JSON.parse reads back the same
    figure = plot.figure if plot.markup else _literal_text(plot.figure)
    text = json.dumps(_encode(figure), separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def write_page(path: Path, title: str, sections: list[Section], plotlyjs="inline", footer: str = "") -> Path:
    """Write a report page.

    Parameters
    ----------
    path : Path
        The HTML file.
    title : str
        Page title (escaped here).
    sections : list of Section
        In order; headings are escaped here, HTML items are written as given (their builders escape user text).
    plotlyjs : "inline" or path
        Embed plotly.js (compressed), or write it once at this path and reference it relatively.
    footer : str
        HTML below the sections.
    """
    path = Path(path)
    body, nav, plots = [], [], []
    for section in sections:
        nav.append(f"<a href='#{section.anchor}'>{html.escape(section.heading)}</a>")
        parts = []
        for item in section.items:
            if isinstance(item, str):
                parts.append(item)
                continue
            plot = as_plot(item)
            if not plot.markup and not _has_data(plot.figure):  # never an empty frame: say so instead
                parts.append(f"<h3>{html.escape(plot.title)}</h3><p class='note'>Nothing to draw: every value "
                             "is missing (NaN) in the telemetry.</p>")
                continue
            plots.append(plot)
            div = f"plot-{len(plots)}"
            heading = f"<h3>{html.escape(plot.title)}</h3>" if plot.title else ""
            layout = plot.figure.get("layout") or {}
            height = layout.get("height")
            # the plot's room is kept before it is drawn, so the page does not jump as plots arrive below the fold
            room = f" style='min-height:{int(height)}px'" if isinstance(height, (int, float)) and height > 0 else ""
            gl = any(_is_gl(t.get("type", "scatter")) for t in plot.figure.get("data", []))
            parts.append(
                f"{heading}<div class='attsim-plot' id='{div}' data-title='{html.escape(plot.title, quote=True)}'"
                f" data-gl='{int(gl)}'{room}></div>"
                f"<script type='application/json' id='{div}-data'>{_figure_json(plot)}</script>"
            )
        body.append(
            f"<section id='{section.anchor}' class='report-section'><h2>{html.escape(section.heading)}</h2>"
            f"{''.join(parts)}</section>"
        )
    library = _library(_needs_full_bundle(plots))
    if plotlyjs == "inline":
        script = (
            f"<!-- {library.label}, gzip + base64 -->"
            f"<script type='application/octet-stream' id='plotlyjs-gz'>{base64.b64encode(library.gzipped).decode()}"
            "</script>"
        )
    else:
        shared = Path(plotlyjs)
        if library.name != _library(False).name:
            shared = shared.parent / library.name
        _share_plotly(shared, library)
        relative = Path(os.path.relpath(shared.resolve(), path.resolve().parent)).as_posix()
        script = f"<script defer src='{html.escape(relative, quote=True)}'></script>"
    page = (
        f"<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        f"<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{html.escape(str(title))}</title><style>{_CSS}</style>"
        # plotly.js first: it unpacks while the browser reads the page's text and figure data
        f"{script}<script>{_LOADER}</script></head>"
        f"<body><h1>{html.escape(str(title))}</h1><nav>{''.join(nav)}</nav>{''.join(body)}{footer}</body></html>"
    )
    _write_atomically(path, page.encode("utf-8"))
    return path
