"""Gymnasium environments on :class:`attsim.Ensemble`: one spacecraft (:class:`AttitudeEnv`) or many
(:class:`AttitudeVectorEnv`), for any task of :mod:`attsim.rl.tasks`.

Gymnasium 1.x conventions: ``reset(seed=..., options=None) -> (obs, info)``,
``step(action) -> (obs, reward, terminated, truncated, info)``; the vector
environment steps all its environments in one call of the ensemble's
compiled step and resets a finished one at its next step
(``AutoresetMode.NEXT_STEP``, Gymnasium's default: that step's action for it is
ignored, its observation and info are the first of the new episode, as
``reset()`` gives them, its reward 0 and both flags false), or within the same step with ``autoreset_mode=SAME_STEP``
(the last observation in ``info["final_obs"]``, the last step's info in
``info["final_info"]``, each masked by ``info["_final_obs"]``,
``info["_final_info"]``). Stable-Baselines3 takes neither (it wants its own
``VecEnv``): :func:`attsim.rl.sb3.vec_env` wraps a SAME_STEP vector environment
as one.

``info`` holds the true physical values a user evaluates with, the same keys
in both (:attr:`attsim.rl.tasks.Task.info_keys`): ``t_s``, ``rate_rad_s``
(``|ω|``), ``attitude_error_rad`` (when the task observes or rewards the
attitude) and ``is_success`` (when the task has a goal). The single
environment's are Python scalars; the vector environment's are arrays, one
value per environment, each key with its ``_key`` mask (Gymnasium 1.x's
dict-of-arrays).

Seeding: ``reset(seed=s)`` seeds the environment's generator
(``self.np_random``), from which every episode's start is drawn: the initial
state first, then (with sensors) the seed of its noise stream, so a task
measured or not starts from the same state. The same seed gives the same
episodes. Environment ``i`` of a vector environment has a generator of its
own, seeded ``s + i`` by ``reset(seed=s)`` (or ``s[i]`` by a list of seeds),
as Gymnasium's ``SyncVectorEnv`` seeds its environments: it runs as the
single environment after ``reset(seed=s + i)``, its later episodes (autoreset)
included, whatever the number of environments.

The first reset makes the compiled code ready (:meth:`attsim.rl.tasks.Task.compile`):
once per machine it compiles, saying so on stderr with the estimate (about
16 s on two cores; ``attsim compile`` does the ensemble's step ahead, the
environment's few own functions then take seconds), then it loads in
milliseconds.
"""

from __future__ import annotations

import dataclasses

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from .._core.validate import SEED_MAX, int_in, is_seed, positive_int
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
    """``actions`` as a float64 array of ``shape``.

    Its shape and finiteness are checked (a wrong shape, a NaN or an inf is
    an :class:`~attsim.errors.InputError` naming ``action``); its range is
    not: a value beyond [-1, 1] is clipped there when it is applied (a
    Gaussian policy's samples exceed the bounds, and clipping is what
    learning libraries expect).
    """
    try:
        a = np.asarray(actions, dtype=np.float64) if not isinstance(actions, (str, bytes)) else None
    except (TypeError, ValueError):
        a = None
    if a is None or a.shape != shape:
        raise InputError("action", f"must be an array of shape {shape} (values beyond [-1, 1] are clipped)",
                         f"got {getattr(a, 'shape', type(actions).__name__)}")
    if not np.isfinite(a).all():
        raise InputError("action", "must be finite", f"got {a[~np.isfinite(a)][0]!r}")
    return a


class _Streams:
    """What both environments share: the sensors' streams, the first use's compile, the spec's episode length."""

    _compiled = False
    _start = None  # the current episodes' starts (_record_start)

    def _starts(self, generators) -> dict:
        """The :meth:`Ensemble.reset` keywords of one new episode per generator of ``generators``: from each, the
        initial state (:meth:`~attsim.rl.tasks.Task.initial`), then with sensors the seed of the episode's noise
        stream (module docstring)."""
        starts = [self.task.initial(rng, 1) for rng in generators]
        out = {key: np.concatenate([start[key] for start in starts]) for key in starts[0]}
        out["seeds"] = np.array([rng.integers(0, 2**62) for rng in generators]) if self.task.measured else None
        out["seed_body"] = 0  # each environment's noise as the single environment's (its body 0)
        return out

    def _record_start(self, index=None) -> None:
        """Keep the start of the episodes just begun (environments ``index``, all by default), as the ensemble
        holds it: what :meth:`episode_start` gives while they run."""
        e = self.ensemble
        now = (e.q, e.omega_rad_s, e.wheel_speed_rad_s)
        if index is None or self._start is None:
            self._start = tuple(np.array(x, dtype=float) for x in now)
        else:
            for kept, x in zip(self._start, now):
                kept[index] = x[index]

    def episode_start(self, index: int = 0) -> dict:
        """The start of environment ``index``'s current episode: ``q0``, ``omega0`` (rad/s) and
        ``wheel_speed0_rad_s`` (relative to the body), copies; refused before the first :meth:`reset`."""
        self._started()
        index = int_in(index, "index", 0, self._start[0].shape[0] - 1)  # an environment's
        q, w, speeds = (x[index].copy() for x in self._start)
        return {"q0": q, "omega0": w, "wheel_speed0_rad_s": speeds}

    def _started(self) -> None:
        """Refuse what needs an episode (a step, its start) before the first reset."""
        if self._start is None:
            raise InputError("env", "has no episode yet: call reset(seed=...) first")

    def _compile_once(self) -> None:
        if not self._compiled:
            self.task.compile(self.ensemble)
            self._compiled = True

    @property
    def spec(self):
        """The registration's :class:`gymnasium.envs.registration.EnvSpec` (set by ``gymnasium.make``), its
        ``max_episode_steps`` the task's ``episode_steps``: the length at which the environment itself truncates
        (registered without a ``TimeLimit`` wrapper: ``gymnasium.make(..., max_episode_steps=N)`` adds
        Gymnasium's, which cuts episodes at ``N`` while the task, and a policy flown as a mission, keep
        ``episode_steps``: set ``episode_steps=N`` instead); None when not made by ``gymnasium.make``."""
        spec = self.__dict__.get("_spec")
        if spec is None or spec.max_episode_steps == self.task.episode_steps:
            return spec
        return dataclasses.replace(spec, max_episode_steps=self.task.episode_steps)

    @spec.setter
    def spec(self, value) -> None:
        self.__dict__["_spec"] = value


class AttitudeEnv(_Streams, gymnasium.Env):
    """One spacecraft of an attitude-control task (``gymnasium.make("attsim/Detumble-v0")`` makes one).

    Parameters
    ----------
    task_name : str
        ``"detumble"``, ``"pointing"`` or ``"momentum"`` (:data:`attsim.rl.tasks.TASKS`).
    render_mode : None
        attsim's environments do not render (fly a policy as a Mission for its report:
        :func:`attsim.rl.fly.policy_mission`).
    **settings
        Any field of :class:`attsim.rl.tasks.Task` but ``name``, overriding the task's default
        (``weights`` as a dict of the weights to change).
    """

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
        """Start an episode: a new initial state drawn from the environment's generator.

        Parameters
        ----------
        seed : int or None
            Seeds the generator (the same seed, the same initial state and sensor noise); None continues it.
        options : None
            Not used.

        Returns
        -------
        observation : numpy.ndarray
            float32, the task's observation parts in order, scaled (:mod:`attsim.rl.tasks`).
        info : dict
            ``t_s`` (0.0), ``rate_rad_s`` and the task's other :attr:`~attsim.rl.tasks.Task.info_keys`.

        The first reset compiles the environment's code once per machine (said on stderr).
        """
        if seed is not None and not is_seed(seed):  # Gymnasium's own check raises its Error, naming no field
            raise InputError("seed", f"must be an integer in [0, {SEED_MAX}] or None", f"got {seed!r}")
        super().reset(seed=None if seed is None else int(seed))
        self._compile_once()
        self.ensemble.reset(**self._starts([self.np_random]))
        self._record_start()
        self._steps = 0
        obs, _, terminated = self.task.outcome(self.ensemble, self._no_action)
        return obs[0], self._info(terminated)

    def step(self, action):
        """Hold ``action`` for one control period (``period_s``).

        Parameters
        ----------
        action : array_like, shape (action size,)
            Wheel motor torques then magnetorquer dipoles as fractions of their limits; finite (else an
            :class:`~attsim.errors.InputError` naming ``action``); components beyond [-1, 1] are clipped.

        Returns
        -------
        observation : numpy.ndarray
            float32, after the period.
        reward : float
            The task's reward (module docstring of :mod:`attsim.rl.tasks`).
        terminated : bool
            The task's goal reached (detumble: ``|ω| < rate_goal_rad_s``).
        truncated : bool
            ``episode_steps`` steps done (``spec.max_episode_steps``).
        info : dict
            ``t_s`` (s since the episode's start), ``rate_rad_s`` (``|ω|``, true) and the task's other
            :attr:`~attsim.rl.tasks.Task.info_keys` (``is_success`` with a goal).
        """
        self._started()
        a = check_actions(action, (self.task.action_size,))[None, :]
        wheels, dipole = self.task.commands(self.ensemble, a)
        self.ensemble.step(wheels, dipole)
        self._steps += 1
        obs, reward, terminated = self.task.outcome(self.ensemble, a)
        truncated = self._steps >= self.task.episode_steps
        return obs[0], float(reward[0]), bool(terminated[0]), truncated, self._info(terminated)

    def _info(self, terminated) -> dict:
        return {key: value[0].item() for key, value in self.task.info(self.ensemble, terminated).items()}


class AttitudeVectorEnv(_Streams, VectorEnv):
    """``num_envs`` spacecraft of one task stepped together by an :class:`attsim.Ensemble`
    (``gymnasium.make_vec("attsim/Detumble-v0", num_envs=64)`` makes one).

    Parameters
    ----------
    num_envs : int
        The number of environments.
    task_name : str
        As :class:`AttitudeEnv`'s.
    render_mode : None
        attsim's environments do not render.
    autoreset_mode : gymnasium.vector.AutoresetMode
        ``NEXT_STEP`` (default) or ``SAME_STEP`` (module docstring); Stable-Baselines3 needs the latter, through
        :func:`attsim.rl.sb3.vec_env`.
    **settings
        Any field of :class:`attsim.rl.tasks.Task` but ``name``.
    """

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
        self._all = np.ones(self.num_envs, dtype=bool)
        self._generators = None  # each environment's, set by reset (module docstring)

    def reset(self, *, seed=None, options=None):
        """Start an episode in every environment, each drawn from its own generator (module docstring).

        Parameters
        ----------
        seed : int, sequence of num_envs ints, or None
            Seeds environment ``i``'s generator with ``seed + i`` (or ``seed[i]``): it then runs as
            :class:`AttitudeEnv` after ``reset(seed=seed + i)``. None continues the generators (the first time:
            seeds drawn from the operating system's entropy).
        options : None
            Not used.

        Returns
        -------
        observations : numpy.ndarray
            float32, ``(num_envs, observation size)``.
        infos : dict
            Per key of :attr:`~attsim.rl.tasks.Task.info_keys` an array of ``num_envs`` values and its ``_key``
            mask.
        """
        seeds = self._seeds(seed)
        super().reset(seed=None if seeds is None else seeds[0])
        if seeds is not None:
            self._generators = [seeding.np_random(s)[0] for s in seeds]
        elif self._generators is None:
            self._generators = [seeding.np_random(None)[0] for _ in range(self.num_envs)]
        self._compile_once()
        self.ensemble.reset(**self._starts(self._generators))
        self._record_start()
        self._episode_steps[:] = 0
        self._autoreset[:] = False
        obs, _, terminated = self.task.outcome(self.ensemble, self._no_action)
        return obs, self._infos(terminated)

    def step(self, actions):
        """Hold every environment's action for one control period, then restart those that had finished.

        Parameters
        ----------
        actions : array_like, shape (num_envs, action size)
            As :meth:`AttitudeEnv.step`'s, a row per environment (components beyond [-1, 1] clipped).

        Returns
        -------
        observations, rewards, terminations, truncations : numpy.ndarray
            One row or value per environment (autoreset: module docstring).
        infos : dict
            Per key of :attr:`~attsim.rl.tasks.Task.info_keys` an array and its ``_key`` mask; with ``SAME_STEP``
            also ``final_obs`` and ``final_info`` of the environments that finished.
        """
        self._started()
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
        infos = self._infos(terminated)  # a restarted one's as the single environment's reset() gives it
        if restarted.any():
            reward[restarted], terminated[restarted], truncated[restarted] = 0.0, False, False
        self._autoreset = terminated | truncated
        return obs, reward, terminated, truncated, infos

    def _infos(self, terminated) -> dict:
        """Gymnasium 1.x's dict of arrays: each of the task's values and its mask (every environment has them)."""
        out = {}
        for key, value in self.task.info(self.ensemble, terminated).items():
            out[key], out[f"_{key}"] = value, self._all.copy()
        return out

    def _seeds(self, seed) -> list[int] | None:
        """Each environment's seed of ``reset(seed=seed)``: ``seed + i``, or ``seed[i]`` of a sequence; None for
        None."""
        if seed is None:
            return None
        if is_seed(seed):
            if not is_seed(seed + self.num_envs - 1):
                raise InputError("seed", f"must be at most {SEED_MAX - self.num_envs + 1} (environment i is seeded "
                                 f"seed + i, up to {SEED_MAX})", f"got {seed!r}")
            return [int(seed) + i for i in range(self.num_envs)]
        sequence = isinstance(seed, (list, tuple)) or isinstance(seed, np.ndarray) and seed.ndim == 1
        seeds = list(seed) if sequence else None
        if seeds is None or len(seeds) != self.num_envs or not all(is_seed(s) for s in seeds):
            raise InputError("seed", f"must be an integer in [0, {SEED_MAX}] or a sequence of {self.num_envs} of them "
                                     "(one an environment)", f"got {seed!r}")
        return [int(s) for s in seeds]

    def _restart(self, index) -> None:
        """A new episode for the environments ``index``, each drawn from its own generator."""
        self.ensemble.reset(index, **self._starts([self._generators[i] for i in index]))
        self._record_start(index)
        self._episode_steps[index] = 0

    def _step_same(self, a, truncated):
        """SAME_STEP autoreset: a finished environment restarts within the step; its last observation is
        ``info["final_obs"]``, its last info ``info["final_info"]`` (masked by ``_final_obs``, ``_final_info``),
        the observation and info returned are its new episode's first."""
        obs, reward, terminated = self.task.outcome(self.ensemble, a)
        done = terminated | truncated
        infos = self._infos(terminated)
        if done.any():
            index = np.flatnonzero(done)
            final = np.zeros_like(obs)
            final[index] = obs[index]
            final_info = {key: value.copy() for key, value in infos.items()}
            for key in final_info:
                if key.startswith("_"):
                    final_info[key] = done.copy()
            self._restart(index)
            first, _, first_terminated = self.task.outcome(self.ensemble, self._no_action)
            obs[index] = first[index]
            for key, value in self._infos(first_terminated).items():
                if not key.startswith("_"):
                    infos[key][index] = value[index]
            infos.update(final_obs=final, _final_obs=done.copy(), final_info=final_info, _final_info=done.copy())
        return obs, reward, terminated, truncated, infos
