"""Basilisk's published scenarios rebuilt from attsim's built-ins (missions/basilisk_*.py): the mission briefly
against numbers Basilisk printed (always), and the whole comparison tool against Basilisk itself (when bsk is
installed, the bench extra)."""

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

from attsim import rotations

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "missions")]

import basilisk_attitude_feedback_rw as feedback_rw  # noqa: E402
import basilisk_attitude_guidance as guidance  # noqa: E402

def _assert_body_matches(row, t, sigma, omega, angle_deg: float, rate_rad_s: float) -> None:
    """attsim's attitude and body rate in the telemetry ``row`` at ``t`` are within ``angle_deg`` of Basilisk's MRPs
    ``sigma`` and ``rate_rad_s`` (each component) of its ``omega``."""
    angle = rotations.quat_angle_between(row[["qw", "qx", "qy", "qz"]].to_numpy(), rotations.mrp_to_quat(sigma))
    assert np.degrees(angle) < angle_deg, t
    assert row[["wx", "wy", "wz"]].to_numpy() == pytest.approx(omega, rel=0, abs=rate_rad_s), t


def _assert_wheel_speeds_match(row, t, wheels, speeds_rad_s, rad_s_per_rpm: float) -> None:
    """The ``wheels``' speeds in the telemetry ``row`` at ``t`` are within 1e-6 rpm of Basilisk's ``speeds_rad_s``."""
    assert np.abs(row[[f"{w}_speed" for w in wheels]].to_numpy() - speeds_rad_s).max() / rad_s_per_rpm < 1e-6, t


# Basilisk 2.12.1's scenarioAttitudeFeedbackRW (tools/peers/basilisk_feedback_rw.py, logging every 6 s), printed
# to 17 digits: t, sigma_BN, omega_BN_B, the wheel speeds (rad/s) and rwMotorTorque's output (N m)
BASILISK_FEEDBACK_RW = [
    (6.0, (0.10513634580992925, 0.17011718400867448, -0.2549357081307714),
     (-0.00015409963731574487, -0.011847784720132475, 0.030442185307418934),
     (25.552774348834298, 36.02544354588309, 26.795948178471303),
     (0.36335422121528005, 0.23997660242638652, 0.02099058076486826)),
    (12.0, (0.10639101014850792, 0.1393667009810163, -0.21144025724088567),
     (-0.0011210588387560666, -0.013567270279902233, 0.029303616774840984),
     (40.63338604526674, 47.690006519317535, 33.06787596831531),
     (0.3387367703570957, 0.08076534503649008, 0.1390676029021296)),
    (18.0, (0.10437781927185126, 0.10879643084188788, -0.17141837783123073),
     (-0.0019552899546779316, -0.01441706502714543, 0.027074459844861575),
     (55.71386501361368, 48.69628752172505, 46.424116176526745),
     (0.30666366881114143, -0.051724442867755294, 0.21226947293653975)),
]


def test_feedback_rw_mission_follows_basilisks_first_twenty_seconds():
    mission = feedback_rw.build()
    mission.duration_s = 18.0
    tel = mission.run(in_memory=True, backend="interpreted")
    df = tel.df
    wheels = [f"rw{k}" for k in (1, 2, 3)]
    # t = 0: -(K sigma + P omega) = (0.38, 0.40, -0.15) N m, per-wheel clipped at the HR16's 0.2 N m
    assert df.loc[0.0, [f"{w}_torque_cmd" for w in wheels]].to_numpy() == pytest.approx([0.38, 0.40, -0.15], abs=1e-15)
    assert df.loc[0.0, [f"{w}_torque" for w in wheels]].to_numpy() == pytest.approx([0.2, 0.2, -0.15], abs=1e-15)
    for t, sigma, omega, speeds, request in BASILISK_FEEDBACK_RW:
        row = df.loc[t]
        _assert_body_matches(row, t, sigma, omega, angle_deg=1e-9, rate_rad_s=1e-14)
        _assert_wheel_speeds_match(row, t, wheels, speeds, feedback_rw.RPM)
        assert row[[f"{w}_torque_cmd" for w in wheels]].to_numpy() == pytest.approx(request, rel=0, abs=1e-9)
    law = next(c for c in tel.meta["components"] if c["type"] == "MRPFeedback")
    assert law["allocation"] == "clip" and law["control_axes"] == np.eye(3).tolist()


def _compare_tool(name: str):
    """``tools/compare_basilisk_<name>.py``, loaded as a module (tools/ is not a package)."""
    path = ROOT / "tools" / f"compare_basilisk_{name}.py"
    spec = importlib.util.spec_from_file_location(f"compare_{name}", path)
    compare = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(compare)
    return compare


def _assert_wheel_mission_meets_targets(name: str) -> None:
    """The tool ``name``'s agreement (attsim interpreted, every step) is within every one of its targets."""
    compare = _compare_tool(name)
    figures = compare.agreement(compare.peer.run(compare.peer.DT_S),
                                compare.run_attsim(compare.peer.DT_S, backend="interpreted"))
    _assert_within(figures, compare.TARGETS)


def _assert_within(figures: dict, targets: dict) -> None:
    for name, target in targets.items():
        assert figures[name][0] <= target, (name, figures[name])


def test_feedback_rw_agrees_with_basilisk_over_the_whole_run():
    pytest.importorskip("Basilisk.fswAlgorithms.mrpFeedback")
    _assert_wheel_mission_meets_targets("feedback_rw")


# Basilisk 2.12.1's scenarioAttitudeGuidance (tools/peers/basilisk_attitude_guidance.py, logging every 6 s), printed
# to 17 digits: t, sigma_BN, omega_BN_B and mrpFeedback's torque request (N m)
BASILISK_GUIDANCE = [
    (6.0, (0.09920851871960155, 0.1788809432096509, -0.2850044887196906),
     (0.003054661900488529, -0.00995959527751331, -0.006244973253533387),
     (0.25057842822625287, -0.008191361857672993, -3.1601173135562255)),
    (12.0, (0.08599754347565532, 0.17060180297351585, -0.3209267526779572),
     (0.004513183368682184, -0.009859077077446553, -0.033018694464717814),
     (0.10413726614173888, -0.00969919742633293, -2.144871527384545)),
    (18.0, (0.06354810188646855, 0.1696311847760412, -0.3937200021943664),
     (0.0053899739880381835, -0.009412162608079106, -0.05008505754484567),
     (-0.002948583949941987, 0.0023393131393743593, -1.2403534096028577)),
]


def test_guidance_mission_follows_basilisks_first_twenty_seconds():
    mission = guidance.build()
    mission.duration_s, mission.telemetry_dt_s = 18.2, 0.1
    tel = mission.run(in_memory=True, backend="interpreted")
    df = tel.df
    torque, command = [f"ext_torque_tau_{a}" for a in "xyz"], [f"ext_torque_tau_decided_{a}" for a in "xyz"]
    assert (df.loc[0.0, torque].to_numpy() == 0.0).all()  # nothing decided before t = 0: the first step is free
    for t, sigma, omega, request in BASILISK_GUIDANCE:
        _assert_body_matches(df.loc[t], t, sigma, omega, angle_deg=1e-6, rate_rad_s=1e-11)
        # the request decided at t (Basilisk's cmdTorqueInMsg at t) acts from t + 0.1 s (command_delay_s: Basilisk's
        # task order)
        assert df.loc[t, command].to_numpy() == pytest.approx(request, rel=0, abs=1e-6)
        assert np.array_equal(df.loc[round(t + 0.1, 1), torque].to_numpy(), df.loc[t, command].to_numpy())
    law = next(c for c in tel.meta["components"] if c["type"] == "MRPFeedback")
    assert law["command_delay_s"] == 0.1


def test_guidance_agrees_with_basilisk_over_the_whole_run():
    pytest.importorskip("Basilisk.fswAlgorithms.mrpFeedback")
    compare = _compare_tool("attitude_guidance")
    bsk = compare.peer.run(compare.peer.DT_S)
    _assert_within({**compare.orbit_and_reference(bsk, compare.peer.DT_S), **compare.closed_loop(bsk)},
                   compare.TARGETS)


# Basilisk 2.12.1's scenarioMtbMomentumManagementSimple (tools/peers/basilisk_mtb_momentum.py, logging every step),
# printed to 17 digits: t, sigma_BN, omega_BN_B, the wheel speeds (rad/s) and dipoleMapping's bar dipoles (A m^2)
BASILISK_MTB = [
    (6.0, (0.1012968086987041, 0.17450252962659718, -0.2569127102109867),
     (-0.0037740628201801034, -0.010234518597258286, 0.025817744354099514),
     (10.368732062073905, 3.7529376990303165, 7.119965039024732, 5.089348783126819),
     (-3.1702603367940885e-05, -0.009351395456007003, 0.00033644960718665344, -0.006634852255188865)),
    (12.0, (0.09797239699084043, 0.1522735780151806, -0.22001688253777288),
     (-0.0038601818946095434, -0.01037824567080399, 0.022073889932864032),
     (19.52620240999098, 7.394459636054263, 13.35878690083183, 10.729262736856422),
     (-0.0034453061254910216, -0.013731308233403518, -0.0005363820147577694, -0.012145700470619681)),
    (18.0, (0.09358353671586202, 0.13171233110781147, -0.18931662245283237),
     (-0.0033871930032052465, -0.010184043363073828, 0.01883630240772593),
     (27.61426844362196, 10.956167163711735, 19.3933698957847, 16.166333716437812),
     (-0.00851437588823415, -0.015153750978765073, -0.0015975493153682196, -0.01673589297755531)),
]


def test_mtb_momentum_mission_follows_basilisks_first_twenty_seconds():
    import basilisk_mtb_momentum_management as mtb

    mission = mtb.build()
    mission.duration_s, mission.telemetry_dt_s = 18.0, 6.0
    tel = mission.run(in_memory=True, backend="interpreted")
    df = tel.df
    wheels, bars = [f"rw{k}" for k in (1, 2, 3, 4)], [f"mtb_bar{k}" for k in (1, 2, 3, 4)]
    assert np.abs(df.loc[0.0, bars].to_numpy()).max() < 1e-18  # the wheels start at rest: nothing to dump
    for t, sigma, omega, speeds, dipoles in BASILISK_MTB:
        row = df.loc[t]
        # Basilisk integrates MRPs, attsim a quaternion: RK4's truncation differs by ~1e-11 rad a 0.5 s step here
        _assert_body_matches(row, t, sigma, omega, angle_deg=2e-8, rate_rad_s=1e-12)
        _assert_wheel_speeds_match(row, t, wheels, speeds, mtb.RPM)
        assert row[bars].to_numpy() == pytest.approx(dipoles, rel=0, abs=1e-10)
    law = next(c for c in tel.meta["components"] if c["type"] == "MRPFeedback")
    assert law["magnetorquer_feedforward"] == "mtb" and law["allocation"] == "clip"


def test_mtb_momentum_agrees_with_basilisk_over_the_whole_run():
    pytest.importorskip("Basilisk.fswAlgorithms.mtbFeedforward")
    _assert_wheel_mission_meets_targets("mtb_momentum")
