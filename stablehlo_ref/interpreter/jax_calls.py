"""Custom calls that JAX writes into exported programs and that have a meaning the
interpreter can honour without any JAX code:

- `@shape_assertion(%pred, %dim...)` (jax.export of shape-polymorphic functions, api_version 2,
  `error_message` with `{0}`, `{1}`... standing for the dimension operands): fails the run with
  that message when `%pred` is false, as JAX's runtime does.
- LAPACK calls JAX emits for linear algebra on CPU (the `_ffi` kernels, batched over leading
  dimensions): `@lapack_?potrf_ffi` (Cholesky; `uplo` 76 'L' / 85 'U' in mhlo.backend_config;
  the other triangle is left as given) and `@lapack_?getrf_ffi` (LU with partial pivoting;
  1-based pivot rows and LAPACK's `info`), `@lapack_?trsm_ffi` (triangular solve),
  `@lapack_?geqrf_ffi` / `@lapack_?orgqr_ffi` / `@lapack_?ungqr_ffi` (Householder QR),
  `@lapack_?syevd_ffi` / `@lapack_?heevd_ffi` (symmetric/Hermitian eigensolver) and
  `@lapack_?gesdd_ffi` / `@lapack_?gesvd_ffi` (SVD); `@lapack_?geev_ffi`, `@lapack_?gtsv_ffi`, `@lapack_?gehrd_ffi`
  in jax_lapack.py. Values agree with LAPACK to rounding, not bit for bit;
  eigenvectors and singular vectors are unique only up to sign (phase), as in LAPACK.
- Annotations that do not change values on one device: `@Sharding`, `@SPMDFullToShardShape`,
  `@SPMDShardToFullShape` (when the shapes agree, i.e. one partition),
  `@annotate_device_placement`, `@MoveToHost`, `@MoveToDevice`, `@LayoutConstraint`.
- `@ApproxTopK`, the `@stablehlo.dynamic_*` calls of shape polymorphism, and host callbacks
  (an error): see jax_dynamic.py.
"""
from __future__ import annotations

import numpy as np

from ..errors import InterpreterError
from .jax_dynamic import DYNAMIC_CUSTOM_CALLS
from .jax_lapack import LAPACK_MORE
from .blas import RUN
from .registry import op_cache


def _shape_assertion(ctx, op, pred=None, *dims):
    if pred is None:
        raise InterpreterError("custom_call @shape_assertion needs a predicate operand")
    if bool(np.all(np.asarray(pred))):
        return []
    msg = op.attributes.get("error_message")
    text = getattr(msg, "value", None) or "shape assertion failed"
    values = [int(np.asarray(d).reshape(-1)[0]) if np.asarray(d).size else 0 for d in dims]
    try:
        text = text.format(*values)
    except (IndexError, KeyError, ValueError):
        pass
    raise InterpreterError(f"shape assertion failed: {text}", op.where())


def _backend_config(op) -> dict:
    d = op.attributes.get("mhlo.backend_config")
    entries = getattr(d, "entries", ()) or ()
    return {k: getattr(v, "value", v) for k, v in entries}


def _square_batch(op, a, what):
    a = np.asarray(a)
    if a.ndim < 2:
        raise InterpreterError(f"custom_call @{what}: operand must have rank >= 2, got shape {a.shape}", op.where())
    return a


def _potrf(ctx, op, a=None, *rest):
    """(factor, info): the Cholesky factor in the `uplo` triangle, the other one untouched."""
    if a is None or rest:
        raise InterpreterError("custom_call @lapack_?potrf_ffi takes one operand", op.where())
    a = _square_batch(op, a, "lapack_potrf_ffi")
    n = a.shape[-1]
    if a.shape[-2] != n:
        raise InterpreterError(f"custom_call @lapack_?potrf_ffi: matrix must be square, got {a.shape}", op.where())
    upper = int(_backend_config(op).get("uplo", 76)) == 85
    work = np.swapaxes(a, -1, -2).conj() if upper else a       # numpy reads the lower triangle
    wide = work.astype(np.complex128 if np.iscomplexobj(a) else np.float64)
    batch = a.shape[:-2]
    flat = wide.reshape((-1, n, n))
    factors = np.empty_like(flat)
    info = np.zeros(flat.shape[0], dtype=np.int32)
    for b in range(flat.shape[0]):          # (a loop over the batch, not over elements)
        try:
            factors[b] = np.linalg.cholesky(flat[b])
        except np.linalg.LinAlgError:
            factors[b] = np.nan
            info[b] = _first_bad_minor(flat[b])
    lower_mask = np.tril(np.ones((n, n), dtype=bool))
    if upper:
        factors = np.swapaxes(factors, -1, -2).conj()
        mask = lower_mask.T
    else:
        mask = lower_mask
    out = np.where(mask, factors.reshape(a.shape).astype(a.dtype), a)
    return [out, info.reshape(batch)]


def _first_bad_minor(m) -> int:
    for k in range(1, m.shape[0] + 1):
        try:
            np.linalg.cholesky(m[:k, :k])
        except np.linalg.LinAlgError:
            return k
    return m.shape[0]


def _getrf(ctx, op, a=None, *rest):
    """(lu, ipiv, info): P A = L U with partial pivoting, L unit lower and U upper packed in one
    matrix, `ipiv` the 1-based row swapped with at each step, `info` the first zero pivot."""
    if a is None or rest:
        raise InterpreterError("custom_call @lapack_?getrf_ffi takes one operand", op.where())
    a = _square_batch(op, a, "lapack_getrf_ffi")
    key = None
    if a.size <= _GETRF_MEMO_ELEMENTS:
        # the same matrix factored again in one run (jnp.linalg.solve, inv and det of one
        # matrix each factor it): the first factorization's results, copied
        run = RUN[0]
        if _GETRF_MEMO[0] != run:
            _GETRF_MEMO[0] = run
            _GETRF_MEMO[1] = {}
        memo = _GETRF_MEMO[1]
        key = (a.dtype, a.shape, a.tobytes())
        hit = memo.get(key)
        if hit is not None:
            return [hit[0].copy(), hit[1].copy(), hit[2].copy()]
    out = _getrf_arrays(a)
    if key is not None:
        if len(memo) >= 8:
            memo.clear()
        memo[key] = (out[0].copy(), out[1].copy(), out[2].copy())
    return out


# `_getrf`'s factorizations of this run: [run number, {(dtype, shape, bytes): (lu, ipiv,
# info)}], for matrices of at most this many elements (equal bytes, equal factors: the same
# LAPACK call on the same input; kept for one run only)
_GETRF_MEMO = [-1, {}]
_GETRF_MEMO_ELEMENTS = 1 << 14


def _getrf_arrays(a):
    m, n = a.shape[-2:]
    batch = a.shape[:-2]
    cplx = np.iscomplexobj(a)
    # the matrices in f64/c128, each stored column-major (the transposes of a C-ordered
    # batch), so that LAPACK factors each one in place, without a copy in and out
    wide_t = np.empty(batch + (n, m), dtype=np.complex128 if cplx else np.float64)
    wide_t[...] = np.swapaxes(a, -1, -2)
    nb = 1
    for d in batch:
        nb *= d
    flat_t = wide_t.reshape((nb, n, m))      # (nb given: -1 is ambiguous for empty matrices)
    k_max = min(m, n)
    ipiv = np.zeros((nb, k_max), dtype=np.int32)
    info = np.zeros(nb, dtype=np.int32)
    getrf = _lapack_getrf(cplx)          # LAPACK's own ?getrf, one call per matrix, in f64/c128
    for b in range(nb):                      # (a loop over the batch)
        if m == 0 or n == 0:
            break
        w = flat_t[b].T
        lu_b, piv, inf = getrf(w, overwrite_a=True)
        if lu_b is not w and not np.shares_memory(lu_b, w):
            w[...] = lu_b
        ipiv[b] = piv[:k_max]
        if inf > 0:
            info[b] = inf
    ipiv += 1                                # scipy returns LAPACK's pivots 0-based
    lu = np.swapaxes(wide_t, -1, -2).astype(a.dtype, order="C")
    return [lu, ipiv.reshape(batch + (k_max,)), info.reshape(batch)]


_GETRF = {}


def _lapack_getrf(cplx: bool):
    f = _GETRF.get(cplx)
    if f is None:
        from scipy.linalg import lapack
        f = _GETRF[cplx] = lapack.zgetrf if cplx else lapack.dgetrf
    return f


_TRANS = {78: "NO_TRANSPOSE", 84: "TRANSPOSE", 67: "ADJOINT"}


def _trsm(ctx, op, a=None, b=None, *rest):
    """op(A) X = B (side 'L') or X op(A) = B (side 'R'), A triangular (`uplo`), unit diagonal
    when `diag` is 'U', op from `trans_x` ('N', 'T', 'C')."""
    if a is None or b is None or rest:
        raise InterpreterError("custom_call @lapack_?trsm_ffi takes two operands", op.where())
    from .linalg import solve_triangular
    cache = op_cache(op)
    flags = cache.get("trsm")
    if flags is None:
        cfg = _backend_config(op)
        trans = _TRANS.get(int(cfg.get("trans_x", 78)))
        if trans is None:
            raise InterpreterError(f"custom_call @lapack_?trsm_ffi: unknown trans_x {cfg.get('trans_x')}", op.where())
        flags = cache["trsm"] = (int(cfg.get("side", 76)) == 76, int(cfg.get("uplo", 76)) == 76,
                                 int(cfg.get("diag", 78)) == 85, trans)
    left, lower, unit, trans = flags
    a, b = np.asarray(a), np.asarray(b)
    cd = np.complex128 if a.dtype.kind == "c" or b.dtype.kind == "c" else np.float64
    x = solve_triangular(a, b, left=left, lower=lower, unit=unit, trans=trans, cd=cd)
    return [x.astype(b.dtype)]


def _result_dtype(op, i):
    from .numerics import elem
    return elem(op.results[i].type).dtype


def _result_shape(op, i):
    return tuple(op.results[i].type.shape)


def _batched(a):
    """(flat batch of matrices, batch shape)."""
    a = np.asarray(a)
    return a.reshape((-1,) + a.shape[-2:]), a.shape[:-2]


def _geqrf(ctx, op, a=None, *rest):
    """(householder, tau): R in the upper triangle, the reflectors' tails below it."""
    if a is None or rest:
        raise InterpreterError("custom_call @lapack_?geqrf_ffi takes one operand", op.where())
    flat, batch = _batched(_square_batch(op, a, "lapack_geqrf_ffi"))
    k = min(flat.shape[-2:])
    h = np.empty(flat.shape, dtype=np.complex128 if np.iscomplexobj(flat) else np.float64)
    tau = np.empty((flat.shape[0], k), dtype=h.dtype)
    for b in range(flat.shape[0]):       # (a loop over the batch)
        hb, tb = np.linalg.qr(flat[b].astype(h.dtype), mode="raw")
        h[b] = hb.T                      # numpy returns LAPACK's column-major array transposed
        tau[b] = tb
    return [h.reshape(np.shape(a)).astype(np.asarray(a).dtype), tau.reshape(batch + (k,)).astype(_result_dtype(op, 1))]


def _orgqr(ctx, op, a=None, tau=None, *rest):
    """The first n columns of Q = H(1) ... H(k), H(i) = I - tau_i v_i v_i^H."""
    if a is None or tau is None or rest:
        raise InterpreterError("custom_call @lapack_?orgqr_ffi takes two operands", op.where())
    flat, batch = _batched(_square_batch(op, a, "lapack_orgqr_ffi"))
    cd = np.complex128 if np.iscomplexobj(flat) else np.float64
    h = flat.astype(cd)
    taus = np.asarray(tau).reshape((h.shape[0], -1)).astype(cd)
    m, n = h.shape[-2:]
    if taus.shape[1] == n and n <= m and h.shape[0]:
        # as many reflectors as columns (jnp.linalg.qr's): LAPACK's own orgqr, through numpy's
        # gufunc (np.linalg.qr's second step), in one call for the whole batch
        q = _lapack_orgqr(h, taus)
        if q is not None:
            return [q.reshape(np.shape(a)).astype(np.asarray(a).dtype)]
    q = np.broadcast_to(np.eye(m, n, dtype=cd), h.shape).copy()
    for i in range(taus.shape[1] - 1, -1, -1):     # (a loop over the reflectors)
        v = np.zeros((h.shape[0], m), dtype=cd)
        v[:, i] = 1
        v[:, i + 1:] = h[:, i + 1:, i]
        w = np.einsum("bm,bmn->bn", v.conj(), q)
        q -= taus[:, i, None, None] * v[:, :, None] * w[:, None, :]
    return [q.reshape(np.shape(a)).astype(np.asarray(a).dtype)]


def _lapack_orgqr(h, taus):
    """Q (b, m, n) from the reflectors below the diagonal of h (b, m, n) and their n factors
    (b, n), f64 or complex128, by LAPACK's ?orgqr (numpy's `qr_reduced` gufunc); None where
    numpy has no such gufunc or it fails (the reflector loop decides)."""
    try:
        from numpy.linalg import _umath_linalg
        gufunc = _umath_linalg.qr_reduced
        sig = "DD->D" if h.dtype.kind == "c" else "dd->d"
        with np.errstate(all="ignore"):
            return gufunc(np.ascontiguousarray(h), np.ascontiguousarray(taus), signature=sig)
    except Exception:  # noqa: BLE001 - any failure of numpy's private gufunc: the loop
        return None


def _syevd(ctx, op, a=None, *rest):
    """(eigenvectors, eigenvalues ascending, info) from the `uplo` triangle."""
    if a is None or rest:
        raise InterpreterError("custom_call @lapack_?syevd_ffi takes one operand", op.where())
    cfg = _backend_config(op)
    flat, batch = _batched(_square_batch(op, a, "lapack_syevd_ffi"))
    cd = np.complex128 if np.iscomplexobj(flat) else np.float64
    uplo = "U" if int(cfg.get("uplo", 76)) == 85 else "L"
    # in the operand's own precision (LAPACK's s/c routines for 32-bit types), so that the
    # vectors' signs come out as XLA's
    work = flat if flat.dtype in (np.float32, np.float64, np.complex64, np.complex128) else flat.astype(cd)
    with np.errstate(all="ignore"):
        w, v = np.linalg.eigh(work, UPLO=uplo)
    vectors = v if int(cfg.get("mode", 86)) == 86 else flat
    n = flat.shape[-1]
    return [vectors.reshape(np.shape(a)).astype(np.asarray(a).dtype),
            w.reshape(batch + (n,)).astype(_result_dtype(op, 1)),
            np.zeros(batch, dtype=np.int32)]


def _gesdd(ctx, op, a=None, *rest):
    """(overwritten a, singular values descending, u, vt, info); `mode` 'A' full, 'S' reduced,
    'N' values only. Also `@lapack_?gesvd_ffi` (lax.linalg.svd with the QR algorithm, in
    jit's text only: jax.export does not write it), whose results are the same ones (LAPACK's
    two routines differ in their rounding and vector signs, not in what they compute)."""
    name = op.attributes["call_target_name"].value
    if a is None or rest:
        raise InterpreterError(f"custom_call @{name} takes one operand", op.where())
    cfg = _backend_config(op)
    mode = int(cfg.get("mode", 65))
    flat, batch = _batched(_square_batch(op, a, name))
    cd = np.complex128 if np.iscomplexobj(flat) else np.float64
    with np.errstate(all="ignore"):
        if mode == 78:
            s = np.linalg.svd(flat.astype(cd), compute_uv=False)
            u = vt = None
        else:
            u, s, vt = np.linalg.svd(flat.astype(cd), full_matrices=(mode == 65))
    outs = [np.asarray(a), s.reshape(batch + s.shape[-1:]).astype(_result_dtype(op, 1))]
    for i, x in ((2, u), (3, vt)):
        shape = _result_shape(op, i)
        if None in shape and x is not None:
            shape = batch + x.shape[-2:]        # shape-polymorphic: the type leaves it open
        if None in shape:
            shape = tuple(0 if d is None else d for d in shape)
        if x is None or int(np.prod(shape)) != x.size:
            outs.append(np.zeros(shape, dtype=_result_dtype(op, i)))
        else:
            outs.append(x.reshape(shape).astype(_result_dtype(op, i)))
    outs.append(np.zeros(batch, dtype=np.int32))
    return outs


def _identity(ctx, op, *args):
    if len(args) != len(op.results):
        raise InterpreterError(f"custom_call @{op.attributes['call_target_name'].value}: expected as many "
                               f"results as operands", op.where())
    for i, (x, r) in enumerate(zip(args, op.results)):
        rs = _result_shape(op, i)
        if len(np.shape(x)) != len(rs) or any(d is not None and d != n for d, n in zip(rs, np.shape(x))):
            raise InterpreterError(
                f"custom_call @{op.attributes['call_target_name'].value}: result #{i} has shape "
                f"{_result_shape(op, i)} but the operand {tuple(np.shape(x))}; sharded (manual) "
                "partitioning across several devices is not interpreted", op.where())
    return list(args)


JAX_CUSTOM_CALLS = {
    **DYNAMIC_CUSTOM_CALLS,
    **LAPACK_MORE,
    "shape_assertion": _shape_assertion,
    **{name: _identity for name in ("Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape",
                                    "annotate_device_placement", "MoveToHost", "MoveToDevice",
                                    "LayoutConstraint")},
}
for _p in "sdcz":
    JAX_CUSTOM_CALLS[f"lapack_{_p}potrf_ffi"] = _potrf
    JAX_CUSTOM_CALLS[f"lapack_{_p}getrf_ffi"] = _getrf
    JAX_CUSTOM_CALLS[f"lapack_{_p}trsm_ffi"] = _trsm
    JAX_CUSTOM_CALLS[f"lapack_{_p}geqrf_ffi"] = _geqrf
    JAX_CUSTOM_CALLS[f"lapack_{_p}gesdd_ffi"] = _gesdd
    JAX_CUSTOM_CALLS[f"lapack_{_p}gesvd_ffi"] = _gesdd
for _p in "sd":
    JAX_CUSTOM_CALLS[f"lapack_{_p}orgqr_ffi"] = _orgqr
    JAX_CUSTOM_CALLS[f"lapack_{_p}syevd_ffi"] = _syevd
for _p in "cz":
    JAX_CUSTOM_CALLS[f"lapack_{_p}ungqr_ffi"] = _orgqr
    JAX_CUSTOM_CALLS[f"lapack_{_p}heevd_ffi"] = _syevd
