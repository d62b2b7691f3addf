"""``exact``: the closed-form torque-free motion, evaluated at the output times.

No steps and no truncation error: the state at each output time comes from
the constants of the motion (:mod:`.free_body`), so the error is round-off
in the special functions and does not grow with the number of samples.
``dt`` is only the output spacing. That holds arbitrarily close to the
separatrix: a state off it by more than round-off flips (the Dzhanibekov
effect) when the body does, whatever ``1 - k²`` (down to 1e-100).
"""

from __future__ import annotations

import numpy as np

from .._core.jit import njit
from .base import Integrator, PrincipalFrame, Problem, Trajectory, fixed_step_grid
from .free_body import free_body_at, free_body_setup


@njit(cache=True, nogil=True)
def exact_trajectory(q0, m0, moments, times, out):
    """Fill ``out`` (n, 7) with ``q_IP`` and ``ω_P`` at ``times``; principal axes."""
    c = free_body_setup((q0[0], q0[1], q0[2], q0[3]), (m0[0], m0[1], m0[2]), (moments[0], moments[1], moments[2]))
    previous = (q0[0], q0[1], q0[2], q0[3])
    for k in range(times.size):
        q, m = free_body_at(c, times[k])
        # q and -q are one attitude; keep the series continuous
        if q[0] * previous[0] + q[1] * previous[1] + q[2] * previous[2] + q[3] * previous[3] < 0.0:
            q = (-q[0], -q[1], -q[2], -q[3])
        previous = q
        out[k, 0] = q[0]
        out[k, 1] = q[1]
        out[k, 2] = q[2]
        out[k, 3] = q[3]
        out[k, 4] = m[0] / moments[0]
        out[k, 5] = m[1] / moments[1]
        out[k, 6] = m[2] / moments[2]


class Exact(Integrator):
    name = "exact"
    description = ("exact torque-free motion (Jacobi elliptic functions, elliptic integral of the third kind); "
                   "dt = output step")
    order = None
    fixed_step = False
    torque = "none"
    invariants = ("unit quaternion", "H_I", "|H|", "energy", "all to round-off")

    def integrate(self, problem: Problem) -> Trajectory:
        self.check_torque(problem)
        _, _, t_record = fixed_step_grid(problem.t_end_s, problem.dt_s, problem.record_every)
        frame = PrincipalFrame(problem.inertia_kg_m2)
        q0, w0 = frame.enter(problem.q0, problem.omega0_rad_s)
        out = np.empty((t_record.size, 7))
        exact_trajectory(q0, frame.moments * w0, frame.moments, t_record, out)
        return Trajectory(t_s=t_record, state=frame.leave(out))
