"""The running spacecraft: plant state, held commands, wheels, the environment now, the event log.

Components receive it as ``sc``: reading the state advances the plant to
the event's time, commands are held until they change (zero-order hold).
The plant's state lives in a World (:mod:`attsim.engine.world`) and is
advanced by the mission's advance unit (:mod:`attsim.engine.plant`), the
same one the compiled mission runs, so both paths integrate with one code.
"""

from __future__ import annotations

import math

import numpy as np

from .._core.fastcall import entry_point
from ..actuators.kernels import (SATURATION_NONE, SATURATION_START, WheelBank, empty_wheel_bank, wheel_command,
                                 wheel_commands, wheel_speed, wheels_total)
from ..actuators.wheel_dynamics import NO_MODEL, set_integrated, work_row, write_wheel_row
from ..dynamics import matrix_to_tuple, qconj, qrotate
from ..environment.table import B_I, EMPTY, P_SRP, RHO, SUN, R, V, EnvironmentTable, lerp1, lerp3, table_cell
from ..environment.torques import NO_DISTURBANCES, Disturbances, DisturbanceSwitches, disturbance_torques
from ..errors import AttsimError, GimbalLockError
from ..integrators import REGISTRY
from .checks import _check_state
from .plant import NO_FACES
from .world import DIVERGED, GIMBAL_LOCK, PLANT_T, PlantParts, plant_parts, plant_world

__all__ = ["Spacecraft"]



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

    def __init__(self, mission, env, recorder, table: EnvironmentTable = EMPTY, backend=None):
        self.env = env
        self.mission = mission
        self.recorder = recorder
        self.backend = backend
        integrator = REGISTRY[mission.method]
        self._integrator = integrator  # its advance unit is chosen once the wheels are known (friction or not)
        J = mission.inertia_kg_m2
        self._J = matrix_to_tuple(J)
        self._Jinv = matrix_to_tuple(np.linalg.inv(J))
        self._params = integrator.engine_params()
        # set-up, once: the method's own state from q0 and omega0, as plain Python (nothing to compile for it)
        self._initial_state = integrator.initial_state.py_func(tuple(mission.q0), tuple(mission.omega0_rad_s),
                                                               self._J, self._params)
        self.t_plant_s = 0.0
        self.table = table
        self.env_t, self.env_v = table
        environment = mission.environment
        self.environment = environment
        self._faces = environment.faces_array() if environment is not None else NO_FACES
        self._switches = DisturbanceSwitches(*environment.flags) if environment is not None else NO_DISTURBANCES
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
        self.world = self._advance = None
        self._command_entry = self._command_bank = None
        self._total_entry = self._total_bank = self._speed_entry = self._speed_bank = None
        self._row_entry = self._row_bank = None
        self._commands_entries, self._commands_bank = {}, None
        self._q_w = integrator.output_state.py_func(self._initial_state, self._J, self._params)
        self._rngs = np.random.SeedSequence(mission.seed)

    # --- time and state ---------------------------------------------------

    @property
    def now(self) -> float:
        return self.env.now

    def plant_world(self):
        """The World holding the plant (its state, held commands, environment and wheels): made at the first
        advance, when the wheels are registered, or the compiled mission's (:meth:`adopt`)."""
        if self.world is None or self.world.actuators.wheels is not self.wheels:
            self.adopt(plant_world(self.plant_parts(), self.wheels))
        return self.world

    def plant_parts(self) -> PlantParts:
        """The plant's parts of a World (:class:`~attsim.engine.world.PlantParts`): the current World's, else
        new ones from the initial state (a compiled run builds its World on them without an empty one first)."""
        if self.world is not None and self.world.actuators.wheels is self.wheels:
            return PlantParts(self.world.plant, self.world.environment, self.world.buffers.stops)
        return plant_parts(self.mission, self._integrator, self._initial_state, self.table, self.wheels, self._J,
                           self._Jinv, self._params, self.t_plant_s)

    def adopt(self, world) -> None:
        """Advance ``world`` (on this spacecraft's plant parts and wheels) from now on."""
        self.world = world
        self._advance = None  # the Python path's advance is made at its first use

    def advance_to(self, t_s: float) -> None:
        """Integrate the plant to ``t_s`` with the commands held since the last change.

        Raises :class:`~attsim.errors.GimbalLockError` where the method's
        parameterisation fails and :class:`~attsim.errors.DivergenceError`
        where the state stops being finite or the attitude leaves unit norm.
        """
        if t_s <= self.t_plant_s:
            return
        world = self.plant_world()
        if self._advance is None:
            self._advance = self.backend.plant_advance(self._integrator, world)
        t_from = self.t_plant_s
        status = self._advance(t_from, float(t_s), self._tau_ext, self._commanded_dipole)
        self.take_plant(world)
        buffers = world.buffers
        for k in range(int(buffers.counts[1])):  # the wheels' speed stops the advance logged
            t_stop, _, _, j, speed = buffers.events[k, :5]
            self._log(float(t_stop), "saturation", actuator=self.wheel_names[int(j)], what="speed",
                      speed_rad_s=float(speed))
        buffers.counts[1] = 0
        if status == GIMBAL_LOCK:
            self.gimbal_lock()
        if status == DIVERGED:
            q, w = self._q_w
            _check_state(q, w, t_from, t_s, self.mission.max_step_s)

    def take_plant(self, world) -> None:
        """Read the plant's time and ``(q, ω)`` from the World after it advanced."""
        v = world.plant.q_w
        self.t_plant_s = float(world.plant.time[PLANT_T])
        self._q_w = ((float(v[0]), float(v[1]), float(v[2]), float(v[3])), (float(v[4]), float(v[5]), float(v[6])))

    def gimbal_lock(self):
        """Raise the method's :class:`~attsim.errors.GimbalLockError` where the plant stopped."""
        from ..rotations import quat_to_euler321

        raise GimbalLockError(self.t_plant_s, math.degrees(float(quat_to_euler321(np.array(self._q_w[0]))[1])),
                              math.degrees(self._params[0]))

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
