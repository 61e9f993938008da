"""The printer: MLIR's pretty form (driven by the spec's formats, plus the hand-written syntax
of module/func/constant/while/reduce) or the generic form for every op."""
from __future__ import annotations

import re
from typing import Dict, List

import numpy as np

from ..ir.attributes import (AffineMapAttr, ArrayAttr, Attribute, BoolAttr, CallSiteLoc,
                             DenseArrayAttr, DenseElementsAttr, DenseResourceAttr, DictAttr,
                             EnumAttr, FileLineColLoc, FloatAttr, FusedLoc, IntegerAttr, Location,
                             NameLoc, OpaqueAttr, StringAttr, StructAttr, SymbolRefAttr, TypeAttr,
                             UnitAttr, UnknownLoc)
from ..ir.core import Module, Operation
from ..ir.defaults import is_default
from ..ir.floats import format_float
from ..ir.locations import arg_location, op_location
from ..ir.types import (ELEMENT_TYPES, ElementType, FunctionType, QuantizedType, TensorType,
                        TupleType, Type, UnrankedTensorType)
from . import custom_syntax as _custom_syntax
from . import dense
from .conv_dims import print_conv_dims

_BARE_SYMBOL = re.compile(r"[A-Za-z_][\w$.\-]*$")
_BARE_KEY = re.compile(r"[A-Za-z_][\w$.]*$")
_LARGE = 100   # dense literals with more elements print in hex form (MLIR's default)


_PLAIN_STRING = re.compile(r'[ !#-\[\]-~]*$')     # printable ASCII but `"` and `\`


def escape_string(s: str) -> str:
    """A string literal as MLIR writes one (llvm::printEscapedString): a doubled backslash for a
    backslash; every byte that is not printable ASCII, and the double quote, as a backslash and
    two upper-case hex digits (UTF-8 bytes)."""
    if _PLAIN_STRING.match(s):
        return '"' + s + '"'
    out = []
    for b in s.encode("utf-8", "surrogateescape"):
        if b == 0x5C:
            out.append("\\\\")
        elif 0x20 <= b < 0x7F and b != 0x22:
            out.append(chr(b))
        else:
            out.append("\\%02X" % b)
    return '"' + "".join(out) + '"'


def _quant_text(q: QuantizedType) -> str:
    st = q.storage_type.name
    if q.storage_type.is_unsigned:
        st = "u" + st[2:]
    if q.storage_min is not None:
        st += f"<{q.storage_min}:{q.storage_max}>"
    head = f"{st}:{q.expressed_type.name}"
    f64 = ELEMENT_TYPES["f64"]    # scales are doubles whatever the expressed type

    def one(scale, zp):
        return format_float(scale, f64) + (f":{zp}" if zp != 0 else "")
    if q.quantized_dimension is None:
        return f"!quant.uniform<{head}, {one(q.scales[0], q.zero_points[0])}>"
    body = ",".join(one(sc, z) for sc, z in zip(q.scales, q.zero_points))
    return f"!quant.uniform<{head}:{q.quantized_dimension}, {{{body}}}>"


def type_text(t) -> str:
    """A type in MLIR syntax (encodings and quantization parameters printed exactly)."""
    if isinstance(t, ElementType):
        return t.name
    if isinstance(t, TensorType):
        dims = "".join(("?" if d is None else str(d)) + "x" for d in t.shape)
        enc = f", {_ATTR_PRINTER.attr(t.encoding)}" if t.encoding is not None else ""
        return f"tensor<{dims}{type_text(t.element_type)}{enc}>"
    if isinstance(t, QuantizedType):
        return _quant_text(t)
    if isinstance(t, UnrankedTensorType):
        return f"tensor<*x{type_text(t.element_type)}>"
    if isinstance(t, TupleType):
        return "tuple<" + ", ".join(type_text(x) for x in t.types) + ">"
    if isinstance(t, FunctionType):
        ins = "(" + ", ".join(type_text(x) for x in t.inputs) + ")"
        if len(t.results) == 1 and not isinstance(t.results[0], FunctionType):
            return f"{ins} -> {type_text(t.results[0])}"
        return f"{ins} -> (" + ", ".join(type_text(x) for x in t.results) + ")"
    return str(t)


def _needs_loc(loc) -> bool:
    return loc is not None and not isinstance(loc, UnknownLoc)


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
    from .. import spec as _spec
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


def _loc_children(loc):
    if isinstance(loc, NameLoc):
        return () if loc.child is None or isinstance(loc.child, UnknownLoc) else (loc.child,)
    if isinstance(loc, CallSiteLoc):
        return (loc.callee, loc.caller)
    if isinstance(loc, FusedLoc):
        return tuple(loc.locations)
    return ()


def _loc_depth(loc) -> int:
    kids = _loc_children(loc)
    return 1 + max(_loc_depth(k) for k in kids) if kids else 0


def _affine_map_aliases(root: Operation) -> Dict[str, str]:
    found: Dict[str, str] = {}

    def visit(a):
        if isinstance(a, AffineMapAttr):
            if a.text not in found:
                found[a.text] = "#map" + (str(len(found)) if found else "")
        elif isinstance(a, ArrayAttr):
            for e in a.elements:
                visit(e)
        elif isinstance(a, DictAttr):
            for _, e in a.entries:
                visit(e)

    for op in root.walk():
        for k in sorted(op.attributes):
            visit(op.attributes[k])
    return found


class Printer:
    def __init__(self, module: Module = None, generic: bool = False, strip_debuginfo: bool = False,
                 debuginfo: bool = False):
        self.module = module
        self.generic = generic
        self.strip = strip_debuginfo
        # MLIR's -mlir-print-debuginfo form: every op and block argument located (implicit
        # positions included), locations as `#locN` aliases defined before/after the module
        self.debuginfo = debuginfo and not strip_debuginfo
        self._loc_visits = None        # alias pass: location -> [first visit, deferrable]
        self._loc_alias: Dict = {}
        self._op_stack: List[Operation] = []
        self.names: Dict[int, str] = {}
        self.aliases: Dict[str, str] = {}     # affine_map text -> `#map`, `#map1`, ...
        self.counters = [[0, 0]]   # stack of [next value number, next arg number]
        # MLIR's default dialect of the region being printed: ops of that dialect print without
        # their prefix (`return` in a func body); inside other ops' regions there is none
        self.default_dialect = ["builtin"]

    # ------------------------------------------------------------ types/attrs
    def type(self, t: Type) -> str:
        return type_text(t)

    def scalar(self, v, et) -> str:
        if isinstance(et, ElementType):
            if et.is_bool:
                return "true" if bool(v) else "false"
            if et.is_float:
                return format_float(v, et)
            if et.is_complex:
                sub = ELEMENT_TYPES["f32" if et.name == "complex<f32>" else "f64"]
                c = complex(v)
                return f"({format_float(c.real, sub)},{format_float(c.imag, sub)})"
            return str(int(v))
        return str(v)

    def dense_body(self, a: DenseElementsAttr) -> str:
        arr = a.array
        et = dense.storage_element(a.type)
        if arr.size == 0:
            # MLIR writes an empty dense as `dense<>`, or as its splat value when it was one
            # (kept here as a broadcast view of that value)
            base = arr.base
            if isinstance(base, np.ndarray) and base.size == 1 and arr.ndim and not any(arr.strides):
                return self.scalar(base.reshape(-1)[0], et)
            return ""
        flat = arr.reshape(-1)
        if a.is_splat:      # one element, or all equal (MLIR keeps such attributes as splats)
            return self.scalar(flat[0], et)
        if arr.size > _LARGE:
            return '"' + dense.array_to_hex(arr) + '"'
        if arr.ndim == 0:
            return self.scalar(flat[0], et)
        items = [self.scalar(x, et) for x in flat]
        return self._nest(items, arr.shape)

    def _nested_empty(self, shape):
        # e.g. shape (0,) -> [], (2, 0) -> [[], []]
        def rec(dims):
            if not dims:
                return ""
            if dims[0] == 0:
                return "[]"
            return "[" + ", ".join(rec(dims[1:]) for _ in range(dims[0])) + "]"
        return rec(list(shape))

    def _nest(self, items, shape):
        if len(shape) == 1:
            return "[" + ", ".join(items) + "]"
        step = len(items) // shape[0] if shape[0] else 0
        return "[" + ", ".join(self._nest(items[i * step:(i + 1) * step], shape[1:]) for i in range(shape[0])) + "]"

    def _array_element(self, a: Attribute) -> str:
        """An array element: MLIR leaves out the type of i64 integers and f64 floats there."""
        t = getattr(a, "type", None)
        if isinstance(t, ElementType):
            if isinstance(a, IntegerAttr) and t.name == "i64":
                return str(a.value)
            if isinstance(a, FloatAttr) and t.name == "f64":
                return format_float(a.value, t)
        return self.attr(a)

    def attr(self, a: Attribute) -> str:
        if isinstance(a, IntegerAttr):
            t = a.type
            if isinstance(t, ElementType) and t.is_bool:
                return "true" if a.value else "false"
            return f"{a.value} : {t}" if t is not None else str(a.value)
        if isinstance(a, FloatAttr):
            return f"{format_float(a.value, a.type)} : {type_text(a.type)}"
        if isinstance(a, BoolAttr):
            return "true" if a.value else "false"
        if isinstance(a, StringAttr):
            return escape_string(a.value) + (f" : {a.type}" if a.type is not None else "")
        if isinstance(a, UnitAttr):
            return "unit"
        if isinstance(a, ArrayAttr):
            return "[" + ", ".join(self._array_element(e) for e in a.elements) + "]"
        if isinstance(a, DenseArrayAttr):
            if not a.values:
                return f"array<{type_text(a.element_type)}>"
            return f"array<{type_text(a.element_type)}: " + ", ".join(self.scalar(v, a.element_type) for v in a.values) + ">"
        if isinstance(a, DictAttr):
            return self.attr_dict(a.entries)
        if isinstance(a, TypeAttr):
            return type_text(a.type)
        if isinstance(a, SymbolRefAttr):
            return "::".join(self.symbol(s) for s in (a.root,) + a.nested)
        if isinstance(a, DenseElementsAttr):
            return f"dense<{self.dense_body(a)}> : {type_text(a.type)}"
        if isinstance(a, DenseResourceAttr):
            return f"dense_resource<{a.key}> : {type_text(a.type)}"
        if isinstance(a, EnumAttr):
            return f"#{a.dialect}<{a.kind} {a.value}>"
        if isinstance(a, StructAttr):
            return self.struct(a)
        if isinstance(a, AffineMapAttr):
            if self._loc_visits is not None:      # debug-info alias pass: note when it is met
                self._loc_visits.setdefault(a, [len(self._loc_visits), False])
            return self.aliases.get(a.text, a.text)
        if isinstance(a, OpaqueAttr):
            return a.text
        if isinstance(a, Location):
            return self.loc(a)
        raise TypeError(f"cannot print attribute {a!r}")

    def symbol(self, s: str) -> str:
        return "@" + s if _BARE_SYMBOL.match(s) else "@" + escape_string(s)

    def struct(self, a: StructAttr) -> str:
        head = f"#{a.dialect}.{a.name}"
        if a.name == "conv":
            try:
                return f"{head}<{print_conv_dims(a.fields)}>"
            except (IndexError, KeyError):
                return f"{head}<raw " + ", ".join(f"{k} = {self._sval(v)}" for k, v in a.fields) + ">"
        if a.name == "bounds":
            return f"{head}<" + ", ".join("?" if v is None else str(v) for v in a.fields[0][1]) + ">"
        if a.name == "result_accuracy_mode":
            return f"{head}<{a.fields[0][1]}>"
        if a.name == "result_accuracy":       # zero tolerances are left out, as upstream
            parts = [f"{k} = {self._sval(v)}" for k, v in a.fields
                     if not (k in ("atol", "rtol", "ulps") and v == 0)]
            return f"{head}<" + ", ".join(parts) + ">"
        parts = []
        for k, v in a.fields:
            # upstream's printStruct leaves out empty lists and zero integers
            if a.name in ("gather", "scatter", "dot", "ragged_dot") and (v == () or (type(v) is int and v == 0)):
                continue
            parts.append(f"{k} = {self._sval(v)}")
        return f"{head}<" + ", ".join(parts) + ">"

    def _sval(self, v) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if v is None:
            return "?"
        if isinstance(v, tuple):
            return "[" + ", ".join(self._sval(x) for x in v) + "]"
        if isinstance(v, float):
            return format_float(v, ELEMENT_TYPES["f64"])
        if isinstance(v, StructAttr) and v.name == "sub_axis_info":
            f = dict(v.fields)
            return f"({f['pre_size']}){f['size']}"
        if isinstance(v, Attribute):
            return self.attr(v)
        if isinstance(v, Type):
            return str(v)
        return str(v)

    def attr_dict(self, entries) -> str:
        parts = []
        for k, v in sorted(entries, key=lambda kv: kv[0]):     # MLIR keeps dictionaries sorted
            key = k if _BARE_KEY.match(k) else escape_string(k)
            parts.append(key if isinstance(v, UnitAttr) else f"{key} = {self.attr(v)}")
        return "{" + ", ".join(parts) + "}"

    def loc(self, loc) -> str:
        return f"loc({self._loc_body(loc)})"

    def _loc_body(self, loc) -> str:
        if isinstance(loc, UnknownLoc) or loc is None:
            return "unknown"
        if isinstance(loc, FileLineColLoc):
            s = f"{escape_string(loc.filename)}:{loc.line}:{loc.column}"
            if loc.end_line is not None:
                s += f" to :{loc.end_column}" if loc.end_line == loc.line else f" to {loc.end_line}:{loc.end_column}"
            return s
        if isinstance(loc, NameLoc):
            return escape_string(loc.name) + (f"({self._loc_body(loc.child)})" if loc.child is not None
                                              and not isinstance(loc.child, UnknownLoc) else "")
        if isinstance(loc, CallSiteLoc):
            return f"callsite({self._loc_body(loc.callee)} at {self._loc_body(loc.caller)})"
        if isinstance(loc, FusedLoc):
            meta = f"<{self.attr(loc.metadata)}>" if loc.metadata is not None else ""
            return f"fused{meta}[" + ", ".join(self._loc_body(l) for l in loc.locations) + "]"
        return "unknown"

    def trailing_loc(self, loc) -> str:
        """The location after an op (the op being printed: with debug info, its effective one)."""
        if self.debuginfo:
            if self._loc_visits is not None or not self._op_stack:
                return ""
            return f" loc({self._loc_alias[op_location(self._op_stack[-1], self.module)]})"
        if self.strip or not _needs_loc(loc):
            return ""
        return " " + self.loc(loc)

    def arg_loc(self, block, i: int) -> str:
        """The location after a block argument: inline (its parts as aliases) with debug info,
        else the explicit one if any."""
        if self.debuginfo:
            loc = arg_location(block, i)
            if self._loc_visits is not None:
                self._visit_loc(loc, False)
                return ""
            return f" loc({self._loc_def(loc)})"
        loc = block.arg_locations[i] if i < len(block.arg_locations) else None
        if loc is not None and not self.strip and _needs_loc(loc):
            return " " + self.loc(loc)
        return ""

    def _visit_loc(self, loc, deferrable: bool) -> None:
        seen = self._loc_visits.get(loc)
        if seen is None:
            self._loc_visits[loc] = [len(self._loc_visits), deferrable]
        elif not deferrable:
            seen[1] = False
        for child in _loc_children(loc):
            self._visit_loc(child, deferrable)

    def _assign_location_aliases(self):
        """`#loc`, `#loc1`, ... by nesting depth, then first visit (MLIR's order); those a block
        argument needs are defined before the module, the rest after it."""
        order = sorted(self._loc_visits, key=lambda l: (_loc_depth(l), self._loc_visits[l][0]))
        locs = [l for l in order if not isinstance(l, AffineMapAttr)]
        maps = [l for l in order if isinstance(l, AffineMapAttr)]
        self._loc_alias = {l: "#loc" + (str(i) if i else "") for i, l in enumerate(locs)}
        self._loc_alias.update({m: "#map" + (str(i) if i else "") for i, m in enumerate(maps)})
        self.aliases = {m.text: self._loc_alias[m] for m in maps}
        top = [l for l in order if not self._loc_visits[l][1]]
        bottom = [l for l in order if self._loc_visits[l][1]]
        return top, bottom

    def _alias_definition(self, a) -> str:
        if isinstance(a, AffineMapAttr):
            return f"{self._loc_alias[a]} = {a.text}\n"
        return f"{self._loc_alias[a]} = loc({self._loc_def(a)})\n"

    def _loc_def(self, loc) -> str:
        """A location's body with its parts written as their aliases."""
        ref = lambda l: self._loc_alias.get(l) or self._loc_body(l)
        if isinstance(loc, NameLoc):
            child = loc.child
            if child is None or isinstance(child, UnknownLoc):
                return escape_string(loc.name)
            return f"{escape_string(loc.name)}({ref(child)})"
        if isinstance(loc, CallSiteLoc):
            return f"callsite({ref(loc.callee)} at {ref(loc.caller)})"
        if isinstance(loc, FusedLoc):
            meta = f"<{self.attr(loc.metadata)}>" if loc.metadata is not None else ""
            return f"fused{meta}[" + ", ".join(ref(l) for l in loc.locations) + "]"
        return self._loc_body(loc)

    def op_name(self, op: Operation) -> str:
        """The op's name in pretty form: without the dialect prefix in a region whose default
        dialect is the op's own."""
        d = self.default_dialect[-1]
        if d and op.name.startswith(d) and op.name[len(d):len(d) + 1] == ".":
            return op.name[len(d) + 1:]
        return op.name

    # ------------------------------------------------------------ values
    def value(self, v) -> str:
        n = self.names.get(id(v))
        if n is None:
            return "%<<UNKNOWN>>"
        return "%" + n

    def name_results(self, op: Operation) -> str:
        if not op.results:
            return ""
        known = self.names.get(id(op.results[0]))
        if known is not None:        # named up front (print_module)
            if len(op.results) == 1:
                return f"%{known} = "
            if "#" not in known:     # one name per result
                return ", ".join("%" + self.names[id(r)] for r in op.results) + " = "
            return f"%{known.split('#')[0]}:{len(op.results)} = "
        c = self.counters[-1]
        base = str(c[0])
        c[0] += 1
        if len(op.results) == 1:
            self.names[id(op.results[0])] = base
            return f"%{base} = "
        for i, r in enumerate(op.results):
            self.names[id(r)] = f"{base}#{i}"
        return f"%{base}:{len(op.results)} = "

    def name_arg(self, v) -> str:
        known = self.names.get(id(v))
        if known is not None:
            return "%" + known
        c = self.counters[-1]
        n = f"arg{c[1]}"
        c[1] += 1
        self.names[id(v)] = n
        return "%" + n

    # ------------------------------------------------------------ ops
    def print_module(self) -> str:
        m = self.module
        self.names = mlir_value_names(m.op, self.generic)
        self.aliases = _affine_map_aliases(m.op)
        if self.debuginfo:     # a first pass finds the locations as printing meets them
            self._loc_visits = {}
            self.op(m.op, 0)
            top, bottom = self._assign_location_aliases()
            self._loc_visits = None
        lines = self.op(m.op, 0)
        text = "\n".join(lines) + "\n"
        if self.debuginfo:
            text = "".join(self._alias_definition(l) for l in top) + text
            text += "".join(self._alias_definition(l) for l in bottom)
        elif self.aliases:     # MLIR names affine maps `#map`, `#map1`, ... at the top
            text = "".join(f"{n} = {t}\n" for t, n in self.aliases.items()) + text
        if m.resources:
            used = {a.key for op in m.walk() for a in op.attributes.values() if isinstance(a, DenseResourceAttr)}
            blobs = [(k, v) for k, v in m.resources.items() if k in used or True]
            if blobs:
                text += "\n{-#\n  dialect_resources: {\n    builtin: {\n"
                text += ",\n".join(f"      {k}: \"0x{(16).to_bytes(4, 'little').hex().upper()}{v.hex().upper()}\"" for k, v in blobs)
                text += "\n    }\n  }\n#-}\n"
        return text

    def op(self, op: Operation, indent: int) -> List[str]:
        if not self.debuginfo:
            return self._op(op, indent)
        if self._loc_visits is not None:      # MLIR meets an op's location before its body
            self._visit_loc(op_location(op, self.module), True)
        self._op_stack.append(op)
        try:
            return self._op(op, indent)
        finally:
            self._op_stack.pop()

    def _op(self, op: Operation, indent: int) -> List[str]:
        pad = "  " * indent
        if not self.generic:
            fn = _CUSTOM_PRINTERS.get(op.name)
            if fn is not None:
                r = fn(self, op, indent)
                if r is not None:
                    return r
            n = _elementwise_arity(op.name)
            if n and len(op.operands) == n and len(op.results) == 1:
                return [self._elementwise(op, pad)]
            from . import formats
            fmt = formats.format_for(op.name)
            if fmt is not None:
                r = _print_with_format(self, op, fmt, indent)
                if r is not None:
                    return r
        return self.generic_op(op, indent)

    def _elementwise(self, op: Operation, pad: str) -> str:
        """`$a, $b attr-dict : custom<SameOperandsAndResultType>(...)`, the format most ops
        share, printed without walking the format."""
        res = op.results[0].type
        ins = [v.type for v in op.operands]
        t = type_text(res) if all(x == res for x in ins) else _ftype(ins, [res])
        s = f"{pad}{self.name_results(op)}{self.op_name(op)} " + ", ".join(self.value(v) for v in op.operands)
        if op.attributes:
            rest = [(k, v) for k, v in op.attributes.items() if not is_default(op.name, k, v)]
            if rest:
                s += " " + self.attr_dict(rest)
        return s + " : " + t + self.trailing_loc(op.location)

    def generic_op(self, op: Operation, indent: int) -> List[str]:
        pad = "  " * indent
        head = self.name_results(op) if op.name != "builtin.module" or op.results else ""
        ops_s = ", ".join(self.value(v) for v in op.operands)
        from .. import spec as _spec
        inherent, discard = _split_attrs(op)
        s = f'{pad}{head}"{op.name}"({ops_s})'
        if inherent:
            s += " <" + self.attr_dict(inherent) + ">"
        lines = []
        if op.regions:
            s += " ("
            lines_regions = []
            for i, region in enumerate(op.regions):
                rl = self.region(region, indent, entry_args=True, empty_block=True)
                if i:
                    rl[0] = ", " + rl[0]
                lines_regions.append(rl)
            # glue: first line of region 0 follows "("
            first = lines_regions[0]
            s += first[0]
            lines.append(s)
            lines.extend(first[1:])
            for rl in lines_regions[1:]:
                lines[-1] += rl[0]
                lines.extend(rl[1:])
            tail = ")"
        else:
            lines.append(s)
            tail = ""
        if discard:
            tail += " " + self.attr_dict(discard)
        ins = ", ".join(type_text(v.type) for v in op.operands)
        outs = [type_text(r.type) for r in op.results]
        ft = f"({ins}) -> " + (outs[0] if len(outs) == 1 and not outs[0].startswith("(") else "(" + ", ".join(outs) + ")")
        lines[-1] += tail + " : " + ft + self.trailing_loc(op.location)
        return lines

    def region(self, region, indent: int, entry_args: bool = True, isolated: bool = False,
               empty_block: bool = False, omit_terminator: bool = False) -> List[str]:
        """Lines of `{ ... }`; the first line is just "{" (to be appended to the op line)."""
        if isolated:
            self.counters.append([0, 0])
        # values and arguments of a nested region number on from the parent's, and the numbers
        # are free again after it (sibling regions and the ops that follow reuse them), as MLIR
        saved = list(self.counters[-1])
        self.default_dialect.append("")
        pad = "  " * indent
        lines = ["{"]
        for bi, block in enumerate(region.blocks):
            # an empty entry block keeps its label where the op needs the block (generic form)
            show_header = bi > 0 or (entry_args and block.arguments) or (empty_block and not block.operations)
            if show_header:
                args = []
                for ai, v in enumerate(block.arguments):
                    args.append(f"{self.name_arg(v)}: {type_text(v.type)}{self.arg_loc(block, ai)}")
                label = f"^bb{bi}"
                lines.append(f"{pad}{label}" + (f"({', '.join(args)})" if args else "") + ":")
            ops = block.operations
            if omit_terminator and len(region.blocks) == 1 and ops:
                ops = ops[:-1]      # an implicit terminator (MLIR leaves it out)
            for op in ops:
                lines.extend(self.op(op, indent + 1))
        lines.append(pad + "}")
        self.default_dialect.pop()
        self.counters[-1][:] = saved
        if isolated:
            self.counters.pop()
        return lines


# the properties (inherent attributes) of the builtin and func ops, printed in `<{...}>`
_BUILTIN_PROPERTIES = {
    "builtin.module": frozenset({"sym_name", "sym_visibility"}),
    "func.func": frozenset({"sym_name", "function_type", "sym_visibility", "arg_attrs", "res_attrs"}),
    "func.call": frozenset({"callee", "arg_attrs", "res_attrs", "no_inline"}),
    "func.return": frozenset(),
    "arith.constant": frozenset({"value"}),
}
_SEGMENT_SIZES = frozenset({"operandSegmentSizes", "resultSegmentSizes"})


def _split_attrs(op: Operation):
    from .. import spec as _spec
    names = _BUILTIN_PROPERTIES.get(op.name)
    if names is None:
        names = set()
        if _spec.has_op(op.name):
            names = {a.name for a in _spec.op(op.name).attributes} | _SEGMENT_SIZES
    inherent = [(k, v) for k, v in op.attributes.items() if k in names]
    discard = [(k, v) for k, v in op.attributes.items() if k not in names]
    return inherent, discard


# ---------------------------------------------------------------- hand-written printers

def _print_module(pr: Printer, op: Operation, indent: int):
    pad = "  " * indent
    head = pad + "module"
    attrs = [(k, v) for k, v in op.attributes.items() if k != "sym_name"]
    if "sym_name" in op.attributes:
        head += " " + pr.symbol(op.attributes["sym_name"].value)
    if attrs:
        head += " attributes " + pr.attr_dict(attrs)
    body = op.regions[0].blocks[0]
    lines = [head + " {"]
    pr.default_dialect.append("builtin")
    for sub in body.operations:
        lines.extend(pr.op(sub, indent + 1))
    pr.default_dialect.pop()
    lines.append(pad + "}" + pr.trailing_loc(op.location))
    return lines


def _print_func(pr: Printer, op: Operation, indent: int):
    pad = "  " * indent
    a = op.attributes
    ft: FunctionType = a["function_type"].type
    vis = a.get("sym_visibility")
    head = pad + "func.func " + (vis.value + " " if vis is not None else "") + pr.symbol(a["sym_name"].value)
    arg_attrs = a.get("arg_attrs")
    res_attrs = a.get("res_attrs")
    pr.counters.append([0, 0])
    has_body = bool(op.regions and op.regions[0].blocks)
    args = []
    for i, t in enumerate(ft.inputs):
        if has_body:
            blk = op.regions[0].blocks[0]
            s = f"{pr.name_arg(blk.arguments[i])}: {type_text(t)}"
        else:
            s = type_text(t)
        if arg_attrs is not None and i < len(arg_attrs.elements) and arg_attrs.elements[i].entries:
            s += " " + pr.attr(arg_attrs.elements[i])
        if has_body:
            s += pr.arg_loc(op.regions[0].blocks[0], i)
        args.append(s)
    head += "(" + ", ".join(args) + ")"
    if ft.results:
        outs = []
        any_attr = False
        for i, t in enumerate(ft.results):
            s = type_text(t)
            if res_attrs is not None and i < len(res_attrs.elements) and res_attrs.elements[i].entries:
                s += " " + pr.attr(res_attrs.elements[i])
                any_attr = True
            outs.append(s)
        if len(outs) == 1 and not any_attr and not isinstance(ft.results[0], FunctionType):
            head += " -> " + outs[0]
        else:
            head += " -> (" + ", ".join(outs) + ")"
    rest = [(k, v) for k, v in a.items() if k not in ("sym_name", "function_type", "sym_visibility", "arg_attrs", "res_attrs")]
    if rest:
        head += " attributes " + pr.attr_dict(rest)
    if not has_body:
        pr.counters.pop()
        return [head + pr.trailing_loc(op.location)]
    region = op.regions[0]
    lines = [head + " {"]
    pr.default_dialect.append("func")
    for bi, block in enumerate(region.blocks):
        if bi > 0:
            bargs = [f"{pr.name_arg(v)}: {type_text(v.type)}" for v in block.arguments]
            lines.append(f"{pad}^bb{bi}" + (f"({', '.join(bargs)})" if bargs else "") + ":")
        for sub in block.operations:
            lines.extend(pr.op(sub, indent + 1))
    pr.default_dialect.pop()
    lines.append(pad + "}" + pr.trailing_loc(op.location))
    pr.counters.pop()
    return lines


def _print_return(pr: Printer, op: Operation, indent: int):
    pad = "  " * indent
    if op.name not in ("func.return", "scf.yield"):
        return None
    s = pad + pr.op_name(op)
    if op.attributes:
        s += " " + pr.attr_dict(list(op.attributes.items()))
    if op.operands:
        s += " " + ", ".join(pr.value(v) for v in op.operands) + " : " + ", ".join(type_text(v.type) for v in op.operands)
    return [s + pr.trailing_loc(op.location)]


def _print_call(pr: Printer, op: Operation, indent: int):
    pad = "  " * indent
    head = pr.name_results(op)
    callee = op.attributes.get("callee")
    if not isinstance(callee, SymbolRefAttr):
        return None
    rest = [(k, v) for k, v in op.attributes.items() if k != "callee"]
    s = f"{pad}{head}{pr.op_name(op)} {pr.attr(callee)}(" + ", ".join(pr.value(v) for v in op.operands) + ")"
    if rest:
        s += " " + pr.attr_dict(rest)
    ins = ", ".join(type_text(v.type) for v in op.operands)
    outs = [type_text(r.type) for r in op.results]
    s += f" : ({ins}) -> " + (outs[0] if len(outs) == 1 else "(" + ", ".join(outs) + ")")
    return [s + pr.trailing_loc(op.location)]


def _print_constant(pr: Printer, op: Operation, indent: int):
    v = op.attributes.get("value")
    if v is None or not op.results or getattr(v, "type", None) != op.results[0].type:
        return None
    pad = "  " * indent
    head = pr.name_results(op)
    rest = [(k, x) for k, x in op.attributes.items() if k != "value"]
    s = f"{pad}{head}{op.name}"
    if rest:
        s += " " + pr.attr_dict(rest)
    s += " " + pr.attr(v)
    return [s + pr.trailing_loc(op.location)]


def _print_while(pr: Printer, op: Operation, indent: int):
    if len(op.regions) != 2:
        return None
    pad = "  " * indent
    cond, body = op.regions
    if len(cond.blocks) != 1 or len(body.blocks) != 1:
        return None
    types = [v.type for v in op.operands]
    if [r.type for r in op.results] != types or [v.type for v in body.blocks[0].arguments] != types \
            or [v.type for v in cond.blocks[0].arguments] != types:
        return None     # the pretty form has one type list for operands, results and arguments
    head = pr.name_results(op)
    # both regions' block arguments print under the same names
    saved = list(pr.counters[-1])
    names = []
    for v in body.blocks[0].arguments:
        names.append(pr.name_arg(v))
    for v, n in zip(cond.blocks[0].arguments, names):
        pr.names[id(v)] = n[1:]
    s = f"{pad}{head}{op.name}(" + ", ".join(f"{n} = {pr.value(x)}" for n, x in zip(names, op.operands)) + ")"
    if op.operands:
        s += " : " + ", ".join(type_text(v.type) for v in op.operands)
    if op.attributes:
        s += " attributes " + pr.attr_dict(list(op.attributes.items()))
    lines = [s]
    c = pr.region(cond, indent, entry_args=False)
    lines.append(pad + "cond " + c[0])
    lines.extend(c[1:])
    b = pr.region(body, indent, entry_args=False)
    pr.counters[-1][:] = saved
    lines[-1] += " do " + b[0]
    lines.extend(b[1:])
    lines[-1] += pr.trailing_loc(op.location)
    return lines


def _print_reduce(pr: Printer, op: Operation, indent: int):
    dims = op.attributes.get("dimensions")
    if not isinstance(dims, DenseArrayAttr) or len(op.regions) != 1 or len(op.regions[0].blocks) != 1:
        return None
    n = len(op.operands) // 2
    if n == 0 or len(op.operands) % 2:
        return None
    pad = "  " * indent
    head = pr.name_results(op)
    block = op.regions[0].blocks[0]
    if len(block.arguments) != 2 * n:
        return None
    pairs = ", ".join(f"({pr.value(op.operands[i])} init: {pr.value(op.operands[i + n])})" for i in range(n))
    rest = [(k, v) for k, v in op.attributes.items() if k != "dimensions"]
    ft_ins = ", ".join(type_text(v.type) for v in op.operands)
    outs = [type_text(r.type) for r in op.results]
    ft = f"({ft_ins}) -> " + (outs[0] if len(outs) == 1 else "(" + ", ".join(outs) + ")")
    dims_s = "[" + ", ".join(str(d) for d in dims.values) + "]"
    rest_s = (" " + pr.attr_dict(rest)) if rest else ""
    compact = _reduce_compact(op, block)
    if compact is not None:
        inner = block.operations[0]
        return [f"{pad}{head}{op.name}{pairs} applies {inner.name} across dimensions = {dims_s}{rest_s} : {ft}"
                + pr.trailing_loc(op.location)]
    lines = [f"{pad}{head}{op.name}{pairs} across dimensions = {dims_s}{rest_s} : {ft}"]
    saved = list(pr.counters[-1])
    names = [pr.name_arg(a) for a in block.arguments]     # numbered in block order, as MLIR
    args = []
    for i in range(n):
        a = block.arguments[i]
        b = block.arguments[i + n]
        args.append(f"({names[i]}: {type_text(a.type)}{pr.arg_loc(block, i)}, "
                    f"{names[i + n]}: {type_text(b.type)}{pr.arg_loc(block, i + n)})")
    r = pr.region(op.regions[0], indent, entry_args=False)
    pr.counters[-1][:] = saved
    lines.append(pad + " reducer" + " ".join(args) + "  " + r[0])
    lines.extend(r[1:])
    lines[-1] += pr.trailing_loc(op.location)
    return lines


def _reduce_compact(op, block):
    ops = block.operations
    if len(ops) != 2:
        return None
    inner, ret = ops
    if inner.regions or len(inner.results) != 1 or inner.attributes:
        return None
    from .. import spec as _spec
    if inner.dialect != op.dialect or not _spec.has_op(inner.name) or not _spec.op(inner.name).has_trait("commutative"):
        return None
    if list(inner.operands) != list(block.arguments):
        return None
    et = op.operands[0].type.element_type
    if inner.operands[0].type != TensorType((), et) or inner.results[0].type != inner.operands[0].type:
        return None
    if ret.name.split(".")[-1] != "return" or list(ret.operands) != list(inner.results):
        return None
    # (upstream does not look at locations: the compact form carries the reduce op's own)
    return inner


def _print_scan(pr: Printer, op: Operation, indent: int):
    seg = op.attributes.get("operandSegmentSizes")
    dim = op.attributes.get("dimension")
    if not isinstance(seg, DenseArrayAttr) or len(seg.values) != 2 or not isinstance(dim, IntegerAttr) \
            or len(op.regions) != 1:
        return None
    n_in = seg.values[0]
    pad = "  " * indent
    head = pr.name_results(op)
    vals = [pr.value(v) for v in op.operands]
    s = f"{pad}{head}{op.name}(" + ", ".join(vals[:n_in]) + ") inits (" + ", ".join(vals[n_in:]) + f") dimension={dim.value}"
    rest = [(k, v) for k, v in op.attributes.items()
            if k not in ("dimension", "operandSegmentSizes", "resultSegmentSizes")]
    if rest:
        s += "  attributes " + pr.attr_dict(rest)     # (MLIR's spacing)
    rl = pr.region(op.regions[0], indent, entry_args=True)
    ft = _ftype([v.type for v in op.operands], [r.type for r in op.results])
    lines = [s + " " + rl[0]] + rl[1:]
    lines[-1] += " : " + ft + pr.trailing_loc(op.location)
    return lines


def _print_probe(pr: Printer, op: Operation, indent: int):
    pid = op.attributes.get("probe_id")
    if not isinstance(pid, StringAttr) or len(op.operands) != 1 or len(op.results) != 1:
        return None
    rest = [(k, v) for k, v in op.attributes.items() if k != "probe_id"]
    s = f"{'  ' * indent}{pr.name_results(op)}{op.name} {pr.value(op.operands[0])}, probe_id = {escape_string(pid.value)}"
    if rest:
        s += " " + pr.attr_dict(rest)
    return [s + " : " + type_text(op.results[0].type) + pr.trailing_loc(op.location)]


def _print_unary_typed(pr: Printer, op: Operation, indent: int):
    """`name %x {attrs} : type` (interpreter.print)."""
    if len(op.operands) != 1 or op.results:
        return None
    s = f"{'  ' * indent}{op.name} {pr.value(op.operands[0])}"
    if op.attributes:
        s += " " + pr.attr_dict(list(op.attributes.items()))
    return [s + " : " + type_text(op.operands[0].type) + pr.trailing_loc(op.location)]


def _print_arith_binary(pr: Printer, op: Operation, indent: int):
    if len(op.operands) != 2 or len(op.results) != 1:
        return None
    t = op.results[0].type
    if op.operands[0].type != t or op.operands[1].type != t:
        return None
    s = f"{'  ' * indent}{pr.name_results(op)}{op.name} {pr.value(op.operands[0])}, {pr.value(op.operands[1])}"
    if op.attributes:
        s += " " + pr.attr_dict(list(op.attributes.items()))
    return [s + " : " + type_text(t) + pr.trailing_loc(op.location)]


def _print_arith_constant(pr: Printer, op: Operation, indent: int):
    v = op.attributes.get("value")
    if v is None or len(op.results) != 1 or getattr(v, "type", None) != op.results[0].type:
        return None
    rest = [(k, x) for k, x in op.attributes.items() if k != "value"]
    s = f"{'  ' * indent}{pr.name_results(op)}{op.name} "
    if rest:
        s += pr.attr_dict(rest) + " "
    return [s + pr.attr(v) + pr.trailing_loc(op.location)]


def _print_tensor_cast(pr: Printer, op: Operation, indent: int):
    if len(op.operands) != 1 or len(op.results) != 1:
        return None
    s = f"{'  ' * indent}{pr.name_results(op)}{op.name} {pr.value(op.operands[0])}"
    if op.attributes:
        s += " " + pr.attr_dict(list(op.attributes.items()))
    s += f" : {type_text(op.operands[0].type)} to {type_text(op.results[0].type)}"
    return [s + pr.trailing_loc(op.location)]


def _print_scf_for(pr: Printer, op: Operation, indent: int):
    if len(op.operands) < 3 or len(op.regions) != 1 or len(op.regions[0].blocks) != 1:
        return None
    block = op.regions[0].blocks[0]
    inits = op.operands[3:]
    if len(block.arguments) != 1 + len(inits) or len(op.results) != len(inits):
        return None
    ops = block.operations
    if not ops or ops[-1].name != "scf.yield":
        return None
    pad = "  " * indent
    lb, ub, step = (pr.value(v) for v in op.operands[:3])
    s = f"{pad}{pr.name_results(op)}scf.for"
    if "unsignedCmp" in op.attributes:
        s += " unsigned"
    s += f" {pr.name_arg(block.arguments[0])} = {lb} to {ub} step {step}"
    if inits:
        s += " iter_args(" + ", ".join(f"{pr.name_arg(a)} = {pr.value(v)}"
                                       for a, v in zip(block.arguments[1:], inits)) + ")"
        s += " -> (" + ", ".join(type_text(r.type) for r in op.results) + ")"
    s += " "
    iv_type = block.arguments[0].type
    if not (isinstance(iv_type, ElementType) and iv_type.name == "index"):
        s += f" : {type_text(iv_type)} "
    implicit = not inits and not ops[-1].operands and not ops[-1].attributes
    rl = pr.region(op.regions[0], indent, entry_args=False, omit_terminator=implicit)
    lines = [s + rl[0]] + rl[1:]
    rest = [(k, v) for k, v in op.attributes.items() if k != "unsignedCmp"]
    if rest:
        lines[-1] += " " + pr.attr_dict(rest)
    lines[-1] += pr.trailing_loc(op.location)
    return lines


def _print_tensor_insert(pr: Printer, op: Operation, indent: int):
    if len(op.operands) < 2 or len(op.results) != 1:
        return None
    idx = ", ".join(pr.value(v) for v in op.operands[2:])
    s = (f"{'  ' * indent}{pr.name_results(op)}{op.name} {pr.value(op.operands[0])} into "
         f"{pr.value(op.operands[1])}[{idx}]")
    if op.attributes:
        s += " " + pr.attr_dict(list(op.attributes.items()))
    return [s + f" : {type_text(op.operands[1].type)}" + pr.trailing_loc(op.location)]


def _print_tensor_extract(pr: Printer, op: Operation, indent: int):
    if len(op.operands) < 1 or len(op.results) != 1:
        return None
    idx = ", ".join(pr.value(v) for v in op.operands[1:])
    s = f"{'  ' * indent}{pr.name_results(op)}{op.name} {pr.value(op.operands[0])}[{idx}]"
    if op.attributes:
        s += " " + pr.attr_dict(list(op.attributes.items()))
    return [s + f" : {type_text(op.operands[0].type)}" + pr.trailing_loc(op.location)]


_CUSTOM_PRINTERS = {
    "builtin.module": _print_module,
    "func.func": _print_func,
    "func.return": _print_return,
    "func.call": _print_call,
    "stablehlo.constant": _print_constant,
    "chlo.constant": _print_constant,
    "stablehlo.while": _print_while,
    "stablehlo.reduce": _print_reduce,
    "chlo.scan": _print_scan,
    "interpreter.probe": _print_probe,
    "interpreter.print": _print_unary_typed,
    "arith.constant": _print_arith_constant,
    "tensor.cast": _print_tensor_cast,
    "tensor.insert": _print_tensor_insert,
    "tensor.extract": _print_tensor_extract,
    "scf.for": _print_scf_for,
    "scf.yield": _print_return,
}
_CUSTOM_PRINTERS.update({f"arith.{n}": _print_arith_binary for n in _custom_syntax.ARITH_BINARY})


# ---------------------------------------------------------------- format-driven printing

_ELEMENTWISE_ARITY: Dict[str, int] = {}


def _elementwise_arity(name: str) -> int:
    """The operand count of an op whose pretty format is exactly `$x (, $y)* attr-dict :
    custom<SameOperandsAndResultType>(type($x), ..., type($result))` over all its (single,
    non-variadic) operands and its one result; 0 for any other op."""
    n = _ELEMENTWISE_ARITY.get(name)
    if n is not None:
        return n
    n = 0
    from . import formats as F
    from .. import spec as _spec
    fmt = F.format_for(name)
    if fmt is not None and _spec.has_op(name):
        ospec = _spec.op(name)
        opnames = [o.name for o in ospec.operands]
        want = []
        for i, o in enumerate(opnames):
            if i:
                want.append(("lit", ","))
            want.append(("var", o))
        want += [("kw", "attr-dict"), ("lit", ":")]
        got = []
        for e in fmt[:-1]:
            if isinstance(e, F.Var) and not e.anchor:
                got.append(("var", e.name))
            elif isinstance(e, F.Lit):
                got.append(("lit", e.text))
            elif isinstance(e, F.Kw):
                got.append(("kw", e.name))
            else:
                got.append(("other", repr(e)))
        last = fmt[-1] if fmt else None
        if (opnames and got == want and len(ospec.results) == 1
                and not any(getattr(o, "variadic", False) or getattr(o, "optional", False) for o in ospec.operands)
                and not any(getattr(r, "variadic", False) for r in ospec.results)
                and isinstance(last, F.Custom) and last.name == "SameOperandsAndResultType"
                and [F._type_key(a) for a in last.args] == [f"${o}" for o in opnames] + [f"${ospec.results[0].name}"]
                and not any(a.kind in ("unit",) for a in ospec.attributes)):
            n = len(opnames)
    _ELEMENTWISE_ARITY[name] = n
    return n


def _print_with_format(pr: Printer, op: Operation, fmt, indent: int):
    from . import formats as F
    from .. import spec as _spec
    ospec = _spec.op(op.name)
    # split operands by spec operand groups
    groups = _operand_groups(op, ospec)
    if groups is None:
        return None
    used_attrs = set(_format_attr_names(ospec, fmt))
    pad = "  " * indent
    saved_counters = [list(c) for c in pr.counters]
    # (values are named up front when a whole module prints; only a lone op names as it goes)
    saved_names = None if all(id(r) in pr.names for r in op.results) else dict(pr.names)
    saved_dialects = list(pr.default_dialect)
    head = pr.name_results(op)
    out: List[str] = []      # tokens
    region_lines: List[List[str]] = []

    def emit(tok, kind="elem"):
        out.append((kind, tok))

    def types_of(key):
        if key == "operands":
            return [v.type for v in op.operands]
        if key == "results":
            return [r.type for r in op.results]
        kind, s = F._kind_of(ospec, key[1:])
        if kind == "operand":
            return [v.type for v in groups[key[1:]]]
        if kind == "result":
            names = [r.name for r in ospec.results]
            if len(names) == len(op.results):
                return [op.results[names.index(key[1:])].type]
            if len(names) == 1:
                return [r.type for r in op.results]
            raise _Fallback()
        raise ValueError(key)

    def anchor_present(elems):
        for e in elems:
            if getattr(e, "anchor", False):
                if isinstance(e, F.Var):
                    kind, s = F._kind_of(ospec, e.name)
                    if kind == "operand":
                        return bool(groups[e.name])
                    if kind == "attr":
                        return e.name in op.attributes
                    if kind == "region":
                        return bool(op.regions)
                if isinstance(e, F.TypeDir):
                    return bool(types_of(F._type_key(e.arg)))
                if isinstance(e, F.Kw) and e.name == "operands":
                    return bool(op.operands)
        return False

    def walk(elems):
        for e in elems:
            if isinstance(e, F.Lit):
                if e.text in ("", " "):
                    emit(e.text, "space")
                else:
                    emit(e.text, "lit")
            elif isinstance(e, F.Var):
                kind, s = F._kind_of(ospec, e.name)
                if kind == "operand":
                    emit(", ".join(pr.value(v) for v in groups[e.name]))
                elif kind == "attr":
                    used_attrs.add(e.name)
                    if e.name not in op.attributes:
                        raise _Fallback()        # the pretty form cannot leave it out
                    a = op.attributes[e.name]
                    if s.kind == "string" and isinstance(a, StringAttr) and a.type is not None:
                        raise _Fallback()        # a typed string has no pretty spelling here
                    emit(F.print_attr_value(pr, op.name, s, a))
                elif kind == "region":
                    idx = [r.name for r in ospec.regions].index(e.name)
                    if idx < len(op.regions):
                        region_lines.append(pr.region(op.regions[idx], indent, entry_args=True))
                        emit("\x00region%d" % (len(region_lines) - 1))
            elif isinstance(e, F.Kw):
                if e.name == "operands":
                    emit(", ".join(pr.value(v) for v in op.operands))
                elif e.name in ("attr-dict", "attr-dict-with-keyword"):
                    # (ODS leaves out attributes that hold their default value)
                    rest = [(k, v) for k, v in op.attributes.items() if k not in used_attrs and k not in _elided(elems_all)
                            and not is_default(op.name, k, v)]
                    text = ""
                    if rest:
                        text = ("attributes " if e.name == "attr-dict-with-keyword" else "") + pr.attr_dict(rest)
                    emit(text, "attrdict")
            elif isinstance(e, F.TypeDir):
                ts = types_of(F._type_key(e.arg))
                emit(", ".join(type_text(t) for t in ts))
            elif isinstance(e, F.FuncType):
                ins = types_of(F._type_key(e.inputs))
                outs = types_of(F._type_key(e.results))
                emit(_ftype(ins, outs))
            elif isinstance(e, F.Custom):
                fn = CUSTOM_PRINT.get(e.name)
                if fn is None:
                    raise _Fallback()
                s = fn(pr, op, ospec, groups, e.args, types_of, used_attrs)
                if s is None:
                    raise _Fallback()
                emit(s)
            elif isinstance(e, F.Optional_):
                if anchor_present(e.elems):
                    walk(e.elems)
                else:
                    walk(e.else_elems)

    elems_all = fmt
    try:
        walk(fmt)
    except _Fallback:
        pr.counters[:] = saved_counters
        if saved_names is not None:
            pr.names = saved_names
        pr.default_dialect[:] = saved_dialects
        return None
    # join the pieces with MLIR's spacing rules for declarative formats
    s = f"{pad}{head}{op.name}"
    emit_space, last_punct = True, False
    for kind, tok in out:
        if kind == "lit":
            if emit_space and _space_before(tok, last_punct):
                s += " "
            s += tok
            emit_space = len(tok) != 1 or tok not in "<({["
            last_punct = tok[0] != "_" and not tok[0].isalpha()
        elif kind == "space":
            if tok:
                s += " "
            last_punct = not tok
            emit_space = False
        elif kind == "attrdict":
            if tok:
                s += " " + tok
            last_punct = False
        else:
            if emit_space:
                s += " "
                last_punct = False
            emit_space = True
            s += tok
    lines = [s]
    if region_lines:
        # substitute region placeholders
        final = []
        text = s
        parts = re.split("(\x00region\\d+)", text)
        cur = ""
        for part in parts:
            m = re.match("\x00region(\\d+)", part)
            if m:
                rl = region_lines[int(m.group(1))]
                cur += rl[0]
                final.append(cur)
                final.extend(rl[1:-1])
                cur = rl[-1]
            else:
                cur += part
        final.append(cur)
        lines = final
    lines[-1] += pr.trailing_loc(op.location)
    return lines


def _space_before(lit: str, last_punct: bool) -> bool:
    """Whether MLIR puts a space before a format literal."""
    if len(lit) != 1 and lit != "->":
        return True
    if last_punct:
        return lit[0] not in ">)}],"
    return lit[0] not in "<>(){}[],"


def _elided(fmt):
    return set()


_FORMAT_ATTRS: dict = {}


def _format_attr_names(ospec, fmt):
    """The attributes an op's format spells out itself (kept out of its attr-dict, wherever the
    attr-dict stands in the format)."""
    names = _FORMAT_ATTRS.get(ospec.name)
    if names is None:
        from . import formats as F
        kinds = F._kinds(ospec)
        names = set()

        def visit(elems):
            for e in elems:
                if isinstance(e, F.Var) and kinds.get(e.name, ("",))[0] == "attr":
                    names.add(e.name)
                elif isinstance(e, F.Custom):
                    for a in e.args:
                        while isinstance(a, (F.TypeDir, F.RefDir)):
                            a = a.arg
                        if isinstance(a, F.Var) and kinds.get(a.name, ("",))[0] == "attr":
                            names.add(a.name)
                elif isinstance(e, F.Optional_):
                    visit(e.elems)
                    visit(e.else_elems)
        visit(fmt)
        names = _FORMAT_ATTRS[ospec.name] = frozenset(names)
    return names


class _Fallback(Exception):
    pass


def _ftype(ins, outs) -> str:
    s = "(" + ", ".join(type_text(t) for t in ins) + ") -> "
    if len(outs) == 1 and not isinstance(outs[0], FunctionType):
        return s + type_text(outs[0])
    return s + "(" + ", ".join(type_text(t) for t in outs) + ")"


def _operand_groups(op, ospec):
    ops = list(op.operands)
    specs = list(ospec.operands)
    n_var = sum(1 for o in specs if o.variadic or o.optional)
    fixed = len(specs) - n_var
    if n_var > 1:
        return None if len(ops) != len(specs) else {o.name: [v] for o, v in zip(specs, ops)}
    extra = len(ops) - fixed
    if extra < 0:
        return None
    groups = {}
    i = 0
    for o in specs:
        if o.variadic or o.optional:
            if o.optional and extra > 1:
                return None
            groups[o.name] = ops[i:i + extra]
            i += extra
        else:
            groups[o.name] = [ops[i]]
            i += 1
    return groups


# --- custom directives (print)

def _pc_same_type(pr, op, ospec, groups, args, types_of, used):
    from . import formats as F
    keys = [F._type_key(a) for a in args]
    ins = []
    for k in keys[:-1]:
        ins.extend(types_of(k))
    res = types_of(keys[-1])
    if len(res) != 1:
        return None
    if all(t == res[0] for t in ins):
        return type_text(res[0])
    return _ftype(ins, res)


def _pc_variadic_same(pr, op, ospec, groups, args, types_of, used):
    from . import formats as F
    keys = [F._type_key(a) for a in args if not isinstance(a, F.RefDir)]
    ins = types_of(keys[0])
    res = types_of(keys[-1])
    if len(res) == 1 and all(t == res[0] for t in ins):
        return type_text(res[0])
    return _ftype(ins, res)


def _pc_select(pr, op, ospec, groups, args, types_of, used):
    from . import formats as F
    keys = [F._type_key(a) for a in args]
    pred, t, f, r = (types_of(k)[0] for k in keys)
    if t == r and f == r:
        return f"{type_text(pred)}, {type_text(r)}"
    return _ftype([pred, t, f], [r])


def _pc_complex(pr, op, ospec, groups, args, types_of, used):
    from . import formats as F
    from .formats import _real_of
    keys = [F._type_key(a) for a in args]
    l, r, res = (types_of(k)[0] for k in keys)
    if isinstance(res, TensorType) and l == _real_of(res) and r == _real_of(res):
        return type_text(res)
    return _ftype([l, r], [res])


def _pc_tuple(pr, op, ospec, groups, args, types_of, used):
    return str(op.results[0].type)


def _pc_pairwise(pr, op, ospec, groups, args, types_of, used):
    return ", ".join(type_text(v.type) for v in op.operands)


def _pc_var_operand_attr(pr, op, ospec, groups, args, types_of, used):
    vals = groups[args[0].name]
    return "".join(f"{pr.value(v)}, " for v in vals).rstrip(" ") if vals else ""


def _pc_target(pr, op, ospec, groups, args, types_of, used):
    used.add(args[0].name)
    a = op.attributes.get(args[0].name)
    if not isinstance(a, StringAttr) or a.type is not None:
        return None
    return pr.symbol(a.value)


def _pc_slice(pr, op, ospec, groups, args, types_of, used):
    vals = []
    for a in args:
        used.add(a.name)
        x = op.attributes.get(a.name)
        if not isinstance(x, DenseArrayAttr):
            return None
        vals.append(x.values)
    if not (len(vals[0]) == len(vals[1]) == len(vals[2])):
        return None
    return "[" + ", ".join(f"{s}:{l}" + (f":{st}" if st != 1 else "") for s, l, st in zip(*vals)) + "]"


def _pc_exp_mant(pr, op, ospec, groups, args, types_of, used):
    e = op.attributes.get(args[0].name)
    m = op.attributes.get(args[1].name)
    used.update({args[0].name, args[1].name})
    if not isinstance(e, IntegerAttr) or not isinstance(m, IntegerAttr) or e.value < 0 or m.value < 0:
        return None
    return f"e{e.value}m{m.value}"


def _pc_conv(pr, op, ospec, groups, args, types_of, used):
    used.add(args[0].name)
    a = op.attributes.get(args[0].name)
    if not isinstance(a, StructAttr):
        return None
    s = pr.struct(a)
    if "<raw" in s:
        return None
    return s[len("#stablehlo.conv<"):-1]


def _pc_window(pr, op, ospec, groups, args, types_of, used):
    parts = []
    for key, a in zip(("stride", "pad", "lhs_dilate", "rhs_dilate", "reverse"), args):
        used.add(a.name)
        x = op.attributes.get(a.name)
        if x is None:
            continue
        if key == "pad":
            if not isinstance(x, DenseElementsAttr) or x.array.ndim != 2:
                return None
            parts.append("pad = [" + ", ".join(f"[{int(r[0])}, {int(r[1])}]" for r in x.array) + "]")
        elif isinstance(x, DenseArrayAttr):
            vals = ", ".join(("true" if v else "false") if key == "reverse" else str(v) for v in x.values)
            parts.append(f"{key} = [{vals}]")
        else:
            return None
    return "{" + ", ".join(parts) + "}" if False else ", ".join(parts)


def _pc_dot(pr, op, ospec, groups, args, types_of, used):
    used.add(args[0].name)
    a = op.attributes.get(args[0].name)
    if not isinstance(a, StructAttr):
        return None
    f = dict(a.fields)
    s = ""
    fmt = lambda t: "[" + ", ".join(str(x) for x in t) + "]"
    if f["lhs_batching_dimensions"] or f["rhs_batching_dimensions"]:
        s += f"batching_dims = {fmt(f['lhs_batching_dimensions'])} x {fmt(f['rhs_batching_dimensions'])}, "
    s += f"contracting_dims = {fmt(f['lhs_contracting_dimensions'])} x {fmt(f['rhs_contracting_dimensions'])}"
    return s


def _precision_s(x):
    if not isinstance(x, ArrayAttr) or not all(isinstance(e, EnumAttr) for e in x.elements):
        return None
    return "precision = [" + ", ".join(e.value for e in x.elements) + "]"


def _pc_precision(pr, op, ospec, groups, args, types_of, used):
    used.add(args[0].name)
    x = op.attributes.get(args[0].name)
    if x is None:
        return ""
    s = _precision_s(x)
    return None if s is None else ", " + s


def _pc_precision_alg(pr, op, ospec, groups, args, types_of, used):
    used.update({args[0].name, args[1].name})
    s = ""
    x = op.attributes.get(args[0].name)
    if x is not None:
        ps = _precision_s(x)
        if ps is None:
            return None
        s += ", " + ps
    y = op.attributes.get(args[1].name)
    if y is not None:
        if not isinstance(y, StructAttr):
            return None
        s += ", algorithm = " + pr.struct(y)[len("#stablehlo.dot_algorithm"):]
    return s


CUSTOM_PRINT = {
    "SameOperandsAndResultType": _pc_same_type,
    "VariadicSameOperandsAndResultType": _pc_variadic_same,
    "SelectOpType": _pc_select,
    "ComplexOpType": _pc_complex,
    "TupleOpType": _pc_tuple,
    "PairwiseOpType": _pc_pairwise,
    "VariadicOperandWithAttribute": _pc_var_operand_attr,
    "CustomCallTarget": _pc_target,
    "SliceRanges": _pc_slice,
    "ExponentMantissa": _pc_exp_mant,
    "ConvolutionDimensions": _pc_conv,
    "WindowAttributes": _pc_window,
    "DotDimensionNumbers": _pc_dot,
    "PrecisionConfig": _pc_precision,
    "PrecisionConfigAndAlgorithm": _pc_precision_alg,
}


_ATTR_PRINTER = Printer()


def print_module(module: Module, *, generic: bool = False, strip_debuginfo: bool = False,
                 debuginfo: bool = False) -> str:
    """MLIR text of `module`. By default explicit locations print inline; `debuginfo=True`
    prints as MLIR does with -mlir-print-debuginfo (every op and block argument located, the
    positions of text without `loc(...)` included, `#loc` aliases); `strip_debuginfo` prints
    none."""
    return Printer(module, generic=generic, strip_debuginfo=strip_debuginfo,
                   debuginfo=debuginfo).print_module()
