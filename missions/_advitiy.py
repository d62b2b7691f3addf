"""Advitiy, the 1U CubeSat of IIT Bombay's student satellite programme.

Shared by the advitiy_* mission scripts. Parameters from the Advitiy team's
published model: 0.1 m cube of 0.792 kg; inertia tensor with its products
of inertia; centre of pressure (1.23, -1.23, -2.44) mm from the centre of
mass; a sun-synchronous orbit near 700 km (i = 98.1258 deg, e = 0.0032873,
14.62910114 rev/day, epoch 2018-04-03 12:50:19 UTC; node, perigee and mean
anomaly are not published and are set to zero); three air-core
magnetorquers of 0.068 A m^2 per axis; a 2 s control period.
"""

from __future__ import annotations

import numpy as np

import attsim
from attsim.environment import Environment, Face, TLEOrbit, make_tle

SIDE_M = 0.1
MASS_KG = 0.792
# the tensor's off-diagonal entries as published (J_xy = 4.37e-6 kg m^2 ...)
INERTIA_KG_M2 = np.array([
    [1.52529e-3, 4.37e-6, 1.18e-6],
    [4.37e-6, 1.45111e-3, -4.08e-6],
    [1.18e-6, -4.08e-6, 1.476e-3],
])
CP_OFFSET_M = (1.23e-3, -1.23e-3, -2.44e-3)
DIPOLE_MAX_AM2 = 0.068
CONTROL_PERIOD_S = 2.0
TLE = make_tle(inclination_deg=98.1258, eccentricity=0.0032873, mean_motion_rev_day=14.62910114,
               epoch="2018-04-03T12:50:19", satnum=43131, international_designator="18004A")


def orbit(mean_anomaly_deg: float = 0.0) -> TLEOrbit:
    """The published orbit; ``mean_anomaly_deg`` places the satellite elsewhere on it at the epoch."""
    if mean_anomaly_deg == 0.0:
        return TLEOrbit(*TLE)
    return TLEOrbit(*make_tle(inclination_deg=98.1258, eccentricity=0.0032873, mean_motion_rev_day=14.62910114,
                              epoch="2018-04-03T12:50:19", mean_anomaly_deg=float(mean_anomaly_deg) % 360.0,
                              satnum=43131, international_designator="18004A"))


def environment(field: str = "igrf", disturbances: bool = True, gravity_gradient: bool | None = None,
                mean_anomaly_deg: float = 0.0) -> Environment:
    """IGRF by default; all disturbances on (gravity gradient, drag, solar pressure, residual dipole)."""
    gg = disturbances if gravity_gradient is None else gravity_gradient
    return Environment(
        orbit(mean_anomaly_deg), field=field, atmosphere="exponential", shadow="conical", gravity_gradient=gg,
        aerodynamic=disturbances, solar_pressure=disturbances,
        residual_dipole_Am2=(1e-4, 1e-4, 1e-4) if disturbances else (0.0, 0.0, 0.0),
        faces=Face.cube(SIDE_M, CP_OFFSET_M, drag_coefficient=2.2, specular=0.1, diffuse=0.2), table_dt_s=5.0,
    )


def orbit_frame_attitude(env: Environment) -> np.ndarray:
    """``q_IO`` at the epoch: a body aligned with the orbit frame."""
    from attsim.environment import lvlh_quaternion

    r, v = env.orbit.state_eci([0.0])
    return lvlh_quaternion(r[0], v[0])


def add_magnetic_hardware(mission: attsim.Mission, noise_T: float = 5e-8, bias_T=(0.0, 0.0, 0.0),
                          dipole_scale: float = 1.0):
    """Magnetometer (1 Hz... sampled by the controller every control period) and the magnetorquers.

    ``bias_T`` is the magnetometer's residual bias; ``dipole_scale`` multiplies the torquers' maximum dipole.
    """
    mag = mission.add(attsim.Magnetometer(rate_hz=1.0 / CONTROL_PERIOD_S, noise_T=noise_T, bias_T=bias_T))
    mtq = mission.add(attsim.Magnetorquer(dipole_max_Am2=DIPOLE_MAX_AM2 * dipole_scale, saturation="scale"))
    return mag, mtq


def scaled_inertia(inertia_scale) -> np.ndarray:
    """``S^1/2 J S^1/2``: each moment times s_i, products times sqrt(s_i s_j); symmetric positive definite."""
    scale = np.sqrt(np.asarray(inertia_scale, dtype=float))
    return scale[:, None] * INERTIA_KG_M2 * scale[None, :]


def rate_norm(tel) -> np.ndarray:
    return np.linalg.norm(tel.df[["wx", "wy", "wz"]].to_numpy(), axis=1)


def time_to_stay_below(t, values, bound) -> float:
    """First time after which ``values`` stay below ``bound`` (inf if they end above)."""
    above = np.nonzero(values >= bound)[0]
    if above.size == 0:
        return float(t[0])
    if above[-1] == len(values) - 1:
        return float("inf")
    return float(t[above[-1] + 1])
