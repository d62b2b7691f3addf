"""What a process says it will compile, and the estimate it gives before this machine has compiled a unit once."""

from attsim.engine import compile_record


def test_a_first_compile_is_estimated_by_the_kind_of_unit_and_this_machines_times_replace_the_defaults(monkeypatch):
    # an ensemble's chunk defaulted to 'any other unit' (4 s): a cold ensemble said "about 8 s" and took 23.6 s
    monkeypatch.setattr(compile_record, "_times", lambda: {})
    cold_ensemble = ["ensemble_step", "step_chunk_rk4_plant_torque_no_environment"]
    assert compile_record.compile_estimate(cold_ensemble) == 4.0 + 18.0
    assert compile_record.compile_estimate(["advance_rk4_plant_torque", "sample_gyro"]) == 12.0 + 4.0
    assert "about 22 s" in compile_record.notice(cold_ensemble)
    monkeypatch.setattr(compile_record, "_times", lambda: {"ensemble_step": 5.1})
    assert compile_record.compile_estimate(cold_ensemble) == 5.1 + 18.0


def test_units_compiled_by_processes_at_once_are_estimated_by_the_longest_process(monkeypatch):
    # an ensemble's loop and chunk compile each in a process of its own: about the chunk's time, not the sum
    monkeypatch.setattr(compile_record, "_times", lambda: {"a": 10.0, "b": 6.0, "c": 5.0, "d": 1.0})
    assert compile_record.compile_estimate(["a", "b"], jobs=2) == 10.0
    assert compile_record.compile_estimate(["a", "b", "c", "d"], jobs=2) == 11.0  # a + d beside b + c
    assert compile_record.deal(["d", "c", "b", "a"], 2) == [["a", "d"], ["b", "c"]]
    assert compile_record.compile_estimate(["a", "b"], jobs=1) == 16.0
    assert "about 10 s" in compile_record.notice(["a", "b"], jobs=2)
