"""Hand-written pretty syntax (parse side) for the ops whose syntax upstream writes by hand:
`builtin.module`, `func.func`, `func.return`, `func.call`, `stablehlo.constant`,
`stablehlo.while`, `stablehlo.reduce`. The print side lives in `printer.py`."""
from __future__ import annotations

import re

from ..ir.attributes import (ArrayAttr, DenseArrayAttr, DenseElementsAttr, DenseResourceAttr,
                             DictAttr, StringAttr, TypeAttr, SymbolRefAttr)
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
        pass
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
            if m:
                has_body_names = True
                sc.expect(":")
                t = p.parse_type()
                v = Value(t, m.group(1))
            else:
                t = p.parse_type()
                v = Value(t, None)
            arg_types.append(t)
            arg_attrs.append(p.parse_attr_dict_body() if sc.peek("{") else DictAttr(()))
            loc = p.parse_trailing_location() if sc.peek("loc(") else None
            args.append((v, loc))
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
        region = p.parse_region(entry_args=[v for v, _ in args])
        region.blocks[0].arg_locations = [loc for _, loc in args]
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
        raise sc.error("expected dense elements attribute for stablehlo.constant")
    attrs["value"] = value
    return Operation(name, [], [value.type], attrs)


def parse_while(p, name):
    sc = p.sc
    sc.expect("(")
    iter_names, operands = [], []
    if not sc.accept(")"):
        while True:
            m = sc.match(_VALUE_DEF)
            if not m:
                raise sc.error("expected iteration argument")
            sc.expect("=")
            iter_names.append(m.group(1))
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
    cond = p.parse_region(entry_args=[Value(t, n) for t, n in zip(types, iter_names)])
    sc.expect_keyword("do")
    body = p.parse_region(entry_args=[Value(t, n) for t, n in zip(types, iter_names)])
    return Operation(name, operands, types, attrs, [cond, body])


def parse_reduce(p, name):
    sc = p.sc
    dialect = name.split(".")[0]
    inputs, inits = [], []
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
    sc.expect_keyword("across")
    sc.expect_keyword("dimensions")
    sc.expect("=")
    sc.expect("[")
    dims = []
    if not sc.accept("]"):
        while True:
            dims.append(sc.integer())
            if not sc.accept(","):
                break
        sc.expect("]")
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
        block.operations.extend([inner, ret])
        op = Operation(name, operands, list(ft.results), attrs, [Region([block])])
        if loc is not None:
            op.location = loc
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
            lst.append((Value(t, m.group(1)), loc))
            if lst is elems:
                sc.expect(",")
        sc.expect(")")
    args = elems + accs
    region = p.parse_region(entry_args=[v for v, _ in args])
    region.blocks[0].arg_locations = [l for _, l in args]
    return Operation(name, operands, list(ft.results), attrs, [region])


PARSERS = {
    "builtin.module": parse_module,
    "func.func": parse_func,
    "func.return": parse_return,
    "func.call": parse_call,
    "stablehlo.constant": parse_constant,
    "stablehlo.while": parse_while,
    "stablehlo.reduce": parse_reduce,
}
