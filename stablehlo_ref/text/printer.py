"""The printer: MLIR's pretty form (ops with a declarative format through formats.py, the
hand-written syntaxes of custom_syntax.py, the custom directives of directives.py) or the
generic form for every op; attributes, locations (inline or as `#loc` aliases) and dense
literals. Value names come from names.py, type spellings from print_types.py."""
from __future__ import annotations

import re
from typing import Dict, List

import numpy as np

from .. import spec as _spec
from ..ir.attributes import (AffineMapAttr, ArrayAttr, Attribute, BoolAttr, CallSiteLoc,
                             DenseArrayAttr, DenseElementsAttr, DenseResourceAttr, DictAttr,
                             ComplexAttr, EnumAttr, FileLineColLoc, FloatAttr, FusedLoc, IntegerAttr, Location,
                             NameLoc, OpaqueAttr, StringAttr, StructAttr, SymbolRefAttr, TypeAttr,
                             UnitAttr, UnknownLoc)
from ..ir.core import Module, Operation
from ..ir.sdy import SdyAttr
from ..ir.defaults import is_default
from ..ir.floats import format_complex_part, format_float
from ..ir.wellformed import shape_problem
from ..ir.locations import arg_location, op_location
from ..ir.types import ELEMENT_TYPES, ElementType, Type
from . import dense
from . import format_ast as F
from .names import mlir_value_names
from . import print_types as _print_types
from .print_types import escape_string, ftype, type_text
from .conv_dims import print_conv_dims
from .custom_syntax import OP_SYNTAX
from .format_ast import format_for
from .formats import print_with_format
from .syntax_sdy import print_attr as print_sdy_attr

_BARE_SYMBOL = re.compile(r"[A-Za-z_][A-Za-z0-9_$.\-]*\Z")
_BARE_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_$.]*\Z")
_LARGE = 100   # dense literals with more elements print in hex form (MLIR's default)


def _needs_loc(loc) -> bool:
    return loc is not None and not isinstance(loc, UnknownLoc)


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


def _generic_only(root: Operation) -> frozenset:
    """ids of ops that print in the generic form whatever their pretty form (both invalid, but
    parseable in generic form): terminators that are not the last op of their block (their
    pretty form may end in an optional operand list that would take the next op's results),
    and ops using a value before the op that defines it (a forward reference; only the
    generic form spells the type the parser needs for it)."""
    from .. import spec
    terms = spec.terminators()
    out = set()
    seen = set()
    stack = [(root, False)]
    while stack:
        op, done = stack.pop()
        if done is True:
            seen.update(map(id, op.results))
            continue
        if done is not False:       # a block starts: its arguments are defined from here on
            seen.update(map(id, done.arguments))
            continue
        for v in op.operands:
            if id(v) not in seen:
                out.add(id(op))
                break
        stack.append((op, True))
        for region in reversed(op.regions):
            for block in reversed(region.blocks):
                ops = block.operations
                for i in range(len(ops) - 1, -1, -1):
                    if i < len(ops) - 1 and ops[i].name in terms:
                        out.add(id(ops[i]))
                    stack.append((ops[i], False))
                stack.append((None, block))
    return frozenset(out)


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
        self._midblock: frozenset = frozenset()
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
        if a.is_splat:      # one element, or all equal (MLIR keeps such attributes as splats)
            return self.scalar(arr.flat[0], et)      # (no copy of a broadcast splat)
        flat = arr.reshape(-1)
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
                text = format_float(a.value, t)
                if not text.startswith(("0x", "-0x")):  # inf/nan print as hex bits, which
                    return text                         # would read back as an integer: keep `: f64`
        return self.attr(a)

    def attr(self, a: Attribute) -> str:
        if isinstance(a, IntegerAttr):
            t = a.type
            if isinstance(t, ElementType) and t.is_bool:
                return "true" if a.value else "false"
            return f"{a.value} : {t}" if t is not None else str(a.value)
        if isinstance(a, FloatAttr):
            return f"{format_float(a.value, a.type)} : {type_text(a.type)}"
        if isinstance(a, ComplexAttr):
            part = a.part_type
            return (f"#complex.number<:{part} {format_complex_part(a.real, part)}, "
                    f"{format_complex_part(a.imag, part)}> : {type_text(a.type)}")
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
        if isinstance(a, SdyAttr):
            return print_sdy_attr(a)
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
            child = self._loc_body(loc.child) if loc.child is not None and not isinstance(loc.child, UnknownLoc) else None
            # (a child that prints as `unknown`, such as an empty fused location read from bytes,
            # reads back as no child: it prints as none)
            return escape_string(loc.name) + (f"({child})" if child not in (None, "unknown") else "")
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
        self._midblock = _generic_only(m.op)
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
        # an op not built as its spec says (a wrong attribute kind, from bytes or generic text)
        # prints in the generic form, which holds anything and parses back to the same op
        if not self.generic and shape_problem(op) is None and id(op) not in self._midblock:
            syntax = OP_SYNTAX.get(op.name)
            if syntax is not None:
                # a hand-written syntax is the op's only pretty form: None means generic
                r = syntax.print(self, op, indent)
                return r if r is not None else self.generic_op(op, indent)
            n = _elementwise_arity(op.name)
            if n and len(op.operands) == n and len(op.results) == 1:
                return [self._elementwise(op, pad)]
            fmt = format_for(op.name)
            if fmt is not None:
                r = print_with_format(self, op, fmt, indent)
                if r is not None:
                    return r
        return self.generic_op(op, indent)

    def _elementwise(self, op: Operation, pad: str) -> str:
        """`$a, $b attr-dict : custom<SameOperandsAndResultType>(...)`, the format most ops
        share, printed without walking the format."""
        res = op.results[0].type
        ins = [v.type for v in op.operands]
        t = type_text(res) if all(x == res for x in ins) else ftype(ins, [res])
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
        inherent, discard = _split_attrs(op)
        s = f'{pad}{head}{escape_string(op.name)}({ops_s})'
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
    names = _BUILTIN_PROPERTIES.get(op.name)
    if names is None:
        names = set()
        if _spec.has_op(op.name):
            names = {a.name for a in _spec.op(op.name).attributes} | _SEGMENT_SIZES
    inherent = [(k, v) for k, v in op.attributes.items() if k in names]
    discard = [(k, v) for k, v in op.attributes.items() if k not in names]
    return inherent, discard


# ---------------------------------------------------------------- hand-written printers


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


# --- custom directives (print)


_print_types.attribute_text = Printer().attr


def print_module(module: Module, *, generic: bool = False, strip_debuginfo: bool = False,
                 debuginfo: bool = False) -> str:
    """MLIR text of `module`. By default explicit locations print inline; `debuginfo=True`
    prints as MLIR does with -mlir-print-debuginfo (every op and block argument located, the
    positions of text without `loc(...)` included, `#loc` aliases); `strip_debuginfo` prints
    none."""
    from ..deep import call_with_room
    return call_with_room(lambda: Printer(module, generic=generic, strip_debuginfo=strip_debuginfo,
                                          debuginfo=debuginfo).print_module())
