"""The space environment: orbit, geomagnetic field, Sun and shadow,
atmosphere, and the disturbance torques they cause.

An :class:`Environment` bundles the models for a mission and tabulates
them along the orbit before the run (:meth:`Environment.table`); the engine
interpolates that table at every integrator stage, so the cost of IGRF or
SGP4 is paid once, vectorised, and never inside the integration.

Disturbance torques, each switchable: gravity gradient ``3 μ/r³ (n × J n)``;
aerodynamic and solar-radiation-pressure torques on the faces of the body
(:class:`Face`); a residual magnetic dipole ``m_res × B``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._core.validate import boolean, number_in, one_of, positive_scalar, sequence, unit_vector, vector3
from ..errors import InputError
from .atmosphere import ExponentialAtmosphere, MSISAtmosphere
from .field_history import FieldHistory
from .frames import Epoch, gmst_unwrapped_rad, lvlh_axes, lvlh_quaternion
from .magnetic import IGRF, FieldModel, TiltedDipole
from .orbit import KeplerOrbit, Orbit, TLEOrbit, make_tle
from .sun import AU_M, SOLAR_PRESSURE_N_M2, lit_fraction_conical, lit_fraction_cylindrical, sun_eci
from .table import GMST, WIDTH

__all__ = [
    "Environment", "Face", "KeplerOrbit", "TLEOrbit", "make_tle", "IGRF", "TiltedDipole", "FieldHistory",
    "ExponentialAtmosphere", "MSISAtmosphere", "Epoch", "lvlh_axes", "lvlh_quaternion", "EFFECT_DEFAULTS",
]

# What Environment(orbit) switches on when told nothing (README, "The environment's defaults");
# Environment.orbit_only(orbit) switches every one of them off.
EFFECT_DEFAULTS = {"field": "dipole", "atmosphere": "exponential", "shadow": "conical", "gravity_gradient": True,
                   "aerodynamic": True, "solar_pressure": True}
_NO_EFFECTS = {"field": None, "atmosphere": None, "shadow": None, "gravity_gradient": False, "aerodynamic": False,
               "solar_pressure": False}



@dataclass(frozen=True)
class Face:
    """A flat face of the body for drag and solar pressure.

    Parameters
    ----------
    area_m2 : float
        Area (> 0).
    normal : array_like (3,)
        Outward unit normal, body axes.
    cp_m : array_like (3,)
        Centre of pressure of the face from the centre of mass, body axes, m.
    drag_coefficient : float
        C_d (2.2 is the usual free-molecular value).
    specular, diffuse : float
        Reflected fractions of the light (the rest is absorbed); each in
        [0, 1], their sum at most 1.
    """

    area_m2: float
    normal: tuple
    cp_m: tuple
    drag_coefficient: float = 2.2
    specular: float = 0.1
    diffuse: float = 0.2

    def __post_init__(self):
        # stored as the checked floats and tuples, so row() never sees a caller's string or array
        object.__setattr__(self, "area_m2", positive_scalar(self.area_m2, "area_m2"))
        object.__setattr__(self, "normal", tuple(unit_vector(self.normal, "normal").tolist()))
        object.__setattr__(self, "cp_m", tuple(vector3(self.cp_m, "cp_m").tolist()))
        object.__setattr__(self, "drag_coefficient", positive_scalar(self.drag_coefficient, "drag_coefficient"))
        for name in ("specular", "diffuse"):
            object.__setattr__(self, name, number_in(getattr(self, name), name, 0.0, 1.0))
        if self.specular + self.diffuse > 1.0:
            raise InputError("specular", "plus diffuse must not exceed 1", f"{self.specular} + {self.diffuse}")

    def row(self) -> list[float]:
        return [self.area_m2, *self.normal, *self.cp_m, self.drag_coefficient, self.specular, self.diffuse]

    @staticmethod
    def cube(side_m: float, cp_offset_m=(0.0, 0.0, 0.0), **coefficients) -> list[Face]:
        """The six faces of a cube whose centre lies ``cp_offset_m`` from the centre of mass."""
        side = positive_scalar(side_m, "side_m")
        if not math.isfinite(side * side):
            raise InputError("side_m", "must have a finite square (the face area)", f"got {side_m!r}")
        offset = vector3(cp_offset_m, "cp_offset_m")
        faces = []
        for axis in range(3):
            for sign in (1.0, -1.0):
                n = np.zeros(3)
                n[axis] = sign
                faces.append(Face(side * side, tuple(n), tuple(offset + 0.5 * side * n), **coefficients))
        return faces


class Environment:
    """Orbit and environment models for a mission.

    Parameters
    ----------
    orbit : Orbit
        :class:`KeplerOrbit` or :class:`TLEOrbit`; its epoch is the mission's t = 0.
    field : {"dipole", "igrf"}, FieldModel or None
        Geomagnetic model (default the fast tilted dipole), or a
        :class:`FieldHistory` (a table of times and vectors).
    atmosphere : {"exponential", "msis"}, model or None
        Density model for drag (default :class:`ExponentialAtmosphere`; a
        model has ``density_kg_m3(r_eci_m, epoch, t_s)``).
    shadow : {"conical", "cylindrical", None}
        Eclipse model for solar pressure and sun sensors.
    gravity_gradient, aerodynamic, solar_pressure : bool
        Switch each disturbance torque.
    residual_dipole_Am2 : array_like (3,)
        The body's residual magnetic dipole (body axes).
    faces : sequence of Face
        Surfaces for drag and solar pressure.
    table_dt_s : float
        Spacing of the environment table, s (a :class:`FieldHistory`'s own
        times are added to it).

    Every effect is on unless told otherwise (:data:`EFFECT_DEFAULTS`; drag
    and solar pressure need ``faces``); :meth:`orbit_only` is the
    environment with none of them.
    """

    def __init__(self, orbit: Orbit, field="dipole", atmosphere="exponential", shadow: str | None = "conical",
                 gravity_gradient: bool = True, aerodynamic: bool = True, solar_pressure: bool = True,
                 residual_dipole_Am2=(0.0, 0.0, 0.0), faces=(), table_dt_s: float = 5.0):
        if not isinstance(orbit, Orbit):
            raise InputError("orbit", "must be a KeplerOrbit or TLEOrbit", f"got {type(orbit).__name__}")
        self.orbit = orbit
        self.epoch = orbit.epoch
        models = {"dipole": TiltedDipole, "igrf": IGRF}
        if isinstance(field, str):
            field = models[one_of(field, "field", sorted(models))]()
        if field is not None and not isinstance(field, FieldModel):
            raise InputError("field", "must be 'dipole', 'igrf', a FieldModel or None", f"got {type(field).__name__}")
        self.field = field
        if isinstance(atmosphere, str):
            atmosphere = {"exponential": ExponentialAtmosphere, "msis": MSISAtmosphere}[
                one_of(atmosphere, "atmosphere", ("exponential", "msis"))]()
        elif atmosphere is not None and not callable(getattr(atmosphere, "density_kg_m3", None)):
            raise InputError("atmosphere", "must be 'exponential', 'msis', a model with "
                             "density_kg_m3(r_eci_m, epoch, t_s) or None", f"got {atmosphere!r}")
        self.atmosphere = atmosphere
        self.shadow = one_of(shadow, "shadow", ("conical", "cylindrical", None))
        self.gravity_gradient = boolean(gravity_gradient, "gravity_gradient")
        self.aerodynamic = boolean(aerodynamic, "aerodynamic") and atmosphere is not None
        self.solar_pressure = boolean(solar_pressure, "solar_pressure")
        self.residual_dipole_Am2 = vector3(residual_dipole_Am2, "residual_dipole_Am2")
        self.faces = sequence(faces, "faces")
        for k, face in enumerate(self.faces):
            if not isinstance(face, Face):
                raise InputError(f"faces[{k}]", "must be an attsim.environment.Face", f"got {type(face).__name__}")
        if (self.aerodynamic or self.solar_pressure) and not self.faces:
            self.aerodynamic = self.solar_pressure = False  # nothing for the flow or the light to act on
        self.table_dt_s = positive_scalar(table_dt_s, "table_dt_s")
        if self.field is not None:  # refuse an epoch outside the field model at once, not mid-run
            self.field.field_eci_T(self.orbit.state_eci([0.0])[0], self.epoch, [0.0])

    @classmethod
    def orbit_only(cls, orbit: Orbit, **effects) -> Environment:
        """The orbit (and the Sun's direction, for guidance) with no effect switched on: no magnetic field, no
        atmosphere, no shadow, no gravity gradient, drag or solar pressure, no residual dipole. Any of them can
        be switched back on by its keyword (``Environment.orbit_only(orbit, field=history)``)."""
        return cls(orbit, **{**_NO_EFFECTS, **effects})

    @property
    def flags(self) -> tuple[float, float, float, float]:
        """The disturbance switches and the orbit's ``μ`` (:class:`~attsim.environment.torques.DisturbanceSwitches`)."""
        return (float(self.gravity_gradient), float(self.aerodynamic), float(self.solar_pressure),
                float(self.orbit.mu_m3_s2))

    def effects(self) -> list[str]:
        """The effects switched on, in words (``meta.json``'s ``environment.effects``, the report's summary)."""
        effects = [] if self.field is None else [f"magnetic field ({self.field.name})"]
        effects += [words for on, words in ((self.gravity_gradient, "gravity gradient"),
                                            (self.aerodynamic, "aerodynamic drag"),
                                            (self.solar_pressure, "solar radiation pressure")) if on]
        if np.any(self.residual_dipole_Am2 != 0.0):
            effects.append("residual dipole [" + ", ".join(f"{v:.3g}" for v in self.residual_dipole_Am2) + "] A m²")
        if self.shadow is not None:
            effects.append(f"eclipses ({self.shadow})")
        return effects

    def faces_array(self) -> np.ndarray:
        return np.array([f.row() for f in self.faces], dtype=float).reshape(-1, 10)

    def table(self, duration_s: float) -> tuple[np.ndarray, np.ndarray]:
        """``(t_s, values)`` on a grid covering ``[0, duration_s]`` (uniform, and a field history's times).

        The grid also holds a field history's sample times. Columns of ``values``
        (ECI, SI; :mod:`attsim.environment.table`): B (T, 3),
        r (m, 3), v (m/s, 3), ρ (kg/m^3), unit Sun direction (3), solar
        pressure (N/m^2, 0 in shadow), GMST (rad, unwrapped).
        """
        n = max(2, int(math.ceil(duration_s / self.table_dt_s)) + 1)
        t = np.linspace(0.0, duration_s, n)
        knot_times = getattr(self.field, "knot_times", None)
        if knot_times is not None:  # a field history's own times, so the table's interpolation gives it exactly
            t = np.union1d(t, knot_times(duration_s))
            n = t.size
        r, v = self.orbit.state_eci(t)
        jd = self.epoch.jd_at(t)
        values = np.zeros((n, WIDTH))
        values[:, 3:6], values[:, 6:9] = r, v
        if self.field is not None:
            values[:, 0:3] = self.field.field_eci_T(r, self.epoch, t)
        if self.atmosphere is not None:
            values[:, 9] = self.atmosphere.density_kg_m3(r, self.epoch, t)
        sun, sun_m = sun_eci(jd)
        values[:, 10:13] = sun
        values[:, 13] = SOLAR_PRESSURE_N_M2 * (AU_M / sun_m) ** 2
        if self.shadow is not None:
            values[:, 13] *= self._lit_fraction(r, sun, sun_m)
        values[:, GMST] = gmst_unwrapped_rad(jd)
        return t, values

    def lit_fraction(self, r_eci_m, jd) -> np.ndarray:
        """The lit fraction of the solar disc seen at ``r_eci_m`` (m) at Julian dates ``jd`` (1 without a shadow
        model)."""
        if self.shadow is None:
            return np.ones(len(np.atleast_2d(r_eci_m)))
        return self._lit_fraction(r_eci_m, *sun_eci(jd))

    def _lit_fraction(self, r_eci_m, sun, sun_m) -> np.ndarray:
        if self.shadow == "cylindrical":
            return lit_fraction_cylindrical(r_eci_m, sun)
        return lit_fraction_conical(r_eci_m, sun * sun_m[..., None])

    def geomagnetic_inclination_rad(self) -> float:
        """Inclination of the orbit to the geomagnetic equator at the epoch.

        The angle between the orbit normal and the dipole axis (the tilted
        dipole of IGRF at the epoch), folded into [0, π/2].
        """
        r, v = self.orbit.state_eci([0.0])
        h = np.cross(r[0], v[0])
        axis = TiltedDipole().axis_eci(self.epoch)
        angle = math.acos(min(1.0, abs(float(h @ axis) / np.linalg.norm(h))))
        return angle
