"""A run's telemetry: the column schema, the crash-safe recorder and its reader (``attsim.load``), the in-memory
recorder, and the run directory's lock."""

from .recorder import (EVENTS_FILE, META_FILE, ROWS_FILE, TELEMETRY_FILE, Recorder, RunDirectoryLockedError, Telemetry,
                       load)

__all__ = ["Telemetry", "load", "Recorder", "RunDirectoryLockedError", "TELEMETRY_FILE", "ROWS_FILE", "EVENTS_FILE",
           "META_FILE"]
