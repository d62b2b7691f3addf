"""Attitude integrators behind one registry.

``REGISTRY`` maps each ``method=`` name of :func:`attsim.propagate` to its
:class:`~attsim.integrators.base.Integrator` subclass; :func:`get` returns
an instance and refuses an unknown name with the list of valid ones.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping

from ..errors import InputError
from .base import FixedStepIntegrator, Integrator, Problem, Trajectory
from .dcm import DCM
from .dmv import DMV
from .dop853 import DOP853
from .euler321 import Euler321
from .rk4 import RK4
from .rkmk4 import RKMK4
from .rkn import RKN
from .splitting import Split2, Split4, Split6

__all__ = ["REGISTRY", "get", "descriptions", "Integrator", "FixedStepIntegrator", "Problem", "Trajectory"]

# the closed-form methods link scipy.special's elliptic integrals (importing it is ~0.3 s of every process that
# loads the engine, a campaign's workers among them): their modules load when their class is first asked for.
# Neither runs in a mission (tests/integrators check that each is not mission_ready).
_ON_USE = {"exact": ("exact", "Exact"), "split_exact": ("split_exact", "SplitExact")}


class _Registry(Mapping):
    """``{name: Integrator subclass}`` in the order ``attsim methods`` lists them, from ``entries``: a class, or
    the name of one of :data:`_ON_USE`, whose class is imported when first looked up."""

    def __init__(self, entries) -> None:
        self._loaded = {entry.name: entry for entry in entries if not isinstance(entry, str)}
        self._order = tuple(entry if isinstance(entry, str) else entry.name for entry in entries)

    def __getitem__(self, name: str) -> type[Integrator]:
        if name not in self._loaded and name in _ON_USE:
            module, cls = _ON_USE[name]
            self._loaded[name] = getattr(importlib.import_module(f".{module}", __name__), cls)
        return self._loaded[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._order)

    def __len__(self) -> int:
        return len(self._order)

    def __contains__(self, name) -> bool:  # (Mapping's would look the class up, importing it)
        return name in self._order

    def mission_ready(self) -> tuple[str, ...]:
        """The names of the methods a mission can use (``mission_ready``), without importing the others."""
        return tuple(name for name in self._order if name not in _ON_USE and self[name].mission_ready)


REGISTRY = _Registry((RK4, RKN, DOP853, "exact", Split2, Split4, Split6, "split_exact", DMV, RKMK4, DCM, Euler321))


def get(name: str) -> Integrator:
    """The integrator registered as ``name``."""
    try:
        return REGISTRY[name]()
    except (KeyError, TypeError):
        raise InputError("method", f"must be one of {sorted(REGISTRY)}", f"got {name!r}") from None


def descriptions() -> dict[str, str]:
    """``{name: one-line description}`` of every registered integrator."""
    return {name: cls.description for name, cls in REGISTRY.items()}
