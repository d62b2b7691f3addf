"""Magnetorquers as an array of bars on any axes (Basilisk's GtMatrix_B): the steering, the limits per bar, the
three body-axis bars as its identity case, the checks, the telemetry and the report."""

import numpy as np
import pytest

import attsim
from attsim.actuators.kernels import magnetorquer_dipole
from attsim.reporting import actuators

S = 0.70710678  # Basilisk's scenarioMtbMomentumManagementSimple, as printed there
BASILISK_BARS = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [S, S, 0.0]]  # its GtMatrix_B's columns
# its dipoleMapping steeringMatrix (row major, 4 x 3), which it derived by hand as the pseudo-inverse
BASILISK_STEERING = np.array([[0.75, -0.25, 0.0], [-0.25, 0.75, 0.0], [0.0, 0.0, 1.0], [0.35355339, 0.35355339, 0.0]])


def _apply(mtq, m):
    bars = np.zeros(mtq.dipole_max_Am2.size)
    applied, saturated = magnetorquer_dipole(tuple(m), mtq._steering, mtq._axes, mtq.dipole_max_Am2,
                                             mtq.saturation == "scale", bars)
    return np.array(applied), bars, saturated


def test_the_bars_take_basilisks_steering_and_apply_the_dipole_asked():
    mtq = attsim.Magnetorquer(0.1, bar_axes=BASILISK_BARS)
    assert np.allclose(mtq._steering, BASILISK_STEERING, rtol=0, atol=1e-8)  # the example's 8 digits
    m = (0.03, -0.02, 0.05)
    applied, bars, saturated = _apply(mtq, m)
    assert not saturated
    assert np.allclose(bars, BASILISK_STEERING @ m, rtol=0, atol=1e-9)
    assert np.allclose(applied, m, rtol=0, atol=1e-16)  # four bars spanning three axes give the dipole asked


def test_each_bar_clips_at_its_own_limit_or_all_scale_together():
    limits = (0.02, 0.05, 0.05, 0.01)
    m = (0.04, 0.0, 0.01)
    clip = attsim.Magnetorquer(limits, bar_axes=BASILISK_BARS)
    applied, bars, saturated = _apply(clip, m)
    wanted = clip._steering @ m
    assert saturated and np.array_equal(bars, np.clip(wanted, -np.array(limits), limits))
    assert np.allclose(applied, np.array(BASILISK_BARS).T @ (bars / np.linalg.norm(BASILISK_BARS, axis=1)),
                       rtol=0, atol=1e-17)
    scale = attsim.Magnetorquer(limits, saturation="scale", bar_axes=BASILISK_BARS)
    applied, bars, saturated = _apply(scale, m)
    ratio = np.max(np.abs(wanted) / limits)
    assert saturated and np.allclose(bars, wanted / ratio, rtol=1e-15, atol=0)
    assert np.allclose(np.cross(applied, m), 0.0, atol=1e-18) and np.dot(applied, m) > 0  # the direction is kept


def test_three_body_axis_bars_are_the_identity_and_the_default():
    m = (0.3, -0.05, 0.12)
    default = attsim.Magnetorquer((0.2, 0.1, 0.1))
    explicit = attsim.Magnetorquer((0.2, 0.1, 0.1), bar_axes=np.eye(3))
    assert default.bar_axes is None and np.array_equal(default._steering, np.eye(3))
    for mtq in (default, explicit):
        applied, bars, saturated = _apply(mtq, m)
        assert saturated and np.array_equal(applied, [0.2, -0.05, 0.1]) and np.array_equal(bars, applied)
    applied, _, saturated = _apply(attsim.Magnetorquer(0.2, saturation="scale"), m)
    assert saturated and np.allclose(applied, np.array(m) * 0.2 / 0.3, rtol=1e-15, atol=0)


def test_bars_in_a_plane_apply_the_part_of_the_dipole_they_span():
    mtq = attsim.Magnetorquer(1.0, bar_axes=[[1.0, 0.0, 0.0], [1.0, 1.0, 0.0]])  # not unit: a direction only
    assert np.allclose(np.linalg.norm(mtq.bar_axes, axis=1), 1.0, rtol=0, atol=1e-15)
    applied, _, _ = _apply(mtq, (0.1, 0.2, 0.3))
    assert np.allclose(applied, (0.1, 0.2, 0.0), rtol=0, atol=1e-16)


def test_a_given_steering_matrix_is_taken_as_given():
    # Basilisk's dipoleMapping takes any steeringMatrix: the bars get S m, the body feels G (what they took)
    G = np.array(BASILISK_BARS).T / np.linalg.norm(BASILISK_BARS, axis=1)
    m = (0.03, -0.02, 0.05)
    idle_fourth = attsim.Magnetorquer(0.1, bar_axes=BASILISK_BARS,
                                      steering_matrix=np.vstack([np.eye(3), np.zeros(3)]))
    applied, bars, saturated = _apply(idle_fourth, m)
    assert not saturated and np.array_equal(bars, [0.03, -0.02, 0.05, 0.0]) and np.allclose(applied, m, atol=1e-18)
    half = attsim.Magnetorquer(0.1, bar_axes=BASILISK_BARS, steering_matrix=0.5 * BASILISK_STEERING)  # G S = I / 2
    applied, bars, _ = _apply(half, m)
    assert np.allclose(bars, 0.5 * BASILISK_STEERING @ m, rtol=0, atol=1e-18)
    assert np.allclose(applied, G @ bars, rtol=0, atol=1e-18) and np.allclose(applied, np.array(m) / 2, atol=1e-9)
    clipped = attsim.Magnetorquer(0.02, bar_axes=BASILISK_BARS, steering_matrix=BASILISK_STEERING)
    applied, bars, saturated = _apply(clipped, m)
    assert saturated and np.allclose(bars, np.clip(BASILISK_STEERING @ m, -0.02, 0.02), rtol=0, atol=1e-18)
    assert attsim.Magnetorquer(0.1, bar_axes=BASILISK_BARS).steering_matrix is None  # the default: G+


@pytest.mark.parametrize("kwargs, field, rule", [
    ({"bar_axes": [[1.0, 0.0, 0.0], [0.0, 0.0, 0.0]]}, "bar_axes", "no zero row"),
    ({"bar_axes": [[1.0, np.nan, 0.0]]}, "bar_axes", "finite"),
    ({"bar_axes": [[1.0, 0.0], [0.0, 1.0]]}, "bar_axes", "(n, 3)"),
    ({"bar_axes": "x"}, "bar_axes", ""),
    ({"bar_axes": BASILISK_BARS, "dipole_max_Am2": (0.1, 0.1, 0.1)}, "dipole_max_Am2", "one per bar"),
    ({"bar_axes": BASILISK_BARS, "dipole_max_Am2": (0.1, 0.1, 0.0, 0.1)}, "dipole_max_Am2", "> 0 on every bar"),
    ({"dipole_max_Am2": (0.1, 0.1, 0.1, 0.1)}, "dipole_max_Am2", "one per axis"),
    ({"dipole_max_Am2": -0.1}, "dipole_max_Am2", "> 0 on every axis"),
    ({"bar_axes": BASILISK_BARS, "steering_matrix": np.eye(3)}, "steering_matrix", "(4, 3)"),
    ({"steering_matrix": [[1.0, 0.0, np.inf], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]}, "steering_matrix", "finite"),
])
def test_bad_arrays_are_refused_by_name(kwargs, field, rule):
    kwargs = {"dipole_max_Am2": 0.1, **kwargs}
    with pytest.raises(attsim.InputError) as caught:
        attsim.Magnetorquer(**kwargs)
    assert caught.value.field == field and rule in caught.value.rule


def test_an_array_logs_its_bars_and_the_report_draws_them(tmp_path):
    mission = attsim.Mission("bars", np.diag([0.01, 0.012, 0.015]), (0.02, -0.01, 0.03), duration=5.0,
                             telemetry_dt=1.0, field=(2e-5, -1e-5, 3e-5), out_dir=tmp_path)
    mission.add(attsim.Magnetorquer((0.05, 0.05, 0.05, 0.02), bar_axes=BASILISK_BARS, name="mtb"))
    mission.add(attsim.CommandSchedule("mtb", [(1.0, (0.03, 0.03, 0.0))]))
    tel = mission.run(backend="interpreted", in_memory=True)
    bars = tel.df[[f"mtb_bar{k}" for k in (1, 2, 3, 4)]].to_numpy()
    assert np.allclose(bars[-1], np.clip(BASILISK_STEERING @ (0.03, 0.03, 0.0), -0.05, 0.05)[:3].tolist()
                       + [0.02], rtol=0, atol=1e-9)  # the fourth bar at its limit
    assert (tel.events["kind"] == "saturation").sum() == 1
    meta = next(c for c in tel.meta["components"] if c["name"] == "mtb")
    assert np.allclose(meta["bar_axes"], BASILISK_BARS, atol=1e-8) and meta["dipole_max_Am2"] == [0.05] * 3 + [0.02]
    plot = next(p for p in actuators.section(tel).items if p.title.startswith("mtb"))
    layout, names = plot.figure["layout"], [trace["name"] for trace in plot.figure["data"]]
    assert layout["yaxis2"]["title"]["text"] == "bar dipoles [A m²]"
    assert names[3:] == ["bar 1", "bar 2", "bar 3", "bar 4", "limit ±0.02 A m² (bar 4)",
                         "limit ±0.05 A m² (bar 1, 2, 3)"]


def test_an_ensemble_takes_three_body_axis_bars_only():
    with pytest.raises(attsim.InputError) as caught:
        attsim.Ensemble(2, np.diag([0.01, 0.01, 0.01]), magnetorquer=attsim.Magnetorquer(0.1, bar_axes=BASILISK_BARS),
                        period_s=1.0, field=(2e-5, 0.0, 0.0))
    assert caught.value.field == "magnetorquer" and "bar_axes=None" in caught.value.rule
    with pytest.raises(attsim.InputError) as caught:
        attsim.Ensemble(2, np.diag([0.01, 0.01, 0.01]), period_s=1.0, field=(2e-5, 0.0, 0.0),
                        magnetorquer=attsim.Magnetorquer(0.1, steering_matrix=2 * np.eye(3)))
    assert caught.value.field == "magnetorquer" and "steering_matrix=None" in caught.value.rule


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")  # the overflow is the case under test
@pytest.mark.parametrize("kernel", ["py_func", "compiled"])
def test_a_request_whose_ratio_to_the_limits_overflows_is_scaled_not_zeroed(kernel):
    """Found by an outsider: |m| / limit overflowed to inf and m / inf gave a zero dipole, silently."""
    from attsim.actuators.kernels import saturate_bars

    f = saturate_bars.py_func if kernel == "py_func" else saturate_bars
    limits = np.array([0.1, 0.2, 0.05, 0.3])
    bars = np.array([1.7e308, -1.7e308, 1.7e308, -1.7e308])
    assert f(bars, limits, True)
    np.testing.assert_allclose(bars, [0.05, -0.05, 0.05, -0.05], rtol=1e-14)  # the tightest bar at its limit
    tiny = np.array([1e10, 0.0, -5e9])
    assert f(tiny, np.array([1e-299, 1.0, 1.0]), True)
    assert tiny[0] == pytest.approx(1e-299, rel=1e-12) and tiny[1] == 0.0 and tiny[2] == pytest.approx(-5e-300)
    assert np.all(np.isfinite(bars)) and np.all(np.isfinite(tiny))
