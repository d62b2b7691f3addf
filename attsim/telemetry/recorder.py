"""Crash-safe telemetry: a bounded-memory recorder and the result it reads back.

A run directory holds::

    .attsim.lock          the writer's exclusive lock (attsim.telemetry.lock)
    telemetry.parquet     the telemetry, indexed by t (written when the run ends)
    telemetry.f64         while the run goes on: raw little-endian float64 rows
    events.jsonl          one JSON object per line: {"t": ..., "kind": ..., ...}
    meta.json             scenario parameters, seed, versions, columns, the row
                          width, the writer's pid and the run's id
                          (attsim.run_directory); "partial": true and
                          "running": true until the run ends

Rows are buffered and appended to ``telemetry.f64``. Parquet cannot be
appended safely (its footer is written last), so the in-flight file is the
simplest format that survives a crash: fixed-width rows, readable up to the
last whole row whatever moment the process died (even by SIGKILL).

What a kill at any moment leaves:

* before the run's set-up (environment table) ends: ``meta.json`` and empty
  files; :func:`load` gives a partial run with no rows, "killed during set-up";
* afterwards: every row appended more than one wall second ago, and every
  row whose successor is more than ``chunk_s`` (10 simulated seconds) later,
  is on disk: a buffered row is flushed when the rows held span ``chunk_s``
  of simulated time or ``chunk_rows`` rows, when the next row will be more
  than ``chunk_s`` after the oldest held one (sparse telemetry: each row at
  once), and by a background flusher once the oldest held row is one wall
  second old. Events are written as they happen.

When the run ends, or stops on an error, the rows are converted to
``telemetry.parquet`` (atomic rename) with bounded memory. :func:`load` of a
live run reads what reached the disk without touching any file; of a run
whose writer is gone, it converts the rows under the directory's lock, so
concurrent loaders neither race nor fail.

Column names and units are those of :mod:`attsim.schema`.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from pathlib import Path
from collections.abc import Sequence

import numpy as np

from .._core.validate import path_like
from ..errors import AttsimError, InputError
from .run_directory import (EVENTS_FILE, META_FILE, PARQUET_RUN_ID, REPORT_FILE, ROWS_FILE, RUN_ID, TELEMETRY_FILE,
                            RunDirectoryReusedError, check_same_run, holder, keep_earlier_results, new_run_id,
                            read_meta, register, writable_directory)
from .lock import RunDirectoryLockedError, RunLock, process_alive
from .schema import TIME_INDEX

__all__ = ["Recorder", "Telemetry", "load", "TELEMETRY_FILE", "ROWS_FILE", "EVENTS_FILE", "META_FILE", "REPORT_FILE",
           "RunDirectoryLockedError", "RunDirectoryReusedError"]

ROW_GROUP_ROWS = 65_536
FLUSH_WALL_S = 1.0  # the longest a recorded row waits in memory, in wall seconds (plus the flusher's tick)
READER_HOLD_S = 2.0  # how long a new run waits for a directory a loader is reading, before calling it in use


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
    """Buffers telemetry rows and appends them to the run directory, which it holds locked.

    Parameters
    ----------
    out_dir : path
        Run directory; created if missing. An earlier run's files there are
        replaced (its report too), after the results of this process still
        reading them have read them (:mod:`attsim.run_directory`); a directory
        another live run holds is refused
        (:class:`~attsim.telemetry.lock.RunDirectoryLockedError`) before any file
        in it is touched.
    columns : sequence of str, optional
        Value columns after the time index ``t``, fixed for the run. When
        None, the directory and ``meta.json`` are written now (a run in
        set-up) and the columns come with :meth:`start`.
    meta : dict
        Scenario metadata, written at once with ``"partial": true``.
    chunk_rows : int
        Flush after this many buffered rows.
    chunk_s : float
        Flush before the buffered rows span more than this much simulated time (s).
    row_dt_s : float
        The telemetry period, if known: a row whose successor would make the
        buffer span more than ``chunk_s`` is flushed at once.
    """

    def __init__(self, out_dir, columns: Sequence[str] | None = None, meta: dict | None = None,
                 chunk_rows: int = 10_000,
                 chunk_s: float = 10.0, row_dt_s: float = 0.0):
        if isinstance(chunk_rows, bool) or not isinstance(chunk_rows, int) or chunk_rows < 1:
            raise InputError("chunk_rows", "must be an integer >= 1", f"got {chunk_rows!r}")
        if not chunk_s > 0:
            raise InputError("chunk_s", "must be > 0", f"got {chunk_s!r}")
        self.out_dir = writable_directory(out_dir)
        self._lock = RunLock(self.out_dir)
        if not self._lock.acquire(blocking=True, timeout_s=READER_HOLD_S):  # a loader holds it only briefly
            raise RunDirectoryLockedError(str(self.out_dir), holder(self.out_dir))
        self.chunk_rows = chunk_rows
        self.chunk_s = float(chunk_s)
        self.row_dt_s = float(row_dt_s)
        keep_earlier_results(self.out_dir)
        self.meta = {**(meta or {}), "partial": True, "running": True, "stage": "setup", "writer_pid": os.getpid(),
                     RUN_ID: new_run_id()}
        # the new run's id first: a reader who finds any earlier file gone or changed then sees the reuse
        _write_json_atomic(self.out_dir / META_FILE, self.meta)
        for stale in (TELEMETRY_FILE, ROWS_FILE, REPORT_FILE):  # an earlier run's report described its rows
            path = self.out_dir / stale
            if path.is_dir():
                shutil.rmtree(path)
            elif path.exists():
                path.unlink()
        self._events = open(self.out_dir / EVENTS_FILE, "w", encoding="utf-8")
        self.columns: list[str] = []
        self._rows = 0
        self.rows_written = 0
        self._file = None
        self._mutex = threading.Lock()
        self._oldest_wall = 0.0
        self._stop = threading.Event()
        self._flusher = None
        self.closed = False
        if columns is not None:
            self.start(columns)

    def start(self, columns: Sequence[str]) -> None:
        """Fix the columns and begin recording (the end of the run's set-up)."""
        columns = list(columns)
        if len(set(columns)) != len(columns) or TIME_INDEX in columns or not all(isinstance(c, str) for c in columns):
            self._release()
            raise InputError("columns", f"must be unique strings and must not include the index {TIME_INDEX!r}",
                             f"got {columns}")
        self.columns = columns
        self._buffer = np.empty((self.chunk_rows, len(self.columns) + 1))
        self._file = open(self.out_dir / ROWS_FILE, "wb")
        self.meta.update(columns=[TIME_INDEX] + self.columns, row_width=len(self.columns) + 1, stage="running")
        _write_json_atomic(self.out_dir / META_FILE, self.meta)
        self._flusher = threading.Thread(target=self._flush_by_wall_time, name=f"attsim-flush-{self.out_dir.name}",
                                         daemon=True)
        self._flusher.start()

    @property
    def rows(self) -> int:
        """Rows recorded so far (flushed or buffered)."""
        return self.rows_written + self._rows

    def append(self, t_s: float, values: Sequence[float]) -> None:
        """Record one row at time ``t_s``; flushes as the class docstring says."""
        with self._mutex:
            row = self._buffer[self._rows]
            row[0] = t_s
            row[1:] = values
            if self._rows == 0:
                self._oldest_wall = time.monotonic()
            self._rows += 1
            if self._rows == self.chunk_rows or t_s + self.row_dt_s - self._buffer[0, 0] >= self.chunk_s:
                self._flush_locked()

    def append_rows(self, rows: np.ndarray) -> None:
        """Record a block of rows (``t`` in the first column) as :meth:`append` would, one copy per buffer's worth.

        The compiled loop hands its rows over in blocks; copying them whole
        instead of row by row saves ~20 us a row. The flush rules are
        :meth:`append`'s, applied at the end of each copied piece.
        """
        n, start = len(rows), 0
        with self._mutex:
            while start < n:
                if self._rows == 0:
                    self._oldest_wall = time.monotonic()
                take = min(n - start, self.chunk_rows - self._rows)
                self._buffer[self._rows: self._rows + take] = rows[start: start + take]
                self._rows += take
                start += take
                last_t = self._buffer[self._rows - 1, 0]
                if self._rows == self.chunk_rows or last_t + self.row_dt_s - self._buffer[0, 0] >= self.chunk_s:
                    self._flush_locked()

    def event(self, t_s: float, kind: str, **fields) -> None:
        """Log an event (command, saturation, mode change, ...) at time ``t_s``."""
        self._events.write(json.dumps({"t": float(t_s), "kind": kind, **fields}, default=_json_default) + "\n")
        self._events.flush()

    def flush(self) -> None:
        """Append the buffered rows to the row file and hand them to the OS."""
        with self._mutex:
            self._flush_locked()

    def _flush_locked(self) -> None:
        if self._rows == 0 or self._file is None:
            return
        self._file.write(self._buffer[: self._rows].astype("<f8", copy=False).tobytes())
        self._file.flush()
        self.rows_written += self._rows
        self._rows = 0

    def _flush_by_wall_time(self) -> None:
        while not self._stop.wait(0.25):
            with self._mutex:
                if self._rows and time.monotonic() - self._oldest_wall >= FLUSH_WALL_S:
                    self._flush_locked()

    def _finish(self, **meta_updates) -> None:
        self._stop.set()
        if self._flusher is not None:
            self._flusher.join()
        self.flush()
        if self._file is not None:
            self._file.close()
        self._events.close()
        names = [TIME_INDEX] + self.columns
        _rows_to_parquet(self.out_dir, len(names), names, self.meta[RUN_ID])
        self.meta.update(meta_updates, rows=self.rows_written, running=False)
        _write_json_atomic(self.out_dir / META_FILE, self.meta)
        self.closed = True
        self._release()

    def _release(self) -> None:
        self._lock.release()

    def close(self, **meta_updates) -> None:
        """Flush, convert to Parquet, mark the run complete and release the directory."""
        if not self.closed:
            self._finish(**meta_updates, partial=False)

    def abort(self, reason: str, **meta_updates) -> None:
        """Keep what was produced and record why the run stopped early (stays partial)."""
        if not self.closed:
            self._finish(**meta_updates, partial=True, stopped=reason)


def _rows_to_parquet(root: Path, width: int, names: list[str], run_id) -> int:
    """Convert ``telemetry.f64`` to ``telemetry.parquet`` (stamped with ``run_id``) in row groups; returns the rows.

    Reads the row file one row group at a time (a memory map would count
    every page read towards the process's resident memory), and ignores a
    trailing partial row (a crash mid-write). Removes the row file.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows_path = root / ROWS_FILE
    size = rows_path.stat().st_size if rows_path.exists() else 0
    n = size // (8 * width)
    schema = pa.schema([(name, pa.float64()) for name in names], metadata={PARQUET_RUN_ID: run_id} if run_id else None)
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

    Parameters
    ----------
    path, meta, df, events
        As the attributes below (``Mission.run`` and :func:`attsim.load` make a result; a user does not).
    from_rows : bool, optional
        Read a live or killed run's raw row file instead of its Parquet file.

    Attributes
    ----------
    df : pandas.DataFrame
        Telemetry indexed by ``t`` (s); read from disk on first access, so
        a long run can be handed back without holding it in memory. For a
        live run, the whole rows on disk when it is first read.
    events : pandas.DataFrame
        Event log: columns ``t``, ``kind`` and the event's own fields.
    meta : dict
        Scenario parameters, seed, method, package versions, wall time;
        ``meta["partial"]`` is True for a run that did not finish,
        ``meta["running"]`` while its writer is alive.
    path : Path or None
        The run directory. A later run into it never changes this result:
        in this process the result reads its rows first (:meth:`keep`);
        read from another process, it raises
        :class:`~attsim.run_directory.RunDirectoryReusedError`.
    """

    def __init__(self, path: Path, meta: dict, df=None, events=None, from_rows: bool = False):
        self.path = path
        self.meta = meta
        self._df = df
        self._events = events
        self._from_rows = from_rows  # a live or unrecoverable run: the raw row file, not the Parquet file
        if path is not None:
            register(path, self)

    @property
    def partial(self) -> bool:
        return bool(self.meta.get("partial", False))

    @property
    def running(self) -> bool:
        """True for a run whose writer was alive when it was loaded (read-only view)."""
        return bool(self.meta.get("running", False))

    @property
    def df(self):
        if self._df is None:
            self._df = self._read(lambda: _read_live_rows(self.path, self.meta) if self._from_rows
                                  else _read_parquet(self.path, self.meta))
        return self._df

    @property
    def events(self):
        if self._events is None:
            self._events = self._read(lambda: _read_events(self.path / EVENTS_FILE))
        return self._events

    def keep(self) -> None:
        """Read the rows and events now, so that this result no longer needs its directory."""
        _ = self.df, self.events  # each read once, then held

    def check_directory(self) -> None:
        """Raise :class:`~attsim.run_directory.RunDirectoryReusedError` when its directory now holds a later run."""
        if (self.path / META_FILE).exists():  # a later run writes its meta.json before anything else
            check_same_run(self.path, self.meta, read_meta(self.path))

    def _read(self, read):
        """``read()`` from the directory, checked afterwards to be this run's (a later run writes its id first)."""
        try:
            value = read()
        except (AttsimError, OSError):
            self.check_directory()  # a later run replaced the files: say that
            raise
        self.check_directory()
        return value

    def __repr__(self) -> str:
        state, m = "running" if self.running else f"partial={self.partial}", self.meta
        return f"Telemetry({m.get('name', '?')!r}, rows={m.get('rows', '?')}, {state}, path={str(self.path)!r})"


def _read_parquet(root: Path, meta: dict):
    """The Parquet file's rows, with every column ``meta.json`` lists (a file that lacks one is damaged)."""
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(root / TELEMETRY_FILE)
        df = table.to_pandas()
    except Exception as exc:  # pyarrow raises several types for a damaged file
        raise AttsimError(f"{root / TELEMETRY_FILE}: unreadable telemetry ({exc})") from exc
    stamp = (table.schema.metadata or {}).get(PARQUET_RUN_ID)  # none in a file rewritten by other tools
    if stamp is not None and stamp.decode() != meta.get(RUN_ID):
        check_same_run(root, meta, read_meta(root))
        raise AttsimError(f"{root / TELEMETRY_FILE}: damaged run directory: the rows are of run {stamp!r}, "
                          f"{META_FILE} names run {meta.get(RUN_ID)!r}")
    missing = [c for c in meta.get("columns", [TIME_INDEX]) if c not in df.columns]
    if missing:
        raise AttsimError(f"{root / TELEMETRY_FILE}: damaged telemetry: it lacks the columns {missing} that "
                          f"{META_FILE} lists")
    return df.set_index(TIME_INDEX)


def _read_live_rows(root: Path, meta: dict):
    """The whole rows a live run has on disk, without touching its files (or the Parquet file, if it has ended)."""
    import pandas as pd

    columns = list(meta.get("columns", [TIME_INDEX]))
    try:
        source = open(root / ROWS_FILE, "rb")  # held open: a finishing writer may unlink it meanwhile
    except FileNotFoundError:
        if (root / TELEMETRY_FILE).is_file():
            return _read_parquet(root, meta)
        return pd.DataFrame(columns=columns).set_index(TIME_INDEX)
    with source:
        n = os.fstat(source.fileno()).st_size // (8 * len(columns))
        block = np.fromfile(source, dtype="<f8", count=n * len(columns)).reshape(n, len(columns))
    return pd.DataFrame(block, columns=columns).set_index(TIME_INDEX)


def load(path) -> Telemetry:
    """Open a run directory (complete, partial or still running); the frames load lazily.

    A live run (its writer holds the directory's lock) is read as it is, without
    touching its files: ``meta["running"]`` and ``meta["partial"]`` are True.
    A run whose writer is gone but left its rows unconverted (killed) is
    converted to ``telemetry.parquet`` here, under the lock, and marked
    partial; concurrent loaders wait for one conversion and read its result.
    Raises :class:`~attsim.errors.AttsimError` naming the path when it is
    not a run directory or its files are unreadable.

    Parameters
    ----------
    path : str or Path
        The run directory.
    """
    root = Path(path_like(path, "path"))
    meta = read_meta(root)
    lock = RunLock(root)
    try:
        free = _take_for_reading(lock, root)
    except OSError:  # a read-only copy of a run: nothing there can be converted, what is on disk is read as it is
        finished = (root / TELEMETRY_FILE).is_file() and not (root / ROWS_FILE).exists()
        if finished:
            return Telemetry(root, meta)
        stopped = meta.get("stopped", "killed; not recovered (the directory is read-only)")
        return Telemetry(root, {**meta, "running": False, "partial": True, "stopped": stopped}, from_rows=True)
    if not free:  # a live writer holds it: read what is on disk, touch nothing
        return Telemetry(root, {**read_meta(root), "running": True, "partial": True}, from_rows=True)
    try:
        meta = read_meta(root)  # as the last holder left it
        if (root / ROWS_FILE).exists() or meta.get("running", False):
            _recover(root, meta)
            meta = read_meta(root)
        if not (root / TELEMETRY_FILE).is_file():
            raise AttsimError(f"{root}: no telemetry ({TELEMETRY_FILE} missing)")
    finally:
        lock.release()
    return Telemetry(root, meta)


# How long a loader waits for a lock held by a process that is not a live writer: another loader converting a
# killed run, or a new run that has taken the lock and not yet written its meta.json.
LOCK_WAIT_S = 30.0


def _take_for_reading(lock: RunLock, root: Path) -> bool:
    """Take the directory's lock to read (and maybe recover) a run; False when a live writer holds it.

    Never recovers without the lock: when the holder cannot be identified as
    a live writer and the lock stays held for :data:`LOCK_WAIT_S`, the run is
    read as a live one.
    """
    deadline = time.monotonic() + LOCK_WAIT_S
    while True:
        if lock.acquire():
            return True
        try:
            meta = read_meta(root)
        except AttsimError:
            meta = {}
        if (meta.get("running") and process_alive(meta.get("writer_pid"))) or time.monotonic() >= deadline:
            return False
        time.sleep(0.02)


def _recover(root: Path, meta: dict) -> None:
    """Convert a dead writer's rows (none, if it died in set-up) and mark the run partial. Holds the lock."""
    columns = list(meta.get("columns", [TIME_INDEX]))
    set_up = meta.get("stage") == "setup" or "columns" not in meta
    if not (root / ROWS_FILE).exists() and (root / TELEMETRY_FILE).is_file() and not set_up:
        # killed after converting its rows, before saying so: the Parquet file is whole
        import pyarrow.parquet as pq

        meta["rows"] = pq.ParquetFile(root / TELEMETRY_FILE).metadata.num_rows
        meta.setdefault("stopped", "killed after its telemetry was written")
    else:
        if (root / ROWS_FILE).exists() and "row_width" not in meta:
            raise AttsimError(f"{root / META_FILE}: no row_width, so its columns cannot be checked against the rows; "
                              f"not converting {ROWS_FILE} (it is left as it is)")
        meta["rows"] = _rows_to_parquet(root, len(columns), columns, meta.get(RUN_ID))
        if set_up:  # the run wrote no event yet: what the file holds is an earlier run's
            open(root / EVENTS_FILE, "w").close()
    meta.update(partial=True, running=False)
    meta.setdefault("columns", columns)
    meta.setdefault("stopped", "killed during set-up" if set_up else "killed: recovered from the row file")
    _write_json_atomic(root / META_FILE, meta)


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
