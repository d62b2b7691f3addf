"""SCAFFOLD (feat/campaign only; campaign-stats provides the real module): random dispersions of a campaign.

Layer 2. Only what the campaign runner calls: ``Normal``, ``Uniform``,
``UniformRotation``, ``draw_parameters``, ``run_seed``, ``flatten``.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping

import numpy as np

__all__ = ["Dispersion", "Normal", "Uniform", "UniformRotation", "draw_parameters", "run_seed", "flatten"]


class Dispersion:
    """A random parameter: ``draw(rng)`` gives one value, ``describe()`` says what it is."""

    def draw(self, rng: np.random.Generator):
        raise NotImplementedError

    def describe(self) -> str:
        raise NotImplementedError


def _value(x):
    a = np.asarray(x, dtype=float)
    return float(a) if a.ndim == 0 else a


class Normal(Dispersion):
    def __init__(self, mean, std):
        self.mean, self.std = _value(mean), _value(std)

    def draw(self, rng):
        return _value(rng.normal(self.mean, self.std))

    def describe(self) -> str:
        return f"Normal(mean={np.asarray(self.mean).tolist()}, std={np.asarray(self.std).tolist()})"


class Uniform(Dispersion):
    def __init__(self, low, high):
        self.low, self.high = _value(low), _value(high)

    def draw(self, rng):
        return _value(rng.uniform(self.low, self.high))

    def describe(self) -> str:
        return f"Uniform(low={np.asarray(self.low).tolist()}, high={np.asarray(self.high).tolist()})"


class UniformRotation(Dispersion):
    def draw(self, rng):
        q = rng.normal(size=4)
        q /= np.linalg.norm(q)
        return -q if q[0] < 0 else q

    def describe(self) -> str:
        return "UniformRotation()"


def draw_parameters(dispersions: Mapping[str, Dispersion], seed: int, index: int) -> dict[str, object]:
    return {name: d.draw(np.random.default_rng(np.random.SeedSequence([seed, index, zlib.crc32(name.encode())])))
            for name, d in dispersions.items()}


def run_seed(seed: int, index: int) -> int:
    return int(np.random.SeedSequence([seed, index]).generate_state(1)[0] & 0x7FFFFFFF)


def flatten(params: dict) -> dict[str, float | str]:
    flat = {}
    for name, value in params.items():
        if isinstance(value, str):
            flat[name] = value
            continue
        a = np.asarray(value, dtype=float)
        if a.ndim == 0:
            flat[name] = float(a)
        else:
            for idx in np.ndindex(a.shape):
                flat[f"{name}[{','.join(map(str, idx))}]"] = float(a[idx])
    return flat
