"""The ``attsim`` command line (layer 8).

    attsim methods                 list the integrators with one-line descriptions
    attsim missions                list the mission scripts in ./missions
    attsim run NAME_OR_SCRIPT      run missions/NAME.py (or a path to a script)

Exit codes: 0 success, 1 a mission criterion failed, 2 bad usage or bad
input (one line on stderr; ``--debug`` shows the traceback).
"""

from __future__ import annotations

import argparse
import runpy
import sys
from pathlib import Path

from .errors import AttsimError

MISSIONS_DIR = Path("missions")


def _mission_scripts() -> dict[str, Path]:
    if not MISSIONS_DIR.is_dir():
        return {}
    return {p.stem: p for p in sorted(MISSIONS_DIR.glob("*.py")) if not p.stem.startswith("_")}


def _first_doc_line(path: Path) -> str:
    import ast

    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    return doc.strip().splitlines()[0] if doc.strip() else ""


def _resolve_script(name: str) -> Path:
    path = Path(name)
    if path.suffix == ".py":
        if not path.is_file():
            raise AttsimError(f"script: no such file {name!r}")
        return path
    scripts = _mission_scripts()
    if name not in scripts:
        raise AttsimError(f"mission: unknown mission {name!r}; valid: {', '.join(scripts) or '(none in ./missions)'}")
    return scripts[name]


def _cmd_methods(args) -> int:
    from .propagation import methods

    for name, description in methods().items():
        print(f"{name:12s} {description}")
    return 0


def _cmd_missions(args) -> int:
    for name, path in _mission_scripts().items():
        print(f"{name:24s} {_first_doc_line(path)}")
    return 0


def _cmd_run(args) -> int:
    script = _resolve_script(args.mission)
    try:
        runpy.run_path(str(script), run_name="__main__")
    except SystemExit as exit_:
        code = exit_.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="attsim", description="Spacecraft attitude-dynamics simulator")
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("methods", help="list the integrators").set_defaults(func=_cmd_methods)
    sub.add_parser("missions", help="list the mission scripts in ./missions").set_defaults(func=_cmd_missions)
    run = sub.add_parser("run", help="run a mission script")
    run.add_argument("mission", help="a name from 'attsim missions' or a path to a .py script")
    run.set_defaults(func=_cmd_run)
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except AttsimError as exc:
        if args.debug:
            raise
        print(f"attsim: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
