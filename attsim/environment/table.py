"""The environment along the orbit, tabulated once before a run.

The plant reads the environment at every integrator stage, so IGRF, SGP4
and the Sun are evaluated once, vectorised, on a grid (uniform, with a
field history's own times added), and the compiled plant interpolates
linearly between rows. This module names the table's columns (ECI, SI) and
holds the compiled interpolation kernels;
:meth:`attsim.environment.Environment.table` fills a table, and
:func:`field_table` makes one that holds only a magnetic field.

Columns of ``values`` (:data:`COLUMNS`)::

    B_I    T      geomagnetic field, inertial axes (3)
    r      m      position (3)
    v      m/s    velocity (3)
    rho    kg/m^3 atmospheric density
    sun    1      unit vector toward the Sun (3)
    p_srp  N/m^2  solar radiation pressure at the spacecraft (0 in shadow)
    gmst   rad    Greenwich mean sidereal angle, unwrapped (continuous, so it interpolates)
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .._core.jit import LOOP_INLINED, njit
from .._core.validate import callable_output, vector3

__all__ = ["COLUMNS", "WIDTH", "B_I", "R", "V", "RHO", "SUN", "P_SRP", "GMST", "EnvironmentTable", "field_table",
           "table_cell", "stage_time", "lerp3", "lerp1", "interpolate_vector", "EMPTY"]

# first column of each quantity; a vector spans three columns
B_I, R, V, RHO, SUN, P_SRP, GMST, WIDTH = 0, 3, 6, 9, 10, 13, 14, 15
COLUMNS = ("B_I_x", "B_I_y", "B_I_z", "r_x", "r_y", "r_z", "v_x", "v_y", "v_z", "rho", "sun_x", "sun_y", "sun_z",
           "p_srp", "gmst")

_JIT = dict(cache=True, nogil=True, error_model="numpy", **LOOP_INLINED)  # attsim._core.jit: inlined, no refcounts


class EnvironmentTable(NamedTuple):
    """``t_s`` (n,) increasing (a uniform grid, a field history's times added) and ``values`` (n, :data:`WIDTH`);
    empty when there is no environment."""

    t_s: np.ndarray
    values: np.ndarray


EMPTY = EnvironmentTable(np.empty(0), np.empty((0, WIDTH)))


def field_table(field, duration_s: float, spacing_s: float) -> EnvironmentTable:
    """A table holding only an inertial magnetic field (T) on a uniform grid (a field history: on its own times).

    ``field`` is None (no field: an empty table), a constant 3-vector, a
    :class:`~attsim.environment.field_history.FieldHistory` (tabulated at its
    own sample times, not on the grid), or a callable ``f(t) -> (3,)``,
    called once with the array of times when it accepts one, otherwise once
    per grid time.
    """
    if field is None:
        return EMPTY
    knot_table = getattr(field, "knot_table", None)
    if knot_table is not None:  # a field history: its own times, so the table gives it exactly
        t, b = knot_table(duration_s)
    elif callable(field):
        n = max(2, int(math.ceil(duration_s / spacing_s)) + 1)
        t = np.linspace(0.0, duration_s, n)
        try:
            b = np.asarray(field(t))  # vectorised callables: one call
        except Exception:  # noqa: BLE001 - a callable of one time fails on an array in any way: call it per time
            b = None
        if b is not None and b.shape == (n, 3) and b.dtype.kind in "iuf":
            b = callable_output(b, "field", (n, 3), 0.0)  # one non-finite row refuses the whole table
        else:
            b = np.array([callable_output(field(float(x)), "field", (3,), float(x)) for x in t])
    else:
        t = np.array([0.0, duration_s])
        b = np.vstack([vector3(field, "field")] * 2)
    values = np.zeros((t.size, WIDTH))
    values[:, B_I:B_I + 3] = b
    return EnvironmentTable(t, values)


@njit(**_JIT)
def stage_time(t, t0_s):
    """The time an integrator stage at ``t`` reads the table at, for inputs held since ``t0_s``: ``t`` itself at
    ``t0_s``, one floating-point step before it later (the table's left limit there).

    A field history held over steps (:class:`~attsim.environment.FieldHistory`, ``"hold"``) steps to its next
    sample within one floating-point spacing before the sample's time; read so, a step that ends on a sample
    holds the previous one to its end, as the simulator that sampled it held it over the step, while the step
    that starts there (and every instant) reads the new one. A continuous table moves by one ulp of time.
    """
    return np.nextafter(t, -np.inf) if t > t0_s else t


@njit(**_JIT)
def table_cell(table_t, t):
    """``(k, f)``: ``t`` lies a fraction ``f`` of the way from row ``k`` to ``k + 1``.

    Held at the ends (``f`` is 0 or 1); ``k = -1`` for an empty table.
    """
    n = table_t.size
    if n == 0:
        return -1, 0.0
    if n == 1 or t <= table_t[0]:
        return 0, 0.0
    if t >= table_t[n - 1]:
        return n - 2, 1.0
    # uniform grids are the common case: guess the cell, then correct
    k = int((t - table_t[0]) / (table_t[n - 1] - table_t[0]) * (n - 1))
    k = min(max(k, 0), n - 2)
    while table_t[k + 1] < t:
        k += 1
    while table_t[k] > t:
        k -= 1
    return k, (t - table_t[k]) / (table_t[k + 1] - table_t[k])


@njit(**_JIT)
def lerp3(table_v, k, f, col):
    """Columns ``col..col+2`` of the table, interpolated in cell ``(k, f)`` (zeros for an empty table)."""
    if k < 0:
        return (0.0, 0.0, 0.0)
    if table_v.shape[0] == 1:
        return (table_v[0, col], table_v[0, col + 1], table_v[0, col + 2])
    a, b = table_v[k], table_v[k + 1]
    return (a[col] + f * (b[col] - a[col]), a[col + 1] + f * (b[col + 1] - a[col + 1]),
            a[col + 2] + f * (b[col + 2] - a[col + 2]))


@njit(**_JIT)
def lerp1(table_v, k, f, col):
    """Column ``col`` of the table, interpolated in cell ``(k, f)`` (zero for an empty table)."""
    if k < 0:
        return 0.0
    if table_v.shape[0] == 1:
        return table_v[0, col]
    return table_v[k, col] + f * (table_v[k + 1, col] - table_v[k, col])


@njit(**_JIT)
def interpolate_vector(table_t, table_v, t):
    """The magnetic field columns of a table at ``t`` (zeros for an empty table)."""
    k, f = table_cell(table_t, t)
    return lerp3(table_v, k, f, B_I)
