"""Whose code raised an exception: a user's mission script, attsim, or a library; and where.

The command line turns what escapes a command into one line (``attsim.cli``)
and the mission-script runs name an error in a user's ``criteria``
(:mod:`attsim.script_runs`) by the innermost frame that is neither
Python's nor an installed package's: that frame's file and line say where to
look, and whether it is attsim's decides between "your input" (exit 2) and
"a bug in attsim" (exit 3).
"""

from __future__ import annotations

import sysconfig
import traceback
from pathlib import Path

from .errors import one_line as _one_line

__all__ = ["frame_origin", "describe", "user_line"]

_PACKAGE_DIR = Path(__file__).resolve().parent  # attsim/
_LIBRARY_DIRS = tuple({Path(sysconfig.get_paths()[key]).resolve()
                       for key in ("stdlib", "platstdlib", "purelib", "platlib")})


def frame_origin(filename: str) -> str:
    """Who wrote the code of a traceback frame: 'attsim', 'library' (Python's or an installed package's) or 'user'."""
    if filename.startswith("<"):  # <frozen importlib._bootstrap> and the like
        return "library"
    path = Path(filename).resolve()
    if path.is_relative_to(_PACKAGE_DIR):
        return "attsim"
    # a compiled extension names a source file it was built from (pandas/_libs/x.pxi), not one on disk
    if not path.is_file() or any(path.is_relative_to(root) for root in _LIBRARY_DIRS):
        return "library"
    return "user"


def _original(exc: BaseException) -> BaseException:
    """The exception SimPy's copies of ``exc`` go back to: SimPy re-raises a process's exception as a new one of the
    same type, raised in its own code and caused by it. A cause raised over by anyone else is another error
    (``raise ValueError("the mass in my file ...") from err``): the one raised last is the one said. A chain that
    comes back on itself (``raise e from e``) ends where it would repeat: followed round, it held the command line
    in an endless loop with nothing said."""
    seen = {id(exc)}
    while _copied_from(exc, exc.__cause__) and id(exc.__cause__) not in seen:
        exc = exc.__cause__
        seen.add(id(exc))
    return exc


def _copied_from(exc: BaseException, cause: BaseException | None) -> bool:
    if cause is None or type(cause) is not type(exc) or exc.__traceback__ is None:
        return False
    innermost = exc.__traceback__
    while innermost.tb_next is not None:
        innermost = innermost.tb_next
    return Path(innermost.tb_frame.f_code.co_filename).parent.name == "simpy"


def describe(exc: BaseException) -> tuple[str, str]:
    """Whose code raised ``exc`` ('attsim' or 'user') and one line saying what and where.

    The innermost frame that is neither Python's nor an installed library's
    decides: a mission script's (or any file outside attsim's), or attsim's
    own (except a module's ``__getattr__``: asking for a name attsim does
    not have is the asker's error). SimPy re-raises a process's exception as a copy whose cause is the
    original; the original's frames are the ones that say who raised it.
    """
    exc = _original(exc)
    text = f"{type(exc).__name__}: {_one_line(exc)}"
    if isinstance(exc, SyntaxError) and exc.filename:  # raised by the compiler, about the file it names
        text = f"{type(exc).__name__}: {_one_line(exc.msg)}"
        return frame_origin(exc.filename), f"{exc.filename}:{exc.lineno}: {text}"
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        origin = frame_origin(frame.filename)
        if origin == "attsim" and frame.name == "__getattr__":  # "no such name" (PEP 562) is its caller's error
            continue
        if origin != "library":
            return origin, f"{frame.filename}:{frame.lineno}: {text}"
    return "attsim", text


def cause_line(exc: BaseException) -> str | None:
    """:func:`user_line` of what ``exc`` (or the error SimPy's copy of it goes back to) was raised from: the line of a
    user's law whose exception attsim reports as its own (a ``ControllerError`` naming the controller and time)."""
    cause = _original(exc).__cause__
    return user_line(cause) if cause is not None else None


def user_line(exc: BaseException) -> str | None:
    """``file:line`` of the innermost frame of a user's script (not attsim's, not a library's) ``exc`` went through."""
    exc = _original(exc)  # SimPy's copy: the original's frames
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if frame_origin(frame.filename) == "user":
            return f"{frame.filename}:{frame.lineno}"
    return None
