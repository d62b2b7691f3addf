"""Estimation, modes and events.

An estimator ``<est>`` is recognised by its columns
(:data:`attsim.telemetry.schema.ESTIMATOR_SUFFIXES`): ``<est>_qw..qz`` (its q_IB
estimate), ``<est>_bias_x/y/z`` (gyro bias, rad/s), ``<est>_sigma3_att_x/y/z``
(3σ of the attitude error, rad), ``<est>_sigma3_bias_x/y/z`` (3σ of the bias,
rad/s), ``<est>_nis_st/mag/sun`` (the normalised innovation squared of each
kind of update) and ``<est>_bias_true_x/y/z`` (the gyro's true bias). Modes: an integer ``mode`` column, named by
``meta["modes"]`` (a list, or a mapping from the number to the name).
"""

from __future__ import annotations

import html

import numpy as np

from ..analysis import estimation_error_rad
from ..telemetry.schema import ESTIMATION_ERROR, ESTIMATOR_SUFFIXES
from .page import Section
from .pointing import declared_marks
from .runinfo import ANGLE_TO_DEG
from .style import AXIS_COLOURS, Panel, Plot, fmt, limit_lines, line, shade, short, stacked, style

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


def converged_range(error: np.ndarray, sigma3: np.ndarray) -> tuple[float, float] | None:
    """A symmetric y range that shows the filter once converged: its error and 3σ bound after the start's transient.

    A filter started with a large covariance has 3σ bounds hundreds of times its steady ones, and autoscaling
    to them flattens everything after. The transient ends at the first row whose bounds are all within 3 times
    their median over the second half of the run; the range holds every bound after it (an eclipse's growth
    too) and the error's 99.5th percentile. None when there is nothing to narrow.
    """
    sigma3, error = np.abs(np.asarray(sigma3, dtype=float)), np.abs(np.asarray(error, dtype=float))
    if sigma3.ndim == 1:
        sigma3, error = sigma3[:, None], error[:, None]
    late = sigma3[len(sigma3) // 2 :]
    if not np.isfinite(late).any():
        return None
    steady = np.nanmedian(late, axis=0)
    settled = np.nonzero(np.all(sigma3 <= 3.0 * steady, axis=1))[0]
    if not len(settled):
        return None
    after_bounds, after_error = sigma3[settled[0] :], error[settled[0] :]
    peak = max(np.nanmax(after_bounds), np.nanpercentile(after_error, 99.5) if np.isfinite(after_error).any() else 0.0)
    whole = max(np.nanmax(sigma3), np.nanmax(error) if np.isfinite(error).any() else 0.0)
    if not np.isfinite(peak) or peak <= 0.0 or whole <= 2.0 * peak:
        return None
    return (-1.1 * float(peak), 1.1 * float(peak))


# the degrees of freedom of each kind of update's NIS (chi-square when the filter is consistent): a star tracker's
# attitude error and a magnetometer's field vector have three; the Sun sensors' direction is a unit vector, so its
# innovation has no component along it and two
NIS_KINDS = (("st", "star tracker", "ST", 3), ("mag", "magnetometer", "mag", 3), ("sun", "Sun", "Sun", 2))


def _chi2_quantiles(probabilities, dof: int) -> np.ndarray:
    """Quantiles of the chi-square distribution with ``dof`` degrees of freedom: ``2 P⁻¹(dof/2, p)`` with ``P`` the
    regularised lower incomplete gamma function (scipy.special; scipy.stats would cost a report a second and a
    half to import)."""
    from scipy.special import gammaincinv

    return 2.0 * gammaincinv(dof / 2.0, np.asarray(probabilities, dtype=float))


def _nis_panel(df, name, t) -> Panel | None:
    traces, dofs = [], {}
    for k, (kind, label, abbreviation, dof) in enumerate(NIS_KINDS):
        column = f"{name}_nis_{kind}"
        if column not in df or not df[column].notna().any():
            continue
        values = df[column].to_numpy()
        keep = np.isfinite(values)  # a row without an update of that kind has no NIS
        trace = line(t[keep], values[keep], f"NIS {label}", k)
        trace.update(mode="markers", marker={"color": trace["line"]["color"], "size": 3})
        traces.append(trace)
        dofs.setdefault(dof, []).append((abbreviation, trace["line"]["color"]))
    if not traces:
        return None
    t0, t1 = float(t[0]), float(t[-1])
    several = len(dofs) > 1
    for dof, kinds in sorted(dofs.items(), reverse=True):
        low, high = _chi2_quantiles([0.025, 0.975], dof)
        # one kind per band: the band in its colour; bands shared by kinds, or a single band, in grey
        colour = kinds[0][1] if several and len(kinds) == 1 else "#444"
        who = f"{dof} dof ({', '.join(label for label, _ in kinds)}): " if several else ""
        mean = f"{who}mean {dof}" if several else f"mean {dof} (consistent filter)"
        traces.append(limit_lines(t0, t1, float(dof), mean, color="#000" if not several else colour,
                                  symmetric=False))
        band = f"{who}95% {fmt(float(low), 3)} to {fmt(float(high), 3)}" if several else \
            f"95% band {fmt(float(low), 3)} to {fmt(float(high), 3)}"
        traces.append(limit_lines(t0, t1, float(high), band, color=colour, symmetric=False, group=f"band{dof}"))
        band_low = limit_lines(t0, t1, float(low), band, color=colour, symmetric=False, group=f"band{dof}")
        band_low["showlegend"] = False
        traces.append(band_low)
    # the degrees of freedom of each kind in the legend when they differ: an axis title that long runs off the panel
    title = "NIS [-] (chi-square)" if several else f"NIS [-] (chi-square, {next(iter(dofs))} dof)"
    return Panel(title, traces, log_y=True)


ARCSEC_UP_TO = 1000.0  # an attitude error axis reading beyond this many arcsec reads in deg ("10k arcsec" does not)


def angle_unit(error_rad: np.ndarray, sigma3_rad: np.ndarray | None) -> tuple[str, float]:
    """``("arcsec", factor)`` or ``("deg", factor)`` for an attitude error: what its converged range (or its 99th
    percentile) reads best in."""
    error = error_rad * ARCSEC_PER_RAD
    shown = converged_range(error, sigma3_rad * ARCSEC_PER_RAD) if sigma3_rad is not None else None
    finite = np.abs(error[np.isfinite(error)])
    peak = shown[1] if shown is not None else (float(np.percentile(finite, 99)) if finite.size else 0.0)
    return ("deg", np.degrees(1.0)) if peak > ARCSEC_UP_TO else ("arcsec", ARCSEC_PER_RAD)


def _estimator_plot(df, name, t, criteria=None) -> Plot:
    error = estimation_error_rad(df, name)
    sigma_att = [f"{name}_sigma3_att_{a}" for a in "xyz"]
    sigma = df[sigma_att].to_numpy() if all(c in df for c in sigma_att) else None
    unit, scale = angle_unit(error, sigma)
    error = error * scale
    attitude = []
    for k, a in enumerate("xyz"):
        attitude.append(line(t, error[:, k], f"{a} error", color=AXIS_COLOURS[a]))
        if f"{name}_sigma3_att_{a}" in df:
            attitude += _bounds(t, df[f"{name}_sigma3_att_{a}"].to_numpy(), k, scale, a)
    # a requirement on the error's angle (Requirement(..., "<name>_err_deg", ...)): the angle drawn with it
    in_unit = {u: f / ANGLE_TO_DEG[unit] for u, f in ANGLE_TO_DEG.items()}
    marks, windows, _ = declared_marks(criteria or [], f"{name}{ESTIMATION_ERROR}", in_unit, unit)
    if marks:
        attitude += [line(t, np.linalg.norm(error, axis=1), "|error|", color="#444")] + marks
    narrowed = False
    att_range = converged_range(error, sigma * scale) if sigma is not None and not marks else None
    narrowed |= att_range is not None
    panels = [Panel(f"attitude error [{unit}]", attitude, windows, y_range=att_range)]
    if all(f"{name}_bias_{a}" in df for a in "xyz"):
        bias, errors = [], []
        for k, a in enumerate("xyz"):
            true_column = f"{name}_bias_true_{a}"
            values = df[f"{name}_bias_{a}"].to_numpy() - (df[true_column].to_numpy() if true_column in df else 0.0)
            errors.append(values * DEG_H_PER_RAD_S)
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
        sigma_bias = [f"{name}_sigma3_bias_{a}" for a in "xyz"]
        bias_range = converged_range(np.stack(errors, axis=1), df[sigma_bias].to_numpy() * DEG_H_PER_RAD_S) if all(
            c in df for c in sigma_bias) else None
        narrowed |= bias_range is not None
        panels.append(Panel("gyro bias [deg/h]", bias, y_range=bias_range))
    nis = _nis_panel(df, name, t)
    if nis is not None:
        panels.append(nis)
    note = "; y range of the converged filter, double-click twice for all of it" if narrowed else ""
    return stacked(f"{name}: estimate against the truth (dotted: ±3σ{note})", panels)


def estimation_section(tel, criteria=None) -> Section | None:
    names = estimators(tel.df)
    if not names:
        return None
    t = tel.df.index.to_numpy()
    return Section("estimation", "Estimation", [_estimator_plot(tel.df, name, t, criteria) for name in names])


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
                    # a category on the axis: plotly reads HTML there too, so it is escaped to show as written
                    "y": [html.escape(short(kind), quote=False)] * len(mine),
                    "marker": {"color": style(k)["color"], "size": 8, "symbol": "line-ns-open", "line": {"width": 2}},
                    "text": None if label is None else label.tolist(),
                    "hoverinfo": "x+y+text",
                }
            )
        panels.append(Panel("event", traces, height_px=max(120, 30 * len(kinds))))
    if not panels:
        return None
    plot = stacked("Modes and events", panels)
    if len(df) > 1:  # the whole run, not only the stretch with events
        plot.figure["layout"]["xaxis"]["range"] = [float(df.index[0]), float(df.index[-1])]
    if "mode" in df and len(df):
        axis = plot.figure["layout"]["yaxis"]
        axis.update(tickmode="array", tickvals=list(names), ticktext=[short(n) for n in names.values()])
    return Section("timeline", "Modes and events", [plot])
