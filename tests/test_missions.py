"""Every mission script runs on its own and passes its own criteria."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MISSIONS = sorted(p for p in (ROOT / "missions").glob("*.py") if not p.name.startswith("_"))


@pytest.mark.parametrize("script", MISSIONS, ids=lambda p: p.stem)
def test_mission_script_passes(script, tmp_path):
    result = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = [line for line in result.stdout.splitlines() if line.startswith(("PASS", "FAIL"))]
    assert lines and all(line.startswith("PASS") for line in lines), result.stdout
