"""The built-in sensors: gyro, magnetometer, coarse sun sensors, star tracker.

Each samples at its own rate and phase, with noise, bias and quantisation,
deterministic for the mission seed; each is mounted in the body (nominal
``q_BS``, misalignment), has scale factor errors and biases, and takes
time-tagged faults (:class:`~attsim.sensors.faults.SensorFault`). What every
sensor shares — sampling, mounting, faults, "no output" — is
:mod:`attsim.sensors.base`'s; the arithmetic is :mod:`attsim.sensors.kernels`'s,
shared with the compiled mission loop.

Noise models (Markley & Crassidis 2014, secs. 4.7 and 6.1), in the sensor's
own axes:

* gyro: ``b⁺ = b + σ_u √Δt n_u`` and ``ω_m = (1 + k) ω + ½ (b⁺ + b)
  + √(σ_v²/Δt + σ_u² Δt/12) n_v`` with ``σ_v`` the angle random walk
  (rad/√s), ``σ_u`` the rate random walk (rad/s/√s) and ``Δt`` the time
  since the gyro's state was last propagated (whoever reads it);
* magnetometer: ``B_m = (1 + k) R_SB B_I + b + N(0, σ²)`` (T);
* coarse sun sensors: six cosine detectors in three opposite pairs (by
  default the ± faces of the sensor frame), each ``(1 + k_i) n_i·s + b_i``
  while the Sun is inside its field of view, plus noise, dark in eclipse;
* star tracker: ``q_m = q ⊗ exp(β) ⊗ exp(δθ)``, ``δθ ~ N(0, σ²)`` per
  sensor axis (boresight +z), blinded inside its Sun and Earth exclusion
  cones.

Quantisation rounds the output (in the sensor's axes) to a multiple of the step.
"""

from __future__ import annotations

import math

import numpy as np

from .._core.validate import (UNIT_VECTOR_TOLERANCE, callable_output, finite_array, non_negative_scalar, per_axis,
                        real_number, unit_vector, vector3)
from .._core.fastcall import entry_point
from ..dynamics import qconj, qrotate
from ..environment.table import P_SRP, R, SUN, lerp1, lerp3, table_cell
from ..errors import InputError
from .base import IDENTITY, Sensor, scale_factor
from .faults import SensorFault
from .loop import (GYRO_ARW, GYRO_BIAS_RW, GYRO_QUANTIZATION, MAGNETOMETER_BIAS, MAGNETOMETER_NOISE,
                   MAGNETOMETER_QUANTIZATION, REAL_NORMALS_NOMINAL, REAL_NORMALS_TRUE, REAL_OFFSET, REAL_SCALE,
                   REAL_SUN_MATRIX, STAR_EARTH_EXCLUSION, STAR_SIGMA, STAR_SUN_EXCLUSION, SUN_COS_FOV, SUN_NOISE,
                   SUN_QUANTIZATION, sample_gyro, sample_magnetometer, sample_star_tracker, sample_sun_sensor)
from .._core.units import Unit
from .kernels import (SUN_SENSOR_NORMALS, field_body, gyro_measure, gyro_sample, magnetometer_measure,
                            magnetometer_sample, star_tracker_blinded, star_tracker_measure, star_tracker_sample,
                            sun_sensor_any_light, sun_sensor_detect, sun_sensor_measure, sun_sensor_signals,
                            sun_sensor_truth)

__all__ = ["Sensor", "Gyro", "Magnetometer", "SunSensor", "StarTracker", "SensorFault"]

_ARCSEC = math.pi / (180.0 * 3600.0)
_ZEROS = (0.0,) * 6
_NO_MISALIGNMENT = (0.0, 0.0, 0.0)


class Gyro(Sensor):
    """Rate gyro: angle random walk, bias with rate random walk, quantisation, mounting, scale factor, faults.

    Mounting as in :mod:`attsim.sensors.base`.

    Parameters
    ----------
    rate_hz : float
        Sampling rate, Hz (> 0).
    arw_rad_sqrt_s : float, optional
        Angle random walk σ_v, rad/√s (default 0: no noise).
    bias_rad_s : array_like (3,), optional
        Initial bias, rad/s, gyro axes.
    bias_rw_rad_s_sqrt_s : float, optional
        Rate random walk of the bias σ_u, rad/s/√s.
    quantization_rad_s : float, optional
        Output step, rad/s (0: none).
    phase_s : float, optional
        Time of the first sample, s (default 0).
    name : str, optional
        Its name: the prefix of its telemetry columns (default ``"gyro"``).
    q_BS : array_like (4,), optional
        Nominal mounting, scalar first: rotates sensor-frame vectors into body axes (default identity).
    misalignment_rad : array_like (3,), optional
        The true mounting's small rotation from the nominal one, rad (sensor axes).
    scale_factor_error : float or array_like (3,), optional
        ``k`` per axis (the gain is ``1 + k``), each in (-1, 1).
    faults : sequence of SensorFault, optional
        Time-tagged dropouts, stuck outputs and bias jumps (bias jumps of 3 values, rad/s).
    """

    def __init__(self, rate_hz: float, arw_rad_sqrt_s: float = 0.0, bias_rad_s=(0.0, 0.0, 0.0),
                 bias_rw_rad_s_sqrt_s: float = 0.0, quantization_rad_s: float = 0.0, phase_s: float = 0.0,
                 name: str = "gyro", *, q_BS=IDENTITY, misalignment_rad=_NO_MISALIGNMENT, scale_factor_error=0.0,
                 faults=()):
        super().__init__(name, rate_hz, phase_s)
        self.arw = non_negative_scalar(arw_rad_sqrt_s, "arw_rad_sqrt_s")
        self.bias0 = vector3(bias_rad_s, "bias_rad_s")
        self.bias_rw = non_negative_scalar(bias_rw_rad_s_sqrt_s, "bias_rw_rad_s_sqrt_s")
        self.quantization = non_negative_scalar(quantization_rad_s, "quantization_rad_s")
        self.scale_factor_error = scale_factor(scale_factor_error, "scale_factor_error", 3)
        self.configure(q_BS, misalignment_rad, faults, 3, "must have 3 values for a Gyro (rad/s, gyro axes)")
        self.plain_unless(self.scale_factor_error)

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
            dropout, stuck, extra = (False, False, _ZEROS) if self._simple else self.faults_now(t)
            args = (truth, self._bias, dt, self.arw, 0.0 if first else self.bias_rw, self.normals(), self.quantization)
            if not self.plain:
                args += (self.q_BS_true, self.q_BS, self.scale_factor_error, (extra[0], extra[1], extra[2]))
            if self._measure_entry is None:
                self._measure_entry = entry_point(gyro_measure if self.plain else gyro_sample, *args)
            measured, bias = self._measure_entry(*args)
            self._bias = bias
            self._latest_truth = truth
            if self._simple:
                self.latest = np.array(measured)
            else:
                self.output(measured, dropout, stuck)
        self._t_last_s = t
        return self.latest

    sample_unit = Unit(sample_gyro, "sample_gyro", {})

    def fill_loop_row(self, parameters, bias, realism, faults) -> None:
        super().fill_loop_row(parameters, bias, realism, faults)
        parameters[GYRO_ARW], parameters[GYRO_BIAS_RW], parameters[GYRO_QUANTIZATION] = \
            self.arw, self.bias_rw, self.quantization
        bias[:] = self.bias0
        realism[REAL_SCALE:REAL_SCALE + 3] = self.scale_factor_error

    def take_loop_row(self, output, bias) -> None:
        super().take_loop_row(output, bias)
        self._bias = tuple(float(v) for v in bias)

    @property
    def bias(self) -> np.ndarray:
        """The gyro's bias now (rad/s) as propagated by its last sample, in body axes through the nominal
        mounting: the additive bias of its body-axis output, which an estimator estimates."""
        return np.array(qrotate(self.q_BS, tuple(float(v) for v in getattr(self, "_bias", self.bias0))))


class Magnetometer(Sensor):
    """Three-axis magnetometer: noise (σ, T), bias (T, its axes), quantisation (T), mounting, scale factor, faults
    (bias jumps of 3 values, T).

    Parameters
    ----------
    rate_hz : float
        Sampling rate, Hz (> 0).
    noise_T : float, optional
        White noise σ per axis, T.
    bias_T : array_like (3,), optional
        Constant bias, T, its axes.
    quantization_T : float, optional
        Output step, T (0: none).
    phase_s : float, optional
        Time of the first sample, s (default 0).
    name : str, optional
        Its name: the prefix of its telemetry columns (default ``"mag"``).
    q_BS : array_like (4,), optional
        Nominal mounting, scalar first: rotates sensor-frame vectors into body axes (default identity).
    misalignment_rad : array_like (3,), optional
        The true mounting's small rotation from the nominal one, rad (sensor axes).
    scale_factor_error : float or array_like (3,), optional
        ``k`` per axis (the gain is ``1 + k``), each in (-1, 1).
    faults : sequence of SensorFault, optional
        Time-tagged dropouts, stuck outputs and bias jumps (bias jumps of 3 values, T).
    """

    def __init__(self, rate_hz: float, noise_T: float = 0.0, bias_T=(0.0, 0.0, 0.0), quantization_T: float = 0.0,
                 phase_s: float = 0.0, name: str = "mag", *, q_BS=IDENTITY, misalignment_rad=_NO_MISALIGNMENT,
                 scale_factor_error=0.0, faults=()):
        super().__init__(name, rate_hz, phase_s)
        self.noise = non_negative_scalar(noise_T, "noise_T")
        self.bias = vector3(bias_T, "bias_T")
        self._bias = tuple(float(v) for v in self.bias)
        self.quantization = non_negative_scalar(quantization_T, "quantization_T")
        self.scale_factor_error = scale_factor(scale_factor_error, "scale_factor_error", 3)
        self.configure(q_BS, misalignment_rad, faults, 3, "must have 3 values for a Magnetometer (T, its axes)")
        self.plain_unless(self.scale_factor_error)

    @property
    def draws(self) -> int:
        return 3 if self.noise else 0

    sample_unit = Unit(sample_magnetometer, "sample_magnetometer", {})

    def fill_loop_row(self, parameters, bias, realism, faults) -> None:
        super().fill_loop_row(parameters, bias, realism, faults)
        parameters[MAGNETOMETER_NOISE], parameters[MAGNETOMETER_QUANTIZATION] = self.noise, self.quantization
        parameters[MAGNETOMETER_BIAS:MAGNETOMETER_BIAS + 3] = self.bias
        realism[REAL_SCALE:REAL_SCALE + 3] = self.scale_factor_error

    def truth(self, sc):
        return field_body(sc.state()[0], sc.env_t, sc.env_v, sc.env._now)

    def measure(self, truth, extra_bias=(0.0, 0.0, 0.0)):
        """The mounted measurement of the body-axis field ``truth`` (T, body axes), with ``extra_bias`` added."""
        args = (truth, self._bias, self.noise, self.normals(), self.quantization)
        if not self.plain:
            args += (self.q_BS_true, self.q_BS, self.scale_factor_error, extra_bias)
        if self._measure_entry is None:
            self._measure_entry = entry_point(magnetometer_measure if self.plain else magnetometer_sample, *args)
        return self._measure_entry(*args)


def _detector_normals(value) -> tuple:
    """Six unit detector normals (sensor axes) in three opposite pairs whose axes span three dimensions."""
    rule = "must be six unit vectors in three opposite pairs (+a, -a, +b, -b, +c, -c) whose axes span 3D"
    array = finite_array(value, "detector_normals", (6, 3))
    norms = np.linalg.norm(array, axis=1)
    if np.any(np.abs(norms - 1.0) > UNIT_VECTOR_TOLERANCE):
        raise InputError("detector_normals", rule, f"norms {norms.tolist()}")
    gap = np.abs(array[0::2] + array[1::2]).max()
    if gap > UNIT_VECTOR_TOLERANCE:
        raise InputError("detector_normals", rule, f"a pair is not opposite (|n+ + n-| = {gap:.3g})")
    det = abs(float(np.linalg.det(array[0::2])))
    if det < 1e-3:
        raise InputError("detector_normals", rule, f"|det(a, b, c)| = {det:.3g} < 0.001")
    return tuple(tuple(float(v) for v in n) for n in array)


class SunSensor(Sensor):
    """Coarse sun sensors: six cosine detectors in three opposite pairs.

    Outputs, per detector (named ``px mx py my pz mz``, the default normals
    ``+x -x +y -y +z -z`` of the sensor frame, or ``detector_normals`` in
    that order): ``(1 + k_i) n_i·s_B + b_i`` while the Sun is within
    ``fov_deg`` of the detector's normal (0 outside), plus noise (fraction
    of full scale), clipped at zero, all zero in eclipse (a valid dark
    reading). The normals are turned by the mounting (``q_BS``,
    ``misalignment_rad``); the truth columns are the ideal detectors at the
    nominal mounting. ``sun_inertial`` is a unit vector or
    ``f(t) -> unit vector`` (default: the mission environment's Sun, dark in
    its shadow); ``eclipse`` an optional ``f(t) -> bool``. Faults: bias
    jumps of 6 values. :meth:`sun_vector` gives the estimate
    ``M⁻¹ Σ n_i I_i`` (nominal normals, body axes; ``M = Σ_pairs a aᵀ``,
    exact for ideal detectors in opposite pairs) normalised (NaN when dark).

    Parameters
    ----------
    rate_hz : float
        Sampling rate, Hz (> 0).
    sun_inertial : array_like (3,) or callable, optional
        The Sun's unit vector, inertial axes, or ``f(t) -> unit vector`` (default: the mission environment's Sun).
    eclipse : callable, optional
        ``f(t) -> bool``, True in shadow (default: the environment's shadow).
    noise : float, optional
        White noise σ per detector, a fraction of full scale.
    quantization : float, optional
        Output step, a fraction of full scale (0: none).
    phase_s : float, optional
        Time of the first sample, s (default 0).
    name : str, optional
        Its name: the prefix of its telemetry columns (default ``"css"``).
    q_BS : array_like (4,), optional
        Nominal mounting, scalar first: rotates sensor-frame vectors into body axes (default identity).
    misalignment_rad : array_like (3,), optional
        The true mounting's small rotation from the nominal one, rad (sensor axes).
    scale_factor_error : float or array_like (3,), optional
        ``k`` per axis (the gain is ``1 + k``), each in (-1, 1).
    faults : sequence of SensorFault, optional
        Time-tagged dropouts, stuck outputs and bias jumps (bias jumps of 6 values, fractions of full scale).
    detector_normals : array_like (6, 3), optional
        The detectors' normals in the sensor frame, in the order ``px mx py my pz mz`` (default ±x, ±y, ±z).
    fov_deg : float, optional
        Half-angle of each detector's field of view, deg (default 90).
    bias : float or array_like (6,), optional
        Constant bias per detector, fractions of full scale.
    """

    axes = ("px", "mx", "py", "my", "pz", "mz")

    def __init__(self, rate_hz: float, sun_inertial=None, eclipse=None, noise: float = 0.0,
                 quantization: float = 0.0, phase_s: float = 0.0, name: str = "css", *, q_BS=IDENTITY,
                 misalignment_rad=_NO_MISALIGNMENT, detector_normals=None, fov_deg: float = 90.0,
                 scale_factor_error=0.0, bias=0.0, faults=()):
        super().__init__(name, rate_hz, phase_s)
        if sun_inertial is not None and not callable(sun_inertial):
            sun_inertial = unit_vector(sun_inertial, "sun_inertial")
        if eclipse is not None and not callable(eclipse):
            raise InputError("eclipse", "must be None or a callable f(t) -> bool", f"got {eclipse!r}")
        self.sun_inertial = sun_inertial
        self.eclipse = eclipse
        self.noise = non_negative_scalar(noise, "noise")
        self.quantization = non_negative_scalar(quantization, "quantization")
        self.detector_normals = SUN_SENSOR_NORMALS if detector_normals is None else _detector_normals(detector_normals)
        fov = real_number(fov_deg, "fov_deg")
        if not 0.0 < fov <= 90.0:
            raise InputError("fov_deg", "must be in (0, 90] degrees (a detector's half-angle field of view)",
                             f"got {fov_deg!r}")
        self.fov_deg = fov
        self._cos_fov = 0.0 if fov == 90.0 else math.cos(math.radians(fov))  # exactly the bare max(0, n·s) at 90
        self.scale_factor_error = scale_factor(scale_factor_error, "scale_factor_error", 6)
        self.detector_bias = _six(bias, "bias")
        self.configure(q_BS, misalignment_rad, faults, 6, "must have 6 values for a SunSensor (one per detector)")
        self.normals_nominal = tuple(qrotate(self.q_BS, n) for n in self.detector_normals)  # body axes
        self.normals_true = tuple(qrotate(self.q_BS_true, n) for n in self.detector_normals)
        # the kernels take them one after the other (18 values)
        self._nominal_flat, self._true_flat = sum(self.normals_nominal, ()), sum(self.normals_true, ())
        self.sun_matrix = _sun_matrix(self.normals_nominal)
        self.plain_unless(self.scale_factor_error, self.detector_bias)
        self.plain = self.plain and self.detector_normals == SUN_SENSOR_NORMALS and fov == 90.0

    @property
    def draws(self) -> int:
        return 6 if self.noise else 0

    sample_unit = Unit(sample_sun_sensor, "sample_sun_sensor", {})

    def loop_ready(self, mission) -> bool:
        """Only the environment's Sun and shadow are tabulated for the compiled mission."""
        return self.sun_inertial is None and self.eclipse is None and mission.environment is not None

    def fill_loop_row(self, parameters, bias, realism, faults) -> None:
        super().fill_loop_row(parameters, bias, realism, faults)
        parameters[SUN_NOISE], parameters[SUN_QUANTIZATION], parameters[SUN_COS_FOV] = \
            self.noise, self.quantization, self._cos_fov
        realism[REAL_SCALE:REAL_SCALE + 6], realism[REAL_OFFSET:REAL_OFFSET + 6] = self.scale_factor_error, \
            self.detector_bias
        realism[REAL_NORMALS_TRUE:REAL_NORMALS_TRUE + 18] = np.ravel(self.normals_true)
        realism[REAL_NORMALS_NOMINAL:REAL_NORMALS_NOMINAL + 18] = np.ravel(self.normals_nominal)
        realism[REAL_SUN_MATRIX:REAL_SUN_MATRIX + 18] = self.sun_matrix.ravel()

    def prepare(self, mission):
        if self.sun_inertial is None and mission.environment is None:  # checked once, not at every sample
            raise InputError("sun_inertial",
                             f"sun sensor {self.name!r} needs a sun direction or a mission environment")

    def sun_body(self, sc):
        """``(ŝ_B, lit)``: the true Sun direction in body axes now and whether the Sun is seen at all."""
        t = sc.env._now
        if self.sun_inertial is None:  # from the mission environment: Sun and shadow (no pressure) along the orbit
            k, f = table_cell(sc.env_t, t)
            if lerp1(sc.env_v, k, f, P_SRP) <= 0.0:
                return _ZEROS[:3], False
            s_I = lerp3(sc.env_v, k, f, SUN)
        elif self.eclipse is not None and self._in_eclipse(t):
            return _ZEROS[:3], False
        elif callable(self.sun_inertial):
            s_I = self._sun_from_callable(t)
        else:
            s_I = self.sun_inertial
        return qrotate(qconj(sc.state()[0]), tuple(float(x) for x in s_I)), True

    def truth(self, sc):
        s_B, lit = self.sun_body(sc)
        if self.plain:
            return sun_sensor_truth(s_B, lit)
        return sun_sensor_signals(s_B, lit, self._nominal_flat, self._cos_fov)

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

    def measure(self, signals, extra_bias=_ZEROS):
        """The detectors' outputs from the true-mounted signals (:func:`~attsim.sensors.kernels.sun_sensor_signals`)."""
        if not sun_sensor_any_light(signals):  # dark: no noise drawn
            return signals
        if self.plain:
            return sun_sensor_measure(signals, self.noise, self.normals(), self.quantization)
        bias = tuple(b + e for b, e in zip(self.detector_bias, extra_bias))
        return sun_sensor_measure(sun_sensor_detect(signals, self.scale_factor_error, bias), self.noise,
                                  self.normals(), self.quantization)

    def sample(self, sc) -> np.ndarray:
        if self.shares_sample(sc):
            return self.latest
        s_B, lit = self.sun_body(sc)
        if self.plain:
            self._latest_truth = signals = sun_sensor_truth(s_B, lit)
        else:
            self._latest_truth = sun_sensor_signals(s_B, lit, self._nominal_flat, self._cos_fov)
            signals = sun_sensor_signals(s_B, lit, self._true_flat, self._cos_fov)
        if self._simple:
            self.latest = np.array(self.measure(signals))
            return self.latest
        dropout, stuck, extra = self.faults_now(sc.env._now)
        return self.output(self.measure(signals, extra), dropout, stuck)

    def sun_vector(self, reading=None) -> np.ndarray:
        """The Sun direction in body axes from six detector outputs (the latest by default); NaN when dark."""
        r = self.latest if reading is None else reading
        s = self.sun_matrix @ np.asarray(r, dtype=float)
        norm = np.linalg.norm(s)
        return s / norm if norm > 0 else np.full(3, np.nan)


def _six(value, field: str) -> tuple:
    array = finite_array(value, field)
    if array.shape not in ((), (1,), (6,)):
        raise InputError(field, "must be one number or six (one per detector)", f"got shape {array.shape}")
    return tuple(float(v) for v in np.broadcast_to(array, (6,)))


def _sun_matrix(normals_B) -> np.ndarray:
    """``E`` (3, 6) with ``ŝ ∝ E I``: ``M⁻¹ n_i`` per detector, ``M = Σ_pairs a aᵀ`` over one normal of each pair.

    For detectors in opposite pairs ``Σ n_i I_i = Σ_pairs a (max(0, a·s) - max(0, -a·s)) = M s``, so ``E I = s``
    exactly for ideal detectors; with the default normals ``E`` is ``(I+x - I-x, I+y - I-y, I+z - I-z)``.
    """
    n = np.array(normals_B)
    M = n[0::2].T @ n[0::2]
    return np.linalg.solve(M, n.T)


_HALF_TURN_ARCSEC = 648000  # π rad


def _small_rotation(value, field: str) -> np.ndarray:
    """A star tracker's bias: a rotation vector in arcsec of at most half a turn."""
    bias = vector3(value, field)
    if np.abs(bias).max() > _HALF_TURN_ARCSEC or np.linalg.norm(bias) > _HALF_TURN_ARCSEC:  # no overflowing norm
        raise InputError(field, f"must be a rotation of at most half a turn (|bias| <= {_HALF_TURN_ARCSEC} arcsec)",
                         f"got {value!r}")
    return bias


class StarTracker(Sensor):
    """Attitude sensor: ``q_m = q ⊗ exp(β) ⊗ exp(δθ)`` with ``δθ ~ N(0, σ²)`` per sensor axis, blinded near the
    Sun and the Earth.

    ``noise_arcsec`` is one σ for all axes or three (cross-boresight,
    cross-boresight, about the boresight +z of the sensor frame);
    ``bias_arcsec`` a constant attitude bias ``β`` (a small rotation, sensor
    axes). Mounting: ``q_BS``, ``misalignment_rad``. ``sun_exclusion_deg``:
    no attitude while the angle between the boresight and the Sun (not
    hidden by the Earth) is below it; ``earth_exclusion_deg``: none while
    the angle between the boresight and the Earth's limb (from the orbit
    radius) is below it, or the boresight looks into the Earth. Both need a
    mission environment; None (default) is no cone. Faults: bias jumps of 3
    values, arcsec (added to ``β``). A star tracker has no scale factor.

    Parameters
    ----------
    rate_hz : float
        Sampling rate, Hz (> 0).
    noise_arcsec : float or array_like (3,), optional
        σ per sensor axis (cross-boresight, cross-boresight, about the boresight +z), arcsec.
    phase_s : float, optional
        Time of the first sample, s (default 0).
    name : str, optional
        Its name: the prefix of its telemetry columns (default ``"st"``).
    q_BS : array_like (4,), optional
        Nominal mounting, scalar first: rotates sensor-frame vectors into body axes (default identity).
    misalignment_rad : array_like (3,), optional
        The true mounting's small rotation from the nominal one, rad (sensor axes).
    faults : sequence of SensorFault, optional
        Time-tagged dropouts, stuck outputs and bias jumps (bias jumps of 3 values, arcsec).
    bias_arcsec : array_like (3,), optional
        Constant attitude bias, a small rotation in sensor axes, arcsec.
    sun_exclusion_deg, earth_exclusion_deg : float, optional
        Half-angles of the exclusion cones about the boresight, deg (None: no cone; a cone needs an environment).
    """

    axes = ("qw", "qx", "qy", "qz")

    def __init__(self, rate_hz: float, noise_arcsec=0.0, phase_s: float = 0.0, name: str = "st", *, q_BS=IDENTITY,
                 misalignment_rad=_NO_MISALIGNMENT, bias_arcsec=(0.0, 0.0, 0.0), sun_exclusion_deg=None,
                 earth_exclusion_deg=None, faults=()):
        super().__init__(name, rate_hz, phase_s)
        self.sigma_rad = per_axis(noise_arcsec, "noise_arcsec", allow_zero=True) * _ARCSEC
        if np.any(self.sigma_rad > math.pi):  # the errors are rotations: beyond a half-turn they overflow to NaN
            raise InputError("noise_arcsec", f"must be <= {_HALF_TURN_ARCSEC} on every axis (a 1-sigma of at most "
                             "half a turn)", f"got {noise_arcsec!r}")
        self._sigma = tuple(float(v) for v in self.sigma_rad)
        self.bias_rad = tuple(float(v) * _ARCSEC for v in _small_rotation(bias_arcsec, "bias_arcsec"))
        self.sun_exclusion_deg = _half_angle(sun_exclusion_deg, "sun_exclusion_deg")
        self.earth_exclusion_deg = _half_angle(earth_exclusion_deg, "earth_exclusion_deg")
        self.exclusion_rad = tuple(math.nan if a is None else math.radians(a)
                                   for a in (self.sun_exclusion_deg, self.earth_exclusion_deg))
        self.configure(q_BS, misalignment_rad, faults, 3,
                       "must have 3 values for a StarTracker (arcsec, a small rotation in its axes)", _ARCSEC)
        for k, fault in enumerate(self.faults):
            if fault.bias is not None:
                _small_rotation(fault.bias, f"faults[{k}].bias")
        self.plain_unless(self.bias_rad)

    @property
    def excludes(self) -> bool:
        """True when the tracker has a Sun or an Earth exclusion cone."""
        return self.sun_exclusion_deg is not None or self.earth_exclusion_deg is not None

    @property
    def reports_validity(self) -> bool:
        return self.excludes or super().reports_validity

    @property
    def draws(self) -> int:
        return 3 if any(self._sigma) else 0

    def prepare(self, mission):
        if self.excludes and mission.environment is None:
            field = "sun_exclusion_deg" if self.sun_exclusion_deg is not None else "earth_exclusion_deg"
            raise InputError(field, f"star tracker {self.name!r} needs a mission environment (the Sun and the orbit) "
                             "for its exclusion cones")

    sample_unit = Unit(sample_star_tracker, "sample_star_tracker", {})

    def fill_loop_row(self, parameters, bias, realism, faults) -> None:
        super().fill_loop_row(parameters, bias, realism, faults)
        parameters[STAR_SIGMA:STAR_SIGMA + 3] = self.sigma_rad
        parameters[STAR_SUN_EXCLUSION], parameters[STAR_EARTH_EXCLUSION] = self.exclusion_rad
        realism[REAL_OFFSET:REAL_OFFSET + 3] = self.bias_rad

    def truth(self, sc):
        return sc.state()[0]

    def measure(self, truth, extra_bias=(0.0, 0.0, 0.0)):
        """The mounted measurement of the attitude ``truth`` (``q_IB``), with ``extra_bias`` (rad) added to ``β``."""
        args = (truth, self._sigma, self.normals())
        if not self.plain:
            b = self.bias_rad
            args += (self.q_BS_true, self.q_BS, (b[0] + extra_bias[0], b[1] + extra_bias[1], b[2] + extra_bias[2]))
        if self._measure_entry is None:
            self._measure_entry = entry_point(star_tracker_measure if self.plain else star_tracker_sample, *args)
        return self._measure_entry(*args)

    def blinded(self, sc, q_IB) -> bool:
        """True when the true boresight lies inside an exclusion cone now."""
        if not self.excludes:
            return False
        k, f = table_cell(sc.env_t, sc.env._now)
        return star_tracker_blinded(q_IB, self.q_BS_true, lerp3(sc.env_v, k, f, SUN),
                                    lerp1(sc.env_v, k, f, P_SRP) > 0.0, lerp3(sc.env_v, k, f, R), *self.exclusion_rad)


def _half_angle(value, field: str):
    """None, or a half-angle in [0, 180) degrees."""
    if value is None:
        return None
    angle = real_number(value, field)
    if not 0.0 <= angle < 180.0:
        raise InputError(field, "must be in [0, 180) degrees (a cone's half-angle) or None", f"got {value!r}")
    return angle
