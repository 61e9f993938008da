"""`stablehlo-ref convert` and artifacts given to `print`, `run` and `validate`."""
from __future__ import annotations

import numpy as np
import pytest

import stablehlo_ref as shr
from stablehlo_ref import spec
from stablehlo_ref.cli import main
from stablehlo_ref.ir.equality import assert_modules_equal
from stablehlo_ref.serialization import artifact_version

_TAN = """func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.tan %a : tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
"""
_ADD = """func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.add %a, %a : tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
"""


@pytest.fixture
def prog(tmp_path):
    def make(text, name="p.mlir"):
        p = tmp_path / name
        p.write_text(text)
        return p
    return make


def test_convert_text_to_artifact_and_back(prog, tmp_path, capsys):
    src = prog(_ADD)
    out = tmp_path / "p.mlirbc"
    assert main(["convert", str(src), "-o", str(out)]) == 0
    data = out.read_bytes()
    assert artifact_version(data) == spec.minimum_version()     # the oldest that carries it (issue 12)
    assert_modules_equal(shr.deserialize(data), shr.parse(_ADD))
    for t in ("0.9.0", "1.4.0", "current", "minimum"):
        assert main(["convert", str(src), "-o", str(out), "--target", t]) == 0
        want = {"current": spec.current_version(), "minimum": spec.minimum_version()}.get(t, t)
        assert artifact_version(out.read_bytes()) == want
    txt = tmp_path / "back.mlir"
    assert main(["convert", str(out), "-o", str(txt), "--emit", "text"]) == 0
    assert_modules_equal(shr.parse(txt.read_text()), shr.parse(_ADD))


def test_convert_artifact_to_artifact_changes_version(prog, tmp_path):
    src = prog(_ADD)
    a, b = tmp_path / "a.bc", tmp_path / "b.bc"
    assert main(["convert", str(src), "-o", str(a), "--target", "current"]) == 0
    assert main(["convert", str(a), "-o", str(b), "--target", "0.9.0"]) == 0
    assert artifact_version(b.read_bytes()) == "0.9.0"
    assert_modules_equal(shr.load(b), shr.parse(_ADD))


def test_convert_strip_debuginfo(prog, tmp_path):
    src = prog(_ADD)
    a, b = tmp_path / "a.bc", tmp_path / "b.bc"
    assert main(["convert", str(src), "-o", str(a)]) == 0
    assert main(["convert", str(src), "-o", str(b), "--strip-debuginfo"]) == 0
    assert b"p.mlir" in a.read_bytes() and b"p.mlir" not in b.read_bytes()
    assert len(b.read_bytes()) < len(a.read_bytes())


def test_convert_unsupported_target_is_exit_1(prog, tmp_path, capsys):
    src = prog(_TAN)
    out = tmp_path / "o.bc"
    assert main(["convert", str(src), "-o", str(out), "--target", "1.3.0"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "tan" in err[0]
    assert not out.exists()
    assert main(["convert", str(src), "-o", str(out), "--target", "99.0.0"]) == 2     # usage errors
    assert main(["convert", str(src), "-o", str(out), "--target", "1.x"]) == 2
    assert main(["convert", str(src), "-o", str(out), "--target", "1.4.0"]) == 0


def test_convert_text_with_target_checks_it(prog, tmp_path):
    src = prog(_TAN)
    out = tmp_path / "o.mlir"
    assert main(["convert", str(src), "-o", str(out), "--emit", "text", "--target", "1.0.0"]) == 1
    assert not out.exists()
    assert main(["convert", str(src), "-o", str(out), "--emit", "text"]) == 0
    assert "stablehlo.tan" in out.read_text()


def test_convert_invalid_input_and_usage(prog, tmp_path, capsys):
    bad = prog("func.func @main( {", "bad.mlir")
    out = tmp_path / "o.bc"
    assert main(["convert", str(bad), "-o", str(out)]) == 1
    corrupt = tmp_path / "c.bc"
    corrupt.write_bytes(shr.serialize(shr.parse(_ADD))[:30])
    assert main(["convert", str(corrupt), "-o", str(out)]) == 1
    assert main(["convert", str(tmp_path / "missing.mlir"), "-o", str(out)]) == 2
    assert main(["convert", str(prog(_ADD))]) == 2                       # -o is required
    assert main(["convert", str(prog(_ADD)), "-o", str(out), "--emit", "json"]) == 2
    assert main(["convert", str(prog(_ADD)), "-o", str(tmp_path / "no" / "dir.bc")]) == 2
    err = capsys.readouterr().err
    # one MLIR-style diagnostic each (`[location: ]error: message`, then source line and caret)
    assert "Traceback" not in err and len([l for l in err.splitlines() if "error: " in l]) == 6
    assert not out.exists()


def test_convert_keeps_existing_output_on_failure(prog, tmp_path):
    out = tmp_path / "o.bc"
    out.write_bytes(b"old")
    assert main(["convert", str(prog(_TAN)), "-o", str(out), "--target", "1.0.0"]) == 1
    assert out.read_bytes() == b"old"
    assert main(["convert", str(prog(_TAN)), "-o", str(out), "--target", "current"]) == 0
    assert out.read_bytes()[:4] == b"ML\xefR"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".tmp-")]


def test_print_run_validate_accept_artifacts(prog, tmp_path, capsys):
    art = tmp_path / "p.mlirbc"
    art.write_bytes(shr.serialize(shr.parse(_ADD), "1.0.0"))
    assert main(["print", str(art), "--strip-debuginfo"]) == 0
    out = capsys.readouterr().out
    assert "stablehlo.add" in out
    assert main(["validate", str(art)]) == 0
    assert capsys.readouterr().out.strip().startswith(f"ok: {art} (minimum StableHLO version ")
    inp = tmp_path / "x.npy"
    np.save(inp, np.array([1.5, -2], np.float32))
    res = tmp_path / "r.npz"
    assert main(["run", str(art), "--input", str(inp), "-o", str(res)]) == 0
    with np.load(res) as z:
        np.testing.assert_array_equal(z["result_0"], np.array([3, -4], np.float32))
    corrupt = tmp_path / "c.mlirbc"
    corrupt.write_bytes(art.read_bytes()[:25])
    capsys.readouterr()
    assert main(["validate", str(corrupt)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "c.mlirbc" in err[0]
    assert main(["print", str(corrupt)]) == 1


_RESOURCE = """module {
  func.func @main() -> (tensor<2xf32>, tensor<3xi8>) {
    %0 = stablehlo.constant dense_resource<blob1> : tensor<2xf32>
    %1 = stablehlo.constant dense_resource<blob2> : tensor<3xi8>
    return %0, %1 : tensor<2xf32>, tensor<3xi8>
  }
}
{-#
  dialect_resources: {
    builtin: {
      blob1: "0x040000000000803F00000040",
      blob2: "0x0100000001FF7F"
    }
  }
#-}
"""


def test_dense_resource_needs_inlining_for_an_artifact(prog, tmp_path, capsys):
    src = prog(_RESOURCE)
    out = tmp_path / "r.mlirbc"
    assert main(["convert", str(src), "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert "dense_resource<blob1>" in err and "--inline-resources" in err and ":3:" in err
    assert not out.exists()
    assert main(["convert", "--inline-resources", str(src), "-o", str(out)]) == 0
    got = shr.run(shr.deserialize(out.read_bytes()))
    want = shr.run(shr.parse(_RESOURCE))
    np.testing.assert_array_equal(got[0], np.array([1, 2], np.float32))
    np.testing.assert_array_equal(got[1], np.array([1, -1, 127], np.int8))
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_inline_resources_api_drops_unused_blobs():
    m = shr.parse(_RESOURCE)
    assert shr.inline_resources(m) == 2
    assert m.resources == {}
    assert "dense_resource" not in shr.print_module(m)
    assert shr.deserialize(shr.serialize(m)) == m


def test_dense_resource_of_the_wrong_size_is_one_error(prog, capsys):
    src = prog(_RESOURCE.replace("0x040000000000803F00000040", "0x040000000000803F"))
    assert main(["run", str(src)]) == 1
    err = capsys.readouterr().err
    assert "blob1" in err and "holds 4 bytes" in err and "needs 8" in err
    assert "Traceback" not in err
