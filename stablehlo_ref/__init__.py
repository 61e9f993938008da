"""stablehlo-ref: a pure-Python implementation of the StableHLO operator set.

Public API (stable names):
    parse(text, limits=None) -> Module    (str, or UTF-8 bytes)
    load(path, limits=None) -> Module     (a path, or an open binary file)
    run(module, *arrays, entry="main", trace=None, limits=None) -> tuple of numpy arrays
    print_module(module, *, generic=False, strip_debuginfo=False) -> str
    verify(module) -> None  (raises the first VerificationError of an invalid program)
    verify(module, all=True) -> list of VerificationError (empty for a valid program)
"""
from __future__ import annotations

from typing import Optional

from .errors import (CheckFailure, InterpreterError, LimitError, NotImplementedOpError, ParseError,
                     SerializationError, StableHLOError, UsageError, VerificationError)


def __getattr__(name):
    # `Module` (the IR, with the spec it reads) loads on first use, so that
    # commands such as `stablehlo-ref spec` start fast.
    if name == "Module":
        from .ir import Module
        return Module
    raise AttributeError(f"module 'stablehlo_ref' has no attribute {name!r}")

__version__ = "0.1.0"


def parse(text, filename: str = "<string>", limits=None) -> Module:
    """Parse MLIR text (generic or pretty StableHLO syntax; a str, or bytes in UTF-8) into a
    Module. `limits` (a `stablehlo_ref.limits.Limits`, default `DEFAULT`) bounds tensor
    literals and nesting."""
    from .text import parse as _parse
    if isinstance(text, (bytes, bytearray, memoryview)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as e:
            raise ParseError(f"not UTF-8 text (byte {e.start}); portable artifacts are read by "
                             "load_bytes or deserialize", filename) from None
    elif not isinstance(text, str):
        raise UsageError(f"parse takes MLIR text (str or bytes), not {type(text).__name__}")
    return _parse(text, filename, limits=limits)


def load(path, limits=None) -> Module:
    """Read a `.mlir` text file, a portable artifact (MLIR bytecode) or a `jax.export` payload
    (`Exported.serialize()`, whose StableHLO artifact is read) into a Module."""
    import os
    if hasattr(path, "read"):
        try:
            data = path.read()
        except (OSError, ValueError) as e:
            raise UsageError(f"cannot read {getattr(path, 'name', 'file')}: {e}") from None
        if isinstance(data, str):
            return parse(data, str(getattr(path, "name", "<file>")), limits=limits)
        return load_bytes(bytes(data), str(getattr(path, "name", "<file>")), limits=limits)
    if not isinstance(path, (str, bytes, os.PathLike)):
        raise UsageError(f"load takes a path or an open file, not {type(path).__name__} "
                         "(bytes in memory: load_bytes; text: parse)")
    try:
        p = os.fsdecode(path)
    except (TypeError, ValueError) as e:
        raise UsageError(f"load takes a path: {e}") from None
    if "\0" in p:
        raise UsageError("load takes a path, and this one holds a NUL byte (program bytes in memory "
                         "are read by load_bytes; text by parse)")
    from .fileio import read_input
    if p == "-":      # the name stdin goes by on the command line; here a file of that name
        p = os.path.join(".", p)
    return load_bytes(read_input(p, "program"), os.fsdecode(path), limits=limits)


def load_bytes(data: bytes, name: str = "<bytes>", text_name: Optional[str] = None,
               limits=None) -> Module:
    """`load` for bytes in memory: text, artifact or jax.export payload, told apart by content.
    `name` labels errors; text is located as `text_name` (default `name`)."""
    from .serialization import deserialize as _deserialize
    from .serialization.jax_export import is_jax_exported, read_jax_exported
    artifact = None
    if data[:4] == b"ML\xefR":
        artifact = data
    else:
        try:
            return parse(data.decode("utf-8"), text_name or name, limits=limits)
        except UnicodeDecodeError as e:
            if not is_jax_exported(data):
                raise ParseError("neither UTF-8 text, MLIR bytecode nor a jax.export payload "
                                 f"(byte {e.start})", name) from None
            artifact = bytes(read_jax_exported(data)["module"])
    try:
        return _deserialize(artifact, limits=limits)
    except SerializationError as e:
        raise SerializationError(e.message, f"{name}: {e.location}" if e.location else name) from None


def run(module: Module, *arrays, entry: str = "main", trace=None, limits=None) -> tuple:
    """Interpret function `entry` of `module` on numpy arrays; returns a tuple of arrays.
    `trace`: a function called as trace(op, results) after every op (`op.name`, `op.where()`
    give its name and location; results are numpy arrays), or a text stream that gets one
    line per op. `limits`: a `stablehlo_ref.limits.Limits` (tensor size, live memory,
    `max_steps` loop iterations, `timeout` seconds, nesting); without it the defaults apply."""
    from .interpreter import run as _run
    if trace is not None and not hasattr(trace, "write") and not callable(trace):
        raise UsageError("trace must be a function trace(op, results) or a text stream")
    return _run(module, *arrays, entry=entry, trace=trace, limits=limits)


def serialize(module: Module, target: str = "1.0.0", strip_debuginfo: bool = False) -> bytes:
    """Write `module` as a StableHLO portable artifact for version `target`."""
    from .serialization import serialize as _serialize
    return _serialize(module, target, strip_debuginfo)


def deserialize(data: bytes, limits=None) -> Module:
    """Read a StableHLO portable artifact (any version from 0.9.0 to current); `limits` bounds
    element counts, blob sizes and nesting before anything is allocated."""
    from .serialization import deserialize as _deserialize
    return _deserialize(data, limits=limits)


def artifact_version(data: bytes) -> str:
    """The StableHLO version a portable artifact names in its producer string."""
    from .serialization import artifact_version as _artifact_version
    return _artifact_version(data)


def inline_resources(module: Module) -> int:
    """Replace `dense_resource<...>` constants by the `dense<...>` values they name (in place),
    so that the module can be written as a portable artifact; returns how many were replaced."""
    from .ir.resources import inline_resources as _inline
    return _inline(module)


def verify(module: Module, *, all: bool = False):
    """Check every op of `module` against its spec constraints: raise the first
    VerificationError; with `all=True` return every diagnostic instead (a list, empty when
    the module is valid; `stablehlo_ref.diagnostics.format_error` prints one as MLIR does)."""
    from .verifier import collect, verify as _verify
    if all:
        return collect(module)
    _verify(module)
    return None


def print_module(module: Module, *, generic: bool = False, strip_debuginfo: bool = False,
                 debuginfo: bool = False) -> str:
    """Print a Module as MLIR text (pretty form by default). Explicit locations print inline;
    `debuginfo=True` prints what MLIR prints with -mlir-print-debuginfo (every location, as
    `#loc` aliases); `strip_debuginfo=True` prints none."""
    from .text import print_module as _print
    return _print(module, generic=generic, strip_debuginfo=strip_debuginfo, debuginfo=debuginfo)


__all__ = ["parse", "load", "load_bytes", "run", "serialize", "deserialize", "artifact_version", "inline_resources", "verify", "print_module", "Module", "StableHLOError", "ParseError",
           "VerificationError", "InterpreterError", "NotImplementedOpError", "CheckFailure",
           "SerializationError", "UsageError", "LimitError"]
