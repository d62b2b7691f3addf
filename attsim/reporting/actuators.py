"""Actuators: one panel per quantity and unit, with the hardware limits and each actuator's own saturation.

Reaction wheels: speed in RPM against ± the speed limit, momentum against ±
the capacity (wheel inertia × speed limit) and the array's momentum against
its envelope along the current direction, motor torque (and the command,
when recorded as ``<wheel>_torque_cmd``, and the friction torque when the
wheel has friction) against ± the torque limit.
Magnetorquers: dipole against its limit (an array's bars each against theirs). Torque schedules and ideal body
torques: the held torque (neither can saturate, so nothing is shaded). Thrusters: an on/off
timeline. Saturation, from the run's events, is shaded in the saturated
actuator's colour, on the panel of the saturated quantity, only where it
saturated. A wheel's motor torque on its limit counts as torque-limited
even without an event: a controller that scales its allocation to the motor
limits (``attsim.allocation.allocate``) commands at most the limit, so the
wheel clips nothing and logs nothing.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from .page import Section
from .runinfo import components
from .style import AXIS_COLOURS, Panel, Plot, fmt, limit_lines, line, shade, short, stacked, style

RPM_PER_RAD_S = 60.0 / (2.0 * np.pi)


def saturation_intervals(events, t_end: float) -> dict:
    """``{(actuator, what): [(start, stop), ...]}`` from the saturation events (open ones end with the run)."""
    found = defaultdict(list)
    if events is None or not len(events) or "actuator" not in events or "kind" not in events:
        return found
    what_column = events["what"] if "what" in events else None
    opened = {}
    for k in range(len(events)):
        kind = events["kind"].iloc[k]
        if kind not in ("saturation", "saturation_end"):
            continue
        key = (str(events["actuator"].iloc[k]), str(what_column.iloc[k]) if what_column is not None else "")
        t = float(events["t"].iloc[k])
        if kind == "saturation":
            opened.setdefault(key, t)
        elif key in opened:
            found[key].append((opened.pop(key), t))
    for key, start in opened.items():
        found[key].append((start, t_end))
    return found


# relative: a command scaled to the limit lands within round-off of it, a command below it stays further away
AT_LIMIT = 1e-9


def at_limit_intervals(t: np.ndarray, values: np.ndarray, limit: float) -> list[tuple[float, float]]:
    """The runs of consecutive rows where ``|values|`` is on ``limit`` (first to last such row, seconds)."""
    at = np.abs(np.asarray(values, dtype=float)) >= limit * (1.0 - AT_LIMIT)
    edges = np.flatnonzero(np.diff(np.concatenate(([0], at.astype(np.int8), [0]))))
    return [(float(t[a]), float(t[b - 1])) for a, b in zip(edges[::2], edges[1::2])]


def _union(spans) -> list[tuple[float, float]]:
    """Overlapping or touching spans merged, in time order."""
    merged = []
    for start, stop in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], stop))
        else:
            merged.append((start, stop))
    return merged


def limited_intervals(tel) -> dict:
    """:func:`saturation_intervals` of the run, with each wheel's motor torque on its limit in the telemetry
    counted as torque saturation (merged with the events' spans)."""
    df = tel.df
    t = df.index.to_numpy()
    found = saturation_intervals(tel.events, float(t[-1]) if len(t) else 0.0)
    for wheel in components(tel.meta, {"ReactionWheel"}):
        column, limit = f"{wheel['name']}_torque", wheel.get("max_torque_Nm")
        if column in df and isinstance(limit, (int, float)) and limit > 0:
            spans = at_limit_intervals(t, df[column].to_numpy(), float(limit))
            if spans:
                key = (wheel["name"], "torque")
                found[key] = _union(found.get(key, []) + spans)
    return found


def _envelope(axes: np.ndarray, capacity: np.ndarray, direction: np.ndarray) -> np.ndarray:
    """The largest momentum the array holds along each unit ``direction`` (n, 3), shared by the pseudo-inverse.

    With the minimum-norm distribution ``h = A⁺ d s``, the first wheel to reach its capacity sets ``s``.
    """
    share = direction @ np.linalg.pinv(axes).T  # (n, wheels): each wheel's part of a unit momentum
    with np.errstate(divide="ignore"):
        return np.min(np.where(np.abs(share) > 0, capacity / np.abs(share), np.inf), axis=1)


def _fibonacci_directions(count: int = 2000) -> np.ndarray:
    """``count`` unit vectors spread evenly over the sphere (the golden-angle spiral)."""
    k = np.arange(count) + 0.5
    z = 1.0 - 2.0 * k / count
    phi = np.pi * (1.0 + 5.0**0.5) * k
    r = np.sqrt(1.0 - z * z)
    return np.stack([r * np.cos(phi), r * np.sin(phi), z], axis=1)


def _fit_to_data(panel: Panel, ratio: float = 20.0) -> Panel:
    """Scale the panel to its data when its limit lines are more than ``ratio`` times larger.

    A motor torque of 1e-6 N m drawn against a 1e-3 N m limit is a flat line; the limit stays in the legend,
    marked off scale (the data stay below 1/``ratio`` of it).
    """
    data = [tr for tr in panel.traces if not tr.get("meta", {}).get("limit")]
    limits = [tr for tr in panel.traces if tr.get("meta", {}).get("limit")]
    values = [np.asarray(tr["y"], dtype=float) for tr in data]
    values = np.concatenate([v[np.isfinite(v)] for v in values]) if values else np.zeros(0)
    if not limits or not values.size:
        return panel
    peak = float(np.max(np.abs(values)))
    smallest = min(abs(float(y)) for tr in limits for y in tr["y"] if y is not None)
    if peak == 0.0 or smallest <= ratio * peak:
        return panel
    for tr in limits:
        tr["name"] += " (off scale)"
    low, high = float(values.min()), float(values.max())
    pad = 0.08 * (high - low) if high > low else 0.5 * peak
    return panel._replace(y_range=(low - pad, high + pad))


def _wheels_plot(df, wheels, saturated, t) -> Plot:
    speed, momentum, torque = [], [], []
    speed_shapes, torque_shapes = [], []
    limits = {}
    visible_s = (float(t[-1]) - float(t[0])) / 400.0  # a saturation of one instant still shows
    commanded = any(f"{w['name']}_torque_cmd" in df for w in wheels)
    for k, wheel in enumerate(wheels):
        name, colour = wheel["name"], style(k)["color"]
        speed.append(line(t, df[f"{name}_speed"].to_numpy() * RPM_PER_RAD_S, name, k, group=name))
        momentum.append(line(t, df[f"{name}_h"].to_numpy(), name, k, group=name))
        torque.append(line(t, df[f"{name}_torque"].to_numpy(), name, k, group=name))
        if f"{name}_torque_cmd" in df:
            torque.append(line(t, df[f"{name}_torque_cmd"].to_numpy(), f"{name} commanded", k, dash="dot",
                               group=name))
        if f"{name}_friction" in df:  # the body feels the reaction of motor plus friction
            torque.append(line(t, df[f"{name}_friction"].to_numpy(), f"{name} friction", k, dash="dash", group=name))
        speed_shapes += shade(saturated.get((name, "speed"), []), colour, f"{name} at its speed limit",
                              min_width_s=visible_s)
        torque_shapes += shade(saturated.get((name, "torque"), []), colour, f"{name} torque-limited",
                               min_width_s=visible_s)
        for key in ("max_speed_rad_s", "max_torque_Nm"):
            if wheel.get(key) is not None:
                limits.setdefault((key, float(wheel[key])), []).append(name)
        if wheel.get("max_speed_rad_s") is not None and wheel.get("inertia_kg_m2") is not None:
            limits.setdefault(("capacity", float(wheel["max_speed_rad_s"]) * float(wheel["inertia_kg_m2"])), []).append(
                name
            )
    t0, t1 = float(t[0]), float(t[-1])
    for (key, value), names in limits.items():
        who = "" if len(names) == len(wheels) else f" ({', '.join(names)})"  # a limit every wheel shares
        if key == "max_speed_rad_s":
            speed.append(
                limit_lines(t0, t1, value * RPM_PER_RAD_S, f"speed limit ±{fmt(value * RPM_PER_RAD_S)} RPM{who}")
            )
        elif key == "max_torque_Nm":
            torque.append(limit_lines(t0, t1, value, f"torque limit ±{fmt(value)} N m{who}"))
        else:
            momentum.append(limit_lines(t0, t1, value, f"capacity ±{fmt(value)} N m s{who}"))
    panels = [_fit_to_data(Panel("wheel speed [RPM]", speed, speed_shapes)),
              _fit_to_data(Panel("wheel momentum h [N m s]", momentum))]
    if all(w.get("axis") is not None for w in wheels):
        panels.append(_array_panel(df, wheels, limits, t))
    panels.append(_fit_to_data(Panel("motor torque [N m]", torque, torque_shapes)))
    what = "solid: delivered, dotted: commanded; " if commanded else ""
    return stacked(f"Reaction wheels ({what}shaded: where that wheel was torque-limited or speed-saturated)", panels)


def _array_panel(df, wheels, limits, t) -> Panel:
    """The array's momentum |Σ h_i a_i| against the most it holds along that direction and in every direction."""
    axes = np.array([w["axis"] for w in wheels], dtype=float).T  # (3, wheels)
    h_B = df[[f"{w['name']}_h" for w in wheels]].to_numpy() @ axes.T
    norm = np.linalg.norm(h_B, axis=1)
    array = [line(t, norm, "|Σ h_i a_i| (array)", len(wheels))]
    if all(
        ("capacity", float(w["max_speed_rad_s"]) * float(w.get("inertia_kg_m2") or np.nan)) in limits
        for w in wheels
    ):
        capacity = np.array([float(w["max_speed_rad_s"]) * float(w["inertia_kg_m2"]) for w in wheels])
        everywhere = float(np.min(_envelope(axes, capacity, _fibonacci_directions())))
        # while the array holds next to no momentum its direction is noise: the envelope holds the one along the
        # last direction that meant something (the first, before it), so the line runs over the whole run
        meaningful = norm > 0.02 * everywhere
        if meaningful.any():
            last = np.maximum.accumulate(np.where(meaningful, np.arange(len(norm)), -1))
            last = np.where(last < 0, int(np.argmax(meaningful)), last)
            direction = h_B[last] / norm[last][:, None]
            array.append(line(t, _envelope(axes, capacity, direction), "envelope along h (array)",
                              len(wheels) + 1, dash="dash"))
        if everywhere > 0:
            array.append(limit_lines(float(t[0]), float(t[-1]), everywhere,
                                     f"held in any direction {fmt(everywhere)} N m s", symmetric=False))
    return Panel("array momentum [N m s]", array)


def _magnetorquer_plot(df, component, saturated, t) -> Plot:
    name = component["name"]
    shapes = shade(saturated.get((name, "dipole"), []), style(3)["color"], f"{name} saturated",
                   min_width_s=(float(t[-1]) - float(t[0])) / 400.0)
    traces = [line(t, df[f"{name}_m_{a}"].to_numpy(), f"m_{a}", color=AXIS_COLOURS[a], group=a) for a in "xyz"]
    if component.get("bar_axes") is not None:  # an array: the limits are the bars', drawn on the bars' panel
        return stacked(f"{name} (Magnetorquer, {len(component['bar_axes'])} bars): applied dipole (shaded: saturated)",
                       [Panel("body dipole [A m²]", traces, shapes), _bars_panel(df, component, shapes, t)])
    limit = np.broadcast_to(np.asarray(component.get("dipole_max_Am2", np.nan), dtype=float), (3,))
    for k, a in enumerate("xyz"):
        if np.isfinite(limit[k]) and (k == 0 or limit[k] != limit[0]):
            traces.append(
                limit_lines(
                    float(t[0]),
                    float(t[-1]),
                    float(limit[k]),
                    f"limit ±{fmt(float(limit[k]))} A m²" + ("" if np.all(limit == limit[0]) else f" ({a})"),
                )
            )
    return stacked(
        f"{name} (Magnetorquer): applied dipole (shaded: saturated)",
        [_fit_to_data(Panel("dipole [A m²]", traces, shapes))],
    )


def _bars_panel(df, component, shapes, t) -> Panel:
    """Each bar's dipole along its axis against its limit (one line per distinct limit)."""
    name, count = component["name"], len(component["bar_axes"])
    limits = np.broadcast_to(np.asarray(component.get("dipole_max_Am2", np.nan), dtype=float).ravel(), (count,))
    traces = [line(t, df[f"{name}_bar{k + 1}"].to_numpy(), f"bar {k + 1}", k) for k in range(count)
              if f"{name}_bar{k + 1}" in df]
    for value in sorted({float(v) for v in limits if np.isfinite(v)}):
        bars = [str(k + 1) for k in range(count) if limits[k] == value]
        traces.append(limit_lines(float(t[0]), float(t[-1]), value, f"limit ±{fmt(value)} A m²" + (
            "" if len(bars) == count else f" (bar {', '.join(bars)})")))
    return _fit_to_data(Panel("bar dipoles [A m²]", traces, shapes))


def _schedule_plot(df, component, t) -> Plot:
    name = component["name"]
    traces = [line(t, df[f"{name}_tau_{a}"].to_numpy(), f"τ_{a}", color=AXIS_COLOURS[a]) for a in "xyz"]
    return stacked(
        f"{name} ({component['type']}): held torque, body axes (no limit to saturate)",
        [Panel("torque [N m]", traces)],
    )


def _thrusters_plot(df, thrusters, t) -> Plot:
    traces = []
    for k, thruster in enumerate(thrusters):
        on = df[f"{thruster['name']}_on"].to_numpy()
        trace = line(t, k + 0.8 * (on > 0.5), thruster["name"], k, shape="hv")
        trace["line"]["width"] = 2
        traces.append(trace)
    plot = stacked(
        "Thrusters: on/off timeline (raised: firing)",
        [Panel("thruster", traces, height_px=max(120, 40 * len(thrusters)))],
    )
    axis = plot.figure["layout"]["yaxis"]
    axis.update(
        tickmode="array",
        tickvals=[k + 0.4 for k in range(len(thrusters))],
        ticktext=[short(th["name"]) for th in thrusters],
        range=[-0.3, len(thrusters) + 0.1],
    )
    return plot


def section(tel) -> Section | None:
    """The actuator section, or None for a run without actuators in its telemetry."""
    df, meta = tel.df, tel.meta
    t = df.index.to_numpy()
    if not len(t):
        return None
    saturated = limited_intervals(tel)
    items = []
    wheels = [w for w in components(meta, {"ReactionWheel"}) if f"{w['name']}_speed" in df]
    if wheels:
        items.append(_wheels_plot(df, wheels, saturated, t))
    for component in components(meta, {"Magnetorquer"}):
        if f"{component['name']}_m_x" in df:
            items.append(_magnetorquer_plot(df, component, saturated, t))
    for component in components(meta, {"TorqueSchedule", "BodyTorque"}):
        if f"{component['name']}_tau_x" in df:
            items.append(_schedule_plot(df, component, t))
    thrusters = [c for c in components(meta, {"Thruster"}) if f"{c['name']}_on" in df]
    if thrusters:
        items.append(_thrusters_plot(df, thrusters, t))
    return Section("actuators", "Actuators", items) if items else None
