"""The interface between the bytecode reader/writer and a dialect's attribute and type
encodings: `DialectCodec` (one per dialect: builtin, vhlo), and the `DialectReader` /
`DialectWriter` a codec reads and writes one entry with (references to other attributes and
types, strings, blobs, varints, APInts)."""
from __future__ import annotations

from typing import Callable, Optional

from stablehlo_ref.serialization.encoding import Cursor, Emitter, zigzag

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

    def __init__(self, file, cur: Cursor):   # file: reader._FileReader
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

    def __init__(self, numbering, emitter: Optional[Emitter], strings):   # numbering.Numbering, writer strings
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
