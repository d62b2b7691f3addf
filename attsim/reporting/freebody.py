"""Free-body diagnostics: momentum and energy conservation, nutation, the polhode, the 3D attitude view.

They describe a body left to itself, so a controlled run gets them only over
its longest torque-free interval (or a sentence saying why not); a
torque-free run gets them over the whole run.
"""

from __future__ import annotations

import html
import math

import numpy as np

from .. import analysis
from .. import rotations
from ..telemetry.schema import QUATERNION_COLUMNS, RATE_COLUMNS
from .page import Section
from .style import AXIS_COLOURS, PALETTE, Panel, Plot, base_layout, fmt, line, stacked

ANIMATION_FRAMES = 40
ARROW_LENGTH = 1.4  # H, ω, Sun and nadir are directions: drawn at this length whatever their size


def principal(meta) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    from ..inertia import principal_axes

    J = np.asarray(meta.get("inertia_kg_m2"), dtype=float)
    moments, R = principal_axes(J)
    return J, moments, R


def _grid_mesh(points: np.ndarray):
    """Triangles of a (rows, cols, 3) grid as flat arrays for Mesh3d (compact in the page)."""
    rows, cols = points.shape[:2]
    k = np.arange(rows * cols).reshape(rows, cols)
    a, b, c, d = k[:-1, :-1].ravel(), k[:-1, 1:].ravel(), k[1:, :-1].ravel(), k[1:, 1:].ravel()
    i = np.concatenate([a, b]).astype(np.int32)
    j = np.concatenate([b, d]).astype(np.int32)
    kk = np.concatenate([c, c]).astype(np.int32)
    flat = points.reshape(-1, 3).astype(np.float32)
    return flat[:, 0], flat[:, 1], flat[:, 2], i, j, kk


def _arrow(vector, name: str, color: str, width: int = 6, dash: str = "solid", show: bool = True) -> dict:
    """A line from the origin to ``vector`` (NaN hides it), labelled at its tip."""
    v = np.asarray(vector, dtype=float)
    xyz = np.float32([[0.0, 0.0, 0.0], v])
    return {
        "type": "scatter3d",
        "mode": "lines+text",
        "x": xyz[:, 0],
        "y": xyz[:, 1],
        "z": xyz[:, 2],
        "name": name,
        "text": ["", name],
        "textposition": "top center",
        "line": {"color": color, "width": width, "dash": dash},
        "textfont": {"color": color, "size": 12},
        "showlegend": show,
        "hoverinfo": "name",
    }


def _direction(v: np.ndarray, floor: float) -> np.ndarray:
    norm = float(np.linalg.norm(v))
    return v / norm * ARROW_LENGTH if norm > floor else np.full(3, np.nan)


def attitude_3d(df, moments, R_BP, H_I, scale: float, extra_directions=None, q_ref=None) -> Plot:
    """The body as its equivalent uniform ellipsoid with its axes, H, ω, Sun and nadir; animated.

    ``extra_directions`` maps a name to (colour, (n, 3) inertial unit vectors per row); ``q_ref`` (n, 4)
    draws the reference frame's axes dashed.
    """
    pts = _ellipsoid_points(moments, R_BP)
    picks = np.unique(np.linspace(0, len(df) - 1, min(ANIMATION_FRAMES, len(df))).astype(int))
    t = df.index.to_numpy()[picks]
    R = rotations.quat_to_dcm(df[list(QUATERNION_COLUMNS)].to_numpy()[picks])
    w_B = df[list(RATE_COLUMNS)].to_numpy()[picks]
    w_scale = max(float(np.abs(df[list(RATE_COLUMNS)].to_numpy()).max()), 1e-300)
    R_ref = rotations.quat_to_dcm(np.asarray(q_ref)[picks]) if q_ref is not None else None

    def traces(k: int, first: bool) -> list[dict]:
        x, y, z, i, j, kk = _grid_mesh(pts @ R[k].T)
        mesh = {"type": "mesh3d", "x": x, "y": y, "z": z}
        if first:  # frames restyle only what they give: the triangles stay from the first frame
            mesh.update(
                i=i,
                j=j,
                k=kk,
                opacity=0.35,
                color="steelblue",
                name="body (inertia ellipsoid)",
                showlegend=True,
                hoverinfo="skip",
            )
        out = [mesh]
        for n, axis in enumerate("xyz"):
            out.append(_arrow(R[k][:, n] * 1.15, f"{axis}_B", AXIS_COLOURS[axis], width=4, show=first))
        if R_ref is not None:
            for n, axis in enumerate("xyz"):
                out.append(
                    _arrow(R_ref[k][:, n] * 1.15, f"{axis}_R", AXIS_COLOURS[axis], width=3, dash="dash", show=first)
                )
        out.append(_arrow(_direction(H_I[picks[k]], scale * 1e-9), "H", "#000000", show=first))
        out.append(_arrow(_direction(R[k] @ w_B[k], w_scale * 1e-9), "ω", PALETTE[4], show=first))
        for name, (color, vectors) in (extra_directions or {}).items():
            out.append(
                _arrow(_direction(np.asarray(vectors)[picks[k]], 0.0), name, color, width=3, dash="dot", show=first)
            )
        return out

    axis_range = [-1.7, 1.7]
    scene = {
        "aspectmode": "cube",
        "xaxis": {"range": axis_range, "title": {"text": "x_I"}},
        "yaxis": {"range": axis_range, "title": {"text": "y_I"}},
        "zaxis": {"range": axis_range, "title": {"text": "z_I"}},
        "domain": {"x": [0, 1], "y": [0.12, 1]},
    }
    # a frame restyles only what moves: the coordinates (smaller page, same picture)
    frames = [{"name": fmt(float(t[k]), 5), "data": [{key: trace[key] for key in ("type", "x", "y", "z")}
                                                      for trace in traces(k, False)]} for k in range(len(picks))]
    layout = {
        **base_layout(560),
        "scene": scene,
        "hovermode": "closest",
        **_animation_controls(frames),
    }
    return Plot(
        "3D attitude, inertial axes: the body's inertia ellipsoid and axes (x_B, y_B, z_B), H and ω "
        "(directions, fixed length)" + (", reference axes dashed" if R_ref is not None else ""),
        {"data": traces(0, True), "layout": layout, "frames": frames},
    )


def _ellipsoid_points(moments, R_BP) -> np.ndarray:
    """The surface of the body's equivalent uniform ellipsoid (semi-axes from the principal moments, the largest
    1), in body axes: ``a_i ∝ sqrt(I_j + I_k - I_i)``."""
    a = np.sqrt(
        np.maximum(
            np.array(
                [
                    moments[1] + moments[2] - moments[0],
                    moments[0] + moments[2] - moments[1],
                    moments[0] + moments[1] - moments[2],
                ]
            ),
            0.0,
        )
    )
    a = np.maximum(a / a.max(), 0.15)  # a thin plate stays visible
    u, v = np.meshgrid(np.linspace(0, 2 * np.pi, 16), np.linspace(0, np.pi, 9))
    return np.stack([a[0] * np.cos(u) * np.sin(v), a[1] * np.sin(u) * np.sin(v), a[2] * np.cos(v)], axis=-1) @ R_BP.T


def _animation_controls(frames: list[dict]) -> dict:
    """A slider over the frames and a Play button, as plotly layout entries."""
    return {
        "sliders": [
            {
                "steps": [
                    {
                        "method": "animate",
                        "label": f["name"],
                        "args": [[f["name"]], {"mode": "immediate", "frame": {"duration": 0, "redraw": True}}],
                    }
                    for f in frames
                ],
                "currentvalue": {"prefix": "t [s] = "},
                "y": 0.1,
                "len": 0.85,
                "x": 0.15,
            }
        ],
        "updatemenus": [
            {
                "type": "buttons",
                "x": 0,
                "y": 0.1,
                "xanchor": "left",
                "yanchor": "top",
                "buttons": [
                    {"label": "Play", "method": "animate", "args": [None, {"frame": {"duration": 100, "redraw": True}}]}
                ],
            }
        ],
    }


def polhode(H_B, moments, R_BP) -> Plot:
    """H in principal body axes on the momentum sphere, with the separatrices."""
    n = H_B @ R_BP
    length = np.linalg.norm(n, axis=1, keepdims=True)
    n = np.where(length > 0, n / np.where(length > 0, length, 1.0), np.nan)
    u, v = np.meshgrid(np.linspace(0, 2 * np.pi, 40), np.linspace(0, np.pi, 20))
    sphere = np.stack([np.cos(u) * np.sin(v), np.sin(u) * np.sin(v), np.cos(v)], axis=-1)
    energy = np.sum(sphere**2 / moments, axis=-1)
    x, y, z, i, j, k3 = _grid_mesh(sphere)
    data = [
        {
            "type": "mesh3d",
            "x": x,
            "y": y,
            "z": z,
            "i": i,
            "j": j,
            "k": k3,
            "intensity": energy.ravel().astype(np.float32),
            "colorscale": "Viridis",
            "opacity": 0.5,
            "showscale": False,
            "name": "energy on the sphere",
            "hoverinfo": "skip",
        }
    ]
    if moments[2] > moments[1] > moments[0]:
        k = math.sqrt((1 / moments[0] - 1 / moments[1]) / (1 / moments[1] - 1 / moments[2]))
        phi = np.linspace(0, 2 * np.pi, 200)
        for sign in (1, -1):
            d = np.zeros((200, 3))
            norm = math.sqrt(1 + k * k)
            d[:, 0], d[:, 2], d[:, 1] = np.cos(phi) / norm, sign * k * np.cos(phi) / norm, np.sin(phi)
            d = d.astype(np.float32)
            data.append(
                {
                    "type": "scatter3d",
                    "x": d[:, 0],
                    "y": d[:, 1],
                    "z": d[:, 2],
                    "mode": "lines",
                    "name": "separatrix",
                    "line": {"color": "black", "width": 3, "dash": "dash"},
                    "showlegend": sign == 1,
                }
            )
    step = max(1, len(n) // 5000)
    n = n[::step].astype(np.float32)
    data.append(
        {
            "type": "scatter3d",
            "x": n[:, 0],
            "y": n[:, 1],
            "z": n[:, 2],
            "mode": "lines",
            "name": "polhode",
            "line": {"color": PALETTE[1], "width": 5},
        }
    )
    scene = {
        "aspectmode": "cube",
        "xaxis": {"title": {"text": "I_min axis"}},
        "yaxis": {"title": {"text": "I_mid axis"}},
        "zaxis": {"title": {"text": "I_max axis"}},
    }
    return Plot(
        "Polhode: H in principal body axes on the momentum sphere (colour: energy level)",
        {"data": data, "layout": {**base_layout(520), "scene": scene}},
    )


def _spin_sentence(moments, R_BP, omega0) -> str:
    if not np.all(np.isfinite(omega0)):
        return ("<p class='classification'>Spin: not classified, the rate at the start of this interval is missing "
                "(NaN) in the telemetry.</p>")
    spin = analysis.classify_spin(moments, R_BP.T @ np.asarray(omega0, dtype=float))
    if spin["axis"].startswith("none"):
        return "<p class='classification'>Spin: the body starts at rest, so there is no spin to classify.</p>"
    rate = spin["growth_rate_rad_s"]
    return (
        f"<p class='classification'>Spin: about the <b>{spin['axis']}</b> axis — "
        f"<b>{'stable' if spin['stable'] else 'unstable'}</b> (torque-free, initial state; the polhode encircles the "
        f"{spin['polhode_encircles']} axis). Growth rate of a small perturbation about the intermediate axis: "
        f"{fmt(rate)} rad/s (e-folding time {fmt(1 / rate) + ' s' if rate else 'none'}).</p>"
    )


def sections(tel, rows: slice | None = None, note: str = "") -> list[Section]:
    """Momentum/energy, nutation, stability and 3D sections over ``rows`` (default: the whole run)."""
    meta = tel.meta
    df = tel.df if rows is None else tel.df.iloc[rows]
    t = df.index.to_numpy()
    J, moments, R_BP = principal(meta)
    parts = analysis.total_momentum(df, J, meta.get("components", []))
    H_I, scale = parts.inertial, parts.scale
    norm = np.linalg.norm(H_I, axis=1)
    energy = analysis.kinetic_energy(df, J).to_numpy()
    intro = f"<p class='note'>{html.escape(note)}</p>" if note else ""
    momentum = stacked(
        "Inertial angular momentum (body + wheels), its conservation, and the kinetic energy",
        [
            Panel(
                "H_I [N m s]",
                [line(t, H_I[:, k], f"H_I_{a}", color=AXIS_COLOURS[a]) for k, a in enumerate("xyz")]
                + [line(t, norm, "|H|", 3)],
            ),
            Panel(
                "relative drift [-]",
                [
                    line(t, np.linalg.norm(H_I - H_I[0], axis=1) / scale, "|H_I − H_I(0)| / |H|max", 0, log_y=True),
                    line(t, np.abs(norm - norm[0]) / scale, "||H| − |H(0)|| / |H|max", 1, log_y=True),
                    line(
                        t,
                        np.abs(energy - energy[0]) / max(np.abs(energy).max(), analysis.SCALE_FLOOR),
                        "|T − T(0)| / T max",
                        2,
                        log_y=True,
                    ),
                ],
                log_y=True,
            ),
            Panel("T_rot [J]", [line(t, energy, "T_rot", 4)]),
        ],
    )
    out = [Section("momentum", "Angular momentum and energy", [intro, momentum])]
    # an axis has no sign: the angle to H of whichever way along it is nearer, 0 to 90 deg
    nutation = np.degrees(analysis.nutation_angle(df, J).to_numpy())
    nutation = np.minimum(nutation, 180.0 - nutation)
    traces = [line(t, nutation, "nutation (simulated)", 0)]
    symmetric = np.isclose(moments[0], moments[1], rtol=1e-9) or np.isclose(moments[1], moments[2], rtol=1e-9)
    if symmetric and not np.any(parts.wheels):
        traces.append(
            line(
                t,
                np.full_like(nutation, nutation[0]),
                "analytic (symmetric top, torque-free: constant)",
                1,
                dash="dash",
            )
        )
    out.append(
        Section(
            "nutation",
            "Nutation",
            [stacked("Nutation: angle between H and the major principal axis (either way along it)",
                     [Panel("nutation [deg]", traces)])],
        )
    )
    items = [_spin_sentence(moments, R_BP, df[list(RATE_COLUMNS)].iloc[0].to_numpy())]
    if np.any(parts.wheels):
        items.append(
            "<p class='note'>The wheels hold momentum, so the body is a gyrostat: the rigid body's polhode "
            "does not apply and is not drawn.</p>"
        )
    else:
        items.append(polhode(parts.body, moments, R_BP))
    out.append(Section("stability", "Axis stability", items))
    return out
