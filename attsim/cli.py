"""The ``attsim`` command line (layer 8).

    attsim run SCRIPT_OR_NAME [--out DIR] [--duration S] [--seed N] [--method M] [--no-report]
    attsim report DIR [DIR ...]      one run's report, or a comparison of several
    attsim missions                  the mission scripts in ./missions, one line each
    attsim methods                   the integrators, one line each
    attsim validate                  the analytic validation cases: case, method, error, bound, PASS/FAIL
    attsim campaign SCRIPT_OR_NAME --runs N ...   a Monte Carlo campaign (attsim.campaign.cli)
    attsim run SCRIPT_OR_NAME --campaign DIR --index K   run K of a campaign again, exactly

Exit codes: 0 success, 1 a mission criterion failed, 2 bad usage or bad
input (one line on stderr; ``--debug`` shows the traceback).

A mission script defines ``build(out_dir=None)`` returning a
:class:`~attsim.Mission` (or a list of them) and ``criteria(telemetry)``
returning ``[(label, value, ok, bound), ...]``; for campaigns it may define
``dispersions()`` and take the drawn values as ``build(out_dir=None, **params)``.
It ends with::

    if __name__ == "__main__":
        sys.exit(attsim.cli.run_script(build, criteria))

so it runs on its own (``python missions/x.py [options]``) and through
``attsim run x`` alike.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path
from typing import Callable

from .errors import AttsimError, InputError

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
            raise InputError("script", "must be an existing .py file", f"no such file {name!r}")
        return path
    scripts = _mission_scripts()
    if name not in scripts:
        raise InputError("mission", f"unknown mission {name!r}", f"valid: {', '.join(scripts) or '(none in ./missions)'}")
    return scripts[name]


def _load_module(path: Path):
    sys.path.insert(0, str(path.resolve().parent))
    spec = importlib.util.spec_from_file_location(f"attsim_mission_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", help="output directory (default reports/<mission>)")
    parser.add_argument("--duration", type=float, help="simulated time, s")
    parser.add_argument("--seed", type=int, help="random seed")
    parser.add_argument("--method", help="integrator (see 'attsim methods')")
    parser.add_argument("--no-report", action="store_true", help="skip the HTML report")
    parser.add_argument("--campaign", help="a campaign directory: re-run its run --index exactly")
    parser.add_argument("--index", type=int, help="the run of --campaign to re-run")


def _execute_args(build: Callable, criteria: Callable, args) -> int:
    if args.campaign is not None or args.index is not None:
        from .campaign.cli import execute_campaign_run

        return execute_campaign_run(build, criteria, args)
    return execute(build, criteria, args.out, args.duration, args.seed, args.method, not args.no_report)


def build_missions(build: Callable, out=None, duration=None, seed=None, method=None, params=None):
    """``(missions, single)``: ``build(out_dir=out, **params)`` with the overrides applied (also a campaign's runs)."""
    from .engine import ENGINE_METHODS

    missions = build(out_dir=out, **(params or {})) if out is not None or params else build()
    single = not isinstance(missions, (list, tuple))
    missions = [missions] if single else list(missions)
    for k, mission in enumerate(missions):
        if out is not None and not single:
            mission.out_dir = Path(out) / mission.name
        if duration is not None:
            from ._validate import positive_scalar

            mission.duration_s = positive_scalar(duration, "duration")
        if seed is not None:
            if seed < 0:
                raise InputError("seed", "must be an integer >= 0", f"got {seed}")
            mission.seed = seed
        if method is not None:
            from .integrators import REGISTRY
            from .studies import Propagation

            allowed = list(REGISTRY) if isinstance(mission, Propagation) else list(ENGINE_METHODS)
            if method not in allowed:
                raise InputError("method", f"must be one of {allowed} for this run", f"got {method!r}")
            mission.method = method
    return missions, single


def execute(build: Callable, criteria: Callable, out=None, duration=None, seed=None, method=None, write_report=True,
            params=None) -> int:
    """Build, override, run, judge and report a mission; returns the exit code (0 or 1)."""
    from .reporting import report

    missions, single = build_missions(build, out, duration, seed, method, params)
    runs = [mission.run(progress=True) for mission in missions]
    results = criteria(runs[0] if single else runs)
    for run in runs:
        print(f"{run.meta['name']}: {run.meta['duration_s']:.6g} s simulated in {run.meta['wall_s']:.2f} s wall -> {run.path}")
    for label, value, ok, bound in results:
        shown = f"{value:.4g}" if isinstance(value, (int, float)) else str(value)
        print(f"{'PASS' if ok else 'FAIL'}  {label}: {shown} (bound {bound})")
    if write_report:
        for run in runs:
            print(f"report: {report(run, criteria=results)}")
        if len(runs) > 1:
            print(f"comparison: {report(runs, Path(runs[0].path).parent / 'comparison.html')}")
    return 0 if all(ok for _, _, ok, _ in results) else 1


def run_script(build: Callable, criteria: Callable, argv: list[str] | None = None) -> int:
    """Entry point of a mission script: ``python missions/x.py [--out DIR] [--duration S] ...``."""
    parser = argparse.ArgumentParser(description="Run this attsim mission")
    _run_options(parser)
    parser.add_argument("--debug", action="store_true")
    args = parser.parse_args(argv)
    return _guard(lambda: _execute_args(build, criteria, args), args.debug)


def _guard(action: Callable[[], int], debug: bool) -> int:
    try:
        return action()
    except AttsimError as exc:
        if debug:
            raise
        print(f"attsim: {exc}", file=sys.stderr)
        return 2


def _cmd_methods(args) -> int:
    from .propagation import methods

    for name, description in methods().items():
        print(f"{name:12s} {description}")
    return 0


def _cmd_missions(args) -> int:
    for name, path in _mission_scripts().items():
        print(f"{name:26s} {_first_doc_line(path)}")
    return 0


def _cmd_run(args) -> int:
    script = _resolve_script(args.mission)
    module = _load_module(script)
    if not (hasattr(module, "build") and hasattr(module, "criteria")):
        raise InputError("mission", f"{script} must define build(out_dir=None) and criteria(telemetry)")
    return _execute_args(module.build, module.criteria, args)


def _cmd_report(args) -> int:
    from .reporting import report
    from .telemetry import load

    runs = [load(d) for d in args.dirs]
    for run in runs:
        if run.partial:
            print(f"note: {run.path} holds a partial run ({run.meta.get('stopped', 'killed')})")
    if len(runs) == 1:
        print(f"report: {report(runs[0])}")
    else:
        target = Path(args.out) if args.out else Path(runs[0].path).parent / "comparison.html"
        print(f"comparison: {report(runs, target)}")
    return 0


def _cmd_validate(args) -> int:
    from .validation import run_cases

    rows = run_cases()
    print(f"{'case':58s} {'method':10s} {'error':>10s} {'bound':>10s}")
    for case, method, error, bound, ok in rows:
        print(f"{case:58s} {method:10s} {error:10.3e} {bound:10.1e}  {'PASS' if ok else 'FAIL'}")
    return 0 if all(row[-1] for row in rows) else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="attsim", description="Spacecraft attitude-dynamics simulator")
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("methods", help="list the integrators").set_defaults(func=_cmd_methods)
    sub.add_parser("missions", help="list the mission scripts in ./missions").set_defaults(func=_cmd_missions)
    sub.add_parser("validate", help="run the analytic validation cases").set_defaults(func=_cmd_validate)
    run = sub.add_parser("run", help="run a mission script")
    run.add_argument("mission", help="a name from 'attsim missions' or a path to a .py script")
    _run_options(run)
    run.set_defaults(func=_cmd_run)
    rep = sub.add_parser("report", help="write the report of a run directory, or a comparison of several")
    rep.add_argument("dirs", nargs="+", help="run directories")
    rep.add_argument("--out", help="comparison page path (several directories)")
    rep.set_defaults(func=_cmd_report)
    from .campaign.cli import add_parser

    add_parser(sub)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:  # argparse: 2 for bad usage, 0 for --help
        return int(exit_.code or 0)
    return _guard(lambda: args.func(args), args.debug)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
