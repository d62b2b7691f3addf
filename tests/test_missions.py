"""Every mission script passes its own criteria under `attsim run` (and runs on its own)."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MISSIONS = sorted(p.stem for p in (ROOT / "missions").glob("*.py") if not p.name.startswith("_"))
ATTSIM = Path(sys.executable).with_name("attsim")


@pytest.mark.parametrize("name", MISSIONS)
def test_mission_passes_under_attsim_run(name, tmp_path):
    result = subprocess.run([str(ATTSIM), "run", name, "--out", str(tmp_path / name)], cwd=ROOT, capture_output=True,
                            text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = [line for line in result.stdout.splitlines() if line.startswith(("PASS", "FAIL"))]
    assert lines and all(line.startswith("PASS") for line in lines), result.stdout
    assert "report: " in result.stdout
    assert list((tmp_path / name).rglob("report.html")), "no report written"


def test_a_script_runs_on_its_own(tmp_path):
    result = subprocess.run([sys.executable, str(ROOT / "missions" / "constant_torque.py"),
                             "--out", str(tmp_path / "c")],
                            cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0 and "PASS" in result.stdout, result.stdout + result.stderr
    assert (tmp_path / "c" / "report.html").is_file()
