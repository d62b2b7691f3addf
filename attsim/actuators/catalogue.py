"""A small hardware catalogue, as Basilisk's ``rwFactory``: reaction wheels and magnetorquers by name.

Every figure carries its source (:data:`SOURCES`) and whether the source
publishes it or estimates it, so a mission names its hardware
(``ReactionWheel.from_catalogue("Honeywell HR16", max_momentum_Nms=50, ...)``)
instead of copying numbers, and a reader can check each one. A figure no
source gives is ``None``: the mission must give it (it is refused, not
guessed).

Conventions, Basilisk's (``simIncludeRW.rwFactory.create``): the rotor's
spin inertia is the maximum momentum over the maximum speed (``Js =
maxMomentum / Omega_max``); friction and imbalance are off unless asked for
(``useRWfriction=False``, ``RWModel=BalancedWheels``). Basilisk's minimum
torque ``u_min`` is not modelled by attsim's wheel and is not listed.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from .._core.validate import one_of, positive_scalar
from ..errors import InputError

__all__ = ["Figure", "WheelSpec", "MagnetorquerSpec", "CatalogueWheel", "SOURCES", "WHEELS", "MAGNETORQUERS",
           "wheel_spec", "magnetorquer_spec", "wheel_arguments", "RPM"]

RPM = 2.0 * math.pi / 60.0  # rad/s per rpm

SOURCES = {
    "basilisk": "Basilisk, src/utilities/simIncludeRW.py, rwFactory (AVSLab/basilisk develop, commit babdff7a, "
                "2026-07-24)",
    "basilisk estimate": "Basilisk's rwFactory, marked there as an estimate ('Guestimate', or 'fields not listed "
                         "are estimates')",
    "honeywell": "Honeywell, Constellation Series Reaction Wheels data sheet, as transcribed in Basilisk's rwFactory "
                 "(http://www51.honeywell.com/aero/common/documents/Constellation_Series_Reaction_Wheels.pdf)",
    "bct": "Blue Canyon Technologies, Reaction Wheels data sheet "
           "(https://storage.googleapis.com/blue-canyon-tech-news/1/2019/10/"
           "BCT_DataSheet_Components_ReactionWheels_F2.pdf), as transcribed in Basilisk's rwFactory",
    "bct rwp050": "Blue Canyon Technologies RWP050 data sheet figures as listed by satsearch (dss-adcs test data, "
                  "TU Delft, 2018: mass 0.24 kg, torque 0.007 N m) and in WPI CubeSat MQP reports (momentum 0.050 "
                  "N m s, torque 0.007 N m, mass 0.24 kg, 58 x 58 x 25 mm, < 1 W)",
    "nanoavionics": "NanoAvionics RW0 data sheet, as transcribed in Basilisk's rwFactory "
                    "(https://nanoavionics.com/cubesat-components/cubesat-reaction-wheels-control-system-satbus-4rw/)",
    "newspace": "NewSpace Systems NCTR-M002 magnetorquer rod data sheet, as quoted in WPI CubeSat MQP reports "
                "(magnetic moment > 0.2 A m^2 at 200 mW and 5 V, residual moment < 0.001 A m^2, 70 mm x 10 mm)",
    "derived": "derived: maximum momentum / maximum speed (Basilisk's rwFactory sets Js so)",
}


class Figure(NamedTuple):
    """One catalogue number: ``value`` (SI, the unit in the field's name; None where no source gives it), the key
    of its source in :data:`SOURCES`, and whether the source publishes it or estimates it."""

    value: float | None
    source: str
    published: bool = True


class WheelSpec(NamedTuple):
    """A reaction wheel as its sources give it (each field a :class:`Figure`)."""

    model: str
    max_momentum_Nms: Figure
    max_torque_Nm: Figure
    max_speed_rad_s: Figure
    inertia_kg_m2: Figure
    coulomb_friction_Nm: Figure
    static_imbalance_kg_m: Figure
    dynamic_imbalance_kg_m2: Figure
    mass_kg: Figure


class MagnetorquerSpec(NamedTuple):
    """A magnetorquer rod as its source gives it (each field a :class:`Figure`)."""

    model: str
    dipole_max_Am2: Figure
    residual_dipole_Am2: Figure
    power_W: Figure


def _wheel(model, momentum, torque, speed_rpm, coulomb, static, dynamic, mass) -> WheelSpec:
    """A wheel from ``(value, source, published)`` triples (speed in rpm, as the sources give it); the inertia
    derived as Basilisk derives it."""
    speed = Figure(None if speed_rpm[0] is None else speed_rpm[0] * RPM, *speed_rpm[1:])
    inertia = Figure(None if speed.value is None else momentum[0] / speed.value, "derived", speed.published)
    return WheelSpec(model, Figure(*momentum), Figure(*torque), speed, inertia, Figure(*coulomb), Figure(*static),
                     Figure(*dynamic), Figure(*mass))


def _honeywell(model, sizes) -> dict:
    """The three momentum sizes of a Honeywell Constellation wheel: 6000 rpm, 0.2 N m, 0.5 mN m Coulomb friction;
    ``sizes`` maps the momentum (N m s) to (mass kg, U_s kg m, U_d kg m^2)."""
    return {momentum: _wheel(model, (float(momentum), "honeywell", True), (0.200, "honeywell", True),
                             (6000.0, "honeywell", True), (0.0005, "honeywell", True), (u_s, "honeywell", True),
                             (u_d, "honeywell", True), (mass, "honeywell", True))
            for momentum, (mass, u_s, u_d) in sizes.items()}


# model -> {max momentum N m s: WheelSpec}; a model with one size has one key
WHEELS = {
    "Honeywell HR16": _honeywell("Honeywell HR16", {100: (12.0, 4.8e-6, 15.4e-7), 75: (10.4, 3.8e-6, 11.5e-7),
                                                    50: (9.0, 2.8e-6, 7.7e-7)}),
    "Honeywell HR14": _honeywell("Honeywell HR14", {75: (10.6, 4.8e-6, 13.7e-7), 50: (8.5, 3.5e-6, 9.1e-7),
                                                    25: (7.5, 2.2e-6, 4.6e-7)}),
    "Honeywell HR12": _honeywell("Honeywell HR12", {50: (9.5, 4.4e-6, 9.1e-7), 25: (7.0, 2.4e-6, 4.6e-7),
                                                    12: (6.0, 1.5e-6, 2.2e-7)}),
    "Blue Canyon RWP015": {0.015: _wheel(
        "Blue Canyon RWP015", (0.015, "bct", True), (0.004, "bct", True), (6000.0, "basilisk estimate", False),
        (0.00005, "basilisk estimate", False), (1e-7, "basilisk estimate", False), (1e-8, "basilisk estimate", False),
        (0.130, "bct", True))},
    "Blue Canyon RWP050": {0.050: _wheel(
        "Blue Canyon RWP050", (0.050, "bct rwp050", True), (0.007, "bct rwp050", True), (None, "bct rwp050", False),
        (None, "bct rwp050", False), (None, "bct rwp050", False), (None, "bct rwp050", False),
        (0.24, "bct rwp050", True))},
    "NanoAvionics RW0": {0.020: _wheel(
        "NanoAvionics RW0", (0.020, "nanoavionics", True), (3.2e-3, "nanoavionics", True),
        (6500.0, "nanoavionics", True), (0.00005, "basilisk estimate", False), (1e-7, "basilisk estimate", False),
        (1e-8, "basilisk estimate", False), (0.127, "nanoavionics", True))},
}

MAGNETORQUERS = {
    "NewSpace NCTR-M002": MagnetorquerSpec("NewSpace NCTR-M002", Figure(0.2, "newspace"), Figure(0.001, "newspace"),
                                           Figure(0.2, "newspace")),
}


def wheel_spec(model: str, max_momentum_Nms: float | None = None) -> WheelSpec:
    """The catalogue's wheel ``model`` in its ``max_momentum_Nms`` size (needed where the model comes in several:
    the Honeywell wheels, in Basilisk's three sizes each)."""
    sizes = WHEELS[one_of(model, "model", sorted(WHEELS))]
    if max_momentum_Nms is None:
        if len(sizes) > 1:
            raise InputError("max_momentum_Nms", f"must be given for the {model}, which comes in several sizes",
                             f"one of {sorted(sizes)} N m s")
        return next(iter(sizes.values()))
    momentum = positive_scalar(max_momentum_Nms, "max_momentum_Nms")
    for size, spec in sizes.items():
        if math.isclose(momentum, size, rel_tol=1e-9):
            return spec
    raise InputError("max_momentum_Nms", f"must be one of the {model}'s sizes", f"got {momentum:g}, sizes "
                     f"{sorted(sizes)} N m s")


def magnetorquer_spec(model: str) -> MagnetorquerSpec:
    """The catalogue's magnetorquer rod ``model``."""
    return MAGNETORQUERS[one_of(model, "model", sorted(MAGNETORQUERS))]


class CatalogueWheel(NamedTuple):
    """What :meth:`~attsim.actuators.devices.ReactionWheel.from_catalogue` builds from: the wheel's keyword
    arguments and the label its description carries (``meta.json``'s ``catalogue_model``)."""

    arguments: dict
    label: str


def _given(figure: Figure, field: str, model: str) -> float:
    if figure.value is None:
        raise InputError(field, f"is not published for the {model}: give it ({field}=...), or build a "
                         "ReactionWheel with your own figures", f"sources: {SOURCES[figure.source]}")
    return figure.value


def wheel_arguments(model: str, max_momentum_Nms: float | None = None, *, friction: bool = False,
                    imbalance: bool = False, position_m=None, max_speed_rad_s: float | None = None) -> CatalogueWheel:
    """A catalogue wheel's :class:`~attsim.actuators.devices.ReactionWheel` keyword arguments.

    ``friction`` adds its Coulomb friction, ``imbalance`` its static and
    dynamic imbalance (the static one acting at ``position_m``), as
    Basilisk's ``useRWfriction`` and ``RWModel=JitterSimple``;
    ``max_speed_rad_s`` is accepted only for a model whose sources give no
    maximum speed (the RWP050), and the spin inertia follows from it.
    """
    spec = wheel_spec(model, max_momentum_Nms)
    if max_speed_rad_s is None:
        speed = _given(spec.max_speed_rad_s, "max_speed_rad_s", model)
    elif spec.max_speed_rad_s.value is not None:
        raise InputError("max_speed_rad_s", f"is the catalogue's for the {model} "
                         f"({spec.max_speed_rad_s.value / RPM:g} rpm): build a ReactionWheel for other figures")
    else:
        speed = positive_scalar(max_speed_rad_s, "max_speed_rad_s")
    arguments = {"inertia_kg_m2": spec.max_momentum_Nms.value / speed, "max_torque_Nm": spec.max_torque_Nm.value,
                 "max_speed_rad_s": speed}
    if friction:
        arguments["coulomb_friction_Nm"] = _given(spec.coulomb_friction_Nm, "friction", model)
    if imbalance:
        arguments["static_imbalance_kg_m"] = _given(spec.static_imbalance_kg_m, "imbalance", model)
        arguments["dynamic_imbalance_kg_m2"] = _given(spec.dynamic_imbalance_kg_m2, "imbalance", model)
        arguments["position_m"] = position_m
    elif position_m is not None:
        raise InputError("position_m", "acts only with imbalance=True (the static imbalance's force acts there)")
    return CatalogueWheel(arguments, f"{spec.model} ({spec.max_momentum_Nms.value:g} N m s)")
