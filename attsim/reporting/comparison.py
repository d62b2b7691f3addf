"""The comparison page: several runs side by side, each named by its directory, seed and method.

Criteria given for all the runs together are shared out by their labels: a
row whose label starts with a run's method or name and a colon
(``rk4: ...``) is that run's alone; otherwise a row naming exactly one run
(its name, with or without underscores, or its method, as whole words) is
that run's; the rest are the mission's, shown in a table of their own.
"""

from __future__ import annotations

import html
import re
from collections import Counter
from pathlib import Path

import numpy as np

from .. import rotations
from ..telemetry.schema import QUATERNION_COLUMNS, RATE_COLUMNS
from .page import Section
from .runinfo import method_label, status
from .style import Panel, fmt, line, stacked

_esc = html.escape
MAX_TITLE_RUNS = 3


def _places(runs) -> list[str]:
    """Each run's directory, with as many of its parents as it takes to tell the runs apart (``a/x``, ``b/x``)."""
    parts = [Path(run.path).resolve().parts if run.path is not None else (str(run.meta.get("name", f"run {k}")),)
             for k, run in enumerate(runs)]
    depth = 1
    while depth < max(map(len, parts)) and len({p[-depth:] for p in parts}) < len(set(parts)):
        depth += 1
    places = [Path(*p[-depth:]).as_posix() for p in parts]
    counts, seen = Counter(places), Counter()
    for k, place in enumerate(places):  # the same directory given twice: told apart by its position
        seen[place] += 1
        if counts[place] > 1:
            places[k] = f"{place} #{seen[place]}"
    return places


def labels(runs) -> list[str]:
    """``directory (seed s, method m)`` of each run; directories of one name shown with their parents."""
    return [f"{place} (seed {run.meta.get('seed')}, {method_label(run.meta)})"
            for place, run in zip(_places(runs), runs)]


def title(runs) -> str:
    """The page's title: the runs' labels, or their count and the first and last for many."""
    labels_ = labels(runs)
    if len(labels_) <= MAX_TITLE_RUNS:
        return "Comparison: " + ", ".join(labels_)
    return f"Comparison of {len(labels_)} runs: {labels_[0]} … {labels_[-1]}"


def _keys(run) -> list[str]:
    name, method = str(run.meta.get("name", "")), str(run.meta.get("method", ""))
    return [k for k in dict.fromkeys((name, name.replace("_", " "), method)) if k]


def _names(label_text: str, key: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(key)}(?![\w-])", label_text) is not None


def _is_per_run(criteria, runs) -> bool:
    return bool(
        criteria
        and len(criteria) == len(runs)
        and all(isinstance(c, (list, tuple)) and (not c or isinstance(c[0], (list, tuple))) for c in criteria)
    )


def share_criteria(runs, criteria) -> tuple[list[list], list]:
    """Each run's own criteria and the rows of none (the mission's), from one list for all or one per run.

    Without ``criteria``, each run's own ``meta["criteria"]``, and the rows of
    ``meta["criteria_shared"]`` that every run keeps (``attsim run`` of a
    mission of several runs writes those in each).
    """
    if criteria is None:
        kept = [[tuple(row) for row in run.meta.get("criteria_shared") or []] for run in runs]
        common = [list(row) for row in (kept[0] if kept else []) if all(row in other for other in kept[1:])]
        return [list(run.meta.get("criteria") or []) for run in runs], common
    if _is_per_run(criteria, runs):
        return [list(c) for c in criteria], []
    own, common = [[] for _ in runs], []
    for row in criteria:
        text = str(row[0])
        prefixed = [k for k, run in enumerate(runs) if any(text.startswith(key + ":") for key in _keys(run))]
        named = prefixed or [k for k, run in enumerate(runs) if any(_names(text, key) for key in _keys(run))]
        if len(named) == 1:
            own[named[0]].append(row)
        else:
            common.append(row)
    return own, common


def _own_criteria(run, criteria, runs=None):
    """The criteria that are ``run``'s among ``criteria`` shared by ``runs`` (default: the run alone)."""
    runs = list(runs) if runs is not None else [run]
    own, _ = share_criteria(runs, criteria)
    return own[next(k for k, r in enumerate(runs) if r is run)]


def _verdicts(rows) -> str:
    return (
        "<br>".join(
            f"<span class='{'pass' if ok else 'fail'}'>{'PASS' if ok else 'FAIL'}</span> "
            f"{_esc(str(text))}: {_esc(fmt(value))} ({_esc(str(bound))})"
            for text, value, ok, bound in rows
        )
        or "–"
    )


def _differences(base, df):
    """Attitude (rad) and largest rate (rad/s) differences at the times both runs have, or None."""
    columns = list(QUATERNION_COLUMNS + RATE_COLUMNS)
    if not all(c in base for c in columns) or not all(c in df for c in columns):
        return None
    common = np.intersect1d(base.index.to_numpy(), df.index.to_numpy())
    if not len(common):
        return None
    a, b = base.loc[common], df.loc[common]
    dq = rotations.quat_angle_between(a[list(QUATERNION_COLUMNS)].to_numpy(), b[list(QUATERNION_COLUMNS)].to_numpy())
    dw = np.abs(a[list(RATE_COLUMNS)].to_numpy() - b[list(RATE_COLUMNS)].to_numpy()).max(axis=1)
    return common, dq, dw


def _largest(values) -> str:
    values = np.asarray(values, dtype=float)
    return fmt(float(np.nanmax(values))) if np.isfinite(values).any() else "–"


def sections(runs, criteria=None) -> list[Section]:
    names = labels(runs)
    per_run, common = share_criteria(runs, criteria)
    base = runs[0].df
    rows, differences = [], {}
    for k, (name, run, own) in enumerate(zip(names, runs, per_run)):
        found = _differences(base, run.df)
        if found is not None and k:
            differences[name] = found
        state = status(run, own)
        rows.append(
            f"<tr class='{'pass' if state == 'complete' else 'fail'}'><td>{_esc(state)}</td><td>{_esc(name)}</td>"
            f"<td class='num'>{len(run.df)}</td>"
            f"<td class='num'>{_esc(fmt(run.meta.get('max_step_s')))}</td>"
            f"<td class='num'>{_esc(fmt(run.meta.get('wall_s'), 3))}</td>"
            + ("<td>(reference)</td><td>(reference)</td>" if k == 0 else
               f"<td class='num'>{_esc(_largest(found[1]) if found else '–')}</td>"
               f"<td class='num'>{_esc(_largest(found[2]) if found else '–')}</td>")
            + f"<td>{_verdicts(own)}</td></tr>"
        )
    table = (
        "<div class='table-wrap'><table class='params'><tr><th>status</th><th>run (directory, seed, method)</th>"
        "<th>rows</th><th>max step [s]</th><th>wall [s]</th>"
        f"<th>max attitude difference to {_esc(names[0])} [rad]</th>"
        "<th>max rate difference [rad/s]</th><th>criteria</th></tr>" + "".join(rows) + "</table></div>"
    )
    items = [
        "<p class='note'>Status: <b>failed</b> when the run stopped on an error or one of its criteria failed, "
        "<b>partial</b> when it was cut short (killed), <b>running</b> when it was still going when this page was "
        "written, <b>complete</b> otherwise. Differences are taken at the "
        "times both runs recorded.</p>",
        table,
    ]
    if common:
        items.append("<h3>Criteria of the mission (naming no single run)</h3>"
                     f"<div class='table-wrap'><p>{_verdicts(common)}</p></div>")
    if differences:
        traces = [line(common_t, dq, name, k, log_y=True)
                  for k, (name, (common_t, dq, _dw)) in enumerate(differences.items())]
        items.append(
            stacked(f"Attitude difference to {names[0]}", [Panel("angle [rad]", traces, log_y=True, height_px=320)])
        )
    panels = []
    for columns, unit in ((RATE_COLUMNS, "rad/s"), (QUATERNION_COLUMNS, "-")):
        for c in columns:
            traces = [
                line(run.df.index.to_numpy(), run.df[c].to_numpy(), name, k, group=name)
                for k, (name, run) in enumerate(zip(names, runs))
                if c in run.df and len(run.df)
            ]
            if traces:
                panels.append(Panel(f"{c} [{unit}]", traces, height_px=150))
    if panels:
        items.append(stacked("Body rates and attitude of every run (one colour per run)", panels))
    return [Section("comparison", "Comparison", items)]
