"""The campaign's runs on ``dask.distributed``: the client's loop that hands them out and takes their results.

Runs shorter than :data:`TASK_TARGET_S` go to dask several to a task (its
overhead is per task); a task that fails (e.g. ``KilledWorker``) is split
into one task per run, so only the run that killed its workers is recorded
as an error. At most a window of tasks is in flight, so a million-run
campaign neither draws nor submits all its runs up front. A run past its
time limit is recorded as a timeout, its task cancelled and its worker
restarted (:mod:`attsim.campaign.timeouts`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import signal
import sys
import threading
import time

from .._core.signals import TERMINATING
from . import timeouts
from .processes import local_cluster
from .timeouts import START_TOPIC, CampaignStuckError, Overdue, RunClock, recover_worker, timeout_message
from .worker import compile_units, run_many

__all__ = ["execute", "compile_first", "TASK_TARGET_S", "MAX_RUNS_PER_TASK", "IN_FLIGHT_PER_THREAD"]

IN_FLIGHT_PER_THREAD = 4  # tasks handed to the scheduler ahead of the workers, per worker thread (at least 32)
TASK_TARGET_S = 0.5  # wall time a task of several runs aims at (dask costs ~3 ms of CPU a task)
MAX_RUNS_PER_TASK = 16
HEALTHY_WALL_S = 5.0  # while a stuck worker is excluded: how often the workers runs may go to are asked again
POLL_S = 0.25  # the longest the loop waits for a result before it looks for runs past their time limit
# no result for this long: the tasks the scheduler holds finished are taken directly (a finished task whose result
# never reached dask's as_completed kept a campaign waiting for ever in a loaded test run)
STALL_S = 30.0
COMPILE_FIRST_LIMIT_S = 900.0  # the longest the units' compile before the runs is waited for


def compile_first(specs) -> None:
    """Compile the mission's units on this machine before the campaign's own cluster takes runs (once, not once
    per worker: its workers load them from the disk cache), saying so on stderr. A ``build()`` that does not end
    is not waited for beyond :data:`COMPILE_FIRST_LIMIT_S`, and a failure here is not the campaign's: the runs
    then compile what they need (one process at a time, :mod:`attsim.engine.compile_record`) or fail, each in
    its record."""
    first = specs[0:1]
    if not first:
        return
    failed = []

    def compile_():
        try:
            compile_units(first[0])
        except Exception as exc:  # noqa: BLE001 - said below; the runs record their own errors
            failed.append(exc)

    worker = threading.Thread(target=compile_, name="attsim-compile-first", daemon=True)
    worker.start()
    worker.join(COMPILE_FIRST_LIMIT_S)
    if worker.is_alive() or failed:
        why = f"its build() did not end in {COMPILE_FIRST_LIMIT_S:.0f} s" if worker.is_alive() else \
            f"{type(failed[0]).__name__}: {str(failed[0]).strip().splitlines()[0] if str(failed[0]).strip() else ''}"
        print(f"attsim: the mission's units were not compiled ahead of the runs ({why}); the runs compile what "
              "they need", file=sys.stderr)


def execute(specs, client, workers, state, bar, on_start, run_timeout_s: float | None = None) -> None:
    """Hand the runs to dask and take their results as they complete; time out runs past their limit.

    ``client`` None: a ``LocalCluster`` of ``workers`` processes, one thread
    each (:func:`attsim.campaign.processes.local_cluster`), started here and
    closed again. ``run_timeout_s``: the per-run
    limit (:mod:`attsim.campaign.timeouts`; None: derived from the runs).
    """
    own_client, cluster = None, None
    if client is None:
        from distributed import Client

        cluster = local_cluster(workers or os.cpu_count() or 1)
        client = own_client = Client(cluster)
    with _lost_workers_unlogged():
        try:
            if on_start is not None:
                on_start(client)
            # the campaign's own cluster: the units were compiled before its workers took runs
            # (runner.compile_first); another cluster's workers compile them in their first runs, one process a
            # machine at a time
            allowance_s = timeouts.COLD_ALLOWANCE_S if own_client is not None else timeouts.FOREIGN_COLD_ALLOWANCE_S
            _Execution(specs, client, state, bar, RunClock(run_timeout_s, allowance_s)).run()
        finally:
            with _interrupts_held():
                if own_client is not None:
                    own_client.close()
                if cluster is not None:
                    cluster.close()


class _LostWorker(logging.Filter):
    """Drops dask's own account of a worker that died with results in flight: a traceback of the closed
    connection, "Couldn't gather keys", or of the scheduler's read from that worker cancelled as the cluster
    closes (asyncio's CancelledError, seen after a SIGTERM to the whole process group). The campaign accounts for
    the loss itself and says what it means for the runs (a run that killed its worker, a batch system's time
    limit)."""

    def filter(self, record: logging.LogRecord) -> bool:
        from distributed.comm.core import CommClosedError

        error = record.exc_info[1] if record.exc_info else None
        return not (isinstance(error, (CommClosedError, asyncio.CancelledError))
                    or record.getMessage().startswith("Couldn't gather keys"))


@contextlib.contextmanager
def _lost_workers_unlogged():
    loggers = [logging.getLogger(name) for name in ("tornado.application", "distributed.scheduler")]
    quiet = _LostWorker()
    for logger in loggers:
        logger.addFilter(quiet)
    try:
        yield
    finally:
        for logger in loggers:
            logger.removeFilter(quiet)


@contextlib.contextmanager
def _interrupts_held():
    """Ctrl-C ignored for the block (from the main thread; elsewhere it cannot come): a second Ctrl-C pressed while
    the campaign closes its cluster after the first cut the close short, and dask's exit hook closed it again,
    ~11 s later and once not within a minute, with tracebacks."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    # SIGTERM and SIGHUP too when they raise (attsim._core.signals): otherwise they end the process, as asked
    held = [signal.SIGINT] + [signum for signum in TERMINATING if callable(signal.getsignal(signum))]
    before = {signum: signal.signal(signum, signal.SIG_IGN) for signum in held}
    try:
        yield
    finally:
        for signum, handler in before.items():
            signal.signal(signum, handler if handler is not None else signal.default_int_handler)


def _exception_message(exc) -> str:
    """``Type: first line`` of what a failed task returned: dask's (type, exception, traceback) or an exception."""
    exc = exc[1] if isinstance(exc, tuple) else exc
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0] if lines else ''}".rstrip(": ")


class _Execution:
    """One call's loop: a window of tasks in flight, their results taken as they arrive, overdue runs timed out."""

    def __init__(self, specs, client, state, bar, clock: RunClock):
        self.client, self.state, self.bar, self.clock = client, state, bar, clock
        threads = sum(client.nthreads().values()) or 1
        self.window = max(32, IN_FLIGHT_PER_THREAD * threads)
        self.batches = _Batches(specs, threads)
        self.by_key: dict[str, list] = {}  # the tasks in flight: key -> their RunSpecs
        self.futures: dict[str, object] = {}
        self.excluded: set[str] = set()  # workers stuck in a timed-out run that could not be restarted
        self.healthy: list[str] = []  # the workers tasks may go to, while some are excluded
        self.healthy_asked = self.rerouted_at = -math.inf
        self.queue = None
        self.heard_at = time.monotonic()  # the last result taken (or the start)

    def run(self) -> None:
        from distributed import as_completed

        self.client.subscribe_topic(START_TOPIC, self.clock.heard)  # before the first submit, on the same stream
        try:
            self.queue = as_completed([self.submit(b) for _, b in zip(range(self.window), self.batches)],
                                      with_results=True, raise_errors=False)
            while self.by_key:  # the tasks whose results are wanted (a task given up stays in as_completed)
                for future, results in self.ready():
                    self.heard_at = time.monotonic()
                    self.arrived(future, results)
                self.state.flush_due()
                for overdue in self.clock.overdue():
                    self.time_out(overdue)
                if self.excluded:
                    self.reroute()
                if time.monotonic() - self.heard_at >= STALL_S:
                    self.unstall()
        finally:
            self.client.unsubscribe_topic(START_TOPIC)
            abandoned = [f for f in self.queue.futures] if self.queue is not None else []
            if abandoned:  # given up for new ones: not left computing on a scheduler the campaign does not own
                self.client.cancel(abandoned)

    def ready(self) -> list:
        """The finished tasks, waiting at most POLL_S for one (as_completed's iterator waits without a limit)."""
        condition = self.queue.thread_condition  # what as_completed's own iterator waits on (distributed >= 2.0)
        with condition:  # notified under this lock after a result is queued: none is missed in between
            if not self.queue.has_ready():
                condition.wait(timeout=POLL_S)
        return self.queue.next_batch(block=False)

    def unstall(self) -> None:
        """Take the results of the tasks the scheduler holds finished but that have not arrived, after
        :data:`STALL_S` without a result: each is fetched directly, or, when that does not answer within
        :data:`POLL_S`, its runs are sent again as a new task (the old one's result, should it come, is ignored:
        its key is no longer wanted). Tasks still running are left alone, however long they take."""
        self.heard_at = time.monotonic()
        try:
            held = self.client.who_has([self.futures[key] for key in self.by_key])
        except Exception:  # noqa: BLE001 - a safety net: the next stall asks again
            return
        for key in [k for k, workers in held.items() if workers and k in self.by_key]:
            future = self.futures[key]
            try:
                results = future.result(timeout=max(POLL_S, 1.0))
            except Exception:  # noqa: BLE001 - not fetched (or failed): its runs go again
                batch = self.by_key.pop(key)
                self.futures.pop(key)
                self.clock.forget(key)
                self.queue.add(self.submit(batch))
                continue
            self.arrived(future, results)

    def submit(self, batch):
        indices = "_".join(str(spec.index) for spec in batch)
        key = f"attsim-run-{indices}-{os.urandom(4).hex()}"
        self.by_key[key] = batch
        self.clock.expect(key)
        where = {"workers": self.healthy_workers(), "allow_other_workers": False} if self.excluded else {}
        future = self.client.submit(run_many, batch, pure=False, key=key, **where)
        self.futures[key] = future
        return future

    def healthy_workers(self) -> list[str]:
        """The workers not excluded, asked of the scheduler at most every HEALTHY_WALL_S (workers join, restart)."""
        if time.monotonic() - self.healthy_asked >= HEALTHY_WALL_S:
            self.healthy = [w for w in self.client.nthreads() if w not in self.excluded]
            self.healthy_asked = time.monotonic()
            if not self.healthy:
                raise CampaignStuckError(", ".join(sorted(self.excluded)))
        return self.healthy

    def submit_following(self) -> None:
        following = next(self.batches, None)
        if following is not None:
            self.queue.add(self.submit(following))

    def arrived(self, future, results) -> None:
        key = future.key
        self.clock.forget(key)
        self.futures.pop(key, None)
        batch = self.by_key.pop(key, None)
        future.release()
        if batch is None:  # a task timed out and cancelled: its runs are recorded or sent again already
            return
        # the task failed (e.g. KilledWorker) when what came back is not run_many's list but dask's (type, exc, tb)
        # or an exception; not by the future's status, which turns "lost" after the results arrived when the
        # worker holding them dies (another run killed it): those runs were then recorded as errors
        if not isinstance(results, list):
            if len(batch) > 1:  # again one run a task: only a run that kills its workers fails
                for spec in batch:
                    self.queue.add(self.submit([spec]))
                return
            results = [self.state.error_result(batch[0], _exception_message(results))]
        for spec, result in zip(batch, results):
            self.batches.took(result)
            self.clock.finished(result[0])
            self.take(spec, result)
        self.submit_following()

    def take(self, spec, result) -> None:
        if self.state.take(spec, result) and self.bar is not None:
            self.bar.set_postfix_str(f"{self.state.failures} failed, {self.state.runs_per_hour():,.0f} runs/h",
                                     refresh=False)
            self.bar.update(1)

    def time_out(self, overdue: Overdue) -> None:
        """Record the overdue run as a timeout, cancel its task, send its other runs again, get its worker back."""
        key, worker = overdue.key, overdue.worker
        keys = self.on_worker(worker)
        if keys is None:  # the scheduler could not say now: the run is still overdue at the next poll
            return
        if key not in keys:  # its worker died, the task went elsewhere: it has not started there
            self.clock.unstart(key)
            return
        batch = self.by_key.pop(key, None)
        future = self.futures.pop(key, None)
        self.clock.forget(key)
        if batch is None:
            return
        if future is not None:
            future.cancel(reason="attsim: a run of the task timed out")
        for spec in batch:
            if spec.index == overdue.run:
                message = timeout_message(overdue.limit_s)
                self.take(spec, self.state.error_result(spec, message, overdue.elapsed_s, worker))
            else:  # done before the hanging run (their results went with the task) or not started yet
                self.queue.add(self.submit([spec]))
        self.clock.forget_worker(worker)
        if not recover_worker(self.client, worker, self.excluded):
            self.avoid(worker)
        self.submit_following()

    def on_worker(self, worker: str) -> set[str] | None:
        """The keys of the tasks the scheduler has on ``worker`` (running or queued there); none when the scheduler no
        longer knows it (its restart timed out and it was removed, it died): asked of every worker, since the
        scheduler answers a question about one it removed with a KeyError. None when the scheduler could not answer
        (while it removes a worker it answers with an AssertionError): the caller asks again at its next round."""
        try:
            return {str(k) for k in self.client.processing().get(worker, ())}
        except AssertionError:
            return None

    def avoid(self, worker: str) -> None:
        """Send no more runs to ``worker``: the tasks queued on it go again, to the other workers only."""
        self.healthy_asked = -math.inf
        self.healthy_workers()
        self.resend(self.on_worker(worker) or set())  # unanswered now: reroute() sends them on its next round

    def reroute(self) -> None:
        """Send again the tasks the scheduler has put on an excluded worker since it was excluded, at most every
        HEALTHY_WALL_S. A stuck worker that could not be restarted stays connected, and a task sent before it was
        excluded (without restrictions) may be assigned to it later: it would wait behind the stuck run for ever,
        and the campaign with it. And a task restricted to the healthy workers of the moment waits for ever when one
        of them is restarted (another timeout) or leaves: it is sent again to the workers there are now. (Both seen
        under load: a campaign waiting half an hour with its tasks 'no-worker' on the scheduler.)"""
        if time.monotonic() - self.rerouted_at < HEALTHY_WALL_S:
            return
        self.rerouted_at = time.monotonic()
        before = set(self.healthy)
        self.healthy_asked = -math.inf
        healthy = set(self.healthy_workers())
        try:
            processing = self.client.processing()
        except Exception:  # noqa: BLE001 - a scheduler removing a worker has answered with an AssertionError: the
            return  # next round asks again (this is a safety net; the runs in flight are not affected)
        keys = {str(k) for worker in self.excluded for k in processing.get(worker, ())}
        if healthy != before:  # a healthy worker left or was restarted (a new address): the tasks restricted to the
            placed = {str(k) for worker in healthy for k in processing.get(worker, ())}  # old set wait for ever
            keys |= {k for k in self.by_key if k not in placed}
        self.resend(keys)

    def resend(self, keys: set[str]) -> None:
        """Cancel the tasks ``keys`` of this campaign and send their runs again, to the healthy workers only."""
        for key in [k for k in self.by_key if k in keys]:
            batch = self.by_key.pop(key)
            self.futures.pop(key).cancel(reason="attsim: its worker is stuck")
            self.clock.forget(key)
            self.queue.add(self.submit(batch))


class _Batches:
    """The runs to do as dask tasks: one run a task until runs report their wall time, then as many as take about
    TASK_TARGET_S (at most MAX_RUNS_PER_TASK; fewer near the end, so every worker thread stays busy)."""

    def __init__(self, specs, threads: int):
        self.specs, self.next, self.threads = specs, 0, threads  # a sequence sliced once per batch
        self.walls: list[float] = []

    def took(self, result) -> None:
        wall = result[0]["wall_s"]
        if wall == wall:  # not NaN (a task that failed outside the run)
            self.walls = (self.walls + [wall])[-64:]

    def __iter__(self):
        return self

    def __next__(self) -> list:
        left = len(self.specs) - self.next
        if left <= 0:
            raise StopIteration
        size = 1
        if self.walls:
            per_run = sorted(self.walls)[len(self.walls) // 2]
            size = int(TASK_TARGET_S / per_run) if per_run > 0.0 else MAX_RUNS_PER_TASK
            size = max(1, min(size, MAX_RUNS_PER_TASK, left // (2 * self.threads)))
        batch = self.specs[self.next: self.next + size]
        self.next += size
        return batch
