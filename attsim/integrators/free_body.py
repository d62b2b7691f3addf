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

Carlson's integrals are scipy's own C functions (``scipy.special.cython_special``),
linked into the numba code by symbol. The Jacobi functions are computed
here by the AGM from the complementary parameter ``1 - k²``, which is formed
from the energy without cancellation: scipy's ``ellipj`` takes ``k²`` and
switches to a first-order expansion when ``1 - k² < 1e-9``, which is wrong
for phases beyond a fraction of a period (near-separatrix motion).
"""

from __future__ import annotations

import ctypes
import math

import llvmlite.binding as llvm_binding
import numpy as np
from numba import njit, types
from numba.extending import get_cython_function_address

from ..dynamics import dcm_to_quat_tuple, qconj, qmul

__all__ = ["free_body_setup", "free_body_at", "SEPARATRIX_TOLERANCE", "SYMMETRY_TOLERANCE"]

# relative thresholds below which a case is treated as its exact limit
SYMMETRY_TOLERANCE = 1e-12
SEPARATRIX_TOLERANCE = 4.0 * 2.0**-52  # round-off: nearer orbits take the elliptic path
STEADY_TOLERANCE = 1e-15


def _scipy_special(name: str, signature_start: str) -> int:
    """Address of a C function of scipy.special.cython_special, found by its
    signature (fused functions export one variant per type)."""
    import scipy.special.cython_special as cs

    get_name = ctypes.pythonapi.PyCapsule_GetName
    get_name.restype, get_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
    for key, capsule in cs.__pyx_capi__.items():
        if key.endswith(name) and get_name(capsule).decode().startswith(signature_start):
            return get_cython_function_address("scipy.special.cython_special", key)
    raise ImportError(f"scipy.special.cython_special has no {name} with signature {signature_start}...")


# Registered by symbol name (not by address), so compiled code that calls
# them can be cached on disk and relinked in the next process.
_double = types.float64
llvm_binding.add_symbol("attsim_scipy_elliprf", _scipy_special("elliprf", "double (double"))
llvm_binding.add_symbol("attsim_scipy_elliprj", _scipy_special("elliprj", "double (double"))
_elliprf_c = types.ExternalFunction("attsim_scipy_elliprf", _double(_double, _double, _double, types.intc))
_elliprj_c = types.ExternalFunction("attsim_scipy_elliprj", _double(_double, _double, _double, _double, types.intc))

_JIT = dict(cache=True, nogil=True)


@njit(**_JIT)
def _elliprf(x, y, z, skip_dispatch):
    return _elliprf_c(x, y, z, 0)


@njit(**_JIT)
def _elliprj(x, y, z, p, skip_dispatch):
    return _elliprj_c(x, y, z, p, 0)


KIND_SYMMETRIC = 0  # axisymmetric body, steady spin or rest: trigonometric closed form
KIND_ELLIPTIC = 1
KIND_SEPARATRIX = 2


@njit(**_JIT)
def jacobi(u, kc2, K):
    """``(sn, cn, dn, am)`` of ``u`` for the complementary parameter ``kc2 = 1 - k²``.

    The arithmetic-geometric mean with the descending Landen recursion
    (Abramowitz & Stegun 16.4), started from ``b0 = sqrt(kc2)`` so that near
    the separatrix (``k² → 1``) no digit is lost forming ``1 - k²``. ``u`` is
    first reduced by whole half-periods ``2K`` (``sn, cn`` change sign, ``am``
    gains ``π``), so the phase stays small however long the run.
    """
    j = math.floor(u / (2.0 * K) + 0.5)
    v = u - 2.0 * K * j
    a, b = 1.0, math.sqrt(kc2)
    c = math.sqrt(max(1.0 - kc2, 0.0))
    cs = np.empty(16)
    a_s = np.empty(16)
    n = 0
    while abs(c) > 1e-16 * a and n < 15:
        n += 1
        a, b, c = 0.5 * (a + b), math.sqrt(a * b), 0.5 * (a - b)
        cs[n - 1] = c
        a_s[n - 1] = a
    phi = (2.0 ** n) * a * v
    for i in range(n - 1, -1, -1):
        phi = 0.5 * (phi + math.asin(cs[i] / a_s[i] * math.sin(phi)))
    sn, cn = math.sin(phi), math.cos(phi)
    dn = math.sqrt(kc2 + (1.0 - kc2) * cn * cn)
    sign = -1.0 if j % 2 else 1.0
    return sign * sn, sign * cn, dn, phi + j * math.pi


@njit(**_JIT)
def legendre_integrals(phi, n, kc2, K, Pi):
    """``(F(φ|k²), Π(n; φ|k²))`` for any real ``φ``, by Carlson's forms.

    ``kc2 = 1 - k²``; ``K`` and ``Pi`` are the complete integrals. ``φ`` is
    reduced to ``[-π/2, π/2]`` and the half-periods added back. The second
    argument ``1 - k² sin²φ`` is formed as ``cos²φ + kc2 sin²φ``, which keeps
    its digits near the separatrix.
    """
    j = math.floor(phi / math.pi + 0.5)
    r = phi - j * math.pi
    s, c = math.sin(r), math.cos(r)
    s2 = s * s
    y = c * c + kc2 * s2
    rf = _elliprf(c * c, y, 1.0, 0)
    rj = _elliprj(c * c, y, 1.0, 1.0 - n * s2, 0) if s2 > 0.0 else 0.0
    return 2.0 * j * K + s * rf, 2.0 * j * Pi + s * rf + n / 3.0 * s * s2 * rj


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
    # steady spin about a principal axis: the momentum lies along it
    for axis in range(3):
        others = abs(m[(axis + 1) % 3]) + abs(m[(axis + 2) % 3])
        if others <= STEADY_TOLERANCE * M:
            return _symmetric_constants(q, m, M, zero3, I[axis], 0.0)
    # axisymmetric body: precession about H plus spin about the symmetry axis
    for axis in range(3):
        i1, i2 = I[(axis + 1) % 3], I[(axis + 2) % 3]
        if abs(i1 - i2) <= SYMMETRY_TOLERANCE * max(i1, i2):
            e = (1.0 if axis == 0 else 0.0, 1.0 if axis == 1 else 0.0, 1.0 if axis == 2 else 0.0)
            transverse = 0.5 * (i1 + i2)
            spin_rate = m[axis] * (1.0 / I[axis] - 1.0 / transverse)
            return _symmetric_constants(q, m, M, e, transverse, spin_rate)
    # order the axes: s(mallest), mid, l(argest)
    s_idx, mid, l_idx = 0, 1, 2
    if I[s_idx] > I[mid]:
        s_idx, mid = mid, s_idx
    if I[mid] > I[l_idx]:
        mid, l_idx = l_idx, mid
    if I[s_idx] > I[mid]:
        s_idx, mid = mid, s_idx
    Imid = I[mid]
    # 2E - M^2 / I_mid without cancelling the intermediate term
    d = m[s_idx] ** 2 * (1.0 / I[s_idx] - 1.0 / Imid) + m[l_idx] ** 2 * (1.0 / I[l_idx] - 1.0 / Imid)
    separatrix = abs(d) <= SEPARATRIX_TOLERANCE * M2 / Imid
    if d > 0.0 and not separatrix:
        ia, ic = l_idx, s_idx  # polhode around the minor axis
    else:
        ia, ic = s_idx, l_idx  # around the major axis (or on the separatrix)
    ib = mid
    # proper signed permutation: v_F = (v[ia], sb v[ib], v[ic])
    even = (ia, ib, ic) in ((0, 1, 2), (1, 2, 0), (2, 0, 1))
    sb = 1.0 if even else -1.0
    Ia, Ib, Ic = I[ia], I[ib], I[ic]
    ma, mb, mc = m[ia], sb * m[ib], m[ic]
    if separatrix and abs(ma) + abs(mc) <= STEADY_TOLERANCE * M:
        return _symmetric_constants(q, m, M, zero3, I[ib], 0.0)  # balanced on the intermediate axis
    num_c = ma * ma * (Ic / Ia - 1.0) + mb * mb * (Ic / Ib - 1.0)
    num_a = mb * mb * (1.0 - Ia / Ib) + mc * mc * (1.0 - Ia / Ic)
    Aa = math.sqrt(num_c / (Ia * (Ic - Ia)))
    Ab = math.sqrt(num_c / (Ib * (Ic - Ib)))
    Ac = math.sqrt(num_a / (Ic * (Ic - Ia)))
    # 1 - k² = -(Ic - Ia) Ib d / ((Ic - Ib) num_a): from d, not by subtraction
    kc2 = 0.0 if separatrix else max(-(Ic - Ia) * Ib * d / ((Ic - Ib) * num_a), 0.0)
    rate = math.sqrt((Ic - Ib) * num_a / (Ia * Ib * Ic))
    wa, wb, wc = ma / Ia, mb / Ib, mc / Ic
    sc = 1.0 if wc >= 0.0 else -1.0
    sa = (1.0 if wa >= 0.0 else -1.0) if separatrix else 1.0
    lam = sa * sc * (1.0 if Ic > Ia else -1.0) * rate
    n = -Ic * (Ib - Ia) / (Ia * (Ic - Ib))
    phi0 = math.atan2(wb / Ab, sa * wa / Aa)
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
        K = Pi = 0.0
        u0 = math.atanh(math.sin(phi0))
        pi0 = _separatrix_pi(u0, n)
    else:
        kind = float(KIND_ELLIPTIC)
        K = _elliprf(0.0, kc2, 1.0, 0)
        Pi = K + n / 3.0 * _elliprj(0.0, kc2, 1.0, 1.0 - n, 0)
        u0, pi0 = legendre_integrals(phi0, n, kc2, K, Pi)
    return (
        kind, M, float(ia), float(ib), float(ic), sb, Ia, Ib, Ic,  # 0-8
        Aa, Ab, Ac, sa, sc, kc2, lam, n, u0, pi0, K, Pi,  # 9-20
        q_IF0[0], q_IF0[1], q_IF0[2], q_IF0[3],  # 21-24
        q_FP[0], q_FP[1], q_FP[2], q_FP[3],  # 25-28
        q_A0c[0], q_A0c[1], q_A0c[2], q_A0c[3],  # 29-32
    )


@njit(**_JIT)
def _symmetric_constants(q, m, M, e, I_transverse, spin_rate):
    """Constants of ``q(t) = q0 ⊗ q(n0, M t / I_t) ⊗ q(e, λ t)``, ``m(t) = rot(e, -λ t) m0``."""
    n0 = (m[0] / M, m[1] / M, m[2] / M) if M > 0.0 else (1.0, 0.0, 0.0)
    return (
        float(KIND_SYMMETRIC), M, n0[0], n0[1], n0[2], e[0], e[1], e[2], I_transverse,  # 0-8
        spin_rate, m[0], m[1], m[2], 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,  # 9-20
        q[0], q[1], q[2], q[3], 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0,  # 21-32
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
    Aa, Ab, Ac, sa, sc, kc2, lam, n, u0, pi0, K, Pi = c[9], c[10], c[11], c[12], c[13], c[14], c[15], c[16], c[17], c[18], c[19], c[20]
    u = u0 + lam * t
    if c[0] == KIND_SEPARATRIX:
        sn = math.tanh(u)
        cn = 1.0 / math.cosh(u)
        dn = cn
        pi_u = _separatrix_pi(u, n)
    else:
        sn, cn, dn, am = jacobi(u, kc2, K)
        pi_u = legendre_integrals(am, n, kc2, K, Pi)[1]
    ma, mb, mc = Ia * sa * Aa * cn, Ib * Ab * sn, Ic * sc * Ac * dn
    precession = M * t / Ic + M * (Ic - Ia) / (lam * Ia * Ic) * (pi_u - pi0)
    q_rel = qmul(qmul((c[29], c[30], c[31], c[32]), _axis_quat(2, precession)), _momentum_frame_quat(ma / M, mb / M, mc / M))
    q_FP = (c[25], c[26], c[27], c[28])
    q = qmul(qmul(q0, q_rel), q_FP)
    m = [0.0, 0.0, 0.0]
    m[ia] = ma
    m[ib] = sb * mb
    m[ic] = mc
    return q, (m[0], m[1], m[2])
