"""The speed ratio of an attsim mission against a Basilisk example, as the comparison tools measure and print it."""

from __future__ import annotations

import statistics
import time


def speed_ratio(peer, build, repeats: int) -> tuple[float, float, float]:
    """``(Basilisk median s, attsim median s, ratio)``: the peer's ``timed_run()`` (its ``ExecuteSimulation``)
    against ``Mission.run`` (compiled, in memory) of the mission ``build()`` returns, both warm in this process,
    interleaved ``repeats`` times; each logs at the example's own interval."""
    peer.timed_run()
    build().run(in_memory=True, backend="compiled")  # warm: compiled units loaded, imports done
    basilisk, ours = [], []
    for _ in range(repeats):
        basilisk.append(peer.timed_run()[0])
        built = build()
        start = time.perf_counter()
        built.run(in_memory=True, backend="compiled")
        ours.append(time.perf_counter() - start)
    b, a = statistics.median(basilisk), statistics.median(ours)
    return b, a, b / a


def print_speed(speed: tuple[float, float, float], repeats: int, record_s: float, target: float) -> bool:
    """Print the speed line of ``speed`` (:func:`speed_ratio`'s answer over ``repeats``, logging every
    ``record_s``) against the ``target`` ratio; ``True`` when it is met."""
    b, a, ratio = speed
    met = ratio >= target
    print(f"  speed: Basilisk ExecuteSimulation {b * 1e3:.1f} ms, attsim Mission.run {a * 1e3:.1f} ms (medians of "
          f"{repeats}, logging every {record_s:g} s): {ratio:.1f}x  target {target:g}x: {'ok' if met else 'MISSED'}")
    return met
