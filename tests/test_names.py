"""A run's name is also a directory name: only safe file names are accepted, wherever a name becomes a path."""

import os
from pathlib import Path

import pytest

import attsim
from attsim import cli
from attsim.errors import InputError

J = [[1.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 2.5]]
UNSAFE = ["/abs", "..", ".", ".hidden", "a/b", "a\\b", "../escape", "", " ", "x" * 101, "tab\tname", "é", "a b",
          None, 3]
SAFE = ["wheel_slew", "time_step_0.01", "A-1", "x" * 100, "v1.2"]


@pytest.mark.parametrize("name", UNSAFE)
@pytest.mark.parametrize("kind", [attsim.Mission, attsim.Propagation])
def test_unsafe_names_are_refused_naming_the_field_and_the_rule(kind, name):
    with pytest.raises(InputError) as info:
        kind(name, J, (0.0, 0.0, 0.1))
    assert info.value.field == "name" and "safe file name" in info.value.rule and "out_dir" in info.value.rule


@pytest.mark.parametrize("name", SAFE)
@pytest.mark.parametrize("kind", [attsim.Mission, attsim.Propagation])
def test_safe_names_are_the_default_directory_under_reports(kind, name):
    run = kind(name, J, (0.0, 0.0, 0.1))
    assert run.out_dir == Path("reports") / name and run.out_dir.resolve().parent == Path("reports").resolve()


def test_out_dir_is_the_way_to_write_elsewhere(tmp_path):
    target = tmp_path / "deep" / ".." / "runs" / "here"
    tel = attsim.Mission("elsewhere", J, (0.0, 0.0, 0.1), duration=1.0, out_dir=target).run()
    assert Path(tel.path) == target and (tmp_path / "runs" / "here" / "telemetry.parquet").is_file()


def test_the_cli_refuses_a_name_changed_after_construction(tmp_path, capsys):
    # a script that renames its missions after building them: the CLI makes paths from the names, so it checks them
    script = tmp_path / "renamed.py"
    script.write_text(
        "import attsim\n"
        "def build(out_dir=None):\n"
        "    missions = [attsim.Mission(f'm{k}', [1.0, 2.0, 2.5], (0.0, 0.0, 0.1), duration=1.0) for k in range(2)]\n"
        "    missions[1].name = '../../outside'\n"
        "    return missions\n"
        "def criteria(runs):\n"
        "    return []\n")
    assert cli.main(["run", str(script), "--out", str(tmp_path / "runs"), "--no-report"]) == 2
    err = capsys.readouterr().err
    assert "name: must be a safe file name" in err and "'../../outside'" in err and err.count("\n") == 1
    assert not (tmp_path / "outside").exists() and not os.path.exists(tmp_path / "runs" / "m0")
