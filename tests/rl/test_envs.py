"""attsim.rl: every environment passes Gymnasium's checker, the vector environment follows the 1.x conventions
(seeding, NEXT_STEP autoreset, terminated/truncated), its environments are the single environment's, and bad
input is refused by name."""

import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import attsim
import attsim.rl
from attsim.errors import InputError
from attsim.rl import ENV_IDS, AttitudeEnv, AttitudeVectorEnv


@pytest.mark.parametrize("env_id", sorted(ENV_IDS))
def test_every_environment_passes_the_checker_and_makes(env_id):
    env = gymnasium.make(env_id)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the checker's warnings too (bounds, dtypes, seeding)
        check_env(env.unwrapped, skip_render_check=True)
    vector = gymnasium.make_vec(env_id, num_envs=3)
    assert isinstance(vector, AttitudeVectorEnv) and vector.num_envs == 3
    obs, info = vector.reset(seed=4)
    assert obs.shape == (3,) + env.observation_space.shape and obs.dtype == np.float32
    assert vector.observation_space.contains(obs)
    obs, reward, terminated, truncated, info = vector.step(vector.action_space.sample())
    assert reward.shape == terminated.shape == truncated.shape == (3,) and isinstance(info, dict)


def test_a_vector_environment_is_its_single_environments_stepped_together():
    """Environment 0 of a one-environment vector is the single environment: the same draws, the same numbers."""
    single = AttitudeEnv("pointing", episode_steps=5)
    vector = AttitudeVectorEnv(1, "pointing", episode_steps=5)
    obs_s, _ = single.reset(seed=11)
    obs_v, _ = vector.reset(seed=11)
    np.testing.assert_array_equal(obs_v[0], obs_s)
    rng = np.random.default_rng(0)
    for _ in range(5):
        action = rng.uniform(-1, 1, 3).astype(np.float32)
        obs_s, r_s, te_s, tr_s, _ = single.step(action)
        obs_v, r_v, te_v, tr_v, _ = vector.step(action[None, :])
        np.testing.assert_array_equal(obs_v[0], obs_s)
        assert (r_v[0], te_v[0], tr_v[0]) == (r_s, te_s, tr_s)
    assert tr_s  # episode_steps reached: truncated


@pytest.mark.parametrize("num_envs", [1, 3])
def test_environment_i_of_a_vector_runs_as_a_single_environment_seeded_s_plus_i_through_its_autoresets(num_envs):
    # helper-32: environment i's start hung on the number of environments (one draw for all), so evaluating "env 0
    # per seed" ran other tumbles than the single environment's; sensors' noise and later episodes included
    settings = dict(episode_steps=2, measured=True)
    vector = AttitudeVectorEnv(num_envs, "detumble", **settings)
    singles = [AttitudeEnv("detumble", **settings) for _ in range(num_envs)]
    obs_v, _ = vector.reset(seed=7)
    for i, single in enumerate(singles):
        np.testing.assert_array_equal(obs_v[i], single.reset(seed=7 + i)[0])
    rng = np.random.default_rng(0)
    for step in range(3):  # the third step starts each environment's second episode (NEXT_STEP)
        actions = rng.uniform(-1, 1, (num_envs, 3)).astype(np.float32)
        obs_v, *_ = vector.step(actions)
        for i, single in enumerate(singles):
            expected = single.step(actions[i])[0] if step < 2 else single.reset()[0]  # reset(): its generator on
            np.testing.assert_array_equal(obs_v[i], expected)
    np.testing.assert_array_equal(attsim.rl.episode_start(vector, num_envs - 1)["omega0"],
                                  attsim.rl.episode_start(singles[-1])["omega0"])


def test_a_list_of_seeds_seeds_each_environment_and_a_bad_one_is_refused():
    vector = AttitudeVectorEnv(2, "pointing")
    obs, _ = vector.reset(seed=[5, 9])
    np.testing.assert_array_equal(obs[1], AttitudeEnv("pointing").reset(seed=9)[0])
    for seed in ([5], [5, -1], [5, 1.5], -3, "7"):
        with pytest.raises(InputError) as info:
            vector.reset(seed=seed)
        assert info.value.field == "seed"


def test_the_single_environment_refuses_a_bad_seed_by_name_and_takes_the_vector_environments_seeds():
    # attack33rl: the single environment left its seed to Gymnasium (gymnasium.error.Error, no field; True taken as
    # seed 1; numpy ints refused though the vector environment takes them), and the vector environment's reset(seed=
    # numpy.array(3)) raised TypeError
    env, vector = AttitudeEnv("pointing"), AttitudeVectorEnv(2, "pointing")
    for seed in (-1, 1.5, True, "7", [3], np.array(3)):
        for each in (env, vector):
            with pytest.raises(InputError) as info:
                each.reset(seed=seed)
            assert info.value.field == "seed"
    np.testing.assert_array_equal(env.reset(seed=np.int64(4))[0], vector.reset(seed=np.int64(4))[0][0])


def test_a_next_step_autoreset_reports_the_new_episodes_info_as_the_single_environments_reset():
    # attack33rl: the restarted environment's info["is_success"] was forced false with its flags, while the single
    # environment's reset() (and SAME_STEP's first info) says whether the new start is already below the goal
    settings = dict(episode_steps=1, omega0_max_rad_s=1e-4)  # every start is below the goal
    vector, single = AttitudeVectorEnv(1, "detumble", **settings), AttitudeEnv("detumble", **settings)
    vector.reset(seed=0)
    single.reset(seed=0)
    zero = np.zeros((1, 3), np.float32)
    vector.step(zero)
    single.step(zero[0])
    _, reward, terminated, truncated, info = vector.step(zero)  # the restart
    assert not (reward.any() or terminated.any() or truncated.any())
    assert info["is_success"][0] == single.reset()[1]["is_success"] is True


def test_measuring_or_not_starts_from_the_same_state_for_a_seed():
    # helper-32: the sensors' stream seed was drawn before the initial state, so measured=True shifted the tumble
    truth, measured = AttitudeEnv("detumble"), AttitudeEnv("detumble", measured=True)
    truth.reset(seed=0)
    measured.reset(seed=0)
    for key, value in attsim.rl.episode_start(truth).items():
        np.testing.assert_array_equal(attsim.rl.episode_start(measured)[key], value)


def test_no_episode_before_the_first_reset_and_the_start_is_kept_while_it_runs():
    env = AttitudeEnv("pointing")
    with pytest.raises(InputError, match="reset"):
        env.step(np.zeros(3, np.float32))
    with pytest.raises(InputError, match="reset"):
        attsim.rl.episode_start(env)
    with pytest.raises(InputError, match="reset"):
        AttitudeVectorEnv(2, "pointing").step(np.zeros((2, 3), np.float32))
    env.reset(seed=1)
    start = attsim.rl.episode_start(env)
    env.step(np.ones(3, np.float32))
    np.testing.assert_array_equal(attsim.rl.episode_start(env)["omega0"], start["omega0"])  # the start, not now
    with pytest.raises(InputError) as info:
        attsim.rl.episode_start(env, 1)
    assert info.value.field == "index"


def test_a_vector_environments_episode_length_is_asked_by_episode_steps():
    with pytest.raises(InputError, match="episode_steps") as info:
        gymnasium.make_vec("attsim/Pointing-v0", num_envs=2, max_episode_steps=5)
    assert info.value.field == "max_episode_steps"


def test_a_target_not_of_unit_norm_is_normalised_with_a_warning_naming_it():
    with pytest.warns(attsim.AttsimWarning, match="target_q"):
        env = AttitudeEnv("pointing", target_q=(1.0, 1.0, 0.0, 0.0))
    assert env.task.target_q == pytest.approx((0.5**0.5, 0.5**0.5, 0.0, 0.0), abs=1e-15)
    obs, _ = env.reset(seed=2)
    assert env.observation_space.contains(obs)


def test_next_step_autoreset_and_seeding():
    vector = AttitudeVectorEnv(4, "pointing", episode_steps=3)
    first, _ = vector.reset(seed=3)
    again, _ = AttitudeVectorEnv(4, "pointing", episode_steps=3).reset(seed=3)
    np.testing.assert_array_equal(first, again)  # reset(seed=) reproduces the initial states
    zeros = np.zeros((4, 3), np.float32)
    for _ in range(2):
        _, _, _, truncated, _ = vector.step(zeros)
        assert not truncated.any()
    _, _, terminated, truncated, _ = vector.step(zeros)
    assert truncated.all() and not terminated.any()
    obs, reward, terminated, truncated, _ = vector.step(np.ones((4, 3), np.float32))  # ignored: a new episode
    assert not (terminated | truncated).any() and not reward.any()
    assert not vector.ensemble.steps.any()  # each environment restarted at t = 0
    assert not np.array_equal(obs, first)  # from new draws of the environment's generator


def test_detumbling_terminates_at_its_rate_goal():
    env = AttitudeEnv("detumble", omega0_max_rad_s=1e-4)  # starts below 0.5 deg/s
    env.reset(seed=0)
    _, _, terminated, truncated, _ = env.step(np.zeros(3, np.float32))
    assert terminated and not truncated


def test_observations_and_rewards_are_configurable():
    env = AttitudeEnv("pointing", observation=("attitude",), attitude="quaternion",
                      weights={"rate": 0.0, "action": 0.0})
    obs, _ = env.reset(seed=2)
    assert obs.shape == (4,) and obs[0] >= 0.0
    _, reward, _, _, _ = env.step(np.zeros(3, np.float32))
    angle = 2.0 * np.arccos(min(1.0, float(env.task.error_quaternion(env.ensemble)[0, 0])))
    assert reward == pytest.approx(-angle / np.pi, abs=1e-6)


@pytest.mark.parametrize("kwargs, field", [
    (dict(task_name="juggling"), "task"), (dict(period_s=0.0), "period_s"), (dict(observation=("colour",)),
                                                                              "observation"),
    (dict(attitude="euler"), "attitude"), (dict(colour=1), "colour"), (dict(weights={"fun": 1.0}), "weights"),
    (dict(episode_steps=0), "episode_steps"),
    (dict(task_name="detumble", observation=("rate", "wheels")), "observation"),
    (dict(wheel_axes=((1.0, 0.0, 0.0), (0.0, 0.999, 0.0), (0.0, 0.0, 1.0))), "wheel_axes[1]"),
])
def test_bad_settings_are_refused_by_name(kwargs, field):
    with pytest.raises(InputError) as info:
        AttitudeEnv(**kwargs)
    assert info.value.field == field


@pytest.mark.parametrize("action", [np.full(3, np.nan, np.float32), np.array([0.0, np.inf, 0.0]),
                                    np.array([-np.inf, 0.0, 0.0]), np.zeros(4, np.float32), "full", [[1.0], 2.0]])
def test_bad_actions_are_refused_by_name(action):
    env = AttitudeEnv("pointing")
    env.reset(seed=0)
    with pytest.raises(InputError, match="action") as info:
        env.step(action)
    assert "in [-1, 1]" not in str(info.value)  # no range check is implied: values beyond it are clipped
    vector = AttitudeVectorEnv(2, "pointing")
    vector.reset(seed=0)
    with pytest.raises(InputError, match="action"):
        vector.step(np.zeros((3, 3), np.float32))


def test_the_package_registers_its_ids():
    assert set(ENV_IDS) <= set(gymnasium.registry)
    assert attsim.rl.TASKS["pointing"].action_size == 3


def test_measured_observations_come_from_the_sensors_and_reproduce_with_the_seed():
    env = AttitudeEnv("detumble", measured=True, gyro_arw_rad_sqrt_s=1e-3)
    obs, _ = env.reset(seed=5)
    true_rate = env.ensemble.omega_rad_s[0] / env.task.rate_scale_rad_s
    assert not np.array_equal(obs[:3], true_rate.astype(np.float32))  # noisy
    np.testing.assert_allclose(obs[:3], true_rate, atol=0.2)
    again, _ = AttitudeEnv("detumble", measured=True, gyro_arw_rad_sqrt_s=1e-3).reset(seed=5)
    np.testing.assert_array_equal(obs, again)
    vector = AttitudeVectorEnv(2, "detumble", measured=True)
    vector.reset(seed=1)
    vector.step(np.zeros((2, 3), np.float32))


def test_same_step_autoreset_returns_the_new_episode_and_the_final_observation():
    from gymnasium.vector import AutoresetMode

    vector = AttitudeVectorEnv(2, "pointing", episode_steps=2, autoreset_mode=AutoresetMode.SAME_STEP)
    vector.reset(seed=0)
    zeros = np.zeros((2, 3), np.float32)
    vector.step(zeros)
    obs, reward, terminated, truncated, info = vector.step(zeros)
    assert truncated.all() and info["_final_obs"].all()
    assert not np.array_equal(info["final_obs"], obs)
    assert not vector.ensemble.steps.any()  # restarted within the step
    with pytest.raises(InputError, match="autoreset_mode"):
        AttitudeVectorEnv(2, autoreset_mode="sometimes")


@pytest.mark.parametrize("attitude", ["mrp", "quaternion"])
def test_observations_rewards_and_ends_follow_their_definitions(attitude):
    """The compiled per-step arithmetic against the definitions of attsim.rl.tasks, written out in numpy."""
    target = np.array([0.8, 0.2, -0.4, 0.4]) / np.linalg.norm([0.8, 0.2, -0.4, 0.4])
    weights = {"attitude": 0.7, "rate": 0.3, "momentum": 0.5, "action": 0.05}
    vector = AttitudeVectorEnv(6, "momentum", attitude=attitude, target_q=target, weights=weights,
                               random_attitude=True, rate_goal_rad_s=0.01, omega0_max_rad_s=0.02)
    vector.reset(seed=9)
    action = np.random.default_rng(1).uniform(-1.5, 1.5, (6, 6)).astype(np.float32)  # beyond [-1, 1] too
    obs, reward, terminated, _, _ = vector.step(action)
    ens, t = vector.ensemble, vector.task
    q, w = ens.state[:, :4], ens.state[:, 4:]
    tw, tx, ty, tz = target[0], -target[1], -target[2], -target[3]
    e = np.stack([tw * q[:, 0] - tx * q[:, 1] - ty * q[:, 2] - tz * q[:, 3],
                  tw * q[:, 1] + tx * q[:, 0] + ty * q[:, 3] - tz * q[:, 2],
                  tw * q[:, 2] - tx * q[:, 3] + ty * q[:, 0] + tz * q[:, 1],
                  tw * q[:, 3] + tx * q[:, 2] - ty * q[:, 1] + tz * q[:, 0]], axis=1)
    e = np.where(e[:, :1] < 0, -e, e)
    np.testing.assert_array_equal(t.error_quaternion(ens), e)
    attitude_part = e if attitude == "quaternion" else e[:, 1:] / (1.0 + e[:, :1])
    speed = ens.wheel_h_Nms / ens.wheel_inertia_kg_m2 - w @ ens.wheel_axes.T
    expected = np.concatenate([attitude_part, w / t.rate_scale_rad_s, speed / ens.wheel_max_speed_rad_s,
                               ens.field_body_T() / attsim.rl.tasks.FIELD_SCALE_T], axis=1).astype(np.float32)
    np.testing.assert_allclose(obs, expected, rtol=1e-6, atol=1e-7)
    angle = 2.0 * np.arctan2(np.linalg.norm(e[:, 1:], axis=1), e[:, 0])
    h_max = t.wheel_inertia_kg_m2 * t.wheel_max_speed_rad_s
    cost = (weights["attitude"] * angle / np.pi + weights["rate"] * np.linalg.norm(w, axis=1) / t.rate_scale_rad_s
            + weights["momentum"] * np.linalg.norm(ens.wheel_h_Nms @ ens.wheel_axes, axis=1) / h_max
            + weights["action"] * np.mean(np.clip(action, -1, 1).astype(float) ** 2, axis=1))
    np.testing.assert_allclose(reward, -cost, rtol=1e-12)
    np.testing.assert_array_equal(terminated, np.linalg.norm(w, axis=1) < 0.01)


def test_actions_beyond_their_bounds_are_clipped_not_refused():
    """The message and docstrings say so: a Gaussian policy's sample of 3 acts as 1."""
    env, clipped = AttitudeEnv("pointing", episode_steps=2), AttitudeEnv("pointing", episode_steps=2)
    env.reset(seed=1)
    clipped.reset(seed=1)
    obs, reward, *_ = env.step(np.array([3.0, -7.0, 0.5], np.float32))
    obs_c, reward_c, *_ = clipped.step(np.array([1.0, -1.0, 0.5], np.float32))
    np.testing.assert_array_equal(obs, obs_c)
    assert reward == reward_c


def test_info_holds_the_same_physical_values_in_both_environments():
    """t_s, |ω| (rad/s) and is_success (a task with a goal), attitude_error_rad (one that observes the attitude):
    the single environment's scalars are the vector environment's arrays, each with its _key mask."""
    single = AttitudeEnv("detumble", episode_steps=3)
    vector = AttitudeVectorEnv(1, "detumble", episode_steps=3)
    _, info_s = single.reset(seed=2)
    _, info_v = vector.reset(seed=2)
    assert set(info_s) == {"t_s", "rate_rad_s", "is_success"} and info_s["t_s"] == 0.0
    for _ in range(2):
        _, _, terminated, _, info_s = single.step(np.full(3, 0.3, np.float32))
        _, _, _, _, info_v = vector.step(np.full((1, 3), 0.3, np.float32))
        assert set(info_v) == set(info_s) | {f"_{key}" for key in info_s}
        for key, value in info_s.items():
            assert value == info_v[key][0] and info_v[f"_{key}"].all()
        assert isinstance(info_s["rate_rad_s"], float) and isinstance(info_s["is_success"], bool)
        assert info_s["rate_rad_s"] == np.linalg.norm(single.ensemble.omega_rad_s[0])
        assert info_s["is_success"] is terminated
    assert info_s["t_s"] == 2 * single.task.period_s
    pointing = AttitudeEnv("pointing")
    _, info = pointing.reset(seed=0)
    assert set(info) == {"t_s", "rate_rad_s", "attitude_error_rad"}  # no goal: no is_success
    e = pointing.task.error_quaternion(pointing.ensemble)[0]
    assert info["attitude_error_rad"] == pytest.approx(2.0 * np.arctan2(np.linalg.norm(e[1:]), e[0]), abs=1e-15)
    assert "is_success" not in AttitudeEnv("detumble", rate_goal_rad_s=0.0).reset(seed=0)[1]


def test_same_step_autoreset_keeps_the_final_info():
    from gymnasium.vector import AutoresetMode

    vector = AttitudeVectorEnv(2, "detumble", omega0_max_rad_s=1e-4, autoreset_mode=AutoresetMode.SAME_STEP)
    vector.reset(seed=0)
    _, _, terminated, _, info = vector.step(np.zeros((2, 3), np.float32))  # below the goal: done at once
    assert terminated.all() and info["_final_info"].all()
    assert info["final_info"]["is_success"].all() and (info["final_info"]["t_s"] == 1.0).all()
    assert (info["t_s"] == 0.0).all()  # the info returned is the new episode's


@pytest.mark.parametrize("env_id", sorted(ENV_IDS))
def test_the_spec_gives_the_episode_length_the_environment_truncates_at(env_id):
    """spec.max_episode_steps is the task's episode_steps, also when given; no TimeLimit cuts at another."""
    default = attsim.rl.TASKS[ENV_IDS[env_id]].episode_steps
    assert gymnasium.make(env_id).spec.max_episode_steps == default
    assert gymnasium.make_vec(env_id, num_envs=2).spec.max_episode_steps == default
    env = gymnasium.make(env_id, episode_steps=4, omega0_max_rad_s=0.05, rate_goal_rad_s=0.0)
    assert env.spec.max_episode_steps == 4
    wrapper = env
    while wrapper is not wrapper.unwrapped:
        assert not isinstance(wrapper, gymnasium.wrappers.TimeLimit)
        wrapper = wrapper.env
    env.reset(seed=0)
    ends = [env.step(env.action_space.sample() * 0.0)[3] for _ in range(4)]
    assert ends == [False, False, False, True]
    again = gymnasium.make(env.spec)  # re-made from its spec: the same length
    assert again.spec.max_episode_steps == 4 and again.unwrapped.task.episode_steps == 4
    assert gymnasium.make_vec(env_id, num_envs=2, episode_steps=6).spec.max_episode_steps == 6


def test_an_environment_makes_its_code_ready_at_its_first_reset():
    """The first reset compiles (and says so), so that no step compiles silently."""
    env = AttitudeEnv("detumble")
    assert env.ensemble._compiled is None
    env.reset(seed=0)
    assert env.ensemble._compiled is not None
