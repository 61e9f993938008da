"""chlo.scan, stablehlo.async_start/async_done and the legacy stablehlo.cross-replica-sum."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import stablehlo_ref
from stablehlo_ref.errors import StableHLOError


def run(src, *args):
    return stablehlo_ref.run(stablehlo_ref.parse(src), *args)


CUMSUM = """
func.func @main(%x: tensor<{n}x{m}xi32>, %c: tensor<{c}xi32>) -> (tensor<{n}x{m}xi32>, tensor<{c}xi32>) {{
  %0:2 = chlo.scan(%x) inits(%c) dimension={d} attributes {{is_reverse = {rev}}} {{
  ^bb0(%a: tensor<{c}xi32>, %b: tensor<{c}xi32>):
    %1 = stablehlo.add %a, %b : tensor<{c}xi32>
    stablehlo.return %1, %1 : tensor<{c}xi32>, tensor<{c}xi32>
  }} : (tensor<{n}x{m}xi32>, tensor<{c}xi32>) -> (tensor<{n}x{m}xi32>, tensor<{c}xi32>)
  return %0#0, %0#1 : tensor<{n}x{m}xi32>, tensor<{c}xi32>
}}
"""


def test_scan_cumsum_forward_and_reverse_by_hand():
    x = np.array([[1, 2, 3], [4, 5, 6]], np.int32)
    src = CUMSUM.format(n=2, m=3, c=2, d=1, rev="false")
    out, carry = run(src, x, np.array([10, 0], np.int32))
    assert out.tolist() == [[11, 13, 16], [4, 9, 15]]
    assert carry.tolist() == [16, 15]
    out, carry = run(CUMSUM.format(n=2, m=3, c=2, d=1, rev="true"), x, np.array([0, 100], np.int32))
    assert out.tolist() == [[6, 5, 3], [115, 111, 106]]
    assert carry.tolist() == [6, 115]
    out, carry = run(CUMSUM.format(n=2, m=3, c=3, d=0, rev="false"), x, np.zeros(3, np.int32))
    assert out.tolist() == [[1, 2, 3], [5, 7, 9]] and carry.tolist() == [5, 7, 9]


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 5), st.integers(1, 4), st.integers(0, 1), st.booleans(), st.data())
def test_scan_cumsum_matches_numpy(n, m, d, rev, data):
    x = np.array(data.draw(st.lists(st.integers(-1000, 1000), min_size=n * m, max_size=n * m)),
                 np.int32).reshape(n, m)
    c = m if d == 0 else n
    init = np.arange(c, dtype=np.int32)
    out, carry = run(CUMSUM.format(n=n, m=m, c=c, d=d, rev=str(rev).lower()), x, init)
    moved = np.flip(x, d) if rev else x
    expect = np.cumsum(moved, axis=d) + np.expand_dims(init, d)
    if rev:
        expect = np.flip(expect, d)
    assert out.tolist() == expect.tolist()
    assert carry.tolist() == (x.sum(axis=d) + init).tolist()


def test_scan_outputs_differ_from_carries_and_several_inputs():
    # running max with its position; the output is the pair, the carries the final pair
    src = """
func.func @main(%x: tensor<5xf32>, %i: tensor<5xi32>) -> (tensor<5xf32>, tensor<5xi32>, tensor<f32>, tensor<i32>) {
  %v0 = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %i0 = stablehlo.constant dense<-1> : tensor<i32>
  %0:4 = chlo.scan(%x, %i) inits(%v0, %i0) dimension=0 {
  ^bb0(%cv: tensor<f32>, %ci: tensor<i32>, %rv: tensor<f32>, %ri: tensor<i32>):
    %gt = stablehlo.compare GT, %cv, %rv : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %nv = stablehlo.select %gt, %cv, %rv : tensor<i1>, tensor<f32>
    %ni = stablehlo.select %gt, %ci, %ri : tensor<i1>, tensor<i32>
    stablehlo.return %nv, %ni, %nv, %ni : tensor<f32>, tensor<i32>, tensor<f32>, tensor<i32>
  } : (tensor<5xf32>, tensor<5xi32>, tensor<f32>, tensor<i32>) -> (tensor<5xf32>, tensor<5xi32>, tensor<f32>, tensor<i32>)
  return %0#0, %0#1, %0#2, %0#3 : tensor<5xf32>, tensor<5xi32>, tensor<f32>, tensor<i32>
}
"""
    v, i, fv, fi = run(src, np.array([2, 1, 7, 3, 9], np.float32), np.arange(5, dtype=np.int32))
    assert v.tolist() == [2, 2, 7, 7, 9] and i.tolist() == [0, 0, 2, 2, 4]
    assert float(fv) == 9 and int(fi) == 4


def test_scan_without_inputs_uses_scan_dim_size():
    # a counter: no inputs, the output at step k is the carry after k+1 increments
    src = """
func.func @main() -> (tensor<4xi64>, tensor<i64>) {
  %z = stablehlo.constant dense<0> : tensor<i64>
  %0:2 = chlo.scan() inits(%z) dimension=0 attributes {scan_dim_size = 4 : i64} {
  ^bb0(%c: tensor<i64>):
    %one = stablehlo.constant dense<1> : tensor<i64>
    %n = stablehlo.add %c, %one : tensor<i64>
    stablehlo.return %n, %n : tensor<i64>, tensor<i64>
  } : (tensor<i64>) -> (tensor<4xi64>, tensor<i64>)
  return %0#0, %0#1 : tensor<4xi64>, tensor<i64>
}
"""
    out, carry = run(src)
    assert out.tolist() == [1, 2, 3, 4] and int(carry) == 4


ASYNC = """
func.func @main(%x: tensor<4x3xf32>) -> tensor<2x3xf32> {
  %f = "stablehlo.async_start"(%x) ({
    %s = "stablehlo.slice"(%x) {start_indices = array<i64: 1, 0>, limit_indices = array<i64: 3, 3>, strides = array<i64: 1, 1>} : (tensor<4x3xf32>) -> tensor<2x3xf32>
    "stablehlo.return"(%s) : (tensor<2x3xf32>) -> ()
  }) : (tensor<4x3xf32>) -> !stablehlo.future<tensor<2x3xf32>>
  %r = "stablehlo.async_done"(%f) : (!stablehlo.future<tensor<2x3xf32>>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}
"""


def test_async_start_done_slice():
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    (r,) = run(ASYNC, x)
    assert r.tolist() == [[3, 4, 5], [6, 7, 8]]


def test_async_body_with_block_arguments_and_a_collective():
    src = """
func.func @prog(%x: tensor<2xi32>) -> tensor<4xi32> {
  %f = "stablehlo.async_start"(%x) ({
  ^bb0(%a: tensor<2xi32>):
    %g = "stablehlo.all_gather"(%a) {all_gather_dim = 0 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2xi32>) -> tensor<4xi32>
    "stablehlo.return"(%g) : (tensor<4xi32>) -> ()
  }) : (tensor<2xi32>) -> !stablehlo.future<tensor<4xi32>>
  %r = "stablehlo.async_done"(%f) : (!stablehlo.future<tensor<4xi32>>) -> tensor<4xi32>
  return %r : tensor<4xi32>
}
func.func @main(%a: tensor<2xi32>, %b: tensor<2xi32>) -> (tensor<4xi32>, tensor<4xi32>) {
  %r:2 = "interpreter.run_parallel"(%a, %b) {programs = [[@prog], [@prog]]}
    : (tensor<2xi32>, tensor<2xi32>) -> (tensor<4xi32>, tensor<4xi32>)
  return %r#0, %r#1 : tensor<4xi32>, tensor<4xi32>
}
"""
    g0, g1 = run(src, np.array([1, 2], np.int32), np.array([3, 4], np.int32))
    assert g0.tolist() == g1.tolist() == [1, 2, 3, 4]


CRS = """
func.func @prog(%x: tensor<2x{t}>) -> tensor<2x{t}> {{
  %r = "stablehlo.cross-replica-sum"(%x) {{replica_groups = dense<{groups}> : tensor<{gshape}xi64>}} : (tensor<2x{t}>) -> tensor<2x{t}>
  return %r : tensor<2x{t}>
}}
func.func @main(%a: tensor<2x{t}>, %b: tensor<2x{t}>, %c: tensor<2x{t}>, %d: tensor<2x{t}>) -> (tensor<2x{t}>, tensor<2x{t}>, tensor<2x{t}>, tensor<2x{t}>) {{
  %r:4 = "interpreter.run_parallel"(%a, %b, %c, %d) {{programs = [[@prog], [@prog], [@prog], [@prog]]}}
    : (tensor<2x{t}>, tensor<2x{t}>, tensor<2x{t}>, tensor<2x{t}>) -> (tensor<2x{t}>, tensor<2x{t}>, tensor<2x{t}>, tensor<2x{t}>)
  return %r#0, %r#1, %r#2, %r#3 : tensor<2x{t}>, tensor<2x{t}>, tensor<2x{t}>, tensor<2x{t}>
}}
"""


def test_cross_replica_sum_over_groups():
    xs = [np.array([1, 2], np.int32) * 10 ** k for k in range(4)]
    out = run(CRS.format(t="i32", groups="[[0, 2], [1, 3]]", gshape="2x2"), *xs)
    assert [o.tolist() for o in out] == [[101, 202], [1010, 2020], [101, 202], [1010, 2020]]
    out = run(CRS.format(t="i32", groups="[[0, 1, 2, 3]]", gshape="1x4"), *xs)
    assert all(o.tolist() == [1111, 2222] for o in out)


def test_cross_replica_sum_wraps_and_rounds_in_the_element_type():
    xs = [np.array([127, 1], np.int8), np.array([1, 2], np.int8)] * 2
    out = run(CRS.format(t="i8", groups="[[0, 1], [2, 3]]", gshape="2x2"), *xs)
    assert all(o.tolist() == [-128, 3] for o in out)
    import ml_dtypes
    bf = ml_dtypes.bfloat16
    xs = [np.array([1, 256], bf), np.array([2 ** -8, 1], bf)] * 2
    out = run(CRS.format(t="bf16", groups="[[0, 1], [2, 3]]", gshape="2x2"), *xs)
    # 1 + 2^-8 and 256 + 1 are not bf16 numbers: rounded to nearest even once
    assert all(o.astype(np.float32).tolist() == [1.0, 256.0] for o in out)


def test_cross_replica_sum_single_process():
    src = CRS.format(t="f32", groups="[[0]]", gshape="1x1").split("func.func @main")[0]
    src = src.replace("@prog", "@main")
    (r,) = run(src, np.array([1.5, -2], np.float32))
    assert r.tolist() == [1.5, -2]


def test_async_done_of_a_non_future_is_an_error():
    src = ASYNC.replace('"stablehlo.async_done"(%f)', '"stablehlo.async_done"(%x)')
    with pytest.raises(StableHLOError):
        run(src, np.zeros((4, 3), np.float32))
