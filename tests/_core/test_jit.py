"""The compiled functions' disk cache: stamped with what a function depends on, so an edit recompiles exactly the
functions that can reach the edited code."""

import importlib
import importlib.util
import os
import pickle
import pickletools
import pkgutil
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from numba.core.dispatcher import Dispatcher

import attsim
from attsim._core import jit as _jit


def _dispatchers():
    """Every numba function defined at module level in attsim (importing every module)."""
    found = []
    for info in pkgutil.walk_packages(attsim.__path__, "attsim."):
        if info.name == "attsim.rl.sb3" and importlib.util.find_spec("stable_baselines3") is None:
            continue  # the extra `learn`'s adapter: it needs Stable-Baselines3 (and defines no numba function)
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if isinstance(value, Dispatcher) and value.py_func.__module__ == info.name:
                found.append(value)
    return found


def test_every_cached_attsim_function_is_stamped_with_its_modules_dependencies():
    dispatchers = _dispatchers()
    assert len(dispatchers) > 100
    for dispatcher in dispatchers:
        assert dispatcher._cache is not None and dispatcher._cache.__class__.__name__ == "FunctionCache", \
            dispatcher.py_func.__qualname__  # cache=True on every kernel
        locator = dispatcher._cache._impl.locator
        assert isinstance(locator, _jit._PackageLocator), dispatcher.py_func.__qualname__
        assert locator.get_source_stamp() == _jit.dependency_digest(dispatcher.py_func.__code__.co_filename)


def test_functions_outside_the_package_keep_numbas_rule(tmp_path):
    outside = tmp_path / "law.py"
    outside.write_text("def law(x):\n    return x\n")
    namespace = {}
    exec(compile(outside.read_text(), str(outside), "exec"), namespace)
    assert _jit._PackageLocator.from_function(namespace["law"], str(outside)) is None


CALL = "from attsim._core.timegrid import grid_time; print(repr(grid_time(0.25, 7, 0.1)))"


def _call(cache):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), ATTSIM_BACKGROUND_COMPILE="0")
    out = subprocess.run([sys.executable, "-c", CALL], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip(), out.stderr


@pytest.mark.parametrize("suffix", [".nbc", ".nbi"])
def test_a_damaged_cache_file_is_said_removed_and_compiled_again(tmp_path, suffix):
    """A truncated file failed every later run with numba's "UnpicklingError: pickle data was truncated", naming
    neither the file nor a way out (helper-39)."""
    value, _ = _call(tmp_path)
    [damaged] = [f for f in tmp_path.rglob(f"*grid_time*{suffix}")]
    with open(damaged, "r+b") as file:
        file.truncate(damaged.stat().st_size // 2)
    again, said = _call(tmp_path)
    assert again == value == "0.95"  # 0.25 + 7 x 0.1, snapped to the nanosecond
    assert f"attsim: the compiled code cached in {damaged} could not be read (" in said and \
        "removed: it compiles again" in said, said
    assert _call(tmp_path) == (value, "")  # written anew: read without a word


def test_a_cache_file_whose_bytes_changed_but_still_unpickles_is_said_removed_and_compiled_again(tmp_path):
    """Bytes of machine code flipped inside a data file that numba still unpickles: a run loaded it and hung with no
    word (wheel_slew, for ever), and could as well have computed something else. The digest it is written with
    catches it."""
    value, _ = _call(tmp_path)
    [damaged] = [f for f in tmp_path.rglob("*grid_time*.nbc")]
    raw = bytearray(damaged.read_bytes())
    start = len(_jit._FRAME) + _jit._DIGEST_BYTES
    payload = max((arg for op, arg, _ in pickletools.genops(bytes(raw[start:])) if isinstance(arg, bytes)), key=len)
    at = bytes(raw).index(payload)
    for i in range(at + 16, at + len(payload) - 16, 97):
        raw[i] ^= 0x5A
    damaged.write_bytes(raw)
    pickle.loads(raw[start:])  # still a pickle: only the digest tells
    again, said = _call(tmp_path)
    assert again == value == "0.95"
    assert f"attsim: the compiled code cached in {damaged} could not be read (ValueError: its contents do not " \
           "match the digest it was written with (changed since, or another function's, or older code's)); " \
           "removed: it compiles again" in said, said
    assert _call(tmp_path) == (value, "")


def test_a_directory_in_a_cache_files_place_is_said_and_the_run_goes_on_compiled_in_memory(tmp_path):
    """The data file replaced by a directory: reading it, then saving the code compiled again, failed the run, and
    the command line then hung for ever with nothing said (helper-42's leftover, seen anew)."""
    value, _ = _call(tmp_path)
    [data] = [f for f in tmp_path.rglob("*grid_time*.nbc")]
    data.unlink()
    data.mkdir()
    for _ in range(2):  # every run, until the directory goes
        again, said = _call(tmp_path)
        assert again == value
        assert f"attsim: the compiled code cached in {data} could not be read (Is a directory): it compiles " \
               "again" in said, said
        assert f"attsim: the compiled code could not be cached (Is a directory: {data}): every run compiles it " \
               "again until it can be;" in said, said
        assert said.count("attsim:") == 2, said  # once each, however many callees meet it
    data.rmdir()
    assert _call(tmp_path) == (value, "")
    assert _call(tmp_path) == (value, "")


def test_a_valid_cache_file_under_another_functions_name_is_refused(tmp_path):
    """A whole, undamaged data file copied over another function's (caches copied or restored by hand): the digest
    covered only the bytes, and the wrong function's code ran without a word (helper-43: wheel_slew's telemetry
    written into other columns, every criterion passing)."""
    value, _ = _call(tmp_path)
    [grid] = [f for f in tmp_path.rglob("*grid_time*.nbc")]
    [snap] = [f for f in tmp_path.rglob("*snap_time*.nbc")]
    shutil.copyfile(snap, grid)
    again, said = _call(tmp_path)
    assert again == value
    assert f"attsim: the compiled code cached in {grid} could not be read (ValueError: its contents do not match " \
           "the digest it was written with" in said, said


def test_a_cache_file_that_is_a_link_to_a_device_is_said_removed_and_compiled_again(tmp_path):
    """A data file replaced by a link to /dev/zero was read until memory ran out (helper-43)."""
    value, _ = _call(tmp_path)
    [data] = [f for f in tmp_path.rglob("*grid_time*.nbc")]
    data.unlink()
    data.symlink_to("/dev/zero")
    again, said = _call(tmp_path)
    assert again == value
    assert f"attsim: the compiled code cached in {data} could not be read (ValueError: not a regular file); " \
           "removed: it compiles again" in said, said
    assert data.is_file() and not data.is_symlink()


def test_a_unit_whose_index_names_a_data_file_that_is_not_there_is_not_cached(tmp_path):
    """A full disk left index entries without their data: such a unit was counted as on the machine, and a run then
    compiled it without a word of warning (helper-43)."""
    _call(tmp_path)
    check = ("from attsim._core.timegrid import grid_time; from attsim._core.units import call_is_cached; "
             "print(call_is_cached(grid_time, (0.25, 7, 0.1)))")
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path), ATTSIM_BACKGROUND_COMPILE="0")

    def cached():
        out = subprocess.run([sys.executable, "-c", check], env=env, capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr
        return out.stdout.strip()

    assert cached() == "True"
    [data] = [f for f in tmp_path.rglob("*grid_time*.nbc")]
    data.unlink()
    assert cached() == "False"


def test_a_cache_directory_that_cannot_be_written_keeps_attsims_code_out_of_the_package(tmp_path):
    """NUMBA_CACHE_DIR where nothing can be written: numba went on to its own locators, which cached attsim's code in
    the package's folder stamped by file times alone (an edit of a kernel another module calls left the old code
    running). It stays where it was asked to be, and the run goes on compiled in memory, said once."""
    unwritable = Path("/sys/attsim-cache-test")  # root ignores permission bits, but not /sys
    env = dict(os.environ, NUMBA_CACHE_DIR=str(unwritable), ATTSIM_BACKGROUND_COMPILE="0")
    code = CALL + "; from attsim.dynamics import qmul; print(qmul._cache._cache_path)"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    value, where = out.stdout.split()
    assert value == "0.95" and where.startswith(str(unwritable)), where
    assert out.stderr.count("attsim: the compiled code could not be cached (") == 1, out.stderr


def _tree(root, files):
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_an_edit_changes_the_digest_of_the_modules_that_import_it_and_no_other(tmp_path, monkeypatch):
    package = tmp_path / "pkg"
    _tree(package, {"__init__.py": "", "low.py": "X = 1\n", "mid.py": "from .low import X\n",
                    "top.py": "def f():\n    from . import mid\n    return mid\n", "apart.py": "Y = 2\n",
                    "sub/__init__.py": "", "sub/deep.py": "from ..apart import Y\n",
                    # an import deep in statements: a method, a branch, a with, a try's handler and finally, a match
                    "nested.py": "class C:\n    def m(self, v):\n        if v:\n            with open(__file__):\n"
                                 "                try:\n                    pass\n                except OSError:\n"
                                 "                    pass\n                finally:\n"
                                 "                    match v:\n                        case 1:\n"
                                 "                            from . import low\n"})
    monkeypatch.setattr(_jit, "PACKAGE_DIR", package.resolve())
    monkeypatch.setattr(_jit, "_IMPORTS", {})
    monkeypatch.setattr(_jit, "_DIGESTS", {})

    def forget():  # what a new process starts from: the sources, the modules found and the digests unread
        _jit._IMPORTS.clear()
        _jit._DIGESTS.clear()
        _jit._source.cache_clear()
        _jit._module_file.cache_clear()

    def digests():
        forget()
        return {name: _jit.dependency_digest(package / name) for name in ("low.py", "mid.py", "top.py", "apart.py",
                                                                           "sub/deep.py", "nested.py")}

    try:
        before = digests()
        (package / "low.py").write_text("X = 3\n")
        after = digests()
        # low itself, mid (imports it), top (imports mid inside a function) and nested change; apart and deep do not
        assert {name for name in before if before[name] != after[name]} == {"low.py", "mid.py", "top.py",
                                                                             "nested.py"}
        (package / "apart.py").write_text("Y = 4\n")
        again = digests()
        assert {name for name in after if after[name] != again[name]} == {"apart.py", "sub/deep.py"}
    finally:
        forget()  # the package's own modules are found afresh after the test


def test_the_reports_do_not_depend_on_the_filters_kernels():
    closure = set()
    stack = [_jit.PACKAGE_DIR / "sensors" / "kernels.py"]
    while stack:
        path = stack.pop()
        if path not in closure:
            closure.add(path)
            stack.extend(_jit._imports(path))
    names = {p.relative_to(_jit.PACKAGE_DIR).as_posix() for p in closure}
    assert "dynamics.py" in names and "reporting/page.py" not in names and "estimation/kernels.py" not in names


@pytest.mark.parametrize("source, expected", [
    ("from .low import X\n", [["sub", "low"], ["sub", "low", "X"]]),
    ("from . import (mid,\n    low as l,  # a comment, with a comma\n)\n",
     [["sub"], ["sub", "mid"], ["sub", "low"], ["sub", "with"]]),
    ("from ..apart import Y, \\\n    Z\n", [["apart"], ["apart", "Y"], ["apart", "Z"]]),
    ("import attsim.sensors.loop as loop, numpy\n", [["sensors", "loop"]]),
    ("from attsim.engine import world\n", [["engine"], ["engine", "world"]]),
    ("import numpy\nfrom numpy import zeros\n", []),
    ("def f():\n    from .deep import g\n", [["sub", "deep"], ["sub", "deep", "g"]]),
])
def test_import_statements_are_read_from_the_text_as_a_parser_reads_them_or_more(source, expected):
    # the package "sub": a relative import of one dot is a module beside this one; a comment's words may add a
    # name (only ever a dependency more, never one fewer)
    assert _jit._import_targets(source, ["sub"]) == expected
