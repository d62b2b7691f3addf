"""``Mission.run(in_memory=True)``: the same telemetry, events and metadata as a run directory gives, no file."""

import numpy as np
import pandas as pd
import pytest

import attsim

J = np.diag([0.8, 0.9, 0.6])
# what differs between two runs of one mission by design: timing, the writer's process, the directory's own bookkeeping
# compile_s: the first of the two runs compiles what this process had not (a kernel of the Python path, on a cold cache)
RUN_SPECIFIC = {"wall_s", "realtime_factor_achieved", "writer_pid", "run_id", "compile_s"}


def playback(out):
    """Wheel and magnetorquer commands that saturate, a torque schedule: every kind of event the loop logs."""
    m = attsim.Mission("playback", J, (0.0, 0.01, 0.0), duration=40.0, max_step=0.1, telemetry_dt=0.25, seed=4,
                       out_dir=out, field=(2e-5, -1e-5, 3e-5))
    m.add(attsim.ReactionWheel("rw", (0.6, 0.0, 0.8), 5e-4, max_torque_Nm=0.05, max_speed_rad_s=100.0))
    m.add(attsim.Magnetorquer(dipole_max_Am2=0.2, name="mtq"))
    m.add(attsim.CommandSchedule("rw", [(0.0, 0.02), (5.2, 0.08), (30.0, -0.01)]))  # speed limit, then back off
    m.add(attsim.CommandSchedule("mtq", [(1.0, (0.1, 0.0, -0.1)), (2.5, (0.5, 0.0, 0.0)), (4.0, (0.0, 0.0, 0.0))]))
    m.add(attsim.TorqueSchedule([(10.0, 20.0, (1e-5, 0.0, 0.0))]))
    m.add(attsim.Gyro(rate_hz=2.0, arw_rad_sqrt_s=1e-4))
    return m


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "python"])
def test_in_memory_run_equals_the_run_directory(tmp_path, compiled):
    on_disk = playback(tmp_path / "disk").run(compiled=compiled)
    memory_dir = tmp_path / "memory"
    in_memory = playback(memory_dir).run(compiled=compiled, in_memory=True)
    assert not memory_dir.exists() and in_memory.path is None
    pd.testing.assert_frame_equal(in_memory.df, on_disk.df, check_exact=True)
    assert len(on_disk.events) > 5 and set(on_disk.events["kind"]) >= {"saturation", "command"}
    pd.testing.assert_frame_equal(in_memory.events, on_disk.events, check_exact=True)
    disk_meta = {k: v for k, v in on_disk.meta.items() if k not in RUN_SPECIFIC}
    assert {k: v for k, v in in_memory.meta.items() if k not in RUN_SPECIFIC} == disk_meta
    assert not in_memory.partial and not in_memory.running and in_memory.meta["rows"] == len(on_disk.df)


def test_in_memory_run_without_events_has_the_empty_event_frame(tmp_path):
    make = lambda out: attsim.Mission("free", J, (0.1, 0.0, 0.0), duration=2.0, out_dir=out)  # noqa: E731
    on_disk, in_memory = make(tmp_path / "disk").run(), make(tmp_path / "memory").run(in_memory=True)
    pd.testing.assert_frame_equal(in_memory.events, on_disk.events)
    pd.testing.assert_frame_equal(in_memory.df, on_disk.df, check_exact=True)


def test_an_error_in_memory_is_raised_as_on_disk_and_writes_nothing(tmp_path):
    def faulty(t, readings):
        if t >= 3.0:
            raise RuntimeError("sensor fusion diverged")
        return {}

    mission = attsim.Mission("faulty", J, (0.1, 0, 0), duration=100.0, out_dir=tmp_path / "run")
    mission.add(attsim.FunctionController(faulty, period_s=1.0, name="fusion"))
    with pytest.raises(attsim.ControllerError, match=r"controller 'fusion' raised at t = 3 s"):
        mission.run(in_memory=True)
    assert not (tmp_path / "run").exists()


def test_in_memory_must_be_a_bool():
    with pytest.raises(attsim.InputError, match="in_memory"):
        attsim.Mission("m", J, (0, 0, 0), out_dir="unused").run(in_memory="yes")


def test_the_recorder_grows_past_its_first_guess_of_rows():
    from attsim.telemetry.memory import MemoryRecorder

    recorder = MemoryRecorder(meta={"name": "grow"}, rows=2)
    recorder.start(["a", "b"])
    block = np.arange(15.0).reshape(5, 3)
    recorder.append_rows(block)
    block[:] = -1.0  # the caller reuses its buffer: the recorder kept a copy
    recorder.append(5.0, [16.0, 17.0])
    recorder.event(5.0, "command", value=np.array([1.0, 2.0]))
    recorder.close(wall_s=0.0)
    tel = recorder.telemetry()
    expected = pd.DataFrame({"a": [1.0, 4.0, 7.0, 10.0, 13.0, 16.0], "b": [2.0, 5.0, 8.0, 11.0, 14.0, 17.0]},
                            index=pd.Index([0.0, 3.0, 6.0, 9.0, 12.0, 5.0], name="t"))
    pd.testing.assert_frame_equal(tel.df, expected)
    assert tel.events.to_dict("records") == [{"t": 5.0, "kind": "command", "value": [1.0, 2.0]}]
    assert tel.meta["rows"] == 6 and tel.meta["columns"] == ["t", "a", "b"] and not tel.partial


def test_an_in_memory_run_too_large_for_memory_is_refused_by_name(tmp_path):
    """1e8 rows of 8 values would need ~6 GiB: refused before anything is allocated (it was a raw MemoryError)."""
    m = attsim.Mission("huge", np.diag([1.0, 2.0, 3.0]), (0.0, 0.0, 0.01), duration=1e6, max_step=0.1,
                       telemetry_dt=1e-2, out_dir=tmp_path / "huge")
    with pytest.raises(attsim.errors.InputError, match="in_memory.*GiB.*in_memory=False"):
        m.run(in_memory=True)
