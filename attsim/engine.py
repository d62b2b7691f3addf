"""The mission engine (layer 6): a SimPy loop around the attitude plant.

Discrete things happen at discrete times: sensors sample, controllers
decide, schedules switch torques, the recorder writes telemetry. Each is a
SimPy process (a generator taking ``env`` first). The continuous plant is
advanced lazily: whenever a process needs the state or changes a command,
the plant is first integrated from where it was to ``env.now`` with the
commands that were held until then (zero-order hold), in sub-steps of at
most ``max_step``, the last one shortened to land on the event time.
Torques that depend on the state (``m × B`` of magnetorquers, the wheels'
gyroscopic coupling) are evaluated at every integrator stage, not frozen at
the event.

A control cycle (sense → decide → command) runs in one process, so nothing
relies on the order in which SimPy serves events that fall at the same time.

Usage::

    mission = attsim.Mission(name="demo", inertia=J, omega0=(0.1, 0, 0), duration=600.0)
    mission.add(attsim.TorqueSchedule([(10.0, 12.0, (0.0, 0.0, 1e-3))]))
    tel = mission.run()          # -> attsim.Telemetry (.df, .events, .meta)
"""

from __future__ import annotations

import math
import platform
import time
from pathlib import Path
from typing import Callable, Iterable

import numpy as np

from . import __version__
from ._validate import positive_scalar, unit_quaternion, vector3
from .errors import AttsimError, GimbalLockError, InputError
from .inertia import check_inertia
from .schema import QUATERNION_COLUMNS, RATE_COLUMNS
from .telemetry import Recorder, Telemetry, load

__all__ = ["Mission", "Spacecraft", "Component", "ControllerError"]

ENGINE_METHODS = ("rk4", "rkn", "rkmk4", "dcm", "euler321")
_NO_FIELD_T = np.empty(0)
_NO_FIELD_V = np.empty((0, 3))
_NO_FACES = np.empty((0, 10))
ENVIRONMENT_COLUMNS = ["B_I_x", "B_I_y", "B_I_z", "lit"] + [f"tau_{d}_{a}" for d in ("gg", "aero", "srp", "res") for a in "xyz"]


class ControllerError(AttsimError):
    """A controller raised or returned something the engine cannot apply.

    The message names the controller and the simulation time; the telemetry
    up to that moment is on disk (``mission.run`` flushed it first).
    """


class Component:
    """Something added to a :class:`Mission`: actuator, sensor, controller, schedule.

    Subclasses may override:

    ``columns()``
        Names of the telemetry columns this component adds.
    ``values(sc)``
        Their values at the recorder's time (``sc`` is the running
        :class:`Spacecraft`; reading its state advances the plant).
    ``processes(env, sc)``
        SimPy generator processes to start (each a generator taking ``env``
        first).
    ``prepare(mission)``
        Checks against the mission before it runs.
    ``start(sc)``
        Set-up at ``t = 0`` once the spacecraft exists (random generators,
        initial wheel momentum), before any process runs.
    """

    name: str = "component"

    def columns(self) -> list[str]:
        return []

    def values(self, sc: "Spacecraft") -> list[float]:
        return []

    def processes(self, env, sc: "Spacecraft") -> Iterable:
        return ()

    def prepare(self, mission: "Mission") -> None:
        pass

    def start(self, sc: "Spacecraft") -> None:
        pass


def _field_table(field, duration_s: float, spacing_s: float):
    """Environment table holding only a magnetic field (T, inertial) on a uniform grid."""
    from .dynamics import ENV_WIDTH

    t, b = _field_values(field, duration_s, spacing_s)
    values = np.zeros((t.size, ENV_WIDTH))
    values[:, 0:3] = b
    return t, values


def _field_values(field, duration_s: float, spacing_s: float):
    if field is None:
        return _NO_FIELD_T, _NO_FIELD_V
    if callable(field):
        n = max(2, int(math.ceil(duration_s / spacing_s)) + 1)
        t = np.linspace(0.0, duration_s, n)
        try:
            values = np.asarray(field(t), dtype=np.float64)  # vectorised callables: one call
        except Exception:
            values = None
        if values is None or values.shape != (n, 3):
            values = np.array([np.asarray(field(float(x)), dtype=np.float64) for x in t])
        if values.shape != (n, 3) or not np.all(np.isfinite(values)):
            raise InputError("field", "callable must return a finite 3-vector (T, inertial) for every t in [0, duration]")
        return t, values
    vector = vector3(field, "field")
    return np.array([0.0, duration_s]), np.vstack([vector, vector])


class Spacecraft:
    """The running spacecraft: plant state, held commands, field, event log.

    Components receive it as ``sc``. Reading the state (:meth:`state`) or
    changing a command advances the plant to ``env.now`` first.
    """

    def __init__(self, mission: "Mission", env, recorder: Recorder | None):
        from .dynamics import matrix_to_tuple, plant_torque
        from .integrators import REGISTRY

        self.env = env
        self.mission = mission
        self.recorder = recorder
        integrator = REGISTRY[mission.method]
        self._advance = integrator.compiled_advance(plant_torque)
        self._output = integrator.output_state
        J = mission.inertia_kg_m2
        self._J = matrix_to_tuple(J)
        self._Jinv = matrix_to_tuple(np.linalg.inv(J))
        self._params = (math.radians(1.0),)  # euler321's gimbal margin; ignored by the others
        self._state = integrator.initial_state(tuple(mission.q0), tuple(mission.omega0_rad_s), self._J, self._params)
        self.t_plant_s = 0.0
        self.env_t, self.env_v = mission.environment_table
        environment = mission.environment
        self.environment = environment
        self._faces = environment.faces_array() if environment is not None else _NO_FACES
        self._flags = environment.flags if environment is not None else (0.0, 0.0, 0.0)
        self._residual = tuple(environment.residual_dipole_Am2) if environment is not None else (0.0, 0.0, 0.0)
        self._external = {}  # source -> body torque (N m)
        self._wheel_torques = {}  # wheel -> motor torque, body axes (N m)
        self._tau_ext = (0.0, 0.0, 0.0)
        self._dipole = self._residual  # commanded + residual
        self._commanded_dipole = (0.0, 0.0, 0.0)
        self._tau_wheels = (0.0, 0.0, 0.0)
        self._h_wheels = (0.0, 0.0, 0.0)
        self._q_w = self._output(self._state, self._J, self._params)
        self._rngs = np.random.SeedSequence(mission.seed)

    # --- time and state ---------------------------------------------------

    @property
    def now(self) -> float:
        return self.env.now

    def advance_to(self, t_s: float) -> None:
        """Integrate the plant to ``t_s`` with the commands held since the last change."""
        if t_s <= self.t_plant_s:
            return
        inputs = (self.t_plant_s, self._tau_ext, self._dipole, self._tau_wheels, self._h_wheels, self.env_t, self.env_v,
                  self._faces, self._flags, self._J)
        state, stopped = self._advance(self._state, self.t_plant_s, t_s, self.mission.max_step_s, inputs, self._J, self._Jinv, self._params)
        if stopped:
            from .rotations import quat_to_euler321

            q, _ = self._output(state, self._J, self._params)
            raise GimbalLockError(t_s, math.degrees(float(quat_to_euler321(np.array(q))[1])), 1.0)
        dt = t_s - self.t_plant_s
        h, tw = self._h_wheels, self._tau_wheels
        self._h_wheels = (h[0] + tw[0] * dt, h[1] + tw[1] * dt, h[2] + tw[2] * dt)
        self._state = state
        self.t_plant_s = t_s
        self._q_w = self._output(state, self._J, self._params)

    def state(self) -> tuple[tuple, tuple]:
        """``(q_IB, omega_rad_s)`` as tuples at ``env.now``."""
        self.advance_to(self.env.now)
        return self._q_w

    @property
    def q(self) -> np.ndarray:
        return np.array(self.state()[0])

    @property
    def omega_rad_s(self) -> np.ndarray:
        return np.array(self.state()[1])

    @property
    def h_wheels_Nms(self) -> tuple:
        """Total wheel momentum (body axes) at ``env.now``."""
        self.advance_to(self.env.now)
        return self._h_wheels

    def field_inertial_T(self, t_s: float | None = None) -> tuple:
        """Inertial magnetic field (T) at ``t_s`` (default now), from the run's table."""
        from .dynamics import interpolate_vector

        return interpolate_vector(self.env_t, self.env_v, self.env.now if t_s is None else t_s)

    def environment_now(self) -> dict:
        """The environment at ``env.now`` (ECI, SI): B_I, r, v, rho, sun, srp_pressure."""
        from .dynamics import lerp1, lerp3, table_cell

        k, f = table_cell(self.env_t, self.env.now)
        return {
            "B_I": np.array(lerp3(self.env_v, k, f, 0)), "r": np.array(lerp3(self.env_v, k, f, 3)),
            "v": np.array(lerp3(self.env_v, k, f, 6)), "rho": lerp1(self.env_v, k, f, 9),
            "sun": np.array(lerp3(self.env_v, k, f, 10)), "srp_pressure": lerp1(self.env_v, k, f, 13),
        }

    def orbit_frame(self) -> tuple[np.ndarray, np.ndarray]:
        """``(q_IO, ω_O_I)``: the orbit (LVLH) frame now and its inertial angular velocity (ECI)."""
        from .environment.frames import lvlh_quaternion

        if self.environment is None:
            raise AttsimError("the orbit frame needs a mission environment with an orbit")
        e = self.environment_now()
        return lvlh_quaternion(e["r"], e["v"]), np.cross(e["r"], e["v"]) / float(e["r"] @ e["r"])

    def disturbance_torques(self) -> dict:
        """Each disturbance torque now (body axes, N m), for telemetry."""
        from .dynamics import (ENV_SUN, MU_EARTH, face_torques, gravity_gradient_torque, lerp3, qconj, qrotate,
                               relative_wind_velocity, table_cell)

        q, _ = self.state()
        qc = qconj(q)
        e = self.environment_now()
        zero = (0.0, 0.0, 0.0)
        gg = aero = srp = zero
        if self._flags[0]:
            r = e["r"]
            rn = float(np.linalg.norm(r))
            gg = gravity_gradient_torque(qrotate(qc, tuple(r / rn)), MU_EARTH / rn**3, self._J)
        if self._flags[1] or self._flags[2]:
            k, f = table_cell(self.env_t, self.env.now)
            aero, srp = face_torques(self._faces, qrotate(qc, relative_wind_velocity(self.env_v, k, f)),
                                     e["rho"] if self._flags[1] else 0.0, qrotate(qc, lerp3(self.env_v, k, f, ENV_SUN)),
                                     e["srp_pressure"] if self._flags[2] else 0.0)
        b = qrotate(qc, tuple(e["B_I"]))
        res = tuple(np.cross(self._residual, b))
        return {"gg": gg, "aero": aero, "srp": srp, "res": res}

    def field_body_T(self) -> np.ndarray:
        """Magnetic field in body axes (T) now: ``R_IBᵀ B_I``."""
        from .dynamics import qconj, qrotate

        q, _ = self.state()
        return np.array(qrotate(qconj(q), self.field_inertial_T()))

    # --- commands (zero-order hold) ----------------------------------------

    def set_external_torque(self, source: str, torque_body_Nm) -> None:
        """Hold a body-fixed external torque from ``source`` (sources add)."""
        self.advance_to(self.env.now)
        self._external[source] = (float(torque_body_Nm[0]), float(torque_body_Nm[1]), float(torque_body_Nm[2]))
        self._tau_ext = _vector_sum(self._external.values())

    def set_dipole(self, dipole_body_Am2) -> None:
        """Hold the magnetorquers' total dipole (body axes, A m^2); the residual dipole adds to it."""
        self.advance_to(self.env.now)
        m = (float(dipole_body_Am2[0]), float(dipole_body_Am2[1]), float(dipole_body_Am2[2]))
        self._commanded_dipole = m
        self._dipole = (m[0] + self._residual[0], m[1] + self._residual[1], m[2] + self._residual[2])

    def set_wheel_torque(self, wheel: str, torque_body_Nm) -> None:
        """Hold one wheel's motor torque (body axes; the body feels minus this)."""
        self.advance_to(self.env.now)
        self._wheel_torques[wheel] = (float(torque_body_Nm[0]), float(torque_body_Nm[1]), float(torque_body_Nm[2]))
        self._tau_wheels = _vector_sum(self._wheel_torques.values())

    def add_wheel_momentum(self, h_body_Nms) -> None:
        """Add a wheel's initial momentum (body axes); only before the run starts."""
        if self.t_plant_s != 0.0:
            raise AttsimError("wheel momentum can only be set before the run starts")
        h = self._h_wheels
        self._h_wheels = (h[0] + float(h_body_Nms[0]), h[1] + float(h_body_Nms[1]), h[2] + float(h_body_Nms[2]))

    @property
    def external_torque_Nm(self) -> tuple:
        return self._tau_ext

    @property
    def dipole_Am2(self) -> tuple:
        """The commanded dipole (without the residual)."""
        return self._commanded_dipole

    # --- bookkeeping ---------------------------------------------------------

    def event(self, kind: str, **fields) -> None:
        """Log an event at the current simulation time."""
        if self.recorder is not None:
            self.recorder.event(self.env.now, kind, **fields)

    def rng(self) -> np.random.Generator:
        """A new generator, deterministic for the mission seed and the order of requests."""
        return np.random.default_rng(self._rngs.spawn(1)[0])


def _describe_component(component) -> dict:
    description = {"name": component.name, "type": type(component).__name__}
    for attribute in ("axis", "dipole_max_Am2", "max_torque_Nm", "max_speed_rad_s", "rate_hz", "period_s", "gain_used"):
        value = getattr(component, attribute, None)
        if value is not None:
            description[attribute] = np.asarray(value).tolist()
    return description


def _describe_environment(environment) -> dict:
    orbit = environment.orbit
    return {
        "orbit": type(orbit).__name__, "epoch": orbit.epoch.datetime.isoformat(), "period_s": orbit.period_s,
        "inclination_deg": math.degrees(orbit.inclination_rad), "tle": [getattr(orbit, "line1", None), getattr(orbit, "line2", None)],
        "field": None if environment.field is None else environment.field.name,
        "atmosphere": None if environment.atmosphere is None else environment.atmosphere.name,
        "shadow": environment.shadow, "gravity_gradient": environment.gravity_gradient,
        "aerodynamic": environment.aerodynamic, "solar_pressure": environment.solar_pressure,
        "residual_dipole_Am2": environment.residual_dipole_Am2.tolist(), "faces": len(environment.faces),
    }


def _vector_sum(vectors) -> tuple:
    tx = ty = tz = 0.0
    for x, y, z in vectors:
        tx, ty, tz = tx + x, ty + y, tz + z
    return (tx, ty, tz)


class Mission:
    """A scenario: spacecraft, environment, components, integrator, telemetry.

    Parameters
    ----------
    name : str
        Scenario name; also the default output directory ``reports/<name>``.
    inertia : array_like or CompositeBody
        Inertia about the centre of mass, body axes (kg m^2). With reaction
        wheels, exclude their axial inertia about their spin axes (it is
        carried by the wheels' momentum).
    omega0 : array_like
        Initial body rate, rad/s.
    q0 : array_like
        Initial ``q_IB``, scalar first.
    duration : float
        Simulated time, s.
    method : str
        Integrator, one of ``ENGINE_METHODS``.
    max_step : float
        Largest integration sub-step, s.
    telemetry_dt : float
        Telemetry period, s.
    seed : int
        Seed of every random process of the run.
    out_dir : path, optional
        Run directory (default ``reports/<name>``).
    field : None, array_like (3,), or callable
        Inertial magnetic field, T: constant, or ``f(t) -> (3,)`` (also
        called once with an array of times when it accepts one). Tabulated
        every ``field_dt`` seconds before the run and interpolated linearly.
    field_dt : float
        Spacing of that table (default: ``max_step``).
    environment : attsim.environment.Environment, optional
        Orbit, geomagnetic field, Sun, atmosphere and disturbance torques
        (instead of ``field``); t = 0 is the orbit's epoch. Its state is
        logged (``B_I_*``, ``lit``, ``tau_gg_*``, ``tau_aero_*``,
        ``tau_srp_*``, ``tau_res_*``).
    description : str
        Free text for the report.
    allow_nonphysical : bool
        Accept inertia that breaks the triangle inequality.
    """

    def __init__(
        self,
        name: str,
        inertia,
        omega0,
        q0=(1.0, 0.0, 0.0, 0.0),
        duration: float = 600.0,
        method: str = "rk4",
        max_step: float = 0.1,
        telemetry_dt: float = 1.0,
        seed: int = 0,
        out_dir=None,
        field=None,
        field_dt: float | None = None,
        environment=None,
        description: str = "",
        allow_nonphysical: bool = False,
    ):
        if not isinstance(name, str) or not name.strip():
            raise InputError("name", "must be a non-empty string", f"got {name!r}")
        self.name = name
        self.description = str(description)
        checked = check_inertia(inertia, allow_nonphysical=allow_nonphysical)
        self.inertia_kg_m2 = checked.matrix_kg_m2
        self.nonphysical_inertia = checked.nonphysical
        self.omega0_rad_s = vector3(omega0, "omega0")
        self.q0 = unit_quaternion(q0, "q0")
        self.duration_s = positive_scalar(duration, "duration")
        if method not in ENGINE_METHODS:
            raise InputError("method", f"must be one of {list(ENGINE_METHODS)} in a mission", f"got {method!r}")
        self.method = method
        self.max_step_s = positive_scalar(max_step, "max_step")
        self.telemetry_dt_s = positive_scalar(telemetry_dt, "telemetry_dt")
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise InputError("seed", "must be an integer >= 0", f"got {seed!r}")
        self.seed = int(seed)
        self.out_dir = Path(out_dir) if out_dir is not None else Path("reports") / name
        self.field_spec = field
        self.field_dt_s = positive_scalar(field_dt, "field_dt") if field_dt is not None else self.max_step_s
        if environment is not None:
            from .environment import Environment

            if not isinstance(environment, Environment):
                raise InputError("environment", "must be an attsim.environment.Environment", f"got {type(environment).__name__}")
            if field is not None:
                raise InputError("field", "give either field or environment (the environment has its own field model)")
        self.environment = environment
        self.components: list[Component] = []

    def add(self, component: Component) -> Component:
        """Add an actuator, sensor, controller or schedule; returns it."""
        if not isinstance(component, Component):
            raise InputError("component", "must be an attsim Component (actuator, sensor, controller, schedule)",
                             f"got {type(component).__name__}")
        if any(c.name == component.name for c in self.components):
            raise InputError("component", f"names must be unique in a mission: {component.name!r} is taken")
        self.components.append(component)
        return component

    def component(self, name: str) -> Component:
        for c in self.components:
            if c.name == name:
                return c
        raise InputError("name", f"no component {name!r} in mission {self.name!r}", f"have {[c.name for c in self.components]}")

    def meta(self) -> dict:
        import numba
        import pandas
        import scipy
        import simpy

        return {
            "name": self.name,
            "description": self.description,
            "inertia_kg_m2": self.inertia_kg_m2.tolist(),
            "nonphysical_inertia": self.nonphysical_inertia,
            "omega0_rad_s": self.omega0_rad_s.tolist(),
            "q0": self.q0.tolist(),
            "duration_s": self.duration_s,
            "method": self.method,
            "max_step_s": self.max_step_s,
            "telemetry_dt_s": self.telemetry_dt_s,
            "seed": self.seed,
            "environment": None if self.environment is None else _describe_environment(self.environment),
            "components": [_describe_component(c) for c in self.components],
            "versions": {
                "attsim": __version__, "numpy": np.__version__, "scipy": scipy.__version__, "numba": numba.__version__,
                "pandas": pandas.__version__, "simpy": simpy.__version__, "python": platform.python_version(),
            },
        }

    def run(self, realtime_factor: float | None = None, progress: bool = False) -> Telemetry:
        """Run the mission; write and return its telemetry.

        Parameters
        ----------
        progress : bool
            Show a progress bar (simulated time, real-time factor) on stderr
            once the run has lasted two seconds.
        realtime_factor : float, optional
            Pace the loop against the wall clock at this many simulated
            seconds per wall second (``simpy.rt.RealtimeEnvironment``). When
            the loop cannot keep up it runs as fast as it can and records
            how far it lagged (``meta["realtime_max_lag_s"]``).
        """
        import simpy
        import simpy.rt

        for component in self.components:
            component.prepare(self)
        if realtime_factor is None:
            env = simpy.Environment()
        else:
            factor = positive_scalar(realtime_factor, "realtime_factor")
            env = simpy.rt.RealtimeEnvironment(factor=1.0 / factor, strict=False)
        if self.environment is not None:
            self.environment_table = self.environment.table(self.duration_s)
        else:
            self.environment_table = _field_table(self.field_spec, self.duration_s, self.field_dt_s)
        columns = list(QUATERNION_COLUMNS + RATE_COLUMNS)
        if self.environment is not None:
            columns += ENVIRONMENT_COLUMNS
        for component in self.components:
            columns += component.columns()
        recorder = Recorder(self.out_dir, columns, meta=self.meta())
        wall_start = time.perf_counter()
        lag = {"max_s": 0.0}
        bar = None
        if progress:
            from tqdm import tqdm

            bar = tqdm(total=self.duration_s, delay=2.0, unit="s", unit_scale=True, desc=self.name, leave=False,
                       bar_format="{desc}: {percentage:3.0f}%|{bar}| {n:.0f}/{total:.0f} s simulated, x{rate_fmt} real time")
        env_now = lambda: env.now  # noqa: E731
        try:
            sc = Spacecraft(self, env, recorder)
            for component in self.components:
                component.start(sc)
            env.process(self._recorder_process(env, sc, recorder, realtime_factor, wall_start, lag, bar))
            for component in self.components:
                for process in component.processes(env, sc):
                    env.process(process)
            env.run(until=self.duration_s)
            self._record(sc, recorder, self.duration_s)
        except BaseException as exc:
            recorder.abort(f"{type(exc).__name__}: {exc}", wall_s=time.perf_counter() - wall_start, t_stop_s=env_now())
            raise
        finally:
            if bar is not None:
                bar.close()
        wall_s = time.perf_counter() - wall_start
        meta_end = {"wall_s": wall_s, "realtime_factor_achieved": self.duration_s / wall_s if wall_s > 0 else None}
        if realtime_factor is not None:
            meta_end["realtime_max_lag_s"] = lag["max_s"]
        recorder.close(**meta_end)
        return load(self.out_dir)

    def _record(self, sc: Spacecraft, recorder: Recorder, t_s: float) -> None:
        sc.advance_to(t_s)
        q, w = sc._q_w
        row = [q[0], q[1], q[2], q[3], w[0], w[1], w[2]]
        if self.environment is not None:
            e = sc.environment_now()
            p0 = e["srp_pressure"]
            row += [*e["B_I"], 1.0 if p0 > 0 else 0.0]
            for torque in sc.disturbance_torques().values():
                row += list(torque)
        for component in self.components:
            row += component.values(sc)
        recorder.append(t_s, row)

    def _recorder_process(self, env, sc, recorder, realtime_factor, wall_start, lag, bar=None):
        """Rows at k telemetry_dt before the end; the row at ``duration`` is written after the loop."""
        k = 0
        while True:
            t_next = k * self.telemetry_dt_s
            if t_next >= self.duration_s:
                return
            if t_next > env.now:
                yield env.timeout(t_next - env.now)
            self._record(sc, recorder, env.now)
            if bar is not None:
                bar.update(env.now - bar.n)
            if realtime_factor is not None:
                behind = (time.perf_counter() - wall_start) - env.now / realtime_factor
                if behind > lag["max_s"]:
                    lag["max_s"] = behind
            k += 1


def periodic(env, period_s: float, phase_s: float, duration_s: float, action: Callable[[], None]):
    """A SimPy process calling ``action()`` at ``phase + k period`` (times by multiplication)."""
    k = 0
    while True:
        t_next = phase_s + k * period_s
        if t_next > duration_s:
            return
        if t_next > env.now:
            yield env.timeout(t_next - env.now)
        action()
        k += 1
