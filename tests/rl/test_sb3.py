"""attsim.rl.sb3: the vector environment as a Stable-Baselines3 VecEnv (only where stable_baselines3 is installed:
`make test` does not install it; /work/venvs/learn does)."""

import subprocess
import sys

import numpy as np
import pytest


def test_attsim_and_attsim_rl_do_not_import_stable_baselines3():
    code = "import sys, attsim, attsim.rl; assert 'stable_baselines3' not in sys.modules, 'imported'"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_adapter_is_an_sb3_vec_env_with_its_terminal_observations():
    pytest.importorskip("stable_baselines3")
    from stable_baselines3.common.vec_env import VecEnv

    from attsim.rl.sb3 import vec_env

    env = vec_env("detumble", num_envs=3, episode_steps=2, omega0_max_rad_s=0.02)
    assert isinstance(env, VecEnv) and env.num_envs == 3
    env.seed(5)
    first = env.reset()
    again = vec_env("detumble", num_envs=3, episode_steps=2, omega0_max_rad_s=0.02)
    again.seed(5)
    np.testing.assert_array_equal(again.reset(), first)  # SB3's seed reaches the environment's generator
    zeros = np.zeros((3, 3), np.float32)
    obs, reward, done, infos = env.step(zeros)
    assert reward.dtype == np.float32 and not done.any() and infos[0]["t_s"] == 1.0
    obs, reward, done, infos = env.step(zeros)
    assert done.all()
    for i, info in enumerate(infos):
        assert info["TimeLimit.truncated"] and info["t_s"] == 2.0 and not info["is_success"]
        assert info["terminal_observation"].shape == obs[i].shape
        assert not np.array_equal(info["terminal_observation"], obs[i])  # obs is the new episode's first
    assert env.get_attr("num_envs") == [3, 3, 3] and env.env_is_wrapped(object) == [False] * 3


def test_ppo_learns_a_step_and_success_reaches_its_logger():
    pytest.importorskip("stable_baselines3")
    from stable_baselines3 import PPO
    from stable_baselines3.common.vec_env import VecMonitor

    from attsim.rl.sb3 import vec_env

    env = VecMonitor(vec_env("detumble", num_envs=4, omega0_max_rad_s=1e-4))  # below the goal: done at once
    model = PPO("MlpPolicy", env, n_steps=8, batch_size=32, n_epochs=1, seed=0, device="cpu",
                policy_kwargs=dict(net_arch=[8]))
    model.learn(total_timesteps=32)
    assert len(model.ep_success_buffer) > 0 and all(model.ep_success_buffer)
    with pytest.raises(Exception, match="SAME_STEP"):
        from attsim.rl import AttitudeVectorEnv
        from attsim.rl.sb3 import AttsimVecEnv

        AttsimVecEnv(AttitudeVectorEnv(2, "detumble"))
