"""An attsim vector environment as a Stable-Baselines3 ``VecEnv`` (``pip install attsim[learn]``).

Stable-Baselines3 does not take a Gymnasium ``VectorEnv`` (``PPO("MlpPolicy",
gymnasium.make_vec(...))`` raises *"The environment is of type
AttitudeVectorEnv, not a Gymnasium environment"*): it wants its own ``VecEnv``,
which resets a finished environment within the step and returns a list of
per-environment infos, the last observation of a finished one in
``infos[i]["terminal_observation"]``. :func:`vec_env` wraps an
:class:`~attsim.rl.AttitudeVectorEnv` (``SAME_STEP`` autoreset) so::

    from stable_baselines3 import PPO
    from attsim.rl.sb3 import vec_env

    env = vec_env("detumble", num_envs=64, period_s=10.0, episode_steps=570, rate_goal_rad_s=0.0)
    model = PPO("MlpPolicy", env, seed=0).learn(100_000)

A finished environment's ``infos[i]`` holds its final step's values
(``t_s``, ``rate_rad_s``, ``is_success`` ... :attr:`attsim.rl.tasks.Task.info_keys`),
so SB3's success rate and ``VecMonitor`` work; the others hold their current
ones. This module imports ``stable_baselines3``: neither ``import attsim`` nor
``import attsim.rl`` imports it.
"""

from __future__ import annotations

import numpy as np
from gymnasium.vector import AutoresetMode
from stable_baselines3.common.vec_env.base_vec_env import VecEnv

from ..errors import InputError
from .envs import AttitudeVectorEnv

__all__ = ["AttsimVecEnv", "vec_env"]


class AttsimVecEnv(VecEnv):
    """Stable-Baselines3's ``VecEnv`` over one :class:`~attsim.rl.AttitudeVectorEnv` (all its environments are
    stepped together in one compiled call).

    Parameters
    ----------
    vector_env : attsim.rl.AttitudeVectorEnv
        The vector environment; its ``autoreset_mode`` must be ``SAME_STEP`` (as SB3 resets).
    """

    def __init__(self, vector_env: AttitudeVectorEnv):
        if vector_env.metadata.get("autoreset_mode") != AutoresetMode.SAME_STEP:
            raise InputError("vector_env", "must reset within the step (autoreset_mode=AutoresetMode.SAME_STEP), "
                             "as Stable-Baselines3 expects")
        self.venv = vector_env
        super().__init__(vector_env.num_envs, vector_env.single_observation_space,
                         vector_env.single_action_space)
        self._actions = None

    def reset(self):
        """Reset every environment (seeded by :meth:`seed`, which SB3 calls with a model's ``seed``)."""
        obs, info = self.venv.reset(seed=self._seeds[0])
        self.reset_infos = self._per_env(info)
        self._reset_seeds()
        return obs

    def step_async(self, actions) -> None:
        self._actions = actions

    def step_wait(self):
        obs, reward, terminated, truncated, info = self.venv.step(self._actions)
        done = terminated | truncated
        infos = self._per_env(info)
        if done.any():
            final = self._per_env(info["final_info"])
            for i in np.flatnonzero(done):
                infos[i] = dict(final[i], terminal_observation=info["final_obs"][i],
                                **{"TimeLimit.truncated": bool(truncated[i] and not terminated[i])})
        return obs, reward.astype(np.float32), done, infos

    def _per_env(self, info: dict) -> list[dict]:
        """Gymnasium's dict of arrays as SB3's list of dicts (the task's values, as Python scalars)."""
        keys = self.venv.task.info_keys
        columns = {key: info[key].tolist() for key in keys if key in info}
        return [{key: column[i] for key, column in columns.items()} for i in range(self.num_envs)]

    def close(self) -> None:
        self.venv.close()

    def _indices(self, indices) -> list[int]:
        return list(self._get_indices(indices))

    def get_attr(self, attr_name: str, indices=None) -> list:
        """The vector environment's attribute, once per environment asked (they share it)."""
        return [getattr(self.venv, attr_name)] * len(self._indices(indices))

    def set_attr(self, attr_name: str, value, indices=None) -> None:
        setattr(self.venv, attr_name, value)

    def env_method(self, method_name: str, *method_args, indices=None, **method_kwargs) -> list:
        result = getattr(self.venv, method_name)(*method_args, **method_kwargs)
        return [result] * len(self._indices(indices))

    def env_is_wrapped(self, wrapper_class, indices=None) -> list[bool]:
        return [False] * len(self._indices(indices))


def vec_env(task_name: str = "detumble", num_envs: int = 16, **settings) -> AttsimVecEnv:
    """``num_envs`` environments of the task as a Stable-Baselines3 ``VecEnv``.

    Parameters
    ----------
    task_name : str
        ``"detumble"``, ``"pointing"`` or ``"momentum"``.
    num_envs : int
        Environments stepped together.
    **settings
        Any field of :class:`attsim.rl.tasks.Task` but ``name`` (as ``gymnasium.make``'s keywords).

    Returns
    -------
    AttsimVecEnv
        Seeded by SB3 (``PPO(..., seed=s)``) or by its ``seed(s)`` before the first reset.
    """
    return AttsimVecEnv(AttitudeVectorEnv(num_envs, task_name, autoreset_mode=AutoresetMode.SAME_STEP,
                                          **settings))
