"""``attsim run`` into a directory another run is writing: refused (exit 2), and the line does not call the other
run's live telemetry this run's partial telemetry (issue 20: the command line says what happened)."""

import subprocess
import sys
from pathlib import Path

from tests.telemetry.test_telemetry import LONG_MISSION, _start, _wait_for_rows

EXE = Path(sys.executable).with_name("attsim")

SCRIPT = """\
import os
from pathlib import Path

import numpy as np
import attsim


def build(out_dir=None):
    os.utime(Path(out_dir) / "meta.json")  # as when the live run wrote it (its start, its set-up) just before this one
    return attsim.Mission("second", np.eye(3), (0.0, 0.0, 0.0), duration=1.0, out_dir=out_dir)


def criteria(telemetry):
    return []
"""


def test_a_run_refused_for_a_busy_directory_does_not_claim_its_telemetry(tmp_path):
    live = tmp_path / "live"
    script = tmp_path / "second.py"
    script.write_text(SCRIPT)
    paced = LONG_MISSION.replace("m.run(compiled=False)", "m.run(realtime_factor=10.0)")  # 1 h simulated in 6 min
    proc = _start(paced, str(live), "3600", "0.1")
    try:
        assert proc.stdout.readline().strip() == "starting"
        _wait_for_rows(live, 8 * 8, 50)
        result = subprocess.run([str(EXE), "run", str(script), "--out", str(live), "--no-report"], cwd=tmp_path,
                                capture_output=True, text=True, timeout=600)
        assert proc.poll() is None, "the live run ended before the second one started"
    finally:
        proc.kill()
        proc.wait()
    assert result.returncode == 2, result.stderr
    assert f"{live} is in use by another run" in result.stderr
    assert "partial telemetry" not in result.stderr  # it wrote none: the rows there are the live run's
