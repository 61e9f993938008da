"""Recursive-descent parser for MLIR text: modules, aliases and file metadata, values and
scopes, the generic op syntax for every op and regions; an op's pretty syntax is read through
its spec'd format (formats.py) or its hand-written syntax (custom_syntax.py). Types,
attributes and locations are parsed by the TypeAttrParser mixin (parse_attrs.py). The commonest
one-line ops go through fast paths first (fastpath.py), which give up, changing nothing, wherever
they do not apply."""
from __future__ import annotations

import gc
from bisect import bisect_right as _bisect_right
import re
from typing import Dict, List, Optional

from .. import spec as _spec
from ..deep import call_with_room, check_depth
from ..errors import ParseError
from ..limits import DEFAULT, Limits
from ..ir.attributes import (UNKNOWN_LOC, Attribute, CallSiteLoc, FileLineColLoc, FusedLoc, Location,
                             NameLoc, UnknownLoc)
from ..ir.core import Block, Module, Operation, Region, Value
from ..ir.types import FunctionType, Type
from . import fastpath as _fast
from .custom_syntax import OP_SYNTAX
from .format_ast import format_for
from .formats import parse_with_format
from .parse_attrs import SHARED_TYPES, TypeAttrParser, _LocRef
from .print_types import escape_string
from .lexer import _WS as _LEX_WS
from .lexer import BANG_ID, BARE_ID, BLOCK_ID, HASH_ID, STRING, VALUE_ID, Scanner, unescape_string

_FAST_HEAD = re.compile(r'[ \t\n\r\f\v]*%([\w$.\-]+)[ \t]*=[ \t]*(?:([A-Za-z_][\w$]*\.[\w$.]*|call(?=[ \t]))|"([\w$.]+)")')
_NEXT_OP = re.compile(r"[ \t\n\r\f\v]*[%}]")
# `%name:N = call @f(...)`: a call with several results
_FAST_MULTI_CALL = re.compile(r"[ \t\n\r\f\v]*%([\w$.\-]+):([0-9]{1,4})[ \t]*=[ \t]*(call|func\.call)(?=[ \t])")
_CACHE_PROPS = True        # (tests turn it off to compare)
_FAST_RETURNS = True       # (the same)
_PLAIN_STRUCT = re.compile(r"#(?:stablehlo|chlo)\.[\w$]+<")
_FAST_OPS: dict = {}      # op name -> its fast path (fastpath.py) or None
_FAST_GENERIC: dict = {}  # generic op name -> fastpath.parse_generic(_constant) or None


# the fast paths build their ops by setting the slots that Operation() and Value() set (when
# those are these, else they call them)
_BUILD_OPS = (Operation.__slots__ == ("name", "operands", "results", "attributes", "regions", "location",
                                      "successors", "source", "attr_dict_source", "_cache")
              and Value.__slots__ == ("type", "name", "owner", "index"))
_new = object.__new__


_RESULT_ID = re.compile(r"%([\w$.\-]+)")
_BARE_OP_NAMES = {"module": "builtin.module", "return": "func.return", "call": "func.call",
                  "func": "func.func", "call_indirect": "func.call_indirect",
                  "constant": "func.constant"}


# dialects whose every op the spec lists: an op of theirs the spec lacks is an error (as in MLIR,
# where these dialects do not allow unknown operations); other dialects' ops are kept opaque
_OWN_DIALECTS = frozenset(("stablehlo", "chlo", "sdy"))

class Parser(TypeAttrParser):
    def __init__(self, text: str, filename: str = "<string>", limits: Optional[Limits] = None):
        self.sc = Scanner(text, filename)
        self.limits = limits or DEFAULT
        self.depth = 0                  # nesting of regions, types, attributes and locations
        self.attr_aliases: Dict[str, Attribute] = {}
        self.type_aliases: Dict[str, Type] = {}
        self.scopes: List[Dict[str, Value]] = []
        # forward references (MLIR resolves a use before its definition once the definition
        # comes; dominance is the verifier's business): per scope, name -> (placeholder, position)
        self.forward: List[Dict[str, tuple]] = []
        self.resolved: Dict[int, Value] = {}     # id(placeholder) -> its definition
        self.pending = 0                         # forward references not yet resolved
        self.generic_operands = False            # operand types are spelled (generic form)
        self.op_names: List[str] = []            # the ops being parsed, innermost last
        self.visible: Dict[str, List[Value]] = {}   # name -> its definitions, innermost last
        self.pending_locs: list = []    # (holder, key) pairs to resolve after parse
        self.resources: Dict[str, bytes] = {}
        # simple tensor types by their text, shared by every parse of the process (types are
        # immutable and a simple type's text says all of it: MLIR's context uniques them
        # the same way), so that what the interpreter keeps on a type object (`_sb`) is kept
        self.type_cache: Dict[str, Type] = SHARED_TYPES
        self.uses: list = []            # (value, position) of each operand use of the ops being parsed
        self.props_cache: dict = {}     # generic op name -> (properties text, entries, depth)
        self.dense_cache: dict = {}     # (literal text, type) -> DenseElementsAttr (read-only)
        self.fast_cache: dict = {}      # the fast paths' type lists and attributes by their text (fastpath.py)
        self.loc_refs = False           # whether a location refers to a `#loc` alias (a _LocRef)
        self.dict_memo: dict = {}       # attribute dictionaries by their text (parse_attr_dict_body)

    # ================================================================ top level
    def parse_module(self) -> Module:
        sc = self.sc
        top_ops: List[Operation] = []
        self._push_scope()
        while not sc.at_end():
            if sc.peek("#") and self._try_alias_def("#"):
                continue
            if sc.peek("!") and self._try_alias_def("!"):
                continue
            if sc.peek("{-#"):
                self._parse_file_metadata()
                continue
            top_ops.append(self.parse_operation())
        for name, hits in self.forward[-1].items():
            raise self.sc.error(f"use of undefined value '%{name}'", hits[0][1])
        self._pop_scope()
        if self.resolved:
            self._resolve_forward(top_ops)
        if len(top_ops) == 1 and top_ops[0].name == "builtin.module":
            mod_op = top_ops[0]
            if not mod_op.regions:
                mod_op.regions.append(Region())
            if not mod_op.regions[0].blocks:
                mod_op.regions[0].blocks.append(Block())
        else:
            mod_op = Operation("builtin.module", regions=[Region([Block()])])
            mod_op.regions[0].blocks[0].operations.extend(top_ops)
        self._resolve_locations(mod_op)
        return Module(mod_op, resources=self.resources, source=sc.filename)

    def _try_alias_def(self, sigil: str) -> bool:
        sc = self.sc
        save = sc.pos
        m = sc.match(HASH_ID if sigil == "#" else BANG_ID)
        if not m or not sc.accept("=") or sc.peek("="):
            sc.pos = save
            return False
        name = m.group(1)
        if sigil == "#":
            self.attr_aliases[name] = self.parse_attribute()
        else:
            self.type_aliases[name] = self.parse_type()
        self.dict_memo.clear()          # (a dictionary's text may mean something else from here on)
        return True

    def _parse_file_metadata(self):
        sc = self.sc
        sc.expect("{-#")
        while not sc.accept("#-}"):
            key = sc.bare_id("metadata section name")
            sc.expect(":")
            sc.expect("{")
            if key == "dialect_resources":
                while not sc.accept("}"):
                    sc.bare_id("dialect name")
                    sc.expect(":")
                    sc.expect("{")
                    while not sc.accept("}"):
                        m = sc.match(BARE_ID) or sc.match(STRING)
                        if not m:
                            raise sc.error("expected resource key")
                        rkey = m.group(0) if m.re is BARE_ID else unescape_string(m.group(1))
                        sc.expect(":")
                        blob = sc.string()
                        if not blob.startswith("0x"):
                            raise sc.error("expected hex resource blob")
                        raw = bytes.fromhex(blob[2:])
                        self.resources[rkey] = raw[4:]   # first 4 bytes: alignment
                        sc.accept(",")
                    sc.accept(",")
            else:
                sc.pos -= 1
                sc.balanced("{", "}")
            sc.accept(",")

    def _resolve_locations(self, root: Operation):
        if not self.loc_refs:     # (then resolving would only rebuild equal locations)
            return
        def resolve(loc, depth=0):
            if isinstance(loc, _LocRef):
                if depth > 50:
                    raise ParseError(f"cyclic location alias #{loc.name}")
                if loc.name not in self.attr_aliases:
                    raise ParseError(f"undefined location alias #{loc.name}")
                return resolve(self.attr_aliases[loc.name], depth + 1)
            if isinstance(loc, NameLoc) and loc.child is not None:
                return NameLoc(loc.name, resolve(loc.child, depth + 1))
            if isinstance(loc, CallSiteLoc):
                return CallSiteLoc(resolve(loc.callee, depth + 1), resolve(loc.caller, depth + 1))
            if isinstance(loc, FusedLoc):
                return FusedLoc(tuple(resolve(l, depth + 1) for l in loc.locations), loc.metadata)
            return loc
        for name, a in list(self.attr_aliases.items()):
            if isinstance(a, Location):
                self.attr_aliases[name] = resolve(a)
        for op in root.walk():
            if not isinstance(op.location, (UnknownLoc, FileLineColLoc)):
                op.location = resolve(op.location)
            for region in op.regions:
                for block in region.blocks:
                    block.arg_locations = [resolve(l) if l is not None else None for l in block.arg_locations]

    # ================================================================ values
    def define(self, name: str, value: Value, pos=None):
        scope = self.scopes[-1]
        if name in scope:
            raise self.sc.error(f"redefinition of SSA value '%{name}'")
        scope[name] = value
        self.visible.setdefault(name, []).append(value)
        if self.pending:
            # only a use in this region (or one nested in it and closed by now) sees the name
            for fw in self.forward[-1:]:
                hits = fw.pop(name, None)
                if hits is not None:
                    def_pos = pos
                    for ph, upos in hits:
                        if ph.type is not None and ph.type != value.type:
                            raise self.sc.error(f"definition of SSA value '%{name}' has type {value.type}, "
                                                f"but it was used before with type {ph.type} "
                                                f"(at {self.sc.location(upos)})", def_pos)
                        self.resolved[id(ph)] = value
                    self.pending -= len(hits)
                    break

    def lookup(self, name: str, pos) -> Value:
        # one dict of what is visible, not a walk over the scopes: deep nesting stays linear
        defs = self.visible.get(name)
        if defs:
            return defs[-1]
        if self.pending:
            for fw in reversed(self.forward):
                hits = fw.get(name)
                if hits is not None and (hits[0][0].type is not None or self.generic_operands):
                    return hits[0][0]
        if self.generic_operands:
            # a use before the definition: the generic form spells the operand's type, and
            # the definition later in the region (or an enclosing one) takes its place
            ph = Value(None, name)
            self.forward[-1][name] = [(ph, pos)]
            self.pending += 1
            return ph
        raise self.sc.error(f"use of undefined value '%{name}'", pos)

    def _resolve_forward(self, top_ops) -> None:
        """Replace each placeholder of a forward reference by its definition."""
        resolved = self.resolved
        for top in top_ops:
            for op in top.walk():
                ops = op.operands
                for i, v in enumerate(ops):
                    if v.owner is None and id(v) in resolved:
                        ops[i] = resolved[id(v)]

    def _push_scope(self):
        self.scopes.append({})
        self.forward.append({})

    def _pop_scope(self):
        fw = self.forward.pop()
        if fw and self.forward:      # still unresolved: a definition may follow outside
            parent = self.forward[-1]
            for name, hits in fw.items():
                parent.setdefault(name, []).extend(hits)
        visible = self.visible
        for name in self.scopes.pop():
            defs = visible[name]
            defs.pop()
            if not defs:
                del visible[name]

    def parse_value_use(self) -> Value:
        sc = self.sc
        sc.ws()
        pos = sc.pos
        m = sc.match(VALUE_ID)
        if not m:
            raise sc.error("expected SSA value")
        name = m.group(1) if m.group(2) is None else f"{m.group(1)}#{m.group(2)}"
        v = self.lookup(name, pos)
        self.uses.append((v, pos))
        return v

    def check_operand_types(self, operands, types, count_pos=None) -> None:
        """The types an op spells for its operands must be the named values' types: MLIR resolves
        each use against its type and reports a mismatch at the use."""
        if len(types) != len(operands):
            raise self.sc.error(f"{len(operands)} operands present, but expected {len(types)}", count_pos)
        for v, t in zip(operands, types):
            if v.type is None and v.owner is None:     # a forward reference takes the spelled type
                v.type = t
            if v.type != t:
                pos = next((q for u, q in reversed(self.uses) if u is v), count_pos)
                name = f" '%{v.name}'" if v.name else ""
                raise self.sc.error(f"use of value{name} expects different type than prior uses: "
                                    f"{t} vs {v.type}", pos)

    def parse_value_list(self) -> List[Value]:
        vals = []
        if not self.sc.peek("%"):
            return vals
        vals.append(self.parse_value_use())
        while self.sc.peek(","):
            save = self.sc.pos
            self.sc.accept(",")
            if not self.sc.peek("%"):
                self.sc.pos = save
                break
            vals.append(self.parse_value_use())
        return vals

    # ================================================================ operations
    def parse_operation(self) -> Operation:
        m = _FAST_HEAD.match(self.sc.s, self.sc.pos)
        if m is not None:
            op = self._parse_operation_fast(m)
            if op is not None:
                return op
        return self._parse_operation_slow()

    def _parse_operation_slow(self) -> Operation:
        since = len(self.uses)
        names = self.op_names
        depth = len(names)
        try:
            return self._parse_operation()
        finally:
            del self.uses[since:]
            del names[depth:]

    def _parse_operation(self) -> Operation:
        sc = self.sc
        sc.ws()
        s = sc.s
        start = sc.pos
        result_names: List[tuple] = []   # (name, count, explicit count)
        total = 0
        if s.startswith("%", start):
            while True:
                m = sc.match(_RESULT_ID)
                if not m:
                    raise sc.error("expected result name")
                if sc.accept(":"):
                    count = sc.integer()
                    result_names.append((m.group(1), count, True))
                else:
                    count = 1
                    result_names.append((m.group(1), 1, False))
                total += count
                if not sc.accept(","):
                    break
            sc.expect("=", "after op results")
            sc.ws()
        op_pos = sc.pos
        if s.startswith('"', op_pos):
            name = sc.string()
            if name.split(".", 1)[0] in _OWN_DIALECTS and not _spec.has_op(name):
                raise sc.error(f"unknown operation {escape_string(name)}: the {name.split('.', 1)[0]} dialect has no such op", op_pos)
            self.op_names.append(name)
            op = self._parse_generic_op(name)
        else:
            m = BARE_ID.match(s, op_pos)
            if not m:
                raise sc.error("expected operation name")
            sc.pos = m.end()
            name = m.group(0)
            if "." not in name:
                name = _BARE_OP_NAMES.get(name, name)
            self.op_names.append(name)
            op = self._parse_pretty_op(name, op_pos, total)
        if sc.peek("loc("):
            op.location = self.parse_location()
        if op.source is None:     # (a custom parser may have located the op itself)
            op.source = sc.location(op_pos)
        results = op.results
        if total != len(results):
            raise sc.error(f"operation '{op.name}' defines {len(results)} results but {total} names were given", start)
        if total == 1 and not result_names[0][2]:
            name = result_names[0][0]
            self.define(name, results[0], start)
            results[0].name = name
            return op
        i = 0
        for name, count, explicit in result_names:
            if count == 1 and not explicit:
                self.define(name, results[i])
                results[i].name = name
            else:
                self.define(name, results[i])
                for k in range(count):
                    self.define(f"{name}#{k}", results[i + k])
                    results[i + k].name = f"{name}#{k}"
            i += count
        return op

    def _parse_operation_fast(self, m) -> Optional[Operation]:
        """`%name = dialect.op ...` through a fast path (fastpath.py), or None where it does not
        apply: nothing has changed then, and the general parser reads the op."""
        rname, name, generic = m.groups()
        if name is None:                # the generic form
            name = generic
            op_pos = m.start(3) - 1
            fast = _FAST_GENERIC.get(name, 0)
            if fast == 0:
                d = name.split(".", 1)[0]
                fast = _FAST_GENERIC[name] = (None if d in _OWN_DIALECTS and not _spec.has_op(name)
                                              else _fast.parse_generic_constant if name == "stablehlo.constant"
                                              else _fast.parse_generic)
        else:
            op_pos = m.start(2)
            if name == "call":
                name = "func.call"
            fast = _FAST_OPS.get(name, 0)
            if fast == 0:
                fast = None
                if name in OP_SYNTAX:
                    if name == "stablehlo.constant":
                        fast = _fast.parse_constant_fast
                    elif name == "func.call":
                        fast = _fast.parse_call_fast
                else:
                    fmt = format_for(name)
                    if fmt is not None:
                        fast = _fast.format_fast_path(name, _spec.op(name), fmt)
                _FAST_OPS[name] = fast
        if fast is None:
            return None
        sc = self.sc
        s = sc.s
        got = fast(self, name, s, m.end())
        if got is None:
            return None
        operands, rtype, attrs, end = got
        # from here on, as _parse_operation goes on after the op's body
        sc.pos = end
        location = UNKNOWN_LOC
        lm = _fast._LOC.match(s, end) if s.startswith(" loc(", end) else None
        if lm is not None and self.depth + 2 <= self.limits.max_nesting:
            alias = lm.group(4)
            if alias is None:
                location = FileLineColLoc(lm.group(1), int(lm.group(2)), int(lm.group(3)), None, None)
            else:
                a = self.attr_aliases.get(alias)
                if a is not None and isinstance(a, Location):
                    location = a
                else:
                    location = _LocRef(alias)
                    self.loc_refs = True
            sc.pos = lm.end()
        else:
            nm = _NEXT_OP.match(s, end)
            if nm is not None:          # (what sc.peek("loc(") would find: no location)
                sc.pos = nm.end() - 1
            elif sc.peek("loc("):
                location = self.parse_location()
        starts = sc._line_starts
        if starts is None:
            source = sc.location(op_pos)
        else:
            line = _bisect_right(starts, op_pos)
            source = f"{sc.filename}:{line}:{op_pos - starts[line - 1] + 1}"
        if _BUILD_OPS:
            # Operation(name, operands, [rtype], attrs, [], location) with its result named
            # rname and its source set, by setting their slots (the lists and dict are the
            # fast path's own)
            op = _new(Operation)
            op.name = name
            op.operands = operands
            result = _new(Value)
            result.type = rtype
            result.name = rname
            result.owner = op
            result.index = 0
            op.results = [result]
            op.attributes = attrs
            op.regions = []
            op.location = location
            op.successors = []
            op.source = source
            op.attr_dict_source = None
            op._cache = None
        else:
            op = Operation(name, operands, [rtype], attrs, [], location)
            op.source = source
            result = op.results[0]
            result.name = rname
        scope = self.scopes[-1]
        if self.pending or rname in scope:
            self.define(rname, result, m.start(1) - 1)
        else:                           # (define's common case)
            scope[rname] = result
            defs = self.visible.get(rname)
            if defs is None:
                self.visible[rname] = [result]
            else:
                defs.append(result)
        return op

    def _parse_multi_call_fast(self, m) -> Optional[Operation]:
        """A matched _FAST_MULTI_CALL as the general parser builds it (results named `%r#k`, and
        `%r` the first), or None (nothing changed)."""
        rname = m.group(1)
        count = int(m.group(2))
        scope = self.scopes[-1]
        if self.pending or rname in scope or any(f"{rname}#{k}" in scope for k in range(count)):
            return None
        sc = self.sc
        s = sc.s
        got = _fast.parse_call_fast(self, "func.call", s, m.end(), count)
        if got is None:
            return None
        operands, rtypes, attrs, end = got
        wm = _LEX_WS.match(s, end)      # (where the general parser looks for a location)
        q = wm.end() if wm is not None else end
        if s.startswith("loc(", q):
            return None
        sc.pos = q
        op_pos = m.start(3)
        op = Operation("func.call", operands, rtypes, attrs)
        starts = sc._line_starts
        if starts is None:
            op.source = sc.location(op_pos)
        else:
            line = _bisect_right(starts, op_pos)
            op.source = f"{sc.filename}:{line}:{op_pos - starts[line - 1] + 1}"
        results = op.results
        self.define(rname, results[0])
        for k in range(count):
            self.define(f"{rname}#{k}", results[k])
            results[k].name = f"{rname}#{k}"
        return op

    def _parse_return_fast(self, m) -> Optional[Operation]:
        """A matched fastpath._RETURN as the general parser builds it, or None (nothing changed)."""
        operands = _fast.parse_return_fast(self, m)
        if operands is None:
            return None
        name = m.group(1)
        if name == "return":
            name = "func.return"
        sc = self.sc
        sc.pos = m.end()
        op_pos = m.start(1)
        starts = sc._line_starts
        if starts is None:
            source = sc.location(op_pos)
        else:
            line = _bisect_right(starts, op_pos)
            source = f"{sc.filename}:{line}:{op_pos - starts[line - 1] + 1}"
        op = Operation(name, operands)
        op.source = source
        return op

    def _parse_generic_op(self, name: str) -> Operation:
        sc = self.sc
        sc.expect("(")
        operands = []
        if not sc.accept(")"):
            self.generic_operands = True
            try:
                operands = self.parse_value_list()
            finally:
                self.generic_operands = False
            sc.expect(")")
        if sc.peek("["):
            raise sc.error("successor blocks are not supported in StableHLO programs")
        attrs = {}
        if sc.accept("<"):
            # the same properties text as this op's last one (`<{dot_dimension_numbers = ...}>`
            # repeats) gives the same attributes: they are read once, where their text cannot
            # mean anything else elsewhere (no aliases) and at no lesser nesting depth
            sc.ws()
            start = sc.pos
            last = self.props_cache.get(name)
            if last is not None and self.depth <= last[2] and sc.s.startswith(last[0], start):
                sc.pos = start + len(last[0])
                entries = last[1]
            else:
                entries = self.parse_attr_dict_body().entries
                text = sc.s[start:sc.pos] if sc.pos - start <= 4096 else "!"
                if _CACHE_PROPS and "!" not in text and text.count("#") == len(_PLAIN_STRUCT.findall(text)):
                    self.props_cache[name] = (text, entries, self.depth)
            sc.expect(">")
            attrs.update(entries)
        regions = []
        if sc.peek("(") :
            sc.accept("(")
            regions.append(self.parse_region())
            while sc.accept(","):
                regions.append(self.parse_region())
            sc.expect(")")
        if sc.peek("{"):
            attrs.update(self.parse_attr_dict_body().entries)
        sc.expect(":", "before the op's function type")
        sc.ws()
        type_pos = sc.pos
        ft = self.parse_type()
        if not isinstance(ft, FunctionType):
            raise sc.error("expected function type for generic op", type_pos)
        if len(ft.inputs) != len(operands):
            raise sc.error(f"'{name}' has {len(operands)} operands but its type lists {len(ft.inputs)}", type_pos)
        self.check_operand_types(operands, ft.inputs, type_pos)
        op = Operation(name, operands, list(ft.results), attrs, regions)
        if name == "builtin.module" and regions:
            pass
        return op

    # --------------------------------------------------------------- regions
    def parse_region(self, entry_args: Optional[List[Value]] = None,
                     entry_sources: Optional[List[Optional[str]]] = None) -> Region:
        """`{ ops }` or `{ ^bb0(%a: t): ops ^bb1: ... }`. `entry_args` are pre-declared
        values (func arguments, while iter args) that become the entry block's arguments;
        `entry_sources` the positions of their `%name`s."""
        sc = self.sc
        sc.expect("{")
        self.depth += 1
        if self.depth > self.limits.max_nesting:
            check_depth(self.depth, self.limits, "regions", sc.location(sc.pos - 1))
        region = Region()
        self._push_scope()
        try:
            block = None
            if entry_args is not None:
                block = Block()
                for i, v in enumerate(entry_args):
                    v.owner = block
                    v.index = len(block.arguments)
                    block.arguments.append(v)
                    block.arg_locations.append(None)
                    block.arg_sources.append(entry_sources[i] if entry_sources else None)
                    if v.name is not None:
                        self.define(v.name, v)
                region.blocks.append(block)
            s = sc.s
            while True:
                if block is not None:
                    m = _FAST_HEAD.match(s, sc.pos)
                    if m is not None:           # (the common case: `%name = dialect.op`)
                        op = self._parse_operation_fast(m)
                        block.operations.append(op if op is not None else self._parse_operation_slow())
                        continue
                    m = _FAST_MULTI_CALL.match(s, sc.pos) if _FAST_RETURNS else None
                    if m is not None:           # (`%r:2 = call @f(...)`)
                        op = self._parse_multi_call_fast(m)
                        block.operations.append(op if op is not None else self._parse_operation_slow())
                        continue
                    m = _fast._RETURN.match(s, sc.pos) if _FAST_RETURNS else None
                    if m is not None:           # (`return %a : t` before the `}`)
                        op = self._parse_return_fast(m)
                        block.operations.append(op if op is not None else self._parse_operation_slow())
                        continue
                if sc.accept("}"):
                    break
                if sc.peek("^"):
                    m = sc.match(BLOCK_ID)
                    if not m:
                        raise sc.error("expected a block label (^bbN)")
                    new_block = Block(label=m.group(1))
                    if block is not None and entry_args is not None and not block.operations and len(region.blocks) == 1 and not block.arguments:
                        region.blocks.pop()
                    if sc.accept("("):
                        if not sc.accept(")"):
                            while True:
                                vm = sc.match(re.compile(r"%([\w$.\-]+)"))
                                if not vm:
                                    raise sc.error("expected block argument")
                                sc.expect(":")
                                t = self.parse_type()
                                loc = self.parse_trailing_location() if sc.peek("loc(") else None
                                v = new_block.add_argument(t, vm.group(1), loc, sc.location(vm.start()))
                                self.define(vm.group(1), v)
                                if not sc.accept(","):
                                    break
                            sc.expect(")")
                    sc.expect(":")
                    block = new_block
                    region.blocks.append(block)
                    continue
                if block is None:
                    block = Block()
                    region.blocks.append(block)
                if sc.at_end():
                    raise sc.error("expected '}' to close region")
                block.operations.append(self.parse_operation())
            if self.pending and self.op_names and self.op_names[-1] in _ISOLATED:
                # names do not reach out of an op isolated from above (a function)
                for name, hits in self.forward[-1].items():
                    raise sc.error(f"use of undefined value '%{name}'", hits[0][1])
        finally:
            self._pop_scope()
            self.depth -= 1
        return region

    # --------------------------------------------------------------- pretty ops
    def _parse_pretty_op(self, name: str, pos: int, nresults: int) -> Operation:
        syntax = OP_SYNTAX.get(name)
        if syntax is not None:
            return syntax.parse(self, name)
        fmt = format_for(name)
        if fmt is None:
            raise self.sc.error(f"unknown operation '{name}' (or it has no pretty form; write it in generic form \"{name}\"(...))", pos)
        return parse_with_format(self, name, fmt)


# ops whose regions see no value from outside (MLIR's IsolatedFromAbove)
_ISOLATED = frozenset({"func.func", "builtin.module", "sdy.manual_computation"})


def parse(text: str, filename: str = "<string>", limits: Optional[Limits] = None) -> Module:
    """MLIR text -> Module. Nesting deeper than `limits.max_nesting` raises LimitError; below
    it, deep input parses (in a thread with room for it, see deep.py)."""
    if not isinstance(text, str):
        raise ParseError(f"expected text, got {type(text).__name__}", filename)
    return call_with_room(_parse, text, filename, limits, limits=limits)


def _parse(text, filename, limits):
    # the parser allocates many small objects and frees none: the cyclic garbage collector
    # would only rescan them, so it pauses while parsing
    enabled = gc.isenabled()
    gc.disable()
    try:
        return Parser(text, filename, limits).parse_module()
    finally:
        if enabled:
            gc.enable()
