"""The integrator contract and the fixed-step machinery the methods share.

An :class:`Integrator` advances the rigid-body state

    q_IB   : unit quaternion (w, x, y, z), body to inertial
    omega  : body angular velocity, rad/s, body axes

from ``t = 0`` to ``t_end_s`` under an applied body torque, and returns a
:class:`Trajectory` sampled on the output grid. See :class:`Integrator` for
what each method must declare and guarantee.
"""

from __future__ import annotations

import functools
import hashlib
import math
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, ClassVar

import numpy as np
from numba import njit

from ..dynamics import matrix_to_tuple
from ..errors import InputError
from ..torque import TorqueModel

__all__ = ["Problem", "Trajectory", "Integrator", "FixedStepIntegrator", "fixed_step_grid", "stage_torque", "bind_globals", "fixed_step_loop"]


@dataclass(frozen=True)
class Problem:
    """Everything an integrator needs, already validated and in SI units.

    Attributes
    ----------
    inertia_kg_m2 : ndarray, shape (3, 3)
        Symmetric positive-definite tensor about the centre of mass, body axes.
    q0 : ndarray, shape (4,)
        Initial ``q_IB``, unit norm.
    omega0_rad_s : ndarray, shape (3,)
        Initial body rate.
    t_end_s : float
        End time (> 0); the run starts at 0.
    dt_s : float
        Step for fixed-step methods, output step for the others.
    torque : TorqueModel
        The applied torque.
    record_every : int
        Keep every N-th step of the grid (the final state is always kept).
    options : dict
        Method-specific options (e.g. ``rtol`` for adaptive methods).
    """

    inertia_kg_m2: np.ndarray
    q0: np.ndarray
    omega0_rad_s: np.ndarray
    t_end_s: float
    dt_s: float
    torque: TorqueModel = field(default_factory=lambda: TorqueModel("none"))
    record_every: int = 1
    options: dict = field(default_factory=dict)

    @property
    def inertia_inv(self) -> np.ndarray:
        return np.linalg.inv(self.inertia_kg_m2)


@dataclass(frozen=True)
class Trajectory:
    """Sampled solution.

    ``t_s`` has shape (n,); ``state`` has shape (n, 7) with columns
    ``qw qx qy qz wx wy wz``, kept as one block so a DataFrame can wrap it
    without a copy. ``q`` and ``omega_rad_s`` are views into it.
    """

    t_s: np.ndarray
    state: np.ndarray

    @property
    def q(self) -> np.ndarray:
        return self.state[:, :4]

    @property
    def omega_rad_s(self) -> np.ndarray:
        return self.state[:, 4:]


class Integrator:
    """Base class of the attitude integrators: this docstring is the contract.

    A method is a small subclass that declares, as class attributes,

    ``name``
        Registry key, as passed to ``attsim.propagate(method=...)``.
    ``description``
        One line for ``attsim.methods()``.
    ``order``
        Nominal global order of accuracy in the step (``None`` for exact).
    ``fixed_step``
        True when ``Problem.dt_s`` is the integration step; False when it is
        only the output spacing (adaptive and exact methods).
    ``torque``
        ``"any"`` (every form of :class:`~attsim.torque.TorqueModel`),
        ``"none"`` (torque-free only; a torque is refused with an
        :class:`~attsim.errors.InputError` that suggests another method).
    ``invariants``
        What the method keeps to round-off, e.g. ``("unit quaternion",)``.

    and implements :meth:`integrate`, which must

    * start from ``Problem.q0`` and ``omega0_rad_s`` at ``t = 0`` and return
      samples at ``t = 0, k dt, 2 k dt, ...`` (``k = record_every``) plus the
      final time ``t_end_s`` exactly;
    * evaluate a callable torque at every stage, at the stage's time and
      state, so orientation- and time-dependent torques are honoured;
    * return unit quaternions, never NaN: a method that can fail (e.g. a
      singular parameterisation) raises an :class:`~attsim.errors.AttsimError`
      subclass that says when and why.
    """

    name: ClassVar[str]
    description: ClassVar[str]
    order: ClassVar[int | None]
    fixed_step: ClassVar[bool] = True
    torque: ClassVar[str] = "any"
    invariants: ClassVar[tuple[str, ...]] = ()

    def integrate(self, problem: Problem) -> Trajectory:  # pragma: no cover - abstract
        raise NotImplementedError

    def check_torque(self, problem: Problem) -> None:
        """Refuse a torque this method cannot take, saying what to use."""
        if self.torque == "none" and not problem.torque.is_zero:
            raise InputError(
                "torque",
                f"method {self.name!r} solves torque-free motion only",
                "use 'rk4', 'rkmk4' or 'dop853' for a torque",
            )


def fixed_step_grid(t_end_s: float, dt_s: float, record_every: int) -> tuple[int, float, np.ndarray]:
    """Steps of a fixed-step run and the times it records.

    Returns ``(n_steps, last_step_s, t_record_s)``. All steps are ``dt_s``
    except the last, which is shortened to land exactly on ``t_end_s``
    (a ratio within 1e-9 of a whole number counts as whole, so round-off in
    ``t_end_s / dt_s`` does not add a sliver of a step). Step ``i`` starts at
    ``i * dt_s``, computed by multiplication so time never accumulates error.
    """
    ratio = t_end_s / dt_s
    n_steps = max(1, round(ratio)) if abs(ratio - round(ratio)) <= 1e-9 * max(1.0, ratio) else math.ceil(ratio)
    last_step_s = t_end_s - (n_steps - 1) * dt_s
    kept = np.arange(0, n_steps + 1, record_every)
    if kept[-1] != n_steps:
        kept = np.append(kept, n_steps)
    t_record_s = kept * dt_s
    t_record_s[-1] = t_end_s
    return n_steps, last_step_s, t_record_s


@njit(cache=True, nogil=True)
def stage_torque(t, q, w, torque_N_m):
    """Stage torque of the compiled path: the constant (possibly zero) vector.

    Steps call ``stage_torque(t, q, w, targs)`` as a global; the callable path
    runs the step's Python source with this name bound to the checked user
    callable instead (:func:`bind_globals`), so both paths share one source.
    """
    return torque_N_m


def bind_globals(function: Callable, name: str | None = None, **bindings) -> Callable:
    """A copy of ``function`` whose global names in ``bindings`` are replaced.

    With ``name``, the copy also gets that name and qualified name, which is
    what numba's on-disk cache keys a function by.
    """
    copy = types.FunctionType(function.__code__, {**function.__globals__, **bindings}, name or function.__name__,
                              function.__defaults__, function.__closure__)
    copy.__qualname__ = name or function.__qualname__
    return copy


@functools.lru_cache(maxsize=None)
def package_digest() -> str:
    """Short digest of attsim's Python sources (names the compiled loops)."""
    digest = hashlib.sha256()
    for path in sorted(Path(__file__).resolve().parents[1].rglob("*.py")):
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def fixed_step_loop(q0, w0, targs, J, Jinv, dt, n_steps, last_h, every, out):
    """Run ``n_steps`` of the global ``step`` and record every ``every``-th state.

    ``step(targs, t, h, q, w, J, Jinv) -> (q, w)`` advances one step of
    length ``h`` from time ``t``. Each method gets its own copy of this loop
    with ``step`` bound to its step (:func:`bind_globals`): compiled by numba
    for the built-in torques, plain Python around a user's callable.
    Returns the number of rows written to ``out``.
    """
    q = (q0[0], q0[1], q0[2], q0[3])
    w = (w0[0], w0[1], w0[2])
    out[0, 0] = q[0]
    out[0, 1] = q[1]
    out[0, 2] = q[2]
    out[0, 3] = q[3]
    out[0, 4] = w[0]
    out[0, 5] = w[1]
    out[0, 6] = w[2]
    k = 1
    for i in range(n_steps):
        h = dt if i < n_steps - 1 else last_h
        q, w = step(targs, i * dt, h, q, w, J, Jinv)  # noqa: F821 - bound per method
        if (i + 1) % every == 0 or i + 1 == n_steps:
            out[k, 0] = q[0]
            out[k, 1] = q[1]
            out[k, 2] = q[2]
            out[k, 3] = q[3]
            out[k, 4] = w[0]
            out[k, 5] = w[1]
            out[k, 6] = w[2]
            k += 1
    return k


class FixedStepIntegrator(Integrator):
    """A one-step method given by its compiled ``step``.

    Subclasses set ``step`` to a numba-compiled function
    ``step(targs, t, h, q, w, J, Jinv) -> (q, w)`` that gets each stage's
    torque from the global ``stage_torque(t, q, w, targs)``. The base class
    wraps it in :func:`fixed_step_loop`, compiled and cached on disk under the
    method's own name for the built-in torques, and runs the same source
    uncompiled with ``stage_torque`` bound to the user's checked callable.
    """

    step: ClassVar[Callable]
    _compiled_loop: ClassVar[Callable | None] = None

    @classmethod
    def compiled_loop(cls) -> Callable:
        if cls.__dict__.get("_compiled_loop") is None:
            # numba keys its disk cache by the function's own file, not by the
            # kernels it inlines; naming the loop after a digest of attsim's
            # sources makes any edit to a kernel compile afresh.
            name = f"{cls.name}_fixed_step_loop_{package_digest()}"
            loop = bind_globals(fixed_step_loop, name, step=cls.step)
            cls._compiled_loop = njit(cache=True, nogil=True)(loop)
        return cls._compiled_loop

    @classmethod
    def python_loop(cls, torque: Callable) -> Callable:
        step = bind_globals(cls.step.py_func, stage_torque=torque)
        return bind_globals(fixed_step_loop, step=step)

    def integrate(self, problem: Problem) -> Trajectory:
        self.check_torque(problem)
        n_steps, last_h, t_record = fixed_step_grid(problem.t_end_s, problem.dt_s, problem.record_every)
        out = np.empty((t_record.size, 7))
        J = matrix_to_tuple(problem.inertia_kg_m2)
        Jinv = matrix_to_tuple(problem.inertia_inv)
        if problem.torque.kind == "callable":
            loop = self.python_loop(problem.torque.stage_function())
            targs = None
        else:
            loop = self.compiled_loop()
            targs = problem.torque.constant_N_m
        loop(problem.q0, problem.omega0_rad_s, targs, J, Jinv, problem.dt_s, n_steps, last_h, problem.record_every, out)
        return Trajectory(t_s=t_record, state=out)
