"""How many integration steps a wheel revolution needs for the imbalance jitter's amplitude.

A wheel spins at 20 Hz on the z axis of a body at rest, with a static and a
dynamic imbalance; the body's rate answers at the wheel speed. For several
steps per revolution (``max_step = 2 pi / (Omega k)``) this prints the
relative error of the body rate's amplitude at the wheel speed (a least
squares fit) against the linear response ``(i Omega J - [H_w x])^-1 T``
computed here. attsim refuses fewer than 2 steps a revolution at the
speed limit (the jitter would alias); the table says what more buys.

Run: ``python tools/study_jitter_resolution.py``.
"""

from __future__ import annotations

import math
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import attsim  # noqa: E402

J = np.diag([0.05, 0.06, 0.04])
STATIC, DYNAMIC, POSITION = 1e-6, 2e-7, np.array([0.1, -0.05, 0.2])
SPEED = 2 * math.pi * 20.0
WHEEL_INERTIA = 1e-5


def reference_amplitudes() -> np.ndarray:
    """|w| per axis of J dw/dt = T e^{i Omega t} + H_w x w, T = Omega^2 (U_s r x w_hat + U_d w_hat)."""
    w_hat = np.array([1.0, -1.0j, 0.0])  # the heavy side turning about +z
    torque = SPEED ** 2 * (STATIC * np.cross(POSITION, w_hat) + DYNAMIC * w_hat)
    h = WHEEL_INERTIA * SPEED
    cross = np.array([[0.0, -h, 0.0], [h, 0.0, 0.0], [0.0, 0.0, 0.0]])
    return np.abs(np.linalg.solve(1j * SPEED * J - cross, torque))


def simulated_amplitudes(steps_per_revolution: float, out_dir: Path) -> np.ndarray:
    h = 2 * math.pi / SPEED / steps_per_revolution
    m = attsim.Mission("jitter_resolution", J, (0.0, 0.0, 0.0), duration=2.0, max_step=h, telemetry_dt=h,
                       out_dir=out_dir)
    m.add(attsim.ReactionWheel("rw", (0, 0, 1), WHEEL_INERTIA, 1e-3, SPEED * 1.05, speed0_rad_s=SPEED,
                               static_imbalance_kg_m=STATIC, dynamic_imbalance_kg_m2=DYNAMIC,
                               position_m=tuple(POSITION)))
    df = m.run().df
    t = df.index.to_numpy()
    basis = np.column_stack([np.ones_like(t), t, np.cos(SPEED * t), np.sin(SPEED * t)])
    amplitudes = []
    for axis in "xyz":
        c = np.linalg.lstsq(basis, df[f"w{axis}"].to_numpy(), rcond=None)[0]
        amplitudes.append(math.hypot(c[2], c[3]))
    return np.array(amplitudes)


def main() -> None:
    reference = reference_amplitudes()
    print("steps per revolution   relative amplitude error of the body rate at the wheel speed (x, y, z)")
    with tempfile.TemporaryDirectory() as tmp:
        for k in (2.2, 3.0, 4.0, 6.0, 10.0, 20.0):
            error = simulated_amplitudes(k, Path(tmp) / f"k{k}") / reference - 1.0
            print(f"  {k:5.1f}                " + "  ".join(f"{e:+.1e}" for e in error))


if __name__ == "__main__":
    main()
