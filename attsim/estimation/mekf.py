"""Attitude estimators: the MEKF component.

:class:`MEKF` estimates the attitude ``q̂_IB`` and the gyro bias from a
rate gyro and any of a star tracker, a magnetometer and coarse sun sensors.
It runs one cycle per gyro sample (the gyro's rate and phase): it samples
the gyro, propagates the estimate and its covariance over the time since
the last cycle, then updates with each measurement sensor due at that
instant (each sensor at its own rate, on the gyro's grid of times). The
arithmetic is :mod:`attsim.estimation.kernels`'s, shared with the compiled mission loop.

Controllers read it through ``attitude_source=`` and ``rate_source=``: the
attitude ``q̂`` and the rate ``ω_m − β̂`` of its latest cycle. A controller
cycle at the same instant as an estimator cycle always sees that cycle's
result (the controller brings the estimator up to date first), so the
order of same-time events does not matter.

The reference vectors of the updates are the mission's own field and Sun
models (the environment table), i.e. a perfect on-board model; the
magnetometer's constant bias is not estimated, nor are the sensors'
misalignments and scale factors (the filter takes the nominal mounting, as
flight software would). A sample without output (NaN: a blinded star
tracker, a dropout) is skipped, neither used nor an outlier; a gyro without
output is replaced by its last good reading (:func:`~attsim.estimation.kernels.mekf_cycle`).
"""

from __future__ import annotations

import math

import numpy as np

from .._core.validate import finite_array, per_axis, positive_scalar, unit_quaternion
from ..engine.component import LazyCycle
from ..errors import EstimatorDivergenceError, InputError
from ..telemetry.schema import ESTIMATOR_SUFFIXES
from .loop import PART
from .kernels import (DIVERGED, MEASUREMENTS, NIS_GATE_3DOF, P_GATE, P_SIGMA_ATTITUDE0, P_SIGMA_MAG, P_SIGMA_ST,
                      P_Q_BS_ST, P_SIGMA_SUN, P_SIGMA_U, P_SIGMA_V, PARAMETERS, mekf_cycle, new_memory)
from ..sensors.devices import Gyro, Magnetometer, StarTracker, SunSensor

__all__ = ["MEKF"]

_GRID_TOLERANCE = 1e-9  # relative: a sensor's times must fall on the estimator's cycle times
_MAX_MEASUREMENT_SIGMA = 1e100  # a variance of 1e200 leaves products in the update far from overflow


def _on_grid(sensor, period_s: float, phase_s: float, field: str) -> tuple[int, int]:
    """``(every, offset)``: the sensor samples at estimator cycles ``offset + j every``; refused off the grid."""
    ratio = sensor.period_s / period_s
    every = round(ratio)
    shift = (sensor.phase_s - phase_s) / period_s
    offset = round(shift)
    if every < 1 or abs(ratio - every) > _GRID_TOLERANCE * ratio \
            or abs(shift - offset) > _GRID_TOLERANCE * max(1, shift) or offset < 0:
        raise InputError(field, "must sample on the gyro's times (its period a whole multiple of the gyro's, its phase "
                         "on the gyro's grid)", f"{sensor.name!r}: period {sensor.period_s:g} s, phase "
                         f"{sensor.phase_s:g} s; gyro period {period_s:g} s, phase {phase_s:g} s")
    return int(every), int(offset)


def _half_turn(angle_rad: float, field: str, rule: str, given) -> None:
    """Refuse a filter noise whose angle exceeds half a turn: its square would leave the covariance meaningless
    (or overflow it: NaN estimates)."""
    if angle_rad > math.pi:
        raise InputError(field, rule, f"got {given!r}")


def _representable(sigma: float, field: str, given) -> None:
    """Refuse a measurement noise whose variance, and the innovation covariance built on it, would overflow."""
    if sigma > _MAX_MEASUREMENT_SIGMA:
        raise InputError(field, f"must be <= {_MAX_MEASUREMENT_SIGMA:g} (its square enters the filter's "
                         "innovation covariance and must stay a finite float)", f"got {given!r}")


class MEKF(LazyCycle):
    """Multiplicative extended Kalman filter: attitude and gyro bias (see :mod:`attsim.estimation.kernels`).

    Parameters
    ----------
    gyro : Gyro
        Propagates the estimate; the filter cycles at its rate.
    star_tracker, magnetometer, sun_sensor : optional
        Attitude measurements (at least one), each at its own rate on the
        gyro's grid of times.
    q0 : array_like, optional
        Initial estimate ``q̂_IB``. By default the first star-tracker sample
        (then the tracker must sample at the first cycle) or, without a
        star tracker, TRIAD on the first cycle that measures both the field
        and the Sun (the more precise of the two matched exactly; the two at
        least 5 deg apart). Until then the estimate is NaN, and a controller
        reading it holds its commands.
    sigma_attitude0_deg, sigma_bias0_rad_s : float
        Initial 1σ uncertainty per axis of the attitude and the bias.
    gyro_arw_rad_sqrt_s, gyro_bias_rw_rad_s_sqrt_s : float, optional
        The filter's gyro noise (σ_v, σ_u); default: the gyro's own. σ_v
        must be > 0 (a noise-free gyro needs it given).
    star_tracker_noise_arcsec, magnetometer_noise_T, sun_noise : optional
        The filter's measurement noise (one or three values for the tracker,
        about the tracker's own axes, as its ``noise_arcsec``: the filter
        turns them into body axes through its mounting ``q_BS``; the field's
        σ in T; the Sun direction's σ per axis); default: the
        sensor's own (√2 × the detector noise for the Sun direction, a
        difference of two detectors). Must be > 0.
    gate : float
        Normalised-innovation-squared gate: a measurement beyond it is
        rejected as an outlier and logged (default: the 99.9 % point of
        χ²(3)); after five rejections in a row of one kind the next is taken
        whatever its innovation, so a drifted estimate cannot lock the
        measurements out.
    name : str, optional
        Its name: the prefix of its telemetry columns (default ``"mekf"``).
    """

    loop_part = PART  # the compiled mission (attsim.estimation.loop)

    def __init__(self, gyro, star_tracker=None, magnetometer=None, sun_sensor=None, q0=None,
                 sigma_attitude0_deg: float = 5.0, sigma_bias0_rad_s: float = 1e-3, gyro_arw_rad_sqrt_s=None,
                 gyro_bias_rw_rad_s_sqrt_s=None, star_tracker_noise_arcsec=None, magnetometer_noise_T=None,
                 sun_noise=None, gate: float = NIS_GATE_3DOF, name: str = "mekf"):
        self.name = name
        for sensor, kind, field in ((gyro, Gyro, "gyro"), (star_tracker, StarTracker, "star_tracker"),
                                    (magnetometer, Magnetometer, "magnetometer"),
                                    (sun_sensor, SunSensor, "sun_sensor")):
            if sensor is not None and not isinstance(sensor, kind):
                raise InputError(field, f"must be an attsim.{kind.__name__}", f"got {type(sensor).__name__}")
        if gyro is None:
            raise InputError("gyro", "is needed: the MEKF propagates with the gyro")
        if star_tracker is None and magnetometer is None and sun_sensor is None:
            raise InputError("measurements", "an estimator needs at least one attitude measurement "
                             "(star_tracker, magnetometer or sun_sensor)")
        if q0 is None and star_tracker is None and (magnetometer is None or sun_sensor is None):
            raise InputError("q0", "is needed without a star tracker unless a magnetometer and a sun sensor give "
                             "the filter its first attitude (TRIAD)")
        self.gyro, self.star_tracker, self.magnetometer, self.sun_sensor = gyro, star_tracker, magnetometer, sun_sensor
        self.period_s, self.phase_s = gyro.period_s, gyro.phase_s
        self.q0 = None if q0 is None else unit_quaternion(q0, "q0")
        self.sigma_attitude0_rad = math.radians(positive_scalar(sigma_attitude0_deg, "sigma_attitude0_deg"))
        _half_turn(self.sigma_attitude0_rad, "sigma_attitude0_deg", "must be <= 180 (an attitude 1-sigma of at most "
                   "half a turn: the filter's error state is a small rotation)", sigma_attitude0_deg)
        self.sigma_bias0_rad_s = positive_scalar(sigma_bias0_rad_s, "sigma_bias0_rad_s")
        dt = gyro.period_s
        _half_turn(self.sigma_bias0_rad_s * dt, "sigma_bias0_rad_s", "must turn the estimate at most half a turn "
                   f"over one gyro period (<= pi / {dt:g} s)", sigma_bias0_rad_s)
        arw = gyro.arw if gyro_arw_rad_sqrt_s is None else gyro_arw_rad_sqrt_s
        rw = gyro.bias_rw if gyro_bias_rw_rad_s_sqrt_s is None else gyro_bias_rw_rad_s_sqrt_s
        params = np.zeros(len(PARAMETERS))
        params[P_Q_BS_ST] = 1.0  # an identity mounting until a star tracker gives its own
        params[P_SIGMA_V] = float(finite_array(arw, "gyro_arw_rad_sqrt_s", ()))
        params[P_SIGMA_U] = float(finite_array(rw, "gyro_bias_rw_rad_s_sqrt_s", ()))
        if params[P_SIGMA_V] < 0 or params[P_SIGMA_U] < 0:
            raise InputError("gyro_arw_rad_sqrt_s", "and gyro_bias_rw_rad_s_sqrt_s must be >= 0")
        # the covariance a gyro period adds (σ_v² Δt + σ_u² Δt³/3) must stay a rotation the filter can represent
        _half_turn(params[P_SIGMA_V] * math.sqrt(dt), "gyro_arw_rad_sqrt_s", "must add at most half a turn of "
                   f"attitude uncertainty over one gyro period (sigma_v sqrt(dt) <= pi, dt = {dt:g} s)", arw)
        _half_turn(params[P_SIGMA_U] * dt * math.sqrt(dt), "gyro_bias_rw_rad_s_sqrt_s", "must add at most half a "
                   f"turn of attitude uncertainty over one gyro period (sigma_u dt^1.5 <= pi, dt = {dt:g} s)", rw)
        if params[P_SIGMA_V] == 0:  # Q = 0: P collapses below the propagation's own error, good measurements become
            # outliers
            raise InputError("gyro_arw_rad_sqrt_s", "must be > 0 (the gyro is noise-free: give the filter its "
                             "angle random walk, which also covers the propagation's discretisation)",
                             f"got {arw!r}")
        if star_tracker is not None:
            sigma = star_tracker.sigma_rad if star_tracker_noise_arcsec is None else \
                per_axis(star_tracker_noise_arcsec, "star_tracker_noise_arcsec", allow_zero=True) * math.pi / 648000.0
            params[P_SIGMA_ST:P_SIGMA_ST + 3] = self._positive(sigma, "star_tracker_noise_arcsec")
            params[P_Q_BS_ST:P_Q_BS_ST + 4] = star_tracker.q_BS  # its noise is about its own axes
            _half_turn(float(np.max(params[P_SIGMA_ST:P_SIGMA_ST + 3])), "star_tracker_noise_arcsec",
                       "must be <= 648000 on every axis (a 1-sigma of at most half a turn)", star_tracker_noise_arcsec)
        if magnetometer is not None:
            sigma = magnetometer.noise if magnetometer_noise_T is None else magnetometer_noise_T
            params[P_SIGMA_MAG] = self._positive(sigma, "magnetometer_noise_T")
            _representable(params[P_SIGMA_MAG], "magnetometer_noise_T", sigma)
        if sun_sensor is not None:
            sigma = math.sqrt(2.0) * sun_sensor.noise if sun_noise is None else sun_noise
            params[P_SIGMA_SUN] = self._positive(sigma, "sun_noise")
            _representable(params[P_SIGMA_SUN], "sun_noise", sigma)
        params[P_GATE] = positive_scalar(gate, "gate")
        params[P_SIGMA_ATTITUDE0] = self.sigma_attitude0_rad
        self.parameters = params

    @staticmethod
    def _positive(value, field: str):
        array = finite_array(value, field)
        if np.any(array <= 0):
            raise InputError(field, "must be > 0 (the sensor is noise-free: give the filter its measurement noise)",
                             f"got {value!r}")
        return array

    @property
    def measurement_sensors(self) -> tuple:
        """The star tracker, magnetometer and sun sensor (None where absent), in :data:`MEASUREMENTS` order."""
        return self.star_tracker, self.magnetometer, self.sun_sensor

    def prepare(self, mission):
        names = {c.name: c for c in mission.components}
        for sensor in (self.gyro, *self.measurement_sensors):
            if sensor is None:
                continue
            if names.get(sensor.name) is not sensor:
                raise InputError("sensors", f"sensor {sensor.name!r} of estimator {self.name!r} is not in the mission")
            sensor.add_reader(self)
        self.grid = [(1, 0) if s is None else _on_grid(s, self.period_s, self.phase_s, field)
                     for s, field in zip(self.measurement_sensors, MEASUREMENTS)]
        if self.q0 is None and self.star_tracker is not None and self.grid[0][1] != 0:
            raise InputError("star_tracker", "must sample at the estimator's first cycle when q0 is not given")
        if self.q0 is None and self.star_tracker is None:
            (every_b, offset_b), (every_s, offset_s) = self.grid[1], self.grid[2]
            if (offset_b - offset_s) % math.gcd(every_b, every_s):
                raise InputError("sun_sensor", "must sample at some of the magnetometer's times when q0 is not given "
                                 "(the filter starts from TRIAD on one cycle's field and Sun)",
                                 f"{self.sun_sensor.name!r} and {self.magnetometer.name!r} never sample together")
        if self.sun_sensor is not None and self.sun_sensor.sun_inertial is not None:
            raise InputError("sun_sensor", "an estimator's sun sensor must use the mission environment's Sun")
        if self.magnetometer is not None and not mission.has_field:  # the reference would be zero: updates from noise
            raise InputError("field", f"estimator {self.name!r} updates with magnetometer {self.magnetometer.name!r} "
                             "against the mission's field: give the mission field= or an environment= with a field "
                             "model")
        if self.sun_sensor is not None and mission.environment is None:
            raise InputError("environment", f"estimator {self.name!r} uses the Sun: the mission needs an environment")

    def start(self, sc):
        self._sc = sc
        # no estimate (NaN) until the first star-tracker sample, or TRIAD on the field and the Sun, gives one
        self.q = np.array(self.q0 if self.q0 is not None else (np.nan,) * 4, dtype=float)
        self.bias_rad_s = np.zeros(3)
        self.P = np.zeros((6, 6))
        self.P[:3, :3] = np.eye(3) * self.sigma_attitude0_rad**2
        self.P[3:, 3:] = np.eye(3) * self.sigma_bias0_rad_s**2
        self.memory = new_memory(self.q0 is not None)
        self.nis = np.full(3, np.nan)
        self.w_est = np.full(3, np.nan)
        self._sun_matrix = self.sun_sensor.sun_matrix.ravel() if self.sun_sensor is not None else np.zeros(18)
        self.reset_cycles()

    def cycle(self, sc, t: float, k: int) -> None:
        """Cycle ``k`` at ``t``: sample the gyro and the measurements due, run ``kernels.mekf_cycle``."""
        w_meas = self.gyro.sample(sc)
        samples = []
        for (every, offset), sensor in zip(self.grid, self.measurement_sensors):
            due = sensor is not None and k >= offset and (k - offset) % every == 0
            samples.append(sensor.sample(sc) if due else None)
        st, mag, css = samples
        zeros3 = np.zeros(3)
        e = sc.environment_now() if (mag is not None or css is not None) else None
        rejected = mekf_cycle(self.q, self.bias_rad_s, self.P, self.memory, t, w_meas,
                              st is not None, st if st is not None else np.zeros(4),
                              mag is not None, mag if mag is not None else zeros3,
                              e["B_I"] if mag is not None else zeros3,
                              css is not None, css if css is not None else np.zeros(6), self._sun_matrix,
                              e["sun"] if css is not None else zeros3, self.parameters, self.nis)
        if rejected == DIVERGED:
            raise self.diverged(t)
        if rejected:
            for label, nis, count in zip(MEASUREMENTS, self.nis, self.memory[5:8]):
                if nis > self.parameters[P_GATE] and count > 0:
                    sc._log(t, "outlier", estimator=self.name, measurement=label, nis=float(nis))
        self.w_est = self.memory[2:5] - self.bias_rad_s  # the last good gyro reading (this one when it has output)

    def diverged(self, t_s: float) -> EstimatorDivergenceError:
        """The error both paths raise when this filter's state stops being finite at ``t_s``."""
        return EstimatorDivergenceError(self.name, self.gyro.name, t_s)

    def attitude(self) -> tuple:
        """``q̂_IB`` of the latest cycle."""
        return tuple(float(v) for v in self.q)

    def rate(self) -> tuple:
        """``ω_m − β̂`` (rad/s, body axes) of the latest cycle."""
        return tuple(float(v) for v in self.w_est)

    def columns(self):
        return [f"{self.name}_{c}" for c in ESTIMATOR_SUFFIXES]

    def values(self, sc):
        sigma3 = 3.0 * np.sqrt(np.diag(self.P))
        return [*self.q, *self.bias_rad_s, *sigma3, *self.nis, *self.gyro.bias]
