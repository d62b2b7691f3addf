"""A command ended by SIGTERM or SIGHUP ends as Ctrl-C ends it.

A batch system's time limit (SLURM, ``timeout``) sends SIGTERM, a closed
terminal SIGHUP; by default either ends Python at once, without a word: a
campaign's records of the last second were lost and a run's partial
telemetry was left unsaid. While :func:`terminations_interrupt` holds, they
raise :class:`Terminated` in the main thread instead, a
:class:`KeyboardInterrupt`, so every path that keeps what is done on Ctrl-C
keeps it here too, and the command exits with 128 + the signal's number, as
a shell reports a command a signal ended.

A signal whose handling is not the default (SIGHUP ignored under ``nohup``,
a handler of the user's) is left as it is.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading

__all__ = ["Terminated", "terminations_interrupt", "TERMINATING"]

if sys.platform == "win32":
    TERMINATING = (signal.SIGTERM,)  # no SIGHUP there
else:
    TERMINATING = (signal.SIGTERM, signal.SIGHUP)


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP received while a command ran (module docstring)."""

    def __init__(self, signum: int):
        super().__init__(int(signum))  # the number alone: an exception made again from its args is the same
        self.signum = int(signum)

    def __str__(self) -> str:
        return signal.Signals(self.signum).name

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


def _raise(signum, frame):
    raise Terminated(signum)


@contextlib.contextmanager
def terminations_interrupt():
    """SIGTERM and SIGHUP raise :class:`Terminated` for the block (from the main thread: elsewhere no handler can
    be set)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {signum: signal.signal(signum, _raise) for signum in TERMINATING
                if signal.getsignal(signum) is signal.SIG_DFL}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
