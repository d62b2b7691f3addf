"""attsim: spacecraft attitude dynamics for the satellite use case.

The public API::

    import attsim
    df = attsim.propagate(inertia, omega0, q0=(1, 0, 0, 0), t_end=40.0, dt=0.01,
                          method="rk4", torque=None)
    attsim.methods()

Submodules follow the layers: ``rotations``, ``inertia``, ``dynamics`` and
``integrators``, ``analysis``. Heavy dependencies (pandas, numba, scipy) are
imported on first use, so ``import attsim`` stays fast.
"""

from __future__ import annotations

import importlib

from .errors import AttsimError, AttsimWarning, GimbalLockError, InputError, NonPhysicalInertiaError, TorqueError

__version__ = "0.1.0"

__all__ = [
    "AttsimError",
    "AttsimWarning",
    "InputError",
    "NonPhysicalInertiaError",
    "TorqueError",
    "propagate",
    "methods",
    "rotations",
    "inertia",
    "dynamics",
    "integrators",
    "analysis",
    "__version__",
]

# name -> module that defines it; resolved on first attribute access (PEP 562)
_LAZY = {
    "propagate": "attsim.propagation",
    "methods": "attsim.propagation",
    "Mission": "attsim.engine.mission",
    "ControllerError": "attsim.engine.mission",
    "Telemetry": "attsim.telemetry.recorder",
    "load": "attsim.telemetry.recorder",
    "TorqueSchedule": "attsim.actuators.devices",
    "CommandSchedule": "attsim.actuators.devices",
    "Thruster": "attsim.actuators.devices",
    "Magnetorquer": "attsim.actuators.devices",
    "ReactionWheel": "attsim.actuators.devices",
    "BodyTorque": "attsim.actuators.devices",
    "Gyro": "attsim.sensors.devices",
    "Magnetometer": "attsim.sensors.devices",
    "SunSensor": "attsim.sensors.devices",
    "StarTracker": "attsim.sensors.devices",
    "HorizonSensor": "attsim.sensors.horizon",
    "SensorFault": "attsim.sensors.faults",
    "Component": "attsim.engine.component",
    "Controller": "attsim.control.base",
    "FunctionController": "attsim.control.base",
    "BDot": "attsim.control.laws",
    "QuaternionPD": "attsim.control.laws",
    "MagneticPD": "attsim.control.laws",
    "MRPFeedback": "attsim.control.mrp_feedback",
    "MomentumUnloading": "attsim.control.laws",
    "NumbaController": "attsim.control.numba_law",
    "MEKF": "attsim.estimation.mekf",
    "ModeManager": "attsim.control.modes",
    "TRUTH": "attsim.control.knowledge",
    "report": "attsim.reporting",
    "Propagation": "attsim.studies",
    "Environment": "attsim.environment",
    "Face": "attsim.environment",
    "KeplerOrbit": "attsim.environment",
    "TLEOrbit": "attsim.environment",
    "Campaign": "attsim.campaign",
    "Requirement": "attsim.requirements",
    "Window": "attsim.windows",
    "Ensemble": "attsim.ensemble",
}
_SUBMODULES = {"rotations", "inertia", "dynamics", "integrators", "analysis", "torque", "engine", "telemetry",
               "reporting", "actuators", "sensors", "control", "environment", "testing", "validation", "cli", "studies",
               "allocation", "dispersions", "modes", "guidance", "estimation", "campaign", "criteria", "scripts",
               "plausibility", "requirements", "windows", "ensemble", "rl"}
__all__ += sorted(set(_LAZY) - set(__all__)) + ["GimbalLockError"]


def __getattr__(name: str):
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
    elif name in _SUBMODULES:
        value = importlib.import_module(f"attsim.{name}")
    else:
        raise AttributeError(f"module 'attsim' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY) | _SUBMODULES)
