"""The set-up the Basilisk scenario peers share: one process with one task, the spacecraft hub about the Earth,
its initial orbit and attitude, modules and recorders added to the task, and the timed execution.

Basilisk's examples build their simulations line by line; the peers
(:mod:`tools.peers.basilisk_feedback_rw`, :mod:`tools.peers.basilisk_attitude_guidance`,
:mod:`tools.peers.basilisk_mtb_momentum`) keep the example's numbers, module
order, priorities and message links and call these functions for the steps
every example takes the same way. Like the peers it imports nothing from
attsim; Basilisk is imported inside the functions, so that importing this
module does not need it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

TASK, PROCESS = "simTask", "simProcess"  # the examples' names
SPACECRAFT_TAG = "bsk-Sat"


class Simulation(NamedTuple):
    """A simulation with one process and one task, as the examples make it."""

    sim: object  # SimulationBaseClass.SimBaseClass
    macros: object  # Basilisk.utilities.macros
    step_ns: int
    record_ns: int  # the recorders' interval


def new_simulation(dt_s: float, record_s: float) -> Simulation:
    """An empty simulation with the process ``simProcess`` holding the task ``simTask`` every ``dt_s``, Basilisk's
    log level at warnings; its recorders will sample every ``record_s``.

    Raises
    ------
    ValueError
        When ``record_s`` is not a positive multiple of ``dt_s`` (a recorder samples at task steps).
    """
    from Basilisk.architecture import bskLogging
    from Basilisk.utilities import SimulationBaseClass, macros

    bskLogging.setDefaultLogLevel(bskLogging.BSK_WARNING)
    sim = SimulationBaseClass.SimBaseClass()
    step_ns = macros.sec2nano(dt_s)
    record_ns = macros.sec2nano(record_s)
    if record_ns <= 0 or record_ns % step_ns:
        raise ValueError(f"record_s must be a positive multiple of {dt_s} s, got {record_s!r}")
    sim.CreateNewProcess(PROCESS).addTask(sim.CreateNewTask(TASK, step_ns))
    return Simulation(sim, macros, step_ns, record_ns)


def add(simulation: Simulation, model, tag: str | None = None, priority: int | None = None):
    """Add ``model`` to the task (with ``priority`` when given, else Basilisk's default), tagged ``tag`` when
    given; returns ``model``, so that a module is made, named and scheduled in one line."""
    if tag is not None:
        model.ModelTag = tag
    if priority is None:
        simulation.sim.AddModelToTask(TASK, model)
    else:
        simulation.sim.AddModelToTask(TASK, model, priority)
    return model


def spacecraft_about_earth(simulation: Simulation, mass_kg: float, inertia_kg_m2, priority: int | None = None):
    """``(spacecraft, gravity factory, earth)``: the hub ``bsk-Sat`` of ``mass_kg`` with its centre of mass at the
    body origin and the row-major ``inertia_kg_m2`` (9 values), added to the task, under the Earth's point-mass
    gravity (the central body). Keep all three alive while the simulation runs."""
    from Basilisk.simulation import spacecraft
    from Basilisk.utilities import simHelpers, simIncludeGravBody

    sc = spacecraft.Spacecraft()
    sc.ModelTag = SPACECRAFT_TAG
    sc.hub.mHub = mass_kg
    sc.hub.r_BcB_B = [[0.0], [0.0], [0.0]]
    sc.hub.IHubPntBc_B = simHelpers.np2EigenMatrix3d(list(inertia_kg_m2))
    add(simulation, sc, priority=priority)
    grav = simIncludeGravBody.gravBodyFactory()
    earth = grav.createEarth()
    earth.isCentralBody = True
    grav.addBodiesTo(sc)
    return sc, grav, earth


def set_initial_state(sc, mu_m3_s2: float, orbit, sigma_BN0, omega0_rad_s) -> None:
    """The hub's initial position and velocity from the classical elements ``orbit`` = (a m, e, i, raan, argument
    of perigee, true anomaly deg) about ``mu_m3_s2``, its MRPs ``sigma_BN0`` and body rate ``omega0_rad_s``."""
    from Basilisk.utilities import macros, orbitalMotion

    oe = orbitalMotion.ClassicElements()
    oe.a, oe.e, oe.i = orbit[0], orbit[1], orbit[2] * macros.D2R
    oe.Omega, oe.omega, oe.f = orbit[3] * macros.D2R, orbit[4] * macros.D2R, orbit[5] * macros.D2R
    rN, vN = orbitalMotion.elem2rv(mu_m3_s2, oe)
    sc.hub.r_CN_NInit = rN
    sc.hub.v_CN_NInit = vN
    sc.hub.sigma_BNInit = [[v] for v in sigma_BN0]
    sc.hub.omega_BN_BInit = [[v] for v in omega0_rad_s]


def record(simulation: Simulation, messages: dict) -> dict:
    """``{name: recorder}`` of each output message of ``messages`` (``{name: message}``), every ``record_ns``,
    added to the task in that order."""
    logs = {name: message.recorder(simulation.record_ns) for name, message in messages.items()}
    for recorder in logs.values():
        add(simulation, recorder)
    return logs


def record_wheels(simulation: Simulation, wheels, n_wheels: int) -> list:
    """The recorders of the first ``n_wheels`` wheels' own output messages (``rwOutMsgs``) of the
    reaction-wheel effector ``wheels``, added to the task."""
    return list(record(simulation, {k: wheels.rwOutMsgs[k] for k in range(n_wheels)}).values())


def applied_wheel_torques_Nm(wheel_recorders) -> np.ndarray:
    """(samples x wheels) of each wheel's ``u_current``: the torque it applied over the step that ended at the
    sample's time."""
    return np.column_stack([np.asarray(r.u_current, dtype=float) for r in wheel_recorders])


def ready(simulation: Simulation, duration_s: float) -> None:
    """Initialise the simulation and set it to stop after ``duration_s``."""
    simulation.sim.InitializeSimulation()
    simulation.sim.ConfigureStopTime(simulation.macros.sec2nano(duration_s))


def timed_run(build: Callable[[float], dict], record_s: float) -> tuple[float, dict]:
    """``(wall seconds of ExecuteSimulation alone, the built simulation)`` of ``build(record_s)``, a peer's
    ``build`` (a dict with the simulation at ``"sim"``); the build is not timed."""
    built = build(record_s)
    start = time.perf_counter()
    built["sim"].ExecuteSimulation()
    return time.perf_counter() - start, built
