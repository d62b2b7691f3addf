"""MEKF missions give the same telemetry to the bit on the compiled and the interpreted backend.

The filter's kernels sum in the order they are written, compiled or run as
plain Python (``attsim.estimation.kernels``); with numpy's matrix routines
the two backends rounded differently (BLAS and LAPACK in Python, numba's own
compiled) and the telemetry of these missions differed at 1e-11.
"""

import sys
from pathlib import Path

import numpy as np
import pytest

import attsim
from attsim._core import interpret
from attsim.errors import EstimatorDivergenceError

ROOT = Path(__file__).resolve().parents[2]


def _mission(name):
    sys.path.insert(0, str(ROOT / "missions"))
    try:
        return __import__(name)
    finally:
        sys.path.pop(0)


@pytest.mark.parametrize("name, duration_s", [("cubesat_target_tracking", 200.0), ("advitiy_adcs", 600.0)])
def test_a_mekf_mission_gives_the_same_bits_compiled_and_interpreted(monkeypatch, name, duration_s):
    runs = {}
    for backend in ("compiled", "interpreted"):
        monkeypatch.setenv("ATTSIM_BACKEND", backend)
        mission = _mission(name).build()
        mission.duration_s = duration_s
        made = len(interpret.FUNCTIONS)
        runs[backend] = mission.run(compiled=True, in_memory=True)
        assert (len(interpret.FUNCTIONS) > made) == (backend == "interpreted")  # the backend asked for ran
    compiled, interpreted = runs["compiled"].df, runs["interpreted"].df
    estimates = [c for c in compiled.columns if c.startswith("mekf_")]
    assert estimates and compiled[estimates].notna().to_numpy().any()
    assert list(compiled.columns) == list(interpreted.columns) and compiled.index.equals(interpreted.index)
    for column in compiled.columns:
        assert np.array_equal(compiled[column].to_numpy(), interpreted[column].to_numpy(), equal_nan=True), column
    assert runs["compiled"].events.equals(runs["interpreted"].events)


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")  # the overflow is the case under test
@pytest.mark.parametrize("backend", ["compiled", "interpreted"])
def test_a_gyro_the_filter_cannot_propagate_stops_either_backend_naming_the_estimator(monkeypatch, tmp_path,
                                                                                      backend):
    # a bias of 1e200 rad/s turns the rotation over a gyro period infinite: its sine was NaN compiled (the filter
    # then diverged) but a ValueError in Python, so the interpreted run ended in "math domain error"
    monkeypatch.setenv("ATTSIM_BACKEND", backend)
    m = attsim.Mission("wild_gyro", np.diag([0.06, 0.055, 0.02]), (0.01, -0.02, 0.015), duration=5.0, seed=1,
                       out_dir=tmp_path)
    tracker = m.add(attsim.StarTracker(1.0, noise_arcsec=5.0))
    gyro = m.add(attsim.Gyro(10.0, arw_rad_sqrt_s=1e-5, bias_rad_s=(1e200, 0.0, 0.0), name="wild"))
    m.add(attsim.MEKF(gyro, star_tracker=tracker, name="wild_mekf"))
    with pytest.raises(EstimatorDivergenceError, match=r"^estimator 'wild_mekf': .*gyro 'wild'") as info:
        m.run(compiled=True)
    assert info.value.t_s == pytest.approx(0.1)  # the first propagation
