"""What a new user's first hour found: the README's mission snippets run, and their edge cases are refused or run."""

import re
from pathlib import Path

import numpy as np
import pytest

import attsim

README = Path(__file__).resolve().parents[1] / "README.md"


def _blocks():
    return re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)


def test_the_readme_mission_and_numba_snippets_run_as_written(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    missions = next(b for b in _blocks() if "attsim.Mission(" in b and "BDot" in b)
    numba_law = next(b for b in _blocks() if "NumbaController(" in b)
    # shortened (60 s instead of 17,400 s): the schedule then lies after the end, which must simply never act
    namespace = {}
    exec(compile(missions.replace("duration=17400.0", "duration=60.0"), "README missions", "exec"), namespace)
    assert namespace["tel"].df.index[-1] == 60.0
    setup = missions.split("mag = mission.add")[0].replace("duration=17400.0", "duration=5.0")
    setup = setup.replace('"detumble"', '"numba_law"')
    namespace = {}
    exec(compile(setup + numba_law, "README numba law", "exec"), namespace)
    df = namespace["mission"].run().df
    assert np.isfinite(df.to_numpy()).all() and df.index[-1] == 5.0


@pytest.mark.parametrize("compiled", [None, False])
def test_a_schedule_entirely_after_the_end_never_acts(tmp_path, compiled):
    m = attsim.Mission("late", np.diag([1.0, 2.0, 2.5]), (0.0, 0.0, 0.0), duration=10.0, out_dir=tmp_path)
    m.add(attsim.TorqueSchedule([(100.0, 110.0, (0.0, 0.0, 1e-5))]))
    df = m.run(compiled=compiled).df
    assert (df[["wx", "wy", "wz"]].to_numpy() == 0.0).all()


@pytest.mark.parametrize("options, field", [
    (dict(max_step=1e-300), "max_step"), (dict(duration=1e300), "max_step"),
    (dict(telemetry_dt=1e-300), "telemetry_dt"), (dict(out_dir="run\x00dir"), "out_dir"),
])
def test_missions_that_would_never_end_or_cannot_be_written_are_refused(options, field):
    with pytest.raises(attsim.InputError, match=f"^{field}: "):
        attsim.Mission("bounded", np.diag([1.0, 2.0, 2.5]), (0.0, 0.0, 0.0), **options)


def test_a_sensor_too_fast_for_the_duration_is_refused(tmp_path):
    m = attsim.Mission("fast", np.diag([1.0, 2.0, 2.5]), (0.0, 0.0, 0.0), duration=100.0, out_dir=tmp_path)
    m.add(attsim.Gyro(rate_hz=1e300))
    with pytest.raises(attsim.InputError, match="^gyro.rate: gives more than"):
        m.run()


def test_the_readme_adcs_chain_snippet_runs_as_written(tmp_path, monkeypatch):
    # it continued the detumbling snippet, whose mission has no orbit: a reader following it literally met
    # "GroundTarget target needs an orbit" (or a NameError on its own); now it stands alone
    monkeypatch.chdir(tmp_path)
    chain = next(b for b in _blocks() if "GroundTarget(" in b)
    assert "duration=5700.0" in chain
    namespace = {}
    exec(compile(chain.replace("duration=5700.0", "duration=600.0"), "README ADCS chain", "exec"), namespace)
    df = namespace["tel"].df
    assert df.index[-1] == 600.0
    assert np.isfinite(df[[f"mekf_q{c}" for c in "wxyz"]].to_numpy()).all()
    assert df["att_err_deg"][df.index >= 300.0].max() < 0.1  # from identity to the target, then held


def test_the_readme_sweep_snippet_runs_and_each_result_keeps_its_run(tmp_path, monkeypatch, capsys):
    # a gain sweep in a loop: each result must describe its own run, with one directory per gain (as written) and
    # with one directory for all (what a user who drops out_dir gets: every run named alike)
    monkeypatch.chdir(tmp_path)
    missions = next(b for b in _blocks() if "attsim.Mission(" in b and "BDot" in b)
    sweep = next(b for b in _blocks() if "for gain in" in b)
    setup = missions.split("mag = mission.add")[0].replace("duration=17400.0", "duration=60.0")
    finals = {}
    for where, block in (("own", sweep), ("shared", sweep.replace('out_dir=f"reports/detumble_sweep/gain_{gain:g}"',
                                                                  'out_dir="reports/detumble_sweep"'))):
        assert (block != sweep) == (where == "shared")
        namespace = {}
        exec(compile((setup + block).replace("duration=3000.0", "duration=60.0"), "README sweep", "exec"), namespace)
        results = namespace["results"]
        for gain, tel in results.items():
            assert len(tel.df) == tel.meta["rows"] == 61 and tel.df.index[-1] == 60.0
            assert tel.meta["components"][-1]["gain_used"] == gain
        finals[where] = {g: tel.df[["wx", "wy", "wz"]].to_numpy()[-1] for g, tel in results.items()}
    assert len(finals["own"]) == 3 and len({tuple(w) for w in finals["own"].values()}) == 3  # three different runs
    for gain, omega in finals["own"].items():
        assert np.array_equal(finals["shared"][gain], omega)
    assert "gain 50000: |omega| at the end" in capsys.readouterr().out
