"""Controllers (layer 5): sense → decide → command, once per control period.

A controller is a :class:`Controller` subclass that implements
:meth:`Controller.decide`, or any callable wrapped by
:class:`FunctionController`. Each cycle, in one SimPy process, the engine

1. samples the controller's sensors at the cycle time,
2. calls ``decide(t_s, readings)`` with ``readings = {sensor name: array}``,
3. applies the returned ``{actuator name: command}`` to the controller's
   actuators (each command is held until the next one).

A command for an actuator the controller does not own, a command the
actuator refuses, or an exception inside ``decide`` stops the run with a
:class:`~attsim.engine.ControllerError` naming the controller and the time;
the telemetry recorded so far is kept on disk.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from ._validate import finite_array, positive_scalar, unit_quaternion
from .actuators import ReactionWheel
from .component import Component, periodic
from .control_laws import (bdot_direction, bdot_rate, body_rate_relative, dipole_for_torque, lvlh_quaternion_tuple,
                           orbit_rate_inertial, pd_torque)
from .errors import AttsimError, ControllerError, InputError

__all__ = ["Controller", "FunctionController", "BDot", "QuaternionPD", "MagneticPD"]


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
    """

    def __init__(self, name: str, period_s: float, sensors: Sequence = (), actuators: Sequence = (), phase_s: float = 0.0):
        self.name = name
        self.period_s = positive_scalar(period_s, "period_s")
        self.phase_s = float(phase_s)
        if not (math.isfinite(self.phase_s) and self.phase_s >= 0):
            raise InputError("phase_s", "must be finite and >= 0", f"got {phase_s!r}")
        self._sensor_refs = list(sensors)
        self._actuator_refs = list(actuators)
        self.cycles = 0

    def decide(self, t_s: float, readings: dict) -> dict:  # pragma: no cover - abstract
        """Return ``{actuator name: command}`` for this cycle (empty: hold)."""
        raise NotImplementedError

    def prepare(self, mission):
        def resolve(ref, kind):
            component = mission.component(ref) if isinstance(ref, str) else ref
            if component not in mission.components:
                raise InputError(kind, f"controller {self.name!r} uses {getattr(component, 'name', component)!r}, which is not in the mission")
            return component

        self.sensors = [resolve(s, "sensors") for s in self._sensor_refs]
        self.actuators = {a.name: a for a in (resolve(a, "actuators") for a in self._actuator_refs)}
        for sensor in self.sensors:
            if sensor.driven_by not in (None, self):
                raise InputError("sensors", f"sensor {sensor.name!r} is already sampled by controller {sensor.driven_by.name!r}")
            sensor.driven_by = self
        for actuator in self.actuators.values():  # two laws commanding one actuator would race at shared instants
            owner = getattr(actuator, "commanded_by", None)
            if owner not in (None, self) and owner in mission.components:
                raise InputError("actuators", f"actuator {actuator.name!r} is already commanded by controller "
                                 f"{owner.name!r}; one controller drives an actuator")
            actuator.commanded_by = self

    def start(self, sc):
        self.cycles = 0
        self._wheel_rows = None

    def cycle(self, sc) -> None:
        self._sc = sc  # decide() of the attitude laws reads the true state when no sensor is given
        t = sc.env._now
        readings = {}
        for sensor in self.sensors:
            readings[sensor.name] = sensor.sample(sc)
        try:
            commands = self.decide(t, readings)
        except AttsimError:
            raise
        except Exception as exc:
            raise ControllerError(f"controller {self.name!r} raised at t = {t:.6g} s: {exc!r}") from exc
        if not commands:
            return
        if not isinstance(commands, dict):
            raise ControllerError(f"controller {self.name!r} at t = {t:.6g} s returned {type(commands).__name__}; "
                                  "expected a dict {actuator name: command}")
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
                actuator.command(sc, value)
            except InputError as exc:
                raise ControllerError(f"controller {self.name!r} at t = {t:.6g} s: bad command for {name!r}: {exc}") from exc
        if rows:
            sc.command_wheels(tuple(rows), tuple(torques))
        self.cycles += 1

    def _find_wheel_rows(self) -> dict:
        """``{name: plant row}`` of this controller's reaction wheels (known once the run has started them)."""
        self._wheel_rows = {name: a.index for name, a in self.actuators.items() if type(a) is ReactionWheel}
        return self._wheel_rows

    def processes(self, env, sc):
        return [periodic(env, self.period_s, self.phase_s, sc.mission.duration_s, lambda: self.cycle(sc))]


class FunctionController(Controller):
    """A controller from a callable ``f(t_s, readings) -> {actuator name: command}``."""

    def __init__(self, function: Callable, period_s: float, sensors: Sequence = (), actuators: Sequence = (),
                 phase_s: float = 0.0, name: str = "controller"):
        if not callable(function):
            raise InputError("function", "must be callable", f"got {type(function).__name__}")
        super().__init__(name, period_s, sensors, actuators, phase_s)
        self.function = function

    def decide(self, t_s, readings):
        return self.function(t_s, readings)


class BDot(Controller):
    """Magnetic detumbling from successive magnetometer samples.

    ``form="rate"``: ``m = -k dB/dt`` (k in A m^2 s / T);
    ``form="direction"``: ``m = -(k / |B|) d(B/|B|)/dt`` (k in A m^2 s),
    insensitive to the field's strength along the orbit. ``dB/dt`` is the
    difference of the last two samples over the period; the first cycle only
    samples. The magnetorquer clamps the command. With ``gain=None`` and the
    direction form the gain is chosen from the inertia and the orbit by the
    Avanzini-Giulietti rule ``k = 2 n (1 + sin ξ) J_min`` (n the orbit rate,
    ξ the orbit's inclination to the geomagnetic equator).
    """

    def __init__(self, magnetometer, magnetorquer, gain: float | None, period_s: float, form: str = "rate", name: str = "bdot"):
        super().__init__(name, period_s, sensors=[magnetometer], actuators=[magnetorquer])
        if form not in ("rate", "direction"):
            raise InputError("form", "must be 'rate' or 'direction'", f"got {form!r}")
        if gain is None and form != "direction":
            raise InputError("gain", "can be chosen automatically only for form='direction' (Avanzini-Giulietti)")
        self.gain = None if gain is None else positive_scalar(gain, "gain")
        self.form = form
        self._previous = None

    @staticmethod
    def avanzini_giulietti_gain(mean_motion_rad_s: float, geomagnetic_inclination_rad: float, J_min_kg_m2: float) -> float:
        """``k = 2 n (1 + sin ξ) J_min`` (Avanzini & Giulietti, JGCD 35(4), 2012), for the direction form."""
        return 2.0 * mean_motion_rad_s * (1.0 + math.sin(geomagnetic_inclination_rad)) * J_min_kg_m2

    def prepare(self, mission):
        super().prepare(mission)
        if self.gain is None:
            if mission.environment is None:
                raise InputError("gain", "needs a mission environment (orbit) to be chosen automatically")
            env = mission.environment
            self.gain_used = self.avanzini_giulietti_gain(env.orbit.mean_motion_rad_s, env.geomagnetic_inclination_rad(),
                                                          float(np.linalg.eigvalsh(mission.inertia_kg_m2)[0]))
        else:
            self.gain_used = self.gain
        self._mag = self.sensors[0].name
        self._mtq = next(iter(self.actuators))
        self._previous = None

    def decide(self, t_s, readings):
        b = tuple(readings[self._mag])
        previous, self._previous = self._previous, b
        if previous is None:
            return {}
        law = bdot_rate if self.form == "rate" else bdot_direction
        return {self._mtq: law(b, previous, self.gain_used, self.period_s)}


class QuaternionPD(Controller):
    """Quaternion-feedback PD to a fixed target attitude.

    ``τ = -k_p sign(δq_w) δq_v - k_d ω`` with ``δq = q_target* ⊗ q`` the
    attitude error in body axes (Wie, *Space Vehicle Dynamics and Control*,
    sec. 7.3). Attitude and rate come from ``attitude_sensor`` and
    ``rate_sensor`` when given, otherwise from the true state.

    The torque goes to ``wheels`` (motor torques ``τ_w = -A⁺ τ`` with ``A``
    the wheel axes as columns) or to a ``magnetorquer`` through
    ``m = B × τ / |B|²`` (needs ``magnetometer``; only the part of ``τ``
    normal to ``B`` can be produced).
    """

    def __init__(self, target_q, kp: float, kd: float, period_s: float, wheels: Sequence = (), magnetorquer=None,
                 magnetometer=None, attitude_sensor=None, rate_sensor=None, name: str = "qpd"):
        if bool(wheels) == (magnetorquer is not None):
            raise InputError("actuators", "give either wheels or a magnetorquer to QuaternionPD")
        if magnetorquer is not None and magnetometer is None:
            raise InputError("magnetometer", "is needed to map torque onto magnetorquers (m = B x tau / |B|^2)")
        sensors = [s for s in (attitude_sensor, rate_sensor, magnetometer) if s is not None]
        actuators = list(wheels) + ([magnetorquer] if magnetorquer is not None else [])
        super().__init__(name, period_s, sensors=sensors, actuators=actuators)
        self.target_q = unit_quaternion(target_q, "target_q")
        self._target = tuple(float(v) for v in self.target_q)
        self.kp = positive_scalar(kp, "kp")
        self.kd = positive_scalar(kd, "kd")
        self._roles = (attitude_sensor, rate_sensor, magnetometer)
        self._wheel_refs = list(wheels)

    def prepare(self, mission):
        super().prepare(mission)
        self._attitude, self._rate, self._mag = (_name_of(r) for r in self._roles)
        self._wheels = [self.actuators[_name_of(w)] for w in self._wheel_refs]
        if self._wheels:
            axes = np.column_stack([w.axis for w in self._wheels])
            if np.linalg.matrix_rank(axes) < 3:
                raise InputError("wheels", "must span three axes for three-axis control")
            self._allocation = -np.linalg.pinv(axes)
            self._allocation_rows = [tuple(float(v) for v in row) for row in self._allocation]
        self._mtq = None if self._wheels else next(iter(self.actuators))

    def torque(self, q, w) -> np.ndarray:
        """``τ = -k_p sign(δq_w) δq_v - k_d ω`` for attitude ``q`` and rate ``w`` (N m, body axes)."""
        return np.array(pd_torque(self._target, tuple(q), tuple(w), self.kp, self.kd))

    def decide(self, t_s, readings):
        q, w = _attitude_and_rate(self._sc, readings, self._attitude, self._rate)
        tau = pd_torque(self._target, q, w, self.kp, self.kd)
        if self._wheels:
            return {wheel.name: a[0] * tau[0] + a[1] * tau[1] + a[2] * tau[2]
                    for wheel, a in zip(self._wheels, self._allocation_rows)}
        return {self._mtq: dipole_for_torque(tuple(readings[self._mag]), tau)}


class MagneticPD(Controller):
    """Hold the orbit (LVLH) frame with magnetorquers.

    ``δq = q_IO* ⊗ q_IB`` and ``ω_rel = ω - R_IBᵀ ω_O`` (``ω_O`` the orbit
    frame's angular velocity) give the desired torque
    ``τ = -k_p sign(δq_w) δq_v - k_d ω_rel``, mapped to a dipole
    ``m = B × τ / |B|²``: only the part of ``τ`` normal to ``B`` is produced,
    and the field's rotation along the orbit makes the law work on average
    (Wisniewski, "Satellite attitude control using only electromagnetic
    actuation", 1996). Needs a mission environment (the orbit).

    ``dipole_compensation_Am2`` is subtracted from every command: the
    calibrated residual dipole of the spacecraft, whose torque would
    otherwise be a bias the PD law can only fight with a standing error.
    """

    def __init__(self, magnetometer, magnetorquer, kp: float, kd: float, period_s: float, attitude_sensor=None,
                 rate_sensor=None, dipole_compensation_Am2=(0.0, 0.0, 0.0), name: str = "mpd"):
        sensors = [s for s in (magnetometer, attitude_sensor, rate_sensor) if s is not None]
        super().__init__(name, period_s, sensors=sensors, actuators=[magnetorquer])
        self.kp = positive_scalar(kp, "kp")
        self.kd = positive_scalar(kd, "kd")
        self.compensation = finite_array(dipole_compensation_Am2, "dipole_compensation_Am2", (3,))
        self._roles = (magnetometer, attitude_sensor, rate_sensor)

    def prepare(self, mission):
        super().prepare(mission)
        if mission.environment is None:
            raise InputError("environment", f"controller {self.name!r} holds the orbit frame: the mission needs an environment")
        self._mag, self._attitude, self._rate = (_name_of(r) for r in self._roles)
        self._mtq = next(iter(self.actuators))

    def decide(self, t_s, readings):
        q, w = _attitude_and_rate(self._sc, readings, self._attitude, self._rate)
        e = self._sc.environment_now()
        r, v = tuple(e["r"]), tuple(e["v"])
        tau = pd_torque(lvlh_quaternion_tuple(r, v), q, body_rate_relative(q, w, orbit_rate_inertial(r, v)), self.kp, self.kd)
        m = dipole_for_torque(tuple(readings[self._mag]), tau)
        c = self.compensation
        return {self._mtq: (m[0] - c[0], m[1] - c[1], m[2] - c[2])}


def _name_of(ref):
    """A component given by name or by object, as its name (None stays None)."""
    return None if ref is None else (ref if isinstance(ref, str) else ref.name)


def _attitude_and_rate(sc, readings, attitude_sensor, rate_sensor) -> tuple[tuple, tuple]:
    """``(q, ω)`` as tuples from the named sensors' readings, or the true state where none is named."""
    q_true, w_true = sc.state()
    q = tuple(float(v) for v in readings[attitude_sensor]) if attitude_sensor else q_true
    w = tuple(float(v) for v in readings[rate_sensor]) if rate_sensor else w_true
    return q, w
