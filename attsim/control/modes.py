"""Mode management: a state machine whose modes select the controllers that run.

A :class:`ModeManager` holds named :class:`Mode` s, each a set of
controllers (with their targets and actuators) that run while it is the
current mode; a controller listed in no mode always runs. At each of its
cycles the manager checks its :class:`Transition` s in order; the first
whose condition holds (for its dwell time) switches the mode: the
controllers that stop have their actuators' commands zeroed, the ones that
start begin afresh, the switch is logged as a ``mode`` event, and the
``mode`` telemetry column holds the current mode's index (names in
``meta["modes"]``). A transition from ``"*"`` leaves any mode: the way to a
safe mode on a fault.

Conditions (``kind`` code and two parameters, so the compiled loop can hold
them in arrays):

* :func:`rate_below` / :func:`rate_above` — ``|ω|`` below/above a bound for
  a dwell time, from a rate ``source``: an estimator (its latest cycle, which
  runs before the manager at one instant) or the true rate
  (:data:`attsim.TRUTH`; None is the truth too, with a warning at the run:
  :mod:`attsim.control.knowledge`);
* :func:`in_eclipse` / :func:`in_sunlight` — the environment's shadow;
* :func:`wheel_speed_above` — any wheel beyond a fraction of its limit;
* :func:`timeout` — the time spent in the current mode;
* :func:`at_time` — a time-tagged command;
* :func:`pointing_error_below` — an attitude law's error to its target, as
  the law sees it (its estimator, its attitude sensor or the truth), below
  a bound for a dwell time: the Sun acquired, a slew finished.

The manager cycles before the controllers of the same instant, so a
switch at ``t`` decides which controllers act at ``t`` on both paths.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from .._core.validate import non_negative_scalar, positive_scalar, sequence
from ..engine.component import LazyCycle
from ..errors import InputError
from ..guidance.kernels import error_angle_deg
from .knowledge import reads_truth
from .modes_loop import (AT_TIME, IN_ECLIPSE, IN_SUNLIGHT, PART, POINTING_BELOW, RATE_ABOVE, RATE_BELOW, TIMEOUT,
                         WHEEL_SPEED_ABOVE)

__all__ = ["Mode", "Transition", "Condition", "ModeManager", "rate_below", "rate_above", "in_eclipse", "in_sunlight",
           "wheel_speed_above", "timeout", "at_time", "RATE_BELOW", "RATE_ABOVE", "IN_ECLIPSE", "IN_SUNLIGHT",
           "WHEEL_SPEED_ABOVE", "TIMEOUT", "AT_TIME", "POINTING_BELOW", "pointing_error_below", "SOURCE_TRUTH",
           "SOURCE_SENSOR", "SOURCE_ESTIMATOR"]

SOURCE_TRUTH, SOURCE_SENSOR, SOURCE_ESTIMATOR = 0, 1, 2
_NAMES = ("rate below", "rate above", "in eclipse", "in sunlight", "wheel speed above", "timeout", "at time",
          "pointing error below")


class Condition(NamedTuple):
    """A transition's condition: ``kind`` (a module constant), its value, a dwell (s) and a ``source``: the rate
    source of a rate condition (an estimator, or None for the truth), the attitude law of a pointing condition.

    Parameters
    ----------
    kind : int
        What is checked: one of the module's constants (``RATE_BELOW`` ...); the functions above set it.
    value : float
        The threshold or time of the condition (rad/s, s, a fraction, deg).
    dwell_s : float
        How long it must hold, s.
    source : object, optional
        The rate source of a rate condition, the attitude law of a pointing condition.
    """

    kind: int
    value: float
    dwell_s: float
    source: object = None

    def describe(self) -> str:
        """The condition in words with its unit, as the events and the report say it:
        ``"rate below 0.0174533 rad/s (1 deg/s) for 10 s"``."""
        if self.kind in (RATE_BELOW, RATE_ABOVE):
            value = f"{self.value:g} rad/s ({math.degrees(self.value):g} deg/s)"
        else:
            value = {POINTING_BELOW: f"{self.value:g} deg", WHEEL_SPEED_ABOVE: f"{self.value:g} of its speed limit",
                     TIMEOUT: f"{self.value:g} s in the mode", AT_TIME: f"{self.value:g} s"}.get(
                         self.kind, f"{self.value:g}")
        return f"{_NAMES[self.kind]} {value}" + (f" for {self.dwell_s:g} s" if self.dwell_s else "")


def _rate_source(source):
    from ..estimation.mekf import MEKF

    if not reads_truth(source) and not isinstance(source, MEKF):
        raise InputError("source", "must be an estimator (attsim.MEKF) or attsim.TRUTH (the true rate)",
                         f"got {type(source).__name__}")
    return source


def rate_below(threshold_rad_s: float, dwell_s: float = 0.0, source=None) -> Condition:
    """``|ω| < threshold`` for ``dwell_s``, ω from ``source`` (an MEKF; attsim.TRUTH, or None, the true rate).

    Parameters
    ----------
    threshold_rad_s : float
        The bound on ``|ω|``, rad/s (> 0).
    dwell_s : float, optional
        How long it must hold, s (default 0: at once).
    source : MEKF, attsim.TRUTH or None, optional
        Where ω comes from: an estimator, or the true rate (None: the truth, with a warning at the run).
    """
    source = _rate_source(source)
    return Condition(RATE_BELOW, positive_scalar(threshold_rad_s, "threshold_rad_s"),
                     non_negative_scalar(dwell_s, "dwell_s"), source)


def rate_above(threshold_rad_s: float, dwell_s: float = 0.0, source=None) -> Condition:
    """``|ω| > threshold`` for ``dwell_s`` (a tumble: the usual way into a safe mode).

    Parameters
    ----------
    threshold_rad_s : float
        The bound on ``|ω|``, rad/s (> 0).
    dwell_s : float, optional
        How long it must hold, s (default 0: at once).
    source : MEKF, attsim.TRUTH or None, optional
        Where ω comes from: an estimator, or the true rate (None: the truth, with a warning at the run).
    """
    source = _rate_source(source)
    return Condition(RATE_ABOVE, positive_scalar(threshold_rad_s, "threshold_rad_s"),
                     non_negative_scalar(dwell_s, "dwell_s"), source)


def in_eclipse(dwell_s: float = 0.0) -> Condition:
    """In the Earth's shadow (the mission environment's) for ``dwell_s``: the umbra only (the penumbra, where the
    ``lit`` column is between 0 and 1, counts as sunlight).

    Parameters
    ----------
    dwell_s : float, optional
        How long it must hold, s (default 0).
    """
    return Condition(IN_ECLIPSE, 0.0, non_negative_scalar(dwell_s, "dwell_s"))


def in_sunlight(dwell_s: float = 0.0) -> Condition:
    """In sunlight for ``dwell_s``: any part of the Sun's disc seen (the penumbra included; ``lit`` > 0).

    Parameters
    ----------
    dwell_s : float, optional
        How long it must hold, s (default 0).
    """
    return Condition(IN_SUNLIGHT, 0.0, non_negative_scalar(dwell_s, "dwell_s"))


def wheel_speed_above(fraction: float) -> Condition:
    """Any reaction wheel faster than ``fraction`` of its speed limit.

    Parameters
    ----------
    fraction : float
        Of each wheel's ``max_speed_rad_s``, in (0, 1].
    """
    fraction = positive_scalar(fraction, "fraction")
    if fraction > 1.0:
        raise InputError("fraction", "must be in (0, 1]", f"got {fraction!r}")
    return Condition(WHEEL_SPEED_ABOVE, fraction, 0.0)


def timeout(seconds: float) -> Condition:
    """``seconds`` spent in the current mode.

    Parameters
    ----------
    seconds : float
        Time in the current mode, s (> 0).
    """
    return Condition(TIMEOUT, positive_scalar(seconds, "seconds"), 0.0)


def at_time(t_s: float) -> Condition:
    """A time-tagged command: from ``t_s`` on.

    Parameters
    ----------
    t_s : float
        Time since the start of the run, s.
    """
    return Condition(AT_TIME, non_negative_scalar(t_s, "t_s"), 0.0)


def pointing_error_below(threshold_deg: float, dwell_s: float = 0.0, controller=None) -> Condition:
    """``controller``'s pointing error below ``threshold_deg`` for ``dwell_s``, as the law sees it.

    The angle between the attitude the law acts on (its estimator's
    estimate, its attitude sensor's latest sample, or the true attitude when
    it reads none) and its target's reference now; it does not hold while
    that attitude is unknown (an estimator not started yet). ``controller``
    is an attitude law (``QuaternionPD`` or ``MagneticPD``) of the mission;
    it need not be running.

    Parameters
    ----------
    threshold_deg : float
        The bound on the law's pointing error, deg (> 0).
    dwell_s : float, optional
        How long it must hold, s (default 0).
    controller : QuaternionPD or MagneticPD
        The attitude law whose error is read.
    """
    if not hasattr(controller, "pointing"):
        raise InputError("controller", "must be an attitude law (attsim.QuaternionPD or attsim.MagneticPD)",
                         f"got {type(controller).__name__}")
    threshold = positive_scalar(threshold_deg, "threshold_deg")
    if threshold > 180.0:
        raise InputError("threshold_deg", "must be at most 180 (an angle between attitudes)", f"got {threshold_deg!r}")
    return Condition(POINTING_BELOW, threshold, non_negative_scalar(dwell_s, "dwell_s"), controller)


class Mode(NamedTuple):
    """A mode: its name and the controllers that run in it.

    Parameters
    ----------
    name : str
        The mode's name.
    controllers : tuple
        The controllers that run in it.
    """

    name: str
    controllers: tuple


class Transition(NamedTuple):
    """From mode ``source`` (a name, or ``"*"`` for any) to mode ``target`` when ``condition`` holds.

    Parameters
    ----------
    source : str
        The mode it leaves (``"*"``: any).
    target : str
        The mode it enters.
    condition : Condition
        When it switches.
    """

    source: str
    target: str
    condition: Condition


def _items(item, count: int, field: str, what: str) -> tuple:
    """``item`` as a tuple of ``count`` entries (a mode's pair, a transition's triple), refused naming ``field``."""
    if isinstance(item, (str, bytes)) or not isinstance(item, (tuple, list)) or len(item) != count:
        raise InputError(field, f"must be a {what} {'pair' if count == 2 else 'triple'}", f"got {item!r}")
    return tuple(item)


class ModeManager(LazyCycle):
    """The mission's mode logic (see the module docstring).

    Parameters
    ----------
    modes : sequence of (name, controllers)
        The modes, each a name and the controllers that run in it.
    transitions : sequence of (from, to, condition)
        Checked in order at each cycle; the first that holds switches.
    initial : str
        The mode at ``t = 0``.
    period_s : float
        How often the transitions are checked.
    name : str, optional
        Its name (default ``"modes"``).
    """

    loop_part = PART  # the compiled mission (attsim.control.modes_loop)

    def __init__(self, modes, transitions, initial: str, period_s: float, name: str = "modes"):
        self.name = name
        self.period_s = positive_scalar(period_s, "period_s")
        self.phase_s = 0.0
        self.modes = []
        for k, item in enumerate(sequence(modes, "modes")):
            pair = _items(item, 2, f"modes[{k}]", "(name, controllers)")
            if not isinstance(pair[0], str) or pair[0] in ("", "*"):  # '*' means any mode in a transition
                raise InputError(f"modes[{k}]", "its name must be a non-empty string other than '*'",
                                 f"got {pair[0]!r}")
            self.modes.append(Mode(pair[0], tuple(sequence(pair[1], f"modes[{k}] controllers"))))
        names = [m.name for m in self.modes]
        if not names or len(set(names)) != len(names):
            raise InputError("modes", "must be one or more modes with unique names", f"got {names}")
        self.transitions = []
        for k, item in enumerate(sequence(transitions, "transitions")):
            source, target, condition = _items(item, 3, f"transitions[{k}]", "(from, to, condition)")
            for end, field in ((source, "from"), (target, "to")):
                if end not in names and not (end == "*" and field == "from"):
                    raise InputError(f"transitions[{k}]", f"{field} must name a mode ({names}, or '*' as from)",
                                     f"got {end!r}")
            if not isinstance(condition, Condition):
                raise InputError(f"transitions[{k}]", "condition must be made by attsim.modes (rate_below, ...)",
                                 f"got {type(condition).__name__}")
            self.transitions.append(Transition(source, target, condition))
        if initial not in names:
            raise InputError("initial", f"must name a mode ({names})", f"got {initial!r}")
        self.initial = initial
        self.mode_names = names

    def prepare(self, mission):
        from .base import Controller

        if sum(isinstance(c, ModeManager) for c in mission.components) > 1:
            raise InputError("components", "a mission has at most one ModeManager")
        for mode in self.modes:
            for controller in mode.controllers:
                if not isinstance(controller, Controller) or controller not in mission.components:
                    raise InputError("modes", f"mode {mode.name!r} lists {getattr(controller, 'name', controller)!r}, "
                                     "which is not a controller of the mission")
        for k, transition in enumerate(self.transitions):
            source = transition.condition.source
            if transition.condition.kind == POINTING_BELOW and source not in mission.components:
                raise InputError(f"transitions[{k}]", f"its pointing condition watches {source.name!r}, which is not "
                                 "a controller of the mission")
            if transition.condition.kind in (RATE_BELOW, RATE_ABOVE) and not reads_truth(source) \
                    and not any(c is source for c in mission.components):
                raise InputError(f"transitions[{k}]", f"its rate condition reads estimator {source.name!r}, which is "
                                 "not in the mission (add it with mission.add)")
        needs_orbit = any(t.condition.kind in (IN_ECLIPSE, IN_SUNLIGHT) for t in self.transitions)
        if needs_orbit and mission.environment is None:
            raise InputError("transitions", "eclipse conditions need a mission environment (an orbit and the Sun)")
        listed = {id(c) for mode in self.modes for c in mode.controllers}
        # in the mission's order (not a set's): controllers stopped by one switch are zeroed, and log, in that order
        self.managed = [c for c in mission.components if id(c) in listed]
        for controller in self.managed:
            controller.mode_manager = self

    def loop_source(self, condition, build) -> int:
        """The bank row a condition reads in the compiled mission: the law of a pointing condition, the estimator
        of a rate condition (-1: the truth)."""
        if condition.kind == POINTING_BELOW:
            return build.row(condition.source)
        return -1 if reads_truth(condition.source) else build.row(condition.source)

    def start(self, sc):
        self._sc = sc
        self.current = self.mode_names.index(self.initial)
        self.entered_s = 0.0
        self.since = [math.nan] * len(self.transitions)
        self.reset_cycles()
        for controller in self.managed:
            controller.active = controller in self.modes[self.current].controllers

    def cycle(self, sc, t: float, index: int) -> None:
        """Check ``index`` at ``t``: the first transition whose condition held for its dwell switches the mode."""
        for k, transition in enumerate(self.transitions):
            if transition.source not in ("*", self.mode_names[self.current]) \
                    or transition.target == self.mode_names[self.current]:  # "*" never re-enters the current mode
                self.since[k] = math.nan
                continue
            if self._holds(transition.condition, sc, t):
                if math.isnan(self.since[k]):
                    self.since[k] = t
                if t - self.since[k] >= transition.condition.dwell_s:
                    self._switch(sc, t, self.mode_names.index(transition.target), transition.condition)
                    return
            else:
                self.since[k] = math.nan

    def _holds(self, condition: Condition, sc, t: float) -> bool:
        kind = condition.kind
        if kind in (RATE_BELOW, RATE_ABOVE):
            w = _rate(condition.source, sc)
            norm = math.sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2])
            return norm < condition.value if kind == RATE_BELOW else norm > condition.value
        if kind in (IN_ECLIPSE, IN_SUNLIGHT):
            lit = sc.environment_now()["srp_pressure"] > 0.0
            return (not lit) if kind == IN_ECLIPSE else lit
        if kind == WHEEL_SPEED_ABOVE:
            return any(abs(sc.wheel_speed_rad_s(j)) > condition.value * sc.wheels.max_speed_rad_s[j]
                       for j in range(len(sc.wheel_names)))
        if kind == TIMEOUT:
            return t - self.entered_s >= condition.value
        if kind == POINTING_BELOW:
            law = condition.source
            q = law.attitude_seen(sc)
            if math.isnan(q[0]):
                return False
            return error_angle_deg(q, law.pointing.reference(sc, t)[0]) < condition.value
        return t >= condition.value  # AT_TIME

    def _switch(self, sc, t: float, mode: int, condition: Condition) -> None:
        after = self.modes[mode].controllers
        for controller in self.managed:
            running = controller in after
            if controller.active and not running:
                controller.stop_commands(sc)
            if running and not controller.active:
                controller.restart()
            controller.active = running
        sc._log(t, "mode", manager=self.name, before=self.mode_names[self.current], after=self.mode_names[mode],
                reason=condition.describe())
        self.current, self.entered_s = mode, t
        self.since = [math.nan] * len(self.transitions)

    def knowledge_sources(self) -> dict:
        """``{"rate": [source of each rate condition]}`` (None: the truth, unasked; :mod:`attsim.control.knowledge`)."""
        rates = [t.condition.source for t in self.transitions if t.condition.kind in (RATE_BELOW, RATE_ABOVE)]
        return {"rate": rates} if rates else {}

    def columns(self):
        return ["mode"]

    def values(self, sc):
        return [float(self.current)]


def _rate(source, sc) -> tuple:
    """``ω`` from a rate source: an estimator (its cycle at this instant first) or the truth."""
    if reads_truth(source):
        return sc.state()[1]
    source.bring_up_to_date(sc)
    return source.rate()
