"""The exact free-body flow near the separatrix (``exact``, ``split_exact``) and its special functions.

References: mpmath's Taylor ODE solver at 34 digits on a plain Euler + quaternion
right-hand side (tests/data/separatrix_reference.csv, tools/make_separatrix_reference.py),
and mpmath's own Jacobi functions and Legendre integrals at the precision ``1 - k²`` needs.
"""

import functools
import math
from pathlib import Path

import mpmath as mp
import numpy as np
import pandas as pd
import pytest

import attsim
from attsim import analysis, rotations
from attsim.integrators.elliptic import MIN_KC2, elliprf, jacobi, legendre_integrals

DATA = Path(__file__).resolve().parents[1] / "data"
Q_COLS = ["qw", "qx", "qy", "qz"]
W_COLS = ["wx", "wy", "wz"]
# the small rate components e of the cases major-e (around the major axis) and minor-e: |d|/M² ~ e²/2
FLIP_CASES = [f"{side}-{e:.0e}" for e in (1e-3, 1e-5, 1e-7, 1e-10, 1e-15, 1e-20) for side in ("major", "minor")]


@functools.cache
def reference_table():
    return pd.read_csv(DATA / "separatrix_reference.csv")


def reference(case):
    """Moments, initial rate and the reference rows of one case of the table."""
    table = reference_table()
    ref = table[table["case"] == case]
    moments = ref[["I1", "I2", "I3"]].to_numpy()[0]
    w0 = ref[W_COLS].to_numpy()[0]
    assert ref["t"].iloc[0] == 0.0 and np.array_equal(ref[Q_COLS].to_numpy()[0], [1.0, 0.0, 0.0, 0.0])
    return moments, w0, ref


def errors(df, ref):
    """(largest rate error over |omega|, largest attitude angle), at the reference times."""
    df = df.loc[ref["t"].to_numpy()]
    rate = np.abs(df[W_COLS].to_numpy() - ref[W_COLS].to_numpy()).max() / np.linalg.norm(ref[W_COLS].to_numpy()[0])
    angle = rotations.quat_angle_between(df[Q_COLS].to_numpy(), ref[Q_COLS].to_numpy()).max()
    return rate, angle


def flip_times(df):
    wy = df["wy"].to_numpy()
    t = df.index.to_numpy()
    return t[1:][wy[1:] * wy[:-1] < 0.0]


def assert_conserved(df, bound=1e-14):
    inv = analysis.invariants(df)
    assert inv["T_rot_drift"].abs().max() < bound
    assert inv["H_norm_drift"].abs().max() < bound
    assert inv["H_I_drift"].abs().max() < bound


def test_the_audit_case_flips_at_the_reference_times():
    moments, w0, ref = reference("audit")
    # wy changes sign in (41.81, 41.82] and half a period (81.47 s) later, as in the 34-digit reference
    # (whose 2 s samples bracket both) and in rk4 and split6; the code before kept wy at +1
    fine = attsim.propagate(moments, w0, t_end=130.0, dt=0.01, method="exact")
    assert flip_times(fine).tolist() == pytest.approx([41.82, 123.29], abs=1e-9)
    assert flip_times(ref.set_index("t")).tolist() == [42.0, 124.0]
    df = attsim.propagate(moments, w0, t_end=130.0, dt=2.0, method="exact")
    rate, angle = errors(df, ref)
    assert rate < 2e-13 and angle < 5e-13, (rate, angle)  # measured 4e-15 and 7e-14
    assert_conserved(fine)


@pytest.mark.parametrize("case", FLIP_CASES)
def test_exact_follows_the_reference_through_a_flip(case):
    """``|d|/M²`` from ~5e-7 down to ~5e-41, on both sides of the separatrix."""
    moments, w0, ref = reference(case)
    t_end = ref["t"].iloc[-1]
    df = attsim.propagate(moments, w0, t_end=t_end, dt=2.0, method="exact")
    assert flip_times(df).tolist() == flip_times(ref.set_index("t")).tolist() != []
    rate, angle = errors(df, ref)
    assert rate < 2e-13 and angle < 5e-13, (rate, angle)  # measured at most 3e-14 and 6e-14
    assert_conserved(df)


def test_a_state_on_the_separatrix_to_round_off_approaches_the_intermediate_axis():
    moments, w0, ref = reference("separatrix")
    df = attsim.propagate(moments, w0, t_end=30.0, dt=2.0, method="exact")
    rate, angle = errors(df, ref)
    assert rate < 2e-13 and angle < 5e-13, (rate, angle)  # measured 1e-15 and 4e-15; 4e-11 before
    assert_conserved(df)
    # and exactly on it, far from the saddle (2E = M^2 / I_mid with these moments): the tanh solution
    on = attsim.propagate(moments, (1.0, 0.0, 1.0 / math.sqrt(3.0)), t_end=30.0, dt=0.5, method="exact")
    assert np.all(np.isfinite(on.to_numpy())) and len(flip_times(on)) == 0
    assert_conserved(on)


def test_split_exact_flips_with_the_exact_flow():
    # each step restarts the free flow from the state it reached; the first flip must come on time
    moments, w0, ref = reference("audit")
    df = attsim.propagate(moments, w0, t_end=60.0, dt=0.01, method="split_exact", torque=(0.0, 0.0, 0.0))
    flips = flip_times(df)
    assert flips.tolist() == pytest.approx([41.82], abs=1e-9)
    rate, angle = errors(df, ref[ref["t"] <= 60.0])
    assert rate < 5e-11 and angle < 5e-11, (rate, angle)  # measured 2e-12 and 6e-12


@pytest.mark.parametrize("kc2", [0.5, 0.02, 5e-3, 1e-8, 1e-16, 1e-30, 1e-60, MIN_KC2])
def test_jacobi_functions_keep_their_relative_precision_as_k_goes_to_one(kc2):
    K, Kp = elliprf(0.0, kc2, 1.0), elliprf(0.0, 1.0 - kc2, 1.0)
    n = -2.5
    with mp.workdps(30 + int(-math.log10(kc2))):  # 1 - k² must survive in k²
        m = 1 - mp.mpf(kc2)
        # near 0, K/2 and K (where cn and dn are both tiny as k -> 1), and periods away
        for frac in (1e-9, 0.3, 0.49, 0.51, 0.9, 0.999999, 1.37, -2.71, 5.03):
            sn, cn, dn, j = jacobi(frac * K, kc2, K, Kp)
            v = mp.mpf(frac * K) - 2 * j * mp.mpf(K)  # the same reduced argument
            assert abs(v) <= K and cn >= 0.0
            # the quarter and half periods are where the float K puts them: its last bit is not under test
            shift = (2 * abs(j) + 1) * abs(K - mp.ellipk(m))
            s, c, d = (mp.ellipfun(name, v, m=m) for name in ("sn", "cn", "dn"))
            for value, exact, slope in ((sn, s, c * d), (cn, c, s * d), (dn, d, m * s * c)):
                assert abs(value - exact) <= 4e-15 * abs(exact) + shift * abs(slope), (frac, value, exact)
            # Legendre's integrals of the reduced amplitude, from (sn, cn, dn) alone
            F, P = legendre_integrals(sn, cn, dn, n)
            phi = mp.asin(sn) if abs(sn) < 0.5 else mp.sign(sn) * mp.acos(cn)
            assert abs(F - v) <= 4e-15 * abs(v), (frac, F, v)
            assert abs(P - mp.ellippi(n, phi, m)) <= 4e-15 * abs(P), (frac, P)
