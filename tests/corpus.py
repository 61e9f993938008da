"""Helpers for running the upstream corpora in `../shared/stablehlo-tests` (when present)
against committed known-failure lists (`tests/known_failures/<corpus>.txt`)."""
from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared" / "stablehlo-tests"
KNOWN = Path(__file__).resolve().parent / "known_failures"


def corpus_files(corpus: str, pattern: str = "*.mlir"):
    d = SHARED / corpus
    if not d.is_dir():
        return []
    return sorted(p.relative_to(SHARED).as_posix() for p in d.glob(pattern))


def load_known(corpus: str) -> dict:
    """`case-id<TAB>reason` per line; `#` comments and blank lines ignored."""
    path = KNOWN / f"{corpus}.txt"
    out = {}
    if not path.exists():
        return out
    for line in path.read_text().splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        key, _, reason = line.partition("\t")
        if not reason.strip():
            raise ValueError(f"{path.name}: entry {key!r} has no reason")
        out[key.strip()] = reason.strip()
    return out


def case_id(rel: str, r) -> str:
    return f"{rel}#{r.chunk}@{r.function}"


def check_file_against_known(rel: str, known: dict):
    from stablehlo_ref.checkrun import run_file
    results = run_file(str(SHARED / rel))
    unexpected = []
    fixed = []
    for r in results:
        cid = case_id(rel, r)
        if r.status == "pass":
            if cid in known:
                fixed.append(cid)
        elif cid not in known:
            unexpected.append(f"{cid}: {r.status}: {r.reason.splitlines()[0] if r.reason else ''}")
    # entries naming a case of this file that no longer exists (e.g. a parse-error case whose
    # chunk now parses and runs under its function's name) are stale: they count as fixed
    seen = {case_id(rel, r) for r in results}
    fixed.extend(k for k in known if k.startswith(rel + "#") and k not in seen)
    return results, unexpected, fixed
