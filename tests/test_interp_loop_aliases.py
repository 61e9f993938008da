"""Compiled loop bodies that skip steps whose result a slot already holds (an op with a known
identity operand, the same pure op on the same operands as an earlier step: `plan._Emitter
.alias_step`), the merged sequence's kernel and select entries, the f32 rounding of scalar
unary ops and converts by one multiply, and the scatter whose loop-invariant targets are
kept (`indexing.scatter_at_kernel`): each gives the bits of the general path."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import stablehlo_ref
from stablehlo_ref.interpreter import indexing, plan
from stablehlo_ref.interpreter.blas import RUN
from stablehlo_ref.interpreter.registry import KERNELS, SPECIALIZERS
from stablehlo_ref.text import parse

from loop_helpers import run_both as _both


# identities (x + 0, 1 * x, x != false, x == true, x & true, x | false, x ^ false, a convert
# to the same type) and repeated ops (the remainder, the compare); values returned by the
# body, read by a nested region, and an update in place of a value another step repeats
ALIAS_LOOP = """func.func @main(%x0: tensor<8xi32>, %s0: tensor<i32>) -> (tensor<8xi32>, tensor<i32>, tensor<8xi1>, tensor<8xi32>, tensor<8xi32>, tensor<i1>) {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %z = stablehlo.constant dense<0> : tensor<8xi32>
  %f0 = stablehlo.constant dense<false> : tensor<8xi1>
  %b0 = stablehlo.constant dense<false> : tensor<i1>
  %r:7 = stablehlo.while(%i = %c0, %x = %x0, %s = %s0, %p = %f0, %u0 = %z, %v0 = %z, %q0 = %b0) : tensor<i32>, tensor<8xi32>, tensor<i32>, tensor<8xi1>, tensor<8xi32>, tensor<8xi32>, tensor<i1>
   cond {
    %n = stablehlo.constant dense<13> : tensor<i32>
    %lt = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  } do {
    %one1 = stablehlo.constant dense<1> : tensor<i32>
    %i2 = stablehlo.add %i, %one1 : tensor<i32>
    %zero = stablehlo.constant dense<0> : tensor<8xi32>
    %one = stablehlo.constant dense<1> : tensor<8xi32>
    %ff = stablehlo.constant dense<false> : tensor<8xi1>
    %tt = stablehlo.constant dense<true> : tensor<8xi1>
    %a = stablehlo.add %x, %zero : tensor<8xi32>
    %m = stablehlo.multiply %one, %a : tensor<8xi32>
    %k = stablehlo.constant dense<3> : tensor<8xi32>
    %k2 = stablehlo.constant dense<3> : tensor<8xi32>
    %r1 = stablehlo.remainder %m, %k : tensor<8xi32>
    %lt0 = stablehlo.compare LT, %r1, %zero, SIGNED : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi1>
    %l2 = stablehlo.compare NE, %lt0, %ff, UNSIGNED : (tensor<8xi1>, tensor<8xi1>) -> tensor<8xi1>
    %l3 = stablehlo.compare EQ, %l2, %tt, UNSIGNED : (tensor<8xi1>, tensor<8xi1>) -> tensor<8xi1>
    %q = stablehlo.and %l3, %tt : tensor<8xi1>
    %q2 = stablehlo.or %q, %ff : tensor<8xi1>
    %q3 = stablehlo.xor %ff, %q2 : tensor<8xi1>
    %q4 = stablehlo.xor %q3, %p : tensor<8xi1>
    %idx = stablehlo.remainder %i, %one1 : tensor<i32>
    %sv = stablehlo.reshape %s : (tensor<i32>) -> tensor<1xi32>
    %u = stablehlo.dynamic_update_slice %r1, %sv, %i : (tensor<8xi32>, tensor<1xi32>, tensor<i32>) -> tensor<8xi32>
    %r2 = stablehlo.remainder %x, %k2 : tensor<8xi32>
    %cv = stablehlo.convert %r2 : tensor<8xi32>
    %sum = stablehlo.add %cv, %x : tensor<8xi32>
    %r3 = stablehlo.remainder %a, %k2 : tensor<8xi32>
    %v = stablehlo.dynamic_update_slice %r3, %sv, %idx : (tensor<8xi32>, tensor<1xi32>, tensor<i32>) -> tensor<8xi32>
    %w = stablehlo.add %r2, %v : tensor<8xi32>
    %s1 = stablehlo.subtract %s, %c0 : tensor<i32>
    %s2 = stablehlo.add %s1, %one1 : tensor<i32>
    %bt = stablehlo.constant dense<true> : tensor<i1>
    %pr = stablehlo.compare LT, %s1, %i, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %pr2 = stablehlo.and %bt, %pr : tensor<i1>
    %sel = "stablehlo.if"(%pr2) ({
      stablehlo.return %a : tensor<8xi32>
    }, {
      stablehlo.return %m : tensor<8xi32>
    }) : (tensor<i1>) -> tensor<8xi32>
    %out = stablehlo.add %sel, %w : tensor<8xi32>
    stablehlo.return %i2, %sum, %s2, %q4, %u, %out, %pr2 : tensor<i32>, tensor<8xi32>, tensor<i32>, tensor<8xi1>, tensor<8xi32>, tensor<8xi32>, tensor<i1>
  }
  return %r#1, %r#2, %r#3, %r#4, %r#5, %r#6 : tensor<8xi32>, tensor<i32>, tensor<8xi1>, tensor<8xi32>, tensor<8xi32>, tensor<i1>
}"""


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(x=st.lists(st.integers(-50, 50), min_size=8, max_size=8), s=st.integers(-20, 20))
def test_aliased_steps_give_the_general_results(x, s):
    _both(ALIAS_LOOP, np.array(x, np.int32), np.int32(s))


def test_identities_and_repeated_ops_are_recognized():
    src = """func.func @main(%x: tensor<4xi32>, %p: tensor<4xi1>, %g: tensor<4xf32>) -> (tensor<4xi32>, tensor<4xi32>, tensor<4xi1>, tensor<4xf32>) {
  %z = stablehlo.constant dense<0> : tensor<4xi32>
  %f = stablehlo.constant dense<false> : tensor<4xi1>
  %fz = stablehlo.constant dense<0.0> : tensor<4xf32>
  %a = stablehlo.add %z, %x : tensor<4xi32>
  %b = stablehlo.subtract %z, %x : tensor<4xi32>
  %c = stablehlo.compare NE, %p, %f, UNSIGNED : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  %d = stablehlo.add %g, %fz : tensor<4xf32>
  %e = stablehlo.subtract %x, %z : tensor<4xi32>
  %h = stablehlo.subtract %x, %z : tensor<4xi32>
  return %a, %b, %c, %d : tensor<4xi32>, tensor<4xi32>, tensor<4xi1>, tensor<4xf32>
}"""
    block = parse(src).function("main").regions[0].blocks[0]
    ops = block.operations
    x, p, g = 0, 1, 2
    known = {10: np.zeros(4, np.int32), 11: np.zeros(4, bool), 12: np.zeros(4, np.float32)}
    assert plan._identity_operand(ops[3], (10, x), known) == x          # 0 + x
    assert plan._identity_operand(ops[4], (10, x), known) is None       # 0 - x: not x
    assert plan._identity_operand(ops[5], (p, 11), known) == p          # p != false
    assert plan._identity_operand(ops[6], (g, 12), known) is None       # floats: -0.0 + 0.0
    assert plan._identity_operand(ops[7], (x, 10), known) == x          # x - 0
    # the same op on the same slots and equal known values has one key
    known2 = {**known, 13: np.zeros(4, np.int32)}
    k1 = plan._cse_key(ops[7], (x, 10), known2)
    assert k1 is not None and k1 == plan._cse_key(ops[8], (x, 13), known2)
    assert k1 != plan._cse_key(ops[8], (p, 13), known2)


# ------------------------------------------------------------------ merged sequence entries
def test_merged_sequence_kernel_and_select_entries():
    """Entries of seven items: a kernel called with its op (one and two operands), a rank-0
    select picked in the loop (a numpy bool with scalars) or by its picker (anything else)."""
    calls = []

    def k1(ctx, op, x):
        calls.append(op)
        return x * 2

    def k2(ctx, op, x, y):
        return x - y

    def picker(ctx, c, a, b):
        return ("picker", a if c else b)
    seq = ((k1, 0, -1, -2, 2, "kernel", "op1"), (k2, 2, 1, -2, 3, "kernel", "op2"),
           (picker, 4, 0, 1, 5, "select", None), (picker, 6, 0, 1, 7, "select", None))
    run = plan._sequence_runner(seq)
    f = [np.int32(5), np.int32(3), None, None, np.bool_(True), None, True, None]
    run(None, f)
    assert f[2] == 10 and f[3] == 7 and calls == ["op1"]
    assert f[5] == 5 and f[5].__class__ is np.int32            # picked in the loop
    assert f[7] == ("picker", 5)                                # a Python bool: the picker


def test_merged_sequence_putmask_select_entries():
    """A select of small arrays in the loop: a copy of the false operand with the true one
    put in (the operands left as they are); operands of two dtypes take the fallback."""
    def fallback(ctx, c, a, b):
        return ("fallback", np.where(c, a, b))
    c = np.array([True, False, True])
    a = np.array([1, 2, 3], np.int32)
    b = np.array([7, 8, 9], np.int32)
    seq = ((fallback, 0, 1, 2, 3, "putmask", None), (fallback, 0, 1, 4, 5, "putmask", None))
    run = plan._sequence_runner(seq)
    f = [c, a, b, None, b.astype(np.int64), None]
    run(None, f)
    assert f[3].tolist() == [1, 8, 3] and f[3].dtype == np.int32 and f[3] is not b
    assert b.tolist() == [7, 8, 9] and a.tolist() == [1, 2, 3]
    assert f[5][0] == "fallback"


# ------------------------------------------------------------------ f32 scalar rounding
def _unary_op(name, t="f32", src_t=None):
    src_t = src_t or t
    src = f"""func.func @main(%x: tensor<{src_t}>) -> tensor<{t}> {{
  %r = {name} %x : (tensor<{src_t}>) -> tensor<{t}>
  return %r : tensor<{t}>
}}"""
    return parse(src).function("main").regions[0].blocks[0].operations[0]


@settings(max_examples=300, deadline=None)
@given(bits=st.integers(0, (1 << 32) - 1))
def test_f32_scalar_unary_ops_round_as_the_kernel(bits):
    x = np.array(bits, np.uint32).view(np.float32)[()]
    with np.errstate(all="ignore"):
        for name in ("stablehlo.sine", "stablehlo.exponential", "stablehlo.log",
                     "stablehlo.tanh", "stablehlo.sqrt"):
            op = _unary_op(name)
            got = SPECIALIZERS[name](op)(None, op, x)
            want = np.asarray(KERNELS[name](None, op, np.asarray(x)))
            assert got.__class__ is np.float32, name
            assert np.asarray(got).tobytes() == want.tobytes(), (name, x, got, want)


@settings(max_examples=200, deadline=None)
@given(v=st.integers(-(1 << 31), (1 << 31) - 1))
def test_i32_scalar_convert_to_f32_rounds_as_the_kernel(v):
    op = _unary_op("stablehlo.convert", "f32", "i32")
    got = SPECIALIZERS["stablehlo.convert"](op)(None, op, np.int32(v))
    want = np.asarray(KERNELS["stablehlo.convert"](None, op, np.asarray(np.int32(v))))
    assert got.__class__ is np.float32 and np.asarray(got).tobytes() == want.tobytes()


# ------------------------------------------------------------------ scatter by ufunc.at
SCATTER = """func.func @main(%x: tensor<{n}x{t}>, %i: tensor<{m}x1xi32>, %u: tensor<{m}x{t}>) -> tensor<{n}x{t}> {{
  %r = "stablehlo.scatter"(%x, %i, %u) ({{
  ^bb0(%a: tensor<{t}>, %b: tensor<{t}>):
    %s = {body} %a, %b : tensor<{t}>
    stablehlo.return %s : tensor<{t}>
  }}) {{scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}} : (tensor<{n}x{t}>, tensor<{m}x1xi32>, tensor<{m}x{t}>) -> tensor<{n}x{t}>
  return %r : tensor<{n}x{t}>
}}"""


@pytest.mark.parametrize("t", ["f32", "f16", "f64", "i32", "ui8"])
@pytest.mark.parametrize("body", ["stablehlo.add", "stablehlo.multiply", "stablehlo.maximum"])
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_scatter_at_kernel_matches_the_general_scatter(t, body, data):
    n = data.draw(st.integers(1, 12))
    m = data.draw(st.integers(0, 40))
    op = parse(SCATTER.format(n=n, m=m, t=t, body=body)).function("main").regions[0] \
        .blocks[0].operations[0]
    fast = indexing.scatter_at_kernel(op)
    assert fast is not None
    dt = np.dtype({"f32": np.float32, "f16": np.float16, "f64": np.float64, "i32": np.int32,
                   "ui8": np.uint8}[t])
    idx = np.array(data.draw(st.lists(st.integers(-3, n + 2), min_size=m, max_size=m)),
                   np.int32).reshape(m, 1)
    for _ in range(3):          # the same index array again: its targets are kept
        x = np.array(data.draw(st.lists(st.integers(-100, 100), min_size=n, max_size=n)))
        u = np.array(data.draw(st.lists(st.integers(-100, 100), min_size=m, max_size=m)))
        x = (x * 0.37).astype(dt) if dt.kind == "f" else x.astype(dt)
        u = (u * 1.3).astype(dt) if dt.kind == "f" else u.astype(dt)
        with np.errstate(all="ignore"):
            got = fast(None, op, x, idx, u)[0]
            want = KERNELS["stablehlo.scatter"](None, op, x, idx, u)[0]
        assert got.dtype == want.dtype and got.tobytes() == want.tobytes()
        # rank-1 operands that are views with a stride (taken as they are, no flat copy)
        xs, us = np.repeat(x, 2)[::2], np.repeat(u, 2)[::2]
        with np.errstate(all="ignore"):
            got = fast(None, op, xs, idx, us)[0]
        assert got.dtype == want.dtype and got.tobytes() == want.tobytes()
    # an index array written into between runs (each top-level run counts one): its
    # targets are computed again
    if m:
        idx[...] = (idx + 1) % n
        RUN[0] += 1
        with np.errstate(all="ignore"):
            got = fast(None, op, x, idx, u)[0]
            want = KERNELS["stablehlo.scatter"](None, op, x, idx, u)[0]
        assert got.tobytes() == want.tobytes()


def test_scatter_in_a_loop_with_invariant_indices():
    src = """func.func @main(%d: tensor<64xf32>, %seg: tensor<64xi32>) -> tensor<6xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %z = stablehlo.constant dense<0.0> : tensor<6xf32>
  %r:4 = stablehlo.while(%i = %c0, %acc = %z, %dd = %d, %ss = %seg) : tensor<i32>, tensor<6xf32>, tensor<64xf32>, tensor<64xi32>
   cond {
    %n = stablehlo.constant dense<12> : tensor<i32>
    %lt = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %i2 = stablehlo.add %i, %one : tensor<i32>
    %fi = stablehlo.convert %i : (tensor<i32>) -> tensor<f32>
    %b = stablehlo.broadcast_in_dim %fi, dims = [] : (tensor<f32>) -> tensor<64xf32>
    %u = stablehlo.multiply %dd, %b : tensor<64xf32>
    %zz = stablehlo.constant dense<0.0> : tensor<6xf32>
    %ix = stablehlo.broadcast_in_dim %ss, dims = [0] : (tensor<64xi32>) -> tensor<64x1xi32>
    %s = "stablehlo.scatter"(%zz, %ix, %u) ({
    ^bb0(%a: tensor<f32>, %c: tensor<f32>):
      %t = stablehlo.add %a, %c : tensor<f32>
      stablehlo.return %t : tensor<f32>
    }) {scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>} : (tensor<6xf32>, tensor<64x1xi32>, tensor<64xf32>) -> tensor<6xf32>
    %acc2 = stablehlo.add %acc, %s : tensor<6xf32>
    stablehlo.return %i2, %acc2, %dd, %ss : tensor<i32>, tensor<6xf32>, tensor<64xf32>, tensor<64xi32>
  }
  return %r#1 : tensor<6xf32>
}"""
    rng = np.random.default_rng(3)
    d = rng.standard_normal(64).astype(np.float32)
    seg = rng.integers(-1, 7, 64).astype(np.int32)        # some out of bounds: skipped
    _both(src, d, seg)


# ------------------------------------------------------------------ fused loop moves
COND_ALIAS_LOOP = """func.func @main(%x0: tensor<i32>, %n: tensor<i32>) -> (tensor<i32>, tensor<i32>) {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = stablehlo.while(%i = %c0, %x = %x0) : tensor<i32>, tensor<i32>
   cond {
    %z = stablehlo.constant dense<0> : tensor<i32>
    %j = stablehlo.add %i, %z : tensor<i32>
    %k = stablehlo.convert %n : tensor<i32>
    %lt = stablehlo.compare LT, %j, %k, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %i2 = stablehlo.add %i, %one : tensor<i32>
    %x2 = stablehlo.multiply %x, %i2 : tensor<i32>
    %x3 = stablehlo.add %x2, %i : tensor<i32>
    stablehlo.return %i2, %x3 : tensor<i32>, tensor<i32>
  }
  return %r#0, %r#1 : tensor<i32>, tensor<i32>
}"""

SWAP_LOOP = """func.func @main(%a0: tensor<4xf32>, %b0: tensor<4xf32>, %n: tensor<i32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %r:3 = stablehlo.while(%i = %c0, %a = %a0, %b = %b0) : tensor<i32>, tensor<4xf32>, tensor<4xf32>
   cond {
    %lt = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %i2 = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %i2, %b, %a : tensor<i32>, tensor<4xf32>, tensor<4xf32>
  }
  return %r#1, %r#2 : tensor<4xf32>, tensor<4xf32>
}"""


@pytest.mark.parametrize("n", [0, 1, 2, 3, 8, 13])
def test_fused_loops_with_a_one_step_condition_move_their_values(n):
    """The condition (its operand an alias of its argument, read from the body's argument
    slot) and results that are moved slot to slot, or through a tuple where the body swaps
    two values."""
    i, x = _both(COND_ALIAS_LOOP, np.int32(3), np.int32(n))
    assert int(i) == max(n, 0)
    a, b = _both(SWAP_LOOP, np.arange(4, dtype=np.float32), -np.arange(4, dtype=np.float32),
                 np.int32(n))
    assert (a.tolist() == [0, 1, 2, 3]) == (n % 2 == 0)
