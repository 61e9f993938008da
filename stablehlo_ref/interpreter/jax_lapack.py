"""More of the LAPACK calls JAX emits on CPU (beside jax_calls.py's): `@lapack_?geev_ffi`
(jnp.linalg.eig / eigvals), `@lapack_?gtsv_ffi` (lax.linalg.tridiagonal_solve) and
`@lapack_?gehrd_ffi` (jax.scipy.linalg.hessenberg; its Q comes from `@lapack_?orgqr_ffi`) and
`@lapack_?sytrd_ffi` / `@lapack_?hetrd_ffi` (lax.linalg.tridiagonal), `@lapack_?gees_ffi`
(jax.scipy.linalg.schur / sqrtm) and `@lapack_?geqp3_ffi` (jax.scipy.linalg.qr with
pivoting): SciPy's own LAPACK ?gees / ?geqp3 in the operand's precision, the routines XLA
CPU calls too.
Batched over the leading dimensions, computed as LAPACK's algorithms define them: gtsv is
LAPACK's elimination with partial pivoting, factors and all; gehrd is the unblocked Householder
reduction (LAPACK's ?larfg reflectors); geev's right eigenvectors are numpy's, i.e. LAPACK's
?geev (unit norm, largest component real), its left ones are solved from them and scaled the
same way (their sign or phase may differ from LAPACK's, as eigenvectors may)."""
from __future__ import annotations

import numpy as np

from ..errors import InterpreterError


def _cfg(op) -> dict:
    d = op.attributes.get("mhlo.backend_config")
    return {k: getattr(v, "value", v) for k, v in (getattr(d, "entries", ()) or ())}


def _dtype(op, i):
    from .numerics import elem
    return elem(op.results[i].type).dtype


def _matrices(op, a, what):
    a = np.asarray(a)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise InterpreterError(f"custom_call @{what}: operand must be square matrices, got shape {a.shape}",
                               op.where())
    return a.reshape((-1,) + a.shape[-2:]), a.shape[:-2]


# ------------------------------------------------------------------ geev

def _largest_component_real(v):
    """Each column scaled to unit 2-norm with its largest-modulus component real (?geev's
    normalization)."""
    v = v / np.linalg.norm(v, axis=-2, keepdims=True)
    idx = np.argmax(np.abs(v), axis=-2)
    big = np.take_along_axis(v, idx[..., None, :], axis=-2)
    phase = np.where(np.abs(big) > 0, np.conj(big) / np.where(np.abs(big) > 0, np.abs(big), 1), 1)
    return v * phase


def _geev(ctx, op, a=None, *rest):
    """Real: (wr, wi, vl, vr, info); complex: (w, vl, vr, info). `compute_left` /
    `compute_right` 86 ('V') compute those vectors, 78 ('N') leave zeros."""
    if a is None or rest:
        raise InterpreterError("custom_call @lapack_?geev_ffi takes one operand", op.where())
    name = op.attributes["call_target_name"].value
    flat, batch = _matrices(op, a, name)
    cfg = _cfg(op)
    left, right = int(cfg.get("compute_left", 78)) == 86, int(cfg.get("compute_right", 86)) == 86
    n = flat.shape[-1]
    work = flat if flat.dtype in (np.float32, np.float64, np.complex64, np.complex128) else flat.astype(np.float64)
    ok = np.all(np.isfinite(work), axis=(-2, -1))
    safe = np.where(ok[:, None, None], work, 0)
    with np.errstate(all="ignore"):
        w, vr = np.linalg.eig(safe)
        w = np.asarray(w, dtype=np.result_type(w, np.complex64))
        vr = np.asarray(vr, dtype=w.dtype)
        vl = np.zeros_like(vr)
        if left:
            vl = _largest_component_real(np.conj(np.swapaxes(np.linalg.inv(vr), -2, -1)))
    info = np.where(ok, 0, 1).astype(np.int32).reshape(batch)
    w = np.where(ok[:, None], w, np.nan)
    vr = vr if right else np.zeros_like(vr)
    shape = batch + (n, n)
    real = len(op.results) == 5
    outs = ([w.real.reshape(batch + (n,)).astype(_dtype(op, 0)), w.imag.reshape(batch + (n,)).astype(_dtype(op, 1))]
            if real else [w.reshape(batch + (n,)).astype(_dtype(op, 0))])
    k = len(outs)
    return outs + [vl.reshape(shape).astype(_dtype(op, k)), vr.reshape(shape).astype(_dtype(op, k + 1)), info]


# ------------------------------------------------------------------ gtsv

def _gtsv(ctx, op, dl=None, d=None, du=None, b=None, *rest):
    """(dl, d, du, b, info) overwritten as LAPACK's ?gtsv leaves them: Gaussian elimination
    with partial pivoting of the tridiagonal matrix with sub-diagonal dl[1:], diagonal d and
    super-diagonal du[:-1] (jax's layout), b the solution; info = i + 1 when U's i-th pivot
    is exactly zero (then b is left partly solved, as LAPACK leaves it)."""
    if b is None or rest:
        raise InterpreterError("custom_call @lapack_?gtsv_ffi takes four operands", op.where())
    b = np.asarray(b)
    n = b.shape[-2]
    batch = b.shape[:-2]
    ct = np.result_type(b.dtype, np.float64) if not np.iscomplexobj(b) else np.complex128
    L = np.array(np.asarray(dl), dtype=ct).reshape((-1, n))
    D = np.array(np.asarray(d), dtype=ct).reshape((-1, n))
    U = np.array(np.asarray(du), dtype=ct).reshape((-1, n))
    B = np.array(b, dtype=ct).reshape((-1,) + b.shape[-2:])
    info = np.zeros(L.shape[0], np.int32)
    sub = L[:, 1:]                          # LAPACK's DL(1..n-1); DL(i) then holds U's 2nd super-diagonal
    for s in range(L.shape[0]):             # (a loop over the batch: elimination is sequential)
        dls, ds, dus, bs = sub[s], D[s], U[s], B[s]
        bad = 0
        for i in range(n - 1):
            if abs(ds[i]) >= abs(dls[i]):
                if ds[i] == 0:
                    bad = i + 1
                    break
                fact = dls[i] / ds[i]
                ds[i + 1] -= fact * dus[i]
                bs[i + 1] -= fact * bs[i]
                if i < n - 2:
                    dls[i] = 0
            else:
                fact = ds[i] / dls[i]
                ds[i] = dls[i]
                temp = ds[i + 1]
                ds[i + 1] = dus[i] - fact * temp
                if i < n - 2:
                    dls[i] = dus[i + 1]
                    dus[i + 1] = -fact * dls[i]
                dus[i] = temp
                row = bs[i].copy()
                bs[i] = bs[i + 1]
                bs[i + 1] = row - fact * bs[i + 1]
        if not bad and n and ds[n - 1] == 0:
            bad = n
        info[s] = bad
        if bad:
            continue
        with np.errstate(all="ignore"):
            bs[n - 1] /= ds[n - 1]
            if n > 1:
                bs[n - 2] = (bs[n - 2] - dus[n - 2] * bs[n - 1]) / ds[n - 2]
            for i in range(n - 3, -1, -1):
                bs[i] = (bs[i] - dus[i] * bs[i + 1] - dls[i] * bs[i + 2]) / ds[i]
    L[:, 1:] = sub
    outs = [L.reshape(np.shape(dl)), D.reshape(np.shape(d)), U.reshape(np.shape(du)), B.reshape(b.shape)]
    return [x.astype(_dtype(op, i)) for i, x in enumerate(outs)] + [info.reshape(batch)]


# ------------------------------------------------------------------ gehrd

def _larfg(alpha, x):
    """LAPACK's ?larfg: (beta, tau, v tail) with H = I - tau [1 v] [1 v]^H and
    H^H [alpha x] = [beta 0]."""
    xnorm = np.linalg.norm(x)
    if xnorm == 0 and np.imag(alpha) == 0:
        return alpha, 0 * alpha, x
    beta = -np.copysign(np.sqrt(np.real(alpha) ** 2 + np.imag(alpha) ** 2 + xnorm ** 2), np.real(alpha))
    if np.iscomplexobj(x) or np.iscomplexobj(alpha):
        tau = complex((beta - np.real(alpha)) / beta, -np.imag(alpha) / beta)
    else:
        tau = (beta - alpha) / beta
    return beta, tau, x / (alpha - beta)


def _gehrd(ctx, op, a=None, *rest):
    """(a with the Hessenberg form on and above the sub-diagonal and the reflectors below it,
    tau, info): LAPACK's unblocked ?gehd2 over rows/columns low..high (1-based)."""
    if a is None or rest:
        raise InterpreterError("custom_call @lapack_?gehrd_ffi takes one operand", op.where())
    name = op.attributes["call_target_name"].value
    flat, batch = _matrices(op, a, name)
    n = flat.shape[-1]
    cfg = _cfg(op)
    lo, hi = int(cfg.get("low", 1)) - 1, int(cfg.get("high", n))
    ct = np.complex128 if np.iscomplexobj(flat) else np.float64
    A = flat.astype(ct)
    taus = np.zeros((A.shape[0], max(n - 1, 0)), ct)
    with np.errstate(all="ignore"):
        for s in range(A.shape[0]):
            m = A[s]
            for i in range(lo, hi - 1):
                beta, tau, tail = _larfg(m[i + 1, i], m[i + 2:hi, i].copy())
                v = np.concatenate([[1], tail]).astype(ct)
                m[:hi, i + 1:hi] -= tau * np.outer(m[:hi, i + 1:hi] @ v, v.conj())
                m[i + 1:hi, i + 1:] -= np.conj(tau) * np.outer(v, v.conj() @ m[i + 1:hi, i + 1:])
                m[i + 1, i] = beta
                m[i + 2:hi, i] = tail
                taus[s, i] = tau
    info = np.zeros(batch, np.int32)
    return [A.reshape(np.shape(a)).astype(_dtype(op, 0)), taus.reshape(batch + (max(n - 1, 0),)).astype(_dtype(op, 1)),
            info]


# ------------------------------------------------------------------ sytrd / hetrd

def _sytrd(ctx, op, a=None, *rest):
    """(a, d, e, tau, info): LAPACK's unblocked ?sytd2 / ?hetd2 reduction of the symmetric
    (Hermitian) matrix held in the `uplo` triangle to tridiagonal form Q^H A Q = T: the diagonal
    and first off-diagonal of that triangle become T's, the reflectors' tails fill the rest of
    it, the other triangle is left as given."""
    if a is None or rest:
        raise InterpreterError("custom_call @lapack_?sytrd_ffi takes one operand", op.where())
    name = op.attributes["call_target_name"].value
    flat, batch = _matrices(op, a, name)
    n = flat.shape[-1]
    lower = int(_cfg(op).get("uplo", 76)) != 85
    ct = np.complex128 if np.iscomplexobj(flat) else np.float64
    out = flat.astype(ct)
    d = np.zeros((out.shape[0], n), ct)
    e = np.zeros((out.shape[0], max(n - 1, 0)), ct)
    taus = np.zeros((out.shape[0], max(n - 1, 0)), ct)
    tri = np.tril if lower else np.triu
    with np.errstate(all="ignore"):
        for s in range(out.shape[0]):
            t = tri(out[s])
            h = t + np.conj(tri(t, -1 if lower else 1)).T        # the Hermitian matrix the triangle holds
            h[np.diag_indices(n)] = np.real(np.diag(h))
            steps = range(n - 1) if lower else range(n - 2, -1, -1)
            for i in steps:
                if lower:                                       # annihilate h[i+2:, i]
                    beta, tau, tail = _larfg(h[i + 1, i], h[i + 2:, i].copy())
                    v = np.concatenate([[1], tail]).astype(ct)
                    sl = slice(i + 1, n)
                else:                                           # annihilate h[:i, i+1]
                    beta, tau, tail = _larfg(h[i, i + 1], h[:i, i + 1].copy())
                    v = np.concatenate([tail, [1]]).astype(ct)
                    sl = slice(0, i + 1)
                e[s, i] = np.real(beta)
                if tau != 0:
                    sub = h[sl, sl]
                    w = tau * (sub @ v)
                    w += -0.5 * tau * np.vdot(w, v) * v
                    h[sl, sl] = sub - np.outer(v, np.conj(w)) - np.outer(w, np.conj(v))
                # the reduced column/row: T's off-diagonal element, the reflector's tail
                if lower:
                    h[i + 1, i], h[i + 2:, i] = beta, tail
                    h[i, i + 1], h[i, i + 2:] = np.conj(beta), 0
                else:
                    h[i, i + 1], h[:i, i + 1] = beta, tail
                    h[i + 1, i], h[i + 1, :i] = np.conj(beta), 0
                taus[s, i] = tau
            d[s] = np.real(np.diag(h))
            keep = np.tril(np.ones((n, n), bool)) if lower else np.triu(np.ones((n, n), bool))
            out[s] = np.where(keep, h, out[s])
    info = np.zeros(batch, np.int32)
    k = max(n - 1, 0)
    return [out.reshape(np.shape(a)).astype(_dtype(op, 0)), d.real.reshape(batch + (n,)).astype(_dtype(op, 1)),
            e.real.reshape(batch + (k,)).astype(_dtype(op, 2)), taus.reshape(batch + (k,)).astype(_dtype(op, 3)), info]


# ------------------------------------------------------------------ gees

def _gees(ctx, op, a=None, *rest):
    """Real: (T, Schur vectors, wr, wi, sdim, info); complex: (T, Schur vectors, w, sdim,
    info). `mode` 86 ('V') computes the Schur vectors, 78 ('N') leaves them zero; only `sort`
    78 ('N', no ordering of the eigenvalues) is defined without a selection function."""
    if a is None or rest:
        raise InterpreterError("custom_call @lapack_?gees_ffi takes one operand", op.where())
    name = op.attributes["call_target_name"].value
    flat, batch = _matrices(op, a, name)
    cfg = _cfg(op)
    if int(cfg.get("sort", 78)) != 78:
        from ..errors import NotImplementedOpError
        raise NotImplementedOpError("stablehlo.custom_call", f"@{name} with sorted eigenvalues (sort = "
                                    f"{int(cfg['sort'])}: needs a selection function)")
    vectors = int(cfg.get("mode", 86)) == 86
    from scipy.linalg import lapack
    real = len(op.results) == 6
    dt = np.dtype(_dtype(op, 0))
    routine = {np.dtype(np.float32): lapack.sgees, np.dtype(np.float64): lapack.dgees,
               np.dtype(np.complex64): lapack.cgees, np.dtype(np.complex128): lapack.zgees}.get(dt)
    if routine is None:
        raise InterpreterError(f"custom_call @{name}: element type {dt} is not one of LAPACK's", op.where())
    n = flat.shape[-1]
    t = np.zeros(flat.shape, dt)
    vs = np.zeros(flat.shape, dt)
    w = np.zeros((flat.shape[0], n), np.result_type(dt, np.complex64))
    sdim = np.zeros(flat.shape[0], np.int32)
    info = np.zeros(flat.shape[0], np.int32)
    for b in range(flat.shape[0]):       # (a loop over the batch)
        if n == 0:
            break
        out = routine(lambda *x: 0, np.array(flat[b], dtype=dt), compute_v=int(vectors), sort_t=0)
        if real:
            t_b, sdim_b, wr, wi, vs_b, _, info_b = out
            w[b] = wr + 1j * wi
        else:
            t_b, sdim_b, w_b, vs_b, _, info_b = out
            w[b] = w_b
        t[b], sdim[b], info[b] = t_b, sdim_b, info_b
        if vectors:
            vs[b] = vs_b
    shape = batch + (n, n)
    outs = [t.reshape(shape), vs.reshape(shape)]
    if real:
        outs += [w.real.reshape(batch + (n,)).astype(_dtype(op, 2)), w.imag.reshape(batch + (n,)).astype(_dtype(op, 3))]
    else:
        outs += [w.reshape(batch + (n,)).astype(_dtype(op, 2))]
    return outs + [sdim.reshape(batch), info.reshape(batch)]


# ------------------------------------------------------------------ geqp3

def _geqp3(ctx, op, a=None, jpvt=None, *rest):
    """(the factored matrix, jpvt, tau): QR with column pivoting (jax.scipy.linalg.qr with
    `pivoting=True`) by SciPy's LAPACK ?geqp3 in the operand's precision, the routine XLA CPU
    calls too: R in the upper triangle, the reflectors below it, jpvt the 1-based column of
    the operand each column of A P is. Every column is free to move (jpvt all 0 on entry, as
    JAX writes it); fixed columns (a nonzero jpvt) are not implemented (SciPy's wrapper has
    no such argument)."""
    if a is None or jpvt is None or rest:
        raise InterpreterError("custom_call @lapack_?geqp3_ffi takes two operands", op.where())
    name = op.attributes["call_target_name"].value
    a = np.asarray(a)
    if a.ndim < 2:
        raise InterpreterError(f"custom_call @{name}: operand must have rank >= 2, got shape "
                               f"{a.shape}", op.where())
    flat, batch = a.reshape((-1,) + a.shape[-2:]), a.shape[:-2]
    if np.asarray(jpvt).any():
        from ..errors import NotImplementedOpError
        raise NotImplementedOpError("stablehlo.custom_call", f"@{name} with fixed columns (a "
                                    "nonzero jpvt operand)")
    from scipy.linalg import lapack
    dt = np.dtype(_dtype(op, 0))
    routine = {np.dtype(np.float32): lapack.sgeqp3, np.dtype(np.float64): lapack.dgeqp3,
               np.dtype(np.complex64): lapack.cgeqp3, np.dtype(np.complex128): lapack.zgeqp3}.get(dt)
    if routine is None:
        raise InterpreterError(f"custom_call @{name}: element type {dt} is not one of LAPACK's", op.where())
    m, n = flat.shape[-2:]
    k = min(m, n)
    qr = np.array(flat, dtype=dt)
    piv = np.broadcast_to(np.arange(1, n + 1, dtype=np.int32), (flat.shape[0], n)).copy()
    tau = np.zeros((flat.shape[0], k), dt)
    for b in range(flat.shape[0] if k else 0):      # (a loop over the batch)
        qr_b, piv_b, tau_b, _, info = routine(qr[b])
        if info != 0:
            raise InterpreterError(f"custom_call @{name}: LAPACK info {info}", op.where())
        qr[b], piv[b], tau[b] = qr_b, piv_b, tau_b
    return [qr.reshape(batch + (m, n)), piv.reshape(batch + (n,)).astype(_dtype(op, 1)),
            tau.reshape(batch + (k,))]


LAPACK_MORE = {}
for _p in "sdcz":
    LAPACK_MORE[f"lapack_{_p}geqp3_ffi"] = _geqp3
    LAPACK_MORE[f"lapack_{_p}geev_ffi"] = _geev
    LAPACK_MORE[f"lapack_{_p}gtsv_ffi"] = _gtsv
    LAPACK_MORE[f"lapack_{_p}gehrd_ffi"] = _gehrd
    LAPACK_MORE[f"lapack_{_p}gees_ffi"] = _gees
for _p in "sd":
    LAPACK_MORE[f"lapack_{_p}sytrd_ffi"] = _sytrd
for _p in "cz":
    LAPACK_MORE[f"lapack_{_p}hetrd_ffi"] = _sytrd
