"""The campaign's runs on ``dask.distributed`` (layer 8): the client's loop that hands them out and takes their results.

Runs shorter than :data:`TASK_TARGET_S` go to dask several to a task (its
overhead is per task); a task that fails (e.g. ``KilledWorker``) is split
into one task per run, so only the run that killed its workers is recorded
as an error. At most a window of tasks is in flight, so a million-run
campaign neither draws nor submits all its runs up front.
"""

from __future__ import annotations

import os

from .worker import run_many

__all__ = ["execute", "TASK_TARGET_S", "MAX_RUNS_PER_TASK", "IN_FLIGHT_PER_THREAD"]

IN_FLIGHT_PER_THREAD = 4  # tasks handed to the scheduler ahead of the workers, per worker thread (at least 32)
TASK_TARGET_S = 0.5  # wall time a task of several runs aims at (dask costs ~3 ms of CPU a task)
MAX_RUNS_PER_TASK = 16


def execute(specs, client, workers, state, bar, on_start) -> None:
    """Hand the runs to dask and take their results as they complete."""
    from distributed import as_completed

    own_client, cluster = None, None
    if client is None:
        import logging

        from distributed import Client, LocalCluster

        cluster = LocalCluster(n_workers=workers or os.cpu_count() or 1, threads_per_worker=1, processes=True,
                               silence_logs=logging.ERROR)
        client = own_client = Client(cluster)
    try:
        if on_start is not None:
            on_start(client)
        threads = sum(client.nthreads().values()) or 1
        window = max(32, IN_FLIGHT_PER_THREAD * threads)
        batches = _Batches(specs, threads)
        by_key = {}

        def submit(batch):
            indices = "_".join(str(spec.index) for spec in batch)
            future = client.submit(run_many, batch, pure=False, key=f"attsim-run-{indices}-{os.urandom(4).hex()}")
            by_key[future.key] = batch
            return future

        queue = as_completed([submit(b) for _, b in zip(range(window), batches)], with_results=True,
                             raise_errors=False)
        for future, results in queue:
            batch = by_key.pop(future.key)
            # the task failed (e.g. KilledWorker) when what came back is not run_many's list but dask's (type, exc, tb)
            # or an exception; not by the future's status, which turns "lost" after the results arrived when the
            # worker holding them dies (another run killed it): those runs were then recorded as errors
            failed = not isinstance(results, list)
            future.release()
            if failed:
                if len(batch) > 1:  # again one run a task: only a run that kills its workers fails
                    for spec in batch:
                        queue.add(submit([spec]))
                    continue
                results = [state.error_result(batch[0], results[1] if isinstance(results, tuple) else results)]
            for spec, result in zip(batch, results):
                batches.took(result)
                if state.take(spec, result) and bar is not None:
                    bar.set_postfix_str(f"{state.failures} failed, {state.runs_per_hour():,.0f} runs/h",
                                        refresh=False)
                    bar.update(1)
            following = next(batches, None)
            if following is not None:
                queue.add(submit(following))
    finally:
        if own_client is not None:
            own_client.close()
        if cluster is not None:
            cluster.close()



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
