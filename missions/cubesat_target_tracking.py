"""3U CubeSat tracking a ground station: four-wheel pyramid, star tracker + gyro MEKF, magnetorquer unloading.

A 4 kg 3U CubeSat in a 550 km sun-synchronous orbit points its +z axis
(payload) at the IIT Bombay ground station (19.13 N, 72.92 E) whenever the
station is more than 10 deg above the horizon and holds nadir otherwise,
over three orbits with gravity gradient, drag, solar pressure and a residual
dipole. Attitude and rate come from an MEKF (10 Hz gyro with angle and rate
random walk and a bias, 2 Hz star tracker at 5/5/40 arcsec); a quaternion
PID with the reference rate fed forward drives a four-wheel pyramid at
10 Hz (torques scaled to the motor limits), and magnetorquers unload the
wheels (their torque fed forward into the wheel law, so that unloading does
not disturb the pointing). The wheels have Coulomb, Stribeck and viscous friction. The null
space biases them to +100, -100, +100, -100 rad/s: a bias with no body
momentum (the pyramid's null space; a common speed would be momentum the
unloading removes), which keeps them off most zero crossings and makes
equal friction levels cancel on the body. What is left — unequal friction
from wheel to wheel, about 5e-5 N m on the body at the dispersion's
extremes — would leave a PD law a standing error of 2 tau / k_p (0.15 deg
with wheels alternately at the top and bottom of the dispersion); the
integral term (k_i, with its anti-windup limit) removes it. The orbit is
placed so that the first pass goes nearly overhead.

Success: pointing error during the passes below 0.1 deg once settled
(after the first 120 s of each pass), both against the controller's
reference and as the angle between +z and the line of sight to the
station computed here from the orbit (so a wrong target cannot pass), no
wheel above half its speed limit, the wheels' net momentum drained by the
unloading after the first orbit, and the MEKF's attitude error below
0.05 deg and inside its 3-sigma bounds.
"""

from __future__ import annotations

import math
import sys

import numpy as np

import attsim
from attsim import inertia
from attsim.allocation import pyramid_axes
from attsim.checks import boolean, finite_array, non_negative_scalar, vector3
from attsim.environment import Environment, Face, KeplerOrbit
from attsim.dispersions import Normal, Scaled, Uniform
from attsim.environment.frames import Epoch, geodetic_to_ecef, gmst_rad
from attsim.guidance.targets import GroundTarget
from attsim import Requirement, Window

STATION_DEG = (19.13, 72.92)  # IIT Bombay, Powai
STATION_ALT_M = 50.0
MIN_ELEVATION_DEG = 10.0
EPOCH = "2025-06-21T06:00:00"
ALTITUDE_KM, INCLINATION_DEG = 550.0, 97.6
FIRST_PASS_S = 1500.0  # the orbit is placed over the station at this time
BUS = inertia.CompositeBody([inertia.Part(inertia.SolidCuboid(4.0, (0.1, 0.1, 0.34)))])
# a 15 mN m s CubeSat reaction wheel (2.4e-5 kg m^2 at 6,000 rpm, the class of Blue Canyon's RWp015), 1 mN m motor
WHEEL_INERTIA_KG_M2, WHEEL_MAX_TORQUE_NM, WHEEL_MAX_SPEED_RAD_S = 2.4e-5, 1e-3, 630.0
# alternating signs: the bias lies in the pyramid's null space (attsim.allocation), so it holds no body momentum
WHEEL_SPEED_BIAS_RAD_S = (100.0, -100.0, 100.0, -100.0)
# Friction. No friction figure is published for a wheel of this class (Blue Canyon's RWp015 data sheet gives
# momentum, torque and mass); Basilisk's rwFactory takes 5e-5 N m Coulomb for its BCT_RWP015, marked as an
# estimate. The nominal here is 1e-5 N m Coulomb and 2e-8 N m s/rad viscous (1.3e-5 N m at the speed limit; a
# coast-down from 6,000 rpm in 16 minutes), a breakaway twice the Coulomb level falling to it over 1 rad/s
# (Stribeck); the campaign spreads each wheel's Coulomb level up to Basilisk's estimate.
WHEEL_COULOMB_FRICTION_NM = (1e-5,) * 4
WHEEL_BREAKAWAY_RATIO, WHEEL_STRIBECK_SPEED_RAD_S, WHEEL_VISCOUS_FRICTION_NM_S_RAD = 2.0, 1.0, 2e-8
# PID gains. k_i well inside the Routh bound k_d k_p / J_max = 0.056 of the linearised axis (integral time
# k_p / k_i = 8 s); the limit lets k_i z carry 2.5e-4 N m per axis (a quarter of a motor's torque), more than
# the 2e-4 N m four wheels at the top of the dispersion could put on the body
KP, KD, KI, INTEGRAL_LIMIT_RAD_S = 4e-2, 6e-2, 5e-3, 0.05
# of one wheel's capacity, after the first orbit: 0.003 with unloading and 0.011 without (the nominal dipole, a
# slow build-up); with a 1e-2 A m^2 residual dipole 0.016 and 0.063
NET_MOMENTUM_MAX = 0.05


def orbit_over_station() -> KeplerOrbit:
    """A circular orbit whose ascending pass is over the station at ``FIRST_PASS_S``.

    The station's direction in ECI at that time (declination δ, right
    ascension α) fixes the argument of latitude ``u = asin(sin δ / sin i)`` and
    the node ``Ω = α − atan2(cos i sin u, cos u)`` (J2's drift over the
    minutes before the pass is negligible).
    """
    lat, lon = (math.radians(v) for v in STATION_DEG)
    epoch = Epoch(EPOCH)
    s_ecef = geodetic_to_ecef(lat, lon, STATION_ALT_M)
    angle = float(gmst_rad(epoch.jd_at(FIRST_PASS_S)))
    c, s = math.cos(angle), math.sin(angle)
    x, y, z = c * s_ecef[0] - s * s_ecef[1], s * s_ecef[0] + c * s_ecef[1], s_ecef[2]
    dec, ra = math.asin(z / math.sqrt(x * x + y * y + z * z)), math.atan2(y, x)
    inc = math.radians(INCLINATION_DEG)
    u = math.asin(math.sin(dec) / math.sin(inc))
    raan = ra - math.atan2(math.cos(inc) * math.sin(u), math.cos(u))
    provisional = KeplerOrbit.circular(ALTITUDE_KM, INCLINATION_DEG, epoch=EPOCH)
    u0 = u - provisional.mean_motion_rad_s * FIRST_PASS_S
    return KeplerOrbit.circular(ALTITUDE_KM, INCLINATION_DEG, raan_deg=math.degrees(raan),
                                mean_anomaly_deg=math.degrees(u0), epoch=EPOCH)


OMEGA0_RAD_S = (0.0, -0.0011, 0.0)
GYRO_BIAS_RAD_S = (3e-4, -2e-4, 1e-4)
ARCSEC_RAD = math.pi / 648000.0


def dispersions():
    """What integration, calibration and the hand-over from the previous mode leave open (attsim campaign)."""
    return {
        # the rate left by the previous mode's controller: 5e-4 rad/s (0.03 deg/s) per axis, 1 sigma
        "omega0_rad_s": Normal(list(OMEGA0_RAD_S), [5e-4, 5e-4, 5e-4]),
        # CAD inertia of an integrated 3U (harness, batteries, payload): 3 % per element, 1 sigma
        "inertia_kg_m2": Scaled(BUS.inertia_kg_m2, 0.03),
        # a MEMS-class gyro's turn-on bias around the nominal: 1e-4 rad/s per axis, 1 sigma
        "gyro_bias_rad_s": Normal(list(GYRO_BIAS_RAD_S), [1e-4, 1e-4, 1e-4]),
        # star-tracker to body alignment after on-orbit calibration: 10 arcsec per axis, 1 sigma (ground
        # calibration alone leaves 30-60 arcsec; the filter knows only the nominal mounting, so what is left is an
        # attitude error its covariance does not cover)
        "tracker_misalignment_rad": Normal([0.0, 0.0, 0.0], [10 * ARCSEC_RAD] * 3),
        # the bus's residual magnetic dipole, unmeasured: 2e-3 A m^2 per axis, 1 sigma
        "residual_dipole_Am2": Normal([2e-3, -1e-3, 1e-3], [2e-3, 2e-3, 2e-3]),
        # each wheel's Coulomb friction (lubricant, temperature, run-in; unmeasured): uniform from half the
        # nominal to Basilisk's 5e-5 N m estimate for the BCT_RWP015, wheel by wheel (the breakaway level follows)
        "wheel_coulomb_friction_Nm": Uniform([5e-6] * 4, [5e-5] * 4),
    }


def build(out_dir=None, omega0_rad_s=OMEGA0_RAD_S, inertia_kg_m2=None, gyro_bias_rad_s=GYRO_BIAS_RAD_S,
          tracker_misalignment_rad=(0.0, 0.0, 0.0), residual_dipole_Am2=(2e-3, -1e-3, 1e-3),
          wheel_coulomb_friction_Nm=WHEEL_COULOMB_FRICTION_NM, unloading: bool = True,
          feedforward: bool = True) -> attsim.Mission:
    """The mission; ``unloading=False`` leaves the magnetorquers off (what the momentum criterion must catch),
    ``feedforward=False`` leaves their torque out of the wheel law (a disturbance to the pointing while they unload,
    which ``tools/study_feedforward.py`` shows)."""
    # each parameter checked under its own name (a campaign draws them; a user may pass anything)
    omega0_rad_s = vector3(omega0_rad_s, "omega0_rad_s")
    if inertia_kg_m2 is not None:
        inertia_kg_m2 = inertia.check_inertia(inertia_kg_m2, field_name="inertia_kg_m2").matrix_kg_m2
    gyro_bias_rad_s = vector3(gyro_bias_rad_s, "gyro_bias_rad_s")
    tracker_misalignment_rad = vector3(tracker_misalignment_rad, "tracker_misalignment_rad")
    residual_dipole_Am2 = vector3(residual_dipole_Am2, "residual_dipole_Am2")
    wheel_coulomb_friction_Nm = [non_negative_scalar(value, f"wheel_coulomb_friction_Nm[{k}]") for k, value in
                                 enumerate(finite_array(wheel_coulomb_friction_Nm, "wheel_coulomb_friction_Nm", (4,)))]
    unloading = boolean(unloading, "unloading")
    fed = boolean(feedforward, "feedforward") and unloading
    env = Environment(orbit_over_station(), field="dipole", faces=Face.cube(0.1, (1e-3, -1e-3, 5e-3)),
                      residual_dipole_Am2=residual_dipole_Am2)
    body = BUS if inertia_kg_m2 is None else inertia_kg_m2
    mission = attsim.Mission("cubesat_target_tracking", body, omega0=omega0_rad_s, q0=(1.0, 0.0, 0.0, 0.0),
                             duration=3 * env.orbit.period_s, max_step=0.1, telemetry_dt=2.0, seed=7,
                             environment=env, out_dir=out_dir, description=__doc__.splitlines()[0])
    wheels = [mission.add(attsim.ReactionWheel(
        f"rw{k}", axis, WHEEL_INERTIA_KG_M2, WHEEL_MAX_TORQUE_NM, WHEEL_MAX_SPEED_RAD_S,
        speed0_rad_s=speed0, coulomb_friction_Nm=coulomb,
        static_friction_Nm=WHEEL_BREAKAWAY_RATIO * coulomb,
        stribeck_speed_rad_s=WHEEL_STRIBECK_SPEED_RAD_S if coulomb > 0.0 else None,
        viscous_friction_Nm_s_rad=WHEEL_VISCOUS_FRICTION_NM_S_RAD))
        for k, (axis, coulomb, speed0) in enumerate(zip(pyramid_axes(4), wheel_coulomb_friction_Nm,
                                                        WHEEL_SPEED_BIAS_RAD_S))]
    gyro = mission.add(attsim.Gyro(10.0, arw_rad_sqrt_s=2e-5, bias_rad_s=gyro_bias_rad_s,
                                   bias_rw_rad_s_sqrt_s=1e-7))
    tracker = mission.add(attsim.StarTracker(2.0, noise_arcsec=(5.0, 5.0, 40.0),
                                             misalignment_rad=tracker_misalignment_rad))
    mag = mission.add(attsim.Magnetometer(1.0, noise_T=5e-8, name="mag"))
    mtq = mission.add(attsim.Magnetorquer(0.2))
    mekf = mission.add(attsim.MEKF(gyro, star_tracker=tracker, sigma_attitude0_deg=1.0, sigma_bias0_rad_s=1e-3))
    target = GroundTarget(*STATION_DEG, STATION_ALT_M, body_axis=(0.0, 0.0, 1.0), min_elevation_deg=MIN_ELEVATION_DEG)
    if unloading:  # before the wheel law: it feeds forward the dipole decided at the same instant
        mission.add(attsim.MomentumUnloading(mag, mtq, gain_per_s=0.002, period_s=1.0))
    mission.add(attsim.QuaternionPD(kp=KP, kd=KD, period_s=0.1, wheels=wheels, target=target,
                                    attitude_source=mekf, rate_source=mekf, null_space_gain_Nm_s=1e-5,
                                    wheel_speed_target_rad_s=WHEEL_SPEED_BIAS_RAD_S, ki=KI,
                                    integral_limit_rad_s=INTEGRAL_LIMIT_RAD_S, magnetometer=mag if fed else None,
                                    magnetorquer_feedforward=mtq if fed else None))
    return mission


def passes(tel) -> list[tuple[float, float]]:
    """The intervals (s) when the station is above the minimum elevation, from the telemetry's own orbit."""
    env = Environment(orbit_over_station(), field=None)
    t = tel.df.index.to_numpy()
    r, _ = env.orbit.state_eci(t)
    target = GroundTarget(*STATION_DEG, STATION_ALT_M, min_elevation_deg=MIN_ELEVATION_DEG)
    visible = target.visible(r, gmst_rad(env.epoch.jd_at(t)))
    edges = np.flatnonzero(np.diff(visible.astype(int))) + 1
    bounds = np.concatenate([[0] if visible[0] else [], edges, [len(t)] if visible[-1] else []]).astype(int)
    return [(float(t[a]), float(t[b - 1])) for a, b in zip(bounds[::2], bounds[1::2])]


def line_of_sight_error_deg(tel) -> np.ndarray:
    """Angle (deg) between the body's +z and the line of sight to the station, from the telemetry's own orbit.

    Independent of the guidance target: the station's ECEF position turned
    into ECI by the sidereal angle, minus the satellite's position.
    """
    from attsim import rotations

    env = Environment(orbit_over_station(), field=None)
    t = tel.df.index.to_numpy()
    r, _ = env.orbit.state_eci(t)
    angle = gmst_rad(env.epoch.jd_at(t))
    s = geodetic_to_ecef(*(math.radians(v) for v in STATION_DEG), STATION_ALT_M)
    station = np.stack([np.cos(angle) * s[0] - np.sin(angle) * s[1], np.sin(angle) * s[0] + np.cos(angle) * s[1],
                        np.full_like(angle, s[2])], axis=-1)
    sight = station - r
    sight /= np.linalg.norm(sight, axis=-1, keepdims=True)
    boresight = rotations.quat_rotate(tel.df[["qw", "qx", "qy", "qz"]].to_numpy(), np.array([0.0, 0.0, 1.0]))
    return np.degrees(np.arccos(np.clip(np.sum(boresight * sight, axis=-1), -1.0, 1.0)))


def criteria(tel):
    """The pointing and estimation criteria declared (attsim computes them over their windows); the pass count as a
    (label, value, ok, bound) tuple."""
    from attsim import rotations

    df = tel.df
    intervals = passes(tel)
    during = Window.intervals(intervals, skip_s=120.0, label="during ground-station passes")
    speeds = np.abs(df[[f"rw{k}_speed" for k in range(4)]].to_numpy()).max(axis=1) / WHEEL_MAX_SPEED_RAD_S
    q_est = df[[f"mekf_q{c}" for c in "wxyz"]].to_numpy()
    estimate_deg = np.degrees(rotations.quat_angle_between(q_est, df[["qw", "qx", "qy", "qz"]].to_numpy()))
    bound_deg = np.degrees(np.linalg.norm(df[[f"mekf_sigma3_att_{a}" for a in "xyz"]].to_numpy(), axis=1))
    # the wheel speeds stay below half the limit over three orbits even with the magnetorquers off (0.42 with a
    # 1e-2 A m^2 dipole): what shows the unloading working is the array's net momentum, which it drains (the speed
    # bias holds none)
    period = orbit_over_station().period_s
    h = df[[f"rw{k}_h" for k in range(4)]].to_numpy()
    net = np.linalg.norm(h @ pyramid_axes(4), axis=1) / (WHEEL_INERTIA_KG_M2 * WHEEL_MAX_SPEED_RAD_S)
    return [
        ("passes above 10 deg elevation [-]", len(intervals), len(intervals) >= 1, ">= 1"),
        Requirement("pointing error during passes after 120 s [deg]", "att_err_deg", "max", "<", 0.1,
                    window=during).evaluate(tel),
        Requirement("+z to the station's line of sight during passes after 120 s [deg]", None, "max", "<", 0.1,
                    window=during, values=line_of_sight_error_deg(tel)).evaluate(tel),
        Requirement("largest wheel speed / limit [-]", None, "max", "<", 0.5, values=speeds).evaluate(tel),
        Requirement("net wheel momentum after the first orbit / one wheel's capacity [-]", None, "max", "<",
                    NET_MOMENTUM_MAX, window=Window.after(period), values=net).evaluate(tel),
        Requirement("MEKF attitude error after 60 s [deg]", None, "max", "<", 0.05, window=Window.after(60.0),
                    values=estimate_deg).evaluate(tel),
        # a NaN estimate or bound counts as outside, as a comparison with NaN is False
        Requirement("MEKF attitude error inside its 3-sigma bound, after 60 s [fraction]", None, "mean", ">", 0.97,
                    window=Window.after(60.0), values=(estimate_deg <= bound_deg).astype(float)).evaluate(tel),
    ]


if __name__ == "__main__":
    sys.exit(attsim.cli.run_script(build, criteria))
