"""Running a mission's periodic work compiled (layer 6): banks from components, a SimPy process around the loop.

:func:`compiled_form` decides whether a mission can run compiled — every
component is a built-in whose compiled form exists — and fills the banks of
:mod:`attsim.mission_loop` from the components once, at the start of the
run. :func:`run_compiled` is then the mission's only SimPy process: it calls
the compiled loop, hands its rows and events to the recorder, refills the
sensors' random draws from their own generators (the same draws, in the same
order, as the Python path takes), and raises the errors the Python path
raises, at the same times.
"""

from __future__ import annotations

import time
from typing import NamedTuple

import numpy as np

from . import banks as ml
from . import loop as loops
from ..actuators.devices import CommandSchedule, Magnetorquer, ReactionWheel, TorqueSchedule
from .component import At
from ..control.laws import BDot, MagneticPD, MomentumUnloading, QuaternionPD
from ..estimation.mekf import MEKF
from ..control.modes import POINTING_BELOW, ModeManager
from ..errors import ControllerError, DivergenceError, GimbalLockError
from ..guidance.kernels import PARAMETER_LENGTH
from ..control.knowledge import reads_truth
from ..estimation.kernels import MEASUREMENTS, MEMORY_SIZE, PARAMETERS
from ..control.numba_law import MAX_READING_WIDTH, NumbaController
from .plant import advance_template
from ..sensors.loop import SENSOR_KINDS, fault_event, hand_back_sensors, sensor_bank
from ..sensors.faults import fault_schedule
from ..sensors.devices import SunSensor
from .._core.timegrid import grid_time

__all__ = ["CompiledMission", "compiled_form", "run_compiled"]

ROWS_BLOCK = 4096  # telemetry rows per hand-over at most
EVENTS_BLOCK = 1024
HANDOVER_WALL_S = 0.25  # wall time between hand-overs of rows to the recorder, at most (about)
_SENSOR_KINDS = SENSOR_KINDS
# the other built-ins with a compiled form (schedules and sun sensors have conditions, see _compilable)
_OTHER_KINDS = (QuaternionPD, BDot, MagneticPD, MomentumUnloading, ReactionWheel, Magnetorquer, TorqueSchedule, MEKF,
                ModeManager)


class CompiledMission(NamedTuple):
    """The banks of one run and the names that turn their rows back into events."""

    sensors: ml.SensorBank
    estimators: ml.EstimatorBank
    modes: ml.ModeBank
    controllers: ml.ControllerBank
    magnetorquers: ml.MagnetorquerBank
    schedules: ml.ScheduleBank
    playback: ml.PlaybackBank
    telemetry: ml.Telemetry
    buffers: ml.Buffers
    sensor_objects: list
    magnetorquer_names: list
    schedule_names: list
    playback_objects: list
    controller_objects: list
    estimator_objects: list
    mode_manager: object


def _compilable(component, mission) -> bool:
    kind = type(component)
    if kind is SunSensor:  # only the environment's Sun and shadow are tabulated for the loop
        return component.sun_inertial is None and component.eclipse is None and mission.environment is not None
    if kind is CommandSchedule:  # playback to a wheel or a set of magnetorquers (not to a thruster)
        target = next((c for c in mission.components if c.name == component.actuator_name), None)
        return type(target) in (ReactionWheel, Magnetorquer)
    return kind in _SENSOR_KINDS or kind in _OTHER_KINDS


def compiled_form(mission) -> bool:
    """True when every component of ``mission`` has a compiled form (built-in types, not subclasses).

    A :class:`~attsim.numba_controller.NumbaController` counts; the loop can
    hold one user law, so all of them must share one function.
    """
    laws = {c.decide_function for c in mission.components if type(c) is NumbaController}
    return len(laws) <= 1 and all(_compilable(c, mission) or type(c) is NumbaController for c in mission.components)


def _estimator_bank(estimators, sensor_row) -> ml.EstimatorBank:
    n = len(estimators)
    bank = ml.EstimatorBank(
        period_s=np.array([e.period_s for e in estimators], dtype=float),
        phase_s=np.array([e.phase_s for e in estimators], dtype=float), next_k=np.zeros(n, dtype=np.int64),
        gyro=np.array([sensor_row[e.gyro.name] for e in estimators], dtype=np.int64),
        meas=np.full((n, 3), -1, dtype=np.int64), every=np.ones((n, 3), dtype=np.int64),
        offset=np.zeros((n, 3), dtype=np.int64), parameters=np.zeros((n, len(PARAMETERS))), q=np.zeros((n, 4)),
        bias=np.zeros((n, 3)), P=np.zeros((n, 6, 6)), memory=np.zeros((n, MEMORY_SIZE)), nis=np.full((n, 3), np.nan),
        w_est=np.full((n, 3), np.nan))
    for e, estimator in enumerate(estimators):  # the state as start() left it: the same start as the Python path
        for i, (sensor, (every, offset)) in enumerate(zip(estimator.measurement_sensors, estimator.grid)):
            if sensor is not None:
                bank.meas[e, i], bank.every[e, i], bank.offset[e, i] = sensor_row[sensor.name], every, offset
        bank.parameters[e], bank.q[e], bank.bias[e] = estimator.parameters, estimator.q, estimator.bias_rad_s
        bank.P[e], bank.memory[e] = estimator.P, estimator.memory
    return bank


def _mode_bank(manager, controllers, estimators) -> ml.ModeBank:
    """The manager's bank as its start() left it (none: a bank with no rows, which the loop never checks)."""
    if manager is None:
        return ml.ModeBank(np.zeros(0), np.zeros(0), np.zeros(1, dtype=np.int64), np.zeros(2),
                           np.zeros((0, len(controllers))), np.zeros(len(controllers)), np.zeros(0, dtype=np.int64),
                           np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros((0, 2)),
                           np.zeros(0, dtype=np.int64), np.zeros(0))
    names = manager.mode_names
    members = np.array([[1.0 if c in mode.controllers else 0.0 for c in controllers] for mode in manager.modes])
    transitions = manager.transitions
    return ml.ModeBank(
        period_s=np.array([manager.period_s]), phase_s=np.array([manager.phase_s]), next_k=np.zeros(1, dtype=np.int64),
        state=np.array([float(manager.current), manager.entered_s]), members=members.reshape(len(names), -1),
        managed=np.array([1.0 if c in manager.managed else 0.0 for c in controllers]),
        tr_from=np.array([-1 if t.source == "*" else names.index(t.source) for t in transitions], dtype=np.int64),
        tr_to=np.array([names.index(t.target) for t in transitions], dtype=np.int64),
        tr_kind=np.array([t.condition.kind for t in transitions], dtype=np.int64),
        tr_params=np.array([(t.condition.value, t.condition.dwell_s) for t in transitions], dtype=float).reshape(-1, 2),
        tr_source=np.array([_condition_source(t.condition, controllers, estimators) for t in transitions],
                           dtype=np.int64),
        since=np.full(len(transitions), np.nan))


def _condition_source(condition, controllers, estimators) -> int:
    """The bank row a condition reads: the law of a pointing condition, the estimator of a rate one (-1: truth)."""
    if condition.kind == POINTING_BELOW:
        return controllers.index(condition.source)
    return -1 if reads_truth(condition.source) else estimators.index(condition.source)


def _controller_bank(controllers, sensor_row, wheel_row, mtq_row, n_wheels, estimators) -> ml.ControllerBank:
    n = len(controllers)
    width = max([len(c.sensors) for c in controllers] + [1])
    users = [c for c in controllers if isinstance(c, NumbaController)]
    n_par = max([c.parameters.size for c in users] + [1])
    n_mem = max([c.memory_size for c in users] + [1])
    n_out = max([c._width for c in users] + [1])
    bank = ml.ControllerBank(
        kind=np.zeros(n, dtype=np.int64), period_s=np.array([c.period_s for c in controllers], dtype=float),
        phase_s=np.array([c.phase_s for c in controllers], dtype=float), next_k=np.zeros(n, dtype=np.int64),
        parameters=np.zeros((n, 10)), memory=np.zeros((n, 4)), roles=np.full((n, 3), -1, dtype=np.int64),
        samples=np.full((n, width), -1, dtype=np.int64), drives_wheel=np.zeros((n, max(n_wheels, 1))),
        allocation=np.zeros((n, max(n_wheels, 1), 3)), magnetorquer=np.full(n, -1, dtype=np.int64),
        wheel_order=np.full((n, max(n_wheels, 1)), -1, dtype=np.int64), user_sizes=np.zeros((n, 4), dtype=np.int64),
        user_parameters=np.zeros((n, n_par)), user_memory=np.zeros((n, n_mem)),
        user_readings=np.zeros((n, width, MAX_READING_WIDTH)), user_commands=np.zeros((n, n_out)),
        target_kind=np.zeros(n, dtype=np.int64), target=np.zeros((n, PARAMETER_LENGTH)),
        sources=np.full((n, 2), -1, dtype=np.int64), null_projector=np.zeros((n, max(n_wheels, 1), max(n_wheels, 1))),
        active=np.array([1.0 if c.active else 0.0 for c in controllers]),
        wheel_scratch=np.zeros((n, 4, max(n_wheels, 1))))
    for c, law in enumerate(controllers):
        for i, sensor in enumerate(law.sensors):
            bank.samples[c, i] = sensor_row[sensor.name]
        p = bank.parameters[c]
        if isinstance(law, NumbaController):
            bank.kind[c] = ml.USER
            bank.user_sizes[c] = law.parameters.size, law.memory_size, max(len(law.sensors), 1), law._width
            bank.user_parameters[c, : law.parameters.size] = law.parameters
            roles = (None, None, None)
            if law._width == 3 and law._outputs[0] in mtq_row:
                bank.magnetorquer[c] = mtq_row[law._outputs[0]]
            else:
                bank.wheel_order[c, : len(law._outputs)] = [wheel_row[name] for name in law._outputs]
        elif isinstance(law, QuaternionPD):
            p[0], p[1], p[4], p[5] = law.ki, law.integral_limit_rad_s or 0.0, law.kp, law.kd
            bank.target_kind[c], bank.target[c] = law.pointing.kind, law.pointing.parameters
            roles = (law._attitude, law._rate, law._mag)
            if law._wheels:
                bank.kind[c] = ml.QPD_WHEELS
                # the loop's null-space step runs only where the Python path's does (a redundant array, a gain)
                p[6] = law.null_space_gain_Nm_s if law._manages_null_space else 0.0
                rows = [wheel_row[wheel.name] for wheel in law._wheels]
                bank.wheel_scratch[c, 3, rows] = law._speed_target  # the null space's speed targets, per wheel
                for j, row in zip(rows, law._allocation):
                    bank.drives_wheel[c, j] = 1.0
                    bank.allocation[c, j] = row
                bank.wheel_order[c, : len(rows)] = rows  # commanded (and logged) in the controller's order
                bank.null_projector[c][np.ix_(rows, rows)] = law._projector
            else:
                bank.kind[c] = ml.QPD_MAGNETORQUER
                bank.magnetorquer[c] = mtq_row[law._mtq]
                p[7:10] = law.compensation
        elif isinstance(law, MomentumUnloading):
            bank.kind[c] = ml.UNLOAD
            p[6] = law.gain_per_s
            roles = (None, None, law._mag)
            bank.magnetorquer[c] = mtq_row[law._mtq]
        elif isinstance(law, MagneticPD):
            bank.kind[c] = ml.MAGNETIC_PD
            bank.target_kind[c], bank.target[c] = law.pointing.kind, law.pointing.parameters
            p[4], p[5], p[7:10] = law.kp, law.kd, law.compensation
            roles = (law._attitude, law._rate, law._mag)
            bank.magnetorquer[c] = mtq_row[law._mtq]
        else:
            bank.kind[c] = ml.BDOT_RATE if law.form == "rate" else ml.BDOT_DIRECTION
            p[6] = law.gain_used
            roles = (None, None, law._mag)
            bank.magnetorquer[c] = mtq_row[law._mtq]
        sources = [r if isinstance(r, MEKF) else None for r in roles[:2]]
        bank.sources[c] = [-1 if r is None else estimators.index(r) for r in sources]
        bank.roles[c] = [-1 if name is None or isinstance(name, MEKF) else sensor_row[name] for name in roles]
    return bank


def _schedule_bank(schedules, duration_s: float) -> ml.ScheduleBank:
    changes = [sorted({t for t0, t1, _ in s.segments for t in (t0, t1) if t <= duration_s}) for s in schedules]
    width = max([len(c) for c in changes] + [1])
    times = np.full((len(schedules), width), np.inf)
    torque = np.zeros((len(schedules), width, 3))
    for k, (schedule, moments) in enumerate(zip(schedules, changes)):
        if moments:  # a schedule whose segments all lie after the end has none
            times[k, :len(moments)] = moments
            torque[k, :len(moments)] = [schedule.torque_at(t) for t in moments]  # the Python path's own sums
    return ml.ScheduleBank(times, torque, np.array([len(c) for c in changes], dtype=np.int64),
                           np.zeros(len(schedules), dtype=np.int64), np.zeros((len(schedules), 3)))


def _playback_bank(playbacks, wheel_row, mtq_row, duration_s: float) -> ml.PlaybackBank:
    n = len(playbacks)
    due = [[(t, value) for t, value in p.commands if t <= duration_s] for p in playbacks]  # later ones never come
    width = max([len(d) for d in due] + [1])
    times, values = np.full((n, width), np.inf), np.zeros((n, width, 3))
    target, index = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)
    for k, playback in enumerate(playbacks):
        on_wheel = playback.actuator_name in wheel_row
        target[k] = ml.PLAYBACK_WHEEL if on_wheel else ml.PLAYBACK_MAGNETORQUER
        index[k] = wheel_row[playback.actuator_name] if on_wheel else mtq_row[playback.actuator_name]
        for j, (t, value) in enumerate(due[k]):
            times[k, j] = t
            if on_wheel:
                values[k, j, 0] = float(value)
            else:
                values[k, j] = np.asarray(value, dtype=float)
    return ml.PlaybackBank(times, values, np.array([len(d) for d in due], dtype=np.int64),
                           np.zeros(n, dtype=np.int64), target, index)


def _most_at_once(commands) -> int:
    from collections import Counter

    return max(Counter(t for t, _ in commands).values(), default=0)


def build(mission, sc, width: int) -> CompiledMission:
    """The banks of ``mission`` at ``t = 0``, after its components were prepared and started on ``sc``."""
    sensors = [c for c in mission.components if type(c) in _SENSOR_KINDS]
    controllers = [c for c in mission.components
                   if type(c) in (QuaternionPD, BDot, MagneticPD, MomentumUnloading, NumbaController)]
    magnetorquers = [c for c in mission.components if type(c) is Magnetorquer]
    schedules = [c for c in mission.components if type(c) is TorqueSchedule]
    playbacks = [c for c in mission.components if type(c) is CommandSchedule]
    sensor_row = {s.name: k for k, s in enumerate(sensors)}
    mtq_row = {m.name: k for k, m in enumerate(magnetorquers)}
    wheel_row = {name: k for k, name in enumerate(sc.wheel_names)}
    estimators = [c for c in mission.components if type(c) is MEKF]
    manager = next((c for c in mission.components if type(c) is ModeManager), None)
    layout = []
    for component in mission.components:
        if type(component) in _SENSOR_KINDS:
            layout.append((ml.ROW_SENSOR, sensor_row[component.name]))
        elif type(component) is TorqueSchedule:
            layout.append((ml.ROW_SCHEDULE, schedules.index(component)))
        elif type(component) is Magnetorquer:
            layout.append((ml.ROW_MAGNETORQUER, mtq_row[component.name]))
        elif type(component) is ReactionWheel:
            layout.append((ml.ROW_WHEEL, wheel_row[component.name]))
        elif type(component) is MEKF:
            layout.append((ml.ROW_ESTIMATOR, estimators.index(component)))
        elif type(component) is ModeManager:
            layout.append((ml.ROW_MODE, 0))
        elif getattr(component, "writes_pointing", False):
            layout.append((ml.ROW_POINTING, controllers.index(component)))
    m = len(magnetorquers)
    n_wheels = len(sc.wheel_names)
    # the most events one instant can log: every schedule switch, every playback command with the saturation changes
    # it causes, every controller's commands' saturation changes, every wheel reaching its speed limit
    fault_times = [(t, None) for t, _, _, _ in fault_schedule(sensors, mission.duration_s)]
    per_instant = (len(schedules) + sum(3 * _most_at_once(p.commands) for p in playbacks) + _most_at_once(fault_times)
                   + len(controllers) * (2 * n_wheels + 1) + n_wheels + 3 * len(estimators) + 1
                   + (len(controllers) * (2 * n_wheels + 1) + 1 if manager is not None else 0))
    return CompiledMission(
        sensors=sensor_bank(sensors, mission.duration_s), estimators=_estimator_bank(estimators, sensor_row),
        modes=_mode_bank(manager, controllers, estimators),
        controllers=_controller_bank(controllers, sensor_row, wheel_row, mtq_row, len(sc.wheel_names), estimators),
        magnetorquers=ml.MagnetorquerBank(np.array([q.dipole_max_Am2 for q in magnetorquers]).reshape(m, 3),
                                          np.array([1.0 if q.saturation == "scale" else 0.0 for q in magnetorquers]),
                                          np.zeros((m, 3)), np.zeros(m)),
        schedules=_schedule_bank(schedules, mission.duration_s),
        playback=_playback_bank(playbacks, wheel_row, mtq_row, mission.duration_s),
        telemetry=ml.Telemetry(mission.telemetry_dt_s, mission.duration_s, np.zeros(1, dtype=np.int64),
                               np.array(layout, dtype=np.int64).reshape(-1, 2),
                               1.0 if mission.environment is not None else 0.0),
        buffers=ml.Buffers(np.empty((ROWS_BLOCK, width)), np.empty((max(EVENTS_BLOCK, 4 * per_instant), 8)),
                           np.zeros(2, dtype=np.int64), np.empty((max(len(sc.wheel_names), 1), 3)), per_instant),
        sensor_objects=sensors, magnetorquer_names=[q.name for q in magnetorquers],
        schedule_names=[s.name for s in schedules], playback_objects=playbacks, controller_objects=controllers,
        estimator_objects=estimators, mode_manager=manager)


def _law_error(form: CompiledMission, law, exc: Exception) -> Exception:
    """The error a user's law caused in the loop, named as the Python path names it."""
    from ..control.numba_law import _plain

    if law is None:
        return exc
    c = form.controller_objects.index(law)
    if form.controllers.next_k[c] == 0 and "Typing" in type(exc).__name__:
        return ControllerError(f"controller {law.name!r}: its law does not compile as decide(t_s, readings, "
                               f"parameters, memory, commands): {_plain(exc)}")
    t = grid_time(law.phase_s, int(form.controllers.next_k[c]), law.period_s)  # the cycle that was running
    return ControllerError(f"controller {law.name!r} raised at t = {t:.6g} s: {_plain(exc)}")


def _refill(bank: ml.SensorBank, sensors) -> None:
    for s, sensor in enumerate(sensors):
        used = int(bank.cursor[s])
        if used and sensor.draws:
            keep = bank.normals.shape[1] - used
            bank.normals[s, :keep] = bank.normals[s, used:]
            bank.normals[s, keep:] = sensor.rng.standard_normal(used)
            bank.cursor[s] = 0


def _flush(form: CompiledMission, sc, recorder) -> None:
    rows, events, counts = form.buffers.rows, form.buffers.events, form.buffers.counts
    for e in events[: counts[1]]:
        t, kind, what, index = float(e[0]), int(e[1]), int(e[2]), int(e[3])
        if kind == ml.EVENT_PLAYBACK:  # the Python path logs the command as given, before the actuator acts
            playback = form.playback_objects[index]
            value = playback.commands[int(e[7])][1]
            recorder.event(t, "command", actuator=playback.actuator_name,
                           command=np.asarray(value, dtype=float).tolist())
            continue
        if kind == ml.EVENT_MODE:
            manager = form.mode_manager
            recorder.event(t, "mode", manager=manager.name, before=manager.mode_names[index],
                           after=manager.mode_names[what], reason=manager.transitions[int(e[4])].condition.describe())
            continue
        if kind == ml.EVENT_OUTLIER:
            recorder.event(t, "outlier", estimator=form.estimator_objects[index].name, measurement=MEASUREMENTS[what],
                           nis=float(e[4]))
            continue
        if kind == ml.EVENT_FAULT:
            fault_event(recorder, t, form.sensor_objects[index], what, e[4])
            continue
        if kind == ml.EVENT_COMMAND:
            recorder.event(t, "command", actuator=form.schedule_names[index], torque_Nm=[float(v) for v in e[4:7]])
            continue
        label = "saturation" if kind == ml.EVENT_SATURATION else "saturation_end"
        if what == ml.WHAT_DIPOLE:
            recorder.event(t, label, actuator=form.magnetorquer_names[index], what="dipole",
                           requested=[float(v) for v in e[4:7]])
        elif what == ml.WHAT_TORQUE:
            recorder.event(t, label, actuator=sc.wheel_names[index], what="torque", requested=float(e[4]))
        else:
            recorder.event(t, label, actuator=sc.wheel_names[index], what="speed", speed_rad_s=float(e[4]))
    if counts[0]:
        recorder.append_rows(rows[: counts[0]])
    counts[:] = 0


def _hand_back(form: CompiledMission, sc, state) -> tuple:
    """Give the plant object the loop's state and held commands (at the end, or before an error is raised)."""
    q, w = sc._output(state, sc._J, sc._params)
    sc._q_w = (q, w)
    sc._tau_ext = tuple(float(v) for v in form.schedules.current_Nm.sum(axis=0))
    sc._commanded_dipole = tuple(float(v) for v in form.magnetorquers.dipole_Am2.sum(axis=0))
    return q, w


def run_compiled(env, mission, sc, recorder, on_row=None):
    """The SimPy process of a compiled mission: the loop up to each hand-over, then the recorder's share."""
    from ..integrators import REGISTRY

    integrator = REGISTRY[mission.method]
    law = next((c for c in mission.components if type(c) is NumbaController), None)
    tag = "nouser" if law is None else f"user_{law.digest}"
    user_cycle = loops.bind_user_law(loops.no_user_decide if law is None else law.law, tag)
    # the wheels are registered by now: their model (friction, imbalance or none) picks the plant's variant
    loop = advance_template(integrator, sc.wheels, loops.mission_loop, tag=tag, user_cycle=user_cycle)
    form = build(mission, sc, 1 + len(recorder.columns))
    t_now = 0.0
    inputs = sc.inputs()
    # Rows reach the recorder every chunk_s of simulated time at least, and every HANDOVER_WALL_S of wall time: a
    # slow loop (a tiny max_step) would otherwise hold many wall seconds of rows where a kill loses them. The
    # first call does the instant t = 0 only; each next call spans what the last one's pace covers in
    # HANDOVER_WALL_S (every call does at least one instant, see mission_loop).
    longest = max(recorder.chunk_s, mission.telemetry_dt_s)
    span = 0.0
    while True:
        horizon = t_now + span
        wall0, t0 = time.monotonic(), t_now
        try:
            state, t_now, reason, t_from = loop(sc._state, t_now, horizon, mission.max_step_s, inputs, sc.wheels,
                                                form.sensors, form.estimators, form.modes, form.controllers,
                                                form.magnetorquers,
                                                form.schedules, form.playback, form.telemetry, sc._J, sc._Jinv,
                                                sc._params, form.buffers)
        except Exception as exc:  # a user's law raised, or does not compile with the documented signature
            _flush(form, sc, recorder)  # what the loop had produced before is kept
            _hand_back(form, sc, sc._state)
            raise _law_error(form, law, exc) from exc
        sc._state, sc.t_plant_s = state, t_now  # the loop rebuilds its inputs from the banks on entry
        _flush(form, sc, recorder)
        wall = time.monotonic() - wall0
        if wall >= HANDOVER_WALL_S / 5:  # a slow call: its rows go to disk now, not after the flusher's second
            recorder.flush()
        span = longest if wall <= 0.0 else min(longest, (t_now - t0) * HANDOVER_WALL_S / wall)
        if on_row is not None:
            on_row(t_now)
        if t_now > env.now:
            yield At(env, t_now)
        if reason == ml.DONE:
            break
        if reason != ml.REFILL and reason != ml.ROWS_FULL and reason != ml.EVENTS_FULL:
            q, w = _hand_back(form, sc, state)  # an error follows: the plant as the Python path would leave it
        if reason == ml.REFILL:
            _refill(form.sensors, form.sensor_objects)
        elif reason == ml.GIMBAL_LOCK:
            from math import degrees

            from ..rotations import quat_to_euler321

            raise GimbalLockError(t_now, degrees(float(quat_to_euler321(np.array(q))[1])), degrees(sc._params[0]))
        elif reason == ml.USER_FAULT:
            controller = form.controller_objects[int(t_from)]
            controller.apply_commands(t_now, form.controllers.user_commands[int(t_from)].copy())  # raises, naming it
            raise ControllerError(f"controller {controller.name!r} at t = {t_now:.6g} s wrote an invalid command")
        elif reason == ml.ESTIMATOR_FAULT:
            raise form.estimator_objects[int(t_from)].diverged(t_now)
        elif reason == ml.DIVERGED:
            from .plant import _check_state

            _check_state(q, w, t_from, t_now, mission.max_step_s)  # raises DivergenceError saying what failed
            raise DivergenceError(t_now, "the state failed its check", t_from, mission.max_step_s)
    _hand_back(form, sc, state)
    for c, controller in enumerate(form.controller_objects):
        if isinstance(controller, NumbaController):
            controller.memory[:] = form.controllers.user_memory[c, : controller.memory_size]
        elif isinstance(controller, QuaternionPD) and controller.ki > 0.0:
            controller._integral = tuple(float(v) for v in form.controllers.memory[c, :3])
    if form.mode_manager is not None:  # the objects end as the Python path leaves them
        form.mode_manager.current, form.mode_manager.entered_s = int(form.modes.state[0]), float(form.modes.state[1])
    for e, estimator in enumerate(form.estimator_objects):
        estimator.q[:], estimator.bias_rad_s[:], estimator.P[:] = form.estimators.q[e], form.estimators.bias[e], \
            form.estimators.P[e]
        estimator.memory[:], estimator.nis[:], estimator.w_est[:] = form.estimators.memory[e], form.estimators.nis[e], \
            form.estimators.w_est[e]
    hand_back_sensors(form.sensors, form.sensor_objects)
