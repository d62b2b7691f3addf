"""A run directory: its files, its metadata, which run it holds, and the results reading from it.

The files are described in :mod:`attsim.telemetry`. A
:class:`~attsim.telemetry.Telemetry` reads its rows and events from its
directory when first asked, so a later run into the same directory (a gain
sweep in a loop with one mission name) would hand an earlier result the later
run's rows. Two rules keep every result describing its own run:

* A run stamps a fresh id into ``meta.json`` (and into its Parquet file's
  metadata) before it changes any file an earlier run left. A result keeps the
  id of its run and checks, after each read from the directory, that the
  directory still names that run: a file read after a later run began is
  never taken for its own (:class:`RunDirectoryReusedError` names the reuse).
* In this process, a new run into a directory first has every live result
  still reading from it read what it has not read yet
  (:func:`keep_earlier_results`), so those results stay valid, held in
  memory. Only a result read in another process than the later run's (or one
  whose files could not be read) refuses, by name.
"""

from __future__ import annotations

import json
import os
import threading
import uuid
import weakref
from pathlib import Path

from .._core.validate import path_like
from ..errors import AttsimError, InputError
from .lock import process_alive
from .schema import TIME_INDEX

__all__ = ["TELEMETRY_FILE", "ROWS_FILE", "EVENTS_FILE", "META_FILE", "REPORT_FILE", "RUN_ID", "PARQUET_RUN_ID",
           "RunDirectoryReusedError", "writable_directory", "holder", "read_meta", "new_run_id", "register",
           "keep_earlier_results", "check_same_run"]

TELEMETRY_FILE = "telemetry.parquet"
ROWS_FILE = "telemetry.f64"
EVENTS_FILE = "events.jsonl"
META_FILE = "meta.json"
REPORT_FILE = "report.html"
RUN_ID = "run_id"  # the key in meta.json
PARQUET_RUN_ID = b"attsim.run_id"  # the key in the Parquet file's schema metadata


def writable_directory(out_dir) -> Path:
    """``out_dir`` as a directory that exists and can be written, or an InputError naming it."""
    root = Path(path_like(out_dir, "out_dir"))
    if root.exists() and not root.is_dir():
        raise InputError("out_dir", "must be a directory, not a file", f"{root} is a file")
    try:
        root.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise InputError("out_dir", "must not lie under a file", f"{root}") from None
    except OSError as exc:
        raise InputError("out_dir", "must be a directory that can be created", f"{root}: {exc.strerror}") from None
    if not os.access(root, os.W_OK | os.X_OK):
        raise InputError("out_dir", "must be writable", f"{root}")
    return root


def holder(root: Path) -> str:
    """``"pid N"`` of the live writer ``meta.json`` names, or "" when none is known."""
    try:
        meta = json.loads((root / META_FILE).read_text(encoding="utf-8"))
        pid = meta.get("writer_pid") if meta.get("running") else None
    except (OSError, ValueError, AttributeError):
        return ""
    return f"pid {pid}" if pid and process_alive(pid) else ""


def read_meta(root: Path) -> dict:
    """The directory's ``meta.json``, checked to be an object whose columns can be read; AttsimError naming it."""
    meta_path = root / META_FILE
    if not meta_path.is_file():
        raise AttsimError(f"{root}: not an attsim run directory (no {META_FILE})")
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        if not isinstance(meta, dict):
            raise TypeError(f"a JSON {type(meta).__name__}, not an object")
    except (OSError, ValueError, TypeError) as exc:
        raise AttsimError(f"{meta_path}: unreadable metadata ({exc})") from exc
    columns = meta.get("columns")
    if columns is not None:
        names = isinstance(columns, list) and columns and all(isinstance(c, str) for c in columns)
        if not (names and columns[0] == TIME_INDEX and len(set(columns)) == len(columns)):
            raise AttsimError(f"{meta_path}: columns must be a list of unique names starting with {TIME_INDEX!r}")
        width = meta.get("row_width")
        if width is not None and width != len(columns):
            raise AttsimError(f"{meta_path}: the column list ({len(columns)} names) does not match the row width the "
                              f"run recorded ({width}); the rows cannot be read against it")
    return meta


def new_run_id() -> str:
    """A fresh run id (random: two runs of one process, or of two machines, never share one)."""
    return uuid.uuid4().hex


class RunDirectoryReusedError(AttsimError):
    """A result's directory now holds a later run: the files the result would read are that run's."""

    def __init__(self, directory: str, name, run_id, now_name, now_run_id):
        self.directory, self.name, self.run_id = directory, name, run_id
        self.now_name, self.now_run_id = now_name, now_run_id
        super().__init__(directory, name, run_id, now_name, now_run_id)

    def __str__(self) -> str:
        return (f"{self.directory}: this result is the run {self.name!r} (run id {self.run_id}), but a later run "
                f"({self.now_name!r}, run id {self.now_run_id}) has since been written into the same directory and "
                "replaced its files; read a result (tel.df, tel.events) before the next run into its directory "
                "starts, run with in_memory=True, or give each run its own out_dir")


_readers: dict[str, weakref.WeakSet] = {}
_readers_lock = threading.Lock()


def register(directory, result) -> None:
    """Note a live result that reads from ``directory`` (a weak reference: dropped with the result)."""
    with _readers_lock:
        _readers.setdefault(os.path.realpath(directory), weakref.WeakSet()).add(result)


def keep_earlier_results(directory) -> None:
    """Have every live result reading from ``directory`` read its rows and events now (``result.keep()``).

    Called by a new run holding the directory's lock, before it writes
    anything there. A result that cannot read its files now (damaged, or
    replaced by another process's run) is left as it is: it says so when asked.
    """
    with _readers_lock:
        results = list(_readers.pop(os.path.realpath(directory), ()))
    for result in results:
        try:
            result.keep()
        except (AttsimError, OSError, ValueError):
            pass


def check_same_run(directory, own_meta: dict, now_meta: dict) -> None:
    """:class:`RunDirectoryReusedError` when ``now_meta`` (the directory's meta.json now) is not ``own_meta``'s run."""
    if now_meta.get(RUN_ID) != own_meta.get(RUN_ID):
        raise RunDirectoryReusedError(str(directory), own_meta.get("name"), own_meta.get(RUN_ID), now_meta.get("name"),
                                      now_meta.get(RUN_ID))
