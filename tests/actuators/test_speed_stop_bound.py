"""The body-rate bound under which no wheel can be due a speed stop: never hides a stop the exact check finds,
and is tight for a wheel on a body axis."""

import math

import numpy as np
import pytest

from attsim.actuators.kernels import WheelBank, speed_stop_due, speed_stop_free_rate2


def _bank(axes, inertia, max_speed, h, torque) -> WheelBank:
    n = len(inertia)
    return WheelBank(np.ascontiguousarray(axes, dtype=float), np.asarray(inertia, float), np.ones(n),
                     np.asarray(max_speed, float), np.asarray(h, float), np.asarray(torque, float), np.zeros(n),
                     np.zeros(n), np.zeros(n), np.zeros((n + 1, 8)))


def _any_due(bank: WheelBank, w, dt) -> bool:
    return any(speed_stop_due(bank.h_Nms[j], bank.torque_Nm[j], bank.inertia_kg_m2[j], bank.max_speed_rad_s[j],
                              bank.axis[j], w, dt)[0] for j in range(len(bank.h_Nms)))


def test_no_wheel_is_due_below_the_bound_whatever_the_direction_and_time():
    # the worst cases are built in: momenta and torques of one sign, the speed near its limit, the body rate along
    # a wheel's axis against its speed, and dt at the span's end; the axes are not all unit vectors
    rng = np.random.default_rng(1)
    checked = 0
    for _ in range(4000):
        n = int(rng.integers(1, 5))
        axes = rng.normal(size=(n, 3)) * rng.choice([1.0, 0.3, 2.0], size=(n, 1))
        inertia = rng.uniform(1e-6, 1e-3, n)
        limit = rng.uniform(50.0, 1000.0, n)
        torque = rng.choice([-1.0, 1.0], n) * rng.uniform(0.0, 1e-2, n) * (rng.random(n) > 0.2)
        span = float(rng.choice([0.0, 0.01, 0.1, 1.0]))
        h = np.sign(torque) * inertia * limit * rng.uniform(0.0, 1.0, n)  # up to its limit, pushed further
        bank = _bank(axes, inertia, limit, h, torque)
        free = speed_stop_free_rate2(bank, span)
        if not (0.0 < free < math.inf):
            continue
        rate = math.sqrt(free) * (1.0 - 1e-15)
        for j in range(n):
            unit = axes[j] / np.linalg.norm(axes[j])
            for direction in (unit, -unit, np.sign(axes[j]) / math.sqrt(3.0), -np.sign(axes[j]) / math.sqrt(3.0)):
                w = tuple(rate * direction / np.linalg.norm(direction))
                for dt in (0.0, span, span * rng.random()):
                    assert not _any_due(bank, w, dt), (axes, inertia, limit, h, torque, span, w, dt)
                    checked += 1
    assert checked > 10_000


def test_the_bound_is_tight_for_a_wheel_on_a_body_axis():
    # one wheel on z, speeding up towards its limit: the body turning against it at just above the bound brings
    # the relative speed to the limit at the span's end
    inertia, limit, torque, span = 2e-5, 600.0, 1e-3, 0.1
    h = inertia * 500.0
    bank = _bank([[0.0, 0.0, 1.0]], [inertia], [limit], [h], [torque])
    free = speed_stop_free_rate2(bank, span)
    exact = limit - (h + torque * span) / inertia  # the rate at which the speed reaches the limit, rad/s
    assert math.sqrt(free) == pytest.approx(exact, rel=1e-7)
    assert not _any_due(bank, (0.0, 0.0, -math.sqrt(free)), span)
    assert _any_due(bank, (0.0, 0.0, -exact * (1.0 + 1e-7)), span)


def test_no_torque_bounds_nothing_and_a_wheel_at_its_limit_leaves_every_rate_to_the_check():
    axes = np.eye(3)
    idle = _bank(axes, [2e-5] * 3, [600.0] * 3, [1e-3, -1e-3, 0.0], [0.0, 0.0, 0.0])
    assert speed_stop_free_rate2(idle, 1.0) == math.inf
    at_limit = _bank(axes, [2e-5] * 3, [600.0] * 3, [2e-5 * 600.0, 0.0, 0.0], [1e-3, 0.0, 0.0])
    assert speed_stop_free_rate2(at_limit, 0.0) == -1.0
    not_a_number = _bank(axes, [2e-5] * 3, [600.0] * 3, [math.nan, 0.0, 0.0], [1e-3, 0.0, 0.0])
    assert speed_stop_free_rate2(not_a_number, 0.1) == -1.0

