"""What a process says it will compile, and the estimate it gives before this machine has compiled a unit once."""

from attsim.engine import compile_record


def test_a_first_compile_is_estimated_by_the_kind_of_unit_and_this_machines_times_replace_the_defaults(monkeypatch):
    # an ensemble's chunk defaulted to 'any other unit' (4 s): a cold ensemble said "about 8 s" and took 23.6 s
    monkeypatch.setattr(compile_record, "_times", lambda: {})
    cold_ensemble = ["ensemble_step", "step_chunk_rk4_plant_torque_no_environment"]
    assert compile_record.compile_estimate(cold_ensemble) == 4.0 + 7.0
    assert compile_record.compile_estimate(["advance_rk4_plant_torque", "sample_gyro"]) == 12.0 + 4.0
    assert "about 11 s" in compile_record.notice(cold_ensemble)
    monkeypatch.setattr(compile_record, "_times", lambda: {"ensemble_step": 5.1})
    assert compile_record.compile_estimate(cold_ensemble) == 5.1 + 7.0


def test_units_compiled_by_processes_at_once_are_estimated_by_the_longest_process(monkeypatch):
    # an ensemble's loop and chunk compile each in a process of its own: about the chunk's time, not the sum
    monkeypatch.setattr(compile_record, "_times", lambda: {"a": 10.0, "b": 6.0, "c": 5.0, "d": 1.0})
    assert compile_record.compile_estimate(["a", "b"], jobs=2) == 10.0
    assert compile_record.compile_estimate(["a", "b", "c", "d"], jobs=2) == 11.0  # a + d beside b + c
    assert compile_record.deal(["d", "c", "b", "a"], 2) == [["a", "d"], ["b", "c"]]
    assert compile_record.compile_estimate(["a", "b"], jobs=1) == 16.0
    assert "about 10 s" in compile_record.notice(["a", "b"], jobs=2)


def test_a_wait_for_another_compiling_process_is_said(monkeypatch, tmp_path, capsys):
    # behind the background compile, an ensemble's "about 18 s" was followed by 114 s of silence
    import threading
    import time

    from attsim.telemetry.lock import RunLock

    monkeypatch.setattr(compile_record, "directory", lambda: tmp_path)
    other = RunLock(tmp_path)
    assert other.acquire()
    entered = threading.Event()

    def compile_here():
        with compile_record.compiling():
            entered.set()

    waiting = threading.Thread(target=compile_here)
    waiting.start()
    time.sleep(0.3)
    assert not entered.is_set()
    other.release()
    waiting.join(30.0)
    assert entered.is_set()
    assert "another process is compiling for this machine" in capsys.readouterr().err
    with compile_record.compiling():  # free: nothing said
        pass
    assert capsys.readouterr().err == ""


def test_two_threads_keep_their_times_without_tripping_on_each_other(monkeypatch, tmp_path):
    # an interrupted ensemble compile's thread and the retry's both wrote compile-times.<pid>: FileNotFoundError
    import threading

    monkeypatch.setattr(compile_record, "directory", lambda: tmp_path)
    errors = []

    def keep(i):
        try:
            for k in range(200):
                compile_record.remember({f"unit{k}": float(i)})
        except Exception as exc:  # noqa: BLE001 - collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=keep, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == [] and set(compile_record._times()) == {f"unit{k}" for k in range(200)}


def test_a_cache_directory_that_cannot_be_written_is_refused_by_name(monkeypatch, tmp_path):
    # NUMBA_CACHE_DIR naming a file, a read-only mount or a full disk gave a raw NotADirectoryError or OSError
    import pytest

    from attsim.errors import InputError

    a_file = tmp_path / "not-a-directory"
    a_file.write_text("")
    monkeypatch.setattr(compile_record, "cache_root", lambda: a_file)
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(a_file))
    with pytest.raises(InputError) as refused:
        compile_record.directory()
    assert refused.value.field == "NUMBA_CACHE_DIR" and "can write compiled code to" in refused.value.rule
    monkeypatch.delenv("NUMBA_CACHE_DIR")
    with pytest.raises(InputError) as refused:
        compile_record.directory()
    assert refused.value.field == "NUMBA_CACHE_DIR" and "must be set to a writable directory" in refused.value.rule


def test_a_cache_folder_where_the_compile_lock_cannot_be_made_is_refused_by_name(monkeypatch):
    # a read-only NUMBA_CACHE_DIR whose attsim-compile folder exists: "attsim compile --status" and every run that
    # needed a unit failed with the system's OSError at attsim's own line (helper-44)
    import pytest

    from attsim.errors import InputError
    from attsim.telemetry.lock import RunLock

    monkeypatch.setenv("NUMBA_CACHE_DIR", "/sys")
    with pytest.raises(InputError) as refused:
        compile_record.take_lock(RunLock("/sys/kernel"), blocking=False)  # root ignores permission bits, not /sys
    assert refused.value.field == "NUMBA_CACHE_DIR" and "can write compiled code to" in refused.value.rule


def test_times_that_cannot_be_written_are_not_kept_and_nothing_is_raised(monkeypatch, tmp_path):
    # a full or read-only disk: each compiling process died on its times file, and was started again to die again
    monkeypatch.setattr(compile_record, "directory", lambda: tmp_path / "gone")  # the write and the clean-up fail
    compile_record.remember({"unit": 1.0})
    assert not (tmp_path / "gone").exists()
