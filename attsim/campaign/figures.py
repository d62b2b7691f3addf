"""The campaign report's figures (layer 8), drawn as the run pages draw theirs (:mod:`attsim.reporting.style`).

* **Envelopes** on the requirement's scale: log when the band spans decades
  or the requirement on the quantity lies far below its peak, with each
  declared requirement on the quantity drawn over its window (the window of
  the run that first reported it) and the window shaded.
* **Histograms** whose range fits the data (log bins when the positive values
  span decades), the bound marked where it falls on the axis and said in the
  title when it lies off it, and the ECDF below on the same axis.
* **Influence**: each criterion's value (or verdict) against the drawn
  parameters that rank highest by Spearman's rank correlation.
"""

from __future__ import annotations

import math

import numpy as np

from ..reporting.style import (PALETTE, Panel, Plot, base_layout, fmt, line, requirement_marks, stacked)

__all__ = ["envelope_plot", "criterion_plot", "influence_plot", "PASS_COLOUR", "FAIL_COLOUR", "log_scale", "FEW_RUNS"]

PASS_COLOUR, FAIL_COLOUR = "#2a9d3a", "#d62728"
BAND = "rgba(31,119,180,0.25)"
FEW_RUNS = 20  # under this many runs, percentiles p1/p99 are the min/max: the band says min-max
UNIT_FACTORS = {"deg": {"deg": 1.0, "rad": 180.0 / math.pi, "arcsec": 1 / 3600.0},
                "deg/s": {"deg/s": 1.0, "rad/s": 180.0 / math.pi}, "rad/s": {"rad/s": 1.0},
                "rad": {"rad": 1.0, "deg": math.pi / 180.0}}


def log_scale(values, limits=()) -> bool:
    """True when positive ``values`` span three decades or more, or a positive limit lies 30 times below their
    peak (a 0.1 deg requirement under a 100 deg transient)."""
    values = np.asarray(values, dtype=float)
    positive = values[np.isfinite(values) & (values > 0)]
    if positive.size < 2 or positive.size < 0.9 * np.isfinite(values).sum():
        return False
    peak = float(positive.max())
    if peak / float(positive.min()) >= 1e3:
        return True
    return any(0 < limit and peak / limit >= 30.0 for limit in limits)


def envelope_plot(name: str, unit: str, frame, declared: list) -> Plot:
    """The p1-p99 band (min-max under :data:`FEW_RUNS` runs), median and min/max of one quantity over the runs,
    with the requirements on it."""
    t = frame.index.to_numpy(dtype=float)
    rows = [row for row in declared if row.declared.get("unit", unit) in UNIT_FACTORS.get(unit, {unit: 1.0})]
    limits = [float(row.declared["limit"]) * UNIT_FACTORS.get(unit, {unit: 1.0})[row.declared.get("unit", unit)]
              for row in rows]
    columns = [c for c in ("p0", "p1", "p50", "p99", "p100") if c in frame]
    log_y = log_scale(frame[columns].to_numpy().ravel(), limits)
    traces = []
    runs = int(frame["runs"].max()) if len(frame) else 0
    if runs < FEW_RUNS and "p0" in frame and "p100" in frame:  # a p1-p99 band of a few runs is their min-max
        high = line(t, frame["p100"].to_numpy(), "max", 0, log_y=log_y, width=0)
        low = line(t, frame["p0"].to_numpy(), f"min-max of the {runs} runs", 0, log_y=log_y, width=0)
        high.update(showlegend=False, hoverinfo="skip")
        low.update(fill="tonexty", fillcolor=BAND)
        traces += [high, low]
    elif "p1" in frame and "p99" in frame:
        high = line(t, frame["p99"].to_numpy(), "p99", 0, log_y=log_y, width=0)
        low = line(t, frame["p1"].to_numpy(), "p1-p99 of the runs", 0, log_y=log_y, width=0)
        high.update(showlegend=False, hoverinfo="skip")
        low.update(fill="tonexty", fillcolor=BAND)
        traces += [high, low]
    if "p50" in frame:
        traces.append(line(t, frame["p50"].to_numpy(), "median", 0, log_y=log_y, color=PALETTE[0], width=2))
    for column, label in (("p0", "min"), ("p100", "max")):
        if column in frame and runs >= FEW_RUNS:
            traces.append(line(t, frame[column].to_numpy(), label, 0, log_y=log_y, color="#444", dash="dash",
                               width=1))
    marks, windows = requirement_marks(rows, UNIT_FACTORS.get(unit, {unit: 1.0}), unit)
    marks = [m for m in marks if m.get("mode") == "lines"]  # a worst point is one run's, not the envelope's
    whose = {str(row.declared.get("run")) for row in rows}
    title = f"{name} over {runs} runs" + (f" (requirement window: run {', '.join(sorted(whose))}'s)" if marks
                                          and rows[0].declared.get("window_kind") not in ("run", "after", "between")
                                          else "")
    y_title = f"{name} [{unit}]" if unit else name
    return stacked(title, [Panel(y_title, traces + marks, windows, log_y=log_y, height_px=300)])


def _bins(values: np.ndarray, log_x: bool) -> np.ndarray:
    """Histogram edges that fit the values: sqrt(n) bins (5 to 60), in log space when ``log_x``; a spread of
    nothing (every run the same value) gets one bin around it."""
    count = min(60, max(5, int(np.sqrt(values.size))))
    low, high = float(values.min()), float(values.max())
    if high <= low:
        half = abs(low) * 0.05 or 0.5
        return np.array([low - half, low + half])
    if log_x:
        return np.logspace(math.log10(low), math.log10(high), count + 1)
    return np.linspace(low, high, count + 1)


def _steps(edges: np.ndarray, counts: np.ndarray, name: str, colour: str, fill: str) -> dict:
    """A histogram as a filled step outline (not bars: the page's plotly bundle is the run pages' small one)."""
    x = np.repeat(edges, 2)[1:-1]
    y = np.repeat(counts, 2).astype(float)
    return {"type": "scatter", "mode": "lines", "name": name, "x": np.concatenate([[x[0]], x, [x[-1]]]),
            "y": np.concatenate([[0.0], y, [0.0]]), "fill": "tozeroy", "fillcolor": fill,
            "line": {"color": colour, "width": 1.5}}


def criterion_plot(label: str, values: np.ndarray, bound, failed: np.ndarray | None = None) -> Plot:
    """The histogram of a criterion's values over the runs (the runs that failed it in red over it) and their
    ECDF, on one value axis fitted to the data."""
    keep = np.isfinite(values)
    finite = np.sort(values[keep])
    log_x = log_scale(finite)
    edges = _bins(finite, log_x)
    counts, _ = np.histogram(finite, bins=edges)
    histogram = _steps(edges, counts, "runs", PALETTE[0], BAND)
    histogram["showlegend"] = False
    traces = [histogram]
    if failed is not None and np.any(failed[keep]):
        bad, _ = np.histogram(values[keep & failed], bins=edges)
        traces.append(_steps(edges, bad, f"failed it ({int(bad.sum())})", FAIL_COLOUR, "rgba(214,39,40,0.45)"))
    keep = np.unique(np.linspace(0, finite.size - 1, min(finite.size, 2000)).astype(int))
    ecdf = line(finite[keep], (keep + 1) / finite.size, "ECDF", 0, shape="hv")
    ecdf["showlegend"] = False
    shapes, note = [], ""
    low, high = float(edges[0]), float(edges[-1])
    if bound is not None and math.isfinite(bound.value):
        off = _off_axis(bound.value, float(finite[0]), float(finite[-1]), log_x)
        if off:
            note = f"; the bound {bound.op} {fmt(bound.value)} lies off the axis, {off}"
        else:
            shapes = [{"type": "line", "xref": "x", "yref": "y domain", "x0": bound.value, "x1": bound.value,
                       "y0": 0, "y1": 1, "line": {"color": FAIL_COLOUR, "dash": "dash", "width": 2},
                       "name": f"bound {bound.op} {fmt(bound.value)}", "showlegend": True}]
            low, high = min(low, bound.value), max(high, bound.value)
    panels = [Panel("runs", traces, shapes, height_px=180),
              Panel("fraction of runs", [ecdf], [dict(s, yref="y domain") for s in shapes], height_px=150)]
    plot = stacked(f"{label} (bound {bound.op} {fmt(bound.value)}){note}" if bound is not None else label, panels,
                   x_title=label)
    layout = plot.figure["layout"]
    for key in ("xaxis", "xaxis2"):
        layout[key]["type"] = "log" if log_x else "linear"
    layout["yaxis2"]["range"] = [0.0, 1.02]  # a fraction of the runs: its whole range, not the ECDF's first step up
    pad = 0.02 * (math.log10(high / low) if log_x else high - low)
    layout["xaxis"]["range"] = ([math.log10(low) - pad, math.log10(high) + pad] if log_x else
                                [low - pad, high + pad]) if high > low else None
    return plot


def _off_axis(bound: float, low: float, high: float, log_x: bool) -> str:
    """How far the bound lies from the values, in words, when drawing it on their axis would squash them (more
    than a decade beyond them, or across zero from them); "" when it is drawn (how far inside the values lie is
    what decides)."""
    if low <= bound <= high:
        return ""
    side = "above the largest value" if bound > high else "below the smallest value"
    edge = high if bound > high else low
    ratio = bound / edge if edge != 0 else math.inf
    if 0.1 <= ratio <= 10.0:
        return ""
    if ratio > 0 and math.isfinite(ratio):
        return f"{abs(math.log10(ratio)):.1f} decades {side}"
    scale = max(abs(low), abs(high))
    gap = abs(bound - edge)
    if scale == 0.0 or gap <= 10.0 * scale:
        return ""
    return f"{fmt(gap / scale, 2)} times the values' largest magnitude {side}"


def influence_plot(label: str, y: np.ndarray, ok: np.ndarray, ranked: list, bound, y_title: str) -> Plot:
    """The criterion against each of its most influential parameters (PASS green, FAIL red), one panel each with
    its own axis; ``ranked`` is ``[(name, x values, rho), ...]``."""
    data, layout, shapes = [], {}, []
    gap, height = 70, 200
    total = len(ranked) * height + (len(ranked) - 1) * gap
    top = 1.0
    for k, (name, x, rho) in enumerate(ranked):
        suffix = "" if k == 0 else str(k + 1)
        domain = [max(0.0, top - height / total), top]
        top = domain[0] - gap / total
        for passed, colour, legend in ((True, PASS_COLOUR, "PASS"), (False, FAIL_COLOUR, "FAIL")):
            mask = ok == passed
            data.append({"type": "scatter", "mode": "markers", "name": legend, "legendgroup": legend,
                         "x": np.asarray(x[mask]), "y": np.asarray(y[mask], dtype=np.float32),
                         "marker": {"color": colour, "size": 5, "opacity": 0.7}, "showlegend": k == 0 and mask.any(),
                         "xaxis": f"x{suffix}", "yaxis": f"y{suffix}"})
        layout[f"xaxis{suffix}"] = {"anchor": f"y{suffix}", "automargin": True, "zeroline": False,
                                    "title": {"text": f"{name} (ρ = {fmt(rho, 2)})"}}
        layout[f"yaxis{suffix}"] = {"domain": domain, "anchor": f"x{suffix}", "automargin": True, "zeroline": False,
                                    "title": {"text": y_title if k == 0 else ""}}
        if bound is not None and math.isfinite(bound.value) and np.isfinite(y).any():
            shapes.append({"type": "line", "xref": f"x{suffix} domain", "yref": f"y{suffix}", "x0": 0, "x1": 1,
                           "y0": bound.value, "y1": bound.value,
                           "line": {"color": FAIL_COLOUR, "dash": "dash", "width": 1}})
    layout.update(base_layout(total + 40), shapes=shapes)
    return Plot(f"{label}: against the parameters that rank highest", {"data": data, "layout": layout})
