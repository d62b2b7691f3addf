"""Advitiy B-dot detumbling after deployment (IGRF field, all disturbances).

The satellite starts aligned with the orbit frame, spinning at 0.106 rad/s
about body -y; B-dot (direction form, gain chosen from the inertia and the
orbit by the Avanzini-Giulietti rule) drives the 0.068 A m^2 magnetorquers
every 2 s from a noisy magnetometer; IGRF-14 field, gravity gradient, drag,
solar pressure and a residual dipole; 2 orbits.

Success: |omega| below 0.2 deg/s (3.5e-3 rad/s) within one orbit.
Run: ``python missions/advitiy_detumble.py`` or ``attsim run advitiy_detumble``;
Monte Carlo: ``attsim campaign advitiy_detumble --runs 500`` (see :func:`dispersions`).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _advitiy as advitiy  # noqa: E402

import numpy as np  # noqa: E402

import attsim  # noqa: E402
from attsim import rotations  # noqa: E402
from attsim.checks import finite_number, per_axis, positive_scalar, safe_name, unit_quaternion, vector3  # noqa: E402
from attsim.dispersions import Normal, Uniform, UniformRotation  # noqa: E402
from attsim.testing import ended_before  # noqa: E402

RATE_BOUND_RAD_S = 3.5e-3
OMEGA0_RAD_S = (0.0, -0.106, 0.0)


def dispersions():
    """What a deployment does not fix, for ``attsim campaign advitiy_detumble``."""
    return {
        # tip-off from the spring deployer: CubeSat missions report a few deg/s per axis after release; around the
        # design case (6 deg/s about -y), 0.02 rad/s (1.1 deg/s) per axis, 1 sigma
        "omega0": Normal(list(OMEGA0_RAD_S), [0.02, 0.02, 0.02]),
        # the attitude at release is not controlled: any orientation relative to the orbit frame
        "attitude_q": UniformRotation(),
        # node, perigee and mean anomaly are not published (set to zero): release anywhere along the orbit
        "mean_anomaly_deg": Uniform(0.0, 360.0),
        # CAD inertia of an unmeasured 1U (harness, batteries): each moment within +-10 % (3 sigma)
        "inertia_scale": Normal([1.0, 1.0, 1.0], [0.033, 0.033, 0.033]),
        # magnetometer bias left after ground calibration and the bus's own field: ~300 nT per axis, 1 sigma
        "magnetometer_bias_T": Normal([0.0, 0.0, 0.0], [3e-7, 3e-7, 3e-7]),
        # air-core coil current at a fixed drive voltage: copper resistance rises 0.39 %/K, so -20..+40 C around
        # the 20 C design point gives +8 %..-8 % dipole; turns and area tolerances add a few per cent
        "dipole_scale": Uniform(0.9, 1.08),
    }


def build(out_dir=None, omega0=OMEGA0_RAD_S, name="advitiy_detumble", attitude_q=(1.0, 0.0, 0.0, 0.0),
          mean_anomaly_deg=0.0, inertia_scale=(1.0, 1.0, 1.0), magnetometer_bias_T=(0.0, 0.0, 0.0),
          dipole_scale=1.0) -> attsim.Mission:
    # each parameter checked under its own name (a campaign draws them; a user may pass anything)
    omega0 = vector3(omega0, "omega0")
    name = safe_name(name, "name")
    attitude_q = unit_quaternion(attitude_q, "attitude_q")
    mean_anomaly_deg = finite_number(mean_anomaly_deg, "mean_anomaly_deg")
    inertia_scale = per_axis(inertia_scale, "inertia_scale")
    magnetometer_bias_T = vector3(magnetometer_bias_T, "magnetometer_bias_T")
    dipole_scale = positive_scalar(dipole_scale, "dipole_scale")
    env = advitiy.environment(field="igrf", disturbances=True, mean_anomaly_deg=mean_anomaly_deg)
    # attitude_q is the body's attitude relative to the orbit frame at release (identity: aligned with it)
    q0 = rotations.quat_multiply(advitiy.orbit_frame_attitude(env), np.asarray(attitude_q, dtype=float))
    mission = attsim.Mission(name, advitiy.scaled_inertia(inertia_scale), omega0=omega0, q0=q0,
                             duration=2 * env.orbit.period_s, method="rk4", max_step=0.5, telemetry_dt=2.0, seed=0,
                             out_dir=out_dir, environment=env, description=__doc__.splitlines()[0])
    mag, mtq = advitiy.add_magnetic_hardware(mission, bias_T=magnetometer_bias_T, dipole_scale=dipole_scale)
    mission.add(attsim.BDot(mag, mtq, gain=None, form="direction", period_s=advitiy.CONTROL_PERIOD_S))
    return mission


def criteria(tel):
    rate = advitiy.rate_norm(tel)
    period = tel.meta["environment"]["period_s"]
    settle = advitiy.time_to_stay_below(tel.df.index.to_numpy(), rate, RATE_BOUND_RAD_S)
    after_one_orbit = ended_before(tel, period) or rate[tel.df.index >= period][0]
    return [
        ("time until |omega| stays below 3.5e-3 rad/s [s]", settle, settle <= period, f"<= one orbit, {period:.0f}"),
        ("|omega| after one orbit [rad/s]", after_one_orbit, after_one_orbit < RATE_BOUND_RAD_S, "< 3.5e-3"),
    ]


if __name__ == "__main__":
    sys.exit(attsim.cli.run_script(build, criteria))
