"""The component contract (layer 5): what a mission's parts implement.

Actuators, sensors, controllers and schedules are :class:`Component`
subclasses added to a :class:`~attsim.engine.mission.Mission`. The engine asks each
for its telemetry columns, starts its SimPy processes and reads its values
at every telemetry row; :func:`periodic` is the process most of them run.
"""

from __future__ import annotations

from heapq import heappush
from typing import TYPE_CHECKING
from collections.abc import Callable, Iterable

from simpy.core import NORMAL, Environment
from simpy.events import Event

from .._core.timegrid import grid_time

if TYPE_CHECKING:  # pragma: no cover
    from .mission import Mission
    from .plant import Spacecraft

__all__ = ["Component", "LazyCycle", "periodic", "At"]


class Component:
    """Something added to a :class:`~attsim.engine.mission.Mission`: actuator, sensor, controller, schedule.

    Subclasses may override:

    ``columns()``
        Names of the telemetry columns this component adds.
    ``values(sc)``
        Their values at the recorder's time (``sc`` is the running
        :class:`~attsim.engine.plant.Spacecraft`; reading its state advances the
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

    def values(self, sc: Spacecraft) -> list[float]:
        return []

    def processes(self, env, sc: Spacecraft) -> Iterable:
        return ()

    def prepare(self, mission: Mission) -> None:
        pass

    def start(self, sc: Spacecraft) -> None:
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
