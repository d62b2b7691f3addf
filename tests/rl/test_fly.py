"""attsim.rl.fly: a policy flown as a Mission replays the environment's episode (same start, field, observation,
actions) in the mission loop."""

import gymnasium
import numpy as np
import pytest

import attsim.rl  # noqa: F401 - registers the environments
from attsim.errors import InputError
from attsim.rl.fly import episode_start, policy_mission


def _damper(obs):
    """A cross-product law on the detumble observation (rate, field): something that acts on every step."""
    return np.clip(20.0 * np.cross(obs[:3], obs[3:6]), -1.0, 1.0)


def _episode(env, policy, seed):
    obs, _ = env.reset(seed=seed)
    rates = []
    for _ in range(env.unwrapped.task.episode_steps):
        obs, _, _, _, info = env.step(policy(obs).astype(np.float32))
        rates.append(info["rate_rad_s"])
    return np.array(rates)


def test_a_policy_flown_as_a_mission_replays_its_episode(tmp_path):
    env = gymnasium.make("attsim/Detumble-v0", episode_steps=12, rate_goal_rad_s=0.0)
    rates = _episode(env, _damper, seed=3)
    env.reset(seed=3)
    start = episode_start(env)
    np.testing.assert_array_equal(start["omega0"], env.unwrapped.ensemble.omega_rad_s[0])
    mission = policy_mission(env, _damper, name="flown", out_dir=tmp_path / "flown")
    assert mission.duration_s == 12 * env.unwrapped.task.period_s
    tel = mission.run(backend="interpreted")
    flown = np.linalg.norm(tel.df[["wx", "wy", "wz"]].to_numpy(), axis=1)[1:]  # rows at 1 s, 2 s, ...
    np.testing.assert_allclose(flown, rates, rtol=1e-9)
    assert rates[-1] < rates[0]  # the damper acted


def test_wheel_policies_fly_with_a_star_tracker_and_wheel_observations_are_refused(tmp_path):
    env = gymnasium.make("attsim/Pointing-v0", observation=("attitude", "rate"), episode_steps=3, period_s=0.5)
    policy = lambda obs: np.clip(obs[:3] + obs[3:], -1.0, 1.0)  # noqa: E731 - a damping law (the guide's sign)
    rates = _episode(env, policy, seed=1)
    env.reset(seed=1)
    tel = policy_mission(env, policy, out_dir=tmp_path / "p").run(backend="interpreted")
    np.testing.assert_allclose(np.linalg.norm(tel.df[["wx", "wy", "wz"]].to_numpy(), axis=1)[1:], rates,
                               rtol=1e-9)
    with pytest.raises(InputError, match="observation"):
        policy_mission(gymnasium.make("attsim/Pointing-v0"), policy)
