"""Shared helpers for the test suite."""

import os

import numpy as np
import pytest
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

# Random unit quaternions: normalised Gaussian 4-vectors are uniform on S^3.
_gauss = hnp.arrays(np.float64, 4, elements=st.floats(-1.0, 1.0, allow_nan=False, width=64))
unit_quaternions = _gauss.filter(lambda v: np.linalg.norm(v) > 1e-3).map(lambda v: v / np.linalg.norm(v))
vectors3 = hnp.arrays(np.float64, 3, elements=st.floats(-10.0, 10.0, allow_nan=False, width=64))


@pytest.fixture
def rng():
    return np.random.default_rng(20261122)


def random_quaternions(rng, n):
    q = rng.normal(size=(n, 4))
    return q / np.linalg.norm(q, axis=1, keepdims=True)


# The suite runs the compiled backend unless a test asks for another (the interpreted backend has tests of its own,
# and both_ways runs it beside the compiled one); runs never start a compiler in the background (no stray processes).
os.environ.setdefault("ATTSIM_BACKEND", "compiled")
os.environ["ATTSIM_BACKGROUND_COMPILE"] = "0"
