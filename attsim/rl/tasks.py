"""The attitude-control tasks of :mod:`attsim.rl`: each an ensemble, its actions, observations, reward and end.

A task works on a whole :class:`~attsim.Ensemble` at once (numpy on its
arrays, one row per environment), so the single environment and the vector
environment share every line of it.

Actions are in ``[-1, 1]`` per component and scaled to the actuator's limit:
wheel motor torque ``a max_torque_Nm``, magnetorquer dipole
``a dipole_max_Am2``. The commands are held for one control period.

Observations (float32, one vector, in the order of ``observation``):

``attitude``   the attitude error to the target, ``q_err = q_target* ⊗ q_IB``:
               as MRPs (3, shadow set: ``|σ| <= 1``; default) or as a
               quaternion with ``w >= 0`` (4) with ``attitude="quaternion"``
``rate``       body rate over ``rate_scale_rad_s`` (3)
``wheels``     wheel speeds over their limits (one per wheel)
``field``      the field in body axes over 5e-5 T (3)

With ``measured=True`` the rate is a gyro's and the field a magnetometer's
(white noise ``gyro_arw_rad_sqrt_s``, ``magnetometer_noise_T``, sampled every
control period); otherwise they are the true values.

Rewards (per step; ``weights`` override the defaults of each task)::

    r = -( w_attitude θ/π + w_rate |ω|/rate_scale + w_momentum |h_w|/h_max + w_action |a|²/len(a) )

with ``θ`` the attitude error angle, ``h_w`` the wheels' momentum in body
axes and ``h_max`` the wheels' largest. A step ends (``terminated``) when a
task has a goal and reaches it (detumble: ``|ω| < rate_goal_rad_s``); every
episode is cut (``truncated``) after ``episode_steps`` steps.
"""

from __future__ import annotations

import dataclasses
import functools
import math

import numpy as np

from .._core.validate import number_in, one_of, positive_int, positive_scalar, unit_quaternion, unit_vector
from ..actuators.devices import Magnetorquer, ReactionWheel
from ..ensemble import Ensemble
from ..sensors.devices import Gyro, Magnetometer
from ..errors import InputError
from . import kernels

__all__ = ["Task", "TASKS", "task", "OBSERVATIONS", "OBSERVATION_BOUNDS", "FIELD_SCALE_T", "rotating_field"]

OBSERVATIONS = ("attitude", "rate", "wheels", "field")
# the observation space's bounds of each part (scaled units): MRPs of the shadow set and quaternion components lie
# in [-1, 1]; a rate a hundred times its scale or a wheel at twice its limit is far beyond any sound run
OBSERVATION_BOUNDS = {"attitude": 1.0, "rate": 100.0, "wheels": 2.0, "field": 2.0}
FIELD_SCALE_T = 5e-5
# the mean motion of a ~750 km orbit (a period of 5,984 s): the field below turns twice an orbit of this, at
# 2.1e-3 rad/s (tools/train_detumble.py's "orbit" of 5,700 s sees 1.9 turns; docs/guide/reinforcement_learning.md)
_ORBIT_RATE_RAD_S = 1.05e-3


def rotating_field(t):
    """The tasks' magnetic field: 30 µT in the inertial x-z plane turning at 2.1e-3 rad/s (a turn in 2,992 s).

    Parameters
    ----------
    t : float or array_like
        Time since the episode's start (s).

    Returns
    -------
    numpy.ndarray
        The inertial field (T), shape ``(..., 3)``.
    """
    angle = 2.0 * _ORBIT_RATE_RAD_S * np.asarray(t, dtype=float)
    return 3e-5 * np.stack([np.cos(angle), np.zeros_like(angle), np.sin(angle)], axis=-1)


@dataclasses.dataclass(frozen=True)
class Task:
    """One attitude-control task: its spacecraft, actuators, observations, reward and episode.

    Every field but ``name`` may be overridden by keyword
    (``gymnasium.make("attsim/Pointing-v0", period_s=0.2)``, or :func:`task`);
    the defaults are each task's (:data:`TASKS`; the RL guide tabulates them).
    The defaults below are the class's, which a task's entry overrides.

    Attributes
    ----------
    name : str
        The task's name in :data:`TASKS` (``"detumble"``, ``"pointing"``, ``"momentum"``).
    inertia : tuple
        The body's inertia (kg m²): 3 principal moments or a 3×3 tensor (default a 4 kg 3U CubeSat).
    wheel_axes : tuple
        One unit axis (body axes) per reaction wheel; empty: no wheels. An action's first components are the
        wheels' motor torques, in this order.
    wheel_inertia_kg_m2 : float
        Each wheel's rotor inertia about its axis (kg m²).
    wheel_max_torque_Nm : float
        Each wheel's motor torque limit (N m): an action of 1 commands it.
    wheel_max_speed_rad_s : float
        Each wheel's speed limit (rad/s): the wheel observation's scale; the wheels' largest momentum
        ``wheel_inertia_kg_m2 × wheel_max_speed_rad_s`` is the momentum reward's scale.
    dipole_max_Am2 : float
        The magnetorquers' dipole limit per axis (A m²): an action of 1 commands it; 0: no magnetorquers. The
        dipole is the action's last 3 components.
    period_s : float
        The control period (s): an action is held this long, a step is one period.
    max_step : float or None
        The integrator's largest step (s); None: one control period.
    episode_steps : int
        Steps after which every episode is cut (``truncated``); also the environment's
        ``spec.max_episode_steps``. The episode lasts ``episode_steps × period_s`` seconds.
    observation : tuple of str
        The observation's parts, in order (:data:`OBSERVATIONS`; module docstring).
    attitude : str
        How the attitude error is observed: ``"mrp"`` (3) or ``"quaternion"`` (4, ``w >= 0``).
    rate_scale_rad_s : float
        The rate observation's and the rate reward's scale (rad/s).
    weights : tuple of (str, float)
        The reward's weights of ``attitude``, ``rate``, ``momentum`` and ``action`` (module docstring); a dict
        of those to change in :func:`task` and ``gymnasium.make``.
    omega0_max_rad_s : float
        Each initial body-rate component is drawn uniform in ± this (rad/s).
    wheel_speed0_fraction : float
        Each initial wheel speed is drawn uniform in ± this fraction of its limit.
    random_attitude : bool
        The initial attitude is drawn uniform over all rotations (else it is ``target_q``).
    target_q : tuple
        The target attitude ``q_IB`` (scalar first): the attitude error is measured to it. One not of unit
        norm is normalised, with a warning naming it.
    rate_goal_rad_s : float
        The task's goal when > 0: ``|ω|`` below it ends the episode (``terminated``; ``info["is_success"]``).
        0: no goal, episodes end only by ``episode_steps``.
    magnetic_field : bool
        The body is in :func:`rotating_field` (needed by magnetorquers and the ``field`` observation).
    measured : bool
        Observe a gyro's rate and a magnetometer's field (white noise below, sampled every period) instead of
        the true values.
    gyro_arw_rad_sqrt_s : float
        The gyro's angle random walk (rad/√s) with ``measured``.
    magnetometer_noise_T : float
        The magnetometer's white noise (T, 1σ per axis) with ``measured``.
    """

    name: str
    inertia: tuple = (0.042, 0.042, 0.0067)
    wheel_axes: tuple = ()
    wheel_inertia_kg_m2: float = 2.4e-5
    wheel_max_torque_Nm: float = 1e-3
    wheel_max_speed_rad_s: float = 630.0
    dipole_max_Am2: float = 0.0
    period_s: float = 0.1
    max_step: float | None = None
    episode_steps: int = 400
    observation: tuple = ("attitude", "rate", "wheels")
    attitude: str = "mrp"
    rate_scale_rad_s: float = 0.1
    weights: tuple = (("attitude", 1.0), ("rate", 0.1), ("momentum", 0.0), ("action", 0.01))
    omega0_max_rad_s: float = 0.02
    wheel_speed0_fraction: float = 0.0
    random_attitude: bool = True
    target_q: tuple = (1.0, 0.0, 0.0, 0.0)
    rate_goal_rad_s: float = 0.0
    magnetic_field: bool = False
    measured: bool = False
    gyro_arw_rad_sqrt_s: float = 1e-4
    magnetometer_noise_T: float = 1e-7

    def __post_init__(self):
        positive_scalar(self.period_s, "period_s")
        positive_int(self.episode_steps, "episode_steps")
        one_of(self.attitude, "attitude", ("mrp", "quaternion"))
        for name in self.observation:
            one_of(name, "observation", OBSERVATIONS)
        if not self.observation:
            raise InputError("observation", f"must name at least one of {OBSERVATIONS}")
        for name, weight in self.weights:
            one_of(name, "weights", ("attitude", "rate", "momentum", "action"))
            number_in(weight, f"weights[{name!r}]", 0.0, math.inf)
        number_in(self.wheel_speed0_fraction, "wheel_speed0_fraction", 0.0, 1.0)
        if "field" in self.observation and not self.magnetic_field:
            raise InputError("observation", "'field' needs magnetic_field=True")
        if "wheels" in self.observation and not self.wheel_axes:
            raise InputError("observation", "'wheels' needs wheels (wheel_axes)")
        for i, axis in enumerate(self.wheel_axes):
            unit_vector(axis, f"wheel_axes[{i}]")
        # the attitude error is measured to it: normalised as any attitude given (with a warning naming it)
        object.__setattr__(self, "target_q", tuple(float(x) for x in unit_quaternion(self.target_q, "target_q")))
        if self.dipole_max_Am2 > 0.0 and not self.magnetic_field:
            raise InputError("dipole_max_Am2", "magnetorquers need magnetic_field=True")
        if not self.wheel_axes and self.dipole_max_Am2 <= 0.0:
            raise InputError("wheel_axes", "a task needs wheels or magnetorquers (dipole_max_Am2 > 0) to act with")

    # --- the ensemble --------------------------------------------------------

    @property
    def n_wheels(self) -> int:
        return len(self.wheel_axes)

    @property
    def action_size(self) -> int:
        return self.n_wheels + (3 if self.dipole_max_Am2 > 0.0 else 0)

    @property
    def observation_sizes(self) -> dict:
        return {"attitude": 4 if self.attitude == "quaternion" else 3, "rate": 3, "wheels": self.n_wheels,
                "field": 3}

    @property
    def observation_size(self) -> int:
        return sum(self.observation_sizes[name] for name in self.observation)

    def ensemble(self, n: int) -> Ensemble:
        """``n`` bodies of this task's spacecraft (at rest at the target until reset)."""
        wheels = [ReactionWheel(f"rw{j}", axis, self.wheel_inertia_kg_m2, self.wheel_max_torque_Nm,
                                self.wheel_max_speed_rad_s) for j, axis in enumerate(self.wheel_axes)]
        mtq = Magnetorquer(self.dipole_max_Am2) if self.dipole_max_Am2 > 0.0 else None
        sensors = []
        if self.measured:
            sensors = [Gyro(1.0 / self.period_s, arw_rad_sqrt_s=self.gyro_arw_rad_sqrt_s, name="gyro")]
            if self.magnetic_field:
                sensors.append(Magnetometer(1.0 / self.period_s, noise_T=self.magnetometer_noise_T, name="mag"))
        return Ensemble(n, self.inertia, q0=self.target_q, wheels=wheels, magnetorquer=mtq, sensors=sensors,
                        period_s=self.period_s,
                        max_step=self.max_step, field=rotating_field if self.magnetic_field else None,
                        duration=(self.episode_steps + 1) * self.period_s)

    def initial(self, rng: np.random.Generator, m: int) -> dict:
        """Initial states of ``m`` bodies drawn from ``rng``: the keywords of :meth:`Ensemble.reset`."""
        if self.random_attitude:
            q0 = rng.standard_normal((m, 4))  # uniform over rotations: a normalised 4-D Gaussian
            q0 /= np.sqrt(np.sum(q0 * q0, axis=1))[:, None]
        else:
            q0 = np.broadcast_to(np.asarray(self.target_q, dtype=float), (m, 4)).copy()
        omega0 = rng.uniform(-self.omega0_max_rad_s, self.omega0_max_rad_s, (m, 3))
        out = dict(q0=q0, omega0=omega0)
        if self.n_wheels:
            limit = self.wheel_speed0_fraction * self.wheel_max_speed_rad_s
            out["wheel_speed0_rad_s"] = rng.uniform(-limit, limit, (m, self.n_wheels))
        return out

    # --- one step ------------------------------------------------------------
    # compiled over the whole ensemble in one call (attsim.rl.kernels): a step of thousands of environments costs
    # no temporary array per term

    @functools.cached_property
    def _constants(self) -> tuple:
        """The task's observation parts, scales, weights and target as :func:`attsim.rl.kernels.outcomes` takes
        them."""
        codes = {"attitude": kernels.QUATERNION if self.attitude == "quaternion" else kernels.MRP,
                 "rate": kernels.RATE, "wheels": kernels.WHEELS, "field": kernels.FIELD}
        parts = np.array([codes[name] for name in self.observation], dtype=np.int64)
        scales = np.zeros(4)
        scales[kernels.SCALE_RATE], scales[kernels.SCALE_FIELD] = self.rate_scale_rad_s, FIELD_SCALE_T
        scales[kernels.SCALE_MOMENTUM] = self.wheel_inertia_kg_m2 * self.wheel_max_speed_rad_s
        scales[kernels.RATE_GOAL] = max(self.rate_goal_rad_s, 0.0)
        weights = np.zeros(4)
        for name, index in (("attitude", kernels.W_ATTITUDE), ("rate", kernels.W_RATE),
                            ("momentum", kernels.W_MOMENTUM), ("action", kernels.W_ACTION)):
            weights[index] = dict(self.weights)[name]
        return parts, scales, weights, tuple(float(x) for x in self.target_q)

    def commands(self, ensemble: Ensemble, action: np.ndarray) -> tuple:
        """``(wheel torques, dipoles)`` (N m, A m²) of ``action``, each component clipped to [-1, 1] and scaled
        to its actuator's limit."""
        a = np.clip(action, -1.0, 1.0)
        nw = self.n_wheels
        wheels = a[:, :nw] * self.wheel_max_torque_Nm if nw else None
        dipole = a[:, nw:nw + 3] * self.dipole_max_Am2 if self.dipole_max_Am2 > 0.0 else None
        return wheels, dipole

    def error_quaternion(self, ensemble: Ensemble) -> np.ndarray:
        """``q_target* ⊗ q_IB`` of every body, sign chosen so that ``w >= 0`` (the shorter rotation), (n, 4)."""
        out = np.empty((ensemble.n, 4))
        kernels.error_quaternions(ensemble.state, self._constants[3], out)
        return out

    def outcome(self, ensemble: Ensemble, action: np.ndarray) -> tuple:
        """``(observations, rewards, terminated)`` of every body now, after ``action`` (n, action size, in [-1, 1]):
        float32 ``(n, observation size)`` (the parts of :attr:`observation` in order), float ``(n,)``, bool
        ``(n,)`` (module docstring)."""
        readings = ensemble.sample() if self.measured else {}
        gyro = readings.get("gyro", _NO_ROWS)
        field = _NO_ROWS
        if "field" in self.observation:
            field = readings["mag"] if "mag" in readings else ensemble.field_body_T()
        args = self._outcome_args(ensemble, action, gyro, field)
        kernels.outcomes(*args)
        return args[-3:]

    def _outcome_args(self, ensemble: Ensemble, action, gyro, field) -> tuple:
        """The arguments of :func:`attsim.rl.kernels.outcomes`, its outputs (observations, rewards, ends) last."""
        parts, scales, weights, target = self._constants
        n = ensemble.n
        wheels = (ensemble.wheel_h_Nms, ensemble.wheel_inertia_kg_m2, ensemble.wheel_max_speed_rad_s,
                  ensemble.wheel_axes)
        return (ensemble.state, wheels, np.ascontiguousarray(gyro), np.ascontiguousarray(field),
                np.ascontiguousarray(action, dtype=float), target, parts, scales, weights,
                np.empty((n, self.observation_size), np.float32), np.empty(n), np.empty(n, bool))

    @property
    def info_keys(self) -> tuple:
        """The keys of an environment's ``info`` (:meth:`info`): ``t_s`` and ``rate_rad_s`` always,
        ``attitude_error_rad`` when the task observes or rewards the attitude, ``is_success`` when it has a goal."""
        keys = ("t_s", "rate_rad_s")
        if "attitude" in self.observation or dict(self.weights)["attitude"] > 0.0:
            keys += ("attitude_error_rad",)
        return keys + (("is_success",) if self.rate_goal_rad_s > 0.0 else ())

    def info(self, ensemble: Ensemble, terminated: np.ndarray) -> dict:
        """What an environment's ``info`` says of every body now, true values whatever is observed: ``{key: (n,)
        array}`` of :attr:`info_keys` — ``t_s`` the time since the episode's start (s), ``rate_rad_s`` the body
        rate ``|ω|`` (rad/s), ``attitude_error_rad`` the angle to ``target_q`` (rad, in [0, π]), ``is_success``
        whether the goal is reached (``terminated``)."""
        args = self._info_args(ensemble)
        kernels.infos(*args)
        values = dict(zip(("t_s", "rate_rad_s", "attitude_error_rad"), args[-3:]))
        values["is_success"] = np.array(terminated, dtype=bool)
        return {key: values[key] for key in self.info_keys}

    def _info_args(self, ensemble: Ensemble) -> tuple:
        n = ensemble.n
        return (ensemble.state, ensemble.steps, ensemble.period_s, self._constants[3], np.empty(n), np.empty(n),
                np.empty(n))

    def compile(self, ensemble: Ensemble) -> list[str]:
        """Make every compiled function an environment of this task calls ready (:meth:`attsim.Ensemble.compile`:
        said on stderr with the estimate when it compiles, once per machine); returns the names compiled."""
        none = np.zeros((ensemble.n, self.action_size))
        calls = [("rl_outcomes", kernels.outcomes, self._outcome_args(ensemble, none, _NO_ROWS, _NO_ROWS)),
                 ("rl_infos", kernels.infos, self._info_args(ensemble))]
        readers = ("sensors",) if self.measured else ()
        if "field" in self.observation and not (self.measured and self.magnetic_field):
            readers += ("field",)
        return ensemble.compile(calls, readers)


_NO_ROWS = np.empty((0, 3))


_EYE = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0))

TASKS = {
    # B-dot's job: take out the tumble with magnetorquers alone (a 1U CubeSat, 30 µT turning field). A short task:
    # the field turns twice an orbit, so even a tuned damper brings at most ~28 % of tumbles below the goal in
    # 600 s; tools/train_detumble.py trains over one orbit (period_s=10, episode_steps=570, rate_goal_rad_s=0)
    "detumble": Task("detumble", inertia=(1.5e-3, 1.45e-3, 1.48e-3), dipole_max_Am2=0.068, period_s=1.0,
                     max_step=0.1, episode_steps=600, observation=("rate", "field"), omega0_max_rad_s=0.05,
                     random_attitude=True, rate_scale_rad_s=0.05,
                     weights=(("attitude", 0.0), ("rate", 1.0), ("momentum", 0.0), ("action", 0.01)),
                     rate_goal_rad_s=math.radians(0.5), magnetic_field=True),
    # slew from any attitude to an inertial target and hold it with three orthogonal wheels
    "pointing": Task("pointing", wheel_axes=_EYE, period_s=0.1, episode_steps=400),
    # dump the wheels' momentum with magnetorquers while holding the attitude with the wheels
    "momentum": Task("momentum", wheel_axes=_EYE, dipole_max_Am2=0.2, period_s=1.0, max_step=0.1, episode_steps=600,
                     observation=("attitude", "rate", "wheels", "field"), random_attitude=False,
                     omega0_max_rad_s=0.002, wheel_speed0_fraction=0.5,
                     weights=(("attitude", 1.0), ("rate", 0.1), ("momentum", 1.0), ("action", 0.01)),
                     magnetic_field=True),
}


def task(name: str, **overrides) -> Task:
    """The task ``name`` of :data:`TASKS` with ``overrides``.

    Parameters
    ----------
    name : str
        ``"detumble"``, ``"pointing"`` or ``"momentum"``.
    **overrides
        Any :class:`Task` field but ``name`` (``weights`` may be a dict of the weights to change); another
        keyword is an :class:`~attsim.errors.InputError` naming it.
    """
    one_of(name, "task", sorted(TASKS))
    base = TASKS[name]
    fields = {f.name for f in dataclasses.fields(Task)} - {"name"}
    for key in overrides:
        if key == "max_episode_steps":
            raise InputError(key, "is not a setting of an attsim.rl task: its episodes are sized by episode_steps=N")
        if key not in fields:
            raise InputError(key, f"is not a setting of an attsim.rl task (settings: {sorted(fields)})")
    if isinstance(overrides.get("weights"), dict):
        overrides["weights"] = tuple({**dict(base.weights), **overrides["weights"]}.items())
    if isinstance(overrides.get("observation"), str):
        overrides["observation"] = (overrides["observation"],)
    for key in ("observation", "wheel_axes", "inertia", "target_q"):  # hashable, as a frozen dataclass's fields
        if key in overrides and not isinstance(overrides[key], (str, tuple)):
            overrides[key] = tuple(tuple(float(x) for x in v) if np.ndim(v) else v for v in np.asarray(
                overrides[key], dtype=object if key == "observation" else float))
    return dataclasses.replace(base, **overrides)
