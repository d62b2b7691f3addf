"""MRPFeedback, Basilisk's mrpFeedback law as a built-in: its kernel against Basilisk's own module (when bsk is
installed), a mission against the same equations written independently as a Python controller, its refusals, and
the same run on the Python path and both backends of the compiled loop."""

import math

import numpy as np
import pytest

import attsim
from attsim import modes, rotations
from attsim.control.kernels import add_wheel_momentum, mrp_feedback_torque
from attsim.guidance import NadirPointing, Slew
from attsim.guidance.pointing import Pointing

from tests.paths.test_mission_loop import J, _orbit_environment, _wheels, assert_same_run, both_ways, mrp_feedback_slew

SIGMA, W_BR, W_RN, WD_RN = (0.1, -0.2, 0.05), (0.01, -0.02, 0.005), (0.001, 0.0005, -0.002), (1e-5, -2e-5, 3e-6)
INERTIA = (0.9, 0.02, -0.01, 0.02, 0.8, 0.03, -0.01, 0.03, 0.6)
AXES = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 1.0, 1.0] / np.sqrt(3.0)])
JS, SPEEDS = (0.05, 0.05, 0.05, 0.04), (100.0, -50.0, 20.0, 300.0)
K, P, KI, LIMIT, L = 3.5, 30.0, 2e-4, 0.02, (1e-4, -2e-4, 3e-4)


def _basilisk_torques(dt_s, cycles):
    """Basilisk's mrpFeedback module fed one constant guidance message, wheel configuration and speeds."""
    messaging = pytest.importorskip("Basilisk.architecture.messaging")
    from Basilisk.fswAlgorithms import mrpFeedback
    from Basilisk.utilities import SimulationBaseClass, macros

    sim = SimulationBaseClass.SimBaseClass()
    sim.CreateNewProcess("process").addTask(sim.CreateNewTask("task", macros.sec2nano(dt_s)))
    module = mrpFeedback.mrpFeedback()
    module.K, module.P, module.Ki, module.integralLimit, module.knownTorquePntB_B = K, P, KI, LIMIT, list(L)
    guidance = messaging.AttGuidMsgPayload()
    guidance.sigma_BR, guidance.omega_BR_B, guidance.omega_RN_B, guidance.domega_RN_B = SIGMA, W_BR, W_RN, WD_RN
    vehicle = messaging.VehicleConfigMsgPayload()
    vehicle.ISCPntB_B = list(INERTIA)
    wheels = messaging.RWArrayConfigMsgPayload()
    wheels.GsMatrix_B, wheels.JsList, wheels.numRW = list(AXES.ravel()), list(JS), len(JS)
    speeds = messaging.RWSpeedMsgPayload()
    speeds.wheelSpeeds = list(SPEEDS)
    messages = [messaging.AttGuidMsg().write(guidance), messaging.VehicleConfigMsg().write(vehicle),
                messaging.RWArrayConfigMsg().write(wheels), messaging.RWSpeedMsg().write(speeds)]
    for port, message in zip((module.guidInMsg, module.vehConfigInMsg, module.rwParamsInMsg, module.rwSpeedsInMsg),
                             messages):
        port.subscribeTo(message)
    log = module.cmdTorqueOutMsg.recorder()
    sim.AddModelToTask("task", module)
    sim.AddModelToTask("task", log)
    sim.InitializeSimulation()
    sim.ConfigureStopTime(macros.sec2nano(dt_s * (cycles - 1)))
    sim.ExecuteSimulation()
    return np.array(log.torqueRequestBody)


def test_the_kernel_is_basilisks_mrp_feedback_to_the_bit():
    dt = 0.5
    expected = _basilisk_torques(dt, 10)
    w = tuple(a + b for a, b in zip(W_BR, W_RN))
    h = (0.0, 0.0, 0.0)
    for axis, inertia, speed in zip(AXES, JS, SPEEDS):
        h = add_wheel_momentum(h, tuple(axis), inertia, speed, w)
    s, prior, ours = (0.0, 0.0, 0.0), 0.0, []
    for k in range(len(expected)):  # Basilisk adds nothing to the integral after a call at t = 0 (its priorTime)
        u, s = mrp_feedback_torque(SIGMA, W_BR, W_RN, WD_RN, INERTIA, h, (K, P, KI, LIMIT), s,
                                   0.0 if prior == 0.0 else k * dt - prior, L)
        prior = k * dt
        ours.append(u)
    assert max(abs(v) for v in s) == pytest.approx(LIMIT)  # the integral reached its limit
    assert np.array_equal(np.array(ours), expected)


class ReferenceMRPFeedback(attsim.Controller):
    """Basilisk's mrpFeedback written out again in numpy from mrpFeedback.c, on the true state, to wheels along
    the body axes (motor torque = -u per axis): an independent reference for MRPFeedback's mission."""

    def __init__(self, target, wheels, inertia, gains, period_s, known_torque):
        super().__init__("reference", period_s, actuators=wheels)
        self.target, self.wheels, self.inertia = target, wheels, np.asarray(inertia)
        self.gains, self.known_torque = gains, np.asarray(known_torque)
        self.int_sigma, self.prior = np.zeros(3), 0.0

    def decide(self, t_s, readings):
        K, P, Ki, limit = self.gains
        q, w = (np.array(v) for v in self._sc.state())
        q_ref, w_ref, wd_ref = (np.array(v) for v in self.target.reference(self._sc, t_s))
        q_RB = rotations.quat_multiply(rotations.quat_conjugate(q_ref), q)
        q_RB = q_RB if q_RB[0] >= 0 else -q_RB
        sigma = q_RB[1:] / (1.0 + q_RB[0])
        R_BR = rotations.quat_to_dcm(q_RB).T
        w_RN, wd_RN = R_BR @ w_ref, R_BR @ wd_ref
        w_BR = w - w_RN
        dt = 0.0 if self.prior == 0.0 else t_s - self.prior
        self.prior = t_s
        self.int_sigma = self.int_sigma + K * dt * sigma
        self.int_sigma *= np.minimum(1.0, limit / np.maximum(np.abs(self.int_sigma), 1e-300))
        z = self.int_sigma + self.inertia @ w_BR
        H = self.inertia @ w + sum(wh.inertia_kg_m2 * (wh.axis @ w + wh.speed_rad_s(self._sc)) * wh.axis
                                   for wh in self.wheels)
        Lr = K * sigma + P * w_BR + P * Ki * z - np.cross(w_RN + Ki * z, H) \
            + self.inertia @ (np.cross(w, w_RN) - wd_RN) + self.known_torque
        return {wh.name: float(Lr[k]) for k, wh in enumerate(self.wheels)}  # motor torque -u = Lr


def _slew_mission(out, law):
    m = attsim.Mission("mrp_reference", J, (0.01, -0.005, 0.004), duration=60.0, max_step=0.05, telemetry_dt=0.5,
                       out_dir=out)
    wheels = [m.add(attsim.ReactionWheel(f"rw_{a}", d, 5e-5, 5e-3, 600.0, speed0_rad_s=100.0 * (k + 1)))
              for k, (a, d) in enumerate(zip("xyz", np.eye(3)))]
    target = Slew((1, 0, 0, 0), rotations.axis_angle_to_quat([0.3, -0.5, 0.8], 1.0), 0.05, 2e-3, t_start_s=5.0)
    inertia, gains, known_torque = J * 1.05, (2e-2, 6e-2, 5.0, 1e-3), (1e-6, -2e-6, 0.0)
    if law == "built-in":
        m.add(attsim.MRPFeedback(gains[0], gains[1], 0.5, wheels, target=target, Ki_per_kg_m2=gains[2],
                                 integral_limit_Nms=gains[3], inertia_kg_m2=inertia, known_torque_Nm=known_torque,
                                 attitude_source=attsim.TRUTH, rate_source=attsim.TRUTH))
    else:
        m.add(ReferenceMRPFeedback(Pointing(target), wheels, inertia, gains, 0.5, known_torque))
    m.add(attsim.TorqueSchedule([(2.0, 40.0, (2e-5, -1e-5, 1e-5))]))
    return m


@pytest.mark.parametrize("compiled", [False, True])
def test_a_mission_matches_the_equations_written_independently(tmp_path, compiled):
    ours = _slew_mission(tmp_path / "ours", "built-in").run(compiled=compiled).df
    reference = _slew_mission(tmp_path / "reference", "reference").run(compiled=False).df
    columns = ["qw", "qx", "qy", "qz", "wx", "wy", "wz"] + [f"rw_{a}_{x}" for a in "xyz" for x in ("torque", "speed")]
    worst = np.abs(ours[columns].to_numpy() - reference[columns].to_numpy()).max(axis=0)
    scale = np.maximum(1e-3, np.abs(reference[columns].to_numpy()).max(axis=0))
    assert (worst / scale).max() < 1e-9, dict(zip(columns, worst))
    # and the law does its work: the body turns through the slew (1 rad) within 0.5 deg of its reference
    turned = 2.0 * math.degrees(math.acos(min(1.0, abs(ours["qw"].iloc[-1]))))
    assert turned > 50.0 and ours["att_err_deg"].max() < 0.5


def test_mrp_feedback_refuses_what_it_cannot_use(tmp_path):
    wheels = ["rw_x", "rw_y", "rw_z"]
    target = (1.0, 0.0, 0.0, 0.0)
    with pytest.raises(attsim.InputError, match="K_Nm"):
        attsim.MRPFeedback(0.0, 1.0, 0.5, wheels, target_q=target)
    with pytest.raises(attsim.InputError, match="P_Nms"):
        attsim.MRPFeedback(1.0, math.nan, 0.5, wheels, target_q=target)
    with pytest.raises(attsim.InputError, match="integral_limit_Nms"):
        attsim.MRPFeedback(1.0, 1.0, 0.5, wheels, target_q=target, Ki_per_kg_m2=1e-3)
    with pytest.raises(attsim.InputError, match="wheels"):
        attsim.MRPFeedback(1.0, 1.0, 0.5, [], target_q=target)
    with pytest.raises(attsim.InputError, match="inertia_kg_m2"):
        attsim.MRPFeedback(1.0, 1.0, 0.5, wheels, target_q=target, inertia_kg_m2=-np.eye(3))
    with pytest.raises(attsim.InputError, match="known_torque_Nm"):
        attsim.MRPFeedback(1.0, 1.0, 0.5, wheels, target_q=target, known_torque_Nm=(1.0, np.inf, 0.0))
    with pytest.raises(attsim.InputError, match="target: MRPFeedback 'mrp_feedback' needs exactly one"):
        attsim.MRPFeedback(1.0, 1.0, 0.5, wheels)  # named as the user wrote it, not as the base class
    with pytest.raises(attsim.InputError, match="MRPFeedback 'mrp_feedback'"):
        attsim.MRPFeedback(1.0, 1.0, 0.5, ["rw_x", "rw_x"], target_q=target)


def test_mrp_feedback_gives_the_same_run_both_ways(tmp_path):
    python, compiled = both_ways(tmp_path, mrp_feedback_slew)
    assert_same_run(python, compiled)
    df = compiled.df
    turned = 2.0 * math.degrees(math.acos(min(1.0, abs(df["qw"].iloc[-1]))))
    assert turned > 30.0 and df["att_err_deg"].max() < 0.5 and df["att_err_deg"].iloc[-1] < 0.1


def mrp_feedback_taking_turns(out):
    """MRPFeedback on a nadir target (an orbit: ω_r and the wheels' momentum in its feed-forward), stopped by a
    mode for a QuaternionPD on the same wheels and run again: its integral and prior time start afresh."""
    m = attsim.Mission("mrp_modes", J, (0.002, -0.001, 0.0015), duration=240.0, telemetry_dt=1.0, seed=5,
                       environment=_orbit_environment(), out_dir=out)
    wheels = _wheels(m, max_torque_Nm=2e-3)
    gyro = m.add(attsim.Gyro(10.0, arw_rad_sqrt_s=1e-5))
    tracker = m.add(attsim.StarTracker(2.0, noise_arcsec=10.0))
    mrp = m.add(attsim.MRPFeedback(5e-3, 4e-2, 0.5, wheels, target=NadirPointing(), Ki_per_kg_m2=2.0,
                                   integral_limit_Nms=5e-4, attitude_source=tracker, rate_source=gyro))
    qpd = m.add(attsim.QuaternionPD(kp=5e-4, kd=9e-3, period_s=0.5, wheels=wheels, target=NadirPointing(),
                                    attitude_source=tracker, rate_source=gyro))
    m.add(attsim.ModeManager(modes=[("mrp", [mrp]), ("qpd", [qpd]), ("mrp_again", [mrp])],
                             transitions=[("mrp", "qpd", modes.at_time(80.0)),
                                          ("qpd", "mrp_again", modes.at_time(150.0))],
                             initial="mrp", period_s=1.0))
    return m


def test_mrp_feedback_restarted_by_a_mode_runs_alike_both_ways(tmp_path):
    python, compiled = both_ways(tmp_path, mrp_feedback_taking_turns)
    assert_same_run(python, compiled)
    assert list(compiled.events[compiled.events["kind"] == "mode"]["after"]) == ["qpd", "mrp_again"]
    assert compiled.df["att_err_deg"].iloc[-1] < compiled.df["att_err_deg"].iloc[0]


def test_basilisks_integral_off_value_is_refused_with_attsims():
    """The issue-22 outsider copied Basilisk's Ki = -1 (integral off) and was told only 'must be >= 0'."""
    with pytest.raises(attsim.errors.InputError) as info:
        attsim.MRPFeedback(3.5, 30.0, 0.5, body_torque="ext", target_q=(1.0, 0.0, 0.0, 0.0), Ki_per_kg_m2=-1)
    assert info.value.field == "Ki_per_kg_m2" and "0 turns the integral off (Basilisk's Ki = -1" in str(info.value)
