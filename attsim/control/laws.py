"""The built-in controllers: B-dot, quaternion PD, magnetic PD, momentum unloading.

Each is a :class:`~attsim.control.Controller` whose arithmetic is a compiled
kernel of :mod:`attsim.control.kernels` (shared with the compiled mission loop).
The attitude laws read their attitude and rate from a sensor, an estimator
or the truth, and follow a :mod:`attsim.guidance` target; the mission's
first attitude law writes the pointing columns of whichever law runs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from .._core.validate import finite_array, non_negative_scalar, one_of, positive_scalar, sequence, vector3
from ..actuators.devices import BodyTorque, Magnetorquer, ReactionWheel
from ..actuators.kernels import wheels_relative_momentum
from .allocation import (ALLOCATIONS, allocate, allocate_unscaled, allocation_matrix, control_axes_allocation,
                         control_axes_matrix, null_space_projector, null_space_torque, unloading_dipole)
from ..engine.component import Component
from .base import Controller, distinct, drivers_before
from ..environment.kernels import lvlh_quaternion_tuple
from .kernels import (bdot_direction, bdot_rate, body_rate_relative, dipole_feedforward, dipole_for_torque, known,
                      orbit_rate_inertial, pd_torque, pid_torque)
from ..errors import InputError
from ..estimation.mekf import MEKF
from ..guidance.targets import NadirPointing
from ..guidance.kernels import rate_error
from .knowledge import TRUTH
from .loop import (BDOT, LAW_BDOT_FORM, LAW_CLIP, LAW_COMPENSATION, LAW_GAIN, LAW_INTEGRAL_LIMIT, LAW_KD, LAW_KI,
                   LAW_KP, LAW_MOMENTUM, MAGNETIC_PD, QUATERNION_PD, UNLOADING)
from ..guidance.pointing import Pointing, pointing_values, target_of
from ..telemetry.schema import POINTING_COLUMNS
from ..sensors.devices import Gyro, Magnetometer, StarTracker

__all__ = ["BDot", "QuaternionPD", "MagneticPD", "MomentumUnloading"]

# what each argument that names a component must be: (types, what the law needs, said in its refusal)
MAGNETOMETER = (Magnetometer, "a magnetometer (attsim.Magnetometer): it reads the magnetic field")
MAGNETORQUER = (Magnetorquer, "magnetorquers (attsim.Magnetorquer): it commands a dipole")
ATTITUDE_SOURCE = ((StarTracker, MEKF), "an attitude source: a star tracker (attsim.StarTracker) or an estimator "
                   "(attsim.MEKF), or attsim.TRUTH for the true attitude")
RATE_SOURCE = ((Gyro, MEKF), "a rate source: a gyro (attsim.Gyro) or an estimator (attsim.MEKF), or attsim.TRUTH for "
               "the true rate")
WHEEL = (ReactionWheel, "reaction wheels (attsim.ReactionWheel): it commands motor torques")
BODY_TORQUE = (BodyTorque, "a body-torque actuator (attsim.BodyTorque): it commands a body torque")


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

    Parameters
    ----------
    magnetometer : Magnetometer
        The field it reads (a magnetometer: a gyro is refused).
    magnetorquer : Magnetorquer
        The magnetorquers it drives.
    gain : float or None
        ``k``: A m^2 s / T for ``form="rate"``, A m^2 s for ``"direction"``; None (direction form only): the
        Avanzini-Giulietti gain.
    period_s : float
        Control period, s.
    form : {"rate", "direction"}, optional
        The law's form (default ``"rate"``).
    name : str, optional
        Its name (default ``"bdot"``).
    command_delay_s : float, optional
        Commands act this long after the cycle that decided them, s (default 0; see
        :class:`~attsim.control.Controller`).
    """

    def __init__(self, magnetometer, magnetorquer, gain: float | None, period_s: float, form: str = "rate",
                 name: str = "bdot", command_delay_s: float = 0.0):
        super().__init__(name, period_s, sensors=[magnetometer], actuators=[magnetorquer],
                         command_delay_s=command_delay_s)
        self._arguments = [("magnetometer", magnetometer, MAGNETOMETER), ("magnetorquer", magnetorquer, MAGNETORQUER)]
        self.check_arguments(self._arguments)
        one_of(form, "form", ("rate", "direction"))
        if gain is None and form != "direction":
            raise InputError("gain", "can be chosen automatically only for form='direction' (Avanzini-Giulietti)")
        self.gain = None if gain is None else positive_scalar(gain, "gain")
        self.form = form
        self._previous = None

    @staticmethod
    def avanzini_giulietti_gain(mean_motion_rad_s: float, geomagnetic_inclination_rad: float,
                                J_min_kg_m2: float) -> float:
        """``k = 2 n (1 + sin ξ) J_min`` (Avanzini & Giulietti, JGCD 35(4), 2012), for the direction form."""
        return 2.0 * mean_motion_rad_s * (1.0 + math.sin(geomagnetic_inclination_rad)) * J_min_kg_m2

    def prepare(self, mission):
        self.check_arguments(self._arguments, mission)
        self.require_field(mission)
        super().prepare(mission)
        if self.gain is None:
            if mission.environment is None:
                raise InputError("gain", "needs a mission environment (orbit) to be chosen automatically")
            env = mission.environment
            self.gain_used = self.avanzini_giulietti_gain(env.orbit.mean_motion_rad_s,
                                                          env.geomagnetic_inclination_rad(),
                                                          float(np.linalg.eigvalsh(mission.inertia_kg_m2)[0]))
        else:
            self.gain_used = self.gain
        self._mag = self.sensors[0].name
        self._mtq = next(iter(self.actuators))
        self._previous = None

    def restart(self) -> None:
        self._previous = None  # a restarted B-dot's first cycle only samples again

    loop_unit = BDOT

    def loop_inputs(self) -> tuple:
        return (None, None, self._sensor_named(self._mag))

    def fill_loop_row(self, bank, c: int, build) -> None:
        bank.parameters[c, LAW_BDOT_FORM] = 0.0 if self.form == "rate" else 1.0
        bank.parameters[c, LAW_GAIN] = self.gain_used
        bank.magnetorquer[c] = build.row(self.actuators[self._mtq])

    def without_output(self) -> None:
        self._previous = None  # the next good sample starts the difference afresh (a gap is not one period)

    def decide(self, t_s, readings):
        b = tuple(readings[self._mag])
        previous, self._previous = self._previous, b
        if previous is None:
            return {}
        law = bdot_rate if self.form == "rate" else bdot_direction
        return {self._mtq: law(b, previous, self.gain_used, self.period_s)}


class QuaternionPD(Controller):
    """Quaternion-feedback PD (or PID) to a fixed attitude or a guidance target.

    ``τ = -k_p sign(δq_w) δq_v - k_d (ω - R_BR ω_R) - k_i z`` with
    ``δq = q_IR* ⊗ q`` the attitude error in body axes (Wie, *Space Vehicle
    Dynamics and Control*, sec. 7.3) and ``q_IR``, ``ω_R`` the reference: ``target_q`` (a
    fixed attitude, ``ω_R = 0``) or ``target`` (a :mod:`attsim.guidance`
    target: nadir, Sun, ground station, slew; its rate fed forward through
    the rate error). Attitude and rate come from ``attitude_source`` and
    ``rate_source`` when given — a sensor (a star tracker, a gyro) or an
    estimator (:class:`~attsim.estimation.mekf.MEKF`) — otherwise from the true
    state: ideal knowledge, warned of at the run unless asked for with
    ``attsim.TRUTH`` (:mod:`attsim.control.knowledge`). ``attitude_sensor`` and
    ``rate_sensor`` are the same arguments under their earlier names.

    The torque goes to ``wheels``, to an ideal ``body_torque``
    (:class:`~attsim.BodyTorque`, Basilisk's ``extForceTorque``) as it is, or
    to a ``magnetorquer`` through
    ``m = B × τ / |B|²`` (needs ``magnetometer``; only the part of ``τ``
    normal to ``B`` can be produced). Wheels of any number and axes that
    span three axes get the minimum-norm motor torques ``u = -A⁺ τ``, scaled
    as a whole to their motor limits so the torque keeps its direction; with
    more than three wheels, ``null_space_gain_Nm_s`` adds
    ``-k N (Ω - Ω*)`` in the null space, driving the wheel speeds toward
    ``wheel_speed_target_rad_s`` (one speed for all wheels, or one per
    wheel in ``wheels``' order) without disturbing the body
    (:mod:`attsim.allocation`). Only the target's part in the null space
    acts: in a four-wheel pyramid that is ``(+Ω, -Ω, +Ω, -Ω)`` (no body
    momentum), so a bias that keeps the wheels off zero, and from the
    friction of zero crossings, alternates its sign; a speed common to all
    wheels would be body momentum, which the null space cannot hold. With a magnetorquer,
    ``dipole_compensation_Am2`` is subtracted from every command (the
    calibrated residual dipole, as :class:`MagneticPD` does).

    ``allocation``: how the wheels meet their motor limits, ``"scale"``
    (default: the whole vector scaled, the torque's direction kept) or
    ``"clip"`` (each wheel clips its own command, as Basilisk's
    ``rwMotorTorque`` followed by its wheels' saturation). ``control_axes``
    (1 to 3 rows, body axes; default all three): only the torque's components
    along them are asked of the wheels (Basilisk's ``controlAxes_B``), which
    need then span only those axes. Both are recorded in ``meta.json``, as
    is ``command_delay_s`` (:class:`~attsim.control.Controller`: the commands
    act that long after the cycle that decided them).

    Integral feedback (``ki`` in N m/(rad s), default 0: a pure PD): a
    constant disturbance ``τ_d`` (wheel friction, a residual dipole, gravity
    gradient at an offset attitude) leaves a PD law a standing error
    ``δq_v = τ_d / k_p``, about ``2 τ_d / k_p`` rad. The law then integrates
    ``z = ∫ sign(δq_w) δq_v dt`` (rad s; the rectangle rule over
    ``period_s``), each component clamped to ``±integral_limit_rad_s``
    (anti-windup; needed when ``ki > 0``), and subtracts ``k_i z``
    (:func:`~attsim.control.kernels.pid_torque`: Schaub's integral feedback,
    as in Basilisk's ``mrpFeedback``). The integral starts at zero, stays
    where it is in cycles that decide nothing (the attitude not known yet,
    a sensor without output), and starts again at zero when a
    :class:`~attsim.modes.ModeManager` enters a mode that runs this law
    after one that did not (it must not carry a stale integral).

    Parameters
    ----------
    target_q : array_like (4,), optional
        A fixed target attitude ``q_IR``, scalar first (or give ``target``).
    kp : float
        Proportional gain, N m (per unit of ``δq_v``).
    kd : float
        Derivative gain, N m s/rad.
    period_s : float
        Control period, s.
    wheels : sequence of ReactionWheel, optional
        The wheels it drives (spanning three axes).
    magnetorquer : Magnetorquer, optional
        Or the magnetorquers it drives (needs ``magnetometer``).
    magnetometer : Magnetometer, optional
        The field for the magnetorquers' dipole (or for ``magnetorquer_feedforward``'s torque).
    attitude_sensor, rate_sensor : optional
        The earlier names of ``attitude_source`` and ``rate_source``.
    name : str, optional
        Its name (default ``"qpd"``).
    attitude_source : StarTracker, MEKF or attsim.TRUTH, optional
        Where its attitude comes from (None: the true state, with a warning at the run).
    rate_source : Gyro, MEKF or attsim.TRUTH, optional
        Where its rate comes from (None: the true state, with a warning at the run).
    target : attsim.guidance.Target, optional
        A guidance target (nadir, Sun, ground station, slew) instead of ``target_q``.
    null_space_gain_Nm_s : float, optional
        Gain of the null-space wheel-speed management, N m s (default 0: none).
    wheel_speed_target_rad_s : float or array_like, optional
        The speed(s) the null space drives the wheels toward, rad/s (one, or one per wheel). Only the part of
        the targets in the array's null space acts: on a four-wheel pyramid the null space is the signs
        (+, -, +, -), so one speed for all wheels does nothing there; give one per wheel, e.g. (w, -w, w, -w).
    dipole_compensation_Am2 : array_like (3,), optional
        Subtracted from every magnetorquer command, A m^2.
    allocation : {"scale", "clip"}, optional
        How wheel torques beyond a wheel's limit are handled: ``"scale"`` (default) scales the whole
        allocated vector so the most loaded wheel is at its limit (the torque's direction kept); ``"clip"``
        lets each wheel clip its own (Basilisk's ``rwMotorTorque`` and the wheels' saturation).
    control_axes : array_like (k, 3), optional
        With wheels: the body axes (1 to 3 rows) the law controls, Basilisk's ``controlAxes_B`` (default: all
        three); the wheels need span only these.
    body_torque : BodyTorque, optional
        Or the ideal body torque it drives (:class:`~attsim.BodyTorque`).
    command_delay_s : float, optional
        Commands act this long after the cycle that decided them, s (default 0; see
        :class:`~attsim.control.Controller`).
    ki : float, optional
        Integral gain, N m/(rad s) (default 0: PD).
    integral_limit_rad_s : float, optional
        Clamp of each integral component, rad s (needed when ``ki > 0``).
    magnetorquer_feedforward : Magnetorquer, optional
        With wheels or a body torque: magnetorquers another law drives (a
        :class:`MomentumUnloading`); each cycle subtracts their torque
        ``m × B`` (the dipole they hold, the field ``magnetometer`` reads)
        from the torque asked of the wheels, so that unloading does not
        disturb the pointing (Basilisk's ``mtbFeedforward``). The dipole is
        the one held when the law decides: add the magnetorquers' law to the
        mission before this one to use the dipole decided at the same instant.
    """

    def __init__(self, target_q=None, kp: float = None, kd: float = None, period_s: float = None, wheels: Sequence = (),
                 magnetorquer=None, magnetometer=None, attitude_sensor=None, rate_sensor=None, name: str = "qpd",
                 attitude_source=None, rate_source=None, target=None, null_space_gain_Nm_s: float = 0.0,
                 wheel_speed_target_rad_s: float = 0.0, dipole_compensation_Am2=(0.0, 0.0, 0.0), ki: float = 0.0,
                 integral_limit_rad_s: float | None = None, allocation: str = "scale", control_axes=None,
                 body_torque=None, command_delay_s: float = 0.0, magnetorquer_feedforward=None):
        for value, field in ((kp, "kp"), (kd, "kd"), (period_s, "period_s")):
            if value is None:
                raise InputError(field, "is required")
        attitude_source = _source(attitude_source, attitude_sensor, "attitude_source")
        rate_source = _source(rate_source, rate_sensor, "rate_source")
        wheels = sequence(wheels, "wheels")
        if bool(wheels) + (magnetorquer is not None) + (body_torque is not None) != 1:
            raise InputError("actuators", "give QuaternionPD one of: wheels, a magnetorquer or a body_torque")
        if magnetorquer is not None and magnetometer is None:
            raise InputError("magnetometer", "is needed to map torque onto magnetorquers (m = B x tau / |B|^2)")
        if magnetorquer_feedforward is not None and magnetorquer is not None:
            raise InputError("magnetorquer_feedforward", "applies to a law on wheels or a body torque (this one drives "
                             "the magnetorquers itself)")
        if magnetorquer_feedforward is not None and magnetometer is None:
            raise InputError("magnetometer", "is needed with magnetorquer_feedforward: the field B of the torque m x B "
                             "the wheels leave to the magnetorquers")
        distinct(wheels, "wheels", f"{type(self).__name__} {name!r}")
        self._knowledge = {"attitude": attitude_source, "rate": rate_source}  # as given: None, TRUTH or a source
        attitude_source, rate_source = _unless_truth(attitude_source), _unless_truth(rate_source)
        sensors = [s for s in (attitude_source, rate_source, magnetometer) if s is not None and not _is_estimator(s)]
        actuators = list(wheels) + [a for a in (magnetorquer, body_torque) if a is not None]
        super().__init__(name, period_s, sensors=sensors, actuators=actuators, command_delay_s=command_delay_s)
        self._arguments = [("attitude_source", attitude_source, ATTITUDE_SOURCE),
                           ("rate_source", rate_source, RATE_SOURCE), ("magnetometer", magnetometer, MAGNETOMETER),
                           ("magnetorquer", magnetorquer, MAGNETORQUER), ("body_torque", body_torque, BODY_TORQUE),
                           ("magnetorquer_feedforward", magnetorquer_feedforward, MAGNETORQUER)] \
            + [("wheels", w, WHEEL) for w in wheels]
        self._body_torque_ref = body_torque
        self.check_arguments(self._arguments)
        # the magnetorquers whose torque the law leaves out of the wheels' (read, not driven): their name
        self.magnetorquer_feedforward = _name_of(magnetorquer_feedforward)
        self.target = target_of(target_q, target, f"{type(self).__name__} {name!r}")
        self.target_q = getattr(self.target, "q_IR", None)  # a fixed target's attitude (None for a moving one)
        self.pointing = Pointing(self.target)
        self.kp = positive_scalar(kp, "kp")
        self.kd = positive_scalar(kd, "kd")
        self.ki = non_negative_scalar(ki, "ki")
        if self.ki > 0.0 and integral_limit_rad_s is None:
            raise InputError("integral_limit_rad_s", "is required (> 0) when ki > 0: the anti-windup bound on each "
                             "component of the integrated attitude error, rad s")
        self.integral_limit_rad_s = None if integral_limit_rad_s is None else positive_scalar(
            integral_limit_rad_s, "integral_limit_rad_s")
        self._integral = (0.0, 0.0, 0.0)
        self._roles = (attitude_source, rate_source, magnetometer)
        self._wheel_refs = list(wheels)
        self.null_space_gain_Nm_s = non_negative_scalar(null_space_gain_Nm_s, "null_space_gain_Nm_s")
        target = finite_array(wheel_speed_target_rad_s, "wheel_speed_target_rad_s")
        if target.shape not in ((), (len(wheels),)):
            raise InputError("wheel_speed_target_rad_s", "must be one number or one per wheel",
                             f"got shape {target.shape} for {len(wheels)} wheels")
        self.wheel_speed_target_rad_s = float(target) if target.ndim == 0 else tuple(float(v) for v in target)
        self.compensation = vector3(dipole_compensation_Am2, "dipole_compensation_Am2")
        if wheels and np.any(self.compensation != 0.0):
            raise InputError("dipole_compensation_Am2", "applies to a magnetorquer law only (this one drives wheels)")
        self.allocation = one_of(allocation, "allocation", ALLOCATIONS)
        self.control_axes = None if control_axes is None else control_axes_matrix(control_axes)
        if not wheels and (self.allocation != "scale" or self.control_axes is not None):
            raise InputError("allocation" if self.control_axes is None else "control_axes",
                             "applies to a wheel law only (this one drives a magnetorquer or a body torque)")
        if not wheels:
            self.allocation = None  # nothing allocated: meta.json says nothing of it

    def prepare(self, mission):
        resolved = self.check_arguments(self._arguments, mission)
        distinct(resolved[6:], "wheels", f"controller {self.name!r}")  # a wheel given once by name, once as itself
        self._body_torque = None if resolved[4] is None else resolved[4].name
        self._feedforward = resolved[5]
        self._feedforward_drivers = () if self._feedforward is None else drivers_before(
            mission, self._feedforward, self, "magnetorquer_feedforward")
        if not self._wheel_refs and self._body_torque is None:
            self.require_field(mission)
        super().prepare(mission)
        self.pointing.check(mission, f"controller {self.name!r}")
        self._attitude_laws = _attitude_laws(mission)
        self.writes_pointing = self._attitude_laws[0] is self
        self._attitude, self._rate, self._mag = (_name_of(r) for r in self._roles)
        self._wheels = [self.actuators[_name_of(w)] for w in self._wheel_refs]
        if self._wheels:
            axes = np.array([w.axis for w in self._wheels])
            try:
                self._allocation = allocation_matrix(axes) if self.control_axes is None else \
                    control_axes_allocation(axes, self.control_axes)
            except InputError as exc:
                raise InputError("wheels", "must span three axes for three-axis control (or the control_axes given)",
                                 exc.detail) from None
            n = len(self._wheels)
            self._limits = np.array([w.max_torque_Nm for w in self._wheels])
            # the null space exists only for redundant arrays; a zero projector keeps one code path
            self._manages_null_space = n > 3 and self.null_space_gain_Nm_s > 0
            self._projector = null_space_projector(axes) if self._manages_null_space else np.zeros((n, n))
            self._speeds, self._null, self._motor = np.zeros(n), np.zeros(n), np.zeros(n)
            self._speed_target = np.broadcast_to(np.asarray(self.wheel_speed_target_rad_s, float), (n,)).copy()
            beyond = [w.name for w, s in zip(self._wheels, self._speed_target) if abs(s) > w.max_speed_rad_s]
            if beyond:  # never reached: the null space would push at the motors' limit for the whole run
                raise InputError("wheel_speed_target_rad_s", "must be within each wheel's max_speed_rad_s",
                                 f"beyond it for {', '.join(beyond)}")
        self._mtq = None if self._wheels or self._body_torque else next(iter(self.actuators))

    def start(self, sc):
        super().start(sc)
        self._integral = (0.0, 0.0, 0.0)

    def restart(self) -> None:
        self._integral = (0.0, 0.0, 0.0)  # a law re-entered by its mode must not carry a stale integral

    loop_unit = QUATERNION_PD

    def loop_inputs(self) -> tuple:
        return tuple(self._sensor_named(r) for r in (self._attitude, self._rate, self._mag))

    def fill_loop_row(self, bank, c: int, build) -> None:
        p = bank.parameters[c]
        p[LAW_KI], p[LAW_INTEGRAL_LIMIT] = self.ki, self.integral_limit_rad_s or 0.0
        p[LAW_KP], p[LAW_KD] = self.kp, self.kd
        bank.target_kind[c], bank.target[c] = self.pointing.kind, self.pointing.parameters
        if self._wheels:
            # the loop's null-space step runs only where the Python path's does (a redundant array, a gain)
            p[LAW_GAIN] = self.null_space_gain_Nm_s if self._manages_null_space else 0.0
            p[LAW_CLIP] = 1.0 if self.allocation == "clip" else 0.0
            rows = [build.row(wheel) for wheel in self._wheels]
            bank.wheel_scratch[c, 3, rows] = self._speed_target  # the null space's speed targets, per wheel
            for j, row in zip(rows, self._allocation):
                bank.allocation[c, j] = row
            bank.wheel_order[c, : len(rows)] = rows  # commanded (and logged) in the controller's order
            bank.null_projector[c][np.ix_(rows, rows)] = self._projector
        elif self._body_torque is not None:
            bank.body_torque[c] = build.row(self.actuators[self._body_torque])
        else:
            bank.magnetorquer[c] = build.row(self.actuators[self._mtq])
            p[LAW_COMPENSATION:LAW_COMPENSATION + 3] = self.compensation
        if self._feedforward is not None:
            bank.feedforward[c] = build.row(self._feedforward)

    def take_loop_row(self, bank, c: int) -> None:
        if self.ki > 0.0:
            self._integral = tuple(float(v) for v in bank.memory[c, :3])

    @property
    def integral(self) -> np.ndarray:
        """The integrated attitude error ``z`` (rad s, body axes) after the last cycle (zeros with ``ki = 0``)."""
        return np.array(self._integral)

    def attitude_seen(self, sc) -> tuple:
        """The attitude this law acts on now (its estimator's, its attitude sensor's latest sample, or the truth)."""
        return _attitude_seen(self, sc)

    def torque(self, q, w, t_s: float = 0.0) -> np.ndarray:
        """``τ`` (N m, body axes) for attitude ``q`` and rate ``w`` at ``t_s`` (the reference there), with the
        integral term of the current ``z`` (not advanced: this asks, it runs no cycle)."""
        q_ref, w_ref, _ = self.pointing.reference(getattr(self, "_sc", None), t_s)
        q, w = tuple(float(v) for v in q), tuple(float(v) for v in w)
        tau = np.array(pd_torque(q_ref, q, rate_error(q, q_ref, w, w_ref), self.kp, self.kd))
        return tau - self.ki * self.integral if self.ki > 0.0 else tau

    def columns(self):
        return list(POINTING_COLUMNS) if self.writes_pointing else []

    def values(self, sc):
        return pointing_values(self._attitude_laws, sc) if self.writes_pointing else []

    def knowledge_sources(self) -> dict:
        """``{"attitude": [source], "rate": [source]}`` as given (None: the truth, unasked; ``control.knowledge``)."""
        return {quantity: [source] for quantity, source in self._knowledge.items()}

    def decide(self, t_s, readings):
        q, w = _attitude_and_rate(self._sc, readings, self._attitude, self._rate)
        if not known(q, w):
            return {}
        q_ref, w_ref, _ = self.pointing.reference(self._sc, t_s)
        if self.ki > 0.0:  # the compiled loop's QPD cycle (attsim.engine.loop) runs the same kernels
            tau, self._integral = pid_torque(q_ref, q, rate_error(q, q_ref, w, w_ref), self.kp, self.kd, self.ki,
                                             self._integral, self.period_s, self.integral_limit_rad_s)
        else:
            tau = pd_torque(q_ref, q, rate_error(q, q_ref, w, w_ref), self.kp, self.kd)
        if self._wheels:
            return self._wheel_commands(self._fed_forward(tau, readings))
        if self._body_torque is not None:
            return {self._body_torque: self._fed_forward(tau, readings)}
        m, c = dipole_for_torque(tuple(readings[self._mag]), tau), self.compensation
        return {self._mtq: (m[0] - c[0], m[1] - c[1], m[2] - c[2])}

    def _fed_forward(self, tau, readings) -> tuple:
        """``tau`` less the feed-forward magnetorquers' torque ``m × B`` (their dipole held now, the field read):
        what the wheels or the body torque must add (:func:`~attsim.control.kernels.dipole_feedforward`)."""
        if self._feedforward is None:
            return tau
        for driver in self._feedforward_drivers:  # their commands of this instant first, as the compiled loop
            driver.bring_up_to_date(self._sc)
        m = self._feedforward.dipole_Am2
        return dipole_feedforward(tau, (m[0], m[1], m[2]), tuple(readings[self._mag]))

    def _wheel_commands(self, tau) -> dict:
        """The wheels' motor torques for the body torque ``tau``: allocated to the array (with the null-space
        torque toward the speed targets when asked), scaled to the limits."""
        if self._manages_null_space:
            for j, wheel in enumerate(self._wheels):
                self._speeds[j] = wheel.speed_rad_s(self._sc)
            null_space_torque(self._projector, self._speeds, self._speed_target, self.null_space_gain_Nm_s,
                              self._null)
        if self.allocation == "clip":
            allocate_unscaled(self._allocation, tau, self._null, self._motor)
        else:
            allocate(self._allocation, tau, self._null, self._limits, self._motor)
        return {wheel.name: float(u) for wheel, u in zip(self._wheels, self._motor)}


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

    Parameters
    ----------
    magnetometer : Magnetometer
        The field it reads.
    magnetorquer : Magnetorquer
        The magnetorquers it drives.
    kp : float
        Proportional gain, N m.
    kd : float
        Derivative gain, N m s/rad.
    period_s : float
        Control period, s.
    attitude_sensor, rate_sensor : optional
        The earlier names of ``attitude_source`` and ``rate_source``.
    dipole_compensation_Am2 : array_like (3,), optional
        The calibrated residual dipole subtracted from every command, A m^2.
    name : str, optional
        Its name (default ``"mpd"``).
    command_delay_s : float, optional
        Commands act this long after the cycle that decided them, s (default 0; see
        :class:`~attsim.control.Controller`).
    attitude_source : StarTracker, MEKF or attsim.TRUTH, optional
        Where its attitude comes from (None: the true state, with a warning at the run).
    rate_source : Gyro, MEKF or attsim.TRUTH, optional
        Where its rate comes from (None: the true state, with a warning at the run).
    """

    def __init__(self, magnetometer, magnetorquer, kp: float, kd: float, period_s: float, attitude_sensor=None,
                 rate_sensor=None, dipole_compensation_Am2=(0.0, 0.0, 0.0), name: str = "mpd", attitude_source=None,
                 rate_source=None, command_delay_s: float = 0.0):
        attitude_sensor = _source(attitude_source, attitude_sensor, "attitude_source")
        rate_sensor = _source(rate_source, rate_sensor, "rate_source")
        self._knowledge = {"attitude": attitude_sensor, "rate": rate_sensor}  # as given: None, TRUTH or a source
        attitude_sensor, rate_sensor = _unless_truth(attitude_sensor), _unless_truth(rate_sensor)
        sensors = [s for s in (magnetometer, attitude_sensor, rate_sensor) if s is not None and not _is_estimator(s)]
        super().__init__(name, period_s, sensors=sensors, actuators=[magnetorquer], command_delay_s=command_delay_s)
        self._arguments = [("magnetometer", magnetometer, MAGNETOMETER), ("magnetorquer", magnetorquer, MAGNETORQUER),
                           ("attitude_source", attitude_sensor, ATTITUDE_SOURCE),
                           ("rate_source", rate_sensor, RATE_SOURCE)]
        self.check_arguments(self._arguments)
        self.kp = positive_scalar(kp, "kp")
        self.kd = positive_scalar(kd, "kd")
        self.compensation = vector3(dipole_compensation_Am2, "dipole_compensation_Am2")
        self._roles = (magnetometer, attitude_sensor, rate_sensor)
        self.pointing = Pointing(NadirPointing())  # the orbit (LVLH) frame, for the pointing columns

    def prepare(self, mission):
        self.check_arguments(self._arguments, mission)
        if mission.environment is None:
            raise InputError("environment",
                             f"controller {self.name!r} holds the orbit frame: the mission needs an environment")
        self.require_field(mission)
        super().prepare(mission)
        self._attitude_laws = _attitude_laws(mission)
        self.writes_pointing = self._attitude_laws[0] is self
        self._mag, self._attitude, self._rate = (_name_of(r) for r in self._roles)
        self._mtq = next(iter(self.actuators))

    loop_unit = MAGNETIC_PD

    def loop_inputs(self) -> tuple:
        return tuple(self._sensor_named(r) for r in (self._attitude, self._rate, self._mag))

    def fill_loop_row(self, bank, c: int, build) -> None:
        bank.target_kind[c], bank.target[c] = self.pointing.kind, self.pointing.parameters
        p = bank.parameters[c]
        p[LAW_KP], p[LAW_KD] = self.kp, self.kd
        p[LAW_COMPENSATION:LAW_COMPENSATION + 3] = self.compensation
        bank.magnetorquer[c] = build.row(self.actuators[self._mtq])

    def columns(self):
        return list(POINTING_COLUMNS) if self.writes_pointing else []

    def values(self, sc):
        return pointing_values(self._attitude_laws, sc) if self.writes_pointing else []

    def attitude_seen(self, sc) -> tuple:
        """The attitude this law acts on now (its estimator's, its attitude sensor's latest sample, or the truth)."""
        return _attitude_seen(self, sc)

    def knowledge_sources(self) -> dict:
        """``{"attitude": [source], "rate": [source]}`` as given (None: the truth, unasked; ``control.knowledge``)."""
        return {quantity: [source] for quantity, source in self._knowledge.items()}

    def decide(self, t_s, readings):
        q, w = _attitude_and_rate(self._sc, readings, self._attitude, self._rate)
        if not known(q, w):
            return {}
        e = self._sc.environment_now()
        r, v = tuple(e["r"]), tuple(e["v"])
        w_rel = body_rate_relative(q, w, orbit_rate_inertial(r, v))
        tau = pd_torque(lvlh_quaternion_tuple(r, v), q, w_rel, self.kp, self.kd)
        m = dipole_for_torque(tuple(readings[self._mag]), tau)
        c = self.compensation
        return {self._mtq: (m[0] - c[0], m[1] - c[1], m[2] - c[2])}


class MomentumUnloading(Controller):
    """Magnetorquer unloading of the reaction wheels, beside the wheel controller.

    ``m = k (h × B) / |B|²`` with ``h`` the wheels' momentum (body axes, all
    the mission's wheels) and ``B`` the magnetometer's field: its torque
    ``m × B = -k (h - (h·B̂) B̂)`` removes the momentum normal to the field at
    the rate ``k`` (1/s) while the attitude controller holds the attitude
    with the wheels (Camillo & Markley, AIAA 80-1733; :mod:`attsim.allocation`).
    ``h`` is their total momentum ``Σ J_s (Ω + ĝ·ω) ĝ`` (``momentum="total"``)
    or their momentum relative to the body ``Σ J_s Ω ĝ`` (``"relative"``:
    Basilisk's ``mtbMomentumManagementSimple``, whose ``τ = -K_p h`` through
    ``torque2Dipole`` is this dipole). The magnetorquers map it onto their
    bars (:class:`~attsim.Magnetorquer`: Basilisk's ``dipoleMapping``). Their
    torque disturbs the pointing unless the wheel law feeds it forward
    (``magnetorquer_feedforward=`` of :class:`QuaternionPD` or
    :class:`~attsim.MRPFeedback`, Basilisk's ``mtbFeedforward``).

    ``gain_per_s`` is at most ``1 / period_s``: the dipole is held for a
    period, so a larger gain removes more than the whole momentum normal to
    the field within one period and reverses it (at twice the limit the
    held law diverges wherever the magnetorquers do not saturate).

    Parameters
    ----------
    magnetometer : Magnetometer
        The field it reads.
    magnetorquer : Magnetorquer
        The magnetorquers it drives.
    gain_per_s : float
        ``k``, 1/s (at most ``1 / period_s``).
    period_s : float
        Control period, s.
    name : str, optional
        Its name (default ``"unload"``).
    command_delay_s : float, optional
        Commands act this long after the cycle that decided them, s (default 0; see
        :class:`~attsim.control.Controller`).
    momentum : {"total", "relative"}, optional
        The wheels' momentum it drains: their absolute momentum (default) or their momentum relative to the
        body, ``Σ J_s Ω ĝ`` (Basilisk's ``mtbMomentumManagementSimple``).
    """

    def __init__(self, magnetometer, magnetorquer, gain_per_s: float, period_s: float, name: str = "unload",
                 command_delay_s: float = 0.0, momentum: str = "total"):
        super().__init__(name, period_s, sensors=[magnetometer], actuators=[magnetorquer],
                         command_delay_s=command_delay_s)
        self._arguments = [("magnetometer", magnetometer, MAGNETOMETER), ("magnetorquer", magnetorquer, MAGNETORQUER)]
        self.check_arguments(self._arguments)
        self.gain_per_s = positive_scalar(gain_per_s, "gain_per_s")
        self.momentum = one_of(momentum, "momentum", ("total", "relative"))
        if self.gain_per_s * self.period_s > 1.0:
            raise InputError("gain_per_s", f"must be at most 1 / period_s = {1.0 / self.period_s:g} 1/s (a larger "
                             "gain removes more than the whole momentum normal to the field within one held period)",
                             f"got {gain_per_s!r}")

    def prepare(self, mission):
        self.check_arguments(self._arguments, mission)
        self.require_field(mission)
        super().prepare(mission)
        if not any(isinstance(c, ReactionWheel) for c in mission.components):
            raise InputError("wheels", f"controller {self.name!r} unloads reaction wheels: the mission has none")
        self._mag = self.sensors[0].name
        self._mtq = next(iter(self.actuators))

    loop_unit = UNLOADING

    def loop_inputs(self) -> tuple:
        return (None, None, self._sensor_named(self._mag))

    def fill_loop_row(self, bank, c: int, build) -> None:
        bank.parameters[c, LAW_GAIN] = self.gain_per_s
        bank.parameters[c, LAW_MOMENTUM] = 1.0 if self.momentum == "relative" else 0.0
        bank.magnetorquer[c] = build.row(self.actuators[self._mtq])

    def decide(self, t_s, readings):
        sc = self._sc
        if self.momentum == "relative":
            h = wheels_relative_momentum(sc.wheels, sc.state()[1])
        else:
            h = sc.h_wheels_Nms
        return {self._mtq: unloading_dipole(tuple(readings[self._mag]), h, self.gain_per_s)}


def _attitude_laws(mission) -> list:
    """The mission's attitude controllers in its order: the first writes the pointing columns, of the one running."""
    return [c for c in mission.components if isinstance(c, (QuaternionPD, MagneticPD))]


def _is_estimator(ref) -> bool:
    return isinstance(ref, MEKF)


def _source(source, sensor, field: str):
    """The attitude or rate source given under its name or its earlier ``*_sensor`` name (not both)."""
    if source is not None and sensor is not None:
        raise InputError(field, f"give it once (as {field}; {field.replace('source', 'sensor')} is its earlier name)")
    given = source if source is not None else sensor
    if given is not None and given is not TRUTH and not isinstance(given, (str, Component)):
        raise InputError(field, "must be a sensor, an estimator, its name, or attsim.TRUTH (the true state)",
                         f"got {type(given).__name__}")
    return given


def _unless_truth(source):
    """A source as the law runs it: the truth asked for (TRUTH) is the truth (None)."""
    return None if source is TRUTH else source


def _name_of(ref):
    """A sensor given by name or by object, as its name; an estimator stays the object (None stays None)."""
    return None if ref is None else (ref if isinstance(ref, str) or _is_estimator(ref) else ref.name)


def _attitude_seen(law, sc) -> tuple:
    """The attitude ``law`` acts on now: its estimator's estimate, its attitude sensor's latest sample (NaN
    before the first), or the true attitude (:meth:`QuaternionPD.attitude_seen`)."""
    source = law._attitude
    if source is None:
        return sc.state()[0]
    if isinstance(source, str):
        return tuple(float(v) for v in next(s for s in law.sensors if s.name == source).latest)
    source.bring_up_to_date(sc)
    return source.attitude()


def _attitude_and_rate(sc, readings, attitude_source, rate_source) -> tuple[tuple, tuple]:
    """``(q, ω)`` as tuples from the named sensors' readings or the estimators, the true state where none is named."""
    q_true, w_true = sc.state()
    if attitude_source is None:
        q = q_true
    elif isinstance(attitude_source, str):
        q = tuple(float(v) for v in readings[attitude_source])
    else:  # an estimator: its cycle at this instant first, whichever process SimPy serves first
        attitude_source.bring_up_to_date(sc)
        q = attitude_source.attitude()
    if rate_source is None:
        w = w_true
    elif isinstance(rate_source, str):
        w = tuple(float(v) for v in readings[rate_source])
    else:
        rate_source.bring_up_to_date(sc)
        w = rate_source.rate()
    return q, w
