"""stablehlo-ref: a pure-Python implementation of the StableHLO operator set.

Public API (stable names):
    parse(text) -> Module
    load(path) -> Module
    run(module, *arrays, entry="main") -> tuple of numpy arrays
    print_module(module, *, generic=False, strip_debuginfo=False) -> str
    verify(module) -> None  (raises VerificationError on an invalid program)
"""
from __future__ import annotations

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


def parse(text: str, filename: str = "<string>") -> Module:
    """Parse MLIR text (generic or pretty StableHLO syntax) into a Module."""
    from .text import parse as _parse
    return _parse(text, filename)


def load(path) -> Module:
    """Read a `.mlir` text file into a Module."""
    import os
    p = os.fspath(path)
    try:
        with open(p, "rb") as f:
            data = f.read()
    except OSError as e:
        raise UsageError(f"cannot read {p}: {e.strerror}") from None
    if data[:4] == b"ML\xefR":
        raise SerializationError("portable artifacts (MLIR bytecode) are not supported yet", p)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ParseError(f"file is neither UTF-8 text nor MLIR bytecode (byte {e.start})", p) from None
    return parse(text, p)


def run(module: Module, *arrays, entry: str = "main") -> tuple:
    """Interpret function `entry` of `module` on numpy arrays; returns a tuple of arrays."""
    from .interpreter import run as _run
    return _run(module, *arrays, entry=entry)


def verify(module: Module) -> None:
    """Check every op of `module` against its spec constraints; raise the first VerificationError."""
    from .verify import verify as _verify
    _verify(module)


def print_module(module: Module, *, generic: bool = False, strip_debuginfo: bool = False) -> str:
    """Print a Module as MLIR text (pretty form by default)."""
    from .text import print_module as _print
    return _print(module, generic=generic, strip_debuginfo=strip_debuginfo)


__all__ = ["parse", "load", "run", "verify", "print_module", "Module", "StableHLOError", "ParseError",
           "VerificationError", "InterpreterError", "NotImplementedOpError", "CheckFailure",
           "SerializationError", "UsageError"]
