"""The worker processes of a campaign's own cluster (attsim.campaign.processes): forked from a server that has
loaded a run's code, with the environment a spawned worker would have, and gone with the campaign."""

import os
import re
import signal
import subprocess
import sys
from multiprocessing import forkserver
from pathlib import Path
from typing import NamedTuple

import pytest

from attsim import cli
from attsim.campaign import processes

pytestmark = pytest.mark.skipif(not processes._forks(), reason="the platform has no forkserver (POSIX only)")


@pytest.fixture(autouse=True)
def _no_server_left():
    yield
    processes.stop_server()
    assert getattr(forkserver._forkserver, "_forkserver_pid", None) is None


class Seen(NamedTuple):
    """What a worker of a campaign's cluster reports of itself."""

    loaded: bool  # a run's code imported before any run was sent
    threads: str | None  # OMP_NUM_THREADS, which dask's pre-spawn environment sets
    variable: str | None  # ATTSIM_TEST_PROCESSES, as the tests set it
    hashed: int  # hash("attsim"): the hash seed it runs with
    parent: int  # its parent's pid: the forkserver's when forked, the campaign's process when spawned


def _seen() -> Seen:
    return Seen("attsim.engine.mission" in sys.modules and "attsim.campaign.worker" in sys.modules,
                os.environ.get("OMP_NUM_THREADS"), os.environ.get("ATTSIM_TEST_PROCESSES"), hash("attsim"),
                os.getppid())


def _cluster_answers(workers: int = 1):
    """What each worker of a campaign's cluster of ``workers`` says of itself (one, where what is asked is how the
    workers are spawned: a second costs a process start and shows nothing more)."""
    from distributed import Client

    cluster = processes.local_cluster(workers)
    try:
        with Client(cluster) as client:
            return [Seen(*answer) for answer in client.run(_seen).values()]
    finally:
        cluster.close()


def _spawned_hash() -> int:
    env = dict(os.environ, PYTHONHASHSEED=processes.DASK_HASH_SEED)
    return int(subprocess.run([sys.executable, "-c", "print(hash('attsim'))"], env=env, capture_output=True,
                              text=True, check=True).stdout)


def test_a_campaign_worker_starts_with_a_runs_code_loaded_and_what_a_spawned_one_would_have(monkeypatch):
    monkeypatch.delenv("ATTSIM_TEST_PROCESSES", raising=False)
    assert processes.start_server()
    answers = _cluster_answers(2)  # as a campaign starts them: several forked from the one server
    assert len(answers) == 2
    for seen in answers:
        assert seen.parent == forkserver._forkserver._forkserver_pid  # forked from the server
        assert seen.loaded  # imported by the server, before any run was sent
        assert seen.threads == "1"  # dask's pre-spawn environment reached the forked worker
        assert seen.hashed == _spawned_hash()  # dask's one hash seed, not the server's random one (helper-31)
    assert processes.start_server()  # dask's setting those in this process too does not count as a change


def test_a_variable_set_after_the_server_started_reaches_the_workers(monkeypatch):
    processes.start_server()
    monkeypatch.setenv("ATTSIM_TEST_PROCESSES", "set after the server started")
    assert not processes.start_server()  # the server's environment is out of date: spawned workers
    assert {answer.variable for answer in _cluster_answers()} == {"set after the server started"}
    monkeypatch.delenv("ATTSIM_TEST_PROCESSES")
    assert processes.start_server()  # as it was: forked again


def test_a_server_killed_is_started_again_with_the_environment_it_had_not_the_callers_of_the_moment(monkeypatch):
    """helper-31: killed, then started again by a campaign whose caller had set a variable meanwhile, the server took
    that variable; set back, the next campaign's workers were forked from it and ran with the old value."""
    monkeypatch.delenv("ATTSIM_TEST_PROCESSES", raising=False)
    processes.start_server()
    os.kill(forkserver._forkserver._forkserver_pid, signal.SIGKILL)
    monkeypatch.setenv("ATTSIM_TEST_PROCESSES", "set while the server was dead")
    assert {answer.variable for answer in _cluster_answers()} == {"set while the server was dead"}  # spawned
    monkeypatch.delenv("ATTSIM_TEST_PROCESSES")
    assert {answer.variable for answer in _cluster_answers()} == {None}


def test_the_server_goes_with_the_campaign_even_one_refused_at_once(monkeypatch, capsys):
    monkeypatch.chdir(Path(__file__).resolve().parents[2])  # where missions/ is
    processes.start_server()
    processes.stop_server()
    assert getattr(forkserver._forkserver, "_forkserver_pid", None) is None
    assert cli.main(["campaign", "no_such_mission", "--runs", "3"]) == 2  # started, then the input refused
    assert "no_such_mission" in capsys.readouterr().err
    assert processes._server_environment is None
    assert getattr(forkserver._forkserver, "_forkserver_pid", None) is None


def test_attsim_forkserver_0_has_every_worker_spawned(monkeypatch):
    monkeypatch.setenv("ATTSIM_FORKSERVER", "0")
    assert not processes.start_server()
    # spawned by this process's nannies, each importing a run's code as dask's worker preload before its first run
    assert all(seen.parent == os.getpid() and seen.loaded for seen in _cluster_answers())


def test_a_server_that_cannot_start_leaves_the_workers_spawned(monkeypatch):
    """Where the forkserver cannot start after all (a sandbox refusing its Unix socket), the campaign still runs."""
    def refused():
        raise PermissionError("socket: operation not permitted")

    monkeypatch.setattr(forkserver, "ensure_running", refused)
    assert not processes.start_server() and processes._server_environment is None
    assert all(seen.parent == os.getpid() and seen.loaded for seen in _cluster_answers())


INTERRUPTED_WHILE_LOADING = """
import multiprocessing, os, signal, sys, time
from multiprocessing import forkserver
from attsim.campaign import processes

def interrupt_handler_of_a_worker():
    sys.exit(0 if signal.getsignal(signal.SIGINT) is signal.SIG_IGN else 3)

if __name__ == "__main__":
    # Ctrl-C handled as in a terminal (under pytest-xdist this process inherits SIGINT ignored, as would the server)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    assert processes.start_server()
    pid = forkserver._forkserver._forkserver_pid
    # what Ctrl-C at the terminal sends the whole process group, while the server loads: at its very start (before
    # it has imported anything: a loaded machine's 0.3 s) and once it is importing
    for wait_s in (0.0, 0.3):
        time.sleep(wait_s)
        os.kill(pid, signal.SIGINT)
    worker = multiprocessing.get_context("forkserver").Process(target=interrupt_handler_of_a_worker)
    worker.start()
    worker.join()
    print(worker.exitcode, forkserver._forkserver._forkserver_pid == pid)
    processes.stop_server()
"""


def test_ctrl_c_while_the_server_loads_leaves_it_serving_quietly_and_its_workers_leave_it_to_the_campaign(tmp_path):
    script = tmp_path / "interrupt.py"
    script.write_text(INTERRUPTED_WHILE_LOADING)
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120,
                            env={key: value for key, value in os.environ.items() if key != "ATTSIM_FORKSERVER"})
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["0", "True"]  # the worker ignores Ctrl-C (the campaign stops it); same server
    assert "Traceback" not in result.stderr and "KeyboardInterrupt" not in result.stderr, result.stderr


@pytest.mark.parametrize("forkserver_setting, presses, signum", [
    (None, 1, signal.SIGINT), ("0", 1, signal.SIGINT), (None, 2, signal.SIGINT), (None, 1, signal.SIGTERM)],
    ids=["forked", "spawned", "pressed-twice", "sigterm"])
def test_ctrl_c_in_a_campaign_is_one_line_exit_130_and_keeps_what_it_has_recorded(tmp_path, forkserver_setting,
                                                                                   presses, signum):
    """Ctrl-C at the terminal, sent to the whole process group mid-campaign: the campaign says "interrupted" and
    stops its cluster; its workers printed two tracebacks of dask's each (KeyboardInterrupt in their event loop),
    forked or spawned (ATTSIM_FORKSERVER=0); pressed twice as well (the second is ignored while the cluster
    closes: it cut the close short, and dask closed it again at exit ~11 s later, at times with tracebacks).
    SIGTERM to the group (a batch system's time limit) ended it at once, the runs held in memory lost, without a
    word: it ends as Ctrl-C does, exit 143."""
    import time

    from attsim.campaign import records as store
    from tests.campaign.test_campaign import _slow_script

    out = tmp_path / "mc"
    command = [str(Path(sys.executable).parent / "attsim"), "campaign", str(_slow_script(tmp_path)), "--runs", "200",
               "--workers", "2", "--out", str(out), "--no-report"]
    env = {key: value for key, value in os.environ.items() if key != "ATTSIM_FORKSERVER"}
    if forkserver_setting is not None:
        env["ATTSIM_FORKSERVER"] = forkserver_setting
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                               start_new_session=True,  # its own group, as a shell's job is
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # (xdist ignores it)
    try:
        deadline = time.monotonic() + 300
        while not list((out / store.RECORDS_DIR).glob("part-*.parquet")) and time.monotonic() < deadline:
            assert process.poll() is None
            time.sleep(0.05)
        time.sleep(1.5)  # runs taken since the last part was written wait in memory (FLUSH_WALL_S)
        for press in range(presses):
            time.sleep(0.05 if press else 0.0)
            os.killpg(process.pid, signum)
        stdout, stderr = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    assert process.returncode == 128 + signum, stderr
    assert "Traceback" not in stdout + stderr and "KeyboardInterrupt" not in stdout + stderr, stderr
    kept = store.read_records(out)
    assert 0 < len(kept) < 200 and kept["run"].is_unique
    # every run the progress bar had counted is recorded (those in memory were dropped: 438 of 501)
    shown = [int(count) for count in re.findall(r"(\d+)/200 runs", stderr)]
    assert shown and len(kept) >= shown[-1], (len(kept), shown[-1])
    said = [line for line in stderr.splitlines() if line.startswith("attsim:")]
    how = "interrupted" if signum == signal.SIGINT else "terminated (SIGTERM)"
    assert said == [f"attsim: {how}; {len(kept)} of 200 runs are recorded in {out}; the same campaign again "
                    "runs only the rest"], stderr
    time.sleep(1.0)
    left = subprocess.run(["ps", "-ww", "-o", "pid=,stat=", "-g", str(process.pid)], capture_output=True, text=True)
    assert [row for row in left.stdout.splitlines() if not row.split()[1].startswith("Z")] == [], left.stdout


LOST_SCHEDULER = """
import logging, sys
from distributed import Client
from attsim.campaign import processes

def heartbeat_failures():
    from distributed.comm.core import CommClosedError

    log = logging.getLogger("distributed.worker")
    for error in (CommClosedError("in <TCP (closed) ConnectionPool.heartbeat_worker>: Stream is closed"),
                  ValueError("a worker's own failure")):
        try:
            raise error
        except Exception:
            log.exception("Failed to communicate with scheduler during heartbeat.")
    return True

if __name__ == "__main__":
    cluster = processes.local_cluster(1)
    try:
        with Client(cluster) as client:
            assert list(client.run(heartbeat_failures).values()) == [True]
    finally:
        cluster.close()
        processes.stop_server()
"""


@pytest.mark.parametrize("forkserver_setting", [None, "0"], ids=["forked", "spawned"])
def test_a_worker_that_loses_its_scheduler_says_nothing_of_it_and_its_own_errors_still(tmp_path, forkserver_setting):
    """Ctrl-C mid-campaign with spawned workers: a worker's heartbeat caught between the campaign stopping its
    scheduler and stopping it printed dask's traceback of the closed connection under the campaign's one line."""
    script = tmp_path / "lost_scheduler.py"
    script.write_text(LOST_SCHEDULER)
    env = {key: value for key, value in os.environ.items() if key != "ATTSIM_FORKSERVER"}
    if forkserver_setting is not None:
        env["ATTSIM_FORKSERVER"] = forkserver_setting
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=180, env=env)
    assert result.returncode == 0, result.stderr
    assert "CommClosedError" not in result.stderr and "Stream is closed" not in result.stderr, result.stderr
    assert "ValueError: a worker's own failure" in result.stderr  # nothing else is hidden
