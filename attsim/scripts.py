"""Mission scripts: found in ``./missions``, resolved by name or path, loaded as modules.

Shared by the command line (``attsim run``, ``attsim missions``) and the
campaign runner, whose workers load a script once and keep it.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from .errors import InputError

__all__ = ["MISSIONS_DIR", "mission_scripts", "resolve_script", "load_module"]

MISSIONS_DIR = Path("missions")


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
        raise InputError("mission", f"unknown mission {name!r}", f"valid: {valid}")
    return scripts[name]


def load_module(path: Path):
    """Execute a mission script as a module (its directory first on ``sys.path``, for its shared helpers)."""
    sys.path.insert(0, str(path.resolve().parent))
    spec = importlib.util.spec_from_file_location(f"attsim_mission_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
