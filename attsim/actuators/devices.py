"""Actuators and time-tagged command schedules.

Every actuator holds its last command (zero-order hold) and hands the
resulting body torque, dipole or wheel torque to the running
:class:`~attsim.engine.Spacecraft`. Commands are limited the way the
hardware limits them, and every saturation is logged as an event when it
begins and when it ends.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from .._core.validate import (directions, finite_array, finite_number, non_negative_scalar, one_of, per_item,
                              positive_int, positive_scalar, real_number, sequence, unit_vector, vector3)
from .catalogue import magnetorquer_spec, wheel_arguments
from .kernels import magnetorquer_bars, magnetorquer_dipole
from ..engine.component import At, Component
from ..errors import InputError
from ..plausibility import check_wheel
from .loop import PART
from ..telemetry.schema import BODY_TORQUE_SUFFIXES, WHEEL_FRICTION_SUFFIXES, WHEEL_JITTER_SUFFIXES, WHEEL_SUFFIXES

__all__ = ["TorqueSchedule", "CommandSchedule", "Thruster", "Magnetorquer", "ReactionWheel", "BodyTorque",
           "BarDipoles"]


class _Saturation:
    """Logs the start and the end of a saturated interval once each."""

    def __init__(self, actuator: str, what: str):
        self.actuator, self.what, self.active = actuator, what, False

    def update(self, sc, saturated: bool, **fields) -> None:
        if saturated != self.active:
            sc.event("saturation" if saturated else "saturation_end", actuator=self.actuator, what=self.what, **fields)
            self.active = saturated


# a pulse train is held as its list of segments: a million is already seconds of set-up
MAX_PULSES = 1_000_000


def _finite_triple(value):
    """``value`` as three floats when it is a tuple, list or float array of three finite floats, else None.

    The fast check of a command vector: what it accepts, the generic check
    (:func:`~attsim._core.validate.finite_array`) accepts alike.
    """
    kind = type(value)
    if kind is np.ndarray:
        if value.shape != (3,) or value.dtype != np.float64:
            return None
        value = value.tolist()
    elif (kind is not tuple and kind is not list) or len(value) != 3:
        return None
    x, y, z = value
    for v in (x, y, z):
        if (type(v) is not float and type(v) is not np.float64) or not math.isfinite(v):
            return None
    return (float(x), float(y), float(z))


class TorqueSchedule(Component):
    """Time-tagged body torques: constant segments over ``[t_start, t_end)``.

    Parameters
    ----------
    segments : sequence of (t_start_s, t_end_s, (tx, ty, tz))
        Torques in N m, body axes, sorted by start time. Segments that
        overlap **add**: the held torque is the sum of every segment active
        at that time. ``t_end_s = math.inf`` holds a segment to the end of
        the run, whatever its duration (Basilisk's constant
        ``extTorquePntB_B``).
    name : str
        Component name; telemetry columns ``<name>_tau_x/y/z``.
    """

    loop_part, loop_role = PART, "schedule"  # the compiled mission (attsim.actuators.loop)

    def loop_ready(self, mission) -> bool:
        return True

    def __init__(self, segments: Sequence, name: str = "schedule"):
        self.name = name
        checked = []
        previous_start = -math.inf
        for k, segment in enumerate(sequence(segments, "segments")):
            try:
                t0, t1, torque = segment
            except (TypeError, ValueError):
                raise InputError(f"segments[{k}]", "must be (t_start_s, t_end_s, (tx, ty, tz))",
                                 f"got {segment!r}") from None
            t0 = finite_number(t0, f"segments[{k}].t_start_s")
            t1 = real_number(t1, f"segments[{k}].t_end_s")
            if math.isnan(t1) or t1 == -math.inf:  # math.inf: held to the end of the run, however long
                raise InputError(f"segments[{k}].t_end_s", "must be finite, or math.inf (to the end of the run)",
                                 f"got {t1!r}")
            torque = vector3(torque, f"segments[{k}].torque")
            if not t1 > t0:
                raise InputError(f"segments[{k}]", "must have t_start_s < t_end_s (a positive duration)",
                                 f"got [{float(t0)}, {float(t1)})")
            if t0 < 0:
                raise InputError(f"segments[{k}].t_start_s", "must be >= 0", f"got {float(t0)}")
            if t0 < previous_start:
                raise InputError("segments", "must be sorted by start time",
                                 f"segment {k} starts at {float(t0)} s, before {previous_start} s")
            previous_start = float(t0)
            checked.append((float(t0), float(t1), torque))
        self.segments = checked
        self._current = (0.0, 0.0, 0.0)

    @classmethod
    def pulse_train(cls, start_s: float, period_s: float, width_s: float, count: int, torque_Nm,
                    name: str = "pulses") -> TorqueSchedule:
        """``count`` pulses of ``torque_Nm`` lasting ``width_s``, every ``period_s`` from ``start_s``."""
        start = non_negative_scalar(start_s, "start_s")
        period = positive_scalar(period_s, "period_s")
        width = positive_scalar(width_s, "width_s")
        if width > period:
            raise InputError("width_s", "must not exceed period_s", f"{width} > {period}")
        count = positive_int(count, "count", maximum=MAX_PULSES)
        torque = vector3(torque_Nm, "torque_Nm")
        last_start = start + (count - 1) * period
        if not math.isfinite(last_start + period) or not last_start + width > last_start:
            raise InputError("period_s", "with start_s, width_s and count must give pulses of a positive width "
                             "at finite times", f"the last pulse starts at {last_start:g} s and lasts {width:g} s")
        return cls([(start + k * period, start + k * period + width, torque) for k in range(count)], name=name)

    def torque_at(self, t_s: float) -> tuple:
        """The held torque at ``t_s``: sum of the segments active then."""
        total = np.zeros(3)
        for t0, t1, torque in self.segments:
            if t0 <= t_s < t1:
                total += torque
        return tuple(float(x) for x in total)

    def start(self, sc):
        self._current = (0.0, 0.0, 0.0)

    def columns(self):
        return [f"{self.name}_tau_x", f"{self.name}_tau_y", f"{self.name}_tau_z"]

    def values(self, sc):
        return list(self._current)

    def processes(self, env, sc):
        changes = sorted({t for t0, t1, _ in self.segments for t in (t0, t1)})

        def process(env):
            for t in changes:
                if t > env.now:
                    yield At(env, t)
                self._current = self.torque_at(t)
                sc.set_external_torque(self.name, self._current)
                sc.event("command", actuator=self.name, torque_Nm=list(self._current))

        return [process(env)]


class CommandSchedule(Component):
    """Plays back time-tagged commands to one actuator: ``[(t_s, command), ...]``.

    Each command is what the actuator's ``command`` accepts (a dipole
    vector, a wheel torque, a thruster on-time); it is held until the next.

    Parameters
    ----------
    actuator : str
        The name of the actuator it drives (a wheel, a magnetorquer, a thruster).
    commands : sequence of (t_s, command)
        Times (s since the start of the run) and the commands sent then.
    name : str, optional
        Its name (default ``"<actuator>_playback"``).
    """

    loop_part, loop_role = PART, "playback"  # the compiled mission (attsim.actuators.loop)

    def loop_ready(self, mission) -> bool:
        """Playback to a wheel, a set of magnetorquers or a body torque runs compiled (to a thruster it does not)."""
        target = next((c for c in mission.components if c.name == self.actuator_name), None)
        return getattr(target, "loop_role", None) in ("wheel", "magnetorquer", "body_torque")

    def __init__(self, actuator: str, commands: Sequence, name: str | None = None):
        self.actuator_name = actuator
        self.name = name or f"{actuator}_playback"
        if not isinstance(actuator, str):
            raise InputError("actuator", "must be the name of an actuator in the mission (a str)", f"got {actuator!r}")
        times = []
        for k, item in enumerate(sequence(commands, "commands")):
            try:
                t, value = item
            except (TypeError, ValueError):
                raise InputError(f"commands[{k}]", "must be (t_s, command)", f"got {item!r}") from None
            t = finite_number(t, f"commands[{k}].t_s")
            if t < 0 or (times and t < times[-1][0]):
                raise InputError(f"commands[{k}].t_s", "must be >= 0 and sorted", f"got {t}")
            times.append((t, value))
        self.commands = times

    def prepare(self, mission):
        self.actuator = mission.component(self.actuator_name)
        if not hasattr(self.actuator, "command"):
            raise InputError("actuator", f"{self.actuator_name!r} is not an actuator")
        if isinstance(self.actuator, Magnetorquer):
            Magnetorquer.require_field(mission, f"schedule {self.name!r} (CommandSchedule of {self.actuator_name!r})")
        check = getattr(self.actuator, "check_command", None)  # a user's own actuator may not have one
        for k, (_, value) in enumerate(self.commands if check is not None else ()):  # checked once, before the run
            check(value, f"{self.name}.commands[{k}]")

    def processes(self, env, sc):
        def process(env):
            for t, value in self.commands:
                if t > env.now:
                    yield At(env, t)
                sc.event("command", actuator=self.actuator_name, command=np.asarray(value, dtype=float).tolist())
                self.actuator.command(sc, value)

        return [process(env)]


class Thruster(Component):
    """A thruster fixed in the body.

    Force ``F d`` along the unit ``direction`` at ``position_m`` (from the
    centre of mass, body axes) gives the body torque ``r × F d``. A pair on
    opposite sides, pointing opposite ways, is a pure couple (seed 000's two
    rockets). Commands are on-times in seconds from now; a request shorter
    than ``min_on_time_s`` (the minimum impulse bit) is not fired and is
    logged.

    Parameters
    ----------
    name : str
        Its name: the prefix of its telemetry columns.
    position_m : array_like (3,)
        Where the force acts, from the centre of mass, body axes, m.
    direction : array_like (3,)
        The force's direction, body axes (normalised here).
    max_force_N : float
        The thrust while firing, N.
    min_on_time_s : float, optional
        The shortest firing, s (default 0); a shorter request is not fired.
    """

    def __init__(self, name: str, position_m, direction, max_force_N: float, min_on_time_s: float = 0.0):
        self.name = name
        self.position_m = vector3(position_m, "position_m")
        self.direction = unit_vector(direction, "direction")
        self.max_force_N = positive_scalar(max_force_N, "max_force_N")
        self.min_on_time_s = non_negative_scalar(min_on_time_s, "min_on_time_s")
        self.on = False
        self._generation = 0

    def start(self, sc):
        self.on = False
        self._generation += 1  # forget timers of an earlier run

    @property
    def force_body_N(self) -> np.ndarray:
        return self.max_force_N * self.direction

    @property
    def torque_body_Nm(self) -> np.ndarray:
        return np.cross(self.position_m, self.force_body_N)

    def check_command(self, on_time_s, field: str) -> float:
        """An on-time (s): a finite number >= 0."""
        on_time = float(finite_array(on_time_s, field, ()))
        if on_time < 0:
            raise InputError(field, "on-time must be finite and >= 0 (s)", f"got {on_time_s!r}")
        return on_time

    def command(self, sc, on_time_s) -> None:
        if (type(on_time_s) is float or type(on_time_s) is np.float64) and 0.0 <= on_time_s < math.inf:
            on_time = float(on_time_s)  # a controller's usual output: nothing more to check
        else:
            on_time = self.check_command(on_time_s, f"{self.name}.command")
        self._generation += 1
        if on_time == 0.0:
            self._switch(sc, False)
            return
        if on_time < self.min_on_time_s:
            sc.event("below_min_on_time", actuator=self.name, on_time_s=on_time, min_on_time_s=self.min_on_time_s)
            self._switch(sc, False)
            return
        self._switch(sc, True)
        generation = self._generation

        def off(env):
            yield env.timeout(on_time)
            if self._generation == generation:
                self._switch(sc, False)

        sc.env.process(off(sc.env))

    def _switch(self, sc, on: bool) -> None:
        if on != self.on:
            sc.event("thruster_on" if on else "thruster_off", actuator=self.name)
        self.on = on
        sc.set_external_torque(self.name, self.torque_body_Nm if on else (0.0, 0.0, 0.0))

    def columns(self):
        return [f"{self.name}_on"]

    def values(self, sc):
        return [1.0 if self.on else 0.0]


class BodyTorque(Component):
    """An ideal body-torque actuator: the torque commanded acts on the body as given (Basilisk's ``extForceTorque``).

    Commanded by a controller (:class:`~attsim.QuaternionPD`,
    :class:`~attsim.MRPFeedback`, a :class:`~attsim.NumbaController` with
    ``body_torque=``) or a :class:`CommandSchedule` with a torque (N m, body
    axes), held until the next command; no limit, no dynamics. For a torque
    known in advance, :class:`TorqueSchedule` says it without a controller.

    Parameters
    ----------
    name : str
        Telemetry columns ``<name>_tau_x/y/z``, the torque applied (N m),
        and ``<name>_tau_decided_x/y/z``, the torque its controller last decided
        (named apart from a wheel's ``torque_cmd``, the command as it reaches
        the wheel): a controller with ``command_delay_s`` decides at ``t`` the torque
        applied from ``t + delay`` (so a row's ``_tau_decided_`` is the command
        decided at its time, Basilisk's ``cmdTorqueInMsg``); without a delay
        the two are the same. Both are zero before the first command (the
        actuator starts holding zero) and both go to zero when a mode stops
        the controller (a ModeManager refuses a delayed law: InputError). Driven
        by a schedule, the decided torque is the scheduled one (no delay).
    """

    loop_part, loop_role = PART, "body_torque"  # the compiled mission (attsim.actuators.loop)

    def loop_ready(self, mission) -> bool:
        return True

    def __init__(self, name: str = "body_torque"):
        if not isinstance(name, str) or not name:
            raise InputError("name", "must be a non-empty str", f"got {name!r}")
        self.name = name
        self.torque_Nm = (0.0, 0.0, 0.0)
        self.commanded_Nm = (0.0, 0.0, 0.0)

    def start(self, sc):
        self.torque_Nm = (0.0, 0.0, 0.0)
        self.commanded_Nm = (0.0, 0.0, 0.0)

    def check_command(self, torque_Nm, field: str) -> np.ndarray:
        """A torque (N m, body axes): a finite 3-vector."""
        return finite_array(torque_Nm, field, (3,))

    def _checked(self, torque_Nm) -> tuple:
        tau = _finite_triple(torque_Nm)
        if tau is None:  # not three finite floats: the generic check says what is wrong
            tau = tuple(float(v) for v in self.check_command(torque_Nm, f"{self.name}.command"))
        return tau

    def command(self, sc, torque_Nm) -> None:
        """Commanded and applied now (a command without delay)."""
        tau = self._checked(torque_Nm)
        self.commanded_Nm = tau
        self.apply(sc, tau)

    def command_later(self, torque_Nm) -> tuple:
        """Commanded now, applied later by :meth:`apply` (a controller's ``command_delay_s``); the torque checked."""
        self.commanded_Nm = self._checked(torque_Nm)
        return self.commanded_Nm

    def apply(self, sc, torque_Nm) -> None:
        """Applied now, as commanded earlier (:meth:`command_later`)."""
        self.torque_Nm = self._checked(torque_Nm)
        sc.set_external_torque(self.name, self.torque_Nm)

    def columns(self):
        return [f"{self.name}_{suffix}" for suffix in BODY_TORQUE_SUFFIXES]

    def values(self, sc):
        return list(self.torque_Nm) + list(self.commanded_Nm)


class BarDipoles(tuple):
    """Each bar's own dipole (A m², along its axis, in the order of the bars), commanded to a :class:`Magnetorquer`
    bar by bar instead of a body dipole: what a :class:`~attsim.NumbaController` given
    ``magnetorquer_command="bars"`` hands to it (Basilisk's ``MtbEffector`` driven per bar)."""

    __slots__ = ()


class Magnetorquer(Component):
    """Magnetorquer bars: three along the body axes, or an array of any number on any axes.

    A controller commands a body dipole ``m`` (A m², body axes), or (a
    :class:`~attsim.NumbaController` with ``magnetorquer_command="bars"``)
    each bar's dipole, limited as below without steering. Each bar
    ``k`` (unit axis ``g_k``) takes ``S[k] · m`` with ``S = G⁺`` the
    minimum-norm steering of the bars' axes ``G`` (the columns ``g_k``:
    Basilisk's ``GtMatrix_B``; ``S`` is its ``dipoleMapping`` steering matrix),
    limited to its ``dipole_max_Am2``; the body feels ``Σ_k m_k g_k`` (Basilisk's
    ``MtbEffector``). Bars that span three axes apply ``m`` itself until a
    limit cuts in; fewer, or bars in a plane, apply the part of ``m`` they span
    (the least-squares nearest dipole). Three bars on the body axes (the
    default) are the identity: ``m`` limited per axis.

    Parameters
    ----------
    dipole_max_Am2 : float or array_like (n,)
        Largest dipole of each bar, A m²: one for all, or one per bar (per axis for the default three).
    saturation : {"clip", "scale"}
        ``"clip"`` limits each bar on its own (the direction may change, as
        Basilisk's ``dipoleMapping``); ``"scale"`` shrinks every bar by the
        same factor until each fits (the direction is kept).
    name : str
        Telemetry columns ``<name>_m_x/y/z`` (the body dipole actually applied) and, for bars given with
        ``bar_axes``, ``<name>_bar1`` ... ``<name>_bar<n>`` (each bar's applied dipole along its axis).
    bar_axes : array_like (n, 3), optional
        The bars' axes, one row each (body axes; each scaled to unit length, so only its direction counts):
        the columns of Basilisk's ``GtMatrix_B``. Default: three bars along the body axes.
    steering_matrix : array_like (n, 3), optional
        ``S`` given instead of ``G⁺``: bar ``k`` takes ``S[k] · m`` (Basilisk's ``dipoleMapping``
        ``steeringMatrix``, row by row). The body still feels ``Σ_k m_k g_k``, so a matrix with ``G S ≠ I``
        applies another dipole than the one asked, as in Basilisk. Default: the minimum-norm ``G⁺``.

    The torque ``m × B`` is evaluated inside the integration.
    """

    loop_part, loop_role = PART, "magnetorquer"  # the compiled mission (attsim.actuators.loop)

    def loop_ready(self, mission) -> bool:
        return True

    def __init__(self, dipole_max_Am2=1.0, saturation: str = "clip", name: str = "mtq", bar_axes=None,
                 steering_matrix=None):
        self.name = name
        self.bar_axes = None if bar_axes is None else directions(bar_axes, "bar_axes")
        axes = np.eye(3) if self.bar_axes is None else self.bar_axes
        self.dipole_max_Am2 = per_item(dipole_max_Am2, "dipole_max_Am2", axes.shape[0],
                                       "axis" if self.bar_axes is None else "bar")
        self.saturation = one_of(saturation, "saturation", ("clip", "scale"))
        self.steering_matrix = None if steering_matrix is None else \
            finite_array(steering_matrix, "steering_matrix", (axes.shape[0], 3))
        # the bars' dipoles for a body dipole: given, else G+ (the identity for the three body axes, exactly)
        if self.steering_matrix is not None:
            self._steering = np.ascontiguousarray(self.steering_matrix, dtype=float)
        else:
            self._steering = np.eye(3) if self.bar_axes is None else np.linalg.pinv(axes.T)
        self._axes = axes
        self.dipole_Am2 = np.zeros(3)
        self.bar_dipoles_Am2 = np.zeros(axes.shape[0])
        self._saturation = _Saturation(name, "dipole")

    @classmethod
    def from_catalogue(cls, model: str, saturation: str = "clip", name: str = "mtq", bar_axes=None,
                       steering_matrix=None) -> Magnetorquer:
        """The catalogue's rods ``model`` (:mod:`attsim.actuators.catalogue`): three along the body axes, or one on
        each of ``bar_axes``."""
        spec = magnetorquer_spec(model)
        rods = cls(spec.dipole_max_Am2.value, saturation=saturation, name=name, bar_axes=bar_axes,
                   steering_matrix=steering_matrix)
        rods.catalogue_model = spec.model
        return rods

    @staticmethod
    def require_field(mission, commander: str) -> None:
        """Refuse magnetorquers commanded (by ``commander``) in a mission without a magnetic field: ``m x B`` is zero
        there, whatever the dipole, so the run would end with the rate exactly as it was."""
        if not mission.has_field:
            raise InputError("field", f"{commander} needs a magnetic field: give the mission field= or an "
                             "environment= with a field model (without one, its magnetorquers make no torque and the "
                             "rate stays exactly as it was)")

    def start(self, sc):
        self.dipole_Am2 = np.zeros(3)
        self.bar_dipoles_Am2 = np.zeros(self._axes.shape[0])
        self._saturation = _Saturation(self.name, "dipole")
        self._scale = self.saturation == "scale"

    def saturate(self, dipole_Am2) -> tuple[np.ndarray, bool]:
        """The body dipole applied for a request, and whether a limit cut it (``kernels.magnetorquer_dipole``)."""
        m = self.check_command(dipole_Am2, f"{self.name}.saturate")
        applied, saturated = magnetorquer_dipole((m[0], m[1], m[2]), self._steering, self._axes, self.dipole_max_Am2,
                                                 self.saturation == "scale", np.zeros(self._axes.shape[0]))
        return np.array(applied), saturated

    def check_command(self, dipole_Am2, field: str) -> np.ndarray:
        """A dipole (A m², body axes): a finite 3-vector."""
        if type(dipole_Am2) is BarDipoles:  # a schedule plays body dipoles (the compiled playback holds three)
            raise InputError(field, "must be a body dipole (A m², 3); bar-by-bar dipoles come from a "
                             "NumbaController(magnetorquer_command='bars')", f"got {len(dipole_Am2)} bar dipoles")
        return finite_array(dipole_Am2, field, (3,))

    @property
    def bar_count(self) -> int:
        """How many bars: three on the body axes, or one per row of ``bar_axes``."""
        return self._axes.shape[0]

    def command_bars(self, sc, bars_Am2) -> None:
        """Each bar's dipole commanded (A m², along its axis; :class:`BarDipoles`), each limited as the steered ones
        (``kernels.magnetorquer_bars``); a saturation event's ``requested`` is the body dipole of the requests."""
        self.bar_dipoles_Am2[:] = finite_array(bars_Am2, f"{self.name}.command", (self.bar_count,))
        applied, m, saturated = magnetorquer_bars(self._axes, self.dipole_max_Am2, self._scale, self.bar_dipoles_Am2)
        if saturated != self._saturation.active:
            self._saturation.update(sc, saturated, requested=list(m))
        self.dipole_Am2 = np.array(applied)
        sc.set_dipole(self.name, applied)

    def command(self, sc, dipole_Am2) -> None:
        if type(dipole_Am2) is BarDipoles:
            self.command_bars(sc, dipole_Am2)
            return
        m = _finite_triple(dipole_Am2)
        if m is None:  # not three finite floats in a tuple, list or float array: the generic check says what is wrong
            m = tuple(self.check_command(dipole_Am2, f"{self.name}.command").tolist())
        applied, saturated = magnetorquer_dipole(m, self._steering, self._axes, self.dipole_max_Am2, self._scale,
                                                 self.bar_dipoles_Am2)
        if saturated != self._saturation.active:
            self._saturation.update(sc, saturated, requested=list(m))
        self.dipole_Am2 = np.array(applied)
        sc.set_dipole(self.name, applied)

    def columns(self):
        bars = [] if self.bar_axes is None else [f"{self.name}_bar{k + 1}" for k in range(self._axes.shape[0])]
        return [f"{self.name}_m_x", f"{self.name}_m_y", f"{self.name}_m_z"] + bars

    def values(self, sc):
        bars = [] if self.bar_axes is None else [float(v) for v in self.bar_dipoles_Am2]
        return [float(v) for v in self.dipole_Am2] + bars


class ReactionWheel(Component):
    """A reaction wheel; with wheels the plant is a gyrostat.

    The wheel's state is its absolute angular momentum about its spin axis,
    ``h`` (N m s), which the motor torque changes: ``dh/dt = τ``; the body
    feels ``-τ a`` and the gyroscopic ``-ω × h a``. Its speed relative to the
    body is ``Ω = h / I_w - a·ω``. Torque commands are limited to
    ``max_torque_Nm``; at ``max_speed_rad_s`` the motor stops pushing
    further (speed saturation), checked by the plant after every
    integration step (:mod:`attsim.actuators.kernels`). Both are logged as
    events.

    The mission's inertia must then exclude the wheel's axial inertia.

    Friction and imbalance (keywords; all zero by default: none;
    :mod:`attsim.actuators.wheel_dynamics` has the equations and their sources):

    ``coulomb_friction_Nm``, ``viscous_friction_Nm_s_rad``
        Coulomb and viscous friction opposing ``Ω``:
        ``dh/dt = τ + τ_f(Ω)``, and the body feels ``-(τ + τ_f) a``.
    ``static_friction_Nm``, ``stribeck_speed_rad_s``
        A breakaway level (at least the Coulomb one) falling to it over the
        Stribeck speed: ``F_c + (F_s - F_c) exp(-(Ω/Ω_S)²)``.
    ``friction_band_rad_s``
        Below this speed the friction is linear in ``Ω`` (no chatter through
        zero); default: the narrowest band the mission's ``max_step``
        resolves. A band it cannot resolve is refused.
    ``static_imbalance_kg_m``, ``position_m``
        Static imbalance ``U_s``: the force ``U_s Ω²`` turning with the rotor
        in the wheel's plane, acting at ``position_m`` (body axes, from the
        centre of mass; needed): its torque ``r × F`` acts on the body.
    ``dynamic_imbalance_kg_m2``
        Dynamic imbalance ``U_d``: the torque ``U_d Ω²`` turning with the rotor.

    Imbalance needs ``max_step`` well below the spin period: a mission whose
    ``max_step`` exceeds ``π / max_speed_rad_s`` is refused (the jitter would
    alias); the response's amplitude is 0.2% off at 4 steps a revolution,
    5e-5 at 10 (``tools/study_jitter_resolution.py``). Extra
    columns: ``<name>_friction`` with friction, ``<name>_angle`` and the
    jitter force and torque with imbalance (:mod:`attsim.schema`).

    Parameters
    ----------
    name : str
        Its name: the prefix of its telemetry columns (``<name>_speed`` ...).
    axis : array_like (3,)
        The spin axis, body axes (normalised here).
    inertia_kg_m2 : float
        The rotor's axial inertia, kg m^2.
    max_torque_Nm : float
        The motor torque limit, N m.
    max_speed_rad_s : float
        The speed limit relative to the body, rad/s.
    speed0_rad_s : float, optional
        The speed relative to the body at the start, rad/s (default 0).
    coulomb_friction_Nm, viscous_friction_Nm_s_rad : float, optional
        Coulomb (N m) and viscous (N m s/rad) friction (default 0: none; see above).
    static_friction_Nm, stribeck_speed_rad_s : float, optional
        Breakaway friction, N m, and the Stribeck speed, rad/s, over which it falls to the Coulomb level.
    friction_band_rad_s : float, optional
        The speed below which friction is linear in the speed, rad/s (default: the narrowest ``max_step`` resolves).
    static_imbalance_kg_m : float, optional
        Static imbalance ``U_s``, kg m (needs ``position_m``).
    dynamic_imbalance_kg_m2 : float, optional
        Dynamic imbalance ``U_d``, kg m^2.
    position_m : array_like (3,), optional
        The wheel's place, from the centre of mass, body axes, m (for the static imbalance's torque).
    """

    loop_part, loop_role = PART, "wheel"  # the compiled mission (attsim.actuators.loop)

    def loop_ready(self, mission) -> bool:
        return True

    def __init__(self, name: str, axis, inertia_kg_m2: float, max_torque_Nm: float, max_speed_rad_s: float,
                 speed0_rad_s: float = 0.0, *, coulomb_friction_Nm: float = 0.0,
                 viscous_friction_Nm_s_rad: float = 0.0, static_friction_Nm: float = 0.0,
                 stribeck_speed_rad_s: float | None = None, friction_band_rad_s: float | None = None,
                 static_imbalance_kg_m: float = 0.0, dynamic_imbalance_kg_m2: float = 0.0, position_m=None):
        self.name = name
        self.axis = unit_vector(axis, "axis")
        self.inertia_kg_m2 = positive_scalar(inertia_kg_m2, "inertia_kg_m2")
        self.max_torque_Nm = positive_scalar(max_torque_Nm, "max_torque_Nm")
        self.max_speed_rad_s = positive_scalar(max_speed_rad_s, "max_speed_rad_s")
        check_wheel(name, self.inertia_kg_m2, self.max_torque_Nm, self.max_speed_rad_s)  # warns of mN m as N m, rpm
        self.speed0_rad_s = finite_number(speed0_rad_s, "speed0_rad_s")
        if abs(self.speed0_rad_s) > self.max_speed_rad_s:
            raise InputError("speed0_rad_s", "must not exceed max_speed_rad_s",
                             f"{self.speed0_rad_s} > {self.max_speed_rad_s}")
        self.coulomb_friction_Nm = non_negative_scalar(coulomb_friction_Nm, "coulomb_friction_Nm")
        self.viscous_friction_Nm_s_rad = non_negative_scalar(viscous_friction_Nm_s_rad, "viscous_friction_Nm_s_rad")
        self.static_friction_Nm = non_negative_scalar(static_friction_Nm, "static_friction_Nm")
        self.stribeck_speed_rad_s = None if stribeck_speed_rad_s is None else positive_scalar(stribeck_speed_rad_s,
                                                                                              "stribeck_speed_rad_s")
        self.friction_band_rad_s = None if friction_band_rad_s is None else positive_scalar(friction_band_rad_s,
                                                                                            "friction_band_rad_s")
        if self.static_friction_Nm > 0.0:
            if self.static_friction_Nm < self.coulomb_friction_Nm:
                raise InputError("static_friction_Nm", "must be at least coulomb_friction_Nm (the breakaway level "
                                 "falls to the Coulomb one), or 0 for no Stribeck curve",
                                 f"{self.static_friction_Nm} < {self.coulomb_friction_Nm}")
            if self.stribeck_speed_rad_s is None:
                raise InputError("stribeck_speed_rad_s", "is needed with a static_friction_Nm (the speed over which "
                                 "the breakaway level falls to the Coulomb one)")
        elif self.stribeck_speed_rad_s is not None:
            raise InputError("stribeck_speed_rad_s", "needs a static_friction_Nm above 0 (there is no Stribeck curve "
                             "without a breakaway level)")
        if self.friction_band_rad_s is not None and max(self.coulomb_friction_Nm, self.static_friction_Nm) == 0.0:
            raise InputError("friction_band_rad_s", "needs a coulomb_friction_Nm or static_friction_Nm above 0 (the "
                             "band regularises the Coulomb level)")
        self.static_imbalance_kg_m = non_negative_scalar(static_imbalance_kg_m, "static_imbalance_kg_m")
        self.dynamic_imbalance_kg_m2 = non_negative_scalar(dynamic_imbalance_kg_m2, "dynamic_imbalance_kg_m2")
        self.position_m = None if position_m is None else vector3(position_m, "position_m")
        if self.static_imbalance_kg_m > 0.0 and self.position_m is None:
            raise InputError("position_m", "is needed with a static_imbalance_kg_m (the imbalance force acts at the "
                             "wheel's position, body axes from the centre of mass)")
        self.index = None

    @classmethod
    def from_catalogue(cls, model: str, name: str, axis, max_momentum_Nms: float | None = None,
                       speed0_rad_s: float = 0.0, *, friction: bool = False, imbalance: bool = False, position_m=None,
                       max_speed_rad_s: float | None = None) -> ReactionWheel:
        """The catalogue's wheel ``model`` (:mod:`attsim.actuators.catalogue`; ``max_momentum_Nms`` picks the size
        of a model that comes in several), without friction or imbalance unless asked for, as Basilisk's rwFactory.

        ``ReactionWheel.from_catalogue("Honeywell HR16", "rw1", (1, 0, 0), max_momentum_Nms=50)``
        """
        made = wheel_arguments(model, max_momentum_Nms, friction=friction, imbalance=imbalance, position_m=position_m,
                               max_speed_rad_s=max_speed_rad_s)
        wheel = cls(name, axis, speed0_rad_s=speed0_rad_s, **made.arguments)
        wheel.catalogue_model = made.label
        return wheel

    @property
    def has_friction(self) -> bool:
        return self.coulomb_friction_Nm > 0.0 or self.static_friction_Nm > 0.0 or self.viscous_friction_Nm_s_rad > 0.0

    @property
    def has_imbalance(self) -> bool:
        return self.static_imbalance_kg_m > 0.0 or self.dynamic_imbalance_kg_m2 > 0.0

    def _band(self, mission) -> float:
        from .wheel_dynamics import effective_inertia, friction_band

        if not self.has_friction:
            return 0.0
        inertia = effective_inertia(self.axis, self.inertia_kg_m2, mission.inertia_kg_m2)
        return friction_band(self.name, self.coulomb_friction_Nm, self.static_friction_Nm,
                             self.stribeck_speed_rad_s or 1.0, self.viscous_friction_Nm_s_rad,
                             self.friction_band_rad_s, inertia, mission.max_step_s, self.max_speed_rad_s)

    def prepare(self, mission) -> None:
        from .wheel_dynamics import check_jitter

        self._band(mission)  # refuses a max_step that cannot resolve the friction
        if self.has_imbalance:
            check_jitter(self.name, self.max_speed_rad_s, mission.max_step_s)

    def start(self, sc) -> None:
        from .wheel_dynamics import NO_MODEL, WheelModel, rotor_basis

        w0 = sc.mission.omega0_rad_s
        h0 = self.inertia_kg_m2 * (self.speed0_rad_s + float(self.axis @ w0))
        model = NO_MODEL
        if self.has_friction or self.has_imbalance:
            x0, y0 = rotor_basis(self.axis)
            position = (0.0, 0.0, 0.0) if self.position_m is None else tuple(float(v) for v in self.position_m)
            model = WheelModel(self.coulomb_friction_Nm, self.static_friction_Nm, self.stribeck_speed_rad_s or 1.0,
                               self.viscous_friction_Nm_s_rad, self._band(sc.mission), self.static_imbalance_kg_m,
                               self.dynamic_imbalance_kg_m2, position, tuple(x0), tuple(y0))
        self.index = sc.register_wheel(self.name, self.axis, self.inertia_kg_m2, self.max_torque_Nm,
                                       self.max_speed_rad_s, h0, model)
        self._sc = sc

    @property
    def torque_Nm(self) -> float:
        """The motor torque held now (after the torque and speed limits)."""
        return 0.0 if self.index is None else float(self._sc.wheels.torque_Nm[self.index])

    def momentum_Nms(self, sc) -> float:
        sc.advance_to(sc.now)
        return float(sc.wheels.h_Nms[self.index])

    def speed_rad_s(self, sc) -> float:
        return float(sc.wheel_speed_rad_s(self.index))

    def check_command(self, torque_Nm, field: str) -> float:
        """A motor torque (N m): a finite number."""
        if type(torque_Nm) is float or type(torque_Nm) is np.float64:  # a controller's usual output: no array made
            if math.isfinite(torque_Nm):
                return float(torque_Nm)
        return float(finite_array(torque_Nm, field, ()))

    def command(self, sc, torque_Nm) -> None:
        if (type(torque_Nm) is float or type(torque_Nm) is np.float64) and math.isfinite(torque_Nm):
            sc.command_wheel(self.index, torque_Nm)  # a controller's usual output: nothing more to check
        else:
            sc.command_wheel(self.index, self.check_command(torque_Nm, f"{self.name}.command"))

    def columns(self):
        suffixes = WHEEL_SUFFIXES + (WHEEL_FRICTION_SUFFIXES if self.has_friction else ()) \
            + (WHEEL_JITTER_SUFFIXES if self.has_imbalance else ())
        return [f"{self.name}_{suffix}" for suffix in suffixes]

    def values(self, sc):
        return sc.wheel_values(self.index)
