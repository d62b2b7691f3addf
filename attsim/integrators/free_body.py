"""The exact torque-free motion of a rigid body, for any moments of inertia.

Works in principal axes. The body angular momentum ``m`` follows Jacobi's
elliptic-function solution of Euler's equations, and the attitude is the
rotation that keeps the inertial momentum fixed, assembled from 3-1-3
Euler angles about it (Landau & Lifshitz, *Mechanics*, sec. 37; Vilmart,
"Rigid body dynamics", eq. 4 and "exact solution"; Celledoni, Fassò,
Säfström & Zanna, SIAM J. Sci. Comput. 30(4), 2008).

Label the axes ``a, b, c`` so that ``c`` is the axis the polhode encircles
(the largest moment when ``M² > 2E I_mid``, the smallest otherwise) and
``b`` the intermediate one. With ``num_c = 2E I_c - M²`` and
``num_a = M² - 2E I_a``::

    ω_a = s_a A_a cn(u),  ω_b = A_b sn(u),  ω_c = s_c A_c dn(u),   u = u0 + λ t
    A_a² = num_c / (I_a (I_c - I_a)),  A_b² = num_c / (I_b (I_c - I_b)),
    A_c² = num_a / (I_c (I_c - I_a)),
    k² = (I_b - I_a) num_c / ((I_c - I_b) num_a),
    λ = s_a s_c sign(I_c - I_a) sqrt((I_c - I_b) num_a / (I_a I_b I_c))

With the inertial Z axis along ``H`` and Euler angles ``R = Rz(φ) Rx(θ)
Rz(ψ)``, the body direction of ``H`` gives ``θ`` and ``ψ`` at once and the
precession angle integrates in closed form with the elliptic integral of the
third kind (Carlson's ``R_F``, ``R_J``)::

    φ(t) = M t / I_c + M (I_c - I_a) / (λ I_a I_c) [Π(n; am u | k²) - Π(n; am u0 | k²)],
    n = -I_c (I_b - I_a) / (I_a (I_c - I_b))

Special cases have their own closed forms, so nothing divides by zero: the
separatrix (``k² = 1``: ``sn = tanh``, ``cn = dn = sech``, ``Π`` elementary),
an axisymmetric body (steady precession plus spin), and a steady spin about
one principal axis (including rest).

The special functions (:mod:`.elliptic`) take the complementary parameter
``1 - k²``, formed here from ``d = 2E - M²/I_mid`` without cancellation, and
keep their relative accuracy as ``k → 1``: a state is put on the separatrix
only when ``d`` is zero to its own round-off, so the flips of a motion
arbitrarily close to it (``1 - k²`` down to ``MIN_KC2``) come at the right
times. The phase ``u0`` and ``Π`` are formed from ``(sn, cn, dn)`` (the
state's own components at the start), never from an amplitude, which near
the saddle would know ``cn`` and ``dn`` only to ``1e-16`` absolute.
"""

from __future__ import annotations

import math

from .._core.jit import njit
from ..dynamics import dcm_to_quat_tuple, qconj, qmul
from .elliptic import MIN_KC2, SERIES_BELOW, elliprf, elliprj, jacobi, legendre_integrals

__all__ = ["free_body_setup", "free_body_at", "SEPARATRIX_TOLERANCE", "SYMMETRY_TOLERANCE"]

# relative thresholds below which a case is treated as its exact limit
SYMMETRY_TOLERANCE = 1e-12
# d = t_s + t_l carries at most ~6 roundings of its terms (2^-53 each): a smaller |d| is zero to round-off
SEPARATRIX_TOLERANCE = 4.0 * 2.0**-52
# a spin about the largest or smallest axis with the other components below this (relative) is steady
# to round-off; about the intermediate axis (unstable) only an exact equilibrium is
STEADY_TOLERANCE = 1e-15

_JIT = dict(cache=True, nogil=True)


KIND_SYMMETRIC = 0  # axisymmetric body, steady spin or rest: trigonometric closed form
KIND_ELLIPTIC = 1
KIND_SEPARATRIX = 2


@njit(**_JIT)
def _axis_quat(axis, angle):
    h = 0.5 * angle
    if axis == 0:
        return (math.cos(h), math.sin(h), 0.0, 0.0)
    if axis == 1:
        return (math.cos(h), 0.0, math.sin(h), 0.0)
    return (math.cos(h), 0.0, 0.0, math.sin(h))


@njit(**_JIT)
def _vector_quat(v, angle):
    """Rotation by ``angle`` about the unit vector ``v``."""
    s = math.sin(0.5 * angle)
    return (math.cos(0.5 * angle), s * v[0], s * v[1], s * v[2])


@njit(**_JIT)
def _momentum_frame_quat(na, nb, nc):
    """``Rx(θ) Rz(ψ)``: carries the unit body momentum ``(na, nb, nc)`` to +Z."""
    theta = math.atan2(math.hypot(na, nb), nc)
    psi = math.atan2(na, nb)
    return qmul(_axis_quat(0, theta), _axis_quat(2, psi))


@njit(**_JIT)
def _polhode_axes(s_idx, mid, l_idx, minor):
    """``(ia, ib, ic, sb)``: ``c`` the axis the polhode encircles, ``v_F = (v[ia], sb v[ib], v[ic])`` proper."""
    ia, ic = (l_idx, s_idx) if minor else (s_idx, l_idx)
    even = (ia, mid, ic) in ((0, 1, 2), (1, 2, 0), (2, 0, 1))
    return ia, mid, ic, (1.0 if even else -1.0)


@njit(**_JIT)
def free_body_setup(q, m, I):
    """Constants of the motion from ``q_IP``, body momentum ``m`` and moments ``I``.

    All in principal axes. Returns a flat tuple of floats for
    :func:`free_body_at`; its first entry is the kind of solution.
    """
    M2 = m[0] * m[0] + m[1] * m[1] + m[2] * m[2]
    M = math.sqrt(M2)
    zero3 = (0.0, 0.0, 0.0)
    if M == 0.0:
        return _symmetric_constants(q, m, 0.0, zero3, 1.0, 0.0)
    # order the axes: s(mallest), mid, l(argest)
    s_idx, mid, l_idx = 0, 1, 2
    if I[s_idx] > I[mid]:
        s_idx, mid = mid, s_idx
    if I[mid] > I[l_idx]:
        mid, l_idx = l_idx, mid
    if I[s_idx] > I[mid]:
        s_idx, mid = mid, s_idx
    Is, Imid, Il = I[s_idx], I[mid], I[l_idx]
    distinct = Imid - Is > SYMMETRY_TOLERANCE * Imid and Il - Imid > SYMMETRY_TOLERANCE * Il
    # steady spin about a principal axis: the momentum lies along it. About the intermediate axis a
    # residue of 1e-15 M would leave it after ~35 / λ, so only an exact equilibrium is steady there.
    for axis in range(3):
        others = abs(m[(axis + 1) % 3]) + abs(m[(axis + 2) % 3])
        if others <= (0.0 if axis == mid and distinct else STEADY_TOLERANCE) * M:
            return _symmetric_constants(q, m, M, zero3, I[axis], 0.0)
    # axisymmetric body: precession about H plus spin about the symmetry axis
    for axis in range(3):
        i1, i2 = I[(axis + 1) % 3], I[(axis + 2) % 3]
        if abs(i1 - i2) <= SYMMETRY_TOLERANCE * max(i1, i2):
            e = (1.0 if axis == 0 else 0.0, 1.0 if axis == 1 else 0.0, 1.0 if axis == 2 else 0.0)
            transverse = 0.5 * (i1 + i2)
            spin_rate = m[axis] * (1.0 / I[axis] - 1.0 / transverse)
            return _symmetric_constants(q, m, M, e, transverse, spin_rate)
    # d = 2E - M^2 / I_mid = t_s + t_l (t_s >= 0 >= t_l), without the intermediate term. Each term is
    # known to a few roundings, so d is known to SEPARATRIX_TOLERANCE (t_s - t_l): only a d within that
    # of zero is on the separatrix. A tolerance on M^2 instead would put every state whose small
    # components are below ~1e-8 M on it, and such a state flips (the Dzhanibekov effect).
    t_s = m[s_idx] ** 2 * ((Imid - Is) / (Is * Imid))
    t_l = m[l_idx] ** 2 * ((Imid - Il) / (Il * Imid))
    d = t_s + t_l
    separatrix = abs(d) <= SEPARATRIX_TOLERANCE * (t_s - t_l)
    ia, ib, ic, sb = _polhode_axes(s_idx, mid, l_idx, d > 0.0 and not separatrix)
    num_a = (sb * m[ib]) ** 2 * (1.0 - I[ia] / I[ib]) + m[ic] ** 2 * (1.0 - I[ia] / I[ic])
    # 1 - k² = -(Ic - Ia) Ib d / ((Ic - Ib) num_a): from d, not by subtraction
    kc2 = -(I[ic] - I[ia]) * I[ib] * d / ((I[ic] - I[ib]) * num_a)
    if not separatrix and kc2 < MIN_KC2:
        # within ~1e-50 M of the separatrix (the first flip would come after K ≈ 116 / λ): on it
        separatrix = True
        ia, ib, ic, sb = _polhode_axes(s_idx, mid, l_idx, False)
    return _polhode_constants(q, m, M, I, ia, ib, ic, sb, separatrix, kc2)


@njit(**_JIT)
def _polhode_constants(q, m, M, I, ia, ib, ic, sb, separatrix, kc2):
    """The constants of an asymmetric body's motion on its polhode, axes ``(ia, sb ib, ic)`` as chosen by
    :func:`_polhode_axes`; on the separatrix when ``separatrix`` (then ``kc2`` is unused), else ``kc2 = 1 - k²``."""
    Ia, Ib, Ic = I[ia], I[ib], I[ic]
    ma, mb, mc = m[ia], sb * m[ib], m[ic]
    if separatrix and (ma == 0.0 or mc == 0.0):
        return _symmetric_constants(q, m, M, (0.0, 0.0, 0.0), I[ib], 0.0)  # balanced on the intermediate axis
    num_c = ma * ma * (Ic / Ia - 1.0) + mb * mb * (Ic / Ib - 1.0)
    num_a = mb * mb * (1.0 - Ia / Ib) + mc * mc * (1.0 - Ia / Ic)
    Aa = math.sqrt(num_c / (Ia * (Ic - Ia)))
    Ab = math.sqrt(num_c / (Ib * (Ic - Ib)))
    Ac = math.sqrt(num_a / (Ic * (Ic - Ia)))
    rate = math.sqrt((Ic - Ib) * num_a / (Ia * Ib * Ic))
    wa, wb, wc = ma / Ia, mb / Ib, mc / Ic
    sc = 1.0 if wc >= 0.0 else -1.0
    sa = (1.0 if wa >= 0.0 else -1.0) if separatrix else 1.0
    lam = sa * sc * (1.0 if Ic > Ia else -1.0) * rate
    n = -Ic * (Ib - Ia) / (Ia * (Ic - Ib))
    # the Jacobi functions at the start, each to its relative precision (cn, dn tiny near the saddle)
    sn0, cn0, dn0 = wb / Ab, sa * wa / Aa, sc * wc / Ac
    # R_FP rows are the principal axes e_ia, sb e_ib, e_ic
    r = [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]
    r[0][ia] = 1.0
    r[1][ib] = sb
    r[2][ic] = 1.0
    q_FP = dcm_to_quat_tuple(r[0][0], r[0][1], r[0][2], r[1][0], r[1][1], r[1][2], r[2][0], r[2][1], r[2][2])
    q_IF0 = qmul(q, qconj(q_FP))
    q_A0c = qconj(_momentum_frame_quat(ma / M, mb / M, mc / M))
    if separatrix:
        kind = float(KIND_SEPARATRIX)
        kc2 = K = Kp = Pi = 0.0
        u0 = math.asinh(sn0 / cn0)  # tanh u0 = sn0, sech u0 = cn0 > 0; atanh(sn0) loses u0 near the saddle
        pi0 = _separatrix_pi(u0, n)
    else:
        kind = float(KIND_ELLIPTIC)
        K = elliprf(0.0, kc2, 1.0)
        Kp = elliprf(0.0, 1.0 - kc2, 1.0) if kc2 < SERIES_BELOW else 0.0
        Pi = K + n / 3.0 * elliprj(0.0, kc2, 1.0, 1.0 - n)
        # the phase in [-2K, 2K]: am u0 = φ + jπ with cos φ >= 0
        j = 0.0
        if cn0 < 0.0:
            j = 1.0 if sn0 >= 0.0 else -1.0
            sn0, cn0 = -sn0, -cn0
        F, P = legendre_integrals(sn0, cn0, dn0, n)
        u0, pi0 = 2.0 * j * K + F, 2.0 * j * Pi + P
    return (
        kind, M, float(ia), float(ib), float(ic), sb, Ia, Ib, Ic,  # 0-8
        Aa, Ab, Ac, sa, sc, kc2, lam, n, u0, pi0, K, Pi,  # 9-20
        q_IF0[0], q_IF0[1], q_IF0[2], q_IF0[3],  # 21-24
        q_FP[0], q_FP[1], q_FP[2], q_FP[3],  # 25-28
        q_A0c[0], q_A0c[1], q_A0c[2], q_A0c[3],  # 29-32
        Kp,  # 33
    )


@njit(**_JIT)
def _symmetric_constants(q, m, M, e, I_transverse, spin_rate):
    """Constants of ``q(t) = q0 ⊗ q(n0, M t / I_t) ⊗ q(e, λ t)``, ``m(t) = rot(e, -λ t) m0``."""
    n0 = (m[0] / M, m[1] / M, m[2] / M) if M > 0.0 else (1.0, 0.0, 0.0)
    return (
        float(KIND_SYMMETRIC), M, n0[0], n0[1], n0[2], e[0], e[1], e[2], I_transverse,  # 0-8
        spin_rate, m[0], m[1], m[2], 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,  # 9-20
        q[0], q[1], q[2], q[3], 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0,  # 21-32
        0.0,  # 33
    )


@njit(**_JIT)
def _separatrix_pi(u, n):
    """``Π(n; am u | 1) = (u + sqrt(-n) atan(sqrt(-n) tanh u)) / (1 - n)`` for ``n < 0``."""
    r = math.sqrt(-n)
    return (u + r * math.atan(r * math.tanh(u))) / (1.0 - n)


@njit(**_JIT)
def free_body_at(c, t):
    """``(q_IP, m)`` at time ``t`` from the constants of :func:`free_body_setup`."""
    q0 = (c[21], c[22], c[23], c[24])
    if c[0] == KIND_SYMMETRIC:
        M, n0, e, It, lam = c[1], (c[2], c[3], c[4]), (c[5], c[6], c[7]), c[8], c[9]
        q = qmul(qmul(q0, _vector_quat(n0, M * t / It)), _vector_quat(e, lam * t))
        m0 = (c[10], c[11], c[12])
        # rotate m0 by -lam t about e (Rodrigues)
        ang = -lam * t
        cs, sn = math.cos(ang), math.sin(ang)
        dot = e[0] * m0[0] + e[1] * m0[1] + e[2] * m0[2]
        cx, cy, cz = e[1] * m0[2] - e[2] * m0[1], e[2] * m0[0] - e[0] * m0[2], e[0] * m0[1] - e[1] * m0[0]
        m = (
            m0[0] * cs + cx * sn + e[0] * dot * (1.0 - cs),
            m0[1] * cs + cy * sn + e[1] * dot * (1.0 - cs),
            m0[2] * cs + cz * sn + e[2] * dot * (1.0 - cs),
        )
        return q, m
    M = c[1]
    ia, ib, ic, sb = int(c[2]), int(c[3]), int(c[4]), c[5]
    Ia, Ib, Ic = c[6], c[7], c[8]
    Aa, Ab, Ac, sa, sc, kc2, lam, n, u0, pi0, K, Pi = (c[9], c[10], c[11], c[12], c[13], c[14], c[15], c[16], c[17],
                                                       c[18], c[19], c[20])
    u = u0 + lam * t
    if c[0] == KIND_SEPARATRIX:
        sn = math.tanh(u)
        cn = 1.0 / math.cosh(u)
        dn = cn
        pi_u = _separatrix_pi(u, n)
    else:
        sv, cv, dn, j = jacobi(u, kc2, K, c[33])
        flip = -1.0 if j % 2 else 1.0
        sn, cn = flip * sv, flip * cv
        pi_u = 2.0 * j * Pi + legendre_integrals(sv, cv, dn, n)[1]
    ma, mb, mc = Ia * sa * Aa * cn, Ib * Ab * sn, Ic * sc * Ac * dn
    precession = M * t / Ic + M * (Ic - Ia) / (lam * Ia * Ic) * (pi_u - pi0)
    q_rel = qmul(qmul((c[29], c[30], c[31], c[32]), _axis_quat(2, precession)),
                 _momentum_frame_quat(ma / M, mb / M, mc / M))
    q_FP = (c[25], c[26], c[27], c[28])
    q = qmul(qmul(q0, q_rel), q_FP)
    m = [0.0, 0.0, 0.0]
    m[ia] = ma
    m[ib] = sb * mb
    m[ic] = mc
    return q, (m[0], m[1], m[2])
