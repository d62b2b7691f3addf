"""``split_exact``: exact free-body flow interleaved with torque kicks.

For a torque that derives from an attitude potential (gravity gradient, a
magnetic dipole in a fixed field) the Hamiltonian splits into the free
rigid body ``T`` and the potential ``U(q)``; the flow of ``U`` is a kick of
the body momentum, ``m ← m + τ δt``, at fixed attitude. Strang splitting
(Celledoni, Fassò, Säfström & Zanna 2008; Vilmart, eq. 8)::

    kick(h/2) ∘ free(h) ∘ kick(h/2)

with ``free`` the exact motion of :mod:`.free_body`, is symplectic and of
order 2, with an error constant set by the torque alone (the free part has
none). Each step restarts the free flow from the state reached, so near the
separatrix a step is as exact as the flow: a body that flips, flips.
``order=4`` composes it by Suzuki's fractal scheme. The closing half
kick is the implicit adjoint of the opening one (solved by fixed-point
iteration), so the scheme stays symmetric, and of the stated order, also
for torques that depend on the rate.

Option ``free_flow="axes"`` replaces the exact free flow by the Strang axis
splitting of ``split2``: that is the classical way to add a torque to
``split2`` and the comparison the integrator study makes. Any torque form
is accepted; for a torque that is not conservative (damping, control) the
method keeps its order but loses its symplectic advantage.
"""

from __future__ import annotations

from .._core.jit import njit
from .._core.validate import one_of
from .base import FixedStepIntegrator, stage_torque
from .free_body import free_body_at, free_body_setup
from .splitting import STRANG, SUZUKI4, axis_order, momentum_output, momentum_state, strang

FREE_FLOWS = {"exact": 0.0, "axes": 1.0}


@njit(cache=True, nogil=True)
def _kick(targs, t, dt, q, m, J):
    """Explicit half kick ``m + dt τ(t, q, m)``."""
    tau = stage_torque(t, q, (m[0] / J[0], m[1] / J[4], m[2] / J[8]), targs)
    return (m[0] + dt * tau[0], m[1] + dt * tau[1], m[2] + dt * tau[2])


@njit(cache=True, nogil=True)
def _kick_implicit(targs, t, dt, q, m, J):
    """Implicit half kick ``m' = m + dt τ(t, q, m')``, the adjoint of :func:`_kick`.

    Pairing the two keeps the composition symmetric, hence second order, when
    the torque depends on the rate too (damping, control); for a torque of
    ``t`` and ``q`` alone the first iterate is already exact.
    """
    m_new = _kick(targs, t, dt, q, m, J)
    for _ in range(3):
        tau = stage_torque(t, q, (m_new[0] / J[0], m_new[1] / J[4], m_new[2] / J[8]), targs)
        m_new = (m[0] + dt * tau[0], m[1] + dt * tau[1], m[2] + dt * tau[2])
    return m_new


@njit(cache=True, nogil=True)
def _free(h, q, m, J, params):
    if params[1] == 0.0:
        qn, mn = free_body_at(free_body_setup(q, m, (J[0], J[4], J[8])), h)
    else:
        qn, mn = strang(h, q, m, J, (params[2], params[3], params[4]))
    if qn[0] * q[0] + qn[1] * q[1] + qn[2] * q[2] + qn[3] * q[3] < 0.0:
        qn = (-qn[0], -qn[1], -qn[2], -qn[3])
    return qn, mn


@njit(cache=True, nogil=True)
def _kick_free_kick(targs, t, h, q, m, J, params):
    m = _kick(targs, t, 0.5 * h, q, m, J)
    q, m = _free(h, q, m, J, params)
    return q, _kick_implicit(targs, t + h, 0.5 * h, q, m, J)


@njit(cache=True, nogil=True)
def split_exact_step(targs, t, h, state, J, Jinv, params):
    q, m = state
    if params[0] == 4.0:
        for c in SUZUKI4:
            q, m = _kick_free_kick(targs, t, c * h, q, m, J, params)
            t += c * h
    else:
        for c in STRANG:
            q, m = _kick_free_kick(targs, t, c * h, q, m, J, params)
    return q, m


class SplitExact(FixedStepIntegrator):
    name = "split_exact"
    description = ("Strang splitting of the exact free-body flow and torque kicks (order 2, or 4 with order=4); "
                   "for weak conservative torques")
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

        order = one_of(problem.options.get("order", 2), "order", (2, 4))
        free_flow = one_of(problem.options.get("free_flow", "exact"), "free_flow", tuple(FREE_FLOWS))
        return (float(order), FREE_FLOWS[free_flow]) + axis_order(principal_axes(problem.inertia_kg_m2)[0])
