"""Dispersions: reproducible streams, the distributions against scipy.stats (KS
tests at fixed seeds), rotations uniform on SO(3), and refused arguments."""

import zlib

import numpy as np
import pytest
from scipy import stats

from attsim import dispersions as d
from attsim import rotations
from attsim.errors import InputError

N = 4000  # draws per KS test: enough to see a wrong distribution, quick to draw
# p-value below which a test fails: the seeds are fixed, so this only decides how far a wrong distribution must be
P_MIN = 1e-3


def sample(dispersion, n=N, seed=7):
    """n draws as the campaign makes them: one stream per (seed, index, name)."""
    return np.array([d.draw_parameters({"x": dispersion}, seed, k)["x"] for k in range(n)])


def test_same_seed_index_and_name_give_the_same_value_in_any_order():
    spec = {"a": d.Normal(0.0, 1.0), "b": d.UniformRotation(), "c": d.Scaled(np.diag([1.0, 2.0, 2.5]), 0.05)}
    forward = [d.draw_parameters(spec, 42, k) for k in range(20)]
    backward = {k: d.draw_parameters(spec, 42, k) for k in reversed(range(20))}
    for k in range(20):
        for name in spec:
            np.testing.assert_array_equal(forward[k][name], backward[k][name])
    # the stream is the documented one, so another implementation can reproduce it
    rng = np.random.default_rng(np.random.SeedSequence([42, 3, zlib.crc32(b"a")]))
    assert forward[3]["a"] == rng.standard_normal(())
    assert forward[3]["a"] != forward[4]["a"] and forward[3]["a"] != d.draw_parameters(spec, 43, 3)["a"]


def test_adding_a_parameter_leaves_the_others_unchanged():
    base = {"rate": d.Uniform(-0.1, 0.1), "q0": d.UniformRotation()}
    more = {"bias": d.Normal([0, 0, 0], [1e-4, 1e-4, 1e-4]), **base, "mode": d.Choice(["a", "b"])}
    for k in range(5):
        one, two = d.draw_parameters(base, 1, k), d.draw_parameters(more, 1, k)
        assert one["rate"] == two["rate"]
        np.testing.assert_array_equal(one["q0"], two["q0"])


def test_run_seed_is_the_documented_31_bit_integer():
    assert d.run_seed(5, 9) == int(np.random.SeedSequence([5, 9]).generate_state(1)[0]) & 0x7FFFFFFF
    seeds = {d.run_seed(5, k) for k in range(1000)}
    assert len(seeds) == 1000 and all(0 <= s < 2**31 for s in seeds)


def test_normal_uniform_and_truncated_normal_against_scipy():
    x = sample(d.Normal(0.02, 0.002))
    assert stats.kstest(x, stats.norm(0.02, 0.002).cdf).pvalue > P_MIN
    x = sample(d.Uniform(-3.0, 5.0))
    assert stats.kstest(x, stats.uniform(-3.0, 8.0).cdf).pvalue > P_MIN
    mean, std, low, high = 1.0, 2.0, -0.5, 4.0
    x = sample(d.TruncatedNormal(mean, std, low, high))
    assert np.all((x >= low) & (x <= high))
    reference = stats.truncnorm((low - mean) / std, (high - mean) / std, loc=mean, scale=std)
    assert stats.kstest(x, reference.cdf).pvalue > P_MIN
    # a far tail, where naive inversion of the normal CDF loses every digit
    x = sample(d.TruncatedNormal(0.0, 1.0, 8.0, 9.0), n=500)
    assert np.all((x >= 8.0) & (x <= 9.0)) and stats.kstest(x, stats.truncnorm(8.0, 9.0).cdf).pvalue > P_MIN


def test_vector_parameters_are_elementwise():
    x = sample(d.Normal([0.0, 10.0, -5.0], [1.0, 0.1, 0.0]), n=2000)
    assert x.shape == (2000, 3) and np.all(x[:, 2] == -5.0)
    assert stats.kstest(x[:, 1], stats.norm(10.0, 0.1).cdf).pvalue > P_MIN
    x = sample(d.Uniform([0.0, 1.0], [1.0, 3.0]), n=2000)
    assert stats.kstest(x[:, 1], stats.uniform(1.0, 2.0).cdf).pvalue > P_MIN
    assert abs(np.corrcoef(x[:, 0], x[:, 1])[0, 1]) < 0.1  # independent elements


def test_uniform_rotation_is_uniform_on_so3():
    q = sample(d.UniformRotation(), n=6000)
    np.testing.assert_allclose(np.linalg.norm(q, axis=1), 1.0, atol=1e-12)
    assert np.all(q[:, 0] >= 0.0)
    theta = 2.0 * np.arccos(np.clip(q[:, 0], -1.0, 1.0))
    # Haar measure: the angle has density (1 - cos t)/pi on [0, pi], CDF (t - sin t)/pi
    assert stats.kstest(theta, lambda t: (t - np.sin(t)) / np.pi).pvalue > P_MIN
    # the mean rotation matrix of a uniform distribution is zero (each entry has std 1/sqrt(3) per draw)
    R = rotations.quat_to_dcm(q)
    assert np.max(np.abs(R.mean(axis=0))) < 4.5 / np.sqrt(3 * len(q))
    # the rotation axis is uniform on the sphere: its z component is uniform on [-1, 1]
    axis_z = q[:, 3] / np.linalg.norm(q[:, 1:], axis=1)
    assert stats.kstest(axis_z, stats.uniform(-1.0, 2.0).cdf).pvalue > P_MIN


def test_normal_rotation_angle_is_chi3_scaled_by_std():
    std = 0.05
    q = sample(d.NormalRotation(std))
    np.testing.assert_allclose(np.linalg.norm(q, axis=1), 1.0, atol=1e-12)
    angle = 2.0 * np.arctan2(np.linalg.norm(q[:, 1:], axis=1), q[:, 0])
    assert stats.kstest(angle, stats.chi(3, scale=std).cdf).pvalue > P_MIN
    # each rotation-vector component is N(0, std^2)
    rotvec = rotations.quat_to_rotvec(q)
    assert stats.kstest(rotvec[:, 0], stats.norm(0.0, std).cdf).pvalue > P_MIN
    np.testing.assert_array_equal(d.NormalRotation(0.0).draw(np.random.default_rng(1)), [1.0, 0.0, 0.0, 0.0])


def test_choice_follows_its_weights():
    picks = sample(d.Choice(["a", "b", "c"], weights=[1.0, 0.0, 3.0]), n=4000)
    counts = {o: int(np.sum(picks == o)) for o in "abc"}
    assert counts["b"] == 0
    assert stats.binomtest(counts["a"], 4000, 0.25).pvalue > P_MIN
    assert set(sample(d.Choice([1, 2]), n=50)) == {1, 2}


def test_scaled_inertia_is_symmetric_positive_definite_with_the_relative_spread():
    J = np.array([[0.02, 0.001, 0.0], [0.001, 0.03, -0.002], [0.0, -0.002, 0.025]])
    draws = sample(d.Scaled(J, 0.3), n=2000)
    for Jk in draws:
        np.testing.assert_array_equal(Jk, Jk.T)
        assert np.all(np.linalg.eigvalsh(Jk) > 0.0)
        assert Jk[0, 2] == 0.0  # a zero product of inertia stays zero
    # without the positive-definite redraws this would be normal; the diagonal at 30 % rarely fails
    ratio = draws[:, 1, 1] / J[1, 1]
    assert abs(ratio.mean() - 1.0) < 0.03 and abs(ratio.std() - 0.3) < 0.03
    x = sample(d.Scaled(2.0, 0.1), n=2000)
    assert stats.kstest(x, stats.norm(2.0, 0.2).cdf).pvalue > P_MIN


def test_scaled_gives_up_after_the_redraws():
    # entries dispersed by 1000 times their size: a 6x6 symmetric matrix of such noise is almost never definite
    nearly_singular = 0.999 * np.ones((6, 6)) + 0.001 * np.eye(6)
    with pytest.raises(InputError, match="rel_std: must leave the matrix positive definite"):
        d.draw_parameters({"J": d.Scaled(nearly_singular, 1e3)}, 0, 0)


def test_describe_names_the_distribution_and_its_parameters():
    assert d.Normal(0.02, 0.002).describe() == "Normal(mean=0.02, std=0.002)"
    assert d.Uniform([0, 1], [1, 2]).describe() == "Uniform(low=[0, 1], high=[1, 2])"
    assert d.Choice(["x", "y"], [1, 3]).describe() == "Choice(['x', 'y'], weights=[1, 3])"
    assert repr(d.NormalRotation(0.01)) == "NormalRotation(std_rad=0.01)"
    assert d.Scaled(np.eye(2), 0.1).describe() == "Scaled(nominal=[[1, 0], [0, 1]], rel_std=0.1)"


def test_flatten_names_vector_and_matrix_elements():
    flat = d.flatten({"m": 2, "v": np.array([1.0, 2.0]), "J": np.array([[1.0, 2.0], [3.0, 4.0]]), "mode": "safe"})
    assert flat == {"m": 2.0, "v[0]": 1.0, "v[1]": 2.0, "J[0,0]": 1.0, "J[0,1]": 2.0, "J[1,0]": 3.0, "J[1,1]": 4.0,
                    "mode": "safe"}
    assert all(isinstance(v, float) for k, v in flat.items() if k != "mode")


@pytest.mark.parametrize("build,field", [
    (lambda: d.Normal(0.0, -1.0), "std"),
    (lambda: d.Normal([0.0, 1.0], [1.0, 1.0, 1.0]), "std"),
    (lambda: d.Normal(float("nan"), 1.0), "mean"),
    (lambda: d.Uniform(1.0, 1.0), "high"),
    (lambda: d.Uniform([0.0, 2.0], [1.0, 1.0]), "high"),
    (lambda: d.TruncatedNormal(0.0, 0.0, -1.0, 1.0), "std"),
    (lambda: d.TruncatedNormal(0.0, 1.0, 1.0, -1.0), "high"),
    (lambda: d.NormalRotation(-0.1), "std_rad"),
    (lambda: d.Choice([]), "options"),
    (lambda: d.Choice("abc"), "options"),
    (lambda: d.Choice(["a", "b"], [1.0]), "weights"),
    (lambda: d.Choice(["a", "b"], [0.0, 0.0]), "weights"),
    (lambda: d.Choice(["a", "b"], [1.0, -1.0]), "weights"),
    (lambda: d.Scaled(1.0, -0.1), "rel_std"),
    (lambda: d.Scaled([[1.0, 2.0], [0.0, 1.0]], 0.1), "nominal"),
    (lambda: d.Scaled(np.diag([1.0, -1.0]), 0.1), "nominal"),
    (lambda: d.Scaled(np.ones((2, 3)), 0.1), "nominal"),
    (lambda: d.draw_parameters({"x": d.Normal(0, 1)}, -1, 0), "seed"),
    (lambda: d.draw_parameters({"x": d.Normal(0, 1)}, 0, 1.5), "index"),
    (lambda: d.draw_parameters({"x": 3.0}, 0, 0), "dispersions['x']"),
    (lambda: d.Uniform(-1e308, 1e308), "high"),  # high - low overflows: every draw would be inf or nan
    (lambda: d.Uniform([0.0, -1.7e308], [1.0, 1.7e308]), "high"),
    (lambda: d.Scaled([], 0.1), "nominal"),
    (lambda: d.checked([d.Normal(0, 1)]), "dispersions"),
    (lambda: d.checked({"": d.Normal(0, 1)}), "dispersions"),
    (lambda: d.checked({"omega0_rad_s": [0.1, 0.2, 0.3]}), "dispersions['omega0_rad_s']"),
    (lambda: d.run_seed(0, -2), "index"),
])
def test_bad_arguments_are_refused_naming_the_field(build, field):
    with pytest.raises(InputError) as info:
        build()
    assert info.value.field == field
