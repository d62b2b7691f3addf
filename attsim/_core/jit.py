"""numba's ``njit`` for attsim, with a disk cache invalidated by what a function depends on.

numba's own cache checks only the source file a function is defined in, but
a compiled function carries the code of everything it calls: after an edit
of ``estimation/kernels.py`` alone, a cached unit that calls the filter would
go on running the old filter. attsim's compiled functions are stamped instead
with :func:`dependency_digest` of their module: a digest of that module's
source and of every attsim module it imports, directly or through others
(imports inside functions included). An edit recompiles the functions that
can reach the edited code, and only those. Functions outside the package (a
user's ``NumbaController`` law, tools, tests) keep numba's own rule. A cache
directory chosen with ``NUMBA_CACHE_DIR`` is respected.

Every compiled module imports ``njit`` from here, so the rule is in place
before the first function is decorated.

Kernels that run every cycle add :data:`LOOP_INLINED` to their options,
those that run more rarely :data:`LOOP_CALLED`. The compiled mission runs in
units (:mod:`attsim._core.units`), each compiled alone; inside a unit LLVM
inlines the first kind (``forceinline``), so no bank of arrays is passed
through a call, and neither kind counts references (``_nrt=False``: an
atomic increment and decrement for every array taken out of a bank would
cost more than the arithmetic). Without reference counting a kernel may only
use arrays its caller keeps alive for the whole call and must not allocate
one (it does not compile if it does); a function that must allocate (a
user's law) sets ``_nrt=True`` itself.
"""

from __future__ import annotations

import ast
import hashlib
import os
from pathlib import Path

from numba import config, njit
from numba.core import caching

__all__ = ["njit", "JIT", "LOOP_INLINED", "LOOP_CALLED", "dependency_digest", "cache_root"]

PACKAGE_DIR = Path(__file__).resolve().parents[1]
# the options of attsim's kernels: cached on disk, no GIL (campaign workers run threads), numpy's float semantics
# (a division by zero gives inf or NaN, which the callers check, rather than raising inside compiled code)
JIT = dict(cache=True, nogil=True, error_model="numpy")
# added to the options of the kernels the compiled units run (module docstring)
LOOP_INLINED = {"forceinline": True, "_nrt": False}
LOOP_CALLED = {"forceinline": False, "_nrt": False}

_IMPORTS: dict[Path, tuple[Path, ...]] = {}
_DIGESTS: dict[Path, str] = {}


def _module_file(dotted: list[str]) -> Path | None:
    """The source file of the attsim module ``dotted`` (relative to the package), or None when there is none."""
    base = PACKAGE_DIR.joinpath(*dotted)
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate.resolve()
    return None


_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")  # the fields of a node that hold statements


def _import_statements(tree: ast.Module):
    """The import statements of ``tree`` at any depth (functions, classes, branches, ``try``, ``with``, ``match``).

    An import is a statement, so only statement lists are walked: the expressions, most of a module's nodes, are
    never visited (``ast.walk`` over them cost more than the parse)."""
    stack: list = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
            continue
        for field in _BLOCKS:
            block = getattr(node, field, None)
            if isinstance(block, list):
                stack.extend(block)


def _imports(path: Path) -> tuple[Path, ...]:
    """The attsim modules ``path`` imports anywhere in its source, with the packages they sit in."""
    if path not in _IMPORTS:
        relative = path.relative_to(PACKAGE_DIR).with_suffix("").parts
        package = list(relative[:-1])
        found: set[Path] = set()
        for node in _import_statements(ast.parse(path.read_bytes())):
            targets: list[list[str]] = []
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package[: len(package) - node.level + 1]
                elif node.module and node.module.split(".")[0] == "attsim":
                    base = []
                else:
                    continue
                module = (node.module or "").split(".") if node.module else []
                if not node.level:
                    module = module[1:]
                targets.append(base + module)
                targets += [base + module + [alias.name] for alias in node.names]  # a name may be a module
            elif isinstance(node, ast.Import):
                targets += [a.name.split(".")[1:] for a in node.names if a.name.split(".")[0] == "attsim"]
            for dotted in targets:
                for k in range(len(dotted) + 1):  # importing a.b runs a's __init__ first
                    file = _module_file(dotted[:k])
                    if file is not None:
                        found.add(file)
        found.discard(path)
        _IMPORTS[path] = tuple(sorted(found))
    return _IMPORTS[path]


def dependency_digest(py_file) -> str:
    """Short digest of the attsim module ``py_file`` and of every attsim module it reaches through imports."""
    path = Path(py_file).resolve()
    if path not in _DIGESTS:
        seen, stack = set(), [path]
        while stack:
            current = stack.pop()
            if current not in seen:
                seen.add(current)
                stack.extend(_imports(current))
        digest = hashlib.sha256()
        for file in sorted(seen):
            digest.update(file.relative_to(PACKAGE_DIR).as_posix().encode())
            digest.update(file.read_bytes())
        _DIGESTS[path] = digest.hexdigest()[:12]
    return _DIGESTS[path]


def cache_root() -> Path:
    """Where attsim's compiled code is cached on this machine: ``NUMBA_CACHE_DIR`` when set, else beside the
    package's sources (numba's own default for a writable tree)."""
    return Path(config.CACHE_DIR) if config.CACHE_DIR else PACKAGE_DIR / "__pycache__"


class _PackageLocator(caching.InTreeCacheLocator):
    """Caches attsim's functions beside their sources (or under ``NUMBA_CACHE_DIR``), stamped with their
    module's dependencies."""

    def __init__(self, py_func, py_file):
        super().__init__(py_func, py_file)
        self._py_file_path = py_file
        if config.CACHE_DIR:
            self._cache_path = os.path.join(config.CACHE_DIR, self.get_suitable_cache_subpath(py_file))

    @classmethod
    def from_function(cls, py_func, py_file):
        try:
            inside = Path(py_file).resolve().is_relative_to(PACKAGE_DIR)
        except (OSError, ValueError):
            return None
        return super().from_function(py_func, py_file) if inside else None

    def get_source_stamp(self):
        return dependency_digest(self._py_file_path)


if _PackageLocator not in caching.CacheImpl._locator_classes:
    caching.CacheImpl._locator_classes.insert(0, _PackageLocator)
