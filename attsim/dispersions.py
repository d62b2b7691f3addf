"""Dispersed parameters of a Monte Carlo campaign.

A campaign runs a mission many times, each run with its own draw of the
uncertain parameters (inertia, initial rate and attitude, sensor biases,
misalignments, actuator limits, epochs). Each parameter is described by a
:class:`Dispersion`; :func:`draw_parameters` draws run ``index``'s values from
the campaign seed, the run index and the parameter's name only::

    stream(seed, index, name) = default_rng(SeedSequence([seed, index, crc32(name)]))

so run ``k`` is reproducible on any machine, in any order, alone or among
thousands, and adding a parameter to a campaign leaves every other
parameter's draws unchanged. :func:`run_seed` gives the run's Mission seed
(its sensor noise) from ``(seed, index)`` alone.

Quaternions are scalar first, ``q = (w, x, y, z)``, returned with ``w >= 0``;
angles are radians.
"""

from __future__ import annotations

import math
import numbers
import zlib
from collections.abc import Mapping, Sequence

import numpy as np

from . import rotations
from ._core.validate import finite_array, seed_int
from .errors import InputError

__all__ = [
    "Dispersion",
    "Normal",
    "Uniform",
    "TruncatedNormal",
    "UniformRotation",
    "NormalRotation",
    "Choice",
    "Scaled",
    "draw_parameters",
    "checked",
    "run_seed",
    "flatten",
    "MAX_REDRAWS",
]

# A Scaled matrix draw that is not positive definite is redrawn at most this often before giving up: with a
# rel_std that makes one draw in a hundred fail the campaign is not what its author meant.
MAX_REDRAWS = 100


def _fmt(value) -> str:
    """A compact, exact-enough rendering of a scalar or array for describe()."""
    array = np.asarray(value)
    if array.ndim == 0:
        return f"{float(array):.6g}"
    return "[" + ", ".join(_fmt(v) for v in array) + "]"


def _pair(first, second, names: tuple[str, str]) -> tuple[np.ndarray, np.ndarray]:
    """Two finite scalars, or two vectors of the same length (elementwise parameters)."""
    a = finite_array(first, names[0])
    b = finite_array(second, names[1])
    for array, name in ((a, names[0]), (b, names[1])):
        if array.ndim > 1:
            raise InputError(name, "must be a scalar or a vector", f"got shape {array.shape}")
    if a.ndim == 1 and b.ndim == 1 and a.shape != b.shape:
        raise InputError(names[1], f"must have the length of {names[0]}", f"got {b.shape[0]} and {a.shape[0]}")
    if a.ndim == 1 and a.size == 0 or b.ndim == 1 and b.size == 0:
        raise InputError(names[0] if a.size == 0 else names[1], "must not be empty")
    return a, b


def _shape_of(*arrays: np.ndarray) -> tuple[int, ...]:
    return np.broadcast_shapes(*(a.shape for a in arrays))


def _value(array: np.ndarray, shape: tuple[int, ...]):
    """A float for a scalar parameter, a float64 array otherwise."""
    return float(array) if shape == () else np.asarray(array, dtype=np.float64).reshape(shape)


class Dispersion:
    """One uncertain parameter of a campaign: how to draw it.

    The contract of every subclass:

    * :meth:`draw` returns one value — a ``float``, a float64 ``ndarray``
      (vector, quaternion or matrix) or an item of a :class:`Choice` — and
      takes *all* its randomness from the ``rng`` it is given, so the same
      generator state gives the same value on any machine;
    * :meth:`describe` returns a one-line text naming the distribution and its
      parameters (e.g. ``"Normal(mean=0.02, std=0.002)"``), shown in the
      campaign report;
    * bad parameters raise :class:`attsim.errors.InputError` naming the field
      when the dispersion is constructed, never at draw time.
    """

    def draw(self, rng: np.random.Generator):
        raise NotImplementedError

    def describe(self) -> str:
        raise NotImplementedError

    def __repr__(self) -> str:
        return self.describe()


class Normal(Dispersion):
    """Gaussian ``N(mean, std^2)``, elementwise for vectors.

    Parameters
    ----------
    mean, std : float or sequence of float
        Scalars, or vectors of one length (a scalar broadcasts); ``std >= 0``
        (zero gives the mean itself).
    """

    def __init__(self, mean, std):
        self.mean, self.std = _pair(mean, std, ("mean", "std"))
        if np.any(self.std < 0.0):
            raise InputError("std", "must be >= 0", f"got {_fmt(self.std)}")
        self._shape = _shape_of(self.mean, self.std)

    def draw(self, rng: np.random.Generator):
        return _value(self.mean + self.std * rng.standard_normal(self._shape), self._shape)

    def describe(self) -> str:
        return f"Normal(mean={_fmt(self.mean)}, std={_fmt(self.std)})"


class Uniform(Dispersion):
    """Uniform on ``[low, high)``, elementwise for vectors.

    Parameters
    ----------
    low, high : float or sequence of float
        Scalars or vectors of one length, ``low < high`` everywhere.
    """

    def __init__(self, low, high):
        self.low, self.high = _pair(low, high, ("low", "high"))
        if np.any(self.low >= self.high):
            raise InputError("high", "must be > low", f"got low={_fmt(self.low)}, high={_fmt(self.high)}")
        with np.errstate(over="ignore"):
            if not np.all(np.isfinite(self.high - self.low)):  # low + (high - low) u would draw inf
                raise InputError("high", "must be within the largest float of low (high - low finite)",
                                 f"got low={_fmt(self.low)}, high={_fmt(self.high)}")
        self._shape = _shape_of(self.low, self.high)

    def draw(self, rng: np.random.Generator):
        return _value(self.low + (self.high - self.low) * rng.random(self._shape), self._shape)

    def describe(self) -> str:
        return f"Uniform(low={_fmt(self.low)}, high={_fmt(self.high)})"


class TruncatedNormal(Dispersion):
    """``N(mean, std^2)`` conditioned on ``low <= x <= high``, elementwise.

    Drawn by inverting the truncated CDF at one uniform number per element,
    ``x = mean + std * ppf(u; a, b)`` with ``a = (low - mean)/std`` and
    ``b = (high - mean)/std`` (``scipy.stats.truncnorm``, accurate in the far
    tails): one uniform per value keeps the stream's use independent of
    rejection, so draws stay reproducible.

    Parameters
    ----------
    mean, std, low, high : float or sequence of float
        Scalars or vectors of one length; ``std > 0`` and ``low < high``.
    """

    def __init__(self, mean, std, low, high):
        self.mean, self.std = _pair(mean, std, ("mean", "std"))
        self.low, self.high = _pair(low, high, ("low", "high"))
        if np.any(self.std <= 0.0):
            raise InputError("std", "must be > 0", f"got {_fmt(self.std)}")
        if np.any(self.low >= self.high):
            raise InputError("high", "must be > low", f"got low={_fmt(self.low)}, high={_fmt(self.high)}")
        try:
            self._shape = _shape_of(self.mean, self.std, self.low, self.high)
        except ValueError as exc:
            raise InputError("low", "must have the length of mean", str(exc)) from exc

    def draw(self, rng: np.random.Generator):
        from scipy.stats import truncnorm

        a = (self.low - self.mean) / self.std
        b = (self.high - self.mean) / self.std
        x = self.mean + self.std * truncnorm.ppf(rng.random(self._shape), a, b)
        # ppf's round-off may step a hair outside the interval; the bounds are a promise
        return _value(np.clip(x, self.low, self.high), self._shape)

    def describe(self) -> str:
        return (f"TruncatedNormal(mean={_fmt(self.mean)}, std={_fmt(self.std)}, low={_fmt(self.low)}, "
                f"high={_fmt(self.high)})")


class UniformRotation(Dispersion):
    """A uniformly random attitude: a unit quaternion uniform on SO(3).

    Shoemake's subgroup algorithm (Graphics Gems III, 1992): with ``u1, u2,
    u3`` uniform on [0, 1),

        q = (sqrt(1-u1) sin 2 pi u2, sqrt(1-u1) cos 2 pi u2, sqrt(u1) sin 2 pi u3, sqrt(u1) cos 2 pi u3),

    uniform on the unit 3-sphere, hence Haar-distributed rotations (rotation
    angle density ``(1 - cos theta)/pi`` on [0, pi]). Returned as
    ``(w, x, y, z)`` with ``w >= 0`` (``q`` and ``-q`` are one attitude).
    """

    def draw(self, rng: np.random.Generator) -> np.ndarray:
        u1, u2, u3 = rng.random(3)
        a, b = math.sqrt(1.0 - u1), math.sqrt(u1)
        q = np.array([a * math.sin(2 * math.pi * u2), a * math.cos(2 * math.pi * u2),
                      b * math.sin(2 * math.pi * u3), b * math.cos(2 * math.pi * u3)])
        return rotations.quat_canonical(q)

    def describe(self) -> str:
        return "UniformRotation()"


class NormalRotation(Dispersion):
    """A small random rotation: rotation vector ``phi ~ N(0, std_rad^2 I)``.

    Returned as the unit quaternion ``exp(phi/2) = (cos |phi|/2, sin(|phi|/2) phi/|phi|)``
    with ``w >= 0``; its angle ``|phi|`` is ``std_rad`` times a chi variable
    with 3 degrees of freedom (mean ``2 sqrt(2/pi) std_rad ~ 1.6 std_rad``).
    Meant for errors well below pi (an angle past pi wraps to ``2 pi - |phi|``).
    Compose it with a nominal attitude, e.g. ``q0 = quat_multiply(q_nominal, draw)``.

    Parameters
    ----------
    std_rad : float
        Standard deviation of each rotation-vector component (rad), >= 0.
    """

    def __init__(self, std_rad):
        self.std_rad = float(finite_array(std_rad, "std_rad", ()))
        if self.std_rad < 0.0:
            raise InputError("std_rad", "must be >= 0", f"got {std_rad!r}")

    def draw(self, rng: np.random.Generator) -> np.ndarray:
        return rotations.quat_canonical(rotations.rotvec_to_quat(self.std_rad * rng.standard_normal(3)))

    def describe(self) -> str:
        return f"NormalRotation(std_rad={_fmt(self.std_rad)})"


class Choice(Dispersion):
    """One of ``options``, with probabilities proportional to ``weights`` (equal by default).

    Drawn by inverting the cumulative weights at one uniform number, so the
    draw does not depend on numpy's ``choice`` implementation.

    Parameters
    ----------
    options : sequence
        The values (any objects: names, numbers, vectors); at least one.
    weights : sequence of float, optional
        One finite weight >= 0 per option, not all zero.
    """

    def __init__(self, options: Sequence, weights=None):
        if isinstance(options, (str, bytes)) or not isinstance(options, Sequence) or len(options) == 0:
            raise InputError("options", "must be a non-empty sequence", f"got {options!r}")
        self.options = list(options)
        if weights is None:
            weights = np.ones(len(self.options))
        w = finite_array(weights, "weights")
        if w.shape != (len(self.options),):
            raise InputError("weights", f"must hold one weight per option ({len(self.options)})",
                             f"got shape {w.shape}")
        if np.any(w < 0.0) or w.sum() <= 0.0:
            raise InputError("weights", "must be >= 0 and not all zero", f"got {_fmt(w)}")
        self.weights = w
        self._cumulative = np.cumsum(w) / w.sum()

    def draw(self, rng: np.random.Generator):
        u = rng.random()
        index = min(int(np.searchsorted(self._cumulative, u, side="right")), len(self.options) - 1)
        return self.options[index]

    def describe(self) -> str:
        options = ", ".join(repr(o) if isinstance(o, str) else _fmt(o) for o in self.options)
        weights = "" if np.all(self.weights == self.weights[0]) else f", weights={_fmt(self.weights)}"
        return f"Choice([{options}]{weights})"


class Scaled(Dispersion):
    """A nominal value with a relative Gaussian error: ``nominal * (1 + N(0, rel_std^2))``, elementwise.

    A matrix nominal (e.g. an inertia tensor, kg m^2) must be square,
    symmetric and positive definite; its draws stay symmetric (each element
    of the upper triangle gets its own factor, mirrored below) and a draw that
    is not positive definite is redrawn, at most :data:`MAX_REDRAWS` times,
    from the same stream (so still reproducible). Zero elements stay zero.
    The principal moments' triangle inequality is not checked here: the
    mission checks the inertia it is given.

    Parameters
    ----------
    nominal : float, sequence or (n, n) array
        The nominal value.
    rel_std : float
        Relative standard deviation, >= 0 (e.g. 0.05 for 5 %).
    """

    def __init__(self, nominal, rel_std):
        self.nominal = finite_array(nominal, "nominal")
        self.rel_std = float(finite_array(rel_std, "rel_std", ()))
        if self.rel_std < 0.0:
            raise InputError("rel_std", "must be >= 0", f"got {rel_std!r}")
        if self.nominal.ndim > 2:
            raise InputError("nominal", "must be a scalar, a vector or a matrix", f"got shape {self.nominal.shape}")
        if self.nominal.size == 0:
            raise InputError("nominal", "must not be empty", f"got shape {self.nominal.shape}")
        if self.nominal.ndim == 2:
            n, m = self.nominal.shape
            if n != m or n == 0:
                raise InputError("nominal", "must be a square matrix", f"got shape {self.nominal.shape}")
            scale = np.max(np.abs(self.nominal))
            if np.max(np.abs(self.nominal - self.nominal.T)) > 1e-9 * scale:
                raise InputError("nominal", "must be symmetric", f"got {_fmt(self.nominal)}")
            if not _positive_definite(self.nominal):
                raise InputError("nominal", "must be positive definite",
                                 f"eigenvalues {_fmt(np.linalg.eigvalsh(self.nominal))}")

    def draw(self, rng: np.random.Generator):
        if self.nominal.ndim < 2:
            factor = 1.0 + self.rel_std * rng.standard_normal(self.nominal.shape)
            return _value(self.nominal * factor, self.nominal.shape)
        n = self.nominal.shape[0]
        upper = np.triu_indices(n)
        for _ in range(MAX_REDRAWS):
            factor = np.zeros((n, n))
            factor[upper] = 1.0 + self.rel_std * rng.standard_normal(len(upper[0]))
            factor = np.triu(factor) + np.triu(factor, 1).T
            value = self.nominal * factor
            if _positive_definite(value):
                return value
        raise InputError("rel_std", f"must leave the matrix positive definite within {MAX_REDRAWS} draws",
                         f"rel_std = {self.rel_std:g} for nominal {_fmt(self.nominal)}")

    def describe(self) -> str:
        return f"Scaled(nominal={_fmt(self.nominal)}, rel_std={_fmt(self.rel_std)})"


def _positive_definite(matrix: np.ndarray) -> bool:
    try:
        np.linalg.cholesky(matrix)
    except np.linalg.LinAlgError:
        return False
    return True


def _non_negative_int(value, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (numbers.Integral, np.integer)) or value < 0:
        raise InputError(field, "must be an integer >= 0", f"got {value!r}")
    return int(value)


def stream(seed: int, index: int, name: str) -> np.random.Generator:
    """The generator of parameter ``name`` in run ``index`` of the campaign seeded ``seed``."""
    key = zlib.crc32(name.encode("utf-8"))
    return np.random.default_rng(np.random.SeedSequence([seed, index, key]))


def draw_parameters(dispersions: Mapping[str, Dispersion], seed: int, index: int) -> dict[str, object]:
    """Run ``index``'s parameters: each from its own stream.

    ``np.random.default_rng(np.random.SeedSequence([seed, index, zlib.crc32(name.encode())]))``,
    so a run's draws depend only on ``(seed, index, name)``: reproducible on
    any machine and in any order, and adding a parameter does not change the
    others.

    Parameters
    ----------
    dispersions : mapping of str to Dispersion
        The campaign's dispersed parameters by name.
    seed, index : int
        The campaign seed and the run index, both >= 0.

    Returns
    -------
    dict
        ``{name: value}`` in the order of ``dispersions``.
    """
    seed = seed_int(seed)
    index = _non_negative_int(index, "index")
    return {name: dispersion.draw(stream(seed, index, name)) for name, dispersion in checked(dispersions).items()}


def checked(dispersions) -> dict[str, Dispersion]:
    """``dispersions`` as a dict, after checking it maps non-empty names to :class:`Dispersion` objects.

    Parameters
    ----------
    dispersions : mapping of str to Dispersion
        A mission script's ``dispersions()``.

    Raises
    ------
    InputError
        Naming ``dispersions`` (not a mapping, a name that is not a non-empty
        string) or ``dispersions['name']`` (a value that is not a Dispersion).
    """
    if not isinstance(dispersions, Mapping):
        raise InputError("dispersions", "must be a mapping of names to Dispersion", f"got {type(dispersions).__name__}")
    for name, dispersion in dispersions.items():
        if not isinstance(name, str) or not name:
            raise InputError("dispersions", "must have non-empty string names", f"got {name!r}")
        if not isinstance(dispersion, Dispersion):
            raise InputError(f"dispersions[{name!r}]", "must be an attsim.dispersions.Dispersion",
                             f"got {type(dispersion).__name__} {dispersion!r:.60}")
    return dict(dispersions)


def run_seed(seed: int, index: int) -> int:
    """The Mission seed of run ``index`` (its sensor noise), from ``(seed, index)`` only.

    ``SeedSequence([seed, index]).generate_state(1)[0] & 0x7FFFFFFF``: a
    non-negative 31-bit integer, independent of the parameter streams (whose
    entropy also holds the name's CRC).

    Parameters
    ----------
    seed, index : int
        The campaign's seed and the run's index, both >= 0.
    """
    seed = seed_int(seed)
    index = _non_negative_int(index, "index")
    return int(np.random.SeedSequence([seed, index]).generate_state(1)[0]) & 0x7FFFFFFF


def flatten(params: Mapping[str, object]) -> dict[str, float | str]:
    """Parameters as scalar columns (the campaign records' ``p:<name>``).

    Scalars stay as they are (numbers as ``float``, strings as ``str``); a
    vector ``v`` becomes ``'v[0]'``, ``'v[1]'``, ...; a matrix ``'m[0,1]'``
    row-major. A Choice item that is neither a number, a string nor numeric
    array is kept as its ``str``.

    Parameters
    ----------
    params : mapping of str to object
        A run's drawn parameters.
    """
    flat: dict[str, float | str] = {}
    for name, value in params.items():
        if isinstance(value, str):
            flat[name] = value
            continue
        if isinstance(value, (bool, np.bool_)):
            flat[name] = float(value)
            continue
        try:
            array = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError):
            flat[name] = str(value)
            continue
        if array.ndim == 0:
            flat[name] = float(array)
        else:
            for idx in np.ndindex(array.shape):
                flat[f"{name}[{','.join(str(i) for i in idx)}]"] = float(array[idx])
    return flat
