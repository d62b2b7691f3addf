"""docs/guide/reinforcement_learning.md tabulates each task's defaults: the tables are what attsim.rl.tasks.TASKS
says (regenerate them with `python tests/rl/test_guide_tables.py` after changing a task)."""

import math
from pathlib import Path

import numpy as np
import pytest

from attsim.rl import ENV_IDS
from attsim.rl.tasks import _ORBIT_RATE_RAD_S, FIELD_SCALE_T, TASKS

PAGE = Path(__file__).resolve().parents[2] / "docs" / "guide" / "reinforcement_learning.md"


def _g(x) -> str:
    return f"{x:g}"


def task_table(name: str) -> str:
    """The markdown table of task ``name``'s defaults, as the guide shows it."""
    t = TASKS[name]
    env_id = next(k for k, v in ENV_IDS.items() if v == name)
    scales = {"attitude": f"{t.attitude} ({'4' if t.attitude == 'quaternion' else '3'}, unscaled)",
              "rate": f"ω / {_g(t.rate_scale_rad_s)} rad/s (3)",
              "wheels": f"wheel speed / {_g(t.wheel_max_speed_rad_s)} rad/s ({t.n_wheels})",
              "field": f"B_body / {_g(FIELD_SCALE_T)} T (3)"}
    actions = []
    if t.n_wheels:
        actions.append(f"{t.n_wheels} wheel torques × {_g(t.wheel_max_torque_Nm)} N m")
    if t.dipole_max_Am2 > 0:
        actions.append(f"3 dipoles × {_g(t.dipole_max_Am2)} A m²")
    inertia = ", ".join(_g(v) for v in np.ravel(t.inertia))
    start = [f"each ω component uniform in ±{_g(t.omega0_max_rad_s)} rad/s",
             "attitude uniform over rotations" if t.random_attitude else "attitude at the target"]
    if t.n_wheels:
        start.append(f"wheel speeds uniform in ±{_g(t.wheel_speed0_fraction)} × limit")
    goal = (f"\\|ω\\| < {_g(t.rate_goal_rad_s)} rad/s ({_g(math.degrees(t.rate_goal_rad_s))} deg/s): terminated"
            if t.rate_goal_rad_s > 0 else "none (episodes end by truncation)")
    turn_s = 2 * math.pi / (2 * _ORBIT_RATE_RAD_S)
    field = f"rotating_field: 30 µT turning at {_g(2 * _ORBIT_RATE_RAD_S)} rad/s (a turn in {turn_s:.0f} s)"
    rows = [
        ("id", f"`{env_id}`"),
        ("inertia [kg m²]", inertia),
        ("actions in [-1, 1]", "; ".join(actions)),
        ("observation", "; ".join(scales[p] for p in t.observation)),
        ("control period, integrator step [s]", f"{_g(t.period_s)}, {_g(t.max_step or t.period_s)}"),
        ("episode", f"{t.episode_steps} steps ({_g(t.episode_steps * t.period_s)} s)"),
        ("reward weights", ", ".join(f"{k} {_g(w)}" for k, w in t.weights)),
        ("goal", goal),
        ("target q_IB", ", ".join(_g(v) for v in t.target_q)),
        ("initial state", "; ".join(start)),
        ("magnetic field", field if t.magnetic_field else "none"),
        ("info keys", ", ".join(t.info_keys)),
    ]
    lines = [f"| {name} | default |", "|---|---|"] + [f"| {k} | {v} |" for k, v in rows]
    return "\n".join(lines)


@pytest.mark.parametrize("name", sorted(TASKS))
def test_the_guide_tabulates_each_tasks_defaults(name):
    assert task_table(name) in PAGE.read_text(encoding="utf-8"), (
        f"docs/guide/reinforcement_learning.md: the table of {name!r} is stale; regenerate it with "
        "`python tests/rl/test_guide_tables.py`")


if __name__ == "__main__":
    for task_name in TASKS:
        print(task_table(task_name), end="\n\n")
