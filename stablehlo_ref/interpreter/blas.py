"""BLAS threads chosen per call from the size of the work, so that a default environment is
never the slow one.

numpy's BLAS (OpenBLAS, MKL) starts one thread per core and, between calls, those threads
spin; on a machine with other work they fight it, and a small matmul becomes 10-300x slower
than on one thread. Before each matmul the kernels call `use_threads(flops)`: one thread
below a few hundred MFLOP per thread, more (up to the core count) above. The count is changed
through threadpoolctl only when it differs from the current one, and the count the process
had is restored when the last top-level run ends (`leave`), so nothing outside a run changes.
Without threadpoolctl (it is a dependency; this is for a broken install) nothing is
changed."""
from __future__ import annotations

import os
import threading

_FLOPS_PER_THREAD = 2e8
# OpenBLAS runs a GEMV with m*n below 2304 * GEMM_MULTITHREAD_THRESHOLD (4) on the calling
# thread whatever its thread count (a GEMM below 65536 * 4 for m*n*k): for calls of fewer
# flops than the smaller of the two the count is left as it is (changing it costs about
# 0.1-0.2 ms, far more than such a matmul: the tiny dots of upstream's test programs)
SINGLE_THREADED_FLOPS = 2.0 * 2304 * 4
_lock = threading.Lock()
_state = {"controllers": None, "current": None, "original": None, "runs": 0}


def _controllers():
    c = _state["controllers"]
    if c is None:
        try:
            from threadpoolctl import ThreadpoolController
            c = [lc for lc in ThreadpoolController().lib_controllers
                 if getattr(lc, "user_api", None) == "blas"]
        except Exception:  # noqa: BLE001 - no control possible: leave BLAS as it is
            c = []
        _state["controllers"] = c
        _state["original"] = [lc.num_threads for lc in c]
    return c


_CORES = os.cpu_count() or 1


def threads_for(flops: float) -> int:
    if flops < 2 * _FLOPS_PER_THREAD:
        return 1
    return max(1, min(_CORES, int(flops // _FLOPS_PER_THREAD)))


def use_threads(flops: float) -> None:
    """Set the BLAS thread count for a call of about `flops` floating-point operations."""
    if flops < SINGLE_THREADED_FLOPS:
        return
    want = 1 if flops < 2 * _FLOPS_PER_THREAD else threads_for(flops)
    if want == _state["current"]:
        return
    with _lock:
        for lc in _controllers():
            try:
                lc.set_num_threads(want)
            except Exception:  # noqa: BLE001 - a library that refuses keeps its count
                pass
        _state["current"] = want


# the number of top-level runs started: kernels that keep what they derived from an operand
# object (dot_general's arranged operands) keep it for one run only, since a caller may write
# into an argument array between runs
RUN = [0]


def enter() -> None:
    """A top-level run starts."""
    _state["runs"] += 1
    RUN[0] += 1


def leave() -> None:
    """A top-level run ends: when it was the last one running, give BLAS back the thread
    count it had before the first call of `use_threads`."""
    _state["runs"] -= 1
    if _state["runs"] > 0 or _state["current"] is None:
        return
    with _lock:
        for lc, n in zip(_controllers(), _state["original"] or ()):
            try:
                lc.set_num_threads(n)
            except Exception:  # noqa: BLE001
                pass
        _state["current"] = None
