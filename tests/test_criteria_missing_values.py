"""A criterion whose value is pandas' missing value (``pd.NA``, ``pd.NaT``) is not evaluated, like NaN.

``judge`` looked for NaN through a float array; ``pd.NA`` and ``pd.NaT``
cannot become one, so they were taken for values with nothing missing and a
criterion that measured nothing printed ``PASS  a: <NA>`` (and counted as a
pass in a campaign). A value of a nullable column (``Int64``, ``boolean``) or
an empty time span gives them.
"""

import numpy as np
import pandas as pd
import pytest

from attsim.criteria import judge, passed
from attsim.campaign.worker import judge as judge_record


@pytest.mark.parametrize("value", [pd.NA, pd.NaT, pd.Series([1, None], dtype="Int64").max() * pd.NA,
                                   pd.array([1.0, None], dtype="Float64"), [1.0, pd.NA],
                                   np.array([1.0, pd.NA], dtype=object), pd.Series([pd.NaT, pd.Timestamp(0)])],
                         ids=["NA", "NaT", "Int64 NA", "Float64 array", "list", "object array", "NaT series"])
def test_a_missing_value_is_not_evaluated_and_never_passes(value):
    (criterion,) = judge([("settling time [s]", value, True, "< 300")])
    assert not criterion.ok and "the value is NaN" in criterion.value.reason
    assert not passed([criterion])
    columns, status, _ = judge_record([("settling time [s]", value, True, "< 300")])  # a campaign's record agrees
    assert status == "FAIL" and columns["ok:settling time [s]"] is False


@pytest.mark.parametrize("value", [1.5, pd.array([1, 2], dtype="Int64"), pd.Timestamp(0), "NA", "nan",
                                   {"mode": "point"}, [1.0, 2.0]])
def test_values_with_nothing_missing_keep_their_verdict(value):
    (criterion,) = judge([("c", value, True, "")])
    assert criterion.ok
