"""Input checks shared by every layer: each raises :class:`InputError`
naming the field and the rule, so no layer has to phrase its own.

The rules every numeric check applies: a string is never a number (not even
``"0.1"``), a bool is never a number (``True`` is not 1 N m), ``None`` and
containers of the wrong shape are refused, and NaN or infinity is refused
wherever a finite value is needed.
"""

from __future__ import annotations

import math
import numbers
import os
import re
import warnings
from collections.abc import Callable

import numpy as np

from ..errors import AttsimWarning, InputError

# A quaternion further than this from unit norm is normalised with a warning;
# closer than this, the difference is round-off in the caller's arithmetic.
QUATERNION_NORM_TOLERANCE = 1e-9
# A direction (a thruster's, a wheel's axis, the Sun's) must be a unit vector to this tolerance.
UNIT_VECTOR_TOLERANCE = 1e-9

_NUMERIC_KINDS = "iuf"  # numpy dtype kinds that are numbers: signed, unsigned, floating (bool 'b' is not)


def _contains_bool(value) -> bool:
    """True when a nested list or tuple holds a bool (numpy would silently make it 0 or 1)."""
    for item in value:
        if type(item) is float:  # the common case, decided at once
            continue
        if item is True or item is False or isinstance(item, np.bool_):
            return True
        if isinstance(item, (list, tuple)) and _contains_bool(item):
            return True
    return False


# A run's name is also a directory name (``reports/<name>``): a path separator,
# "..", a leading "." (hidden or relative) or an absolute path would write
# outside ``reports/``; the characters are those every file system accepts.
NAME_MAX_CHARS = 100
NAME_RULE = (f"must be a safe file name: 1 to {NAME_MAX_CHARS} ASCII letters, digits, '_', '-' or '.', "
             "not starting with '.' (use out_dir to write elsewhere)")
_NAME_PATTERN = re.compile(rf"[A-Za-z0-9_-][A-Za-z0-9_.-]{{0,{NAME_MAX_CHARS - 1}}}")


def finite_array(value, field: str, shape: tuple[int, ...] | None = None) -> np.ndarray:
    """Return ``value`` as a float64 array (a copy), checking its type, shape and finiteness.

    Refused: ``None``, strings, bools (alone or inside a list), dicts and
    anything numpy cannot read as an array of real numbers.
    """
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in _NUMERIC_KINDS:
            raise InputError(field, "must be numeric (a number or an array of numbers)", f"got {value!r}")
        array = np.array(value, dtype=np.float64)  # a copy: the caller may change theirs
    else:
        if value is None or isinstance(value, (str, bytes, bool, np.bool_, dict, set, frozenset)):
            raise InputError(field, "must be numeric (a number or an array of numbers)", f"got {value!r}")
        try:
            array = np.asarray(value)  # a new array already: converted below without a second copy
        except (TypeError, ValueError) as exc:  # ragged nesting
            raise InputError(field, "must be numeric (a number or an array of numbers)", f"got {value!r}") from exc
        if array.dtype.kind not in _NUMERIC_KINDS:
            raise InputError(field, "must be numeric (a number or an array of numbers)", f"got {value!r}")
        if isinstance(value, (list, tuple)) and _contains_bool(value):
            raise InputError(field, "must be numeric: a bool is not a number", f"got {value!r}")
        array = array.astype(np.float64, copy=False)
    if shape is not None and array.shape != shape:
        raise InputError(field, f"must have shape {shape}", f"got shape {array.shape}")
    if not np.all(np.isfinite(array)):
        raise InputError(field, "must be finite (no NaN or infinity)", f"got {value!r}")
    return array


def vector3(value, field: str) -> np.ndarray:
    """A finite 3-vector."""
    return finite_array(value, field, (3,))


def unit_vector(value, field: str) -> np.ndarray:
    """A finite 3-vector of unit norm (to :data:`UNIT_VECTOR_TOLERANCE`)."""
    vector = vector3(value, field)
    norm = float(np.linalg.norm(vector))
    if abs(norm - 1.0) > UNIT_VECTOR_TOLERANCE:
        raise InputError(field, "must be a unit vector", f"|v| = {norm:.12g}")
    return vector


def real_number(value, field: str) -> float:
    """A real number (not a bool, not a string) as a float."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        if not (isinstance(value, np.ndarray) and value.shape == () and value.dtype.kind in _NUMERIC_KINDS):
            raise InputError(field, "must be a real number", f"got {value!r}")
    return float(value)


def finite_number(value, field: str) -> float:
    """A finite real number."""
    number = real_number(value, field)
    if not math.isfinite(number):
        raise InputError(field, "must be finite", f"got {value!r}")
    return number


def positive_scalar(value, field: str) -> float:
    """A finite number strictly greater than zero."""
    number = real_number(value, field)
    if not math.isfinite(number) or number <= 0.0:
        raise InputError(field, "must be finite and > 0", f"got {value!r}")
    return number


def non_negative_scalar(value, field: str) -> float:
    """A finite number >= 0."""
    number = real_number(value, field)
    if not math.isfinite(number) or number < 0.0:
        raise InputError(field, "must be finite and >= 0", f"got {value!r}")
    return number


def number_in(value, field: str, low: float, high: float) -> float:
    """A finite number in the closed interval ``[low, high]``."""
    number = real_number(value, field)
    if not (math.isfinite(number) and low <= number <= high):
        raise InputError(field, f"must be in [{low:g}, {high:g}]", f"got {value!r}")
    return number


def per_axis(value, field: str, allow_zero: bool = False) -> np.ndarray:
    """One value for all three axes or three, each finite and > 0 (>= 0 with ``allow_zero``), as a 3-vector."""
    return per_item(value, field, 3, "axis", allow_zero)


def per_item(value, field: str, count: int, item: str, allow_zero: bool = False) -> np.ndarray:
    """One value for all ``count`` items (axes, bars) or one each, each finite and > 0 (>= 0 with ``allow_zero``),
    as a ``(count,)`` array; ``item`` names one in the refusal ("axis", "bar")."""
    array = finite_array(value, field)
    if array.shape not in ((), (1,), (count,)):
        many = "three" if count == 3 else str(count)
        raise InputError(field, f"must be one number or {many} (one per {item})", f"got shape {array.shape}")
    array = np.broadcast_to(array, (count,)).copy()
    if np.any(array < 0.0) or (not allow_zero and np.any(array == 0.0)):
        raise InputError(field, f"must be finite and {'>= 0' if allow_zero else '> 0'} on every {item}",
                         f"got {value!r}")
    return array


def directions(value, field: str) -> np.ndarray:
    """Directions, one per row: an ``(n, 3)`` array (n >= 1) of finite, non-zero rows, each scaled to unit length
    (a magnetorquer bar's axis: only its direction means something)."""
    array = finite_array(value, field)
    if array.ndim == 1 and array.shape == (3,):
        array = array[None, :]
    if array.ndim != 2 or array.shape[1] != 3 or array.shape[0] < 1:
        raise InputError(field, "must be an (n, 3) array of directions, one row each", f"got shape {array.shape}")
    largest = np.max(np.abs(array), axis=1)
    if np.any(largest == 0.0):
        raise InputError(field, "must have no zero row (each row is a direction)",
                         f"row {int(np.argmax(largest == 0.0))} is zero")
    array = array / largest[:, None]  # first to the largest component: a row of 1e200 or 1e-200 squares finitely
    return array / np.linalg.norm(array, axis=1)[:, None]


def positive_int(value, field: str, maximum: int = 2**53) -> int:
    """An integer in [1, maximum] (bools are refused: ``True`` is not a count)."""
    return int_in(value, field, 1, maximum)


def int_in(value, field: str, minimum: int, maximum: int = 2**53) -> int:
    """An integer in [minimum, maximum]; a float, even 3.0, is not an integer here."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not minimum <= value <= maximum:
        raise InputError(field, f"must be an integer in [{minimum}, {maximum}]", f"got {value!r}")
    return int(value)


SEED_MAX = 2**63 - 1  # a seed of a mission, a campaign, an ensemble or an environment: numpy's SeedSequence entropy


def is_seed(value) -> bool:
    """Whether ``value`` is a seed: an integer in [0, :data:`SEED_MAX`] (a numpy integer too; not a bool, a float
    or an array)."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool) and 0 <= value <= SEED_MAX


def seed_int(value, field: str = "seed") -> int:
    """A seed (:func:`is_seed`) as a Python int, or an :class:`InputError` naming ``field``."""
    if not is_seed(value):
        raise InputError(field, f"must be an integer in [0, {SEED_MAX}]", f"got {value!r}")
    return int(value)


def boolean(value, field: str) -> bool:
    """A bool (``True``/``False`` or a numpy bool); a string such as ``"no"`` is refused, not read as true."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise InputError(field, "must be True or False", f"got {value!r}")


def _kind(value) -> type | None:
    """What ``one_of`` compares within: str, bool, integer, None (a float 2.0 is no option 2, ``"2"`` neither)."""
    for kind in (str, bool, np.bool_):
        if isinstance(value, kind):
            return bool if kind is np.bool_ else kind
    if isinstance(value, (int, np.integer)):
        return int
    return type(None) if value is None else None


def one_of(value, field: str, options) -> object:
    """One of ``options`` (strings, integers, bools or None) and of its kind: ``"2"`` is not 2, ``{}`` is nothing."""
    kind = _kind(value)
    for option in options:
        if kind is not None and kind is _kind(option) and value == option:
            return option
    raise InputError(field, f"must be one of {list(options)!r}", f"got {value!r}")


def function(value, field: str) -> Callable:
    """A callable."""
    if not callable(value):
        raise InputError(field, "must be callable", f"got {type(value).__name__}")
    return value


def sequence(value, field: str) -> list:
    """A list from a list, tuple or other iterable; a string, a dict, a number or None is refused."""
    if value is None or isinstance(value, (str, bytes, dict, numbers.Number, np.generic)) or (
            isinstance(value, np.ndarray) and value.ndim == 0):
        raise InputError(field, "must be a sequence (list or tuple)", f"got {value!r}")
    try:
        return list(value)
    except TypeError:
        raise InputError(field, "must be a sequence (list or tuple)", f"got {value!r}") from None


def path_like(value, field: str, kind: str = "directory"):
    """A non-empty path (``str`` or ``os.PathLike``) to a ``kind`` ("directory" or "file"), not checked on disk."""
    if isinstance(value, bool) or not isinstance(value, (str, os.PathLike)) or not str(value).strip():
        raise InputError(field, f"must be a {kind} path (str or os.PathLike), not empty", f"got {value!r}")
    if "\x00" in str(value):  # the operating system would refuse it with a bare ValueError
        raise InputError(field, f"must be a {kind} path without a NUL character", f"got {value!r}")
    return value


def callable_output(value, field: str, shape: tuple[int, ...], t_s: float) -> np.ndarray:
    """What a user's callable returned at ``t_s``: a finite float array of ``shape``, or an error naming it.

    Runs at every call of the callable, so it makes one array and no more.
    """
    if isinstance(value, (str, bytes)):
        array = None
    else:
        try:
            array = np.asarray(value)
        except (TypeError, ValueError):
            array = None
    if array is None or array.dtype.kind not in _NUMERIC_KINDS or array.shape != shape:
        raise InputError(field, f"callable must return finite numbers of shape {shape}",
                         f"at t = {t_s!r} s it returned {value!r}")
    if not np.all(np.isfinite(array)):
        raise InputError(field, "callable must return finite values", f"at t = {t_s!r} s it returned {value!r}")
    return array.astype(np.float64, copy=False)


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
    The norm is taken of the quaternion scaled by its largest component, so
    components near the overflow or underflow limits still normalise.
    """
    q = finite_array(value, field, (4,))
    scale = 1.0
    with np.errstate(over="ignore", under="ignore"):
        norm = float(np.linalg.norm(q))
    if not 1e-150 < norm < 1e150:  # the squares under- or overflow: take the norm of q scaled to max |q_i| = 1
        scale = float(np.max(np.abs(q)))
        if scale == 0.0:
            raise InputError(field, "must be a non-zero quaternion (w, x, y, z)", f"got {value!r}")
        q = q / scale
        norm = float(np.linalg.norm(q))
    if scale != 1.0 or abs(norm - 1.0) > QUATERNION_NORM_TOLERANCE:
        warnings.warn(
            f"{field}: quaternion norm is {norm * scale:.12g}, not 1; normalised",
            AttsimWarning,
            stacklevel=3,
        )
    return q / norm
