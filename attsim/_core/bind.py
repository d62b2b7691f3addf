"""A copy of a function with some of its globals replaced: how attsim binds a template to the kernels it calls."""

from __future__ import annotations

import types
from collections.abc import Callable

__all__ = ["bind_globals"]


def bind_globals(function: Callable, name: str | None = None, **bindings) -> Callable:
    """A copy of ``function`` whose global names in ``bindings`` are replaced.

    With ``name``, the copy also gets that name and qualified name, which is
    what numba's on-disk cache keys a function by.
    """
    copy = types.FunctionType(function.__code__, {**function.__globals__, **bindings}, name or function.__name__,
                              function.__defaults__, function.__closure__)
    copy.__qualname__ = name or function.__qualname__
    return copy
