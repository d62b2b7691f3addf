"""attsim: spacecraft attitude dynamics for the satellite use case.

The public API (``shared/DESIGN.md``)::

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
    "Mission": "attsim.engine",
    "ControllerError": "attsim.engine",
    "Telemetry": "attsim.telemetry",
    "load": "attsim.telemetry",
    "TorqueSchedule": "attsim.actuators",
    "CommandSchedule": "attsim.actuators",
    "Thruster": "attsim.actuators",
    "Magnetorquer": "attsim.actuators",
    "ReactionWheel": "attsim.actuators",
    "Gyro": "attsim.sensors",
    "Magnetometer": "attsim.sensors",
    "SunSensor": "attsim.sensors",
    "StarTracker": "attsim.sensors",
    "SensorFault": "attsim.sensor_faults",
    "Controller": "attsim.control",
    "FunctionController": "attsim.control",
    "BDot": "attsim.controllers",
    "QuaternionPD": "attsim.controllers",
    "MagneticPD": "attsim.controllers",
    "MomentumUnloading": "attsim.controllers",
    "NumbaController": "attsim.numba_controller",
    "MEKF": "attsim.estimators",
    "ModeManager": "attsim.modes",
    "TRUTH": "attsim.knowledge",
    "report": "attsim.reporting",
    "Propagation": "attsim.studies",
    "Environment": "attsim.environment",
    "Face": "attsim.environment",
    "KeplerOrbit": "attsim.environment",
    "TLEOrbit": "attsim.environment",
    "Campaign": "attsim.campaign",
    "Requirement": "attsim.requirements",
    "Window": "attsim.windows",
}
_SUBMODULES = {"rotations", "inertia", "dynamics", "integrators", "analysis", "schema", "torque", "engine", "telemetry",
               "reporting", "actuators", "sensors", "control", "controllers", "environment", "testing", "validation",
               "cli", "studies", "estimators", "mekf", "allocation", "dispersions", "modes", "guidance", "estimation",
               "knowledge", "plausibility", "requirements", "windows", "criteria"}
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
