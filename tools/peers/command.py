"""What the Basilisk comparison tools share around their figures: the command line (``--repeats``, the exit
status, the refusal to run without Basilisk) and the report of a mission compared at every step."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from . import agreement, timing


def main(doc: str, peer, report: Callable[[int], bool], argv=None) -> int:
    """Parse ``argv`` (``--repeats``, interleaved timing repeats, default 7; ``doc``'s first line describes the
    tool) and call ``report(repeats)``, which prints the comparison and says whether every target was met.

    Returns
    -------
    int
        0 when every target is met, 1 otherwise, 2 when Basilisk (``peer.available()``) is not importable.
    """
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7, help="interleaved timing repeats (default 7)")
    args = parser.parse_args(argv)
    if not peer.available():
        print("Basilisk (bsk) is not importable: install the bench extra", file=sys.stderr)
        return 2
    return 0 if report(args.repeats) else 1


def logging_every(build: Callable, telemetry_dt_s: float):
    """The mission ``build()`` returns, set to log every ``telemetry_dt_s``."""
    built = build()
    built.telemetry_dt_s = telemetry_dt_s
    return built


def report_every_step(title: str, peer, build: Callable, figures: Callable, targets: dict, speed_target: float,
                      repeats: int) -> bool:
    """Print ``title`` (``{version}`` in it: Basilisk's), then the table of ``figures(Basilisk's logs, attsim's
    telemetry)`` (``{name: (max, rms)}``) with the example ``peer`` and the mission ``build()`` both logging every
    step (``peer.DT_S``; attsim compiled, in memory) against ``targets``, then the speed line (each logging at the
    example's interval, ``repeats`` interleaved runs) against ``speed_target``; ``True`` when every target is
    met."""
    print(title.format(version=peer.version()))
    telemetry = logging_every(build, peer.DT_S).run(in_memory=True, backend="compiled")
    ok = agreement.print_figures(figures(peer.run(peer.DT_S), telemetry), targets, 18)
    speed = timing.speed_ratio(peer, lambda: logging_every(build, peer.EXAMPLE_RECORD_S), repeats)
    return timing.print_speed(speed, repeats, peer.EXAMPLE_RECORD_S, speed_target) and ok
