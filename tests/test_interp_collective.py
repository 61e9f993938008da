"""The simulated process grid: interpreter.run_parallel with collectives, channels and feeds."""
import numpy as np
import pytest

import stablehlo_ref
from stablehlo_ref.errors import StableHLOError


def run(src, *args):
    return stablehlo_ref.run(stablehlo_ref.parse(src), *args)


def test_all_reduce_and_replica_ids_on_a_2x1_grid():
    src = """
func.func @prog(%x: tensor<3xi64>) -> (tensor<3xi64>, tensor<ui32>) {
  %r = "stablehlo.all_reduce"(%x) ({
    ^bb0(%a: tensor<i64>, %b: tensor<i64>):
      %s = stablehlo.add %a, %b : tensor<i64>
      stablehlo.return %s : tensor<i64>
  }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<3xi64>) -> tensor<3xi64>
  %id = stablehlo.replica_id : tensor<ui32>
  return %r, %id : tensor<3xi64>, tensor<ui32>
}
func.func @main(%a: tensor<3xi64>, %b: tensor<3xi64>) -> (tensor<3xi64>, tensor<ui32>, tensor<3xi64>, tensor<ui32>) {
  %r:4 = "interpreter.run_parallel"(%a, %b) {programs = [[@prog], [@prog]]}
    : (tensor<3xi64>, tensor<3xi64>) -> (tensor<3xi64>, tensor<ui32>, tensor<3xi64>, tensor<ui32>)
  return %r#0, %r#1, %r#2, %r#3 : tensor<3xi64>, tensor<ui32>, tensor<3xi64>, tensor<ui32>
}
"""
    a, b = np.array([1, 2, 3]), np.array([10, 20, 30])
    r0, i0, r1, i1 = run(src, a, b)
    assert r0.tolist() == r1.tolist() == [11, 22, 33]
    assert (int(i0), int(i1)) == (0, 1)


def test_all_gather_all_to_all_and_permute():
    src = """
func.func @prog(%x: tensor<2xi32>) -> (tensor<4xi32>, tensor<2xi32>, tensor<2xi32>) {
  %g = "stablehlo.all_gather"(%x) {all_gather_dim = 0 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2xi32>) -> tensor<4xi32>
  %t = "stablehlo.all_to_all"(%x) {split_dimension = 0 : i64, concat_dimension = 0 : i64, split_count = 2 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2xi32>) -> tensor<2xi32>
  %p = "stablehlo.collective_permute"(%x) {source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2xi32>) -> tensor<2xi32>
  return %g, %t, %p : tensor<4xi32>, tensor<2xi32>, tensor<2xi32>
}
func.func @main(%a: tensor<2xi32>, %b: tensor<2xi32>) -> (tensor<4xi32>, tensor<2xi32>, tensor<2xi32>, tensor<4xi32>, tensor<2xi32>, tensor<2xi32>) {
  %r:6 = "interpreter.run_parallel"(%a, %b) {programs = [[@prog], [@prog]]}
    : (tensor<2xi32>, tensor<2xi32>) -> (tensor<4xi32>, tensor<2xi32>, tensor<2xi32>, tensor<4xi32>, tensor<2xi32>, tensor<2xi32>)
  return %r#0, %r#1, %r#2, %r#3, %r#4, %r#5 : tensor<4xi32>, tensor<2xi32>, tensor<2xi32>, tensor<4xi32>, tensor<2xi32>, tensor<2xi32>
}
"""
    g0, t0, p0, g1, t1, p1 = run(src, np.array([1, 2], np.int32), np.array([3, 4], np.int32))
    assert g0.tolist() == g1.tolist() == [1, 2, 3, 4]
    assert t0.tolist() == [1, 3] and t1.tolist() == [2, 4]
    assert p0.tolist() == [0, 0] and p1.tolist() == [1, 2]


def test_single_process_defaults_and_missing_sender():
    src = """
func.func @main() -> (tensor<ui32>, tensor<2xi32>) {
  %id = stablehlo.partition_id : tensor<ui32>
  %tok = stablehlo.after_all : !stablehlo.token
  %d, %t = "stablehlo.recv"(%tok) {channel_handle = #stablehlo.channel_handle<handle = 1, type = 3>} : (!stablehlo.token) -> (tensor<2xi32>, !stablehlo.token)
  return %id, %d : tensor<ui32>, tensor<2xi32>
}
"""
    with pytest.raises(StableHLOError, match="recv"):
        run(src)


def test_a_process_that_skips_a_collective_is_reported():
    src = """
func.func @lonely(%x: tensor<i32>) -> tensor<i32> {
  %r = "stablehlo.all_gather"(%x) {all_gather_dim = 0 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<i32>) -> tensor<i32>
  return %r : tensor<i32>
}
func.func @idle(%x: tensor<i32>) -> tensor<i32> {
  return %x : tensor<i32>
}
func.func @main(%a: tensor<i32>) -> (tensor<i32>, tensor<i32>) {
  %r:2 = "interpreter.run_parallel"(%a, %a) {programs = [[@lonely], [@idle]]} : (tensor<i32>, tensor<i32>) -> (tensor<i32>, tensor<i32>)
  return %r#0, %r#1 : tensor<i32>, tensor<i32>
}
"""
    with pytest.raises(StableHLOError):
        run(src, np.array(1, np.int32))


def test_probe_records_iterations_and_writes_npy(tmp_path):
    from stablehlo_ref.interpreter import Interpreter
    src = """
func.func @main() {
  %a = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  %b = "interpreter.probe"(%a) {probe_id = "p/0"} : (tensor<2xi32>) -> tensor<2xi32>
  %c = stablehlo.add %b, %b : tensor<2xi32>
  %d = "interpreter.probe"(%c) {probe_id = "p/0"} : (tensor<2xi32>) -> tensor<2xi32>
  "check.expect_serialized_eq"(%c) {probe_id = "p/0", iteration = 1 : ui32} : (tensor<2xi32>) -> ()
  func.return
}
"""
    interp = Interpreter(stablehlo_ref.parse(src))
    interp.probe_dir = str(tmp_path)
    interp.call("main", [])
    assert np.load(tmp_path / "p_0_2.npy").tolist() == [2, 4]
    assert len((tmp_path / "index.csv").read_text().splitlines()) == 2


def test_collective_reduce_on_f8e8m0fnu_has_no_semantics():
    # non-root processes get zeros; f8E8M0FNU has no zero (its 0x00 pattern is 2^-127), so
    # the interpreter refuses rather than return that
    import ml_dtypes
    from stablehlo_ref.errors import NotImplementedOpError
    t = "tensor<2xf8E8M0FNU>"
    src = f"""
func.func @prog(%x: {t}) -> {t} {{
  %r = "stablehlo.collective_reduce"(%x) ({{
    ^bb0(%a: tensor<f8E8M0FNU>, %b: tensor<f8E8M0FNU>):
      %s = stablehlo.maximum %a, %b : tensor<f8E8M0FNU>
      stablehlo.return %s : tensor<f8E8M0FNU>
  }}) {{replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}} : ({t}) -> {t}
  return %r : {t}
}}
func.func @main(%a: {t}, %b: {t}) -> ({t}, {t}) {{
  %r:2 = "interpreter.run_parallel"(%a, %b) {{programs = [[@prog], [@prog]]}} : ({t}, {t}) -> ({t}, {t})
  return %r#0, %r#1 : {t}, {t}
}}
"""
    x = np.ones(2, ml_dtypes.float8_e8m0fnu)
    with pytest.raises(NotImplementedOpError, match="no semantics: f8E8M0FNU has no zero"):
        run(src, x, x)
