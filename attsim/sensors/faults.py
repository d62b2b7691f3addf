"""Time-tagged sensor faults: what a fault is, when it acts, and the order its events are logged in.

A :class:`SensorFault` acts on one sensor from ``start_s`` to
``start_s + duration_s`` (to the end of the run without a duration): a
sample taken at ``t`` with ``start_s <= t < end`` is affected. Kinds:

``"stuck"``
    The output is frozen at the sensor's last good (valid) output before the
    sample; the sensor still says it is valid — flight software cannot tell.
    A sensor that never gave a good output has none to freeze: no output.
``"dropout"``
    No output: the measurement columns are NaN and ``<sensor>_valid`` is 0.
``"bias_jump"``
    ``bias`` is added to the sensor's constant bias (in the sensor's own
    axes and units: a gyro's rad/s, a magnetometer's T, a star tracker's
    small rotation in arcsec, a sun sensor's six detector offsets).

Overlapping faults combine: dropout over stuck over the rest, and biases
add. The sensor's noise and internal state (a gyro's bias walk) go on
during a fault, so a run with a fault draws the same noise as without it.

Each fault's start and end are logged as events (``fault`` and
``fault_end``, with ``sensor``, ``fault`` the kind and ``index`` its place
in the sensor's list) at their own times, before anything else at that
time (at ``t = 0``: after everything the components do at their start);
:func:`fault_schedule` gives that order once, for both paths.
"""

from __future__ import annotations

import math

import numpy as np

from .._core.jit import LOOP_INLINED, njit
from .._core.validate import finite_array, non_negative_scalar, one_of, positive_scalar, sequence
from ..errors import InputError

__all__ = ["SensorFault", "FAULT_KINDS", "STUCK", "DROPOUT", "BIAS_JUMP", "fault_table", "faults_at", "fault_schedule",
           "FAULT_BIAS_WIDTH", "FAULT_START", "FAULT_END", "FAULT_KIND", "FAULT_BIAS", "FAULT_COLUMNS",
           "checked_faults", "fault_fields"]

FAULT_KINDS = ("stuck", "dropout", "bias_jump")
STUCK, DROPOUT, BIAS_JUMP = range(3)
FAULT_BIAS_WIDTH = 6  # the widest bias (six sun-sensor detectors)

_JIT = dict(cache=True, nogil=True, error_model="numpy", **LOOP_INLINED)  # attsim._core.jit: inlined, no refcounts


class SensorFault:
    """A fault of one sensor from ``start_s`` for ``duration_s`` (None: to the end of the run).

    Parameters
    ----------
    start_s : float
        When it begins, s (>= 0).
    kind : str
        ``"stuck"``, ``"dropout"`` or ``"bias_jump"`` (see :mod:`attsim.sensors.faults`).
    duration_s : float, optional
        How long it lasts, s (> 0); None lasts to the end of the run.
    bias : array_like, optional
        For ``"bias_jump"`` only: the added bias, in the sensor's axes and
        units (3 values for a gyro, magnetometer or star tracker, 6 for a
        sun sensor); its size is checked by the sensor it is given to.
    """

    def __init__(self, start_s: float, kind: str, duration_s: float | None = None, bias=None):
        self.start_s = non_negative_scalar(start_s, "start_s")
        self.kind = one_of(kind, "kind", FAULT_KINDS)
        self.duration_s = None if duration_s is None else positive_scalar(duration_s, "duration_s")
        self.end_s = math.inf if duration_s is None else self.start_s + self.duration_s
        if kind == "bias_jump":
            if bias is None:
                raise InputError("bias", "is needed for a 'bias_jump' fault (the bias it adds)")
            self.bias = finite_array(bias, "bias").reshape(-1)
        else:
            if bias is not None:
                raise InputError("bias", f"is only for a 'bias_jump' fault, not {kind!r}", f"got {bias!r}")
            self.bias = None

    def __repr__(self) -> str:
        extra = "" if self.bias is None else f", bias={self.bias.tolist()}"
        return f"SensorFault({self.start_s:g}, {self.kind!r}, duration_s={self.duration_s}{extra})"


def checked_faults(faults, bias_size: int, bias_rule: str) -> tuple:
    """The ``faults`` argument of a sensor: a tuple of SensorFaults whose biases have ``bias_size`` values."""
    faults = sequence(faults, "faults")
    for k, fault in enumerate(faults):
        if not isinstance(fault, SensorFault):
            raise InputError(f"faults[{k}]", "must be an attsim.SensorFault", f"got {type(fault).__name__}")
        if fault.bias is not None and fault.bias.size != bias_size:
            raise InputError(f"faults[{k}].bias", bias_rule, f"got {fault.bias.size} values")
    return tuple(faults)


# a fault table's columns: one row per fault (padded rows start at infinity, so they never act)
FAULT_START, FAULT_END, FAULT_KIND, FAULT_BIAS = 0, 1, 2, 3  # the bias in FAULT_BIAS .. FAULT_BIAS + 5
FAULT_COLUMNS = FAULT_BIAS + FAULT_BIAS_WIDTH


def fault_table(faults, bias_scale: float = 1.0, rows: int | None = None) -> np.ndarray:
    """A sequence of faults as the array the kernels read, ``rows`` rows (default: one per fault) of
    :data:`FAULT_COLUMNS`: start and end (s), kind code (:data:`STUCK`, :data:`DROPOUT`, :data:`BIAS_JUMP`), bias
    (times ``bias_scale``, into SI)."""
    table = np.zeros((len(faults) if rows is None else rows, FAULT_COLUMNS))
    table[:, FAULT_START] = table[:, FAULT_END] = np.inf
    for k, fault in enumerate(faults):
        table[k, FAULT_START], table[k, FAULT_END] = fault.start_s, fault.end_s
        table[k, FAULT_KIND] = FAULT_KINDS.index(fault.kind)
        if fault.bias is not None:
            table[k, FAULT_BIAS:FAULT_BIAS + fault.bias.size] = fault.bias * bias_scale
    return table


@njit(**_JIT)
def faults_at(table, t):
    """``(dropout, stuck, bias)`` of the faults of ``table`` acting at ``t`` (``start <= t < end``); ``bias`` the
    sum of the acting bias jumps (6 values, zeros where none acts)."""
    dropout = stuck = False
    b0 = b1 = b2 = b3 = b4 = b5 = 0.0
    for k in range(table.shape[0]):
        f = table[k]
        if f[FAULT_START] <= t < f[FAULT_END]:
            kind = f[FAULT_KIND]
            if kind == DROPOUT:
                dropout = True
            elif kind == STUCK:
                stuck = True
            else:
                b = FAULT_BIAS
                b0, b1, b2 = b0 + f[b], b1 + f[b + 1], b2 + f[b + 2]
                b3, b4, b5 = b3 + f[b + 3], b4 + f[b + 4], b5 + f[b + 5]
    return dropout, stuck, (b0, b1, b2, b3, b4, b5)


def fault_schedule(sensors, duration_s: float) -> list[tuple[float, int, int, int]]:
    """Every fault boundary up to ``duration_s`` in the order its event is logged: ``(t, sensor, fault, end)``.

    ``sensor`` is the position in ``sensors`` (the mission's sensors in its
    order), ``fault`` the fault's index in that sensor's list, ``end`` 1 for
    the fault's end and 0 for its start. Sorted by time, then sensor, then
    ends before starts (a fault that ends as the next begins), then fault.
    """
    boundaries = []
    for s, sensor in enumerate(sensors):
        for k, fault in enumerate(getattr(sensor, "faults", ())):
            if fault.start_s <= duration_s:
                boundaries.append((fault.start_s, s, 0, k))
            if fault.end_s <= duration_s:
                boundaries.append((fault.end_s, s, 1, k))
    boundaries.sort(key=lambda b: (b[0], b[1], -b[2], b[3]))
    return [(t, s, k, end) for t, s, end, k in boundaries]


def fault_fields(sensor, index: int, fault) -> dict:
    """The fields of a fault's events: the sensor, the kind, its index in the sensor's list (and a bias jump's
    bias, as given)."""
    fields = {"sensor": sensor.name, "fault": fault.kind, "index": index}
    if fault.bias is not None:
        fields["bias"] = fault.bias.tolist()
    return fields
