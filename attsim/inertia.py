"""Mass properties: shapes, placed parts, composite bodies, principal axes,
and the physical checks on an inertia tensor.

Every inertia here is the 3x3 tensor in kg m^2, ``J = ∫ ((r.r) 1 - r r^T) dm``.
A part placed in the body with orientation ``R_BP`` (part axes to body axes)
and its centre of mass at ``r`` (m, body axes) contributes, about the body
origin (Bhattu 2019, eqs. 12-15; Mandre 2008, sec. 4)::

    J' = R J_P R^T + m ((r.r) 1 - r r^T)

and a composite body's inertia about its own centre of mass is the sum of
its parts' contributions about the body origin, shifted back to the centre
of mass by the same theorem with ``-m_total`` (Huygens-Steiner).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from . import rotations
from ._core.validate import (boolean, finite_array, finite_number, non_negative_scalar, positive_scalar, sequence,
                        unit_quaternion)
from .errors import InputError, NonPhysicalInertiaError

__all__ = [
    "Shape",
    "PointMass",
    "SolidCuboid",
    "SolidCylinder",
    "HollowCylinder",
    "SolidSphere",
    "SphericalShell",
    "SolidEllipsoid",
    "ThinPlate",
    "Part",
    "CompositeBody",
    "rotate_inertia",
    "parallel_axis",
    "principal_axes",
    "check_inertia",
    "check_rate",
    "InertiaCheck",
]

# Relative tolerances of the physical checks: round-off in a tensor built
# from parts is ~1e-16 relative, so these only forgive arithmetic noise.
SYMMETRY_TOLERANCE = 1e-9
TRIANGLE_TOLERANCE = 1e-9
# Principal moments a run accepts, kg m^2: from a gram-sized chip (1e-8) to past a space station (1e8), with
# margin; outside it the squares and inverses of the dynamics leave the range of float64 or its precision.
INERTIA_RANGE_KG_M2 = (1e-12, 1e12)


class Shape:
    """A homogeneous solid with its centre of mass at its own origin.

    Subclasses give ``mass_kg`` and :meth:`inertia_kg_m2`, the tensor about
    the centre of mass in the shape's own axes.
    """

    mass_kg: float

    def inertia_kg_m2(self) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError


def _dims(values, field_name: str, count: int) -> tuple[float, ...]:
    array = finite_array(values, field_name, (count,))
    if np.any(array <= 0.0):
        raise InputError(field_name, "every dimension must be > 0", f"got {tuple(array)}")
    return tuple(float(v) for v in array)


@dataclass(frozen=True)
class PointMass(Shape):
    """A point mass: no inertia about itself, only through its offset.

    Parameters
    ----------
    mass_kg : float
        Mass, kg (> 0).
    """

    mass_kg: float

    def __post_init__(self):
        object.__setattr__(self, "mass_kg", positive_scalar(self.mass_kg, "mass_kg"))

    def inertia_kg_m2(self) -> np.ndarray:
        return np.zeros((3, 3))


@dataclass(frozen=True)
class SolidCuboid(Shape):
    """Rectangular block with edges ``size_m = (a, b, c)`` along x, y, z.

    ``J = m/12 diag(b^2 + c^2, a^2 + c^2, a^2 + b^2)``.

    Parameters
    ----------
    mass_kg : float
        Mass, kg (> 0).
    size_m : array_like (3,)
        Edge lengths ``(a, b, c)`` along x, y, z, m.
    """

    mass_kg: float
    size_m: tuple[float, float, float]

    def __post_init__(self):
        object.__setattr__(self, "mass_kg", positive_scalar(self.mass_kg, "mass_kg"))
        object.__setattr__(self, "size_m", _dims(self.size_m, "size_m", 3))

    def inertia_kg_m2(self) -> np.ndarray:
        a, b, c = self.size_m
        return self.mass_kg / 12.0 * np.diag([b * b + c * c, a * a + c * c, a * a + b * b])


@dataclass(frozen=True)
class SolidCylinder(Shape):
    """Solid circular cylinder, axis along z.

    ``Jxx = Jyy = m (3 r^2 + h^2) / 12``, ``Jzz = m r^2 / 2``.

    Parameters
    ----------
    mass_kg : float
        Mass, kg (> 0).
    radius_m : float
        Radius, m.
    length_m : float
        Length along z, m.
    """

    mass_kg: float
    radius_m: float
    length_m: float

    def __post_init__(self):
        object.__setattr__(self, "mass_kg", positive_scalar(self.mass_kg, "mass_kg"))
        object.__setattr__(self, "radius_m", positive_scalar(self.radius_m, "radius_m"))
        object.__setattr__(self, "length_m", positive_scalar(self.length_m, "length_m"))

    def inertia_kg_m2(self) -> np.ndarray:
        r, h, m = self.radius_m, self.length_m, self.mass_kg
        transverse = m * (3.0 * r * r + h * h) / 12.0
        return np.diag([transverse, transverse, 0.5 * m * r * r])


@dataclass(frozen=True)
class HollowCylinder(Shape):
    """Thick-walled tube, axis along z, radii ``inner_radius_m < outer_radius_m``.

    ``Jxx = Jyy = m (3 (r1^2 + r2^2) + h^2) / 12``, ``Jzz = m (r1^2 + r2^2) / 2``.

    Parameters
    ----------
    mass_kg : float
        Mass, kg (> 0).
    inner_radius_m, outer_radius_m : float
        Radii of the wall, m (inner < outer).
    length_m : float
        Length along z, m.
    """

    mass_kg: float
    inner_radius_m: float
    outer_radius_m: float
    length_m: float

    def __post_init__(self):
        object.__setattr__(self, "mass_kg", positive_scalar(self.mass_kg, "mass_kg"))
        object.__setattr__(self, "outer_radius_m", positive_scalar(self.outer_radius_m, "outer_radius_m"))
        object.__setattr__(self, "length_m", positive_scalar(self.length_m, "length_m"))
        inner = non_negative_scalar(self.inner_radius_m, "inner_radius_m")
        if not inner < self.outer_radius_m:
            raise InputError("inner_radius_m", "must be less than outer_radius_m", f"got {self.inner_radius_m!r}")
        object.__setattr__(self, "inner_radius_m", inner)

    def inertia_kg_m2(self) -> np.ndarray:
        r2 = self.inner_radius_m**2 + self.outer_radius_m**2
        m, h = self.mass_kg, self.length_m
        transverse = m * (3.0 * r2 + h * h) / 12.0
        return np.diag([transverse, transverse, 0.5 * m * r2])


@dataclass(frozen=True)
class SolidSphere(Shape):
    """Solid ball: ``J = 2/5 m r^2 1``.

    Parameters
    ----------
    mass_kg : float
        Mass, kg (> 0).
    radius_m : float
        Radius, m.
    """

    mass_kg: float
    radius_m: float

    def __post_init__(self):
        object.__setattr__(self, "mass_kg", positive_scalar(self.mass_kg, "mass_kg"))
        object.__setattr__(self, "radius_m", positive_scalar(self.radius_m, "radius_m"))

    def inertia_kg_m2(self) -> np.ndarray:
        return 0.4 * self.mass_kg * self.radius_m**2 * np.eye(3)


@dataclass(frozen=True)
class SphericalShell(Shape):
    """Thin spherical shell: ``J = 2/3 m r^2 1``.

    Parameters
    ----------
    mass_kg : float
        Mass, kg (> 0).
    radius_m : float
        Radius, m.
    """

    mass_kg: float
    radius_m: float

    def __post_init__(self):
        object.__setattr__(self, "mass_kg", positive_scalar(self.mass_kg, "mass_kg"))
        object.__setattr__(self, "radius_m", positive_scalar(self.radius_m, "radius_m"))

    def inertia_kg_m2(self) -> np.ndarray:
        return (2.0 / 3.0) * self.mass_kg * self.radius_m**2 * np.eye(3)


@dataclass(frozen=True)
class SolidEllipsoid(Shape):
    """Solid ellipsoid with semi-axes ``(a, b, c)`` along x, y, z.

    ``J = m/5 diag(b^2 + c^2, a^2 + c^2, a^2 + b^2)``.

    Parameters
    ----------
    mass_kg : float
        Mass, kg (> 0).
    semi_axes_m : array_like (3,)
        Semi-axes ``(a, b, c)`` along x, y, z, m.
    """

    mass_kg: float
    semi_axes_m: tuple[float, float, float]

    def __post_init__(self):
        object.__setattr__(self, "mass_kg", positive_scalar(self.mass_kg, "mass_kg"))
        object.__setattr__(self, "semi_axes_m", _dims(self.semi_axes_m, "semi_axes_m", 3))

    def inertia_kg_m2(self) -> np.ndarray:
        a, b, c = self.semi_axes_m
        return self.mass_kg / 5.0 * np.diag([b * b + c * c, a * a + c * c, a * a + b * b])


@dataclass(frozen=True)
class ThinPlate(Shape):
    """Thin rectangular plate in the xy-plane with edges ``size_m = (a, b)``.

    ``J = m/12 diag(b^2, a^2, a^2 + b^2)`` (the triangle inequality holds
    with equality: a plate is the limit of a physical body).

    Parameters
    ----------
    mass_kg : float
        Mass, kg (> 0).
    size_m : array_like (2,)
        Edge lengths ``(a, b)`` along x, y, m.
    """

    mass_kg: float
    size_m: tuple[float, float]

    def __post_init__(self):
        object.__setattr__(self, "mass_kg", positive_scalar(self.mass_kg, "mass_kg"))
        object.__setattr__(self, "size_m", _dims(self.size_m, "size_m", 2))

    def inertia_kg_m2(self) -> np.ndarray:
        a, b = self.size_m
        return self.mass_kg / 12.0 * np.diag([b * b, a * a, a * a + b * b])


def rotate_inertia(inertia_kg_m2, R) -> np.ndarray:
    """Express a tensor in rotated axes: ``R J R^T`` with ``R`` from old to new axes.

    Parameters
    ----------
    inertia_kg_m2 : array_like (3, 3)
        Inertia tensor in the old axes, kg m^2.
    R : array_like (3, 3)
        Rotation matrix from the old axes to the new.
    """
    J = finite_array(inertia_kg_m2, "inertia_kg_m2", (3, 3))
    R = finite_array(R, "R", (3, 3))
    return R @ J @ R.T


def parallel_axis(inertia_cm_kg_m2, mass_kg: float, offset_m) -> np.ndarray:
    """Inertia about a point, given the inertia about the centre of mass.

    ``J_O = J_cm + m ((r.r) 1 - r r^T)`` where ``r`` is the centre of mass
    seen from the new point ``O`` (the sign of ``r`` does not matter). With a
    negative ``mass_kg`` the same formula shifts *back* to the centre of mass.

    Parameters
    ----------
    inertia_cm_kg_m2 : array_like (3, 3)
        Inertia about the centre of mass, kg m^2.
    mass_kg : float
        Mass, kg (negative: shift back to the centre of mass).
    offset_m : array_like (3,)
        The centre of mass seen from the new point, m.
    """
    J = finite_array(inertia_cm_kg_m2, "inertia_cm_kg_m2", (3, 3))
    r = finite_array(offset_m, "offset_m", (3,))
    mass_kg = finite_number(mass_kg, "mass_kg")
    return J + mass_kg * (float(r @ r) * np.eye(3) - np.outer(r, r))


@dataclass(frozen=True)
class Part:
    """A shape placed in the body.

    Parameters
    ----------
    shape : Shape
        The solid, with its inertia about its own centre of mass.
    position_m : array_like, shape (3,)
        Its centre of mass in body axes, m.
    q_body_part : array_like, shape (4,)
        Attitude of the part's axes in the body, scalar first: rotates
        part-frame vectors into body-frame vectors.
    """

    shape: Shape
    position_m: tuple[float, float, float] = (0.0, 0.0, 0.0)
    q_body_part: tuple[float, float, float, float] = (1.0, 0.0, 0.0, 0.0)

    def __post_init__(self):
        if not isinstance(self.shape, Shape):
            raise InputError("shape", "must be an attsim.inertia.Shape", f"got {type(self.shape).__name__}")
        object.__setattr__(self, "position_m", tuple(finite_array(self.position_m, "position_m", (3,))))
        object.__setattr__(self, "q_body_part", tuple(unit_quaternion(self.q_body_part, "q_body_part")))

    @property
    def mass_kg(self) -> float:
        return self.shape.mass_kg

    def inertia_about_body_origin_kg_m2(self) -> np.ndarray:
        """``R J_P R^T + m ((r.r) 1 - r r^T)``."""
        R = rotations.quat_to_dcm(np.array(self.q_body_part))
        return parallel_axis(R @ self.shape.inertia_kg_m2() @ R.T, self.mass_kg, self.position_m)


@dataclass(frozen=True)
class CompositeBody:
    """A rigid body made of parts.

    Parameters
    ----------
    parts : sequence of Part
        The placed shapes (at least one).

    Attributes
    ----------
    mass_kg : float
        Total mass.
    center_of_mass_m : ndarray, shape (3,)
        ``sum(m_i r_i) / sum(m_i)`` in body axes.
    inertia_kg_m2 : ndarray, shape (3, 3)
        Inertia about the composite centre of mass, in body axes.
    """

    parts: Sequence[Part]
    mass_kg: float = field(init=False)
    center_of_mass_m: np.ndarray = field(init=False, repr=False)
    inertia_kg_m2: np.ndarray = field(init=False, repr=False)

    def __post_init__(self):
        parts = tuple(sequence(self.parts, "parts"))
        if not parts:
            raise InputError("parts", "must hold at least one Part")
        for index, part in enumerate(parts):
            if not isinstance(part, Part):
                raise InputError(f"parts[{index}]", "must be an attsim.inertia.Part", f"got {type(part).__name__}")
        masses = np.array([p.mass_kg for p in parts])
        positions = np.array([p.position_m for p in parts])
        mass = float(masses.sum())
        com = masses @ positions / mass
        about_origin = sum(p.inertia_about_body_origin_kg_m2() for p in parts)
        object.__setattr__(self, "parts", parts)
        object.__setattr__(self, "mass_kg", mass)
        object.__setattr__(self, "center_of_mass_m", com)
        object.__setattr__(self, "inertia_kg_m2", parallel_axis(about_origin, -mass, com))

    def inertia_about_kg_m2(self, point_m) -> np.ndarray:
        """Inertia about another point of the body (body axes)."""
        point = finite_array(point_m, "point_m", (3,))
        return parallel_axis(self.inertia_kg_m2, self.mass_kg, self.center_of_mass_m - point)


def principal_axes(inertia_kg_m2) -> tuple[np.ndarray, np.ndarray]:
    """Principal moments (ascending) and a right-handed principal frame.

    Parameters
    ----------
    inertia_kg_m2 : array_like (3, 3)
        Symmetric inertia tensor, kg m^2.

    Returns
    -------
    moments_kg_m2 : ndarray, shape (3,)
        Eigenvalues of ``J`` in ascending order.
    R_BP : ndarray, shape (3, 3)
        Rotation whose columns are the principal axes in body coordinates,
        so ``J = R_BP diag(moments) R_BP^T`` and ``det(R_BP) = +1``.

    Notes
    -----
    Each eigenvector is only defined up to sign. The choice is made
    deterministic: the first two columns have their largest-magnitude
    component positive (the earlier index wins a tie), and the third is their
    cross product, which makes the frame right-handed (Mandre 2008, sec. 4).
    """
    J = finite_array(inertia_kg_m2, "inertia_kg_m2", (3, 3))
    moments, vectors = np.linalg.eigh(0.5 * (J + J.T))
    for k in range(2):
        column = vectors[:, k]
        if column[np.argmax(np.abs(column))] < 0.0:
            vectors[:, k] = -column
    vectors[:, 2] = np.cross(vectors[:, 0], vectors[:, 1])
    return moments, vectors


@dataclass(frozen=True)
class InertiaCheck:
    """A checked inertia tensor.

    Attributes
    ----------
    matrix_kg_m2 : ndarray, shape (3, 3)
        The symmetric tensor.
    principal_kg_m2 : ndarray, shape (3,)
        Its principal moments, ascending.
    nonphysical : bool
        True when the moments break the triangle inequality and the caller
        allowed it.
    """

    matrix_kg_m2: np.ndarray
    principal_kg_m2: np.ndarray
    nonphysical: bool


def check_inertia(value, *, allow_nonphysical: bool = False, field_name: str = "inertia") -> InertiaCheck:
    """Validate an inertia given as a 3x3 tensor, 3 principal moments, or a body.

    Rules, each refused with an error naming it: finite; entries and
    principal moments within :data:`INERTIA_RANGE_KG_M2`; symmetric (to
    ``SYMMETRY_TOLERANCE`` relative); positive definite; principal moments
    obeying ``I_a + I_b >= I_c`` for every ordering (to
    ``TRIANGLE_TOLERANCE`` relative), unless ``allow_nonphysical`` is true.
    A body may also be given as a :class:`CompositeBody` (its inertia about
    its centre of mass), a :class:`Part` alone (its shape's inertia turned
    into body axes: a single part's centre of mass is the body's) or a
    :class:`Shape` (its inertia about its centre of mass, shape axes as body
    axes).

    Parameters
    ----------
    value : array_like (3, 3) or (3,), Shape, Part or CompositeBody
        The inertia, kg m^2: a tensor, three principal moments, or a body.
    allow_nonphysical : bool, optional
        Accept moments that break the triangle inequality (textbook cases).
    field_name : str, optional
        The name an error gives the value.
    """
    allow_nonphysical = boolean(allow_nonphysical, "allow_nonphysical")
    if isinstance(value, CompositeBody):
        value = value.inertia_kg_m2
    elif isinstance(value, Part):
        R = rotations.quat_to_dcm(np.array(value.q_body_part))
        value = R @ value.shape.inertia_kg_m2() @ R.T
    elif isinstance(value, Shape):
        value = value.inertia_kg_m2()
    array = finite_array(value, field_name)
    if array.shape == (3,):
        array = np.diag(array)
    elif array.shape != (3, 3):
        raise InputError(field_name, "must be a 3x3 tensor or 3 principal moments", f"got shape {array.shape}")
    low, high = INERTIA_RANGE_KG_M2
    if np.max(np.abs(array)) > high:
        raise InputError(field_name, f"entries must not exceed {high:g} kg m^2 (INERTIA_RANGE_KG_M2)",
                         f"max |J_ij| = {np.max(np.abs(array)):.3g}")
    scale = float(np.max(np.abs(array)))
    asymmetry = float(np.max(np.abs(array - array.T)))
    if asymmetry > SYMMETRY_TOLERANCE * scale:
        raise InputError(field_name, "must be symmetric", f"max |J - J^T| = {asymmetry:.3g}")
    J = 0.5 * (array + array.T)
    moments = np.linalg.eigvalsh(J)
    if not moments[0] > 0.0:
        raise InputError(field_name, "must be positive definite", f"principal moments {moments.tolist()}")
    if moments[0] < low:
        raise InputError(field_name, f"principal moments must be at least {low:g} kg m^2 (INERTIA_RANGE_KG_M2)",
                         f"principal moments {moments.tolist()}")
    gap = moments[2] - moments[0] - moments[1]
    nonphysical = bool(gap > TRIANGLE_TOLERANCE * moments[2])
    if nonphysical and not allow_nonphysical:
        raise NonPhysicalInertiaError(
            field_name,
            "principal moments must obey the triangle inequality I_a + I_b >= I_c "
            "(pass allow_nonphysical=True for a textbook case)",
            f"{moments[0]:.6g} + {moments[1]:.6g} < {moments[2]:.6g}",
        )
    return InertiaCheck(matrix_kg_m2=J, principal_kg_m2=moments, nonphysical=nonphysical)


def check_rate(inertia_kg_m2, omega_rad_s, field_name: str = "omega0") -> None:
    """Refuse a body rate whose angular momentum ``J ω`` or kinetic energy ``½ ω·J ω`` overflows float64.

    Such a state is not a run with too large a step but a number the
    dynamics cannot hold; the error names the rate, not the step.

    Parameters
    ----------
    inertia_kg_m2 : array_like (3, 3)
        Inertia tensor, kg m^2.
    omega_rad_s : array_like (3,)
        Body rate, rad/s.
    field_name : str, optional
        The name an error gives the rate.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        momentum = np.asarray(inertia_kg_m2) @ np.asarray(omega_rad_s)
        energy = 0.5 * float(np.asarray(omega_rad_s) @ momentum)
        if np.all(np.isfinite(momentum)) and np.isfinite(energy):
            return
        size = float(np.linalg.norm(omega_rad_s))
    raise InputError(field_name, "with this inertia, the angular momentum J omega and energy must be finite (float64)",
                     f"|omega| = {size:.3g} rad/s")
