"""The worker processes of a campaign's own cluster, forked ready from a server that has loaded attsim once.

dask starts each worker of a ``LocalCluster`` as a new interpreter (``spawn``): before its first run each one
imports distributed, the engine and the component kinds and sets up numba's compiler, ~1.5 s of CPU a worker. On a
2-core machine the two workers of a small warm campaign (60 runs of ``wheel_slew``) spent longer on that than on
their runs. Where the platform has it (POSIX), the campaign asks dask for ``forkserver`` processes and starts the
server itself, with :data:`PRELOAD`: the server imports those once, and each worker is forked from it with them
loaded. Started as soon as the campaign knows it will have its own cluster (:func:`start_server`), the server
loads on another core while the caller builds the campaign, reads its records and checks the compiled units.

What a forked worker does not get from the caller, and how it is handled:

* **the environment** is the server's, fixed when it started. It is the caller's then, plus dask's
  ``distributed.nanny.pre-spawn-environ`` (one BLAS thread, ...), which dask sets for each spawned worker and which
  must be in place before numpy loads. When the caller's environment has changed since (a ``NUMBA_CACHE_DIR`` set
  between two campaigns of one session), the cluster's workers are spawned, as dask does by default, so that they
  see it;
* ``sys.path``, the working directory and the main module are sent to each new worker by multiprocessing, as for a
  spawned one;
* a worker restarted after a timeout (:func:`attsim.campaign.timeouts.recover_worker`) is spawned.

A cluster the caller gives (``client=``, ``--scheduler``) is not touched.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import sys
import threading

__all__ = ["PRELOAD", "start_server", "local_cluster"]

# what a campaign run imports before it starts: dask's worker, then attsim's run and every component kind
PRELOAD = ("distributed", "attsim.campaign.preload")

# variables that change without the caller changing a setting: pytest's for each test it runs, and those a nanny
# sets in this process for the workers it spawns (the parent's pid; one hash seed for all of them, which forked
# workers share anyway). Compared, they would have every cluster but the first spawned.
_CHANGING = frozenset({"PYTEST_CURRENT_TEST", "__DASK_PARENT_PID", "PYTHONHASHSEED"})

_LOCK = threading.Lock()
_server_environment: dict[str, str] | None = None  # the environment of the server this process started


def _environment() -> dict[str, str]:
    """The environment a worker started now would have: this process's with dask's pre-spawn variables (which dask
    also sets in this process, before it starts a worker), the variables of :data:`_CHANGING` left out."""
    import dask

    if "distributed" not in sys.modules:  # its defaults join dask's configuration when it is imported (0.6 s)
        _distributed_defaults(dask)
    extra = dask.config.get("distributed.nanny.pre-spawn-environ", default=None) or {}
    environment = {**os.environ, **{key: str(value) for key, value in extra.items()}}
    return {key: value for key, value in environment.items() if key not in _CHANGING}


def _distributed_defaults(dask) -> None:
    """distributed's default configuration, registered with dask as ``distributed.config`` does on import (the
    same file, the same call; a second registration changes nothing)."""
    import importlib.util

    import yaml

    spec = importlib.util.find_spec("distributed")
    if spec is None or not spec.submodule_search_locations:
        return
    path = os.path.join(list(spec.submodule_search_locations)[0], "distributed.yaml")
    with open(path, encoding="utf-8") as file:
        dask.config.update_defaults(yaml.safe_load(file))


def _forks() -> bool:
    return "forkserver" in multiprocessing.get_all_start_methods()


def start_server() -> bool:
    """Start the server the campaign's workers are forked from, loading :data:`PRELOAD`, unless it runs already;
    returns whether the next cluster's workers can be forked from it (False where the platform has no forkserver,
    when another part of this process started it without attsim's preload, or when the environment has changed
    since it started). Returns at once: the server loads in its own process."""
    global _server_environment
    if not _forks():
        return False
    from multiprocessing import forkserver

    with _LOCK:
        if _server_environment is not None:
            forkserver.ensure_running()  # started again should it have died, with the same preload
            return _environment() == _server_environment
        if getattr(forkserver._forkserver, "_forkserver_pid", None) is not None:  # someone else's: not ours to load
            return False
        before, environment = dict(os.environ), _environment()
        multiprocessing.get_context("forkserver").set_forkserver_preload(list(PRELOAD))
        try:  # the server inherits the environment when it starts; this process has its own back after
            os.environ.update({key: value for key, value in environment.items() if os.environ.get(key) != value})
            forkserver.ensure_running()
        finally:
            for key in set(os.environ) - set(before):
                del os.environ[key]
            os.environ.update({key: value for key, value in before.items() if os.environ.get(key) != value})
        _server_environment = environment
        return True


def local_cluster(workers: int):
    """A ``LocalCluster`` of ``workers`` processes, one thread each, forked from the server of
    :func:`start_server` where it can be, else spawned."""
    import dask
    from distributed import LocalCluster

    method = "forkserver" if start_server() else "spawn"
    with dask.config.set({"distributed.worker.multiprocessing-method": method}):
        return LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, silence_logs=logging.ERROR)
