"""Basilisk peer: ``mrpFeedback`` driving ``extForceTorque`` in one task, in the order of Basilisk's examples.

The arrangement of ``examples/scenarioAttitudeGuidance.py`` without its
orbit and guidance: one task holding, in this order, the spacecraft hub,
``extForceTorque`` (its command read in its ``UpdateState``),
``simpleNav`` without noise, ``inertial3D``, ``attTrackingError`` and
``mrpFeedback`` (integral feedback off), all at the default priority. At
each step the hub integrates with the torque ``extForceTorque`` read one
step earlier, which ``mrpFeedback`` had written one step before that: the
torque decided at ``t`` acts over ``[t + dt, t + 2 dt]``, one control period
late (attsim: ``command_delay_s = dt``). No gravity, no translation. Imports
nothing from attsim.
"""

from __future__ import annotations

import numpy as np

from .basilisk_peer import _mrp_to_quat_wxyz, _quat_wxyz_to_mrp, available

__all__ = ["available", "run_mrp_to_body_torque"]


def run_mrp_to_body_torque(inertia_kg_m2, q0_wxyz, omega0_rad_s, target_q_wxyz, K: float, P: float, dt_s: float,
                           duration_s: float) -> dict:
    """Run and log every step: ``t_s``, ``q_wxyz`` (``q_IB``), ``omega_rad_s`` and ``torque_Nm`` (``mrpFeedback``'s
    output at ``t``, the torque decided then)."""
    from Basilisk.architecture import bskLogging, messaging
    from Basilisk.fswAlgorithms import attTrackingError, inertial3D, mrpFeedback
    from Basilisk.simulation import extForceTorque, simpleNav, spacecraft
    from Basilisk.utilities import SimulationBaseClass, macros

    bskLogging.setDefaultLogLevel(bskLogging.BSK_WARNING)
    sim = SimulationBaseClass.SimBaseClass()
    step_ns = macros.sec2nano(dt_s)
    sim.CreateNewProcess("process").addTask(sim.CreateNewTask("task", step_ns))
    inertia = np.asarray(inertia_kg_m2, dtype=float)
    sc = spacecraft.Spacecraft()
    sc.hub.mHub = 750.0
    sc.hub.IHubPntBc_B = inertia.tolist()
    sc.hub.sigma_BNInit = [[float(v)] for v in _quat_wxyz_to_mrp(q0_wxyz)]
    sc.hub.omega_BN_BInit = [[float(v)] for v in omega0_rad_s]
    sim.AddModelToTask("task", sc)
    torque = extForceTorque.ExtForceTorque()
    sc.addDynamicEffector(torque)
    sim.AddModelToTask("task", torque)
    nav = simpleNav.SimpleNav()
    sim.AddModelToTask("task", nav)
    nav.scStateInMsg.subscribeTo(sc.scStateOutMsg)
    guidance = inertial3D.inertial3D()
    guidance.sigma_R0N = _quat_wxyz_to_mrp(target_q_wxyz).tolist()
    sim.AddModelToTask("task", guidance)
    error = attTrackingError.attTrackingError()
    sim.AddModelToTask("task", error)
    error.attRefInMsg.subscribeTo(guidance.attRefOutMsg)
    error.attNavInMsg.subscribeTo(nav.attOutMsg)
    control = mrpFeedback.mrpFeedback()
    control.K, control.P, control.Ki = float(K), float(P), -1.0
    sim.AddModelToTask("task", control)
    control.guidInMsg.subscribeTo(error.attGuidOutMsg)
    vehicle_msg = messaging.VehicleConfigMsg().write(messaging.VehicleConfigMsgPayload(
        ISCPntB_B=inertia.reshape(9).tolist()))
    control.vehConfigInMsg.subscribeTo(vehicle_msg)
    torque.cmdTorqueInMsg.subscribeTo(control.cmdTorqueOutMsg)
    state_log = sc.scStateOutMsg.recorder(step_ns)
    torque_log = control.cmdTorqueOutMsg.recorder(step_ns)
    sim.AddModelToTask("task", state_log)
    sim.AddModelToTask("task", torque_log)
    sim.InitializeSimulation()
    sim.ConfigureStopTime(macros.sec2nano(duration_s))
    sim.ExecuteSimulation()
    sigma = np.asarray(state_log.sigma_BN, dtype=float)
    return {"t_s": np.asarray(state_log.times(), dtype=np.int64) * macros.NANO2SEC,
            "q_wxyz": _mrp_to_quat_wxyz(sigma, q_ref_wxyz=q0_wxyz),
            "omega_rad_s": np.asarray(state_log.omega_BN_B, dtype=float),
            "torque_Nm": np.asarray(torque_log.torqueRequestBody, dtype=float)}
