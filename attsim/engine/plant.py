"""The compiled plant: the torque at every integrator stage, the advance between events, the
engine's telemetry columns.

A mission's continuous part. Commands from actuators are held (zero-order
hold) until they change; whenever a component reads the state or changes a
command, the plant is first integrated from where it was to the event's time
with the commands held until then, in sub-steps of at most ``max_step``,
the last one shortened to land on the event time. Torques that depend on
the state (``m × B``, the wheels' gyroscopic coupling, the disturbances)
are evaluated at every integrator stage by :func:`plant_torque`, whose
inputs travel as one :class:`PlantInputs`.

The advance is a unit (:mod:`attsim._core.units`): :func:`advance_unit`
bound to one integrator and one stage torque (:func:`advance_unit_for`),
compiled once per machine for each pair and shared by the compiled mission
and the Python path (:mod:`attsim.engine.spacecraft`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._core.events import log_event
from .._core.jit import LOOP_CALLED, LOOP_INLINED, njit
from .._core.units import Unit, as_function, deref
from ..actuators.kernels import W_INTEGRATED, speed_stop_due, wheels_total
from ..actuators.loop import EVENT_SATURATION, WHAT_SPEED
from ..actuators.wheel_dynamics import (begin_wheel_step, end_wheel_step, inputs_alone, inputs_and_work,
                                        plant_torque_wheels)
from ..dynamics import normalized4, qconj, qrotate
from ..environment.table import B_I, P_SRP, lerp1, lerp3, stage_time, table_cell
from ..environment.torques import DisturbanceSwitches, disturbance_torques
from .checks import SOUND, state_fault
from .world import (DIVERGED, GIMBAL_LOCK, HELD_DIPOLE, HELD_H_W, HELD_T0, HELD_TAU_EXT, HELD_TAU_W, OK, PLANT_MAX_STEP,
                    PLANT_T)

_JIT = dict(cache=True, nogil=True, error_model="numpy", **LOOP_INLINED)  # inlined in the units

__all__ = ["PlantInputs", "plant_torque", "plant_torque_environment", "plant_torque_no_environment",
           "plant_advance_loop", "substep_count",
           "substep", "hold_wheels_to", "speed_stops", "stop_wheels", "advance_unit", "advance_unit_for",
           "advance_held", "write_head", "WRITE_HEAD", "NO_FACES"]

NO_FACES = np.empty((0, 10))


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


@njit(**_JIT)
def plant_torque_no_environment(t, q, w, inputs):
    """:func:`plant_torque` without an environment table (neither a field nor an environment): the held external
    torque, the wheels' reaction and their gyrostat coupling, ``τ_ext - τ_w - ω × h_w(t)``.

    :func:`plant_torque` returns it whenever its table is empty, so a caller
    that knows the table is empty (an ensemble without a field, decided once
    at its construction) may take it as the stage torque: the same
    arithmetic, inlined and without the table's test.
    """
    p = inputs
    dt = t - p.t0_s
    h0, tau_w, ext = p.h_wheels0_Nms, p.tau_wheels_Nm, p.tau_ext_Nm
    hx = h0[0] + tau_w[0] * dt
    hy = h0[1] + tau_w[1] * dt
    hz = h0[2] + tau_w[2] * dt
    return (ext[0] - tau_w[0] - (w[1] * hz - w[2] * hy), ext[1] - tau_w[1] - (w[2] * hx - w[0] * hz),
            ext[2] - tau_w[2] - (w[0] * hy - w[1] * hx))


@njit(**_JIT)
def _environment_idle(p):
    """True when the environment adds nothing to the stage torque: no disturbance switched on, no dipole held and
    no residual dipole (``m × B`` is then zero whatever the field), so the table need not be read."""
    s, m, r = p.switches, p.dipole_Am2, p.residual_dipole_Am2
    return (s[0] == 0.0 and s[1] == 0.0 and s[2] == 0.0 and m[0] == 0.0 and m[1] == 0.0 and m[2] == 0.0
            and r[0] == 0.0 and r[1] == 0.0 and r[2] == 0.0)


@njit(**_JIT)
def plant_torque(t, q, w, inputs):
    """Torque on the rigid part of a gyrostat spacecraft under held commands
    (:func:`plant_torque_environment`), inlined where the environment adds nothing
    (:func:`_environment_idle`: :func:`plant_torque_no_environment`'s arithmetic, no call)."""
    if _environment_idle(inputs):
        return plant_torque_no_environment(t, q, w, inputs)
    return plant_torque_environment(t, q, w, inputs)


@njit(cache=True, nogil=True, error_model="numpy", **LOOP_CALLED)
def plant_torque_environment(t, q, w, inputs):
    """Torque on the rigid part of a gyrostat spacecraft under held commands.

    With the commands held since ``t0`` (zero-order hold)::

        h_w(t) = h_w0 + τ_w (t - t0)          wheel momentum, body axes
        τ = τ_ext + m × B_B - τ_w - ω × h_w(t) + τ_gg + τ_aero + τ_srp + m_res × B_B

    so that Euler's equation for the body, ``J dω/dt = τ - ω × J ω``, is the
    gyrostat's (Markley & Crassidis 2014, sec. 3.3.5). The environment is
    interpolated at the stage time and rotated into the body with the stage
    attitude, so torques that depend on the attitude follow it inside the
    integration instead of being frozen at the event; after the held inputs'
    start it is read as its left limit (:func:`~attsim.environment.table.stage_time`:
    a held field history holds through the end of each step).
    """
    p = inputs
    dt = t - p.t0_s
    h0, tau_w, m, ext = p.h_wheels0_Nms, p.tau_wheels_Nm, p.dipole_Am2, p.tau_ext_Nm
    hx = h0[0] + tau_w[0] * dt
    hy = h0[1] + tau_w[1] * dt
    hz = h0[2] + tau_w[2] * dt
    t_env = stage_time(t, p.t0_s)
    k, f = table_cell(p.env_t, t_env)
    if k < 0:  # no table (neither a field nor an environment): no m × B and no disturbance to evaluate
        return plant_torque_no_environment(t, q, w, p)
    b = qrotate(normalized4(qconj(q)), lerp3(p.env_v, k, f, B_I))
    tx = ext[0] + m[1] * b[2] - m[2] * b[1] - tau_w[0] - (w[1] * hz - w[2] * hy)
    ty = ext[1] + m[2] * b[0] - m[0] * b[2] - tau_w[1] - (w[2] * hx - w[0] * hz)
    tz = ext[2] + m[0] * b[1] - m[1] * b[0] - tau_w[2] - (w[0] * hy - w[1] * hx)
    d = disturbance_torques(t_env, q, p.env_t, p.env_v, p.faces, p.switches, p.J, p.residual_dipole_Am2)
    tx += d.gg[0] + d.aero[0] + d.srp[0] + d.res[0]
    ty += d.gg[1] + d.aero[1] + d.srp[1] + d.res[1]
    tz += d.gg[2] + d.aero[2] + d.srp[2] + d.res[2]
    return (tx, ty, tz)


def plant_advance_loop(state, t0, t1, max_step, inputs, wheels, J, Jinv, params, stops):
    """Advance the plant from ``t0`` to ``t1`` under held commands, enforcing the wheels' speed limits.

    Steps of at most ``max_step`` (:func:`substep_count`, :func:`substep`:
    step ``i`` starts at ``t0 + i max_step``; the last is shortened to land
    on ``t1``). After every step each wheel whose motor pushes it beyond its
    speed limit is stopped there (:func:`speed_stops`, :func:`stop_wheels`):
    its torque becomes zero and the held inputs restart from that time, so
    the limit holds to within one step's change of the wheel speed. Each stop
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
    n = substep_count(span, max_step)
    n_wheels = wheels.axis.shape[0]
    integrated = wheels.work[0, W_INTEGRATED] != 0.0
    targs = stage_args(inputs, wheels.work)  # noqa: F821 - bound per variant (advance_template)
    t_ref = inputs.t0_s  # wheels.h_Nms holds the momenta at t_ref
    for i in range(n):
        t_i, h = substep(t0, span, max_step, i, n)
        if integrated:
            begin_wheel_step(wheels, h)
        state = step(targs, t_i, h, state, J, Jinv, params)  # noqa: F821 - bound per method
        t_e = t_i + h
        if integrated:  # integrated with the body's state: the wheels' momenta now are those at t_e
            end_wheel_step(wheels, h)
            t_ref = t_e
        if must_stop(state, params):  # noqa: F821
            hold_wheels_to(wheels, t_e, t_ref)
            return state, True, t_e, n_stops, SOUND
        if n_wheels > 0:
            _, w = output_state(state, J, params)  # noqa: F821
            stopped_now = speed_stops(wheels, w, t_e, t_ref, stops, n_stops)
            if stopped_now > n_stops:
                n_stops = stopped_now
                inputs = stop_wheels(wheels, inputs, t_e, t_ref, stops, n_stops)
                t_ref = t_e
                targs = stage_args(inputs, wheels.work)  # noqa: F821
    hold_wheels_to(wheels, t1, t_ref)
    q, w = output_state(state, J, params)  # noqa: F821
    return state, False, t1, n_stops, state_fault(q, w, max_step)


@njit(**_JIT)
def substep_count(span, max_step):
    """The sub-steps of at most ``max_step`` that cover ``span`` > 0 (a span within 1e-9 of a whole number of
    ``max_step`` takes that number: round-off in the span adds no sliver of a step)."""
    ratio = span / max_step
    n = int(ratio)
    if ratio - n > 1e-9 * max(1.0, ratio):
        n += 1
    return max(n, 1)


@njit(**_JIT)
def substep(t0, span, max_step, i, n):
    """``(t_i, h)``: the start and length of sub-step ``i`` of ``n`` from ``t0`` (the last lands on ``t0 + span``)."""
    return t0 + i * max_step, (max_step if i < n - 1 else span - (n - 1) * max_step)


@njit(**_JIT)
def hold_wheels_to(wheels, t, t_ref):
    """Bring the wheels' momenta from ``t_ref`` to ``t`` under their held motor torques (``h += τ (t - t_ref)``)."""
    for j in range(wheels.axis.shape[0]):
        wheels.h_Nms[j] += wheels.torque_Nm[j] * (t - t_ref)


@njit(**_JIT)
def speed_stops(wheels, w, t_e, t_ref, stops, n_stops):
    """After a step ending at ``t_e`` (body rate ``w``): record, from row ``n_stops`` of ``stops`` on, each wheel
    whose held torque pushes it beyond its speed limit, as ``(t_e, wheel index, speed)``; returns the new count
    (``wheels.h_Nms`` holds the momenta at ``t_ref``)."""
    for j in range(wheels.axis.shape[0]):
        due, speed = speed_stop_due(wheels.h_Nms[j], wheels.torque_Nm[j], wheels.inertia_kg_m2[j],
                                    wheels.max_speed_rad_s[j], wheels.axis[j], w, t_e - t_ref)
        if due and n_stops < stops.shape[0]:
            stops[n_stops, 0], stops[n_stops, 1], stops[n_stops, 2] = t_e, j, speed
            n_stops += 1
    return n_stops


@njit(**_JIT)
def stop_wheels(wheels, inputs, t_e, t_ref, stops, n_stops):
    """Stop the wheels ``stops`` recorded at ``t_e``: the momenta brought to ``t_e``, those wheels' torque zero and
    speed-saturated; returns the :class:`PlantInputs` held from ``t_e``."""
    hold_wheels_to(wheels, t_e, t_ref)
    for k in range(n_stops):
        if stops[k, 0] == t_e:
            j = int(stops[k, 1])
            wheels.torque_Nm[j] = 0.0
            wheels.speed_saturated[j] = 1.0
    tau_w, h_w = wheels_total(wheels)
    return PlantInputs(t_e, inputs.tau_ext_Nm, inputs.dipole_Am2, tau_w, h_w, inputs.env_t, inputs.env_v,
                       inputs.faces, inputs.switches, inputs.J, inputs.residual_dipole_Am2)


@njit(**_JIT)
def _tuple9(a):
    return (a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8])


@njit(**_JIT)
def held_inputs(pw):
    """The :class:`PlantInputs` of the World's held commands and environment."""
    world = deref(pw)
    held, env = world.plant.held, world.environment
    return PlantInputs(held[HELD_T0], (held[HELD_TAU_EXT], held[HELD_TAU_EXT + 1], held[HELD_TAU_EXT + 2]),
                       (held[HELD_DIPOLE], held[HELD_DIPOLE + 1], held[HELD_DIPOLE + 2]),
                       (held[HELD_TAU_W], held[HELD_TAU_W + 1], held[HELD_TAU_W + 2]),
                       (held[HELD_H_W], held[HELD_H_W + 1], held[HELD_H_W + 2]), env.env_t, env.env_v, env.faces,
                       DisturbanceSwitches(env.switches[0], env.switches[1], env.switches[2], env.switches[3]),
                       _tuple9(world.plant.J),
                       (env.residual_Am2[0], env.residual_Am2[1], env.residual_Am2[2]))


def advance_unit(pw, t0, t1):
    """Advance the World's plant from ``t0`` to ``t1`` under its held commands; log the wheels' speed stops.

    A template: ``advance`` (:func:`plant_advance_loop` bound to one method
    and stage torque), ``unpack_state``, ``pack_state`` and
    ``output_state`` are the method's (:func:`advance_unit_for`). Returns
    ``OK``, ``GIMBAL_LOCK`` (the method's parameterisation failed; the
    plant's time is where it stopped) or ``DIVERGED`` (the state failed its
    check at ``t1``).
    """
    world = deref(pw)
    plant = world.plant
    J, Jinv, params = _tuple9(plant.J), _tuple9(plant.Jinv), (plant.params[0],)
    stops = world.buffers.stops
    state = unpack_state(plant.state)  # noqa: F821 - bound per method
    state, stopped, t_reached, n_stops, fault = advance(state, t0, t1, plant.time[PLANT_MAX_STEP],  # noqa: F821
                                                        held_inputs(pw), world.actuators.wheels, J, Jinv, params,
                                                        stops)
    for i in range(n_stops):
        log_event(world.buffers, stops[i, 0], EVENT_SATURATION, WHAT_SPEED, int(stops[i, 1]), stops[i, 2], 0.0, 0.0)
    pack_state(state, plant.state)  # noqa: F821
    q, w = output_state(state, J, params)  # noqa: F821
    v = plant.q_w
    v[0], v[1], v[2], v[3] = q
    v[4], v[5], v[6] = w
    if stopped:
        plant.time[PLANT_T] = t_reached
        return GIMBAL_LOCK
    plant.time[PLANT_T] = t1
    return OK if fault == SOUND else DIVERGED


_ADVANCE_LOOPS: dict = {}


def advance_unit_for(integrator, wheels_integrated: bool) -> Unit:
    """The advance unit of ``integrator`` with the plain stage torque, or the one integrating the wheels' states
    (friction, imbalance): each compiled on its own, once per machine."""
    torque = plant_torque_wheels if wheels_integrated else plant_torque
    stage_args = inputs_and_work if wheels_integrated else inputs_alone
    key = (integrator.name, wheels_integrated)
    if key not in _ADVANCE_LOOPS:
        _ADVANCE_LOOPS[key] = integrator.compiled_template(plant_advance_loop, torque, stage_args=stage_args)
    bindings = dict(advance=_ADVANCE_LOOPS[key], unpack_state=integrator.unpack_state,
                    pack_state=integrator.pack_state, output_state=integrator.output_state)
    return Unit(advance_unit, f"advance_{integrator.name}_{torque.__name__}", bindings)


def advance_held(advance, address, t0, t1, tau_ext, dipole):
    """The Python path's advance: hold ``tau_ext`` and ``dipole`` and the wheels' torque and momentum from
    ``t0``, then run the advance unit (at address ``advance``) to ``t1``; returns its status. ``address`` is the
    World's pinned copy (``world_at``, bound per World type, makes it a pointer): a call unboxes no bank."""
    pw = world_at(address)  # noqa: F821 - bound per World type
    world = deref(pw)
    held = world.plant.held
    tau_w, h_w = wheels_total(world.actuators.wheels)
    held[HELD_T0] = t0
    held[HELD_TAU_EXT], held[HELD_TAU_EXT + 1], held[HELD_TAU_EXT + 2] = tau_ext
    held[HELD_DIPOLE], held[HELD_DIPOLE + 1], held[HELD_DIPOLE + 2] = dipole
    held[HELD_TAU_W], held[HELD_TAU_W + 1], held[HELD_TAU_W + 2] = tau_w
    held[HELD_H_W], held[HELD_H_W + 1], held[HELD_H_W + 2] = h_w
    return as_function(advance, 0, pw, t0, t1)(pw, t0, t1)


def write_head(pw, t, row_, col):
    """The engine's columns of the row being written: t, q_IB, ω, and with an environment the field, the light
    and each disturbance torque (the plant's own function); returns the next column."""
    world = deref(pw)
    row = world.buffers.rows[world.buffers.counts[0]]
    row[0] = t
    v = world.plant.q_w
    for i in range(7):
        row[1 + i] = v[i]
    col = 8
    env = world.environment
    if env.logged[0] != 0.0:
        k, f = table_cell(env.env_t, t)
        b = lerp3(env.env_v, k, f, B_I)
        row[col], row[col + 1], row[col + 2] = b
        row[col + 3] = 1.0 if lerp1(env.env_v, k, f, P_SRP) > 0.0 else 0.0
        col += 4
        d = disturbance_torques(t, (v[0], v[1], v[2], v[3]), env.env_t, env.env_v, env.faces,
                                DisturbanceSwitches(env.switches[0], env.switches[1], env.switches[2], env.switches[3]),
                                _tuple9(world.plant.J), (env.residual_Am2[0], env.residual_Am2[1],
                                                         env.residual_Am2[2]))
        for torque in (d.gg, d.aero, d.srp, d.res):
            row[col], row[col + 1], row[col + 2] = torque
            col += 3
    return col


WRITE_HEAD = Unit(write_head, "write_head", {})
