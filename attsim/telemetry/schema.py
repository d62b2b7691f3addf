"""Telemetry columns and their units, documented once (``docs/architecture.md``).

Column names carry the physical thing and the axis; the frame is named when
it is not body axes (``H_I_x``). Units are SI and listed here, not in the
column names.
"""

from __future__ import annotations

__all__ = ["TIME_INDEX", "QUATERNION_COLUMNS", "RATE_COLUMNS", "STATE_COLUMNS", "POINTING_COLUMNS",
           "ESTIMATOR_SUFFIXES", "ESTIMATION_ERROR", "WHEEL_SUFFIXES", "WHEEL_FRICTION_SUFFIXES",
           "WHEEL_JITTER_SUFFIXES", "BODY_TORQUE_SUFFIXES", "UNITS"]

TIME_INDEX = "t"
QUATERNION_COLUMNS = ("qw", "qx", "qy", "qz")
RATE_COLUMNS = ("wx", "wy", "wz")
STATE_COLUMNS = QUATERNION_COLUMNS + RATE_COLUMNS
# written by the mission's first pointing controller (attsim.guidance.pointing)
# an estimator's columns, each after its name and an underscore (attsim.estimation.mekf): the estimate q_IB, the bias
# (rad/s), the 3-sigma bounds of attitude (rad) and bias (rad/s), the NIS of the last cycle's star-tracker,
# magnetometer and Sun updates (NaN where none), and the gyro's true bias (rad/s, body axes through its nominal
# mounting)
ESTIMATOR_SUFFIXES = (("qw", "qx", "qy", "qz") + tuple(f"bias_{a}" for a in "xyz")
                      + tuple(f"sigma3_att_{a}" for a in "xyz") + tuple(f"sigma3_bias_{a}" for a in "xyz")
                      + ("nis_st", "nis_mag", "nis_sun") + tuple(f"bias_true_{a}" for a in "xyz"))
# the suffix of the quantity attsim derives from an estimator's columns and the truth: "<estimator>_err_deg", the angle
# between its attitude and the true attitude (attsim.analysis.estimation_error_deg; a Requirement may name it)
ESTIMATION_ERROR = "_err_deg"
# a reaction wheel's columns, each after its name and an underscore (attsim.actuators): its
# speed relative to the body, axial momentum, motor torque and the torque commanded (before the limits); the friction
# torque on it when it has friction; the rotor angle, the imbalance force on the body and the imbalance torque about
# the centre of mass when it has imbalance
WHEEL_SUFFIXES = ("speed", "h", "torque", "torque_cmd")
WHEEL_FRICTION_SUFFIXES = ("friction",)
WHEEL_JITTER_SUFFIXES = ("angle",) + tuple(f"jitter_F_{a}" for a in "xyz") + tuple(f"jitter_tau_{a}" for a in "xyz")
# a BodyTorque's columns, each after its name and an underscore (attsim.actuators): the torque it applies, then the
# torque commanded at that instant (decided by its controller: the applied one a command_delay_s later)
BODY_TORQUE_SUFFIXES = tuple(f"tau_{a}" for a in "xyz") + tuple(f"tau_decided_{a}" for a in "xyz")
POINTING_COLUMNS = ("q_ref_w", "q_ref_x", "q_ref_y", "q_ref_z", "att_err_deg", "att_err_x", "att_err_y", "att_err_z")

UNITS = {
    "t": "s, simulation time from the start of the run",
    "qw qx qy qz": "1, q_IB scalar first (rotates body vectors into the inertial frame)",
    "wx wy wz": "rad/s, body rate relative to inertial space, body axes",
    "H_x H_y H_z": "N m s, the body's angular momentum J w, body axes (not logged: attsim.analysis."
                   "angular_momentum_body; with wheels, attsim.analysis.total_momentum)",
    "H_I_x H_I_y H_I_z": "N m s, the body's angular momentum, inertial axes (not logged: attsim.analysis."
                         "angular_momentum_inertial, invariants)",
    "H_norm": "N m s, |H| (the same in every frame; not logged: attsim.analysis.invariants)",
    "T_rot": "J, rotational kinetic energy 1/2 w.J w (not logged: attsim.analysis.kinetic_energy, invariants)",
    "nutation": "rad, angle between the chosen body axis and H (not logged: attsim.analysis.nutation_angle)",
    "q_ref_w q_ref_x q_ref_y q_ref_z": "1, q_IR: the reference attitude of the pointing law running at that row (it "
                                       "changes where a ModeManager switches laws; NaN while none runs)",
    "mode": "1, a ModeManager's current mode: its index in the manager's modes= list (0 for the first)",
    "att_err_deg": "deg, angle of the rotation from the reference to the true attitude",
    "att_err_x att_err_y att_err_z": "rad, 2 vec(q_RB): the pointing error per body axis (small-angle)",
    "B_I_x B_I_y B_I_z": "T, the geomagnetic field, inertial axes (a mission with a field or an environment)",
    "lit": "1, 1 in sunlight, 0 in the Earth's shadow, between in the penumbra (a mission with an environment)",
    "tau_gg_x tau_gg_y tau_gg_z": "N m, the gravity-gradient torque, body axes (a mission with an environment)",
    "tau_aero_x tau_aero_y tau_aero_z": "N m, the aerodynamic torque on the faces, body axes (with an environment)",
    "tau_srp_x tau_srp_y tau_srp_z": "N m, the solar-radiation-pressure torque on the faces, body axes (with an "
                                     "environment)",
    "tau_res_x tau_res_y tau_res_z": "N m, the residual dipole's torque m_res x B, body axes (with an environment)",
    "<gyro>_x <gyro>_y <gyro>_z": "rad/s, a Gyro's measured rate, body axes through its nominal mounting",
    "<magnetometer>_x <magnetometer>_y <magnetometer>_z": "T, a Magnetometer's measured field, body axes",
    "<sun sensor>_px <sun sensor>_mx <sun sensor>_py <sun sensor>_my <sun sensor>_pz <sun sensor>_mz":
        "1, a SunSensor's detector outputs (cosine of the Sun's angle to each normal, 1 = full scale, 0 dark)",
    "<star tracker>_qw <star tracker>_qx <star tracker>_qy <star tracker>_qz":
        "1, a StarTracker's measured q_IB, scalar first (NaN while blinded)",
    "<horizon>_x <horizon>_y <horizon>_z": "1, a HorizonSensor's nadir unit vector, body axes",
    "<sensor>_true_<axis>": "the sensor's unit, the true value it measures at the same instant, body axes",
    "<sensor>_valid": "1, 1 when the sample has an output, 0 when not (a sensor that can lose its output: a star "
                      "tracker with an exclusion cone, a dropout or stuck fault)",
    "<estimator>_qw <estimator>_qx <estimator>_qy <estimator>_qz": "1, an MEKF's estimate of q_IB, scalar first",
    "<estimator>_bias_x <estimator>_bias_y <estimator>_bias_z": "rad/s, the MEKF's estimated gyro bias, body axes",
    "<estimator>_sigma3_att_x <estimator>_sigma3_att_y <estimator>_sigma3_att_z":
        "rad, the 3-sigma bound of the attitude error, per body axis",
    "<estimator>_sigma3_bias_x <estimator>_sigma3_bias_y <estimator>_sigma3_bias_z":
        "rad/s, the 3-sigma bound of the bias error, per body axis",
    "<estimator>_nis_st <estimator>_nis_mag <estimator>_nis_sun":
        "1, the normalised innovation squared of the cycle's star-tracker, magnetometer and Sun updates (NaN "
        "where none)",
    "<estimator>_bias_true_x <estimator>_bias_true_y <estimator>_bias_true_z":
        "rad/s, the gyro's true bias, body axes through its nominal mounting",
    "<schedule>_tau_x <schedule>_tau_y <schedule>_tau_z": "N m, a TorqueSchedule's held torque, body axes",
    "<body torque>_tau_x <body torque>_tau_y <body torque>_tau_z": "N m, the torque a BodyTorque applies, body axes",
    "<body torque>_tau_decided_x <body torque>_tau_decided_y <body torque>_tau_decided_z":
        "N m, the torque last commanded to a BodyTorque, body axes, as its controller decided it (before the "
        "controller's command_delay_s: what _tau_ applies that delay later; without a delay the same as _tau_; zero "
        "before the first command, as _tau_; a mode that stops the controller zeroes both)",
    "<magnetorquer>_m_x <magnetorquer>_m_y <magnetorquer>_m_z": "A m^2, the magnetorquers' applied dipole, body axes",
    "<magnetorquer>_bar1 ... <magnetorquer>_bar<n>": "A m^2, each bar's applied dipole along its axis (a "
                                                     "Magnetorquer given bar_axes)",
    "<thruster>_on": "1, 1 while the thruster fires",
    "<wheel>_speed": "rad/s, the wheel's speed relative to the body",
    "<wheel>_h": "N m s, the wheel's absolute angular momentum about its axis",
    "<wheel>_torque": "N m, the motor torque on the wheel (after its torque and speed limits)",
    "<wheel>_torque_cmd": "N m, the motor torque last commanded to the wheel, before the wheel's limits (a "
                          "QuaternionPD scales its allocation to the motor limits first: its commands reach at "
                          "most the limit)",
    "<wheel>_friction": "N m, the friction torque on the wheel about its axis (opposes its speed; the body feels "
                        "minus motor plus friction)",
    "<wheel>_angle": "rad, the rotor angle in [0, 2 pi) from its reference direction",
    "<wheel>_jitter_F_x <wheel>_jitter_F_y <wheel>_jitter_F_z": "N, the static imbalance force on the body, body axes "
                                                               "(no translation is simulated: its torque acts)",
    "<wheel>_jitter_tau_x <wheel>_jitter_tau_y <wheel>_jitter_tau_z": "N m, the imbalance torque about the centre of "
                                                                     "mass, body axes",
}
