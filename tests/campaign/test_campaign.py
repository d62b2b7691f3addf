"""Monte Carlo campaigns end to end: a real dask.distributed LocalCluster of processes, real files, real kills.

The reference for a campaign's records is the same runs done one by one in
this process (``run_one`` outside dask, or ``attsim run --campaign --index``),
never the campaign's own earlier output.
"""

import math
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

import attsim
from attsim import cli
from attsim.campaign import records as store
from attsim.campaign.envelope import Envelope
from attsim.campaign.worker import DECIMATED_ROWS, RunSpec, judge, mission_module, run_one
from attsim.dispersions import Uniform, draw_parameters, run_seed
from attsim.telemetry.lock import RunLock

ROOT = Path(__file__).resolve().parents[2]
SLEW = ROOT / "tests" / "data" / "campaign_slew.py"
SAME_RUN = ["run", "seed", "status", "error"]  # with the p:, v: and ok: columns: all but wall_s and worker

distributed = pytest.importorskip("distributed")


def _comparable(records: pd.DataFrame) -> pd.DataFrame:
    return records.drop(columns=["wall_s", "worker"]).reset_index(drop=True)


def _one_by_one(campaign: attsim.Campaign, indices) -> pd.DataFrame:
    """The same runs done in this process, outside dask: the reference a campaign's records must equal."""
    spec = campaign.spec()
    rows = [run_one(RunSpec(spec, k, draw_parameters(campaign.dispersions, campaign.seed, k))).record for k in indices]
    return store.normalise_records(pd.DataFrame.from_records(rows))


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    # compile (or load) the mission's loop here first, so the workers find it in numba's cache
    warm = attsim.Campaign(SLEW, runs=1, out_dir=tmp_path_factory.mktemp("warm"))
    assert run_one(RunSpec(warm.spec(), 0, warm.parameters(0))).record["status"] in ("OK", "FAIL")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster:
        with distributed.Client(cluster) as c:
            # the workers inherit this environment: they import the attsim under test, not another one
            assert set(c.run(lambda: __import__("attsim").__file__).values()) == {attsim.__file__}
            yield c


def test_records_equal_the_same_runs_done_one_by_one(client, tmp_path):
    campaign = attsim.Campaign(SLEW, runs=6, seed=11, out_dir=tmp_path / "mc")
    result = campaign.run(client=client)
    records = result.records
    assert list(records["run"]) == list(range(6)) and result.ran == 6
    assert set(records["worker"]) <= set(client.nthreads())  # every run ran on a dask worker
    pd.testing.assert_frame_equal(_comparable(records), _comparable(_one_by_one(campaign, range(6))))
    assert list(records["seed"]) == [run_seed(11, k) for k in range(6)]
    ok = records[[c for c in records.columns if c.startswith("ok:")]].all(axis=1)
    assert list(records["status"]) == ["OK" if passed else "FAIL" for passed in ok]
    assert {"OK", "FAIL"} <= set(records["status"])  # the bound sits inside the spread: both happen
    # the records on disk are the ones returned, one part after compaction
    assert len(list((tmp_path / "mc" / "records").glob("part-*.parquet"))) == 1
    pd.testing.assert_frame_equal(store.read_records(tmp_path / "mc"), records)
    described = store.read_campaign(tmp_path / "mc")
    assert [c["label"] for c in described["criteria"]] == ["final rate [deg/s]", "final pointing error [deg]"]
    assert set(described["parameters"]) == {"inertia_scale", "omega0_rad_s", "attitude_error_rad"}
    assert described["envelope_quantities"]["rate_deg_s"] == "deg/s"  # and att_err_deg (deg) when the run has it


def test_results_taken_directly_after_a_stall_are_the_same_records_once_each(client, tmp_path, monkeypatch):
    """A loaded test run hung for ever: a task the scheduler held finished never reached dask's as_completed. After
    STALL_S without a result the campaign takes the finished tasks' results itself; here it does so at every poll
    (STALL_S = 0), so results arrive both ways, and each run is recorded once, as done one by one."""
    from attsim.campaign import execute

    taken = []
    unstall = execute._Execution.unstall

    def counting(self):
        before = len(self.by_key)
        unstall(self)
        taken.append(before - len(self.by_key))

    monkeypatch.setattr(execute, "STALL_S", 0.0)
    monkeypatch.setattr(execute._Execution, "unstall", counting)
    campaign = attsim.Campaign(SLEW, runs=6, seed=11, out_dir=tmp_path / "mc")
    records = campaign.run(client=client, report=False).records
    assert list(records["run"]) == list(range(6))
    pd.testing.assert_frame_equal(_comparable(records), _comparable(_one_by_one(campaign, range(6))))
    assert taken and sum(taken) >= 0  # the path ran; what it took depends on timing, the records do not


def test_rerunning_run_k_reproduces_its_record_with_full_telemetry_and_report(client, tmp_path, capsys):
    campaign = attsim.Campaign(SLEW, runs=4, seed=5, out_dir=tmp_path / "mc")
    record = campaign.run(client=client, report=False).records.set_index("run").loc[2]
    code = cli.main(["run", str(SLEW), "--campaign", str(tmp_path / "mc"), "--index", "2"])
    assert code == (0 if record["status"] == "OK" else 1)
    out = capsys.readouterr().out
    assert f"seed {run_seed(5, 2)}" in out and "report: " in out
    tel = attsim.load(tmp_path / "mc" / "runs" / "2")  # the default place of a re-run: runs/<k>
    assert (tmp_path / "mc" / "runs" / "2" / "report.html").is_file() and not tel.partial
    assert tel.meta["seed"] == run_seed(5, 2) and len(tel.df) == 41  # full telemetry: 20 s every 0.5 s
    for label, value, ok, _ in mission_module(SLEW).criteria(tel):
        assert value == record[f"v:{label}"] and bool(ok) == record[f"ok:{label}"]  # exactly


def test_rerun_refuses_an_index_outside_the_campaign_and_overrides(client, tmp_path, capsys):
    attsim.Campaign(SLEW, runs=2, out_dir=tmp_path / "mc").run(client=client, report=False)
    assert cli.main(["run", str(SLEW), "--campaign", str(tmp_path / "mc"), "--index", "2"]) == 2
    assert "index: must be in [0, 1]" in capsys.readouterr().err
    assert cli.main(["run", str(SLEW), "--campaign", str(tmp_path / "mc"), "--index", "0", "--seed", "3"]) == 2
    assert "--seed" in capsys.readouterr().err


def test_resume_runs_only_the_missing_runs(client, tmp_path):
    first = attsim.Campaign(SLEW, runs=4, seed=2, out_dir=tmp_path / "mc").run(client=client, report=False)
    second = attsim.Campaign(SLEW, runs=7, seed=2, out_dir=tmp_path / "mc").run(client=client, report=False)
    assert second.ran == 3 and list(second.records["run"]) == list(range(7))
    # the first four are the records written the first time (same wall time and worker): not run again
    pd.testing.assert_frame_equal(second.records.iloc[:4].reset_index(drop=True), first.records)
    envelopes, covered, units = store.load_envelopes(tmp_path / "mc", Envelope)
    assert covered == set(range(7)) and units["rate_deg_s"] == "deg/s"
    assert envelopes["rate_deg_s"].result()["runs"].max() == 7


def test_envelopes_reconciled_after_a_kill_between_records_and_envelopes(client, tmp_path):
    full = attsim.Campaign(SLEW, runs=5, seed=4, out_dir=tmp_path / "mc").run(client=client, report=False)
    expected = store.load_envelopes(tmp_path / "mc", Envelope)[0]["rate_deg_s"].result()
    # the state a kill leaves after the last records part, before the envelopes covering it were saved
    attsim.Campaign(SLEW, runs=3, seed=4, out_dir=tmp_path / "short").run(client=client, report=False)
    shutil.copy(tmp_path / "short" / store.ENVELOPES_FILE, tmp_path / "mc" / store.ENVELOPES_FILE)
    resumed = attsim.Campaign(SLEW, runs=5, seed=4, out_dir=tmp_path / "mc").run(client=client, report=False)
    assert resumed.ran == 0
    pd.testing.assert_frame_equal(resumed.records, full.records)  # runs 3 and 4 were repeated for envelopes only
    envelopes, covered, _ = store.load_envelopes(tmp_path / "mc", Envelope)
    assert covered == set(range(5))
    got = envelopes["rate_deg_s"].result()
    assert list(got["runs"]) == list(expected["runs"])  # neither missed nor counted twice
    np.testing.assert_allclose(got.drop(columns="runs").to_numpy(), expected.drop(columns="runs").to_numpy(),
                               rtol=2e-3)


def test_a_run_that_raises_is_an_error_record_and_the_campaign_goes_on(client, tmp_path):
    script = tmp_path / "tripping.py"
    script.write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(SLEW.parent)!r})\n"
        "import campaign_slew as base\n"
        "from attsim.dispersions import Uniform\n"
        "criteria = base.criteria\n"
        "def dispersions():\n"
        "    return {**base.dispersions(), 'trip': Uniform(0.0, 1.0)}\n"
        "def build(out_dir=None, trip=0.0, **params):\n"
        "    if trip > 0.6:\n"
        "        raise RuntimeError(f'tripped at {trip:.3f}\\nsecond line')\n"
        "    mission = base.build(out_dir, **params)\n"
        "    mission.description = f'trip draw {trip}'  # the draw reaches the mission (the campaign checks it)\n"
        "    return mission\n")
    result = attsim.Campaign(script, runs=8, seed=9, out_dir=tmp_path / "mc").run(client=client, report=False)
    trips = [draw_parameters({"trip": Uniform(0.0, 1.0)}, 9, k)["trip"] for k in range(8)]
    records = result.records.set_index("run")
    assert 0 < sum(t > 0.6 for t in trips) < 8
    for k, trip in enumerate(trips):
        row = records.loc[k]
        if trip > 0.6:
            assert row["status"] == "ERROR" and row["error"] == f"RuntimeError: tripped at {trip:.3f}"
            assert math.isnan(row["v:final rate [deg/s]"]) and not row["ok:final rate [deg/s]"]
            assert row["p:trip"] == trip
        else:
            assert row["status"] in ("OK", "FAIL") and row["error"] == ""
    assert result.rate.runs == 8 and result.rate.passed == int((records["status"] == "OK").sum())


def _killing_script(tmp_path, threshold: float):
    """The campaign slew, whose build kills its own worker process for a 'crash' draw above ``threshold`` (as a
    segfault in compiled code would)."""
    script = tmp_path / "crashing.py"
    script.write_text(
        "import os, signal, sys\n"
        f"sys.path.insert(0, {str(SLEW.parent)!r})\n"
        "import campaign_slew as base\n"
        "from attsim.dispersions import Uniform\n"
        "criteria = base.criteria\n"
        "def dispersions():\n"
        "    return {'crash': Uniform(0.0, 1.0)}\n"
        "def build(out_dir=None, crash=0.0):\n"
        f"    if crash > {threshold!r}:\n"
        "        os.kill(os.getpid(), signal.SIGKILL)\n"
        "    mission = base.build(out_dir)\n"
        "    mission.description = f'crash draw {crash}'  # the draw reaches the mission (the campaign checks it)\n"
        "    return mission\n")
    return script


def test_a_run_that_kills_its_worker_is_an_error_record_and_the_campaign_goes_on(tmp_path):
    script = _killing_script(tmp_path, 0.8)
    crashes = [k for k in range(6) if draw_parameters({"crash": Uniform(0.0, 1.0)}, 2, k)["crash"] > 0.8]
    assert crashes == [5]
    import dask

    # dask gives up on a task after `allowed-failures` lost workers (3 by default; 0 here, to keep the test short)
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                      dashboard_address=":0") as cluster, distributed.Client(cluster) as client:
            result = attsim.Campaign(script, runs=6, seed=2, out_dir=tmp_path / "mc").run(client=client, report=False)
    records = result.records.set_index("run")
    assert list(records.index) == list(range(6))
    assert records.loc[5, "status"] == "ERROR" and records.loc[5, "error"].startswith("KilledWorker")
    # with no retries allowed, a run queued on the dying worker may fail with it: recorded as such, never lost
    errors = records[records["status"] == "ERROR"]
    assert errors["error"].str.startswith("KilledWorker").all() and len(records) - len(errors) >= 3


def _runs_of(key: str) -> list[int]:
    """The runs a task did, from its key: attsim-run-<k>[_<k>...]-<random>."""
    return [int(k) for k in str(key).split("-")[2].split("_")]


def test_short_runs_go_several_to_a_task_and_equal_the_runs_done_one_by_one(client, tmp_path):
    campaign = attsim.Campaign(SLEW, runs=60, seed=5, out_dir=tmp_path / "mc")
    with distributed.get_task_stream(client) as stream:
        result = campaign.run(client=client, report=False)
    tasks = [_runs_of(t["key"]) for t in stream.data if str(t["key"]).startswith("attsim-run-")]
    assert max(len(runs) for runs in tasks) > 1  # the first tasks (one run each) told how short a run is
    assert sorted(k for runs in tasks for k in runs) == list(range(60))  # each run in one task
    pd.testing.assert_frame_equal(_comparable(result.records), _comparable(_one_by_one(campaign, range(60))))
    envelopes, covered, _ = store.load_envelopes(tmp_path / "mc", Envelope)
    assert covered == set(range(60)) and envelopes["rate_deg_s"].result()["runs"].max() == 60


def test_a_task_of_several_runs_that_kills_its_worker_is_split_so_only_the_crashing_run_fails(tmp_path, monkeypatch):
    from attsim.campaign import execute

    monkeypatch.setattr(execute, "TASK_TARGET_S", 1e6)  # after the first window, tasks as large as the end allows
    runs = 64
    draw = {"crash": Uniform(0.0, 1.0)}
    # a seed whose largest draw (the one run that crashes) comes after the first window of one-run tasks
    seed = next(s for s in range(1000)
                if 34 <= int(np.argmax([draw_parameters(draw, s, k)["crash"] for k in range(runs)])) < 50)
    draws = [draw_parameters(draw, seed, k)["crash"] for k in range(runs)]
    culprit, threshold = int(np.argmax(draws)), sorted(draws)[-2]
    script = _killing_script(tmp_path, threshold)
    import dask

    keys = []
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                      dashboard_address=":0") as cluster, distributed.Client(cluster) as client:
            submit = client.submit

            def recording_submit(*args, **kwargs):
                keys.append(kwargs["key"])
                return submit(*args, **kwargs)

            client.submit = recording_submit
            result = attsim.Campaign(script, runs=runs, seed=seed, out_dir=tmp_path / "mc").run(client=client,
                                                                                                 report=False)
    tasks = [_runs_of(key) for key in keys]
    first = next(t for t in tasks if culprit in t)
    assert len(first) >= 2 and [culprit] in tasks  # its task held others; split, it ran alone
    records = result.records.set_index("run")
    assert list(records.index) == list(range(runs))
    assert records.loc[culprit, "status"] == "ERROR" and records.loc[culprit, "error"].startswith("KilledWorker")
    errors = records[records["status"] == "ERROR"]
    assert errors["error"].str.startswith("KilledWorker").all()
    # besides it, at most a run queued on the worker it killed the second time (dask queues ~2 a worker thread)
    assert len(errors) <= 3 and len(errors) < len(first), (len(errors), first)


def test_the_campaign_command_on_an_existing_scheduler_prints_and_exits_by_the_requirement(client, tmp_path, capsys):
    argv = ["campaign", str(SLEW), "--runs", "3", "--scheduler", client.scheduler.address, "--out",
            str(tmp_path / "mc"), "--no-report"]
    assert cli.main(argv) == 1  # 3 runs can never show 99 % with 95 % confidence
    out = capsys.readouterr().out
    assert f"dask: 2 workers, dashboard {client.dashboard_link}" in out
    records = store.read_records(tmp_path / "mc")
    passed = int((records["status"] == "OK").sum())
    # what the requirement needs, said before the runs (a warning: 3 runs cannot meet it) and after them
    impossible = ("requirement: at least 0.99 of runs pass with 95% confidence; cannot be met by 3 runs, even with "
                  "none failing: it needs at least 299 runs")
    assert f"\nwarning: {impossible}\n" in out and f"\nFAIL  {impossible}, {passed} passed\n" in out
    assert out.index("warning: requirement") < out.index("dask: ") and "runs: 3" in out
    assert cli.main(argv[:-1] + ["--require", "0.01", "--no-report"]) == (0 if passed else 1)  # resumed: 0 to run
    assert "resuming: 3 runs on disk, 0 to run" in capsys.readouterr().out


@pytest.mark.parametrize("argv, message", [
    (["campaign", str(SLEW)], "--runs"),
    (["campaign", str(SLEW), "--runs", "2", "--telemetry", "all"], "--telemetry"),
    (["campaign", str(SLEW), "--runs", "0"], "runs: must be an integer in [1, "),
    (["campaign", str(SLEW), "--runs", "2", "--require", "1.5"], "required_rate: must be in (0, 1)"),
    (["campaign", "no_such_mission", "--runs", "2"], "mission: unknown mission 'no_such_mission'"),
])
def test_bad_campaign_usage_exits_2_naming_the_field(argv, message, capsys):
    assert cli.main(argv) == 2
    assert message in capsys.readouterr().err


def test_a_criterion_whose_value_is_nan_never_passes():
    from attsim.testing import NotEvaluated

    columns, status, labels = judge([("a", float("nan"), True, "< 1"), ("b", 0.5, True, "< 1"),
                                     ("c", NotEvaluated("ended at 10 s"), True, "< 1"), ("d", [0.1, np.nan], True, "")])
    assert columns == {"v:a": columns["v:a"], "ok:a": False, "v:b": 0.5, "ok:b": True, "v:c": columns["v:c"],
                       "ok:c": False, "v:d": columns["v:d"], "ok:d": False}
    assert math.isnan(columns["v:a"]) and math.isnan(columns["v:c"]) and status == "FAIL"
    # (label, bound, declared record): None for a (label, value, ok, bound) tuple
    assert labels == (("a", "< 1", None), ("b", "< 1", None), ("c", "< 1", None), ("d", "", None))


def test_a_criterion_that_is_not_a_number_keeps_the_verdict_attsim_run_prints():
    # 'attsim run --campaign DIR --index K' must print the record's verdict: a mode's name or a vector that passes
    # there passed in the campaign too (it was a FAIL with value NaN)
    rows = [("mode", "SUN_POINTING", True, "= SUN_POINTING"), ("b", np.array([0.1, 0.2]), True, "< 1"),
            ("c", "DETUMBLE", False, "= SUN_POINTING")]
    columns, status, _ = judge(rows)
    assert [columns[f"ok:{label}"] for label, *_ in rows] == [c.ok for c in cli.judge(rows)] == [True, True, False]
    assert math.isnan(columns["v:mode"]) and math.isnan(columns["v:b"]) and status == "FAIL"
    assert judge(rows[:2])[1] == "OK"


@pytest.mark.parametrize("rows", [
    [("error [deg]", float("nan"), True, "< 30"), ("error [deg]", 0.5, True, "< 30")],  # a NaN row, then a passing one
    [("error [deg]", 45.0, False, "< 30"), ("rate", 0.1, True, "< 1"), ("error  [deg]", 0.5, True, "< 30")],
])
def test_two_criteria_of_one_label_are_refused_naming_it_not_merged_into_a_pass(rows):
    # the record kept one column a label: the later passing row replaced the failed one, and the run counted as OK
    with pytest.raises(attsim.InputError) as info:
        judge(rows)
    assert info.value.field == "criteria" and "label of its own" in info.value.rule
    assert info.value.detail == f"'error [deg]' labels criteria 1 and {len(rows)}"
    with pytest.raises(attsim.InputError, match="'error \\[deg\\]' labels criteria 1 and"):
        cli.judge(rows)


def test_a_campaign_of_criteria_sharing_a_label_records_errors_and_the_run_alone_refuses_it_too(client, tmp_path,
                                                                                                 capsys):
    script = tmp_path / "shared_label.py"
    script.write_text(
        "import math, sys\n"
        f"sys.path.insert(0, {str(SLEW.parent)!r})\n"
        "import campaign_slew as base\n"
        "dispersions = base.dispersions\n"
        "def build(out_dir=None, **params):\n"
        "    return base.build(out_dir, **params)\n"
        "def criteria(tel):\n"
        "    label, value, ok, bound = base.criteria(tel)[1]  # the pointing error: < 30 deg, it passes\n"
        "    return [(label, math.nan, True, bound), (label, value, ok, bound)]\n")
    out = tmp_path / "mc"
    result = attsim.Campaign(script, runs=2, seed=3, out_dir=out).run(client=client)
    message = ("criteria: each criterion must have a label of its own (a campaign records and counts each criterion "
               "under its label) ('final pointing error [deg]' labels criteria 1 and 2)")
    assert list(result.records["status"]) == ["ERROR", "ERROR"] and result.rate.passed == 0
    assert set(result.records["error"]) == {f"SharedLabelError: {message}"}
    assert "labels criteria 1 and 2" in (out / "report.html").read_text(encoding="utf-8")
    # attsim run --campaign DIR --index K refuses it the same way: no verdict, the label named, the telemetry kept
    capsys.readouterr()
    assert cli.main(["run", str(script), "--campaign", str(out), "--index", "1", "--no-report"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"attsim: {message}; the telemetry is kept in {out / 'runs' / '1'}"


def test_a_campaign_too_short_to_meet_its_requirement_warns_once_naming_the_runs_it_needs(tmp_path):
    with pytest.warns(attsim.AttsimWarning) as caught:
        attsim.Campaign(SLEW, runs=298, out_dir=tmp_path / "mc")
    assert [str(w.message) for w in caught] == [
        "requirement: at least 0.99 of runs pass with 95% confidence; cannot be met by 298 runs, even with none "
        "failing: it needs at least 299 runs"]
    assert caught[0].filename == __file__  # points at the caller's line
    with pytest.warns(attsim.AttsimWarning, match="cannot be met by 1000 runs.*at least 2995 runs"):
        attsim.Campaign(SLEW, runs=1000, out_dir=tmp_path / "mc", required_rate=0.999)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", attsim.AttsimWarning)
        campaign = attsim.Campaign(SLEW, runs=299, out_dir=tmp_path / "mc")  # all 299 passing would meet it
    assert campaign.needs() == "299 of 299 runs must pass (at most 0 may fail)"


def test_a_second_campaign_into_a_locked_directory_is_refused(client, tmp_path):
    holder = RunLock(tmp_path / "mc")
    (tmp_path / "mc").mkdir()
    assert holder.acquire()
    try:
        with pytest.raises(store.CampaignLockedError, match=f"campaign directory {tmp_path / 'mc'} is in use"):
            attsim.Campaign(SLEW, runs=2, out_dir=tmp_path / "mc").run(client=client)
    finally:
        holder.release()
    assert not (tmp_path / "mc" / store.CAMPAIGN_FILE).exists()  # refused before touching anything


def test_resuming_another_experiment_is_refused_naming_what_differs(client, tmp_path):
    attsim.Campaign(SLEW, runs=2, seed=1, out_dir=tmp_path / "mc").run(client=client, report=False)
    with pytest.raises(attsim.InputError, match=r"seed: 1 != 2"):
        attsim.Campaign(SLEW, runs=2, seed=2, out_dir=tmp_path / "mc").run(client=client)
    with pytest.raises(attsim.InputError, match=r"duration_s: None != 5.0"):
        attsim.Campaign(SLEW, runs=2, seed=1, out_dir=tmp_path / "mc", duration=5.0).missing()
    with pytest.raises(attsim.InputError, match=r"runs: must be at least the 2 runs"):
        attsim.Campaign(SLEW, runs=1, seed=1, out_dir=tmp_path / "mc").missing()


def test_resuming_with_other_envelope_points_is_refused_up_front_naming_them(client, tmp_path):
    # the envelopes' state sums the runs on its grid: a resume on another grid recorded one run, then failed on every
    # retry ('values: must have one row per run ...')
    out = tmp_path / "mc"
    first = attsim.Campaign(SLEW, runs=2, seed=1, out_dir=out, envelope_points=50).run(client=client, report=False)
    with pytest.raises(attsim.InputError, match=r"must match the campaign already in .*\(envelope_points: 50 != 80\)"):
        attsim.Campaign(SLEW, runs=4, seed=1, out_dir=out, envelope_points=80).run(client=client, report=False)
    with pytest.raises(attsim.InputError, match=r"envelope_points: 50 != 80"):
        attsim.Campaign(SLEW, runs=4, seed=1, out_dir=out, envelope_points=80).missing()
    pd.testing.assert_frame_equal(store.read_records(out), first.records)  # nothing run, nothing written
    assert store.read_campaign(out)["envelope_grid"]["points"] == 50
    # the same grid resumes
    again = attsim.Campaign(SLEW, runs=3, seed=1, out_dir=out, envelope_points=50).run(client=client, report=False)
    assert again.ran == 1 and store.load_envelopes(out, Envelope)[1] == {0, 1, 2}


def test_full_telemetry_keeps_each_runs_directory(client, tmp_path):
    attsim.Campaign(SLEW, runs=2, out_dir=tmp_path / "mc", telemetry="full").run(client=client, report=False)
    for k in range(2):
        tel = attsim.load(tmp_path / "mc" / "runs" / str(k))
        assert len(tel.df) == 41 and tel.meta["seed"] == run_seed(0, k)


def test_decimated_telemetry_keeps_at_most_the_decimated_rows_and_the_same_record(tmp_path):
    decimated = attsim.Campaign(SLEW, runs=1, out_dir=tmp_path / "mc", telemetry="decimated", duration=1200.0)
    kept = run_one(RunSpec(decimated.spec(), 0, decimated.parameters(0))).record
    tel = attsim.load(tmp_path / "mc" / "runs" / "0")
    assert tel.meta["decimated_from_rows"] == 2401 and len(tel.df) <= DECIMATED_ROWS
    assert tel.df.index[0] == 0.0 and tel.df.index[-1] == 1200.0
    full = attsim.Campaign(SLEW, runs=1, out_dir=tmp_path / "full", telemetry="full", duration=1200.0)
    reference = run_one(RunSpec(full.spec(), 0, full.parameters(0))).record
    same = [k for k in kept if k not in ("wall_s", "worker")]
    assert {k: kept[k] for k in same} == {k: reference[k] for k in same}  # judged on the full telemetry


def _slow_script(tmp_path) -> Path:
    """The test slew taking at least 0.3 s a run (the time a campaign is killed in must not depend on the machine)."""
    script = tmp_path / "slow_slew.py"
    script.write_text(
        "import sys, time\n"
        f"sys.path.insert(0, {str(SLEW.parent)!r})\n"
        "import campaign_slew as base\n"
        "criteria, dispersions = base.criteria, base.dispersions\n"
        "def build(out_dir=None, **params):\n"
        "    time.sleep(0.3)\n"
        "    return base.build(out_dir, **params)\n")
    return script


def test_a_worker_killed_mid_campaign_loses_and_duplicates_nothing(tmp_path):
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster:
        with distributed.Client(cluster) as client:
            pids = client.run(os.getpid)  # {worker address: pid}
            victim = sorted(pids)[0]
            records_dir = tmp_path / "mc" / store.RECORDS_DIR
            busy = {}

            def victim_has_records():
                parts = list(records_dir.glob("part-*.parquet"))
                return any(victim in set(pq.read_table(p, columns=["worker"]).column(0).to_pylist()) for p in parts)

            def kill_when_records_are_on_disk():
                deadline = time.monotonic() + 300
                while not victim_has_records() and time.monotonic() < deadline:
                    time.sleep(0.05)
                busy["tasks"] = client.processing(workers=[victim])[victim]
                os.kill(pids[victim], signal.SIGKILL)

            killer = threading.Thread(target=kill_when_records_are_on_disk)
            killer.start()
            campaign = attsim.Campaign(_slow_script(tmp_path), runs=30, seed=8, out_dir=tmp_path / "mc")
            result = campaign.run(client=client, report=False)
            killer.join()
    raw = pd.concat([pq.read_table(p).to_pandas() for p in records_dir.glob("part-*.parquet")])
    assert sorted(raw["run"]) == list(range(30))  # every run exactly once, on disk
    assert (result.records["status"] != "ERROR").all()
    assert victim in set(result.records["worker"])  # it ran some before it was killed
    # a task's key names its runs: attsim-run-<k>[_<k>...]-<random>
    interrupted = sorted(int(k) for key in busy["tasks"] for k in key.split("-")[2].split("_"))
    assert interrupted  # it was running a run when it died: that run was done again elsewhere
    assert all(result.records.set_index("run").loc[k, "worker"] != victim for k in interrupted)
    pd.testing.assert_frame_equal(_comparable(result.records.iloc[interrupted]),
                                  _comparable(_one_by_one(campaign, interrupted)))


def test_killing_the_campaign_process_and_starting_again_runs_only_the_missing_runs(tmp_path):
    out, script = tmp_path / "mc", _slow_script(tmp_path)
    command = [str(Path(sys.executable).parent / "attsim"), "campaign", str(script), "--runs", "24", "--workers", "2",
               "--seed", "6", "--out", str(out), "--no-report", "--require", "0.01"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    first = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             start_new_session=True)
    try:
        deadline = time.monotonic() + 300
        while not list((out / store.RECORDS_DIR).glob("part-*.parquet")) and time.monotonic() < deadline:
            assert first.poll() is None, first.stdout.read().decode()
            time.sleep(0.05)
        # while it runs, a second campaign into its directory is refused, naming the directory
        with pytest.raises(store.CampaignLockedError, match=str(out)):
            attsim.Campaign(script, runs=24, seed=6, out_dir=out).run()
    finally:
        os.killpg(first.pid, signal.SIGKILL)  # the campaign and its local workers, as a kill -9 of the job does
        first.wait()
    before = store.read_records(out)
    assert 0 < len(before) < 24
    second = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert second.returncode == 0, second.stdout + second.stderr
    assert f"resuming: {len(before)} runs on disk, {24 - len(before)} to run" in second.stdout
    assert f"({24 - len(before)} run now)" in second.stdout
    after = store.read_records(out)
    assert list(after["run"]) == list(range(24))
    kept = after.set_index("run").loc[before["run"]].reset_index()
    pd.testing.assert_frame_equal(kept, before)  # the records from before the kill were not run again
    # the reference: the same runs of the test slew without the script's 0.3 s sleep in build() (it changes no record,
    # only the wall time; 24 sleeps here cost 7 s)
    campaign = attsim.Campaign(SLEW, runs=24, seed=6, out_dir=tmp_path / "reference")
    pd.testing.assert_frame_equal(_comparable(after), _comparable(_one_by_one(campaign, range(24))))


def _fingerprint(mission) -> str:
    """What a run is made of: the mission's description and every number its components hold."""
    import json

    parts = [mission.meta()]
    for component in mission.components:
        parts.append({k: np.asarray(v).tolist() for k, v in vars(component).items()
                      if isinstance(v, (int, float, tuple, np.ndarray)) and not isinstance(v, bool)})
    return json.dumps(parts, sort_keys=True, default=str)


@pytest.mark.parametrize("name", sorted(p.stem for p in (ROOT / "missions").glob("*.py")
                                        if "def dispersions" in p.read_text()))
def test_every_dispersion_of_a_mission_reaches_its_run(name):
    # Basilisk users' first complaint: dispersions silently not applied. Each one alone must change the mission.
    module = mission_module(ROOT / "missions" / f"{name}.py")
    nominal = _fingerprint(module.build())
    drawn = draw_parameters(module.dispersions(), 1, 0)
    assert drawn
    for parameter, value in drawn.items():
        assert _fingerprint(module.build(**{parameter: value})) != nominal, f"{name}: {parameter} is not applied"


def test_a_scheduler_that_cannot_say_what_a_worker_holds_is_asked_again_not_taken_for_none(client, monkeypatch):
    """While it removes a worker the scheduler answered ``processing()`` with an AssertionError, which ended a
    campaign as an internal error; the campaign now treats it as no answer yet (a timed-out run stays overdue and is
    looked at again at the next poll), never as "nothing on that worker"."""
    from types import SimpleNamespace

    from attsim.campaign import execute

    asking = SimpleNamespace(client=client)
    worker = next(iter(client.nthreads()))
    assert execute._Execution.on_worker(asking, worker) == set()  # the real scheduler: nothing running there

    def removing(*args, **kwargs):
        raise AssertionError  # what distributed's scheduler raised mid-removal

    monkeypatch.setattr(client, "processing", removing)
    assert execute._Execution.on_worker(asking, worker) is None


def test_dask_accounts_of_a_lost_worker_are_dropped_while_a_campaign_runs_and_other_errors_kept(caplog):
    """A SIGTERM to the campaign's process group: the scheduler's read from a worker, cancelled as the cluster
    closed, logged asyncio's CancelledError with a traceback under the campaign's one line (a full run's flake)."""
    import asyncio
    import logging

    from distributed.comm.core import CommClosedError

    from attsim.campaign.execute import _lost_workers_unlogged

    def logged(error):
        try:
            raise error
        except BaseException:
            logging.getLogger("distributed.scheduler").exception("a worker's stream")

    with caplog.at_level(logging.ERROR), _lost_workers_unlogged():
        for error in (CommClosedError("in <TCP (closed)>: Stream is closed"), asyncio.CancelledError(),
                      ValueError("the scheduler's own failure")):
            logged(error)
    assert [record.exc_info[0] for record in caplog.records] == [ValueError]
    caplog.clear()
    logged(asyncio.CancelledError())  # outside a campaign, dask's logging is as it was
    assert len(caplog.records) == 1
