"""The actuators' part of the compiled mission: their banks, their units, their rows and events.

One :class:`ActuatorBank`: the reaction wheels (the plant's own
:class:`~attsim.actuators.kernels.WheelBank`, which the Python objects read
too), the magnetorquer sets, the torque schedules and the command playbacks.
The units here switch schedules and play commands at their times (on the
engine's timeline), hold the commands for the plant (:func:`hold`), write
the actuators' columns, and apply the commands controllers give
(:func:`command_wheel`, :func:`command_dipole`, which log the start and end
of saturation as the Python objects do).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._core.events import log_event
from .._core.jit import LOOP_INLINED, njit
from .._core.units import Unit, deref
from .kernels import (SATURATION_NONE, WheelBank, empty_wheel_bank, magnetorquer_bars, magnetorquer_dipole,
                      wheel_command, wheels_total)
from .wheel_dynamics import write_wheel_row

__all__ = ["ActuatorBank", "MagnetorquerBank", "ScheduleBank", "PlaybackBank", "PART", "command_wheel",
           "command_dipole", "command_bars", "command_body_torque", "command_body_torque_later", "apply_body_torque",
           "PLAYBACK_BODY_TORQUE",
           "EVENT_SATURATION", "EVENT_SATURATION_END", "EVENT_COMMAND", "EVENT_PLAYBACK",
           "WHAT_TORQUE", "WHAT_SPEED", "WHAT_DIPOLE", "PLAYBACK_WHEEL", "PLAYBACK_MAGNETORQUER"]

_JIT = dict(cache=True, nogil=True, error_model="numpy", **LOOP_INLINED)
# the actuators' events: (t, kind, what, index, v0, v1, v2, v3); a saturation's what is WHAT_*, index its row
EVENT_SATURATION, EVENT_SATURATION_END, EVENT_COMMAND, EVENT_PLAYBACK = 20, 21, 22, 23
WHAT_TORQUE, WHAT_SPEED, WHAT_DIPOLE = 0, 1, 2
PLAYBACK_WHEEL, PLAYBACK_MAGNETORQUER, PLAYBACK_BODY_TORQUE = 0, 1, 2
# held inputs of the plant (attsim.engine.world.HELD_*), as the hold unit writes them
_T0, _TAU_EXT, _DIPOLE, _TAU_W, _H_W = 0, 1, 4, 7, 10


class MagnetorquerBank(NamedTuple):
    """One row per set of magnetorquers (:class:`~attsim.Magnetorquer`), its bars padded to the widest set's:
    ``steering`` (rows of ``G⁺``) and ``axes`` (the bars' unit axes), each ``(sets, bars, 3)``; each bar's limit
    ``limit_Am2`` (A m², 1.0 where padded) and applied dipole ``bars_Am2``; ``bar_columns`` how many bar columns
    the set writes (0: three bars on the body axes, whose body dipole says it all); scale (1) or clip (0), the
    applied body dipole (A m², body axes), saturated (1.0 while a limit cuts the request)."""

    steering: np.ndarray
    axes: np.ndarray
    limit_Am2: np.ndarray
    bars_Am2: np.ndarray
    bar_columns: np.ndarray
    scale: np.ndarray
    dipole_Am2: np.ndarray
    saturated: np.ndarray


class ScheduleBank(NamedTuple):
    """One row per torque schedule: its change times (padded), the held torque after each, the count, the
    next change's index and the torque held now (N m, body axes)."""

    times_s: np.ndarray
    torque_Nm: np.ndarray
    count: np.ndarray
    next_k: np.ndarray
    current_Nm: np.ndarray


class PlaybackBank(NamedTuple):
    """One row per command schedule: its command times (padded), the commands (a wheel torque in column 0, or a
    dipole), the count, the next command's index, and the actuator it drives (``target``: ``PLAYBACK_WHEEL``
    or ``PLAYBACK_MAGNETORQUER``; ``index``: its row)."""

    times_s: np.ndarray
    values: np.ndarray
    count: np.ndarray
    next_k: np.ndarray
    target: np.ndarray
    index: np.ndarray


class ActuatorBank(NamedTuple):
    """The actuators of a compiled run, by kind; ``body_torque_Nm`` one row per :class:`~attsim.BodyTorque`, the
    torque it holds (N m, body axes), and ``body_torque_cmd_Nm`` the torque last commanded to it (decided: held
    ``command_delay_s`` earlier than applied by a delayed law)."""

    wheels: WheelBank
    magnetorquers: MagnetorquerBank
    schedules: ScheduleBank
    playback: PlaybackBank
    body_torque_Nm: np.ndarray
    body_torque_cmd_Nm: np.ndarray


@njit(**_JIT)
def command_wheel(pw, j, requested, t):
    """Hold the motor torque ``requested`` on wheel ``j`` (limits applied), logging saturation changes."""
    world = deref(pw)
    w = (world.plant.q_w[4], world.plant.q_w[5], world.plant.q_w[6])
    _, torque_change, speed_change, speed = wheel_command(world.actuators.wheels, j, requested, w)
    if torque_change != SATURATION_NONE:
        log_event(world.buffers, t, EVENT_SATURATION if torque_change == 1 else EVENT_SATURATION_END, WHAT_TORQUE, j,
                  requested, 0.0, 0.0)
    if speed_change != SATURATION_NONE:
        log_event(world.buffers, t, EVENT_SATURATION if speed_change == 1 else EVENT_SATURATION_END, WHAT_SPEED, j,
                  speed, 0.0, 0.0)


@njit(**_JIT)
def command_dipole(pw, i, m, t):
    """Hold the dipole ``m`` (A m², body axes) on magnetorquer set ``i`` (limits applied), logging saturation."""
    world = deref(pw)
    magnetorquers = world.actuators.magnetorquers
    applied, saturated = magnetorquer_dipole(m, magnetorquers.steering[i], magnetorquers.axes[i],
                                             magnetorquers.limit_Am2[i], magnetorquers.scale[i] != 0.0,
                                             magnetorquers.bars_Am2[i])
    _hold_dipole(pw, i, applied, m, saturated, t)


@njit(**_JIT)
def command_bars(pw, i, values, start, count, t):
    """Hold on magnetorquer set ``i`` each bar's own dipole, ``values[start:start + count]`` (A m², along its axis,
    in the set's order of bars; limits applied), logging saturation with the body dipole requested."""
    world = deref(pw)
    magnetorquers = world.actuators.magnetorquers
    bars = magnetorquers.bars_Am2[i]
    for k in range(bars.shape[0]):  # a padded bar (past the set's own) takes nothing
        bars[k] = values[start + k] if k < count else 0.0
    applied, requested, saturated = magnetorquer_bars(magnetorquers.axes[i], magnetorquers.limit_Am2[i],
                                                      magnetorquers.scale[i] != 0.0, bars)
    _hold_dipole(pw, i, applied, requested, saturated, t)


@njit(**_JIT)
def _hold_dipole(pw, i, applied, requested, saturated, t):
    """Set ``i``'s applied body dipole held, a change of saturation logged with the body dipole ``requested``."""
    world = deref(pw)
    magnetorquers = world.actuators.magnetorquers
    flag = 1.0 if saturated else 0.0
    if flag != magnetorquers.saturated[i]:
        log_event(world.buffers, t, EVENT_SATURATION if saturated else EVENT_SATURATION_END, WHAT_DIPOLE, i,
                  requested[0], requested[1], requested[2])
        magnetorquers.saturated[i] = flag
    magnetorquers.dipole_Am2[i, 0], magnetorquers.dipole_Am2[i, 1], magnetorquers.dipole_Am2[i, 2] = applied


@njit(**_JIT)
def apply_body_torque(pw, i, tau, t):
    """Hold the torque ``tau`` (N m, body axes) on body-torque actuator ``i`` (ideal: no limit), as commanded
    earlier (:func:`command_body_torque_later`)."""
    world = deref(pw)
    row = world.actuators.body_torque_Nm[i]
    row[0], row[1], row[2] = tau[0], tau[1], tau[2]


@njit(**_JIT)
def command_body_torque_later(pw, i, tau, t):
    """Note the torque ``tau`` as commanded now to body-torque actuator ``i``, applied later
    (:func:`apply_body_torque`, a delayed law's)."""
    world = deref(pw)
    row = world.actuators.body_torque_cmd_Nm[i]
    row[0], row[1], row[2] = tau[0], tau[1], tau[2]


@njit(**_JIT)
def command_body_torque(pw, i, tau, t):
    """Command the torque ``tau`` (N m, body axes) to body-torque actuator ``i`` and hold it from now."""
    command_body_torque_later(pw, i, tau, t)
    apply_body_torque(pw, i, tau, t)


def hold(pw, t):
    """The plant's held inputs from ``t``: the schedules' torques, the dipoles, the wheels' torque and momentum."""
    world = deref(pw)
    a = world.actuators
    held = world.plant.held
    ext_x = ext_y = ext_z = 0.0
    for k in range(a.schedules.count.shape[0]):
        ext_x += a.schedules.current_Nm[k, 0]
        ext_y += a.schedules.current_Nm[k, 1]
        ext_z += a.schedules.current_Nm[k, 2]
    for i in range(a.body_torque_Nm.shape[0]):
        ext_x += a.body_torque_Nm[i, 0]
        ext_y += a.body_torque_Nm[i, 1]
        ext_z += a.body_torque_Nm[i, 2]
    mx = my = mz = 0.0
    for i in range(a.magnetorquers.scale.shape[0]):
        mx += a.magnetorquers.dipole_Am2[i, 0]
        my += a.magnetorquers.dipole_Am2[i, 1]
        mz += a.magnetorquers.dipole_Am2[i, 2]
    tau_w, h_w = wheels_total(a.wheels)
    held[_T0] = t
    held[_TAU_EXT], held[_TAU_EXT + 1], held[_TAU_EXT + 2] = ext_x, ext_y, ext_z
    held[_DIPOLE], held[_DIPOLE + 1], held[_DIPOLE + 2] = mx, my, mz
    held[_TAU_W], held[_TAU_W + 1], held[_TAU_W + 2] = tau_w
    held[_H_W], held[_H_W + 1], held[_H_W + 2] = h_w
    return 0


def switch_schedule(pw, samplers, t, k):
    """Torque schedule ``k`` switches at ``t`` to its next held torque (logged as a command)."""
    world = deref(pw)
    schedules = world.actuators.schedules
    j = schedules.next_k[k]
    cur = schedules.current_Nm[k]
    cur[0], cur[1], cur[2] = schedules.torque_Nm[k, j, 0], schedules.torque_Nm[k, j, 1], schedules.torque_Nm[k, j, 2]
    schedules.next_k[k] = j + 1
    log_event(world.buffers, t, EVENT_COMMAND, WHAT_TORQUE, k, cur[0], cur[1], cur[2])
    return 0


def play_command(pw, samplers, t, k):
    """Command playback ``k``'s next command at ``t``: logged as given, then applied to its actuator."""
    world = deref(pw)
    playback = world.actuators.playback
    j = playback.next_k[k]
    v = playback.values[k, j]
    log_event(world.buffers, t, EVENT_PLAYBACK, playback.target[k], k, v[0], v[1], v[2])
    world.buffers.events[world.buffers.counts[1] - 1, 7] = j  # which command, for the event log's own copy of it
    if playback.target[k] == PLAYBACK_WHEEL:
        command_wheel(pw, playback.index[k], v[0], t)
    elif playback.target[k] == PLAYBACK_BODY_TORQUE:
        command_body_torque(pw, playback.index[k], (v[0], v[1], v[2]), t)
    else:
        command_dipole(pw, playback.index[k], (v[0], v[1], v[2]), t)
    playback.next_k[k] = j + 1
    return 0


def write_schedule(pw, t, k, col):
    """Torque schedule ``k``'s held torque into the row being written; returns the next column."""
    world = deref(pw)
    row = world.buffers.rows[world.buffers.counts[0]]
    for a in range(3):
        row[col + a] = world.actuators.schedules.current_Nm[k, a]
    return col + 3


def write_magnetorquer(pw, t, i, col):
    """Magnetorquer set ``i``'s applied dipole (and its bars', when it writes them) into the row being written;
    returns the next column."""
    world = deref(pw)
    row = world.buffers.rows[world.buffers.counts[0]]
    magnetorquers = world.actuators.magnetorquers
    for a in range(3):
        row[col + a] = magnetorquers.dipole_Am2[i, a]
    for k in range(magnetorquers.bar_columns[i]):
        row[col + 3 + k] = magnetorquers.bars_Am2[i, k]
    return col + 3 + magnetorquers.bar_columns[i]


def write_body_torque(pw, t, i, col):
    """Body-torque actuator ``i``'s columns (``telemetry.schema.BODY_TORQUE_SUFFIXES``: the held torque, then the
    commanded one) into the row being written; returns the next column."""
    world = deref(pw)
    row = world.buffers.rows[world.buffers.counts[0]]
    for a in range(3):
        row[col + a] = world.actuators.body_torque_Nm[i, a]
        row[col + 3 + a] = world.actuators.body_torque_cmd_Nm[i, a]
    return col + 6


def write_wheel(pw, t, j, col):
    """Wheel ``j``'s columns (:func:`~attsim.actuators.wheel_dynamics.write_wheel_row`) into the row being
    written; returns the next column."""
    world = deref(pw)
    w = (world.plant.q_w[4], world.plant.q_w[5], world.plant.q_w[6])
    return write_wheel_row(world.actuators.wheels, j, w, world.buffers.rows[world.buffers.counts[0]], col)


HOLD = Unit(hold, "hold", {})
SWITCH_SCHEDULE = Unit(switch_schedule, "switch_schedule", {})
PLAY_COMMAND = Unit(play_command, "play_command", {})
WRITERS = {"wheel": Unit(write_wheel, "write_wheel", {}), "magnetorquer": Unit(write_magnetorquer,
           "write_magnetorquer", {}), "schedule": Unit(write_schedule, "write_schedule", {}),
           "body_torque": Unit(write_body_torque, "write_body_torque", {})}


def _magnetorquer_bank(magnetorquers) -> MagnetorquerBank:
    """The sets' bars in rows padded to the widest set (a padded bar has no axis: it never acts)."""
    m = len(magnetorquers)
    width = max([q.dipole_max_Am2.size for q in magnetorquers] + [3])
    bank = MagnetorquerBank(np.zeros((m, width, 3)), np.zeros((m, width, 3)), np.ones((m, width)),
                            np.zeros((m, width)), np.zeros(m, dtype=np.int64),
                            np.array([1.0 if q.saturation == "scale" else 0.0 for q in magnetorquers]),
                            np.zeros((m, 3)), np.zeros(m))
    for i, q in enumerate(magnetorquers):
        n = q.dipole_max_Am2.size
        bank.steering[i, :n], bank.axes[i, :n] = q._steering, q._axes
        bank.limit_Am2[i, :n] = q.dipole_max_Am2
        bank.bar_columns[i] = 0 if q.bar_axes is None else n
    return bank


def _schedule_bank(schedules, duration_s: float) -> ScheduleBank:
    changes = [sorted({t for t0, t1, _ in s.segments for t in (t0, t1) if t <= duration_s}) for s in schedules]
    width = max([len(c) for c in changes] + [1])
    times = np.full((len(schedules), width), np.inf)
    torque = np.zeros((len(schedules), width, 3))
    for k, (schedule, moments) in enumerate(zip(schedules, changes)):
        if moments:  # a schedule whose segments all lie after the end has none
            times[k, :len(moments)] = moments
            torque[k, :len(moments)] = [schedule.torque_at(t) for t in moments]  # the Python path's own sums
    return ScheduleBank(times, torque, np.array([len(c) for c in changes], dtype=np.int64),
                        np.zeros(len(schedules), dtype=np.int64), np.zeros((len(schedules), 3)))


def _playback_bank(playbacks, build, duration_s: float) -> PlaybackBank:
    n = len(playbacks)
    due = [[(t, value) for t, value in p.commands if t <= duration_s] for p in playbacks]  # later ones never come
    width = max([len(d) for d in due] + [1])
    times, values = np.full((n, width), np.inf), np.zeros((n, width, 3))
    target, index = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)
    kinds = {"wheel": PLAYBACK_WHEEL, "magnetorquer": PLAYBACK_MAGNETORQUER, "body_torque": PLAYBACK_BODY_TORQUE}
    for k, playback in enumerate(playbacks):
        on_wheel = playback.actuator.loop_role == "wheel"
        target[k] = kinds[playback.actuator.loop_role]
        index[k] = build.row(playback.actuator)
        for j, (t, value) in enumerate(due[k]):
            times[k, j] = t
            if on_wheel:
                values[k, j, 0] = float(value)
            else:
                values[k, j] = np.asarray(value, dtype=float)
    return PlaybackBank(times, values, np.array([len(d) for d in due], dtype=np.int64), np.zeros(n, dtype=np.int64),
                        target, index)


def _most_at_once(commands) -> int:
    from collections import Counter

    return max(Counter(t for t, _ in commands).values(), default=0)


class ActuatorPart:
    """The actuators in the compiled mission (the protocol: :class:`attsim.engine.component.LoopPart`).

    Each actuator class names its bank in ``loop_role``: "wheel", "magnetorquer", "schedule", "playback" or
    "body_torque".
    """

    slot = "actuators"
    bank_type = ActuatorBank
    hold_unit = HOLD

    def compiles(self, actuator, mission) -> bool:
        return getattr(actuator, "loop_role", None) is not None and actuator.loop_ready(mission)

    def rows(self, actuators, spacecraft) -> dict:
        """Each actuator's row in its bank: a wheel's is the plant's (registered at its start), the others in
        mission order."""
        rows, counts = {}, {}
        for actuator in actuators:
            role = actuator.loop_role
            rows[actuator] = spacecraft.wheel_names.index(actuator.name) if role == "wheel" else counts.get(role, 0)
            counts[role] = counts.get(role, 0) + 1
        return rows

    def empty(self) -> ActuatorBank:
        return ActuatorBank(empty_wheel_bank(0), _magnetorquer_bank([]),
                            _schedule_bank([], 0.0), PlaybackBank(np.zeros((0, 1)), np.zeros((0, 1, 3)),
                                                                 np.zeros(0, dtype=np.int64),
                                                                 np.zeros(0, dtype=np.int64),
                                                                 np.zeros(0, dtype=np.int64),
                                                                 np.zeros(0, dtype=np.int64)), np.zeros((0, 3)),
                            np.zeros((0, 3)))

    def _of(self, actuators, role):
        return [a for a in actuators if a.loop_role == role]

    def schedule(self, actuators, build):
        """The timeline's schedule switches and command playbacks (after the fault boundaries, in that order)."""
        timeline = []
        for schedule in self._of(actuators, "schedule"):
            moments = sorted({t for t0, t1, _ in schedule.segments for t in (t0, t1) if t <= build.duration_s})
            if moments:
                timeline.append(build.timeline_entry("schedules", moments, SWITCH_SCHEDULE, build.row(schedule)))
        for playback in self._of(actuators, "playback"):
            moments = [t for t, _ in playback.commands if t <= build.duration_s]
            if moments:
                timeline.append(build.timeline_entry("playback", moments, PLAY_COMMAND, build.row(playback)))
        return [], timeline

    def events_per_instant(self, actuators, build) -> int:
        """The most events the actuators' own work logs at one instant: every switch, every played command with
        the saturation changes it causes, every wheel reaching its speed limit."""
        return (len(self._of(actuators, "schedule")) + len(self._of(actuators, "wheel"))
                + sum(3 * _most_at_once(p.commands) for p in self._of(actuators, "playback")))

    def build(self, actuators, build) -> ActuatorBank:
        return ActuatorBank(
            wheels=build.spacecraft.wheels,
            magnetorquers=_magnetorquer_bank(self._of(actuators, "magnetorquer")),
            schedules=_schedule_bank(self._of(actuators, "schedule"), build.duration_s),
            playback=_playback_bank(self._of(actuators, "playback"), build, build.duration_s),
            body_torque_Nm=np.zeros((len(self._of(actuators, "body_torque")), 3)),
            body_torque_cmd_Nm=np.zeros((len(self._of(actuators, "body_torque")), 3)))

    def units(self) -> list:
        """The actuators' units, each with the kind of its signature and its options."""
        return [(HOLD, "hold", {}), (SWITCH_SCHEDULE, "at_time", {}), (PLAY_COMMAND, "at_time", {})] + \
            [(unit, "write", {}) for unit in WRITERS.values()]

    def writer(self, actuator, build):
        unit = WRITERS.get(actuator.loop_role)
        return None if unit is None else (unit, build.row(actuator))

    def hand_back(self, bank, actuators, build) -> None:
        return None  # the wheels' bank is the plant's own; the held commands are the plant's (the engine's)

    def event(self, recorder, t: float, kind: int, what: int, index: int, values, build) -> bool:
        """Log an actuator event of the loop's rows as the Python path does; False for another kind's."""
        actuators = build.components(self)
        if kind == EVENT_PLAYBACK:  # the Python path logs the command as given, before the actuator acts
            playback = self._of(actuators, "playback")[index]
            recorder.event(t, "command", actuator=playback.actuator_name,
                           command=np.asarray(playback.commands[int(values[3])][1], dtype=float).tolist())
        elif kind == EVENT_COMMAND:
            recorder.event(t, "command", actuator=self._of(actuators, "schedule")[index].name,
                           torque_Nm=[float(v) for v in values[:3]])
        elif kind == EVENT_SATURATION or kind == EVENT_SATURATION_END:
            label = "saturation" if kind == EVENT_SATURATION else "saturation_end"
            if what == WHAT_DIPOLE:
                recorder.event(t, label, actuator=self._of(actuators, "magnetorquer")[index].name, what="dipole",
                               requested=[float(v) for v in values[:3]])
            elif what == WHAT_TORQUE:
                recorder.event(t, label, actuator=build.spacecraft.wheel_names[index], what="torque",
                               requested=float(values[0]))
            else:
                recorder.event(t, label, actuator=build.spacecraft.wheel_names[index], what="speed",
                               speed_rad_s=float(values[0]))
        else:
            return False
        return True

    def fault(self, bank, actuators, row: int, t: float, build) -> Exception | None:
        return None


PART = ActuatorPart()
