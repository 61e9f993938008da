"""Writing MLIR bytecode: the dialect, attribute/type, IR, string and properties sections of a
numbered op tree, with upstream's use-list orders, laid out byte for byte as upstream's writer
lays them out."""
from __future__ import annotations

import operator
from itertools import groupby
from typing import Callable, Dict, List, Optional, Tuple

from stablehlo_ref.errors import SerializationError
from stablehlo_ref.ir import attributes as A
from stablehlo_ref.ir.core import Operation, Region
from stablehlo_ref.serialization.builtin_codec import BuiltinCodec, _string_attr
from stablehlo_ref.serialization.dialect_codec import DialectCodec, DialectWriter
from stablehlo_ref.serialization.encoding import (MAGIC, M_ATTRS, M_OPERANDS, M_PROPERTIES, M_REGIONS, M_RESULTS,
                                                  M_USELIST, S_ATTRTYPE, S_ATTRTYPE_OFFSET, S_DIALECT, S_IR,
                                                  S_PROPERTIES, S_RESOURCE, S_RESOURCE_OFFSET, S_STRING, Emitter,
                                                  _SMALL, _SMALL_VARINTS, varint_bytes)
from stablehlo_ref.serialization.numbering import Direct, LeafOp, _Numbering, _Record, _Strings

_dialect_of = operator.attrgetter("dialect")


def _ops_using_outside(root: Operation, aka: Optional[dict] = None) -> set:
    """ids of the ops under `root` (root included) that have regions in which some op uses a
    value defined outside the op. One pass over the tree (ops numbered in pre-order, each op's
    interior an interval of those numbers), so deep nesting stays linear. `aka` (the direct
    path's `Direct.aka`): a value's other object, defined with it."""
    defs: Dict[int, int] = {}
    spans: Dict[int, Tuple[int, int]] = {}
    n = 0
    aka = aka or {}

    def number(op):
        nonlocal n
        n += 1
        me = n
        for res in op.results:
            defs[id(res)] = 2 * me
            if aka:
                other = aka.get(id(res))
                if other is not None:
                    defs[id(other)] = 2 * me
        for r in op.regions:
            for b in r.blocks:
                for a in b.arguments:
                    defs[id(a)] = 2 * me + 1
                    if aka:
                        other = aka.get(id(a))
                        if other is not None:
                            defs[id(other)] = 2 * me + 1
                for o in b.operations:
                    number(o)
        spans[id(op)] = (2 * me, 2 * n + 1)     # interior: (2 * me, 2 * end + 1]

    out = set()

    def uses(op):
        """(lowest, highest) definition number of the values used inside `op`'s regions."""
        lo, hi = None, None
        for r in op.regions:
            for b in r.blocks:
                for o in b.operations:
                    for v in o.operands:
                        d = defs.get(id(v), -1)
                        lo = d if lo is None or d < lo else lo
                        hi = d if hi is None or d > hi else hi
                    if o.regions:
                        l2, h2 = uses(o)
                        if l2 is not None:
                            lo = l2 if lo is None or l2 < lo else lo
                            hi = h2 if hi is None or h2 > hi else hi
        if lo is not None:
            start, end = spans[id(op)]
            if lo <= start or hi > end:
                out.add(id(op))
        return lo, hi

    number(root)
    uses(root)
    return out


def write_file(root: Operation, *, version: int, producer: str, codecs: List[DialectCodec],
               dict_of: Callable[[Operation], Optional[A.DictAttr]],
               props_writer: Callable[[Operation, DialectWriter], bool],
               isolated_of: Optional[Callable[[Operation], bool]] = None,
               rewrites: Optional[Dict[int, int]] = None, direct: Optional[Direct] = None) -> bytes:
    """Write `root` as MLIR bytecode.

    `dict_of(op)` gives the attribute dictionary to store in the op (None: none),
    `props_writer(op, w)` writes the op's properties and returns whether it has any
    (only called for version >= 5). `direct`: the tree holds the direct path's leaf ops
    (StableHLO ops standing for their VHLO renaming, see numbering.Direct)."""
    isolated_cache: Dict[int, bool] = {}
    using_outside: List[set] = []

    def isolated(op):
        r = isolated_cache.get(id(op))
        if r is None:
            r = (op is root) or (isolated_of(op) if isolated_of else False)
            if not r:
                if not using_outside:
                    using_outside.append(_ops_using_outside(root, direct.aka if direct is not None else None))
                r = id(op) not in using_outside[0]
            isolated_cache[id(op)] = r
        return r

    num = _Numbering(codecs, version, props_writer)
    # ---- numbering walk (values are numbered while writing, with the reader's layout)
    num.number_op(root, dict_of(root))
    stack = [r for r in root.regions]
    while stack:
        region = stack.pop()
        for b in region.blocks:
            if direct is None:
                num.number_block(b, dict_of)
            else:
                num.number_block_direct(b, dict_of, direct)
        for b in region.blocks:
            for op in b.operations:
                if op.regions:
                    stack.extend(op.regions)
    num.finalize()
    if version < 3:
        uses = None
    elif direct is None:
        uses = _use_lists(root, rewrites or {})
    elif rewrites and any(rewrites.values()):
        uses = _use_lists(root, rewrites, direct.canon)
    else:
        # no op is rewritten and the direct path has no casts: every use list is in the order
        # parsing gives (uses in descending order), so no order is written
        uses = None
    strings = _Strings()
    codec_by_name = {c.name: c for c in codecs}

    # ---- dialect section
    dialect_names = sorted(num.dialects, key=num.dialects.get)
    de = Emitter()
    de.varint(len(dialect_names))
    for d in dialect_names:
        sid = strings.insert(d)
        if version < 1:
            de.varint(sid)
        else:
            de.varint_flag(sid, False)
    if version >= 4:
        de.varint(len(num.op_list))
    _write_groups(de, num.op_list, lambda r: (de.varint(strings.insert(r.obj.split(".", 1)[1])) if version < 5
                                              else de.varint_flag(strings.insert(r.obj.split(".", 1)[1]), True)))

    # ---- attribute/type sections (written straight into one emitter; big blobs by reference)
    data = Emitter()
    dw = DialectWriter(num, data, strings)
    flc, builtin = A.FileLineColLoc, codec_by_name.get("builtin")
    small, SMALL = _SMALL_VARINTS, _SMALL
    codec_of_dialect = [codec_by_name[d] for d in dialect_names]
    flc_dialect = (num.dialects.get("builtin", -1)
                   if builtin is not None and builtin.__class__ is BuiltinCodec else -1)
    # each entry's size goes to the offset section flagged (varint_flag(size, True) =
    # varint(2 * size + 1)); plain file locations, the most frequent attribute (one per op),
    # are written inline as BuiltinCodec.write_attr writes them (a tuple: the direct path's
    # (file name, line, column))
    flagged: List[bytes] = []
    add_flagged = flagged.append
    prefixes: Dict[str, bytes] = {}     # file name -> code 11 and the file name's number
    last_fn = pre = None
    buf = data.buf
    for r in num.attr_list:
        a = r.obj
        c = a.__class__
        if c is tuple:
            fn, line, col = a
        elif c is flc and r.dialect == flc_dialect and a.end_line is None and a.end_column is None:
            fn, line, col = a.filename, a.line, a.column
        else:
            codec = codec_of_dialect[r.dialect]
            before = data.size()
            codec.write_attr(a, dw)
            n = 2 * (data.size() - before) + 1
            add_flagged(small[n] if n < SMALL else varint_bytes(n))
            buf = data.buf      # (a large payload starts a new buffer)
            continue
        if fn != last_fn:
            pre = prefixes.get(fn)
            if pre is None:
                pre = prefixes[fn] = small[11] + varint_bytes(num.attr_number(_string_attr(fn)))
            last_fn = fn
        piece = (pre + (small[line] if 0 <= line < SMALL else varint_bytes(line))
                 + (small[col] if 0 <= col < SMALL else varint_bytes(col)))
        buf += piece
        n = 2 * len(piece) + 1
        add_flagged(small[n] if n < SMALL else varint_bytes(n))
    for r in num.type_list:
        codec = codec_of_dialect[r.dialect]
        before = data.size()
        codec.write_type(r.obj, dw)
        n = 2 * (data.size() - before) + 1
        add_flagged(small[n] if n < SMALL else varint_bytes(n))
    off = Emitter()
    off.varint(len(num.attr_list))
    off.varint(len(num.type_list))
    at = 0
    for recs in (num.attr_list, num.type_list):
        for d, group in groupby(recs, _dialect_of):
            k = len(list(group))
            off.varint(d)
            off.varint(k)
            off.buf += b"".join(flagged[at:at + k])
            at += k

    # ---- IR section
    props_entries: List[bytes] = []
    props_index: Dict[bytes, int] = {}
    props_emitter = Emitter()
    props_w = DialectWriter(num, props_emitter, strings)

    def op_props(op) -> Optional[int]:
        props_emitter.buf = bytearray()
        if not props_writer(op, props_w):
            return None
        body = props_emitter.buf
        entry = varint_bytes(len(body)) + bytes(body)
        i = props_index.get(entry)
        if i is None:
            i = props_index[entry] = len(props_entries)
            props_entries.append(entry)
        return i

    op_index = num.op_index
    attr_ids, attr_number = num.attr_ids, num.attr_number
    type_ids, type_number = num.type_ids, num.type_number
    unknown = A.UNKNOWN_LOC
    small, SMALL = _SMALL_VARINTS, _SMALL
    # the direct path's leaf ops: StableHLO op name -> the encoded number of its VHLO name
    leaf_index = {} if direct is None else {s: varint_bytes(op_index[v]) for s, v in direct.names.items()
                                            if v in op_index}
    leaf_locs = direct.locs if direct is not None else {}   # (per block op list, see Direct)
    aka = direct.aka if direct is not None else {}

    def write_ops(e: Emitter, ops, scope: "_WriteScope"):
        """Encode each op of `ops` (a block's, or the root alone): name, mask, location, then
        what it has of attributes, properties, results, operands, use-list orders and regions.
        Leaf ops (most of a large program) skip the parts they cannot have."""
        buf = e.buf
        ids = scope.ids
        locs = leaf_locs.get(id(ops))
        j = 0
        last_t = last_tb = None     # a leaf result's type and its number's encoding
        for op in ops:
            v = leaf_index.get(op.name)
            if v is not None:
                # a direct leaf op: name, mask, location, results, operands (no more)
                buf += v
                results = op.results
                operands = op.operands
                mask_at = len(buf)
                buf.append((M_RESULTS if results else 0) | (M_OPERANDS if operands else 0))
                rec = locs[j]
                j += 1
                if rec is not None:
                    v = rec.number
                else:
                    loc = op.location
                    if loc is None or loc is unknown:
                        loc = unknown
                    ent = attr_ids.get(id(loc))
                    v = ent[1].number if ent is not None else attr_number(loc)
                buf += small[v] if v < SMALL else varint_bytes(v)
                if results:
                    v = len(results)
                    buf += small[v] if v < SMALL else varint_bytes(v)
                    for r in results:
                        t = r.type
                        if t is not last_t:
                            last_t = t
                            last_tb = type_ids[id(t)][1].number     # (numbered by identity)
                            last_tb = small[last_tb] if last_tb < SMALL else varint_bytes(last_tb)
                        buf += last_tb
                if operands:
                    v = len(operands)
                    buf += small[v] if v < SMALL else varint_bytes(v)
                    for x in operands:
                        vid = ids.get(id(x))
                        if vid is None:
                            raise SerializationError(f"{op.name} uses a value that is not defined before it")
                        buf += small[vid] if vid < SMALL else varint_bytes(vid)
                if results:
                    nxt = scope.next_ids
                    if nxt:
                        k = nxt[-1]
                        for r in results:
                            ids[id(r)] = k
                            if aka:
                                other = aka.get(id(r))
                                if other is not None:
                                    ids[id(other)] = k
                            k += 1
                        nxt[-1] = k
                    if uses is not None:
                        for r in results:
                            lst = uses.get(id(r))
                            if lst is not None and len(lst) > 1:
                                if _write_use_orders(e, results, uses):
                                    buf[mask_at] |= M_USELIST
                                break
                continue
            v = op_index[op.name]
            buf += small[v] if v < SMALL else varint_bytes(v)
            mask_at = len(buf)
            buf.append(0)
            mask = 0
            loc = op.location
            if loc is None:
                loc = unknown
            ent = attr_ids.get(id(loc))
            v = ent[1].number if ent is not None and ent[0] is loc else attr_number(loc)
            buf += small[v] if v < SMALL else varint_bytes(v)
            leaf = op.__class__ is LeafOp
            if not leaf:
                d = dict_of(op)
                if d is not None:
                    mask = M_ATTRS
                    e.varint(attr_number(d))
                if version >= 5:
                    pi = op_props(op)
                    if pi is not None:
                        mask |= M_PROPERTIES
                        e.varint(pi)
            results = op.results
            if results:
                mask |= M_RESULTS
                v = len(results)
                buf += small[v] if v < SMALL else varint_bytes(v)
                for r in results:
                    t = r.type
                    ent = type_ids.get(id(t))
                    v = ent[1].number if ent is not None and ent[0] is t else type_number(t)
                    buf += small[v] if v < SMALL else varint_bytes(v)
            operands = op.operands
            if operands:
                mask |= M_OPERANDS
                v = len(operands)
                buf += small[v] if v < SMALL else varint_bytes(v)
                for x in operands:
                    vid = ids.get(id(x))
                    if vid is None:
                        raise SerializationError(f"{op.name} uses a value that is not defined before it")
                    buf += small[vid] if vid < SMALL else varint_bytes(vid)
            if results:
                nxt = scope.next_ids
                if nxt:
                    k = nxt[-1]
                    for r in results:
                        ids[id(r)] = k
                        if aka:
                            other = aka.get(id(r))
                            if other is not None:
                                ids[id(other)] = k
                        k += 1
                    nxt[-1] = k
                if uses is not None:
                    for r in results:
                        lst = uses.get(id(r))
                        if lst is not None and len(lst) > 1:
                            if _write_use_orders(e, results, uses):
                                mask |= M_USELIST
                            break
            if leaf or not op.regions:
                buf[mask_at] = mask
                continue
            buf[mask_at] = mask | M_REGIONS
            iso = isolated(op)
            e.varint_flag(len(op.regions), iso)
            if iso:
                inner = _WriteScope()
                if version >= 2:
                    sub = Emitter()
                    for r in op.regions:
                        write_region(sub, r, inner)
                    e.section(S_IR, sub)
                else:
                    for r in op.regions:
                        write_region(e, r, inner)
            else:
                for r in op.regions:
                    write_region(e, r, scope)
            buf = e.buf     # a nested section of 64 KiB or more starts a new buffer

    def write_region(e: Emitter, region: Region, scope: "_WriteScope"):
        if not region.blocks:
            e.varint(0)
            return
        nvalues = sum([len(b.arguments) + sum([len(o.results) for o in b.operations]) for b in region.blocks])
        e.varint(len(region.blocks))
        e.varint(nvalues)
        scope.push(nvalues)
        for b in region.blocks:
            e.varint_flag(len(b.operations), bool(b.arguments))
            if b.arguments:
                e.varint(len(b.arguments))
                for v, loc in zip(b.arguments, b.arg_locations):
                    loc = loc if loc is not None else A.UNKNOWN_LOC
                    if version >= 4:
                        unknown_loc = isinstance(loc, A.UnknownLoc)
                        e.varint_flag(type_number(v.type), not unknown_loc)
                        if not unknown_loc:
                            e.varint(attr_number(loc))
                    else:
                        e.varint(type_number(v.type))
                        e.varint(attr_number(loc))
                    scope.define(v, aka)
                if version >= 3:
                    at = len(e.buf)
                    e.byte(0)
                    if uses is not None and _write_use_orders(e, b.arguments, uses):
                        e.buf[at] = M_USELIST
            write_ops(e, b.operations, scope)
        scope.pop(nvalues)

    ir = Emitter()
    ir.varint_flag(1, False)
    write_ops(ir, (root,), _WriteScope())

    # ---- strings
    se = Emitter()
    se.varint(len(strings.order))
    encoded = [s.encode("utf-8") for s in strings.order]
    for b in reversed(encoded):
        se.varint(len(b) + 1)
    for b in encoded:
        se.raw(b)
        se.byte(0)

    out = Emitter()
    out.raw(MAGIC)
    out.varint(version)
    out.raw(producer.encode("utf-8") + b"\x00")
    out.section(S_DIALECT, de)
    out.section(S_ATTRTYPE_OFFSET, off)
    out.section(S_ATTRTYPE, data)
    out.section(S_IR, ir)
    out.section(S_RESOURCE_OFFSET, b"\x01")
    out.section(S_RESOURCE, b"")
    out.section(S_STRING, se)
    if version >= 5:
        pe = Emitter()
        pe.varint(len(props_entries))
        for p in props_entries:
            pe.raw(p)
        out.section(S_PROPERTIES, pe)
    return out.getvalue()


def _use_lists(root: Operation, rewrites: Dict[int, int], canon: Optional[dict] = None):
    """Per value, its uses [(op id, operand number)] in MLIR's use-list order after parsing and
    upstream's version rewrites: parsing pushes each new use to the front (so uses are in
    descending id order); recreating an op makes its operand uses the newest ones and reverses
    the use lists of its results (replaceAllUsesWith moves uses one by one). `canon` (the
    direct path's `Direct.canon`): uses of a value's other object count as uses of the value."""
    order: List[Operation] = []
    uses: Dict[int, list] = {}
    stack = [root]
    get = uses.get
    canon = canon or {}

    def key(v):
        return id(canon.get(id(v), v))
    while stack:        # pre-order, as Operation.walk
        op = stack.pop()
        k = len(order)
        order.append(op)
        i = 0
        for v in op.operands:
            if canon:
                v = canon.get(id(v), v)
            lst = get(id(v))
            if lst is None:
                uses[id(v)] = [(k, i)]
            else:
                lst.append((k, i))
            i += 1
        if op.regions:
            for region in reversed(op.regions):
                for block in reversed(region.blocks):
                    stack.extend(reversed(block.operations))
    opid = {id(op): k for k, op in enumerate(order)} if rewrites else {}
    for lst in uses.values():
        if len(lst) > 1:
            lst.reverse()
    for op in order:
        if op.name == "builtin.unrealized_conversion_cast":
            # a cast the legalization to VHLO puts between a value of builtin type (an sdy
            # region's argument, an sdy op's result) and its VHLO users: the users are moved
            # over to the cast one at a time, which reverses their order (observed on jaxlib's
            # artifacts of shard_map bodies with two uses of an argument)
            for r in op.results:
                lst = uses.get(id(r))
                if lst and len(lst) > 1:
                    lst.reverse()
    for op in (order if rewrites else ()):
        n = rewrites.get(id(op), 0)
        k = opid[id(op)]
        for _ in range(n):
            for i, v in enumerate(op.operands):
                lst = uses[key(v)]
                lst.remove((k, i))
                lst.insert(0, (k, i))
            for r in op.results:
                lst = uses.get(id(r))
                if lst:
                    lst.reverse()
    return uses


def _write_use_orders(e: Emitter, values, uses) -> bool:
    orders = {}
    for idx, v in enumerate(values):
        lst = uses.get(id(v))
        if not lst or len(lst) < 2:
            continue
        ids = [(k << 32) | i for k, i in lst]
        if all(ids[j] > ids[j + 1] for j in range(len(ids) - 1)):
            continue
        pairs = sorted(enumerate(ids), key=lambda p: -p[1])
        orders[idx] = [p[0] for p in pairs]
    if not orders:
        return False
    if len(values) != 1:
        e.varint(len(orders))
    # upstream iterates a hash map keyed by the value index (bucket = index * 37 mod 64)
    for idx in sorted(orders, key=lambda k: ((k * 37) & 63, k)):
        order = orders[idx]
        if len(values) != 1:
            e.varint(idx)
        shuffled = sum(1 for j, x in enumerate(order) if j != x)
        if shuffled < len(order) // 2:
            e.varint_flag(shuffled * 2, True)
            for j, x in enumerate(order):
                if j != x:
                    e.varint(x)
                    e.varint(j)
        else:
            e.varint_flag(len(order), False)
            for x in order:
                e.varint(x)
    return True


def _write_groups(e: Emitter, recs: List[_Record], emit_one):
    i = 0
    while i < len(recs):
        j = i
        while j < len(recs) and recs[j].dialect == recs[i].dialect:
            j += 1
        e.varint(recs[i].dialect)
        e.varint(j - i)
        for r in recs[i:j]:
            emit_one(r)
        i = j


class _WriteScope:
    def __init__(self):
        self.ids: Dict[int, int] = {}
        self.size = 0
        self.next_ids: List[int] = []

    def push(self, n):
        self.next_ids.append(self.size)
        self.size += n

    def pop(self, n):
        self.size -= n
        self.next_ids.pop()

    def define(self, v, aka=None):
        if not self.next_ids:
            return
        k = self.ids[id(v)] = self.next_ids[-1]
        if aka:
            other = aka.get(id(v))
            if other is not None:
                self.ids[id(other)] = k
        self.next_ids[-1] += 1
