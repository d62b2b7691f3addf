"""What a campaign's worker needs before its first run, imported by the server workers are forked from.

:mod:`attsim.campaign.processes` names this module in the forkserver's preload: importing it loads a run's code
(the campaign's worker, the engine, every component kind a mission script can name) and sets up numba's compiler
for the CPU, which numba otherwise does at a process's first compiled unit (~0.7 s). Each worker forked from the
server starts with all of it. Nothing else imports this module.
"""

from __future__ import annotations

import os
import signal
import threading

from .processes import SERVER_INTERRUPT

# Ctrl-C at the terminal reaches the server too (it is in the caller's process group): while it loads, the
# interrupt ended it with a traceback under the caller's own message (multiprocessing shields the server from it
# only once its preload is done). The caller stops the server itself (processes.stop_server), so the interrupt is
# ignored until the imports are done (the caller starts the server with it ignored: processes._launch); then the
# handling the caller names is put in place, and the workers forked later have it as a spawned worker has it.
_MAIN = threading.current_thread() is threading.main_thread()  # (signals are set from the main thread only)
_INTERRUPT = signal.signal(signal.SIGINT, signal.SIG_IGN) if _MAIN else None
_INTERRUPT = {"default": signal.default_int_handler, "ignore": signal.SIG_IGN}.get(
    os.environ.pop(SERVER_INTERRUPT, ""), _INTERRUPT)
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
finally:
    if _MAIN:
        signal.signal(signal.SIGINT, _INTERRUPT)
