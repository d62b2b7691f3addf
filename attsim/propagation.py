"""``attsim.propagate``: one rigid body, one integrator, one DataFrame.

This is the thin, validated front of layer 3: it checks every argument,
builds a :class:`~attsim.integrators.base.Problem`, runs the chosen
integrator and wraps the result in a pandas DataFrame indexed by ``t``.
"""

from __future__ import annotations

import pandas as pd

from . import integrators
from ._core.validate import positive_int, positive_scalar, unit_quaternion, vector3
from .errors import GimbalLockError, InputError
from .inertia import check_inertia, check_rate
from .integrators.base import Problem
from .telemetry.schema import STATE_COLUMNS, TIME_INDEX
from .torque import TorqueModel

__all__ = ["propagate", "methods"]

# 2e8 rows of 8 float64 values are 12.8 GB: past that, refuse rather than fail in the allocator
MAX_ROWS = 2e8
# A fixed-step run of more steps than this (about 20 minutes of compiled RK4) is refused up front: a t_end far
# beyond dt is more likely a slip than a wish, and nothing could stop the compiled loop once started.
MAX_STEPS = 1e10


def propagate(
    inertia,
    omega0,
    q0=(1.0, 0.0, 0.0, 0.0),
    t_end: float = 40.0,
    dt: float = 0.01,
    method: str = "rk4",
    torque=None,
    *,
    allow_nonphysical: bool = False,
    record_every: int = 1,
    **options,
) -> pd.DataFrame:
    """Propagate a rigid body's attitude and body rates.

    Solves Euler's equation ``J dω/dt = τ - ω × (J ω)`` with the full inertia
    tensor together with ``dq/dt = ½ q ⊗ (0, ω)`` (Ganapathi 2005; Bhattu
    2019, eq. 28).

    Parameters
    ----------
    inertia : array_like or CompositeBody
        3x3 tensor about the centre of mass in body axes (kg m^2), or its 3
        principal moments, or a :class:`~attsim.inertia.CompositeBody`.
    omega0 : array_like, shape (3,)
        Initial body rate, rad/s.
    q0 : array_like, shape (4,)
        Initial ``q_IB``, scalar first. A non-unit quaternion is normalised
        with a warning; a zero or non-finite one is refused.
    t_end : float
        End time, s (> 0). The run starts at ``t = 0``.
    dt : float
        Step, s, for fixed-step methods; output step for the others. When
        ``t_end`` is not a multiple of ``dt`` the last step is shortened.
    method : str
        An integrator name from :func:`methods`.
    torque : None, array_like (3,), or callable
        ``None``; a constant body torque (N m); or ``f(t, q, omega) -> (3,)``
        evaluated at every integrator stage.
    allow_nonphysical : bool
        Accept principal moments that break the triangle inequality (the
        textbook cases of the seeds). Recorded in ``df.attrs``.
    record_every : int
        Keep every N-th step; the final state is always kept.

    The work is bounded: a fixed-step run of more than :data:`MAX_STEPS`
    steps, or one that would keep more than :data:`MAX_ROWS` rows, is
    refused before it starts, and ``dop853`` stops after
    :data:`~attsim.integrators.dop853.MAX_EVALUATIONS` evaluations of the
    equations of motion, each with an error naming ``t_end``.
    **options
        Method-specific options.

    Returns
    -------
    pandas.DataFrame
        Indexed by ``t`` (s) with columns ``qw qx qy qz wx wy wz``.
        ``df.attrs`` holds the inertia, method, step and flags of the run.

    Raises
    ------
    attsim.AttsimError
        (also a ``ValueError``) naming the field and the rule for bad input;
        :class:`~attsim.errors.TorqueError` when a torque callable returns
        anything but a finite 3-vector, with the simulation time.
    """
    checked = check_inertia(inertia, allow_nonphysical=allow_nonphysical)
    integrator = integrators.get(method)
    problem = Problem(inertia_kg_m2=checked.matrix_kg_m2, q0=unit_quaternion(q0, "q0"),
                      omega0_rad_s=vector3(omega0, "omega0"), t_end_s=positive_scalar(t_end, "t_end"),
                      dt_s=positive_scalar(dt, "dt"), torque=TorqueModel.from_user(torque),
                      record_every=positive_int(record_every, "record_every"), options=options)
    _check_work(integrator, problem)
    try:
        trajectory = integrator.integrate(problem)
    except GimbalLockError as exc:
        exc.partial = _frame(exc.partial, problem, checked, method)
        raise
    return _frame(trajectory, problem, checked, method)


def _check_work(integrator, problem: Problem) -> None:
    """Refuse, before it starts, a run whose options, rate or size make no sense: more rows than memory should
    hold (:data:`MAX_ROWS`), more fixed steps than :data:`MAX_STEPS`."""
    integrator.check_options(problem)
    check_rate(problem.inertia_kg_m2, problem.omega0_rad_s, "omega0")
    rows = problem.t_end_s / problem.dt_s / problem.record_every
    if rows > MAX_ROWS:
        raise InputError("t_end", f"with this dt and record_every would keep about {rows:.3g} rows in memory "
                         f"(limit {MAX_ROWS:.0e})",
                         "raise record_every or dt, or run a Mission, which streams its telemetry to disk")
    steps = problem.t_end_s / problem.dt_s
    if integrator.fixed_step and steps > MAX_STEPS:
        raise InputError("t_end", f"would take about {steps:.3g} steps of dt (limit MAX_STEPS = {MAX_STEPS:.0e})",
                         f"t_end = {problem.t_end_s:g} s, dt = {problem.dt_s:g} s")


def _frame(trajectory, problem: Problem, checked, method: str) -> pd.DataFrame:
    frame = pd.DataFrame(
        trajectory.state,
        index=pd.Index(trajectory.t_s, name=TIME_INDEX),
        columns=list(STATE_COLUMNS),
        copy=False,
    )
    frame.attrs.update(
        method=method,
        dt_s=problem.dt_s,
        t_end_s=problem.t_end_s,
        record_every=problem.record_every,
        torque=problem.torque.kind,
        inertia_kg_m2=checked.matrix_kg_m2.tolist(),
        principal_kg_m2=checked.principal_kg_m2.tolist(),
        nonphysical_inertia=checked.nonphysical,
    )
    return frame


def methods() -> dict[str, str]:
    """``{name: one-line description}`` of the integrators ``propagate`` accepts."""
    return integrators.descriptions()
