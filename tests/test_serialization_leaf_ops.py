"""The serializer's short paths write and read exactly what the general paths do.

Writing makes ops without attributes and regions as light `LeafOp`s directly at the target
version (and writes them inline); `to_vhlo(..., leaves=False)` builds every op as a full VHLO
Operation and downgrades it instead. Reading converts the reader's VHLO ops to StableHLO in
place. These tests compare the two writers byte for byte and check the in-place reader."""
from __future__ import annotations

import os
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, os.path.dirname(__file__))
from test_serialization import _VERSIONS, small_modules  # noqa: E402

import stablehlo_ref as shr  # noqa: E402
import stablehlo_ref.serialization as SZ  # noqa: E402
from stablehlo_ref import spec  # noqa: E402
from stablehlo_ref.errors import SerializationError  # noqa: E402
from stablehlo_ref.ir.equality import assert_modules_equal  # noqa: E402
from stablehlo_ref.serialization.numbering import LeafOp  # noqa: E402


def general(m, target, strip=False, writer=None) -> bytes:
    """serialize_as() through the general path (no leaf ops)."""
    conv = SZ._check_target(target)
    steps = {}
    root = SZ.to_vhlo(m, conv, steps, writer, leaves=False)
    assert not any(isinstance(o, LeafOp) for o in _walk(root))
    if strip:
        SZ._strip_locations(root)
    return SZ.write_vhlo(root, conv, target, steps)


def _walk(op):
    yield op
    for r in op.regions:
        for b in r.blocks:
            for o in b.operations:
                yield from _walk(o)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_modules(), st.sampled_from(_VERSIONS), st.booleans())
def test_leaf_path_writes_the_general_paths_bytes(text, version, strip):
    m = shr.parse(text)
    assert SZ.serialize(m, version, strip_debuginfo=strip) == general(m, version, strip)


def _nested_text(n_inner: int, n_after: int) -> str:
    """A while loop whose body (isolated: it uses only its arguments) is a nested IR section of
    more than 64 KiB, followed by leaf ops in the function's block."""
    lines = ["func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {",
             "  %w:2 = stablehlo.while(%x = %a, %y = %b) : tensor<4xf32>, tensor<4xf32>",
             "  cond {",
             "    %c = stablehlo.constant dense<true> : tensor<i1>",
             "    stablehlo.return %c : tensor<i1>",
             "  } do {"]
    prev = "%x"
    for i in range(n_inner):
        lines.append(f"    %i{i} = stablehlo.{['add', 'multiply'][i % 2]} {prev}, %y : tensor<4xf32>")
        prev = f"%i{i}"
    lines.append(f"    stablehlo.return {prev}, %y : tensor<4xf32>, tensor<4xf32>")
    lines.append("  }")
    prev = "%w#0"
    for i in range(n_after):
        lines.append(f"  %o{i} = stablehlo.subtract {prev}, %w#1 : tensor<4xf32>")
        prev = f"%o{i}"
    lines += [f"  func.return {prev} : tensor<4xf32>", "}"]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("target", ["1.0.0", spec.current_version()])
def test_leaf_ops_after_a_big_nested_section(target):
    m = shr.parse(_nested_text(12000, 50))
    data = SZ.serialize(m, target)
    assert len(data) > 70000
    assert data == general(m, target)
    assert_modules_equal(SZ.deserialize(data), shr.parse(_nested_text(12000, 50)))


def test_leaf_path_with_writer_version():
    # use-list orders depend on the rewrites counted per op, for leaf ops too
    text = ("func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
            "  %0 = stablehlo.add %a, %a : tensor<4xf32>\n"
            "  %1 = stablehlo.multiply %0, %a : tensor<4xf32>\n"
            "  %2 = stablehlo.subtract %1, %0 : tensor<4xf32>\n"
            "  func.return %2 : tensor<4xf32>\n}\n")
    m = shr.parse(text)
    for target in _VERSIONS:
        for writer in (None, "1.0.0", spec.current_version()):
            if writer is not None and spec.parse_version(writer) < spec.parse_version(target):
                continue
            assert SZ.serialize_as(m, target, writer_version=writer) == general(m, target, writer=writer)


def test_in_place_read_gives_fresh_stablehlo():
    text = _nested_text(20, 5)
    data = SZ.serialize(shr.parse(text), "1.0.0")
    a, b = SZ.deserialize(data), SZ.deserialize(data)
    assert_modules_equal(a, shr.parse(text))
    assert_modules_equal(a, b)
    for op in _walk(a.op):
        assert not op.name.startswith("vhlo.")
        for r in op.results:
            assert r.owner is op


def test_leaf_path_refuses_what_the_target_cannot_express():
    m = shr.parse("func.func @main(%a: tensor<4xf8E3M4>) -> tensor<4xf8E3M4> {\n"
                  "  %0 = stablehlo.abs %a : tensor<4xf8E3M4>\n"
                  "  func.return %0 : tensor<4xf8E3M4>\n}\n")
    with pytest.raises(SerializationError):
        SZ.serialize(m, "1.0.0")
    with pytest.raises(SerializationError):
        general(m, "1.0.0")
