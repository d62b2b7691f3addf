"""numba's ``njit`` for attsim, with a disk cache that treats the package's sources as one unit (layer 0).

numba's own cache checks only the source file a function is defined in, but
a compiled function carries the code of everything it calls: after an edit
of ``mekf.py`` alone, the cached mission loop (``mission_loop.py``) would go
on running the old filter. attsim's compiled functions are stamped instead
with :func:`package_digest`, a digest of every source file of the package,
so any edit makes every cached attsim function stale and it compiles afresh
(once). Functions outside the package (a user's ``NumbaController`` law,
tools, tests) keep numba's own rule. A cache directory chosen with
``NUMBA_CACHE_DIR`` is respected.

Every compiled module imports ``njit`` from here, so the rule is in place
before the first function is decorated.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from numba import config, njit
from numba.core import caching

__all__ = ["njit", "JIT", "package_digest"]

PACKAGE_DIR = Path(__file__).resolve().parent
# the options of attsim's kernels: cached on disk, no GIL (campaign workers run threads), numpy's float semantics
# (a division by zero gives inf or NaN, which the callers check, rather than raising inside compiled code)
JIT = dict(cache=True, nogil=True, error_model="numpy")

_DIGEST: list = []


def package_digest() -> str:
    """Short digest of attsim's Python sources (read once per process)."""
    if not _DIGEST:
        digest = hashlib.sha256()
        for path in sorted(PACKAGE_DIR.rglob("*.py")):
            digest.update(path.relative_to(PACKAGE_DIR).as_posix().encode())
            digest.update(path.read_bytes())
        _DIGEST.append(digest.hexdigest()[:12])
    return _DIGEST[0]


class _PackageLocator(caching.InTreeCacheLocator):
    """Caches attsim's functions beside their sources (or under ``NUMBA_CACHE_DIR``), stamped with the package."""

    def __init__(self, py_func, py_file):
        super().__init__(py_func, py_file)
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
        return package_digest()


if _PackageLocator not in caching.CacheImpl._locator_classes:
    caching.CacheImpl._locator_classes.insert(0, _PackageLocator)
