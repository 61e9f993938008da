"""The verifier registry (a leaf module): `VERIFIERS` maps an op name to its checking function,
`@verifier(name, ...)` registers one, and `Check` is the object a checking function states its
constraints with. The verifier modules register their ops here when the package is imported."""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Dict, Optional

if TYPE_CHECKING:
    from ..ir.core import Module, Operation

VerifierFn = Callable[["Operation", "Check"], None]
VERIFIERS: Dict[str, VerifierFn] = {}


def verifier(*names: str):
    """Register a checking function for one or more op names: `fn(op, check)`. An op has one
    checking function; registering a second is an error rather than a silent override."""
    def deco(fn):
        for n in names:
            if n in VERIFIERS and VERIFIERS[n] is not fn:
                raise ValueError(f"{n} already has a verifier ({VERIFIERS[n].__module__}.{VERIFIERS[n].__name__})")
            VERIFIERS[n] = fn
        return fn
    return deco


class Violation(Exception):
    """One constraint that does not hold: its spec id ("" when unlabelled) and the message."""

    def __init__(self, cid: str, message: str, attr: Optional[str] = None):
        super().__init__(message)
        self.cid = cid
        self.message = message
        self.attr = attr      # the attribute whose declared constraint fails, if that is what fails


class Check:
    """Passed to every verifier: `check(cond, "C3", "what is wrong")` states one constraint;
    the first one that does not hold stops the op's verification."""

    def __init__(self, op: "Operation", module: Optional["Module"] = None, func: Optional["Operation"] = None):
        self.op = op
        self.module = module
        self.func = func      # the enclosing func.func, if any

    def __call__(self, cond, cid: str, message: str, attr: Optional[str] = None) -> None:
        """`attr` names the attribute when the constraint is one its declaration states (its kind,
        a positive count): in custom syntax that is reported where the attribute is spelled."""
        if not cond:
            raise Violation(cid, message, attr)
