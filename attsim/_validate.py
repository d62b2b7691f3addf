"""Input checks shared by every layer: each raises :class:`InputError`
naming the field and the rule, so no layer has to phrase its own."""

from __future__ import annotations

import math
import warnings

import numpy as np

from .errors import AttsimWarning, InputError

# A quaternion further than this from unit norm is normalised with a warning;
# closer than this, the difference is round-off in the caller's arithmetic.
QUATERNION_NORM_TOLERANCE = 1e-9


def finite_array(value, field: str, shape: tuple[int, ...] | None = None) -> np.ndarray:
    """Return ``value`` as a float64 array, checking its shape and finiteness."""
    try:
        array = np.array(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(field, "must be numeric", f"got {value!r}") from exc
    if shape is not None and array.shape != shape:
        raise InputError(field, f"must have shape {shape}", f"got shape {array.shape}")
    if not np.all(np.isfinite(array)):
        raise InputError(field, "must be finite (no NaN or infinity)", f"got {value!r}")
    return array


def vector3(value, field: str) -> np.ndarray:
    """A finite 3-vector."""
    return finite_array(value, field, (3,))


def positive_scalar(value, field: str) -> float:
    """A finite number strictly greater than zero."""
    try:
        number = float(value)
    except (TypeError, ValueError) as exc:
        raise InputError(field, "must be a number", f"got {value!r}") from exc
    if not math.isfinite(number) or number <= 0.0:
        raise InputError(field, "must be finite and > 0", f"got {value!r}")
    return number


def positive_int(value, field: str) -> int:
    """An integer >= 1 (bools are refused: ``True`` is not a count)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise InputError(field, "must be an integer >= 1", f"got {value!r}")
    return int(value)


def unit_quaternion(value, field: str) -> np.ndarray:
    """A scalar-first quaternion of unit norm.

    A zero, NaN or infinite quaternion is refused; one whose norm is off by
    more than :data:`QUATERNION_NORM_TOLERANCE` is normalised with an
    :class:`AttsimWarning`, since it then names an attitude unambiguously.
    """
    q = finite_array(value, field, (4,))
    norm = float(np.linalg.norm(q))
    if norm == 0.0:
        raise InputError(field, "must be a non-zero quaternion (w, x, y, z)", f"got {value!r}")
    if abs(norm - 1.0) > QUATERNION_NORM_TOLERANCE:
        warnings.warn(
            f"{field}: quaternion norm is {norm:.12g}, not 1; normalised",
            AttsimWarning,
            stacklevel=3,
        )
    return q / norm
