"""Ops in their spec'd pretty form: each op's `syntax.format` (compiled by format_ast.py) is
turned once into a plan of parse steps (`parse_with_format`), and walked by
`print_with_format` to write the op back; attribute values in their stripped form are read
and written side by side (`parse_attr_value` / `print_attr_value`). The `custom<...>`
directives live in directives.py."""
from __future__ import annotations

import re
from typing import List

from .. import spec as _spec
from ..ir.attributes import BoolAttr, DenseArrayAttr, EnumAttr, FloatAttr, IntegerAttr, StringAttr
from ..ir.core import Operation
from ..ir.defaults import is_default
from ..ir.floats import format_float
from ..ir.types import ELEMENT_TYPES, FunctionType
from ..ir.wellformed import enum_cases
from .directives import DIRECTIVES
from .lexer import INTEGER
from .format_ast import (Custom, FuncType, Kw, Lit, Optional_, RefDir, TypeDir, Var, _is_variadic_key,
                         _kind_of, _kinds, _type_key)
from .print_types import ftype, type_text


# ---------------------------------------------------------------- attribute kinds

ENUM_KINDS = {"comparison_direction": "comparison_direction", "comparison_type": "comparison_type",
              "fft_type": "fft_type", "rng_algorithm": "rng_algorithm",
              "rng_distribution": "rng_distribution", "transpose": "transpose",
              "custom_call_api_version": "custom_call_api_version"}
_INT_KINDS = {"i64": "i64", "i32": "i32", "ui64": "ui64", "ui32": "ui32", "i1": "i1"}


def _enum_dialect(op_name):
    return "chlo" if op_name.startswith("chlo.") else "stablehlo"


def parse_attr_value(p, op_name: str, aspec):
    """Parse an attribute written in its stripped form inside a pretty format."""
    sc = p.sc
    kind = aspec.kind
    if kind in ENUM_KINDS:
        if sc.peek("#"):
            return p.parse_attribute()
        sc.ws()
        vpos = sc.pos
        value = sc.bare_id("enum value")
        cases = enum_cases(ENUM_KINDS[kind])
        if cases is not None and value not in cases:
            raise sc.error(f"expected one of {', '.join(sorted(cases))} for {kind}", vpos)
        return EnumAttr(_enum_dialect(op_name), ENUM_KINDS[kind], value)
    if kind in _INT_KINDS:
        if kind == "i1":
            if sc.accept_keyword("true"):
                return BoolAttr(True)
            if sc.accept_keyword("false"):
                return BoolAttr(False)
        t = ELEMENT_TYPES[_INT_KINDS[kind]]
        m = sc.match(INTEGER)
        if not m:
            raise sc.error("expected integer")
        return IntegerAttr(p._int_in_range(m.group(0), m.start(), t), t)
    if kind in ("f32", "f64"):
        return FloatAttr(p._float_literal(), ELEMENT_TYPES[kind])
    if kind == "string" and sc.peek('"'):    # untyped: a following `:` starts the op's type
        return StringAttr(sc.string())
    if kind == "dense_i64_array" and sc.peek("["):
        return DenseArrayAttr(ELEMENT_TYPES["i64"], tuple(sc.delimited("[", "]", sc.i64)))
    if kind == "dense_bool_array" and sc.peek("["):
        i1 = ELEMENT_TYPES["i1"]
        return DenseArrayAttr(i1, tuple(sc.delimited("[", "]", lambda: p._scalar_for(i1))))
    a = p.parse_attribute()
    if kind == "i1" and isinstance(a, BoolAttr):
        return a
    return a


def print_attr_value(pr, op_name: str, aspec, attr) -> str:
    kind = aspec.kind
    if kind in ENUM_KINDS and isinstance(attr, EnumAttr):
        return attr.value
    if kind in _INT_KINDS and isinstance(attr, IntegerAttr):
        return str(attr.value)
    if kind in _INT_KINDS and isinstance(attr, BoolAttr):
        return "true" if attr.value else "false"
    if kind in ("f32", "f64") and isinstance(attr, FloatAttr):
        return format_float(attr.value, attr.type)
    if kind in ("dense_i64_array", "dense_bool_array") and isinstance(attr, DenseArrayAttr):
        return "[" + ", ".join(pr.scalar(v, attr.element_type) for v in attr.values) + "]"
    return pr.attr(attr)


# ---------------------------------------------------------------- parsing


class _State:
    __slots__ = ("spec", "operands", "attrs", "types", "regions", "all_operands", "attr_dict_at")

    def __init__(self, op_spec):
        self.spec = op_spec
        self.operands = {}      # name -> list of Values
        self.attrs = {}
        self.types = {}         # var name or 'operands'/'results' -> list of types
        self.regions = {}
        self.all_operands = None
        self.attr_dict_at = None    # (location, names) of the attr-dict, when spelled

    def operand_names(self):
        return [o.name for o in self.spec.operands]

    def result_names(self):
        return [r.name for r in self.spec.results]


# Each op's format is compiled once into a "plan": a list of step functions `step(p, st)`
# specialised to the op's spec (no per-op interpretation of the format at parse time).

_PLANS: dict = {}


def _plan(op_name: str, fmt):
    plan = _PLANS.get(op_name)
    if plan is None:
        op_spec = _spec.op(op_name)
        steps = _compile_steps(op_spec, fmt, op_name)
        results = tuple((r.name, "$" + r.name, r.variadic) for r in op_spec.results)
        operand_names = tuple(o.name for o in op_spec.operands)
        region_names = tuple(r.name for r in op_spec.regions)
        plan = _PLANS[op_name] = (op_spec, steps, results, operand_names, region_names)
    return plan


def _check_operand_types(p, operands, declared) -> None:
    """The operand types a format spells must be those of the values named (as MLIR resolves
    operands against their types)."""
    if declared is not None:
        p.check_operand_types(operands, declared)


def parse_with_format(p, op_name: str, fmt) -> Operation:
    op_spec, steps, result_specs, operand_names, region_names = _plan(op_name, fmt)
    st = _State(op_spec)
    for step in steps:
        step(p, st)
    # operands in spec order
    if st.all_operands is not None:
        operands = st.all_operands
    else:
        got = st.operands
        if len(operand_names) == 1:
            operands = got.get(operand_names[0], [])
        else:
            operands = []
            for name in operand_names:
                v = got.get(name)
                if v:
                    operands.extend(v)
    # result types
    types = st.types
    if "operands" in types:
        _check_operand_types(p, operands, types["operands"])
    elif st.all_operands is None:
        for name in operand_names:
            if "$" + name in types:
                _check_operand_types(p, st.operands.get(name, []), types["$" + name])
    elif operand_names and all("$" + name in types for name in operand_names):
        _check_operand_types(p, operands, [t for name in operand_names for t in types["$" + name]])
    results = types.get("results")
    if results is None:
        results = []
        for name, key, variadic in result_specs:
            t = types.get(key)
            if t is not None:
                results.extend(t)
            elif not variadic:
                raise p.sc.error(f"cannot infer the type of result '{name}' of {op_name}")
    regions = [st.regions[r] for r in region_names if r in st.regions] if region_names else None
    op = Operation(op_name, operands, results, st.attrs, regions)
    op.attr_dict_source = st.attr_dict_at
    return op


def _compile_peek(op_spec, elems):
    """A function telling whether an optional group (starting with `elems`) starts here."""
    for e in elems:
        if isinstance(e, Lit):
            t = e.text
            if t.strip() == "":
                continue
            if t[0].isalpha():
                return lambda sc: sc.peek_keyword(t)
            return lambda sc: sc.peek(t)
        if isinstance(e, Var):
            kind, s = _kind_of(op_spec, e.name)
            if kind == "operand":
                return lambda sc: sc.peek("%")
            if kind == "region":
                return lambda sc: sc.peek("(") or sc.peek("{")
            if kind == "attr":
                if s.kind in ENUM_KINDS:
                    def peek_enum(sc):
                        sc.ws()
                        return bool(_ENUM_START.match(sc.s, sc.pos))
                    return peek_enum
                return lambda sc: not (sc.peek(":") or sc.peek("{") or sc.peek(")"))
        if isinstance(e, Kw) and e.name == "operands":
            return lambda sc: sc.peek("%")
        return lambda sc: False
    return lambda sc: False


_ENUM_START = re.compile(r"[A-Za-z_#]")


def _compile_steps(op_spec, elems, op_name) -> list:
    steps = []
    for e in elems:
        step = _compile_step(op_spec, e, op_name)
        if step is not None:
            steps.append(step)
    return steps


def _compile_step(op_spec, e, op_name):
    if isinstance(e, Lit):
        t = e.text
        if t.strip() == "":
            return None
        if t[0].isalpha():
            return lambda p, st: p.sc.expect_keyword(t)
        return lambda p, st: p.sc.expect(t)
    if isinstance(e, Var):
        name = e.name
        kind, s = _kind_of(op_spec, name)
        if kind == "operand":
            if s.variadic or s.optional:
                def operand_list(p, st):
                    st.operands[name] = p.parse_value_list()
                return operand_list

            def operand(p, st):
                st.operands[name] = [p.parse_value_use()]
            return operand
        if kind == "attr":
            def attr(p, st):
                st.attrs[name] = parse_attr_value(p, op_name, s)
            return attr
        if kind == "region":
            if s.variadic:
                def regions(p, st):
                    regs = [p.parse_region()]
                    while p.sc.accept(","):
                        regs.append(p.parse_region())
                    st.regions[name] = regs[0]
                return regions

            def region(p, st):
                st.regions[name] = p.parse_region()
            return region

        def bad(p, st):
            raise p.sc.error(f"format of {op_name} uses result ${name} directly")
        return bad
    if isinstance(e, Kw):
        if e.name == "operands":
            def all_operands(p, st):
                st.all_operands = p.parse_value_list()
            return all_operands
        if e.name == "attr-dict-with-keyword":
            def attr_dict_kw(p, st):
                if p.sc.accept_keyword("attributes"):
                    st.attrs.update(p.parse_attr_dict_body().entries)
            return attr_dict_kw
        if e.name == "attr-dict":
            def attr_dict(p, st):
                if p.sc.peek("{"):
                    at = p.sc.location()
                    entries = p.parse_attr_dict_body().entries
                    st.attrs.update(entries)
                    st.attr_dict_at = (at, frozenset(dict(entries)))
            return attr_dict
        if e.name == "regions":
            def no_regions(p, st):
                raise p.sc.error("'regions' directive not supported")
            return no_regions
        return None
    if isinstance(e, TypeDir):
        key = _type_key(e.arg)
        if _is_variadic_key(op_spec, key):
            def type_list(p, st):
                sc = p.sc
                if sc.peek(")") or sc.peek("}") or sc.at_end() or sc.peek("loc("):
                    st.types[key] = []
                else:
                    st.types[key] = p.parse_type_list()
            return type_list

        def one_type(p, st):
            st.types[key] = [p.parse_type()]
        return one_type
    if isinstance(e, FuncType):
        kin, kout = _type_key(e.inputs), _type_key(e.results)

        def func_type(p, st):
            ft = p.parse_type()
            if not isinstance(ft, FunctionType):
                raise p.sc.error("expected function type")
            st.types[kin] = list(ft.inputs)
            st.types[kout] = list(ft.results)
        return func_type
    if isinstance(e, Custom):
        d = DIRECTIVES.get(e.name)
        fn = d.parse if d is not None else None
        args = e.args
        if fn is None:
            def unsupported(p, st):
                raise p.sc.error(f"custom directive {e.name} not supported")
            return unsupported
        return lambda p, st: fn(p, st, args, op_name)
    if isinstance(e, Optional_):
        peek = _compile_peek(op_spec, e.elems)
        then_steps = _compile_steps(op_spec, e.elems, op_name)
        else_steps = _compile_steps(op_spec, e.else_elems, op_name)

        def optional(p, st):
            for step in (then_steps if peek(p.sc) else else_steps):
                step(p, st)
        return optional
    raise ValueError(f"unexpected format element {e!r}")


def print_with_format(pr, op: Operation, fmt, indent: int):
    """`op` in its spec'd pretty form with the printer `pr`; None where the op cannot be
    written in it (the printer then writes the generic form)."""
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
        kind, s = _kind_of(ospec, key[1:])
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
                if isinstance(e, Var):
                    kind, s = _kind_of(ospec, e.name)
                    if kind == "operand":
                        return bool(groups[e.name])
                    if kind == "attr":
                        return e.name in op.attributes
                    if kind == "region":
                        return bool(op.regions)
                if isinstance(e, TypeDir):
                    return bool(types_of(_type_key(e.arg)))
                if isinstance(e, Kw) and e.name == "operands":
                    return bool(op.operands)
        return False

    def walk(elems):
        for e in elems:
            if isinstance(e, Lit):
                if e.text in ("", " "):
                    emit(e.text, "space")
                else:
                    emit(e.text, "lit")
            elif isinstance(e, Var):
                kind, s = _kind_of(ospec, e.name)
                if kind == "operand":
                    emit(", ".join(pr.value(v) for v in groups[e.name]))
                elif kind == "attr":
                    used_attrs.add(e.name)
                    if e.name not in op.attributes:
                        raise _Fallback()        # the pretty form cannot leave it out
                    a = op.attributes[e.name]
                    if s.kind == "string" and isinstance(a, StringAttr) and a.type is not None:
                        raise _Fallback()        # a typed string has no pretty spelling here
                    emit(print_attr_value(pr, op.name, s, a))
                elif kind == "region":
                    idx = [r.name for r in ospec.regions].index(e.name)
                    if idx < len(op.regions):
                        region_lines.append(pr.region(op.regions[idx], indent, entry_args=True))
                        emit("\x00region%d" % (len(region_lines) - 1))
            elif isinstance(e, Kw):
                if e.name == "operands":
                    emit(", ".join(pr.value(v) for v in op.operands))
                elif e.name in ("attr-dict", "attr-dict-with-keyword"):
                    # (ODS leaves out attributes that hold their default value)
                    rest = [(k, v) for k, v in op.attributes.items() if k not in used_attrs
                            and not is_default(op.name, k, v)]
                    text = ""
                    if rest:
                        text = ("attributes " if e.name == "attr-dict-with-keyword" else "") + pr.attr_dict(rest)
                    emit(text, "attrdict")
            elif isinstance(e, TypeDir):
                ts = types_of(_type_key(e.arg))
                emit(", ".join(type_text(t) for t in ts))
            elif isinstance(e, FuncType):
                ins = types_of(_type_key(e.inputs))
                outs = types_of(_type_key(e.results))
                emit(ftype(ins, outs))
            elif isinstance(e, Custom):
                d = DIRECTIVES.get(e.name)
                fn = d.print if d is not None else None
                if fn is None:
                    raise _Fallback()
                s = fn(pr, op, ospec, groups, e.args, types_of, used_attrs)
                if s is None:
                    raise _Fallback()
                emit(s)
            elif isinstance(e, Optional_):
                if anchor_present(e.elems):
                    walk(e.elems)
                else:
                    walk(e.else_elems)

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


_FORMAT_ATTRS: dict = {}


def _format_attr_names(ospec, fmt):
    """The attributes an op's format spells out itself (kept out of its attr-dict, wherever the
    attr-dict stands in the format)."""
    names = _FORMAT_ATTRS.get(ospec.name)
    if names is None:
        kinds = _kinds(ospec)
        names = set()

        def visit(elems):
            for e in elems:
                if isinstance(e, Var) and kinds.get(e.name, ("",))[0] == "attr":
                    names.add(e.name)
                elif isinstance(e, Custom):
                    for a in e.args:
                        while isinstance(a, (TypeDir, RefDir)):
                            a = a.arg
                        if isinstance(a, Var) and kinds.get(a.name, ("",))[0] == "attr":
                            names.add(a.name)
                elif isinstance(e, Optional_):
                    visit(e.elems)
                    visit(e.else_elems)
        visit(fmt)
        names = _FORMAT_ATTRS[ospec.name] = frozenset(names)
    return names


class _Fallback(Exception):
    pass


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
