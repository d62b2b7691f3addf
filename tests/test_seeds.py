"""One rule for a seed wherever a user gives one (a mission, a campaign, an ensemble, an environment, the dispersions'
draws): an integer in [0, 2**63 - 1], refused by name otherwise. Three checks had three bounds (2**63, 2**53, none)."""

from pathlib import Path

import numpy as np
import pytest

import attsim
from attsim._core.validate import SEED_MAX, seed_int
from attsim.dispersions import Uniform, draw_parameters, run_seed

ROOT = Path(__file__).resolve().parents[1]
SLEW = ROOT / "tests" / "data" / "campaign_slew.py"


def _mission(seed):
    return attsim.Mission("s", np.diag([1.0, 2.0, 3.0]), (0.0, 0.0, 0.0), duration=1.0, seed=seed)


def _ensemble(seed):
    return attsim.Ensemble(2, (1.0, 1.0, 1.0), duration=1.0, seed=seed)


def _campaign(seed, tmp_path):
    return attsim.Campaign(SLEW, runs=2, seed=seed, out_dir=tmp_path / "mc")


def _draws(seed):
    return draw_parameters({"x": Uniform(0.0, 1.0)}, seed, 0), run_seed(seed, 0)


@pytest.mark.parametrize("make", ["mission", "ensemble", "campaign", "draws"])
def test_every_seed_takes_the_same_integers_and_refuses_the_same_values_by_name(make, tmp_path):
    build = {"mission": _mission, "ensemble": _ensemble, "draws": _draws,
             "campaign": lambda s: _campaign(s, tmp_path)}[make]
    for good in (0, 7, np.int64(7), SEED_MAX):
        build(good)
    for bad in (-1, SEED_MAX + 1, 2**64, 1.0, True, "3", None, np.array(3)):
        with pytest.raises(attsim.InputError) as refused:
            build(bad)
        assert refused.value.field == "seed" and f"[0, {SEED_MAX}]" in refused.value.rule, (make, bad)


def test_the_rule_itself():
    assert seed_int(np.uint64(5)) == 5 and type(seed_int(np.int32(5))) is int
    assert SEED_MAX == 2**63 - 1
