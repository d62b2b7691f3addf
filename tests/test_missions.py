"""Every mission script passes its own criteria under `attsim run` (and runs on its own).

The missions run through the command line's own entry point in this process (`attsim.cli.main`, what the `attsim`
executable calls): a process for each would import the same modules 24 times over. The default mission also runs
as the user types it, through the installed `attsim` executable in a process of its own.
"""

import subprocess
import sys
from pathlib import Path

import pytest

from attsim import cli

ROOT = Path(__file__).resolve().parents[1]
MISSIONS = sorted(p.stem for p in (ROOT / "missions").glob("*.py") if not p.name.startswith("_"))
ATTSIM = Path(sys.executable).with_name("attsim")


def _passed(code: int, printed: str, out: Path) -> None:
    """The run exited 0, printed its criteria, all PASS, and wrote its report."""
    assert code == 0, printed
    lines = [line for line in printed.splitlines() if line.startswith(("PASS", "FAIL"))]
    assert lines and all(line.startswith("PASS") for line in lines), printed
    assert "report: " in printed
    assert list(out.rglob("report.html")), "no report written"


@pytest.mark.parametrize("name", MISSIONS)
def test_mission_passes_under_attsim_run(name, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)  # a mission named as `attsim run` is typed in the project
    monkeypatch.setattr(sys, "path", list(sys.path))  # a script's folder goes first on it while it runs
    code = cli.main(["run", name, "--out", str(tmp_path / name)])
    captured = capsys.readouterr()
    _passed(code, captured.out + captured.err, tmp_path / name)


def test_the_default_mission_passes_under_the_attsim_executable(tmp_path):
    result = subprocess.run([str(ATTSIM), "run", "advitiy_detumble", "--out", str(tmp_path / "d")], cwd=ROOT,
                            capture_output=True, text=True, timeout=600)
    _passed(result.returncode, result.stdout + result.stderr, tmp_path / "d")


def test_a_script_runs_on_its_own(tmp_path):
    result = subprocess.run([sys.executable, str(ROOT / "missions" / "constant_torque.py"),
                             "--out", str(tmp_path / "c")],
                            cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0 and "PASS" in result.stdout, result.stdout + result.stderr
    assert (tmp_path / "c" / "report.html").is_file()


def test_cubesat_target_tracking_fails_a_run_that_held_nadir_through_the_pass():
    # a run whose controller followed a wrong target perfectly (nadir through the pass): its error to its own
    # reference is zero, so only a line of sight computed independently of the guidance can fail it
    import types

    import numpy as np
    import pandas as pd

    sys.path.insert(0, str(ROOT / "missions"))
    try:
        import cubesat_target_tracking as mission
    finally:
        sys.path.pop(0)
    from attsim.environment import Environment
    from attsim.environment.frames import lvlh_quaternion

    t = np.arange(0.0, 3000.0, 2.0)
    r, v = Environment(mission.orbit_over_station(), field=None).orbit.state_eci(t)
    q = lvlh_quaternion(r, v)
    columns = {"att_err_deg": np.zeros(len(t)), **{f"rw{k}_speed": np.full(len(t), 100.0) for k in range(4)},
               **{f"rw{k}_h": np.zeros(len(t)) for k in range(4)},
               **{f"mekf_q{c}": q[:, i] for i, c in enumerate("wxyz")},
               **{f"q{c}": q[:, i] for i, c in enumerate("wxyz")},
               **{f"mekf_sigma3_att_{a}": np.full(len(t), 1e-3) for a in "xyz"}}
    telemetry = types.SimpleNamespace(df=pd.DataFrame(columns, index=pd.Index(t, name="t")))
    results = {label: ok for label, _, ok, _ in mission.criteria(telemetry)}
    assert results["pointing error during passes after 120 s [deg]"]  # blind to the target being wrong
    assert not all(results.values())


def test_cubesat_target_tracking_fails_a_run_without_momentum_unloading(tmp_path):
    # with the magnetorquers off the wheels still stay below half their limit over three orbits: only the array's
    # net momentum, which the unloading drains, tells the two apart. The wheels' speed bias holds no momentum (it
    # lies in the pyramid's null space), so what builds up is the disturbances' momentum: with the nominal dipole
    # (2e-3 A m^2) a hundredth of a wheel's capacity in three orbits, with a 1e-2 A m^2 one (an uncompensated 3U)
    # enough to fail the criterion
    sys.path.insert(0, str(ROOT / "missions"))
    try:
        import cubesat_target_tracking as mission
    finally:
        sys.path.pop(0)
    label = "net wheel momentum after the first orbit / one wheel's capacity [-]"
    results = {}
    for unloading in (True, False):
        rows = mission.criteria(mission.build(out_dir=tmp_path / str(unloading), unloading=unloading,
                                              residual_dipole_Am2=(1e-2, -5e-3, 5e-3)).run())
        results[unloading] = {name: (value, ok) for name, value, ok, _ in rows}
    assert results[True][label][1] and results[True][label][0] < 0.025
    assert not results[False][label][1] and results[False][label][0] > 0.055
    assert results[False]["largest wheel speed / limit [-]"][1]  # the speed criterion alone passes it


# --- a shipped mission's build() parameters are checked like the library's, under their own names (issue 20) ------

NAN, INF = float("nan"), float("inf")
# mission -> parameter -> values its build() must refuse naming that parameter (a wrong type first: every parameter)
BAD_PARAMETERS = {
    "wheel_slew": {
        "inertia_scale": ["abc", (-1.0, 1.0, 1.0), (1.0, 1.0), (1.0, NAN, 1.0), 0.0],
        "omega0_rad_s": ["abc", (0.0, 0.0), (0.0, INF, 0.0)],
        "attitude_error_rad": ["abc", None, (0.0, 0.0, 0.0, 0.0)],
        "gyro_bias_rad_s": ["abc", (NAN, 0.0, 0.0)],
        "wheel_torque_scale": ["abc", 0.0, -0.5, INF, (1.0, 1.0)],
    },
    "advitiy_detumble": {
        "omega0": ["abc", (0.0, 0.1)],
        "name": [5, "../elsewhere", ""],
        "attitude_q": ["abc", (0.0, 0.0, 0.0, 0.0), (1.0, 0.0, 0.0)],
        "mean_anomaly_deg": ["abc", NAN, (10.0, 20.0)],
        "inertia_scale": ["abc", (-1.0, 1.0, 1.0)],
        "magnetometer_bias_T": ["abc", (0.0, 0.0)],
        "dipole_scale": ["abc", 0.0, -1.0],
    },
    "advitiy_adcs": {
        "omega0_rad_s": ["abc", (NAN, 0.0, 0.0)],
        "attitude_q": ["abc", (0.0, 0.0, 0.0, 0.0)],
        "mean_anomaly_deg": ["abc", INF],
        "inertia_scale": ["abc", (1.0, -1.0, 1.0)],
        "gyro_bias_rad_s": ["abc", (0.0, 0.0)],
        "dipole_scale": ["abc", -0.1],
        "sun_kp": ["abc", 0.0], "sun_kd": ["abc", -1e-6], "nadir_kp": ["abc", NAN], "nadir_kd": ["abc", 0.0],
    },
    "cubesat_target_tracking": {
        "omega0_rad_s": ["abc", (0.0, 0.0)],
        "inertia_kg_m2": ["abc", [[-1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]], [1.0, 2.0]],
        "gyro_bias_rad_s": ["abc", (INF, 0.0, 0.0)],
        "tracker_misalignment_rad": ["abc", (0.0, 0.0)],
        "residual_dipole_Am2": ["abc", (NAN, 0.0, 0.0)],
        "wheel_coulomb_friction_Nm": ["abc", (1e-5, 1e-5, 1e-5), (1e-5, -1e-5, 1e-5, 1e-5)],
        "unloading": ["abc", 1, None],
        "feedforward": ["abc", 1, None],
    },
    "momentum_dumping": {"feedforward": ["abc", 1, None]},
    "basilisk_mtb_momentum_management": {"feedforward": ["abc", 1, None]},
}


def _mission_module(name: str):
    import importlib

    sys.path.insert(0, str(ROOT / "missions"))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.pop(0)


def test_the_table_covers_every_parameter_of_every_shipped_mission():
    import inspect

    for name in MISSIONS:
        parameters = [p for p in inspect.signature(_mission_module(name).build).parameters if p != "out_dir"]
        assert sorted(parameters) == sorted(BAD_PARAMETERS.get(name, {})), name


@pytest.mark.parametrize("mission, parameter, value", [
    (mission, parameter, value) for mission, table in BAD_PARAMETERS.items()
    for parameter, values in table.items() for value in values
])
def test_a_bad_mission_parameter_is_refused_naming_it(mission, parameter, value, tmp_path):
    import attsim

    with pytest.raises(attsim.InputError) as refused:
        _mission_module(mission).build(out_dir=tmp_path, **{parameter: value})
    assert refused.value.field.split("[")[0] == parameter, str(refused.value)
    if "nan" not in repr(value):  # blamed on the value given, not on what it became (sqrt(-1) is nan)
        assert "nan" not in str(refused.value), str(refused.value)
