"""Independent references for the physics tests.

A plain-NumPy right-hand side of Euler's equation and the quaternion
kinematics, integrated by scipy's DOP853 at tight tolerances. It shares no
code with attsim's kernels, so agreement is evidence, not tautology.
"""

import numpy as np
from scipy.integrate import solve_ivp


def rigid_body_rhs(J, torque=None):
    J = np.asarray(J, dtype=float)
    if J.shape == (3,):
        J = np.diag(J)
    Jinv = np.linalg.inv(J)

    def rhs(t, y):
        q, w = y[:4], y[4:]
        tau = np.zeros(3) if torque is None else np.asarray(torque(t, q / np.linalg.norm(q), w), dtype=float)
        w_dot = Jinv @ (tau - np.cross(w, J @ w))
        qw, qv = q[0], q[1:]
        q_dot = 0.5 * np.concatenate([[-qv @ w], qw * w + np.cross(qv, w)])
        return np.concatenate([q_dot, w_dot])

    return rhs


def reference_solution(J, omega0, q0, t_eval, torque=None, tol=1e-13):
    y0 = np.concatenate([np.asarray(q0, float), np.asarray(omega0, float)])
    sol = solve_ivp(rigid_body_rhs(J, torque), (0.0, float(t_eval[-1])), y0, method="DOP853",
                    t_eval=t_eval, rtol=tol, atol=tol)
    assert sol.success
    y = sol.y.T.copy()
    y[:, :4] /= np.linalg.norm(y[:, :4], axis=1, keepdims=True)
    return y
