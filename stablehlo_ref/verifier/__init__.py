"""The verifier: checks that a parsed module obeys every op's constraints from the spec. (The
package is `stablehlo_ref.verifier`; the public function is `stablehlo_ref.verify`.)

    verify(module) -> None                    raises the first VerificationError
    collect(module) -> list[VerificationError] one error per offending op, in program order

Per-op checking functions live in the `VERIFIERS` registry (`registry.py`, `@verifier("stablehlo.add")`);
each family module below registers its ops, grouped as the interpreter groups its kernels, and
`core` adds the generic checks from the spec entries. Each diagnostic names the op's source
location and the spec's constraint id (C1, C2, ...)."""
from __future__ import annotations

from . import (chlo, collective, control, conv, dynamic, elementwise, indexing, linalg,  # noqa: F401
               movement, nn, quantized, random, reduction, sdy, sorting, windows)
from .core import collect, register_trait_checks, verify
from .registry import VERIFIERS, Check, verifier

register_trait_checks()

__all__ = ["verify", "collect", "verifier", "VERIFIERS", "Check"]
