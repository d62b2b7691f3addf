"""The attsim command line: each subcommand's output and exit code."""

import json
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


def test_methods_lists_every_integrator(capsys):
    assert cli.main(["methods"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in ("rk4", "exact", "split4", "rkmk4", "euler321"))


def test_missions_lists_the_scripts_with_their_first_line(in_repo, capsys):
    assert cli.main(["missions"]) == 0
    out = capsys.readouterr().out
    assert "symmetric_top" in out and "Ganapathi" in out and "advitiy_detumble" in out and "_advitiy" not in out


def test_run_prints_criteria_writes_telemetry_and_report(in_repo, tmp_path, capsys):
    assert cli.main(["run", "symmetric_top", "--out", str(tmp_path / "top")]) == 0
    out = capsys.readouterr().out
    assert out.count("PASS") == 5 and "FAIL" not in out and f"report: {tmp_path / 'top' / 'report.html'}" in out
    assert (tmp_path / "top" / "telemetry.parquet").is_file() and (tmp_path / "top" / "report.html").is_file()


def test_run_overrides_and_failing_criteria_exit_1(in_repo, tmp_path, capsys):
    # a shorter run of the wheel slew cannot settle: its criterion fails, exit code 1
    assert cli.main(["run", "wheel_slew", "--out", str(tmp_path), "--duration", "60", "--seed", "3", "--no-report"]) == 1
    out = capsys.readouterr().out
    assert "FAIL  pointing error after 240 s" in out
    meta = json.loads((tmp_path / "meta.json").read_text())
    assert meta["duration_s"] == 60.0 and meta["seed"] == 3 and not (tmp_path / "report.html").exists()


@pytest.mark.parametrize(
    "argv, pattern",
    [
        (["run", "no_such_mission"], "mission: unknown mission 'no_such_mission' (valid: "),
        (["run", "symmetric_top", "--method", "exact"], "method: must be one of"),
        (["run", "symmetric_top", "--duration", "-5"], "duration: must be finite and > 0"),
        (["report", "/nonexistent/run"], "not an attsim run directory"),
    ],
)
def test_bad_input_exits_2_with_one_line(in_repo, capsys, argv, pattern):
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert pattern in err and "Traceback" not in err and err.count("\n") == 1


def test_bad_usage_exits_2(capsys):
    assert cli.main(["frobnicate"]) == 2
    assert cli.main([]) == 2


def test_debug_shows_the_traceback(in_repo):
    with pytest.raises(Exception, match="unknown mission"):
        cli.main(["--debug", "run", "no_such_mission"])


def test_report_of_corrupt_partial_and_several_runs(in_repo, tmp_path, capsys):
    corrupt = tmp_path / "corrupt"
    corrupt.mkdir()
    (corrupt / "meta.json").write_text("{broken")
    assert cli.main(["report", str(corrupt)]) == 2
    assert "unreadable metadata" in capsys.readouterr().err
    assert cli.main(["run", "symmetric_top", "--out", str(tmp_path / "a"), "--no-report", "--duration", "5"]) in (0, 1)
    meta_path = tmp_path / "a" / "meta.json"
    meta = json.loads(meta_path.read_text())
    meta["partial"], meta["stopped"] = True, "killed"
    meta_path.write_text(json.dumps(meta))
    assert cli.main(["report", str(tmp_path / "a")]) == 0
    out = capsys.readouterr().out
    assert "partial run" in out and "Partial telemetry" in (tmp_path / "a" / "report.html").read_text()
    assert cli.main(["run", "symmetric_top", "--out", str(tmp_path / "b"), "--no-report", "--duration", "5"]) in (0, 1)
    assert cli.main(["report", str(tmp_path / "a"), str(tmp_path / "b"), "--out", str(tmp_path / "cmp.html")]) == 0
    assert "id='comparison'" in (tmp_path / "cmp.html").read_text()


def test_validate_passes(capsys):
    assert cli.main(["validate"]) == 0
    out = capsys.readouterr().out
    assert "FAIL" not in out and out.count("PASS") >= 10


def test_console_script_is_installed():
    exe = Path(sys.executable).with_name("attsim")
    result = subprocess.run([str(exe), "methods"], capture_output=True, text=True, cwd=ROOT, env=os.environ)
    assert result.returncode == 0 and "rk4" in result.stdout
