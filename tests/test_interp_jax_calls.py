"""Custom calls JAX writes into exported programs (stablehlo_ref/interpreter/jax_calls.py)."""
import numpy as np
import pytest

from stablehlo_ref import parse, run
from stablehlo_ref.errors import InterpreterError

_PROG = """
func.func public @main(%arg0: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %c = stablehlo.constant dense<2> : tensor<i32>
  %0 = stablehlo.get_dimension_size %arg0, dim = 0 : (tensor<?x4xf32>) -> tensor<i32>
  %1 = stablehlo.compare GE, %0, %c, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
  stablehlo.custom_call @shape_assertion(%1, %0) {api_version = 2 : i32, error_message = "Expected value >= 2 for dimension variable 'b'; got 'b' = {0}.", has_side_effect = true} : (tensor<i1>, tensor<i32>) -> ()
  %2 = stablehlo.add %arg0, %arg0 : tensor<?x4xf32>
  return %2 : tensor<?x4xf32>
}
"""


def test_shape_assertion_passes_when_true():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    (out,) = run(parse(_PROG), x)
    np.testing.assert_array_equal(out, x + x)


def test_shape_assertion_fails_with_jax_message():
    with pytest.raises(InterpreterError, match=r"shape assertion failed: Expected value >= 2 for dimension variable 'b'; got 'b' = 1\."):
        run(parse(_PROG), np.zeros((1, 4), np.float32))


def _lapack_prog(target, operand_types, result_types, config):
    ins = ", ".join(f"%a{i}: {t}" for i, t in enumerate(operand_types))
    outs = ", ".join(result_types)
    names = ", ".join(f"%a{i}" for i in range(len(operand_types)))
    n = len(result_types)
    res = "%r" if n == 1 else f"%r:{n}"
    uses = "%r" if n == 1 else ", ".join(f"%r#{i}" for i in range(n))
    return f"""
func.func @main({ins}) -> ({outs}) {{
  {res} = stablehlo.custom_call @{target}({names}) {{mhlo.backend_config = {{{config}}}}} : ({", ".join(operand_types)}) -> ({outs})
  return {uses} : {outs}
}}"""


def test_lapack_potrf_lower_and_upper():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((3, 4, 4))
    spd = a @ np.swapaxes(a, -1, -2) + 4 * np.eye(4)
    t = "tensor<3x4x4xf64>"
    low, info = run(parse(_lapack_prog("lapack_dpotrf_ffi", [t], [t, "tensor<3xi32>"], "uplo = 76 : ui8")), spd)
    L = np.linalg.cholesky(spd)
    np.testing.assert_allclose(np.tril(low), L, rtol=1e-12)
    np.testing.assert_array_equal(np.triu(low, 1), np.triu(spd, 1))      # other triangle untouched
    np.testing.assert_array_equal(info, 0)
    up, _ = run(parse(_lapack_prog("lapack_dpotrf_ffi", [t], [t, "tensor<3xi32>"], "uplo = 85 : ui8")), spd)
    np.testing.assert_allclose(np.triu(up), np.swapaxes(L, -1, -2), rtol=1e-12)
    bad = spd.copy()
    bad[1, 2, 2] = -50.0
    _, info = run(parse(_lapack_prog("lapack_dpotrf_ffi", [t], [t, "tensor<3xi32>"], "uplo = 76 : ui8")), bad)
    assert list(info) == [0, 3, 0]        # LAPACK's info: the order of the first bad minor


def test_lapack_getrf_and_trsm_solve():
    rng = np.random.default_rng(2)
    a = rng.standard_normal((2, 5, 5)).astype(np.float32)
    t = "tensor<2x5x5xf32>"
    lu, ipiv, info = run(parse(_lapack_prog("lapack_sgetrf_ffi", [t], [t, "tensor<2x5xi32>", "tensor<2xi32>"], "")), a)
    np.testing.assert_array_equal(info, 0)
    for b in range(2):
        perm = np.arange(5)
        for k, p in enumerate(ipiv[b] - 1):          # 1-based LAPACK row swaps
            perm[[k, p]] = perm[[p, k]]
        L = np.tril(lu[b], -1) + np.eye(5)
        U = np.triu(lu[b])
        np.testing.assert_allclose(L @ U, a[b][perm], rtol=1e-4, atol=1e-5)
        assert np.all(np.abs(L) <= 1 + 1e-6)           # partial pivoting bounds the multipliers
    rhs = rng.standard_normal((2, 5, 3)).astype(np.float32)
    tb = "tensor<2x5x3xf32>"
    (x,) = run(parse(_lapack_prog("lapack_strsm_ffi", [t, tb], [tb],
                                  "diag = 78 : ui8, side = 76 : ui8, trans_x = 84 : ui8, uplo = 85 : ui8")), a, rhs)
    U = np.triu(a)
    np.testing.assert_allclose(np.swapaxes(U, -1, -2) @ x, rhs, rtol=1e-3, atol=1e-4)


def test_lapack_qr_eigh_svd_rebuild_their_input():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((2, 5, 3))
    t, tt = "tensor<2x5x3xf64>", "tensor<2x3xf64>"
    h, tau = run(parse(_lapack_prog("lapack_dgeqrf_ffi", [t], [t, tt], "")), a)
    (q,) = run(parse(_lapack_prog("lapack_dorgqr_ffi", [t, tt], [t], "")), h, tau)
    r = np.triu(h[:, :3, :])
    np.testing.assert_allclose(q @ r, a, atol=1e-12)
    np.testing.assert_allclose(np.swapaxes(q, -1, -2) @ q, np.broadcast_to(np.eye(3), (2, 3, 3)), atol=1e-12)
    s = a[:, :3, :] + np.swapaxes(a[:, :3, :], -1, -2)
    ts = "tensor<2x3x3xf64>"
    v, w, info = run(parse(_lapack_prog("lapack_dsyevd_ffi", [ts], [ts, tt, "tensor<2xi32>"],
                                        "mode = 86 : ui8, uplo = 76 : ui8")), s)
    assert np.all(np.diff(w, axis=-1) >= 0)                         # ascending, as LAPACK
    np.testing.assert_allclose((v * w[:, None, :]) @ np.swapaxes(v, -1, -2), s, atol=1e-12)
    for target in ("lapack_dgesdd_ffi", "lapack_dgesvd_ffi"):     # (divide and conquer, QR)
        _, sv, u, vt, info = run(parse(_lapack_prog(
            target, [t], [t, tt, "tensor<2x5x3xf64>", ts, "tensor<2xi32>"], "mode = 83 : ui8")), a)
        assert np.all(np.diff(sv, axis=-1) <= 0)                    # descending
        np.testing.assert_allclose((u * sv[:, None, :]) @ vt, a, atol=1e-12)
        np.testing.assert_array_equal(info, 0)


def test_sharding_annotations_are_identities_on_one_device():
    prog = """
func.func @main(%a: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %0 = stablehlo.custom_call @Sharding(%a) {mhlo.sharding = "{devices=[2,1]<=[2]}"} : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %1 = stablehlo.custom_call @SPMDFullToShardShape(%0) {mhlo.sharding = "{manual}"} : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %2 = stablehlo.custom_call @SPMDShardToFullShape(%1) {mhlo.sharding = "{replicated}"} : (tensor<4x2xf32>) -> tensor<4x2xf32>
  return %2 : tensor<4x2xf32>
}"""
    x = np.arange(8, dtype=np.float32).reshape(4, 2)
    (out,) = run(parse(prog), x)
    np.testing.assert_array_equal(out, x)
    bad = """
func.func @main(%a: tensor<4x2xf32>) -> tensor<2x2xf32> {
  %0 = stablehlo.custom_call @SPMDFullToShardShape(%a) {mhlo.sharding = "{manual}"} : (tensor<4x2xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}"""
    with pytest.raises(InterpreterError, match="sharded"):
        run(parse(bad), x)


@pytest.mark.parametrize("t,dt,shape", [("f64", np.float64, (2, 5, 3)), ("f32", np.float32, (6, 6)),
                                        ("complex<f64>", np.complex128, (3, 4, 4))])
def test_lapack_orgqr_equals_the_reflector_loop(monkeypatch, t, dt, shape):
    """orgqr with as many reflectors as columns goes to LAPACK's ?orgqr (numpy's qr_reduced
    gufunc): the reflector loop's Q to rounding; fewer reflectors than columns keep the loop."""
    from stablehlo_ref.interpreter import jax_calls
    rng = np.random.default_rng(5)
    a = rng.standard_normal(shape)
    if dt == np.complex128:
        a = a + 1j * rng.standard_normal(shape)
    a = a.astype(dt)
    n = shape[-1]
    ty = f"tensor<{'x'.join(map(str, shape))}x{t}>"
    tt = f"tensor<{'x'.join(map(str, shape[:-2] + (n,)))}x{t}>"
    letter = {"f64": "d", "f32": "s", "complex<f64>": "z"}[t]
    h, tau = run(parse(_lapack_prog(f"lapack_{letter}geqrf_ffi", [ty], [ty, tt], "")), a)
    org = "ungqr" if letter == "z" else "orgqr"
    prog = parse(_lapack_prog(f"lapack_{letter}{org}_ffi", [ty, tt], [ty], ""))
    calls = []
    real = jax_calls._lapack_orgqr
    monkeypatch.setattr(jax_calls, "_lapack_orgqr", lambda *x: calls.append(1) or real(*x))
    (q,) = run(prog, h, tau)
    assert calls
    monkeypatch.setattr(jax_calls, "_lapack_orgqr", lambda *x: None)
    (loop,) = run(prog, h, tau)
    tol = 1e-5 if dt == np.float32 else 1e-12
    np.testing.assert_allclose(q, loop, atol=tol)
    np.testing.assert_allclose(q @ np.triu(h[..., :n, :]), a, atol=10 * tol)
    # one reflector fewer than columns: the loop (H(1)...H(n-1)'s first n columns)
    tt2 = f"tensor<{'x'.join(map(str, shape[:-2] + (n - 1,)))}x{t}>"
    calls.clear()
    monkeypatch.setattr(jax_calls, "_lapack_orgqr", lambda *x: calls.append(1) or real(*x))
    (q2,) = run(parse(_lapack_prog(f"lapack_{letter}{org}_ffi", [ty, tt2], [ty], "")), h, tau[..., :n - 1])
    assert not calls
    np.testing.assert_allclose(q2[..., :n - 1], q[..., :n - 1], atol=tol)


def test_lapack_geqp3_pivots_by_column_norm_and_rebuilds_its_input():
    """QR with column pivoting: A P = Q R with |R's diagonal| non-increasing, jpvt a 1-based
    permutation; fixed columns (a nonzero jpvt) are refused as not implemented."""
    from stablehlo_ref.errors import NotImplementedOpError
    rng = np.random.default_rng(4)
    a = rng.standard_normal((2, 6, 4))
    a[1, :, 2] *= 10                                   # the largest column goes first
    t = "tensor<2x6x4xf64>"
    prog = parse(_lapack_prog("lapack_dgeqp3_ffi", [t, "tensor<2x4xi32>"],
                              [t, "tensor<2x4xi32>", "tensor<2x4xf64>"], ""))
    h, jpvt, tau = run(prog, a, np.zeros((2, 4), np.int32))
    assert jpvt[1, 0] == 3
    for b in range(2):
        assert sorted(jpvt[b]) == [1, 2, 3, 4]
        q = np.eye(6)
        for i in range(4):                             # Q = H(1) ... H(4)
            v = np.zeros(6)
            v[i] = 1
            v[i + 1:] = h[b, i + 1:, i]
            q = q @ (np.eye(6) - tau[b, i] * np.outer(v, v))
        r = np.triu(h[b])
        np.testing.assert_allclose(q @ r, a[b][:, jpvt[b] - 1], atol=1e-12)
        assert np.all(np.diff(np.abs(np.diag(r))) <= 1e-12)
    with pytest.raises(NotImplementedOpError, match="fixed columns"):
        run(prog, a, np.array([[1, 0, 0, 0], [0, 0, 0, 0]], np.int32))
