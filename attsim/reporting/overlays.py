"""A comparison's plots: each quantity of the run pages, in their units, one colour per run (layer 7).

Each run has its colour and its dash (the first solid), so runs that agree
still show both. Pointing error (deg, log), body rates (deg/s) and |ω| (log), wheel speeds
(RPM) and the array's momentum, magnetorquer dipoles, each estimator's
attitude error (its magnitude, deg or arcsec, log), and the differences of
attitude (deg) and rate (deg/s) to the reference run at the times both
recorded. A quantity no run has is left out; a run without it has no line.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .. import rotations
from ..analysis import body_rate_deg_s
from ..telemetry.schema import QUATERNION_COLUMNS, RATE_COLUMNS
from .actuators import RPM_PER_RAD_S
from .estimation import angle_unit, estimators
from .pointing import lines_over_run, pointing_error
from .runinfo import ANGLE_TO_DEG, components, declared_on
from .style import DASHES, Panel, Plot, line, requirement_marks, stacked

__all__ = ["Difference", "differences", "pointing", "rates", "wheels", "dipoles", "estimation", "difference_plot"]

PANEL_PX = 200
BOUND_LINE = {"color": "#222", "dash": "longdashdot", "width": 1.6}  # a requirement's line among the runs' lines


class Difference(NamedTuple):
    """A run against the reference at the times both recorded: attitude angle (deg) and largest rate (deg/s)."""

    t: np.ndarray
    attitude_deg: np.ndarray
    rate_deg_s: np.ndarray


def differences(reference, df) -> Difference | None:
    """The run's differences to the reference (None without the state columns or a common time)."""
    columns = list(QUATERNION_COLUMNS + RATE_COLUMNS)
    if not all(c in reference for c in columns) or not all(c in df for c in columns):
        return None
    common = np.intersect1d(reference.index.to_numpy(), df.index.to_numpy())
    if not len(common):
        return None
    a, b = reference.loc[common], df.loc[common]
    angle = rotations.quat_angle_between(a[list(QUATERNION_COLUMNS)].to_numpy(), b[list(QUATERNION_COLUMNS)].to_numpy())
    rate = np.abs(a[list(RATE_COLUMNS)].to_numpy() - b[list(RATE_COLUMNS)].to_numpy()).max(axis=1)
    return Difference(common, np.degrees(angle), np.degrees(rate))


def run_line(x, y, name: str, k: int, log_y: bool = False) -> dict:
    """The line of run ``k``: its colour and its dash (solid, dashed, dotted, ...), so that runs drawn over each
    other where they agree still show both."""
    return line(x, y, name, k, log_y=log_y, group=name, dash=DASHES[k % len(DASHES)], width=2.0 if k == 0 else 1.5)


def _lines(runs, names, values, log_y=False) -> list[dict]:
    """One line per run that has ``values(run)`` (None: it has not), in the run's colour and dash, grouped by run."""
    traces = []
    for k, (name, run) in enumerate(zip(names, runs)):
        y = values(run) if len(run.df) else None
        if y is not None:
            traces.append(run_line(run.df.index.to_numpy(), y, name, k, log_y=log_y))
    return traces


def pointing(runs, names, criteria, reference: int) -> Plot | None:
    """The pointing error of every run (deg, log), with the reference run's requirement over its window."""
    def error(run):
        found = pointing_error(run.df, run.meta)
        return None if found is None else found.total_deg

    traces = _lines(runs, names, error, log_y=True)
    if not traces:
        return None
    marks, windows = requirement_marks(declared_on(criteria[reference], "att_err_deg"), ANGLE_TO_DEG, "deg")
    marks = [m for m in marks if m.get("mode") == "lines"]  # a worst point is one run's: its own page marks it
    if not marks and len(runs[reference].df):  # a (label, value, ok, bound) tuple's: across the run, as its page
        marks, _ = lines_over_run(criteria[reference], runs[reference].meta, runs[reference].df.index.to_numpy())
    for mark in marks:  # the bound in a style of its own: no run's colour or dash (run 1 is red and dashed)
        mark["line"] = dict(mark.get("line") or {}, **BOUND_LINE)
    title = "Pointing error of every run" + (f" (requirement and window: {names[reference]}'s)" if marks else "")
    return stacked(title, [Panel("pointing error [deg]", traces + marks, windows, log_y=True, height_px=300)])


def rates(runs, names) -> Plot | None:
    """ω per body axis (deg/s) and |ω| (deg/s, log) of every run."""
    panels = []
    for k, axis in enumerate("xyz"):
        column = RATE_COLUMNS[k]
        traces = _lines(runs, names, lambda run, c=column: np.degrees(run.df[c].to_numpy()) if c in run.df else None)
        if traces:
            panels.append(Panel(f"ω_{axis} [deg/s]", traces, height_px=PANEL_PX))

    def norm(run):
        if not all(c in run.df for c in RATE_COLUMNS):
            return None
        return body_rate_deg_s(run.df)

    traces = _lines(runs, names, norm, log_y=True)
    if traces:
        panels.append(Panel("|ω| [deg/s]", traces, log_y=True, height_px=PANEL_PX))
    return stacked("Body rates of every run (body axes, one colour per run)", panels) if panels else None


def _names_of(runs, kind: str, column: str) -> list[str]:
    """The components of ``kind`` any run records ``<name>_<column>`` for, in the order they first appear."""
    found = {}
    for run in runs:
        for c in components(run.meta, {kind}):
            if f"{c['name']}_{column}" in run.df:
                found.setdefault(c["name"], None)
    return list(found)


def _array_momentum(run):
    wheels = [w for w in components(run.meta, {"ReactionWheel"}) if f"{w['name']}_h" in run.df]
    if not wheels or not all(w.get("axis") is not None for w in wheels):
        return None
    axes = np.array([w["axis"] for w in wheels], dtype=float)
    return np.linalg.norm(run.df[[f"{w['name']}_h" for w in wheels]].to_numpy() @ axes, axis=1)


def wheels(runs, names) -> Plot | None:
    """Each wheel's speed (RPM) and the array's momentum |Σ h_i a_i| (N m s) of every run."""
    panels = []
    for wheel in _names_of(runs, "ReactionWheel", "speed"):
        column = f"{wheel}_speed"
        traces = _lines(runs, names, lambda run, c=column: run.df[c].to_numpy() * RPM_PER_RAD_S
                        if c in run.df else None)
        panels.append(Panel(f"{wheel} [RPM]", traces, height_px=PANEL_PX))
    if panels:
        traces = _lines(runs, names, _array_momentum)
        if traces:
            panels.append(Panel("array momentum [N m s]", traces, height_px=PANEL_PX))
    return stacked("Reaction wheels of every run: speed and the array's momentum", panels) if panels else None


def dipoles(runs, names) -> Plot | None:
    """Each magnetorquer's applied dipole per axis (A m²) of every run."""
    panels = []
    for name in _names_of(runs, "Magnetorquer", "m_x"):
        for axis in "xyz":
            column = f"{name}_m_{axis}"
            traces = _lines(runs, names, lambda run, c=column: run.df[c].to_numpy() if c in run.df else None)
            panels.append(Panel(f"{name} m_{axis} [A m²]", traces, height_px=PANEL_PX))
    return stacked("Magnetorquer dipoles of every run", panels) if panels else None


def _estimate_error_rad(run, name):
    if f"{name}_qw" not in run.df:
        return None
    estimate = run.df[[f"{name}_q{a}" for a in "wxyz"]].to_numpy()
    truth = run.df[list(QUATERNION_COLUMNS)].to_numpy()
    with np.errstate(invalid="ignore"):
        return rotations.quat_angle_between(truth, estimate)


def estimation(runs, names) -> Plot | None:
    """Each estimator's attitude error magnitude of every run (log; deg or arcsec, as its size reads)."""
    found = {}
    for run in runs:
        for name in estimators(run.df):
            found.setdefault(name, None)
    panels = []
    for name in found:
        errors = [_estimate_error_rad(run, name) for run in runs]
        every = [e for e in errors if e is not None]
        unit, scale = angle_unit(np.concatenate(every)[:, None], None)
        traces = [run_line(run.df.index.to_numpy(), e * scale, label, k, log_y=True)
                  for k, (label, run, e) in enumerate(zip(names, runs, errors)) if e is not None]
        panels.append(Panel(f"{name} attitude error [{unit}]", traces, log_y=True, height_px=PANEL_PX))
    return stacked("Estimation: attitude error of the estimate against the truth, every run", panels) \
        if panels else None


def difference_plot(found: dict, reference_name: str) -> Plot | None:
    """Attitude (deg) and rate (deg/s) differences of each run to the reference, log scales."""
    if not found:
        return None
    angle = [run_line(d.t, d.attitude_deg, name, k, log_y=True) for name, (k, d) in found.items()]
    rate = [run_line(d.t, d.rate_deg_s, name, k, log_y=True) for name, (k, d) in found.items()]
    return stacked(f"Differences to the reference run, {reference_name}",
                   [Panel("attitude difference [deg]", angle, log_y=True, height_px=260),
                    Panel("largest rate difference [deg/s]", rate, log_y=True, height_px=PANEL_PX)])
