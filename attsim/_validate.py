"""Input checks shared by every layer: each raises :class:`InputError`
naming the field and the rule, so no layer has to phrase its own."""

from __future__ import annotations

import math
import numbers
import re
import warnings

import numpy as np

from .errors import AttsimWarning, InputError

# A quaternion further than this from unit norm is normalised with a warning;
# closer than this, the difference is round-off in the caller's arithmetic.
QUATERNION_NORM_TOLERANCE = 1e-9

# A run's name is also a directory name (``reports/<name>``): a path separator,
# "..", a leading "." (hidden or relative) or an absolute path would write
# outside ``reports/``; the characters are those every file system accepts.
NAME_MAX_CHARS = 100
NAME_RULE = (f"must be a safe file name: 1 to {NAME_MAX_CHARS} ASCII letters, digits, '_', '-' or '.', "
             "not starting with '.' (use out_dir to write elsewhere)")
_NAME_PATTERN = re.compile(rf"[A-Za-z0-9_-][A-Za-z0-9_.-]{{0,{NAME_MAX_CHARS - 1}}}")


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


def real_number(value, field: str) -> float:
    """A real number (not a bool, not a string) as a float."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        if not (isinstance(value, np.ndarray) and value.shape == () and np.issubdtype(value.dtype, np.number)):
            raise InputError(field, "must be a real number", f"got {value!r}")
    return float(value)


def positive_scalar(value, field: str) -> float:
    """A finite number strictly greater than zero."""
    number = real_number(value, field)
    if not math.isfinite(number) or number <= 0.0:
        raise InputError(field, "must be finite and > 0", f"got {value!r}")
    return number


def positive_int(value, field: str, maximum: int = 2**53) -> int:
    """An integer in [1, maximum] (bools are refused: ``True`` is not a count)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 1 <= value <= maximum:
        raise InputError(field, f"must be an integer in [1, {maximum}]", f"got {value!r}")
    return int(value)


def safe_name(value, field: str = "name") -> str:
    """A name that is also a safe file name (:data:`NAME_RULE`): it can only name an entry of its directory."""
    if not isinstance(value, str) or _NAME_PATTERN.fullmatch(value) is None:
        raise InputError(field, NAME_RULE, f"got {value!r}")
    return value


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
