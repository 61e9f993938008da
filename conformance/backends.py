"""Backends the suite runs cases on.

A backend has a `name`, `available()` -> (bool, reason), and `run(program_text, inputs)`
-> list of numpy arrays (the results of `@main`). A failure raises `BackendError` with
`stage` "compile" or "run" (or "timeout"/"crash"); a program the backend does not support
raises `BackendUnsupported`. `extra_ulps`/`atol_scale` loosen float comparisons for
hardware whose math library is less accurate than the reference.

Optional dependencies (jax, iree) are imported only inside their adapters, and only in a
worker subprocess: `import stablehlo_ref.conformance` needs neither."""
from __future__ import annotations

import importlib.util
import re
import signal
import threading
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from stablehlo_ref.conformance.worker import WorkerCrashed, WorkerProcess, WorkerStartError, WorkerTimeout
from stablehlo_ref.errors import StableHLOError, UsageError


class BackendError(StableHLOError):
    """A case could not be compiled or run; `stage` says where (compile | run | timeout | crash)."""

    def __init__(self, message: str, stage: str = "run"):
        super().__init__(message)
        self.stage = stage


class BackendUnsupported(BackendError):
    """The backend does not support what the program uses (an op, a type, a feature)."""

    def __init__(self, message: str):
        super().__init__(message, "unsupported")


class Backend:
    name = "?"
    extra_ulps = 0            # added to every ULP bound
    atol_scale = 1.0          # multiplies every absolute tolerance

    def available(self) -> Tuple[bool, str]:
        return True, ""

    def run(self, program: str, inputs: Sequence[np.ndarray], timeout: Optional[float] = None) -> List[np.ndarray]:
        raise NotImplementedError

    def run_processes(self, program: str, inputs: Sequence[np.ndarray], num_replicas: int,
                      num_partitions: int, timeout: Optional[float] = None) -> List[np.ndarray]:
        """Run `@main` as every process of a `num_replicas x num_partitions` grid (StableHLO's
        SPMD model); `inputs` holds each process's arguments in process order (replica-major),
        the result every process's results in that order. Backends that run one process per
        program leave this as it is: such cases are reported unsupported."""
        raise BackendUnsupported(f"a multi-process case ({num_replicas} replica(s) x {num_partitions} "
                                 f"partition(s)): backend {self.name!r} runs single-process programs only")

    def run_infeed(self, program: str, inputs: Sequence[np.ndarray], feeds: Sequence, num_replicas: int = 1,
                   num_partitions: int = 1, timeout: Optional[float] = None) -> List[np.ndarray]:
        """Run a program whose `stablehlo.infeed` ops read values the host feeds: `feeds` (a
        list of `cases.Feed`) holds each process's queue in order, one Feed per execution of
        an infeed op (its values before the token, with their MLIR types). Otherwise as `run`
        (one process) or `run_processes`. Backends with no way to feed an infeed queue leave
        this as it is: such cases are reported unsupported."""
        raise BackendUnsupported(f"host-fed infeed values: backend {self.name!r} has no way to feed the "
                                 "infeed queue (Backend.run_infeed)")

    def describe(self) -> str:
        return self.name

    def details(self) -> str:
        """One line about the implementation (version, device), for `--list-backends`."""
        d = self.describe()
        return d[len(self.name) + 2:] if d.startswith(self.name + ": ") else ("" if d == self.name else d)

    def clone(self) -> "Backend":
        """Another instance for running cases concurrently (`run_suite(jobs=N)`). The
        default shares this one: override when `run` is not safe to call from several
        threads at once."""
        return self

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _first_line(e: BaseException) -> str:
    s = str(e).strip()
    return s.splitlines()[0] if s else type(e).__name__


class _Timeout(Exception):
    pass


class ReferenceBackend(Backend):
    """This project's interpreter, in process. The timeout uses SIGALRM (main thread on
    POSIX only; elsewhere cases run without one)."""
    name = "reference"

    def describe(self) -> str:
        return "reference: stablehlo_ref's numpy interpreter"

    def run(self, program, inputs, timeout=None):
        return self._run(program, inputs, 1, 1, timeout)

    def run_infeed(self, program, inputs, feeds, num_replicas=1, num_partitions=1, timeout=None):
        """Each process's feeds go to its own queue of the simulated grid
        (ProcessGrid.host_infeed), which the interpreter's infeed kernel reads."""
        host = {}
        for f in feeds:
            host.setdefault(tuple(int(x) for x in f.process), []).append(list(f.values))
        return self._run(program, inputs, int(num_replicas), int(num_partitions), timeout, host)

    def run_processes(self, program, inputs, num_replicas, num_partitions, timeout=None):
        """The interpreter's simulated process grid (interpreter.collective.run_processes, the
        machinery of `interpreter.run_parallel`), one thread per process."""
        return self._run(program, inputs, int(num_replicas), int(num_partitions), timeout)

    def _run(self, program, inputs, num_replicas, num_partitions, timeout, host_infeed=None):
        from stablehlo_ref.errors import NotImplementedOpError
        from stablehlo_ref.interpreter.evaluator import Interpreter, coerce_argument
        from stablehlo_ref.text import parse
        if num_replicas < 1 or num_partitions < 1:
            raise BackendError(f"a process grid of {num_replicas} x {num_partitions}: both counts must be >= 1", "run")
        try:
            module = parse(program, "<case>")
            from stablehlo_ref.verifier import verify
            verify(module)
        except StableHLOError as e:
            raise BackendError(f"{type(e).__name__}: {_first_line(e)}", "compile") from None
        use_alarm = (timeout and hasattr(signal, "SIGALRM")
                     and threading.current_thread() is threading.main_thread())
        old = None
        if use_alarm:
            def on_alarm(signum, frame):
                raise _Timeout()
            old = signal.signal(signal.SIGALRM, on_alarm)
            signal.setitimer(signal.ITIMER_REAL, float(timeout))
        try:
            ft = module.function("main").attributes["function_type"].type
            n = len(ft.inputs)
            nproc = num_replicas * num_partitions
            if len(inputs) != n * nproc:
                per = f" per process ({nproc} processes)" if nproc > 1 else ""
                raise BackendError(f"@main takes {n} argument(s){per}; {len(inputs)} given", "run")
            args = [coerce_argument(a, ft.inputs[i % n] if n else None, i % n) for i, a in enumerate(inputs)]
            interp = Interpreter(module)
            from stablehlo_ref.interpreter.collective import ProcessGrid, run_processes
            if host_infeed is not None:
                outside = [p for p in host_infeed if not (0 <= p[0] < num_replicas and 0 <= p[1] < num_partitions)]
                if outside:
                    raise BackendError(f"infeed values for process {outside[0]}, outside the "
                                       f"{num_replicas} x {num_partitions} grid", "run")
                host_infeed = {(r, p): host_infeed.get((r, p), []) for r in range(num_replicas)
                               for p in range(num_partitions)}
            if nproc == 1:
                if host_infeed is not None:
                    interp.process_grid = ProcessGrid(1, 1, host_infeed={(0, 0): host_infeed.get((0, 0), [])})
                    interp.process_id = (0, 0)
                return [np.asarray(r) for r in interp.call("main", args)]
            if timeout:
                import time
                interp.deadline = time.monotonic() + float(timeout)   # stops the process threads too
            grid = [["main"] * num_partitions for _ in range(num_replicas)]
            results, _ = run_processes(interp, grid, args, host_infeed=host_infeed)
            return [np.asarray(r) for rs in results for r in rs]
        except _Timeout:
            raise BackendError(f"no result in {timeout:g} s", "timeout") from None
        except NotImplementedOpError as e:
            raise BackendUnsupported(_first_line(e)) from None
        except BackendError:
            raise
        except StableHLOError as e:
            raise BackendError(f"{type(e).__name__}: {_first_line(e)}", "run") from None
        except RecursionError:
            raise BackendError("recursion too deep", "run") from None
        except Exception as e:       # an interpreter bug: reported per case, never fatal
            raise BackendError(f"internal error: {type(e).__name__}: {_first_line(e)}", "run") from None
        finally:
            if use_alarm:
                signal.setitimer(signal.ITIMER_REAL, 0)
                signal.signal(signal.SIGALRM, old)


def _has_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def from_wire(o):
    """A result sent back by a worker: a numpy array, or MLIR's printed `dense<...> : tensor<...>`
    (for element types numpy cannot carry across), read with our own parser."""
    kind, val = o
    if kind == "array":
        return val
    from stablehlo_ref.interpreter import Interpreter
    from stablehlo_ref.text import parse
    attr, _, ty = val.rpartition(" : ")
    text = (f"func.func @main() -> {ty} {{\n  %0 = stablehlo.constant {attr} : {ty}\n"
            f"  return %0 : {ty}\n}}\n")
    return np.asarray(Interpreter(parse(text)).call("main", [])[0])


class WorkerBackend(Backend):
    """A backend driven in a restartable subprocess (see `_worker.py`)."""
    kind = ""
    option = ""
    needs: Tuple[str, ...] = ()
    start_timeout = 180.0

    def __init__(self):
        self.worker = None
        self._desc = None
        self._start_error = None

    def available(self):
        missing = [m for m in self.needs if not _has_module(m)]
        if missing:
            return False, f"{' and '.join(missing)} not importable (pip install {self.install_hint})"
        try:
            self._ensure()
        except BackendError as e:
            return False, str(e)
        return True, ""

    install_hint = ""

    def describe(self) -> str:
        return f"{self.name}: {self._desc}" if self._desc else self.name

    def details(self) -> str:
        """What the worker reported about itself (versions, device); "" before it started."""
        return self._desc or ""

    def clone(self):
        """A second worker process of the same kind (not started until used)."""
        import copy
        c = copy.copy(self)
        c.worker = c._start_error = None
        return c

    def _start(self):
        if self._start_error:
            raise BackendError(self._start_error, "crash")
        env = {"JAX_PLATFORMS": "cpu"} if self.kind == "xla" and self.option == "cpu" else {}
        if self.kind == "xla" and self.option != "cpu":
            # several workers (--jobs) share one GPU: allocate memory as needed
            env["XLA_PYTHON_CLIENT_PREALLOCATE"] = "false"
        self.worker = WorkerProcess("stablehlo_ref.conformance._worker", "main", (self.kind, self.option or "-"),
                                    name=f"{self.name} worker", env=env, start_timeout=self.start_timeout)
        try:
            msg = self.worker.start()
        except WorkerStartError as e:
            self._start_error = str(e)
            raise BackendError(self._start_error, "crash") from None
        if msg[0] != "ready":
            self.worker.kill()
            self._start_error = f"{self.name} unavailable: {msg[1]}"
            raise BackendError(self._start_error, "crash")
        self._desc = msg[1]

    def _ensure(self):
        if self.worker is None or not self.worker.alive:
            if self.worker is not None:
                self.worker.close()
            self._start()

    # ops needing a host side or a peer process that the adapters do not provide: XLA CPU
    # blocks until the host drains an outfeed (no result, ever) and has no send/recv;
    # upstream's interpreter aborts on outfeed outside run_parallel and crashes on send/recv
    HOST_OPS = re.compile(r'"?stablehlo\.(outfeed|infeed|send|recv)\b')
    host_ops_kinds = ("xla", "upstream")

    def run(self, program, inputs, timeout=None):
        m = self.HOST_OPS.search(program) if self.kind in self.host_ops_kinds else None
        if m:
            raise BackendUnsupported(f"stablehlo.{m.group(1)}: the {self.name} adapter has no host or "
                                     "peer process to exchange data with (outfeed blocks or aborts, "
                                     "send/recv are not run)")
        return self._request(program, inputs, timeout)

    def _request(self, program, inputs, timeout):
        self._ensure()
        try:
            msg = self.worker.request((program, [np.asarray(a) for a in inputs]), timeout)
        except WorkerTimeout as e:
            raise BackendError(str(e), "timeout") from None
        except WorkerCrashed as e:
            if "nsupported" in e.tail:
                raise BackendUnsupported(f"process aborted{e.tail}") from None
            raise BackendError(str(e), "crash") from None
        if msg[0] == "ok":
            return [from_wire(o) for o in msg[1]]
        _, stage, message = msg
        if stage == "unsupported":
            raise BackendUnsupported(message)
        raise BackendError(message, stage)

    # why each adapter cannot feed an infeed queue (upstream can: `_infeed_wrapper`)
    NO_INFEED = {
        "xla": "jaxlib's PJRT client exposes no transfer of host values to a device's infeed queue "
               "(XLA's infeed waits for the host)",
        "iree": "IREE has no infeed queue: its StableHLO input conversion lowers neither stablehlo.infeed "
                "nor tokens",
    }

    def run_infeed(self, program, inputs, feeds, num_replicas=1, num_partitions=1, timeout=None):
        """upstream: the case's @main runs inside `interpreter.run_parallel`, whose `infeed`
        attribute names one function per feed returning its values as constants: the way
        upstream's interpreter takes infeed values (one queue, one process). xla, iree:
        unsupported (NO_INFEED)."""
        if self.kind != "upstream":
            raise BackendUnsupported(f"host-fed infeed values: {self.NO_INFEED.get(self.kind, 'the adapter cannot feed them')}")
        if int(num_replicas) * int(num_partitions) != 1:
            raise BackendUnsupported(f"a multi-process case ({num_replicas} replica(s) x {num_partitions} "
                                     f"partition(s)): backend {self.name!r} runs single-process programs only")
        m = re.search(r'"?stablehlo\.(send|recv)\b', program)
        if m:
            raise BackendUnsupported(f"stablehlo.{m.group(1)}: the {self.name} adapter has no peer process")
        # run_parallel's `infeed` functions must each return one tensor (its verifier), which
        # one infeed op then returns; an infeed of 0 or 2+ tensors aborts or crashes the
        # interpreter, and a constant of a quantized type aborts it
        for f in feeds:
            if len(f.values) != 1:
                raise BackendUnsupported(f"an infeed of {len(f.values)} tensor(s): upstream's interpreter takes "
                                         "infeed values only as functions returning one tensor each "
                                         "(interpreter.run_parallel's `infeed`)")
            if "!quant." in f.types[0]:
                raise BackendUnsupported("a quantized infeed value: upstream's interpreter cannot evaluate "
                                         "a constant of a quantized type, so no function can return it")
        try:
            wrapped = _infeed_wrapper(program, feeds)
        except StableHLOError as e:
            raise BackendError(f"{type(e).__name__}: {_first_line(e)}", "compile") from None
        return self._request(wrapped, inputs, timeout)

    def close(self):
        if self.worker is not None:
            self.worker.close()
            self.worker = None


INFEED_MAIN = "infeed_case_main"


def _infeed_wrapper(program: str, feeds) -> str:
    """`program` with its @main renamed, called by a new @main through
    `interpreter.run_parallel` (one process) whose `infeed` names a function per feed that
    returns the feed's values as constants (quantized values: their storage integers as the
    constant of the quantized type)."""
    from stablehlo_ref.ir.attributes import DenseElementsAttr
    from stablehlo_ref.ir.types import QuantizedType, TensorType
    from stablehlo_ref.text import parse
    from stablehlo_ref.text.printer import Printer
    ft = parse(program, "<case>").function("main").attributes["function_type"].type
    ins, outs = [str(t) for t in ft.inputs], [str(t) for t in ft.results]
    if re.search(rf"@{INFEED_MAIN}\b|@infeed_feed_\d", program):
        raise BackendError(f"the program already defines @{INFEED_MAIN} or @infeed_feed_*", "compile")
    body = re.sub(r"@main\b", f"@{INFEED_MAIN}", program)
    pr = Printer()
    funcs, names = [], []
    for k, f in enumerate(feeds):
        tys = [parse(f"func.func private @t(%a: {t})", "<feed>").function("t").attributes["function_type"].type.inputs[0]
               for t in f.types]
        lines = []
        for i, (t, v) in enumerate(zip(tys, f.values)):
            st = t
            if isinstance(t.element_type, QuantizedType):
                st = TensorType(t.shape, t.element_type.storage_type)
            attr = pr.attr(DenseElementsAttr(st, np.asarray(v).reshape(t.shape)))
            lines.append(f'  %c{i} = "stablehlo.constant"() {{value = {attr}}} : () -> {t}')
        rt = ", ".join(str(t) for t in tys)
        ret = ", ".join(f"%c{i}" for i in range(len(tys)))
        funcs.append(f"func.func private @infeed_feed_{k}() -> ({rt}) {{\n" + "\n".join(lines)
                     + f'\n  "func.return"({ret}) : ({rt}) -> ()\n}}\n')
        names.append(f"@infeed_feed_{k}")
    args = ", ".join(f"%arg{i}: {t}" for i, t in enumerate(ins))
    vals = ", ".join(f"%arg{i}" for i in range(len(ins)))
    res = "%r" if len(outs) == 1 else f"%r:{len(outs)}"
    rvals = "%r" if len(outs) == 1 else ", ".join(f"%r#{i}" for i in range(len(outs)))
    infeed = f", infeed = [{', '.join(names)}]" if names else ""
    call = (f'  {res + " = " if outs else ""}"interpreter.run_parallel"({vals}) {{programs = [[@{INFEED_MAIN}]]{infeed}}} '
            f': ({", ".join(ins)}) -> ({", ".join(outs)})\n')
    main = (f"func.func @main({args}) -> ({', '.join(outs)}) {{\n{call}"
            f'  "func.return"({rvals if outs else ""}) : ({", ".join(outs)}) -> ()\n}}\n')
    return "\n".join([main, body, *funcs])


COMPLEX_MAIN = "complex_case_main"


class ComplexParts:
    """A program whose @main takes or returns complex tensors, rewritten for a backend whose
    bindings cannot pass them (upstream's `eval_module`: "unimplemented array format
    conversion from format: Zf" for an argument, an abort for a result): @main is renamed and
    called by a new @main that takes each complex argument as its real and imaginary parts
    (rebuilt with `stablehlo.complex`) and returns each complex result as `stablehlo.real`
    and `stablehlo.imag`. Every step is exact (parts are copied bit for bit, NaN payloads
    and signed zeros included), so the values the backend computes are unchanged.
    `inputs()` splits the arguments, `outputs()` reassembles the results."""

    def __init__(self, program: str, inputs_complex: List[bool], outputs_complex: List[bool], ins, outs):
        self.program = program
        self.inputs_complex = inputs_complex
        self.outputs_complex = outputs_complex
        self._ins, self._outs = ins, outs

    @classmethod
    def rewrite(cls, program: str) -> Optional["ComplexParts"]:
        """None when @main has no complex tensor argument or result (or `program` is not
        text our parser reads: it then goes to the backend as it is)."""
        if "complex<" not in program:
            return None
        from stablehlo_ref.ir.types import ELEMENT_TYPES, TensorType
        from stablehlo_ref.text import parse
        try:
            ft = parse(program, "<case>").function("main").attributes["function_type"].type
        except (StableHLOError, KeyError, AttributeError):
            return None

        def is_c(t):
            return isinstance(t, TensorType) and getattr(t.element_type, "is_complex", False)

        def part(t):
            return str(TensorType(t.shape, ELEMENT_TYPES["f32" if t.element_type.name == "complex<f32>" else "f64"]))
        cin, cout = [is_c(t) for t in ft.inputs], [is_c(t) for t in ft.results]
        if not any(cin) and not any(cout):
            return None
        if re.search(rf"@{COMPLEX_MAIN}\b", program):
            raise BackendError(f"the program already defines @{COMPLEX_MAIN}", "compile")
        params, body, vals = [], [], []
        for i, t in enumerate(ft.inputs):
            if not cin[i]:
                params.append(f"%arg{i}: {t}")
                vals.append(f"%arg{i}")
                continue
            pt = part(t)
            params += [f"%re{i}: {pt}", f"%im{i}: {pt}"]
            body.append(f'  %c{i} = "stablehlo.complex"(%re{i}, %im{i}) : ({pt}, {pt}) -> {t}')
            vals.append(f"%c{i}")
        ins, outs = ", ".join(str(t) for t in ft.inputs), ", ".join(str(t) for t in ft.results)
        n = len(ft.results)
        res = [] if not n else (["%r"] if n == 1 else [f"%r#{k}" for k in range(n)])
        head = "" if not n else ("%r = " if n == 1 else f"%r:{n} = ")
        body.append(f'  {head}"func.call"({", ".join(vals)}) {{callee = @{COMPLEX_MAIN}}} : ({ins}) -> ({outs})')
        rets, rtys = [], []
        for k, t in enumerate(ft.results):
            if not cout[k]:
                rets.append(res[k])
                rtys.append(str(t))
                continue
            pt = part(t)
            for kind in ("real", "imag"):
                body.append(f'  %o{k}{kind} = "stablehlo.{kind}"({res[k]}) : ({t}) -> {pt}')
                rets.append(f"%o{k}{kind}")
                rtys.append(pt)
        rt = ", ".join(rtys)
        body.append(f'  "func.return"({", ".join(rets)}) : ({rt}) -> ()')
        main = f"func.func @main({', '.join(params)}) -> ({rt}) {{\n" + "\n".join(body) + "\n}\n"
        renamed = re.sub(r"@main\b", f"@{COMPLEX_MAIN}", program)
        return cls(main + "\n" + renamed, cin, cout, ft.inputs, ft.results)

    def inputs(self, inputs: Sequence[np.ndarray]) -> List[np.ndarray]:
        out = []
        for a, c in zip(inputs, self.inputs_complex):
            a = np.asarray(a)
            if c:
                out += [np.array(a.real), np.array(a.imag)]     # (np.ascontiguousarray makes rank 0 rank 1)
            else:
                out.append(a)
        return out

    def outputs(self, outputs: Sequence[np.ndarray]) -> List[np.ndarray]:
        it, out = iter(outputs), []
        for c in self.outputs_complex:
            if not c:
                out.append(next(it))
                continue
            re_, im = np.asarray(next(it)), np.asarray(next(it))
            z = np.empty(re_.shape, np.complex64 if re_.dtype == np.float32 else np.complex128)
            z.real, z.imag = re_, im        # not re + 1j * im: that turns an inf part into NaN
            out.append(z)
        return out


class XlaBackend(WorkerBackend):
    """XLA through jaxlib's PJRT client: `xla` (CPU) or `xla:<platform>` (gpu, cuda, rocm,
    tpu: whatever jax finds). Hardware math libraries may round differently from the
    reference; pass `extra_ulps` to loosen ULP bounds."""
    kind = "xla"
    needs = ("jax", "jaxlib")
    install_hint = "jax"

    def __init__(self, platform: str = "cpu"):
        super().__init__()
        self.option = platform
        self.name = "xla" if platform == "cpu" else f"xla:{platform}"

    # jax finds a GPU through a PJRT plugin package; without one, `xla:cuda` cannot start
    GPU_PLUGINS = {"cuda": ("jax_cuda13_plugin", "jax_cuda12_plugin", "jax_plugins.xla_cuda13",
                            "jax_plugins.xla_cuda12"),
                   "rocm": ("jax_rocm7_plugin", "jax_rocm60_plugin", "jax_plugins.xla_rocm7",
                            "jax_plugins.xla_rocm60")}

    def available(self):
        kind = {"gpu": "cuda"}.get(self.option, self.option)
        plugins = self.GPU_PLUGINS.get(kind)
        if plugins and all(_has_module(m) for m in self.needs) and not any(_has_module(m) for m in plugins):
            extra = "cuda13" if kind == "cuda" else "rocm"
            return False, (f"{self.name} needs jax's {kind.upper()} plugin, which is not installed "
                           f"(pip install 'jax[{extra}]'; then `stablehlo-ref conform --list-backends` shows the device)")
        return super().available()


class UpstreamBackend(WorkerBackend):
    """Upstream's C++ reference interpreter (jaxlib's `stablehlo.eval_module`); chlo ops are
    decomposed first. It aborts its process on any error: the worker is restarted.
    Complex arguments and results of @main travel as their real and imaginary parts
    (`ComplexParts`): the bindings cannot pass them."""
    name = "upstream"
    kind = "upstream"
    needs = ("jax", "jaxlib")
    install_hint = "jax"

    def _request(self, program, inputs, timeout):
        try:
            parts = ComplexParts.rewrite(program)
        except StableHLOError as e:
            raise BackendError(f"{type(e).__name__}: {_first_line(e)}", "compile") from None
        if parts is None:
            return super()._request(program, inputs, timeout)
        return parts.outputs(super()._request(parts.program, parts.inputs(inputs), timeout))


class IreeBackend(WorkerBackend):
    """IREE (iree-base-compiler + iree-base-runtime); `iree` runs on llvm-cpu/local-task,
    `iree:<driver>` on another driver (cuda, vulkan, hip)."""
    kind = "iree"
    needs = ("iree.compiler", "iree.runtime")
    install_hint = "iree-base-compiler iree-base-runtime"

    def __init__(self, driver: str = "local-task"):
        super().__init__()
        self.option = driver
        self.name = "iree" if driver == "local-task" else f"iree:{driver}"


BACKENDS: Dict[str, Callable[[Optional[str]], Backend]] = {
    "reference": lambda opt: ReferenceBackend(),
    "xla": lambda opt: XlaBackend(opt or "cpu"),
    "upstream": lambda opt: UpstreamBackend(),
    "iree": lambda opt: IreeBackend(opt or "local-task"),
}


ENTRY_POINT_GROUP = "stablehlo_ref.backends"


def _entry_points() -> dict:
    """Backends other packages register under the `stablehlo_ref.backends` entry-point group
    (name -> entry point); a broken distribution's metadata is ignored."""
    from importlib.metadata import entry_points
    try:
        eps = entry_points(group=ENTRY_POINT_GROUP)
    except Exception:      # noqa: BLE001 - unreadable metadata of some other package
        return {}
    return {ep.name: ep for ep in eps}


def _instantiate(obj, option: Optional[str], spec: str) -> Backend:
    """A backend from a plug-in object: a Backend subclass (constructed with the option when
    one is given) or a factory called with the option (or None)."""
    try:
        if isinstance(obj, type):
            b = obj(option) if option is not None else obj()
        elif callable(obj):
            b = obj(option)
        else:
            raise UsageError(f"backend {spec!r}: {obj!r} is neither a Backend class nor a factory")
    except StableHLOError:
        raise
    except Exception as e:      # noqa: BLE001 - third-party code
        raise UsageError(f"backend {spec!r} could not be created: {type(e).__name__}: {_first_line(e)}") from None
    if not (callable(getattr(b, "run", None)) and callable(getattr(b, "available", None))):
        raise UsageError(f"backend {spec!r}: {type(b).__name__} has no run() and available() "
                         "(subclass stablehlo_ref.conformance.Backend)")
    if getattr(b, "name", "?") in ("?", "", None):
        b.name = spec
    return b


def _from_module(spec: str) -> Optional[Backend]:
    """`package.module:Class` or `package.module:Class:option` (None when `spec` has no such
    form)."""
    mod, _, rest = spec.partition(":")
    attr, _, option = rest.partition(":")
    if not mod or not attr or not all(p.isidentifier() for p in mod.split(".") + attr.split(".")):
        return None
    import importlib
    try:
        m = importlib.import_module(mod)
    except ImportError as e:
        raise UsageError(f"backend {spec!r}: cannot import module {mod}: {_first_line(e)}") from None
    except Exception as e:      # noqa: BLE001 - third-party code failing at import
        raise UsageError(f"backend {spec!r}: importing {mod} failed: {type(e).__name__}: {_first_line(e)}") from None
    obj = m
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise UsageError(f"backend {spec!r}: module {mod} has no {attr}")
        obj = getattr(obj, part)
    return _instantiate(obj, option or None, spec)


def backend_names() -> List[str]:
    """Names `get_backend` knows: the built-in ones, then those of installed plug-ins."""
    return list(BACKENDS) + [n for n in sorted(_entry_points()) if n not in BACKENDS]


def get_backend(name: str, extra_ulps: int = 0, atol_scale: float = 1.0) -> Backend:
    """A backend by name: `reference`, `xla`, `xla:cuda`, `upstream`, `iree`, `iree:cuda`; a
    plug-in's entry-point name in the `stablehlo_ref.backends` group (`name` or `name:option`);
    or `package.module:Class` (`...:Class:option`) for a class or factory importable from here."""
    base, _, opt = name.partition(":")
    if base in BACKENDS:
        if opt and base in ("reference", "upstream"):
            raise UsageError(f"backend {base} takes no option (got {name!r})")
        b = BACKENDS[base](opt or None)
    else:
        eps = _entry_points()
        if base in eps:
            try:
                obj = eps[base].load()
            except Exception as e:      # noqa: BLE001 - a plug-in that fails to import
                raise UsageError(f"backend {base!r} (entry point {eps[base].value}) failed to load: "
                                 f"{type(e).__name__}: {_first_line(e)}") from None
            b = _instantiate(obj, opt or None, name)
        else:
            b = _from_module(name)
            if b is None:
                have = ", ".join(["reference", "xla", "xla:<platform>", "upstream", "iree", "iree:<driver>"]
                                 + sorted(n for n in eps if n not in BACKENDS))
                raise UsageError(f"unknown backend {name!r} (have: {have}; or module:Class for your own, "
                                 f"or an entry point in the {ENTRY_POINT_GROUP} group)")
    b.extra_ulps = int(extra_ulps)
    b.atol_scale = float(atol_scale)
    return b


def register_backend(name: str, factory: Callable[[Optional[str]], Backend]) -> None:
    """Make a third-party backend selectable by name (`factory(option)` gets the text after `name:`)."""
    BACKENDS[name] = factory


def list_backends() -> List[str]:
    """`conform --list-backends`: one line per backend, `name: available (details)` or
    `name: unavailable: why`."""
    lines = []
    for name in backend_names():
        try:
            b = get_backend(name)
        except UsageError as e:
            lines.append(f"{name}: unavailable: {e}")
            continue
        try:
            ok, why = b.available()
            if ok:
                d = b.details()
                lines.append(f"{b.name}: available" + (f" ({d})" if d else ""))
            else:
                lines.append(f"{b.name}: unavailable: {why}")
        except Exception as e:      # noqa: BLE001 - a plug-in's available() failing
            lines.append(f"{name}: unavailable: {type(e).__name__}: {_first_line(e)}")
        finally:
            b.close()
    return lines
