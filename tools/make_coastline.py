"""Write ``attsim/reporting/assets/coastline_110m.npz``: the coastlines the report draws under a ground track.

Source: Natural Earth's 1:110m land polygons (public domain), as the
TopoJSON ``land-110m.json`` of the npm package ``world-atlas`` 2.0.2
(Mike Bostock, ISC licence). Every arc of the topology is a stretch of
coast; decoded (delta-coded integers times the transform's scale, plus its
translate) they give longitude and latitude in degrees. Stretches along the
cut at ±180° longitude and along the south pole's edge are not coast and are
left out, and a coast crossing the antimeridian is split there. The arrays
hold the polylines one after another, each ended by a NaN, as float32: a
few thousand points, drawn offline by the report (a plotly ``geo`` map
would fetch its outlines from the network).

Run: ``python tools/make_coastline.py`` (needs ``npm``).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def coastlines(topology: dict) -> tuple[np.ndarray, np.ndarray]:
    """Longitudes and latitudes (deg) of every arc, each polyline ended by NaN."""
    scale = np.asarray(topology["transform"]["scale"], dtype=float)
    translate = np.asarray(topology["transform"]["translate"], dtype=float)
    lon, lat = [], []
    for arc in topology["arcs"]:
        points = np.cumsum(np.asarray(arc, dtype=float), axis=0) * scale + translate
        # not coast: a step along the antimeridian cut or along the south pole's edge
        cut = (np.abs(points[:-1, 0]) >= 179.99) & (np.abs(points[1:, 0]) >= 179.99)
        cut |= (points[:-1, 1] <= -89.9) & (points[1:, 1] <= -89.9)
        cut |= np.abs(np.diff(points[:, 0])) > 180.0  # a coast crossing the antimeridian: two pieces, no line across
        for piece in np.split(points, np.nonzero(cut)[0] + 1):
            if len(piece) >= 2:
                lon += [*piece[:, 0], np.nan]
                lat += [*piece[:, 1], np.nan]
    return np.asarray(lon, dtype=np.float32), np.asarray(lat, dtype=np.float32)


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["npm", "pack", "world-atlas@2.0.2"], cwd=tmp, check=True, capture_output=True)
        with tarfile.open(next(Path(tmp).glob("*.tgz"))) as tar:
            topology = json.load(tar.extractfile("package/land-110m.json"))
    lon, lat = coastlines(topology)
    target = ROOT / "attsim" / "reporting" / "assets" / "coastline_110m.npz"
    np.savez_compressed(target, lon_deg=lon, lat_deg=lat)
    print(f"{target.relative_to(ROOT)}: {int(np.isfinite(lon).sum())} points in {int(np.isnan(lon).sum())} "
          f"polylines, {target.stat().st_size / 1e3:.0f} kB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
