"""What a run is, read from its metadata and columns: which sections its report needs.

A run is *controlled* when anything but its own inertia acts on it: a
controller, an actuator or a schedule among its components, or a
disturbance torque in its environment. Its *torque-free intervals* are the
stretches of rows where no actuator output and no disturbance torque is
above round-off.
"""

from __future__ import annotations

import re
from typing import NamedTuple

import numpy as np

from .style import fmt

SENSOR_TYPES = frozenset({"Gyro", "Magnetometer", "SunSensor", "StarTracker"})
ACTUATOR_TYPES = frozenset({"ReactionWheel", "Magnetorquer", "Thruster", "TorqueSchedule", "CommandSchedule",
                            "BodyTorque"})
DISTURBANCE_PREFIXES = ("tau_gg_", "tau_aero_", "tau_srp_", "tau_res_")
# torques and dipoles below this, relative to the largest of the run, are round-off
ROUND_OFF = 1e-12


class Requirement(NamedTuple):
    """A bound read from a criterion, in the unit its label names."""

    label: str
    value: float
    unit: str


class Judged(NamedTuple):
    """One judged criterion as the report reads it: a ``(label, value, ok, bound)`` row, and a declared criterion's
    record (``declared``: quantity, statistic, op, limit, unit, window, intervals, at_s, margin) or None."""

    label: str
    value: object
    ok: bool
    bound: str
    declared: dict | None


def judged(criteria) -> list[Judged]:
    """The criteria as :class:`Judged` rows, from judged criteria (``.declared``), tuples of four, or the rows
    ``meta.json`` keeps (a fifth element, the declared record, for a declared criterion)."""
    rows = []
    for row in criteria or []:
        items = list(row)
        declared = getattr(row, "declared", None)
        if declared is None and len(items) == 5 and isinstance(items[4], dict):
            declared = items[4]
        label, value, ok, bound = items[:4]
        rows.append(Judged(label, value, ok, bound, declared if isinstance(declared, dict) else None))
    return rows


def declared_on(criteria, quantity: str) -> list[Judged]:
    """The declared criteria drawn on the plot of ``quantity`` (those with a window to draw)."""
    return [row for row in judged(criteria) if row.declared and row.declared.get("quantity") == quantity]


def components(meta: dict, types=None) -> list[dict]:
    """The run's component descriptions, optionally only those of the given types."""
    found = meta.get("components") or []
    return [c for c in found if types is None or c.get("type") in types]


def has_disturbances(meta: dict) -> bool:
    env = meta.get("environment") or {}
    residual = np.asarray(env.get("residual_dipole_Am2") or [0.0], dtype=float)
    return bool(
        env.get("gravity_gradient") or env.get("aerodynamic") or env.get("solar_pressure") or np.any(residual != 0)
    )


def applied_torque(meta: dict) -> str | None:
    """What the torque given to ``attsim.propagate``/``Propagation`` (``torque=``) is, in words; None without one.

    It is not recorded row by row, so no interval of such a run can be called torque-free.
    """
    torque = meta.get("torque")
    if not isinstance(torque, dict):
        return None
    if torque.get("kind") == "constant":
        values = np.asarray(torque.get("N_m", []), dtype=float)
        return f"a constant body torque [{', '.join(f'{v:.6g}' for v in values)}] N m"
    return f"a torque function of time and state ({torque.get('name', 'the script')})"


def is_controlled(meta: dict) -> bool:
    """True when a controller, an actuator, a schedule, a disturbance or an applied torque acts on the body."""
    return (has_disturbances(meta) or applied_torque(meta) is not None
            or any(c.get("type") not in SENSOR_TYPES for c in components(meta)))


def actuation_columns(df, meta: dict) -> list[str]:
    """The columns that hold something pushing on the body: actuator outputs and disturbance torques."""
    columns = [c for c in df.columns if c.startswith(DISTURBANCE_PREFIXES)]
    for component in components(meta):
        name, kind = component["name"], component.get("type")
        if kind in SENSOR_TYPES:
            continue
        if kind == "ReactionWheel":  # the motor's reaction, and the friction's and the imbalance's when modelled
            columns += [f"{name}_torque", f"{name}_friction"] + [f"{name}_jitter_tau_{a}" for a in "xyz"]
        else:
            columns += [c for c in df.columns if c.startswith(name + "_") and not c.endswith(("_speed", "_h"))]
    return [c for c in columns if c in df.columns]


def torque_free_mask(df, meta: dict) -> np.ndarray:
    """Per row: True where nothing pushes on the body (outputs and disturbances at round-off)."""
    columns = actuation_columns(df, meta)
    if not columns:
        return np.ones(len(df), dtype=bool)
    values = np.abs(df[columns].to_numpy(dtype=float))
    scale = np.nanmax(values, axis=0, initial=0.0)
    floor = np.where(scale > 0, scale * ROUND_OFF, 0.0)
    return np.all(values <= floor, axis=1)


def longest_interval(mask: np.ndarray) -> slice:
    """The longest run of True in ``mask`` as a row slice (empty when there is none)."""
    edges = np.diff(np.concatenate([[0], mask.astype(np.int8), [0]]))
    starts, stops = np.nonzero(edges == 1)[0], np.nonzero(edges == -1)[0]
    if not len(starts):
        return slice(0, 0)
    k = int(np.argmax(stops - starts))
    return slice(int(starts[k]), int(stops[k]))


_BOUND = re.compile(r"^\s*(<=|<|≤)\s*([-+0-9.eE]+)")
_UNIT = re.compile(r"\[([^\]]+)\]\s*$")


def requirement(criteria, words, exclude=(), units=None) -> Requirement | None:
    """The upper bound among ``criteria`` whose label contains the earliest of ``words`` (case-insensitive).

    Labels containing one of ``exclude`` are passed over (an estimator's "attitude error" is not the pointing),
    and with ``units`` those whose unit (``[unit]`` at the label's end) is not among them.
    """
    ranked = []
    for label, _value, _ok, bound, declared in judged(criteria):
        if declared:  # drawn over its window (declared_on), not across the run
            continue
        text = str(label).lower()
        if any(x in text for x in exclude):
            continue
        rank = next((k for k, w in enumerate(words) if w in text), None)
        if rank is not None:
            ranked.append((rank, len(ranked), label, bound))
    for _rank, _order, label, bound in sorted(ranked):
        match = _BOUND.match(str(bound))
        if not match:
            continue
        unit = _UNIT.search(str(label))
        if units is not None and (unit is None or unit.group(1).strip() not in units):
            continue
        try:
            return Requirement(str(label), float(match.group(2)), unit.group(1).strip() if unit else "")
        except ValueError:
            continue
    return None


ANGLE_TO_DEG = {
    "deg": 1.0,
    "rad": 180.0 / np.pi,
    "arcsec": 1.0 / 3600.0,
    "arcmin": 1.0 / 60.0,
    "mrad": 0.18 / np.pi,
    "urad": 1.8e-4 / np.pi,
}
RATE_TO_DEG_S = {"deg/s": 1.0, "rad/s": 180.0 / np.pi, "deg/h": 1.0 / 3600.0, "mrad/s": 0.18 / np.pi}


def status(run, criteria) -> str:
    """``running`` (read while it ran), ``failed`` (stopped on an error or a criterion failed), ``partial`` (cut
    short) or ``complete``."""
    if run.meta.get("running"):
        return "running"
    stopped = str(run.meta.get("stopped", ""))
    if run.meta.get("partial") and stopped and stopped != "killed" and "killed" not in stopped:
        return "failed"
    if any(not row.ok for row in judged(criteria)):
        return "failed"
    return "partial" if run.meta.get("partial") else "complete"


def method_label(meta) -> str:
    """The method with the options it ran with, e.g. ``dmv (order=10)`` (plain ``dmv`` reads as order 2)."""
    options = meta.get("method_options") or {}
    listed = ", ".join(f"{k}={v}" for k, v in options.items())
    return f"{meta.get('method')} ({listed})" if listed else str(meta.get("method"))


# --- what other parts of attsim record about a run, read in one place (each optional: absent, nothing is shown) ---

PATHS = {"loop": "the mission loop", "objects": "the components' SimPy processes"}


def timing(meta: dict) -> str | None:
    """Wall time, real-time factor and, where the run records them (``path``, ``backend``, ``compile_s``), how it
    ran and its compile time apart (the wall time then excludes it)."""
    wall, factor = meta.get("wall_s"), meta.get("realtime_factor_achieved")
    if not isinstance(wall, (int, float)):
        return None
    text = f"{fmt(float(wall), 3)} s wall" + (f", real-time factor {fmt(float(factor), 3)}"
                                               if isinstance(factor, (int, float)) else "")
    path, backend = meta.get("path"), meta.get("backend")
    where = PATHS.get(path, str(path)) if isinstance(path, str) and path else ""
    if isinstance(backend, str) and backend:
        where = f"{where} ({backend})" if where else f"the {backend} backend"
    if where:
        text += f"; ran on {where}"
    compile_s = meta.get("compile_s")
    if isinstance(compile_s, (int, float)):
        text += f"; compiling took {fmt(float(compile_s), 3)} s more (not in the wall time)"
    return text


_EFFECTS = (("gravity_gradient", "gravity gradient"), ("aerodynamic", "aerodynamic drag"),
            ("solar_pressure", "solar radiation pressure"))


def given_field(meta: dict) -> str | None:
    """The magnetic field given to a mission without an environment (``field=``), in words; None without one."""
    field = meta.get("field")
    if not isinstance(field, dict):
        return None
    if field.get("given") == "constant":
        values = np.asarray(field.get("inertial_T", []), dtype=float)
        return "magnetic field given: a constant [" + ", ".join(f"{v:.4g}" for v in values) + "] T (inertial)"
    if field.get("given") == "field history":
        return f"magnetic field given: a field {field.get('name', 'history')}"
    return f"magnetic field given: {field.get('name', 'a function')} (a function of time, tabulated every " \
           f"{field.get('tabulated_every_s', '?')} s)"


def environment_effects(meta: dict) -> list[str] | None:
    """The environment's effects switched on: ``meta["environment"]["effects"]`` when the run records it, else what
    its environment description says (field model, disturbances, residual dipole, shadow); a field given without
    an environment (:func:`given_field`) alone; None without either."""
    env = meta.get("environment")
    if not isinstance(env, dict) or not env:
        field = given_field(meta)
        return None if field is None else [f"{field}; no orbit, no other effect"]
    if isinstance(env.get("effects"), list):
        return [str(e) for e in env["effects"]]
    effects = []
    if env.get("field"):
        effects.append(f"magnetic field ({env['field']})")
    effects += [words for key, words in _EFFECTS if env.get(key)]
    residual = np.asarray(env.get("residual_dipole_Am2") or [0.0], dtype=float)
    if np.any(residual != 0):
        effects.append("residual dipole [" + ", ".join(f"{v:.3g}" for v in residual) + "] A m²")
    if env.get("shadow"):
        effects.append(f"eclipses ({env['shadow']})" if isinstance(env["shadow"], str) else "eclipses")
    return effects
