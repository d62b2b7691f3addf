"""A run's telemetry kept in memory: a recorder that writes no file, for runs whose files nobody would read.

``Mission.run(in_memory=True)`` records with :class:`MemoryRecorder` instead
of :class:`~attsim.telemetry.Recorder`: the same rows, events and metadata,
held in the process and handed back as a :class:`MemoryTelemetry` (whose
``path`` is None) instead of being written to the run directory and read
back. A campaign in "summary" mode runs this way: it keeps each run's record,
never its telemetry, so the files (Parquet written and read again, the row
file, the lock, ``meta.json``) were pure cost. Nothing survives a kill of the
process, which is why a run that must be recoverable writes its directory.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence

import numpy as np

from ..errors import InputError
from .run_directory import RUN_ID, new_run_id
from .schema import TIME_INDEX
from .recorder import Recorder, Telemetry, _json_default

__all__ = ["MemoryRecorder", "MemoryTelemetry"]


class MemoryTelemetry(Telemetry):
    """A :class:`~attsim.telemetry.Telemetry` built from memory (``path`` is None); its frames are made on first use,
    equal to those a run directory gives."""

    def __init__(self, meta: dict, rows: np.ndarray, columns: list[str], event_lines: list[str]):
        super().__init__(None, meta)
        self._rows, self._columns, self._event_lines = rows, columns, event_lines

    @property
    def df(self):
        if self._df is None:
            import pandas as pd

            rows = self._rows  # the recorder's table, which nothing writes any more: the frame keeps it as it is
            self._df = pd.DataFrame(rows[:, 1:], index=pd.Index(rows[:, 0], name=TIME_INDEX), columns=self._columns[1:],
                                    copy=False)
        return self._df

    @property
    def events(self):
        if self._events is None:
            import pandas as pd

            records = [json.loads(line) for line in self._event_lines]
            self._events = pd.DataFrame.from_records(records, columns=None if records else ["t", "kind"])
        return self._events


MAX_TABLE_BYTES = 2.0**31  # the most an in-memory run keeps (2 GiB): beyond that, a run streams its rows to disk


class MemoryRecorder:
    """The recorder interface of :class:`~attsim.telemetry.Recorder` (``start``, ``append``, ``append_rows``,
    ``event``, ``flush``, ``close``, ``abort``) over memory; :meth:`telemetry` gives the result.

    ``chunk_s`` is infinite: the compiled loop may hand its rows over in the
    largest blocks, since no file has to be kept current for a kill.
    ``rows`` is how many rows to make room for at the start (the table
    grows if the run writes more).
    """

    chunk_s = math.inf

    def __init__(self, meta: dict | None = None, rows: int = 1024):
        self.columns: list[str] = []
        self.meta = {**(meta or {}), "partial": True, "running": True, "stage": "setup", RUN_ID: new_run_id()}
        self._capacity = max(int(rows), 1)
        self._table = np.empty((0, 1))
        self._events: list[str] = []
        self._rows = 0
        self.closed = False

    def start(self, columns: Sequence[str]) -> None:
        """Fix the columns (the checks of :meth:`attsim.telemetry.Recorder.start`)."""
        columns = list(columns)
        if len(set(columns)) != len(columns) or TIME_INDEX in columns or not all(isinstance(c, str) for c in columns):
            raise InputError("columns", f"must be unique strings and must not include the index {TIME_INDEX!r}",
                             f"got {columns}")
        self.columns = columns
        table_bytes = 8.0 * self._capacity * (len(columns) + 1)
        if table_bytes > MAX_TABLE_BYTES:
            raise InputError("in_memory", f"keeps every telemetry row in memory: this run's {self._capacity:.3g} rows "
                             f"of {len(columns) + 1} values need {table_bytes / 2**30:.3g} GiB (limit "
                             f"{MAX_TABLE_BYTES / 2**30:.0f} GiB)",
                             "run it with files (in_memory=False: rows streamed to disk), or a longer telemetry_dt")
        self._table = np.empty((self._capacity, len(columns) + 1))
        self.meta.update(columns=[TIME_INDEX] + columns, row_width=len(columns) + 1, stage="running")

    @property
    def rows(self) -> int:
        return self._rows

    def _room(self, rows: int) -> np.ndarray:
        """The table with room for ``rows`` more (doubled when full)."""
        needed = self._rows + rows
        if needed > self._table.shape[0]:
            grown = np.empty((max(needed, 2 * self._table.shape[0]), self._table.shape[1]))
            grown[: self._rows] = self._table[: self._rows]
            self._table = grown
        return self._table

    def append(self, t_s: float, values: Sequence[float]) -> None:
        row = self._room(1)[self._rows]
        row[0] = t_s
        row[1:] = values
        self._rows += 1

    def append_rows(self, rows: np.ndarray) -> None:
        """Copy a block of rows (``t`` first) into the table: the caller reuses its buffer."""
        self._room(len(rows))[self._rows: self._rows + len(rows)] = rows
        self._rows += len(rows)

    def event(self, t_s: float, kind: str, **fields) -> None:
        # the line a run directory's events.jsonl would hold, so the events frame is the same
        self._events.append(json.dumps({"t": float(t_s), "kind": kind, **fields}, default=_json_default))

    def flush(self) -> None:
        """Nothing to write."""

    # the file recorder's ending, over this recorder's _finish
    close = Recorder.close
    abort = Recorder.abort

    def _finish(self, **meta_updates) -> None:
        self.meta.update(meta_updates, rows=self._rows, running=False)
        self.closed = True

    def telemetry(self) -> MemoryTelemetry:
        """The run's telemetry; ``meta`` as ``meta.json`` would hold it (JSON types)."""
        meta = json.loads(json.dumps(self.meta, default=_json_default))
        return MemoryTelemetry(meta, self._table[: self._rows], [TIME_INDEX] + self.columns, self._events)
