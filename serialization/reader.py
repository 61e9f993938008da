"""Reading MLIR bytecode: the string, dialect, attribute/type, IR, properties and resource
sections of a file into the generic `stablehlo_ref.ir` structure, with op names as stored
(`vhlo.add_v1`); attributes and types are decoded (lazily, once each) by the dialect codecs.
Any bytecode version 0 .. MAX_VERSION is accepted."""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from stablehlo_ref.deep import check_depth
from stablehlo_ref.errors import SerializationError
from stablehlo_ref.limits import DEFAULT, Limits
from stablehlo_ref.ir import attributes as A
from stablehlo_ref.ir.core import Block, Operation, Region, Value
from stablehlo_ref.serialization.builtin_codec import BuiltinCodec
from stablehlo_ref.serialization.vhlo_to_stablehlo import (good_type, is_func_op, leaf_shape_ok, plain_leaf_name,
                                                           type_from_vhlo)
from stablehlo_ref.serialization.vhlo_values import VType
from stablehlo_ref.serialization.vhlo_to_stablehlo import _GOOD_SHAPES
from stablehlo_ref.serialization.dialect_codec import DialectCodec, DialectReader
from stablehlo_ref.serialization.encoding import (Cursor, MAGIC, MAX_VERSION, M_ATTRS, M_OPERANDS,
                                                  M_PROPERTIES, M_REGIONS, M_RESULTS, M_SUCCESSORS, M_USELIST,
                                                  S_ATTRTYPE, S_ATTRTYPE_OFFSET, S_DIALECT, S_DIALECT_VERSIONS,
                                                  S_IR, S_PROPERTIES, S_RESOURCE, S_RESOURCE_OFFSET, S_STRING,
                                                  _SECTION_NAMES)

# whether the reader builds leaf ops as StableHLO ops directly (tests turn it off to compare
# with the general path)
DIRECT = True

_BUSY = object()   # an attribute/type cache slot whose entry is being decoded
_BAD = object()    # a type the direct path does not take (see _FileReader._sh_type)

_new = object.__new__
_set = object.__setattr__
_FLC = A.FileLineColLoc
_LEAF_MASK = M_ATTRS | M_PROPERTIES | M_REGIONS | M_SUCCESSORS | M_USELIST | 0x80


def _flc_fast_ok() -> bool:
    """Whether a FileLineColLoc can be made by setting its instance dict (a frozen dataclass
    whose constructor only stores its five fields): twice as fast as calling it."""
    try:
        import dataclasses
        names = [f.name for f in dataclasses.fields(_FLC)]
        if names != ["filename", "line", "column", "end_line", "end_column"] or hasattr(_FLC, "__post_init__"):
            return False
        a = _new(_FLC)
        _set(a, "__dict__", {"filename": "f", "line": 1, "column": 2, "end_line": None, "end_column": None})
        return a == _FLC("f", 1, 2) and hash(a) == hash(_FLC("f", 1, 2)) and vars(a) == vars(_FLC("f", 1, 2))
    except Exception:
        return False


_FAST_FLC = _flc_fast_ok()


_OP_SLOTS = ("name", "operands", "results", "attributes", "regions", "location", "successors", "source",
             "attr_dict_source", "_cache")
# the direct path builds ops and values by setting their slots, when they are the ones
# Operation() and Value() set (else it calls them)
_FAST_OPS = Operation.__slots__ == _OP_SLOTS and Value.__slots__ == ("type", "name", "owner", "index")


class _FileReader:
    def __init__(self, data, codecs: Dict[str, DialectCodec], limits: Limits = DEFAULT):
        self.data = data if isinstance(data, (bytes, memoryview)) else bytes(data)
        self.limits = limits
        self.region_depth = 0
        # blobs (tensor data) are handed out as views of the file's bytes: no copies
        self.view = memoryview(self.data)
        self.codecs = codecs
        self.depth = 0
        cur = Cursor(self.data)
        if len(self.data) < 4 or bytes(self.data[:4]) != MAGIC:
            raise SerializationError("not MLIR bytecode: the file does not start with the magic ML\\xefR", "byte 0")
        cur.pos = 4
        at = cur.pos
        self.version = cur.varint("the bytecode version")
        if self.version > MAX_VERSION:
            cur.fail(f"bytecode version {self.version} is newer than the newest supported version {MAX_VERSION}", at)
        self.producer = cur.cstring("producer string")
        self.sections: Dict[int, Tuple[int, int]] = {}
        while not cur.at_end():
            at = cur.pos
            sid_raw = cur.byte("a section id")
            sid = sid_raw & 0x7F
            length = cur.varint("a section length")
            if sid_raw & 0x80:
                align = cur.varint("a section alignment")
                if align == 0 or align & (align - 1) or align > 4096:
                    cur.fail(f"section alignment {align} is not a power of two", at)
                while cur.pos % align:
                    if cur.byte("alignment padding") != 0xCB:
                        cur.fail("bad alignment padding byte (expected 0xCB)", cur.pos - 1)
            if sid >= 9 or sid == S_DIALECT_VERSIONS:
                cur.fail(f"unknown section id {sid}", at)
            if sid in self.sections:
                cur.fail(f"duplicate top-level section {_SECTION_NAMES[sid]} ({sid})", at)
            start = cur.skip(length, f"section {_SECTION_NAMES[sid]}")
            self.sections[sid] = (start, cur.pos)
        required = [S_STRING, S_DIALECT, S_ATTRTYPE, S_ATTRTYPE_OFFSET, S_IR]
        if self.version >= 5:
            required.append(S_PROPERTIES)
        for sid in required:
            if sid not in self.sections:
                raise SerializationError(f"missing data for top-level section: {_SECTION_NAMES[sid]} ({sid})",
                                         f"byte {len(self.data)}")
        if (S_RESOURCE in self.sections) != (S_RESOURCE_OFFSET in self.sections):
            raise SerializationError("resource and resource-offset sections must come together", f"byte {len(self.data)}")
        self._read_strings()
        self._read_properties()
        self._read_dialects()
        self._read_attr_type_offsets()
        # the direct path (leaf ops built as StableHLO ops while reading) is taken in files of
        # VHLO ops only: an op of another name (sdy, casts, a StableHLO name) reads generally
        self.direct = DIRECT and all(n.startswith("vhlo.") or n == "builtin.module" for n in self.op_names)
        self.direct_names: set = set()     # the StableHLO names of the ops it may build
        self.good: Dict[int, object] = {}   # id(t) -> t: StableHLO types that pass good_type
        self.unchecked: set = set()         # ids of ops it built that need read_problem's check
        self._plain = {}                    # (op name index, in a func) -> StableHLO name or None
        self.sh_types: List[object] = [None] * self.n_type
        self.resources = self._read_resources()
        self.op_props: Dict[int, Tuple[int, int]] = {}
        self.op_offsets: Dict[int, int] = {}      # id(op) -> byte offset of its encoding

    def section(self, sid) -> Cursor:
        s, e = self.sections[sid]
        return Cursor(self.data, s, e)

    # ---- strings
    def _read_strings(self):
        cur = self.section(S_STRING)
        n = cur.count("string count", 2)
        sizes = [cur.varint("a string size") for _ in range(n)]
        sizes.reverse()
        self.strings: List[str] = []
        for sz in sizes:
            if sz < 1:
                cur.fail("string size 0 (must include the NUL)")
            raw = cur.take(sz, "string data")
            if raw[-1] != 0:
                cur.fail("string is not NUL-terminated", cur.pos - 1)
            try:
                self.strings.append(bytes(raw[:-1]).decode("utf-8"))
            except UnicodeDecodeError:
                cur.fail("string is not UTF-8", cur.pos - sz)
        if not cur.at_end():
            cur.fail("trailing data in the string section")

    def string(self, idx: int, at: int) -> str:
        if idx >= len(self.strings):
            raise SerializationError(f"string reference {idx} out of range (table has {len(self.strings)})", f"byte {at}")
        return self.strings[idx]

    # ---- properties
    def _read_properties(self):
        self.properties: List[Tuple[int, int]] = []
        if S_PROPERTIES not in self.sections:
            return
        cur = self.section(S_PROPERTIES)
        n = cur.count("properties count")
        for _ in range(n):
            sz = cur.varint("a properties entry size")
            s = cur.skip(sz, "properties entry")
            self.properties.append((s, cur.pos))
        if not cur.at_end():
            cur.fail("trailing data in the properties section")

    # ---- dialects
    def _read_dialects(self):
        cur = self.section(S_DIALECT)
        n = cur.count("dialect count")
        self.dialects: List[str] = []
        for _ in range(n):
            at = cur.pos
            if self.version >= 1:
                idx, has_version = cur.varint_flag("a dialect name")
                if has_version:
                    sid = cur.byte("dialect version section id")
                    if sid & 0x7F != S_DIALECT_VERSIONS:
                        cur.fail(f"expected a dialect version section, found section id {sid}")
                    ln = cur.varint("dialect version length")
                    cur.take(ln, "dialect version")
            else:
                idx = cur.varint("a dialect name")
            self.dialects.append(self.string(idx, at))
        if self.version >= 4:
            cur.varint("op name count")
        self.op_names: List[str] = []
        while not cur.at_end():
            at = cur.pos
            d = cur.varint("a dialect index")
            if d >= len(self.dialects):
                cur.fail(f"dialect index {d} out of range", at)
            k = cur.count("op name count")
            for _ in range(k):
                at = cur.pos
                if self.version >= 5:
                    idx, _registered = cur.varint_flag("an op name")
                else:
                    idx = cur.varint("an op name")
                self.op_names.append(self.dialects[d] + "." + self.string(idx, at))

    # ---- attributes and types
    def _read_attr_type_offsets(self):
        cur = self.section(S_ATTRTYPE_OFFSET)
        data_start, data_end = self.sections[S_ATTRTYPE]
        n_attr = cur.count("attribute count")
        n_type = cur.count("type count")
        if n_attr + n_type > cur.remaining:
            cur.fail(f"{n_attr} attributes and {n_type} types do not fit the offset section")
        entries: List[Tuple[str, int, int, bool]] = []
        offset = data_start
        for total in (n_attr, n_attr + n_type):
            while len(entries) < total:
                at = cur.pos
                d = cur.varint("a dialect index")
                if d >= len(self.dialects):
                    cur.fail(f"dialect index {d} out of range", at)
                k = cur.count("entry count")
                if len(entries) + k > total:
                    cur.fail("attribute/type group runs past the declared count", at)
                # (one-byte sizes, the common case, decoded inline)
                data, p, cend = cur.data, cur.pos, cur.end
                dname, append = self.dialects[d], entries.append
                for _ in range(k):
                    b = data[p] if p < cend else 0
                    if b & 1:
                        v = b >> 1
                        q = p + 1
                    else:
                        cur.pos = p
                        v = cur.varint("an entry size")
                        q = cur.pos
                    size = v >> 1
                    if offset + size > data_end:
                        cur.fail("attribute/type entry runs past the end of the data section", p)
                    append((dname, offset, offset + size, bool(v & 1)))
                    offset += size
                    p = q
                cur.pos = p
        if not cur.at_end():
            cur.fail("trailing data in the attribute/type offset section")
        self.attr_entries = entries[:n_attr]
        self.type_entries = entries[n_attr:]
        self.attr_cache: List[object] = [None] * n_attr
        self._builtin_is_ours = self.codecs.get("builtin").__class__ is BuiltinCodec
        self.type_cache: List[object] = [None] * n_type
        self.n_attr, self.n_type = n_attr, n_type

    def _decode(self, kind, idx, at):
        entries = self.attr_entries if kind == "attr" else self.type_entries
        cache = self.attr_cache if kind == "attr" else self.type_cache
        if idx >= len(entries):
            raise SerializationError(f"{kind} reference {idx} out of range (table has {len(entries)})", f"byte {at}")
        v = cache[idx]
        if v is not None and v is not _BUSY:
            return v
        dialect, s, e, custom = entries[idx]
        if v is _BUSY:
            raise SerializationError(f"{kind} #{idx} refers to itself", f"byte {s}")
        check_depth(self.depth, self.limits, "attributes and types", f"byte {s}")
        if custom and e - s >= 4 and self.data[s] == 0x17 and kind == "attr" and dialect == "builtin" \
                and self._builtin_is_ours:
            v = self._file_loc(idx, s, e)
            if v is not None:
                return v
        cache[idx] = _BUSY
        self.depth += 1
        try:
            cur = Cursor(self.data, s, e)
            if not custom:
                text = cur.cstring(f"{kind} assembly text")
                raise SerializationError(f"{kind} #{idx} of dialect {dialect!r} is stored as text ({text!r}); "
                                         "textual attribute/type entries are not supported", f"byte {s}")
            codec = self.codecs.get(dialect)
            if codec is None:
                raise SerializationError(f"{kind} #{idx} belongs to dialect {dialect!r}, which this reader does not know",
                                         f"byte {s}")
            r = DialectReader(self, cur)
            v = codec.read_attr(r) if kind == "attr" else codec.read_type(r)
            if not cur.at_end():
                cur.fail(f"trailing bytes in {dialect} {kind} #{idx}")
        except BaseException:
            cache[idx] = None
            raise
        finally:
            self.depth -= 1
        cache[idx] = v
        return v

    def _file_loc(self, idx, s, e):
        """The builtin codec's most frequent entry, a plain file location (code 11: file name
        reference, line, column), decoded without the generic machinery; None (nothing cached)
        when the entry is anything else or malformed, for the general path to handle."""
        cur = Cursor(self.data, s + 1, e)
        at = cur.pos
        fi = cur.varint("an attribute reference")
        line = cur.varint("a line")
        col = cur.varint("a column")
        if cur.pos != e:
            return None
        cache = self.attr_cache
        cache[idx] = _BUSY
        self.depth += 1
        try:
            fn = self.attr(fi, at)
        finally:
            self.depth -= 1
            cache[idx] = None
        if fn.__class__ is not A.StringAttr:
            return None
        v = cache[idx] = A.FileLineColLoc(fn.value, line, col)
        return v

    def attr(self, idx, at=0):
        if idx < self.n_attr:
            v = self.attr_cache[idx]
            if v is not None and v is not _BUSY:
                return v
        return self._decode("attr", idx, at)

    def type(self, idx, at=0):
        if idx < self.n_type:
            v = self.type_cache[idx]
            if v is not None and v is not _BUSY:
                return v
        return self._decode("type", idx, at)

    # ---- resources (parsed and validated; blobs are kept by key)
    def _read_resources(self) -> dict:
        out = {}
        if S_RESOURCE_OFFSET not in self.sections:
            return out
        off = self.section(S_RESOURCE_OFFSET)
        data = self.section(S_RESOURCE)

        def group():
            n = off.count("resource entry count")
            for _ in range(n):
                at = off.pos
                key = self.string(off.varint("a resource key"), at)
                size = off.varint("a resource entry size")
                kind = off.byte("a resource kind")
                body = Cursor(self.data, data.pos, data.pos + size)
                data.take(size, "resource entry")
                if kind == 0:
                    align = body.varint("blob alignment")
                    n2 = body.varint("blob size")
                    while body.pos % max(align, 1) and body.remaining > n2:
                        body.byte()
                    s = body.skip(n2, "resource blob")
                    out[key] = self.view[s:body.pos]
        n_ext = off.count("external resource group count")
        for _ in range(n_ext):
            off.varint("a resource provider name")
            group()
        while not off.at_end():
            at = off.pos
            d = off.varint("a dialect index")
            if d >= len(self.dialects):
                off.fail(f"dialect index {d} out of range", at)
            group()
        return out

    # ---- IR
    def read_ir(self) -> Operation:
        cur = self.section(S_IR)
        n, has_args = cur.varint_flag("top-level block")
        if n != 1 or has_args:
            cur.fail("the IR section must hold exactly one top-level operation")
        scopes = [_ValueScope()]
        op = self._read_op(cur, scopes, None)
        if not cur.at_end():
            cur.fail("trailing data in the IR section")
        return op

    def _read_op(self, cur: Cursor, scopes, blocks) -> Operation:
        self.depth += 1
        if self.depth > self.limits.max_nesting + 2:     # (regions are counted in _read_region)
            check_depth(self.depth - 2, self.limits, "operations", f"byte {cur.pos}")
        data = cur.data
        # one-byte varints (the common case) are decoded inline; anything else, and every
        # error, goes through the cursor's checked readers
        pos = cur.pos
        b = data[pos] if pos < cur.end else 0
        if b & 1:
            ni = b >> 1
            cur.pos = pos + 1
        else:
            ni = cur.varint("an op name")
        if ni >= len(self.op_names):
            cur.fail(f"op name index {ni} out of range", pos)
        op_at = pos
        name = self.op_names[ni]
        mask = cur.byte("op encoding mask")
        if mask & 0x80:
            cur.fail(f"bad op encoding mask {mask:#x}", cur.pos - 1)
        at = at_loc = pos = cur.pos
        b = data[pos] if pos < cur.end else 0
        if b & 1:
            cur.pos = pos + 1
            li = b >> 1
        else:
            li = cur.varint("op location")
        loc = self.attr_cache[li] if li < self.n_attr else None
        if loc is None or loc is _BUSY:
            loc = self._decode("attr", li, at)
        attrs: Dict[str, object] = {}
        if mask & M_ATTRS:
            at = cur.pos
            d = self.attr(cur.varint("op attribute dictionary"), at)
            if not isinstance(d, A.DictAttr):
                cur.fail("op attributes are not a dictionary", at)
            attrs.update(d.entries)
        props = None
        if mask & M_PROPERTIES:
            if self.version < 5:
                cur.fail("properties in a file older than bytecode version 5")
            at = cur.pos
            pi = cur.varint("op properties")
            if pi >= len(self.properties):
                cur.fail(f"properties index {pi} out of range", at)
            props = self.properties[pi]
        result_types = []
        if mask & M_RESULTS:
            k = cur.count("result count")
            type_cache, n_type = self.type_cache, self.n_type
            for _ in range(k):
                at = pos = cur.pos
                b = data[pos] if pos < cur.end else 0
                if b & 1:
                    cur.pos = pos + 1
                    ti = b >> 1
                else:
                    ti = cur.varint("a result type")
                t = type_cache[ti] if ti < n_type else None
                result_types.append(t if t is not None and t is not _BUSY else self._decode("type", ti, at))
        operand_ids = []
        if mask & M_OPERANDS:
            k = cur.count("operand count")
            for _ in range(k):
                pos = cur.pos
                b = data[pos] if pos < cur.end else 0
                if b & 1:
                    cur.pos = pos + 1
                    operand_ids.append((pos, b >> 1))
                else:
                    operand_ids.append((pos, cur.varint("an operand")))
        if mask & M_SUCCESSORS:
            k = cur.count("successor count")
            for _ in range(k):
                at = cur.pos
                b = cur.varint("a successor")
                if blocks is None or b >= len(blocks):
                    cur.fail(f"successor block {b} out of range", at)
        if not isinstance(loc, A.Location):
            cur.fail(f"the location of {name} is {type(loc).__name__}, not a location", at_loc)
        op = Operation(name, [], result_types, attrs, location=loc)
        self.op_offsets[id(op)] = op_at
        if props is not None:
            self.op_props[id(op)] = props
        scope = scopes[-1]
        if operand_ids:
            values, operands = scope.values, op.operands
            nvals = len(values)
            for pos, vid in operand_ids:
                v = values[vid] if vid < nvals else None
                operands.append(v if v is not None else scope.use(vid, op, len(operands), cur, pos))
        if scope.forward or not scope.next_ids:
            for r in op.results:
                scope.define(r, cur)
        elif op.results:
            # define(), inline: no forward references wait on these slots
            values, nxt = scope.values, scope.next_ids
            i = nxt[-1]
            for r in op.results:
                if i >= len(values):
                    cur.fail("more values defined than the region declared")
                values[i] = r
                i += 1
            nxt[-1] = i
        if mask & M_USELIST:
            if self.version < 3:
                cur.fail("use-list orders in a file older than bytecode version 3")
            self._skip_uselists(cur, len(op.results))
        if mask & M_REGIONS:
            nreg, isolated = cur.varint_flag("region count")
            if nreg > cur.remaining:
                cur.fail(f"region count {nreg} larger than the data left")
            if isolated:
                scopes.append(_ValueScope())
            if isolated and self.version >= 2:
                at = cur.pos
                sid = cur.byte("nested IR section id")
                if sid & 0x7F != S_IR:
                    cur.fail(f"expected a nested IR section, found section id {sid & 0x7F}", at)
                ln = cur.varint("nested IR section length")
                if sid & 0x80:
                    align = cur.varint("section alignment")
                    while align > 1 and cur.pos % align:
                        cur.byte()
                sub = Cursor(self.data, cur.pos, cur.pos)
                cur.skip(ln, "nested IR section")
                sub.end = cur.pos
                for _ in range(nreg):
                    op.regions.append(self._read_region(sub, scopes, name))
                if not sub.at_end():
                    sub.fail("trailing data in a nested IR section")
            else:
                for _ in range(nreg):
                    op.regions.append(self._read_region(cur, scopes, name))
            if isolated:
                scopes.pop().check_resolved(cur)
        self.depth -= 1
        return op

    def _skip_uselists(self, cur, n_values):
        count = cur.count("use-list count") if n_values > 1 else 1
        for _ in range(count):
            if n_values > 1:
                at = cur.pos
                if cur.varint("use-list value index") >= n_values:
                    cur.fail("use-list value index out of range", at)
            k, _pair = cur.varint_flag("use-list length")
            k = k if k <= cur.remaining else cur.fail("use-list length larger than the data left")
            for _ in range(k):
                cur.varint("use-list entry")

    def _read_region(self, cur, scopes, parent: Optional[str] = None) -> Region:
        self.region_depth += 1
        if self.region_depth > self.limits.max_nesting:
            check_depth(self.region_depth, self.limits, "regions", f"byte {cur.pos}")
        try:
            return self._read_region_body(cur, scopes, parent)
        finally:
            self.region_depth -= 1

    def _plain_table(self, parent: Optional[str]) -> Optional[list]:
        """Per op name index: the StableHLO name of a leaf op of that name in a region of
        `parent` (as stored) that the direct path builds, else None (see plain_leaf_name)."""
        if not self.direct or not _FAST_OPS or parent is None:
            return None
        in_func = is_func_op(parent)
        tab = self._plain.get(in_func)
        if tab is None:
            tab = self._plain[in_func] = [plain_leaf_name(n, in_func) if n.startswith("vhlo.") else None
                                          for n in self.op_names]
            # (the file's op names are all VHLO: an op of one of these names is built here)
            self.direct_names.update(n for n in tab if n is not None)
        return tab

    def _sh_type(self, ti: int, at: int):
        """The StableHLO type of type entry `ti` for the direct path, or _BAD (not a VHLO
        type, or one whose conversion fails: the general path reads the op and says what is
        wrong at the point where it would). Decoding errors raise here, as they would there."""
        t = self.sh_types[ti] if ti < self.n_type else None
        if t is not None:
            return t
        vt = self.type(ti, at)
        if vt.__class__ is not VType:
            return _BAD
        t = self.sh_types[ti] = self._st(vt)
        return t

    def _st(self, vt):
        """type_from_vhlo(vt), or _BAD where it fails; good types noted in self.good."""
        try:
            t = type_from_vhlo(vt)
        except (SerializationError, KeyError, IndexError, ValueError, TypeError, AttributeError):
            return _BAD
        if good_type(t):
            self.good[id(t)] = t
        return t

    def _read_region_body(self, cur, scopes, parent: Optional[str] = None) -> Region:
        nblocks = cur.count("block count")
        region = Region()
        if nblocks == 0:
            return region
        at = cur.pos
        nvalues = cur.varint("region value count")
        if nvalues > cur.end - cur.pos:      # (each value takes at least a byte: its type)
            cur.fail(f"region value count {nvalues} is impossible for a file this size", at)
        scope = scopes[-1]
        scope.push(nvalues)
        blocks = [Block() for _ in range(nblocks)]
        region.blocks = blocks
        for b in blocks:
            b.parent = region
            nops, has_args = cur.varint_flag("block header")
            if has_args:
                nargs = cur.count("block argument count")
                for _ in range(nargs):
                    at = cur.pos
                    if self.version >= 4:
                        ti, has_loc = cur.varint_flag("a block argument")
                        t = self.type(ti, at)
                        loc = None
                        if has_loc:
                            at = cur.pos
                            loc = self.attr(cur.varint("a block argument location"), at)
                    else:
                        t = self.type(cur.varint("a block argument type"), at)
                        at = cur.pos
                        loc = self.attr(cur.varint("a block argument location"), at)
                    if loc is not None and not isinstance(loc, A.Location):
                        cur.fail(f"a block argument's location is {type(loc).__name__}, not a location", at)
                    if isinstance(loc, A.UnknownLoc):
                        loc = None
                    v = b.add_argument(t, None, loc)
                    if self.direct and t.__class__ is VType:
                        # converted now, as the conversion would (where it fails, the
                        # conversion says so at its turn), so that leaf ops using the
                        # argument can be checked while they are read
                        st = self._st(t)
                        if st is not _BAD:
                            v.type = st
                    scope.define(v, cur)
                if self.version >= 3:
                    flag = cur.byte("block use-list flag")
                    if flag & M_USELIST:
                        self._skip_uselists(cur, nargs)
                    elif flag:
                        cur.fail(f"bad block use-list flag {flag:#x}", cur.pos - 1)
            if nops > cur.remaining:
                cur.fail(f"block op count {nops} larger than the data left")
            tab = self._plain_table(parent)
            if tab is None:
                for _ in range(nops):
                    b.operations.append(self._read_op(cur, scopes, blocks))
            else:
                self._read_ops_direct(cur, scopes, blocks, b.operations, nops, tab)
        scope.pop(nvalues)
        return region

    def _read_ops_direct(self, cur, scopes, blocks, ops: list, nops: int, tab: list):
        """Read `nops` ops into `ops`: a leaf op whose VHLO name is a plain leaf name (`tab`)
        and whose types convert is built as the StableHLO op directly (name, result types,
        location, operands: nothing more to convert); any other op, and any op with something
        unusual in it (errors included), is read by _read_op from its first byte again."""
        scope = scopes[-1]
        values, nxt = scope.values, scope.next_ids
        # the ops here are read at this depth (as _read_op counts them); _read_op counts itself
        if scope.forward or not nxt or self.depth + 1 > self.limits.max_nesting + 2:
            for _ in range(nops):
                ops.append(self._read_op(cur, scopes, blocks))
            return
        data, end = cur.data, cur.end
        n_names = len(tab)
        attr_cache, n_attr, attr_entries = self.attr_cache, self.n_attr, self.attr_entries
        sh_types, n_type = self.sh_types, self.n_type
        offsets = self.op_offsets
        sh_type = self._sh_type
        good, unchecked, shapes = self.good, self.unchecked, _GOOD_SHAPES
        gt = None       # the type of the last value found good
        self.depth += 1
        # plain file locations decoded here (else by _decode): where _decode would decode them
        flc_ok = self._builtin_is_ours and self.depth <= self.limits.max_nesting

        def read_op():
            self.depth -= 1
            op = self._read_op(cur, scopes, blocks)
            self.depth += 1
            return op
        loc_class = A.Location
        new, Op, Val = _new, Operation, Value
        for _ in range(nops):
            pos0 = p = cur.pos
            if p + 3 >= end:
                ops.append(read_op())
                continue
            b = data[p]
            name = tab[b >> 1] if b & 1 and (b >> 1) < n_names else None
            mask = data[p + 1]
            if name is None or mask & _LEAF_MASK:
                ops.append(read_op())
                continue
            # location (an attribute index: one or two bytes)
            b = data[p + 2]
            if b & 1:
                li = b >> 1
                p += 3
            elif b & 2:
                li = (b | (data[p + 3] << 8)) >> 2
                p += 4
            else:
                ops.append(read_op())
                continue
            loc = attr_cache[li] if li < n_attr else None
            if loc is None and li < n_attr and flc_ok:
                # a plain file location (builtin code 11: file name, line, column), inline
                dialect, q, e, custom = attr_entries[li]
                if custom and data[q] == 0x17 and e - q >= 4 and dialect == "builtin":
                    q += 1
                    b = data[q]
                    if b & 1:
                        fi = b >> 1
                        q += 1
                    elif b & 2 and q + 1 < e:
                        fi = (b | (data[q + 1] << 8)) >> 2
                        q += 2
                    else:
                        fi = -1
                    b = data[q] if q < e else 0
                    if b & 1:
                        line = b >> 1
                        q += 1
                    elif b & 2 and q + 1 < e:
                        line = (b | (data[q + 1] << 8)) >> 2
                        q += 2
                    else:
                        fi = -1
                    b = data[q] if q < e else 0
                    if b & 1:
                        col = b >> 1
                        q += 1
                    elif b & 2 and q + 1 < e:
                        col = (b | (data[q + 1] << 8)) >> 2
                        q += 2
                    else:
                        fi = -1
                    if q == e and 0 <= fi < n_attr and fi != li:
                        fn = attr_cache[fi]
                        if fn.__class__ is A.StringAttr:
                            if _FAST_FLC:
                                loc = new(_FLC)
                                _set(loc, "__dict__", {"filename": fn.value, "line": line, "column": col,
                                                       "end_line": None, "end_column": None})
                            else:
                                loc = _FLC(fn.value, line, col)
                            attr_cache[li] = loc
            if loc is None or loc is _BUSY:
                cur.pos = p
                loc = self._decode("attr", li, pos0 + 2)     # (raises as _read_op would)
            if loc.__class__ is not _FLC and not isinstance(loc, loc_class):
                cur.pos = pos0
                ops.append(read_op())
                continue
            op = new(Op)
            results = []
            if mask & M_RESULTS:
                b = data[p]
                k = b >> 1 if b & 1 else end
                p += 1
                if k > end - p:
                    cur.pos = pos0
                    ops.append(read_op())
                    continue
                i = nxt[-1]
                if i + k > len(values):
                    cur.pos = pos0
                    ops.append(read_op())
                    continue
                for j in range(k):
                    tp = p
                    b = data[p] if p < end else 0
                    if b & 1:
                        ti = b >> 1
                        p += 1
                    elif b & 2 and p + 1 < end:
                        ti = (b | (data[p + 1] << 8)) >> 2
                        p += 2
                    else:
                        results = None
                        break
                    t = sh_types[ti] if ti < n_type else None
                    if t is None:
                        cur.pos = p
                        t = sh_type(ti, tp)
                    if t is _BAD:
                        results = None
                        break
                    v = new(Val)
                    v.type = t
                    v.name = None
                    v.owner = op
                    v.index = j
                    results.append(v)
                if results is None:
                    cur.pos = pos0
                    ops.append(read_op())
                    continue
            operands = []
            if mask & M_OPERANDS:
                b = data[p] if p < end else 0
                k = b >> 1 if b & 1 else end
                p += 1
                if k > end - p:
                    cur.pos = pos0
                    ops.append(read_op())
                    continue
                nvals = len(values)
                for _ in range(k):
                    b = data[p] if p < end else 0
                    if b & 1:
                        vid = b >> 1
                        p += 1
                    elif b & 2 and p + 1 < end:
                        vid = (b | (data[p + 1] << 8)) >> 2
                        p += 2
                    else:
                        operands = None
                        break
                    v = values[vid] if vid < nvals else None
                    if v is None:
                        operands = None
                        break
                    operands.append(v)
                if operands is None:
                    cur.pos = pos0
                    ops.append(read_op())
                    continue
            op.name = name
            op.operands = operands
            op.results = results
            op.attributes = {}
            op.regions = []
            op.location = loc
            op.successors = []
            op.source = None
            op.attr_dict_source = None
            op._cache = None
            if results:
                for v in results:
                    values[i] = v
                    i += 1
                nxt[-1] = i
            ops.append(op)
            cur.pos = p
            # read_problem's check, here where it is cheap (see leaf_shape_ok); an op it does
            # not clear is checked after the conversion, and its offset kept for the message
            ok = True
            for v in operands:
                t = v.type
                if t is not gt and good.get(id(t)) is not t:
                    ok = False
                    break
            if ok:
                for v in results:
                    t = v.type
                    if t is not gt:
                        if good.get(id(t)) is not t:
                            ok = False
                            break
                        gt = t
                if ok and (name, len(operands), len(results)) not in shapes:
                    ok = leaf_shape_ok(op)
            if not ok:
                unchecked.add(id(op))
                offsets[id(op)] = pos0
        self.depth -= 1


class _ValueScope:
    """Value slots of one isolated scope (MLIR's reader layout: nested regions append)."""

    def __init__(self):
        self.values: List[Optional[Value]] = []
        self.next_ids: List[int] = []
        self.forward: Dict[int, list] = {}

    def push(self, n):
        self.next_ids.append(len(self.values))
        self.values.extend([None] * n)

    def pop(self, n):
        del self.values[len(self.values) - n:]
        self.next_ids.pop()

    def define(self, v: Value, cur):
        if not self.next_ids:
            return  # the root op's results are not addressable
        i = self.next_ids[-1]
        if i >= len(self.values):
            cur.fail("more values defined than the region declared")
        self.next_ids[-1] = i + 1
        self.values[i] = v
        for op, k in self.forward.pop(i, ()):
            if op.operands[k].type is not None and op.operands[k].type != v.type:
                cur.fail("forward reference used with a different type")
            op.operands[k] = v

    def use(self, vid, op, k, cur, at) -> Value:
        if vid >= len(self.values):
            cur.fail(f"operand refers to value {vid}, but only {len(self.values)} are in scope", at)
        v = self.values[vid]
        if v is None:
            # StableHLO's regions are SSA regions: a value is defined before it is used (MLIR
            # would read this and fail verification; nothing here can hold an undefined value)
            cur.fail(f"operand refers to value {vid} before it is defined", at)
        return v

    def check_resolved(self, cur):
        if self.forward:
            cur.fail(f"operand refers to value {min(self.forward)}, which is never defined")


def read_file(data, codecs: Dict[str, DialectCodec], limits: Limits = DEFAULT):
    """Parse MLIR bytecode -> (root Operation, reader). Op attributes hold the discardable
    (v >= 5) or all (v < 5) attributes; op._props holds the (start, end) of its properties."""
    f = _FileReader(data, codecs, limits)
    root = f.read_ir()
    return root, f


def properties_reader(f: _FileReader, span) -> DialectReader:
    return DialectReader(f, Cursor(f.data, span[0], span[1]))
