"""Values far outside any spacecraft's range warn of the likely unit slip (issue 20, item 5), and legitimate
extremes do not: the cases of the issue, the seed documents' textbook bodies and every shipped mission."""

import warnings
from pathlib import Path

import numpy as np
import pytest

import attsim
from attsim import plausibility
from attsim.control import knowledge
from attsim.errors import ImplausibleValueWarning
from attsim.scripts import load_module

ROOT = Path(__file__).resolve().parents[1]
CUBESAT_3U = np.diag([0.06, 0.055, 0.02])  # kg m^2, moments 0.02-0.06


def _mission(inertia, omega0, **kw):
    return lambda: attsim.Mission("plausible", inertia, omega0, **kw)


def _wheel(inertia_kg_m2, max_torque_Nm, max_speed_rad_s):
    return lambda: attsim.ReactionWheel("rw", (0.0, 0.0, 1.0), inertia_kg_m2, max_torque_Nm, max_speed_rad_s)


# (case, what builds it, the field warned about or None, what the warning must say)
CASES = [
    # must warn: the unit slips
    ("(5, -3, 2) meant as deg/s on a 3U CubeSat", _mission(CUBESAT_3U, (5.0, -3.0, 2.0)), "omega0",
     "|omega0| = 6.164 rad/s (353.2 deg/s)"),
    ("1 mN m given as 1 N m on a 2e-5 kg m^2 rotor", _wheel(2e-5, 1.0, 600.0), "max_torque_Nm",
     "spins it up at 5e+04 rad/s^2"),
    ("1 N m and 6000 'rad/s' (mN m and rpm mixed up)", _wheel(2e-5, 1.0, 6000.0), "max_torque_Nm", "0.001 N m"),
    ("6000 rpm given as rad/s", _wheel(2.4e-5, 1e-3, 6000.0), "max_speed_rad_s", "that is 628.3 rad/s"),
    ("a 1U CubeSat tumbling at 10 rad/s", _mission(np.diag([1.5e-3, 1.45e-3, 1.48e-3]), (10.0, 0.0, 0.0)), "omega0",
     "at most 2 rad/s"),
    # must not warn: the seed documents' textbook cases, flown hardware, legitimate extremes
    ("Ganapathi's symmetric top, [2 2 8] at (1, 0, 1)",
     _mission([2.0, 2.0, 8.0], (1.0, 0.0, 1.0), allow_nonphysical=True), None, ""),
    ("the rockets' top spinning at 3 rad/s", _mission([2.0, 2.0, 8.0], (0.0, 0.0, 3.0), allow_nonphysical=True), None,
     ""),
    ("Bhattu's sphere, 2 kg m^2 at (0.1, 1, -0.1)", _mission(2.0 * np.eye(3), (0.1, 1.0, -0.1)), None, ""),
    ("DMV's body (0.376, 0.627, 1) at 1.25 rad/s", _mission([0.376, 0.627, 1.0], (0.0, 0.957, -0.8)), None, ""),
    ("a 100 kg m^2 spinner at 6 rad/s", _mission(np.diag([80.0, 90.0, 100.0]), (0.0, 0.0, 6.0)), None, ""),
    ("a 3U CubeSat tumbling at 30 deg/s", _mission(CUBESAT_3U, np.radians((30.0, 0.0, 0.0))), None, ""),
    ("a 3U CubeSat at the bound, 2 rad/s", _mission(CUBESAT_3U, (2.0, 0.0, 0.0)), None, ""),
    ("a CubeSat wheel, 1 mN m on 2.4e-5 kg m^2 at 630 rad/s", _wheel(2.4e-5, 1e-3, 630.0), None, ""),
    ("a fast small wheel, 4 mN m on 2.4e-5 kg m^2 at 10,000 rpm", _wheel(2.4e-5, 4e-3, 1047.0), None, ""),
    ("a large wheel, 0.2 N m on 0.16 kg m^2 at 6000 rpm", _wheel(0.16, 0.2, 628.0), None, ""),
]


@pytest.mark.parametrize("case, make, field, says", CASES, ids=[c[0] for c in CASES])
def test_implausible_values_warn_of_the_unit_slip_and_legitimate_ones_do_not(case, make, field, says):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        make()
    messages = [str(w.message) for w in caught if issubclass(w.category, ImplausibleValueWarning)]
    if field is None:
        assert messages == []
    else:
        assert any(m.startswith(f"{field}: ") and says in m for m in messages), messages
        assert all(w.filename == __file__ for w in caught)  # it points at the user's line


def test_the_rate_bound_grows_from_small_satellites_to_spinners():
    assert plausibility.plausible_rate_rad_s(CUBESAT_3U) == 2.0
    assert plausibility.plausible_rate_rad_s(np.eye(3)) == 2.0
    assert plausibility.plausible_rate_rad_s(np.diag([2.0, 2.0, 8.0])) == pytest.approx(2.0 * np.sqrt(8.0))
    assert plausibility.plausible_rate_rad_s(100.0 * np.eye(3)) == pytest.approx(20.0)
    assert plausibility.plausible_rate_rad_s(1e4 * np.eye(3)) == pytest.approx(20.0)


def test_the_warning_does_not_refuse_the_run(tmp_path):
    with pytest.warns(ImplausibleValueWarning):
        m = attsim.Mission("spinning", CUBESAT_3U, (5.0, -3.0, 2.0), duration=1.0, out_dir=tmp_path)
    w = m.run().df[["wx", "wy", "wz"]].to_numpy()
    assert np.linalg.norm(w[0]) == pytest.approx(np.sqrt(38.0))


MISSIONS = sorted(p for p in (ROOT / "missions").glob("*.py") if not p.name.startswith("_"))


@pytest.mark.parametrize("path", MISSIONS, ids=[p.stem for p in MISSIONS])
def test_every_shipped_mission_is_plausible_and_says_what_its_laws_know(path, tmp_path):
    built = load_module(path).build(out_dir=tmp_path)  # any AttsimWarning is an error under pytest's filter
    for mission in built if isinstance(built, list) else [built]:
        if isinstance(mission, attsim.Mission):
            knowledge.warn_ideal(mission.components)  # what run() would warn of: nothing unasked
