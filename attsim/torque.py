"""Applied body torque in the forms :func:`attsim.propagate` accepts.

``None`` (torque-free), a constant body torque (N m, body axes), or a
callable ``f(t, q, omega) -> torque`` evaluated at every integrator stage,
with ``t`` in s, ``q`` the scalar-first ``q_IB`` and ``omega`` the body
rate in rad/s (both fresh NumPy arrays the callable may keep). Its result
is checked at every call: anything but a finite 3-vector raises
:class:`~attsim.errors.TorqueError` naming the simulation time.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ._core.validate import vector3
from .errors import TorqueError

__all__ = ["TorqueModel"]

_ZERO = (0.0, 0.0, 0.0)
# what float() would read but is no torque: "123" unpacks into "1", "2", "3" and True converts to 1.0
# (a set lookup per component keeps the check at every stage cheap)
_NOT_NUMBERS = frozenset({str, bytes, bool, np.bool_})


@dataclass(frozen=True)
class TorqueModel:
    """A normalised torque specification.

    Attributes
    ----------
    kind : {"none", "constant", "callable"}
    constant_N_m : tuple of 3 floats
        The torque for ``"constant"`` (zeros otherwise).
    function : callable or None
        The user's callable for ``"callable"``.
    """

    kind: str
    constant_N_m: tuple[float, float, float] = _ZERO
    function: Callable | None = None

    @classmethod
    def from_user(cls, torque) -> TorqueModel:
        if torque is None:
            return cls("none")
        if isinstance(torque, TorqueModel):
            return torque
        if callable(torque):
            return cls("callable", function=torque)
        constant = vector3(torque, "torque")
        return cls("constant", constant_N_m=tuple(float(v) for v in constant))

    @property
    def is_zero(self) -> bool:
        return self.kind == "none" or (self.kind == "constant" and self.constant_N_m == _ZERO)

    def stage_function(self) -> Callable:
        """The callable's checked form ``g(t, q_tuple, w_tuple, unused) -> 3-tuple``.

        This is the signature the integrators' stage kernels call; the check
        runs at every evaluation because a callable can go wrong at any time.
        """
        if self.kind != "callable":
            raise TypeError("only a callable torque has a stage function")
        user = self.function
        array, ndarray, isfinite = np.array, np.ndarray, math.isfinite

        def refuse(t, value, rule):
            raise TorqueError("torque", rule, f"at t = {t!r} s it returned {value!r}")

        def checked(t, q, w, _unused):
            # One buffer for q and omega: this runs four times per RK4 step,
            # so every allocation shows in the callable path's speed.
            state = array(q + w)
            value = user(t, state[:4], state[4:])
            try:
                if type(value) is ndarray:
                    if value.shape != (3,) or value.dtype.kind not in "iuf":
                        raise ValueError("not a numeric 3-vector")
                    x, y, z = value.tolist()
                else:
                    x, y, z = value  # a string unpacks too, and a bool converts: both refused below
                if type(x) in _NOT_NUMBERS or type(y) in _NOT_NUMBERS or type(z) in _NOT_NUMBERS:
                    raise TypeError("not numbers")
                x, y, z = float(x), float(y), float(z)
            except (TypeError, ValueError):
                refuse(t, value, "callable must return a 3-vector of numbers (not strings or bools)")
            # the sum is non-finite when any term is (barring overflow, which
            # the exact check below tells apart)
            if not isfinite(x + y + z) and not (isfinite(x) and isfinite(y) and isfinite(z)):
                refuse(t, value, "callable must return finite values")
            return (x, y, z)

        return checked
