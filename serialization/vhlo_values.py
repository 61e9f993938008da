"""Values of the VHLO dialect as this package holds them: `VType` / `VAttr` (a mnemonic such
as "tensor_v1" plus its fields, immutable and hashed once), `Blob` (tensor data, never copied),
`VValue` (the result of a leaf op), and small constructors of the common VHLO attributes."""
from __future__ import annotations

from typing import Tuple

import numpy as np

from stablehlo_ref.ir import types as T
from stablehlo_ref.serialization.builtin_codec import encode_elements

# ============================================================ values

class _VValue:
    """An immutable (kind, args) value (never assign to one); the hash is computed once
    (numbering looks every attribute and type up several times)."""

    __slots__ = ("kind", "args", "_h")

    def __init__(self, kind: str, args: tuple = ()):
        self.kind = kind    # mnemonic without the dialect, e.g. "tensor_v1"
        self.args = args
        self._h = None

    def __eq__(self, other):
        if self is other:
            return True
        if other.__class__ is not self.__class__:
            return NotImplemented if not isinstance(other, _VValue) else False
        return self.kind == other.kind and hash(self) == hash(other) and self.args == other.args

    def __hash__(self):
        h = self._h
        if h is None:
            h = self._h = hash((self.kind, self.args))
        return h

    def __repr__(self):
        return f"{type(self).__name__}(kind={self.kind!r}, args={self.args!r})"


class VType(_VValue):
    __slots__ = ()

    def __str__(self):
        return f"!vhlo.{self.kind}" + (f"<{', '.join(map(str, self.args))}>" if self.args else "")


class VAttr(_VValue):
    __slots__ = ()

    def __str__(self):
        return f"#vhlo.{self.kind}<{', '.join(map(str, self.args))}>"


class Blob:
    """Raw tensor data: bytes, or a byte-format memoryview of the file (reading) or of the
    array (writing), so that large constants are never copied. Equality by content; the hash
    samples at most ~1 KB of the data (a full hash of a 100 MB constant would cost more
    than writing it), and equal hashes fall back to a full comparison."""

    __slots__ = ("data", "_h")

    def __init__(self, data):
        self.data = data
        self._h = None

    def __eq__(self, other):
        if self is other:
            return True
        if not isinstance(other, Blob):
            return False
        a, b = self.data, other.data
        if len(a) != len(b) or hash(self) != hash(other):
            return False
        if isinstance(a, bytes) and isinstance(b, bytes):
            return a == b
        return bool(np.array_equal(np.frombuffer(a, np.uint8), np.frombuffer(b, np.uint8)))

    def __hash__(self):
        h = self._h
        if h is None:
            d = self.data
            n = len(d)
            if n <= 1024:
                h = hash(bytes(d))
            else:
                step = n // 16
                h = hash((n,) + tuple(bytes(d[i * step:i * step + 64]) for i in range(16)) + (bytes(d[n - 64:]),))
            self._h = h
        return h

    def __len__(self):
        return len(self.data)

    def __repr__(self):
        return f"Blob({len(self.data)} bytes)"


class VValue:
    """The result of a `VLeaf` (just its VHLO type)."""
    __slots__ = ("type",)

    def __init__(self, t):
        self.type = t


def _f64_raw(x: float) -> int:
    return int(np.array([x], dtype=np.float64).view(np.uint64)[0])


def _raw_f64(r: int) -> float:
    return float(np.array([r], dtype=np.uint64).view(np.float64)[0])


def _storage_range(et: T.ElementType, signed: bool) -> Tuple[int, int]:
    if signed:
        return -(1 << (et.bits - 1)), (1 << (et.bits - 1)) - 1
    return 0, (1 << et.bits) - 1


def _memo_by_value(cache: dict, t, convert):
    """convert(t), remembered by value in `cache` (bounded); unhashable values are not kept."""
    try:
        r = cache.get(t)
    except TypeError:
        return convert(t)
    if r is None:
        r = convert(t)
        if len(cache) >= 4096:
            cache.clear()
        cache[t] = r
    return r


I64 = VType("i64_v1")
I1 = VType("bool_v1")


def _i64(v: int) -> VAttr:
    return VAttr("integer_v1", (I64, int(v)))


def _i64_tensor(values, shape=None) -> VAttr:
    arr = np.asarray(values, dtype=np.int64).reshape(-1)
    shape = (arr.size,) if shape is None else tuple(shape)
    return _tensor(VType("tensor_v1", (shape, I64, None)), arr, T.TensorType(shape, T.ELEMENT_TYPES["i64"]))


def _tensor(vt: VType, arr: np.ndarray, bt: T.TensorType) -> VAttr:
    return VAttr("tensor_v1", (vt, Blob(encode_elements(arr, bt))))


def _bool_tensor(values) -> VAttr:
    arr = np.asarray(values, dtype=np.bool_).reshape(-1)
    bt = T.TensorType((arr.size,), T.ELEMENT_TYPES["i1"])
    return _tensor(VType("tensor_v1", ((arr.size,), I1, None)), arr, bt)


def _string(s: str) -> VAttr:
    return VAttr("string_v1", (s,))


def _bool(b: bool) -> VAttr:
    return VAttr("bool_v1", (bool(b),))


NONE_TYPE_ATTR = VAttr("type_v1", (VType("none_v1"),))
