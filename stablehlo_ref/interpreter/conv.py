"""stablehlo.convolution: dimension numbers, strides, padding, lhs/rhs dilation, window
reversal, feature and batch groups, for integer, float and complex element types.

Vectorized as im2col: the padded, dilated input is viewed as sliding windows
(`sliding_windows`, no copy), strided, and contracted with the kernel by one matmul
per group. A transposed convolution (input dilation, unit window strides) skips the
dilation's zeros: one matmul of the input with every kernel position, its slabs added into
the outputs they reach (`_lhs_dilated`)."""
from __future__ import annotations

import math

import numpy as np

from ..errors import InterpreterError, NotImplementedOpError
from .blas import use_threads
from .linalg import acc_matmul
from .numerics import accumulation_dtype, elem, from_compute, sliding_windows
from .registry import kernel


def _dilate(x, axes, factors):
    """Insert factor-1 zeros between elements along each axis."""
    for ax, f in zip(axes, factors):
        if f == 1 or x.shape[ax] == 0:
            continue
        shape = list(x.shape)
        shape[ax] = (x.shape[ax] - 1) * f + 1
        out = np.zeros(shape, dtype=x.dtype)
        idx = [slice(None)] * x.ndim
        idx[ax] = slice(None, None, f)
        out[tuple(idx)] = x
        x = out
    return x


def _pad(x, axes, pads):
    """Edge padding (lo, hi) per axis; negative amounts crop."""
    widths = [(0, 0)] * x.ndim
    crop = [slice(None)] * x.ndim
    for ax, (lo, hi) in zip(axes, pads):
        widths[ax] = (max(lo, 0), max(hi, 0))
        n = x.shape[ax] + max(lo, 0) + max(hi, 0)
        crop[ax] = slice(max(-lo, 0), n - max(-hi, 0))
    x = np.pad(x, widths)
    return x[tuple(crop)]


def _pad_into(x, axes, pads, dtype):
    """`_pad(x.astype(dtype), axes, pads)` in one copy, for non-negative pads."""
    shape = list(x.shape)
    inner = [slice(None)] * x.ndim
    for ax, (lo, hi) in zip(axes, pads):
        shape[ax] += lo + hi
        inner[ax] = slice(lo, lo + x.shape[ax])
    out = np.zeros(shape, dtype=dtype)
    out[tuple(inner)] = x
    return out


def _convolve_channels_last(lhs, rhs, strides, padding, lhs_dilation, rhs_dilation,
                            reversal, dims, cd):
    """A convolution without feature or batch groups, as one matmul in channels-last
    layout: the padded input (N, S..., C) is viewed as windows, whose (K..., C) elements
    (the kernel window's last row of positions and the channels contiguous in memory) are
    copied once into the rows of an (N*P, K*C) matrix that multiplies the kernel arranged as
    (K*C, O). Returns the (N, out spatial..., O) sums, or None (an empty window or result:
    the general path)."""
    ib, if_, isp = dims["input_batch_dimension"], dims["input_feature_dimension"], list(dims["input_spatial_dimensions"])
    ki, ko, ksp = dims["kernel_input_feature_dimension"], dims["kernel_output_feature_dimension"], list(dims["kernel_spatial_dimensions"])
    ns = len(isp)
    sp_axes = list(range(1, 1 + ns))
    x = np.transpose(lhs, [ib] + isp + [if_])               # N, S..., C
    w = np.transpose(rhs, ksp + [ki, ko])                   # K..., I, O
    if reversal is not None and any(reversal):
        w = np.flip(w, axis=[i for i, r in enumerate(reversal) if r])
    w = _dilate(w, list(range(ns)), rhs_dilation)
    ksize = w.shape[:ns]
    if any(d != 1 for d in lhs_dilation) and all(s == 1 for s in strides):
        res = _lhs_dilated(x, w, padding, lhs_dilation, cd)
        if res is not None:
            return res
    if any(d != 1 for d in lhs_dilation) or any(lo < 0 or hi < 0 for lo, hi in padding):
        x = _pad(_dilate(x.astype(cd), sp_axes, lhs_dilation), sp_axes, padding)
    else:
        x = _pad_into(x, sp_axes, padding, cd)
    N, C = x.shape[0], x.shape[-1]
    O = w.shape[-1]
    if w.shape[ns] != C:
        return None                                        # the general path reports it
    out_sp = []
    for d in range(ns):
        span = x.shape[1 + d] - ksize[d]
        out_sp.append(0 if span < 0 else span // strides[d] + 1)
    if not all(s > 0 for s in out_sp) or not all(k > 0 for k in ksize) or N == 0 or C == 0:
        return None
    win = sliding_windows(x, tuple(ksize), tuple(sp_axes))
    win = win[(slice(None),) + tuple(slice(0, (n - 1) * s + 1, s) for n, s in zip(out_sp, strides))]
    # win: N, out..., C, K...  ->  N, out..., K..., C
    win = win.transpose([0] + sp_axes + list(range(2 + ns, 2 + 2 * ns)) + [1 + ns])
    P = math.prod(out_sp)
    Kp = math.prod(ksize)
    patches = win.reshape(N * P, Kp * C)
    wk = w.astype(cd).reshape(Kp * C, O)
    use_threads(2.0 * N * P * O * C * Kp)
    with np.errstate(all="ignore"):
        out = acc_matmul(patches, wk)
    return out.reshape([N] + out_sp + [O])


def _lhs_dilated(x, w, padding, lhs_dilation, cd):
    """`_convolve_channels_last` for an input dilated by `lhs_dilation` (a transposed
    convolution: jax's conv_transpose) and unit window strides, without the dilation's
    zeros: each input element's products with every kernel position, one matmul
    (N*S, C) x (C, K*O), are added into the outputs they reach, one strided slab per kernel
    position (output o takes input i through kernel position k where o = i*d + lo - k). The
    same sums as the window form, in another order (exact for integers; floats in the
    accumulation type, rounded once to the result type afterwards). x: (N, S..., C) not
    dilated; w: (K..., C, O) flipped and dilated. None where a size is 0 (the window form
    decides)."""
    ns = x.ndim - 2
    N, S, C = x.shape[0], x.shape[1:-1], x.shape[-1]
    ksize, O = w.shape[:ns], w.shape[-1]
    if w.shape[ns] != C or N == 0 or C == 0 or O == 0 or 0 in S or 0 in ksize:
        return None
    out_sp = []
    for a in range(ns):
        lo, hi = padding[a]
        n = (S[a] - 1) * lhs_dilation[a] + 1 + lo + hi - ksize[a] + 1
        if n <= 0:
            return None
        out_sp.append(n)
    Kp = math.prod(ksize)
    xs = x.astype(cd).reshape(-1, C)
    wk = w.astype(cd).reshape(Kp, C, O).transpose(1, 0, 2).reshape(C, Kp * O)
    use_threads(2.0 * xs.shape[0] * C * Kp * O)
    with np.errstate(all="ignore"):
        y = acc_matmul(xs, wk).reshape((N,) + tuple(S) + (Kp, O))
    out = np.zeros((N,) + tuple(out_sp) + (O,), dtype=y.dtype)
    whole = slice(None)
    add = np.add
    with np.errstate(all="ignore"):
        for j, k in enumerate(np.ndindex(*ksize)):
            o_sl, i_sl = [whole], [whole]
            for a in range(ns):
                d, lo = lhs_dilation[a], padding[a][0]
                i0 = max(0, -((lo - k[a]) // d))             # first i with i*d + lo - k >= 0
                i1 = min(S[a] - 1, (out_sp[a] - 1 + k[a] - lo) // d)
                if i1 < i0:
                    break
                o0 = i0 * d + lo - k[a]
                o_sl.append(slice(o0, o0 + (i1 - i0) * d + 1, d))
                i_sl.append(slice(i0, i1 + 1))
            else:
                i_sl.append(j)
                dst = out[tuple(o_sl)]
                add(dst, y[tuple(i_sl)], out=dst)
    return out


def convolve(lhs, rhs, *, strides, padding, lhs_dilation, rhs_dilation, reversal,
             dims, feature_group_count, batch_group_count, et):
    """lhs, rhs as numpy arrays; dims is the dict of conv dimension numbers; returns the
    result in the result element type `et`."""
    ib, if_, isp = dims["input_batch_dimension"], dims["input_feature_dimension"], list(dims["input_spatial_dimensions"])
    ki, ko, ksp = dims["kernel_input_feature_dimension"], dims["kernel_output_feature_dimension"], list(dims["kernel_spatial_dimensions"])
    ob, of, osp = dims["output_batch_dimension"], dims["output_feature_dimension"], list(dims["output_spatial_dimensions"])
    ns = len(isp)
    cd = accumulation_dtype(et)
    if feature_group_count == 1 and batch_group_count == 1:
        res = _convolve_channels_last(lhs, rhs, strides, padding, lhs_dilation, rhs_dilation,
                                      reversal, dims, cd)
        if res is not None:
            perm = [0] * (2 + ns)          # res: N, out spatial..., O
            perm[ob] = 0
            perm[of] = 1 + ns
            for i, d in enumerate(osp):
                perm[d] = 1 + i
            return _in_result_type(np.transpose(res, perm), et)
    x = np.transpose(lhs, [ib, if_] + isp).astype(cd)      # N, C, S...
    w = np.transpose(rhs, [ko, ki] + ksp).astype(cd)       # O, I, K...
    sp_axes = list(range(2, 2 + ns))
    if reversal is not None and any(reversal):
        w = np.flip(w, axis=[2 + i for i, r in enumerate(reversal) if r])
    x = _dilate(x, sp_axes, lhs_dilation)
    x = _pad(x, sp_axes, padding)
    w = _dilate(w, sp_axes, rhs_dilation)
    N, C = x.shape[:2]
    O, I = w.shape[:2]
    ksize = w.shape[2:]
    out_sp = []
    for d in range(ns):
        span = x.shape[2 + d] - ksize[d]
        out_sp.append(0 if span < 0 else span // strides[d] + 1)
    G, B = feature_group_count, batch_group_count
    if C != I * G or O % G or O % B or N % B:
        raise InterpreterError(f"stablehlo.convolution: inconsistent shapes (input features {C}, "
                               f"kernel input features {I}, feature_group_count {G}, "
                               f"batch_group_count {B}, output features {O}, batch {N})")
    Nb = N // B
    if all(s > 0 for s in out_sp) and all(k > 0 for k in ksize):
        win = sliding_windows(x, tuple(ksize), tuple(sp_axes))
        win = win[(slice(None), slice(None)) + tuple(slice(None, None, s) for s in strides)]
        win = win[(slice(None), slice(None)) + tuple(slice(0, n) for n in out_sp)]
        # win: N, C, out_sp..., K...
        P = math.prod(out_sp)
        Kp = math.prod(ksize)
        win = np.moveaxis(win, 1, 1 + ns)                   # N, out_sp..., C, K...
        win = win.reshape(N, P, C, Kp)
        wk = w.reshape(O, I, Kp)
        out = np.zeros((Nb, P, O), dtype=cd)
        Og = O // G
        Ob = O // B
        use_threads(2.0 * Nb * P * O * I * Kp)
        with np.errstate(all="ignore"):
            for b in range(B):
                xb = win[b * Nb:(b + 1) * Nb]
                for g in range(G):
                    o_lo = g * Og if B == 1 else b * Ob
                    o_hi = o_lo + (Og if B == 1 else Ob)
                    if G > 1 and B > 1:
                        raise NotImplementedOpError("stablehlo.convolution",
                                                    "feature_group_count > 1 with batch_group_count > 1")
                    xg = xb[:, :, g * I:(g + 1) * I, :].reshape(Nb, P, I * Kp)
                    wg = wk[o_lo:o_hi].reshape(o_hi - o_lo, I * Kp)
                    out[:, :, o_lo:o_hi] = acc_matmul(xg, wg.T)
                    if B > 1:
                        break
        res = out.reshape([Nb] + out_sp + [O])
        res = np.moveaxis(res, -1, 1)                       # Nb, O, out_sp...
    else:
        res = np.zeros([Nb, O] + out_sp, dtype=cd)
    perm = [0] * (2 + ns)
    perm[ob] = 0
    perm[of] = 1
    for i, d in enumerate(osp):
        perm[d] = 2 + i
    return _in_result_type(np.transpose(res, perm), et)


def _in_result_type(res, et):
    if et.is_bool:
        return res != 0
    if et.is_complex:
        return res.astype(et.dtype)
    return from_compute(res, et)


def _ints(attr, default, n):
    if attr is None:
        return [default] * n
    vals = getattr(attr, "values", None)
    if vals is None:
        vals = np.asarray(getattr(attr, "array")).reshape(-1).tolist()
    return [int(v) for v in vals]


@kernel("stablehlo.convolution")
def convolution(ctx, op, lhs, rhs):
    a = op.attributes
    if hasattr(op.operands[0].type, "element_type") and type(op.operands[0].type.element_type).__name__ == "QuantizedType":
        raise NotImplementedOpError(op.name, "quantized operands")
    dims = dict(a["dimension_numbers"].fields)
    ns = len(dims["input_spatial_dimensions"])
    pad_attr = a.get("padding")
    if pad_attr is None:
        padding = [(0, 0)] * ns
    else:
        pv = np.asarray(pad_attr.array).reshape(-1, 2)
        padding = [(int(lo), int(hi)) for lo, hi in pv]
    rev_attr = a.get("window_reversal")
    reversal = [bool(v) for v in rev_attr.values] if rev_attr is not None else None
    fgc = a.get("feature_group_count")
    bgc = a.get("batch_group_count")
    return convolve(lhs, rhs,
                    strides=_ints(a.get("window_strides"), 1, ns), padding=padding,
                    lhs_dilation=_ints(a.get("lhs_dilation"), 1, ns),
                    rhs_dilation=_ints(a.get("rhs_dilation"), 1, ns), reversal=reversal,
                    dims=dims, feature_group_count=int(fgc.value) if fgc is not None else 1,
                    batch_group_count=int(bgc.value) if bgc is not None else 1,
                    et=elem(op.results[0].type))
