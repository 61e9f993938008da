"""Generated cases of the windowed and scattering ops, with expected values from index
arithmetic written here (plain loops over the spec's padded / dilated index spaces), not from
the interpreter's kernels: reduce_window (strides, padding, base and window dilation),
select_and_scatter (GE select, add scatter) and scatter (row updates with unique indices).

What the spec leaves open is kept out of the cases, and each case says so: the order of a
reduction or of scatter updates is implementation-defined, so values are small integers whose
sums are exact in every order (float cases whose sums a format cannot hold are skipped);
select_and_scatter windows hold distinct values (which of two equal maxima GE selects depends
on the order); scatter indices are unique."""
from __future__ import annotations

import math
from typing import List

from .build import make_case, rule_for
from .formats import float_format, round_value
from .oracles import wrap
from .program import ProgramBuilder, tensor
from .structural import _flat, _indices, _size
from .values import admitted, bits, int_range, kind, make_array

ORDER_NOTE = "the order of combining is implementation-defined: small integer values, exact in every order"


def _types(op, i, fast, kinds=("bool", "signed", "unsigned", "float", "complex")):
    from stablehlo_ref import spec
    cls = spec.op(op).operands[i].type
    return [t for t in admitted(cls) if kind(t) in kinds and (fast is None or t in fast)]


def _ints(et, n, seed, span=5):
    """n small values of the type: integers in a window of `span` around 0 (or from 0 for
    unsigned), booleans alternating, complex with small integer parts."""
    k = kind(et)
    if k == "bool":
        return [(i * 5 + seed) % 3 == 0 for i in range(n)]
    if k == "complex":
        return [complex((i + seed) % 3 - 1, (i * 2 + seed) % 3 - 1) for i in range(n)]
    lo, hi = int_range(et) if k != "float" else (-2, 2)
    base = 0 if k == "unsigned" else max(lo, -(span // 2))
    top = min(hi, base + span - 1)
    vals = [base + (i * 3 + seed) % (top - base + 1) for i in range(n)]
    if k == "float":
        fmt = float_format(et)
        return [float(v) if round_value(float(v), fmt) == v else 1.0 for v in vals]
    return vals


def _combine(body, et, a, b):
    k = kind(et)
    if body == "add":
        if k == "bool":
            return a or b
        if k in ("signed", "unsigned"):
            return wrap(a + b, bits(et), k == "signed")
        return a + b
    if body == "max":
        return (a or b) if k == "bool" else max(a, b)
    return (a and b) if k == "bool" else min(a, b)


def _exact_in(et, v) -> bool:
    if kind(et) == "float":
        return round_value(float(v), float_format(et)) == v
    if kind(et) == "complex":
        return True                     # small integer parts: exact in f32 and f64
    return True


def _order_free(et, terms) -> bool:
    """Whether adding `terms` (small integers) gives the same, exact result in every order in
    the type: integers wrap (any order agrees); float partial sums stay exact when the
    absolute sum is at most 2^precision (and the format's maximum)."""
    k = kind(et)
    if k not in ("float", "complex"):
        return True
    fmt = float_format("f32" if et == "complex<f32>" else "f64" if k == "complex" else et)
    mag = sum(abs(t.real) + abs(t.imag) if isinstance(t, complex) else abs(t) for t in terms)
    return mag <= 2 ** fmt.precision and mag <= fmt.max


def _init(body, et):
    k = kind(et)
    if body == "add":
        return False if k == "bool" else 0
    if k == "bool":
        return body == "min"
    if k == "float":
        fmt = float_format(et)
        if fmt.has_inf:
            return -math.inf if body == "max" else math.inf
        return (fmt.smallest_subnormal if fmt.unsigned else -fmt.max) if body == "max" else fmt.max
    lo, hi = int_range(et)
    return lo if body == "max" else hi


def _body_region(sop, t0):
    return (f"{{\n  ^bb0(%a: {t0}, %b: {t0}):\n    %s = \"{sop}\"(%a, %b) : ({t0}, {t0}) -> {t0}\n"
            f"    \"stablehlo.return\"(%s) : ({t0}) -> ()\n  }}")


def _arr_attr(xs):
    return f"array<i64: {', '.join(map(str, xs))}>"


def _pad_attr(pad):
    return f"dense<[{', '.join(f'[{a}, {b}]' for a, b in pad)}]> : tensor<{len(pad)}x2xi64>"


def window_positions(shape, window, strides, pad, base_dil, win_dil):
    """The spec's reduce_window index space: for each result index, the list of operand
    multi-indices its window covers (None where the window sees padding or a hole of the base
    dilation). Returns (result shape, {result index: [operand index or None, ...]})."""
    rank = len(shape)
    dilated = [(shape[d] - 1) * base_dil[d] + 1 if shape[d] else 0 for d in range(rank)]
    padded = [dilated[d] + pad[d][0] + pad[d][1] for d in range(rank)]
    extent = [(window[d] - 1) * win_dil[d] + 1 for d in range(rank)]
    rshape = tuple(max(0, (padded[d] - extent[d]) // strides[d] + 1) if padded[d] >= extent[d] else 0
                   for d in range(rank))
    out = {}
    for r in _indices(rshape):
        cells = []
        for w in _indices(window):
            src = []
            for d in range(rank):
                q = r[d] * strides[d] + w[d] * win_dil[d] - pad[d][0]
                if q < 0 or q >= dilated[d] or q % base_dil[d]:
                    src = None
                    break
                src.append(q // base_dil[d])
            cells.append(tuple(src) if src is not None else None)
        out[r] = cells
    return rshape, out


RW_CONFIGS = [
    # name, shape, window, strides, padding, base dilation, window dilation
    ("w2x2", (3, 4), (2, 2), (1, 1), ((0, 0), (0, 0)), (1, 1), (1, 1)),
    ("w2x3_s2x1_pad", (4, 3), (2, 3), (2, 1), ((1, 0), (1, 1)), (1, 1), (1, 1)),
    ("w2x2_basedil2_windil2", (3, 3), (2, 2), (1, 2), ((0, 1), (0, 0)), (2, 1), (1, 2)),
    ("w3_rank1_s2", (7,), (3,), (2,), ((0, 0),), (1,), (1,)),
]


def reduce_window_cases(full, fast) -> List:
    op = "stablehlo.reduce_window"
    out = []
    for et in _types(op, 0, fast):
        for body in ("add", "max", "min"):
            if kind(et) == "complex" and body != "add":
                continue
            for name, shape, window, strides, pad, bd, wd in (RW_CONFIGS if full else RW_CONFIGS[:2]):
                if not full and body == "min":
                    continue
                vals = _ints(et, _size(shape), 2)
                init = _init(body, et)
                rshape, cells = window_positions(shape, window, strides, pad, bd, wd)
                exp, ok = [], True
                for r in _indices(rshape):
                    acc = init
                    terms = []
                    for src in cells[r]:
                        v = init if src is None else vals[_flat(shape, src)]
                        terms.append(v)
                        acc = _combine(body, et, acc, v)
                        ok = ok and _exact_in(et, acc)
                    ok = ok and (body != "add" or _order_free(et, terms))
                    exp.append(acc)
                if not ok:
                    continue               # a partial sum the format cannot hold exactly
                sop = {"add": "stablehlo.add", "max": "stablehlo.maximum", "min": "stablehlo.minimum"}[body]
                t0, ts, tr = tensor((), et), tensor(shape, et), tensor(rshape, et)
                attrs = [f"window_dimensions = {_arr_attr(window)}"]
                if any(s != 1 for s in strides):
                    attrs.append(f"window_strides = {_arr_attr(strides)}")
                if any(d != 1 for d in bd):
                    attrs.append(f"base_dilations = {_arr_attr(bd)}")
                if any(d != 1 for d in wd):
                    attrs.append(f"window_dilations = {_arr_attr(wd)}")
                if any(p != (0, 0) for p in pad):
                    attrs.append(f"padding = {_pad_attr(pad)}")
                b = ProgramBuilder([ts, t0])
                res = b.op(op, [(b.arg(0), ts), (b.arg(1), t0)], [tr], ", ".join(attrs), _body_region(sop, t0))[0]
                out.append(make_case(op, et, f"{body}_{name}", b.text([(res, tr)]),
                                     [make_array(vals, et, shape), make_array([init], et, ())],
                                     [make_array(exp, et, rshape)], [et], [rule_for(et, 0)], "index-arithmetic",
                                     "windows", "padding and base-dilation holes take the init value; " + ORDER_NOTE,
                                     (op, sop)))
    return out


SAS_CONFIGS = [
    # name, operand shape, window, strides (no padding: the windows see operand elements only)
    ("w2x2_s2", (4, 4), (2, 2), (2, 2)),
    ("w2x2_s1_overlap", (3, 3), (2, 2), (1, 1)),
    ("w3_rank1_s2", (7,), (3,), (2,)),
]


def _distinct(et, n, seed):
    """n values, pairwise distinct within every run of 4 consecutive positions' windows (a
    permutation of the type's smallest values), so GE selects one element in every order."""
    k = kind(et)
    if k == "float":
        fmt = float_format(et)
        pool = [v for v in (-2.0, -1.0, 0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, -0.5, -1.5, 6.0)
                if round_value(v, fmt) == v and not (fmt.unsigned and v < 0)]
    else:
        lo, hi = int_range(et)
        base = 0 if k == "unsigned" else max(lo, -4)
        pool = list(range(base, min(hi, base + 11) + 1))
    # a seeded permutation, repeated: distinct within any len(pool) consecutive positions
    perm = sorted(pool, key=lambda v: ((pool.index(v) * 7 + seed) % len(pool)))
    return [perm[i % len(perm)] for i in range(n)], len(pool)


def select_and_scatter_oracle(vals, shape, src, window, strides, pad, init, ge=lambda a, b: a >= b,
                              combine=lambda acc, x: acc + x):
    """The spec's select_and_scatter with a GE select and an add scatter, over row-major
    lists: each window (padding positions are never selected) picks its greatest element (the
    first of equal ones), and the source value of the window is added there (`ge` and
    `combine` replace the select and the scatter body)."""
    pad = pad or [(0, 0)] * len(shape)
    rshape, cells = window_positions(shape, window, strides, pad, [1] * len(shape), [1] * len(shape))
    acc = [init] * _size(shape)
    for r in _indices(rshape):
        real = [c for c in cells[r] if c is not None]
        if not real:
            continue
        best = real[0]
        for c in real[1:]:
            if not ge(vals[_flat(shape, best)], vals[_flat(shape, c)]):
                best = c
        acc[_flat(shape, best)] = combine(acc[_flat(shape, best)], src[_flat(rshape, r)])
    return acc


def select_and_scatter_other_cases(full, fast) -> List:
    """select_and_scatter on i1 (GE select, `or` scatter, init false), complex (a select
    written with real / imag and float compares, lexicographic GE on (real, imag); add scatter
    of small integer parts, exact) and f8E8M0FNU (GE select, `maximum` scatter from the
    smallest value 2^-127: the format has no zero and its sums are not representable)."""
    op = "stablehlo.select_and_scatter"
    out = []
    for et in _types(op, 0, fast, ("bool", "complex", "float")):
        if kind(et) == "float" and et != "f8E8M0FNU":
            continue
        t0 = tensor((), et)
        ge_region = (f"{{\n  ^bb0(%a: {t0}, %b: {t0}):\n    %s = \"stablehlo.compare\"(%a, %b) "
                     f"{{comparison_direction = #stablehlo<comparison_direction GE>}} : ({t0}, {t0}) -> tensor<i1>\n"
                     f"    \"stablehlo.return\"(%s) : (tensor<i1>) -> ()\n  }}")
        ops = (op, "stablehlo.compare")
        if kind(et) == "bool":
            configs = [("w2_rank1_s2", (8,), (2,), (2,))]
            vals = [True, False, False, True, True, False, False, True]
            init, ge, combine, body = False, (lambda a, b: a >= b), (lambda acc, x: acc or x), "stablehlo.or"
            src_of = lambda n: [bool(i % 3 != 1) for i in range(n)]          # noqa: E731
            note = "booleans: true >= false (unsigned compare); `or` scatter"
        elif kind(et) == "complex":
            configs = SAS_CONFIGS if full else SAS_CONFIGS[:1]
            vals = None
            init, combine, body = 0j, (lambda acc, x: acc + x), "stablehlo.add"
            ge = lambda a, b: (a.real, a.imag) >= (b.real, b.imag)          # noqa: E731
            src_of = lambda n: [complex(i % 3 - 1, (i * 2) % 5 - 2) for i in range(n)]      # noqa: E731
            c = tensor((), "f32" if et == "complex<f32>" else "f64")
            ge_region = (f'{{\n  ^bb0(%a: {t0}, %b: {t0}):\n'
                         f'    %ra = "stablehlo.real"(%a) : ({t0}) -> {c}\n'
                         f'    %rb = "stablehlo.real"(%b) : ({t0}) -> {c}\n'
                         f'    %ia = "stablehlo.imag"(%a) : ({t0}) -> {c}\n'
                         f'    %ib = "stablehlo.imag"(%b) : ({t0}) -> {c}\n'
                         f'    %gr = "stablehlo.compare"(%ra, %rb) {{comparison_direction = #stablehlo<comparison_direction GT>}} : ({c}, {c}) -> tensor<i1>\n'
                         f'    %er = "stablehlo.compare"(%ra, %rb) {{comparison_direction = #stablehlo<comparison_direction EQ>}} : ({c}, {c}) -> tensor<i1>\n'
                         f'    %gi = "stablehlo.compare"(%ia, %ib) {{comparison_direction = #stablehlo<comparison_direction GE>}} : ({c}, {c}) -> tensor<i1>\n'
                         f'    %t = "stablehlo.and"(%er, %gi) : (tensor<i1>, tensor<i1>) -> tensor<i1>\n'
                         f'    %s = "stablehlo.or"(%gr, %t) : (tensor<i1>, tensor<i1>) -> tensor<i1>\n'
                         f'    "stablehlo.return"(%s) : (tensor<i1>) -> ()\n  }}')
            ops = (op, "stablehlo.real", "stablehlo.imag", "stablehlo.compare", "stablehlo.and", "stablehlo.or")
            note = "lexicographic GE on (real, imag), written with real / imag; small integer parts: the sums are exact"
        else:
            configs = SAS_CONFIGS if full else SAS_CONFIGS[:1]
            vals = None
            init, ge, combine, body = 2.0 ** -127, (lambda a, b: a >= b), max, "stablehlo.maximum"
            src_of = lambda n: [2.0 ** ((i * 5) % 9 - 4) for i in range(n)]      # noqa: E731
            note = "f8E8M0FNU: no zero and no sums, so a `maximum` scatter from the smallest value 2^-127"
        for name, shape, window, strides in configs:
            n = _size(shape)
            if vals is not None:
                v = vals
            elif kind(et) == "complex":
                v = [complex((i * 5) % 7 - 3, (i * 3) % 4 - 1) for i in range(n)]
            else:
                v = [2.0 ** ((i * 7) % 12 - 4) for i in range(n)]
            rshape, cells = window_positions(shape, window, strides, [(0, 0)] * len(shape),
                                             [1] * len(shape), [1] * len(shape))
            if any(len({v[_flat(shape, q)] for q in cl}) != len(cl) for cl in cells.values()):
                continue                   # a window with equal values: the selected one is not fixed
            src = src_of(_size(rshape))
            exp = select_and_scatter_oracle(v, shape, src, window, strides, None, init, ge, combine)
            ts, tr = tensor(shape, et), tensor(rshape, et)
            attrs = f"window_dimensions = {_arr_attr(window)}, window_strides = {_arr_attr(strides)}"
            b = ProgramBuilder([ts, tr, t0])
            res = b.op(op, [(b.arg(0), ts), (b.arg(1), tr), (b.arg(2), t0)], [ts], attrs,
                       ge_region + ", " + _body_region(body, t0))[0]
            out.append(make_case(op, et, name, b.text([(res, ts)]),
                                 [make_array(v, et, shape), make_array(src, et, rshape), make_array([init], et, ())],
                                 [make_array(exp, et, shape)], [et], [rule_for(et, 0)], "index-arithmetic", "windows",
                                 "every window holds distinct values; " + note, ops + (body,)))
    return out


def select_and_scatter_cases(full, fast) -> List:
    op = "stablehlo.select_and_scatter"
    out = []
    for et in _types(op, 0, fast, ("signed", "unsigned", "float")):
        for name, shape, window, strides in (SAS_CONFIGS if full else SAS_CONFIGS[:1]):
            vals, npool = _distinct(et, _size(shape), 3)
            rshape, cells = window_positions(shape, window, strides, [(0, 0)] * len(shape),
                                             [1] * len(shape), [1] * len(shape))
            if any(len({vals[_flat(shape, s)] for s in c}) != len(c) for c in cells.values()):
                continue                   # a window with equal values: the selected one is not fixed
            src = _ints(et, _size(rshape), 1, span=3)
            init = 0 if kind(et) != "float" else 0.0
            # the spec's scatter step adds every selected source at its position in some order:
            # exact in every order when the absolute sum of all sources is small enough
            exp, ok = [], _order_free(et, src)
            for v in select_and_scatter_oracle(vals, shape, src, window, strides, None, init):
                if kind(et) in ("signed", "unsigned"):
                    v = wrap(v, bits(et), kind(et) == "signed")
                ok = ok and _exact_in(et, v)
                exp.append(v)
            if not ok:
                continue
            t0, ts, tr = tensor((), et), tensor(shape, et), tensor(rshape, et)
            select = (f"{{\n  ^bb0(%a: {t0}, %b: {t0}):\n    %s = \"stablehlo.compare\"(%a, %b) "
                      f"{{comparison_direction = #stablehlo<comparison_direction GE>}} : ({t0}, {t0}) -> tensor<i1>\n"
                      f"    \"stablehlo.return\"(%s) : (tensor<i1>) -> ()\n  }}")
            attrs = f"window_dimensions = {_arr_attr(window)}, window_strides = {_arr_attr(strides)}"
            b = ProgramBuilder([ts, tr, t0])
            res = b.op(op, [(b.arg(0), ts), (b.arg(1), tr), (b.arg(2), t0)], [ts], attrs,
                       select + ", " + _body_region("stablehlo.add", t0))[0]
            out.append(make_case(op, et, name, b.text([(res, ts)]),
                                 [make_array(vals, et, shape), make_array(src, et, rshape), make_array([init], et, ())],
                                 [make_array(exp, et, shape)], [et], [rule_for(et, 0)], "index-arithmetic", "windows",
                                 "every window holds distinct values (GE's choice between equal ones depends on the "
                                 "implementation-defined order); " + ORDER_NOTE,
                                 (op, "stablehlo.compare", "stablehlo.add")))
    return out


SCATTER_CONFIGS = [
    # name, operand shape, row indices (unique), body
    ("rows_add", (4, 3), [2, 0], "add"),
    ("rows_replace", (4, 3), [3, 1], "replace"),
    ("rows_add_out_of_bounds_skipped", (3, 2), [1, 5, -1], "add"),
    ("rows_none", (2, 2), [], "add"),
]


def scatter_cases(full, fast) -> List:
    """Row scatter: update_window_dims=[1], inserted_window_dims=[0],
    scatter_dims_to_operand_dims=[0], index_vector_dim=1. Indices are unique, so the
    implementation-defined order of the updates cannot change the result; an update whose
    window lies out of bounds is skipped (the spec's `otherwise, updated_results = results`)."""
    op = "stablehlo.scatter"
    out = []
    for et in _types(op, 0, fast):
        for name, shape, idx, body in (SCATTER_CONFIGS if full else SCATTER_CONFIGS[:2]):
            rows, cols = shape
            vals = _ints(et, _size(shape), 4)
            upd = _ints(et, len(idx) * cols, 2)
            res = list(vals)
            for u, r in enumerate(idx):
                if not 0 <= r < rows:
                    continue
                for c in range(cols):
                    new = upd[u * cols + c]
                    res[r * cols + c] = new if body == "replace" else _combine("add", et, res[r * cols + c], new)
            if not all(_exact_in(et, v) for v in res):
                continue
            t0, ts = tensor((), et), tensor(shape, et)
            ti, tu = tensor((len(idx), 1), "i32"), tensor((len(idx), cols), et)
            region = (_body_region("stablehlo.add", t0) if body == "add" else
                      f"{{\n  ^bb0(%a: {t0}, %b: {t0}):\n    \"stablehlo.return\"(%b) : ({t0}) -> ()\n  }}")
            attrs = ("scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], "
                     "inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, "
                     "indices_are_sorted = false, unique_indices = true")
            b = ProgramBuilder([ts, ti, tu])
            r0 = b.op(op, [(b.arg(0), ts), (b.arg(1), ti), (b.arg(2), tu)], [ts], attrs, region)[0]
            out.append(make_case(op, et, name, b.text([(r0, ts)]),
                                 [make_array(vals, et, shape), make_array(idx, "i32", (len(idx), 1)),
                                  make_array(upd, et, (len(idx), cols))],
                                 [make_array(res, et, shape)], [et], [rule_for(et, 0)], "index-arithmetic", "windows",
                                 "unique indices: the update order is implementation-defined, the result is not; "
                                 "out-of-bounds updates are skipped",
                                 (op,) + (("stablehlo.add",) if body == "add" else ())))
    return out


def all_windows(full, fast) -> List:
    return (reduce_window_cases(full, fast) + select_and_scatter_cases(full, fast)
            + select_and_scatter_other_cases(full, fast) + scatter_cases(full, fast))
