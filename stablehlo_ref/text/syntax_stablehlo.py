"""Hand-written syntax of the StableHLO/CHLO ops whose form upstream writes by hand, not by a
declarative format (`stablehlo.constant`, `stablehlo.while`, `stablehlo.reduce` with its
compact form, `chlo.scan`) and of the interpreter dialect (`probe`, `print`): each op's parse
function and its print function side by side. custom_syntax.py registers them."""
from __future__ import annotations

from .. import spec as _spec
from ..ir.attributes import (DenseArrayAttr, DenseElementsAttr, DenseResourceAttr, IntegerAttr,
                             StringAttr)
from ..ir.core import Block, Operation, Region, Value
from ..ir.types import ELEMENT_TYPES, TensorType
from .print_types import escape_string, ftype, type_text
from .syntax_builtin import _VALUE_DEF


COMMUTATIVE_REDUCERS = frozenset(f"{d}.{n}" for d in ("stablehlo", "chlo") for n in
                                 ("add", "and", "maximum", "minimum", "multiply", "or", "xor"))


def _reduce_compact(op, block):
    ops = block.operations
    if len(ops) != 2:
        return None
    inner, ret = ops
    if inner.regions or len(inner.results) != 1 or inner.attributes:
        return None
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


# --- stablehlo.constant

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


def print_constant(pr, op: Operation, indent: int):
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


# --- stablehlo.while

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
        sc.ws()
        pos = sc.pos
        types = p.parse_type_list()
        p.check_operand_types(operands, types, pos)
    attrs = {}
    if sc.accept_keyword("attributes"):
        attrs.update(p.parse_attr_dict_body().entries)
    sc.expect_keyword("cond")
    cond = p.parse_region(entry_args=[Value(t, n) for t, n in zip(types, iter_names)], entry_sources=iter_srcs)
    sc.expect_keyword("do")
    body = p.parse_region(entry_args=[Value(t, n) for t, n in zip(types, iter_names)], entry_sources=iter_srcs)
    return Operation(name, operands, types, attrs, [cond, body])


def print_while(pr, op: Operation, indent: int):
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


# --- stablehlo.reduce

# the compact form with one input as jax prints it, `(%x init: %c) applies stablehlo.add across
# dimensions = [1] : (t, t) -> t`: matched at once, then built below as the general parse builds it
_REDUCE_FAST = None
_FAST_REDUCE = True         # (tests turn it off to compare)


def _reduce_fast_regex():
    global _REDUCE_FAST
    if _REDUCE_FAST is None:
        import re
        from .fastpath import _FTYPE, _INT_LIST, _VALUE, WS
        _REDUCE_FAST = re.compile(
            r"\(" + _VALUE + WS + r"init(?![\w$.])" + WS + ":" + _VALUE + WS + r"\)(?!" + WS + ",)" + WS +
            r"applies(?![\w$.])" + WS + r"([A-Za-z_][\w$.]*)" + WS + r"across(?![\w$.])" + WS +
            r"dimensions(?![\w$.])" + WS + "=" + WS + _INT_LIST + WS + ":" + WS + _FTYPE)
    return _REDUCE_FAST


def _parse_reduce_fast(p, m):
    """(operands, compact op name, dims, function type inputs, results) of a matched
    _REDUCE_FAST, or None where the general parse would read or report anything else."""
    from .fastpath import _ftype, _ints, _same_types
    defs = p.visible.get(m.group(1))
    idefs = p.visible.get(m.group(2))
    if not defs or not idefs:
        return None
    compact = m.group(3)
    if "." not in compact or compact not in COMMUTATIVE_REDUCERS:
        return None
    dims = _ints(m.group(4)) if m.group(4) else ()
    if any(not -(1 << 63) <= x < 1 << 63 for x in dims):
        return None
    io = _ftype(p, m.group(5), m.group(6), m.group(7))
    if io is None:
        return None
    operands = [defs[-1], idefs[-1]]
    if not _same_types(operands, io[0]):
        return None
    return operands, compact, dims, io[0], io[1]


def parse_reduce(p, name):
    sc = p.sc
    dialect = name.split(".")[0]
    inputs, inits = [], []
    # upstream's reduce parser locates the op (and, in the compact form, its reducer body) at
    # the token after the op name
    sc.ws()
    start = sc.location()
    m = _reduce_fast_regex().match(sc.s, sc.pos) if _FAST_REDUCE and dialect == "stablehlo" else None
    got = _parse_reduce_fast(p, m) if m is not None else None
    if got is not None:
        operands, compact, dims, ins, results = got
        sc.pos = m.end()
        attrs = {"dimensions": DenseArrayAttr(ELEMENT_TYPES["i64"], tuple(dims))}
        return _compact_reduce(p, name, dialect, start, operands, compact, ins, results, attrs)
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
    dims = sc.delimited("[", "]", sc.i64)
    attrs = {}
    if sc.peek("{"):
        attrs.update(p.parse_attr_dict_body().entries)
    sc.expect(":")
    sc.ws()
    type_pos = sc.pos
    ft = p.parse_function_type()
    attrs["dimensions"] = DenseArrayAttr(ELEMENT_TYPES["i64"], tuple(dims))
    operands = inputs + inits
    p.check_operand_types(operands, ft.inputs, type_pos)
    if compact is not None:
        return _compact_reduce(p, name, dialect, start, operands, compact, ft.inputs, ft.results, attrs)
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


def _compact_reduce(p, name, dialect, start, operands, compact, ins, results, attrs):
    """The reduce of the compact form (`applies <op>`) once its function type is read."""
    sc = p.sc
    loc = p.parse_trailing_location() if sc.peek("loc(") else None
    if not ins:
        raise sc.error("input types missing in reduce function type")
    in0 = ins[0]
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
    op = Operation(name, operands, list(results), attrs, [Region([block])])
    if loc is not None:
        op.location = loc
    op.source = start
    return op


def print_reduce(pr, op: Operation, indent: int):
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


# --- chlo.scan

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
    sc.ws()
    dim_at = sc.pos
    dim = sc.integer()
    if not -(1 << 63) <= dim < 1 << 63:
        raise sc.error(f"dimension {dim} does not fit in i64", dim_at)
    attrs = {}
    if sc.accept_keyword("attributes"):
        attrs.update(p.parse_attr_dict_body().entries)
    body = p.parse_region()
    sc.expect(":")
    sc.ws()
    type_pos = sc.pos
    ft = p.parse_function_type()
    if len(ft.inputs) != len(inputs) + len(inits):
        raise sc.error("operand types must match the number of inputs and inits", type_pos)
    p.check_operand_types(inputs + inits, ft.inputs, type_pos)
    n_out = len(ft.results) - len(inits)
    if n_out < 0:
        raise sc.error("not enough result types to cover the required carries")
    attrs["dimension"] = IntegerAttr(dim, ELEMENT_TYPES["i64"])
    i32 = ELEMENT_TYPES["i32"]
    attrs["operandSegmentSizes"] = DenseArrayAttr(i32, (len(inputs), len(inits)))
    attrs["resultSegmentSizes"] = DenseArrayAttr(i32, (n_out, len(inits)))
    return Operation(name, inputs + inits, list(ft.results), attrs, [body])


def print_scan(pr, op: Operation, indent: int):
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
    ft = ftype([v.type for v in op.operands], [r.type for r in op.results])
    lines = [s + " " + rl[0]] + rl[1:]
    lines[-1] += " : " + ft + pr.trailing_loc(op.location)
    return lines


# --- interpreter.probe

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
    sc.ws()
    pos = sc.pos
    t = p.parse_type()
    p.check_operand_types([operand], [t], pos)
    return Operation(name, [operand], [t], attrs)


def print_probe(pr, op: Operation, indent: int):
    pid = op.attributes.get("probe_id")
    if not isinstance(pid, StringAttr) or len(op.operands) != 1 or len(op.results) != 1:
        return None
    rest = [(k, v) for k, v in op.attributes.items() if k != "probe_id"]
    s = f"{'  ' * indent}{pr.name_results(op)}{op.name} {pr.value(op.operands[0])}, probe_id = {escape_string(pid.value)}"
    if rest:
        s += " " + pr.attr_dict(rest)
    return [s + " : " + type_text(op.results[0].type) + pr.trailing_loc(op.location)]


# --- interpreter.print

def parse_print(p, name):
    """`interpreter.print %x : type`."""
    sc = p.sc
    operand = p.parse_value_use()
    attrs = {}
    if sc.peek("{"):
        attrs.update(p.parse_attr_dict_body().entries)
    sc.expect(":")
    sc.ws()
    pos = sc.pos
    p.check_operand_types([operand], [p.parse_type()], pos)
    return Operation(name, [operand], [], attrs)


def print_unary_typed(pr, op: Operation, indent: int):
    """`name %x {attrs} : type` (interpreter.print)."""
    if len(op.operands) != 1 or op.results:
        return None
    s = f"{'  ' * indent}{op.name} {pr.value(op.operands[0])}"
    if op.attributes:
        s += " " + pr.attr_dict(list(op.attributes.items()))
    return [s + " : " + type_text(op.operands[0].type) + pr.trailing_loc(op.location)]
