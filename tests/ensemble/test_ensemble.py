"""attsim.Ensemble: body k is the Mission of the same configuration, commands and seed, to the last bit; bad input
is refused by name."""

import os
import pickle
import re
import subprocess
import sys

import numpy as np
import pytest

import attsim
from attsim._core.timegrid import grid_time
from attsim.allocation import pyramid_axes
from attsim.dispersions import Normal, Scaled, UniformRotation
from attsim.environment import Environment, KeplerOrbit
from attsim.errors import InputError

J_CUBESAT = np.diag([0.042, 0.042, 0.0067])


def _wheels(axes, speed0=0.0, max_speed=630.0):
    return [attsim.ReactionWheel(f"rw{k}", axis, 2.4e-5, 1e-3, max_speed, speed0_rad_s=speed0)
            for k, axis in enumerate(axes)]


def _mission_of(ensemble, k, config, wheel_cmd, dipole_cmd, torque_cmd, backend, readings=None):
    """The Mission that body ``k`` of ``ensemble`` reproduces, run under the same commands; its telemetry (and the
    readings its controller got, appended to ``readings``)."""
    p = ensemble.body_parameters(k)
    period, n = ensemble.period_s, wheel_cmd.shape[0]
    mission = attsim.Mission("ensemble_twin", p["inertia"], omega0=p["omega0"], q0=p["q0"], duration=n * period,
                             method=ensemble.method, max_step=ensemble.max_step_s, telemetry_dt=period,
                             seed=ensemble.mission_seed(k), field=config.get("field"),
                             environment=config.get("environment"))
    sensors = [mission.add(s) for s in config.get("sensors", lambda: [])()]  # first: their streams come first
    wheels = [mission.add(w) for w in config["wheels"]()]
    actuators = list(wheels)
    mtq = None
    if config.get("magnetorquer"):
        mtq = mission.add(config["magnetorquer"]())
        actuators.append(mtq)

    def law(t, readings_now):
        i = int(round(t / period))
        if readings is not None:
            readings.append({name: np.array(value) for name, value in readings_now.items()})
        if i == n:  # the cycle at the end of the run changes nothing recorded
            return {}
        out = {w.name: float(wheel_cmd[i, k, j]) for j, w in enumerate(wheels)}
        if mtq is not None:
            out[mtq.name] = dipole_cmd[i, k]
        return out

    if actuators:
        mission.add(attsim.FunctionController(law, period, sensors=sensors, actuators=actuators))
    if torque_cmd is not None:
        mission.add(attsim.TorqueSchedule([(grid_time(0.0, i, period), grid_time(0.0, i + 1, period),
                                            tuple(torque_cmd[i, k]))
                                           for i in range(n)]))
    df = mission.run(in_memory=True, backend=backend).df.iloc[:n + 1]
    np.testing.assert_allclose(df.index, np.arange(n + 1) * period, rtol=0, atol=1e-12)
    return df


CONFIGS = {
    "wheels": dict(n=2, wheels=lambda: _wheels(pyramid_axes(4)), period=0.1, max_step=0.025, method="rk4",
                   torque=False),
    "speed_stops": dict(n=2, wheels=lambda: _wheels(np.eye(3), speed0=95.0, max_speed=100.0), period=0.2,
                        max_step=0.05, method="rk4", torque=True, scale=3e-3),
    "sensors": dict(n=2, wheels=lambda: _wheels(np.eye(3)), magnetorquer=lambda: attsim.Magnetorquer(0.2),
                    field=(2e-5, -1e-5, 3e-5), period=0.25, max_step=0.05, method="rk4", torque=False,
                    sensors=lambda: [attsim.Gyro(4.0, arw_rad_sqrt_s=1e-3, bias_rw_rad_s_sqrt_s=1e-4, name="gyro"),
                                     attsim.Magnetometer(4.0, noise_T=1e-7, bias_T=(1e-7, 0.0, -2e-7), name="mag")]),
    "magnetic": dict(n=2, wheels=lambda: [], magnetorquer=lambda: attsim.Magnetorquer(0.2, saturation="scale"),
                     field=(2e-5, -1e-5, 3e-5), period=0.5, max_step=0.1, method="rk4", torque=True),
    "orbit": dict(n=2, wheels=lambda: _wheels(np.eye(3)[:2]), magnetorquer=lambda: attsim.Magnetorquer(0.1),
                  environment=Environment(KeplerOrbit.circular(550.0, 97.6), field="dipole"), period=1.0,
                  max_step=0.25, method="rk4", torque=False),
}


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_each_body_is_the_mission_of_its_seed_to_the_bit(name):
    config = CONFIGS[name]
    n, steps = config["n"], 8
    dispersions = {"omega0": Normal(np.zeros(3), 0.02), "q0": UniformRotation(),
                   "inertia": Scaled(np.diag([0.04, 0.045, 0.01]), 0.02)}
    ensemble = attsim.Ensemble(n, J_CUBESAT, wheels=config["wheels"](), sensors=config.get("sensors", lambda: [])(),
                               magnetorquer=config["magnetorquer"]() if config.get("magnetorquer") else None,
                               period_s=config["period"], max_step=config["max_step"], method=config["method"],
                               field=config.get("field"), environment=config.get("environment"),
                               duration=steps * config["period"], seed=7, dispersions=dispersions)
    ensemble.samples_per_block = 3  # refilled within the run: the streams must go on where they were
    ensemble.reset()
    rng = np.random.default_rng(3)
    nw = ensemble.wheel_count
    scale = config.get("scale", 1.5e-3)
    wheel_cmd = rng.uniform(-scale, scale, (steps, n, nw))  # beyond the 1e-3 N m limit too: clipped alike
    dipole_cmd = rng.uniform(-0.3, 0.3, (steps, n, 3)) if config.get("magnetorquer") else np.zeros((steps, n, 3))
    torque_cmd = rng.uniform(-1e-5, 1e-5, (steps, n, 3)) if config["torque"] else None
    rows, samples = [], []
    for i in range(steps):
        rows.append(ensemble.frame())
        samples.append({name: value.copy() for name, value in ensemble.sample().items()})
        ensemble.step(wheel_cmd[i], dipole_cmd[i] if config.get("magnetorquer") else None,
                      None if torque_cmd is None else torque_cmd[i])
    rows.append(ensemble.frame())
    for k in range(n):
        readings = []
        df = _mission_of(ensemble, k, config, wheel_cmd, dipole_cmd, torque_cmd, "interpreted", readings)
        if config.get("sensors"):
            assert len(readings) > steps and set(readings[0]) == {"gyro", "mag"}
        for i in range(steps if config.get("sensors") else 0):  # the same noise draws, the same readings
            for name, value in readings[i].items():
                np.testing.assert_array_equal(samples[i][name][k], value)
        ours = np.array([r.loc[k, ["qw", "qx", "qy", "qz", "wx", "wy", "wz"]].to_numpy(float) for r in rows])
        np.testing.assert_array_equal(ours, df[["qw", "qx", "qy", "qz", "wx", "wy", "wz"]].to_numpy())
        for w in range(nw):
            theirs = df[[f"rw{w}_h", f"rw{w}_torque_cmd", f"rw{w}_speed"]].to_numpy()
            mine = np.array([r.loc[k, [f"rw{w}_h", f"rw{w}_torque_cmd", f"rw{w}_speed"]].to_numpy(float) for r in rows])
            np.testing.assert_array_equal(mine[:, 0], theirs[:, 0])
            # a mission's row at t holds the command decided at t; the ensemble's, the one of the period before t
            np.testing.assert_array_equal(mine[1:, 1], theirs[:-1, 1])
            np.testing.assert_allclose(mine[:, 2], theirs[:, 2], rtol=0, atol=1e-9)
    if name == "speed_stops":
        assert ensemble.wheel_speed_saturated.any()  # the case reaches the speed stop it is about


def _small(**kwargs):
    options = dict(wheels=_wheels(np.eye(3)), period_s=0.1)
    options.update(kwargs)
    return attsim.Ensemble(options.pop("n", 2), J_CUBESAT, **options)


@pytest.mark.parametrize("kwargs, field", [
    (dict(n=0), "n"), (dict(n=-3), "n"), (dict(n=2.5), "n"), (dict(n=True), "n"),
    (dict(period_s=float("nan")), "period_s"), (dict(period_s=-0.1), "period_s"),
    (dict(omega0=np.zeros((3, 3))), "omega0"), (dict(omega0=(0.0, float("nan"), 0.0)), "omega0"),
    (dict(q0=(0.0, 0.0, 0.0, 0.0)), "q0"), (dict(method="euler321"), "method"),
    (dict(wheel_max_speed_rad_s=np.full((2, 3), -1.0)), "wheel_max_speed_rad_s"),
    (dict(wheel_inertia_kg_m2=np.ones((3, 3))), "wheel_inertia_kg_m2"),
    (dict(wheels=[attsim.ReactionWheel("rw", (1, 0, 0), 1e-5, 1e-3, 600.0, coulomb_friction_Nm=1e-5)]), "wheels[0]"),
    (dict(magnetorquer="mtq"), "magnetorquer"), (dict(seed=-1), "seed"),
    (dict(dispersions={"mass": Normal(1.0, 0.1)}), "dispersions['mass']"),
    # a sub-step count past int64 came out as one step: the state of max_step=period_s, said nowhere (helper-39)
    (dict(max_step=1e-20), "max_step"), (dict(max_step=1e-12), "max_step"),
    (dict(max_step=1e-9, duration=1.0, period_s=100.0), "max_step"),  # a period of more steps than the duration
    (dict(max_step=1e-300), "max_step"),
    (dict(n=10**12), "n"), (dict(n=2**62), "n"),  # a MemoryError, a ValueError of numpy's
])
def test_bad_configuration_is_refused_by_name(kwargs, field):
    with pytest.raises(InputError) as info:
        _small(**kwargs)
    assert info.value.field == field


def test_negative_inertia_is_refused_by_name():
    with pytest.raises(InputError, match="inertia"):
        attsim.Ensemble(2, np.diag([-0.04, 0.04, 0.01]))
    per_body = np.stack([J_CUBESAT, -J_CUBESAT])
    with pytest.raises(InputError, match=r"inertia \(body 1\)"):
        attsim.Ensemble(2, per_body)


@pytest.mark.parametrize("kwargs, field", [
    (dict(wheel_torque_Nm=np.zeros((3, 3))), "wheel_torque_Nm"),
    (dict(wheel_torque_Nm=np.array([[0.0, np.nan, 0.0], [0.0, 0.0, 0.0]])), "wheel_torque_Nm"),
    (dict(torque_Nm=np.full((2, 3), np.inf)), "torque_Nm"),
    (dict(torque_Nm="zero"), "torque_Nm"),
    (dict(dipole_Am2=np.ones((2, 3))), "dipole_Am2"),  # no magnetorquer to apply it
])
def test_bad_commands_are_refused_by_name_and_change_nothing(kwargs, field):
    ensemble = _small()
    before = ensemble.state.copy()
    with pytest.raises(InputError) as info:
        ensemble.step(**kwargs)
    assert info.value.field == field
    np.testing.assert_array_equal(ensemble.state, before)
    assert not ensemble.steps.any()


def test_commands_the_compiled_step_would_misread_are_refused_before_it_runs():
    """step_checked takes commands whose values are checked; a row short, float32 or Fortran-ordered arrays read
    past the end or failed in numba's dispatch (helper-39)."""
    ensemble = _small(n=5)
    good = ensemble.commands()
    for bad, field in [(good._replace(torque_Nm=np.zeros((1, 3))), "commands.torque_Nm"),
                       (good._replace(wheel_torque_Nm=np.zeros((5, 3), dtype=np.float32)), "commands.wheel_torque_Nm"),
                       (good._replace(dipole_Am2=np.asfortranarray(np.zeros((5, 3)))), "commands.dipole_Am2"),
                       (good._replace(torque_Nm=np.broadcast_to(0.0, (5, 3))), "commands.torque_Nm"),  # read-only
                       (tuple(good), "commands")]:
        with pytest.raises(InputError) as info:
            ensemble.step_checked(bad)
        assert info.value.field == field
    assert not ensemble.steps.any()
    ensemble.step_checked(good)
    assert (ensemble.steps == 1).all()


PICKLED_STEP = """
import pickle, sys
import numpy as np
ensemble = pickle.loads(sys.stdin.buffer.read())
ensemble.step(wheel_torque_Nm=np.full((3, 3), 2e-4))
sys.stdout.buffer.write(pickle.dumps(ensemble.state))
"""


def test_a_stepped_ensemble_pickled_to_another_process_steps_there_as_here():
    """Its compiled step was called there through this process's addresses: a segmentation fault (helper-39)."""
    ensemble = _small(n=3, omega0=(0.01, -0.02, 0.03))
    ensemble.step(wheel_torque_Nm=np.full((3, 3), 1e-4))
    out = subprocess.run([sys.executable, "-c", PICKLED_STEP], input=pickle.dumps(ensemble), capture_output=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr.decode()
    ensemble.step(wheel_torque_Nm=np.full((3, 3), 2e-4))
    np.testing.assert_array_equal(pickle.loads(out.stdout), ensemble.state)


def test_reset_restores_chosen_bodies_and_reseeds_them_as_an_ensemble_of_that_seed():
    dispersions = {"omega0": Normal(np.zeros(3), 0.05)}
    ensemble = _small(n=3, dispersions=dispersions, seed=1)
    start = ensemble.state.copy()
    for _ in range(3):
        ensemble.step(np.full((3, 3), 1e-4))
    ensemble.reset([0, 2])
    np.testing.assert_array_equal(ensemble.state[[0, 2]], start[[0, 2]])
    assert list(ensemble.steps) == [0, 3, 0]
    ensemble.reset([1], seeds=[5])
    other = _small(n=3, dispersions=dispersions, seed=5)
    np.testing.assert_array_equal(ensemble.state[1], other.state[1])
    assert ensemble.mission_seed(1) == attsim.dispersions.run_seed(5, 1)  # reseeded (helper-34: it said seed 1's)
    assert ensemble.mission_seed(0) == attsim.dispersions.run_seed(1, 0)
    ensemble.reset([1], seeds=[5], seed_body=0)
    assert ensemble.mission_seed(1) == attsim.dispersions.run_seed(5, 0)
    ensemble.reset([1])
    assert ensemble.mission_seed(1) == attsim.dispersions.run_seed(1, 1)
    with pytest.raises(InputError, match="bodies"):
        ensemble.reset([3])
    frame = ensemble.frame()
    assert list(frame.index) == [0, 1, 2] and "rw2_speed" in frame


def test_a_diverging_body_is_named():
    ensemble = _small(n=3, max_step=0.1)
    with pytest.raises(attsim.errors.DivergenceError, match="body 0"):
        ensemble.step(torque_Nm=np.array([[1e3, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]))


def test_the_readme_ensemble_and_rl_snippets_run_as_written():
    import re
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", readme, flags=re.S)
    ensemble = next(b for b in blocks if "attsim.Ensemble(" in b)
    namespace = {}
    exec(compile(ensemble.replace("4096", "8"), "README ensemble", "exec"), namespace)
    assert namespace["ens"].steps.tolist() == [100] * 8
    rl = next(b for b in blocks if "make_vec(" in b)
    namespace = {}
    exec(compile(rl.replace("num_envs=1024", "num_envs=4"), "README rl", "exec"), namespace)
    assert namespace["obs"].shape == (4, 10)  # quaternion (4), rate (3), wheel speeds (3)


@pytest.mark.parametrize("field", [None, (2e-5, -1e-5, 3e-5)])
def test_every_body_of_a_chunked_ensemble_is_that_body_stepped_alone_to_the_bit(field):
    """The compiled step runs the bodies in chunks, several in each vector instruction: a body's numbers must not
    depend on its chunk, its lane or its neighbours (bodies around the chunk boundary, the last partial chunk, and
    wheel speed stops mid-period in some lanes only)."""
    from attsim.ensemble.kernels import CHUNK

    n = 2 * CHUNK + 5
    rng = np.random.default_rng(8)
    inertia = np.array([np.diag([0.042, 0.042, 0.0067]) * rng.uniform(0.9, 1.1) for _ in range(n)])
    q0 = rng.standard_normal((n, 4))
    q0 /= np.linalg.norm(q0, axis=1)[:, None]
    omega0 = rng.uniform(-0.05, 0.05, (n, 3))
    speed0 = np.where(rng.uniform(size=(n, 3)) < 0.3, 97.0, 0.0)  # some wheels reach their 100 rad/s limit
    options = dict(wheels=_wheels(np.eye(3), max_speed=100.0), period_s=0.2, max_step=0.05, field=field,
                   magnetorquer=attsim.Magnetorquer(0.2) if field else None)
    ensemble = attsim.Ensemble(n, inertia, **options)
    ensemble.reset(q0=q0, omega0=omega0, wheel_speed0_rad_s=speed0)
    wheel_cmd = rng.uniform(-1.5e-3, 1.5e-3, (4, n, 3))
    dipole_cmd = rng.uniform(-0.3, 0.3, (4, n, 3)) if field else [None] * 4
    for i in range(4):
        ensemble.step(wheel_cmd[i], dipole_cmd[i])
    stopped = ensemble.wheel_speed_saturated.any(axis=1)
    assert 0 < stopped.sum() < n  # stops in some lanes, not all
    for k in (0, 1, 2, 3, CHUNK - 1, CHUNK, CHUNK + 1, 2 * CHUNK, n - 1, *np.flatnonzero(stopped)[:3]):
        alone = attsim.Ensemble(1, inertia[k], **options)
        alone.reset(q0=q0[[k]], omega0=omega0[[k]], wheel_speed0_rad_s=speed0[[k]])
        for i in range(4):
            alone.step(wheel_cmd[i, [k]], None if field is None else dipole_cmd[i][[k]])
        np.testing.assert_array_equal(alone.state[0], ensemble.state[k])
        np.testing.assert_array_equal(alone.wheel_h_Nms[0], ensemble.wheel_h_Nms[k])
        np.testing.assert_array_equal(alone.wheel_speed_saturated[0], ensemble.wheel_speed_saturated[k])


def test_has_field_says_whether_the_ensemble_has_an_environment_table():
    assert not _small().has_field
    assert _small(field=(2e-5, 0.0, 0.0)).has_field


def test_attsim_compile_compiles_the_steps_every_rk4_ensemble_runs():
    """The compiled step's argument types depend on nothing an ensemble is given (size, wheels, magnetorquer,
    sensors, environment): the units ``attsim compile`` makes are the very ones every rk4 ensemble runs."""
    from attsim.engine.precompile import all_needs

    compiled = {(need.unit.cache_name(), str(need.signature)) for need in all_needs()}
    ensembles = [
        _small(n=3), _small(n=70, wheels=_wheels(pyramid_axes(4)), magnetorquer=attsim.Magnetorquer(0.2, "scale"),
                            field=(2e-5, 0.0, 0.0), sensors=[attsim.Gyro(10.0)]),
        attsim.Ensemble(2, np.stack([J_CUBESAT, 1.1 * J_CUBESAT]), wheels=[], period_s=1.0,
                        environment=Environment(KeplerOrbit.circular(550.0, 97.6), field="dipole"), duration=2.0),
    ]
    for ensemble in ensembles:
        for unit, signature, _ in ensemble._units(ensemble._step_args(ensemble.commands())):
            assert (unit.cache_name(), str(signature)) in compiled, unit.name


def test_compile_says_on_stderr_what_it_compiles_before_it_does(capfd):
    """An ensemble's (and an environment's) first use announces its compile with a mission run's wording."""
    import numba

    from attsim.engine.compile_record import notice

    @numba.njit  # not cached: compiled in this process, whatever the disk cache holds
    def probe(x):
        return x + 1.0

    ens = attsim.Ensemble(2, (1.0, 1.0, 1.0), duration=1.0)
    compiled = ens.compile([("probe", probe, (1.0,))])
    err = capfd.readouterr().err
    assert "probe" in compiled
    line = next(line for line in err.splitlines() if "units for this machine" in line)
    assert line.startswith("attsim: compiling ") and line.endswith("probe")
    said = re.sub(r"about \d+ s", "about N s", line)  # the estimate was made before, notice() reads it after
    assert said == re.sub(r"about \d+ s", "about N s", "attsim: " + notice(compiled))  # the one wording
    assert "attsim:   compiled probe (" in err
    assert ens.compile([("probe", probe, (1.0,))]) == [] and capfd.readouterr().err == ""  # ready: nothing said
    ens.step()  # the step compiled above: nothing more to say
    assert capfd.readouterr().err == ""



@pytest.mark.parametrize("cores", [1, 2])
def test_a_cold_ensemble_compiles_its_loop_and_chunk_each_in_a_process_of_its_own(monkeypatch, capfd, cores):
    """On an empty cache the loop (~6 s) and the chunk (~13-16 s) compiled one after the other in the caller: 19-23 s
    against the 20 s the first use may add. With two cores they and the chunk's three parts compile in two children
    at once (units attsim compile knows, so a child finds them by name); with one, all here."""
    from attsim.ensemble import ensemble as module
    from attsim.ensemble.kernels import part_units

    monkeypatch.setattr(module, "unit_is_cached", lambda unit, signature, **options: False)  # as on an empty cache
    monkeypatch.setattr(module, "usable_cores", lambda: cores)
    handed = []

    def apart(needs, jobs, say, meanwhile):
        handed.append(([n.unit.name for n in needs], jobs))
        return {**meanwhile(), **{n.unit.name: 1.0 for n in needs}}

    monkeypatch.setattr(module, "compile_apart", apart)
    ens = _small(field=(2e-5, 0.0, 0.0))
    names = ["ensemble_step", "step_chunk_rk4_plant_torque", *[unit.name for unit in part_units(ens._integrator)]]
    assert len(names) == 5 and names[2].startswith("begin_chunk_")
    assert ens.compile() == names
    assert handed == ([(names, 2)] if cores == 2 else [])
    line = next(line for line in capfd.readouterr().err.splitlines() if "units for this machine" in line)
    assert line.endswith(": " + ", ".join(names))
    ens.step(torque_Nm=np.full((2, 3), 1e-4))  # the units loaded (from the disk cache here) and run
    assert (ens.steps == 1).all() and (ens.omega_rad_s != 0.0).all() and (ens.status == 0).all()


def test_a_unit_another_process_compiled_meanwhile_is_accounted_for(monkeypatch, capfd):
    """'compiling 5 units' then one 'compiled' line must not read as four lost (the mission's wording)."""
    from attsim.ensemble import ensemble as module

    monkeypatch.setattr(module, "unit_is_cached", lambda unit, signature, **options: False)
    monkeypatch.setattr(module, "usable_cores", lambda: 2)
    monkeypatch.setattr(module, "compile_apart", lambda needs, jobs, say, meanwhile: {needs[0].unit.name: 1.0})
    ens = _small(field=(2e-5, 0.0, 0.0))
    assert ens.compile() == ["ensemble_step"]
    assert "attsim:   the other 4 were on disk by their turn" in capfd.readouterr().err  # the chunk and its parts


def test_units_another_process_compiled_while_this_one_waited_are_loaded_not_said_compiled(monkeypatch, capfd):
    """Behind another process's compile, a one-core ensemble said 'compiled ensemble_step (1.0 s)' for a load from
    disk, and kept 1.0 s as this machine's compile time (the next cold estimate said 'about 1 s')."""
    from attsim.ensemble import ensemble as module

    asked = set()

    def on_disk_once_asked(unit, signature, **options):  # absent when first asked, compiled by the other after
        first = unit.name not in asked
        asked.add(unit.name)
        return not first

    monkeypatch.setattr(module, "unit_is_cached", on_disk_once_asked)
    monkeypatch.setattr(module, "usable_cores", lambda: 1)
    kept = []
    monkeypatch.setattr(module, "remember", lambda seconds: kept.append(dict(seconds)))
    ens = _small(field=(2e-5, 0.0, 0.0))
    assert ens.compile() == []
    err = capfd.readouterr().err
    assert "compiled ensemble_step" not in err and "the other 5 were on disk by their turn" in err
    assert all(not seconds for seconds in kept)
    ens.step(torque_Nm=np.full((2, 3), 1e-4))
    assert (ens.steps == 1).all()


MORE_THREADS = """
import pickle, sys
import numpy as np
ensemble = pickle.loads(sys.stdin.buffer.read())
ensemble.step()
sys.stdout.buffer.write(pickle.dumps(ensemble.state))
"""


def test_an_ensemble_pickled_to_a_process_of_more_threads_steps_there_as_here():
    """Its working rows were one per thread of the process that made it: stepped on more threads, past their end
    (a segmentation fault, a false divergence, heap corruption: helper-40)."""
    ensemble = attsim.Ensemble(1100, J_CUBESAT, omega0=(0.01, -0.02, 0.03))
    ensemble._scratch = ensemble._scratch[:1].copy()  # as made where numba had one thread
    env = dict(os.environ, NUMBA_NUM_THREADS="2")
    out = subprocess.run([sys.executable, "-c", MORE_THREADS], input=pickle.dumps(ensemble), capture_output=True,
                         timeout=300, env=env)
    assert out.returncode == 0, out.stderr.decode()
    ensemble = pickle.loads(pickle.dumps(ensemble))  # here too: rows for this process's threads
    ensemble.step()
    np.testing.assert_array_equal(pickle.loads(out.stdout), ensemble.state)


def test_a_long_table_with_a_fine_step_is_not_refused():
    """The duration is the environment table's span: a year's table with 100 sub-steps a period was refused
    (helper-40)."""
    ensemble = attsim.Ensemble(2, J_CUBESAT, period_s=0.1, max_step=1e-3, duration=3.2e7)
    ensemble.step()
    assert (ensemble.steps == 1).all()
