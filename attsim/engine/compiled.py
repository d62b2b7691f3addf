"""Running a mission on the compiled loop: the SimPy process around it, its hand-overs and errors.

:func:`run_compiled` is the mission's only SimPy process when every
component has a compiled form (:func:`~attsim.engine.build.compiled_form`).
It builds the World (:mod:`attsim.engine.build`), gets the units from the
run's backend (compiled or interpreted, :mod:`attsim.engine.backend`), and
calls the loop until the run ends: at each hand-over it gives the rows and
events to the recorder (each event read back by the part that logged it),
refills the noise draws from their own generators (the same draws, in the
same order, as the Python path takes) and raises the errors the Python path
raises, at the same times. At the end every part leaves its objects as the
Python path would.
"""

from __future__ import annotations

import time


from .._core.timegrid import grid_time
from ..errors import ControllerError, DivergenceError
from .backend import UnitCompileError
from .build import build_world
from .component import At
from .world import DIVERGED, DONE, GIMBAL_LOCK, HELD_DIPOLE, HELD_TAU_EXT, KIND_PARTS, REFILL, UNIT_FAULT

__all__ = ["run_compiled", "HANDOVER_WALL_S"]

HANDOVER_WALL_S = 0.25  # wall time between hand-overs of rows to the recorder, at most (about)


def _flush(world, build, recorder) -> None:
    """The loop's events (each read back by the part that logged it) and rows, to the recorder."""
    buffers = world.buffers
    for e in buffers.events[: buffers.counts[1]]:
        t, kind, what, index = float(e[0]), int(e[1]), int(e[2]), int(e[3])
        if not any(part.event(recorder, t, kind, what, index, e[4:8], build) for part in KIND_PARTS):
            raise AssertionError(f"an event of kind {kind} that no part reads")  # pragma: no cover - a bug
    if buffers.counts[0]:
        recorder.append_rows(buffers.rows[: buffers.counts[0]])
    buffers.counts[:] = 0


def _hand_back(world, build, sc) -> None:
    """The objects end as the Python path leaves them: the plant's state and held commands, each kind's own."""
    sc.take_plant(world)
    held = world.plant.held
    sc._tau_ext = tuple(float(v) for v in held[HELD_TAU_EXT:HELD_TAU_EXT + 3])
    sc._commanded_dipole = tuple(float(v) for v in held[HELD_DIPOLE:HELD_DIPOLE + 3])
    for part in KIND_PARTS:
        part.hand_back(getattr(world, part.slot), build.components(part), build)


def _refill(world, build) -> None:
    """Move each noise row's unused draws to its front and draw the rest from its own generator."""
    noise = world.noise
    for n, (draws, rng) in enumerate(build.noise):
        used = int(noise.cursor[n])
        if used and draws:
            keep = noise.normals.shape[1] - used
            noise.normals[n, :keep] = noise.normals[n, used:]
            noise.normals[n, keep:] = rng.standard_normal(used)
            noise.cursor[n] = 0


def _unit_fault(world, build, where: int, t_s: float) -> Exception:
    """The error of the clock row (or, negative, the timeline row) whose unit faulted."""
    clock = world.clock
    row = int(clock.row[where]) if where >= 0 else None
    for part in KIND_PARTS:
        components = build.components(part)
        for component in components:
            if where >= 0 and build.clock_row(component) == where:
                error = part.fault(getattr(world, part.slot), components, row, t_s, build)
                if error is not None:
                    return error
    return ControllerError(f"a compiled unit faulted at t = {t_s:.6g} s")  # pragma: no cover - a bug


def _components(build):
    return [c for part in KIND_PARTS for c in build.components_of(part.slot)]


def _raising_component(world, build, exc: Exception) -> Exception:
    """The error a user's code raised inside the loop, as the component whose cycle ran it names it
    (``unit_raised(exc, t_s)``, e.g. a user's law), else as it was raised."""
    t = float(world.plant.time[0])
    for component in _components(build):
        explain, i = getattr(component, "unit_raised", None), build.clock_row(component)
        if explain is not None and i >= 0 and world.clock.active[i] != 0.0 and \
                grid_time(component.phase_s, int(world.clock.next_k[i]), component.period_s) == t:
            return explain(exc, t)
    return exc


def _unit_does_not_compile(build, exc: UnitCompileError) -> Exception:
    """A unit that does not compile, as the component it is named by explains it (``unit_does_not_compile``,
    e.g. a user's law with the wrong signature); any other unit's error as it was raised."""
    for component in _components(build):
        explain, unit = getattr(component, "unit_does_not_compile", None), getattr(component, "loop_unit", None)
        if explain is not None and unit is not None and unit.cache_name() == exc.unit.cache_name():
            return explain(exc.__cause__)
    return exc.__cause__


def run_compiled(env, mission, sc, recorder, backend, on_row=None):
    """The SimPy process of a compiled mission: the loop up to each hand-over, then the recorder's share."""
    world, build, needed = build_world(mission, sc, 1 + len(recorder.columns))
    try:
        units = backend.units(world, needed)
    except UnitCompileError as exc:
        error = _unit_does_not_compile(build, exc)
        # an error raised as it was keeps its own cause: "from" itself made it its own cause, a loop
        raise error from (error.__cause__ if error is exc.__cause__ else exc.__cause__)
    loop = backend.loop(world, units)
    # Rows reach the recorder every chunk_s of simulated time at least, and every HANDOVER_WALL_S of wall time: a
    # slow loop (a tiny max_step) would otherwise hold many wall seconds of rows where a kill loses them. The
    # first call does the instant t = 0 only; each next call spans what the last one's pace covers in
    # HANDOVER_WALL_S (every call does at least one instant, see attsim.engine.loop).
    longest = max(recorder.chunk_s, mission.telemetry_dt_s)
    span, t_now = 0.0, 0.0
    while True:
        wall0, t0 = time.monotonic(), t_now
        try:
            status, t_from = loop(t_now + span)
        except Exception as exc:  # a user's law raised inside the loop
            _flush(world, build, recorder)  # what the loop had produced before is kept
            _hand_back(world, build, sc)
            raise _raising_component(world, build, exc) from exc
        sc.take_plant(world)
        t_now = sc.t_plant_s
        _flush(world, build, recorder)
        wall = time.monotonic() - wall0
        if wall >= HANDOVER_WALL_S / 5:  # a slow call: its rows go to disk now, not after the flusher's second
            recorder.flush()
        span = longest if wall <= 0.0 else min(longest, (t_now - t0) * HANDOVER_WALL_S / wall)
        if on_row is not None:
            on_row(t_now)
        if t_now > env.now:
            yield At(env, t_now)
        if status == DONE:
            break
        _after_hand_over(world, build, sc, status, t_from, mission.max_step_s)
    _hand_back(world, build, sc)


def _after_hand_over(world, build, sc, status: int, t_from: float, max_step_s: float) -> None:
    """Refill the noise, or raise the error that stopped the loop (the objects first left as the Python path
    leaves them)."""
    if status == REFILL:
        _refill(world, build)
        return
    if status in (GIMBAL_LOCK, DIVERGED, UNIT_FAULT):
        _hand_back(world, build, sc)
    if status == GIMBAL_LOCK:
        sc.gimbal_lock()
    elif status == UNIT_FAULT:
        raise _unit_fault(world, build, int(t_from), sc.t_plant_s)
    elif status == DIVERGED:
        from .checks import _check_state

        q, w = sc._q_w
        _check_state(q, w, t_from, sc.t_plant_s, max_step_s)  # raises DivergenceError saying what failed
        raise DivergenceError(sc.t_plant_s, "the state failed its check", t_from, max_step_s)
