"""One run of a mission: set up, stepped, finished — as SimPy's ``run()`` is over its ``step()``.

:class:`MissionRun` checks the mission, chooses how it runs — the compiled
loop (:mod:`attsim.engine.compiled`) when every component has a compiled
form, the components' own SimPy processes otherwise — and on which backend
(compiled or interpreted, :mod:`attsim.engine.choice`), opens the run
directory, and then advances the SimPy environment one event per
:meth:`~MissionRun.step`. :meth:`~attsim.engine.mission.Mission.run` is the
loop over it. The time spent compiling units is kept apart: the recorded
wall time and real-time factor are the run's own, the compile time is
``meta["compile_s"]``.
"""

from __future__ import annotations

import time

import simpy
import simpy.rt
from simpy.core import NORMAL

from .._core.timegrid import grid_time
from .._core.validate import boolean, positive_scalar
from ..control import knowledge
from ..environment.table import EnvironmentTable, field_table
from ..environment.torques import DISTURBANCE_NAMES
from ..errors import AttsimError, DivergenceError, EstimatorDivergenceError, InputError, add_note
from ..telemetry.memory import MemoryRecorder
from ..telemetry.recorder import Recorder, Telemetry, load
from ..telemetry.schema import QUATERNION_COLUMNS, RATE_COLUMNS
from .backend import advance_needs, loop_needs
from .build import build_world, compiled_form
from .choice import choose_backend
from .compiled import run_compiled
from .component import At
from .spacecraft import Spacecraft
from .settings import MAX_STEPS

__all__ = ["MissionRun", "RECORD_PRIORITY", "END_PRIORITY", "ENVIRONMENT_COLUMNS"]

# SimPy serves events at one time by priority (lower first); samples, decisions
# and commands run at NORMAL (1), so a row recorded after them sees them all.
RECORD_PRIORITY = NORMAL + 1
END_PRIORITY = NORMAL + 2
# the most integration sub-steps and periodic cycles (each ~1 us compiled: hours) and telemetry rows (tens of GB) a
# mission may ask for
ENVIRONMENT_COLUMNS = ["B_I_x", "B_I_y", "B_I_z", "lit"] + [f"tau_{d}_{a}" for d in DISTURBANCE_NAMES for a in "xyz"]


def original_error(exc: BaseException) -> BaseException:
    """The exception a component raised, not SimPy's copy of it.

    SimPy re-raises a failed process's exception as ``type(exc)(*exc.args)``
    with the original as ``__cause__``; the original carries the traceback
    into the component and any attributes set after construction.
    """
    cause = exc.__cause__
    if isinstance(cause, AttsimError) and type(cause) is type(exc):
        return cause
    return exc


class MissionRun:
    """A mission being run. ``start()``, then ``step()`` until it returns False, then ``finish()`` (or
    ``abort(exc)`` on an error); :meth:`attsim.engine.mission.Mission.run` does exactly that."""

    def __init__(self, mission, realtime_factor: float | None = None, progress: bool = False,
                 compiled: bool | None = None, in_memory: bool = False, backend: str | None = None):
        self.mission = mission
        self.progress = boolean(progress, "progress")
        self.in_memory = boolean(in_memory, "in_memory")
        self.realtime_factor = None if realtime_factor is None else positive_scalar(realtime_factor,
                                                                                    "realtime_factor")
        self._check(mission)
        can_loop = compiled_form(mission) and realtime_factor is None
        if compiled is not None and boolean(compiled, "compiled") and not can_loop:
            raise InputError("compiled", "needs every component to be a built-in with a compiled form and no "
                             "realtime_factor", f"components: {[type(c).__name__ for c in mission.components]}")
        self.path = "loop" if (can_loop if compiled is None else compiled) else "objects"
        self.backend = choose_backend(backend, mission, self.path)
        self.env = simpy.Environment() if realtime_factor is None else \
            simpy.rt.RealtimeEnvironment(factor=1.0 / self.realtime_factor, strict=False)
        self.columns = list(QUATERNION_COLUMNS + RATE_COLUMNS) + (ENVIRONMENT_COLUMNS if mission.environment else [])
        for component in mission.components:
            self.columns += component.columns()
        # the run directory, its lock and meta.json exist before the long set-up, so a kill there leaves a run
        self.recorder = MemoryRecorder(meta=mission.meta(), rows=int(mission.duration_s / mission.telemetry_dt_s) + 2) \
            if self.in_memory else Recorder(mission.out_dir, meta=mission.meta(), row_dt_s=mission.telemetry_dt_s,
                                            chunk_s=mission.telemetry_chunk_s)
        self.sc = None
        self.done = False
        self.lag_s = 0.0
        self._last_row_t_s = None
        self._bar = None

    @staticmethod
    def _check(mission) -> None:
        """Each component checked against the mission, and what each kind checks of the mission as a whole."""
        for component in mission.components:
            try:
                component.prepare(mission)
            except AttsimError as exc:  # raised here, far from the script: say where the component was added
                if mission.added_at(component.name):
                    add_note(exc, f"{component.name!r} was added at {mission.added_at(component.name)}")
                raise
            period = getattr(component, "period_s", None)
            if period is not None and mission.duration_s / period > MAX_STEPS:
                raise InputError(f"{component.name}.rate", f"gives more than {MAX_STEPS:.0e} cycles over the duration",
                                 f"duration {mission.duration_s:g} s / period {period:g} s")
        checks = []
        for component in mission.components:  # each kind's checks of the mission as a whole, once
            check = getattr(type(component), "check_mission", None)
            if check is not None and check not in checks:
                checks.append(check)
        for check in checks:
            check(mission)
        knowledge.warn_ideal(mission.components)

    def start(self) -> None:
        """Tabulate the environment, start the recorder, the plant and the components, and the run's processes."""
        mission, env = self.mission, self.env
        if self.progress:
            from tqdm import tqdm

            self._bar = tqdm(total=mission.duration_s, delay=2.0, unit="s", unit_scale=True, desc=mission.name,
                             leave=False, bar_format="{desc}: {percentage:3.0f}%|{bar}| {n:.0f}/{total:.0f} s "
                                                     "simulated, x{rate_fmt} real time")
        self.wall_start = time.perf_counter()
        table = EnvironmentTable(*mission.environment.table(mission.duration_s)) if mission.environment is not None \
            else field_table(mission.field_spec, mission.duration_s, mission.field_dt_s)
        self.recorder.start(self.columns)
        self.sc = Spacecraft(mission, env, self.recorder, table, self.backend)
        for component in mission.components:
            component.start(self.sc)
        if self.path == "loop":
            self._last_row_t_s = float("inf")  # the loop writes every row; none to add on an error
            env.process(run_compiled(env, mission, self.sc, self.recorder, self.backend, self._on_row))
        else:
            env.process(self._recorder_process())
            for component in mission.components:
                for process in component.processes(env, self.sc):
                    env.process(process)
        end = At(env, mission.duration_s, END_PRIORITY)
        end.callbacks.append(self._end)

    def needs(self) -> list:
        """The units this run needs (after :meth:`start`): its kinds', the loop's, or the Python path's advance."""
        if self.path == "loop":
            world, _, needed = build_world(self.mission, self.sc, 1 + len(self.recorder.columns))
            return loop_needs(world, needed)
        return advance_needs(self.sc._integrator, self.sc.plant_world())

    def _end(self, event) -> None:
        self.done = True

    def _on_row(self, t_s: float) -> None:
        if self._bar is not None:
            self._bar.update(t_s - self._bar.n)

    def step(self) -> bool:
        """Process the next event; False once the run has reached its end."""
        if self.done:
            return False
        try:
            self.env.step()
        except simpy.core.EmptySchedule:
            self.done = True
        return not self.done

    def compile_s(self) -> float:
        """Seconds this run spent compiling units (none when every unit was on disk)."""
        return self.backend.compile_s()

    def finish(self) -> Telemetry:
        """Close the run: the wall time and real-time factor without compilation, the compile time apart."""
        compile_s = self.compile_s()
        wall_s = time.perf_counter() - self.wall_start - compile_s
        meta_end = {"wall_s": wall_s, "compile_s": compile_s, "path": self.path, "backend": self.backend.name,
                    "realtime_factor_achieved": self.mission.duration_s / wall_s if wall_s > 0 else None}
        if self.realtime_factor is not None:
            meta_end["realtime_max_lag_s"] = self.lag_s
        self.recorder.close(**meta_end)
        return self.recorder.telemetry() if self.in_memory else load(self.mission.out_dir)

    def abort(self, exc: BaseException):
        """Keep the row at the time the run stopped (when the state there is sound), mark the run partial with the
        reason, and raise the error as the component raised it."""
        original = original_error(exc)
        t_s = self.env.now
        if self.sc is not None and not isinstance(original, (DivergenceError, EstimatorDivergenceError)):
            self._record_last_row(t_s)
        wall_start = getattr(self, "wall_start", time.perf_counter())
        compile_s = self.compile_s()
        self.recorder.abort(f"{type(original).__name__}: {original}",
                            wall_s=max(time.perf_counter() - wall_start - compile_s, 0.0), t_stop_s=t_s,
                            compile_s=compile_s, path=self.path, backend=self.backend.name)
        if original is not exc:  # its own cause kept (a law's exception under the controller's error), not SimPy's
            raise original.with_traceback(original.__traceback__) from original.__cause__
        raise exc

    def close(self) -> None:
        """Release what the run holds (the backend's pinned copies, the progress bar), whatever happened."""
        self.backend.close()
        if self._bar is not None:
            self._bar.close()

    # --- the Python path's telemetry rows ---------------------------------------------------------------------

    def _record(self, t_s: float) -> None:
        sc, mission = self.sc, self.mission
        sc.advance_to(t_s)
        q, w = sc._q_w
        row = [q[0], q[1], q[2], q[3], w[0], w[1], w[2]]
        if mission.environment is not None:
            e = sc.environment_now()
            row += [*e["B_I"], 1.0 if e["srp_pressure"] > 0 else 0.0]
            for torque in sc.disturbance_torques():
                row += list(torque)
        for component in mission.components:
            row += component.values(sc)
        self.recorder.append(t_s, row)
        self._last_row_t_s = t_s

    def _record_last_row(self, t_s: float) -> None:
        """On an error, the row at the time the run stopped, when the state there is sound and not yet recorded."""
        if self._last_row_t_s is not None and self._last_row_t_s >= t_s:
            return
        try:
            self._record(t_s)
        except Exception:  # noqa: BLE001 - the original error is what the caller must see
            pass

    def _recorder_process(self):
        """Rows at ``k telemetry_dt`` and at ``duration``, each after everything else due at its time."""
        mission, env = self.mission, self.env
        k = 0
        while True:
            t_next = min(grid_time(0.0, k, mission.telemetry_dt_s), mission.duration_s)
            yield At(env, t_next, RECORD_PRIORITY)
            self._record(env.now)
            self._on_row(env.now)
            if self.realtime_factor is not None:
                behind = (time.perf_counter() - self.wall_start) - env.now / self.realtime_factor
                self.lag_s = max(self.lag_s, behind)
            if t_next >= mission.duration_s:
                return
            k += 1
