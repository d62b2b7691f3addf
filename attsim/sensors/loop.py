"""The sensors of the compiled mission loop (layer 6): their bank filled from a mission's sensors, and back.

:func:`sensor_bank` fills :class:`~attsim.engine.banks.SensorBank` from the
built-in sensors once, at the start of a run (their mounting, scale
factors, biases, exclusion cones, fields of view and faults, and the
mission's fault boundaries in the order their events are logged);
:func:`hand_back_sensors` leaves the objects as the Python path would, and
:func:`fault_event` turns a fault row of the loop's event log into the
Python path's event.
"""

from __future__ import annotations

import numpy as np

from ..engine import banks as ml
from .base import fault_fields
from .faults import fault_schedule, fault_table
from .devices import Gyro, Magnetometer, StarTracker, SunSensor

__all__ = ["SENSOR_KINDS", "NORMALS_BLOCK", "sensor_bank", "hand_back_sensors", "fault_event"]

SENSOR_KINDS = {Gyro: ml.GYRO, Magnetometer: ml.MAGNETOMETER, SunSensor: ml.SUN_SENSOR, StarTracker: ml.STAR_TRACKER}
NORMALS_BLOCK = 6 * 4096  # draws held per sensor between refills


def sensor_bank(sensors, duration_s: float) -> ml.SensorBank:
    n = len(sensors)
    parameters = np.zeros((n, 8))
    bias = np.zeros((n, 3))
    realism = np.zeros((n, ml.REALISM_WIDTH))
    faults = np.repeat(fault_table((), rows=max([len(x.faults) for x in sensors] + [1]))[None], n, axis=0)
    for s, sensor in enumerate(sensors):
        if sensor.faults:
            faults[s, :len(sensor.faults)] = sensor._fault_table
        r = realism[s]
        r[ml.REAL_PLAIN] = 1.0 if sensor.plain else 0.0
        r[ml.REAL_Q_TRUE:ml.REAL_Q_TRUE + 4], r[ml.REAL_Q_NOMINAL:ml.REAL_Q_NOMINAL + 4] = sensor.q_BS_true, sensor.q_BS
        r[ml.REAL_REPORTS_VALID] = 1.0 if sensor.reports_validity else 0.0
        if isinstance(sensor, Gyro):
            parameters[s, :3] = sensor.arw, sensor.bias_rw, sensor.quantization
            bias[s] = sensor.bias0
            r[ml.REAL_SCALE:ml.REAL_SCALE + 3] = sensor.scale_factor_error
        elif isinstance(sensor, Magnetometer):
            parameters[s, :5] = sensor.noise, *sensor.bias, sensor.quantization
            r[ml.REAL_SCALE:ml.REAL_SCALE + 3] = sensor.scale_factor_error
        elif isinstance(sensor, SunSensor):
            parameters[s, :3] = sensor.noise, sensor.quantization, sensor._cos_fov
            r[ml.REAL_SCALE:ml.REAL_SCALE + 6], r[ml.REAL_OFFSET:ml.REAL_OFFSET + 6] = sensor.scale_factor_error, \
                sensor.detector_bias
            r[ml.REAL_NORMALS_TRUE:ml.REAL_NORMALS_TRUE + 18] = np.ravel(sensor.normals_true)
            r[ml.REAL_NORMALS_NOMINAL:ml.REAL_NORMALS_NOMINAL + 18] = np.ravel(sensor.normals_nominal)
            r[ml.REAL_SUN_MATRIX:ml.REAL_SUN_MATRIX + 18] = sensor.sun_matrix.ravel()
        else:
            parameters[s, :3] = sensor.sigma_rad
            parameters[s, 3:5] = sensor.exclusion_rad
            r[ml.REAL_OFFSET:ml.REAL_OFFSET + 3] = sensor.bias_rad
    normals = np.zeros((n, NORMALS_BLOCK))
    for s, sensor in enumerate(sensors):
        if sensor.draws:
            normals[s] = sensor.rng.standard_normal(NORMALS_BLOCK)
    boundaries = np.array(fault_schedule(sensors, duration_s), dtype=float).reshape(-1, ml.BOUNDARY_WIDTH)
    return ml.SensorBank(
        kind=np.array([SENSOR_KINDS[type(s)] for s in sensors], dtype=np.int64),
        period_s=np.array([s.period_s for s in sensors], dtype=float),
        phase_s=np.array([s.phase_s for s in sensors], dtype=float),
        next_k=np.zeros(n, dtype=np.int64), free_running=np.array([0.0 if s.readers else 1.0 for s in sensors]),
        parameters=parameters, output=_initial_output(n), bias=bias, t_last_s=np.full(n, np.nan),
        normals=normals, cursor=np.zeros(n, dtype=np.int64), draws=np.array([s.draws for s in sensors], dtype=np.int64),
        realism=realism, faults=faults, boundaries=boundaries)


def _initial_output(n: int) -> np.ndarray:
    """Sensor outputs before the first sample: NaN measurement and truth, no output."""
    output = np.full((n, ml.OUTPUT_WIDTH), np.nan)
    output[:, ml.VALID_COLUMN] = 0.0
    return output


def hand_back_sensors(bank: ml.SensorBank, sensors) -> None:
    """Leave the sensor objects as the Python path does at the end of a run (latest sample, validity, gyro bias)."""
    for s, sensor in enumerate(sensors):
        row, axes = bank.output[s], len(sensor.axes)
        sensor.latest, sensor._latest_truth = row[:axes].copy(), row[ml.TRUTH_COLUMN:ml.TRUTH_COLUMN + axes].copy()
        sensor._held = row[ml.HELD_COLUMN:ml.HELD_COLUMN + axes].copy()
        sensor._valid_value = float(row[ml.VALID_COLUMN])
        sensor.valid = sensor._valid_value != 0.0
        if isinstance(sensor, Gyro):
            sensor._bias = tuple(float(v) for v in bank.bias[s])


def fault_event(recorder, t: float, sensor, index: int, end: float) -> None:
    """The event of fault ``index`` of ``sensor`` beginning (``end`` 0) or ending at ``t``, as the Python path logs
    it."""
    recorder.event(t, "fault_end" if end else "fault", **fault_fields(sensor, index, sensor.faults[index]))
