"""Runs without the mission engine, for analytic studies.

:class:`Propagation` has a :class:`~attsim.Mission`'s interface (``name``,
``out_dir``, ``duration_s``, ``seed``, ``method``, ``run()`` returning a
:class:`~attsim.Telemetry`) but calls :func:`attsim.propagate` directly, so
any integrator can be used — ``exact``, the splitting methods, ``dop853`` —
and a torque that is any function of time and state. Mission scripts,
``attsim run`` and the report treat both alike. A run that stops on a
:class:`~attsim.errors.GimbalLockError` is written as a partial run, not
lost.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from ._core.validate import (boolean, int_in, one_of, path_like, positive_int, positive_scalar, safe_name,
                             unit_quaternion, vector3)
from .errors import GimbalLockError, InputError
from .inertia import check_inertia
from .telemetry.schema import STATE_COLUMNS
from .torque import TorqueModel

__all__ = ["Propagation"]


class Propagation:
    """``attsim.propagate`` wrapped as a run that writes a run directory.

    Parameters are those of :func:`attsim.propagate` (``dt`` is
    ``max_step``), plus ``name`` (a safe file name, as a
    :class:`~attsim.Mission`'s), ``out_dir`` and ``description``.

    Parameters
    ----------
    name : str
        The run's name and default directory ``reports/<name>`` (a safe file name).
    inertia : array_like or CompositeBody
        As :func:`attsim.propagate`'s, kg m^2.
    omega0 : array_like (3,)
        Initial body rate, rad/s.
    q0 : array_like (4,), optional
        Initial ``q_IB``, scalar first.
    duration : float, optional
        Simulated time, s (``propagate``'s ``t_end``).
    method : str, optional
        An integrator name (:func:`attsim.methods`).
    max_step : float, optional
        The step, s (``propagate``'s ``dt``).
    telemetry_every : int, optional
        Keep every N-th step (``propagate``'s ``record_every``).
    torque : None, array_like (3,) or callable, optional
        As :func:`attsim.propagate`'s (N m).
    out_dir : path, optional
        The run directory (default ``reports/<name>``).
    description : str, optional
        Free text for the report.
    allow_nonphysical : bool, optional
        Accept moments that break the triangle inequality.
    seed : int, optional
        Recorded with the run.
    **options
        Method-specific options.
    """

    def __init__(self, name: str, inertia, omega0, q0=(1.0, 0.0, 0.0, 0.0), duration: float = 40.0, method: str = "rk4",
                 max_step: float = 0.01, telemetry_every: int = 1, torque=None, out_dir=None, description: str = "",
                 allow_nonphysical: bool = False, seed: int = 0, **options):
        from .integrators import REGISTRY

        # checked here with propagate's rules, so a bad scenario fails when it is built, not when it runs
        self.name = safe_name(name, "name")  # also a directory name: reports/<name>
        self.allow_nonphysical = boolean(allow_nonphysical, "allow_nonphysical")
        self.inertia = check_inertia(inertia, allow_nonphysical=self.allow_nonphysical).matrix_kg_m2
        self.omega0 = vector3(omega0, "omega0")
        self.q0 = unit_quaternion(q0, "q0")
        self.duration_s = positive_scalar(duration, "duration")
        self.method = one_of(method, "method", tuple(REGISTRY))
        self.max_step_s = positive_scalar(max_step, "max_step")
        self.telemetry_every = positive_int(telemetry_every, "telemetry_every")
        self.torque = TorqueModel.from_user(torque)
        self.out_dir = Path(path_like(out_dir, "out_dir")) if out_dir is not None else Path("reports") / self.name
        self.description = str(description)
        self.seed = int_in(seed, "seed", 0, 2**63 - 1)  # nothing here is random; kept so overrides apply alike
        self.options = options

    def _torque_description(self) -> dict | None:
        """The applied torque as the run's metadata records it (None without one): a report must not read a run
        pushed by it as torque-free."""
        model = self.torque
        if model.is_zero:
            return None
        if model.kind == "constant":
            return {"kind": "constant", "N_m": list(model.constant_N_m)}
        return {"kind": "function", "name": getattr(model.function, "__name__", type(model.function).__name__)}

    def run(self, progress: bool = False, backend: str | None = None):
        """Propagate, record and return the :class:`~attsim.telemetry.Telemetry` (``progress`` is not shown: a
        propagation has no loop to report on). ``backend`` is a Mission's choice of loop: a Propagation has none."""
        if backend is not None:
            raise InputError("backend", "chooses how a Mission's loop runs; a Propagation has no mission loop "
                             "(it integrates with its method)", f"got {backend!r}")
        from . import __version__
        from .propagation import propagate
        from .telemetry.recorder import Recorder, load

        start = time.perf_counter()
        stopped = None
        try:
            df = propagate(self.inertia, self.omega0, self.q0, t_end=self.duration_s, dt=self.max_step_s,
                           method=self.method, torque=self.torque, allow_nonphysical=self.allow_nonphysical,
                           record_every=self.telemetry_every, **self.options)
        except GimbalLockError as exc:
            df, stopped = exc.partial, str(exc)
        wall = time.perf_counter() - start
        meta = {
            "name": self.name, "description": self.description, "inertia_kg_m2": df.attrs["inertia_kg_m2"],
            "nonphysical_inertia": df.attrs["nonphysical_inertia"],
            "omega0_rad_s": np.asarray(self.omega0, float).tolist(),
            "q0": np.asarray(df[list(STATE_COLUMNS[:4])].iloc[0]).tolist(), "duration_s": self.duration_s,
            "method": self.method,
            "method_options": {k: v.item() if isinstance(v, np.generic) else v for k, v in self.options.items()},
            "max_step_s": self.max_step_s, "telemetry_dt_s": self.max_step_s * self.telemetry_every, "seed": self.seed,
            "components": [], "engine": "propagate", "versions": {"attsim": __version__},
            "torque": self._torque_description(),
        }
        recorder = Recorder(self.out_dir, list(STATE_COLUMNS), meta=meta, chunk_rows=65_536, chunk_s=float("inf"))
        for t, row in zip(df.index.to_numpy(), df.to_numpy()):
            recorder.append(t, row)
        summary = dict(wall_s=wall, realtime_factor_achieved=df.index[-1] / wall if wall > 0 else None)
        if stopped is None:
            recorder.close(**summary)
        else:
            recorder.abort(stopped, **summary)
        return load(self.out_dir)
