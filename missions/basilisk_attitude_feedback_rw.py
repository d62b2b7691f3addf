"""Basilisk's ``scenarioAttitudeFeedbackRW`` (default configuration), rebuilt from attsim's built-ins.

Basilisk's example (``examples/scenarioAttitudeFeedbackRW.py``, run with
``useJitterSimple=False, useRWVoltageIO=False``): a 750 kg spacecraft with
hub inertia diag(900, 800, 600) kg m², three Honeywell HR16 wheels (50 N m s
option) along the body axes starting at 100, 200 and 300 rpm, turned from
``σ_BN = (0.1, 0.2, -0.3)`` at ``ω = (0.001, -0.01, 0.03)`` rad/s to the
inertial frame by ``inertial3D`` -> ``attTrackingError`` -> ``mrpFeedback``
(K = 3.5 N m, P = 30 N m s, integral feedback off) -> ``rwMotorTorque``
(control axes: the body axes), one 0.1 s task with Basilisk's RK4, for
10 min. Its numbers, mapped onto attsim:

* ``mrpFeedback`` + ``rwMotorTorque`` + the wheels' torque saturation is
  :class:`attsim.MRPFeedback` with ``allocation="clip"`` and
  ``control_axes=np.eye(3)``, deciding every 0.1 s on the true state
  (``simpleNav`` without noise). The example's task runs the wheels and the
  hub before the flight software at each step, so the command decided at
  ``t`` drives the wheels over ``[t, t + 0.1 s]``: no command delay.
* The HR16 is the catalogue's (:mod:`attsim.actuators.catalogue`, the
  figures of Basilisk's ``rwFactory``): ``u_max`` = 0.2 N m,
  ``Ω_max`` = 6000 rpm, ``J_s`` = 50 N m s / ``Ω_max``; no friction, no
  minimum torque (the factory's defaults), balanced wheels.
* Basilisk's hub inertia includes the wheels' axial inertia ``J_s`` (its
  balanced wheels add none); attsim's mission inertia excludes it:
  ``I_hub - Σ J_s ĝ ĝᵀ``. The law assumes ``I_hub``, as the example's
  vehicle configuration message says.
* The orbit (point-mass Earth) moves the centre of mass only: no
  environment torque acts in the example, so the mission has none.

Basilisk logs every 6 s (100 intervals); so does this mission.
``tools/compare_basilisk_feedback_rw.py`` runs both side by side.
Success: the attitude error falls below 0.5 deg by the end, the wheels'
torque limit is reached (clipped per wheel) and no wheel speeds past 6000 rpm.

Run: ``python missions/basilisk_attitude_feedback_rw.py`` or
``attsim run basilisk_attitude_feedback_rw``.
"""

from __future__ import annotations

import sys

import numpy as np

import attsim
from attsim import rotations

RPM = 2.0 * np.pi / 60.0  # rad/s per rpm (Basilisk's macros.RPM)
I_HUB_KG_M2 = np.diag([900.0, 800.0, 600.0])  # the example's hub inertia, the wheels' J_s included
HR16_MAX_MOMENTUM_NMS = 50.0  # the example's option of the HR16
WHEEL_AXES = np.eye(3)
WHEEL_SPEED0_RPM = (100.0, 200.0, 300.0)
SIGMA0_BN = (0.1, 0.2, -0.3)
OMEGA0_RAD_S = (0.001, -0.01, 0.03)
K_NM, P_NMS = 3.5, 30.0
DT_S = 0.1  # the example's single task: dynamics and flight software
DURATION_S = 600.0
TELEMETRY_DT_S = 6.0  # simHelpers.samplingTime(10 min, 0.1 s, 100)


def build(out_dir=None) -> attsim.Mission:
    wheels = [attsim.ReactionWheel.from_catalogue("Honeywell HR16", f"rw{k + 1}", axis, HR16_MAX_MOMENTUM_NMS,
                                                  speed0_rad_s=rpm * RPM)
              for k, (axis, rpm) in enumerate(zip(WHEEL_AXES, WHEEL_SPEED0_RPM))]
    inertia = I_HUB_KG_M2 - sum(w.inertia_kg_m2 * np.outer(w.axis, w.axis) for w in wheels)
    mission = attsim.Mission(
        "basilisk_attitude_feedback_rw", inertia, omega0=OMEGA0_RAD_S, q0=rotations.mrp_to_quat(SIGMA0_BN),
        duration=DURATION_S, method="rk4", max_step=DT_S, telemetry_dt=TELEMETRY_DT_S, seed=0, out_dir=out_dir,
        description="Basilisk's scenarioAttitudeFeedbackRW: MRP feedback to three HR16 wheels, clipped per wheel",
    )
    for wheel in wheels:
        mission.add(wheel)
    mission.add(attsim.MRPFeedback(K_NM, P_NMS, DT_S, wheels, target_q=(1.0, 0.0, 0.0, 0.0),
                                   inertia_kg_m2=I_HUB_KG_M2, allocation="clip", control_axes=np.eye(3),
                                   attitude_source=attsim.TRUTH, rate_source=attsim.TRUTH))
    return mission


def criteria(tel):
    df = tel.df
    final_deg = float(df["att_err_deg"].iloc[-1])
    wheels = [c for c in tel.meta["components"] if c["type"] == "ReactionWheel"]  # the catalogue's HR16s, as run
    max_torque_Nm = wheels[0]["max_torque_Nm"]
    max_speed_rpm = wheels[0]["max_speed_rad_s"] / RPM
    torques = df[[f"{w['name']}_torque" for w in wheels]].abs().to_numpy()
    speeds = df[[f"{w['name']}_speed" for w in wheels]].abs().to_numpy() / RPM
    clipped = int((tel.events["what"] == "torque").sum()) if len(tel.events) and "what" in tel.events else 0
    return [
        ("attitude error at the end [deg]", final_deg, final_deg < 0.5, "< 0.5"),
        ("largest motor torque / limit [-]", torques.max() / max_torque_Nm,
         np.isclose(torques.max(), max_torque_Nm, rtol=1e-12), "= 1 (clipped)"),
        ("torque clipping events [-]", clipped, clipped > 0, "> 0"),
        ("largest wheel speed [rpm]", speeds.max(), speeds.max() < max_speed_rpm, f"< {max_speed_rpm:g}"),
    ]


if __name__ == "__main__":
    sys.exit(attsim.cli.run_script(build, criteria))
