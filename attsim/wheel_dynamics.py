"""Reaction-wheel friction and imbalance jitter (layer 5): the wheels' own states inside the integration.

A wheel without friction or imbalance needs no integration: its momentum
is linear in time under a held motor torque (:mod:`attsim.actuator_models`).
Friction depends on the wheel's speed relative to the body, which changes
within a step, and jitter on the rotor's angle; so when any wheel of a
mission has either, the wheels' momenta ``h_j`` and rotor angles ``θ_j``
are integrated with the body, stage by stage (:func:`wheels_stage_torque`).

Wheel ``j`` (axis ``a``, axial inertia ``I``, motor torque ``τ_m``; the
body inertia ``J`` excludes the wheel's axial inertia)::

    Ω = h / I - a·ω                         speed relative to the body
    dh/dt = τ_m + τ_f(Ω)                     the wheel's axial equation
    dθ/dt = Ω                                the rotor angle
    τ_body = -(τ_m + τ_f) a - ω × h a + r × F + U_d Ω² u,   F = U_s Ω² u

so the torque that reaches the body is the reaction of motor and friction
together. Total angular momentum ``R_IB (J ω + Σ h a)`` is conserved by
the motor and friction (internal torques), and the kinetic energy
``½ ωᵀJω + Σ h²/(2I)`` changes at ``Σ (τ_m + τ_f) Ω``: friction only
dissipates (Markley & Crassidis 2014, sec. 3.3.5, with the friction of
Basilisk's ``reactionWheelStateEffector``).

**Friction** (Olsson, Åström, Canudas de Wit, Gäfvert & Lischinsky 1998,
"Friction models and friction compensation", Eur. J. Control 4, sec. 2,
the static model with Armstrong-Hélouvry's Stribeck curve)::

    F(s) = F_c + (F_s - F_c) exp(-(s / s_S)²) + c s       s = |Ω|
    τ_f = -F(|Ω|) sign(Ω)                                  |Ω| >= Ω_b
    τ_f = -F(Ω_b) Ω / Ω_b                                  |Ω| <  Ω_b

Coulomb ``F_c``, breakaway ``F_s`` (the Stribeck curve; 0: none) falling to
``F_c`` over the Stribeck speed ``s_S``, viscous ``c``. Coulomb friction
flips sign at Ω = 0, which an explicit integrator turns into chatter across
zero; below the band speed ``Ω_b`` the friction is linear in the speed
instead, continuous at ``±Ω_b`` (the device of Basilisk's
``omegaLimitCycle``). Inside the band the relative speed decays as
``dΩ/dt = -k Ω / I_eff`` with ``k = F(Ω_b)/Ω_b`` and
``1/I_eff = 1/I + aᵀJ⁻¹a`` (the body recoils). RK4 multiplies ``Ω`` each
step by ``1 + z + z²/2 + z³/6 + z⁴/24``, ``z = -h k / I_eff``, which is
positive for every real ``z`` (an even Taylor polynomial of eᶻ has no real
root): a step never takes the wheel through zero. The band is chosen so
that ``h k / I_eff <= 1`` (then the factor is in [0.375, 1): the decay is
resolved, and the Coulomb deceleration outside the band changes ``Ω`` by
at most ``Ω_b`` a step, so the wheel enters the band before it could cross
zero): by default the narrowest band the mission's ``max_step`` resolves,
``Ω_b = max(F_c, F_s) / (I_eff/h - c)``; a band the user gives is checked
against it (:func:`friction_band`). A regularised model does not stick: a
motor torque below the breakaway level still turns a wheel at rest, slowly
(``Ω`` within the band). Basilisk switches its Stribeck term on only when a
wheel starts from rest, which depends on the past and not on the state;
here the curve is a function of the speed alone.

**Imbalance jitter** (Basilisk's simple jitter model: Alcorn, Allard &
Schaub 2018, "Fully coupled reaction wheel static and dynamic imbalance
for spacecraft jitter modeling", JGCD 41(6), and the module's
documentation). The rotor's heavy side points along
``u = cos θ x0 + sin θ y0`` in the plane normal to the axis, turning at
``Ω`` relative to the body. A static imbalance ``U_s`` (kg m) pushes the
body with ``F = U_s Ω² u`` at the wheel's position ``r`` (from the centre
of mass): attsim has no translational dynamics, so the force moves nothing
but its torque ``r × F`` about the centre of mass acts (the force is
logged). A dynamic imbalance ``U_d`` (kg m²) adds the torque ``U_d Ω² u``.
Both act at every stage; resolving them needs a step well below the spin
period (``max_step <= π / Ω_max`` is refused otherwise, :func:`check_jitter`).

**Integration.** Every mission-ready method evaluates its stage torque in
the order of the classical Runge-Kutta tableau for first-order states
(stages at ``t, t + h/2, t + h/2, t + h``, each from the previous stage's
rate, weights ``1/6, 1/3, 1/3, 1/6``; ``rkn`` uses it for its velocities),
so the wheels' states follow that tableau: :func:`begin_wheel_step` before
a step, :func:`wheels_stage_torque` at each stage (it records the stage's
``(dh/dt, Ω)``), :func:`end_wheel_step` after. This is the method applied
to the state augmented with ``h`` and ``θ``.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from .actuator_models import INTEGRATED, STAGE, STEP_S, wheel_speed
from .errors import InputError

__all__ = ["WheelModel", "NO_MODEL", "rotor_basis", "effective_inertia", "friction_band", "check_jitter",
           "friction_level", "friction_torque", "jitter", "wheels_stage_torque", "begin_wheel_step",
           "end_wheel_step", "write_wheel_row", "has_friction", "has_imbalance"]

_JIT = dict(cache=True, nogil=True, error_model="numpy")
TWO_PI = 2.0 * math.pi
# a wheel's band keeps h k / I_eff at most this (RK4 factor 0.375 per step at the limit), and its viscous friction
# alone half that
BAND_STEP_LIMIT = 1.0
VISCOUS_STEP_LIMIT = 0.5
# the fewest integration steps a revolution at the speed limit may take with imbalance (Nyquist: fewer alias)
STEPS_PER_REVOLUTION_MIN = 2.0


class WheelModel(NamedTuple):
    """A wheel's friction and imbalance for its row of the bank (SI; zeros: none)."""

    coulomb_Nm: float
    static_Nm: float
    stribeck_rad_s: float
    viscous_Nm_s_rad: float
    band_rad_s: float
    static_imbalance_kg_m: float
    dynamic_imbalance_kg_m2: float
    position_m: tuple
    rotor_x0: tuple
    rotor_y0: tuple


NO_MODEL = WheelModel(0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), (0.0, 0.0, 0.0))


def rotor_basis(axis) -> tuple[np.ndarray, np.ndarray]:
    """``(x0, y0)``: the rotor's reference direction at angle 0 and the one a quarter turn on (``y0 = a × x0``).

    ``x0`` is the body axis most nearly normal to the spin axis (the first
    on a tie), projected onto the wheel's plane and normalised.
    """
    a = np.asarray(axis, dtype=float)
    e = np.zeros(3)
    e[int(np.argmin(np.abs(a)))] = 1.0
    x0 = e - (e @ a) * a
    x0 /= np.linalg.norm(x0)
    return x0, np.cross(a, x0)


def effective_inertia(axis, inertia_kg_m2: float, body_inertia_kg_m2) -> float:
    """``I_eff = 1 / (1/I + aᵀJ⁻¹a)``: the inertia a torque between wheel and body turns them apart with."""
    a = np.asarray(axis, dtype=float)
    return 1.0 / (1.0 / inertia_kg_m2 + float(a @ np.linalg.solve(body_inertia_kg_m2, a)))


def friction_level(coulomb_Nm, static_Nm, stribeck_rad_s, viscous_Nm_s_rad, speed_abs):
    """``F(s) = F_c + (F_s - F_c) exp(-(s/s_S)²) + c s`` (N m) at ``s = |Ω|``; no Stribeck term when ``F_s`` is 0."""
    level = coulomb_Nm + viscous_Nm_s_rad * speed_abs
    if static_Nm > 0.0:
        ratio = speed_abs / stribeck_rad_s
        level += (static_Nm - coulomb_Nm) * math.exp(-ratio * ratio)
    return level


_friction_level = njit(**_JIT)(friction_level)


def friction_band(name: str, coulomb_Nm: float, static_Nm: float, stribeck_rad_s: float, viscous_Nm_s_rad: float,
                  band_rad_s: float | None, inertia_eff_kg_m2: float, max_step_s: float,
                  max_speed_rad_s: float) -> float:
    """The band speed ``Ω_b`` a wheel's friction uses in a mission, or an :class:`InputError` naming ``max_step``.

    ``band_rad_s`` None: the narrowest band ``max_step`` resolves,
    ``max(F_c, F_s) / (I_eff/h - c)``; a band given must have
    ``h F(Ω_b) / (Ω_b I_eff) <= 1``. Viscous friction alone must have
    ``h c / I_eff <= 1/2``. A band reaching the speed limit leaves no
    Coulomb friction to model (the step is too coarse for it): refused. No
    Coulomb or breakaway friction: 0 (no band).
    """
    h = max_step_s
    if h * viscous_Nm_s_rad > VISCOUS_STEP_LIMIT * inertia_eff_kg_m2:
        raise InputError("max_step", f"must resolve wheel {name!r}'s viscous friction: max_step <= I_eff / (2 c)",
                         f"max_step {h:g} s > {VISCOUS_STEP_LIMIT * inertia_eff_kg_m2 / viscous_Nm_s_rad:.3g} s "
                         f"(I_eff {inertia_eff_kg_m2:.3g} kg m^2, c {viscous_Nm_s_rad:g} N m s/rad)")
    peak = max(coulomb_Nm, static_Nm)
    if peak == 0.0:
        return 0.0
    if band_rad_s is None:
        band = peak / (inertia_eff_kg_m2 / h - viscous_Nm_s_rad)
        if not band < max_speed_rad_s:
            raise InputError("max_step", f"must resolve wheel {name!r}'s Coulomb friction: the band it needs, "
                             "max(F_c, F_s) / (I_eff / max_step - c), must stay below max_speed_rad_s",
                             f"{band:.3g} rad/s >= {max_speed_rad_s:g} rad/s with max_step {h:g} s")
        return band
    slope = friction_level(coulomb_Nm, static_Nm, stribeck_rad_s, viscous_Nm_s_rad, band_rad_s) / band_rad_s
    if h * slope > BAND_STEP_LIMIT * inertia_eff_kg_m2:
        raise InputError("max_step", f"must resolve wheel {name!r}'s friction band: max_step <= I_eff Ω_b / F(Ω_b)",
                         f"max_step {h:g} s > {BAND_STEP_LIMIT * inertia_eff_kg_m2 / slope:.3g} s with "
                         f"friction_band_rad_s {band_rad_s:g}; widen the band or reduce max_step")
    return band_rad_s


def check_jitter(name: str, max_speed_rad_s: float, max_step_s: float) -> None:
    """Refuse a ``max_step`` that cannot resolve a wheel's imbalance at its speed limit (Nyquist)."""
    most = TWO_PI / (STEPS_PER_REVOLUTION_MIN * max_speed_rad_s)
    if max_step_s > most:
        raise InputError("max_step", f"must resolve wheel {name!r}'s imbalance jitter: at least "
                         f"{STEPS_PER_REVOLUTION_MIN:g} steps per revolution at max_speed_rad_s (max_step <= "
                         "pi / max_speed_rad_s; ten or more for the jitter's amplitude)",
                         f"max_step {max_step_s:g} s > {most:.3g} s at {max_speed_rad_s:g} rad/s")


@njit(**_JIT)
def has_friction(bank, j):
    return bank.coulomb_Nm[j] > 0.0 or bank.static_Nm[j] > 0.0 or bank.viscous_Nm_s_rad[j] > 0.0


@njit(**_JIT)
def has_imbalance(bank, j):
    return bank.static_imbalance_kg_m[j] > 0.0 or bank.dynamic_imbalance_kg_m2[j] > 0.0


@njit(**_JIT)
def friction_torque(bank, j, speed):
    """The friction torque on wheel ``j`` (N m, about its axis) at relative speed ``speed``; see the module."""
    band = bank.band_rad_s[j]
    s = abs(speed)
    level = _friction_level(bank.coulomb_Nm[j], bank.static_Nm[j], bank.stribeck_rad_s[j], bank.viscous_Nm_s_rad[j],
                            max(s, band))
    if s >= band and s > 0.0:
        return -level if speed > 0.0 else level
    if band > 0.0:
        return -level * speed / band
    return 0.0


@njit(**_JIT)
def jitter(bank, j, angle, speed):
    """``(F, τ)``: wheel ``j``'s imbalance force (N) and torque about the centre of mass (N m), body axes."""
    c, s = math.cos(angle), math.sin(angle)
    x0, y0, r = bank.rotor_x0[j], bank.rotor_y0[j], bank.position_m[j]
    k = speed * speed
    ux, uy, uz = c * x0[0] + s * y0[0], c * x0[1] + s * y0[1], c * x0[2] + s * y0[2]
    f = bank.static_imbalance_kg_m[j] * k
    fx, fy, fz = f * ux, f * uy, f * uz
    d = bank.dynamic_imbalance_kg_m2[j] * k
    tau = (r[1] * fz - r[2] * fy + d * ux, r[2] * fx - r[0] * fz + d * uy, r[0] * fy - r[1] * fx + d * uz)
    return (fx, fy, fz), tau


@njit(**_JIT)
def begin_wheel_step(bank, h):
    """Before an integration step of length ``h``: the first stage comes next."""
    bank.integration[STAGE] = 0.0
    bank.integration[STEP_S] = h


@njit(**_JIT)
def wheels_stage_torque(w, bank):
    """The wheels' torque on the body at the next stage of the step under way (body axes, N m).

    The stage's wheel states are the step's start plus the previous
    stage's rates times ``0, h/2, h/2, h``; its rates are recorded for
    :func:`end_wheel_step`. A fifth stage would be outside the contract
    (see the module): the torque is then NaN, and the run stops as diverged.
    """
    record = bank.integration
    stage = int(record[STAGE])
    if stage > 3:
        return (math.nan, math.nan, math.nan)
    lead = 0.0 if stage == 0 else (record[STEP_S] if stage == 3 else 0.5 * record[STEP_S])
    tx = ty = tz = 0.0
    for j in range(bank.axis.shape[0]):
        rates = bank.stage_rates[j]
        h, angle = bank.h_Nms[j], bank.angle_rad[j]
        if stage > 0:
            h += lead * rates[stage - 1, 0]
            angle += lead * rates[stage - 1, 1]
        speed = wheel_speed(bank, j, h, w)
        h_dot = bank.torque_Nm[j] + friction_torque(bank, j, speed)
        rates[stage, 0], rates[stage, 1] = h_dot, speed
        a = bank.axis[j]
        hx, hy, hz = h * a[0], h * a[1], h * a[2]
        tx -= h_dot * a[0] + (w[1] * hz - w[2] * hy)
        ty -= h_dot * a[1] + (w[2] * hx - w[0] * hz)
        tz -= h_dot * a[2] + (w[0] * hy - w[1] * hx)
        if has_imbalance(bank, j):
            _, tau = jitter(bank, j, angle, speed)
            tx, ty, tz = tx + tau[0], ty + tau[1], tz + tau[2]
    record[STAGE] = stage + 1
    return (tx, ty, tz)


@njit(**_JIT)
def end_wheel_step(bank, h):
    """After a step of length ``h``: the wheels' momenta and rotor angles (wrapped to [0, 2π)) at its end."""
    sixth = h / 6.0
    for j in range(bank.axis.shape[0]):
        r = bank.stage_rates[j]
        bank.h_Nms[j] += sixth * (r[0, 0] + 2.0 * r[1, 0] + 2.0 * r[2, 0] + r[3, 0])
        angle = bank.angle_rad[j] + sixth * (r[0, 1] + 2.0 * r[1, 1] + 2.0 * r[2, 1] + r[3, 1])
        bank.angle_rad[j] = angle - TWO_PI * math.floor(angle / TWO_PI)


@njit(**_JIT)
def write_wheel_row(bank, j, w, row, col):
    """Wheel ``j``'s telemetry into ``row`` from ``col`` (:data:`attsim.schema.WHEEL_SUFFIXES`, then the friction
    and the jitter ones when it has them); returns the next column. Both paths write their rows with it."""
    h = bank.h_Nms[j]
    speed = wheel_speed(bank, j, h, w)
    row[col], row[col + 1], row[col + 2] = speed, h, bank.torque_Nm[j]
    col += 3
    if has_friction(bank, j):
        row[col] = friction_torque(bank, j, speed)
        col += 1
    if has_imbalance(bank, j):
        angle = bank.angle_rad[j]
        force, tau = jitter(bank, j, angle, speed)
        row[col] = angle
        row[col + 1], row[col + 2], row[col + 3] = force
        row[col + 4], row[col + 5], row[col + 6] = tau
        col += 7
    return col


def model_flags(bank) -> bool:
    """True when any wheel of ``bank`` has friction or imbalance (its states must be integrated)."""
    return bool(np.any(bank.coulomb_Nm > 0) or np.any(bank.static_Nm > 0) or np.any(bank.viscous_Nm_s_rad > 0)
                or np.any(bank.static_imbalance_kg_m > 0) or np.any(bank.dynamic_imbalance_kg_m2 > 0))


def set_integrated(bank) -> None:
    """Mark ``bank``'s states as integrated when any wheel needs it (:data:`attsim.actuator_models.INTEGRATED`)."""
    bank.integration[INTEGRATED] = 1.0 if model_flags(bank) else 0.0
