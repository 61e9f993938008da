"""Every op of the spec has an interpreter kernel, a verifier and a VHLO mapping, or sits on an
explicit list with the reason (tests/known_failures/no_kernel.txt, no_verifier.txt).

Like the corpus known-failure lists, these lists may only shrink: an op on a list that now
has its kernel (verifier) fails the suite until its line is deleted.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from stablehlo_ref import docs, spec

KNOWN = Path(__file__).resolve().parent / "known_failures"


def _load_list(name: str) -> dict:
    path = KNOWN / name
    out: dict = {}
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        op, sep, reason = line.partition("\t")
        assert sep and reason.strip(), f"{name}:{n}: expected op<TAB>reason, got {line!r}"
        assert op not in out, f"{name}:{n}: {op} is listed twice"
        out[op] = reason.strip()
    return out


def _check_coverage(list_name: str, have: set, what: str, also_covered=()):
    listed = _load_list(list_name)
    names = {o.name for o in spec.ops()}
    unknown = sorted(set(listed) - names)
    now_covered = sorted(n for n in listed if n in have or n in also_covered)
    missing = sorted(n for n in names if n not in have and n not in also_covered and n not in listed)
    msgs = []
    if unknown:
        msgs.append(f"{list_name} lists ops that are not in the spec: {', '.join(unknown)}")
    if now_covered:
        msgs.append(f"now with a {what} (delete these lines from tests/known_failures/{list_name}): "
                    + ", ".join(now_covered))
    if missing:
        msgs.append(f"spec ops without a {what} (add one; new ops may not be added to {list_name}): "
                    + ", ".join(missing))
    assert not msgs, "\n".join(msgs)


def test_every_op_has_a_kernel_or_is_listed():
    _check_coverage("no_kernel.txt", docs.kernel_names(), "kernel", also_covered=docs.EVALUATOR_OPS)


def test_evaluator_ops_are_spec_ops_without_kernels():
    kernels = docs.kernel_names()
    for name in docs.EVALUATOR_OPS:
        assert spec.has_op(name), name
        assert name not in kernels, f"{name} has a kernel; drop it from docs.EVALUATOR_OPS"


# A kernel under a name the spec does not define is never reached by a valid program.
# chlo.compare is registered as an alias of stablehlo.compare (CHLO's op is broadcast_compare).
_STRAY_KERNELS_ALLOWED = {"chlo.compare"}


def _foreign_ops():
    """Ops of other dialects (arith, tensor, scf) the text parser reads and the interpreter runs."""
    from stablehlo_ref.text.custom_syntax import OP_SYNTAX
    return {n for n in OP_SYNTAX if n.split(".", 1)[0] in ("arith", "tensor", "scf")}


def test_kernels_are_registered_under_spec_names():
    allowed = _STRAY_KERNELS_ALLOWED | _foreign_ops()
    stray = sorted(n for n in docs.kernel_names() if not spec.has_op(n) and n not in allowed)
    assert not stray, f"kernels registered for ops the spec does not define: {', '.join(stray)}"


def test_every_op_has_a_verifier_or_is_listed():
    verifiers = docs.verifier_names()
    if verifiers is None:
        pytest.skip("stablehlo_ref.verifier exposes no VERIFIERS registry yet")
    _check_coverage("no_verifier.txt", verifiers, "verifier")


def test_every_op_has_a_vhlo_mapping_or_is_exempt_by_rule():
    # CHLO and the check test dialect have no VHLO form by design; a legacy op may lack one.
    # Shardy ops are written into artifacts as sdy ops (serialization/sdy_codec.py), not VHLO.
    exempt = lambda o: o.dialect in ("chlo", "check", "sdy") or o.status == "legacy"  # noqa: E731
    missing = sorted(o.name for o in spec.ops() if not o.vhlo and not exempt(o))
    assert not missing, f"ops without a VHLO encoding in the spec: {', '.join(missing)}"
    for o in spec.ops():
        if o.dialect in ("chlo", "check", "sdy"):
            assert not o.vhlo, f"{o.name}: CHLO and check ops have no VHLO form"


def test_lists_are_sorted_and_have_reasons():
    for name in ("no_kernel.txt", "no_verifier.txt"):
        entries = list(_load_list(name))
        assert entries == sorted(entries), f"{name} is not sorted by op name"
