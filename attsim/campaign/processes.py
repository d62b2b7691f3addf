"""The worker processes of a campaign's own cluster, forked ready from a server that has loaded attsim once.

dask starts each worker of a ``LocalCluster`` as a new interpreter (``spawn``): before its first run each one
imports distributed, the engine and the component kinds and sets up numba's compiler, ~1.5 s of CPU a worker. On a
2-core machine the two workers of a small warm campaign (60 runs of ``wheel_slew``) spent longer on that than on
their runs. Where the platform has it (POSIX), the campaign asks dask for ``forkserver`` processes and starts the
server itself, with :data:`PRELOAD`: the server imports those once, and each worker is forked from it with them
loaded. Started as soon as the campaign knows it will have its own cluster (:func:`start_server`), the server
loads on another core while the caller builds the campaign, reads its records and checks the compiled units.

What a forked worker does not get from the caller, and how it is handled:

* **the environment** is the server's, fixed when it started. It is the caller's then, plus what dask's nanny sets
  for each worker it spawns: ``distributed.nanny.pre-spawn-environ`` (one BLAS thread, ...), which must be in place
  before numpy loads, and one ``PYTHONHASHSEED`` for every worker (a forked worker would otherwise hash strings
  with the server's random seed: a mission iterating over a set of names would change from one campaign to the
  next). When the caller's environment has changed since (a ``NUMBA_CACHE_DIR`` set between two campaigns of one
  session), the cluster's workers are spawned, as dask does by default, so that they see it;
* ``sys.path``, the working directory and the main module are sent to each new worker by multiprocessing, as for a
  spawned one;
* a worker restarted after a timeout (:func:`attsim.campaign.timeouts.recover_worker`) is spawned.

The server lives for one campaign: it is stopped when the campaign's cluster closes (and when the campaign
stops before it has one, e.g. on bad input), so that nothing of attsim's stays in a session's other forkserver
pools (Python 3.14's default start method on Linux). ``ATTSIM_FORKSERVER=0`` has every worker spawned. A cluster
the caller gives (``client=``, ``--scheduler``) is not touched.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import sys
import threading

__all__ = ["PRELOAD", "start_server", "stop_server", "local_cluster"]

# what a campaign run imports before it starts (dask's worker, attsim's run and every component kind), in one module
# that keeps Ctrl-C from the server while it loads
PRELOAD = ("attsim.campaign.preload",)
# the hash seed a nanny gives the workers it spawns unless dask's configuration names one (distributed.nanny)
DASK_HASH_SEED = "6640"

# variables that change without the caller changing a setting: pytest's for each test it runs, and the parent's pid
# a nanny notes in this process. Compared, they would have every cluster but the first spawned.
_CHANGING = frozenset({"PYTEST_CURRENT_TEST", "__DASK_PARENT_PID"})

_LOCK = threading.Lock()
_server_environment: dict[str, str] | None = None  # the environment of the server this process started, while it runs


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


def _environment() -> dict[str, str]:
    """The environment a worker spawned now would have: this process's with what a nanny sets before it spawns one
    (dask's pre-spawn variables and the hash seed; it sets them in this process too), :data:`_CHANGING` left out."""
    import dask

    if "distributed" not in sys.modules:  # its defaults join dask's configuration when it is imported (0.6 s)
        _distributed_defaults(dask)
    extra = {key: str(value) for key, value in
             (dask.config.get("distributed.nanny.pre-spawn-environ", default=None) or {}).items()}
    if extra.get("PYTHONHASHSEED") in (None, "0"):
        extra["PYTHONHASHSEED"] = DASK_HASH_SEED
    environment = {**os.environ, **extra}
    return {key: value for key, value in environment.items() if key not in _CHANGING}


def _forks() -> bool:
    return "forkserver" in multiprocessing.get_all_start_methods() and os.environ.get("ATTSIM_FORKSERVER") != "0"


def _launch(environment: dict[str, str]) -> None:
    """Start the forkserver (unless it runs) with :data:`PRELOAD` and ``environment``, which it inherits when it
    starts; this process has its own environment back after."""
    from multiprocessing import forkserver

    # dask's own first use of the forkserver replaces the preload list: set again for a server started again
    multiprocessing.get_context("forkserver").set_forkserver_preload(list(PRELOAD))
    before = dict(os.environ)
    # the server starts with Ctrl-C ignored (a disposition it inherits through exec; a handler or a signal mask it
    # does not), and keeps it ignored for the workers forked from it (attsim.campaign.preload): an interrupt in its
    # first moments, before its preload ran, ended it with a traceback and the next worker with EOFError. Signals
    # are set from the main thread only; from another, the server ignores it once its preload starts.
    main = threading.current_thread() is threading.main_thread()
    interrupt = signal.getsignal(signal.SIGINT) if main else None
    try:
        os.environ.update({key: value for key, value in environment.items() if os.environ.get(key) != value})
        if interrupt is not None:  # (None: a handler not set from Python, left alone)
            signal.signal(signal.SIGINT, signal.SIG_IGN)
        forkserver.ensure_running()
    finally:
        if interrupt is not None:
            signal.signal(signal.SIGINT, interrupt)
        for key in set(os.environ) - set(before):
            del os.environ[key]
        os.environ.update({key: value for key, value in before.items() if os.environ.get(key) != value})


def start_server() -> bool:
    """Start the server the campaign's workers are forked from, loading :data:`PRELOAD`, unless it runs already;
    returns whether the next cluster's workers can be forked from it: False where the platform has no forkserver
    (or ``ATTSIM_FORKSERVER=0``), when another part of this process started one, or when the environment has
    changed since this one started. Returns at once: the server loads in its own process."""
    global _server_environment
    if not _forks():
        return False
    from multiprocessing import forkserver

    with _LOCK:
        environment = _environment()
        if _server_environment is None:
            if getattr(forkserver._forkserver, "_forkserver_pid", None) is not None:  # someone else's
                return False
        elif environment != _server_environment:
            return False
        try:
            _launch(environment)  # also when it died: started again with the environment it had
        except OSError:  # no server here after all (e.g. a sandbox without Unix sockets): dask's spawned workers
            return False
        _server_environment = environment
        return True


def stop_server() -> None:
    """Stop the server :func:`start_server` started, if it runs (at once, even while it is still loading)."""
    global _server_environment
    with _LOCK:
        if _server_environment is None:
            return
        _server_environment = None
        from multiprocessing import forkserver

        server = forkserver._forkserver
        pid = getattr(server, "_forkserver_pid", None)
        if pid is None or not hasattr(server, "_stop"):
            return
        if sys.platform != "win32":  # (where a forkserver runs at all)
            try:
                os.kill(pid, signal.SIGTERM)  # its preload does not look at the pipe that asks it to stop
            except ProcessLookupError:
                pass
        server._stop()  # reaps it and removes its socket
        # a forkserver the caller's own pools start later loads what multiprocessing's default names, not attsim
        multiprocessing.get_context("forkserver").set_forkserver_preload(["__main__"])


def local_cluster(workers: int):
    """A ``LocalCluster`` of ``workers`` processes, one thread each, forked from the server of
    :func:`start_server` where it can be, else spawned; either way a worker has loaded :data:`PRELOAD` (a spawned
    one as dask's worker preload) and leaves Ctrl-C to the campaign."""
    import dask
    from distributed import LocalCluster

    forked = start_server()
    method = "forkserver" if forked else "spawn"
    with dask.config.set({"distributed.worker.multiprocessing-method": method}):
        return LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, silence_logs=logging.ERROR,
                            preload=None if forked else list(PRELOAD))
