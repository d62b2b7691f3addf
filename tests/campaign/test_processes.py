"""The worker processes of a campaign's own cluster (attsim.campaign.processes): forked from a server that has
loaded a run's code, with the environment the caller has now."""

import os
import sys

import pytest

from attsim.campaign import processes

pytestmark = pytest.mark.skipif(not processes._forks(), reason="the platform has no forkserver (POSIX only)")


def _loaded():
    return ("attsim.engine.mission" in sys.modules and "attsim.campaign.worker" in sys.modules,
            os.environ.get("OMP_NUM_THREADS"), os.environ.get("ATTSIM_TEST_PROCESSES"))


def _cluster_answers():
    from distributed import Client

    cluster = processes.local_cluster(2)
    try:
        with Client(cluster) as client:
            return list(client.run(_loaded).values())
    finally:
        cluster.close()


def test_a_campaign_worker_starts_with_a_runs_code_loaded_and_dasks_worker_environment(monkeypatch):
    monkeypatch.delenv("ATTSIM_TEST_PROCESSES", raising=False)
    assert processes.start_server()
    for loaded, threads, _ in _cluster_answers():
        assert loaded  # imported by the server, before any run was sent
        assert threads == "1"  # dask's pre-spawn environment reached the forked worker
    assert processes.start_server()  # dask's setting those in this process too does not count as a change


def test_a_variable_set_after_the_server_started_reaches_the_workers(monkeypatch):
    processes.start_server()
    monkeypatch.setenv("ATTSIM_TEST_PROCESSES", "set after the server started")
    assert not processes.start_server()  # the server's environment is out of date: spawned workers
    assert {answer[2] for answer in _cluster_answers()} == {"set after the server started"}
    monkeypatch.delenv("ATTSIM_TEST_PROCESSES")
    assert processes.start_server()  # as it was: forked again
