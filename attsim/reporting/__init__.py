"""The HTML report: one page per run, or a comparison of several.

``attsim.report(telemetry, path)`` writes one self-contained HTML file that
works offline. Its sections depend on what the run is:

* a **torque-free** run (no controller, actuator, schedule or disturbance):
  summary, body rates, attitude, angular momentum and energy with the
  conservation check on a log scale, nutation (with the analytic value of a
  symmetric top), the polhode with the separatrices and the spin's
  stability, the 3D view;
* a **controlled** run leads with what its engineer looks at first: summary
  and criteria, pointing (error on a log scale against the requirement,
  per axis, reference against actual attitude), body rates in deg/s,
  actuators (each quantity in its unit, limits, each actuator's own
  saturation), estimation, sensors as errors against the truth, modes and
  events, environment; then the free-body diagnostics over its longest
  torque-free interval where the body holds momentum (none otherwise: no
  section, no link); the 3D view. A section is there only for what the run
  has: no panel for a disturbance switched off.

A mission's own figures (``figures(telemetry)`` in its script, or
``extra_figures=``) get their own section. Several pages written together
(:func:`report_runs`) share one plotly.js file beside them.

Every trace is decimated to at most ``MAX_POINTS`` points with the
min/max-preserving MinMaxLTTB method; the full-rate telemetry stays in the
Parquet file next to the report. User text is HTML-escaped.
"""

from __future__ import annotations

import html
from pathlib import Path
from collections.abc import Sequence

import numpy as np

from .. import analysis
from .._core.validate import path_like, sequence
from ..errors import InputError, add_note, exit_as_error, one_line
from . import actuators
from . import comparison
from . import environment
from . import estimation
from . import freebody
from . import pointing
from . import sensors
from .page import Section, as_plot, plotly_js_path, write_page
from .runinfo import applied_torque, is_controlled, longest_interval, torque_free_mask
from .style import MAX_POINTS, Plot, decimate
from .summary import summary

__all__ = ["report", "report_runs", "MAX_POINTS", "classify_spin"]

classify_spin = analysis.classify_spin  # where missions written against an earlier attsim look for it
_decimate = decimate  # the name earlier tests use
MIN_FREE_ROWS = 50  # a torque-free interval shorter than this says too little about conservation
AT_REST = 1e-9  # momentum below this fraction of the run's largest is round-off: nothing to conserve


def _holds_momentum(tel, rows: slice) -> bool:
    """False when the momentum over ``rows`` is round-off against the run's largest (a body and wheels at rest)."""
    J = np.asarray(tel.meta["inertia_kg_m2"], dtype=float)
    parts = analysis.total_momentum(tel.df, J, tel.meta.get("components", []))
    largest = float(np.linalg.norm(parts.inertial, axis=1).max(initial=0.0))
    there = float(np.linalg.norm(parts.inertial[rows], axis=1).max(initial=0.0))
    return there > AT_REST * max(largest, parts.scale)


def _free_body(tel, controlled: bool) -> list[Section]:
    """The free-body diagnostics: over the whole of a torque-free run, or over the longest torque-free interval of
    a controlled one where the body holds momentum; nothing (no section, no link) when a controlled run has none."""
    if "inertia_kg_m2" not in tel.meta or len(tel.df) < 2:
        return []
    if not controlled:
        return freebody.sections(tel)
    if applied_torque(tel.meta) is not None:  # acts throughout (the summary says what it is)
        return []
    rows = longest_interval(torque_free_mask(tel.df, tel.meta))
    length = rows.stop - rows.start
    if length >= MIN_FREE_ROWS and _holds_momentum(tel, rows):
        t = tel.df.index.to_numpy()
        note = (
            f"Over the longest torque-free interval, t = {t[rows.start]:.6g} to {t[rows.stop - 1]:.6g} s "
            f"({length} rows): no actuator output and no disturbance above round-off there."
        )
        return freebody.sections(tel, rows, note)
    return []


def _attitude_3d(tel) -> Section | None:
    meta = tel.meta
    if "inertia_kg_m2" not in meta or len(tel.df) < 1:
        return None
    # only the animation's frames are drawn: everything below is computed on those rows alone
    picks = np.unique(np.linspace(0, len(tel.df) - 1, min(freebody.ANIMATION_FRAMES, len(tel.df))).astype(int))
    df = tel.df.iloc[picks]
    J, moments, R_BP = freebody.principal(meta)
    parts = analysis.total_momentum(df, J, meta.get("components", []))
    directions = {}
    geo = environment.geometry(df, meta)
    if geo is not None:
        directions = {"Sun": ("#e6a700", geo.sun_I), "nadir": ("#6b4f00", geo.nadir_I)}
    q_ref, _ = pointing.reference(df, meta)
    plot = freebody.attitude_3d(df, moments, R_BP, parts.inertial, parts.scale, directions, q_ref)
    return Section("attitude3d", "3D attitude", [plot])


def single_sections(tel, criteria, extra_figures=()) -> list[Section]:
    """The sections of one run's page, in order (see the module docstring)."""
    controlled = is_controlled(tel.meta)
    kind = (
        "A controlled run (control, actuators, disturbances or an applied torque act on it): pointing, rates and "
        "actuators first."
        if controlled
        else "A torque-free run: the free-body diagnostics describe the whole run."
    )
    if controlled and len(tel.df) and pointing.pointing_error(tel.df.iloc[:1], tel.meta) is None:
        kind += (" It has no pointing section: no attitude reference is recorded (no controller with a target or a "
                 "guidance law, no q_ref columns), as in a detumbling.")
    out = [Section("summary", "Summary", [summary(tel, criteria, kind)])]
    if len(tel.df) == 0:
        return out
    if controlled:
        shapes = estimation.mode_shapes(tel.df, tel.meta)
        out.append(pointing.section(tel, criteria, shapes))
        out.append(pointing.rates_section(tel, criteria))
        out.append(actuators.section(tel))
        out.append(estimation.estimation_section(tel, criteria))
        out.append(sensors.section(tel))
        out.append(estimation.timeline_section(tel))
        out.append(environment.section(tel))
        if not any(s is not None and s.anchor == "pointing" for s in out):
            out.append(Section("attitude", "Attitude", [pointing.attitude_plot(tel.df)]))
        out += _free_body(tel, controlled)
    else:
        out.append(pointing.rates_section(tel, criteria))
        q_ref, _ = pointing.reference(tel.df, tel.meta)
        out.append(Section("attitude", "Attitude", [pointing.attitude_plot(tel.df, q_ref)]))
        out += _free_body(tel, controlled)
        out.append(sensors.section(tel))
        out.append(estimation.estimation_section(tel, criteria))
        out.append(estimation.timeline_section(tel))
        out.append(environment.section(tel))
    out.append(_attitude_3d(tel))
    if extra_figures:
        out.append(Section("figures", "Mission figures", list(extra_figures)))
    return [s for s in out if s is not None]


def _figure_list(figures) -> list:
    """A user's figures as a list: None, one figure, or any sequence or iterable of them."""
    if figures is None:
        return []
    if isinstance(figures, Plot) or hasattr(figures, "to_plotly_json"):  # one figure (itself iterable: its keys)
        return [figures]
    if isinstance(figures, (str, bytes, dict)) or not hasattr(figures, "__iter__"):
        return [figures]  # refused below, with its type
    return list(figures)


def _user_plots(figures, field: str) -> list[Plot]:
    """The user's figures as :class:`Plot` (their titles above them), or an InputError naming the first bad one."""
    plots = []
    for k, figure in enumerate(_figure_list(figures)):
        if not (isinstance(figure, Plot) or hasattr(figure, "to_plotly_json")):
            raise InputError(f"{field}[{k}]", "must be a plotly figure", f"got {type(figure).__name__}")
        try:
            plots.append(as_plot(figure))
        except Exception as exc:  # noqa: BLE001 - a figure plotly cannot serialise: say which, and why
            raise InputError(f"{field}[{k}]", "must be a plotly figure that can be drawn",
                             f"{type(exc).__name__}: {one_line(exc)}") from exc
    return plots


def _mission_figures(figures, run) -> tuple[list, Exception | None]:
    """``figures(run)`` of a mission script as plots, or (a sentence in their place, the error) when it fails.

    The page is written either way: a bug in the plotting code does not cost the run's report. Neither does a
    ``sys.exit()`` there (it would end the process before any page is written, with exit 0): it becomes an
    InputError, whose traceback is the exit's (the script's line).
    """
    try:
        return _user_plots(figures(run), "figures(telemetry)"), None
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # noqa: BLE001 - the user's code: reported on the page, then raised
        if not isinstance(exc, Exception):  # SystemExit, GeneratorExit
            exc = exit_as_error(exc, "figures(telemetry)", "must return plotly figures, not end the process")
        text = f"{type(exc).__name__}: {one_line(exc)}"  # a user's exception whose __str__ raises still gets a line
        return [f"<p class='note bad'>The mission script's figures(telemetry) failed, so its figures are not shown "
                f"(the rest of the report is complete): {html.escape(text)}</p>"], exc


def _check_runs(telemetry) -> list:
    runs = list(telemetry) if isinstance(telemetry, (list, tuple)) else [telemetry]
    if not runs:
        raise InputError("telemetry", "must hold at least one run")
    for run in runs:
        if not hasattr(run, "df") or not hasattr(run, "meta"):
            raise InputError(
                "telemetry", "must be attsim Telemetry (from Mission.run or attsim.load)", f"got {type(run).__name__}"
            )
    return runs


def report(telemetry, path=None, criteria=None, extra_figures: Sequence = (), plotlyjs="inline",
           reference=None) -> Path:
    """Write the HTML report of one run, or a comparison of several.

    Parameters
    ----------
    telemetry : Telemetry or sequence of Telemetry
        One run, or several for a comparison page.
    path : path, optional
        Output file (default ``<run directory>/report.html``).
    criteria : sequence of (label, value, ok, bound), optional
        Success criteria; defaults to ``telemetry.meta["criteria"]``. For a
        comparison, one list for all runs (each run shows the rows naming
        its method or name) or one list per run.
    extra_figures : plotly figure or sequence of them, optional
        Your own figures, shown in their own section (one run's page).
    plotlyjs : "inline" or path
        "inline" (default) embeds plotly.js (compressed) in the page; a path
        writes plotly.js there once and the page references it (pages
        written together share it).
    reference : int or Telemetry, optional
        A comparison's reference run (its index, or the run itself): the
        others' differences are to it. Default: the first.

    Returns
    -------
    Path
        The file written.
    """
    runs = _check_runs(telemetry)
    if len(runs) > 1:
        comparison.reference_index(runs, reference)  # refused before anything is written
    return _write(runs, path, criteria, _user_plots(extra_figures, "extra_figures"), plotlyjs, reference)


def _write(runs, path, criteria, extra: list, plotlyjs, reference=None) -> Path:
    """:func:`report` once its figures are plots (or a sentence saying why they are missing)."""
    first = runs[0]
    if path is None:
        if first.path is None:
            raise InputError("path", "must be given for telemetry that has no run directory")
        if hasattr(first, "check_directory"):  # a later run into its directory: the page would sit beside its rows
            first.check_directory()
        path = Path(first.path) / "report.html"
    path = Path(path_like(path, "path", "file"))
    if criteria is not None:
        criteria = sequence(criteria, "criteria")
        for k, criterion in enumerate(criteria):
            if isinstance(criterion, (str, bytes)) or not isinstance(criterion, Sequence) or not (
                    len(criterion) == 4 or (len(criterion) == 5 and isinstance(criterion[4], dict))):
                raise InputError(f"criteria[{k}]", "must be (label, value, ok, bound)", f"got {criterion!r}")
    if len(runs) == 1:
        title = first.meta.get("name", "attsim run")
        sections = single_sections(first, criteria if criteria is not None else first.meta.get("criteria"), extra)
    else:
        title = comparison.title(runs)
        sections = comparison.sections(runs, criteria, reference)
    footer = "<p><small>attsim report; full-rate telemetry in telemetry.parquet beside each run's page.</small></p>"
    try:
        return write_page(path, title, sections, plotlyjs, footer)
    except OSError as exc:  # a directory at path, a file among its parents, no permission
        raise InputError("path", "must be a file that can be written", f"{path}: {exc.strerror or exc}") from None


def comparison_name(runs) -> str:
    """The file name of a mission's comparison page: ``<words every run's name starts with>_comparison.html``.

    ``free_rigid_body_exact``, ``free_rigid_body_rk4``, ... give ``free_rigid_body_comparison.html``: missions whose
    runs sit side by side in ``reports/`` keep their comparisons apart (each wrote ``reports/comparison.html``, the
    last one run overwriting the others'). Runs whose names share no leading word (a mission's own directory
    holds them) give ``comparison.html``.
    """
    words = [str(run.meta.get("name", "")).split("_") for run in runs]
    common = []
    for group in zip(*words):
        if len(set(group)) > 1:
            break
        common.append(group[0])
    if common and all(len(w) > len(common) for w in words):
        return "_".join(common) + "_comparison.html"
    return "comparison.html"


def report_runs(runs, criteria=None, figures=None, comparison_path=None) -> list[Path]:
    """Reports of runs made together (one mission's runs): one page each and, for several, a comparison.

    Several pages share one plotly.js written beside them (``plotly-<version>.min.js`` in the directory
    holding the comparison page, named by :func:`comparison_name`); one run's page embeds it.
    ``figures(telemetry)`` gives a run's own figures (one plotly figure or a list). Returns the pages
    written, the comparison last. When ``figures`` raises or returns something that is not a figure,
    every page is still written (that page says so in place of the figures) and then its error is
    raised, noting where the pages are.
    """
    runs = _check_runs(runs)
    shared = len(runs) > 1
    where = Path(comparison_path) if comparison_path is not None else \
        Path(runs[0].path).parent / comparison_name(runs)
    library = plotly_js_path(where.parent) if shared else "inline"
    pages, failed = [], None
    shares = comparison.share_criteria(runs, criteria)[0] if shared and criteria is not None else None
    for k, run in enumerate(runs):
        extra, error = _mission_figures(figures, run) if figures is not None else ([], None)
        failed = failed or error
        own = shares[k] if shares is not None else criteria
        pages.append(_write([run], None, own if (own or not shared) else None, extra, library))
    if shared:
        pages.append(_write(runs, where, criteria, [], library))
    if failed is not None:
        add_note(failed, "the report was written without the mission's figures: " + ", ".join(map(str, pages)))
        raise failed
    return pages

