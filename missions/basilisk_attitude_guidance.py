"""Basilisk's ``scenarioAttitudeGuidance`` (Hill pointing, e = 0.1), rebuilt from attsim's built-ins.

Basilisk's example (``examples/scenarioAttitudeGuidance.py``,
``useAltBodyFrame=False``): a 750 kg spacecraft, inertia diag(900, 800, 600)
kg m², on a point-mass orbit (a = 10000 km, e = 0.1, i = 33.3 deg,
Ω = 48.2 deg, ω = 347.8 deg, f = 85.3 deg; Basilisk's Earth
μ = 3.98600436e14 m³/s²), turned from ``σ_BN = (0.1, 0.2, -0.3)`` at
``ω = (0.001, -0.01, 0.03)`` rad/s to the Hill frame by ``hillPoint`` ->
``attTrackingError`` -> ``mrpFeedback`` (K = 3.5 N m, P = 30 N m s, integral
feedback off) -> ``extForceTorque``, one 0.1 s task with Basilisk's RK4, for
10 min. Mapped onto attsim:

* the orbit: :class:`attsim.environment.KeplerOrbit` from its true anomaly
  with ``j2=False`` and Basilisk's μ, in the environment table of
  :meth:`attsim.environment.Environment.orbit_only` (no torque acts in the
  example: no effect is switched on; its default 5 s table puts the Hill
  frame within 3e-8 deg of ``hillPoint``'s);
* ``hillPoint``: :class:`attsim.guidance.NadirPointing` with body x to
  zenith and body y along track (the Hill frame: x radial out, z along the
  orbit normal);
* ``mrpFeedback`` -> ``extForceTorque``: :class:`attsim.MRPFeedback` driving
  an :class:`attsim.BodyTorque`, on the true state (``simpleNav`` without
  noise), with ``command_delay_s`` one period: in the example's task the
  torque module reads the command before the law writes the next one, so a
  command acts one step after it is decided (``ext_torque_tau_decided_*`` hold
  the torque decided at each row, Basilisk's ``cmdTorqueInMsg``;
  ``ext_torque_tau_*`` the torque applied).

Basilisk logs every 6 s (100 intervals); so does this mission.
``tools/compare_basilisk_attitude_guidance.py`` runs both side by side.
Success: the Hill-frame error stays below 0.5 deg from 300 s on and ends
below 0.01 deg.

Run: ``python missions/basilisk_attitude_guidance.py`` or
``attsim run basilisk_attitude_guidance``.
"""

from __future__ import annotations

import sys

import numpy as np

import attsim
from attsim import rotations
from attsim.environment import Environment, KeplerOrbit
from attsim.guidance import NadirPointing

MU_BASILISK_M3_S2 = 3.98600436e14  # Basilisk's astroConstants.h MU_EARTH (km^3/s^2 x 1e9)
ORBIT = dict(a_m=10_000e3, e=0.1, i_deg=33.3, raan_deg=48.2, argp_deg=347.8, true_anomaly_deg=85.3)
INERTIA_KG_M2 = np.diag([900.0, 800.0, 600.0])
SIGMA0_BN = (0.1, 0.2, -0.3)
OMEGA0_RAD_S = (0.001, -0.01, 0.03)
K_NM, P_NMS = 3.5, 30.0
DT_S = 0.1  # the example's single task: dynamics and flight software
DURATION_S = 600.0
TELEMETRY_DT_S = 6.0  # simHelpers.samplingTime(10 min, 0.1 s, 100)
HILL = NadirPointing(body_axis=(-1.0, 0.0, 0.0), along_track_axis=(0.0, 1.0, 0.0))


def orbit() -> KeplerOrbit:
    o = ORBIT
    return KeplerOrbit(o["a_m"], o["e"], o["i_deg"], o["raan_deg"], o["argp_deg"],
                       true_anomaly_deg=o["true_anomaly_deg"], j2=False, mu_m3_s2=MU_BASILISK_M3_S2)


def build(out_dir=None) -> attsim.Mission:
    mission = attsim.Mission(
        "basilisk_attitude_guidance", INERTIA_KG_M2, omega0=OMEGA0_RAD_S, q0=rotations.mrp_to_quat(SIGMA0_BN),
        duration=DURATION_S, method="rk4", max_step=DT_S, telemetry_dt=TELEMETRY_DT_S, seed=0, out_dir=out_dir,
        environment=Environment.orbit_only(orbit()),
        description="Basilisk's scenarioAttitudeGuidance: MRP feedback to Hill pointing through an ideal body torque",
    )
    torque = mission.add(attsim.BodyTorque("ext_torque"))
    mission.add(attsim.MRPFeedback(K_NM, P_NMS, DT_S, body_torque=torque, target=HILL, attitude_source=attsim.TRUTH,
                                   rate_source=attsim.TRUTH, command_delay_s=DT_S))
    return mission


def criteria(tel):
    err = tel.df["att_err_deg"]
    final_deg = float(err.iloc[-1])
    settled_deg = float(err[err.index >= 300.0].max())
    return [
        ("Hill-frame error at the end [deg]", final_deg, final_deg < 0.01, "< 0.01"),
        ("largest Hill-frame error from 300 s on [deg]", settled_deg, settled_deg < 0.5, "< 0.5"),
    ]


if __name__ == "__main__":
    sys.exit(attsim.cli.run_script(build, criteria))
