"""The verifier: unit tests, the upstream verifier suites (`ops/*.mlir`, `// expected-error@+N`
marks an op that must be rejected) against tests/known_failures/verify.txt, and no false
positives on the valid programs of `interpret/` and `testdata/`."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import SHARED, corpus_files, load_known  # noqa: E402
from verifier_suite import classify, expected_lines, split_chunks  # noqa: E402,F401

from stablehlo_ref import parse  # noqa: E402
from stablehlo_ref.errors import ParseError, StableHLOError, VerificationError  # noqa: E402
from stablehlo_ref.verifier import VERIFIERS, collect, verify  # noqa: E402

OPS_FILES = corpus_files("ops")


@pytest.mark.skipif(not OPS_FILES, reason="../shared/stablehlo-tests not present")
@pytest.mark.parametrize("rel", OPS_FILES)
def test_ops_corpus(rel):
    known = load_known("verify")
    text = (SHARED / rel).read_text()
    unexpected, fixed = [], []
    for i, outcome, detail in classify(text, rel):
        cid = f"{rel}#{i}"
        if outcome == "wrong":
            if cid not in known:
                unexpected.append(f"{cid}: {detail}")
        elif cid in known and outcome != "skipped":
            fixed.append(cid)
    msg = []
    if unexpected:
        msg.append("unexpected failures:\n  " + "\n  ".join(unexpected))
    if fixed:
        msg.append("now passing (remove from tests/known_failures/verify.txt):\n  " + "\n  ".join(fixed))
    assert not msg, "\n".join(msg)


VALID_FILES = corpus_files("interpret") + corpus_files("testdata") + corpus_files("testdata", "*/*.mlir")


@pytest.mark.skipif(not VALID_FILES, reason="../shared/stablehlo-tests not present")
def test_no_false_positives_on_valid_programs():
    bad = []
    for rel in VALID_FILES:
        text = (SHARED / rel).read_text()
        for i, chunk in enumerate(split_chunks(text)):
            try:
                module = parse(chunk, rel)
            except StableHLOError:
                continue
            errs = collect(module)
            if errs:
                bad.append(f"{rel}#{i}: {errs[0]}")
    assert not bad, f"{len(bad)} valid chunk(s) rejected:\n  " + "\n  ".join(bad[:50])


# ------------------------------------------------------------------ unit tests

def _module(body: str):
    return parse(body, "f.mlir")


def test_accepts_valid_add():
    verify(_module("func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
                   "  %0 = stablehlo.add %a, %a : tensor<2xf32>\n  func.return %0 : tensor<2xf32>\n}\n"))


def test_add_type_mismatch_names_location_and_constraint():
    m = _module("func.func @f(%a: tensor<2xf32>, %b: tensor<3xf32>) -> tensor<2xf32> {\n"
                "  %0 = \"stablehlo.add\"(%a, %b) : (tensor<2xf32>, tensor<3xf32>) -> tensor<2xf32>\n"
                "  func.return %0 : tensor<2xf32>\n}\n")
    with pytest.raises(VerificationError) as ei:
        verify(m)
    s = str(ei.value)
    assert s.startswith("f.mlir:2:") and "stablehlo.add: C1:" in s
    assert ei.value.constraint == "C1"


def test_func_return_mismatch():
    m = _module("func.func @f(%a: tensor<2xf32>) -> tensor<3xf32> {\n  func.return %a : tensor<2xf32>\n}\n")
    errs = collect(m)
    assert len(errs) == 1 and "func.return" in str(errs[0])


def test_call_to_missing_function():
    m = _module("func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
                "  %0 = func.call @g(%a) : (tensor<2xf32>) -> tensor<2xf32>\n  func.return %0 : tensor<2xf32>\n}\n")
    with pytest.raises(VerificationError, match="does not reference"):
        verify(m)


def test_transpose_bad_permutation():
    m = _module("func.func @f(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {\n"
                "  %0 = stablehlo.transpose %a, dims = [0, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>\n"
                "  func.return %0 : tensor<3x2xf32>\n}\n")
    with pytest.raises(VerificationError, match="C2"):
        verify(m)


def test_dynamic_dims_are_compatible():
    verify(_module("func.func @f(%a: tensor<?xf32>) -> tensor<?xf32> {\n"
                   "  %0 = \"stablehlo.add\"(%a, %a) : (tensor<?xf32>, tensor<?xf32>) -> tensor<4xf32>\n"
                   "  %1 = stablehlo.abs %a : tensor<?xf32>\n  func.return %1 : tensor<?xf32>\n}\n"))


def test_collect_reports_every_bad_op():
    m = _module("func.func @f(%a: tensor<2xf32>, %b: tensor<3xf32>) -> tensor<2xf32> {\n"
                "  %0 = \"stablehlo.add\"(%a, %b) : (tensor<2xf32>, tensor<3xf32>) -> tensor<2xf32>\n"
                "  %1 = \"stablehlo.multiply\"(%a, %b) : (tensor<2xf32>, tensor<3xf32>) -> tensor<2xf32>\n"
                "  func.return %0 : tensor<2xf32>\n}\n")
    assert [e.op.name for e in collect(m)] == ["stablehlo.add", "stablehlo.multiply"]


def test_registry_has_core_ops():
    for name in ("stablehlo.add", "stablehlo.broadcast_in_dim", "stablehlo.gather", "stablehlo.reduce",
                 "func.return", "func.call"):
        assert name in VERIFIERS


_BAD = ("func.func @main(%a: tensor<2xf32>, %b: tensor<3xf32>) -> tensor<2xf32> {\n"
        "  %0 = \"stablehlo.add\"(%a, %b) : (tensor<2xf32>, tensor<3xf32>) -> tensor<2xf32>\n"
        "  func.return %0 : tensor<2xf32>\n}\n")
_GOOD = ("func.func @main() -> tensor<2xf32> {\n  %0 = stablehlo.constant dense<1.0> : tensor<2xf32>\n"
         "  func.return %0 : tensor<2xf32>\n}\n")


def test_cli_validate(tmp_path, capsys):
    from stablehlo_ref.cli import main
    good, bad = tmp_path / "good.mlir", tmp_path / "bad.mlir"
    good.write_text(_GOOD)
    bad.write_text(_BAD)
    assert main(["validate", str(good)]) == 0
    assert f"ok: {good}" in capsys.readouterr().out
    assert main(["validate", str(good), str(bad)]) == 1
    err = capsys.readouterr().err
    assert err.count("error:") == 1 and "bad.mlir:2:" in err and "C1" in err
    assert main(["validate", str(tmp_path / "missing.mlir")]) == 2


def test_cli_run_verifies_unless_told_not_to(tmp_path, capsys):
    from stablehlo_ref.cli import main
    bad = tmp_path / "bad.mlir"
    bad.write_text(_BAD.replace("%a: tensor<2xf32>, %b: tensor<3xf32>", "").replace("(%a, %b)", "(%c, %d)")
                   .replace("{\n", "{\n  %c = stablehlo.constant dense<1.0> : tensor<2xf32>\n"
                            "  %d = stablehlo.constant dense<1.0> : tensor<3xf32>\n", 1))
    assert main(["run", str(bad)]) == 1
    assert "stablehlo.add: C1" in capsys.readouterr().err
    good = tmp_path / "good.mlir"
    good.write_text(_GOOD)
    assert main(["run", "--no-verify", str(good)]) == 0



def _errs(body: str):
    return [str(e) for e in collect(_module(body))]


_CONV = ("func.func @f(%a: tensor<1x8x8x3xf32>, %k: tensor<3x3x3x4xf32>) -> tensor<{out}xf32> {{\n"
         "  %0 = stablehlo.convolution(%a, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], "
         "window = {{stride = [{s}, {s}], pad = [[1, 1], [1, 1]]}} "
         "{{batch_group_count = 1 : i64, feature_group_count = 1 : i64}} "
         ": (tensor<1x8x8x3xf32>, tensor<3x3x3x4xf32>) -> tensor<{out}xf32>\n"
         "  func.return %0 : tensor<{out}xf32>\n}}\n")


def test_convolution_infers_result_shape():
    assert _errs(_CONV.format(out="1x8x8x4", s=1)) == []
    assert _errs(_CONV.format(out="1x4x4x4", s=2)) == []
    errs = _errs(_CONV.format(out="1x8x8x4", s=2))
    assert len(errs) == 1 and "C25" in errs[0] and "[1, 4, 4, 4]" in errs[0]


def test_quantized_transpose_keeps_scale():
    q1, q2 = "!quant.uniform<i8:f32, 0.1:-30>", "!quant.uniform<i8:f32, 0.2:-30>"
    body = ("func.func @f(%a: tensor<2x3x{q1}>) -> tensor<3x2x{q2}> {{\n"
            "  %0 = stablehlo.transpose %a, dims = [1, 0] : (tensor<2x3x{q1}>) -> tensor<3x2x{q2}>\n"
            "  func.return %0 : tensor<3x2x{q2}>\n}}\n")
    assert _errs(body.format(q1=q1, q2=q1)) == []
    errs = _errs(body.format(q1=q1, q2=q2))
    assert len(errs) == 1 and "scale" in errs[0]


def test_quantized_scale_out_of_expressed_range():
    q = "!quant.uniform<i8:f16, 1.0e+06>"
    errs = _errs(f"func.func @f(%a: tensor<2x{q}>) -> tensor<2x{q}> {{\n  func.return %a : tensor<2x{q}>\n}}\n")
    assert errs and "out of expressed type range" in errs[0]


def test_dynamic_reshape_constant_shape_must_match_result():
    body = ("func.func @f(%a: tensor<4xf32>) -> tensor<{r}xf32> {{\n"
            "  %s = stablehlo.constant dense<[2, 2]> : tensor<2xi64>\n"
            "  %0 = stablehlo.dynamic_reshape %a, %s : (tensor<4xf32>, tensor<2xi64>) -> tensor<{r}xf32>\n"
            "  func.return %0 : tensor<{r}xf32>\n}}\n")
    assert _errs(body.format(r="2x2")) == []
    assert any("incompatible with return type" in e for e in _errs(body.format(r="1x4")))


def test_chlo_broadcast_select_and_top_k():
    ok = ("func.func @f(%p: tensor<2xi1>, %a: tensor<2x2xf32>, %b: tensor<2xf32>) -> tensor<2x2xf32> {\n"
          "  %0 = \"chlo.broadcast_select\"(%p, %a, %b) : (tensor<2xi1>, tensor<2x2xf32>, tensor<2xf32>) -> tensor<2x2xf32>\n"
          "  func.return %0 : tensor<2x2xf32>\n}\n")
    assert _errs(ok) == []
    bad = ok.replace("%b: tensor<2xf32>", "%b: tensor<2xi32>").replace("tensor<2xf32>) ->", "tensor<2xi32>) ->")
    assert _errs(bad)
    topk = ("func.func @f(%a: tensor<f32>) {\n"
            "  %0:2 = chlo.top_k(%a, k=8) : tensor<f32> -> (tensor<8xf32>, tensor<8xi32>)\n  func.return\n}\n")
    assert any("rank must be at least 1" in e for e in _errs(topk))


def test_custom_call_layouts_must_come_in_pairs():
    body = ("func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
            "  %0 = \"stablehlo.custom_call\"(%x) {call_target_name = \"foo\", "
            "operand_layouts = [dense<[0]> : tensor<1xindex>]{extra}} : (tensor<2xf32>) -> tensor<2xf32>\n"
            "  func.return %0 : tensor<2xf32>\n}\n")
    assert _errs(body.replace("{extra}", ", result_layouts = [dense<[0]> : tensor<1xindex>]")) == []
    assert any("either both" in e for e in _errs(body.replace("{extra}", "")))


if __name__ == "__main__":   # quick measurement: python tests/test_verifier.py
    from collections import Counter
    total = Counter()
    for rel in OPS_FILES:
        c = Counter()
        for i, outcome, detail in classify((SHARED / rel).read_text(), rel):
            c[outcome] += 1
            if outcome == "wrong" and "-v" in sys.argv:
                print(f"{rel}#{i}\t{detail}")
        total.update(c)
        print(rel, dict(c))
    print("total", dict(total))


def test_cli_validate_versions_json_and_target(tmp_path, capsys):
    import json
    from stablehlo_ref.cli import main
    good = tmp_path / "good.mlir"
    good.write_text(_GOOD)
    newer = tmp_path / "newer.mlir"
    newer.write_text("func.func @main(%a: tensor<2xi2>) -> tensor<2xi2> {\n"
                     "  %0 = stablehlo.add %a, %a : tensor<2xi2>\n  func.return %0 : tensor<2xi2>\n}\n")
    assert main(["validate", str(good), str(newer)]) == 0
    out = capsys.readouterr().out
    assert f"ok: {good} (minimum StableHLO version 0.9.0)" in out
    assert f"ok: {newer} (minimum StableHLO version 1.2.0)" in out
    assert main(["validate", "--target", "1.0.0", str(newer)]) == 1
    err = capsys.readouterr().err
    assert "newer.mlir:2:" in err and "element type i2 needs StableHLO 1.2.0" in err
    assert main(["validate", "--json", "--target", "1.2.0", str(newer), str(tmp_path / "bad.mlir")]) == 2  # missing
    capsys.readouterr()
    bad = tmp_path / "bad.mlir"
    bad.write_text(_BAD.replace("func.return %0", "%1 = \"stablehlo.subtract\"(%a, %b) : (tensor<2xf32>, "
                                "tensor<3xf32>) -> tensor<2xf32>\n  func.return %0"))
    assert main(["validate", "--json", str(newer), str(bad)]) == 1
    rep = json.loads(capsys.readouterr().out)["files"]
    assert rep[0]["ok"] and rep[0]["minimum_version"] == "1.2.0"
    assert not rep[1]["ok"] and [e["op"] for e in rep[1]["errors"]] == ["stablehlo.add", "stablehlo.subtract"]
    assert rep[1]["errors"][0]["constraint"] == "C1"


def test_cli_validate_reports_an_artifact_from_the_future(tmp_path, capsys):
    from stablehlo_ref import serialize
    from stablehlo_ref.cli import main
    data = serialize(_module(_GOOD), "1.0.0")
    assert b"StableHLO_v1.0.0" in data
    fut = tmp_path / "future.mlirbc"
    fut.write_bytes(data.replace(b"StableHLO_v1.0.0", b"StableHLO_v9.9.0"))
    assert main(["validate", str(fut)]) == 1
    assert "claims StableHLO 9.9.0, newer than the newest version" in capsys.readouterr().err


def test_splat_replica_groups_are_not_expanded():
    body = ("func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
            "  %0 = \"stablehlo.all_reduce\"(%a) ({\n  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
            "    %s = stablehlo.add %x, %y : tensor<f32>\n    stablehlo.return %s : tensor<f32>\n"
            "  }) {replica_groups = dense<0> : tensor<99999999999x1xi64>} : (tensor<4xf32>) -> tensor<4xf32>\n"
            "  func.return %0 : tensor<4xf32>\n}\n")
    errs = _errs(body)
    assert len(errs) == 1 and "C1" in errs[0] and "more than once" in errs[0]


def test_type_well_formedness():
    # bounds: one per dimension, only on dynamic dimensions (checked as the type is read, as
    # upstream verifies the encoding when it builds the type)
    with pytest.raises(ParseError, match="Bounds length") as e:
        parse("func.func @f(%a: tensor<?x?xf32, #stablehlo.bounds<3>>) {\n  func.return\n}\n", "t.mlir")
    assert "t.mlir:1:" in str(e.value)
    with pytest.raises(ParseError, match="Static dimension 0 cannot have a bound"):
        parse("func.func @f(%a: tensor<3xf32, #stablehlo.bounds<3>>) {\n  func.return\n}\n", "t.mlir")
    # a static size must fit the other side's bound
    assert _errs("func.func @f(%a: tensor<?xf32, #stablehlo.bounds<4>>) {\n"
                 "  %0 = \"stablehlo.add\"(%a, %a) : (tensor<?xf32, #stablehlo.bounds<4>>, "
                 "tensor<?xf32, #stablehlo.bounds<4>>) -> tensor<5xf32>\n  func.return\n}\n")
    # the full storage range is the plain storage type; a zero point must lie inside the range
    q, q2 = "!quant.uniform<i8:f32, 1.0:17>", "!quant.uniform<i8<-128:127>:f32, 1.0:17>"
    assert _errs(f"func.func @f(%a: tensor<2x{q}>) -> tensor<2x{q2}> {{\n"
                 f"  %0 = stablehlo.transpose %a, dims = [0] : (tensor<2x{q}>) -> tensor<2x{q2}>\n"
                 f"  func.return %0 : tensor<2x{q2}>\n}}\n") == []
    q3 = "!quant.uniform<i8:f32, 1.0:300>"
    assert any("zero point 300" in e for e in _errs(
        f"func.func @f(%a: tensor<2x{q3}>) {{\n  %0 = stablehlo.add %a, %a : tensor<2x{q3}>\n  func.return\n}}\n"))
    assert any("unknown stablehlo type: foobar" in e for e in _errs("func.func private @f() -> !stablehlo.foobar\n"))


def test_enum_cases_and_precision_configs_are_checked():
    body = ("func.func @f(%a: tensor<2x2xi32>) -> tensor<2x2xi32> {\n"
            "  %0 = \"stablehlo.dot\"(%a, %a) {precision_config = [PC]} : (tensor<2x2xi32>, tensor<2x2xi32>) -> tensor<2x2xi32>\n"
            "  func.return %0 : tensor<2x2xi32>\n}\n")
    assert _errs(body.replace("PC", "#stablehlo<precision DEFAULT>, #stablehlo<precision HIGHEST>")) == []
    assert _errs(body.replace("PC", "\"FOO\", #stablehlo<precision HIGHEST>"))


def test_ragged_dot_group_dimension_must_not_be_a_batching_dimension():
    body = ("func.func @f(%l: tensor<3x11x5xf32>, %r: tensor<3x5x7xf32>, %g: tensor<3xi64>) -> tensor<3x11x7xf32> {\n"
            "  %0 = \"chlo.ragged_dot\"(%l, %r, %g) {ragged_dot_dimension_numbers = #chlo.ragged_dot<"
            "lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], "
            "rhs_contracting_dimensions = [1], lhs_ragged_dimensions = [1], rhs_group_dimensions = [GROUP]>} "
            ": (tensor<3x11x5xf32>, tensor<3x5x7xf32>, tensor<3xi64>) -> tensor<3x11x7xf32>\n"
            "  func.return %0 : tensor<3x11x7xf32>\n}\n")
    assert any("rhs_group_dimensions and rhs_batching_dimensions: 0" in e for e in _errs(body.replace("GROUP", "0")))


def _parse_error(text: str) -> ParseError:
    with pytest.raises(ParseError) as e:
        parse(text, "t.mlir")
    return e.value


def test_spelled_operand_types_are_resolved_at_the_use():
    # reduce's compact form, and an elementwise op given more types than operands
    e = _parse_error("func.func @f(%a: tensor<4x5xf32>, %z: tensor<f32>) -> tensor<5xf32> {\n"
                     "  %0 = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [0] :"
                     " (tensor<3x5xf32>, tensor<f32>) -> tensor<5xf32>\n  func.return %0 : tensor<5xf32>\n}\n")
    assert "use of value '%a' expects different type" in str(e) and e.location == "t.mlir:2:25"
    e = _parse_error("func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
                     "  %0 = stablehlo.add %a, %a : (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>\n"
                     "  func.return %0 : tensor<2xf32>\n}\n")
    assert "2 operands present, but expected 3" in str(e) and e.location == "t.mlir:2:31"


def test_a_missing_token_is_reported_at_the_end_of_its_line():
    e = _parse_error("func.func @f(%a: tensor<1xf64>) -> tensor<1xf64> {\n"
                     "  %0 = stablehlo.tuple %a, %a : (tensor<1xf64>, tensor<1xf64>)\n"
                     "\n  func.return %0 : tensor<1xf64>\n}\n")
    assert e.location.startswith("t.mlir:2:")


@pytest.mark.parametrize("literal", ["dense<[-2, 0, 2]> : tensor<3xi1>", "dense<300> : tensor<i8>",
                                     "dense<-1> : tensor<ui8>", "dense<1> : tensor<f32>",
                                     "dense<5.0> : tensor<complex<f32>>", "dense<0x7FFFFFFF> : tensor<f16>"])
def test_dense_literals_read_as_mlir_reads_them(literal):
    _parse_error(f"func.func @f() {{\n  %0 = stablehlo.constant {literal}\n  func.return\n}}\n")


def test_other_integer_widths_and_memrefs_parse_and_are_not_stablehlo_tensors():
    errs = _errs('func.func @f(%a: tensor<3xf32>) -> tensor<3xi10> {\n'
                 '  %0 = "stablehlo.is_finite"(%a) : (tensor<3xf32>) -> tensor<3xi10>\n  func.return %0 : tensor<3xi10>\n}\n')
    assert errs
    errs = _errs('func.func @f(%a: memref<4xf32>) -> memref<4xf32> {\n'
                 '  %0 = "stablehlo.add"(%a, %a) : (memref<4xf32>, memref<4xf32>) -> memref<4xf32>\n'
                 '  func.return %0 : memref<4xf32>\n}\n')
    assert errs


# ------------------------------------------------------------------ reduction bodies, windows, futures

def _reduce_window(init_t, body_t, window, ret_t=None):
    ret_t = ret_t or body_t
    return ("func.func @f(%a: tensor<4x6xf32>, %i: " + init_t + ") -> tensor<?x?xf32> {\n"
            "  %0 = \"stablehlo.reduce_window\"(%a, %i) ({\n"
            "  ^bb0(%x: " + body_t + ", %y: " + body_t + "):\n"
            "    %s = \"stablehlo.add\"(%x, %y) : (" + body_t + ", " + body_t + ") -> " + ret_t + "\n"
            "    \"stablehlo.return\"(%s) : (" + ret_t + ") -> ()\n"
            "  }) {window_dimensions = array<i64: " + window + ">} : (tensor<4x6xf32>, " + init_t + ") -> tensor<?x?xf32>\n"
            "  func.return %0 : tensor<?x?xf32>\n}\n")


def test_reduction_body_argument_dimensions_must_lie_within_the_window():
    assert _errs(_reduce_window("tensor<f32>", "tensor<f32>", "2, 3")) == []
    errs = _errs(_reduce_window("tensor<5xf32>", "tensor<5xf32>", "2, 3"))
    assert len(errs) == 1 and "C13" in errs[0] and "not compatible" in errs[0]
    errs = _errs(_reduce_window("tensor<1x1x1xf32>", "tensor<1x1x1xf32>", "1, 1"))
    assert len(errs) == 1 and "C13" in errs[0] and "expected to be <= 2" in errs[0]


def test_reduction_body_must_return_a_value_and_accumulate_in_its_argument_type():
    body = ("func.func @f(%a: tensor<4xf32>, %i: tensor<f32>) -> tensor<f32> {{\n"
            "  %0 = stablehlo.reduce(%a init: %i) across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>\n"
            "   reducer(%x: tensor<f32>, %y: tensor<{y}>) {{\n"
            "    {ret}\n  }}\n  func.return %0 : tensor<f32>\n}}\n")
    assert _errs(body.format(y="f32", ret="stablehlo.return %x : tensor<f32>")) == []
    # the input element may widen into a wider float argument (float precision is not compared)
    assert _errs(body.format(y="f64", ret="stablehlo.return %x : tensor<f32>")) == []
    errs = _errs(body.format(y="i32", ret="stablehlo.return %x : tensor<f32>"))
    assert len(errs) == 1 and "C6" in errs[0]
    errs = _errs(body.format(y="f32", ret="stablehlo.return"))
    assert len(errs) == 1 and "C6" in errs[0] and "return some value" in errs[0]


_SAS = ("func.func @f(%a: tensor<4x4xf32>, %s: tensor<2x2xf32>, %i: tensor<f32>) -> tensor<4x4xf32> {{\n"
        "  %0 = \"stablehlo.select_and_scatter\"(%a, %s, %i) ({{\n"
        "  ^bb0(%p: tensor<f32>, %q: tensor<f32>):\n"
        "    %c = stablehlo.compare GE, %p, %q : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
        "    stablehlo.return %c : tensor<i1>\n"
        "  }}, {{\n"
        "  ^bb0(%p: tensor<f32>, %q: tensor<{q}>):\n"
        "    stablehlo.return %p : tensor<f32>\n"
        "  }}) {{{attrs}}} : (tensor<4x4xf32>, tensor<2x2xf32>, tensor<f32>) -> tensor<4x4xf32>\n"
        "  func.return %0 : tensor<4x4xf32>\n}}\n")


def test_select_and_scatter_scatter_body_and_window_dimensions():
    win = "window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 2>"
    assert _errs(_SAS.format(q="f32", attrs=win)) == []
    errs = _errs(_SAS.format(q="i32", attrs=win))
    assert len(errs) == 1 and "C10" in errs[0]
    # window_dimensions is optional in the op's attributes, but absent it is empty: C4 fails
    errs = _errs(_SAS.format(q="f32", attrs="window_strides = array<i64: 2, 2>"))
    assert len(errs) == 1 and "C4" in errs[0]


def test_empty_window_attributes_mean_their_defaults():
    conv = _CONV.format(out="1x6x6x4", s=1).replace("window = {stride = [1, 1], pad = [[1, 1], [1, 1]]}",
                                                     "window = {stride = [], pad = [], lhs_dilate = [], rhs_dilate = []}")
    assert "stride = []" in conv
    assert _errs(conv) == []
    # a window of zero size in a spatial dimension (the kernel's extent) is refused
    zero = (_CONV.format(out="1x8x8x4", s=1).replace("3x3x3x4xf32", "0x3x3x4xf32"))
    errs = _errs(zero)
    assert len(errs) == 1 and "positive value for 0-th window dimension" in errs[0]


def test_conv_dimension_labels_may_not_repeat_a_spatial_dimension():
    bad = _CONV.format(out="1x8x8x4", s=1).replace("[b, 0, 1, f]x", "[b, 0, 1, 1, f]x")
    with pytest.raises(ParseError, match="spatial dimension 1 appears twice"):
        parse(bad, "f.mlir")


_ASYNC = ("func.func @f(%a: tensor<4x2xf32>) -> {res} {{\n"
          "  %0 = \"stablehlo.async_start\"(%a) ({{\n"
          "  ^bb0(%x: {arg}):\n"
          "    %1 = \"stablehlo.all_gather\"(%x) {{all_gather_dim = 1 : i64, "
          "replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}} : ({arg}) -> tensor<4x4xf32>\n"
          "    \"stablehlo.return\"(%1) : (tensor<4x4xf32>) -> ()\n"
          "  }}) : (tensor<4x2xf32>) -> !stablehlo.future<{fut}>\n"
          "  %2 = \"stablehlo.async_done\"(%0) : (!stablehlo.future<{fut}>) -> {res}\n"
          "  func.return %2 : {res}\n}}\n")


def test_async_start_and_done_compare_the_future_with_the_body():
    ok = dict(res="tensor<4x4xf32>", arg="tensor<4x2xf32>", fut="tensor<4x4xf32>")
    assert _errs(_ASYNC.format(**ok)) == []
    assert _errs(_ASYNC.format(**dict(ok, fut="tensor<?x4xf32>", res="tensor<?x4xf32>"))) == []
    errs = _errs(_ASYNC.format(**dict(ok, fut="tensor<4x2xf32>", res="tensor<4x2xf32>")))
    assert any("async_start: C4" in e for e in errs)
    errs = _errs(_ASYNC.format(**dict(ok, res="tensor<4x4xi32>")))
    assert len(errs) == 1 and "async_done: C1" in errs[0]
    errs = _errs(_ASYNC.format(**dict(ok, arg="tensor<4x2xi32>")))
    assert any("async_start: C3" in e and "must match region argument type" in e for e in errs)


def test_a_future_holds_ranked_tensors_only():
    assert _errs("func.func private @f() -> !stablehlo.future<tensor<2xf32>, tensor<i32>>\n") == []
    errs = _errs("func.func private @f() -> !stablehlo.future<tensor<2xf32>, f32>\n")
    assert len(errs) == 1 and "ranked tensor" in errs[0] and "'f32'" in errs[0]


# ------------------------------------------------------------------ result type inference

INFER_FILES = corpus_files("ops", "infer_*.mlir")


@pytest.mark.skipif(not INFER_FILES, reason="../shared/stablehlo-tests not present")
@pytest.mark.parametrize("rel", INFER_FILES)
def test_inferred_types_agree_with_upstream_check_lines(rel):
    from verifier_suite import measure_infer
    known = load_known("verify")
    total, ok, misses = measure_infer(SHARED / rel)
    assert total > 0
    unexpected = [f"{rel}#{i}: {d}" for i, d in misses if f"{rel}#{i}:infer" not in known]
    assert not unexpected, "\n  ".join(unexpected)


def _inferred(body: str, name: str):
    from stablehlo_ref.text.print_types import type_text
    from stablehlo_ref.verifier.inference import infer_result_types
    op = next(o for o in _module(body).walk() if o.name == name)
    return [type_text(t) for t in infer_result_types(op)]


def _one_op(args: str, op_text: str, name: str):
    return _inferred(f"func.func @f({args}) {{\n  {op_text}\n  func.return\n}}\n", name)


def test_inference_of_bounded_dimensions():
    b = "tensor<2x?xi32, #stablehlo.bounds<?, 4>>"
    # concatenating a bounded with a static dimension adds size to bound
    assert _one_op(f"%a: {b}, %c: tensor<2x3xi32>",
                   f'%0 = "stablehlo.concatenate"(%a, %c) {{dimension = 1 : i64}} : ({b}, tensor<2x3xi32>) -> tensor<?x?xi32>',
                   "stablehlo.concatenate") == ["tensor<2x?xi32, #stablehlo.bounds<?, 7>>"]
    # ... and with an unbounded dynamic dimension loses the bound
    assert _one_op(f"%a: {b}, %c: tensor<2x?xi32>",
                   f'%0 = "stablehlo.concatenate"(%a, %c) {{dimension = 1 : i64}} : ({b}, tensor<2x?xi32>) -> tensor<?x?xi32>',
                   "stablehlo.concatenate") == ["tensor<2x?xi32>"]
    # elementwise: a static size wins over a bound, two bounds give the smaller
    assert _one_op(f"%a: {b}, %c: tensor<?x3xi32>",
                   f'%0 = "stablehlo.add"(%a, %c) : ({b}, tensor<?x3xi32>) -> tensor<?x?xi32>',
                   "stablehlo.add") == ["tensor<2x3xi32>"]
    # padding a bounded dimension pads its bound
    assert _one_op(f"%a: {b}, %p: tensor<i32>",
                   f'%0 = "stablehlo.pad"(%a, %p) {{edge_padding_low = array<i64: 0, 1>, edge_padding_high = '
                   f'array<i64: 1, 1>, interior_padding = array<i64: 0, 1>}} : ({b}, tensor<i32>) -> tensor<?x?xi32>',
                   "stablehlo.pad") == ["tensor<3x?xi32, #stablehlo.bounds<?, 9>>"]
    # set_dimension_size turns a static size into a bound
    assert _one_op("%a: tensor<2x5xf32>, %n: tensor<i32>",
                   '%0 = "stablehlo.set_dimension_size"(%a, %n) {dimension = 1 : i64} : (tensor<2x5xf32>, tensor<i32>) '
                   '-> tensor<2x?xf32>', "stablehlo.set_dimension_size") == ["tensor<2x?xf32, #stablehlo.bounds<?, 5>>"]
    # transpose permutes bounds with the dimensions
    assert _one_op(f"%a: {b}", f'%0 = "stablehlo.transpose"(%a) {{permutation = array<i64: 1, 0>}} : ({b}) -> tensor<?x2xi32>',
                   "stablehlo.transpose") == ["tensor<?x2xi32, #stablehlo.bounds<4, ?>>"]


def test_inference_of_element_types_and_regions():
    assert _one_op("%a: tensor<3xf64>", '%0 = "stablehlo.fft"(%a) {fft_length = array<i64: 3>, '
                   'fft_type = #stablehlo<fft_type RFFT>} : (tensor<3xf64>) -> tensor<2xcomplex<f64>>',
                   "stablehlo.fft") == ["tensor<2xcomplex<f64>>"]
    assert _one_op("%a: tensor<2x3xf32>, %b: tensor<2x3xf32>",
                   '%0 = stablehlo.compare LT, %a, %b : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>',
                   "stablehlo.compare") == ["tensor<2x3xi1>"]
    assert _one_op("%a: tensor<?xf32>, %b: tensor<4x1xf32>",
                   '%0 = chlo.broadcast_add %a, %b : (tensor<?xf32>, tensor<4x1xf32>) -> tensor<?x?xf32>',
                   "chlo.broadcast_add") == ["tensor<4x?xf32>"]
    # the result element type of a reduction is the body's
    assert _one_op("%a: tensor<4x5xf32>, %i: tensor<f32>",
                   "%0 = stablehlo.reduce(%a init: %i) across dimensions = [1] : (tensor<4x5xf32>, tensor<f32>) -> "
                   "tensor<4xf32>\n   reducer(%x: tensor<f32>, %y: tensor<f32>) {\n"
                   "    %s = stablehlo.add %x, %y : tensor<f32>\n    stablehlo.return %s : tensor<f32>\n  }",
                   "stablehlo.reduce") == ["tensor<4xf32>"]


def test_inference_refuses_what_the_spec_leaves_to_the_result_type():
    from stablehlo_ref.verifier.inference import InferenceUnavailable
    with pytest.raises(InferenceUnavailable):
        _one_op("%a: tensor<2xf32>", '%0 = "stablehlo.convert"(%a) : (tensor<2xf32>) -> tensor<2xi32>', "stablehlo.convert")
    with pytest.raises(InferenceUnavailable):
        _one_op("%a: tensor<2xf32>", '%0 = "stablehlo.reshape"(%a) : (tensor<2xf32>) -> tensor<1x2xf32>', "stablehlo.reshape")


_MESH_GATHER = ("{decl}func.func @f(%x: tensor<16x8xf32>) -> tensor<16x16xf32> {{\n"
                "  %0 = \"stablehlo.all_gather\"(%x) {{all_gather_dim = 1 : i64,\n"
                "    replica_groups = #stablehlo.replica_group_mesh_axes<mesh = {mesh}, axes = [{axes}]>}}"
                " : (tensor<16x8xf32>) -> tensor<16x16xf32>\n"
                "  func.return %0 : tensor<16x16xf32>\n}}\n")


def test_replica_groups_given_as_mesh_axes():
    named = dict(decl="func.func private @grid()\n", mesh="@grid", axes="0 : i64, 1 : i64")
    m = _module(_MESH_GATHER.format(**named))
    assert collect(m) == []
    from stablehlo_ref.text.printer import print_module
    assert "axes = [0 : i64, 1 : i64]" in print_module(m)
    # the named mesh must exist (a symbol use: checked once the ops verify)
    errs = _errs(_MESH_GATHER.format(**dict(named, decl="")))
    assert len(errs) == 1 and "mesh symbol 'grid' not found" in errs[0]
    inline = ('#stablehlo.mesh<axes = [#stablehlo.mesh_axis<name = "a", size = 2>]>')
    assert _errs(_MESH_GATHER.format(decl="", mesh=inline, axes='#stablehlo.axis_ref<name = "a">')) == []
    errs = _errs(_MESH_GATHER.format(decl="", mesh=inline, axes='#stablehlo.axis_ref<name = "b">'))
    assert len(errs) == 1 and "axis 'b' not found in mesh definition" in errs[0]
    errs = _errs(_MESH_GATHER.format(decl="", mesh=inline, axes="0 : i64"))
    assert len(errs) == 1 and "expected AxisRefAttr" in errs[0]


def test_run_parallel_programs_and_infeed():
    body = ("func.func @p(%x: tensor<2xf32>) -> tensor<2xf32> {{\n  func.return %x : tensor<2xf32>\n}}\n"
            "func.func @feed() -> (tensor<2xf32>, tensor<2xf32>) {{\n"
            "  %c = stablehlo.constant dense<1.0> : tensor<2xf32>\n  func.return %c, %c : tensor<2xf32>, tensor<2xf32>\n}}\n"
            "func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32>) {{\n"
            "  {results} = \"interpreter.run_parallel\"(%a, %b) {{programs = {programs}{infeed}}} : "
            "(tensor<2xf32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)\n  func.return\n}}\n")
    ok = dict(results="%r:2", programs="[[@p], [@p]]", infeed="")
    assert _errs(body.format(**ok)) == []
    for change, message in ((dict(programs="[]"), "cannot be empty"),
                            (dict(programs="[[@p], [@p, @p]]"), "should all match 1 but got 2"),
                            (dict(programs="[[@p], [@q]]"), 'Function "q" not found'),
                            (dict(programs="[[@p, @p, @p]]"), "Number of inputs (2)"),
                            (dict(infeed=", infeed = []"), "should not be empty"),
                            (dict(infeed=", infeed = [@feed]"), "should return 1 tensor but returns 2")):
        errs = _errs(body.format(**dict(ok, **change)))
        assert len(errs) == 1 and message in errs[0], (change, errs)


def test_results_must_be_compatible_with_the_inferred_types():
    # checks no op-specific rule states: the rank of get_dimension_size's result, top_k on an
    # unranked operand
    errs = _errs("func.func @f(%a: tensor<2x3xf32>) -> tensor<1xi32> {\n"
                 "  %0 = stablehlo.get_dimension_size %a, dim = 1 : (tensor<2x3xf32>) -> tensor<1xi32>\n"
                 "  func.return %0 : tensor<1xi32>\n}\n")
    assert len(errs) == 1 and "inferred type(s) 'tensor<i32>'" in errs[0]
    top_k = ("func.func @f(%a: tensor<*xf32>) {{\n"
             "  %0:2 = chlo.top_k(%a, k=8) : tensor<*xf32> -> (tensor<*x{v}>, tensor<*xi32>)\n  return\n}}\n")
    assert _errs(top_k.format(v="f32")) == []
    errs = _errs(top_k.format(v="f16"))
    assert len(errs) == 1 and "chlo.top_k: inferred type(s)" in errs[0]
    # quantization parameters are the result type's own: no inference there
    q = "!quant.uniform<i8:f32, 2.0:15>"
    assert _errs(f"func.func @f() -> tensor<2x{q}> {{\n  %0 = stablehlo.constant dense<[1, 2]> : tensor<2x{q}>\n"
                 f"  func.return %0 : tensor<2x{q}>\n}}\n") == []


def test_isolated_regions_see_no_outside_values():
    body = ("func.func @f(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {{\n"
            "  %0, %1 = chlo.scan (%a) inits (%b) dimension = 0 {{\n"
            "  ^bb0(%x: tensor<3xf32>, %c: tensor<3xf32>):\n"
            "    %2 = stablehlo.add {lhs}, %c : tensor<3xf32>\n"
            "    stablehlo.return %2, %2 : tensor<3xf32>, tensor<3xf32>\n"
            "  }} : (tensor<2x3xf32>, tensor<3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>)\n"
            "  func.return %0 : tensor<2x3xf32>\n}}\n")
    assert _errs(body.format(lhs="%x")) == []
    errs = _errs(body.format(lhs="%b"))
    assert len(errs) == 1 and "stablehlo.add" in errs[0] and "does not dominate" in errs[0]


_GATHER_OP = ('func.func @f(%a: tensor<4xf32>) -> tensor<8xf32> {{\n  %0 = "stablehlo.all_gather"(%a) '
              '{{all_gather_dim = 0 : i64, replica_groups = {groups}{extra}}} : (tensor<4xf32>) -> tensor<8xf32>\n'
              '  func.return %0 : tensor<8xf32>\n}}\n')


@pytest.mark.parametrize("groups, extra, message", [
    ("dense<[[0, 1]]> : tensor<1x2xi64>", "", None),
    ("dense<[[0, 1]]> : tensor<1x2xi32>", "", "attribute 'replica_groups' must be"),
    ("[0, 1]", "", "attribute 'replica_groups' must be"),
    ("dense<[[0, 1]]> : tensor<1x2xi64>", ", channel_handle = 1 : i64", "attribute 'channel_handle' must be"),
    ("dense<[[0, 1]]> : tensor<1x2xi64>",
     ", channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, use_global_device_ids = true",
     "attribute 'use_global_device_ids' must be unit"),
    ("dense<> : tensor<0x0xi64>", ", channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, use_global_device_ids",
     "replica groups cannot be empty"),
])
def test_attribute_kinds_as_upstream_declares_them(groups, extra, message):
    errs = _errs(_GATHER_OP.format(groups=groups, extra=extra))
    if message is None:
        assert errs == []
    else:
        assert len(errs) == 1 and message in errs[0], errs


@pytest.mark.parametrize("attrs, message", [
    ('call_target_name = "foo", api_version = 4 : i32', None),
    ('call_target_name = "foo", api_version = 9 : i32', "attribute 'api_version'"),
    ('call_target_name = "foo", api_version = 1 : i64', "attribute 'api_version'"),
    ('call_target_name = "foo", called_computations = "g"', "attribute 'called_computations'"),
    ('call_target_name = "foo", output_operand_aliases = 3 : i64', "attribute 'output_operand_aliases'"),
    ('call_target_name = "foo", has_side_effect = 1 : i32', "attribute 'has_side_effect'"),
])
def test_custom_call_attribute_kinds(attrs, message):
    errs = _errs('func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n'
                 f'  %0 = "stablehlo.custom_call"(%a) {{{attrs}}} : (tensor<4xf32>) -> tensor<4xf32>\n'
                 '  func.return %0 : tensor<4xf32>\n}\n')
    if message is None:
        assert errs == []
    else:
        assert len(errs) == 1 and message in errs[0], errs


def test_collective_broadcast_groups_have_no_padding_and_async_done_takes_a_future():
    body = ('func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {{\n  %0 = "stablehlo.collective_broadcast"(%a) '
            '{{replica_groups = dense<[[0, {x}]]> : tensor<1x2xi64>}} : (tensor<4xf32>) -> tensor<4xf32>\n'
            '  func.return %0 : tensor<4xf32>\n}}\n')
    assert _errs(body.format(x=1)) == []
    errs = _errs(body.format(x=-1))
    assert len(errs) == 1 and "C2" in errs[0] and "given -1" in errs[0]
    errs = _errs('func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n'
                 '  %0 = "stablehlo.async_done"(%a) : (tensor<4xf32>) -> tensor<4xf32>\n  func.return %0 : tensor<4xf32>\n}\n')
    assert len(errs) == 1 and "must be a !stablehlo.future" in errs[0]


@pytest.mark.parametrize("body, message", [
    # enums are the op's own dialect's
    ('%0 = "stablehlo.compare"(%a, %a) {comparison_direction = #chlo<comparison_direction EQ>} : '
     '(tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>', "attribute 'comparison_direction'"),
    ('%0 = "chlo.broadcast_compare"(%a, %a) {comparison_direction = #stablehlo<comparison_direction EQ>} : '
     '(tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>', "attribute 'comparison_direction'"),
    # index elements only in shape tensors
    ('%0 = "stablehlo.add"(%i, %i) : (tensor<2xindex>, tensor<2xindex>) -> tensor<2xindex>', "must be"),
    # a variadic operand between fixed ones still has its category checked
    ('%0 = "stablehlo.dynamic_slice"(%a, %f) {slice_sizes = array<i64: 1>} : (tensor<2xf32>, tensor<f32>) -> '
     'tensor<1xf32>', "operand #1 (start_indices)"),
])
def test_enum_dialects_and_operand_categories(body, message):
    errs = _errs("func.func @f(%a: tensor<2xf32>, %i: tensor<2xindex>, %f: tensor<f32>) {\n  " + body +
                 "\n  func.return\n}\n")
    assert len(errs) == 1 and message in errs[0], errs


def test_block_and_symbol_structure():
    errs = _errs("func.func @f(%a: tensor<f32>) -> tensor<f32> {\n  func.return %a : tensor<f32>\n"
                 "  %0 = stablehlo.abs %a : tensor<f32>\n}\n")
    assert any("func.return" in e and "last operation" in e for e in errs), errs
    errs = _errs("func.func @f() {\n  func.return\n}\nfunc.func @f() {\n  func.return\n}\n")
    assert len(errs) == 1 and "redefinition of symbol named 'f'" in errs[0]


@pytest.mark.parametrize("attrs, message", [
    ('operand_layouts = [dense<[1, 0]> : tensor<2xindex>], result_layouts = [dense<[1, 0]> : tensor<2xindex>]', None),
    ('operand_layouts = [dense<[1, 0]> : tensor<2xi64>], result_layouts = [dense<[1, 0]> : tensor<2xi64>]',
     "1-d index tensors"),
    ("backend_config = 1 : i64", "backend_config must be a string or a dictionary"),
])
def test_custom_call_layouts_and_backend_config(attrs, message):
    errs = _errs('func.func @f(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {\n'
                 f'  %0 = "stablehlo.custom_call"(%a) {{call_target_name = "foo", {attrs}}} : (tensor<2x3xf32>) -> tensor<2x3xf32>\n'
                 '  func.return %0 : tensor<2x3xf32>\n}\n')
    assert errs == [] if message is None else (len(errs) == 1 and message in errs[0]), errs


def test_declared_attribute_constraints_point_at_the_attribute_dictionary():
    # MLIR checks an op's declared attribute constraints while parsing its custom form, at the
    # attribute dictionary; the generic form reports them at the op
    def conv(out, fgc):
        return _CONV.format(out=out, s=1).replace(
            "window = {stride = [1, 1], pad = [[1, 1], [1, 1]]} ",
            "window = {stride = [1, 1], pad = [[1, 1], [1, 1]]}\n    ").replace(
            "feature_group_count = 1 : i64}", f"feature_group_count = {fgc} : i64}}")
    errs = collect(_module(conv("1x8x8x4", 0)))
    assert len(errs) == 1 and errs[0].constraint == "C21"
    assert str(errs[0]).startswith("f.mlir:3:5:"), str(errs[0])
    # other checks of the op stay at the op
    errs = collect(_module(conv("1x8x8x5", 1)))
    assert len(errs) == 1 and str(errs[0]).startswith("f.mlir:2:"), [str(e) for e in errs]


def test_stablehlo_tensors_are_ranked_chlo_may_be_unranked():
    errs = _errs("func.func @f(%a: tensor<*xf32>) -> tensor<*xf32> {\n"
                 "  %0 = \"stablehlo.abs\"(%a) : (tensor<*xf32>) -> tensor<*xf32>\n  func.return %0 : tensor<*xf32>\n}\n")
    assert len(errs) == 1 and "operand #0" in errs[0]
    assert _errs("func.func @f(%a: tensor<*xf32>) -> tensor<*xf32> {\n"
                 "  %0 = chlo.broadcast_add %a, %a : (tensor<*xf32>, tensor<*xf32>) -> tensor<*xf32>\n"
                 "  func.return %0 : tensor<*xf32>\n}\n") == []


@pytest.mark.parametrize("body, message", [
    # scatter's indices are integers: its two variadic groups (inputs, updates) are split evenly
    ('%0 = "stablehlo.scatter"(%a, %f2, %b) ({\n  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n'
     '    stablehlo.return %y : tensor<f32>\n  }) {scatter_dimension_numbers = #stablehlo.scatter<'
     'update_window_dims = [], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}'
     ' : (tensor<3xf32>, tensor<1x1xf32>, tensor<1xf32>) -> tensor<3xf32>', "operand #1 (scatter_indices)"),
    # index and tf32 elements inside tuples and custom_call operands
    ('%0 = "stablehlo.tuple"(%i) : (tensor<2xindex>) -> tuple<tensor<2xindex>>', "operand #0"),
    ('%0 = "stablehlo.custom_call"(%i) {call_target_name = "x"} : (tensor<2xindex>) -> tensor<2xf32>', "operand #0"),
])
def test_element_kinds_of_indices_tuples_and_custom_calls(body, message):
    errs = _errs("func.func @f(%a: tensor<3xf32>, %b: tensor<1xf32>, %f2: tensor<1x1xf32>, %i: tensor<2xindex>) {\n  "
                 + body + "\n  func.return\n}\n")
    assert len(errs) == 1 and message in errs[0], errs


def test_fft_admits_only_f32_f64_and_their_complex_types():
    """StableHLO's complex types are built on f32 and f64 alone, so an RFFT/IRFFT real side in
    another float has no complex counterpart, and FFT/IFFT need complex operands: the spec
    class admits f32, f64, complex<f32>, complex<f64> and the verifier refuses the rest."""
    from stablehlo_ref import spec
    from stablehlo_ref.conformance.generated.values import admitted
    assert admitted(spec.op("stablehlo.fft").operands[0].type) == ["f32", "f64", "complex<f32>", "complex<f64>"]
    for et in ("bf16", "f16", "f8E4M3FN", "f4E2M1FN"):
        text = (f"func.func @f(%a: tensor<4x{et}>) -> tensor<3xcomplex<f32>> {{\n"
                f"  %0 = stablehlo.fft %a, type = RFFT, length = [4] : (tensor<4x{et}>) -> tensor<3xcomplex<f32>>\n"
                f"  func.return %0 : tensor<3xcomplex<f32>>\n}}\n")
        with pytest.raises(VerificationError, match="stablehlo.fft"):
            verify(parse(text))
    ok = ("func.func @f(%a: tensor<4xf32>) -> tensor<3xcomplex<f32>> {\n"
          "  %0 = stablehlo.fft %a, type = RFFT, length = [4] : (tensor<4xf32>) -> tensor<3xcomplex<f32>>\n"
          "  func.return %0 : tensor<3xcomplex<f32>>\n}\n")
    verify(parse(ok))
