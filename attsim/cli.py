"""The ``attsim`` command line (layer 8).

    attsim run SCRIPT_OR_NAME [--out DIR] [--duration S] [--seed N] [--method M] [--no-report]
    attsim report DIR [DIR ...] [--out FILE] [--reference DIR]  one run's report, or a comparison of several
    attsim missions                  the mission scripts in ./missions, one line each
    attsim methods                   the integrators, one line each
    attsim validate                  the analytic validation cases: case, method, error, bound, PASS/FAIL
    attsim campaign SCRIPT_OR_NAME --runs N ...   a Monte Carlo campaign (attsim.campaign.cli)
    attsim run SCRIPT_OR_NAME --campaign DIR --index K   run K of a campaign again, exactly
    attsim --version

Exit codes (:data:`EXIT_OK` ...): 0 success; 1 a mission criterion failed
(or could not be evaluated); 2 bad usage or bad input, including an error
in a mission script, a file that cannot be read or written, a run that
stopped on an error; 3 an internal error, i.e. an unexpected exception
raised inside attsim's own code (a bug to report); 130 interrupted (Ctrl-C;
the partial telemetry is kept, the line says where). Every failure is one
line on stderr; ``--debug``, before or after the subcommand, shows the
traceback instead.

A mission script defines ``build(out_dir=None)`` returning a
:class:`~attsim.Mission` (or a list of them) and ``criteria(telemetry)``
returning ``[(label, value, ok, bound), ...]``; for campaigns it may define
``dispersions()`` and take the drawn values as ``build(out_dir=None, **params)``.
It ends with::

    if __name__ == "__main__":
        sys.exit(attsim.cli.run_script(build, criteria))

so it runs on its own (``python missions/x.py [options]``) and through
``attsim run x`` alike. A criterion passes only when ``ok`` is a bool that
is True and its value is not NaN; a value that is a
:class:`~attsim.testing.NotEvaluated` (e.g. from
:func:`~attsim.testing.ended_before`) fails with its reason, and so does
every criterion when ``criteria`` raises.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import sys
import sysconfig
import time
import traceback
from collections.abc import Callable
from pathlib import Path


from . import __version__
from ._validate import safe_name
from .errors import AttsimError, InputError, add_note
from .scripts import MISSIONS_DIR, load_module as _load_module, mission_scripts as _mission_scripts
from .scripts import call_script, resolve_script as _resolve_script
from .criteria import Criterion, SharedLabelError, judge, passed, record_criteria
from .criteria import one_line as _one_line, shown as _shown
from .run_lock import RunDirectoryLockedError
from .testing import NotEvaluated

__all__ = ["main", "run_script", "execute", "judge", "Criterion", "NotEvaluated",
           "EXIT_OK", "EXIT_FAILED", "EXIT_USAGE", "EXIT_INTERNAL", "EXIT_INTERRUPTED"]

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3
EXIT_INTERRUPTED = 130  # 128 + SIGINT, what a shell reports for a command stopped by Ctrl-C


def _first_doc_line(path: Path) -> str:
    import ast

    try:
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    except (SyntaxError, ValueError, OSError) as exc:  # one broken script must not hide the others
        return f"(unreadable: {type(exc).__name__}: {_one_line(exc)})"
    return doc.strip().splitlines()[0] if doc.strip() else ""


def _run_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", help="output directory (default reports/<mission>)")
    parser.add_argument("--duration", type=float, help="simulated time, s")
    parser.add_argument("--seed", type=int, help="random seed")
    parser.add_argument("--method", help="integrator (see 'attsim methods')")
    parser.add_argument("--no-report", action="store_true", help="skip the HTML report")
    parser.add_argument("--campaign", help="a campaign directory: re-run its run --index exactly")
    parser.add_argument("--index", type=int, help="the run of --campaign to re-run")


def _execute_args(build: Callable, criteria: Callable, args, figures: Callable | None = None) -> int:
    if args.campaign is not None or args.index is not None:
        from .campaign.cli import execute_campaign_run

        return execute_campaign_run(build, criteria, args, figures)
    return execute(build, criteria, args.out, args.duration, args.seed, args.method, not args.no_report,
                   debug=args.debug, figures=figures)


def _check_runs(missions) -> list:
    from .engine import Mission
    from .studies import Propagation

    runs = list(missions) if isinstance(missions, (list, tuple)) else [missions]
    if not runs or not all(isinstance(m, (Mission, Propagation)) for m in runs):
        raise InputError("build", "must return an attsim.Mission or attsim.Propagation, or a non-empty list of them",
                         f"got {_one_line(missions)}")
    for run in runs:
        safe_name(run.name, "name")  # it names a directory below (--out) and in reports
    return runs


def _where_partial(out_dir: Path, since: float) -> str | None:
    """Where a run that stopped after ``since`` (wall clock) left its partial telemetry; None if it left none."""
    meta_path = Path(out_dir) / "meta.json"
    try:
        fresh = meta_path.stat().st_mtime >= since  # not an earlier run's in the same directory
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if fresh and isinstance(meta, dict) and meta.get("partial"):
        return f"the partial telemetry is in {out_dir} (attsim.load reads it; attsim report {out_dir} shows it)"
    return None


def _call_build(build: Callable, keywords: dict):
    """``build(**keywords)``, or an InputError naming the script's ``file:line`` and what ``build`` must accept.

    Checked before the call: a TypeError from calling it would point into attsim (exit 3, "a bug in attsim") when
    the script's ``build`` does not take what the command passes it (``out_dir`` for ``--out``, a campaign's
    parameters).
    """
    try:
        signature = inspect.signature(build)
    except (TypeError, ValueError):  # no signature to check (a builtin): calling it says what is wrong
        return call_script(build, "build", **keywords)
    try:
        signature.bind(**keywords)
    except TypeError as exc:
        code = getattr(build, "__code__", None)
        where = f"{code.co_filename}:{code.co_firstlineno}: " if code is not None else ""
        needs = ["out_dir=None (the run directory: --out gives it)"] if "out_dir" in keywords else []
        params = [name for name in keywords if name != "out_dir"]
        needs += [f"the campaign's parameters {', '.join(params)} as keywords"] if params else []
        rule = (f"must accept {' and '.join(needs)}" if needs
                else "must be callable as build(): give its parameters defaults")
        raise InputError("build", rule, f"{where}def build{signature}: {exc}") from None
    return call_script(build, "build", **keywords)


def build_missions(build: Callable, out=None, duration=None, seed=None, method=None, params=None):
    """``(missions, single)``: ``build(out_dir=out, **params)`` with the overrides applied (also a campaign's runs)."""
    from .engine import ENGINE_METHODS

    built = _call_build(build, {"out_dir": out, **(params or {})} if out is not None or params else {})
    single = not isinstance(built, (list, tuple))
    missions = _check_runs(built)
    for mission in missions:
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
            if isinstance(mission, Propagation) and method != mission.method:
                mission.options = {}  # the script's method options (e.g. dmv's order) belong to the method replaced
            mission.method = method
    places = [os.path.realpath(mission.out_dir) for mission in missions]
    if len(set(places)) < len(places):  # each later run would replace an earlier one's files before its report
        shared = sorted({place for place in places if places.count(place) > 1})
        raise InputError("build", "must give each run it returns its own directory (a name or out_dir of its own)",
                         f"several runs write {', '.join(shared)}")
    return missions, single


def execute(build: Callable, criteria: Callable, out=None, duration=None, seed=None, method=None, write_report=True,
            debug: bool = False, figures: Callable | None = None, params=None) -> int:
    """Build, override, run, judge and report a mission; returns the exit code (0, or 1 when a criterion fails).

    Raises what stops a run (an AttsimError, a user script's exception, a
    KeyboardInterrupt), with a note saying where its partial telemetry is;
    :func:`main` and :func:`run_script` turn that into one line. An
    exception raised by ``criteria`` is a failed criterion, not an error
    (with ``debug``, it is raised). ``figures(telemetry)``, when given (a mission
    script's own), returns plotly figures for the report.
    """
    from .reporting import report_runs

    missions, single = build_missions(build, out, duration, seed, method, params)
    runs = []
    for mission in missions:
        since = time.time() - 1.0  # file times are coarser than the clock on some file systems
        try:
            runs.append(mission.run(progress=sys.stderr.isatty()))  # no progress bar in a log file
        except BaseException as exc:
            # refused for a directory another run writes: the telemetry there is that run's, not this one's
            where = None if isinstance(exc, RunDirectoryLockedError) else _where_partial(mission.out_dir, since)
            if where is None and isinstance(exc, KeyboardInterrupt):
                where = f"no telemetry was written to {mission.out_dir} (stopped during set-up)"
            if where is not None:
                add_note(exc, where)
            raise
    try:
        judged = runs[0] if single else runs
        results = judge(call_script(criteria, "criteria(telemetry)", judged), judged)
    except SharedLabelError as exc:  # the script's criteria break their contract: refused by name, as a campaign does
        add_note(exc, "the telemetry is kept in " + ", ".join(str(run.path) for run in runs))
        raise
    except Exception as exc:  # the criteria's own error: every criterion is unjudged, the runs stay
        if debug:
            raise
        results = [Criterion("criteria(telemetry)", NotEvaluated(f"it raised {_describe(exc)[1]}"), False, "")]
    _keep_criteria(runs, results)
    for run in runs:
        meta = run.meta
        print(f"{meta['name']}: {meta['duration_s']:.6g} s simulated in {meta['wall_s']:.2f} s wall -> {run.path}")
    for label, value, ok, bound in results:
        print(f"{'PASS' if ok else 'FAIL'}  {label}: {_shown(value)}" + (f" (bound {bound})" if bound else ""))
    if write_report:
        pages = _write_report(lambda: report_runs(runs, criteria=results, figures=figures), "out", runs[0].path)
        for page in pages[: len(runs)]:  # several pages share one plotly.js
            print(f"report: {page}")
        if len(runs) > 1:
            print(f"comparison: {pages[-1]}")
    return EXIT_OK if passed(results) else EXIT_FAILED


def _keep_criteria(runs, results) -> None:
    """Each run's judged criteria into its meta.json (several runs: the rows naming each, as its page shows, and
    the rows naming none, the comparison's, in every run, so 'attsim report A B' shows them again)."""
    from .reporting.comparison import share_criteria

    shares, common = share_criteria(runs, results) if len(runs) > 1 else ([results], [])
    for run, own in zip(runs, shares):
        if (own or common) and run.path is not None:
            record_criteria(run.path, own, common)


def run_script(build: Callable, criteria: Callable, argv: list[str] | None = None,
               figures: Callable | None = None) -> int:
    """Entry point of a mission script: ``python missions/x.py [--out DIR] [--duration S] ...``."""
    parser = argparse.ArgumentParser(description="Run this attsim mission")
    _run_options(parser)
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    parser.add_argument("--version", action="version", version=f"attsim {__version__}")
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:  # argparse: 2 for bad usage, 0 for --help
        return int(exit_.code or 0)
    return _guard(lambda: _execute_args(build, criteria, args, figures), args.debug)


_PACKAGE_DIR = Path(__file__).resolve().parent
_LIBRARY_DIRS = tuple({Path(sysconfig.get_paths()[key]).resolve()
                       for key in ("stdlib", "platstdlib", "purelib", "platlib")})


def _frame_origin(filename: str) -> str:
    """Who wrote the code of a traceback frame: 'attsim', 'library' (Python's or an installed package's) or 'user'."""
    if filename.startswith("<"):  # <frozen importlib._bootstrap> and the like
        return "library"
    path = Path(filename).resolve()
    if path.is_relative_to(_PACKAGE_DIR):
        return "attsim"
    # a compiled extension names a source file it was built from (pandas/_libs/x.pxi), not one on disk
    if not path.is_file() or any(path.is_relative_to(root) for root in _LIBRARY_DIRS):
        return "library"
    return "user"


def _describe(exc: BaseException) -> tuple[str, str]:
    """Whose code raised ``exc`` ('attsim' or 'user') and one line saying what and where.

    The innermost frame that is neither Python's nor an installed library's
    decides: a mission script's (or any file outside attsim's), or attsim's
    own (except a module's ``__getattr__``: asking for a name attsim does
    not have is the asker's error). SimPy re-raises a process's exception as a copy whose cause is the
    original; the original's frames are the ones that say who raised it.
    """
    while exc.__cause__ is not None and type(exc.__cause__) is type(exc):
        exc = exc.__cause__
    text = f"{type(exc).__name__}: {_one_line(exc)}"
    if isinstance(exc, SyntaxError) and exc.filename:  # raised by the compiler, about the file it names
        text = f"{type(exc).__name__}: {_one_line(exc.msg)}"
        return _frame_origin(exc.filename), f"{exc.filename}:{exc.lineno}: {text}"
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        origin = _frame_origin(frame.filename)
        if origin == "attsim" and frame.name == "__getattr__":  # "no such name" (PEP 562) is its caller's error
            continue
        if origin != "library":
            return origin, f"{frame.filename}:{frame.lineno}: {text}"
    return "attsim", text


def _user_line(exc: BaseException) -> str | None:
    """``file:line`` of the innermost frame of a user's script (not attsim's, not a library's) ``exc`` went through."""
    while exc.__cause__ is not None and type(exc.__cause__) is type(exc):  # SimPy's copy: the original's frames
        exc = exc.__cause__
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if _frame_origin(frame.filename) == "user":
            return f"{frame.filename}:{frame.lineno}"
    return None


def _guard(action: Callable[[], int], debug: bool) -> int:
    """Run a command; turn what escapes into one line on stderr and an exit code (or, with ``debug``, the traceback)."""
    try:
        return action()
    except KeyboardInterrupt as exc:
        if debug:
            raise
        _say("interrupted", exc)
        return EXIT_INTERRUPTED
    except AttsimError as exc:
        if debug:
            raise
        # bad input attsim was given from a script's line (a constructor in build()): that line
        where = _user_line(exc) if isinstance(exc, InputError) else None
        _say(f"{where}: {type(exc).__name__}: {_one_line(exc)}" if where else _one_line(exc), exc)
        return EXIT_USAGE
    except Exception as exc:
        if debug:
            raise
        origin, line = _describe(exc)
        if origin == "attsim" and not isinstance(exc, OSError):  # a file system's refusal is no bug
            _say(f"internal error, a bug in attsim (please report it with the traceback --debug shows): {line}", exc)
            return EXIT_INTERNAL
        _say(f"{line} (--debug shows the traceback)", exc)
        return EXIT_USAGE


def _say(message: str, exc: BaseException) -> None:
    notes = [_one_line(note) for note in getattr(exc, "__notes__", None) or []]
    print("attsim: " + "; ".join([message, *notes]), file=sys.stderr)


def _report_path(out) -> Path:
    """``--out`` of ``attsim report`` as the HTML file to write: ``.html`` added when missing; its directory usable."""
    path = Path(out)
    if path.is_dir():  # checked before '.html' is added: 'reports/' would otherwise write reports.html beside it
        raise InputError("out", "must be a file path, not a directory",
                         f"{path} is a directory (a page in it: {path / 'report.html'})")
    if path.suffix.lower() != ".html":
        path = path.with_name(path.name + ".html")
    if path.is_dir():
        raise InputError("out", "must be a file path, not a directory", f"{path} is a directory")
    ancestor = path.parent
    while not ancestor.exists() and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise InputError("out", "must not lie under a file", f"{ancestor} is a file")
    if path.exists() and not os.access(path, os.W_OK):
        raise InputError("out", "must be a file that can be written", f"{path} is read-only")
    return path


def _write_report(write: Callable, field: str, path=None):
    """``write()`` (a report); a place it cannot write to (read-only, full, no such place) as an InputError naming
    ``field``, the option the user gave it by."""
    try:
        return write()
    except OSError as exc:
        detail = f"{exc.filename or path or ''}: {exc.strerror or exc}"
    except InputError as exc:
        if exc.field != "path":
            raise
        detail = exc.detail
    raise InputError(field, "must be a place where the report can be written", detail)


def _cmd_methods(args) -> int:
    from .propagation import methods

    for name, description in methods().items():
        print(f"{name:12s} {description}")
    return EXIT_OK


def _cmd_missions(args) -> int:
    where = MISSIONS_DIR.resolve()
    if not MISSIONS_DIR.is_dir():
        rule = "needs ./missions, the directory of mission scripts (run attsim in a project root)"
        raise InputError("missions", rule, f"there is no {where}")
    scripts = _mission_scripts()
    if not scripts:
        print(f"(no mission scripts in {where})")
    for name, path in scripts.items():
        print(f"{name:26s} {_first_doc_line(path)}")
    return EXIT_OK


def _cmd_run(args) -> int:
    script = _resolve_script(args.mission)
    module = _load_module(script)
    if not (callable(getattr(module, "build", None)) and callable(getattr(module, "criteria", None))):
        raise InputError("mission", f"{script} must define build(out_dir=None) and criteria(telemetry)")
    return _execute_args(module.build, module.criteria, args, getattr(module, "figures", None))


def _cmd_report(args) -> int:
    from .reporting import report
    from .telemetry import load

    target = _report_path(args.out) if args.out else None
    runs = [load(d) for d in args.dirs]
    for run in runs:
        if run.running:
            print(f"note: {run.path} is still running: its report shows the rows written so far")
        elif run.partial:
            print(f"note: {run.path} holds a partial run ({run.meta.get('stopped', 'killed')})")
    field = "out" if args.out else "dirs"
    if len(runs) == 1:
        print(f"report: {_write_report(lambda: report(runs[0], target), field, target)}")
    else:
        target = target or Path(runs[0].path).parent / "comparison.html"
        reference = _reference(args.dirs, args.reference)
        print(f"comparison: {_write_report(lambda: report(runs, target, reference=reference), field, target)}")
    return EXIT_OK


def _reference(dirs, reference) -> int:
    """The position of ``--reference DIR`` among the run directories given (the first without it)."""
    if reference is None:
        return 0
    places = [os.path.realpath(d) for d in dirs]
    if os.path.realpath(reference) not in places:
        raise InputError("reference", "must be one of the run directories given", f"got {reference!r}")
    return places.index(os.path.realpath(reference))


def _cmd_validate(args) -> int:
    from .validation import run_cases

    rows = run_cases()
    print(f"{'case':58s} {'method':10s} {'error':>10s} {'bound':>10s}")
    for case, method, error, bound, ok in rows:
        print(f"{case:58s} {method:10s} {error:10.3e} {bound:10.1e}  {'PASS' if ok else 'FAIL'}")
    return EXIT_OK if all(row[-1] for row in rows) else EXIT_FAILED


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="attsim", description="Spacecraft attitude-dynamics simulator")
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    parser.add_argument("--version", action="version", version=f"attsim {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    def command(name: str, help_: str, func: Callable) -> argparse.ArgumentParser:
        parser_ = sub.add_parser(name, help=help_)
        # SUPPRESS: without --debug here, the value given before the subcommand stays
        parser_.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help="show tracebacks")
        parser_.set_defaults(func=func)
        return parser_

    command("methods", "list the integrators", _cmd_methods)
    command("missions", "list the mission scripts in ./missions", _cmd_missions)
    command("validate", "run the analytic validation cases", _cmd_validate)
    run = command("run", "run a mission script", _cmd_run)
    run.add_argument("mission", help="a name from 'attsim missions' or a path to a .py script")
    _run_options(run)
    rep = command("report", "write the report of a run directory, or a comparison of several", _cmd_report)
    rep.add_argument("dirs", nargs="+", help="run directories")
    rep.add_argument("--out", help="the page to write ('.html' is added when missing; default: DIR/report.html, "
                                   "or comparison.html beside the first of several)")
    rep.add_argument("--reference", help="of several: the run the others are compared with (default: the first)")
    from .campaign.cli import add_arguments, run_command

    add_arguments(command("campaign", "run a Monte Carlo campaign of a mission (dask, resumable)", run_command))
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:  # argparse: 2 for bad usage, 0 for --help and --version
        return int(exit_.code or 0)
    return _guard(lambda: args.func(args), args.debug)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
