"""Attitude determination (TRIAD, QUEST, the q-method) and estimation (the MEKF): the components, their compiled
kernels and their part of the compiled loop."""

from .determination import (PARALLEL_TOLERANCE, AttitudeSolution, davenport, davenport_kernel, quest, quest_covariance,
                            quest_covariance_kernel, quest_kernel, triad, triad_kernel)
from .mekf import MEKF

__all__ = ["triad", "quest", "davenport", "quest_covariance", "AttitudeSolution", "triad_kernel", "quest_kernel",
           "davenport_kernel", "quest_covariance_kernel", "PARALLEL_TOLERANCE", "MEKF"]
