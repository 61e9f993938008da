"""Measure the verifier against upstream's verifier files (`// expected-error` suites).

Every `// -----` chunk of a file is judged as MLIR's `-verify-diagnostics` would: a chunk with
`expected-error` markers must be rejected with an error at a marked line (a parse error at that
line counts), a chunk without markers must be accepted. A file whose RUN line runs a test pass
without `-verify-diagnostics` is skipped.

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
    src = getattr(op, "source", None) or err.location or ""
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
