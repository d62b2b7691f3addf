"""Control: the controller contract and the user's law forms, the built-in laws, modes, wheel-array allocation,
their compiled kernels and their part of the compiled loop."""

from .base import Controller, FunctionController
from .laws import BDot, MagneticPD, MomentumUnloading, QuaternionPD
from .modes import ModeManager
from .mrp_feedback import MRPFeedback
from .numba_law import NumbaController

__all__ = ["Controller", "FunctionController", "BDot", "QuaternionPD", "MagneticPD", "MomentumUnloading",
           "MRPFeedback", "NumbaController", "ModeManager"]
