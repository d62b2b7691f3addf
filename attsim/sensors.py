"""Sensors (layer 5): sampled at their own rate and phase, with noise, bias
and quantisation, deterministic for the mission seed.

A sensor either runs its own SimPy process (sampling at ``phase_s + k /
rate_hz``) or, when a controller uses it, is sampled by that controller
inside its control cycle, so a cycle's measurement is taken at the cycle's
own time and no ordering of same-time events matters. Each sample logs both
the truth and the measurement to telemetry (``<name>_true_*`` and
``<name>_*``; NaN before the first sample).

Noise models (Markley & Crassidis 2014, secs. 4.7 and 6.1):

* gyro: ``b⁺ = b + σ_u √Δt n_u`` and ``ω_m = ω + ½ (b⁺ + b)
  + √(σ_v²/Δt + σ_u² Δt/12) n_v`` with ``σ_v`` the angle random walk
  (rad/√s), ``σ_u`` the rate random walk (rad/s/√s) and ``Δt`` the time
  since the gyro's state was last propagated (whoever reads it);
* magnetometer: ``B_m = Rᵀ B_I + b + N(0, σ²)`` (T);
* coarse sun sensors: one cosine detector per face, ``max(0, n·s)`` plus
  noise, dark in eclipse;
* star tracker: ``q_m = q ⊗ exp(δθ)``, ``δθ ~ N(0, σ²)`` per body axis.

Quantisation rounds the output to a multiple of the step. The arithmetic is
that of :mod:`attsim.sensor_models`, shared with the compiled mission loop.
"""

from __future__ import annotations

import math

import numpy as np

from ._validate import (UNIT_VECTOR_TOLERANCE, callable_output, non_negative_scalar, per_axis, positive_scalar,
                        unit_vector, vector3)
from ._fastcall import entry_point
from .component import Component, periodic
from .dynamics import qconj, qrotate
from .environment.table import P_SRP, SUN, lerp1, lerp3, table_cell
from .sensor_models import (field_body, gyro_measure, magnetometer_measure, star_tracker_measure, sun_sensor_any_light,
                            sun_sensor_measure, sun_sensor_truth)
from .errors import InputError

__all__ = ["Sensor", "Gyro", "Magnetometer", "SunSensor", "StarTracker"]

_ARCSEC = math.pi / (180.0 * 3600.0)


_ZEROS = (0.0,) * 6  # the draws of a noise-free sample
SAMPLES_PER_DRAW = 256  # samples' worth of normals a sensor draws from its generator at once


class Sensor(Component):
    """Base of the sensors: rate, phase, the latest sample, telemetry.

    Subclasses define ``truth(sc)`` (what an ideal sensor would read) and
    ``measure(truth)`` (the corrupted reading), and ``axes`` (names of the
    output components).
    """

    axes: tuple[str, ...] = ("x", "y", "z")
    # per-run caches, set by start(); these defaults let measure() and normals() work before a run too
    _draws = None
    _drawn, _next_draw = (), 0
    _measure_entry = None

    def __init__(self, name: str, rate_hz: float, phase_s: float = 0.0):
        self.name = name
        self.rate_hz = positive_scalar(rate_hz, "rate_hz")
        self.period_s = 1.0 / self.rate_hz
        self.phase_s = non_negative_scalar(phase_s, "phase_s")
        self.readers = []  # the controllers and estimators that sample this sensor in their own cycles
        self.latest = None
        self._latest_truth = None

    def start(self, sc):
        self.rng = sc.rng()
        nan = np.full(len(self.axes), np.nan)
        self.latest, self._latest_truth = nan, nan
        self._draws = self.draws  # fixed for the run: read once, not at every sample
        self._drawn, self._next_draw = [], 0
        self._t_sample_s = None
        self._measure_entry = None  # the measurement kernel for this run's argument types, made at the first sample

    @property
    def draws(self) -> int:
        """Standard normal draws per sample: 0 when the sensor is noise-free (its generator is then never used)."""
        return 0

    def normals(self) -> tuple:
        """The next sample's standard normal draws from the sensor's own generator (zeros when noise-free).

        Drawn :data:`SAMPLES_PER_DRAW` samples at a time: a generator's
        normals are the same sequence however many are drawn per call (the
        compiled loop draws in blocks too), and one call per sample would
        cost more than the sample.
        """
        n = self._draws
        if n is None:
            n = self._draws = self.draws
        if not n:
            return _ZEROS
        k = self._next_draw
        if k == len(self._drawn):
            self._drawn, k = self.rng.standard_normal(n * SAMPLES_PER_DRAW).tolist(), 0
        self._next_draw = k + n
        return tuple(self._drawn[k:k + n])

    def sample(self, sc) -> np.ndarray:
        """Take a measurement now (advances the plant), remember and return it.

        ``truth(sc)`` and ``measure(truth)`` work on tuples (the compiled
        models' arguments); the measurement is kept as an array, what readers
        get; the truth only goes to telemetry, so it stays a tuple.
        """
        t = sc.env._now
        if self._t_sample_s == t:  # several readers at one instant share its sample
            return self.latest
        self._t_sample_s = t
        truth = self.truth(sc)
        self._latest_truth = truth
        self.latest = np.array(self.measure(truth))
        return self.latest

    def add_reader(self, reader) -> None:
        """``reader`` (a controller or an estimator) samples this sensor in its cycles, so it stops running alone.

        A sensor may have several readers (a magnetometer read by a B-dot law,
        a pointing law and an estimator): it is sampled once at each instant
        any of them reads it, and every reader at that instant gets that sample.
        """
        if reader not in self.readers:
            self.readers.append(reader)

    def processes(self, env, sc):
        if self.readers:
            return []
        return [periodic(env, self.period_s, self.phase_s, sc.mission.duration_s, lambda: self.sample(sc))]

    def columns(self):
        return [f"{self.name}_{a}" for a in self.axes] + [f"{self.name}_true_{a}" for a in self.axes]

    def values(self, sc):
        latest, truth = self.latest, self._latest_truth  # arrays or sequences (a user's sensor may keep either)
        return [*(latest.tolist() if type(latest) is np.ndarray else latest),
                *(truth.tolist() if type(truth) is np.ndarray else truth)]


class Gyro(Sensor):
    """Rate gyro: angle random walk, bias with rate random walk, quantisation.

    Parameters: ``arw_rad_sqrt_s`` (σ_v), ``bias_rad_s`` (initial bias),
    ``bias_rw_rad_s_sqrt_s`` (σ_u), ``quantization_rad_s``.
    """

    def __init__(self, rate_hz: float, arw_rad_sqrt_s: float = 0.0, bias_rad_s=(0.0, 0.0, 0.0),
                 bias_rw_rad_s_sqrt_s: float = 0.0, quantization_rad_s: float = 0.0, phase_s: float = 0.0,
                 name: str = "gyro"):
        super().__init__(name, rate_hz, phase_s)
        self.arw = non_negative_scalar(arw_rad_sqrt_s, "arw_rad_sqrt_s")
        self.bias0 = vector3(bias_rad_s, "bias_rad_s")
        self.bias_rw = non_negative_scalar(bias_rw_rad_s_sqrt_s, "bias_rw_rad_s_sqrt_s")
        self.quantization = non_negative_scalar(quantization_rad_s, "quantization_rad_s")

    @property
    def draws(self) -> int:
        return 6 if self.arw or self.bias_rw else 0

    def start(self, sc):
        super().start(sc)
        self._bias = tuple(float(v) for v in self.bias0)
        self._t_last_s = None

    def truth(self, sc):
        return sc.state()[1]

    def sample(self, sc) -> np.ndarray:
        """Propagate the gyro's state to now and measure.

        The bias walks and the angle noise averages over the time since the
        last propagation, whoever reads the gyro and however often; a second
        read at the same instant returns the same sample. The first sample's
        noise spans one nominal period, and the bias has not walked yet.
        """
        t = sc.env._now
        first = self._t_last_s is None
        dt = self.period_s if first else t - self._t_last_s
        if dt > 0.0:
            truth = self.truth(sc)
            args = (truth, self._bias, dt, self.arw, 0.0 if first else self.bias_rw, self.normals(), self.quantization)
            if self._measure_entry is None:
                self._measure_entry = entry_point(gyro_measure, *args)
            measured, bias = self._measure_entry(*args)
            self._bias = bias
            self.latest, self._latest_truth = np.array(measured), truth
        self._t_last_s = t
        return self.latest

    @property
    def bias(self) -> np.ndarray:
        """The gyro's bias now (rad/s), as propagated by its last sample."""
        return np.array(self._bias)


class Magnetometer(Sensor):
    """Three-axis magnetometer in body axes: noise (σ, T), bias (T), quantisation (T)."""

    def __init__(self, rate_hz: float, noise_T: float = 0.0, bias_T=(0.0, 0.0, 0.0), quantization_T: float = 0.0,
                 phase_s: float = 0.0, name: str = "mag"):
        super().__init__(name, rate_hz, phase_s)
        self.noise = non_negative_scalar(noise_T, "noise_T")
        self.bias = vector3(bias_T, "bias_T")
        self._bias = tuple(float(v) for v in self.bias)
        self.quantization = non_negative_scalar(quantization_T, "quantization_T")

    @property
    def draws(self) -> int:
        return 3 if self.noise else 0

    def truth(self, sc):
        return field_body(sc.state()[0], sc.env_t, sc.env_v, sc.env._now)

    def measure(self, truth):
        args = (truth, self._bias, self.noise, self.normals(), self.quantization)
        if self._measure_entry is None:
            self._measure_entry = entry_point(magnetometer_measure, *args)
        return self._measure_entry(*args)


class SunSensor(Sensor):
    """Coarse sun sensors, one cosine detector on each of the six faces.

    Outputs, per face ``+x -x +y -y +z -z``: ``max(0, n·s_B)`` plus noise
    (fraction of full scale), clipped at zero, all zero in eclipse.
    ``sun_inertial`` is a unit vector or ``f(t) -> unit vector`` (default:
    the mission environment's Sun, dark in its shadow); ``eclipse`` an
    optional ``f(t) -> bool``. :meth:`sun_vector` gives the
    estimate ``normalize(I+x - I-x, I+y - I-y, I+z - I-z)`` (NaN in eclipse).
    """

    axes = ("px", "mx", "py", "my", "pz", "mz")

    def __init__(self, rate_hz: float, sun_inertial=None, eclipse=None, noise: float = 0.0,
                 quantization: float = 0.0, phase_s: float = 0.0, name: str = "css"):
        super().__init__(name, rate_hz, phase_s)
        if sun_inertial is not None and not callable(sun_inertial):
            sun_inertial = unit_vector(sun_inertial, "sun_inertial")
        if eclipse is not None and not callable(eclipse):
            raise InputError("eclipse", "must be None or a callable f(t) -> bool", f"got {eclipse!r}")
        self.sun_inertial = sun_inertial
        self.eclipse = eclipse
        self.noise = non_negative_scalar(noise, "noise")
        self.quantization = non_negative_scalar(quantization, "quantization")

    @property
    def draws(self) -> int:
        return 6 if self.noise else 0

    def prepare(self, mission):
        if self.sun_inertial is None and mission.environment is None:  # checked once, not at every sample
            raise InputError("sun_inertial",
                             f"sun sensor {self.name!r} needs a sun direction or a mission environment")

    def truth(self, sc):
        t = sc.env._now
        if self.sun_inertial is None:  # from the mission environment: Sun and shadow (no pressure) along the orbit
            k, f = table_cell(sc.env_t, t)
            if lerp1(sc.env_v, k, f, P_SRP) <= 0.0:
                return _ZEROS
            s_I = lerp3(sc.env_v, k, f, SUN)
        elif self.eclipse is not None and self._in_eclipse(t):
            return _ZEROS
        elif callable(self.sun_inertial):
            s_I = self._sun_from_callable(t)
        else:
            s_I = self.sun_inertial
        return sun_sensor_truth(qrotate(qconj(sc.state()[0]), tuple(float(x) for x in s_I)), True)

    def _in_eclipse(self, t: float) -> bool:
        """The ``eclipse`` callable's answer at ``t``: a bool, or an error naming it (a string is not an answer)."""
        dark = self.eclipse(t)
        if not isinstance(dark, (bool, np.bool_)):
            raise InputError("eclipse", "callable must return True or False", f"at t = {t!r} s it returned {dark!r}")
        return bool(dark)

    def _sun_from_callable(self, t: float) -> np.ndarray:
        """The ``sun_inertial`` callable's direction at ``t``: a finite unit 3-vector, or an error naming it."""
        s_I = callable_output(self.sun_inertial(t), "sun_inertial", (3,), t)
        norm = math.sqrt(s_I[0] * s_I[0] + s_I[1] * s_I[1] + s_I[2] * s_I[2])
        if abs(norm - 1.0) > UNIT_VECTOR_TOLERANCE:
            raise InputError("sun_inertial", "callable must return a unit vector", f"at t = {t!r} s |s| = {norm:.12g}")
        return s_I

    def measure(self, truth):
        if not sun_sensor_any_light(truth):  # dark: no noise drawn
            return truth
        return sun_sensor_measure(truth, self.noise, self.normals(), self.quantization)

    def sun_vector(self, reading=None) -> np.ndarray:
        r = self.latest if reading is None else reading
        s = np.array([r[0] - r[1], r[2] - r[3], r[4] - r[5]])
        norm = np.linalg.norm(s)
        return s / norm if norm > 0 else np.full(3, np.nan)


class StarTracker(Sensor):
    """Attitude sensor: ``q_m = q ⊗ exp(δθ)`` with ``δθ ~ N(0, σ²)`` per body axis.

    ``noise_arcsec`` is one σ for all axes or three (cross-boresight,
    cross-boresight, about the boresight).
    """

    axes = ("qw", "qx", "qy", "qz")

    def __init__(self, rate_hz: float, noise_arcsec=0.0, phase_s: float = 0.0, name: str = "st"):
        super().__init__(name, rate_hz, phase_s)
        self.sigma_rad = per_axis(noise_arcsec, "noise_arcsec", allow_zero=True) * _ARCSEC
        self._sigma = tuple(float(v) for v in self.sigma_rad)

    @property
    def draws(self) -> int:
        return 3 if any(self._sigma) else 0

    def truth(self, sc):
        return sc.state()[0]

    def measure(self, truth):
        args = (truth, self._sigma, self.normals())
        if self._measure_entry is None:
            self._measure_entry = entry_point(star_tracker_measure, *args)
        return self._measure_entry(*args)
