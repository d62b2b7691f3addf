"""Write ``missions/data/basilisk_mtb_field.npz``: Basilisk's WMM field along ``scenarioMtbMomentumManagementSimple``.

Runs Basilisk's example (:mod:`tools.peers.basilisk_mtb_momentum`) logging
every 0.5 s step and keeps the field as Basilisk logs it:
``magneticFieldWMM.envOutMsgs[0].magField_N`` (the WMM field at the
spacecraft's position at each step, inertial axes, T), which its
``MtbEffector`` holds over the step that follows. The mission
``missions/basilisk_mtb_momentum_management.py`` loads it as an
:class:`attsim.environment.FieldHistory` held over each step, so attsim
flies through the very field Basilisk computed (attsim has no WMM model).

Arrays in the file: ``t_s`` (s from the start, every 0.5 s, 0 to 7200),
``B_inertial_T`` (n, 3), and, for reference, ``B_body_T`` (n, 3): Basilisk's
magnetometer reading in body axes (``tamComm.tamOutMsg.tam_B``) at the
example's logging interval (36 s) with its times ``t_body_s``.
Float64 throughout, as Basilisk computes them. The file's metadata names
Basilisk's version.

Needs Basilisk (``bsk``, the bench extra) and its WMM coefficients (Basilisk's
support data, ``supportData/MagneticField/WMM2025.COF``, fetched on first use;
``BSK_SUPPORT_DATA_CACHE`` may point at a directory holding them)::

    python tools/make_basilisk_mtb_field.py [--out missions/data/basilisk_mtb_field.npz]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]

from tools.peers import basilisk_mtb_momentum as peer  # noqa: E402

OUT = ROOT / "missions" / "data" / "basilisk_mtb_field.npz"


def field_history() -> dict:
    """The arrays the file holds (see the module docstring), from one run of Basilisk's example."""
    every_step = peer.run(peer.DT_S)
    logged = peer.run(peer.EXAMPLE_RECORD_S)
    return {"t_s": every_step["t_s"], "B_inertial_T": every_step["field_N_T"], "t_body_s": logged["t_s"],
            "B_body_T": logged["tam_B_T"], "basilisk_version": np.array(peer.version())}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT, help=f"the file to write (default {OUT.relative_to(ROOT)})")
    args = parser.parse_args(argv)
    if not peer.available():
        print("Basilisk (bsk) is not importable: install the bench extra", file=sys.stderr)
        return 2
    arrays = field_history()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(args.out, **arrays)
    print(f"wrote {args.out}: {len(arrays['t_s'])} field samples from {arrays['t_s'][0]:g} s to "
          f"{arrays['t_s'][-1]:g} s (Basilisk {arrays['basilisk_version']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
