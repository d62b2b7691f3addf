"""Sensors (layer 5): sampled at their own rate and phase, with noise, bias
and quantisation, deterministic for the mission seed.

A sensor either runs its own SimPy process (sampling at ``phase_s + k /
rate_hz``) or, when a controller uses it, is sampled by that controller
inside its control cycle, so a cycle's measurement is taken at the cycle's
own time and no ordering of same-time events matters. Each sample logs both
the truth and the measurement to telemetry (``<name>_true_*`` and
``<name>_*``; NaN before the first sample).

Noise models (Markley & Crassidis 2014, secs. 4.7 and 6.1):

* gyro: the discrete model of Markley & Crassidis (sec. 6.1; Crassidis &
  Junkins) with ``Δt`` the time since the gyro's state was last propagated,
  whoever reads it: ``b_{k+1} = b_k + σ_u √Δt N_u`` and ``ω_m = ω + ½ (b_{k+1}
  + b_k) + sqrt(σ_v²/Δt + σ_u² Δt/12) N_v``, with ``σ_v`` the angle random walk
  (rad/√s) and ``σ_u`` the rate random walk (rad/s/√s);
* magnetometer: ``B_m = Rᵀ B_I + b + N(0, σ²)`` (T);
* coarse sun sensors: one cosine detector per face, ``max(0, n·s)`` plus
  noise, dark in eclipse;
* star tracker: ``q_m = q ⊗ exp(δθ)``, ``δθ ~ N(0, σ²)`` per body axis.

Quantisation rounds the output to a multiple of the step.
"""

from __future__ import annotations

import math

import numpy as np

from ._validate import finite_array, positive_scalar, vector3
from .engine import Component, periodic
from .errors import InputError

__all__ = ["Sensor", "Gyro", "Magnetometer", "SunSensor", "StarTracker"]

_ARCSEC = math.pi / (180.0 * 3600.0)


def _quantize(value: np.ndarray, step: float) -> np.ndarray:
    return value if step == 0.0 else np.round(value / step) * step


def _non_negative(value, field: str) -> float:
    number = float(finite_array(value, field, ()))
    if number < 0:
        raise InputError(field, "must be >= 0", f"got {value!r}")
    return number


class Sensor(Component):
    """Base of the sensors: rate, phase, the latest sample, telemetry.

    Subclasses define ``truth(sc)`` (what an ideal sensor would read) and
    ``measure(truth)`` (the corrupted reading), and ``axes`` (names of the
    output components).
    """

    axes: tuple[str, ...] = ("x", "y", "z")

    def __init__(self, name: str, rate_hz: float, phase_s: float = 0.0):
        self.name = name
        self.rate_hz = positive_scalar(rate_hz, "rate_hz")
        self.period_s = 1.0 / self.rate_hz
        self.phase_s = _non_negative(phase_s, "phase_s")
        self.driven_by = None  # a controller that samples this sensor itself
        self.latest = None
        self._latest_truth = None

    def start(self, sc):
        self.rng = sc.rng()
        nan = np.full(len(self.axes), np.nan)
        self.latest, self._latest_truth = nan, nan

    def sample(self, sc) -> np.ndarray:
        """Take a measurement now (advances the plant), remember and return it."""
        truth = self.truth(sc)
        self._latest_truth = truth
        self.latest = self.measure(truth)
        return self.latest

    def processes(self, env, sc):
        if self.driven_by is not None:
            return []
        return [periodic(env, self.period_s, self.phase_s, sc.mission.duration_s, lambda: self.sample(sc))]

    def columns(self):
        return [f"{self.name}_{a}" for a in self.axes] + [f"{self.name}_true_{a}" for a in self.axes]

    def values(self, sc):
        return list(self.latest) + list(self._latest_truth)


class Gyro(Sensor):
    """Rate gyro: angle random walk, bias with rate random walk, quantisation.

    Parameters: ``arw_rad_sqrt_s`` (σ_v), ``bias_rad_s`` (initial bias),
    ``bias_rw_rad_s_sqrt_s`` (σ_u), ``quantization_rad_s``.

    The noise is a process in time, not in samples (Markley & Crassidis 2014,
    sec. 6.1, eqs. 6.9-6.10; Crassidis & Junkins, *Optimal Estimation of
    Dynamic Systems*, sec. 7.2). A read at ``t_(k+1)``, ``Δt = t_(k+1) - t_k``
    after the previous one, propagates the bias and returns the mean rate
    over the interval::

        b_(k+1) = b_k + σ_u sqrt(Δt) N_u
        ω_m = ω(t_(k+1)) + ½ (b_(k+1) + b_k) + sqrt(σ_v² / Δt + σ_u² Δt / 12) N_v

    so a gyro read once a second by a 1 Hz controller walks its bias by
    ``σ_u² · 1 s`` per read, as one read every 0.1 s would over ten reads.
    ``rate_hz`` sets when the gyro samples itself if no controller reads it.
    A read with no elapsed time (the first, or a second at the same instant)
    moves the bias by nothing and carries the white noise of one nominal
    sample period, ``σ_v² · rate_hz``: the reading of a gyro that integrates
    over its own sample period.
    """

    def __init__(self, rate_hz: float, arw_rad_sqrt_s: float = 0.0, bias_rad_s=(0.0, 0.0, 0.0),
                 bias_rw_rad_s_sqrt_s: float = 0.0, quantization_rad_s: float = 0.0, phase_s: float = 0.0, name: str = "gyro"):
        super().__init__(name, rate_hz, phase_s)
        self.arw = _non_negative(arw_rad_sqrt_s, "arw_rad_sqrt_s")
        self.bias0 = vector3(bias_rad_s, "bias_rad_s")
        self.bias_rw = _non_negative(bias_rw_rad_s_sqrt_s, "bias_rw_rad_s_sqrt_s")
        self.quantization = _non_negative(quantization_rad_s, "quantization_rad_s")

    def start(self, sc):
        super().start(sc)
        self.bias = self.bias0.copy()
        self.t_propagated_s = None  # time the bias was last propagated to (None: never read)
        self._t_read_s = 0.0

    def sample(self, sc) -> np.ndarray:
        self._t_read_s = sc.now  # the noise model needs the read's time
        return super().sample(sc)

    def truth(self, sc):
        return np.array(sc.state()[1])

    def measure(self, truth):
        t = self._t_read_s
        dt = 0.0 if self.t_propagated_s is None else t - self.t_propagated_s
        self.t_propagated_s = t
        noise = self.rng.standard_normal(6)  # always six draws: the stream stays aligned for a seed
        previous = self.bias
        if dt > 0.0:
            self.bias = previous + self.bias_rw * math.sqrt(dt) * noise[3:]
            sigma = math.sqrt(self.arw**2 / dt + self.bias_rw**2 * dt / 12.0)
        else:
            sigma = self.arw / math.sqrt(self.period_s)
        return _quantize(truth + 0.5 * (previous + self.bias) + sigma * noise[:3], self.quantization)


class Magnetometer(Sensor):
    """Three-axis magnetometer in body axes: noise (σ, T), bias (T), quantisation (T)."""

    def __init__(self, rate_hz: float, noise_T: float = 0.0, bias_T=(0.0, 0.0, 0.0), quantization_T: float = 0.0,
                 phase_s: float = 0.0, name: str = "mag"):
        super().__init__(name, rate_hz, phase_s)
        self.noise = _non_negative(noise_T, "noise_T")
        self.bias = vector3(bias_T, "bias_T")
        self.quantization = _non_negative(quantization_T, "quantization_T")

    def truth(self, sc):
        return sc.field_body_T()

    def measure(self, truth):
        return _quantize(truth + self.bias + self.noise * self.rng.standard_normal(3), self.quantization)


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
    _NORMALS = np.array([[1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1]], dtype=float)

    def __init__(self, rate_hz: float, sun_inertial=None, eclipse=None, noise: float = 0.0,
                 quantization: float = 0.0, phase_s: float = 0.0, name: str = "css"):
        super().__init__(name, rate_hz, phase_s)
        if sun_inertial is not None and not callable(sun_inertial):
            s = vector3(sun_inertial, "sun_inertial")
            if abs(np.linalg.norm(s) - 1.0) > 1e-9:
                raise InputError("sun_inertial", "must be a unit vector", f"|s| = {np.linalg.norm(s):.12g}")
        self.sun_inertial = sun_inertial
        self.eclipse = eclipse
        self.noise = _non_negative(noise, "noise")
        self.quantization = _non_negative(quantization, "quantization")

    def truth(self, sc):
        from .rotations import quat_conjugate, quat_rotate

        t = sc.now
        if self.sun_inertial is None:  # from the mission environment: Sun and shadow along the orbit
            if sc.environment is None:
                raise InputError("sun_inertial", f"sun sensor {self.name!r} needs a sun direction or a mission environment")
            e = sc.environment_now()
            if e["srp_pressure"] <= 0.0:
                return np.zeros(6)
            s_I = e["sun"]
        elif self.eclipse is not None and self.eclipse(t):
            return np.zeros(6)
        else:
            s_I = np.asarray(self.sun_inertial(t) if callable(self.sun_inertial) else self.sun_inertial, dtype=float)
        s_B = quat_rotate(quat_conjugate(np.array(sc.state()[0])), s_I)
        return np.maximum(0.0, self._NORMALS @ s_B)

    def measure(self, truth):
        if not np.any(truth):
            return truth
        return _quantize(np.maximum(0.0, truth + self.noise * self.rng.standard_normal(6)), self.quantization)

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
        sigma = np.broadcast_to(np.asarray(noise_arcsec, dtype=float), (3,)).copy()
        if not np.all(np.isfinite(sigma)) or np.any(sigma < 0):
            raise InputError("noise_arcsec", "must be finite and >= 0", f"got {noise_arcsec!r}")
        self.sigma_rad = sigma * _ARCSEC

    def truth(self, sc):
        return np.array(sc.state()[0])

    def measure(self, truth):
        from .rotations import quat_multiply, rotvec_to_quat

        error = rotvec_to_quat(self.sigma_rad * self.rng.standard_normal(3))
        q = quat_multiply(truth, error)
        return q if q[0] >= 0 else -q
