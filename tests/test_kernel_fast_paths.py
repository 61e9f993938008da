"""The kernels' fast paths against straightforward references: chlo.top_k's threshold
selection against a stable argsort (ties, NaNs, signed zeros, integer keys), convolution
against the loop oracle, dot_general's specializer against einsum (and an argument written
between runs), gather's specializer against the general kernel, triangular solves against
substitution, reduce_window's folds against a loop, sort against a stable sort by the
comparator."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import stablehlo_ref as shlo
from stablehlo_ref.interpreter.sorting import _top_k_by_threshold, _top_k_order, total_order_key


def _top_k_src(shape, k, et, it="i32"):
    t = "x".join(map(str, shape))
    r = "x".join(map(str, shape[:-1] + (k,)))
    return f"""func.func @main(%x: tensor<{t}x{et}>) -> (tensor<{r}x{et}>, tensor<{r}x{it}>) {{
  %0:2 = chlo.top_k(%x, k = {k}) : tensor<{t}x{et}> -> (tensor<{r}x{et}>, tensor<{r}x{it}>)
  return %0#0, %0#1 : tensor<{r}x{et}>, tensor<{r}x{it}>
}}"""


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2 ** 32 - 1), st.sampled_from([300, 1000, 4096]), st.integers(1, 60),
       st.sampled_from(["f32", "f64", "f16", "i32", "i64", "ui8"]), st.sampled_from([0, 3, 50, 10 ** 6]),
       st.booleans())
def test_top_k_matches_stable_argsort(seed, n, k, et, distinct, specials):
    rng = np.random.default_rng(seed)
    dt = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "i32": np.int32,
          "i64": np.int64, "ui8": np.uint8}[et]
    rows = 3
    if distinct:
        x = rng.integers(-distinct, distinct, (rows, n))
    else:
        x = rng.standard_normal((rows, n)) * 100
    with np.errstate(over="ignore"):       # f16: large values become infinities
        x = x.astype(dt)
    if specials and et[0] == "f":
        for v in (np.nan, -np.nan, np.inf, -np.inf, -0.0, 0.0):
            x[rng.integers(0, rows, 3), rng.integers(0, n, 3)] = v
    got_v, got_i = shlo.run(shlo.parse(_top_k_src((rows, n), k, et)), x)
    key = total_order_key(x) if et[0] == "f" else x.astype(np.int64)
    want = np.argsort(-key if et[0] != "f" else ~key, axis=-1, kind="stable")[:, :k]
    assert got_i.tolist() == want.tolist()
    assert got_v.view(np.uint8).tolist() == np.take_along_axis(x, want, -1).view(np.uint8).tolist()


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2 ** 32 - 1), st.sampled_from([257, 1000, 3000]), st.integers(1, 50),
       st.sampled_from([np.int16, np.int32, np.int64, np.uint8, np.uint64]), st.integers(1, 10 ** 6))
def test_top_k_threshold_selection(seed, n, k, dt, spread):
    rng = np.random.default_rng(seed)
    info = np.iinfo(dt)
    lo, hi = max(info.min, -spread), min(info.max, spread)
    key = rng.integers(lo, hi, (4, n), endpoint=True).astype(dt)
    key[0, rng.integers(0, n, 5)] = info.max          # the padding value is also a key
    key[1, rng.integers(0, n, 5)] = info.min
    want = np.argsort(key, axis=-1, kind="stable")[:, :k]
    got = _top_k_by_threshold(key, k)
    if got is not None:                                 # None: many ties, the partition path
        assert got.tolist() == want.tolist()
    assert _top_k_order(key, k).tolist() == want.tolist()


def test_top_k_threshold_selection_is_taken_on_distinct_keys():
    key = np.random.default_rng(1).permutation(4096).reshape(1, 4096)
    got = _top_k_by_threshold(key, 16)
    assert got is not None and got.tolist() == np.argsort(key, axis=-1)[:, :16].tolist()


# ------------------------------------------------------------------ convolution

def _conv_dims(lay, rlay, olay):
    sp = lambda s: [s.index(str(d)) for d in range(len(s) - 2)]   # noqa: E731
    return dict(input_batch_dimension=lay.index("b"), input_feature_dimension=lay.index("f"),
                input_spatial_dimensions=sp(lay), kernel_input_feature_dimension=rlay.index("i"),
                kernel_output_feature_dimension=rlay.index("o"), kernel_spatial_dimensions=sp(rlay),
                output_batch_dimension=olay.index("b"), output_feature_dimension=olay.index("f"),
                output_spatial_dimensions=sp(olay))


@st.composite
def _conv_configs(draw):
    ns = draw(st.integers(1, 2))
    sp = "".join(str(d) for d in range(ns))
    lay = "".join(draw(st.permutations("bf" + sp)))
    rlay = "".join(draw(st.permutations("io" + sp)))
    olay = "".join(draw(st.permutations("bf" + sp)))
    G = draw(st.sampled_from([1, 1, 2]))
    BG = 1 if G > 1 else draw(st.sampled_from([1, 1, 2]))
    I = draw(st.integers(1, 3))
    O = draw(st.integers(1, 2)) * G * BG
    B = draw(st.integers(1, 2)) * BG
    ls = {"b": B, "f": I * G}
    rs = {"i": I, "o": O}
    for d in range(ns):
        ls[str(d)] = draw(st.integers(1, 6))
        rs[str(d)] = draw(st.integers(1, 3))
    return dict(lay=lay, rlay=rlay, olay=olay, ls=tuple(ls[c] for c in lay), rs=tuple(rs[c] for c in rlay),
                strides=tuple(draw(st.integers(1, 3)) for _ in range(ns)),
                pad=tuple((draw(st.integers(-1, 2)), draw(st.integers(-1, 2))) for _ in range(ns)),
                ldil=tuple(draw(st.integers(1, 2)) for _ in range(ns)),
                rdil=tuple(draw(st.integers(1, 2)) for _ in range(ns)),
                rev=tuple(draw(st.booleans()) for _ in range(ns)), G=G, BG=BG)


@settings(max_examples=120, deadline=None)
@given(_conv_configs(), st.sampled_from(["i32", "f32", "f64"]), st.integers(0, 2 ** 32 - 1))
def test_convolution_matches_the_loop_oracle(cfg, et_name, seed):
    from stablehlo_ref.conformance.generated.linalg import conv_oracle
    from stablehlo_ref.interpreter.conv import convolve
    from stablehlo_ref.ir.types import ELEMENT_TYPES
    from stablehlo_ref.errors import InterpreterError
    et = ELEMENT_TYPES[et_name]
    rng = np.random.default_rng(seed)
    lhs = rng.integers(-4, 5, cfg["ls"]).astype(et.dtype)
    rhs = rng.integers(-4, 5, cfg["rs"]).astype(et.dtype)
    c = cfg
    try:
        shape, want, _ = conv_oracle(lhs.ravel().tolist(), rhs.ravel().tolist(), c["ls"], c["rs"], c["lay"],
                                     c["rlay"], c["olay"], c["strides"], c["pad"], c["ldil"], c["rdil"],
                                     c["rev"], c["G"], c["BG"])
    except (ValueError, ZeroDivisionError, IndexError, KeyError):
        return                       # a configuration the oracle has no windows for
    try:
        got = convolve(lhs, rhs, strides=list(c["strides"]), padding=list(c["pad"]),
                       lhs_dilation=list(c["ldil"]), rhs_dilation=list(c["rdil"]), reversal=list(c["rev"]),
                       dims=_conv_dims(c["lay"], c["rlay"], c["olay"]), feature_group_count=c["G"],
                       batch_group_count=c["BG"], et=et)
    except InterpreterError:
        assert any(s <= 0 for s in shape)
        return
    assert got.dtype == et.dtype and got.shape == tuple(shape)
    assert got.ravel().tolist() == want


# ------------------------------------------------------------------ dot_general

def _first_op(module, name):
    found = []

    def walk(op):
        if op.name == name:
            found.append(op)
        for r in op.regions:
            for b in r.blocks:
                for o in b.operations:
                    walk(o)
    for f in module.functions.values() if isinstance(module.functions, dict) else module.functions:
        walk(f)
    return found[0]


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2 ** 32 - 1), st.sampled_from(["f32", "f64", "i32", "f16"]), st.booleans(),
       st.booleans(), st.integers(0, 1), st.integers(1, 5), st.integers(1, 5), st.integers(1, 5))
def test_dot_general_specialized_matches_einsum(seed, et_name, lt, rt, nbatch, m, n, k):
    """Plain and transposed matrix operands (the layouts kept when cast) and batched ones,
    against einsum on exact small integers."""
    from stablehlo_ref.interpreter.linalg import dot_general_specialized
    from stablehlo_ref.ir.types import ELEMENT_TYPES
    et = ELEMENT_TYPES[et_name]
    rng = np.random.default_rng(seed)
    bsz = (3,) * nbatch
    lshape = bsz + ((k, m) if lt else (m, k))
    rshape = bsz + ((n, k) if rt else (k, n))
    lc, rc = nbatch + (0 if lt else 1), nbatch + (1 if rt else 0)
    bd = list(range(nbatch))
    ty = lambda s: f"tensor<{'x'.join(map(str, s))}x{et_name}>"     # noqa: E731
    oshape = bsz + (m, n)
    src = f"""func.func @main(%a: {ty(lshape)}, %b: {ty(rshape)}) -> {ty(oshape)} {{
  %0 = stablehlo.dot_general %a, %b, batching_dims = {bd} x {bd}, contracting_dims = [{lc}] x [{rc}] : ({ty(lshape)}, {ty(rshape)}) -> {ty(oshape)}
  return %0 : {ty(oshape)}
}}""" if nbatch else f"""func.func @main(%a: {ty(lshape)}, %b: {ty(rshape)}) -> {ty(oshape)} {{
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [{lc}] x [{rc}] : ({ty(lshape)}, {ty(rshape)}) -> {ty(oshape)}
  return %0 : {ty(oshape)}
}}"""
    op = _first_op(shlo.parse(src), "stablehlo.dot_general")
    kernel = dot_general_specialized(op, [None, None])
    assert kernel is not None
    a = rng.integers(-5, 6, lshape).astype(et.dtype)
    b = rng.integers(-5, 6, rshape).astype(et.dtype)
    la = "...km" if lt else "...mk"
    rb = "...nk" if rt else "...kn"
    want = np.einsum(f"{la},{rb}->...mn", a.astype(np.int64), b.astype(np.int64))
    for _ in range(2):                       # the second call reuses the arranged operands
        got = kernel(None, op, a, b)
        assert got.dtype == et.dtype and got.shape == oshape
        assert got.astype(np.int64).tolist() == want.tolist()
    assert shlo.run(shlo.parse(src), a, b)[0].astype(np.int64).tolist() == want.tolist()


# ------------------------------------------------------------------ gather

@st.composite
def _gather_configs(draw):
    rank = draw(st.integers(1, 3))
    oshape = tuple(draw(st.integers(1, 4)) for _ in range(rank))
    batching = rank >= 2 and draw(st.booleans())
    obd = [0] if batching else []                 # operand dim 0 batched with indices dim 0
    rest = [k for k in range(rank) if k not in obd]
    smap = draw(st.permutations(rest))[:draw(st.integers(1, len(rest)))] if rest else []
    if not smap:
        return None
    collapsed = sorted(k for k in smap if draw(st.booleans()))
    sizes = [1 if (k in collapsed or k in obd) else draw(st.integers(0, oshape[k])) for k in range(rank)]
    nbatch = draw(st.integers(0, 2)) + (1 if batching else 0)
    bshape = [oshape[0] if (batching and i == 0) else draw(st.integers(0, 3)) for i in range(nbatch)]
    ivd = draw(st.integers(0, nbatch))
    if batching and ivd == 0:
        ivd = nbatch
    ishape = bshape[:ivd] + [len(smap)] + bshape[ivd:]
    n_off = rank - len(collapsed) - len(obd)
    out_rank = nbatch + n_off
    offset_dims = sorted(draw(st.permutations(range(out_rank)))[:n_off])
    return dict(oshape=oshape, ishape=tuple(ishape), sizes=tuple(sizes), offset_dims=offset_dims,
                collapsed_slice_dims=collapsed, operand_batching_dims=obd,
                start_indices_batching_dims=[0] if batching else [], start_index_map=list(smap),
                index_vector_dim=ivd)


@settings(max_examples=150, deadline=None)
@given(_gather_configs(), st.integers(0, 2 ** 32 - 1), st.sampled_from(["f32", "i8", "ui64", "bf16"]))
def test_gather_specialized_matches_the_general_kernel(cfg, seed, et_name):
    from stablehlo_ref.interpreter.indexing import gather_array, gather_specialized
    from stablehlo_ref.ir.types import ELEMENT_TYPES
    if cfg is None:
        return
    et = ELEMENT_TYPES[et_name]
    rng = np.random.default_rng(seed)
    x = rng.integers(-100, 100, cfg["oshape"]).astype(et.dtype)
    idx = rng.integers(-3, 7, cfg["ishape"]).astype(np.int32)       # out of range: clamped
    dims = {k: cfg[k] for k in ("offset_dims", "collapsed_slice_dims", "operand_batching_dims",
                                "start_indices_batching_dims", "start_index_map", "index_vector_dim")}
    want = gather_array(x, idx, slice_sizes=cfg["sizes"], **dims)
    ty = lambda s, t: f"tensor<{''.join(f'{n}x' for n in s)}{t}>"    # noqa: E731
    lst = lambda v: "[" + ", ".join(map(str, v)) + "]"               # noqa: E731
    src = f"""func.func @main(%x: {ty(cfg['oshape'], et_name)}, %i: {ty(cfg['ishape'], 'i32')}) -> {ty(want.shape, et_name)} {{
  %0 = "stablehlo.gather"(%x, %i) <{{dimension_numbers = #stablehlo.gather<offset_dims = {lst(dims['offset_dims'])}, collapsed_slice_dims = {lst(dims['collapsed_slice_dims'])}, operand_batching_dims = {lst(dims['operand_batching_dims'])}, start_indices_batching_dims = {lst(dims['start_indices_batching_dims'])}, start_index_map = {lst(dims['start_index_map'])}, index_vector_dim = {dims['index_vector_dim']}>, slice_sizes = array<i64: {', '.join(map(str, cfg['sizes']))}>}}> : ({ty(cfg['oshape'], et_name)}, {ty(cfg['ishape'], 'i32')}) -> {ty(want.shape, et_name)}
  return %0 : {ty(want.shape, et_name)}
}}"""
    op = _first_op(shlo.parse(src), "stablehlo.gather")
    kernel = gather_specialized(op, [None, None])
    known = gather_specialized(op, [None, idx])        # the indices a constant
    assert kernel is not None and known is not None
    other = rng.integers(-3, 7, cfg["ishape"]).astype(np.int32)
    want_other = gather_array(x, other, slice_sizes=cfg["sizes"], **dims)
    for k, i, w in ((kernel, idx, want), (known, idx, want), (known, other, want_other)):
        got = k(None, op, x, i)
        assert got.dtype == w.dtype and got.shape == w.shape
        assert got.reshape(-1).view(np.uint8).tolist() == w.reshape(-1).view(np.uint8).tolist()


# ------------------------------------------------------------------ triangular solves

@settings(max_examples=80, deadline=None)
@given(st.integers(0, 2 ** 32 - 1), st.booleans(), st.booleans(), st.booleans(),
       st.sampled_from(["NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"]), st.booleans(), st.integers(1, 6),
       st.integers(1, 4))
def test_solve_triangular_matches_substitution(seed, left, lower, unit, trans, cplx, n, k):
    """triangular_solve's and the trsm custom calls' solver (only the named triangle read, a
    unit diagonal when asked, op(A) on either side) against forward/back substitution
    written out on op(A)."""
    from stablehlo_ref.interpreter.linalg import solve_triangular
    rng = np.random.default_rng(seed)
    cd = np.complex128 if cplx else np.float64
    a = rng.standard_normal((n, n)) + 3 * np.eye(n)
    b = rng.standard_normal((n, k) if left else (k, n))
    if cplx:
        a = a + 1j * rng.standard_normal((n, n))
        b = b + 1j * rng.standard_normal(b.shape)
    got = solve_triangular(a, b, left, lower, unit, trans, cd)
    assert got.shape == b.shape and got.dtype == cd
    t = np.tril(a) if lower else np.triu(a)
    if unit:
        np.fill_diagonal(t, 1)
    op = {"NO_TRANSPOSE": t, "TRANSPOSE": t.T, "ADJOINT": t.conj().T}[trans]
    m, rhs = (op, b) if left else (op.T, b.T)         # X op = B  <=>  op^T X^T = B^T
    forward = not np.allclose(np.tril(m, -1), 0)      # m is lower triangular
    x = np.zeros(rhs.shape, dtype=cd)
    order = range(n) if forward else range(n - 1, -1, -1)
    for i in order:
        x[i] = (rhs[i] - m[i] @ x) / m[i, i]
    want = x if left else x.T
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_solve_triangular_singular_or_nan_gives_nan_everywhere(left, dtype):
    """A zero on the diagonal (not a unit one) or a NaN operand: NaN everywhere, as the
    general path gives (one matrix goes through LAPACK's ?trtrs, a batch through the solve
    gufunc); with a unit diagonal the zero is not read."""
    from stablehlo_ref.interpreter.linalg import solve_triangular
    a = np.array([[2.0, 0.0, 0.0], [1.0, 0.0, 0.0], [4.0, 5.0, 3.0]], dtype)
    b = np.ones((3, 2) if left else (2, 3), dtype)
    with np.errstate(all="ignore"):
        for aa, bb in ((a, b), (a[None], b[None])):
            got = solve_triangular(aa, bb, left, True, False, "NO_TRANSPOSE", np.float64)
            assert got.shape == bb.shape and np.isnan(got).all()
        got = solve_triangular(a, b, left, True, True, "NO_TRANSPOSE", np.float64)
        assert np.isfinite(got).all()
        bn = b.copy()
        bn.reshape(-1)[1] = np.nan
        got = solve_triangular(np.eye(3, dtype=dtype) * 2, bn, left, True, False, "TRANSPOSE",
                               np.float64)
        assert np.isnan(got).any()


# ------------------------------------------------------------------ reduce_window folds

def naive_reduce_window(x, init, fn, window, strides, base, wdil, padding):
    """The spec's windows of the padded, base-dilated operand, each folded from `init` one
    element at a time in row-major order."""
    core = [(n - 1) * b + 1 for n, b in zip(x.shape, base)]
    full = np.full([c + lo + hi for c, (lo, hi) in zip(core, padding)], init, dtype=x.dtype)
    full[tuple(slice(lo, lo + c, b) for c, (lo, _), b in zip(core, padding, base))] = x
    eff = [(w - 1) * d + 1 for w, d in zip(window, wdil)]
    out_shape = [(n - e) // s + 1 if n >= e else 0 for n, e, s in zip(full.shape, eff, strides)]
    out = np.empty(out_shape, dtype=x.dtype)
    for ix in np.ndindex(*out_shape):
        win = full[tuple(slice(i * s, i * s + e, d) for i, s, e, d in zip(ix, strides, eff, wdil))]
        acc = init
        for v in win.reshape(-1):
            acc = fn(acc, v)
        out[ix] = acc
    return out


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 2 ** 32 - 1), st.sampled_from(["add", "maximum", "minimum", "multiply"]),
       st.sampled_from(["f32", "f16", "f64", "i32"]),
       st.tuples(st.integers(1, 3), st.integers(1, 3)), st.tuples(st.integers(1, 3), st.integers(1, 3)),
       st.tuples(st.integers(1, 2), st.integers(1, 2)), st.tuples(st.integers(1, 2), st.integers(1, 2)),
       st.tuples(st.tuples(st.integers(0, 1), st.integers(0, 1)), st.tuples(st.integers(0, 1), st.integers(0, 1))),
       st.booleans())
def test_reduce_window_folds_match_a_loop(seed, body, et_name, window, strides, base, wdil, padding, specials):
    """Small windows folded position by position against the spec's windows folded one
    element at a time in row-major order from the init value (in the element type)."""
    rng = np.random.default_rng(seed)
    dt = {"f32": np.float32, "f16": np.float16, "f64": np.float64, "i32": np.int32}[et_name]
    x = (rng.integers(-8, 9, (4, 5)) * (0.25 if et_name != "i32" else 1)).astype(dt)
    if specials and et_name != "i32":
        for v in (np.nan, np.inf, -np.inf, -0.0, 0.0, 1e4):
            x[rng.integers(0, 4), rng.integers(0, 5)] = v
    big = np.iinfo(dt).max if et_name == "i32" else np.inf
    init = {"add": 0, "multiply": 1, "maximum": -big, "minimum": big}[body]
    fn = {"add": np.add, "multiply": np.multiply, "maximum": np.maximum, "minimum": np.minimum}[body]
    with np.errstate(all="ignore"):
        want = naive_reduce_window(x, dt(init), lambda a, b: fn(dt(a), dt(b)), window, strides, base, wdil, padding)
    ty = lambda s: f"tensor<{'x'.join(map(str, s))}x{et_name}>"    # noqa: E731
    arr = lambda v: ", ".join(map(str, v))                          # noqa: E731
    pad = ", ".join(f"[{lo}, {hi}]" for lo, hi in padding)
    src = f"""func.func @main(%x: {ty(x.shape)}, %i: tensor<{et_name}>) -> {ty(want.shape)} {{
  %r = "stablehlo.reduce_window"(%x, %i) ({{
  ^bb0(%p: tensor<{et_name}>, %q: tensor<{et_name}>):
    %s = stablehlo.{body} %p, %q : tensor<{et_name}>
    stablehlo.return %s : tensor<{et_name}>
  }}) {{window_dimensions = array<i64: {arr(window)}>, window_strides = array<i64: {arr(strides)}>,
      base_dilations = array<i64: {arr(base)}>, window_dilations = array<i64: {arr(wdil)}>,
      padding = dense<[{pad}]> : tensor<2x2xi64>}} : ({ty(x.shape)}, tensor<{et_name}>) -> {ty(want.shape)}
  return %r : {ty(want.shape)}
}}"""
    got = shlo.run(shlo.parse(src), x, np.array(init, dtype=dt))[0]
    assert got.dtype == want.dtype and got.shape == want.shape
    # bit for bit, except which NaN a window of two NaNs keeps (-inf * 0 makes the CPU's
    # negative default NaN beside the operand's positive one): IEEE leaves that to the
    # machine, and numpy's vectorized loops and its scalar math pick differently
    nan = np.isnan(want)
    assert (np.isnan(got) == nan).all()
    assert got[~nan].view(np.uint8).tolist() == want[~nan].view(np.uint8).tolist()


# ------------------------------------------------------------------ sort candidates

def _tot(v):
    """IEEE totalOrder of one float as a Python sort key."""
    b = int(np.array(v, np.float64).view(np.int64))
    return b ^ 0x7FFFFFFFFFFFFFFF if b < 0 else b


def _canon(v):
    """jax's comparator canonicalization: -0 -> +0, every NaN -> one NaN."""
    return 0.0 if v == 0 else (float("nan") if v != v else v)


# jax's canonical form of a float key: -0 -> +0, every NaN -> one positive NaN
_JAX_CANON = """    %z = stablehlo.constant dense<0.0> : tensor<{t}>
    %n = stablehlo.constant dense<{nan}> : tensor<{t}>
    %e1 = stablehlo.compare EQ, %x, %z, FLOAT : (tensor<{t}>, tensor<{t}>) -> tensor<i1>
    %x1 = stablehlo.select %e1, %z, %x : tensor<i1>, tensor<{t}>
    %q1 = stablehlo.compare NE, %x, %x, FLOAT : (tensor<{t}>, tensor<{t}>) -> tensor<i1>
    %x2 = stablehlo.select %q1, %n, %x1 : tensor<i1>, tensor<{t}>
    %e2 = stablehlo.compare EQ, %y, %z, FLOAT : (tensor<{t}>, tensor<{t}>) -> tensor<i1>
    %y1 = stablehlo.select %e2, %z, %y : tensor<i1>, tensor<{t}>
    %q2 = stablehlo.compare NE, %y, %y, FLOAT : (tensor<{t}>, tensor<{t}>) -> tensor<i1>
    %y2 = stablehlo.select %q2, %n, %y1 : tensor<i1>, tensor<{t}>
"""
_NAN_HEX = {"f16": "0x7E00", "f32": "0x7FC00000", "f64": "0x7FF8000000000000"}
# the comparators `sorting._recognize_lexicographic` takes (sorted by keys, no comparator run)
_LEXICOGRAPHIC = ("gt_total", "jax_canonical_direct", "jax_int_then_canonical",
                  "jax_canonical_then_int", "canonical_desc_then_int_desc", "total_then_int")

_SORT_BODIES = {
    # (body, less(x, y, i, j) on Python values); operands %x %y (first), %i %j (second)
    "lt_float": ("""    %r = stablehlo.compare LT, %x, %y, FLOAT : (tensor<{t}>, tensor<{t}>) -> tensor<i1>
    stablehlo.return %r : tensor<i1>""", None),
    "gt_total": ("""    %r = stablehlo.compare GT, %x, %y, TOTALORDER : (tensor<{t}>, tensor<{t}>) -> tensor<i1>
    stablehlo.return %r : tensor<i1>""", lambda x, y, i, j: _tot(x) > _tot(y)),
    "jax_canonical": ("""    %z = stablehlo.constant dense<0.0> : tensor<{t}>
    %n = stablehlo.constant dense<0x7FC00000> : tensor<f32>
    %nc = stablehlo.convert %n : (tensor<f32>) -> tensor<{t}>
    %e1 = stablehlo.compare EQ, %x, %z, FLOAT : (tensor<{t}>, tensor<{t}>) -> tensor<i1>
    %x1 = stablehlo.select %e1, %z, %x : tensor<i1>, tensor<{t}>
    %q1 = stablehlo.compare NE, %x, %x, FLOAT : (tensor<{t}>, tensor<{t}>) -> tensor<i1>
    %x2 = stablehlo.select %q1, %nc, %x1 : tensor<i1>, tensor<{t}>
    %e2 = stablehlo.compare EQ, %y, %z, FLOAT : (tensor<{t}>, tensor<{t}>) -> tensor<i1>
    %y1 = stablehlo.select %e2, %z, %y : tensor<i1>, tensor<{t}>
    %q2 = stablehlo.compare NE, %y, %y, FLOAT : (tensor<{t}>, tensor<{t}>) -> tensor<i1>
    %y2 = stablehlo.select %q2, %nc, %y1 : tensor<i1>, tensor<{t}>
    %r = stablehlo.compare LT, %x2, %y2, TOTALORDER : (tensor<{t}>, tensor<{t}>) -> tensor<i1>
    stablehlo.return %r : tensor<i1>""", lambda x, y, i, j: _tot(_canon(x)) < _tot(_canon(y))),
    "int_then_float_desc": ("""    %lt = stablehlo.compare LT, %i, %j, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %eq = stablehlo.compare EQ, %i, %j, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %gt = stablehlo.compare GT, %x, %y, FLOAT : (tensor<{t}>, tensor<{t}>) -> tensor<i1>
    %a = stablehlo.and %eq, %gt : tensor<i1>
    %r = stablehlo.or %lt, %a : tensor<i1>
    stablehlo.return %r : tensor<i1>""", lambda x, y, i, j: i < j or (i == j and x > y)),
    "float_then_int_desc": ("""    %lt = stablehlo.compare LT, %x, %y, FLOAT : (tensor<{t}>, tensor<{t}>) -> tensor<i1>
    %eq = stablehlo.compare EQ, %x, %y, FLOAT : (tensor<{t}>, tensor<{t}>) -> tensor<i1>
    %gt = stablehlo.compare GT, %i, %j, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %a = stablehlo.and %eq, %gt : tensor<i1>
    %r = stablehlo.or %lt, %a : tensor<i1>
    stablehlo.return %r : tensor<i1>""", lambda x, y, i, j: x < y or (x == y and i > j)),
    # jax.lax.sort's comparators as jax writes them (the NaN constant of the element type)
    "jax_canonical_direct": (_JAX_CANON + """    %r = stablehlo.compare LT, %x2, %y2, TOTALORDER : (tensor<{t}>, tensor<{t}>) -> tensor<i1>
    stablehlo.return %r : tensor<i1>""", lambda x, y, i, j: _tot(_canon(x)) < _tot(_canon(y))),
    "jax_int_then_canonical": (_JAX_CANON + """    %lt = stablehlo.compare LT, %i, %j, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %eq = stablehlo.compare EQ, %i, %j, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c = stablehlo.compare LT, %x2, %y2, TOTALORDER : (tensor<{t}>, tensor<{t}>) -> tensor<i1>
    %a = stablehlo.and %eq, %c : tensor<i1>
    %r = stablehlo.or %lt, %a : tensor<i1>
    stablehlo.return %r : tensor<i1>""", lambda x, y, i, j: i < j or (i == j and _tot(_canon(x)) < _tot(_canon(y)))),
    "jax_canonical_then_int": (_JAX_CANON + """    %c = stablehlo.compare LT, %x2, %y2, TOTALORDER : (tensor<{t}>, tensor<{t}>) -> tensor<i1>
    %e = stablehlo.compare EQ, %x2, %y2, TOTALORDER : (tensor<{t}>, tensor<{t}>) -> tensor<i1>
    %lt = stablehlo.compare LT, %i, %j, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %a = stablehlo.and %e, %lt : tensor<i1>
    %r = stablehlo.or %c, %a : tensor<i1>
    stablehlo.return %r : tensor<i1>""", lambda x, y, i, j: _tot(_canon(x)) < _tot(_canon(y))
        or (_tot(_canon(x)) == _tot(_canon(y)) and i < j)),
    # descending through swapped operands, the and/or operands in the other order
    "canonical_desc_then_int_desc": (_JAX_CANON + """    %c = stablehlo.compare LT, %y2, %x2, TOTALORDER : (tensor<{t}>, tensor<{t}>) -> tensor<i1>
    %e = stablehlo.compare EQ, %y2, %x2, TOTALORDER : (tensor<{t}>, tensor<{t}>) -> tensor<i1>
    %gt = stablehlo.compare GT, %i, %j, UNSIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %a = stablehlo.and %gt, %e : tensor<i1>
    %r = stablehlo.or %a, %c : tensor<i1>
    stablehlo.return %r : tensor<i1>""", lambda x, y, i, j: _tot(_canon(x)) > _tot(_canon(y))
        or (_tot(_canon(x)) == _tot(_canon(y)) and (i % 2 ** 32) > (j % 2 ** 32))),
    # an EQ of another key than the LT beside it: not lexicographic (the comparator is run)
    "int_or_total_eq_and_lt": ("""    %lt = stablehlo.compare LT, %i, %j, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %e = stablehlo.compare EQ, %x, %y, TOTALORDER : (tensor<{t}>, tensor<{t}>) -> tensor<i1>
    %c = stablehlo.compare LT, %x, %y, TOTALORDER : (tensor<{t}>, tensor<{t}>) -> tensor<i1>
    %a = stablehlo.and %e, %c : tensor<i1>
    %r = stablehlo.or %lt, %a : tensor<i1>
    stablehlo.return %r : tensor<i1>""", lambda x, y, i, j: i < j),
    "total_then_int": ("""    %c = stablehlo.compare LT, %x, %y, TOTALORDER : (tensor<{t}>, tensor<{t}>) -> tensor<i1>
    %e = stablehlo.compare EQ, %x, %y, TOTALORDER : (tensor<{t}>, tensor<{t}>) -> tensor<i1>
    %lt = stablehlo.compare LT, %i, %j, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %a = stablehlo.and %e, %lt : tensor<i1>
    %r = stablehlo.or %c, %a : tensor<i1>
    stablehlo.return %r : tensor<i1>""", lambda x, y, i, j: _tot(x) < _tot(y) or (_tot(x) == _tot(y) and i < j)),
}


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 2 ** 32 - 1), st.sampled_from(sorted(_SORT_BODIES)), st.sampled_from(["f32", "f16", "f64"]),
       st.integers(1, 300), st.booleans(), st.booleans())
def test_sort_matches_a_stable_sort_by_the_comparator(seed, body, t, n, specials, ties):
    """The candidate keys (same-width integers, two keys combined) give the stable order the
    comparator defines; comparators that are no strict weak order on NaN (FLOAT LT) are
    checked where they are one (no NaN)."""
    _check_sort(seed, body, t, n, specials, ties)


@pytest.mark.parametrize("body", _LEXICOGRAPHIC)
def test_lexicographic_comparators_sort_by_keys_without_running_the_comparator(body, monkeypatch):
    """jax.lax.sort's comparators (canonical floats, several keys, either direction) are
    recognized: the order comes from keys alone, the comparator region is never run."""
    from stablehlo_ref.interpreter import sorting

    def no_run(*a, **k):
        raise AssertionError("the comparator was run")
    monkeypatch.setattr(sorting, "straight_runner", no_run)
    for seed, t, n, specials, ties in ((1, "f32", 300, True, True), (2, "f64", 57, True, False),
                                       (3, "f16", 1, False, True), (4, "f32", 2048, True, True)):
        _check_sort(seed, body, t, n, specials, ties)


@pytest.mark.parametrize("t", ["f32", "f64"])
def test_comparator_constants_defined_outside_the_region_are_recognized(t, monkeypatch):
    """torchax's exports define a comparator's constants (0 and the canonical NaN) in the
    enclosing function: the comparator is still recognized (keys alone, never run), and the
    order is the canonical total order, -0 equal to +0 and NaNs last, stable."""
    from stablehlo_ref.interpreter import sorting

    def no_run(*a, **k):
        raise AssertionError("the comparator was run")
    monkeypatch.setattr(sorting, "straight_runner", no_run)
    body = _SORT_BODIES["jax_canonical_then_int"][0].format(t=t, nan=_NAN_HEX[t])
    consts = "\n".join(line for line in _JAX_CANON.format(t=t, nan=_NAN_HEX[t]).splitlines()
                       if "stablehlo.constant" in line)
    body = "\n".join(line for line in body.splitlines() if "stablehlo.constant" not in line)
    n = 40
    src = f"""func.func @main(%a: tensor<{n}x{t}>, %b: tensor<{n}xi32>) -> (tensor<{n}x{t}>, tensor<{n}xi32>) {{
{consts}
  %r:2 = "stablehlo.sort"(%a, %b) ({{
  ^bb0(%x: tensor<{t}>, %y: tensor<{t}>, %i: tensor<i32>, %j: tensor<i32>):
{body}
  }}) {{dimension = 0 : i64, is_stable = true}} : (tensor<{n}x{t}>, tensor<{n}xi32>) -> (tensor<{n}x{t}>, tensor<{n}xi32>)
  return %r#0, %r#1 : tensor<{n}x{t}>, tensor<{n}xi32>
}}"""
    m = shlo.parse(src)
    sort_op = m.function("main").regions[0].blocks[0].operations[2]
    assert sort_op.name == "stablehlo.sort"
    assert sorting._recognize_lexicographic(sort_op.regions[0], 2) is not None
    rng = np.random.default_rng(5)
    dt = np.float32 if t == "f32" else np.float64
    x = rng.integers(-3, 4, n).astype(dt)
    x[[1, 7, 12, 30]] = [-0.0, np.nan, -np.nan, 0.0]
    i = rng.integers(-2, 3, n).astype(np.int32)
    got_x, got_i = shlo.run(m, x, i)
    key = [(_tot(_canon(v)), j, k) for k, (v, j) in enumerate(zip(x.tolist(), i.tolist()))]
    order = [k for _, _, k in sorted(key)]
    assert got_x.view(np.uint8).tolist() == x[order].view(np.uint8).tolist()
    assert got_i.tolist() == i[order].tolist()


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2 ** 32 - 1), st.sampled_from([np.int8, np.int32, np.int64, np.uint64, np.uint8]),
       st.integers(1, 3), st.integers(0, 200), st.integers(1, 3), st.booleans())
def test_packed_order_is_the_stable_lexicographic_argsort(seed, dt, nkeys, n, rows, extremes):
    """`_packed_order` (keys and index packed in one int64, sorted unstably) is the stable
    lexicographic argsort, or declines (None) where the bits do not fit."""
    from stablehlo_ref.interpreter.sorting import _packed_order
    rng = np.random.default_rng(seed)
    info = np.iinfo(dt)
    keys = []
    for _ in range(nkeys):
        if extremes:
            k = rng.integers(info.min, info.max, (rows, n), dtype=dt, endpoint=True)
        else:
            k = rng.integers(0, 5, (rows, n)).astype(dt)
        keys.append(k)
    got = _packed_order(keys)
    if n == 0:
        assert got is None
        return
    want = np.lexsort([np.broadcast_to(np.arange(n), (rows, n))] + keys[::-1], axis=-1)
    if got is None:
        bits = sum((int(k.max()) - int(k.min())).bit_length() for k in keys) + (n - 1).bit_length()
        assert bits > 62 or any(int(k.max()) >= 1 << 63 for k in keys)
    else:
        assert got.tolist() == want.tolist()


def _check_sort(seed, body, t, n, specials, ties):
    import functools
    rng = np.random.default_rng(seed)
    dt = {"f32": np.float32, "f16": np.float16, "f64": np.float64}[t]
    x = (rng.integers(-5, 6, n) if ties else rng.standard_normal(n) * 10).astype(dt)
    less = _SORT_BODIES[body][1]
    if specials:
        # (FLOAT compares leave NaN unordered)
        nan_ordered = body in ("gt_total", "jax_canonical") or body in _LEXICOGRAPHIC[1:6]
        for v in ((np.nan, -np.nan) if nan_ordered else ()) + (np.inf, -np.inf, -0.0, 0.0):
            x[rng.integers(0, n)] = v
    if less is None:
        less = lambda x, y, i, j: x < y                      # noqa: E731
    i = rng.integers(-2, 3, n).astype(np.int32)
    src = f"""func.func @main(%a: tensor<{n}x{t}>, %b: tensor<{n}xi32>) -> (tensor<{n}x{t}>, tensor<{n}xi32>) {{
  %r:2 = "stablehlo.sort"(%a, %b) ({{
  ^bb0(%x: tensor<{t}>, %y: tensor<{t}>, %i: tensor<i32>, %j: tensor<i32>):
{_SORT_BODIES[body][0].format(t=t, nan=_NAN_HEX[t])}
  }}) {{dimension = 0 : i64, is_stable = true}} : (tensor<{n}x{t}>, tensor<{n}xi32>) -> (tensor<{n}x{t}>, tensor<{n}xi32>)
  return %r#0, %r#1 : tensor<{n}x{t}>, tensor<{n}xi32>
}}"""
    got_x, got_i = shlo.run(shlo.parse(src), x, i)
    items = list(zip(x.tolist(), i.tolist(), range(n)))

    def cmp(p, q):
        return -1 if less(p[0], q[0], p[1], q[1]) else (1 if less(q[0], p[0], q[1], p[1]) else 0)
    order = [k for _, _, k in sorted(items, key=functools.cmp_to_key(cmp))]
    assert got_x.view(np.uint8).tolist() == x[order].view(np.uint8).tolist()
    assert got_i.tolist() == i[order].tolist()


def test_dot_general_sees_an_argument_written_between_runs():
    """The arranged operand dot_general keeps for an operand object lasts one run: a caller
    writing into its argument array between runs gets the product of the new values (the
    block is compiled after a few runs, so the specialized kernel is the one running)."""
    src = """func.func @main(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}"""
    m = shlo.parse(src)
    a = np.eye(2, dtype=np.float32)
    b = np.ones((2, 2), np.float32)
    for _ in range(8):
        assert shlo.run(m, a, b)[0].tolist() == [[1, 1], [1, 1]]
    b[:] = 5
    a[0, 1] = 1
    assert shlo.run(m, a, b)[0].tolist() == [[10, 10], [5, 5]]


def test_scatter_sees_indices_written_between_runs():
    """scatter keeps the targets of its last index array for one run only."""
    src = """func.func @main(%x: tensor<5xf32>, %i: tensor<2x1xi32>, %u: tensor<2xf32>) -> tensor<5xf32> {
  %0 = "stablehlo.scatter"(%x, %i, %u) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>} : (tensor<5xf32>, tensor<2x1xi32>, tensor<2xf32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}"""
    m = shlo.parse(src)
    x = np.zeros(5, np.float32)
    i = np.array([[0], [1]], np.int32)
    u = np.ones(2, np.float32)
    for _ in range(8):
        assert shlo.run(m, x, i, u)[0].tolist() == [1, 1, 0, 0, 0]
    i[:] = [[3], [4]]
    assert shlo.run(m, x, i, u)[0].tolist() == [0, 0, 0, 1, 1]


def _unary_src(name, shape, et):
    t = "x".join(map(str, shape)) + "x" + et if shape else et
    return f"""func.func @main(%x: tensor<{t}>) -> tensor<{t}> {{
  %0 = stablehlo.{name} %x : tensor<{t}>
  return %0 : tensor<{t}>
}}"""


_F64_BITS = {"nan_payload": 0x7FF8000000012345, "neg_nan": 0xFFF8000000000001}


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2 ** 32 - 1), st.sampled_from(["exponential", "tanh", "log", "sine"]),
       st.sampled_from(["f32", "f16"]), st.sampled_from([(), (7,), (40, 40), (3, 700)]),
       st.booleans())
def test_unary_in_f64_matches_the_widened_ufunc(seed, name, et, shape, specials):
    # the unary kernels on f16/f32 arrays (the planned kernel: repeated runs; the first run)
    # compute in a widened copy in place, exp with its operands below -104 put at -104
    # (rounding to +0 either way): the same bits as the ufunc on a new f64 array rounded once
    rng = np.random.default_rng(seed)
    dt = {"f32": np.float32, "f16": np.float16}[et]
    size = int(np.prod(shape))
    x = rng.standard_normal(size) * rng.choice([1.0, 30.0, 200.0, 1e9], size)
    if specials and size:
        vals = [np.nan, -np.inf, np.inf, -0.0, 0.0, -104.0, -103.97, -103.98, -103.9, 88.7, 89.0,
                -1e9, -745.2, -17.3]
        vals += [np.array(b, np.uint64).view(np.float64)[()] for b in _F64_BITS.values()]
        idx = rng.integers(0, size, len(vals))
        x[idx] = vals
    with np.errstate(all="ignore"):
        x = x.astype(dt).reshape(shape)
        fn = {"exponential": np.exp, "tanh": np.tanh, "log": np.log, "sine": np.sin}[name]
        want = np.asarray(fn(x.astype(np.float64))).astype(dt)
    m = shlo.parse(_unary_src(name, shape, et))
    bits = {np.float32: np.uint32, np.float16: np.uint16}[dt]
    for _ in range(3):
        got = np.asarray(shlo.run(m, x)[0])
        assert got.dtype == want.dtype and got.shape == want.shape
        assert got.view(bits).tolist() == want.view(bits).tolist()


# ------------------------------------------------------------------ gather of whole slices

@settings(max_examples=80, deadline=None)
@given(st.integers(0, 2 ** 32 - 1), st.integers(1, 3), st.data(),
       st.sampled_from(["i32", "i64", "ui8", "i8", "ui64"]),
       st.sampled_from(["implicit", "front", "back"]), st.booleans())
def test_gather_of_whole_slices_is_the_general_gather(seed, rank, data, it, ivec, batch_last):
    """A gather taking whole slices along one axis (x[i], embedding lookups) runs numpy's
    take with clamped indices where the result's dims are laid out as take lays them: the
    same result as the general kernel, indices past either end included; other layouts
    (the batch dims last) keep the general kernel's path."""
    from stablehlo_ref.interpreter import indexing
    rng = np.random.default_rng(seed)
    shape = tuple(int(v) for v in rng.integers(1, 5, rank))
    axis = data.draw(st.integers(0, rank - 1))
    nb = data.draw(st.integers(1, 2))
    bshape = tuple(int(v) for v in rng.integers(1, 4, nb))
    dt = {"i32": np.int32, "i64": np.int64, "ui8": np.uint8, "i8": np.int8, "ui64": np.uint64}[it]
    lo = 0 if it.startswith("ui") else -3
    idx = rng.integers(lo, shape[axis] + 3, bshape).astype(dt)
    if ivec == "front":
        ishape, ivd = (1,) + bshape, 0
    elif ivec == "back":
        ishape, ivd = bshape + (1,), nb
    else:
        ishape, ivd = bshape, nb
    idx = idx.reshape(ishape)
    take_layout = list(range(axis)) + list(range(axis + nb, nb + rank - 1))
    offset = list(range(rank - 1)) if batch_last else take_layout
    batch_pos = [k for k in range(nb + rank - 1) if k not in offset]
    out_shape = [0] * (nb + rank - 1)
    for k, n in zip(batch_pos, bshape):
        out_shape[k] = n
    for k, n in zip(offset, [n for j, n in enumerate(shape) if j != axis]):
        out_shape[k] = n
    out_shape = tuple(out_shape)
    sizes = [1 if j == axis else n for j, n in enumerate(shape)]

    def t(s, e):
        return "tensor<" + "x".join(map(str, s)) + ("x" if s else "") + e + ">"
    src = f"""func.func @main(%x: {t(shape, "f32")}, %i: {t(ishape, it)}) -> {t(out_shape, "f32")} {{
  %0 = "stablehlo.gather"(%x, %i) <{{dimension_numbers = #stablehlo.gather<offset_dims = [{", ".join(map(str, offset))}], collapsed_slice_dims = [{axis}], start_index_map = [{axis}], index_vector_dim = {ivd}>, slice_sizes = array<i64: {", ".join(map(str, sizes))}>}}> : ({t(shape, "f32")}, {t(ishape, it)}) -> {t(out_shape, "f32")}
  return %0 : {t(out_shape, "f32")}
}}"""
    x = rng.standard_normal(shape).astype(np.float32)
    m = shlo.parse(src)
    op = m.functions["main"].regions[0].blocks[0].operations[0]
    kernel = indexing.gather_specialized(op).__name__
    assert kernel == ("gather_take" if offset == take_layout else "gather_static")
    got = shlo.run(m, x, idx)[0]
    want = indexing.gather_array(x, idx, slice_sizes=sizes, **indexing._gather_dims(op))
    assert got.shape == out_shape and got.tobytes() == np.asarray(want).tobytes()


@pytest.mark.parametrize("t,dt,it", [("f16", np.float16, np.uint16), ("f32", np.float32, np.uint32),
                                     ("f64", np.float64, np.uint64)])
def test_totalorder_compare_of_native_floats_is_the_wide_key_compare(t, dt, it):
    """TOTALORDER compares of f16/f32/f64 arrays on keys of the floats' own width give what
    the int64 totalOrder keys give, every direction, over random bit patterns (NaNs of both
    signs and any payload, zeros of both signs, subnormals) and equal pairs."""
    from stablehlo_ref.interpreter.elementwise import total_order_key
    rng = np.random.default_rng(13)
    n = 20000
    a = rng.integers(0, np.iinfo(it).max, n, dtype=it, endpoint=True).view(dt)
    b = np.concatenate([rng.integers(0, np.iinfo(it).max, n // 2, dtype=it, endpoint=True).view(dt),
                        a[:n // 2]])
    ty = f"tensor<{n}x{t}>"
    for d, fn in (("EQ", np.equal), ("NE", np.not_equal), ("LT", np.less), ("LE", np.less_equal),
                  ("GT", np.greater), ("GE", np.greater_equal)):
        m = shlo.parse(f"""func.func @main(%a: {ty}, %b: {ty}) -> tensor<{n}xi1> {{
  %0 = stablehlo.compare {d}, %a, %b, TOTALORDER : ({ty}, {ty}) -> tensor<{n}xi1>
  return %0 : tensor<{n}xi1>
}}""")
        got = shlo.run(m, a, b)[0]
        assert got.tolist() == fn(total_order_key(a), total_order_key(b)).tolist(), d
