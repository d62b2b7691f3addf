"""``dop853``: scipy's adaptive Dormand-Prince 8(5,3) on the 7-state.

A general-purpose reference: error-controlled by ``rtol``/``atol`` instead
of a fixed step, any torque, dense output at the requested times (``dt`` is
the output step). The quaternion is renormalised at the outputs only; in
between it drifts within the tolerance. ``max_step`` (s) bounds the step,
e.g. for a torque with short pulses.
"""

from __future__ import annotations

import math

import numpy as np

from ..dynamics import matrix_to_tuple, rigid_body_derivs
from .._core.validate import real_number
from ..errors import AttsimError, InputError
from .base import Integrator, Problem, Trajectory, fixed_step_grid

# scipy raises tighter requests to 100 machine epsilons with a warning; say so up front
RTOL_RANGE = (100 * np.finfo(float).eps, 0.1)
DEFAULTS = {"rtol": 1e-10, "atol": 1e-12, "max_step": math.inf}
# The solver is stopped after this many evaluations of the equations of motion (about 10 minutes of them in
# Python), naming t_end: its step adapts, so no step count can be refused before the run.
MAX_EVALUATIONS = 5e7
# DOP853 evaluates the right-hand side 12 times a step and cannot resolve more than half a turn in one.
STAGES_PER_STEP = 12


class DOP853(Integrator):
    name = "dop853"
    description = "adaptive Dormand-Prince 8(5,3) via scipy solve_ivp (options rtol, atol, max_step); dt = output step"
    order = 8
    fixed_step = False
    torque = "any"
    options = ("rtol", "atol", "max_step")
    invariants = ()

    def tolerances(self, problem: Problem) -> dict:
        values = {**DEFAULTS, **problem.options}
        rtol, atol, max_step = values["rtol"], values["atol"], values["max_step"]
        rtol, atol, max_step = (real_number(v, k) for v, k in ((rtol, "rtol"), (atol, "atol"), (max_step, "max_step")))
        if not RTOL_RANGE[0] <= rtol <= RTOL_RANGE[1]:
            raise InputError(
                "rtol", f"must be in [{RTOL_RANGE[0]:.2g}, {RTOL_RANGE[1]:g}] for 'dop853'",
                f"got {rtol!r}; below that use method='exact' (torque-free) or 'split6' for round-off-level accuracy",
            )
        if not 0.0 < atol <= 1.0:
            raise InputError("atol", "must be in (0, 1] for 'dop853'", f"got {atol!r}")
        if not max_step > 0.0:
            raise InputError("max_step", "must be > 0 (s)", f"got {max_step!r}")
        return dict(rtol=float(rtol), atol=float(atol), max_step=float(max_step))

    @staticmethod
    def check_work(problem: Problem, max_step_s: float) -> None:
        """Refuse up front a run that needs more than :data:`MAX_EVALUATIONS` evaluations.

        A lower bound on the steps: ``t_end / max_step``, and without torque
        ``t_end |ω|_min / π``, since ``|ω| >= |H| / J_max`` all along the
        free motion and a step turns the body by at most half a revolution.
        """
        steps = problem.t_end_s / max_step_s
        if problem.torque.is_zero:
            momentum = float(np.linalg.norm(problem.inertia_kg_m2 @ problem.omega0_rad_s))
            rate_min = momentum / float(np.linalg.eigvalsh(problem.inertia_kg_m2)[-1])
            steps = max(steps, problem.t_end_s * rate_min / math.pi)
        if steps * STAGES_PER_STEP > MAX_EVALUATIONS:
            raise InputError("t_end", f"needs more than MAX_EVALUATIONS = {MAX_EVALUATIONS:.0e} evaluations of the "
                             "equations of motion with method 'dop853'",
                             f"at least {steps:.3g} steps for t_end = {problem.t_end_s:g} s; shorten t_end")

    def integrate(self, problem: Problem) -> Trajectory:
        from scipy.integrate import solve_ivp

        tolerances = self.tolerances(problem)
        _, _, t_record = fixed_step_grid(problem.t_end_s, problem.dt_s, problem.record_every)
        J = matrix_to_tuple(problem.inertia_kg_m2)
        Jinv = matrix_to_tuple(problem.inertia_inv)
        torque = problem.torque
        stage = torque.stage_function() if torque.kind == "callable" else None
        constant = torque.constant_N_m

        def rhs(t, y):
            q = (y[0], y[1], y[2], y[3])
            w = (y[4], y[5], y[6])
            tau = constant if stage is None else stage(t, q, w, None)
            q_dot, w_dot = rigid_body_derivs(q, w, tau, J, Jinv)
            return np.array(q_dot + w_dot)

        self.check_work(problem, tolerances["max_step"])
        evaluations = [0]

        def counted(t, y):
            evaluations[0] += 1
            if evaluations[0] > MAX_EVALUATIONS:
                raise InputError("t_end", f"needs more than MAX_EVALUATIONS = {MAX_EVALUATIONS:.0e} evaluations of the "
                                 "equations of motion with method 'dop853'",
                                 f"stopped at t = {t:.6g} s of t_end = {problem.t_end_s:g} s; shorten t_end")
            return rhs(t, y)

        y0 = np.concatenate([problem.q0, problem.omega0_rad_s])
        solution = solve_ivp(counted, (0.0, problem.t_end_s), y0, method="DOP853", t_eval=t_record, **tolerances)
        if not solution.success:
            raise AttsimError(f"dop853: the solver stopped at t = {solution.t[-1]:.6g} s: {solution.message}")
        state = solution.y.T.copy()
        state[:, :4] /= np.linalg.norm(state[:, :4], axis=1, keepdims=True)
        return Trajectory(t_s=t_record, state=state)
