"""The controllers' part of the compiled mission: their bank, one unit per law, the pointing columns.

One :class:`ControllerBank` row per controller. Each law class names its
unit (``loop_unit``): :func:`quaternion_pd`, :func:`magnetic_pd`,
:func:`unloading`, :func:`bdot`, or a user's :class:`NumbaController` law
bound into :func:`user_law` (one unit per law, compiled once). A cycle runs
as the Python objects' (:mod:`attsim.control.base`): sample the law's
sensors, decide nothing when one of them has no output (its actuators
hold), else decide with the kernels the objects use
(:mod:`attsim.control.kernels`, :mod:`attsim.control.allocation`) and
command the actuators (:mod:`attsim.actuators.loop`). The first attitude
law that runs writes the pointing columns (:func:`write_pointing`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._core.jit import LOOP_INLINED, njit
from .._core.units import Unit, deref
from ..actuators.kernels import wheel_speed, wheels_relative_momentum, wheels_total
from ..actuators.loop import (apply_body_torque, command_bars, command_body_torque, command_body_torque_later,
                             command_dipole, command_wheel)
from ..environment.table import R, V, lerp3, table_cell
from ..guidance.kernels import PARAMETER_LENGTH, error_angle_deg, error_vector, rate_error
from ..guidance.kernels import reference_now
from ..sensors.loop import VALID_COLUMN, sample
from .allocation import allocate, allocate_unscaled, null_space_torque, unloading_dipole
from ..environment.kernels import lvlh_quaternion_tuple
from .kernels import (add_wheel_momentum, bdot_direction, bdot_rate, body_rate_relative, dipole_feedforward,
                      dipole_for_torque, known, mrp_feedback, orbit_rate_inertial, pd_torque, pid_torque)

_JIT = dict(cache=True, nogil=True, error_model="numpy", **LOOP_INLINED)  # inlined in the units

__all__ = ["ControllerBank", "PART", "quaternion_pd", "mrp_feedback_cycle", "magnetic_pd", "unloading", "bdot",
           "user_law", "law_attitude", "stop_law", "apply_delayed", "USER_FAULT", "MAX_READING_WIDTH",
           "PARAMETER_INERTIA", "PARAMETER_WIDTH", "LAW_KI", "LAW_INTEGRAL_LIMIT", "LAW_BDOT_FORM",
           "LAW_CLIP", "LAW_KP", "LAW_KD", "LAW_GAIN", "LAW_COMPENSATION", "LAW_MOMENTUM", "APPLY_DELAYED",
           "pending_capacity", "user_law_reading", "STATE_WIDTH", "STATE_WHEEL_SPEED", "STATE_WHEEL_MOMENTUM",
           "STATE_DIPOLE", "STATE_Q", "STATE_BIAS", "STATE_RATE", "READS_WHEEL", "READS_MAGNETORQUER",
           "READS_ESTIMATOR", "USER_PARAMETERS", "USER_MEMORY", "USER_READINGS", "USER_COMMANDS", "USER_READS",
           "USER_BARS"]

# what a user's law unit returns when the law wrote an infinite command (the engine raises, naming it)
USER_FAULT = 40
MAX_READING_WIDTH = 6  # the widest sensor reading (a sun sensor's six detectors)
# a controller's parameters row: ten shared columns, what each means to each law in ControllerBank's docstring (the
# compensation or known torque three wide), then an MRPFeedback's inertia (9, row by row)
LAW_KI, LAW_INTEGRAL_LIMIT, LAW_BDOT_FORM, LAW_CLIP, LAW_KP, LAW_KD, LAW_GAIN, LAW_COMPENSATION = 0, 1, 2, 3, 4, 5, 6, 7
LAW_MOMENTUM = LAW_BDOT_FORM  # an unloading law's (a B-dot's column): 1.0 the wheels' momentum relative to the body
PARAMETER_INERTIA, PARAMETER_WIDTH = 10, 19
# a user's law's state row (attsim.control.numba_law), by what the entry of its ``reads`` is: a wheel's speed relative
# to the body (rad/s) and absolute momentum (N m s); a magnetorquer's applied dipole (A m², body axes, 3); an MEKF's
# attitude q_IB (scalar first, 4), gyro bias (rad/s, 3) and rate estimate (rad/s, 3)
STATE_WHEEL_SPEED, STATE_WHEEL_MOMENTUM = 0, 1
STATE_DIPOLE = 0
STATE_Q, STATE_BIAS, STATE_RATE = 0, 4, 7
STATE_WIDTH = 10
# ControllerBank.user_reads[c, i, 0]: what entry i of a user's law's reads is (its row in [c, i, 1])
READS_WHEEL, READS_MAGNETORQUER, READS_ESTIMATOR = 1, 2, 3
# ControllerBank.user_sizes columns: lengths of a user's law's parameters, memory, readings rows, commands, state rows,
# and how many bar dipoles it commands its magnetorquer (0: a body dipole of three)
USER_PARAMETERS, USER_MEMORY, USER_READINGS, USER_COMMANDS, USER_READS, USER_BARS = 0, 1, 2, 3, 4, 5


class ControllerBank(NamedTuple):
    """One row per controller. ``period_s``; ``clock_row`` its row of the engine's clock (whose ``active`` a mode
    switches); ``attitude_law`` 1.0 for a law with a pointing target. ``parameters``, by the ``LAW_*`` columns: a QPD's
    ki and integral limit (``LAW_KI``, ``LAW_INTEGRAL_LIMIT``), kp and kd (``LAW_KP``, ``LAW_KD``), a wheel law's
    allocation (``LAW_CLIP``: 1.0 clip, 0.0 scale), null-space gain (``LAW_GAIN``) and, on magnetorquers, its dipole
    compensation (``LAW_COMPENSATION``, 3); a B-dot's form (``LAW_BDOT_FORM``: 1.0 direction, 0.0 rate) and gain
    (``LAW_GAIN``), an unloading law's gain (``LAW_GAIN``) and momentum (``LAW_MOMENTUM``: 1.0 relative to the
    body, 0.0 total); a magnetic PD's kp, kd and compensation; an
    MRPFeedback's Ki, integral limit, K and P in the QPD's columns, its known torque in ``LAW_COMPENSATION`` and its
    inertia (``PARAMETER_INERTIA``, 9). ``memory``: a
    B-dot's previous field sample (0-2) and whether there is one (3); a QPD's integrated attitude error (0-2, rad s);
    an MRPFeedback's integral (0-2, N m s) and the time of its previous cycle (3); zeroed when a mode switch starts
    the controller again. ``roles``: sensor rows of the attitude, rate and field inputs (-1: the true state /
    none). ``sources``: estimator rows giving the attitude and the rate (-1: ``roles`` decide). ``samples``: the sensor
    rows sampled each cycle, -1 padded. ``target_kind``, ``target``: an attitude law's guidance target
    (:mod:`attsim.guidance.kernels` kind and parameters). ``allocation[c, j]``: the torque-to-motor row of wheel
    ``j``; ``null_projector[c]`` a QPD's null-space projector over the mission's wheels (zero when it manages no null
    space); ``wheel_scratch[c]`` its working rows (null-space torque, motor torque, speed) and each wheel's speed
    target (row 3, filled once), so a cycle allocates nothing. ``magnetorquer``: its row or -1; ``wheel_order``: the
    wheel rows a QPD or a user's law commands, in its order (-1 padded); ``body_torque``: its body-torque row or -1;
    ``feedforward``: the magnetorquer row whose torque a wheel law feeds forward (its field the ``roles`` field
    sensor's), or -1.
    ``phase_s``, ``delay_s``: a law's first cycle and its command delay; with a delay, ``pending[c, s]`` holds the
    commands of cycle ``pending_k[c, s]`` (``s = k % capacity``; per wheel in ``wheel_order``'s order, or a vector in
    0-2; NaN: none) until :func:`apply_delayed` applies them; a law driving several kinds keeps its commands' layout
    there: the wheels', then a dipole's three (or a user's law's bar dipoles), then a body torque's three
    (:func:`command_offsets`). A user's law:
    ``user_sizes`` (by the ``USER_*`` columns: lengths of its parameters, memory, readings rows, commands and state
    rows, and its bar dipoles when it drives its magnetorquer bar by bar), its arrays
    (:mod:`attsim.control.numba_law`), and what its state rows read: ``user_reads[c, i]`` = (a ``READS_*`` kind, that
    component's row), filled into ``user_state[c, i]`` by the ``STATE_*`` columns."""

    period_s: np.ndarray
    clock_row: np.ndarray
    attitude_law: np.ndarray
    parameters: np.ndarray
    memory: np.ndarray
    roles: np.ndarray
    sources: np.ndarray
    samples: np.ndarray
    target_kind: np.ndarray
    target: np.ndarray
    allocation: np.ndarray
    null_projector: np.ndarray
    wheel_scratch: np.ndarray
    magnetorquer: np.ndarray
    wheel_order: np.ndarray
    body_torque: np.ndarray
    feedforward: np.ndarray
    phase_s: np.ndarray
    delay_s: np.ndarray
    pending: np.ndarray
    pending_k: np.ndarray
    user_sizes: np.ndarray
    user_parameters: np.ndarray
    user_memory: np.ndarray
    user_readings: np.ndarray
    user_commands: np.ndarray
    user_reads: np.ndarray
    user_state: np.ndarray


@njit(**_JIT)
def _sample(pw, samplers, t, c):
    """Sample controller ``c``'s sensors at ``t``; False when one of them has no output (the law then holds)."""
    world = deref(pw)
    controllers, sensors = world.controllers, world.sensors
    for i in range(controllers.samples.shape[1]):
        s = controllers.samples[c, i]
        if s >= 0:
            sample(samplers, pw, t, s)
    for i in range(controllers.samples.shape[1]):
        s = controllers.samples[c, i]
        if s >= 0 and sensors.output[s, VALID_COLUMN] == 0.0:
            return False
    return True


@njit(**_JIT)
def _reading3(sensors, s, offset):
    o = sensors.output[s]
    return (o[offset], o[offset + 1], o[offset + 2])


@njit(**_JIT)
def law_attitude(pw, c):
    """The attitude controller ``c`` acts on: its estimator's (``sources``), its attitude sensor's latest sample
    (``roles``; NaN before the first), or the true one (:meth:`attsim.QuaternionPD.attitude_seen`)."""
    world = deref(pw)
    controllers = world.controllers
    e = controllers.sources[c, 0]
    if e >= 0:
        eq = world.estimators.q[e]
        return (eq[0], eq[1], eq[2], eq[3])
    s = controllers.roles[c, 0]
    if s >= 0:
        o = world.sensors.output[s]
        return (o[0], o[1], o[2], o[3])
    v = world.plant.q_w
    return (v[0], v[1], v[2], v[3])


@njit(**_JIT)
def _law_rate(pw, c):
    world = deref(pw)
    controllers = world.controllers
    e = controllers.sources[c, 1]
    if e >= 0:
        ew = world.estimators.w_est[e]
        return (ew[0], ew[1], ew[2])
    s = controllers.roles[c, 1]
    if s >= 0:
        return _reading3(world.sensors, s, 0)
    v = world.plant.q_w
    return (v[4], v[5], v[6])


@njit(**_JIT)
def _command_wheels(pw, c, tau, t):
    """A QPD's wheel torques: null-space part, minimum-norm allocation scaled to the limits or left for each wheel
    to clip (attsim.allocation)."""
    world = deref(pw)
    controllers, wheels = world.controllers, world.actuators.wheels
    n = wheels.axis.shape[0]
    scratch = controllers.wheel_scratch[c]
    null, motor, speeds, targets = scratch[0, :n], scratch[1, :n], scratch[2, :n], scratch[3, :n]
    p = controllers.parameters[c]
    w = (world.plant.q_w[4], world.plant.q_w[5], world.plant.q_w[6])
    if p[LAW_GAIN] > 0.0:
        for j in range(n):  # targets: filled per wheel when the banks were built
            speeds[j] = wheel_speed(wheels, j, wheels.h_Nms[j], w)
        null_space_torque(controllers.null_projector[c], speeds, targets, p[LAW_GAIN], null)
    if p[LAW_CLIP] != 0.0:  # per-wheel clipping: each wheel clips its own command
        allocate_unscaled(controllers.allocation[c], tau, null, motor)
    else:
        allocate(controllers.allocation[c], tau, null, wheels.max_torque_Nm, motor)
    for i in range(controllers.wheel_order.shape[1]):  # in the controller's order, as the Python path logs them
        j = controllers.wheel_order[c, i]
        if j >= 0:
            _to_wheel(pw, c, i, j, motor[j], t)


@njit(**_JIT)
def _fed_forward(pw, c, tau):
    """``tau`` less the torque ``m × B`` of the magnetorquers controller ``c`` feeds forward (their dipole held now,
    the field its magnetometer read), or ``tau`` itself when it feeds none forward."""
    world = deref(pw)
    controllers = world.controllers
    f = controllers.feedforward[c]
    if f < 0:
        return tau
    m = world.actuators.magnetorquers.dipole_Am2[f]
    return dipole_feedforward(tau, (m[0], m[1], m[2]), _reading3(world.sensors, controllers.roles[c, 2], 0))


@njit(**_JIT)
def _compensated_dipole(pw, c, tau, t):
    world = deref(pw)
    controllers = world.controllers
    p = controllers.parameters[c]
    m = dipole_for_torque(_reading3(world.sensors, controllers.roles[c, 2], 0), tau)
    k = LAW_COMPENSATION
    _to_vector(pw, c, (m[0] - p[k], m[1] - p[k + 1], m[2] - p[k + 2]), t)


@njit(**_JIT)
def _slot(controllers, c, t):
    """The pending slot of controller ``c``'s decision at ``t`` (cycle ``k``), emptied when it held an older
    cycle's commands."""
    k = int(round((t - controllers.phase_s[c]) / controllers.period_s[c]))
    s = k % controllers.pending_k.shape[1]
    if controllers.pending_k[c, s] != k:
        controllers.pending_k[c, s] = k
        for i in range(controllers.pending.shape[2]):
            controllers.pending[c, s, i] = np.nan
    return s


@njit(**_JIT)
def _to_wheel(pw, c, i, j, value, t):
    """Controller ``c``'s torque for its ``i``-th wheel (row ``j``): commanded now, or kept for its delay."""
    controllers = deref(pw).controllers
    if controllers.delay_s[c] > 0.0:
        controllers.pending[c, _slot(controllers, c, t), i] = value
    else:
        command_wheel(pw, j, value, t)


@njit(**_JIT)
def _vector_now(pw, c, v, t):
    """Controller ``c``'s vector command applied: a torque to its body-torque actuator, else a dipole."""
    controllers = deref(pw).controllers
    if controllers.body_torque[c] >= 0:
        command_body_torque(pw, controllers.body_torque[c], v, t)
    else:
        command_dipole(pw, controllers.magnetorquer[c], v, t)


@njit(**_JIT)
def command_offsets(controllers, c):
    """Where controller ``c``'s commands sit in its command layout: ``(wheels, dipole, torque)``, the number of its
    wheels and the first entries of its dipole (three, or ``USER_BARS`` bar dipoles) and of its body torque (-1: it
    drives none)."""
    n = 0
    for i in range(controllers.wheel_order.shape[1]):
        if controllers.wheel_order[c, i] >= 0:
            n += 1
    bars = controllers.user_sizes[c, USER_BARS]
    dipole = n if controllers.magnetorquer[c] >= 0 else -1
    torque = n + ((bars if bars > 0 else 3) if dipole >= 0 else 0) if controllers.body_torque[c] >= 0 else -1
    return n, dipole, torque


@njit(**_JIT)
def _to_vector(pw, c, v, t):
    """Controller ``c``'s dipole or body torque (a built-in law drives one of them): applied now, or kept for its
    delay."""
    controllers = deref(pw).controllers
    if controllers.delay_s[c] > 0.0:
        s = _slot(controllers, c, t)
        _, dipole, torque = command_offsets(controllers, c)
        k = torque if torque >= 0 else dipole
        controllers.pending[c, s, k], controllers.pending[c, s, k + 1], controllers.pending[c, s, k + 2] = v
        if torque >= 0:  # the body torque's commanded columns show it from now
            command_body_torque_later(pw, controllers.body_torque[c], v, t)
    else:
        _vector_now(pw, c, v, t)


@njit(**_JIT)
def _known(values, k, count):
    for i in range(count):
        if np.isnan(values[k + i]):
            return False
    return True


@njit(**_JIT)
def _partly_known(values, k, count):
    """Whether entries ``k ... k + count - 1`` are some NaN and some not: a vector neither commanded nor held."""
    nan = 0
    for i in range(count):
        if np.isnan(values[k + i]):
            nan += 1
    return 0 < nan < count


@njit(**_JIT)
def _apply_layout(pw, c, values, t, delayed):
    """Controller ``c``'s commands laid out as :func:`command_offsets` says, applied now (NaN entries hold: a vector
    whole, a user's law having been refused one partly NaN); ``delayed``: decided ``delay_s`` ago (a body torque
    noted as commanded then)."""
    controllers = deref(pw).controllers
    _, dipole, torque = command_offsets(controllers, c)
    for i in range(controllers.wheel_order.shape[1]):
        j = controllers.wheel_order[c, i]
        if j >= 0 and not np.isnan(values[i]):
            command_wheel(pw, j, values[i], t)
    bars = controllers.user_sizes[c, USER_BARS]
    if dipole >= 0 and bars > 0:  # a user's law driving its magnetorquer bar by bar
        if _known(values, dipole, bars):
            command_bars(pw, controllers.magnetorquer[c], values, dipole, bars, t)
    elif dipole >= 0 and _known(values, dipole, 3):
        command_dipole(pw, controllers.magnetorquer[c], (values[dipole], values[dipole + 1], values[dipole + 2]), t)
    if torque >= 0 and _known(values, torque, 3):
        tau = (values[torque], values[torque + 1], values[torque + 2])
        if delayed:
            apply_body_torque(pw, controllers.body_torque[c], tau, t)
        else:
            command_body_torque(pw, controllers.body_torque[c], tau, t)


def apply_delayed(pw, samplers, t, c):
    """Controller ``c``'s commands of the cycle ``delay_s`` ago, applied now (NaN entries hold)."""
    world = deref(pw)
    controllers = world.controllers
    k = int(round((t - (controllers.phase_s[c] + controllers.delay_s[c])) / controllers.period_s[c]))
    s = k % controllers.pending_k.shape[1]
    if k < 0 or controllers.pending_k[c, s] != k:
        return 0  # that cycle decided nothing: the actuators hold
    controllers.pending_k[c, s] = -1
    _apply_layout(pw, c, controllers.pending[c, s], t, True)  # wheels in the law's order, a dipole, a torque
    return 0


def pending_capacity(laws) -> int:
    """Pending slots per controller: the most cycles any law's commands wait, plus the one deciding."""
    return max([int(np.ceil(law.command_delay_s / law.period_s)) + 1 for law in laws] + [1])


def quaternion_pd(pw, samplers, t, c):
    """A :class:`~attsim.QuaternionPD`'s cycle: PD (or PID) on the error to its target, to wheels or
    magnetorquers."""
    world = deref(pw)
    if not _sample(pw, samplers, t, c):
        return 0
    controllers = world.controllers
    q_in, w_in = law_attitude(pw, c), _law_rate(pw, c)
    if not known(q_in, w_in):
        return 0  # no estimate yet: the law holds its commands
    p = controllers.parameters[c]
    env = world.environment
    q_ref, w_ref, _ = reference_now(controllers.target_kind[c], controllers.target[c], t, env.env_t, env.env_v)
    if p[LAW_KI] > 0.0:  # integral feedback (ki, limit): memory 0-2 holds the integrated error
        mem = controllers.memory[c]
        tau, z = pid_torque(q_ref, q_in, rate_error(q_in, q_ref, w_in, w_ref), p[LAW_KP], p[LAW_KD],
                            p[LAW_KI], (mem[0], mem[1], mem[2]), controllers.period_s[c], p[LAW_INTEGRAL_LIMIT])
        mem[0], mem[1], mem[2] = z
    else:
        tau = pd_torque(q_ref, q_in, rate_error(q_in, q_ref, w_in, w_ref), p[LAW_KP], p[LAW_KD])
    if controllers.body_torque[c] >= 0:
        _to_vector(pw, c, _fed_forward(pw, c, tau), t)
    elif controllers.magnetorquer[c] < 0:
        _command_wheels(pw, c, _fed_forward(pw, c, tau), t)
    else:
        _compensated_dipole(pw, c, tau, t)
    return 0


def mrp_feedback_cycle(pw, samplers, t, c):
    """An :class:`~attsim.MRPFeedback`'s cycle: Basilisk's ``mrpFeedback`` on the error to its target, to wheels."""
    world = deref(pw)
    if not _sample(pw, samplers, t, c):
        return 0
    controllers, wheels = world.controllers, world.actuators.wheels
    q_in, w_in = law_attitude(pw, c), _law_rate(pw, c)
    if not known(q_in, w_in):
        return 0
    p, mem = controllers.parameters[c], controllers.memory[c]
    env = world.environment
    q_ref, w_ref, wd_ref = reference_now(controllers.target_kind[c], controllers.target[c], t, env.env_t, env.env_v)
    w_true = (world.plant.q_w[4], world.plant.q_w[5], world.plant.q_w[6])
    h = (0.0, 0.0, 0.0)
    for i in range(controllers.wheel_order.shape[1]):  # the law's wheels, in its order (as the Python path sums)
        j = controllers.wheel_order[c, i]
        if j >= 0:
            a = wheels.axis[j]
            h = add_wheel_momentum(h, (a[0], a[1], a[2]), wheels.inertia_kg_m2[j],
                                   wheel_speed(wheels, j, wheels.h_Nms[j], w_true), w_in)
    i0 = PARAMETER_INERTIA
    inertia = (p[i0], p[i0 + 1], p[i0 + 2], p[i0 + 3], p[i0 + 4], p[i0 + 5], p[i0 + 6], p[i0 + 7], p[i0 + 8])
    dt = 0.0 if mem[3] == 0.0 else t - mem[3]  # Basilisk's priorTime: nothing is added after a cycle at t = 0
    tau, s = mrp_feedback(q_in, w_in, q_ref, w_ref, wd_ref, inertia, h, (p[LAW_KP], p[LAW_KD], p[LAW_KI],
                          p[LAW_INTEGRAL_LIMIT]), (mem[0], mem[1], mem[2]), dt,
                          (p[LAW_COMPENSATION], p[LAW_COMPENSATION + 1], p[LAW_COMPENSATION + 2]))
    mem[0], mem[1], mem[2], mem[3] = s[0], s[1], s[2], t
    tau = _fed_forward(pw, c, tau)
    if controllers.body_torque[c] >= 0:
        _to_vector(pw, c, tau, t)
    else:
        _command_wheels(pw, c, tau, t)
    return 0


def magnetic_pd(pw, samplers, t, c):
    """A :class:`~attsim.MagneticPD`'s cycle: PD toward the orbit frame, as a dipole through the field."""
    world = deref(pw)
    if not _sample(pw, samplers, t, c):
        return 0
    controllers = world.controllers
    q_in, w_in = law_attitude(pw, c), _law_rate(pw, c)
    if not known(q_in, w_in):
        return 0
    p = controllers.parameters[c]
    env = world.environment
    k, f = table_cell(env.env_t, t)
    r, v = lerp3(env.env_v, k, f, R), lerp3(env.env_v, k, f, V)
    tau = pd_torque(lvlh_quaternion_tuple(r, v), q_in, body_rate_relative(q_in, w_in, orbit_rate_inertial(r, v)),
                    p[LAW_KP], p[LAW_KD])
    _compensated_dipole(pw, c, tau, t)
    return 0


def unloading(pw, samplers, t, c):
    """A :class:`~attsim.MomentumUnloading`'s cycle: ``m = k (h × B) / |B|²`` from the wheels' momentum (total, or
    relative to the body)."""
    world = deref(pw)
    if not _sample(pw, samplers, t, c):
        return 0
    controllers = world.controllers
    b = _reading3(world.sensors, controllers.roles[c, 2], 0)
    wheels = world.actuators.wheels
    if controllers.parameters[c, LAW_MOMENTUM] != 0.0:
        h = wheels_relative_momentum(wheels, (world.plant.q_w[4], world.plant.q_w[5], world.plant.q_w[6]))
    else:
        h = wheels_total(wheels)[1]
    _to_vector(pw, c, unloading_dipole(b, h, controllers.parameters[c, LAW_GAIN]), t)
    return 0


def bdot(pw, samplers, t, c):
    """A :class:`~attsim.BDot`'s cycle: the field's difference over one period (the first cycle only samples)."""
    world = deref(pw)
    controllers = world.controllers
    if not _sample(pw, samplers, t, c):
        controllers.memory[c, 3] = 0.0  # the next good sample starts the difference afresh
        return 0
    p = controllers.parameters[c]
    b = _reading3(world.sensors, controllers.roles[c, 2], 0)
    mem = controllers.memory[c]
    if mem[3] != 0.0:
        previous = (mem[0], mem[1], mem[2])
        if p[LAW_BDOT_FORM] == 0.0:
            m = bdot_rate(b, previous, p[LAW_GAIN], controllers.period_s[c])
        else:
            m = bdot_direction(b, previous, p[LAW_GAIN], controllers.period_s[c])
        _to_vector(pw, c, m, t)
    mem[0], mem[1], mem[2], mem[3] = b[0], b[1], b[2], 1.0
    return 0


@njit(**_JIT)
def _fill_readings(pw, c):
    """Controller ``c``'s latest readings into ``user_readings[c]``, a row per sensor (zero past each sensor's
    width). In place: a unit compiles without reference counting, so no helper returns a view of the banks."""
    world = deref(pw)
    controllers, sensors = world.controllers, world.sensors
    readings = controllers.user_readings[c]
    for i in range(controllers.samples.shape[1]):
        s = controllers.samples[c, i]
        if s >= 0:
            for a in range(MAX_READING_WIDTH):
                readings[i, a] = sensors.output[s, a] if a < sensors.axes[s] else 0.0


@njit(**_JIT)
def _begin_user_cycle(pw, c):
    """Before controller ``c``'s law is called: its readings filled (:func:`_fill_readings`) and its commands set to
    NaN (what the law leaves NaN holds). In place, as :func:`_fill_readings`."""
    _fill_readings(pw, c)
    controllers = deref(pw).controllers
    controllers.user_commands[c, : controllers.user_sizes[c, USER_COMMANDS]] = np.nan


@njit(**_JIT)
def _fill_state(pw, c):
    """Controller ``c``'s state rows (``reads``) into ``user_state[c]``, by the ``STATE_*`` columns, as they are
    now."""
    world = deref(pw)
    controllers, wheels = world.controllers, world.actuators.wheels
    state = controllers.user_state[c]
    w = (world.plant.q_w[4], world.plant.q_w[5], world.plant.q_w[6])
    for i in range(controllers.user_sizes[c, USER_READS]):
        kind, row = controllers.user_reads[c, i, 0], controllers.user_reads[c, i, 1]
        if kind == READS_WHEEL:
            state[i, STATE_WHEEL_SPEED] = wheel_speed(wheels, row, wheels.h_Nms[row], w)
            state[i, STATE_WHEEL_MOMENTUM] = wheels.h_Nms[row]
        elif kind == READS_MAGNETORQUER:
            for a in range(3):
                state[i, STATE_DIPOLE + a] = world.actuators.magnetorquers.dipole_Am2[row, a]
        elif kind == READS_ESTIMATOR:
            estimators = world.estimators
            for a in range(4):
                state[i, STATE_Q + a] = estimators.q[row, a]
            for a in range(3):
                state[i, STATE_BIAS + a] = estimators.bias[row, a]
                state[i, STATE_RATE + a] = estimators.w_est[row, a]


@njit(**_JIT)
def _user_applied(pw, c, commands, t):
    """What a user's law wrote, applied now or kept for its delay; :data:`USER_FAULT` for an infinite entry or a
    vector (the dipole, the bars' dipoles, the body torque) with some entries NaN and some not."""
    controllers = deref(pw).controllers
    for i in range(commands.shape[0]):
        if np.isinf(commands[i]):
            return USER_FAULT
    _, dipole, torque = command_offsets(controllers, c)
    bars = controllers.user_sizes[c, USER_BARS]
    if (dipole >= 0 and _partly_known(commands, dipole, bars if bars > 0 else 3)) or \
            (torque >= 0 and _partly_known(commands, torque, 3)):
        return USER_FAULT
    if controllers.delay_s[c] > 0.0:
        pending = controllers.pending[c, _slot(controllers, c, t)]
        for i in range(commands.shape[0]):
            pending[i] = commands[i]
        if torque >= 0 and _known(commands, torque, 3):  # the body torque's commanded columns show it from now
            command_body_torque_later(pw, controllers.body_torque[c],
                                      (commands[torque], commands[torque + 1], commands[torque + 2]), t)
    else:
        _apply_layout(pw, c, commands, t, False)
    return 0


def user_law(pw, samplers, t, c):
    """A :class:`~attsim.NumbaController`'s cycle: call its law (bound as ``user_decide``), apply what it wrote.

    NaN holds a command; an infinite one, or a vector partly NaN, faults the unit (the engine raises, naming the
    controller).
    """
    world = deref(pw)
    if not _sample(pw, samplers, t, c):
        return 0
    _begin_user_cycle(pw, c)
    controllers = world.controllers
    sizes = controllers.user_sizes[c]
    commands = controllers.user_commands[c, : sizes[USER_COMMANDS]]
    user_decide(t, controllers.user_readings[c, : sizes[USER_READINGS]],  # noqa: F821 - bound per law
                controllers.user_parameters[c, : sizes[USER_PARAMETERS]],
                controllers.user_memory[c, : sizes[USER_MEMORY]], commands)
    return _user_applied(pw, c, commands, t)


def user_law_reading(pw, samplers, t, c):
    """:func:`user_law` for a law that reads state besides its sensors (``reads``): it is called with the state rows
    as its third argument."""
    world = deref(pw)
    if not _sample(pw, samplers, t, c):
        return 0
    _begin_user_cycle(pw, c)
    _fill_state(pw, c)
    controllers = world.controllers
    sizes = controllers.user_sizes[c]
    commands = controllers.user_commands[c, : sizes[USER_COMMANDS]]
    user_decide(t, controllers.user_readings[c, : sizes[USER_READINGS]],  # noqa: F821 - bound per law
                controllers.user_state[c, : max(sizes[USER_READS], 1)],
                controllers.user_parameters[c, : sizes[USER_PARAMETERS]],
                controllers.user_memory[c, : sizes[USER_MEMORY]], commands)
    return _user_applied(pw, c, commands, t)


@njit(**_JIT)
def stop_law(pw, c, t):
    """Controller ``c`` stops (its mode left): its actuators' commands go to zero."""
    world = deref(pw)
    controllers = world.controllers
    for i in range(controllers.wheel_order.shape[1]):  # every wheel law's wheels, in its order
        if controllers.wheel_order[c, i] >= 0:
            command_wheel(pw, controllers.wheel_order[c, i], 0.0, t)
    if controllers.magnetorquer[c] >= 0:
        command_dipole(pw, controllers.magnetorquer[c], (0.0, 0.0, 0.0), t)
    if controllers.body_torque[c] >= 0:
        command_body_torque(pw, controllers.body_torque[c], (0.0, 0.0, 0.0), t)


@njit(**_JIT)
def _pointing_now(pw):
    """The first attitude law running now (mission order), or -1 when none runs."""
    world = deref(pw)
    controllers = world.controllers
    for c in range(controllers.period_s.shape[0]):
        if controllers.attitude_law[c] != 0.0 and world.clock.active[controllers.clock_row[c]] != 0.0:
            return c
    return -1


def write_pointing(pw, t, c0, col):
    """The pointing columns (:func:`attsim.guidance.pointing.pointing_values`) of the attitude law running now:
    ``q_ref``, the error angle (deg) and the error vector (NaN while none runs)."""
    world = deref(pw)
    row = world.buffers.rows[world.buffers.counts[0]]
    c = _pointing_now(pw)
    if c < 0:
        for i in range(8):
            row[col + i] = np.nan
        return col + 8
    env = world.environment
    v = world.plant.q_w
    q = (v[0], v[1], v[2], v[3])
    q_ref, _, _ = reference_now(world.controllers.target_kind[c], world.controllers.target[c], t, env.env_t,
                                env.env_v)
    e = error_vector(q, q_ref)
    row[col], row[col + 1], row[col + 2], row[col + 3] = q_ref
    row[col + 4] = error_angle_deg(q, q_ref)
    row[col + 5], row[col + 6], row[col + 7] = e
    return col + 8


def no_user_decide(t_s, readings, parameters, memory, commands):
    """The law bound into :func:`user_law` before a user's is (never called)."""
    return None


QUATERNION_PD = Unit(quaternion_pd, "quaternion_pd", {})
MRP_FEEDBACK = Unit(mrp_feedback_cycle, "mrp_feedback", {})
MAGNETIC_PD = Unit(magnetic_pd, "magnetic_pd", {})
UNLOADING = Unit(unloading, "unloading", {})
BDOT = Unit(bdot, "bdot", {})
WRITE_POINTING = Unit(write_pointing, "write_pointing", {})
APPLY_DELAYED = Unit(apply_delayed, "apply_delayed", {})


def user_law_unit(law_function, tag: str, reads_state: bool = False) -> Unit:
    """The unit of a user's law: :func:`user_law` (or, when it reads state, :func:`user_law_reading`) with
    ``user_decide`` bound to ``law_function`` (a compiled function; ``tag``, a digest of the law's code, names it in
    the disk cache)."""
    if reads_state:
        return Unit(user_law_reading, "user_law_reading", {"user_decide": law_function}, tag)
    return Unit(user_law, "user_law", {"user_decide": law_function}, tag)


class ControlPart:
    """The controllers in the compiled mission (the protocol: :class:`attsim.engine.component.LoopPart`).

    A law class gives its unit (``loop_unit``), its inputs (``loop_inputs()``: the attitude, rate and field
    sources, each a sensor, an estimator or None for the true state / none), fills the rest of its row
    (``fill_loop_row(bank, c, build)``) and takes back its state at the end (``take_loop_row(bank, c)``).
    """

    slot = "controllers"
    bank_type = ControllerBank

    def compiles(self, law, mission) -> bool:
        return getattr(law, "loop_unit", None) is not None

    def empty(self) -> ControllerBank:
        return self.build([], None)

    def schedule(self, laws, build):
        """Each law's cycle on the clock (stopped by its mode when it does not run), drawing from its sensors."""
        clock = []
        for law in laws:  # a delayed law's application first: its clock row is then the cycle's (the last given)
            if law.command_delay_s > 0.0:
                clock.append(build.clock_entry("control", law, APPLY_DELAYED, build.row(law), [], law.active)._replace(
                    phase_s=law.phase_s + law.command_delay_s))
            clock.append(build.clock_entry("control", law, law.loop_unit, build.row(law), list(law.sensors),
                                           law.active))
        return clock, []

    def events_per_instant(self, laws, build) -> int:
        """Every law's commands' saturation changes at one instant."""
        return len(laws) * (2 * len(build.spacecraft.wheel_names) + 1)

    def build(self, laws, build) -> ControllerBank:
        n = len(laws)
        n_wheels = max(len(build.spacecraft.wheel_names), 1) if build is not None else 1
        width = max([len(c.sensors) for c in laws] + [1])
        users = [c for c in laws if getattr(c, "memory_size", None) is not None]
        reads = max([len(c.reads) for c in users] + [1])
        dipole_width = max([c.command_layout.bars for c in users] + [3])  # a dipole, or a user's law's bars
        bank = ControllerBank(
            period_s=np.array([c.period_s for c in laws], dtype=float),
            clock_row=np.array([build.clock_row(c) for c in laws], dtype=np.int64),
            attitude_law=np.array([1.0 if getattr(c, "pointing", None) is not None else 0.0 for c in laws]),
            parameters=np.zeros((n, PARAMETER_WIDTH)), memory=np.zeros((n, 4)),
            roles=np.full((n, 3), -1, dtype=np.int64),
            sources=np.full((n, 2), -1, dtype=np.int64), samples=np.full((n, width), -1, dtype=np.int64),
            target_kind=np.zeros(n, dtype=np.int64), target=np.zeros((n, PARAMETER_LENGTH)),
            allocation=np.zeros((n, n_wheels, 3)), null_projector=np.zeros((n, n_wheels, n_wheels)),
            wheel_scratch=np.zeros((n, 4, n_wheels)), magnetorquer=np.full(n, -1, dtype=np.int64),
            wheel_order=np.full((n, n_wheels), -1, dtype=np.int64), body_torque=np.full(n, -1, dtype=np.int64),
            feedforward=np.full(n, -1, dtype=np.int64),
            phase_s=np.array([c.phase_s for c in laws], dtype=float),
            delay_s=np.array([c.command_delay_s for c in laws], dtype=float),
            pending=np.full((n, pending_capacity(laws), n_wheels + dipole_width + 3), np.nan),
            pending_k=np.full((n, pending_capacity(laws)), -1, dtype=np.int64),
            user_sizes=np.zeros((n, 6), dtype=np.int64),
            user_parameters=np.zeros((n, max([c.parameters.size for c in users] + [1]))),
            user_memory=np.zeros((n, max([c.memory_size for c in users] + [1]))),
            user_readings=np.zeros((n, width, MAX_READING_WIDTH)),
            user_commands=np.zeros((n, max([c.command_width for c in users] + [1]))),
            user_reads=np.zeros((n, reads, 2), dtype=np.int64), user_state=np.zeros((n, reads, STATE_WIDTH)))
        for c, law in enumerate(laws):
            for i, sensor in enumerate(law.sensors):
                bank.samples[c, i] = build.row(sensor)
            for i, source in enumerate(law.loop_inputs()):
                if source is None:
                    continue
                if source.loop_part.slot == "estimators":
                    bank.sources[c, i] = build.row(source)
                else:
                    bank.roles[c, i] = build.row(source)
            law.fill_loop_row(bank, c, build)
        return bank

    def units(self) -> list:
        """The controllers' own units (the pointing columns' writer, the delayed commands' application), with the
        kind of their signature."""
        return [(WRITE_POINTING, "write", {}), (APPLY_DELAYED, "at_time", {})]

    def class_units(self, cls) -> list:
        """The unit a law class cycles with (a user's law makes its own, per law)."""
        unit = cls.__dict__.get("loop_unit")
        return [(unit, "at_time")] if isinstance(unit, Unit) else []

    def writer(self, law, build):
        return (WRITE_POINTING, build.row(law)) if getattr(law, "writes_pointing", False) else None

    def hand_back(self, bank: ControllerBank, laws, build) -> None:
        for c, law in enumerate(laws):
            law.take_loop_row(bank, c)

    def event(self, recorder, t: float, kind: int, what: int, index: int, values, build) -> bool:
        return False  # the laws' commands log the actuators' events

    def fault(self, bank, laws, row: int, t: float, build) -> Exception | None:
        """A user's law wrote an infinite command: its own error, naming it."""
        law = laws[row]
        return law.loop_fault(bank, row, t)


PART = ControlPart()
