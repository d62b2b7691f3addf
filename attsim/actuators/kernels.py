"""Compiled models of the built-in actuators: state in plain arrays, steps in numba.

The reaction wheels of a mission live in one :class:`WheelBank` (the plant
integrates with it; :class:`~attsim.actuators.ReactionWheel` is the user's
configuration and reads its wheel's row). The kernels here are the one
source of the actuators' arithmetic for both the Python components and the
compiled mission loop.

Wheel model (Markley & Crassidis 2014, sec. 3.3.5): the state of wheel ``j``
is its absolute axial angular momentum ``h_j`` (N m s); the motor torque
``τ_j`` changes it, ``dh_j/dt = τ_j``, and the body feels ``-τ_j a_j`` and
the gyroscopic ``-ω × h_j a_j``. The speed relative to the body is
``Ω_j = h_j / I_j - a_j·ω``. The motor cannot push past ``|Ω_j| = Ω_max``:
the plant checks every wheel after every integration step and stops a
motor that reached its limit while pushing outward, so the limit holds to
within one step's change of ``Ω``. Friction and imbalance jitter, when a
wheel has them, are :mod:`attsim.actuators.wheel_dynamics`.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from .._core.jit import LOOP_INLINED, njit

__all__ = ["WheelBank", "WORK_COLUMNS", "empty_wheel_bank", "wheel_speed", "relative_speed", "beyond_limit",
           "pushes_past_limit", "speed_stop_due", "speed_stop_free_rate2", "wheel_command", "wheel_commands",
           "wheels_total", "wheels_relative_momentum", "saturate_bars", "magnetorquer_dipole", "magnetorquer_bars",
           "SATURATION_NONE", "SATURATION_START", "SATURATION_END"]

_JIT = dict(cache=True, nogil=True, error_model="numpy", **LOOP_INLINED)  # attsim._core.jit: inlined, no refcounts

# what a command did to a saturation state: nothing, entered it, left it
SATURATION_NONE, SATURATION_START, SATURATION_END = 0, 1, 2


class WheelBank(NamedTuple):
    """Every reaction wheel of a mission, one row each (SI). Arrays are updated in place.

    ``h_Nms`` is each wheel's axial momentum at the plant's current time;
    ``torque_Nm`` the motor torque it holds; ``torque_saturated`` and
    ``speed_saturated`` are 1.0 while the command is clipped at the torque
    limit or the motor is stopped at the speed limit; ``requested_Nm`` the
    torque last commanded, before any limit (logged beside the motor torque).

    ``work`` is the wheels' friction and imbalance and their integration
    (:mod:`attsim.actuators.wheel_dynamics`): row 0 the bank's record (``W_*`` of
    the record below), row ``j + 1`` wheel ``j`` (the ``W_*`` columns). One
    array, so the plant's inputs carry it at the cost of one reference.
    """

    axis: np.ndarray
    inertia_kg_m2: np.ndarray
    max_torque_Nm: np.ndarray
    max_speed_rad_s: np.ndarray
    h_Nms: np.ndarray
    torque_Nm: np.ndarray
    torque_saturated: np.ndarray
    speed_saturated: np.ndarray
    requested_Nm: np.ndarray
    work: np.ndarray


# the work array's record (row 0): the integrator stage under way, the step's length (s), and 1.0 when the wheels'
# states are integrated (any friction or imbalance) rather than held linear in time
W_STAGE, W_STEP_S, W_INTEGRATED = 0, 1, 2
# a wheel's row (j + 1): its axis and axial inertia; its momentum at the step's start and the motor torque it holds;
# the rotor angle (rad, at the plant's time); Coulomb, breakaway (0: no Stribeck curve), Stribeck speed, viscous
# coefficient and band speed of its friction; static and dynamic imbalance, its position (body axes, from the
# centre of mass) and the rotor's reference directions at angle 0 and a quarter turn on; then (dh/dt, Omega) of each
# of the four stages of the step under way
W_AXIS, W_INERTIA, W_H0, W_TORQUE, W_ANGLE = 0, 3, 4, 5, 6
W_COULOMB, W_STATIC, W_STRIBECK, W_VISCOUS, W_BAND = 7, 8, 9, 10, 11
W_STATIC_IMBALANCE, W_DYNAMIC_IMBALANCE, W_POSITION, W_X0, W_Y0 = 12, 13, 14, 17, 20
W_RATES = 23
WORK_COLUMNS = W_RATES + 8


def empty_wheel_bank(count: int = 0) -> WheelBank:
    """A bank of ``count`` rows of zeros, to be filled by the wheels at the start of a run."""
    return WheelBank(np.zeros((count, 3)), np.ones(count), np.ones(count), np.ones(count), np.zeros(count),
                     np.zeros(count), np.zeros(count), np.zeros(count), np.zeros(count),
                     np.zeros((count + 1, WORK_COLUMNS)))


@njit(**_JIT)
def relative_speed(h_Nms, inertia_kg_m2, a, w):
    """``Ω = h / I - a·ω``: the speed relative to the body (rad/s) of a wheel of axial momentum ``h_Nms``, spin
    inertia ``inertia_kg_m2`` and axis ``a`` on a body turning at ``w``."""
    return h_Nms / inertia_kg_m2 - (a[0] * w[0] + a[1] * w[1] + a[2] * w[2])


@njit(**_JIT)
def wheel_speed(bank, j, h_Nms, w):
    """``Ω_j = h_j / I_j - a_j·ω``: wheel ``j``'s speed relative to the body (rad/s) at momentum ``h_Nms``."""
    return relative_speed(h_Nms, bank.inertia_kg_m2[j], bank.axis[j], w)


@njit(**_JIT)
def beyond_limit(speed, torque, limit):
    """True when ``torque`` would drive a wheel at ``speed`` further beyond its speed limit ``limit``."""
    return (torque > 0.0 and speed >= limit) or (torque < 0.0 and speed <= -limit)


@njit(**_JIT)
def pushes_past_limit(bank, j, speed, torque):
    """True when ``torque`` would drive wheel ``j`` further beyond its speed limit."""
    return beyond_limit(speed, torque, bank.max_speed_rad_s[j])


@njit(**_JIT)
def speed_stop_due(h_Nms, torque, inertia_kg_m2, max_speed_rad_s, a, w, dt):
    """``(due, speed)``: whether a wheel (momentum ``h_Nms``, held motor torque ``torque``, spin inertia, speed
    limit, axis ``a``) must be stopped ``dt`` later, when the body turns at ``w``, and its speed then: its torque
    drives it further beyond its limit. The plant's check after every step
    (:func:`attsim.engine.plant.speed_stops`)."""
    speed = relative_speed(h_Nms + torque * dt, inertia_kg_m2, a, w)
    return torque != 0.0 and beyond_limit(speed, torque, max_speed_rad_s), speed


# speed_stop_free_rate2's margin, relative: the speed bound is kept this far below the limit (and the squared rate
# this far below its square), a million times the round-off of computing a speed (a few units in the last place
# of |h|/I and |a·ω|), so a speed the exact check would find at its limit is never left out
_FREE_RATE_MARGIN = 1e-9


@njit(**_JIT)
def speed_stop_free_rate2(bank, span_s):
    """The squared body rate below which no wheel of ``bank`` can be due a speed stop (:func:`speed_stop_due`)
    within ``span_s`` of now, its motor torques held (rad²/s²): ``inf`` when no wheel has a torque, ``-1`` when
    one may be due at any rate.

    Wheel ``j`` is due only when its torque ``τ_j`` is not zero and its
    speed reaches its limit ``Ω_max,j``; at a time ``dt`` ≤ ``span_s`` ahead,
    with ``|a·ω| ≤ ‖a‖₁ ‖ω‖₂``,

    ``|Ω_j| = |(h_j + τ_j dt) / I_j - a_j·ω| ≤ (|h_j| + |τ_j| span) / I_j + ‖a_j‖₁ ‖ω‖``,

    so none is due while ``‖ω‖ < min_j (Ω_max,j - (|h_j| + |τ_j| span) / I_j) / ‖a_j‖₁``
    over the wheels with a torque. A filter for a caller that checks many
    bodies each step (:mod:`attsim.ensemble.kernels`): a rate at or above
    the bound calls for the exact check, which alone decides; the bound is
    kept below it by far more than round-off, so that the filter never
    hides a stop that check would find. A wheel stopped on the way (its torque now zero, its
    momentum brought to that time) keeps within the same bound.
    """
    free = math.inf
    for j in range(bank.axis.shape[0]):
        torque = bank.torque_Nm[j]
        if torque == 0.0:
            continue
        a = bank.axis[j]
        limit = bank.max_speed_rad_s[j]
        reach = (abs(bank.h_Nms[j]) + abs(torque) * span_s) / bank.inertia_kg_m2[j]
        rate = (limit - reach - _FREE_RATE_MARGIN * (limit + reach)) / (abs(a[0]) + abs(a[1]) + abs(a[2]))
        if not rate > 0.0:  # at or past its limit already, or not a number: every rate is checked
            return -1.0
        free = min(free, rate * rate * (1.0 - _FREE_RATE_MARGIN))
    return free


@njit(**_JIT)
def wheel_command(bank, j, requested_Nm, w):
    """Apply a motor torque command to wheel ``j`` at the plant's current time.

    Clips the request to ``±max_torque``, and holds zero instead when the
    wheel is at its speed limit and the torque would push it further.
    Returns ``(torque applied, torque-saturation change, speed-saturation
    change, speed)`` with the changes as ``SATURATION_*`` codes.
    """
    bank.requested_Nm[j] = requested_Nm
    limit = bank.max_torque_Nm[j]
    torque = min(limit, max(-limit, requested_Nm))
    clipped = 1.0 if torque != requested_Nm else 0.0
    torque_change = SATURATION_NONE
    if clipped != bank.torque_saturated[j]:
        torque_change = SATURATION_START if clipped == 1.0 else SATURATION_END
        bank.torque_saturated[j] = clipped
    speed = wheel_speed(bank, j, bank.h_Nms[j], w)
    stopped = 1.0 if pushes_past_limit(bank, j, speed, torque) else 0.0
    speed_change = SATURATION_NONE
    if stopped != bank.speed_saturated[j]:
        speed_change = SATURATION_START if stopped == 1.0 else SATURATION_END
        bank.speed_saturated[j] = stopped
    applied = 0.0 if stopped == 1.0 else torque
    bank.torque_Nm[j] = applied
    return applied, torque_change, speed_change, speed


@njit(**_JIT)
def wheel_commands(bank, rows, requested_Nm, w, changes):
    """:func:`wheel_command` for wheels ``rows`` with ``requested_Nm`` (tuples of one length), in that order.

    Row ``i`` of ``changes`` gets that command's ``(torque-saturation change,
    speed-saturation change, speed)``. Returns how many commands changed a
    saturation state (0: nothing to log).
    """
    changed = 0
    for i in range(len(rows)):
        _, torque_change, speed_change, speed = wheel_command(bank, rows[i], requested_Nm[i], w)
        changes[i, 0], changes[i, 1], changes[i, 2] = torque_change, speed_change, speed
        if torque_change != SATURATION_NONE or speed_change != SATURATION_NONE:
            changed += 1
    return changed


@njit(**_JIT)
def wheels_total(bank):
    """``(Σ τ_j a_j, Σ h_j a_j)``: the wheels' motor torque and momentum in body axes."""
    tx = ty = tz = hx = hy = hz = 0.0
    for j in range(bank.axis.shape[0]):
        a = bank.axis[j]
        t, h = bank.torque_Nm[j], bank.h_Nms[j]
        tx += t * a[0]
        ty += t * a[1]
        tz += t * a[2]
        hx += h * a[0]
        hy += h * a[1]
        hz += h * a[2]
    return (tx, ty, tz), (hx, hy, hz)


@njit(**_JIT)
def wheels_relative_momentum(bank, w):
    """``Σ J_j Ω_j a_j`` (N m s, body axes): the wheels' momentum relative to the body, each wheel's spin inertia
    times its speed relative to the body at the body rate ``w`` (what Basilisk's ``mtbMomentumManagementSimple``
    drains); :func:`wheels_total` gives their absolute momentum, ``Σ J_j (Ω_j + a_j·ω) a_j``."""
    hx = hy = hz = 0.0
    for j in range(bank.axis.shape[0]):
        a = bank.axis[j]
        hs = wheel_speed(bank, j, bank.h_Nms[j], w) * bank.inertia_kg_m2[j]
        hx += a[0] * hs
        hy += a[1] * hs
        hz += a[2] * hs
    return (hx, hy, hz)


@njit(**_JIT)
def saturate_bars(bars_Am2, limit_Am2, scale):
    """Limit each bar's dipole ``bars_Am2[k]`` (A m², in place) to ``±limit_Am2[k]``; True when a limit cut one.

    ``scale`` false clips each bar on its own (the body dipole's direction
    may turn); true shrinks them all by the largest ratio to the limit until
    every one fits (the direction is kept).
    """
    ratio = 0.0
    for k in range(bars_Am2.shape[0]):
        ratio = max(ratio, abs(bars_Am2[k]) / limit_Am2[k])
    if ratio <= 1.0:
        return False
    if scale and ratio == math.inf:  # finite bars whose ratio overflows: dividing by it would give zeros
        factor = math.inf
        for k in range(bars_Am2.shape[0]):
            if bars_Am2[k] != 0.0:
                factor = min(factor, limit_Am2[k] / abs(bars_Am2[k]))
        for k in range(bars_Am2.shape[0]):
            bars_Am2[k] = bars_Am2[k] * factor
        return True
    for k in range(bars_Am2.shape[0]):
        if scale:
            bars_Am2[k] = bars_Am2[k] / ratio
        else:
            bars_Am2[k] = min(limit_Am2[k], max(-limit_Am2[k], bars_Am2[k]))
    return True


@njit(**_JIT)
def magnetorquer_dipole(m, steering, axes, limit_Am2, scale, bars_Am2):
    """The body dipole an array of magnetorquer bars applies for the body dipole ``m`` requested (A m²).

    Each bar's dipole is ``bars[k] = S[k] · m`` (``S = G⁺``, the minimum-norm
    steering of the bars' axes ``G``, Basilisk's ``dipoleMapping``), limited
    by :func:`saturate_bars`; the body dipole applied is ``Σ_k bars[k] g_k``
    (Basilisk's ``MtbEffector``: ``GtMatrix_B`` times the bars' dipoles).
    ``steering`` and ``axes`` are ``(n, 3)`` (rows of ``S`` and the unit
    axes ``g_k``), ``limit_Am2`` and ``bars_Am2`` ``(n,)``; ``bars_Am2`` is
    written. Three bars on the body axes (``S = G = I``) apply ``m`` limited
    per axis. Returns ``(applied, saturated)``.
    """
    for k in range(bars_Am2.shape[0]):
        s = steering[k]
        bars_Am2[k] = s[0] * m[0] + s[1] * m[1] + s[2] * m[2]
    saturated = saturate_bars(bars_Am2, limit_Am2, scale)
    return _body_dipole(axes, bars_Am2), saturated


@njit(**_JIT)
def _body_dipole(axes, bars_Am2):
    """``Σ_k bars[k] g_k``: the body dipole of the bars' dipoles (A m²)."""
    x = y = z = 0.0
    for k in range(bars_Am2.shape[0]):
        g = axes[k]
        x += bars_Am2[k] * g[0]
        y += bars_Am2[k] * g[1]
        z += bars_Am2[k] * g[2]
    return (x, y, z)


@njit(**_JIT)
def magnetorquer_bars(axes, limit_Am2, scale, bars_Am2):
    """The body dipole an array of magnetorquer bars applies when each bar is commanded its own dipole (A m²).

    ``bars_Am2`` holds each bar's request (along its axis) and is limited in
    place by :func:`saturate_bars`, as :func:`magnetorquer_dipole` limits
    the steered ones. Returns ``(applied, requested, saturated)``: the body
    dipole ``Σ_k bars[k] g_k`` of the limited bars and of the requests.
    """
    requested = _body_dipole(axes, bars_Am2)
    saturated = saturate_bars(bars_Am2, limit_Am2, scale)
    return _body_dipole(axes, bars_Am2), requested, saturated
