"""Several users' numba laws in one mission, each its own unit at its own rate, in modes; a law driving wheels, a
magnetorquer and a body torque together and reading wheels, a magnetorquer and an estimator (issue 22 item 5): the
same run on the Python path and in the loop, compiled and interpreted."""

import numba
import numpy as np

import attsim
from attsim.control import modes
from attsim.control.numba_law import (STATE_BIAS, STATE_DIPOLE, STATE_Q, STATE_RATE, STATE_WHEEL_MOMENTUM,
                                      STATE_WHEEL_SPEED)

from tests.paths.test_mission_loop import J, _field_history, _wheels, assert_same_run, both_ways

# full_law's state rows (its reads, in order) and its commands (three wheels, then the dipole, then the torque)
WHEEL_ROWS, MTQ_ROW, MEKF_ROW = (0, 1, 2), 3, 4
DIPOLE_AT, TORQUE_AT = 3, 6
KP, KD, K_UNLOAD, K_DAMP = 0, 1, 2, 3


@numba.njit
def full_law(t_s, readings, state, parameters, memory, commands):
    """PD to the identity on the MEKF's attitude and rate through the wheels, unloading their momentum through the
    magnetorquer (field from the magnetometer, readings row 0), a body torque from the wheels' speeds and the bias."""
    sign = 1.0 if state[MEKF_ROW, STATE_Q] >= 0.0 else -1.0
    h = np.zeros(3)
    b = readings[0, :3]
    for i in range(3):
        commands[i] = (parameters[KP] * sign * state[MEKF_ROW, STATE_Q + 1 + i]
                       + parameters[KD] * state[MEKF_ROW, STATE_RATE + i])  # NaN before the MEKF's first estimate
        h[i] = state[WHEEL_ROWS[i], STATE_WHEEL_MOMENTUM]
        commands[TORQUE_AT + i] = (-parameters[K_DAMP] * state[MEKF_ROW, STATE_BIAS + i]
                                   + 1e-9 * state[WHEEL_ROWS[i], STATE_WHEEL_SPEED])
    m = parameters[K_UNLOAD] * np.cross(h, b) / np.dot(b, b)
    for i in range(3):
        commands[DIPOLE_AT + i] = m[i] + 0.0 * state[MTQ_ROW, STATE_DIPOLE + i]
    memory[0] += 1.0
    memory[1] = state[WHEEL_ROWS[0], STATE_WHEEL_SPEED]
    memory[2] = state[MTQ_ROW, STATE_DIPOLE]


@numba.njit
def damping_law(t_s, readings, parameters, memory, commands):
    """The five-argument form: a body torque against the gyro's rate."""
    for i in range(3):
        commands[i] = -parameters[0] * readings[0, i]


@numba.njit
def dipole_echo_law(t_s, readings, state, parameters, memory, commands):
    """A body torque proportional to the magnetorquer's dipole another law commanded (at this instant too)."""
    for i in range(3):
        commands[i] = parameters[0] * state[0, STATE_DIPOLE + i]


def _full_mission(out, delay_s=0.0, switched=True):
    m = attsim.Mission("numba_laws", J, (0.01, -0.02, 0.015), duration=8.0, max_step=0.1, telemetry_dt=0.5,
                       seed=7, out_dir=out, field=_field_history(8.0, "linear"))
    wheels = _wheels(m)
    mag = m.add(attsim.Magnetometer(2.0, noise_T=1e-8))
    gyro = m.add(attsim.Gyro(10.0, arw_rad_sqrt_s=1e-5, bias_rad_s=(2e-4, -1e-4, 1e-4)))
    tracker = m.add(attsim.StarTracker(2.0, noise_arcsec=10.0))
    mekf = m.add(attsim.MEKF(gyro, star_tracker=tracker, q0=(1.0, 0.0, 0.0, 0.0)))
    mtq = m.add(attsim.Magnetorquer(0.2))
    bt0, bt1 = m.add(attsim.BodyTorque("bt0")), m.add(attsim.BodyTorque("bt1"))
    full = m.add(attsim.NumbaController(full_law, 0.5, sensors=[mag], wheels=wheels, magnetorquer=mtq,
                                        body_torque=bt0, parameters=(2e-3, 2e-2, 0.5, 1e-3), memory_size=3,
                                        reads=wheels + [mtq, mekf], name="full", command_delay_s=delay_s))
    m.add(attsim.NumbaController(dipole_echo_law, 0.3, body_torque=bt1, reads=["mtq"], parameters=(1e-5,),
                                 phase_s=0.1, name="echo"))
    if switched:
        damp = m.add(attsim.NumbaController(damping_law, 0.2, sensors=[gyro], body_torque=bt0, parameters=(1e-3,),
                                            name="damp"))
        m.add(attsim.ModeManager(modes=[("full", [full]), ("damp", [damp])],
                                 transitions=[("full", "damp", modes.at_time(5.0))], initial="full", period_s=1.0))
    return m


def test_several_laws_in_modes_drive_and_read_everything_alike_on_both_paths(tmp_path):
    python, compiled = both_ways(tmp_path, _full_mission)
    assert_same_run(python, compiled)
    df = compiled.df
    # every kind was driven: the wheels and the dipole by the full law, bt0 by it then the damping law, bt1 by echo
    assert df.loc[:4.5, ["rw_x_torque", "mtq_m_x"]].abs().max().min() > 0.0
    assert df.loc[0.5, "bt1_tau_x"] != 0.0
    assert df.loc[5.5:, ["rw_x_torque", "rw_y_torque", "rw_z_torque", "mtq_m_x"]].abs().max().max() == 0.0
    assert (df.loc[5.5:, "bt0_tau_x"] != df.loc[4.5, "bt0_tau_x"]).all()  # the damping law's torque after the switch


def test_a_law_driving_every_kind_keeps_its_layout_through_a_delay(tmp_path):
    def build(out):
        return _full_mission(out, delay_s=0.5, switched=False)

    python, compiled = both_ways(tmp_path, build)
    assert_same_run(python, compiled)
    assert compiled.df["mtq_m_x"].abs().max() > 0.0 and compiled.df["bt0_tau_x"].abs().max() > 0.0


def test_the_state_a_law_reads_is_the_wheels_and_magnetorquers_own(tmp_path):
    mission = _full_mission(tmp_path, switched=False)
    tel = mission.run(compiled=True, backend="interpreted")
    full = next(c for c in mission.components if c.name == "full")
    assert full.memory[0] == 17.0  # cycles at 0, 0.5, ..., 8 s
    # read at the last cycle (8 s): the wheel's speed then, and the dipole held from the cycle before
    assert full.memory[1] == tel.df.loc[8.0, "rw_x_speed"]
    assert full.memory[2] == tel.df.loc[7.5, "mtq_m_x"] != 0.0
