"""The data of the compiled mission loop (layer 6): named banks of plain arrays, and the codes they use.

Each bank is a named tuple of arrays whose rows are a mission's components of
one kind; :mod:`attsim.engine.compiled` fills them from the components at
the start of a run, :mod:`attsim.engine.loop` updates them in place.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["GYRO", "MAGNETOMETER", "SUN_SENSOR", "STAR_TRACKER", "SENSOR_AXES", "NORMALS_PER_SAMPLE", "TRUTH_COLUMN",
           "VALID_COLUMN", "HELD_COLUMN", "OUTPUT_WIDTH", "REAL_PLAIN", "REAL_Q_TRUE", "REAL_Q_NOMINAL", "REAL_SCALE",
           "REAL_OFFSET", "REAL_REPORTS_VALID", "REAL_NORMALS_TRUE", "REAL_NORMALS_NOMINAL", "REAL_SUN_MATRIX",
           "REALISM_WIDTH", "BOUNDARY_T", "BOUNDARY_SENSOR", "BOUNDARY_FAULT", "BOUNDARY_END", "BOUNDARY_WIDTH",
           "EVENT_FAULT", "QPD_WHEELS",
           "QPD_MAGNETORQUER", "BDOT_RATE", "BDOT_DIRECTION", "MAGNETIC_PD", "USER", "UNLOAD", "ROW_SENSOR",
           "ROW_SCHEDULE", "ROW_MAGNETORQUER", "ROW_WHEEL", "ROW_NOTHING", "ROW_POINTING", "ROW_ESTIMATOR", "ROW_MODE",
           "EVENT_MODE", "ModeBank", "EVENT_SATURATION", "EVENT_SATURATION_END", "EVENT_COMMAND", "EVENT_PLAYBACK",
           "EVENT_OUTLIER", "EstimatorBank", "WHAT_TORQUE", "WHAT_SPEED", "WHAT_DIPOLE", "DONE", "ROWS_FULL", "REFILL",
           "GIMBAL_LOCK", "DIVERGED", "EVENTS_FULL", "USER_FAULT", "ESTIMATOR_FAULT", "SensorBank", "ControllerBank",
           "MagnetorquerBank", "ScheduleBank", "PlaybackBank", "PLAYBACK_WHEEL", "PLAYBACK_MAGNETORQUER", "Telemetry",
           "Buffers"]

# sensor kinds, their output widths and the normal draws one sample takes
GYRO, MAGNETOMETER, SUN_SENSOR, STAR_TRACKER = 0, 1, 2, 3
SENSOR_AXES = (3, 3, 6, 4)
NORMALS_PER_SAMPLE = (6, 3, 6, 3)
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
# controller kinds
QPD_WHEELS, QPD_MAGNETORQUER, BDOT_RATE, BDOT_DIRECTION, MAGNETIC_PD, USER, UNLOAD = 0, 1, 2, 3, 4, 5, 6
# what a component writes to a telemetry row
ROW_SENSOR, ROW_SCHEDULE, ROW_MAGNETORQUER, ROW_WHEEL, ROW_NOTHING, ROW_POINTING, ROW_ESTIMATOR, ROW_MODE = range(8)
# event rows: (t, kind, what, component index, v0, v1, v2, unused)
EVENT_SATURATION, EVENT_SATURATION_END, EVENT_COMMAND, EVENT_PLAYBACK, EVENT_OUTLIER, EVENT_MODE = 0, 1, 2, 3, 4, 5
EVENT_FAULT = 6  # (t, EVENT_FAULT, fault index, sensor row, 1.0 at its end / 0.0 at its start, ...)
WHAT_TORQUE, WHAT_SPEED, WHAT_DIPOLE = 0, 1, 2
# why the loop returned
DONE, ROWS_FULL, REFILL, GIMBAL_LOCK, DIVERGED, EVENTS_FULL, USER_FAULT, ESTIMATOR_FAULT = 0, 1, 2, 3, 4, 5, 6, 7




class SensorBank(NamedTuple):
    """One row per sensor. ``parameters`` by kind: gyro (arw, bias_rw, quantization); magnetometer (noise,
    bias x y z, quantization); sun sensor (noise, quantization, cos of the field of view); star tracker (sigma
    x y z, rad; Sun and Earth exclusion half-angles, rad, NaN for none).
    ``output`` holds the latest measurement (first columns), truth (from ``TRUTH_COLUMN``), 1/0 for an output or
    none (``VALID_COLUMN``) and the last good output, a stuck sensor's (from ``HELD_COLUMN``), NaN (and 0) before
    the first sample; ``t_last_s`` the time of the last sample (NaN before the first: readers at one instant share
    a sample, and the gyro's noise spans the time since it); ``normals`` a block of standard normal draws consumed
    from ``cursor``, ``draws`` per sample (``NORMALS_PER_SAMPLE`` of the kind, or 0 for a noise-free sensor, whose
    block is zeros). ``realism``: mounting, scale factors, offsets, detectors (the ``REAL_*`` columns);
    ``faults[s]`` the sensor's fault table (:func:`attsim.sensors.faults.fault_table`, padded); ``boundaries`` every
    fault boundary of the mission in logging order (the ``BOUNDARY_*`` columns). The realism lives in a few wide
    arrays: every array of a bank costs each call of a compiled function that takes the bank."""

    kind: np.ndarray
    period_s: np.ndarray
    phase_s: np.ndarray
    next_k: np.ndarray
    free_running: np.ndarray
    parameters: np.ndarray
    output: np.ndarray
    bias: np.ndarray
    t_last_s: np.ndarray
    normals: np.ndarray
    cursor: np.ndarray
    draws: np.ndarray
    realism: np.ndarray
    faults: np.ndarray
    boundaries: np.ndarray

class ControllerBank(NamedTuple):
    """One row per controller. ``parameters``: a QPD's ki (0) and integral limit (1), kp (4), kd (5), gain (6:
    B-dot, unloading; QPD: null-space gain), dipole compensation (7-9: magnetic PD, QPD on magnetorquers).
    ``null_projector[c]``: a QPD's null-space projector over the mission's wheels (zero when it manages no null
    space); ``wheel_scratch[c]`` its working rows (null-space torque, motor torque, speed) and each wheel's speed
    target (row 3, filled once), so a cycle allocates nothing. ``memory``: a B-dot's previous field sample (0-2) and
    whether there is one (3); a QPD's integrated attitude error (0-2, rad s); zeroed when a mode switch starts the
    controller again.
    ``roles``: sensor rows of the attitude, rate and field inputs (-1: the true state / none).
    ``sources``: estimator rows giving the attitude and the rate (-1: ``roles`` decide).
    ``samples``: the sensor rows sampled each cycle, -1 padded. ``target_kind``, ``target``: an attitude law's
    guidance target (:mod:`attsim.guidance.kernels` kind and parameters). ``allocation[c, j]``: the torque-to-motor
    row of wheel ``j`` (zero for wheels the controller does not drive); ``magnetorquer``: its row or -1.
    ``wheel_order``: the wheel rows a QPD or a user's law commands, in its order (-1 padded). A user's law
    (``USER``): ``user_sizes`` (lengths of its parameters, memory, readings rows and commands), and its arrays
    (see :mod:`attsim.control.numba_law`)."""

    kind: np.ndarray
    period_s: np.ndarray
    phase_s: np.ndarray
    next_k: np.ndarray
    parameters: np.ndarray
    memory: np.ndarray
    roles: np.ndarray
    samples: np.ndarray
    drives_wheel: np.ndarray
    allocation: np.ndarray
    magnetorquer: np.ndarray
    wheel_order: np.ndarray
    user_sizes: np.ndarray
    user_parameters: np.ndarray
    user_memory: np.ndarray
    user_readings: np.ndarray
    user_commands: np.ndarray
    target_kind: np.ndarray
    target: np.ndarray
    sources: np.ndarray
    null_projector: np.ndarray
    active: np.ndarray
    wheel_scratch: np.ndarray


class EstimatorBank(NamedTuple):
    """One row per MEKF (:mod:`attsim.estimation.kernels`). It cycles at ``phase_s + k period_s`` (its gyro's
    times), sampling its ``gyro`` (a sensor row) and each measurement sensor ``meas[e, i]`` (star tracker,
    magnetometer, sun sensor; -1 none) at cycles ``offset + j every``. ``parameters`` in ``kernels.PARAMETERS``
    order; the state ``q``, ``bias``, ``P``, the cycle ``memory`` (``kernels.new_memory``), the last cycle's ``nis``
    and the rate estimate ``w_est`` (the last good gyro reading minus bias) are updated in place."""

    period_s: np.ndarray
    phase_s: np.ndarray
    next_k: np.ndarray
    gyro: np.ndarray
    meas: np.ndarray
    every: np.ndarray
    offset: np.ndarray
    parameters: np.ndarray
    q: np.ndarray
    bias: np.ndarray
    P: np.ndarray
    memory: np.ndarray
    nis: np.ndarray
    w_est: np.ndarray


class ModeBank(NamedTuple):
    """The mission's mode manager (:mod:`attsim.modes`; no rows without one). It checks at ``phase_s + k
    period_s``; ``state`` holds (current mode, time it was entered). ``members[m, c]`` is 1 when controller ``c``
    runs in mode ``m``; ``managed[c]`` when it is in any mode. Transition ``k``: from mode ``tr_from[k]`` (-1:
    any) to ``tr_to[k]``, condition ``tr_kind[k]`` with value and dwell ``tr_params[k]``, rate source
    ``tr_source[k]`` (an estimator row, -1 the truth); ``since[k]`` when it began to hold (NaN)."""

    period_s: np.ndarray
    phase_s: np.ndarray
    next_k: np.ndarray
    state: np.ndarray
    members: np.ndarray
    managed: np.ndarray
    tr_from: np.ndarray
    tr_to: np.ndarray
    tr_kind: np.ndarray
    tr_params: np.ndarray
    tr_source: np.ndarray
    since: np.ndarray


class MagnetorquerBank(NamedTuple):
    """One row per set of magnetorquers: per-axis limit (A m²), scale (1) or clip (0), applied dipole, saturated."""

    limit_Am2: np.ndarray
    scale: np.ndarray
    dipole_Am2: np.ndarray
    saturated: np.ndarray


class ScheduleBank(NamedTuple):
    """One row per torque schedule: its change times (padded), the held torque after each, the count, the
    next change's index and the torque held now (N m, body axes)."""

    times_s: np.ndarray
    torque_Nm: np.ndarray
    count: np.ndarray
    next_k: np.ndarray
    current_Nm: np.ndarray


class PlaybackBank(NamedTuple):
    """One row per command schedule: its command times (padded), the commands (a wheel torque in column 0, or a
    dipole), the count, the next command's index, and the actuator it drives (``target``: 0 a wheel, 1 a set of
    magnetorquers; ``index``: its row)."""

    times_s: np.ndarray
    values: np.ndarray
    count: np.ndarray
    next_k: np.ndarray
    target: np.ndarray
    index: np.ndarray


PLAYBACK_WHEEL, PLAYBACK_MAGNETORQUER = 0, 1


class Telemetry(NamedTuple):
    """The row layout: ``layout[i] = (ROW_*, bank row)`` per component in mission order; ``environment``
    (1.0: environment columns after the state); the row period and the next row's index (``next_k[0]``,
    -1 once the row at the end is written)."""

    dt_s: float
    duration_s: float
    next_k: np.ndarray
    layout: np.ndarray
    environment: float


class Buffers(NamedTuple):
    """Rows and events written by the loop (``counts[0]`` rows, ``counts[1]`` events), wheel stop scratch, and the
    most events one instant can log (the loop hands over before an instant that might not fit)."""

    rows: np.ndarray
    events: np.ndarray
    counts: np.ndarray
    stops: np.ndarray
    events_per_instant: int
