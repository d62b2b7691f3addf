"""attsim.engine.compile_processes: units compiled in child processes, each ending at its memory limit, while the
caller compiles what only it can build."""

import os
from pathlib import Path
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
print(sorted(done), len(started), ["'--limit-mb', '0'" in c[-1] for c in started])
"""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"), ATTSIM_BACKGROUND_COMPILE="0")
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "['write_magnetorquer', 'write_sensor'] 2 [True, True]"


HEAD = """
import os
import subprocess
from attsim.engine import compile_processes, precompile
needs = [n for n in precompile.all_needs() if n.unit.name == "write_sensor"]
"""


def _script(tmp_path, body: str, stderr: bool = False, head: str = HEAD, cwd=None):
    """Run ``body`` in a fresh process with an empty cache (what the caller checks and the children fill); its
    stdout (and stderr)."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"), ATTSIM_BACKGROUND_COMPILE="0")
    out = subprocess.run([sys.executable, "-c", head + body], env=env, capture_output=True, text=True, timeout=300,
                         cwd=cwd)
    assert out.returncode == 0, out.stderr
    return (out.stdout.strip(), out.stderr) if stderr else out.stdout.strip()


def test_the_callers_own_compile_runs_while_the_children_compile(tmp_path):
    """An ensemble's first step compiles its loop in one child and its chunk in another, and the caller's own
    functions (an environment's) meanwhile: the caller must not wait for its children first. A child runs in a
    session of its own: Ctrl-C at the terminal is the caller's to answer (each child printed a traceback)."""
    body = """
def meanwhile():
    import time
    deadline, at_work = time.monotonic() + 60.0, []
    while not at_work and time.monotonic() < deadline:  # the caller's thread of children starts them
        ps = subprocess.run(["ps", "-ww", "-eo", "ppid,sid,args"], capture_output=True, text=True).stdout.splitlines()
        at_work = [line.split()[1] for line in ps if line.split()[0] == str(os.getpid()) and "--feed" in line]
        time.sleep(0.05)
    print(len(at_work), "child at work", all(sid != str(os.getsid(0)) for sid in at_work))
    return {"the_callers_own": 0.25}
said = []
done = compile_processes.compile_apart(needs, 1, lambda name, seconds: said.append(name), meanwhile)
print(sorted(done), said)
"""
    assert _script(tmp_path, body).splitlines() == ["1 child at work True", "['the_callers_own', 'write_sensor'] "
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
    import time
    deadline = time.monotonic() + 60.0
    while not started and time.monotonic() < deadline:  # the children are started by a thread of the caller
        time.sleep(0.05)
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


def test_a_child_that_dies_mid_unit_is_said_and_its_unit_compiled_here_instead(tmp_path):
    """A child killed mid-compile (the kernel's OOM killer, a user's kill) stopped the caller's first step with a
    RuntimeError, where compiling in the caller would have worked: it is said, and the caller compiles the unit."""
    body = """
import sys
give = compile_processes._Feeder._give
def give_and_kill(self, child):
    give(self, child)
    if self.children[child] is not None:
        child.kill()
compile_processes._Feeder._give = give_and_kill
done = compile_processes.compile_apart(needs, 1, None)
print(sorted(done), compile_processes.unit_is_cached(needs[0].unit, needs[0].signature))
"""
    out, err = _script(tmp_path, body, stderr=True)
    assert out == "['write_sensor'] True"
    assert ("attsim: a compiling process ended (killed by signal 9) before it was done; compiling write_sensor in "
            "this process instead") in err


def test_a_child_compiles_with_the_callers_own_copy_of_attsim(tmp_path):
    """A script that puts a checkout on sys.path (attsim not installed, or another copy installed) had children
    that imported the installed copy, or none: the first step failed, or compiled every unit twice."""
    import shutil

    copy = tmp_path / "checkout"
    shutil.copytree(Path(compile_processes.__file__).resolve().parents[1], copy / "attsim",
                    ignore=shutil.ignore_patterns("__pycache__"))
    body = f"""
import sys
sys.path.insert(0, {str(copy)!r})
import attsim
assert attsim.__file__.startswith({str(copy)!r}), attsim.__file__
from attsim.engine import compile_processes, precompile
needs = [n for n in precompile.all_needs() if n.unit.name == "write_sensor"]
done = compile_processes.compile_apart(needs, 1, None)
print(sorted(done), compile_processes.unit_is_cached(needs[0].unit, needs[0].signature))
"""
    out, err = _script(tmp_path, body, stderr=True, head="", cwd=tmp_path)
    assert out == "['write_sensor'] True" and "in this process instead" not in err, err


def test_children_end_with_their_caller_when_it_is_killed(tmp_path):
    """A caller killed mid-compile left its children compiling without the machine's lock, and the next run
    compiled the same units at the same time."""
    import signal
    import time

    script = tmp_path / "caller.py"
    script.write_text("from attsim.engine import compile_processes, precompile\n"
                      "needs = [n for n in precompile.all_needs() if n.unit.name == 'check_modes']\n"
                      "compile_processes.compile_apart(needs, 1, None)\n")
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"), ATTSIM_BACKGROUND_COMPILE="0")
    caller = subprocess.Popen([sys.executable, str(script)], env=env)

    def children():
        ps = subprocess.run(["ps", "-ww", "-eo", "pid,ppid,args"], capture_output=True, text=True).stdout.splitlines()
        return [line.split()[0] for line in ps if "--feed" in line and line.split()[1] == str(caller.pid)]

    deadline = time.monotonic() + 60.0
    while not children() and time.monotonic() < deadline:
        time.sleep(0.2)
    mine = children()
    assert mine, "no compiling child started"
    caller.send_signal(signal.SIGKILL)
    caller.wait()
    def running(pid: str) -> bool:  # an ended child left unreaped by its new parent is a zombie ("Z"), not running
        try:
            return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
        except OSError:
            return False

    deadline = time.monotonic() + 10.0  # a bound on a hang: a child checks for its parent twice a second
    while any(running(pid) for pid in mine) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(running(pid) for pid in mine)


def test_a_child_takes_the_next_unit_as_soon_as_it_has_done_one(tmp_path):
    """The units were dealt out in fixed shares, and a round waited for its slowest child: one core idled while
    the other compiled its last and longest. Now each child asks for the next: two children, three units, and the
    first child to be done takes the third. Each child ends when its input closes."""
    body = """
import collections
three = [n for n in precompile.all_needs() if n.unit.name in ("write_sensor", "write_magnetorquer", "write_wheel")]
given = collections.defaultdict(list)
give = compile_processes._Feeder._give
def recorded(self, child):
    give(self, child)
    if self.children[child] is not None:
        given[child.pid].append(self.children[child])
compile_processes._Feeder._give = recorded
done = compile_processes.compile_apart(three, 2, None)
print(sorted(done), sorted(len(units) for units in given.values()))
"""
    assert _script(tmp_path, body) == "['write_magnetorquer', 'write_sensor', 'write_wheel'] [1, 2]"


def test_the_cores_are_those_this_process_may_run_on():
    # under taskset -c 0 on 2 cores, cpu_count said 2: two children and the caller shared one core
    expected = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    assert compile_processes.usable_cores() == expected
    if hasattr(os, "sched_getaffinity"):
        script = "from attsim.engine.compile_processes import usable_cores; print(usable_cores())"
        one = subprocess.run(["taskset", "-c", "0", sys.executable, "-c", script], capture_output=True, text=True)
        assert one.returncode != 0 or one.stdout.strip() == "1"  # (taskset may be absent)


def test_a_child_killed_once_hands_its_unit_to_a_fresh_child(tmp_path):
    """Killed once (out of memory, say), a unit is tried again in a fresh child, not compiled serially in the
    caller with no memory limit (helper-36 saw the caller pass 470 MB with 33 units to go)."""
    body = """
give = compile_processes._Feeder._give
killed = []
def give_and_kill_once(self, child):
    give(self, child)
    if self.children[child] is not None and not killed:
        killed.append(child.pid)
        child.kill()
compile_processes._Feeder._give = give_and_kill_once
done = compile_processes.compile_apart(needs, 1, None)
print(sorted(done), len(killed))
"""
    out, err = _script(tmp_path, body, stderr=True)
    assert out == "['write_sensor'] 1"
    assert "a compiling process ended (killed by signal 9) before it was done; a fresh one takes its unit" in err
    assert "in this process instead" not in err


def test_a_file_in_the_working_directory_does_not_shadow_what_a_child_imports(tmp_path):
    """A project with its own inspect.py (or a numba/ folder) in the working directory: the caller, run as
    'python scripts/x.py', imported fine, its children (python -c: the working directory first) failed."""
    project, scripts = tmp_path / "project", tmp_path / "scripts"
    project.mkdir()
    scripts.mkdir()
    (project / "inspect.py").write_text("raise ImportError('the project inspect.py shadows the standard library')\n")
    (project / "numba").mkdir()
    (project / "numba" / "__init__.py").write_text("raise ImportError('a project numba/ shadows numba')\n")
    script = scripts / "caller.py"
    script.write_text(HEAD + "done = compile_processes.compile_apart(needs, 1, None)\nprint(sorted(done))\n")
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"), ATTSIM_BACKGROUND_COMPILE="0")
    out = subprocess.run([sys.executable, str(script)], cwd=project, env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "['write_sensor']" and "in this process instead" not in out.stderr, out.stderr
