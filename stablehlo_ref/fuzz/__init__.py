"""Fuzzing: the properties each input must keep, the seeds, and a campaign loop.

Targets (each a function of one input that returns normally, raises one of the project's
errors, or fails):
    text       mutated MLIR text -> parse -> verify -> print -> parse -> print (stable)
    bytecode   mutated portable artifacts -> deserialize -> verify -> print -> parse -> serialize
    programs   random valid programs (programs.py) -> verify, interpret, print/parse and
               serialize/deserialize round trips that keep the program and its results
    loops      random loop nests (loops.py) -> every tier of the interpreter (step by step,
               compiled, inlined, fused, generated code) gives the same results bit for bit
    cli        mutated files through the command line (validate, print, convert, run)

A failure is any exception that is not a `StableHLOError` (an internal exception escaping), a
broken round trip (`Finding`), a hang past the per-input time limit, or a MemoryError under
the campaign's memory cap. `python -m stablehlo_ref.fuzz --target T --minutes N` runs a
campaign (see __main__.py); the test suite runs CI-sized ones (tests/test_fuzz_*.py).
"""
from __future__ import annotations

import os
import random
import re
import signal
import traceback
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Optional

from ..errors import StableHLOError
from ..limits import Limits
from .programs import Finding

# Limits a campaign runs under: small enough that nothing legal allocates more than a few
# hundred MB, so that a MemoryError under the campaign's address-space cap is a real escape.
FUZZ_LIMITS = Limits(max_tensor_elements=1 << 22, max_tensor_bytes=64 << 20,
                     max_live_bytes=512 << 20, max_steps=10_000, timeout=5.0, max_nesting=10_000)

REPO = Path(__file__).resolve().parent.parent.parent
SHARED = REPO.parent / "shared"


class Hang(BaseException):
    """The per-input time limit passed (a BaseException, so no `except Exception` swallows it)."""


# ------------------------------------------------------------------ seeds

def text_seeds(shared: bool = True) -> List[str]:
    """Programs to mutate: examples/, programs built here, and (when present) upstream's
    corpora in ../shared/stablehlo-tests split at `// -----`."""
    from .mutate import split_chunks
    from .programs import random_program
    out = []
    ex = REPO / "examples"
    if ex.is_dir():
        out += [p.read_text() for p in sorted(ex.glob("*.mlir"))]
    rng = random.Random(0)
    out += [random_program(rng).text for _ in range(20)]
    if shared and (SHARED / "stablehlo-tests").is_dir():
        for p in sorted((SHARED / "stablehlo-tests").rglob("*.mlir")):
            try:
                out += split_chunks(p.read_text(errors="replace"))
            except OSError:
                pass
    return out


def bytecode_seeds(shared: bool = True) -> List[bytes]:
    """Artifacts to mutate: ours for the text seeds that convert, and (when present) the portable
    artifacts in ../shared/vectors/portable."""
    from .. import parse
    from ..serialization import serialize
    out = []
    for t in text_seeds(shared=False):
        try:
            m = parse(t)
            out.append(serialize(m, "1.0.0"))
            out.append(serialize(m, "current"))
        except StableHLOError:
            pass
    d = SHARED / "vectors" / "portable"
    if shared and d.is_dir():
        out += [p.read_bytes() for p in sorted(d.glob("*.mlirbc"))]
    return out


# ------------------------------------------------------------------ properties

def check_text(text: str, limits: Limits = FUZZ_LIMITS) -> str:
    """parse -> verify -> print (pretty and generic) -> parse -> print must be stable."""
    from .. import parse, print_module
    from ..verifier import verify
    try:
        m = parse(text, "fuzz.mlir", limits=limits)
    except StableHLOError:
        return "rejected"
    outcome = "parsed"
    try:
        verify(m)
        outcome = "verified"
    except StableHLOError:
        pass
    _print_parse_stable(m, limits)
    return outcome


def _print_parse_stable(m, limits):
    from .. import parse, print_module
    p1 = print_module(m)
    try:
        m2 = parse(p1, "printed.mlir", limits=limits)
    except StableHLOError as e:
        raise Finding(f"the printed form of an accepted program does not parse: {e}\n{p1}") from None
    p2 = print_module(m2)
    if p1 != p2:
        raise Finding("print -> parse -> print changed the program:\n" + _first_diff(p1, p2))
    g = print_module(m, generic=True)
    try:
        m3 = parse(g, "generic.mlir", limits=limits)
    except StableHLOError as e:
        raise Finding(f"the generic form of an accepted program does not parse: {e}\n{g}") from None
    p3 = print_module(m3)
    if p3 != p1:
        raise Finding("generic print -> parse changed the program:\n" + _first_diff(p1, p3))


def check_bytecode(data: bytes, limits: Limits = FUZZ_LIMITS) -> str:
    """deserialize -> verify -> print -> parse -> serialize (when it verifies) -> deserialize."""
    from .. import parse, print_module
    from ..serialization import deserialize, serialize
    from ..verifier import verify
    try:
        m = deserialize(data, limits=limits)
    except StableHLOError:
        return "rejected"
    try:
        verify(m)
    except StableHLOError:
        # an invalid program read from bytes must still print (pretty and generic) and its
        # generic form must parse back
        print_module(m)
        g = print_module(m, generic=True)
        try:
            parse(g, "generic.mlir", limits=limits)
        except StableHLOError as e:
            raise Finding(f"the generic form of a program read from bytes does not parse: {e}\n{g}") from None
        return "read"
    _print_parse_stable(m, limits)
    try:
        again = serialize(m, "current")
    except StableHLOError:
        return "verified"
    m2 = deserialize(again, limits=limits)
    if print_module(m2, strip_debuginfo=True) != print_module(m, strip_debuginfo=True):
        raise Finding("serialize -> deserialize changed a verified program")
    return "verified"


def check_program(seed: int, limits: Limits = FUZZ_LIMITS) -> str:
    """A random valid program: it verifies, runs, and keeps its text and its results through
    print -> parse and serialize -> deserialize."""
    from .programs import check_generated, random_program
    return check_generated(random_program(random.Random(seed)), limits)


def check_loops(seed: int, limits: Limits = FUZZ_LIMITS) -> str:
    """A random loop nest (loops.py): every tier of the interpreter gives the step-by-step
    run's results, bit for bit."""
    from .loops import check_tiers, random_loop_program
    return check_tiers(random_loop_program(random.Random(seed)), limits)


def check_cli(args: List[str]) -> str:
    """One command line: it ends with exit code 0, 1 or 2 and a one-line error, no traceback."""
    import contextlib
    import io
    from ..cli import main
    err = io.StringIO()
    # a process's stdout: text with a binary buffer underneath (`print` and `convert -o -`
    # write bytes to it)
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        rc = main(args)
    out.flush()
    printed = out.buffer.getvalue().decode("utf-8", "replace")
    e = err.getvalue()
    if "Traceback" in e:
        raise Finding("a traceback on stderr:\n" + e[-2000:])
    if rc not in (0, 1, 2):
        raise Finding(f"exit code {rc}: {e[:500]!r}")
    # a diagnostic as MLIR prints it: `[location: ]error: message` (then source line and caret)
    import re
    diag = re.match(r"^(?:[^\n]*?: )?error: ", e) is not None
    if rc != 0 and not diag and not printed.strip():
        raise Finding(f"exit code {rc} with neither an `error:` line nor a report: {e[:300]!r}")
    first = e.split("\n", 1)[0]
    # `convert` says which target it chose (`note: target V, ...`) on success
    note = rc == 0 and first.startswith("note: ") and args[:1] == ["convert"]
    if e and not diag and not note and "warning: " not in first and "--trace" not in args:
        raise Finding(f"stderr that is not an `error:` line: {e[:300]!r}")
    return f"exit {rc}"


def _first_diff(a: str, b: str) -> str:
    for i, (x, y) in enumerate(zip(a.split("\n"), b.split("\n"))):
        if x != y:
            return f"line {i + 1}:\n- {x[:400]}\n+ {y[:400]}"
    return f"lengths {len(a)} / {len(b)}"


# ------------------------------------------------------------------ the campaign loop

@dataclass
class Report:
    target: str
    inputs: int = 0
    seconds: float = 0.0
    outcomes: Counter = field(default_factory=Counter)
    failures: Dict[str, dict] = field(default_factory=dict)   # signature -> first example

    def summary(self) -> str:
        lines = [f"target {self.target}: {self.inputs} inputs in {self.seconds / 60:.1f} min; "
                 + ", ".join(f"{k} {v}" for k, v in sorted(self.outcomes.items()))]
        for sig, f in self.failures.items():
            lines.append(f"  FAIL x{f['count']} {sig}: {f['message'][:200]}")
        return "\n".join(lines)


def signature(exc: BaseException) -> str:
    """Exception type and the innermost frame inside this package: one per distinct bug."""
    tb = traceback.extract_tb(exc.__traceback__)
    where = "?"
    for fr in reversed(tb):
        if "stablehlo_ref" in fr.filename or "/serialization/" in fr.filename or "/fuzz/" not in fr.filename:
            where = f"{Path(fr.filename).name}:{fr.lineno}"
            if "/fuzz/" not in fr.filename:
                break
    return f"{type(exc).__name__} at {where}"


def _alarm(signum, frame):
    raise Hang()


def run_one(fn: Callable, arg, per_input_seconds: float):
    """(outcome, failure exception or None) for one input, with a hang alarm on the CPU time
    this process spends on it (wall time would count the other processes of a busy machine)."""
    use_alarm = hasattr(signal, "setitimer") and hasattr(signal, "SIGVTALRM")
    if use_alarm:
        old = signal.signal(signal.SIGVTALRM, _alarm)
        signal.setitimer(signal.ITIMER_VIRTUAL, per_input_seconds)
    try:
        return fn(arg), None
    except StableHLOError as e:
        return type(e).__name__, None
    except (Exception, Hang, RecursionError) as e:   # noqa: BLE001 - every escape is a finding
        return "FAIL", e
    finally:
        if use_alarm:
            signal.setitimer(signal.ITIMER_VIRTUAL, 0)
            signal.signal(signal.SIGVTALRM, old)


def record(report: Report, exc: BaseException, sample, out_dir: Optional[Path]):
    if isinstance(exc, Hang):
        sig = "hang"
    elif isinstance(exc, Finding):
        sig = "Finding: " + str(exc).split("\n")[0][:80]
        # round-trip changes group by the op on the first changed line (distinct causes)
        m = re.search(r"\n- [^\n]*?\b([a-z_]+\.[a-z_0-9]+)", str(exc))
        if m:
            sig += f" [{m.group(1)}]"
    else:
        sig = signature(exc)
    f = report.failures.get(sig)
    if f is None:
        f = report.failures[sig] = {"count": 0, "message": f"{type(exc).__name__}: {exc}"[:2000],
                                    "traceback": "".join(traceback.format_exception(exc))[-4000:]}
        if out_dir is not None:
            out_dir.mkdir(parents=True, exist_ok=True)
            stem = f"{report.target}-{len(report.failures):03d}"
            if isinstance(sample, bytes):
                (out_dir / f"{stem}.mlirbc").write_bytes(sample)
            else:
                (out_dir / f"{stem}.txt").write_text(str(sample))
            (out_dir / f"{stem}.error.txt").write_text(sig + "\n" + f["traceback"])
            f["file"] = str(out_dir / stem)
    f["count"] += 1


def cap_memory(nbytes: int) -> None:
    """Cap this process's address space, so that an allocation past the limits shows as a
    MemoryError (a failure) instead of swapping the machine."""
    try:
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (nbytes, nbytes))
    except (ImportError, ValueError, OSError):
        pass


def env_int(name: str, default: int) -> int:
    try:
        return int(os.environ.get(name, default))
    except ValueError:
        return default
