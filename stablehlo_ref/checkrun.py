"""Running files in upstream test style: each `// -----` chunk separately, every public function
without arguments, every `check` op evaluated. Used by `stablehlo-ref run --check` and by the
corpus tests."""
from __future__ import annotations

import re
import time
from dataclasses import asdict, dataclass
from typing import List

from .errors import (CheckFailure, NotImplementedOpError, StableHLOError)

_SPLIT = re.compile(r"^// -----.*$", re.M)


@dataclass
class CaseResult:
    file: str
    chunk: int
    function: str
    status: str        # pass | fail | error | unsupported
    reason: str
    seconds: float

    def to_json(self):
        return asdict(self)


def split_chunks(text: str) -> List[str]:
    """Split at `// -----` lines; each chunk is padded with newlines so line numbers match the file."""
    chunks = []
    pos = 0
    line = 0
    for m in _SPLIT.finditer(text):
        part = text[pos:m.start()]
        chunks.append("\n" * line + part)
        # the separator line's own newline starts the next chunk's text
        line += part.count("\n")
        pos = m.end()
    chunks.append("\n" * line + text[pos:])
    return chunks


def entry_functions(module):
    out = []
    for name, f in module.functions.items():
        vis = f.attributes.get("sym_visibility")
        if vis is not None and vis.value != "public":
            continue
        if not f.regions or not f.regions[0].blocks:
            continue
        if f.attributes["function_type"].type.inputs:
            continue
        out.append(name)
    return out


# why a test file gave no case (`stablehlo-ref run --check` makes that file one error case)
NO_CASES = ("no public function without arguments to run: --check runs each chunk's public "
            "functions that take no arguments (run a function that takes arguments with "
            "`stablehlo-ref run FILE --entry NAME --input ...`)")


def run_text(text: str, filename: str, limits=None) -> List[CaseResult]:
    """Every chunk's public argument-free functions, each within `limits` (a
    stablehlo_ref.limits.Limits; a LimitError makes that case an error)."""
    from .text import parse
    results = []
    for ci, chunk in enumerate(split_chunks(text)):
        if not chunk.strip() or not re.search(r"\S", re.sub(r"//[^\n]*", "", chunk)):
            continue
        t0 = time.perf_counter()
        try:
            module = parse(chunk, filename, limits=limits)
        except StableHLOError as e:
            results.append(CaseResult(filename, ci, "", "error", f"parse error: {e}", time.perf_counter() - t0))
            continue
        results.extend(run_module(module, filename, ci, limits))
    return results


def run_module(module, filename: str, chunk: int = 0, limits=None) -> List[CaseResult]:
    """Each public function of `module` (one chunk of a test file, or a whole portable
    artifact) run without arguments, its check ops evaluated: one CaseResult each."""
    from .interpreter import Interpreter
    results = []
    for name in entry_functions(module):
        t0 = time.perf_counter()
        status, reason = "pass", ""
        try:
            Interpreter(module, limits=limits).call(name, [])
        except CheckFailure as e:
            status, reason = "fail", str(e)
        except NotImplementedOpError as e:
            status, reason = "unsupported", str(e)
        except StableHLOError as e:
            status, reason = "error", str(e)
        except RecursionError:
            status, reason = "error", "recursion too deep"
        except Exception as e:  # a bug in the interpreter: report, never crash the run
            status, reason = "error", f"internal error: {type(e).__name__}: {e}"
        results.append(CaseResult(filename, chunk, name, status, reason, time.perf_counter() - t0))
    return results


def read_source(path: str):
    """A test file as `stablehlo-ref run --check` takes it: its text, or the bytes of a
    portable artifact (MLIR bytecode) or jax.export payload, whose functions run as one chunk.
    `-` is stdin; other bytes not in UTF-8 are a UsageError."""
    from .errors import UsageError
    from .fileio import read_input
    from .serialization.jax_export import is_jax_exported
    data = read_input(path, "test file", allow_empty=True)
    if data[:4] == b"ML\xefR":
        return data
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        if is_jax_exported(data):
            return data
        raise UsageError(f"{path}: neither UTF-8 text, MLIR bytecode nor a jax.export payload "
                         f"(byte {e.start})") from None


def run_source(source, filename: str, limits=None) -> List[CaseResult]:
    """`run_text` for text; for an artifact's bytes, its functions as one chunk (a file that
    does not load is one error case, as a chunk that does not parse is)."""
    if isinstance(source, str):
        return run_text(source, filename, limits)
    from . import load_bytes
    t0 = time.perf_counter()
    try:
        module = load_bytes(source, filename, limits=limits)
    except StableHLOError as e:
        return [CaseResult(filename, 0, "", "error", f"load error: {e}", time.perf_counter() - t0)]
    return run_module(module, filename, 0, limits)


def run_file(path: str) -> List[CaseResult]:
    return run_source(read_source(path), path)
