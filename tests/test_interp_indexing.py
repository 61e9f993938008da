"""Interpreter kernels for indexing, sorting and windows (gather, scatter, sort, top_k,
reduce_window, select_and_scatter, map) and regions that read values from enclosing scopes,
checked on small hand-worked examples and against numpy oracles with hypothesis."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import stablehlo_ref
from stablehlo_ref.interpreter.sorting import (_verified_candidate, merge_sort_permutation,
                                               total_order_key)
from stablehlo_ref.ir.types import element_type


def _ty(shape, et):
    return f"tensor<{'x'.join(map(str, shape))}{'x' if shape else ''}{et}>"


def run_op(body: str, args, arg_types, result_types):
    """Run `body` (which defines %r, or %r0, %r1...) inside @main(args) -> results."""
    params = ", ".join(f"%a{i}: {t}" for i, t in enumerate(arg_types))
    n = len(result_types)
    rets = "%r" if n == 1 else ", ".join(f"%r{i}" for i in range(n))
    src = (f"func.func @main({params}) -> ({', '.join(result_types)}) {{\n{body}\n"
           f"  func.return {rets} : {', '.join(result_types)}\n}}\n")
    out = stablehlo_ref.run(stablehlo_ref.parse(src), *args)
    return out[0] if n == 1 else out


# ------------------------------------------------------------------ gather

def gather(operand, indices, dims, slice_sizes, result_shape):
    ot, it = _ty(operand.shape, "i32"), _ty(indices.shape, "i64")
    rt = _ty(result_shape, "i32")
    body = (f'  %r = "stablehlo.gather"(%a0, %a1) <{{dimension_numbers = #stablehlo.gather<{dims}>, '
            f'slice_sizes = array<i64: {", ".join(map(str, slice_sizes))}>}}> : ({ot}, {it}) -> {rt}')
    return run_op(body, [operand, indices], [ot, it], [rt])


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 5), st.integers(1, 4), st.lists(st.integers(-3, 8), min_size=1, max_size=6))
def test_gather_rows_matches_take_with_clamping(a, b, idx):
    operand = np.arange(a * b, dtype=np.int32).reshape(a, b)
    indices = np.array(idx, dtype=np.int64).reshape(-1, 1)
    out = gather(operand, indices, "offset_dims = [1], collapsed_slice_dims = [0], "
                 "start_index_map = [0], index_vector_dim = 1", [1, b], (len(idx), b))
    np.testing.assert_array_equal(out, operand[np.clip(indices[:, 0], 0, a - 1)])


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 5), st.integers(1, 5), st.lists(st.tuples(st.integers(-2, 7), st.integers(-2, 7)),
                                                      min_size=1, max_size=5))
def test_gather_points_matches_fancy_indexing(a, b, pts):
    operand = (np.arange(a * b, dtype=np.int32) * 7).reshape(a, b)
    indices = np.array(pts, dtype=np.int64)
    out = gather(operand, indices, "collapsed_slice_dims = [0, 1], start_index_map = [0, 1], "
                 "index_vector_dim = 1", [1, 1], (len(pts),))
    want = operand[np.clip(indices[:, 0], 0, a - 1), np.clip(indices[:, 1], 0, b - 1)]
    np.testing.assert_array_equal(out, want)


def test_gather_window_start_is_clamped_so_the_slice_fits():
    operand = np.arange(12, dtype=np.int32).reshape(4, 3)
    indices = np.array([[3], [-1], [1]], dtype=np.int64)
    out = gather(operand, indices, "offset_dims = [1, 2], start_index_map = [0], index_vector_dim = 1",
                 [2, 3], (3, 2, 3))
    np.testing.assert_array_equal(out, np.stack([operand[2:4], operand[0:2], operand[1:3]]))


def test_gather_with_batching_dims():
    operand = np.array([[10, 11, 12], [20, 21, 22]], dtype=np.int32)
    indices = np.array([[2], [0]], dtype=np.int64)
    out = gather(operand, indices, "collapsed_slice_dims = [1], operand_batching_dims = [0], "
                 "start_indices_batching_dims = [0], start_index_map = [1], index_vector_dim = 1",
                 [1, 1], (2,))
    np.testing.assert_array_equal(out, [12, 20])


def test_torch_index_select_matches_take():
    operand = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    index = np.array([3, 0, 0], dtype=np.int32)
    body = ('  %r = "stablehlo.torch_index_select"(%a0, %a1) {dim = 2 : i64, batch_dims = 0 : i64} : '
            '(tensor<2x3x4xi32>, tensor<3xi32>) -> tensor<2x3x3xi32>')
    out = run_op(body, [operand, index], ["tensor<2x3x4xi32>", "tensor<3xi32>"], ["tensor<2x3x3xi32>"])
    np.testing.assert_array_equal(out, np.take(operand, index, axis=2))


# ------------------------------------------------------------------ scatter

def scatter(inp, indices, updates, dims, body_ops, et="i32"):
    it, xt, ut = _ty(inp.shape, et), _ty(indices.shape, "i64"), _ty(updates.shape, et)
    body = (f'  %r = "stablehlo.scatter"(%a0, %a1, %a2) ({{\n'
            f'  ^bb0(%x: tensor<{et}>, %u: tensor<{et}>):\n{body_ops}\n'
            f'  }}) {{scatter_dimension_numbers = #stablehlo.scatter<{dims}>}} : ({it}, {xt}, {ut}) -> {it}')
    return run_op(body, [inp, indices, updates], [it, xt, ut], [it])


POINT_DIMS = "inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1"
ADD = "    %s = stablehlo.add %x, %u : tensor<i32>\n    stablehlo.return %s : tensor<i32>"


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 6), st.lists(st.tuples(st.integers(-2, 8), st.integers(-50, 50)), max_size=12))
def test_scatter_add_matches_add_at_and_skips_out_of_bounds(n, ups):
    inp = np.arange(n, dtype=np.int32)
    idx = np.array([i for i, _ in ups], dtype=np.int64).reshape(-1, 1)
    upd = np.array([u for _, u in ups], dtype=np.int32)
    out = scatter(inp, idx, upd, POINT_DIMS, ADD)
    want = inp.copy()
    ok = (idx[:, 0] >= 0) & (idx[:, 0] < n)
    np.add.at(want, idx[ok, 0], upd[ok])
    np.testing.assert_array_equal(out, want)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 5), st.lists(st.tuples(st.integers(0, 4), st.integers(-9, 9)), max_size=10))
def test_scatter_general_body_applies_updates_in_order(n, ups):
    # x * 2 - u is neither commutative nor associative: the rounds must keep update order
    inp = np.arange(n, dtype=np.int32) + 1
    ups = [(i % n, u) for i, u in ups]
    idx = np.array([i for i, _ in ups], dtype=np.int64).reshape(-1, 1)
    upd = np.array([u for _, u in ups], dtype=np.int32)
    body = ("    %two = stablehlo.constant dense<2> : tensor<i32>\n"
            "    %m = stablehlo.multiply %x, %two : tensor<i32>\n"
            "    %s = stablehlo.subtract %m, %u : tensor<i32>\n    stablehlo.return %s : tensor<i32>")
    out = scatter(inp, idx, upd, POINT_DIMS, body)
    want = inp.copy()
    for i, u in ups:
        want[i] = want[i] * 2 - u
    np.testing.assert_array_equal(out, want)


def test_scatter_replace_windows():
    inp = np.zeros((3, 4), dtype=np.int32)
    idx = np.array([[2], [0]], dtype=np.int64)
    upd = np.array([[1, 2, 3, 4], [5, 6, 7, 8]], dtype=np.int32)
    out = scatter(inp, idx, upd, "update_window_dims = [1], " + POINT_DIMS, "    stablehlo.return %u : tensor<i32>")
    np.testing.assert_array_equal(out, [[5, 6, 7, 8], [0, 0, 0, 0], [1, 2, 3, 4]])


def test_scatter_out_of_bounds_window_elements_are_skipped():
    inp = np.zeros((2, 4), dtype=np.int32)
    idx = np.array([[1, 3]], dtype=np.int64)          # a 1x2 window starting at column 3
    upd = np.array([[7, 9]], dtype=np.int32)
    out = scatter(inp, idx, upd, "update_window_dims = [1], inserted_window_dims = [0], "
                  "scatter_dims_to_operand_dims = [0, 1], index_vector_dim = 1", ADD)
    np.testing.assert_array_equal(out, [[0, 0, 0, 0], [0, 0, 0, 7]])


def test_scatter_float_add_rounds_each_step():
    inp = np.array([1.0], dtype=np.float16)
    idx = np.zeros((4, 1), dtype=np.int64)
    upd = np.full(4, 2.0 ** -11, dtype=np.float16)   # each half an ulp of 1.0: ties to even
    body = "    %s = stablehlo.add %x, %u : tensor<f16>\n    stablehlo.return %s : tensor<f16>"
    out = scatter(inp, idx, upd, POINT_DIMS, body, et="f16")
    assert out[0] == np.float16(1.0)


# ------------------------------------------------------------------ sort / top_k

def sort1(x, direction="LT", ctype="SIGNED", et="i32", stable=True):
    t = _ty(x.shape, et)
    body = (f'  %r = "stablehlo.sort"(%a0) ({{\n  ^bb0(%p: tensor<{et}>, %q: tensor<{et}>):\n'
            f'    %c = stablehlo.compare {direction}, %p, %q, {ctype} : (tensor<{et}>, tensor<{et}>) -> tensor<i1>\n'
            f'    stablehlo.return %c : tensor<i1>\n  }}) {{dimension = 0 : i64, is_stable = {str(stable).lower()}}}'
            f' : ({t}) -> {t}')
    return run_op(body, [x], [t], [t])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(-100, 100), min_size=1, max_size=40))
def test_sort_matches_numpy(xs):
    x = np.array(xs, dtype=np.int32)
    np.testing.assert_array_equal(sort1(x), np.sort(x, kind="stable"))
    np.testing.assert_array_equal(sort1(x, "GT"), np.sort(x)[::-1])


def test_sort_float_totalorder():
    x = np.array([0.0, -0.0, np.nan, -np.inf, 1.0, -np.nan], dtype=np.float32)
    out = sort1(x, ctype="TOTALORDER", et="f32")
    assert np.isnan(out[0]) and np.signbit(out[0])
    np.testing.assert_array_equal(out[1:3], [-np.inf, 0.0])
    assert np.signbit(out[2]) and not np.signbit(out[3])
    assert out[4] == 1.0 and np.isnan(out[5]) and not np.signbit(out[5])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), min_size=1, max_size=30))
def test_sort_general_comparator_is_a_stable_lexicographic_sort(pairs):
    k0 = np.array([p[0] for p in pairs], dtype=np.int32)
    k1 = np.array([p[1] for p in pairs], dtype=np.int32)
    pos = np.arange(len(pairs), dtype=np.int32)
    t = _ty(k0.shape, "i32")
    s = "tensor<i32>"
    body = (f'  %r0, %r1, %r2 = "stablehlo.sort"(%a0, %a1, %a2) ({{\n'
            f'  ^bb0(%p0: {s}, %q0: {s}, %p1: {s}, %q1: {s}, %p2: {s}, %q2: {s}):\n'
            f'    %lt0 = stablehlo.compare LT, %p0, %q0, SIGNED : ({s}, {s}) -> tensor<i1>\n'
            f'    %eq0 = stablehlo.compare EQ, %p0, %q0, SIGNED : ({s}, {s}) -> tensor<i1>\n'
            f'    %gt1 = stablehlo.compare GT, %p1, %q1, SIGNED : ({s}, {s}) -> tensor<i1>\n'
            f'    %and = stablehlo.and %eq0, %gt1 : tensor<i1>\n'
            f'    %or = stablehlo.or %lt0, %and : tensor<i1>\n'
            f'    stablehlo.return %or : tensor<i1>\n  }}) {{dimension = 0 : i64, is_stable = true}}'
            f' : ({t}, {t}, {t}) -> ({t}, {t}, {t})')
    o0, o1, o2 = run_op(body, [k0, k1, pos], [t] * 3, [t] * 3)
    order = np.lexsort((pos, -k1.astype(np.int64), k0))
    np.testing.assert_array_equal(o2, pos[order])
    np.testing.assert_array_equal(o0, k0[order])
    np.testing.assert_array_equal(o1, k1[order])


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 4), st.lists(st.integers(0, 5), min_size=1, max_size=33))
def test_merge_sort_permutation_is_stable_argsort(rows, xs):
    x = np.array(xs * rows, dtype=np.int64).reshape(rows, -1)
    x = (x + np.arange(rows)[:, None]) % 4
    perm = merge_sort_permutation(lambda a, b: a[0] < b[0], [x])
    np.testing.assert_array_equal(perm, np.argsort(x, axis=1, kind="stable"))


def _jax_complex_less(lhs, rhs):
    """JAX's comparator for a sort of complex numbers: real then imaginary parts, each with
    -0 made +0 and every NaN the canonical one, compared in total order."""
    def key(v):
        v = np.where(v == 0, 0.0, v)
        return total_order_key(np.where(v != v, np.nan, v))
    (a,), (b,) = lhs, rhs
    ra, rb, ia, ib = key(a.real), key(b.real), key(a.imag), key(b.imag)
    return (ra < rb) | ((ra == rb) & (ia < ib))


_PARTS = st.sampled_from([0.0, -0.0, 1.0, -1.0, 2.5, np.nan, np.inf, -np.inf])


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 3), st.lists(st.tuples(_PARTS, _PARTS), min_size=2, max_size=20),
       st.sampled_from(["complex<f64>", "complex<f32>"]))
def test_complex_sort_by_verified_keys_is_the_merge_sort(rows, parts, ty):
    # a complex comparator's order is found as the stable sort on (real, imaginary) keys
    # (verified by the comparator) instead of the merge sort's many comparator calls; the
    # permutation is the merge sort's
    et = element_type(ty)
    row = np.array([complex(r, i) for r, i in parts], dtype=et.dtype)
    x = np.stack([np.roll(row, k) for k in range(rows)])
    found = _verified_candidate(_jax_complex_less, [x], [et])
    assert found is not None
    perm, (sorted_,) = found
    expect = merge_sort_permutation(_jax_complex_less, [x])
    np.testing.assert_array_equal(perm, expect)
    np.testing.assert_array_equal(sorted_.view(np.uint8),
                                  np.take_along_axis(x, expect, axis=1).view(np.uint8))


def test_total_order_key_orders_signed_zeros_and_nans():
    x = np.array([np.nan, 0.0, -0.0, -np.nan, np.inf, -1.0])
    order = np.argsort(total_order_key(x), kind="stable")
    got = x[order]
    assert np.isnan(got[0]) and np.signbit(got[0])
    assert got[1] == -1.0 and np.signbit(got[2]) and not np.signbit(got[3])
    assert got[4] == np.inf and np.isnan(got[5])


def test_top_k():
    x = np.array([[3, 1, 3, 7, 0], [5, 5, 5, 1, 9]], dtype=np.int32)
    body = "  %r0, %r1 = chlo.top_k(%a0, k = 3) : tensor<2x5xi32> -> (tensor<2x3xi32>, tensor<2x3xi32>)"
    v, i = run_op(body, [x], ["tensor<2x5xi32>"], ["tensor<2x3xi32>", "tensor<2x3xi32>"])
    np.testing.assert_array_equal(v, [[7, 3, 3], [9, 5, 5]])
    np.testing.assert_array_equal(i, [[3, 0, 2], [4, 0, 1]])


# ------------------------------------------------------------------ windows

def naive_reduce_window(x, init, fn, window, strides, base, wdil, padding):
    core = [(n - 1) * b + 1 for n, b in zip(x.shape, base)]
    full = np.full([c + lo + hi for c, (lo, hi) in zip(core, padding)], init, dtype=x.dtype)
    full[tuple(slice(lo, lo + c, b) for c, (lo, _), b in zip(core, padding, base))] = x
    eff = [(w - 1) * d + 1 for w, d in zip(window, wdil)]
    out_shape = [max((n - e) // s + 1, 0) if n >= e else 0 for n, e, s in zip(full.shape, eff, strides)]
    out = np.empty(out_shape, dtype=x.dtype)
    for ix in np.ndindex(*out_shape):
        win = full[tuple(slice(i * s, i * s + e, d) for i, s, e, d in zip(ix, strides, eff, wdil))]
        acc = init
        for v in win.reshape(-1):
            acc = fn(acc, v)
        out[ix] = acc
    return out


def reduce_window(x, init, window, strides, base, wdil, padding, body_ops):
    t = _ty(x.shape, "i32")
    pad = ", ".join(f"[{lo}, {hi}]" for lo, hi in padding)
    ref = naive_reduce_window(x, init, lambda a, b: a + b, window, strides, base, wdil, padding)
    rt = _ty(ref.shape, "i32")
    arr = lambda v: ", ".join(map(str, v))  # noqa: E731
    body = (f'  %r = "stablehlo.reduce_window"(%a0, %a1) ({{\n  ^bb0(%p: tensor<i32>, %q: tensor<i32>):\n'
            f'{body_ops}\n  }}) {{window_dimensions = array<i64: {arr(window)}>, '
            f'window_strides = array<i64: {arr(strides)}>, base_dilations = array<i64: {arr(base)}>, '
            f'window_dilations = array<i64: {arr(wdil)}>, padding = dense<[{pad}]> : tensor<{len(padding)}x2xi64>}}'
            f' : ({t}, tensor<i32>) -> {rt}')
    return run_op(body, [x, np.array(init, dtype=np.int32)], [t, "tensor<i32>"], [rt]), ref


dims2 = st.tuples(st.integers(1, 3), st.integers(1, 3))


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 5), st.integers(1, 5), dims2, dims2, dims2, dims2,
       st.tuples(st.tuples(st.integers(0, 2), st.integers(0, 2)), st.tuples(st.integers(0, 2), st.integers(0, 2))),
       st.booleans())
def test_reduce_window_sum_matches_naive(a, b, window, strides, base, wdil, padding, general):
    x = np.arange(a * b, dtype=np.int32).reshape(a, b)
    if general:   # a body the primitive path does not recognise: p + q + 0
        ops = ("    %z = stablehlo.constant dense<0> : tensor<i32>\n    %s = stablehlo.add %p, %q : tensor<i32>\n"
               "    %t = stablehlo.add %s, %z : tensor<i32>\n    stablehlo.return %t : tensor<i32>")
    else:
        ops = "    %s = stablehlo.add %p, %q : tensor<i32>\n    stablehlo.return %s : tensor<i32>"
    got, want = reduce_window(x, 1, window, strides, base, wdil, padding, ops)
    np.testing.assert_array_equal(got, want)


def test_select_and_scatter_max_pool_gradient():
    operand = np.array([[1, 5, 2], [3, 4, 9], [8, 0, 6], [2, 7, 7]], dtype=np.int32)
    source = np.array([[10, 20], [30, 40]], dtype=np.int32)
    s = "tensor<i32>"
    body = (f'  %r = "stablehlo.select_and_scatter"(%a0, %a1, %a2) ({{\n  ^bb0(%p: {s}, %q: {s}):\n'
            f'    %c = stablehlo.compare GE, %p, %q : ({s}, {s}) -> tensor<i1>\n    stablehlo.return %c : tensor<i1>\n'
            f'  }}, {{\n  ^bb0(%p: {s}, %q: {s}):\n    %c = stablehlo.add %p, %q : {s}\n    stablehlo.return %c : {s}\n'
            f'  }}) {{window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 1>}} : '
            f'(tensor<4x3xi32>, tensor<2x2xi32>, {s}) -> tensor<4x3xi32>')
    out = run_op(body, [operand, source, np.array(0, np.int32)],
                 ["tensor<4x3xi32>", "tensor<2x2xi32>", s], ["tensor<4x3xi32>"])
    # windows: rows 0-1 cols 0-1 -> 5 at (0,1); cols 1-2 -> 9 at (1,2);
    # rows 2-3 cols 0-1 -> 8 at (2,0); cols 1-2 -> 7 at (3,1) (first of the ties)
    want = np.zeros((4, 3), np.int32)
    want[0, 1], want[1, 2], want[2, 0], want[3, 1] = 10, 20, 30, 40
    np.testing.assert_array_equal(out, want)


def test_map():
    x = np.array([1, 2, 3], dtype=np.int32)
    y = np.array([4, 5, 6], dtype=np.int32)
    s = "tensor<i32>"
    body = (f'  %r = "stablehlo.map"(%a0, %a1) ({{\n  ^bb0(%p: {s}, %q: {s}):\n'
            f'    %m = stablehlo.multiply %p, %q : {s}\n    stablehlo.return %m : {s}\n'
            f'  }}) {{dimensions = array<i64: 0>}} : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>')
    out = run_op(body, [x, y], ["tensor<3xi32>"] * 2, ["tensor<3xi32>"])
    np.testing.assert_array_equal(out, x * y)


# ------------------------------------------------------------------ scopes and tuples

@pytest.mark.parametrize("pred,want", [(True, 11), (False, 7)])
def test_if_branches_read_enclosing_values(pred, want):
    s = "tensor<i32>"
    body = (f'  %c = stablehlo.constant dense<10> : {s}\n'
            f'  %r = "stablehlo.if"(%a0) ({{\n    %x = stablehlo.add %c, %a1 : {s}\n    stablehlo.return %x : {s}\n'
            f'  }}, {{\n    stablehlo.return %a2 : {s}\n  }}) : (tensor<i1>) -> {s}')
    out = run_op(body, [np.array(pred), np.array(1, np.int32), np.array(7, np.int32)],
                 ["tensor<i1>", s, s], [s])
    assert int(out) == want


def test_while_body_reads_enclosing_values():
    s = "tensor<i32>"
    body = (f'  %one = stablehlo.constant dense<1> : {s}\n'
            f'  %r = "stablehlo.while"(%a0) ({{\n  ^bb0(%i: {s}):\n'
            f'    %c = stablehlo.compare LT, %i, %a1 : ({s}, {s}) -> tensor<i1>\n    stablehlo.return %c : tensor<i1>\n'
            f'  }}, {{\n  ^bb0(%i: {s}):\n    %n = stablehlo.add %i, %one : {s}\n    stablehlo.return %n : {s}\n'
            f'  }}) : ({s}) -> {s}')
    out = run_op(body, [np.array(0, np.int32), np.array(5, np.int32)], [s, s], [s])
    assert int(out) == 5


def test_nested_tuples():
    s = "tensor<i32>"
    body = (f'  %t1 = stablehlo.tuple %a0 : tuple<{s}>\n'
            f'  %t2 = stablehlo.tuple %a1, %t1 : tuple<{s}, tuple<{s}>>\n'
            f'  %g = stablehlo.get_tuple_element %t2[1] : (tuple<{s}, tuple<{s}>>) -> tuple<{s}>\n'
            f'  %r = stablehlo.get_tuple_element %g[0] : (tuple<{s}>) -> {s}')
    out = run_op(body, [np.array(3, np.int32), np.array(4, np.int32)], [s, s], [s])
    assert int(out) == 3


# scatter_targets against the spec's per-element definition: (input shape, indices shape,
# updates shape, dimension numbers), windows partly out of bounds, batching dims, index
# vectors on a leading axis or implicit
_TARGET_CASES = [
    ((4, 5), (3, 1), (3, 5), dict(update_window_dims=[1], inserted_window_dims=[0],
                                  scatter_dims_to_operand_dims=[0], index_vector_dim=1)),
    ((4, 5), (2, 2), (2, 2, 3), dict(update_window_dims=[1, 2], inserted_window_dims=[],
                                     scatter_dims_to_operand_dims=[0, 1], index_vector_dim=1)),
    ((4, 5), (2, 3), (3,), dict(update_window_dims=[], inserted_window_dims=[0, 1],
                                scatter_dims_to_operand_dims=[1, 0], index_vector_dim=0)),
    ((2, 4, 3), (2, 2, 1), (2, 2, 3), dict(update_window_dims=[2], inserted_window_dims=[1],
                                           input_batching_dims=[0], scatter_indices_batching_dims=[0],
                                           scatter_dims_to_operand_dims=[1], index_vector_dim=2)),
    ((6,), (4,), (4,), dict(update_window_dims=[], inserted_window_dims=[0],
                            scatter_dims_to_operand_dims=[0], index_vector_dim=1)),
    ((3, 4), (2, 1), (2, 3, 2), dict(update_window_dims=[1, 2], inserted_window_dims=[],
                                     scatter_dims_to_operand_dims=[1], index_vector_dim=1)),
]


def _spec_targets(input_shape, indices, updates_shape, dims):
    uwd = dims["update_window_dims"]
    ibd = dims.get("input_batching_dims", [])
    sibd = dims.get("scatter_indices_batching_dims", [])
    ivd = dims["index_vector_dim"]
    rank = len(input_shape)
    usd = [d for d in range(len(updates_shape)) if d not in uwd]
    wid = [d for d in range(rank) if d not in dims["inserted_window_dims"] and d not in ibd]
    flat, valid = [], []
    for ui in np.ndindex(*updates_shape):
        usi = [ui[d] for d in usd]
        if ivd < indices.ndim:
            vec = [indices[tuple(usi[:ivd] + [k] + usi[ivd:])]
                   for k in range(indices.shape[ivd])]
        else:
            vec = [indices[tuple(usi)]]
        full = [0] * rank
        for k, d in enumerate(dims["scatter_dims_to_operand_dims"]):
            full[d] += int(vec[k])
        for i, d in enumerate(ibd):
            ds = sibd[i]
            full[d] += usi[ds - (0 if ds < ivd else 1)]
        for j, d in enumerate(wid):
            full[d] += ui[uwd[j]]
        ok = all(0 <= x < n for x, n in zip(full, input_shape))
        valid.append(ok)
        flat.append(int(np.ravel_multi_index(full, input_shape)) if ok else -1)
    return np.array(flat, dtype=np.int64), np.array(valid, dtype=bool)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(range(len(_TARGET_CASES))), st.data())
def test_scatter_targets_match_the_spec_definition(case, data):
    from stablehlo_ref.interpreter.indexing import scatter_targets
    input_shape, indices_shape, updates_shape, dims = _TARGET_CASES[case]
    n = int(np.prod(indices_shape))
    vals = data.draw(st.lists(st.integers(-3, 7), min_size=n, max_size=n))
    indices = np.array(vals, dtype=data.draw(st.sampled_from([np.int64, np.int32, np.uint8]))
                       if min(vals) >= 0 else np.int64).reshape(indices_shape)
    full = {"input_batching_dims": [], "scatter_indices_batching_dims": [], **dims}
    flat, valid = scatter_targets(input_shape, indices, updates_shape, **full)
    want_flat, want_valid = _spec_targets(input_shape, indices, updates_shape, dims)
    np.testing.assert_array_equal(valid, want_valid)
    np.testing.assert_array_equal(flat[valid], want_flat[want_valid])


@pytest.mark.parametrize("op,et,upd,want", [
    (None, "i32", [5, 9, 3, -7], -7),                    # replace: the last update wins
    ("maximum", "f32", [5, 9, 3, -7], 9),
    ("minimum", "i8", [5, 9, 3, -7], -7),
    ("multiply", "i8", [5, 9, 3, -7], -98),              # 2*5*9*3*-7 = -1890 wraps to -98
    ("add", "ui8", [5, 9, 250, 249], 3),                 # 2+513 = 515 wraps to 3
])
def test_scatter_common_bodies_with_repeated_targets(op, et, upd, want):
    dt = {"i32": np.int32, "f32": np.float32, "i8": np.int8, "ui8": np.uint8}[et]
    inp = np.array([2, 1, 2], dtype=dt)
    idx = np.zeros((4, 1), dtype=np.int64)          # four updates to element 0, in order
    body = (f"    stablehlo.return %u : tensor<{et}>" if op is None else
            f"    %s = stablehlo.{op} %x, %u : tensor<{et}>\n    stablehlo.return %s : tensor<{et}>")
    out = scatter(inp, idx, np.array(upd, dtype=dt), POINT_DIMS, body, et=et)
    np.testing.assert_array_equal(out, np.array([want, 1, 2], dtype=dt))


@st.composite
def _scatter_configs(draw):
    """A scatter without batching dims: (input shape, indices, updates shape, dims), with index
    vectors on any axis or implicit, windows that may overrun the input and indices that may be
    out of bounds (or, as uint64, huge)."""
    rank = draw(st.integers(1, 3))
    xshape = tuple(draw(st.lists(st.integers(0 if draw(st.booleans()) else 1, 4),
                                 min_size=rank, max_size=rank)))
    inserted = sorted(draw(st.sets(st.integers(0, rank - 1))))
    wid = [d for d in range(rank) if d not in inserted]
    k = draw(st.integers(1, rank))
    s2o = draw(st.permutations(range(rank)))[:k]
    sshape = draw(st.lists(st.integers(1, 3), max_size=2))
    if k == 1 and draw(st.booleans()):
        ishape, ivd = tuple(sshape), len(sshape)            # implicit index vector
    else:
        ivd = draw(st.integers(0, len(sshape)))
        ishape = tuple(sshape[:ivd]) + (k,) + tuple(sshape[ivd:])
    wsizes = [draw(st.integers(1, max(1, xshape[d] + 1))) for d in wid]
    nu = len(sshape) + len(wid)
    uwd = sorted(draw(st.permutations(range(nu)))[:len(wid)])
    ushape, si, wi = [], iter(sshape), iter(wsizes)
    for a in range(nu):
        ushape.append(next(wi) if a in uwd else next(si))
    n = int(np.prod(ishape))
    dt = draw(st.sampled_from([np.int64, np.int32, np.uint8, np.uint64]))
    lo = 0 if np.dtype(dt).kind == "u" else -2
    vals = draw(st.lists(st.integers(lo, max(xshape) + 1), min_size=n, max_size=n))
    indices = np.array(vals, dtype=dt).reshape(ishape)
    if dt is np.uint64 and n and draw(st.booleans()):
        indices.reshape(-1)[0] = np.uint64(2**64 - 1)
    dims = dict(update_window_dims=uwd, inserted_window_dims=inserted, input_batching_dims=[],
                scatter_indices_batching_dims=[], scatter_dims_to_operand_dims=list(s2o),
                index_vector_dim=ivd)
    return xshape, indices, tuple(ushape), dims


@settings(max_examples=300, deadline=None)
@given(_scatter_configs())
def test_direct_scatter_targets_match_the_plan(cfg):
    """A scatter's first run computes its targets in Python (`direct_targets`): the same
    in-bounds elements and flat indices as the plan later runs use."""
    from stablehlo_ref.interpreter.indexing import _DIRECT_TARGETS, _TargetPlan, direct_targets
    xshape, indices, ushape, dims = cfg
    got = direct_targets(xshape, indices, ushape, dims)
    if int(np.prod(ushape)) > _DIRECT_TARGETS:
        assert got is None
        return
    flat, valid = _TargetPlan(xshape, indices.shape, ushape, **dims).targets(indices)
    want_valid = np.ones(flat.shape, bool) if valid is None else valid
    got_valid = np.ones(len(got[0]), bool) if got[1] is None else np.array(got[1])
    np.testing.assert_array_equal(got_valid, want_valid)
    np.testing.assert_array_equal(np.array(got[0], dtype=np.int64)[got_valid], flat[want_valid])
    if got[1] is not None:
        assert not all(got[1])            # None stands for "all in bounds"


def test_direct_scatter_targets_leave_batching_and_invalid_dims_to_the_plan():
    from stablehlo_ref.interpreter.indexing import direct_targets
    for xshape, ishape, ushape, dims in _TARGET_CASES:
        full = {"input_batching_dims": [], "scatter_indices_batching_dims": [], **dims}
        got = direct_targets(xshape, np.zeros(ishape, np.int64), ushape, full)
        assert (got is None) == bool(full["input_batching_dims"])
    bad = dict(update_window_dims=[1], inserted_window_dims=[0], input_batching_dims=[],
               scatter_indices_batching_dims=[], scatter_dims_to_operand_dims=[0],
               index_vector_dim=1)
    # updates whose scatter dims do not match the indices: the plan reports it
    assert direct_targets((4, 5), np.zeros((3, 1), np.int64), (2, 5), bad) is None
    with pytest.raises(stablehlo_ref.errors.InterpreterError):
        from stablehlo_ref.interpreter.indexing import _TargetPlan
        _TargetPlan((4, 5), (3, 1), (2, 5), **bad)


def test_scatter_first_and_later_runs_agree():
    """The first run of a scatter (direct targets) and later runs (planned) give one result,
    out-of-bounds updates skipped."""
    src = """func.func @main(%x: tensor<3x4xf32>, %i: tensor<2x1xi32>, %u: tensor<2x4xf32>)
        -> tensor<3x4xf32> {
      %r = "stablehlo.scatter"(%x, %i, %u) <{scatter_dimension_numbers = #stablehlo.scatter<
          update_window_dims = [1], inserted_window_dims = [0],
          scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %s = stablehlo.add %a, %b : tensor<f32>
        stablehlo.return %s : tensor<f32>
      }) : (tensor<3x4xf32>, tensor<2x1xi32>, tensor<2x4xf32>) -> tensor<3x4xf32>
      func.return %r : tensor<3x4xf32>
    }"""
    m = stablehlo_ref.parse(src)
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    u = np.full((2, 4), 0.5, np.float32)
    for idx in ([[2], [2]], [[1], [7]], [[-1], [0]]):
        i = np.array(idx, np.int32)
        want = x.copy()
        for row, (j,) in enumerate(idx):
            if 0 <= j < 3:
                want[j] += u[row]
        outs = [stablehlo_ref.run(m, x, i, u)[0] for _ in range(3)]
        for out in outs:
            np.testing.assert_array_equal(out, want)


def _scatter_add_program(et, n):
    return f"""func.func @main(%x: tensor<4x{et}>, %i: tensor<{n}x1xi32>, %u: tensor<{n}x{et}>)
        -> tensor<4x{et}> {{
      %r = "stablehlo.scatter"(%x, %i, %u) <{{scatter_dimension_numbers = #stablehlo.scatter<
          update_window_dims = [], inserted_window_dims = [0],
          scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}}> ({{
      ^bb0(%a: tensor<{et}>, %b: tensor<{et}>):
        %s = stablehlo.add %a, %b : tensor<{et}>
        stablehlo.return %s : tensor<{et}>
      }}) : (tensor<4x{et}>, tensor<{n}x1xi32>, tensor<{n}x{et}>) -> tensor<4x{et}>
      func.return %r : tensor<4x{et}>
    }}"""


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(["bf16", "complex<f32>", "f8E4M3FN"]), st.integers(0, 3),
       st.lists(st.floats(-100, 100, width=32), min_size=6, max_size=6))
def test_one_inexact_update_matches_the_rounds_of_several(et, target, vals):
    """A float add of one update of a type numpy has no exact add for (apply_updates' one-
    update shortcut) gives what the general rounds give that element among other updates."""
    from stablehlo_ref.interpreter.numerics import elem
    m1 = stablehlo_ref.parse(_scatter_add_program(et, 1))
    m2 = stablehlo_ref.parse(_scatter_add_program(et, 2))
    dt = elem(m1.functions["main"].regions[0].blocks[0].arguments[0].type).dtype
    x = np.array(vals[:4], dtype=np.float64).astype(dt)
    u = np.array(vals[4:], dtype=np.float64).astype(dt)
    other = (target + 1) % 4
    one = stablehlo_ref.run(m1, x, np.array([[target]], np.int32), u[:1])[0]
    two = stablehlo_ref.run(m2, x, np.array([[target], [other]], np.int32), u)[0]
    assert one[target].tobytes() == two[target].tobytes()


@settings(max_examples=300, deadline=None)
@given(_scatter_configs())
def test_one_window_scatter_targets_match_the_plan(cfg):
    """A scatter of one index vector whose window lies inside the input: its targets, computed
    from the window (`one_window_targets`), are the plan's, all in bounds."""
    from stablehlo_ref.interpreter.indexing import _TargetPlan, one_window_targets
    xshape, indices, ushape, dims = cfg
    got = one_window_targets(xshape, indices, ushape, dims)
    if got is None:
        return
    flat, valid = _TargetPlan(xshape, indices.shape, ushape, **dims).targets(indices)
    assert valid is None or valid.all()
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, flat)


_WINDOW_DTYPES = {"i8": np.int8, "ui32": np.uint32, "i64": np.int64, "f16": np.float16,
                  "f32": np.float32, "f64": np.float64, "i1": np.bool_, "bf16": None}


# NaNs of either sign, quiet and signaling, with payload bits (as bit patterns of each width)
_NAN_BITS = {2: [0x7E00, 0xFE00, 0x7E01, 0xFE05, 0x7C01, 0xFC03],
             4: [0x7FC00000, 0xFFC00000, 0x7FC00001, 0xFFC00005, 0x7F800001, 0xFF800003],
             8: [0x7FF8000000000000, 0xFFF8000000000000, 0x7FF8000000000001,
                 0xFFF8000000000005, 0x7FF0000000000001, 0xFFF0000000000003]}
_BF16_NAN_BITS = [0x7FC0, 0xFFC0, 0x7FC1, 0xFFC5, 0x7F81, 0xFF83]


def _float_pool_draw(rng, dt, shape):
    """An array of `shape` and float dtype `dt` drawn from signed zeros, infinities, a few
    finite values and NaNs of both signs with payload bits."""
    dt = np.dtype(dt)
    pool = np.array([0.0, -0.0, 1.5, -2.25, np.inf, -np.inf, np.nan, 3e4, 1e-8], np.float64)
    vals = pool.astype(dt)
    ut = {2: np.uint16, 4: np.uint32, 8: np.uint64}[dt.itemsize]
    bits = _NAN_BITS[dt.itemsize] if dt.kind == "f" else _BF16_NAN_BITS
    nans = np.array(bits, dtype=ut).view(dt)
    both = np.concatenate([vals, nans])
    return both[rng.integers(0, both.size, shape)] if shape else both[rng.integers(0, both.size)].reshape(())


@settings(max_examples=300, deadline=None)
@given(_scatter_configs(), st.sampled_from(sorted(_WINDOW_DTYPES)),
       st.sampled_from(["replace", "stablehlo.add", "stablehlo.multiply", "stablehlo.maximum",
                        "stablehlo.minimum", "stablehlo.and", "stablehlo.or", "stablehlo.xor"]),
       st.integers(0, 2**32 - 1))
@np.errstate(all="ignore")   # (kernels run as the interpreter runs them)
def test_window_scatter_matches_the_general_path(cfg, et_name, body, seed):
    """`window_scatter` (a window written or combined with numpy on a view) gives the bits
    `apply_updates` gives on the plan's targets, or declines."""
    import ml_dtypes
    from stablehlo_ref.interpreter.indexing import _TargetPlan, apply_updates, window_scatter
    from stablehlo_ref.ir.types import ELEMENT_TYPES, TensorType
    xshape, indices, ushape, dims = cfg
    et = ELEMENT_TYPES[et_name]
    dt = _WINDOW_DTYPES[et_name] or ml_dtypes.bfloat16
    is_float = np.dtype(dt).kind == "f" or et_name == "bf16"
    if is_float and body in ("stablehlo.and", "stablehlo.or", "stablehlo.xor"):
        return
    rng = np.random.default_rng(seed)
    if et_name == "i1":
        x, u = rng.random(xshape) < 0.5, rng.random(ushape) < 0.5
    elif is_float:
        x = _float_pool_draw(rng, dt, xshape)
        u = _float_pool_draw(rng, dt, ushape)
    else:
        info = np.iinfo(dt)
        x = rng.integers(info.min, info.max, xshape, dtype=dt, endpoint=True)
        u = rng.integers(info.min, info.max, ushape, dtype=dt, endpoint=True)
    got = window_scatter(x, indices, u, dims, body, et)
    if got is None:
        return
    flat, valid = _TargetPlan(xshape, indices.shape, ushape, **dims).targets(indices)
    assert valid is None or valid.all()
    rt = TensorType(tuple(xshape), et)
    want = apply_updates(None, None, [x.reshape(-1)], flat, [u.reshape(-1)], [rt], body)[0]
    want = want.reshape(xshape).astype(dt, copy=False)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    assert got.tobytes() == want.tobytes()      # (NaNs and signed zeros too)


def test_simple_tensor_types_are_shared_between_parses():
    """Simple tensor types are uniqued across parses (as MLIR's context does), so what the
    interpreter keeps on a type object carries over to the next parse of a program."""
    src = "func.func @main(%x: tensor<3x4xf32>) -> tensor<3x4xf32> { func.return %x : tensor<3x4xf32> }"
    a = stablehlo_ref.parse(src).functions["main"].regions[0].blocks[0].arguments[0].type
    b = stablehlo_ref.parse(src).functions["main"].regions[0].blocks[0].arguments[0].type
    assert a is b and str(a) == "tensor<3x4xf32>"
    from stablehlo_ref.text import parse_attrs
    assert len(parse_attrs.SHARED_TYPES) <= parse_attrs._MAX_SHARED_TYPES


@st.composite
def _in_bounds_scatter_configs(draw):
    """`_scatter_configs` with the index vectors redrawn so that most windows lie inside the
    input (several windows, often overlapping, occasionally one out of bounds)."""
    xshape, indices, ushape, dims = draw(_scatter_configs())
    rank = len(xshape)
    wid = [d for d in range(rank) if d not in dims["inserted_window_dims"]]
    window = [1] * rank
    for j, d in enumerate(wid):
        if j < len(dims["update_window_dims"]):
            window[d] = ushape[dims["update_window_dims"][j]]
    ivd = dims["index_vector_dim"]
    moved = indices[..., None] if ivd >= indices.ndim else np.moveaxis(indices, ivd, -1)
    vecs = np.array(moved, copy=True)
    for j, d in enumerate(dims["scatter_dims_to_operand_dims"]):
        hi = max(xshape[d] - window[d], 0) + draw(st.sampled_from([0, 0, 0, 1]))
        vals = draw(st.lists(st.integers(0, hi), min_size=vecs[..., j].size,
                             max_size=vecs[..., j].size))
        vecs[..., j] = np.array(vals).reshape(vecs[..., j].shape)
    back = vecs[..., 0] if ivd >= indices.ndim else np.moveaxis(vecs, -1, ivd)
    return xshape, np.ascontiguousarray(back).astype(indices.dtype), ushape, dims


@settings(max_examples=400, deadline=None)
@given(_in_bounds_scatter_configs(), st.sampled_from(sorted(_WINDOW_DTYPES)),
       st.sampled_from(["replace", "stablehlo.add", "stablehlo.multiply", "stablehlo.maximum",
                        "stablehlo.minimum", "stablehlo.and", "stablehlo.or", "stablehlo.xor"]),
       st.integers(0, 2**32 - 1))
def test_several_window_scatter_matches_the_general_path(cfg, et_name, body, seed):
    """`window_scatter` of several windows inside the input (each written or combined on a
    view, one after the other) gives the bits of the general path: later updates win, float
    folds of overlapping windows in the updates' order (NaNs and signed zeros too)."""
    test_window_scatter_matches_the_general_path.hypothesis.inner_test(cfg, et_name, body, seed)


_SEVERAL_WINDOWS = [
    # (input shape, indices, updates shape, update_window_dims, inserted, s2o, index_vector_dim)
    ((3, 5, 40), [[1], [3]], (3, 5, 2), [0, 1], [2], [2], 1),     # two windows along dim 2
    ((3, 5, 40), [[1], [1]], (3, 5, 2), [0, 1], [2], [2], 1),     # the same window twice
    ((5, 6, 7), [[0, 1], [2, 3]], (2, 7), [1], [0, 1], [0, 1], 1),
    ((5, 6, 7), [[0, 1], [0, 1]], (2, 7), [1], [0, 1], [0, 1], 1),
    ((5, 6, 7), [[[0, 1], [2, 3]], [[4, 5], [1, 0]]], (5, 2, 2), [0], [1, 2], [1, 2], 2),
    ((5, 6, 7), [[[0, 1], [2, 3]], [[0, 1], [1, 0]]], (5, 2, 2), [0], [1, 2], [1, 2], 2),
    ((2, 3), [[[0], [1], [1]]], (2, 1, 3), [0], [1], [1], 2),
    ((4, 6), [[0, 2, 1]], (3, 2, 2), [1, 2], [], [1], 0),          # index vectors on axis 0
    ((4, 6), [[0, 2, 5]], (3, 2, 2), [1, 2], [], [1], 0),          # the last one overruns
    ((4, 6), [[0, 1], [2, -1]], (2, 4, 2), [1, 2], [], [0, 1], 1),  # a negative start
]


@pytest.mark.parametrize("case", range(len(_SEVERAL_WINDOWS)))
@pytest.mark.parametrize("et_name", sorted(_WINDOW_DTYPES))
@pytest.mark.parametrize("body", ["replace", "stablehlo.add", "stablehlo.multiply",
                                  "stablehlo.maximum", "stablehlo.minimum"])
def test_several_windows_of_testdata_forms_match_the_general_path(case, et_name, body):
    """Scatters of several windows (overlapping, repeated, disjoint, out of bounds) of the
    forms upstream's testdata has: `window_scatter` gives the general path's bits or
    declines, for every seed tried."""
    xshape, idx, ushape, uwd, inserted, s2o, ivd = _SEVERAL_WINDOWS[case]
    dims = dict(update_window_dims=uwd, inserted_window_dims=inserted, input_batching_dims=[],
                scatter_indices_batching_dims=[], scatter_dims_to_operand_dims=s2o,
                index_vector_dim=ivd)
    for seed in range(4):
        cfg = (xshape, np.array(idx, np.int64), ushape, dims)
        test_window_scatter_matches_the_general_path.hypothesis.inner_test(cfg, et_name, body, seed)


@pytest.mark.parametrize("case,et_name,body,taken", [
    (0, "i64", "stablehlo.add", True), (1, "i8", "stablehlo.multiply", True),
    (0, "f32", "stablehlo.add", False),          # an order-dependent fold, window dims first
    (1, "f32", "replace", False),
    (2, "ui32", "replace", True), (3, "f32", "replace", True), (2, "f32", "stablehlo.add", True),
    (3, "f32", "stablehlo.add", False),          # a float sum of overlapping windows
    (7, "f64", "stablehlo.minimum", True), (4, "i8", "stablehlo.maximum", True),
    (4, "f32", "stablehlo.maximum", False),      # an order-dependent fold, window dims first
    (8, "i64", "replace", False), (9, "i64", "replace", False)])
def test_several_windows_path_is_taken_where_it_applies(case, et_name, body, taken):
    """Which scatters of several windows `window_scatter` writes on views (the rest declines
    to the general path)."""
    from stablehlo_ref.interpreter.indexing import window_scatter
    from stablehlo_ref.ir.types import ELEMENT_TYPES
    xshape, idx, ushape, uwd, inserted, s2o, ivd = _SEVERAL_WINDOWS[case]
    dims = dict(update_window_dims=uwd, inserted_window_dims=inserted, input_batching_dims=[],
                scatter_indices_batching_dims=[], scatter_dims_to_operand_dims=s2o,
                index_vector_dim=ivd)
    dt = _WINDOW_DTYPES[et_name]
    got = window_scatter(np.zeros(xshape, dt), np.array(idx, np.int64), np.ones(ushape, dt),
                         dims, body, ELEMENT_TYPES[et_name])
    assert (got is not None) == taken


_FIRST_DTYPE_NAMES = ["i1", "i8", "i16", "ui8", "ui32", "i64", "ui64", "f16", "f32", "f64",
                      "bf16"]
_BODIES = ["replace", "stablehlo.add", "stablehlo.multiply", "stablehlo.maximum",
           "stablehlo.minimum", "stablehlo.and", "stablehlo.or", "stablehlo.xor"]


@np.errstate(all="ignore")   # (kernels run as the interpreter runs them)
def _first_scatter_against_general(cfg, et_name, body, seed, nan_updates=True):
    """`first_scatter`'s result (or None) against `apply_updates` on the plan's targets, bit
    for bit; returns whether it applied. Float updates hold no NaN unless `nan_updates`."""
    from stablehlo_ref.interpreter.indexing import (_FIRST_DTYPES, _FIRST_WIDE, _TargetPlan,
                                                    apply_updates, first_scatter)
    from stablehlo_ref.ir.types import ELEMENT_TYPES, TensorType
    xshape, indices, ushape, dims = cfg
    et = ELEMENT_TYPES[et_name]
    dt = _FIRST_DTYPES.get(et_name)
    wide = False
    if dt is None:                          # (other element types: a replace, or f64 folds)
        wide = body != "replace"
        if wide and et_name not in _FIRST_WIDE:
            return False
        dt = et.dtype
    is_float = dt.kind == "f" or et_name == "bf16"
    if is_float and body in ("stablehlo.and", "stablehlo.or", "stablehlo.xor"):
        return False
    rng = np.random.default_rng(seed)
    if dt.kind == "b":
        x, u = rng.random(xshape) < 0.5, rng.random(ushape) < 0.5
    elif is_float:
        x, u = _float_pool_draw(rng, dt, xshape), _float_pool_draw(rng, dt, ushape)
        if not nan_updates:
            u = np.where(np.isnan(u), np.array(1.5, dt), u)
    else:
        info = np.iinfo(dt)
        x = rng.integers(info.min, info.max, xshape, dtype=dt, endpoint=True)
        u = rng.integers(info.min, info.max, ushape, dtype=dt, endpoint=True)
        if seed % 2:                        # the extremes (sums and products that wrap)
            pool = np.array(sorted({info.min, info.min + 1, info.max, info.max - 1, 0, 1, 2,
                                    info.max // 2 + 1} | ({-1} if info.min else set())),
                            dtype=dt)
            x, u = pool[rng.integers(0, pool.size, xshape)], pool[rng.integers(0, pool.size, ushape)]
    x, u = np.asarray(x), np.asarray(u)
    got = first_scatter(x, indices, u, tuple(dims["update_window_dims"]),
                        tuple(dims["inserted_window_dims"]),
                        tuple(dims["scatter_dims_to_operand_dims"]), dims["index_vector_dim"],
                        body, wide)
    if got is None:
        return False
    flat, valid = _TargetPlan(xshape, indices.shape, ushape, **dims).targets(indices)
    assert valid is None or valid.all()
    rt = TensorType(tuple(xshape), et)
    want = apply_updates(None, None, [x.reshape(-1)], flat, [u.reshape(-1)], [rt], body)[0]
    want = want.reshape(xshape).astype(dt, copy=False)
    assert got.__class__ is np.ndarray
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes()      # (NaNs and signed zeros too)
    assert not np.shares_memory(got, x) and not np.shares_memory(got, u)
    return True


@settings(max_examples=300, deadline=None)
@given(_scatter_configs(), st.sampled_from(_FIRST_DTYPE_NAMES), st.sampled_from(_BODIES),
       st.integers(0, 2**32 - 1))
def test_first_scatter_matches_the_general_path(cfg, et_name, body, seed):
    """A scatter's first run (`first_scatter`: one window on a view, several by `ufunc.at`
    on targets listed in Python) gives the bits of the general path, or declines."""
    _first_scatter_against_general(cfg, et_name, body, seed)


@settings(max_examples=400, deadline=None)
@given(_in_bounds_scatter_configs(), st.sampled_from(_FIRST_DTYPE_NAMES),
       st.sampled_from(_BODIES), st.integers(0, 2**32 - 1))
def test_first_scatter_of_windows_inside_matches_the_general_path(cfg, et_name, body, seed):
    """`first_scatter` of windows mostly inside the input (overlapping, repeated) gives the
    bits of the general path: repeated targets folded in the updates' order, the last
    update winning a replace, NaN payloads and signed zeros as `ufunc.at` leaves them."""
    _first_scatter_against_general(cfg, et_name, body, seed)


@pytest.mark.parametrize("case", range(len(_SEVERAL_WINDOWS)))
@pytest.mark.parametrize("et_name", _FIRST_DTYPE_NAMES)
@pytest.mark.parametrize("body", _BODIES[:5])
def test_first_scatter_of_testdata_forms(case, et_name, body):
    """The several-window forms of upstream's testdata: `first_scatter` takes every one whose
    windows lie inside the input (the last two do not) and gives the general path's bits;
    a bf16 sum or product (folded in f64 and rounded) only where no target repeats and the
    updates hold no NaN."""
    xshape, idx, ushape, uwd, inserted, s2o, ivd = _SEVERAL_WINDOWS[case]
    dims = dict(update_window_dims=uwd, inserted_window_dims=inserted, input_batching_dims=[],
                scatter_indices_batching_dims=[], scatter_dims_to_operand_dims=s2o,
                index_vector_dim=ivd)
    rounded = et_name == "bf16" and body in ("stablehlo.add", "stablehlo.multiply")
    for seed in range(4):
        for nan_updates in (True, False):
            taken = _first_scatter_against_general(
                (xshape, np.array(idx, np.int64), ushape, dims), et_name, body, seed, nan_updates)
            if rounded and nan_updates:
                continue                    # (taken or not as the updates hold a NaN)
            assert taken == (case < 8 and not (rounded and case in (1, 3, 5, 6, 7)))


@pytest.mark.parametrize("xshape,idx,ushape,uwd,inserted,s2o,ivd", [
    ((1, 2, 3), [0, 1], (1,), [0], [1, 2], [1, 2], 0),
    ((1, 125), [0], (1,), [0], [1], [1], 0),
    ((4, 2, 3), [1, 2], (2,), [0], [0, 2], [0, 2], 0),
    ((1, 1, 1), [0], (1, 1), [0, 1], [0], [0], 0),        # the window is the whole input
    ((1,), [0], (), [], [0], [0], 0),
    ((1, 2, 3), [0], (2, 3), [0, 1], [0], [0], 0),
    ((4, 2, 3, 5), [1, 2], (4, 3), [0, 1], [1, 3], [1, 3], 0),
    ((1, 50, 3), [7], (1, 3), [0, 1], [1], [1], 0),
])
@pytest.mark.parametrize("et_name", _FIRST_DTYPE_NAMES)
@pytest.mark.parametrize("body", _BODIES[:5])
def test_first_scatter_of_one_window_testdata_forms(xshape, idx, ushape, uwd, inserted, s2o,
                                                    ivd, et_name, body):
    """The one-window forms of upstream's testdata: `first_scatter` takes them (a float sum or
    product of a NaN update excepted) and gives the general path's bits."""
    dims = dict(update_window_dims=uwd, inserted_window_dims=inserted, input_batching_dims=[],
                scatter_indices_batching_dims=[], scatter_dims_to_operand_dims=s2o,
                index_vector_dim=ivd)
    cfg = (xshape, np.array(idx, np.int64), ushape, dims)
    for seed in range(6):
        _first_scatter_against_general(cfg, et_name, body, seed)
        taken = _first_scatter_against_general(cfg, et_name, body, seed, nan_updates=False)
        assert taken


_KERNEL_BODIES = {
    "replace": "{ret} %u",
    "add": "stablehlo.add %x, %u", "add_swapped": "stablehlo.add %u, %x",
    "multiply": "stablehlo.multiply %x, %u", "maximum": "stablehlo.maximum %x, %u",
    "maximum_swapped": "stablehlo.maximum %u, %x", "minimum": "stablehlo.minimum %x, %u",
    "and": "stablehlo.and %x, %u", "or": "stablehlo.or %x, %u", "xor": "stablehlo.xor %x, %u",
    "subtract": "stablehlo.subtract %x, %u",       # (not recognized: the region is run)
}
_INDEX_TYPES = {np.dtype(np.int64): "i64", np.dtype(np.int32): "i32", np.dtype(np.uint8): "ui8",
                np.dtype(np.uint64): "ui64"}


def _scatter_kernel_program(xshape, ishape, ushape, dims, et, it, body):
    tx, ti, tu = _ty(xshape, et), _ty(ishape, it), _ty(ushape, et)
    text = _KERNEL_BODIES[body]
    if body == "replace":
        ops = f"    stablehlo.return %u : tensor<{et}>"
    else:
        ops = f"    %s = {text} : tensor<{et}>\n    stablehlo.return %s : tensor<{et}>"
    dn = (f"update_window_dims = {list(dims['update_window_dims'])}, "
          f"inserted_window_dims = {list(dims['inserted_window_dims'])}, "
          f"scatter_dims_to_operand_dims = {list(dims['scatter_dims_to_operand_dims'])}, "
          f"index_vector_dim = {dims['index_vector_dim']}")
    return (f"func.func @main(%a0: {tx}, %a1: {ti}, %a2: {tu}) -> {tx} {{\n"
            f'  %r = "stablehlo.scatter"(%a0, %a1, %a2) <{{scatter_dimension_numbers = '
            f"#stablehlo.scatter<{dn}>}}> ({{\n  ^bb0(%x: tensor<{et}>, %u: tensor<{et}>):\n"
            f"{ops}\n  }}) : ({tx}, {ti}, {tu}) -> {tx}\n  func.return %r : {tx}\n}}\n")


@settings(max_examples=250, deadline=None)
@given(st.one_of(_scatter_configs(), _in_bounds_scatter_configs()),
       st.sampled_from(_FIRST_DTYPE_NAMES), st.sampled_from(sorted(_KERNEL_BODIES)),
       st.integers(0, 2**32 - 1), st.booleans())
def test_scatter_first_run_matches_the_general_kernel(cfg, et_name, body, seed, listed):
    """The scatter kernel's first run of a freshly parsed program (`first_scatter`, in numpy
    or, for small integer inputs, in Python) against the same program with that path turned
    off: the same bits (NaN payloads and signs, signed zeros, wrapped integers, skipped
    out-of-bounds updates, repeated targets), for every update body form; integers in
    numpy too (`listed` off)."""
    from stablehlo_ref.interpreter import indexing
    from stablehlo_ref.ir.types import ELEMENT_TYPES
    xshape, indices, ushape, dims = cfg
    dt = ELEMENT_TYPES[et_name].dtype
    is_float = et_name == "bf16" or dt.kind == "f"
    if is_float and body in ("and", "or", "xor") or et_name == "i1" and body == "subtract":
        return
    rng = np.random.default_rng(seed)
    if dt.kind == "b":
        x, u = rng.random(xshape) < 0.5, rng.random(ushape) < 0.5
    elif is_float:
        x, u = _float_pool_draw(rng, dt, xshape), _float_pool_draw(rng, dt, ushape)
    else:
        info = np.iinfo(dt)
        pool = np.array(sorted({info.min, info.min + 1, info.max, info.max - 1, 0, 1, 2}),
                        dtype=dt)
        x, u = pool[rng.integers(0, pool.size, xshape)], pool[rng.integers(0, pool.size, ushape)]
    x, u = np.asarray(x).astype(dt), np.asarray(u).astype(dt)
    src = _scatter_kernel_program(xshape, indices.shape, ushape, dims, et_name,
                                  _INDEX_TYPES[indices.dtype], body)
    limit = indexing._FIRST_LISTED
    indexing._FIRST_LISTED = limit if listed else 0
    try:
        got = stablehlo_ref.run(stablehlo_ref.parse(src), x, indices, u)[0]
    finally:
        indexing._FIRST_LISTED = limit
    fast = indexing._first_run_scatter
    indexing._first_run_scatter = lambda *a: None
    try:
        want = stablehlo_ref.run(stablehlo_ref.parse(src), x, indices, u)[0]
    finally:
        indexing._first_run_scatter = fast
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes()


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(["f16", "f32", "f64"]),
       st.sampled_from(["replace", "stablehlo.add", "stablehlo.multiply", "stablehlo.maximum",
                        "stablehlo.minimum"]),
       st.integers(0, 2**32 - 1))
@np.errstate(all="ignore")   # (kernels run as the interpreter runs them)
def test_first_scatter_python_fold_of_repeated_targets_on_random_bits(et_name, body, seed):
    """(review of session 35) `first_scatter`'s Python fold of up to `_FIRST_PY` update
    elements (`_fold_one` per update, stored back each time) on floats of random bits (NaN
    payloads, subnormals, values whose sums round near ties or overflow), targets repeated:
    the bits `apply_updates` gives folding in the updates' order."""
    from stablehlo_ref.interpreter.indexing import _FIRST_PY, _TargetPlan, apply_updates, \
        first_scatter
    from stablehlo_ref.ir.types import ELEMENT_TYPES, TensorType
    rng = np.random.default_rng(seed)
    dt = ELEMENT_TYPES[et_name].dtype
    ut = {2: np.uint16, 4: np.uint32, 8: np.uint64}[dt.itemsize]
    info = np.iinfo(ut)
    n = int(rng.integers(1, _FIRST_PY + 1))
    x = rng.integers(0, info.max, 3, dtype=ut, endpoint=True).view(dt)
    u = rng.integers(0, info.max, n, dtype=ut, endpoint=True).view(dt)
    if seed % 3:                 # (mostly finite, close exponents: rounding, not NaNs)
        base = np.array([1.0, -1.0, 65504.0 / 3, 3.0e-5], np.float64).astype(dt)
        x = (base[rng.integers(0, 4, 3)] * rng.random(3).astype(dt)).astype(dt)
        u = (base[rng.integers(0, 4, n)] * rng.random(n).astype(dt)).astype(dt)
    idx = rng.integers(0, 3, (n, 1)).astype(np.int32)
    got = first_scatter(x, idx, u, (), (0,), (0,), 1, body, False)
    if got is None:
        return
    dims = dict(update_window_dims=[], inserted_window_dims=[0], input_batching_dims=[],
                scatter_indices_batching_dims=[], scatter_dims_to_operand_dims=[0],
                index_vector_dim=1)
    flat, valid = _TargetPlan((3,), idx.shape, u.shape, **dims).targets(idx)
    rt = TensorType((3,), ELEMENT_TYPES[et_name])
    want = apply_updates(None, None, [x.copy()], flat, [u], [rt], body)[0]
    want = np.asarray(want).astype(dt, copy=False)
    assert got.dtype == want.dtype and got.tobytes() == want.tobytes(), (x, idx, u, got, want)
