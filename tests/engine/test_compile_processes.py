"""attsim.engine.compile_processes: units compiled in child processes, each ending at its memory limit, while the
caller compiles what only it can build."""

import os
import subprocess
import sys

from attsim.engine import compile_processes, precompile


def test_compiling_processes_hand_on_at_their_memory_limit(tmp_path):
    """Every unit compiled in one process grew it to ~700 MB (numba keeps what each compilation allocated): a child
    stops at PROCESS_LIMIT_MB, after one unit at least, and a fresh one compiles the rest."""
    script = """
import subprocess
from attsim.engine import compile_processes, precompile
started = []
popen = subprocess.Popen
def counted(*args, **kwargs):
    started.append(args[0])
    return popen(*args, **kwargs)
compile_processes.subprocess.Popen = counted
compile_processes.PROCESS_LIMIT_MB = 0  # past at once: each child compiles one unit
needs = [n for n in precompile.all_needs() if n.unit.name in ("write_sensor", "write_magnetorquer")]
done = compile_processes.compile_apart(needs, 1, None)
print(sorted(done), len(started), [c[c.index("--limit-mb") + 1] for c in started])
"""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"), ATTSIM_BACKGROUND_COMPILE="0")
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "['write_magnetorquer', 'write_sensor'] 2 ['0', '0']"


def _script(tmp_path, body: str) -> str:
    """Run ``body`` in a fresh process with an empty cache (what the caller checks and the children fill); its
    stdout."""
    head = """
import subprocess
from attsim.engine import compile_processes, precompile
needs = [n for n in precompile.all_needs() if n.unit.name == "write_sensor"]
"""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"), ATTSIM_BACKGROUND_COMPILE="0")
    out = subprocess.run([sys.executable, "-c", head + body], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_the_callers_own_compile_runs_while_the_children_compile(tmp_path):
    """An ensemble's first step compiles its loop in one child and its chunk in another, and the caller's own
    functions (an environment's) meanwhile: the caller must not wait for its children first."""
    body = """
def meanwhile():
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout.splitlines()
    print(sum(compile_processes.CHILD in line and "--feed" in line for line in ps), "child at work")
    return {"the_callers_own": 0.25}
said = []
done = compile_processes.compile_apart(needs, 1, lambda name, seconds: said.append(name), meanwhile)
print(sorted(done), said)
"""
    assert _script(tmp_path, body).splitlines() == ["1 child at work", "['the_callers_own', 'write_sensor'] "
                                                                         "['write_sensor']"]


def test_a_failed_compile_of_the_callers_ends_its_children_and_is_raised(tmp_path):
    body = """
started = []
popen = subprocess.Popen
def counted(*args, **kwargs):
    started.append(popen(*args, **kwargs))
    return started[-1]
compile_processes.subprocess.Popen = counted
def meanwhile():
    raise ValueError("the law does not compile")
try:
    compile_processes.compile_apart(needs, 1, None, meanwhile)
except ValueError as error:
    print(error, len(started), started[0].returncode)
"""
    assert _script(tmp_path, body) == "the law does not compile 1 -9"  # the child killed, and waited for


def test_with_every_unit_on_disk_no_child_starts_and_the_callers_compile_still_runs(monkeypatch):
    needs = [n for n in precompile.all_needs() if n.unit.name == "write_sensor"]
    monkeypatch.setattr(compile_processes, "unit_is_cached", lambda unit, signature, **options: True)
    monkeypatch.setattr(compile_processes.subprocess, "Popen", None)  # would fail if called
    assert compile_processes.compile_apart(needs, 2, None, lambda: {"mine": 1.0}) == {"mine": 1.0}


def test_a_child_that_dies_mid_unit_is_an_error_naming_the_unit_not_a_hang(tmp_path):
    body = """
give = compile_processes._give
def give_and_kill(children, child, pending, by_name):
    give(children, child, pending, by_name)
    if children[child] is not None:
        child.kill()  # as the kernel's OOM killer would, mid-compile
compile_processes._give = give_and_kill
try:
    compile_processes.compile_apart(needs, 1, None)
except RuntimeError as error:
    print(error)
"""
    assert _script(tmp_path, body) == ("a compiling process failed (exit -9) compiling "
                                       f"{_needs_name()}; run 'attsim compile' for its error")


def _needs_name() -> str:
    return next(n.unit.cache_name() for n in precompile.all_needs() if n.unit.name == "write_sensor")


def test_a_child_takes_the_next_unit_as_soon_as_it_has_done_one(tmp_path):
    """The units were dealt out in fixed shares, and a round waited for its slowest child: one core idled while
    the other compiled its last and longest. Now each child asks for the next: two children, three units, and the
    first child to be done takes the third. Each child ends when its input closes."""
    body = """
import collections
three = [n for n in precompile.all_needs() if n.unit.name in ("write_sensor", "write_magnetorquer", "write_wheel")]
given = collections.defaultdict(list)
give = compile_processes._give
def recorded(children, child, pending, by_name):
    give(children, child, pending, by_name)
    if children[child] is not None:
        given[child.pid].append(children[child])
compile_processes._give = recorded
done = compile_processes.compile_apart(three, 2, None)
print(sorted(done), sorted(len(units) for units in given.values()))
"""
    assert _script(tmp_path, body) == "['write_magnetorquer', 'write_sensor', 'write_wheel'] [1, 2]"
