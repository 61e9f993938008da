"""IR numbering for writing: counts every attribute, type and op name a file refers to and
numbers them in the order upstream's writer does (by use count, grouped by dialect per varint
width), so that written files are byte for byte upstream's. Also the light `LeafOp` that the
VHLO converter makes and the numbering and writer take a short path for."""
from __future__ import annotations

import operator
from typing import Dict, List, Optional, Tuple

from stablehlo_ref.errors import SerializationError
from stablehlo_ref.ir import attributes as A
from stablehlo_ref.ir.core import Block, Operation
from stablehlo_ref.ir.locations import source_location
from stablehlo_ref.serialization.builtin_codec import BuiltinCodec, _string_attr
from stablehlo_ref.serialization.dialect_codec import DialectCodec, DialectWriter, _key

_FLC = A.FileLineColLoc


def _akey(a):
    """An attribute's numbering key: `_key`, except that a plain file location is keyed by
    (file name, line, column), the key the direct leaf path gives the locations it derives
    from where the parser found an op (without making a FileLineColLoc for each)."""
    if a.__class__ is _FLC and a.end_line is None and a.end_column is None:
        return (a.filename, a.line, a.column)
    return (type(a), a)

class _Strings:
    def __init__(self):
        self.index: Dict[str, int] = {}
        self.order: List[str] = []

    def insert(self, s: str) -> int:
        i = self.index.get(s)
        if i is None:
            i = self.index[s] = len(self.order)
            self.order.append(s)
        return i


class LeafOp:
    """An op without attributes, properties, regions or successors (the VHLO converter makes
    these for the many ops that need no more): the writer numbers and writes them on a short
    path, and they cost a fraction of an Operation to build."""
    __slots__ = ("name", "operands", "results", "location")
    attributes: dict = {}        # shared and empty: never written to
    regions: tuple = ()
    successors: tuple = ()
    source = None

    def __init__(self, name, operands, results, location):
        self.name = name
        self.operands = operands
        self.results = results
        self.location = location

    def __repr__(self):
        return f"LeafOp({self.name})"


class Direct:
    """The direct leaf path's shared state, from the conversion to the writer. An op without
    attributes or regions whose VHLO form at the target is its renaming is not converted at
    all: the StableHLO op itself stands in the VHLO tree (its results, operands, types and
    location as they are), and numbering and writing map its name (`names`), types (by
    identity, to their VHLO types' records) and location (`locs`) on the fly.

    A value then has two objects where the two worlds meet: a block argument or the result of
    a converted op (the VHLO value, primary) is also referred to by leaf ops as the StableHLO
    value; a leaf op's result (primary) is referred to by converted ops as a VValue proxy
    (they need its VHLO type). `aka[id(primary)]` is the other object, `canon[id(other)]` the
    primary: the writer numbers both, use lists count uses of the primary."""

    __slots__ = ("vtype", "names", "plans", "aka", "canon", "locs")

    def __init__(self, vtype):
        self.vtype = vtype      # StableHLO type -> VHLO type (stablehlo_to_vhlo.type_to_vhlo)
        self.names: Dict[str, str] = {}     # StableHLO op name -> VHLO op name at target
        self.plans: Dict[str, Optional[tuple]] = {}   # the conversion's leaf plans by op name
        self.aka: Dict[int, object] = {}
        self.canon: Dict[int, object] = {}
        # per block (by id of its op list): the location records of its leaf ops, in order
        # (None: the op's own location object)
        self.locs: Dict[int, list] = {}

    def twin(self, primary, other):
        self.aka[id(primary)] = other
        self.canon[id(other)] = primary


class _Record:
    __slots__ = ("obj", "count", "dialect", "number")

    def __init__(self, obj, dialect):
        self.obj = obj
        self.count = 1
        self.dialect = dialect
        self.number = 0


class _Numbering:
    """Counts every attribute, type and op name the file refers to, then numbers them in
    upstream's order. Values are deduplicated by value (`_key`); `attr_ids`/`type_ids` remember
    each object already seen by identity (holding it, so ids stay unique) so that the many
    references to one shared object cost no hashing of its value."""

    def __init__(self, codecs: List[DialectCodec], version: int, props_writer):
        self.codecs = codecs
        self.version = version
        self.props_writer = props_writer  # (op, DialectWriter) -> bool (False: no properties)
        # the dialect number of plain file locations once one is numbered (builtin's codec)
        self._flc_dialect: Optional[int] = None
        self.dialects: Dict[str, int] = {}
        self.attrs: Dict[object, _Record] = {}
        self.types: Dict[object, _Record] = {}
        self.attr_ids: Dict[int, tuple] = {}
        self.type_ids: Dict[int, tuple] = {}
        self.opnames: Dict[str, _Record] = {}
        self.attr_list: List[_Record] = []
        self.type_list: List[_Record] = []
        self.op_list: List[_Record] = []
        self.counter = DialectWriter(self, None, None)
        self._codec_of: Dict[tuple, Tuple[str, DialectCodec]] = {}
        self.vtype = None       # the direct path's type conversion (from its Direct)

    def dialect_of(self, obj, is_attr) -> Tuple[str, DialectCodec]:
        ck = (obj.__class__, is_attr)
        r = self._codec_of.get(ck)
        if r is not None:
            return r
        for c in self.codecs:
            if (c.owns_attr(obj) if is_attr else c.owns_type(obj)):
                r = self._codec_of[ck] = (c.name, c)
                return r
        raise SerializationError(f"no bytecode encoding for {'attribute' if is_attr else 'type'} {obj!r}")

    def _dialect_number(self, name):
        if name not in self.dialects:
            self.dialects[name] = len(self.dialects)
        return self.dialects[name]

    def number_attr(self, a):
        e = self.attr_ids.get(id(a))
        if e is not None and e[0] is a:
            e[1].count += 1
            return
        k = _akey(a)
        rec = self.attrs.get(k)
        if rec is not None:
            rec.count += 1
            self.attr_ids[id(a)] = (a, rec)
            return
        name, codec = self.dialect_of(a, True)
        rec = self.attrs[k] = _Record(a, self._dialect_number(name))
        self.attr_ids[id(a)] = (a, rec)
        self.attr_list.append(rec)
        if a.__class__ is A.FileLineColLoc and a.end_line is None and a.end_column is None \
                and codec.__class__ is BuiltinCodec:
            s = _string_attr(a.filename)    # what write_attr refers to
            e = self.attr_ids.get(id(s))
            if e is not None and e[0] is s:
                e[1].count += 1
            else:
                self.number_attr(s)
        else:
            codec.write_attr(a, self.counter)

    def number_type(self, t):
        e = self.type_ids.get(id(t))
        if e is not None and e[0] is t:
            e[1].count += 1
            return
        k = _key(t)
        rec = self.types.get(k)
        if rec is not None:
            rec.count += 1
            self.type_ids[id(t)] = (t, rec)
            return
        name, codec = self.dialect_of(t, False)
        rec = self.types[k] = _Record(t, self._dialect_number(name))
        self.type_ids[id(t)] = (t, rec)
        self.type_list.append(rec)
        codec.write_type(t, self.counter)

    def attr_number(self, a) -> int:
        e = self.attr_ids.get(id(a))
        if e is not None and e[0] is a:
            return e[1].number
        return self.attrs[_akey(a)].number

    def type_number(self, t) -> int:
        e = self.type_ids.get(id(t))
        if e is not None and e[0] is t:
            return e[1].number
        return self.types[_key(t)].number

    def number_opname(self, name):
        rec = self.opnames.get(name)
        if rec is not None:
            rec.count += 1
            return
        rec = self.opnames[name] = _Record(name, self._dialect_number(name.split(".", 1)[0]))
        self.op_list.append(rec)

    def number_op(self, op: Operation, dict_attr):
        self.number_opname(op.name)
        for r in op.results:
            self.number_type(r.type)
        if dict_attr is not None:
            self.number_attr(dict_attr)
        if self.version >= 5:
            self.props_writer(op, self.counter)
        self.number_attr(op.location if op.location is not None else A.UNKNOWN_LOC)

    def number_block(self, block: Block, dict_of):
        for v, loc in zip(block.arguments, block.arg_locations):
            self.number_attr(loc if loc is not None else A.UNKNOWN_LOC)
            self.number_type(v.type)
        # number_op, inline (the per-op cost dominates large programs)
        opnames, type_ids, attr_ids = self.opnames, self.type_ids, self.attr_ids
        number_type, number_attr, unknown = self.number_type, self.number_attr, A.UNKNOWN_LOC
        v5 = self.version >= 5
        attrs, attr_list, flc = self.attrs, self.attr_list, A.FileLineColLoc
        flc_dialect = self._flc_dialect
        last_fn = last_s = None
        for op in block.operations:
            if op.__class__ is LeafOp:
                rec = opnames.get(op.name)
                if rec is None:
                    self.number_opname(op.name)
                else:
                    rec.count += 1
                for r in op.results:
                    t = r.type
                    e = type_ids.get(id(t))
                    if e is not None and e[0] is t:
                        e[1].count += 1
                    else:
                        number_type(t)
                loc = op.location
                e = attr_ids.get(id(loc))
                if e is not None and e[0] is loc:
                    e[1].count += 1
                elif flc_dialect is not None and loc.__class__ is flc and loc.end_line is None \
                        and loc.end_column is None:
                    # number_attr for a plain file location (a new one per op, typically), inline
                    new = _Record(loc, flc_dialect)
                    rec = attrs.setdefault((loc.filename, loc.line, loc.column), new)
                    attr_ids[id(loc)] = (loc, rec)
                    if rec is not new:
                        rec.count += 1
                        continue
                    attr_list.append(rec)
                    fn = loc.filename
                    if fn != last_fn:
                        last_fn, last_s = fn, _string_attr(fn)
                    e = attr_ids.get(id(last_s))
                    if e is not None and e[0] is last_s:
                        e[1].count += 1
                    else:
                        number_attr(last_s)
                else:
                    number_attr(loc)
                    if flc_dialect is None and loc.__class__ is flc:
                        name, codec = self.dialect_of(loc, True)
                        if codec.__class__ is BuiltinCodec:
                            flc_dialect = self.dialects[name]
                continue
            if v5:
                self.number_op(op, dict_of(op))
                continue
            rec = opnames.get(op.name)
            if rec is None:
                self.number_opname(op.name)
            else:
                rec.count += 1
            for r in op.results:
                t = r.type
                e = type_ids.get(id(t))
                if e is not None and e[0] is t:
                    e[1].count += 1
                else:
                    number_type(t)
            d = dict_of(op)
            if d is not None:
                number_attr(d)
            loc = op.location
            if loc is None:
                loc = unknown
            e = attr_ids.get(id(loc))
            if e is not None and e[0] is loc:
                e[1].count += 1
            else:
                number_attr(loc)
        self._flc_dialect = flc_dialect

    def number_block_direct(self, block: Block, dict_of, direct: Direct):
        """number_block for a block of the direct path: leaf ops are StableHLO ops (see
        `Direct`); the others are numbered as number_block numbers them. The location records
        of the block's leaf ops (None: located otherwise) go to `direct.locs`, in order."""
        for v, loc in zip(block.arguments, block.arg_locations):
            self.number_attr(loc if loc is not None else A.UNKNOWN_LOC)
            self.number_type(v.type)
        opnames, type_ids, attr_ids = self.opnames, self.type_ids, self.attr_ids
        number_attr, unknown = self.number_attr, A.UNKNOWN_LOC
        attrs, attr_list = self.attrs, self.attr_list
        names = direct.names
        self.vtype = direct.vtype
        leaf_recs = {}          # StableHLO op name -> its VHLO name's record
        locs = direct.locs[id(block.operations)] = []
        add_loc = locs.append
        flc_dialect = self._flc_dialect
        v5 = self.version >= 5
        # the file name's string attribute of new plain locations: its record, and the uses
        # of it not counted yet
        last_fn = fn_rec = None
        fn_uses = 0
        last_t = t_rec = None
        t_uses = 0
        for op in block.operations:
            rec = leaf_recs.get(op.name)
            if rec is None:
                vname = names.get(op.name)
                if vname is None:
                    if v5:
                        self.number_op(op, dict_of(op))
                        continue
                    rec = opnames.get(op.name)
                    if rec is None:
                        self.number_opname(op.name)
                    else:
                        rec.count += 1
                    for r in op.results:
                        e = type_ids.get(id(r.type))     # (the dict holds its keys' objects)
                        if e is not None:
                            e[1].count += 1
                        else:
                            self.number_type(r.type)
                    d = dict_of(op)
                    if d is not None:
                        number_attr(d)
                    loc = op.location
                    if loc is None:
                        loc = unknown
                    e = attr_ids.get(id(loc))
                    if e is not None:
                        e[1].count += 1
                    else:
                        number_attr(loc)
                    continue
                rec = opnames.get(vname)
                if rec is None:
                    self.number_opname(vname)
                    rec = opnames[vname]
                else:
                    rec.count += 1
                leaf_recs[op.name] = rec
            else:
                rec.count += 1
            for r in op.results:
                t = r.type      # a StableHLO type: its VHLO type's record (uses of the last one
                if t is last_t:     # counted in t_uses)
                    t_uses += 1
                    continue
                if t_rec is not None:
                    t_rec.count += t_uses
                e = type_ids.get(id(t))
                if e is not None:
                    t_rec, t_uses = e[1], 1
                else:
                    self._number_stablehlo_type(t)
                    t_rec, t_uses = type_ids[id(t)][1], 0
                last_t = t
            loc = op.location
            if loc is None or loc is unknown:
                # where the parser found the op ("file:line:col"), keyed as a plain file location
                src = op.source
                key = None
                if src.__class__ is str:
                    parts = src.rsplit(":", 2)
                    if len(parts) == 3 and parts[1].isdigit() and parts[2].isdigit():
                        key = (parts[0], int(parts[1]), int(parts[2]))
                elif src is not None:
                    found = source_location(src)
                    if found is not None:
                        key = (found.filename, found.line, found.column)
                if key is not None:
                    rec = attrs.get(key)
                    if rec is not None:
                        rec.count += 1
                        add_loc(rec)
                        continue
                    if flc_dialect is not None:
                        rec = attrs[key] = _Record(key, flc_dialect)
                        attr_list.append(rec)
                        add_loc(rec)
                        fn = key[0]
                        if fn == last_fn:
                            fn_uses += 1
                            continue
                        if fn_rec is not None:
                            fn_rec.count += fn_uses
                        last_fn = fn
                        s = _string_attr(fn)
                        e = attr_ids.get(id(s))
                        if e is not None:
                            fn_rec, fn_uses = e[1], 1
                        else:
                            number_attr(s)
                            fn_rec, fn_uses = attr_ids[id(s)][1], 0
                        continue
                    loc = A.FileLineColLoc(*key)
                    number_attr(loc)
                    flc_dialect = self._flc_dialect_of(loc)
                    add_loc(attr_ids[id(loc)][1])
                    continue
                loc = unknown
            add_loc(None)
            e = attr_ids.get(id(loc))
            if e is not None:
                e[1].count += 1
            else:
                number_attr(loc)
                if flc_dialect is None and loc.__class__ is _FLC:
                    flc_dialect = self._flc_dialect_of(loc)
        if fn_rec is not None:
            fn_rec.count += fn_uses
        if t_rec is not None:
            t_rec.count += t_uses
        self._flc_dialect = flc_dialect

    def _flc_dialect_of(self, loc) -> Optional[int]:
        """The dialect number of plain file locations, once `loc` (one) is numbered, when the
        builtin codec is ours (whose encoding of them the writer inlines); else None."""
        name, codec = self.dialect_of(loc, True)
        return self.dialects[name] if codec.__class__ is BuiltinCodec else None

    def _number_stablehlo_type(self, t):
        """Number a StableHLO type as its VHLO type, and remember it by identity."""
        vt = self.vtype(t)
        self.number_type(vt)
        self.type_ids[id(t)] = (t, self.type_ids[id(vt)][1])

    def finalize(self):
        for lst, attr in ((self.attr_list, "attr"), (self.type_list, "type"), (self.op_list, "op")):
            lst.sort(key=_count_of, reverse=True)   # stable: equal counts keep their order
            _group_by_dialect_per_byte(lst)
            for i, r in enumerate(lst):
                r.number = i
        self.op_index = {r.obj: r.number for r in self.op_list}


_count_of = operator.attrgetter("count")


def _group_by_dialect_per_byte(lst: List[_Record]):
    if not lst:
        return
    first = 0
    in_group = 0
    start = 0
    for i in range(1, 9):
        in_group = (1 << (7 * i)) - in_group
        end = min(start + in_group, len(lst))
        sub = lst[start:end]
        dialects = [r.dialect for r in sub]
        if dialects.count(first) != len(dialects):     # else the (stable) sort changes nothing
            sub.sort(key=lambda r, f=first: (0, 0) if r.dialect == f else (1, r.dialect))
            lst[start:end] = sub
        first = sub[-1].dialect
        start = end
        if start >= len(lst):
            break
