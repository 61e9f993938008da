"""A reduction body of a few elementwise ops (JAX's argmax/argmin, a complex min) runs by
its ops' kernels one after another instead of a region run per level of the tree: the bytes
must be those of the region run (which a trace forces)."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import stablehlo_ref
from stablehlo_ref.interpreter.reduction import _straight_body
from stablehlo_ref.text import parse

ARG = """
func.func @main(%x: tensor<@N@x@T@>) -> (tensor<@T@>, tensor<i32>) {
  %i = stablehlo.iota dim = 0 : tensor<@N@xi32>
  %init = stablehlo.constant dense<@INIT@> : tensor<@T@>
  %z = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = stablehlo.reduce(%x init: %init), (%i init: %z) across dimensions = [0] : (tensor<@N@x@T@>, tensor<@N@xi32>, tensor<@T@>, tensor<i32>) -> (tensor<@T@>, tensor<i32>)
   reducer(%a: tensor<@T@>, %b: tensor<@T@>) (%ia: tensor<i32>, %ib: tensor<i32>)  {
    %2 = stablehlo.compare  @DIR@, %a, %b,  @CT@ : (tensor<@T@>, tensor<@T@>) -> tensor<i1>
    %3 = stablehlo.compare  NE, %a, %a,  @CT@ : (tensor<@T@>, tensor<@T@>) -> tensor<i1>
    %4 = stablehlo.or %2, %3 : tensor<i1>
    %5 = stablehlo.compare  EQ, %a, %b,  @CT@ : (tensor<@T@>, tensor<@T@>) -> tensor<i1>
    %6 = stablehlo.compare  LT, %ia, %ib,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %7 = stablehlo.and %5, %6 : tensor<i1>
    %8 = stablehlo.or %4, %7 : tensor<i1>
    %9 = stablehlo.select %4, %a, %b : tensor<i1>, tensor<@T@>
    %10 = stablehlo.select %8, %ia, %ib : tensor<i1>, tensor<i32>
    stablehlo.return %9, %10 : tensor<@T@>, tensor<i32>
  }
  func.return %r#0, %r#1 : tensor<@T@>, tensor<i32>
}
"""

CMIN = """
func.func @main(%x: tensor<@N@x@M@xcomplex<f32>>) -> tensor<@M@xcomplex<f32>> {
  %init = stablehlo.constant dense<(0x7F800000,0.000000e+00)> : tensor<complex<f32>>
  %r = stablehlo.reduce(%x init: %init) across dimensions = [0] : (tensor<@N@x@M@xcomplex<f32>>, tensor<complex<f32>>) -> tensor<@M@xcomplex<f32>>
   reducer(%a: tensor<complex<f32>>, %b: tensor<complex<f32>>)  {
    %2 = stablehlo.real %a : (tensor<complex<f32>>) -> tensor<f32>
    %3 = stablehlo.real %b : (tensor<complex<f32>>) -> tensor<f32>
    %4 = stablehlo.compare  EQ, %2, %3,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %5 = stablehlo.compare  LT, %2, %3,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %6 = stablehlo.imag %a : (tensor<complex<f32>>) -> tensor<f32>
    %7 = stablehlo.imag %b : (tensor<complex<f32>>) -> tensor<f32>
    %8 = stablehlo.compare  LT, %6, %7,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %9 = stablehlo.select %4, %8, %5 : tensor<i1>, tensor<i1>
    %10 = stablehlo.select %9, %a, %b : tensor<i1>, tensor<complex<f32>>
    stablehlo.return %10 : tensor<complex<f32>>
  }
  func.return %r : tensor<@M@xcomplex<f32>>
}
"""

TYPES = {"f16": (np.float16, "FLOAT", "0xFC00"), "f32": (np.float32, "FLOAT", "0xFF800000"),
         "f64": (np.float64, "FLOAT", "0xFFF0000000000000"), "i32": (np.int32, "SIGNED", "-2147483648"),
         "ui64": (np.uint64, "UNSIGNED", "0"), "i8": (np.int8, "SIGNED", "127")}


def _fill(text, **kw):
    for k, v in kw.items():
        text = text.replace(f"@{k}@", v)
    assert "@N@" not in text and "@T@" not in text and "@M@" not in text
    return text


def _both(src, *args):
    """(the run, the run under a trace: the body as a region)"""
    fast = stablehlo_ref.run(parse(src), *args)
    seen = []
    traced = stablehlo_ref.run(parse(src), *args, trace=lambda op, results: seen.append(op.name))
    assert "stablehlo.select" in seen                    # the body ran as a region there
    return fast, traced


def _same(a, b):
    for x, y in zip(a, b):
        x, y = np.asarray(x), np.asarray(y)
        assert x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes()


def test_the_bodies_are_recognized():
    for src in (_fill(ARG, N="5", T="f32", INIT="0.0", DIR="GT", CT="FLOAT"),
                _fill(CMIN, N="3", M="2")):
        m = parse(src)
        red = [o for o in m.functions["main"].regions[0].blocks[0].operations
               if o.name == "stablehlo.reduce"][0]
        assert _straight_body(red.regions[0]) is not None


VALUES = st.sampled_from([0.0, -0.0, 1.0, -1.0, 2.5, np.nan, np.inf, -np.inf, 7.0, -300.0])


@settings(max_examples=80, deadline=None)
@given(data=st.data(), t=st.sampled_from(sorted(TYPES)), direction=st.sampled_from(["GT", "LT"]),
       n=st.integers(1, 19))
def test_arg_reductions_give_the_region_runs_bytes(data, t, direction, n):
    dt, ct, init = TYPES[t]
    if dt(0).dtype.kind == "f":
        x = np.array(data.draw(st.lists(VALUES, min_size=n, max_size=n)), dtype=dt)
    else:
        info = np.iinfo(dt)
        x = np.array(data.draw(st.lists(st.sampled_from([0, 1, 2, int(info.max), int(info.min)]),
                                        min_size=n, max_size=n)), dtype=dt)
    src = _fill(ARG, N=str(n), T=t, INIT=init, DIR=direction, CT=ct)
    _same(*_both(src, x))


@settings(max_examples=40, deadline=None)
@given(data=st.data(), n=st.integers(1, 9), m=st.integers(1, 3))
def test_complex_min_gives_the_region_runs_bytes(data, n, m):
    parts = data.draw(st.lists(st.tuples(VALUES, VALUES), min_size=n * m, max_size=n * m))
    x = np.array([complex(a, b) for a, b in parts], dtype=np.complex64).reshape(n, m)
    src = _fill(CMIN, N=str(n), M=str(m))
    _same(*_both(src, x))


SORT = """
func.func @main(%a: tensor<@N@xi32>, %b: tensor<@N@xf32>) -> (tensor<@N@xi32>, tensor<@N@xf32>) {
  %r:2 = "stablehlo.sort"(%a, %b) <{dimension = 0 : i64, is_stable = true}> ({
  ^bb0(%arg0: tensor<i32>, %arg1: tensor<i32>, %arg4: tensor<f32>, %arg5: tensor<f32>):
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %3 = stablehlo.compare  EQ, %arg4, %cst,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %4 = stablehlo.select %3, %cst, %arg4 : tensor<i1>, tensor<f32>
    %5 = stablehlo.compare  NE, %arg4, %arg4,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %cst_1 = stablehlo.constant dense<0x7FC00000> : tensor<f32>
    %6 = stablehlo.select %5, %cst_1, %4 : tensor<i1>, tensor<f32>
    %7 = stablehlo.compare  EQ, %arg5, %cst,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %8 = stablehlo.select %7, %cst, %arg5 : tensor<i1>, tensor<f32>
    %9 = stablehlo.compare  NE, %arg5, %arg5,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %10 = stablehlo.select %9, %cst_1, %8 : tensor<i1>, tensor<f32>
    %11 = stablehlo.compare  @DIR@, %6, %10,  TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %16 = stablehlo.compare  LT, %arg0, %arg1,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %17 = stablehlo.compare  EQ, %arg0, %arg1,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %18 = stablehlo.and %17, %11 : tensor<i1>
    %19 = stablehlo.or %16, %18 : tensor<i1>
    stablehlo.return %19 : tensor<i1>
  }) : (tensor<@N@xi32>, tensor<@N@xf32>) -> (tensor<@N@xi32>, tensor<@N@xf32>)
  func.return %r#0, %r#1 : tensor<@N@xi32>, tensor<@N@xf32>
}
"""


@settings(max_examples=60, deadline=None)
@given(data=st.data(), n=st.integers(2, 40), direction=st.sampled_from(["LT", "GT"]))
def test_sort_comparator_with_constants_gives_the_region_runs_bytes(data, n, direction):
    # a comparator with constants (JAX's canonicalizing float compare) runs straight too;
    # as jax writes it (lexicographic), the keys `sorting` reads off it give the same bytes
    # as the region run
    from stablehlo_ref.interpreter import sorting
    a = np.array(data.draw(st.lists(st.integers(-2, 2), min_size=n, max_size=n)), np.int32)
    b = np.array(data.draw(st.lists(VALUES, min_size=n, max_size=n)), np.float32)
    src = _fill(SORT, N=str(n), DIR=direction)
    m = parse(src)
    sort_op = m.functions["main"].regions[0].blocks[0].operations[0]
    assert _straight_body(sort_op.regions[0]) is not None
    assert sorting._recognize_lexicographic(sort_op.regions[0], 2) is not None
    by_keys = stablehlo_ref.run(parse(src), a, b)
    recognize = sorting._recognize_lexicographic
    sorting._recognize_lexicographic = lambda region, n: None
    try:
        _same(by_keys, _both(src, a, b)[0])
        _same(*_both(src, a, b))
    finally:
        sorting._recognize_lexicographic = recognize


SAS = """
func.func @main(%x: tensor<2x4x6x@T@>, %s: tensor<1x3x5x@T@>) -> tensor<2x4x6x@T@> {
  %init = stablehlo.constant dense<@ZERO@> : tensor<@T@>
  %r = "stablehlo.select_and_scatter"(%x, %s, %init) <{window_dimensions = array<i64: 2, 2, 2>}> ({
  ^bb0(%arg0: tensor<@T@>, %arg1: tensor<@T@>):
    %5 = stablehlo.compare  @DIR@, %arg0, %arg1,  @CT@ : (tensor<@T@>, tensor<@T@>) -> tensor<i1>
    stablehlo.return %5 : tensor<i1>
  }, {
  ^bb0(%arg0: tensor<@T@>, %arg1: tensor<@T@>):
    %5 = stablehlo.add %arg0, %arg1 : tensor<@T@>
    stablehlo.return %5 : tensor<@T@>
  }) : (tensor<2x4x6x@T@>, tensor<1x3x5x@T@>, tensor<@T@>) -> tensor<2x4x6x@T@>
  func.return %r : tensor<2x4x6x@T@>
}
"""


@settings(max_examples=40, deadline=None)
@given(data=st.data(), t=st.sampled_from(["f32", "i32"]), direction=st.sampled_from(["GE", "LT"]))
def test_select_and_scatter_select_gives_the_region_runs_bytes(data, t, direction):
    dt, ct, _ = TYPES[t]
    x = np.array(data.draw(st.lists(st.sampled_from([0, 1, -1, 3]), min_size=48, max_size=48)),
                 dtype=dt).reshape(2, 4, 6)
    if dt(0).dtype.kind == "f":
        x.reshape(-1)[data.draw(st.integers(0, 47))] = np.nan
    s = np.arange(15, dtype=dt).reshape(1, 3, 5)
    src = _fill(SAS, T=t, DIR=direction, CT=ct, ZERO="0.0" if t == "f32" else "0")
    fast = stablehlo_ref.run(parse(src), x, s)
    seen = []
    traced = stablehlo_ref.run(parse(src), x, s, trace=lambda op, results: seen.append(op.name))
    assert "stablehlo.compare" in seen
    _same(fast, traced)
