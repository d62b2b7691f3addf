"""The hardware catalogue (issue 22, item 8): wheels and magnetorquers by name, each figure with its source."""

import json
import math

import numpy as np
import pytest

import attsim
from attsim.actuators.catalogue import MAGNETORQUERS, RPM, SOURCES, WHEELS, Figure, wheel_spec
from attsim.errors import InputError


def test_every_figure_names_a_source_and_the_inertia_is_basilisks():
    for sizes in WHEELS.values():
        for momentum, spec in sizes.items():
            figures = [f for f in spec[1:]]
            assert all(isinstance(f, Figure) and f.source in SOURCES for f in figures), spec.model
            assert spec.max_momentum_Nms.value == momentum
            if spec.max_speed_rad_s.value is not None:  # Basilisk's Js = maxMomentum / Omega_max
                assert spec.inertia_kg_m2.value == momentum / spec.max_speed_rad_s.value
                assert spec.inertia_kg_m2.source == "derived"
    for spec in MAGNETORQUERS.values():
        assert all(f.source in SOURCES and f.value > 0 for f in spec[1:])


def test_the_hr16_in_its_three_sizes_as_basilisks_rwfactory_gives_it():
    # simIncludeRW.rwFactory.Honeywell_HR16 (tools/compare_basilisk_catalogue.py checks every shared wheel on bsk)
    for momentum, mass, u_s, u_d in ((100, 12.0, 4.8e-6, 15.4e-7), (75, 10.4, 3.8e-6, 11.5e-7),
                                     (50, 9.0, 2.8e-6, 7.7e-7)):
        wheel = attsim.ReactionWheel.from_catalogue("Honeywell HR16", f"rw{momentum}", (0, 0, 1),
                                                    max_momentum_Nms=momentum, friction=True, imbalance=True,
                                                    position_m=(0.1, 0.0, 0.0))
        assert wheel.max_speed_rad_s == 6000.0 * RPM == 6000.0 * 2 * math.pi / 60
        assert wheel.inertia_kg_m2 == momentum / (6000.0 * RPM) and wheel.max_torque_Nm == 0.2
        assert (wheel.coulomb_friction_Nm, wheel.static_imbalance_kg_m, wheel.dynamic_imbalance_kg_m2) == (5e-4, u_s,
                                                                                                            u_d)
        assert wheel_spec("Honeywell HR16", momentum).mass_kg.value == mass
        assert wheel.catalogue_model == f"Honeywell HR16 ({momentum} N m s)"
    plain = attsim.ReactionWheel.from_catalogue("Honeywell HR16", "rw", (1, 0, 0), max_momentum_Nms=50.0,
                                                speed0_rad_s=100 * RPM)
    assert not plain.has_friction and not plain.has_imbalance and plain.speed0_rad_s == 100 * RPM  # as Basilisk's


def test_small_wheels_and_rods():
    rwp015 = attsim.ReactionWheel.from_catalogue("Blue Canyon RWP015", "rw", (1, 0, 0))
    assert (rwp015.inertia_kg_m2, rwp015.max_torque_Nm) == (0.015 / (6000 * RPM), 0.004)
    assert not wheel_spec("Blue Canyon RWP015").max_speed_rad_s.published  # Basilisk's estimate, and so marked
    rwp050 = attsim.ReactionWheel.from_catalogue("Blue Canyon RWP050", "rw", (1, 0, 0), max_speed_rad_s=600.0)
    assert (rwp050.inertia_kg_m2, rwp050.max_torque_Nm, rwp050.max_speed_rad_s) == (0.05 / 600.0, 0.007, 600.0)
    rods = attsim.Magnetorquer.from_catalogue("NewSpace NCTR-M002", saturation="scale", name="rods")
    assert np.array_equal(rods.dipole_max_Am2, [0.2, 0.2, 0.2]) and rods.saturation == "scale"


@pytest.mark.parametrize("make, field", [
    (lambda: attsim.ReactionWheel.from_catalogue("Honeywell HR17", "rw", (1, 0, 0)), "model"),
    (lambda: attsim.ReactionWheel.from_catalogue("Honeywell HR16", "rw", (1, 0, 0)), "max_momentum_Nms"),
    (lambda: attsim.ReactionWheel.from_catalogue("Honeywell HR16", "rw", (1, 0, 0), 60.0), "max_momentum_Nms"),
    (lambda: attsim.ReactionWheel.from_catalogue("Honeywell HR16", "rw", (1, 0, 0), "50"), "max_momentum_Nms"),
    (lambda: attsim.ReactionWheel.from_catalogue("Honeywell HR16", "rw", (1, 0, 0), 50, max_speed_rad_s=500.0),
     "max_speed_rad_s"),
    (lambda: attsim.ReactionWheel.from_catalogue("Blue Canyon RWP050", "rw", (1, 0, 0)), "max_speed_rad_s"),
    (lambda: attsim.ReactionWheel.from_catalogue("Blue Canyon RWP050", "rw", (1, 0, 0), max_speed_rad_s=-1.0),
     "max_speed_rad_s"),
    (lambda: attsim.ReactionWheel.from_catalogue("Blue Canyon RWP050", "rw", (1, 0, 0), max_speed_rad_s=600.0,
                                                 friction=True), "friction"),
    (lambda: attsim.ReactionWheel.from_catalogue("Honeywell HR16", "rw", (1, 0, 0), 50, position_m=(0, 0, 0)),
     "position_m"),
    (lambda: attsim.ReactionWheel.from_catalogue("Honeywell HR16", "rw", (1, 0, 0), 50, imbalance=True),
     "position_m"),
    (lambda: attsim.ReactionWheel.from_catalogue("Honeywell HR16", "rw", (0, 0, 0), 50), "axis"),
    (lambda: attsim.ReactionWheel.from_catalogue("Honeywell HR16", "rw", (1, 0, 0), 50, speed0_rad_s=1e4),
     "speed0_rad_s"),
    (lambda: attsim.Magnetorquer.from_catalogue("NCTR-M002"), "model"),
])
def test_bad_catalogue_requests_are_refused_by_name(make, field):
    with pytest.raises(InputError) as caught:
        make()
    assert caught.value.field == field


def test_the_run_records_the_catalogue_model(tmp_path):
    mission = attsim.Mission("catalogue", np.diag([900.0, 800.0, 600.0]), (0.0, 0.0, 0.0), duration=1.0,
                             max_step=0.1, out_dir=tmp_path, field=(2e-5, 0.0, 3e-5))
    mission.add(attsim.ReactionWheel.from_catalogue("Honeywell HR16", "rw1", (1, 0, 0), max_momentum_Nms=50))
    mission.add(attsim.Magnetorquer.from_catalogue("NewSpace NCTR-M002"))
    mission.run(compiled=False)
    described = {c["name"]: c for c in json.loads((tmp_path / "meta.json").read_text())["components"]}
    assert described["rw1"]["catalogue_model"] == "Honeywell HR16 (50 N m s)"
    assert described["mtq"]["catalogue_model"] == "NewSpace NCTR-M002"


def test_a_figure_no_source_gives_is_asked_for_before_the_sources_are_cited():
    with pytest.raises(InputError) as caught:
        attsim.ReactionWheel.from_catalogue("Blue Canyon RWP050", "rw", (1, 0, 0))
    message = str(caught.value)
    assert message.startswith("max_speed_rad_s: is not published for the Blue Canyon RWP050: give it "
                              "(max_speed_rad_s=...)"), message
    assert message.index("give it") < message.index("sources:")
