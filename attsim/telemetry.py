"""Crash-safe telemetry: a bounded-memory recorder and the result it reads back.

A run directory holds::

    telemetry.parquet/part-00000.parquet, part-00001.parquet, ...
    events.jsonl          one JSON object per line: {"t": ..., "kind": ..., ...}
    meta.json             scenario parameters, seed, versions; "partial": true until the run ends

The recorder buffers rows column-wise and writes them as a new Parquet part
whenever the buffer holds ``chunk_rows`` rows or spans ``chunk_s`` seconds of
simulated time. Each part is written to a temporary name and renamed into
place, so a part either exists whole or not at all: a run killed at any
moment (even by SIGKILL) leaves a readable dataset holding everything up to
its last flush, and :func:`load` says it is partial. Memory stays bounded by
one chunk however long the run.

Column names and units are those of :mod:`attsim.schema`.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np

from .errors import AttsimError, InputError
from .schema import TIME_INDEX

__all__ = ["Recorder", "Telemetry", "load", "TELEMETRY_DIR", "EVENTS_FILE", "META_FILE"]

TELEMETRY_DIR = "telemetry.parquet"
EVENTS_FILE = "events.jsonl"
META_FILE = "meta.json"


def _write_json_atomic(path: Path, payload: dict) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(payload, indent=2, default=_json_default), encoding="utf-8")
    os.replace(tmp, path)


def _json_default(value):
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (np.floating, np.integer, np.bool_)):
        return value.item()
    return str(value)


class Recorder:
    """Buffers telemetry rows and streams them to Parquet parts.

    Parameters
    ----------
    out_dir : path
        Run directory; created if missing. An earlier run's telemetry there
        is replaced.
    columns : sequence of str
        Value columns after the time index ``t``, fixed for the run.
    meta : dict
        Scenario metadata, written at once with ``"partial": true``.
    chunk_rows : int
        Flush after this many buffered rows.
    chunk_s : float
        Flush when the buffered rows span this much simulated time (s).
    """

    def __init__(self, out_dir, columns: Sequence[str], meta: dict | None = None, chunk_rows: int = 10_000, chunk_s: float = 10.0):
        if chunk_rows < 1:
            raise InputError("chunk_rows", "must be >= 1", f"got {chunk_rows!r}")
        if not chunk_s > 0:
            raise InputError("chunk_s", "must be > 0", f"got {chunk_s!r}")
        self.out_dir = Path(out_dir)
        self.columns = list(columns)
        if len(set(self.columns)) != len(self.columns) or TIME_INDEX in self.columns:
            raise InputError("columns", f"must be unique and must not include the index {TIME_INDEX!r}", f"got {self.columns}")
        self.chunk_rows = int(chunk_rows)
        self.chunk_s = float(chunk_s)
        self.parts_dir = self.out_dir / TELEMETRY_DIR
        self.parts_dir.mkdir(parents=True, exist_ok=True)
        for old in self.parts_dir.glob("part-*.parquet"):
            old.unlink()
        self._buffer = np.empty((self.chunk_rows, len(self.columns) + 1))
        self._rows = 0
        self._parts = 0
        self.rows_written = 0
        self._events = open(self.out_dir / EVENTS_FILE, "w", encoding="utf-8")
        self.meta = {**(meta or {}), "partial": True, "columns": [TIME_INDEX] + self.columns}
        _write_json_atomic(self.out_dir / META_FILE, self.meta)
        self.closed = False

    def append(self, t_s: float, values: Sequence[float]) -> None:
        """Record one row at time ``t_s``; flushes when a chunk is full."""
        row = self._buffer[self._rows]
        row[0] = t_s
        row[1:] = values
        self._rows += 1
        if self._rows == self.chunk_rows or t_s - self._buffer[0, 0] >= self.chunk_s:
            self.flush()

    def event(self, t_s: float, kind: str, **fields) -> None:
        """Log an event (command, saturation, mode change, ...) at time ``t_s``."""
        self._events.write(json.dumps({"t": float(t_s), "kind": kind, **fields}, default=_json_default) + "\n")
        self._events.flush()

    def flush(self) -> None:
        """Write the buffered rows as the next Parquet part (atomically)."""
        if self._rows == 0:
            return
        import pyarrow as pa
        import pyarrow.parquet as pq

        block = self._buffer[: self._rows]
        table = pa.table({name: block[:, k] for k, name in enumerate([TIME_INDEX] + self.columns)})
        final = self.parts_dir / f"part-{self._parts:05d}.parquet"
        tmp = final.with_suffix(".tmp")
        pq.write_table(table, tmp)
        os.replace(tmp, final)
        self._parts += 1
        self.rows_written += self._rows
        self._rows = 0

    def close(self, **meta_updates) -> None:
        """Flush, and mark the run complete with the final metadata."""
        if self.closed:
            return
        self.flush()
        self._events.close()
        self.meta.update(meta_updates, partial=False, rows=self.rows_written)
        _write_json_atomic(self.out_dir / META_FILE, self.meta)
        self.closed = True

    def abort(self, reason: str, **meta_updates) -> None:
        """Flush what was produced and record why the run stopped early (stays partial)."""
        if self.closed:
            return
        self.flush()
        self._events.close()
        self.meta.update(meta_updates, partial=True, stopped=reason, rows=self.rows_written)
        _write_json_atomic(self.out_dir / META_FILE, self.meta)
        self.closed = True


@dataclass
class Telemetry:
    """A run's results.

    Attributes
    ----------
    df : pandas.DataFrame
        Telemetry indexed by ``t`` (s).
    events : pandas.DataFrame
        Event log: columns ``t``, ``kind`` and the event's own fields.
    meta : dict
        Scenario parameters, seed, method, package versions, wall time;
        ``meta["partial"]`` is True for a run that did not finish.
    path : Path or None
        The run directory it was read from or written to.
    """

    df: "object"
    events: "object"
    meta: dict = field(default_factory=dict)
    path: Path | None = None

    @property
    def partial(self) -> bool:
        return bool(self.meta.get("partial", False))


def load(path) -> Telemetry:
    """Read a run directory back (complete or partial).

    Raises :class:`~attsim.errors.AttsimError` naming the path when it is not
    a run directory or its files are unreadable.
    """
    import pandas as pd

    root = Path(path)
    meta_path = root / META_FILE
    if not meta_path.is_file():
        raise AttsimError(f"{root}: not an attsim run directory (no {META_FILE})")
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise AttsimError(f"{meta_path}: unreadable metadata ({exc})") from exc
    parts = sorted((root / TELEMETRY_DIR).glob("part-*.parquet"))
    columns = meta.get("columns", [TIME_INDEX])
    try:
        frames = [pd.read_parquet(p) for p in parts]
    except Exception as exc:  # pyarrow raises several types for a damaged file
        raise AttsimError(f"{root / TELEMETRY_DIR}: unreadable telemetry part ({exc})") from exc
    df = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame({c: np.array([], dtype=float) for c in columns})
    df = df.set_index(TIME_INDEX)
    events = _read_events(root / EVENTS_FILE)
    return Telemetry(df=df, events=events, meta=meta, path=root)


def _read_events(path: Path):
    import pandas as pd

    records = []
    if path.is_file():
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                records.append(json.loads(line))
            except ValueError:
                break  # a line cut short by a crash: everything before it is whole
    return pd.DataFrame.from_records(records, columns=None if records else ["t", "kind"])
