"""Hostile configuration of the ADCS chain (issue 11), found by an outside review: each value here made a run end in
an OverflowError, a LinAlgError, NaN telemetry or a misleading refusal before it was refused by name."""

import math
import re

import numpy as np
import pytest

import attsim
from attsim import modes
from attsim.guidance.targets import GroundTarget


def _gyro(**kw):
    return attsim.Gyro(10.0, arw_rad_sqrt_s=1e-5, **kw)


def _tracker(**kw):
    return attsim.StarTracker(1.0, noise_arcsec=5.0, **kw)


@pytest.mark.parametrize("kwargs, field, rule", [
    # each of these overflowed the covariance: OverflowError at start, LinAlgError in the first update
    (dict(sigma_attitude0_deg=1e200), "sigma_attitude0_deg", "must be <= 180"),
    (dict(sigma_attitude0_deg=181.0), "sigma_attitude0_deg", "must be <= 180"),
    (dict(sigma_bias0_rad_s=1e200), "sigma_bias0_rad_s", "must turn the estimate at most half a turn"),
    (dict(gyro_arw_rad_sqrt_s=1e200), "gyro_arw_rad_sqrt_s", "must add at most half a turn"),
    (dict(gyro_bias_rw_rad_s_sqrt_s=1e200), "gyro_bias_rw_rad_s_sqrt_s", "must add at most half a turn"),
    (dict(star_tracker_noise_arcsec=1e200), "star_tracker_noise_arcsec", "must be <= 648000"),
    # a wrong shape was numpy's broadcast ValueError, not an attsim error
    (dict(star_tracker_noise_arcsec=(1.0, 2.0)), "star_tracker_noise_arcsec", "must be one number or three"),
])
def test_filter_noise_that_would_overflow_the_covariance_is_refused(kwargs, field, rule):
    with pytest.raises(attsim.InputError, match=f"^{field}: {re.escape(rule)}"):
        attsim.MEKF(_gyro(), star_tracker=_tracker(), **kwargs)


@pytest.mark.parametrize("field", ["magnetometer_noise_T", "sun_noise"])
def test_vector_noise_whose_square_overflows_is_refused(field):
    with pytest.raises(attsim.InputError, match=f"^{field}: must be <= 1e\\+100"):
        attsim.MEKF(_gyro(), magnetometer=attsim.Magnetometer(1.0, noise_T=1e-7), sun_sensor=attsim.SunSensor(1.0),
                    q0=(1, 0, 0, 0), **{"magnetometer_noise_T": 1e-7, "sun_noise": 0.01, field: 1e200})


@pytest.mark.parametrize("compiled", [False, True])
def test_the_largest_accepted_filter_noises_run_to_finite_estimates(tmp_path, compiled):
    # the bounds are not so tight that legitimate pessimism is refused, nor so loose that the filter breaks
    m = attsim.Mission("wide", np.diag([0.06, 0.055, 0.02]), (0.01, -0.02, 0.015), duration=20.0, seed=1,
                       out_dir=tmp_path / str(compiled))
    gyro = m.add(_gyro())
    tracker = m.add(_tracker())
    edge = 0.999 * math.pi  # just inside each bound (a 10 Hz gyro: dt = 0.1 s)
    m.add(attsim.MEKF(gyro, star_tracker=tracker, sigma_attitude0_deg=180.0, sigma_bias0_rad_s=edge / 0.1,
                      gyro_arw_rad_sqrt_s=edge / math.sqrt(0.1), gyro_bias_rw_rad_s_sqrt_s=edge / 0.1**1.5,
                      star_tracker_noise_arcsec=648000.0))
    df = m.run(compiled=compiled).df
    estimate = df[[f"mekf_{c}" for c in ("qw", "qx", "qy", "qz", "sigma3_att_x", "bias_x")]]
    assert np.isfinite(estimate.to_numpy()).all()


@pytest.mark.parametrize("make, field, rule", [
    # the noise and the bias are rotations: at these sizes the measured quaternion was NaN with no _valid column
    (lambda: attsim.StarTracker(1.0, noise_arcsec=1e300), "noise_arcsec", "must be <= 648000"),
    (lambda: attsim.StarTracker(1.0, bias_arcsec=(1e300, 0.0, 0.0)), "bias_arcsec", "must be a rotation of at most"),
    (lambda: attsim.StarTracker(1.0, faults=[attsim.SensorFault(1.0, "bias_jump", 1.0, (0.0, 7e5, 0.0))]),
     "faults[0].bias", "must be a rotation of at most"),
])
def test_star_tracker_errors_beyond_half_a_turn_are_refused(make, field, rule):
    with pytest.raises(attsim.InputError, match=f"^{re.escape(field)}: {re.escape(rule)}"):
        make()


def test_a_star_tracker_with_half_a_turn_of_noise_still_outputs_attitudes(tmp_path):
    m = attsim.Mission("noisy", np.diag([0.06, 0.055, 0.02]), (0.0, 0.0, 0.0), duration=5.0, out_dir=tmp_path)
    m.add(attsim.StarTracker(10.0, noise_arcsec=648000.0, bias_arcsec=(648000.0, 0.0, 0.0)))
    q = m.run().df[["st_qw", "st_qx", "st_qy", "st_qz"]].to_numpy()
    assert np.isfinite(q).all() and np.allclose(np.linalg.norm(q, axis=1), 1.0, atol=1e-12)


@pytest.mark.parametrize("alt_m", [-1e7, -12e3, 1e6, 1e300])
def test_a_ground_target_far_from_the_ground_is_refused(alt_m):
    # -1e7 m put the 'station' beyond the Earth's centre; the target then tracked a point in space
    with pytest.raises(attsim.InputError, match=r"^alt_m: must be in \[-11000, 100000\]"):
        GroundTarget(10.0, 20.0, alt_m)


def _bdot():
    return attsim.BDot(attsim.Magnetometer(1.0), attsim.Magnetorquer(0.1), gain=1.0, period_s=1.0)


@pytest.mark.parametrize("modes_, transitions, initial, rule", [
    # a transition of two entries was Python's 'not enough values to unpack' (a ValueError, not an attsim error)
    ([("a", [None])], [("a", "a")], "a", r"^transitions\[0\]: must be a \(from, to, condition\) triple"),
    # a string was unpacked letter by letter and refused as 'to must name a mode'
    ([("a", [None])], ["abc"], "a", r"^transitions\[0\]: must be a \(from, to, condition\) triple"),
    ([3], [], "a", r"^modes\[0\]: must be a \(name, controllers\) pair"),
    # '*' means any mode as a transition's source: a mode of that name made "from '*'" ambiguous
    ([("*", [None])], [], "*", r"^modes\[0\]: its name must be a non-empty string other than '\*'"),
    ([("", [None])], [], "", r"^modes\[0\]: its name must be a non-empty string"),
    ([(3, [None])], [], 3, r"^modes\[0\]: its name must be a non-empty string"),
])
def test_malformed_modes_and_transitions_are_refused_naming_the_entry(modes_, transitions, initial, rule):
    law = _bdot()
    modes_ = [(m[0], [law]) if isinstance(m, tuple) else m for m in modes_]
    with pytest.raises(attsim.InputError, match=rule):
        attsim.ModeManager(modes_, transitions, initial, 1.0)


def test_a_well_formed_mode_logic_is_still_accepted():
    law = _bdot()
    manager = attsim.ModeManager([["a", [law]], ("b", (law,))], [["a", "b", modes.timeout(5.0)]], "a", 1.0)
    assert manager.mode_names == ["a", "b"] and manager.transitions[0].condition.kind == modes.TIMEOUT


@pytest.mark.parametrize("compiled", [False, True])
def test_a_gyro_the_filter_cannot_propagate_stops_the_run_naming_the_estimator(tmp_path, compiled):
    # a bias of 1e200 rad/s is accepted by the gyro (finite) but turns the filter's covariance infinite: the next
    # update inverted it and the run ended in numba's LinAlgError on both paths
    m = attsim.Mission("wild_gyro", np.diag([0.06, 0.055, 0.02]), (0.01, -0.02, 0.015), duration=20.0, seed=1,
                       out_dir=tmp_path / str(compiled))
    tracker = m.add(_tracker())
    m.add(attsim.Gyro(10.0, arw_rad_sqrt_s=1e-5, bias_rad_s=(1e200, 0.0, 0.0), name="wild"))
    wild = m.add(attsim.MEKF(m.components[-1], star_tracker=tracker, sigma_bias0_rad_s=1e-3, name="wild_mekf"))
    with pytest.raises(attsim.AttsimError, match=r"^estimator 'wild_mekf': its state must stay finite") as info:
        m.run(compiled=compiled)
    assert isinstance(info.value, attsim.InputError) and "gyro 'wild'" in str(info.value)
    assert 0.0 < info.value.t_s <= 20.0
    tel = attsim.load(m.out_dir)
    assert tel.partial and "EstimatorDivergenceError" in tel.meta["stopped"]
    columns = [c for c in tel.df.columns if c.startswith(wild.name)]
    assert columns and np.isfinite(tel.df[columns].dropna().to_numpy()).all()
    assert tel.df.index[-1] < info.value.t_s
