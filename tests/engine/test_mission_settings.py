"""A mission's settings changed after it is built (as a script shortening a shipped mission does): a keyword's
own name is refused rather than ignored, and a new value gets the check its keyword gets (issue 20)."""

import numpy as np
import pytest

import attsim
from attsim.errors import InputError

J = np.diag([0.02, 0.025, 0.03])


def mission():
    return attsim.Mission("settings", J, omega0=(0.05, -0.08, 0.06), duration=20.0, max_step=0.1, telemetry_dt=1.0)


@pytest.mark.parametrize("keyword, held_as", [("duration", "duration_s"), ("max_step", "max_step_s"),
                                              ("telemetry_dt", "telemetry_dt_s"), ("omega0", "omega0_rad_s")])
def test_setting_a_keyword_name_is_refused_not_ignored(keyword, held_as):
    m = mission()
    with pytest.raises(InputError, match=f"{keyword}.*{held_as}"):
        setattr(m, keyword, 5.0)  # was silently kept as an unread attribute: the run went on for 20 s


def test_a_changed_duration_is_the_run_s_duration():
    m = mission()
    m.duration_s = 5.0
    assert m.run(in_memory=True).df.index[-1] == 5.0


@pytest.mark.parametrize("attribute, value, field", [
    ("duration_s", float("nan"), "duration"), ("duration_s", -5.0, "duration"), ("duration_s", "100", "duration"),
    ("max_step_s", 0.0, "max_step"), ("telemetry_dt_s", float("nan"), "telemetry_dt"), ("seed", -1, "seed"),
    ("method", "euler", "method"), ("q0", (0.0, 0.0, 0.0, 0.0), "q0"), ("omega0_rad_s", (1.0, 2.0), "omega0"),
    ("duration_s", 1e12, "max_step"),  # the bound on the work holds for a later duration too
])
def test_a_changed_setting_is_checked_as_its_keyword(attribute, value, field):
    m = mission()
    with pytest.raises(InputError) as caught:
        setattr(m, attribute, value)  # each was a raw ValueError, TypeError or ZeroDivisionError at run (or none)
    assert caught.value.field == field


def test_a_changed_omega0_warns_of_a_unit_slip_at_the_user_s_line():
    m = mission()
    with pytest.warns(attsim.errors.ImplausibleValueWarning, match="omega0") as caught:
        m.omega0_rad_s = (5.0, -3.0, 2.0)  # deg/s given as rad/s
    assert caught[0].filename == __file__
