"""The ensemble's compiled step: every body one control period, in parallel, through the mission's own kernels.

One body's step is a mission's control cycle and the advance that follows
it, made of the very functions a :class:`~attsim.Mission` runs:

1. the wheel commands through :func:`attsim.actuators.kernels.wheel_command`
   (torque limit, speed stop) at the body's rate now, the dipole of three
   bars on the body axes through :func:`attsim.actuators.kernels.saturate_bars`;
2. the plant from ``t_k = k period`` to ``t_(k+1) = (k + 1) period`` with the
   commands held, by :func:`attsim.engine.plant.plant_advance_loop` bound to
   the method's step and :func:`attsim.engine.plant.plant_torque` — the
   advance a mission's plant runs, with its sub-steps of at most
   ``max_step`` and its speed stops.

The state lives in structure-of-arrays form (row ``k`` of every array is
body ``k``); a body's wheel bank is made of its rows, so the same kernels
read and write it in place. The loop over bodies is numba's ``prange``:
bodies are independent, so their order (and the thread count) cannot change
a result. Compiled without reference counting (``_nrt=False``): a body's
rows are views of the ensemble's arrays, which the caller keeps alive, and
counting them would make the threads contend on one counter.
"""

from __future__ import annotations

import math

from numba import prange

from .._core.bind import bind_globals
from .._core.jit import JIT, njit
from .._core.timegrid import grid_time
from ..actuators.kernels import WheelBank, saturate_bars, wheel_command, wheels_total
from ..actuators.wheel_dynamics import inputs_alone
from ..engine.plant import PlantInputs, plant_advance_loop, plant_torque
from ..sensors.kernels import field_body, gyro_measure, magnetometer_measure
from ..integrators.base import code_digest

__all__ = ["ensemble_step_for", "STOPPED", "body_field", "sample_sensors", "GYRO", "MAGNETOMETER"]

# a body's status after a step: the plant's state fault (attsim.engine.checks: SOUND, NOT_FINITE, ...), or STOPPED
# when the method's parameterisation failed (a gimbal lock; only methods that can stop)
STOPPED = -1

_PARALLEL = dict(JIT, parallel=True, _nrt=False)  # no reference counts: views of rows would contend


@njit(**JIT)
def _tuple9(a):
    return (a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8])


def ensemble_step(state, steps, period_s, max_step_s, wheel_cmd, dipole_cmd, tau_ext, axis, w_inertia, w_max_torque,
                  w_max_speed, h, torque, torque_sat, speed_sat, requested, work, dipole_max, dipole_scale, dipole, J,
                  Jinv, params, env_t, env_v, faces, switches, residual, stops, status):
    """Advance every body one control period (a template: ``advance``, ``unpack_state``, ``pack_state`` and
    ``output_state`` are the method's, bound by :func:`ensemble_step_for`).

    Row ``k`` of each array is body ``k``: ``state`` the method's packed state
    at ``t_k = steps[k] period_s``, the commands (``wheel_cmd`` N m,
    ``dipole_cmd`` A m², ``tau_ext`` N m; ``t_k`` snapped as a mission's grids are,
    :func:`attsim._core.timegrid.grid_time`), the wheels' rows of a
    :class:`~attsim.actuators.kernels.WheelBank` (``axis`` and ``work`` are
    shared), the magnetorquer's limits, the dipole applied (written), ``J``
    and ``Jinv`` row-major 9-vectors, ``stops`` the advance's speed-stop
    rows and ``status`` (written: the state's fault or :data:`STOPPED`).
    The environment table is shared (one orbit; each body at its own time).
    """
    n_wheels = axis.shape[0]
    for k in prange(state.shape[0]):
        bank = WheelBank(axis, w_inertia[k], w_max_torque[k], w_max_speed[k], h[k], torque[k], torque_sat[k],
                         speed_sat[k], requested[k], work)
        Jk, Jinvk = _tuple9(J[k]), _tuple9(Jinv[k])
        s = unpack_state(state[k])  # noqa: F821 - bound per method
        q, w = output_state(s, Jk, params)  # noqa: F821
        for j in range(n_wheels):
            wheel_command(bank, j, wheel_cmd[k, j], w)
        m_k = dipole[k]  # three bars on the body axes: each bar's dipole is the body dipole's component
        m_k[0], m_k[1], m_k[2] = dipole_cmd[k, 0], dipole_cmd[k, 1], dipole_cmd[k, 2]
        saturate_bars(m_k, dipole_max[k], dipole_scale)
        m = (m_k[0], m_k[1], m_k[2])
        t0 = grid_time(0.0, steps[k], period_s)  # a mission's controller times (snapped as its grids are)
        t1 = grid_time(0.0, steps[k] + 1, period_s)
        tau_w, h_w = wheels_total(bank)
        inputs = PlantInputs(t0, (tau_ext[k, 0], tau_ext[k, 1], tau_ext[k, 2]), m, tau_w, h_w, env_t, env_v, faces,
                             switches, Jk, residual)
        s, stopped, _, _, fault = advance(s, t0, t1, max_step_s, inputs, bank, Jk, Jinvk, params,  # noqa: F821
                                          stops[k])
        pack_state(s, state[k])  # noqa: F821
        steps[k] += 1
        status[k] = STOPPED if stopped else fault


_STEPS: dict = {}


def ensemble_step_for(integrator):
    """:func:`ensemble_step` bound to ``integrator``'s kernels and the mission's advance with the plain stage
    torque (the very compiled advance :func:`attsim.engine.plant.advance_unit_for` makes), compiled in parallel
    and cached on disk under a name carrying the method's and the plant's digest."""
    if integrator.name not in _STEPS:
        advance = integrator.compiled_template(plant_advance_loop, plant_torque, stage_args=inputs_alone)
        name = f"ensemble_step_{integrator.name}_{code_digest(integrator.step, plant_torque)}"
        bound = bind_globals(ensemble_step, name, advance=advance, unpack_state=integrator.unpack_state,
                             pack_state=integrator.pack_state, output_state=integrator.output_state)
        _STEPS[integrator.name] = njit(**_PARALLEL)(bound)
    return _STEPS[integrator.name]


@njit(**_PARALLEL)
def body_field(state, steps, period_s, env_t, env_v, out):
    """The field of the shared table at each body's time, in its body axes (T), into ``out`` (N, 3): a
    magnetometer's truth (:func:`attsim.sensors.kernels.field_body`), zeros without a table."""
    for k in prange(state.shape[0]):
        q = (state[k, 0], state[k, 1], state[k, 2], state[k, 3])
        out[k, 0], out[k, 1], out[k, 2] = field_body(q, env_t, env_v, grid_time(0.0, steps[k], period_s))


# the sensors an ensemble samples (attsim.sensors.kernels): their kind codes and the columns of their parameters
GYRO, MAGNETOMETER = 0, 1
P_PERIOD, P_NOISE, P_BIAS_RW, P_QUANTIZATION, P_BIAS = 0, 1, 2, 3, 4  # P_BIAS: 3 columns (a magnetometer's)


@njit(**_PARALLEL)
def sample_sensors(state, steps, period_s, env_t, env_v, kinds, draws, parameters, bias, last_t, sampled, normals,
                   position, out):
    """Sample every body's sensors at its time now, as a mission's plain sensors sample (same kernels).

    Sensor ``s`` of body ``k``: ``kinds[s]`` (:data:`GYRO`,
    :data:`MAGNETOMETER`), ``draws[s]`` normals a sample, ``parameters[s]``
    (the ``P_*`` columns), ``bias[k, s]`` a gyro's walking bias (updated),
    ``last_t[k, s]`` its last propagation (NaN: never), ``normals[k, s]`` its
    block of standard normals and ``position[k, s]`` the next one unused
    (the caller refills an exhausted block from the body's stream). A body
    sampled already at this step (``sampled[k] == steps[k]``) keeps its
    readings, as a second read at one instant does. Readings into ``out[k, s]``.
    """
    for k in prange(state.shape[0]):
        if sampled[k] == steps[k]:
            continue
        sampled[k] = steps[k]
        t = grid_time(0.0, steps[k], period_s)
        q = (state[k, 0], state[k, 1], state[k, 2], state[k, 3])
        w = (state[k, 4], state[k, 5], state[k, 6])
        for s in range(kinds.shape[0]):
            p, d = position[k, s], draws[s]
            n = normals[k, s]
            z = (n[p], n[p + 1], n[p + 2], n[p + 3], n[p + 4], n[p + 5]) if d == 6 else \
                (n[p], n[p + 1], n[p + 2], 0.0, 0.0, 0.0) if d == 3 else (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
            par = parameters[s]
            if kinds[s] == GYRO:
                first = math.isnan(last_t[k, s])
                dt = par[P_PERIOD] if first else t - last_t[k, s]
                if dt > 0.0:
                    b = (bias[k, s, 0], bias[k, s, 1], bias[k, s, 2])
                    m, b = gyro_measure(w, b, dt, par[P_NOISE], 0.0 if first else par[P_BIAS_RW], z,
                                        par[P_QUANTIZATION])
                    bias[k, s, 0], bias[k, s, 1], bias[k, s, 2] = b
                    out[k, s, 0], out[k, s, 1], out[k, s, 2] = m
                    position[k, s] = p + d
                last_t[k, s] = t
            else:
                m = magnetometer_measure(field_body(q, env_t, env_v, t),
                                         (par[P_BIAS], par[P_BIAS + 1], par[P_BIAS + 2]), par[P_NOISE], z,
                                         par[P_QUANTIZATION])
                out[k, s, 0], out[k, s, 1], out[k, s, 2] = m
                position[k, s] = p + d
