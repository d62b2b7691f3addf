"""Basilisk's ``scenarioAttitudeGuidance`` (Hill pointing, e = 0.1) against attsim, sample by sample.

Runs Basilisk's example (:mod:`tools.peers.basilisk_attitude_guidance`: the
example's modules and numbers) logging every 0.1 s step and prints:

1. **Orbit and guidance** (attsim's built-ins, issue 22 item 7): the orbit
   ``KeplerOrbit(..., true_anomaly_deg=85.3, j2=False, mu_m3_s2=<Basilisk's
   μ>)`` tabulated by ``Environment.orbit_only`` (every 0.1 s, as a mission
   with ``max_step`` 0.1 s would; the default 5 s is shown too) against
   Basilisk's integrated position and velocity, and the reference of
   ``NadirPointing(body_axis=(-1, 0, 0), along_track_axis=(0, 1, 0))`` (the
   Hill frame: x to zenith, z along the orbit normal) against ``hillPoint``'s
   ``σ_RN, ω_RN, ω̇_RN`` at the same times. Max and RMS.
2. **Closed loop**: the mission ``missions/basilisk_attitude_guidance.py``
   (built-ins only: ``MRPFeedback`` driving a ``BodyTorque`` with
   ``command_delay_s`` one period, Basilisk's task order) logging every
   0.1 s step, against the example's attitude, body rate and control torque
   (the body torque's commanded columns, ``ext_torque_tau_decided_*``, the torque
   decided at each step as Basilisk's command message). Max and RMS.
3. **Speed**: Basilisk's ``ExecuteSimulation`` against attsim's
   ``Mission.run`` (compiled, in memory), both warm in this process, each
   logging at the example's own interval (6 s), medians of interleaved
   repeats.

Needs Basilisk (``bsk``, the bench extra) beside attsim::

    python tools/compare_basilisk_attitude_guidance.py

Targets (issue 22): attitude within 1e-6 deg, control torque within 1e-6 N m,
at least 20x faster. Exit status 0 when all are met, 1 otherwise, 2 without
Basilisk.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]

from attsim import rotations  # noqa: E402
from attsim.environment import Environment, KeplerOrbit  # noqa: E402
from attsim.environment.table import R, V, lerp3, table_cell  # noqa: E402
from tools.peers import basilisk_attitude_guidance as peer  # noqa: E402
from tools.peers import agreement as figures  # noqa: E402
from tools.peers import command, timing  # noqa: E402

sys.path.insert(0, str(ROOT / "missions"))
import basilisk_attitude_guidance as mission  # noqa: E402

TARGETS = {"attitude_deg": 1e-6, "torque_Nm": 1e-6, "reference_deg": 1e-6}
SPEED_TARGET = 20.0
HILL = mission.HILL
INERTIA = np.reshape(peer.INERTIA_KG_M2, (3, 3))


def orbit(mu_m3_s2: float) -> KeplerOrbit:
    a, e, i, raan, argp, f = peer.ORBIT
    return KeplerOrbit(a, e, i, raan, argp, true_anomaly_deg=f, j2=False, mu_m3_s2=mu_m3_s2)


def q_from_mrp(sigma) -> np.ndarray:
    """``q`` (scalar first) of MRPs: Basilisk's ``σ_XN`` and attsim's ``q_IX`` have the same components."""
    return np.array([rotations.mrp_to_quat(s) for s in np.atleast_2d(sigma)])


def angle_deg(q1, q2) -> np.ndarray:
    """The rotation between ``q1`` and ``q2`` (deg), well conditioned near zero (not ``acos`` of a dot product)."""
    d = np.array([rotations.quat_multiply(rotations.quat_conjugate(a), b) for a, b in zip(q1, q2)])
    return np.degrees(np.linalg.norm(rotations.quat_to_rotvec(d), axis=1))


def orbit_and_reference(bsk: dict, table_dt_s: float) -> dict:
    """``{quantity: (max, rms)}``: the tabulated orbit and the Hill reference against Basilisk's."""
    t = bsk["t_s"]
    t_env, values = Environment.orbit_only(orbit(bsk["mu_m3_s2"]), table_dt_s=table_dt_s).table(float(t[-1]))
    cells = [table_cell(t_env, x) for x in t]
    r = np.array([lerp3(values, k, f, R) for k, f in cells])
    v = np.array([lerp3(values, k, f, V) for k, f in cells])
    ref = HILL.reference_at(t, r_I=r, v_I=v)
    R_IR = np.array([rotations.quat_to_dcm(q) for q in ref.q_IR])
    to_R = lambda x: np.einsum("nji,nj->ni", R_IR, x)  # noqa: E731 - N axes into R axes
    return {"position_m": figures.stats(np.linalg.norm(r - bsk["r_N"], axis=1)),
            "velocity_m_s": figures.stats(np.linalg.norm(v - bsk["v_N"], axis=1)),
            "reference_deg": figures.stats(angle_deg(ref.q_IR, q_from_mrp(bsk["sigma_RN"]))),
            "reference_rate_rad_s": figures.stats(np.linalg.norm(ref.omega_R_rad_s - to_R(bsk["omega_RN_N"]), axis=1)),
            "reference_accel_rad_s2": figures.stats(np.linalg.norm(ref.omegadot_R_rad_s2 - to_R(bsk["domega_RN_N"]),
                                                            axis=1))}


def run_attsim(telemetry_dt_s: float, backend: str = "compiled"):
    """The mission's telemetry (in memory) logging every ``telemetry_dt_s``."""
    return command.logging_every(mission.build, telemetry_dt_s).run(in_memory=True, backend=backend)


def closed_loop(bsk: dict) -> dict:
    """``{quantity: (max, rms)}``: the mission against Basilisk, every 0.1 s."""
    df = run_attsim(peer.DT_S).df
    t = df.index.to_numpy()
    figures.check_same_times(t, bsk["t_s"])
    q = df[figures.QUATERNION].to_numpy()
    # the torque decided at t, Basilisk's command message at t (the body torque applies it from t + 0.1 s)
    commanded = df[[f"ext_torque_tau_decided_{a}" for a in "xyz"]].to_numpy()
    rate = np.linalg.norm(df[figures.BODY_RATE].to_numpy() - bsk["omega_BN_B"], axis=1)
    return {"attitude_deg": figures.stats(angle_deg(q, q_from_mrp(bsk["sigma_BN"]))),
            "body_rate_rad_s": figures.stats(rate),
            "torque_Nm": figures.stats(np.linalg.norm(commanded - bsk["torque_Nm"], axis=1))}


def speed_ratio(repeats: int) -> tuple[float, float, float]:
    """:func:`tools.peers.timing.speed_ratio` of the mission (it logs at the example's interval)."""
    return timing.speed_ratio(peer, mission.build, repeats)


def _print(title: str, quantities: dict) -> bool:
    print(title)
    return figures.print_figures(quantities, TARGETS, 24)


def report(repeats: int) -> bool:
    """Print the three comparisons (see the module docstring) against their targets; ``True`` when every one is
    met."""
    bsk = peer.run(peer.DT_S)
    print(f"scenarioAttitudeGuidance (Basilisk {peer.version()}, mu = {bsk['mu_m3_s2']:.9e} m^3/s^2) vs attsim, "
          f"{peer.DURATION_S:g} s, every {peer.DT_S:g} s step")
    ok = _print("orbit and Hill reference, environment table every 0.1 s:", orbit_and_reference(bsk, peer.DT_S))
    _print("  (the same with the default 5 s table, for scale)", orbit_and_reference(bsk, 5.0))
    ok &= _print("closed loop (missions/basilisk_attitude_guidance.py):", closed_loop(bsk))
    return timing.print_speed(speed_ratio(repeats), repeats, peer.EXAMPLE_RECORD_S, SPEED_TARGET) and ok


def main(argv=None) -> int:
    """The command line (see the module docstring); the exit status."""
    return command.main(__doc__, peer, report, argv)


if __name__ == "__main__":
    sys.exit(main())
