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

The kernels of the compiled mission loop add :data:`LOOP_INLINED` or
:data:`LOOP_CALLED` to their options. A bank of the loop
(:mod:`attsim.mission_banks`) is a named tuple of arrays, and numba handles
an array as a struct of seven to nine machine words with a reference count.
With numba's defaults the loop spent most of a cycle on two things that are
not arithmetic: passing banks to the kernels it calls (hundreds of words
copied per call) and counting references (an atomic increment and decrement
for every array taken out of a bank or passed on).
``python tools/bench_mission.py --only rw`` prints the time per cycle.

* :data:`LOOP_INLINED`, for a kernel the loop runs every cycle (or every
  instant): LLVM inlines it into its caller (``forceinline``), so no bank
  is passed through a call, and it counts no references (``_nrt=False``).
* :data:`LOOP_CALLED`, for one it runs more rarely (an event, an estimator
  update, a mode check): a call, without reference counts. Inlining those
  would only make the loop slower to compile.

Without reference counting a kernel may only use arrays its caller keeps
alive for the whole call (the banks, the plant's inputs), and must not
allocate one: a kernel that would does not compile ("NRT required but not
enabled"). numba hands both options down to the functions it compiles for
such a kernel unless they set their own, so a function the loop calls that
must allocate (the MEKF's, a user's law) sets ``_nrt=True`` itself.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from numba import config, njit
from numba.core import caching

__all__ = ["njit", "JIT", "LOOP_INLINED", "LOOP_CALLED", "package_digest"]

PACKAGE_DIR = Path(__file__).resolve().parent
# the options of attsim's kernels: cached on disk, no GIL (campaign workers run threads), numpy's float semantics
# (a division by zero gives inf or NaN, which the callers check, rather than raising inside compiled code)
JIT = dict(cache=True, nogil=True, error_model="numpy")
# added to the options of the compiled mission loop's kernels (module docstring)
LOOP_INLINED = {"forceinline": True, "_nrt": False}
LOOP_CALLED = {"forceinline": False, "_nrt": False}

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
