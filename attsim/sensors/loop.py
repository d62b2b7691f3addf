"""The sensors' part of the compiled mission: their bank, their units, their rows and events.

One :class:`SensorBank` row per sensor, filled from the sensor objects at
the start of a run (:func:`build`; each object fills its own row with
:meth:`~attsim.sensors.base.Sensor.fill_loop_row`) and handed back at its
end (:func:`hand_back`). A sensor class names its sampling unit in
``sample_unit`` (a template here: :func:`sample_gyro`,
:func:`sample_magnetometer`, :func:`sample_sun_sensor`,
:func:`sample_star_tracker`); a new sensor adds its own and nothing else
changes. The units take their measurements with the kernels the Python
objects use (:mod:`attsim.sensors.kernels`), so both paths give the same
numbers to the bit.

A sensor read by controllers or an estimator is sampled inside their cycles
(once per instant however many read it: ``t_last_s``); one that nobody reads
samples at its own rate (:func:`sample_free`, on the engine's clock).
Fault boundaries are logged by :func:`log_faults` on the engine's timeline.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import NamedTuple

import numpy as np

from .._core.events import log_event
from .._core.jit import LOOP_INLINED, njit
from .._core.units import Unit, as_function, deref
from ..dynamics import qconj, qrotate
from ..environment.table import B_I, P_SRP, R, SUN, lerp1, lerp3, table_cell
from .faults import fault_fields, fault_schedule, fault_table, faults_at
from .kernels import (gyro_measure, gyro_sample, horizon_measure, horizon_sample, magnetometer_measure,
                      magnetometer_sample, nadir_body, star_tracker_blinded, star_tracker_measure, star_tracker_sample,
                      sun_sensor_any_light, sun_sensor_detect, sun_sensor_measure, sun_sensor_signals,
                      sun_sensor_truth)

_JIT = dict(cache=True, nogil=True, error_model="numpy", **LOOP_INLINED)  # inlined in the units

__all__ = ["SensorBank", "PART", "TRUTH_COLUMN", "VALID_COLUMN", "HELD_COLUMN", "OUTPUT_WIDTH", "REAL_PLAIN",
           "REAL_Q_TRUE", "REAL_Q_NOMINAL", "REAL_SCALE", "REAL_OFFSET", "REAL_REPORTS_VALID", "REAL_NORMALS_TRUE",
           "REAL_NORMALS_NOMINAL", "REAL_SUN_MATRIX", "REALISM_WIDTH", "BOUNDARY_T", "BOUNDARY_SENSOR",
           "BOUNDARY_FAULT", "BOUNDARY_END", "BOUNDARY_WIDTH", "EVENT_FAULT", "GYRO_ARW", "GYRO_BIAS_RW",
           "GYRO_QUANTIZATION", "MAGNETOMETER_NOISE", "MAGNETOMETER_BIAS", "MAGNETOMETER_QUANTIZATION", "SUN_NOISE",
           "SUN_QUANTIZATION", "SUN_COS_FOV", "STAR_SIGMA", "STAR_SUN_EXCLUSION", "STAR_EARTH_EXCLUSION",
           "HORIZON_NOISE", "PARAMETERS_WIDTH", "sample_gyro", "sample_magnetometer",
           "sample_sun_sensor", "sample_star_tracker", "sample_horizon", "NORMALS_BLOCK", "sample"]

# a sensor's output row: the measurement from column 0, the truth from TRUTH_COLUMN, 1/0 output or none, the last
# good output (HELD_COLUMN, six)
TRUTH_COLUMN, VALID_COLUMN, HELD_COLUMN, OUTPUT_WIDTH = 6, 12, 13, 19
# a sensor's realism row (attsim.sensors.kernels): 1.0 when every setting is at its default (the bare models run),
# q_BS_true and q_BS, scale factor errors, constant offsets (a star tracker's attitude bias, rad; a sun sensor's
# detector biases), 1.0 when it writes <name>_valid, a sun sensor's detector normals in body axes (true and
# nominal, 6 x 3 each, row by row) and its sun matrix (3 x 6, row by row)
(REAL_PLAIN, REAL_Q_TRUE, REAL_Q_NOMINAL, REAL_SCALE, REAL_OFFSET, REAL_REPORTS_VALID, REAL_NORMALS_TRUE,
 REAL_NORMALS_NOMINAL, REAL_SUN_MATRIX, REALISM_WIDTH) = 0, 1, 5, 9, 15, 21, 22, 40, 58, 76
# a fault boundary row: its time, sensor row, fault index in that sensor's table, 1.0 at the end / 0.0 at the start
BOUNDARY_T, BOUNDARY_SENSOR, BOUNDARY_FAULT, BOUNDARY_END, BOUNDARY_WIDTH = 0, 1, 2, 3, 4
# a sensor's parameters row, by kind (filled by its class's fill_loop_row, read by its sampling unit): a gyro's
# angle random walk, bias random walk and quantization; a magnetometer's noise, bias (x y z) and quantization; a
# sun sensor's noise, quantization and cos of its field of view; a star tracker's sigma (x y z, rad) and its Sun and
# Earth exclusion half-angles (rad, NaN for none); a horizon sensor's noise (rad)
GYRO_ARW, GYRO_BIAS_RW, GYRO_QUANTIZATION = 0, 1, 2
MAGNETOMETER_NOISE, MAGNETOMETER_BIAS, MAGNETOMETER_QUANTIZATION = 0, 1, 4
SUN_NOISE, SUN_QUANTIZATION, SUN_COS_FOV = 0, 1, 2
STAR_SIGMA, STAR_SUN_EXCLUSION, STAR_EARTH_EXCLUSION = 0, 3, 4
HORIZON_NOISE = 0
PARAMETERS_WIDTH = 8
# the sensors' event: (t, EVENT_FAULT, fault index, sensor row, 1.0 at its end / 0.0 at its start, ...)
EVENT_FAULT = 10
NORMALS_BLOCK = 6 * 4096  # draws held per sensor between refills


class SensorBank(NamedTuple):
    """One row per sensor. ``axes``: the output's width; ``period_s`` its sampling period; ``sampler``: its
    sampling unit's slot; ``noise``: its row of the World's noise. ``parameters``: the kind's own
    columns (``GYRO_*``, ``MAGNETOMETER_*``, ``SUN_*``, ``STAR_*``, ``HORIZON_*``). ``output``
    holds the latest measurement (first columns), truth (from ``TRUTH_COLUMN``), 1/0 for an output or none
    (``VALID_COLUMN``) and the last good output, a stuck sensor's (from ``HELD_COLUMN``), NaN (and 0) before the
    first sample; ``bias`` a gyro's bias (its axes); ``t_last_s`` the time of the last sample (NaN before the first:
    readers at one instant share a sample, and the gyro's noise spans the time since it). ``realism``: mounting,
    scale factors, offsets, detectors (the ``REAL_*`` columns); ``faults[s]`` the sensor's fault table
    (:func:`~attsim.sensors.faults.fault_table`, padded); ``boundaries`` every fault boundary of the mission in
    logging order (the ``BOUNDARY_*`` columns)."""

    axes: np.ndarray
    period_s: np.ndarray
    sampler: np.ndarray
    noise: np.ndarray
    parameters: np.ndarray
    output: np.ndarray
    bias: np.ndarray
    t_last_s: np.ndarray
    realism: np.ndarray
    faults: np.ndarray
    boundaries: np.ndarray


@njit(**_JIT)
def _keep_output(out, m, width, dropout, stuck, blinded):
    """The sample's output into the sensor's ``out`` row (:meth:`attsim.sensors.base.Sensor.output`): ``m``, the
    held output of a stuck sensor, or NaN without output; dropout over stuck over blinding."""
    if dropout or (blinded and not stuck):
        for i in range(width):
            out[i] = np.nan
        out[VALID_COLUMN] = 0.0
    elif stuck:
        for i in range(width):
            out[i] = out[HELD_COLUMN + i]
        out[VALID_COLUMN] = 0.0 if math.isnan(out[HELD_COLUMN]) else 1.0
    else:
        for i in range(width):
            out[i] = m[i]
            out[HELD_COLUMN + i] = m[i]
        out[VALID_COLUMN] = 1.0


@njit(**_JIT)
def _output(out, truth, m, width, dropout, stuck, blinded):
    """A sample's truth (``width`` values) and its output (:func:`_keep_output`) into the sensor's ``out`` row."""
    for i in range(width):
        out[TRUTH_COLUMN + i] = truth[i]
    _keep_output(out, m, width, dropout, stuck, blinded)


@njit(**_JIT)
def _mounting(realism_row):
    """``(q_BS_true, q_BS)`` of a realism row."""
    r = realism_row
    return ((r[REAL_Q_TRUE], r[REAL_Q_TRUE + 1], r[REAL_Q_TRUE + 2], r[REAL_Q_TRUE + 3]),
            (r[REAL_Q_NOMINAL], r[REAL_Q_NOMINAL + 1], r[REAL_Q_NOMINAL + 2], r[REAL_Q_NOMINAL + 3]))


@njit(**_JIT)
def _faults_now(sensors, s, t):
    """``(dropout, stuck, extra bias)`` of sensor ``s`` at ``t`` (none for a plain sensor)."""
    if sensors.realism[s, REAL_PLAIN] != 0.0:
        return False, False, (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    return faults_at(sensors.faults[s], t)


@njit(**_JIT)
def _draws(pw, s, count):
    """The next ``count`` normal draws of sensor ``s`` (as a tuple of 6; zeros for a noise-free sensor), used."""
    world = deref(pw)
    noise = world.noise
    row = world.sensors.noise[s]
    c = noise.cursor[row]
    n = noise.normals[row]
    if noise.draws[row] == 0:  # a noise-free sensor: its block holds zeros and is never used up
        return (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    noise.cursor[row] = c + noise.draws[row]
    if count == 3:
        return (n[c], n[c + 1], n[c + 2], 0.0, 0.0, 0.0)
    return (n[c], n[c + 1], n[c + 2], n[c + 3], n[c + 4], n[c + 5])


@njit(**_JIT)
def _state(pw):
    """``(q_IB, ω)`` of the plant now (the plant has reached the instant)."""
    world = deref(pw)
    v = world.plant.q_w
    return (v[0], v[1], v[2], v[3]), (v[4], v[5], v[6])


def sample_gyro(pw, t, s):
    """Gyro ``s``'s sample at ``t`` (:meth:`attsim.sensors.devices.Gyro.sample`). The first sample has no
    elapsed time: its noise spans one nominal period, and the bias has not walked."""
    world = deref(pw)
    sensors = world.sensors
    p, r, out = sensors.parameters[s], sensors.realism[s], sensors.output[s]
    _, w = _state(pw)
    first = math.isnan(sensors.t_last_s[s])
    dt = sensors.period_s[s] if first else t - sensors.t_last_s[s]
    if dt > 0.0:
        dropout, stuck, extra = _faults_now(sensors, s, t)
        b = (sensors.bias[s, 0], sensors.bias[s, 1], sensors.bias[s, 2])
        draws = _draws(pw, s, 6)
        bias_rw = 0.0 if first else p[GYRO_BIAS_RW]
        if r[REAL_PLAIN] != 0.0:
            m, b_new = gyro_measure(w, b, dt, p[GYRO_ARW], bias_rw, draws, p[GYRO_QUANTIZATION])
        else:
            q_true, q_nom = _mounting(r)
            k_ = r[REAL_SCALE:REAL_SCALE + 3]
            m, b_new = gyro_sample(w, b, dt, p[GYRO_ARW], bias_rw, draws, p[GYRO_QUANTIZATION], q_true, q_nom,
                                   (k_[0], k_[1], k_[2]), (extra[0], extra[1], extra[2]))
        sensors.bias[s, 0], sensors.bias[s, 1], sensors.bias[s, 2] = b_new
        _output(out, w, m, 3, dropout, stuck, False)
    return 0


def sample_magnetometer(pw, t, s):
    """Magnetometer ``s``'s sample at ``t``: the field of the environment table in body axes, measured."""
    world = deref(pw)
    sensors = world.sensors
    p, r, out = sensors.parameters[s], sensors.realism[s], sensors.output[s]
    q, _ = _state(pw)
    env = world.environment
    dropout, stuck, extra = _faults_now(sensors, s, t)
    k, f = table_cell(env.env_t, t)
    b_B = qrotate(qconj(q), lerp3(env.env_v, k, f, B_I))
    d = _draws(pw, s, 3)
    bias = (p[MAGNETOMETER_BIAS], p[MAGNETOMETER_BIAS + 1], p[MAGNETOMETER_BIAS + 2])
    noise, quantization = p[MAGNETOMETER_NOISE], p[MAGNETOMETER_QUANTIZATION]
    if r[REAL_PLAIN] != 0.0:
        m = magnetometer_measure(b_B, bias, noise, (d[0], d[1], d[2]), quantization)
    else:
        q_true, q_nom = _mounting(r)
        k_ = r[REAL_SCALE:REAL_SCALE + 3]
        m = magnetometer_sample(b_B, bias, noise, (d[0], d[1], d[2]), quantization, q_true, q_nom,
                                (k_[0], k_[1], k_[2]), (extra[0], extra[1], extra[2]))
    _output(out, b_B, m, 3, dropout, stuck, False)
    return 0


def sample_sun_sensor(pw, t, s):
    """Sun sensor ``s``'s sample at ``t``: six detectors' signals; dark in eclipse (no draws used then)."""
    world = deref(pw)
    sensors = world.sensors
    p, r, out = sensors.parameters[s], sensors.realism[s], sensors.output[s]
    q, _ = _state(pw)
    env = world.environment
    plain = r[REAL_PLAIN] != 0.0
    dropout, stuck, extra = _faults_now(sensors, s, t)
    k, f = table_cell(env.env_t, t)
    lit = lerp1(env.env_v, k, f, P_SRP) > 0.0
    s_B = qrotate(qconj(q), lerp3(env.env_v, k, f, SUN))
    if plain:
        truth = signals = sun_sensor_truth(s_B, lit)
    else:
        truth = sun_sensor_signals(s_B, lit, r[REAL_NORMALS_NOMINAL:REAL_NORMALS_NOMINAL + 18], p[SUN_COS_FOV])
        signals = sun_sensor_signals(s_B, lit, r[REAL_NORMALS_TRUE:REAL_NORMALS_TRUE + 18], p[SUN_COS_FOV])
    if sun_sensor_any_light(signals):
        draws = _draws(pw, s, 6)
        if plain:
            m = sun_sensor_measure(signals, p[SUN_NOISE], draws, p[SUN_QUANTIZATION])
        else:
            o, k_ = r[REAL_OFFSET:REAL_OFFSET + 6], r[REAL_SCALE:REAL_SCALE + 6]
            bias = (o[0] + extra[0], o[1] + extra[1], o[2] + extra[2], o[3] + extra[3], o[4] + extra[4],
                    o[5] + extra[5])
            m = sun_sensor_measure(sun_sensor_detect(signals, k_, bias), p[SUN_NOISE], draws, p[SUN_QUANTIZATION])
    else:
        m = signals
    _output(out, truth, m, 6, dropout, stuck, False)
    return 0


def sample_star_tracker(pw, t, s):
    """Star tracker ``s``'s sample at ``t``: the attitude measured, blinded inside its exclusion cones."""
    world = deref(pw)
    sensors = world.sensors
    p, r, out = sensors.parameters[s], sensors.realism[s], sensors.output[s]
    q, _ = _state(pw)
    env = world.environment
    dropout, stuck, extra = _faults_now(sensors, s, t)
    d = _draws(pw, s, 3)
    q_true, q_nom = _mounting(r)
    sigma = (p[STAR_SIGMA], p[STAR_SIGMA + 1], p[STAR_SIGMA + 2])
    if r[REAL_PLAIN] != 0.0:
        m = star_tracker_measure(q, sigma, (d[0], d[1], d[2]))
    else:
        o = r[REAL_OFFSET:REAL_OFFSET + 6]
        m = star_tracker_sample(q, sigma, (d[0], d[1], d[2]), q_true, q_nom,
                                (o[0] + extra[0], o[1] + extra[1], o[2] + extra[2]))
    blinded = False
    sun_cone, earth_cone = p[STAR_SUN_EXCLUSION], p[STAR_EARTH_EXCLUSION]
    if not (math.isnan(sun_cone) and math.isnan(earth_cone)):  # an exclusion cone
        k, f = table_cell(env.env_t, t)
        blinded = star_tracker_blinded(q, q_true, lerp3(env.env_v, k, f, SUN), lerp1(env.env_v, k, f, P_SRP) > 0.0,
                                       lerp3(env.env_v, k, f, R), sun_cone, earth_cone)
    _output(out, q, m, 4, dropout, stuck, blinded)
    return 0


def sample_horizon(pw, t, s):
    """Horizon sensor ``s``'s sample at ``t`` (:class:`attsim.sensors.horizon.HorizonSensor`): the nadir of the
    tabulated orbit in body axes, measured."""
    world = deref(pw)
    sensors = world.sensors
    p, r, out = sensors.parameters[s], sensors.realism[s], sensors.output[s]
    q, _ = _state(pw)
    env = world.environment
    dropout, stuck, extra = _faults_now(sensors, s, t)
    n_B = nadir_body(q, env.env_t, env.env_v, t)
    d = _draws(pw, s, 3)
    if r[REAL_PLAIN] != 0.0:
        m = horizon_measure(n_B, p[HORIZON_NOISE], (d[0], d[1], d[2]))
    else:
        q_true, q_nom = _mounting(r)
        m = horizon_sample(n_B, p[HORIZON_NOISE], (d[0], d[1], d[2]), q_true, q_nom,
                           (extra[0], extra[1], extra[2]))
    _output(out, n_B, m, 3, dropout, stuck, False)
    return 0


@njit(**_JIT)
def sample(samplers, pw, t, s):
    """Take sensor ``s``'s sample at ``t`` with its unit (``samplers``: the run's samplers' addresses), once: the
    readers at one instant share its sample. The unit sees the time of the previous sample in ``t_last_s``."""
    sensors = deref(pw).sensors
    if sensors.t_last_s[s] == t:
        return 0
    status = as_function(samplers[sensors.sampler[s]], 0, pw, t, s)(pw, t, s)
    sensors.t_last_s[s] = t
    return status


def sample_free(pw, samplers, t, s):
    """A sensor nobody reads, on the engine's clock: its own sample."""
    return sample(samplers, pw, t, s)


def log_faults(pw, samplers, t, row):
    """The timeline's fault boundaries at ``t``, logged in :func:`~attsim.sensors.faults.fault_schedule` order."""
    world = deref(pw)
    b = world.sensors.boundaries
    for k in range(np.searchsorted(b[:, BOUNDARY_T], t, side="left"), b.shape[0]):
        if b[k, BOUNDARY_T] != t:
            break
        log_event(world.buffers, t, EVENT_FAULT, int(b[k, BOUNDARY_FAULT]), int(b[k, BOUNDARY_SENSOR]),
                  b[k, BOUNDARY_END], 0.0, 0.0)
    return 0


def write_sensor(pw, t, s, col):
    """Sensor ``s``'s columns of the row being written from ``col``: measurement and truth (``axes`` each), and
    its validity when it reports it; returns the next column."""
    world = deref(pw)
    sensors = world.sensors
    row = world.buffers.rows[world.buffers.counts[0]]
    axes = sensors.axes[s]
    for a in range(axes):
        row[col + a] = sensors.output[s, a]
        row[col + axes + a] = sensors.output[s, TRUTH_COLUMN + a]
    col += 2 * axes
    if sensors.realism[s, REAL_REPORTS_VALID] != 0.0:
        row[col] = sensors.output[s, VALID_COLUMN]
        col += 1
    return col


SAMPLE_FREE = Unit(sample_free, "sample_free", {})
LOG_FAULTS = Unit(log_faults, "log_faults", {})
WRITE_SENSOR = Unit(write_sensor, "write_sensor", {})


def _initial_output(n: int) -> np.ndarray:
    """Sensor outputs before the first sample: NaN measurement and truth, no output."""
    output = np.full((n, OUTPUT_WIDTH), np.nan)
    output[:, VALID_COLUMN] = 0.0
    return output


class SensorPart:
    """The sensors in the compiled mission (the protocol: :class:`attsim.engine.component.LoopPart`)."""

    slot = "sensors"
    bank_type = SensorBank

    def compiles(self, sensor, mission) -> bool:
        """True when ``sensor`` has a compiled form in ``mission`` (a built-in, or a subclass that names one)."""
        return getattr(type(sensor), "sample_unit", None) is not None and sensor.loop_ready(mission)

    def empty(self) -> SensorBank:
        return self.build([], None)

    def schedule(self, sensors, build):
        """The clock's free-running samples and the timeline's fault boundaries."""
        clock = [build.clock_entry("sample", sensor, SAMPLE_FREE, build.row(sensor), [sensor])
                 for sensor in sensors if not sensor.readers]
        boundaries = fault_schedule(sensors, build.duration_s) if sensors else []
        times = sorted({t for t, _, _, _ in boundaries})
        timeline = [build.timeline_entry("faults", times, LOG_FAULTS, 0, late=True)] if times else []
        return clock, timeline

    def build(self, sensors, build) -> SensorBank:
        n = len(sensors)
        parameters, bias = np.zeros((n, PARAMETERS_WIDTH)), np.zeros((n, 3))
        realism = np.zeros((n, REALISM_WIDTH))
        faults = np.repeat(fault_table((), rows=max([len(x.faults) for x in sensors] + [1]))[None], n, axis=0)
        for s, sensor in enumerate(sensors):
            sensor.fill_loop_row(parameters[s], bias[s], realism[s], faults[s])
        duration_s = build.duration_s if build is not None else 0.0
        boundaries = np.array(fault_schedule(sensors, duration_s) if sensors else [],
                              dtype=float).reshape(-1, BOUNDARY_WIDTH)
        return SensorBank(
            axes=np.array([len(s.axes) for s in sensors], dtype=np.int64),
            period_s=np.array([s.period_s for s in sensors], dtype=float),
            sampler=np.array([build.sampler_slot(type(s).sample_unit) for s in sensors], dtype=np.int64),
            noise=np.array([build.noise_row(s, s.draws, s.rng) for s in sensors], dtype=np.int64),
            parameters=parameters, output=_initial_output(n), bias=bias, t_last_s=np.full(n, np.nan),
            realism=realism, faults=faults, boundaries=boundaries)

    def writer(self, sensor, build):
        return WRITE_SENSOR, build.row(sensor)

    def units(self) -> list:
        """The sensors' own units, each with the kind of its signature and its options."""
        return [(SAMPLE_FREE, "at_time", {}), (LOG_FAULTS, "at_time", {}), (WRITE_SENSOR, "write", {})]

    def class_units(self, cls) -> list:
        """The unit a sensor class samples with (none for a class without a compiled form)."""
        unit = getattr(cls, "sample_unit", None)
        return [(unit, "sample")] if isinstance(unit, Unit) else []

    def events_per_instant(self, sensors, build) -> int:
        """The fault boundaries that fall at one time."""
        times = [t for t, _, _, _ in fault_schedule(sensors, build.duration_s)] if sensors else []
        return max(Counter(times).values(), default=0)

    def hand_back(self, bank: SensorBank, sensors, build) -> None:
        """Leave the sensor objects as the Python path does at the end of a run (latest sample, validity, bias)."""
        for s, sensor in enumerate(sensors):
            sensor.take_loop_row(bank.output[s], bank.bias[s])

    def event(self, recorder, t: float, kind: int, what: int, index: int, values, build) -> bool:
        """Log a fault boundary of the loop's event rows as the Python path does; False for another kind's."""
        if kind != EVENT_FAULT:
            return False
        sensor = build.components(self)[index]
        fault = sensor.faults[what]
        recorder.event(t, "fault_end" if values[0] else "fault", **fault_fields(sensor, what, fault))
        return True

    def fault(self, bank, sensors, row: int, t: float, build) -> Exception | None:
        return None  # a sensor's unit never faults


PART = SensorPart()
