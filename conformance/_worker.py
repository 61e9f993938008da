"""The worker subprocess behind the `xla`, `upstream` and `iree` backends. Native compilers
and upstream's C++ interpreter may abort the whole process on a bad program, so they run
here, one request at a time; the parent restarts the worker after a crash or a timeout.

Protocol (multiprocessing pipe): the parent sends (text, [numpy arrays]); the worker answers
("ok", [outputs]) with each output ("array", ndarray) or ("text", "dense<...> : tensor<...>"),
or ("error", stage, message) with stage compile | run | unsupported. `None` ends it."""
from __future__ import annotations

import os
import re

import numpy as np

_UNSUPPORTED = re.compile(r"UNIMPLEMENTED|[Uu]nsupported|not supported|not implemented|failed to legalize|"
                          r"does not have integral number of total bytes", re.S)


def _first_line(e: BaseException) -> str:
    s = str(e).strip()
    lines = [l.strip() for l in s.splitlines() if l.strip()]
    msg = lines[0] if lines else type(e).__name__
    # MLIR diagnostics put the useful part on a later line
    for l in lines[1:]:
        if "error:" in l or "LLVM ERROR" in l or "Assertion" in l:
            msg = f"{msg} {l}"
            break
    else:
        for l in lines[1:]:
            if l.startswith("Error code:"):      # a compiler tool that crashed (a signal)
                msg = f"{msg} ({l.lower()}: the compiler crashed)" if l.split(":")[-1].strip().startswith("-") else f"{msg} ({l})"
                break
    return msg[:500]


def _classify(stage: str, e: BaseException):
    msg = f"{type(e).__name__}: {_first_line(e)}"
    return ("error", "unsupported" if _UNSUPPORTED.search(str(e)) else stage, msg)


def _attr_to_wire(attr):
    try:
        a = np.array(attr)
        shape = tuple(attr.type.shape)
        if a.shape != shape and a.size == int(np.prod(shape, dtype=np.int64)):
            a = a.reshape(shape)           # zero-size results come back flat
        return ("array", a)
    except Exception:      # bf16/f8/i4...: numpy cannot view it; the parent parses the text
        return ("text", str(attr))


_QUANT_PROBE = """func.func @main(%arg0: tensor<2x!quant.uniform<i8:f32, 0.5:-1>>) -> tensor<2x!quant.uniform<i8:f32, 0.5:-1>> {
  return %arg0 : tensor<2x!quant.uniform<i8:f32, 0.5:-1>>
}"""


def _load_quant(ctx):
    """jax's MLIR context does not load the `quant` dialect until something needs it;
    deserializing a tiny portable artifact with a quantized type (written by our own
    serializer) loads it, so that programs with quantized types parse."""
    try:
        from jaxlib.mlir.dialects import stablehlo
        from stablehlo_ref.serialization import serialize
        from stablehlo_ref.text import parse
        stablehlo.deserialize_portable_artifact(ctx, serialize(parse(_QUANT_PROBE), "1.0.0"))
    except Exception:      # noqa: BLE001 - without it only quantized programs fail to parse
        pass


def _register_jax_custom_calls():
    """The custom-call targets jax registers with XLA (LAPACK on CPU, cuSOLVER/cuBLAS/... on GPU)
    and LAPACK's function table, which jax fills only when it first lowers a linear-algebra op:
    without it a program from `jax.export` that calls `@lapack_*_ffi` crashes the compiled code."""
    try:
        from jax._src.lax import linalg      # registers jax's linalg custom-call modules on import
        linalg.initialize_lapack()
    except Exception:      # noqa: BLE001 - an older jax: such programs fail to compile, clearly
        pass


def _xla(platform: str):
    from jax._src.interpreters import mlir as jmlir
    from jax._src.lib import xla_client as xc
    from jaxlib.mlir import ir
    import jax
    # 64-bit arguments (i64, ui64, f64, complex128) must reach XLA as they are, not truncated
    # to 32 bits by jax's default
    jax.config.update("jax_enable_x64", True)
    try:        # public since jax 0.4.2x; the private module is the fallback
        from jax.extend.backend import get_backend, get_compile_options
    except ImportError:
        from jax._src.compiler import get_compile_options
        from jax._src.xla_bridge import get_backend
    backend = get_backend(platform)
    _register_jax_custom_calls()
    dev = backend.local_devices()[0]
    devices = xc.DeviceList((dev,))
    opts = get_compile_options(num_replicas=1, num_partitions=1)
    # jaxlib renamed compile (returning a loaded executable) to compile_and_load
    compile_ = getattr(backend, "compile_and_load", None) or backend.compile
    from jaxlib.mlir.dialects import stablehlo
    from jaxlib.mlir.passmanager import PassManager
    stablehlo.register_stablehlo_passes()
    ctx = jmlir.make_ir_context()
    _load_quant(ctx)
    with ctx:
        # XLA takes no quantized types: lower them to integer math first, as a
        # framework would (the function signature becomes the storage types)
        quant_to_math = PassManager.parse("builtin.module(func.func(stablehlo-legalize-quant-to-math))")

    def run(text, args):
        try:
            with ctx:
                m = ir.Module.parse(text)
                if "quant." in text:
                    quant_to_math.run(m.operation)
                if "?" in text:
                    with ir.Location.unknown():
                        m = _refine_shapes(ir, jmlir, m, args)
                exe = compile_(m, devices, opts)
        except Exception as e:
            return _classify("compile", e)
        try:
            bufs = [jax.device_put(a, dev) for a in args]
            if hasattr(exe, "execute_sharded"):
                outs = exe.execute_sharded(bufs)
                outs = [x[0] for x in outs.disassemble_into_single_device_arrays()]
            else:
                outs = exe.execute(bufs)
            return ("ok", [("array", np.asarray(o)) for o in outs])
        except Exception as e:
            return _classify("run", e)
    where = dev.platform if dev.device_kind.lower() == dev.platform.lower() else f"{dev.platform} {dev.device_kind}"
    return run, f"jax {jax.__version__} on {where}"


def _refine_shapes(ir, jmlir, m, args):
    """A shape-polymorphic program (`tensor<?x...>` arguments of `@main`) specialised to the
    arguments' shapes, as jax does before it compiles a call of an exported function: a new
    `@main` with the arguments' static types converts them to the old main's types and calls
    it, then StableHLO's shape refinement makes every shape inside static (XLA compiles no
    unbounded dynamism)."""
    main = None
    for op in m.body.operations:
        if op.operation.name == "func.func" and ir.StringAttr(op.attributes["sym_name"]).value == "main":
            main = op
    if main is None:
        return m
    ft = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)
    ins, outs = list(ft.inputs), list(ft.results)
    if len(ins) != len(args):
        return m
    new, changed = [], False
    for t, a in zip(ins, args):
        try:
            rt = ir.RankedTensorType(t)
        except ValueError:      # not a ranked tensor (a token, a tuple)
            rt = None
        if rt is not None and not rt.has_static_shape:
            new.append(ir.RankedTensorType.get(list(np.shape(a)), rt.element_type))
            changed = True
        else:
            new.append(t)
    if not changed:
        return m
    inner = "_stablehlo_ref_polymorphic_main"
    main.attributes["sym_name"] = ir.StringAttr.get(inner)
    main.attributes["sym_visibility"] = ir.StringAttr.get("private")
    body, vals = [], []
    for i, (t, n) in enumerate(zip(ins, new)):
        if t == n:
            vals.append(f"%arg{i}")
        else:
            body.append(f"  %c{i} = stablehlo.convert %arg{i} : ({n}) -> {t}")
            vals.append(f"%c{i}")
    res = ", ".join(map(str, outs))
    call = f"func.call @{inner}({', '.join(vals)}) : ({', '.join(map(str, ins))}) -> ({res})"
    if outs:
        body.append(f"  %r:{len(outs)} = {call}")
        body.append(f"  return {', '.join(f'%r#{k}' for k in range(len(outs)))} : {res}")
    else:
        body.append(f"  {call}")
        body.append("  return")
    sig = ", ".join(f"%arg{i}: {t}" for i, t in enumerate(new))
    # (with a declaration of the callee, so that the wrapper verifies on its own)
    wrapper = ir.Module.parse(f"func.func private @{inner}({', '.join(map(str, ins))}) -> ({res})\n"
                              f"func.func public @main({sig}) -> ({res}) {{\n" + "\n".join(body) + "\n}\n")
    m.body.append(list(wrapper.body.operations)[1].operation.detach_from_parent())
    return jmlir.refine_polymorphic_shapes(m)


def _to_attr(ir, a):
    """A numpy argument as a DenseElementsAttr; bf16/f8 (ml_dtypes) arrays go as their bits
    with the MLIR element type named."""
    if a.dtype.kind != "V" and a.dtype.type.__module__ == "numpy":
        # unsigned arrays keep their signedness (otherwise they arrive signless: i32 for ui32);
        # a rank-0 array goes as one element with its element type and the empty shape named
        # (otherwise it arrives as tensor<1x...>)
        signless = a.dtype.kind != "u"
        if a.ndim:
            return ir.DenseElementsAttr.get(a, signless=signless)
        one = ir.DenseElementsAttr.get(a.reshape(1), signless=signless)
        return ir.DenseElementsAttr.get(a.reshape(1), signless=signless, type=one.type.element_type, shape=[])
    from stablehlo_ref.ir.types import ELEMENT_TYPES
    names = [n for n, et in ELEMENT_TYPES.items() if et.dtype == a.dtype and et.is_float]
    if not names or a.dtype.itemsize not in (1, 2):
        raise ValueError(f"cannot pass a {a.dtype} argument to upstream's interpreter")
    bits = a.reshape(-1).view(np.uint8 if a.dtype.itemsize == 1 else np.uint16)
    return ir.DenseElementsAttr.get(bits, type=ir.Type.parse(names[0]), shape=list(a.shape))


def _upstream():
    from jax._src.interpreters import mlir as jmlir
    from jaxlib.mlir import ir
    from jaxlib.mlir.dialects import stablehlo
    from jaxlib.mlir.passmanager import PassManager
    stablehlo.register_stablehlo_passes()
    ctx = jmlir.make_ir_context()
    stablehlo.register_interpreter_dialect(ctx)
    _load_quant(ctx)
    with ctx:
        # upstream's interpreter knows no chlo ops: decompose them first, as its tests do
        legalize = PassManager.parse("builtin.module(func.func(chlo-legalize-to-stablehlo))")

    def run(text, args):
        with ctx:
            try:
                m = ir.Module.parse(text)
                if "chlo." in text:
                    legalize.run(m.operation)
            except Exception as e:
                return _classify("compile", e)
            try:
                # np.ascontiguousarray makes a rank-0 array rank 1: the shape is put back
                attrs = [_to_attr(ir, np.ascontiguousarray(a).reshape(np.shape(a))) for a in args]
                res = stablehlo.eval_module(m, attrs)
                return ("ok", [_attr_to_wire(r) for r in res])
            except Exception as e:
                return _classify("run", e)
    return run, "stablehlo.eval_module"


def _iree(device: str):
    import iree.compiler as ireec
    import iree.runtime as ireert
    target = {"local-task": "llvm-cpu", "local-sync": "llvm-cpu", "cuda": "cuda",
              "vulkan": "vulkan-spirv", "hip": "rocm"}.get(device, "llvm-cpu")
    # const-eval off: corpus programs are all constants, which IREE would otherwise evaluate
    # while compiling (and its evaluator trips on some, e.g. complex multiply): run them
    extra = ["--iree-input-demote-f64-to-f32=false", "--iree-opt-const-eval=false"]
    if target == "llvm-cpu":
        extra.append("--iree-llvmcpu-target-cpu=host")
    if device not in ireert.query_available_drivers():
        raise RuntimeError(f"this IREE runtime has no {device!r} driver (it has: "
                           f"{', '.join(ireert.query_available_drivers())})")
    try:
        config = ireert.Config(device)
    except Exception as e:      # noqa: BLE001 - no device behind the driver
        raise RuntimeError(f"IREE's {device} driver found no usable device ({_first_line(e)})") from None

    def run(text, args):
        try:
            vmfb = ireec.compile_str(text, target_backends=[target], input_type="stablehlo",
                                     extra_args=extra)
        except Exception as e:
            return _classify("compile", e)
        try:
            ctx = ireert.SystemContext(config=config)
            vm = ireert.VmModule.copy_buffer(ctx.instance, vmfb)
            ctx.add_vm_module(vm)
            outs = ctx.modules[vm.name]["main"](*args)
            if outs is None:
                outs = []
            elif not isinstance(outs, (list, tuple)):
                outs = [outs]
            return ("ok", [("array", _iree_host(o)) for o in outs])
        except Exception as e:
            return _classify("run", e)
    try:
        from iree.compiler import version as cv
        ver = f"iree {cv.VERSION}"
    except Exception:      # noqa: BLE001 - older wheels have no version module
        ver = "iree"
    return run, f"{ver}, {target} on {device}"


def _iree_host(o):
    """An IREE result as a numpy array. `to_host` knows no numpy dtype for empty results and
    for i1/i2/i4 element types IREE packs (low bits first): those come back as the raw bits
    in uint8, which the comparison casts to the output's element type."""
    if not hasattr(o, "to_host"):
        return np.asarray(o)
    try:
        return np.asarray(o.to_host())
    except Exception:
        bv = o._buffer_view
        shape = tuple(int(d) for d in bv.shape)
        n = int(np.prod(shape, dtype=np.int64))
        if n == 0:
            return np.zeros(shape, np.uint8)
        bits = int(bv.element_type) & 0xFF
        if bits not in (1, 2, 4):
            raise
        raw = np.array(bv.map().asarray((int(bv.byte_length),), np.dtype(np.uint8)))
        per = 8 // bits
        vals = (raw[:, None] >> (np.arange(per, dtype=np.uint8) * bits)) & ((1 << bits) - 1)
        return vals.reshape(-1)[:n].reshape(shape).astype(np.uint8)


def main(conn, kind: str, option: str):
    """Entry point of the worker process (started by conformance.worker.WorkerProcess)."""
    if kind == "xla" and option == "cpu":
        os.environ.setdefault("JAX_PLATFORMS", "cpu")
    try:
        if kind == "xla":
            run, desc = _xla(option)
        elif kind == "upstream":
            run, desc = _upstream()
        elif kind == "iree":
            run, desc = _iree(option)
        else:
            raise ValueError(f"unknown worker kind {kind}")
    except Exception as e:
        conn.send(("failed", f"{type(e).__name__}: {_first_line(e)}"))
        return
    conn.send(("ready", desc))
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            return
        if msg is None:
            return
        text, args = msg
        try:
            conn.send(run(text, args))
        except Exception as e:      # e.g. an output that cannot be pickled
            conn.send(("error", "run", f"{type(e).__name__}: {_first_line(e)}"))
