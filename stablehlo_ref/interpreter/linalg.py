"""Linear algebra: dot_general (and the legacy dot)."""
from __future__ import annotations

import math

import numpy as np

from .blas import SINGLE_THREADED_FLOPS, RUN, use_threads
from .numerics import accumulation_dtype, elem, from_compute
from .registry import kernel, specializer


# Integer products with at least this many multiply-adds may go through float BLAS (`acc_matmul`);
# smaller ones keep numpy's integer loop, which the two bounds' reductions would cost more than
_INT_BLAS_MIN = 1 << 15
_F64_EXACT = 1 << 53          # integers of smaller magnitude are exact in f64
_F32_EXACT = 1 << 24          # and in f32
_F64 = np.dtype(np.float64)
_F32 = np.dtype(np.float32)


def _magnitude(x) -> int:
    """The largest |element| of a non-empty integer array, as a Python int."""
    return max(int(x.max()), -int(x.min()))


def acc_matmul(a, b):
    """`np.matmul(a, b)` of two arrays of one accumulation dtype (`accumulation_dtype`).
    Integers take float BLAS where every partial sum is exact there: the contraction size
    times the largest magnitudes of the two operands bounds every product and every partial
    sum, in any order of summation and with or without fused multiply-adds; below 2^24 (f32)
    or 2^53 (f64) the float products are the same integers the integer loop computes (which
    does not wrap there either), converted back exactly. numpy has no BLAS for integers: its
    loop took 13.7 ms for a 256x256x256 int8 product (jnp.matmul with
    preferred_element_type=int32), f64 BLAS 0.9 ms, XLA 0.18 ms."""
    if a.dtype.kind in "iu" and a.dtype == b.dtype and a.ndim and b.ndim and a.size and b.size:
        k = a.shape[-1]
        if a.size * (b.shape[-1] if b.ndim >= 2 else 1) >= _INT_BLAS_MIN:
            bound = k * _magnitude(a) * _magnitude(b)
            if bound < _F64_EXACT:
                ft = _F32 if bound < _F32_EXACT else _F64
                return np.matmul(a.astype(ft), b.astype(ft)).astype(a.dtype)
    return np.matmul(a, b)


def dot_general_arrays(lhs, rhs, lb, rb, lc, rc, et):
    lfree = [d for d in range(lhs.ndim) if d not in lb and d not in lc]
    rfree = [d for d in range(rhs.ndim) if d not in rb and d not in rc]
    bshape = [lhs.shape[d] for d in lb]
    csize = math.prod([lhs.shape[d] for d in lc])
    lfs = [lhs.shape[d] for d in lfree]
    rfs = [rhs.shape[d] for d in rfree]
    B = math.prod(bshape)
    L = math.prod(lfs)
    R = math.prod(rfs)
    cd = accumulation_dtype(et)
    # C-contiguous operands: np.matmul on strided 3-D views falls back to a slow non-BLAS loop
    a = np.transpose(lhs, list(lb) + lfree + list(lc)).astype(cd, order="C").reshape(B, L, csize)
    b = np.transpose(rhs, list(rb) + list(rc) + rfree).astype(cd, order="C").reshape(B, csize, R)
    use_threads(2.0 * B * L * R * csize)
    out = acc_matmul(a, b)        # (under the evaluator's errstate: no warnings)
    out = out.reshape(bshape + lfs + rfs)
    if et.is_bool:
        return out != 0
    return from_compute(out, et) if not et.is_complex else out.astype(et.dtype)


def as_result_type(x, op, i, et):
    """Operand i converted to the result element type first, as the spec's dot_general does
    for operands of another element type (a no-op when the types agree)."""
    t = op.operands[i].type
    src = elem(t)
    if src is et or src == et or getattr(t, "element_type", None) is not src:
        return x
    from .elementwise import convert_array
    return convert_array(x, src, et)


@kernel("stablehlo.dot_general")
def dot_general(ctx, op, lhs, rhs):
    d = dict(op.attributes["dot_dimension_numbers"].fields)
    et = elem(op.results[0].type)
    lhs = as_result_type(lhs, op, 0, et)
    rhs = as_result_type(rhs, op, 1, et)
    lb, rb = d["lhs_batching_dimensions"], d["rhs_batching_dimensions"]
    lc, rc = d["lhs_contracting_dimensions"], d["rhs_contracting_dimensions"]
    if not lb and not rb and lhs.ndim <= 2 and rhs.ndim <= 2 and (lhs.ndim == 2 or rhs.ndim == 2) \
            and len(lc) == 1 and len(rc) == 1 and et.kind == "float":
        return _dot_matrices(lhs, rhs, lc[0], rc[0], et)
    if lhs.ndim == 2 and rhs.ndim == 2 and not lb and not rb and tuple(lc) == (1,) \
            and tuple(rc) == (0,) and not et.is_complex:
        # a plain matrix product (what `dot_general_arrays` does, without the permutations;
        # not complex: numpy's complex `dot` of a 1x1 by 1x1 product gives the sign of a zero
        # imaginary part from the product itself, -0 where matmul's sum from +0 gives +0)
        m, k = lhs.shape
        n = rhs.shape[1]
        cd = accumulation_dtype(et)
        use_threads(2.0 * m * n * k)
        # (ndarray.dot: the same BLAS product as matmul's for these 2-D operands, with less
        # call overhead)
        out = lhs.astype(cd).dot(rhs.astype(cd)) if cd.kind == "f" or cd.kind == "c" \
            else acc_matmul(lhs.astype(cd), rhs.astype(cd))
        if et.is_bool:
            return out != 0
        return from_compute(out, et) if not et.is_complex else out.astype(et.dtype)
    return dot_general_arrays(lhs, rhs, tuple(d["lhs_batching_dimensions"]), tuple(d["rhs_batching_dimensions"]),
                              tuple(d["lhs_contracting_dimensions"]), tuple(d["rhs_contracting_dimensions"]), et)


def _dot_matrices(lhs, rhs, lc, rc, et):
    """dot_general of float operands of rank 1 or 2 (not both 1) with one contracting
    dimension each and no batch: by `ndarray.dot` in f64, rounded once to `et`. The product
    of two matrices (a GEMM: BLAS packs its operands, so their memory order does not change
    a bit of it) takes a transposed operand as the view it is, not a row-major copy; one with
    a vector side (a GEMV, whose kernels for the two orders sum in different orders) gets
    the layout it always had: row-major operands, as `dot_general_arrays` gives matmul,
    except for a plain product [1] x [0], cast in its operands' memory order."""
    cd = _F64
    k = lhs.shape[lc]
    two = lhs.ndim == 2 and rhs.ndim == 2
    plain = two and lc == 1 and rc == 0
    if lhs.ndim == 2 and lc == 0:
        lhs = lhs.T
    if rhs.ndim == 2 and rc == 1:
        rhs = rhs.T
    L = lhs.shape[0] if lhs.ndim == 2 else 1
    R = rhs.shape[1] if rhs.ndim == 2 else 1
    # (a plain product [1] x [0] of matrices: their memory order, as `dot_general` has
    # always cast them)
    order = "K" if plain or (two and L > 1 and R > 1) else "C"
    use_threads(2.0 * L * R * k)
    out = lhs.astype(cd, order=order).dot(rhs.astype(cd, order=order))
    return out.astype(et.dtype, copy=False)


# operands of up to this many elements keep their arrangement for the next call (see below)
_KEEP_ARRANGED = 1 << 18


@specializer("stablehlo.dot_general")
def dot_general_specialized(op, known=None):
    """dot_general of operands with static shapes and the result's element type: the
    transpositions, shapes and BLAS thread count worked out once (operands of other shapes,
    as in a body applied over arrays, take the general kernel)."""
    lt, rt = op.operands[0].type, op.operands[1].type
    et = elem(op.results[0].type)
    if elem(lt) != et or elem(rt) != et or et.is_complex or et.is_bool:
        return None
    lshape, rshape = tuple(lt.shape), tuple(rt.shape)
    if None in lshape or None in rshape:
        return None
    d = dict(op.attributes["dot_dimension_numbers"].fields)
    lb, rb = tuple(d["lhs_batching_dimensions"]), tuple(d["rhs_batching_dimensions"])
    lc, rc = tuple(d["lhs_contracting_dimensions"]), tuple(d["rhs_contracting_dimensions"])
    lfree = [i for i in range(len(lshape)) if i not in lb and i not in lc]
    rfree = [i for i in range(len(rshape)) if i not in rb and i not in rc]
    bshape = [lshape[i] for i in lb]
    csize = math.prod([lshape[i] for i in lc])
    B = math.prod(bshape)
    L = math.prod([lshape[i] for i in lfree])
    R = math.prod([rshape[i] for i in rfree])
    out_shape = tuple(bshape + [lshape[i] for i in lfree] + [rshape[i] for i in rfree])
    lperm = list(lb) + lfree + list(lc)
    rperm = list(rb) + list(rc) + rfree
    lperm = None if lperm == list(range(len(lshape))) else tuple(lperm)
    rperm = None if rperm == list(range(len(rshape))) else tuple(rperm)
    a_shape, b_shape = (B, L, csize), (B, csize, R)
    # a plain matrix operand (one free and one contracting dimension, no batch) keeps its
    # memory order when cast (a transposed one stays a transposed view, which BLAS reads
    # with its transpose flag) instead of being copied into row-major order
    # (BLAS floats only: numpy's integer matmul loop prefers row-major operands)
    blas = et.is_float
    l_order = "K" if blas and not lb and len(lfree) == 1 and len(lc) == 1 else "C"
    r_order = "K" if blas and not rb and len(rfree) == 1 and len(rc) == 1 else "C"
    cd = accumulation_dtype(et)
    flops = 2.0 * B * L * R * csize
    general = dot_general
    integer = et.is_integer

    # the operand last given on each side, its arrangement for matmul and the run it was
    # given in (an operand that stays the same object within a run, as a loop's weights do, is
    # arranged once: the entry holds the operand, so nothing in the run can have written into
    # it meanwhile; a caller may between runs, hence one run only). One tuple per side, read
    # and replaced whole.
    last = [(None, None, -1), (None, None, -1)]
    keep_l = math.prod(lshape) <= _KEEP_ARRANGED
    keep_r = math.prod(rshape) <= _KEEP_ARRANGED

    if blas and not lb and (len(lshape) > 1 or len(rshape) > 1):
        # no batch dimension: `ndarray.dot` of the operands as matrices (a rank-1 operand that
        # is all contraction stays a vector), the BLAS call (gemm, gemv or syrk) np.matmul
        # makes for them, in the same memory order, without matmul's batch loop and per-call
        # setup (several microseconds: the small dots of a scan's step)
        a2 = (csize,) if len(lshape) == 1 else (L, csize)
        b2 = (csize,) if len(rshape) == 1 else (csize, R)
        natural = tuple(a2[:-1]) + tuple(b2[1:])
        if len(lshape) <= 2 and len(rshape) <= 2 and len(lc) == 1 and len(rc) == 1:
            # the operands the general kernel (`_dot_matrices`) gives BLAS, in the same memory
            # order, so that a first run and a compiled one give the same bytes: a GEMV's
            # kernels for the two orders sum in different orders (and use FMA differently)
            two = len(lshape) == 2 and len(rshape) == 2
            plain = two and lc == (1,) and rc == (0,)
            l_order = r_order = "K" if plain or (two and L > 1 and R > 1) else "C"
        lt_shape = lshape if lperm is None else tuple(lshape[i] for i in lperm)
        rt_shape = rshape if rperm is None else tuple(rshape[i] for i in rperm)
        return _dot_static_2d(lshape, rshape, lperm, rperm, a2 if a2 != lt_shape else None,
                              b2 if b2 != rt_shape else None,
                              out_shape if natural != out_shape else None, l_order, r_order, cd,
                              flops, et.dtype, keep_l, keep_r, general)

    def dot_general_static(ctx, op, lhs, rhs):
        if lhs.shape != lshape or rhs.shape != rshape:
            return general(ctx, op, lhs, rhs)
        run = RUN[0]
        kept = last[0]
        if lhs is kept[0] and kept[2] == run:
            a = kept[1]
        else:
            a = (lhs if lperm is None else lhs.transpose(lperm)).astype(cd, order=l_order).reshape(a_shape)
            if keep_l:
                last[0] = (lhs, a, run)
        kept = last[1]
        if rhs is kept[0] and kept[2] == run:
            b = kept[1]
        else:
            b = (rhs if rperm is None else rhs.transpose(rperm)).astype(cd, order=r_order).reshape(b_shape)
            if keep_r:
                last[1] = (rhs, b, run)
        use_threads(flops)
        out = (acc_matmul(a, b) if integer else np.matmul(a, b)).reshape(out_shape)
        return from_compute(out, et) if integer else out.astype(et.dtype, copy=False)
    return dot_general_static


def _dot_static_2d(lshape, rshape, lperm, rperm, a_shape, b_shape, out_shape, l_order, r_order,
                   cd, flops, dtype, keep_l, keep_r, general):
    """`dot_general_specialized`'s kernel for float operands without batch dimensions: each
    operand permuted, cast to the accumulation type in the layout matmul would get and
    reshaped (`a_shape` / `b_shape`, None where nothing is to reshape), the product by
    `ndarray.dot`, rounded once to `dtype`; the arranged operands kept as the batched
    kernel keeps them."""
    last = [(None, None, -1), (None, None, -1)]
    dot = np.ndarray.dot
    # (astype's positional forms, without its keyword parsing: the same casts; the product
    # of the accumulation type is returned as it is where that is the result's type)
    same = np.dtype(dtype) == np.dtype(cd)
    # (use_threads leaves the count alone below this: the call is skipped, as for the small
    # products of a scan's step)
    threads = flops >= SINGLE_THREADED_FLOPS

    def dot_general_2d(ctx, op, lhs, rhs):
        if lhs.shape != lshape or rhs.shape != rshape:
            return general(ctx, op, lhs, rhs)
        run = RUN[0]
        kept = last[0]
        if lhs is kept[0] and kept[2] == run:
            a = kept[1]
        else:
            a = (lhs if lperm is None else lhs.transpose(lperm)).astype(cd, l_order)
            if a_shape is not None:
                a = a.reshape(a_shape)
            if keep_l:
                last[0] = (lhs, a, run)
        kept = last[1]
        if rhs is kept[0] and kept[2] == run:
            b = kept[1]
        else:
            b = (rhs if rperm is None else rhs.transpose(rperm)).astype(cd, r_order)
            if b_shape is not None:
                b = b.reshape(b_shape)
            if keep_r:
                last[1] = (rhs, b, run)
        if threads:
            use_threads(flops)
        out = dot(a, b)
        if out_shape is not None:
            out = out.reshape(out_shape)
        return out if same else out.astype(dtype)
    return dot_general_2d


@kernel("stablehlo.dot")
def dot(ctx, op, lhs, rhs):
    et = elem(op.results[0].type)
    lhs = as_result_type(lhs, op, 0, et)
    rhs = as_result_type(rhs, op, 1, et)
    lc = (lhs.ndim - 1,)
    rc = (0,)
    return dot_general_arrays(lhs, rhs, (), (), lc, rc, et)


# ------------------------------------------------------------------ fft, triangular_solve, cholesky

def _flag(attr, default=False):
    if attr is None:
        return default
    return bool(getattr(attr, "value", attr))


def _enum(attr, default):
    if attr is None:
        return default
    return str(getattr(attr, "value", attr))


@kernel("stablehlo.fft")
def fft(ctx, op, x):
    from ..errors import InterpreterError
    kind = _enum(op.attributes.get("fft_type"), "FFT")
    lengths = [int(v) for v in op.attributes["fft_length"].values]
    et = elem(op.results[0].type)
    k = len(lengths)
    axes = list(range(x.ndim - k, x.ndim))
    # the result's shape from the operand's and fft_length (the type may leave dims open)
    inner = lengths[:-1] + [lengths[-1] // 2 + 1] if kind == "RFFT" and k else lengths
    rshape = tuple(x.shape[:x.ndim - k]) + tuple(inner)
    declared = tuple(op.results[0].type.shape)
    with np.errstate(all="ignore"):
        if kind == "FFT":
            out = np.fft.fftn(x.astype(np.complex128), s=lengths, axes=axes)
        elif kind == "IFFT":
            out = np.fft.ifftn(x.astype(np.complex128), s=lengths, axes=axes)
        elif kind == "RFFT":
            if any(n == 0 for n in lengths):
                out = np.zeros(rshape, dtype=np.complex128)
            else:
                out = np.fft.rfftn(x.astype(np.float64), s=lengths, axes=axes)
        elif kind == "IRFFT":
            if any(n == 0 for n in lengths):
                out = np.zeros(rshape, dtype=np.float64)
            else:
                out = np.fft.irfftn(x.astype(np.complex128), s=lengths, axes=axes)
        else:
            raise InterpreterError(f"stablehlo.fft: unknown fft_type {kind}")
    if len(out.shape) != len(declared) or any(d is not None and d != s for d, s in zip(declared, out.shape)):
        raise InterpreterError(f"stablehlo.fft: result shape {tuple(out.shape)} does not match "
                               f"the declared {declared}")
    return out.astype(et.dtype) if et.is_complex else from_compute(out, et)


@kernel("stablehlo.triangular_solve")
def triangular_solve(ctx, op, a, b):
    a_ = op.attributes
    left = _flag(a_.get("left_side"))
    lower = _flag(a_.get("lower"))
    unit = _flag(a_.get("unit_diagonal"))
    trans = _enum(a_.get("transpose_a"), "NO_TRANSPOSE")
    et = elem(op.results[0].type)
    X = solve_triangular(a, b, left, lower, unit, trans, accumulation_dtype(et))
    return X.astype(et.dtype) if et.is_complex else from_compute(X, et)


def solve_triangular(a, b, left: bool, lower: bool, unit: bool, trans: str, cd):
    """op(A) X = B (`left`) or X op(A) = B, A triangular, in dtype `cd`; op is NO_TRANSPOSE,
    TRANSPOSE or ADJOINT. A singular A gives NaN."""
    if a.__class__ is np.ndarray and b.__class__ is np.ndarray and a.dtype in _REAL \
            and b.dtype in _REAL and np.dtype(cd) == _F64:
        X = _solve_triangular_real(a, b, left, lower, unit, trans)
        if X is not None:
            return X
    return _solve_triangular_general(a, b, left, lower, unit, trans, cd)


_REAL = (np.dtype(np.float32), _F64)
_TRIANGLES = {}          # (n, lower, unit) -> (base, keep): the fixed entries and where a's stay


def _triangle(a, lower: bool, unit: bool):
    """`_solve_triangular_general`'s A for a real float `a` of shape (..., n, n): a in f64 in
    the `lower` (else upper) triangle, 0 in the other, 1 on the diagonal when `unit`; two
    numpy calls (the fixed entries copied in, a's put where they stay)."""
    n = a.shape[-1]
    key = (n, lower, unit)
    hit = _TRIANGLES.get(key)
    if hit is None:
        i = np.arange(n)
        keep = (i[None, :] <= i[:, None]) if lower else (i[None, :] >= i[:, None])
        base = np.zeros((n, n), np.float64)
        if unit:
            keep &= i[None, :] != i[:, None]
            base[i, i] = 1.0
        if len(_TRIANGLES) >= 64:
            _TRIANGLES.clear()
        hit = _TRIANGLES[key] = (base, keep)
    base, keep = hit
    A = np.empty(a.shape, np.float64)
    A[...] = base
    np.copyto(A, a, where=keep)
    return A


def _solve_triangular_real(a, b, left, lower, unit, trans):
    """`_solve_triangular_general` for real f32/f64 operands: one matrix by LAPACK's triangular
    solve (`_trtrs`), a batch by the same LAPACK solve as the general path (numpy's `solve`
    gufunc, which np.linalg.solve calls) without the wrapper's per-call work; None
    (the general path decides) for shapes np.linalg.solve would reject, and for a result with
    a NaN (np.linalg.solve raises LinAlgError for a singular matrix, and the general path
    then gives NaN everywhere). (Floating-point warnings are off for the whole run: set by
    the evaluator.)"""
    solve = _gufunc_solve()
    if solve is None or a.ndim < 2 or b.ndim < 2 or a.shape[-1] != a.shape[-2] \
            or a.shape[-1] == 0 or b.size == 0:
        return None
    if a.ndim == 2 and b.ndim == 2 and b.shape[0 if left else 1] == a.shape[0]:
        X, info = _trtrs(a, b, left, lower, unit, trans)
        if info != 0:
            return None
    else:
        X = None
    if X is None:
        A = _triangle(a, lower, unit)
        if trans != "NO_TRANSPOSE":          # (the adjoint of a real matrix is its transpose)
            A = np.swapaxes(A, -1, -2)
        B = b.astype(np.float64)
        if left:
            X = solve(A, B, signature="dd->d")
        else:
            X = np.swapaxes(solve(np.swapaxes(A, -1, -2), np.swapaxes(B, -1, -2),
                                  signature="dd->d"), -1, -2)
    s = X.sum()
    if s != s:
        return None
    return X


_TRTRS = []


def _trtrs(a, b, left, lower, unit, trans):
    """op(A) X = B (`left`) or X op(A) = B for one real matrix A (2-D a, b; op NO_TRANSPOSE
    or TRANSPOSE, the adjoint of a real matrix being its transpose) by LAPACK's triangular
    solve ?trtrs in f64: forward or back substitution reading only A's `lower` (else upper)
    triangle, its diagonal taken as ones when `unit` (no masked copy of A, no LU
    factorization of it as a general solve makes; a 32x32 solve 25 -> 13 us). X op(A) = B is
    solved as op(A)^T X^T = B^T. Returns (X, C-ordered, or None without scipy; LAPACK's
    info: > 0 where A has a zero on its diagonal)."""
    if not _TRTRS:
        try:
            from scipy.linalg.lapack import dtrtrs
        except ImportError:      # pragma: no cover - scipy is a dependency
            dtrtrs = None
        _TRTRS.append(dtrtrs)
    trtrs = _TRTRS[0]
    if trtrs is None:
        return None, 0
    t = 0 if trans == "NO_TRANSPOSE" else 1
    A = a.astype(np.float64)
    if left:
        X, info = trtrs(A, b.astype(np.float64), lower=int(lower), trans=t, unitdiag=int(unit))
        return np.ascontiguousarray(X), info
    Xt, info = trtrs(A, b.T.astype(np.float64), lower=int(lower), trans=1 - t, unitdiag=int(unit))
    return np.ascontiguousarray(Xt.T), info


_GUFUNC = []


def _gufunc_solve():
    if not _GUFUNC:
        try:
            from numpy.linalg import _umath_linalg
            _GUFUNC.append(_umath_linalg.solve)
        except (ImportError, AttributeError):
            _GUFUNC.append(None)
    return _GUFUNC[0]


def _solve_triangular_general(a, b, left, lower, unit, trans, cd):
    if np.dtype(cd) == _F64 and a.dtype.kind in "fiub" and b.dtype.kind in "fiub" \
            and a.ndim == 2 and b.ndim == 2 and a.shape[0] == a.shape[1] and a.size \
            and b.size and b.shape[0 if left else 1] == a.shape[0]:
        # one real matrix: LAPACK's triangular solve (the fast path's); a zero on the
        # diagonal gives NaN everywhere, as a singular general solve does below
        X, info = _trtrs(a, b, left, lower, unit, trans)
        if X is not None:
            if info != 0:
                X = np.full(b.shape, np.nan)
            return X
    A = a.astype(cd)
    B = b.astype(cd)
    A = np.tril(A) if lower else np.triu(A)
    if unit:
        n = A.shape[-1]
        eye = np.eye(n, dtype=bool)
        A = np.where(eye, np.ones((), cd), A)
    if trans == "TRANSPOSE":
        A = np.swapaxes(A, -1, -2)
    elif trans == "ADJOINT":
        A = np.conj(np.swapaxes(A, -1, -2))
    with np.errstate(all="ignore"):
        try:
            if left:
                X = np.linalg.solve(A, B)
            else:
                # X A = B  <=>  A^T X^T = B^T
                X = np.swapaxes(np.linalg.solve(np.swapaxes(A, -1, -2), np.swapaxes(B, -1, -2)), -1, -2)
        except np.linalg.LinAlgError:
            X = np.full(np.broadcast_shapes(B.shape), np.nan, dtype=cd)
    return X


@kernel("stablehlo.cholesky")
def cholesky(ctx, op, a):
    lower = _flag(op.attributes.get("lower"))
    et = elem(op.results[0].type)
    cd = accumulation_dtype(et)
    A = a.astype(cd)
    # only the named triangle is read; build the Hermitian matrix from it
    T = np.tril(A) if lower else np.triu(A)
    diag = np.diagonal(A, axis1=-2, axis2=-1)
    H = T + np.conj(np.swapaxes(T, -1, -2))
    n = A.shape[-1]
    idx = np.arange(n)
    H[..., idx, idx] = np.real(diag) if et.is_complex else diag
    flat = H.reshape((-1, n, n))
    out = np.full(flat.shape, np.nan, dtype=cd)
    with np.errstate(all="ignore"):
        try:
            out = np.linalg.cholesky(flat)
        except np.linalg.LinAlgError:
            for i in range(flat.shape[0]):          # a loop over matrices, not elements
                try:
                    out[i] = np.linalg.cholesky(flat[i])
                except np.linalg.LinAlgError:
                    pass
    L = out.reshape(A.shape)
    res = L if lower else np.conj(np.swapaxes(L, -1, -2))
    return res.astype(et.dtype) if et.is_complex else from_compute(res, et)
