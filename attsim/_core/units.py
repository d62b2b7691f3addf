"""Compiled units: functions compiled alone, once per machine, called through pointers with their data by reference.

The compiled mission runs as a small loop that calls *units* (one per
component class, per integrator, per user law) through numba's first-class
function pointers. A unit is compiled for exactly one signature, on its own
(its kernels linked into it, nothing of its callers), and cached on disk, so
a mission compiles only the units it uses, once per machine, and a new
integrator or law compiles its own unit and nothing else.

Every unit receives the run's data as *one pointer* to a named tuple of
banks (:func:`ref` in the caller, :func:`deref` in the unit): passing the
banks by value would copy hundreds of machine words at every call (65 ns
for a bank of 15 arrays on this machine class, against 8 ns by reference;
``python tools/bench_mission.py --only rw`` prints the cost per cycle).

A unit's source is plain Python that also runs without numba
(:mod:`attsim._core.interpret` runs the same units as Python functions, with
:func:`ref` and :func:`deref` as the identity), so the compiled and the
interpreted mission are one code.
"""

from __future__ import annotations

import functools
import hashlib
import os
import threading
import time
import warnings
from collections.abc import Callable
from typing import NamedTuple

from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.core.errors import NumbaExperimentalFeatureWarning
from numba.extending import intrinsic

from .jit import dependency_digest
from .bind import bind_globals
from .fastcall import entry_for_types

__all__ = ["ref", "deref", "as_function", "jit_address", "unit_entry", "pin", "release", "from_address",
           "UNIT_OPTIONS", "Unit",
           "compile_unit", "unit_is_cached", "call_is_cached",
           "CompileRecord", "compile_records"]

# units are called through pointers, with first-class function types (numba calls them experimental; the part
# attsim uses, calling an njit function with a fixed signature through its address, is what they are built on)
warnings.filterwarnings("ignore", category=NumbaExperimentalFeatureWarning)

UNIT_OPTIONS = dict(cache=True, nogil=True, error_model="numpy", _nrt=False)


@intrinsic
def ref(typingctx, value):
    """A pointer to ``value`` (a named tuple of banks), valid for the rest of the calling function."""

    def codegen(context, builder, signature, args):
        return cgutils.alloca_once_value(builder, args[0])

    return types.CPointer(value)(value), codegen


@intrinsic
def deref(typingctx, pointer):
    """The named tuple ``pointer`` points to (:func:`ref`)."""

    def codegen(context, builder, signature, args):
        return builder.load(args[0])

    return pointer.dtype(pointer), codegen


@intrinsic
def as_function(typingctx, address, result, *arguments):
    """The unit at ``address`` (:func:`jit_address`) as a function of arguments of the types of ``arguments``
    returning the type of ``result`` (``as_function(a, 0, pw, t, row)(pw, t, row)``): a call through a pointer.

    Units are handed to the loop as addresses in plain integer arrays, so a
    call of the loop from Python converts no function object (which costs
    numba tens of microseconds for each).
    """
    arguments = arguments[0] if len(arguments) == 1 and isinstance(arguments[0], types.BaseTuple) else arguments
    function_type = types.FunctionType(types.unliteral(result)(*[types.unliteral(a) for a in arguments]))

    def codegen(context, builder, signature, args):
        value = cgutils.create_struct_proxy(function_type)(context, builder)
        pointer = context.get_value_type(types.voidptr)
        value.c_addr = context.get_constant_null(types.voidptr)
        value.py_addr = context.get_constant_null(types.voidptr)
        value.jit_addr = builder.inttoptr(args[0], pointer)
        return value._getvalue()

    return function_type(address, result, types.StarArgTuple(arguments)), codegen


@intrinsic
def pin(typingctx, value):
    """A copy of ``value`` (a named tuple of banks) in memory of its own; returns its address. The arrays in it
    stay the caller's: they must outlive the copy (:func:`release` frees it)."""

    def codegen(context, builder, signature, args):
        llty = context.get_value_type(value)
        malloc = cgutils.get_or_insert_function(builder.module, ir.FunctionType(cgutils.voidptr_t, [cgutils.intp_t]),
                                                "malloc")
        raw = builder.call(malloc, [context.get_constant(types.intp, context.get_abi_sizeof(llty))])
        builder.store(args[0], builder.bitcast(raw, llty.as_pointer()))
        return builder.ptrtoint(raw, cgutils.intp_t)

    return types.intp(value), codegen


@intrinsic
def release(typingctx, address):
    """Free the copy :func:`pin` made at ``address``."""

    def codegen(context, builder, signature, args):
        free = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.VoidType(), [cgutils.voidptr_t]),
                                              "free")
        builder.call(free, [builder.inttoptr(args[0], cgutils.voidptr_t)])
        return context.get_dummy_value()

    return types.none(address), codegen


_FROM_ADDRESS: dict = {}


def from_address(pointer_type):
    """An intrinsic ``f(address) -> pointer_type``: the pinned copy (:func:`pin`) at ``address`` as a pointer the
    units take (made once per pointer type)."""
    # keyed by identity (the type is kept alive beside it, so its id is not reused): hashing a World's type walks
    # all of it, and numba interns types, so an equal type is this very object
    if id(pointer_type) not in _FROM_ADDRESS:
        @intrinsic
        def pointer_at(typingctx, address):
            def codegen(context, builder, signature, args):
                return builder.inttoptr(args[0], context.get_value_type(pointer_type))

            return pointer_type(address), codegen

        _FROM_ADDRESS[id(pointer_type)] = (pointer_type, pointer_at)
    return _FROM_ADDRESS[id(pointer_type)][1]


def jit_address(dispatcher, signature) -> int:
    """The address :func:`as_function` calls ``dispatcher`` compiled for ``signature`` by (numba's calling
    convention, so exceptions inside it reach the caller). The dispatcher must stay alive while it is used."""
    from numba.experimental.function_type import _get_jit_address

    key = (id(dispatcher), _signature_key(signature))
    if key not in _ADDRESSES:
        _ADDRESSES[key] = (dispatcher, signature, _get_jit_address(dispatcher, signature))
    return _ADDRESSES[key][2]


def unit_entry(dispatcher, signature):
    """``dispatcher``'s compiled entry point for ``signature``, called from Python without numba's type dispatch
    (:mod:`attsim._core.fastcall`); kept by identity, as :func:`jit_address` keeps addresses."""
    key = (id(dispatcher), _signature_key(signature))
    if key not in _ENTRIES:
        _ENTRIES[key] = (dispatcher, signature, entry_for_types(dispatcher, signature.args))
    return _ENTRIES[key][2]


# what this process has made ready, by identity: numba interns types, so a signature's types are the same objects
# whenever they are equal (each entry keeps its signature and dispatcher alive, so no id is reused). Looking a
# World's signature up in numba's own tables hashes the whole World type each time: tens of milliseconds a run.
_ADDRESSES: dict[tuple, tuple] = {}
_ENTRIES: dict[tuple, tuple] = {}
_READY: dict[tuple, tuple] = {}


def _signature_key(signature) -> tuple:
    return (id(signature.return_type), tuple(id(a) for a in signature.args))


class CompileRecord(NamedTuple):
    """One unit made ready in this process: its name, whether it was compiled (else loaded) and the wall time."""

    name: str
    compiled: bool
    seconds: float


_RECORDS: list[CompileRecord] = []


def compile_records() -> list[CompileRecord]:
    """The units made ready in this process so far, in order (a run reads the ones it added)."""
    return _RECORDS


class Unit(NamedTuple):
    """A unit's template (plain Python), its name, the compiled globals it is bound with, and a ``tag`` naming
    bound code from outside attsim (a digest of a user's law) in the disk cache."""

    template: Callable
    name: str
    bindings: dict
    tag: str = ""

    def cache_name(self) -> str:
        """The name numba's disk cache keys the unit by: the template, and the code it is bound with (attsim's
        by the digest of its module's dependencies, a user's by ``tag``)."""
        if not self.bindings and not self.tag:
            return self.name
        parts = [self.tag]
        for key in sorted(self.bindings):
            py = getattr(self.bindings[key], "py_func", self.bindings[key])
            source = getattr(getattr(py, "__code__", None), "co_filename", None)
            parts.append(f"{key}={py.__name__}:{dependency_digest(source) if source and _inside(source) else ''}")
        return f"{self.name}_{hashlib.sha256('|'.join(parts).encode()).hexdigest()[:12]}"


@functools.cache
def _inside(source: str) -> bool:
    from .jit import PACKAGE_DIR
    from pathlib import Path

    try:
        return Path(source).resolve().is_relative_to(PACKAGE_DIR)
    except (OSError, ValueError):
        return False


_DISPATCHERS: dict[tuple, object] = {}


def _dispatcher(unit: Unit, options: dict):
    key = (unit.cache_name(), tuple(sorted(options.items())))
    if key not in _DISPATCHERS:
        function = bind_globals(unit.template, unit.cache_name(), **unit.bindings)
        _DISPATCHERS[key] = njit(**{**UNIT_OPTIONS, **options})(function)
    return _DISPATCHERS[key]


def unit_is_cached(unit: Unit, signature, **options) -> bool:
    """True when ``unit`` for ``signature`` is on disk (or already in this process): using it compiles nothing."""
    dispatcher = _dispatcher(unit, options)
    if (id(dispatcher), _signature_key(signature)) in _READY or signature.args in dispatcher.overloads:
        return True
    # the index is keyed by the signature as compile() was given it (return type included), as numba saves it
    return _on_disk(dispatcher, signature)


def call_is_cached(dispatcher, args) -> bool:
    """True when calling the ``njit`` function ``dispatcher`` with ``args`` compiles nothing: it is compiled for
    their types in this process already, or on disk (what :func:`unit_is_cached` tells of a unit)."""
    signature = tuple(dispatcher.typeof_pyval(a) for a in args)
    # a call compiles for the tuple of its arguments' types, and numba's index keys it so
    return signature in dispatcher.overloads or _on_disk(dispatcher, signature)


def _on_disk(dispatcher, signature) -> bool:
    """True when numba's own index of ``dispatcher``'s cache file (what ``load_overload`` reads) holds
    ``signature``."""
    cache = dispatcher._cache
    if cache is None or not hasattr(cache, "_cache_file"):
        return False
    key = cache._index_key(signature, dispatcher.targetctx.codegen())
    name = cache._cache_file._load_index().get(key)
    # the data file too: a full disk left index entries whose data was never written (then compiled unannounced)
    return name is not None and os.path.isfile(cache._cache_file._data_path(name))


# one thread at a time compiles a unit: between "not compiled yet" and disable_compile() another thread would find
# compilation disabled (a dask worker with several threads starting two runs at once)
_COMPILING = threading.RLock()


def compile_unit(unit: Unit, signature, **options):
    """``unit`` compiled (or loaded from the disk cache) for exactly ``signature``; records what it cost. Safe to
    call from several threads at once."""
    with _COMPILING:
        return _compile_unit(unit, signature, options)


def _compile_unit(unit: Unit, signature, options: dict):
    dispatcher = _dispatcher(unit, options)
    ready = (id(dispatcher), _signature_key(signature))
    if ready in _READY:
        return dispatcher
    if signature.args not in dispatcher.overloads:
        start = time.perf_counter()
        misses = sum(dispatcher.stats.cache_misses.values())
        dispatcher.compile(signature)
        compiled = sum(dispatcher.stats.cache_misses.values()) > misses
        _RECORDS.append(CompileRecord(unit.cache_name(), compiled, time.perf_counter() - start))
        # one signature per unit: fixed, so numba hands the unit to its callers as a pointer (a first-class
        # function) rather than as code to compile into them
        dispatcher.disable_compile()
    _READY[ready] = (dispatcher, signature)
    return dispatcher
