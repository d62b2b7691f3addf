"""attsim on a platform without POSIX modules (Windows): importing it never needs them, and they are used only in
code the platform test reserves for POSIX."""

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "attsim"

# modules Windows does not have
POSIX_MODULES = {"fcntl", "resource", "termios", "pwd", "grp", "pty", "tty", "syslog", "posix", "crypt", "spwd", "nis"}
# names that Windows lacks, or whose meaning differs there (os.kill(pid, 0) terminates the process on Windows)
POSIX_NAMES = {
    "os": {"fork", "forkpty", "kill", "killpg", "getpgid", "setsid", "setpgrp", "getuid", "geteuid", "getgid",
           "getloadavg", "sched_getaffinity", "sysconf", "statvfs", "uname", "wait3", "wait4", "WNOHANG", "O_NOFOLLOW"},
    "signal": {"SIGKILL", "SIGHUP", "SIGUSR1", "SIGUSR2", "SIGALRM", "SIGQUIT", "SIGCHLD", "SIGPIPE", "SIGSTOP",
               "SIGCONT", "alarm", "setitimer", "pthread_kill", "pause"},
}


def _platform_branch(test: ast.expr) -> str | None:
    """'windows' or 'posix' for the body of ``if sys.platform == "win32"`` / ``!=`` (or ``os.name == "nt"``)."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.comparators[0], ast.Constant)):
        return None
    left, op, value = ast.unparse(test.left), test.ops[0], test.comparators[0].value
    if (left, value) not in (("sys.platform", "win32"), ("os.name", "nt")):
        return None
    if isinstance(op, ast.Eq):
        return "windows"
    return "posix" if isinstance(op, ast.NotEq) else None


def _posix_uses(tree: ast.AST, posix: bool = False):
    """(line, what) of every POSIX-only import or name outside code reserved for POSIX."""
    if isinstance(tree, ast.If) and (branch := _platform_branch(tree.test)) is not None:
        for node in tree.body:
            yield from _posix_uses(node, posix or branch == "posix")
        for node in tree.orelse:
            yield from _posix_uses(node, posix or branch == "windows")
        return
    if not posix:
        if isinstance(tree, ast.Import):
            yield from ((tree.lineno, f"import {a.name}") for a in tree.names if a.name.split(".")[0] in POSIX_MODULES)
        elif isinstance(tree, ast.ImportFrom) and tree.level == 0 and tree.module.split(".")[0] in POSIX_MODULES:
            yield tree.lineno, f"from {tree.module} import ..."
        elif isinstance(tree, ast.ImportFrom) and tree.module in POSIX_NAMES:
            yield from ((tree.lineno, f"from {tree.module} import {a.name}") for a in tree.names
                        if a.name in POSIX_NAMES[tree.module])
        elif (isinstance(tree, ast.Attribute) and isinstance(tree.value, ast.Name)
              and tree.attr in POSIX_NAMES.get(tree.value.id, ())):
            yield tree.lineno, f"{tree.value.id}.{tree.attr}"
    for node in ast.iter_child_nodes(tree):
        yield from _posix_uses(node, posix)


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: str(p.relative_to(ROOT)))
def test_posix_only_modules_and_names_appear_only_in_posix_branches(path):
    uses = list(_posix_uses(ast.parse(path.read_text(encoding="utf-8"))))
    assert not uses, f"{path.relative_to(ROOT)}: POSIX only outside an `if sys.platform == 'win32'` branch: {uses}"


def test_the_checker_finds_what_it_looks_for():
    found = list(_posix_uses(ast.parse(textwrap.dedent("""
        import os, fcntl
        import signal
        def stop(pid):
            os.kill(pid, signal.SIGKILL)
        if sys.platform == "win32":
            import msvcrt
        else:
            import resource
            def alive(pid):
                os.kill(pid, 0)
    """))))
    assert [what for _, what in found] == ["import fcntl", "os.kill", "signal.SIGKILL"]


HIDE = """
import importlib.abc, sys

class Refuse(importlib.abc.MetaPathFinder):  # as on Windows: no such module
    def find_spec(self, name, path=None, target=None):
        if name in {names!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}} (hidden by the test)", name=name)
        return None

sys.meta_path.insert(0, Refuse())
for name in {names!r}:
    sys.modules.pop(name, None)
sys.path.insert(0, {root!r})
"""


def _run_hidden(code: str, names=("fcntl",)) -> subprocess.CompletedProcess:
    script = HIDE.format(names=set(names), root=str(ROOT)) + textwrap.dedent(code)
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)


def test_attsim_its_telemetry_and_load_import_without_fcntl():
    done = _run_hidden("""
        import attsim
        import attsim.telemetry, attsim.telemetry.lock, attsim.telemetry.run_directory
        import attsim.engine.mission, attsim.reporting, attsim.cli
        assert callable(attsim.load) and attsim.load is attsim.telemetry.load
        assert attsim.Mission and attsim.Telemetry and attsim.report
        try:
            import fcntl
        except ModuleNotFoundError:
            print("imported without fcntl")
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "imported without fcntl"


def test_every_attsim_module_imports_without_posix_only_modules():
    done = _run_hidden("""
        import importlib, importlib.util, pkgutil
        import attsim
        names = [m.name for m in pkgutil.walk_packages(attsim.__path__, "attsim.")]
        if importlib.util.find_spec("stable_baselines3") is None:  # the extra `learn`'s adapter needs it
            names.remove("attsim.rl.sb3")
        for name in names:
            importlib.import_module(name)
        print(len(names))
    """, names=("fcntl", "termios", "pty", "tty", "pwd", "grp"))
    assert done.returncode == 0, done.stderr
    assert int(done.stdout.strip()) > 50
