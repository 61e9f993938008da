"""Generated cases of the remaining single-process ops: chlo.constant, chlo.constant_like,
set_dimension_size, dynamic_gather, dynamic_conv, composite, custom_call (LAPACK getrf),
chlo.scan, chlo.ragged_dot, rng_bit_generator, rng, and chlo._asin_acos_kernel.

Oracles (never the interpreter's kernels):
- index arithmetic / Python ints for the constants, set_dimension_size, dynamic_gather, scan
  and ragged_dot (small integer values: every sum is exact in every order);
- dynamic_conv: the convolution oracle of `linalg.conv_oracle` with the padding as an operand;
- composite: the math of its decomposition function (a * b + a), in Python numbers;
- custom_call @lapack_?getrf_ffi: A = P^T L U built from a known unit lower L (entries of
  magnitude < 1, powers of two) and an integer U, so partial pivoting is unique and every
  step of the elimination is exact: L, U and the pivots are the expected result;
- rng_bit_generator THREE_FRY and PHILOX: Threefry-2x32 (20 rounds) and Philox-4x32 (10
  rounds) written here over Python ints, with XLA's state, counter and output layout (the
  interpreter claims XLA CPU's bits; the spec leaves the bits implementation-defined, so
  another backend may differ and still conform); DEFAULT: only the shapes and types, which
  is all the spec fixes (rule `shape`);
- rng: the spec leaves the values implementation-defined; UNIFORM is checked to lie in
  [a, b) (rule `range`), NORMAL only for shape and type (rule `shape`)."""
from __future__ import annotations

import math
from fractions import Fraction
from typing import List

import mpmath
import numpy as np

from ..cases import Rule
from .build import make_case, rule_for
from .formats import float_format, round_value
from .program import ProgramBuilder, single_op_program, tensor
from .structural import _flat, _indices, _size
from .values import admitted, bits, int_range, kind, make_array, type_info

M32 = 0xFFFFFFFF
M64 = 0xFFFFFFFFFFFFFFFF


def _case(op, et, variant, program, ins, exp, out_ets, rules=None, oracle="index-arithmetic", note="", ops=()):
    rules = rules or [rule_for(t, 0) for t in out_ets]
    return make_case(op, et, variant, program, ins, exp, out_ets, rules, oracle, "extra", note, ops)


def _types(op, i, fast, kinds=("bool", "signed", "unsigned", "float", "complex"), result=False):
    from stablehlo_ref import spec
    o = spec.op(op)
    cls = (o.results if result else o.operands)[i].type
    return [t for t in admitted(cls) if kind(t) in kinds and (fast is None or t in fast)]


def _small(et, n, seed):
    """n small exact values of the type: ints in a short run, floats among -2..2 (0.5..4 for
    formats without negatives or zero), complex with parts in -1..1, booleans alternating."""
    k = kind(et)
    if k == "bool":
        return [(i + seed) % 2 == 1 for i in range(n)]
    if k in ("signed", "unsigned"):
        lo, hi = int_range(et)
        base = 0 if k == "unsigned" else max(lo, -2)
        return [base + (i * 3 + seed) % min(5, hi - base + 1) for i in range(n)]
    if k == "complex":
        return [complex((i + seed) % 3 - 1, (i * 2 + seed) % 3 - 1) for i in range(n)]
    fmt = float_format(et)
    pool = [-2.0, -1.0, 0.0, 1.0, 2.0, 0.5, 1.5]
    pool = [v for v in pool if round_value(v, fmt) == v and not (v <= 0 and _unsigned_float(et))] or [1.0]
    return [pool[(i * 3 + seed) % len(pool)] for i in range(n)]


def _unsigned_float(et):
    return round_value(-1.0, float_format(et)) != -1.0


def _scalar_literal(et, v):
    k = kind(et)
    if k == "bool":
        return "true" if v else "false"
    if k in ("signed", "unsigned"):
        return str(int(v))
    return repr(float(v))


def _dense(et, vals):
    return "[" + ", ".join(_scalar_literal(et, v) for v in vals) + "]"


def _name(shape):
    return "x".join(map(str, shape)) or "rank0"


# ---------------------------------------------------------------- chlo.constant / constant_like

def constant_cases(full, fast) -> List:
    out = []
    for et in _types("chlo.constant_like", 0, fast, ("bool", "signed", "unsigned", "float")):
        shape = (2, 3)
        vals = _small(et, 6, 1)
        t = tensor(shape, et)
        pb = ProgramBuilder([])
        r = pb.op("chlo.constant", [], [t], f"value = dense<[{_dense(et, vals[:3])}, {_dense(et, vals[3:])}]> : {t}")[0]
        out.append(_case("chlo.constant", et, "2x3", pb.text([(r, t)]), [], [make_array(vals, et, shape)], [et]))
        v = _small(et, 3, 2)[2]
        for s in ([(2, 3)] + ([(0, 4), ()] if full else [])):
            ts = tensor(s, et)
            lit = _scalar_literal(et, v) if kind(et) == "bool" else f"{_scalar_literal(et, v)} : {et}"   # true/false: i1
            prog = single_op_program("chlo.constant_like", [ts], [ts], f"value = {lit}")
            out.append(_case("chlo.constant_like", et, f"splat_{_name(s)}", prog,
                             [make_array(_small(et, _size(s), 0), et, s)], [make_array([v] * _size(s), et, s)], [et],
                             note="the value splat to the operand's shape; the operand's values are not read"))
    for et in _types("chlo.constant_like", 0, fast, ("complex",)):
        shape = (2, 3)
        vals = _small(et, 6, 1)
        t = tensor(shape, et)
        rows = ["[" + ", ".join(f"({float(v.real)!r}, {float(v.imag)!r})" for v in vals[i:i + 3]) + "]" for i in (0, 3)]
        pb = ProgramBuilder([])
        r = pb.op("chlo.constant", [], [t], f"value = dense<[{rows[0]}, {rows[1]}]> : {t}")[0]
        out.append(_case("chlo.constant", et, "2x3", pb.text([(r, t)]), [], [make_array(vals, et, shape)], [et],
                         note="complex elements as (real, imag) pairs"))
        v = complex(-1.5, 0.25)              # both parts exact in every complex part type
        part = "f32" if et == "complex<f32>" else "f64"
        for s in ([(2, 3)] + ([(0, 4), ()] if full else [])):
            ts = tensor(s, et)
            lit = f"#complex.number<:{part} {v.real!r}, {v.imag!r}> : {et}"
            prog = single_op_program("chlo.constant_like", [ts], [ts], f"value = {lit}")
            out.append(_case("chlo.constant_like", et, f"splat_{_name(s)}", prog,
                             [make_array(_small(et, _size(s), 0), et, s)], [make_array([v] * _size(s), et, s)], [et],
                             note="the #complex.number value splat to the operand's shape; the operand's values "
                                  "are not read"))
    return out


# ---------------------------------------------------------------- set_dimension_size

def set_dimension_size_cases(full, fast) -> List:
    op = "stablehlo.set_dimension_size"
    out = []
    for et in _types(op, 0, fast):
        s = (2, 4)
        vals = _small(et, 8, 0)
        for n in ((3,) if not full else (3, 4, 0)):
            prog = single_op_program(op, [tensor(s, et), tensor((), "i32")], [tensor(s, et)], "dimension = 1 : i64")
            out.append(_case(op, et, f"static_result_size{n}", prog, [make_array(vals, et, s), make_array([n], "i32", ())],
                             [make_array(vals, et, s)], [et],
                             note="a static result type: the data is the operand's, the size only marks the valid prefix"))
    return out


# ---------------------------------------------------------------- dynamic_gather

def dynamic_gather_cases(full, fast) -> List:
    """Row gather as in indexing.gather_cases, the slice sizes an operand; plus a window
    gather (slice sizes 1x2 of a 3x4 operand, start indices clamped so the window fits)."""
    op = "stablehlo.dynamic_gather"
    out = []
    cfgs = [((3, 4), [2, 0, -1])] + ([((4, 2), [7, 1]), ((2, 3), [])] if full else [])
    for et in _types(op, 0, fast):
        for shape, idx in cfgs:
            rows, cols = shape
            vals = _small(et, _size(shape), 3) if kind(et) == "bool" else _values_distinct(et, _size(shape))
            rshape = (len(idx), cols)
            exp = [vals[min(max(idx[b], 0), rows - 1) * cols + k] for b, k in _indices(rshape)]
            attrs = ("dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], "
                     "start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false")
            prog = single_op_program(op, [tensor(shape, et), tensor((len(idx), 1), "i32"), tensor((2,), "i64")],
                                     [tensor(rshape, et)], attrs)
            out.append(_case(op, et, f"rows_{_name(shape)}_n{len(idx)}", prog,
                             [make_array(vals, et, shape), make_array(idx, "i32", (len(idx), 1)),
                              make_array([1, cols], "i64", (2,))], [make_array(exp, et, rshape)], [et],
                             note="start indices clamped into range, as the spec says"))
        if full or et in ("i8", "f32"):
            shape, starts = (3, 4), [(1, 3), (0, 0), (5, -2)]
            vals = _small(et, 12, 3) if kind(et) == "bool" else _values_distinct(et, 12)
            rshape = (len(starts), 2)
            exp = []
            for b, k in _indices(rshape):
                r = min(max(starts[b][0], 0), 3 - 1)
                c = min(max(starts[b][1], 0), 4 - 2)
                exp.append(vals[r * 4 + c + k])
            attrs = ("dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], "
                     "start_index_map = [0, 1], index_vector_dim = 1>, indices_are_sorted = false")
            prog = single_op_program(op, [tensor(shape, et), tensor((3, 2), "i64"), tensor((2,), "i32")],
                                     [tensor(rshape, et)], attrs)
            out.append(_case(op, et, "window_1x2_clamped", prog,
                             [make_array(vals, et, shape), make_array([x for s in starts for x in s], "i64", (3, 2)),
                              make_array([1, 2], "i32", (2,))], [make_array(exp, et, rshape)], [et],
                             note="start indices clamped so that each 1x2 window lies inside the operand"))
    return out


def _values_distinct(et, n):
    from .structural import _values
    return _values(et, n, f"extra/{et}")


# ---------------------------------------------------------------- dynamic_conv

def dynamic_conv_cases(full, fast) -> List:
    from .linalg import (CONV_CONFIGS, _conv_attr, _dims, _finish, _small as lsmall, _types as ltypes, conv_oracle,
                         e8m0_conv_values, EXACT_NOTE)
    op = "stablehlo.dynamic_conv"
    out = []
    for et in ltypes(op, 0, fast):
        for (name, lay, rlay, olay, ls, rs, strides, pad, ldil, rdil, rev, G, BG) in (CONV_CONFIGS if full else CONV_CONFIGS[:2]):
            if et == "f8E8M0FNU":
                if name != CONV_CONFIGS[0][0]:
                    continue
                _, lv, rv, oshape, exp = e8m0_conv_values()
                name = name + "_pow2"
            else:
                lv, rv = lsmall(et, _size(ls), 1), lsmall(et, _size(rs), 2)
                oshape, raw, mags = conv_oracle(lv, rv, ls, rs, lay, rlay, olay, strides, pad, ldil, rdil, rev, G, BG)
                exp = [_finish(et, v, m) for v, m in zip(raw, mags)]
            if any(v is None for v in exp):
                continue
            attrs = [f"window_strides = array<i64: {_dims(strides)}>",
                     f"lhs_dilation = array<i64: {_dims(ldil)}>", f"rhs_dilation = array<i64: {_dims(rdil)}>"]
            if any(rev):
                attrs.append(f"window_reversal = array<i1: {', '.join('true' if r else 'false' for r in rev)}>")
            attrs += [f"dimension_numbers = #stablehlo.conv<{_conv_attr(lay)}x{_conv_attr(rlay)}->{_conv_attr(olay)}>",
                      f"feature_group_count = {G} : i64", f"batch_group_count = {BG} : i64"]
            pt = tensor((len(pad), 2), "i64")
            prog = single_op_program(op, [tensor(ls, et), tensor(rs, et), pt], [tensor(oshape, et)], ", ".join(attrs))
            out.append(_case(op, et, name, prog,
                             [make_array(lv, et, ls), make_array(rv, et, rs),
                              make_array([x for p in pad for x in p], "i64", (len(pad), 2))],
                             [make_array(exp, et, oshape)], [et], oracle="python-exact",
                             note="convolution's loop oracle (linalg.conv_oracle), the padding an operand; " + EXACT_NOTE))
    return out


# ---------------------------------------------------------------- composite

def composite_cases(full, fast) -> List:
    """A composite `x.muladd` whose decomposition computes a * b + a."""
    from .oracles import wrap
    op = "stablehlo.composite"
    out = []
    for et in _types("stablehlo.multiply", 0, fast, ("bool", "signed", "unsigned", "float", "complex")):
        n = 4
        a, b = _small(et, n, 1), _small(et, n, 2)
        k = kind(et)
        if et == "f8E8M0FNU":
            # powers of two only: b = 1 makes a * b + a = 2a, exact
            a, b = [0.25, 1.0, 2.0, 8.0], [1.0] * n
        elif k == "bool":
            a, b = [False, True, False, True], [False, False, True, True]
        exp = []
        for x, y in zip(a, b):
            v = x * y + x
            if k == "bool":
                v = bool((x and y) or x)        # multiply / add on booleans: and / or
            elif k in ("signed", "unsigned"):
                v = wrap(v, bits(et), k == "signed")
            elif k == "float":
                fmt = float_format(et)
                if round_value(x * y, fmt) != x * y or round_value(v, fmt) != v:
                    v = None
            exp.append(v)
        if any(v is None for v in exp):
            continue
        t = tensor((n,), et)
        pb = ProgramBuilder([t, t])
        r = pb.op(op, [(pb.arg(0), t), (pb.arg(1), t)], [t],
                  'name = "x.muladd", composite_attributes = {note = "a*b+a"}, decomposition = @muladd, version = 1 : i32')[0]
        dec = (f"func.func private @muladd(%a: {t}, %b: {t}) -> {t} {{\n"
               f'  %0 = "stablehlo.multiply"(%a, %b) : ({t}, {t}) -> {t}\n'
               f'  %1 = "stablehlo.add"(%0, %a) : ({t}, {t}) -> {t}\n'
               f'  "func.return"(%1) : ({t}) -> ()\n}}\n')
        out.append(_case(op, et, "muladd", pb.text([(r, t)]) + dec, [make_array(a, et, (n,)), make_array(b, et, (n,))],
                         [make_array(exp, et, (n,))], [et], oracle="python-exact",
                         ops=(op, "stablehlo.multiply", "stablehlo.add"),
                         note="the composite means its decomposition: a * b + a, small values (exact)"))
    return out


# ---------------------------------------------------------------- custom_call (LAPACK getrf)

def _getrf_matrix(n, seed):
    """(A, LU packed, ipiv 1-based): A = P^T L U with L unit lower (entries 0, +-1/2, +-1/4)
    and U upper with integer entries, nonzero diagonal; the row order P chosen so that LAPACK's
    row interchanges are a known list."""
    L = [[Fraction(int(i == j)) for j in range(n)] for i in range(n)]
    U = [[Fraction(0)] * n for _ in range(n)]
    choices = [Fraction(1, 2), Fraction(-1, 4), Fraction(0), Fraction(-1, 2), Fraction(1, 4)]
    for i in range(n):
        for j in range(n):
            if j < i:
                L[i][j] = choices[(i * 3 + j + seed) % len(choices)]
            elif j >= i:
                U[i][j] = Fraction(((i + 2 * j + seed) % 5) - 2) if j > i else Fraction(2 + (i + seed) % 3)
    LU = [[sum(L[i][k] * U[k][j] for k in range(n)) for j in range(n)] for i in range(n)]   # = P A
    # pivots: a fixed sequence of swaps; apply them in reverse to P A to get A
    ipiv = [((k * 2 + seed) % (n - k)) + k for k in range(n)]
    A = [row[:] for row in LU]
    for k in reversed(range(n)):
        A[k], A[ipiv[k]] = A[ipiv[k]], A[k]
    packed = [[L[i][j] if j < i else U[i][j] for j in range(n)] for i in range(n)]
    return A, packed, [p + 1 for p in ipiv]


def custom_call_cases(full, fast) -> List:
    """custom_call @lapack_{s,d,c,z}getrf_ffi (jax's LU with partial pivoting): its meaning is
    fixed by LAPACK. The matrices' L has entries of magnitude < 1 below a unit diagonal, so at
    every step the pivot row (the largest |entry| of the column, |re| + |im| for complex) is
    unique and known; every quantity is a small dyadic rational, so the elimination is exact."""
    op = "stablehlo.custom_call"
    out = []
    pre = {"f32": "s", "f64": "d", "complex<f32>": "c", "complex<f64>": "z"}
    for et, p in pre.items():
        if fast is not None and et not in fast:
            continue
        for n in ((3,) if not full else (3, 4)):
            A, packed, ipiv = _getrf_matrix(n, n)
            # check the pivots are what partial pivoting picks (|L| < 1 below the diagonal)
            cvt = (lambda v: complex(v)) if kind(et) == "complex" else float
            t = tensor((n, n), et)
            ti, tinfo = tensor((n,), "i32"), tensor((), "i32")
            pb = ProgramBuilder([t])
            res = pb.op(op, [(pb.arg(0), t)], [t, ti, tinfo],
                        f'call_target_name = "lapack_{p}getrf_ffi", api_version = 4 : i32, '
                        'backend_config = {}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], '
                        'result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>, '
                        'dense<> : tensor<0xindex>]')
            out.append(_case(op, et, f"lapack_getrf_{n}x{n}", pb.text([(res[0], t), (res[1], ti), (res[2], tinfo)]),
                             [make_array([cvt(v) for row in A for v in row], et, (n, n))],
                             [make_array([cvt(v) for row in packed for v in row], et, (n, n)),
                              make_array(ipiv, "i32", (n,)), make_array([0], "i32", ())], [et, "i32", "i32"],
                             oracle="python-exact", ops=(op,),
                             note="A = P^T L U from a known L (|entries| < 1, dyadic) and integer U: unique pivots, "
                                  "exact elimination; LAPACK's packed LU, 1-based ipiv and info = 0"))
    # custom_call @Sharding (XLA's sharding annotation, as jax emits it): on one device the
    # identity, for any element type
    from .structural import _values
    for et in _types(op, 0, fast):
        if et in pre:
            continue                       # (the LAPACK cases above cover these types)
        vals = _values(et, 6, f"custom_call/sharding/{et}")
        t = tensor((2, 3), et)
        pb = ProgramBuilder([t])
        r = pb.op(op, [(pb.arg(0), t)], [t], 'call_target_name = "Sharding", mhlo.sharding = "{replicated}"')[0]
        out.append(_case(op, et, "sharding_identity", pb.text([(r, t)]), [make_array(vals, et, (2, 3))],
                         [make_array(vals, et, (2, 3))], [et], ops=(op,),
                         note="XLA's @Sharding annotation: one device, replicated: the operand unchanged"))
    return out


# ---------------------------------------------------------------- chlo.scan

def scan_cases(full, fast) -> List:
    """chlo.scan with an add body: outputs the running sums along `dimension` (from the end
    when `is_reverse`), the carry the total plus the init."""
    from .oracles import wrap
    op = "chlo.scan"
    out = []
    for et in _types("stablehlo.add", 0, fast, ("bool", "signed", "unsigned", "float", "complex")):
        k = kind(et)
        for dim, rev in ([(0, False)] + ([(1, False), (0, True), (1, True)] if full else [(1, True)])):
            shape = (3, 2)
            vals = _small(et, 6, 1)
            cshape = (2,) if dim == 0 else (3,)
            init = _small(et, cshape[0], 4)
            length = shape[dim]
            outs = [None] * 6
            carry = list(init)
            ok = True
            order = range(length - 1, -1, -1) if rev else range(length)
            for i in order:
                for j in range(cshape[0]):
                    idx = (i, j) if dim == 0 else (j, i)
                    v = carry[j] + vals[_flat(shape, idx)]
                    if k == "bool":
                        v = bool(carry[j] or vals[_flat(shape, idx)])      # add on booleans: or
                    elif k in ("signed", "unsigned"):
                        v = wrap(v, bits(et), k == "signed")
                    elif k == "float":
                        if round_value(v, float_format(et)) != v:
                            ok = False
                    carry[j] = v
                    outs[_flat(shape, idx)] = v
            if not ok:
                continue
            t, tc, t0 = tensor(shape, et), tensor(cshape, et), tensor(cshape, et)
            region = (f'{{\n  ^bb0(%x: {tc}, %c: {tc}):\n'
                      f'    %s = "stablehlo.add"(%x, %c) : ({tc}, {tc}) -> {tc}\n'
                      f'    "stablehlo.return"(%s, %s) : ({tc}, {tc}) -> ()\n  }}')
            pb = ProgramBuilder([t, t0])
            res = pb.op(op, [(pb.arg(0), t), (pb.arg(1), t0)], [t, tc],
                        f"dimension = {dim} : i64, is_reverse = {str(rev).lower()}, "
                        "operandSegmentSizes = array<i32: 1, 1>, resultSegmentSizes = array<i32: 1, 1>", region)
            out.append(_case(op, et, f"cumsum_dim{dim}{'_reverse' if rev else ''}", pb.text([(res[0], t), (res[1], tc)]),
                             [make_array(vals, et, shape), make_array(init, et, cshape)],
                             [make_array(outs, et, shape), make_array(carry, et, cshape)], [et, et],
                             oracle="python-exact", ops=(op, "stablehlo.add"),
                             note="running sums of small values: exact"))
    # f8E8M0FNU (powers of two, no zero; running sums are not representable): a running
    # maximum body instead
    et = "f8E8M0FNU"
    if et in _types("stablehlo.maximum", 0, fast, ("float",)):
        shape, cshape = (3, 2), (2,)
        vals = [2.0 ** e for e in (3, -2, 0, 5, 4, -1)]
        init = [2.0 ** 1, 2.0 ** -3]
        carry, outs = list(init), [None] * 6
        for i in range(3):
            for j in range(2):
                carry[j] = max(carry[j], vals[_flat(shape, (i, j))])
                outs[_flat(shape, (i, j))] = carry[j]
        t, tc = tensor(shape, et), tensor(cshape, et)
        region = (f'{{\n  ^bb0(%x: {tc}, %c: {tc}):\n'
                  f'    %s = "stablehlo.maximum"(%x, %c) : ({tc}, {tc}) -> {tc}\n'
                  f'    "stablehlo.return"(%s, %s) : ({tc}, {tc}) -> ()\n  }}')
        pb = ProgramBuilder([t, tc])
        res = pb.op(op, [(pb.arg(0), t), (pb.arg(1), tc)], [t, tc],
                    "dimension = 0 : i64, is_reverse = false, "
                    "operandSegmentSizes = array<i32: 1, 1>, resultSegmentSizes = array<i32: 1, 1>", region)
        out.append(_case(op, et, "cummax_dim0", pb.text([(res[0], t), (res[1], tc)]),
                         [make_array(vals, et, shape), make_array(init, et, cshape)],
                         [make_array(outs, et, shape), make_array(carry, et, cshape)], [et, et],
                         oracle="python-exact", ops=(op, "stablehlo.maximum"),
                         note="f8E8M0FNU: powers of two without zero, so a running maximum rather than sums"))
    return out


# ---------------------------------------------------------------- chlo.ragged_dot

def ragged_dot_oracle(mode, lv, rv, gs, dims):
    """The three modes of ChloOps.td's ragged_dot on rank-2/3 operands by loops:
    mode 1 (ragged m): lhs [m, k], rhs [g, k, n] -> [m, n], rows of group j use rhs[j];
    mode 2 (ragged k): lhs [m, k], rhs [k, n] -> [g, m, n], group j sums over its k-run only;
    mode 3 (ragged batch): lhs [b, m, k], rhs [b, k, n] -> [b, m, n] (a batched product)."""
    starts = [sum(gs[:j]) for j in range(len(gs))]
    runs = [(s, s + g) for s, g in zip(starts, gs)]
    if mode == 1:
        m, k = dims["lhs"]
        g, _, n = dims["rhs"]
        res = [0] * (m * n)
        for j, (s, e) in enumerate(runs):
            for i in range(s, min(e, m)):
                for c in range(n):
                    res[i * n + c] = sum(lv[i * k + t] * rv[(j * k + t) * n + c] for t in range(k))
        return (m, n), res
    if mode == 2:
        m, k = dims["lhs"]
        _, n = dims["rhs"]
        g = len(gs)
        res = []
        for j, (s, e) in enumerate(runs):
            for i in range(m):
                for c in range(n):
                    res.append(sum(lv[i * k + t] * rv[t * n + c] for t in range(s, min(e, k))))
        return (g, m, n), res
    b, m, k = dims["lhs"]
    _, _, n = dims["rhs"]
    res = []
    for bb in range(b):
        for i in range(m):
            for c in range(n):
                res.append(sum(lv[(bb * m + i) * k + t] * rv[(bb * k + t) * n + c] for t in range(k)))
    return (b, m, n), res


RAGGED_CONFIGS = [
    ("ragged_m", 1, (5, 3), (3, 3, 2), [2, 0, 3],
     "lhs_batching_dimensions = [], rhs_batching_dimensions = [], lhs_contracting_dimensions = [1], "
     "rhs_contracting_dimensions = [1], lhs_ragged_dimensions = [0], rhs_group_dimensions = [0]"),
    ("ragged_k", 2, (2, 5), (5, 3), [1, 3, 1],
     "lhs_batching_dimensions = [], rhs_batching_dimensions = [], lhs_contracting_dimensions = [1], "
     "rhs_contracting_dimensions = [0], lhs_ragged_dimensions = [1], rhs_group_dimensions = []"),
    ("ragged_batch", 3, (2, 2, 3), (2, 3, 2), [1, 1],
     "lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], "
     "rhs_contracting_dimensions = [1], lhs_ragged_dimensions = [0], rhs_group_dimensions = []"),
]


# f8E8M0FNU (powers of two only: no zero, no sign) holds a sum of ones only up to 2 terms:
# configs with every contraction run 1 or 2 long and every output row in some group
RAGGED_K2_CONFIGS = [
    ("ragged_m_k2", 1, (3, 2), (2, 2, 2), [1, 2],
     "lhs_batching_dimensions = [], rhs_batching_dimensions = [], lhs_contracting_dimensions = [1], "
     "rhs_contracting_dimensions = [1], lhs_ragged_dimensions = [0], rhs_group_dimensions = [0]"),
    ("ragged_k_k2", 2, (2, 3), (3, 2), [1, 2],
     "lhs_batching_dimensions = [], rhs_batching_dimensions = [], lhs_contracting_dimensions = [1], "
     "rhs_contracting_dimensions = [0], lhs_ragged_dimensions = [1], rhs_group_dimensions = []"),
    ("ragged_batch_k2", 3, (2, 2, 2), (2, 2, 2), [1, 1],
     "lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], "
     "rhs_contracting_dimensions = [1], lhs_ragged_dimensions = [0], rhs_group_dimensions = []"),
]


def ragged_dot_cases(full, fast) -> List:
    from .linalg import _finish, _mag, _small as lsmall, _types as ltypes, narrow_small
    op = "chlo.ragged_dot"
    out = []
    for et in ltypes("stablehlo.dot_general", 0, fast):
        narrow = kind(et) == "float" and bits(et) <= 8
        configs = (RAGGED_CONFIGS if full else RAGGED_CONFIGS[:2])
        if et == "f8E8M0FNU":
            configs = (RAGGED_K2_CONFIGS if full else RAGGED_K2_CONFIGS[:2])
        for name, mode, ls, rs, gs, dn in configs:
            # small integers in -2..2; in a 4- to 8-bit float where their sums are not exact,
            # values in {-1, 0, 1} (all ones in f8E8M0FNU) instead (linalg.narrow_small)
            for pick in ((lsmall, narrow_small) if narrow else (lsmall,)):
                lv, rv = pick(et, _size(ls), 1), pick(et, _size(rs), 2)
                oshape, raw = ragged_dot_oracle(mode, lv, rv, gs, {"lhs": ls, "rhs": rs})
                k = ls[-1]
                bound = k * max(_mag(v) for v in lv) * max(_mag(v) for v in rv) if lv and rv else 0
                exp = [_finish(et, v, bound) for v in raw]
                if all(v is not None for v in exp):
                    break
            if any(v is None for v in exp):
                continue
            tl, tr, tg, to = tensor(ls, et), tensor(rs, et), tensor((len(gs),), "i64"), tensor(oshape, et)
            prog = single_op_program(op, [tl, tr, tg], [to], f"ragged_dot_dimension_numbers = #chlo.ragged_dot<{dn}>")
            out.append(_case(op, et, name, prog, [make_array(lv, et, ls), make_array(rv, et, rs), make_array(gs, "i64", (len(gs),))],
                             [make_array(exp, et, oshape)], [et], oracle="python-exact",
                             note="loops over the groups' runs (ChloOps.td's three modes); small values, exact sums"))
    return out


# ---------------------------------------------------------------- Threefry / Philox (Python ints)

_TF_ROT = (13, 15, 26, 6, 17, 29, 16, 24)


def _rotl32(x, r):
    return ((x << r) | (x >> (32 - r))) & M32


def threefry2x32_int(key, ctr):
    """Threefry-2x32, 20 rounds (Random123; jax's threefry_2x32): key and counter are pairs of
    32-bit ints; a key injection after every 4 rounds."""
    k0, k1 = key
    ks = (k0, k1, 0x1BD11BDA ^ k0 ^ k1)
    x0, x1 = (ctr[0] + k0) & M32, (ctr[1] + k1) & M32
    for rnd in range(20):
        x0 = (x0 + x1) & M32
        x1 = _rotl32(x1, _TF_ROT[rnd % 8]) ^ x0
        if rnd % 4 == 3:
            s = rnd // 4 + 1
            x0 = (x0 + ks[s % 3]) & M32
            x1 = (x1 + ks[(s + 1) % 3] + s) & M32
    return x0, x1


def philox4x32_int(key, ctr):
    """Philox-4x32, 10 rounds (Random123): four 32-bit counter words, two key words bumped by
    the Weyl constants after each round."""
    k0, k1 = key
    c0, c1, c2, c3 = ctr
    for _ in range(10):
        p0, p1 = 0xD2511F53 * c0, 0xCD9E8D57 * c2
        c0, c1, c2, c3 = (p1 >> 32) ^ c1 ^ k0, p1 & M32, (p0 >> 32) ^ c3 ^ k1, p0 & M32
        k0, k1 = (k0 + 0x9E3779B9) & M32, (k1 + 0xBB67AE85) & M32
    return c0, c1, c2, c3


def _split_dim(shape):
    """XLA's 32-bit THREE_FRY pairs neighbours along one dimension: the one needing the least
    padding to an even size (first on ties; size-1 dimensions never); None if all are 1."""
    n = _size(shape)
    best, cost = None, None
    for i, d in enumerate(shape):
        if d > 1:
            c = 0 if d % 2 == 0 else n // d
            if cost is None or c < cost:
                best, cost = i, c
    return best


def threefry_xla(state, shape, width):
    """(bits per element in row-major order, new state) of XLA's THREE_FRY."""
    key, ctr = state
    kw = (key & M32, key >> 32)
    if width == 64:
        n = _size(shape)
        vals = []
        for i in range(n):
            c = (ctr + i) & M64
            x0, x1 = threefry2x32_int(kw, (c & M32, c >> 32))
            vals.append(x0 | (x1 << 32))
        return vals, [key, (ctr + n) & M64]
    s = _split_dim(shape)
    if s is None:
        n = _size(shape)
        m = (n + 1) // 2
        words = []
        for j in range(m):
            c = (ctr + j) & M64
            words += list(threefry2x32_int(kw, (c & M32, c >> 32)))
        return words[:n], [key, (ctr + m) & M64]
    half = tuple((d + 1) // 2 if i == s else d for i, d in enumerate(shape))
    m = _size(half)
    vals = []
    for idx in _indices(shape):
        hidx = tuple(v // 2 if i == s else v for i, v in enumerate(idx))
        c = (ctr + _flat(half, hidx)) & M64
        vals.append(threefry2x32_int(kw, (c & M32, c >> 32))[idx[s] % 2])
    return vals, [key, (ctr + m) & M64]


def philox_xla(state, shape, width):
    key = state[0]
    lo, hi = (state[1], state[2]) if len(state) == 3 else (state[1], key)
    n = _size(shape)
    per = 4 if width == 32 else 2
    m = -(-n // per)
    vals = []
    for j in range(m):
        c = (lo + j) & M64
        h = (hi + ((lo + j) >> 64)) & M64
        w = philox4x32_int((key & M32, key >> 32), (c & M32, c >> 32, h & M32, h >> 32))
        vals += list(w) if width == 32 else [w[0] | (w[1] << 32), w[2] | (w[3] << 32)]
    new_lo = (lo + m) & M64
    new_state = [key, new_lo] + ([(hi + ((lo + m) >> 64)) & M64] + list(state[3:]) if len(state) == 3 else [])
    return vals[:n], new_state


def _from_bits(words, et, shape):
    """Random words read as `et`: 64-bit types take the 64-bit word, narrower ones the low
    `bits(et)` bits of a 32-bit word, reinterpreted as the type."""
    w = bits(et)
    low = [x & ((1 << w) - 1) for x in words]
    k = kind(et)
    if k == "signed":
        return make_array([v - (1 << w) if v >> (w - 1) else v for v in low], et, shape)
    if k == "unsigned":
        return make_array(low, et, shape)
    dt = type_info(et).dtype
    store = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}.get(dt.itemsize * 8)
    return np.array(low, dtype=store).view(dt).reshape(shape)


def rng_bit_generator_cases(full, fast) -> List:
    op = "stablehlo.rng_bit_generator"
    out = []
    for et in _types(op, 1, fast, ("signed", "unsigned", "float"), result=True):
        if bits(et) > 64:
            continue
        width = 64 if bits(et) == 64 else 32
        shapes = [(2, 3)] + ([(5,), (3, 3), (1, 1)] if full else [(5,)] if et in ("ui32", "i64") else [])
        for alg, state in (("THREE_FRY", [0x1234567890ABCDEF, 0xFFFFFFFFFFFFFFFE]),
                           ("PHILOX", [0x0123456789ABCDEF, 0xFFFFFFFFFFFFFFFF, 7]),
                           ("PHILOX", [42, 5]), ("DEFAULT", [1, 2])):
            for shape in shapes:
                ts = tensor((len(state),), "ui64")
                to = tensor(shape, et)
                prog = single_op_program(op, [ts], [ts, to], f"rng_algorithm = #stablehlo<rng_algorithm {alg}>")
                st = make_array(state, "ui64", (len(state),))
                var = f"{alg.lower()}_state{len(state)}_{_name(shape)}"
                if alg == "DEFAULT":
                    out.append(_case(op, et, var, prog, [st],
                                     [np.zeros((len(state),), np.uint64), make_array([0] * _size(shape), et, shape)],
                                     ["ui64", et], [Rule("shape", check="generated")] * 2, oracle="spec-shape",
                                     note="DEFAULT: bits and output state are implementation-defined; only shapes "
                                          "and element types are checked (the expected values are placeholders)"))
                    continue
                gen = threefry_xla if alg == "THREE_FRY" else philox_xla
                words, new_state = gen(state, shape, width)
                out.append(_case(op, et, var, prog, [st],
                                 [make_array(new_state, "ui64", (len(state),)), _from_bits(words, et, shape)],
                                 ["ui64", et], oracle="python-int-xla-rng",
                                 note=f"{alg}: bits of XLA's definition (Random123 {alg.lower()} over Python ints, "
                                      "XLA's counter and output layout); the spec leaves the bits "
                                      "implementation-defined, so this checks the reference's claim to match XLA"))
    return out


# ---------------------------------------------------------------- rng

def rng_cases(full, fast) -> List:
    op = "stablehlo.rng"
    out = []
    for et in _types(op, 0, fast, ("signed", "unsigned", "float"), result=True):
        k = kind(et)
        if k == "float":
            a, b = (0.5, 4.0) if _unsigned_float(et) else (-2.0, 3.0)
        else:
            lo, hi = int_range(et)
            a, b = (max(lo, -5), min(hi, 7)) if bits(et) > 2 else (lo, hi)
        for shape in ([(3, 4)] + ([(0, 2), (64,)] if full else [])):
            ta, tsh, to = tensor((), et), tensor((len(shape),), "i64"), tensor(shape, et)
            ins = [make_array([a], et, ()), make_array([b], et, ()), make_array(list(shape), "i64", (len(shape),))]
            prog = single_op_program(op, [ta, ta, tsh], [to], "rng_distribution = #stablehlo<rng_distribution UNIFORM>")
            out.append(_case(op, et, f"uniform_{_name(shape)}", prog, ins, [make_array([a] * _size(shape), et, shape)],
                             [et], [Rule("range", lo=float(a), hi=float(b), check="generated")], oracle="spec-range",
                             note="UNIFORM: the values are implementation-defined; each must lie in [a, b) "
                                  "(the expected array is a placeholder of the shape)"))
            if k == "float":
                ins = [make_array([0.0 if not _unsigned_float(et) else 1.0], et, ()), make_array([1.0], et, ()),
                       make_array(list(shape), "i64", (len(shape),))]
                prog = single_op_program(op, [ta, ta, tsh], [to], "rng_distribution = #stablehlo<rng_distribution NORMAL>")
                out.append(_case(op, et, f"normal_{_name(shape)}", prog, ins,
                                 [make_array([0.0 if not _unsigned_float(et) else 1.0] * _size(shape), et, shape)],
                                 [et], [Rule("shape", check="generated")], oracle="spec-shape",
                                 note="NORMAL: the values are implementation-defined; only shape and type are checked"))
    return out


def all_extra(full, fast) -> List:
    return (constant_cases(full, fast) + set_dimension_size_cases(full, fast) + dynamic_gather_cases(full, fast)
            + dynamic_conv_cases(full, fast) + composite_cases(full, fast) + custom_call_cases(full, fast)
            + scan_cases(full, fast) + ragged_dot_cases(full, fast) + rng_bit_generator_cases(full, fast)
            + rng_cases(full, fast) + asin_acos_kernel_cases(full, fast))


# ---------------------------------------------------------------- chlo._asin_acos_kernel

ASIN_ACOS_POINTS = [complex(0.5, 0.25), complex(-0.75, 1.5), complex(2.0, -0.5), complex(-1.25, -2.5),
                    complex(0.375, 3.0), complex(-2.5, 0.625), complex(1.0, 1.0), complex(-0.5, -0.75)]


def asin_acos_kernel_oracle(z):
    """w = sqrt(a^2 - x^2) + i log(a + sqrt(a^2 - 1)), a = (|z + 1| + |z - 1|) / 2 (ChloOps.td:
    asin(z) = atan2(re z, re w) + i sign(im z) im w), at 256 bits."""
    with mpmath.workprec(256):
        x, y = mpmath.mpf(z.real), mpmath.mpf(z.imag)
        a = (mpmath.hypot(x + 1, y) + mpmath.hypot(x - 1, y)) / 2
        return mpmath.sqrt(a * a - x * x), mpmath.log(a + mpmath.sqrt(a * a - 1))


def asin_acos_kernel_cases(full, fast) -> List:
    op = "chlo._asin_acos_kernel"
    out = []
    for et in _types(op, 0, fast, ("complex",)):
        comp = "f32" if et == "complex<f32>" else "f64"
        fmt = float_format(comp)
        pts = ASIN_ACOS_POINTS if full else ASIN_ACOS_POINTS[:4]
        exp = []
        for z in pts:
            re, im = asin_acos_kernel_oracle(z)
            exp.append(complex(float(round_value(re, fmt)), float(round_value(im, fmt))))
        n = len(pts)
        prog = single_op_program(op, [tensor((n,), et)], [tensor((n,), et)])
        out.append(_case(op, et, "moderate", prog, [make_array(pts, et, (n,))], [make_array(exp, et, (n,))], [et],
                         [rule_for(et, 4)], oracle="mpmath",
                         note="moderate points (both parts of w well away from 0): mpmath at 256 bits, one rounding "
                              "per part; 4 ULP per part"))
    return out

