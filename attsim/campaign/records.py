"""A campaign directory on disk: its description, its run records, its envelope state, its lock.

::

    <campaign_dir>/
      .attsim.lock           held by the running campaign (attsim.telemetry.lock: an OS lock that dies with the process)
      campaign.json          mission, runs, seed, telemetry, requirement, criteria, parameters, ...
      records/part-*.parquet the run records, each part written atomically (tmp file + rename)
      envelopes.npz          the envelope state and the runs it covers
      runs/<k>/              a run's telemetry ("decimated" or "full")
      report.html            the campaign report

One record per run: ``run``, ``seed``, ``status`` (OK, FAIL, ERROR),
``error``, ``wall_s``, ``worker``, ``p:<name>`` (drawn parameters, flattened),
``v:<label>`` and ``ok:<label>`` (each criterion's value and verdict).
A run may appear in two parts only if a kill fell between the compacted
part's rename and the removal of the parts it joins; readers keep a run's
first record, so every run counts once (the writer takes each run once,
whatever dask delivers after a lost worker).
"""

from __future__ import annotations

import json
import os
import uuid
import zipfile
from pathlib import Path

import numpy as np

from ..errors import AttsimError, InputError
from ..telemetry.lock import RunLock

__all__ = ["CAMPAIGN_FILE", "RECORDS_DIR", "ENVELOPES_FILE", "RUNS_DIR", "STATUSES", "CampaignLockedError",
           "CampaignWriteError",
           "lock_campaign", "read_campaign", "write_campaign", "differences", "read_records", "normalise_records",
           "RecordWriter", "save_envelopes", "load_envelopes"]

CAMPAIGN_FILE = "campaign.json"
RECORDS_DIR = "records"
ENVELOPES_FILE = "envelopes.npz"
RUNS_DIR = "runs"
STATUSES = ("OK", "FAIL", "ERROR")
# campaign.json fields that make two campaigns different experiments: a resume with another value is refused
# (the envelope grid too: the envelopes' state sums the runs on it, and no record keeps a run's values to re-sample)
SAME_EXPERIMENT = ("mission", "mission_sha256", "seed", "parameters", "duration_s", "method", "envelope_grid")
_GRID_FIELDS = {"points": "envelope_points", "t_end_s": "envelope_t_end_s"}  # envelope_grid's keys as Campaign names


class CampaignLockedError(AttsimError):
    """Another campaign is running in this directory."""

    def __init__(self, directory: str):
        self.directory = directory
        super().__init__(directory)

    def __str__(self) -> str:
        return (f"campaign directory {self.directory} is in use by another campaign; one campaign writes a directory "
                "at a time (wait for it to end, or give this one another --out)")


def lock_campaign(directory: Path) -> RunLock:
    """Hold the campaign directory's lock, or raise :class:`CampaignLockedError` naming it."""
    lock = RunLock(directory)
    try:
        directory.mkdir(parents=True, exist_ok=True)
        acquired = lock.acquire()
    except OSError as exc:  # read-only, not a directory, no permission, no space
        raise InputError("out_dir", "must be a directory attsim can create and write",
                         f"{directory}: {exc.strerror or exc}") from exc
    if not acquired:
        raise CampaignLockedError(str(directory))
    return lock


class CampaignWriteError(AttsimError):
    """A file of the campaign directory could not be written (no space left, read-only, ...): what is on disk stays."""

    def __init__(self, path: str, reason: str):
        self.path, self.reason = path, reason
        super().__init__(path, reason)

    def __str__(self) -> str:
        return (f"campaign directory: cannot write {self.path} ({self.reason}); the records written before are kept: "
                "free the space (or give another --out) and start the same command again to resume")


def _write_atomic(path: Path, write) -> None:
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    try:
        write(tmp)
        os.replace(tmp, path)
    except OSError as exc:
        raise CampaignWriteError(str(path), exc.strerror or str(exc)) from exc
    finally:
        if tmp.exists():
            tmp.unlink()


def read_campaign(directory: Path) -> dict | None:
    path = Path(directory) / CAMPAIGN_FILE
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise AttsimError(f"{path}: unreadable campaign description ({exc})") from exc


def write_campaign(directory: Path, description: dict) -> None:
    text = json.dumps(description, indent=2)
    _write_atomic(Path(directory) / CAMPAIGN_FILE, lambda tmp: tmp.write_text(text, encoding="utf-8"))


def differences(stored: dict, new: dict) -> list[str]:
    """The fields of :data:`SAME_EXPERIMENT` in which two campaign descriptions differ, each as 'name: a != b'
    (the script's content as 'changed', the dispersions as each parameter that differs, the envelope grid as
    ``envelope_points`` or ``envelope_t_end_s``)."""
    found = []
    for key in SAME_EXPERIMENT:
        a, b = stored.get(key), new.get(key)
        if a == b:
            continue
        if key == "mission_sha256":
            found.append(f"{key}: the script's content changed")
        elif key == "parameters" and isinstance(a, dict) and isinstance(b, dict):
            found += _each_differing(a, b, lambda name: f"parameters[{name!r}]")
        elif key == "envelope_grid" and isinstance(a, dict) and isinstance(b, dict):
            found += _each_differing(a, b, lambda name: _GRID_FIELDS.get(name, name))
        else:
            found.append(f"{key}: {a!r} != {b!r}")
    return found


def _each_differing(a: dict, b: dict, named) -> list[str]:
    """'name: a != b' for each key of two dicts whose values differ (``named`` says the key as the user knows it)."""
    return [f"{named(key)}: {a.get(key, 'absent')} != {b.get(key, 'absent')}"
            for key in list(a) + [k for k in b if k not in a] if a.get(key) != b.get(key)]


def _parts(directory: Path) -> list[Path]:
    return sorted((Path(directory) / RECORDS_DIR).glob("part-*.parquet"))


def normalise_records(frame, labels=()):
    """Records with every column of the schema typed: ``v:`` float (NaN where missing), ``ok:`` bool (False where
    missing), one row per run (the first seen), sorted by run."""
    import pandas as pd

    if frame is None or len(frame) == 0:
        frame = pd.DataFrame({"run": pd.Series(dtype="int64"), "seed": pd.Series(dtype="int64"),
                              "status": pd.Series(dtype="str"), "error": pd.Series(dtype="str"),
                              "wall_s": pd.Series(dtype="float64"), "worker": pd.Series(dtype="str")})
    frame = frame.drop_duplicates("run", keep="first").sort_values("run").reset_index(drop=True)
    for label in labels:
        for prefix in ("v:", "ok:"):
            if prefix + label not in frame.columns:
                frame[prefix + label] = np.nan if prefix == "v:" else False
    for column in frame.columns:
        if column.startswith("v:") or column in ("wall_s",):
            frame[column] = frame[column].astype("float64")
        elif column.startswith("ok:"):
            frame[column] = frame[column].astype("boolean").fillna(False).astype(bool)
        elif column in ("run", "seed"):
            frame[column] = frame[column].astype("int64")
        elif column in ("status", "error", "worker"):
            frame[column] = frame[column].fillna("").astype(str)
    return frame


def read_records(directory, labels=()):
    """Every run's record in the campaign directory (pandas DataFrame, see :func:`normalise_records`)."""
    import pandas as pd
    import pyarrow.parquet as pq

    frames = []
    for part in _parts(directory):
        try:
            frames.append(pq.read_table(part).to_pandas())
        except Exception as exc:  # pyarrow raises several types for a damaged file
            raise AttsimError(f"{part}: unreadable records ({exc})") from exc
    frame = pd.concat(frames, ignore_index=True) if frames else None
    if not labels:
        described = read_campaign(directory) or {}
        labels = [c["label"] for c in described.get("criteria", [])]
    return normalise_records(frame, labels)


class RecordWriter:
    """Streams records into ``records/part-*.parquet``, one atomic part per :meth:`flush`."""

    def __init__(self, directory: Path):
        self.root = Path(directory) / RECORDS_DIR
        self.root.mkdir(parents=True, exist_ok=True)
        numbers = [int(p.stem.split("-")[1]) for p in _parts(directory) if p.stem.split("-")[1].isdigit()]
        self._next = max(numbers, default=-1) + 1
        self.pending: list[dict] = []

    def add(self, record: dict) -> None:
        self.pending.append(record)

    def flush(self, labels=()) -> Path | None:
        """Write the pending records as one new part (atomically); returns its path, or None if none was pending."""
        if not self.pending:
            return None
        import pandas as pd

        frame = normalise_records(pd.DataFrame.from_records(self.pending), labels)
        path = self._write(frame)
        self.pending = []
        return path

    def _write(self, frame) -> Path:
        import pyarrow as pa
        import pyarrow.parquet as pq

        path = self.root / f"part-{self._next:06d}.parquet"
        self._next += 1
        table = pa.Table.from_pandas(frame, preserve_index=False)
        _write_atomic(path, lambda tmp: pq.write_table(table, tmp))
        return path

    def compact(self, labels=()) -> None:
        """Join every part into one (written before the old ones go, so a kill in between only leaves duplicates)."""
        self.flush(labels)
        old = _parts(self.root.parent)
        if len(old) <= 1:
            return
        frame = read_records(self.root.parent, labels)
        self._write(frame)
        for part in old:
            part.unlink()


def save_envelopes(directory: Path, envelopes: dict, runs, quantities: dict) -> None:
    """The envelopes' state, the runs they cover and each quantity's unit, in one atomic ``envelopes.npz``."""
    arrays = {"runs": np.asarray(sorted(runs), dtype=np.int64),
              "quantities": np.asarray(json.dumps(quantities))}
    for name, envelope in envelopes.items():
        for key, value in envelope.state().items():
            arrays[f"{name}/{key}"] = np.asarray(value)

    def write(tmp: Path) -> None:
        # mostly empty buckets: deflate's fastest level makes them ~70x smaller in ~25 ms (numpy's savez_compressed,
        # the default level: ~120x in ~80 ms); the same .npz numpy reads
        with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
            for key, value in arrays.items():
                with archive.open(f"{key}.npy", "w", force_zip64=True) as member:
                    np.lib.format.write_array(member, value, allow_pickle=False)

    _write_atomic(Path(directory) / ENVELOPES_FILE, write)


def load_envelopes(directory: Path, envelope_class):
    """``(envelopes by quantity, set of the runs they cover, {quantity: unit})``; empty when there is no state."""
    path = Path(directory) / ENVELOPES_FILE
    if not path.is_file():
        return {}, set(), {}
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {key: data[key] for key in data.files}
    except Exception as exc:  # numpy raises several types for a damaged file
        raise InputError("envelopes", "must be a readable envelopes.npz", f"{path}: {exc}") from exc
    quantities = json.loads(str(arrays.pop("quantities")))
    runs = {int(k) for k in arrays.pop("runs")}
    states: dict[str, dict] = {}
    for key, value in arrays.items():
        name, _, field = key.partition("/")
        states.setdefault(name, {})[field] = value
    return {name: envelope_class.from_state(state) for name, state in states.items()}, runs, quantities
