"""The compiled functions' disk cache: stamped with the whole package, so an edit anywhere recompiles its callers."""

import importlib
import pkgutil

from numba.core.dispatcher import Dispatcher

import attsim
from attsim._core import jit as _jit


def _dispatchers():
    """Every numba function defined at module level in attsim (importing every module)."""
    found = []
    for info in pkgutil.walk_packages(attsim.__path__, "attsim."):
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if isinstance(value, Dispatcher) and value.py_func.__module__ == info.name:
                found.append(value)
    return found


def test_every_cached_attsim_function_is_stamped_with_the_package_digest():
    dispatchers = _dispatchers()
    assert len(dispatchers) > 100
    for dispatcher in dispatchers:
        assert dispatcher._cache is not None and dispatcher._cache.__class__.__name__ == "FunctionCache", \
            dispatcher.py_func.__qualname__  # cache=True on every kernel
        locator = dispatcher._cache._impl.locator
        assert isinstance(locator, _jit._PackageLocator), dispatcher.py_func.__qualname__
        assert locator.get_source_stamp() == _jit.package_digest()


def test_the_digest_covers_every_source_and_functions_outside_keep_numbas_rule(tmp_path):
    digest = _jit.package_digest()
    assert len(digest) == 12 and int(digest, 16) >= 0
    outside = tmp_path / "law.py"
    outside.write_text("def law(x):\n    return x\n")
    namespace = {}
    exec(compile(outside.read_text(), str(outside), "exec"), namespace)
    assert _jit._PackageLocator.from_function(namespace["law"], str(outside)) is None
    inside = _jit._PackageLocator.from_function(attsim.dynamics.qmul.py_func, attsim.dynamics.__file__)
    assert inside is not None and inside.get_source_stamp() == digest
