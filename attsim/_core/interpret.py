"""The interpreted backend: attsim's compiled units run as plain Python, with no compiler at all.

Every unit and kernel of the compiled mission is ordinary Python that
numba compiles; :func:`interpret` gives the same function as Python, its
calls to other compiled functions turned into calls of their Python twins
(made the same way, once each) and the pointer intrinsics
(:func:`~attsim._core.units.ref`, :func:`~attsim._core.units.deref`) into
the identity. The arithmetic is the same operations on the same IEEE doubles,
so a mission run interpreted gives the compiled run's telemetry to the bit
(``tests/engine/test_backends.py``), at a hundred times the cost per cycle
and no compile time: what a short run on a fresh machine uses.
"""

from __future__ import annotations

import types
from collections.abc import Callable

from numba.core.registry import CPUDispatcher

from .units import Unit, as_function, deref, ref

__all__ = ["interpret", "interpret_unit", "FUNCTIONS"]

_TWINS: dict[int, Callable] = {}
# the interpreted backend's "addresses": a unit's address is its index here (:func:`~attsim._core.units.as_function`)
FUNCTIONS: list[Callable] = []


def _identity(value):
    return value


def _function_at(address, result, *arguments):
    return FUNCTIONS[address]


_INTRINSICS = {id(ref): _identity, id(deref): _identity, id(as_function): _function_at}


def _names(code) -> set:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _names(const)
    return names


def interpret(function, **bindings) -> Callable:
    """``function`` (a numba dispatcher or a plain template) as plain Python, with ``bindings`` for its globals
    and every compiled function it calls replaced by its interpreted twin."""
    py = getattr(function, "py_func", function)
    key = id(py) if not bindings else None
    if key is not None and key in _TWINS:
        return _TWINS[key]
    globals_ = dict(py.__globals__)
    for name in _names(py.__code__):
        if name in bindings:
            globals_[name] = _twin(bindings[name])
        elif name in globals_:
            globals_[name] = _twin(globals_[name])
    twin = types.FunctionType(py.__code__, globals_, py.__name__, py.__defaults__, py.__closure__)
    twin.__qualname__ = py.__qualname__
    if key is not None:
        _TWINS[key] = twin
    return twin


def _twin(value):
    if id(value) in _INTRINSICS:
        return _INTRINSICS[id(value)]
    if isinstance(value, CPUDispatcher):
        return interpret(value)
    return value


def interpret_unit(unit: Unit) -> Callable:
    """A unit as plain Python: its template with its bindings, interpreted."""
    return interpret(unit.template, **unit.bindings)
