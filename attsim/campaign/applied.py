"""Every dispersed parameter reaches the mission: the check a campaign makes before its first run.

Basilisk users' first complaint about its Monte Carlo framework is
dispersions silently not applied: a parameter is drawn and recorded, but the
simulation never uses it, and the campaign states a pass rate for
variations it never made. A mission script's ``build(out_dir=None,
**params)`` can do the same (it takes ``**params`` and drops one, or names a
parameter and ignores it). :func:`check_applied` catches it by building the
mission, without running it, once with a run's drawn parameters and once
per parameter with only that parameter drawn again (another run's value):
when the two missions are the same, the parameter is not applied.

"The same" is :func:`fingerprint`: a hash of everything the mission object
reaches (its attributes, its components' and environment's, recursively;
numbers exactly, arrays by their bytes; functions by their defaults and
closures). A parameter must therefore reach the mission object, not only a
module global that a component reads while running. A build that is not
reproducible (two builds with the same parameters differ, e.g. it draws its
own unseeded random numbers) cannot be checked this way and is left alone.
"""

from __future__ import annotations

import functools
import hashlib
import types

import numpy as np

from ..dispersions import draw_parameters
from ..errors import InputError

__all__ = ["check_applied", "fingerprint", "BASE_TRIES"]

BASE_TRIES = 8  # runs whose parameters are tried as the base (a rare draw may make build() raise)
_MAX_DEPTH = 40
_MAX_NODES = 200_000  # objects walked at most: a mission holds a few thousand
_SCALARS = (type(None), bool, int, float, complex, str, bytes)
_OPAQUE_MODULES = ("numba", "llvmlite", "simpy", "threading", "_thread", "logging")  # machinery, not configuration


def fingerprint(obj) -> str:
    """A hash of the values ``obj`` reaches (module docstring); equal for equal configurations in one process."""
    digest = hashlib.blake2b(digest_size=20)
    _Walk(digest).visit(obj, 0)
    return digest.hexdigest()


class _Walk:
    def __init__(self, digest):
        self.digest, self.seen, self.nodes = digest, {}, 0

    def put(self, text: str) -> None:
        self.digest.update(text.encode("utf-8", "backslashreplace") + b"\x00")

    def visit(self, obj, depth: int) -> None:
        if isinstance(obj, _SCALARS) or isinstance(obj, np.generic):
            self.put(f"{type(obj).__name__}:{obj!r}")
            return
        if id(obj) in self.seen:  # a shared object or a cycle: its place in the walk, which is deterministic
            self.put(f"seen:{self.seen[id(obj)]}")
            return
        self.nodes += 1
        if depth > _MAX_DEPTH or self.nodes > _MAX_NODES:
            self.put("...")
            return
        self.seen[id(obj)] = self.nodes
        kind = type(obj)
        if isinstance(obj, np.ndarray):
            self.put(f"ndarray:{obj.dtype}:{obj.shape}")
            if obj.dtype.hasobject:
                for item in obj.flat:
                    self.visit(item, depth + 1)
            else:
                self.digest.update(np.ascontiguousarray(obj).tobytes())
        elif isinstance(obj, (list, tuple)):
            self.put(f"{kind.__name__}:{len(obj)}")
            for item in obj:
                self.visit(item, depth + 1)
        elif isinstance(obj, (set, frozenset)):
            self.put(f"set:{sorted(repr(item) for item in obj)}")
        elif isinstance(obj, dict):
            self.put(f"dict:{len(obj)}")
            for key, value in obj.items():
                self.visit(key, depth + 1)
                self.visit(value, depth + 1)
        elif isinstance(obj, (types.ModuleType, type)):
            self.put(f"{kind.__name__}:{getattr(obj, '__qualname__', obj.__name__)}")
        elif isinstance(obj, types.FunctionType):
            self.put(f"function:{obj.__module__}.{obj.__qualname__}")
            cells = tuple(cell.cell_contents for cell in obj.__closure__ or () if _filled(cell))
            for part in (obj.__defaults__, obj.__kwdefaults__, cells):
                self.visit(part, depth + 1)
        elif isinstance(obj, types.MethodType):
            self.put("method")
            self.visit(obj.__func__, depth + 1)
            self.visit(obj.__self__, depth + 1)
        elif isinstance(obj, functools.partial):
            self.put("partial")
            for part in (obj.func, obj.args, obj.keywords):
                self.visit(part, depth + 1)
        elif (kind.__module__ or "").split(".")[0] in _OPAQUE_MODULES:
            self.put(f"opaque:{kind.__module__}.{kind.__qualname__}")
        else:
            self.put(f"object:{kind.__module__}.{kind.__qualname__}")
            attributes = getattr(obj, "__dict__", None)
            if isinstance(attributes, dict):
                self.visit(attributes, depth + 1)
            for slot in _slots(kind):
                if hasattr(obj, slot):
                    self.put(f"slot:{slot}")
                    self.visit(getattr(obj, slot), depth + 1)


def _filled(cell) -> bool:
    try:
        return cell.cell_contents is not _filled  # (any value: the read raises for a cell not assigned yet)
    except ValueError:
        return False


def _slots(kind) -> list[str]:
    names = []
    for klass in kind.__mro__:
        slots = klass.__dict__.get("__slots__", ())
        names += [slots] if isinstance(slots, str) else [s for s in slots if s not in ("__dict__", "__weakref__")]
    return names


def _same(a, b) -> bool:
    try:
        return bool(np.array_equal(np.asarray(a), np.asarray(b)))
    except (TypeError, ValueError):
        return a == b


def check_applied(build_missions, dispersions: dict, seed: int) -> None:
    """Refuse dispersions that ``build`` takes but does not apply (module docstring).

    Parameters
    ----------
    build_missions : callable
        ``params -> list of missions``: the mission script's build with those parameters.
    dispersions : dict
        The campaign's dispersions (checked), by name.
    seed : int
        The campaign's seed: the values tried are its runs' draws.

    Raises
    ------
    InputError
        ``dispersions``: a parameter whose other draw builds the same mission
        (naming each); ``build``: none of the first :data:`BASE_TRIES` runs'
        parameters can be built (the first error).
    """
    if not dispersions:
        return
    draws = [draw_parameters(dispersions, seed, k) for k in range(BASE_TRIES)]
    base, base_print, first_error = None, None, None
    for params in draws:
        try:
            base_print = fingerprint(build_missions(params))
        except Exception as exc:  # noqa: BLE001 - a draw that breaks build() is that run's ERROR, not the campaign's
            first_error = first_error or exc
            continue
        base = params
        break
    if base is None:
        lines = str(first_error).strip().splitlines()
        raise InputError("build", f"must build the mission from some of the first {BASE_TRIES} runs' drawn "
                         "parameters (every run would be an ERROR)",
                         f"{type(first_error).__name__}: {lines[0] if lines else ''}")
    if fingerprint(build_missions(base)) != base_print:
        return  # build() is not reproducible (its own random numbers): equal missions cannot be told apart
    ignored = []
    for name in dispersions:
        other = next((params[name] for params in draws if not _same(params[name], base[name])), None)
        if other is None:
            continue  # every draw gave the same value (a zero spread): nothing to tell
        try:
            changed = fingerprint(build_missions({**base, name: other})) != base_print
        except Exception:  # noqa: BLE001 - the value reached build() and made it raise: applied
            changed = True
        if not changed:
            ignored.append(name)
    if ignored:
        raise InputError("dispersions", "each drawn parameter must change the mission build() returns",
                         f"{', '.join(map(repr, ignored))}: build() takes {'it' if len(ignored) == 1 else 'them'} "
                         "but builds the same mission with another draw (not applied)")
