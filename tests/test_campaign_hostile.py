"""Hostile input to campaigns: each refused before any run, by an AttsimError naming the field and the rule
(on the command line: one line on stderr, exit 2), the campaign directory left as it was."""

import textwrap
from pathlib import Path

import pytest

import attsim
from attsim import cli
from attsim.errors import InputError

ROOT = Path(__file__).resolve().parents[1]
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
