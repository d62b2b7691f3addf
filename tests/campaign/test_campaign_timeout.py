"""A run that never returns is timed out: a real dask.distributed LocalCluster of processes, a build() that sleeps
forever for one drawn value. The campaign finishes, that run is an ERROR "timeout: ...", every other run's record
equals the same run done one by one in this process, and the worker it hung is restarted and serves again."""

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import attsim
from attsim import cli
from attsim.campaign import records as store
from attsim.campaign import timeouts
from attsim.campaign.worker import RunSpec, run_many, run_one
from attsim.dispersions import Uniform, draw_parameters
from attsim.errors import InputError

ROOT = Path(__file__).resolve().parents[2]
SLEW = ROOT / "tests" / "data" / "campaign_slew.py"
DRAW = {"hang": Uniform(0.0, 1.0)}

distributed = pytest.importorskip("distributed")


def _hanging_script(tmp_path, threshold: float) -> Path:
    """The campaign tests' slew, whose build() sleeps forever when the run's 'hang' draw exceeds ``threshold``."""
    script = tmp_path / "hanging.py"
    script.write_text(
        "import sys, time\n"
        f"sys.path.insert(0, {str(SLEW.parent)!r})\n"
        "import campaign_slew as base\n"
        "from attsim.dispersions import Uniform\n"
        "criteria = base.criteria\n"
        "def dispersions():\n"
        "    return {'hang': Uniform(0.0, 1.0)}\n"
        "def build(out_dir=None, hang=0.0):\n"
        f"    while hang > {threshold!r}:\n"
        "        time.sleep(1.0)  # a build that blocks for ever (a lock never released, a user's endless loop)\n"
        "    mission = base.build(out_dir)\n"
        "    mission.description = f'hang draw {hang}'  # the draw reaches the mission (the campaign checks it)\n"
        "    return mission\n")
    return script


def _draws(seed: int, runs: int) -> list[float]:
    return [draw_parameters(DRAW, seed, k)["hang"] for k in range(runs)]


def _check_records(campaign: attsim.Campaign, records: pd.DataFrame, hung: int, limit_s: float) -> None:
    """Every run once; the hung one a timeout ERROR; the others equal to the same runs done here one by one."""
    assert list(records["run"]) == list(range(campaign.runs))  # nothing lost, nothing duplicated
    row = records.set_index("run").loc[hung]
    assert row["status"] == "ERROR" and row["error"] == f"timeout: the run took longer than {limit_s:.4g} s"
    assert row["wall_s"] > limit_s and row["worker"].startswith("tcp://")
    others = [k for k in range(campaign.runs) if k != hung]
    spec = campaign.spec()
    expected = store.normalise_records(pd.DataFrame.from_records(
        [run_one(RunSpec(spec, k, campaign.parameters(k))).record for k in others]))
    got = records[records["run"] != hung].reset_index(drop=True)
    assert set(got["status"]) <= {"OK", "FAIL"}
    pd.testing.assert_frame_equal(got.drop(columns=["wall_s", "worker"]),
                                  expected.drop(columns=["wall_s", "worker"]), check_dtype=False)


def _warm(client, campaign: attsim.Campaign) -> None:
    """Each worker of ``client`` does the campaign's run 0 (it does not hang) once: its imports are done and the
    mission's units loaded before the campaign, so that a short explicit limit times out only the run that hangs."""
    spec = RunSpec(campaign.spec(), 0, campaign.parameters(0))
    tasks = [client.submit(run_many, [spec], workers=[worker], pure=False) for worker in client.nthreads()]
    for task in tasks:
        [done] = task.result(timeout=300)
        assert done.record["status"] in ("OK", "FAIL")


def test_a_run_that_hangs_times_out_and_the_restarted_worker_serves_again(tmp_path, capsys):
    # a campaign the command line starts on its own LocalCluster, with an explicit limit (which bounds a worker's
    # first run too, its loading of the units included: 12 s, so that a loaded machine does not time out the others)
    runs, threshold = 6, 0.8
    seed = next(s for s in range(1000)  # runs 0 and 1 are built in this process first (the dispersions' check)
                if [k for k, h in enumerate(_draws(s, runs)) if h > threshold] in ([3], [4]))
    hung = next(k for k, h in enumerate(_draws(seed, runs)) if h > threshold)
    script, out = _hanging_script(tmp_path, threshold), tmp_path / "mc"
    code = cli.main(["campaign", str(script), "--runs", str(runs), "--seed", str(seed), "--workers", "2",
                     "--run-timeout", "12", "--out", str(out)])
    printed = capsys.readouterr().out
    assert code == 1  # 5 of 6 runs cannot show 99 % with 95 % confidence
    assert f"ERROR run {hung}: timeout: the run took longer than 12 s" in printed
    campaign = attsim.Campaign(script, runs=runs, seed=seed, out_dir=out)
    records = store.read_records(out)
    _check_records(campaign, records, hung, 12.0)
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "timeout: the run took longer than 12 s" in page and f"--index {hung}" in page
    # resumed, the timeout is a record like any other: nothing is run again
    assert campaign.missing() == []


def test_a_hanging_run_in_a_task_of_several_times_out_alone_under_the_default_limit(tmp_path, monkeypatch):
    from attsim.campaign import execute

    monkeypatch.setattr(execute, "TASK_TARGET_S", 1e6)  # after the first window, tasks as large as the end allows
    monkeypatch.setattr(timeouts, "DEFAULT_FLOOR_S", 3.0)  # the default limit: max(3 s, 20 x the median run)
    runs = 64
    # a seed whose largest draw (the one run that hangs) comes after the first window of one-run tasks
    seed = next(s for s in range(1000) if 34 <= int(np.argmax(_draws(s, runs))) < 50)
    draws = _draws(seed, runs)
    hung, threshold = int(np.argmax(draws)), sorted(draws)[-2]
    script = _hanging_script(tmp_path, threshold)
    campaign = attsim.Campaign(script, runs=runs, seed=seed, out_dir=tmp_path / "mc")
    assert campaign.run_timeout_s is None
    keys = []
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster, distributed.Client(cluster) as client:
        before = set(client.nthreads())
        submit = client.submit

        def recording_submit(*args, **kwargs):
            keys.append(kwargs["key"])
            return submit(*args, **kwargs)

        client.submit = recording_submit
        result = campaign.run(client=client, report=False)
        client.submit = submit
        records = result.records
        stuck = records.set_index("run").loc[hung, "worker"]
        # the stuck worker was restarted (a new process, a new address); both workers do a run again
        client.wait_for_workers(2, timeout=60)
        after = set(client.nthreads())
        assert stuck in before and stuck not in after and len(after) == 2
        spec = RunSpec(campaign.spec(), 0, campaign.parameters(0))
        for worker in after:
            [again] = client.submit(run_many, [spec], workers=[worker], pure=False).result(timeout=120)
            assert again.record["worker"] == worker and again.record["status"] in ("OK", "FAIL")
    limit = float(records.set_index("run").loc[hung, "error"].split()[-2])
    walls = records.loc[records["status"] != "ERROR", "wall_s"]
    assert 3.0 <= limit <= max(3.0, 20.0 * float(walls.max()))  # derived from the runs' wall times
    tasks = [[int(k) for k in str(key).split("-")[2].split("_")] for key in keys]
    first = next(t for t in tasks if hung in t)
    assert len(first) >= 2  # it hung in a task of several runs; only it is the timeout
    _check_records(campaign, records, hung, limit)


def test_the_default_limit_is_the_floor_or_20_times_the_median_of_the_runs_that_ran_to_their_end():
    clock = timeouts.RunClock(None)
    assert clock.limit_s() == math.inf
    for wall, status in ((1.0, "OK"), (0.01, "ERROR"), (2.0, "FAIL"), (math.nan, "OK")):
        clock.finished({"wall_s": wall, "status": status})
    assert clock.limit_s() == math.inf  # two runs ran to their end: too few to tell
    clock.finished({"wall_s": 9.0, "status": "OK"})
    assert clock.limit_s() == 60.0  # median 2 s: 40 s < the floor
    for wall in (4.0, 5.0, 6.0, 7.0):
        clock.finished({"wall_s": wall, "status": "OK"})
    assert clock.limit_s() == 20.0 * 5.0  # walls 1, 2, 4, 5, 6, 7, 9: median 5 s
    clock.finished({"wall_s": 8.0, "status": "OK"})
    assert clock.limit_s() == 20.0 * 5.5  # an even count: the mean of the middle two
    assert timeouts.RunClock(2.5).limit_s() == 2.5 and timeouts.RunClock(math.inf).overdue() == []


def test_a_start_heard_is_overdue_only_past_the_limit_and_only_for_this_campaigns_tasks(monkeypatch):
    now = [100.0]
    monkeypatch.setattr(timeouts.time, "monotonic", lambda: now[0])
    clock = timeouts.RunClock(5.0)
    clock.expect("attsim-run-3_4-aa")
    clock.expect("attsim-run-7-cc")
    clock.heard((0.0, {"key": "attsim-run-3_4-aa", "run": 3, "worker": "tcp://w1", "cold": False}))
    clock.heard((0.0, {"key": "attsim-run-9-bb", "run": 9, "worker": "tcp://w1", "cold": False}))  # not ours
    clock.heard((0.0, {"key": "attsim-run-7-cc", "run": 7, "worker": "tcp://w2", "cold": True}))  # w2's first run
    now[0] = 104.0
    clock.heard((0.0, {"key": "attsim-run-3_4-aa", "run": 4, "worker": "tcp://w1", "cold": False}))  # its next run
    now[0] = 108.0  # run 4 started 4 s ago; w2's first run 8 s ago: an explicit limit bounds a first run too (the
    assert clock.overdue() == [timeouts.Overdue("attsim-run-7-cc", 7, "tcp://w2", 8.0, 5.0)]  # units were compiled
    clock.unstart("attsim-run-7-cc")  # before the runs started)
    now[0] = 109.5
    assert clock.overdue() == [timeouts.Overdue("attsim-run-3_4-aa", 4, "tcp://w1", 5.5, 5.0)]
    clock.forget_worker("tcp://w1")
    assert clock.overdue() == []
    default = timeouts.RunClock(None)  # the default limit: a first run gets the allowance for loading the units
    for wall in (1.0, 1.0, 1.0):
        default.finished({"status": "OK", "wall_s": wall})
    default.expect("attsim-run-8-dd")
    default.heard((0.0, {"key": "attsim-run-8-dd", "run": 8, "worker": "tcp://w3", "cold": True}))
    limit = default.limit_s()
    now[0] += limit + timeouts.COLD_ALLOWANCE_S - 0.5
    assert default.overdue() == []
    now[0] += 1.0
    assert default.overdue() == [timeouts.Overdue("attsim-run-8-dd", 8, "tcp://w3", limit + timeouts.COLD_ALLOWANCE_S
                                                  + 0.5, limit + timeouts.COLD_ALLOWANCE_S)]


@pytest.mark.parametrize("value, rule", [
    (float("nan"), "must be a number of seconds > 0"), (-1.0, "must be a number of seconds > 0"),
    (0, "must be a number of seconds > 0"), ("5", "must be a real number"), (True, "must be a real number"),
])
def test_a_bad_run_timeout_is_refused_naming_the_field(tmp_path, value, rule):
    with pytest.raises(InputError) as info:
        attsim.Campaign(SLEW, runs=2, out_dir=tmp_path / "mc", run_timeout_s=value)
    assert info.value.field == "run_timeout_s" and rule in info.value.rule
    assert not (tmp_path / "mc").exists()


@pytest.mark.parametrize("text", ["nan", "-1", "0", "soon"])
def test_a_bad_run_timeout_on_the_command_line_is_one_line_and_exit_2(tmp_path, capsys, text):
    out = tmp_path / "mc"
    assert cli.main(["campaign", str(SLEW), "--runs", "2", "--run-timeout", text, "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("attsim: run_timeout_s: must be a number of seconds > 0")
    assert not out.exists()


def test_inf_is_no_limit(tmp_path):
    from attsim.campaign.cli import _seconds

    assert attsim.Campaign(SLEW, runs=2, out_dir=tmp_path / "mc", run_timeout_s=math.inf).run_timeout_s == math.inf
    assert _seconds("inf", "run_timeout_s") == math.inf and _seconds(None, "run_timeout_s") is None


def test_a_stuck_worker_without_a_nanny_gets_no_more_runs_and_says_so_once(tmp_path, monkeypatch, capsys):
    # an external cluster: one worker with a nanny, one started as `dask worker --no-nanny` whose builds all block
    # (it cannot be restarted: the scheduler removes it, the campaign sends it nothing more and says so on stderr)
    import os
    import subprocess
    import sys

    monkeypatch.setattr(timeouts, "FOREIGN_COLD_ALLOWANCE_S", 0.0)  # the stuck worker's first run is its only one
    script = tmp_path / "stuck.py"
    script.write_text(
        "import os, sys, time\n"
        f"sys.path.insert(0, {str(SLEW.parent)!r})\n"
        "import campaign_slew as base\n"
        "criteria, dispersions = base.criteria, base.dispersions\n"
        "def build(out_dir=None, **params):\n"
        "    while os.environ.get('ATTSIM_TEST_STUCK_WORKER'):\n"
        "        time.sleep(1.0)\n"
        "    return base.build(out_dir, **params)\n")
    # 8 s: the other worker, warmed below (its imports and the units loaded), runs one in ~0.1 s, far below it on a
    # loaded machine; the stuck worker's one run is waited out for the whole limit
    campaign = attsim.Campaign(script, runs=6, seed=3, out_dir=tmp_path / "mc", run_timeout_s=8.0)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster, distributed.Client(cluster) as client:
        _warm(client, campaign)
        env = {**os.environ, "ATTSIM_TEST_STUCK_WORKER": "1"}
        stuck = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", cluster.scheduler_address,
                                  "--no-nanny", "--nthreads", "1", "--no-dashboard"], env=env,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            client.wait_for_workers(2, timeout=120)
            result = campaign.run(client=client, report=False)
        finally:
            stuck.kill()
            stuck.wait()
    err = capsys.readouterr().err
    records = result.records.set_index("run")
    assert list(records.index) == list(range(6))
    timed_out = records[records["status"] == "ERROR"]
    assert len(timed_out) == 1 and (timed_out["error"] == "timeout: the run took longer than 8 s").all()
    address = timed_out["worker"].iloc[0]
    assert err.count("could not be restarted") == 1 and f"worker {address} is stuck" in err
    done = records[records["status"] != "ERROR"]
    assert set(done["status"]) <= {"OK", "FAIL"} and address not in set(done["worker"])


def test_a_stuck_worker_whose_restart_times_out_gets_no_more_runs_and_the_campaign_completes(tmp_path, monkeypatch,
                                                                                              capsys):
    # a real LocalCluster of two workers with nannies. Once the test arms it, a worker process that starts never joins
    # the scheduler (a preload that blocks, as a machine out of memory or a hung file system leaves a restart): the
    # hung worker's restart times out, the scheduler removes it, and the campaign must go on on the other worker,
    # say so once and record every run (it ended in 'internal error, a bug in attsim': a KeyError asking the
    # scheduler about the removed worker). The restart is waited for RESTART_TIMEOUT_S (60 s), lowered here.
    monkeypatch.setattr(timeouts, "RESTART_TIMEOUT_S", 5.0)
    monkeypatch.setattr(timeouts, "FOREIGN_COLD_ALLOWANCE_S", 0.0)  # the workers load the units compiled here
    runs, threshold = 6, 0.8
    seed = next(s for s in range(1000)  # runs 0 and 1 are built in this process first (the dispersions' check)
                if [k for k, h in enumerate(_draws(s, runs)) if h > threshold] in ([3], [4]))
    hung = next(k for k, h in enumerate(_draws(seed, runs)) if h > threshold)
    script, out = _hanging_script(tmp_path, threshold), tmp_path / "mc"
    campaign = attsim.Campaign(script, runs=runs, seed=seed, out_dir=out)
    assert run_one(RunSpec(campaign.spec(), 0, campaign.parameters(0))).record["status"] in ("OK", "FAIL")
    armed = tmp_path / "armed"
    preload = tmp_path / "never_back.py"
    preload.write_text(
        "import os, time\n"
        "def dask_setup(worker):\n"
        "    deadline = time.monotonic() + 300.0  # bounded: no process the test leaves behind outlives it long\n"
        f"    while os.path.exists({str(armed)!r}) and time.monotonic() < deadline:\n"
        "        time.sleep(0.5)\n")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                                  preload=[str(preload)]) as cluster, distributed.Client(cluster) as client:
        client.wait_for_workers(2, timeout=120)
        _warm(client, campaign)  # the runs that do not hang then take ~0.1 s: far below the 8 s limit
        armed.touch()  # from now on a worker process that starts does not come back
        code = cli.main(["campaign", str(script), "--runs", str(runs), "--seed", str(seed), "--out", str(out),
                         "--scheduler", cluster.scheduler_address, "--run-timeout", "8", "--no-report"])
        armed.unlink()  # the cluster closes normally
    captured = capsys.readouterr()
    assert code == 1, captured.err  # 5 of 6 runs cannot show 99 % with 95 % confidence; not 3, 'a bug in attsim'
    assert f"ERROR run {hung}: timeout: the run took longer than 8 s" in captured.out
    records = store.read_records(out)
    _check_records(campaign, records, hung, 8.0)
    address = records.set_index("run").loc[hung, "worker"]
    assert captured.err.count("could not be restarted") == 1
    assert f"worker {address} is stuck in a run that timed out and could not be restarted (timed out)" in captured.err
