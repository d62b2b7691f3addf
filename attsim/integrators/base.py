"""The integrator contract and the fixed-step machinery the methods share.

An :class:`Integrator` advances the rigid-body state

    q_IB   : unit quaternion (w, x, y, z), body to inertial
    omega  : body angular velocity, rad/s, body axes

from ``t = 0`` to ``t_end_s`` under an applied body torque, and returns a
:class:`Trajectory` sampled on the output grid. See :class:`Integrator` for
what each method must declare and guarantee.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from .._core.bind import bind_globals
from .._core.jit import LOOP_INLINED, njit, dependency_digest
from ..dynamics import TUPLE_ARITHMETIC, matrix_to_tuple
from ..errors import InputError
from ..torque import TorqueModel
from .principal_frame import PrincipalFrame

__all__ = ["Problem", "Trajectory", "Integrator", "FixedStepIntegrator", "fixed_step_grid", "stage_torque",
           "bind_globals", "bind_stage_torque", "code_digest", "fixed_step_loop", "advance_loop", "check_solution",
           "PrincipalFrame"]


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
    ``options``
        Names of the method-specific keyword options it accepts.
    ``mission_ready``
        True when the method can drive a mission's plant: a fixed-step
        method with a compiled ``advance`` whose stage torque is the plant's
        (:meth:`FixedStepIntegrator.compiled_advance`) and whose parameters
        in a mission come from :meth:`FixedStepIntegrator.engine_params`.
        Its step calls the stage torque once per stage of the classical RK4
        tableau, in order: the plant integrates wheel states on those stages.

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
    options: ClassVar[tuple[str, ...]] = ()
    mission_ready: ClassVar[bool] = False

    def integrate(self, problem: Problem) -> Trajectory:  # pragma: no cover - abstract
        raise NotImplementedError

    def check_options(self, problem: Problem) -> None:
        """Refuse an option the method does not know, listing the ones it does."""
        unknown = sorted(set(problem.options) - set(self.options))
        if unknown:
            valid = ", ".join(self.options) if self.options else "none"
            raise InputError(unknown[0], f"is not an option of method {self.name!r}", f"its options: {valid}")

    def check_torque(self, problem: Problem) -> None:
        """Refuse a torque this method cannot take, saying what to use."""
        if self.torque == "none" and not problem.torque.is_zero:
            raise InputError(
                "torque",
                f"method {self.name!r} solves torque-free motion only",
                "use 'split_exact' for a weak conservative torque, or 'rk4', 'rkmk4' or 'dop853' for any torque",
            )


def _reaches_stage_torque(function, seen: set) -> bool:
    py = getattr(function, "py_func", function)
    if id(py) in seen:
        return False
    seen.add(id(py))
    for name in py.__code__.co_names:
        if name == "stage_torque":
            return True
        callee = py.__globals__.get(name)
        if hasattr(callee, "py_func") and _reaches_stage_torque(callee, seen):
            return True
    return False


def bind_stage_torque(kernel: Callable, torque: Callable, compile_suffix: str | None = None) -> Callable:
    """Pure-Python copy of ``kernel`` whose stage torques call ``torque``.

    Every compiled helper that reaches ``stage_torque`` (directly or through
    other helpers) is copied the same way, and the tuple arithmetic runs as
    plain Python (cheaper than a dispatcher call); the rest stay compiled.
    The arithmetic is the same either way, so both paths give the same result.

    With ``compile_suffix`` the copies are numba-compiled instead (cached,
    named ``<kernel>__<suffix>``): a compiled kernel with another compiled
    stage torque, e.g. the mission engine's plant torque.
    """
    py = kernel.py_func
    bindings = {}
    for name in py.__code__.co_names:
        callee = py.__globals__.get(name)
        if name == "stage_torque":
            bindings[name] = torque
        elif compile_suffix is None and any(callee is helper for helper in TUPLE_ARITHMETIC):
            bindings[name] = callee.py_func
        elif hasattr(callee, "py_func") and _reaches_stage_torque(callee, set()):
            bindings[name] = bind_stage_torque(callee, torque, compile_suffix)
    if compile_suffix is None:
        return bind_globals(py, **bindings)
    name = f"{py.__name__}__{compile_suffix}"
    return njit(cache=True, nogil=True, **LOOP_INLINED)(bind_globals(py, name, **bindings))


def code_digest(*functions) -> str:
    """A digest of the modules that define ``functions`` (numba dispatchers or functions) and of everything
    they import: what a template bound to them depends on beyond its own module."""
    import hashlib

    digest = hashlib.sha256()
    for function in functions:
        digest.update(dependency_digest(getattr(function, "py_func", function).__code__.co_filename).encode())
    return digest.hexdigest()[:12]


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


def fixed_step_loop(q0, w0, targs, J, Jinv, params, dt, n_steps, last_h, every, out):
    """Run ``n_steps`` of a method and record every ``every``-th state.

    Works through four globals that each method binds (:func:`bind_globals`):
    ``initial_state(q, w, J, params)`` builds the method's own state (a
    tuple: the quaternion and rate for most, a direction-cosine matrix or
    Euler angles for others); ``step(targs, t, h, state, J, Jinv, params)``
    advances it by ``h`` from time ``t``; ``output_state(state, J, params)``
    gives back ``(q, w)``; ``must_stop(state, params)`` is true where the
    method cannot go on (a singular parameterisation).

    Returns ``(rows written to out, steps taken, stopped)``; when
    ``must_stop`` ended the run, its last state is the last row.
    """
    state = initial_state(q0, w0, J, params)  # noqa: F821 - bound per method
    q, w = output_state(state, J, params)  # noqa: F821
    write_row(out, 0, q, w)
    k = 1
    for i in range(n_steps):
        h = dt if i < n_steps - 1 else last_h
        state = step(targs, i * dt, h, state, J, Jinv, params)  # noqa: F821
        stop = must_stop(state, params)  # noqa: F821
        if stop or (i + 1) % every == 0 or i + 1 == n_steps:
            q, w = output_state(state, J, params)  # noqa: F821
            write_row(out, k, q, w)
            k += 1
        if stop:
            return k, i + 1, True
    return k, n_steps, False


def advance_loop(state, t0, t1, max_step, targs, J, Jinv, params):
    """Advance a method's state from ``t0`` to ``t1`` in steps of at most
    ``max_step``, the last one shortened to land on ``t1`` exactly.

    Step ``i`` starts at ``t0 + i max_step`` (by multiplication, so time
    does not accumulate round-off). Returns ``(state, stopped, t_reached)``;
    ``stopped`` is true when the method's ``must_stop`` ended the advance
    early, at ``t_reached`` (otherwise ``t_reached`` is ``t1``).
    """
    span = t1 - t0
    if span <= 0.0:
        return state, False, t1
    ratio = span / max_step
    n = int(ratio)
    if ratio - n > 1e-9 * max(1.0, ratio):
        n += 1
    n = max(n, 1)
    for i in range(n):
        h = max_step if i < n - 1 else span - (n - 1) * max_step
        state = step(targs, t0 + i * max_step, h, state, J, Jinv, params)  # noqa: F821 - bound per method
        if must_stop(state, params):  # noqa: F821
            return state, True, t0 + i * max_step + h
    return state, False, t1


@njit(cache=True, nogil=True)
def write_row(out, k, q, w):
    out[k, 0] = q[0]
    out[k, 1] = q[1]
    out[k, 2] = q[2]
    out[k, 3] = q[3]
    out[k, 4] = w[0]
    out[k, 5] = w[1]
    out[k, 6] = w[2]


@njit(cache=True, nogil=True)
def quaternion_rate_state(q, w, J, params):
    """The state of methods that carry ``(q, w)`` themselves."""
    return (q[0], q[1], q[2], q[3]), (w[0], w[1], w[2])


@njit(cache=True, nogil=True)
def quaternion_rate_output(state, J, params):
    return state


@njit(cache=True, nogil=True)
def quaternion_rate_pack(state, out):
    """A ``(q, w)`` state into the float array ``out`` (a mission keeps the method's state in one array)."""
    q, w = state
    out[0], out[1], out[2], out[3] = q
    out[4], out[5], out[6] = w


@njit(cache=True, nogil=True)
def quaternion_rate_unpack(a):
    """The ``(q, w)`` state :func:`quaternion_rate_pack` wrote."""
    return (a[0], a[1], a[2], a[3]), (a[4], a[5], a[6])


@njit(cache=True, nogil=True)
def never_stop(state, params):
    return False


# A step that turns the body by more than half a revolution cannot resolve the
# motion (the samples alias); a fixed-step result there is meaningless.
MAX_TURN_PER_STEP_RAD = math.pi


@njit(cache=True, nogil=True)
def _solution_extremes(state):
    """One pass over the rows, no temporaries: (all finite, max | |q| - 1 |, max |ω|)."""
    norm_error = 0.0
    max_rate2 = 0.0
    for k in range(state.shape[0]):
        s = state[k]
        q2 = s[0] * s[0] + s[1] * s[1] + s[2] * s[2] + s[3] * s[3]
        w2 = s[4] * s[4] + s[5] * s[5] + s[6] * s[6]
        if not (math.isfinite(q2) and math.isfinite(w2)):
            return False, 0.0, 0.0
        norm_error = max(norm_error, abs(math.sqrt(q2) - 1.0))
        max_rate2 = max(max_rate2, w2)
    return True, norm_error, math.sqrt(max_rate2)


def check_solution(method: str, problem: Problem, state: np.ndarray) -> None:
    """Refuse a fixed-step result that diverged or could not resolve the motion.

    Raises :class:`~attsim.errors.InputError` naming ``dt`` when the state
    holds a non-finite value, a quaternion off unit norm, or a rate that
    turns the body more than half a revolution in one step.
    """
    finite, norm_error, max_rate = _solution_extremes(state)
    if not finite:
        raise InputError("dt", f"is too large: the {method!r} solution diverged (non-finite values)",
                         f"dt = {problem.dt_s:g} s; reduce it")
    if norm_error > 1e-6:
        raise InputError("dt", f"is too large: the {method!r} solution diverged (|q| - 1 reached {norm_error:.2g})",
                         f"dt = {problem.dt_s:g} s; reduce it")
    turn = max_rate * problem.dt_s
    if turn > MAX_TURN_PER_STEP_RAD:
        raise InputError("dt", "must resolve the rotation: |omega| dt must stay below pi (half a turn per step)",
                         f"|omega| dt reached {turn:.3g} rad with dt = {problem.dt_s:g} s")


class FixedStepIntegrator(Integrator):
    """A one-step method: a compiled ``step`` and how to enter and leave its state.

    Subclasses set, as numba-compiled functions with the signatures of
    :func:`fixed_step_loop`'s globals, ``step`` (required) and optionally
    ``initial_state``, ``output_state`` and ``must_stop`` (default: the state
    is ``(q, w)`` and the method never stops). Stage torques come from the
    global ``stage_torque(t, q, w, targs)``.

    The base class wraps them in :func:`fixed_step_loop`, compiled and cached
    on disk under the method's own name for the built-in torques, and runs
    the same source uncompiled with ``stage_torque`` bound to the user's
    checked callable. A method with ``principal_frame = True`` is handed the
    problem in principal axes (diagonal ``J``; ``q_IP``; rates, momenta and
    torques in principal axes) and its output is rotated back to body axes.
    """

    step: ClassVar[Callable]
    initial_state: ClassVar[Callable] = quaternion_rate_state
    output_state: ClassVar[Callable] = quaternion_rate_output
    must_stop: ClassVar[Callable] = never_stop
    pack_state: ClassVar[Callable] = quaternion_rate_pack
    unpack_state: ClassVar[Callable] = quaternion_rate_unpack
    principal_frame: ClassVar[bool] = False
    _compiled_loop: ClassVar[Callable | None] = None

    def params(self, problem: Problem) -> tuple:
        """Method parameters passed to every kernel (a tuple of floats)."""
        return (0.0,)

    @classmethod
    def engine_params(cls) -> tuple:
        """The kernel parameters in a mission, where no per-run options exist (a tuple of floats)."""
        return (0.0,)

    @classmethod
    def _bindings(cls, step) -> dict:
        return dict(
            step=step,
            initial_state=cls.initial_state,
            output_state=cls.output_state,
            must_stop=cls.must_stop,
        )

    @classmethod
    def compiled_loop(cls) -> Callable:
        if cls.__dict__.get("_compiled_loop") is None:
            # numba stamps the disk cache of the loop with this file's dependencies; the method's kernels are in
            # another module, so the loop's name carries their digest too (an edit there compiles afresh)
            name = f"{cls.name}_fixed_step_loop_{code_digest(cls.step)}"
            loop = bind_globals(fixed_step_loop, name, **cls._bindings(cls.step))
            cls._compiled_loop = njit(cache=True, nogil=True)(loop)
        return cls._compiled_loop

    @classmethod
    def compiled_advance(cls, torque: Callable) -> Callable:
        """Compiled :func:`advance_loop` of this method with ``torque`` as its
        stage torque (a numba-compiled ``torque(t, q, w, targs)``), cached."""
        return cls.compiled_template(advance_loop, torque)

    @classmethod
    def compiled_template(cls, template: Callable, torque: Callable, tag: str = "", **extra: Callable) -> Callable:
        """``template`` compiled with this method's kernels, cached per method on disk.

        The template (a plain Python function) calls the method's kernels as
        globals: ``step`` (whose stage torque is ``torque``, a numba-compiled
        ``torque(t, q, w, targs)``), ``must_stop``, ``initial_state`` and
        ``output_state``; ``extra`` binds further compiled globals (e.g. an
        inner loop already compiled for this method). The compiled function
        is named after the method, the template, the torque, ``tag`` (which
        must tell apart different ``extra`` functions, e.g. a digest of a
        user's code) and a digest of the method's and the torque's modules with
        their dependencies, which is what numba's disk cache keys it by. Options: :data:`attsim._core.jit.LOOP_INLINED`.
        """
        key = (template.__module__, template.__name__, torque.__name__, tag, tuple(sorted(extra)))
        compiled = cls.__dict__.get("_compiled_templates")
        if compiled is None:
            compiled = {}
            cls._compiled_templates = compiled
        if key not in compiled:
            suffix = f"{torque.__name__}_{code_digest(cls.step, torque)}"
            step = bind_stage_torque(cls.step, torque, compile_suffix=suffix)
            name = f"{cls.name}_{template.__name__}_{tag + '_' if tag else ''}{suffix}"
            bindings = dict(cls._bindings(step), **extra)
            compiled[key] = njit(cache=True, nogil=True, **LOOP_INLINED)(bind_globals(template, name, **bindings))
        return compiled[key]

    @classmethod
    def python_loop(cls, torque: Callable) -> Callable:
        return bind_globals(fixed_step_loop, **cls._bindings(bind_stage_torque(cls.step, torque)))

    def integrate(self, problem: Problem) -> Trajectory:
        self.check_torque(problem)
        n_steps, last_h, t_record = fixed_step_grid(problem.t_end_s, problem.dt_s, problem.record_every)
        frame = PrincipalFrame(problem.inertia_kg_m2) if self.principal_frame else None
        J_matrix = problem.inertia_kg_m2 if frame is None else np.diag(frame.moments)
        q0, w0 = (problem.q0, problem.omega0_rad_s) if frame is None else frame.enter(problem.q0, problem.omega0_rad_s)
        out = np.empty((t_record.size, 7))
        if problem.torque.kind == "callable":
            torque = problem.torque.stage_function()
            loop = self.python_loop(torque if frame is None else frame.wrap_torque(torque))
            targs = None
        else:
            loop = self.compiled_loop()
            targs = problem.torque.constant_N_m if frame is None else frame.vector_in(problem.torque.constant_N_m)
        rows, steps, stopped = loop(q0, w0, targs, matrix_to_tuple(J_matrix), matrix_to_tuple(np.linalg.inv(J_matrix)),
                                    self.params(problem), problem.dt_s, n_steps, last_h, problem.record_every, out)
        if frame is not None:
            out[:rows] = frame.leave(out[:rows])
        if stopped:
            t_stop = problem.t_end_s if steps == n_steps else steps * problem.dt_s
            t_done = np.append(t_record[t_record < t_stop], t_stop)
            self.stopped(problem, Trajectory(t_s=t_done, state=out[:rows]))
        check_solution(self.name, problem, out)
        return Trajectory(t_s=t_record, state=out)

    def stopped(self, problem: Problem, partial: Trajectory):  # pragma: no cover - only methods that stop
        """Raise the method's error for a run that ``must_stop`` ended early."""
        raise AssertionError(f"{self.name} stopped without saying why")
