"""Advitiy B-dot detumbling from a tumble of (5, 5, 5) deg/s (IGRF, all disturbances).

As ``advitiy_detumble`` but from a tumble about all three axes.
Success: |omega| below 0.2 deg/s (3.5e-3 rad/s) within one orbit.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import advitiy_detumble  # noqa: E402


criteria = advitiy_detumble.criteria


def build(out_dir=None):
    return advitiy_detumble.build(out_dir=out_dir, omega0=np.radians((5.0, 5.0, 5.0)), name="advitiy_tumble")


if __name__ == "__main__":
    import attsim

    sys.exit(attsim.cli.run_script(build, criteria))
