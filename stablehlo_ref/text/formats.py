"""Pretty syntax driven by the spec: each op's `syntax.format` (an MLIR assembly-format string)
is compiled once into a small element list that both the parser and the printer walk. Named
`custom<...>` directives are implemented here, one small function pair each."""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import List, Optional, Tuple

import numpy as np

from .. import spec as _spec
from ..ir.attributes import (ArrayAttr, BoolAttr, DenseArrayAttr, DenseElementsAttr, EnumAttr,
                             FloatAttr, IntegerAttr, StringAttr, StructAttr, SymbolRefAttr)
from ..ir.core import Operation
from ..ir.floats import format_float
from ..ir.types import ELEMENT_TYPES, FunctionType, TensorType, TupleType
from .conv_dims import parse_conv_dims

# ---------------------------------------------------------------- format AST


@dataclass
class Lit:
    text: str


@dataclass
class Var:
    name: str
    anchor: bool = False


@dataclass
class Kw:             # operands | results | regions | attr-dict | attr-dict-with-keyword
    name: str
    anchor: bool = False


@dataclass
class TypeDir:
    arg: object


@dataclass
class RefDir:
    arg: object


@dataclass
class FuncType:
    inputs: object
    results: object


@dataclass
class Custom:
    name: str
    args: list


@dataclass
class Optional_:
    elems: list
    else_elems: list


_TOK = re.compile(r"\s*(?:`([^`]*)`|\$(\w+)|(attr-dict-with-keyword|attr-dict|functional-type|"
                  r"operands|results|regions|successors|type|ref|custom)|(<)(\w+)(>)|([()^,?:]))")


def compile_format(fmt: str) -> list:
    toks = []
    pos = 0
    while pos < len(fmt):
        m = _TOK.match(fmt, pos)
        if not m:
            if fmt[pos:].strip() == "":
                break
            raise ValueError(f"bad format near {fmt[pos:pos + 20]!r}")
        pos = m.end()
        if m.group(1) is not None:
            toks.append(("lit", m.group(1)))
        elif m.group(2):
            toks.append(("var", m.group(2)))
        elif m.group(3):
            toks.append(("kw", m.group(3)))
        elif m.group(4):
            toks.append(("angle", m.group(5)))
        else:
            toks.append(("p", m.group(7)))
    elems, i = _parse_elems(toks, 0, top=True)
    return elems


def _parse_arg(toks, i):
    kind, v = toks[i]
    if kind == "var":
        return Var(v), i + 1
    if kind == "kw" and v in ("operands", "results"):
        return Kw(v), i + 1
    if kind == "kw" and v in ("type", "ref"):
        assert toks[i + 1] == ("p", "(")
        inner, j = _parse_arg(toks, i + 2)
        assert toks[j] == ("p", ")")
        return (TypeDir(inner) if v == "type" else RefDir(inner)), j + 1
    raise ValueError(f"bad directive argument {toks[i]}")


def _parse_elems(toks, i, top=False):
    elems = []
    while i < len(toks):
        kind, v = toks[i]
        if kind == "p" and v == ")":
            return elems, i
        if kind == "p" and v == "^":
            elems[-1].anchor = True
            i += 1
            continue
        if kind == "lit":
            elems.append(Lit(v))
            i += 1
        elif kind == "var":
            elems.append(Var(v))
            i += 1
        elif kind == "kw":
            if v in ("type", "ref"):
                a, i = _parse_arg(toks, i)
                elems.append(a)
            elif v == "functional-type":
                assert toks[i + 1] == ("p", "(")
                a, j = _parse_arg(toks, i + 2)
                assert toks[j] == ("p", ",")
                b, j = _parse_arg(toks, j + 1)
                assert toks[j] == ("p", ")")
                elems.append(FuncType(a, b))
                i = j + 1
            elif v == "custom":
                name = toks[i + 1][1]
                assert toks[i + 2] == ("p", "(")
                args = []
                j = i + 3
                while toks[j] != ("p", ")"):
                    a, j = _parse_arg(toks, j)
                    args.append(a)
                    if toks[j] == ("p", ","):
                        j += 1
                elems.append(Custom(name, args))
                i = j + 1
            else:
                elems.append(Kw(v))
                i += 1
        elif kind == "p" and v == "(":
            inner, j = _parse_elems(toks, i + 1)
            assert toks[j] == ("p", ")")
            j += 1
            else_elems = []
            if toks[j] == ("p", ":"):
                assert toks[j + 1] == ("p", "(")
                else_elems, j = _parse_elems(toks, j + 2)
                j += 1
            assert toks[j] == ("p", "?"), toks[j]
            elems.append(Optional_(inner, else_elems))
            i = j + 1
        else:
            raise ValueError(f"unexpected {toks[i]} in format")
    return elems, i


@lru_cache(maxsize=None)
def format_for(op_name: str):
    """The compiled format of an op, or None when it has no spec'd pretty form."""
    if not _spec.has_op(op_name):
        return None
    s = _spec.op(op_name).syntax
    if not s.format:
        return None
    return compile_format(s.format)


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
        return EnumAttr(_enum_dialect(op_name), ENUM_KINDS[kind], sc.bare_id("enum value"))
    if kind in _INT_KINDS:
        if kind == "i1":
            if sc.accept_keyword("true"):
                return BoolAttr(True)
            if sc.accept_keyword("false"):
                return BoolAttr(False)
        return IntegerAttr(sc.integer(), ELEMENT_TYPES[_INT_KINDS[kind]])
    if kind in ("f32", "f64"):
        return FloatAttr(p._float_literal(), ELEMENT_TYPES[kind])
    if kind == "string" and sc.peek('"'):    # untyped: a following `:` starts the op's type
        return StringAttr(sc.string())
    if kind == "dense_i64_array" and sc.peek("["):
        return DenseArrayAttr(ELEMENT_TYPES["i64"], tuple(sc.delimited("[", "]", sc.integer)))
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
    __slots__ = ("spec", "operands", "attrs", "types", "regions", "all_operands")

    def __init__(self, op_spec):
        self.spec = op_spec
        self.operands = {}      # name -> list of Values
        self.attrs = {}
        self.types = {}         # var name or 'operands'/'results' -> list of types
        self.regions = {}
        self.all_operands = None

    def operand_names(self):
        return [o.name for o in self.spec.operands]

    def result_names(self):
        return [r.name for r in self.spec.results]


_KINDS_CACHE: dict = {}


def _kinds(op_spec) -> dict:
    """name -> (kind, spec entry) for an op's operands, attributes, regions and results
    (the first declaration of a name wins, as in the spec's lookup order)."""
    d = _KINDS_CACHE.get(op_spec.name)
    if d is None:
        d = {}
        for kind, entries in (("result", op_spec.results), ("region", op_spec.regions),
                              ("attr", op_spec.attributes), ("operand", op_spec.operands)):
            for e in entries:
                d[e.name] = (kind, e)
        _KINDS_CACHE[op_spec.name] = d
    return d


def _kind_of(op_spec, name):
    r = _kinds(op_spec).get(name)
    if r is None:
        raise KeyError(f"format of {op_spec.name} names unknown variable ${name}")
    return r


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
    return Operation(op_name, operands, results, st.attrs, regions)


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
                    st.attrs.update(p.parse_attr_dict_body().entries)
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
        fn = CUSTOM_PARSE.get(e.name)
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


def _is_variadic_key(op_spec, key):
    if key in ("operands", "results"):
        return True
    r = _kinds(op_spec).get(key[1:])
    if r is None:
        return False
    s = r[1]
    return getattr(s, "variadic", False) or getattr(s, "optional", False)


def _type_key(arg):
    if isinstance(arg, TypeDir):
        arg = arg.arg
    if isinstance(arg, Kw):
        return arg.name
    return "$" + arg.name


def _is_variadic(st, key):
    return _is_variadic_key(st.spec, key)


def _assign(st, keys, types):
    for k, t in zip(keys, types):
        st.types[k] = [t]


# --- custom directives (parse)

def _c_same_type(p, st, args, op_name):
    keys = [_type_key(a) for a in args]
    t = p.parse_type()
    if isinstance(t, FunctionType):
        ins = list(t.inputs)
        if keys[0] == "operands" or _is_variadic(st, keys[0]):
            st.types[keys[0]] = ins
        else:
            _assign(st, keys[:-1], ins)
        st.types[keys[-1]] = list(t.results)
        return
    for k in keys[:-1]:
        st.types[k] = [t]
    st.types[keys[-1]] = [t]


def _c_variadic_same(p, st, args, op_name):
    keys = [_type_key(a) for a in args if not isinstance(a, RefDir)]
    t = p.parse_type()
    if isinstance(t, FunctionType):
        st.types[keys[0]] = list(t.inputs)
        st.types[keys[-1]] = list(t.results)
    else:
        st.types[keys[-1]] = [t]


def _c_select(p, st, args, op_name):
    keys = [_type_key(a) for a in args]
    types = p.parse_type_list()
    if len(types) == 1 and isinstance(types[0], FunctionType):
        _assign(st, keys[:3], types[0].inputs)
        st.types[keys[3]] = list(types[0].results)
    elif len(types) == 2:
        st.types[keys[0]] = [types[0]]
        for k in keys[1:]:
            st.types[k] = [types[1]]
    else:
        raise p.sc.error("expected functional type or list of two types")


def _real_of(t):
    et = t.element_type
    name = {"complex<f32>": "f32", "complex<f64>": "f64"}.get(getattr(et, "name", ""))
    return TensorType(t.shape, ELEMENT_TYPES[name], t.encoding) if name else t


def _c_complex(p, st, args, op_name):
    keys = [_type_key(a) for a in args]
    t = p.parse_type()
    if isinstance(t, FunctionType):
        _assign(st, keys[:2], t.inputs)
        st.types[keys[2]] = list(t.results)
    else:
        et = getattr(t, "element_type", None)
        if not isinstance(t, TensorType) or not getattr(et, "is_complex", False):
            raise p.sc.error(f"custom op '{op_name}' expected tensor with complex element type")
        st.types[keys[2]] = [t]


def _c_tuple(p, st, args, op_name):
    keys = [_type_key(a) for a in args]
    t = p.parse_type()
    if not isinstance(t, TupleType):
        raise p.sc.error("expected tuple type")
    st.types[keys[-1]] = [t]


def _c_pairwise(p, st, args, op_name):
    keys = [_type_key(a) for a in args]
    pos = p.sc.pos
    types = p.parse_type_list()
    k0 = keys[0]
    n = len(st.all_operands or []) if k0 == "operands" else len(st.operands.get(k0[1:], []))
    if n != len(types):
        raise p.sc.error(f"custom op '{op_name}' number of operands and types do not match: "
                         f"got {n} operands and {len(types)} types", pos)
    st.types[keys[0]] = types
    st.types[keys[1]] = list(types)


def _c_variadic_operand_with_attr(p, st, args, op_name):
    sc = p.sc
    vals = []
    while sc.peek("%"):
        vals.append(p.parse_value_use())
        sc.expect(",")
    st.operands[args[0].name] = vals


def _c_custom_call_target(p, st, args, op_name):
    ref = p._parse_symbol_ref()
    st.attrs[args[0].name] = StringAttr(ref.root)


def _c_slice_ranges(p, st, args, op_name):
    sc = p.sc
    sc.expect("[")
    start, limit, stride = [], [], []
    if not sc.accept("]"):
        while True:
            start.append(sc.integer())
            sc.expect(":")
            limit.append(sc.integer())
            stride.append(sc.integer() if sc.accept(":") else 1)
            if not sc.accept(","):
                break
        sc.expect("]")
    i64 = ELEMENT_TYPES["i64"]
    for a, v in zip(args, (start, limit, stride)):
        st.attrs[a.name] = DenseArrayAttr(i64, tuple(v))


def _c_exp_mant(p, st, args, op_name):
    sc = p.sc
    kw = sc.bare_id("e#m#")
    m = re.fullmatch(r"e(\d+)m(\d+)", kw)
    if not m:
        raise sc.error(f"expected exponent mantissa in format e#m#, saw {kw}")
    i32 = ELEMENT_TYPES["i32"]
    st.attrs[args[0].name] = IntegerAttr(int(m.group(1)), i32)
    st.attrs[args[1].name] = IntegerAttr(int(m.group(2)), i32)


def _c_conv_dims(p, st, args, op_name):
    st.attrs[args[0].name] = StructAttr("stablehlo", "conv", parse_conv_dims(p))


def _c_window(p, st, args, op_name):
    sc = p.sc
    names = {"stride": 0, "pad": 1, "lhs_dilate": 2, "rhs_dilate": 3, "reverse": 4}
    seen = set()
    i64 = ELEMENT_TYPES["i64"]
    while True:
        sc.ws()
        m = re.compile(r"[a-z_]+").match(sc.s, sc.pos)
        if not m or m.group(0) not in names:
            break
        key = m.group(0)
        if key in seen:
            raise sc.error(f"duplicate window attribute {key}")
        seen.add(key)
        sc.pos = m.end()
        sc.expect("=")
        target = args[names[key]].name
        if key == "pad":
            sc.expect("[")
            rows = []
            if not sc.accept("]"):
                while True:
                    sc.expect("[")
                    lo = sc.integer()
                    sc.expect(",")
                    hi = sc.integer()
                    sc.expect("]")
                    rows.append((lo, hi))
                    if not sc.accept(","):
                        break
                sc.expect("]")
            arr = np.array(rows, dtype=np.int64).reshape(len(rows), 2)
            st.attrs[target] = DenseElementsAttr(TensorType((len(rows), 2), i64), arr)
        else:
            sc.expect("[")
            vals = []
            if not sc.accept("]"):
                while True:
                    if key == "reverse" and (sc.peek_keyword("true") or sc.peek_keyword("false")):
                        vals.append(sc.accept_keyword("true") or not sc.accept_keyword("false"))
                    else:
                        vals.append(sc.integer())
                    if not sc.accept(","):
                        break
                sc.expect("]")
            if key == "reverse":
                st.attrs[target] = DenseArrayAttr(ELEMENT_TYPES["i1"], tuple(bool(v) for v in vals))
            else:
                st.attrs[target] = DenseArrayAttr(i64, tuple(vals))
        if not sc.accept(","):
            break


def _int_list(sc):
    return tuple(sc.delimited("[", "]", sc.integer))


def _c_dot_dims(p, st, args, op_name):
    sc = p.sc
    lb = rb = lc = rc = ()
    if sc.accept_keyword("batching_dims"):
        sc.expect("=")
        lb = _int_list(sc)
        sc.expect_keyword("x")
        rb = _int_list(sc)
        sc.expect(",")
    sc.expect_keyword("contracting_dims")
    sc.expect("=")
    lc = _int_list(sc)
    sc.expect_keyword("x")
    rc = _int_list(sc)
    st.attrs[args[0].name] = StructAttr("stablehlo", "dot", (
        ("lhs_batching_dimensions", lb), ("rhs_batching_dimensions", rb),
        ("lhs_contracting_dimensions", lc), ("rhs_contracting_dimensions", rc)))


PRECISIONS = _spec.enum("precision").names


def _parse_precision_list(p):
    sc = p.sc
    sc.expect("[")
    vals = []
    if not sc.accept("]"):
        while True:
            pos = sc.pos
            v = sc.bare_id("precision")
            if v not in PRECISIONS:
                raise sc.error(f"expected precision to be one of: {', '.join(PRECISIONS)}", pos)
            vals.append(EnumAttr("stablehlo", "precision", v))
            if not sc.accept(","):
                break
        sc.expect("]")
    return ArrayAttr(tuple(vals))


def _c_precision(p, st, args, op_name):
    sc = p.sc
    save = sc.pos
    if not sc.accept(","):
        return
    if not sc.accept_keyword("precision"):
        sc.pos = save
        return
    sc.expect("=")
    st.attrs[args[0].name] = _parse_precision_list(p)


def _c_precision_algorithm(p, st, args, op_name):
    sc = p.sc
    save = sc.pos
    if not sc.accept(","):
        return
    if sc.accept_keyword("algorithm"):
        sc.expect("=")
        st.attrs[args[1].name] = p._parse_struct("stablehlo", "dot_algorithm")
        return
    if not sc.accept_keyword("precision"):
        sc.pos = save
        return
    sc.expect("=")
    st.attrs[args[0].name] = _parse_precision_list(p)
    if sc.accept(","):
        sc.expect_keyword("algorithm")
        sc.expect("=")
        st.attrs[args[1].name] = p._parse_struct("stablehlo", "dot_algorithm")


CUSTOM_PARSE = {
    "SameOperandsAndResultType": _c_same_type,
    "VariadicSameOperandsAndResultType": _c_variadic_same,
    "SelectOpType": _c_select,
    "ComplexOpType": _c_complex,
    "TupleOpType": _c_tuple,
    "PairwiseOpType": _c_pairwise,
    "VariadicOperandWithAttribute": _c_variadic_operand_with_attr,
    "CustomCallTarget": _c_custom_call_target,
    "SliceRanges": _c_slice_ranges,
    "ExponentMantissa": _c_exp_mant,
    "ConvolutionDimensions": _c_conv_dims,
    "WindowAttributes": _c_window,
    "DotDimensionNumbers": _c_dot_dims,
    "PrecisionConfig": _c_precision,
    "PrecisionConfigAndAlgorithm": _c_precision_algorithm,
}
