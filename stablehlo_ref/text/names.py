"""SSA value names as MLIR's printer chooses them (`%0`, `%arg0`, `%c`, `%cst_1`, `%iterArg`,
`%0#1`), for the printer."""
from __future__ import annotations

from typing import Dict


from .. import spec as _spec
from ..ir.attributes import BoolAttr, DenseArrayAttr, IntegerAttr
from ..ir.core import Operation
from ..ir.types import ElementType


class _Scope:
    """One region's set of used value names, chained to the enclosing region's (MLIR's
    ScopedHashTable of used names)."""
    __slots__ = ("names", "parent")

    def __init__(self, parent=None):
        self.names = set()
        self.parent = parent

    def __contains__(self, name):
        s = self
        while s is not None:
            if name in s.names:
                return True
            s = s.parent
        return False


def _block_arg_name_hints(op: Operation, region_index: int, generic: bool):
    """Names upstream ops give their regions' entry arguments (OpAsmOpInterface's
    getAsmBlockArgumentNames), or None."""
    if generic:
        return None
    if op.name == "stablehlo.while":
        return lambda i: "iterArg"
    if op.name == "chlo.scan":
        seg = op.attributes.get("operandSegmentSizes")
        n_in = seg.values[0] if isinstance(seg, DenseArrayAttr) else 0
        return lambda i: "input" if i < n_in else "carry"
    return None


# ops that name their results themselves (an explicit OpAsmOpInterface), so that ODS does not
# name them after the op definition's results
_OWN_RESULT_NAMES = frozenset({"stablehlo.constant", "stablehlo.while", "chlo.scan"})


# result names other dialects' ops that appear beside StableHLO give themselves
_ARITH_LIKE_NAMES = {"tensor.cast": "cast", "tensor.dim": "dim",
                     "tensor.extract": "extracted", "tensor.from_elements": "from_elements",
                     "tensor.reshape": "reshape", "tensor.expand_shape": "expanded",
                     "tensor.collapse_shape": "collapsed", "tensor.extract_slice": "extracted_slice",
                     "tensor.insert_slice": "inserted_slice", "tensor.insert": "inserted",
                     "tensor.splat": "splat", "tensor.pad": "padded", "tensor.generate": "generated",
                     "tensor.bitcast": "bitcast", "tensor.concat": "concat"}


def _result_name_hints(op: Operation, generic: bool):
    """The names upstream gives an op's results (getAsmResultNames), one per result ("" for
    a numbered one), or None: `%c`/`%cst` for constants; an op whose definition has several
    results without a variadic one is named after them (ODS generates that), e.g.
    `%values, %indices = chlo.top_k`."""
    if generic or not op.results:
        return None
    if op.name == "stablehlo.constant":
        if len(op.results) != 1:
            return None
        et = getattr(op.results[0].type, "element_type", None)
        return ["c" if getattr(et, "kind", None) in ("signed", "unsigned", "bool") else "cst"]
    if op.name == "arith.constant" and len(op.results) == 1:
        v = op.attributes.get("value")
        if isinstance(v, (IntegerAttr, BoolAttr)):
            t = op.results[0].type
            if isinstance(t, ElementType) and t.name == "i1":
                return ["true" if v.value else "false"]
            name = f"c{int(v.value)}"
            if isinstance(t, ElementType) and t.kind in ("signed", "unsigned", "bool"):
                name += "_" + t.name
            return [name]
        return ["cst"]
    if op.name in _ARITH_LIKE_NAMES and len(op.results) == 1:
        return [_ARITH_LIKE_NAMES[op.name]]
    if op.name in _OWN_RESULT_NAMES or len(op.results) < 2:
        return None
    if not _spec.has_op(op.name):
        return None
    rs = _spec.op(op.name).results
    if len(rs) != len(op.results) or any(getattr(r, "variadic", False) for r in rs):
        return None
    return [r.name for r in rs]


def mlir_value_names(root: Operation, generic: bool = False) -> Dict[int, str]:
    """Every value's printed name (without `%`), as MLIR's printer chooses them: regions are
    numbered breadth-first, a nested region continuing from the counters its parent region
    ends with (so sibling regions reuse numbers and names); entry-block arguments are `argN`;
    ops may name their results/arguments (`%c`/`%cst` constants, `%iterArg`), a repeated name
    getting `_N` from a counter shared by all names of the region tree; multi-result ops are
    `N#i`."""
    names: Dict[int, str] = {}
    state = [0, 0, 0]         # next value id, next argument id, next conflict id

    def unique(name, scope):
        if name in scope:
            while True:
                probe = f"{name}_{state[2]}"
                state[2] += 1
                if probe not in scope:
                    name = probe
                    break
        scope.names.add(name)
        return name

    def set_name(v, name, scope):
        if not name:
            names[id(v)] = str(state[0])
            state[0] += 1
        else:
            names[id(v)] = unique(name, scope)

    def number_op(op, scope):
        if not op.results:
            return
        hints = _result_name_hints(op, generic)
        if hints:
            for r, h in zip(op.results, hints):
                set_name(r, h, scope)
            return
        n = state[0]
        state[0] += 1
        if len(op.results) == 1:
            names[id(op.results[0])] = str(n)
        else:
            for i, r in enumerate(op.results):
                names[id(r)] = f"{n}#{i}"

    def number_region(region, owner, index, scope):
        hints = _block_arg_name_hints(owner, index, generic)
        if hints is not None and region.blocks:
            for i, a in enumerate(region.blocks[0].arguments):
                set_name(a, hints(i), scope)
        for bi, block in enumerate(region.blocks):
            for a in block.arguments:
                if id(a) in names:
                    continue
                if bi == 0:
                    n = state[1]
                    state[1] += 1
                    set_name(a, f"arg{n}", scope)
                else:
                    set_name(a, "", scope)
            for op in block.operations:
                number_op(op, scope)

    top = _Scope()
    stack = [(r, root, i, 0, 0, 0, top) for i, r in enumerate(root.regions)]
    number_op(root, top)
    while stack:
        # the generic form numbers values uniquely across regions (MLIR: generic implies
        # printUniqueSSAIDs): counters run on instead of restarting from the parent's
        region, owner, index, v, a, c, parent = stack.pop()
        if not generic:
            state[0], state[1], state[2] = v, a, c
        scope = _Scope(parent)
        number_region(region, owner, index, scope)
        for block in region.blocks:
            for op in block.operations:
                for i, r in enumerate(op.regions):
                    stack.append((r, op, i, state[0], state[1], state[2], scope))
    return names
