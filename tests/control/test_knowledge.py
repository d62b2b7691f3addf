"""Ideal knowledge is said (issue 20, item 4): a law with no attitude or rate source runs on the true state, which is
a legitimate study but not a flight-like result. It warns once per run unless asked for (attsim.TRUTH), is recorded
per law in meta.json and shows as a line in the report's summary."""

import copy
import pickle
import warnings

import numpy as np
import pytest

import attsim
from attsim import modes
from attsim.errors import IdealKnowledgeWarning

J = np.diag([0.06, 0.055, 0.02])
PATHS = pytest.mark.parametrize("compiled", [False, True], ids=["python", "compiled"])
QPD = dict(target_q=(1.0, 0.0, 0.0, 0.0), kp=1e-3, kd=1e-2, period_s=0.5)


def _pointing(tmp_path, name="knowing", manager_source=attsim.TRUTH, **sources):
    m = attsim.Mission(name, J, (0.01, -0.02, 0.015), duration=4.0, out_dir=tmp_path / name)
    gyro = m.add(attsim.Gyro(2.0, arw_rad_sqrt_s=1e-5))
    tracker = m.add(attsim.StarTracker(2.0, noise_arcsec=5.0))
    wheels = [m.add(attsim.ReactionWheel(f"rw_{a}", d, 2e-5, 1e-3, 600.0)) for a, d in zip("xyz", np.eye(3))]
    named = {"st": tracker, "gyro": gyro}
    law = m.add(attsim.QuaternionPD(**QPD, wheels=wheels, **{k: named.get(v, v) for k, v in sources.items()}))
    m.add(attsim.ModeManager([("point", [law]), ("coast", [])],
                             [("point", "coast", modes.rate_above(1.0, source=manager_source))], "point", 0.5))
    return m


@PATHS
def test_a_law_on_the_true_state_warns_once_per_run_naming_it(tmp_path, compiled):
    m = _pointing(tmp_path, manager_source=None)
    with pytest.warns(IdealKnowledgeWarning) as caught:
        tel = m.run(compiled=compiled)
    assert len(caught) == 1
    message = str(caught[0].message)
    assert "'qpd' (attitude and rate), 'modes' (rate) act on the true state" in message
    assert "attsim.TRUTH" in message and caught[0].filename == __file__
    assert tel.meta["knowledge"] == {"qpd": {"attitude": "true state", "rate": "true state"},
                                     "modes": {"rate": "true state"}}


def test_only_what_is_read_from_the_truth_unasked_is_named(tmp_path):
    m = _pointing(tmp_path, attitude_source="st")
    with pytest.warns(IdealKnowledgeWarning, match=r"^ideal knowledge: 'qpd' \(rate\) acts on the true state"):
        tel = m.run()
    assert tel.meta["knowledge"] == {"qpd": {"attitude": "st", "rate": "true state"}, "modes": {"rate": "true state"}}


@PATHS
def test_truth_asked_for_explicitly_runs_without_a_warning_and_is_recorded(tmp_path, compiled):
    m = _pointing(tmp_path, attitude_source=attsim.TRUTH, rate_source=attsim.TRUTH)
    with warnings.catch_warnings():
        warnings.simplefilter("error", IdealKnowledgeWarning)
        tel = m.run(compiled=compiled)
    assert tel.meta["knowledge"] == {"qpd": {"attitude": "true state", "rate": "true state"},
                                     "modes": {"rate": "true state"}}
    assert attsim.load(m.out_dir).meta["knowledge"] == tel.meta["knowledge"]  # as written in meta.json


def test_a_flight_like_chain_records_its_sources(tmp_path):
    m = _pointing(tmp_path, attitude_source="st", rate_source="gyro")
    mekf = m.add(attsim.MEKF(m.component("gyro"), star_tracker=m.component("st")))
    m.components.remove(m.component("modes"))
    m.add(attsim.ModeManager([("point", [m.component("qpd")]), ("coast", [])],
                             [("point", "coast", modes.rate_above(1.0, source=mekf))], "point", 0.5))
    tel = m.run()  # no warning (pytest turns any AttsimWarning into an error)
    assert tel.meta["knowledge"] == {"qpd": {"attitude": "st", "rate": "gyro"}, "modes": {"rate": "mekf"}}


def test_truth_is_one_object_however_it_travels():
    # a campaign's worker unpickles its mission: the source must still be recognised as the truth asked for
    assert pickle.loads(pickle.dumps(attsim.TRUTH)) is attsim.TRUTH
    assert copy.deepcopy(attsim.TRUTH) is attsim.TRUTH and repr(attsim.TRUTH) == "attsim.TRUTH"
    condition = pickle.loads(pickle.dumps(modes.rate_below(0.1, source=attsim.TRUTH)))
    assert condition.source is attsim.TRUTH


@pytest.mark.parametrize("make", [
    lambda: attsim.QuaternionPD(**QPD, wheels=["w"], attitude_source=3.0),
    lambda: attsim.MagneticPD("mag", "mtq", 1.0, 1.0, 1.0, rate_source=(0.0, 0.0, 1.0)),
])
def test_a_source_that_is_no_component_is_refused(make):
    with pytest.raises(attsim.InputError, match=r"_source: must be a sensor, an estimator, its name, or attsim.TRUTH"):
        make()


def test_the_report_says_when_a_law_ran_on_the_true_state(tmp_path):
    ideal = _pointing(tmp_path, "ideal", attitude_source=attsim.TRUTH, rate_source="gyro").run()
    page = attsim.report(ideal, tmp_path / "ideal.html").read_text()
    assert "Ideal knowledge: qpd (attitude), modes (rate) act on the simulator's true state" in page
    assert "This result is not flight-like." in page
    assert "qpd: attitude from true state, rate from gyro" in page  # the summary's knowledge row

    flight = _pointing(tmp_path, "flight", manager_source=None, attitude_source="st", rate_source="gyro")
    flight.components.remove(flight.component("modes"))
    page = attsim.report(flight.run(), tmp_path / "flight.html").read_text()
    assert "Ideal knowledge" not in page and "qpd: attitude from st, rate from gyro" in page
