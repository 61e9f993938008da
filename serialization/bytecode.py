"""MLIR bytecode: the container format of StableHLO portable artifacts.

Owns the primitive encodings (prefix varints, zigzag, sections), the string, dialect,
attribute/type, IR, properties and resource sections, the builtin dialect's attribute and type
codecs, and the deterministic numbering upstream's writer uses (so that written files are byte
for byte what upstream writes). Dialect-specific attribute/type codecs (VHLO) plug in through
`DialectCodec`. The IR read and written here is the generic `stablehlo_ref.ir` structure with
op names as stored (`vhlo.add_v1`); converting VHLO to StableHLO is `vhlo.py`'s job.

Every read is bounds checked: a malformed file raises SerializationError naming the byte
offset and what was expected, and no size field is trusted before it is checked against the
bytes that remain.
"""
from __future__ import annotations

import operator
import struct
from typing import Callable, Dict, List, Optional, Tuple

import numpy as np

from stablehlo_ref.errors import SerializationError
from stablehlo_ref.ir import attributes as A
from stablehlo_ref.ir import types as T
from stablehlo_ref.ir.core import Block, Module, Operation, Region, Value

MAGIC = b"ML\xefR"
MAX_VERSION = 6
INT64_MIN = -(1 << 63)

# section ids
S_STRING, S_DIALECT, S_ATTRTYPE, S_ATTRTYPE_OFFSET, S_IR, S_RESOURCE, S_RESOURCE_OFFSET, \
    S_DIALECT_VERSIONS, S_PROPERTIES = range(9)
_SECTION_NAMES = ["String", "Dialect", "AttrType", "AttrTypeOffset", "IR", "Resource",
                  "ResourceOffset", "DialectVersions", "Properties"]

# op encoding mask bits
M_ATTRS, M_RESULTS, M_OPERANDS, M_SUCCESSORS, M_REGIONS, M_USELIST, M_PROPERTIES = \
    0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40

MAX_NESTING = 2000


# ============================================================ primitive reading

class Cursor:
    """A bounds-checked reader over data[pos:end]; offsets in messages are absolute."""

    __slots__ = ("data", "pos", "end")

    def __init__(self, data, pos: int = 0, end: Optional[int] = None):
        self.data = data
        self.pos = pos
        self.end = len(data) if end is None else end

    def fail(self, what: str, at: Optional[int] = None):
        raise SerializationError(what, f"byte {self.pos if at is None else at}")

    @property
    def remaining(self) -> int:
        return self.end - self.pos

    def at_end(self) -> bool:
        return self.pos >= self.end

    def byte(self, what: str = "a byte") -> int:
        if self.pos >= self.end:
            self.fail(f"unexpected end of data, expected {what}")
        b = self.data[self.pos]
        self.pos += 1
        return b

    def take(self, n: int, what: str = "bytes"):
        if n < 0 or n > self.end - self.pos:
            self.fail(f"{what}: size {n} runs past the end of its section ({self.end - self.pos} bytes left)")
        start = self.pos
        self.pos += n
        return self.data[start:self.pos]

    def skip(self, n: int, what: str = "bytes") -> int:
        """take() without slicing (no copy of large sections); returns the start offset."""
        if n < 0 or n > self.end - self.pos:
            self.fail(f"{what}: size {n} runs past the end of its section ({self.end - self.pos} bytes left)")
        start = self.pos
        self.pos = start + n
        return start

    def varint(self, what: str = "a varint") -> int:
        pos = self.pos
        if pos < self.end:
            first = self.data[pos]
            if first & 1:           # the common one-byte form
                self.pos = pos + 1
                return first >> 1
            if first & 2 and pos + 1 < self.end:
                self.pos = pos + 2
                return (first | (self.data[pos + 1] << 8)) >> 2
        return self._varint_long(what)

    def _varint_long(self, what: str) -> int:
        first = self.byte(what)
        if first & 1:
            return first >> 1
        if first == 0:
            raw = self.take(8, what)
            return int.from_bytes(raw, "little")
        n = (first & -first).bit_length()     # number of bytes in total
        start = self.pos - 1
        if n - 1 > self.end - self.pos:
            self.fail(f"unexpected end of data inside {what}", start)
        raw = bytes(self.data[start:start + n])
        self.pos = start + n
        return int.from_bytes(raw, "little") >> n

    def svarint(self, what: str = "a signed varint") -> int:
        u = self.varint(what)
        v = (u >> 1) ^ -(u & 1)
        return v

    def varint_flag(self, what: str = "a varint") -> Tuple[int, bool]:
        v = self.varint(what)
        return v >> 1, bool(v & 1)

    def cstring(self, what: str = "a string") -> str:
        data = self.data
        i = self.pos
        while i < self.end and data[i] != 0:
            i += 1
        if i >= self.end:
            self.fail(f"unterminated {what}")
        s = bytes(data[self.pos:i])
        self.pos = i + 1
        try:
            return s.decode("utf-8")
        except UnicodeDecodeError:
            self.fail(f"{what} is not UTF-8")

    def count(self, what: str, min_bytes_each: int = 1) -> int:
        """A varint count of items that take at least `min_bytes_each` bytes each."""
        at = self.pos
        n = self.varint(what)
        if min_bytes_each and n * min_bytes_each > self.end - self.pos:
            self.fail(f"{what} {n} is larger than the {self.end - self.pos} bytes left", at)
        return n


# ============================================================ primitive writing

def varint_bytes(v: int) -> bytes:
    if v < 0:
        raise SerializationError(f"internal error: negative varint {v}")
    if v < 0x80:
        return bytes(((v << 1) | 1,))
    for n in range(2, 9):
        if v < (1 << (7 * n)):
            return (((v << 1) | 1) << (n - 1)).to_bytes(n, "little")
    return b"\x00" + v.to_bytes(8, "little")


def zigzag(v: int) -> int:
    v &= 0xFFFFFFFFFFFFFFFF
    s = v - (1 << 64) if v >> 63 else v
    return ((s << 1) ^ (s >> 63)) & 0xFFFFFFFFFFFFFFFF


# varint encodings of 0 .. 2**14 - 1 (the one- and two-byte forms)
_SMALL_VARINTS = [varint_bytes(v) for v in range(1 << 14)]
_SMALL = 1 << 14
# payloads at least this large are kept as separate chunks (not copied into the buffer):
# the file's bytes are joined once at the end, so a large constant is copied exactly once
_BIG_CHUNK = 1 << 16


class Emitter:
    """A byte sink: a bytearray for the small writes plus, after it, any large payloads kept
    by reference (`chunks`); `size()` counts both, `getvalue()` joins them."""

    __slots__ = ("buf", "chunks", "flushed")

    def __init__(self):
        self.buf = bytearray()
        self.chunks: Optional[list] = None
        self.flushed = 0

    def byte(self, b: int):
        self.buf.append(b)

    def varint(self, v: int):
        if 0 <= v < _SMALL:
            self.buf += _SMALL_VARINTS[v]
        else:
            self.buf += varint_bytes(v)

    def svarint(self, v: int):
        self.varint(zigzag(v))

    def varint_flag(self, v: int, flag: bool):
        self.varint((v << 1) | (1 if flag else 0))

    def raw(self, b):
        n = b.nbytes if isinstance(b, memoryview) else len(b)
        if n >= _BIG_CHUNK:
            if isinstance(b, memoryview) and (b.itemsize != 1 or b.ndim != 1):
                b = b.cast("B")
            if self.chunks is None:
                self.chunks = []
            if self.buf:
                self.chunks.append(self.buf)
                self.flushed += len(self.buf)
                self.buf = bytearray()
            self.chunks.append(b)
            self.flushed += n
        else:
            self.buf += b

    def size(self) -> int:
        return self.flushed + len(self.buf)

    def parts(self) -> list:
        return [self.buf] if self.chunks is None else self.chunks + [self.buf]

    def extend(self, other: "Emitter"):
        for p in other.parts():
            self.raw(p)

    def section(self, sid: int, body):
        self.buf.append(sid)
        if isinstance(body, Emitter):
            self.varint(body.size())
            self.extend(body)
        else:
            self.varint(len(body))
            self.raw(body)

    def getvalue(self) -> bytes:
        if self.chunks is None:
            return bytes(self.buf)
        return b"".join(self.parts())


# ============================================================ dialect codec interface

class DialectCodec:
    """Reads and writes the attributes and types of one dialect (custom encodings)."""

    name = ""

    def owns_attr(self, a) -> bool:
        return False

    def owns_type(self, t) -> bool:
        return False

    def read_attr(self, r: "DialectReader"):
        r.fail(f"no bytecode reader for attributes of dialect {self.name!r}")

    def read_type(self, r: "DialectReader"):
        r.fail(f"no bytecode reader for types of dialect {self.name!r}")

    def write_attr(self, a, w: "DialectWriter"):
        raise NotImplementedError

    def write_type(self, t, w: "DialectWriter"):
        raise NotImplementedError


class DialectReader:
    """What a dialect codec reads an entry with: primitives plus references."""

    __slots__ = ("f", "cur")

    def __init__(self, file: "_FileReader", cur: Cursor):
        self.f = file
        self.cur = cur

    def fail(self, what: str):
        self.cur.fail(what)

    def varint(self, what="a varint"):
        return self.cur.varint(what)

    def svarint(self, what="a signed varint"):
        return self.cur.svarint(what)

    def byte(self, what="a byte"):
        return self.cur.byte(what)

    def attr(self):
        at = self.cur.pos
        return self.f.attr(self.cur.varint("an attribute reference"), at)

    def type(self):
        at = self.cur.pos
        return self.f.type(self.cur.varint("a type reference"), at)

    def optional_attr(self):
        at = self.cur.pos
        idx, present = self.cur.varint_flag("an optional attribute reference")
        return self.f.attr(idx, at) if present else None

    def string(self) -> str:
        at = self.cur.pos
        return self.f.string(self.cur.varint("a string reference"), at)

    def blob(self, what="a blob"):
        """A zero-copy view of the blob's bytes in the file."""
        cur = self.cur
        n = cur.varint(what + " size")
        s = cur.skip(n, what)
        return self.f.view[s:cur.pos]

    def list(self, fn: Callable, what="a list"):
        n = self.cur.count(what + " length")
        return [fn() for _ in range(n)]

    # apint: defined below


def _dr_apint(self, width: int) -> int:
    if width <= 8:
        return self.cur.byte("an 8-bit integer") & ((1 << width) - 1)
    if width <= 64:
        v = self.cur.svarint("an integer") & 0xFFFFFFFFFFFFFFFF
        return v & ((1 << width) - 1)
    n = self.cur.count("an integer's word count")
    v = 0
    for i in range(n):
        v |= (self.cur.svarint("an integer word") & 0xFFFFFFFFFFFFFFFF) << (64 * i)
    return v & ((1 << width) - 1)


DialectReader.apint = _dr_apint


class DialectWriter:
    """What a dialect codec writes an entry with. In counting mode (numbering), references are
    recorded and nothing is emitted."""

    __slots__ = ("n", "e", "s")

    def __init__(self, numbering: "_Numbering", emitter: Optional[Emitter], strings: Optional["_Strings"]):
        self.n = numbering
        self.e = emitter
        self.s = strings

    @property
    def counting(self) -> bool:
        return self.e is None

    def varint(self, v):
        if self.e is not None:
            self.e.varint(v)

    def svarint(self, v):
        if self.e is not None:
            self.e.svarint(v)

    def byte(self, b):
        if self.e is not None:
            self.e.byte(b)

    def attr(self, a):
        if self.e is None:
            self.n.number_attr(a)
        else:
            self.e.varint(self.n.attr_number(a))

    def type(self, t):
        if self.e is None:
            self.n.number_type(t)
        else:
            self.e.varint(self.n.type_number(t))

    def optional_attr(self, a):
        if a is None:
            self.varint(0)
        elif self.e is None:
            self.n.number_attr(a)
        else:
            self.e.varint_flag(self.n.attr_number(a), True)

    def string(self, s: str):
        if self.e is not None:
            self.e.varint(self.s.insert(s))

    def blob(self, b):
        if self.e is not None:
            self.e.varint(len(b))
            self.e.raw(b)

    def list(self, items, fn):
        self.varint(len(items))
        for x in items:
            fn(x)

    def apint(self, v: int, width: int):
        if self.e is None:
            return
        v &= (1 << width) - 1
        if width <= 8:
            self.e.byte(v)
        elif width <= 64:
            self.e.varint(zigzag(v))
        else:
            words = [(v >> (64 * i)) & 0xFFFFFFFFFFFFFFFF for i in range((width + 63) // 64)]
            self.e.varint(len(words))
            for w in words:
                self.e.varint(zigzag(w))


def _key(x):
    """Identity for numbering: value equality plus the Python class (1 == True must not merge)."""
    return (type(x), x)


# ============================================================ builtin dialect

_FLOAT_BITS = {"bf16": 16, "f16": 16, "f32": 32, "f64": 64, "tf32": 19}
_FLOAT_TYPE_CODES = {"bf16": 3, "f16": 4, "f32": 5, "f64": 6, "tf32": 21, "f8E5M2": 22, "f8E4M3": 23,
                     "f8E4M3FN": 24, "f8E5M2FNUZ": 25, "f8E4M3FNUZ": 26, "f8E4M3B11FNUZ": 27,
                     "f8E3M4": 28, "f4E2M1FN": 29, "f6E2M3FN": 30, "f6E3M2FN": 31, "f8E8M0FNU": 32}
_FLOAT_BY_CODE = {v: k for k, v in _FLOAT_TYPE_CODES.items()}


def float_bits_of(et) -> int:
    return et.bits


def float_to_raw(value: float, et) -> int:
    """The bit pattern of `value` in element type `et` (a float type)."""
    arr = np.array([value], dtype=np.float64).astype(et.dtype)
    if et.name == "tf32":
        return int(arr.view(np.uint32)[0]) >> 13
    nbytes = arr.dtype.itemsize
    raw = int.from_bytes(arr.tobytes(), "little")
    return raw & ((1 << max(et.bits, 1)) - 1) if nbytes * 8 != et.bits else raw


def raw_to_float(raw: int, et) -> float:
    if et.name == "tf32":
        return float(np.array([raw << 13], dtype=np.uint32).view(np.float32)[0])
    nbytes = et.dtype.itemsize
    arr = np.frombuffer(int(raw).to_bytes(nbytes, "little"), dtype=et.dtype)
    return float(arr[0])


class BuiltinCodec(DialectCodec):
    name = "builtin"

    _ATTR_CLASSES = (A.ArrayAttr, A.DictAttr, A.StringAttr, A.SymbolRefAttr, A.TypeAttr, A.UnitAttr,
                     A.IntegerAttr, A.FloatAttr, A.BoolAttr, A.CallSiteLoc, A.FileLineColLoc,
                     A.FusedLoc, A.NameLoc, A.UnknownLoc, A.DenseArrayAttr, A.DenseElementsAttr,
                     A.DenseResourceAttr)

    def owns_attr(self, a):
        return isinstance(a, self._ATTR_CLASSES)

    def owns_type(self, t):
        return isinstance(t, (T.ElementType, T.TensorType, T.FunctionType, T.TupleType, T.NoneType,
                              T.UnrankedTensorType))

    # ---- reading
    def read_attr(self, r: DialectReader):
        code = r.varint("a builtin attribute code")
        if code == 11:
            cur = r.cur
            at = cur.pos
            fn = r.f.attr(cur.varint("an attribute reference"), at)
            line = cur.varint("a line")
            col = cur.varint("a column")
            if fn.__class__ is not A.StringAttr:
                r.fail(f"expected a string attribute, found {type(fn).__name__}")
            return A.FileLineColLoc(fn.value, line, col)
        if code == 0:
            return A.ArrayAttr(tuple(r.list(r.attr, "array")))
        if code == 1:
            def entry():
                k = r.attr()
                if not isinstance(k, A.StringAttr):
                    r.fail("dictionary key is not a string")
                return (k.value, r.attr())
            return A.DictAttr(tuple(r.list(entry, "dictionary")))
        if code == 2:
            return A.StringAttr(r.string())
        if code == 3:
            s = r.string()
            return A.StringAttr(s, r.type())
        if code == 4:
            root = r.attr()
            return A.SymbolRefAttr(_str_of(r, root))
        if code == 5:
            root = r.attr()
            nested = r.list(r.attr, "symbol reference")
            return A.SymbolRefAttr(_str_of(r, root), tuple(n.root if isinstance(n, A.SymbolRefAttr) else _str_of(r, n) for n in nested))
        if code == 6:
            return A.TypeAttr(r.type())
        if code == 7:
            return A.UnitAttr()
        if code == 8:
            t = r.type()
            width = 64 if (isinstance(t, T.ElementType) and t.kind == "index") else getattr(t, "bits", None)
            if not isinstance(t, T.ElementType) or not t.is_integer:
                r.fail("integer attribute of a non-integer type")
            raw = r.apint(width)
            if t.kind == "bool":
                return A.BoolAttr(bool(raw))
            if t.kind in ("signed", "index") and raw >> (width - 1):
                raw -= 1 << width
            return A.IntegerAttr(raw, t)
        if code == 9:
            t = r.type()
            if not isinstance(t, T.ElementType) or not t.is_float:
                r.fail("float attribute of a non-float type")
            return A.FloatAttr(raw_to_float(r.apint(t.bits), t), t)
        if code == 10:
            callee = r.attr()
            return A.CallSiteLoc(callee, r.attr())
        if code in (12, 13):
            locs = tuple(r.list(r.attr, "fused locations"))
            meta = r.attr() if code == 13 else None
            return A.FusedLoc(locs, meta)
        if code == 14:
            name = r.attr()
            child = r.attr()
            return A.NameLoc(_str_of(r, name), None if isinstance(child, A.UnknownLoc) else child)
        if code == 15:
            return A.UNKNOWN_LOC
        if code == 17:
            et = r.type()
            n = r.varint("array length")
            blob = r.blob("dense array data")
            return _dense_array(r, et, n, blob)
        if code == 18:
            t = r.type()
            blob = r.blob("dense elements data")
            if not isinstance(t, T.TensorType):
                r.fail("dense elements attribute of a non-tensor type")
            return A.DenseElementsAttr(t, decode_elements(blob, t, r.fail))
        if code == 22:
            fn = r.attr()
            vals = r.list(lambda: r.varint("a location number"), "location range")
            if len(vals) > 4:
                r.fail("file location range with more than 4 numbers")
            name = _str_of(r, fn)
            if len(vals) == 0:
                return A.FileLineColLoc(name, 0, 0)
            if len(vals) == 1:
                return A.FileLineColLoc(name, vals[0], 0)
            if len(vals) == 2:
                return A.FileLineColLoc(name, vals[0], vals[1])
            if len(vals) == 3:
                return A.FileLineColLoc(name, vals[0], vals[1], vals[0], vals[2])
            return A.FileLineColLoc(name, vals[0], vals[1], vals[2], vals[3])
        r.fail(f"unsupported builtin attribute code {code}")

    def read_type(self, r: DialectReader):
        code = r.varint("a builtin type code")
        if code == 0:
            v = r.varint("integer type")
            width, sign = v >> 2, v & 3
            if width == 1 and sign == 0:
                return T.ELEMENT_TYPES["i1"]
            name = ("i" if sign in (0, 1) else "ui") + str(width)
            if name not in T.ELEMENT_TYPES:
                r.fail(f"unsupported integer type width {width}")
            return T.ELEMENT_TYPES[name]
        if code == 1:
            return T.ELEMENT_TYPES["index"]
        if code == 2:
            ins = r.list(r.type, "function inputs")
            outs = r.list(r.type, "function results")
            return T.FunctionType(tuple(ins), tuple(outs))
        if code in _FLOAT_BY_CODE:
            return T.ELEMENT_TYPES[_FLOAT_BY_CODE[code]]
        if code == 9:
            et = r.type()
            name = f"complex<{getattr(et, 'name', '?')}>"
            if name not in T.ELEMENT_TYPES:
                r.fail(f"unsupported complex type {name}")
            return T.ELEMENT_TYPES[name]
        if code == 12:
            return T.NoneType()
        if code in (13, 14):
            enc = r.attr() if code == 14 else None
            shape = r.list(lambda: r.svarint("a dimension"), "tensor shape")
            et = r.type()
            return T.TensorType(tuple(None if d == INT64_MIN else d for d in shape), et, enc)
        if code == 15:
            return T.TupleType(tuple(r.list(r.type, "tuple")))
        if code == 18:
            return T.UnrankedTensorType(r.type())
        r.fail(f"unsupported builtin type code {code}")

    # ---- writing
    def write_attr(self, a, w: DialectWriter):
        if a.__class__ is A.FileLineColLoc and a.end_line is None and a.end_column is None:
            # the most frequent attribute (one per op): first
            w.varint(11)
            w.attr(_string_attr(a.filename))
            w.varint(a.line)
            w.varint(a.column)
        elif isinstance(a, A.ArrayAttr):
            w.varint(0)
            w.list(a.elements, w.attr)
        elif isinstance(a, A.DictAttr):
            w.varint(1)
            w.varint(len(a.entries))
            for k, v in sorted(a.entries, key=lambda kv: kv[0].encode()):
                w.attr(A.StringAttr(k))
                w.attr(v)
        elif isinstance(a, A.StringAttr):
            if a.type is None:
                w.varint(2)
                w.string(a.value)
            else:
                w.varint(3)
                w.string(a.value)
                w.type(a.type)
        elif isinstance(a, A.SymbolRefAttr):
            if not a.nested:
                w.varint(4)
                w.attr(A.StringAttr(a.root))
            else:
                w.varint(5)
                w.attr(A.StringAttr(a.root))
                w.list([A.SymbolRefAttr(n) for n in a.nested], w.attr)
        elif isinstance(a, A.TypeAttr):
            w.varint(6)
            w.type(a.type)
        elif isinstance(a, A.UnitAttr):
            w.varint(7)
        elif isinstance(a, A.BoolAttr):
            w.varint(8)
            w.type(T.ELEMENT_TYPES["i1"])
            w.apint(1 if a.value else 0, 1)
        elif isinstance(a, A.IntegerAttr):
            t = a.type if a.type is not None else T.ELEMENT_TYPES["i64"]
            w.varint(8)
            w.type(t)
            w.apint(a.value, 64 if t.kind == "index" else t.bits)
        elif isinstance(a, A.FloatAttr):
            w.varint(9)
            w.type(a.type)
            w.apint(float_to_raw(a.value, a.type), a.type.bits)
        elif isinstance(a, A.CallSiteLoc):
            w.varint(10)
            w.attr(a.callee)
            w.attr(a.caller)
        elif isinstance(a, A.FileLineColLoc):
            if a.end_line is None and a.end_column is None:
                w.varint(11)
                w.attr(A.StringAttr(a.filename))
                w.varint(a.line)
                w.varint(a.column)
            else:
                w.varint(22)
                w.attr(A.StringAttr(a.filename))
                el = a.line if a.end_line is None else a.end_line
                ec = a.column if a.end_column is None else a.end_column
                if el == a.line:
                    vals = [a.line] if (a.column == 0 and ec == 0) else [a.line, a.column, ec]
                else:
                    vals = [a.line, a.column, el, ec]
                w.list(vals, w.varint)
        elif isinstance(a, A.FusedLoc):
            w.varint(12 if a.metadata is None else 13)
            w.list(a.locations, w.attr)
            if a.metadata is not None:
                w.attr(a.metadata)
        elif isinstance(a, A.NameLoc):
            w.varint(14)
            w.attr(A.StringAttr(a.name))
            w.attr(a.child if a.child is not None else A.UNKNOWN_LOC)
        elif isinstance(a, A.UnknownLoc):
            w.varint(15)
        elif isinstance(a, A.DenseArrayAttr):
            w.varint(17)
            w.type(a.element_type)
            w.varint(len(a.values))
            if not w.counting:
                arr = np.array(a.values, dtype=a.element_type.dtype)
                w.blob(arr.tobytes())
        elif isinstance(a, A.DenseElementsAttr):
            w.varint(18)
            w.type(a.type)
            if not w.counting:
                w.blob(encode_elements(a.array, a.type))
        else:
            raise SerializationError(f"cannot write builtin attribute {a!r} in bytecode")

    def write_type(self, t, w: DialectWriter):
        if isinstance(t, T.ElementType):
            if t.kind in ("bool", "signed", "unsigned"):
                w.varint(0)
                sign = 2 if t.kind == "unsigned" else 0
                w.varint((t.bits << 2) | sign)
            elif t.kind == "index":
                w.varint(1)
            elif t.kind == "complex":
                w.varint(9)
                w.type(T.ELEMENT_TYPES[t.name[8:-1]])
            else:
                w.varint(_FLOAT_TYPE_CODES[t.name])
        elif isinstance(t, T.FunctionType):
            w.varint(2)
            w.list(t.inputs, w.type)
            w.list(t.results, w.type)
        elif isinstance(t, T.NoneType):
            w.varint(12)
        elif isinstance(t, T.TensorType):
            if t.encoding is not None:
                w.varint(14)
                w.attr(t.encoding)
            else:
                w.varint(13)
            w.list([INT64_MIN if d is None else d for d in t.shape], w.svarint)
            w.type(t.element_type)
        elif isinstance(t, T.TupleType):
            w.varint(15)
            w.list(t.types, w.type)
        elif isinstance(t, T.UnrankedTensorType):
            w.varint(18)
            w.type(t.element_type)
        else:
            raise SerializationError(f"cannot write builtin type {t} in bytecode")


_STRING_ATTRS: Dict[str, A.StringAttr] = {}


def _string_attr(s: str) -> A.StringAttr:
    """One StringAttr object per string (numbering then finds it by identity)."""
    a = _STRING_ATTRS.get(s)
    if a is None:
        if len(_STRING_ATTRS) >= 4096:
            _STRING_ATTRS.clear()
        a = _STRING_ATTRS[s] = A.StringAttr(s)
    return a


def _str_of(r, a) -> str:
    if not isinstance(a, A.StringAttr):
        r.fail(f"expected a string attribute, found {type(a).__name__}")
    return a.value


def _dense_array(r, et, n, blob):
    if not isinstance(et, T.ElementType):
        r.fail("dense array of a non-scalar element type")
    if et.kind == "bool":
        if len(blob) != n:
            r.fail(f"dense bool array: {len(blob)} bytes for {n} elements")
        return A.DenseArrayAttr(et, tuple(bool(b) for b in bytes(blob)))
    size = et.dtype.itemsize
    if len(blob) != n * size:
        r.fail(f"dense array: {len(blob)} bytes for {n} elements of {et.name}")
    arr = np.frombuffer(blob, dtype=et.dtype)
    return A.DenseArrayAttr(et, tuple(x.item() if hasattr(x, "item") else x for x in arr.tolist()) if et.is_integer else tuple(float(x) for x in arr))


# ============================================================ dense element data (shared with VHLO)

def _storage_dtype(et):
    return et.dtype


def decode_elements(blob, t: T.TensorType, fail) -> np.ndarray:
    """Raw MLIR dense-elements data -> a read-only numpy array of the tensor's storage dtype
    (a view of the file's bytes when the layout allows; a splat is a broadcast view, so a huge
    splat costs no memory)."""
    et = t.element_type
    if not t.is_static:
        fail("dense elements of a dynamically shaped tensor")
    if any(d < 0 for d in t.shape):
        fail(f"dense elements of a tensor with a negative dimension {t}")
    n = t.num_elements
    dt = et.dtype
    nb = len(blob)
    if getattr(et, "kind", None) == "bool":
        if n != 1 and nb == 1 and blob[0] in (0x00, 0xFF):
            return np.broadcast_to(np.array(blob[0] == 0xFF, dtype=np.bool_), t.shape)
        if (nb == (n + 7) // 8 and nb != n) or (n == 1 and nb == 1):
            bits = np.unpackbits(np.frombuffer(blob, dtype=np.uint8), bitorder="little")[:n]
            return bits.astype(np.bool_).reshape(t.shape)
        if nb == n:
            return (np.frombuffer(blob, dtype=np.uint8) != 0).reshape(t.shape)
        fail(f"dense i1 data of {nb} bytes for {n} elements")
    size = dt.itemsize
    if nb == size * n:
        arr = np.frombuffer(blob, dtype=dt)
        splat = False
    elif nb == size and n != 1:
        arr = np.frombuffer(blob, dtype=dt)
        splat = True
    else:
        fail(f"dense data of {nb} bytes for {n} elements of {et} ({size} bytes each)")
    storage = et.storage_type if isinstance(et, T.QuantizedType) else et
    nbits = storage.bits
    if nbits < 8 and storage.kind == "signed":
        # sub-byte signed values are stored with zeroed upper bits: sign-extend
        u = arr.view(np.uint8).astype(np.int16) & ((1 << nbits) - 1)
        u = np.where(u >= (1 << (nbits - 1)), u - (1 << nbits), u)
        arr = u.astype(dt)
    if splat:
        return np.broadcast_to(arr.reshape(()), t.shape)   # (an empty one keeps its value)
    return arr.reshape(t.shape)


def encode_elements(array: np.ndarray, t: T.TensorType) -> bytes:
    et = t.element_type
    if array.size > 1 and all(st == 0 for st in array.strides):
        array = np.array([array[(0,) * array.ndim]], dtype=array.dtype)   # a broadcast splat: one element
    elif array.size == 0 and array.ndim and all(st == 0 for st in array.strides):
        # an empty tensor written as a splat (`dense<2> : tensor<2x0x3xi4>`) keeps its value, as upstream
        base = array.base
        while base is not None and base.size != 1 and isinstance(base.base, np.ndarray):
            base = base.base
        if isinstance(base, np.ndarray) and base.size == 1 and base.dtype == array.dtype:
            array = base.reshape(1)
    a = np.ascontiguousarray(array).reshape(-1)
    if getattr(et, "kind", None) == "bool":
        a = a.astype(np.bool_)
        if (a.size > 1 or array.size != t.num_elements) and (a.all() or not a.any()):
            return b"\xff" if a.all() else b"\x00"
        return np.packbits(a, bitorder="little").tobytes()
    raw = a.view(np.uint8).reshape(a.size, -1) if a.size else a.view(np.uint8).reshape(0, a.dtype.itemsize)
    nbits = et.storage_type.bits if isinstance(et, T.QuantizedType) else et.bits
    if nbits < 8:
        raw = raw & np.uint8((1 << nbits) - 1)
    if a.size > 1 and _all_rows_equal(raw):
        return raw[:1].tobytes()
    # a view of the array's bytes, not a copy: the writer copies it once, into the file
    return memoryview(raw.reshape(-1))


def _all_rows_equal(raw: np.ndarray) -> bool:
    """Whether every element (row of bytes) equals the first: a splat. A few sampled rows
    settle the common case (not a splat) without a pass over a large array."""
    n = raw.shape[0]
    first = raw[0]
    for i in (n - 1, n // 2, 1, n // 3, (2 * n) // 3):
        if not np.array_equal(raw[i], first):
            return False
    return bool(np.all(raw == raw[:1]))


# ============================================================ reading

_BUSY = object()   # an attribute/type cache slot whose entry is being decoded


class _FileReader:
    def __init__(self, data, codecs: Dict[str, DialectCodec]):
        self.data = data if isinstance(data, (bytes, memoryview)) else bytes(data)
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
        self.resources = self._read_resources()
        self.op_props: Dict[int, Tuple[int, int]] = {}

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
                for _ in range(k):
                    at = cur.pos
                    size, custom = cur.varint_flag("an entry size")
                    if offset + size > data_end:
                        cur.fail("attribute/type entry runs past the end of the data section", at)
                    entries.append((self.dialects[d], offset, offset + size, custom))
                    offset += size
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
        if v is _BUSY or self.depth > MAX_NESTING:
            raise SerializationError(f"{kind} #{idx} refers to itself or nests too deeply", f"byte {s}")
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
        if self.depth > MAX_NESTING:
            cur.fail("operations nest too deeply")
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
        name = self.op_names[ni]
        mask = cur.byte("op encoding mask")
        if mask & 0x80:
            cur.fail(f"bad op encoding mask {mask:#x}", cur.pos - 1)
        at = pos = cur.pos
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
        op = Operation(name, [], result_types, attrs, location=loc)
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
                    op.regions.append(self._read_region(sub, scopes))
                if not sub.at_end():
                    sub.fail("trailing data in a nested IR section")
            else:
                for _ in range(nreg):
                    op.regions.append(self._read_region(cur, scopes))
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

    def _read_region(self, cur, scopes) -> Region:
        nblocks = cur.count("block count")
        region = Region()
        if nblocks == 0:
            return region
        at = cur.pos
        nvalues = cur.varint("region value count")
        if nvalues > 8 * len(self.data) + 64:
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
                    if isinstance(loc, A.UnknownLoc):
                        loc = None
                    v = b.add_argument(t, None, loc)
                    scope.define(v, cur)
                if self.version >= 3:
                    flag = cur.byte("block use-list flag")
                    if flag & M_USELIST:
                        self._skip_uselists(cur, nargs)
                    elif flag:
                        cur.fail(f"bad block use-list flag {flag:#x}", cur.pos - 1)
            if nops > cur.remaining:
                cur.fail(f"block op count {nops} larger than the data left")
            for _ in range(nops):
                b.operations.append(self._read_op(cur, scopes, blocks))
        scope.pop(nvalues)
        return region


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
            self.forward.setdefault(vid, []).append((op, k))
            return Value(None)
        return v

    def check_resolved(self, cur):
        if self.forward:
            cur.fail(f"operand refers to value {min(self.forward)}, which is never defined")


def read_file(data, codecs: Dict[str, DialectCodec]):
    """Parse MLIR bytecode -> (root Operation, reader). Op attributes hold the discardable
    (v >= 5) or all (v < 5) attributes; op._props holds the (start, end) of its properties."""
    f = _FileReader(data, codecs)
    root = f.read_ir()
    return root, f


def properties_reader(f: _FileReader, span) -> DialectReader:
    return DialectReader(f, Cursor(f.data, span[0], span[1]))


# ============================================================ writing

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
        k = _key(a)
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
        return self.attrs[_key(a)].number

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
                    rec = attrs.setdefault((flc, loc), new)     # hashes the location once
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


def _uses_outside(op: Operation) -> bool:
    """True if some op nested in `op`'s regions uses a value defined outside `op`."""
    inside = set()
    used = []

    add = inside.add

    def walk(o):
        for r in o.regions:
            for b in r.blocks:
                for a in b.arguments:
                    add(id(a))
                for n in b.operations:
                    for res in n.results:
                        add(id(res))
                    used.extend(n.operands)
                    if n.regions:
                        walk(n)
    walk(op)
    return not inside.issuperset(map(id, used))


def write_file(root: Operation, *, version: int, producer: str, codecs: List[DialectCodec],
               dict_of: Callable[[Operation], Optional[A.DictAttr]],
               props_writer: Callable[[Operation, DialectWriter], bool],
               isolated_of: Optional[Callable[[Operation], bool]] = None,
               rewrites: Optional[Dict[int, int]] = None) -> bytes:
    """Write `root` as MLIR bytecode.

    `dict_of(op)` gives the attribute dictionary to store in the op (None: none),
    `props_writer(op, w)` writes the op's properties and returns whether it has any
    (only called for version >= 5)."""
    isolated_cache: Dict[int, bool] = {}

    def isolated(op):
        r = isolated_cache.get(id(op))
        if r is None:
            r = isolated_cache[id(op)] = (op is root) or (isolated_of(op) if isolated_of else False) or not _uses_outside(op)
        return r

    num = _Numbering(codecs, version, props_writer)
    # ---- numbering walk (values are numbered while writing, with the reader's layout)
    num.number_op(root, dict_of(root))
    stack = [r for r in root.regions]
    while stack:
        region = stack.pop()
        for b in region.blocks:
            num.number_block(b, dict_of)
        for b in region.blocks:
            for op in b.operations:
                stack.extend(op.regions)
    num.finalize()
    uses = _use_lists(root, rewrites or {}) if version >= 3 else None
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
    sizes: List[int] = []
    dw = DialectWriter(num, data, strings)
    flc, builtin = A.FileLineColLoc, codec_by_name.get("builtin")
    small, SMALL = _SMALL_VARINTS, _SMALL
    file_numbers: Dict[str, bytes] = {}
    codec_of_dialect = [codec_by_name[d] for d in dialect_names]
    flc_dialect = (num.dialects.get("builtin", -1)
                   if builtin is not None and builtin.__class__ is BuiltinCodec else -1)
    for recs, is_attr in ((num.attr_list, True), (num.type_list, False)):
        for r in recs:
            a = r.obj
            if is_attr and a.__class__ is flc and r.dialect == flc_dialect and a.end_line is None \
                    and a.end_column is None:
                # BuiltinCodec.write_attr's encoding of the most frequent attribute, inline
                fn = a.filename
                fb = file_numbers.get(fn)
                if fb is None:
                    fb = file_numbers[fn] = varint_bytes(num.attr_number(_string_attr(fn)))
                line, col = a.line, a.column
                piece = (small[11] + fb + (small[line] if 0 <= line < SMALL else varint_bytes(line))
                         + (small[col] if 0 <= col < SMALL else varint_bytes(col)))
                data.buf += piece
                sizes.append(len(piece))
                continue
            codec = codec_of_dialect[r.dialect]
            before = data.size()
            if is_attr:
                codec.write_attr(a, dw)
            else:
                codec.write_type(a, dw)
            sizes.append(data.size() - before)
    off = Emitter()
    off.varint(len(num.attr_list))
    off.varint(len(num.type_list))
    # each entry: its size, flagged (varint_flag(size, True) = varint(2 * size + 1))
    flagged = [small[2 * n + 1] if 2 * n + 1 < SMALL else varint_bytes(2 * n + 1) for n in sizes]
    at = 0
    for recs in (num.attr_list, num.type_list):
        i = 0
        while i < len(recs):
            j = i
            d = recs[i].dialect
            while j < len(recs) and recs[j].dialect == d:
                j += 1
            off.varint(d)
            off.varint(j - i)
            off.buf += b"".join(flagged[at:at + j - i])
            at += j - i
            i = j

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

    def write_op(e: Emitter, op: Operation, scope: "_WriteScope"):
        buf = e.buf
        v = op_index[op.name]
        buf += small[v] if v < SMALL else varint_bytes(v)
        mask_at = len(buf)
        buf.append(0)
        mask = 0
        loc = op.location if op.location is not None else unknown
        ent = attr_ids.get(id(loc))
        v = ent[1].number if ent is not None and ent[0] is loc else attr_number(loc)
        buf += small[v] if v < SMALL else varint_bytes(v)
        leaf = op.__class__ is LeafOp
        d = None if leaf else dict_of(op)
        if d is not None:
            mask |= M_ATTRS
            e.varint(attr_number(d))
        if version >= 5 and not leaf:
            pi = op_props(op)
            if pi is not None:
                mask |= M_PROPERTIES
                e.varint(pi)
        results = op.results
        if results:
            mask |= M_RESULTS
            buf += small[len(results)] if len(results) < SMALL else varint_bytes(len(results))
            for r in results:
                t = r.type
                ent = type_ids.get(id(t))
                v = ent[1].number if ent is not None and ent[0] is t else type_number(t)
                buf += small[v] if v < SMALL else varint_bytes(v)
        if op.operands:
            mask |= M_OPERANDS
            v = len(op.operands)
            buf += small[v] if v < SMALL else varint_bytes(v)
            ids = scope.ids
            for x in op.operands:
                vid = ids.get(id(x))
                if vid is None:
                    raise SerializationError(f"{op.name} uses a value that is not defined before it")
                buf += small[vid] if vid < SMALL else varint_bytes(vid)
        if results:
            nxt = scope.next_ids
            if nxt:
                ids = scope.ids
                k = nxt[-1]
                for r in results:
                    ids[id(r)] = k
                    k += 1
                nxt[-1] = k
            if uses is not None:
                for r in results:
                    lst = uses.get(id(r))
                    if lst is not None and len(lst) > 1:
                        if _write_use_orders(e, results, uses):
                            mask |= M_USELIST
                        break
        if op.regions:
            mask |= M_REGIONS
        buf[mask_at] = mask
        if op.regions:
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
                        unknown = isinstance(loc, A.UnknownLoc)
                        e.varint_flag(type_number(v.type), not unknown)
                        if not unknown:
                            e.varint(attr_number(loc))
                    else:
                        e.varint(type_number(v.type))
                        e.varint(attr_number(loc))
                    scope.define(v)
                if version >= 3:
                    at = len(e.buf)
                    e.byte(0)
                    if _write_use_orders(e, b.arguments, uses):
                        e.buf[at] = M_USELIST
            buf = e.buf
            for op in b.operations:
                if op.__class__ is not LeafOp:
                    write_op(e, op, scope)
                    buf = e.buf     # a nested section of 64 KiB or more starts a new buffer
                    continue
                # write_op for an op without attributes, properties or regions, inline
                v = op_index[op.name]
                buf += small[v] if v < SMALL else varint_bytes(v)
                mask_at = len(buf)
                buf.append(0)
                mask = 0
                loc = op.location
                ent = attr_ids.get(id(loc))
                v = ent[1].number if ent is not None and ent[0] is loc else attr_number(loc)
                buf += small[v] if v < SMALL else varint_bytes(v)
                results = op.results
                if results:
                    mask = M_RESULTS
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
                    ids = scope.ids
                    for x in operands:
                        vid = ids.get(id(x))
                        if vid is None:
                            raise SerializationError(f"{op.name} uses a value that is not defined before it")
                        buf += small[vid] if vid < SMALL else varint_bytes(vid)
                if results:
                    nxt = scope.next_ids
                    if nxt:
                        ids = scope.ids
                        k = nxt[-1]
                        for r in results:
                            ids[id(r)] = k
                            k += 1
                        nxt[-1] = k
                    if uses is not None:
                        for r in results:
                            lst = uses.get(id(r))
                            if lst is not None and len(lst) > 1:
                                if _write_use_orders(e, results, uses):
                                    mask |= M_USELIST
                                break
                buf[mask_at] = mask
        scope.pop(nvalues)

    ir = Emitter()
    ir.varint_flag(1, False)
    write_op(ir, root, _WriteScope())

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


def _use_lists(root: Operation, rewrites: Dict[int, int]):
    """Per value, its uses [(op id, operand number)] in MLIR's use-list order after parsing and
    upstream's version rewrites: parsing pushes each new use to the front (so uses are in
    descending id order); recreating an op makes its operand uses the newest ones and reverses
    the use lists of its results (replaceAllUsesWith moves uses one by one)."""
    order: List[Operation] = []
    uses: Dict[int, list] = {}
    stack = [root]
    get = uses.get
    while stack:        # pre-order, as Operation.walk
        op = stack.pop()
        k = len(order)
        order.append(op)
        i = 0
        for v in op.operands:
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
    for op in (order if rewrites else ()):
        n = rewrites.get(id(op), 0)
        k = opid[id(op)]
        for _ in range(n):
            for i, v in enumerate(op.operands):
                lst = uses[id(v)]
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

    def define(self, v):
        if not self.next_ids:
            return
        self.ids[id(v)] = self.next_ids[-1]
        self.next_ids[-1] += 1
