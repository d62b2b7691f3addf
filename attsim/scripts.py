"""Mission scripts: found in ``./missions``, resolved by name or path, loaded as modules.

Shared by the command line (``attsim run``, ``attsim missions``) and the
campaign runner, whose workers load a script once and keep it. A script's
code that attsim runs (the module, ``build``, ``criteria``, ``envelopes``,
``dispersions``) runs through :func:`call_script`: a ``sys.exit()`` there is
the script's error, not the end of attsim's process with the script's code.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from .errors import InputError, exit_as_error

__all__ = ["MISSIONS_DIR", "EXIT_RULE", "mission_scripts", "resolve_script", "load_module", "call_script",
           "EXIT_OK", "EXIT_FAILED", "EXIT_USAGE", "EXIT_INTERNAL", "EXIT_INTERRUPTED", "EXIT_READER_GONE"]

# a mission script's exit codes (``python missions/x.py``, ``attsim run x``; the command line's docstring says each)
EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3
EXIT_INTERRUPTED = 130  # 128 + SIGINT, what a shell reports for a command stopped by Ctrl-C
EXIT_READER_GONE = 141  # 128 + SIGPIPE, what a shell reports for a command whose reader closed (`| head -1`)

MISSIONS_DIR = Path("missions")
EXIT_RULE = ("must not end the process (sys.exit) when attsim loads or calls it: a script's command-line code "
             "belongs under if __name__ == '__main__':")


def mission_scripts() -> dict[str, Path]:
    """``{name: path}`` of the scripts in ``./missions`` (names starting with ``_`` are shared helpers)."""
    if not MISSIONS_DIR.is_dir():
        return {}
    return {p.stem: p for p in sorted(MISSIONS_DIR.glob("*.py")) if not p.stem.startswith("_")}


def resolve_script(name: str) -> Path:
    """A ``.py`` path as it is, or a mission's name looked up in ``./missions``; InputError naming the valid ones."""
    path = Path(name)
    if path.suffix == ".py":
        if not path.is_file():
            raise InputError("script", "must be an existing .py file", f"no such file {name!r}")
        return path
    scripts = mission_scripts()
    if name not in scripts:
        where = MISSIONS_DIR.resolve()
        valid = ", ".join(scripts) or (f"none, {where} holds no mission script" if MISSIONS_DIR.is_dir()
                                       else f"none, there is no {where}")
        here = Path(f"{name}.py")
        hint = f"; to run the script {here}, give its path: {here}" if here.is_file() else \
            "; a script elsewhere runs by its path (attsim run path/to/script.py)"
        raise InputError("mission", f"unknown mission {name!r}", f"valid: {valid}{hint}")
    return scripts[name]


def load_module(path: Path):
    """Execute a mission script as a module (its directory first on ``sys.path``, for its shared helpers)."""
    sys.path.insert(0, str(path.resolve().parent))
    spec = importlib.util.spec_from_file_location(f"attsim_mission_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    call_script(spec.loader.exec_module, "mission script", module)
    return module


def call_script(function, field: str, *args, **kwargs):
    """``function(*args, **kwargs)``, a mission script's code; its ``sys.exit()`` as an InputError naming ``field``.

    Raised through, the exit would end attsim with the script's code: exit 0 from a command that ran and judged
    nothing, 3 (attsim's bug), or a campaign's dead worker. The error's traceback names the script's line.
    """
    try:
        return function(*args, **kwargs)
    except SystemExit as exc:
        raise exit_as_error(exc, field, EXIT_RULE) from exc
