"""`jax.export` payloads: `Exported.serialize()` writes a FlatBuffer (jax/_src/export/
serialization.fbs, table `Exported`) whose field `mlir_module_serialized` holds the program as a
StableHLO portable artifact. This reads that field and a few descriptive ones without the
flatbuffers package; every offset is checked against the buffer before it is followed.

Fields of the `Exported` table used here (vtable slot -> field): 0 serialization_version
(uint16), 1 function_name (string), 9 platforms ([string]), 13 mlir_module_serialized
([ubyte]), 14 calling_convention_version (uint16)."""
from __future__ import annotations

import struct
from typing import List, Optional

from stablehlo_ref.errors import SerializationError

_MAGIC = b"ML\xefR"


class _Table:
    def __init__(self, buf: memoryview, pos: int):
        self.buf = buf
        self.pos = pos
        vt = pos - self._i32(pos)
        self.vt = vt
        self.vt_size = self._u16(vt)
        if self.vt_size < 4 or vt + self.vt_size > len(buf):
            raise SerializationError("jax.export payload: bad vtable", f"byte {vt}")

    def _check(self, at: int, n: int):
        if at < 0 or at + n > len(self.buf):
            raise SerializationError("jax.export payload: offset out of range", f"byte {at}")

    def _u16(self, at: int) -> int:
        self._check(at, 2)
        return struct.unpack_from("<H", self.buf, at)[0]

    def _i32(self, at: int) -> int:
        self._check(at, 4)
        return struct.unpack_from("<i", self.buf, at)[0]

    def _u32(self, at: int) -> int:
        self._check(at, 4)
        return struct.unpack_from("<I", self.buf, at)[0]

    def field(self, slot: int) -> Optional[int]:
        off = 4 + 2 * slot
        if off + 2 > self.vt_size:
            return None
        rel = self._u16(self.vt + off)
        return self.pos + rel if rel else None

    def u16(self, slot: int, default: int = 0) -> int:
        at = self.field(slot)
        return default if at is None else self._u16(at)

    def vector(self, slot: int):
        """(start, length) of a vector field, or None."""
        at = self.field(slot)
        if at is None:
            return None
        start = at + self._u32(at)
        n = self._u32(start)
        self._check(start + 4, 0)
        return start + 4, n

    def bytes(self, slot: int) -> Optional[memoryview]:
        v = self.vector(slot)
        if v is None:
            return None
        start, n = v
        self._check(start, n)
        return self.buf[start:start + n]

    def string(self, slot: int) -> Optional[str]:
        b = self.bytes(slot)
        return None if b is None else bytes(b).decode("utf-8", "replace")

    def strings(self, slot: int) -> List[str]:
        v = self.vector(slot)
        if v is None:
            return []
        start, n = v
        self._check(start, 4 * n)
        out = []
        for i in range(n):
            at = start + 4 * i
            s = at + self._u32(at)
            ln = self._u32(s)
            self._check(s + 4, ln)
            out.append(bytes(self.buf[s + 4:s + 4 + ln]).decode("utf-8", "replace"))
        return out


def read_jax_exported(data) -> dict:
    """The parts of a `jax.export` payload a StableHLO tool needs: `module` (the portable
    artifact's bytes), `function_name`, `platforms`, `serialization_version`,
    `calling_convention_version`. Raises SerializationError when `data` is not one."""
    buf = memoryview(data)
    if len(buf) < 8:
        raise SerializationError("not a jax.export payload: too short", "byte 0")
    root = struct.unpack_from("<I", buf, 0)[0]
    if root < 4 or root + 4 > len(buf):
        raise SerializationError("not a jax.export payload: root table out of range", "byte 0")
    t = _Table(buf, root)
    module = t.bytes(13)
    if module is None or bytes(module[:4]) != _MAGIC:
        raise SerializationError("not a jax.export payload: no StableHLO artifact in field mlir_module_serialized",
                                 f"byte {root}")
    return {"module": module, "function_name": t.string(1), "platforms": t.strings(9),
            "serialization_version": t.u16(0), "calling_convention_version": t.u16(14)}


def is_jax_exported(data) -> bool:
    try:
        read_jax_exported(data)
        return True
    except SerializationError:
        return False
