"""The HTML report (layer 7): one self-contained page per run, or a comparison.

``attsim.report(telemetry, path)`` writes a single HTML file with plotly.js
embedded once (works offline). Sections appear when the telemetry has what
they need:

* Summary — scenario, parameters, success criteria (PASS/FAIL with values),
  simulated and wall time, real-time factor, versions; a banner when the run
  is partial or the inertia non-physical.
* Body rates; attitude (quaternion and 3-2-1 Euler angles).
* Angular momentum — inertial components, |H| and their relative drift on a
  log scale (the conservation check); kinetic energy and its drift.
* Nutation — angle between the major principal axis and H.
* Axis stability — the polhode on the momentum sphere with the separatrices,
  the spin's classification, and the growth rate about the intermediate axis.
* 3D attitude — the body's equivalent inertia ellipsoid with H and ω,
  animated with a time slider.
* Actuators, sensors against truth, environment and disturbance torques.

Every trace is decimated to at most ``MAX_POINTS`` points with the
min/max-preserving MinMaxLTTB method (``tsdownsample``); the full-rate
telemetry stays in the Parquet file next to the report. User text is
HTML-escaped.
"""

from __future__ import annotations

import html
import math
from pathlib import Path
from typing import Sequence

import numpy as np

from . import analysis, rotations
from .errors import InputError

__all__ = ["report", "MAX_POINTS", "classify_spin"]

classify_spin = analysis.classify_spin  # where missions written against an earlier attsim look for it

MAX_POINTS = 5000
ANIMATION_FRAMES = 60
Q = ["qw", "qx", "qy", "qz"]
W = ["wx", "wy", "wz"]


def _decimate(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """At most ``MAX_POINTS`` points, as float32 (what a screen shows; the page stays small)."""
    x, y = _select(np.asarray(x, dtype=float), np.asarray(y, dtype=float))
    return x.astype(np.float32), y.astype(np.float32)


def _select(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    if len(x) <= MAX_POINTS:
        return x, y
    from tsdownsample import MinMaxLTTBDownsampler

    finite = np.isfinite(y)
    if not finite.all():
        x, y = x[finite], y[finite]
        if len(x) <= MAX_POINTS:
            return x, y
    index = MinMaxLTTBDownsampler().downsample(np.ascontiguousarray(x), np.ascontiguousarray(y), n_out=MAX_POINTS)
    return x[index], y[index]


def _lines(title: str, t: np.ndarray, series: dict, y_title: str, log_y: bool = False, shapes=()):
    import plotly.graph_objects as go

    fig = go.Figure()
    for name, values in series.items():
        x, y = _decimate(t, np.asarray(values, dtype=float))
        if log_y:
            y = np.where(y > 0, y, np.nan)
        fig.add_trace(go.Scatter(x=x, y=y, mode="lines", name=name))
    fig.update_layout(title=title, xaxis_title="t [s]", yaxis_title=y_title, height=380, margin=dict(l=60, r=20, t=50, b=40),
                      yaxis_type="log" if log_y else "linear", shapes=list(shapes), legend=dict(orientation="h"))
    return fig


def _intervals(t: np.ndarray, flag: np.ndarray, color: str):
    """Shaded rectangles where ``flag`` is true."""
    shapes = []
    edges = np.diff(np.concatenate([[0], flag.astype(int), [0]]))
    for start, stop in zip(np.nonzero(edges == 1)[0], np.nonzero(edges == -1)[0]):
        shapes.append(dict(type="rect", xref="x", yref="paper", x0=t[start], x1=t[min(stop, len(t) - 1)], y0=0, y1=1,
                           fillcolor=color, opacity=0.15, line_width=0))
    return shapes


def _principal(meta):
    from .inertia import principal_axes

    J = np.asarray(meta.get("inertia_kg_m2"), dtype=float)
    moments, R = principal_axes(J)
    return J, moments, R



def _method_label(meta) -> str:
    """The method with the options it ran with, e.g. ``dmv (order=10)``."""
    options = meta.get("method_options") or {}
    listed = ", ".join(f"{k}={v}" for k, v in options.items())
    return f"{meta.get('method')} ({listed})" if listed else str(meta.get("method"))


def _summary(tel, criteria) -> str:
    meta = tel.meta
    esc = html.escape
    rows = []
    if meta.get("partial"):
        rows.append(f"<div class='banner bad'>Partial telemetry: the run stopped early ({esc(str(meta.get('stopped', 'killed')))}).</div>")
    if meta.get("nonphysical_inertia"):
        rows.append("<div class='banner warn'>Non-physical inertia: the principal moments break the triangle inequality "
                    "I<sub>a</sub> + I<sub>b</sub> &ge; I<sub>c</sub> (a textbook case, allowed explicitly).</div>")
    J = np.asarray(meta.get("inertia_kg_m2", np.eye(3)), dtype=float)
    params = [
        ("Description", esc(meta.get("description", ""))),
        ("Inertia [kg m²]", esc(np.array2string(J, precision=6))),
        ("Principal moments [kg m²]", esc(np.array2string(np.linalg.eigvalsh(J), precision=6))),
        ("Initial q_IB / ω [rad/s]", esc(f"{np.round(meta.get('q0', []), 6).tolist()} / {np.round(meta.get('omega0_rad_s', []), 6).tolist()}")),
        ("Method, max step [s], telemetry step [s]",
         esc(f"{_method_label(meta)}, {meta.get('max_step_s')}, {meta.get('telemetry_dt_s')}")),
        ("Seed", esc(str(meta.get("seed")))),
        ("Simulated time [s]", esc(f"{tel.df.index[-1] if len(tel.df) else 0:.6g} of {meta.get('duration_s')}")),
        ("Wall time [s], real-time factor", esc(f"{meta.get('wall_s', float('nan')):.3f}, {meta.get('realtime_factor_achieved') or float('nan'):.4g}")),
        ("Components", esc(", ".join(f"{c['name']} ({c['type']})" for c in meta.get("components", [])) or "none")),
        ("Environment", esc(str(meta.get("environment")) if meta.get("environment") else "none")),
        ("Versions", esc(", ".join(f"{k} {v}" for k, v in meta.get("versions", {}).items()))),
    ]
    table = "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in params)
    crit = ""
    if criteria:
        lines = "".join(
            f"<tr class='{'pass' if ok else 'fail'}'><td>{'PASS' if ok else 'FAIL'}</td><td>{esc(str(label))}</td>"
            f"<td>{esc(f'{value:.4g}' if isinstance(value, (int, float)) else str(value))}</td><td>{esc(str(bound))}</td></tr>"
            for label, value, ok, bound in criteria)
        crit = f"<h3>Success criteria</h3><table class='criteria'><tr><th></th><th>criterion</th><th>measured</th><th>bound</th></tr>{lines}</table>"
    return "".join(rows) + f"<table class='params'>{table}</table>{crit}"


def _grid_mesh(points: np.ndarray):
    """Triangles of a (rows, cols, 3) grid as flat arrays for Mesh3d (compact in the page)."""
    rows, cols = points.shape[:2]
    k = np.arange(rows * cols).reshape(rows, cols)
    a, b, c, d = k[:-1, :-1].ravel(), k[:-1, 1:].ravel(), k[1:, :-1].ravel(), k[1:, 1:].ravel()
    i = np.concatenate([a, b]).astype(np.int32)
    j = np.concatenate([b, d]).astype(np.int32)
    kk = np.concatenate([c, c]).astype(np.int32)
    flat = points.reshape(-1, 3).astype(np.float32)
    return flat[:, 0], flat[:, 1], flat[:, 2], i, j, kk


def _ellipsoid_figure(df, J, moments, R_BP, H_I):
    """The body as its equivalent uniform ellipsoid, with H and ω, animated (seed 000, sec. 5)."""
    import plotly.graph_objects as go

    a = np.sqrt(np.maximum(np.array([moments[1] + moments[2] - moments[0], moments[0] + moments[2] - moments[1],
                                     moments[0] + moments[1] - moments[2]]), 1e-12 * moments.max()))
    a = a / a.max()
    u, v = np.meshgrid(np.linspace(0, 2 * np.pi, 24), np.linspace(0, np.pi, 12))
    pts = np.stack([a[0] * np.cos(u) * np.sin(v), a[1] * np.sin(u) * np.sin(v), a[2] * np.cos(v)], axis=-1) @ R_BP.T
    picks = np.unique(np.linspace(0, len(df) - 1, min(ANIMATION_FRAMES, len(df))).astype(int))
    q = df[Q].to_numpy()[picks]
    w_B = df[W].to_numpy()[picks]
    R = rotations.quat_to_dcm(q)
    h = H_I[0] / (np.linalg.norm(H_I[0]) or 1.0) * 1.4

    def traces(k, first=False):
        x, y, z, i, j, kk = _grid_mesh(pts @ R[k].T)
        w_I = R[k] @ w_B[k]
        w_I = w_I / (np.linalg.norm(w_I) or 1.0) * 1.4
        # frames restyle only what they give: the triangles stay from the first frame
        mesh = (go.Mesh3d(x=x, y=y, z=z, i=i, j=j, k=kk, opacity=0.7, color="steelblue", name="body") if first
                else go.Mesh3d(x=x, y=y, z=z))
        return [
            mesh,
            go.Scatter3d(x=np.float32([0, h[0]]), y=np.float32([0, h[1]]), z=np.float32([0, h[2]]), mode="lines",
                         line=dict(width=6, color="red"), name="H"),
            go.Scatter3d(x=np.float32([0, w_I[0]]), y=np.float32([0, w_I[1]]), z=np.float32([0, w_I[2]]), mode="lines",
                         line=dict(width=6, color="green"), name="ω"),
        ]

    t = df.index.to_numpy()[picks]
    fig = go.Figure(data=traces(0, first=True), frames=[go.Frame(data=traces(k), name=f"{t[k]:.4g}") for k in range(len(picks))])
    fig.update_layout(
        title="3D attitude: equivalent inertia ellipsoid, H (red) and ω (green), inertial axes", height=520,
        scene=dict(xaxis=dict(range=[-1.5, 1.5]), yaxis=dict(range=[-1.5, 1.5]), zaxis=dict(range=[-1.5, 1.5]), aspectmode="cube"),
        sliders=[dict(steps=[dict(method="animate", label=f.name, args=[[f.name], dict(mode="immediate", frame=dict(duration=0, redraw=True))])
                             for f in fig.frames], currentvalue=dict(prefix="t [s] = "))],
        updatemenus=[dict(type="buttons", buttons=[dict(label="Play", method="animate", args=[None, dict(frame=dict(duration=100, redraw=True))])])],
    )
    return fig


def _polhode_figure(H_B, moments, R_BP):
    import plotly.graph_objects as go

    n = H_B @ R_BP  # principal axes
    length = np.linalg.norm(n, axis=1, keepdims=True)
    n = np.where(length > 0, n / np.where(length > 0, length, 1.0), np.nan)
    u, v = np.meshgrid(np.linspace(0, 2 * np.pi, 60), np.linspace(0, np.pi, 30))
    sphere = np.stack([np.cos(u) * np.sin(v), np.sin(u) * np.sin(v), np.cos(v)], axis=-1)
    energy = np.sum(sphere**2 / moments, axis=-1)
    x, y, z, i, j, k3 = _grid_mesh(sphere)
    fig = go.Figure(go.Mesh3d(x=x, y=y, z=z, i=i, j=j, k=k3, intensity=energy.ravel().astype(np.float32), colorscale="Viridis",
                              opacity=0.5, showscale=False, name="energy on the sphere"))
    # separatrices: planes through the intermediate axis, n_l = ±k n_s
    s_idx, m_idx, l_idx = 0, 1, 2
    k = math.sqrt((1 / moments[s_idx] - 1 / moments[m_idx]) / (1 / moments[m_idx] - 1 / moments[l_idx])) if moments[m_idx] > moments[s_idx] and moments[l_idx] > moments[m_idx] else None
    if k is not None:
        phi = np.linspace(0, 2 * np.pi, 200)
        for sign in (1, -1):
            d = np.zeros((200, 3))
            norm = math.sqrt(1 + k * k)
            d[:, s_idx] = np.cos(phi) / norm
            d[:, l_idx] = sign * k * np.cos(phi) / norm
            d[:, m_idx] = np.sin(phi)
            d = d.astype(np.float32)
            fig.add_trace(go.Scatter3d(x=d[:, 0], y=d[:, 1], z=d[:, 2], mode="lines", line=dict(color="black", width=3, dash="dash"),
                                       name="separatrix", showlegend=sign == 1))
    step = max(1, len(n) // MAX_POINTS)
    n = n[::step].astype(np.float32)
    fig.add_trace(go.Scatter3d(x=n[:, 0], y=n[:, 1], z=n[:, 2], mode="lines", line=dict(color="red", width=5), name="polhode"))
    fig.update_layout(title="Polhode: H in principal body axes on the momentum sphere (colour: energy level)", height=520,
                      scene=dict(aspectmode="cube", xaxis_title="I_min axis", yaxis_title="I_mid axis", zaxis_title="I_max axis"))
    return fig


def _single_sections(tel, criteria) -> list[tuple[str, str, list]]:
    df, meta = tel.df, tel.meta
    t = df.index.to_numpy()
    sections = [("summary", "Summary", [_summary(tel, criteria)])]
    if len(df) == 0:
        return sections
    sections.append(("rates", "Body rates", [_lines("Body rates ω (body axes)", t, {c: df[c] for c in W}, "rad/s")]))
    euler = np.degrees(rotations.quat_to_euler321(df[Q].to_numpy()))
    sections.append(("attitude", "Attitude", [
        _lines("Attitude quaternion q_IB", t, {c: df[c] for c in Q}, "-"),
        _lines("3-2-1 Euler angles", t, {"yaw": euler[:, 0], "pitch": euler[:, 1], "roll": euler[:, 2]}, "deg"),
    ]))
    if "inertia_kg_m2" in meta:
        J, moments, R_BP = _principal(meta)
        parts = analysis.total_momentum(df, J, meta.get("components", []))
        H_I = parts.inertial
        norm = np.linalg.norm(H_I, axis=1)
        scale = parts.scale
        energy = analysis.kinetic_energy(df, J).to_numpy()
        figs = [
            _lines("Inertial angular momentum H_I (body + wheels)", t, {"H_I_x": H_I[:, 0], "H_I_y": H_I[:, 1], "H_I_z": H_I[:, 2], "|H|": norm}, "N m s"),
            _lines("Conservation check: relative drift (log scale)", t,
                   {"|H_I - H_I(0)| / |H(0)|": np.linalg.norm(H_I - H_I[0], axis=1) / scale,
                    "| |H| - |H(0)| | / |H(0)|": np.abs(norm - norm[0]) / scale,
                    "|T - T(0)| / max T": np.abs(energy - energy[0]) / max(np.abs(energy).max(), analysis.SCALE_FLOOR)},
                   "relative", log_y=True),
            _lines("Rotational kinetic energy", t, {"T_rot": energy}, "J"),
        ]
        sections.append(("momentum", "Angular momentum and energy", figs))
        nutation = np.degrees(analysis.nutation_angle(df, J).to_numpy())
        series = {"nutation": nutation}
        if np.isclose(moments[0], moments[1], rtol=1e-9) or np.isclose(moments[1], moments[2], rtol=1e-9):
            series["analytic (symmetric top: constant)"] = np.full_like(nutation, nutation[0])
        sections.append(("nutation", "Nutation", [_lines("Angle between the major principal axis and H", t, series, "deg")]))
        spin = analysis.classify_spin(moments, R_BP.T @ np.asarray(meta.get("omega0_rad_s", df[W].iloc[0])))
        text = (f"<p class='classification'>Spin: about the <b>{spin['axis']}</b> axis — <b>{'stable' if spin['stable'] else 'unstable'}</b>"
                f" (torque-free, initial state; the polhode encircles the {spin['polhode_encircles']} axis). Growth rate of a small perturbation about the intermediate axis: "
                f"{spin['growth_rate_rad_s']:.4g} rad/s (e-folding time {1 / spin['growth_rate_rad_s'] if spin['growth_rate_rad_s'] else float('inf'):.4g} s).</p>")
        sections.append(("stability", "Axis stability", [text, _polhode_figure(parts.body + parts.wheels, moments, R_BP)]))
        sections.append(("attitude3d", "3D attitude", [_ellipsoid_figure(df, J, moments, R_BP, H_I)]))
    sections += _component_sections(tel)
    return sections


def _component_sections(tel) -> list:
    df, meta = tel.df, tel.meta
    t = df.index.to_numpy()
    events = tel.events
    shapes = []
    if len(events) and "kind" in events:
        for actuator in set(events.get("actuator", [])) - {None}:
            mine = events[(events.get("actuator") == actuator)]
            starts = mine[mine["kind"] == "saturation"]["t"].to_numpy()
            ends = mine[mine["kind"] == "saturation_end"]["t"].to_numpy()
            for start in starts:
                later = ends[ends >= start]
                shapes.append(dict(type="rect", xref="x", yref="paper", x0=start, x1=later[0] if len(later) else t[-1],
                                   y0=0, y1=1, fillcolor="orange", opacity=0.2, line_width=0))
    figs = []
    for component in meta.get("components", []):
        name = component["name"]
        cols = [c for c in df.columns if c.startswith(name + "_") and "_true_" not in c]
        if not cols or component["type"] in ("Gyro", "Magnetometer", "SunSensor", "StarTracker"):
            continue
        figs.append(_lines(f"{name} ({component['type']}): commands and state (orange: saturated)", t, {c: df[c] for c in cols}, "SI", shapes=shapes))
    sensor_figs = []
    for component in meta.get("components", []):
        name = component["name"]
        truth = [c for c in df.columns if c.startswith(name + "_true_")]
        if truth:
            series = {}
            for c in truth:
                measured = c.replace("_true_", "_")
                series[measured] = df[measured]
                series[c] = df[c]
            sensor_figs.append(_lines(f"{name} ({component['type']}): measurement against truth", t, series, "SI"))
    sections = []
    if figs:
        sections.append(("actuators", "Actuators", figs))
    if sensor_figs:
        sections.append(("sensors", "Sensors", sensor_figs))
    if "B_I_x" in df:
        eclipse = _intervals(t, df["lit"].to_numpy() == 0, "grey") if "lit" in df else []
        env_figs = [_lines("Geomagnetic field, ECI (grey: eclipse)", t, {c: df[c] for c in ("B_I_x", "B_I_y", "B_I_z")}, "T", shapes=eclipse)]
        torques = {c: df[c] for c in df.columns if c.startswith("tau_") and c.split("_")[1] in ("gg", "aero", "srp", "res")}
        if torques:
            env_figs.append(_lines("Disturbance torques (body axes)", t, torques, "N m", shapes=eclipse))
        sections.append(("environment", "Environment and disturbances", env_figs))
    return sections


def _comparison_sections(runs: Sequence) -> list:
    import pandas as pd

    esc = html.escape
    names = [r.meta.get("name", f"run {k}") for k, r in enumerate(runs)]
    base = runs[0].df
    rows = []
    for name, run in zip(names, runs):
        df = run.df
        common = np.intersect1d(base.index.to_numpy(), df.index.to_numpy())
        dq = rotations.quat_angle_between(base.loc[common, Q].to_numpy(), df.loc[common, Q].to_numpy()) if len(common) else np.array([np.nan])
        dw = np.abs(base.loc[common, W].to_numpy() - df.loc[common, W].to_numpy()).max() if len(common) else float("nan")
        rows.append(f"<tr><td>{esc(name)}</td><td>{esc(str(run.meta.get('method')))}</td><td>{run.meta.get('max_step_s')}</td>"
                    f"<td>{run.meta.get('wall_s', float('nan')):.3f}</td><td>{np.nanmax(dq):.3e}</td><td>{dw:.3e}</td>"
                    f"<td>{'partial' if run.partial else 'complete'}</td></tr>")
    table = ("<table class='params'><tr><th>run</th><th>method</th><th>max step [s]</th><th>wall [s]</th>"
             f"<th>max attitude difference to {esc(names[0])} [rad]</th><th>max rate difference [rad/s]</th><th>status</th></tr>"
             + "".join(rows) + "</table>")
    import plotly.graph_objects as go

    figs = []
    differences = {}
    for name, run in zip(names[1:], runs[1:]):
        common = np.intersect1d(base.index.to_numpy(), run.df.index.to_numpy())
        if len(common):
            differences[name] = pd.Series(
                rotations.quat_angle_between(base.loc[common, Q].to_numpy(), run.df.loc[common, Q].to_numpy()), index=common)
    if differences:
        fig = go.Figure()
        for name, series in differences.items():
            x, y = _decimate(series.index.to_numpy(), series.to_numpy())
            fig.add_trace(go.Scatter(x=x, y=np.where(y > 0, y, np.nan), mode="lines", name=name))
        fig.update_layout(title=f"Attitude difference to {names[0]} (log scale)", xaxis_title="t [s]", yaxis_title="rad",
                          yaxis_type="log", height=420)
        figs.append(fig)
    for column_set, title, unit in ((W, "Body rates", "rad/s"), (Q, "Attitude quaternion", "-")):
        fig = go.Figure()
        for name, run in zip(names, runs):
            t = run.df.index.to_numpy()
            for c in column_set:
                x, y = _decimate(t, run.df[c].to_numpy())
                fig.add_trace(go.Scatter(x=x, y=y, mode="lines", name=f"{name}: {c}"))
        fig.update_layout(title=f"{title}, all runs", xaxis_title="t [s]", yaxis_title=unit, height=420)
        figs.append(fig)
    return [("comparison", "Comparison", [table] + figs)]


_CSS = """
body{font-family:system-ui,sans-serif;margin:0 auto;max-width:1200px;padding:1em;color:#222}
h1{margin-bottom:0.2em} nav a{margin-right:1em} section{margin-top:2em;border-top:1px solid #ddd}
table{border-collapse:collapse;margin:0.5em 0} th,td{border:1px solid #ccc;padding:4px 8px;text-align:left;vertical-align:top}
tr.pass td:first-child{color:#0a0;font-weight:bold} tr.fail td:first-child{color:#c00;font-weight:bold}
.banner{padding:0.6em 1em;margin:0.5em 0;border-radius:4px;font-weight:bold} .bad{background:#fdd} .warn{background:#ffd}
"""


def report(telemetry, path=None, criteria=None) -> Path:
    """Write the HTML report of one run, or a comparison of several.

    Parameters
    ----------
    telemetry : Telemetry or sequence of Telemetry
        One run, or several for a comparison page.
    path : path, optional
        Output file (default ``<run directory>/report.html``).
    criteria : sequence of (label, value, ok, bound), optional
        Success criteria; defaults to ``telemetry.meta["criteria"]``.

    Returns
    -------
    Path
        The file written.
    """
    runs = list(telemetry) if isinstance(telemetry, (list, tuple)) else [telemetry]
    if not runs:
        raise InputError("telemetry", "must hold at least one run")
    for run in runs:
        if not hasattr(run, "df") or not hasattr(run, "meta"):
            raise InputError("telemetry", "must be attsim Telemetry (from Mission.run or attsim.load)", f"got {type(run).__name__}")
    first = runs[0]
    if path is None:
        if first.path is None:
            raise InputError("path", "must be given for telemetry that has no run directory")
        path = Path(first.path) / "report.html"
    path = Path(path)
    if len(runs) == 1:
        title = first.meta.get("name", "attsim run")
        sections = _single_sections(first, criteria if criteria is not None else first.meta.get("criteria"))
    else:
        title = "Comparison: " + ", ".join(str(r.meta.get("name", "?")) for r in runs)
        sections = _comparison_sections(runs)
    body, nav, first_plot = [], [], True
    for anchor, heading, items in sections:
        nav.append(f"<a href='#{anchor}'>{html.escape(heading)}</a>")
        parts = []
        for item in items:
            if isinstance(item, str):
                parts.append(item)
            else:
                parts.append(item.to_html(full_html=False, include_plotlyjs=first_plot, auto_play=False))
                first_plot = False
        body.append(f"<section id='{anchor}' class='report-section'><h2>{html.escape(heading)}</h2>{''.join(parts)}</section>")
    page = (f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(str(title))}</title><style>{_CSS}</style></head>"
            f"<body><h1>{html.escape(str(title))}</h1><nav>{''.join(nav)}</nav>{''.join(body)}"
            f"<p><small>attsim report; full-rate telemetry in telemetry.parquet beside this file.</small></p></body></html>")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(page, encoding="utf-8")
    return path
