"""attsim's hardware catalogue against Basilisk's rwFactory, figure by figure.

Builds every wheel the two share through Basilisk's ``simIncludeRW.rwFactory``
(friction on, jitter model, so every figure is set) and through
``attsim.actuators.catalogue``, and prints the largest relative difference of
spin inertia, maximum torque and speed, Coulomb friction, static and dynamic
imbalance and mass. Needs ``bsk`` (the ``bench`` extra)::

    python tools/compare_basilisk_catalogue.py
"""

from __future__ import annotations

import sys

from attsim.actuators.catalogue import WHEELS

# Basilisk's rwFactory method -> attsim's model
SHARED = {"Honeywell_HR16": "Honeywell HR16", "Honeywell_HR14": "Honeywell HR14", "Honeywell_HR12": "Honeywell HR12",
          "BCT_RWP015": "Blue Canyon RWP015", "NanoAvionics_RW0": "NanoAvionics RW0"}
FIELDS = (("Js", "inertia_kg_m2"), ("u_max", "max_torque_Nm"), ("Omega_max", "max_speed_rad_s"),
          ("fCoulomb", "coulomb_friction_Nm"), ("U_s", "static_imbalance_kg_m"), ("U_d", "dynamic_imbalance_kg_m2"),
          ("mass", "mass_kg"))


def main() -> int:
    try:
        from Basilisk.architecture import messaging
        from Basilisk.utilities import simIncludeRW
    except ImportError:
        print("bsk is not installed (pip install -e '.[bench]'): nothing to compare")
        return 0
    worst = 0.0
    for method, model in SHARED.items():
        for momentum, spec in WHEELS[model].items():
            factory = simIncludeRW.rwFactory()
            sized = {"maxMomentum": float(momentum)} if len(WHEELS[model]) > 1 else {}
            rw = factory.create(method, [1.0, 0.0, 0.0], useRWfriction=True, RWModel=messaging.JitterSimple, **sized)
            differences = {ours: abs(getattr(rw, theirs) - getattr(spec, ours).value) / abs(getattr(rw, theirs))
                           for theirs, ours in FIELDS}
            field = max(differences, key=differences.get)
            worst = max(worst, differences[field])
            print(f"{model:20s} {momentum:>6g} N m s: largest relative difference {differences[field]:.1e} ({field})")
    print(f"worst over every figure: {worst:.1e}")
    return 0 if worst <= 1e-15 else 1


if __name__ == "__main__":
    sys.exit(main())
