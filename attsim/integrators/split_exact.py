"""``split_exact``: exact free-body flow interleaved with torque kicks.

For a torque that derives from an attitude potential (gravity gradient, a
magnetic dipole in a fixed field) the Hamiltonian splits into the free
rigid body ``T`` and the potential ``U(q)``; the flow of ``U`` is a kick of
the body momentum, ``m ← m + τ δt``, at fixed attitude. Strang splitting
(Celledoni, Fassò, Säfström & Zanna 2008; Vilmart, eq. 8)::

    kick(h/2) ∘ free(h) ∘ kick(h/2)

with ``free`` the exact motion of :mod:`.free_body`, is symplectic and of
order 2, with an error constant set by the torque alone (the free part has
none). ``order=4`` composes it by Suzuki's fractal scheme.

Option ``free_flow="axes"`` replaces the exact free flow by the Strang axis
splitting of ``split2``: that is the classical way to add a torque to
``split2`` and the comparison the integrator study makes. Any torque form
is accepted; for a torque that is not conservative (damping, control) the
method is still second order but loses its symplectic advantage.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..errors import InputError
from .base import FixedStepIntegrator, stage_torque
from .free_body import free_body_at, free_body_setup
from .splitting import STRANG, SUZUKI4, axis_order, momentum_output, momentum_state, strang

FREE_FLOWS = {"exact": 0.0, "axes": 1.0}


@njit(cache=True, nogil=True)
def _kick(targs, t, dt, q, m, J):
    w = (m[0] / J[0], m[1] / J[4], m[2] / J[8])
    tau = stage_torque(t, q, w, targs)
    return (m[0] + dt * tau[0], m[1] + dt * tau[1], m[2] + dt * tau[2])


@njit(cache=True, nogil=True)
def _free(h, q, m, J, params, buffer):
    if params[1] == 0.0:
        c = free_body_setup(q, m, (J[0], J[4], J[8]))
        qn, mn = free_body_at(c, h, buffer)
    else:
        qn, mn = strang(h, q, m, J, (params[2], params[3], params[4]))
    if qn[0] * q[0] + qn[1] * q[1] + qn[2] * q[2] + qn[3] * q[3] < 0.0:
        qn = (-qn[0], -qn[1], -qn[2], -qn[3])
    return qn, mn


@njit(cache=True, nogil=True)
def _kick_free_kick(targs, t, h, q, m, J, params, buffer):
    m = _kick(targs, t, 0.5 * h, q, m, J)
    q, m = _free(h, q, m, J, params, buffer)
    return q, _kick(targs, t + h, 0.5 * h, q, m, J)


@njit(cache=True, nogil=True)
def split_exact_step(targs, t, h, state, J, Jinv, params):
    q, m = state
    buffer = np.empty(4)
    if params[0] == 4.0:
        for c in SUZUKI4:
            q, m = _kick_free_kick(targs, t, c * h, q, m, J, params, buffer)
            t += c * h
    else:
        for c in STRANG:
            q, m = _kick_free_kick(targs, t, c * h, q, m, J, params, buffer)
    return q, m


class SplitExact(FixedStepIntegrator):
    name = "split_exact"
    description = "Strang splitting of the exact free-body flow and torque kicks (order 2, or 4 with order=4); for weak conservative torques"
    order = 2
    torque = "any"
    principal_frame = True
    options = ("order", "free_flow")
    invariants = ("unit quaternion", "symplectic for torques from an attitude potential")
    step = split_exact_step
    initial_state = momentum_state
    output_state = momentum_output

    def params(self, problem):
        from ..inertia import principal_axes

        order = problem.options.get("order", 2)
        if order not in (2, 4):
            raise InputError("order", "must be 2 or 4 for method 'split_exact'", f"got {order!r}")
        free_flow = problem.options.get("free_flow", "exact")
        if free_flow not in FREE_FLOWS:
            raise InputError("free_flow", f"must be one of {sorted(FREE_FLOWS)}", f"got {free_flow!r}")
        return (float(order), FREE_FLOWS[free_flow]) + axis_order(principal_axes(problem.inertia_kg_m2)[0])
