"""Fast paths of straight-line kernels against the general paths they stand for, bit for bit:
the real-float triangular solve (numpy's solve gufunc on the triangle built in two calls)
against the general solve (singular, NaN and infinite matrices included), getrf's in-place
factorization against the copy-in/copy-out one it replaced, f32 maximum/minimum in f32
against the f64 round trip (signed zeros, NaNs, broadcast and reversed layouts), an iota
made once per op against a fresh one, and the general gather kernel (which runs its
specializer's kernel) against `gather_array`."""
import numpy as np
from hypothesis import given, settings, strategies as st

import stablehlo_ref
from stablehlo_ref.interpreter import elementwise, indexing, jax_calls, linalg
from stablehlo_ref.text import parse


def _same(x, y):
    assert x.dtype == y.dtype and x.shape == y.shape
    assert np.ascontiguousarray(x).tobytes() == np.ascontiguousarray(y).tobytes()


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 2 ** 32 - 1), st.integers(1, 6), st.integers(1, 4),
       st.lists(st.integers(1, 2), max_size=2), st.sampled_from([np.float32, np.float64]),
       st.booleans(), st.booleans(), st.booleans(),
       st.sampled_from(["NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"]),
       st.sampled_from(["none", "zero_pivot", "nan", "inf"]))
def test_real_triangular_solve_matches_the_general_solve(seed, n, k, batch, dt, left, lower, unit,
                                                         trans, special):
    rng = np.random.default_rng(seed)
    bs = tuple(batch)
    a = rng.standard_normal(bs + (n, n)).astype(dt)
    b = rng.standard_normal(bs + ((n, k) if left else (k, n))).astype(dt)
    if special == "zero_pivot":
        a[..., n - 1, n - 1] = 0
    elif special == "nan":
        a.reshape(-1)[rng.integers(0, a.size)] = np.nan
    elif special == "inf":
        a.reshape(-1)[rng.integers(0, a.size)] = np.inf
    with np.errstate(all="ignore"):
        got = linalg.solve_triangular(a, b, left, lower, unit, trans, np.float64)
        want = linalg._solve_triangular_general(a, b, left, lower, unit, trans, np.float64)
    _same(got, want)


def _getrf_before(a):
    """getrf as it was written before the in-place version (copies in and out of LAPACK)."""
    from scipy.linalg import lapack
    m, n = a.shape[-2:]
    batch = a.shape[:-2]
    wide = np.array(a.reshape((-1, m, n)), dtype=np.complex128 if np.iscomplexobj(a) else np.float64)
    nb = wide.shape[0]
    k_max = min(m, n)
    ipiv = np.zeros((nb, k_max), dtype=np.int32)
    info = np.zeros(nb, dtype=np.int32)
    getrf = lapack.zgetrf if np.iscomplexobj(wide) else lapack.dgetrf
    for i in range(nb):
        if m == 0 or n == 0:
            break
        lu_b, piv, inf = getrf(wide[i], overwrite_a=True)
        wide[i] = lu_b
        ipiv[i] = piv[:k_max] + 1
        info[i] = max(int(inf), 0)
    return [wide.reshape(a.shape).astype(a.dtype), ipiv.reshape(batch + (k_max,)), info.reshape(batch)]


class _Op:
    attributes = {}

    def where(self):
        return ""


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 2 ** 32 - 1), st.integers(0, 5), st.integers(0, 5),
       st.lists(st.integers(1, 3), max_size=2), st.sampled_from([np.float32, np.float64, np.complex64]),
       st.booleans())
def test_getrf_in_place_matches_the_copying_version(seed, m, n, batch, dt, singular):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(tuple(batch) + (m, n))
    if dt is np.complex64:
        a = a + 1j * rng.standard_normal(a.shape)
    a = a.astype(dt)
    if singular and m and n:
        a[..., :, 0] = 0
    got = jax_calls._getrf(None, _Op(), a)
    if m == 0 or n == 0:
        # (the version before failed on empty matrices: reshape(-1, m, n) of no elements)
        assert got[0].shape == a.shape and got[0].dtype == a.dtype
        _same(got[1], np.zeros(tuple(batch) + (0,), np.int32))
        _same(got[2], np.zeros(tuple(batch), np.int32))
        return
    want = _getrf_before(a)
    for x, y in zip(got, want):
        _same(x, y)


_SPECIAL = np.array([0.0, -0.0, np.nan, np.inf, -np.inf, 1.0, -1.0, 1e-45, -1e-45, 3e38, 2.5],
                    np.float32)


def _minmax_program(name, n):
    return parse(f"""func.func @main(%a: tensor<{n}xf32>, %b: tensor<{n}xf32>) -> tensor<{n}xf32> {{
  %0 = stablehlo.{name} %a, %b : tensor<{n}xf32>
  return %0 : tensor<{n}xf32>
}}""")


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2 ** 32 - 1), st.integers(1, 40), st.sampled_from(["maximum", "minimum"]),
       st.sampled_from(["plain", "broadcast_a", "broadcast_b", "reversed"]))
def test_f32_maximum_minimum_match_the_f64_round_trip(seed, n, name, layout):
    rng = np.random.default_rng(seed)
    a = rng.choice(_SPECIAL, n)
    b = rng.choice(_SPECIAL, n)
    if layout == "broadcast_a":
        a = np.broadcast_to(a[:1], (n,))
    elif layout == "broadcast_b":
        b = np.broadcast_to(b[:1], (n,))
    elif layout == "reversed":
        a = a[::-1]
    module = _minmax_program(name, n)
    op = module.functions["main"].regions[0].blocks[0].operations[0]
    fn = np.maximum if name == "maximum" else np.minimum
    got = (elementwise.maximum if name == "maximum" else elementwise.minimum)(None, op, a, b)
    want = elementwise._binary(op, a, b, fn, fn)          # the general path: in f64, rounded
    assert got.dtype == want.dtype == np.float32 and got.shape == want.shape
    nan = np.isnan(want)
    assert (np.isnan(got) == nan).all()
    assert got[~nan].tobytes() == want[~nan].tobytes()
    (res,) = stablehlo_ref.run(module, np.ascontiguousarray(a), np.ascontiguousarray(b))
    assert (np.isnan(res) == nan).all() and res[~nan].tobytes() == want[~nan].tobytes()


def test_iota_is_made_once_and_equals_a_fresh_one():
    src = """func.func @main() -> (tensor<5x3xui64>, tensor<4xf32>, tensor<2x6xi8>) {
  %0 = stablehlo.iota dim = 0 : tensor<5x3xui64>
  %1 = stablehlo.iota dim = 0 : tensor<4xf32>
  %2 = stablehlo.iota dim = 1 : tensor<2x6xi8>
  return %0, %1, %2 : tensor<5x3xui64>, tensor<4xf32>, tensor<2x6xi8>
}"""
    module = parse(src)
    first = stablehlo_ref.run(module)
    again = stablehlo_ref.run(module)
    fresh = stablehlo_ref.run(parse(src))
    ops = module.functions["main"].regions[0].blocks[0].operations[:3]
    from stablehlo_ref.interpreter import movement
    for x, y, z, op in zip(first, again, fresh, ops):
        _same(x, z)
        _same(y, z)
        _same(movement._iota(op), z)
        assert not x.flags.writeable          # shared between runs, as constants are
    _same(first[0], np.broadcast_to(np.arange(5, dtype=np.uint64)[:, None], (5, 3)).copy())


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2 ** 32 - 1), st.integers(1, 6), st.integers(1, 6), st.integers(1, 5))
def test_general_gather_kernel_matches_gather_array(seed, rows, cols, nidx):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    idx = rng.integers(-3, rows + 3, (nidx, 1)).astype(np.int32)
    src = f"""func.func @main(%x: tensor<{rows}x{cols}xf32>, %i: tensor<{nidx}x1xi32>) -> tensor<{nidx}x{cols}xf32> {{
  %0 = "stablehlo.gather"(%x, %i) <{{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, {cols}>}}> : (tensor<{rows}x{cols}xf32>, tensor<{nidx}x1xi32>) -> tensor<{nidx}x{cols}xf32>
  return %0 : tensor<{nidx}x{cols}xf32>
}}"""
    module = parse(src)
    op = module.functions["main"].regions[0].blocks[0].operations[0]
    want = indexing.gather_array(x, idx, slice_sizes=(1, cols), **indexing._gather_dims(op))
    got = indexing.gather(None, op, x, idx)
    _same(np.asarray(got), np.asarray(want))
    assert op._cache["gather_static"] is not None          # the specializer's kernel ran
    # operands of another shape than the op's types take the general path
    x2 = np.concatenate([x, x])
    _same(np.asarray(indexing.gather(None, op, x2, idx)),
          np.asarray(indexing.gather_array(x2, idx, slice_sizes=(1, cols), **indexing._gather_dims(op))))


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2 ** 32 - 1), st.integers(1, 40),
       st.sampled_from(["negate", "abs", "sqrt", "floor", "ceil", "round_nearest_even"]),
       st.booleans())
def test_f32_exact_unary_ops_match_the_f64_round_trip(seed, n, name, reversed_):
    rng = np.random.default_rng(seed)
    x = np.concatenate([rng.choice(_SPECIAL, n),
                        (rng.standard_normal(n) * 10.0 ** rng.integers(-40, 38, n)).astype(np.float32)])
    if reversed_:
        x = x[::-1]
    module = parse(f"""func.func @main(%a: tensor<{x.size}xf32>) -> tensor<{x.size}xf32> {{
  %0 = stablehlo.{name} %a : tensor<{x.size}xf32>
  return %0 : tensor<{x.size}xf32>
}}""")
    op = module.functions["main"].regions[0].blocks[0].operations[0]
    from stablehlo_ref.interpreter.registry import KERNELS
    with np.errstate(all="ignore"):
        got = KERNELS[op.name](None, op, x)
    fn = {"negate": np.negative, "abs": np.abs, "sqrt": np.sqrt, "floor": np.floor,
          "ceil": np.ceil, "round_nearest_even": np.rint}[name]
    with np.errstate(all="ignore"):
        want = fn(x.astype(np.float64)).astype(np.float32)        # the general path
    assert got.dtype == np.float32 and got.shape == want.shape
    nan = np.isnan(want)
    assert (np.isnan(got) == nan).all()
    assert got[~nan].tobytes() == want[~nan].tobytes()
