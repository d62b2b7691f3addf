"""The compiled mission loop (layer 6): a mission's periodic work and its plant in one numba loop.

When every component of a mission has a compiled form, the engine hands
the whole periodic part of the run to :func:`mission_loop`: the plant
between events, sensor samples, control cycles (sense → decide → command),
torque-schedule switches, wheel speed stops and telemetry rows, in the
same order and with the same kernels as the Python components
(:mod:`attsim.sensors.kernels`, :mod:`attsim.control.kernels`,
:mod:`attsim.actuators.kernels`). Rows and events go to buffers; the loop
returns to Python (a SimPy process, :mod:`attsim.engine.compiled`) when a
buffer fills, a sensor needs more random draws, the run ends or fails.

Order at one instant ``t`` (as in the Python path): the plant reaches
``t``; schedules switch; free-running sensors sample; controllers sample
their sensors, decide and command; then the telemetry row at ``t``.

Everything is plain arrays in SI, grouped into named tuples (banks) whose
rows are the components; see :mod:`attsim.engine.compiled` for how a
mission's components fill them.
"""

from __future__ import annotations

import math

import numpy as np

from .._core.jit import LOOP_CALLED, LOOP_INLINED, njit
from ..control.allocation import allocate, null_space_torque, unloading_dipole
from ..actuators.kernels import SATURATION_NONE, magnetorquer_saturate, wheel_command, wheel_speed, wheels_total
from ..control.kernels import (bdot_direction, bdot_rate, body_rate_relative, dipole_for_torque, known,
                           lvlh_quaternion_tuple, orbit_rate_inertial, pd_torque, pid_torque)
from ..guidance.kernels import error_angle_deg, error_vector, rate_error
from ..environment.table import B_I, P_SRP, R, V, lerp1, lerp3, table_cell
from ..environment.torques import disturbance_torques
from .banks import (BDOT_RATE, EVENT_MODE, ROW_MODE, UNLOAD, DIVERGED, DONE, EVENTS_FULL,
                            EVENT_COMMAND, EVENT_PLAYBACK, EVENT_SATURATION, EVENT_SATURATION_END, GIMBAL_LOCK,
                            MAGNETIC_PD, PLAYBACK_WHEEL, QPD_MAGNETORQUER, QPD_WHEELS, REFILL, ROWS_FULL,
                            ROW_ESTIMATOR, ROW_MAGNETORQUER, ROW_POINTING, ROW_SCHEDULE, ROW_SENSOR, ROW_WHEEL,
                            SENSOR_AXES, TRUTH_COLUMN, VALID_COLUMN, BDOT_DIRECTION, REAL_REPORTS_VALID,
                            USER, USER_FAULT, ESTIMATOR_FAULT,
                            WHAT_DIPOLE, WHAT_SPEED, WHAT_TORQUE)
from .plant import PlantInputs
from ..actuators.wheel_dynamics import write_wheel_row
from ..guidance.pointing import reference_now
from .._core.timegrid import grid_time
from .steps import (estimate, estimator_due, estimator_sensors_ready, law_attitude, log_event, log_faults,
                            mode_check, mode_due, next_fault_boundary, sample_sensor, write_estimator)

__all__ = ["mission_loop", "no_user_decide", "bind_user_law", "user_cycle_template"]

# _core.jit: what runs every cycle or instant is inlined into the loop, the rest called; neither counts references
_JIT = dict(cache=True, nogil=True, error_model="numpy", **LOOP_INLINED)
_CALLED = dict(cache=True, nogil=True, error_model="numpy", **LOOP_CALLED)



@njit(**_JIT)
def _command_wheel(wheels, j, requested, w, t, buffers):
    _, torque_change, speed_change, speed = wheel_command(wheels, j, requested, w)
    if torque_change != SATURATION_NONE:
        log_event(buffers, t, EVENT_SATURATION if torque_change == 1 else EVENT_SATURATION_END, WHAT_TORQUE, j,
               requested, 0.0, 0.0)
    if speed_change != SATURATION_NONE:
        log_event(buffers, t, EVENT_SATURATION if speed_change == 1 else EVENT_SATURATION_END, WHAT_SPEED, j,
               speed, 0.0, 0.0)


@njit(**_JIT)
def _command_wheels(controllers, c, wheels, tau, w, t, buffers):
    """A QPD's wheel torques: null-space part, minimum-norm allocation scaled to the limits (attsim.allocation)."""
    n = wheels.axis.shape[0]
    scratch = controllers.wheel_scratch[c]
    null, motor, speeds, targets = scratch[0, :n], scratch[1, :n], scratch[2, :n], scratch[3, :n]
    p = controllers.parameters[c]
    if p[6] > 0.0:
        for j in range(n):  # targets: filled per wheel when the banks were built
            speeds[j] = wheel_speed(wheels, j, wheels.h_Nms[j], w)
        null_space_torque(controllers.null_projector[c], speeds, targets, p[6], null)
    allocate(controllers.allocation[c], tau, null, wheels.max_torque_Nm, motor)
    for i in range(controllers.wheel_order.shape[1]):  # in the controller's order, as the Python path logs them
        j = controllers.wheel_order[c, i]
        if j >= 0:
            _command_wheel(wheels, j, motor[j], w, t, buffers)


@njit(**_JIT)
def _command_dipole(magnetorquers, i, m, t, buffers):
    applied, saturated = magnetorquer_saturate(m, magnetorquers.limit_Am2[i], magnetorquers.scale[i] != 0.0)
    flag = 1.0 if saturated else 0.0
    if flag != magnetorquers.saturated[i]:
        log_event(buffers, t, EVENT_SATURATION if saturated else EVENT_SATURATION_END, WHAT_DIPOLE, i, m[0], m[1], m[2])
        magnetorquers.saturated[i] = flag
    magnetorquers.dipole_Am2[i, 0], magnetorquers.dipole_Am2[i, 1], magnetorquers.dipole_Am2[i, 2] = applied


@njit(**_JIT)
def held_inputs(inputs, t, wheels, magnetorquers, schedules):
    """The plant's inputs from ``t`` under the commands the banks hold: schedule torques, dipoles, wheel torques."""
    ext_x = ext_y = ext_z = 0.0
    for k in range(schedules.count.shape[0]):
        ext_x += schedules.current_Nm[k, 0]
        ext_y += schedules.current_Nm[k, 1]
        ext_z += schedules.current_Nm[k, 2]
    mx = my = mz = 0.0
    for i in range(magnetorquers.scale.shape[0]):
        mx += magnetorquers.dipole_Am2[i, 0]
        my += magnetorquers.dipole_Am2[i, 1]
        mz += magnetorquers.dipole_Am2[i, 2]
    tau_w, h_w = wheels_total(wheels)
    return PlantInputs(t, (ext_x, ext_y, ext_z), (mx, my, mz), tau_w, h_w, inputs.env_t, inputs.env_v, inputs.faces,
                       inputs.switches, inputs.J, inputs.residual_dipole_Am2)


@njit(**_CALLED)
def _switch_mode(modes, k, controllers, wheels, magnetorquers, t, w, buffers):
    """Transition ``k`` fires at ``t``: stop the controllers leaving (their actuators zeroed), restart the ones
    coming in (a B-dot's first cycle only samples again), log the switch (index: the mode left, what: the mode
    entered, v0: the transition)."""
    new = modes.tr_to[k]
    for c in range(controllers.kind.shape[0]):
        if modes.managed[c] == 0.0:
            continue
        running = modes.members[new, c]
        if controllers.active[c] != 0.0 and running == 0.0:
            for i in range(controllers.wheel_order.shape[1]):  # every wheel law's wheels, in its order
                if controllers.wheel_order[c, i] >= 0:
                    _command_wheel(wheels, controllers.wheel_order[c, i], 0.0, w, t, buffers)
            if controllers.magnetorquer[c] >= 0:
                _command_dipole(magnetorquers, controllers.magnetorquer[c], (0.0, 0.0, 0.0), t, buffers)
        if running != 0.0 and controllers.active[c] == 0.0:  # a B-dot samples afresh, a QPD's integral restarts
            for i in range(4):
                controllers.memory[c, i] = 0.0
        controllers.active[c] = running
    log_event(buffers, t, EVENT_MODE, new, int(modes.state[0]), float(k), 0.0, 0.0)
    modes.state[0], modes.state[1] = new, t
    modes.since[:] = np.nan


@njit(**_JIT)
def _reading3(sensors, s, offset):
    o = sensors.output[s]
    return (o[offset], o[offset + 1], o[offset + 2])


@njit(**_JIT)
def _any_without_output(controllers, c, sensors):
    """True when a sensor controller ``c`` samples gave no output this cycle (the controller then holds)."""
    for i in range(controllers.samples.shape[1]):
        s = controllers.samples[c, i]
        if s >= 0 and sensors.output[s, VALID_COLUMN] == 0.0:
            return True
    return False


@njit(**_JIT)
def _cycle(controllers, c, sensors, estimators, wheels, magnetorquers, t, q, w, env_t, env_v, buffers):
    """One control cycle of controller ``c`` at ``t``: sample, decide, command. False: a sensor needs normals."""
    for i in range(controllers.samples.shape[1]):
        s = controllers.samples[c, i]
        if s >= 0 and not sample_sensor(sensors, s, t, q, w, env_t, env_v):
            return False
    kind = controllers.kind[c]
    if _any_without_output(controllers, c, sensors):  # decide nothing, the actuators hold (attsim.control)
        if kind == BDOT_RATE or kind == BDOT_DIRECTION:
            controllers.memory[c, 3] = 0.0  # the next good sample starts the difference afresh
        return True
    p = controllers.parameters[c]
    role_w, role_b = controllers.roles[c, 1], controllers.roles[c, 2]
    q_in = law_attitude(controllers, c, sensors, estimators, q)
    w_in = w if role_w < 0 else _reading3(sensors, role_w, 0)
    e_w = controllers.sources[c, 1]
    if e_w >= 0:
        ew = estimators.w_est[e_w]
        w_in = (ew[0], ew[1], ew[2])
    if (kind == QPD_WHEELS or kind == QPD_MAGNETORQUER or kind == MAGNETIC_PD) and not known(q_in, w_in):
        return True  # no estimate yet: the law holds its commands
    if kind == QPD_WHEELS or kind == QPD_MAGNETORQUER:
        q_ref, w_ref, _ = reference_now(controllers.target_kind[c], controllers.target[c], t, env_t, env_v)
        if p[0] > 0.0:  # integral feedback (ki, limit): memory 0-2 holds the integrated error
            mem = controllers.memory[c]
            tau, z = pid_torque(q_ref, q_in, rate_error(q_in, q_ref, w_in, w_ref), p[4], p[5], p[0],
                                (mem[0], mem[1], mem[2]), controllers.period_s[c], p[1])
            mem[0], mem[1], mem[2] = z
        else:
            tau = pd_torque(q_ref, q_in, rate_error(q_in, q_ref, w_in, w_ref), p[4], p[5])
        if kind == QPD_WHEELS:
            _command_wheels(controllers, c, wheels, tau, w, t, buffers)
        else:
            m = dipole_for_torque(_reading3(sensors, role_b, 0), tau)
            _command_dipole(magnetorquers, controllers.magnetorquer[c], (m[0] - p[7], m[1] - p[8], m[2] - p[9]), t,
                            buffers)
    elif kind == MAGNETIC_PD:
        k, f = table_cell(env_t, t)
        r, v = lerp3(env_v, k, f, R), lerp3(env_v, k, f, V)
        tau = pd_torque(lvlh_quaternion_tuple(r, v), q_in, body_rate_relative(q_in, w_in, orbit_rate_inertial(r, v)),
                        p[4], p[5])
        m = dipole_for_torque(_reading3(sensors, role_b, 0), tau)
        _command_dipole(magnetorquers, controllers.magnetorquer[c], (m[0] - p[7], m[1] - p[8], m[2] - p[9]), t,
                        buffers)
    elif kind == UNLOAD:
        _command_dipole(magnetorquers, controllers.magnetorquer[c],
                        unloading_dipole(_reading3(sensors, role_b, 0), wheels_total(wheels)[1], p[6]), t, buffers)
    else:  # B-dot: the first cycle only samples
        b = _reading3(sensors, role_b, 0)
        mem = controllers.memory[c]
        if mem[3] != 0.0:
            previous = (mem[0], mem[1], mem[2])
            if kind == BDOT_RATE:
                m = bdot_rate(b, previous, p[6], controllers.period_s[c])
            else:
                m = bdot_direction(b, previous, p[6], controllers.period_s[c])
            _command_dipole(magnetorquers, controllers.magnetorquer[c], m, t, buffers)
        mem[0], mem[1], mem[2], mem[3] = b[0], b[1], b[2], 1.0
    return True


@njit(**_JIT)
def _pointing_now(controllers):
    """The first active attitude law (a QPD or a magnetic PD, in mission order), or -1 when none runs."""
    for c in range(controllers.kind.shape[0]):
        kind = controllers.kind[c]
        if (kind == QPD_WHEELS or kind == QPD_MAGNETORQUER or kind == MAGNETIC_PD) and controllers.active[c] != 0.0:
            return c
    return -1


@njit(**_JIT)
def _write_row(telemetry, sensors, controllers, estimators, modes, schedules, magnetorquers, wheels, t, q, w, inputs,
               buffers):
    n = buffers.counts[0]
    row = buffers.rows[n]
    row[0] = t
    for i in range(4):
        row[1 + i] = q[i]
    for i in range(3):
        row[5 + i] = w[i]
    col = 8
    if telemetry.environment != 0.0:
        k, f = table_cell(inputs.env_t, t)
        b = lerp3(inputs.env_v, k, f, B_I)
        row[col], row[col + 1], row[col + 2] = b
        row[col + 3] = 1.0 if lerp1(inputs.env_v, k, f, P_SRP) > 0.0 else 0.0
        col += 4
        d = disturbance_torques(t, q, inputs.env_t, inputs.env_v, inputs.faces, inputs.switches, inputs.J,
                                inputs.residual_dipole_Am2)
        for torque in (d.gg, d.aero, d.srp, d.res):
            row[col], row[col + 1], row[col + 2] = torque
            col += 3
    for i in range(telemetry.layout.shape[0]):
        what, index = telemetry.layout[i, 0], telemetry.layout[i, 1]
        if what == ROW_SENSOR:
            axes = SENSOR_AXES[sensors.kind[index]]
            for a in range(axes):
                row[col + a] = sensors.output[index, a]
                row[col + axes + a] = sensors.output[index, TRUTH_COLUMN + a]
            col += 2 * axes
            if sensors.realism[index, REAL_REPORTS_VALID] != 0.0:
                row[col] = sensors.output[index, VALID_COLUMN]
                col += 1
        elif what == ROW_SCHEDULE:
            for a in range(3):
                row[col + a] = schedules.current_Nm[index, a]
            col += 3
        elif what == ROW_MAGNETORQUER:
            for a in range(3):
                row[col + a] = magnetorquers.dipole_Am2[index, a]
            col += 3
        elif what == ROW_WHEEL:
            col = write_wheel_row(wheels, index, w, row, col)
        elif what == ROW_MODE:
            row[col] = modes.state[0]
            col += 1
        elif what == ROW_ESTIMATOR:
            col = write_estimator(row, col, estimators, index, sensors)
        elif what == ROW_POINTING:  # the attitude law running now (attsim.guidance.pointing.pointing_values)
            c = _pointing_now(controllers)
            if c < 0:
                for i in range(8):
                    row[col + i] = np.nan
            else:
                q_ref, _, _ = reference_now(controllers.target_kind[c], controllers.target[c], t, inputs.env_t,
                                            inputs.env_v)
                e = error_vector(q, q_ref)
                row[col], row[col + 1], row[col + 2], row[col + 3] = q_ref
                row[col + 4] = error_angle_deg(q, q_ref)
                row[col + 5], row[col + 6], row[col + 7] = e
            col += 8
    buffers.counts[0] = n + 1


@njit(**_JIT)
def no_user_decide(t_s, readings, parameters, memory, commands):
    """The user law bound into the loop when the mission has none (never called)."""
    return None


def user_cycle_template(controllers, c, sensors, wheels, magnetorquers, t, w, buffers):
    """One cycle of a user's law (sensors already sampled): call it, apply what it wrote. False: an infinite command.

    A template: ``user_decide`` is bound to the user's law (:func:`bind_user_law`).
    """
    readings = controllers.user_readings[c]
    for i in range(controllers.samples.shape[1]):
        s = controllers.samples[c, i]
        if s >= 0:
            for a in range(6):
                readings[i, a] = sensors.output[s, a] if a < SENSOR_AXES[sensors.kind[s]] else 0.0
    commands = controllers.user_commands[c, : controllers.user_sizes[c, 3]]
    commands[:] = np.nan
    user_decide(t, readings[: controllers.user_sizes[c, 2]],  # noqa: F821 - bound per mission
                controllers.user_parameters[c, : controllers.user_sizes[c, 0]],
                controllers.user_memory[c, : controllers.user_sizes[c, 1]], commands)
    for i in range(commands.shape[0]):
        if np.isinf(commands[i]):
            return False
    m = controllers.magnetorquer[c]
    if m >= 0:
        if not (np.isnan(commands[0]) or np.isnan(commands[1]) or np.isnan(commands[2])):
            _command_dipole(magnetorquers, m, (commands[0], commands[1], commands[2]), t, buffers)
    else:
        for i in range(controllers.wheel_order.shape[1]):
            j = controllers.wheel_order[c, i]
            if j >= 0 and not np.isnan(commands[i]):
                _command_wheel(wheels, j, commands[i], w, t, buffers)
    return True


_USER_CYCLES: dict = {}


def bind_user_law(decide, digest: str):
    """:func:`user_cycle_template` compiled with ``user_decide`` bound to ``decide`` (cached on disk by ``digest``,
    and in the process: a campaign's runs share it)."""
    from .._core.jit import package_digest
    from ..integrators.base import bind_globals

    if digest not in _USER_CYCLES:
        _USER_CYCLES[digest] = njit(**_JIT)(bind_globals(user_cycle_template, f"user_cycle_{digest}_{package_digest()}",
                                                         user_decide=decide))
    return _USER_CYCLES[digest]


def mission_loop(state, t_now, t_horizon, max_step, inputs, wheels, sensors, estimators, modes, controllers,
                 magnetorquers, schedules, playback, telemetry, J, Jinv, params, buffers):
    """Run the mission from ``t_now`` until it ends or must hand over to Python.

    A template: ``advance`` (:func:`attsim.engine.plant.plant_advance_loop` bound to
    the mission's method) and ``output_state`` are bound per integrator by
    :meth:`~attsim.integrators.base.FixedStepIntegrator.compiled_template`.
    ``inputs`` are the held commands at ``t_now``. The banks are updated in
    place. The loop hands its rows over before going past ``t_horizon``
    (the recorder's bound on how much simulated time a kill may lose), once
    it has done at least one instant, so every call makes progress.
    Returns ``(state, t_now, reason, t_from)`` with ``reason`` one
    of ``DONE``, ``ROWS_FULL``, ``EVENTS_FULL``, ``REFILL`` (the state is at
    ``t_now`` and every event before it is done; call again), ``GIMBAL_LOCK``
    or ``DIVERGED`` (``t_now`` is where the method stopped or the state
    failed its check, ``t_from`` where that advance started).
    """
    duration = telemetry.duration_s
    inf = math.inf
    inputs = held_inputs(inputs, t_now, wheels, magnetorquers, schedules)  # whatever inputs the caller passed
    progressed = False  # the horizon ends a call only after one instant: t_now + span may round below the next row
    while True:
        # the next instant anything happens
        t_next = inf
        for s in range(sensors.kind.shape[0]):
            if sensors.free_running[s] != 0.0:
                ts = grid_time(sensors.phase_s[s], sensors.next_k[s], sensors.period_s[s])
                if ts <= duration and ts < t_next:
                    t_next = ts
        for e in range(estimators.period_s.shape[0]):
            te = grid_time(estimators.phase_s[e], estimators.next_k[e], estimators.period_s[e])
            if te <= duration and te < t_next:
                t_next = te
        if modes.period_s.shape[0] > 0:
            tm = grid_time(modes.phase_s[0], modes.next_k[0], modes.period_s[0])
            if tm <= duration and tm < t_next:
                t_next = tm
        for c in range(controllers.kind.shape[0]):
            if controllers.active[c] == 0.0:  # stopped by its mode: its instants do not stop the plant (as on the
                continue  # Python path, where its cycle returns before it reads the state); the catch-up is below
            tc = grid_time(controllers.phase_s[c], controllers.next_k[c], controllers.period_s[c])
            if tc <= duration and tc < t_next:
                t_next = tc
        for k in range(schedules.count.shape[0]):
            if schedules.next_k[k] < schedules.count[k] and schedules.times_s[k, schedules.next_k[k]] < t_next:
                t_next = schedules.times_s[k, schedules.next_k[k]]
        for k in range(playback.count.shape[0]):
            if playback.next_k[k] < playback.count[k] and playback.times_s[k, playback.next_k[k]] < t_next:
                t_next = playback.times_s[k, playback.next_k[k]]
        if sensors.boundaries.shape[0] > 0:  # sensor faults begin and end at instants of their own
            t_next = min(t_next, next_fault_boundary(sensors, t_now))
        k_row = telemetry.next_k[0]
        t_row = min(grid_time(0.0, k_row, telemetry.dt_s), duration) if k_row >= 0 else inf
        if t_row < t_next:
            t_next = t_row
        if t_next == inf:
            return state, t_now, DONE, t_now
        if buffers.counts[0] >= buffers.rows.shape[0] or (t_next > t_horizon and progressed):
            return state, t_now, ROWS_FULL, t_now
        if buffers.counts[1] + buffers.events_per_instant > buffers.events.shape[0]:
            return state, t_now, EVENTS_FULL, t_now
        # the plant reaches t_next under the commands held since t_now
        if t_next > t_now:
            state, stopped, t_reached, n_stops, fault = advance(state, t_now, t_next, max_step, inputs, wheels,  # noqa: F821
                                                                J, Jinv, params, buffers.stops)
            for i in range(n_stops):
                log_event(buffers, buffers.stops[i, 0], EVENT_SATURATION, WHAT_SPEED, int(buffers.stops[i, 1]),
                       buffers.stops[i, 2], 0.0, 0.0)
            if stopped:
                return state, t_reached, GIMBAL_LOCK, t_now
            if fault != 0:
                return state, t_next, DIVERGED, t_now
            t_now = t_next
        for c in range(controllers.kind.shape[0]):  # a stopped controller's instants passed while the plant ran on
            while grid_time(controllers.phase_s[c], controllers.next_k[c], controllers.period_s[c]) < t_now:
                controllers.next_k[c] += 1
        q, w = output_state(state, J, params)  # noqa: F821
        # what happens at t_now, in the engine's order; a sensor short of normals hands over before anything changes
        for s in range(sensors.kind.shape[0]):
            if sensors.free_running[s] != 0.0 \
                    and grid_time(sensors.phase_s[s], sensors.next_k[s], sensors.period_s[s]) == t_now \
                    and sensors.cursor[s] + sensors.draws[s] > sensors.normals.shape[1]:
                return state, t_now, REFILL, t_now
        for e in range(estimators.period_s.shape[0]):
            if estimator_due(estimators, e, t_now) and not estimator_sensors_ready(estimators, e, sensors):
                return state, t_now, REFILL, t_now
        for c in range(controllers.kind.shape[0]):
            if grid_time(controllers.phase_s[c], controllers.next_k[c], controllers.period_s[c]) == t_now:
                for i in range(controllers.samples.shape[1]):
                    s = controllers.samples[c, i]
                    if s >= 0 and sensors.cursor[s] + sensors.draws[s] > sensors.normals.shape[1]:
                        return state, t_now, REFILL, t_now
        if t_now > 0.0 and sensors.boundaries.shape[0] > 0:  # fault events come first at their time (at t = 0:
            log_faults(sensors, t_now, buffers)  # after what the components do at their start)
        for k in range(schedules.count.shape[0]):
            j = schedules.next_k[k]
            if j < schedules.count[k] and schedules.times_s[k, j] == t_now:
                cur = schedules.current_Nm[k]
                cur[0], cur[1], cur[2] = schedules.torque_Nm[k, j, 0], schedules.torque_Nm[k, j, 1], \
                    schedules.torque_Nm[k, j, 2]
                schedules.next_k[k] = j + 1
                log_event(buffers, t_now, EVENT_COMMAND, WHAT_TORQUE, k, cur[0], cur[1], cur[2])
        for k in range(playback.count.shape[0]):
            j = playback.next_k[k]
            while j < playback.count[k] and playback.times_s[k, j] == t_now:  # several at one time: in their order
                v = playback.values[k, j]
                log_event(buffers, t_now, EVENT_PLAYBACK, playback.target[k], k, v[0], v[1], v[2])
                buffers.events[buffers.counts[1] - 1, 7] = j  # which command, for the event log's own copy of it
                if playback.target[k] == PLAYBACK_WHEEL:
                    _command_wheel(wheels, playback.index[k], v[0], w, t_now, buffers)
                else:
                    _command_dipole(magnetorquers, playback.index[k], (v[0], v[1], v[2]), t_now, buffers)
                j += 1
            playback.next_k[k] = j
        for s in range(sensors.kind.shape[0]):
            if sensors.free_running[s] != 0.0 \
                    and grid_time(sensors.phase_s[s], sensors.next_k[s], sensors.period_s[s]) == t_now:
                sample_sensor(sensors, s, t_now, q, w, inputs.env_t, inputs.env_v)
                sensors.next_k[s] += 1
        for e in range(estimators.period_s.shape[0]):  # after the samples, before the controllers that read them
            if estimator_due(estimators, e, t_now):
                if not estimate(estimators, e, sensors, t_now, q, w, inputs.env_t, inputs.env_v, buffers):
                    return state, t_now, ESTIMATOR_FAULT, float(e)
        if mode_due(modes, t_now):  # the mode at this instant decides which controllers act at it
            k = mode_check(modes, t_now, q, w, wheels, sensors, estimators, controllers, inputs.env_t, inputs.env_v)
            if k >= 0:
                _switch_mode(modes, k, controllers, wheels, magnetorquers, t_now, w, buffers)
        for c in range(controllers.kind.shape[0]):
            if grid_time(controllers.phase_s[c], controllers.next_k[c], controllers.period_s[c]) == t_now:
                if controllers.active[c] == 0.0:  # stopped by its mode: no samples, no commands
                    pass
                elif controllers.kind[c] == USER:
                    for i in range(controllers.samples.shape[1]):
                        if controllers.samples[c, i] >= 0:
                            sample_sensor(sensors, controllers.samples[c, i], t_now, q, w, inputs.env_t, inputs.env_v)
                    if not _any_without_output(controllers, c, sensors) and \
                            not user_cycle(controllers, c, sensors, wheels, magnetorquers, t_now, w, buffers):  # noqa: F821
                        return state, t_now, USER_FAULT, float(c)
                else:
                    _cycle(controllers, c, sensors, estimators, wheels, magnetorquers, t_now, q, w, inputs.env_t,
                           inputs.env_v, buffers)
                controllers.next_k[c] += 1
        if t_now == 0.0 and sensors.boundaries.shape[0] > 0:
            log_faults(sensors, t_now, buffers)
        inputs = held_inputs(inputs, t_now, wheels, magnetorquers, schedules)
        if t_row == t_now:
            _write_row(telemetry, sensors, controllers, estimators, modes, schedules, magnetorquers, wheels, t_now, q,
                       w, inputs, buffers)
            telemetry.next_k[0] = -1 if t_row >= duration else k_row + 1
        progressed = True
