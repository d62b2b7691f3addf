"""The mission engine: a SimPy loop around the attitude plant.

Discrete things happen at discrete times: sensors sample, controllers
decide, schedules switch torques, the recorder writes telemetry. Each is a
SimPy process (a generator taking ``env`` first). The continuous plant
(:class:`~attsim.engine.plant.Spacecraft`) is advanced lazily to each event with
the commands held since the last one.

Order at one instant, defined once: every sample, decision and command due
at time ``t`` happens first (SimPy's normal priority; a control cycle runs
sense → decide → command in one process), then the telemetry row at ``t``
is recorded (:data:`RECORD_PRIORITY`), then the run may end
(:data:`END_PRIORITY`). So a row shows the measurement taken at its own
time, the command decided from it, and the state ``q``, ``omega`` there.

Usage::

    mission = attsim.Mission(name="demo", inertia=J, omega0=(0.1, 0, 0), duration=600.0)
    mission.add(attsim.TorqueSchedule([(10.0, 12.0, (0.0, 0.0, 1e-3))]))
    tel = mission.run()          # -> attsim.Telemetry (.df, .events, .meta)
"""

from __future__ import annotations

import math
import os
import platform
import sys
from pathlib import Path

import numpy as np

from .. import __version__
from ..control import knowledge
from .._core.validate import path_like, positive_int, safe_name, vector3
from ..errors import ControllerError, InputError
from ..inertia import check_inertia
from ..telemetry.recorder import Telemetry
from .component import Component, periodic
from .compile_processes import usable_cores
from .precompile import compile_needs
from . import settings
from .run import RECORD_PRIORITY, MissionRun
from .settings import engine_methods
from .spacecraft import Spacecraft

# ENGINE_METHODS is provided by the module's __getattr__ (the registry imports the compiled integrators on use)
__all__ = ["Mission", "Spacecraft", "Component", "ControllerError", "periodic", "ENGINE_METHODS",  # noqa: F822
           "RECORD_PRIORITY"]



def __getattr__(name: str):
    if name == "ENGINE_METHODS":  # computed on use: the registry imports the compiled integrators
        return engine_methods()
    raise AttributeError(f"module 'attsim.engine' has no attribute {name!r}")


def _describe_component(component) -> dict:
    description = {"name": component.name, "type": type(component).__name__}
    # the report draws limits, a wheel's momentum capacity (its inertia) and a controller's fixed target (pointing);
    # a sun sensor's detector normals as mounted give the Sun direction it measures; a wheel law's allocation (scaled
    # or clipped, its control axes), a law's command delay and the magnetorquers it feeds forward say how its
    # commands reached the actuators (a user's law's magnetorquer_command too), an unloading law's momentum what it
    # drains; a magnetorquer array's bar axes
    for attribute in ("axis", "dipole_max_Am2", "bar_axes", "max_torque_Nm", "max_speed_rad_s", "inertia_kg_m2",
                      "max_force_N", "rate_hz", "period_s", "gain_used", "target_q", "normals_nominal", "allocation",
                      "control_axes", "command_delay_s", "catalogue_model", "magnetorquer_feedforward",
                      "momentum", "magnetorquer_command"):
        value = getattr(component, attribute, None)
        if value is not None:
            description[attribute] = np.asarray(value).tolist()
    station = getattr(component, "target", None)
    if hasattr(station, "lat_deg") and hasattr(station, "lon_deg"):  # a ground station: marked on the ground track
        description["ground_target"] = {"lat_deg": float(station.lat_deg), "lon_deg": float(station.lon_deg),
                                        "min_elevation_deg": float(getattr(station, "min_elevation_deg", 0.0))}
    return description


def _describe_environment(environment) -> dict:
    orbit = environment.orbit
    return {
        "orbit": type(orbit).__name__, "epoch": orbit.epoch.datetime.isoformat(), "period_s": orbit.period_s,
        "inclination_deg": math.degrees(orbit.inclination_rad),
        "tle": [getattr(orbit, "line1", None), getattr(orbit, "line2", None)],
        "field": None if environment.field is None else environment.field.name,
        "atmosphere": None if environment.atmosphere is None else getattr(environment.atmosphere, "name",
                                                                          type(environment.atmosphere).__name__),
        "shadow": environment.shadow, "gravity_gradient": environment.gravity_gradient,
        "aerodynamic": environment.aerodynamic, "solar_pressure": environment.solar_pressure,
        "residual_dipole_Am2": environment.residual_dipole_Am2.tolist(), "faces": len(environment.faces),
        "kepler": _kepler_elements(orbit),
        "effects": environment.effects(),
    }


_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep  # attsim/


def _caller_outside_attsim() -> str | None:
    """``file:line`` of the innermost caller outside attsim (the line of a user's script that added a component)."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame = frame.f_back
    return None if frame is None else f"{frame.f_code.co_filename}:{frame.f_lineno}"


def _kepler_elements(orbit) -> dict | None:
    """A Kepler orbit's elements at its epoch (the report rebuilds the orbit from them); None for other orbits."""
    if not hasattr(orbit, "raan0"):
        return None
    return {"semi_major_axis_m": orbit.a, "eccentricity": orbit.e,
            "inclination_deg": math.degrees(orbit.inclination_rad), "raan_deg": math.degrees(orbit.raan0),
            "arg_perigee_deg": math.degrees(orbit.argp0),
            "mean_anomaly_deg": math.degrees(orbit.M0), "j2": orbit.j2, "mu_m3_s2": orbit.mu_m3_s2,
            "earth_radius_m": orbit.earth_radius_m}


class Mission:
    """A scenario: spacecraft, environment, components, integrator, telemetry.

    ``telemetry_chunk_s`` (class attribute, 10 s) bounds the simulated time a
    killed run can lose (the recorder's ``chunk_s``); a campaign's scratch
    runs, whose files nobody recovers, set it to infinity and hand their rows
    over in fewer, larger blocks.

    Parameters
    ----------
    name : str
        Scenario name; also the default output directory ``reports/<name>``,
        so a safe file name (``attsim._core.validate.NAME_RULE``: letters, digits,
        ``_ - .``, not starting with ``.``, at most 100 characters); write
        elsewhere with ``out_dir``.
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

    telemetry_chunk_s = 10.0

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
        self.name = safe_name(name, "name")
        self.description = str(description)
        checked = check_inertia(inertia, allow_nonphysical=allow_nonphysical)
        self.inertia_kg_m2 = checked.matrix_kg_m2
        self.nonphysical_inertia = checked.nonphysical
        # checked by __setattr__ (attsim.engine.settings), as when a script changes them later
        self.omega0_rad_s, self.q0, self.duration_s, self.method = omega0, q0, duration, method
        self.max_step_s, self.telemetry_dt_s, self.seed = max_step, telemetry_dt, seed
        if out_dir is not None:
            path_like(out_dir, "out_dir")
        self.out_dir = Path(out_dir) if out_dir is not None else Path("reports") / name
        if field is not None and not callable(field):
            field = vector3(field, "field")  # a callable is checked where its values enter (the field table)
        self.field_spec = field
        self.field_dt_s = field_dt if field_dt is not None else self.max_step_s
        if environment is not None:
            from ..environment import Environment

            if not isinstance(environment, Environment):
                raise InputError("environment", "must be an attsim.environment.Environment",
                                 f"got {type(environment).__name__}")
            if field is not None:
                raise InputError("field", "give either field or environment (the environment has its own field model)")
        self.environment = environment
        self.components: list[Component] = []
        self._added_at: dict[str, str | None] = {}  # component name -> where it was added, for its errors

    def __setattr__(self, name: str, value) -> None:
        """A setting changed after construction is checked as its keyword; a keyword's own name is refused."""
        object.__setattr__(self, name, settings.checked(self, name, value))
        settings.check_work(self, name)

    @property
    def has_field(self) -> bool:
        """Whether the mission has a magnetic field: ``field=`` (a constant one not zero) or an environment's model."""
        if self.environment is not None:
            return self.environment.field is not None
        spec = self.field_spec
        return spec is not None and (callable(spec) or bool(np.any(spec != 0.0)))

    def add(self, component: Component) -> Component:
        """Add an actuator, sensor, controller or schedule; returns it."""
        if not isinstance(component, Component):
            raise InputError("component", "must be an attsim Component (actuator, sensor, controller, schedule)",
                             f"got {type(component).__name__}")
        if any(c.name == component.name for c in self.components):
            raise InputError("component", f"names must be unique in a mission: {component.name!r} is taken")
        self.components.append(component)
        self._added_at[component.name] = _caller_outside_attsim()
        return component

    def added_at(self, name: str) -> str | None:
        """``file:line`` of the user's code that added component ``name`` (None when attsim's own code did)."""
        return self._added_at.get(name)

    def component(self, name: str) -> Component:
        for c in self.components:
            if c.name == name:
                return c
        raise InputError("name", f"no component {name!r} in mission {self.name!r}",
                         f"have {[c.name for c in self.components]}")

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
            "field": self._describe_field(),
            "components": [_describe_component(c) for c in self.components],
            "modes": next((c.mode_names for c in self.components if hasattr(c, "mode_names")), None),
            "knowledge": knowledge.record(self.components),
            "versions": {
                "attsim": __version__, "numpy": np.__version__, "scipy": scipy.__version__, "numba": numba.__version__,
                "pandas": pandas.__version__, "simpy": simpy.__version__, "python": platform.python_version(),
            },
        }

    def _describe_field(self) -> dict | None:
        """The magnetic field given with ``field=`` (no environment): a function's name or the constant's value, and
        that no other effect acts; None without one (an environment's field is in its own description)."""
        spec = self.field_spec
        if self.environment is not None or spec is None:
            return None
        if hasattr(spec, "knot_table"):  # a field history: tabulated at its own samples, not every field_dt_s
            return {"given": "field history", "name": spec.name, "other_effects": "none"}
        if callable(spec):
            name = getattr(spec, "__qualname__", None) or type(spec).__name__
            return {"given": "function of time", "name": f"{getattr(spec, '__module__', None) or '?'}.{name}",
                    "tabulated_every_s": self.field_dt_s, "other_effects": "none"}
        return {"given": "constant", "inertial_T": np.asarray(spec, dtype=float).tolist(), "other_effects": "none"}

    def compile(self, jobs: int | None = None) -> list[str]:
        """Compile the units this mission needs on this machine (nothing when every one is on disk already), saying
        each on stderr; returns the names of those compiled. Its runs then start at once: what a campaign does
        before its workers start, and ``attsim compile MISSION``.

        ``jobs``: how many processes compile at once (default: one per core; each ends past
        :data:`~attsim.engine.compile_processes.PROCESS_LIMIT_MB` and a fresh one goes on), a user's law in this one."""
        jobs = usable_cores() if jobs is None else positive_int(jobs, "jobs", maximum=1024)
        run = MissionRun(self, in_memory=True, backend="compiled")
        try:
            run.start()
            return compile_needs(run.needs(), jobs)
        finally:
            run.close()

    def run(self, realtime_factor: float | None = None, progress: bool = False,
            compiled: bool | None = None, in_memory: bool = False, backend: str | None = None) -> Telemetry:
        """Run the mission; write and return its telemetry.

        Parameters
        ----------
        compiled : bool, optional
            Run the periodic work (sensors, controllers, actuators,
            schedules, telemetry rows) and the plant in one compiled loop
            (:mod:`attsim.engine.loop`). By default (None) this happens when
            every component has a compiled form and no real-time pacing is
            asked for; False forces the Python path (same results to
            round-off); True refuses a mission that cannot run compiled.
        progress : bool
            Show a progress bar (simulated time, real-time factor) on stderr
            once the run has lasted two seconds.
        realtime_factor : float, optional
            Pace the loop against the wall clock at this many simulated
            seconds per wall second (``simpy.rt.RealtimeEnvironment``). When
            the loop cannot keep up it runs as fast as it can and records
            how far it lagged (``meta["realtime_max_lag_s"]``).
        in_memory : bool
            Keep the telemetry in memory and write no file: ``out_dir`` is
            not touched and the result's ``path`` is None
            (:mod:`attsim.telemetry.memory`; a campaign's "summary" runs).
        backend : {"auto", "compiled", "interpreted"}, optional
            How the compiled loop's units run (:mod:`attsim.engine.choice`):
            compiled (each unit compiled once per machine, then loaded from
            the disk cache), interpreted (the same units as plain Python:
            the same telemetry, no compiler, slower per cycle), or auto:
            compiled when every unit is cached, else the quicker of the two,
            said on stderr. Default: ``ATTSIM_BACKEND``, else auto. The
            result's ``meta["backend"]`` and ``meta["compile_s"]`` say what
            ran; ``meta["wall_s"]`` excludes compiling.

        Raises
        ------
        AttsimError
            The error that stopped the run (a component's, a controller's,
            the plant's :class:`~attsim.errors.DivergenceError`), as it was
            raised; the telemetry up to then is on disk, marked partial.
        """
        run = MissionRun(self, realtime_factor, progress, compiled, in_memory, backend)
        try:
            run.start()
            while run.step():
                pass
        except BaseException as exc:
            run.abort(exc)  # marks the run partial, keeps its telemetry, raises the error as it was raised
        finally:
            run.close()
        return run.finish()
