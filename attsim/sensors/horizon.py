"""An Earth-horizon sensor: the nadir direction in body axes.

An ideal horizon sensor (a static or scanning Earth sensor after its
processing) reports the unit vector toward the Earth's centre; here with an
optional white noise ``σ`` (rad) as a small random rotation of that vector
(:func:`~attsim.sensors.kernels.horizon_measure`), mounted in the body like
every built-in (``q_BS``, ``misalignment_rad``) and with faults (bias jumps
of a small rotation, rad, in its axes). The truth is the nadir of the
mission environment's orbit as tabulated for the run (interpolated linearly
between the table's rows, ``Environment(table_dt_s=)``), so a mission needs
an environment.
"""

from __future__ import annotations

import math

from .._core.fastcall import entry_point
from .._core.units import Unit
from .._core.validate import non_negative_scalar
from ..errors import InputError
from .base import IDENTITY, Sensor
from .kernels import horizon_measure, horizon_sample, nadir_body
from .loop import HORIZON_NOISE, sample_horizon

__all__ = ["HorizonSensor"]

# a 1-sigma rotation beyond half a turn is no sensor's noise (as for the star tracker)
MAX_NOISE_RAD = math.pi


class HorizonSensor(Sensor):
    """Earth-horizon sensor: the nadir direction ``n_B = -R_IBᵀ r̂`` (unit vector, body axes), each sample
    turned by a random rotation ``σ ν`` (``noise_rad`` σ, ``ν`` standard normals; the part along ``n`` turns
    nothing, so each of the two axes across the nadir has ``σ``).

    Needs a mission environment (the orbit). Mounting as in :mod:`attsim.sensors.base`.

    Parameters
    ----------
    rate_hz : float
        Sampling rate, Hz (> 0).
    noise_rad : float, optional
        σ of the random rotation of each sample, rad (default 0: ideal).
    phase_s : float, optional
        Time of the first sample, s (default 0).
    name : str, optional
        Its name: the prefix of its telemetry columns (default ``"horizon"``).
    q_BS : array_like (4,), optional
        Nominal mounting, scalar first: rotates sensor-frame vectors into body axes (default identity).
    misalignment_rad : array_like (3,), optional
        The true mounting's small rotation from the nominal one, rad (sensor axes).
    faults : sequence of SensorFault, optional
        Time-tagged dropouts, stuck outputs and bias jumps (bias jumps of 3 values: a small rotation, rad).
    """

    def __init__(self, rate_hz: float, noise_rad: float = 0.0, phase_s: float = 0.0, name: str = "horizon", *,
                 q_BS=IDENTITY, misalignment_rad=(0.0, 0.0, 0.0), faults=()):
        super().__init__(name, rate_hz, phase_s)
        self.noise_rad = non_negative_scalar(noise_rad, "noise_rad")
        if self.noise_rad > MAX_NOISE_RAD:
            raise InputError("noise_rad", "must be at most pi rad (a 1-sigma rotation of at most half a turn)",
                             f"got {noise_rad!r}")
        self.configure(q_BS, misalignment_rad, faults, 3,
                       "must have 3 values for a HorizonSensor (rad, a small rotation in its axes)")

    @property
    def draws(self) -> int:
        return 3 if self.noise_rad else 0

    def prepare(self, mission):
        if mission.environment is None:  # checked once, not at every sample
            raise InputError("environment", f"horizon sensor {self.name!r} needs a mission environment (the orbit)")

    def truth(self, sc):
        return nadir_body(sc.state()[0], sc.env_t, sc.env_v, sc.env._now)

    def measure(self, truth, extra_bias=(0.0, 0.0, 0.0)):
        """The mounted measurement of the body-axis nadir ``truth``, turned by ``extra_bias`` (rad, its axes)."""
        args = (truth, self.noise_rad, self.normals())
        if not self.plain:
            args += (self.q_BS_true, self.q_BS, extra_bias)
        if self._measure_entry is None:
            self._measure_entry = entry_point(horizon_measure if self.plain else horizon_sample, *args)
        return self._measure_entry(*args)

    # --- the compiled mission (attsim.sensors.loop) ---------------------------------------------------------

    sample_unit = Unit(sample_horizon, "sample_horizon", {})

    def loop_ready(self, mission) -> bool:
        return mission.environment is not None

    def fill_loop_row(self, parameters, bias, realism, faults) -> None:
        super().fill_loop_row(parameters, bias, realism, faults)
        parameters[HORIZON_NOISE] = self.noise_rad
