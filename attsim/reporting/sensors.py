"""Sensors as their error against the truth recorded at the same instant, in each sensor's natural unit.

Gyro: deg/h per axis. Star tracker: arcsec per body axis (the rotation
vector of q_true* ⊗ q_measured) and the total angle. Magnetometer: nT per
axis. Sun sensor: the measured minus the true reading per face. Rows
before a sensor's first sample (NaN) are left out; a sample without output
(NaN, ``<sensor>_valid`` = 0: a blinded star tracker, a dropout) is a gap in
the lines, and its intervals are shaded.
"""

from __future__ import annotations

import html

import numpy as np

from .. import rotations
from .page import Section
from .runinfo import SENSOR_TYPES, components
from .style import AXIS_COLOURS, Panel, Plot, intervals_where, line, shade, stacked

ARCSEC_PER_RAD = 180.0 / np.pi * 3600.0
DEG_H_PER_RAD_S = 180.0 / np.pi * 3600.0


def _no_output(df, name, t) -> list:
    """Shaded intervals where the sensor gave no output (it writes ``<name>_valid`` when it can lose it)."""
    if f"{name}_valid" not in df:
        return []
    return shade(intervals_where(t, df[f"{name}_valid"].to_numpy() == 0.0), "#999", f"{name}: no output")


def _vector_error(df, name, t, scale, unit, title) -> Plot:
    traces = [
        line(
            t,
            (df[f"{name}_{a}"].to_numpy() - df[f"{name}_true_{a}"].to_numpy()) * scale,
            f"{a} error",
            color=AXIS_COLOURS[a],
        )
        for a in "xyz"
    ]
    return stacked(title, [Panel(f"error [{unit}]", traces, _no_output(df, name, t))])


def _tracker_error(df, name, t) -> Plot:
    measured = df[[f"{name}_{c}" for c in ("qw", "qx", "qy", "qz")]].to_numpy()
    truth = df[[f"{name}_true_{c}" for c in ("qw", "qx", "qy", "qz")]].to_numpy()
    valid = np.all(np.isfinite(measured) & np.isfinite(truth), axis=1) & (np.linalg.norm(measured, axis=1) > 0)
    error = np.full((len(t), 3), np.nan)
    if valid.any():
        q_err = rotations.quat_canonical(
            rotations.quat_multiply(rotations.quat_conjugate(truth[valid]), measured[valid])
        )
        error[valid] = rotations.quat_to_rotvec(q_err) * ARCSEC_PER_RAD
    traces = [line(t, error[:, k], f"{a} (body)", color=AXIS_COLOURS[a]) for k, a in enumerate("xyz")]
    total = [line(t, np.linalg.norm(error, axis=1), "total angle", 3)]
    return stacked(
        f"{name} (StarTracker): attitude error of the measurement, q_true* ⊗ q_measured",
        [Panel("error per axis [arcsec]", traces, _no_output(df, name, t)), Panel("total error [arcsec]", total)],
    )


def section(tel) -> Section | None:
    """One error plot per sensor that records its truth, or None."""
    df, meta = tel.df, tel.meta
    t = df.index.to_numpy()
    items = []
    for component in components(meta, SENSOR_TYPES | {"Sensor"}):
        name, kind = component["name"], component.get("type")
        if not any(c.startswith(f"{name}_true_") for c in df.columns):
            continue
        measured = [c.replace("_true_", "_") for c in df.columns if c.startswith(f"{name}_true_")]
        measured = [c for c in measured if c in df]
        if measured and not np.isfinite(df[measured].to_numpy(dtype=float)).any():
            items.append(f"<h3>{html.escape(name)} ({html.escape(str(kind))})</h3><p class='note'>No output over "
                         "the whole run: every measurement is NaN (the sensor gave none), so there is no error to "
                         "draw.</p>")
            continue
        if kind == "Gyro":
            items.append(_vector_error(df, name, t, DEG_H_PER_RAD_S, "deg/h", f"{name} (Gyro): measured − true rate"))
        elif kind == "Magnetometer":
            items.append(_vector_error(df, name, t, 1e9, "nT", f"{name} (Magnetometer): measured − true field"))
        elif kind == "StarTracker":
            items.append(_tracker_error(df, name, t))
        else:
            truth = [c for c in df.columns if c.startswith(f"{name}_true_")]
            traces = [
                line(t, df[c.replace("_true_", "_")].to_numpy() - df[c].to_numpy(), c.replace("_true_", "_"), k)
                for k, c in enumerate(truth)
            ]
            items.append(stacked(f"{name} ({kind}): measured − true reading",
                                 [Panel("error [sensor unit]", traces, _no_output(df, name, t))]))
    return Section("sensors", "Sensors", items) if items else None
