"""What a campaign's worker needs before its first run, imported by the server workers are forked from.

:mod:`attsim.campaign.processes` names this module in the forkserver's preload: importing it loads a run's code
(the campaign's worker, the engine, every component kind a mission script can name) and sets up numba's compiler
for the CPU, which numba otherwise does at a process's first compiled unit (~0.7 s). Each worker forked from the
server starts with all of it. Nothing else imports this module.
"""

from __future__ import annotations

try:
    from numba.core.registry import cpu_target

    from .. import actuators, control, environment, estimation, guidance, sensors, studies  # noqa: F401
    from ..actuators import devices  # noqa: F401
    from ..control import laws, modes, mrp_feedback, numba_law  # noqa: F401
    from ..engine import mission  # noqa: F401
    from ..estimation import mekf  # noqa: F401
    from ..guidance import pointing, targets  # noqa: F401
    from ..sensors import devices as sensor_devices, horizon  # noqa: F401
    from . import worker  # noqa: F401

    cpu_target.target_context.refresh()
# a warm-up: the server must start whatever happens here (an exception other than ImportError would end it, and no
# worker would start); a worker imports what it needs again, and a failure then is its run's error record
except Exception:  # noqa: BLE001
    pass
