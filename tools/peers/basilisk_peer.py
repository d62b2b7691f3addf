"""Basilisk peer: run attsim's torque-free rigid-body case in Basilisk.

This adapter builds the *same* torque-free rigid-body problem in Basilisk
(PyPI package ``bsk``) so that benchmark scripts can compare speed and
accuracy with attsim in the same process.  It imports nothing from attsim
and needs only ``numpy`` and (optionally) ``Basilisk``.

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

import time

import numpy as np

__all__ = ["available", "version", "run_torque_free"]

_TASK_NAME = "dynTask"
_PROCESS_NAME = "dynProcess"


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

    inertia = np.asarray(inertia_kg_m2, dtype=float)
    omega0 = np.asarray(omega0_rad_s, dtype=float).reshape(3)
    if inertia.shape != (3, 3):
        raise ValueError(f"inertia_kg_m2 must be 3x3, got shape {inertia.shape}")
    if not np.allclose(inertia, inertia.T, rtol=0.0, atol=1e-12 * np.abs(inertia).max()):
        raise ValueError("inertia_kg_m2 must be symmetric")
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
