"""Write ``attsim/reporting/assets/plotly-gl3d-<version>.min.js.gz``: the plotly.js bundle the reports embed.

Source: the npm package ``plotly.js-gl3d-dist-min`` (Plotly, Inc., MIT
licence; the licence header stays at the top of the file), plotly.js's own
partial bundle with the trace types ``scatter``, ``scatter3d``, ``mesh3d``,
``surface``, ``cone``, ``streamtube``, ``isosurface`` and ``volume``: every
figure attsim draws. It is 1.75 MB against the full bundle's 4.8 MB, and a
browser evaluates it about three times faster, which is most of a report's
first-visit load time (``python tools/bench_report.py``). A page whose
figures need another trace type (a user's bar chart, say) embeds the full
plotly.js that the installed plotly package ships instead.

The version is the one the installed plotly package bundles (so a page
draws the same whichever bundle it carries); run ``python
tools/make_plotly_bundle.py`` again after upgrading plotly (needs ``npm``).
"""

from __future__ import annotations

import gzip
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "plotly.js-gl3d-dist-min"


def main() -> int:
    from plotly.offline import get_plotlyjs_version

    version = get_plotlyjs_version()
    assets = ROOT / "attsim" / "reporting" / "assets"
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["npm", "pack", f"{PACKAGE}@{version}"], cwd=tmp, check=True, capture_output=True)
        archive = next(Path(tmp).glob("*.tgz"))
        with tarfile.open(archive) as tar:
            source = tar.extractfile("package/plotly-gl3d.min.js").read()
    if not source.startswith(b"/**") or f"v{version}".encode() not in source[:200]:
        raise SystemExit(f"{PACKAGE}@{version}: unexpected file header {source[:120]!r}")
    for old in assets.glob("plotly-gl3d-*.min.js.gz"):
        old.unlink()
    target = assets / f"plotly-gl3d-{version}.min.js.gz"
    target.write_bytes(gzip.compress(source, compresslevel=9, mtime=0))
    print(f"{target.relative_to(ROOT)}: {len(source) / 1e6:.2f} MB, {target.stat().st_size / 1e6:.2f} MB compressed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
