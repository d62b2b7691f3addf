"""The ``attsim`` command line.

    attsim run SCRIPT_OR_NAME [--out DIR] [--duration S] [--seed N] [--method M] [--backend B] [--no-report]
    attsim report DIR [DIR ...] [--out FILE] [--reference DIR]  one run's report, or a comparison of several
    attsim missions                  the mission scripts in ./missions, one line each
    attsim methods                   the integrators, one line each
    attsim validate                  the analytic validation cases: case, method, error, bound, PASS/FAIL
    attsim compile [MISSION] [--status]   compile every unit (or a mission's) for this machine, once
    attsim campaign SCRIPT_OR_NAME --runs N ...   a Monte Carlo campaign (attsim.campaign.cli)
    attsim run SCRIPT_OR_NAME --campaign DIR --index K   run K of a campaign again, exactly
    attsim --version

Exit codes (:data:`EXIT_OK` ...): 0 success; 1 a mission criterion failed
(or could not be evaluated); 2 bad usage or bad input, including an error
in a mission script, a file that cannot be read or written, a run that
stopped on an error; 3 an internal error, i.e. an unexpected exception
raised inside attsim's own code (a bug to report); 130 interrupted (Ctrl-C;
the partial telemetry is kept, the line says where); 143 (SIGTERM) or 129
(SIGHUP) ended as an interrupt is. Every failure is one
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
import ast
import importlib
import os
import sys
from collections.abc import Callable
from pathlib import Path


from . import __version__
from ._core.signals import Terminated, terminations_interrupt
from ._core.validate import positive_int
from .engine.settings import BACKEND_NAMES
from .errors import AttsimError, InputError, one_line as _one_line
from .scripts import EXIT_FAILED, EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_OK, EXIT_READER_GONE, EXIT_USAGE, MISSIONS_DIR
from .scripts import load_module as _load_module, mission_scripts as _mission_scripts
from .scripts import resolve_script as _resolve_script
from .tracebacks import cause_line, describe, user_line

__all__ = ["main", "run_script", "EXIT_OK", "EXIT_FAILED", "EXIT_USAGE", "EXIT_INTERNAL", "EXIT_INTERRUPTED"]

# Re-exported for mission scripts and importable from here, but loaded on first use: ``attsim --help``, a mistyped
# command and a campaign's worker processes (which import the ``attsim`` script, hence this module) need none of
# pandas and numba, which these bring in.
_LAZY = {"execute": "attsim.script_runs", "judge": "attsim.criteria", "Criterion": "attsim.criteria",
         "NotEvaluated": "attsim.testing"}
__all__ += list(_LAZY)


def __getattr__(name: str):
    if name not in _LAZY:
        raise AttributeError(f"module 'attsim.cli' has no attribute {name!r}")
    value = getattr(importlib.import_module(_LAZY[name]), name)
    globals()[name] = value
    return value


def _first_doc_line(path: Path) -> str:
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
    parser.add_argument("--backend", choices=BACKEND_NAMES, default=None,
                        help="compiled (numba, once per machine), interpreted (no compiler; the same results) or auto "
                             "(the default: compiled when every unit is on this machine, else the quicker)")


def _execute_args(build: Callable, criteria: Callable, args, figures: Callable | None = None) -> int:
    if args.campaign is not None or args.index is not None:
        from .campaign.cli import execute_campaign_run

        return execute_campaign_run(build, criteria, args, figures)
    from .script_runs import execute

    return execute(build, criteria, args.out, args.duration, args.seed, args.method, not args.no_report,
                   debug=args.debug, figures=figures, backend=args.backend)


def run_script(build: Callable, criteria: Callable, argv: list[str] | None = None,
               figures: Callable | None = None) -> int:
    """Entry point of a mission script: ``python missions/x.py [--out DIR] [--duration S] ...``.

    A mission script ends with ``if __name__ == "__main__": sys.exit(run_script(build, criteria))``;
    ``attsim run x`` (a name in ``missions/`` or a path to any script) calls the same
    :func:`execute`. The options override what ``build()`` returned, after it
    returned: ``--duration`` sets each mission's ``duration_s``, ``--seed`` its
    ``seed``, ``--method`` its integrator; ``--out DIR`` calls
    ``build(out_dir=DIR)``, so a script run with it takes that keyword. A ``build()`` that
    derives something from the duration (a schedule spread over the run) must
    read ``mission.duration_s`` where it is used, not at build time.

    Parameters
    ----------
    build : callable
        ``build()`` (or ``build(out_dir=...)``): a :class:`~attsim.Mission`, a
        :class:`~attsim.studies.Propagation`, or a list of them (each with its
        own name or directory).
    criteria : callable
        ``criteria(telemetry)`` (a list of telemetries for a list of runs):
        the success criteria, ``(label, value, ok, bound)`` tuples or
        :class:`~attsim.Requirement` objects; see :func:`judge`.
    argv : list of str, optional
        The command-line arguments (default ``sys.argv[1:]``).
    figures : callable, optional
        ``figures(telemetry)``: the script's own plotly figures for its report.

    Returns
    -------
    int
        The exit code: 0 when every criterion passes, 1 when one fails, 2 for
        bad input (one line on stderr naming the field and the rule), 3 for an
        internal error, 130 when interrupted.
    """
    parser = argparse.ArgumentParser(description="Run this attsim mission")
    _run_options(parser)
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    parser.add_argument("--version", action="version", version=f"attsim {__version__}")
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:  # argparse: 2 for bad usage, 0 for --help
        return int(exit_.code or 0)
    return _guard(lambda: _execute_args(build, criteria, args, figures), args.debug)


def _guard(action: Callable[[], int], debug: bool) -> int:
    """Run a command; turn what escapes into one line on stderr and an exit code (or, with ``debug``, the traceback)."""
    try:
        with terminations_interrupt():
            return action()
    except KeyboardInterrupt as exc:  # Ctrl-C; SIGTERM, SIGHUP (Terminated) alike, with their word and code
        if debug:
            raise
        terminated = isinstance(exc, Terminated)
        _say(f"terminated ({exc})" if terminated else "interrupted", exc)
        return exc.exit_code if terminated else EXIT_INTERRUPTED
    except BrokenPipeError:  # the reader of the output went away (attsim methods | head -1): nothing to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # (the exit's flush would fail again)
        return EXIT_READER_GONE
    except AttsimError as exc:
        if debug:
            raise
        # bad input attsim was given from a script's line (a constructor in build()): that line; a user's law that
        # raised, said as the controller's error: the law's line
        where = user_line(exc) if isinstance(exc, InputError) else cause_line(exc)
        _say(f"{where}: {type(exc).__name__}: {_one_line(exc)}" if where else _one_line(exc), exc)
        return EXIT_USAGE
    except Exception as exc:
        if debug:
            raise
        origin, line = describe(exc)
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
    from .script_runs import write_pages
    from .telemetry.recorder import load

    target = _report_path(args.out) if args.out else None
    runs = [load(d) for d in args.dirs]
    for run in runs:
        if run.running:
            print(f"note: {run.path} is still running: its report shows the rows written so far")
        elif run.partial:
            print(f"note: {run.path} holds a partial run ({run.meta.get('stopped', 'killed')})")
    field = "out" if args.out else "dirs"
    if len(runs) == 1:
        print(f"report: {write_pages(lambda: report(runs[0], target), field, target)}")
    else:
        target = target or Path(runs[0].path).parent / "comparison.html"
        reference = _reference(args.dirs, args.reference)
        print(f"comparison: {write_pages(lambda: report(runs, target, reference=reference), field, target)}")
    return EXIT_OK


def _cmd_compile(args) -> int:
    from .engine import precompile
    from .engine.backend import missing
    from .engine.compile_record import print_compiled
    from .script_runs import build_missions

    jobs = positive_int(args.jobs, "--jobs")
    if args.status:
        absent = missing(precompile.all_needs())
        state = "compiling now (in another process)" if precompile.running() else "not compiling"
        print(f"{state}; {len(absent)} units not compiled on this machine yet"
              + (f": {', '.join(absent)}" if absent else " (every mission starts at once)"))
        return EXIT_OK
    if args.mission is not None:
        script = _resolve_script(args.mission)
        module = _load_module(script)
        missions, _ = build_missions(module.build)
        done = [name for mission in missions for name in mission.compile(jobs)]
    else:
        done = precompile.compile_all(say=print_compiled, jobs=jobs)
    print(f"{len(done)} units compiled" + ("" if done else ": every one was on this machine already"))
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
    """The ``attsim`` command: ``attsim run|campaign|missions|methods|compile|validate|report [options]``.

    Parameters
    ----------
    argv : list of str, optional
        The command-line arguments after ``attsim`` (default ``sys.argv[1:]``).

    Returns
    -------
    int
        The exit code, as :func:`run_script`'s.
    """
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
    compile_ = command("compile", "compile every unit (or a mission's) for this machine, once", _cmd_compile)
    compile_.add_argument("mission", nargs="?", help="a mission name or script: compile only what it needs")
    compile_.add_argument("--status", action="store_true", help="say whether a compile runs and what is missing")
    compile_.add_argument("--jobs", type=int, default=1,
                          help="compile every unit in this many processes at once (one a core; each ~0.5 GB)")
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
