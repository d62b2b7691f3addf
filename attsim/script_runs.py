"""Running a mission script: its ``build()`` with the overrides, its runs, criteria and reports.

A mission script defines ``build(out_dir=None, **params)`` returning a
:class:`~attsim.Mission` (or a list of them) and ``criteria(telemetry)``;
:func:`execute` builds its missions with the command line's overrides
(:func:`build_missions`: out_dir, duration, seed, method, a campaign's drawn
parameters), runs them, judges the criteria, keeps them in each run's
``meta.json`` and writes the reports. ``attsim run`` and a mission script's
own ``__main__`` (:func:`attsim.cli.run_script`) call it; campaigns build
their runs with :func:`build_missions`.
"""

from __future__ import annotations

import inspect
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

from ._core.validate import safe_name
from .criteria import Criterion, NotEvaluated, SharedLabelError, judge, passed, record_criteria
from .criteria import one_line as _one_line, shown as _shown
from .errors import InputError, add_note
from .scripts import EXIT_FAILED, EXIT_OK, call_script
from .telemetry.lock import RunDirectoryLockedError
from .tracebacks import describe

__all__ = ["build_missions", "execute", "write_pages", "EXIT_OK", "EXIT_FAILED"]


def _check_runs(missions) -> list:
    from .engine.mission import Mission
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
    from .engine.mission import ENGINE_METHODS

    built = _call_build(build, {"out_dir": out, **(params or {})} if out is not None or params else {})
    single = not isinstance(built, (list, tuple))
    missions = _check_runs(built)
    for mission in missions:
        if out is not None and not single:
            mission.out_dir = Path(out) / mission.name
        if duration is not None:
            from ._core.validate import positive_scalar

            mission.duration_s = positive_scalar(duration, "duration")
        if seed is not None:
            mission.seed = seed  # checked by the mission's setting (attsim._core.validate.seed_int)
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
            debug: bool = False, figures: Callable | None = None, params=None, backend: str | None = None) -> int:
    """Build, override, run, judge and report a mission; returns the exit code (0, or 1 when a criterion fails).

    What :func:`~attsim.cli.run_script` and ``attsim run`` do after reading
    their options, callable from Python (a notebook, a test). An exception
    raised by ``criteria`` is a failed criterion, not an error (with
    ``debug``, it is raised).

    Parameters
    ----------
    build, criteria, figures : callable
        The mission script's functions, as :func:`~attsim.cli.run_script` takes them.
    out : str or path, optional
        The run's directory (``build(out_dir=out)``; a list of runs: one
        folder each under it). Default: what ``build`` chose.
    duration : float, optional
        Simulated time, s: overrides each returned mission's ``duration_s``
        after ``build()`` returned.
    seed : int, optional
        Overrides each mission's ``seed`` (>= 0).
    method : str, optional
        Overrides each mission's integrator (``attsim methods`` lists them).
    write_report : bool, default True
        Write each run's HTML report (``--no-report`` is False).
    debug : bool, default False
        Let a criterion's own exception through (the command line's ``--debug``
        also shows tracebacks).
    params : dict, optional
        Keyword arguments for ``build`` (a campaign's parameters of one run).
    backend : {"auto", "compiled", "interpreted"}, optional
        The mission loop's backend (:meth:`attsim.Mission.run`); default ``auto``.

    Raises
    ------
    AttsimError, KeyboardInterrupt, Exception
        What stops a run (bad input, a user script's exception, an interrupt),
        with a note saying where its partial telemetry is;
        :func:`~attsim.cli.main` and :func:`~attsim.cli.run_script` turn that
        into one line and an exit code.
    """
    from .reporting import report_runs

    missions, single = build_missions(build, out, duration, seed, method, params)
    runs = []
    for mission in missions:
        since = time.time() - 1.0  # file times are coarser than the clock on some file systems
        try:
            runs.append(mission.run(progress=sys.stderr.isatty(), backend=backend))  # no progress bar in a log
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
        results = [Criterion("criteria(telemetry)", NotEvaluated(f"it raised {describe(exc)[1]}"), False, "")]
    _keep_criteria(runs, results)
    for run in runs:
        meta = run.meta
        print(f"{meta['name']}: {meta['duration_s']:.6g} s simulated in {meta['wall_s']:.2f} s wall -> {run.path}")
    for label, value, ok, bound in results:
        print(f"{'PASS' if ok else 'FAIL'}  {label}: {_shown(value)}" + (f" (bound {bound})" if bound else ""))
    if write_report:
        pages = write_pages(lambda: report_runs(runs, criteria=results, figures=figures), "out", runs[0].path)
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


def write_pages(write: Callable, field: str, path=None):
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
