"""Pointing, rates and attitude: what an ADCS engineer looks at first.

The pointing error comes from the telemetry when the run recorded it
(``att_err_deg``, ``att_err_x/y/z`` in rad, the reference ``q_ref_w..z`` =
q_IR); otherwise from a controller's fixed target quaternion recorded in
the run's metadata (``target_q``), as the angle of ``q_IR* ⊗ q_IB``.
"""

from __future__ import annotations

import html
from typing import NamedTuple

import numpy as np

from .. import rotations
from ..telemetry.schema import QUATERNION_COLUMNS, RATE_COLUMNS
from .page import Section
from .runinfo import ANGLE_TO_DEG, RATE_TO_DEG_S, declared_on, requirement
from .style import AXIS_COLOURS, Panel, Plot, fmt, limit_lines, line, requirement_marks, stacked

REFERENCE_COLUMNS = ("q_ref_w", "q_ref_x", "q_ref_y", "q_ref_z")
ERROR_COLUMNS = ("att_err_x", "att_err_y", "att_err_z")


class PointingError(NamedTuple):
    """The attitude error of a run: total (deg), per body axis (deg, small-angle), the reference q_IR (or None)."""

    total_deg: np.ndarray
    axes_deg: np.ndarray | None
    q_ref: np.ndarray | None
    source: str


def reference(df, meta) -> tuple[np.ndarray | None, str]:
    """The reference attitude q_IR per row and where it came from, or (None, "")."""
    if all(c in df for c in REFERENCE_COLUMNS):
        return df[list(REFERENCE_COLUMNS)].to_numpy(), "the recorded reference (q_ref)"
    for component in meta.get("components") or []:
        if component.get("target_q") is not None:
            q = np.asarray(component["target_q"], dtype=float)
            return np.broadcast_to(q, (len(df), 4)), f"{component['name']}'s target attitude"
    return None, ""


def rotation_vector(two_vec: np.ndarray) -> np.ndarray:
    """The rotation vector θ n (rad) from the recorded ``att_err_x/y/z`` = 2 vec(q_RB) = 2 sin(θ/2) n.

    The recorded error is the small-angle one (scalar part kept >= 0); θ = 2 asin(|v|/2) makes it exact at any
    angle, so the per-axis error agrees with the total angle drawn above it (a 164 deg error is not 113 deg).
    NaN rows stay NaN.
    """
    two_vec = np.asarray(two_vec, dtype=float)
    norm = np.linalg.norm(two_vec, axis=-1, keepdims=True)
    with np.errstate(invalid="ignore"):
        angle = 2.0 * np.arcsin(np.clip(0.5 * norm, 0.0, 1.0))
        scale = np.where(norm > 0.0, angle / np.where(norm > 0.0, norm, 1.0), 1.0)
    return two_vec * scale


def pointing_error(df, meta) -> PointingError | None:
    """The run's pointing error, or None when it has neither a recorded error nor a reference."""
    q_ref, source = reference(df, meta)
    if "att_err_deg" in df:
        axes = None
        if all(c in df for c in ERROR_COLUMNS):
            axes = np.degrees(rotation_vector(df[list(ERROR_COLUMNS)].to_numpy()))
        return PointingError(df["att_err_deg"].to_numpy(), axes, q_ref, "the recorded attitude error (att_err)")
    if q_ref is None:
        return None
    q = df[list(QUATERNION_COLUMNS)].to_numpy()
    error = rotations.quat_canonical(rotations.quat_multiply(rotations.quat_conjugate(q_ref), q))  # q_RB
    axes = np.degrees(rotations.quat_to_rotvec(error))
    return PointingError(np.degrees(rotations.quat_angle_between(q, q_ref)), axes, q_ref, source)


TOTAL_COLOUR = "#222222"
ESTIMATOR_WORDS = ("mekf", "estimat", "knowledge", "sigma", "filter")


def _requirement_deg(criteria, meta=None):
    """The pointing requirement in deg: a criterion naming pointing first, then an attitude error, then an error to a
    frame or target; never an estimator's (its name, or words of estimation, in the label)."""
    estimators = tuple(str(c["name"]).lower() for c in (meta or {}).get("components") or []
                       if c.get("type") in ("MEKF", "Estimator"))
    found = requirement(criteria, ("pointing", "attitude error", "error to"), exclude=ESTIMATOR_WORDS + estimators,
                        units=ANGLE_TO_DEG)
    if found is None:
        return None
    factor = ANGLE_TO_DEG.get(found.unit)
    return None if factor is None else (found.value * factor, found)


def declared_marks(criteria, quantity: str, units: dict, panel_unit: str):
    """The declared requirements on ``quantity`` (traces, shapes, a sentence), in the panel's unit."""
    rows = [row for row in declared_on(criteria, quantity)
            if row.declared.get("unit") in units or row.declared.get("statistic") == "settle"]
    traces, shapes = requirement_marks(rows, units, panel_unit)
    if not traces:
        return [], [], ""
    said = "; ".join(f"{row.label}: {row.declared.get('statistic')} {row.bound} {row.declared.get('window')}"
                     for row in rows)
    return traces, shapes, (f" Requirements (red, drawn only over the window where each applies, shaded; x: where "
                            f"the value was reached): {html.escape(said)}.")


ZOOM_BELOW = 0.3  # windows covering less of the run than this get a plot of their own, zoomed to them


def _window_zoom(t, total_deg, rows, marks, windows) -> Plot | None:
    """The pointing error over the span of the requirements' windows, when they cover little of the run (a pass of
    minutes in a run of hours is a sliver of the whole run's plot)."""
    spans = [(float(a), float(b)) for row in rows for a, b in row.declared.get("intervals") or []]
    if not spans or len(t) < 2:
        return None
    start, stop = min(a for a, _ in spans), max(b for _, b in spans)
    covered = sum(b - a for a, b in spans)
    if covered >= ZOOM_BELOW * (t[-1] - t[0]) or stop <= start:
        return None
    pad = 0.25 * (stop - start)
    keep = (t >= start - pad) & (t <= stop + pad)
    if keep.sum() < 2:
        return None
    trace = line(t[keep], total_deg[keep], "pointing error", 0, log_y=True, color=TOTAL_COLOUR)
    plot = stacked("Pointing error over the requirement windows (zoomed)",
                   [Panel("pointing error [deg]", [trace] + marks, windows, log_y=True, height_px=300)])
    plot.figure["layout"]["xaxis"]["range"] = [max(float(t[0]), start - pad), min(float(t[-1]), stop + pad)]
    return plot


def lines_over_run(criteria, meta, t) -> tuple[list, str]:
    """A requirement read from a criterion's label (a (label, value, ok, bound) tuple): a line across the run."""
    bound = _requirement_deg(criteria, meta)
    if bound is None:
        return [], ""
    deg, found = bound
    shown = f"{fmt(deg)} deg" + (f" ({fmt(found.value)} {found.unit})" if found.unit != "deg" else "")
    trace = limit_lines(t[0], t[-1], deg, f"requirement {shown}", color="#c00", symmetric=False)
    return [trace], (f" Requirement (red line, {html.escape(shown)}): {html.escape(found.label)}; its window is not "
                     "declared, so it is drawn across the run.")


def _closing_error(t, total_deg) -> str:
    """"Final error 0.1 deg, largest over the last tenth of the run 0.3 deg." — or, where no law with a target ran
    at the end (a detumble mode; rows without a reference have no error), what there is instead."""
    finite = np.flatnonzero(np.isfinite(total_deg))
    if finite.size == 0:
        return ("No row has a pointing error: no law with a pointing target ran (a detumble, or modes without "
                "one).")
    last_tenth = total_deg[int(0.9 * len(t)):]
    if finite[-1] == len(t) - 1 and np.isfinite(last_tenth).all():
        return (f"Final error {fmt(float(total_deg[-1]))} deg, largest over the last tenth of the run "
                f"{fmt(float(np.max(last_tenth)))} deg.")
    return (f"Last pointing error {fmt(float(total_deg[finite[-1]]))} deg at t = {fmt(float(t[finite[-1]]), 6)} s "
            f"(rows after it have no pointing target); largest over the run {fmt(float(np.nanmax(total_deg)))} deg.")


def section(tel, criteria, mode_shapes=()) -> Section | None:
    """Total pointing error (log scale, requirement over its window), per-axis error, reference against actual."""
    df = tel.df
    error = pointing_error(df, tel.meta)
    if error is None:
        return None
    t = df.index.to_numpy()
    # dark, not the x axis's blue: the per-axis errors share this figure's legend
    total = [line(t, error.total_deg, "pointing error", 0, log_y=True, color=TOTAL_COLOUR)]
    marks, windows, said = declared_marks(criteria, "att_err_deg", ANGLE_TO_DEG, "deg")
    if not marks:
        marks, said = lines_over_run(criteria, tel.meta, t)
    panels = [Panel("pointing error [deg]", total + marks, list(mode_shapes) + windows, log_y=True)]
    if error.axes_deg is not None:
        panels.append(
            Panel(
                "error per axis [deg]",
                [line(t, error.axes_deg[:, k], f"{a} (body)", color=AXIS_COLOURS[a]) for k, a in enumerate("xyz")],
                windows,
            )
        )
    zoom = _window_zoom(t, error.total_deg, declared_on(criteria, "att_err_deg"), marks, windows)
    items = [
        f"<p class='note'>Pointing error from {error.source}: the angle of q_IR* ⊗ q_IB (reference R, body B); "
        "per axis, its rotation vector in body axes. "
        + _closing_error(t, error.total_deg)
        + said
        + "</p>",
        stacked("Pointing error", panels),
    ]
    if zoom is not None:
        items.append(zoom)
    items.append(attitude_plot(df, error.q_ref))
    return Section("pointing", "Pointing", items)


def attitude_plot(df, q_ref=None) -> Plot:
    """3-2-1 Euler angles of q_IB (and of the reference q_IR, dashed), and the quaternion."""
    t = df.index.to_numpy()
    q = df[list(QUATERNION_COLUMNS)].to_numpy()
    euler = np.degrees(rotations.quat_to_euler321(q))
    names = ("yaw (z)", "pitch (y)", "roll (x)")
    colours = (AXIS_COLOURS["z"], AXIS_COLOURS["y"], AXIS_COLOURS["x"])
    traces = [line(t, euler[:, k], names[k], color=colours[k], group=names[k]) for k in range(3)]
    if q_ref is not None:
        ref = np.degrees(rotations.quat_to_euler321(np.ascontiguousarray(q_ref)))
        traces += [
            line(t, ref[:, k], f"{names[k]} reference", color=colours[k], dash="dash", group=names[k]) for k in range(3)
        ]
    quaternion = [
        line(t, q[:, k], c, 3, color=None if k == 0 else AXIS_COLOURS["xyz"[k - 1]])
        for k, c in enumerate(QUATERNION_COLUMNS)
    ]
    title = "Attitude: 3-2-1 Euler angles of q_IB" + (" against the reference (dashed)" if q_ref is not None else "")
    return stacked(title, [Panel("Euler angle [deg]", traces), Panel("q_IB [-]", quaternion)])


def rates_section(tel, criteria) -> Section:
    """Body rates in deg/s per axis and |ω| on a log scale, with a rate requirement when the criteria give one."""
    df = tel.df
    t = df.index.to_numpy()
    w = np.degrees(df[list(RATE_COLUMNS)].to_numpy())
    norm = np.linalg.norm(w, axis=1)
    magnitude = [line(t, norm, "|ω|", 3, log_y=True)]
    marks, windows, _ = declared_marks(criteria, "rate_deg_s", RATE_TO_DEG_S, "deg/s")
    magnitude += marks
    found = None if marks else requirement(criteria, ("omega", "rate", "|ω|"))
    said = ""
    if found is not None and found.unit in RATE_TO_DEG_S:
        deg_s = found.value * RATE_TO_DEG_S[found.unit]
        # in the axis's unit, the criterion's own in brackets: a legend in rad/s on a deg/s axis misleads
        own = f" ({fmt(found.value)} {found.unit})" if found.unit != "deg/s" else ""
        name = f"requirement {fmt(deg_s)} deg/s"
        magnitude.append(limit_lines(t[0], t[-1], deg_s, name + own if len(name + own) <= 40 else name,
                                     color="#c00", symmetric=False))
        said = (f"<p class='note'>|ω| on a log scale; requirement (red line, {fmt(deg_s)} deg/s"
                + (f" = {fmt(found.value)} {html.escape(found.unit)}" if own else "")
                + f"): {html.escape(found.label)}.</p>")
    plot = stacked(
        "Body rates ω (body axes, relative to inertial space)",
        [
            Panel("ω [deg/s]", [line(t, w[:, k], f"ω_{a}", color=AXIS_COLOURS[a]) for k, a in enumerate("xyz")]),
            Panel("|ω| [deg/s]", magnitude, windows, log_y=True),
        ],
    )
    return Section("rates", "Body rates", ([said] if said else []) + [plot])
