"""attsim.engine.precompile: what it says while compiling a mission's units, and the processes it compiles in."""

import json
import os
import subprocess
import sys

import pytest

from attsim.engine import precompile


def test_units_found_compiled_meanwhile_are_accounted_for(monkeypatch, capsys):
    """The issue-25 outsider read 'compiling 12 units' then '11 units compiled', as if one had been lost."""
    needs = [f"unit{k}" for k in range(3)]
    monkeypatch.setattr(precompile, "missing", lambda wanted: list(wanted))
    # the last unit is on disk by its turn (the background compile got there first)
    monkeypatch.setattr(precompile, "compile_all", lambda wanted, say, jobs: {"unit0": 0.5, "unit1": 0.5})
    assert precompile.compile_needs(needs) == ["unit0", "unit1"]
    err = capsys.readouterr().err
    assert "compiling 3 units" in err and "the other 1 were on disk by their turn" in err
    monkeypatch.setattr(precompile, "compile_all", lambda wanted, say, jobs: {n: 0.5 for n in wanted})
    precompile.compile_needs(needs)
    assert "on disk by their turn" not in capsys.readouterr().err


@pytest.mark.skipif(not hasattr(os, "nice"), reason="scheduling priority is POSIX's")
def test_the_background_compile_runs_below_the_users_priority():
    """A run's background compile must not compete with the user's foreground work (a training on 2 cores)."""
    assert set(precompile.BACKGROUND_ARGS) == {"--background"}
    result = subprocess.run([sys.executable, "-m", "attsim.engine.precompile", *precompile.BACKGROUND_ARGS,
                             "--feed"], capture_output=True, text=True, check=True, stdin=subprocess.DEVNULL)
    expected = min(os.nice(0) + precompile.BACKGROUND_NICENESS, 19)
    assert f"at niceness {expected}" in result.stdout


MISSION_WITH_A_LAW = """
import json
import numba
import numpy as np
import attsim
from attsim._core.units import compile_records
from attsim.engine.compile_processes import peak_memory_mb


@numba.njit
def law(t_s, readings, parameters, memory, commands):
    for k in range(3):
        commands[k] = 1e-6


m = attsim.Mission("compiled_apart", np.diag([0.04, 0.045, 0.05]), (0.0, 0.0, 0.0), duration=1.0)
m.add(attsim.NumbaController(law, 0.5, body_torque=m.add(attsim.BodyTorque()), name="law"))
done = m.compile(jobs=1)
print(json.dumps({"done": done, "here": [r.name for r in compile_records() if r.compiled]}))
"""


def test_a_missions_units_compile_in_processes_of_their_own_and_its_users_law_in_the_callers(tmp_path):
    """A campaign's first compile (Mission.compile) built every unit in the caller's process: 63 s on 2 cores and a
    719 MB process. The units every mission may use now go to compiling processes (in parallel, each ending at its
    memory limit); a user's law, which only the caller can build, is compiled there."""
    from tests.engine.test_backends import PACKAGE_DIR, _cache_without, _fresh_process

    script = tmp_path / "law.py"
    script.write_text(MISSION_WITH_A_LAW)
    cache = tmp_path / "cache"
    _cache_without(cache, PACKAGE_DIR / "engine" / "plant.py")  # write_head, which every mission needs
    done = _fresh_process(script, cache=cache)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert "write_head" in result["done"] and "write_head" not in result["here"], result
    assert [name for name in result["here"] if "law" in name] and len(result["here"]) < len(result["done"]), result
