"""N spacecraft stepped together with a mission's kernels (:class:`Ensemble`)."""

from .ensemble import DISPERSED, Commands, Ensemble

__all__ = ["Ensemble", "Commands", "DISPERSED"]
