"""A user's controller as a numba function: the compiled path for your own control law.

Write the law as a function with this signature, compiled with
``numba.njit``::

    @numba.njit
    def decide(t_s, readings, parameters, memory, commands):
        ...

``t_s``
    The cycle time, s.
``readings``
    ``float64[n_sensors, 6]``: row ``i`` is the latest measurement of the
    controller's ``i``-th sensor, in the sensor's units and axis order (a
    gyro's rad/s in columns 0-2; a magnetometer's T; a star tracker's
    ``q_IB`` scalar first in 0-3; the six sun-sensor currents in 0-5).
``parameters``
    ``float64[:]``: constants you passed, read-only by convention.
``memory``
    ``float64[:]``: your state between cycles (zeros at the start of a run).
``commands``
    ``float64[:]``, filled with NaN before each call: write one motor
    torque (N m) per wheel, in the order of ``wheels``, the three
    dipole components (A m², body axes) for a ``magnetorquer``, or the
    three torque components (N m, body axes) for a ``body_torque``. An entry
    left NaN holds that actuator's previous command. An infinite entry
    stops the run with a :class:`~attsim.errors.ControllerError`.

A cycle in which one of the sensors gave no output (a blinded star
tracker, a dropout: :mod:`attsim.sensors.base`) does not call the law: its
actuators hold their commands, and ``readings`` never holds NaN.

Give the :class:`NumbaController` to a mission like any controller. When
every component of the mission has a compiled form, the mission loop calls
your function inside the compiled loop (one user function per mission);
otherwise the Python path calls the same function once per cycle. Both
give the same result.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np

from .._core.jit import njit
from .._core.validate import finite_array, positive_int, sequence
from ..actuators.devices import BodyTorque, Magnetorquer, ReactionWheel
from .base import Controller, check_kind, distinct
from ..errors import ControllerError, InputError
from .loop import MAX_READING_WIDTH, user_law_unit

__all__ = ["NumbaController", "MAX_READING_WIDTH"]

_NEEDS = {ReactionWheel: "reaction wheels (attsim.ReactionWheel) for its wheel torques",
          Magnetorquer: "magnetorquers (attsim.Magnetorquer) for its dipole",
          BodyTorque: "a body-torque actuator (attsim.BodyTorque) for its torque"}


class NumbaController(Controller):
    """A controller whose law is a numba-compiled ``decide(t_s, readings, parameters, memory, commands)``.

    Parameters
    ----------
    decide : numba dispatcher
        The law (see the module docstring for its signature).
    period_s : float
        Control period, s.
    sensors : sequence of sensors or their names
        Sampled each cycle; row ``i`` of ``readings`` is sensor ``i``.
    wheels : sequence of reaction wheels or their names
        Driven with one motor torque each (N m).
    magnetorquer : Magnetorquer or its name, optional
        Driven with a dipole (A m²), instead of wheels.
    body_torque : BodyTorque or its name, optional
        Driven with a body torque (N m, body axes), instead of wheels.
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
    """

    def __init__(self, decide, period_s: float, sensors: Sequence = (), wheels: Sequence = (), magnetorquer=None,
                 parameters=(), memory_size: int = 1, phase_s: float = 0.0, name: str = "numba_controller",
                 body_torque=None, command_delay_s: float = 0.0):
        if not (callable(decide) and hasattr(decide, "py_func") and hasattr(decide, "signatures")):
            raise InputError("decide", "must be a numba.njit-compiled function decide(t_s, readings, parameters, "
                             "memory, commands)", f"got {type(decide).__name__}")
        wheels = sequence(wheels, "wheels")
        if bool(wheels) + (magnetorquer is not None) + (body_torque is not None) != 1:
            raise InputError("actuators", "give a NumbaController one of: wheels, a magnetorquer or a body_torque")
        distinct(wheels, "wheels", f"NumbaController {name!r}")
        vector = magnetorquer if magnetorquer is not None else body_torque
        actuators = list(wheels) + ([vector] if vector is not None else [])
        super().__init__(name, period_s, sensors=sensors, actuators=actuators, phase_s=phase_s,
                         command_delay_s=command_delay_s)
        for field, given, kind in self._actuator_arguments(wheels, magnetorquer, body_torque):
            if not isinstance(given, str):
                check_kind(given, field, kind, f"NumbaController {name!r} needs {_NEEDS[kind]}")
        self.decide_function = decide
        # the same law with bounds checks: an index past readings, memory or commands raises instead of
        # corrupting memory (numba does not check by default); _nrt=True: a law may allocate, though the compiled
        # loop that calls it compiles without reference counting (attsim._core.jit), which numba would hand down to it
        self.law = njit(boundscheck=True, nogil=True, _nrt=True)(decide.py_func)
        self.parameters = np.ascontiguousarray(finite_array(parameters, "parameters").reshape(-1))
        self.memory_size = positive_int(memory_size, "memory_size", maximum=1_000_000)
        self._wheel_refs = list(wheels)
        self._mtq_ref, self._body_torque_ref = magnetorquer, body_torque

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
        super().prepare(mission)
        names = [r if isinstance(r, str) else r.name for r in self._wheel_refs]
        vector = self._mtq_ref if self._mtq_ref is not None else self._body_torque_ref
        self._outputs = names if names else [vector if isinstance(vector, str) else vector.name]
        self._width = len(names) if names else 3

    def start(self, sc):
        super().start(sc)
        self.memory = np.zeros(self.memory_size)
        self._readings = np.zeros((max(len(self.sensors), 1), MAX_READING_WIDTH))
        self._commands = np.empty(self._width)

    @property
    def loop_unit(self):
        """This law's unit: :func:`~attsim.control.loop.user_law` bound to it (named by :attr:`digest`)."""
        return user_law_unit(self.law, self.digest)

    @property
    def command_width(self) -> int:
        """How many commands the law writes: one per wheel, or a dipole's three."""
        return self._width

    def fill_loop_row(self, bank, c: int, build) -> None:
        bank.user_sizes[c] = self.parameters.size, self.memory_size, max(len(self.sensors), 1), self._width
        bank.user_parameters[c, : self.parameters.size] = self.parameters
        targets = [self.actuators[name] for name in self._outputs]
        if self._width == 3 and getattr(targets[0], "loop_role", None) == "magnetorquer":
            bank.magnetorquer[c] = build.row(targets[0])
        elif self._width == 3 and getattr(targets[0], "loop_role", None) == "body_torque":
            bank.body_torque[c] = build.row(targets[0])
        else:
            bank.wheel_order[c, : len(targets)] = [build.row(wheel) for wheel in targets]

    def take_loop_row(self, bank, c: int) -> None:
        self.memory[:] = bank.user_memory[c, : self.memory_size]

    def loop_fault(self, bank, c: int, t_s: float) -> Exception:
        """The law wrote an infinite command: the Python path's error for it."""
        try:
            self.apply_commands(t_s, bank.user_commands[c].copy())
        except ControllerError as exc:
            return exc
        return ControllerError(f"controller {self.name!r} at t = {t_s:.6g} s wrote an invalid command")

    def unit_raised(self, exc: Exception, t_s: float) -> Exception:
        """What the law raised inside the compiled loop, named as the Python path names it."""
        return ControllerError(f"controller {self.name!r} raised at t = {t_s:.6g} s: {_plain(exc)}")

    def unit_does_not_compile(self, cause: Exception) -> Exception:
        """The law does not compile with the documented signature: said with the numba error, on one line."""
        return ControllerError(f"controller {self.name!r}: its law does not compile as decide(t_s, readings, "
                               f"parameters, memory, commands): {_plain(cause)}")

    def decide(self, t_s, readings):
        block = self._readings
        for i, sensor in enumerate(self.sensors):
            value = readings[sensor.name]
            block[i, : len(value)] = value
        self._commands[:] = np.nan
        try:
            self.law(float(t_s), block[: max(len(self.sensors), 1)], self.parameters, self.memory, self._commands)
        except Exception as exc:  # noqa: BLE001 - whatever the law raised, named with the controller and time
            raise ControllerError(f"controller {self.name!r} raised at t = {t_s:.6g} s: {_plain(exc)}") from exc
        return self.apply_commands(t_s, self._commands)

    def apply_commands(self, t_s: float, commands: np.ndarray) -> dict:
        """``{actuator: command}`` from the law's output array (NaN entries hold; infinite ones are refused)."""
        if np.any(np.isinf(commands)):
            raise ControllerError(f"controller {self.name!r} at t = {t_s:.6g} s wrote an infinite command "
                                  f"{commands.tolist()} (NaN holds, any finite value commands)")
        if not self._wheel_refs:  # one set of magnetorquers, or a body torque
            return {} if np.any(np.isnan(commands)) else {self._outputs[0]: commands.copy()}
        return {name: float(v) for name, v in zip(self._outputs, commands) if not np.isnan(v)}


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
