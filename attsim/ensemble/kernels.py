"""The ensemble's compiled step: every body one control period, in parallel, through the mission's own kernels.

One body's step is a mission's control cycle and the advance that follows
it, made of the very functions a :class:`~attsim.Mission` runs:

1. the wheel commands through :func:`attsim.actuators.kernels.wheel_command`
   (torque limit, speed stop) at the body's rate now, the dipole of three
   bars on the body axes through :func:`attsim.actuators.kernels.saturate_bars`;
2. the plant from ``t_k = k period`` to ``t_(k+1) = (k + 1) period`` with the
   commands held, as :func:`attsim.engine.plant.plant_advance_loop` advances
   a mission's plant: the method's step with the plant's stage torque, in
   sub-steps of at most ``max_step`` (:func:`~attsim.engine.plant.substep_count`,
   :func:`~attsim.engine.plant.substep`), the wheels' speed stops after each
   (:func:`~attsim.engine.plant.speed_stops`,
   :func:`~attsim.engine.plant.stop_wheels`), the momenta brought to the end
   (:func:`~attsim.engine.plant.hold_wheels_to`) and the state's check.

Speed: the bodies are stepped in chunks of :data:`CHUNK`, one chunk at a time
per thread (numba's ``prange`` over chunks). A chunk's state and held inputs
are copied into the thread's scratch, one row per quantity (structure of
arrays), and each sub-step is a loop over the chunk's bodies *innermost*:
the method's step for body ``b`` reads and writes row entries ``b``, so LLVM
runs it for four bodies at once in the vector registers (AVX2). Each body
still gets the very IEEE operations of its mission in the same order (no
``fastmath``: no contraction into FMA, no reordering), so the same numbers
to the bit. The stage torque is decided once per ensemble: without a field
or an environment, :func:`~attsim.engine.plant.plant_torque_no_environment`
(what :func:`~attsim.engine.plant.plant_torque` returns for an empty table,
inlined); with one, :func:`~attsim.engine.plant.plant_torque` itself. The
speed-stop checks and the commands, rare or branchy, run body by body on the
ensemble's own rows. Bodies are independent, so neither their order nor the
thread count can change a result. Compiled without reference counting
(``_nrt=False``): a body's rows are views of the ensemble's arrays, which the
caller keeps alive, and counting them would make the threads contend on one
counter.
"""

from __future__ import annotations

import hashlib
import math
from typing import NamedTuple

from numba import get_thread_id, prange, typeof, types

from .._core.bind import bind_globals
from .._core.jit import JIT, LOOP_CALLED, LOOP_INLINED, njit
from .._core.timegrid import grid_time
from .._core.units import Unit, as_function
from ..actuators.kernels import WheelBank, saturate_bars, speed_stop_free_rate2, wheel_command, wheels_total
from ..engine.checks import SOUND, state_fault
from ..engine.plant import (PlantInputs, hold_wheels_to, plant_torque, plant_torque_no_environment, speed_stops,
                            stop_wheels, substep, substep_count)
from ..integrators.base import bind_stage_torque, code_digest
from ..sensors.kernels import field_body, gyro_measure, magnetometer_measure

__all__ = ["chunk_unit", "part_units", "STEP_UNIT", "STEP_OPTIONS", "step_signatures", "StepSignatures", "STOPPED",
           "CHUNK", "BEGIN", "AFTER", "FINISH", "scratch_rows",
           "body_field", "sample_sensors", "GYRO", "MAGNETOMETER"]

# a body's status after a step: the plant's state fault (attsim.engine.checks: SOUND, NOT_FINITE, ...), or STOPPED
# when the method's parameterisation failed (a gimbal lock; only methods that can stop)
STOPPED = -1

# bodies a thread steps together: a multiple of the vector width (4 doubles), and few enough that the chunk's
# scratch (scratch_rows: 57 rows of CHUNK doubles with three wheels, 29 kB) stays in the core's 32 kB level-1 cache
CHUNK = 64
# the chunk's parts, by their place in the addresses it is given (kernels.part_units)
BEGIN, AFTER, FINISH = 0, 1, 2
# the scratch's rows (each CHUNK wide, entry b for the chunk's body b): the method's state q_IB (4) and ω (3); the
# advance's start t0, its span t1 - t0 and its sub-step count; the held inputs' start (PlantInputs.t0_s: t0, or
# the last speed stop), external torque, dipole, wheel torque and momentum (body axes, 3 each); J and J⁻¹
# (row-major, 9 each); the speed stops recorded, the time the wheels are held to at the end (t1, or where the
# method stopped), 1.0 when the method stopped, and the squared body rate below which no wheel can be due a speed
# stop this advance (attsim.actuators.kernels.speed_stop_free_rate2)
S_Q, S_W, S_T0, S_SPAN, S_N, S_REF, S_EXT, S_M, S_TAU_W, S_H_W = 0, 4, 7, 8, 9, 10, 11, 14, 17, 20
S_J, S_JINV, S_STOPS, S_END, S_STOPPED, S_FREE_RATE2 = 23, 32, 41, 42, 43, 44
# then WHEEL_ROWS rows a wheel, wheel j's from row S_WHEELS + WHEEL_ROWS j: its motor torque and momentum (at the
# held inputs' start), spin inertia and speed limit
S_WHEELS, WHEEL_ROWS = 45, 4
W_TORQUE, W_H, W_INERTIA, W_LIMIT = 0, 1, 2, 3


def scratch_rows(wheels: int) -> int:
    """Rows of a thread's scratch (each :data:`CHUNK` doubles) for bodies with ``wheels`` wheels."""
    return S_WHEELS + WHEEL_ROWS * wheels


_PARALLEL = dict(JIT, parallel=True, _nrt=False)  # no reference counts: views of rows would contend
_INLINED = dict(JIT, **LOOP_INLINED)
_CALLED = dict(JIT, **LOOP_CALLED)


@njit(**_INLINED)
def _tuple9(a):
    return (a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8])


@njit(**_INLINED)
def _row3(s, row, b):
    """Entries ``b`` of the scratch rows ``row .. row + 2``, a 3-tuple."""
    return (s[row * CHUNK + b], s[(row + 1) * CHUNK + b], s[(row + 2) * CHUNK + b])


@njit(**_INLINED)
def _row9(s, row, b):
    """Entries ``b`` of the scratch rows ``row .. row + 8``, a 9-tuple (a row-major matrix)."""
    return (s[row * CHUNK + b], s[(row + 1) * CHUNK + b], s[(row + 2) * CHUNK + b], s[(row + 3) * CHUNK + b],
            s[(row + 4) * CHUNK + b], s[(row + 5) * CHUNK + b], s[(row + 6) * CHUNK + b], s[(row + 7) * CHUNK + b],
            s[(row + 8) * CHUNK + b])


@njit(**_INLINED)
def _put3(s, row, b, v):
    """A 3-tuple into entries ``b`` of the scratch rows ``row .. row + 2`` (written out: a loop over a tuple's
    items would keep the body loop from being vectorised)."""
    s[row * CHUNK + b], s[(row + 1) * CHUNK + b], s[(row + 2) * CHUNK + b] = v


@njit(**_INLINED)
def _put4(s, row, b, v):
    """A 4-tuple into entries ``b`` of the scratch rows ``row .. row + 3``."""
    s[row * CHUNK + b], s[(row + 1) * CHUNK + b], s[(row + 2) * CHUNK + b], s[(row + 3) * CHUNK + b] = v


@njit(**_INLINED)
def _state(s, b):
    """Body ``b``'s state ``(q, ω)`` in the scratch (the ensemble's methods share this state)."""
    return (s[S_Q * CHUNK + b], s[(S_Q + 1) * CHUNK + b], s[(S_Q + 2) * CHUNK + b], s[(S_Q + 3) * CHUNK + b]), \
        _row3(s, S_W, b)


@njit(**_INLINED)
def _inputs(s, b, env):
    """Body ``b``'s :class:`~attsim.engine.plant.PlantInputs` from the scratch; ``env`` is the shared
    ``(env_t, env_v, faces, switches, residual)``."""
    return PlantInputs(s[S_REF * CHUNK + b], _row3(s, S_EXT, b), _row3(s, S_M, b), _row3(s, S_TAU_W, b),
                       _row3(s, S_H_W, b), env[0], env[1], env[2], env[3], _row9(s, S_J, b), env[4])


@njit(**_INLINED)
def body_wheels(wheels, k):
    """Body ``k``'s :class:`~attsim.actuators.kernels.WheelBank`: the rows ``k`` of the ensemble's bank of
    ``(n, wheels)`` arrays (the axes and the work array are shared)."""
    return WheelBank(wheels.axis, wheels.inertia_kg_m2[k], wheels.max_torque_Nm[k], wheels.max_speed_rad_s[k],
                     wheels.h_Nms[k], wheels.torque_Nm[k], wheels.torque_saturated[k], wheels.speed_saturated[k],
                     wheels.requested_Nm[k], wheels.work)


def begin_body(k, b, s, t0, t1, n, state, commands, wheels, dipole_max, dipole_scale, dipole, J, Jinv, params):
    """Body ``k``'s commands at ``t0`` (as a mission's actuators take them) and its advance's held inputs to ``t1``
    in ``n`` sub-steps, into entries ``b`` of the scratch ``s``. A template (``unpack_state``, ``output_state``:
    the method's)."""
    bank = body_wheels(wheels, k)
    x = unpack_state(state[k])  # noqa: F821 - bound per method
    q, w = output_state(x, _tuple9(J[k]), params)  # noqa: F821
    for j in range(bank.axis.shape[0]):
        wheel_command(bank, j, commands[0][k, j], w)
    c = commands[1]
    m_k = dipole[k]  # three bars on the body axes: each bar's dipole is the body dipole's component
    m_k[0], m_k[1], m_k[2] = c[k, 0], c[k, 1], c[k, 2]
    saturate_bars(m_k, dipole_max[k], dipole_scale)
    m = (m_k[0], m_k[1], m_k[2])
    tau_w, h_w = wheels_total(bank)
    x_q, x_w = x
    # each row's entry b (written out row by row: small loops compile faster than a helper per tuple type)
    for i in range(4):
        s[(S_Q + i) * CHUNK + b] = x_q[i]
    for i in range(3):
        s[(S_W + i) * CHUNK + b] = x_w[i]
        s[(S_EXT + i) * CHUNK + b] = commands[2][k, i]
        s[(S_M + i) * CHUNK + b] = m[i]
        s[(S_TAU_W + i) * CHUNK + b] = tau_w[i]
        s[(S_H_W + i) * CHUNK + b] = h_w[i]
    for i in range(9):
        s[(S_J + i) * CHUNK + b] = J[k, i]
        s[(S_JINV + i) * CHUNK + b] = Jinv[k, i]
    s[S_T0 * CHUNK + b], s[S_SPAN * CHUNK + b], s[S_N * CHUNK + b], s[S_REF * CHUNK + b] = t0, t1 - t0, float(n), t0
    s[S_STOPS * CHUNK + b], s[S_END * CHUNK + b], s[S_STOPPED * CHUNK + b] = 0.0, t1, 0.0
    s[S_FREE_RATE2 * CHUNK + b] = speed_stop_free_rate2(bank, t1 - t0)
    for j in range(bank.axis.shape[0]):
        r = (S_WHEELS + WHEEL_ROWS * j) * CHUNK + b
        s[r + W_TORQUE * CHUNK], s[r + W_H * CHUNK] = bank.torque_Nm[j], bank.h_Nms[j]
        s[r + W_INERTIA * CHUNK], s[r + W_LIMIT * CHUNK] = bank.inertia_kg_m2[j], bank.max_speed_rad_s[j]


def substep_chunk(s, count, i, max_step_s, params, env):
    """Sub-step ``i`` of the chunk's ``count`` bodies: each body's method step with the plant's stage torque, a
    body past its sub-steps left as it is. The loop is over the bodies and holds no call and no branch but
    selects, so it is vectorised. A template (``step``: the method's, bound to the stage torque)."""
    for b in range(count):
        n = s[S_N * CHUNK + b]
        t_i, h = substep(s[S_T0 * CHUNK + b], s[S_SPAN * CHUNK + b], max_step_s, i, n)
        x = _state(s, b)
        y = step(_inputs(s, b, env), t_i, h, x, _row9(s, S_J, b), _row9(s, S_JINV, b), params)  # noqa: F821
        active = i < n
        q, w = y if active else x
        _put4(s, S_Q, b, q)
        _put3(s, S_W, b, w)


def stops_due(s, count, i, params):
    """How many of the chunk's bodies the method must stop after sub-step ``i``, or may have a wheel due a speed
    stop: 0, the usual case, lets the chunk skip :func:`after_substep`, whose exact check alone decides. A wheel
    can be due only when the body turns at least as fast as the bound its advance began with (the row
    ``S_FREE_RATE2``, :func:`~attsim.actuators.kernels.speed_stop_free_rate2`), so one comparison a body stands
    for the check of every wheel. A loop over the bodies that stores nothing, so vectorised. A template
    (``must_stop``, ``output_state``: the method's)."""
    due = 0
    for b in range(count):
        x = _state(s, b)
        _, w = output_state(x, _row9(s, S_J, b), params)  # noqa: F821
        rate2 = w[0] * w[0] + w[1] * w[1] + w[2] * w[2]
        candidate = must_stop(x, params) or rate2 >= s[S_FREE_RATE2 * CHUNK + b]  # noqa: F821
        due += 1 if i < s[S_N * CHUNK + b] and candidate else 0
    return due


def after_substep(k, b, i, s, wheels, stops, max_step_s, params, env):
    """After sub-step ``i``, body ``k`` (scratch entry ``b``) as a mission's advance goes on: stopped when the
    method must stop; each wheel its torque pushes beyond its speed limit stopped, the held inputs restarted
    there. A template (``must_stop``, ``output_state``: the method's)."""
    n = int(s[S_N * CHUNK + b])
    if i >= n:
        return
    t_i, h = substep(s[S_T0 * CHUNK + b], s[S_SPAN * CHUNK + b], max_step_s, i, n)
    t_e = t_i + h
    x = _state(s, b)
    if must_stop(x, params):  # noqa: F821
        s[S_N * CHUNK + b] = float(i + 1)  # no further sub-step
        s[S_END * CHUNK + b], s[S_STOPPED * CHUNK + b] = t_e, 1.0
        return
    if wheels.axis.shape[0] == 0:
        return
    bank = body_wheels(wheels, k)
    _, w = output_state(x, _row9(s, S_J, b), params)  # noqa: F821
    t_ref, recorded = s[S_REF * CHUNK + b], int(s[S_STOPS * CHUNK + b])
    now = speed_stops(bank, w, t_e, t_ref, stops[k], recorded)
    if now > recorded:
        inputs = stop_wheels(bank, _inputs(s, b, env), t_e, t_ref, stops[k], now)
        s[S_REF * CHUNK + b], s[S_STOPS * CHUNK + b] = t_e, float(now)
        _put3(s, S_TAU_W, b, inputs.tau_wheels_Nm)
        _put3(s, S_H_W, b, inputs.h_wheels0_Nms)
        for j in range(bank.axis.shape[0]):
            r = S_WHEELS + WHEEL_ROWS * j
            s[(r + W_TORQUE) * CHUNK + b], s[(r + W_H) * CHUNK + b] = bank.torque_Nm[j], bank.h_Nms[j]


def finish_body(k, b, s, state, steps, wheels, max_step_s, params, status):
    """Body ``k`` at the end of its advance: the wheels' momenta brought to the time reached, the state written
    back and checked (``status[k]``: its fault, or :data:`STOPPED`). A template (``pack_state``,
    ``output_state``: the method's)."""
    hold_wheels_to(body_wheels(wheels, k), s[S_END * CHUNK + b], s[S_REF * CHUNK + b])
    x = _state(s, b)
    pack_state(x, state[k])  # noqa: F821
    steps[k] += 1
    if s[S_STOPPED * CHUNK + b] != 0.0:
        status[k] = STOPPED
    elif s[S_N * CHUNK + b] == 0.0:
        status[k] = SOUND  # no time to advance: the state is as it was
    else:
        q, w = output_state(x, _row9(s, S_J, b), params)  # noqa: F821
        status[k] = state_fault(q, w, max_step_s)


def begin_chunk(lo, count, s, state, steps, period_s, max_step_s, commands, wheels, dipole_max, dipole_scale,
                dipole, J, Jinv, params):
    """:func:`begin_body` for the ``count`` bodies from ``lo``: returns the most sub-steps any of them takes (a
    template: called once a chunk, so that its code is compiled once for every method and stage torque)."""
    substeps, step, t0, t1, n = 0, -1, 0.0, 0.0, 0
    for b in range(count):
        if steps[lo + b] != step:  # a mission's controller times (snapped as its grids are), once for bodies in step
            step = steps[lo + b]
            t0, t1 = grid_time(0.0, step, period_s), grid_time(0.0, step + 1, period_s)
            n = substep_count(t1 - t0, max_step_s) if t1 > t0 else 0  # a mission's advance over no time: no step
        begin_body(lo + b, b, s, t0, t1, n, state, commands, wheels, dipole_max, dipole_scale, dipole,  # noqa: F821
                   J, Jinv, params)
        substeps = max(substeps, n)
    return substeps


def after_chunk(lo, count, i, s, wheels, stops, max_step_s, params, env):
    """:func:`after_substep` for the ``count`` bodies from ``lo`` (a template, called as :func:`begin_chunk`)."""
    for b in range(count):
        after_substep(lo + b, b, i, s, wheels, stops, max_step_s, params, env)  # noqa: F821


def finish_chunk(lo, count, s, state, steps, wheels, max_step_s, params, status):
    """:func:`finish_body` for the ``count`` bodies from ``lo`` (a template, called as :func:`begin_chunk`)."""
    for b in range(count):
        finish_body(lo + b, b, s, state, steps, wheels, max_step_s, params, status)  # noqa: F821


def step_chunk(c, state, steps, period_s, max_step_s, wheel_cmd, dipole_cmd, tau_ext, axis, w_inertia, w_max_torque,
               w_max_speed, h, torque, torque_sat, speed_sat, requested, work, dipole_max, dipole_scale, dipole, J,
               Jinv, params, env_t, env_v, faces, switches, residual, stops, status, s, parts):
    """Chunk ``c`` of :func:`ensemble_step` (its arguments unpacked), in the scratch row ``s``: the bodies' commands,
    their sub-steps one at a time across the chunk, their ends; returns how many bodies it stepped. A template
    (the sub-step bound per method and stage torque: :func:`chunk_unit`). The body-by-body parts are units of
    their own, called at the addresses ``parts`` (:data:`BEGIN`, :data:`AFTER`, :data:`FINISH`:
    :func:`part_units`): compiled once for every stage torque, beside the chunk rather than inside it."""
    env = (env_t, env_v, faces, switches, residual)
    wheels = WheelBank(axis, w_inertia, w_max_torque, w_max_speed, h, torque, torque_sat, speed_sat, requested, work)
    commands = (wheel_cmd, dipole_cmd, tau_ext)
    lo = c * CHUNK
    count = min(CHUNK, state.shape[0] - lo)
    substeps = as_function(parts[BEGIN], 0, lo, count, s, state, steps, period_s, max_step_s, commands, wheels,
                           dipole_max, dipole_scale, dipole, J, Jinv, params)(
        lo, count, s, state, steps, period_s, max_step_s, commands, wheels, dipole_max, dipole_scale, dipole, J, Jinv,
        params)
    for i in range(substeps):
        substep_chunk(s, count, i, max_step_s, params, env)  # noqa: F821
        if stops_due(s, count, i, params) > 0:  # noqa: F821
            as_function(parts[AFTER], None, lo, count, i, s, wheels, stops, max_step_s, params, env)(
                lo, count, i, s, wheels, stops, max_step_s, params, env)
    as_function(parts[FINISH], None, lo, count, s, state, steps, wheels, max_step_s, params, status)(
        lo, count, s, state, steps, wheels, max_step_s, params, status)
    return count


def ensemble_step(chunk, state, steps, period_s, max_step_s, commands, wheels, dipole_max, dipole_scale, dipole, J,
                  Jinv, params, env_t, env_v, faces, switches, residual, stops, status, scratch, parts):
    """Advance every body one control period: :func:`step_chunk` of one method and stage torque (the unit at
    address ``chunk``, :func:`chunk_unit`) for every chunk, in parallel.

    Row ``k`` of each array is body ``k``: ``state`` the method's packed
    state at ``t_k = steps[k] period_s``; ``commands`` the period's
    ``(wheel torque, dipole, external torque)`` (N m, A m², N m: the
    arrays of an :class:`~attsim.ensemble.Commands`); ``wheels`` a
    :class:`~attsim.actuators.kernels.WheelBank` of ``(n, wheels)`` arrays
    (``axis`` and ``work`` shared); the magnetorquer's limits, the dipole
    applied (written); ``J`` and ``Jinv`` row-major 9-vectors; the shared
    environment (one orbit, each body at its own time: the table, the
    faces, the disturbances' switches, the residual dipole); ``stops`` the
    advance's speed-stop rows; ``status`` (written: the state's fault or
    :data:`STOPPED`); ``scratch`` one row of ``scratch_rows(wheels) * CHUNK``
    doubles per thread; ``parts`` the addresses of the chunk's body-by-body
    parts (:func:`part_units`). The chunks are numba's ``prange``: a
    thread's chunk runs in that thread's scratch row. The chunk is called
    through its address, so this one parallel loop, compiled once, serves
    every method and stage torque.
    """
    # numba's parallel loop takes arrays and plain scalars, not tuples of arrays: unpacked here
    wheel_cmd, dipole_cmd, tau_ext = commands
    axis, w_inertia, w_max_torque, w_max_speed, h, torque, torque_sat, speed_sat, requested, work = wheels
    for c in prange((state.shape[0] + CHUNK - 1) // CHUNK):
        s = scratch[get_thread_id()]
        as_function(chunk, 0, c, state, steps, period_s, max_step_s, wheel_cmd, dipole_cmd, tau_ext, axis, w_inertia,
                    w_max_torque, w_max_speed, h, torque, torque_sat, speed_sat, requested, work, dipole_max,
                    dipole_scale, dipole, J, Jinv, params, env_t, env_v, faces, switches, residual, stops, status,
                    s, parts)(c, state, steps, period_s, max_step_s, wheel_cmd, dipole_cmd, tau_ext, axis, w_inertia,
                              w_max_torque, w_max_speed, h, torque, torque_sat, speed_sat, requested, work,
                              dipole_max, dipole_scale, dipole, J, Jinv, params, env_t, env_v, faces, switches,
                              residual, stops, status, s, parts)


STEP_UNIT = Unit(ensemble_step, "ensemble_step", {})
"""The parallel loop over chunks, one unit for every method and stage torque (compiled with :data:`STEP_OPTIONS`)."""
STEP_OPTIONS = {"parallel": True}


def step_signatures(args) -> StepSignatures:
    """The signatures of :data:`STEP_UNIT`, of a chunk unit and of the chunk's parts (:func:`part_units`) for the
    arguments ``args`` of :func:`ensemble_step` after ``chunk``."""
    t = [typeof(a) for a in args]
    commands, wheels, scratch, parts = t[4], t[5], t[-2], t[-1]
    row = types.Array(scratch.dtype, 1, "C")
    chunk_args = [types.intp, *t[:4], *commands.types, *wheels.types, *t[6:-2], row, parts]
    # as the chunk passes them: the commands and the environment as plain tuples, the wheels as their bank
    held, env = types.BaseTuple.from_types(commands.types), types.BaseTuple.from_types(t[12:17])
    state, steps, max_step, params, stops, status = t[0], t[1], t[3], t[11], t[17], t[18]
    pair = (types.intp, types.intp)
    return StepSignatures(
        types.none(types.intp, *t), types.intp(*chunk_args),
        (types.intp(*pair, row, state, steps, t[2], max_step, held, wheels, *t[6:12]),
         types.none(*pair, types.intp, row, wheels, stops, max_step, params, env),
         types.none(*pair, row, state, steps, wheels, max_step, params, status)))


class StepSignatures(NamedTuple):
    """:func:`step_signatures`: the parallel loop's, a chunk's, and its parts' in the order of ``parts``."""

    step: object
    chunk: object
    parts: tuple


_STEPS: dict = {}
_BODY_PARTS: dict = {}


def _body_parts(integrator) -> dict:
    """The chunk's body-by-body parts (commands, stops, end) and its stop count bound to ``integrator``'s state
    kernels: they do not depend on its step nor on the stage torque, so every method with the same state kernels
    (rk4, rkn, rkmk4) shares them, under names carrying their digest. The three parts are units of their own
    (:func:`part_units`); the stop count is inlined in the chunk."""
    kernels = dict(unpack_state=integrator.unpack_state, pack_state=integrator.pack_state,
                   output_state=integrator.output_state, must_stop=integrator.must_stop)
    names = "|".join(f"{k.py_func.__module__}.{k.py_func.__name__}" for k in kernels.values())
    tag = hashlib.sha256(f"{names}|{code_digest(*kernels.values())}".encode()).hexdigest()[:12]
    if tag not in _BODY_PARTS:
        bodies = {part.__name__: njit(**_INLINED)(bind_globals(part, f"{part.__name__}_{tag}", **kernels))
                  for part in (begin_body, after_substep, finish_body)}
        units = tuple(Unit(part, f"{part.__name__}_{tag}", bodies) for part in (begin_chunk, after_chunk, finish_chunk))
        _BODY_PARTS[tag] = dict(units=units, stops_due=njit(**_INLINED)(
            bind_globals(stops_due, f"stops_due_{tag}", **kernels)))
    return _BODY_PARTS[tag]


def part_units(integrator) -> tuple:
    """The units of the chunk's parts for ``integrator``, in the order of ``parts``: :func:`begin_chunk`,
    :func:`after_chunk`, :func:`finish_chunk`."""
    return _body_parts(integrator)["units"]


def chunk_unit(integrator, environment: bool) -> Unit:
    """:func:`step_chunk` bound to ``integrator``'s kernels with the plant's stage torque: with ``environment``
    (a field or an environment table) :func:`~attsim.engine.plant.plant_torque`, without
    :func:`~attsim.engine.plant.plant_torque_no_environment` (what ``plant_torque`` returns for an empty table).
    The method's step bound to the stage torque is the very compiled copy a mission's advance calls (one name,
    one cache entry)."""
    key = (integrator.name, environment)
    if key not in _STEPS:
        torque = plant_torque if environment else plant_torque_no_environment
        suffix = f"{torque.__name__}_{code_digest(integrator.step, torque)}"  # as compiled_template names it
        step = bind_stage_torque(integrator.step, torque, compile_suffix=suffix)
        parts = dict(stops_due=_body_parts(integrator)["stops_due"], substep_chunk=njit(**_INLINED)(
            bind_globals(substep_chunk, f"substep_chunk_{integrator.name}_{suffix}", step=step)))
        _STEPS[key] = Unit(step_chunk, f"step_chunk_{integrator.name}_{torque.__name__}", parts)
    return _STEPS[key]


@njit(**_PARALLEL)
def body_field(state, steps, period_s, env_t, env_v, out):
    """The field of the shared table at each body's time, in its body axes (T), into ``out`` (N, 3): a
    magnetometer's truth (:func:`attsim.sensors.kernels.field_body`), zeros without a table."""
    for k in prange(state.shape[0]):
        q = (state[k, 0], state[k, 1], state[k, 2], state[k, 3])
        out[k, 0], out[k, 1], out[k, 2] = field_body(q, env_t, env_v, grid_time(0.0, steps[k], period_s))


# the sensors an ensemble samples (attsim.sensors.kernels): their kind codes and the columns of their parameters
GYRO, MAGNETOMETER = 0, 1
P_PERIOD, P_NOISE, P_BIAS_RW, P_QUANTIZATION, P_BIAS = 0, 1, 2, 3, 4  # P_BIAS: 3 columns (a magnetometer's)


@njit(**_PARALLEL)
def sample_sensors(state, steps, period_s, env_t, env_v, kinds, draws, parameters, bias, last_t, sampled, normals,
                   position, out):
    """Sample every body's sensors at its time now, as a mission's plain sensors sample (same kernels).

    Sensor ``s`` of body ``k``: ``kinds[s]`` (:data:`GYRO`,
    :data:`MAGNETOMETER`), ``draws[s]`` normals a sample, ``parameters[s]``
    (the ``P_*`` columns), ``bias[k, s]`` a gyro's walking bias (updated),
    ``last_t[k, s]`` its last propagation (NaN: never), ``normals[k, s]`` its
    block of standard normals and ``position[k, s]`` the next one unused
    (the caller refills an exhausted block from the body's stream). A body
    sampled already at this step (``sampled[k] == steps[k]``) keeps its
    readings, as a second read at one instant does. Readings into ``out[k, s]``.
    """
    for k in prange(state.shape[0]):
        if sampled[k] == steps[k]:
            continue
        sampled[k] = steps[k]
        t = grid_time(0.0, steps[k], period_s)
        q = (state[k, 0], state[k, 1], state[k, 2], state[k, 3])
        w = (state[k, 4], state[k, 5], state[k, 6])
        for s in range(kinds.shape[0]):
            p, d = position[k, s], draws[s]
            n = normals[k, s]
            z = (n[p], n[p + 1], n[p + 2], n[p + 3], n[p + 4], n[p + 5]) if d == 6 else \
                (n[p], n[p + 1], n[p + 2], 0.0, 0.0, 0.0) if d == 3 else (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
            par = parameters[s]
            if kinds[s] == GYRO:
                first = math.isnan(last_t[k, s])
                dt = par[P_PERIOD] if first else t - last_t[k, s]
                if dt > 0.0:
                    b = (bias[k, s, 0], bias[k, s, 1], bias[k, s, 2])
                    m, b = gyro_measure(w, b, dt, par[P_NOISE], 0.0 if first else par[P_BIAS_RW], z,
                                        par[P_QUANTIZATION])
                    bias[k, s, 0], bias[k, s, 1], bias[k, s, 2] = b
                    out[k, s, 0], out[k, s, 1], out[k, s, 2] = m
                    position[k, s] = p + d
                last_t[k, s] = t
            else:
                m = magnetometer_measure(field_body(q, env_t, env_v, t),
                                         (par[P_BIAS], par[P_BIAS + 1], par[P_BIAS + 2]), par[P_NOISE], z,
                                         par[P_QUANTIZATION])
                out[k, s, 0], out[k, s, 1], out[k, s, 2] = m
                position[k, s] = p + d
