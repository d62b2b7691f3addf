"""The public names of attsim and where the reference documents each, read from the code.

One source for the reference pages (``docs/_ext/api_pages.py`` writes them at build time) and for the test that
every public name has its entry with its parameters documented (``tests/test_docs.py``, no Sphinx needed).

The public modules are ``attsim`` and those below; a public name is one in a module's ``__all__``. A name exported
by several modules (``attsim.Gyro`` and ``attsim.sensors.Gyro``) is documented once, in the first module of
:data:`PUBLIC_MODULES` that exports it (its *home*); the other pages link there.
"""

from __future__ import annotations

import importlib
import inspect
import re
import types
from typing import NamedTuple

# the reference's pages, in the order a reader meets them; a name's home is the first module here exporting it
PUBLIC_MODULES = (
    "attsim.sensors", "attsim.actuators", "attsim.control", "attsim.modes", "attsim.estimation", "attsim.guidance",
    "attsim.environment", "attsim.rotations", "attsim.inertia", "attsim.dispersions", "attsim.testing", "attsim.cli",
    "attsim.requirements", "attsim.windows", "attsim.campaign", "attsim.allocation", "attsim.analysis", "attsim.errors",
    "attsim.rl", "attsim",
)
SHARED_KINDS = ("class", "exception", "function")


class Entry(NamedTuple):
    """One public name: the module whose ``__all__`` lists it, the name, the object, and its home module."""

    module: str
    name: str
    obj: object
    home: str


def public_names(module_name: str) -> list[str]:
    """The names in ``__all__`` of the module, in order (a module without ``__all__`` is an error)."""
    module = importlib.import_module(module_name)
    names = getattr(module, "__all__", None)
    if names is None:
        raise LookupError(f"{module_name} has no __all__: its public names are not declared")
    return list(dict.fromkeys(names))


def entries() -> list[Entry]:
    """Every public name of every public module, with the module that documents it."""
    homes: dict[int, str] = {}
    result = []
    for module_name in PUBLIC_MODULES:
        module = importlib.import_module(module_name)
        for name in public_names(module_name):
            obj = getattr(module, name)
            # classes and functions are documented once; modules and constants where they are listed
            home = homes.setdefault(id(obj), module_name) if kind(obj) in SHARED_KINDS else module_name
            result.append(Entry(module_name, name, obj, home))
    return result


def kind(obj) -> str:
    """``module``, ``class``, ``exception``, ``function`` or ``data``: how the reference documents the object."""
    if isinstance(obj, types.ModuleType):
        return "module"
    if inspect.isclass(obj):
        return "exception" if issubclass(obj, BaseException) else "class"
    if callable(obj):
        return "function"
    return "data"


# a class's fields may be documented as its Attributes (numpydoc's way for dataclasses and named tuples)
_SECTION = re.compile(r"^(\s*)(Parameters|Other Parameters|Attributes)\s*\n\1-{3,}\s*$", re.M)
_HEADING = re.compile(r"^\s*[A-Z][A-Za-z ]+\s*\n\s*-{3,}\s*$", re.M)


def documented_parameters(doc: str) -> set[str]:
    """The parameter names the docstring's numpydoc ``Parameters``, ``Other Parameters`` and ``Attributes``
    sections name."""
    names: set[str] = set()
    doc = inspect.cleandoc(doc or "")
    for match in _SECTION.finditer(doc):
        body = doc[match.end():]
        end = _HEADING.search(body)
        body = body[:end.start()] if end else body
        indent = len(match.group(1))
        for line in body.splitlines():
            if line.strip() and len(line) - len(line.lstrip()) == indent:
                head = line.strip().split(" : ")[0]
                names.update(n.strip().lstrip("*") for n in head.split(","))
    return names


def signature_parameters(obj) -> list[str]:
    """The parameters a user passes (``self``/``cls`` and a lone ``*`` excluded), or [] without a signature."""
    target = obj.__init__ if inspect.isclass(obj) and not issubclass(obj, tuple) else obj
    if target is object.__init__:
        return []  # a class that takes no arguments of its own (a base class, a model with no settings)
    if inspect.isclass(obj) and issubclass(obj, tuple) and hasattr(obj, "_fields"):
        return list(obj._fields)  # a named tuple: its fields
    try:
        signature = inspect.signature(target)
    except (TypeError, ValueError):
        return []
    return [p.name for p in signature.parameters.values() if p.name not in ("self", "cls")]


def docstring(obj) -> str:
    """The docstring the reference shows for the object: a class's own plus its ``__init__``'s (numpydoc reads
    the constructor's parameters from either)."""
    own = obj.__dict__.get("__doc__") if inspect.isclass(obj) else getattr(obj, "__doc__", None)
    doc = own or ""
    if inspect.isclass(obj) and "__init__" in obj.__dict__:
        doc += "\n\n" + (obj.__init__.__doc__ or "")
    return doc


def problems(entry: Entry) -> list[str]:
    """What the reference would lack for this name: no docstring, or parameters its docstring does not name."""
    what = kind(entry.obj)
    if what == "data" or entry.home != entry.module:
        return []  # constants are documented by their listing; a re-export by its home's entry
    doc = docstring(entry.obj)
    if not doc.strip():
        return [f"{entry.module}.{entry.name}: no docstring"]
    if what == "module":
        return []
    if what == "exception":
        return []  # exceptions take what their docstring's first line says; their arguments are the message's
    undocumented = [p for p in signature_parameters(entry.obj) if p not in documented_parameters(doc)]
    if undocumented and not (inspect.isclass(entry.obj) and issubclass(entry.obj, tuple)):
        return [f"{entry.module}.{entry.name}: parameters without a numpydoc entry: {', '.join(undocumented)}"]
    if undocumented:
        return [f"{entry.module}.{entry.name}: fields without a numpydoc entry: {', '.join(undocumented)}"]
    return []
