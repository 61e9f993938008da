"""Linear algebra: dot_general (and the legacy dot)."""
from __future__ import annotations

import numpy as np

from .numerics import elem, from_compute
from .registry import kernel


def dot_general_arrays(lhs, rhs, lb, rb, lc, rc, et):
    lfree = [d for d in range(lhs.ndim) if d not in lb and d not in lc]
    rfree = [d for d in range(rhs.ndim) if d not in rb and d not in rc]
    bshape = [lhs.shape[d] for d in lb]
    csize = int(np.prod([lhs.shape[d] for d in lc])) if lc else 1
    lfs = [lhs.shape[d] for d in lfree]
    rfs = [rhs.shape[d] for d in rfree]
    B = int(np.prod(bshape)) if bshape else 1
    L = int(np.prod(lfs)) if lfs else 1
    R = int(np.prod(rfs)) if rfs else 1
    if et.is_complex:
        cd = et.dtype
    elif et.is_float:
        cd = np.float64
    elif et.is_bool:
        cd = np.int64
    else:
        cd = np.int64 if (et.is_signed or et.bits < 64) else np.uint64
    a = np.transpose(lhs, list(lb) + lfree + list(lc)).astype(cd).reshape(B, L, csize)
    b = np.transpose(rhs, list(rb) + list(rc) + rfree).astype(cd).reshape(B, csize, R)
    with np.errstate(all="ignore"):
        out = np.matmul(a, b)
    out = out.reshape(bshape + lfs + rfs)
    if et.is_bool:
        return out != 0
    return from_compute(out, et) if not et.is_complex else out.astype(et.dtype)


@kernel("stablehlo.dot_general")
def dot_general(ctx, op, lhs, rhs):
    d = dict(op.attributes["dot_dimension_numbers"].fields)
    et = elem(op.results[0].type)
    return dot_general_arrays(lhs, rhs, tuple(d["lhs_batching_dimensions"]), tuple(d["rhs_batching_dimensions"]),
                              tuple(d["lhs_contracting_dimensions"]), tuple(d["rhs_contracting_dimensions"]), et)


@kernel("stablehlo.dot")
def dot(ctx, op, lhs, rhs):
    et = elem(op.results[0].type)
    lc = (lhs.ndim - 1,)
    rc = (0,)
    return dot_general_arrays(lhs, rhs, (), (), lc, rc, et)
