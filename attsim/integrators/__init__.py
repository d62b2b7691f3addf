"""Attitude integrators behind one registry.

``REGISTRY`` maps each ``method=`` name of :func:`attsim.propagate` to its
:class:`~attsim.integrators.base.Integrator` subclass; :func:`get` returns
an instance and refuses an unknown name with the list of valid ones.
"""

from __future__ import annotations

from ..errors import InputError
from .base import FixedStepIntegrator, Integrator, Problem, Trajectory
from .dcm import DCM
from .dmv import DMV
from .dop853 import DOP853
from .euler321 import Euler321
from .exact import Exact
from .rk4 import RK4
from .rkmk4 import RKMK4
from .rkn import RKN
from .split_exact import SplitExact
from .splitting import Split2, Split4, Split6

__all__ = ["REGISTRY", "get", "descriptions", "Integrator", "FixedStepIntegrator", "Problem", "Trajectory"]

REGISTRY: dict[str, type[Integrator]] = {
    cls.name: cls for cls in (RK4, RKN, DOP853, Exact, Split2, Split4, Split6, SplitExact, DMV, RKMK4, DCM, Euler321)
}


def get(name: str) -> Integrator:
    """The integrator registered as ``name``."""
    try:
        return REGISTRY[name]()
    except (KeyError, TypeError):
        raise InputError("method", f"must be one of {sorted(REGISTRY)}", f"got {name!r}") from None


def descriptions() -> dict[str, str]:
    """``{name: one-line description}`` of every registered integrator."""
    return {name: cls.description for name, cls in REGISTRY.items()}
