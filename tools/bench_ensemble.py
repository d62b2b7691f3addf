"""Benchmark of attsim.Ensemble and the attsim.rl vector environment.

Prints, as medians of several runs on this machine:

* ensemble propagation of a rigid body with three reaction wheels, RK4
  (max_step 0.01 s), 4,096 bodies: body-steps per second (one body-step: one
  RK4 step of one body), against the issue's target of 50 million on 2
  cores. Propagation is the plant's work: the wheels' motor torques are
  commanded once per 1 s step (100 sub-steps) and held, as the single-body
  plant the target is compared with holds its torque. Printed beside it,
  the same bodies commanded every 0.1 s (10 sub-steps a command), where
  each command's actuator logic (limits, speed stops) and each period's
  start and end weigh on every tenth sub-step;
* the propagation's scaling with the number of bodies (1 to 65,536) and with
  the threads (``numba.set_num_threads``);
* the vector environment ``attsim/Pointing-v0`` (4,096 environments, 0.1 s
  control period): environment steps per second from Python and simulated
  seconds per wall second (target: 2 million steps/s);
* the memory of a 65,536-body ensemble;
* in the same run, the same measure for bsk_rl (PyPI ``bsk-rl``, built on
  Basilisk) when it is importable, else a line saying it was skipped: its
  closest attitude environment (:mod:`tools.peers.bsk_rl_env`: one satellite,
  Basilisk's rigid body with three reaction wheels and RK4 at 0.1 s, MRP
  feedback at 0.1 s, the action an inertial MRP setpoint, since bsk_rl has no
  fine-grained torque action), as simulated seconds per wall second and
  environment steps per second, with the ratio attsim / bsk_rl of simulated
  seconds per wall second (and per CPU-second): at attsim's 0.1 s control
  period, and at the 60 s default of bsk_rl's action.

bsk_rl runs in the same process as attsim, so it needs a venv holding both,
apart from the dev one (bsk-rl pins pytest 7.3.1): ``python -m venv
/work/venvs/bskrl && /work/venvs/bskrl/bin/pip install -e '.[rl-peer]'``
(``make test`` does not need it). Basilisk loads
support data (gravity field, SPICE kernels) from its download cache, which
``BSK_SUPPORT_DATA_CACHE`` may point to; without network, ``GGM03S.txt`` must be
there already, and missing SPICE kernels are replaced as the peer's docstring
says (the settings line tells which ran).

Run: ``python tools/bench_ensemble.py`` (``--quick``: fewer repeats and sizes).
Every rate is printed per wall second and per CPU-second of the process
(every thread's): on a machine shared with other work the wall rate says
what this run got, the CPU rate what the work costs. The threading layer is
numba's (``NUMBA_THREADING_LAYER``). With GNU OpenMP (numba's ``omp``
layer) the benchmark runs with OpenMP's settings as the caller has them, and
prints them: by default a thread waiting for the next step spins a while
(libgomp: 300,000 times), then sleeps. ``OMP_WAIT_POLICY=passive`` (sleep at
once) is what a machine shared with other work wants (README), and costs a
step the waking of its threads: on 2 cores here it took 4,096 bodies from
47-59 M body-steps/s to 39-40 M (the same build, runs alternated). Earlier
versions of this benchmark set it for every run.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numba
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import attsim  # noqa: E402

J = np.diag([0.042, 0.042, 0.0067])
PROPAGATION_TARGET = 50e6
VECTOR_TARGET = 2e6


def wheel_ensemble(n: int, period_s: float = 0.1, max_step: float = 0.01):
    wheels = [attsim.ReactionWheel(f"rw{j}", axis, 2.4e-5, 1e-3, 630.0) for j, axis in enumerate(np.eye(3))]
    return attsim.Ensemble(n, J, omega0=(0.01, -0.02, 0.03), wheels=wheels, period_s=period_s, max_step=max_step,
                           duration=1e6)


def cpu_and_wall(fn, repeats: int) -> tuple[float, float]:
    """Median wall time and median process CPU time (s, every thread) of ``fn()`` after one warm-up call: on a
    machine shared with other work the CPU time still says what the work costs."""
    fn()
    walls, cpus = [], []
    for _ in range(repeats):
        w, c = time.perf_counter(), time.process_time()
        fn()
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c)
    return statistics.median(walls), statistics.median(cpus)


# the propagation's command period (s): 100 RK4 sub-steps of 0.01 s a command; and the controlled case's
PROPAGATION_PERIOD_S, CONTROL_PERIOD_S = 1.0, 0.1


def propagation_rate(n: int, repeats: int, steps: int = 1, cpu: bool = False, period_s: float = PROPAGATION_PERIOD_S):
    """RK4 body-steps per wall second of ``n`` bodies with three wheels under small random motor torques
    commanded every ``period_s`` (and per CPU-second with ``cpu``), ``steps`` commands a timed run."""
    ensemble = wheel_ensemble(n, period_s=period_s)
    commands = ensemble.commands(np.random.default_rng(0).uniform(-1e-5, 1e-5, (n, 3)))
    substeps = round(ensemble.period_s / ensemble.max_step_s)

    def run():
        for _ in range(steps):
            ensemble.step_checked(commands)

    wall, cpu_s = cpu_and_wall(run, repeats)
    work = n * steps * substeps
    return (work / wall, work / cpu_s) if cpu else work / wall


def vector_env_rate(num_envs: int, repeats: int, steps: int = 20) -> tuple[float, float, float]:
    import gymnasium

    import attsim.rl  # noqa: F401 - registers the environments

    env = gymnasium.make_vec("attsim/Pointing-v0", num_envs=num_envs)
    env.reset(seed=0)
    actions = np.random.default_rng(0).uniform(-1, 1, (num_envs, 3)).astype(np.float32)

    def run():
        for _ in range(steps):
            env.step(actions)

    wall, cpu_s = cpu_and_wall(run, repeats)
    return num_envs * steps / wall, num_envs * steps * env.task.period_s / wall, num_envs * steps / cpu_s


def bsk_rl_lines(attsim_simulated: float, attsim_simulated_per_cpu: float, repeats: int) -> list[str]:
    """The bsk_rl lines of the vector-environment section: its rates (:mod:`tools.peers.bsk_rl_env`) and the
    ratios attsim / bsk_rl of simulated seconds per wall second and per CPU-second, or one line saying why the
    comparison was skipped."""
    from tools.peers import bsk_rl_env

    if not bsk_rl_env.available():
        return ["bsk_rl: not importable here (pip install bsk-rl, which pulls Basilisk): comparison skipped"]
    lines = [f"bsk_rl ({bsk_rl_env.version()}), one environment in this process: bsk_rl has no fine-grained "
             "attitude action; its closest environment, a setpoint tracked by Basilisk's flight software:"]
    for period_s, label in ((0.1, "attsim's control period"), (60.0, "AttitudeSetpoint's default")):
        try:
            peer = bsk_rl_env.measure(period_s, steps=100 if period_s < 1 else 3, repeats=repeats)
        except FileNotFoundError as exc:  # Basilisk's support data neither cached nor downloadable
            return [f"bsk_rl: importable, but {exc}: comparison skipped (set BSK_SUPPORT_DATA_CACHE)"]
        lines.append(f"  control period {period_s:g} s ({label}): {peer.simulated_s_per_wall_s:,.1f} simulated s per "
                     f"wall s, {peer.steps_per_s:,.1f} env-steps/s; attsim / bsk_rl = "
                     f"{attsim_simulated / peer.simulated_s_per_wall_s:,.0f} (per CPU-second "
                     f"{attsim_simulated_per_cpu / peer.simulated_s_per_cpu_s:,.0f})")
    lines.append(f"  settings: {peer.settings}")
    return lines


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats and sizes (a smoke run)")
    args = parser.parse_args(argv)
    repeats = 3 if args.quick else 7
    threads = numba.config.NUMBA_NUM_THREADS
    print(f"attsim {attsim.__version__}, numba {numba.__version__}, {os.cpu_count()} CPUs, {threads} numba threads, "
          f"load average {os.getloadavg()[0]:.1f}")
    t = time.perf_counter()
    propagation_rate(4, 1)
    layer = numba.threading_layer()
    policy = "".join(f", {name}={os.environ.get(name, '(default)')}" for name in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")
                     if layer == "omp")
    print(f"first ensemble step (compile or load from the cache): {time.perf_counter() - t:.1f} s; "
          f"threading layer {layer}{policy}")

    print("\nEnsemble propagation: rigid body + 3 wheels, RK4, max_step 0.01 s")
    for label, period_s, steps in (("commanded every 1 s (propagation)", PROPAGATION_PERIOD_S, 1),
                                   ("commanded every 0.1 s", CONTROL_PERIOD_S, 10)):
        rate, per_cpu = propagation_rate(4096, repeats, steps, cpu=True, period_s=period_s)
        verdict = "meets" if rate >= PROPAGATION_TARGET else "below"
        print(f"  4,096 bodies, {threads} threads, {label}: {rate / 1e6:7.2f} M body-steps/s   "
              f"({verdict} the target of {PROPAGATION_TARGET / 1e6:.0f} M/s); {per_cpu / 1e6:.2f} M per CPU-second")
    print("  propagation's scaling with N (all threads):")
    sizes = (1, 16, 256, 4096, 65536) if not args.quick else (1, 256, 4096)
    for n in sizes:
        print(f"    N = {n:6d}: {propagation_rate(n, repeats if n <= 4096 else 3) / 1e6:10.3f} M body-steps/s")
    print("  propagation's scaling with threads (N = 4,096):")
    for k in range(1, threads + 1):
        numba.set_num_threads(k)
        rate, per_cpu = propagation_rate(4096, repeats, cpu=True)
        print(f"    {k} thread{'s' if k > 1 else ' '}: {rate / 1e6:10.3f} M body-steps/s, "
              f"{per_cpu / 1e6:.3f} M per CPU-second")
    numba.set_num_threads(threads)

    print("\nVector environment attsim/Pointing-v0 (0.1 s control period)")
    steps, simulated, per_cpu = vector_env_rate(4096, repeats)
    simulated_per_cpu = per_cpu * simulated / steps  # simulated s per CPU-second
    verdict = "meets" if steps >= VECTOR_TARGET else "below"
    print(f"  4,096 environments, {threads} threads: {steps / 1e6:8.3f} M env-steps/s = {simulated:,.0f} simulated s "
          f"per wall s   ({verdict} the target of {VECTOR_TARGET / 1e6:.0f} M/s); {per_cpu / 1e6:.3f} M per CPU-second")
    numba.set_num_threads(1)
    steps, _, per_cpu = vector_env_rate(4096, repeats)
    numba.set_num_threads(threads)
    print(f"  4,096 environments, 1 thread : {steps / 1e6:8.3f} M env-steps/s; {per_cpu / 1e6:.3f} M per CPU-second")
    for line in bsk_rl_lines(simulated, simulated_per_cpu, repeats):
        print(f"  {line}")

    ensemble = wheel_ensemble(65536)
    print(f"\nMemory of a 65,536-body ensemble (3 wheels): {ensemble.memory_bytes() / 2**20:.1f} MiB "
          f"({ensemble.memory_bytes() / 65536:.0f} bytes a body)")


if __name__ == "__main__":
    main()
