"""Basilisk peer: a Monte Carlo campaign of the closed-loop wheel-pointing orbit through Basilisk's ``Controller``.

The campaign of ``tools/bench_campaign.py`` done the way a Basilisk user
does one: ``Basilisk.utilities.MonteCarlo.Controller`` with a creation
function, an execution function, two dispersions, a retention policy and an
archive directory, run on ``processes`` processes. Like the other peers it
imports nothing from attsim.

What each run is
----------------
:func:`tools.peers.basilisk_rw.run_rw_pointing` (Basilisk's ``inertial3D``
-> ``attTrackingError`` -> ``mrpFeedback`` -> ``rwMotorTorque`` on three
wheels, 10 Hz, RK4 at 0.1 s, one orbit) from a dispersed initial attitude
and rate. The creation function returns a :class:`RwCase` holding the run's
initial conditions; the Controller applies the dispersions to it (its
``sigma_BNInit`` and ``omega_BN_BInit``, the names of the hub's own
fields), and the execution function builds and runs the Basilisk
simulation from it. Building the simulation in the execution function
instead of the creation function moves no work out of the timed run.

Dispersions: the initial attitude is the nominal one turned by a rotation
vector drawn from N(0, std^2 I) (body axes; :class:`AttitudeErrorDispersion`),
the rate N(mean, std^2) per axis (Basilisk's ``NormalVectorCartDispersion``);
the same distributions as the attsim side, drawn from Basilisk's per-run
seeds (``index * 10``) rather than attsim's.

Retention: the final attitude and rate of each run only (a retention
function), which the parent reads back to check that every run converged.
Retaining less than attsim's campaign evaluates (its criteria read the whole
1 Hz telemetry) can only make Basilisk faster. Note that Basilisk's
``SimulationExecutor`` sleeps one second after handing a run's retained data
to its data-writer process, and that ``executeSimulations`` starts a new
process pool for each batch of ``processes`` runs: both are part of what a
Basilisk campaign costs, and both are timed here.
"""

from __future__ import annotations

import functools
import os
import tempfile
import time

import numpy as np

from .basilisk_peer import _mrp_to_quat_wxyz, _quat_wxyz_to_mrp, available, version

__all__ = ["available", "version", "run_campaign", "RwCase", "AttitudeErrorDispersion"]


class RwCase:
    """What the Controller disperses: the run's initial hub attitude (MRP) and rate, and the scenario."""

    def __init__(self, scenario: dict, sigma_BNInit, omega_BN_BInit):
        self.scenario = scenario
        self.sigma_BNInit = list(sigma_BNInit)
        self.omega_BN_BInit = list(omega_BN_BInit)
        self.result = None


def _create(scenario: dict, q0_wxyz, omega0_rad_s) -> RwCase:
    return RwCase(scenario, _quat_wxyz_to_mrp(q0_wxyz).tolist(), list(omega0_rad_s))


def _execute(case: RwCase) -> None:
    from . import basilisk_rw

    q0 = _mrp_to_quat_wxyz(np.asarray(case.sigma_BNInit, dtype=float).reshape(1, 3))[0]
    case.result = basilisk_rw.run_rw_pointing(q0_wxyz=q0, omega0_rad_s=np.asarray(case.omega_BN_BInit, dtype=float),
                                              **case.scenario)


def _retain(case: RwCase) -> dict:
    result = case.result
    return {"q_final_wxyz": np.asarray(result["q_wxyz"][-1]),
            "omega_final_rad_s": np.asarray(result["omega_rad_s"][-1]),
            "t_final_s": float(result["t_s"][-1]), "samples": int(len(result["t_s"])),
            "sigma_BNInit": list(case.sigma_BNInit), "omega_BN_BInit": list(case.omega_BN_BInit)}


def _quat_multiply(p, q) -> np.ndarray:
    pw, px, py, pz = p
    qw, qx, qy, qz = q
    return np.array([pw * qw - px * qx - py * qy - pz * qz, pw * qx + px * qw + py * qz - pz * qy,
                     pw * qy - px * qz + py * qw + pz * qx, pw * qz + px * qy - py * qx + pz * qw])


class AttitudeErrorDispersion:
    """MRP of ``q_nominal (x) exp(phi)``, ``phi ~ N(0, std_rad^2 I)`` in body axes (Hamilton, scalar first).

    The interface the Controller uses of a Basilisk vector dispersion
    (``getName``, ``generate``, ``generateString``), defined here at module
    level so that the Controller can pickle it to its worker processes.
    """

    def __init__(self, varName, q_nominal_wxyz, std_rad):
        self.varName = varName
        self.q_nominal = np.asarray(q_nominal_wxyz, dtype=float)
        self.std_rad = float(std_rad)

    def getName(self):
        return self.varName

    def generate(self, sim=None):
        phi = np.random.normal(0.0, self.std_rad, 3)  # the Controller seeds numpy's generator per run
        angle = float(np.linalg.norm(phi))
        axis = phi / angle if angle > 0.0 else np.array([1.0, 0.0, 0.0])
        turn = np.concatenate([[np.cos(angle / 2.0)], np.sin(angle / 2.0) * axis])
        return _quat_wxyz_to_mrp(_quat_multiply(self.q_nominal, turn)).tolist()

    def generateString(self, sim=None):
        return "[" + ",".join(repr(float(v)) for v in self.generate(sim)) + "]"

    def getDispersionMag(self):
        return []

    def generateMagString(self):
        return "[]"


def run_campaign(runs: int, processes: int, q0_wxyz, attitude_std_rad: float, omega0_mean_rad_s, omega0_std_rad_s,
                 archive_dir=None, **scenario) -> dict:
    """Run ``runs`` dispersed one-orbit pointing runs through Basilisk's Monte Carlo ``Controller``.

    Parameters
    ----------
    runs, processes : int
        Executions and worker processes (``setExecutionCount``, ``setThreadCount``).
    q0_wxyz, attitude_std_rad : nominal initial ``q_IB`` and the std of the rotation vector that turns it.
    omega0_mean_rad_s, omega0_std_rad_s : per-axis mean and std of the initial rate.
    archive_dir : str, optional
        The Controller's archive directory (a temporary one by default).
    **scenario
        The other arguments of :func:`tools.peers.basilisk_rw.run_rw_pointing`
        (inertia, wheels, gains, target, duration, steps).

    Returns
    -------
    dict
        ``wall_s`` (``executeSimulations`` only), ``cpu_s`` (this process and
        its children, over the same interval), ``failed`` (indices),
        ``finals``: one retained dict per successful run, in run order.
    """
    import resource

    from Basilisk.utilities.MonteCarlo.Controller import Controller
    from Basilisk.utilities.MonteCarlo.Dispersions import NormalVectorCartDispersion
    from Basilisk.utilities.MonteCarlo.RetentionPolicy import RetentionPolicy

    holder = None if archive_dir is not None else tempfile.TemporaryDirectory(prefix="bsk-mc-")
    archive = archive_dir if archive_dir is not None else holder.name
    try:
        mc = Controller()
        mc.setSimulationFunction(functools.partial(_create, dict(scenario), list(map(float, q0_wxyz)),
                                                   list(map(float, omega0_mean_rad_s))))
        mc.setExecutionFunction(_execute)
        mc.setExecutionCount(int(runs))
        mc.setThreadCount(int(processes))
        mc.setVerbose(False)
        mc.setShowProgressBar(False)
        mc.setArchiveDir(os.path.join(archive, "mc"))
        mc.addDispersion(AttitudeErrorDispersion("sigma_BNInit", q0_wxyz, attitude_std_rad))
        mc.addDispersion(NormalVectorCartDispersion("omega_BN_BInit", mean=list(map(float, omega0_mean_rad_s)),
                                                    stdDeviation=list(map(float, omega0_std_rad_s))))
        policy = RetentionPolicy()
        policy.addRetentionFunction(_retain)
        mc.addRetentionPolicy(policy)

        def cpu() -> float:
            own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
            return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime

        cpu_start, start = cpu(), time.perf_counter()
        failed = mc.executeSimulations()
        wall_s, cpu_s = time.perf_counter() - start, cpu() - cpu_start
        finals = [mc.getRetainedData(k)["custom"] for k in range(int(runs)) if k not in set(failed)]
        return {"wall_s": wall_s, "cpu_s": cpu_s, "failed": list(failed), "finals": finals}
    finally:
        if holder is not None:
            holder.cleanup()
