"""How a report's figures look: palette, line styles, stacked panels, legends, number formatting.

Figures are plain Plotly figure dictionaries (``{"data": [...], "layout":
{...}}``) wrapped in :class:`Plot`: built without plotly's validators (fast)
and drawn by the page's own loader (:mod:`.page`).

Layout rules, the same for every figure:

* the title is HTML above the plot (it wraps on a narrow screen), never
  inside the figure;
* the legend sits above the plot area and the x-axis title below it, so the
  two never overlap; the legend wraps to several rows on a narrow screen;
* every axis title carries its unit;
* widths follow the page (responsive), heights are fixed per panel.
"""

from __future__ import annotations

import html
import math
from typing import NamedTuple
from collections.abc import Sequence

import numpy as np

MAX_POINTS = 2500  # two points (a min and a max) per pixel of a wide plot
# 12 distinguishable colours (Tableau 10 with two darker additions); beyond them the dash style changes
PALETTE = (
    "#1f77b4",
    "#d62728",
    "#2ca02c",
    "#ff7f0e",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#17becf",
    "#7f7f7f",
    "#bcbd22",
    "#0b1f6b",
    "#6b4f00",
)
DASHES = ("solid", "dash", "dot", "dashdot")
AXIS_COLOURS = {"x": PALETTE[0], "y": PALETTE[1], "z": PALETTE[2]}
PANEL_HEIGHT_PX = 260
TIME_TITLE = "t [s]"
MODEBAR_MARGIN_PX = 36
LEGEND_CHARS = 40  # what a legend entry of 11 px text holds beside a 390 px screen's axis labels


class Plot(NamedTuple):
    """One figure of a section: its title (HTML above it) and the Plotly figure dictionary.

    ``markup`` is True for a user's own figure, whose text may use plotly's HTML subset; attsim's figures are
    drawn with their text taken literally (names of components, modes and events come from the user).
    """

    title: str
    figure: dict
    markup: bool = False


class Panel(NamedTuple):
    """One panel of a stacked figure: its traces, y-axis title (with unit) and decorations."""

    y_title: str
    traces: list
    shapes: list = []
    log_y: bool = False
    height_px: int = PANEL_HEIGHT_PX
    y_range: Sequence | None = None


def style(k: int) -> dict:
    """The colour and dash of the ``k``-th trace of a figure."""
    return {"color": PALETTE[k % len(PALETTE)], "dash": DASHES[(k // len(PALETTE)) % len(DASHES)]}


def decimate(x, y) -> tuple[np.ndarray, np.ndarray]:
    """At most ``MAX_POINTS`` points (min/max-preserving MinMaxLTTB), as float32: what a screen shows."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(x) != len(y):
        raise ValueError(f"decimate: {len(x)} times for {len(y)} values")
    if len(x) > MAX_POINTS:
        finite = np.isfinite(y)
        if not finite.all():
            x, y = x[finite], y[finite]
        if len(x) > MAX_POINTS:
            from tsdownsample import MinMaxLTTBDownsampler

            index = MinMaxLTTBDownsampler().downsample(
                np.ascontiguousarray(x), np.ascontiguousarray(y), n_out=MAX_POINTS
            )
            x, y = x[index], y[index]
    with np.errstate(over="ignore"):  # beyond float32's 3.4e38 a value is drawn as off the scale
        return x.astype(np.float32), y.astype(np.float32)


def line(
    x,
    y,
    name: str,
    k: int = 0,
    log_y: bool = False,
    color: str | None = None,
    dash: str | None = None,
    width: float = 1.5,
    group: str | None = None,
    shape: str | None = None,
) -> dict:
    """A decimated line trace (non-positive values dropped on a log axis)."""
    x, y = decimate(x, y)
    if log_y:
        y = np.where(y > 0, y, np.nan).astype(np.float32)
    look = style(k)
    trace = {
        "type": "scatter",
        "mode": "lines",
        "name": name,
        "x": x,
        "y": y,
        "line": {"color": color or look["color"], "dash": dash or look["dash"], "width": width},
    }
    if group:
        trace["legendgroup"] = group
    if shape:
        trace["line"]["shape"] = shape
    return trace


def limit_lines(
    t0: float, t1: float, limit: float, name: str, color: str = "#444", symmetric: bool = True, group: str | None = None
) -> dict:
    """A dashed horizontal line at ``limit`` (and ``-limit``) over the run, in the legend as ``name``."""
    x = [t0, t1, None, t0, t1] if symmetric else [t0, t1]
    y = [limit, limit, None, -limit, -limit] if symmetric else [limit, limit]
    trace = {
        "type": "scatter",
        "mode": "lines",
        "name": name,
        "x": x,
        "y": y,
        "hoverinfo": "name+y",
        "line": {"color": color, "dash": "dash", "width": 1.2},
        "meta": {"limit": True},
    }
    if group:
        trace["legendgroup"] = group
    return trace


REQUIREMENT_COLOUR = "#c00"
WINDOW_STATISTICS = ("mean", "rms")  # a declared statistic of the whole window (drawn as a value, not a threshold)
WINDOW_OPACITY = 0.07


def requirement_marks(rows, factors: dict, unit: str) -> tuple[list[dict], list[dict]]:
    """Traces and shapes of declared requirements on one panel: each bound drawn only over its window's intervals,
    the windows shaded, and the worst point (where the value was reached) marked. ``rows`` are
    :class:`~.runinfo.Judged` with a ``declared`` record; ``factors[their unit]`` turns it into the panel's ``unit``
    (a row in a unit not among them is left out)."""
    traces, shapes, shaded = [], [], set()
    for k, row in enumerate(rows):
        d = row.declared
        factor = factors.get(d.get("unit") if d.get("statistic") != "settle" else unit)
        level = d.get("settle_below", d.get("settle_above", d.get("limit")))
        if factor is None:
            continue
        intervals = [(float(a), float(b)) for a, b in d.get("intervals") or []]
        if not isinstance(level, (int, float)) or not intervals:
            continue
        what = "settles" if d.get("statistic") == "settle" else str(d.get("statistic"))
        x, y = [], []
        for a, b in intervals:
            x += [a, b, None]
            y += [level * factor, level * factor, None]
        if what == "absmax":  # a bound on |value|: both signs
            x, y = x + x, y + [None if v is None else -v for v in y]
        over = what in WINDOW_STATISTICS  # a bound on the window's mean or RMS, not on every sample
        if what == "settles":
            name = f"requirement: settle {'below' if 'settle_below' in d else 'above'} {fmt(level * factor)} {unit}"
        elif over:
            name = f"requirement: window {what} {d.get('op')} {fmt(level * factor)} {unit}"
        elif what == "absmax":
            name = f"requirement: max |value| {d.get('op')} {fmt(level * factor)} {unit}"
        else:
            name = f"requirement: {what} {d.get('op')} {fmt(level * factor)} {unit}"
        dash = DASHES[(k + 1) % len(DASHES)]
        traces.append({"type": "scatter", "mode": "lines", "name": name, "x": x[:-1], "y": y[:-1],
                       "hoverinfo": "name+y", "line": {"color": REQUIREMENT_COLOUR, "dash": dash, "width": 1.6},
                       "meta": {"limit": True}})
        if over and isinstance(row.value, (int, float)) and math.isfinite(row.value):
            # the measured statistic beside its bound, over the same window: the trace crossing the bound is no
            # failure, the window's value is what is judged
            traces.append({"type": "scatter", "mode": "lines", "x": x[:-1],
                           "y": [None if v is None else float(row.value) * factor for v in y[:-1]],
                           "name": f"measured window {what} {fmt(float(row.value) * factor)} {unit}",
                           "hoverinfo": "name+y", "line": {"color": REQUIREMENT_COLOUR, "dash": "solid", "width": 3},
                           "meta": {"limit": True}})
        if d.get("window") not in shaded:
            shaded.add(d.get("window"))
            shapes += shade(intervals, REQUIREMENT_COLOUR, f"window: {d.get('window')}", opacity=WINDOW_OPACITY)
        at = d.get("at_s")
        value = level if d.get("statistic") == "settle" else row.value
        if isinstance(at, (int, float)) and isinstance(value, (int, float)) and math.isfinite(value):
            word = {"max": "worst", "min": "worst", "absmax": "worst", "final": "final",
                    "settle": "settled"}.get(d.get("statistic"), "")
            drawn = d.get("at_value", value)  # absmax: the signed sample whose size is the value
            traces.append({"type": "scatter", "mode": "markers", "x": [float(at)], "y": [float(drawn) * factor],
                           "name": f"{word} {fmt(float(value) * factor)} {unit} at {fmt(float(at), 6)} s",
                           "marker": {"color": REQUIREMENT_COLOUR, "size": 11, "symbol": "x-thin-open",
                                      "line": {"width": 2.5, "color": REQUIREMENT_COLOUR}}})
    return traces, shapes


def shade(intervals, color: str, name: str, yref: str = "y", opacity: float = 0.18, min_width_s: float = 0.0
          ) -> list[dict]:
    """Shaded time intervals ``[(start, stop), ...]`` on the panel of ``yref``, one legend entry.

    An interval shorter than ``min_width_s`` is widened to it about its middle, so that one of an instant shows.
    """
    shapes = []
    for k, (start, stop) in enumerate(intervals):
        if stop - start < min_width_s:
            middle = 0.5 * (start + stop)
            start, stop = middle - 0.5 * min_width_s, middle + 0.5 * min_width_s
        shapes.append(
            {
                "type": "rect",
                "xref": "x",
                "yref": f"{yref} domain",
                "x0": float(start),
                "x1": float(stop),
                "y0": 0,
                "y1": 1,
                "fillcolor": color,
                "opacity": opacity,
                "line": {"width": 0},
                "layer": "below",
                "name": name,
                "showlegend": k == 0,
                "legendgroup": name,
            }
        )
    return shapes


def intervals_where(t: np.ndarray, flag: np.ndarray) -> list[tuple[float, float]]:
    """The ``(start, stop)`` times of the runs of True in ``flag``."""
    edges = np.diff(np.concatenate([[0], np.asarray(flag, dtype=np.int8), [0]]))
    starts, stops = np.nonzero(edges == 1)[0], np.nonzero(edges == -1)[0]
    return [(float(t[a]), float(t[min(b, len(t) - 1)])) for a, b in zip(starts, stops)]


def stacked(title: str, panels: Sequence[Panel], x_title: str = TIME_TITLE) -> Plot:
    """Panels one above the other sharing the time axis; one legend above them all."""
    gap_px = 28
    total = sum(p.height_px for p in panels) + gap_px * (len(panels) - 1)
    data, shapes, layout = [], [], {}
    top = 1.0
    for k, panel in enumerate(panels):
        suffix = "" if k == 0 else str(k + 1)
        height = panel.height_px / total
        domain = [max(0.0, top - height), top]
        top = domain[0] - gap_px / total
        yaxis = {
            "title": {"text": panel.y_title},
            "domain": domain,
            "anchor": f"x{suffix}",
            "automargin": True,
            "exponentformat": "power" if panel.log_y else "SI",
            "zeroline": False,
        }
        if panel.log_y:
            yaxis["type"] = "log"
            decades = _decades(panel.traces)
            if decades < 2.0:  # plotly labels every digit of a short log axis: 2 and 5 read better
                yaxis["dtick"] = "D2"
            elif decades >= 3.0:  # and 2 and 5 between the decades of a long one: the decades alone read better
                yaxis["dtick"] = 1
        if panel.y_range is not None:
            yaxis["range"] = list(panel.y_range)
        xaxis = {"anchor": f"y{suffix}", "showticklabels": k == len(panels) - 1, "automargin": True}
        if k:
            xaxis["matches"] = "x"
        if k == len(panels) - 1:
            xaxis["title"] = {"text": x_title}
        layout[f"xaxis{suffix}"], layout[f"yaxis{suffix}"] = xaxis, yaxis
        for trace in panel.traces:
            data.append({**trace, "xaxis": f"x{suffix}", "yaxis": f"y{suffix}"})
        for shape in panel.shapes:
            yref = shape.get("yref", "y")
            shapes.append(
                {
                    **shape,
                    "xref": f"x{suffix}",
                    "yref": yref.replace("y", f"y{suffix}", 1) if yref.startswith("y") and suffix else yref,
                }
            )
    # the time axis spans the data exactly (plotly pads it around markers)
    ends = [(float(np.nanmin(x)), float(np.nanmax(x))) for x in
            (np.asarray(tr.get("x"), dtype=float) for tr in data if not tr.get("meta", {}).get("limit"))
            if x.size and np.isfinite(x).any()]
    if ends and x_title == TIME_TITLE:
        low, high = min(e[0] for e in ends), max(e[1] for e in ends)
        if high > low:
            layout["xaxis"]["range"] = [low, high]
    layout.update(base_layout(total), shapes=_one_legend_entry_each(data, shapes))
    return Plot(title, {"data": data, "layout": layout})


def _decades(traces) -> float:
    """How many decades the positive values of ``traces`` span (0 without any)."""
    values = [np.asarray(tr.get("y"), dtype=float) for tr in traces]
    values = np.concatenate([v[np.isfinite(v) & (v > 0)] for v in values]) if values else np.zeros(0)
    return float(np.log10(values.max() / values.min())) if values.size else 0.0


def short(text, length: int = 16) -> str:
    """``text`` cut to ``length`` characters with an ellipsis (a tick label that would squeeze its plot)."""
    text = str(text)
    return text if len(text) <= length else text[: length - 1] + "…"


def _one_legend_entry_each(data: list, shapes: list) -> list:
    """One legend entry per name (a wheel's speed, momentum and torque; the eclipse shaded on every panel).

    Traces of one name share a legend group, so its one entry shows or hides them all. Returns the shapes.
    """
    counts = {}
    for trace in data:
        if isinstance(trace.get("name"), str) and len(trace["name"]) > LEGEND_CHARS:
            # a longer entry runs past a 390 px plot, under the mode bar (the hover keeps the whole name)
            whole = html.escape(trace["name"], quote=False)
            trace.setdefault("hovertemplate", f"{whole}<br>%{{x}}, %{{y}}<extra></extra>")
            trace["name"] = short(trace["name"], LEGEND_CHARS)
        counts[trace.get("name")] = counts.get(trace.get("name"), 0) + 1
    seen = set()
    for trace in data:
        if counts[trace.get("name")] > 1 and "legendgroup" not in trace:
            trace["legendgroup"] = f"name:{trace.get('name')}"
        key = (trace.get("name"), trace.get("legendgroup"))
        if trace.get("showlegend", True) and key in seen:
            trace["showlegend"] = False
        seen.add(key)
    shown = set()
    for shape in shapes:
        if isinstance(shape.get("name"), str):
            shape["name"] = short(shape["name"], LEGEND_CHARS)
        if shape.get("showlegend"):
            if shape.get("name") in shown:
                shape["showlegend"] = False
            shown.add(shape.get("name"))
    return shapes


def base_layout(plot_height_px: float) -> dict:
    """Margins, legend above the plot area, the mode bar upright in the right margin, responsive width.

    ``meta.plot_px`` is the plot area's height: the page's loader makes the figure taller when a legend that
    wraps to more rows (a narrow screen) would take room from it.
    """
    return {
        "height": int(plot_height_px + 110),
        "meta": {"plot_px": int(plot_height_px)},
        # the mode bar upright in a right margin of its own never covers the legend above the plot
        "modebar": {"orientation": "v"},
        "margin": {"l": 10, "r": MODEBAR_MARGIN_PX, "t": 10, "b": 10},
        "autosize": True,
        "legend": {"orientation": "h", "x": 0, "xanchor": "left", "y": 1.0, "yanchor": "bottom", "font": {"size": 11}},
        "hovermode": "closest",
    }


def fmt(value, digits: int = 4) -> str:
    """A number rounded to ``digits`` significant digits, without an exponent between 1e-3 and 1e6."""
    if value is None:
        return "–"
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if not isinstance(value, (float, np.floating)):
        return str(value)
    value = float(value)
    if not math.isfinite(value):
        return str(value)
    if value == 0.0:
        return "0"
    magnitude = math.floor(math.log10(abs(value)))
    if -3 <= magnitude < 6:
        decimals = max(0, digits - 1 - magnitude)
        text = f"{value:.{decimals}f}"
        return text.rstrip("0").rstrip(".") if "." in text else text
    mantissa, exponent = f"{value:.{digits - 1}e}".split("e")
    mantissa = mantissa.rstrip("0").rstrip(".") if "." in mantissa else mantissa
    return f"{mantissa}e{int(exponent)}"


def fmt_vector(values, digits: int = 4) -> str:
    """``[a, b, c]`` with each entry through :func:`fmt`."""
    return "[" + ", ".join(fmt(float(v), digits) for v in np.ravel(values)) + "]"
