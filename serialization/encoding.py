"""MLIR bytecode's primitive encodings: the file magic, section ids and op-mask bits, prefix
varints and zigzag, a bounds-checked `Cursor` to read them and an `Emitter` to write them
(sections included).

Every read is bounds checked: a malformed file raises SerializationError naming the byte offset
and what was expected, and no size field is trusted before it is checked against the bytes that
remain.
"""
from __future__ import annotations

from typing import Optional, Tuple

from stablehlo_ref.errors import SerializationError

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
