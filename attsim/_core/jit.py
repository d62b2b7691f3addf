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
directory chosen with ``NUMBA_CACHE_DIR`` is respected. A cache file of
attsim's that cannot be read (truncated by a full disk or a kill on a file
system without atomic renames, damaged) is said on stderr, removed and taken
as absent: the function compiles again, rather than every later run failing
on numba's unpickling error. A data file that still unpickles but whose
bytes changed (a flipped bit of machine code made a run hang with no word, or
could make it compute something else) is caught by the SHA-256 digest it is
written with, and taken the same way.

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

import functools
import hashlib
import os
import pickle
import re
import sys
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
_DIGESTS_BY_NAME: dict[str, str] = {}  # as given: resolving the path costs more than a run's loop at times


@functools.cache
def _module_file(dotted: tuple[str, ...]) -> Path | None:
    """The source file of the attsim module ``dotted`` (relative to the package), or None when there is none
    (remembered: every module's imports ask about the same few dozen; PACKAGE_DIR is resolved already)."""
    base = PACKAGE_DIR.joinpath(*dotted)
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


# import statements, read from the source text rather than parsed: parsing every module cost each process that
# imports attsim a second or more; a statement-like line inside a string only adds a dependency (never drops one)
_FROM = re.compile(r"^[ \t]*from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n#;]*)", re.MULTILINE)
_IMPORT = re.compile(r"^[ \t]*import[ \t]+([^\n#;]*)", re.MULTILINE)


def _import_targets(source: str, package: list[str]) -> list[list[str]]:
    """The dotted attsim modules (relative to the package) the import statements of ``source`` may load, for a
    module in ``package``: each ``from`` statement's module and each name it imports (a name may be a module)."""
    source = source.replace("\\\n", " ")  # continued lines as one
    targets: list[list[str]] = []
    for dots, module, names in _FROM.findall(source):
        if dots:
            base = package[: len(package) - len(dots) + 1]
            parts = module.split(".") if module else []
        elif module.split(".")[0] == "attsim":
            base, parts = [], module.split(".")[1:]
        else:
            continue
        targets.append(base + parts)
        for name in names.strip("() \t\n").replace("\n", " ").split(","):
            name = name.split()[0] if name.split() else ""
            if name.isidentifier():
                targets.append(base + parts + [name])
    for names in _IMPORT.findall(source):
        for name in names.split(","):
            dotted = name.split()[0].split(".") if name.split() else []
            if dotted and dotted[0] == "attsim":
                targets.append(dotted[1:])
    return targets


def _imports(path: Path) -> tuple[Path, ...]:
    """The attsim modules ``path`` imports anywhere in its source, with the packages they sit in."""
    if path not in _IMPORTS:
        package = list(path.relative_to(PACKAGE_DIR).with_suffix("").parts[:-1])
        found: set[Path] = set()
        for dotted in _import_targets(_source(path).decode("utf-8"), package):
            for k in range(len(dotted) + 1):  # importing a.b runs a's __init__ first
                file = _module_file(tuple(dotted[:k]))
                if file is not None:
                    found.add(file)
        found.discard(path)
        _IMPORTS[path] = tuple(sorted(found))
    return _IMPORTS[path]


@functools.cache
def _source(path: Path) -> bytes:
    """The bytes of the attsim module at ``path`` (read once: every digest over it reads it)."""
    return path.read_bytes()


def dependency_digest(py_file) -> str:
    """Short digest of the attsim module ``py_file`` and of every attsim module it reaches through imports."""
    if isinstance(py_file, str) and py_file in _DIGESTS_BY_NAME:
        return _DIGESTS_BY_NAME[py_file]
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
            digest.update(_source(file))
        _DIGESTS[path] = digest.hexdigest()[:12]
    if isinstance(py_file, str):
        _DIGESTS_BY_NAME[py_file] = _DIGESTS[path]
    return _DIGESTS[path]


def cache_root() -> Path:
    """Where attsim's compiled code is cached on this machine: ``NUMBA_CACHE_DIR`` when set, else beside the
    package's sources (numba's own default for a writable tree)."""
    return Path(config.CACHE_DIR) if config.CACHE_DIR else PACKAGE_DIR / "__pycache__"


class _PackageLocator(caching.InTreeCacheLocator):
    """Caches attsim's functions beside their sources (or under ``NUMBA_CACHE_DIR``), stamped with their
    module's dependencies."""

    paths: set[str] = set()  # the directories attsim's functions are cached in (what _read_or_remove guards)

    def __init__(self, py_func, py_file):
        super().__init__(py_func, py_file)
        self._py_file_path = py_file
        if config.CACHE_DIR:
            self._cache_path = os.path.join(config.CACHE_DIR, self.get_suitable_cache_subpath(py_file))
        _PackageLocator.paths.add(self._cache_path)

    @classmethod
    def from_function(cls, py_func, py_file):
        try:
            inside = Path(py_file).resolve().is_relative_to(PACKAGE_DIR)
        except (OSError, ValueError):
            return None
        return super().from_function(py_func, py_file) if inside else None

    def get_source_stamp(self):
        return dependency_digest(self._py_file_path)

    _usable: set[str] = set()  # cache directories found writable in this process

    def ensure_cache_path(self):
        # numba checks a directory by creating a temporary file in it for every function it caches: ~300 files and
        # ~30 ms of each process's imports. A directory found writable once is taken as writable after. One that
        # is not is kept all the same (what it holds is read; a save is said, _saved_or_said): refused here, numba
        # went on to its own locators, which cached attsim's code in the package's folder stamped by file times
        # alone, so that an edit of a kernel another module calls left the old code running.
        path = self.get_cache_path()
        if path not in _PackageLocator._usable:
            try:
                super().ensure_cache_path()
            except OSError:
                pass
            _PackageLocator._usable.add(path)


if _PackageLocator not in caching.CacheImpl._locator_classes:
    caching.CacheImpl._locator_classes.insert(0, _PackageLocator)


def _read_or_remove(read, absent):
    """numba's reading of one cache file (``read``), for attsim's files: a file that cannot be unpickled is said,
    removed and taken as ``absent()`` (module docstring); numba's own files are left to numba."""

    @functools.wraps(read)
    def guarded(self, *name):
        try:
            return read(self, *name)
        except FileNotFoundError:
            raise  # a file removed meanwhile: numba's own answer (absent)
        except Exception as error:
            if self._cache_path not in _PackageLocator.paths:
                raise
            path = self._data_path(*name) if name else self._index_path
            if isinstance(error, OSError):  # a directory in its place, a permission
                _say_once(f"attsim: the compiled code cached in {path} could not be read "
                          f"({error.strerror or error}): it compiles again")
                return absent()
            # unpickling damaged bytes raises any kind of error
            unreadable = f"the compiled code cached in {path} could not be read ({type(error).__name__}: {error})"
            try:
                os.unlink(path)
            except OSError as refused:  # not removable: say so rather than claim it (and fail on every run after)
                raise OSError(f"{unreadable}, and cannot be removed ({refused.strerror}): remove it, or set "
                              "NUMBA_CACHE_DIR to a directory of your own") from error
            print(f"attsim: {unreadable}; removed: it compiles again", file=sys.stderr)
            return absent()

    return guarded


_SAID: set[str] = set()


def _say_once(text: str, key: str | None = None) -> None:
    """``text`` on stderr, once per process for its ``key`` (default: the text itself; a unit and its callees meet
    the same cache problem many times)."""
    if (key or text) not in _SAID:
        _SAID.add(key or text)
        print(text, file=sys.stderr, flush=True)


def _reason(error: OSError) -> str:
    """The system's reason and the file it concerns (not numba's temporary name for it)."""
    where = re.sub(r"\.tmp\.[0-9a-f]+$", "", str(error.filename2 or error.filename or ""))
    return (f"{error.strerror}: {where}" if where else error.strerror) if error.strerror else str(error)


def _saved_or_said(save):
    """numba's saving of a compiled function, for attsim's: a cache that cannot be written (a full disk, a
    read-only directory, a directory in a file's place) is said, and the run goes on with the code compiled in
    memory; it failed the run, and the command line then hung with nothing said."""

    @functools.wraps(save)
    def guarded(self, key, data):
        try:
            return save(self, key, data)
        except OSError as error:
            if self._cache_path not in _PackageLocator.paths:
                raise
            _say_once(f"attsim: the compiled code could not be cached ({_reason(error)}): every run compiles it "
                      "again until it can be; free space there, make it writable, or set NUMBA_CACHE_DIR to a "
                      "directory of your own", key=f"not cached: {cache_root()}: {error.strerror}")

    return guarded


# a data file of attsim's: this header, the SHA-256 digest of the pickled payload, the payload (numba's own format)
_FRAME = b"attsim-nbc-sha256\n"
_DIGEST_BYTES = 32


def _digest(cache_file, name: str, payload: bytes) -> bytes:
    """The SHA-256 digest a data file is written with: of its own name (the function and the overload it holds), the
    stamp of the code it was compiled from, and its payload. A whole valid file copied under another function's
    name, or left from older code under a newer index (a process killed between numba's writing of the index and
    of the data), does not match: the wrong function's code ran without a word, writing other columns."""
    digest = hashlib.sha256(name.encode())
    digest.update(b"\0" + str(cache_file._source_stamp).encode() + b"\0")
    digest.update(payload)
    return digest.digest()


def _save_framed(save):
    """numba's writing of a data file, for attsim's files: the payload written after :data:`_FRAME` and its digest
    (module docstring); numba's own files are left to numba."""

    @functools.wraps(save)
    def framed(self, name, data):
        if self._cache_path not in _PackageLocator.paths:
            return save(self, name, data)
        payload = self._dump(data)
        with self._open_for_write(self._data_path(name)) as file:
            file.write(_FRAME + _digest(self, name, payload) + payload)

    return framed


def _load_framed(load):
    """numba's reading of a data file, for attsim's files: refused (``ValueError``, which :func:`_read_or_remove`
    takes as unreadable) unless it has :data:`_FRAME` and its payload has the digest written with it."""

    @functools.wraps(load)
    def checked(self, name):
        if self._cache_path not in _PackageLocator.paths:
            return load(self, name)
        path = self._data_path(name)
        # a link to /dev/zero was read until memory ran out (a directory is refused by open() below)
        if os.path.exists(path) and not os.path.isfile(path) and not os.path.isdir(path):
            raise ValueError("not a regular file")
        with open(path, "rb") as file:
            raw = file.read(len(_FRAME))  # a large file that is not attsim's is not read whole
            if raw == _FRAME:
                raw += file.read()
        start = len(_FRAME) + _DIGEST_BYTES
        if len(raw) < start and _FRAME.startswith(raw[:len(_FRAME)]):
            raise ValueError("it ends before its header does")
        if not raw.startswith(_FRAME):
            raise ValueError("not written by this version of attsim")
        if _digest(self, name, raw[start:]) != raw[len(_FRAME):start]:
            raise ValueError("its contents do not match the digest it was written with (changed since, or another "
                             "function's, or older code's)")
        caching._cache_log("[cache] data loaded from %r", path)
        return pickle.loads(raw[start:])

    return checked


def _gone():
    # numba's load() takes a data file that is not there as absent (removed while its index still names it)
    raise FileNotFoundError("removed: unreadable")


if not hasattr(caching.IndexDataCacheFile._load_index, "__wrapped__"):
    caching.IndexDataCacheFile._load_index = _read_or_remove(caching.IndexDataCacheFile._load_index, dict)
    caching.IndexDataCacheFile._load_data = _read_or_remove(_load_framed(caching.IndexDataCacheFile._load_data),
                                                            _gone)
    caching.IndexDataCacheFile._save_data = _save_framed(caching.IndexDataCacheFile._save_data)
    caching.IndexDataCacheFile.save = _saved_or_said(caching.IndexDataCacheFile.save)
