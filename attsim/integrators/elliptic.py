"""Jacobi elliptic functions and Legendre's integrals, accurate as ``k² → 1``.

Everything takes the complementary parameter ``kc2 = 1 - k²`` (formed by
the caller without cancellation), so a motion arbitrarily close to the
separatrix of the free rigid body keeps its digits: ``kc2`` down to
``MIN_KC2`` (1e-100), where ``K ≈ ln(4/kc)`` is still only ~116.

Two things lose digits near ``k = 1`` and are avoided here:

* the amplitude. Near a quarter period ``cn`` and ``dn`` are both tiny
  (``dn(K) = kc``) and ``cos(am u)`` knows them only to ``1e-16``
  absolute. The argument is reduced to ``|w| ≤ K/2`` by half periods and by
  the quarter-period shift (DLMF 22.4.iii / A&S 16.8.1-3)::

      sn(K - w) = cd w,   cn(K - w) = kc sd w,   dn(K - w) = kc nd w

  and on ``|w| ≤ K/2`` the functions come from series that keep their
  relative accuracy: the descending AGM (A&S 16.4) for ``kc2 ≥ 0.01``,
  where ``cn, dn ≥ 0.3`` there, and for ``kc2 < 0.01`` the expansions in
  hyperbolic functions over the imaginary period (the poles summed along
  ``2iK'``; cf. DLMF 22.12)::

      dn u = π/(2K') Σ sech(x - mΔ),   cn u = π/(2kK') Σ (-1)^m sech(x - mΔ),
      sn u = π/(2kK') Σ (-1)^m tanh(x - mΔ),   x = π u / (2K'),  Δ = π K / K'

  whose terms fall as ``exp(-mΔ)`` with ``exp(-Δ) = q' ≈ kc2/16``.
* the integrals. ``F`` and ``Π`` are Carlson's forms in ``(sn, cn, dn)``
  themselves (DLMF 19.25.5, 19.25.14), never in the amplitude::

      F = s R_F(c², d², 1),   Π(n) = s R_F(c², d², 1) + n/3 s³ R_J(c², d², 1, 1 - n s²)

Carlson's integrals are scipy's own C functions (``scipy.special.cython_special``),
linked into the numba code by symbol. scipy's ``ellipj`` is not used: it takes
``k²`` (so ``1 - k²`` below 1e-16 is lost) and switches to a first-order
expansion when ``1 - k² < 1e-9``, which is wrong beyond a fraction of a period.
"""

from __future__ import annotations

import ctypes
import math

import llvmlite.binding as llvm_binding
import numpy as np
from numba import types
from numba.extending import get_cython_function_address

from .._core.jit import njit

__all__ = ["jacobi", "legendre_integrals", "elliprf", "elliprj", "MIN_KC2", "SERIES_BELOW"]

# the smallest kc2 served (|H| components of ~1e-50 off the separatrix). scipy's R_J (1.15) loses
# digits once x y underflows (R_J(1e-160, 1e-160, 1, p) is off by 1e-8, at 1e-300 by 1e-3); from here
# on d² >= kc2 keeps that product normal, c² below C2_FLUSH being dropped (a change of sqrt(c²/d²) < 1e-25)
MIN_KC2 = 1e-100
C2_FLUSH = 1e-150
# below this kc2 the hyperbolic series (<= 7 terms a side); above it the AGM, whose cn, dn >= 0.3 at K/2
SERIES_BELOW = 0.01
_SERIES_DIGITS = 40.0  # the tail is dropped once exp(-(m - 1/2) Δ) < e^-40 ≈ 4e-18 of the first term


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
def elliprf(x, y, z):
    """Carlson's ``R_F(x, y, z)``."""
    return _elliprf_c(x, y, z, 0)


@njit(**_JIT)
def elliprj(x, y, z, p):
    """Carlson's ``R_J(x, y, z, p)``."""
    return _elliprj_c(x, y, z, p, 0)


@njit(**_JIT)
def _agm(w, kc2):
    """``(sn, cn, dn)`` by the descending AGM (A&S 16.4), for ``kc2`` not small."""
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
    phi = (2.0**n) * a * w
    for i in range(n - 1, -1, -1):
        phi = 0.5 * (phi + math.asin(cs[i] / a_s[i] * math.sin(phi)))
    cn = math.cos(phi)
    return math.sin(phi), cn, math.sqrt(kc2 + (1.0 - kc2) * cn * cn)


@njit(**_JIT)
def _hyperbolic(w, kc2, K, Kp):
    """``(sn, cn, dn)`` for ``0 ≤ w ≤ K/2`` by the series over the imaginary period.

    The pairs ``±m`` of the ``sn`` series are summed as
    ``tanh(x - a) + tanh(x + a) = sinh 2x / (cosh(x - a) cosh(x + a))``,
    so no term is a difference of nearly equal numbers.
    """
    x = 0.5 * math.pi * w / Kp
    delta = math.pi * K / Kp
    lead = 1.0 / math.cosh(x)
    sum_dn = lead
    sum_cn = lead
    sum_sn = math.tanh(x)
    sinh2x = math.sinh(2.0 * x)
    sign = -1.0
    terms = int(_SERIES_DIGITS / delta) + 1
    for m in range(1, terms + 1):
        a = m * delta
        ch_minus, ch_plus = math.cosh(x - a), math.cosh(x + a)
        pair = 1.0 / ch_minus + 1.0 / ch_plus
        sum_dn += pair
        sum_cn += sign * pair
        sum_sn += sign * sinh2x / ch_minus / ch_plus
        sign = -sign
    scale = 0.5 * math.pi / Kp
    k = math.sqrt(1.0 - kc2)
    return scale / k * sum_sn, scale / k * sum_cn, scale * sum_dn


@njit(**_JIT)
def _jacobi_quarter(w, kc2, K, Kp):
    """``(sn, cn, dn)`` for ``0 ≤ w ≤ K/2``."""
    if kc2 >= SERIES_BELOW:
        return _agm(w, kc2)
    return _hyperbolic(w, kc2, K, Kp)


@njit(**_JIT)
def jacobi(u, kc2, K, Kp):
    """Jacobi's ``sn, cn, dn`` of ``u`` for ``kc2 = 1 - k²``, each to its own relative precision.

    ``K = K(k)`` and ``Kp = K(kc)`` are the complete integrals (``Kp`` is
    used only below ``SERIES_BELOW``). Returns ``(sn_v, cn_v, dn, j)`` with
    ``u = v + 2jK``, ``|v| ≤ K``, so ``cn_v ≥ 0``; then
    ``sn u = (-1)^j sn_v``, ``cn u = (-1)^j cn_v``, ``am u = am v + jπ``.
    """
    j = math.floor(u / (2.0 * K) + 0.5)
    v = u - 2.0 * K * j
    w = abs(v)
    if w <= 0.5 * K:
        s, c, d = _jacobi_quarter(w, kc2, K, Kp)
    else:
        # the quarter-period shift: cn and dn near K from sn and dn near 0, without cancellation
        s1, c1, d1 = _jacobi_quarter(max(K - w, 0.0), kc2, K, Kp)
        kc = math.sqrt(kc2)
        s, c, d = c1 / d1, kc * s1 / d1, kc / d1
    return (s if v >= 0.0 else -s), c, d, j


@njit(**_JIT)
def legendre_integrals(s, c, d, n):
    """``(F(φ|k²), Π(n; φ|k²))`` from ``s = sin φ``, ``c = cos φ ≥ 0``, ``d = sqrt(1 - k² s²)``.

    ``|φ| ≤ π/2``; add ``2j`` complete integrals for ``φ + jπ``. Carlson's
    forms in ``c²`` and ``d²`` (DLMF 19.25.5, 19.25.14) stay accurate where
    both are tiny (``φ`` near ``π/2`` and ``k`` near 1), where an amplitude
    would not. Needs ``d² ≥ MIN_KC2``.
    """
    c2, d2 = c * c, d * d
    if c2 < C2_FLUSH:
        c2 = 0.0
    rf = elliprf(c2, d2, 1.0)
    s2 = s * s
    rj = elliprj(c2, d2, 1.0, 1.0 - n * s2) if s2 > 0.0 else 0.0
    return s * rf, s * rf + n / 3.0 * s * s2 * rj
