"""Verifiers of convolution and dynamic_conv: window and dimension-number structure, group counts,
result shape inference (dynamic sizes stay dynamic) and the quantization rules."""
from __future__ import annotations

from ..ir.attributes import StructAttr
from ..ir.types import QuantizedType
from .registry import verifier
from .shapes import const_ints, dim_ok, elem, ints, int_value, is_quantized, ranked


def _opt_ints(op, key, n, default):
    """A window attribute's values; absent or empty means the default in every dimension (as
    upstream reads them: an empty list is not a size mismatch)."""
    a = op.attributes.get(key)
    vals = ints(a) if a is not None else ()
    return vals if len(vals) else (default,) * n


def _fmt_shape(shape):
    return "[" + ", ".join("?" if s is None else str(s) for s in shape) + "]"


def _valid_distinct(dims, rank):
    return len(set(dims)) == len(dims) and all(0 <= d < rank for d in dims)


def conv_checks(op, check, padding):
    """Shared by convolution and dynamic_conv; `padding` is a list of (low, high) pairs or None
    (unknown: spatial result sizes are then not inferred)."""
    lhs, rhs, res = op.operands[0].type, op.operands[1].type, op.results[0].type
    dn = op.attributes.get("dimension_numbers")
    if not isinstance(dn, StructAttr) or not (ranked(lhs) and ranked(rhs)):
        return
    N = lhs.rank
    check(rhs.rank == N, "C1", f"lhs and rhs must have the same rank (got {lhs}, {rhs})")
    S = N - 2
    check(S >= 0, "C1", f"convolution operands must have rank 2 or more (got {lhs})")
    strides = _opt_ints(op, "window_strides", S, 1)
    check(len(strides) == S, "C2", f"window_strides must have {S} entries, has {len(strides)}")
    check(all(s > 0 for s in strides), "C3", f"window_strides {list(strides)} must be positive")
    if padding is not None:
        check(len(padding) == S, "C4", f"padding must have shape [{S}, 2], has {len(padding)} rows")
    lhs_dil = _opt_ints(op, "lhs_dilation", S, 1)
    check(len(lhs_dil) == S, "C5", f"lhs_dilation must have {S} entries, has {len(lhs_dil)}")
    check(all(s > 0 for s in lhs_dil), "C6", f"lhs_dilation {list(lhs_dil)} must be positive")
    rhs_dil = _opt_ints(op, "rhs_dilation", S, 1)
    check(len(rhs_dil) == S, "C7", f"rhs_dilation must have {S} entries, has {len(rhs_dil)}")
    check(all(s > 0 for s in rhs_dil), "C8", f"rhs_dilation {list(rhs_dil)} must be positive")
    rev = op.attributes.get("window_reversal")
    if rev is not None:
        n_rev = len(getattr(rev, "values", ()) or ())
        check(n_rev in (0, S), "C9", f"window_reversal must have {S} entries, has {n_rev}")

    g = lambda k: dn.get(k)
    ib, if_, isp = int(g("input_batch_dimension")), int(g("input_feature_dimension")), tuple(g("input_spatial_dimensions") or ())
    ki, ko, ksp = (int(g("kernel_input_feature_dimension")), int(g("kernel_output_feature_dimension")),
                   tuple(g("kernel_spatial_dimensions") or ()))
    ob, of, osp = int(g("output_batch_dimension")), int(g("output_feature_dimension")), tuple(g("output_spatial_dimensions") or ())
    fgc = int_value(op.attributes.get("feature_group_count"), 1)
    bgc = int_value(op.attributes.get("batch_group_count"), 1)
    check(fgc > 0, "C21", f"feature_group_count must be positive, got {fgc}", attr="feature_group_count")
    check(bgc > 0, "C22", f"batch_group_count must be positive, got {bgc}", attr="batch_group_count")
    check(fgc == 1 or bgc == 1, "C23", f"feature_group_count ({fgc}) or batch_group_count ({bgc}) must be 1")
    check(len(isp) == S, "C12", f"input_spatial_dimensions must have {S} entries, has {len(isp)}")
    check(_valid_distinct((ib, if_) + isp, N), "C13",
          f"input batch, feature and spatial dimensions must be distinct dimensions of {lhs}")
    check(len(ksp) == S, "C17", f"kernel_spatial_dimensions must have {S} entries, has {len(ksp)}")
    check(_valid_distinct((ki, ko) + ksp, N), "C18",
          f"kernel input feature, output feature and spatial dimensions must be distinct dimensions of {rhs}")
    # the window is the kernel's spatial extent; upstream requires it non-empty in every
    # spatial dimension (the spec leaves this implicit: no constraint id)
    for i, d in enumerate(ksp):
        w = rhs.shape[d]
        check(w is None or w > 0, "", f"expects window to have positive value for {i}-th window dimension, but got {w}")
    check(len(osp) == S, "C19", f"output_spatial_dimensions must have {S} entries, has {len(osp)}")
    if ranked(res):
        check(res.rank == N, "C26", f"result must have rank {N}, got {res}")
        check(_valid_distinct((ob, of) + osp, N), "C20",
              f"output batch, feature and spatial dimensions must be distinct dimensions of {res}")
    batch, feat = lhs.shape[ib], lhs.shape[if_]
    kin, kout = rhs.shape[ki], rhs.shape[ko]
    if batch is not None:
        check(batch % bgc == 0, "C10", f"lhs batch dimension size {batch} must be divisible by batch_group_count {bgc}")
    if feat is not None:
        check(feat % fgc == 0, "C11", f"lhs feature dimension size {feat} must be divisible by feature_group_count {fgc}")
        if kin is not None:
            check(feat // fgc == kin, "C14",
                  f"kernel input feature size {kin} must be the lhs feature size {feat} divided by feature_group_count {fgc}")
    if kout is not None:
        check(kout % bgc == 0, "C15", f"kernel output feature size {kout} must be divisible by batch_group_count {bgc}")
        check(kout % fgc == 0, "C16", f"kernel output feature size {kout} must be divisible by feature_group_count {fgc}")
    pc = op.attributes.get("precision_config")
    if pc is not None and hasattr(pc, "elements"):
        check(len(pc.elements) in (0, 2), "C24", f"precision_config must have 0 or 2 entries, got {len(pc.elements)}")

    if ranked(res) and res.rank == N:
        expect = [None] * N
        expect[ob] = None if batch is None else batch // bgc
        expect[of] = kout
        for i in range(S):
            s, w = lhs.shape[isp[i]], rhs.shape[ksp[i]]
            if s is None or w is None or w <= 0 or padding is None:
                continue
            dil = (s - 1) * lhs_dil[i] + 1 if s > 0 else 0
            padded = dil + padding[i][0] + padding[i][1]
            win = (w - 1) * rhs_dil[i] + 1
            expect[osp[i]] = 0 if padded < win else (padded - win) // strides[i] + 1
        check(all(dim_ok(a, b) for a, b in zip(res.shape, expect)), "C25",
              f"inferred shape '{_fmt_shape(expect)}' is incompatible with return type of operation '{res}'")

    el, er, eo = elem(lhs), elem(rhs), elem(res)
    if not (is_quantized(lhs) or is_quantized(rhs) or is_quantized(res)):
        check(el == er, "C27", f"lhs and rhs must have the same element type (got {lhs}, {rhs})")
        return
    check(isinstance(er, QuantizedType) and is_quantized(lhs) == is_quantized(res), "C28",
          "rhs should be quantized for quantized operations and is_quantized(lhs)=is_quantized(result) should hold")
    if er.quantized_dimension is not None:
        check(er.quantized_dimension == ko, "C29",
              "quantization dimension of rhs should be same with kernel_output_feature_dimension")
    if isinstance(eo, QuantizedType) and eo.quantized_dimension is not None:
        check(eo.quantized_dimension == of, "C30",
              "quantization dimension of result should be same with output_feature_dimension")
    if isinstance(el, QuantizedType):
        check(el.storage_type == er.storage_type, "C31", "mismatched lhs and rhs quantization storage types")
        check(el.expressed_type == er.expressed_type == eo.expressed_type, "C32",
              "mismatched lhs, rhs and result quantization expressed types")
        if er.quantized_dimension is None:
            check(eo.quantized_dimension is None, "C33", "mismatched rhs and result quantization granularity")
    else:
        check(el == er.expressed_type == eo, "C34", "mismatched lhs, rhs and result element types")


@verifier("stablehlo.convolution")
def convolution(op, check):
    p = op.attributes.get("padding")
    S = op.operands[0].type.rank - 2 if ranked(op.operands[0].type) else 0
    shp = tuple(getattr(getattr(p, "type", None), "shape", ())) if p is not None else ()
    if p is None or shp in ((0,), (0, 2)):
        # absent or empty padding is zero padding
        pads = [(0, 0)] * max(S, 0)
    else:
        check(shp == (S, 2), "C4", f"padding must have shape [{S}, 2], has {list(shp)}")
        v = ints(p)
        pads = [(v[2 * i], v[2 * i + 1]) for i in range(S)]
    conv_checks(op, check, pads)


@verifier("stablehlo.dynamic_conv")
def dynamic_conv(op, check):
    lhs, pt = op.operands[0].type, op.operands[2].type
    pads = None
    if ranked(lhs) and ranked(pt):
        S = lhs.rank - 2
        check(pt.rank == 2 and dim_ok(pt.shape[0], S) and dim_ok(pt.shape[1], 2), "C4",
              f"padding must have shape [{S}, 2], got {pt}")
        v = const_ints(op.operands[2])
        if v is not None and len(v) == 2 * S:
            pads = [(v[2 * i], v[2 * i + 1]) for i in range(S)]
    conv_checks(op, check, pads)
