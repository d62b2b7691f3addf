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

import numpy as np

from . import basilisk_inertial_feedback as inertial_feedback
from . import basilisk_setup as setup
from .basilisk_peer import available, version

__all__ = ["available", "version", "build", "run", "timed_run", "EXAMPLE_RECORD_S", "DT_S", "DURATION_S", "ORBIT",
           "SIGMA_BN0", "OMEGA0_RAD_S", "INERTIA_KG_M2", "K_NM", "P_NMS"]

DT_S = 0.1
DURATION_S = 600.0
EXAMPLE_RECORD_S = 6.0  # simHelpers.samplingTime(10 min, 0.1 s, numDataPoints=100)
# a (m), e, i, raan, argument of perigee, true anomaly (deg)
ORBIT = (10000000.0, 0.01, 33.3, 48.2, 347.8, 85.3)
SIGMA_BN0 = (0.1, 0.2, -0.3)
OMEGA0_RAD_S = (0.001, -0.01, 0.03)
INERTIA_KG_M2 = (900.0, 0.0, 0.0, 0.0, 800.0, 0.0, 0.0, 0.0, 600.0)
K_NM, P_NMS = 3.5, 30.0


def build(record_s: float = EXAMPLE_RECORD_S) -> dict:
    """The example's simulation, initialised, with its recorders every ``record_s`` (a multiple of 0.1 s)."""
    from Basilisk.architecture import messaging
    from Basilisk.fswAlgorithms import rwMotorTorque
    from Basilisk.simulation import reactionWheelStateEffector, simpleNav
    from Basilisk.utilities import simIncludeRW

    simulation = setup.new_simulation(DT_S, record_s)
    sc, grav, earth = setup.spacecraft_about_earth(simulation, 750.0, INERTIA_KG_M2, priority=1)

    factory = simIncludeRW.rwFactory()
    factory.create("Honeywell_HR16", [1, 0, 0], maxMomentum=50., Omega=100., RWModel=messaging.BalancedWheels)
    factory.create("Honeywell_HR16", [0, 1, 0], maxMomentum=50., Omega=200., RWModel=messaging.BalancedWheels)
    factory.create("Honeywell_HR16", [0, 0, 1], maxMomentum=50., Omega=300., rWB_B=[0.5, 0.5, 0.5],
                   RWModel=messaging.BalancedWheels)
    wheels = reactionWheelStateEffector.ReactionWheelStateEffector()
    wheels.ModelTag = "RW_cluster"
    factory.addToSpacecraft(wheels.ModelTag, wheels, sc)
    setup.add(simulation, wheels, priority=2)

    nav = setup.add(simulation, simpleNav.SimpleNav(), "SimpleNavigation")
    chain = inertial_feedback.add(simulation, K_NM, P_NMS)
    guidance, error, control = chain
    allocation = setup.add(simulation, rwMotorTorque.rwMotorTorque(), "rwMotorTorque")
    allocation.controlAxes_B = [1, 0, 0, 0, 1, 0, 0, 0, 1]

    logs = setup.record(simulation, {"motor": allocation.rwMotorTorqueOutMsg, "error": error.attGuidOutMsg,
                                     "trans": nav.transOutMsg, "speeds": wheels.rwSpeedOutMsg})
    logs["wheels"] = setup.record_wheels(simulation, wheels, factory.getNumOfDevices())

    vehicle_msg = messaging.VehicleConfigMsg().write(messaging.VehicleConfigMsgPayload(ISCPntB_B=list(INERTIA_KG_M2)))
    rw_params_msg = factory.getConfigMessage()

    setup.set_initial_state(sc, earth.mu, ORBIT, SIGMA_BN0, OMEGA0_RAD_S)

    inertial_feedback.link(chain, sc, nav, wheels, vehicle_msg, rw_params_msg)
    allocation.rwParamsInMsg.subscribeTo(rw_params_msg)
    allocation.vehControlInMsg.subscribeTo(control.cmdTorqueOutMsg)
    wheels.rwMotorCmdInMsg.subscribeTo(allocation.rwMotorTorqueOutMsg)

    setup.ready(simulation, DURATION_S)
    keep = [sc, grav, earth, factory, wheels, nav, guidance, error, control, allocation, vehicle_msg, rw_params_msg]
    return {"sim": simulation.sim, "logs": logs, "keep": keep, "macros": simulation.macros}


def timed_run(record_s: float = EXAMPLE_RECORD_S) -> tuple[float, dict]:
    """``(wall seconds of ExecuteSimulation alone, the built simulation)``; the build is not timed."""
    return setup.timed_run(build, record_s)


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
        "motor_applied_Nm": setup.applied_wheel_torques_Nm(logs["wheels"]),
    }
