"""The comparison page: several runs side by side, each named by its directory, seed and method."""

from __future__ import annotations

import html
from pathlib import Path

import numpy as np

from .. import rotations
from ..schema import QUATERNION_COLUMNS, RATE_COLUMNS
from .page import Section
from .runinfo import method_label, status
from .style import Panel, fmt, line, stacked

_esc = html.escape


def label(run, k: int) -> str:
    """``directory (seed s, method m)``: distinct even when runs share a scenario name."""
    where = Path(run.path).name if run.path is not None else str(run.meta.get("name", f"run {k}"))
    return f"{where} (seed {run.meta.get('seed')}, {method_label(run.meta)})"


def _own_criteria(run, criteria):
    """The run's criteria: its own list, or the rows of a shared list that name its method or name."""
    if criteria is None:
        return run.meta.get("criteria") or []
    if (
        criteria
        and isinstance(criteria[0], (list, tuple))
        and criteria[0]
        and isinstance(criteria[0][0], (list, tuple))
    ):
        return []  # a list per run is matched by position by the caller
    keys = [str(run.meta.get("name", "")), str(run.meta.get("method", ""))]
    mine = [
        row
        for row in criteria
        if any(k and (str(row[0]).startswith(k + ":") or k in str(row[0]).split()) for k in keys)
    ]
    return mine


def sections(runs, criteria=None) -> list[Section]:
    labels = [label(run, k) for k, run in enumerate(runs)]
    per_run = (
        list(criteria)
        if criteria
        and len(criteria) == len(runs)
        and all(isinstance(c, (list, tuple)) and (not c or isinstance(c[0], (list, tuple))) for c in criteria)
        else [_own_criteria(run, criteria) for run in runs]
    )
    base = runs[0].df
    rows, differences = [], {}
    for name, run, own in zip(labels, runs, per_run):
        df = run.df
        common = np.intersect1d(base.index.to_numpy(), df.index.to_numpy())
        if len(common):
            dq = rotations.quat_angle_between(
                base.loc[common, list(QUATERNION_COLUMNS)].to_numpy(),
                df.loc[common, list(QUATERNION_COLUMNS)].to_numpy(),
            )
            dw = float(
                np.abs(
                    base.loc[common, list(RATE_COLUMNS)].to_numpy() - df.loc[common, list(RATE_COLUMNS)].to_numpy()
                ).max()
            )
            if run is not runs[0]:
                differences[name] = (common, dq)
        else:
            dq, dw = np.array([np.nan]), float("nan")
        verdicts = (
            "<br>".join(
                f"<span class='{'pass' if ok else 'fail'}'>{'PASS' if ok else 'FAIL'}</span> "
                f"{_esc(str(text))}: {_esc(fmt(value))} ({_esc(str(bound))})"
                for text, value, ok, bound in own
            )
            or "–"
        )
        state = status(run, own)
        rows.append(
            f"<tr class='{'pass' if state == 'complete' else 'fail'}'><td>{_esc(state)}</td><td>{_esc(name)}</td>"
            f"<td class='num'>{_esc(fmt(run.meta.get('max_step_s')))}</td>"
            f"<td class='num'>{_esc(fmt(run.meta.get('wall_s'), 3))}</td>"
            f"<td class='num'>{_esc(fmt(float(np.nanmax(dq))))}</td>"
            f"<td class='num'>{_esc(fmt(dw))}</td><td>{verdicts}</td></tr>"
        )
    table = (
        "<div class='table-wrap'><table class='params'><tr><th>status</th><th>run (directory, seed, method)</th>"
        f"<th>max step [s]</th><th>wall [s]</th><th>max attitude difference to {_esc(labels[0])} [rad]</th>"
        "<th>max rate difference [rad/s]</th><th>criteria</th></tr>" + "".join(rows) + "</table></div>"
    )
    items = [table]
    if differences:
        traces = [line(common, dq, name, k, log_y=True) for k, (name, (common, dq)) in enumerate(differences.items())]
        items.append(
            stacked(f"Attitude difference to {labels[0]}", [Panel("angle [rad]", traces, log_y=True, height_px=320)])
        )
    panels = []
    for columns, unit in ((RATE_COLUMNS, "ω [rad/s]"), (QUATERNION_COLUMNS, "q_IB [-]")):
        traces = []
        for k, (name, run) in enumerate(zip(labels, runs)):
            t = run.df.index.to_numpy()
            for j, c in enumerate(columns):
                trace = line(t, run.df[c].to_numpy(), f"{name}: {c}", j + len(columns) * k, group=name)
                traces.append(trace)
        panels.append(Panel(unit, traces, height_px=300))
    items.append(stacked("Body rates and attitude, all runs", panels))
    return [Section("comparison", "Comparison", items)]
