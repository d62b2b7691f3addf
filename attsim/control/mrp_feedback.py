"""Basilisk's ``mrpFeedback`` attitude law as a built-in controller driving reaction wheels.

The law (Schaub & Junkins, *Analytical Mechanics of Space Systems*, 4th ed.,
sec. 8.4; Basilisk ``src/fswAlgorithms/attControl/mrpFeedback/mrpFeedback.c``,
control law type 0)::

    s  ← s + K σ Δt, each component scaled back to ±integral limit   (K_i > 0)
    z  = s + I δω                                                     (0 when K_i = 0)
    L_r = K σ + P δω + P K_i z - (ω_r + K_i z) × (I ω + G_s h_s) + I (ω × ω_r - ω̇_r) + L
    u  = -L_r

with ``σ = σ_BR`` the MRPs of the body relative to the guidance reference
(|σ| <= 1), ``δω = ω_BR``, ``ω_r = ω_RN`` and ``ω̇_r`` the reference's rate
and acceleration, ``ω = δω + ω_r``, all in body axes; ``I`` the inertia the
law assumes (default: the mission's); ``G_s h_s = Σ J_s (ĝ·ω + Ω) ĝ`` over
the law's wheels (their speeds relative to the body, the rate the law
knows); ``L`` a known external torque. ``u`` is the body torque asked of the
wheels, allocated as :class:`~attsim.QuaternionPD` allocates its torque
(minimum norm over its control axes, scaled as a whole to the motor limits
or clipped per wheel, null-space speed management for redundant arrays). The arithmetic is
:func:`attsim.control.kernels.mrp_feedback_torque`, which both paths call.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .._core.validate import non_negative_scalar, positive_scalar, real_number, sequence, vector3
from ..errors import InputError
from ..inertia import check_inertia
from .kernels import add_wheel_momentum, known, mrp_feedback
from .laws import QuaternionPD, _attitude_and_rate
from .loop import LAW_COMPENSATION, LAW_INTEGRAL_LIMIT, LAW_KD, LAW_KI, LAW_KP, MRP_FEEDBACK, PARAMETER_INERTIA

__all__ = ["MRPFeedback"]


class MRPFeedback(QuaternionPD):
    """Basilisk's ``mrpFeedback``: MRP feedback with integral action and feed-forward, to reaction wheels.

    Parameters
    ----------
    K_Nm : float
        Attitude gain ``K`` (N m per unit MRP).
    P_Nms : float
        Rate gain ``P`` (N m s).
    period_s : float
        Control period. The integral advances by the time since the law's
        previous cycle; as in Basilisk, a cycle whose previous one ran at
        ``t = 0`` (or that has none) adds nothing.
    wheels : sequence of ReactionWheel or names
        The wheels it drives (spanning three axes); their momentum enters
        the gyroscopic term.
    body_torque : BodyTorque or its name, optional
        Instead of wheels: ``u`` commanded as it is to an ideal body torque
        (Basilisk's ``extForceTorque``).
    command_delay_s : float
        Commands act this long after the cycle that decided them
        (:class:`~attsim.control.Controller`). Basilisk's order of modules
        sets it: when the dynamics runs before the flight software at each
        instant (one task, or a dynamics process ahead of the FSW process),
        the command decided at ``t`` acts from the next *dynamics* step, so
        the delay is the dynamics task's period (0.1 s in
        ``scenarioAttitudeFeedback2T``, whose FSW runs every 0.5 s); when an
        effector reads the command in the same update (the wheels of
        ``scenarioAttitudeFeedbackRW``), none.
    target_q, target
        A fixed attitude or an :mod:`attsim.guidance` target (exactly one).
    Ki_per_kg_m2 : float
        Integral gain ``K_i`` (1/(kg m²)); 0 (default) turns integral action off (Basilisk's ``Ki = -1``). The
        integral term is Basilisk's: ``z = K ∫σ dt + I δω``, in ``u`` as ``- P K_i z`` and in the gyroscopic term
    integral_limit_Nms : float
        Bound on each component of ``s = K ∫σ dt`` (N m s); needed when ``K_i > 0``.
    inertia_kg_m2
        The inertia the law assumes (3x3); default the mission's.
    known_torque_Nm
        A known external torque ``L`` (body axes) the law cancels.
    attitude_source, rate_source, null_space_gain_Nm_s, wheel_speed_target_rad_s, name, allocation, control_axes
        As for :class:`~attsim.QuaternionPD` (``allocation="clip"`` with ``control_axes=np.eye(3)`` is Basilisk's
        ``rwMotorTorque`` followed by its wheels' torque saturation).
    magnetorquer_feedforward : Magnetorquer, optional
        Magnetorquers another law drives (a :class:`~attsim.MomentumUnloading`): their torque ``m × B`` is
        subtracted from ``u`` before it reaches the wheels (Basilisk's ``mtbFeedforward``), so that unloading
        does not disturb the pointing. Needs ``magnetometer``; add their law to the mission first (the dipole it
        decides at the same instant is the one fed forward).
    magnetometer : Magnetometer, optional
        The field ``B`` of that torque (body axes, as measured).

    The integral starts at zero, holds in cycles that decide nothing, and
    starts again at zero when a mode runs the law again (as Basilisk's
    ``Reset``).
    """

    def __init__(self, K_Nm: float, P_Nms: float, period_s: float, wheels: Sequence = (), *, target_q=None, target=None,
                 Ki_per_kg_m2: float = 0.0, integral_limit_Nms: float | None = None, inertia_kg_m2=None,
                 known_torque_Nm=(0.0, 0.0, 0.0), attitude_source=None, rate_source=None,
                 null_space_gain_Nm_s: float = 0.0, wheel_speed_target_rad_s=0.0, name: str = "mrp_feedback",
                 allocation: str = "scale", control_axes=None, body_torque=None, command_delay_s: float = 0.0,
                 magnetorquer_feedforward=None, magnetometer=None):
        K, P = positive_scalar(K_Nm, "K_Nm"), positive_scalar(P_Nms, "P_Nms")
        if not sequence(wheels, "wheels") and body_torque is None:
            raise InputError("wheels", f"MRPFeedback {name!r} drives reaction wheels or a body_torque: give those it "
                             "commands")
        super().__init__(target_q, K, P, period_s, wheels=wheels, name=name, attitude_source=attitude_source,
                         rate_source=rate_source, target=target, null_space_gain_Nm_s=null_space_gain_Nm_s,
                         wheel_speed_target_rad_s=wheel_speed_target_rad_s, allocation=allocation,
                         control_axes=control_axes, body_torque=body_torque, command_delay_s=command_delay_s,
                         magnetorquer_feedforward=magnetorquer_feedforward, magnetometer=magnetometer)
        self.K_Nm, self.P_Nms = K, P
        if real_number(Ki_per_kg_m2, "Ki_per_kg_m2") < 0.0:
            raise InputError("Ki_per_kg_m2", "must be >= 0: 0 turns the integral off (Basilisk's Ki = -1; give no "
                             "integral_limit_Nms then)", f"got {Ki_per_kg_m2!r}")
        self.Ki_per_kg_m2 = non_negative_scalar(Ki_per_kg_m2, "Ki_per_kg_m2")
        if self.Ki_per_kg_m2 > 0.0 and integral_limit_Nms is None:
            raise InputError("integral_limit_Nms", "is required (> 0) when Ki_per_kg_m2 > 0: the bound on each "
                             "component of the integral K ∫σ dt, N m s")
        self.integral_limit_Nms = None if integral_limit_Nms is None else positive_scalar(
            integral_limit_Nms, "integral_limit_Nms")
        self.inertia_model = None if inertia_kg_m2 is None else check_inertia(
            inertia_kg_m2, allow_nonphysical=True, field_name="inertia_kg_m2").matrix_kg_m2
        self.known_torque_Nm = tuple(float(v) for v in vector3(known_torque_Nm, "known_torque_Nm"))
        self._prior_s = 0.0

    def prepare(self, mission):
        super().prepare(mission)
        inertia = mission.inertia_kg_m2 if self.inertia_model is None else self.inertia_model
        self._inertia = tuple(float(v) for v in np.ravel(inertia))
        self._gains = (self.K_Nm, self.P_Nms, self.Ki_per_kg_m2, self.integral_limit_Nms or 0.0)

    def start(self, sc):
        super().start(sc)
        self._prior_s = 0.0

    def restart(self) -> None:
        super().restart()
        self._prior_s = 0.0  # as Basilisk's Reset: the next cycle adds nothing to the integral

    loop_unit = MRP_FEEDBACK

    def fill_loop_row(self, bank, c: int, build) -> None:
        super().fill_loop_row(bank, c, build)
        p = bank.parameters[c]
        p[LAW_KI], p[LAW_INTEGRAL_LIMIT] = self.Ki_per_kg_m2, self.integral_limit_Nms or 0.0
        p[LAW_KP], p[LAW_KD] = self.K_Nm, self.P_Nms  # K and P take the PD's columns
        p[LAW_COMPENSATION:LAW_COMPENSATION + 3] = self.known_torque_Nm
        p[PARAMETER_INERTIA:PARAMETER_INERTIA + 9] = self._inertia

    def take_loop_row(self, bank, c: int) -> None:
        self._integral = tuple(float(v) for v in bank.memory[c, :3])
        self._prior_s = float(bank.memory[c, 3])

    @property
    def integral(self) -> np.ndarray:
        """The integral ``s = K ∫σ dt`` (N m s, body axes) after the last cycle (zeros without integral action)."""
        return np.array(self._integral)

    def torque(self, q, w, t_s: float = 0.0) -> np.ndarray:
        """``u`` (N m, body axes) for attitude ``q`` and rate ``w`` at ``t_s``, with the wheels' momentum now and
        the current integral (not advanced: this asks, it runs no cycle)."""
        q, w = tuple(float(v) for v in q), tuple(float(v) for v in w)
        return np.array(self._torque(q, w, t_s, 0.0)[0])

    def _torque(self, q, w, t_s: float, dt_s: float):
        sc = getattr(self, "_sc", None)
        q_ref, w_ref, wd_ref = self.pointing.reference(sc, t_s)
        h = (0.0, 0.0, 0.0)
        if sc is not None:  # in the law's order, as the compiled cycle sums them
            for wheel in self._wheels:
                h = add_wheel_momentum(h, tuple(wheel.axis), wheel.inertia_kg_m2, wheel.speed_rad_s(sc), w)
        return mrp_feedback(q, w, q_ref, w_ref, wd_ref, self._inertia, h, self._gains, self._integral, dt_s,
                            self.known_torque_Nm)

    def decide(self, t_s, readings):
        q, w = _attitude_and_rate(self._sc, readings, self._attitude, self._rate)
        if not known(q, w):
            return {}
        tau, self._integral = self._torque(q, w, t_s, 0.0 if self._prior_s == 0.0 else t_s - self._prior_s)
        self._prior_s = t_s
        tau = self._fed_forward(tau, readings)
        return {self._body_torque: tau} if self._body_torque is not None else self._wheel_commands(tau)
