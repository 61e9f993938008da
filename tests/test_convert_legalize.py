"""`convert`: CHLO legalized by default (note on stderr), the default target is the oldest
version that can carry the module, an unreachable target names the op and the version."""
import numpy as np

import stablehlo_ref as shlo
from stablehlo_ref.cli import main
from stablehlo_ref.serialization import artifact_version, deserialize

CHLO = """func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = chlo.square %x : tensor<4xf32> -> tensor<4xf32>
  %1 = chlo.erf %0 : tensor<4xf32> -> tensor<4xf32>
  %2 = chlo.square %1 : tensor<4xf32> -> tensor<4xf32>
  return %2 : tensor<4xf32>
}
"""
GATHER = """func.func @main(%x: tensor<4x3xf32>, %i: tensor<2x4x1xi32>) -> tensor<2x4xf32> {
  %0 = "stablehlo.gather"(%x, %i) <{dimension_numbers = #stablehlo.gather<offset_dims = [], collapsed_slice_dims = [1], operand_batching_dims = [0], start_indices_batching_dims = [1], start_index_map = [1], index_vector_dim = 2>, slice_sizes = array<i64: 1, 1>}> : (tensor<4x3xf32>, tensor<2x4x1xi32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}
"""


def test_chlo_is_legalized_with_a_note(tmp_path, capsys):
    src = tmp_path / "c.mlir"
    src.write_text(CHLO)
    out = tmp_path / "c.bc"
    assert main(["convert", str(src), "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert "legalized CHLO to StableHLO: chlo.erf, chlo.square x2" in err
    m = deserialize(out.read_bytes())
    assert not [o.name for o in m.walk() if o.name.startswith("chlo.")]
    x = np.array([0.1, -0.5, 1.5, 3.0], np.float32)
    want = shlo.run(shlo.parse(CHLO), x)[0]
    np.testing.assert_allclose(shlo.run(m, x)[0], want, rtol=1e-6, atol=1e-7)
    assert main(["convert", str(src), "-o", str(tmp_path / "k.bc"), "--no-legalize-chlo"]) == 1
    assert "chlo.square" in capsys.readouterr().err and not (tmp_path / "k.bc").exists()
    assert main(["convert", str(src), "-o", "-", "--emit", "text", "--legalize-chlo"]) == 0
    assert "chlo." not in capsys.readouterr().out


def test_default_target_is_the_oldest_that_carries_the_module(tmp_path, capsys):
    src = tmp_path / "g.mlir"
    src.write_text(GATHER)
    for extra in ([], ["--target", "minimum"]):
        out = tmp_path / "g.bc"
        assert main(["convert", str(src), "-o", str(out), *extra]) == 0
        assert "note: target 1.1.0" in capsys.readouterr().err
        assert artifact_version(out.read_bytes()) == "1.1.0"
    assert main(["convert", str(src), "-o", str(tmp_path / "old.bc"), "--target", "1.0.0"]) == 1
    err = capsys.readouterr().err
    assert "stablehlo.gather" in err and "1.1.0" in err and not (tmp_path / "old.bc").exists()
