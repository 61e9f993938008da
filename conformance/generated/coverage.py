"""Element-type coverage of the generated suite: for each op, the element types the spec
admits for it (read from its spec operand class as the verifier reads it) against the types
its cases exercise (`Case.element_type`).

`types.json` beside this file holds the covered types per op, written with counts.json by
`python -m stablehlo_ref.docs --generated-counts`; the slow generated-suite test checks it
against the generator, and tests/known_failures/generated_type_gaps.txt lists, with a
reason, every admitted type that has no case yet (the list may only shrink)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Dict, Iterable, List, Mapping, Sequence

TYPES_JSON = Path(__file__).resolve().parent / "types.json"

# Which value a case's `element_type` names, where it is not the first operand.
ELEMENT_TYPE_OF = {
    "stablehlo.complex": "result",        # operands f32/f64 name the result complex<f32>/complex<f64>
}


def admitted_types(op_name: str) -> List[str]:
    """The element types the spec admits for `op_name`'s value that cases are labelled by."""
    from stablehlo_ref import spec
    from .values import admitted
    o = spec.op(op_name)
    values = o.operands if (o.operands and ELEMENT_TYPE_OF.get(op_name) != "result") else o.results
    if not values:
        return []
    return admitted(values[0].type)


def covered_types(cases: Iterable) -> Dict[str, List[str]]:
    """op -> the element types its cases exercise, sorted."""
    seen: Dict[str, set] = {}
    for c in cases:
        if c.op and c.element_type:
            seen.setdefault(c.op, set()).add(c.element_type)
    return {op: sorted(ts) for op, ts in sorted(seen.items())}


def render_types_json(cases: Iterable) -> str:
    return json.dumps(covered_types(cases), indent=1) + "\n"


def load_types_json(path: Path = TYPES_JSON) -> Dict[str, List[str]]:
    if not path.is_file():
        return {}
    return {k: list(v) for k, v in json.loads(path.read_text(encoding="utf-8")).items()}


def type_gaps(covered: Mapping[str, Sequence[str]]) -> Dict[str, List[str]]:
    """op -> admitted element types without a case, for every op that has cases."""
    out: Dict[str, List[str]] = {}
    for op, have in sorted(covered.items()):
        have_set = set(have)
        miss = [t for t in admitted_types(op) if t not in have_set]
        if miss:
            out[op] = miss
    return out


def coverage_cell(op: str, covered: Mapping[str, Sequence[str]]) -> str:
    """"covered/admitted" for docs/ops.md, or "-" for an op without cases."""
    if op not in covered:
        return "-"
    adm = admitted_types(op)
    have = set(covered[op])
    return f"{sum(1 for t in adm if t in have)}/{len(adm)}"


def load_gaps(path) -> Dict[tuple, str]:
    """tests/known_failures/generated_type_gaps.txt: `op<TAB>element type<TAB>reason` per line."""
    out: Dict[tuple, str] = {}
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = line.split("\t")
        if len(parts) != 3 or not all(p.strip() for p in parts):
            raise ValueError(f"{path}:{n}: expected op<TAB>element type<TAB>reason")
        key = (parts[0].strip(), parts[1].strip())
        if key in out:
            raise ValueError(f"{path}:{n}: duplicate entry {key[0]} {key[1]}")
        out[key] = parts[2].strip()
    return out
