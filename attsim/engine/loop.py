"""The compiled mission loop: the engine's order of work over the World, calling the kinds' units.

:func:`run_loop` runs a mission from the plant's time until it ends or must
hand over to Python (a buffer is full, noise draws run short, a unit
faulted, the plant diverged). :func:`step` does one instant: it finds the
next time anything happens, advances the plant to it, and runs that
instant's work in the engine's order (:mod:`attsim.engine.world`). The loop
knows no component kind: it walks the clock and the timeline and calls the
unit each row names, through :class:`Units`, a named tuple of function
pointers (:mod:`attsim._core.units`). So it is compiled once per machine for
every mission, and runs unchanged as plain Python (the interpreted backend,
:mod:`attsim._core.interpret`).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .._core.timegrid import grid_time
from .._core.jit import LOOP_INLINED, njit
from .._core.units import as_function, deref
from .world import DONE, EVENTS_FULL, OK, PLANT_T, REFILL, ROWS_FULL, UNIT_FAULT

_JIT = dict(cache=True, nogil=True, error_model="numpy", **LOOP_INLINED)  # inlined in the units

__all__ = ["Units", "run_loop", "step", "next_instant", "write_row"]


class Units(NamedTuple):
    """The addresses of a run's units (:func:`~attsim._core.units.as_function`): sensor samplers, the clock's
    and timeline's work, row writers, the plant's advance and the actuators' held commands. Plain integer arrays,
    so a call of the loop from Python converts no function object."""

    samplers: np.ndarray
    at_time: np.ndarray
    writers: np.ndarray
    advance: np.ndarray
    hold: np.ndarray


@njit(**_JIT)
def _at_time(units, k, pw, t, row):
    """Call at-time unit ``k`` (clock or timeline work) for bank row ``row``."""
    return as_function(units.at_time[k], 0, pw, units.samplers, t, row)(pw, units.samplers, t, row)


@njit(**_JIT)
def _write(units, k, pw, t, row, col):
    """Call writer ``k`` for bank row ``row`` from column ``col``; returns the next column."""
    return as_function(units.writers[k], 0, pw, t, row, col)(pw, t, row, col)


@njit(**_JIT)
def _advance(units, pw, t0, t1):
    return as_function(units.advance[0], 0, pw, t0, t1)(pw, t0, t1)


@njit(**_JIT)
def _hold(units, pw, t):
    return as_function(units.hold[0], 0, pw, t)(pw, t)


@njit(**_JIT)
def next_instant(pw, t_now):
    """The next time anything happens after ``t_now``: periodic work, time-tagged work, a telemetry row (inf:
    none). Work due at ``t_now`` itself (an instant not yet done) counts."""
    world = deref(pw)
    duration = world.rows.duration_s
    t_next = math.inf
    clock = world.clock
    for i in range(clock.period_s.shape[0]):
        if clock.active[i] != 0.0:  # a controller its mode stopped does not stop the plant
            ti = clock.next_t[i]
            if ti <= duration and ti < t_next:
                t_next = ti
    line = world.timeline
    for i in range(line.count.shape[0]):
        k = line.next_k[i]
        if k < line.count[i] and line.times_s[i, k] < t_next:
            t_next = line.times_s[i, k]
    if world.rows.next_k[0] >= 0:
        t_next = min(t_next, min(world.rows.next_t[0], duration))
    return t_next


@njit(**_JIT)
def _noise_short(pw, t):
    """True when periodic work due at ``t`` (running or not: a mode may start it at ``t``) might need more normal
    draws than its noise rows hold."""
    world = deref(pw)
    clock, noise = world.clock, world.noise
    for i in range(clock.period_s.shape[0]):
        if clock.next_t[i] == t:
            for j in range(clock.noise.shape[1]):
                n = clock.noise[i, j]
                if n >= 0 and noise.cursor[n] + noise.draws[n] > noise.normals.shape[1]:
                    return True
    return False


@njit(**_JIT)
def _timeline_at(pw, units, t, which):
    """The time-tagged work at ``t``: every row (``which`` 0), only the rows that keep their place at ``t = 0``
    (1) or only those that come after the clock's work there (2); a unit's fault returns ``(status, -1 - row)``."""
    world = deref(pw)
    line = world.timeline
    for i in range(line.count.shape[0]):
        if (which == 1 and line.late[i] != 0.0) or (which == 2 and line.late[i] == 0.0):
            continue
        k = line.next_k[i]
        while k < line.count[i] and line.times_s[i, k] == t:  # several at one time: in their order
            status = _at_time(units, line.unit[i], pw, t, line.row[i])
            if status != OK:
                return status, -1 - i
            k += 1
            line.next_k[i] = k
    return OK, 0


@njit(**_JIT)
def _clock_at(pw, units, t):
    """The periodic work due at ``t``, role by role (the clock's order); a unit's fault returns
    ``(UNIT_FAULT, row)``."""
    world = deref(pw)
    clock = world.clock
    for i in range(clock.period_s.shape[0]):
        if clock.next_t[i] == t:
            if clock.active[i] != 0.0:  # stopped by its mode: no samples, no commands
                status = _at_time(units, clock.unit[i], pw, t, clock.row[i])
                if status != OK:
                    return status, i
            _tick(clock, i)
    return OK, 0


@njit(**_JIT)
def _tick(clock, i):
    """Clock row ``i`` on to its next time."""
    clock.next_k[i] += 1
    clock.next_t[i] = grid_time(clock.phase_s[i], clock.next_k[i], clock.period_s[i])


@njit(**_JIT)
def write_row(pw, units, t):
    """The telemetry row at ``t``: the engine's columns, then each component's in mission order."""
    world = deref(pw)
    col = _write(units, 0, pw, t, -1, 0)  # writer 0: the state and the environment (the engine's own)
    rows = world.rows
    for i in range(rows.writer.shape[0]):
        col = _write(units, rows.writer[i], pw, t, rows.row[i], col)
    world.buffers.counts[0] += 1


@njit(**_JIT)
def step(pw, units, t_horizon, progressed):
    """One instant: returns ``(status, t_from)``, status ``OK`` when it was done (call again), else why the loop
    must hand over (the World is then as it was before the instant, or where the plant stopped)."""
    world = deref(pw)
    plant = world.plant
    t_now = plant.time[PLANT_T]
    t_next = next_instant(pw, t_now)
    buffers = world.buffers
    if t_next == math.inf:
        return DONE, t_now
    if buffers.counts[0] >= buffers.rows.shape[0] or (t_next > t_horizon and progressed):
        return ROWS_FULL, t_now
    if buffers.counts[1] + buffers.events_per_instant > buffers.events.shape[0]:
        return EVENTS_FULL, t_now
    if t_next > t_now:
        status = _advance(units, pw, t_now, t_next)  # the plant reaches t_next under the commands held since t_now
        if status != OK:
            return status, t_now
    clock = world.clock
    for i in range(clock.period_s.shape[0]):  # a stopped controller's instants passed while the plant ran on
        if clock.active[i] == 0.0:
            while clock.next_t[i] < t_next:
                _tick(clock, i)
    t = t_next
    if _noise_short(pw, t):  # nothing of the instant is done yet: Python refills, the next call does it whole
        return REFILL, t
    status, where = _timeline_at(pw, units, t, 1 if t == 0.0 else 0)  # fault boundaries first, but at t = 0
    if status == OK:
        status, where = _clock_at(pw, units, t)
    if status == OK and t == 0.0:
        status, where = _timeline_at(pw, units, t, 2)
    if status != OK:
        return UNIT_FAULT, float(where)
    _hold(units, pw, t)
    rows = world.rows
    k_row = rows.next_k[0]
    if k_row >= 0 and min(rows.next_t[0], rows.duration_s) == t:
        write_row(pw, units, t)
        rows.next_k[0] = -1 if t >= rows.duration_s else k_row + 1
        rows.next_t[0] = grid_time(0.0, k_row + 1, rows.dt_s)
    return OK, t


def run_loop(address, units, t_horizon):
    """Run from the plant's time until the mission ends or must hand over; returns ``(status, t_from)``.

    ``address`` is the World's pinned copy (:func:`~attsim._core.units.pin`;
    ``world_at``, bound per World type, makes it the units' pointer), so a
    call from Python unboxes no bank. The loop hands its rows over before
    going past ``t_horizon`` (the recorder's bound on how much simulated
    time a kill may lose), once it has done at least one instant, so every
    call makes progress.
    """
    pw = world_at(address)  # noqa: F821 - bound per World type
    world = deref(pw)
    _hold(units, pw, world.plant.time[PLANT_T])  # the commands the banks hold, from the plant's time
    progressed = False
    while True:
        status, t_from = step(pw, units, t_horizon, progressed)
        if status != OK:
            return status, t_from
        progressed = True
