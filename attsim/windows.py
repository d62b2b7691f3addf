"""Where a declared criterion applies: a window of a run's time, as intervals read from its telemetry (layer 8).

A :class:`Window` is a description (``Window.after(120)``, ``Window.orbit(4)``,
``Window.mode("nadir")``, ``Window.passes()``...) that :meth:`Window.resolve`
turns into the intervals ``[(start_s, stop_s), ...]`` of one run, and
:meth:`Window.rows` into the telemetry rows inside them (a row at ``t`` is
inside an interval when ``start_s <= t <= stop_s``). ``skip_s`` leaves out the
first seconds of each interval (a pass's acquisition, a mode's transient).

A window the run does not cover is not judged: a run that ends before the
window begins (or, for a fixed interval or an orbit, before it ends), a mode
never entered, a pass never made, each give the reason as an
:class:`attsim.testing.NotEvaluated`.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ._core.validate import finite_number, int_in, non_negative_scalar, sequence
from .errors import InputError
from .testing import NotEvaluated

__all__ = ["Window", "Resolved", "intervals_of"]

KINDS = ("run", "between", "after", "orbit", "mode", "passes", "intervals")


class Resolved(NamedTuple):
    """A window on one run (:meth:`Window.resolve`).

    Attributes
    ----------
    intervals : list of (float, float)
        Its intervals on this run, ``(start, stop)`` in s, in time order.
    rows : ndarray of bool
        One per telemetry row: inside an interval.
    missing : NotEvaluated or None
        Why the window has no rows on this run (a mode never entered, a time past the end), else None.
    """

    intervals: list
    rows: np.ndarray
    missing: NotEvaluated | None


def intervals_of(t: np.ndarray, flag: np.ndarray) -> list[tuple[float, float]]:
    """``[(first t, last t), ...]`` of each run of True in ``flag`` (one value per row of ``t``).

    Parameters
    ----------
    t : ndarray
        The rows' times, s.
    flag : ndarray of bool
        One per row.
    """
    edges = np.diff(np.concatenate([[0], np.asarray(flag, dtype=np.int8), [0]]))
    starts, stops = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    return [(float(t[a]), float(t[b - 1])) for a, b in zip(starts, stops)]


class Window:
    """Where a criterion applies on a run (see the module docstring); build one with a class method.

    Parameters
    ----------
    kind : str
        One of ``KINDS``; the class methods set it with the rest.
    start_s, stop_s : float, optional
        The interval's ends, s since the start of the run (``between``, ``after``).
    name : str or int, optional
        The mode's name (``mode``), the orbit's number (``orbit``), the controller (``passes``).
    skip_s : float, optional
        Time left out after each entry into the window, s (default 0).
    given : sequence of (start_s, stop_s), optional
        The intervals of ``Window.intervals``.

    Examples
    --------
    ``Window.whole()``, ``Window.between(100, 400)``, ``Window.after(240)``,
    ``Window.orbit(4)`` (the fourth orbit, from the run's orbit period),
    ``Window.mode("nadir", skip_s=60)``, ``Window.passes(skip_s=120)`` (while
    a controller's ground target is above its minimum elevation),
    ``Window.intervals([(1500, 2100)], label="the first pass")``.
    """

    __slots__ = ("kind", "start_s", "stop_s", "name", "skip_s", "given")

    def __init__(self, kind: str, start_s=None, stop_s=None, name=None, skip_s=0.0, given=()):
        if kind not in KINDS:
            raise InputError("kind", f"must be one of {list(KINDS)} (use Window.after(), Window.orbit(), ...)",
                             f"got {kind!r}")
        self.kind, self.start_s, self.stop_s, self.name = kind, start_s, stop_s, name
        self.skip_s = non_negative_scalar(skip_s, "skip_s")
        self.given = tuple(given)

    @classmethod
    def whole(cls) -> Window:
        """The whole run."""
        return cls("run")

    @classmethod
    def between(cls, start_s, stop_s) -> Window:
        """From ``start_s`` to ``stop_s`` (s since the start of the run)."""
        start, stop = finite_number(start_s, "start_s"), finite_number(stop_s, "stop_s")
        if stop <= start:
            raise InputError("stop_s", "must be after start_s", f"got {start:g} to {stop:g} s")
        return cls("between", start, stop)

    @classmethod
    def after(cls, t_s) -> Window:
        """From ``t_s`` to the end of the run."""
        return cls("after", finite_number(t_s, "t_s"))

    @classmethod
    def orbit(cls, number, skip_s=0.0) -> Window:
        """The ``number``-th orbit (1 is the first), from the orbit period the run records."""
        return cls("orbit", name=int_in(number, "number", 1), skip_s=skip_s)

    @classmethod
    def mode(cls, name, skip_s=0.0) -> Window:
        """While the mode manager runs mode ``name`` (each time it does, ``skip_s`` after each entry left out)."""
        if not isinstance(name, str) or not name:
            raise InputError("name", "must be a mode's name", f"got {name!r}")
        return cls("mode", name=name, skip_s=skip_s)

    @classmethod
    def passes(cls, controller=None, skip_s=0.0) -> Window:
        """While the ground target of ``controller`` (by name; the only one when None) is above its minimum
        elevation, from the orbit and the station the run records."""
        if controller is not None and not isinstance(controller, str):
            raise InputError("controller", "must be a controller's name or None", f"got {controller!r}")
        return cls("passes", name=controller, skip_s=skip_s)

    @classmethod
    def intervals(cls, intervals, skip_s=0.0, label="the given intervals") -> Window:
        """Intervals of your own ``[(start_s, stop_s), ...]`` (e.g. computed from the run in ``criteria``)."""
        pairs = []
        for k, pair in enumerate(sequence(intervals, "intervals")):
            try:
                start, stop = pair
            except (TypeError, ValueError):
                raise InputError(f"intervals[{k}]", "must be (start_s, stop_s)", f"got {pair!r}") from None
            start, stop = finite_number(start, f"intervals[{k}][0]"), finite_number(stop, f"intervals[{k}][1]")
            if stop < start:
                raise InputError(f"intervals[{k}]", "must end after it starts", f"got ({start:g}, {stop:g})")
            pairs.append((start, stop))
        if not isinstance(label, str) or not label:
            raise InputError("label", "must say what the intervals are", f"got {label!r}")
        return cls("intervals", name=label, skip_s=skip_s, given=pairs)

    def describe(self) -> str:
        """The window in words, as the report and the criteria table say it."""
        skip = f", after the first {self.skip_s:g} s of each" if self.skip_s else ""
        if self.kind == "run":
            return "the whole run"
        if self.kind == "between":
            return f"from {self.start_s:g} to {self.stop_s:g} s"
        if self.kind == "after":
            return f"after {self.start_s:g} s"
        if self.kind == "orbit":
            return f"orbit {self.name}" + (f", after its first {self.skip_s:g} s" if self.skip_s else "")
        if self.kind == "mode":
            return f"while in mode {self.name}{skip}"
        if self.kind == "passes":
            whose = f" of {self.name}" if self.name else ""
            return f"during ground-station passes{whose}{skip}"
        return f"{self.name}{skip}"

    def __repr__(self) -> str:
        return f"Window({self.describe()!r})"

    def resolve(self, telemetry) -> Resolved:
        """The window on one run (:class:`Resolved`): its intervals and rows, or why there are none."""
        df = telemetry.df if hasattr(telemetry, "df") else telemetry
        meta = getattr(telemetry, "meta", {}) or {}
        t = np.asarray(df.index, dtype=float)
        if t.size == 0:
            return Resolved([], np.zeros(0, dtype=bool), NotEvaluated("the run has no telemetry"))
        spans, missing = self._spans(t, df, meta)
        if missing is not None:
            return Resolved([], np.zeros(t.size, dtype=bool), missing)
        spans = [(a + self.skip_s, b) for a, b in spans if b >= a + self.skip_s]
        rows = np.zeros(t.size, dtype=bool)
        for start, stop in spans:
            rows |= (t >= start) & (t <= stop)
        if not rows.any():
            reason = f"no telemetry row {self.describe()}"
            return Resolved(spans, rows, NotEvaluated(reason + f" (the run spans {t[0]:.6g} to {t[-1]:.6g} s)"))
        return Resolved(spans, rows, None)

    def _spans(self, t, df, meta) -> tuple[list, NotEvaluated | None]:
        """The window's intervals before ``skip_s``, or why the run has none."""
        end = float(t[-1])
        if self.kind == "run":
            return [(float(t[0]), end)], None
        if self.kind == "after":
            if end < self.start_s:
                return [], NotEvaluated(f"the run ends at {end:.6g} s, before {self.start_s:.6g} s")
            return [(self.start_s, end)], None
        if self.kind in ("between", "orbit"):
            start, stop = (self.start_s, self.stop_s) if self.kind == "between" else self._orbit(meta)
            if start is None:
                return [], stop
            if end < stop - 1e-9 * max(1.0, abs(stop)):  # a window cut short is not the window the bound is for
                return [], NotEvaluated(f"the run ends at {end:.6g} s, before the end of {self.describe()} "
                                        f"({start:.6g} to {stop:.6g} s)")
            return [(start, stop)], None
        if self.kind == "mode":
            return self._mode(t, df, meta)
        if self.kind == "passes":
            return self._passes(t, meta)
        if not self.given:
            return [], NotEvaluated(f"{self.name}: none in this run")
        return list(self.given), None

    def _orbit(self, meta):
        period = (meta.get("environment") or {}).get("period_s")
        if not isinstance(period, (int, float)) or not math.isfinite(period) or period <= 0:
            return None, NotEvaluated("the run records no orbit period (a mission without an environment)")
        return (self.name - 1) * float(period), self.name * float(period)

    def _mode(self, t, df, meta):
        if "mode" not in df:
            return [], NotEvaluated("the run has no mode column (no ModeManager)")
        names = meta.get("modes") or []
        names = dict(enumerate(names)) if isinstance(names, list) else {int(k): v for k, v in names.items()}
        numbers = [k for k, v in names.items() if v == self.name]
        if not numbers:
            return [], NotEvaluated(f"the run has no mode named {self.name!r} (its modes: "
                                    f"{', '.join(map(str, names.values())) or 'none named'})")
        spans = intervals_of(t, df["mode"].to_numpy() == numbers[0])
        if not spans:
            return [], NotEvaluated(f"the run never enters mode {self.name}")
        return spans, None

    def _passes(self, t, meta):
        from .environment.frames import gmst_rad
        from .guidance.targets import GroundTarget
        from .reporting.environment import rebuild_orbit

        owners = [c for c in meta.get("components") or [] if c.get("ground_target")
                  and (self.name is None or c.get("name") == self.name)]
        if len(owners) != 1:
            which = f"named {self.name!r} " if self.name else ""
            return [], NotEvaluated(f"the run has {len(owners)} controllers {which}with a ground target; "
                                    "Window.passes needs one (name it: Window.passes('controller'))")
        station = owners[0]["ground_target"]
        orbit = rebuild_orbit(meta.get("environment") or {})
        if orbit is None:
            return [], NotEvaluated("the run's orbit cannot be rebuilt from its metadata")
        target = GroundTarget(station["lat_deg"], station["lon_deg"], float(station.get("alt_m", 0.0)),
                              min_elevation_deg=station.get("min_elevation_deg", 0.0))
        r, _ = orbit.state_eci(t)
        spans = intervals_of(t, target.visible(r, gmst_rad(orbit.epoch.jd_at(t))))
        if not spans:
            return [], NotEvaluated("no ground-station pass in this run")
        return spans, None
