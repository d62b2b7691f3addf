"""Hostile input to campaigns: each refused before any run, by an AttsimError naming the field and the rule
(on the command line: one line on stderr, exit 2), the campaign directory left as it was."""

import textwrap
from pathlib import Path

import pytest

import attsim
from attsim import cli
from attsim.errors import InputError

ROOT = Path(__file__).resolve().parents[2]
SLEW = ROOT / "tests" / "data" / "campaign_slew.py"


def _script(tmp_path, body: str, name: str = "hostile.py") -> Path:
    """A mission script on top of the campaign tests' slew (its build and criteria) with ``body`` appended."""
    script = tmp_path / name
    script.write_text(textwrap.dedent(f"""\
        import sys
        sys.path.insert(0, {str(SLEW.parent)!r})
        import numpy as np
        import campaign_slew as base
        from attsim.dispersions import Normal, Uniform
        criteria = base.criteria
        build = base.build
        """) + textwrap.dedent(body))
    return script


def _refused(capsys, argv) -> str:
    """The command's one line on stderr, after checking it exited 2 (no traceback, no 'internal error')."""
    assert cli.main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "internal error" not in err and "Traceback" not in err, err
    return err


@pytest.mark.parametrize("body, field, rule", [
    ("dispersions = {'omega0_rad_s': Normal([0, 0, 0], [1e-3] * 3)}\n",
     "dispersions", "must be a function of the mission script"),
    ("def dispersions():\n    return [Normal(0, 1)]\n", "dispersions", "must be a mapping of names to Dispersion"),
    ("def dispersions():\n    return {'omega0_rad_s': [0.1, 0.2, 0.3]}\n",
     "dispersions['omega0_rad_s']", "must be an attsim.dispersions.Dispersion"),
    ("def dispersions():\n    return {'bogus': Normal(0, 1)}\n", "dispersions", "must be a parameter of the mission's"),
])
def test_malformed_dispersions_are_refused_naming_the_field(tmp_path, capsys, body, field, rule):
    script = _script(tmp_path, body)
    with pytest.raises(InputError) as info:
        attsim.Campaign(script, runs=2, out_dir=tmp_path / "mc")
    assert info.value.field == field and rule in info.value.rule
    err = _refused(capsys, ["campaign", str(script), "--runs", "2", "--out", str(tmp_path / "mc")])
    assert err.startswith(f"attsim: {field}: ") and rule in err
    assert not (tmp_path / "mc").exists()


def test_the_dispersions_module_under_that_name_disperses_nothing(tmp_path):
    # 'from attsim import dispersions' without a dispersions() function: the runs differ by their seed only
    script = _script(tmp_path, "from attsim import dispersions\n")
    assert attsim.Campaign(script, runs=2, out_dir=tmp_path / "mc").dispersions == {}


@pytest.mark.parametrize("body, ignored", [
    # **params swallows the gyro bias: drawn, recorded, never used
    ("def dispersions():\n    return {**base.dispersions(), 'gyro_bias_rad_s': Normal([0, 0, 0], [1e-5] * 3)}\n"
     "def build(out_dir=None, gyro_bias_rad_s=None, **params):\n    return base.build(out_dir, **params)\n",
     "'gyro_bias_rad_s'"),
    # named, then dropped on the way to the mission
    ("dispersions = base.dispersions\n"
     "def build(out_dir=None, inertia_scale=(1, 1, 1), omega0_rad_s=(0, 0, 0), attitude_error_rad=(0, 0, 0)):\n"
     "    return base.build(out_dir, inertia_scale=inertia_scale)\n", "'omega0_rad_s', 'attitude_error_rad'"),
])
def test_a_drawn_parameter_that_build_does_not_apply_is_refused_naming_it(tmp_path, capsys, body, ignored):
    script = _script(tmp_path, body)
    with pytest.raises(InputError) as info:
        attsim.Campaign(script, runs=2, out_dir=tmp_path / "mc")
    assert info.value.field == "dispersions" and info.value.detail.startswith(ignored + ": ")
    err = _refused(capsys, ["campaign", str(script), "--runs", "2", "--out", str(tmp_path / "mc")])
    assert "each drawn parameter must change the mission build() returns" in err and ignored in err
    assert not (tmp_path / "mc").exists()


def test_a_build_that_fails_for_every_draw_is_refused_before_any_run(tmp_path, capsys):
    # a scalar where the mission needs a vector: every run would be the same ERROR
    script = _script(tmp_path, "def dispersions():\n    return {'omega0_rad_s': Normal(0.0, 1e-3)}\n")
    err = _refused(capsys, ["campaign", str(script), "--runs", "2", "--out", str(tmp_path / "mc")])
    assert err.startswith("attsim: build: must build the mission from some of the first") and "omega0" in err


def test_a_parameter_applied_through_a_closure_or_a_rare_failing_draw_is_accepted():
    from attsim.campaign.applied import check_applied
    from attsim.dispersions import Normal, Uniform, draw_parameters

    class Controller:
        def __init__(self, law):
            self.law = law

    def build(params):  # the gain reaches the mission only inside a function the controller calls
        gain = params["gain"]
        if params["trip"] > 0.5:
            raise ValueError("a draw the mission refuses: that run's ERROR record, not the campaign's")
        return [Controller(lambda error: -gain * error)]

    dispersions = {"gain": Normal(1.0, 0.1), "trip": Uniform(0.0, 1.0)}
    seed = next(s for s in range(100) if draw_parameters(dispersions, s, 0)["trip"] > 0.5)  # run 0 cannot build
    check_applied(build, dispersions, seed)

    def forgetful(params):
        return [Controller(lambda error: -1.0 * error)]

    with pytest.raises(InputError, match="'gain', 'trip': build"):
        check_applied(forgetful, dispersions, seed)


def test_a_build_that_is_not_reproducible_cannot_be_checked_and_is_left_alone():
    import numpy as np

    from attsim.campaign.applied import check_applied, fingerprint
    from attsim.dispersions import Normal

    assert fingerprint({"a": np.array([1.0, 2.0])}) == fingerprint({"a": np.array([1.0, 2.0])})
    assert fingerprint({"a": np.array([1.0, 2.0])}) != fingerprint({"a": np.array([1.0, 2.0 + 1e-15])})
    check_applied(lambda params: [np.random.default_rng().random(3)], {"x": Normal(0.0, 1.0)}, 0)


@pytest.mark.parametrize("option, value, message", [
    ("--scheduler", "nonsense", "scheduler: must be the address of a running Dask scheduler"),
    ("--scheduler", "http://127.0.0.1:8787", "scheduler: must be the address of a running Dask scheduler"),
    ("--workers", "0", "workers: must be an integer in [1, "),
])
def test_where_to_run_is_checked_before_the_campaign_directory_is_touched(tmp_path, capsys, option, value, message):
    # a distributed ValueError was 'internal error, a bug in attsim' (exit 3); --workers 0 was refused only after
    # campaign.json was written and the progress bar drawn
    err = _refused(capsys, ["campaign", str(SLEW), "--runs", "2", option, value, "--out", str(tmp_path / "mc")])
    assert err.startswith(f"attsim: {message}")
    assert not (tmp_path / "mc" / "campaign.json").exists()


def test_an_out_dir_that_cannot_be_written_is_an_input_error_naming_it(tmp_path, capsys):
    a_file = tmp_path / "taken"
    a_file.write_text("not a directory")
    for out in (a_file, a_file / "below"):
        err = _refused(capsys, ["campaign", str(SLEW), "--runs", "2", "--out", str(out)])
        assert err.startswith(f"attsim: out_dir: must be a directory attsim can create and write ({out}: ")


def test_a_failed_write_says_what_is_kept_and_how_to_resume(tmp_path):
    from attsim.campaign import records as store

    writer = store.RecordWriter(tmp_path)
    writer.add({"run": 0, "seed": 1, "status": "OK", "error": "", "wall_s": 0.1, "worker": "w"})
    writer.flush()
    writer.add({"run": 1, "seed": 2, "status": "OK", "error": "", "wall_s": 0.1, "worker": "w"})
    (tmp_path / store.RECORDS_DIR).rename(tmp_path / "moved")
    (tmp_path / store.RECORDS_DIR).write_text("the disk is full")  # every write below it now fails
    with pytest.raises(store.CampaignWriteError) as info:
        writer.flush()
    assert isinstance(info.value, attsim.AttsimError) and "start the same command again to resume" in str(info.value)
    assert str(tmp_path / store.RECORDS_DIR / "part-000001.parquet") in str(info.value)


def test_a_second_campaign_into_a_busy_directory_says_nothing_of_its_runs(tmp_path, capsys):
    from attsim.telemetry.lock import RunLock

    from attsim.campaign import records as store

    out = tmp_path / "mc"
    out.mkdir()
    store.write_campaign(out, attsim.Campaign(SLEW, runs=2, out_dir=out).description())  # run 0 on disk
    writer = store.RecordWriter(out)
    writer.add({"run": 0, "seed": 1, "status": "OK", "error": "", "wall_s": 0.1, "worker": "w"})
    writer.flush()
    holder = RunLock(out)
    assert holder.acquire()
    try:
        assert cli.main(["campaign", str(SLEW), "--runs", "2", "--out", str(out)]) == 2
    finally:
        holder.release()
    captured = capsys.readouterr()
    assert "resuming" not in captured.out and "is in use by another campaign" in captured.err


def test_resuming_another_mission_names_what_differs_in_one_readable_line():
    # the refusal printed both scripts' SHA-256 and both full parameter dicts (a 900-character line)
    from attsim.campaign.records import differences

    stored = {"mission": "/m/a.py", "mission_sha256": "0" * 64, "seed": 0, "duration_s": None, "method": None,
              "parameters": {"inertia_scale": "Normal(mean=1, std=0.05)", "omega0": "Normal(mean=0, std=0.002)"}}
    new = {**stored, "mission_sha256": "f" * 64,
           "parameters": {"inertia_scale": "Normal(mean=1, std=0.033)", "omega0": "Normal(mean=0, std=0.002)",
                          "gyro_bias": "Normal(mean=0, std=1e-05)"}}
    assert differences(stored, new) == [
        "mission_sha256: the script's content changed",
        "parameters['inertia_scale']: Normal(mean=1, std=0.05) != Normal(mean=1, std=0.033)",
        "parameters['gyro_bias']: absent != Normal(mean=0, std=1e-05)"]
    assert differences(stored, {**stored, "seed": 2}) == ["seed: 0 != 2"]


def test_a_propagation_study_is_refused_as_a_campaign_before_any_run(tmp_path, capsys):
    # constant_torque builds an attsim.Propagation: every run was an ERROR "unexpected keyword argument 'in_memory'"
    err = _refused(capsys, ["campaign", str(ROOT / "missions" / "constant_torque.py"), "--runs", "2",
                            "--out", str(tmp_path / "mc")])
    assert err == "attsim: build: must return an attsim.Mission in a campaign (got Propagation (run it with " \
                  "'attsim run'))" and not (tmp_path / "mc").exists()
