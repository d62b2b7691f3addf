"""What a campaign's worker needs before its first run, imported by the server workers are forked from.

:mod:`attsim.campaign.processes` names this module in the forkserver's preload: importing it loads a run's code
(the campaign's worker, the engine, every component kind a mission script can name) and sets up numba's compiler
for the CPU, which numba otherwise does at a process's first compiled unit (~0.7 s). Each worker forked from the
server starts with all of it. Where workers are spawned instead (no forkserver), each imports it as dask's worker
preload. Nothing else imports this module.
"""

from __future__ import annotations

import logging
import signal
import threading

# Ctrl-C at the terminal reaches every process of the caller's group: the server, and the campaign's workers forked
# from it. The campaign answers it itself (it stops its cluster, keeps the records written, says "interrupted"),
# so the server and its workers ignore it: while the server loaded, the interrupt ended it with a traceback under
# the caller's message, and each worker printed two tracebacks of dask's (KeyboardInterrupt in its event loop).
# The caller starts the server with the interrupt ignored already (processes._launch: from its first moment,
# before this module runs); set here too for a server started from another thread. The forkserver gives its
# workers the handlers it found after its preload: this one.
if threading.current_thread() is threading.main_thread():  # (signals are set from the main thread only)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


class _SchedulerGone(logging.Filter):
    """Drops a worker's account of losing its scheduler (dask's traceback of the closed connection, "Failed to
    communicate with scheduler during heartbeat"). The scheduler of a campaign's own cluster lives in the
    campaign's process: it is gone only when that process stops the cluster (Ctrl-C, SIGTERM, the end) or dies,
    and the campaign says what that means for the runs; a worker's heartbeat caught in between printed its
    traceback under the campaign's one line."""

    def filter(self, record: logging.LogRecord) -> bool:
        from distributed.comm.core import CommClosedError

        return not (record.exc_info and isinstance(record.exc_info[1], CommClosedError))


logging.getLogger("distributed.worker").addFilter(_SchedulerGone())
try:
    import distributed  # noqa: F401 - dask's worker
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
