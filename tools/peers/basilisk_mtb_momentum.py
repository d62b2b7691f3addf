"""Basilisk peer: the published example ``scenarioMtbMomentumManagementSimple``.

The simulation of Basilisk's ``examples/scenarioMtbMomentumManagementSimple.py``
(``run(show_plots)``), module for module, with the same numbers, task,
priorities and message links: a 10 kg spacecraft (hub inertia diag(0.02,
0.1256, 0.1256)/3 kg m²) on a circular 6778.14 km orbit (i = 45, Ω = 60 deg)
in Basilisk's WMM field (epoch 2019 June 27, 10:23 UTC), four Blue Canyon
RWP015 wheels (``Omega_max`` 5000 rpm), a three-axis magnetometer without
noise and four torque bars (``GtMatrix_B`` with a fourth bar at 45 deg in the
x-y plane, 0.1 A m² each). ``inertial3D`` -> ``attTrackingError`` ->
``mrpFeedback`` (K = 1e-4, P = 2e-3, no integral) -> ``mtbFeedforward`` ->
``rwMotorTorque`` -> ``rwNullSpace`` (gain 3e-7, 1000 rpm each) drives the
wheels; ``mtbMomentumManagementSimple`` (Kp = 0.003) -> ``torque2Dipole`` ->
``dipoleMapping`` drives the bars; one 0.5 s task, 2 hours. Left out: the
plots and ``vizSupport.enableUnityVisualization`` (which only streams to
Vizard). Like the other peers it imports nothing from attsim.

The WMM coefficients are Basilisk's support data
(``supportData/MagneticField/WMM2025.COF``), found by its own
``dataFetcher.get_path`` (a download on first use; set
``BSK_SUPPORT_DATA_CACHE`` to a directory holding that file to run offline).

:func:`build` makes the simulation, initialised and ready to execute, with
its recorders every ``record_s`` (the example's: 36 s, 200 points over
2 hours); :func:`run` executes it and collects the logs; :func:`timed_run`
times ``ExecuteSimulation`` alone.
"""

from __future__ import annotations

import numpy as np

from . import basilisk_inertial_feedback as inertial_feedback
from . import basilisk_setup as setup
from .basilisk_peer import available, version

__all__ = ["available", "version", "build", "run", "timed_run", "EXAMPLE_RECORD_S", "DT_S", "DURATION_S", "ORBIT",
           "EPOCH", "SIGMA_BN0", "OMEGA0_RAD_S", "INERTIA_KG_M2", "BETA_DEG", "GT_MATRIX_B", "MAX_DIPOLE_AM2",
           "STEERING_MATRIX"]

DT_S = 0.5
DURATION_S = 7200.0
EXAMPLE_RECORD_S = 36.0  # simHelpers.samplingTime(120 min, 0.5 s, numDataPoints=200)
# a (m), e, i, raan, argument of perigee, true anomaly (deg)
ORBIT = (6778.14 * 1000.0, 0.0, 45.0, 60.0, 0.0, 0.0)
EPOCH = "2019 June 27, 10:23:0.0 (UTC)"
SIGMA_BN0 = (0.1, 0.2, -0.3)
OMEGA0_RAD_S = (0.001, -0.01, 0.03)
INERTIA_KG_M2 = (0.02 / 3, 0.0, 0.0, 0.0, 0.1256 / 3, 0.0, 0.0, 0.0, 0.1256 / 3)
BETA_DEG = 52.0
WHEEL_MAX_SPEED_RPM = 5000.0
NULL_SPACE_GAIN = 0.0000003
WHEEL_SPEED_TARGET_RPM = 1000.0
K_NM, P_NMS = 0.0001, 0.002
MOMENTUM_GAIN_PER_S = 0.003
# row major torque bar alignments (the bars' axes are the columns), and the example's steering matrix (its inverse)
GT_MATRIX_B = (1., 0., 0., 0.70710678,
               0., 1., 0., 0.70710678,
               0., 0., 1., 0.)
MAX_DIPOLE_AM2 = 0.1
STEERING_MATRIX = (0.75, -0.25, 0.,
                   -0.25, 0.75, 0.,
                   0., 0., 1.,
                   0.35355339, 0.35355339, 0.)


def wheel_axes() -> np.ndarray:
    """The example's ``Gs`` (3 x 4): the wheels' spin axes as columns."""
    beta = BETA_DEG * np.pi / 180.
    return np.array([[0., 0., np.cos(beta), -np.cos(beta)],
                     [np.cos(beta), np.sin(beta), -np.sin(beta), -np.sin(beta)],
                     [np.sin(beta), -np.cos(beta), 0., 0.]])


def build(record_s: float = EXAMPLE_RECORD_S) -> dict:
    """The example's simulation, initialised, with its recorders every ``record_s`` (a multiple of 0.5 s)."""
    from Basilisk.architecture import messaging
    from Basilisk.fswAlgorithms import (dipoleMapping, mtbFeedforward, mtbMomentumManagementSimple, rwMotorTorque,
                                        rwNullSpace, tamComm, torque2Dipole)
    from Basilisk.simulation import MtbEffector, magneticFieldWMM, magnetometer, reactionWheelStateEffector, simpleNav
    from Basilisk.utilities import macros, simHelpers, simIncludeRW
    from Basilisk.utilities.supportDataTools.dataFetcher import DataFile, get_path

    simulation = setup.new_simulation(DT_S, record_s)
    sc, grav, earth = setup.spacecraft_about_earth(simulation, 10.0, INERTIA_KG_M2, priority=1)

    factory = simIncludeRW.rwFactory()
    Gs = wheel_axes()
    rws = [factory.create("BCT_RWP015", Gs[:, k], Omega_max=WHEEL_MAX_SPEED_RPM, RWModel=messaging.BalancedWheels,
                          useRWfriction=False) for k in range(4)]
    n_rw = factory.getNumOfDevices()
    wheels = reactionWheelStateEffector.ReactionWheelStateEffector()
    wheels.ModelTag = "RW_cluster"
    factory.addToSpacecraft(sc.ModelTag, wheels, sc)
    setup.add(simulation, wheels, priority=2)

    nav = setup.add(simulation, simpleNav.SimpleNav(), "SimpleNavigation")

    field = magneticFieldWMM.MagneticFieldWMM()
    field.ModelTag = "WMM"
    field.configureWMMFile(str(get_path(DataFile.MagneticFieldData.WMM)))
    epoch_msg = simHelpers.timeStringToGregorianUTCMsg(EPOCH)
    field.epochInMsg.subscribeTo(epoch_msg)
    field.addSpacecraftToModel(sc.scStateOutMsg)
    setup.add(simulation, field)

    mtb = MtbEffector.MtbEffector()
    mtb.ModelTag = "MtbEff"
    sc.addDynamicEffector(mtb)
    setup.add(simulation, mtb)

    chain = inertial_feedback.add(simulation, K_NM, P_NMS)
    guidance, error, control = chain

    tam = setup.add(simulation, magnetometer.Magnetometer(), "TAM_sensor")
    tam.scaleFactor = 1.0
    tam.senNoiseStd = [0.0, 0.0, 0.0]
    tam_comm = setup.add(simulation, tamComm.tamComm(), "tamComm")
    tam_comm.dcm_BS = [1., 0., 0., 0., 1., 0., 0., 0., 1.]

    momentum = setup.add(simulation, mtbMomentumManagementSimple.mtbMomentumManagementSimple(),
                         "mtbMomentumManagementSimple")
    momentum.Kp = MOMENTUM_GAIN_PER_S
    to_dipole = setup.add(simulation, torque2Dipole.torque2Dipole(), "torque2Dipole")

    mtb_config = messaging.MTBArrayConfigMsgPayload()
    mtb_config.numMTB = 4
    mtb_config.GtMatrix_B = list(GT_MATRIX_B)
    mtb_config.maxMtbDipoles = [MAX_DIPOLE_AM2] * mtb_config.numMTB
    mtb_params_msg = messaging.MTBArrayConfigMsg().write(mtb_config)

    mapping = setup.add(simulation, dipoleMapping.dipoleMapping(), "dipoelMapping")  # sic, the example's tag
    mapping.steeringMatrix = list(STEERING_MATRIX)
    feedforward = setup.add(simulation, mtbFeedforward.mtbFeedforward(), "mtbFeedforward")
    allocation = setup.add(simulation, rwMotorTorque.rwMotorTorque(), "rwMotorTorque")
    allocation.controlAxes_B = [1, 0, 0, 0, 1, 0, 0, 0, 1]
    null_space = setup.add(simulation, rwNullSpace.rwNullSpace(), "rwNullSpace")
    null_space.OmegaGain = NULL_SPACE_GAIN

    constellation = messaging.RWConstellationMsgPayload(numRW=n_rw, reactionWheels=[
        messaging.RWConfigElementMsgPayload(gsHat_B=Gs[:, i], Js=rw.Js, uMax=rw.u_max) for i, rw in enumerate(rws)])
    constellation_msg = messaging.RWConstellationMsg().write(constellation)
    desired = messaging.RWSpeedMsgPayload(wheelSpeeds=[WHEEL_SPEED_TARGET_RPM * macros.rpm2radsec] * n_rw)
    desired_msg = messaging.RWSpeedMsg().write(desired)

    logs = setup.record(simulation, {
        "motor": allocation.rwMotorTorqueOutMsg, "final": null_space.rwMotorTorqueOutMsg, "error": error.attGuidOutMsg,
        "field": field.envOutMsgs[0], "tam": tam_comm.tamOutMsg, "dipoles": mapping.dipoleRequestMtbOutMsg,
        "control": control.cmdTorqueOutMsg, "speeds": wheels.rwSpeedOutMsg})
    logs["wheels"] = setup.record_wheels(simulation, wheels, n_rw)

    vehicle_msg = messaging.VehicleConfigMsg().write(messaging.VehicleConfigMsgPayload(ISCPntB_B=list(INERTIA_KG_M2)))
    rw_params_msg = factory.getConfigMessage()

    setup.set_initial_state(sc, earth.mu, ORBIT, SIGMA_BN0, OMEGA0_RAD_S)

    inertial_feedback.link(chain, sc, nav, wheels, vehicle_msg, rw_params_msg)
    tam.stateInMsg.subscribeTo(sc.scStateOutMsg)
    tam.magInMsg.subscribeTo(field.envOutMsgs[0])
    tam_comm.tamInMsg.subscribeTo(tam.tamDataOutMsg)
    momentum.rwParamsInMsg.subscribeTo(rw_params_msg)
    momentum.rwSpeedsInMsg.subscribeTo(wheels.rwSpeedOutMsg)
    to_dipole.tauRequestInMsg.subscribeTo(momentum.tauMtbRequestOutMsg)
    to_dipole.tamSensorBodyInMsg.subscribeTo(tam_comm.tamOutMsg)
    mapping.dipoleRequestBodyInMsg.subscribeTo(to_dipole.dipoleRequestOutMsg)
    mapping.mtbArrayConfigParamsInMsg.subscribeTo(mtb_params_msg)
    feedforward.vehControlInMsg.subscribeTo(control.cmdTorqueOutMsg)
    feedforward.dipoleRequestMtbInMsg.subscribeTo(mapping.dipoleRequestMtbOutMsg)
    feedforward.tamSensorBodyInMsg.subscribeTo(tam_comm.tamOutMsg)
    feedforward.mtbArrayConfigParamsInMsg.subscribeTo(mtb_params_msg)
    allocation.rwParamsInMsg.subscribeTo(rw_params_msg)
    allocation.vehControlInMsg.subscribeTo(feedforward.vehControlOutMsg)
    null_space.rwMotorTorqueInMsg.subscribeTo(allocation.rwMotorTorqueOutMsg)
    null_space.rwSpeedsInMsg.subscribeTo(wheels.rwSpeedOutMsg)
    null_space.rwConfigInMsg.subscribeTo(constellation_msg)
    null_space.rwDesiredSpeedsInMsg.subscribeTo(desired_msg)
    wheels.rwMotorCmdInMsg.subscribeTo(null_space.rwMotorTorqueOutMsg)
    mtb.mtbCmdInMsg.subscribeTo(mapping.dipoleRequestMtbOutMsg)
    mtb.mtbParamsInMsg.subscribeTo(mtb_params_msg)
    mtb.magInMsg.subscribeTo(field.envOutMsgs[0])

    setup.ready(simulation, DURATION_S)
    keep = [sc, grav, earth, factory, rws, wheels, nav, field, epoch_msg, mtb, guidance, error, control, tam, tam_comm,
            momentum, to_dipole, mtb_params_msg, mapping, feedforward, allocation, null_space, constellation_msg,
            desired_msg, vehicle_msg, rw_params_msg]
    return {"sim": simulation.sim, "logs": logs, "keep": keep, "macros": simulation.macros, "n_rw": n_rw,
            "wheel_inertia_kg_m2": [rw.Js for rw in rws], "wheel_max_torque_Nm": [rw.u_max for rw in rws],
            "wheel_max_speed_rad_s": [rw.Omega_max for rw in rws], "mu_m3_s2": earth.mu}


def timed_run(record_s: float = EXAMPLE_RECORD_S) -> tuple[float, dict]:
    """``(wall seconds of ExecuteSimulation alone, the built simulation)``; the build is not timed."""
    return setup.timed_run(build, record_s)


def run(record_s: float = EXAMPLE_RECORD_S) -> dict:
    """Execute the example and collect its logs: ``t_s``; ``sigma_BN`` (``σ_BR`` with the inertial reference),
    ``omega_rad_s``; ``wheel_speed_rad_s``; ``motor_request_Nm`` (``rwMotorTorque``'s output), ``motor_final_Nm``
    (``rwNullSpace``'s, what the wheels are commanded) and ``motor_applied_Nm`` (each wheel's ``u_current``: the
    torque it applied over the step that ended at ``t``); ``control_Nm`` (``mrpFeedback``'s torque request);
    ``dipoles_Am2`` (``dipoleMapping``'s bar commands, what ``MtbEffector`` applies); ``field_N_T``
    (``magneticFieldWMM``'s field, inertial) and ``tam_B_T`` (``tamComm``'s, body axes); the wheels' figures
    ``wheel_inertia_kg_m2``, ``wheel_max_torque_Nm``, ``wheel_max_speed_rad_s`` and Earth's ``mu_m3_s2``."""
    wall_s, built = timed_run(record_s)
    logs, n = built["logs"], built["n_rw"]
    return {
        "wall_s": wall_s,
        # ns / 1e9, correctly rounded: 254.5 s is 254.5 (ns * NANO2SEC gives 254.50000000000003, which a held
        # field history would take for a sample after 254.5 s)
        "t_s": np.asarray(logs["error"].times(), dtype=np.int64) / 1e9,
        "sigma_BN": np.asarray(logs["error"].sigma_BR, dtype=float),
        "omega_rad_s": np.asarray(logs["error"].omega_BR_B, dtype=float),
        "wheel_speed_rad_s": np.asarray(logs["speeds"].wheelSpeeds, dtype=float)[:, :n],
        "motor_request_Nm": np.asarray(logs["motor"].motorTorque, dtype=float)[:, :n],
        "motor_final_Nm": np.asarray(logs["final"].motorTorque, dtype=float)[:, :n],
        "motor_applied_Nm": setup.applied_wheel_torques_Nm(logs["wheels"]),
        "control_Nm": np.asarray(logs["control"].torqueRequestBody, dtype=float),
        "dipoles_Am2": np.asarray(logs["dipoles"].mtbDipoleCmds, dtype=float)[:, :4],
        "field_N_T": np.asarray(logs["field"].magField_N, dtype=float),
        "tam_B_T": np.asarray(logs["tam"].tam_B, dtype=float),
        **{key: np.asarray(built[key], dtype=float) for key in ("wheel_inertia_kg_m2", "wheel_max_torque_Nm",
                                                                "wheel_max_speed_rad_s")},
        "mu_m3_s2": float(built["mu_m3_s2"]),
    }
