"""Vilmart's figure 1 (seed 002): the body axes of a free rigid body by the preprocessed DMV of order 10.

I = (0.376, 0.627, 1.0), body angular momentum y(0) = (0, 0.6, -0.8),
Q(0) = identity, 0 <= t <= 40 s, h = 0.01 s, method 'dmv' with order=10
(Hairer & Vilmart 2006), as in the right picture of the entry's figure 1:
the principal axes seen from the fixed frame (the columns of Q, i.e. of
R_IB(q)) trace curves on the unit sphere. Besides the usual report, the
criteria write that picture to ``body_axes.html`` in the run directory.
Success: within 1e-12 of the exact solution in body momentum and attitude
at every sample, energy and |H| kept to round-off (1e-13 relative).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

import attsim
from attsim import rotations

MOMENTS = np.array([0.376, 0.627, 1.0])
Y0 = np.array([0.0, 0.6, -0.8])
Q_COLS, W_COLS = ["qw", "qx", "qy", "qz"], ["wx", "wy", "wz"]
AXIS_COLOURS = ("#d62728", "#2ca02c", "#1f77b4")  # e_1, e_2, e_3 as the entry's coloured arrows


def build(out_dir=None):
    return attsim.Propagation("dmv_figure1", MOMENTS, Y0 / MOMENTS, duration=40.0, method="dmv", max_step=0.01,
                              telemetry_every=1, description=__doc__.splitlines()[0], out_dir=out_dir, order=10)


def body_axes_figure(df, path: Path) -> Path:
    """The columns of R_IB over time on the unit sphere (Vilmart, fig. 1, right)."""
    import plotly.graph_objects as go

    R = rotations.quat_to_dcm(df[Q_COLS].to_numpy())
    u, v = np.meshgrid(np.linspace(0.0, 2.0 * np.pi, 49), np.linspace(0.0, np.pi, 25))
    fig = go.Figure([go.Surface(x=np.cos(u) * np.sin(v), y=np.sin(u) * np.sin(v), z=np.cos(v), opacity=0.15,
                                showscale=False, colorscale=[[0, "#bbbbbb"], [1, "#bbbbbb"]], hoverinfo="skip")])
    for k, colour in enumerate(AXIS_COLOURS):
        name = f"body axis e{k + 1} (I{k + 1} = {MOMENTS[k]:g})"
        fig.add_trace(go.Scatter3d(x=R[:, 0, k], y=R[:, 1, k], z=R[:, 2, k], mode="lines",
                                   line=dict(color=colour, width=3), name=name))
    fig.update_layout(title="Principal axes in the fixed frame, DMV order 10, h = 0.01 s, 0 <= t <= 40 s "
                            "(Vilmart, Rigid body dynamics, fig. 1)", height=700,
                      scene=dict(aspectmode="cube", xaxis_title="x", yaxis_title="y", zaxis_title="z"))
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.write_html(path, include_plotlyjs=True)
    return path


def criteria(run):
    df = run.df
    exact = attsim.propagate(MOMENTS, Y0 / MOMENTS, t_end=df.index[-1], dt=0.01, method="exact")
    df_on_exact = df.reindex(exact.index, method="nearest")
    momentum = np.abs((df_on_exact[W_COLS].to_numpy() - exact[W_COLS].to_numpy()) * MOMENTS).max()
    attitude = rotations.quat_angle_between(df_on_exact[Q_COLS].to_numpy(), exact[Q_COLS].to_numpy()).max()
    y = df[W_COLS].to_numpy() * MOMENTS
    energy = np.einsum("ij,ij->i", y, y / MOMENTS)
    casimir = np.linalg.norm(y, axis=1)
    energy_drift = np.abs(energy / energy[0] - 1.0).max()
    casimir_drift = np.abs(casimir / casimir[0] - 1.0).max()
    figure = body_axes_figure(df, Path(run.path) / "body_axes.html")
    return [
        ("max body-momentum error vs exact [N m s]", momentum, momentum < 1e-12, "< 1e-12"),
        ("max attitude error vs exact [rad]", attitude, attitude < 1e-12, "< 1e-12"),
        ("max relative energy error [-]", energy_drift, energy_drift < 1e-13, "< 1e-13 (round-off)"),
        ("max relative |H| error [-]", casimir_drift, casimir_drift < 1e-13, "< 1e-13 (round-off)"),
        ("body axes in the fixed frame (fig. 1, right)", str(figure), figure.is_file(), "written"),
    ]


if __name__ == "__main__":
    sys.exit(attsim.cli.run_script(build, criteria))
