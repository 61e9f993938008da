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


def run_text(text: str, filename: str, limits=None) -> List[CaseResult]:
    """Every chunk's public argument-free functions, each within `limits` (a
    stablehlo_ref.limits.Limits; a LimitError makes that case an error)."""
    from .text import parse
    from .interpreter import Interpreter
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
            results.append(CaseResult(filename, ci, name, status, reason, time.perf_counter() - t0))
    return results


def read_text(path: str) -> str:
    """A test file's text, read as `stablehlo-ref run --check` reads it: `-` is stdin; a
    directory, a device or a FIFO without a writer is a UsageError, as is text not in UTF-8."""
    from .errors import UsageError
    from .fileio import read_input
    data = read_input(path, "test file", allow_empty=True)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise UsageError(f"{path}: not a UTF-8 text file (byte {e.start})") from None


def run_file(path: str) -> List[CaseResult]:
    return run_text(read_text(path), path)
