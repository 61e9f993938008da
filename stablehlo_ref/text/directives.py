"""The `custom<Name>` directives of the assembly formats: each directive's parse half and print
half side by side, and one table, `DIRECTIVES`, that the format parser (formats.py) and the
printer both read. A directive's syntax is changed here and nowhere else.

parse(p, st, args, op_name): reads the directive's text with the parser `p`, filling the parse
state `st` (types, attributes); args are the directive's format arguments.
print(pr, op, ospec, groups, args, types_of, used) -> str | None: the directive's text for
`op` (None: the op cannot be printed in this form, the printer falls back to the generic form);
names of the attributes it spells out go into `used`."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

import numpy as np

from .. import spec as _spec
from ..ir.attributes import (ArrayAttr, DenseArrayAttr, DenseElementsAttr, EnumAttr, IntegerAttr, StringAttr,
                             StructAttr)
from ..ir.types import ELEMENT_TYPES, FunctionType, TensorType, TupleType
from .conv_dims import parse_conv_dims
from .format_ast import RefDir, _is_variadic_key, _type_key
from .print_types import ftype as _ftype, type_text


@dataclass(frozen=True)
class Directive:
    """One custom directive: how it is read and how it is written."""
    parse: Callable
    print: Callable


def _is_variadic(st, key):
    return _is_variadic_key(st.spec, key)


def _operand_count(st, key):
    if key == "operands":
        return len(st.all_operands or [])
    return len(st.operands.get(key[1:], []))


def _from_function_type(p, pos, keys, counts, ft):
    """Operand types from a function type spelled for an op whose format gives one type for all
    (upstream's assignFromFunctionType): as many inputs as operands, exactly one result."""
    if len(ft.inputs) != sum(counts):
        raise p.sc.error(f"{sum(counts)} operands present, but expected {len(ft.inputs)}", pos)
    if len(ft.results) != 1:
        raise p.sc.error("expected single output", pos)
    ins = list(ft.inputs)
    out = []
    for k, n in zip(keys, counts):
        out.append((k, ins[:n]))
        ins = ins[n:]
    return out


def _real_of(t):
    et = t.element_type
    name = {"complex<f32>": "f32", "complex<f64>": "f64"}.get(getattr(et, "name", ""))
    return TensorType(t.shape, ELEMENT_TYPES[name], t.encoding) if name else t


def _int_list(sc):
    return tuple(sc.delimited("[", "]", sc.i64))


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


def _precision_s(x):
    if not isinstance(x, ArrayAttr) or not all(isinstance(e, EnumAttr) for e in x.elements):
        return None
    return "precision = [" + ", ".join(e.value for e in x.elements) + "]"


# --- SameOperandsAndResultType

def _c_same_type(p, st, args, op_name):
    keys = [_type_key(a) for a in args]
    p.sc.ws()
    pos = p.sc.pos
    t = p.parse_type()
    if isinstance(t, FunctionType):
        counts = [_operand_count(st, k) if k == "operands" or _is_variadic(st, k) else 1 for k in keys[:-1]]
        for k, ts in _from_function_type(p, pos, keys[:-1], counts, t):
            st.types[k] = ts
        st.types[keys[-1]] = list(t.results)
        return
    for k in keys[:-1]:
        st.types[k] = [t]
    st.types[keys[-1]] = [t]


def _pc_same_type(pr, op, ospec, groups, args, types_of, used):
    keys = [_type_key(a) for a in args]
    ins = []
    for k in keys[:-1]:
        ins.extend(types_of(k))
    res = types_of(keys[-1])
    if len(res) != 1:
        return None
    if all(t == res[0] for t in ins):
        return type_text(res[0])
    return _ftype(ins, res)


# --- VariadicSameOperandsAndResultType

def _c_variadic_same(p, st, args, op_name):
    keys = [_type_key(a) for a in args if not isinstance(a, RefDir)]
    p.sc.ws()
    pos = p.sc.pos
    t = p.parse_type()
    n = _operand_count(st, keys[0])
    if isinstance(t, FunctionType):
        for k, ts in _from_function_type(p, pos, keys[:1], [n], t):
            st.types[k] = ts
        st.types[keys[-1]] = list(t.results)
    else:
        st.types[keys[0]] = [t] * n
        st.types[keys[-1]] = [t]


def _pc_variadic_same(pr, op, ospec, groups, args, types_of, used):
    keys = [_type_key(a) for a in args if not isinstance(a, RefDir)]
    ins = types_of(keys[0])
    res = types_of(keys[-1])
    if len(res) == 1 and all(t == res[0] for t in ins):
        return type_text(res[0])
    return _ftype(ins, res)


# --- SelectOpType

def _c_select(p, st, args, op_name):
    keys = [_type_key(a) for a in args]
    p.sc.ws()
    pos = p.sc.pos
    types = p.parse_type_list()
    if len(types) == 1 and isinstance(types[0], FunctionType):
        for k, ts in _from_function_type(p, pos, keys[:3], [1, 1, 1], types[0]):
            st.types[k] = ts
        st.types[keys[3]] = list(types[0].results)
    elif len(types) == 2:
        st.types[keys[0]] = [types[0]]
        for k in keys[1:]:
            st.types[k] = [types[1]]
    else:
        raise p.sc.error("expected functional type or list of two types", pos)


def _pc_select(pr, op, ospec, groups, args, types_of, used):
    keys = [_type_key(a) for a in args]
    pred, t, f, r = (types_of(k)[0] for k in keys)
    if t == r and f == r:
        return f"{type_text(pred)}, {type_text(r)}"
    return _ftype([pred, t, f], [r])


# --- ComplexOpType

def _c_complex(p, st, args, op_name):
    keys = [_type_key(a) for a in args]
    p.sc.ws()
    pos = p.sc.pos
    t = p.parse_type()
    if isinstance(t, FunctionType):
        for k, ts in _from_function_type(p, pos, keys[:2], [1, 1], t):
            st.types[k] = ts
        st.types[keys[2]] = list(t.results)
    else:
        et = getattr(t, "element_type", None)
        if not isinstance(t, TensorType) or not getattr(et, "is_complex", False):
            raise p.sc.error(f"custom op '{op_name}' expected tensor with complex element type", pos)
        st.types[keys[0]] = st.types[keys[1]] = [_real_of(t)]
        st.types[keys[2]] = [t]


def _pc_complex(pr, op, ospec, groups, args, types_of, used):
    keys = [_type_key(a) for a in args]
    l, r, res = (types_of(k)[0] for k in keys)
    if isinstance(res, TensorType) and l == _real_of(res) and r == _real_of(res):
        return type_text(res)
    return _ftype([l, r], [res])


# --- TupleOpType

def _c_tuple(p, st, args, op_name):
    keys = [_type_key(a) for a in args]
    p.sc.ws()
    pos = p.sc.pos
    t = p.parse_type()
    if not isinstance(t, TupleType):
        raise p.sc.error("expected tuple type", pos)
    n = _operand_count(st, keys[0])
    if n != len(t.types):
        raise p.sc.error(f"custom op '{op_name}' number of operands and types do not match: "
                         f"got {n} operands and {len(t.types)} types", pos)
    st.types[keys[0]] = list(t.types)
    st.types[keys[-1]] = [t]


def _pc_tuple(pr, op, ospec, groups, args, types_of, used):
    return str(op.results[0].type)


# --- PairwiseOpType

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


def _pc_pairwise(pr, op, ospec, groups, args, types_of, used):
    return ", ".join(type_text(v.type) for v in op.operands)


# --- VariadicOperandWithAttribute

def _c_variadic_operand_with_attr(p, st, args, op_name):
    sc = p.sc
    vals = []
    while sc.peek("%"):
        vals.append(p.parse_value_use())
        sc.expect(",")
    st.operands[args[0].name] = vals


def _pc_var_operand_attr(pr, op, ospec, groups, args, types_of, used):
    vals = groups[args[0].name]
    return "".join(f"{pr.value(v)}, " for v in vals).rstrip(" ") if vals else ""


# --- CustomCallTarget

def _c_custom_call_target(p, st, args, op_name):
    ref = p._parse_symbol_ref()
    st.attrs[args[0].name] = StringAttr(ref.root)


def _pc_target(pr, op, ospec, groups, args, types_of, used):
    used.add(args[0].name)
    a = op.attributes.get(args[0].name)
    if not isinstance(a, StringAttr) or a.type is not None:
        return None
    return pr.symbol(a.value)


# --- SliceRanges

def _c_slice_ranges(p, st, args, op_name):
    sc = p.sc
    sc.expect("[")
    start, limit, stride = [], [], []
    if not sc.accept("]"):
        while True:
            start.append(sc.i64())
            sc.expect(":")
            limit.append(sc.i64())
            stride.append(sc.i64() if sc.accept(":") else 1)
            if not sc.accept(","):
                break
        sc.expect("]")
    i64 = ELEMENT_TYPES["i64"]
    for a, v in zip(args, (start, limit, stride)):
        st.attrs[a.name] = DenseArrayAttr(i64, tuple(v))


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


# --- ExponentMantissa

def _c_exp_mant(p, st, args, op_name):
    sc = p.sc
    sc.ws()
    pos = sc.pos
    kw = sc.bare_id("e#m#")
    m = re.fullmatch(r"e(\d+)m(\d+)", kw)
    if not m:
        raise sc.error(f"expected exponent mantissa in format e#m#, saw {kw}")
    for part, text in (("exponent", m.group(1)), ("mantissa", m.group(2))):
        if len(text.lstrip("0")) > 10 or int(text) >= 2 ** 31:      # (upstream reads each into an int32)
            raise sc.error(f"custom op '{op_name}' unable to parse {part} '{text}'", pos)
    i32 = ELEMENT_TYPES["i32"]
    at = sc.pos - len(kw)
    st.attrs[args[0].name] = IntegerAttr(p._int_in_range(m.group(1), at, i32), i32)
    st.attrs[args[1].name] = IntegerAttr(p._int_in_range(m.group(2), at, i32), i32)


def _pc_exp_mant(pr, op, ospec, groups, args, types_of, used):
    e = op.attributes.get(args[0].name)
    m = op.attributes.get(args[1].name)
    used.update({args[0].name, args[1].name})
    # (the pretty form reads each into an int32: a value past it prints generic)
    if (not isinstance(e, IntegerAttr) or not isinstance(m, IntegerAttr)
            or not 0 <= e.value < 2 ** 31 or not 0 <= m.value < 2 ** 31):
        return None
    return f"e{e.value}m{m.value}"


# --- ConvolutionDimensions

def _c_conv_dims(p, st, args, op_name):
    st.attrs[args[0].name] = StructAttr("stablehlo", "conv", parse_conv_dims(p))


def _pc_conv(pr, op, ospec, groups, args, types_of, used):
    used.add(args[0].name)
    a = op.attributes.get(args[0].name)
    if not isinstance(a, StructAttr):
        return None
    s = pr.struct(a)
    if "<raw" in s:
        return None
    return s[len("#stablehlo.conv<"):-1]


# --- WindowAttributes

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
                    lo = _i64(sc)
                    sc.expect(",")
                    hi = _i64(sc)
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
                        vals.append(_i64(sc))
                    if not sc.accept(","):
                        break
                sc.expect("]")
            if key == "reverse":
                st.attrs[target] = DenseArrayAttr(ELEMENT_TYPES["i1"], tuple(bool(v) for v in vals))
            else:
                st.attrs[target] = DenseArrayAttr(i64, tuple(vals))
        if not sc.accept(","):
            break


def _i64(sc) -> int:
    """An integer literal that must fit the i64 of the attribute it goes into."""
    return sc.i64()


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
    return ", ".join(parts)


# --- DotDimensionNumbers

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


# --- PrecisionConfig

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


def _pc_precision(pr, op, ospec, groups, args, types_of, used):
    used.add(args[0].name)
    x = op.attributes.get(args[0].name)
    if x is None:
        return ""
    s = _precision_s(x)
    return None if s is None else ", " + s


# --- PrecisionConfigAndAlgorithm

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


DIRECTIVES = {
    "SameOperandsAndResultType": Directive(_c_same_type, _pc_same_type),
    "VariadicSameOperandsAndResultType": Directive(_c_variadic_same, _pc_variadic_same),
    "SelectOpType": Directive(_c_select, _pc_select),
    "ComplexOpType": Directive(_c_complex, _pc_complex),
    "TupleOpType": Directive(_c_tuple, _pc_tuple),
    "PairwiseOpType": Directive(_c_pairwise, _pc_pairwise),
    "VariadicOperandWithAttribute": Directive(_c_variadic_operand_with_attr, _pc_var_operand_attr),
    "CustomCallTarget": Directive(_c_custom_call_target, _pc_target),
    "SliceRanges": Directive(_c_slice_ranges, _pc_slice),
    "ExponentMantissa": Directive(_c_exp_mant, _pc_exp_mant),
    "ConvolutionDimensions": Directive(_c_conv_dims, _pc_conv),
    "WindowAttributes": Directive(_c_window, _pc_window),
    "DotDimensionNumbers": Directive(_c_dot_dims, _pc_dot),
    "PrecisionConfig": Directive(_c_precision, _pc_precision),
    "PrecisionConfigAndAlgorithm": Directive(_c_precision_algorithm, _pc_precision_alg),
}
