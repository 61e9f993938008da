"""Portable artifacts: reading and writing MLIR bytecode of the VHLO dialect.

Corpus cases (when ../shared is present):
  * `../shared/vectors/portable/`: every `*.mlirbc` reads back to the StableHLO its program
    text parses to (`read:`), and writing that text at the artifact's target reproduces the
    bytes (`write:`; with strip_debuginfo for the `.nodebug` files, with the parser's
    locations under the buffer name `-` otherwise).
  * `../shared/stablehlo-tests/vhlo/stablehlo_legalize_to_vhlo.X_Y_Z.mlir(.bc)`: upstream's
    compatibility suite: `deserialize(.bc) == parse(.mlir)` and
    `serialize(parse(.mlir), "X.Y.Z", strip_debuginfo=True) == .bc`.
Cases not yet passing are listed in tests/known_failures/vhlo.txt (may only shrink).
Run `python tests/test_serialization.py` to print the current failures in that format.
"""
from __future__ import annotations

import glob
import os
import re
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import KNOWN, REPO, load_known  # noqa: E402

import stablehlo_ref as shr  # noqa: E402
from stablehlo_ref import spec  # noqa: E402
from stablehlo_ref.errors import SerializationError  # noqa: E402
from stablehlo_ref.ir.attributes import ArrayAttr, DictAttr, FloatAttr  # noqa: E402
from stablehlo_ref.ir.equality import assert_modules_equal  # noqa: E402
from stablehlo_ref.serialization import artifact_version, deserialize, serialize, serialize_as  # noqa: E402
from stablehlo_ref.serialization import encoding as B  # noqa: E402

SHARED = REPO.parent / "shared"
VECTORS = SHARED / "vectors" / "portable"
VHLO = SHARED / "stablehlo-tests" / "vhlo"


# ------------------------------------------------------------------ helpers

def _normalize(m):
    """Spellings that print identically upstream: `sym_visibility = "public"` (MLIR's default
    visibility) and custom_call `api_version = 1 : i32` (the default API version)."""
    for op in m.walk():
        v = op.attributes.get("sym_visibility")
        if op.name == "func.func" and v is not None and getattr(v, "value", None) == "public":
            del op.attributes["sym_visibility"]
        v = op.attributes.get("api_version")
        if op.name == "stablehlo.custom_call" and v is not None and getattr(v, "value", None) == 1:
            del op.attributes["api_version"]
        for k, v in list(op.attributes.items()):
            op.attributes[k] = _norm_attr(v)
        v = op.attributes.get("result_accuracy")
        if v is not None and getattr(v, "fields", None) == _DEFAULT_ACCURACY:
            del op.attributes["result_accuracy"]
    return m


def _norm_attr(a):
    if isinstance(a, FloatAttr) and a.type.dtype.itemsize < 8:   # the text parser keeps f64 precision
        return FloatAttr(float(np.array(a.value).astype(a.type.dtype)), a.type)
    if isinstance(a, DictAttr):       # MLIR dictionaries are sorted by name
        return DictAttr(tuple(sorted(((k, _norm_attr(v)) for k, v in a.entries), key=lambda kv: kv[0])))
    if isinstance(a, ArrayAttr):
        return ArrayAttr(tuple(_norm_attr(x) for x in a.elements))
    return a


_DEFAULT_ACCURACY = (("atol", 0.0), ("rtol", 0.0), ("ulps", 0),
                     ("mode", shr.ir.attributes.StructAttr("stablehlo", "result_accuracy_mode", (("value", "DEFAULT"),))))


def _vector_target(tag: str) -> str:
    if tag == "current":
        first = (VECTORS / "MANIFEST.tsv").read_text().splitlines()[0]
        m = re.search(r"StableHLO (\d+\.\d+\.\d+)", first)
        return m.group(1)
    return tag[1:].replace("_", ".")


def _cases():
    out = []
    if VECTORS.is_dir():
        for f in sorted(glob.glob(str(VECTORS / "*.mlirbc"))):
            base = os.path.basename(f)
            out.append(f"read:vectors/{base}")
            out.append(f"write:vectors/{base}")
    if VHLO.is_dir():
        for f in sorted(glob.glob(str(VHLO / "stablehlo_legalize_to_vhlo.*_*_*.mlir.bc"))):
            base = os.path.basename(f)
            out.append(f"read:vhlo/{base}")
            out.append(f"write:vhlo/{base}")
    return out


def _parse_file(path: Path, filename: str):
    # parsed afresh each time: `_normalize` edits modules in place
    return shr.parse(path.read_text(), filename)


def run_case(case: str):
    """Return None when the case passes, else a one-line reason."""
    mode, rest = case.split(":", 1)
    where, base = rest.split("/", 1)
    if where == "vectors":
        path = VECTORS / base
        name, tag = base.split(".")[:2]
        target = _vector_target(tag)
        nodebug = ".nodebug." in base
        if mode == "read":
            rt = VECTORS / f"{name}.{tag}.roundtrip.mlir"
            text_path = rt if rt.exists() else VECTORS / f"{name}.mlir"
        else:
            text_path = VECTORS / f"{name}.mlir"
    else:
        path = VHLO / base
        target = base.split(".")[1].replace("_", ".")
        nodebug = True
        text_path = VHLO / base[:-3]
    data = path.read_bytes()
    try:
        expected = _parse_file(text_path, "-")
    except Exception as e:  # the text parser belongs to stablehlo_ref.text
        return f"text parser cannot parse {text_path.name}: {type(e).__name__}: {str(e).splitlines()[0][:120]}"
    if mode == "read":
        try:
            got = deserialize(data)
        except SerializationError as e:
            return f"deserialize failed: {str(e)[:160]}"
        try:
            assert_modules_equal(_normalize(got), _normalize(_parse_file(text_path, "-")))
        except AssertionError as e:
            return f"differs from the text: {str(e)[:160]}"
        return None
    try:
        # the vectors were written by jaxlib's serializer (StableHLO `target` of the "current" tag)
        writer = _vector_target("current") if where == "vectors" else None
        out = serialize_as(_parse_file(text_path, "-"), target, strip_debuginfo=nodebug, writer_version=writer)
    except SerializationError as e:
        return f"serialize failed: {str(e)[:160]}"
    if out != data:
        i = next((i for i, (a, b) in enumerate(zip(out, data)) if a != b), min(len(out), len(data)))
        return f"bytes differ (ours {len(out)} bytes, upstream {len(data)}, first difference at byte {i})"
    return None


CASES = _cases()
_KNOWN = load_known("vhlo")


@pytest.mark.parametrize("case", CASES)
def test_corpus_case(case):
    reason = run_case(case)
    if reason is None:
        if case in _KNOWN:
            pytest.fail(f"now passing: remove from tests/known_failures/vhlo.txt: {case}")
        return
    if case not in _KNOWN:
        pytest.fail(f"{case}: {reason}")


def test_known_failures_are_cases():
    if not CASES:
        pytest.skip("../shared corpora not present")
    stale = sorted(set(_KNOWN) - set(CASES))
    assert not stale, f"tests/known_failures/vhlo.txt lists cases that do not exist: {stale[:5]}"


# ------------------------------------------------------------------ primitives

@given(st.integers(min_value=0, max_value=2**64 - 1))
def test_varint_roundtrip(v):
    b = B.varint_bytes(v)
    c = B.Cursor(b)
    assert c.varint() == v and c.at_end()


@given(st.integers(min_value=-(2**63), max_value=2**63 - 1))
def test_svarint_roundtrip(v):
    e = B.Emitter()
    e.svarint(v)
    c = B.Cursor(bytes(e.buf))
    assert c.svarint() == v


def test_varint_examples():
    assert B.varint_bytes(0) == b"\x01"
    assert B.varint_bytes(127) == b"\xff"
    assert B.varint_bytes(128) == b"\x02\x02"
    assert B.varint_bytes(600) == b"\x62\x09"
    assert B.varint_bytes(2**64 - 1) == b"\x00" + b"\xff" * 8


# ------------------------------------------------------------------ API behaviour

_ADD = """
func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.add %a, %b : tensor<2xf32>
  %1 = stablehlo.exponential %0 : tensor<2xf32>
  func.return %1 : tensor<2xf32>
}
"""


def test_roundtrip_and_version():
    m = shr.parse(_ADD)
    for v in ("0.9.0", "0.10.0", "0.12.0", "0.14.0", "1.0.0", spec.current_version()):
        data = serialize(m, v)
        assert data[:4] == b"ML\xefR"
        assert data[4] == (spec.bytecode_version(v) << 1) | 1
        assert artifact_version(data) == v
        assert_modules_equal(deserialize(data), m)


def test_load_detects_bytecode(tmp_path):
    p = tmp_path / "a.mlirbc"
    p.write_bytes(serialize(shr.parse(_ADD), "1.0.0"))
    m = shr.load(p)
    assert_modules_equal(m, shr.parse(_ADD))
    out = shr.run(m, np.array([1, 2], np.float32), np.array([0, 0], np.float32))
    np.testing.assert_allclose(out[0], np.exp([1, 2]).astype(np.float32), rtol=1e-6)


def test_bad_targets():
    m = shr.parse(_ADD)
    for t in ("0.8.0", "99.0.0", "1.x", ""):
        with pytest.raises(SerializationError):
            serialize(m, t)


def test_downgrade_refused_names_the_feature():
    text = """
func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.tan %a : tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
"""
    with pytest.raises(SerializationError, match="tan"):
        serialize(shr.parse(text), "1.3.0")
    serialize(shr.parse(text), "1.4.0")
    text2 = """
func.func @main(%a: tensor<2xi2>) -> tensor<2xi2> {
  func.return %a : tensor<2xi2>
}
"""
    with pytest.raises(SerializationError, match="i2_v1"):
        serialize(shr.parse(text2), "1.1.0")


def test_dot_algorithm_downgrade_refused():
    text = """
func.func @main(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0], algorithm = <lhs_precision_type = tf32, rhs_precision_type = tf32, accumulation_type = f32, lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 1, allow_imprecise_accumulation = false> : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  func.return %0 : tensor<2x2xf32>
}
"""
    m = shr.parse(text)
    with pytest.raises(SerializationError, match="dot_general.*(lhs_precision_type|tf31)"):
        serialize(m, "1.5.0")
    assert_modules_equal(deserialize(serialize(m, "1.6.0")), m)


def test_load_reports_path_of_corrupt_artifact(tmp_path):
    p = tmp_path / "bad.mlirbc"
    p.write_bytes(serialize(shr.parse(_ADD), "1.0.0")[:40])
    with pytest.raises(SerializationError, match="bad.mlirbc"):
        shr.load(p)
    with pytest.raises(SerializationError):
        artifact_version(b"ML\xefR\x0dhello\x00")


def test_future_artifact_is_refused():
    p = VHLO / "invalid_vhlo_future.mlir.bc"
    if not p.exists():
        pytest.skip("../shared corpora not present")
    with pytest.raises(SerializationError, match="unknown VHLO op"):
        deserialize(p.read_bytes())


def test_header_errors():
    with pytest.raises(SerializationError, match="magic"):
        deserialize(b"hello world")
    data = bytearray(serialize(shr.parse(_ADD), "1.0.0"))
    data[4] = (7 << 1) | 1
    with pytest.raises(SerializationError, match="version 7"):
        deserialize(bytes(data))


def test_large_constant_is_not_copied():
    n = 1 << 16
    text = f"""
func.func @main() -> tensor<{n}xf32> {{
  %0 = stablehlo.iota dim = 0 : tensor<{n}xf32>
  func.return %0 : tensor<{n}xf32>
}}
"""
    m = shr.parse(text)
    # build a module holding a large dense constant directly
    from stablehlo_ref.ir.attributes import DenseElementsAttr
    from stablehlo_ref.ir.core import Operation
    from stablehlo_ref.ir.types import ELEMENT_TYPES, TensorType
    func = m.body.operations[0]
    iota = func.regions[0].blocks[0].operations[0]
    t = TensorType((n,), ELEMENT_TYPES["f32"])
    arr = np.arange(n, dtype=np.float32)
    const = Operation("stablehlo.constant", [], [t], {"value": DenseElementsAttr(t, arr)})
    iota.name, iota.attributes = const.name, const.attributes
    data = serialize(m, "1.0.0")
    back = deserialize(data)
    got = back.body.operations[0].regions[0].blocks[0].operations[0].attributes["value"].array
    np.testing.assert_array_equal(got, arr)
    assert not got.flags.owndata and got.base is not None


def test_huge_splat_costs_no_memory():
    from stablehlo_ref.ir.attributes import DenseElementsAttr, TypeAttr
    from stablehlo_ref.ir.types import ELEMENT_TYPES, FunctionType, TensorType
    m = shr.parse(_ADD)
    func = m.body.operations[0]
    op = func.regions[0].blocks[0].operations[0]
    for et, v in (("i4", -3), ("i1", True), ("f32", 2.5)):
        t = TensorType((100000, 100000), ELEMENT_TYPES[et])
        m2 = shr.parse("func.func @main() -> tensor<i1> {\n  %0 = stablehlo.constant dense<true> : tensor<i1>\n"
                       "  func.return %0 : tensor<i1>\n}")
        f2 = m2.body.operations[0]
        c = f2.regions[0].blocks[0].operations[0]
        c.attributes["value"] = DenseElementsAttr(t, np.broadcast_to(np.array(v, dtype=t.element_type.dtype), t.shape))
        c.results[0].type = t
        f2.attributes["function_type"] = TypeAttr(FunctionType((), (t,)))
        data = serialize(m2, "1.0.0")
        assert len(data) < 400
        back = deserialize(data).body.operations[0].regions[0].blocks[0].operations[0].attributes["value"].array
        assert back.shape == t.shape and back[7, 9] == v


# ------------------------------------------------------------------ hypothesis

_ETYPES = ["f32", "f16", "bf16", "f64", "i8", "i16", "i32", "i64", "ui8", "ui32"]
_UNARY = {"float": ["abs", "negate", "exponential", "sqrt", "tanh", "floor"], "int": ["abs", "negate", "not"]}
_BINARY = ["add", "subtract", "multiply", "maximum", "minimum"]


@st.composite
def small_modules(draw):
    et = draw(st.sampled_from(_ETYPES))
    shape = draw(st.lists(st.integers(1, 4), min_size=0, max_size=3))
    ty = "tensor<" + "".join(f"{d}x" for d in shape) + et + ">"
    kind = "float" if et[0] in "fb" else "int"
    lines = [f"func.func @main(%a: {ty}, %b: {ty}) -> {ty} {{"]
    vals = ["%a", "%b"]
    n = draw(st.integers(1, 5))
    for i in range(n):
        choice = draw(st.integers(0, 2))
        if choice == 0:
            op = draw(st.sampled_from(_UNARY[kind]))
            x = draw(st.sampled_from(vals))
            lines.append(f"  %v{i} = stablehlo.{op} {x} : {ty}")
        elif choice == 1:
            op = draw(st.sampled_from(_BINARY))
            x, y = draw(st.sampled_from(vals)), draw(st.sampled_from(vals))
            lines.append(f"  %v{i} = stablehlo.{op} {x}, {y} : {ty}")
        else:
            c = draw(st.integers(-100, 100)) if kind == "int" else draw(st.floats(-1e3, 1e3, width=16))
            if et.startswith("ui"):
                c = abs(int(c))
            lit = repr(float(c)) if kind == "float" else str(int(c))
            lines.append(f"  %v{i} = stablehlo.constant dense<{lit}> : {ty}")
        vals.append(f"%v{i}")
    lines.append(f"  func.return {vals[-1]} : {ty}")
    lines.append("}")
    return "\n".join(lines)


_VERSIONS = ["0.9.0", "0.10.0", "0.12.0", "0.14.0", "0.17.0", "1.0.0", "1.6.0", "1.10.0", spec.current_version()]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_modules(), st.sampled_from(_VERSIONS), st.booleans())
def test_roundtrip_generated(text, version, strip):
    m = shr.parse(text)
    data = serialize(m, version, strip_debuginfo=strip)
    assert_modules_equal(deserialize(data), m)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_modules(), st.sampled_from(_VERSIONS), st.data())
def test_mutated_artifacts_raise_only_serialization_error(text, version, data):
    raw = bytearray(serialize(shr.parse(text), version))
    how = data.draw(st.sampled_from(["truncate", "flip", "insert", "delete"]))
    pos = data.draw(st.integers(0, len(raw) - 1))
    if how == "truncate":
        raw = raw[:pos]
    elif how == "flip":
        raw[pos] ^= data.draw(st.integers(1, 255))
    elif how == "insert":
        raw[pos:pos] = bytes([data.draw(st.integers(0, 255))])
    else:
        del raw[pos]
    try:
        deserialize(bytes(raw))
    except SerializationError:
        pass


if __name__ == "__main__":
    for c in CASES:
        r = run_case(c)
        if r is not None:
            print(f"{c}\t{r}")
