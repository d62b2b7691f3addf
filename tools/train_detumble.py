"""Train a detumbling policy with Stable-Baselines3 PPO on ``attsim/Detumble-v0``, then fly it as an attsim Mission.

Needs the optional extra ``learn`` (``pip install -e ".[learn]"``; install a CPU
build of torch first). Steps:

1. PPO (``MlpPolicy``) against the vector environment (``--envs`` spacecraft
   stepped together by an :class:`attsim.Ensemble`, SAME_STEP autoreset);
   the mean reward a step of every rollout is the learning curve, written
   as ``reports/train_detumble/learning_curve.html``.
2. The trained policy as the controller of an attsim Mission (1U CubeSat,
   magnetorquers of 0.068 A m², the task's rotating 30 µT field, one orbit
   of 5,700 s) from ten initial tumbles (seeds 0-9, up to 0.05 rad/s per
   axis), and the same with zero dipole (the baseline); the first run's
   report is written.
3. Prints each run's final rate and whether it is below 0.5 deg/s: the
   policy has learned when it meets that on at least 9 of 10 seeds and the
   baseline does not.

Run: ``python tools/train_detumble.py`` (``--steps`` PPO time steps, default 300,000).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import attsim  # noqa: E402
from attsim.rl import AttitudeEnv, AttitudeVectorEnv  # noqa: E402
from attsim.rl.tasks import FIELD_SCALE_T, rotating_field  # noqa: E402

OUT = ROOT / "reports" / "train_detumble"
GOAL_RAD_S = math.radians(0.5)
ORBIT_S = 5700.0


def sb3_vec_env(num_envs: int, seed: int):
    """The attsim vector environment as a Stable-Baselines3 VecEnv (SB3 resets a finished environment within the
    step and keeps its last observation in ``info["terminal_observation"]``)."""
    from gymnasium.vector import AutoresetMode
    from stable_baselines3.common.vec_env.base_vec_env import VecEnv

    class AttsimVecEnv(VecEnv):
        def __init__(self):
            self.env = AttitudeVectorEnv(num_envs, "detumble", autoreset_mode=AutoresetMode.SAME_STEP)
            super().__init__(num_envs, self.env.single_observation_space, self.env.single_action_space)
            self._seed, self._actions = seed, None

        def reset(self):
            obs, _ = self.env.reset(seed=self._seed)
            self._seed = None
            return obs

        def step_async(self, actions):
            self._actions = actions

        def step_wait(self):
            obs, reward, terminated, truncated, info = self.env.step(self._actions)
            done = terminated | truncated
            infos = [{} for _ in range(num_envs)]
            for i in np.flatnonzero(done):
                infos[i]["terminal_observation"] = info["final_obs"][i]
                infos[i]["TimeLimit.truncated"] = bool(truncated[i] and not terminated[i])
            return obs, reward.astype(np.float32), done, infos

        def close(self):
            pass

        def get_attr(self, attr_name, indices=None):
            return [getattr(self.env, attr_name)] * num_envs

        def set_attr(self, attr_name, value, indices=None):
            setattr(self.env, attr_name, value)

        def env_method(self, method_name, *args, indices=None, **kwargs):
            return [getattr(self.env, method_name)(*args, **kwargs)] * num_envs

        def env_is_wrapped(self, wrapper_class, indices=None):
            return [False] * num_envs

        def seed(self, seed=None):
            self._seed = seed
            return [seed] * num_envs

    return AttsimVecEnv()


def train(steps: int, num_envs: int, seed: int):
    from stable_baselines3 import PPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.vec_env import VecMonitor

    curve = []
    start = time.perf_counter()

    class Curve(BaseCallback):
        def _on_rollout_end(self):
            mean = float(np.mean(self.model.rollout_buffer.rewards))
            curve.append((self.num_timesteps, mean))
            returns = [e["r"] for e in self.model.ep_info_buffer]
            episodes = f", mean episode return {np.mean(returns):8.2f}" if returns else ""
            print(f"  {self.num_timesteps:9d} steps ({time.perf_counter() - start:6.0f} s): mean reward a step "
                  f"{mean:7.4f}{episodes}", flush=True)

        def _on_step(self):
            return True

    env = VecMonitor(sb3_vec_env(num_envs, seed))
    model = PPO("MlpPolicy", env, n_steps=256, batch_size=1024, gamma=0.995, learning_rate=3e-4, seed=seed,
                policy_kwargs=dict(net_arch=[64, 64]), verbose=0)
    model.learn(total_timesteps=steps, callback=Curve())
    return model, curve


def write_curve(curve, path: Path) -> None:
    import plotly.graph_objects as go

    x, y = zip(*curve) if curve else ((), ())
    figure = go.Figure(go.Scatter(x=x, y=y, mode="lines+markers"))
    figure.update_layout(title="PPO on attsim/Detumble-v0: mean reward a step in each rollout",
                         xaxis_title="environment steps", yaxis_title="mean reward a step (-|ω|/0.05 rad/s - action)")
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.write_html(path, include_plotlyjs=True)


def fly(policy, seed: int, out_dir: Path, report: bool) -> float:
    """The policy (or zero dipole, ``policy=None``) as the controller of a one-orbit Mission from the tumble the
    environment draws for ``seed``; returns the final rate (rad/s)."""
    env = AttitudeEnv("detumble")
    env.reset(seed=seed)
    task = env.task
    mission = attsim.Mission(f"detumble_policy_{seed}", np.diag(task.inertia), omega0=env.ensemble.omega_rad_s[0],
                             q0=env.ensemble.q[0], duration=ORBIT_S, max_step=task.max_step, telemetry_dt=10.0,
                             field=rotating_field, out_dir=out_dir)
    gyro = mission.add(attsim.Gyro(1.0 / task.period_s, name="gyro"))
    mag = mission.add(attsim.Magnetometer(1.0 / task.period_s, name="mag"))
    mtq = mission.add(attsim.Magnetorquer(task.dipole_max_Am2))

    def law(t, readings):
        obs = np.concatenate([readings["gyro"] / task.rate_scale_rad_s, readings["mag"] / FIELD_SCALE_T])
        if policy is None:
            return {mtq.name: np.zeros(3)}
        action, _ = policy.predict(obs.astype(np.float32), deterministic=True)
        return {mtq.name: np.clip(action, -1.0, 1.0) * task.dipole_max_Am2}

    mission.add(attsim.FunctionController(law, task.period_s, sensors=[gyro, mag], actuators=[mtq], name="policy"))
    tel = mission.run(backend="interpreted")
    if report:
        attsim.report(tel)
    return float(np.linalg.norm(tel.df[["wx", "wy", "wz"]].iloc[-1]))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300_000, help="PPO time steps")
    parser.add_argument("--envs", type=int, default=64, help="environments stepped together")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    print(f"Training PPO on attsim/Detumble-v0: {args.steps:,} steps, {args.envs} environments")
    model, curve = train(args.steps, args.envs, args.seed)
    write_curve(curve, OUT / "learning_curve.html")
    print(f"learning curve: {OUT / 'learning_curve.html'}")
    passed = baseline_passed = 0
    for seed in range(10):
        final = fly(model, seed, OUT / f"policy_{seed}", report=seed == 0)
        zero = fly(None, seed, OUT / f"baseline_{seed}", report=False)
        passed += final < GOAL_RAD_S
        baseline_passed += zero < GOAL_RAD_S
        print(f"  seed {seed}: policy {math.degrees(final):7.3f} deg/s, zero dipole {math.degrees(zero):7.3f} deg/s "
              f"after one orbit ({'meets' if final < GOAL_RAD_S else 'misses'} 0.5 deg/s)")
    learned = passed >= 9 and passed > baseline_passed
    print(f"policy below 0.5 deg/s after one orbit on {passed}/10 seeds (zero dipole: {baseline_passed}/10): "
          f"{'LEARNED' if learned else 'NOT LEARNED'}; report of seed 0: {OUT / 'policy_0' / 'report.html'}")
    return 0 if learned else 1


if __name__ == "__main__":
    sys.exit(main())
