"""Explicit symplectic splitting of the free rigid body into axis rotations.

The kinetic energy in principal axes splits into three exactly solvable parts
(McLachlan 1993; Touma & Wisdom 1994; Vilmart, "Rigid body dynamics",
splitting methods)::

    T = m_1^2 / (2 I_1) + m_2^2 / (2 I_2) + m_3^2 / (2 I_3)

The flow of ``m_i^2 / (2 I_i)`` for a time ``τ`` is a rotation about body
axis ``i`` by ``α = m_i τ / I_i``: the body momentum turns by ``-α`` about
``e_i`` (``dm/dt = m × ∇T_i``) and the attitude by ``+α``
(``q ← q ⊗ (cos α/2, sin α/2 e_i)``). Each sub-flow is a rotation, so
``|m|`` (the Casimir) and ``|q|`` are kept to round-off, and the composition
is symplectic: the energy error stays bounded instead of drifting.

* ``split2`` — Strang: ``A(h/2) B(h/2) C(h) B(h/2) A(h/2)``, order 2.
* ``split4`` — Suzuki's fractal composition of five Strang steps with
  ``p = 1 / (4 - 4^(1/3))``: ``S(p h)^2 S((1 - 4p) h) S(p h)^2``, order 4.
* ``split6`` — Yoshida's (1990) 6th-order composition, "solution A", of
  seven Strang steps.

Axis order. Which axis is split outermost (A) and which innermost (C)
changes the error constant by orders of magnitude (Fassò 2003, "Comparison
of splitting algorithms for the rigid body"). attsim's rule, measured by
``tools/study_splitting_order.py`` over random initial momenta and bodies:
see :data:`AXIS_ORDER_RULE`.
"""

from __future__ import annotations

import math

import numpy as np

from .._core.jit import njit
from ..dynamics import qmul
from .base import FixedStepIntegrator, bind_globals

_JIT = dict(cache=True, nogil=True)

SUZUKI_P = 1.0 / (4.0 - 4.0 ** (1.0 / 3.0))
STRANG = (1.0,)
SUZUKI4 = (SUZUKI_P, SUZUKI_P, 1.0 - 4.0 * SUZUKI_P, SUZUKI_P, SUZUKI_P)
_Y1, _Y2, _Y3 = -1.17767998417887, 0.235573213359357, 0.784513610477560
YOSHIDA6 = (_Y3, _Y2, _Y1, 1.0 - 2.0 * (_Y1 + _Y2 + _Y3), _Y1, _Y2, _Y3)

AXIS_ORDER_RULE = "smallest moment outermost (A), largest in the middle (B), intermediate innermost (C, the full step)"


def axis_order(moments) -> tuple[float, float, float]:
    """Axis indices ``(A, B, C)`` for :func:`strang` from the principal moments.

    See :data:`AXIS_ORDER_RULE`; ties are broken by axis index.
    """
    smallest, intermediate, largest = (int(i) for i in np.argsort(np.asarray(moments), kind="stable"))
    return (float(smallest), float(largest), float(intermediate))


@njit(**_JIT)
def axis_flow(axis, tau, q, m, J):
    """Exact flow of ``m_axis^2 / (2 I_axis)`` for a time ``tau``."""
    if axis == 0:
        alpha = m[0] / J[0] * tau
        c, s = math.cos(alpha), math.sin(alpha)
        m = (m[0], c * m[1] + s * m[2], c * m[2] - s * m[1])
        rot = (math.cos(0.5 * alpha), math.sin(0.5 * alpha), 0.0, 0.0)
    elif axis == 1:
        alpha = m[1] / J[4] * tau
        c, s = math.cos(alpha), math.sin(alpha)
        m = (c * m[0] - s * m[2], m[1], c * m[2] + s * m[0])
        rot = (math.cos(0.5 * alpha), 0.0, math.sin(0.5 * alpha), 0.0)
    else:
        alpha = m[2] / J[8] * tau
        c, s = math.cos(alpha), math.sin(alpha)
        m = (c * m[0] + s * m[1], c * m[1] - s * m[0], m[2])
        rot = (math.cos(0.5 * alpha), 0.0, 0.0, math.sin(0.5 * alpha))
    return qmul(q, rot), m


@njit(**_JIT)
def strang(h, q, m, J, order):
    """``A(h/2) B(h/2) C(h) B(h/2) A(h/2)`` with ``order = (A, B, C)``."""
    a, b, c = int(order[0]), int(order[1]), int(order[2])
    q, m = axis_flow(a, 0.5 * h, q, m, J)
    q, m = axis_flow(b, 0.5 * h, q, m, J)
    q, m = axis_flow(c, h, q, m, J)
    q, m = axis_flow(b, 0.5 * h, q, m, J)
    return axis_flow(a, 0.5 * h, q, m, J)


@njit(**_JIT)
def momentum_state(q, w, J, params):
    """Splitting methods carry the body momentum ``m = J ω`` (principal axes)."""
    return (q[0], q[1], q[2], q[3]), (J[0] * w[0], J[4] * w[1], J[8] * w[2])


@njit(**_JIT)
def momentum_output(state, J, params):
    q, m = state
    return q, (m[0] / J[0], m[1] / J[4], m[2] / J[8])


def composed_step(targs, t, h, state, J, Jinv, params):
    """``COMPOSITION`` (bound per method) of Strang steps ``S(c h)``."""
    q, m = state
    for c in COMPOSITION:  # noqa: F821 - bound per method
        q, m = strang(c * h, q, m, J, params)
    return q, m


split2_step = njit(**_JIT)(bind_globals(composed_step, "split2_step", COMPOSITION=STRANG))
split4_step = njit(**_JIT)(bind_globals(composed_step, "split4_step", COMPOSITION=SUZUKI4))
split6_step = njit(**_JIT)(bind_globals(composed_step, "split6_step", COMPOSITION=YOSHIDA6))


class _Splitting(FixedStepIntegrator):
    torque = "none"
    principal_frame = True
    invariants = ("unit quaternion", "|H| (Casimir)", "inertial H direction to O(h^p), bounded energy error")
    initial_state = momentum_state
    output_state = momentum_output

    def params(self, problem):
        from ..inertia import principal_axes

        return axis_order(principal_axes(problem.inertia_kg_m2)[0])


class Split2(_Splitting):
    name = "split2"
    description = "symplectic Strang splitting into axis rotations, order 2, torque-free (bounded energy error)"
    order = 2
    step = split2_step


class Split4(_Splitting):
    name = "split4"
    description = "symplectic splitting, Suzuki 4th-order composition, torque-free (bounded energy error)"
    order = 4
    step = split4_step


class Split6(_Splitting):
    name = "split6"
    description = "symplectic splitting, Yoshida 6th-order composition, torque-free (bounded energy error)"
    order = 6
    step = split6_step
