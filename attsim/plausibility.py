"""Values far outside any spacecraft's range: warned about, never refused.

A number in the wrong unit passes every type and sign check: an initial rate
of (5, -3, 2) meant as deg/s runs at 353 deg/s, a wheel's 1 mN m given as
1 N m spins its rotor to full speed in a blink. Each check here compares a
value with what flown hardware spans, by a wide margin, and warns
(:class:`~attsim.errors.ImplausibleValueWarning`, an ``AttsimWarning``)
naming the field, the value and the likely unit slip; a study that means
such a value silences it with ``warnings.filterwarnings("ignore",
category=attsim.errors.ImplausibleValueWarning)``.

**Body rate** (:func:`check_body_rate`, a mission's ``omega0``). What
spins a spacecraft up is its separation (tip-off), a fault (a stuck
thruster, a B-dot of the wrong sign) or, on purpose, a spin table or
spin-up thrusters; which of these exist depends on the body's size:

* small satellites (largest principal moment up to 1 kg m², CubeSats and
  microsatellites up to some 50 kg) leave their spring deployers at a few
  deg/s and are reported tumbling at some tens of deg/s at most
  (LightSail-A's telemetry after deployment: 7-8 deg/s; Advitiy's detumbling
  case here starts at 5 deg/s per axis); their MEMS gyros commonly read up
  to 75-300 deg/s. The bound, 2 rad/s (115 deg/s), is several times the
  fastest of these;
* spin-stabilised spacecraft and solid kick stages, spun on purpose, turn
  at a few to about 100 rpm (Wertz (ed.), *Spacecraft Attitude
  Determination and Control*, 1978; Delta's spin-stabilised third stage
  and its payload); the bound for bodies of 100 kg m² and more, 20 rad/s
  (190 rpm), is about twice the fastest;
* between the two the bound grows as ``√(J_max / 1 kg m²)`` (the straight
  line between them on log-log axes).

So ``ω_max = 2 rad/s × √(clip(J_max / 1 kg m², 1, 100))``; a rate above it
warns with the value it would have as deg/s. The textbook bodies (moments
of a few kg m², |ω| of 1 to 3 rad/s: bound 2.8 to 5.7 rad/s) and a
100 kg m² spinner at 6 rad/s pass; (5, -3, 2) rad/s on a 3U CubeSat
(0.02-0.06 kg m²) warns.

**Reaction wheel** (:func:`check_wheel`). A wheel's motor torque over its
rotor inertia is the rotor's spin-up acceleration. Flown wheels span about
1 to a few hundred rad/s²: from large wheels (0.2 N m on about 0.1 kg m²,
Honeywell's HR-series class: ~2 rad/s², minutes to full speed) to CubeSat
wheels (1-4 mN m on 2-3e-5 kg m², Blue Canyon's RWp015 class: 40-170 rad/s²;
seconds to full speed). Above 3000 rad/s² (10 times the fastest) it warns
of mN m given as N m. Their top speeds are some 6,000 to 10,000 rpm
(630-1,050 rad/s); above 2500 rad/s (24,000 rpm) it warns of rpm given as
rad/s.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .errors import ImplausibleValueWarning

__all__ = ["SMALL_BODY_RATE_RAD_S", "SPINNER_RATE_RAD_S", "WHEEL_ACCELERATION_RAD_S2", "WHEEL_SPEED_RAD_S",
           "plausible_rate_rad_s", "check_body_rate", "check_wheel"]

SMALL_BODY_RATE_RAD_S = 2.0  # J_max <= 1 kg m^2: several times the fastest tumbles reported for small satellites
SPINNER_RATE_RAD_S = 20.0  # J_max >= 100 kg m^2: twice the fastest spin tables and spin-stabilised spacecraft
_SMALL_KG_M2, _LARGE_KG_M2 = 1.0, 100.0
WHEEL_ACCELERATION_RAD_S2 = 3000.0  # motor torque / rotor inertia: 10 times the fastest flown wheels
WHEEL_SPEED_RAD_S = 2500.0  # 24,000 rpm: more than twice the fastest flown reaction wheels


def plausible_rate_rad_s(inertia_kg_m2) -> float:
    """The largest body rate (rad/s) a spacecraft of this inertia is plausibly given (see the module docstring)."""
    largest = float(np.max(np.linalg.eigvalsh(np.asarray(inertia_kg_m2, dtype=float))))
    ratio = min(max(largest / _SMALL_KG_M2, 1.0), _LARGE_KG_M2 / _SMALL_KG_M2)
    return SMALL_BODY_RATE_RAD_S * math.sqrt(ratio)


def check_body_rate(inertia_kg_m2, omega_rad_s, field: str = "omega0", stacklevel: int = 3) -> None:
    """Warn when ``|omega|`` is far above any spacecraft of this inertia's rate (deg/s given as rad/s, likely)."""
    size = float(np.linalg.norm(omega_rad_s))
    bound = plausible_rate_rad_s(inertia_kg_m2)
    if size > bound:
        largest = float(np.max(np.linalg.eigvalsh(np.asarray(inertia_kg_m2, dtype=float))))
        warnings.warn(
            f"{field}: |{field}| = {size:.4g} rad/s ({math.degrees(size):.4g} deg/s) is far above the rates of "
            f"spacecraft with principal moments up to {largest:.3g} kg m^2 (at most {bound:.3g} rad/s); if it was "
            f"meant in deg/s, that is {math.radians(size):.4g} rad/s: give np.radians({field})",
            ImplausibleValueWarning, stacklevel=stacklevel)


def check_wheel(name: str, inertia_kg_m2: float, max_torque_Nm: float, max_speed_rad_s: float,
                stacklevel: int = 3) -> None:
    """Warn of a wheel whose spin-up acceleration or top speed no flown wheel comes near (mN m as N m, rpm as rad/s)."""
    acceleration = max_torque_Nm / inertia_kg_m2
    if acceleration > WHEEL_ACCELERATION_RAD_S2:
        warnings.warn(
            f"max_torque_Nm: wheel {name!r}'s {max_torque_Nm:g} N m on a rotor of {inertia_kg_m2:g} kg m^2 spins it "
            f"up at {acceleration:.3g} rad/s^2, far beyond flown wheels (up to a few hundred rad/s^2); if the "
            f"torque was meant in mN m, that is {max_torque_Nm * 1e-3:g} N m",
            ImplausibleValueWarning, stacklevel=stacklevel)
    if max_speed_rad_s > WHEEL_SPEED_RAD_S:
        warnings.warn(
            f"max_speed_rad_s: wheel {name!r}'s {max_speed_rad_s:g} rad/s ({max_speed_rad_s * 30.0 / math.pi:.4g} "
            "rpm) is far beyond flown reaction wheels (up to about 10,000 rpm); if it was meant in rpm, that is "
            f"{max_speed_rad_s * math.pi / 30.0:.4g} rad/s",
            ImplausibleValueWarning, stacklevel=stacklevel)
