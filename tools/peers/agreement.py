"""How the Basilisk comparison tools measure and print attsim's agreement with a Basilisk example, sample by
sample: max and RMS of each difference, checked against the tool's targets.

The tools (``tools/compare_basilisk_*.py``) keep their quantities and
targets; these functions are the steps they share: the check that both runs
logged the same times, the figures of a reaction-wheel mission against a
wheel peer's logs, and the printed table. Unlike the peers it uses attsim
(its rotations), to read attsim's side.
"""

from __future__ import annotations

import numpy as np

from attsim import rotations

QUATERNION = ["qw", "qx", "qy", "qz"]  # attsim's telemetry columns
BODY_RATE = ["wx", "wy", "wz"]


def stats(difference) -> tuple[float, float]:
    """``(max, rms)`` of ``|difference|`` over every sample (and every component)."""
    d = np.abs(np.asarray(difference, dtype=float))
    return float(d.max()), float(np.sqrt(np.mean(d ** 2)))


def check_same_times(t_s, bsk_t_s) -> None:
    """Refuse to compare runs that did not log at the same times (within 1 ns).

    Raises
    ------
    ValueError
        When the two time columns differ in length or in any sample.
    """
    if len(t_s) != len(bsk_t_s) or not np.allclose(t_s, bsk_t_s, rtol=0.0, atol=1e-9):
        raise ValueError(f"the runs logged different times: {len(t_s)} rows against Basilisk's {len(bsk_t_s)}")


def wheel_mission(df, bsk: dict, wheels, rad_s_per_rpm: float, request: str) -> dict:
    """``{quantity: (max, rms)}`` of a reaction-wheel mission's telemetry ``df`` against a wheel peer's logs
    ``bsk`` (both logging every step): ``attitude_deg``, ``body_rate_rad_s`` (norm), ``wheel_speed_rpm``,
    ``motor_request_Nm`` (``<wheel>_torque_cmd`` against ``bsk[request]``) and ``motor_applied_Nm``
    (``<wheel>_torque`` decided at ``t`` against each wheel's ``u_current`` Basilisk logs a step later), for the
    wheels named ``wheels``, in Basilisk's order."""
    check_same_times(df.index.to_numpy(), bsk["t_s"])
    q_bsk = rotations.mrp_to_quat(bsk["sigma_BN"])
    angle = np.degrees(rotations.quat_angle_between(df[QUATERNION].to_numpy(), q_bsk))
    rate = np.linalg.norm(df[BODY_RATE].to_numpy() - bsk["omega_rad_s"], axis=1)
    speeds = df[[f"{w}_speed" for w in wheels]].to_numpy()
    commanded = df[[f"{w}_torque_cmd" for w in wheels]].to_numpy()
    applied = df[[f"{w}_torque" for w in wheels]].to_numpy()
    return {
        "attitude_deg": stats(angle),
        "body_rate_rad_s": stats(rate),
        "wheel_speed_rpm": stats((speeds - bsk["wheel_speed_rad_s"]) / rad_s_per_rpm),
        "motor_request_Nm": stats(commanded - bsk[request]),
        "motor_applied_Nm": stats(applied[:-1] - bsk["motor_applied_Nm"][1:]),  # Basilisk logs it a step later
    }


def print_figures(figures: dict, targets: dict, width: int) -> bool:
    """Print one line a quantity of ``figures`` (``{name: (max, rms)}``, the name padded to ``width``), with its
    target from ``targets`` where it has one; ``True`` when every target is met."""
    ok = True
    for name, (worst, rms) in figures.items():
        target = targets.get(name)
        met = target is None or worst <= target
        ok &= met
        verdict = "" if target is None else f"  target {target:g}: {'ok' if met else 'MISSED'}"
        print(f"  {name:{width}s} max {worst:.3e}  rms {rms:.3e}{verdict}")
    return ok
