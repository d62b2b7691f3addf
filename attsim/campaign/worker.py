"""One run of a campaign, as a worker process does it.

A worker (a ``dask.distributed`` worker process, or the caller's own process
when a run is repeated alone) keeps its imports, its numba code and the
mission script it has loaded between runs: :func:`mission_module` loads a
script once per path and modification time. :func:`run_one` builds the
mission with the run's drawn parameters (``build(out_dir, **params)``), gives
it the run's seed, runs it, judges it with the script's ``criteria`` and
samples its envelope quantities on the campaign's time grid, and returns a
small :class:`RunResult`. It never raises for a failing run: an exception
becomes an ERROR record with its message.

Telemetry: in "summary" mode a run keeps its telemetry in memory and writes
no file (``Mission.run(in_memory=True)``); "full" keeps the run's directory at
``runs/<k>``; "decimated" keeps it with at most :data:`DECIMATED_ROWS`
telemetry rows (every n-th row, first and last kept). The criteria are
always evaluated on the full telemetry.
"""

from __future__ import annotations

import math
import os
import socket
import time
from pathlib import Path
from typing import NamedTuple

import numpy as np

from ..analysis import body_rate_deg_s
from ..dispersions import checked, flatten, run_seed
from ..script_runs import build_missions
from ..errors import InputError
from ..scripts import call_script, load_module
from .records import RUNS_DIR
from .timeouts import announce_start

__all__ = ["CampaignSpec", "RunSpec", "RunResult", "TELEMETRY_MODES", "DECIMATED_ROWS", "mission_module",
           "mission_dispersions", "run_one", "run_many", "judge", "default_envelopes", "quantity_unit", "run_directory"]

TELEMETRY_MODES = ("summary", "decimated", "full")
DECIMATED_ROWS = 2000
_UNIT_SUFFIXES = (("_deg_s", "deg/s"), ("_rad_s", "rad/s"), ("_deg", "deg"), ("_rad", "rad"), ("_Nms", "N m s"),
                  ("_Nm", "N m"), ("_Am2", "A m^2"), ("_T", "T"), ("_s", "s"), ("_m", "m"))


class CampaignSpec(NamedTuple):
    """What every run of a campaign shares (sent with each run: a few short strings and numbers)."""

    script: str               # the mission script, absolute path (on a cluster: the same path on every worker)
    seed: int                 # the campaign's seed
    telemetry: str            # "summary", "decimated" or "full"
    directory: str            # the campaign directory, absolute
    duration_s: float | None  # override of the mission's duration
    method: str | None        # override of the mission's integrator
    envelope_t_end_s: float   # the envelope grid: envelope_points times over [0, envelope_t_end_s]
    envelope_points: int


class RunSpec(NamedTuple):
    campaign: CampaignSpec
    index: int
    params: dict              # the run's drawn parameters (dispersions.draw_parameters)
    record: bool = True       # False: a run repeated only for its envelope values (its record is on disk)


class RunResult(NamedTuple):
    record: dict              # the record's columns (records.py)
    criteria: tuple           # ((label, bound, declared or None), ...) in the script's order; () for an ERROR
    envelopes: dict           # {quantity: values on the envelope grid}; {} for an ERROR
    units: dict               # {quantity: unit}


_MODULES: dict = {}
_WARM: set = set()  # the mission scripts this process has run (their loop compiled or loaded from numba's cache)


def mission_module(script):
    """The mission script's module, loaded once per path and modification time in this process."""
    path = Path(script)
    mtime = path.stat().st_mtime_ns
    cached = _MODULES.get(str(path))
    if cached is not None and cached[0] == mtime:
        return cached[1]
    module = load_module(path)
    if not (callable(getattr(module, "build", None)) and callable(getattr(module, "criteria", None))):
        raise InputError("mission", f"{path} must define build(out_dir=None, **params) and criteria(telemetry)")
    _MODULES[str(path)] = (mtime, module)  # an edited script replaces its older version
    return module


def mission_dispersions(namespace) -> dict:
    """The dispersions a mission script declares: its ``dispersions()`` checked (:func:`attsim.dispersions.checked`).

    ``namespace`` is the script's globals (a module's ``vars``, or ``build.__globals__``). A script without
    ``dispersions`` (or with the ``attsim.dispersions`` module under that name) disperses nothing.
    """
    import types

    declared = namespace.get("dispersions")
    if declared is None or isinstance(declared, types.ModuleType):
        return {}
    if not callable(declared):
        raise InputError("dispersions", "must be a function of the mission script returning {name: Dispersion}",
                         f"got a {type(declared).__name__}: write def dispersions(): return {{...}}")
    return checked(call_script(declared, "dispersions()"))


def run_directory(campaign_dir, index: int) -> Path:
    return Path(campaign_dir) / RUNS_DIR / str(index)


def _worker_name() -> str:
    try:
        from distributed import get_worker

        return get_worker().address
    except (ImportError, ValueError):
        return f"{socket.gethostname()}:{os.getpid()}"


def judge(results, telemetry=None) -> tuple[dict, str, tuple]:
    """``(columns, status, ((label, bound, declared), ...))`` of a script's ``criteria`` list.

    Judged by the function ``attsim run`` judges with
    (:func:`attsim.criteria.judge`, verdict :func:`attsim.criteria.passed`),
    so the record's status is the verdict ``attsim run --campaign DIR --index
    K`` prints: a NaN value or one the run could not evaluate (e.g. it ended
    before the time it is taken at) never passes, and two criteria of one
    label are refused (:class:`attsim.criteria.SharedLabelError`, an ERROR
    record) rather than kept in one column. The ``v:`` column holds the value
    as a float, NaN for one that is not a number (a mode's name, a vector:
    its verdict stands). ``declared`` is a declared criterion's record
    (:mod:`attsim.requirements`) without this run's intervals, or None.
    """
    from ..criteria import judge as judge_criteria, passed

    judged = judge_criteria(results, telemetry)
    columns = {}
    for label, value, ok, _ in judged:
        try:
            number = float(value)
        except (TypeError, ValueError):  # also a NotEvaluated
            number = float("nan")
        columns[f"v:{label}"] = number
        columns[f"ok:{label}"] = bool(ok)
    return columns, "OK" if passed(judged) else "FAIL", tuple((str(c.label), str(c.bound), _described(c))
                                                              for c in judged)


def _described(criterion) -> dict | None:
    """What a campaign keeps of a declared criterion: its quantity, bound and window (one run's intervals)."""
    declared = getattr(criterion, "declared", None)
    if declared is None:
        return None
    return {k: v for k, v in declared.items() if k not in ("at_s", "at_value", "margin")}


def quantity_unit(name: str) -> str:
    """The unit a quantity's name ends with (``rate_deg_s`` -> ``deg/s``), or ""."""
    return next((unit for suffix, unit in _UNIT_SUFFIXES if name.endswith(suffix)), "")


def default_envelopes(tel) -> dict:
    """The body-rate norm in deg/s, and ``att_err_deg`` when the telemetry has that column."""
    import pandas as pd

    df = tel.df
    quantities = {"rate_deg_s": pd.Series(body_rate_deg_s(df), index=df.index)}
    if "att_err_deg" in df.columns:
        quantities["att_err_deg"] = df["att_err_deg"]
    return quantities


def _on_grid(series, times_s: np.ndarray) -> np.ndarray:
    """Linear interpolation at ``times_s`` inside the series' time span, NaN outside it (no data there)."""
    t = np.asarray(series.index, dtype=float)
    v = np.asarray(series.to_numpy(), dtype=float)
    if t.size == 0:
        return np.full(times_s.shape, np.nan)
    values = np.interp(times_s, t, v)
    values[(times_s < t[0]) | (times_s > t[-1])] = np.nan
    return values


def _decimate(run_dir: Path) -> None:
    """Keep at most DECIMATED_ROWS rows of the run's telemetry (every n-th, the last one too), atomically."""
    import json

    import pyarrow.parquet as pq

    from ..telemetry.recorder import META_FILE, TELEMETRY_FILE

    table = pq.read_table(run_dir / TELEMETRY_FILE)
    rows = table.num_rows
    if rows <= DECIMATED_ROWS:
        return
    step = math.ceil((rows - 1) / (DECIMATED_ROWS - 1))
    keep = np.unique(np.append(np.arange(0, rows, step), rows - 1))
    tmp = run_dir / (TELEMETRY_FILE + ".decimating")
    pq.write_table(table.take(keep), tmp)
    os.replace(tmp, run_dir / TELEMETRY_FILE)
    meta_path = run_dir / META_FILE
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    meta.update(rows=int(len(keep)), decimated_from_rows=rows, decimation_step=step)
    meta_path.write_text(json.dumps(meta, indent=2), encoding="utf-8")


def run_one(spec: RunSpec) -> RunResult:
    """Run one campaign run and return its record; a failure of the run is an ERROR record, never an exception."""
    start = time.perf_counter()
    campaign, index = spec.campaign, spec.index
    seed = run_seed(campaign.seed, index)
    record = {"run": index, "seed": seed, "status": "ERROR", "error": "", "wall_s": float("nan"),
              "worker": _worker_name(), **{f"p:{k}": v for k, v in flatten(spec.params).items()}}
    try:
        module = mission_module(campaign.script)
        out_dir = None if campaign.telemetry == "summary" else run_directory(campaign.directory, index)
        tel = _run(module, campaign, spec.params, seed, out_dir)
        columns, status, criteria = judge(call_script(module.criteria, "criteria(telemetry)", tel), tel)
        quantities = call_script(getattr(module, "envelopes", default_envelopes), "envelopes(telemetry)", tel)
        times_s = np.linspace(0.0, campaign.envelope_t_end_s, campaign.envelope_points)
        envelopes = {name: _on_grid(series, times_s) for name, series in quantities.items()}
        if campaign.telemetry == "decimated":
            _decimate(out_dir)
        record.update(columns, status=status)
        result = RunResult(record, criteria, envelopes, {name: quantity_unit(name) for name in envelopes})
    except Exception as exc:  # noqa: BLE001 - any failure of a run is that run's ERROR record
        message = str(exc).strip().splitlines()
        record["error"] = f"{type(exc).__name__}: {message[0] if message else ''}".rstrip(": ")
        result = RunResult(record, (), {}, {})
    record["wall_s"] = time.perf_counter() - start
    return result


def run_many(specs) -> list[RunResult]:
    """:func:`run_one` of each spec in turn: a campaign's task (several short runs a task cost dask less).

    Each run's start is announced to the campaign's client, which times it
    (:mod:`attsim.campaign.timeouts`)."""
    results = []
    for spec in specs:
        announce_start(spec.index, cold=spec.campaign.script not in _WARM)
        results.append(run_one(spec))
        _WARM.add(spec.campaign.script)
    return results


def _mission(module, campaign: CampaignSpec, params: dict, seed: int, out_dir: Path | None):
    """The run's mission, built as the campaign builds it (one mission a run)."""
    missions, single = build_missions(module.build, out=out_dir, duration=campaign.duration_s, seed=seed,
                                      method=campaign.method, params=params)
    if not single:
        raise InputError("build", "must return one Mission in a campaign", f"got {len(missions)} missions")
    return missions[0]


def _run(module, campaign: CampaignSpec, params: dict, seed: int, out_dir: Path | None):
    """The run's telemetry: in its directory ``out_dir``, or in memory when None (files nobody would read). The
    compiled backend: the campaign compiled the mission's units before its workers started."""
    return _mission(module, campaign, params, seed, out_dir).run(in_memory=out_dir is None, backend="compiled")


def compile_units(spec: RunSpec) -> list[str]:
    """Compile the units of run ``spec``'s mission on this machine (before the campaign's runs start); the names
    compiled (none when the machine has them all)."""
    campaign = spec.campaign
    mission = _mission(mission_module(campaign.script), campaign, spec.params, run_seed(campaign.seed, spec.index),
                       None)
    return mission.compile()
