"""Moving a problem into principal axes and back, for methods written for a diagonal inertia."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = ["PrincipalFrame"]


class PrincipalFrame:
    """Moves a problem into principal axes and back.

    ``R_BP`` has the principal axes as columns (``inertia.principal_axes``):
    ``q_IP = q_IB ⊗ q_BP``, ``v_P = R_BP^T v_B``.
    """

    def __init__(self, inertia_kg_m2):
        from ..inertia import principal_axes
        from ..rotations import dcm_to_quat

        self.moments, self.R_BP = principal_axes(inertia_kg_m2)
        self.q_BP = dcm_to_quat(self.R_BP)

    def enter(self, q_IB, w_B):
        from ..rotations import quat_multiply

        return quat_multiply(q_IB, self.q_BP), self.R_BP.T @ w_B

    def vector_in(self, v_B):
        return tuple(float(x) for x in self.R_BP.T @ np.asarray(v_B))

    def leave(self, state_P: np.ndarray) -> np.ndarray:
        from ..rotations import quat_conjugate, quat_multiply

        q_IB = quat_multiply(state_P[:, :4], quat_conjugate(self.q_BP))
        return np.column_stack([q_IB, state_P[:, 4:] @ self.R_BP.T])

    def wrap_torque(self, torque_B: Callable) -> Callable:
        """A stage torque in principal axes from one written for body axes."""
        R, q_PB = self.R_BP, tuple(float(x) for x in self.q_BP * np.array([1.0, -1.0, -1.0, -1.0]))
        from ..dynamics import qmul

        def torque_P(t, q_IP, w_P, targs):
            q_IB = qmul(q_IP, q_PB)
            w_B = tuple(float(x) for x in R @ np.asarray(w_P))
            return tuple(float(x) for x in R.T @ np.asarray(torque_B(t, q_IB, w_B, targs)))

        return torque_P
