"""Which backend a run takes, and telling the user when it compiles.

``Mission.run(backend=...)`` (``attsim run --backend``; the environment
variable ``ATTSIM_BACKEND`` when neither is given) is ``"compiled"``,
``"interpreted"`` or ``"auto"`` (the default). :class:`Auto` decides when the
run knows the units it needs: compiled when every one of them is on this
machine's disk cache; otherwise whichever finishes first by the estimates
below — compiling the missing units then running compiled, or running
interpreted (no compiler at all, the same telemetry) while
:mod:`attsim.engine.precompile` compiles every unit in the background for
the next runs. Either way it says so on stderr, once, with the estimate.

Estimates: a unit's compile time is what it took on this machine last time
(kept beside the cache, :mod:`attsim.engine.precompile`) or
:data:`DEFAULT_COMPILE_S`; an interpreted run costs about
:data:`INTERPRETED_STEP_S` a plant step (more with an environment),
:data:`INTERPRETED_CYCLE_S` a periodic cycle and :data:`INTERPRETED_ROW_S` a
telemetry row (measured on this machine class with
``python tools/bench_coldstart.py``).
"""

from __future__ import annotations

import os
import sys

from .._core.validate import one_of
from .backend import BACKENDS, Backend, Compiled, Interpreted, advance_needs, loop_needs, missing
from .compile_record import announce, compile_estimate
from .precompile import background_compile
from .settings import BACKEND_NAMES

__all__ = ["choose_backend", "Auto", "interpreted_estimate_s", "say", "INTERPRETED_STEP_S", "INTERPRETED_CYCLE_S",
           "INTERPRETED_ROW_S", "BACKEND_NAMES"]

# what an interpreted run costs, per plant step (without, and added with, an environment: the table, the
# disturbances), per periodic cycle (a sample, a law, an estimator) and per telemetry row (seconds, this machine
# class)
INTERPRETED_STEP_S, INTERPRETED_ENVIRONMENT_STEP_S = 60e-6, 240e-6
INTERPRETED_CYCLE_S, INTERPRETED_ROW_S = 250e-6, 200e-6


def choose_backend(name: str | None, mission, path: str) -> Backend:
    """The backend named (or ``ATTSIM_BACKEND``, else ``"auto"``) for a run of ``mission`` on ``path``."""
    if name is None:
        name = os.environ.get("ATTSIM_BACKEND") or "auto"
        field = "ATTSIM_BACKEND"
    else:
        field = "backend"
    name = one_of(name, field, BACKEND_NAMES)
    return Auto(mission, path) if name == "auto" else BACKENDS[name]()


def interpreted_estimate_s(mission, path: str) -> float:
    """About how long ``mission`` runs interpreted (seconds): its plant steps, periodic cycles and rows."""
    duration = mission.duration_s
    step = INTERPRETED_STEP_S + (INTERPRETED_ENVIRONMENT_STEP_S if mission.environment is not None else 0.0)
    cycles = sum(duration / c.period_s for c in mission.components if getattr(c, "period_s", None))
    return duration / mission.max_step_s * step + cycles * INTERPRETED_CYCLE_S + \
        duration / mission.telemetry_dt_s * INTERPRETED_ROW_S


def say(message: str) -> None:
    """One line for the user on stderr (the run's own output stays on stdout)."""
    print(f"attsim: {message}", file=sys.stderr, flush=True)


_SAID: set = set()  # the interpreted runs' notices this process has given


def say_once(key, message: str, then: str) -> None:
    """:func:`say` ``message`` the first time this process says something of ``key``; ``then`` (shorter) each
    later time. A script running twenty missions on a cold machine said the same two lines twenty times."""
    if key in _SAID:
        say(then)
    else:
        _SAID.add(key)
        say(message)


class Auto(Backend):
    """Compiled when everything is on disk; else the quicker of compiling and running interpreted."""

    name = "auto"

    def __init__(self, mission, path: str):
        self.mission, self.path = mission, path
        self.chosen: Backend | None = None

    def _decide(self, needs) -> Backend:
        if self.chosen is None:
            absent = missing(needs)
            if not absent:
                self.chosen = Compiled()
            else:
                compile_s = compile_estimate(absent)
                interpreted_s = interpreted_estimate_s(self.mission, self.path)
                if interpreted_s < compile_s:
                    self.chosen = Interpreted()
                    started = background_compile()
                    say_once(frozenset(absent),
                             f"{len(absent)} compiled units this run needs are not on this machine yet: it runs "
                             f"interpreted (the same results; about {interpreted_s:.0f} s)"
                             + (" while every unit compiles in the background for the next runs (once per "
                                "machine; see 'attsim compile --status')" if started else ""),
                             f"runs interpreted again (about {interpreted_s:.0f} s): {len(absent)} of its units are "
                             "not compiled yet")
                else:
                    self.chosen = Compiled(progress=True, announced=True)
                    announce(absent)
            self.name = self.chosen.name
        return self.chosen

    def units(self, world, needed):
        return self._decide(loop_needs(world, needed)).units(world, needed)

    def loop(self, world, units):
        return self.chosen.loop(world, units)

    def pinned(self, world):
        return self.chosen.pinned(world)

    def plant_advance(self, integrator, world):
        return self._decide(advance_needs(integrator, world)).plant_advance(integrator, world)

    def compile_s(self) -> float:
        return 0.0 if self.chosen is None else self.chosen.compile_s()

    def close(self) -> None:
        if self.chosen is not None:
            self.chosen.close()

