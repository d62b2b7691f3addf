"""Monte Carlo campaigns: many runs of one mission with dispersed
parameters, their pass rates with confidence intervals, percentile envelopes
over time and the campaign report. :class:`Campaign` runs them.

See :mod:`attsim.campaign.runner` (execution on ``dask.distributed``),
:mod:`attsim.campaign.records` (the campaign directory) and
:mod:`attsim.campaign.worker` (one run). ``Campaign`` is imported on first
use, so the command line's parser does not pay for numpy and dask.
"""

from __future__ import annotations

import importlib

__all__ = ["Campaign", "CampaignResult"]


def __getattr__(name: str):
    if name in __all__:
        return getattr(importlib.import_module("attsim.campaign.runner"), name)
    raise AttributeError(f"module 'attsim.campaign' has no attribute {name!r}")
