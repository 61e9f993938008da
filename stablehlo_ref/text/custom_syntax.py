"""Hand-written pretty syntax (parse side) for the ops whose syntax upstream writes by hand:
`builtin.module`, `func.func`, `func.return`, `func.call`, `stablehlo.constant`,
`stablehlo.while`, `stablehlo.reduce`, `chlo.scan`, the interpreter dialect (`probe`, `print`)
and the few `arith`/`tensor` ops upstream test files use. The print side lives in `printer.py`."""
from __future__ import annotations

import re

from ..ir.attributes import (ArrayAttr, DenseArrayAttr, DenseElementsAttr, DenseResourceAttr,
                             DictAttr, IntegerAttr, StringAttr, SymbolRefAttr, TypeAttr, UnitAttr)
from ..ir.core import Block, Operation, Region, Value
from ..ir.types import ELEMENT_TYPES, FunctionType, TensorType

_VALUE_DEF = re.compile(r"%([\w$.\-]+)")


def parse_module(p, name):
    sc = p.sc
    attrs = {}
    if sc.peek("@"):
        attrs["sym_name"] = StringAttr(p._parse_symbol_ref().root)
    if sc.accept_keyword("attributes"):
        attrs.update(p.parse_attr_dict_body().entries)
    region = p.parse_region()
    if not region.blocks:
        region.blocks.append(Block())
    return Operation("builtin.module", attributes=attrs, regions=[region])


def parse_func(p, name):
    sc = p.sc
    attrs = {}
    if sc.accept_keyword("public"):
        # MLIR keeps an explicit `public` as an attribute (and writes it into artifacts)
        attrs["sym_visibility"] = StringAttr("public")
    elif sc.accept_keyword("private"):
        attrs["sym_visibility"] = StringAttr("private")
    elif sc.accept_keyword("nested"):
        attrs["sym_visibility"] = StringAttr("nested")
    sym = p._parse_symbol_ref().root
    sc.expect("(")
    args, arg_types, arg_attrs = [], [], []
    has_body_names = False
    if not sc.accept(")"):
        while True:
            sc.ws()
            m = sc.match(_VALUE_DEF)
            src = None
            if m:
                has_body_names = True
                src = sc.location(m.start())
                sc.expect(":")
                t = p.parse_type()
                v = Value(t, m.group(1))
            else:
                t = p.parse_type()
                v = Value(t, None)
            arg_types.append(t)
            arg_attrs.append(p.parse_attr_dict_body() if sc.peek("{") else DictAttr(()))
            loc = p.parse_trailing_location() if sc.peek("loc(") else None
            args.append((v, loc, src))
            if not sc.accept(","):
                break
        sc.expect(")")
    res_types, res_attrs = [], []
    if sc.accept("->"):
        if sc.peek("(") :
            save = sc.pos
            sc.accept("(")
            if not sc.accept(")"):
                while True:
                    res_types.append(p.parse_type())
                    res_attrs.append(p.parse_attr_dict_body() if sc.peek("{") else DictAttr(()))
                    if not sc.accept(","):
                        break
                sc.expect(")")
            if sc.peek("->"):   # the result was itself a function type
                sc.pos = save
                res_types = [p.parse_function_type()]
                res_attrs = [DictAttr(())]
        else:
            res_types.append(p.parse_type())
            res_attrs.append(DictAttr(()))
    if sc.accept_keyword("attributes"):
        attrs.update(p.parse_attr_dict_body().entries)
    attrs["sym_name"] = StringAttr(sym)
    attrs["function_type"] = TypeAttr(FunctionType(tuple(arg_types), tuple(res_types)))
    if any(d.entries for d in arg_attrs):
        attrs["arg_attrs"] = ArrayAttr(tuple(arg_attrs))
    if any(d.entries for d in res_attrs):
        attrs["res_attrs"] = ArrayAttr(tuple(res_attrs))
    regions = [Region()]
    if sc.peek("{"):
        if not has_body_names and args:
            raise sc.error("function with a body must name its arguments")
        region = p.parse_region(entry_args=[v for v, _, _ in args], entry_sources=[s for _, _, s in args])
        region.blocks[0].arg_locations = [loc for _, loc, _ in args]
        regions = [region]
    return Operation("func.func", attributes=attrs, regions=regions)


def parse_return(p, name):
    sc = p.sc
    attrs = {}
    if sc.peek("{"):
        attrs.update(p.parse_attr_dict_body().entries)
    operands = p.parse_value_list()
    if operands:
        sc.expect(":")
        types = p.parse_type_list()
        if len(types) != len(operands):
            raise sc.error(f"{len(operands)} operands but {len(types)} types")
    return Operation(name, operands, [], attrs)


def parse_call(p, name):
    sc = p.sc
    callee = p._parse_symbol_ref()
    sc.expect("(")
    operands = p.parse_value_list()
    sc.expect(")")
    attrs = {}
    if sc.peek("{"):
        attrs.update(p.parse_attr_dict_body().entries)
    sc.expect(":")
    ft = p.parse_function_type()
    attrs["callee"] = callee
    return Operation(name, operands, list(ft.results), attrs)


def parse_constant(p, name):
    sc = p.sc
    if sc.accept("("):
        sc.expect(")")
        attrs = {}
        if sc.accept("<"):
            attrs.update(p.parse_attr_dict_body().entries)
            sc.expect(">")
        if sc.peek("{"):
            attrs.update(p.parse_attr_dict_body().entries)
        sc.expect(":")
        ft = p.parse_function_type()
        return Operation(name, [], list(ft.results), attrs)
    attrs = {}
    if sc.peek("{"):
        attrs.update(p.parse_attr_dict_body().entries)
    value = p.parse_attribute()
    if not isinstance(value, (DenseElementsAttr, DenseResourceAttr)):
        raise sc.error(f"expected dense elements attribute for {name}")
    attrs["value"] = value
    return Operation(name, [], [value.type], attrs)


def parse_while(p, name):
    sc = p.sc
    sc.expect("(")
    iter_names, iter_srcs, operands = [], [], []
    if not sc.accept(")"):
        while True:
            m = sc.match(_VALUE_DEF)
            if not m:
                raise sc.error("expected iteration argument")
            sc.expect("=")
            iter_names.append(m.group(1))
            iter_srcs.append(sc.location(m.start()))
            operands.append(p.parse_value_use())
            if not sc.accept(","):
                break
        sc.expect(")")
    types = []
    if operands:
        sc.expect(":")
        types = p.parse_type_list()
        if len(types) != len(operands):
            raise sc.error(f"{len(operands)} operands but {len(types)} types")
    attrs = {}
    if sc.accept_keyword("attributes"):
        attrs.update(p.parse_attr_dict_body().entries)
    sc.expect_keyword("cond")
    cond = p.parse_region(entry_args=[Value(t, n) for t, n in zip(types, iter_names)], entry_sources=iter_srcs)
    sc.expect_keyword("do")
    body = p.parse_region(entry_args=[Value(t, n) for t, n in zip(types, iter_names)], entry_sources=iter_srcs)
    return Operation(name, operands, types, attrs, [cond, body])


COMMUTATIVE_REDUCERS = frozenset(f"{d}.{n}" for d in ("stablehlo", "chlo") for n in
                                 ("add", "and", "maximum", "minimum", "multiply", "or", "xor"))


def parse_reduce(p, name):
    sc = p.sc
    dialect = name.split(".")[0]
    inputs, inits = [], []
    # upstream's reduce parser locates the op (and, in the compact form, its reducer body) at
    # the token after the op name
    sc.ws()
    start = sc.location()
    while sc.accept("("):
        inputs.append(p.parse_value_use())
        sc.expect_keyword("init")
        sc.expect(":")
        inits.append(p.parse_value_use())
        sc.expect(")")
        if not sc.accept(","):
            break
    compact = None
    if sc.accept_keyword("applies"):
        sc.ws()
        if sc.peek('"'):
            compact = sc.string()
        else:
            compact = sc.bare_id("operation name")
        if "." not in compact:
            compact = f"{dialect}.{compact}"
        if compact not in COMMUTATIVE_REDUCERS:
            raise sc.error("expected the inner-op to be a commutative binary-op from the stablehlo "
                           f"dialect, with zero region, producing single result (got '{compact}')")
    sc.expect_keyword("across")
    sc.expect_keyword("dimensions")
    sc.expect("=")
    dims = sc.delimited("[", "]", sc.integer)
    attrs = {}
    if sc.peek("{"):
        attrs.update(p.parse_attr_dict_body().entries)
    sc.expect(":")
    ft = p.parse_function_type()
    attrs["dimensions"] = DenseArrayAttr(ELEMENT_TYPES["i64"], tuple(dims))
    operands = inputs + inits
    if compact is not None:
        loc = p.parse_trailing_location() if sc.peek("loc(") else None
        if not ft.inputs:
            raise sc.error("input types missing in reduce function type")
        in0 = ft.inputs[0]
        et = in0.element_type
        scalar = TensorType((), et)
        block = Block([scalar, scalar])
        inner = Operation(compact, list(block.arguments), [scalar])
        ret = Operation(f"{dialect}.return", [inner.results[0]])
        if loc is not None:
            inner.location = loc
            ret.location = loc
            block.arg_locations = [loc, loc]
        inner.source = ret.source = start
        block.arg_sources = [start, start]
        block.operations.extend([inner, ret])
        op = Operation(name, operands, list(ft.results), attrs, [Region([block])])
        if loc is not None:
            op.location = loc
        op.source = start
        return op
    sc.expect_keyword("reducer")
    elems, accs = [], []
    while sc.accept("("):
        for lst in (elems, accs):
            m = sc.match(_VALUE_DEF)
            if not m:
                raise sc.error("expected reducer argument")
            sc.expect(":")
            t = p.parse_type()
            loc = p.parse_trailing_location() if sc.peek("loc(") else None
            lst.append((Value(t, m.group(1)), loc, sc.location(m.start())))
            if lst is elems:
                sc.expect(",")
        sc.expect(")")
    args = elems + accs
    region = p.parse_region(entry_args=[v for v, _, _ in args], entry_sources=[s for _, _, s in args])
    region.blocks[0].arg_locations = [l for _, l, _ in args]
    op = Operation(name, operands, list(ft.results), attrs, [region])
    op.source = start
    return op


def parse_scan(p, name):
    """`chlo.scan(%in...) inits(%init...) dimension=N [attributes {...}] {body} : functype`."""
    sc = p.sc
    sc.expect("(")
    inputs = p.parse_value_list()
    sc.expect(")")
    sc.expect_keyword("inits")
    sc.expect("(")
    inits = p.parse_value_list()
    sc.expect(")")
    sc.expect_keyword("dimension")
    sc.expect("=")
    dim = sc.integer()
    attrs = {}
    if sc.accept_keyword("attributes"):
        attrs.update(p.parse_attr_dict_body().entries)
    body = p.parse_region()
    sc.expect(":")
    ft = p.parse_function_type()
    if len(ft.inputs) != len(inputs) + len(inits):
        raise sc.error("operand types must match the number of inputs and inits")
    n_out = len(ft.results) - len(inits)
    if n_out < 0:
        raise sc.error("not enough result types to cover the required carries")
    attrs["dimension"] = IntegerAttr(dim, ELEMENT_TYPES["i64"])
    i32 = ELEMENT_TYPES["i32"]
    attrs["operandSegmentSizes"] = DenseArrayAttr(i32, (len(inputs), len(inits)))
    attrs["resultSegmentSizes"] = DenseArrayAttr(i32, (n_out, len(inits)))
    return Operation(name, inputs + inits, list(ft.results), attrs, [body])


def parse_probe(p, name):
    """`interpreter.probe %x, probe_id = "id" : type`."""
    sc = p.sc
    operand = p.parse_value_use()
    sc.expect(",")
    sc.expect_keyword("probe_id")
    sc.expect("=")
    attrs = {"probe_id": StringAttr(sc.string())}
    if sc.peek("{"):
        attrs.update(p.parse_attr_dict_body().entries)
    sc.expect(":")
    t = p.parse_type()
    return Operation(name, [operand], [t], attrs)


def parse_print(p, name):
    """`interpreter.print %x : type`."""
    sc = p.sc
    operand = p.parse_value_use()
    attrs = {}
    if sc.peek("{"):
        attrs.update(p.parse_attr_dict_body().entries)
    sc.expect(":")
    p.parse_type()
    return Operation(name, [operand], [], attrs)


# Upstream test files also use a few ops of MLIR's core dialects (arith, tensor) next to
# StableHLO; their pretty forms are small enough to keep here.
ARITH_BINARY = ("addf", "subf", "mulf", "divf", "addi", "subi", "muli", "divsi", "divui",
                "remsi", "remui", "andi", "ori", "xori", "maxsi", "minsi", "maximumf", "minimumf")


def parse_arith_binary(p, name):
    sc = p.sc
    lhs = p.parse_value_use()
    sc.expect(",")
    rhs = p.parse_value_use()
    attrs = {}
    if sc.peek("{"):
        attrs.update(p.parse_attr_dict_body().entries)
    sc.expect(":")
    t = p.parse_type()
    return Operation(name, [lhs, rhs], [t], attrs)


def parse_arith_constant(p, name):
    sc = p.sc
    attrs = {}
    if sc.peek("{"):
        attrs.update(p.parse_attr_dict_body().entries)
    value = p.parse_attribute()
    t = getattr(value, "type", None)
    if t is None:
        raise sc.error("arith.constant needs a typed value")
    attrs["value"] = value
    return Operation(name, [], [t], attrs)


def parse_tensor_cast(p, name):
    sc = p.sc
    src = p.parse_value_use()
    attrs = {}
    if sc.peek("{"):
        attrs.update(p.parse_attr_dict_body().entries)
    sc.expect(":")
    p.parse_type()
    sc.expect_keyword("to")
    return Operation(name, [src], [p.parse_type()], attrs)


def parse_scf_for(p, name):
    """`scf.for [unsigned] %iv = %lb to %ub step %step [iter_args(%a = %init, ...) -> (types)]
    [: iv-type] {body} [attr-dict]`; a body without iter_args may leave out its `scf.yield`."""
    sc = p.sc
    attrs = {}
    if sc.accept_keyword("unsigned"):
        attrs["unsignedCmp"] = UnitAttr()
    m = sc.match(_VALUE_DEF)
    if not m:
        raise sc.error("expected the induction variable")
    names, srcs = [m.group(1)], [sc.location(m.start())]
    sc.expect("=")
    bounds = [p.parse_value_use()]
    sc.expect_keyword("to")
    bounds.append(p.parse_value_use())
    sc.expect_keyword("step")
    bounds.append(p.parse_value_use())
    inits = []
    if sc.accept_keyword("iter_args"):
        sc.expect("(")
        if not sc.accept(")"):
            while True:
                m = sc.match(_VALUE_DEF)
                if not m:
                    raise sc.error("expected an iteration argument")
                names.append(m.group(1))
                srcs.append(sc.location(m.start()))
                sc.expect("=")
                inits.append(p.parse_value_use())
                if not sc.accept(","):
                    break
            sc.expect(")")
    result_types = []
    if sc.accept("->"):
        if sc.accept("("):
            if not sc.accept(")"):
                result_types = p.parse_type_list()
                sc.expect(")")
        else:
            result_types = [p.parse_type()]
    if len(result_types) != len(inits):
        raise sc.error(f"scf.for has {len(inits)} iter_args but {len(result_types)} result types")
    iv_type = ELEMENT_TYPES["index"]
    if sc.accept(":"):
        iv_type = p.parse_type()
    args = [Value(iv_type, names[0])] + [Value(t, n) for t, n in zip(result_types, names[1:])]
    region = p.parse_region(entry_args=args, entry_sources=srcs)
    block = region.blocks[0]
    if not block.operations or block.operations[-1].name != "scf.yield":
        if inits:
            raise sc.error("scf.for with iter_args must end its body with scf.yield")
        block.operations.append(Operation("scf.yield"))      # MLIR's implicit terminator
    if sc.peek("{"):
        attrs.update(p.parse_attr_dict_body().entries)
    return Operation(name, bounds + inits, result_types, attrs, [region])


def _parse_indices(p):
    return p.sc.delimited("[", "]", p.parse_value_use)


def _attrs_colon_type(p):
    """`[attr-dict] : type` -> (attributes, type)."""
    attrs = dict(p.parse_attr_dict_body().entries) if p.sc.peek("{") else {}
    p.sc.expect(":")
    return attrs, p.parse_type()


def parse_tensor_insert(p, name):
    """`tensor.insert %scalar into %dest[%i, ...] [attr-dict] : tensor-type`."""
    scalar = p.parse_value_use()
    p.sc.expect_keyword("into")
    dest = p.parse_value_use()
    idx = _parse_indices(p)
    attrs, t = _attrs_colon_type(p)
    return Operation(name, [scalar, dest] + idx, [t], attrs)


def parse_tensor_extract(p, name):
    """`tensor.extract %t[%i, ...] [attr-dict] : tensor-type` (the result is one element)."""
    sc = p.sc
    src = p.parse_value_use()
    idx = _parse_indices(p)
    attrs, t = _attrs_colon_type(p)
    if not isinstance(t, TensorType):
        raise sc.error("tensor.extract needs a tensor type")
    return Operation(name, [src] + idx, [t.element_type], attrs)


PARSERS = {
    "builtin.module": parse_module,
    "func.func": parse_func,
    "func.return": parse_return,
    "func.call": parse_call,
    "stablehlo.constant": parse_constant,
    "chlo.constant": parse_constant,
    "stablehlo.while": parse_while,
    "stablehlo.reduce": parse_reduce,
    "chlo.scan": parse_scan,
    "interpreter.probe": parse_probe,
    "interpreter.print": parse_print,
    "arith.constant": parse_arith_constant,
    "tensor.cast": parse_tensor_cast,
    "tensor.insert": parse_tensor_insert,
    "tensor.extract": parse_tensor_extract,
    "scf.for": parse_scf_for,
    "scf.yield": parse_return,
}
PARSERS.update({f"arith.{n}": parse_arith_binary for n in ARITH_BINARY})
