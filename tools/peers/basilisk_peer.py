"""Basilisk peer: run attsim's torque-free rigid-body case in Basilisk.

This adapter builds the *same* torque-free rigid-body problem in Basilisk
(PyPI package ``bsk``) so that benchmark scripts can compare speed and
accuracy with attsim in the same process.  It imports nothing from attsim
and needs only ``numpy`` and (optionally) ``Basilisk``.

:func:`run_detumble` does the same for the mission benchmark's magnetic
detumble (1U CubeSat on a circular orbit in an aligned-dipole field, 1 Hz
magnetometer, rate-form B-dot, magnetorquers); see its docstring for how the
scenario maps onto Basilisk modules.

Attitude conventions
--------------------
attsim uses a Hamilton quaternion, scalar first, ``q = (w, x, y, z)``, where
``q_IB`` rotates body-frame vectors into the inertial frame,
``v_I = q (x) (0, v_B) (x) q*``, i.e. ``R_IB = [BN]^T``.

Basilisk propagates ``sigma_BN``, the modified Rodrigues parameters (MRP) of
the body frame B relative to the inertial frame N, whose DCM ``[BN]`` maps
N components to B components.  Schaub's Euler parameters ``beta_BN`` (scalar
first) of ``[BN]`` have exactly the same components as attsim's Hamilton
``q_IB``, so the conversions are

* ``sigma_BN = q_vec / (1 + w)`` (with ``q`` first flipped to ``w >= 0`` so
  that ``|sigma_BN| <= 1``, the set Basilisk switches to anyway), and
* ``q = ((1 - s2), 2 sigma_BN) / (1 + s2)`` with ``s2 = |sigma_BN|^2``.

The body rate ``omega`` is the rate of B relative to N in body axes, which is
Basilisk's ``omega_BN_B`` unchanged.

Notes
-----
* Basilisk time is an integer number of nanoseconds; ``dt_s`` is rounded to
  the nearest nanosecond with ``macros.sec2nano``.  The returned ``t_s`` holds
  the times Basilisk actually used.
* The spacecraft's default integrator is fixed-step RK4
  (``svIntegrators.svIntegratorRK4``); the adapter does not replace it.
* Basilisk's MRP set switches to the shadow set whenever ``|sigma| > 1``;
  the output quaternion series is made sign-continuous afterwards, starting
  with the sign of the given ``q0``.
* Basilisk's default log level is ``BSK_DEBUG``; it is raised to
  ``BSK_WARNING`` while the simulation is built and restored afterwards.
"""

from __future__ import annotations

import functools
import time

import numpy as np

__all__ = ["available", "version", "run_torque_free", "run_detumble"]

_TASK_NAME = "dynTask"
_PROCESS_NAME = "dynProcess"


def _checked_body(inertia_kg_m2, omega0_rad_s) -> tuple[np.ndarray, np.ndarray]:
    """The inertia as a symmetric 3x3 array and the body rate as a 3-vector."""
    inertia = np.asarray(inertia_kg_m2, dtype=float)
    omega0 = np.asarray(omega0_rad_s, dtype=float).reshape(3)
    if inertia.shape != (3, 3):
        raise ValueError(f"inertia_kg_m2 must be 3x3, got shape {inertia.shape}")
    if not np.allclose(inertia, inertia.T, rtol=0.0, atol=1e-12 * np.abs(inertia).max()):
        raise ValueError("inertia_kg_m2 must be symmetric")
    return inertia, omega0


def available() -> bool:
    """Tell whether Basilisk can be imported.

    Returns
    -------
    bool
        True when ``import Basilisk`` (and the modules used here) succeeds.
    """
    try:
        import Basilisk  # noqa: F401
        from Basilisk.simulation import spacecraft  # noqa: F401
        from Basilisk.utilities import SimulationBaseClass, macros  # noqa: F401
    except Exception:  # ImportError, or a broken binary wheel
        return False
    return True


def version() -> str:
    """Return the installed Basilisk version.

    Returns
    -------
    str
        The version string, e.g. ``"2.12.1"``; ``"unavailable"`` when
        Basilisk cannot be imported.
    """
    try:
        from importlib.metadata import version as _dist_version

        return _dist_version("bsk")
    except Exception:
        pass
    try:
        import Basilisk

        return str(getattr(Basilisk, "__version__", "unknown"))
    except Exception:
        return "unavailable"


def _quat_wxyz_to_mrp(q_wxyz: np.ndarray) -> np.ndarray:
    """Convert attsim's Hamilton ``q_IB`` (w, x, y, z) to Basilisk ``sigma_BN``.

    Parameters
    ----------
    q_wxyz : numpy.ndarray, shape (4,)
        Attitude quaternion, scalar first; normalised here.

    Returns
    -------
    numpy.ndarray, shape (3,)
        MRP ``sigma_BN`` with ``|sigma_BN| <= 1``.
    """
    q = np.asarray(q_wxyz, dtype=float).reshape(4)
    norm = np.linalg.norm(q)
    if not np.isfinite(norm) or norm == 0.0:
        raise ValueError(f"q0_wxyz must be a finite non-zero quaternion, got {q_wxyz!r}")
    q = q / norm
    if q[0] < 0.0:
        q = -q
    return q[1:] / (1.0 + q[0])


def _mrp_to_quat_wxyz(sigma_bn: np.ndarray, q_ref_wxyz=None) -> np.ndarray:
    """Convert Basilisk ``sigma_BN`` samples to a sign-continuous ``q_IB`` series.

    Parameters
    ----------
    sigma_bn : numpy.ndarray, shape (n, 3)
        MRP samples of B relative to N.
    q_ref_wxyz : array_like, shape (4,), optional
        Quaternion whose hemisphere the first sample is put in (the caller's
        ``q0``); when omitted the first sample gets ``w >= 0``.

    Returns
    -------
    numpy.ndarray, shape (n, 4)
        Hamilton quaternions (w, x, y, z) with no sign flip between
        consecutive samples.
    """
    sigma = np.asarray(sigma_bn, dtype=float).reshape(-1, 3)
    s2 = np.einsum("ij,ij->i", sigma, sigma)
    q = np.empty((sigma.shape[0], 4))
    q[:, 0] = (1.0 - s2) / (1.0 + s2)
    q[:, 1:] = 2.0 * sigma / (1.0 + s2)[:, None]
    if q.shape[0] == 0:
        return q
    # Remove the sign flips caused by MRP shadow-set switching: flip sample k
    # when it points away from sample k-1 (and sample 0 when it points away
    # from the reference).
    ref = np.array([1.0, 0.0, 0.0, 0.0]) if q_ref_wxyz is None else np.asarray(q_ref_wxyz, float)
    dots = np.einsum("ij,ij->i", q[1:], q[:-1])
    flips = np.concatenate(([q[0] @ ref < 0.0], dots < 0.0))
    sign = np.where(np.cumsum(flips) % 2 == 1, -1.0, 1.0)
    return q * sign[:, None]


def run_torque_free(
    inertia_kg_m2,
    omega0_rad_s,
    q0_wxyz,
    dt_s: float,
    n_steps: int,
    record_every: int = 1,
) -> dict:
    """Propagate a torque-free rigid body with Basilisk's Spacecraft hub.

    One ``spacecraft.Spacecraft`` hub (mass 1 kg, the given inertia about its
    centre of mass, zero position and velocity, no gravity, no effectors) is
    integrated with its default fixed-step RK4 integrator at task rate
    ``dt_s`` for ``n_steps`` steps.  ``scStateOutMsg`` is recorded with a
    sampling period of ``record_every * dt_s``.

    Parameters
    ----------
    inertia_kg_m2 : array_like, shape (3, 3)
        Body-frame inertia tensor about the centre of mass [kg m^2]
        (symmetric positive definite).
    omega0_rad_s : array_like, shape (3,)
        Initial body rate of B relative to N in body axes [rad/s].
    q0_wxyz : array_like, shape (4,)
        Initial attitude ``q_IB``, Hamilton, scalar first (attsim convention).
    dt_s : float
        Integration step and task rate [s]; rounded to whole nanoseconds.
    n_steps : int
        Number of integration steps; the run ends at ``n_steps * dt_s``.
    record_every : int, optional
        Record every ``record_every``-th step; t = 0 is always recorded, and
        the final state only when ``n_steps`` is a multiple of
        ``record_every``.  Sign continuity of ``q_wxyz`` assumes the body
        turns by less than 180 degrees between samples.

    Returns
    -------
    dict
        ``wall_s`` : float, wall time of ``ExecuteSimulation`` only [s];
        ``setup_s`` : float, wall time to build and initialise the sim [s];
        ``t_s`` : (n,) sample times [s];
        ``q_wxyz`` : (n, 4) ``q_IB`` samples, sign-continuous, the first
        one in the same hemisphere as ``q0_wxyz`` (so it equals the
        normalised ``q0_wxyz``);
        ``omega_rad_s`` : (n, 3) body rates ``omega_BN_B`` [rad/s];
        ``steps`` : int, ``n_steps``.

    Raises
    ------
    ImportError
        If Basilisk is not installed.
    ValueError
        On malformed inputs.
    """
    from Basilisk.architecture import bskLogging
    from Basilisk.simulation import spacecraft
    from Basilisk.utilities import SimulationBaseClass, macros

    inertia, omega0 = _checked_body(inertia_kg_m2, omega0_rad_s)
    n_steps = int(n_steps)
    record_every = int(record_every)
    if n_steps < 0 or record_every < 1:
        raise ValueError("need n_steps >= 0 and record_every >= 1")
    dt_ns = macros.sec2nano(float(dt_s))
    if dt_ns <= 0:
        raise ValueError(f"dt_s must be at least 1 ns, got {dt_s!r}")
    sigma0 = _quat_wxyz_to_mrp(q0_wxyz)

    t_setup = time.perf_counter()
    # Basilisk's default log level is BSK_DEBUG; loggers copy the default when
    # they are constructed, so raise it while building (keeps BSK_DEBUG and
    # BSK_INFORMATION chatter off stdout) and restore it afterwards.
    previous_log_level = bskLogging.getDefaultLogLevel()
    bskLogging.setDefaultLogLevel(bskLogging.BSK_WARNING)
    try:
        sim, recorder = _build_sim(
            spacecraft, SimulationBaseClass, inertia, omega0, sigma0, dt_ns, n_steps, record_every
        )
    finally:
        bskLogging.setDefaultLogLevel(previous_log_level)
    setup_s = time.perf_counter() - t_setup

    t_run = time.perf_counter()
    sim.ExecuteSimulation()
    wall_s = time.perf_counter() - t_run

    t_s = np.asarray(recorder.times(), dtype=np.int64) * macros.NANO2SEC
    sigma_bn = np.asarray(recorder.sigma_BN, dtype=float).reshape(-1, 3)
    omega_rad_s = np.asarray(recorder.omega_BN_B, dtype=float).reshape(-1, 3)
    return {
        "wall_s": wall_s,
        "setup_s": setup_s,
        "t_s": t_s,
        "q_wxyz": _mrp_to_quat_wxyz(sigma_bn, q_ref_wxyz=q0_wxyz),
        "omega_rad_s": omega_rad_s,
        "steps": n_steps,
    }


def _build_sim(spacecraft, SimulationBaseClass, inertia, omega0, sigma0, dt_ns, n_steps, record_every):
    """Build and initialise the Basilisk simulation.

    Parameters
    ----------
    spacecraft, SimulationBaseClass : module
        The Basilisk modules (imported lazily by the caller).
    inertia : numpy.ndarray, shape (3, 3)
        Hub inertia about its centre of mass [kg m^2].
    omega0 : numpy.ndarray, shape (3,)
        Initial ``omega_BN_B`` [rad/s].
    sigma0 : numpy.ndarray, shape (3,)
        Initial ``sigma_BN``.
    dt_ns, n_steps, record_every : int
        Task rate [ns], number of steps, recording decimation.

    Returns
    -------
    tuple
        ``(sim, recorder)``: the initialised ``SimBaseClass`` with its stop
        time configured, and the ``scStateOutMsg`` recorder.
    """
    sim = SimulationBaseClass.SimBaseClass()
    process = sim.CreateNewProcess(_PROCESS_NAME)
    process.addTask(sim.CreateNewTask(_TASK_NAME, dt_ns))

    sc = spacecraft.Spacecraft()
    sc.ModelTag = "attsimPeer"
    sc.hub.mHub = 1.0
    sc.hub.r_BcB_B = [[0.0], [0.0], [0.0]]
    sc.hub.IHubPntBc_B = inertia.tolist()
    sc.hub.r_CN_NInit = [[0.0], [0.0], [0.0]]
    sc.hub.v_CN_NInit = [[0.0], [0.0], [0.0]]
    sc.hub.sigma_BNInit = [[float(v)] for v in sigma0]
    sc.hub.omega_BN_BInit = [[float(v)] for v in omega0]
    sim.AddModelToTask(_TASK_NAME, sc)

    recorder = sc.scStateOutMsg.recorder(dt_ns * record_every)
    sim.AddModelToTask(_TASK_NAME, recorder)

    sim.InitializeSimulation()
    sim.ConfigureStopTime(dt_ns * n_steps)
    return sim, recorder


# --------------------------------------------------------------------------
# Magnetic detumble (the mission benchmark's scenario)
# --------------------------------------------------------------------------

_FSW_TASK_NAME = "fswTask"
# At a common time Basilisk runs the higher-priority task first.  The dynamics
# task integrates up to that time and publishes the spacecraft state and the
# field; the flight-software task then samples them, so a command computed
# from the state at t acts from t on (zero-order hold, as in attsim).
_DYN_TASK_PRIORITY = 200
_FSW_TASK_PRIORITY = 100

_MU_EARTH_M3_S2 = 3.986004418e14  # Earth's gravitational parameter (attsim's value)
_R_EARTH_M = 6378137.0  # Earth equatorial radius: orbit and dipole reference radius
_B_EQUATOR_T = 3.12e-5  # dipole field strength on the equator at the surface
_MASS_1U_KG = 0.792  # 1U CubeSat hub mass

_BDOT_IMPL = "Python SysModel"


def run_detumble(
    inertia_kg_m2,
    omega0_rad_s,
    duration_s: float = 17400.0,
    dt_s: float = 0.1,
    control_period_s: float = 1.0,
    gain: float = 5e4,
    dipole_max_Am2: float = 0.068,
    altitude_km: float = 700.0,
    inclination_deg: float = 90.0,
    record_period_s: float = 1.0,
    mag_noise_T: float = 1e-8,
    seed: int = 1,
) -> dict:
    """Run attsim's magnetic-detumble benchmark scenario in Basilisk.

    The simulation is made of Basilisk modules only, except the B-dot law:

    * ``spacecraft.Spacecraft`` hub, mass 0.792 kg (1U CubeSat), the given
      inertia about its centre of mass, initial attitude ``sigma_BN = 0``
      (attsim's identity ``q_IB``) and body rate ``omega0_rad_s``;
      integrated with its default fixed-step RK4 at the dynamics task rate
      ``dt_s``;
    * point-mass Earth gravity from ``simIncludeGravBody.gravBodyFactory``
      with ``mu = 3.986004418e14 m^3/s^2``; circular orbit of radius
      ``6378137 m + altitude_km``, right ascension of the ascending node,
      argument of periapsis and true anomaly 0, so the spacecraft starts
      on the inertial +x axis (attsim's ``polar_orbit_dipole_field``
      convention);
    * ``magneticFieldCenteredDipole`` configured as an aligned dipole:
      ``g10 = -3.12e-5 T`` (so the surface equatorial field is 3.12e-5 T),
      ``g11 = h11 = 0``, reference radius 6378137 m, planet frame = inertial
      frame (no planet ephemeris message, so Earth does not rotate; the
      field is axisymmetric anyway).  It is updated at the dynamics rate;
    * ``magnetometer.Magnetometer`` (sensor frame = body frame) at
      ``control_period_s`` with white Gaussian noise of standard deviation
      ``mag_noise_T`` per axis (its Gauss-Markov propagation matrix is set to
      zero so that the noise is white, not a random walk) and seed ``seed``;
    * the rate-form B-dot ``m = -gain (B_k - B_{k-1}) / control_period_s``
      from successive body-frame magnetometer samples, as a Python
      ``sysModel.SysModel`` at ``control_period_s`` (Basilisk 2.12 has no
      C/C++ B-dot module; the first cycle only samples and commands zero);
    * ``MtbEffector`` with three torque bars along the body axes
      (``GtMatrix_B = I``), each clipped to ``+-dipole_max_Am2`` by the
      effector, applying ``m x B`` inside the dynamics.  The field it uses is
      the one published at the start of each integration step (held over the
      step), rotated into body axes with the attitude of each RK4 stage;
    * a recorder of ``scStateOutMsg`` every ``record_period_s``.

    Parameters
    ----------
    inertia_kg_m2 : array_like, shape (3, 3)
        Body-frame inertia tensor about the centre of mass [kg m^2].
    omega0_rad_s : array_like, shape (3,)
        Initial body rate of B relative to N in body axes [rad/s].
    duration_s : float, optional
        Simulated time [s]; must be a whole number of ``dt_s``.  The default,
        17,400 s, is about three orbits at 700 km.
    dt_s : float, optional
        Integration step and dynamics task rate [s].
    control_period_s : float, optional
        Magnetometer sampling and B-dot period [s]; a whole number of
        ``dt_s``.
    gain : float, optional
        B-dot gain ``k`` [A m^2 s / T].
    dipole_max_Am2 : float, optional
        Largest dipole of each torque bar [A m^2].
    altitude_km : float, optional
        Circular-orbit altitude above the 6378.137 km equatorial radius [km].
    inclination_deg : float, optional
        Orbit inclination [deg].
    record_period_s : float, optional
        Sampling period of the recorded rates [s]; a whole number of
        ``dt_s``.
    mag_noise_T : float, optional
        Magnetometer white-noise standard deviation per axis [T]; 0 turns the
        noise off.
    seed : int, optional
        Seed of the magnetometer's random-number generator.

    Returns
    -------
    dict
        ``wall_s`` : float, wall time of ``ExecuteSimulation`` only [s];
        ``setup_s`` : float, wall time to build and initialise the sim [s];
        ``t_s`` : (n,) sample times [s] (0, ``record_period_s``, ... ,
        ``duration_s``);
        ``omega_rad_s`` : (n, 3) body rates ``omega_BN_B`` [rad/s];
        ``q_wxyz`` : (n, 4) attitude ``q_IB`` (attsim convention),
        sign-continuous;
        ``rate_norm_end_rad_s`` : float, ``|omega|`` of the last sample
        [rad/s];
        ``bdot_impl`` : str, ``"Python SysModel"``;
        ``steps`` : int, number of dynamics (integration) steps.

    Raises
    ------
    ImportError
        If Basilisk is not installed.
    ValueError
        On malformed inputs.
    """
    from Basilisk.architecture import bskLogging
    from Basilisk.utilities import macros

    inertia, omega0 = _checked_body(inertia_kg_m2, omega0_rad_s)
    dt_ns = macros.sec2nano(float(dt_s))
    if dt_ns <= 0:
        raise ValueError(f"dt_s must be at least 1 ns, got {dt_s!r}")
    periods_ns = {}
    for name, value in (("duration_s", duration_s), ("control_period_s", control_period_s),
                        ("record_period_s", record_period_s)):
        value_ns = macros.sec2nano(float(value))
        if value_ns <= 0 or value_ns % dt_ns != 0:
            raise ValueError(f"{name} must be a positive whole number of dt_s = {dt_s!r} s, got {value!r}")
        periods_ns[name] = value_ns
    for name, value in (("gain", gain), ("dipole_max_Am2", dipole_max_Am2), ("altitude_km", altitude_km)):
        if not (np.isfinite(value) and value > 0.0):
            raise ValueError(f"{name} must be finite and > 0, got {value!r}")
    if not (np.isfinite(mag_noise_T) and mag_noise_T >= 0.0):
        raise ValueError(f"mag_noise_T must be finite and >= 0, got {mag_noise_T!r}")

    t_setup = time.perf_counter()
    # Keep BSK_DEBUG / BSK_INFORMATION chatter off stdout (see run_torque_free).
    previous_log_level = bskLogging.getDefaultLogLevel()
    bskLogging.setDefaultLogLevel(bskLogging.BSK_WARNING)
    try:
        sim, recorder, keep_alive = _build_detumble_sim(
            inertia=inertia,
            omega0=omega0,
            dt_ns=dt_ns,
            control_ns=periods_ns["control_period_s"],
            record_ns=periods_ns["record_period_s"],
            stop_ns=periods_ns["duration_s"],
            gain=float(gain),
            control_period_s=periods_ns["control_period_s"] * macros.NANO2SEC,
            dipole_max_Am2=float(dipole_max_Am2),
            radius_m=_R_EARTH_M + 1e3 * float(altitude_km),
            inclination_rad=np.radians(float(inclination_deg)),
            mag_noise_T=float(mag_noise_T),
            seed=int(seed),
        )
    finally:
        bskLogging.setDefaultLogLevel(previous_log_level)
    setup_s = time.perf_counter() - t_setup

    t_run = time.perf_counter()
    sim.ExecuteSimulation()
    wall_s = time.perf_counter() - t_run
    del keep_alive  # stand-alone messages must outlive the run

    t_s = np.asarray(recorder.times(), dtype=np.int64) * macros.NANO2SEC
    sigma_bn = np.asarray(recorder.sigma_BN, dtype=float).reshape(-1, 3)
    omega_rad_s = np.asarray(recorder.omega_BN_B, dtype=float).reshape(-1, 3)
    return {
        "wall_s": wall_s,
        "setup_s": setup_s,
        "t_s": t_s,
        "omega_rad_s": omega_rad_s,
        "q_wxyz": _mrp_to_quat_wxyz(sigma_bn),
        "rate_norm_end_rad_s": float(np.linalg.norm(omega_rad_s[-1])) if len(omega_rad_s) else float("nan"),
        "bdot_impl": _BDOT_IMPL,
        "steps": int(periods_ns["duration_s"] // dt_ns),
    }


@functools.cache
def _bdot_module_class():
    """Return the rate-form B-dot Basilisk module class (built on first use).

    Defined lazily so that importing this adapter does not import Basilisk.

    Returns
    -------
    type
        A ``sysModel.SysModel`` subclass; see its docstring.
    """
    from Basilisk.architecture import messaging, sysModel

    class BDotRate(sysModel.SysModel):
        """Rate-form B-dot: ``m = -k (B_k - B_{k-1}) / T`` in body axes.

        Reads ``tamInMsg`` (``TAMSensorMsgPayload.tam_S``, the sensor frame
        being the body frame) and writes ``mtbCmdOutMsg``
        (``MTBCmdMsgPayload.mtbDipoleCmds``, one entry per body-axis torque
        bar).  The first update after ``Reset`` only stores the sample and
        commands zero.  Saturation is left to ``MtbEffector``.

        Parameters
        ----------
        gain : float
            ``k`` [A m^2 s / T].
        period_s : float
            ``T``, the task period the module runs at [s].
        """

        def __init__(self, gain: float, period_s: float):
            super().__init__()
            self.tamInMsg = messaging.TAMSensorMsgReader()
            self.mtbCmdOutMsg = messaging.MTBCmdMsg()
            self._scale_Am2_per_T = -float(gain) / float(period_s)
            self._previous_T = None
            self._payload = messaging.MTBCmdMsgPayload()

        def Reset(self, CurrentSimNanos):
            """Forget the previous sample and command zero dipole."""
            self._previous_T = None
            self._payload.mtbDipoleCmds = [0.0, 0.0, 0.0]
            self.mtbCmdOutMsg.write(self._payload, CurrentSimNanos, self.moduleID)

        def UpdateState(self, CurrentSimNanos):
            """Differentiate the field sample and write the dipole command."""
            # Plain floats: for 3-vectors they are faster than numpy here.
            bx_T, by_T, bz_T = self.tamInMsg().tam_S
            previous, self._previous_T = self._previous_T, (bx_T, by_T, bz_T)
            if previous is None:
                return  # the Reset command (zero dipole) stays in force
            k = self._scale_Am2_per_T
            self._payload.mtbDipoleCmds = [k * (bx_T - previous[0]), k * (by_T - previous[1]), k * (bz_T - previous[2])]
            self.mtbCmdOutMsg.write(self._payload, CurrentSimNanos, self.moduleID)

    return BDotRate


def _build_detumble_sim(*, inertia, omega0, dt_ns, control_ns, record_ns, stop_ns, gain, control_period_s,
                        dipole_max_Am2, radius_m, inclination_rad, mag_noise_T, seed):
    """Build and initialise the Basilisk detumble simulation.

    Parameters
    ----------
    inertia : numpy.ndarray, shape (3, 3)
        Hub inertia about its centre of mass [kg m^2].
    omega0 : numpy.ndarray, shape (3,)
        Initial ``omega_BN_B`` [rad/s].
    dt_ns, control_ns, record_ns, stop_ns : int
        Dynamics task rate, flight-software task rate, recording period and
        stop time [ns].
    gain : float
        B-dot gain [A m^2 s / T].
    control_period_s : float
        B-dot period [s] (``control_ns`` in seconds).
    dipole_max_Am2 : float
        Torque-bar dipole limit [A m^2].
    radius_m : float
        Circular-orbit radius [m].
    inclination_rad : float
        Orbit inclination [rad].
    mag_noise_T : float
        Magnetometer white-noise standard deviation [T]; 0 for none.
    seed : int
        Magnetometer RNG seed.

    Returns
    -------
    tuple
        ``(sim, recorder, keep_alive)``: the initialised ``SimBaseClass``
        with its stop time configured, the ``scStateOutMsg`` recorder, and
        the list of objects (stand-alone messages, modules) that must stay
        referenced until the run ends.
    """
    from Basilisk.architecture import messaging
    from Basilisk.simulation import MtbEffector, magneticFieldCenteredDipole, magnetometer, spacecraft
    from Basilisk.utilities import SimulationBaseClass, orbitalMotion, simIncludeGravBody

    sim = SimulationBaseClass.SimBaseClass()
    process = sim.CreateNewProcess(_PROCESS_NAME)
    process.addTask(sim.CreateNewTask(_TASK_NAME, dt_ns), _DYN_TASK_PRIORITY)
    process.addTask(sim.CreateNewTask(_FSW_TASK_NAME, control_ns), _FSW_TASK_PRIORITY)

    # Spacecraft hub, then (same task, so same time) the models that read its state.
    sc = spacecraft.Spacecraft()
    sc.ModelTag = "attsimDetumble"
    sc.hub.mHub = _MASS_1U_KG
    sc.hub.r_BcB_B = [[0.0], [0.0], [0.0]]
    sc.hub.IHubPntBc_B = inertia.tolist()
    sc.hub.sigma_BNInit = [[0.0], [0.0], [0.0]]
    sc.hub.omega_BN_BInit = [[float(v)] for v in omega0]

    grav_factory = simIncludeGravBody.gravBodyFactory()
    earth = grav_factory.createEarth()
    earth.isCentralBody = True
    earth.mu = _MU_EARTH_M3_S2
    grav_factory.addBodiesTo(sc)

    elements = orbitalMotion.ClassicElements()
    elements.a = radius_m
    elements.e = 0.0
    elements.i = inclination_rad
    elements.Omega = 0.0
    elements.omega = 0.0
    elements.f = 0.0
    r_N_m, v_N_m_s = orbitalMotion.elem2rv(_MU_EARTH_M3_S2, elements)
    sc.hub.r_CN_NInit = [[float(v)] for v in r_N_m]
    sc.hub.v_CN_NInit = [[float(v)] for v in v_N_m_s]
    sim.AddModelToTask(_TASK_NAME, sc, 300)

    field = magneticFieldCenteredDipole.MagneticFieldCenteredDipole()
    field.ModelTag = "alignedDipole"
    field.g10 = -_B_EQUATOR_T  # dipole along -z: the field points north (+z) on the equator
    field.g11 = 0.0
    field.h11 = 0.0
    field.planetRadius = _R_EARTH_M
    field.addSpacecraftToModel(sc.scStateOutMsg)
    sim.AddModelToTask(_TASK_NAME, field, 200)

    mtb_params = messaging.MTBArrayConfigMsgPayload()
    mtb_params.numMTB = 3
    mtb_params.GtMatrix_B = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]  # row-major, bar axes as columns
    mtb_params.maxMtbDipoles = [dipole_max_Am2] * 3
    mtb_params_msg = messaging.MTBArrayConfigMsg().write(mtb_params)

    mtb = MtbEffector.MtbEffector()
    mtb.ModelTag = "mtb"
    sc.addDynamicEffector(mtb)
    sim.AddModelToTask(_TASK_NAME, mtb, 100)

    recorder = sc.scStateOutMsg.recorder(record_ns)
    sim.AddModelToTask(_TASK_NAME, recorder, 0)

    # Flight software at control_period_s: magnetometer, then B-dot.
    tam = magnetometer.Magnetometer()
    tam.ModelTag = "tam"
    tam.RNGSeed = seed
    if mag_noise_T > 0.0:
        tam.senNoiseStd = [mag_noise_T] * 3
        # White noise: a zero Gauss-Markov propagation matrix leaves no memory
        # between samples (2.12.1 already behaves so; this pins it down).
        tam.setAMatrix(np.zeros((3, 3)))
    tam.stateInMsg.subscribeTo(sc.scStateOutMsg)
    tam.magInMsg.subscribeTo(field.envOutMsgs[0])
    sim.AddModelToTask(_FSW_TASK_NAME, tam, 200)

    bdot = _bdot_module_class()(gain, control_period_s)
    bdot.ModelTag = "bdot"
    bdot.tamInMsg.subscribeTo(tam.tamDataOutMsg)
    sim.AddModelToTask(_FSW_TASK_NAME, bdot, 100)

    mtb.mtbCmdInMsg.subscribeTo(bdot.mtbCmdOutMsg)
    mtb.mtbParamsInMsg.subscribeTo(mtb_params_msg)
    mtb.magInMsg.subscribeTo(field.envOutMsgs[0])

    sim.InitializeSimulation()
    sim.ConfigureStopTime(stop_ns)
    return sim, recorder, [mtb_params_msg, mtb_params, grav_factory, bdot, tam, mtb, field, sc]
