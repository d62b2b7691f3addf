"""attsim.inertia against independent numerical integration.

Each solid is replaced by a cloud of mass elements from a product
quadrature in its natural coordinates (Gauss-Legendre in lengths, radii and
cos(polar angle); uniform in azimuth), which integrates the second moments
of these shapes exactly up to round-off. The cloud is then moved into the
body and its mass, centre of mass and inertia summed point by point: no
formula of attsim.inertia is used on the reference side.
"""

import numpy as np
import pytest

from attsim import inertia as ai
from attsim import rotations as rot
from attsim.errors import InputError, NonPhysicalInertiaError

from tests.conftest import random_quaternions

N = 12  # Gauss nodes per coordinate: exact for the polynomials involved


def _gauss(a, b, n=N):
    x, w = np.polynomial.legendre.leggauss(n)
    return 0.5 * (b - a) * x + 0.5 * (b + a), 0.5 * (b - a) * w


def _azimuth(n=16):
    return np.arange(n) * 2 * np.pi / n, np.full(n, 2 * np.pi / n)


def _product(*axes):
    nodes = np.meshgrid(*[a[0] for a in axes], indexing="ij")
    weights = np.ones_like(nodes[0])
    for k, (_, w) in enumerate(axes):
        shape = [1] * len(axes)
        shape[k] = -1
        weights = weights * w.reshape(shape)
    return [n.ravel() for n in nodes], weights.ravel()


def mass_cloud(shape):
    """(points (n, 3) in the shape's frame, masses (n,)) for a homogeneous shape."""
    if isinstance(shape, ai.SolidCuboid):
        a, b, c = shape.size_m
        (x, y, z), w = _product(_gauss(-a / 2, a / 2), _gauss(-b / 2, b / 2), _gauss(-c / 2, c / 2))
        pts = np.column_stack([x, y, z])
    elif isinstance(shape, ai.ThinPlate):
        a, b = shape.size_m
        (x, y), w = _product(_gauss(-a / 2, a / 2), _gauss(-b / 2, b / 2))
        pts = np.column_stack([x, y, np.zeros_like(x)])
    elif isinstance(shape, (ai.SolidCylinder, ai.HollowCylinder)):
        r0 = getattr(shape, "inner_radius_m", 0.0)
        r1 = getattr(shape, "outer_radius_m", getattr(shape, "radius_m", None))
        h = shape.length_m
        (r, phi, z), w = _product(_gauss(r0, r1), _azimuth(), _gauss(-h / 2, h / 2))
        w = w * r
        pts = np.column_stack([r * np.cos(phi), r * np.sin(phi), z])
    elif isinstance(shape, (ai.SolidSphere, ai.SolidEllipsoid, ai.SphericalShell)):
        scale = np.asarray(getattr(shape, "semi_axes_m", (1.0, 1.0, 1.0)))
        R = getattr(shape, "radius_m", 1.0)
        radial = (np.array([R]), np.array([1.0])) if isinstance(shape, ai.SphericalShell) else _gauss(0.0, R)
        (r, u, phi), w = _product(radial, _gauss(-1.0, 1.0), _azimuth())
        if not isinstance(shape, ai.SphericalShell):
            w = w * r * r
        s = np.sqrt(1.0 - u * u)
        pts = np.column_stack([r * s * np.cos(phi), r * s * np.sin(phi), r * u]) * scale
    elif isinstance(shape, ai.PointMass):
        pts, w = np.zeros((1, 3)), np.ones(1)
    else:  # pragma: no cover
        raise TypeError(shape)
    return pts, shape.mass_kg * w / w.sum()


def cloud_properties(points, masses):
    mass = masses.sum()
    com = masses @ points / mass
    r = points - com
    J = np.einsum("n,nij->ij", masses,
                  np.einsum("ni,ni->n", r, r)[:, None, None] * np.eye(3) - np.einsum("ni,nj->nij", r, r))
    return mass, com, J


def place(part):
    pts, m = mass_cloud(part.shape)
    R = rot.quat_to_dcm(np.array(part.q_body_part))
    return pts @ R.T + np.array(part.position_m), m


def composite_reference(parts):
    clouds = [place(p) for p in parts]
    return cloud_properties(np.vstack([c[0] for c in clouds]), np.concatenate([c[1] for c in clouds]))


SHAPES = [
    ai.SolidCuboid(2.0, (0.1, 0.2, 0.35)),
    ai.SolidCylinder(1.5, radius_m=0.05, length_m=0.3),
    ai.HollowCylinder(0.7, inner_radius_m=0.03, outer_radius_m=0.05, length_m=0.2),
    ai.SolidSphere(3.0, radius_m=0.12),
    ai.SphericalShell(0.4, radius_m=0.2),
    ai.SolidEllipsoid(1.1, semi_axes_m=(0.1, 0.25, 0.4)),
    ai.ThinPlate(0.3, size_m=(0.3, 0.1)),
]


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: type(s).__name__)
def test_shape_formula_matches_numerical_integration(shape):
    _, _, J = cloud_properties(*mass_cloud(shape))
    assert np.allclose(shape.inertia_kg_m2(), J, rtol=1e-12, atol=1e-15)


def test_l_bracket_of_two_cuboids():
    parts = [
        ai.Part(ai.SolidCuboid(0.30, (0.10, 0.02, 0.05)), position_m=(0.05, 0.01, 0.025)),
        # a long plate along y, built along its own x and turned 90 deg about z
        ai.Part(
            ai.SolidCuboid(0.25, (0.08, 0.02, 0.05)),
            position_m=(0.01, 0.06, 0.025),
            q_body_part=tuple(rot.axis_angle_to_quat([0, 0, 1], np.pi / 2)),
        ),
    ]
    body = ai.CompositeBody(parts)
    _, com, J = composite_reference(parts)
    assert body.mass_kg == 0.55
    assert np.allclose(body.center_of_mass_m, com, rtol=0, atol=1e-15)
    assert np.allclose(body.inertia_kg_m2, J, rtol=1e-12, atol=1e-16)
    assert abs(body.inertia_kg_m2[0, 1]) > 1e-5  # the bracket has real products of inertia
    ai.check_inertia(body)


def test_cylinder_with_offset_tilted_plate():
    parts = [
        ai.Part(
            ai.SolidCylinder(2.0, radius_m=0.05, length_m=0.2),
            q_body_part=tuple(rot.axis_angle_to_quat([0, 1, 0], np.pi / 2)),  # axis along body x
        ),
        ai.Part(
            ai.ThinPlate(0.4, size_m=(0.1, 0.15)),
            position_m=(0.02, -0.01, 0.12),
            q_body_part=tuple(rot.axis_angle_to_quat([1, 0, 0], np.radians(30))),
        ),
        ai.Part(ai.PointMass(0.05), position_m=(-0.1, 0.04, 0.0)),
    ]
    body = ai.CompositeBody(parts)
    _, com, J = composite_reference(parts)
    assert np.allclose(body.center_of_mass_m, com, rtol=0, atol=1e-15)
    assert np.allclose(body.inertia_kg_m2, J, rtol=1e-12, atol=1e-16)
    # and about another point, by the parallel-axis theorem in reverse
    point = np.array([0.1, 0.2, -0.3])
    pts = np.vstack([place(p)[0] for p in parts]) - point
    ms = np.concatenate([place(p)[1] for p in parts])
    J_point = np.einsum("n,nij->ij", ms,
                        np.einsum("ni,ni->n", pts, pts)[:, None, None] * np.eye(3) - np.einsum("ni,nj->nij", pts, pts))
    assert np.allclose(body.inertia_about_kg_m2(point), J_point, rtol=1e-12)


def test_parallel_axis_general_shift_matches_bhattu_form():
    # Bhattu (2019) eqs. 12-14 with the centre of mass at the origin of A:
    # [I]_B = [I]_C + K, K = M [[b^2+c^2, -ab, -ac], ...]
    a, b, c, M = 0.3, -0.2, 0.5, 2.0
    K = M * np.array([[b * b + c * c, -a * b, -a * c],
                      [-a * b, c * c + a * a, -b * c],
                      [-a * c, -b * c, a * a + b * b]])
    J = np.diag([1.0, 2.0, 2.5])
    assert np.allclose(ai.parallel_axis(J, M, (a, b, c)), J + K, rtol=0, atol=1e-15)


def test_principal_axes_recover_a_rotation(rng):
    moments = np.array([0.8, 1.3, 1.9])
    for q in random_quaternions(rng, 25):
        R = rot.quat_to_dcm(q)
        J = R @ np.diag(moments) @ R.T
        found, V = ai.principal_axes(J)
        assert np.allclose(found, moments, rtol=1e-12)
        assert np.isclose(np.linalg.det(V), 1.0)
        # each principal axis recovered up to its sign, and only that
        assert np.allclose(np.abs(V.T @ R), np.eye(3), rtol=0, atol=1e-10)
        assert np.allclose(V.T @ J @ V, np.diag(moments), rtol=0, atol=1e-12)
        for k in range(2):
            assert V[np.argmax(np.abs(V[:, k])), k] > 0
        # deterministic: the same tensor rebuilt from the recovered frame gives the same frame
        assert np.allclose(ai.principal_axes(V @ np.diag(moments) @ V.T)[1], V, rtol=0, atol=1e-10)


def test_validation_names_the_rule():
    with pytest.raises(InputError, match="inertia: must be symmetric"):
        ai.check_inertia([[1, 0.2, 0], [0, 1, 0], [0, 0, 1]])
    with pytest.raises(InputError, match="positive definite"):
        ai.check_inertia([1.0, -1.0, 1.0])
    with pytest.raises(InputError, match="positive definite"):
        ai.check_inertia([[1, 2, 0], [2, 1, 0], [0, 0, 1]])
    with pytest.raises(NonPhysicalInertiaError, match="triangle inequality.*allow_nonphysical"):
        ai.check_inertia([2, 8, 4])
    with pytest.raises(InputError, match="3x3 tensor or 3 principal moments"):
        ai.check_inertia([1, 2])
    with pytest.raises(InputError, match="finite"):
        ai.check_inertia([1, np.nan, 2])
    assert isinstance(NonPhysicalInertiaError("f", "r"), ValueError)


def test_nonphysical_opt_in_and_limits():
    for textbook in ([2, 8, 4], np.diag([1, 5, 3]), [2, 2, 8]):
        result = ai.check_inertia(textbook, allow_nonphysical=True)
        assert result.nonphysical
    # a thin plate meets the inequality with equality and is physical
    assert not ai.check_inertia(ai.ThinPlate(1.0, (0.2, 0.1)).inertia_kg_m2()).nonphysical


def test_shape_parameters_are_checked():
    with pytest.raises(InputError, match="mass_kg"):
        ai.SolidSphere(-1.0, 0.1)
    with pytest.raises(InputError, match="size_m"):
        ai.SolidCuboid(1.0, (0.1, 0.0, 0.2))
    with pytest.raises(InputError, match="inner_radius_m"):
        ai.HollowCylinder(1.0, inner_radius_m=0.2, outer_radius_m=0.1, length_m=1.0)
    with pytest.raises(InputError, match="parts"):
        ai.CompositeBody([])
    with pytest.raises(InputError, match=r"parts\[1\]"):
        ai.CompositeBody([ai.Part(ai.SolidSphere(1, 1)), "not a part"])
