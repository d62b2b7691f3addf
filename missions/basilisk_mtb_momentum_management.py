"""Basilisk's ``scenarioMtbMomentumManagementSimple``, rebuilt from attsim's built-ins.

Basilisk's example (``examples/scenarioMtbMomentumManagementSimple.py``): a
10 kg spacecraft with hub inertia diag(0.02, 0.1256, 0.1256)/3 kg m², four
Blue Canyon RWP015 wheels (``Omega_max`` 5000 rpm) at 52 deg, four torque bars
(three on the body axes, a fourth at 45 deg in the x-y plane, 0.1 A m² each),
turned from ``σ_BN = (0.1, 0.2, -0.3)`` at ``ω = (0.001, -0.01, 0.03)`` rad/s
to the inertial frame and held there for 2 hours while the torque bars drive
the wheels' net momentum to zero. Its chain, mapped onto attsim:

* ``inertial3D`` -> ``attTrackingError`` -> ``mrpFeedback`` (K = 1e-4 N m,
  P = 2e-3 N m s, no integral) -> ``mtbFeedforward`` -> ``rwMotorTorque``
  (the body axes) -> ``rwNullSpace`` (gain 3e-7 N m s toward 1000 rpm) is
  :class:`attsim.MRPFeedback` with ``allocation="clip"``,
  ``control_axes=np.eye(3)``, ``null_space_gain_Nm_s`` and
  ``wheel_speed_target_rad_s``, and ``magnetorquer_feedforward`` (the bars'
  torque ``m × B`` left out of the wheels'), deciding every 0.5 s on the
  true state (``simpleNav`` without noise);
* ``mtbMomentumManagementSimple`` (``τ = -K_p G_s J_s Ω``, K_p = 0.003 1/s)
  -> ``torque2Dipole`` (``m = B × τ / |B|²``) -> ``dipoleMapping`` (the
  bars' steering, each clipped at 0.1 A m²) -> ``MtbEffector`` is
  :class:`attsim.MomentumUnloading` with ``momentum="relative"`` (the
  wheels' ``J_s Ω``) driving :class:`attsim.Magnetorquer` with ``bar_axes``
  (Basilisk's ``GtMatrix_B`` columns; the example's steering matrix is their
  pseudo-inverse, which the bars compute), read through a magnetometer
  without noise (``magnetometer`` + ``tamComm``);
* the field is the one Basilisk's ``magneticFieldWMM`` computed along the
  orbit (epoch 2019 June 27, 10:23 UTC), every 0.5 s step, held over each
  step as the example's task holds it: ``data/basilisk_mtb_field.npz``,
  written by ``tools/make_basilisk_mtb_field.py``, as an
  :class:`attsim.environment.FieldHistory`. The orbit itself moves the
  centre of mass only (no environment torque acts in the example);
* the wheels (Basilisk's ``rwFactory``): ``u_max`` = 4 mN m,
  ``J_s`` = 0.015 N m s / 5000 rpm, no friction, balanced; the mission's
  inertia is the hub's less the wheels' axial ``J_s`` (Basilisk's hub
  inertia includes it), the law assumes the hub's. The example's single
  task runs the wheels and the hub before the flight software: no command
  delay. The magnetorquers' law comes first in the mission, so the wheel law
  feeds forward the dipole decided at the same instant, as the example's
  module order does.

Basilisk logs every 36 s (200 points); so does this mission.
``tools/compare_basilisk_mtb_momentum.py`` runs both side by side.
Success: the attitude error below 1e-6 deg after the first hour, the wheels'
net momentum drained to below 1 % of one wheel's capacity by the end, every
bar within its 0.1 A m² and no wheel past 5000 rpm.

Run: ``python missions/basilisk_mtb_momentum_management.py`` or
``attsim run basilisk_mtb_momentum_management``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

import attsim
from attsim import rotations
from attsim.checks import boolean
from attsim.environment import FieldHistory

RPM = 2.0 * np.pi / 60.0  # rad/s per rpm (Basilisk's macros.RPM)
I_HUB_KG_M2 = np.diag([0.02 / 3, 0.1256 / 3, 0.1256 / 3])  # the example's hub inertia, the wheels' J_s included
BETA_RAD = np.radians(52.0)
# the example's Gs: the wheels' spin axes (rows here)
WHEEL_AXES = np.array([[0.0, np.cos(BETA_RAD), np.sin(BETA_RAD)], [0.0, np.sin(BETA_RAD), -np.cos(BETA_RAD)],
                       [np.cos(BETA_RAD), -np.sin(BETA_RAD), 0.0], [-np.cos(BETA_RAD), -np.sin(BETA_RAD), 0.0]])
RWP015_MAX_TORQUE_NM = 0.004
RWP015_MAX_MOMENTUM_NMS = 0.015
WHEEL_MAX_SPEED_RAD_S = 5000.0 * RPM  # the example's Omega_max
WHEEL_JS_KG_M2 = RWP015_MAX_MOMENTUM_NMS / WHEEL_MAX_SPEED_RAD_S  # rwFactory: J_s = maxMomentum / Omega_max
WHEEL_SPEED_TARGET_RAD_S = 1000.0 * RPM  # rwNullSpace's desired speeds
NULL_SPACE_GAIN_NMS = 0.0000003
# the example's GtMatrix_B (row major, the bars' axes its columns): the bars' axes are its columns
BAR_AXES = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [0.70710678, 0.70710678, 0.0]])
BAR_MAX_DIPOLE_AM2 = 0.1
MOMENTUM_GAIN_PER_S = 0.003
SIGMA0_BN = (0.1, 0.2, -0.3)
OMEGA0_RAD_S = (0.001, -0.01, 0.03)
K_NM, P_NMS = 0.0001, 0.002
DT_S = 0.5  # the example's single task: dynamics and flight software
DURATION_S = 7200.0
TELEMETRY_DT_S = 36.0  # simHelpers.samplingTime(120 min, 0.5 s, 200)
FIELD_FILE = Path(__file__).resolve().parent / "data" / "basilisk_mtb_field.npz"


def field_history() -> FieldHistory:
    """Basilisk's WMM field along the example's orbit (inertial, T), held over each 0.5 s step."""
    with np.load(FIELD_FILE) as data:
        return FieldHistory(data["t_s"], data["B_inertial_T"], interpolation="hold")


def build(out_dir=None, feedforward: bool = True) -> attsim.Mission:
    """The mission; ``feedforward=False`` leaves the bars' torque out of the wheel law (a disturbance to the pointing
    while they unload, which ``tools/study_feedforward.py`` shows)."""
    feedforward = boolean(feedforward, "feedforward")
    inertia = I_HUB_KG_M2 - sum(WHEEL_JS_KG_M2 * np.outer(a, a) for a in WHEEL_AXES)
    mission = attsim.Mission(
        "basilisk_mtb_momentum_management", inertia, omega0=OMEGA0_RAD_S, q0=rotations.mrp_to_quat(SIGMA0_BN),
        duration=DURATION_S, method="rk4", max_step=DT_S, telemetry_dt=TELEMETRY_DT_S, seed=0, out_dir=out_dir,
        field=field_history(),
        description="Basilisk's scenarioMtbMomentumManagementSimple: four wheels held by MRP feedback, their net "
                    "momentum dumped by four torque bars fed forward",
    )
    wheels = [mission.add(attsim.ReactionWheel(f"rw{k + 1}", axis, WHEEL_JS_KG_M2, RWP015_MAX_TORQUE_NM,
                                               WHEEL_MAX_SPEED_RAD_S)) for k, axis in enumerate(WHEEL_AXES)]
    tam = mission.add(attsim.Magnetometer(1.0 / DT_S, name="tam"))
    bars = mission.add(attsim.Magnetorquer(BAR_MAX_DIPOLE_AM2, bar_axes=BAR_AXES, name="mtb"))
    mission.add(attsim.MomentumUnloading(tam, bars, gain_per_s=MOMENTUM_GAIN_PER_S, period_s=DT_S,
                                         momentum="relative"))
    mission.add(attsim.MRPFeedback(K_NM, P_NMS, DT_S, wheels, target_q=(1.0, 0.0, 0.0, 0.0),
                                   inertia_kg_m2=I_HUB_KG_M2, allocation="clip", control_axes=np.eye(3),
                                   null_space_gain_Nm_s=NULL_SPACE_GAIN_NMS,
                                   wheel_speed_target_rad_s=WHEEL_SPEED_TARGET_RAD_S,
                                   magnetorquer_feedforward=bars if feedforward else None,
                                   magnetometer=tam if feedforward else None, attitude_source=attsim.TRUTH,
                                   rate_source=attsim.TRUTH))
    return mission


def net_wheel_momentum_Nms(df) -> np.ndarray:
    """``|Σ J_s Ω_j ĝ_j|`` (N m s): the wheels' net momentum relative to the body, what the bars drain."""
    speeds = df[[f"rw{k}_speed" for k in (1, 2, 3, 4)]].to_numpy()
    return np.linalg.norm(WHEEL_JS_KG_M2 * speeds @ WHEEL_AXES, axis=1)


def criteria(tel):
    df = tel.df
    late = df.index >= DURATION_S / 2
    settled = float(df["att_err_deg"][late].max()) if late.any() else float("nan")
    net = float(net_wheel_momentum_Nms(df)[-1] / RWP015_MAX_MOMENTUM_NMS)
    bars = float(df[[f"mtb_bar{k}" for k in (1, 2, 3, 4)]].abs().to_numpy().max())
    speeds = float(df[[f"rw{k}_speed" for k in (1, 2, 3, 4)]].abs().to_numpy().max() / RPM)
    return [
        ("attitude error after the first hour [deg]", settled, settled < 1e-6, "< 1e-6"),
        ("net wheel momentum at the end / one wheel's capacity [-]", net, net < 0.01, "< 0.01"),
        ("largest bar dipole [A m^2]", bars, bars <= BAR_MAX_DIPOLE_AM2, "<= 0.1"),
        ("largest wheel speed [rpm]", speeds, speeds < 5000.0, "< 5000"),
    ]


if __name__ == "__main__":
    sys.exit(attsim.cli.run_script(build, criteria))
