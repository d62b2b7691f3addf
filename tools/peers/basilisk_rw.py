"""Basilisk peer: reaction-wheel inertial pointing, closed loop at 10 Hz.

The mission benchmark's closed-loop scenario built from Basilisk modules so
that it can be timed against attsim in the same process.  Like
:mod:`tools.peers.basilisk_peer` (whose attitude conversions it uses) it
imports nothing from attsim and needs only ``numpy`` and Basilisk.

Two flight-software variants share one plant:

* :func:`run_rw_pointing`: Basilisk's own C modules, ``inertial3D`` ->
  ``attTrackingError`` -> ``mrpFeedback`` -> ``rwMotorTorque``;
* :func:`run_rw_user_controller`: a user's Python control law
  ``law(q_wxyz, omega_rad_s) -> wheel motor torques`` called from a Python
  ``sysModel.SysModel`` (what a Basilisk user writes for a law of their own),
  to measure Basilisk's per-cycle cost around user code.

The plant (both variants)
-------------------------
* ``spacecraft.Spacecraft`` hub with the given inertia, no gravity and no
  translation (position and velocity 0): the benchmark is about attitude;
  integrated with Basilisk's default fixed-step RK4 at ``dt_s``;
* ``reactionWheelStateEffector`` with three ``BalancedWheels`` along the
  body axes, made by ``simIncludeRW.rwFactory`` as type ``"custom"`` with
  explicit ``Js``, ``u_max`` (torque clipping on), ``Omega_max`` (speed
  saturation on), no friction, no minimum torque, at the body origin;
* ``simpleNav`` without noise (zero ``PMatrix`` and ``walkBounds``): perfect
  attitude and rate;
* recorders of ``scStateOutMsg`` and ``rwSpeedOutMsg`` every
  ``record_period_s``.

Inertia bookkeeping: in Basilisk 2.12 balanced wheels add no mass properties
to the spacecraft (``updateEffectorMassProps`` only handles the jitter
models); the hub equation is
``([I_hub] - sum Js g g^T) domega = -omega x [I_hub] omega - sum g (u + Js Omega omega x g)``,
so ``[I_hub]`` is the whole spacecraft's inertia *including* the wheels'
axial inertia ``Js`` about their spin axes.  attsim's ``Mission`` inertia
excludes it; the same spacecraft is therefore ``I_hub`` here and
``I_hub - sum Js g g^T`` in attsim.

Order at one time step
----------------------
The dynamics task (priority 200) runs before the flight-software task
(priority 100).  Inside it the wheel effector (priority 300) reads the motor
command before the spacecraft (priority 200) integrates up to the current
time, and ``simpleNav`` (priority 100) then samples the new state.  So the
command computed by the flight software at ``t`` from the state at ``t`` drives
the wheels over ``[t, t + dt]``: a zero-order hold without delay, as in attsim.
"""

from __future__ import annotations

import functools
import time

import numpy as np

from .basilisk_peer import _checked_body, _mrp_to_quat_wxyz, _quat_wxyz_to_mrp, available, version

__all__ = ["available", "version", "run_rw_pointing", "run_rw_user_controller"]

_DYN_TASK = "dynTask"
_FSW_TASK = "fswTask"
_PROCESS = "dynProcess"
_DYN_TASK_PRIORITY = 200
_FSW_TASK_PRIORITY = 100
_HUB_MASS_KG = 750.0  # irrelevant to the attitude (no gravity, wheels at the origin); Basilisk needs one


def run_rw_pointing(inertia_kg_m2, q0_wxyz, omega0_rad_s, target_q_wxyz, wheel_js_kg_m2: float,
                    wheel_max_torque_Nm: float, wheel_max_speed_rad_s: float, wheel_speed0_rad_s, K: float, P: float,
                    duration_s: float = 5800.0, dt_s: float = 0.1, control_period_s: float = 0.1,
                    record_period_s: float = 1.0) -> dict:
    """Inertial pointing with Basilisk's MRP feedback on three reaction wheels.

    Flight software at ``control_period_s``: ``inertial3D`` (reference
    ``sigma_R0N`` from ``target_q_wxyz``) -> ``attTrackingError`` ->
    ``mrpFeedback`` (gains ``K``, ``P``, integral feedback off) ->
    ``rwMotorTorque`` (control axes = body axes) -> the wheels.  For an
    inertial reference (``omega_RN = 0``) ``mrpFeedback`` commands the body
    torque ``L = -K sigma_BR - P omega_BN``: with the integral term off, its
    feed-forward terms all carry ``omega_RN`` or its derivative
    (``Update_mrpFeedback`` in Basilisk's ``mrpFeedback.c``; the law of
    Schaub & Junkins, *Analytical Mechanics of Space Systems*), and
    ``rwMotorTorque`` maps ``L`` onto motor torques ``u = -[Gs]^+ L``.

    Parameters
    ----------
    inertia_kg_m2 : array_like, shape (3, 3)
        Hub inertia about its centre of mass, the wheels' axial inertia
        included (see the module docstring) [kg m^2].
    q0_wxyz, target_q_wxyz : array_like, shape (4,)
        Initial and target attitude ``q_IB`` (attsim convention, scalar first).
    omega0_rad_s : array_like, shape (3,)
        Initial body rate [rad/s].
    wheel_js_kg_m2, wheel_max_torque_Nm, wheel_max_speed_rad_s : float
        Axial inertia, motor-torque limit and speed limit of each wheel.
    wheel_speed0_rad_s : array_like, shape (3,)
        Initial wheel speeds relative to the body [rad/s].
    K, P : float
        ``mrpFeedback`` gains [N m] and [N m s].
    duration_s, dt_s, control_period_s, record_period_s : float
        Simulated time, integration step, flight-software period and
        recording period [s]; all whole multiples of ``dt_s``.

    Returns
    -------
    dict
        See :func:`_run`.
    """
    for name, value in (("K", K), ("P", P)):
        if not (np.isfinite(value) and value > 0.0):
            raise ValueError(f"{name} must be finite and > 0, got {value!r}")

    def flight_software(sim, sc, nav, rw_effector, rw_config_msg, keep):
        from Basilisk.architecture import messaging
        from Basilisk.fswAlgorithms import attTrackingError, inertial3D, mrpFeedback, rwMotorTorque

        guidance = inertial3D.inertial3D()
        guidance.ModelTag = "inertial3D"
        guidance.sigma_R0N = _quat_wxyz_to_mrp(target_q_wxyz).tolist()
        sim.AddModelToTask(_FSW_TASK, guidance, 400)

        tracking = attTrackingError.attTrackingError()
        tracking.ModelTag = "attErrorInertial3D"
        tracking.attRefInMsg.subscribeTo(guidance.attRefOutMsg)
        tracking.attNavInMsg.subscribeTo(nav.attOutMsg)
        sim.AddModelToTask(_FSW_TASK, tracking, 300)

        vehicle = messaging.VehicleConfigMsgPayload()
        vehicle.ISCPntB_B = np.asarray(sc.hub.IHubPntBc_B, dtype=float).reshape(9).tolist()
        vehicle_msg = messaging.VehicleConfigMsg().write(vehicle)

        control = mrpFeedback.mrpFeedback()
        control.ModelTag = "mrpFeedback"
        control.K = float(K)
        control.P = float(P)
        control.Ki = -1.0  # integral feedback off
        control.guidInMsg.subscribeTo(tracking.attGuidOutMsg)
        control.vehConfigInMsg.subscribeTo(vehicle_msg)
        control.rwParamsInMsg.subscribeTo(rw_config_msg)
        control.rwSpeedsInMsg.subscribeTo(rw_effector.rwSpeedOutMsg)
        sim.AddModelToTask(_FSW_TASK, control, 200)

        allocation = rwMotorTorque.rwMotorTorque()
        allocation.ModelTag = "rwMotorTorque"
        allocation.controlAxes_B = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]
        allocation.vehControlInMsg.subscribeTo(control.cmdTorqueOutMsg)
        allocation.rwParamsInMsg.subscribeTo(rw_config_msg)
        sim.AddModelToTask(_FSW_TASK, allocation, 100)

        rw_effector.rwMotorCmdInMsg.subscribeTo(allocation.rwMotorTorqueOutMsg)
        keep += [guidance, tracking, vehicle, vehicle_msg, control, allocation]
        return None

    result = _run(flight_software, inertia_kg_m2, q0_wxyz, omega0_rad_s, wheel_js_kg_m2, wheel_max_torque_Nm,
                  wheel_max_speed_rad_s, wheel_speed0_rad_s, duration_s, dt_s, control_period_s, record_period_s)
    result["fsw"] = "inertial3D + attTrackingError + mrpFeedback + rwMotorTorque (C modules)"
    return result


def run_rw_user_controller(law, inertia_kg_m2, q0_wxyz, omega0_rad_s, wheel_js_kg_m2: float,
                           wheel_max_torque_Nm: float, wheel_max_speed_rad_s: float, wheel_speed0_rad_s,
                           duration_s: float = 5800.0, dt_s: float = 0.1, control_period_s: float = 0.1,
                           record_period_s: float = 1.0) -> dict:
    """The same plant driven by a user's Python law in a ``sysModel.SysModel``.

    Each flight-software cycle the module reads ``simpleNav``'s
    ``attOutMsg``, turns ``sigma_BN`` into ``q_IB`` (scalar first, ``w >= 0``),
    calls ``law(q_wxyz, omega_rad_s)`` (numpy arrays) for the three wheel
    motor torques [N m] and writes them to the wheels' ``rwMotorCmdInMsg``.

    Parameters
    ----------
    law : callable
        ``law(q_wxyz, omega_rad_s) -> sequence of 3 motor torques``.
    inertia_kg_m2, q0_wxyz, omega0_rad_s, wheel_*, duration_s, dt_s, control_period_s, record_period_s
        As in :func:`run_rw_pointing`.

    Returns
    -------
    dict
        See :func:`_run`; ``user_s`` is the time spent inside the module's
        ``UpdateState`` (message reads and writes, the MRP conversion and
        ``law``) and ``law_s`` the part of it inside ``law``.
    """
    if not callable(law):
        raise ValueError(f"law must be callable, got {type(law).__name__}")
    holder = {}

    def flight_software(sim, sc, nav, rw_effector, rw_config_msg, keep):
        module = _user_module_class()(law)
        module.ModelTag = "userLaw"
        module.navInMsg.subscribeTo(nav.attOutMsg)
        sim.AddModelToTask(_FSW_TASK, module, 100)
        rw_effector.rwMotorCmdInMsg.subscribeTo(module.rwMotorCmdOutMsg)
        keep.append(module)
        holder["module"] = module

    result = _run(flight_software, inertia_kg_m2, q0_wxyz, omega0_rad_s, wheel_js_kg_m2, wheel_max_torque_Nm,
                  wheel_max_speed_rad_s, wheel_speed0_rad_s, duration_s, dt_s, control_period_s, record_period_s)
    module = holder["module"]
    result.update(fsw="Python SysModel calling the user's law", user_s=module.user_s, law_s=module.law_s,
                  cycles=module.calls)
    return result


@functools.cache
def _user_module_class():
    """The Python ``SysModel`` around a user law (defined lazily: importing this file does not import Basilisk)."""
    from Basilisk.architecture import messaging, sysModel

    class UserLaw(sysModel.SysModel):
        """``navInMsg`` (``NavAttMsgPayload``) -> ``law(q, omega)`` -> ``rwMotorCmdOutMsg``; times itself."""

        def __init__(self, law):
            super().__init__()
            self.navInMsg = messaging.NavAttMsgReader()
            self.rwMotorCmdOutMsg = messaging.ArrayMotorTorqueMsg()
            self._law = law
            self._payload = messaging.ArrayMotorTorqueMsgPayload()
            self.user_s = 0.0
            self.law_s = 0.0
            self.calls = 0

        def Reset(self, CurrentSimNanos):
            """Zero the timers and command zero torque."""
            self.user_s = self.law_s = 0.0
            self.calls = 0
            self._payload.motorTorque = [0.0, 0.0, 0.0]
            self.rwMotorCmdOutMsg.write(self._payload, CurrentSimNanos, self.moduleID)

        def UpdateState(self, CurrentSimNanos):
            """Read the navigation state, call the law, write the motor torques."""
            start = time.perf_counter()
            nav = self.navInMsg()
            s1, s2, s3 = nav.sigma_BN
            s2sum = s1 * s1 + s2 * s2 + s3 * s3
            scale = 2.0 / (1.0 + s2sum)
            q = np.array([(1.0 - s2sum) / (1.0 + s2sum), scale * s1, scale * s2, scale * s3])
            w = np.array(nav.omega_BN_B)
            law_start = time.perf_counter()
            torques = self._law(q, w)
            self.law_s += time.perf_counter() - law_start
            self._payload.motorTorque = [float(u) for u in torques]
            self.rwMotorCmdOutMsg.write(self._payload, CurrentSimNanos, self.moduleID)
            self.calls += 1
            self.user_s += time.perf_counter() - start

    return UserLaw


def _ns_multiple(name, value, dt_ns):
    from Basilisk.utilities import macros

    value_ns = macros.sec2nano(float(value))
    if value_ns <= 0 or value_ns % dt_ns != 0:
        raise ValueError(f"{name} must be a positive whole number of dt_s, got {value!r}")
    return value_ns


def _run(flight_software, inertia_kg_m2, q0_wxyz, omega0_rad_s, wheel_js_kg_m2, wheel_max_torque_Nm,
         wheel_max_speed_rad_s, wheel_speed0_rad_s, duration_s, dt_s, control_period_s, record_period_s) -> dict:
    """Build the plant, let ``flight_software`` add the FSW task's modules, run, collect.

    Returns
    -------
    dict
        ``wall_s`` : float, wall time of ``ExecuteSimulation`` only [s];
        ``setup_s`` : float, building and initialising the simulation [s];
        ``t_s`` : (n,) recorded times [s];
        ``q_wxyz`` : (n, 4) attitude ``q_IB``, sign-continuous from ``q0``;
        ``omega_rad_s`` : (n, 3) body rates [rad/s];
        ``wheel_speed_rad_s`` : (n, 3) wheel speeds relative to the body [rad/s];
        ``steps`` : int, integration steps; ``cycles`` : int, flight-software
        cycles (``duration / control_period + 1``, t = 0 included).
    """
    from Basilisk.architecture import bskLogging, messaging
    from Basilisk.simulation import reactionWheelStateEffector, simpleNav, spacecraft
    from Basilisk.utilities import SimulationBaseClass, macros, simIncludeRW

    inertia, omega0 = _checked_body(inertia_kg_m2, omega0_rad_s)
    sigma0 = _quat_wxyz_to_mrp(q0_wxyz)
    speed0 = np.asarray(wheel_speed0_rad_s, dtype=float).reshape(3)
    for name, value in (("wheel_js_kg_m2", wheel_js_kg_m2), ("wheel_max_torque_Nm", wheel_max_torque_Nm),
                        ("wheel_max_speed_rad_s", wheel_max_speed_rad_s)):
        if not (np.isfinite(value) and value > 0.0):
            raise ValueError(f"{name} must be finite and > 0, got {value!r}")
    if not np.all(np.abs(speed0) <= wheel_max_speed_rad_s):
        raise ValueError("wheel_speed0_rad_s must not exceed wheel_max_speed_rad_s")
    dt_ns = macros.sec2nano(float(dt_s))
    if dt_ns <= 0:
        raise ValueError(f"dt_s must be at least 1 ns, got {dt_s!r}")
    stop_ns = _ns_multiple("duration_s", duration_s, dt_ns)
    control_ns = _ns_multiple("control_period_s", control_period_s, dt_ns)
    record_ns = _ns_multiple("record_period_s", record_period_s, dt_ns)

    t_setup = time.perf_counter()
    previous_log_level = bskLogging.getDefaultLogLevel()
    bskLogging.setDefaultLogLevel(bskLogging.BSK_WARNING)  # keep BSK_DEBUG / BSK_INFORMATION off stdout
    keep = []
    try:
        sim = SimulationBaseClass.SimBaseClass()
        process = sim.CreateNewProcess(_PROCESS)
        process.addTask(sim.CreateNewTask(_DYN_TASK, dt_ns), _DYN_TASK_PRIORITY)
        process.addTask(sim.CreateNewTask(_FSW_TASK, control_ns), _FSW_TASK_PRIORITY)

        sc = spacecraft.Spacecraft()
        sc.ModelTag = "attsimRwPeer"
        sc.hub.mHub = _HUB_MASS_KG
        sc.hub.r_BcB_B = [[0.0], [0.0], [0.0]]
        sc.hub.IHubPntBc_B = inertia.tolist()
        sc.hub.r_CN_NInit = [[0.0], [0.0], [0.0]]
        sc.hub.v_CN_NInit = [[0.0], [0.0], [0.0]]
        sc.hub.sigma_BNInit = [[float(v)] for v in sigma0]
        sc.hub.omega_BN_BInit = [[float(v)] for v in omega0]

        factory = simIncludeRW.rwFactory()
        for axis, omega_rad_s in zip(np.eye(3), speed0):
            factory.create("custom", axis.tolist(), Js=float(wheel_js_kg_m2), u_max=float(wheel_max_torque_Nm),
                           Omega_max=float(wheel_max_speed_rad_s) / macros.RPM, Omega=float(omega_rad_s) / macros.RPM,
                           RWModel=messaging.BalancedWheels, useRWfriction=False, useMinTorque=False, useMaxTorque=True)
        rw_effector = reactionWheelStateEffector.ReactionWheelStateEffector()
        factory.addToSpacecraft("rwEffector", rw_effector, sc)
        rw_config_msg = factory.getConfigMessage()

        sim.AddModelToTask(_DYN_TASK, rw_effector, 300)  # reads the command before the hub integrates
        sim.AddModelToTask(_DYN_TASK, sc, 200)

        nav = simpleNav.SimpleNav()
        nav.ModelTag = "simpleNav"
        nav.PMatrix = np.zeros((18, 18)).tolist()  # no noise: perfect attitude and rate
        nav.walkBounds = np.zeros(18).tolist()
        nav.scStateInMsg.subscribeTo(sc.scStateOutMsg)
        sim.AddModelToTask(_DYN_TASK, nav, 100)

        state_recorder = sc.scStateOutMsg.recorder(record_ns)
        wheel_recorder = rw_effector.rwSpeedOutMsg.recorder(record_ns)
        sim.AddModelToTask(_DYN_TASK, state_recorder, 0)
        sim.AddModelToTask(_DYN_TASK, wheel_recorder, 0)

        flight_software(sim, sc, nav, rw_effector, rw_config_msg, keep)
        keep += [factory, rw_effector, rw_config_msg, nav, sc]

        sim.InitializeSimulation()
        sim.ConfigureStopTime(stop_ns)
    finally:
        bskLogging.setDefaultLogLevel(previous_log_level)
    setup_s = time.perf_counter() - t_setup

    t_run = time.perf_counter()
    sim.ExecuteSimulation()
    wall_s = time.perf_counter() - t_run
    del keep  # stand-alone messages and modules had to outlive the run

    t_s = np.asarray(state_recorder.times(), dtype=np.int64) * macros.NANO2SEC
    sigma_bn = np.asarray(state_recorder.sigma_BN, dtype=float).reshape(-1, 3)
    omega_rad_s = np.asarray(state_recorder.omega_BN_B, dtype=float).reshape(-1, 3)
    wheel_speed_rad_s = np.asarray(wheel_recorder.wheelSpeeds, dtype=float)[:, :3]
    return {
        "wall_s": wall_s,
        "setup_s": setup_s,
        "t_s": t_s,
        "q_wxyz": _mrp_to_quat_wxyz(sigma_bn, q_ref_wxyz=q0_wxyz),
        "omega_rad_s": omega_rad_s,
        "wheel_speed_rad_s": wheel_speed_rad_s,
        "steps": int(stop_ns // dt_ns),
        "cycles": int(stop_ns // control_ns) + 1,
    }
