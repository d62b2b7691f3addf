"""Sensors as their error against the truth recorded at the same instant, in each sensor's natural unit.

Gyro: deg/h per axis. Star tracker: arcsec per body axis (the rotation
vector of q_true* ⊗ q_measured) and the total angle. Magnetometer: nT per
axis. Sun sensors: the angle in deg between the Sun direction the six
detectors measure and the one their ideal readings give (none in eclipse),
both as ``E I`` with ``E = M⁻¹ [n_1 .. n_6]``, ``M = Σ_pairs a aᵀ`` over the
detectors' nominal normals in body axes (``I+x − I−x, ...`` for the default
ones), and each detector's error as a fraction of full scale. Rows before a
sensor's first sample (NaN) are left out; a sample without output (NaN,
``<sensor>_valid`` = 0: a blinded star tracker, a dropout) is a gap in the
lines, and its intervals are shaded.
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


SUN_FACES = ("px", "mx", "py", "my", "pz", "mz")
DEFAULT_NORMALS = ((1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0), (0, 0, 1), (0, 0, -1))


def _sun_matrix(normals) -> np.ndarray:
    """``E`` (3, 6) with ``s = E I`` for ideal cosine detectors in opposite pairs: ``Σ n_i I_i = M s``."""
    n = np.asarray(normals, dtype=float)
    return np.linalg.solve(n[0::2].T @ n[0::2], n.T)


def _sun_direction(df, prefix: str, matrix: np.ndarray) -> np.ndarray:
    """The unit Sun direction from six cosine detectors ``<prefix>px .. <prefix>mz``; NaN where they see no Sun."""
    s = df[[f"{prefix}{face}" for face in SUN_FACES]].to_numpy(dtype=float) @ matrix.T
    norm = np.linalg.norm(s, axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(norm > 0.0, s / norm, np.nan)


def _sun_sensor_error(df, component, t) -> Plot:
    name, kind = component["name"], component.get("type")
    matrix = _sun_matrix(component.get("normals_nominal") or DEFAULT_NORMALS)  # as mounted, in body axes
    measured, true = _sun_direction(df, f"{name}_", matrix), _sun_direction(df, f"{name}_true_", matrix)
    angle = np.degrees(np.arccos(np.clip(np.sum(measured * true, axis=1), -1.0, 1.0)))
    faces = [line(t, df[f"{name}_{face}"].to_numpy() - df[f"{name}_true_{face}"].to_numpy(), face, k)
             for k, face in enumerate(SUN_FACES)]
    gaps = _no_output(df, name, t)
    return stacked(
        f"{name} ({kind}): Sun direction measured by the detectors against the one their ideal readings give "
        "(none in eclipse), and each detector's error",
        [Panel("direction error [deg]", [line(t, angle, "angle to the true Sun", color="#222222")], gaps),
         Panel("detector error [fraction of full scale]", faces, gaps)],
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
        elif kind == "SunSensor" and all(f"{name}_{p}{f}" in df for p in ("", "true_") for f in SUN_FACES):
            items.append(_sun_sensor_error(df, component, t))
        else:
            truth = [c for c in df.columns if c.startswith(f"{name}_true_")]
            traces = [
                line(t, df[c.replace("_true_", "_")].to_numpy() - df[c].to_numpy(), c.replace("_true_", "_"), k)
                for k, c in enumerate(truth)
            ]
            items.append(stacked(f"{name} ({kind}): measured − true reading",
                                 [Panel("error [the sensor's unit]", traces, _no_output(df, name, t))]))
    return Section("sensors", "Sensors", items) if items else None
