"""The evaluator's fast paths give the same bits as the general ones: compiled blocks (Python
operators on numpy scalars, constants bound once) vs the first, step-by-step run; rank-0
integer divide/remainder in Python integers vs the array kernels; prefix reduce_windows as
`ufunc.accumulate` and float scatter-add as `ufunc.at` vs the window / round paths; a plain
matrix product through `ndarray.dot` vs dot_general's general path."""
import itertools

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import stablehlo_ref
from stablehlo_ref.interpreter import indexing, windows
from stablehlo_ref.interpreter.elementwise import _int_div, _int_rem, _scalar_int_div_rem
from stablehlo_ref.interpreter.numerics import elem, wrap_int
from stablehlo_ref.ir.types import element_type
from stablehlo_ref.text import parse

LOOP = """func.func @main(%x0: tensor<{t}>, %y0: tensor<{t}>) -> (tensor<{t}>, tensor<{t}>, tensor<i1>) {{
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %r:4 = stablehlo.while(%i = %c0, %x = %x0, %y = %y0, %p = %false) : tensor<i32>, tensor<{t}>, tensor<{t}>, tensor<i1>
   cond {{
    %n = stablehlo.constant dense<40> : tensor<i32>
    %lt = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  }} do {{
    %one = stablehlo.constant dense<1> : tensor<i32>
    %i2 = stablehlo.add %i, %one : tensor<i32>
    %a = stablehlo.multiply %x, %y : tensor<{t}>
    %b = stablehlo.add %a, %x : tensor<{t}>
    %c = stablehlo.subtract %b, %y : tensor<{t}>
    %q = stablehlo.compare GT, %c, %x, {ctype} : (tensor<{t}>, tensor<{t}>) -> tensor<i1>
    %s = stablehlo.select %q, %c, %y : tensor<i1>, tensor<{t}>
    %o = stablehlo.or %p, %q : tensor<i1>
    stablehlo.return %i2, %s, %c, %o : tensor<i32>, tensor<{t}>, tensor<{t}>, tensor<i1>
  }}
  return %r#1, %r#2, %r#3 : tensor<{t}>, tensor<{t}>, tensor<i1>
}}"""


@pytest.mark.parametrize("t", ["i8", "i32", "i64", "ui8", "ui32", "ui64", "f16", "f32", "f64", "bf16"])
def test_compiled_loop_matches_the_step_by_step_run(t):
    ctype = "FLOAT" if "f" in t else ("UNSIGNED" if t.startswith("ui") else "SIGNED")
    src = LOOP.format(t=t, ctype=ctype).replace("%p = %false", "%p = %f")
    src = src.replace("  %c0 = stablehlo.constant dense<0> : tensor<i32>\n",
                      "  %c0 = stablehlo.constant dense<0> : tensor<i32>\n"
                      "  %f = stablehlo.constant dense<false> : tensor<i1>\n")
    dt = element_type(t).dtype
    x, y = np.array(3).astype(dt), np.array(7).astype(dt)
    compiled = stablehlo_ref.run(parse(src), x, y)    # the body runs 40 times: compiled
    # each op on its own, through the kernels (the block plans are never compiled)
    from stablehlo_ref.interpreter import plan
    old = plan._MAX_COMPILED_STEPS
    plan._MAX_COMPILED_STEPS = -1
    try:
        stepwise = stablehlo_ref.run(parse(src), x, y)
    finally:
        plan._MAX_COMPILED_STEPS = old
    for a, b in zip(compiled, stepwise):
        assert isinstance(a, np.ndarray) and a.shape == () and a.dtype == b.dtype
        assert a.tobytes() == b.tobytes()


@pytest.mark.parametrize("t", ["i8", "i16", "i32", "i64", "ui8", "ui32", "ui64", "i4", "ui4"])
def test_scalar_integer_divide_and_remainder(t):
    et = element_type(t)
    bits = et.bits
    if et.is_signed:
        vals = [-(1 << (bits - 1)), -7, -1, 0, 1, 3, (1 << (bits - 1)) - 1]
    else:
        vals = [0, 1, 3, 7, (1 << bits) - 1]
    wide = np.int64 if et.is_signed else np.uint64
    for x, y in itertools.product(vals, vals):
        a = np.array(x).astype(wide).astype(et.dtype)
        b = np.array(y).astype(wide).astype(et.dtype)
        for rem, fn in ((False, _int_div), (True, _int_rem)):
            ref = wrap_int(fn(a, b, et), et)
            got = _scalar_int_div_rem(a, b, et, rem)
            assert got.dtype == et.dtype and int(got) == int(ref), (x, y, rem)


def _window_program(t, op, init):
    return f"""func.func @main(%x: tensor<3x50x{t}>) -> tensor<3x50x{t}> {{
  %c = stablehlo.constant dense<{init}> : tensor<{t}>
  %r = "stablehlo.reduce_window"(%x, %c) <{{padding = dense<[[0, 0], [49, 0]]> : tensor<2x2xi64>, window_dimensions = array<i64: 1, 50>}}> ({{
    ^bb0(%a: tensor<{t}>, %b: tensor<{t}>):
      %2 = stablehlo.{op} %a, %b : tensor<{t}>
      stablehlo.return %2 : tensor<{t}>
    }}) : (tensor<3x50x{t}>, tensor<{t}>) -> tensor<3x50x{t}>
  return %r : tensor<3x50x{t}>
}}"""


@pytest.mark.parametrize("t,op", [("f32", "add"), ("f32", "multiply"), ("f32", "maximum"),
                                  ("f16", "add"), ("f64", "minimum"), ("i32", "add"),
                                  ("i8", "multiply"), ("i32", "maximum")])
@pytest.mark.parametrize("init", ["0", "-0.0", "1", "3"])
@pytest.mark.parametrize("special", [False, True])
def test_prefix_reduce_window_matches_the_window_fold(t, op, init, special, monkeypatch):
    if not t.startswith("f") and "." in init:
        pytest.skip("float init")
    dt = element_type(t).dtype
    x = (np.random.default_rng(0).standard_normal((3, 50)) * 3).astype(dt)
    if special:
        x[0, 0] = 0
        if t.startswith("f"):
            x[0, 0] = -0.0
            x[1, 3] = np.nan
    if t.startswith("f") and "." not in init:
        init += ".0"          # MLIR reads no decimal integer literal as a float element
    src = _window_program(t, op, init)
    fast = stablehlo_ref.run(parse(src), x)[0]
    monkeypatch.setattr(windows, "_prefix_scan", lambda *a: None)
    slow = stablehlo_ref.run(parse(src), x)[0]
    assert fast.tobytes() == slow.tobytes()


@pytest.mark.parametrize("t", ["f16", "f32", "f64"])
@pytest.mark.parametrize("op", ["stablehlo.add", "stablehlo.multiply"])
def test_float_scatter_fold_with_ufunc_at_is_sequential(t, op):
    from stablehlo_ref.ir.types import TensorType
    et = element_type(t)
    rng = np.random.default_rng(3)
    flat = rng.standard_normal(16).astype(et.dtype)
    targets = rng.integers(0, 16, 300)
    values = (rng.standard_normal(300) * (0.9 if op.endswith("multiply") else 1e3)).astype(et.dtype)
    rt = [TensorType((16,), et)]
    fast = indexing.apply_updates(None, None, [flat], targets, [values], rt, body=op)[0]
    # a direct sequential fold, each step computed in float64 and rounded to the dtype
    ref = flat.copy()
    fn = np.add if op.endswith("add") else np.multiply
    for i, v in zip(targets, values):
        ref[i] = fn(ref[i].astype(np.float64), np.float64(v)).astype(et.dtype)
    assert fast.tobytes() == ref.tobytes()


def test_large_dead_values_are_released():
    """A chain of large values keeps only what is still used: the plan clears a large value's
    slot after its last use."""
    src = """func.func @main(%x: tensor<100000xf32>) -> tensor<100000xf32> {
  %a = stablehlo.add %x, %x : tensor<100000xf32>
  %b = stablehlo.multiply %a, %a : tensor<100000xf32>
  %c = stablehlo.subtract %b, %x : tensor<100000xf32>
  return %c : tensor<100000xf32>
}"""
    m = parse(src)
    x = np.ones(100000, np.float32)
    # (the first run is the one-pass run, which drops the same values from its dict; the
    # second plans the body)
    for _ in range(2):
        np.testing.assert_array_equal(stablehlo_ref.run(m, x)[0], np.full(100000, 3, np.float32))
    plan = m.function("main").regions[0].blocks[0]._cache
    freed = [step[5] for step in plan.steps]
    slot = plan.info.slots
    ops = m.function("main").regions[0].blocks[0].operations
    a, b = ops[0].results[0], ops[1].results[0]
    assert slot[a] in freed[1] and slot[b] in freed[2]


def test_complex_1x1_product_keeps_the_sign_of_a_zero_imaginary_part():
    """(-3+0j) * (-2+0j): numpy's complex `dot` gives 6-0j, the general product (a sum from
    +0) 6+0j; the kernel must give the general path's bytes (a hypothesis example found it)."""
    from stablehlo_ref.interpreter import linalg
    from stablehlo_ref.interpreter.registry import KERNELS
    t = "complex<f32>"
    src = f"""func.func @main(%a: tensor<1x1x{t}>, %b: tensor<1x1x{t}>) -> tensor<1x1x{t}> {{
  %r = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<1x1x{t}>, tensor<1x1x{t}>) -> tensor<1x1x{t}>
  return %r : tensor<1x1x{t}>
}}"""
    op = parse(src).function("main").regions[0].blocks[0].operations[0]
    a = np.array([[-3 + 0j]], np.complex64)
    b = np.array([[-2 + 0j]], np.complex64)
    fast = KERNELS["stablehlo.dot_general"](None, op, a, b)
    ref = linalg.dot_general_arrays(a, b, (), (), (1,), (0,), elem(op.results[0].type))
    assert fast.tobytes() == ref.tobytes()
    assert not np.signbit(fast.imag[0, 0])


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 40), st.integers(1, 40), st.integers(1, 40),
       st.sampled_from(["f32", "f64", "i32", "ui64", "complex<f32>", "i1", "bf16"]),
       st.integers(0, 2 ** 32 - 1))
def test_plain_matrix_product_matches_the_general_dot_general(m, k, n, t, seed):
    """dot_general's 2-D fast path (`ndarray.dot`) gives the bytes the general path
    (`dot_general_arrays`: permutations and a batched matmul) gives."""
    from stablehlo_ref.interpreter import linalg
    from stablehlo_ref.interpreter.registry import KERNELS
    src = f"""func.func @main(%a: tensor<{m}x{k}x{t}>, %b: tensor<{k}x{n}x{t}>) -> tensor<{m}x{n}x{t}> {{
  %r = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<{m}x{k}x{t}>, tensor<{k}x{n}x{t}>) -> tensor<{m}x{n}x{t}>
  return %r : tensor<{m}x{n}x{t}>
}}"""
    op = parse(src).function("main").regions[0].blocks[0].operations[0]
    et = elem(op.results[0].type)
    rng = np.random.default_rng(seed)
    a = (rng.standard_normal((m, k)) * 50).astype(et.dtype)
    b = (rng.standard_normal((k, n)) * 50).astype(et.dtype)
    fast = KERNELS["stablehlo.dot_general"](None, op, a, b)
    ref = linalg.dot_general_arrays(a, b, (), (), (1,), (0,), et)
    assert fast.dtype == ref.dtype and fast.tobytes() == ref.tobytes()


def _dot_src(lshape, rshape, lc, rc, oshape, t):
    ty = lambda s: f"tensor<{''.join(f'{d}x' for d in s)}{t}>"     # noqa: E731
    return f"""func.func @main(%a: {ty(lshape)}, %b: {ty(rshape)}) -> {ty(oshape)} {{
  %r = stablehlo.dot_general %a, %b, contracting_dims = [{lc}] x [{rc}] : ({ty(lshape)}, {ty(rshape)}) -> {ty(oshape)}
  return %r : {ty(oshape)}
}}"""


@st.composite
def _unbatched_dots(draw):
    """A dot_general without batch dimensions of operands of rank 1 or 2 (not both 1), each
    contracted on either dimension: (lhs shape, rhs shape, lc, rc, result shape)."""
    k = draw(st.sampled_from([1, 2, 7, 64, 300]))
    lrank, rrank = draw(st.sampled_from([(1, 2), (2, 1), (2, 2), (2, 2)]))
    m = draw(st.sampled_from([1, 1, 3, 40]))
    n = draw(st.sampled_from([1, 1, 5, 33]))
    lc = draw(st.integers(0, lrank - 1))
    rc = draw(st.integers(0, rrank - 1))
    lshape = (k,) if lrank == 1 else ((m, k) if lc == 1 else (k, m))
    rshape = (k,) if rrank == 1 else ((k, n) if rc == 0 else (n, k))
    oshape = ((m,) if lrank == 2 else ()) + ((n,) if rrank == 2 else ())
    return lshape, rshape, lc, rc, oshape


def _matmul_in_layout(a, b, lc, rc, oshape, et):
    """The product as dot_general's specializer has computed it: each operand moved to
    (free, contracting) / (contracting, free), cast to f64 (a matrix in its memory order, a
    vector row-major), one np.matmul of batch 1, rounded once."""
    f64 = np.float64
    la = a.astype(f64).reshape(1, 1, -1) if a.ndim == 1 else (a if lc == 1 else a.T).astype(f64, order="K")[None]
    rb = b.astype(f64).reshape(1, -1, 1) if b.ndim == 1 else (b if rc == 0 else b.T).astype(f64, order="K")[None]
    return np.matmul(la, rb).reshape(oshape).astype(et.dtype)


@settings(max_examples=80, deadline=None)
@given(_unbatched_dots(), st.sampled_from(["f32", "f64", "bf16", "f16"]), st.integers(0, 2 ** 32 - 1),
       st.booleans())
def test_unbatched_float_dot_general_matches_the_batched_matmul_path(case, t, seed, views):
    """dot_general's general kernel on float operands of rank 1-2 without batch dimensions
    (`ndarray.dot`, a matrix product's transposed operand kept as a view) gives the bytes of
    the specializer's kernel (on a second call, operands kept arranged, too) and values close
    to the batched path (`dot_general_arrays`: row-major copies and np.matmul); for a product
    of matrices, the specializer's bytes are those np.matmul gives for the layout it gives its
    operands (a plain matrix in its memory order)."""
    from stablehlo_ref.interpreter import linalg
    from stablehlo_ref.interpreter.registry import KERNELS, SPECIALIZERS
    lshape, rshape, lc, rc, oshape = case
    op = parse(_dot_src(lshape, rshape, lc, rc, oshape, t)).function("main").regions[0].blocks[0].operations[0]
    et = elem(op.results[0].type)
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(lshape).astype(et.dtype)
    b = rng.standard_normal(rshape).astype(et.dtype)
    if views and len(lshape) == 2:          # the same values in a transposed layout
        a = np.ascontiguousarray(a.T).T
    ref = linalg.dot_general_arrays(a, b, (), (), (lc,), (rc,), et)
    got = KERNELS["stablehlo.dot_general"](None, op, a, b)
    assert got.dtype == ref.dtype and got.shape == ref.shape == oshape
    special = SPECIALIZERS["stablehlo.dot_general"](op)
    assert special is not None
    gemv = len(lshape) == 1 or len(rshape) == 1 or 1 in lshape + rshape
    want = _matmul_in_layout(a, b, lc, rc, oshape, et)
    for _ in range(2):
        s = special(None, op, a, b)
        assert s.__class__ is np.ndarray and s.dtype == ref.dtype and s.shape == oshape
        # the general kernel's bytes, always (a first run and a compiled run agree)
        assert s.tobytes() == got.tobytes()
        if not gemv:
            assert s.tobytes() == want.tobytes()
    # (So the general kernel and the specializer's give the same bytes for the same operands,
    # GEMVs included: an op's result does not depend on which tier runs it.) Against the
    # batched path (row-major copies) only closeness is asserted: which order a BLAS sums a transposed operand in is the
    # host's choice (this machine's OpenBLAS sums an f64 lhs contracted on its dimension 0 in
    # another order than its row-major copy), not something this project decides.
    # |got - ref| <= (|a|.|b|) (2 k eps + 2 eps_out): two sums of k products in any order, each
    # rounded once to the result type
    import ml_dtypes
    k = lshape[lc]
    eps = float(np.finfo(np.float64 if t == "f64" else np.float32).eps)
    eps_out = float(ml_dtypes.finfo(et.dtype).eps)
    mag = linalg.dot_general_arrays(np.abs(a.astype(np.float64)), np.abs(b.astype(np.float64)),
                                    (), (), (lc,), (rc,), elem(parse(_dot_src(
                                        lshape, rshape, lc, rc, oshape, "f64")).function("main")
                                        .regions[0].blocks[0].operations[0].results[0].type))
    diff = np.abs(got.astype(np.float64) - ref.astype(np.float64))
    assert (diff <= mag * (2 * k * eps + 2 * eps_out)).all()


@pytest.mark.parametrize("t", ["f32", "i32", "i1"])
def test_broadcast_of_a_numpy_scalar_to_one_element_matches_the_general_kernel(t):
    """broadcast_in_dim of a rank-0 operand to shape [1] (a scan storing a full reduction)
    given a numpy scalar: a new array of its value, as the general kernel makes it."""
    from stablehlo_ref.interpreter.registry import KERNELS, SPECIALIZERS
    src = f"""func.func @main(%x: tensor<{t}>) -> tensor<1x{t}> {{
  %r = stablehlo.broadcast_in_dim %x, dims = [] : (tensor<{t}>) -> tensor<1x{t}>
  return %r : tensor<1x{t}>
}}"""
    op = parse(src).function("main").regions[0].blocks[0].operations[0]
    dt = elem(op.results[0].type).dtype
    x = np.ones((), dt)[()]
    special = SPECIALIZERS["stablehlo.broadcast_in_dim"](op)
    got = special(None, op, x)
    want = KERNELS["stablehlo.broadcast_in_dim"](None, op, x)
    assert got.__class__ is np.ndarray and got.dtype == want.dtype and got.shape == (1,)
    assert got.tobytes() == want.tobytes() and got.flags.writeable and got.base is None
