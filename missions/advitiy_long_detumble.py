"""Advitiy long B-dot run without disturbances: where does B-dot settle?

From body rates -(0.001, n + 0.001, 0.001) rad/s (n the orbit rate), no
disturbance torques, 36,000 s. B-dot damps the rate relative to the field,
and the field itself turns about twice per orbit as seen from the orbit, so
the body settles near twice the orbit rate rather than at rest (Avanzini &
Giulietti 2012). Success: the rate averaged over the last orbit lies
between n and 3n.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _advitiy as advitiy  # noqa: E402

import attsim  # noqa: E402
from attsim.testing import NotEvaluated  # noqa: E402


def build(out_dir=None) -> attsim.Mission:
    env = advitiy.environment(field="igrf", disturbances=False)
    n = env.orbit.mean_motion_rad_s
    mission = attsim.Mission("advitiy_long_detumble", advitiy.INERTIA_KG_M2, omega0=(-0.001, -(n + 0.001), -0.001),
                             q0=advitiy.orbit_frame_attitude(env), duration=36000.0, method="rk4", max_step=1.0,
                             telemetry_dt=10.0, seed=0, out_dir=out_dir, environment=env, description=__doc__.splitlines()[0])
    mag, mtq = advitiy.add_magnetic_hardware(mission)
    mission.add(attsim.BDot(mag, mtq, gain=None, form="direction", period_s=advitiy.CONTROL_PERIOD_S))
    return mission


def criteria(tel):
    period = tel.meta["environment"]["period_s"]
    n = 2 * np.pi / period
    rate = advitiy.rate_norm(tel)
    t_end = tel.df.index[-1]
    if t_end < period:  # a shortened run has no whole last orbit to average over
        ratio = NotEvaluated(f"the run ends at {t_end:.6g} s, within the first orbit ({period:.6g} s)")
    else:
        ratio = rate[tel.df.index >= t_end - period].mean() / n
    return [("residual rate over the last orbit / orbit rate n [-]", ratio, 1.0 <= ratio <= 3.0, "in [1, 3]")]


if __name__ == "__main__":
    sys.exit(attsim.cli.run_script(build, criteria))
