"""Units compiled from several threads at once (a dask worker with several threads starting runs together): each
thread gets the compiled unit; none finds compilation disabled by another."""

import threading
import uuid

from numba import types

from attsim._core.units import Unit, compile_unit


def _template(x):
    return x * 2.0 + 1.0


def _compile_together(unit, signature, threads: int) -> tuple[list, list]:
    start, got, failed = threading.Barrier(threads), [], []

    def compile_it():
        start.wait()
        try:
            got.append(compile_unit(unit, signature, cache=False))
        except Exception as exc:  # noqa: BLE001 - what the test reports
            failed.append(exc)

    workers = [threading.Thread(target=compile_it) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return got, failed


def test_threads_compiling_one_unit_at_once_all_get_it():
    signature = types.float64(types.float64)
    for _ in range(3):
        unit = Unit(_template, f"threads_{uuid.uuid4().hex[:8]}", {}, tag=uuid.uuid4().hex)  # new: not on disk
        got, failed = _compile_together(unit, signature, 4)
        assert not failed, failed
        assert len(got) == 4 and all(d is got[0] for d in got) and got[0](2.0) == 5.0
