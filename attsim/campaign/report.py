"""The campaign report: ``<campaign_dir>/report.html``, one self-contained page in the run pages' style.

Sections (anchors in brackets):

* Summary [summary] — the design finding (criteria failed, in how many runs, worst) apart from the
  campaign-level requirement and its decision, the
  runs by status, each criterion's pass rate as its one-sided lower
  confidence bound (the convention of the decision, stated on the page) with
  the percentiles of its value, the dispersed parameters.
* Envelopes [envelopes] — for each recorded quantity, the p1-p99 band, the
  median and the min/max over runs against time, on the requirement's scale,
  with the declared requirements on it over their windows.
* Criteria [criteria] — histogram and ECDF of each numeric criterion on an
  axis fitted to its values, its bound marked (or said to lie off the axis).
* Influence [influence] — each criterion against each drawn parameter,
  ranked by Spearman's rank correlation, with the strongest drawn.
* Runs [runs] — the failed runs and, for each criterion, the runs nearest to
  failing (by margin to the bound; none when every run is far inside it),
  each with the command that reproduces it.

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
from ..reporting.page import Section, write_page
from ..reporting.runinfo import Judged
from ..reporting.style import fmt
from . import stats
from .envelope import Envelope, load_envelopes
from .figures import FEW_RUNS, criterion_plot, envelope_plot, influence_plot

__all__ = ["write_campaign_report", "read_records", "parse_bound", "Bound", "MAX_SCATTER", "MAX_TABLE_ROWS",
           "influence", "worst_runs", "mission_name"]

MAX_SCATTER = 2000  # points per scatter plot at most
MAX_TABLE_ROWS = 50  # failed runs listed at most
WORST_PER_CRITERION = 5
TOP_PARAMETERS = 3  # drawn against each criterion
FAR_INSIDE = 0.5  # a run whose margin is at least this fraction of the bound's magnitude is far inside it


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


def _table(header: list[str], rows: list[list[str]], numeric: set[int] = frozenset(), classes=None,
           css: str = "") -> str:
    """An HTML table; cells are already HTML (escape user text before); ``classes`` one per row ("" none)."""
    head = f"<tr>{''.join(f'<th>{h}</th>' for h in header)}</tr>" if header else ""
    classes = classes or [""] * len(rows)
    cards = "cards" in css.split()  # a card per row on a phone (reporting.page): each cell labelled by its column
    labels = [("" if not cards else " class='name'" if k == 0 else f" data-label='{h}'")
              for k, h in enumerate(header)]
    body = "".join((f"<tr class='{c}'>" if c else "<tr>")
                   + "".join(f"<td class='num'{labels[i]}>{c}</td>" if i in numeric else f"<td{labels[i]}>{c}</td>"
                             for i, c in enumerate(row)) + "</tr>" for row, c in zip(rows, classes))
    return f"<div class='table-wrap'><table{f' class={css!r}' if css else ''}>{head}{body}</table></div>"


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


def mission_name(meta: dict) -> str:
    """The mission's name: its script's stem (campaign.json keeps the script's path)."""
    mission = str(meta.get("mission", "?"))
    return Path(mission).stem if mission.endswith(".py") else mission


def _command(mission: str, campaign_dir: Path, run: int) -> str:
    return f"attsim run {shlex.quote(mission)} --campaign {shlex.quote(str(campaign_dir))} --index {run}"


def _margins(values: np.ndarray, bound: Bound) -> np.ndarray:
    """Each run's margin to the bound, positive inside it (for ``=``, minus the distance to it)."""
    if bound.op in ("<", "<="):
        return bound.value - values
    if bound.op in (">", ">="):
        return values - bound.value
    return -np.abs(values - bound.value)


class Worst(NamedTuple):
    """A criterion's worst run by margin to its bound: its row position, value and margin (positive inside)."""

    position: int
    value: float
    margin: float


def worst_of(records: pd.DataFrame, label: str, bound: Bound | None) -> Worst | None:
    """The run with the smallest margin to the bound (None without numeric values or a bound)."""
    values = _numeric_values(records, label)
    if values is None or bound is None or not math.isfinite(bound.value):
        return None
    margins = np.where(np.isfinite(values), _margins(values, bound), np.inf)
    k = int(np.argmin(margins))
    return Worst(k, float(values[k]), float(margins[k])) if math.isfinite(margins[k]) else None


def _design_banner(records: pd.DataFrame, summary: pd.DataFrame, bounds: dict) -> tuple[str, bool]:
    """The design finding, apart from the statistics: which criteria failed in how many runs and by how much at
    worst, and the runs that stopped on an error; True when every recorded run passed every criterion."""
    found = []
    for label, row in summary.iterrows():
        if int(row.passed) < int(row.runs):
            worst = worst_of(records, label, parse_bound(bounds.get(label)))
            at = (f" (worst {fmt(worst.value)} vs {bounds.get(label)}, run {int(records['run'].iloc[worst.position])})"
                  if worst is not None else "")
            found.append(f"{label} in {int(row.runs) - int(row.passed)}/{int(row.runs)} runs{at}")
    errors = int((records["status"] == "ERROR").sum()) if len(records) else 0
    if errors:
        found.append(f"{errors} run{'s' if errors != 1 else ''} stopped on an error")
    if not found:
        return (f"<div class='banner good design'>Design: every one of the {len(records)} runs passed every "
                "criterion.</div>"), True
    failed = sum(1 for label, row in summary.iterrows() if int(row.passed) < int(row.runs))
    return (f"<div class='banner bad design'>Design: {failed} criteri{'a' if failed != 1 else 'on'} failed in some "
            f"runs — {_e('; '.join(found))}.</div>"), False


def _criteria_rows(records, summary, bounds, confidence: float, few: bool) -> tuple[list, list, list]:
    """The header, the rows and their classes of the criteria table: a failing criterion's row marked, with its
    worst margin; with few runs no p1/p99 (they would be the min and max under another name)."""
    header = ["criterion", "bound", "passed / runs", "worst margin", f"pass rate ≥ ({confidence:.4g}, one-sided)"]
    header += ["median", "min", "max"] if few else ["p1", "p50", "p99", "min", "max"]
    rows, classes = [], []
    for label, row in summary.iterrows():
        low = stats.lower_bound(int(row.passed), int(row.runs), confidence) if row.runs else math.nan
        worst = worst_of(records, label, parse_bound(bounds.get(label)))
        margin = "" if worst is None else f"{fmt(worst.margin)} (run {int(records['run'].iloc[worst.position])})"
        spread = [row.p50, row["min"], row["max"]] if few else [row.p1, row.p50, row.p99, row["min"], row["max"]]
        rows.append([_e(label), _e(bounds.get(label, "")), f"{int(row.passed)} / {int(row.runs)}", _e(margin),
                     _num(low)] + [_num(v) for v in spread])
        classes.append("fail bad" if int(row.passed) < int(row.runs) else "")
    return header, rows, classes


def _summary(meta: dict, records: pd.DataFrame, summary: pd.DataFrame, bounds: dict) -> list:
    requirement = meta.get("requirement") or {}
    rate, confidence = float(requirement.get("rate", 0.99)), float(requirement.get("confidence", 0.95))
    decision = stats.requirement(records, rate, confidence)
    parts = []
    design_ok = True
    if decision.runs:
        design, design_ok = _design_banner(records, summary, bounds)
        parts.append(design)
        verdict = "met" if decision.met else "NOT met"
        needed = stats.needs(decision.runs, rate, confidence)
        text = (f"Statistics — Requirement {verdict}: at least {rate:.4g} of runs pass with {confidence:.4g} "
                f"confidence — {decision.passed} of {decision.runs} runs passed every criterion ({needed}); "
                f"one-sided lower bound of the pass rate {decision.lower_bound:.5g}.")
    else:
        verdict, text = "NOT met", "Requirement NOT met: no run recorded yet."
    css = "good" if verdict == "met" else ("warn" if design_ok and decision.runs else "bad")
    parts.append(f"<div class='banner {css} statistics'>{_e(text)}</div>")
    few = 0 < len(records) < FEW_RUNS
    header, rows, classes = _criteria_rows(records, summary, bounds, confidence, few)
    parts.append("<h3>Criteria</h3>" + (_table(header, rows, numeric=set(range(2, len(header))), classes=classes,
                                               css="criteria cards") if rows
                                        else "<p class='note'>No criteria in the records.</p>"))
    if few and rows:
        parts.append(f"<p class='note'>With {len(records)} runs (under {FEW_RUNS}) no p1 or p99 is given, here or "
                     "on the envelopes: they would be the min and max under another name.</p>")
    parts.append(f"<p class='note'>One interval convention throughout: a pass rate is stated as the lower bound "
                 f"that holds with {confidence:.4g} confidence (one-sided Clopper-Pearson), as the requirement is "
                 "judged.</p>")
    status = records["status"].value_counts() if len(records) else pd.Series(dtype=int)
    wall = records["wall_s"].sum() if "wall_s" in records and len(records) else math.nan
    workers = records["worker"].nunique() if "worker" in records and len(records) else 0
    info = [("mission", f"{mission_name(meta)} ({meta.get('mission', '?')})"),
            ("runs recorded / planned", f"{len(records)} / {meta.get('runs', '?')}"),
            ("seed", meta.get("seed", "?")), ("telemetry", meta.get("telemetry", "?")),
            ("OK / FAIL / ERROR", " / ".join(str(int(status.get(s, 0))) for s in ("OK", "FAIL", "ERROR"))),
            ("run time, total", f"{_num(float(wall))} s on {workers} worker(s)"),
            ("attsim", meta.get("attsim", "?")), ("created", meta.get("created", "?"))]
    rows = "".join(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in info)
    parts.append(f"<h3>Campaign</h3><div class='table-wrap'><table>{rows}</table></div>")
    parameters = meta.get("parameters") or {}
    if parameters:
        parts.append("<h3>Dispersed parameters</h3>" + _table(["parameter", "dispersion"],
                                                            [[_e(k), _e(v)] for k, v in parameters.items()]))
    return parts


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


def influence(records: pd.DataFrame, label: str) -> list[tuple[str, float]]:
    """``[(parameter, rho), ...]``: Spearman's rank correlation of each drawn numeric parameter with the
    criterion's value (its verdict, 1 or 0, when it has no numeric value), strongest first; NaN where it has no
    meaning (a constant, a parameter that is not a number)."""
    values = _numeric_values(records, label)
    y = values if values is not None else _passed(records, label).astype(float)
    out = []
    for name in _parameters(records):
        x = records[f"p:{name}"]
        rho = math.nan
        if pd.api.types.is_numeric_dtype(x) and not pd.api.types.is_bool_dtype(x):
            x = x.to_numpy(dtype=float)
            keep = np.isfinite(x) & np.isfinite(y)
            if keep.sum() >= 3 and np.ptp(x[keep]) > 0 and np.ptp(y[keep]) > 0:
                rho = stats.spearman_rho(x[keep], y[keep])
        out.append((name, rho))
    return sorted(out, key=lambda item: -abs(item[1]) if math.isfinite(item[1]) else 1.0)


def chance_rho(runs: int) -> float:
    """The |ρ| that chance alone exceeds in 5 % of campaigns of ``runs`` runs (two-sided, 1.96 / √(n − 1)); at 1 or
    more no correlation can be told from chance."""
    return 1.96 / math.sqrt(runs - 1) if runs > 1 else math.inf


def _influence_section(records: pd.DataFrame, labels: list[str], bounds: dict) -> list:
    parameters = _parameters(records)
    if not parameters or not len(records):
        return ["<p class='note'>No dispersed parameter in the records.</p>"]
    ranking = {label: influence(records, label) for label in labels}
    shown = [label for label in labels if any(math.isfinite(r) for _, r in ranking[label])]
    strongest = {p: max((abs(dict(ranking[label])[p]) for label in shown if math.isfinite(dict(ranking[label])[p])),
                        default=-1.0) for p in parameters}
    constant = [p for p in parameters if strongest[p] < 0]  # drawn the same in every run, or not a number
    order = sorted((p for p in parameters if strongest[p] >= 0), key=lambda p: -strongest[p])
    chance = chance_rho(len(records))
    header = ["parameter"] + [_e(label) for label in shown]
    rows = [[_e(p)] + [_rho_cell(dict(ranking[label])[p], chance) for label in shown] for p in order]
    rows_shown, note = _sample(records)
    if chance >= 1.0:
        told = (f"With {len(records)} runs no rank correlation can be told from chance (it takes |ρ| above "
                f"1.96/√(n−1) = {chance:.2g}): the ranking below is not evidence yet.")
    else:
        told = (f"|ρ| above {chance:.2g} (1.96/√(n−1), in bold) is not chance at 95 %; below it, it may be.")
    items = [f"<p class='note'>Spearman's rank correlation ρ of each drawn parameter with each criterion's value "
             f"(its verdict, 1 or 0, for a criterion without a numeric value) over the {len(records)} runs; the "
             f"parameters ordered by their largest |ρ|, which ranks their influence. {told} Below, each "
             f"criterion against its {TOP_PARAMETERS} strongest parameters.</p>",
             _table(header, rows, numeric=set(range(1, len(header))))]
    if constant:
        items.append("<p class='note'>Not varied over the runs (left out): " + _e(", ".join(constant)) + ".</p>")
    if note:
        items.append(f"<p class='note'>{_e(note)}</p>")
    for label in shown:
        values = _numeric_values(records, label)
        ok = _passed(records, label)[rows_shown]
        y = values[rows_shown] if values is not None else ok.astype(float)
        top = [(name, records[f"p:{name}"].to_numpy()[rows_shown], rho) for name, rho in ranking[label][:TOP_PARAMETERS]
               if math.isfinite(rho)]
        y_title = label if values is not None else f"{label}: passed (1) / failed (0)"
        items.append(influence_plot(label, y, ok, top, parse_bound(bounds.get(label)) if values is not None else None,
                                    y_title))
    return items


def _rho_cell(rho: float, chance: float) -> str:
    if not math.isfinite(rho):
        return "–"
    text = f"{rho:+.2f}"
    return f"<b>{text}</b>" if abs(rho) > chance else text


def worst_runs(records: pd.DataFrame, label: str, bound: Bound | None) -> tuple[np.ndarray, str]:
    """Row positions of the runs nearest to failing (or past it) by margin to the bound, smallest margin first,
    and a sentence when none is listed: every run far inside the bound (at least half its magnitude), or exactly
    at an equality bound."""
    values = _numeric_values(records, label)
    if values is None or bound is None or not math.isfinite(bound.value):
        return np.array([], dtype=int), "no numeric value with a bound"
    finite = np.flatnonzero(np.isfinite(values))
    margins = _margins(values[finite], bound)
    order = np.argsort(margins, kind="stable")
    if finite.size and np.ptp(values[finite]) == 0 and margins[0] >= 0:  # no run nearer than another
        return np.array([], dtype=int), f"every run at {fmt(float(values[finite[0]]))}, inside the bound"
    if bound.op == "=":
        near = margins[order] < 0
    else:
        near = margins[order] < FAR_INSIDE * abs(bound.value) if bound.value != 0 else np.ones(order.size, bool)
        if not near.any():
            k = order[0]
            return np.array([], dtype=int), (f"every run far inside the bound: the closest, run "
                                             f"{int(records['run'].iloc[finite[k]])}, by {fmt(float(margins[k]))}")
    return finite[order[near][:WORST_PER_CRITERION]], ""


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
    rows, quiet = [], []
    for label in labels:
        bound = parse_bound(bounds.get(label))
        chosen, why = worst_runs(records, label, bound)
        if why:
            quiet.append(f"{_e(label)}: {_e(why)}")
        for i in chosen:
            record = records.iloc[i]
            value = float(record[f"v:{label}"])
            own = "PASS" if _passed(records.iloc[[i]], label)[0] else "FAIL"  # this criterion's, not the run's
            rows.append([_e(label), _e(bounds.get(label, "")), str(int(record["run"])),
                         f"<span class='{own.lower()}'>{own}</span>", _e(record["status"]),
                         _num(value, 6), _e(fmt(float(_margins(np.array([value]), bound)[0]))),
                         f"<code>{_e(_command(mission, campaign_dir, int(record['run'])))}</code>"])
    parts.append(f"<h3>Runs nearest to failing, by margin to the bound (at most {WORST_PER_CRITERION} a criterion; "
                 f"a run is listed when its margin is under {FAR_INSIDE:g} of the bound's magnitude)</h3>")
    parts.append(_table(["criterion", "bound", "run", "this criterion", "run status", "value", "margin",
                         "reproduce"], rows, numeric={2, 5, 6}) if rows else "<p>None.</p>")
    if quiet:
        parts.append("<p class='note'>None listed for " + "; ".join(quiet) + ".</p>")
    return parts


MAX_COUNTED = 10  # an integer criterion with at most this many distinct values is counted, not drawn


def _integers(values: np.ndarray) -> bool:
    """True for a count (integer values, few distinct): a histogram of it says less than its counts."""
    finite = values[np.isfinite(values)]
    return bool(finite.size) and bool(np.all(finite == np.round(finite))) and np.unique(finite).size <= MAX_COUNTED


def _counts(label: str, values: np.ndarray, bound, passed: np.ndarray) -> str:
    """An integer criterion's values as counts of runs, each value with how many of its runs passed."""
    keep = np.isfinite(values)
    parts = []
    for value in np.unique(values[keep]):
        these = keep & (values == value)
        ok = int(np.sum(passed & these))
        parts.append(f"{fmt(float(value))} in {int(these.sum())} run{'s' if these.sum() != 1 else ''}"
                     + (f" ({int(these.sum()) - ok} failed it)" if ok < these.sum() else ""))
    return (f"<h3>{_e(label)}{f' (bound {_e(bound)})' if bound else ''}</h3><p class='counts'>An integer count: "
            f"{_e('; '.join(parts))}.</p>")


def _declared(meta: dict) -> list[Judged]:
    """The declared criteria campaign.json keeps (their quantity, bound and one run's window)."""
    rows = []
    for c in meta.get("criteria") or []:
        if isinstance(c, dict) and isinstance(c.get("declared"), dict):
            rows.append(Judged(str(c.get("label")), None, True, str(c.get("bound", "")), c["declared"]))
    return rows


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
    declared = _declared(meta)

    sections = [Section("summary", "Summary", _summary(meta, records, summary, bounds))]
    items = [envelope_plot(name, str(units.get(name, "")), env.result(),
                           [row for row in declared if row.declared.get("quantity") == name])
             for name, env in envelopes.items()]
    sections.append(Section("envelopes", "Envelopes", items or ["<p class='note'>No envelope was recorded.</p>"]))
    items = [(_counts(label, values, bounds.get(label), _passed(records, label)) if _integers(values) else
              criterion_plot(label, values, parse_bound(bounds.get(label)), ~_passed(records, label)))
             for label in labels if (values := _numeric_values(records, label)) is not None]
    missing = [label for label in labels if _numeric_values(records, label) is None]
    if missing:
        items.append("<p class='note'>No numeric value to draw for: " + "; ".join(_e(m) for m in missing)
                     + " (their verdicts are in the summary and under Influence).</p>")
    sections.append(Section("criteria", "Criteria", items or ["<p class='note'>No criterion has numeric values.</p>"]))
    sections.append(Section("influence", "Influence of the parameters", _influence_section(records, labels, bounds)))
    sections.append(Section("runs", "Failed and nearest runs", _runs_section(meta, records, labels, bounds,
                                                                            campaign_dir)))
    footer = "<p><small>attsim campaign report; every run's record is in records/ beside this file.</small></p>"
    return write_page(campaign_dir / "report.html", f"Campaign: {mission_name(meta)}", sections, footer=footer)
