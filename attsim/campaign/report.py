"""The campaign report: ``<campaign_dir>/report.html``, one self-contained page.

Sections (anchors in brackets):

* Summary [summary] — the campaign-level requirement and its decision, the
  runs by status, each criterion's pass rate with its 95 % Clopper-Pearson
  interval and the percentiles of its value, the dispersed parameters.
* Envelopes [envelopes] — for each recorded quantity, the p1-p99 band, the
  median and the min/max (dashed) over runs against time.
* Criteria [criteria] — histogram and ECDF of each numeric criterion with its
  bound drawn.
* Drivers [drivers] — each criterion's value (or pass/fail) against each
  dispersed parameter, coloured PASS/FAIL: which dispersion drives failures.
* Runs [runs] — the failed runs and the worst runs of each criterion, each
  with the command that reproduces it.

plotly.js is embedded once (the page works offline); user text (mission,
labels, parameter names, errors) is HTML-escaped. For large campaigns the
scatter plots show every failed run and a fixed random sample of the others
(the page says so), and the tables are capped, so the page stays small.
"""

from __future__ import annotations

import html
import json
import math
import re
import shlex
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd

from ..errors import InputError
from . import stats
from .envelope import Envelope, load_envelopes

__all__ = ["write_campaign_report", "read_records", "parse_bound", "Bound", "MAX_SCATTER", "MAX_TABLE_ROWS"]

MAX_SCATTER = 2000  # points per scatter plot at most
MAX_TABLE_ROWS = 50  # failed runs listed at most
WORST_PER_CRITERION = 5
PASS_COLOUR, FAIL_COLOUR = "#2a9d3a", "#d62728"

_CSS = """
body{font-family:system-ui,sans-serif;margin:0 auto;max-width:1200px;padding:1em;color:#222}
h1{margin-bottom:0.2em} nav a{margin-right:1em} section{margin-top:2em;border-top:1px solid #ddd}
table{border-collapse:collapse;margin:0.5em 0}
th,td{border:1px solid #ccc;padding:4px 8px;text-align:left;vertical-align:top}
td.num{text-align:right;font-variant-numeric:tabular-nums} code{font-size:0.9em}
.banner{padding:0.6em 1em;margin:0.5em 0;border-radius:4px;font-weight:bold}
.bad{background:#fdd} .good{background:#dfd}
.note{color:#555;font-style:italic}
"""


class Bound(NamedTuple):
    """A criterion's bound parsed from its text, e.g. ``"< 0.1"`` -> ``Bound("<", 0.1)``."""

    op: str
    value: float


_BOUND = re.compile(r"^\s*(<=|>=|==|<|>|=|≤|≥)\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?inf)", re.IGNORECASE)


def parse_bound(text) -> Bound | None:
    """The operator and number of a bound such as ``"< 0.1"``, ``"<= 5906 s"`` or ``"= 0"``; None if there is none."""
    match = _BOUND.match(str(text)) if text is not None else None
    if match is None:
        return None
    op = {"≤": "<=", "≥": ">=", "==": "="}.get(match.group(1), match.group(1))
    return Bound(op, float(match.group(2)))


def read_records(campaign_dir) -> pd.DataFrame:
    """The campaign's records (the Parquet dataset ``records/``), sorted by run; empty when there are none yet."""
    folder = Path(campaign_dir) / "records"
    parts = sorted(folder.glob("part-*.parquet")) if folder.is_dir() else []
    if not parts:
        return pd.DataFrame({"run": pd.Series(dtype="int64"), "seed": pd.Series(dtype="int64"),
                             "status": pd.Series(dtype=str), "error": pd.Series(dtype=str)})
    frame = pd.concat([pd.read_parquet(p) for p in parts], ignore_index=True)
    return frame.sort_values("run", kind="stable").reset_index(drop=True)


def _e(value) -> str:
    return html.escape(str(value))


def _num(value, digits: int = 4) -> str:
    if value is None or isinstance(value, float) and math.isnan(value):
        return ""
    return f"{value:.{digits}g}" if isinstance(value, (float, np.floating)) else str(value)


def _table(header: list[str], rows: list[list[str]], numeric: set[int] = frozenset()) -> str:
    """An HTML table; cells are already HTML (escape user text before)."""
    head = "".join(f"<th>{h}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td class='num'>{c}</td>" if i in numeric else f"<td>{c}</td>"
                                    for i, c in enumerate(row)) + "</tr>" for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def _passed(records: pd.DataFrame, label: str) -> np.ndarray:
    return records[f"ok:{label}"].fillna(False).to_numpy(dtype=bool) & (records["status"] != "ERROR").to_numpy()


def _numeric_values(records: pd.DataFrame, label: str) -> np.ndarray | None:
    column = records.get(f"v:{label}")
    if column is None or not pd.api.types.is_numeric_dtype(column) or pd.api.types.is_bool_dtype(column):
        return None
    values = column.to_numpy(dtype=np.float64)
    return values if np.isfinite(values).any() else None


def _parameters(records: pd.DataFrame) -> list[str]:
    return [c[2:] for c in records.columns if isinstance(c, str) and c.startswith("p:")]


def _command(mission: str, campaign_dir: Path, run: int) -> str:
    return f"attsim run {shlex.quote(mission)} --campaign {shlex.quote(str(campaign_dir))} --index {run}"


def _summary(meta: dict, records: pd.DataFrame, summary: pd.DataFrame, bounds: dict) -> list:
    requirement = meta.get("requirement") or {}
    rate, confidence = float(requirement.get("rate", 0.99)), float(requirement.get("confidence", 0.95))
    decision = stats.requirement(records, rate, confidence)
    if decision.runs:
        verdict = "met" if decision.met else "NOT met"
        needed = stats.needs(decision.runs, rate, confidence)
        text = (f"Requirement {verdict}: at least {rate:.4g} of runs pass with {confidence:.4g} confidence — "
                f"{decision.passed} of {decision.runs} runs passed every criterion ({needed}); "
                f"one-sided lower bound of the pass rate {decision.lower_bound:.5g}.")
    else:
        verdict, text = "NOT met", "Requirement NOT met: no run recorded yet."
    parts = [f"<div class='banner {'good' if verdict == 'met' else 'bad'}'>{_e(text)}</div>"]
    status = records["status"].value_counts() if len(records) else pd.Series(dtype=int)
    wall = records["wall_s"].sum() if "wall_s" in records and len(records) else math.nan
    workers = records["worker"].nunique() if "worker" in records and len(records) else 0
    info = [("mission", meta.get("mission", "?")),
            ("runs recorded / planned", f"{len(records)} / {meta.get('runs', '?')}"),
            ("seed", meta.get("seed", "?")), ("telemetry", meta.get("telemetry", "?")),
            ("OK / FAIL / ERROR", " / ".join(str(int(status.get(s, 0))) for s in ("OK", "FAIL", "ERROR"))),
            ("run time, total", f"{_num(float(wall))} s on {workers} worker(s)"),
            ("attsim", meta.get("attsim", "?")), ("created", meta.get("created", "?"))]
    parts.append(_table(["", ""], [[_e(k), _e(v)] for k, v in info]))
    header = ["criterion", "bound", "passed / runs", "rate", "95 % interval", "p1", "p50", "p99", "min", "max"]
    rows = [[_e(label), _e(bounds.get(label, "")), f"{int(row.passed)} / {int(row.runs)}", _num(row.rate),
             f"[{_num(row.low)}, {_num(row.high)}]", _num(row.p1), _num(row.p50), _num(row.p99), _num(row["min"]),
             _num(row["max"])] for label, row in summary.iterrows()]
    parts.append("<h3>Criteria</h3>" + (_table(header, rows, numeric=set(range(2, 10))) if rows
                                        else "<p class='note'>No criteria in the records.</p>"))
    parameters = meta.get("parameters") or {}
    if parameters:
        parts.append("<h3>Dispersed parameters</h3>" + _table(["parameter", "dispersion"],
                                                            [[_e(k), _e(v)] for k, v in parameters.items()]))
    return parts


def _envelope_figure(name: str, unit: str, envelope: Envelope):
    import plotly.graph_objects as go

    frame = envelope.result()
    t = frame.index.to_numpy(dtype=np.float32)
    fig = go.Figure()
    if "p1" in frame and "p99" in frame:
        fig.add_trace(go.Scatter(x=t, y=frame["p99"].to_numpy(np.float32), mode="lines", line=dict(width=0),
                                 showlegend=False, hoverinfo="skip", name="p99"))
        fig.add_trace(go.Scatter(x=t, y=frame["p1"].to_numpy(np.float32), mode="lines", line=dict(width=0),
                                 fill="tonexty", fillcolor="rgba(31,119,180,0.25)", name="p1-p99"))
    if "p50" in frame:
        fig.add_trace(go.Scatter(x=t, y=frame["p50"].to_numpy(np.float32), mode="lines", name="median",
                                 line=dict(color="#1f77b4")))
    for column, label in (("p0", "min"), ("p100", "max")):
        if column in frame:
            fig.add_trace(go.Scatter(x=t, y=frame[column].to_numpy(np.float32), mode="lines", name=label,
                                     line=dict(color="#444", dash="dash", width=1)))
    runs = int(frame["runs"].max()) if len(frame) else 0
    fig.update_layout(title=_e(f"{name} over {runs} runs"), xaxis_title="t [s]",
                      yaxis_title=_e(f"{name} [{unit}]" if unit else name), height=380,
                      margin=dict(l=70, r=20, t=50, b=40), legend=dict(orientation="h"))
    return fig


def _criterion_figure(label: str, values: np.ndarray, bound_text: str):
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    finite = np.sort(values[np.isfinite(values)])
    counts, edges = np.histogram(finite, bins=min(60, max(5, int(np.sqrt(finite.size)))))
    fig = make_subplots(rows=1, cols=2, subplot_titles=("histogram", "ECDF"))
    fig.add_trace(go.Bar(x=((edges[:-1] + edges[1:]) / 2).astype(np.float32), y=counts, width=np.diff(edges),
                         marker_color="#1f77b4", name="runs", showlegend=False), row=1, col=1)
    # the ECDF at most MAX_SCATTER points: evenly spaced ranks keep its shape
    keep = np.unique(np.linspace(0, finite.size - 1, min(finite.size, MAX_SCATTER)).astype(int))
    fig.add_trace(go.Scatter(x=finite[keep].astype(np.float32), y=((keep + 1) / finite.size).astype(np.float32),
                             mode="lines", line_shape="hv", name="ECDF", showlegend=False), row=1, col=2)
    bound = parse_bound(bound_text)
    if bound is not None and math.isfinite(bound.value):
        for col in (1, 2):
            fig.add_vline(x=bound.value, line=dict(color=FAIL_COLOUR, dash="dash"), row=1, col=col)
    fig.update_xaxes(title_text=_e(label))
    fig.update_yaxes(title_text="runs", row=1, col=1)
    fig.update_yaxes(title_text="fraction of runs", row=1, col=2)
    fig.update_layout(title=_e(f"{label} (bound {bound_text})" if bound_text else label), height=360,
                      margin=dict(l=60, r=20, t=60, b=50))
    return fig


def _sample(records: pd.DataFrame) -> tuple[np.ndarray, str]:
    """Rows to scatter: all of them, or every failed run and a fixed random sample of the others."""
    n = len(records)
    if n <= MAX_SCATTER:
        return np.arange(n), ""
    failed = np.flatnonzero((records["status"] != "OK").to_numpy())[:MAX_SCATTER // 2]
    others = np.setdiff1d(np.arange(n), failed)
    rng = np.random.default_rng(0)  # the same sample on every rebuild of the page
    chosen = np.sort(np.concatenate([failed, rng.choice(others, MAX_SCATTER - failed.size, replace=False)]))
    return chosen, (f"Showing {chosen.size} of {n} runs: the first {failed.size} failed runs and a random sample "
                    f"of {chosen.size - failed.size} of the others.")


def _driver_figure(label: str, records: pd.DataFrame, rows: np.ndarray, parameters: list[str], bound_text: str):
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    values = _numeric_values(records, label)
    ok = _passed(records, label)[rows]
    y = (values[rows] if values is not None else ok.astype(float)).astype(np.float32)
    y_title = label if values is not None else f"{label} passed (1) / failed (0)"
    cols = min(3, len(parameters))
    grid = math.ceil(len(parameters) / cols)
    height = 60 + 300 * grid
    # about 80 px between rows: room for one row's tick labels and the next one's subplot title
    spacing = min(80.0 / height, 0.9 / (grid - 1)) if grid > 1 else 0.1
    fig = make_subplots(rows=grid, cols=cols, subplot_titles=[_e(p) for p in parameters], vertical_spacing=spacing)
    for k, name in enumerate(parameters):
        x = records[f"p:{name}"].to_numpy()[rows]
        if x.dtype.kind == "f":
            x = x.astype(np.float32)
        for passed, colour, legend in ((True, PASS_COLOUR, "PASS"), (False, FAIL_COLOUR, "FAIL")):
            mask = ok == passed
            fig.add_trace(go.Scatter(x=x[mask], y=y[mask], mode="markers", name=legend, legendgroup=legend,
                                     marker=dict(color=colour, size=4, opacity=0.6), showlegend=k == 0),
                          row=k // cols + 1, col=k % cols + 1)
    bound = parse_bound(bound_text)
    if values is not None and bound is not None and math.isfinite(bound.value):
        fig.add_hline(y=bound.value, line=dict(color=FAIL_COLOUR, dash="dash", width=1), row="all", col="all")
    fig.update_yaxes(title_text=_e(y_title), col=1)
    fig.update_layout(title=_e(f"{label} against the dispersed parameters"), height=height,
                      margin=dict(l=70, r=20, t=70, b=40), legend=dict(orientation="h"))
    return fig


def _worst(records: pd.DataFrame, label: str, bound: Bound | None) -> np.ndarray:
    """Row positions of the runs nearest to failing, or furthest past failing, on a numeric criterion."""
    values = _numeric_values(records, label)
    if values is None or bound is None:
        return np.array([], dtype=int)
    finite = np.flatnonzero(np.isfinite(values))
    if bound.op in ("<", "<="):
        badness = values[finite]
    elif bound.op in (">", ">="):
        badness = -values[finite]
    else:
        badness = np.abs(values[finite] - bound.value)
    return finite[np.argsort(-badness, kind="stable")[:WORST_PER_CRITERION]]


def _runs_section(meta: dict, records: pd.DataFrame, labels: list[str], bounds: dict, campaign_dir: Path) -> list:
    mission = str(meta.get("mission", "<mission>"))
    parts = []
    failed = np.flatnonzero((records["status"] != "OK").to_numpy()) if len(records) else np.array([], dtype=int)
    rows = []
    for i in failed[:MAX_TABLE_ROWS]:
        record = records.iloc[i]
        broken = [label for label in labels if not _passed(records.iloc[[i]], label)[0]]
        rows.append([str(int(record["run"])), _e(record["status"]), _e(record.get("seed", "")), _e(", ".join(broken)),
                     _e(str(record.get("error", "") or "")[:300]),
                     f"<code>{_e(_command(mission, campaign_dir, int(record['run'])))}</code>"])
    parts.append(f"<h3>Failed runs ({failed.size})</h3>")
    if rows:
        parts.append(_table(["run", "status", "seed", "failed criteria", "error", "reproduce"], rows, numeric={0}))
        if failed.size > MAX_TABLE_ROWS:
            parts.append(f"<p class='note'>The first {MAX_TABLE_ROWS} of {failed.size} failed runs; all are in "
                         "records/.</p>")
    else:
        parts.append("<p>No run failed.</p>")
    rows = []
    for label in labels:
        bound = parse_bound(bounds.get(label))
        for i in _worst(records, label, bound):
            record = records.iloc[i]
            rows.append([_e(label), _e(bounds.get(label, "")), str(int(record["run"])), _e(record["status"]),
                         _num(float(record[f"v:{label}"]), 6),
                         f"<code>{_e(_command(mission, campaign_dir, int(record['run'])))}</code>"])
    parts.append(f"<h3>Worst runs of each criterion (at most {WORST_PER_CRITERION})</h3>")
    parts.append(_table(["criterion", "bound", "run", "status", "value", "reproduce"], rows, numeric={2, 4}) if rows
                 else "<p class='note'>No numeric criterion with a bound.</p>")
    return parts


def write_campaign_report(campaign_dir, records: pd.DataFrame | None = None,
                          envelopes: dict[str, Envelope] | None = None) -> Path:
    """Write ``<campaign_dir>/report.html``, the campaign's report.

    Parameters
    ----------
    campaign_dir : path
        The campaign directory (its ``campaign.json`` is required).
    records : DataFrame, optional
        The records (columns of the campaign contract); read from
        ``records/`` when None.
    envelopes : dict of str to Envelope, optional
        Envelopes by quantity; read from ``envelopes.npz`` when None (none if
        the file is absent).

    Returns
    -------
    Path
        The page written.
    """
    campaign_dir = Path(campaign_dir)
    meta_path = campaign_dir / "campaign.json"
    if not meta_path.is_file():
        raise InputError("campaign_dir", "must hold campaign.json", f"not found in {campaign_dir}")
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    if records is None:
        records = read_records(campaign_dir)
    if envelopes is None:
        path = campaign_dir / "envelopes.npz"
        envelopes = load_envelopes(path) if path.is_file() else {}
    labels = stats.criterion_labels(records)
    bounds = {str(c.get("label")): str(c.get("bound", "")) for c in meta.get("criteria") or [] if isinstance(c, dict)}
    summary = stats.criterion_summary(records)
    units = meta.get("envelope_quantities") or {}
    parameters = _parameters(records)

    sections = [("summary", "Summary", _summary(meta, records, summary, bounds))]
    items = [_envelope_figure(name, str(units.get(name, "")), env) for name, env in envelopes.items()]
    sections.append(("envelopes", "Envelopes", items or ["<p class='note'>No envelope was recorded.</p>"]))
    items = [_criterion_figure(label, values, bounds.get(label, "")) for label in labels
             if (values := _numeric_values(records, label)) is not None]
    sections.append(("criteria", "Criteria", items or ["<p class='note'>No criterion has numeric values.</p>"]))
    if parameters and len(records):
        rows, note = _sample(records)
        items = ([f"<p class='note'>{_e(note)}</p>"] if note else []) + [
            _driver_figure(label, records, rows, parameters, bounds.get(label, "")) for label in labels]
    else:
        items = ["<p class='note'>No dispersed parameter in the records.</p>"]
    sections.append(("drivers", "Drivers of failure", items))
    sections.append(("runs", "Failed and worst runs", _runs_section(meta, records, labels, bounds, campaign_dir)))

    title = f"Campaign: {meta.get('mission', '?')}"
    body, nav, first_plot = [], [], True
    for anchor, heading, items in sections:
        nav.append(f"<a href='#{anchor}'>{_e(heading)}</a>")
        parts = []
        for item in items:
            if isinstance(item, str):
                parts.append(item)
            else:
                parts.append(item.to_html(full_html=False, include_plotlyjs=first_plot))
                first_plot = False
        body.append(f"<section id='{anchor}'><h2>{_e(heading)}</h2>{''.join(parts)}</section>")
    page = (f"<!doctype html><html><head><meta charset='utf-8'><title>{_e(title)}</title><style>{_CSS}</style>"
            f"</head><body><h1>{_e(title)}</h1><nav>{''.join(nav)}</nav>{''.join(body)}"
            "<p><small>attsim campaign report; every run's record is in records/ beside this file.</small></p>"
            "</body></html>")
    out = campaign_dir / "report.html"
    tmp = out.with_name(".report.html.tmp")
    tmp.write_text(page, encoding="utf-8")
    tmp.replace(out)  # a reader never sees half a page
    return out
