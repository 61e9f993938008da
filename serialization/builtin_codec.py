"""The builtin dialect's attribute and type encodings in MLIR bytecode (strings, arrays,
dictionaries, integers, floats, dense elements, locations, builtin types), and the raw layout
of dense element data that VHLO tensors share."""
from __future__ import annotations

from typing import Dict

import numpy as np

from stablehlo_ref.limits import DEFAULT, check_tensor
from stablehlo_ref.errors import SerializationError
from stablehlo_ref.ir import attributes as A
from stablehlo_ref.ir import types as T
from stablehlo_ref.serialization.dialect_codec import DialectCodec, DialectReader, DialectWriter
from stablehlo_ref.serialization.encoding import INT64_MIN

_FLOAT_TYPE_CODES = {"bf16": 3, "f16": 4, "f32": 5, "f64": 6, "tf32": 21, "f8E5M2": 22, "f8E4M3": 23,
                     "f8E4M3FN": 24, "f8E5M2FNUZ": 25, "f8E4M3FNUZ": 26, "f8E4M3B11FNUZ": 27,
                     "f8E3M4": 28, "f4E2M1FN": 29, "f6E2M3FN": 30, "f6E3M2FN": 31, "f8E8M0FNU": 32}
_FLOAT_BY_CODE = {v: k for k, v in _FLOAT_TYPE_CODES.items()}


def float_to_raw(value: float, et) -> int:
    """The bit pattern of `value` in element type `et` (a float type)."""
    with np.errstate(over="ignore", invalid="ignore"):     # past the range: inf, as APFloat
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
            at = r.cur.pos
            blob = r.blob("dense elements data")
            if not isinstance(t, T.TensorType):
                r.fail("dense elements attribute of a non-tensor type")
            if t.is_static and isinstance(getattr(t.element_type, "dtype", None), np.dtype) \
                    and len(blob) > t.element_type.dtype.itemsize:       # (a splat allocates nothing)
                check_tensor(t.shape, 8 * t.element_type.dtype.itemsize, "dense elements",
                             f"byte {at}", getattr(r.f, "limits", DEFAULT))
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
    if not isinstance(et, T.ElementType) or not (et.is_integer or et.is_float):
        r.fail(f"a dense array of {et} (dense arrays hold integers or floats)")
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
    elif nbits < 8 and storage.kind != "bool":
        # other sub-byte types (ui2, ui4, f4E2M1FN, f6*): MLIR reads only the low bits of each
        # byte, so set upper bits must not change the value (nor make it unprintable)
        u = arr.view(np.uint8)
        if (u >> nbits).any():
            arr = (u & np.uint8((1 << nbits) - 1)).view(dt)
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
