"""Fast paths of the parser for the most common one-line op spellings, e.g.
`%x = stablehlo.add %a, %b : tensor<8x16xf32>`: an op's spec'd format is compiled once into
one regex over the op's whole text plus a short list of actions on its groups.

A fast path is only an optimisation: it accepts a subset of what the general parser
(formats.py) accepts and builds the same op from it. Whenever anything is unusual (a comment
or an attribute dictionary inside the op, a type not seen before in this module, an undefined
value, a type mismatch, an optional group) it gives up before changing any parser state, and
the general parser reads the op from the same position, so every error message and location
stays the general parser's.

Each fast path returns the op's parts (operands, its one result type, attributes, end); the parser
builds the op from them. The generic form takes a fast path without properties, or with
properties `<{...}>` spelled exactly as the same op's last ones, which the general parser read
and cached (Parser.props_cache; e.g. every dot_general of a model). Lists of types and the
dot_general/i64-list/constant attributes are cached by their text per parse (Parser.fast_cache):
types and attributes are immutable, so ops share them as they share cached types."""
from __future__ import annotations

import re

from ..errors import StableHLOError
from ..ir.attributes import DenseArrayAttr, DenseElementsAttr, StructAttr, SymbolRefAttr
from ..ir.types import ELEMENT_TYPES
from .format_ast import Custom, FuncType, Kw, Lit, Optional_, TypeDir, Var, _is_variadic_key, _kind_of, _type_key

WS = r"[ \t\n\r\f\v]*"
_NAME = r"%[\w$.\-]+(?:#[0-9]+)?"
_VALUE = WS + "%([\\w$.\\-]+(?:#[0-9]+)?)"
_VALUES = WS + "(%[\\w$.\\-]+(?:#[0-9]+)?(?:" + WS + "," + WS + _NAME + ")*)"
_VALUE_NAMES = re.compile(r"%([\w$.\-]+(?:#[0-9]+)?)")
# what the type parser caches (parse_attrs._SIMPLE_TENSOR), spelled so that a text matches it in
# one way only: lists of them (`(?:, type)*`) backtrack in linear time where the op fails to match
_TYPE = r"tensor<(?:[0-9?]+x)*[a-z][a-z0-9]*>"
_TYPES = _TYPE + "(?:" + WS + "," + WS + _TYPE + ")*"
_TYPE_NAMES = re.compile(_TYPE)
_KW_END = r"(?![\w$.])"
_INT = r"-?[0-9]{1,18}(?![\w.])"
_INT_LIST = r"\[" + WS + "((?:" + _INT + "(?:" + WS + "," + WS + _INT + ")*)?)" + WS + r"\]"
# a function type: inputs, then one result or a parenthesised list not followed by `->` (or a
# comment, behind which the general parser would look for one)
_FTYPE = (r"\(" + WS + "((?:" + _TYPES + ")?)" + WS + r"\)" + WS + "->" + WS +
          "(?:(" + _TYPE + ")|\\(" + WS + "((?:" + _TYPES + ")?)" + WS + r"\)(?!" + WS + "(?:->|//)))")
_I64 = ELEMENT_TYPES["i64"]
_INTS = re.compile(r"-?[0-9]+")


def _ints(text):
    if text.isdigit() and text.isascii():
        return (int(text),)
    return tuple(int(x) for x in _INTS.findall(text))


class _Unsupported(Exception):
    pass


# Elements that only set attributes (an enum or integer in its stripped form, `[a:b, ...]` slice
# ranges, `precision = [...]`) are matched by the op's regex and built by the general parser's
# own step for the element (formats.py), run on just the matched text, once per parse for each
# text (the attributes are immutable; see _run_step)
_ENUM_TOKEN = r"[A-Za-z_][\w$.]*"                  # (as Scanner.bare_id reads it)
_INT_TOKEN = r"-?[0-9]{1,18}(?![\w.])"
_ATTR_INT_KINDS = ("i64", "i32", "ui64", "ui32")
_SLICE_RANGES = r"\[[ 0-9:,\-]*\]"
_PRECISION = r"," + WS + r"precision(?![\w$.])" + WS + "=" + WS + r"\[[A-Za-z_0-9, ]*\]"


def _attr_token(op_spec, e):
    """The regex of an attribute Var the fast path reads, else None."""
    if not isinstance(e, Var):
        return None
    kind, s = _kind_of(op_spec, e.name)
    if kind != "attr":
        return None
    from .formats import ENUM_KINDS
    if s.kind in ENUM_KINDS:
        return _ENUM_TOKEN
    if s.kind in _ATTR_INT_KINDS:
        return _INT_TOKEN
    return None


def _run_step(p, step, op_spec, s, start, end):
    """The attributes (as (name, attribute) pairs) that the general parser's format `step`
    reads from exactly s[start:end], or None where it reads anything else or fails; the parser
    is left as it was."""
    from .formats import _State
    sc = p.sc
    save = sc.pos
    depth = p.depth
    st = _State(op_spec)
    sc.pos = start
    try:
        step(p, st)
        # (where it ends: at `end`, or past blanks after it that it skipped looking on)
        ok = ((sc.pos == end or (sc.pos > end and s[end:sc.pos].isspace())) and not st.types and not st.operands and st.all_operands is None
              and not st.regions)
    except StableHLOError:
        ok = False
    finally:
        sc.pos = save
        p.depth = depth
    return tuple(st.attrs.items()) if ok else None


def _compile(op_spec, fmt, op_name):
    """(regex, actions, operand_names, result_specs) for a format of supported elements, else None."""
    parts = []
    actions = []
    ngroups = 0

    def group(frag, n=1):
        nonlocal ngroups
        parts.append(frag)
        first = ngroups + 1
        ngroups += n
        return first

    from .formats import _compile_step
    for idx, e in enumerate(fmt):
        key = (op_name, idx)
        if isinstance(e, Lit):
            t = e.text
            if t.strip() == "":
                continue
            if t[0].isalpha():
                parts.append(WS + re.escape(t) + _KW_END)
            else:
                parts.append(WS + re.escape(t))
        elif isinstance(e, Var):
            kind, s = _kind_of(op_spec, e.name)
            if kind == "operand":
                if s.variadic or s.optional:
                    raise _Unsupported
                actions.append(("operand", e.name, group(_VALUE)))
            elif kind == "attr" and s.kind == "dense_i64_array":
                actions.append(("i64s", e.name, group(WS + _INT_LIST)))
            elif _attr_token(op_spec, e) is not None:
                actions.append(("step", (key, _compile_step(op_spec, e, op_name)),
                                group(WS + "(" + _attr_token(op_spec, e) + ")")))
            else:
                raise _Unsupported
        elif isinstance(e, Optional_):
            # `(, $attr^)?`: read where a `,` follows (as the general parser peeks), else absent
            if (len(e.elems) != 2 or e.else_elems or not isinstance(e.elems[0], Lit)
                    or e.elems[0].text.strip() != "," or _attr_token(op_spec, e.elems[1]) is None):
                raise _Unsupported
            actions.append(("step", (key, _compile_step(op_spec, e.elems[1], op_name)),
                            group("(?:" + WS + "," + WS + "(" + _attr_token(op_spec, e.elems[1]) + ")|(?!" + WS + ",))")))
        elif isinstance(e, Kw):
            if e.name == "operands":
                actions.append(("operands", None, group("(?:" + _VALUES + ")?")))
                parts.append("(?!" + WS + ",)")      # (where the general parser may read on)
            elif e.name == "attr-dict":
                parts.append("(?!" + WS + r"\{)")
            else:
                raise _Unsupported
        elif isinstance(e, TypeDir):
            key = _type_key(e.arg)
            if _is_variadic_key(op_spec, key):
                raise _Unsupported
            actions.append(("types", (key,), group(WS + "(" + _TYPE + ")")))
        elif isinstance(e, FuncType):
            actions.append(("ftype", (_type_key(e.inputs), _type_key(e.results)), group(WS + _FTYPE, 3)))
        elif isinstance(e, Custom):
            if e.name == "SameOperandsAndResultType":
                # one type for all, or a function type with one input per operand (as the
                # directive reads one)
                keys = tuple(_type_key(a) for a in e.args)
                if any(k == "operands" or _is_variadic_key(op_spec, k) for k in keys[:-1]):
                    raise _Unsupported
                actions.append(("same", keys, group(WS + "(?:(" + _TYPE + ")|" + _FTYPE + ")", 4)))
            elif e.name == "DotDimensionNumbers":
                first = group("(?:(?=" + WS + "batching_dims" + _KW_END + ")" + WS + "batching_dims" + _KW_END +
                              WS + "=" + WS + _INT_LIST + WS + "x" + _KW_END + WS + _INT_LIST + WS + ",)?" +
                              WS + "contracting_dims" + _KW_END + WS + "=" + WS + _INT_LIST +
                              WS + "x" + _KW_END + WS + _INT_LIST, 4)
                actions.append(("dot", e.args[0].name, first))
            elif e.name in ("PrecisionConfigAndAlgorithm", "PrecisionConfig"):
                # absent, or `, precision = [...]` with nothing after it the directive reads on into
                absent = "(?:precision|algorithm)" if e.name == "PrecisionConfigAndAlgorithm" else "precision"
                actions.append(("step", (key, _compile_step(op_spec, e, op_name)),
                                group("(?:(" + WS + _PRECISION + ")(?!" + WS + ",)|(?!" + WS + "," + WS + absent +
                                      _KW_END + "))")))
            elif e.name == "SliceRanges":
                actions.append(("step", (key, _compile_step(op_spec, e, op_name)), group(WS + "(" + _SLICE_RANGES + ")")))
            elif e.name == "SelectOpType":
                # `pred_type, type` (the functional form goes to the general parser)
                keys = tuple(_type_key(a) for a in e.args)
                if any(_is_variadic_key(op_spec, k) for k in keys):
                    raise _Unsupported
                actions.append(("select", keys, group(WS + "(" + _TYPE + ")" + WS + "," + WS + "(" + _TYPE + ")(?!" +
                                                      WS + ",)", 2)))
            else:
                raise _Unsupported
        else:
            raise _Unsupported
    last = fmt[-1] if fmt else None
    if not isinstance(last, (TypeDir, FuncType, Custom)) or (isinstance(last, Custom) and last.name not in (
            "SameOperandsAndResultType", "SelectOpType")):
        raise _Unsupported     # the op must end with its type, where the general parser stops too
    operand_names = tuple(o.name for o in op_spec.operands)
    results = tuple((r.name, "$" + r.name, r.variadic) for r in op_spec.results)
    if op_spec.regions:
        raise _Unsupported
    return re.compile("".join(parts)), tuple(actions), operand_names, results, op_spec


def _compile_same(op_spec, fmt):
    """The commonest format, `$a (, $b)* attr-dict : custom<SameOperandsAndResultType>(type($a),
    ..., type($result))` (elementwise ops), as (regex, operand count), else None."""
    names = [o.name for o in op_spec.operands]
    if (not names or any(o.variadic or o.optional for o in op_spec.operands) or len(op_spec.results) != 1
            or op_spec.results[0].variadic or op_spec.regions):
        return None
    want = []
    for i, n in enumerate(names):
        if i:
            want.append(("lit", ","))
        want.append(("var", n))
    want += [("kw", "attr-dict"), ("lit", ":"),
             ("same", tuple("$" + n for n in names) + ("$" + op_spec.results[0].name,))]
    got = []
    for e in fmt:
        if isinstance(e, Lit):
            if e.text.strip():
                got.append(("lit", e.text))
        elif isinstance(e, Var):
            got.append(("var", e.name))
        elif isinstance(e, Kw):
            got.append(("kw", e.name))
        elif isinstance(e, Custom) and e.name == "SameOperandsAndResultType":
            got.append(("same", tuple(_type_key(a) for a in e.args)))
        else:
            return None
    if got != want or _kind_of(op_spec, op_spec.results[0].name)[0] != "result":
        return None
    if any(_kind_of(op_spec, n)[0] != "operand" for n in names):
        return None
    rx = _VALUE + "".join(WS + "," + _VALUE for _ in names[1:]) + "(?!" + WS + r"\{)" + WS + ":" + WS + "(" + _TYPE + ")"
    return re.compile(rx), len(names)


def _same_path(compiled, other=None):
    """The fast path of a `_compile_same` format: fast(p, name, s, pos) -> (operands, result
    type, attributes, end) or None (nothing changed); where its regex does not match, `other`
    (the same op's _format_path) if given."""
    regex, n = compiled
    match = regex.match
    if n == 1:
        def fast(p, name, s, pos):
            if p.depth + 4 > p.limits.max_nesting:
                return None
            m = match(s, pos)
            if m is None:
                return None if other is None else other(p, name, s, pos)
            a, tt = m.groups()
            t = p.type_cache.get(tt)
            if t is None:
                return None
            defs = p.visible.get(a)
            if not defs:
                return None
            v = defs[-1]
            if v.type is not t and v.type != t:
                return None
            return [v], t, {}, m.end()
    elif n == 2:
        def fast(p, name, s, pos):
            if p.depth + 4 > p.limits.max_nesting:
                return None
            m = match(s, pos)
            if m is None:
                return None if other is None else other(p, name, s, pos)
            a, b, tt = m.groups()
            t = p.type_cache.get(tt)
            if t is None:
                return None
            visible = p.visible
            defs = visible.get(a)
            if not defs:
                return None
            v = defs[-1]
            if v.type is not t and v.type != t:
                return None
            defs = visible.get(b)
            if not defs:
                return None
            w = defs[-1]
            if w.type is not t and w.type != t:
                return None
            return [v, w], t, {}, m.end()
    else:
        def fast(p, name, s, pos):
            if p.depth + 4 > p.limits.max_nesting:
                return None
            m = match(s, pos)
            if m is None:
                return None if other is None else other(p, name, s, pos)
            t = p.type_cache.get(m.group(n + 1))
            if t is None:
                return None
            visible = p.visible
            ops = []
            for i in range(1, n + 1):
                defs = visible.get(m.group(i))
                if not defs:
                    return None
                v = defs[-1]
                if v.type is not t and v.type != t:
                    return None
                ops.append(v)
            return ops, t, {}, m.end()
    return fast


_COMPILED: dict = {}


def format_fast_path(op_name, op_spec, fmt):
    """The fast path of an op's format, fast(p, name, s, pos) -> (operands, result type,
    attributes, end) or None (nothing changed); None when its format has elements the fast
    path does not cover."""
    c = _COMPILED.get(op_name, 0)
    if c == 0:
        try:
            same = _compile_same(op_spec, fmt)
            if same is None:
                c = _format_path(_compile(op_spec, fmt, op_name))
            else:
                try:    # the same op with a function type (`(tensor<i32>) -> tensor<f32>`)
                    other = _format_path(_compile(op_spec, fmt, op_name))
                except (_Unsupported, KeyError, ValueError):
                    other = None
                c = _same_path(same, other)
        except (_Unsupported, KeyError, ValueError):   # (a format the general parser reports on)
            c = None
        _COMPILED[op_name] = c
    return c


def _types(p, text):
    """The types of a comma-separated list of simple tensor types `text` (as the type cache
    has them), as a tuple, or None where one is not in the cache."""
    got = p.fast_cache.get(text)
    if got is None:
        got = []
        cache = p.type_cache
        for tt in _TYPE_NAMES.findall(text):
            t = cache.get(tt)
            if t is None:
                return None
            got.append(t)
        got = p.fast_cache[text] = tuple(got)     # (types are immutable)
    return got


def _ftype(p, ins, one, many):
    """(inputs, results) of a matched _FTYPE, or None where a type is not in the cache."""
    i = _types(p, ins) if ins else ()
    o = _types(p, one if one is not None else many or "") if (one is not None or many) else ()
    if i is None or o is None:
        return None
    return i, o


def _format_path(compiled):
    regex, actions, operand_names, result_specs, op_spec = compiled

    def fast(p, name, s, pos):
        return parse_fast(p, regex, actions, operand_names, result_specs, s, pos, op_spec)
    return fast


def parse_fast(p, regex, actions, operand_names, result_specs, s, pos, op_spec=None):
    """(operands, result type, attributes, end) for the op body at `pos` read through a
    `_compile`d format, or None (nothing changed)."""
    if p.depth + 4 > p.limits.max_nesting:
        return None
    m = regex.match(s, pos)
    if m is None:
        return None
    visible = p.visible
    cache = p.type_cache
    g = m.group
    operands = {}
    all_operands = None
    types = {}
    attrs = {}
    for kind, name, gi in actions:
        if kind == "operand":
            defs = visible.get(g(gi))
            if not defs:
                return None
            operands[name] = [defs[-1]]
        elif kind == "types":
            t = cache.get(g(gi))
            if t is None:
                return None
            for k in name:
                types[k] = (t,)
        elif kind == "ftype":
            io = _ftype(p, g(gi), g(gi + 1), g(gi + 2))
            if io is None:
                return None
            types[name[0]], types[name[1]] = io
        elif kind == "operands":
            all_operands = _named_values(visible, g(gi))
            if all_operands is None:
                return None
        elif kind == "i64s":
            key = ("i64s", g(gi))
            a = p.fast_cache.get(key)
            if a is None:
                v = _ints(key[1])
                if any(not -(1 << 63) <= x < 1 << 63 for x in v):
                    return None
                a = p.fast_cache[key] = DenseArrayAttr(_I64, v)     # (immutable)
            attrs[name] = a
        elif kind == "step":
            text = g(gi)
            if text is None:            # (an optional group not spelled)
                continue
            ck = (name[0], text)
            got = p.fast_cache.get(ck)
            if got is None:
                got = _run_step(p, name[1], op_spec, s, m.start(gi), m.end(gi))
                if got is None:
                    return None
                p.fast_cache[ck] = got
            for k, a in got:
                attrs[k] = a
        elif kind == "same":
            tt = g(gi)
            if tt is not None:
                t = cache.get(tt)
                if t is None:
                    return None
                for k in name:
                    types[k] = (t,)
            else:
                io = _ftype(p, g(gi + 1), g(gi + 2), g(gi + 3))
                if io is None or len(io[0]) != len(name) - 1 or len(io[1]) != 1:
                    return None
                for k, t in zip(name, io[0]):
                    types[k] = (t,)
                types[name[-1]] = io[1]
        elif kind == "select":
            t1 = cache.get(g(gi))
            t2 = cache.get(g(gi + 1))
            if t1 is None or t2 is None:
                return None
            types[name[0]] = (t1,)
            for k in name[1:]:
                types[k] = (t2,)
        elif kind == "dot":
            key = ("dot", g(gi), g(gi + 1), g(gi + 2), g(gi + 3))
            a = p.fast_cache.get(key)
            if a is None:
                lb, rb = _ints(key[1] or ""), _ints(key[2] or "")
                lc, rc = _ints(key[3]), _ints(key[4])
                if any(not -(1 << 63) <= x < 1 << 63 for x in lb + rb + lc + rc):
                    return None
                a = p.fast_cache[key] = StructAttr("stablehlo", "dot", (     # (immutable)
                    ("lhs_batching_dimensions", lb), ("rhs_batching_dimensions", rb),
                    ("lhs_contracting_dimensions", lc), ("rhs_contracting_dimensions", rc)))
            attrs[name] = a
    # operands in spec order, their spelled types checked, result types (as parse_with_format)
    if all_operands is not None:
        ops = all_operands
    elif len(operand_names) == 1:
        ops = operands.get(operand_names[0], [])
    else:
        ops = []
        for n in operand_names:
            v = operands.get(n)
            if v:
                ops.extend(v)
    if "operands" in types:
        if not _same_types(ops, types["operands"]):
            return None
    elif all_operands is None:
        for n in operand_names:
            declared = types.get("$" + n)
            if declared is not None and not _same_types(operands.get(n, []), declared):
                return None
    elif operand_names and all("$" + n in types for n in operand_names):
        if not _same_types(ops, [t for n in operand_names for t in types["$" + n]]):
            return None
    results = types.get("results")
    if results is None:
        results = []
        for name, key, variadic in result_specs:
            t = types.get(key)
            if t is not None:
                results.extend(t)
            elif not variadic:
                return None
    if len(results) != 1:
        return None
    return ops, results[0], attrs, m.end()


def _same_types(values, declared) -> bool:
    if len(values) != len(declared):
        return False
    for v, t in zip(values, declared):
        if v.type is not t and v.type != t:
            return False
    return True


# `dense<literal> : type` of stablehlo.constant, for a literal the module already read with this
# type (parse_attrs' dense cache: same text, same type, the same attribute)
_CONSTANT = re.compile(WS + r"dense<([^<>()\[\]{}\"]{0,63}[^<>()\[\]{}\"\-])>" + WS + ":" + WS + "(" + _TYPE + ")")


def parse_constant_fast(p, op_name, s, pos):
    if p.depth + 4 > p.limits.max_nesting:
        return None
    m = _CONSTANT.match(s, pos)
    if m is None:
        return None
    key = ("constant", m.group(0))
    attr = p.fast_cache.get(key)
    if attr is None:
        t = p.type_cache.get(m.group(2))
        if t is None:
            return None
        attr = p.dense_cache.get((m.group(1), t))
        if attr is None:
            # the literal's first use: read by the general parser's attribute parser, as the
            # constant's syntax reads it, from just this text
            attr = _run_attribute(p, s, pos, m.end())
            if not isinstance(attr, DenseElementsAttr) or attr.type != t:
                return None
        p.fast_cache[key] = attr
    return [], attr.type, {"value": attr}, m.end()


def _run_attribute(p, s, start, end):
    """The attribute the general parser reads from exactly s[start:end], else None; the parser
    is left as it was."""
    sc = p.sc
    save = sc.pos
    depth = p.depth
    sc.pos = start
    try:
        a = p.parse_attribute()
        if sc.pos != end:
            a = None
    except StableHLOError:
        a = None
    finally:
        sc.pos = save
        p.depth = depth
    return a


# `loc("file":line:col)` and `loc(#alias)`
_LOC = re.compile(WS + r'loc\((?:"([^"\\\n]*)":([0-9]{1,18}):([0-9]{1,18})|#([\w$.\-]+))\)')


# the generic form without regions or attributes: `"d.op"(%a, %b) : (t, t) -> t`, or with
# properties `<{...}>` spelled as the op's last ones were (the parser's props_cache)
_GENERIC = re.compile(r"\((?:" + _VALUES + ")?" + WS + r"\)" + WS + "(?:(<)" + WS + "|:" + WS + _FTYPE + ")")
_GENERIC_TAIL = re.compile(WS + ">" + WS + ":" + WS + _FTYPE)


def parse_generic(p, op_name, s, pos):
    if p.depth + 4 > p.limits.max_nesting:
        return None
    m = _GENERIC.match(s, pos)
    if m is None:
        return None
    if m.group(2) is None:
        io = _ftype(p, m.group(3), m.group(4), m.group(5))
        attrs = {}
        end = m.end()
    else:
        # as Parser._parse_generic_op reads the properties from its cache
        last = p.props_cache.get(op_name)
        start = m.end()
        if last is None or p.depth > last[2] or not s.startswith(last[0], start):
            return None
        t = _GENERIC_TAIL.match(s, start + len(last[0]))
        if t is None:
            return None
        io = _ftype(p, t.group(1), t.group(2), t.group(3))
        attrs = dict(last[1])
        end = t.end()
    if io is None:
        return None
    ins, outs = io
    if len(outs) != 1:
        return None
    ops = _named_values(p.visible, m.group(1))
    if ops is None or not _same_types(ops, ins):
        return None
    return ops, outs[0], attrs, end


# stablehlo.constant in the generic form: `"stablehlo.constant"() <{value = dense<lit> : t}> : () -> t`
_GENERIC_CONSTANT = re.compile(
    r"\(" + WS + r"\)" + WS + "<" + WS + r"\{" + WS + r"value(?![\w$.])" + WS + "=" +
    _CONSTANT.pattern + WS + r"\}" + WS + ">(?!" + WS + r"[({])" + WS + ":" + WS + r"\(" + WS + r"\)" +
    WS + "->" + WS + "(" + _TYPE + ")")


def parse_generic_constant(p, op_name, s, pos):
    if p.depth + 4 > p.limits.max_nesting:
        return None
    m = _GENERIC_CONSTANT.match(s, pos)
    if m is None:
        return None
    key = ("generic constant", m.group(0))
    got = p.fast_cache.get(key)
    if got is None:
        cache = p.type_cache
        t = cache.get(m.group(2))
        rt = cache.get(m.group(3))
        if t is None or rt is None:
            return None
        attr = p.dense_cache.get((m.group(1), t))
        if attr is None:
            return None
        got = p.fast_cache[key] = (attr, rt)
    attr, rt = got
    return [], rt, {"value": attr}, m.end()


# `func.call @f(%a, %b) : (t, t) -> t` with one result (syntax_builtin.parse_call)
_CALL = re.compile(WS + r"@([\w$.\-]+)" + WS + r"\(" + "(?:" + _VALUES + ")?" + WS + r"\)" + WS + ":" + WS + _FTYPE)


def parse_call_fast(p, op_name, s, pos, nresults=None):
    """(operands, result type, attributes, end); with `nresults`, a call with that many results:
    (operands, result types, attributes, end)."""
    if p.depth + 4 > p.limits.max_nesting:
        return None
    m = _CALL.match(s, pos)
    if m is None:
        return None
    io = _ftype(p, m.group(3), m.group(4), m.group(5))
    if io is None or len(io[1]) != (1 if nresults is None else nresults):
        return None
    ops = _named_values(p.visible, m.group(2))
    if ops is None or not _same_types(ops, io[0]):
        return None
    key = ("callee", m.group(1))
    callee = p.fast_cache.get(key)
    if callee is None:
        callee = p.fast_cache[key] = SymbolRefAttr(m.group(1), ())     # (immutable)
    return ops, io[1][0] if nresults is None else io[1], {"callee": callee}, m.end()


# `return %a, %b : t, t` (func.return and stablehlo.return), the last op of its block
_RETURN = re.compile(r"[ \t\n\r\f\v]*(return|func\.return|stablehlo\.return)" + _VALUES + WS + ":" + WS +
                     "(" + _TYPES + ")(?=" + WS + r"\})")


def _named_values(visible, text):
    """The values the `%names` in `text` refer to (each name's latest definition in
    `visible`), or None where one is not defined."""
    vals = []
    if text:
        for n in _VALUE_NAMES.findall(text):
            defs = visible.get(n)
            if not defs:
                return None
            vals.append(defs[-1])
    return vals


def parse_return_fast(p, m):
    """(operands, end) of a matched _RETURN, or None (nothing changed)."""
    if p.depth + 4 > p.limits.max_nesting:
        return None
    types = _types(p, m.group(3))
    if types is None:
        return None
    ops = _named_values(p.visible, m.group(2))
    if ops is None or not _same_types(ops, types):
        return None
    return ops
