"""Text syntax of the Shardy (`sdy`) dialect: its attributes (`#sdy.sharding<@mesh, [{"x"}, {}]>`,
`#sdy.mesh<["x"=4]>`, `#sdy<manual_axes{"x"}>`, `#sdy.op_sharding_rule<([i, j])->([i]) {i=4, j=2},
custom>`, ...) and the pretty forms of the ops JAX writes (`sdy.mesh`, `sdy.sharding_constraint`,
`sdy.reshard`, `sdy.manual_computation`, `sdy.return`, `sdy.sharding_group`), read and written
character for character as Shardy's parsers and printers do (shardy/dialect/sdy/ir/attrs.td,
ops.td, parsers.cc, printers.cc)."""
from __future__ import annotations

import re

from ..ir import sdy as Y
from ..ir.attributes import DictAttr, IntegerAttr, StringAttr, SymbolRefAttr
from ..ir.core import Operation
from ..ir.types import ELEMENT_TYPES
from .print_types import escape_string, ftype, type_text

_FACTOR = re.compile(r"z_([0-9]+)|([i-z])")
_START_AT_Z = ord("z") - ord("i")


def factor_symbol(i: int) -> str:
    """Shardy's name of factor `i`: i, j, ..., z, then z_1, z_2, ..."""
    return chr(ord("i") + i) if i <= _START_AT_Z else f"z_{i - _START_AT_Z}"


# ----------------------------------------------------------------------------- printing

def _axis_ref(a: Y.SdyAttr) -> str:
    name, sub = a.params
    s = escape_string(name)
    if sub is not None:
        s += f":({sub.params[0]}){sub.params[1]}"
    return s


def _axis_list(axes) -> str:
    return ", ".join(_axis_ref(a) for a in axes)


def _dim_sharding(d: Y.SdyAttr) -> str:
    axes, closed, priority = d.params
    s = "{" + _axis_list(axes)
    if not closed:
        s += ", ?" if axes else "?"
    s += "}"
    if priority is not None:
        s += f"p{priority}"
    return s


def _mesh_body(m: Y.SdyAttr) -> str:
    axes, ids = m.params
    s = "<[" + ", ".join(f"{escape_string(a.params[0])}={a.params[1]}" for a in axes) + "]"
    if ids:
        s += ", device_ids=[" + ", ".join(str(i) for i in ids) + "]"
    return s + ">"


def _sharding_body(sh: Y.SdyAttr) -> str:
    mesh_or_ref, dims, replicated, unreduced, red = sh.params
    if isinstance(mesh_or_ref, Y.SdyAttr):
        s = "<mesh" + _mesh_body(mesh_or_ref)
    else:
        s = "<" + _symbol(mesh_or_ref.root)
    s += ", [" + ", ".join(_dim_sharding(d) for d in dims) + "]"
    if replicated:
        s += ", replicated={" + _axis_list(replicated) + "}"
    if unreduced:
        s += ", unreduced=" + ("" if red == "sum" else red) + "{" + _axis_list(unreduced) + "}"
    return s + ">"


def _symbol(name: str) -> str:
    return "@" + name if re.fullmatch(r"[A-Za-z_][\w$.]*", name) else "@" + escape_string(name)


def _per_value_body(pv: Y.SdyAttr) -> str:
    return "[" + ", ".join(_sharding_body(s) for s in pv.params[0]) + "]"


def _tensor_mapping(t: Y.SdyAttr) -> str:
    return "[" + ", ".join("".join(factor_symbol(f) for f in d.params[0]) for d in t.params[0]) + "]"


def _rule_body(r: Y.SdyAttr) -> str:
    sizes, ins, outs, red, need, perm, blocked, custom = r.params
    s = "<(" + ", ".join(_tensor_mapping(t) for t in ins) + ")->(" + ", ".join(_tensor_mapping(t) for t in outs) + ")"
    if sizes:
        s += " {" + ", ".join(f"{factor_symbol(i)}={n}" for i, n in enumerate(sizes)) + "}"
    for name, fs in (("reduction", red), ("need_replication", need), ("permutation", perm),
                     ("blocked_propagation", blocked)):
        if fs:
            s += f" {name}={{" + ", ".join(factor_symbol(f) for f in fs) + "}"
    if custom:
        s += ", custom"
    return s + ">"


def print_attr(a: Y.SdyAttr) -> str:
    """The attribute as MLIR prints it on its own (with its `#sdy` prefix)."""
    k = a.kind
    if k == "mesh":
        return "#sdy.mesh" + _mesh_body(a)
    if k == "sharding":
        return "#sdy.sharding" + _sharding_body(a)
    if k == "sharding_per_value":
        return "#sdy.sharding_per_value<" + _per_value_body(a) + ">"
    if k == "manual_axes":
        return "#sdy<manual_axes{" + ", ".join(escape_string(n) for n in a.params[0]) + "}>"
    if k == "op_sharding_rule":
        return "#sdy.op_sharding_rule" + _rule_body(a)
    if k == "axis_ref_list":
        return "#sdy<axis_ref_list{" + _axis_list(a.params[0]) + "}>"
    if k == "axis_ref":
        return "#sdy<axis_ref" + _axis_ref(a) + ">"
    if k == "mesh_axis":
        return f"#sdy<mesh_axis{escape_string(a.params[0])}={a.params[1]}>"
    if k == "sub_axis_info":
        return f"#sdy<sub_axis_info({a.params[0]}){a.params[1]}>"
    if k == "dimension_sharding":
        return "#sdy<dimension_sharding" + _dim_sharding(a) + ">"
    if k == "tensor_mapping":
        return "#sdy<tensor_mapping" + _tensor_mapping(a) + ">"
    if k == "dim_mapping":
        return "#sdy<dim_mapping" + "".join(factor_symbol(f) for f in a.params[0]) + ">"
    raise TypeError(f"cannot print sdy attribute {a!r}")


# ----------------------------------------------------------------------------- parsing

def _p_axis_ref(sc) -> Y.SdyAttr:
    name = sc.string()
    sub = None
    if sc.accept(":"):
        sc.expect("(")
        pre = sc.integer()
        sc.expect(")")
        size = sc.integer()
        sub = (pre, size)
    return Y.axis_ref(name, sub)


def _p_axis_list(sc) -> tuple:
    """`{"a", "b":(1)2}` -> axis refs."""
    return tuple(sc.delimited("{", "}", lambda: _p_axis_ref(sc)))


def _p_dim_sharding(sc) -> Y.SdyAttr:
    sc.expect("{")
    axes, closed = [], True
    if not sc.accept("}"):
        while True:
            if sc.accept("?"):
                closed = False
                break
            axes.append(_p_axis_ref(sc))
            if not sc.accept(","):
                break
        sc.expect("}")
    priority = None
    m = sc.match(re.compile(r"p([0-9]+)"))
    if m:
        priority = sc.int_value(m.group(1), m.start(1))
        if priority >= 1 << 63:
            raise sc.error("priority does not fit in i64", m.start(1))
    return Y.dim_sharding(axes, closed, priority)


def _p_mesh_body(sc) -> Y.SdyAttr:
    sc.expect("<")
    sc.expect("[")
    axes = []
    if not sc.accept("]"):
        while True:
            n = sc.string()
            sc.expect("=")
            axes.append((n, sc.integer()))
            if not sc.accept(","):
                break
        sc.expect("]")
    ids = ()
    if sc.accept(","):
        sc.expect_keyword("device_ids")
        sc.expect("=")
        ids = tuple(sc.delimited("[", "]", sc.integer))
    sc.expect(">")
    return Y.mesh(axes, ids)


def _p_sharding_body(p) -> Y.SdyAttr:
    sc = p.sc
    sc.expect("<")
    if sc.peek("@"):
        mesh_or_ref = p._parse_symbol_ref()
    else:
        sc.expect_keyword("mesh")
        mesh_or_ref = _p_mesh_body(sc)
    sc.expect(",")
    dims = tuple(sc.delimited("[", "]", lambda: _p_dim_sharding(sc)))
    replicated, unreduced, red = (), (), "sum"
    while sc.accept(","):
        if sc.accept_keyword("replicated"):
            sc.expect("=")
            replicated = _p_axis_list(sc)
        elif sc.accept_keyword("unreduced"):
            sc.expect("=")
            for r in ("max", "min", "sum"):
                if sc.accept_keyword(r):
                    red = r
                    break
            unreduced = _p_axis_list(sc)
        else:
            raise sc.error("expected 'replicated' or 'unreduced'")
    sc.expect(">")
    return Y.sharding(mesh_or_ref, dims, replicated, unreduced, red)


def _p_per_value_list(p) -> Y.SdyAttr:
    return Y.SdyAttr("sharding_per_value", tuple([tuple(p.sc.delimited("[", "]", lambda: _p_sharding_body(p)))]))


def _p_factors(sc) -> tuple:
    """`ij` or `z_1k` -> factor indices (a dimension mapping)."""
    out = []
    sc.ws()
    while True:
        m = _FACTOR.match(sc.s, sc.pos)
        if not m:
            break
        if m.group(1) and len(m.group(1)) > 9:
            raise sc.error("factor index too large", sc.pos)
        sc.pos = m.end()
        out.append(int(m.group(1)) + _START_AT_Z if m.group(1) else ord(m.group(2)) - ord("i"))
    if not out:
        raise sc.error("expected a factor name (i, j, ..., z, z_1, ...)")
    return tuple(out)


def _p_tensor_mapping(sc) -> Y.SdyAttr:
    dims = sc.delimited("[", "]", lambda: Y.SdyAttr("dim_mapping", (_p_factors(sc),)))
    return Y.SdyAttr("tensor_mapping", (tuple(dims),))


def _p_rule_body(sc) -> Y.SdyAttr:
    sc.expect("<")
    ins = tuple(sc.delimited("(", ")", lambda: _p_tensor_mapping(sc)))
    sc.expect("->")
    outs = tuple(sc.delimited("(", ")", lambda: _p_tensor_mapping(sc)))
    sizes = ()
    if sc.peek("{"):
        pairs = sc.delimited("{", "}", lambda: (_p_factors(sc), sc.expect("="), sc.integer()))
        for i, (f, _, _n) in enumerate(pairs):
            if f != (i,):
                raise sc.error("factor sizes must name the factors in order (i, j, k, ...)")
        sizes = tuple(n for _, _, n in pairs)
    groups = {"reduction": (), "need_replication": (), "permutation": (), "blocked_propagation": ()}
    custom = False
    while True:
        if sc.accept(","):
            sc.expect_keyword("custom")
            custom = True
            continue
        for g in groups:
            if sc.accept_keyword(g):
                sc.expect("=")
                groups[g] = tuple(f[0] for f in sc.delimited("{", "}", lambda: _p_factors(sc)))
                break
        else:
            break
    sc.expect(">")
    return Y.SdyAttr("op_sharding_rule", (sizes, ins, outs, groups["reduction"], groups["need_replication"],
                                          groups["permutation"], groups["blocked_propagation"], custom))


def parse_attr(p, mnemonic: str, pos) -> Y.SdyAttr:
    """`#sdy.<mnemonic><...>` after its name (the `<` not yet read)."""
    sc = p.sc
    if mnemonic == "sharding":
        return _p_sharding_body(p)
    if mnemonic == "mesh":
        return _p_mesh_body(sc)
    if mnemonic == "sharding_per_value":
        sc.expect("<")
        a = _p_per_value_list(p)
        sc.expect(">")
        return a
    if mnemonic == "op_sharding_rule":
        return _p_rule_body(sc)
    raise sc.error(f"unknown sdy attribute #sdy.{mnemonic} (this reader knows #sdy.mesh, #sdy.sharding, "
                   "#sdy.sharding_per_value, #sdy.op_sharding_rule, #sdy<manual_axes...>, #sdy<axis_ref_list...>)", pos)


def parse_bare_attr(p, pos) -> Y.SdyAttr:
    """`#sdy<mnemonic ...>` after `#sdy` (the `<` not yet read)."""
    sc = p.sc
    sc.expect("<")
    kind = sc.bare_id("sdy attribute name")
    if kind == "manual_axes":
        a = Y.SdyAttr("manual_axes", (tuple(sc.delimited("{", "}", sc.string)),))
    elif kind == "axis_ref_list":
        a = Y.SdyAttr("axis_ref_list", (_p_axis_list(sc),))
    elif kind == "axis_ref":
        a = _p_axis_ref(sc)
    elif kind == "dimension_sharding":
        a = _p_dim_sharding(sc)
    elif kind in ("mesh", "sharding", "sharding_per_value", "op_sharding_rule"):
        a = parse_attr(p, kind, pos)
    else:
        raise sc.error(f"unknown sdy attribute #sdy<{kind}...>", pos)
    sc.expect(">")
    return a


# ----------------------------------------------------------------------------- ops

def _trailing_attrs(p, attrs: dict):
    if p.sc.peek("{"):
        attrs.update(p.parse_attr_dict_body().entries)


def _print_extra(pr, op, skip) -> str:
    rest = [(k, v) for k, v in op.attributes.items() if k not in skip]
    return " " + pr.attr_dict(rest) if rest else ""


def parse_mesh(p, name):
    sc = p.sc
    sym = p._parse_symbol_ref().root
    sc.expect("=")
    attrs = {"sym_name": StringAttr(sym), "mesh": _p_mesh_body(sc)}
    _trailing_attrs(p, attrs)
    return Operation(name, [], [], attrs)


def print_mesh(pr, op, indent):
    m, sym = op.attributes.get("mesh"), op.attributes.get("sym_name")
    if not isinstance(m, Y.SdyAttr) or m.kind != "mesh" or not isinstance(sym, StringAttr):
        return None
    s = "  " * indent + f"sdy.mesh {pr.symbol(sym.value)} = {_mesh_body(m)}"
    return [s + _print_extra(pr, op, ("mesh", "sym_name")) + pr.trailing_loc(op.location)]


def parse_sharding_op(p, name):
    """`sdy.sharding_constraint %x <@mesh, [...]> : type` (and sdy.reshard)."""
    sc = p.sc
    x = p.parse_value_use()
    attrs = {"sharding": _p_sharding_body(p)}
    _trailing_attrs(p, attrs)
    sc.expect(":")
    sc.ws()
    pos = sc.pos
    t = p.parse_type()
    p.check_operand_types([x], [t], pos)
    return Operation(name, [x], [t], attrs)


def print_sharding_op(pr, op, indent):
    sh = op.attributes.get("sharding")
    if not isinstance(sh, Y.SdyAttr) or sh.kind != "sharding" or len(op.operands) != 1 or len(op.results) != 1:
        return None
    s = "  " * indent + pr.name_results(op) + f"{op.name} {pr.value(op.operands[0])} {_sharding_body(sh)}"
    return [s + _print_extra(pr, op, ("sharding",)) + " : " + type_text(op.results[0].type) + pr.trailing_loc(op.location)]


def parse_return(p, name):
    sc = p.sc
    attrs = {}
    _trailing_attrs(p, attrs)
    vals = p.parse_value_list()
    if vals:
        sc.expect(":")
        sc.ws()
        pos = sc.pos
        types = [p.parse_type()]
        while sc.accept(","):
            types.append(p.parse_type())
        p.check_operand_types(vals, types, pos)
    return Operation(name, vals, [], attrs)


def print_return(pr, op, indent):
    s = "  " * indent + "sdy.return" + _print_extra(pr, op, ())
    if op.operands:
        s += " " + ", ".join(pr.value(v) for v in op.operands) + " : " + ", ".join(type_text(v.type) for v in op.operands)
    return [s + pr.trailing_loc(op.location)]


def parse_sharding_group(p, name):
    sc = p.sc
    x = p.parse_value_use()
    sc.expect_keyword("group_id")
    sc.expect("=")
    attrs = {"group_id": IntegerAttr(sc.integer(), ELEMENT_TYPES["i64"])}
    _trailing_attrs(p, attrs)
    sc.expect(":")
    sc.ws()
    pos = sc.pos
    p.check_operand_types([x], [p.parse_type()], pos)
    return Operation(name, [x], [], attrs)


def print_sharding_group(pr, op, indent):
    g = op.attributes.get("group_id")
    if not isinstance(g, IntegerAttr) or len(op.operands) != 1:
        return None
    s = "  " * indent + f"sdy.sharding_group {pr.value(op.operands[0])} group_id={g.value}"
    return [s + _print_extra(pr, op, ("group_id",)) + " : " + type_text(op.operands[0].type) + pr.trailing_loc(op.location)]


_VALUE_DEF = re.compile(r"%([\w$.\-]+)")


def parse_manual_computation(p, name):
    sc = p.sc
    sc.expect("(")
    operands = p.parse_value_list()
    sc.expect(")")
    attrs = {}
    for key in ("in_shardings", "out_shardings"):
        sc.expect_keyword(key)
        sc.expect("=")
        attrs[key] = _p_per_value_list(p)
    sc.expect_keyword("manual_axes")
    sc.expect("=")
    attrs["manual_axes"] = Y.SdyAttr("manual_axes", (tuple(sc.delimited("{", "}", sc.string)),))
    sc.expect("(")
    args, locs, srcs = [], [], []
    from ..ir.core import Value
    if not sc.accept(")"):
        while True:
            m = sc.match(_VALUE_DEF)
            if not m:
                raise sc.error("expected a region argument (%name: type)")
            srcs.append(sc.location(m.start()))
            sc.expect(":")
            args.append(Value(p.parse_type(), m.group(1)))
            locs.append(p.parse_trailing_location() if sc.peek("loc(") else None)
            if not sc.accept(","):
                break
        sc.expect(")")
    region = p.parse_region(entry_args=args, entry_sources=srcs)
    region.blocks[0].arg_locations = locs
    _trailing_attrs(p, attrs)
    sc.expect(":")
    sc.ws()
    pos = sc.pos
    ft = p.parse_function_type()
    p.check_operand_types(operands, ft.inputs, pos)
    return Operation(name, operands, list(ft.results), attrs, [region])


def print_manual_computation(pr, op, indent):
    a = op.attributes
    ins, outs, axes = a.get("in_shardings"), a.get("out_shardings"), a.get("manual_axes")
    if not (isinstance(ins, Y.SdyAttr) and isinstance(outs, Y.SdyAttr) and isinstance(axes, Y.SdyAttr)) \
            or len(op.regions) != 1 or len(op.regions[0].blocks) != 1:
        return None
    pad = "  " * indent
    block = op.regions[0].blocks[0]
    s = pad + pr.name_results(op) + "sdy.manual_computation(" + ", ".join(pr.value(v) for v in op.operands) + ")"
    s += " in_shardings=" + _per_value_body(ins) + " out_shardings=" + _per_value_body(outs)
    s += " manual_axes={" + ", ".join(escape_string(n) for n in axes.params[0]) + "}"
    rl = pr.region(op.regions[0], indent, entry_args=False)
    # region arguments are named when the region is entered: print the region first
    head_args = "(" + ", ".join(f"{pr.name_arg(v)}: {type_text(v.type)}{pr.arg_loc(block, i)}"
                                for i, v in enumerate(block.arguments)) + ")"
    lines = [s + " " + head_args + " " + rl[0]] + rl[1:]
    lines[-1] += _print_extra(pr, op, ("in_shardings", "out_shardings", "manual_axes"))
    lines[-1] += " : " + ftype([v.type for v in op.operands], [r.type for r in op.results]) + pr.trailing_loc(op.location)
    return lines


OPS = {
    "sdy.mesh": (parse_mesh, print_mesh),
    "sdy.sharding_constraint": (parse_sharding_op, print_sharding_op),
    "sdy.reshard": (parse_sharding_op, print_sharding_op),
    "sdy.return": (parse_return, print_return),
    "sdy.sharding_group": (parse_sharding_group, print_sharding_group),
    "sdy.manual_computation": (parse_manual_computation, print_manual_computation),
}
