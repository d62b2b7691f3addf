"""numba options of the kernels of the compiled mission loop (layer 0).

A bank of the loop (:mod:`attsim.mission_banks`) is a named tuple of arrays,
and numba handles an array as a struct of seven to nine machine words with a
reference count. Compiled with numba's defaults, the loop spent most of a
cycle on two things that are not arithmetic: passing banks to the kernels it
calls (hundreds of words copied per call) and counting references (an atomic
increment and decrement for every array taken out of a bank or passed on).
``python tools/bench_mission.py --only rw`` prints the time per cycle.

* :data:`LOOP_INLINED`, for a kernel the loop runs every cycle (or every
  instant): LLVM inlines it into its caller (``forceinline``), so no bank
  is passed through a call, and it counts no references (``_nrt=False``).
* :data:`LOOP_CALLED`, for one it runs more rarely (an event, an estimator
  update, a mode check) or that is too large to copy into every caller: a
  call, without reference counts. Inlining those would only make the loop
  slower to compile.

Without reference counting a kernel may only use arrays its caller keeps
alive for the whole call (the banks, the plant's inputs), and must not
allocate one: a kernel that would does not compile ("NRT required but not
enabled"). numba hands both options down to the functions it compiles for
such a kernel unless they set their own, so a function the loop calls that
must allocate (the MEKF's, a user's law) sets ``_nrt=True`` itself.
"""

from __future__ import annotations

__all__ = ["LOOP_INLINED", "LOOP_CALLED"]

LOOP_INLINED = {"forceinline": True, "_nrt": False}
LOOP_CALLED = {"forceinline": False, "_nrt": False}
