"""Calling a compiled kernel from Python without numba's per-call type dispatch.

numba's dispatcher works out the types of every argument at each call; for
named tuples of arrays (the plant's inputs, the wheel bank) that costs
microseconds, more than the kernel itself. The Python path of a mission
calls a few kernels every cycle with arguments whose types never change,
so it compiles (or loads from the disk cache) the one signature once and
calls its entry point directly.
"""

from __future__ import annotations

from collections.abc import Callable

from numba import typeof

__all__ = ["entry_point", "entry_for_types"]


def entry_point(dispatcher, *example) -> Callable:
    """The compiled ``dispatcher`` for the argument types of ``example`` (which is not run)."""
    return entry_for_types(dispatcher, tuple(typeof(arg) for arg in example))


def entry_for_types(dispatcher, args: tuple) -> Callable:
    """The compiled ``dispatcher`` for the numba types ``args``: the overload made already (a unit compiled for its
    one signature takes no other), else compiled now."""
    compiled = dispatcher.overloads.get(args)
    return compiled.entry_point if compiled is not None else dispatcher.compile(args)
