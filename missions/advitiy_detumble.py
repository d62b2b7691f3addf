"""Advitiy B-dot detumbling after deployment (IGRF field, all disturbances).

The satellite starts aligned with the orbit frame, spinning at 0.106 rad/s
about body -y; B-dot (direction form, gain chosen from the inertia and the
orbit by the Avanzini-Giulietti rule) drives the 0.068 A m^2 magnetorquers
every 2 s from a noisy magnetometer; IGRF-14 field, gravity gradient, drag,
solar pressure and a residual dipole; 2 orbits.

Success: |omega| below 0.2 deg/s (3.5e-3 rad/s) within one orbit.
Run: ``python missions/advitiy_detumble.py`` or ``attsim run advitiy_detumble``.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _advitiy as advitiy  # noqa: E402

import attsim  # noqa: E402
from attsim.testing import ended_before  # noqa: E402

RATE_BOUND_RAD_S = 3.5e-3


def build(out_dir=None, omega0=(0.0, -0.106, 0.0), name="advitiy_detumble") -> attsim.Mission:
    env = advitiy.environment(field="igrf", disturbances=True)
    mission = attsim.Mission(name, advitiy.INERTIA_KG_M2, omega0=omega0, q0=advitiy.orbit_frame_attitude(env),
                             duration=2 * env.orbit.period_s, method="rk4", max_step=0.5, telemetry_dt=2.0, seed=0,
                             out_dir=out_dir, environment=env, description=__doc__.splitlines()[0])
    mag, mtq = advitiy.add_magnetic_hardware(mission)
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
