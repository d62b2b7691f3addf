"""Telemetry recorder: chunked Parquet, events, metadata, and crash safety."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from attsim.errors import AttsimError, InputError
from attsim.telemetry.recorder import Recorder, load
from attsim._core.timegrid import grid_time

ROOT = Path(__file__).resolve().parents[2]


def test_round_trip_with_chunks_events_and_meta(tmp_path):
    rec = Recorder(tmp_path, ["a", "b"], meta={"name": "demo", "seed": 3}, chunk_rows=7, chunk_s=1e9)
    for k in range(50):
        rec.append(0.5 * k, (k, -k))
        if k == 10:
            rec.event(0.5 * k, "saturation", actuator="mtq", axis=2)
    assert rec.rows_written == 49  # seven full chunks; one row still buffered
    rec.close(wall_s=1.25)
    tel = load(tmp_path)
    assert not tel.partial and tel.meta["name"] == "demo" and tel.meta["rows"] == 50
    assert list(tel.df.columns) == ["a", "b"] and tel.df.index.name == "t"
    assert np.array_equal(tel.df["a"].to_numpy(), np.arange(50)) and tel.df.index[-1] == 24.5
    assert tel.events.iloc[0]["kind"] == "saturation" and tel.events.iloc[0]["axis"] == 2
    assert (tmp_path / "telemetry.parquet").is_file() and not (tmp_path / "telemetry.f64").exists()


def test_flushes_by_simulated_time(tmp_path):
    rec = Recorder(tmp_path, ["x"], chunk_rows=10_000, chunk_s=10.0)
    for k in range(25):
        rec.append(float(k), (k,))
    # rows at t = 0..10 flushed when 10 s were spanned, then 11..21
    assert rec.rows_written == 22 and rec.rows == 25
    rec.abort("test")
    tel = load(tmp_path)
    assert tel.partial and tel.meta["stopped"] == "test" and len(tel.df) == 25


def test_sigkill_leaves_a_readable_partial_run(tmp_path):
    script = textwrap.dedent(f"""
        import sys, time
        sys.path.insert(0, {str(ROOT)!r})
        from attsim.telemetry import Recorder
        rec = Recorder({str(tmp_path)!r}, ["x", "y"], meta={{"name": "killed"}}, chunk_rows=1000, chunk_s=10.0)
        k = 0
        while True:
            rec.append(k * 0.1, (k, 2 * k))
            if k % 5000 == 0:
                rec.event(k * 0.1, "tick", k=k)
            k += 1
            if k == 20000:
                print("ready", flush=True)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(0.2)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    assert (tmp_path / "telemetry.f64").exists() and not (tmp_path / "telemetry.parquet").exists()
    tel = load(tmp_path)
    assert tel.partial and tel.meta["name"] == "killed" and "killed" in tel.meta["stopped"]
    assert (tmp_path / "telemetry.parquet").is_file()  # recovered into Parquet
    n = len(tel.df)
    assert n >= 20000 - 1000  # at most one chunk behind the point it reported
    assert np.array_equal(tel.df["x"].to_numpy(), np.arange(n)) and np.array_equal(tel.df["y"], 2 * np.arange(n))
    assert (tel.events["kind"] == "tick").all() and len(tel.events) >= 4


def test_load_refuses_what_is_not_a_run(tmp_path):
    with pytest.raises(AttsimError, match="not an attsim run directory"):
        load(tmp_path)
    (tmp_path / "meta.json").write_text("{not json")
    with pytest.raises(AttsimError, match="unreadable metadata"):
        load(tmp_path)
    (tmp_path / "meta.json").write_text(json.dumps({"columns": ["t", "x"], "partial": False}))
    with pytest.raises(AttsimError, match="no telemetry"):
        load(tmp_path)
    (tmp_path / "telemetry.parquet").write_bytes(b"garbage")
    with pytest.raises(AttsimError, match="unreadable telemetry"):
        _ = load(tmp_path).df  # the property reads the parquet file


def test_recorder_arguments_are_checked(tmp_path):
    with pytest.raises(InputError, match="chunk_rows"):
        Recorder(tmp_path, ["x"], chunk_rows=0)
    with pytest.raises(InputError, match="columns"):
        Recorder(tmp_path, ["x", "x"])
    with pytest.raises(InputError, match="columns"):
        Recorder(tmp_path, ["t"])


# --- data safety: live runs, exclusive directories, bounded loss, concurrent recovery -------------------------

def _start(script: str, *args) -> subprocess.Popen:
    code = textwrap.dedent(f"""
        import sys, time
        sys.path.insert(0, {str(ROOT)!r})
        import numpy as np, attsim
    """) + textwrap.dedent(script)
    return subprocess.Popen([sys.executable, "-c", code, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


LONG_MISSION = """
    out = sys.argv[1]
    m = attsim.Mission("live", np.diag([1.0, 2.0, 2.5]), (0.1, 0.2, 0.3), duration=float(sys.argv[2]),
                       max_step=0.05, telemetry_dt=float(sys.argv[3]), out_dir=out)
    m.add(attsim.FunctionController(lambda t, r: {}, period_s=0.01))  # a Python cycle: a run of some seconds
    print("starting", flush=True)
    tel = m.run(compiled=False)
    print("rows", tel.meta["rows"], flush=True)
"""


def _wait_for_rows(path: Path, width_bytes: int, rows: int, timeout_s: float = 120.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        f = path / "telemetry.f64"
        if f.exists() and f.stat().st_size >= rows * width_bytes:
            return
        time.sleep(0.02)
    raise AssertionError(f"no {rows} rows in {path} after {timeout_s} s")


def test_loading_a_live_run_reads_it_without_touching_it(tmp_path):
    # 4000 s simulated take several wall seconds: 400 s ended (in about one) before the loads below could see it live
    proc = _start(LONG_MISSION, str(tmp_path), "4000", "0.1")
    try:
        assert proc.stdout.readline().strip() == "starting"
        _wait_for_rows(tmp_path, 8 * 8, 200)
        before = sorted(p.name for p in tmp_path.iterdir())
        for _ in range(2):  # loading twice, and reading the frame, changes nothing
            tel = load(tmp_path)
            assert tel.running and tel.partial
            df = tel.df
            expected = [grid_time(0.0, k, 0.1) for k in range(len(df))]  # the rows' grid (attsim._core.timegrid)
            assert len(df) >= 200 and np.array_equal(df.index.to_numpy(), expected)
            assert np.all(np.isfinite(df.to_numpy()))
        assert sorted(p.name for p in tmp_path.iterdir()) == before and not (tmp_path / "telemetry.parquet").exists()
        out, err = proc.communicate(timeout=600)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    tel = load(tmp_path)
    assert not tel.running and not tel.partial and tel.meta["rows"] == 40001 == len(tel.df)


def test_a_second_run_into_a_live_directory_is_refused_and_the_first_is_intact(tmp_path):
    from attsim.telemetry.lock import RunDirectoryLockedError

    paced = LONG_MISSION.replace("m.run(compiled=False)", "m.run(realtime_factor=10.0)")  # 60 s simulated in 6 s
    proc = _start(paced, str(tmp_path), "60", "0.1")
    try:
        assert proc.stdout.readline().strip() == "starting"
        _wait_for_rows(tmp_path, 8 * 8, 50)
        second = __import__("attsim").Mission("second", np.eye(3), (0.0, 0.0, 0.0), duration=1.0, out_dir=tmp_path)
        with pytest.raises(RunDirectoryLockedError, match=f"out_dir: {tmp_path} is in use by another run"):
            second.run()
        out, err = proc.communicate(timeout=600)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    tel = load(tmp_path)
    assert tel.meta["name"] == "live" and tel.meta["rows"] == 601 == len(tel.df) and not tel.partial


def test_a_killed_run_does_not_lock_its_directory(tmp_path):
    proc = _start(LONG_MISSION, str(tmp_path), "1e6", "0.1")
    try:
        assert proc.stdout.readline().strip() == "starting"
        _wait_for_rows(tmp_path, 8 * 8, 20)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    import attsim

    tel = attsim.Mission("again", np.eye(3), (0.0, 0.0, 0.0), duration=1.0, out_dir=tmp_path).run()
    assert tel.meta["name"] == "again" and not tel.partial


def test_sparse_rows_reach_the_disk_at_once(tmp_path):
    rec = Recorder(tmp_path, ["x"], chunk_s=10.0, row_dt_s=60.0)
    for k in range(3):
        rec.append(60.0 * k, (k,))
        assert rec.rows_written == k + 1  # the next row is 60 s away: a kill must not lose this one
    rec.close()


def test_a_held_row_reaches_the_disk_within_a_wall_second(tmp_path):
    rec = Recorder(tmp_path, ["x"], chunk_s=10.0, row_dt_s=0.001)
    rec.append(0.0, (1.0,))
    assert rec.rows_written == 0
    deadline = time.monotonic() + 3.0
    while rec.rows_written == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert rec.rows_written == 1 and (tmp_path / "telemetry.f64").stat().st_size == 16
    rec.close()


def test_a_kill_during_set_up_leaves_a_readable_partial_run(tmp_path):
    script = """
        out = sys.argv[1]
        def slow_field(t):  # the set-up (the field table) takes long
            print("in set-up", flush=True)
            time.sleep(600)
        m = attsim.Mission("setup", np.eye(3), (0.0, 0.0, 0.0), duration=10.0, field=slow_field, out_dir=out)
        m.run()
    """
    proc = _start(script, str(tmp_path))
    try:
        assert proc.stdout.readline().strip() == "in set-up"
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    tel = load(tmp_path)
    assert tel.partial and not tel.running and tel.meta["stopped"] == "killed during set-up"
    assert len(tel.df) == 0 and tel.meta["name"] == "setup"


def test_concurrent_loads_of_a_killed_run_all_succeed_with_the_same_rows(tmp_path):
    proc = _start(LONG_MISSION, str(tmp_path), "1e6", "0.1")
    try:
        assert proc.stdout.readline().strip() == "starting"
        _wait_for_rows(tmp_path, 8 * 8, 3000)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    loader = """
        tel = attsim.load(sys.argv[1])
        print(len(tel.df), tel.partial, tel.meta["rows"], flush=True)
    """
    loaders = [_start(loader, str(tmp_path)) for _ in range(4)]
    results = [p.communicate(timeout=300) for p in loaders]
    assert all(p.returncode == 0 for p in loaders), [err for _, err in results]
    lines = {out.strip() for out, _ in results}
    assert len(lines) == 1, lines
    n, partial, rows = lines.pop().split()
    assert int(n) == int(rows) >= 3000 and partial == "True"


def test_load_names_a_bad_path_argument():
    for bad in (None, 5, b"x", ""):
        with pytest.raises(InputError, match="^path: must be a directory path"):
            load(bad)


def test_a_shortened_column_list_is_refused_not_misread(tmp_path):
    rec = Recorder(tmp_path, ["a", "b", "c"])
    for k in range(5):
        rec.append(float(k), (k, 2 * k, 3 * k))
    rec.close()
    meta = json.loads((tmp_path / "meta.json").read_text())
    meta["columns"] = meta["columns"][:-1]
    (tmp_path / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(AttsimError, match="does not match the row width"):
        load(tmp_path)


def test_out_dir_must_be_a_writable_directory(tmp_path):
    a_file = tmp_path / "file"
    a_file.write_text("x")
    with pytest.raises(InputError, match="^out_dir: must be a directory, not a file"):
        Recorder(a_file, ["x"])
    with pytest.raises(InputError, match="^out_dir: must not lie under a file"):
        Recorder(a_file / "run", ["x"])
    with pytest.raises(InputError, match="^out_dir: must be a directory path"):
        Recorder(None, ["x"])


# --- found by an outside review of the loader ---------------------------------------------------------------------

def _finished_run(path: Path, rows: int = 101) -> None:
    rec = Recorder(path, ["x"])
    for k in range(rows):
        rec.append(float(k), (k,))
    rec.close()


def test_a_writer_killed_after_converting_its_rows_keeps_them(tmp_path):
    _finished_run(tmp_path)
    meta = json.loads((tmp_path / "meta.json").read_text())
    meta.update(running=True, writer_pid=2**22 + 12345)  # as if killed between the Parquet file and meta.json
    (tmp_path / "meta.json").write_text(json.dumps(meta))
    tel = load(tmp_path)
    assert len(tel.df) == 101 and tel.meta["rows"] == 101 and tel.partial and not tel.running


def test_a_lock_held_by_an_unknown_process_is_never_recovered_through(tmp_path, monkeypatch):
    import attsim.telemetry.recorder as telemetry
    from attsim.telemetry.lock import RunLock

    proc = _start(LONG_MISSION, str(tmp_path), "1e6", "0.1")
    try:
        assert proc.stdout.readline().strip() == "starting"
        _wait_for_rows(tmp_path, 8 * 8, 20)
        meta = json.loads((tmp_path / "meta.json").read_text())
        meta["writer_pid"] = 2**22 + 12345  # a writer this process cannot see (another PID namespace)
        (tmp_path / "meta.json").write_text(json.dumps(meta))
        monkeypatch.setattr(telemetry, "LOCK_WAIT_S", 0.5)
        tel = load(tmp_path)
        assert tel.running and (tmp_path / "telemetry.f64").exists() and not (tmp_path / "telemetry.parquet").exists()
        assert len(tel.df) >= 20
        assert not RunLock(tmp_path).acquire()  # the writer still holds its directory
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()


def test_rows_are_not_converted_against_columns_that_cannot_be_checked(tmp_path):
    rec = Recorder(tmp_path, ["a", "b"])
    for k in range(20):
        rec.append(float(k), (k, 2 * k))
    rec.flush()
    meta = json.loads((tmp_path / "meta.json").read_text())
    del meta["row_width"]
    meta["columns"] = meta["columns"][:-1]
    meta["writer_pid"] = 2**22 + 12345
    (tmp_path / "meta.json").write_text(json.dumps(meta))
    rec._lock.release()  # the writer is gone
    with pytest.raises(AttsimError, match="no row_width"):
        load(tmp_path)
    assert (tmp_path / "telemetry.f64").stat().st_size == 20 * 3 * 8  # the rows are left as they were


def test_a_block_of_rows_is_recorded_as_the_same_rows_one_by_one(tmp_path):
    block = np.column_stack([0.5 * np.arange(50), np.arange(50), -np.arange(50)])
    one, many = Recorder(tmp_path / "one", ["a", "b"], chunk_rows=7, chunk_s=1e9), None
    for row in block:
        one.append(row[0], row[1:])
    many = Recorder(tmp_path / "many", ["a", "b"], chunk_rows=7, chunk_s=1e9)
    many.append_rows(block[:20])
    many.append_rows(block[20:])
    assert many.rows_written == one.rows_written == 49  # whole chunks reach the disk as they fill
    one.close()
    many.close()
    assert load(tmp_path / "many").df.equals(load(tmp_path / "one").df)
    # by simulated time: a block spanning chunk_s is on disk when append_rows returns
    timed = Recorder(tmp_path / "timed", ["x"], chunk_rows=10_000, chunk_s=10.0)
    timed.append_rows(np.column_stack([np.arange(12.0), np.arange(12.0)]))
    assert timed.rows_written == 12
    timed.abort("test")


# --- a result keeps describing its own run when a later run reuses its directory (issue 20, item 1) ---------------

def _sweep_run(path: Path, duration_s: float, **run_options):
    import attsim

    mission = attsim.Mission("sweep", np.diag([1.0, 2.0, 2.5]), (0.1, 0.0, 0.0), duration=duration_s,
                             telemetry_dt=1.0, out_dir=path)
    mission.add(attsim.TorqueSchedule([(0.0, 2.0, (0.0, 0.0, 1e-3 * duration_s))]))  # a command event per run
    return mission.run(**run_options)


def test_a_gain_sweep_into_one_directory_keeps_each_result_its_own_run(tmp_path):
    first = _sweep_run(tmp_path, 30.0)
    handle = load(tmp_path)  # unread until after the later run, as a result in a list would be
    second = _sweep_run(tmp_path, 5.0)
    for own in (first, handle):
        assert len(own.df) == own.meta["rows"] == 31 and own.df.index[-1] == 30.0
        assert own.meta["duration_s"] == 30.0
        commands = own.events[own.events["kind"] == "command"]
        assert len(commands) and np.allclose(commands["torque_Nm"].iloc[0], (0.0, 0.0, 0.03))
    assert len(second.df) == second.meta["rows"] == 6 and second.df.index[-1] == 5.0
    assert np.allclose(second.events.query("kind == 'command'")["torque_Nm"].iloc[0], (0.0, 0.0, 5e-3))
    assert first.meta["run_id"] != second.meta["run_id"]


@pytest.mark.parametrize("in_memory", [True, False])
def test_a_result_kept_in_memory_or_read_keeps_its_run(tmp_path, in_memory):
    first = _sweep_run(tmp_path, 30.0, in_memory=in_memory)
    if not in_memory:
        _ = first.df, first.events  # read before the next run: nothing left to read from the directory
    _sweep_run(tmp_path, 5.0)
    assert len(first.df) == 31 and first.df.index[-1] == 30.0 and first.meta["rows"] == 31


def test_a_result_whose_directory_another_process_reused_refuses_by_name(tmp_path):
    from attsim.telemetry.run_directory import RunDirectoryReusedError

    _finished_run(tmp_path, rows=31)
    ours = load(tmp_path)  # nothing read yet
    later = """
        from attsim.telemetry import Recorder
        rec = Recorder(sys.argv[1], ["x"], meta={"name": "later"})
        for k in range(6):
            rec.append(float(k), (100.0 + k,))
        rec.event(1.0, "later_event")
        rec.close()
    """
    proc = _start(later, str(tmp_path))
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    for read in (lambda: ours.df, lambda: ours.events):
        with pytest.raises(RunDirectoryReusedError, match=f"^{tmp_path}: this result is the run None .* a later run "
                                                          r"\('later', run id [0-9a-f]{32}\)"):
            read()
    assert load(tmp_path).meta["name"] == "later" and len(load(tmp_path).df) == 6


def test_a_report_of_a_replaced_run_is_not_written_into_the_later_run_directory(tmp_path):
    import attsim
    from attsim.telemetry.run_directory import RunDirectoryReusedError

    first = _sweep_run(tmp_path, 30.0)
    _sweep_run(tmp_path, 5.0)
    with pytest.raises(RunDirectoryReusedError, match="a later run"):
        attsim.report(first)
    assert not (tmp_path / "report.html").exists()
    assert attsim.report(first, tmp_path / "first.html").is_file()  # elsewhere, its own rows: fine


def test_a_later_run_replaces_the_earlier_report_and_a_set_up_kill_its_events(tmp_path):
    rec = Recorder(tmp_path, ["x"], meta={"name": "earlier"})
    rec.append(0.0, (1.0,))
    rec.event(0.0, "earlier_event")
    rec.close()
    (tmp_path / "report.html").write_text("<p>the earlier run</p>")
    script = """
        out = sys.argv[1]
        def slow_field(t):
            print("in set-up", flush=True)
            time.sleep(600)
        attsim.Mission("setup", np.eye(3), (0.0, 0.0, 0.0), duration=10.0, field=slow_field, out_dir=out).run()
    """
    proc = _start(script, str(tmp_path))
    try:
        assert proc.stdout.readline().strip() == "in set-up"
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    assert not (tmp_path / "report.html").exists()
    tel = load(tmp_path)
    assert tel.meta["name"] == "setup" and len(tel.df) == 0 and len(tel.events) == 0
