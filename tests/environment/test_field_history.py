"""A magnetic field given as a table of times and vectors: held or interpolated, checked, given exactly."""

import numpy as np
import pytest

from attsim.environment import Environment, FieldHistory, KeplerOrbit
from attsim.environment.table import B_I, field_table, interpolate_vector
from attsim.errors import InputError

T = np.array([0.0, 1.0, 2.5, 4.0])
B = np.array([[1e-5, 0.0, 2e-5], [2e-5, -1e-5, 0.0], [0.0, 3e-5, 1e-5], [-1e-5, 1e-5, 1e-5]])


def test_held_and_interpolated_values():
    hold, linear = FieldHistory(T, B, interpolation="hold"), FieldHistory(T, B)
    assert np.array_equal(hold(1.0), B[1]) and np.array_equal(hold(2.4999), B[1]) and np.array_equal(hold(2.5), B[2])
    assert np.allclose(linear(1.75), 0.5 * (B[1] + B[2]), rtol=1e-15, atol=0)
    assert hold(np.array([0.5, 3.0])).shape == (2, 3)


@pytest.mark.parametrize("interpolation", ["hold", "linear"])
def test_the_mission_tables_give_the_history_exactly(interpolation):
    history = FieldHistory(T, B, interpolation=interpolation)
    # just before, at and just after each sample, and between
    t = np.sort(np.concatenate([T, np.nextafter(T, -np.inf)[1:], np.nextafter(T, np.inf)[:-1], [0.3, 1.7, 3.99]]))
    table = field_table(history, 4.0, 0.7)
    got = np.array([interpolate_vector(table.t_s, table.values, x) for x in t])
    assert np.allclose(got, history(t), rtol=0, atol=1e-20)  # to round-off of the interpolation
    orbit = KeplerOrbit.circular(600.0, 50.0, j2=False)
    environment = Environment.orbit_only(orbit, field=history, table_dt_s=1.0)
    t_env, values = environment.table(4.0)
    got = np.array([interpolate_vector(t_env, values, x) for x in t])
    assert np.allclose(got, history(t), rtol=0, atol=1e-20)
    assert np.all(np.diff(t_env) > 0) and set(np.arange(0.0, 4.1, 1.0)) <= set(t_env)  # the grid is still there
    r, _ = orbit.state_eci(t_env)
    assert np.array_equal(values[:, 3:6], r)


@pytest.mark.parametrize("args, field", [
    (([0.0, 2.0, 1.0], np.zeros((3, 3))), "t_s"),                 # not monotonic
    (([0.0, 1.0, 1.0], np.zeros((3, 3))), "t_s"),                 # a repeated time
    (([0.0, np.nan], np.zeros((2, 3))), "t_s"),
    (([0.0], np.zeros((1, 3))), "t_s"),
    (([[0.0, 1.0]], np.zeros((2, 3))), "t_s"),
    (([0.0, 1.0], np.zeros((2, 2))), "B_inertial_T"),             # shape
    (([0.0, 1.0], np.zeros((3, 3))), "B_inertial_T"),             # one vector per time
    (([0.0, 1.0], [[0.0, 0.0, 0.0], [np.inf, 0.0, 0.0]]), "B_inertial_T"),
    (([0.0, 1.0], "field"), "B_inertial_T"),
])
def test_bad_history_is_refused_by_name(args, field):
    with pytest.raises(InputError) as caught:
        FieldHistory(*args)
    assert caught.value.field == field


def test_interpolation_is_one_of_two():
    with pytest.raises(InputError) as caught:
        FieldHistory(T, B, interpolation="cubic")
    assert caught.value.field == "interpolation"


@pytest.mark.parametrize("t", [np.array([0.5, 1.0, 4.0]), np.array([0.0, 1.0, 3.0])])
def test_a_history_that_does_not_cover_the_run_is_refused(t):
    history = FieldHistory(t, B[:3])
    with pytest.raises(InputError, match="cover the run") as caught:
        field_table(history, 3.5, 0.1)
    assert caught.value.field == "field"
    with pytest.raises(InputError, match="cover the run"):
        Environment.orbit_only(KeplerOrbit.circular(600.0, 50.0), field=history).table(3.5)


def test_a_history_is_the_field_both_ways_and_at_the_samples_columns():
    from attsim.environment import FieldHistory as exported
    assert exported is FieldHistory and B_I == 0


@pytest.mark.parametrize("compiled", [False, True])
def test_a_held_sample_holds_through_the_end_of_its_step(tmp_path, compiled):
    # as the simulator that sampled it held it (Basilisk's MtbEffector holds magField_N over its task's step): a
    # step from 0 to 1 s integrates under B(0) to its end, the step from 1 s under B(1). Read at 1 s itself, the
    # last RK4 stage would weigh B(1) by 1/6: omega_y(1) = -(5/6 - 1/6) 1e-5 rad/s instead of -1e-5 rad/s.
    import attsim

    b0, b1 = (0.0, 0.0, 1e-5), (0.0, 0.0, -1e-5)
    history = FieldHistory([0.0, 1.0, 2.0], [b0, b1, b1], interpolation="hold")
    mission = attsim.Mission("held", np.eye(3), (0.0, 0.0, 0.0), duration=2.0, max_step=1.0, telemetry_dt=1.0,
                             field=history, out_dir=tmp_path)
    mission.add(attsim.Magnetorquer(10.0))
    mission.add(attsim.CommandSchedule("mtq", [(0.0, (1.0, 0.0, 0.0))]))  # m x B(0) = (0, -1e-5, 0) N m
    mission.add(attsim.Magnetometer(1.0))
    df = mission.run(compiled=compiled, backend="interpreted", in_memory=True).df
    assert df.loc[1.0, "wy"] == pytest.approx(-1e-5, rel=1e-9)
    assert df.loc[2.0, "wy"] == pytest.approx(0.0, abs=1e-14)  # then B(1) over the step from 1 s: back to rest
    assert df.loc[1.0, "mag_z"] == pytest.approx(b1[2], rel=1e-9)  # the instant itself reads the new sample


@pytest.mark.parametrize("interpolation", ["hold", "linear"])
def test_the_knot_table_is_its_definition_written_out(interpolation):
    """knot_table builds its knots in order and (held) each knot's sample by construction; against the definition:
    the ordered distinct times of 0, the end, the samples inside and (held) one float spacing before each sample up
    to the end, with the field there found sample by sample. Samples before 0, at the end, one float spacing
    apart."""
    t_s = np.array([-0.5, 0.25, 1.0, np.nextafter(2.0, -np.inf), 2.0, 3.0, 4.0])
    b = np.arange(3.0 * t_s.size).reshape(-1, 3) * 1e-6
    history = FieldHistory(t_s, b, interpolation=interpolation)
    for end_s in (3.0, 3.5, 4.0):
        knots = {0.0, end_s} | {t for t in t_s if 0.0 < t < end_s}
        if interpolation == "hold":
            knots |= {float(np.nextafter(t, -np.inf)) for t in t_s if 0.0 < t <= end_s}
        expected_t = np.array(sorted(knots))
        if interpolation == "hold":
            expected_b = np.array([b[max(k for k in range(t_s.size) if t_s[k] <= t)] for t in expected_t])
        else:
            expected_b = np.array([[np.interp(t, t_s, b[:, j]) for j in range(3)] for t in expected_t])
        t, values = history.knot_table(end_s)
        assert np.array_equal(t, expected_t) and np.array_equal(values, expected_b)
        assert np.array_equal(history.knot_times(end_s), expected_t)
