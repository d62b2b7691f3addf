"""A wheel law's allocation options: the whole vector scaled to the motor limits (the default) or each wheel
clipping its own (Basilisk's rwMotorTorque and its wheels' saturation), over all or some body axes; recorded in
meta.json; the same run on the Python path and both backends of the compiled loop."""

import numpy as np
import pytest

import attsim

from tests.paths.test_mission_loop import J, _wheels, assert_same_run, both_ways

LIMIT_NM = 1e-3


def _slew(out, allocation, control_axes=None, n_wheels=3):
    m = attsim.Mission("alloc", J, (0.02, -0.03, 0.01), duration=4.0, max_step=0.1, telemetry_dt=0.5, out_dir=out)
    wheels = _wheels(m, max_torque_Nm=LIMIT_NM)[:n_wheels]
    m.add(attsim.QuaternionPD((1.0, 0.0, 0.0, 0.0), kp=2e-2, kd=8e-2, period_s=0.5, wheels=wheels,
                              attitude_source=attsim.TRUTH, rate_source=attsim.TRUTH, allocation=allocation,
                              control_axes=control_axes))
    return m


def test_clipping_leaves_the_unsaturated_wheels_their_torque_and_is_recorded(tmp_path):
    runs = {a: _slew(tmp_path / a, a).run(backend="interpreted") for a in ("scale", "clip")}
    cmd = [f"rw_{a}_torque_cmd" for a in "xyz"]
    torque = [f"rw_{a}_torque" for a in "xyz"]
    first = {a: runs[a].df.iloc[0] for a in runs}
    # the law asks more than a motor gives: scaled, the command fits the limits; clipped, it does not, and the
    # wheels clip it each on its own (the first row: both runs at the same state)
    assert np.abs(first["scale"][cmd]).max() == pytest.approx(LIMIT_NM)
    assert np.abs(first["clip"][cmd]).max() > LIMIT_NM
    assert np.abs(first["clip"][torque]).max() == pytest.approx(LIMIT_NM)
    unsaturated = np.abs(first["clip"][cmd].to_numpy()) < LIMIT_NM
    assert unsaturated.any()  # those keep the law's torque, where scaling shrank it
    assert np.allclose(first["clip"][torque].to_numpy()[unsaturated], first["clip"][cmd].to_numpy()[unsaturated])
    assert np.all(np.abs(first["scale"][torque].to_numpy()[unsaturated]) <
                  np.abs(first["clip"][torque].to_numpy()[unsaturated]))
    assert "torque" in set(runs["clip"].events["what"].dropna()) and len(runs["scale"].events) == 0
    for allocation, tel in runs.items():
        law = next(c for c in tel.meta["components"] if c["type"] == "QuaternionPD")
        assert law["allocation"] == allocation and "control_axes" not in law


def test_control_axes_ask_only_their_components_of_two_wheels(tmp_path):
    axes = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
    tel = _slew(tmp_path, "clip", control_axes=axes, n_wheels=2).run(backend="interpreted")
    law = next(c for c in tel.meta["components"] if c["type"] == "QuaternionPD")
    assert law["control_axes"] == axes
    assert np.abs(tel.df[["rw_x_torque", "rw_y_torque"]].to_numpy()).max() > 0.0


@pytest.mark.parametrize("kwargs, field", [({"allocation": "cut"}, "allocation"),
                                           ({"control_axes": [[0.0, 0.0, 0.0]]}, "control_axes")])
def test_bad_options_are_refused_by_name(kwargs, field):
    with pytest.raises(attsim.InputError, match=field):
        attsim.QuaternionPD((1.0, 0.0, 0.0, 0.0), kp=1.0, kd=1.0, period_s=1.0, wheels=["a", "b", "c"], **kwargs)


def test_a_magnetorquer_law_has_no_allocation_to_choose():
    with pytest.raises(attsim.InputError, match="allocation.*wheel law only"):
        attsim.QuaternionPD((1.0, 0.0, 0.0, 0.0), kp=1.0, kd=1.0, period_s=1.0, magnetorquer="mtq",
                            magnetometer="mag", allocation="clip")


def test_two_wheels_without_control_axes_are_refused_at_prepare(tmp_path):
    with pytest.raises(attsim.InputError, match="wheels.*span three axes"):
        _slew(tmp_path, "clip", n_wheels=2).run(backend="interpreted")


def test_clipped_allocation_on_control_axes_runs_alike_both_ways(tmp_path):
    def build(out):
        m = _slew(out, "clip", control_axes=[[1.0, 0.0, 0.0], [0.0, 0.6, 0.8], [0.0, -0.8, 0.6]])
        m.duration_s = 10.0
        return m

    python, compiled = both_ways(tmp_path, build)
    assert_same_run(python, compiled)
    assert "torque" in set(compiled.events["what"].dropna())
