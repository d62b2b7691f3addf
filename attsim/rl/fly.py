"""A trained policy flown as an attsim Mission: the same spacecraft, field and start as an episode, with its report.

:func:`policy_mission` builds the :class:`~attsim.Mission` of an
environment's task whose controller is the policy: a gyro, a magnetometer
and a star tracker sampled every control period give the observation the
environment gives (same parts, scales and order), the policy's action is
clipped to [-1, 1] and scaled to the wheels' and magnetorquers' limits, held
for the period. Its start is the environment's current episode's (as
``reset(seed=s)`` or an autoreset began it), so the mission replays that episode in attsim's mission
loop, with its telemetry, criteria and report::

    env = gymnasium.make("attsim/Detumble-v0", period_s=10.0, episode_steps=570, rate_goal_rad_s=0.0)
    env.reset(seed=3)
    mission = policy_mission(env, lambda obs: model.predict(obs, deterministic=True)[0])
    tel = mission.run()
    attsim.report(tel)

Observed parts: ``rate`` (gyro), ``field`` (magnetometer), ``attitude`` (a star
tracker). The ``wheels`` part has no mission sensor (a wheel's speed is not a
reading), so a task observing it is refused by name. With ``measured=True``
the sensors have the task's noise, drawn from the mission's own streams
(``seed``), not the environment's.
"""

from __future__ import annotations

import numpy as np

from ..actuators.devices import Magnetorquer, ReactionWheel
from ..control.base import FunctionController
from ..engine.mission import Mission
from ..errors import InputError
from ..sensors.devices import Gyro, Magnetometer, StarTracker
from .kernels import error_quaternion
from .tasks import FIELD_SCALE_T, Task, rotating_field

__all__ = ["policy_mission", "episode_start"]


def episode_start(env, index: int = 0) -> dict:
    """The start of environment ``index``'s current episode (as its ``reset``, or its autoreset, began it):
    ``q0``, ``omega0`` (rad/s) and ``wheel_speed0_rad_s`` (relative to the body), copies. Refused (InputError)
    before the environment's first ``reset``.

    Parameters
    ----------
    env : attsim.rl.AttitudeEnv or AttitudeVectorEnv
        The environment, wrapped or not (``gymnasium.make``'s wrappers are looked through).
    index : int
        The environment of a vector environment (0 for a single one).
    """
    return (env.unwrapped if hasattr(env, "unwrapped") else env).episode_start(index)


def _observation(task: Task, readings: dict) -> np.ndarray:
    """The environment's observation of ``task`` from a mission cycle's readings (attsim.rl.kernels' formulas)."""
    parts = []
    for name in task.observation:
        if name == "rate":
            parts.append(np.asarray(readings["gyro"]) / task.rate_scale_rad_s)
        elif name == "field":
            parts.append(np.asarray(readings["mag"]) / FIELD_SCALE_T)
        else:
            parts.append(_attitude_error(task, np.asarray(readings["star_tracker"], dtype=float)))
    return np.concatenate(parts).astype(np.float32)


def _attitude_error(task: Task, q: np.ndarray) -> np.ndarray:
    # the environments' own arithmetic (its Python form: the same IEEE operations in the same order, so the same
    # observation to the bit, with no compile for a mission flown in Python)
    e = np.array(error_quaternion.py_func(tuple(q), tuple(task.target_q)))
    return e if task.attitude == "quaternion" else e[1:] / (1.0 + e[0])


def policy_mission(env, policy, *, index: int = 0, duration: float | None = None, name: str = "policy",
                   telemetry_dt: float | None = None, seed: int = 0, out_dir=None) -> Mission:
    """The Mission of ``env``'s task flown by ``policy`` from the start of its episode now.

    Parameters
    ----------
    env : attsim.rl.AttitudeEnv or AttitudeVectorEnv
        After ``reset(seed=...)``: its task (spacecraft, actuators, field, period, observation) and
        environment ``index``'s start state (:func:`episode_start`).
    policy : callable
        ``policy(observation) -> action``: the observation as the environment gives it (float32), the action
        in [-1, 1] (clipped), e.g. ``lambda obs: model.predict(obs, deterministic=True)[0]``.
    index : int
        The environment of a vector environment whose episode is flown.
    duration : float or None
        Simulated seconds (default the task's episode, ``episode_steps × period_s``).
    name : str
        The mission's name (its report's title, its directory under ``reports/`` without ``out_dir``).
    telemetry_dt : float or None
        The telemetry's step (s; default the control period).
    seed : int
        The mission's seed (its sensors' noise with ``measured=True``).
    out_dir : str or path or None
        Where the run writes its telemetry and report.

    Returns
    -------
    attsim.Mission
        Ready to ``run()``; its controller is named ``"policy"``.
    """
    task: Task = env.unwrapped.task if hasattr(env, "unwrapped") else env.task
    if "wheels" in task.observation:
        raise InputError("observation", "a mission has no sensor of wheel speeds: fly a policy trained without the "
                         "'wheels' part (observation=('attitude', 'rate'))")
    start = episode_start(env, index)
    period = task.period_s
    mission = Mission(name, np.diag(task.inertia) if np.ndim(task.inertia) == 1 else np.asarray(task.inertia),
                      start["omega0"], start["q0"], duration=task.episode_steps * period if duration is None
                      else duration, max_step=task.max_step or period,
                      telemetry_dt=period if telemetry_dt is None else telemetry_dt, seed=seed, out_dir=out_dir,
                      field=rotating_field if task.magnetic_field else None)
    noisy = task.measured
    sensors = [mission.add(Gyro(1.0 / period, arw_rad_sqrt_s=task.gyro_arw_rad_sqrt_s if noisy else 0.0,
                                name="gyro"))]
    if task.magnetic_field:
        sensors.append(mission.add(Magnetometer(1.0 / period, noise_T=task.magnetometer_noise_T if noisy else 0.0,
                                                name="mag")))
    if "attitude" in task.observation:
        sensors.append(mission.add(StarTracker(1.0 / period, name="star_tracker")))
    wheels = [mission.add(ReactionWheel(f"rw{j}", axis, task.wheel_inertia_kg_m2, task.wheel_max_torque_Nm,
                                        task.wheel_max_speed_rad_s, speed0_rad_s=float(speed)))
              for j, (axis, speed) in enumerate(zip(task.wheel_axes, start["wheel_speed0_rad_s"]))]
    mtq = mission.add(Magnetorquer(task.dipole_max_Am2)) if task.dipole_max_Am2 > 0.0 else None

    def law(t_s, readings):
        a = np.clip(np.asarray(policy(_observation(task, readings)), dtype=float).reshape(-1), -1.0, 1.0)
        commands = {wheel.name: a[j] * task.wheel_max_torque_Nm for j, wheel in enumerate(wheels)}
        if mtq is not None:
            commands[mtq.name] = a[len(wheels):len(wheels) + 3] * task.dipole_max_Am2
        return commands

    actuators = wheels + ([mtq] if mtq is not None else [])
    mission.add(FunctionController(law, period, sensors=sensors, actuators=actuators, name="policy"))
    return mission
