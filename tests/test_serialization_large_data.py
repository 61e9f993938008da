"""The fast paths of the serializer: zero-copy reads, one-copy writes, sampled hashes.

Each fast path must give exactly the bytes and values the plain path gives; these tests
aim at the cases a sample or a shortcut could get wrong (data that differs only where the
sample does not look, payloads split into chunks, varints at the table's edge)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import stablehlo_ref as shr
from stablehlo_ref.ir.attributes import DenseElementsAttr
from stablehlo_ref.ir.types import ELEMENT_TYPES, TensorType
from stablehlo_ref.serialization import encoding as B
from stablehlo_ref.serialization import deserialize, serialize
from stablehlo_ref.serialization.vhlo_values import Blob


def _consts_module(arrays):
    """func @main returning one f32 constant per array."""
    n = len(arrays)
    sig = ", ".join(f"tensor<{a.size}xf32>" for a in arrays)
    text = [f"func.func @main() -> ({sig}) {{"]
    for i, a in enumerate(arrays):
        text.append(f"  %c{i} = stablehlo.constant dense<0.0> : tensor<{a.size}xf32>")
    text.append("  func.return " + ", ".join(f"%c{i}" for i in range(n)) + " : " + sig)
    text.append("}")
    m = shr.parse("\n".join(text) + "\n")
    ops = m.body.operations[0].regions[0].blocks[0].operations
    for op, a in zip(ops, arrays):
        op.attributes["value"] = DenseElementsAttr(TensorType((a.size,), ELEMENT_TYPES["f32"]), a)
    return m


def _values(m):
    ops = m.body.operations[0].regions[0].blocks[0].operations
    return [op.attributes["value"].array for op in ops if op.name == "stablehlo.constant"]


def test_blob_hash_is_sampled_but_equality_is_exact():
    a = np.arange(1 << 16, dtype=np.uint8)
    b = a.copy()
    b[5000] ^= 1                        # a byte no sample looks at
    x, y = Blob(a.tobytes()), Blob(memoryview(b))
    assert hash(x) == hash(y) and x != y
    assert Blob(memoryview(a)) == Blob(a.tobytes()) and hash(Blob(memoryview(a))) == hash(x)
    assert Blob(b"abc") == Blob(memoryview(b"abc")) and Blob(b"abc") != Blob(b"abd")


def test_constants_differing_outside_the_sample_stay_distinct():
    n = 1 << 16
    a = np.arange(n, dtype=np.float32)
    b = a.copy()
    b[777] = -1.0
    m = _consts_module([a, b, a.copy()])
    data = serialize(m)
    got = _values(deserialize(data))
    np.testing.assert_array_equal(got[0], a)
    np.testing.assert_array_equal(got[1], b)
    np.testing.assert_array_equal(got[2], a)
    # equal constants are stored once
    assert data.count(a.tobytes()[:4096]) == 1


def test_near_splat_is_not_a_splat():
    n = 1 << 12
    a = np.full(n, 2.5, np.float32)
    a[n // 2 + 7] = 0.0                # not one of the sampled elements
    got = _values(deserialize(serialize(_consts_module([a]))))[0]
    np.testing.assert_array_equal(got, a)
    s = np.full(n, 2.5, np.float32)
    data = serialize(_consts_module([s]))
    assert len(data) < 1000            # a splat: one element stored, not 16 KB
    np.testing.assert_array_equal(_values(deserialize(data))[0], s)


def test_large_constant_read_is_a_view_of_the_input():
    a = np.random.default_rng(1).standard_normal(1 << 17).astype(np.float32)
    data = serialize(_consts_module([a]))
    got = _values(deserialize(data))[0]
    np.testing.assert_array_equal(got, a)
    assert np.shares_memory(got, np.frombuffer(data, np.uint8))
    assert not got.flags.writeable


def test_emitter_chunks_join_to_the_same_bytes():
    big = np.arange(1 << 17, dtype=np.uint8)
    e = B.Emitter()
    e.varint(300)
    e.raw(memoryview(big))
    e.byte(7)
    e.raw(memoryview(big.view(np.uint16)))   # a non-byte view counts its bytes
    assert e.size() == 2 + 2 * big.nbytes + 1
    want = B.varint_bytes(300) + big.tobytes() + b"\x07" + big.tobytes()
    assert e.getvalue() == want
    out = B.Emitter()
    out.section(3, e)
    assert out.getvalue() == b"\x03" + B.varint_bytes(len(want)) + want


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.integers(0, 1 << 15), st.integers(0, 2**64 - 1)))
def test_emitter_varint_table_matches_varint_bytes(v):
    e = B.Emitter()
    e.varint(v)
    assert bytes(e.buf) == B.varint_bytes(v)
    c = B.Cursor(bytes(e.buf))
    assert c.varint() == v and c.at_end()


def test_negative_varint_is_refused():
    with pytest.raises(Exception):
        B.Emitter().varint(-1)


def test_many_ops_roundtrip_exactly():
    # indices past one and two varint bytes: op names, locations, values
    lines = ["func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {"]
    prev = "%a"
    for i in range(20000):
        lines.append(f"  %v{i} = stablehlo.add {prev}, %a : tensor<4xf32>")
        prev = f"%v{i}"
    lines += [f"  func.return {prev} : tensor<4xf32>", "}"]
    m = shr.parse("\n".join(lines) + "\n")
    data = serialize(m)
    back = deserialize(data)
    assert serialize(back) == data
    assert len(back.body.operations[0].regions[0].blocks[0].operations) == 20001
