"""Measure the verifier against upstream's verifier files (`// expected-error` suites).

Every `// -----` chunk of a file is judged as MLIR's `-verify-diagnostics` would: a chunk with
`expected-error` markers must be rejected with an error at a marked line (a parse error at that
line counts), a chunk without markers must be accepted. A file whose RUN line runs a test pass
without `-verify-diagnostics` is skipped. The `infer_*.mlir` files are also measured against
their `// CHECK: types0 = ...` lines: the types `stablehlo_ref.verifier.inference` infers for
the op a `"hlo_test_infer.get_return_types"` op takes.

    python tests/verifier_suite.py [FILE_OR_DIR ...]     (default: ../shared/stablehlo-tests/ops)

prints one line per file and a total; `-v` lists every chunk that is not judged right. The
pytest suites (`tests/test_verifier.py`) use the same functions.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Iterator, List, Optional, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parent))

from stablehlo_ref import parse  # noqa: E402
from stablehlo_ref.errors import ParseError, StableHLOError  # noqa: E402
from stablehlo_ref.verifier import collect  # noqa: E402

_SPLIT = re.compile(r"^// -----.*\n?", re.M)


def split_chunks(text: str) -> List[str]:
    """Split at `// -----` lines, padding each chunk with newlines so its line numbers are the file's."""
    chunks, pos, line = [], 0, 0
    for m in _SPLIT.finditer(text):
        part = text[pos:m.start()]
        chunks.append("\n" * line + part)
        line += part.count("\n") + 1
        pos = m.end()
    chunks.append("\n" * line + text[pos:])
    return chunks


# MLIR's -verify-diagnostics finds the marker anywhere in a line (`// @expected-error@+1 {{...}}`
# counts too), so this does as well.
_EXPECT = re.compile(r"expected-error(?:-re)?\s*(?:@([+-]\d+|above|below))?\s*\{\{")


def expected_lines(chunk: str) -> List[int]:
    """1-based file line numbers that a chunk's `expected-error` markers point at."""
    out = []
    for i, line in enumerate(chunk.split("\n"), start=1):
        m = _EXPECT.search(line)
        if not m:
            continue
        off = m.group(1)
        if off is None:
            out.append(i)
        elif off == "below":
            out.append(i + 1)
        elif off == "above":
            out.append(i - 1)
        else:
            out.append(i + int(off))
    return out


def error_line(err) -> Optional[int]:
    op = getattr(err, "op", None)
    src = getattr(err, "source", None) or getattr(op, "source", None) or err.location or ""
    m = re.search(r":(\d+):\d+$", src)
    return int(m.group(1)) if m else None


def classify(text: str, name: str) -> Iterator[Tuple[int, str, str]]:
    """Yield (chunk index, outcome, detail) per chunk: outcome is `rejected` (an invalid chunk
    rejected at a marked line), `accepted` (a valid chunk accepted), `skipped` (a parse error
    elsewhere: a parser gap) or `wrong`."""
    for i, chunk in enumerate(split_chunks(text)):
        want = expected_lines(chunk)
        try:
            module = parse(chunk, name)
        except ParseError as e:
            # Upstream rejects some programs while parsing (custom syntax, enum values); a parse
            # error at the marked line is the right rejection, any other is a parser gap.
            m = re.search(r":(\d+):\d+:", str(e))
            if want and m and int(m.group(1)) in want:
                yield i, "rejected", "at parse time"
            else:
                yield i, "skipped", f"parse error: {e}"
            continue
        except StableHLOError as e:
            yield i, "skipped", f"{type(e).__name__}: {e}"
            continue
        errs = collect(module)
        if not want:
            if errs:
                yield i, "wrong", f"false positive: {errs[0]}"
            else:
                yield i, "accepted", ""
            continue
        lines = {error_line(e) for e in errs}
        if any(w in lines for w in want):
            yield i, "rejected", ""
        elif errs:
            yield i, "wrong", f"rejected at another op (want line {want}): {errs[0]}"
        else:
            yield i, "wrong", f"not rejected (want line {want})"


def is_verifier_file(text: str) -> bool:
    """False for a file whose RUN line runs a test pass without `-verify-diagnostics`
    (`ops_broadcasting.mlir`: its errors come from that pass, not from the verifier); every other
    file is measured (the chunks of a file without markers must all be accepted)."""
    run = " ".join(l for l in text.splitlines() if l.lstrip().startswith("// RUN:"))
    return not run or "verify-diagnostics" in run or "expected-error" not in text


def measure_file(path: Path):
    """Counts for one file: invalid chunks (total, rejected at the marked line), valid chunks
    (total, accepted), and the list of (chunk, detail) judged wrong or skipped."""
    text = path.read_text()
    chunks = split_chunks(text)
    inv = inv_ok = val = val_ok = 0
    misses = []
    for i, outcome, detail in classify(text, path.name):
        invalid = bool(expected_lines(chunks[i]))
        if invalid:
            inv += 1
            inv_ok += outcome == "rejected"
        else:
            val += 1
            val_ok += outcome == "accepted"
        if outcome not in ("rejected", "accepted"):
            misses.append((i, f"{outcome}: {detail}"))
    return inv, inv_ok, val, val_ok, misses


# ------------------------------------------------------------------ infer_*.mlir CHECK lines

_GET_TYPES = re.compile(r'"hlo_test_infer\.get_return_types"\((%[\w#.$-]+)\)')
_CHECK_TYPES = re.compile(r"//\s*CHECK(?:-NEXT|-SAME)?:\s*(types0\s*=.*)$")


def _split_types(s: str) -> List[str]:
    """`types0 = A, types1 = B` -> [A, B] (types hold commas inside <...>)."""
    parts, depth, cur = [], 0, ""
    for ch in s:
        if ch in "<([{":
            depth += 1
        elif ch in ">)]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        cur += ch
    parts.append(cur)
    out = []
    for part in parts:
        m = re.match(r"\s*types\d+\s*=\s*(.*?)\s*$", part)
        if m:
            t = m.group(1)
            while t.endswith("}") and t.count("}") > t.count("{"):    # the op's attribute dict closing
                t = t[:-1].rstrip()
            out.append(t)
    return out


def infer_checks(text: str):
    """Yield (chunk index, line of the get_return_types op, expected types, chunk): the
    `"hlo_test_infer.get_return_types"` ops of a chunk paired in order with its
    `CHECK: types0 = ...` lines (upstream writes the CHECK lines next to, before or after, the
    ops they describe). A chunk whose counts differ is paired up to the shorter list."""
    for i, chunk in enumerate(split_chunks(text)):
        ops, checks = [], []
        for ln, line in enumerate(chunk.split("\n"), start=1):
            if _GET_TYPES.search(line):
                ops.append(ln)
            c = _CHECK_TYPES.search(line)
            if c:
                checks.append(_split_types(c.group(1)))
        for ln, expect in zip(ops, checks):
            yield i, ln, expect, chunk


def _type_matches(got: str, want: str) -> bool:
    """FileCheck's comparison of one type: literal text, with `{{re}}` parts as regular
    expressions; a CHECK matches a prefix (FileCheck matches within the line)."""
    pat = ""
    for k, part in enumerate(re.split(r"\{\{(.*?)\}\}", want.replace(" ", ""))):
        pat += part if k % 2 else re.escape(part)
    return re.match(pat, got.replace(" ", "")) is not None


def _defining_op(module, line: int):
    """The op whose result the `get_return_types` op on `line` takes."""
    for op in module.walk():
        if op.name == "hlo_test_infer.get_return_types" and re.search(rf":{line}:\d+$", op.source or ""):
            return getattr(op.operands[0], "owner", None)
    return None


def measure_infer(path: Path):
    """(CHECKed get_return_types ops, ops whose inferred types agree, list of (chunk, detail))."""
    from stablehlo_ref.text.print_types import type_text
    from stablehlo_ref.verifier.inference import InferenceUnavailable, infer_result_types
    total = ok = 0
    misses = []
    modules = {}
    for i, ln, expect, chunk in infer_checks(path.read_text()):
        total += 1
        if i not in modules:
            try:
                modules[i] = parse(chunk, path.name)
            except StableHLOError as e:
                modules[i] = e
        module = modules[i]
        if isinstance(module, Exception):
            misses.append((i, f"line {ln}: parse error: {module}"))
            continue
        op = _defining_op(module, ln)
        if op is None:
            misses.append((i, f"line {ln}: no op found"))
            continue
        try:
            # one line per type, as the CHECK sees it (an encoding kept as text may span lines)
            got = [" ".join(type_text(t).split()) for t in infer_result_types(op)]
        except InferenceUnavailable as e:
            misses.append((i, f"line {ln}: {op.name}: not inferred: {e}"))
            continue
        # the CHECK names the leading results (`types0 = A` may stop before `types1`)
        if len(got) >= len(expect) and all(_type_matches(g, w) for g, w in zip(got, expect)):
            ok += 1
        else:
            misses.append((i, f"line {ln}: {op.name}: inferred {got}, CHECK says {expect}"))
    return total, ok, misses


def _files(args) -> List[Path]:
    here = Path(__file__).resolve().parent.parent
    targets = [Path(a) for a in args] or [here.parent / "shared" / "stablehlo-tests" / "ops"]
    out = []
    for t in targets:
        out.extend(sorted(t.glob("*.mlir")) if t.is_dir() else [t])
    return out


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    verbose = "-v" in argv
    argv = [a for a in argv if a != "-v"]
    files = _files(argv)
    if not files:
        print("no files (is ../shared/stablehlo-tests present?)")
        return 2
    T = [0, 0, 0, 0]
    print(f"{'file':45} {'invalid rejected':>18} {'valid accepted':>16}")
    for p in files:
        text = p.read_text()
        if not is_verifier_file(text):
            continue
        inv, inv_ok, val, val_ok, misses = measure_file(p)
        T = [a + b for a, b in zip(T, (inv, inv_ok, val, val_ok))]
        print(f"{p.name:45} {inv_ok:>8}/{inv:<9} {val_ok:>7}/{val:<8}")
        if verbose:
            for i, d in misses:
                print(f"    #{i}: {d.splitlines()[0][:300]}")
    print(f"{'TOTAL':45} {T[1]:>8}/{T[0]:<9} {T[3]:>7}/{T[2]:<8}")
    it = iok = 0
    for p in files:
        if not p.name.startswith("infer_"):
            continue
        total, ok, misses = measure_infer(p)
        it, iok = it + total, iok + ok
        print(f"{p.name + ' (CHECK types)':45} {ok:>8}/{total:<9}")
        if verbose:
            for i, d in misses:
                print(f"    #{i}: {d.splitlines()[0][:300]}")
    if it:
        print(f"{'TOTAL inferred types agreeing with CHECK':45} {iok:>8}/{it:<9}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
