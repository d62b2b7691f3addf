"""bsk_rl peer: the simulated seconds per wall second of bsk_rl's closest attitude environment.

bsk_rl (PyPI ``bsk-rl``, built on Basilisk, PyPI ``bsk``) has no fine-grained
attitude action: no wheel-torque or body-torque action. Its closest one is
``act.AttitudeSetpoint``, a continuous action setting an inertial MRP
reference that Basilisk's flight software (``BasicFSWModel``:
``attTrackingError``, ``mrpFeedback``, ``rwMotorTorque``) tracks with the
reaction wheels for ``control_period`` seconds. The environment measured here
is that action on one satellite, the attitude counterpart of attsim's
``attsim/Pointing-v0``:

* ``SatelliteTasking`` with one ``Satellite`` whose ``dyn_type`` is
  ``BasicDynamicsModel`` (Basilisk ``spacecraft`` hub, integrated with its
  default fixed-step RK4; three HR16-like reaction wheels; thrusters for
  desaturation, solar panel, battery and power sinks; Earth gravity with
  spherical harmonics to degree 10 and the Sun as a third body) and whose
  ``fsw_type`` is ``BasicFSWModel``;
* ``sim_rate = 0.1 s``: bsk_rl runs the dynamics (one RK4 step) and the flight
  software at this one rate, so the RK4 step and the control rate are both
  attsim's 0.1 s;
* observation: ``sigma_BN``, ``omega_BN_B`` and the wheel speeds
  (``obs.SatProperties``); every other satellite argument is bsk_rl's default
  (random orbit, random initial wheel speeds).

:func:`measure` times ``env.step`` with a fixed setpoint after a reset and a
warm-up, as medians of repeats, for a ``control_period_s`` of 0.1 s (attsim's
control period) or longer (bsk_rl's own default is 60 s).

Support data. bsk_rl's world model and its satellites' trajectory simulator
load Basilisk's support data: the gravity field ``GGM03S.txt`` and the SPICE
kernels ``de430.bsp``, ``naif0012.tls``, ``de-403-masses.tpc`` and
``pck00010.tpc``, which Basilisk downloads into its cache
(``BSK_SUPPORT_DATA_CACHE``) on first use. When the SPICE kernels are not
there (a machine without access to the data hosts), :func:`measure` replaces
the SPICE interface with Basilisk's ``planetEphemeris`` module (the Earth on a
circular heliocentric orbit, turning at its sidereal rate), the only change to
bsk_rl's environment, and says so in the settings it returns. SPICE evaluates
the ephemerides at every world step, so the stand-in, if anything, makes
bsk_rl a little faster than it is with SPICE. The gravity field has no
stand-in: without ``GGM03S.txt``, :func:`measure` raises ``FileNotFoundError``.

Imports nothing from attsim; bsk_rl and Basilisk are imported inside the
functions, so that importing this module does not need them.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import NamedTuple

import numpy as np

__all__ = ["available", "version", "measure", "Measure"]

SIM_RATE_S = 0.1
_SPICE_KERNELS = ("de430", "naif0012", "de_403_masses", "pck00010")
_AU_M = 149597870700.0
_EARTH_SIDEREAL_RATE_RAD_S = 7.2921159e-5
_OBLIQUITY_RAD = np.radians(23.44)


class Measure(NamedTuple):
    """One timed run of the bsk_rl environment."""

    simulated_s_per_wall_s: float
    steps_per_s: float  # environment steps per wall second
    simulated_s_per_cpu_s: float  # per CPU-second of the process
    settings: str  # what ran besides the control period: environment, models, rates, support data


def available() -> bool:
    """Tell whether bsk_rl and Basilisk can be imported."""
    try:
        import Basilisk  # noqa: F401
        import bsk_rl  # noqa: F401
    except ImportError:
        return False
    return True


def version() -> str:
    """The installed ``bsk-rl`` and ``bsk`` (Basilisk) versions, as ``"bsk-rl X, Basilisk Y"``."""
    from importlib.metadata import version as dist_version

    return f"bsk-rl {dist_version('bsk-rl')}, Basilisk {dist_version('bsk')}"


def _support_file_present(file_enum) -> bool:
    """Whether Basilisk's support-data file is on disk (a local checkout or the download cache), without trying
    to download it (a failing download retries for ~20 s)."""
    from Basilisk.utilities.supportDataTools import dataFetcher

    rel = dataFetcher.relpath(file_enum)
    local = dataFetcher.local_support_path(rel)
    return (local is not None and local.exists()) or (Path(dataFetcher.POOCH.abspath) / rel).is_file()


def spice_kernels_present() -> bool:
    """Whether the four SPICE kernels bsk_rl's world loads are on disk."""
    from Basilisk.utilities.supportDataTools.dataFetcher import DataFile

    return all(_support_file_present(getattr(DataFile.EphemerisData, name)) for name in _SPICE_KERNELS)


def _install_ephemeris_stand_in() -> None:
    """Make ``gravBodyFactory.createSpiceInterface`` build a ``planetEphemeris`` module in place of SPICE, and
    bsk_rl's look-up of ``de430.bsp`` (whose folder it passes to that function) return a placeholder path.

    The module's outputs are the SPICE interface's (``SpicePlanetStateMsg``, one per gravity body in the
    factory's order, zero base as set afterwards); only their attribute name differs, hence the subclass.
    """
    import bsk_rl.sim.world
    import bsk_rl.utils.orbital
    from Basilisk.simulation import planetEphemeris
    from Basilisk.utilities import simIncludeGravBody
    from Basilisk.utilities.supportDataTools.dataFetcher import DataFile

    class EphemerisStandIn(planetEphemeris.PlanetEphemeris):
        @property
        def planetStateOutMsgs(self):  # the SPICE interface's name for the same messages
            return self.planetOutMsgs

    def create_stand_in(factory, *args, **kwargs):
        names = list(factory.gravBodies)
        ephemeris = EphemerisStandIn()
        ephemeris.ModelTag = "planetEphemerisStandIn"
        ephemeris.setPlanetNames(planetEphemeris.StringVector(names))
        elements = []
        for name in names:
            oe = planetEphemeris.ClassicElements()
            # the Earth on a circular orbit in the ecliptic; the Sun (the heliocentric origin) on a 1 m circle,
            # as the module needs an orbit for every body
            oe.a, oe.e, oe.i = (_AU_M, 0.0, _OBLIQUITY_RAD) if name == "earth" else (1.0, 0.0, 0.0)
            oe.Omega = oe.omega = oe.f = 0.0
            elements.append(oe)
        ephemeris.planetElements = planetEphemeris.classicElementVector(elements)
        ephemeris.rightAscension = planetEphemeris.DoubleVector([0.0] * len(names))
        ephemeris.declination = planetEphemeris.DoubleVector([np.pi / 2] * len(names))
        ephemeris.lst0 = planetEphemeris.DoubleVector([0.0] * len(names))
        ephemeris.rotRate = planetEphemeris.DoubleVector(
            [_EARTH_SIDEREAL_RATE_RAD_S if name == "earth" else 0.0 for name in names])
        for c, body in enumerate(factory.gravBodies.values()):
            body.planetBodyInMsg.subscribeTo(ephemeris.planetOutMsgs[c])
        factory.spiceObject = ephemeris
        return ephemeris

    real_get_path = bsk_rl.sim.world.get_path

    def get_path(file_enum):
        if file_enum == DataFile.EphemerisData.de430:
            return Path(real_get_path(DataFile.LocalGravData.GGM03S)).parent / "no-spice" / "de430.bsp"
        return real_get_path(file_enum)

    simIncludeGravBody.gravBodyFactory.createSpiceInterface = create_stand_in
    bsk_rl.sim.world.get_path = get_path
    bsk_rl.utils.orbital.get_path = get_path


def make_env(control_period_s: float):
    """bsk_rl's ``SatelliteTasking`` environment with one satellite under ``act.AttitudeSetpoint`` (module
    docstring)."""
    from bsk_rl import SatelliteTasking, act, obs, sats
    from bsk_rl.sim import dyn, fsw

    class AttitudeSatellite(sats.Satellite):
        observation_spec = [obs.SatProperties(dict(prop="sigma_BN"), dict(prop="omega_BN_B"),
                                              dict(prop="wheel_speeds"))]
        action_spec = [act.AttitudeSetpoint(control_period=control_period_s)]
        dyn_type = dyn.BasicDynamicsModel
        fsw_type = fsw.BasicFSWModel

    return SatelliteTasking(satellite=AttitudeSatellite("sat"), sim_rate=SIM_RATE_S, log_level="ERROR")


def measure(control_period_s: float = 0.1, steps: int = 100, repeats: int = 3) -> Measure:
    """Simulated seconds per wall second of bsk_rl's ``AttitudeSetpoint`` environment (module docstring).

    Parameters
    ----------
    control_period_s : float
        The action's ``control_period``: the simulated time of one ``env.step``.
    steps : int
        Environment steps per timed repeat (one more batch runs first as a warm-up, after ``reset(seed=0)``).
    repeats : int
        Timed repeats; the medians are returned.

    Raises
    ------
    FileNotFoundError
        When Basilisk's gravity field ``GGM03S.txt`` is neither in a local checkout nor in the download cache
        and cannot be downloaded.
    """
    from Basilisk.utilities.supportDataTools.dataFetcher import DataFile

    if not _support_file_present(DataFile.LocalGravData.GGM03S):
        from Basilisk.utilities.supportDataTools.dataFetcher import get_path

        get_path(DataFile.LocalGravData.GGM03S)  # downloads it, or raises FileNotFoundError
    spice = spice_kernels_present()
    if not spice:
        _install_ephemeris_stand_in()
    env = make_env(control_period_s)
    env.reset(seed=0)
    setpoint = np.array([0.1, -0.2, 0.3], dtype=np.float32)  # an inertial MRP reference, held throughout

    def run():
        for _ in range(steps):
            env.step(setpoint)

    run()
    walls, cpus, simulated = [], [], []
    for _ in range(repeats):
        t0_s = env.unwrapped.simulator.sim_time
        wall, cpu = time.perf_counter(), time.process_time()
        run()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
        simulated.append(env.unwrapped.simulator.sim_time - t0_s)
    env.close()
    sim_s = statistics.median(simulated)
    wall_s, cpu_s = statistics.median(walls), statistics.median(cpus)
    ephemeris = "SPICE (de430)" if spice else "planetEphemeris stand-in (SPICE kernels absent; module docstring)"
    settings = (f"SatelliteTasking, one Satellite: BasicDynamicsModel (spacecraft hub, RK4; 3 RWs; GGM03S gravity "
                f"to degree 10 + Sun) + BasicFSWModel (attTrackingError, mrpFeedback, rwMotorTorque); action "
                f"AttitudeSetpoint (an inertial MRP setpoint held for its control_period); sim_rate (RK4 step "
                f"and FSW rate) {SIM_RATE_S:g} s; ephemeris {ephemeris}")
    return Measure(sim_s / wall_s, steps / wall_s, sim_s / cpu_s, settings)
