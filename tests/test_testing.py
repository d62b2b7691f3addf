"""attsim.testing: the assertions pass on good runs and fail with value, time and bound."""

import numpy as np
import pytest

import attsim
from attsim import rotations
from attsim.testing import assert_momentum_conserved, assert_no_saturation, assert_pointing_within, assert_rate_below


@pytest.fixture(scope="module")
def slew(tmp_path_factory):
    target = rotations.axis_angle_to_quat([0, 0, 1], np.pi / 3)
    mission = attsim.Mission("slew", 0.05 * np.eye(3), (0.0, 0.0, 0.0), duration=300.0, max_step=0.1,
                             out_dir=tmp_path_factory.mktemp("slew"))
    wheels = [mission.add(attsim.ReactionWheel(f"rw{k}", axis, 1e-4, 2e-3, 300.0)) for k, axis in enumerate(np.eye(3))]
    mission.add(attsim.QuaternionPD(target, kp=5e-4, kd=1e-2, period_s=0.5, wheels=wheels,
                                    attitude_source=attsim.TRUTH, rate_source=attsim.TRUTH))
    return mission.run(), target


def test_assertions_pass_on_a_good_run(slew):
    tel, target = slew
    assert assert_pointing_within(tel, target, deg=0.1, after_s=250.0) < 0.1
    assert assert_rate_below(tel, 1e-4, within_s=250.0) <= 250.0
    assert assert_momentum_conserved(tel, rtol=1e-9) < 1e-9
    assert_no_saturation(tel, "rw0")


def test_assertions_fail_with_value_time_and_bound(slew):
    tel, target = slew
    with pytest.raises(AssertionError, match=r"pointing error 60 deg at t = 0 s exceeds 1 deg"):
        assert_pointing_within(tel, target, deg=1.0, after_s=0.0)
    with pytest.raises(AssertionError,
                       match=r"\|omega\| = .* rad/s at t = .* s, not below 1e-06 rad/s from t = 10 s on"):
        assert_rate_below(tel, 1e-6, within_s=10.0)
    with pytest.raises(AssertionError, match=r"inertial angular momentum changed by .* more than rtol = 1e-09"):
        assert_momentum_conserved(tel, rtol=1e-9, inertia=0.06 * np.eye(3))  # the wrong inertia breaks conservation


def test_saturation_assertion(tmp_path):
    mission = attsim.Mission("sat", np.eye(3), (0, 0, 0), duration=5.0, out_dir=tmp_path, field=(0, 0, 3e-5))
    mission.add(attsim.Magnetorquer(0.1))
    mission.add(attsim.CommandSchedule("mtq", [(1.0, (0.5, 0.0, 0.0))]))
    tel = mission.run()
    with pytest.raises(AssertionError, match=r"mtq saturated 1 time\(s\), first at t = 1 s \(dipole\)"):
        assert_no_saturation(tel, "mtq")


def test_a_slew_held_on_the_wheels_torque_limit_is_saturation_though_no_wheel_clipped(tmp_path):
    """QuaternionPD scales its torques to the wheels' limits, so a wheel clips little or nothing and logs few
    events, yet the slew runs on the limit from its start; the assertion says so from the telemetry."""
    mission = attsim.Mission("limited", 0.05 * np.eye(3), (0.0, 0.0, 0.0), duration=60.0, max_step=0.1,
                             out_dir=tmp_path)
    wheels = [mission.add(attsim.ReactionWheel(f"rw{k}", axis, 1e-4, 1e-4, 600.0)) for k, axis in enumerate(np.eye(3))]
    mission.add(attsim.QuaternionPD(rotations.axis_angle_to_quat([0.0, 0.0, 1.0], 1.0), kp=1e-2, kd=2e-2,
                                    period_s=0.5, wheels=wheels, attitude_source=attsim.TRUTH,
                                    rate_source=attsim.TRUTH))
    tel = mission.run()
    # the first events come at 19 s (a request exactly on the limit); the torque sits on it from the first cycle
    with pytest.raises(AssertionError, match=r"rw2 saturated \d+ time\(s\), first at t = 0 s \(torque\)"):
        assert_no_saturation(tel, "rw2")
