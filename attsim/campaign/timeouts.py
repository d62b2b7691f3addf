"""The per-run time limit of a campaign: the limit, the clock of the runs being done, the stuck worker.

A run that never returns (a user's controller in an endless loop, a
``build()`` that blocks) cannot be interrupted inside its worker: the
compiled mission loop does not look at signals, and a thread cannot be
killed. The client times the runs instead, and gets the worker back by
restarting its process.

- **When a run starts.** A task tells the client when each of its runs
  starts: :func:`announce_start` (called by
  :func:`attsim.campaign.worker.run_many` before each run) logs a dask event
  (topic :data:`START_TOPIC`: the task's key, the run, the worker's
  address). The :class:`RunClock` notes the time it *receives* it, on the
  client's monotonic clock (no clock skew between machines; the clock starts
  at most the event's transit late). A task queued on a worker behind
  another one is not timed: it has not started. Each run of a task of
  several is timed alone, so the run that hangs is known exactly.
- **The limit.** An explicit ``run_timeout_s`` (``math.inf``: no limit);
  by default, once :data:`DEFAULT_MIN_RUNS` runs of this campaign call have
  run to their end (status OK or FAIL: an ERROR may stop at once),
  ``max(DEFAULT_FLOOR_S, DEFAULT_FACTOR x median wall time)`` of the last
  :data:`WALLS_KEPT` such runs, and no limit before that. The campaign
  compiles the mission's units once on its machine before its own
  cluster takes runs (:func:`attsim.campaign.execute.compile_first`), so a
  worker's first run only loads them from numba's disk cache: under the
  default limit it gets :data:`COLD_ALLOWANCE_S` more for that (and for the
  process's imports); on a cluster it did not start, the workers compile
  them in their first runs (one process a machine at a time), which get
  :data:`FOREIGN_COLD_ALLOWANCE_S`. An explicit limit bounds every run, the
  first ones too.
- **A run past its limit** is an ERROR record ``timeout: the run took
  longer than X s`` (:func:`timeout_message`); :mod:`attsim.campaign.execute`
  cancels its task, sends the task's other runs again one a task, and calls
  :func:`recover_worker`: the worker is restarted through its nanny (a
  ``LocalCluster``, ``dask worker`` with its default nanny); a worker that
  cannot be restarted (no nanny, the restart timed out) gets no more runs of
  the campaign, said once on stderr (the scheduler has removed it: the
  campaign goes on on the others). The restart is waited for
  :data:`RESTART_TIMEOUT_S`, read at each restart (a test lowers it rather
  than wait a minute for a worker that does not come back).
"""

from __future__ import annotations

import asyncio
import math
import sys
import threading
import time
from typing import NamedTuple

from .._core.validate import real_number
from ..errors import AttsimError, InputError

__all__ = ["START_TOPIC", "DEFAULT_FLOOR_S", "DEFAULT_FACTOR", "DEFAULT_MIN_RUNS", "WALLS_KEPT", "COLD_ALLOWANCE_S",
           "FOREIGN_COLD_ALLOWANCE_S",
           "RESTART_TIMEOUT_S",
           "CampaignStuckError", "checked_run_timeout", "timeout_message", "announce_start", "RunClock", "Overdue",
           "recover_worker"]

START_TOPIC = "attsim-run-start"  # the dask event topic of runs starting
DEFAULT_FLOOR_S = 60.0  # the default limit is never below this (a restarted worker loads numba's cache first)
DEFAULT_FACTOR = 20.0  # times the median wall time of the runs that ran to their end
DEFAULT_MIN_RUNS = 3  # runs run to their end before the default limit applies
WALLS_KEPT = 256  # the default limit's median is over the last this many such runs
COLD_ALLOWANCE_S = 30.0  # added to the default limit of a worker process's first run: loading the compiled units
FOREIGN_COLD_ALLOWANCE_S = 600.0  # the same on a cluster the campaign did not start: its workers compile the units
RESTART_TIMEOUT_S = 60.0  # the longest a worker's restart is waited for (a nanny kills, then starts)


class CampaignStuckError(AttsimError):
    """Every worker of the cluster is stuck in a run that timed out and none could be restarted."""

    def __init__(self, workers: str):
        self.workers = workers
        super().__init__(workers)

    def __str__(self) -> str:
        return (f"campaign: every worker is stuck in a run that timed out and could not be restarted ({self.workers});"
                " the records written are kept: restart the workers and start the same command again to resume")


def checked_run_timeout(value) -> float | None:
    """``run_timeout_s`` as given: None (the default limit), or seconds > 0 (``math.inf``: no limit)."""
    if value is None:
        return None
    seconds = real_number(value, "run_timeout_s")
    if not seconds > 0.0:  # also NaN
        raise InputError("run_timeout_s", "must be a number of seconds > 0, or inf for no limit "
                         "(None: derived from the runs' wall times)", f"got {value!r}")
    return seconds


def timeout_message(limit_s: float) -> str:
    """The error of a run's record that took longer than ``limit_s``."""
    return f"timeout: the run took longer than {limit_s:.4g} s"


def announce_start(index: int, cold: bool) -> None:
    """In a dask worker's task: tell the campaign's client that run ``index`` starts now (nothing outside dask);
    ``cold``: the worker process's first run of the mission (it loads or compiles the mission loop)."""
    try:
        from distributed import get_worker

        worker = get_worker()
        key = worker.get_current_task()
    except (ImportError, ValueError):  # not in a worker: a run repeated alone, a test
        return
    worker.log_event(START_TOPIC, {"key": str(key), "run": int(index), "worker": worker.address, "cold": bool(cold)})


class Overdue(NamedTuple):
    key: str          # the task's key
    run: int          # the run past its limit
    worker: str       # the address of the worker doing it
    elapsed_s: float  # since its start was heard
    limit_s: float    # the limit it was held to (with a first run's allowance)


class RunClock:
    """The runs the workers are doing, since when (client's clock), and the limit they are held to."""

    def __init__(self, limit_s: float | None, cold_allowance_s: float = COLD_ALLOWANCE_S):
        self.explicit_s = limit_s
        self.cold_allowance_s = cold_allowance_s
        self.walls: list[float] = []
        self.expected: set[str] = set()
        self.started: dict[str, tuple] = {}  # task key -> (run, worker, when its start was heard, its allowance s)
        self.lock = threading.Lock()  # heard() runs on the client's event loop thread

    def expect(self, key: str) -> None:
        """A task of this campaign is submitted under ``key`` (events of other keys are another campaign's)."""
        with self.lock:
            self.expected.add(key)

    def heard(self, event) -> None:
        """The handler of :data:`START_TOPIC` events: ``(scheduler timestamp, message)``."""
        message = event[1]
        with self.lock:
            if message["key"] in self.expected:
                allowance_s = self.cold_allowance_s if message.get("cold") and self.explicit_s is None else 0.0
                self.started[message["key"]] = (int(message["run"]), str(message["worker"]), time.monotonic(),
                                                allowance_s)

    def forget(self, key: str) -> None:
        """The task ``key`` is over (its results arrived, it failed or it was cancelled)."""
        with self.lock:
            self.expected.discard(key)
            self.started.pop(key, None)

    def unstart(self, key: str) -> None:
        """The task ``key`` has not started where it is now (its worker died; dask sent it elsewhere)."""
        with self.lock:
            self.started.pop(key, None)

    def forget_worker(self, address: str) -> None:
        """The worker at ``address`` is gone: its tasks go elsewhere and start again there (a new event)."""
        with self.lock:
            for key in [k for k, started in self.started.items() if started[1] == address]:
                del self.started[key]

    def finished(self, record: dict) -> None:
        """A run's record arrived: one that ran to its end counts towards the default limit."""
        wall = record["wall_s"]
        if record["status"] in ("OK", "FAIL") and math.isfinite(wall):
            self.walls.append(float(wall))
            if len(self.walls) > 2 * WALLS_KEPT:
                del self.walls[:-WALLS_KEPT]

    def limit_s(self) -> float:
        """The limit now: the explicit one, or the default (``math.inf`` before enough runs ran to their end)."""
        if self.explicit_s is not None:
            return self.explicit_s
        walls = sorted(self.walls[-WALLS_KEPT:])
        if len(walls) < DEFAULT_MIN_RUNS:
            return math.inf
        middle = len(walls) // 2
        median = walls[middle] if len(walls) % 2 else 0.5 * (walls[middle - 1] + walls[middle])
        return max(DEFAULT_FLOOR_S, DEFAULT_FACTOR * median)

    def overdue(self) -> list[Overdue]:
        """The runs past the limit now."""
        limit = self.limit_s()
        if math.isinf(limit):
            return []
        now = time.monotonic()
        with self.lock:
            return [Overdue(key, run, worker, now - heard, limit + allowance_s)
                    for key, (run, worker, heard, allowance_s) in self.started.items()
                    if now - heard > limit + allowance_s]


def recover_worker(client, address: str, excluded: set) -> bool:
    """Get back the worker at ``address``, stuck in a cancelled run: restart it (True), or exclude it (False).

    ``client.restart_workers`` kills the worker's process through its nanny
    and starts a new one (a new address); its queued tasks are sent to
    workers again by the scheduler. A worker without a nanny, or one whose
    restart fails or times out, is added to ``excluded``: the campaign sends
    it no more runs, and says so once on stderr.
    """
    try:
        status = client.restart_workers([address], timeout=RESTART_TIMEOUT_S, raise_for_error=False).get(address)
    except (TimeoutError, asyncio.TimeoutError):  # the restart itself outlived its timeout (one class from 3.11)
        status = "timed out"
    except Exception as exc:  # noqa: BLE001 - distributed raises what its comms raise; the campaign goes on
        status = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    if status == "OK":
        return True
    if address not in excluded:
        excluded.add(address)
        print(f"attsim: worker {address} is stuck in a run that timed out and could not be restarted ({status}); "
              "the campaign sends it no more runs", file=sys.stderr, flush=True)
    return False
