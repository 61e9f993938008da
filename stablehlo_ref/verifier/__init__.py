"""The verifier: checks that a parsed module obeys every op's constraints from the spec. (The
package is `stablehlo_ref.verifier`; the public function is `stablehlo_ref.verify`.)

    verify(module) -> None                    raises the first VerificationError
    collect(module) -> list[VerificationError] one error per offending op, in program order

Per-op checking functions live in the `VERIFIERS` registry (`@verifier("stablehlo.add")`); each
diagnostic names the op's source location and the spec's constraint id (C1, C2, ...)."""
from __future__ import annotations

from .core import VERIFIERS, Check, collect, verifier, verify

__all__ = ["verify", "collect", "verifier", "VERIFIERS", "Check"]

