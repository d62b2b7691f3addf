"""Sensor realism in the compiled loop against the Python path: mounting, scale factors, biases, exclusion
cones, fields of view, faults and their events, and readers of samples without output (MEKF, controllers)."""

import math

import numba
import numpy as np
from scipy.spatial.transform import Rotation

import attsim
from attsim.environment import Environment, Face, KeplerOrbit
from attsim.guidance.targets import Inertial

from tests.paths.test_mission_loop import J, _wheels, assert_same_run, both_ways

Fault = attsim.SensorFault


def _environment():
    # at the March equinox the Sun is along +x, where this orbit starts: in sunlight
    return Environment(KeplerOrbit.circular(600.0, 97.8, epoch="2024-03-20T00:00:00"), field="dipole",
                       faces=Face.cube(0.1, (1e-3, -1e-3, 2e-3)))


def _quat(rotation: Rotation) -> tuple:
    q = np.roll(rotation.as_quat(), 1)
    return tuple(q if q[0] >= 0 else -q)


Q_TRACKER = _quat(Rotation.from_euler("XY", [-90.0, 10.0], degrees=True))  # boresight near body +y
Q_MAG = _quat(Rotation.from_euler("ZYX", [30.0, 5.0, -12.0], degrees=True))


def _target_near_the_sun(angle_deg: float) -> tuple:
    """An attitude whose tracker boresight is ``angle_deg`` from +x (the Sun at the epoch)."""
    z_B = Rotation.from_quat(np.roll(Q_TRACKER, -1)).apply([0.0, 0.0, 1.0])
    boresight = Rotation.from_rotvec(math.radians(angle_deg) * np.array([0.0, 0.0, 1.0])).apply([1.0, 0.0, 0.0])
    turn, _ = Rotation.align_vectors([boresight], [z_B])
    return _quat(turn)


def every_sensor_feature(out):
    m = attsim.Mission("sensor_realism", J, (0.002, -0.001, 0.0015), duration=160.0, telemetry_dt=1.0, seed=11,
                       environment=_environment(), out_dir=out)
    wheels = _wheels(m, max_torque_Nm=5e-3)
    gyro = m.add(attsim.Gyro(10.0, arw_rad_sqrt_s=2e-5, bias_rad_s=(2e-4, -1e-4, 5e-5), bias_rw_rad_s_sqrt_s=1e-7,
                             quantization_rad_s=1e-8, q_BS=Q_MAG, misalignment_rad=(1e-3, 0.0, -2e-3),
                             scale_factor_error=(1e-3, -2e-3, 5e-4),
                             faults=[Fault(30.0, "bias_jump", 10.0, bias=(1e-4, 0.0, -1e-4)),
                                     Fault(70.0, "dropout", 2.05), Fault(90.0, "stuck", 1.0)]))
    tracker = m.add(attsim.StarTracker(2.0, noise_arcsec=(6.0, 6.0, 40.0), q_BS=Q_TRACKER,
                                       misalignment_rad=(2e-4, -1e-4, 3e-4), bias_arcsec=(10.0, -5.0, 20.0),
                                       sun_exclusion_deg=35.0, faults=[Fault(20.0, "dropout", 15.0),
                                                                       Fault(50.0, "stuck", 5.0)]))
    mag = m.add(attsim.Magnetometer(1.0, noise_T=1e-7, bias_T=(2e-7, 0.0, -1e-7), quantization_T=1e-9, q_BS=Q_MAG,
                                    misalignment_rad=(0.0, 3e-3, 0.0), scale_factor_error=2e-3,
                                    faults=[Fault(40.0, "stuck", 6.0), Fault(100.0, "dropout", 3.0)]))
    a, b, c = np.array([1.0, 1.0, 0.0]) / math.sqrt(2.0), np.array([-1.0, 1.0, 0.0]) / math.sqrt(2.0), np.eye(3)[2]
    css = m.add(attsim.SunSensor(1.0, noise=0.005, quantization=1e-4, q_BS=Q_MAG, misalignment_rad=(0.0, 0.0, 4e-3),
                                 detector_normals=[a, -a, b, -b, c, -c], fov_deg=75.0,
                                 scale_factor_error=(0.01, -0.01, 0.02, 0.0, 0.0, -0.02), bias=0.002,
                                 faults=[Fault(60.0, "bias_jump", 10.0, bias=(0.05, 0.0, 0.0, 0.0, -0.02, 0.0)),
                                         Fault(110.0, "dropout", 4.0)]))
    mekf = m.add(attsim.MEKF(gyro, star_tracker=tracker, magnetometer=mag, sun_sensor=css, q0=(1.0, 0.0, 0.0, 0.0),
                             magnetometer_noise_T=3e-7))
    m.add(attsim.QuaternionPD(kp=5e-4, kd=9e-3, period_s=0.5, wheels=wheels,
                              target=Inertial(_target_near_the_sun(30.0)), attitude_source=mekf, rate_source=mekf))
    m.add(attsim.StarTracker(1.0, noise_arcsec=10.0, earth_exclusion_deg=30.0, phase_s=0.25, name="st2",
                             faults=[Fault(0.0, "dropout", 3.0), Fault(3.0, "stuck", 2.0)]))
    return m


def test_every_sensor_feature_gives_the_same_run_both_ways(tmp_path):
    python, compiled = both_ways(tmp_path, every_sensor_feature)
    assert_same_run(python, compiled)
    df, events = compiled.df, compiled.events
    for name in ("st", "st2", "gyro", "mag", "css"):  # each loses its output at some time and has it at others
        assert set(df[f"{name}_valid"].unique()) == {0.0, 1.0}, name
    faults = events[events["kind"].isin(["fault", "fault_end"])]
    assert len(faults) == 2 * 11  # every fault starts and ends within the run
    truth = [c for c in df.columns if "_true_" in c] + ["qw", "qx", "qy", "qz", "wx", "wy", "wz"]
    assert np.all(np.isfinite(df.loc[1.0:, truth].to_numpy()))  # from every sensor's first sample on
    assert np.all(np.isfinite(df[[f"mekf_{c}" for c in ("qw", "qx", "qy", "qz", "bias_x")]].to_numpy()))
    assert np.all(np.isfinite(df[[f"rw_{a}_torque" for a in "xyz"]].to_numpy()))


def controllers_hold_without_output(out):
    m = attsim.Mission("hold", J, (0.01, -0.02, 0.015), duration=60.0, telemetry_dt=0.5, seed=3, out_dir=out,
                       field=(2e-5, -1e-5, 3e-5))
    wheels = _wheels(m)
    gyro = m.add(attsim.Gyro(2.0, arw_rad_sqrt_s=1e-5))
    tracker = m.add(attsim.StarTracker(2.0, noise_arcsec=5.0, faults=[Fault(10.0, "dropout", 5.0)]))
    m.add(attsim.QuaternionPD((1.0, 0.0, 0.0, 0.0), kp=5e-4, kd=9e-3, period_s=0.5, wheels=wheels,
                              attitude_source=tracker, rate_source=gyro))
    mag = m.add(attsim.Magnetometer(1.0, noise_T=1e-8, faults=[Fault(20.0, "dropout", 5.0)]))
    mtq = m.add(attsim.Magnetorquer(dipole_max_Am2=0.05))
    m.add(attsim.BDot(mag, mtq, gain=2e3, period_s=1.0))
    mag2 = m.add(attsim.Magnetometer(1.0, noise_T=1e-8, name="mag2", faults=[Fault(0.0, "stuck", 3.0),
                                                                              Fault(30.0, "dropout", 3.0)]))
    mtq2 = m.add(attsim.Magnetorquer(dipole_max_Am2=0.05, name="mtq2"))
    m.add(attsim.NumbaController(_oppose_field, period_s=1.0, sensors=[mag2], magnetorquer=mtq2, parameters=(1e3,)))
    return m


@numba.njit
def _oppose_field(t_s, readings, parameters, memory, commands):
    for i in range(3):
        commands[i] = -parameters[0] * readings[0, i] * (1.0 + 0.01 * t_s)


def test_controllers_hold_their_commands_while_a_sensor_gives_no_output(tmp_path):
    python, compiled = both_ways(tmp_path, controllers_hold_without_output)
    assert_same_run(python, compiled)
    df = compiled.df
    t = df.index.to_numpy()

    def held(columns, start, stop):
        values = df[columns].to_numpy()
        window = values[(t >= start) & (t <= stop)]
        return np.all(window == values[t == start - 0.5][0]) and not np.all(values[t == stop + 1.0] == window[0])

    torques = [f"rw_{a}_torque" for a in "xyz"]
    assert held(torques, 10.0, 14.5)  # the tracker's dropout [10, 15): the wheels hold
    # B-dot: the dropout [20, 25), then the first good sample only starts the difference again
    assert held([f"mtq_m_{a}" for a in "xyz"], 20.0, 25.0)
    assert held([f"mtq2_m_{a}" for a in "xyz"], 30.0, 32.5)  # a user's law is not called without output
    # stuck from the start with nothing good to hold: no output, so the user's law was not called either
    assert np.all(df.loc[df.index < 3.0, [f"mtq2_m_{a}" for a in "xyz"]].to_numpy() == 0.0)
    assert np.all(np.isfinite(df[torques + [f"mtq_m_{a}" for a in "xyz"]].to_numpy()))


def mounted_without_faults(out):
    # mounting, scale factors and biases on every sensor, no fault and no cone: each always has an output
    m = attsim.Mission("mounted", J, (0.01, -0.02, 0.015), duration=60.0, telemetry_dt=1.0, seed=5,
                       environment=_environment(), out_dir=out)
    gyro = m.add(attsim.Gyro(5.0, arw_rad_sqrt_s=2e-5, q_BS=Q_MAG, misalignment_rad=(1e-3, 0.0, -2e-3),
                             scale_factor_error=1e-3))
    tracker = m.add(attsim.StarTracker(1.0, noise_arcsec=10.0, q_BS=Q_TRACKER, bias_arcsec=(5.0, 0.0, -5.0)))
    m.add(attsim.Magnetometer(1.0, noise_T=1e-7, q_BS=Q_MAG, scale_factor_error=(1e-3, 0.0, -1e-3)))
    m.add(attsim.SunSensor(1.0, noise=0.01, misalignment_rad=(0.0, 2e-3, 0.0), fov_deg=60.0, bias=0.001))
    m.add(attsim.MEKF(gyro, star_tracker=tracker, star_tracker_noise_arcsec=30.0))
    return m


def test_mounted_sensors_without_faults_give_the_same_run_both_ways(tmp_path):
    python, compiled = both_ways(tmp_path, mounted_without_faults)
    assert_same_run(python, compiled)
    assert not any(c.endswith("_valid") for c in compiled.df.columns)  # none can lose its output
