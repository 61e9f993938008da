"""`@lapack_?getrf_ffi` factors a matrix once per run: a second factorization of equal bytes in
the same run returns copies of the first one's results. Checked against the factorization
itself (`_getrf_arrays`, the unmemoized path) for equal, nearly equal (a signed zero, a NaN
payload) and different matrices, within one program run and across runs, and the copies
against writes."""
import numpy as np
from hypothesis import given, settings, strategies as st

from stablehlo_ref import parse, run
from stablehlo_ref.interpreter import blas, jax_calls


def _prog(n, et, calls):
    t = f"tensor<{n}x{n}x{et}>"
    outs = []
    body = []
    for i, arg in enumerate(calls):
        body.append(f"  %r{i}:3 = stablehlo.custom_call @lapack_{'s' if et == 'f32' else 'd'}getrf_ffi(%a{arg}) "
                    f"{{mhlo.backend_config = {{}}}} : ({t}) -> ({t}, tensor<{n}xi32>, tensor<i32>)")
        outs += [(f"%r{i}#0", t), (f"%r{i}#1", f"tensor<{n}xi32>"), (f"%r{i}#2", "tensor<i32>")]
    ins = ", ".join(f"%a{i}: {t}" for i in range(max(calls) + 1))
    types = ", ".join(ty for _, ty in outs)
    return (f"func.func @main({ins}) -> ({types}) {{\n" + "\n".join(body) +
            f"\n  return {', '.join(v for v, _ in outs)} : {types}\n}}")


def _same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


_SPECIALS = [0.0, -0.0, np.nan, -np.nan, np.inf, -np.inf, 1e-30]


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2 ** 32 - 1), st.sampled_from([1, 2, 5, 16]), st.sampled_from(["f32", "f64"]),
       st.sampled_from(["same", "copy", "signed_zero", "nan_payload", "other"]), st.booleans())
def test_getrf_in_one_run_matches_each_factorization(seed, n, et, second, specials):
    rng = np.random.default_rng(seed)
    dt = np.float32 if et == "f32" else np.float64
    a = rng.standard_normal((n, n)).astype(dt)
    if specials:
        for v in _SPECIALS[:int(rng.integers(1, len(_SPECIALS)))]:
            a[rng.integers(0, n), rng.integers(0, n)] = v
    if second == "same":
        b = a
    elif second == "copy":
        b = a.copy()
    elif second == "signed_zero":
        a[0, 0] = 0.0
        b = a.copy()
        b[0, 0] = -0.0
    elif second == "nan_payload":
        a[0, 0] = np.nan
        b = a.copy()
        bits = b.view(np.uint32 if et == "f32" else np.uint64)
        bits[0, 0] |= 1                      # another quiet NaN
    else:
        b = rng.standard_normal((n, n)).astype(dt)
    args = [a, b]
    calls = [0, 1, 0, 1]
    got = run(parse(_prog(n, et, calls)), *args)
    for i, arg in enumerate(calls):
        want = jax_calls._getrf_arrays(args[arg])
        for g, w in zip(got[3 * i:3 * i + 3], want):
            _same(g, w)
    # results are distinct arrays (nothing shared between the calls' results)
    ids = [id(x) for x in got]
    assert len(set(ids)) == len(ids)


def test_getrf_memo_returns_copies_and_keeps_to_its_run():
    rng = np.random.default_rng(5)
    a = rng.standard_normal((6, 6))
    want = jax_calls._getrf_arrays(a)
    calls = []
    real = jax_calls._getrf_arrays
    jax_calls._getrf_arrays = lambda x: calls.append(1) or real(x)
    blas.enter()
    try:
        first = jax_calls._getrf(None, None, a)
        for x in first:
            x[...] = 7                       # a caller writing into the results
        second = jax_calls._getrf(None, None, a.copy())
        for g, w in zip(second, want):
            _same(g, w)
        assert len(calls) == 1               # (the second one was the first's copy)
    finally:
        blas.leave()
        jax_calls._getrf_arrays = real
    blas.enter()
    try:
        a[0, 0] += 1.0                       # written between runs
        for g, w in zip(jax_calls._getrf(None, None, a), jax_calls._getrf_arrays(a)):
            _same(g, w)
    finally:
        blas.leave()
