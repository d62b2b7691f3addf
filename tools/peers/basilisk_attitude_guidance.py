"""Basilisk peer: the published example ``scenarioAttitudeGuidance``, default configuration (Hill pointing).

The simulation of Basilisk's ``examples/scenarioAttitudeGuidance.py``
(``run(show_plots, useAltBodyFrame=False)``), module for module, with the
same numbers, task and message links: a 750 kg spacecraft (inertia diag(900,
800, 600) kg m²) on a point-mass orbit (a = 10000 km, e = 0.1, i = 33.3,
Ω = 48.2, ω = 347.8, f = 85.3 deg), ``extForceTorque`` driven by
``mrpFeedback`` (K = 3.5, P = 30, no integral) tracking ``hillPoint``
through ``attTrackingError``, one 0.1 s task, 10 minutes. Left out: the plots
and ``vizSupport.enableUnityVisualization`` (which only streams to Vizard).
Besides the example's recorders it records the reference (``hillPoint``'s
output). Like the other peers it imports nothing from attsim.

:func:`build` makes the simulation, initialised and ready to execute, with
its recorders every ``record_s`` (the example's: 6 s, 100 intervals over
10 min); :func:`run` executes it and collects the logs; :func:`timed_run`
times ``ExecuteSimulation`` alone.
"""

from __future__ import annotations

import numpy as np

from . import basilisk_setup as setup
from .basilisk_peer import available, version

__all__ = ["available", "version", "build", "run", "timed_run", "EXAMPLE_RECORD_S", "DT_S", "DURATION_S", "ORBIT",
           "SIGMA_BN0", "OMEGA0_RAD_S", "INERTIA_KG_M2", "K_NM", "P_NMS"]

DT_S = 0.1
DURATION_S = 600.0
EXAMPLE_RECORD_S = 6.0  # simHelpers.samplingTime(10 min, 0.1 s, numDataPoints=100)
# a (m), e, i, raan, argument of perigee, true anomaly (deg)
ORBIT = (10000000.0, 0.1, 33.3, 48.2, 347.8, 85.3)
SIGMA_BN0 = (0.1, 0.2, -0.3)
OMEGA0_RAD_S = (0.001, -0.01, 0.03)
INERTIA_KG_M2 = (900.0, 0.0, 0.0, 0.0, 800.0, 0.0, 0.0, 0.0, 600.0)
K_NM, P_NMS = 3.5, 30.0


def build(record_s: float = EXAMPLE_RECORD_S) -> dict:
    """The example's simulation, initialised, with its recorders every ``record_s`` (a multiple of 0.1 s)."""
    from Basilisk.architecture import messaging
    from Basilisk.fswAlgorithms import attTrackingError, hillPoint, mrpFeedback
    from Basilisk.simulation import extForceTorque, simpleNav

    simulation = setup.new_simulation(DT_S, record_s)
    sc, grav, earth = setup.spacecraft_about_earth(simulation, 750.0, INERTIA_KG_M2)
    setup.set_initial_state(sc, earth.mu, ORBIT, SIGMA_BN0, OMEGA0_RAD_S)

    torque = extForceTorque.ExtForceTorque()
    torque.ModelTag = "externalDisturbance"
    sc.addDynamicEffector(torque)
    setup.add(simulation, torque)

    nav = setup.add(simulation, simpleNav.SimpleNav(), "SimpleNavigation")
    nav.scStateInMsg.subscribeTo(sc.scStateOutMsg)

    guidance = hillPoint.hillPoint()
    guidance.ModelTag = "hillPoint"
    guidance.transNavInMsg.subscribeTo(nav.transOutMsg)
    planet_msg = messaging.EphemerisMsg().write(messaging.EphemerisMsgPayload())  # the Earth at rest at the origin
    guidance.celBodyInMsg.subscribeTo(planet_msg)
    setup.add(simulation, guidance)

    error = setup.add(simulation, attTrackingError.attTrackingError(), "attErrorInertial3D")
    error.attRefInMsg.subscribeTo(guidance.attRefOutMsg)
    error.attNavInMsg.subscribeTo(nav.attOutMsg)

    control = setup.add(simulation, mrpFeedback.mrpFeedback(), "mrpFeedback")
    control.guidInMsg.subscribeTo(error.attGuidOutMsg)
    control.K = K_NM
    control.Ki = -1.0
    control.P = P_NMS
    control.integralLimit = 2. / control.Ki * 0.1
    torque.cmdTorqueInMsg.subscribeTo(control.cmdTorqueOutMsg)

    logs = setup.record(simulation, {"torque": control.cmdTorqueOutMsg, "error": error.attGuidOutMsg,
                                     "att": nav.attOutMsg, "trans": nav.transOutMsg, "ref": guidance.attRefOutMsg})

    vehicle_msg = messaging.VehicleConfigMsg().write(messaging.VehicleConfigMsgPayload(ISCPntB_B=list(INERTIA_KG_M2)))
    control.vehConfigInMsg.subscribeTo(vehicle_msg)

    setup.ready(simulation, DURATION_S)
    keep = [sc, grav, earth, torque, nav, guidance, planet_msg, error, control, vehicle_msg]
    return {"sim": simulation.sim, "logs": logs, "keep": keep, "macros": simulation.macros,
            "mu_m3_s2": float(earth.mu)}


def timed_run(record_s: float = EXAMPLE_RECORD_S) -> tuple[float, dict]:
    """``(wall seconds of ExecuteSimulation alone, the built simulation)``; the build is not timed."""
    return setup.timed_run(build, record_s)


def run(record_s: float = EXAMPLE_RECORD_S) -> dict:
    """Execute the example and collect its logs: ``t_s``; the body's ``sigma_BN`` and ``omega_BN_B`` (simpleNav,
    no noise); ``r_N``, ``v_N``; the reference ``sigma_RN``, ``omega_RN_N``, ``domega_RN_N`` (hillPoint); the
    errors ``sigma_BR``, ``omega_BR_B``; ``torque_Nm`` (mrpFeedback's request, what extForceTorque applies)."""
    wall_s, built = timed_run(record_s)
    logs, macros = built["logs"], built["macros"]
    return {
        "wall_s": wall_s, "mu_m3_s2": built["mu_m3_s2"],
        "t_s": np.asarray(logs["error"].times(), dtype=np.int64) * macros.NANO2SEC,
        "sigma_BN": np.asarray(logs["att"].sigma_BN, dtype=float),
        "omega_BN_B": np.asarray(logs["att"].omega_BN_B, dtype=float),
        "r_N": np.asarray(logs["trans"].r_BN_N, dtype=float), "v_N": np.asarray(logs["trans"].v_BN_N, dtype=float),
        "sigma_RN": np.asarray(logs["ref"].sigma_RN, dtype=float),
        "omega_RN_N": np.asarray(logs["ref"].omega_RN_N, dtype=float),
        "domega_RN_N": np.asarray(logs["ref"].domega_RN_N, dtype=float),
        "sigma_BR": np.asarray(logs["error"].sigma_BR, dtype=float),
        "omega_BR_B": np.asarray(logs["error"].omega_BR_B, dtype=float),
        "torque_Nm": np.asarray(logs["torque"].torqueRequestBody, dtype=float),
    }
