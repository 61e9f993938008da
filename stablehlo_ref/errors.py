"""The project's exception types. Every failure a user can cause is one of these."""
from __future__ import annotations


class StableHLOError(Exception):
    """Base class. `location` is a human-readable position (file:line:col, byte offset, op)."""

    exit_code = 1

    def __init__(self, message: str, location: str | None = None):
        super().__init__(message)
        self.message = message
        self.location = location

    def __str__(self) -> str:
        return f"{self.location}: {self.message}" if self.location else self.message


class ParseError(StableHLOError):
    """Text that is not valid MLIR/StableHLO syntax."""


class VerificationError(StableHLOError):
    """A program that parses but breaks an op constraint."""


class InterpreterError(StableHLOError):
    """A runtime failure while interpreting (bad arguments, out-of-range, ...)."""


class NotImplementedOpError(InterpreterError):
    """An op (or an op on an element type) the interpreter does not implement yet."""

    def __init__(self, op: str, detail: str | None = None, location: str | None = None):
        msg = f"not implemented: {op}" + (f" ({detail})" if detail else "")
        super().__init__(msg, location)
        self.op = op


class CheckFailure(InterpreterError):
    """A `check.*` op or `@check.*` custom call whose comparison does not hold."""


class SerializationError(StableHLOError):
    """Bytes that are not a valid (or supported) portable artifact, or a module a target cannot express."""


class UsageError(StableHLOError):
    """Bad command-line usage or an I/O problem (exit code 2)."""

    exit_code = 2


class LimitError(StableHLOError):
    """A resource limit (tensor size, live memory, loop steps, time, nesting depth) that the
    input would exceed. `flag` names the command-line flag (and API argument) that raises it."""

    def __init__(self, message: str, location: str | None = None, flag: str | None = None):
        if flag:
            message = f"{message} (raise the limit with {flag})"
        super().__init__(message, location)
        self.flag = flag
