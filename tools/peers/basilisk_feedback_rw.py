"""Basilisk peer: the published example ``scenarioAttitudeFeedbackRW``, default configuration.

The simulation of Basilisk's ``examples/scenarioAttitudeFeedbackRW.py``
(``run(show_plots, useJitterSimple=False, useRWVoltageIO=False)``; the bsk
wheel does not ship the examples), module for module, with the same numbers,
task, priorities and message links, and the example's own recorders. Left
out: the plots and ``vizSupport.enableUnityVisualization`` (which only
streams to Vizard), and the example's unused second wheel-configuration
message. Like the other peers it imports nothing from attsim.

:func:`build` makes the simulation, initialised and ready to execute, with
its recorders every ``record_s`` (the example's: 6 s, 100 intervals over
10 min); :func:`run` executes it and collects the logs; :func:`timed_run`
times ``ExecuteSimulation`` alone.
"""

from __future__ import annotations

import time

import numpy as np

from .basilisk_peer import available, version

__all__ = ["available", "version", "build", "run", "timed_run", "EXAMPLE_RECORD_S", "DT_S", "DURATION_S"]

DT_S = 0.1
DURATION_S = 600.0
EXAMPLE_RECORD_S = 6.0  # simHelpers.samplingTime(10 min, 0.1 s, numDataPoints=100)


def build(record_s: float = EXAMPLE_RECORD_S) -> dict:
    """The example's simulation, initialised, with its recorders every ``record_s`` (a multiple of 0.1 s)."""
    from Basilisk.architecture import bskLogging, messaging
    from Basilisk.fswAlgorithms import attTrackingError, inertial3D, mrpFeedback, rwMotorTorque
    from Basilisk.simulation import reactionWheelStateEffector, simpleNav, spacecraft
    from Basilisk.utilities import (SimulationBaseClass, macros, orbitalMotion, simHelpers, simIncludeGravBody,
                                    simIncludeRW)

    bskLogging.setDefaultLogLevel(bskLogging.BSK_WARNING)
    task, process = "simTask", "simProcess"
    sim = SimulationBaseClass.SimBaseClass()
    step_ns = macros.sec2nano(DT_S)
    record_ns = macros.sec2nano(record_s)
    if record_ns <= 0 or record_ns % step_ns:
        raise ValueError(f"record_s must be a positive multiple of {DT_S} s, got {record_s!r}")
    sim.CreateNewProcess(process).addTask(sim.CreateNewTask(task, step_ns))

    sc = spacecraft.Spacecraft()
    sc.ModelTag = "bsk-Sat"
    inertia = [900.0, 0.0, 0.0, 0.0, 800.0, 0.0, 0.0, 0.0, 600.0]
    sc.hub.mHub = 750.0
    sc.hub.r_BcB_B = [[0.0], [0.0], [0.0]]
    sc.hub.IHubPntBc_B = simHelpers.np2EigenMatrix3d(inertia)
    sim.AddModelToTask(task, sc, 1)

    grav = simIncludeGravBody.gravBodyFactory()
    earth = grav.createEarth()
    earth.isCentralBody = True
    grav.addBodiesTo(sc)

    factory = simIncludeRW.rwFactory()
    factory.create("Honeywell_HR16", [1, 0, 0], maxMomentum=50., Omega=100., RWModel=messaging.BalancedWheels)
    factory.create("Honeywell_HR16", [0, 1, 0], maxMomentum=50., Omega=200., RWModel=messaging.BalancedWheels)
    factory.create("Honeywell_HR16", [0, 0, 1], maxMomentum=50., Omega=300., rWB_B=[0.5, 0.5, 0.5],
                   RWModel=messaging.BalancedWheels)
    wheels = reactionWheelStateEffector.ReactionWheelStateEffector()
    wheels.ModelTag = "RW_cluster"
    factory.addToSpacecraft(wheels.ModelTag, wheels, sc)
    sim.AddModelToTask(task, wheels, 2)

    nav = simpleNav.SimpleNav()
    nav.ModelTag = "SimpleNavigation"
    sim.AddModelToTask(task, nav)
    guidance = inertial3D.inertial3D()
    guidance.ModelTag = "inertial3D"
    sim.AddModelToTask(task, guidance)
    guidance.sigma_R0N = [0., 0., 0.]
    error = attTrackingError.attTrackingError()
    error.ModelTag = "attErrorInertial3D"
    sim.AddModelToTask(task, error)
    control = mrpFeedback.mrpFeedback()
    control.ModelTag = "mrpFeedback"
    sim.AddModelToTask(task, control)
    control.K = 3.5
    control.Ki = -1
    control.P = 30.0
    control.integralLimit = 2. / control.Ki * 0.1
    allocation = rwMotorTorque.rwMotorTorque()
    allocation.ModelTag = "rwMotorTorque"
    sim.AddModelToTask(task, allocation)
    allocation.controlAxes_B = [1, 0, 0, 0, 1, 0, 0, 0, 1]

    logs = {"motor": allocation.rwMotorTorqueOutMsg.recorder(record_ns),
            "error": error.attGuidOutMsg.recorder(record_ns), "trans": nav.transOutMsg.recorder(record_ns),
            "speeds": wheels.rwSpeedOutMsg.recorder(record_ns)}
    for name in ("motor", "error", "trans", "speeds"):
        sim.AddModelToTask(task, logs[name])
    logs["wheels"] = [wheels.rwOutMsgs[k].recorder(record_ns) for k in range(factory.getNumOfDevices())]
    for recorder in logs["wheels"]:
        sim.AddModelToTask(task, recorder)

    vehicle_msg = messaging.VehicleConfigMsg().write(messaging.VehicleConfigMsgPayload(ISCPntB_B=inertia))
    rw_params_msg = factory.getConfigMessage()

    oe = orbitalMotion.ClassicElements()
    oe.a, oe.e, oe.i = 10000000.0, 0.01, 33.3 * macros.D2R
    oe.Omega, oe.omega, oe.f = 48.2 * macros.D2R, 347.8 * macros.D2R, 85.3 * macros.D2R
    rN, vN = orbitalMotion.elem2rv(earth.mu, oe)
    sc.hub.r_CN_NInit = rN
    sc.hub.v_CN_NInit = vN
    sc.hub.sigma_BNInit = [[0.1], [0.2], [-0.3]]
    sc.hub.omega_BN_BInit = [[0.001], [-0.01], [0.03]]

    nav.scStateInMsg.subscribeTo(sc.scStateOutMsg)
    error.attNavInMsg.subscribeTo(nav.attOutMsg)
    error.attRefInMsg.subscribeTo(guidance.attRefOutMsg)
    control.guidInMsg.subscribeTo(error.attGuidOutMsg)
    control.vehConfigInMsg.subscribeTo(vehicle_msg)
    control.rwParamsInMsg.subscribeTo(rw_params_msg)
    control.rwSpeedsInMsg.subscribeTo(wheels.rwSpeedOutMsg)
    allocation.rwParamsInMsg.subscribeTo(rw_params_msg)
    allocation.vehControlInMsg.subscribeTo(control.cmdTorqueOutMsg)
    wheels.rwMotorCmdInMsg.subscribeTo(allocation.rwMotorTorqueOutMsg)

    sim.InitializeSimulation()
    sim.ConfigureStopTime(macros.sec2nano(DURATION_S))
    keep = [sc, grav, earth, factory, wheels, nav, guidance, error, control, allocation, vehicle_msg, rw_params_msg]
    return {"sim": sim, "logs": logs, "keep": keep, "macros": macros}


def timed_run(record_s: float = EXAMPLE_RECORD_S) -> tuple[float, dict]:
    """``(wall seconds of ExecuteSimulation alone, the built simulation)``; the build is not timed."""
    built = build(record_s)
    start = time.perf_counter()
    built["sim"].ExecuteSimulation()
    return time.perf_counter() - start, built


def run(record_s: float = EXAMPLE_RECORD_S) -> dict:
    """Execute the example and collect its logs: ``t_s``, ``sigma_BN`` (``σ_BR`` with the inertial reference),
    ``omega_rad_s``, ``wheel_speed_rad_s``, ``motor_request_Nm`` (``rwMotorTorque``'s output) and
    ``motor_applied_Nm`` (each wheel's ``u_current``: the torque it applied over the step that ended at ``t``)."""
    wall_s, built = timed_run(record_s)
    logs, macros = built["logs"], built["macros"]
    n = len(logs["wheels"])
    return {
        "wall_s": wall_s,
        "t_s": np.asarray(logs["error"].times(), dtype=np.int64) * macros.NANO2SEC,
        "sigma_BN": np.asarray(logs["error"].sigma_BR, dtype=float),
        "omega_rad_s": np.asarray(logs["error"].omega_BR_B, dtype=float),
        "wheel_speed_rad_s": np.asarray(logs["speeds"].wheelSpeeds, dtype=float)[:, :n],
        "motor_request_Nm": np.asarray(logs["motor"].motorTorque, dtype=float)[:, :n],
        "motor_applied_Nm": np.column_stack([np.asarray(r.u_current, dtype=float) for r in logs["wheels"]]),
    }
