"""Hand-written syntax of the builtin, func, arith, tensor and scf ops that StableHLO programs
carry (`builtin.module`, `func.func`/`return`/`call`, `arith.constant` and the binary arith
ops, `tensor.cast`/`insert`/`extract`, `scf.for`/`yield`): each op's parse function and its
print function side by side. custom_syntax.py registers them."""
from __future__ import annotations

import re


from ..errors import StableHLOError
from ..ir.attributes import ArrayAttr, DictAttr, StringAttr, SymbolRefAttr, TypeAttr, UnitAttr
from ..ir.core import Block, Operation, Region, Value
from ..ir.types import ELEMENT_TYPES, ElementType, FunctionType, TensorType
from .print_types import type_text


_VALUE_DEF = re.compile(r"%([\w$.\-]+)")


# Upstream test files also use a few ops of MLIR's core dialects (arith, tensor) next to
# StableHLO; their pretty forms are small enough to keep here.
ARITH_BINARY = ("addf", "subf", "mulf", "divf", "addi", "subi", "muli", "divsi", "divui",
                "remsi", "remui", "andi", "ori", "xori", "maxsi", "minsi", "maximumf", "minimumf")


def _parse_indices(p):
    return p.sc.delimited("[", "]", p.parse_value_use)


def _attrs_colon_type(p):
    """`[attr-dict] : type` -> (attributes, type, position of the type)."""
    attrs = dict(p.parse_attr_dict_body().entries) if p.sc.peek("{") else {}
    p.sc.expect(":")
    p.sc.ws()
    pos = p.sc.pos
    return attrs, p.parse_type(), pos


# --- builtin.module

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


def print_module(pr, op: Operation, indent: int):
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


# --- func.func

# the commonest header: named arguments and results of plain tensor types (as the type cache
# has them), no attributes or locations, then the body
_WS = r"[ \t\n\r\f\v]*"
_TT = r"tensor<(?:[0-9?]+x)*[a-z][a-z0-9]*>"     # (as fastpath._TYPE: one way to match a text)
_ARG = r"%[\w$.\-]+" + _WS + ":" + _WS + _TT
_RES = _TT + r"(?:" + _WS + r"\{[^{}\n]*\})?"        # (a result's attributes: read by the dictionary parser)
_FUNC_HEAD = re.compile(
    _WS + r"(?:(public|private|nested)(?![\w$.])" + _WS + r")?@([\w$.\-]+)" + _WS + r"\(" + _WS +
    "((?:" + _ARG + "(?:" + _WS + "," + _WS + _ARG + ")*)?)" + _WS + r"\)" + _WS + "(?:->" + _WS +
    "(?:(" + _TT + r")|\(" + _WS + "((?:" + _RES + "(?:" + _WS + "," + _WS + _RES + ")*)?)" + _WS + r"\)))?" + _WS +
    r"(?=\{)")
_ARG_PARTS = re.compile(r"%([\w$.\-]+)" + _WS + ":" + _WS + "(" + _TT + ")")
_RES_PARTS = re.compile("(" + _TT + r")(?:" + _WS + r"(\{[^{}\n]*\}))?")
_FAST_FUNC = True       # (tests turn it off to compare)


def _parse_func_head(p, m):
    """(attrs, args) of a matched _FUNC_HEAD as the general header parse below gives them, or
    None where a type is not in the type cache (nothing changed then)."""
    cache = p.type_cache
    args = []
    arg_types = []
    text = m.group(3)
    if text:
        base = m.start(3)
        for am in _ARG_PARTS.finditer(text):
            t = cache.get(am.group(2))
            if t is None:
                return None
            arg_types.append(t)
            args.append((Value(t, am.group(1)), None, base + am.start()))
    res_types = []
    res_attrs = []
    if m.group(4) is not None:
        t = cache.get(m.group(4))
        if t is None:
            return None
        res_types.append(t)
    elif m.group(5):
        base = m.start(5)
        for rm in _RES_PARTS.finditer(m.group(5)):
            t = cache.get(rm.group(1))
            if t is None:
                return None
            res_types.append(t)
            if rm.group(2) is None:
                res_attrs.append(DictAttr(()))
            else:
                d = _dict_at(p, base + rm.start(2), base + rm.end(2))
                if d is None:
                    return None
                res_attrs.append(d)
    attrs = {}
    if m.group(1) is not None:
        attrs["sym_visibility"] = StringAttr(m.group(1))
    attrs["sym_name"] = StringAttr(m.group(2))
    attrs["function_type"] = TypeAttr(FunctionType(tuple(arg_types), tuple(res_types)))
    if any(d.entries for d in res_attrs):
        attrs["res_attrs"] = ArrayAttr(tuple(res_attrs))
    sc = p.sc
    return attrs, [(v, loc, sc.location(pos)) for v, loc, pos in args]


def _dict_at(p, start, end):
    """The attribute dictionary the general parser reads from exactly s[start:end], else None;
    the parser is left as it was."""
    sc = p.sc
    save = sc.pos
    depth = p.depth
    sc.pos = start
    try:
        d = p.parse_attr_dict_body()
        if sc.pos != end:
            d = None
    except StableHLOError:
        d = None
    finally:
        sc.pos = save
        p.depth = depth
    return d


def parse_func(p, name):
    sc = p.sc
    m = _FUNC_HEAD.match(sc.s, sc.pos) if _FAST_FUNC else None
    got = _parse_func_head(p, m) if m is not None else None
    if got is not None:
        attrs, args = got
        sc.pos = m.end()
        region = p.parse_region(entry_args=[v for v, _, _ in args], entry_sources=[s for _, _, s in args])
        region.blocks[0].arg_locations = [loc for _, loc, _ in args]
        return Operation("func.func", attributes=attrs, regions=[region])
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


def print_func(pr, op: Operation, indent: int):
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


# --- func.return

def parse_return(p, name):
    sc = p.sc
    attrs = {}
    if sc.peek("{"):
        attrs.update(p.parse_attr_dict_body().entries)
    operands = p.parse_value_list()
    if operands:
        sc.expect(":")
        sc.ws()
        pos = sc.pos
        p.check_operand_types(operands, p.parse_type_list(), pos)
    return Operation(name, operands, [], attrs)


def print_return(pr, op: Operation, indent: int):
    pad = "  " * indent
    if op.name not in ("func.return", "scf.yield"):
        return None
    s = pad + pr.op_name(op)
    if op.attributes:
        s += " " + pr.attr_dict(list(op.attributes.items()))
    if op.operands:
        s += " " + ", ".join(pr.value(v) for v in op.operands) + " : " + ", ".join(type_text(v.type) for v in op.operands)
    return [s + pr.trailing_loc(op.location)]


# --- func.call

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
    sc.ws()
    pos = sc.pos
    ft = p.parse_function_type()
    p.check_operand_types(operands, ft.inputs, pos)
    attrs["callee"] = callee
    return Operation(name, operands, list(ft.results), attrs)


def print_call(pr, op: Operation, indent: int):
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


# --- arith.constant

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


def print_arith_constant(pr, op: Operation, indent: int):
    v = op.attributes.get("value")
    if v is None or len(op.results) != 1 or getattr(v, "type", None) != op.results[0].type:
        return None
    rest = [(k, x) for k, x in op.attributes.items() if k != "value"]
    s = f"{'  ' * indent}{pr.name_results(op)}{op.name} "
    if rest:
        s += pr.attr_dict(rest) + " "
    return [s + pr.attr(v) + pr.trailing_loc(op.location)]


# --- arith.<binary>

def parse_arith_binary(p, name):
    sc = p.sc
    lhs = p.parse_value_use()
    sc.expect(",")
    rhs = p.parse_value_use()
    attrs = {}
    if sc.peek("{"):
        attrs.update(p.parse_attr_dict_body().entries)
    sc.expect(":")
    sc.ws()
    pos = sc.pos
    t = p.parse_type()
    p.check_operand_types([lhs, rhs], [t, t], pos)
    return Operation(name, [lhs, rhs], [t], attrs)


def print_arith_binary(pr, op: Operation, indent: int):
    if len(op.operands) != 2 or len(op.results) != 1:
        return None
    t = op.results[0].type
    if op.operands[0].type != t or op.operands[1].type != t:
        return None
    s = f"{'  ' * indent}{pr.name_results(op)}{op.name} {pr.value(op.operands[0])}, {pr.value(op.operands[1])}"
    if op.attributes:
        s += " " + pr.attr_dict(list(op.attributes.items()))
    return [s + " : " + type_text(t) + pr.trailing_loc(op.location)]


# --- tensor.cast

def parse_tensor_cast(p, name):
    sc = p.sc
    src = p.parse_value_use()
    attrs = {}
    if sc.peek("{"):
        attrs.update(p.parse_attr_dict_body().entries)
    sc.expect(":")
    sc.ws()
    pos = sc.pos
    p.check_operand_types([src], [p.parse_type()], pos)
    sc.expect_keyword("to")
    return Operation(name, [src], [p.parse_type()], attrs)


def print_tensor_cast(pr, op: Operation, indent: int):
    if len(op.operands) != 1 or len(op.results) != 1:
        return None
    s = f"{'  ' * indent}{pr.name_results(op)}{op.name} {pr.value(op.operands[0])}"
    if op.attributes:
        s += " " + pr.attr_dict(list(op.attributes.items()))
    s += f" : {type_text(op.operands[0].type)} to {type_text(op.results[0].type)}"
    return [s + pr.trailing_loc(op.location)]


# --- tensor.insert

def parse_tensor_insert(p, name):
    """`tensor.insert %scalar into %dest[%i, ...] [attr-dict] : tensor-type`."""
    scalar = p.parse_value_use()
    p.sc.expect_keyword("into")
    dest = p.parse_value_use()
    idx = _parse_indices(p)
    attrs, t, type_pos = _attrs_colon_type(p)
    if not isinstance(t, TensorType):
        raise p.sc.error("tensor.insert needs a tensor type", type_pos)
    p.check_operand_types([scalar, dest] + idx, [t.element_type, t] + [ELEMENT_TYPES["index"]] * len(idx), type_pos)
    return Operation(name, [scalar, dest] + idx, [t], attrs)


def print_tensor_insert(pr, op: Operation, indent: int):
    if len(op.operands) < 2 or len(op.results) != 1:
        return None
    idx = ", ".join(pr.value(v) for v in op.operands[2:])
    s = (f"{'  ' * indent}{pr.name_results(op)}{op.name} {pr.value(op.operands[0])} into "
         f"{pr.value(op.operands[1])}[{idx}]")
    if op.attributes:
        s += " " + pr.attr_dict(list(op.attributes.items()))
    return [s + f" : {type_text(op.operands[1].type)}" + pr.trailing_loc(op.location)]


# --- tensor.extract

def parse_tensor_extract(p, name):
    """`tensor.extract %t[%i, ...] [attr-dict] : tensor-type` (the result is one element)."""
    sc = p.sc
    src = p.parse_value_use()
    idx = _parse_indices(p)
    attrs, t, type_pos = _attrs_colon_type(p)
    if not isinstance(t, TensorType):
        raise sc.error("tensor.extract needs a tensor type", type_pos)
    p.check_operand_types([src] + idx, [t] + [ELEMENT_TYPES["index"]] * len(idx), type_pos)
    return Operation(name, [src] + idx, [t.element_type], attrs)


def print_tensor_extract(pr, op: Operation, indent: int):
    if len(op.operands) < 1 or len(op.results) != 1:
        return None
    idx = ", ".join(pr.value(v) for v in op.operands[1:])
    s = f"{'  ' * indent}{pr.name_results(op)}{op.name} {pr.value(op.operands[0])}[{idx}]"
    if op.attributes:
        s += " " + pr.attr_dict(list(op.attributes.items()))
    return [s + f" : {type_text(op.operands[0].type)}" + pr.trailing_loc(op.location)]


# --- scf.for

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
    sc.ws()
    pos = sc.pos
    if sc.accept(":"):
        iv_type = p.parse_type()
    p.check_operand_types(bounds + inits, [iv_type] * 3 + result_types, pos)
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


def print_scf_for(pr, op: Operation, indent: int):
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
