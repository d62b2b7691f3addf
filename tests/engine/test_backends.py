"""The compiled loop's backends and compiling: which backend a run takes, what it says, what it records, and that
two processes never compile the same unit. Each cold case is a real process with a numba cache of its own."""

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from numba.core import config as numba_config
from numba.core.caching import _CacheLocator

import attsim
from attsim._core.jit import PACKAGE_DIR
from attsim.engine.choice import choose_backend
from attsim.errors import InputError

J = np.diag([0.02, 0.025, 0.03])

MISSION = textwrap.dedent('''
    import sys
    import numpy as np
    import attsim

    def build(out_dir):
        m = attsim.Mission("cold", np.diag([0.02, 0.025, 0.03]), (0.02, -0.01, 0.03), duration=30.0, max_step=0.1,
                           telemetry_dt=1.0, seed=4, out_dir=out_dir)
        wheels = [m.add(attsim.ReactionWheel(f"rw_{a}", d, 2e-5, 1e-3, 600.0)) for a, d in zip("xyz", np.eye(3))]
        gyro = m.add(attsim.Gyro(rate_hz=5.0, arw_rad_sqrt_s=1e-5))
        tracker = m.add(attsim.StarTracker(rate_hz=5.0, noise_arcsec=5.0))
        m.add(attsim.QuaternionPD((1.0, 0.0, 0.0, 0.0), kp=2e-3, kd=1e-2, period_s=0.2, wheels=wheels,
                                  attitude_source=tracker, rate_source=gyro))
        return m

    if __name__ == "__main__":
        telemetry = build(sys.argv[1]).run(backend=sys.argv[2] if len(sys.argv) > 2 else None)
        print(telemetry.meta["backend"], telemetry.meta["compile_s"])
''')


def _fresh_process(script, *args, cache, backend=None):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), ATTSIM_BACKGROUND_COMPILE="0")
    env.pop("ATTSIM_BACKEND", None)
    if backend is not None:
        env["ATTSIM_BACKEND"] = backend
    return subprocess.run([sys.executable, str(script), *map(str, args)], env=env, capture_output=True, text=True,
                          timeout=900)


def test_a_backend_that_does_not_exist_is_refused_by_name(monkeypatch):
    with pytest.raises(InputError, match="backend"):
        choose_backend("fast", None, "compiled")
    monkeypatch.setenv("ATTSIM_BACKEND", "numba")
    with pytest.raises(InputError, match="ATTSIM_BACKEND"):
        choose_backend(None, None, "compiled")


def test_a_cold_machine_runs_interpreted_says_so_and_gives_the_compiled_telemetry(tmp_path):
    script = tmp_path / "cold.py"
    script.write_text(MISSION)
    done = _fresh_process(script, tmp_path / "cold", cache=tmp_path / "empty-cache")
    assert done.returncode == 0, done.stderr
    assert "not on this machine yet: it runs interpreted" in done.stderr
    assert done.stdout.split()[0] == "interpreted" and float(done.stdout.split()[1]) == 0.0
    assert not list((tmp_path / "empty-cache").rglob("*.nbc"))  # nothing compiled: no compiler ran at all
    sys.path.insert(0, str(tmp_path))
    try:
        import cold
    finally:
        sys.path.remove(str(tmp_path))
    here = cold.build(tmp_path / "here").run(backend="compiled")
    there = attsim.load(tmp_path / "cold")
    assert there.meta["backend"] == "interpreted" and here.meta["backend"] == "compiled"
    pd.testing.assert_frame_equal(here.df, there.df, check_exact=True)
    pd.testing.assert_frame_equal(here.events, there.events, check_exact=True)


SCHEDULE_ONLY = textwrap.dedent('''
    import sys
    import numpy as np
    import attsim

    # the fewest units a compiled mission has: a torque schedule, the plant, the rows
    mission = attsim.Mission("timed", np.diag([0.02, 0.025, 0.03]), (0.02, -0.01, 0.03), duration=600.0,
                             max_step=0.1, telemetry_dt=1.0, out_dir=sys.argv[1])
    mission.add(attsim.TorqueSchedule([(0.0, 300.0, (1e-5, 0.0, 0.0)), (300.0, 600.0, (0.0, -1e-5, 0.0))]))
    telemetry = mission.run(backend=sys.argv[2])
    print(telemetry.meta["backend"], telemetry.meta["compile_s"])
''')


def _cache_without(cache, module):
    """A numba cache directory holding a copy of what this machine has compiled (``attsim compile``, earlier tests)
    but the functions of the attsim module ``module`` (a source file): a fresh process on it compiles those (or
    every unit, on a machine where none was compiled yet) and loads the rest. Compiling one module's unit shows what
    compiling in a run does, without paying for every unit of a mission."""
    if numba_config.CACHE_DIR:
        shutil.copytree(numba_config.CACHE_DIR, cache, ignore=shutil.ignore_patterns("attsim-compile"))
    else:  # beside the sources: the same files in NUMBA_CACHE_DIR's layout (a folder per source folder)
        for folder in PACKAGE_DIR.rglob("__pycache__"):
            target = Path(cache, _CacheLocator.get_suitable_cache_subpath(str(folder.parent / "any.py")))
            target.mkdir(parents=True, exist_ok=True)
            for file in folder.iterdir():
                if file.suffix in (".nbi", ".nbc"):
                    shutil.copy2(file, target / file.name)
    folder = Path(cache, _CacheLocator.get_suitable_cache_subpath(str(module)))
    for file in folder.glob(f"{Path(module).stem}.*"):  # numba names a function's files <module>.<function>-...
        file.unlink()


def test_compile_time_is_recorded_apart_and_a_warm_machine_then_runs_compiled_without_a_word(tmp_path):
    script = tmp_path / "timed.py"
    script.write_text(SCHEDULE_ONLY)
    cache = tmp_path / "cache"
    _cache_without(cache, PACKAGE_DIR / "engine" / "loop.py")  # the loop unit and the kernels it is made of
    done = _fresh_process(script, tmp_path / "timed", "compiled", cache=cache)
    assert done.returncode == 0, done.stderr
    assert "compiling" in done.stderr and "units for this machine, once" in done.stderr  # never a silent wait
    assert "run_loop" in done.stderr.split("units for this machine, once")[1].splitlines()[0]
    meta = json.loads((tmp_path / "timed" / "meta.json").read_text())
    assert meta["backend"] == "compiled" and meta["compile_s"] > 1.0
    # the run's own wall time is what a warm run of 6000 plant steps costs, far below the compile's
    assert meta["wall_s"] < meta["compile_s"]
    assert meta["realtime_factor_achieved"] == pytest.approx(meta["duration_s"] / meta["wall_s"], rel=1e-6)
    # a fresh process on the machine that now has every unit on disk: compiled, loaded, not a word
    warm = _fresh_process(script, tmp_path / "warm", "auto", cache=cache)
    assert warm.returncode == 0, warm.stderr
    backend, compile_s = warm.stdout.split()
    assert backend == "compiled" and float(compile_s) == 0.0, warm.stdout
    assert "attsim:" not in warm.stderr, warm.stderr


COMPILE_ONE = textwrap.dedent('''
    import json
    from attsim.engine.backend import Need
    from attsim.engine.plant import WRITE_HEAD
    from attsim.engine.precompile import compile_all
    from attsim.engine.world import example_world, world_signatures

    need = Need(WRITE_HEAD, world_signatures(example_world()).write, {})
    print(json.dumps(compile_all([need])))
''')


def test_two_processes_never_compile_the_same_unit(tmp_path):
    """Both start at once on a cache without the unit: one compiles under the machine's lock, the other waits and
    loads it."""
    script = tmp_path / "compile_one.py"
    script.write_text(COMPILE_ONE)
    _cache_without(tmp_path / "shared-cache", PACKAGE_DIR / "engine" / "plant.py")  # write_head's module
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "shared-cache"))
    processes = [subprocess.Popen([sys.executable, str(script)], env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outputs = [p.communicate(timeout=600) for p in processes]
    assert [p.returncode for p in processes] == [0, 0], [err for _, err in outputs]
    compiled = [json.loads(out.strip().splitlines()[-1]) for out, _ in outputs]
    assert sorted(len(c) for c in compiled) == [0, 1], compiled
    assert "write_head" in (compiled[0] or compiled[1])


def test_a_process_running_many_missions_cold_says_the_whole_notice_once(tmp_path):
    """tools/train_detumble.py flew twenty missions on a machine still compiling: the same two-line notice twenty
    times. The first run of a process says it whole; a later one with the same units missing, one short line."""
    script = tmp_path / "twice.py"
    script.write_text(MISSION.replace("telemetry = build(sys.argv[1]).run(", "build(sys.argv[1] + '-1').run()\n"
                                      "    telemetry = build(sys.argv[1]).run("))
    done = _fresh_process(script, tmp_path / "cold", cache=tmp_path / "empty-cache")
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if "interpreted" in line]
    assert len(lines) == 2 and "not on this machine yet" in lines[0], done.stderr
    assert lines[1].startswith("attsim: runs interpreted again (about ") and "units are not compiled yet" in lines[1]
