"""stablehlo-ref: a pure-Python implementation of the StableHLO operator set.

Public API (stable names):
    parse(text) -> Module
    load(path) -> Module
    run(module, *arrays, entry="main", limits=None) -> tuple of numpy arrays
    print_module(module, *, generic=False, strip_debuginfo=False) -> str
    verify(module) -> None  (raises VerificationError on an invalid program)
"""
from __future__ import annotations

from typing import Optional

from .errors import (CheckFailure, InterpreterError, NotImplementedOpError, ParseError,
                     SerializationError, StableHLOError, UsageError, VerificationError)


def __getattr__(name):
    # `Module` (and with it ml_dtypes, ~0.5 s to import) loads on first use, so that
    # commands such as `stablehlo-ref spec` start fast.
    if name == "Module":
        from .ir import Module
        return Module
    raise AttributeError(f"module 'stablehlo_ref' has no attribute {name!r}")

__version__ = "0.1.0"


def parse(text: str, filename: str = "<string>", limits=None) -> Module:
    """Parse MLIR text (generic or pretty StableHLO syntax) into a Module. `limits`
    (a `stablehlo_ref.limits.Limits`, default `DEFAULT`) bounds tensor literals and nesting."""
    from .text import parse as _parse
    return _parse(text, filename, limits=limits)


def load(path, limits=None) -> Module:
    """Read a `.mlir` text file, a portable artifact (MLIR bytecode) or a `jax.export` payload
    (`Exported.serialize()`, whose StableHLO artifact is read) into a Module."""
    import os
    p = os.fspath(path)
    try:
        with open(p, "rb") as f:
            data = f.read()
    except OSError as e:
        raise UsageError(f"cannot read {p}: {e.strerror}") from None
    return load_bytes(data, p, limits=limits)


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


def run(module: Module, *arrays, entry: str = "main", limits=None) -> tuple:
    """Interpret function `entry` of `module` on numpy arrays; returns a tuple of arrays.
    `limits`: a `stablehlo_ref.limits.Limits` (tensor size, live memory, `max_steps` loop
    iterations, `timeout` seconds, nesting); without it the defaults apply."""
    from .interpreter import run as _run
    return _run(module, *arrays, entry=entry, limits=limits)


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


def verify(module: Module) -> None:
    """Check every op of `module` against its spec constraints; raise the first VerificationError."""
    from .verifier import verify as _verify
    _verify(module)


def print_module(module: Module, *, generic: bool = False, strip_debuginfo: bool = False,
                 debuginfo: bool = False) -> str:
    """Print a Module as MLIR text (pretty form by default). Explicit locations print inline;
    `debuginfo=True` prints what MLIR prints with -mlir-print-debuginfo (every location, as
    `#loc` aliases); `strip_debuginfo=True` prints none."""
    from .text import print_module as _print
    return _print(module, generic=generic, strip_debuginfo=strip_debuginfo, debuginfo=debuginfo)


__all__ = ["parse", "load", "load_bytes", "run", "serialize", "deserialize", "artifact_version", "inline_resources", "verify", "print_module", "Module", "StableHLOError", "ParseError",
           "VerificationError", "InterpreterError", "NotImplementedOpError", "CheckFailure",
           "SerializationError", "UsageError"]
