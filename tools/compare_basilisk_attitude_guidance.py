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
2. **Closed loop, provisional**: the attitude and the control torque of an
   attsim mission on that orbit whose law is Basilisk's ``mrpFeedback``
   arithmetic (``attsim.control.kernels.mrp_feedback``, the kernel of
   ``attsim.MRPFeedback``) on the true state, applying each torque one
   0.1 s step after it decides it (Basilisk's task order: ``extForceTorque``
   reads the command before ``mrpFeedback`` writes the next). The law and
   its delay are a Python component of this tool, not built-ins: a body
   torque that ``MRPFeedback`` drives and command latency are issue 22's
   items 3 and 4 (another branch); once they are in, the mission
   ``missions/basilisk_attitude_guidance.py`` is built from them and
   replaces this part, and the speed ratio is measured then (a Python
   component runs the slow path).

Needs Basilisk (``bsk``, the bench extra) beside attsim::

    python tools/compare_basilisk_attitude_guidance.py

Targets (issue 22): attitude within 1e-6 deg, control torque within 1e-6 N m.
Exit status 0 when the orbit, the reference and the provisional loop meet
them, 1 otherwise, 2 without Basilisk.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]

import attsim  # noqa: E402
from attsim import rotations  # noqa: E402
from attsim.control.kernels import mrp_feedback  # noqa: E402
from attsim.engine.component import periodic  # noqa: E402
from attsim.environment import Environment, KeplerOrbit  # noqa: E402
from attsim.environment.table import R, V, lerp3, table_cell  # noqa: E402
from attsim.guidance import NadirPointing  # noqa: E402
from tools.peers import basilisk_attitude_guidance as peer  # noqa: E402

TARGETS = {"attitude_deg": 1e-6, "torque_Nm": 1e-6, "reference_deg": 1e-6}
HILL = NadirPointing(body_axis=(-1.0, 0.0, 0.0), along_track_axis=(0.0, 1.0, 0.0))
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


def _stats(values) -> tuple[float, float]:
    v = np.abs(np.asarray(values, dtype=float))
    return float(v.max()), float(np.sqrt(np.mean(v ** 2)))


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
    return {"position_m": _stats(np.linalg.norm(r - bsk["r_N"], axis=1)),
            "velocity_m_s": _stats(np.linalg.norm(v - bsk["v_N"], axis=1)),
            "reference_deg": _stats(angle_deg(ref.q_IR, q_from_mrp(bsk["sigma_RN"]))),
            "reference_rate_rad_s": _stats(np.linalg.norm(ref.omega_R_rad_s - to_R(bsk["omega_RN_N"]), axis=1)),
            "reference_accel_rad_s2": _stats(np.linalg.norm(ref.omegadot_R_rad_s2 - to_R(bsk["domega_RN_N"]),
                                                            axis=1))}


class DelayedHillMRP(attsim.Component):
    """Provisional (see the module docstring): Basilisk's ``mrpFeedback`` to Hill pointing on the true state, its
    torque applied one period after it is decided. Logs ``u_<axis>`` (decided now) and ``applied_<axis>``."""

    name = "hill_mrp"

    def __init__(self, the_orbit: KeplerOrbit):
        self.orbit = the_orbit
        self.gains = (peer.K_NM, peer.P_NMS, -1.0, 2.0 / -1.0 * 0.1)
        self.inertia = tuple(float(x) for x in INERTIA.ravel())

    def start(self, sc):
        self.decided = self.applied = (0.0, 0.0, 0.0)

    def processes(self, env, sc):
        return [periodic(env, peer.DT_S, 0.0, sc.mission.duration_s, lambda: self.cycle(sc))]

    def cycle(self, sc):
        t = sc.env.now
        q, w = sc.state()
        r, v = self.orbit.state_eci([t])
        ref = HILL.reference_at(t, r_I=r[0], v_I=v[0])
        self.applied = self.decided  # what extForceTorque read before mrpFeedback ran
        sc.set_external_torque(self.name, self.applied)
        self.decided, _ = mrp_feedback(q, w, tuple(ref.q_IR), tuple(ref.omega_R_rad_s), tuple(ref.omegadot_R_rad_s2),
                                       self.inertia, (0.0, 0.0, 0.0), self.gains, (0.0, 0.0, 0.0), peer.DT_S,
                                       (0.0, 0.0, 0.0))

    def columns(self):
        return [f"{self.name}_{what}_{a}" for what in ("u", "applied") for a in "xyz"]

    def values(self, sc):
        return [*self.decided, *self.applied]


def closed_loop(bsk: dict) -> dict:
    """``{quantity: (max, rms)}``: the provisional attsim loop against Basilisk, every 0.1 s."""
    the_orbit = orbit(bsk["mu_m3_s2"])
    mission = attsim.Mission("basilisk_attitude_guidance_provisional", INERTIA, omega0=peer.OMEGA0_RAD_S,
                             q0=q_from_mrp(peer.SIGMA_BN0)[0], duration=peer.DURATION_S, method="rk4",
                             max_step=peer.DT_S, telemetry_dt=peer.DT_S, environment=Environment.orbit_only(
                                 the_orbit, table_dt_s=peer.DT_S))
    mission.add(DelayedHillMRP(the_orbit))
    df = mission.run(in_memory=True, compiled=False).df
    t = df.index.to_numpy()
    if len(t) != len(bsk["t_s"]) or not np.allclose(t, bsk["t_s"], rtol=0.0, atol=1e-9):
        raise ValueError(f"the runs logged different times: {len(t)} rows against Basilisk's {len(bsk['t_s'])}")
    q = df[["qw", "qx", "qy", "qz"]].to_numpy()
    u = df[[f"hill_mrp_u_{a}" for a in "xyz"]].to_numpy()
    return {"attitude_deg": _stats(angle_deg(q, q_from_mrp(bsk["sigma_BN"]))),
            "body_rate_rad_s": _stats(np.linalg.norm(df[["wx", "wy", "wz"]].to_numpy() - bsk["omega_BN_B"], axis=1)),
            "torque_Nm": _stats(np.linalg.norm(u - bsk["torque_Nm"], axis=1))}


def _print(title: str, figures: dict) -> bool:
    print(title)
    ok = True
    for name, (worst, rms) in figures.items():
        target = TARGETS.get(name)
        met = target is None or worst <= target
        ok &= met
        print(f"  {name:24s} max {worst:.3e}  rms {rms:.3e}" + ("" if target is None else
                                                                f"  target {target:g}: {'ok' if met else 'MISSED'}"))
    return ok


def main(argv=None) -> int:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args(argv)
    if not peer.available():
        print("Basilisk (bsk) is not importable: install the bench extra", file=sys.stderr)
        return 2
    bsk = peer.run(peer.DT_S)
    print(f"scenarioAttitudeGuidance (Basilisk {peer.version()}, mu = {bsk['mu_m3_s2']:.9e} m^3/s^2) vs attsim, "
          f"{peer.DURATION_S:g} s, every {peer.DT_S:g} s step")
    ok = _print("orbit and Hill reference, environment table every 0.1 s:", orbit_and_reference(bsk, peer.DT_S))
    _print("  (the same with the default 5 s table, for scale)", orbit_and_reference(bsk, 5.0))
    ok &= _print("closed loop, provisional (Python component: MRPFeedback's kernel, one-step delay):",
                 closed_loop(bsk))
    print("speed ratio: not measured until the mission is built from BodyTorque and command latency (items 3, 4)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
