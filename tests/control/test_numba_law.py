"""A NumbaController's arguments (issue 22 item 5): its law's signature, what it reads, what it drives and its
commands' layout, checked by name; the equivalence of the paths is in tests/paths/test_numba_controllers.py."""

import numba
import numpy as np
import pytest

import attsim
from attsim.actuators.devices import BarDipoles
from attsim.control.numba_law import CommandLayout

J = np.diag([0.04, 0.045, 0.05])


@numba.njit
def five(t_s, readings, parameters, memory, commands):
    commands[0] = 0.0


@numba.njit
def six(t_s, readings, state, parameters, memory, commands):
    commands[0] = state[0, 0]


@numba.njit
def holds(t_s, readings, parameters, memory, commands):
    return None  # every entry NaN: every command holds


@numba.njit
def starred(*arguments):
    return None


def _mission(tmp_path):
    m = attsim.Mission("checks", J, (0.0, 0.0, 0.0), duration=1.0, out_dir=tmp_path)
    m.add(attsim.ReactionWheel("rw", (0, 0, 1), 2e-5, 2e-3, 600.0))
    m.add(attsim.Gyro(10.0, arw_rad_sqrt_s=1e-5))
    return m


@pytest.mark.parametrize("law, reads, message", [
    (six, (), r"^decide: must take 5 arguments, decide\(t_s, readings, parameters, memory, commands\) \(give reads"),
    (five, ["rw"], r"^decide: must take 6 arguments, decide\(t_s, readings, state, parameters, memory, commands\)"),
    (starred, (), r"^decide: must take 5 arguments.*got starred\(\)"),
    (lambda *a: None, ["rw"], r"^decide: must be a numba.njit-compiled function decide\(t_s, readings, state"),
])
def test_a_law_whose_signature_does_not_match_is_refused(law, reads, message):
    with pytest.raises(attsim.InputError, match=message):
        attsim.NumbaController(law, 1.0, wheels=["rw"], reads=reads)


def test_what_a_law_reads_is_checked_by_name(tmp_path):
    with pytest.raises(attsim.InputError, match=r"^reads: NumbaController 'law' needs what it reads: a reaction wheel"):
        attsim.NumbaController(six, 1.0, wheels=["rw"], reads=[attsim.Gyro(1.0)], name="law")
    with pytest.raises(attsim.InputError, match=r"^reads: NumbaController 'law' lists 'rw' more than once"):
        attsim.NumbaController(six, 1.0, wheels=["rw"], reads=["rw", "rw"], name="law")
    with pytest.raises(attsim.InputError, match="^reads: must be a sequence"):
        attsim.NumbaController(six, 1.0, wheels=["rw"], reads="rw")
    m = _mission(tmp_path)
    m.add(attsim.NumbaController(six, 1.0, wheels=["rw"], reads=["nothing"], name="law"))
    with pytest.raises(attsim.InputError, match=r"^reads: controller 'law' uses 'nothing', which is not in the "):
        m.run(compiled=False)
    m = _mission(tmp_path / "gyro")
    m.add(attsim.NumbaController(six, 1.0, wheels=["rw"], reads=["gyro"], name="law"))
    with pytest.raises(attsim.InputError, match=r"^reads: controller 'law' needs what it reads.*got Gyro 'gyro'"):
        m.run(compiled=False)
    m = _mission(tmp_path / "mekf")
    gyro = next(c for c in m.components if c.name == "gyro")
    m.add(attsim.MEKF(gyro, star_tracker=m.add(attsim.StarTracker(1.0, noise_arcsec=10.0))))
    m.add(attsim.NumbaController(six, 1.0, wheels=["rw"], reads=["mekf"], name="law"))
    with pytest.raises(attsim.InputError, match=r"^reads: controller 'law' reads estimator 'mekf' by name"):
        m.run(compiled=False)


def test_a_magnetorquer_read_is_driven_earlier_in_the_mission(tmp_path):
    m = attsim.Mission("late", J, (0.0, 0.0, 0.0), duration=1.0, out_dir=tmp_path, field=(2e-5, 0.0, 3e-5))
    m.add(attsim.ReactionWheel("rw", (0, 0, 1), 2e-5, 2e-3, 600.0))
    mtq = m.add(attsim.Magnetorquer(0.1))
    m.add(attsim.NumbaController(six, 1.0, wheels=["rw"], reads=[mtq], name="reader"))
    m.add(attsim.NumbaController(five, 1.0, magnetorquer=mtq, name="driver"))
    with pytest.raises(attsim.InputError, match=r"^reads: controller 'reader' reads the dipole of 'mtq' decided at "
                                                r"the same instant: add 'driver'"):
        m.run(compiled=False)


def test_what_a_law_drives_is_checked_by_name():
    with pytest.raises(attsim.InputError, match="^actuators: give a NumbaController something to drive"):
        attsim.NumbaController(five, 1.0)
    with pytest.raises(attsim.InputError, match=r"^magnetorquer: NumbaController 'law' needs magnetorquers"):
        attsim.NumbaController(five, 1.0, magnetorquer=attsim.BodyTorque("bt"), name="law")
    with pytest.raises(attsim.InputError, match=r"^body_torque: NumbaController 'law' needs a body-torque actuator"):
        attsim.NumbaController(five, 1.0, wheels=["rw"], body_torque=attsim.Magnetorquer(0.1), name="law")


@pytest.mark.parametrize("arguments, layout", [
    (dict(wheels=["a", "b"]), CommandLayout(2, -1, -1, 2)),
    (dict(magnetorquer="mtq"), CommandLayout(0, 0, -1, 3)),
    (dict(body_torque="bt"), CommandLayout(0, -1, 0, 3)),
    (dict(wheels=["a", "b", "c", "d"], magnetorquer="mtq", body_torque="bt"), CommandLayout(4, 4, 7, 10)),
    (dict(wheels=["a"], body_torque="bt"), CommandLayout(1, -1, 1, 4)),
])
def test_the_commands_layout_is_wheels_then_dipole_then_torque(arguments, layout):
    assert attsim.NumbaController(five, 1.0, **arguments).command_layout == layout


BARS = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [0.7, 0.7, 0.0]]


def test_a_layout_is_said_entry_by_entry():
    assert CommandLayout(1, 1, 5, 8, 4).described() == ("8 entries: 0 the wheels' motor torques, 1-4 the bars' "
                                                        "dipoles, 5-7 the body torque")
    assert CommandLayout(0, 0, -1, 3, 0).described() == "3 entries: 0-2 the dipole"


def test_a_law_commanding_each_bar_lays_out_one_entry_per_bar(tmp_path):
    bars = attsim.Magnetorquer(0.1, bar_axes=BARS, name="mtq")
    law = attsim.NumbaController(five, 1.0, wheels=["a"], magnetorquer=bars, body_torque="bt",
                                 magnetorquer_command="bars")
    assert law.command_layout == CommandLayout(1, 1, 5, 8, 4)
    # given by name, the bars are counted when the mission resolves it
    m = attsim.Mission("by_name", J, (0.0, 0.0, 0.0), duration=1.0, out_dir=tmp_path, field=(3e-5, 0.0, 0.0))
    m.add(attsim.Magnetorquer(0.1, bar_axes=BARS[:2], name="mtq"))
    law = m.add(attsim.NumbaController(holds, 1.0, magnetorquer="mtq", magnetorquer_command="bars"))
    assert law.command_layout is None
    m.run(backend="interpreted")
    assert law.command_layout == CommandLayout(0, 0, -1, 2, 2)


def test_bar_commands_are_refused_where_they_make_no_sense(tmp_path):
    with pytest.raises(attsim.InputError, match=r"^magnetorquer_command: NumbaController 'law': 'bars' needs a "
                                                r"magnetorquer="):
        attsim.NumbaController(five, 1.0, wheels=["rw"], magnetorquer_command="bars", name="law")
    with pytest.raises(attsim.InputError, match=r"^magnetorquer_command: must be one of"):
        attsim.NumbaController(five, 1.0, magnetorquer="mtq", magnetorquer_command="bar")
    # bar by bar comes from a user's law only: a schedule plays body dipoles
    m = attsim.Mission("played", J, (0.0, 0.0, 0.0), duration=1.0, out_dir=tmp_path, field=(3e-5, 0.0, 0.0))
    m.add(attsim.Magnetorquer(0.1, name="mtq"))
    m.add(attsim.CommandSchedule("mtq", [(0.5, BarDipoles((0.01, 0.0, 0.0)))], name="playback"))
    with pytest.raises(attsim.InputError, match=r"^playback.commands\[0\]: must be a body dipole"):
        m.run(backend="interpreted")
