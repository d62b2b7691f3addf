"""Reaction-wheel friction and imbalance jitter: the wheels' own states inside the integration.

A wheel without friction or imbalance needs no integration: its momentum
is linear in time under a held motor torque (:mod:`attsim.actuators.kernels`).
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
resolved, and the deceleration just outside the band changes ``Ω`` by
about ``Ω_b`` a step at most, so the wheel enters the band before it could
cross zero): by default the narrowest band the mission's ``max_step`` resolves,
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
period: fewer than 2 steps a revolution at the speed limit (``max_step >
π / Ω_max``) would alias and is refused (:func:`check_jitter`); the body's
response is then ~3% off in amplitude, 0.2% at 4 steps a revolution, 5e-5
at 10 (``tools/study_jitter_resolution.py``).

**Integration.** Every mission-ready method evaluates its stage torque in
the order of the classical Runge-Kutta tableau for first-order states
(stages at ``t, t + h/2, t + h/2, t + h``, each from the previous stage's
rate, weights ``1/6, 1/3, 1/3, 1/6``; ``rkn`` uses it for its velocities),
so the wheels' states follow that tableau: :func:`begin_wheel_step` before
a step, :func:`wheels_stage_torque` at each stage (it records the stage's
``(dh/dt, Ω)``), :func:`end_wheel_step` after. This is the method applied
to the state augmented with ``h`` and ``θ``. The plant's stage torque is
then :func:`plant_torque_wheels`, compiled apart from the plain one
(:func:`attsim.engine.plant.advance_template`).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .._core.jit import JIT, njit
from .kernels import (W_ANGLE, W_AXIS, W_BAND, W_COULOMB, W_DYNAMIC_IMBALANCE, W_H0, W_INERTIA, W_INTEGRATED,
                              W_POSITION, W_RATES, W_STAGE, W_STATIC, W_STATIC_IMBALANCE, W_STEP_S, W_STRIBECK,
                              W_TORQUE, W_VISCOUS, W_X0, W_Y0, wheel_speed)
from ..dynamics import normalized4, qconj, qrotate
from ..environment.table import B_I, lerp3, stage_time, table_cell
from ..environment.torques import disturbance_torques
from ..errors import InputError

__all__ = ["WheelModel", "NO_MODEL", "work_row", "rotor_basis", "effective_inertia", "friction_band", "check_jitter",
           "friction_level", "friction_torque", "jitter", "wheels_stage_torque", "begin_wheel_step",
           "end_wheel_step", "write_wheel_row", "has_friction", "has_imbalance", "set_integrated",
           "plant_torque_wheels", "inputs_alone", "inputs_and_work"]

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


_friction_level = njit(**JIT)(friction_level)


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
                         "pi / max_speed_rad_s; the amplitude needs about ten for 1e-4)",
                         f"max_step {max_step_s:g} s > {most:.3g} s at {max_speed_rad_s:g} rad/s")


def work_row(axis, inertia_kg_m2: float, model: WheelModel) -> np.ndarray:
    """A wheel's row of the work array (:data:`attsim.actuators.kernels.WORK_COLUMNS`) for ``model``."""
    row = np.zeros(W_RATES + 8)
    row[W_AXIS:W_AXIS + 3], row[W_INERTIA] = axis, inertia_kg_m2
    row[W_COULOMB], row[W_STATIC], row[W_STRIBECK] = model.coulomb_Nm, model.static_Nm, model.stribeck_rad_s
    row[W_VISCOUS], row[W_BAND] = model.viscous_Nm_s_rad, model.band_rad_s
    row[W_STATIC_IMBALANCE], row[W_DYNAMIC_IMBALANCE] = model.static_imbalance_kg_m, model.dynamic_imbalance_kg_m2
    row[W_POSITION:W_POSITION + 3], row[W_X0:W_X0 + 3], row[W_Y0:W_Y0 + 3] = (model.position_m, model.rotor_x0,
                                                                               model.rotor_y0)
    return row


def set_integrated(work) -> None:
    """Mark the wheels' states as integrated when any wheel (rows 1 on) has friction or imbalance."""
    rows = work[1:]
    modelled = (rows[:, W_COULOMB] > 0) | (rows[:, W_STATIC] > 0) | (rows[:, W_VISCOUS] > 0) \
        | (rows[:, W_STATIC_IMBALANCE] > 0) | (rows[:, W_DYNAMIC_IMBALANCE] > 0)
    work[0, W_INTEGRATED] = 1.0 if np.any(modelled) else 0.0


# Below, ``work`` is a wheel bank's work array and ``i`` a wheel's row in it (its index + 1). ``|`` rather than
# ``or``, no row views, no early return: numba makes each of those about ten times slower in these loops.

@njit(**JIT)
def has_friction(work, i):
    return (work[i, W_COULOMB] > 0.0) | (work[i, W_STATIC] > 0.0) | (work[i, W_VISCOUS] > 0.0)


@njit(**JIT)
def has_imbalance(work, i):
    return (work[i, W_STATIC_IMBALANCE] > 0.0) | (work[i, W_DYNAMIC_IMBALANCE] > 0.0)


@njit(**JIT)
def friction_torque(work, i, speed):
    """The friction torque on the wheel of row ``i`` (N m, about its axis) at relative speed ``speed``."""
    band = work[i, W_BAND]
    s = abs(speed)
    level = _friction_level(work[i, W_COULOMB], work[i, W_STATIC], work[i, W_STRIBECK], work[i, W_VISCOUS],
                            max(s, band))
    if s >= band and s > 0.0:
        return -level if speed > 0.0 else level
    if band > 0.0:
        return -level * speed / band
    return 0.0


@njit(**JIT)
def jitter(work, i, angle, speed):
    """``(F, τ)``: the imbalance force (N) and torque about the centre of mass (N m) of row ``i``, body axes."""
    c, s = math.cos(angle), math.sin(angle)
    ux = c * work[i, W_X0] + s * work[i, W_Y0]
    uy = c * work[i, W_X0 + 1] + s * work[i, W_Y0 + 1]
    uz = c * work[i, W_X0 + 2] + s * work[i, W_Y0 + 2]
    k = speed * speed
    f = work[i, W_STATIC_IMBALANCE] * k
    fx, fy, fz = f * ux, f * uy, f * uz
    d = work[i, W_DYNAMIC_IMBALANCE] * k
    rx, ry, rz = work[i, W_POSITION], work[i, W_POSITION + 1], work[i, W_POSITION + 2]
    return (fx, fy, fz), (ry * fz - rz * fy + d * ux, rz * fx - rx * fz + d * uy, rx * fy - ry * fx + d * uz)


@njit(**JIT)
def begin_wheel_step(bank, h):
    """Before an integration step of length ``h``: the wheels' momenta and held torques, the first stage next."""
    work = bank.work
    for j in range(bank.h_Nms.shape[0]):
        work[j + 1, W_H0] = bank.h_Nms[j]
        work[j + 1, W_TORQUE] = bank.torque_Nm[j]
    work[0, W_STAGE] = 0.0
    work[0, W_STEP_S] = h


@njit(**JIT)
def wheels_stage_torque(w, work):
    """The wheels' torque on the body at the next stage of the step under way (body axes, N m).

    The stage's wheel states are the step's start plus the previous
    stage's rates times ``0, h/2, h/2, h``; its rates are recorded for
    :func:`end_wheel_step`. A fifth stage would be outside the contract
    (see the module): the torque is then NaN, and the run stops as diverged.
    """
    stage = int(work[0, W_STAGE])
    beyond = stage > 3
    stage = min(stage, 3)
    lead = 0.0 if stage == 0 else (work[0, W_STEP_S] if stage == 3 else 0.5 * work[0, W_STEP_S])
    here, before = W_RATES + 2 * stage, W_RATES + 2 * stage - 2
    tx = ty = tz = 0.0
    for i in range(1, work.shape[0]):
        h, angle = work[i, W_H0], work[i, W_ANGLE]
        if stage > 0:
            h += lead * work[i, before]
            angle += lead * work[i, before + 1]
        ax, ay, az = work[i, W_AXIS], work[i, W_AXIS + 1], work[i, W_AXIS + 2]
        speed = h / work[i, W_INERTIA] - (ax * w[0] + ay * w[1] + az * w[2])
        h_dot = work[i, W_TORQUE] + friction_torque(work, i, speed)
        work[i, here] = h_dot
        work[i, here + 1] = speed
        hx, hy, hz = h * ax, h * ay, h * az
        tx -= h_dot * ax + (w[1] * hz - w[2] * hy)
        ty -= h_dot * ay + (w[2] * hx - w[0] * hz)
        tz -= h_dot * az + (w[0] * hy - w[1] * hx)
        if has_imbalance(work, i):
            _, tau = jitter(work, i, angle, speed)
            tx, ty, tz = tx + tau[0], ty + tau[1], tz + tau[2]
    work[0, W_STAGE] = stage + 1
    if beyond:
        return (math.nan, math.nan, math.nan)
    return (tx, ty, tz)


@njit(**JIT)
def end_wheel_step(bank, h):
    """After a step of length ``h``: the wheels' momenta and rotor angles (wrapped to [0, 2π)) at its end."""
    work, sixth, r = bank.work, h / 6.0, W_RATES
    for j in range(bank.h_Nms.shape[0]):
        i = j + 1
        bank.h_Nms[j] = work[i, W_H0] + sixth * (work[i, r] + 2.0 * work[i, r + 2] + 2.0 * work[i, r + 4]
                                                  + work[i, r + 6])
        angle = work[i, W_ANGLE] + sixth * (work[i, r + 1] + 2.0 * work[i, r + 3] + 2.0 * work[i, r + 5]
                                            + work[i, r + 7])
        work[i, W_ANGLE] = angle - TWO_PI * math.floor(angle / TWO_PI)


@njit(**JIT)
def write_wheel_row(bank, j, w, row, col):
    """Wheel ``j``'s telemetry into ``row`` from ``col`` (``schema.WHEEL_SUFFIXES``, then the friction
    and the jitter ones when it has them); returns the next column. Both paths write their rows with it."""
    h = bank.h_Nms[j]
    speed = wheel_speed(bank, j, h, w)
    row[col], row[col + 1], row[col + 2], row[col + 3] = speed, h, bank.torque_Nm[j], bank.requested_Nm[j]
    col += 4
    work, i = bank.work, j + 1
    if has_friction(work, i):
        row[col] = friction_torque(work, i, speed)
        col += 1
    if has_imbalance(work, i):
        angle = work[i, W_ANGLE]
        force, tau = jitter(work, i, angle, speed)
        row[col] = angle
        row[col + 1], row[col + 2], row[col + 3] = force
        row[col + 4], row[col + 5], row[col + 6] = tau
        col += 7
    return col


# --- the plant's stage torque with the wheels' states integrated ---------------------------------------------------

@njit(**JIT)
def plant_torque_wheels(t, q, w, stage_args):
    """The plant's stage torque when the wheels' states are integrated: :func:`~attsim.engine.plant.plant_torque` with
    wheels' terms from :func:`wheels_stage_torque` at the stage's wheel states. ``stage_args`` is ``(PlantInputs,
    the wheel bank's work array)``. A function of its own (chosen by :func:`attsim.engine.plant.advance_template`), so
    the plain plant's kernels carry no trace of it: a branch there cost them ~10%."""
    p, work = stage_args
    m, ext = p.dipole_Am2, p.tau_ext_Nm
    t_env = stage_time(t, p.t0_s)  # as plant_torque reads the environment
    k, f = table_cell(p.env_t, t_env)
    b = qrotate(normalized4(qconj(q)), lerp3(p.env_v, k, f, B_I))
    tw = wheels_stage_torque(w, work)
    d = disturbance_torques(t_env, q, p.env_t, p.env_v, p.faces, p.switches, p.J, p.residual_dipole_Am2)
    return (ext[0] + m[1] * b[2] - m[2] * b[1] + tw[0] + (d.gg[0] + d.aero[0] + d.srp[0] + d.res[0]),
            ext[1] + m[2] * b[0] - m[0] * b[2] + tw[1] + (d.gg[1] + d.aero[1] + d.srp[1] + d.res[1]),
            ext[2] + m[0] * b[1] - m[1] * b[0] + tw[2] + (d.gg[2] + d.aero[2] + d.srp[2] + d.res[2]))


@njit(**JIT, inline="always")
def inputs_alone(inputs, work):
    """The stage arguments of :func:`attsim.engine.plant.plant_torque`: the inputs."""
    return inputs


@njit(**JIT, inline="always")
def inputs_and_work(inputs, work):
    """The stage arguments of :func:`plant_torque_wheels`: the inputs and the wheels' work array."""
    return (inputs, work)
