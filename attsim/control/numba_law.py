"""A user's controller as a numba function: the compiled path for your own control law.

Write the law as a function with this signature, compiled with
``numba.njit``::

    @numba.njit
    def decide(t_s, readings, parameters, memory, commands):
        ...

or, for a controller given ``reads`` (state besides its sensors)::

    @numba.njit
    def decide(t_s, readings, state, parameters, memory, commands):
        ...

``t_s``
    The cycle time, s.
``readings``
    ``float64[n_sensors, 6]``: row ``i`` is the latest measurement of the
    controller's ``i``-th sensor, in the sensor's units and axis order (a
    gyro's rad/s in columns 0-2; a magnetometer's T; a star tracker's
    ``q_IB`` scalar first in 0-3; the six sun-sensor currents in 0-5).
``state``
    ``float64[n_reads, STATE_WIDTH]``: row ``i`` is the ``i``-th entry of
    ``reads`` as it is at the cycle, in the columns named by this module's
    constants: a reaction wheel's speed relative to the body
    (``STATE_WHEEL_SPEED``, rad/s) and absolute momentum
    (``STATE_WHEEL_MOMENTUM``, N m s); a magnetorquer's applied dipole
    (``STATE_DIPOLE`` to ``STATE_DIPOLE + 2``, A m², body axes); an
    :class:`~attsim.MEKF`'s attitude ``q_IB`` scalar first (``STATE_Q`` to
    ``STATE_Q + 3``), gyro bias (``STATE_BIAS`` ..., rad/s) and rate
    estimate (``STATE_RATE`` ..., rad/s), NaN before its first estimate.
    Other columns are zero. The constants are module globals: a law reads
    them as ``state[0, STATE_WHEEL_SPEED]`` (numba freezes them into it).
``parameters``
    ``float64[:]``: constants you passed, read-only by convention.
``memory``
    ``float64[:]``: your state between cycles (zeros at the start of a run).
``commands``
    ``float64[:]``, filled with NaN before each call, laid out as
    :attr:`NumbaController.command_layout` says: one motor torque (N m) per
    wheel, in the order of ``wheels``; then, with a ``magnetorquer``, the
    three components of its body dipole (A m², body axes: a magnetorquer
    with ``bar_axes`` allocates it to its bars, as for any law), or with
    ``magnetorquer_command="bars"`` one dipole per bar (A m², along each
    bar's axis, in the order of its ``bar_axes``: no steering, each limited
    at its bar's limit as steered ones are); then, with
    a ``body_torque``, its three torque components (N m, body axes). A law
    driving one kind writes from entry 0, as before. An entry left NaN holds
    that actuator's previous command; a vector (the dipole, the bars'
    dipoles, the body torque) is commanded whole or held whole (every entry
    NaN). An infinite entry, or a vector partly written (some entries NaN,
    some not: a law writing three dipoles for four bars would otherwise
    never command them), stops the run with a
    :class:`~attsim.errors.ControllerError` naming the entries.

A cycle in which one of the sensors gave no output (a blinded star
tracker, a dropout: :mod:`attsim.sensors.base`) does not call the law: its
actuators hold their commands, and ``readings`` never holds NaN.

Give the :class:`NumbaController` to a mission like any controller, as
many as you like (each law at its own period and phase; a
:class:`~attsim.modes.ModeManager` may switch them as modes). When every
component of the mission has a compiled form, the mission loop calls each
law inside the compiled loop (each law its own unit, compiled once per
machine); otherwise the Python path calls the same functions once per
cycle. Both give the same result.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from .._core.jit import njit
from .._core.validate import finite_array, one_of, positive_int, sequence
from ..actuators.devices import BarDipoles, BodyTorque, Magnetorquer, ReactionWheel
from ..engine.component import LazyCycle
from ..estimation.mekf import MEKF
from .base import Controller, check_kind, distinct, drivers_before
from ..errors import ControllerError, InputError
from .loop import (MAX_READING_WIDTH, READS_ESTIMATOR, READS_MAGNETORQUER, READS_WHEEL, STATE_BIAS, STATE_DIPOLE,
                   STATE_Q, STATE_RATE, STATE_WHEEL_MOMENTUM, STATE_WHEEL_SPEED, STATE_WIDTH, USER_COMMANDS,
                   USER_BARS, USER_MEMORY, USER_PARAMETERS, USER_READINGS, USER_READS, user_law_unit)

__all__ = ["NumbaController", "CommandLayout", "MAX_READING_WIDTH", "STATE_WIDTH", "STATE_WHEEL_SPEED",
           "STATE_WHEEL_MOMENTUM", "STATE_DIPOLE", "STATE_Q", "STATE_BIAS", "STATE_RATE"]

_NEEDS = {ReactionWheel: "reaction wheels (attsim.ReactionWheel) for its wheel torques",
          Magnetorquer: "magnetorquers (attsim.Magnetorquer) for its dipole",
          BodyTorque: "a body-torque actuator (attsim.BodyTorque) for its torque"}
_READABLE = (ReactionWheel, Magnetorquer, MEKF)
_READS_NEEDS = ("what it reads: a reaction wheel (attsim.ReactionWheel), a magnetorquer (attsim.Magnetorquer) or "
                "an estimator (attsim.MEKF)")
_SIGNATURES = {5: "decide(t_s, readings, parameters, memory, commands)",
               6: "decide(t_s, readings, state, parameters, memory, commands)"}


class CommandLayout(NamedTuple):
    """Where a :class:`NumbaController`'s commands sit in its ``commands`` array: ``wheels`` (how many motor
    torques, from entry 0), the first entry of the ``dipole`` (A m², 3, or one per bar) and of the body ``torque``
    (N m, 3), -1 for an actuator it does not drive, ``width`` (the array's length), and ``bars`` (how many bar
    dipoles the dipole's entries are: 0 for a body dipole of three)."""

    wheels: int
    dipole: int
    torque: int
    width: int
    bars: int = 0

    def described(self) -> str:
        """The layout in words, e.g. ``"6 entries: 0-2 the wheels' motor torques, 3-5 the bars' dipoles"``."""
        parts = [(0, self.wheels, "the wheels' motor torques")] if self.wheels else []
        if self.dipole >= 0:
            parts.append((self.dipole, self.bars or 3, "the bars' dipoles" if self.bars else "the dipole"))
        if self.torque >= 0:
            parts.append((self.torque, 3, "the body torque"))
        spans = [f"{start}{f'-{start + count - 1}' if count > 1 else ''} {what}" for start, count, what in parts]
        return f"{self.width} {'entry' if self.width == 1 else 'entries'}: " + ", ".join(spans)


class NumbaController(Controller):
    """A controller whose law is a numba-compiled ``decide(t_s, readings, parameters, memory, commands)``.

    Parameters
    ----------
    decide : numba dispatcher
        The law (see the module docstring for its signature): five
        arguments, or six (``state`` third) when ``reads`` is given.
    period_s : float
        Control period, s.
    sensors : sequence of sensors or their names
        Sampled each cycle; row ``i`` of ``readings`` is sensor ``i``.
    wheels : sequence of reaction wheels or their names
        Driven with one motor torque each (N m), entries ``0 ... n - 1`` of
        ``commands``.
    magnetorquer : Magnetorquer or its name, optional
        Driven with a body dipole (A m², 3 entries after the wheels'),
        alone or with wheels and a body torque.
    magnetorquer_command : {"dipole", "bars"}
        ``"dipole"`` (default): the law commands the body dipole, which the
        magnetorquer's steering gives its bars; ``"bars"``: the law commands
        each bar's dipole (A m², one entry per bar after the wheels', in the
        order of its ``bar_axes``; each limited at its bar's limit), as
        Basilisk's flight software drives ``MtbEffector``. Needs a
        ``magnetorquer``.
    body_torque : BodyTorque or its name, optional
        Driven with a body torque (N m, body axes; the last 3 entries),
        alone or with wheels and a magnetorquer.
    parameters : array_like, optional
        Constants handed to every call.
    memory_size : int
        Length of the ``memory`` array (>= 1).
    phase_s : float
        Time of the first cycle, s.
    name : str, optional
        Its name (default ``"numba_controller"``).
    command_delay_s : float
        Commands act this long after the cycle (:class:`~attsim.control.Controller`).
    reads : sequence, optional
        State the law reads besides its sensors, one ``state`` row each, in
        this order: reaction wheels (or their names), magnetorquers (or their
        names) and MEKF estimators (the objects ``mission.add`` returned).
        Given, the law takes ``state`` as its third argument.

    :attr:`command_layout` says where each command sits (with
    ``magnetorquer_command="bars"`` and the magnetorquer given by name, once
    the mission is prepared: the bars are counted then).
    """

    def __init__(self, decide, period_s: float, sensors: Sequence = (), wheels: Sequence = (), magnetorquer=None,
                 parameters=(), memory_size: int = 1, phase_s: float = 0.0, name: str = "numba_controller",
                 body_torque=None, command_delay_s: float = 0.0, reads: Sequence = (),
                 magnetorquer_command: str = "dipole"):
        reads = sequence(reads, "reads")
        distinct(reads, "reads", f"NumbaController {name!r}")
        for given in reads:  # before the law's signature, which depends on them
            if not isinstance(given, str):
                check_kind(given, "reads", _READABLE, f"NumbaController {name!r} needs {_READS_NEEDS}")
        _check_law(decide, 6 if reads else 5)
        wheels = sequence(wheels, "wheels")
        if not wheels and magnetorquer is None and body_torque is None:
            raise InputError("actuators", "give a NumbaController something to drive: wheels, a magnetorquer, a "
                             "body_torque, or several of them")
        distinct(wheels, "wheels", f"NumbaController {name!r}")
        vectors = [v for v in (magnetorquer, body_torque) if v is not None]
        super().__init__(name, period_s, sensors=sensors, actuators=list(wheels) + vectors, phase_s=phase_s,
                         command_delay_s=command_delay_s)
        for field, given, kind in self._actuator_arguments(wheels, magnetorquer, body_torque):
            if not isinstance(given, str):
                check_kind(given, field, kind, f"NumbaController {name!r} needs {_NEEDS[kind]}")
        self.magnetorquer_command = one_of(magnetorquer_command, "magnetorquer_command", ("dipole", "bars"))
        if self.magnetorquer_command == "bars" and magnetorquer is None:
            raise InputError("magnetorquer_command", f"NumbaController {name!r}: 'bars' needs a magnetorquer= to "
                             "command bar by bar", "got no magnetorquer")
        self.decide_function = decide
        # the same law with bounds checks: an index past readings, memory or commands raises instead of
        # corrupting memory (numba does not check by default); _nrt=True: a law may allocate, though the compiled
        # loop that calls it compiles without reference counting (attsim._core.jit), which numba would hand down to it
        self.law = njit(boundscheck=True, nogil=True, _nrt=True)(decide.py_func)
        self.parameters = np.ascontiguousarray(finite_array(parameters, "parameters").reshape(-1))
        self.memory_size = positive_int(memory_size, "memory_size", maximum=1_000_000)
        self._wheel_refs = list(wheels)
        self._mtq_ref, self._body_torque_ref = magnetorquer, body_torque
        self._read_refs = list(reads)
        self.reads = list(reads)  # the components, once the mission resolved them
        self.command_layout = self._layout(magnetorquer)

    def _layout(self, magnetorquer) -> CommandLayout | None:
        """The commands' layout for ``magnetorquer`` (an object, its name, or None); None while the bars it is
        commanded one by one are not known (given by name, before the mission resolves it)."""
        bars = 0
        if self.magnetorquer_command == "bars":
            if not isinstance(magnetorquer, Magnetorquer):
                return None
            bars = magnetorquer.bar_count
        n = len(self._wheel_refs)
        dipole = n if magnetorquer is not None else -1
        width = n + ((bars or 3) if dipole >= 0 else 0)
        torque = width if self._body_torque_ref is not None else -1
        return CommandLayout(n, dipole, torque, width + 3 * (torque >= 0), bars)

    @property
    def digest(self) -> str:
        """A digest of everything the law's compiled code depends on: names the loop it is bound into.

        Its code, and the values numba freezes into it at compilation: the
        closure's cells and the module globals it reads (a law made by a
        factory, or reading a global that was edited, compiles afresh).
        """
        return _law_digest(self.decide_function.py_func)

    @staticmethod
    def _actuator_arguments(wheels, magnetorquer, body_torque) -> list:
        """``(field, given, type)`` of each actuator argument: the law writes wheel torques, a dipole or a torque."""
        return [("wheels", w, ReactionWheel) for w in wheels] + (
            [] if magnetorquer is None else [("magnetorquer", magnetorquer, Magnetorquer)]) + (
            [] if body_torque is None else [("body_torque", body_torque, BodyTorque)])

    def prepare(self, mission):
        resolved = [self.resolve(mission, given, field, kind, _NEEDS[kind])
                    for field, given, kind in self._actuator_arguments(self._wheel_refs, self._mtq_ref,
                                                                       self._body_torque_ref)]
        distinct(resolved, "wheels", f"controller {self.name!r}")  # a wheel given once by name, once as itself
        self.reads = [self._resolve_read(mission, given) for given in self._read_refs]
        distinct(self.reads, "reads", f"controller {self.name!r}")
        super().prepare(mission)
        self._outputs = [r if isinstance(r, str) else r.name for r in
                         self._wheel_refs + [v for v in (self._mtq_ref, self._body_torque_ref) if v is not None]]
        self.command_layout = self._layout(next((a for a in resolved if isinstance(a, Magnetorquer)), None))
        self._read_drivers = [d for r in self.reads if isinstance(r, Magnetorquer)
                              for d in drivers_before(mission, r, self, "reads", "reads")]

    def _resolve_read(self, mission, given):
        component = self.resolve(mission, given, "reads", _READABLE, _READS_NEEDS)
        if isinstance(given, str) and isinstance(component, LazyCycle):  # read through the object's cycle
            raise InputError("reads", f"controller {self.name!r} reads estimator {given!r} by name: give the "
                             "estimator itself (what mission.add returned)")
        return component

    def start(self, sc):
        super().start(sc)
        self.memory = np.zeros(self.memory_size)
        self._readings = np.zeros((max(len(self.sensors), 1), MAX_READING_WIDTH))
        self._state = np.zeros((max(len(self.reads), 1), STATE_WIDTH))
        self._commands = np.empty(self.command_layout.width)

    @property
    def loop_unit(self):
        """This law's unit: :func:`~attsim.control.loop.user_law` bound to it (named by :attr:`digest`), or
        :func:`~attsim.control.loop.user_law_reading` when it reads state."""
        return user_law_unit(self.law, self.digest, reads_state=bool(self._read_refs))

    @property
    def command_width(self) -> int:
        """How many commands the law writes: one per wheel, three for a dipole, three for a body torque."""
        return self.command_layout.width

    def fill_loop_row(self, bank, c: int, build) -> None:
        sizes = (self.parameters.size, self.memory_size, max(len(self.sensors), 1), self.command_layout.width,
                 len(self.reads), self.command_layout.bars)
        for column, size in zip((USER_PARAMETERS, USER_MEMORY, USER_READINGS, USER_COMMANDS, USER_READS, USER_BARS),
                                sizes):
            bank.user_sizes[c, column] = size
        bank.user_parameters[c, : self.parameters.size] = self.parameters
        targets = [self.actuators[name] for name in self._outputs]
        wheels = [t for t in targets if isinstance(t, ReactionWheel)]
        bank.wheel_order[c, : len(wheels)] = [build.row(wheel) for wheel in wheels]
        for target in targets:
            if isinstance(target, Magnetorquer):
                bank.magnetorquer[c] = build.row(target)
            elif isinstance(target, BodyTorque):
                bank.body_torque[c] = build.row(target)
        for i, component in enumerate(self.reads):
            kind = (READS_WHEEL if isinstance(component, ReactionWheel) else
                    READS_MAGNETORQUER if isinstance(component, Magnetorquer) else READS_ESTIMATOR)
            bank.user_reads[c, i] = kind, build.row(component)

    def take_loop_row(self, bank, c: int) -> None:
        self.memory[:] = bank.user_memory[c, : self.memory_size]

    def loop_fault(self, bank, c: int, t_s: float) -> Exception:
        """The law wrote an infinite command or a vector partly NaN: the Python path's error for it."""
        try:
            self.apply_commands(t_s, bank.user_commands[c].copy())
        except ControllerError as exc:
            return exc
        return ControllerError(f"controller {self.name!r} at t = {t_s:.6g} s wrote an invalid command")

    def unit_raised(self, exc: Exception, t_s: float) -> Exception:
        """What the law raised inside the compiled loop, named as the Python path names it."""
        return ControllerError(self._raised(exc, t_s))

    def _raised(self, exc: Exception, t_s: float) -> str:
        """The message of an exception the law raised; an index past an array's end is most often a write past the
        end of ``commands``, whose layout is then said (numba's own message names no array)."""
        text = f"controller {self.name!r} raised at t = {t_s:.6g} s: {_plain(exc)}"
        if isinstance(exc, IndexError) and self.command_layout is not None:
            text += f" (its commands array holds {self.command_layout.described()})"
        return text

    def unit_does_not_compile(self, cause: Exception) -> Exception:
        """The law does not compile with the documented signature: said with the numba error, on one line."""
        return ControllerError(f"controller {self.name!r}: its law does not compile as "
                               f"{_SIGNATURES[6 if self._read_refs else 5]}: {_plain(cause)}")

    def decide(self, t_s, readings):
        block = self._readings
        for i, sensor in enumerate(self.sensors):
            value = readings[sensor.name]
            block[i, : len(value)] = value
        self._commands[:] = np.nan
        arguments = (block[: max(len(self.sensors), 1)],) + ((self._state_now(),) if self._read_refs else ())
        try:
            self.law(float(t_s), *arguments, self.parameters, self.memory, self._commands)
        except Exception as exc:  # noqa: BLE001 - whatever the law raised, named with the controller and time
            raise ControllerError(self._raised(exc, t_s)) from exc
        return self.apply_commands(t_s, self._commands)

    def _state_now(self) -> np.ndarray:
        """The ``state`` rows of ``reads`` now (the compiled loop's :func:`~attsim.control.loop.user_law_reading`)."""
        sc, state = self._sc, self._state
        for driver in self._read_drivers:  # their commands of this instant first, as the compiled loop runs them
            driver.bring_up_to_date(sc)
        for i, component in enumerate(self.reads):
            if isinstance(component, ReactionWheel):
                state[i, STATE_WHEEL_SPEED] = component.speed_rad_s(sc)
                state[i, STATE_WHEEL_MOMENTUM] = component.momentum_Nms(sc)
            elif isinstance(component, Magnetorquer):
                state[i, STATE_DIPOLE: STATE_DIPOLE + 3] = component.dipole_Am2
            else:  # an estimator: its cycle at this instant first, whichever process SimPy serves first
                component.bring_up_to_date(sc)
                state[i, STATE_Q: STATE_Q + 4] = component.attitude()
                state[i, STATE_BIAS: STATE_BIAS + 3] = component.bias_rad_s
                state[i, STATE_RATE: STATE_RATE + 3] = component.rate()
        return state[: max(len(self.reads), 1)]

    def apply_commands(self, t_s: float, commands: np.ndarray) -> dict:
        """``{actuator: command}`` from the law's output array, laid out as :attr:`command_layout` (NaN entries
        hold, a vector all NaN whole; infinite entries and vectors partly NaN are refused)."""
        if np.any(np.isinf(commands)):
            raise ControllerError(f"controller {self.name!r} at t = {t_s:.6g} s wrote an infinite command "
                                  f"{commands.tolist()} (NaN holds, any finite value commands)")
        layout = self.command_layout
        out = {name: float(v) for name, v in zip(self._outputs[: layout.wheels], commands) if not np.isnan(v)}
        vectors = [(start, width) for start, width in ((layout.dipole, layout.bars or 3), (layout.torque, 3))
                   if start >= 0]
        for k, (start, width) in enumerate(vectors):
            vector = commands[start: start + width]
            unknown = np.isnan(vector)
            if unknown.any() and not unknown.all():
                left = ", ".join(str(start + i) for i in np.flatnonzero(unknown))
                raise ControllerError(f"controller {self.name!r} at t = {t_s:.6g} s wrote {int((~unknown).sum())} of "
                                      f"the {width} entries {start}-{start + width - 1} of a vector, {left} left NaN: "
                                      "a vector is commanded whole or held whole (every entry NaN); its commands "
                                      f"array holds {layout.described()}")
            if not unknown.any():
                bars = start == layout.dipole and layout.bars > 0
                out[self._outputs[layout.wheels + k]] = BarDipoles(vector.tolist()) if bars else vector.copy()
        return out


def _check_law(decide, arguments: int) -> None:
    """Refuse a law that is not a numba function of the signature its controller calls it with, by name."""
    if not (callable(decide) and hasattr(decide, "py_func") and hasattr(decide, "signatures")):
        raise InputError("decide", f"must be a numba.njit-compiled function {_SIGNATURES[arguments]}",
                         f"got {type(decide).__name__}")
    code = decide.py_func.__code__
    if code.co_argcount != arguments or code.co_flags & 0x0C:  # *args or **kwargs: not a fixed signature
        raise InputError("decide", f"must take {arguments} arguments, {_SIGNATURES[arguments]}"
                         + (" (a controller given reads passes the state third)" if arguments == 6 else
                            " (give reads=... to have the state passed third)"),
                         f"got {decide.py_func.__name__}{_arguments(code)}")


def _arguments(code) -> str:
    return "(" + ", ".join(code.co_varnames[: code.co_argcount]) + ")"


def _plain(exc: Exception) -> str:
    """An exception as one line without numba's terminal colours."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", f"{type(exc).__name__}: {exc}")
    return " ".join(text.split())[:400]


def _law_digest(function, _seen=None) -> str:
    seen = set() if _seen is None else _seen
    seen.add(id(function))
    code = function.__code__
    parts = [code.co_code, repr(code.co_consts).encode(), repr(code.co_names).encode(), code.co_name.encode()]
    for cell in function.__closure__ or ():
        parts.append(_value_bytes(cell.cell_contents, seen))
    for name in code.co_names:
        if name in function.__globals__:
            parts.append(name.encode() + _value_bytes(function.__globals__[name], seen))
    return hashlib.sha256(b"\0".join(parts)).hexdigest()[:12]


def _value_bytes(value, seen) -> bytes:
    if isinstance(value, np.ndarray):
        return value.tobytes() + str(value.dtype).encode() + repr(value.shape).encode()
    py = getattr(value, "py_func", None)
    if py is not None:  # another compiled function: its own code and frozen values
        return b"" if id(py) in seen else _law_digest(py, seen).encode()
    if isinstance(value, (int, float, complex, str, bytes, bool, tuple, type(None))):
        return repr(value).encode()
    return repr(type(value)).encode()  # modules and other objects: numba resolves attributes of them at compile time
