"""Constant body torque on a spherical body (Bhattu 2019): omega grows linearly.

J = 2 * identity, omega0 = (0.1, 1, -0.1) rad/s, tau = (1, 1, 0) N m for
10 s with rk4 at 0.01 s. For a sphere omega x J omega vanishes, so
omega(t) = omega0 + tau t / I exactly and RK4 reproduces it to round-off:
omega(10) = (5.1, 6.0, -0.1).
"""

from __future__ import annotations

import sys

import numpy as np

import attsim
from attsim.testing import NotEvaluated


def build(out_dir=None):
    return attsim.Propagation("constant_torque", 2.0 * np.eye(3), (0.1, 1.0, -0.1), duration=10.0, method="rk4",
                              max_step=0.01, torque=(1.0, 1.0, 0.0), out_dir=out_dir, description=__doc__.splitlines()[0])


def criteria(tel):
    t = tel.df.index.to_numpy()
    expected = np.array([0.1, 1.0, -0.1]) + np.outer(t, [0.5, 0.5, 0.0])
    error = np.abs(tel.df[["wx", "wy", "wz"]].to_numpy() - expected).max()
    final = tel.df[["wx", "wy", "wz"]].iloc[-1].to_numpy()
    if abs(t[-1] - 10.0) < 1e-12:
        end_error = np.abs(final - [5.1, 6.0, -0.1]).max()
    else:  # a run of another duration has no omega(10 s) as its last row
        end_error = NotEvaluated(f"the run ends at {t[-1]:.6g} s, not 10 s")
    return [
        ("largest deviation from omega0 + tau t / I [rad/s]", error, error < 1e-12, "< 1e-12"),
        ("omega(10 s) - (5.1, 6.0, -0.1) [rad/s]", end_error, end_error < 1e-12, "< 1e-12"),
    ]


if __name__ == "__main__":
    sys.exit(attsim.cli.run_script(build, criteria))
