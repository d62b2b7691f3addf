"""The component contract: what a mission's parts implement, and what they may use of the engine.

Actuators, sensors, controllers and schedules are :class:`Component`
subclasses added to a :class:`~attsim.engine.mission.Mission`. The engine asks each
for its telemetry columns, starts its SimPy processes and reads its values
at every telemetry row; :func:`periodic` is the process most of them run.
What a component may use of the mission and of the running spacecraft is
the protocols :class:`MissionView` and :class:`RunningSpacecraft`, which the
engine's :class:`~attsim.engine.mission.Mission` and
:class:`~attsim.engine.spacecraft.Spacecraft` satisfy: the contract names no
engine module, so the kinds sit below the engine.

A component with a compiled form names its kind's part of the compiled
mission in ``loop_part`` (:class:`LoopPart`); the engine then builds its
bank row, schedules its work and reads its events through that part.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from heapq import heappush
from typing import Protocol

from simpy.core import NORMAL, Environment
from simpy.events import Event

from .._core.timegrid import grid_time

__all__ = ["Component", "LazyCycle", "periodic", "At", "MissionView", "RunningSpacecraft", "LoopPart"]


class MissionView(Protocol):
    """What a component may read of the mission it is added to (in ``prepare``)."""

    name: str
    components: list
    duration_s: float
    max_step_s: float
    environment: object

    def component(self, name: str) -> Component: ...


class RunningSpacecraft(Protocol):
    """What a component may use of the running spacecraft (``sc``) in ``start``, its processes and ``values``:
    the state (reading it advances the plant to now), held commands, the wheels, the environment now, events and
    random generators."""

    env: object
    mission: MissionView

    def state(self) -> tuple: ...

    def event(self, kind: str, **fields) -> None: ...

    def rng(self): ...

    def set_dipole(self, source: str, dipole_body_Am2) -> None: ...

    def set_external_torque(self, source: str, torque_body_Nm) -> None: ...

    def register_wheel(self, name: str, axis, inertia_kg_m2: float, max_torque_Nm: float, max_speed_rad_s: float,
                       h0_Nms: float, model=None) -> int: ...

    def command_wheel(self, index: int, requested_Nm: float) -> float: ...


class LoopPart(Protocol):
    """A component kind's part of the compiled mission (``sensors/loop.py``, ``control/loop.py``, ...).

    ``slot`` names its bank in the World and ``bank_type`` is the bank's named tuple. For the components of its
    kind in a mission it says whether one ``compiles``, gives their work on the engine's clock and timeline
    (``schedule``), their bank (``build``), each one's row writer (``writer``), the most events they log at one
    instant, and at the end leaves the objects as the Python path would (``hand_back``); it reads back the events
    its units log (``event``) and the error of a unit that faulted (``fault``). ``units()`` lists the kind's own
    units and ``class_units(cls)`` a component class's, for compiling ahead of need.
    """

    slot: str
    bank_type: type

    def compiles(self, component, mission) -> bool: ...

    def empty(self): ...

    def schedule(self, components: list, build) -> tuple[list, list]: ...

    def build(self, components: list, build): ...

    def writer(self, component, build): ...

    def events_per_instant(self, components: list, build) -> int: ...

    def hand_back(self, bank, components: list, build) -> None: ...

    def event(self, recorder, t: float, kind: int, what: int, index: int, values, build) -> bool: ...

    def fault(self, bank, components: list, row: int, t: float, build): ...

    def units(self) -> list: ...


class Component:
    """Something added to a :class:`~attsim.engine.mission.Mission`: actuator, sensor, controller, schedule.

    Subclasses may override:

    ``columns()``
        Names of the telemetry columns this component adds.
    ``values(sc)``
        Their values at the recorder's time (``sc`` is the running
        :class:`~attsim.engine.spacecraft.Spacecraft`; reading its state advances the
        plant). The recorder runs after every sample, decision and command
        due at the same instant, so the values belong to that instant.
    ``processes(env, sc)``
        SimPy generator processes to start (each a generator taking ``env``
        first).
    ``prepare(mission)``
        Checks against the mission before it runs.
    ``start(sc)``
        Set-up at ``t = 0`` once the spacecraft exists (random generators,
        initial wheel momentum), before any process runs.
    """

    name: str = "component"
    loop_part = None  # the kind's part of the compiled mission; None: this component runs on the Python path only

    def columns(self) -> list[str]:
        return []

    def values(self, sc: RunningSpacecraft) -> list[float]:
        return []

    def processes(self, env, sc: RunningSpacecraft) -> Iterable:
        return ()

    def prepare(self, mission: MissionView) -> None:
        pass

    def start(self, sc: RunningSpacecraft) -> None:
        pass


class At(Event):
    """An event at the absolute time ``t_s``, served at ``priority`` among the events of that time.

    ``env.timeout(t - env.now)`` lands on ``env.now + (t - env.now)``, which
    in floating point can differ from ``t`` by an ulp; two processes aiming
    at the same instant would then not meet, and the order defined for one
    instant (samples before the telemetry row) would not hold. An ``At``
    lands on ``t_s`` exactly (SimPy keeps its queue as a heap of
    ``(time, priority, id, event)``).
    """

    def __init__(self, env, t_s: float, priority: int = NORMAL):
        super().__init__(env)
        if t_s < env.now:
            raise ValueError(f"At: {t_s} is before now ({env.now})")
        self._ok = True
        self._value = None
        heappush(env._queue, (t_s, priority, next(env._eid), self))


class LazyCycle(Component):
    """A component whose cycle runs once at each ``phase_s + k period_s``, whoever asks for it first.

    Its own SimPy process asks at every cycle time, and so does every
    component that reads its result at the same instant (a controller reading
    an estimator or its mode) through :meth:`bring_up_to_date`: the order in
    which SimPy serves same-time processes then cannot matter. Subclasses set
    ``period_s`` and ``phase_s``, call :meth:`reset_cycles` in ``start`` and
    implement :meth:`cycle`.
    """

    period_s: float
    phase_s: float

    def reset_cycles(self) -> None:
        self._k = 0

    def processes(self, env, sc):
        return [periodic(env, self.period_s, self.phase_s, sc.mission.duration_s, lambda: self.bring_up_to_date(sc))]

    def bring_up_to_date(self, sc) -> None:
        """Run the cycle due now, if it has not run yet."""
        k = self._k
        t = grid_time(self.phase_s, k, self.period_s)
        if t != sc.now:
            return
        self._k = k + 1
        self.cycle(sc, t, k)

    def cycle(self, sc, t_s: float, k: int) -> None:  # pragma: no cover - abstract
        """Cycle ``k``, at ``t_s``."""
        raise NotImplementedError


def periodic(env, period_s: float, phase_s: float, duration_s: float, action: Callable[[], None]):
    """A SimPy process calling ``action()`` at ``phase + k period`` up to and including ``duration_s``.

    Times are computed by multiplication, snapped (:func:`~attsim._core.timegrid.grid_time`)
    and scheduled exactly (:class:`At`), so they do not accumulate round-off
    and coincide with other processes' (a 10 Hz sensor with 0.3 s telemetry).

    When nothing else is queued before the next time (at the same time, the
    queue's head must come later in priority), the process moves the clock
    itself and acts at once instead of scheduling an event and waiting for
    it: SimPy would serve that event next anyway, so the order of everything
    is the same, without the event, the heap and the generator's re-entry
    (most of a control cycle's engine cost). An environment that paces its
    steps against the wall clock (:class:`simpy.rt.RealtimeEnvironment`)
    always gets the event.
    """
    queue = env._queue
    may_skip = type(env).step is Environment.step
    k = 0
    while True:
        t_next = grid_time(phase_s, k, period_s)
        if t_next > duration_s:
            return
        if t_next > env._now:
            head = queue[0] if may_skip and queue else None
            if head is not None and (t_next < head[0] or (t_next == head[0] and NORMAL < head[1])):
                env._now = t_next
            else:
                yield At(env, t_next)
        action()
        k += 1
