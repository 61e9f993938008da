"""The generated conformance suite: cases built deterministically from the spec (every op with
interpreter support x every element type its operand type class admits x attribute
variants x edge shapes x special values), each with an expected value from an oracle
independent of the interpreter under test (Python integers, exact fractions, mpmath; index
arithmetic for movement ops), a tolerance and its provenance.

    from stablehlo_ref.conformance.generated import generate_cases
    cases = generate_cases()            # the fast subset
    cases = generate_cases(full=True)   # everything

See conformance/README.md ("The generated suite")."""
from __future__ import annotations

import fnmatch
from typing import Dict, List, Optional

FAST_TYPES = frozenset({"i1", "i8", "ui32", "i64", "f8E4M3FN", "bf16", "f16", "f32", "f64", "complex<f32>"})


def generate_cases(full: bool = False, pattern: Optional[str] = None, op: Optional[str] = None) -> List:
    """The cases of the generated suite (the fast subset unless `full`), filtered by a glob on
    case ids and/or an op name (`add` = `stablehlo.add`)."""
    from . import collectives, elementwise, extra, indexing, linalg, misc, nn, quantized, reductions, special, structural, windows
    fast = None if full else FAST_TYPES
    want = op if (op is None or "." in op) else f"stablehlo.{op}"
    cases = []
    gens = [elementwise.all_elementwise, special.all_special, structural.all_structural,
            reductions.all_reductions, misc.all_misc, indexing.all_indexing,
            windows.all_windows, linalg.all_linalg, nn.all_nn, quantized.all_quantized,
            collectives.all_collectives, extra.all_extra]
    if want in elementwise.BY_NAME:          # one elementwise op: build only its cases
        e = elementwise.BY_NAME[want]
        gens = [lambda full, fast: [c for et in elementwise.types_for(e) if fast is None or et in fast
                                    for c in elementwise.elementwise_cases(e, et, full)]]
    elif want is not None and want.startswith("chlo.broadcast_"):
        gens = [elementwise.all_elementwise, special.all_special]
    for gen in gens:
        for c in gen(full, fast):
            if want and c.op != want:
                continue
            if pattern and not fnmatch.fnmatchcase(c.id, pattern):
                continue
            cases.append(c)
    return cases


def case_counts(full: bool = True) -> Dict[str, int]:
    """Number of generated cases per op (the full suite)."""
    out: Dict[str, int] = {}
    for c in generate_cases(full=full):
        out[c.op] = out.get(c.op, 0) + 1
    return out


def covered_ops() -> set:
    """Ops with at least one case in the full suite."""
    return set(case_counts(full=True))
