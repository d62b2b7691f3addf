"""A mission's settings, checked whenever they are set: at construction and when a script changes them later.

Scripts shorten or reseed a built mission (``attsim run --duration`` does too). Without these checks
``mission.duration = 120`` is kept as an attribute the run never reads (the run goes on for the built duration),
and a bad ``mission.duration_s`` fails raw inside the run instead of by name.
"""

from __future__ import annotations


import numpy as np

from .._core.validate import one_of, positive_scalar, seed_int, unit_quaternion, vector3
from ..errors import InputError, caller_stacklevel
from ..inertia import check_rate
from ..plausibility import check_body_rate

# the most integration sub-steps and periodic cycles (each ~1 us compiled: hours) and telemetry rows (tens of GB) a
# mission may ask for
MAX_STEPS, MAX_ROWS = 1e10, 1e9


def _omega0(mission, value) -> np.ndarray:
    omega0 = vector3(value, "omega0")
    check_rate(mission.inertia_kg_m2, omega0, "omega0")
    # warns of deg/s given as rad/s, pointing at the user's line (Mission(...) or a setting)
    check_body_rate(mission.inertia_kg_m2, omega0, "omega0", stacklevel=caller_stacklevel() + 1)
    return omega0


def engine_methods() -> tuple:
    """The integrators a mission can use (computed on use: the registry imports the compiled integrators)."""
    from ..integrators import REGISTRY

    return REGISTRY.mission_ready()


def _method(mission, value) -> str:
    return one_of(value, "method", engine_methods())


# how a run may execute (``Mission.run(backend=...)``, ``attsim run --backend``): attsim.engine.choice picks
BACKEND_NAMES = ("auto", "compiled", "interpreted")

# attribute -> the check of the keyword that sets it
CHECKS = {
    "omega0_rad_s": _omega0,
    "q0": lambda mission, value: unit_quaternion(value, "q0"),
    "duration_s": lambda mission, value: positive_scalar(value, "duration"),
    "method": _method,
    "max_step_s": lambda mission, value: positive_scalar(value, "max_step"),
    "telemetry_dt_s": lambda mission, value: positive_scalar(value, "telemetry_dt"),
    "field_dt_s": lambda mission, value: positive_scalar(value, "field_dt"),
    "seed": lambda mission, value: seed_int(value),
}
# keywords held under another name: setting the keyword's own name afterwards would change nothing
HELD_AS = {"duration": "duration_s", "max_step": "max_step_s", "telemetry_dt": "telemetry_dt_s",
           "omega0": "omega0_rad_s", "inertia": "inertia_kg_m2", "field": "field_spec", "field_dt": "field_dt_s"}
_WORK = ("duration_s", "max_step_s", "telemetry_dt_s")


def checked(mission, name: str, value):
    """``value`` checked as the keyword that sets attribute ``name``; a keyword's own name is refused."""
    if name in HELD_AS:
        raise InputError(name, f"is read by the run as mission.{HELD_AS[name]}: set that (or pass {name}= to Mission)",
                         f"got mission.{name} = {value!r}")
    check = CHECKS.get(name)
    return value if check is None else check(mission, value)


def check_work(mission, name: str) -> None:
    """After ``name`` is set: the steps and rows over the duration stay bounded (the work and the disk)."""
    if name not in _WORK or not all(attribute in mission.__dict__ for attribute in _WORK):
        return
    for step, keyword, most in ((mission.max_step_s, "max_step", MAX_STEPS),
                                (mission.telemetry_dt_s, "telemetry_dt", MAX_ROWS)):
        if mission.duration_s / step > most:
            raise InputError(keyword, f"gives more than {most:.0e} steps over the duration",
                             f"duration {mission.duration_s:g} s / {keyword} {step:g} s")
