"""The mode manager's part of the compiled mission: its bank, its check unit, its row and events.

A mission has at most one :class:`~attsim.control.modes.ModeManager`; its
:class:`ModeBank` has no rows without one. At each of its cycles
(:func:`check_modes`, on the engine's clock before the controllers) it tries
its transitions in order, as :meth:`ModeManager.bring_up_to_date` does; the
first whose condition held for its dwell time switches the mode: the
controllers that stop have their actuators zeroed, the ones that start begin
afresh (their memory zeroed), the engine's clock runs only the running ones,
and the switch is logged.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .._core.events import log_event
from .._core.jit import LOOP_INLINED, njit
from .._core.units import Unit, deref
from ..actuators.kernels import wheel_speed
from ..environment.table import P_SRP, lerp1, table_cell
from ..guidance.kernels import error_angle_deg
from ..guidance.kernels import reference_now
from .loop import law_attitude, stop_law

_JIT = dict(cache=True, nogil=True, error_model="numpy", **LOOP_INLINED)  # inlined in the units

__all__ = ["ModeBank", "PART", "EVENT_MODE", "check_modes", "RATE_BELOW", "RATE_ABOVE", "IN_ECLIPSE", "IN_SUNLIGHT",
           "WHEEL_SPEED_ABOVE", "TIMEOUT", "AT_TIME", "POINTING_BELOW"]

# the mode manager's event: (t, EVENT_MODE, mode entered, mode left, transition, ...)
EVENT_MODE = 41
# the kinds of transition condition (attsim.control.modes builds them)
RATE_BELOW, RATE_ABOVE, IN_ECLIPSE, IN_SUNLIGHT, WHEEL_SPEED_ABOVE, TIMEOUT, AT_TIME, POINTING_BELOW = range(8)


class ModeBank(NamedTuple):
    """The mission's mode manager: ``state`` (current mode, time it was entered); ``members[m, c]`` 1 when
    controller ``c`` runs in mode ``m``; ``managed[c]`` when it is in any mode. Transition ``k``: from mode
    ``tr_from[k]`` (-1: any) to ``tr_to[k]``, condition ``tr_kind[k]`` with value and dwell ``tr_params[k]``, source
    ``tr_source[k]`` (the controller row of a pointing condition, the estimator row of a rate condition, -1 the
    truth); ``since[k]`` when it began to hold (NaN)."""

    state: np.ndarray
    members: np.ndarray
    managed: np.ndarray
    tr_from: np.ndarray
    tr_to: np.ndarray
    tr_kind: np.ndarray
    tr_params: np.ndarray
    tr_source: np.ndarray
    since: np.ndarray


@njit(**_JIT)
def _holds(pw, k, t):
    world = deref(pw)
    modes = world.modes
    kind, value = modes.tr_kind[k], modes.tr_params[k, 0]
    v = world.plant.q_w
    env = world.environment
    if kind == POINTING_BELOW:  # tr_source: the attitude law watched
        c = modes.tr_source[k]
        seen = law_attitude(pw, c)
        if math.isnan(seen[0]):
            return False
        q_ref, _, _ = reference_now(world.controllers.target_kind[c], world.controllers.target[c], t, env.env_t,
                                    env.env_v)
        return error_angle_deg(seen, q_ref) < value
    if kind == RATE_BELOW or kind == RATE_ABOVE:
        e = modes.tr_source[k]
        x, y, z = (v[4], v[5], v[6]) if e < 0 else (world.estimators.w_est[e, 0], world.estimators.w_est[e, 1],
                                                    world.estimators.w_est[e, 2])
        norm = math.sqrt(x * x + y * y + z * z)
        return norm < value if kind == RATE_BELOW else norm > value
    if kind == IN_ECLIPSE or kind == IN_SUNLIGHT:
        c, f = table_cell(env.env_t, t)
        lit = lerp1(env.env_v, c, f, P_SRP) > 0.0
        return (not lit) if kind == IN_ECLIPSE else lit
    if kind == WHEEL_SPEED_ABOVE:
        wheels = world.actuators.wheels
        w = (v[4], v[5], v[6])
        for j in range(wheels.axis.shape[0]):
            if abs(wheel_speed(wheels, j, wheels.h_Nms[j], w)) > value * wheels.max_speed_rad_s[j]:
                return True
        return False
    if kind == TIMEOUT:
        return t - modes.state[1] >= value
    return t >= value  # attsim.control.modes.AT_TIME


@njit(**_JIT)
def _switch(pw, k, t):
    """Transition ``k`` fires at ``t``: stop the controllers leaving (actuators zeroed), restart the ones coming in,
    log the switch (what: the mode entered, index: the mode left, v0: the transition)."""
    world = deref(pw)
    modes, controllers, clock = world.modes, world.controllers, world.clock
    new = modes.tr_to[k]
    for c in range(controllers.period_s.shape[0]):
        if modes.managed[c] == 0.0:
            continue
        running = modes.members[new, c]
        row = controllers.clock_row[c]
        if clock.active[row] != 0.0 and running == 0.0:
            stop_law(pw, c, t)
        if running != 0.0 and clock.active[row] == 0.0:  # a B-dot samples afresh, a QPD's integral restarts
            for i in range(4):
                controllers.memory[c, i] = 0.0
        clock.active[row] = running
    log_event(world.buffers, t, EVENT_MODE, new, int(modes.state[0]), float(k), 0.0, 0.0)
    modes.state[0], modes.state[1] = new, t
    modes.since[:] = np.nan


def check_modes(pw, samplers, t, row):
    """The manager's check at ``t``: transitions in order, each condition held for its dwell time."""
    world = deref(pw)
    modes = world.modes
    current = int(modes.state[0])
    for k in range(modes.tr_kind.shape[0]):
        if (modes.tr_from[k] >= 0 and modes.tr_from[k] != current) or modes.tr_to[k] == current:
            modes.since[k] = np.nan
            continue
        if _holds(pw, k, t):
            if math.isnan(modes.since[k]):
                modes.since[k] = t
            if t - modes.since[k] >= modes.tr_params[k, 1]:
                _switch(pw, k, t)
                return 0
        else:
            modes.since[k] = np.nan
    return 0


def write_mode(pw, t, row, col):
    """The current mode's index into the row being written; returns the next column."""
    world = deref(pw)
    world.buffers.rows[world.buffers.counts[0], col] = world.modes.state[0]
    return col + 1


CHECK_MODES = Unit(check_modes, "check_modes", {})
WRITE_MODE = Unit(write_mode, "write_mode", {})


class ModePart:
    """The mode manager in the compiled mission (the protocol: :class:`attsim.engine.component.LoopPart`)."""

    slot = "modes"
    bank_type = ModeBank

    def compiles(self, manager, mission) -> bool:
        return True

    def empty(self) -> ModeBank:
        return self.build([], None)

    def schedule(self, managers, build):
        return [build.clock_entry("modes", m, CHECK_MODES, 0, []) for m in managers], []

    def events_per_instant(self, managers, build) -> int:
        """A switch: every stopped law's actuators zeroed (their saturation changes) and the switch itself."""
        laws = build.components_of("controllers")
        return (len(laws) * (2 * len(build.spacecraft.wheel_names) + 1) + 1) if managers else 0

    def build(self, managers, build) -> ModeBank:
        manager = managers[0] if managers else None
        laws = build.components_of("controllers") if build is not None else []
        if manager is None:
            return ModeBank(np.zeros(2), np.zeros((0, len(laws))), np.zeros(len(laws)), np.zeros(0, dtype=np.int64),
                            np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros((0, 2)),
                            np.zeros(0, dtype=np.int64), np.zeros(0))
        names = manager.mode_names
        members = np.array([[1.0 if c in mode.controllers else 0.0 for c in laws] for mode in manager.modes])
        transitions = manager.transitions
        return ModeBank(
            state=np.array([float(manager.current), manager.entered_s]), members=members.reshape(len(names), -1),
            managed=np.array([1.0 if c in manager.managed else 0.0 for c in laws]),
            tr_from=np.array([-1 if t.source == "*" else names.index(t.source) for t in transitions], dtype=np.int64),
            tr_to=np.array([names.index(t.target) for t in transitions], dtype=np.int64),
            tr_kind=np.array([t.condition.kind for t in transitions], dtype=np.int64),
            tr_params=np.array([(t.condition.value, t.condition.dwell_s) for t in transitions],
                               dtype=float).reshape(-1, 2),
            tr_source=np.array([manager.loop_source(t.condition, build) for t in transitions], dtype=np.int64),
            since=np.full(len(transitions), np.nan))

    def units(self) -> list:
        """The manager's check and writer, each with the kind of its signature."""
        return [(CHECK_MODES, "at_time", {}), (WRITE_MODE, "write", {})]

    def writer(self, manager, build):
        return WRITE_MODE, 0

    def hand_back(self, bank: ModeBank, managers, build) -> None:
        """The manager ends as the Python path leaves it: its mode and when it was entered, its laws running or
        not."""
        laws = build.components_of("controllers")
        for manager in managers:
            manager.current, manager.entered_s = int(bank.state[0]), float(bank.state[1])
            for c, law in enumerate(laws):
                if bank.managed[c] != 0.0:
                    law.active = bank.members[manager.current, c] != 0.0

    def event(self, recorder, t: float, kind: int, what: int, index: int, values, build) -> bool:
        if kind != EVENT_MODE:
            return False
        manager = build.components(self)[0]
        recorder.event(t, "mode", manager=manager.name, before=manager.mode_names[index],
                       after=manager.mode_names[what], reason=manager.transitions[int(values[0])].condition.describe())
        return True

    def fault(self, bank, managers, row: int, t: float, build) -> Exception | None:
        return None


PART = ModePart()
