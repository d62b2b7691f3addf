"""A mission script's ``sys.exit()`` where attsim loads or calls it (module code, build, criteria, envelopes).

A script that forgets ``if __name__ == "__main__":`` around
``sys.exit(attsim.cli.run_script(build, criteria))``, or exits inside
``build()`` or ``criteria()``, used to end attsim with the script's code:
``attsim run`` and ``attsim campaign`` exited 0 having run and judged nothing
(a silent PASS for a CI job), or 3 ("a bug in attsim"), and a campaign's
worker died with it (``KilledWorker`` after four dead workers a run). Each
is the script's error, said with its line, like ``figures()``'s.
"""

import re
import subprocess
import sys
from pathlib import Path

import pytest

import attsim
from attsim.errors import InputError

EXE = Path(sys.executable).with_name("attsim")
RULE = "must not end the process (sys.exit) when attsim loads or calls it"
BUILD = """
def build(out_dir=None):
    return attsim.Mission("quick", [1.0, 2.0, 2.5], (0.01, 0.2, 0.01), duration=2.0, out_dir=out_dir)
"""
CRITERIA = """
def criteria(tel):
    return [("rate [rad/s]", 0.2, True, "< 1")]
"""


def _script(tmp_path, text: str) -> Path:
    path = tmp_path / "exits.py"
    path.write_text("import sys\n\nimport attsim\n" + text)
    return path


def _line_of(script: Path, text: str) -> int:
    return next(k for k, line in enumerate(script.read_text().splitlines(), start=1) if text in line)


def _attsim(*argv, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([str(EXE), *map(str, argv)], cwd=cwd, capture_output=True, text=True, timeout=900)


@pytest.mark.parametrize("where, text, field", [
    ("module", BUILD + CRITERIA + "\nsys.exit(attsim.cli.run_script(build, criteria))  # no __main__ guard\n",
     "mission script"),
    ("module code 0", BUILD + CRITERIA + "\nsys.exit(0)\n", "mission script"),
    ("build 0", BUILD.replace("return attsim", "sys.exit(0)\n    return attsim") + CRITERIA, "build"),
    ("build 3", BUILD.replace("return attsim", "sys.exit(3)\n    return attsim") + CRITERIA, "build"),
])
def test_a_script_that_exits_while_attsim_loads_or_builds_it_is_its_error_exit_2(tmp_path, where, text, field):
    script = _script(tmp_path, text)
    line = _line_of(script, "sys.exit(")
    done = _attsim("run", script, "--out", tmp_path / "out", "--no-report", cwd=tmp_path)
    assert done.returncode == 2, (where, done.returncode, done.stdout, done.stderr)
    err = done.stderr.strip().splitlines()[-1]
    assert f"{script}:{line}: InputError: {field}: {RULE}" in err, err
    assert "a bug in attsim" not in done.stderr


def test_criteria_that_exit_fail_with_the_reason_and_the_run_is_kept(tmp_path):
    script = _script(tmp_path, BUILD + "\ndef criteria(tel):\n    sys.exit(0)\n")
    done = _attsim("run", script, "--out", tmp_path / "out", cwd=tmp_path)
    assert done.returncode == 1, (done.stdout, done.stderr)
    line = _line_of(script, "sys.exit(")
    assert (f"FAIL  criteria(telemetry): not evaluated: it raised {script}:{line}: InputError: criteria(telemetry): "
            f"{RULE}") in done.stdout
    assert (tmp_path / "out" / "report.html").is_file()


def test_a_campaign_whose_criteria_exit_records_errors_and_keeps_its_workers(tmp_path):
    script = _script(tmp_path, BUILD + "\ndef criteria(tel):\n    sys.exit(0)\n")
    done = _attsim("campaign", script, "--runs", "2", "--workers", "1", "--require", "0.1", "--no-report",
                   "--out", tmp_path / "campaign", cwd=tmp_path)
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert "runs: 2  OK 0  FAIL 0  ERROR 2" in done.stdout
    assert f"ERROR run 0: InputError: criteria(telemetry): {RULE}" in done.stdout
    assert "KilledWorker" not in done.stdout + done.stderr


@pytest.mark.parametrize("text", [BUILD + CRITERIA + "\nsys.exit(0)\n",
                                  BUILD.replace("return attsim", "sys.exit(0)\n    return attsim") + CRITERIA])
def test_a_campaign_of_a_script_that_exits_is_refused_not_passed(tmp_path, text):
    script = _script(tmp_path, text)
    done = _attsim("campaign", script, "--runs", "2", "--workers", "1", "--require", "0.1", "--no-report",
                   "--out", tmp_path / "campaign", cwd=tmp_path)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert f"{script}:{_line_of(script, 'sys.exit(')}: InputError: " in done.stderr and RULE in done.stderr
    with pytest.raises(InputError, match=re.escape(RULE)):  # the Python API: an error, not the caller's process ended
        attsim.Campaign(str(script), runs=2, out_dir=tmp_path / "api")
