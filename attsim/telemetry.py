"""Crash-safe telemetry: a bounded-memory recorder and the result it reads back.

A run directory holds::

    telemetry.parquet     the telemetry, indexed by t (written when the run ends)
    telemetry.f64         while the run goes on: raw little-endian float64 rows
    events.jsonl          one JSON object per line: {"t": ..., "kind": ..., ...}
    meta.json             scenario parameters, seed, versions, columns;
                          "partial": true until the run ends

Rows are buffered and appended to ``telemetry.f64`` whenever the buffer
holds ``chunk_rows`` rows or spans ``chunk_s`` seconds of simulated time.
Parquet cannot be appended safely (its footer is written last), so the
in-flight file is the simplest format that survives a crash: fixed-width
rows, readable up to the last whole row whatever moment the process died
(even by SIGKILL). When the run ends, or stops on an error, the rows are
converted to ``telemetry.parquet`` in row groups, with bounded memory; a run
that was killed is converted by :func:`load`, which marks it partial.
Appending a chunk costs microseconds, so even a 1 Hz telemetry flushed
every 10 simulated seconds adds little to a fast run.

Column names and units are those of :mod:`attsim.schema`.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Sequence

import numpy as np

from .errors import AttsimError, InputError
from .schema import TIME_INDEX

__all__ = ["Recorder", "Telemetry", "load", "TELEMETRY_FILE", "ROWS_FILE", "EVENTS_FILE", "META_FILE"]

TELEMETRY_FILE = "telemetry.parquet"
ROWS_FILE = "telemetry.f64"
EVENTS_FILE = "events.jsonl"
META_FILE = "meta.json"
ROW_GROUP_ROWS = 65_536


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
    """Buffers telemetry rows and appends them to the run directory.

    Parameters
    ----------
    out_dir : path
        Run directory; created if missing. An earlier run's files there are
        replaced.
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
        if isinstance(chunk_rows, bool) or not isinstance(chunk_rows, int) or chunk_rows < 1:
            raise InputError("chunk_rows", "must be an integer >= 1", f"got {chunk_rows!r}")
        if not chunk_s > 0:
            raise InputError("chunk_s", "must be > 0", f"got {chunk_s!r}")
        self.out_dir = Path(out_dir)
        self.columns = list(columns)
        if len(set(self.columns)) != len(self.columns) or TIME_INDEX in self.columns:
            raise InputError("columns", f"must be unique and must not include the index {TIME_INDEX!r}", f"got {self.columns}")
        self.chunk_rows = chunk_rows
        self.chunk_s = float(chunk_s)
        self.out_dir.mkdir(parents=True, exist_ok=True)
        for stale in (TELEMETRY_FILE, ROWS_FILE):
            path = self.out_dir / stale
            if path.is_dir():
                shutil.rmtree(path)
            elif path.exists():
                path.unlink()
        self._buffer = np.empty((self.chunk_rows, len(self.columns) + 1))
        self._rows = 0
        self.rows_written = 0
        self._file = open(self.out_dir / ROWS_FILE, "wb")
        self._events = open(self.out_dir / EVENTS_FILE, "w", encoding="utf-8")
        self.meta = {**(meta or {}), "partial": True, "columns": [TIME_INDEX] + self.columns}
        _write_json_atomic(self.out_dir / META_FILE, self.meta)
        self.closed = False

    @property
    def rows(self) -> int:
        """Rows recorded so far (flushed or buffered)."""
        return self.rows_written + self._rows

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
        """Append the buffered rows to the row file and hand them to the OS."""
        if self._rows == 0:
            return
        self._file.write(self._buffer[: self._rows].astype("<f8", copy=False).tobytes())
        self._file.flush()
        self.rows_written += self._rows
        self._rows = 0

    def _finish(self, **meta_updates) -> None:
        self.flush()
        self._file.close()
        self._events.close()
        _rows_to_parquet(self.out_dir, len(self.columns) + 1, [TIME_INDEX] + self.columns)
        self.meta.update(meta_updates, rows=self.rows_written)
        _write_json_atomic(self.out_dir / META_FILE, self.meta)
        self.closed = True

    def close(self, **meta_updates) -> None:
        """Flush, convert to Parquet, and mark the run complete."""
        if not self.closed:
            self._finish(**meta_updates, partial=False)

    def abort(self, reason: str, **meta_updates) -> None:
        """Keep what was produced and record why the run stopped early (stays partial)."""
        if not self.closed:
            self._finish(**meta_updates, partial=True, stopped=reason)


def _rows_to_parquet(root: Path, width: int, names: list[str]) -> int:
    """Convert ``telemetry.f64`` to ``telemetry.parquet`` in row groups; returns the rows.

    Reads the row file one row group at a time (a memory map would count
    every page read towards the process's resident memory), and ignores a
    trailing partial row (a crash mid-write). Removes the row file.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows_path = root / ROWS_FILE
    size = rows_path.stat().st_size if rows_path.exists() else 0
    n = size // (8 * width)
    schema = pa.schema([(name, pa.float64()) for name in names])
    tmp = root / (TELEMETRY_FILE + ".tmp")
    # float telemetry does not repeat: dictionary encoding only costs memory and time
    with pq.ParquetWriter(tmp, schema, use_dictionary=False) as writer:
        if n:
            with open(rows_path, "rb") as source:
                for start in range(0, n, ROW_GROUP_ROWS):
                    count = min(ROW_GROUP_ROWS, n - start)
                    block = np.fromfile(source, dtype="<f8", count=count * width).reshape(count, width)
                    writer.write_table(pa.table([block[:, k] for k in range(width)], schema=schema))
    os.replace(tmp, root / TELEMETRY_FILE)
    if rows_path.exists():
        rows_path.unlink()
    return n


class Telemetry:
    """A run's results.

    Attributes
    ----------
    df : pandas.DataFrame
        Telemetry indexed by ``t`` (s); read from disk on first access, so
        a long run can be handed back without holding it in memory.
    events : pandas.DataFrame
        Event log: columns ``t``, ``kind`` and the event's own fields.
    meta : dict
        Scenario parameters, seed, method, package versions, wall time;
        ``meta["partial"]`` is True for a run that did not finish.
    path : Path or None
        The run directory.
    """

    def __init__(self, path: Path, meta: dict, df=None, events=None):
        self.path = path
        self.meta = meta
        self._df = df
        self._events = events

    @property
    def partial(self) -> bool:
        return bool(self.meta.get("partial", False))

    @property
    def df(self):
        if self._df is None:
            import pandas as pd

            try:
                self._df = pd.read_parquet(self.path / TELEMETRY_FILE).set_index(TIME_INDEX)
            except Exception as exc:  # pyarrow raises several types for a damaged file
                raise AttsimError(f"{self.path / TELEMETRY_FILE}: unreadable telemetry ({exc})") from exc
        return self._df

    @property
    def events(self):
        if self._events is None:
            self._events = _read_events(self.path / EVENTS_FILE)
        return self._events

    def __repr__(self) -> str:
        return f"Telemetry({self.meta.get('name', '?')!r}, rows={self.meta.get('rows', '?')}, partial={self.partial}, path={str(self.path)!r})"


def load(path) -> Telemetry:
    """Open a run directory (complete or partial); the frames load lazily.

    A run that was killed before it could convert its rows is converted to
    ``telemetry.parquet`` here and marked partial. Raises
    :class:`~attsim.errors.AttsimError` naming the path when it is not a run
    directory or its files are unreadable.
    """
    root = Path(path)
    meta_path = root / META_FILE
    if not meta_path.is_file():
        raise AttsimError(f"{root}: not an attsim run directory (no {META_FILE})")
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        columns = list(meta["columns"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise AttsimError(f"{meta_path}: unreadable metadata ({exc})") from exc
    if (root / ROWS_FILE).exists():  # killed mid-run: recover what reached the disk
        meta["rows"] = _rows_to_parquet(root, len(columns), columns)
        meta["partial"] = True
        meta.setdefault("stopped", "killed: recovered from the row file")
        _write_json_atomic(meta_path, meta)
    if not (root / TELEMETRY_FILE).is_file():
        raise AttsimError(f"{root}: no telemetry ({TELEMETRY_FILE} missing)")
    return Telemetry(root, meta)


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
