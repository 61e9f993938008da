"""`.npy` and `.npz` files from strangers, read without trusting them.

`open_arrays(data, name)` lists the arrays of a `.npy` or `.npz` file from their headers only:
key, shape, dtype. Nothing is decompressed or allocated until `entry.load()`, so a caller
checks each array against what it expects (and against the size limits) first: a 1 GiB
zip bomb whose header declares the wrong shape is refused after reading a few hundred bytes.
Object arrays (pickles) are never read; structured dtypes are refused; raw-byte arrays
(`|V2` is how numpy saves bfloat16 without ml_dtypes) are kept as raw bytes for the caller
to reinterpret."""
from __future__ import annotations

import io
import math
import tokenize
import zipfile
import zlib
from dataclasses import dataclass
from typing import Callable, List, Optional, Tuple

import numpy as np

from .errors import UsageError

NPY_MAGIC = b"\x93NUMPY"
ZIP_MAGICS = (b"PK\x03\x04", b"PK\x05\x06")


@dataclass
class ArrayEntry:
    key: Optional[str]           # the npz member name without `.npy`; None for a .npy file
    shape: Tuple[int, ...]
    dtype: np.dtype
    fortran: bool
    where: str                   # "FILE" or "FILE[key]" for messages
    _open: Callable[[], io.BufferedIOBase]
    _data_offset: int

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    def load(self) -> np.ndarray:
        """Read exactly the bytes the header declares (never more)."""
        f = self._open()
        try:
            _skip(f, self._data_offset)
            need = self.nbytes
            buf = bytearray()
            while len(buf) < need:
                chunk = f.read(min(need - len(buf), 1 << 24))
                if not chunk:
                    raise UsageError(f"{self.where}: array data ends after {len(buf)} of {need} bytes")
                buf += chunk
        except (zipfile.BadZipFile, zlib.error, OSError, EOFError, ValueError, NotImplementedError) as e:
            raise UsageError(f"{self.where}: cannot read array data: {e}") from None
        finally:
            f.close()
        a = np.frombuffer(bytes(buf), dtype=self.dtype, count=self.size)
        return a.reshape(self.shape, order="F" if self.fortran else "C").copy()


def _skip(f, n):
    while n > 0:
        b = f.read(min(n, 1 << 20))
        if not b:
            raise EOFError("truncated")
        n -= len(b)


def kind_of(data: bytes) -> str:
    """'npy', 'npz' or 'unknown', from the first bytes."""
    if data[:6] == NPY_MAGIC:
        return "npy"
    if data[:4] in ZIP_MAGICS:
        return "npz"
    return "unknown"


def _read_header(f, where: str):
    """(shape, dtype, fortran, header length) from a .npy stream, checked."""
    fmt = np.lib.format
    try:
        major, minor = fmt.read_magic(f)
        if (major, minor) == (1, 0):
            shape, fortran, dtype = fmt.read_array_header_1_0(f, max_header_size=10000)
        elif (major, minor) == (2, 0):
            shape, fortran, dtype = fmt.read_array_header_2_0(f, max_header_size=10000)
        elif (major, minor) == (3, 0):
            shape, fortran, dtype = fmt._read_array_header(f, (3, 0), max_header_size=10000)
        else:
            raise ValueError(f"unsupported .npy format version {major}.{minor}")
    except (ValueError, SyntaxError, TypeError, OverflowError, EOFError, zipfile.BadZipFile, zlib.error,
            OSError, NotImplementedError, MemoryError, tokenize.TokenError) as e:
        # (numpy tokenizes headers of old files to repair them: TokenError on broken ones)
        raise UsageError(f"{where}: not a valid .npy array ({e})") from None
    dtype = np.dtype(dtype)
    if dtype.hasobject:
        raise UsageError(f"{where}: holds Python objects (a pickle); only numeric arrays are read")
    if dtype.fields is not None or dtype.subdtype is not None:
        raise UsageError(f"{where}: has a structured dtype {dtype}; only plain numeric arrays are read")
    if not isinstance(shape, tuple) or any(not isinstance(d, int) or d < 0 for d in shape):
        raise UsageError(f"{where}: bad shape {shape!r} in the .npy header")
    return tuple(shape), dtype, bool(fortran)


def open_arrays(data: bytes, name: str) -> List[ArrayEntry]:
    """The arrays of a `.npy` (one entry, key None) or `.npz` file, from their headers."""
    k = kind_of(data)
    if k == "npy":
        f = io.BytesIO(data)
        shape, dtype, fortran = _read_header(f, name)
        off = f.tell()
        return [ArrayEntry(None, shape, dtype, fortran, name, lambda: io.BytesIO(data), off)]
    if k != "npz":
        raise UsageError(f"{name}: neither a .npy array nor a .npz archive")
    try:
        z = zipfile.ZipFile(io.BytesIO(data))
        infos = z.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, OSError, ValueError, EOFError, NotImplementedError) as e:
        raise UsageError(f"{name}: not a valid .npz archive ({e})") from None
    out = []
    seen = set()
    for info in infos:
        if info.is_dir():
            continue
        key = info.filename[:-4] if info.filename.endswith(".npy") else info.filename
        where = f"{name}[{key}]"
        if key in seen:
            raise UsageError(f"{where}: the archive holds this name twice")
        seen.add(key)

        def opener(info=info, where=where):
            try:
                return z.open(info)
            except (zipfile.BadZipFile, zlib.error, OSError, ValueError, NotImplementedError, RuntimeError) as e:
                raise UsageError(f"{where}: cannot read the archive member ({e})") from None
        f = opener()
        try:
            shape, dtype, fortran = _read_header(f, where)
            off = f.tell()
        finally:
            f.close()
        e = ArrayEntry(key, shape, dtype, fortran, where, opener, off)
        if info.file_size < off + e.nbytes:
            raise UsageError(f"{where}: the member holds {info.file_size - off} bytes of data; "
                             f"its header declares {e.nbytes}")
        out.append(e)
    return out
