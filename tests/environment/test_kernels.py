"""The frame kernels (attsim.environment.kernels): compiled on one state and mapped over arrays by
attsim.environment.frames, against references that share no code with them (scipy's rotations, the orbit frame's
defining properties)."""

import numpy as np
from scipy.spatial.transform import Rotation

from attsim.environment import frames
from attsim.environment.kernels import ecef_to_eci_tuple, lvlh_axes_tuple, lvlh_quaternion_tuple


def test_ecef_to_eci_is_a_rotation_by_minus_the_sidereal_angle_about_z(rng):
    jd = 2460000.5 + rng.uniform(0, 1000, size=8)
    v = rng.normal(size=(8, 3)) * 7e6
    theta = frames.gmst_rad(jd)
    expected = Rotation.from_euler("z", theta[:, None]).apply(v)  # R3(-θ) as a frame rotation is +θ as an active one
    compiled = np.array([ecef_to_eci_tuple(tuple(v[k]), float(theta[k])) for k in range(8)])
    np.testing.assert_allclose(compiled, expected, rtol=0, atol=1e-8)
    np.testing.assert_array_equal(frames.ecef_to_eci(v, jd), compiled)  # one source: the arrays give the same bits
    np.testing.assert_allclose(frames.eci_to_ecef(frames.ecef_to_eci(v, jd), jd), v, rtol=0, atol=1e-8)


def test_the_orbit_frame_points_z_to_nadir_and_y_against_the_orbit_normal(rng):
    r, v = rng.normal(size=(6, 3)) * 7e6, rng.normal(size=(6, 3)) * 7e3
    axes = frames.lvlh_axes(r, v)
    for k in range(6):
        x, y, z = (np.array(a) for a in lvlh_axes_tuple(tuple(r[k]), tuple(v[k])))
        np.testing.assert_array_equal(axes[k], np.column_stack([x, y, z]))
        np.testing.assert_allclose(z, -r[k] / np.linalg.norm(r[k]), atol=1e-15)
        h = np.cross(r[k], v[k])
        np.testing.assert_allclose(y, -h / np.linalg.norm(h), atol=1e-15)
        np.testing.assert_allclose(np.column_stack([x, y, z]).T @ np.column_stack([x, y, z]), np.eye(3), atol=1e-15)
        q = np.array(lvlh_quaternion_tuple(tuple(r[k]), tuple(v[k])))  # scalar first; scipy is scalar last
        reference = Rotation.from_matrix(np.column_stack([x, y, z])).as_quat()
        reference = np.roll(reference, 1) * np.sign(reference[3])
        np.testing.assert_allclose(q, reference, atol=1e-15)
        np.testing.assert_allclose(frames.lvlh_quaternion(r[k], v[k]), q, atol=1e-15)


def test_the_continuous_sidereal_angle_turns_at_the_earth_rate_and_agrees_with_the_reduced_one():
    t_s = np.linspace(0.0, 5 * 86400.0, 20001)  # five days: the reduced angle wraps five times and more
    jd = 2460000.5 + t_s / 86400.0
    theta = frames.gmst_unwrapped_rad(jd)
    assert 0.0 <= theta[0] < 2 * np.pi
    assert np.all(np.diff(theta) > 0.0)
    # IAU-82's mean sidereal rate, 1.00273790935 turns a day (rad/s); over the whole span, since a Julian date near
    # 2.46e6 days holds time to 4e-5 s only
    rate = (theta[-1] - theta[0]) / (t_s[-1] - t_s[0])
    np.testing.assert_allclose(rate, 1.00273790935 * 2 * np.pi / 86400.0, rtol=1e-9)
    np.testing.assert_allclose(np.mod(theta, 2 * np.pi), frames.gmst_rad(jd), rtol=0, atol=1e-12)
    np.testing.assert_allclose(theta, np.unwrap(frames.gmst_rad(jd)), rtol=0, atol=1e-14)
