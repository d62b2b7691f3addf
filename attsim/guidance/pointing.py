"""A controller's pointing: its guidance target, evaluated in a mission, and the pointing telemetry.

An attitude controller follows a :mod:`attsim.guidance` target: at each
cycle the target gives the reference ``q_IR``, ``ω_R`` (and ``ω̇_R``) from
the mission's orbit, Sun and Earth rotation at that time (the environment
table, :mod:`attsim.environment.table`), and the controller acts on the
error ``q_RB = q_IR* ⊗ q_IB`` and the rate error ``ω_B − R_BR ω_R``.

The pointing columns (:data:`attsim.telemetry.schema.POINTING_COLUMNS`) follow the
attitude law running at each row (the first active one in the mission's
order, so a mode switch from Sun pointing to nadir switches the reference):
the reference attitude and the true pointing error — the total angle (deg)
and its small-angle components per body axis (rad). While no attitude law
runs (a detumbling mode) they are NaN: there is nothing to point at.
"""

from __future__ import annotations

import numpy as np

from .._core.validate import unit_quaternion
from ..errors import InputError
from .targets import Inertial, Target
from .kernels import error_angle_deg, error_vector, reference_now

__all__ = ["Pointing", "target_of", "reference_now", "pointing_values"]

_NO_TABLE_T, _NO_TABLE_V = np.empty(0), np.empty((0, 1))


def target_of(target_q, target, owner: str) -> Target:
    """The target given as a fixed quaternion (``target_q``) or a guidance target (``target``): exactly one."""
    if isinstance(target_q, Target):  # a target given in the quaternion's place
        target_q, target = None, target_q if target is None else target
    if (target_q is None) == (target is None):
        raise InputError("target", f"{owner} needs exactly one of target_q (a fixed attitude) and target (a "
                         "guidance target)")
    if target is None:
        return Inertial(unit_quaternion(target_q, "target_q"))
    if not isinstance(target, Target):
        raise InputError("target", "must be an attsim.guidance target (Inertial, NadirPointing, SunPointing, Slew, "
                         "GroundTarget)", f"got {type(target).__name__}")
    return target


class Pointing:
    """A target bound to a running mission: its reference now, and the pointing telemetry."""

    def __init__(self, target: Target):
        self.target = target
        self.kind = int(target.kind)
        self.parameters = np.array(target.parameters)  # writable: numba compiles one version for every bank

    def check(self, mission, owner: str) -> None:
        """Refuse a target that needs an orbit, the Sun or the Earth's rotation in a mission without them."""
        t = self.target
        if (t.uses_orbit or t.uses_sun or t.uses_earth_rotation) and mission.environment is None:
            raise InputError("target", f"{owner}'s {type(t).__name__} target needs an orbit: the mission has no "
                             "environment")

    def reference(self, sc, t_s: float) -> tuple:
        """``(q_IR, ω_R, ω̇_R)`` as tuples at ``t_s`` (the environment table interpolated there).

        ``sc`` may be None outside a run, for a target that needs no orbit,
        Sun or Earth rotation.
        """
        if sc is None:
            t = self.target
            if t.uses_orbit or t.uses_sun or t.uses_earth_rotation:
                raise InputError("target", f"a {type(t).__name__} target is evaluated in a running mission only")
            return reference_now(self.kind, self.parameters, t_s, _NO_TABLE_T, _NO_TABLE_V)
        return reference_now(self.kind, self.parameters, t_s, sc.env_t, sc.env_v)

    def values(self, sc) -> list:
        """The pointing columns now: ``q_IR``, the true error angle (deg) and its per-axis components (rad)."""
        q, _ = sc.state()
        q_ref, _, _ = self.reference(sc, sc.now)
        return [*q_ref, error_angle_deg(q, q_ref), *error_vector(q, q_ref)]


def pointing_values(laws, sc) -> list:
    """The pointing columns now, from the first of the attitude ``laws`` (in mission order) that is running."""
    for law in laws:
        if law.active:
            return law.pointing.values(sc)
    return [float("nan")] * 8
