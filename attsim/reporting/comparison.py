"""The comparison page: several runs side by side, each named by its directory, seed and method.

The page has the run pages' sections in their units, each run in its own
colour (:mod:`.overlays`): a table of the runs (status, differences to the
reference run) and of their criteria side by side, then pointing, body
rates, actuators, estimation and the differences to the reference run
(the first unless ``reference`` names another).

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

from ..errors import InputError
from . import overlays
from .page import Section
from .runinfo import judged, method_label, status
from .style import fmt, fmt_vector, short
from .summary import margin_text, status_class

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
            f"<span class='{'pass' if row.ok else 'fail'}'>{'PASS' if row.ok else 'FAIL'}</span> "
            f"{_esc(str(row.label))}: {_esc(fmt(row.value))} ({_esc(str(row.bound))})"
            for row in judged(rows)
        )
        or "–"
    )


def _largest(values) -> str:
    values = np.asarray(values, dtype=float)
    return fmt(float(np.nanmax(values))) if np.isfinite(values).any() else "–"


def reference_index(runs, reference) -> int:
    """The reference run's position: an index, or one of the runs itself."""
    if reference is None:
        return 0
    for k, run in enumerate(runs):
        if run is reference:
            return k
    if isinstance(reference, (int, np.integer)) and not isinstance(reference, bool) and 0 <= reference < len(runs):
        return int(reference)
    raise InputError("reference", f"must be the index of one of the {len(runs)} runs (0 to {len(runs) - 1}) or "
                     "one of them", f"got {reference!r}")


def _side_by_side(names, per_run) -> str:
    """The criteria of every run in one table: a row per criterion, a column per run (a declared criterion's margin
    to its bound under its value: how near a PASS came to failing)."""
    rows = [judged(own) for own in per_run]
    labels = list(dict.fromkeys(str(row.label) for own in rows for row in own))
    if not labels:
        return ""
    bounds = {str(row.label): str(row.bound) for own in rows for row in own}
    head = "".join(f"<th>{_esc(name)}</th>" for name in names)
    body = []
    for label in labels:
        cells = []
        for own in rows:
            row = next((r for r in own if str(r.label) == label), None)
            margin = margin_text(row.declared) if row is not None else ""
            cells.append("<td class='num'>–</td>" if row is None else
                         f"<td class='num'><span class='{status_class(row)}'>"
                         f"{'PASS' if row.ok else 'FAIL'}</span> {_esc(fmt(row.value))}"
                         + (f"<br><small>{_esc(margin)}</small>" if margin else "") + "</td>")
        body.append(f"<tr><td>{_esc(label)}</td><td>{_esc(bounds[label])}</td>{''.join(cells)}</tr>")
    return ("<h3>Criteria of every run, side by side</h3><div class='table-wrap'><table class='criteria side'>"
            f"<tr><th>criterion</th><th>bound</th>{head}</tr>{''.join(body)}</table></div>")


# what a run was given (meta.json); the rest (rows, wall time, criteria, run id) is what it gave
INPUT_KEYS = ("seed", "method", "duration_s", "max_step_s", "telemetry_dt_s", "inertia_kg_m2", "q0", "omega0_rad_s",
              "environment", "components", "knowledge", "modes")
MAX_DIFFERENCES = 20
_MISSING = object()  # an input one run records and another does not


def _flat(value, key: str, out: dict) -> dict:
    """``value`` as ``{"components.gyro.bias": ...}``: dicts by key, lists of named components by name."""
    if isinstance(value, dict):
        for k, v in value.items():
            _flat(v, f"{key}.{k}" if key else str(k), out)
    elif isinstance(value, list) and value and all(isinstance(v, dict) and "name" in v for v in value):
        for v in value:
            _flat({k: x for k, x in v.items() if k != "name"}, f"{key}.{v['name']}", out)
    else:
        out[key] = value
    return out


def _shown(value) -> str:
    if value is _MISSING:
        return "(absent)"
    if isinstance(value, list) and all(isinstance(v, (int, float)) for v in value):
        return fmt_vector(value, 6)
    return short(fmt(value, 6) if isinstance(value, (int, float)) and not isinstance(value, bool) else value, 60)


def what_differs(runs) -> list[tuple[str, list]]:
    """``(input, [its value in each run])`` for every recorded input (:data:`INPUT_KEYS`) not the same in all."""
    flat = [_flat({k: run.meta[k] for k in INPUT_KEYS if k in run.meta}, "", {}) for run in runs]
    keys = list(dict.fromkeys(k for each in flat for k in each))
    return [(key, [each.get(key, _MISSING) for each in flat]) for key in keys
            if any(each.get(key, _MISSING) != flat[0].get(key, _MISSING) for each in flat[1:])]


def _differs_table(runs, names) -> str:
    """What differs between the runs' recorded inputs, or that none does (then the cause is not in meta.json)."""
    found = what_differs(runs)
    if not found:
        return ("<p class='differs'><b>What differs:</b> nothing the runs record as input (seed, method, steps, "
                "inertia, initial state, components, environment, knowledge): whatever was changed between them "
                "is not in their meta.json.</p>")
    head = "".join(f"<th>{_esc(name)}</th>" for name in names)
    rows = "".join(f"<tr><th>{_esc(key)}</th>" + "".join(f"<td>{_esc(_shown(v))}</td>" for v in values) + "</tr>"
                   for key, values in found[:MAX_DIFFERENCES])
    more = (f"<p class='note'>and {len(found) - MAX_DIFFERENCES} more inputs differ.</p>"
            if len(found) > MAX_DIFFERENCES else "")
    return (f"<h3>What differs between the runs (their recorded inputs)</h3><div class='table-wrap'><table "
            f"class='params differs'><tr><th>input</th>{head}</tr>{rows}</table></div>{more}")


def _runs_table(runs, names, per_run, reference: int) -> tuple[str, dict]:
    """The status and differences of each run, and the differences themselves (by run name)."""
    base = runs[reference].df
    rows, found = [], {}
    for k, (name, run, own) in enumerate(zip(names, runs, per_run)):
        difference = overlays.differences(base, run.df) if k != reference else None
        if difference is not None:
            found[name] = (k, difference)
        state = status(run, own)
        rows.append(
            f"<tr class='{'pass' if state == 'complete' else 'fail'}'><td>{_esc(state)}</td><td>{_esc(name)}</td>"
            f"<td class='num'>{len(run.df)}</td>"
            f"<td class='num'>{_esc(fmt(run.meta.get('max_step_s')))}</td>"
            f"<td class='num'>{_esc(fmt(run.meta.get('wall_s'), 3))}</td>"
            + ("<td>(reference)</td><td>(reference)</td>" if k == reference else
               f"<td class='num'>{_esc(_largest(difference.attitude_deg) if difference else '–')}</td>"
               f"<td class='num'>{_esc(_largest(difference.rate_deg_s) if difference else '–')}</td>")
            + "</tr>"
        )
    table = (
        "<div class='table-wrap'><table class='params'><tr><th>status</th><th>run (directory, seed, method)</th>"
        "<th>rows</th><th>max step [s]</th><th>wall [s]</th>"
        f"<th>max attitude difference to {_esc(names[reference])} [deg]</th>"
        "<th>max rate difference [deg/s]</th></tr>" + "".join(rows) + "</table></div>"
    )
    return table, found


def sections(runs, criteria=None, reference=None) -> list[Section]:
    """The comparison's sections (see the module docstring)."""
    names = labels(runs)
    per_run, common = share_criteria(runs, criteria)
    ref = reference_index(runs, reference)
    table, found = _runs_table(runs, names, per_run, ref)
    items = [
        "<p class='note'>Status: <b>failed</b> when the run stopped on an error or one of its criteria failed, "
        "<b>partial</b> when it was cut short (killed), <b>running</b> when it was still going when this page was "
        f"written, <b>complete</b> otherwise. Differences are to the reference run, {_esc(names[ref])} "
        "(<code>attsim report ... --reference DIR</code> picks another), at the times both runs recorded. "
        "Every plot below draws each run in its own colour, in the run pages' units.</p>",
        _differs_table(runs, names),
        table,
        _side_by_side(names, per_run),
    ]
    if common:
        items.append("<h3>Criteria of the mission (naming no single run)</h3>"
                     f"<div class='table-wrap'><p>{_verdicts(common)}</p></div>")
    out = [Section("comparison", "Comparison", [item for item in items if item])]
    for anchor, heading, plot in (
            ("pointing", "Pointing", overlays.pointing(runs, names, per_run, ref)),
            ("rates", "Body rates", overlays.rates(runs, names)),
            ("wheels", "Reaction wheels", overlays.wheels(runs, names)),
            ("dipoles", "Magnetorquers", overlays.dipoles(runs, names)),
            ("estimation", "Estimation", overlays.estimation(runs, names)),
            ("differences", "Differences", overlays.difference_plot(found, names[ref]))):
        if plot is not None:
            out.append(Section(anchor, heading, [plot]))
    return out
