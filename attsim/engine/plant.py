"""The running spacecraft (layer 6): plant state, held commands, the compiled plant torque.

A mission's continuous part. Commands from actuators are held (zero-order
hold) until they change; whenever a component reads the state or changes a
command, the plant is first integrated from where it was to ``env.now``
with the commands held until then, in sub-steps of at most ``max_step``,
the last one shortened to land on the event time. Torques that depend on
the state (``m × B``, the wheels' gyroscopic coupling, the disturbances)
are evaluated at every integrator stage by :func:`plant_torque`, whose
inputs travel as one :class:`PlantInputs`.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .._core.jit import LOOP_INLINED, njit
from ..actuators.kernels import (SATURATION_NONE, SATURATION_START, W_INTEGRATED, WheelBank, empty_wheel_bank,
                              pushes_past_limit, wheel_command, wheel_commands, wheel_speed, wheels_total)
from .._core.fastcall import entry_point
from ..dynamics import matrix_to_tuple, normalized4, qconj, qrotate
from ..environment.table import B_I, EMPTY, P_SRP, RHO, SUN, R, V, EnvironmentTable, lerp1, lerp3, table_cell
from ..environment.torques import Disturbances, DisturbanceSwitches, disturbance_torques
from ..errors import AttsimError, GimbalLockError
from .checks import SOUND, _check_state, state_fault
from ..actuators.wheel_dynamics import (NO_MODEL, begin_wheel_step, end_wheel_step, inputs_alone, inputs_and_work,
                             plant_torque_wheels, set_integrated, work_row, write_wheel_row)

__all__ = ["PlantInputs", "plant_torque", "advance_template", "plant_advance_loop", "plant_advance_held",
           "Spacecraft", "NO_FACES"]

NO_FACES = np.empty((0, 10))
_NO_SWITCHES = DisturbanceSwitches(0.0, 0.0, 0.0)


class PlantInputs(NamedTuple):
    """What the plant integrates under between two events (SI, body axes unless named).

    ``J`` is the inertia as a row-major 9-tuple; the environment table is
    ECI (:mod:`attsim.environment.table`); ``faces`` has the columns of
    :data:`attsim.environment.torques.FACE_COLUMNS`.
    """

    t0_s: float
    tau_ext_Nm: tuple
    dipole_Am2: tuple
    tau_wheels_Nm: tuple
    h_wheels0_Nms: tuple
    env_t: np.ndarray
    env_v: np.ndarray
    faces: np.ndarray
    switches: DisturbanceSwitches
    J: tuple
    residual_dipole_Am2: tuple


@njit(cache=True, nogil=True, error_model="numpy", **LOOP_INLINED)
def plant_torque(t, q, w, inputs):
    """Torque on the rigid part of a gyrostat spacecraft under held commands.

    With the commands held since ``t0`` (zero-order hold)::

        h_w(t) = h_w0 + τ_w (t - t0)          wheel momentum, body axes
        τ = τ_ext + m × B_B - τ_w - ω × h_w(t) + τ_gg + τ_aero + τ_srp + m_res × B_B

    so that Euler's equation for the body, ``J dω/dt = τ - ω × J ω``, is the
    gyrostat's (Markley & Crassidis 2014, sec. 3.3.5). The environment is
    interpolated at the stage time and rotated into the body with the stage
    attitude, so torques that depend on the attitude follow it inside the
    integration instead of being frozen at the event.
    """
    p = inputs
    dt = t - p.t0_s
    h0, tau_w, m, ext = p.h_wheels0_Nms, p.tau_wheels_Nm, p.dipole_Am2, p.tau_ext_Nm
    hx = h0[0] + tau_w[0] * dt
    hy = h0[1] + tau_w[1] * dt
    hz = h0[2] + tau_w[2] * dt
    k, f = table_cell(p.env_t, t)
    if k < 0:  # no table (neither a field nor an environment): no m × B and no disturbance to evaluate
        return (ext[0] - tau_w[0] - (w[1] * hz - w[2] * hy), ext[1] - tau_w[1] - (w[2] * hx - w[0] * hz),
                ext[2] - tau_w[2] - (w[0] * hy - w[1] * hx))
    b = qrotate(normalized4(qconj(q)), lerp3(p.env_v, k, f, B_I))
    tx = ext[0] + m[1] * b[2] - m[2] * b[1] - tau_w[0] - (w[1] * hz - w[2] * hy)
    ty = ext[1] + m[2] * b[0] - m[0] * b[2] - tau_w[1] - (w[2] * hx - w[0] * hz)
    tz = ext[2] + m[0] * b[1] - m[1] * b[0] - tau_w[2] - (w[0] * hy - w[1] * hx)
    d = disturbance_torques(t, q, p.env_t, p.env_v, p.faces, p.switches, p.J, p.residual_dipole_Am2)
    tx += d.gg[0] + d.aero[0] + d.srp[0] + d.res[0]
    ty += d.gg[1] + d.aero[1] + d.srp[1] + d.res[1]
    tz += d.gg[2] + d.aero[2] + d.srp[2] + d.res[2]
    return (tx, ty, tz)


def advance_template(integrator, wheels: WheelBank, template=None, **extra):
    """``template`` (default :func:`plant_advance_loop`) compiled for ``integrator`` and a run with ``wheels``.

    The stage torque is :func:`~attsim.actuators.wheel_dynamics.plant_torque_wheels` when the wheels' states
    are integrated (friction, imbalance), :func:`plant_torque` otherwise;
    ``stage_args`` makes the matching stage arguments. Each variant is
    compiled once per method, so a plain run's kernels are exactly those
    without wheel dynamics.
    """
    integrated = wheels.work[0, W_INTEGRATED] != 0.0
    torque = plant_torque_wheels if integrated else plant_torque
    stage_args = inputs_and_work if integrated else inputs_alone
    loop = integrator.compiled_template(plant_advance_loop, torque, stage_args=stage_args)
    if template is None:
        return loop
    return integrator.compiled_template(template, torque, advance=loop, stage_args=stage_args, **extra)


def plant_advance_loop(state, t0, t1, max_step, inputs, wheels, J, Jinv, params, stops):
    """Advance the plant from ``t0`` to ``t1`` under held commands, enforcing the wheels' speed limits.

    Steps of at most ``max_step`` (step ``i`` starts at ``t0 + i max_step``;
    the last is shortened to land on ``t1``). After every step each wheel
    whose motor pushes it beyond its speed limit is stopped there: its
    torque becomes zero and the held inputs restart from that time, so the
    limit holds to within one step's change of the wheel speed. Each stop
    is written to ``stops`` as a row ``(t, wheel index, speed)``. Wheels
    with friction or imbalance are integrated with the body, step by step
    (:mod:`attsim.actuators.wheel_dynamics`).

    A template: ``step``, ``must_stop`` and ``output_state`` are the
    method's kernels, bound by
    :meth:`~attsim.integrators.base.FixedStepIntegrator.compiled_template`.
    On return ``wheels.h_Nms`` holds the momenta at the time reached.

    Returns ``(state, stopped, t_reached, stop count, fault)``; ``stopped``
    is true when the method's ``must_stop`` ended the advance early;
    ``fault`` is :func:`state_fault` of the state reached.
    """
    n_stops = 0
    span = t1 - t0
    if span <= 0.0:
        return state, False, t1, n_stops, SOUND
    ratio = span / max_step
    n = int(ratio)
    if ratio - n > 1e-9 * max(1.0, ratio):
        n += 1
    n = max(n, 1)
    n_wheels = wheels.axis.shape[0]
    integrated = wheels.work[0, W_INTEGRATED] != 0.0
    targs = stage_args(inputs, wheels.work)  # noqa: F821 - bound per variant (advance_template)
    t_ref = inputs.t0_s  # wheels.h_Nms holds the momenta at t_ref
    for i in range(n):
        t_i = t0 + i * max_step
        h = max_step if i < n - 1 else span - (n - 1) * max_step
        if integrated:
            begin_wheel_step(wheels, h)
        state = step(targs, t_i, h, state, J, Jinv, params)  # noqa: F821 - bound per method
        t_e = t_i + h
        if integrated:  # integrated with the body's state: the wheels' momenta now are those at t_e
            end_wheel_step(wheels, h)
            t_ref = t_e
        if must_stop(state, params):  # noqa: F821
            for j in range(n_wheels):
                wheels.h_Nms[j] += wheels.torque_Nm[j] * (t_e - t_ref)
            return state, True, t_e, n_stops, SOUND
        stop_any = False
        if n_wheels > 0:
            _, w = output_state(state, J, params)  # noqa: F821
            for j in range(n_wheels):
                tau = wheels.torque_Nm[j]
                if tau != 0.0:
                    speed = wheel_speed(wheels, j, wheels.h_Nms[j] + tau * (t_e - t_ref), w)
                    if pushes_past_limit(wheels, j, speed, tau) and n_stops < stops.shape[0]:
                        stops[n_stops, 0], stops[n_stops, 1], stops[n_stops, 2] = t_e, j, speed
                        n_stops += 1
                        stop_any = True
        if stop_any:
            for j in range(n_wheels):
                wheels.h_Nms[j] += wheels.torque_Nm[j] * (t_e - t_ref)
            for k in range(n_stops):
                if stops[k, 0] == t_e:
                    j = int(stops[k, 1])
                    wheels.torque_Nm[j] = 0.0
                    wheels.speed_saturated[j] = 1.0
            t_ref = t_e
            tau_w, h_w = wheels_total(wheels)
            inputs = PlantInputs(t_e, inputs.tau_ext_Nm, inputs.dipole_Am2, tau_w, h_w, inputs.env_t, inputs.env_v,
                                 inputs.faces, inputs.switches, inputs.J, inputs.residual_dipole_Am2)
            targs = stage_args(inputs, wheels.work)  # noqa: F821
    for j in range(n_wheels):
        wheels.h_Nms[j] += wheels.torque_Nm[j] * (t1 - t_ref)
    q, w = output_state(state, J, params)  # noqa: F821
    return state, False, t1, n_stops, state_fault(q, w, max_step)


def plant_advance_held(state, t0, t1, max_step, tau_ext, dipole, env_t, env_v, faces, switches, residual, wheels, J,
                       Jinv, params, stops):
    """:func:`plant_advance_loop` under the commands held since ``t0``, and the ``(q, ω)`` it reaches.

    The Python path's one compiled call per advance: the wheels' held torque
    and momentum (:func:`~attsim.actuators.kernels.wheels_total`), the
    :class:`PlantInputs` and the output state are made here rather than by
    separate calls from Python. ``advance`` is :func:`plant_advance_loop`
    bound to the same method. Returns ``(state, q, w, stopped, t_reached,
    stop count, fault)``.
    """
    tau_w, h_w = wheels_total(wheels)
    inputs = PlantInputs(t0, tau_ext, dipole, tau_w, h_w, env_t, env_v, faces, switches, J, residual)
    state, stopped, t_reached, n_stops, fault = advance(state, t0, t1, max_step, inputs, wheels, J, Jinv,  # noqa: F821
                                                        params, stops)
    q, w = output_state(state, J, params)  # noqa: F821 - bound per method
    return state, q, w, stopped, t_reached, n_stops, fault


def _vector_sum(vectors) -> tuple:
    tx = ty = tz = 0.0
    for x, y, z in vectors:
        tx, ty, tz = tx + x, ty + y, tz + z
    return (tx, ty, tz)


class Spacecraft:
    """The running spacecraft: plant state, held commands, environment, event log.

    Components receive it as ``sc``. Reading the state (:meth:`state`) or
    changing a command advances the plant to ``env.now`` first.
    """

    def __init__(self, mission, env, recorder, table: EnvironmentTable = EMPTY):
        from ..integrators import REGISTRY

        self.env = env
        self.mission = mission
        self.recorder = recorder
        integrator = REGISTRY[mission.method]
        self._integrator = integrator  # its advance is compiled once the wheels are known (advance_template)
        self._output = integrator.output_state
        J = mission.inertia_kg_m2
        self._J = matrix_to_tuple(J)
        self._Jinv = matrix_to_tuple(np.linalg.inv(J))
        self._params = integrator.engine_params()
        self._state = integrator.initial_state(tuple(mission.q0), tuple(mission.omega0_rad_s), self._J, self._params)
        self.t_plant_s = 0.0
        self.table = table
        self.env_t, self.env_v = table
        environment = mission.environment
        self.environment = environment
        self._faces = environment.faces_array() if environment is not None else NO_FACES
        self._switches = DisturbanceSwitches(*environment.flags) if environment is not None else _NO_SWITCHES
        residual = environment.residual_dipole_Am2 if environment is not None else (0.0, 0.0, 0.0)
        self._residual = tuple(float(x) for x in residual)
        self._external = {}  # source -> body torque (N m)
        self._dipoles = {}  # magnetorquer set -> dipole (A m^2)
        self._tau_ext = (0.0, 0.0, 0.0)
        self._commanded_dipole = (0.0, 0.0, 0.0)
        self.wheels: WheelBank = empty_wheel_bank(0)
        self.wheel_names: list[str] = []
        self._stops = np.empty((1, 3))
        # compiled entry points, made once per wheel bank (their argument types are fixed then)
        self._advance_entry = self._advance_bank = self._command_entry = self._command_bank = None
        self._total_entry = self._total_bank = self._speed_entry = self._speed_bank = None
        self._row_entry = self._row_bank = None
        self._commands_entries, self._commands_bank = {}, None
        self._q_w = self._output(self._state, self._J, self._params)
        self._rngs = np.random.SeedSequence(mission.seed)

    # --- time and state ---------------------------------------------------

    @property
    def now(self) -> float:
        return self.env.now

    def inputs(self) -> PlantInputs:
        """The held commands and environment the plant integrates under from ``t_plant_s``."""
        if self._total_entry is None or self._total_bank is not self.wheels:
            self._total_entry, self._total_bank = entry_point(wheels_total, self.wheels), self.wheels
        tau_w, h_w = self._total_entry(self.wheels)
        return PlantInputs(self.t_plant_s, self._tau_ext, self._commanded_dipole, tau_w, h_w,
                           self.env_t, self.env_v, self._faces, self._switches, self._J, self._residual)

    def advance_to(self, t_s: float) -> None:
        """Integrate the plant to ``t_s`` with the commands held since the last change.

        Raises :class:`~attsim.errors.GimbalLockError` where the method's
        parameterisation fails and :class:`~attsim.errors.DivergenceError`
        where the state stops being finite or the attitude leaves unit norm.
        """
        if t_s <= self.t_plant_s:
            return
        args = (self._state, self.t_plant_s, float(t_s), self.mission.max_step_s, self._tau_ext, self._commanded_dipole,
                self.env_t, self.env_v, self._faces, self._switches, self._residual, self.wheels, self._J, self._Jinv,
                self._params, self._stops)
        if self._advance_entry is None or self._advance_bank is not self.wheels:  # the argument types are now fixed
            advance = advance_template(self._integrator, self.wheels, plant_advance_held)
            self._advance_entry, self._advance_bank = entry_point(advance, *args), self.wheels
        state, q, w, stopped, t_reached, n_stops, fault = self._advance_entry(*args)
        t_from = self.t_plant_s
        self._state, self.t_plant_s, self._q_w = state, t_reached, (q, w)
        for k in range(n_stops):
            t_stop, j, speed = self._stops[k]
            self._log(float(t_stop), "saturation", actuator=self.wheel_names[int(j)], what="speed",
                      speed_rad_s=float(speed))
        if stopped:
            from ..rotations import quat_to_euler321

            raise GimbalLockError(t_reached, math.degrees(float(quat_to_euler321(np.array(q))[1])),
                                  math.degrees(self._params[0]))
        if fault != SOUND:
            _check_state(q, w, t_from, t_s, self.mission.max_step_s)

    def state(self) -> tuple[tuple, tuple]:
        """``(q_IB, omega_rad_s)`` as tuples at ``env.now``."""
        now = self.env._now
        if now > self.t_plant_s:
            self.advance_to(now)
        return self._q_w

    @property
    def q(self) -> np.ndarray:
        return np.array(self.state()[0])

    @property
    def omega_rad_s(self) -> np.ndarray:
        return np.array(self.state()[1])

    @property
    def inertia_inv(self) -> tuple:
        """``J⁻¹`` of the rigid part as a row-major 9-tuple."""
        return self._Jinv

    @property
    def h_wheels_Nms(self) -> tuple:
        """Total wheel momentum (body axes) at ``env.now``."""
        self.advance_to(self.env.now)
        return wheels_total(self.wheels)[1]

    def field_inertial_T(self, t_s: float | None = None) -> tuple:
        """Inertial magnetic field (T) at ``t_s`` (default now), from the run's table."""
        from ..environment.table import interpolate_vector

        return interpolate_vector(self.env_t, self.env_v, self.env.now if t_s is None else t_s)

    def environment_now(self) -> dict:
        """The environment at ``env.now`` (ECI, SI): B_I, r, v, rho, sun, srp_pressure."""
        k, f = table_cell(self.env_t, self.env.now)
        return {
            "B_I": np.array(lerp3(self.env_v, k, f, B_I)), "r": np.array(lerp3(self.env_v, k, f, R)),
            "v": np.array(lerp3(self.env_v, k, f, V)), "rho": lerp1(self.env_v, k, f, RHO),
            "sun": np.array(lerp3(self.env_v, k, f, SUN)), "srp_pressure": lerp1(self.env_v, k, f, P_SRP),
        }

    def orbit_frame(self) -> tuple[np.ndarray, np.ndarray]:
        """``(q_IO, ω_O_I)``: the orbit (LVLH) frame now and its inertial angular velocity (ECI)."""
        from ..environment.frames import lvlh_quaternion

        if self.environment is None:
            raise AttsimError("the orbit frame needs a mission environment with an orbit")
        e = self.environment_now()
        return lvlh_quaternion(e["r"], e["v"]), np.cross(e["r"], e["v"]) / float(e["r"] @ e["r"])

    def disturbance_torques(self) -> Disturbances:
        """Each disturbance torque now (body axes, N m): the plant's own function, for telemetry."""
        q, _ = self.state()
        return disturbance_torques(self.env.now, q, self.env_t, self.env_v, self._faces, self._switches, self._J,
                                   self._residual)

    def field_body_T(self) -> np.ndarray:
        """Magnetic field in body axes (T) now: ``R_IBᵀ B_I``."""
        q, _ = self.state()
        return np.array(qrotate(qconj(q), self.field_inertial_T()))

    # --- commands (zero-order hold) ----------------------------------------

    def set_external_torque(self, source: str, torque_body_Nm) -> None:
        """Hold a body-fixed external torque from ``source`` (sources add)."""
        self.advance_to(self.env.now)
        self._external[source] = (float(torque_body_Nm[0]), float(torque_body_Nm[1]), float(torque_body_Nm[2]))
        self._tau_ext = _vector_sum(self._external.values())

    def set_dipole(self, source: str, dipole_body_Am2) -> None:
        """Hold the dipole of one set of magnetorquers (body axes, A m^2); sets add, the residual dipole acts too."""
        self.advance_to(self.env.now)
        self._dipoles[source] = (float(dipole_body_Am2[0]), float(dipole_body_Am2[1]), float(dipole_body_Am2[2]))
        self._commanded_dipole = _vector_sum(self._dipoles.values())

    def register_wheel(self, name: str, axis, inertia_kg_m2: float, max_torque_Nm: float, max_speed_rad_s: float,
                       h0_Nms: float, model=NO_MODEL) -> int:
        """Add a reaction wheel to the plant before the run starts; returns its row in :attr:`wheels`.

        ``model`` is its friction and imbalance (:class:`~attsim.actuators.wheel_dynamics.WheelModel`).
        """
        if self.t_plant_s != 0.0:
            raise AttsimError("reaction wheels can only be added before the run starts")
        old, n = self.wheels, len(self.wheel_names)
        bank = empty_wheel_bank(n + 1)
        for field in WheelBank._fields:  # the rows so far (and the work array's record), then the new one
            getattr(bank, field)[: len(getattr(old, field))] = getattr(old, field)
        bank.axis[n] = axis
        bank.inertia_kg_m2[n], bank.max_torque_Nm[n] = inertia_kg_m2, max_torque_Nm
        bank.max_speed_rad_s[n] = max_speed_rad_s
        bank.h_Nms[n] = h0_Nms
        bank.work[n + 1] = work_row(axis, inertia_kg_m2, model)
        set_integrated(bank.work)
        self.wheels = bank
        self.wheel_names.append(name)
        self._stops = np.empty((n + 1, 3))
        return n

    def command_wheel(self, index: int, requested_Nm: float) -> float:
        """Hold a motor torque on wheel ``index`` (clipped, stopped at the speed limit); returns what it applies.

        Logs the start and end of torque and speed saturation.
        """
        if self.env._now > self.t_plant_s:
            self.advance_to(self.env._now)
        requested = float(requested_Nm)
        if self._command_entry is None or self._command_bank is not self.wheels:
            self._command_entry = entry_point(wheel_command, self.wheels, index, requested, self._q_w[1])
            self._command_bank = self.wheels
        applied, torque_change, speed_change, speed = self._command_entry(self.wheels, index, requested, self._q_w[1])
        if torque_change != SATURATION_NONE or speed_change != SATURATION_NONE:
            self._log_wheel_changes(index, requested, torque_change, speed_change, speed)
        return applied

    def command_wheels(self, rows: tuple, requested_Nm: tuple) -> None:
        """:meth:`command_wheel` for wheels ``rows`` with ``requested_Nm`` (finite floats), in that order.

        One compiled call for a control cycle's wheel commands; the events
        are logged as the single commands would log them.
        """
        if self.env._now > self.t_plant_s:
            self.advance_to(self.env._now)
        if self._commands_bank is not self.wheels:  # entry points by number of commands: the tuples' types
            self._commands_entries, self._commands_bank = {}, self.wheels
            self._changes = np.zeros((len(self.wheel_names), 3))
        entry = self._commands_entries.get(len(rows))
        if entry is None:
            entry = entry_point(wheel_commands, self.wheels, rows, requested_Nm, self._q_w[1], self._changes)
            self._commands_entries[len(rows)] = entry
        if entry(self.wheels, rows, requested_Nm, self._q_w[1], self._changes):
            for i, row in enumerate(rows):
                torque_change, speed_change, speed = self._changes[i]
                if torque_change != SATURATION_NONE or speed_change != SATURATION_NONE:
                    self._log_wheel_changes(row, float(requested_Nm[i]), torque_change, speed_change, speed)

    def _log_wheel_changes(self, index: int, requested_Nm: float, torque_change, speed_change, speed) -> None:
        name = self.wheel_names[index]
        if torque_change != SATURATION_NONE:
            self.event("saturation" if torque_change == SATURATION_START else "saturation_end", actuator=name,
                       what="torque", requested=requested_Nm)
        if speed_change != SATURATION_NONE:
            self.event("saturation" if speed_change == SATURATION_START else "saturation_end", actuator=name,
                       what="speed", speed_rad_s=float(speed))

    def wheel_speed_rad_s(self, index: int) -> float:
        """Wheel ``index``'s speed relative to the body at ``env.now``."""
        if self.env._now > self.t_plant_s:
            self.advance_to(self.env._now)
        if self._speed_entry is None or self._speed_bank is not self.wheels:
            self._speed_entry = entry_point(wheel_speed, self.wheels, index, 0.0, self._q_w[1])
            self._speed_bank = self.wheels
        return self._speed_entry(self.wheels, index, self.wheels.h_Nms[index], self._q_w[1])

    def wheel_values(self, index: int) -> list:
        """Wheel ``index``'s telemetry at ``env.now`` (:func:`~attsim.actuators.wheel_dynamics.write_wheel_row`)."""
        if self.env._now > self.t_plant_s:
            self.advance_to(self.env._now)
        if self._row_entry is None or self._row_bank is not self.wheels:
            self._row = np.zeros(16)
            self._row_entry = entry_point(write_wheel_row, self.wheels, index, self._q_w[1], self._row, 0)
            self._row_bank = self.wheels
        return self._row[: self._row_entry(self.wheels, index, self._q_w[1], self._row, 0)].tolist()

    @property
    def external_torque_Nm(self) -> tuple:
        return self._tau_ext

    @property
    def dipole_Am2(self) -> tuple:
        """The commanded dipole (without the residual)."""
        return self._commanded_dipole

    # --- bookkeeping ---------------------------------------------------------

    def event(self, kind: str, **fields) -> None:
        """Log an event at the current simulation time.

        The plant is advanced to now first, so what happened in the plant up
        to now (a wheel reaching its speed limit) is logged before it.
        """
        self.advance_to(self.env.now)
        self._log(self.env.now, kind, **fields)

    def _log(self, t_s: float, kind: str, **fields) -> None:
        if self.recorder is not None:
            self.recorder.event(t_s, kind, **fields)

    def rng(self) -> np.random.Generator:
        """A new generator, deterministic for the mission seed and the order of requests."""
        return np.random.default_rng(self._rngs.spawn(1)[0])
