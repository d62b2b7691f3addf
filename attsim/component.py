"""The component contract (layer 5): what a mission's parts implement.

Actuators, sensors, controllers and schedules are :class:`Component`
subclasses added to a :class:`~attsim.engine.Mission`. The engine asks each
for its telemetry columns, starts its SimPy processes and reads its values
at every telemetry row; :func:`periodic` is the process most of them run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Iterable

if TYPE_CHECKING:  # pragma: no cover
    from .engine import Mission
    from .plant import Spacecraft

__all__ = ["Component", "periodic"]


class Component:
    """Something added to a :class:`~attsim.engine.Mission`: actuator, sensor, controller, schedule.

    Subclasses may override:

    ``columns()``
        Names of the telemetry columns this component adds.
    ``values(sc)``
        Their values at the recorder's time (``sc`` is the running
        :class:`~attsim.plant.Spacecraft`; reading its state advances the
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

    def columns(self) -> list[str]:
        return []

    def values(self, sc: "Spacecraft") -> list[float]:
        return []

    def processes(self, env, sc: "Spacecraft") -> Iterable:
        return ()

    def prepare(self, mission: "Mission") -> None:
        pass

    def start(self, sc: "Spacecraft") -> None:
        pass


def periodic(env, period_s: float, phase_s: float, duration_s: float, action: Callable[[], None]):
    """A SimPy process calling ``action()`` at ``phase + k period`` up to and including ``duration_s``.

    Times are computed by multiplication, so they do not accumulate round-off.
    """
    k = 0
    while True:
        t_next = phase_s + k * period_s
        if t_next > duration_s:
            return
        if t_next > env.now:
            yield env.timeout(t_next - env.now)
        action()
        k += 1
