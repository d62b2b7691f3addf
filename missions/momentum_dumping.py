"""Momentum dumping: wheels loaded by a steady disturbance, with and without magnetorquer unloading.

A 3U CubeSat holds an inertial attitude with three reaction wheels (quaternion
PD at 5 Hz from a star tracker and a gyro) for two orbits (550 km, 97.6 deg, dipole field) while a constant 0.9 uN m
disturbance torque (a stand-in for a solar-pressure or residual-dipole
bias, larger than a 3U's usual one) acts on it. Without unloading the wheels
absorb it all, |tau| t = 10 mN m s after two orbits, past their 6.3 mN m s
capacity; with MomentumUnloading
(m = k (h x B) / |B|^2, k = 0.003 1/s, 0.2 A m^2 torquers) beside the wheel
controller they stay near empty while the pointing holds. The wheel law feeds
the torquers' torque m x B forward (``magnetorquer_feedforward``, Basilisk's
``mtbFeedforward``): the wheels take it over, so the body feels only the
disturbance (``tools/study_feedforward.py`` runs it without too).

Success: without unloading the wheels saturate (the case that motivates
it); with unloading the wheel momentum stays below 20 % of capacity over
the second orbit, no wheel saturates, and the pointing error stays below
0.01 deg after the first minute (the PD's standing error against the
disturbance is 0.005 deg).
"""

from __future__ import annotations

import sys

import numpy as np

import attsim
from attsim import inertia
from attsim.checks import boolean
from attsim.environment import Environment, KeplerOrbit
from attsim.testing import NotEvaluated, ended_before

BUS = inertia.CompositeBody([inertia.Part(inertia.SolidCuboid(4.0, (0.1, 0.1, 0.34)))])
WHEEL_INERTIA_KG_M2, WHEEL_MAX_TORQUE_NM, WHEEL_MAX_SPEED_RAD_S = 1e-5, 1e-3, 630.0  # ~6,000 rpm, 6.3 mN m s
DISTURBANCE_NM = (6e-7, -4e-7, 5e-7)


def _mission(name: str, unload: bool, out_dir, feedforward: bool = True) -> attsim.Mission:
    env = Environment(KeplerOrbit.circular(550.0, 97.6, epoch="2025-03-20T00:00:00"), field="dipole",
                      gravity_gradient=False, aerodynamic=False, solar_pressure=False)
    mission = attsim.Mission(name, BUS, omega0=(0.0, 0.0, 0.0), duration=2 * env.orbit.period_s, max_step=0.5,
                             telemetry_dt=10.0, environment=env, out_dir=out_dir,
                             description=("with" if unload else "without") + " magnetorquer unloading")
    wheels = [mission.add(attsim.ReactionWheel(f"rw_{a}", d, WHEEL_INERTIA_KG_M2, WHEEL_MAX_TORQUE_NM,
                                               WHEEL_MAX_SPEED_RAD_S)) for a, d in zip("xyz", np.eye(3))]
    tracker, gyro = mission.add(attsim.StarTracker(5.0, noise_arcsec=5.0)), mission.add(attsim.Gyro(5.0))
    mission.add(attsim.TorqueSchedule([(0.0, mission.duration_s, DISTURBANCE_NM)], name="disturbance"))
    mag = mtq = None
    if unload:  # the unloading law first: the wheel law feeds forward the dipole it decides at the same instant
        mag = mission.add(attsim.Magnetometer(1.0, noise_T=5e-8, name="mag"))
        mtq = mission.add(attsim.Magnetorquer(0.2))
        mission.add(attsim.MomentumUnloading(mag, mtq, gain_per_s=0.003, period_s=1.0))
    fed = unload and feedforward  # the wheels take over the magnetorquers' torque m x B: the pointing holds
    mission.add(attsim.QuaternionPD((1.0, 0.0, 0.0, 0.0), kp=2e-2, kd=4e-2, period_s=0.2, wheels=wheels,
                                    attitude_source=tracker, rate_source=gyro, magnetometer=mag if fed else None,
                                    magnetorquer_feedforward=mtq if fed else None))
    return mission


def build(out_dir=None, feedforward: bool = True):
    """The two runs; ``feedforward=False`` leaves the magnetorquers' torque out of the wheel law (a disturbance to
    the pointing, which ``tools/study_feedforward.py`` shows)."""
    from pathlib import Path

    feedforward = boolean(feedforward, "feedforward")
    root = Path(out_dir) if out_dir is not None else Path("reports") / "momentum_dumping"
    return [_mission("without_unloading", False, root / "without_unloading"),
            _mission("with_unloading", True, root / "with_unloading", feedforward)]


def criteria(runs):
    without, with_ = runs
    capacity = WHEEL_INERTIA_KG_M2 * WHEEL_MAX_SPEED_RAD_S
    period = with_.meta["environment"]["period_s"]
    saturated = int((without.events["kind"] == "saturation").sum()) if len(without.events) else 0
    h = np.linalg.norm(with_.df[[f"rw_{a}_h" for a in "xyz"]].to_numpy(), axis=1)
    late = with_.df.index >= period
    unreached = ended_before(with_, period)
    fraction = unreached if unreached else float(h[late].max() / capacity)
    with_saturations = int((with_.events["kind"] == "saturation").sum()) if len(with_.events) else 0
    settled = with_.df.index >= 60.0
    error = float(with_.df["att_err_deg"][settled].max()) if settled.any() else NotEvaluated("the run ends before 60 s")
    return [
        ("wheel saturations without unloading [-]", saturated, saturated > 0, "> 0"),
        ("wheel momentum over the second orbit with unloading / capacity [-]", fraction, fraction < 0.2, "< 0.2"),
        ("wheel saturations with unloading [-]", with_saturations, with_saturations == 0, "= 0"),
        ("pointing error with unloading after 60 s [deg]", error, error < 0.01, "< 0.01"),
    ]


if __name__ == "__main__":
    sys.exit(attsim.cli.run_script(build, criteria))
