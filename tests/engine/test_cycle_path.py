"""The Python path's control cycle: SimPy's order kept without an event per cycle; commands checked cheaply."""

import math

import numpy as np
import pytest
import simpy
import simpy.rt

import attsim
from attsim.engine.component import At, Component, periodic
from attsim.engine.run import END_PRIORITY, RECORD_PRIORITY
from attsim._core.timegrid import grid_time

J = np.diag([2.0, 3.0, 4.0])


def _reference_periodic(env, period_s, phase_s, duration_s, action):
    """What ``periodic`` did before its shortcut: an event for every (snapped) time, served by SimPy."""
    k = 0
    while grid_time(phase_s, k, period_s) <= duration_s:
        if grid_time(phase_s, k, period_s) > env.now:
            yield At(env, grid_time(phase_s, k, period_s))
        action()
        k += 1


def _run(env, specs, until_s, process=periodic):
    """One ``process`` per ``(name, period, phase)`` and a reader at the rows' priority; the log of who ran when."""
    log = []
    for name, period_s, phase_s in specs:
        env.process(process(env, period_s, phase_s, until_s, lambda name=name: log.append((env.now, name))))

    def reader(env):
        for k in range(int(until_s) + 1):
            yield At(env, float(k), RECORD_PRIORITY)
            log.append((env.now, "row"))

    env.process(reader(env))
    env.run(until=At(env, until_s, END_PRIORITY))
    return log


def test_periodic_acts_at_its_times_without_an_event_when_nothing_is_queued_before():
    env = simpy.Environment()
    times = []
    env.process(periodic(env, 0.1, 0.0, 100.0, lambda: times.append(env.now)))
    env.run(until=At(env, 100.0, END_PRIORITY))
    assert times == [grid_time(0.0, k, 0.1) for k in range(1001)]  # by multiplication, snapped to the grid
    assert times[3] == 0.3  # (3 x 0.1 is 0.30000000000000004: snapped, grids that meet in exact arithmetic meet)
    # a handful for the run itself (its end, the process's start and finish); none per cycle
    assert next(env._eid) <= 5


@pytest.mark.parametrize("specs", [
    [("a", 0.5, 0.0), ("b", 0.25, 0.25), ("c", 1.0, 0.0), ("d", 0.3, 0.1)],
    [("slow", 1.0, 0.0), ("fast", 0.1, 0.0)],  # the fast one's events come after the slow one's at shared times
    [("fast", 0.1, 0.0), ("slow", 1.0, 0.0), ("late", 0.7, 2.0)],
])
def test_periodic_processes_sharing_instants_keep_simpys_order(specs):
    # SimPy serves one time by priority (the actions before the row), then by the order its events were made in.
    log = _run(simpy.Environment(), specs, 6.0)
    assert log == _run(simpy.Environment(), specs, 6.0, process=_reference_periodic)
    assert len(log) == sum(math.floor((6.0 - phase) / period + 1e-9) + 1 for _, period, phase in specs) + 7


def test_a_realtime_environment_gets_an_event_per_cycle_in_the_same_order():
    specs = [("a", 0.5, 0.0), ("b", 0.25, 0.25), ("c", 1.0, 0.0)]
    paced = simpy.rt.RealtimeEnvironment(factor=1e-4, strict=False)
    assert _run(paced, specs, 3.0) == _run(simpy.Environment(), specs, 3.0)
    assert next(paced._eid) > 3.0 / 0.25  # paced: at least one event per cycle of the fastest process


class _EventCount(Component):
    """Remembers the run's SimPy environment, to count the events it created."""

    name = "event_count"

    def processes(self, env, sc):
        self.env = env
        return ()


def test_a_python_controller_costs_an_event_per_row_not_per_cycle(tmp_path):
    mission = attsim.Mission("events", J, (0.01, 0.02, -0.01), duration=100.0, max_step=0.1, telemetry_dt=1.0,
                             out_dir=tmp_path)
    gyro = mission.add(attsim.Gyro(rate_hz=10.0))
    wheel = mission.add(attsim.ReactionWheel("rw", (0, 0, 1), 1e-3, 1e-3, 500.0))
    cycles = []
    mission.add(attsim.FunctionController(lambda t, r: cycles.append(t) or {"rw": -1e-2 * r["gyro"][2]}, period_s=0.1,
                                          sensors=[gyro], actuators=[wheel]))
    counter = mission.add(_EventCount())
    tel = mission.run()
    assert len(cycles) == 1001 and len(tel.df) == 101
    assert next(counter.env._eid) < 3 * 101  # about two per row (the row's, the cycle after it), not one per cycle


def test_the_fast_path_applies_what_the_generic_check_would(tmp_path):
    # Floats, numpy floats, ints and 0-d arrays are all torques; each wheel holds its clipped command.
    commands = {"rw_a": 2e-4, "rw_b": np.float64(-3e-4), "rw_c": 0, "rw_d": np.array(5e-4), "rw_e": np.float64(1.0)}
    mission = attsim.Mission("kinds", J, (0.0, 0.0, 0.0), duration=1.0, max_step=0.1, out_dir=tmp_path)
    wheels = [mission.add(attsim.ReactionWheel(name, axis, 1e-3, 1e-3, 500.0))
              for name, axis in zip(commands, ((1, 0, 0), (0, 1, 0), (0, 0, 1), (1, 0, 0), (0, 1, 0)))]
    mission.add(attsim.FunctionController(lambda t, r: commands, period_s=0.5, actuators=wheels))
    tel = mission.run()
    row = tel.df.iloc[-1]
    assert [row[f"{name}_torque"] for name in commands] == [2e-4, -3e-4, 0.0, 5e-4, 1e-3]  # the last clipped
    assert list(tel.events["kind"]) == ["saturation"] and tel.events.iloc[0]["actuator"] == "rw_e"


@pytest.mark.parametrize("bad, rule", [
    (math.nan, "finite"), (np.float64(math.inf), "finite"), (-math.inf, "finite"), (np.array(math.nan), "finite"),
    ((0.1, 0.2, 0.3), "shape"), (None, "numeric"),
])
def test_a_bad_wheel_command_still_names_the_controller_the_time_and_the_wheel(tmp_path, bad, rule):
    mission = attsim.Mission("bad", J, (0.0, 0.0, 0.0), duration=2.0, max_step=0.1, out_dir=tmp_path)
    wheel = mission.add(attsim.ReactionWheel("rw", (0, 0, 1), 1e-3, 1e-3, 500.0))
    mission.add(attsim.FunctionController(lambda t, r: {"rw": bad if t >= 1.5 else 1e-4}, period_s=0.5,
                                          actuators=[wheel], name="law"))
    with pytest.raises(attsim.ControllerError, match=rf"controller 'law' at t = 1.5 s: bad command for 'rw'.*{rule}"):
        mission.run()
    tel = attsim.load(tmp_path)
    assert tel.partial and tel.df.index[-1] == 1.5


def test_a_sensors_normals_are_its_generators_draws_sample_by_sample(tmp_path):
    # Drawn in blocks, handed out per sample: the same numbers as one call per sample on the same generator.
    mission = attsim.Mission("draws", J, (0.0, 0.0, 0.0), duration=1.0, seed=7, out_dir=tmp_path)
    gyro = mission.add(attsim.Gyro(rate_hz=1.0, arw_rad_sqrt_s=1e-4))
    mission.run()
    gyro.rng, gyro._drawn, gyro._next_draw = np.random.default_rng(5), [], 0  # a fresh generator, nothing drawn
    reference = np.random.default_rng(5)
    for _ in range(3 * 256 + 5):  # across block boundaries
        assert gyro.normals() == tuple(reference.standard_normal(6))


def test_a_noise_free_magnetometer_reads_the_field_rotated_into_the_body(tmp_path):
    # B_B = R_IB^T B_I with R_IB from the quaternion by rotations.quat_to_dcm (an independent route).
    from attsim import rotations

    field = (2e-5, -1e-5, 3e-5)
    q0 = rotations.axis_angle_to_quat([0.3, -0.2, 0.9], 1.1)
    mission = attsim.Mission("mag", J, (0.01, 0.02, -0.03), q0=q0, duration=5.0, max_step=0.1, field=field,
                             out_dir=tmp_path)
    mission.add(attsim.Magnetometer(rate_hz=1.0))
    df = mission.run().df
    q = df[["qw", "qx", "qy", "qz"]].to_numpy()
    expected = np.einsum("nji,j->ni", rotations.quat_to_dcm(q), np.array(field))
    assert np.abs(df[["mag_x", "mag_y", "mag_z"]].to_numpy() - expected).max() < 1e-18


def test_magnetorquer_commands_of_every_kind_are_held_or_refused_alike(tmp_path):
    cases = [((0.01, -0.02, 0.03), (0.01, -0.02, 0.03)), ([0.5, 0.0, -0.5], (0.1, 0.0, -0.1)),
             (np.array([0.02, 0.0, 0.0]), (0.02, 0.0, 0.0)), ((1, 0, 0), (0.1, 0.0, 0.0)),
             (np.array([0.0, 1.0, 0.0], dtype=np.float32), (0.0, 0.1, 0.0)),
             ((np.float64(0.03), 0.0, 0.0), (0.03, 0.0, 0.0))]
    for k, (command, held) in enumerate(cases):
        mission = attsim.Mission("mtq", J, (0.0, 0.0, 0.0), duration=1.0, field=(2e-5, 0, 0), out_dir=tmp_path / str(k))
        mtq = mission.add(attsim.Magnetorquer(dipole_max_Am2=0.1))
        mission.add(attsim.FunctionController(lambda t, r, command=command: {"mtq": command}, period_s=1.0,
                                              actuators=[mtq]))
        tel = mission.run()
        assert tuple(tel.df.loc[1.0, ["mtq_m_x", "mtq_m_y", "mtq_m_z"]]) == held, command
        assert list(tel.events["kind"]) == (["saturation"] if max(map(abs, command)) > 0.1 else []), command
    for k, (bad, rule) in enumerate([((0.0, math.nan, 0.0), "finite"), (np.array([[0.0], [0.0], [0.0]]), "shape"),
                                     ((0.0, 0.0), "shape"), (np.array([0.0, math.inf, 0.0]), "finite")]):
        mission = attsim.Mission("bad", J, (0.0, 0.0, 0.0), duration=1.0, field=(2e-5, 0, 0),
                                 out_dir=tmp_path / f"b{k}")
        mtq = mission.add(attsim.Magnetorquer(dipole_max_Am2=0.1))
        mission.add(attsim.FunctionController(lambda t, r, bad=bad: {"mtq": bad}, period_s=1.0, actuators=[mtq],
                                              name="law"))
        with pytest.raises(attsim.ControllerError, match=rf"'law' at t = 0 s: bad command for 'mtq'.*{rule}"):
            mission.run()


def test_commands_act_and_log_in_the_order_the_controller_gave_them(tmp_path):
    # Wheel torques travel to the plant together, but a command to another actuator between them still acts between.
    mission = attsim.Mission("order", J, (0.0, 0.0, 0.0), duration=1.0, field=(2e-5, 0, 0), out_dir=tmp_path)
    wheels = [mission.add(attsim.ReactionWheel(name, axis, 1e-3, 1e-3, 500.0))
              for name, axis in (("rw_a", (1, 0, 0)), ("rw_b", (0, 1, 0)), ("rw_c", (0, 0, 1)))]
    mtq = mission.add(attsim.Magnetorquer(dipole_max_Am2=0.1))
    commands = {"rw_c": 1.0, "rw_a": -1.0, "mtq": (1.0, 0.0, 0.0), "rw_b": 1.0}  # every one saturates
    mission.add(attsim.FunctionController(lambda t, r: commands, period_s=1.0, actuators=[*wheels, mtq]))
    tel = mission.run()
    assert list(tel.events["actuator"]) == ["rw_c", "rw_a", "mtq", "rw_b"]
    assert list(tel.df.loc[1.0, ["rw_a_torque", "rw_b_torque", "rw_c_torque", "mtq_m_x"]]) == [-1e-3, 1e-3, 1e-3, 0.1]


def test_a_sun_sensor_without_a_sun_source_is_refused_before_the_run_starts(tmp_path):
    mission = attsim.Mission("css", J, (0.0, 0.0, 0.0), duration=5.0, out_dir=tmp_path)
    mission.add(attsim.SunSensor(rate_hz=1.0))
    with pytest.raises(attsim.InputError, match="sun_inertial: sun sensor 'css' needs a sun direction"):
        mission.run()
    assert not (tmp_path / "meta.json").exists()  # checked with the configuration, not at the first sample


@pytest.mark.parametrize("on_time", [0.3, np.float64(0.3), 1])
def test_thruster_on_times_of_every_kind_fire_for_that_long(tmp_path, on_time):
    mission = attsim.Mission("fire", J, (0.0, 0.0, 0.0), duration=2.0, max_step=0.1, telemetry_dt=0.1,
                             out_dir=tmp_path)
    jet = mission.add(attsim.Thruster("jet", (0.0, 0.5, 0.0), (1.0, 0.0, 0.0), max_force_N=0.2))
    mission.add(attsim.FunctionController(lambda t, r: {"jet": on_time} if t == 0.0 else {}, period_s=0.5,
                                          actuators=[jet]))
    tel = mission.run()
    on = tel.df["jet_on"]
    assert on[on > 0].index.max() == pytest.approx(float(on_time) - 0.1, abs=1e-9)  # rows at 0.1 s: last one lit
    assert list(tel.events["kind"]) == ["thruster_on", "thruster_off"]


@pytest.mark.parametrize("bad, rule", [(-0.1, ">= 0"), (math.nan, "finite"), (np.float64(math.inf), "finite")])
def test_a_bad_on_time_names_the_controller_and_the_thruster(tmp_path, bad, rule):
    mission = attsim.Mission("fire", J, (0.0, 0.0, 0.0), duration=2.0, out_dir=tmp_path)
    jet = mission.add(attsim.Thruster("jet", (0.0, 0.5, 0.0), (1.0, 0.0, 0.0), max_force_N=0.2))
    mission.add(attsim.FunctionController(lambda t, r: {"jet": bad}, period_s=0.5, actuators=[jet], name="law"))
    with pytest.raises(attsim.ControllerError, match=rf"'law' at t = 0 s: bad command for 'jet'.*{rule}"):
        mission.run()
