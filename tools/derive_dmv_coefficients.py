"""Derive the modified moments of inertia of the preprocessed DMV algorithm, in exact arithmetic.

Hairer & Vilmart (2006, J. Phys. A 39, 13225) make the discrete Moser-Veselov
algorithm (DMV) of any even order by running it on a body with modified
moments of inertia ``Ĩ``::

    1/Ĩ_k = σ/I_k + δ,   σ = 1 + Σ_k s_k h^(2k),   δ = Σ_k d_k h^(2k),

where ``s_k`` and ``d_k`` are polynomials of degree ``k`` in the invariants
``C = |y|²/2`` (Casimir) and ``H = Σ y_k²/(2 I_k)`` (energy)::

    s_k = Σ_j S[k, j] C^(k-j) H^j,   d_k = Σ_j D[k, j] C^(k-j) H^j,

and ``S[k, j] det^k``, ``D[k, j] det^k`` (``det = I_1 I_2 I_3``) are symmetric
homogeneous polynomials in the moments, of degrees ``k + j`` and ``k + j - 1``.
This script does not assume that form: it finds it, in three stages, all in
rational arithmetic (no floating point, no computer algebra system).

1. For given rational moments ``I`` and momentum ``y``, the Taylor series in
   ``h`` of one DMV step on the modified body (its implicit stage solved by
   iteration on truncated power series, the rotation written as the Cayley
   transform of the stage vector ``c``) is compared with the Taylor series of
   the exact flow (``ẏ = y × I⁻¹y``, ``Q̇ = Q (I⁻¹y)^``). At order ``h^(2k+1)``
   the residual must be ``s_k`` times the energy vector field plus ``d_k``
   times the Casimir's (a rotation about ``y``); both numbers are solved for
   and every one of the 12 components is checked, and the even orders must
   vanish (the method is symmetric).
2. Over several ``y`` with the same ``I``, ``s_k`` and ``d_k`` are fitted as
   polynomials in ``(C, H)``; extra ``y`` check the fit.
3. Over several ``I``, each coefficient times ``det^k`` is fitted in the
   monomial symmetric polynomials of the moments; extra ``I`` check the fit.

The result is printed as the table ``TABLE`` of
``attsim/integrators/dmv_coefficients.py`` (``--check`` compares with the
committed table instead). The convergence tests of ``tests/integrators/test_dmv.py``
measure the orders this gives against the exact flow.

Run: ``python tools/derive_dmv_coefficients.py [--check]`` (about a minute).
"""

from __future__ import annotations

import argparse
import itertools
import sys
from fractions import Fraction
from pathlib import Path

MAX_K = 4  # corrections h^2 .. h^8: order 10
N = 2 * MAX_K + 5  # series terms h^0 .. h^12: the order-11 check, and one spare term (lost by y_1's division by h)


# ---------------------------------------------------------------- truncated power series in h


def s_const(x):
    return [Fraction(x)] + [Fraction(0)] * (N - 1)


def s_add(a, b):
    return [x + y for x, y in zip(a, b)]


def s_sub(a, b):
    return [x - y for x, y in zip(a, b)]


def s_scale(a, x):
    return [x * v for v in a]


def s_mul(a, b):
    out = [Fraction(0)] * N
    for i, ai in enumerate(a):
        if ai:
            for j in range(N - i):
                out[i + j] += ai * b[j]
    return out


def s_inv(a):
    """1/a for a[0] != 0."""
    out = [Fraction(0)] * N
    out[0] = 1 / a[0]
    for n in range(1, N):
        out[n] = -sum(a[i] * out[n - i] for i in range(1, n + 1)) / a[0]
    return out


def s_shift_up(a):
    """h a."""
    return [Fraction(0)] + a[:-1]


def s_shift_down(a):
    """a / h, for a[0] == 0 (the last term becomes unknown: dropped to 0, never used)."""
    assert a[0] == 0
    return a[1:] + [Fraction(0)]


def v_cross(a, b):
    return [s_sub(s_mul(a[1], b[2]), s_mul(a[2], b[1])), s_sub(s_mul(a[2], b[0]), s_mul(a[0], b[2])),
            s_sub(s_mul(a[0], b[1]), s_mul(a[1], b[0]))]


# ---------------------------------------------------------------- exact flow and one DMV step


def exact_series(I, y):
    """Taylor series of y(h) and Q(h) (Q(0) = identity) of the free rigid body."""
    ys = [[Fraction(0)] * N for _ in range(3)]
    Q = [[[Fraction(int(i == j))] + [Fraction(0)] * (N - 1) for j in range(3)] for i in range(3)]
    for k in range(3):
        ys[k][0] = Fraction(y[k])
    for n in range(N - 1):
        # coefficient n of y x (I^-1 y) and of Q hat(I^-1 y), from coefficients <= n
        w = [[ys[k][i] / I[k] for i in range(n + 1)] for k in range(3)]
        yy = [[ys[k][i] for i in range(n + 1)] for k in range(3)]

        def conv(a, b, n=n):  # called in this iteration only; the default pins n all the same
            return sum(a[i] * b[n - i] for i in range(n + 1))

        dy = [conv(yy[1], w[2]) - conv(yy[2], w[1]), conv(yy[2], w[0]) - conv(yy[0], w[2]),
              conv(yy[0], w[1]) - conv(yy[1], w[0])]
        for k in range(3):
            ys[k][n + 1] = dy[k] / (n + 1)
        for r in range(3):
            # row r of Q hat(w) is (row r of Q) x w
            row = [[Q[r][c][i] for i in range(n + 1)] for c in range(3)]
            dq = [conv(row[1], w[2]) - conv(row[2], w[1]), conv(row[2], w[0]) - conv(row[0], w[2]),
                  conv(row[0], w[1]) - conv(row[1], w[0])]
            for c in range(3):
                Q[r][c][n + 1] = dq[c] / (n + 1)
    return ys, Q


def dmv_series(I, y, s, d):
    """Series of one DMV step (y_1, Q_1 with Q_0 = identity) on the body 1/Ĩ = σ/I + δ."""
    sigma = s_const(1)
    delta = s_const(0)
    for k, (sk, dk) in enumerate(zip(s, d), start=1):
        sigma[2 * k] += sk
        delta[2 * k] += dk
    Ki = [s_add(s_scale(sigma, Fraction(1) / I[k]), delta) for k in range(3)]  # 1/Ĩ_k
    Jt = [s_inv(Ki[k]) for k in range(3)]  # Ĩ_k
    a = [s_shift_up(s_scale(Ki[k], Fraction(y[k], 2))) for k in range(3)]  # (h/2) y_k / Ĩ_k
    c = [s_const(0) for _ in range(3)]
    for _ in range(N + 1):
        # Ĩ c = (h/2) (1 + |c|^2) y - c x Ĩ c, solved as c = alpha a + Ĩ^-1 (Ĩ c x c)
        alpha = s_add(s_const(1), s_add(s_mul(c[0], c[0]), s_add(s_mul(c[1], c[1]), s_mul(c[2], c[2]))))
        Jc = [s_mul(Jt[k], c[k]) for k in range(3)]
        cross = v_cross(Jc, c)
        c = [s_add(s_mul(alpha, a[k]), s_mul(Ki[k], cross[k])) for k in range(3)]
    alpha = s_add(s_const(1), s_add(s_mul(c[0], c[0]), s_add(s_mul(c[1], c[1]), s_mul(c[2], c[2]))))
    inv_alpha = s_inv(alpha)
    Jc = [s_mul(Jt[k], c[k]) for k in range(3)]
    # h y_1 = h y_0 - 4 c x Ĩc / alpha
    cxJc = v_cross(c, Jc)
    y1 = [s_sub(s_const(y[k]), s_scale(s_shift_down(s_mul(cxJc[k], inv_alpha)), 4)) for k in range(3)]
    c2 = s_add(s_mul(c[0], c[0]), s_add(s_mul(c[1], c[1]), s_mul(c[2], c[2])))
    hat = [[None, s_scale(c[2], -1), c[1]], [c[2], None, s_scale(c[0], -1)], [s_scale(c[1], -1), c[0], None]]
    Q1 = [[None] * 3 for _ in range(3)]
    for r in range(3):
        for col in range(3):
            m = s_scale(s_mul(c[r], c[col]), 2)
            if r == col:
                m = s_add(m, s_sub(s_const(1), c2))
            else:
                m = s_add(m, s_scale(hat[r][col], 2))
            Q1[r][col] = s_mul(m, inv_alpha)
    return y1, Q1


def flatten(y, Q):
    return list(y) + [Q[r][c] for r in range(3) for c in range(3)]


def solve_corrections(I, y):
    """(s_1..s_4, d_1..d_4) for one body and momentum, each checked on all 12 components."""
    exact = flatten(*exact_series(I, y))
    s, d = [Fraction(0)] * MAX_K, [Fraction(0)] * MAX_K
    for k in range(1, MAX_K + 1):
        order = 2 * k + 1
        base = flatten(*dmv_series(I, y, s, d))
        residual = [e[n] - b[n] for e, b in zip(exact, base) for n in (order - 1, order)]
        even = residual[0::2]
        assert all(r == 0 for r in even), f"order {order - 1} residual of a symmetric method must vanish"
        columns = []
        for unit in ((1, 0), (0, 1)):
            s_try, d_try = list(s), list(d)
            s_try[k - 1] += unit[0]
            d_try[k - 1] += unit[1]
            trial = flatten(*dmv_series(I, y, s_try, d_try))
            columns.append([t[order] - b[order] for t, b in zip(trial, base)])
        # 12 equations, 2 unknowns: solved, and every equation must hold
        try:
            s[k - 1], d[k - 1] = solve_linear([list(row) for row in zip(*columns)], residual[1::2])
        except ArithmeticError as exc:
            raise AssertionError(f"order {order}: the DMV residual is not a combination of the energy and "
                                 "Casimir flows") from exc
    final = flatten(*dmv_series(I, y, s, d))
    for n in range(2 * MAX_K + 2):
        assert all(e[n] == f[n] for e, f in zip(exact, final)), f"order {n} residual left"
    assert any(e[2 * MAX_K + 3] != f[2 * MAX_K + 3] for e, f in zip(exact, final)), "order 11 residual vanished"
    return s, d


# ---------------------------------------------------------------- fits


def solve_linear(A, b):
    """x with A x = b exactly (Gauss-Jordan); A may have more rows than columns,
    and every row must then agree: ArithmeticError if singular or inconsistent."""
    n = len(A[0])
    M = [list(row) + [rhs] for row, rhs in zip(A, b)]
    r = 0
    for col in range(n):
        p = next((i for i in range(r, len(M)) if M[i][col] != 0), None)
        if p is None:
            raise ArithmeticError("singular fit: add sample points")
        M[r], M[p] = M[p], M[r]
        pivot = M[r][col]
        M[r] = [v / pivot for v in M[r]]
        for i in range(len(M)):
            if i != r and M[i][col] != 0:
                f = M[i][col]
                M[i] = [v - f * w for v, w in zip(M[i], M[r])]
        r += 1
    if any(row[-1] != 0 for row in M[r:]):
        raise ArithmeticError("inconsistent fit: the assumed form is wrong")
    return [M[i][-1] for i in range(n)]


def partitions(degree, parts=3):
    """Partitions of ``degree`` into at most ``parts`` parts, largest first, padded with zeros."""
    out = []

    def rec(left, largest, acc):
        if len(acc) == parts:
            if left == 0:
                out.append(tuple(acc))
            return
        for p in range(min(left, largest), -1, -1):
            rec(left - p, p, acc + [p])

    rec(degree, degree, [])
    return out


def monomial_symmetric(exponents, x):
    return sum(x[0] ** e[0] * x[1] ** e[1] * x[2] ** e[2] for e in set(itertools.permutations(exponents)))


def fit_in_invariants(I, samples, k):
    """S[k, j] (and D[k, j]) from (C, H, value) samples; the extra samples check the fit."""
    A = [[C ** (k - j) * H ** j for j in range(k + 1)] for C, H, _ in samples]
    return solve_linear(A, [v for _, _, v in samples])


MOMENTA = [(1, 2, 3), (2, -1, 1), (3, 1, -2), (1, -3, 2), (2, 2, -1), (-1, 1, 3), (3, -2, 1)]
BODIES = [(2, 3, 5), (1, 4, 6), (3, 5, 7), (2, 7, 3), (5, 1, 4), (4, 9, 6), (1, 2, 9), (6, 7, 8), (3, 8, 2), (5, 9, 11),
          (7, 2, 10), (4, 11, 13), (9, 5, 3), (2, 13, 7), (8, 3, 12), (10, 6, 1)]


def derive():
    """{("s"|"d", k, j): {partition: Fraction}} with value = Σ coeff m_partition(I) / det^k."""
    per_body = []
    for I in BODIES:
        I = tuple(Fraction(v) for v in I)
        rows = []
        for y in MOMENTA:
            C = Fraction(sum(v * v for v in y), 2)
            H = sum(Fraction(v * v) / (2 * Ik) for v, Ik in zip(y, I))
            rows.append((C, H, solve_corrections(I, y)))
        fitted = {}
        for k in range(1, MAX_K + 1):
            for name, index in (("s", 0), ("d", 1)):
                samples = [(C, H, sd[index][k - 1]) for C, H, sd in rows]
                for j, value in enumerate(fit_in_invariants(I, samples, k)):
                    fitted[(name, k, j)] = value
        per_body.append((I, fitted))
        print(f"  body {tuple(int(v) for v in I)}: corrections solved and fitted in (C, H)", file=sys.stderr)
    table = {}
    for key in per_body[0][1]:
        name, k, j = key
        degree = k + j if name == "s" else k + j - 1
        basis = partitions(degree)
        A = [[monomial_symmetric(lam, I) for lam in basis] for I, _ in per_body]
        b = [fitted[key] * (I[0] * I[1] * I[2]) ** k for I, fitted in per_body]
        coefficients = solve_linear(A, b)
        table[key] = {lam: c for lam, c in zip(basis, coefficients) if c != 0}
    return table


def format_table(table) -> str:
    """The table as Python source, lines of at most 120 characters."""
    lines = ["TABLE = {"]
    for (name, k, j), terms in sorted(table.items()):
        items = [f"({lam[0]}, {lam[1]}, {lam[2]}): ({c.numerator}, {c.denominator})" for lam, c in terms.items()]
        line = f"    (\"{name}\", {k}, {j}): {{" + ", ".join(items) + "},"
        if len(line) <= 120:
            lines.append(line)
        else:
            lines.append(f"    (\"{name}\", {k}, {j}): {{")
            lines += [f"        {item}," for item in items]
            lines.append("    },")
    lines.append("}")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with attsim/integrators/dmv_coefficients.py")
    args = parser.parse_args()
    table = derive()
    if not args.check:
        print(format_table(table))
        return 0
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from attsim.integrators.dmv_coefficients import TABLE

    committed = {key: {lam: Fraction(*c) for lam, c in terms.items()} for key, terms in TABLE.items()}
    same = committed == table
    print("the committed table matches the derivation" if same else "MISMATCH: the committed table differs")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
