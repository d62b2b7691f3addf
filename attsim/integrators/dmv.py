"""``dmv``: the discrete Moser-Veselov algorithm, plain (order 2) or preprocessed (orders 4 to 10).

Moser & Veselov (1991) discretise the free rigid body as a discrete
Lagrangian system on SO(3). In quaternion form (McLachlan & Zanna 2005,
Found. Comput. Math. 5, 87; Hairer & Vilmart 2006, J. Phys. A 39, 13225;
Vilmart, "Rigid body dynamics", seed 002; Hairer, Lubich & Wanner,
*Geometric Numerical Integration*, 2nd ed., sec. VII.5) one step of size
``h`` from the body momentum ``m_n`` (principal axes, moments ``I``) and the
attitude ``q_n`` is:

1. find the unit quaternion ``p = (1, c) / sqrt(1 + |c|²)`` with ::

       h (1 + |c|²) m_n = 2 (I c + c × I c)                         (implicit)

2. ``q_{n+1} = q_n ⊗ p``  (the body turns by the rotation ``p``);
3. ``m_{n+1} = m_n - 4 / (h (1 + |c|²)) c × I c``  (``= R(p)ᵀ m_n``).

From (1) and (3), ``h (1 + |c|²) m_{n+1} = 2 (I c - c × I c)``, so the step
run backwards from ``m_{n+1}`` finds ``-c``: the method is symmetric, of
order 2, and time-reversible. ``m_{n+1} ± m_n`` are ``2 I c`` and
``c × I c`` scaled, which are orthogonal both in the plain and in the
``I⁻¹`` inner product: the Casimir ``|m|²/2`` and the energy
``Σ m_k²/(2 I_k)`` are kept exactly, and so is the inertial momentum
``R(q) m`` because ``m_{n+1} = R(p)ᵀ m_n``. The body momentum never leaves
its exact orbit (its error is a phase along it) and the attitude always
carries the exact inertial momentum.

Preprocessing (``order = 4, 6, 8, 10``; Hairer & Vilmart 2006): the
same step on a body with modified moments ``1/Ĩ_k = σ/I_k + δ`` is of order
``order`` for the original body. ``σ - 1`` and ``δ`` are series in ``h²``
whose coefficients are polynomials in the energy and the Casimir of the
motion (:mod:`.dmv_coefficients`, derived and checked by
``tools/derive_dmv_coefficients.py``); they are computed once per run, from
the initial state. The modified energy ``σ H + δ C`` is a combination of the
original invariants, so the preprocessed method also keeps the original
energy to round-off, at the cost of the order-2 step.

The implicit stage (1) is solved by fixed-point iteration on
``c = α (h/2) I⁻¹ m_n + I⁻¹ (I c × c)``, ``α = 1 + |c|²`` (Gauss-Seidel
sweeps in the order of Hairer & Vilmart's published code), which contracts by about
``h |ω| |I_i - I_j| / (2 I_k)`` per sweep. It stops when a sweep changes
``c`` by at most :data:`STAGE_TOLERANCE` relative (a few units of round-off)
and gives up after :data:`MAX_STAGE_ITERATIONS` sweeps; then the run stops
with an :class:`~attsim.errors.InputError` naming ``dt``: the step is too
large for the rotation (``h |ω|`` near or above 1 rad, where (1) may have no
real solution at all). Accuracy asks for much smaller steps anyway: the
corrections of the preprocessing are a series in ``(h |ω|)²``.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from .._core.jit import njit
from ..dynamics import qmul
from ..errors import InputError
from .base import FixedStepIntegrator
from .dmv_coefficients import ORDERS, corrections

__all__ = ["DMV", "MAX_STAGE_ITERATIONS", "STAGE_TOLERANCE"]

_JIT = dict(cache=True, nogil=True)

# The stage is converged when one sweep changes |c|_1 by at most this fraction
# of |c|_1: 8 units of round-off (a sweep can move each component by an ulp or
# two once the iteration has reached round-off, so a tighter bound could stall).
STAGE_TOLERANCE = 8.0 * 2.0**-52
# A sweep gains a factor ~h|ω|/2 at least: 100 sweeps are far more than a
# step that resolves the rotation needs (under 10 for h|ω| = 0.01).
MAX_STAGE_ITERATIONS = 100

# params: [0] dt, [1:4] the inverse modified moments and [4:7] the modified
# moments for a step of dt, and for any other step h (the shortened last one)
# the dimensionless corrections of dt: [7:11] s_k dt^2k, [11:15] d_k dt^2k I_max
# (I_max the largest moment) and [15] 1/I_max. They are (|ω| dt)^2k in size:
# unlike s_k, d_k, C^k or H^k apart, they cannot overflow for a body in any units.


@njit(**_JIT)
def modified_moments(h, Jinv, params):
    """``(1/Ĩ_1, 1/Ĩ_2, 1/Ĩ_3), (Ĩ_1, Ĩ_2, Ĩ_3)`` for the step ``h``: ``1/Ĩ_k = σ/I_k + δ``."""
    if h == params[0]:
        return (params[1], params[2], params[3]), (params[4], params[5], params[6])
    u = (h / params[0]) ** 2
    sigma = 1.0 + u * (params[7] + u * (params[8] + u * (params[9] + u * params[10])))
    delta = u * (params[11] + u * (params[12] + u * (params[13] + u * params[14]))) * params[15]
    k1, k2, k3 = sigma * Jinv[0] + delta, sigma * Jinv[4] + delta, sigma * Jinv[8] + delta
    return (k1, k2, k3), (1.0 / k1, 1.0 / k2, 1.0 / k3)


@njit(**_JIT)
def dmv_stage(a, f):
    """Solve ``c = (1 + |c|²) a + f ⊙ (c_2 c_3, c_3 c_1, c_1 c_2)`` by Gauss-Seidel sweeps.

    ``a = (h/2) Ĩ⁻¹ m`` and ``f_1 = (Ĩ_2 - Ĩ_3)/Ĩ_1`` (cyclic). Returns
    ``(c, converged)``; a NaN or infinite iterate never counts as converged.
    """
    c1 = a[0] + f[0] * a[1] * a[2]
    c2 = a[1] + f[1] * c1 * a[2]
    c3 = a[2] + f[2] * c1 * c2
    for _ in range(MAX_STAGE_ITERATIONS):
        alpha = 1.0 + c1 * c1 + c2 * c2 + c3 * c3
        n1 = alpha * a[0] + f[0] * c2 * c3
        n2 = alpha * a[1] + f[1] * n1 * c3
        n3 = alpha * a[2] + f[2] * n1 * n2
        change = abs(n1 - c1) + abs(n2 - c2) + abs(n3 - c3)
        c1, c2, c3 = n1, n2, n3
        # finite first: diverged iterates give inf <= inf
        if math.isfinite(change) and change <= STAGE_TOLERANCE * (abs(c1) + abs(c2) + abs(c3)):
            return (c1, c2, c3), True
    return (c1, c2, c3), False


@njit(**_JIT)
def dmv_step(targs, t, h, state, J, Jinv, params):
    """One DMV step on the modified body; the flag of a stage that did not converge is set, state kept."""
    q, m, failed = state
    k, mod = modified_moments(h, Jinv, params)
    d1, d2, d3 = mod[1] - mod[2], mod[2] - mod[0], mod[0] - mod[1]
    hh = 0.5 * h
    c, converged = dmv_stage((hh * k[0] * m[0], hh * k[1] * m[1], hh * k[2] * m[2]), (d1 * k[0], d2 * k[1], d3 * k[2]))
    if not converged:
        return q, m, 1.0
    alpha = 1.0 + c[0] * c[0] + c[1] * c[1] + c[2] * c[2]
    g = 4.0 / (h * alpha)
    m = (m[0] + g * d1 * c[1] * c[2], m[1] + g * d2 * c[2] * c[0], m[2] + g * d3 * c[0] * c[1])
    s = 1.0 / math.sqrt(alpha)
    q = qmul(q, (s, s * c[0], s * c[1], s * c[2]))
    # the product of unit quaternions is unit to round-off; keep it from random-walking
    n = 1.0 / math.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
    return (q[0] * n, q[1] * n, q[2] * n, q[3] * n), m, 0.0


@njit(**_JIT)
def dmv_state(q, w, J, params):
    """``(q_IP, m = I ω, stage-failed flag)``, principal axes."""
    return (q[0], q[1], q[2], q[3]), (J[0] * w[0], J[4] * w[1], J[8] * w[2]), 0.0


@njit(**_JIT)
def dmv_output(state, J, params):
    q, m, failed = state
    return q, (m[0] / J[0], m[1] / J[4], m[2] / J[8])


@njit(**_JIT)
def stage_failed(state, params):
    return state[2] != 0.0


def check_order(order) -> int:
    """The ``order`` option: one of :data:`~.dmv_coefficients.ORDERS`, as an integer."""
    if isinstance(order, bool) or not isinstance(order, numbers.Integral) or int(order) not in ORDERS:
        raise InputError("order", "must be one of the integers 2, 4, 6, 8, 10 for method 'dmv'", f"got {order!r}")
    return int(order)


# the largest turn a step (|H| / I_min dt, rad) the preprocessed orders accept: their series converges well below it
MAX_PREPROCESSED_TURN_RAD = 1.5


class DMV(FixedStepIntegrator):
    name = "dmv"
    description = ("discrete Moser-Veselov, torque-free; order=2 (default) or preprocessed 4, 6, 8, 10 "
                   "(Hairer & Vilmart 2006); energy and |H| to round-off")
    order = 2
    torque = "none"
    principal_frame = True
    options = ("order",)
    invariants = ("unit quaternion", "|H| (Casimir)", "energy", "inertial H", "all to round-off",
                  "symplectic, time-reversible")
    step = dmv_step
    initial_state = dmv_state
    output_state = dmv_output
    must_stop = stage_failed

    def params(self, problem):
        from ..inertia import principal_axes

        order = check_order(problem.options.get("order", 2))
        moments = principal_axes(problem.inertia_kg_m2)[0]
        if order > 2:
            # the modified moments are a series in (|omega| dt)^2: beyond about 1.5 rad a step its terms stop
            # shrinking, and past the stage's own failures a step of nearly pi returned radians of error silently;
            # |H| / I_min bounds |omega| along the whole torque-free motion
            worst = float(np.linalg.norm(problem.inertia_kg_m2 @ problem.omega0_rad_s)) / float(moments.min())
            if worst * problem.dt_s > MAX_PREPROCESSED_TURN_RAD:
                raise InputError("dt", f"is too large for the preprocessed DMV of order {order}: at most "
                                 f"{MAX_PREPROCESSED_TURN_RAD} rad of turn a step (|H| / I_min dt)",
                                 f"dt = {problem.dt_s:g} s turns up to {worst * problem.dt_s:.3g} rad; reduce dt or "
                                 "use order=2")
        # the corrections times dt^2k in units of the largest moment: the body x = I / I_max with
        # the invariants of the turn per step, C h^2 / I_max^2 and H h^2 / I_max (no overflow in any units)
        scale = float(moments.max())
        turn = problem.omega0_rad_s * problem.dt_s
        momentum = (problem.inertia_kg_m2 / scale) @ turn
        s, d = corrections(moments / scale, 0.5 * float(momentum @ momentum), 0.5 * float(turn @ momentum), order)
        inverse = (1.0 + sum(s)) / moments + sum(d) / scale
        if not (np.all(np.isfinite(inverse)) and np.all(inverse > 0.0)):
            raise InputError("dt", f"is too large for the preprocessed DMV of order {order}: a modified moment of "
                             "inertia is not positive",
                             f"dt = {problem.dt_s:g} s, |omega| dt = {np.linalg.norm(turn):.3g} rad; reduce dt")
        return (problem.dt_s, *inverse.tolist(), *(1.0 / inverse).tolist(), *s, *d, 1.0 / scale)

    def stopped(self, problem, partial):
        turn = float(np.linalg.norm(problem.omega0_rad_s * problem.dt_s))
        raise InputError("dt", f"is too large: the implicit stage of the DMV step did not converge in "
                         f"{MAX_STAGE_ITERATIONS} iterations (a large step may have no solution)",
                         f"step ending at t = {partial.t_s[-1]:.6g} s; dt = {problem.dt_s:g} s, "
                         f"|omega0| dt = {turn:.3g} rad; reduce dt")
