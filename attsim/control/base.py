"""Controllers: sense → decide → command, once per control period.

A controller is a :class:`Controller` subclass that implements
:meth:`Controller.decide`, or any callable wrapped by
:class:`FunctionController` (the built-in laws are in
:mod:`attsim.control.laws`). Each cycle, in one SimPy process, the engine

1. samples the controller's sensors at the cycle time,
2. calls ``decide(t_s, readings)`` with ``readings = {sensor name: array}``,
3. applies the returned ``{actuator name: command}`` to the controller's
   actuators (each command is held until the next one), at once or, with
   ``command_delay_s``, that long after the cycle (a flight computer's
   latency; Basilisk's task order when its dynamics runs before its flight
   software at each instant: the dynamics task's period, which is one
   control period when both share one task).

A cycle in which a sensor gave no output (:mod:`attsim.sensors.base`: a
blinded star tracker, a dropout) decides nothing: the actuators hold their
previous commands, and :meth:`Controller.without_output` lets a law forget
what the gap makes stale (B-dot's previous field sample).

A command for an actuator the controller does not own, a command the
actuator refuses, or an exception inside ``decide`` stops the run with a
:class:`~attsim.engine.ControllerError` naming the controller and the time;
the telemetry recorded so far is kept on disk.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from .._core.timegrid import grid_time
from .._core.validate import function as callable_argument
from .._core.validate import non_negative_scalar, positive_scalar, sequence
from ..actuators.devices import BodyTorque, CommandSchedule, Magnetorquer, ReactionWheel
from ..engine.component import Component, LazyCycle, periodic
from ..errors import AttsimError, ControllerError, InputError
from ..sensors.base import Sensor
from .loop import PART

__all__ = ["Controller", "FunctionController", "check_drivers", "check_kind", "distinct", "drivers_before",
           "MAX_DELAY_PERIODS"]

# the longest command delay, in control periods (the compiled loop keeps one pending set of commands per period)
MAX_DELAY_PERIODS = 64


class Controller(Component):
    """Base class: period, phase, the sensors it samples and the actuators it drives.

    Parameters
    ----------
    name : str
    period_s : float
        Control period, s.
    sensors, actuators : sequence of components or their names
    phase_s : float
        Time of the first cycle, s.
    command_delay_s : float
        Commands decided at a cycle act this long after it (``>= 0``, at
        most ``MAX_DELAY_PERIODS`` periods; default 0: at once). Until then
        the actuators hold the earlier commands; a cycle that decided
        nothing changes nothing when its time comes. Not for a law a
        :class:`~attsim.modes.ModeManager` switches.
    """

    # the compiled mission (attsim.control.loop): the controllers' part; a law with a compiled form names its unit
    loop_part = PART
    loop_unit = None

    def __init__(self, name: str, period_s: float, sensors: Sequence = (), actuators: Sequence = (),
                 phase_s: float = 0.0, command_delay_s: float = 0.0):
        self.name = name
        self.period_s = positive_scalar(period_s, "period_s")
        self.phase_s = non_negative_scalar(phase_s, "phase_s")
        self.command_delay_s = command_delay_s
        self._sensor_refs = sequence(sensors, "sensors")
        self._actuator_refs = sequence(actuators, "actuators")
        self.cycles = 0
        self.active = True  # a ModeManager's mode may stop and restart it
        self.mode_manager = None
        self._cycle_t = None  # the instant of the last cycle run (one cycle per instant)

    @property
    def command_delay_s(self) -> float:
        """How long after a cycle its commands act, s (0: at once)."""
        return self._command_delay_s

    @command_delay_s.setter
    def command_delay_s(self, value) -> None:
        delay = non_negative_scalar(value, "command_delay_s")
        if delay > MAX_DELAY_PERIODS * self.period_s:
            raise InputError("command_delay_s", f"must be at most {MAX_DELAY_PERIODS} control periods "
                             f"({MAX_DELAY_PERIODS * self.period_s:g} s for period_s = {self.period_s:g} s)",
                             f"got {value!r}")
        self._command_delay_s = delay

    def decide(self, t_s: float, readings: dict) -> dict:  # pragma: no cover - abstract
        """Return ``{actuator name: command}`` for this cycle (empty: hold)."""
        raise NotImplementedError

    def prepare(self, mission):
        self.sensors = [self.resolve(mission, s, "sensors", Sensor, "a sensor (attsim.Gyro, Magnetometer, SunSensor, "
                                     "StarTracker) to sample") for s in self._sensor_refs]
        actuators = [self.resolve(mission, a, "actuators") for a in self._actuator_refs]
        for actuator in actuators:
            if not callable(getattr(actuator, "command", None)):
                raise InputError("actuators", f"controller {self.name!r} needs actuators it can command (a "
                                 "ReactionWheel, Magnetorquer, BodyTorque, Thruster)",
                                 f"got {type(actuator).__name__} {actuator.name!r}")
        self.actuators = {a.name: a for a in actuators}
        if any(isinstance(a, Magnetorquer) for a in actuators):  # a user's own magnetic law too, not only ours
            self.require_field(mission)
        for sensor in self.sensors:
            sensor.add_reader(self)

    @staticmethod
    def check_mission(mission) -> None:
        """What the controllers of ``mission`` must satisfy together: one law drives an actuator at a time
        (:func:`check_drivers`; a mode manager, found by its ``mode_names``, may keep laws apart)."""
        controllers = [c for c in mission.components if isinstance(c, Controller)]
        manager = next((c for c in mission.components if getattr(c, "mode_names", None) is not None), None)
        check_drivers(controllers, manager)
        delayed = [c.name for c in controllers if c.command_delay_s > 0.0 and manager is not None
                   and any(c is m for m in manager.managed)]
        if delayed:  # a stopped law's pending commands would act after its mode ended
            raise InputError("command_delay_s", "is not supported for a law a ModeManager switches",
                             f"given for {', '.join(delayed)}")

    # --- the compiled mission (attsim.control.loop) ---------------------------------------------------------

    def loop_inputs(self) -> tuple:
        """The law's attitude, rate and field sources in the compiled mission: a sensor, an estimator, or None
        (the true state, or not read)."""
        return (None, None, None)

    def _sensor_named(self, ref):
        """A source as an object: a sensor given by name is the one this law samples; others stay as given."""
        if isinstance(ref, str):
            return next(s for s in self.sensors if s.name == ref)
        return ref

    def fill_loop_row(self, bank, c: int, build) -> None:
        """Fill row ``c`` of the controller bank with what only this law knows (parameters, targets,
        actuators)."""

    def take_loop_row(self, bank, c: int) -> None:
        """End as the Python path leaves the law (its state after the last cycle)."""

    def loop_fault(self, bank, c: int, t_s: float) -> Exception:
        """The error of a cycle whose unit faulted."""
        return ControllerError(f"controller {self.name!r} faulted at t = {t_s:.6g} s")

    def resolve(self, mission, ref, field: str, kinds=None, needs: str = ""):
        """The component of ``mission`` that ``ref`` (the object or its name) is.

        Refused, naming this controller and its argument ``field``, when it is
        not in the mission (an object never ``mission.add``-ed) or, with
        ``kinds`` (a type or a tuple of them), when it is not what the
        argument ``needs`` (e.g. a magnetometer where a field is read).
        """
        if isinstance(ref, str):
            component = next((c for c in mission.components if c.name == ref), None)
        else:
            component = ref if any(c is ref for c in mission.components) else None
        if component is None:
            what = ref if isinstance(ref, str) else getattr(ref, "name", ref)
            raise InputError(field, f"controller {self.name!r} uses {what!r}, which is not in the mission (add it "
                             "with mission.add)")
        if kinds is not None:
            check_kind(component, field, kinds, f"controller {self.name!r} needs {needs}")
        return component

    def check_arguments(self, arguments, mission=None) -> list:
        """Each argument that names a component, ``(field, given, (types, needs))``, checked for what the law needs.

        Without ``mission`` (at construction) only the components given as
        objects are checked; with it (at prepare), every one is resolved in
        the mission too — refused when it is not there, e.g. an estimator
        never ``mission.add``-ed — and the resolved components are returned
        (None where nothing was given).
        """
        resolved = []
        for field, given, (kinds, needs) in arguments:
            if given is None:
                resolved.append(None)
            elif mission is None:
                if not isinstance(given, str):
                    check_kind(given, field, kinds, f"{type(self).__name__} {self.name!r} needs {needs}")
            else:
                component = self.resolve(mission, given, field, kinds, needs)
                if isinstance(given, str) and isinstance(component, LazyCycle):  # read through the object's cycle
                    raise InputError(field, f"controller {self.name!r} reads estimator {given!r} by name: give the "
                                     "estimator itself (what mission.add returned)")
                resolved.append(component)
        return resolved

    def require_field(self, mission) -> None:
        """Refuse a magnetic law in a mission without a magnetic field: its dipole would make no torque at all."""
        Magnetorquer.require_field(mission, f"controller {self.name!r} ({type(self).__name__})")

    def start(self, sc):
        self.cycles = 0
        self._wheel_rows = None
        self._pending = {}  # cycle index -> the commands it decided, while they wait for their delay

    def stop_commands(self, sc) -> None:
        """Zero every actuator this controller drives (its mode stopped it)."""
        for actuator in self.actuators.values():
            if isinstance(actuator, ReactionWheel):
                actuator.command(sc, 0.0)
            elif isinstance(actuator, (Magnetorquer, BodyTorque)):
                actuator.command(sc, (0.0, 0.0, 0.0))

    def restart(self) -> None:
        """Forget what earlier cycles left (its mode started it again)."""

    def without_output(self) -> None:
        """A cycle in which a sensor gave no output: nothing is decided, the actuators hold (override to forget
        state the gap makes stale)."""

    def _at_instant(self, phase_s: float, t_s: float) -> bool:
        """True when ``t_s`` is one of ``phase_s + k period_s`` (k >= 0), as :func:`periodic` computes them."""
        k = round((t_s - phase_s) / self.period_s)
        return k >= 0 and grid_time(phase_s, k, self.period_s) == t_s

    def bring_up_to_date(self, sc) -> None:
        """Do now what this law does at the current instant, if it has not yet: apply the commands of the cycle
        ``command_delay_s`` ago, then run its cycle. For a law that reads what this one commands at the same
        instant (the magnetorquers a wheel law feeds forward), whichever process SimPy serves first; the compiled
        loop runs the laws in mission order, which :func:`drivers_before` checks."""
        t = sc.env._now
        if t > sc.mission.duration_s:
            return
        if self._command_delay_s > 0.0 and self._at_instant(self.phase_s + self._command_delay_s, t):
            self._apply_delayed(sc)  # idempotent: the commands it applies leave the pending set
        if self._at_instant(self.phase_s, t):
            self.cycle(sc)

    def cycle(self, sc) -> None:
        if sc.env._now == self._cycle_t:
            return  # run already at this instant (brought up to date by a law reading its commands)
        self._cycle_t = sc.env._now
        if self.mode_manager is not None:  # the mode at this instant first, whichever process SimPy serves first
            self.mode_manager.bring_up_to_date(sc)
            if not self.active:
                return
        self._sc = sc  # decide() of the attitude laws reads the true state when no sensor is given
        t = sc.env._now
        readings = {}
        complete = True
        for sensor in self.sensors:
            readings[sensor.name] = sensor.sample(sc)
            complete = complete and sensor.valid
        if not complete:  # a sensor without output this cycle: hold the actuators
            self.without_output()
            return
        try:
            commands = self.decide(t, readings)
        except AttsimError:
            raise
        except Exception as exc:
            raise ControllerError(f"controller {self.name!r} raised at t = {t:.6g} s: {exc!r}") from exc
        if not isinstance(commands, dict):  # before asking its truth: an array has none
            if commands is None:
                return
            raise ControllerError(f"controller {self.name!r} at t = {t:.6g} s returned {type(commands).__name__}; "
                                  "expected a dict {actuator name: command} (or None to hold)")
        if not commands:
            return
        if self._command_delay_s > 0.0:  # kept by cycle index: applied by the delayed process (processes())
            self._pending[round((t - self.phase_s) / self.period_s)] = self._commanded_now(t, commands)
        else:
            self._apply(sc, t, commands)
        self.cycles += 1

    def _commanded_now(self, t: float, commands: dict) -> dict:
        """``commands`` of a delayed cycle, each body torque among them noted as commanded now
        (:meth:`~attsim.BodyTorque.command_later`: its ``_tau_decided_`` columns), checked now."""
        for name, value in commands.items():
            actuator = self.actuators.get(name)
            if isinstance(actuator, BodyTorque):
                try:
                    actuator.command_later(value)
                except InputError as exc:
                    raise self._bad_command(t, name, exc) from exc
        return commands

    def _bad_command(self, t: float, name: str, exc: InputError) -> ControllerError:
        """The error of a command for actuator ``name`` its check refused (``exc``) at ``t``."""
        return ControllerError(f"controller {self.name!r} at t = {t:.6g} s: bad command for {name!r}: {exc}")

    def _apply_delayed(self, sc) -> None:
        """The commands of the cycle ``command_delay_s`` ago, applied now (none when it decided nothing)."""
        t = sc.env._now
        commands = self._pending.pop(round((t - (self.phase_s + self._command_delay_s)) / self.period_s), None)
        if commands is not None:
            self._apply(sc, t, commands, delayed=True)

    def _apply(self, sc, t: float, commands: dict, delayed: bool = False) -> None:
        """Hand ``commands`` to the actuators (wheel torques together, in the commands' order); ``delayed``: decided
        ``command_delay_s`` ago (a body torque then only applies what it noted as commanded then)."""
        wheel_rows = getattr(self, "_wheel_rows", None)
        if wheel_rows is None:
            wheel_rows = self._find_wheel_rows()
        rows, torques = [], []  # wheel torques (finite floats) reach the plant together, in the commands' order
        for name, value in commands.items():
            actuator = self.actuators.get(name)
            if actuator is None:
                raise ControllerError(f"controller {self.name!r} at t = {t:.6g} s returned a command for {name!r}, "
                                      f"which is not one of its actuators {sorted(self.actuators)}")
            row = wheel_rows.get(name)
            if row is not None and (type(value) is float or type(value) is np.float64) and math.isfinite(value):
                rows.append(row)
                torques.append(value)
                continue
            if rows:  # the wheel commands before this one act before it
                sc.command_wheels(tuple(rows), tuple(torques))
                rows, torques = [], []
            try:
                if delayed and isinstance(actuator, BodyTorque):
                    actuator.apply(sc, value)
                else:
                    actuator.command(sc, value)
            except InputError as exc:
                raise self._bad_command(t, name, exc) from exc
        if rows:
            sc.command_wheels(tuple(rows), tuple(torques))

    def _find_wheel_rows(self) -> dict:
        """``{name: plant row}`` of this controller's reaction wheels (known once the run has started them)."""
        self._wheel_rows = {name: a.index for name, a in self.actuators.items() if type(a) is ReactionWheel}
        return self._wheel_rows

    def processes(self, env, sc):
        self._cycle_t = None  # the instant of the last cycle run
        cycles = [periodic(env, self.period_s, self.phase_s, sc.mission.duration_s, lambda: self.cycle(sc))]
        if self._command_delay_s > 0.0:  # the compiled loop's apply_delayed: the same times, phase + delay + k period
            cycles.insert(0, periodic(env, self.period_s, self.phase_s + self._command_delay_s, sc.mission.duration_s,
                                      lambda: self._apply_delayed(sc)))
        return cycles


class FunctionController(Controller):
    """A controller from a callable ``f(t_s, readings) -> {actuator name: command}``.

    Parameters
    ----------
    function : callable
        ``f(t_s, readings) -> {actuator name: command}``; ``readings`` maps each sensor's name to its sample.
    period_s : float
        Control period, s.
    sensors, actuators : sequence of components or their names
        What it samples and what it drives.
    phase_s : float, optional
        Time of the first cycle, s (default 0).
    name : str, optional
        Its name (default ``"controller"``).
    command_delay_s : float, optional
        Commands act this long after the cycle that decided them, s (default 0; see
        :class:`~attsim.control.Controller`).
    """

    def __init__(self, function: Callable, period_s: float, sensors: Sequence = (), actuators: Sequence = (),
                 phase_s: float = 0.0, name: str = "controller", command_delay_s: float = 0.0):
        callable_argument(function, "function")
        super().__init__(name, period_s, sensors, actuators, phase_s, command_delay_s=command_delay_s)
        self.function = function

    def decide(self, t_s, readings):
        return self.function(t_s, readings)


def check_kind(component, field: str, kinds, rule: str) -> None:
    """Refuse ``component`` (given as ``field``) unless it is one of ``kinds``; ``rule`` says what is needed."""
    if not isinstance(component, kinds):
        raise InputError(field, rule, f"got {type(component).__name__} {getattr(component, 'name', component)!r}")


def distinct(refs, field: str, owner: str) -> None:
    """Refuse a component listed twice in one argument (a wheel twice in a law's ``wheels``), naming it.

    ``refs`` are components or their names: the same object twice, or the
    same name twice, is one component twice.
    """
    seen = set()
    for ref in refs:
        key = ref if isinstance(ref, str) else id(ref)
        if key in seen:
            name = ref if isinstance(ref, str) else getattr(ref, "name", ref)
            raise InputError(field, f"{owner} lists {name!r} more than once; each entry must be a different one "
                             "(listed twice, it would get two commands each cycle)")
        seen.add(key)


def check_drivers(controllers, manager) -> None:
    """Refuse an actuator that two controllers could command at once: one law drives an actuator at a time.

    Two laws commanding one actuator at a shared instant would race (which
    command holds would depend on the order they ran in). Controllers that a
    :class:`~attsim.modes.ModeManager` (``manager``, or None) never runs
    together may share actuators: a B-dot law, a Sun-pointing law and a nadir
    law taking turns on the magnetorquers.
    """
    drivers: dict = {}
    for controller in controllers:
        for actuator in controller.actuators.values():
            drivers.setdefault(id(actuator), (actuator, []))[1].append(controller)
    managed = set() if manager is None else {id(c) for c in manager.managed}
    for actuator, laws in drivers.values():
        for i, a in enumerate(laws):
            for b in laws[i + 1:]:
                apart = id(a) in managed and id(b) in managed and not any(
                    a in mode.controllers and b in mode.controllers for mode in manager.modes)
                if not apart:
                    raise InputError("actuators", f"actuator {actuator.name!r} is commanded by controllers {a.name!r} "
                                     f"and {b.name!r}, which can run at the same time; one controller drives an "
                                     "actuator at a time (put them in different modes of a ModeManager)")


def drivers_before(mission, actuator, reader, field: str, verb: str = "feeds forward") -> list:
    """The controllers of ``mission`` that drive ``actuator`` (a magnetorquer whose torque ``reader`` feeds forward,
    given as ``field``), each checked to come before ``reader`` in the mission: at an instant they share, the
    compiled loop runs the laws in mission order, and the Python path brings them up to date
    (:meth:`Controller.bring_up_to_date`), so both read the commands decided at that instant. Refused: an actuator
    no controller drives (there is nothing to feed forward) or one a :class:`CommandSchedule` drives. With ``verb``
    ``"reads"`` (a user's law reading its dipole), an actuator no controller drives is allowed (it reads zero)."""
    position = {id(c): k for k, c in enumerate(mission.components)}
    drivers = []
    for component in mission.components:
        if isinstance(component, CommandSchedule) and component.actuator_name == actuator.name:
            raise InputError(field, f"controller {reader.name!r} {verb} {actuator.name!r}, which the "
                             f"CommandSchedule {component.name!r} drives: give a controller that drives it")
        refs = getattr(component, "_actuator_refs", ()) if isinstance(component, Controller) else ()
        if component is not reader and any(r is actuator or r == actuator.name for r in refs):
            drivers.append(component)
    if not drivers and verb == "feeds forward":
        raise InputError(field, f"controller {reader.name!r} feeds forward {actuator.name!r}, which no controller "
                         "in the mission drives (its dipole stays zero: there is nothing to feed forward)")
    late = [d.name for d in drivers if position[id(d)] > position[id(reader)]]
    if late:
        raise InputError(field, f"controller {reader.name!r} {verb} the dipole of {actuator.name!r} decided at "
                         f"the same instant: add {', '.join(repr(n) for n in late)} (which drives it) to the mission "
                         f"before {reader.name!r}")
    return drivers
