"""What a law knows: its attitude and rate from a sensor, an estimator, or the true state.

An attitude law (``QuaternionPD``, ``MagneticPD``) given no
``attitude_source`` or ``rate_source``, and a mode condition on the rate
given no ``source``, act on the simulator's true state: ideal knowledge, no
sensor noise, no estimation error. That is a legitimate study (what the law
does with perfect knowledge), but its result is not flight-like, so it is
said: :func:`warn_ideal` warns once per run (an
:class:`~attsim.errors.IdealKnowledgeWarning`) naming each law that reads
the truth without having asked for it, :func:`record` puts every law's
knowledge in the run's ``meta.json`` (``meta["knowledge"]``), and the
report's summary shows a line for each law on the true state.

Giving :data:`TRUTH` as the source (``attitude_source=attsim.TRUTH``,
``rate_source=attsim.TRUTH``, ``modes.rate_below(..., source=attsim.TRUTH)``)
asks for the true state explicitly: no warning, the same record.
"""

from __future__ import annotations

import warnings

from ..errors import IdealKnowledgeWarning, caller_stacklevel

__all__ = ["TRUTH", "TRUE_STATE", "reads_truth", "label", "record", "warn_ideal"]

TRUE_STATE = "true state"  # what meta["knowledge"] says of a quantity read from the simulator's truth


class _Truth:
    """The source that is the simulator's true state, asked for explicitly (one object: :data:`TRUTH`)."""

    def __repr__(self) -> str:
        return "attsim.TRUTH"

    def __reduce__(self):  # pickled and copied as the one object, so ``source is TRUTH`` holds in a worker too
        return "TRUTH"


TRUTH = _Truth()


def reads_truth(source) -> bool:
    """True when ``source`` (a law's attitude or rate source, a condition's) is the true state: None or TRUTH."""
    return source is None or source is TRUTH


def label(source) -> str:
    """What ``meta["knowledge"]`` says of a source: ``"true state"`` or the sensor's or estimator's name."""
    if reads_truth(source):
        return TRUE_STATE
    return source if isinstance(source, str) else str(getattr(source, "name", source))


def _knowing(components) -> list:
    """The components that say what they know: ``(component, {quantity: source})`` in the mission's order."""
    return [(c, c.knowledge_sources()) for c in components if hasattr(c, "knowledge_sources")]


def record(components) -> dict:
    """``{law name: {quantity: label}}`` of every component that reads an attitude or a rate (``meta["knowledge"]``).

    A quantity read from several sources (a mode manager's rate conditions)
    lists them, joined by ``", "``, in their order.
    """
    knowledge = {}
    for component, sources in _knowing(components):
        entry = {}
        for quantity, refs in sources.items():
            labels = list(dict.fromkeys(label(ref) for ref in refs))
            if labels:
                entry[quantity] = ", ".join(labels)
        if entry:
            knowledge[component.name] = entry
    return knowledge


def warn_ideal(components) -> None:
    """Warn once, naming each law that reads the true state without asking for it (:data:`TRUTH`)."""
    unasked = []
    for component, sources in _knowing(components):
        quantities = [quantity for quantity, refs in sources.items() if any(ref is None for ref in refs)]
        if quantities:
            unasked.append(f"{component.name!r} ({' and '.join(quantities)})")
    if unasked:
        warnings.warn(
            f"ideal knowledge: {', '.join(unasked)} act{'s' if len(unasked) == 1 else ''} on the {TRUE_STATE}, not "
            "on a sensor or an estimator, so the result is not flight-like; give attitude_source= and rate_source= "
            "(source= for a mode condition) a sensor or an estimator, or attsim.TRUTH to say that ideal knowledge is "
            "meant", IdealKnowledgeWarning, stacklevel=caller_stacklevel())
