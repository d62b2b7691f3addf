"""``attsim.allocation``: a thin re-export of :mod:`attsim.control.allocation` (wheel arrays)."""

from .control.allocation import *  # noqa: F401,F403
from .control.allocation import __all__  # noqa: F401
