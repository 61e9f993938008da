"""Shared helpers for the benchmarks: upstream's C++ reference interpreter (jaxlib's
`stablehlo.eval_module`) and XLA CPU (jaxlib's PJRT client), both run in a worker
subprocess because an error in the C++ interpreter aborts the whole process; turning
upstream-style test programs into plain functions those peers can run; comparing results.

Nothing here is imported by the package or its tests; jax/jaxlib are needed only for the
peer columns (`pip install -e .[interop]`). The program rewriting comes from
`stablehlo_ref.conformance`."""
from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

# ---------------------------------------------------------------------------- programs

# Turning an upstream test program (`@main()` checked by `@check.*` custom calls) into one
# whose `@main` returns the checked values lives in the conformance suite, which builds its
# cases the same way: strip_checks(text) -> (program text, result labels).
from stablehlo_ref.conformance.backends import from_wire as _from_wire  # noqa: E402
from stablehlo_ref.conformance.cases import NotRunnable, strip_checks  # noqa: E402,F401
from stablehlo_ref.conformance.worker import WorkerCrashed, WorkerProcess, WorkerStartError, WorkerTimeout  # noqa: E402


# ---------------------------------------------------------------------------- our side

def ours_parse(text: str):
    from stablehlo_ref.text import parse
    return parse(text)


def ours_run(module, args=()):
    from stablehlo_ref.interpreter import run
    return [np.asarray(r) for r in run(module, *args)]


# ---------------------------------------------------------------------------- peer worker

def _attr_to_numpy(attr):
    try:
        return ("array", np.array(attr))
    except Exception:
        return ("text", str(attr))       # e.g. bf16/f8/i4: our parser reads it back


def _worker(conn):
    """The peer worker process (started by PeerWorker through conformance.worker)."""
    from jax._src.interpreters import mlir as jmlir
    from jaxlib.mlir import ir
    from jaxlib.mlir.dialects import stablehlo
    from jaxlib.mlir.passmanager import PassManager
    stablehlo.register_stablehlo_passes()
    cpp_ctx = jmlir.make_ir_context()
    stablehlo.register_interpreter_dialect(cpp_ctx)
    with cpp_ctx:
        # the C++ interpreter knows no chlo ops: decompose them first (upstream's tests run
        # the chlo legalization before interpreting too)
        legalize_chlo = PassManager.parse("builtin.module(func.func(chlo-legalize-to-stablehlo))")
    xla_ctx = jmlir.make_ir_context()
    conn.send(("ready",))
    cpu = devices = opts = None
    while True:
        try:
            msg = conn.recv()
        except EOFError:
            return
        if msg is None:
            return
        kind, text, args = msg
        try:
            if kind == "cpp":
                with cpp_ctx:
                    t0 = time.perf_counter()
                    m = ir.Module.parse(text)
                    if "chlo." in text:
                        legalize_chlo.run(m.operation)
                    t1 = time.perf_counter()
                    attrs = [ir.DenseElementsAttr.get(np.ascontiguousarray(a)) for a in args]
                    res = stablehlo.eval_module(m, attrs)
                    t2 = time.perf_counter()
                    outs = [_attr_to_numpy(r) for r in res]
                conn.send(("ok", {"parse": t1 - t0, "run": t2 - t1}, outs))
            elif kind == "xla":
                import jax
                from jax._src import xla_bridge as xb, compiler
                from jax._src.lib import xla_client as xc
                if cpu is None:
                    cpu = xb.get_backend("cpu")
                    devices = xc.DeviceList((cpu.local_devices()[0],))
                    opts = compiler.get_compile_options(num_replicas=1, num_partitions=1)
                with xla_ctx:
                    m = ir.Module.parse(text)
                    t0 = time.perf_counter()
                    exe = cpu.compile_and_load(m, devices, opts)
                    t1 = time.perf_counter()
                dev_args = [jax.device_put(a) for a in args]
                best = None
                for _ in range(3):          # best of 3: the first run pays one-off costs
                    t2 = time.perf_counter()
                    outs = exe.execute_sharded([[a] for a in dev_args])
                    outs = [x[0] for x in outs.disassemble_into_single_device_arrays()]
                    outs = [np.asarray(o) for o in outs]
                    dt = time.perf_counter() - t2
                    best = dt if best is None else min(best, dt)
                conn.send(("ok", {"compile": t1 - t0, "run": best},
                           [("array", o) for o in outs]))
            else:
                conn.send(("error", f"unknown task {kind}"))
        except Exception as e:   # reported, the worker lives on
            conn.send(("error", f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}"[:300]))


@dataclass
class PeerResult:
    status: str                     # ok | error | crash | timeout
    times: dict = field(default_factory=dict)
    outputs: list = field(default_factory=list)
    message: str = ""


class PeerWorker:
    """One subprocess running jaxlib's C++ interpreter and XLA on request; restarted
    after a crash (the C++ interpreter aborts the process on any error) or a timeout
    (the lifecycle is conformance.worker.WorkerProcess, which the backends use too)."""

    def __init__(self):
        self.worker = WorkerProcess("peers", "_worker", name="peer worker", env={"JAX_PLATFORMS": "cpu"},
                                    path=(os.path.dirname(os.path.abspath(__file__)),), start_timeout=120)

    def call(self, kind: str, text: str, args=(), timeout: float = 120.0) -> PeerResult:
        if not self.worker.alive:
            self.worker.kill()
            try:
                ready = self.worker.start()
            except WorkerStartError as e:
                raise RuntimeError(f"{e} (is jax installed?)") from None
            assert ready == ("ready",), ready
        try:
            msg = self.worker.request((kind, text, [np.asarray(a) for a in args]), timeout)
        except WorkerTimeout:
            return PeerResult("timeout", message=f"no answer in {timeout:g} s")
        except WorkerCrashed as e:
            return PeerResult("crash", message=str(e))
        if msg[0] == "error":
            return PeerResult("error", message=msg[1])
        return PeerResult("ok", times=msg[1], outputs=[_from_wire(o) for o in msg[2]])

    def close(self):
        self.worker.close()


def jax_available() -> bool:
    try:
        import jax  # noqa: F401
        import jaxlib  # noqa: F401
        return True
    except Exception:
        return False


# ---------------------------------------------------------------------------- comparison

def _eps(dtype) -> float:
    try:
        import ml_dtypes
        return float(ml_dtypes.finfo(dtype).eps)
    except Exception:
        return float(np.finfo(dtype).eps)


def _is_ml_float(dtype) -> bool:
    try:
        import ml_dtypes
        ml_dtypes.finfo(dtype)
        return True
    except Exception:
        return False


def compare(a, b, ulps: float = 8.0, rtol: Optional[float] = None, atol: float = 0.0):
    """'exact'; 'close' (floats within `ulps` of the dtype's epsilon, or rtol/atol when
    given, relative to each element; NaN matches NaN); 'near' (the same bound relative to
    the array's largest finite magnitude); or 'differ: ...'."""
    a = np.asarray(a)
    b = np.asarray(b)
    if a.shape != b.shape:
        return f"differ: shape {a.shape} vs {b.shape}"
    is_float = a.dtype.kind in "fc" or (a.dtype.kind == "V" and _is_ml_float(a.dtype))
    if not is_float and (a.dtype.kind == "V" or b.dtype.kind == "V"):
        return "exact" if a.tobytes() == b.tobytes() else "differ: bytes"
    if not is_float:
        if np.array_equal(a, b):
            return "exact"
        bad = int(np.sum(a != b))
        return f"differ: {bad} of {a.size} elements"
    af = a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)
    bf = b.astype(af.dtype)
    if np.array_equal(af, bf, equal_nan=True):
        return "exact"
    if rtol is None:
        rtol = ulps * _eps(a.dtype)
    both_nan = np.isnan(af) & np.isnan(bf)
    with np.errstate(all="ignore"):
        ok = both_nan | (af == bf) | (np.abs(af - bf) <= atol + rtol * np.maximum(np.abs(af), np.abs(bf)))
    if ok.all():
        return "close"
    # normwise: every error within `ulps` epsilons of the array's largest magnitude (the
    # differences left near zero or after cancellation are of that size)
    with np.errstate(all="ignore"):
        finite = np.isfinite(af) & np.isfinite(bf)
        scale = float(np.max(np.abs(np.where(finite, af, 0)), initial=0.0))
        near = ok | (finite & (np.abs(af - bf) <= atol + rtol * scale))
    if near.all():
        return "near"
    bad = int((~ok).sum())
    with np.errstate(all="ignore"):
        diff = np.abs(af - bf)[~ok]
    worst = float(np.nanmax(diff)) if diff.size and not np.all(np.isnan(diff)) else float("nan")
    return f"differ: {bad} of {a.size} elements (max abs diff {worst:.3g})"


def compare_lists(xs, ys, **kw) -> str:
    if len(xs) != len(ys):
        return f"differ: {len(xs)} vs {len(ys)} results"
    verdicts = [compare(x, y, **kw) for x, y in zip(xs, ys)]
    bad = [f"#{i}: {v}" for i, v in enumerate(verdicts) if v.startswith("differ")]
    if bad:
        return "differ: " + "; ".join(bad)
    for v in ("near", "close"):
        if v in verdicts:
            return v
    return "exact"


def fmt_s(t: Optional[float]) -> str:
    if t is None:
        return "-"
    if t < 1e-3:
        return f"{t * 1e6:.0f}us"
    if t < 1:
        return f"{t * 1e3:.1f}ms"
    return f"{t:.2f}s"
