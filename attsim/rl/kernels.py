"""The tasks' per-step arithmetic, compiled: every environment's observation, reward and end in one pass.

What :mod:`attsim.rl.tasks` defines (its module docstring), over a whole
:class:`~attsim.Ensemble` at once: one compiled call a step, whatever the
number of environments, where numpy would make a temporary array (and a
strided, casting pass) for every term. A body's numbers do not depend on how
many bodies are stepped with it, so a single environment and a vector
environment give the same observations and rewards to the bit.
"""

from __future__ import annotations

import math

from .._core.jit import JIT, LOOP_INLINED, njit
from .._core.timegrid import grid_time
from ..actuators.kernels import relative_speed

__all__ = ["error_quaternion", "error_quaternions", "outcomes", "infos", "MRP", "QUATERNION", "RATE", "WHEELS", "FIELD",
           "W_ATTITUDE", "W_RATE", "W_MOMENTUM", "W_ACTION", "SCALE_RATE", "SCALE_FIELD", "SCALE_MOMENTUM",
           "RATE_GOAL"]

# the observation's parts (attsim.rl.tasks.OBSERVATIONS), by code: the attitude error as MRPs or a quaternion
MRP, QUATERNION, RATE, WHEELS, FIELD = 0, 1, 2, 3, 4
# the reward's weights, by index; the scales: rate (rad/s), field (T), the wheels' largest momentum (N m s), and the
# rate under which an episode ends (rad/s; 0: none)
W_ATTITUDE, W_RATE, W_MOMENTUM, W_ACTION = 0, 1, 2, 3
SCALE_RATE, SCALE_FIELD, SCALE_MOMENTUM, RATE_GOAL = 0, 1, 2, 3

_INLINED = dict(JIT, **LOOP_INLINED)


@njit(**_INLINED)
def error_quaternion(q, target):
    """``q_target* ⊗ q_IB``, its sign chosen so that ``w >= 0`` (the shorter rotation); 4-tuples, scalar first."""
    w, x, y, z = q
    tw, tx, ty, tz = target[0], -target[1], -target[2], -target[3]
    e = (tw * w - tx * x - ty * y - tz * z, tw * x + tx * w + ty * z - tz * y,
         tw * y - tx * z + ty * w + tz * x, tw * z + tx * y - ty * x + tz * w)
    if e[0] < 0.0:
        return (-e[0], -e[1], -e[2], -e[3])
    return e


@njit(**dict(JIT, _nrt=False))
def error_quaternions(state, target, out):
    """:func:`error_quaternion` of every body (``state`` rows ``q_IB, ω``) into ``out`` (n, 4)."""
    for k in range(state.shape[0]):
        out[k, 0], out[k, 1], out[k, 2], out[k, 3] = error_quaternion(
            (state[k, 0], state[k, 1], state[k, 2], state[k, 3]), target)


@njit(**_INLINED)
def _observe(k, e, w, parts, state, wheels, gyro, field, scales, obs):
    """Body ``k``'s observation row: each part of ``parts`` in order (the module's codes), scaled."""
    col = 0
    for part in parts:
        if part == MRP:
            d = 1.0 + e[0]
            obs[k, col], obs[k, col + 1], obs[k, col + 2] = e[1] / d, e[2] / d, e[3] / d
            col += 3
        elif part == QUATERNION:
            obs[k, col], obs[k, col + 1], obs[k, col + 2], obs[k, col + 3] = e
            col += 4
        elif part == RATE:
            r = (gyro[k, 0], gyro[k, 1], gyro[k, 2]) if gyro.shape[0] else w
            s = scales[SCALE_RATE]
            obs[k, col], obs[k, col + 1], obs[k, col + 2] = r[0] / s, r[1] / s, r[2] / s
            col += 3
        elif part == WHEELS:
            h, inertia, limit, axes = wheels
            for j in range(axes.shape[0]):
                obs[k, col + j] = relative_speed(h[k, j], inertia[k, j], axes[j], w) / limit[k, j]
            col += axes.shape[0]
        else:
            s = scales[SCALE_FIELD]
            obs[k, col], obs[k, col + 1], obs[k, col + 2] = field[k, 0] / s, field[k, 1] / s, field[k, 2] / s
            col += 3


@njit(**_INLINED)
def _cost(k, e, w, wheels, action, scales, weights):
    """Body ``k``'s cost (the reward is its negative): the weighted attitude error angle, rate, wheel momentum and
    effort (:mod:`attsim.rl.tasks`)."""
    cost = weights[W_RATE] * math.sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]) / scales[SCALE_RATE]
    if weights[W_ATTITUDE] != 0.0:
        angle = 2.0 * math.atan2(math.sqrt(e[1] * e[1] + e[2] * e[2] + e[3] * e[3]), e[0])
        cost += weights[W_ATTITUDE] * angle / math.pi
    h, _, _, axes = wheels
    if weights[W_MOMENTUM] != 0.0 and axes.shape[0] > 0:
        hx = hy = hz = 0.0
        for j in range(axes.shape[0]):
            hx += h[k, j] * axes[j, 0]
            hy += h[k, j] * axes[j, 1]
            hz += h[k, j] * axes[j, 2]
        cost += weights[W_MOMENTUM] * math.sqrt(hx * hx + hy * hy + hz * hz) / scales[SCALE_MOMENTUM]
    if weights[W_ACTION] != 0.0:
        effort = 0.0
        for i in range(action.shape[1]):
            a = min(1.0, max(-1.0, action[k, i]))
            effort += a * a
        cost += weights[W_ACTION] * effort / action.shape[1]
    return cost


@njit(**dict(JIT, _nrt=False))
def outcomes(state, wheels, gyro, field, action, target, parts, scales, weights, obs, reward, terminated):
    """Every body's observation (``obs``, float32, a row each), reward and end (``terminated``) after a step.

    ``state`` the ensemble's rows ``q_IB, ω``; ``wheels`` its ``(h_Nms,
    inertia, max speed, axes)``; ``gyro`` and ``field`` the measured rates
    and the field in body axes, a row per body (a ``gyro`` of no rows: the
    true rate observed; a ``field`` of no rows when none is observed);
    ``action`` the actions in [-1, 1] (clipped here), ``target`` ``q_target``;
    ``parts``, ``scales`` and ``weights`` as the module's codes and indices.
    """
    for k in range(state.shape[0]):  # serial: ~0.1 µs a body, less than a parallel loop costs to compile and wake
        e = error_quaternion((state[k, 0], state[k, 1], state[k, 2], state[k, 3]), target)
        w = (state[k, 4], state[k, 5], state[k, 6])
        _observe(k, e, w, parts, state, wheels, gyro, field, scales, obs)
        reward[k] = -_cost(k, e, w, wheels, action, scales, weights)
        goal = scales[RATE_GOAL]
        terminated[k] = goal > 0.0 and w[0] * w[0] + w[1] * w[1] + w[2] * w[2] < goal * goal


@njit(**dict(JIT, _nrt=False))
def infos(state, steps, period_s, target, t_s, rate_rad_s, attitude_error_rad):
    """Every body's time since its reset (s, the grid of :attr:`attsim.Ensemble.t_s`), body rate ``|ω|`` (rad/s)
    and attitude error angle to ``target`` (rad, in [0, π]) into the three arrays: an environment's ``info``."""
    for k in range(state.shape[0]):
        t_s[k] = grid_time(0.0, steps[k], period_s)
        rate_rad_s[k] = math.sqrt(state[k, 4] * state[k, 4] + state[k, 5] * state[k, 5] + state[k, 6] * state[k, 6])
        e = error_quaternion((state[k, 0], state[k, 1], state[k, 2], state[k, 3]), target)
        attitude_error_rad[k] = 2.0 * math.atan2(math.sqrt(e[1] * e[1] + e[2] * e[2] + e[3] * e[3]), e[0])
