"""Integrator study: accuracy, cost and conservation of every attsim method.

On the free rigid body of Vilmart's entry (seed 002): I = (0.376, 0.627,
1.0), body angular momentum (0, 0.6, -0.8), q0 = identity. Errors are
measured against attsim's ``exact`` solution, which is itself checked
against an independent reference (a NumPy right-hand side under scipy's
DOP853 at rtol = atol = 1e-13, quaternion renormalised): goal G1.

Prints a table of the goals of the integrator issue and writes a
work-precision page ``reports/integrators/index.html`` (error against wall
time and against step size for every method; energy and |H| drift against
time, log scale). Basilisk's RK4 (package ``bsk``) is run in the same
process when it can be imported.

    G1  exact within 1e-11 of the independent reference on [0, 40] s
    G2  split4, h = 0.01 s, 10^6 steps: energy error <= 1e-10 and bounded
        (max over [0, 1e4] <= 5 x max over [0, 40]); Casimir and inertial
        momentum drift <= 1e-10; body-momentum and attitude error <= 1e-7
    G3  split6 on [0, 40] s: body-momentum error <= 1e-12, attitude <= 2e-12 rad
    G4  weak gravity-gradient-type torque: split_exact >= 100 x more accurate
        than split2 with the same torque kicks, same step
    BSK at equal wall time, the best attsim method >= 100 x more accurate
        than Basilisk's RK4

It also prints, for the same case, the wall time ``exact``, ``split6`` and
the preprocessed ``dmv`` of order 10 need for a maximum attitude error of
1e-10 rad over [0, 40] s (the largest step of a ladder that reaches it), so
a user can pick the cheapest.

Run: ``python tools/study_integrators.py [--out reports/integrators]``
"""

from __future__ import annotations

import argparse
import functools
import sys
from pathlib import Path

import numpy as np
from scipy.integrate import solve_ivp

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import attsim  # noqa: E402
from attsim import analysis, rotations  # noqa: E402
from attsim.errors import GimbalLockError  # noqa: E402
from tools.benchutil import median_time  # noqa: E402

MOMENTS = np.array([0.376, 0.627, 1.0])
M0 = np.array([0.0, 0.6, -0.8])
OMEGA0 = M0 / MOMENTS
Q_COLS, W_COLS = ["qw", "qx", "qy", "qz"], ["wx", "wy", "wz"]
# (label, method, options): the DMV family is one method with an order option
FIXED_STEP = [(m, m, {}) for m in ("rk4", "rkn", "rkmk4", "dcm", "euler321", "split2", "split4", "split6",
                                   "split_exact")]
FIXED_STEP += [(f"dmv{order}", "dmv", {"order": order}) for order in (2, 4, 6, 8, 10)]
STEPS = [0.2, 0.1, 0.05, 0.02, 0.01, 0.005]
# steps that divide [0, 40] s, largest first, for the cost of a 1e-10 rad attitude error
TARGET_ATTITUDE_RAD = 1e-10
STEP_LADDER = [0.5, 0.4, 0.32, 0.25, 0.2, 0.16, 0.125, 0.1, 0.08, 0.0625, 0.05, 0.04, 0.032, 0.025, 0.02, 0.016,
               0.0125, 0.01, 0.008, 0.00625, 0.005, 0.004, 0.0025, 0.002, 0.00125, 0.001]
DOP853_TOLERANCES = [1e-6, 1e-8, 1e-10, 1e-12]


def run(method, t_end=40.0, dt=0.01, **kwargs):
    return attsim.propagate(MOMENTS, OMEGA0, t_end=t_end, dt=dt, method=method, **kwargs)


def errors(df, reference) -> tuple[float, float]:
    """Max body-momentum error (N m s) and attitude error (rad) against a frame on the same times."""
    momentum = np.abs(df[W_COLS].to_numpy() * MOMENTS - reference[W_COLS].to_numpy() * MOMENTS).max()
    angle = rotations.quat_angle_between(df[Q_COLS].to_numpy(), reference[Q_COLS].to_numpy()).max()
    return float(momentum), float(angle)


def independent_reference(t_eval, torque=None):
    """NumPy Euler equation + quaternion kinematics under DOP853, rtol = atol = 1e-13."""

    def rhs(t, y):
        q, w = y[:4], y[4:]
        tau = np.zeros(3) if torque is None else torque(t, q / np.linalg.norm(q), w)
        w_dot = (tau - np.cross(w, MOMENTS * w)) / MOMENTS
        q_dot = 0.5 * np.concatenate([[-q[1:] @ w], q[0] * w + np.cross(q[1:], w)])
        return np.concatenate([q_dot, w_dot])

    sol = solve_ivp(rhs, (0.0, t_eval[-1]), np.concatenate([[1.0, 0, 0, 0], OMEGA0]), method="DOP853",
                    t_eval=t_eval, rtol=1e-13, atol=1e-13)
    y = sol.y.T.copy()
    y[:, :4] /= np.linalg.norm(y[:, :4], axis=1, keepdims=True)
    import pandas as pd

    return pd.DataFrame(y, index=t_eval, columns=Q_COLS + W_COLS)


def work_precision(repeats: int):
    """Rows (method, label, step_s, wall_s, momentum error, attitude error) on [0, 40] s."""
    rows = []
    for label, method, options in FIXED_STEP:
        for h in STEPS:
            try:
                df = run(method, dt=h, **options)
            except GimbalLockError as exc:
                rows.append((label, f"h={h}", h, np.nan, np.nan, np.nan, f"gimbal lock at t = {exc.t_s:.2f} s"))
                break
            wall = median_time(functools.partial(run, method, dt=h, **options), repeats)
            exact = run("exact", dt=h)
            rows.append((label, f"h={h}", h, wall, *errors(df, exact), ""))
    for tol in DOP853_TOLERANCES:
        wall = median_time(functools.partial(run, "dop853", dt=0.01, rtol=tol, atol=tol), repeats)
        rows.append(("dop853", f"tol={tol:g}", np.nan, wall,
                     *errors(run("dop853", dt=0.01, rtol=tol, atol=tol), run("exact")), ""))
    for h in STEPS:
        wall = median_time(functools.partial(run, "exact", dt=h), repeats)
        reference = independent_reference(np.asarray(run("exact", dt=h).index))
        rows.append(("exact", f"out={h}", h, wall, *errors(run("exact", dt=h), reference), "vs independent reference"))
    return rows


def cost_of_attitude_target(repeats: int):
    """Rows (label, step_s, n_steps, wall_s, attitude error) of the cheapest run reaching
    :data:`TARGET_ATTITUDE_RAD` on [0, 40] s, for exact, split6 and dmv of order 10.

    A fixed-step method takes the largest step of :data:`STEP_LADDER` whose
    maximum attitude error over its own samples (every step) is within the
    target. ``exact`` needs no step: it is timed at the output grid of the
    DMV10 run (same samples) and for the final state alone.
    """
    rows = {}
    for label, method, options in (("split6", "split6", {}), ("dmv10", "dmv", {"order": 10})):
        for h in STEP_LADDER:
            error = errors(run(method, dt=h, **options), run("exact", dt=h))[1]
            if error <= TARGET_ATTITUDE_RAD:
                wall = median_time(functools.partial(run, method, dt=h, **options), repeats)
                rows[label] = (label, h, round(40.0 / h), wall, error)
                break
        else:
            rows[label] = (label, np.nan, 0, np.nan, np.nan)
    h = rows["dmv10"][1]
    if np.isfinite(h):
        error = errors(run("exact", dt=h), independent_reference(np.asarray(run("exact", dt=h).index)))[1]
        rows["exact"] = ("exact", h, round(40.0 / h), median_time(lambda: run("exact", dt=h), repeats), error)
    error = errors(run("exact", dt=40.0), independent_reference(np.array([0.0, 40.0])))[1]
    wall = median_time(lambda: run("exact", dt=40.0), repeats)
    rows["exact, final state"] = ("exact, final state", 40.0, 1, wall, error)
    return [rows[k] for k in ("exact", "exact, final state", "split6", "dmv10") if k in rows]


def goal_g2():
    """split4 and rk4 over 10^6 steps of 0.01 s, against exact."""
    exact = run("exact", t_end=1e4, dt=0.01)
    out = {}
    for method in ("split4", "rk4"):
        df = run(method, t_end=1e4, dt=0.01)
        inv = analysis.invariants(df)
        energy = inv["T_rot_drift"].abs().to_numpy()
        early = energy[: 4001].max()
        out[method] = dict(
            energy_max=energy.max(), energy_ratio=energy.max() / early,
            casimir=inv["H_norm_drift"].abs().max(), inertial=inv["H_I_drift"].abs().max(),
            errors=errors(df, exact), invariants=inv,
        )
    return out


def goal_g4():
    n = 0.04  # rad/s: torque weak next to the body's ~1.3 rad/s rates

    def gravity_gradient(t, q, w):
        o = rotations.quat_rotate(rotations.quat_conjugate(q), [1.0, 0.0, 0.0])
        return 3.0 * n * n * np.cross(o, MOMENTS * o)

    reference = independent_reference(np.linspace(0.0, 40.0, 4001), torque=gravity_gradient)
    exact_flow = errors(run("split_exact", torque=gravity_gradient), reference)
    axis_flow = errors(run("split_exact", torque=gravity_gradient, free_flow="axes"), reference)
    return exact_flow, axis_flow


def basilisk_comparison(rows):
    """For each Basilisk RK4 step: its wall time and error, and attsim's best error at no more wall time."""
    try:
        from tools.peers import basilisk_peer
    except ImportError:
        return None
    if not basilisk_peer.available():
        return None
    import pandas as pd

    results = []
    for h in (0.02, 0.01, 0.005):
        n_steps = int(round(40.0 / h))
        walls, out = [], None
        for _ in range(3):
            out = basilisk_peer.run_torque_free(np.diag(MOMENTS), OMEGA0, (1.0, 0.0, 0.0, 0.0), h, n_steps,
                                                record_every=1)
            walls.append(out["wall_s"])
        df = pd.DataFrame(np.column_stack([out["q_wxyz"], out["omega_rad_s"]]), index=out["t_s"],
                          columns=Q_COLS + W_COLS)
        exact = attsim.propagate(MOMENTS, OMEGA0, t_end=float(out["t_s"][-1]), dt=h, method="exact")
        bsk_error = max(errors(df, exact.iloc[: len(df)].set_axis(df.index)))
        wall = float(np.median(walls))
        affordable = [r for r in rows if np.isfinite(r[3]) and r[3] <= wall]
        best = min(affordable, key=lambda r: max(r[4], r[5]))
        results.append((h, wall, bsk_error, best[0], best[1], best[3], max(best[4], best[5])))
    return basilisk_peer.version(), results


def write_page(path: Path, rows, g2):
    import plotly.graph_objects as go

    figures = []
    wp = go.Figure()
    ws = go.Figure()
    for method in dict.fromkeys(r[0] for r in rows):
        mine = [r for r in rows if r[0] == method and np.isfinite(r[3])]
        err = [max(r[4], r[5]) for r in mine]
        wp.add_trace(go.Scatter(x=[r[3] for r in mine], y=err, mode="lines+markers", name=method,
                                text=[r[1] for r in mine]))
        if method != "dop853":
            ws.add_trace(go.Scatter(x=[r[2] for r in mine], y=err, mode="lines+markers", name=method))
    wp.update_layout(title="Work-precision, seed 002 body on [0, 40] s: max error vs wall time",
                     xaxis=dict(type="log", title="wall time [s] (median)"),
                     yaxis=dict(type="log", title="max(momentum error, attitude error)"))
    ws.update_layout(title="Error vs step size (exact: output step)",
                     xaxis=dict(type="log", title="step h [s]"), yaxis=dict(type="log", title="max error"))
    figures += [wp, ws]
    for column, title in (("T_rot_drift", "Relative energy error, h = 0.01 s, 10^6 steps"),
                          ("H_norm_drift", "Relative |H| drift, h = 0.01 s, 10^6 steps")):
        fig = go.Figure()
        for method, result in g2.items():
            series = result["invariants"][column].abs().iloc[::100]
            fig.add_trace(go.Scatter(x=series.index, y=series.clip(lower=1e-17), mode="lines", name=method))
        fig.update_layout(title=title, xaxis=dict(title="t [s]"), yaxis=dict(type="log", title="relative error"))
        figures.append(fig)
    parts = [fig.to_html(full_html=False, include_plotlyjs=(i == 0)) for i, fig in enumerate(figures)]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("<!doctype html><html><head><meta charset='utf-8'><title>attsim integrator study</title></head>"
                    "<body><h1>attsim integrator study</h1><p>Generated by tools/study_integrators.py.</p>"
                    + "".join(parts) + "</body></html>", encoding="utf-8")


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "reports" / "integrators"))
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    rows = work_precision(args.repeats)
    print("method      run        wall [s]   momentum err   attitude err")
    for method, label, _, wall, e_m, e_a, note in rows:
        print(f"{method:11s} {label:10s} {wall:9.4f} {e_m:14.2e} {e_a:14.2e}  {note}")

    failures = 0
    exact = run("exact")
    g1 = errors(exact, independent_reference(np.asarray(exact.index)))
    ok = max(g1) <= 1e-11
    failures += not ok
    print(f"\n{verdict(ok)} G1 exact vs independent DOP853 reference: momentum {g1[0]:.2e}, attitude {g1[1]:.2e} "
          "(bound 1e-11)")

    g2 = goal_g2()
    s4 = g2["split4"]
    ok = (s4["energy_max"] <= 1e-10 and s4["energy_ratio"] <= 5 and s4["casimir"] <= 1e-10 and s4["inertial"] <= 1e-10
          and max(s4["errors"]) <= 1e-7)
    failures += not ok
    print(f"{verdict(ok)} G2 split4, 1e6 steps: energy {s4['energy_max']:.2e} (max/early {s4['energy_ratio']:.2f}), "
          f"|H| {s4['casimir']:.2e}, H_I {s4['inertial']:.2e}, momentum {s4['errors'][0]:.2e}, "
          f"attitude {s4['errors'][1]:.2e}")
    r4 = g2["rk4"]
    print(f"     rk4 on the same run: energy {r4['energy_max']:.2e} (max/early {r4['energy_ratio']:.0f}), "
          f"H_I {r4['inertial']:.2e}, momentum {r4['errors'][0]:.2e}, attitude {r4['errors'][1]:.2e}")

    g3 = errors(run("split6"), exact)
    ok = g3[0] <= 1e-12 and g3[1] <= 2e-12
    failures += not ok
    print(f"{verdict(ok)} G3 split6 on [0, 40]: momentum {g3[0]:.2e} (bound 1e-12), attitude {g3[1]:.2e} (bound 2e-12)")

    print(f"\nwall time for a max attitude error <= {TARGET_ATTITUDE_RAD:g} rad on [0, 40] s "
          f"(median of {args.repeats}):")
    print("  method               step [s]   outputs   wall [ms]   attitude err")
    for label, h, n, wall, error in cost_of_attitude_target(args.repeats):
        print(f"  {label:20s} {h:9.4g} {n:9d} {wall * 1e3:11.3f} {error:14.2e}")
    print("  (exact: timed on the DMV10 run's samples, and for the final state alone; its error is against the "
          "independent reference)")

    exact_flow, axis_flow = goal_g4()
    ratio = max(axis_flow) / max(exact_flow)
    ok = ratio >= 100
    failures += not ok
    print(f"{verdict(ok)} G4 weak gravity gradient, h = 0.01: split_exact {max(exact_flow):.2e}, "
          f"split2 + kicks {max(axis_flow):.2e}, ratio {ratio:.0f} (bound 100)")

    bsk = basilisk_comparison(rows)
    if bsk is None:
        print("SKIP Basilisk not importable (pip install -e '.[bench]'); peer comparison skipped")
    else:
        version, results = bsk
        for h, wall, bsk_error, method, label, our_wall, our_error in results:
            ratio = bsk_error / our_error
            ok = ratio >= 100
            failures += not ok
            print(f"{verdict(ok)} Basilisk {version} RK4 h = {h}: {wall * 1e3:.1f} ms, error {bsk_error:.2e}; "
                  f"attsim {method} {label} in {our_wall * 1e3:.1f} ms, error {our_error:.2e}: "
                  f"{ratio:.0f} x more accurate at no more wall time")

    page = Path(args.out) / "index.html"
    write_page(page, rows, g2)
    print(f"\nwork-precision page: {page}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
