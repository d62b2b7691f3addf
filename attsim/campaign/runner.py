"""Monte Carlo campaigns: many runs of one mission with dispersed parameters, on ``dask.distributed``.

::

    campaign = attsim.Campaign("wheel_slew", runs=1000, seed=7, out_dir="reports/slew_mc")
    result = campaign.run()                      # a LocalCluster of processes on all cores
    result = campaign.run(client="tcp://scheduler:8786")   # the same campaign on an existing cluster
    result.rate, result.requirement_met, result.records

Run ``k`` draws its parameters from the mission's ``dispersions()`` with
:func:`attsim.dispersions.draw_parameters` (seed, k) and runs with the
mission seed :func:`attsim.dispersions.run_seed` (seed, k), so it depends
only on the campaign's seed and its index: any run can be repeated alone
(``attsim run MISSION --campaign DIR --index K``) and gives the same record.

A script that runs a campaign locally from Python needs the usual
``if __name__ == "__main__":`` guard: dask starts its worker processes by
``spawn``, which imports the main module again.

The directory (:mod:`attsim.campaign.records`) is resumable: a campaign
started again runs only the runs that have no record, and refuses to mix
two experiments (another mission script, seed, dispersions, duration,
integrator or envelope grid). It is held locked while a campaign runs: a second one into it
is refused. Records stream into Parquet parts at most
:data:`FLUSH_WALL_S` after they arrive, the envelopes' state at most
:data:`ENVELOPES_WALL_S` (runs recorded but not yet in the saved envelopes
are repeated for their envelope values only on resume); a worker lost
mid-run has its runs rescheduled by dask, a run that raises is an ERROR
record, and so is a run that takes longer than its time limit
(:mod:`attsim.campaign.timeouts`: the worker it hangs is restarted).
:mod:`attsim.campaign.execute` hands the runs to dask (short runs several
to a task).
"""

from __future__ import annotations

import contextlib
import datetime
import hashlib
import inspect
import math
import os
import time
import warnings
from pathlib import Path
from typing import NamedTuple

from .. import __version__
from .._core.validate import positive_int, positive_scalar, real_number, seed_int
from ..dispersions import draw_parameters, flatten, run_seed
from ..errors import AttsimWarning, InputError, add_note
from . import records as store
from .applied import check_applied
from .execute import compile_first, execute
from .processes import start_server, stop_server
from .stats import needs, passes_needed
from .timeouts import checked_run_timeout
from .worker import TELEMETRY_MODES, CampaignSpec, RunSpec, mission_dispersions, mission_module

__all__ = ["Campaign", "CampaignResult", "FLUSH_WALL_S"]

FLUSH_WALL_S = 1.0  # the longest a run's record waits in memory before it is on disk, wall seconds
ENVELOPES_WALL_S = 10.0  # the longest the saved envelope state lags the records (saving it takes ~50 ms)
CONNECT_TIMEOUT_S = 10.0  # the longest a campaign waits for a scheduler to answer (dask's default: 30 s)


class CampaignResult(NamedTuple):
    """What :meth:`Campaign.run` returns.

    Attributes
    ----------
    path : Path
        The campaign directory.
    records : pandas.DataFrame
        One row per run (drawn parameters, each criterion's value and verdict, status, wall time).
    rate : attsim.campaign.stats.Rate
        The runs that passed every criterion, with the confidence interval.
    requirement_met : bool
        The one-sided lower bound at the confidence is at least the required rate.
    ran : int
        The runs executed by this call (the others were on disk already).
    report : Path or None
        The campaign's ``report.html``.
    """

    path: Path              # the campaign directory
    records: object         # pandas.DataFrame, one row per run (records.py)
    rate: object            # attsim.campaign.stats.Rate of the runs that passed every criterion
    requirement_met: bool   # the Clopper-Pearson lower bound at the confidence >= the required rate
    ran: int                # runs executed by this call (the others were on disk already)
    report: Path | None     # report.html, when the report module is present


def _resolve_mission(mission) -> Path:
    from ..scripts import resolve_script

    if isinstance(mission, os.PathLike):
        mission = os.fspath(mission)
    if not isinstance(mission, str) or not mission.strip():
        raise InputError("mission", "must be a mission name or a path to a mission script", f"got {mission!r}")
    return resolve_script(mission).resolve()


def _check_build_accepts(build, names) -> None:
    signature = inspect.signature(build)
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in signature.parameters.values()):
        return
    for name in names:
        if name not in signature.parameters:
            raise InputError("dispersions", "each name must be a parameter of the mission's build()",
                             f"{name!r} is not one of {list(signature.parameters)}")


class Campaign:
    """A Monte Carlo campaign of one mission script.

    Parameters
    ----------
    mission : str or path
        A mission name (a script in ``./missions``) or a script path. The
        script defines ``build(out_dir=None, **params)`` and
        ``criteria(telemetry)``, and may define ``dispersions()`` (parameter
        name -> :class:`attsim.dispersions.Dispersion`) and
        ``envelopes(telemetry)`` (quantity -> series indexed by t). Without
        ``dispersions()`` the runs differ by their seed (sensor noise).
    runs : int
        Number of runs, indexed 0 .. runs - 1.
    seed : int
        The campaign's seed; run k's parameters and mission seed depend only
        on (seed, k).
    out_dir : path, optional
        The campaign directory (default ``reports/<mission>_campaign``).
    telemetry : {"summary", "decimated", "full"}
        What is kept of each run: its record only, its telemetry with at
        most 2,000 rows, or all of it (``runs/<k>/``).
    required_rate, confidence : float
        The campaign's requirement: at least ``required_rate`` of the runs
        pass, with ``confidence`` (one-sided Clopper-Pearson). What it needs
        of ``runs`` is :meth:`needs` (e.g. 996 of 1000 passing for 0.99 at
        0.95); too few runs to meet it even with none failing (fewer than 299
        for the defaults) is said by an :class:`~attsim.AttsimWarning`.
    duration, method : optional
        Overrides of the mission's duration (s) and integrator, as on
        ``attsim run``.
    envelope_points : int
        Times of the envelope grid over [0, duration]. Part of the
        experiment: a campaign resumed with another is refused.
    run_timeout_s : float, optional
        The longest a run may take, wall seconds; a run past it is an ERROR
        record "timeout: the run took longer than X s" and its worker is
        restarted. None (default): ``max(60 s, 20 x the median wall time)``
        of the runs that ran to their end, once 3 have; ``math.inf``: no
        limit (:mod:`attsim.campaign.timeouts`). Not part of the experiment:
        a resumed campaign may use another.
    """

    def __init__(self, mission, runs: int, seed: int = 0, out_dir=None, telemetry: str = "summary",
                 required_rate: float = 0.99, confidence: float = 0.95, duration=None, method=None,
                 envelope_points: int = 500, run_timeout_s: float | None = None):
        from ..script_runs import build_missions
        from ..engine.mission import Mission

        self.script = _resolve_mission(mission)
        self.runs = positive_int(runs, "runs", maximum=10**9)
        self.seed = seed_int(seed)
        if telemetry not in TELEMETRY_MODES:
            raise InputError("telemetry", f"must be one of {list(TELEMETRY_MODES)}", f"got {telemetry!r}")
        self.telemetry = telemetry
        for value, field in ((required_rate, "required_rate"), (confidence, "confidence")):
            if not 0.0 < real_number(value, field) < 1.0:
                raise InputError(field, "must be in (0, 1)", f"got {value!r}")
        self.required_rate, self.confidence = float(required_rate), float(confidence)
        if passes_needed(self.runs, self.required_rate, self.confidence) is None:
            warnings.warn(f"requirement: {self.requirement()}; {self.needs()}", AttsimWarning, stacklevel=2)
        self.duration_s = None if duration is None else positive_scalar(duration, "duration")
        self.method = method
        self.envelope_points = positive_int(envelope_points, "envelope_points", maximum=100_000)
        self.run_timeout_s = checked_run_timeout(run_timeout_s)
        self.out_dir = Path(out_dir) if out_dir is not None else Path("reports") / f"{self.script.stem}_campaign"
        module = mission_module(self.script)
        self.dispersions = mission_dispersions(vars(module))
        _check_build_accepts(module.build, self.dispersions)
        # the nominal mission fixes the envelope grid and checks the overrides once, before any worker starts
        nominal, single = build_missions(module.build, duration=self.duration_s, method=method)
        if not single:
            raise InputError("build", "must return one Mission in a campaign", f"got {len(nominal)} missions")
        if not isinstance(nominal[0], Mission):  # an attsim.Propagation: an integrator study, no closed loop to judge
            raise InputError("build", "must return an attsim.Mission in a campaign",
                             f"got {type(nominal[0]).__name__} (run it with 'attsim run')")
        self.duration_grid_s = float(nominal[0].duration_s)
        self._held = None  # the directory's lock while held() holds it
        check_applied(lambda params: build_missions(module.build, params=params)[0], self.dispersions, self.seed)

    def requirement(self) -> str:
        """The requirement in words: 'at least 0.99 of runs pass with 95% confidence'."""
        return f"at least {self.required_rate:.4g} of runs pass with {100.0 * self.confidence:.4g}% confidence"

    def needs(self, runs: int | None = None) -> str:
        """What the requirement needs of ``runs`` runs (default: this campaign's), from the statistics that judge it
        (:func:`attsim.campaign.stats.needs`)."""
        return needs(self.runs if runs is None else runs, self.required_rate, self.confidence)

    def parameters(self, index: int) -> dict:
        """Run ``index``'s drawn parameters."""
        return draw_parameters(self.dispersions, self.seed, index)

    def description(self) -> dict:
        """What campaign.json holds (criteria and envelope quantities fill in as the first runs report them)."""
        return {
            "mission": str(self.script), "mission_sha256": hashlib.sha256(self.script.read_bytes()).hexdigest(),
            "runs": self.runs, "seed": self.seed, "telemetry": self.telemetry,
            "requirement": {"rate": self.required_rate, "confidence": self.confidence},
            "criteria": [], "parameters": {name: d.describe() for name, d in self.dispersions.items()},
            "envelope_quantities": {},
            "envelope_grid": {"t_end_s": self.duration_grid_s, "points": self.envelope_points},
            "duration_s": self.duration_s, "method": self.method, "attsim": __version__,
            "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        }

    def spec(self) -> CampaignSpec:
        return CampaignSpec(str(self.script), self.seed, self.telemetry, str(self.out_dir.resolve()), self.duration_s,
                            self.method, self.duration_grid_s, self.envelope_points)

    def run(self, client=None, workers: int | None = None, progress: bool = False, report: bool = True,
            on_start=None) -> CampaignResult:
        """Run the runs that have no record yet; returns the campaign's result.

        Parameters
        ----------
        client : dask.distributed.Client or str, optional
            An existing cluster (a client, or its scheduler's address). By
            default a ``LocalCluster`` of ``workers`` processes (all cores)
            with one thread each is started and closed again.
        progress : bool
            A progress bar on stderr (runs done, failures, runs/hour, time left).
        on_start : callable, optional
            Called with the client once it is up (the CLI prints the dashboard address).

        Raises
        ------
        CampaignLockedError
            Another campaign holds the directory.
        InputError
            The directory holds another experiment (named fields differ).
        """
        if workers is not None:
            workers = positive_int(workers, "workers", maximum=4096)
        own_client = _connect(client) if isinstance(client, str) else None  # a bad address: refused before any file
        if client is None:  # its own cluster's workers: their server loads while the records are read
            start_server()
        lock = self._held or store.lock_campaign(self.out_dir)
        try:
            description = self._reconcile_description()
            return self._run_locked(description, own_client or client, workers, progress, report, on_start)
        except KeyboardInterrupt as exc:  # the command line's one line says what is kept and how to go on
            kept = len(store.read_records(self.out_dir))
            add_note(exc, f"all {kept} runs are recorded in {self.out_dir}; the same campaign again writes its "
                          "summary and report" if kept >= self.runs else
                     f"{kept} of {self.runs} runs are recorded in {self.out_dir}; the same campaign again runs only "
                     "the rest")
            raise
        finally:
            if lock is not self._held:
                lock.release()
            if own_client is not None:
                own_client.close()
            if client is None:  # its cluster's server, also when the campaign stopped before it had a cluster:
                stop_server()  # nothing of it is left to the caller's other process pools

    @contextlib.contextmanager
    def held(self):
        """Hold the directory's lock for a block (:meth:`run` inside it keeps it): e.g. to read what is done before
        running the rest, with no other campaign in between. Raises :class:`CampaignLockedError` when it is taken."""
        lock = store.lock_campaign(self.out_dir)
        self._held = lock
        try:
            yield self
        finally:
            self._held = None
            lock.release()

    def missing(self) -> list[int]:
        """The runs without a record in the directory (all of them for a new one); refuses another experiment's."""
        self._check_stored(self.description())
        done = set(store.read_records(self.out_dir)["run"]) if self.out_dir.is_dir() else set()
        return [k for k in range(self.runs) if k not in done]

    def _check_stored(self, description: dict):
        stored = store.read_campaign(self.out_dir)
        if stored is not None:
            differ = store.differences(stored, description)
            if differ:
                raise InputError("campaign", f"must match the campaign already in {self.out_dir} to resume it "
                                 "(or give another --out)", "; ".join(differ))
            if self.runs < stored.get("runs", 0):
                raise InputError("runs", f"must be at least the {stored['runs']} runs of the campaign in "
                                 f"{self.out_dir}", f"got {self.runs}")
        return stored

    def _reconcile_description(self) -> dict:
        description = self.description()
        stored = self._check_stored(description)
        if stored is not None:
            for key in ("criteria", "envelope_quantities", "created"):
                description[key] = stored.get(key, description[key])
        store.write_campaign(self.out_dir, description)
        return description

    def _run_locked(self, description, client, workers, progress, report, on_start) -> CampaignResult:
        from .envelope import Envelope

        labels = [c["label"] for c in description["criteria"]]
        done_records = store.read_records(self.out_dir, labels)
        done = set(int(k) for k in done_records["run"])
        failures = int((done_records["status"] != "OK").sum())
        envelopes, covered, units = store.load_envelopes(self.out_dir, Envelope)
        todo = [k for k in range(self.runs) if k not in done]
        # a record written just before a kill, whose envelope values were not saved: repeat the run for them only
        repeat = sorted(k for k in done if k not in covered)
        campaign = self.spec()
        # drawn as the runs are handed out: a million runs' parameters up front took minutes and gigabytes
        specs = _LazySpecs([(k, True) for k in todo] + [(k, False) for k in repeat],
                           lambda k, record: RunSpec(campaign, k, self.parameters(k), record))
        state = _State(self, description, envelopes, covered, units, done, failures)
        if specs:
            if client is None:  # its own cluster: compiled once here, said on stderr, before the progress bar
                compile_first(specs)
            bar = _progress_bar(self.runs, len(done)) if progress else None
            try:
                execute(specs, client, workers, state, bar, on_start, self.run_timeout_s)
            except BaseException:  # interrupted, or stopped by an error: every run taken is kept, envelopes too
                state.flush(envelopes=True)
                raise
            finally:
                if bar is not None:
                    bar.close()
        state.flush(envelopes=True)
        state.writer.compact(state.labels)
        records = store.read_records(self.out_dir, state.labels)
        from .stats import pass_rate, requirement_met

        passed = int((records["status"] == "OK").sum())
        rate = pass_rate(passed, len(records), self.confidence)
        met = requirement_met(passed, len(records), self.required_rate, self.confidence)
        page = _write_report(self.out_dir) if report else None
        return CampaignResult(self.out_dir, records, rate, met, len(todo), page)


class _State:
    """The client's side of a running campaign: records to write, envelopes to grow, campaign.json to complete."""

    def __init__(self, campaign: Campaign, description, envelopes, covered, units, done, failures):
        self.campaign, self.description = campaign, description
        self.envelopes, self.covered, self.units = envelopes, set(covered), dict(units)
        self.done, self.failures, self.ran = set(done), failures, 0
        self.labels = [c["label"] for c in description["criteria"]]
        self.writer = store.RecordWriter(campaign.out_dir)
        self.pending: dict[str, list] = {}  # quantity -> values of runs taken but not yet added to its envelope
        self.last_flush = self.last_envelopes = self.started = time.monotonic()

    def error_result(self, spec: RunSpec, message: str, wall_s: float = math.nan, worker: str = ""):
        """The record of a run that failed outside :func:`run_one` (its worker died every time, it timed out)."""
        record = {"run": spec.index, "seed": run_seed(self.campaign.seed, spec.index), "status": "ERROR",
                  "error": message, "wall_s": float(wall_s), "worker": worker,
                  **{f"p:{k}": v for k, v in flatten(spec.params).items()}}
        return record, (), {}, {}

    def take(self, spec: RunSpec, result) -> bool:
        """Add one run's result; True when it was a new record (a run is taken once, whatever dask delivers)."""
        record, criteria, envelopes, units = result
        index = spec.index
        if index not in self.covered:
            for name, values in envelopes.items():
                self.pending.setdefault(name, []).append(values)
            self.covered.add(index)
        described = False
        for label, bound, *declared in criteria:
            if label not in self.labels:
                self.labels.append(label)
                entry = {"label": label, "bound": bound}
                if declared and declared[0] is not None:  # drawn on the envelope of its quantity, over its window
                    entry["declared"] = {**declared[0], "run": index}
                self.description["criteria"].append(entry)
                described = True
        for name, unit in units.items():
            if name not in self.description["envelope_quantities"]:
                self.description["envelope_quantities"][name] = unit
                self.units[name] = unit
                described = True
        if described:
            store.write_campaign(self.campaign.out_dir, self.description)
        new = spec.record and index not in self.done
        if new:
            self.done.add(index)
            self.ran += 1
            self.failures += record["status"] != "OK"
            self.writer.add(record)
        self.flush_due()
        return new

    def flush_due(self) -> None:
        """:meth:`flush` when what is in memory has waited :data:`FLUSH_WALL_S`, or the saved envelopes lag the
        records by :data:`ENVELOPES_WALL_S` (also called while no result arrives: the runs taken before a stall are
        not held for it; nothing is written while nothing is new)."""
        now = time.monotonic()
        records_due = bool(self.writer.pending or self.pending) and now - self.last_flush >= FLUSH_WALL_S
        envelopes_due = self.last_envelopes < self.last_flush and now - self.last_envelopes >= ENVELOPES_WALL_S
        if records_due or envelopes_due:
            self.flush(envelopes=envelopes_due)

    def new_envelope(self):
        import numpy as np

        from .envelope import Envelope

        return Envelope(np.linspace(0.0, self.campaign.duration_grid_s, self.campaign.envelope_points))

    def flush(self, envelopes: bool = False) -> None:
        """Records first, then (every ENVELOPES_WALL_S, or when asked) the envelopes that cover them (a kill in
        between is reconciled on resume)."""
        self.writer.flush(self.labels)
        for name, values in self.pending.items():  # every run taken so far, in one vectorised add per quantity
            if name not in self.envelopes:
                self.envelopes[name] = self.new_envelope()
            self.envelopes[name].add_runs(values)
        self.pending = {}
        self.last_flush = time.monotonic()
        if envelopes or self.last_flush - self.last_envelopes >= ENVELOPES_WALL_S:
            store.save_envelopes(self.campaign.out_dir, self.envelopes, self.covered, self.units)
            self.last_envelopes = self.last_flush

    def runs_per_hour(self) -> float:
        elapsed = time.monotonic() - self.started
        return 3600.0 * self.ran / elapsed if elapsed > 0 else math.nan


def _progress_bar(total: int, done: int):
    from tqdm import tqdm

    return tqdm(total=total, initial=done, unit="run", desc="campaign", dynamic_ncols=True,
                bar_format="{desc}: {percentage:3.0f}%|{bar}| {n}/{total} runs{postfix} [{elapsed}<{remaining}]")


def _connect(address: str):
    """A client of the Dask scheduler at ``address``, or an InputError naming it (a bad address, no scheduler there
    within CONNECT_TIMEOUT_S, something else answering)."""
    from distributed import Client

    try:
        return Client(address, timeout=CONNECT_TIMEOUT_S)
    except Exception as exc:  # noqa: BLE001 - distributed raises OSError, ValueError, TimeoutError, ... (even MemoryError)
        lines = str(exc).strip().splitlines()
        raise InputError("scheduler", "must be the address of a running Dask scheduler, e.g. tcp://10.0.0.5:8786",
                         f"{address!r}: {type(exc).__name__}: {lines[0] if lines else ''}") from exc


class _LazySpecs:
    """The RunSpecs of ``(index, record)`` pairs, each made (its parameters drawn) when it is first read."""

    def __init__(self, runs, make):
        self.runs, self.make = runs, make

    def __len__(self) -> int:
        return len(self.runs)

    def __getitem__(self, part: slice) -> list:
        return [self.make(k, record) for k, record in self.runs[part]]


def _write_report(directory: Path):
    try:
        from .report import write_campaign_report
    except ImportError:  # the report module joins at merge (campaign-stats)
        return None
    return write_campaign_report(directory)
