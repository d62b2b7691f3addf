"""Gymnasium environments for attitude control, on :class:`attsim.Ensemble` (``pip install attsim[rl]``).

Importing this package registers, for ``gymnasium.make`` and ``gymnasium.make_vec``::

    attsim/Detumble-v0   magnetorquers take out a tumble (actions: dipole, 3)
    attsim/Pointing-v0   three wheels slew to and hold an inertial target (actions: wheel torques, 3)
    attsim/Momentum-v0   magnetorquers dump the wheels' momentum while the wheels hold the attitude (6)

``gymnasium.make("attsim/Pointing-v0")`` is a single :class:`AttitudeEnv`;
``gymnasium.make_vec("attsim/Pointing-v0", num_envs=4096)`` is one
:class:`AttitudeVectorEnv` stepping all of them in one compiled call.
Keywords override the task's settings (:mod:`attsim.rl.tasks`: observations,
reward weights, periods, episode length). ``gymnasium.make("attsim.rl:attsim/Pointing-v0")``
imports this package first. :func:`policy_mission` flies a trained policy as a
Mission (its report); :mod:`attsim.rl.sb3` (not imported here) adapts the
vector environment to Stable-Baselines3. The guide's page "Reinforcement
learning" says how to train, evaluate and fly.
"""

from __future__ import annotations

import gymnasium

from .envs import AttitudeEnv, AttitudeVectorEnv
from .fly import episode_start, policy_mission
from .tasks import FIELD_SCALE_T, OBSERVATIONS, TASKS, Task, rotating_field, task

__all__ = ["AttitudeEnv", "AttitudeVectorEnv", "Task", "TASKS", "OBSERVATIONS", "task", "ENV_IDS", "policy_mission",
           "episode_start", "rotating_field", "FIELD_SCALE_T"]

ENV_IDS = {"attsim/Detumble-v0": "detumble", "attsim/Pointing-v0": "pointing", "attsim/Momentum-v0": "momentum"}

for _env_id, _task in ENV_IDS.items():
    if _env_id not in gymnasium.registry:
        gymnasium.register(id=_env_id, entry_point="attsim.rl.envs:AttitudeEnv",
                           vector_entry_point="attsim.rl.envs:AttitudeVectorEnv", kwargs={"task_name": _task},
                           disable_env_checker=False)
