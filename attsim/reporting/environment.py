"""The environment: eclipses, beta angle, ground track, Sun and nadir in body axes, field and disturbances.

The orbit is rebuilt from the run's metadata (its TLE, or the Kepler
elements) to place the spacecraft; the ground track is drawn on latitude and
longitude axes over Natural Earth's coastlines shipped with attsim (a plotly
map would fetch its outlines from the network; the page stays offline), with
the ground targets of the run's controllers.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import NamedTuple

import numpy as np

from .. import rotations
from ..telemetry.schema import QUATERNION_COLUMNS
from .page import Section
from .runinfo import DISTURBANCE_PREFIXES
from .style import AXIS_COLOURS, Panel, Plot, base_layout, fmt, intervals_where, line, shade, stacked

_NAMES = {"gg": "gravity gradient", "aero": "aerodynamic", "srp": "solar pressure", "res": "residual dipole"}


class Geometry(NamedTuple):
    """Where the spacecraft is, per telemetry row: inertial unit vectors and its ground point."""

    sun_I: np.ndarray
    nadir_I: np.ndarray
    beta_deg: np.ndarray
    lat_deg: np.ndarray
    lon_deg: np.ndarray


def rebuild_orbit(env: dict):
    """The run's orbit from its metadata, or None when the metadata cannot give it."""
    from ..environment import KeplerOrbit, TLEOrbit

    tle = [line_ for line_ in (env.get("tle") or []) if line_]
    if env.get("orbit") == "TLEOrbit" and len(tle) == 2:
        return TLEOrbit(*tle)
    elements = env.get("kepler")
    if isinstance(elements, dict):
        return KeplerOrbit(epoch=env.get("epoch"), **elements)
    return None


def geometry(df, meta) -> Geometry | None:
    """Sun, nadir, beta angle and ground point per row, or None without an orbit."""
    from ..environment.frames import ecef_to_geodetic, eci_to_ecef
    from ..environment.sun import sun_direction_eci

    env = meta.get("environment") or {}
    orbit = rebuild_orbit(env) if env else None
    if orbit is None or not len(df):
        return None
    t = df.index.to_numpy()
    r, v = orbit.state_eci(t)
    jd = orbit.epoch.jd_at(t)
    sun = sun_direction_eci(jd)
    normal = np.cross(r, v)
    normal /= np.linalg.norm(normal, axis=1, keepdims=True)
    beta = np.degrees(np.arcsin(np.clip(np.sum(sun * normal, axis=1), -1.0, 1.0)))
    ground = ecef_to_geodetic(eci_to_ecef(r, jd))
    return Geometry(
        sun, -r / np.linalg.norm(r, axis=1, keepdims=True), beta, np.degrees(ground.lat_rad), np.degrees(ground.lon_rad)
    )


@functools.lru_cache(maxsize=1)
def _coastline() -> tuple[np.ndarray, np.ndarray] | None:
    """Natural Earth's 1:110m coastlines (assets/coastline_110m.npz, tools/make_coastline.py), or None."""
    path = Path(__file__).parent / "assets" / "coastline_110m.npz"
    if not path.is_file():
        return None
    with np.load(path) as data:
        return data["lon_deg"], data["lat_deg"]


def ground_stations(meta) -> list[tuple[str, dict]]:
    """``[(controller name, {"lat_deg", "lon_deg", "min_elevation_deg"}), ...]`` of the run's ground targets."""
    return [(c["name"], c["ground_target"]) for c in meta.get("components") or [] if c.get("ground_target")]


def _ground_track(geo: Geometry, t, stations=()) -> Plot:
    lon = geo.lon_deg.copy()
    jumps = np.nonzero(np.abs(np.diff(lon)) > 180.0)[0] + 1  # break the line where it wraps at ±180°
    lon = np.insert(lon, jumps, np.nan)
    lat = np.insert(geo.lat_deg, jumps, np.nan)
    data = []
    coast = _coastline()
    if coast is not None:
        data.append({
            "type": "scatter", "mode": "lines", "name": "coastline", "x": coast[0], "y": coast[1],
            "line": {"color": "#9a9a9a", "width": 0.8}, "hoverinfo": "skip",
        })
    data.append({
        "type": "scatter",
        "mode": "lines",
        "name": "ground track",
        "x": lon.astype(np.float32),
        "y": lat.astype(np.float32),
        "line": {"color": AXIS_COLOURS["x"], "width": 1.5},
    })
    data.append({
        "type": "scatter",
        "mode": "markers",
        "name": "start",
        "x": [float(geo.lon_deg[0])],
        "y": [float(geo.lat_deg[0])],
        "marker": {"color": "#000", "size": 9, "symbol": "circle"},
    })
    for owner, station in stations:
        data.append({
            "type": "scatter",
            "mode": "markers",
            "name": f"ground target of {owner} ({fmt(station['lat_deg'])}°, {fmt(station['lon_deg'])}°)",
            "x": [float(station["lon_deg"])],
            "y": [float(station["lat_deg"])],
            "marker": {"color": AXIS_COLOURS["y"], "size": 11, "symbol": "star"},
        })
    layout = {
        **base_layout(320),
        "xaxis": {"title": {"text": "longitude [deg]"}, "range": [-180, 180], "dtick": 60, "automargin": True,
                  "zeroline": False},
        "yaxis": {"title": {"text": "latitude [deg]"}, "range": [-90, 90], "dtick": 30, "automargin": True,
                  "zeroline": False},
    }
    return Plot("Ground track (geodetic; coastlines of Natural Earth 1:110m)", {"data": data, "layout": layout})


_SWITCHES = {"gg": "gravity_gradient", "aero": "aerodynamic", "srp": "solar_pressure"}


def _switched_on(kind: str, env: dict, df, columns) -> bool:
    """False for a disturbance the environment switched off (its columns then hold zeros): no flat panel for it."""
    if kind in _SWITCHES and _SWITCHES[kind] in env and not env[_SWITCHES[kind]]:
        return False
    if kind == "res" and "residual_dipole_Am2" in env and not np.any(np.asarray(env["residual_dipole_Am2"]) != 0):
        return False
    return bool(np.any(df[columns].to_numpy() != 0.0))


def _disturbances_plot(df, t, eclipse, env=None) -> Plot | None:
    """Each disturbance's magnitude on one log axis (they differ by decades), then each one's body-axis components;
    only the disturbances switched on."""
    sources = []
    for prefix in DISTURBANCE_PREFIXES:
        columns = [f"{prefix}{a}" for a in "xyz"]
        if all(c in df for c in columns) and _switched_on(prefix.split("_")[1], env or {}, df, columns):
            sources.append((prefix.split("_")[1], columns))
    if not sources:
        return None
    magnitudes = [
        line(t, np.linalg.norm(df[columns].to_numpy(), axis=1), _NAMES.get(kind, kind), k + 3, log_y=True)
        for k, (kind, columns) in enumerate(sources)
    ]
    panels = [Panel("|τ| [N m]", magnitudes, eclipse, log_y=True, height_px=280)]
    for kind, columns in sources:
        traces = [line(t, df[c].to_numpy(), f"τ_{c[-1]} (body)", color=AXIS_COLOURS[c[-1]]) for c in columns]
        panels.append(Panel(f"{_NAMES.get(kind, kind)} [N m]", traces, eclipse, height_px=150))
    return stacked("Disturbance torques: magnitudes (log), then each one's body-axis components", panels)


def body_directions(df, geo: Geometry) -> tuple[np.ndarray, np.ndarray]:
    """The Sun and nadir unit vectors in body axes, (n, 3) each."""
    q_BI = rotations.quat_conjugate(df[list(QUATERNION_COLUMNS)].to_numpy())
    return rotations.quat_rotate(q_BI, geo.sun_I), rotations.quat_rotate(q_BI, geo.nadir_I)


def section(tel) -> Section | None:
    """Eclipses, beta angle, ground track, Sun/nadir in body axes, field, disturbances; None without an environment."""
    df, meta = tel.df, tel.meta
    if not meta.get("environment") or not len(df):
        return None
    t = df.index.to_numpy()
    eclipse = shade(intervals_where(t, df["lit"].to_numpy() < 0.5), "#555", "eclipse") if "lit" in df else []
    items = []
    geo = geometry(df, meta)
    panels = []
    if "lit" in df:
        panels.append(
            Panel(
                "lit fraction [-]",
                [line(t, df["lit"].to_numpy(), "in sunlight (1) / shadow (0)", 3)],
                eclipse,
                height_px=120,
                y_range=(-0.1, 1.1),
            )
        )
    if geo is not None:
        panels.append(
            Panel(
                "beta angle [deg]", [line(t, geo.beta_deg, "β (Sun above the orbit plane)", 4)], eclipse, height_px=160
            )
        )
        sun_B, nadir_B = body_directions(df, geo)
        panels.append(
            Panel(
                "Sun in body [-]",
                [line(t, sun_B[:, k], f"Sun {a}_B", color=AXIS_COLOURS[a], group="sun") for k, a in enumerate("xyz")],
                eclipse,
                y_range=(-1.05, 1.05),
            )
        )
        panels.append(
            Panel(
                "nadir in body [-]",
                [
                    line(t, nadir_B[:, k], f"nadir {a}_B", color=AXIS_COLOURS[a], dash="dash", group="nadir")
                    for k, a in enumerate("xyz")
                ],
                y_range=(-1.05, 1.05),
            )
        )
    if panels:
        items.append(stacked("Sunlight and geometry (grey: eclipse)", panels))
    if geo is not None:
        items.append(_ground_track(geo, t, ground_stations(meta)))
    field = [c for c in ("B_I_x", "B_I_y", "B_I_z") if c in df]
    if field:
        items.append(
            stacked(
                "Geomagnetic field, inertial axes",
                [
                    Panel(
                        "B_I [nT]",
                        [line(t, df[c].to_numpy() * 1e9, c, color=AXIS_COLOURS[c[-1]]) for c in field],
                        eclipse,
                    )
                ],
            )
        )
    disturbances = _disturbances_plot(df, t, eclipse, meta.get("environment"))
    if disturbances is not None:
        items.append(disturbances)
    return Section("environment", "Environment and disturbances", items) if items else None
