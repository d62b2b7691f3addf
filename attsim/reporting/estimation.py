"""Estimation, modes and events.

An estimator ``<est>`` is recognised by its columns
(:data:`attsim.schema.ESTIMATOR_SUFFIXES`): ``<est>_qw..qz`` (its q_IB
estimate), ``<est>_bias_x/y/z`` (gyro bias, rad/s), ``<est>_sigma3_att_x/y/z``
(3σ of the attitude error, rad), ``<est>_sigma3_bias_x/y/z`` (3σ of the bias,
rad/s), ``<est>_nis_st/mag/sun`` (the normalised innovation squared of each
kind of update) and ``<est>_bias_true_x/y/z`` (the gyro's true bias). Modes: an integer ``mode`` column, named by
``meta["modes"]`` (a list, or a mapping from the number to the name).
"""

from __future__ import annotations

import html

import numpy as np

from .. import rotations
from ..schema import ESTIMATOR_SUFFIXES, QUATERNION_COLUMNS
from .page import Section
from .style import AXIS_COLOURS, Panel, Plot, line, shade, stacked, style

ARCSEC_PER_RAD = 180.0 / np.pi * 3600.0
DEG_H_PER_RAD_S = 180.0 / np.pi * 3600.0


def estimators(df) -> list[str]:
    """The names of the estimators whose attitude estimate the telemetry holds."""
    return sorted(c[: -len("_qw")] for c in df.columns
                  if c.endswith("_qw") and all(f"{c[: -len('_qw')]}_{s}" in df for s in ESTIMATOR_SUFFIXES))


def _bounds(t, sigma3, k, scale, name) -> list[dict]:
    colour = style(k)["color"]
    upper = line(t, sigma3 * scale, f"±3σ {name}", k, dash="dot", width=1, color=colour, group=f"3s{name}")
    lower = line(t, -sigma3 * scale, f"±3σ {name}", k, dash="dot", width=1, color=colour, group=f"3s{name}")
    lower["showlegend"] = False
    return [upper, lower]


def _estimator_plot(df, name, t) -> Plot:
    estimate = df[[f"{name}_q{a}" for a in "wxyz"]].to_numpy()
    truth = df[list(QUATERNION_COLUMNS)].to_numpy()
    error = np.full((len(t), 3), np.nan)
    valid = np.all(np.isfinite(estimate), axis=1) & (np.linalg.norm(estimate, axis=1) > 0)
    if valid.any():
        q_err = rotations.quat_canonical(
            rotations.quat_multiply(rotations.quat_conjugate(truth[valid]), estimate[valid])
        )
        error[valid] = rotations.quat_to_rotvec(q_err) * ARCSEC_PER_RAD
    attitude = []
    for k, a in enumerate("xyz"):
        attitude.append(line(t, error[:, k], f"{a} error", color=AXIS_COLOURS[a]))
        if f"{name}_sigma3_att_{a}" in df:
            attitude += _bounds(t, df[f"{name}_sigma3_att_{a}"].to_numpy(), k, ARCSEC_PER_RAD, a)
    panels = [Panel("attitude error [arcsec]", attitude)]
    if all(f"{name}_bias_{a}" in df for a in "xyz"):
        bias = []
        for k, a in enumerate("xyz"):
            true_column = f"{name}_bias_true_{a}"
            values = df[f"{name}_bias_{a}"].to_numpy() - (df[true_column].to_numpy() if true_column in df else 0.0)
            bias.append(
                line(
                    t,
                    values * DEG_H_PER_RAD_S,
                    f"bias {a}" + (" error" if true_column in df else " estimate"),
                    color=AXIS_COLOURS[a],
                )
            )
            if f"{name}_sigma3_bias_{a}" in df:
                bias += _bounds(t, df[f"{name}_sigma3_bias_{a}"].to_numpy(), k, DEG_H_PER_RAD_S, f"bias {a}")
        panels.append(Panel("gyro bias [deg/h]", bias))
    nis = [line(t, df[f"{name}_nis_{kind}"].to_numpy(), f"NIS {label}", k, dash="dot")
           for k, (kind, label) in enumerate((("st", "star tracker"), ("mag", "magnetometer"), ("sun", "Sun")))
           if f"{name}_nis_{kind}" in df and df[f"{name}_nis_{kind}"].notna().any()]
    if nis:
        panels.append(Panel("NIS [-] (chi-square, 3 dof: mean 3)", nis))
    return stacked(f"{name}: estimate against the truth (dotted: ±3σ)", panels)


def estimation_section(tel) -> Section | None:
    names = estimators(tel.df)
    if not names:
        return None
    t = tel.df.index.to_numpy()
    return Section("estimation", "Estimation", [_estimator_plot(tel.df, name, t) for name in names])


def mode_names(meta, values) -> dict:
    """``{number: name}`` for the modes seen, from ``meta["modes"]`` where it names them."""
    names = meta.get("modes") or {}
    if isinstance(names, list):
        names = dict(enumerate(names))
    names = {int(k): str(v) for k, v in names.items()}
    return {int(v): names.get(int(v), f"mode {int(v)}") for v in values}


def mode_intervals(df, meta) -> dict:
    """``{name: [(start, stop), ...]}`` of the ``mode`` column (empty without one)."""
    if "mode" not in df or not len(df):
        return {}
    t = df.index.to_numpy()
    mode = df["mode"].to_numpy()
    finite = np.isfinite(mode)
    names = mode_names(meta, np.unique(mode[finite]))
    out = {}
    change = np.nonzero(np.diff(mode) != 0)[0] + 1
    starts = np.concatenate([[0], change])
    stops = np.concatenate([change, [len(t) - 1]])
    for a, b in zip(starts, stops):
        if finite[a]:
            out.setdefault(names[int(mode[a])], []).append((float(t[a]), float(t[b])))
    return out


def mode_shapes(df, meta) -> list[dict]:
    """Shaded intervals of each mode (for the pointing panels)."""
    shapes = []
    for k, (name, intervals) in enumerate(mode_intervals(df, meta).items()):
        shapes += shade(intervals, style(k + 5)["color"], f"mode: {name}", opacity=0.08)
    return shapes


def timeline_section(tel) -> Section | None:
    """Modes as a step line and the events as markers, one row per kind."""
    df, meta, events = tel.df, tel.meta, tel.events
    panels = []
    if "mode" in df and len(df):
        values = df["mode"].to_numpy()
        names = mode_names(meta, np.unique(values[np.isfinite(values)]))
        trace = line(df.index.to_numpy(), values, "mode", 0, shape="hv")
        panels.append(Panel("mode", [trace], height_px=max(120, 36 * len(names))))
    kinds = (
        sorted(str(k) for k in events["kind"].unique())
        if events is not None and len(events) and "kind" in events
        else []
    )
    if kinds:
        traces = []
        for k, kind in enumerate(kinds):
            mine = events[events["kind"] == kind]
            # what each event is about: an actuator, a sensor (faults) or an estimator (outliers)
            label = next((mine[c].astype(str) for c in ("actuator", "sensor", "estimator")
                          if c in mine and mine[c].notna().all()), None)
            traces.append(
                {
                    "type": "scatter",
                    "mode": "markers",
                    "name": kind,
                    "x": mine["t"].to_numpy(dtype=float),
                    "y": [kind] * len(mine),
                    "marker": {"color": style(k)["color"], "size": 8, "symbol": "line-ns-open", "line": {"width": 2}},
                    "text": None if label is None else label.tolist(),
                    "hoverinfo": "x+y+text",
                }
            )
        panels.append(Panel("event", traces, height_px=max(120, 30 * len(kinds))))
    if not panels:
        return None
    plot = stacked("Modes and events", panels)
    if "mode" in df and len(df):
        axis = plot.figure["layout"]["yaxis"]
        axis.update(tickmode="array", tickvals=list(names), ticktext=[html.escape(n) for n in names.values()])
    return Section("timeline", "Modes and events", [plot])
