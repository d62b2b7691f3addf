"""tools/bench_ensemble.py's bsk_rl comparison where bsk_rl is not installed (the suite's venv): the peer says so
and the benchmark prints one line saying the comparison was skipped, without running anything. The measurement
itself needs bsk_rl and runs only in the benchmark (its module docstring says how)."""

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tools.peers import bsk_rl_env  # noqa: E402


@pytest.mark.skipif(bsk_rl_env.available(), reason="bsk_rl is installed here: the benchmark measures it")
def test_bsk_rl_comparison_is_skipped_without_bsk_rl():
    from tools import bench_ensemble

    lines = bench_ensemble.bsk_rl_lines(attsim_simulated=2e5, attsim_simulated_per_cpu=1e5, repeats=1)
    assert len(lines) == 1
    assert lines[0].startswith("bsk_rl: not importable here") and lines[0].endswith("comparison skipped")
