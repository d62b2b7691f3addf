"""The command line of campaigns.

    attsim campaign MISSION --runs N [--seed S] [--workers K | --scheduler ADDRESS] [--out DIR]
                    [--telemetry summary|decimated|full] [--require RATE] [--confidence C]
                    [--duration S] [--method M] [--run-timeout S|inf] [--no-report]
    attsim run MISSION --campaign DIR --index K      re-run run K of a campaign exactly, with its telemetry and report

Exit codes of ``attsim campaign``: 0 when the campaign meets its
requirement (at least RATE of the runs pass, with confidence C), 1 when it
does not, 2 for bad usage or input.
"""

from __future__ import annotations

import hashlib
import warnings
from pathlib import Path

from ..errors import AttsimWarning, InputError

__all__ = ["add_arguments", "run_command", "execute_campaign_run"]


def add_arguments(parser) -> None:
    """The arguments of ``attsim campaign`` (the main parser makes the subcommand)."""
    parser.description = "Run a mission many times with dispersed parameters; resumable."
    parser.add_argument("mission", help="a name from 'attsim missions' or a path to a .py script")
    parser.add_argument("--runs", type=int, required=True, help="number of runs")
    parser.add_argument("--seed", type=int, default=0, help="the campaign's seed (default 0)")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--workers", type=int, help="local worker processes (default: all cores)")
    where.add_argument("--scheduler", help="address of an existing Dask scheduler, e.g. tcp://10.0.0.5:8786")
    parser.add_argument("--out", help="campaign directory (default reports/<mission>_campaign)")
    parser.add_argument("--telemetry", default="summary", choices=("summary", "decimated", "full"),
                        help="what is kept of each run (default summary: its record only)")
    parser.add_argument("--require", type=float, default=0.99, help="required pass rate (default 0.99)")
    parser.add_argument("--confidence", type=float, default=0.95, help="confidence of that rate (default 0.95)")
    parser.add_argument("--duration", type=float, help="override the mission's simulated time, s")
    parser.add_argument("--method", help="override the mission's integrator")
    parser.add_argument("--run-timeout", metavar="S",
                        help="the longest a run may take, wall seconds; a run past it is an ERROR record and its "
                             "worker is restarted (default: max(60, 20 x the median run's wall time); inf: no limit)")
    parser.add_argument("--no-report", action="store_true", help="skip the campaign report")


def run_command(args) -> int:
    from .._core.validate import positive_int

    if args.workers is not None:
        positive_int(args.workers, "workers", maximum=4096)
    if args.scheduler is not None:
        return _campaign(args)
    from .processes import start_server, stop_server

    start_server()  # its own cluster's workers' server loads attsim on another core while the campaign is built
    try:
        return _campaign(args)
    finally:  # bad input, a directory another campaign holds: the server goes too, even while it is still loading
        stop_server()


def _campaign(args) -> int:
    from .runner import Campaign
    from .stats import lower_bound, passes_needed

    with warnings.catch_warnings():  # the requirement's warning is said below, in the campaign's own words
        warnings.filterwarnings("ignore", message="requirement: ", category=AttsimWarning)
        campaign = Campaign(args.mission, args.runs, seed=args.seed, out_dir=args.out, telemetry=args.telemetry,
                            required_rate=args.require, confidence=args.confidence, duration=args.duration,
                            method=args.method, run_timeout_s=_seconds(args.run_timeout, "run_timeout_s"))
    print(f"campaign: {campaign.runs} runs of {campaign.script.name} (seed {campaign.seed}) -> {campaign.out_dir}")
    impossible = passes_needed(campaign.runs, campaign.required_rate, campaign.confidence) is None
    print(f"{'warning: ' if impossible else ''}requirement: {campaign.requirement()}; {campaign.needs()}", flush=True)

    def started(client) -> None:
        print(f"dask: {len(client.nthreads())} workers, dashboard {client.dashboard_link}", flush=True)

    with campaign.held():  # another campaign in the directory is refused before anything is said of its runs
        missing = campaign.missing()
        if len(missing) < campaign.runs:
            print(f"resuming: {campaign.runs - len(missing)} runs on disk, {len(missing)} to run")
        result = campaign.run(client=args.scheduler, workers=args.workers, progress=True,
                              report=not args.no_report, on_start=started)
    records = result.records
    counts = records["status"].value_counts()
    print(f"runs: {len(records)}  OK {counts.get('OK', 0)}  FAIL {counts.get('FAIL', 0)}  "
          f"ERROR {counts.get('ERROR', 0)}  ({result.ran} run now)")
    for column in (c for c in records.columns if c.startswith("ok:")):
        print(f"  {int(records[column].sum()):6d}/{len(records)} pass  {column[3:]}")
    for index, message in records.loc[records["status"] == "ERROR", ["run", "error"]].head(5).itertuples(index=False):
        print(f"  ERROR run {index}: {message}")
    rate = result.rate
    # the convention the requirement is judged by (and the report states): the one-sided lower bound
    low = lower_bound(rate.passed, rate.runs, rate.confidence) if rate.runs else float("nan")
    print(f"pass rate: {rate.rate:.4f} ({rate.passed}/{rate.runs}), at least {low:.4f} with {rate.confidence:.0%} "
          "confidence (one-sided Clopper-Pearson)")
    verdict = "PASS" if result.requirement_met else "FAIL"
    print(f"{verdict}  requirement: {campaign.requirement()}; {campaign.needs(rate.runs)}, {rate.passed} passed")
    if result.report is not None:
        print(f"report: {result.report}")
    return 0 if result.requirement_met else 1


def _seconds(text: str | None, field: str) -> float | None:
    """A number of seconds as typed (``inf`` too), checked by the campaign; a word that is no number names ``field``."""
    if text is None:
        return None
    try:
        return float(text)
    except ValueError:
        raise InputError(field, "must be a number of seconds > 0, or inf for no limit", f"got {text!r}") from None


def execute_campaign_run(build, criteria, args, figures=None) -> int:
    """``attsim run MISSION --campaign DIR --index K``: run K with its drawn parameters and seed, full telemetry."""
    from ..script_runs import execute
    from ..dispersions import draw_parameters, run_seed
    from .records import read_campaign
    from .worker import mission_dispersions

    if args.campaign is None or args.index is None:
        raise InputError("campaign", "--campaign DIR and --index K go together", "give both")
    if any(value is not None for value in (args.duration, args.seed, args.method)):
        raise InputError("campaign", "a campaign's run is re-run as it ran: --duration, --seed and --method come "
                         "from the campaign", "leave them out")
    directory = Path(args.campaign)
    description = read_campaign(directory)
    if description is None:
        raise InputError("campaign", "must be a campaign directory (holding campaign.json)", f"{directory}")
    if not 0 <= args.index < int(description["runs"]):
        raise InputError("index", f"must be in [0, {description['runs'] - 1}] for this campaign", f"got {args.index}")
    script = Path(build.__globals__["__file__"])  # the mission script's own namespace (also as __main__)
    if hashlib.sha256(script.read_bytes()).hexdigest() != description.get("mission_sha256"):
        raise InputError("mission", f"must be the campaign's script ({description['mission']}), unchanged",
                         f"{script} differs")
    params = draw_parameters(mission_dispersions(build.__globals__), int(description["seed"]), args.index)
    seed = run_seed(int(description["seed"]), args.index)
    out = args.out if args.out is not None else directory / "runs" / str(args.index)
    print(f"run {args.index} of campaign {directory}: seed {seed}"
          + "".join(f"\n  {name} = {_shown(value)}" for name, value in params.items()))
    return execute(build, criteria, out, description.get("duration_s"), seed, description.get("method"),
                   not args.no_report, debug=args.debug, figures=figures, params=params)


def _shown(value) -> str:
    import numpy as np

    return np.array2string(np.asarray(value), precision=6) if not isinstance(value, str) else value
