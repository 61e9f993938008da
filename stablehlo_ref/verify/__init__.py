"""The verifier: checks that a parsed module obeys every op's constraints from the spec.

    verify(module) -> None                    raises the first VerificationError
    collect(module) -> list[VerificationError] one error per offending op, in program order

Per-op checking functions live in the `VERIFIERS` registry (`@verifier("stablehlo.add")`); each
diagnostic names the op's source location and the spec's constraint id (C1, C2, ...)."""
from __future__ import annotations

from .core import VERIFIERS, Check, collect, verifier, verify

__all__ = ["verify", "collect", "verifier", "VERIFIERS", "Check"]


# `stablehlo_ref.verify` is both this package and the public function of that name: importing
# the package rebinds the attribute on `stablehlo_ref`, so the package itself is made callable.
import sys as _sys
import types as _types


class _CallablePackage(_types.ModuleType):
    def __call__(self, module) -> None:
        verify(module)


_sys.modules[__name__].__class__ = _CallablePackage
