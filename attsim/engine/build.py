"""A compiled run's World, built from a mission's components through the kinds' parts.

:func:`compiled_form` decides whether a mission can run compiled: every
component belongs to a kind part (its class names ``loop_part``) that
compiles it. :func:`build_world` then fills the World at the start of the
run, after the components were prepared and started: the parts give their
components' rows, their work on the engine's clock and timeline, their
banks and their row writers (:class:`Build` is what they are handed), and
the engine assembles the clock, the timeline, the noise draws, the row
layout and the buffers around them. The engine names no component class:
what a kind holds is its part's business (:class:`attsim.engine.component.LoopPart`).
"""

from __future__ import annotations

from collections import Counter
from typing import NamedTuple

import numpy as np

from .._core.timegrid import snap_time
from .backend import RunUnits
from .plant import WRITE_HEAD, advance_unit_for
from .world import (EVENT_WIDTH, KIND_PARTS, ROLE_CONTROL, ROLE_ESTIMATE, ROLE_MODES, ROLE_SAMPLE, Buffers, Clock,
                    Noise, Rows, Timeline, World)

__all__ = ["compiled_form", "build_world", "Build", "ROWS_BLOCK", "EVENTS_BLOCK", "NORMALS_BLOCK"]

ROWS_BLOCK = 4096  # telemetry rows per hand-over at most
EVENTS_BLOCK = 1024
NORMALS_BLOCK = 6 * 4096  # draws held per noise row between refills
_ROLES = {"sample": ROLE_SAMPLE, "estimate": ROLE_ESTIMATE, "modes": ROLE_MODES, "control": ROLE_CONTROL}
# time-tagged work at one instant: fault boundaries, then schedule switches, then command playback
_GROUPS = {"faults": 0, "schedules": 1, "playback": 2}


class ClockEntry(NamedTuple):
    role: int
    period_s: float
    phase_s: float
    component: object
    unit: object
    row: int
    noise: list
    active: bool


class TimelineEntry(NamedTuple):
    group: int
    times_s: list
    unit: object
    row: int
    late: bool


def _part_of(component, mission):
    part = getattr(component, "loop_part", None)
    return part if part is not None and part.compiles(component, mission) else None


def compiled_form(mission) -> bool:
    """True when every component of ``mission`` has a compiled form in its kind's part."""
    return all(_part_of(c, mission) is not None for c in mission.components)


class Build:
    """What a kind's part is handed while a compiled run is built: rows, slots, clock and timeline entries."""

    def __init__(self, mission, spacecraft, components: dict):
        self.mission, self.spacecraft, self.duration_s = mission, spacecraft, mission.duration_s
        self._components = components  # part slot -> its components in mission order
        self._rows: dict[int, int] = {}
        self._order = {id(c): k for k, c in enumerate(mission.components)}
        self._clock_rows: dict[int, int] = {}
        self._slots = {"sample": [], "at_time": [], "write": [WRITE_HEAD]}
        self.noise: list = []  # (draws a sample, generator) per noise row
        self._noise_rows: dict[int, int] = {}

    def assign_rows(self) -> None:
        for part in KIND_PARTS:
            components = self._components[part.slot]
            rows = part.rows(components, self.spacecraft) if hasattr(part, "rows") else \
                {c: k for k, c in enumerate(components)}
            self._rows.update({id(c): row for c, row in rows.items()})

    def row(self, component) -> int:
        """``component``'s row in its kind's bank."""
        return self._rows[id(component)]

    def components(self, part) -> list:
        return self._components[part.slot]

    def components_of(self, slot: str) -> list:
        return self._components[slot]

    def _slot(self, kind: str, unit) -> int:
        names = [u.cache_name() for u in self._slots[kind]]
        if unit.cache_name() not in names:
            self._slots[kind].append(unit)
            names.append(unit.cache_name())
        return names.index(unit.cache_name())

    def sampler_slot(self, unit) -> int:
        return self._slot("sample", unit)

    def writer_slot(self, unit) -> int:
        return self._slot("write", unit)

    def at_time_slot(self, unit) -> int:
        return self._slot("at_time", unit)

    def noise_row(self, component, draws: int, rng) -> int:
        """A row of the run's noise draws for ``component`` (``draws`` a sample, from its own generator)."""
        self.noise.append((int(draws), rng))
        self._noise_rows[id(component)] = len(self.noise) - 1
        return len(self.noise) - 1

    def noise_row_of(self, component) -> int:
        """The noise row ``component`` draws from (-1: none)."""
        return self._noise_rows.get(id(component), -1)

    def clock_entry(self, role: str, component, unit, row: int, noise, active: bool = True) -> ClockEntry:
        return ClockEntry(_ROLES[role], component.period_s, component.phase_s, component, unit, row, list(noise),
                          bool(active))

    def timeline_entry(self, group: str, times_s, unit, row: int, late: bool = False) -> TimelineEntry:
        return TimelineEntry(_GROUPS[group], list(times_s), unit, row, late)

    def sort_clock(self, entries: list) -> list:
        entries = sorted(entries, key=lambda e: (e.role, self._order[id(e.component)]))
        self._clock_rows = {id(e.component): i for i, e in enumerate(entries)}
        return entries

    def clock_row(self, component) -> int:
        """``component``'s row of the engine's clock (-1: none)."""
        return self._clock_rows.get(id(component), -1)


def _clock(entries: list, build: Build) -> Clock:
    width = max([len(e.noise) for e in entries] + [1])
    noise = np.full((len(entries), width), -1, dtype=np.int64)
    for i, entry in enumerate(entries):
        for j, component in enumerate(entry.noise):
            noise[i, j] = build.noise_row_of(component)
    return Clock(np.array([e.period_s for e in entries], dtype=float), np.array([e.phase_s for e in entries],
                                                                                dtype=float),
                 np.zeros(len(entries), dtype=np.int64),
                 np.array([snap_time.py_func(e.phase_s) for e in entries], dtype=float),  # grid_time(phase, 0, ...)
                 np.array([1.0 if e.active else 0.0 for e in entries]),
                 np.array([build.at_time_slot(e.unit) for e in entries], dtype=np.int64),
                 np.array([e.row for e in entries], dtype=np.int64), noise)


def _timeline(entries: list, build: Build) -> Timeline:
    width = max([len(e.times_s) for e in entries] + [1])
    times = np.full((len(entries), width), np.inf)
    for i, entry in enumerate(entries):
        times[i, :len(entry.times_s)] = entry.times_s
    return Timeline(times, np.array([len(e.times_s) for e in entries], dtype=np.int64),
                    np.zeros(len(entries), dtype=np.int64),
                    np.array([build.at_time_slot(e.unit) for e in entries], dtype=np.int64),
                    np.array([e.row for e in entries], dtype=np.int64),
                    np.array([1.0 if e.late else 0.0 for e in entries]))


def _noise(build: Build) -> Noise:
    normals = np.zeros((len(build.noise), NORMALS_BLOCK))
    for n, (draws, rng) in enumerate(build.noise):
        if draws:
            normals[n] = rng.standard_normal(NORMALS_BLOCK)
    return Noise(normals, np.zeros(len(build.noise), dtype=np.int64),
                 np.array([d for d, _ in build.noise], dtype=np.int64))


def _rows(mission, build: Build) -> Rows:
    layout = []
    for component in mission.components:
        made = component.loop_part.writer(component, build)
        if made is not None:
            unit, row = made
            layout.append((build.writer_slot(unit), row))
    writers = np.array([w for w, _ in layout], dtype=np.int64)
    return Rows(mission.telemetry_dt_s, mission.duration_s, np.zeros(1, dtype=np.int64), np.zeros(1), writers,
                np.array([r for _, r in layout], dtype=np.int64))


def _events_per_instant(build: Build) -> int:
    """The most events one instant can log (the loop keeps that much room before every instant)."""
    per_part = sum(part.events_per_instant(build.components(part), build) for part in KIND_PARTS)
    return per_part + 1


# a kind's bank without components, when it holds no element at all (every array empty): nothing can write to it,
# so one serves every run (making it cost a run more than its loop in small missions)
_EMPTY_BANKS: dict[str, object] = {}


def _holds_nothing(value) -> bool:
    if isinstance(value, np.ndarray):
        return value.size == 0
    if isinstance(value, tuple):
        return all(_holds_nothing(v) for v in value)
    return True


def _bank(part, components: list, build: Build):
    """``part``'s bank of ``components`` (:meth:`build`), or the shared empty one."""
    if components:
        return part.build(components, build)
    if part.slot not in _EMPTY_BANKS:
        bank = part.build([], build)
        _EMPTY_BANKS[part.slot] = bank if _holds_nothing(bank) else None
        return bank
    return _EMPTY_BANKS[part.slot] or part.build([], build)


def build_world(mission, sc, width: int):
    """The World of ``mission`` at ``t = 0`` on the plant of ``sc`` (components prepared and started), the
    :class:`Build` that made it and the units the run needs; ``width`` is a telemetry row's (t included)."""
    components = {part.slot: [] for part in KIND_PARTS}
    for component in mission.components:
        components[component.loop_part.slot].append(component)
    build = Build(mission, sc, components)
    build.assign_rows()
    clock, timeline = [], []
    for part in KIND_PARTS:
        entries = part.schedule(components[part.slot], build)
        clock += entries[0]
        timeline += entries[1]
    clock = build.sort_clock(clock)
    timeline = sorted(timeline, key=lambda e: e.group)
    banks = {part.slot: _bank(part, components[part.slot], build) for part in KIND_PARTS}
    base = sc.plant_parts()
    per_instant = _events_per_instant(build)
    buffers = Buffers(np.empty((ROWS_BLOCK, width)), np.zeros((max(EVENTS_BLOCK, 4 * per_instant), EVENT_WIDTH)),
                      np.zeros(2, dtype=np.int64), base.stops, per_instant)
    world = World(plant=base.plant, environment=base.environment, noise=_noise(build), clock=_clock(clock, build),
                  timeline=_timeline(timeline, build), rows=_rows(mission, build), buffers=buffers, **banks)
    sc.adopt(world)
    integrated = bool(world.actuators.wheels.work[0, 2] != 0.0)  # W_INTEGRATED: friction or imbalance
    options = {}
    for part in KIND_PARTS:
        options.update(getattr(part, "unit_options", {}))
    units = RunUnits(list(build._slots["sample"]), list(build._slots["at_time"]), list(build._slots["write"]),
                     advance_unit_for(sc._integrator, integrated),
                     next(part.hold_unit for part in KIND_PARTS if hasattr(part, "hold_unit")), options)
    return world, build, units


def most_at_once(times) -> int:
    """The most entries of ``times`` at one time."""
    return max(Counter(times).values(), default=0)
