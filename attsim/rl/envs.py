"""Gymnasium environments on :class:`attsim.Ensemble`: one spacecraft (:class:`AttitudeEnv`) or many
(:class:`AttitudeVectorEnv`), for any task of :mod:`attsim.rl.tasks`.

Gymnasium 1.x conventions: ``reset(seed=..., options=None) -> (obs, info)``,
``step(action) -> (obs, reward, terminated, truncated, info)``; the vector
environment steps all its environments in one call of the ensemble's
compiled step and resets a finished one at its next step
(``AutoresetMode.NEXT_STEP``, Gymnasium's default: that step's action for it is
ignored, its observation is the first of the new episode, its reward 0 and
both flags false), or within the same step with ``autoreset_mode=SAME_STEP``
(the last observation in ``info["final_obs"]``, as Stable-Baselines3 expects).

Seeding: ``reset(seed=s)`` seeds the environment's generator
(``self.np_random``), from which every initial state is drawn; the same seed
gives the same episodes. A vector environment draws the initial states of all
environments it resets from its one generator.
"""

from __future__ import annotations

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from .._core.validate import positive_int
from ..errors import InputError
from .tasks import OBSERVATION_BOUNDS, Task, task

__all__ = ["AttitudeEnv", "AttitudeVectorEnv", "check_actions"]


def _spaces(t: Task) -> tuple:
    bound = np.concatenate([np.full(t.observation_sizes[name], OBSERVATION_BOUNDS[name], np.float32)
                            for name in t.observation])
    observation = spaces.Box(-bound, bound, dtype=np.float32)
    action = spaces.Box(-1.0, 1.0, (t.action_size,), np.float32)
    return observation, action


def check_actions(actions, shape: tuple) -> np.ndarray:
    """``actions`` as a float64 array of ``shape``, finite (NaN or a wrong shape is an InputError naming
    ``action``); values outside [-1, 1] are clipped by the task."""
    a = np.asarray(actions, dtype=np.float64) if not isinstance(actions, (str, bytes)) else None
    if a is None or a.shape != shape:
        raise InputError("action", f"must be an array of shape {shape} in [-1, 1]",
                         f"got {getattr(a, 'shape', type(actions).__name__)}")
    if not np.isfinite(a).all():
        raise InputError("action", "must be finite", f"got {a[~np.isfinite(a)][0]!r}")
    return a


class _Streams:
    def _stream_seeds(self, m: int):
        """Seeds of the sensors' noise streams of ``m`` new episodes, from the environment's generator (None without
        sensors: nothing to draw)."""
        if not self.task.measured:
            return None
        return self.np_random.integers(0, 2**62, m)


class AttitudeEnv(_Streams, gymnasium.Env):
    """One spacecraft of task ``task_name`` (``"detumble"``, ``"pointing"``, ``"momentum"``); keywords override the
    task's settings (:class:`attsim.rl.tasks.Task`)."""

    metadata = {"render_modes": []}

    def __init__(self, task_name: str = "pointing", render_mode=None, **settings):
        if render_mode is not None:
            raise InputError("render_mode", "must be None (attsim's environments do not render)")
        self.task = task(task_name, **settings)
        self.observation_space, self.action_space = _spaces(self.task)
        self.ensemble = self.task.ensemble(1)
        self._steps = 0
        self._no_action = np.zeros((1, self.task.action_size))

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.ensemble.reset(seeds=self._stream_seeds(1), **self.task.initial(self.np_random, 1))
        self._steps = 0
        return self.task.outcome(self.ensemble, self._no_action)[0][0], {}

    def step(self, action):
        a = check_actions(action, (self.task.action_size,))[None, :]
        wheels, dipole = self.task.commands(self.ensemble, a)
        self.ensemble.step(wheels, dipole)
        self._steps += 1
        obs, reward, terminated = self.task.outcome(self.ensemble, a)
        truncated = self._steps >= self.task.episode_steps
        return obs[0], float(reward[0]), bool(terminated[0]), truncated, {"t_s": float(self.ensemble.t_s[0])}


class AttitudeVectorEnv(_Streams, VectorEnv):
    """``num_envs`` spacecraft of one task stepped together by an :class:`attsim.Ensemble` (keywords as
    :class:`AttitudeEnv`'s)."""

    metadata = {"render_modes": [], "autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(self, num_envs: int = 16, task_name: str = "pointing", render_mode=None,
                 autoreset_mode=AutoresetMode.NEXT_STEP, **settings):
        if render_mode is not None:
            raise InputError("render_mode", "must be None (attsim's environments do not render)")
        modes = (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP)
        if autoreset_mode not in modes and autoreset_mode not in [m.value for m in modes]:
            raise InputError("autoreset_mode", "must be AutoresetMode.NEXT_STEP or SAME_STEP",
                             f"got {autoreset_mode!r}")
        self.metadata = dict(self.metadata, autoreset_mode=AutoresetMode(autoreset_mode))
        self._same_step = self.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
        self.num_envs = positive_int(num_envs, "num_envs")
        self.task = task(task_name, **settings)
        self.single_observation_space, self.single_action_space = _spaces(self.task)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.ensemble = self.task.ensemble(self.num_envs)
        self._episode_steps = np.zeros(self.num_envs, dtype=np.int64)
        self._autoreset = np.zeros(self.num_envs, dtype=bool)
        self._shape = (self.num_envs, self.task.action_size)
        self._no_action = np.zeros(self._shape)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.ensemble.reset(seeds=self._stream_seeds(self.num_envs), **self.task.initial(self.np_random,
                                                                                            self.num_envs))
        self._episode_steps[:] = 0
        self._autoreset[:] = False
        return self.task.outcome(self.ensemble, self._no_action)[0], {}

    def step(self, actions):
        a = check_actions(actions, self._shape)
        wheels, dipole = self.task.commands(self.ensemble, a)
        self.ensemble.step(wheels, dipole)
        self._episode_steps += 1
        truncated = self._episode_steps >= self.task.episode_steps
        if self._same_step:
            return self._step_same(a, truncated)
        restarted = self._autoreset
        if restarted.any():  # finished at the last step: their new episode starts now (NEXT_STEP)
            self._restart(np.flatnonzero(restarted))
        obs, reward, terminated = self.task.outcome(self.ensemble, a)
        if restarted.any():
            reward[restarted], terminated[restarted], truncated[restarted] = 0.0, False, False
        self._autoreset = terminated | truncated
        return obs, reward, terminated, truncated, {}

    def _restart(self, index) -> None:
        """A new episode for the environments ``index``: initial states drawn from the environment's generator."""
        self.ensemble.reset(index, seeds=self._stream_seeds(len(index)), **self.task.initial(self.np_random,
                                                                                               len(index)))
        self._episode_steps[index] = 0

    def _step_same(self, a, truncated):
        """SAME_STEP autoreset: a finished environment restarts within the step; its last observation is
        ``info["final_obs"]`` (masked by ``info["_final_obs"]``), the one returned is its new episode's first."""
        obs, reward, terminated = self.task.outcome(self.ensemble, a)
        done = terminated | truncated
        info = {}
        if done.any():
            index = np.flatnonzero(done)
            final = np.zeros_like(obs)
            final[index] = obs[index]
            info = {"final_obs": final, "_final_obs": done.copy()}
            self._restart(index)
            obs[index] = self.task.outcome(self.ensemble, self._no_action)[0][index]
        return obs, reward, terminated, truncated, info
