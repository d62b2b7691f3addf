"""The attsim command line: subcommands, exit codes, messages."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from attsim import cli

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def in_repo(monkeypatch):
    monkeypatch.chdir(ROOT)


def test_methods_lists_rk4(capsys):
    assert cli.main(["methods"]) == 0
    assert "rk4" in capsys.readouterr().out


def test_missions_lists_symmetric_top(in_repo, capsys):
    assert cli.main(["missions"]) == 0
    out = capsys.readouterr().out
    assert "symmetric_top" in out and "Ganapathi" in out


def test_run_a_mission_prints_criteria_and_succeeds(in_repo, capsys):
    assert cli.main(["run", "symmetric_top"]) == 0
    out = capsys.readouterr().out
    assert out.count("PASS") == 5 and "FAIL" not in out


def test_unknown_mission_lists_the_valid_ones(in_repo, capsys):
    assert cli.main(["run", "no_such_mission"]) == 2
    err = capsys.readouterr().err
    assert "unknown mission 'no_such_mission'" in err and "symmetric_top" in err
    assert "Traceback" not in err


def test_failing_script_exits_1(tmp_path, capsys):
    script = tmp_path / "fails.py"
    script.write_text("import sys\nprint('FAIL  something: 2 (bound 1)')\nsys.exit(1)\n")
    assert cli.main(["run", str(script)]) == 1


def test_console_script_is_installed():
    exe = Path(sys.executable).with_name("attsim")
    result = subprocess.run([str(exe), "methods"], capture_output=True, text=True, cwd=ROOT, env=os.environ)
    assert result.returncode == 0 and "rk4" in result.stdout
