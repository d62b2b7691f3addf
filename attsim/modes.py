"""``attsim.modes``: a thin re-export of :mod:`attsim.control.modes` (the mode manager and its conditions)."""

from .control.modes import *  # noqa: F401,F403
from .control.modes import __all__  # noqa: F401
