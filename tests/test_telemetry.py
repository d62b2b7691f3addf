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
from attsim.telemetry import Recorder, load

ROOT = Path(__file__).resolve().parents[1]


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
        load(tmp_path).df


def test_recorder_arguments_are_checked(tmp_path):
    with pytest.raises(InputError, match="chunk_rows"):
        Recorder(tmp_path, ["x"], chunk_rows=0)
    with pytest.raises(InputError, match="columns"):
        Recorder(tmp_path, ["x", "x"])
    with pytest.raises(InputError, match="columns"):
        Recorder(tmp_path, ["t"])
