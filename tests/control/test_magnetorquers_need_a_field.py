"""Magnetorquers commanded in a mission without a magnetic field: refused whoever commands them.

The built-in magnetic laws (B-dot, MagneticPD, MomentumUnloading, a
QuaternionPD on magnetorquers) were refused without a field, but the same
dipoles commanded by the user's own law (a ``FunctionController``, a
``Controller`` subclass) or played back by a ``CommandSchedule`` ran to the
end making no torque at all: the rate stayed exactly as it was, without a word.
"""

import numpy as np
import pytest

import attsim
from attsim.environment import Environment, KeplerOrbit

J = np.diag([0.06, 0.055, 0.02])
FIELD_T = (2e-5, -1e-5, 3e-5)
W0 = (0.01, -0.02, 0.015)


def _mission(tmp_path, **kw):
    return attsim.Mission("mtq", J, W0, duration=5.0, max_step=0.1, out_dir=tmp_path / "mtq", **kw)


class Damper(attsim.Controller):
    """A user's own magnetic law: m = -k B x (B x omega) from the true rate, on the magnetorquers."""

    def decide(self, t_s, readings):
        return {"mtq": np.array([0.05, -0.05, 0.05])}


def _function_law(m, mag):
    return attsim.FunctionController(lambda t_s, readings: {"mtq": np.array([0.05, -0.05, 0.05])}, period_s=1.0,
                                     sensors=[mag], actuators=["mtq"], name="my_law")


def _subclass_law(m, mag):
    return Damper("my_law", 1.0, sensors=[mag], actuators=["mtq"])


def _schedule(m, mag):
    return attsim.CommandSchedule("mtq", [(1.0, (0.05, -0.05, 0.05))], name="my_law")


LAWS = {"FunctionController": (_function_law, [False]), "Controller subclass": (_subclass_law, [False]),
        "CommandSchedule": (_schedule, [False, True])}
CASES = [(kind, compiled) for kind, (_, paths) in LAWS.items() for compiled in paths]
NO_FIELD = {"none": {}, "zero": {"field": (0.0, 0.0, 0.0)},
            "environment without a field model": {"environment": Environment(KeplerOrbit.circular(550.0, 97.6),
                                                                             field=None)}}


@pytest.mark.parametrize("kind, compiled", CASES)
@pytest.mark.parametrize("no_field", list(NO_FIELD))
def test_magnetorquers_commanded_without_a_field_are_refused_naming_who_commands_them(tmp_path, kind, compiled,
                                                                                         no_field):
    m = _mission(tmp_path, **NO_FIELD[no_field])
    mag = m.add(attsim.Magnetometer(1.0))
    m.add(attsim.Magnetorquer(0.2))
    m.add(LAWS[kind][0](m, mag))
    with pytest.raises(attsim.InputError, match=r"^field: .*'my_law'.*needs a magnetic field"):
        m.run(compiled=compiled)


@pytest.mark.parametrize("kind, compiled", CASES)
def test_with_a_field_the_same_commands_turn_the_body(tmp_path, kind, compiled):
    m = _mission(tmp_path, field=FIELD_T)
    mag = m.add(attsim.Magnetometer(1.0))
    m.add(attsim.Magnetorquer(0.2))
    m.add(LAWS[kind][0](m, mag))
    free = _mission(tmp_path / "free", field=FIELD_T).run(compiled=compiled, in_memory=True).df
    df = m.run(compiled=compiled, in_memory=True).df
    assert np.abs(df[["wx", "wy", "wz"]].iloc[-1] - free[["wx", "wy", "wz"]].iloc[-1]).max() > 1e-6


@pytest.mark.parametrize("compiled", [False, True])
def test_magnetorquers_nobody_commands_and_wheel_laws_need_no_field(tmp_path, compiled):
    m = _mission(tmp_path)
    m.add(attsim.Magnetorquer(0.2))  # on board, idle: no torque is expected of it
    m.add(attsim.ReactionWheel("rw", (0.0, 0.0, 1.0), 2e-5, 1e-3, 600.0))
    m.add(attsim.CommandSchedule("rw", [(1.0, 1e-4)]))
    assert np.isfinite(m.run(compiled=compiled, in_memory=True).df.to_numpy()).all()
