"""JAX's pivots-to-permutation loop (jax_loops.py) run as its meaning gives what the loop run
op by op gives, for any loop values (pivots negative or past the end, counters near the i32
limits); a loop that differs from JAX's in one op runs op by op; iterations count against
max_steps as the while kernel counts them; a trace sees every op."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import stablehlo_ref
from stablehlo_ref.errors import LimitError
from stablehlo_ref.interpreter import control, jax_loops
from stablehlo_ref.limits import Limits
from stablehlo_ref.text import parse


def _program(n, edit=None):
    src = jax_loops._PIVOT_LOOP.replace("NN", str(n))
    if edit is not None:
        old, new = edit
        assert old in src
        src = src.replace(old, new, 1)
    return src


def _op_by_op(src, *args, **kw):
    saved = control.pivot_loop
    control.pivot_loop = lambda ctx, op: None
    try:
        return stablehlo_ref.run(parse(src), *args, **kw)
    finally:
        control.pivot_loop = saved


def _used(src):
    """Whether the known loop ran for the `while` of `src`'s @main."""
    seen = []
    saved = control.pivot_loop

    def spy(ctx, op):
        r = saved(ctx, op)
        seen.append(r is not None)
        return r
    control.pivot_loop = spy
    try:
        n = int(parse(src).functions["main"].regions[0].blocks[0].arguments[0].type.shape[0])
        z = np.zeros(n, np.int32)
        stablehlo_ref.run(parse(src), z, np.int32(0), np.int32(0), z)
    finally:
        control.pivot_loop = saved
    return any(seen)


def _same(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert np.asarray(x).dtype == np.asarray(y).dtype and np.shape(x) == np.shape(y)
        assert np.asarray(x).tobytes() == np.asarray(y).tobytes()


I32 = st.integers(-(1 << 31), (1 << 31) - 1)


@settings(max_examples=60, deadline=None)
@given(data=st.data(), n=st.integers(1, 9))
def test_pivot_loop_matches_the_loop_run_op_by_op(data, n):
    small = st.integers(-2 * n - 2, 2 * n + 2)
    swaps = np.array(data.draw(st.lists(st.one_of(small, I32), min_size=n, max_size=n)), np.int32)
    perm = np.array(data.draw(st.lists(st.one_of(small, I32), min_size=n, max_size=n)), np.int32)
    count = np.int32(data.draw(st.integers(-3, n + 1)))
    k = np.int32(data.draw(st.one_of(small, I32, st.sampled_from([(1 << 31) - 2, -(1 << 31)]))))
    src = _program(n)
    _same(stablehlo_ref.run(parse(src), swaps, count, k, perm), _op_by_op(src, swaps, count, k, perm))


@settings(max_examples=60, deadline=None)
@given(data=st.data(), n=st.integers(1, 12))
def test_pivot_loop_in_bounds_matches_the_loop_run_op_by_op(data, n):
    # LU's pivots: every swap index and every step's k within the matrix (the loop's
    # swap-only form), including steps already taken and a few more steps than that leaves
    swaps = np.array(data.draw(st.lists(st.integers(0, n - 1), min_size=n, max_size=n)), np.int32)
    perm = np.array(data.draw(st.permutations(range(n))), np.int32)
    count = data.draw(st.integers(0, n))
    k = np.int32(data.draw(st.integers(0, count + 1)))
    src = _program(n)
    _same(stablehlo_ref.run(parse(src), swaps, np.int32(count), k, perm),
          _op_by_op(src, swaps, np.int32(count), k, perm))


def test_pivot_loop_is_recognized_in_jax_form():
    assert _used(_program(32))
    assert _used(_program(1))



# the form jax.export writes: constants hoisted out of the loop and shared in the callee
HOISTED = """
func.func @main(%a0: tensor<4xi32>, %a1: tensor<i32>, %a2: tensor<i32>, %a3: tensor<4xi32>) -> (tensor<4xi32>, tensor<i32>, tensor<i32>, tensor<4xi32>) {
  %c = stablehlo.constant dense<4> : tensor<i32>
  %c_1 = stablehlo.constant dense<1> : tensor<i32>
    %10:4 = stablehlo.while(%iterArg = %a0, %iterArg_2 = %a1, %iterArg_3 = %a2, %iterArg_4 = %a3) : tensor<4xi32>, tensor<i32>, tensor<i32>, tensor<4xi32>
    cond {
      %14 = stablehlo.compare LT, %iterArg_2, %c, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %14 : tensor<i1>
    } do {
      %14:2 = func.call @closed_call(%iterArg, %iterArg_3, %iterArg_4) : (tensor<4xi32>, tensor<i32>, tensor<4xi32>) -> (tensor<i32>, tensor<4xi32>)
      %15 = stablehlo.add %iterArg_2, %c_1 : tensor<i32>
      stablehlo.return %iterArg, %15, %14#0, %14#1 : tensor<4xi32>, tensor<i32>, tensor<i32>, tensor<4xi32>
    }
  return %10#0, %10#1, %10#2, %10#3 : tensor<4xi32>, tensor<i32>, tensor<i32>, tensor<4xi32>
}
  func.func private @closed_call(%arg0: tensor<4xi32>, %arg1: tensor<i32>, %arg2: tensor<4xi32>) -> (tensor<i32>, tensor<4xi32>) {
    %c = stablehlo.constant dense<4> : tensor<i32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %c_1 = stablehlo.constant dense<1> : tensor<i32>
    %0 = stablehlo.add %arg1, %c_1 : tensor<i32>
    %1 = stablehlo.compare LT, %arg1, %c_0, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %2 = stablehlo.convert %arg1 : tensor<i32>
    %3 = stablehlo.add %2, %c : tensor<i32>
    %4 = stablehlo.select %1, %3, %arg1 : tensor<i1>, tensor<i32>
    %5 = stablehlo.dynamic_slice %arg0, %4, sizes = [1] : (tensor<4xi32>, tensor<i32>) -> tensor<1xi32>
    %6 = stablehlo.reshape %5 : (tensor<1xi32>) -> tensor<i32>
    %7 = stablehlo.compare LT, %arg1, %c_0, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %8 = stablehlo.convert %arg1 : tensor<i32>
    %9 = stablehlo.add %8, %c : tensor<i32>
    %10 = stablehlo.select %7, %9, %arg1 : tensor<i1>, tensor<i32>
    %11 = stablehlo.dynamic_slice %arg2, %10, sizes = [1] : (tensor<4xi32>, tensor<i32>) -> tensor<1xi32>
    %12 = stablehlo.reshape %11 : (tensor<1xi32>) -> tensor<i32>
    %13 = stablehlo.compare LT, %6, %c_0, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %14 = stablehlo.add %6, %c : tensor<i32>
    %15 = stablehlo.select %13, %14, %6 : tensor<i1>, tensor<i32>
    %16 = stablehlo.dynamic_slice %arg2, %15, sizes = [1] : (tensor<4xi32>, tensor<i32>) -> tensor<1xi32>
    %17 = stablehlo.reshape %16 : (tensor<1xi32>) -> tensor<i32>
    %18 = stablehlo.compare LT, %arg1, %c_0, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %19 = stablehlo.add %arg1, %c : tensor<i32>
    %20 = stablehlo.select %18, %19, %arg1 : tensor<i1>, tensor<i32>
    %21 = stablehlo.convert %20 : tensor<i32>
    %22 = stablehlo.broadcast_in_dim %21, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %23 = "stablehlo.scatter"(%arg2, %22, %17) <{indices_are_sorted = true, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0]>, unique_indices = true}> ({
    ^bb0(%arg3: tensor<i32>, %arg4: tensor<i32>):
      stablehlo.return %arg4 : tensor<i32>
    }) : (tensor<4xi32>, tensor<1xi32>, tensor<i32>) -> tensor<4xi32>
    %24 = stablehlo.compare LT, %6, %c_0, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %25 = stablehlo.add %6, %c : tensor<i32>
    %26 = stablehlo.select %24, %25, %6 : tensor<i1>, tensor<i32>
    %27 = stablehlo.broadcast_in_dim %26, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %28 = "stablehlo.scatter"(%23, %27, %12) <{indices_are_sorted = true, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0]>, unique_indices = true}> ({
    ^bb0(%arg3: tensor<i32>, %arg4: tensor<i32>):
      stablehlo.return %arg4 : tensor<i32>
    }) : (tensor<4xi32>, tensor<1xi32>, tensor<i32>) -> tensor<4xi32>
    return %0, %28 : tensor<i32>, tensor<4xi32>
  }
"""


@settings(max_examples=25, deadline=None)
@given(swaps=st.lists(st.integers(-10, 10), min_size=4, max_size=4),
       count=st.integers(-2, 5), k=st.integers(-6, 6))
def test_pivot_loop_with_hoisted_constants_is_recognized(swaps, count, k):
    assert _used(HOISTED)
    swaps = np.array(swaps, np.int32)
    perm = np.arange(4, dtype=np.int32)[::-1].copy()
    args = (swaps, np.int32(count), np.int32(k), perm)
    _same(stablehlo_ref.run(parse(HOISTED), *args), _op_by_op(HOISTED, *args))


@pytest.mark.parametrize("edit", [
    ("stablehlo.compare LT, %iterArg_3", "stablehlo.compare LE, %iterArg_3"),
    ("%c_1 = stablehlo.constant dense<5>", "%c_1 = stablehlo.constant dense<4>"),
    ("stablehlo.return %arg4 : tensor<i32>", "stablehlo.return %arg3 : tensor<i32>"),
    ("%23 = \"stablehlo.scatter\"(%arg2, %22, %17)", "%23 = \"stablehlo.scatter\"(%arg2, %22, %12)"),
    ("%c_6 = stablehlo.constant dense<1> : tensor<i32>", "%c_6 = stablehlo.constant dense<2> : tensor<i32>"),
])
def test_a_loop_that_differs_runs_op_by_op(edit):
    src = _program(5, edit)
    assert not _used(src)
    swaps = np.array([2, 4, -1, 3, 9], np.int32)
    perm = np.arange(5, dtype=np.int32)
    _same(stablehlo_ref.run(parse(src), swaps, np.int32(0), np.int32(0), perm),
          _op_by_op(src, swaps, np.int32(0), np.int32(0), perm))


def test_pivot_loop_counts_iterations_against_max_steps():
    src = _program(6)
    z = np.zeros(6, np.int32)
    limits = Limits(max_steps=4)
    with pytest.raises(LimitError) as known:
        stablehlo_ref.run(parse(src), z, np.int32(0), np.int32(0), z, limits=limits)
    with pytest.raises(LimitError) as general:
        _op_by_op(src, z, np.int32(0), np.int32(0), z, limits=limits)
    assert str(known.value) == str(general.value)
    stablehlo_ref.run(parse(src), z, np.int32(0), np.int32(0), z, limits=Limits(max_steps=6))


def test_pivot_loop_is_not_used_under_a_trace():
    src = _program(3)
    seen = []
    z = np.arange(3, dtype=np.int32)
    stablehlo_ref.run(parse(src), z, np.int32(0), np.int32(0), z, trace=lambda op, results: seen.append(op.name))
    assert seen.count("stablehlo.scatter") == 6


def test_a_hoisted_loop_with_another_constant_runs_op_by_op():
    src = HOISTED.replace("%c_1 = stablehlo.constant dense<1> : tensor<i32>\n  ", "%c_1 = stablehlo.constant dense<2> : tensor<i32>\n  ", 1)
    assert src != HOISTED
    assert not _used(src)


def test_pivot_loop_with_an_added_attribute_runs_op_by_op():
    # (jax_loops.same_loop compares the while op's attributes with the template's)
    from stablehlo_ref.ir.attributes import StringAttr
    module = parse(_program(4))
    loop = module.functions["main"].regions[0].blocks[0].operations[0]
    assert loop.name == "stablehlo.while"
    loop.attributes["tag"] = StringAttr("x")
    seen = []
    saved = control.pivot_loop

    def spy(ctx, op):
        r = saved(ctx, op)
        seen.append(r is not None)
        return r
    control.pivot_loop = spy
    try:
        z = np.array([2, 3, 3, 3], np.int32)
        p = np.arange(4, dtype=np.int32)
        got = stablehlo_ref.run(module, z, np.int32(0), np.int32(0), p)
    finally:
        control.pivot_loop = saved
    assert seen and not any(seen)
    _same(got, _op_by_op(_program(4), z, np.int32(0), np.int32(0), p))
    assert _used(_program(4))
