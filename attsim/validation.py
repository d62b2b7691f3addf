"""Analytic validation cases behind ``attsim validate``.

Each case compares a method with an exact or independent reference and a
bound that follows from the method's order at the chosen step; all must
pass on any machine.
"""

from __future__ import annotations

import numpy as np

__all__ = ["run_cases"]


def _error(df, ref) -> float:
    from .rotations import quat_angle_between

    rate = np.abs(df[["wx", "wy", "wz"]].to_numpy() - ref[["wx", "wy", "wz"]].to_numpy()).max()
    angle = quat_angle_between(df[["qw", "qx", "qy", "qz"]].to_numpy(), ref[["qw", "qx", "qy", "qz"]].to_numpy()).max()
    return float(max(rate, angle))


def run_cases() -> list[tuple[str, str, float, float, bool]]:
    """``[(case, method, error, bound, passed), ...]``."""
    from . import analysis
    from .propagation import propagate

    rows = []
    top = dict(inertia=[2.0, 2.0, 8.0], omega0=[1.0, 0.0, 1.0], t_end=100.0, allow_nonphysical=True)
    for method, dt, bound in (("rk4", 0.01, 1e-5), ("rkmk4", 0.01, 1e-5), ("split4", 0.01, 1e-6),
                              ("exact", 0.01, 1e-11)):
        df = propagate(**top, dt=dt, method=method)
        error = _error(df, analysis.symmetric_top([2, 2, 8], [1, 0, 1], df.index))
        rows.append(("symmetric top I=[2 2 8] vs closed form, 100 s", method, error, bound))
    df = propagate(2.0 * np.eye(3), (0.1, 1.0, -0.1), t_end=10.0, dt=0.01, torque=(1.0, 1.0, 0.0))
    rows.append(("constant torque on a sphere: omega(10) = (5.1, 6, -0.1)", "rk4",
                 float(np.abs(df[["wx", "wy", "wz"]].iloc[-1].to_numpy() - [5.1, 6.0, -0.1]).max()), 1e-12))
    moments, m0 = np.array([0.376, 0.627, 1.0]), np.array([0.0, 0.6, -0.8])
    exact = propagate(moments, m0 / moments, t_end=40.0, dt=0.01, method="exact")
    for method, bound in (("split6", 2e-12), ("split4", 1e-9), ("rk4", 5e-9), ("dcm", 5e-8), ("rkn", 5e-8)):
        error = _error(propagate(moments, m0 / moments, t_end=40.0, dt=0.01, method=method), exact)
        rows.append(("free rigid body (seed 002) vs exact, 40 s", method, error, bound))
    inv = analysis.invariants(propagate(moments, m0 / moments, t_end=1e4, dt=1.0, method="exact"))
    rows.append(("exact: inertial momentum drift over 1e4 s", "exact", float(inv["H_I_drift"].abs().max()), 1e-10))
    return [(case, method, error, bound, error <= bound) for case, method, error, bound in rows]
