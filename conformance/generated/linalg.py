"""Generated cases of the contracting and linear-algebra ops: dot, dot_general (values rounded
once from an exact sum), convolution, fft, cholesky and triangular_solve. The oracles are
written here with explicit loops over Python ints, exact fractions or Python complex (f64);
they never call numpy's linear algebra nor the interpreter under test.

Tolerances, per oracle:
- `python-exact` (integers; float inputs that are small integers so every partial sum is
  exact in any order): exact.
- `python-fraction-rounded` (dot_general `rounded_k5`): the exact sum of products rounded once
  to the result type, compared within 1 ULP or |error| <= (K + 1) * eps * max sum |a_i * b_i|,
  the bound of a K-term sum accumulated in the result type in any order (the spec leaves the
  order, and the precision of the accumulation, to the implementation).
- `python-f64-dft` (fft): the DFT summed term by term in f64, compared within
  |error| <= 4 * N * eps(result) * sum |x| (a length-N transform's error bound in the
  result type, for any algorithm: direct sums or Cooley-Tukey).
- `python-exact-factor` (cholesky, triangular_solve): matrices built from a known integer
  factor / solution, so the exact result is known; compared within
  |error| <= 16 * n * eps(result) * max |result| (backward-stable algorithms on these
  well-conditioned matrices). Only formats with at least 7 fraction bits (bf16, f16, f32, f64
  and complex): in the 2- and 3-bit float formats a factorization's rounding error is as
  large as its result, so no tolerance would say anything.
- `python-exact-steps` (cholesky, triangular_solve in the 4-, 6- and 8-bit floats): small
  integer factors and solutions on which every step of the factorization or substitution
  (each product, each partial difference in any order, each square root and quotient) is
  exact in the type (checked per format): exact.
- `python-exact` narrow (dot_general `narrow_*` in the 4-, 6- and 8-bit floats): values in
  {-1, 0, 1} (all ones and K <= 2 in f8E8M0FNU), every partial sum exact: exact.
Cholesky's other triangle is implementation-defined (the spec says so): the programs select
the computed triangle only, with the expected zeros elsewhere."""
from __future__ import annotations

import cmath
import itertools
import math
from fractions import Fraction
from typing import List

from .build import make_case, rule_for
from .formats import UNSPECIFIED, float_format, round_value
from .oracles import wrap
from .program import ProgramBuilder, tensor
from .structural import _flat, _indices, _size
from .values import admitted, bits, component, float_random, int_range, kind, make_array, rng_for
from .windows import window_positions

from ..cases import Rule

EXACT_NOTE = ("small integer values whose absolute sum fits the format's integer range: every partial sum is "
              "exact in every order and precision of accumulation, which the spec leaves to the implementation")


def _types(op, i, fast, kinds=("bool", "signed", "unsigned", "float", "complex")):
    from stablehlo_ref import spec
    cls = spec.op(op).operands[i].type
    return [t for t in admitted(cls) if kind(t) in kinds and (fast is None or t in fast)]


def _small(et, n, seed):
    """n small values: integers of the type in [lo, lo + 4] (unsigned from 0), floats in
    -2..2, complex with parts in -1..1."""
    k = kind(et)
    if k == "bool":
        return [(i * 3 + seed) % 5 in (0, 3) for i in range(n)]        # 40% true: OR-of-ANDs stay mixed
    if k in ("signed", "unsigned"):
        lo, hi = int_range(et)
        base = 0 if k == "unsigned" else max(lo, -2)
        return [base + (i * 3 + seed) % min(5, hi - base + 1) for i in range(n)]
    if k == "complex":
        return [complex((i + seed) % 3 - 1, (i * 2 + seed) % 3 - 1) for i in range(n)]
    fmt = float_format(et)
    vals = [float((i * 3 + seed) % 5 - 2) for i in range(n)]
    return [v if round_value(v, fmt) == v else 1.0 for v in vals]


def _finish(et, acc, mag=0):
    """An exact accumulated value as the type holds it, or None when some order of
    accumulation in the type could round (the case is then skipped): integers wrap, so every
    order gives the same result; integer-valued float terms whose absolute sum `mag` is at
    most 2^precision keep every partial sum, in any order, exact."""
    k = kind(et)
    if k == "bool":
        # the spec's products and sums on booleans are `and` and `or` from false: the sum of
        # 0/1 products is nonzero exactly when one product is true
        return bool(acc)
    if k in ("signed", "unsigned"):
        return wrap(acc, bits(et), k == "signed")
    fmt = float_format(component(et) if k == "complex" else et)
    if mag > 2 ** fmt.precision or mag > fmt.max:
        return None
    if k == "float":
        return acc if round_value(float(acc), fmt) == acc else None
    return acc


def _mag(v):
    return abs(v.real) + abs(v.imag) if isinstance(v, complex) else abs(v)


def _dims(xs):
    return ", ".join(map(str, xs))


# ------------------------------------------------------------------ dot

DOT_CONFIGS = [("matmul", (2, 3), (3, 2)), ("matvec", (2, 3), (3,)), ("vecvec", (4,), (4,)), ("vecmat", (3,), (3, 2))]


def dot_cases(full, fast) -> List:
    """Legacy dot: lhs rank 1 or 2 contracts its last dimension with rhs's first."""
    op = "stablehlo.dot"
    out = []
    for et in _types(op, 0, fast):
        if et == "f8E8M0FNU":
            out += _e8m0_dot_cases(op)
            continue
        for name, ls, rs in (DOT_CONFIGS if full else DOT_CONFIGS[:2]):
            lv, rv = _small(et, _size(ls), 2), _small(et, _size(rs), 3)
            res = ls[:-1] + rs[1:]
            exp = []
            for ridx in _indices(res):
                li, ri = ridx[:len(ls) - 1], ridx[len(ls) - 1:]
                terms = [lv[_flat(ls, li + (k,))] * rv[_flat(rs, (k,) + ri)] for k in range(ls[-1])]
                exp.append(_finish(et, sum(terms), sum(_mag(t) for t in terms)))
            if any(v is None for v in exp):
                continue
            b = ProgramBuilder([tensor(ls, et), tensor(rs, et)])
            r = b.op(op, [(b.arg(0), tensor(ls, et)), (b.arg(1), tensor(rs, et))], [tensor(res, et)])[0]
            out.append(make_case(op, et, name, b.text([(r, tensor(res, et))]),
                                 [make_array(lv, et, ls), make_array(rv, et, rs)], [make_array(exp, et, res)], [et],
                                 [rule_for(et, 0)], "python-exact", "linalg", EXACT_NOTE))
    return out


E8M0_NOTE = ("f8E8M0FNU holds only powers of two and no zero: the factors are chosen so that every product of "
             "one result is the same power of two and each sum has a power-of-two count of terms, so the sum is "
             "exact in every order (a wrong index pairs other factors, whose sum is no power of two)")


def _e8m0_dot_cases(op):
    """dot on f8E8M0FNU: lhs[i][k] = 2^(i+k), rhs[k][j] = 2^(j-k), K = 4: result 4 * 2^(i+j)."""
    et = "f8E8M0FNU"
    ls, rs, res = (2, 4), (4, 3), (2, 3)
    lv = [2.0 ** (i + k) for i in range(2) for k in range(4)]
    rv = [2.0 ** (j - k) for k in range(4) for j in range(3)]
    exp = [sum(lv[i * 4 + k] * rv[k * 3 + j] for k in range(4)) for i in range(2) for j in range(3)]
    assert all(round_value(v, float_format(et)) == v for v in exp)
    b = ProgramBuilder([tensor(ls, et), tensor(rs, et)])
    r = b.op(op, [(b.arg(0), tensor(ls, et)), (b.arg(1), tensor(rs, et))], [tensor(res, et)])[0]
    return [make_case(op, et, "matmul_pow2", b.text([(r, tensor(res, et))]),
                      [make_array(lv, et, ls), make_array(rv, et, rs)], [make_array(exp, et, res)], [et],
                      [rule_for(et, 0)], "python-exact", "linalg", E8M0_NOTE)]


def e8m0_conv_values():
    """CONV_CONFIGS[0] (NHWC 2x3x3x2 lhs, 2x2 HWIO kernel, no padding) on f8E8M0FNU:
    lhs[b][h][w][f] = 2^(b+h+w+f), rhs[dh][dw][i][o] = 2^(o-dh-dw-i), so all 8 terms of an
    output are 2^(b+oh+ow+o) and their sum 8 * 2^(b+oh+ow+o) is exact. Returns
    (config, lhs, rhs, result shape, expected)."""
    cfg = CONV_CONFIGS[0]
    (name, lay, rlay, olay, ls, rs, strides, pad, ldil, rdil, rev, G, BG) = cfg
    lv = [2.0 ** sum(ix) for ix in _indices(ls)]
    rv = [2.0 ** (ix[3] - ix[0] - ix[1] - ix[2]) for ix in _indices(rs)]
    oshape, raw, _ = conv_oracle(lv, rv, ls, rs, lay, rlay, olay, strides, pad, ldil, rdil, rev, G, BG)
    assert all(round_value(v, float_format("f8E8M0FNU")) == v for v in raw)
    return cfg, lv, rv, oshape, raw


def _to_fraction(v):
    return Fraction(v)


def dot_general_rounded_cases(full, fast) -> List:
    """dot_general on moderate random values (uniform in [-4, 4], rounded to the type): the
    exact sum of products rounded once, within the accumulation bound of the module doc."""
    op = "stablehlo.dot_general"
    out = []
    ls, rs, K = (2, 5), (5, 3), 5
    res = (2, 3)
    for et in _types(op, 0, fast, ("float", "complex")):
        fmt = float_format(component(et) if kind(et) == "complex" else et)
        rng = rng_for(f"dot_general/rounded/{et}")
        n_l, n_r = _size(ls), _size(rs)
        if kind(et) == "complex":
            lr, li = float_random(fmt, rng, n_l, True), float_random(fmt, rng, n_l, True)
            rr, ri = float_random(fmt, rng, n_r, True), float_random(fmt, rng, n_r, True)
            lv = [complex(a, b) for a, b in zip(lr, li)]
            rv = [complex(a, b) for a, b in zip(rr, ri)]
        else:
            lv, rv = float_random(fmt, rng, n_l, True), float_random(fmt, rng, n_r, True)
        exp, bound, ok = [], 0.0, True
        for i, j in _indices(res):
            if kind(et) == "complex":
                re = im = Fraction(0)
                mag = 0.0
                for k in range(K):
                    a, c = lv[i * K + k], rv[k * res[1] + j]
                    re += Fraction(a.real) * Fraction(c.real) - Fraction(a.imag) * Fraction(c.imag)
                    im += Fraction(a.real) * Fraction(c.imag) + Fraction(a.imag) * Fraction(c.real)
                    mag += abs(a.real * c.real) + abs(a.imag * c.imag) + abs(a.real * c.imag) + abs(a.imag * c.real)
                vr, vi = round_value(re, fmt), round_value(im, fmt)
                ok = ok and vr is not UNSPECIFIED and vi is not UNSPECIFIED
                exp.append(complex(vr, vi) if ok else 0)
            else:
                acc = Fraction(0)
                mag = 0.0
                for k in range(K):
                    a, c = lv[i * K + k], rv[k * res[1] + j]
                    acc += Fraction(a) * Fraction(c)
                    mag += abs(a * c)
                v = round_value(acc, fmt)
                ok = ok and v is not UNSPECIFIED and not math.isinf(v)
                exp.append(v)
            bound = max(bound, mag)
        if not ok:
            continue                       # a sum past the format's range: not this case's subject
        atol = (K + 1) * fmt.eps * bound
        attrs = ("dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], "
                 "rhs_contracting_dimensions = [0]>")
        b = ProgramBuilder([tensor(ls, et), tensor(rs, et)])
        r = b.op(op, [(b.arg(0), tensor(ls, et)), (b.arg(1), tensor(rs, et))], [tensor(res, et)], attrs)[0]
        out.append(make_case(op, et, "rounded_k5", b.text([(r, tensor(res, et))]),
                             [make_array(lv, et, ls), make_array(rv, et, rs)], [make_array(exp, et, res)], [et],
                             [Rule("close", atol=atol, max_ulp=1, check="generated")], "python-fraction-rounded",
                             "linalg", f"exact sum rounded once; accumulation order and precision are "
                                       f"implementation-defined: within 1 ULP or |error| <= {atol:.3g} "
                                       f"((K + 1) * eps * max sum |a*b|, K = {K})"))
    return out


# ------------------------------------------------------------------ dot_general on 4- to 8-bit floats

def narrow_float_types(op, i, fast):
    """The 4-, 6- and 8-bit float types the spec admits for operand i of op."""
    return [t for t in _types(op, i, fast, ("float",)) if bits(t) <= 8]


def narrow_small(et, n, seed):
    """n values for a product-sum in a 4- to 8-bit float: integers in {-1, 0, 1}, so every
    product is -1, 0 or 1 and every partial sum of K terms, in any order, an integer in
    [-K, K] (exact where `_finish` accepts the sum's magnitude); in f8E8M0FNU (powers of two
    only: no zero, no sign) all ones, whose K <= 2 partial sums 1 and 2 are exact."""
    if et == "f8E8M0FNU":
        return [1.0] * n
    return [float((i * 2 + seed) % 3 - 1) for i in range(n)]


# name, lhs shape, rhs shape, result shape, dimension numbers; K <= 2 for f8E8M0FNU
DOT_NARROW_CONFIGS = [
    ("narrow_matmul_k2", (2, 2), (2, 3), (2, 3),
     "lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]"),
    ("narrow_batch_k2", (2, 3, 2), (2, 2, 2), (2, 3, 2),
     "lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], "
     "lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]"),
    ("narrow_matmul_k3", (2, 3), (3, 2), (2, 2),
     "lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]"),
]


def _dot_general_oracle(name, lv, rv, ls, rs):
    """dot_general for the configs above by loops: (values, magnitude bound per value)."""
    vals, mags = [], []
    if name.startswith("narrow_batch"):
        B, M, K = ls
        N = rs[2]
        for bt in range(B):
            for i in range(M):
                for j in range(N):
                    terms = [lv[(bt * M + i) * K + k] * rv[(bt * K + k) * N + j] for k in range(K)]
                    vals.append(sum(terms))
                    mags.append(sum(abs(t) for t in terms))
        return vals, mags
    M, K = ls
    N = rs[1]
    for i in range(M):
        for j in range(N):
            terms = [lv[i * K + k] * rv[k * N + j] for k in range(K)]
            vals.append(sum(terms))
            mags.append(sum(abs(t) for t in terms))
    return vals, mags


def dot_general_narrow_cases(full, fast) -> List:
    """dot_general in the 4- to 8-bit floats on `narrow_small` values: every partial sum exact
    in every order, so the result is exact whatever the accumulation type and order."""
    op = "stablehlo.dot_general"
    out = []
    for et in narrow_float_types(op, 0, fast):
        for name, ls, rs, res, dn in (DOT_NARROW_CONFIGS if full else DOT_NARROW_CONFIGS[:1]):
            lv, rv = narrow_small(et, _size(ls), 1), narrow_small(et, _size(rs), 2)
            raw, mags = _dot_general_oracle(name, lv, rv, ls, rs)
            exp = [_finish(et, v, m) for v, m in zip(raw, mags)]
            if any(v is None for v in exp):
                continue                   # K = 3 in f8E8M0FNU: the partial sum 3 is not a power of two
            b = ProgramBuilder([tensor(ls, et), tensor(rs, et)])
            r = b.op(op, [(b.arg(0), tensor(ls, et)), (b.arg(1), tensor(rs, et))], [tensor(res, et)],
                     f"dot_dimension_numbers = #stablehlo.dot<{dn}>")[0]
            out.append(make_case(op, et, name, b.text([(r, tensor(res, et))]),
                                 [make_array(lv, et, ls), make_array(rv, et, rs)], [make_array(exp, et, res)], [et],
                                 [rule_for(et, 0)], "python-exact", "linalg",
                                 "values in {-1, 0, 1} (all ones in f8E8M0FNU, K <= 2): every product and every "
                                 "partial sum in any order is a small integer the type holds exactly"))
    return out


# ------------------------------------------------------------------ convolution

# name, lhs layout, rhs layout, out layout, lhs shape, rhs shape, strides, padding, lhs_dil, rhs_dil,
# reversal, feature groups, batch groups
CONV_CONFIGS = [
    ("nhwc_2x2", "b01f", "01io", "b01f", (2, 3, 3, 2), (2, 2, 2, 2), (1, 1), ((0, 0), (0, 0)), (1, 1), (1, 1), (0, 0), 1, 1),
    ("nchw_s2_pad", "bf01", "oi01", "bf01", (1, 2, 4, 3), (2, 2, 2, 2), (2, 1), ((1, 0), (0, 1)), (1, 1), (1, 1), (0, 0), 1, 1),
    ("nhwc_lhsdil2_rhsdil2", "b01f", "01io", "b01f", (1, 3, 3, 1), (2, 2, 1, 2), (1, 1), ((0, 0), (1, 1)), (2, 1), (1, 2), (0, 0), 1, 1),
    ("nchw_groups2_reversed", "bf01", "oi01", "bf01", (1, 4, 3, 3), (4, 2, 2, 2), (1, 1), ((0, 0), (0, 0)), (1, 1), (1, 1), (1, 0), 2, 1),
    ("nhwc_batch_groups2", "b01f", "01io", "b01f", (2, 2, 2, 1), (1, 2, 1, 2), (1, 1), ((0, 0), (0, 0)), (1, 1), (1, 1), (0, 0), 1, 2),
    ("nwc_rank1", "b0f", "0io", "b0f", (1, 5, 1), (3, 1, 1), (2,), ((1, 1),), (1,), (1,), (0,), 1, 1),
]


def _layout(spec_str, kinds):
    """'b01f' -> {'b': 0, 'f': 3, 's': [1, 2]} (positions of each role in the shape)."""
    roles = {}
    sp = []
    for pos, ch in enumerate(spec_str):
        if ch.isdigit():
            sp.append((int(ch), pos))
        else:
            roles[ch] = pos
    roles["s"] = [p for _, p in sorted(sp)]
    assert set(kinds) <= set(roles)
    return roles


def _conv_attr(spec_str):
    return "[" + ", ".join(spec_str) + "]"


def conv_oracle(lv, rv, ls, rs, lay, rlay, olay, strides, pad, ldil, rdil, rev, G, BG):
    """The spec's convolution by loops: returns (result shape, flat values as Python numbers,
    the sum of |term| of each value)."""
    L, R, O = _layout(lay, "bf"), _layout(rlay, "io"), _layout(olay, "bf")
    nsp = len(L["s"])
    B, F = ls[L["b"]], ls[L["f"]]
    I, OF = rs[R["i"]], rs[R["o"]]
    sp_in = [ls[p] for p in L["s"]]
    win = [rs[p] for p in R["s"]]
    sp_out, cells = window_positions(sp_in, win, strides, pad, ldil, rdil)
    ob = B // BG
    oshape = [0] * (nsp + 2)
    oshape[O["b"]], oshape[O["f"]] = ob, OF
    for d, p in enumerate(O["s"]):
        oshape[p] = sp_out[d]
    oshape = tuple(oshape)
    res, mags = {}, {}
    wins = list(_indices(win))
    for bi in range(ob):
        for of in range(OF):
            fg = of // (OF // G)            # feature group of this output feature
            bg = of // (OF // BG)           # batch group of this output feature
            lb = bg * ob + bi
            for so in _indices(sp_out):
                acc = mag = 0
                for wk, src in zip(wins, cells[so]):
                    if src is None:
                        continue
                    kidx = [win[d] - 1 - wk[d] if rev[d] else wk[d] for d in range(nsp)]
                    for ii in range(I):
                        lidx = [0] * (nsp + 2)
                        lidx[L["b"]], lidx[L["f"]] = lb, fg * I + ii
                        for d, p in enumerate(L["s"]):
                            lidx[p] = src[d]
                        ridx = [0] * (nsp + 2)
                        ridx[R["i"]], ridx[R["o"]] = ii, of
                        for d, p in enumerate(R["s"]):
                            ridx[p] = kidx[d]
                        term = lv[_flat(ls, lidx)] * rv[_flat(rs, ridx)]
                        acc += term
                        mag += abs(term.real) + abs(term.imag) if isinstance(term, complex) else abs(term)
                oidx = [0] * (nsp + 2)
                oidx[O["b"]], oidx[O["f"]] = bi, of
                for d, p in enumerate(O["s"]):
                    oidx[p] = so[d]
                res[tuple(oidx)] = acc
                mags[tuple(oidx)] = mag
    return oshape, [res[i] for i in _indices(oshape)], [mags[i] for i in _indices(oshape)]


def convolution_cases(full, fast) -> List:
    op = "stablehlo.convolution"
    out = []
    for et in _types(op, 0, fast):
        for (name, lay, rlay, olay, ls, rs, strides, pad, ldil, rdil, rev, G, BG) in (CONV_CONFIGS if full else CONV_CONFIGS[:2]):
            if et == "f8E8M0FNU":
                if name != CONV_CONFIGS[0][0]:
                    continue
                _, lv, rv, oshape, exp = e8m0_conv_values()
                name = name + "_pow2"
            else:
                lv, rv = _small(et, _size(ls), 1), _small(et, _size(rs), 2)
                oshape, raw, mags = conv_oracle(lv, rv, ls, rs, lay, rlay, olay, strides, pad, ldil, rdil, rev, G, BG)
                exp = [_finish(et, v, m) for v, m in zip(raw, mags)]
            if any(v is None for v in exp):
                continue
            attrs = [f"window_strides = array<i64: {_dims(strides)}>",
                     f"padding = dense<[{', '.join(f'[{a}, {b}]' for a, b in pad)}]> : tensor<{len(pad)}x2xi64>",
                     f"lhs_dilation = array<i64: {_dims(ldil)}>", f"rhs_dilation = array<i64: {_dims(rdil)}>"]
            if any(rev):
                attrs.append(f"window_reversal = array<i1: {', '.join('true' if r else 'false' for r in rev)}>")
            attrs += [f"dimension_numbers = #stablehlo.conv<{_conv_attr(lay)}x{_conv_attr(rlay)}->{_conv_attr(olay)}>",
                      f"feature_group_count = {G} : i64", f"batch_group_count = {BG} : i64"]
            b = ProgramBuilder([tensor(ls, et), tensor(rs, et)])
            r = b.op(op, [(b.arg(0), tensor(ls, et)), (b.arg(1), tensor(rs, et))], [tensor(oshape, et)],
                     ", ".join(attrs))[0]
            out.append(make_case(op, et, name, b.text([(r, tensor(oshape, et))]),
                                 [make_array(lv, et, ls), make_array(rv, et, rs)], [make_array(exp, et, oshape)], [et],
                                 [rule_for(et, 0)], "python-exact", "linalg",
                                 "explicit loops over the spec's padded, dilated windows and feature/batch groups; "
                                 + EXACT_NOTE))
    return out


# ------------------------------------------------------------------ fft

def dft(x, inverse=False):
    """The DFT by its definition, summed in f64 (Python complex)."""
    n = len(x)
    sgn = 1 if inverse else -1
    out = [sum(x[j] * cmath.exp(sgn * 2j * math.pi * j * k / n) for j in range(n)) for k in range(n)]
    return [v / n for v in out] if inverse else out


def dft_nd(vals, shape, nd, inverse=False):
    """The transform over the last `nd` dimensions of a row-major list, one axis at a time."""
    vals = list(vals)
    for axis in range(len(shape) - nd, len(shape)):
        n = shape[axis]
        for idx in _indices(shape[:axis] + (1,) + shape[axis + 1:]):
            pos = [_flat(shape, idx[:axis] + (j,) + idx[axis + 1:]) for j in range(n)]
            t = dft([vals[p] for p in pos], inverse)
            for p, v in zip(pos, t):
                vals[p] = v
    return vals


FFT_CONFIGS = [
    ("FFT", (4,), (4,)), ("IFFT", (2, 4), (4,)), ("RFFT", (6,), (6,)), ("IRFFT", (6,), (6,)),
    ("FFT", (2, 3), (2, 3)), ("RFFT", (2, 4), (2, 4)),
]


def fft_cases(full, fast) -> List:
    op = "stablehlo.fft"
    out = []
    cplx = [t for t in _types(op, 0, fast, ("complex",))]
    for ct in cplx:
        rt = component(ct)
        fmt = float_format(rt)
        for n_cfg, (ftype, shape, length) in enumerate(FFT_CONFIGS if full else FFT_CONFIGS[:3]):
            rng = rng_for(f"fft/{ct}/{n_cfg}")
            nd = len(length)
            if ftype == "RFFT":
                x = float_random(fmt, rng, _size(shape), True)
                full_t = dft_nd([complex(v) for v in x], shape, nd)
                rshape = shape[:-1] + (shape[-1] // 2 + 1,)
                exp = [full_t[_flat(shape, i[:-1] + (i[-1],))] for i in _indices(rshape)]
                in_et, out_et, ishape, oshape, inp = rt, ct, shape, rshape, x
            elif ftype == "IRFFT":
                # the input is the RFFT of a real signal, so the Hermitian symmetry the
                # transform assumes holds (imaginary parts of the DC and Nyquist terms are 0)
                sig = float_random(fmt, rng, _size(shape), True)
                spec_full = dft_nd([complex(v) for v in sig], shape, nd)
                ishape = shape[:-1] + (shape[-1] // 2 + 1,)
                inp = [complex(round_value(spec_full[_flat(shape, i)].real, fmt),
                               round_value(spec_full[_flat(shape, i)].imag, fmt)) for i in _indices(ishape)]
                # the full spectrum from the half actually passed in (rounded to the type)
                herm = []
                for i in _indices(shape):
                    k = i[-1]
                    if k < ishape[-1]:
                        herm.append(inp[_flat(ishape, i)])
                    else:
                        mirror = tuple((-j) % d for j, d in zip(i[-nd:], shape[-nd:]))
                        herm.append(inp[_flat(ishape, i[:-nd] + mirror)].conjugate())
                for i in _indices(shape[:-1] + (1,)):      # DC / Nyquist terms of the last axis: real
                    for k in (0, shape[-1] // 2) if shape[-1] % 2 == 0 else (0,):
                        p = _flat(shape, i[:-1] + (k,))
                        herm[p] = complex(herm[p].real, 0.0)
                exp = [v.real for v in dft_nd(herm, shape, nd, inverse=True)]
                in_et, out_et, oshape = ct, rt, shape
            else:
                re, im = float_random(fmt, rng, _size(shape), True), float_random(fmt, rng, _size(shape), True)
                inp = [complex(a, b) for a, b in zip(re, im)]
                exp = dft_nd(inp, shape, nd, inverse=ftype == "IFFT")
                in_et, out_et, ishape, oshape = ct, ct, shape, shape
            mag = sum(abs(v) for v in inp)
            n = _size(length)
            atol = 4 * n * fmt.eps * mag
            attrs = f"fft_type = #stablehlo<fft_type {ftype}>, fft_length = array<i64: {_dims(length)}>"
            b = ProgramBuilder([tensor(ishape, in_et)])
            r = b.op(op, [(b.arg(0), tensor(ishape, in_et))], [tensor(oshape, out_et)], attrs)[0]
            if kind(out_et) == "float":
                exp = [round_value(v, fmt) for v in exp]
            else:
                exp = [complex(round_value(v.real, fmt), round_value(v.imag, fmt)) for v in exp]
            variant = f"{ftype.lower()}_{'x'.join(map(str, shape))}"
            out.append(make_case(op, in_et, variant, b.text([(r, tensor(oshape, out_et))]),
                                 [make_array(inp, in_et, ishape)], [make_array(exp, out_et, oshape)], [out_et],
                                 [Rule("close", atol=atol, max_ulp=1, check="generated")], "python-f64-dft", "linalg",
                                 f"DFT by definition in f64; any FFT algorithm: |error| <= {atol:.3g} "
                                 f"(4 * N * eps * sum |x|, N = {n})"))
    return out


# ------------------------------------------------------------------ cholesky, triangular_solve

FACTOR_TYPES = ("bf16", "f16", "f32", "f64", "complex<f32>", "complex<f64>")


def _factor_types(op, fast):
    return [t for t in _types(op, 0, fast, ("float", "complex")) if t in FACTOR_TYPES]


def _lower_factor(n, seed, cplx):
    """A lower-triangular n x n matrix with diagonal 1 or 2 and small integer (complex) entries."""
    m = [[0] * n for _ in range(n)]
    for i in range(n):
        for j in range(i + 1):
            if i == j:
                m[i][j] = 1 + (i + seed) % 2
            else:
                v = (i * 3 + j * 5 + seed) % 5 - 2
                m[i][j] = complex(v, (i + 2 * j + seed) % 3 - 1) if cplx else v
    return m


def _conj(v):
    return v.conjugate() if isinstance(v, complex) else v


def _factor_rule(et, vals, n):
    fmt = float_format(component(et) if kind(et) == "complex" else et)
    atol = 16 * n * fmt.eps * max(1.0, max(abs(v) for v in vals))
    return Rule("close", atol=atol, max_ulp=2, check="generated"), atol


def cholesky_cases(full, fast) -> List:
    op = "stablehlo.cholesky"
    out = []
    for et in _factor_types(op, fast):
        cplx = kind(et) == "complex"
        for n, lower, batch in ([(3, True, 1), (3, False, 1)] + ([(4, True, 2), (1, False, 1)] if full else [])):
            shape = ((batch,) if batch > 1 else ()) + (n, n)
            a_vals, exp, mask = [], [], []
            for bt in range(batch):
                L = _lower_factor(n, bt + 1, cplx)
                A = [[sum(L[i][k] * _conj(L[j][k]) for k in range(n)) for j in range(n)] for i in range(n)]
                for i in range(n):
                    for j in range(n):
                        keep = j <= i if lower else j >= i
                        # the ignored triangle holds values that are not A's: the result may not depend on them
                        a_vals.append(A[i][j] if keep else (7 if not cplx else complex(7, -3)))
                        exp.append((L[i][j] if lower else _conj(L[j][i])) if keep else 0)
                        mask.append(keep)
            ts, tm = tensor(shape, et), tensor(shape, "i1")
            b = ProgramBuilder([ts, tm, ts])
            c = b.op(op, [(b.arg(0), ts)], [ts], f"lower = {'true' if lower else 'false'}")[0]
            s = b.op("stablehlo.select", [(b.arg(1), tm), (c, ts), (b.arg(2), ts)], [ts])[0]
            rule, atol = _factor_rule(et, exp, n)
            zeros = [0] * len(exp)
            out.append(make_case(op, et, f"{'lower' if lower else 'upper'}_{'x'.join(map(str, shape))}",
                                 b.text([(s, ts)]),
                                 [make_array(a_vals, et, shape), make_array(mask, "i1", shape),
                                  make_array(zeros, et, shape)],
                                 [make_array(exp, et, shape)], [et], [rule], "python-exact-factor", "linalg",
                                 "a = L L^H from a known integer L; the other triangle of a holds other values (the "
                                 "spec: read from one triangle only) and that of the result is implementation-defined, "
                                 f"so the program selects the computed triangle; |error| <= {atol:.3g} "
                                 "(16 * n * eps * max |L|)",
                                 (op, "stablehlo.select")))
    return out


def _matmul(A, B):
    return [[sum(A[i][k] * B[k][j] for k in range(len(B))) for j in range(len(B[0]))] for i in range(len(A))]


def _transpose(A, adjoint=False):
    return [[_conj(A[j][i]) if adjoint else A[j][i] for j in range(len(A))] for i in range(len(A[0]))]


TS_CONFIGS = [
    # left_side, lower, unit_diagonal, transpose_a
    (True, True, False, "NO_TRANSPOSE"), (False, False, False, "NO_TRANSPOSE"),
    (True, False, True, "TRANSPOSE"), (False, True, False, "ADJOINT"), (True, True, True, "ADJOINT"),
]


def triangular_solve_cases(full, fast) -> List:
    op = "stablehlo.triangular_solve"
    out = []
    n, m = 3, 2
    for et in _factor_types(op, fast):
        cplx = kind(et) == "complex"
        for left, lower, unit, trans in (TS_CONFIGS if full else TS_CONFIGS[:2]):
            L = _lower_factor(n, 2, cplx)
            if unit:
                for i in range(n):
                    L[i][i] = 1
            A = L if lower else _transpose(L)           # triangular, the unused triangle zero
            opA = A if trans == "NO_TRANSPOSE" else _transpose(A, trans == "ADJOINT")
            X = [[((i * 2 + j * 3) % 5 - 2) + ((complex(0, (i + j) % 3 - 1)) if cplx else 0)
                  for j in range(m if left else n)] for i in range(n if left else m)]
            B = _matmul(opA, X) if left else _matmul(X, opA)
            bshape = (n, m) if left else (m, n)
            xs = [v for row in X for v in row]
            rule, atol = _factor_rule(et, xs, n)
            ta, tb = tensor((n, n), et), tensor(bshape, et)
            attrs = (f"left_side = {str(left).lower()}, lower = {str(lower).lower()}, "
                     f"unit_diagonal = {str(unit).lower()}, transpose_a = #stablehlo<transpose {trans}>")
            b = ProgramBuilder([ta, tb])
            r = b.op(op, [(b.arg(0), ta), (b.arg(1), tb)], [tb], attrs)[0]
            variant = f"{'left' if left else 'right'}_{'lower' if lower else 'upper'}{'_unit' if unit else ''}_{trans.lower()}"
            out.append(make_case(op, et, variant, b.text([(r, tb)]),
                                 [make_array([v for row in A for v in row], et, (n, n)),
                                  make_array([v for row in B for v in row], et, bshape)],
                                 [make_array(xs, et, bshape)], [et], [rule], "python-exact-factor", "linalg",
                                 "b = op(a) x (or x op(a)) from a known integer x; the unused triangle of a is zero; "
                                 f"|error| <= {atol:.3g} (16 * n * eps * max |x|)"))
    return out


# ------------------------------------------------------------------ cholesky, triangular_solve in 4- to 8-bit floats

def _holds(fmt, v) -> bool:
    """Whether the format holds the exact value v (a Fraction or int)."""
    r = round_value(Fraction(v), fmt)
    return r is not UNSPECIFIED and not (isinstance(r, float) and math.isnan(r)) and Fraction(r) == v


def _steps_exact(fmt, target, terms) -> bool:
    """Whether `target - (any subset of terms)` is exact in fmt, for every subset: every
    partial result of a substitution or factorization step, in any order of its sum."""
    terms = list(terms)
    if not all(_holds(fmt, t) for t in terms):
        return False
    for r in range(len(terms) + 1):
        for sub in itertools.combinations(terms, r):
            if not _holds(fmt, Fraction(target) - sum(sub, Fraction(0))):
                return False
    return True


def _fill(fmt):
    """What the narrow cases put where a value is ignored or implementation-defined: 0, or 4 in
    f8E8M0FNU, which holds no zero."""
    return 0 if _holds(fmt, 0) else 4


# lower-triangular factors with small integer entries whose factorization steps are exact in
# the formats that take them (checked per format by _cholesky_exact)
NARROW_FACTORS = [
    [[1, 0, 0], [1, 1, 0], [0, 1, 1]],
    [[2, 0, 0], [1, 1, 0], [-1, 0, 1]],
    [[1, 0], [1, 1]],
    [[2, 0], [2, 2]],
]


def _cholesky_exact(L, fmt) -> bool:
    """Whether every step of a Cholesky factorization of L L^T (each entry of a, each product
    l_ik l_jk, each partial difference in any order, each square root and each quotient) is
    exact in fmt."""
    n = len(L)
    A = [[sum(Fraction(L[i][k]) * L[j][k] for k in range(n)) for j in range(n)] for i in range(n)]
    for i in range(n):
        for j in range(i + 1):
            terms = [Fraction(L[i][k]) * L[j][k] for k in range(j)]
            if not _holds(fmt, A[i][j]) or not _steps_exact(fmt, A[i][j], terms) or not _holds(fmt, L[i][j]):
                return False
    return True


def cholesky_narrow_cases(full, fast) -> List:
    """cholesky in the 4- to 8-bit floats on a = L L^T from a small integer L on which every
    step of the factorization is exact in the type (whatever the order of its sums): the
    result is exact. The ignored triangle of a holds 4 (not a's value); the program selects the
    computed triangle and puts 0 (4 in f8E8M0FNU) elsewhere."""
    op = "stablehlo.cholesky"
    out = []
    for et in narrow_float_types(op, 0, fast):
        fmt = float_format(et)
        fill = _fill(fmt)
        factors = [L for L in NARROW_FACTORS if _cholesky_exact(L, fmt)][:2 if full else 1]
        for fno, L in enumerate(factors):
            n = len(L)
            A = [[sum(L[i][k] * L[j][k] for k in range(n)) for j in range(n)] for i in range(n)]
            for lower in ((True, False) if full else (True,)):
                shape = (n, n)
                a_vals, exp, mask = [], [], []
                for i in range(n):
                    for j in range(n):
                        keep = j <= i if lower else j >= i
                        a_vals.append(A[i][j] if keep else 4)
                        exp.append((L[i][j] if lower else L[j][i]) if keep else fill)
                        mask.append(keep)
                ts, tm = tensor(shape, et), tensor(shape, "i1")
                b = ProgramBuilder([ts, tm, ts])
                c = b.op(op, [(b.arg(0), ts)], [ts], f"lower = {'true' if lower else 'false'}")[0]
                s = b.op("stablehlo.select", [(b.arg(1), tm), (c, ts), (b.arg(2), ts)], [ts])[0]
                out.append(make_case(op, et, f"narrow{fno}_{'lower' if lower else 'upper'}_{n}x{n}",
                                     b.text([(s, ts)]),
                                     [make_array(a_vals, et, shape), make_array(mask, "i1", shape),
                                      make_array([fill] * (n * n), et, shape)],
                                     [make_array(exp, et, shape)], [et], [rule_for(et, 0)], "python-exact-steps",
                                     "linalg",
                                     "a = L L^T from a small integer L on which every step of the factorization "
                                     "(products, partial differences in any order, square roots, quotients) is exact "
                                     "in the type: exact; the ignored triangle of a holds 4; the program selects the "
                                     "computed triangle",
                                     (op, "stablehlo.select")))
    return out


# (A factor, X): a lower unit-or-not triangular factor and a solution, small integers
NARROW_SOLVES = [
    ([[1, 0], [1, 1]], [[1, -1], [0, 1]]),
    ([[2, 0], [-1, 1]], [[1, 0], [-1, 1]]),
    ([[1, 0], [1, 1]], [[1, 1], [1, 1]]),
]


def _solve_exact(opA, X, B, left, fmt) -> bool:
    """Whether every step of a substitution for op(a) x = b (x op(a) = b) is exact in fmt:
    each b entry, each product op(a)_ik x_kj of the triangle's entries, each partial
    difference in any order, each quotient (x itself)."""
    n = len(opA)
    if not all(_holds(fmt, v) for row in B + X for v in row):
        return False
    for i in range(len(B)):
        for j in range(len(B[0])):
            if left:
                terms = [Fraction(opA[i][k]) * X[k][j] for k in range(n) if k != i and opA[i][k] != 0]
            else:
                terms = [Fraction(X[i][k]) * opA[k][j] for k in range(n) if k != j and opA[k][j] != 0]
            if not _steps_exact(fmt, B[i][j], terms):
                return False
    return True


def triangular_solve_narrow_cases(full, fast) -> List:
    """triangular_solve in the 4- to 8-bit floats on small integer systems whose substitution
    steps are all exact in the type (any order): the result is exact. The unused triangle of a
    holds 0 (4 in f8E8M0FNU, which holds no zero: the spec reads one triangle only)."""
    op = "stablehlo.triangular_solve"
    out = []
    for et in narrow_float_types(op, 0, fast):
        fmt = float_format(et)
        fill = _fill(fmt)
        for left, lower, unit, trans in (TS_CONFIGS if full else TS_CONFIGS[:2]):
            for L0, X in NARROW_SOLVES:
                n = len(L0)
                L = [row[:] for row in L0]
                if unit:
                    for i in range(n):
                        L[i][i] = 1
                A = L if lower else _transpose(L)
                opA = A if trans == "NO_TRANSPOSE" else _transpose(A)
                Xs = X if left else _transpose(X)
                B = _matmul(opA, Xs) if left else _matmul(Xs, opA)
                used = [[j <= i if lower else j >= i for j in range(n)] for i in range(n)]
                if not (_solve_exact(opA, Xs, B, left, fmt)
                        and all(_holds(fmt, A[i][j]) for i in range(n) for j in range(n) if used[i][j])):
                    continue
                a_in = [[A[i][j] if used[i][j] else fill for j in range(n)] for i in range(n)]
                bshape = (len(B), len(B[0]))
                ta, tb = tensor((n, n), et), tensor(bshape, et)
                attrs = (f"left_side = {str(left).lower()}, lower = {str(lower).lower()}, "
                         f"unit_diagonal = {str(unit).lower()}, transpose_a = #stablehlo<transpose {trans}>")
                b = ProgramBuilder([ta, tb])
                r = b.op(op, [(b.arg(0), ta), (b.arg(1), tb)], [tb], attrs)[0]
                variant = (f"narrow_{'left' if left else 'right'}_{'lower' if lower else 'upper'}"
                           f"{'_unit' if unit else ''}_{trans.lower()}")
                out.append(make_case(op, et, variant, b.text([(r, tb)]),
                                     [make_array([v for row in a_in for v in row], et, (n, n)),
                                      make_array([v for row in B for v in row], et, bshape)],
                                     [make_array([v for row in Xs for v in row], et, bshape)], [et],
                                     [rule_for(et, 0)], "python-exact-steps", "linalg",
                                     "b = op(a) x (or x op(a)) from small integers on which every substitution step "
                                     "(products, partial differences in any order, quotients) is exact in the type: "
                                     f"exact; the unused triangle of a holds {fill}"))
                break
    return out


# ------------------------------------------------------------------ einsum (legacy)

EINSUM_CONFIGS = [("ab,bc->ac", (2, 3), (3, 2)), ("abc,acd->abd", (2, 2, 3), (2, 3, 2)), ("ab,ab->a", (2, 3), (2, 3)),
                  ("ab,cd->abcd", (2, 1), (1, 3))]
UNARY_EINSUM_CONFIGS = [("ab->ba", (2, 3)), ("aab->ab", (2, 2, 3)), ("abc->b", (2, 3, 2))]


def einsum_oracle(cfg, operands, shapes):
    """einsum by its definition: loop over every letter's range; the output holds the sum over
    the letters it does not name (a repeated letter within one operand takes its diagonal).
    Returns (result shape, flat values, the sum of |term| of each value)."""
    ins, out = cfg.split("->")
    ins = ins.split(",")
    size = {}
    for letters, shape in zip(ins, shapes):
        for ch, d in zip(letters, shape):
            size[ch] = d
    letters = sorted(size)
    rshape = tuple(size[ch] for ch in out)
    acc = {idx: 0 for idx in _indices(rshape)}
    mag = {idx: 0 for idx in _indices(rshape)}
    for combo in itertools.product(*[range(size[ch]) for ch in letters]):
        env = dict(zip(letters, combo))
        term = 1
        for lt, vals, shape in zip(ins, operands, shapes):
            term = term * vals[_flat(shape, [env[ch] for ch in lt])]
        key = tuple(env[ch] for ch in out)
        acc[key] += term
        mag[key] += _mag(term)
    keys = list(_indices(rshape))
    return rshape, [acc[k] for k in keys], [mag[k] for k in keys]


def einsum_cases(full, fast) -> List:
    out = []
    for op, cfgs in (("stablehlo.einsum", EINSUM_CONFIGS), ("stablehlo.unary_einsum", UNARY_EINSUM_CONFIGS)):
        for et in _types(op, 0, fast):
            for n, cfg in enumerate(cfgs if full else cfgs[:1]):
                shapes = cfg[1:]
                vals = [_small(et, _size(s), 2 + i) for i, s in enumerate(shapes)]
                rshape, raw, mags = einsum_oracle(cfg[0], vals, shapes)
                exp = [_finish(et, v, m) for v, m in zip(raw, mags)]
                if any(v is None for v in exp):
                    continue
                b = ProgramBuilder([tensor(s, et) for s in shapes])
                r = b.op(op, [(b.arg(i), tensor(s, et)) for i, s in enumerate(shapes)], [tensor(rshape, et)],
                         f'einsum_config = "{cfg[0]}"')[0]
                variant = cfg[0].replace(",", "_").replace("->", "_to_")
                out.append(make_case(op, et, variant, b.text([(r, tensor(rshape, et))]),
                                     [make_array(v, et, s) for v, s in zip(vals, shapes)],
                                     [make_array(exp, et, rshape)], [et], [rule_for(et, 0)], "python-exact",
                                     "linalg", "einsum by its definition (loops over every letter); " + EXACT_NOTE))
    return out


def all_linalg(full, fast) -> List:
    return (dot_cases(full, fast) + dot_general_rounded_cases(full, fast) + dot_general_narrow_cases(full, fast)
            + convolution_cases(full, fast)
            + fft_cases(full, fast) + cholesky_cases(full, fast) + triangular_solve_cases(full, fast)
            + cholesky_narrow_cases(full, fast) + triangular_solve_narrow_cases(full, fast)
            + einsum_cases(full, fast))
