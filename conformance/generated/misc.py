"""Generated cases of the remaining ops whose results follow from index arithmetic or plain
Python: legacy broadcast and dot, get_dimension_size, tuple/get_tuple_element,
optimization_barrier, map, if, case, while, sort, chlo.top_k, replica_id/partition_id (one
process)."""
from __future__ import annotations

import math
from typing import List

from .build import make_case, rule_for
from .formats import float_format
from .program import ProgramBuilder, single_op_program, tensor
from .structural import _indices, _flat, _size, _types, _values
from .values import kind, make_array


def _case(op, et, variant, program, ins, exp, out_ets, ops=(), note="", oracle="index-arithmetic"):
    return make_case(op, et, variant, program, ins, exp, out_ets, [rule_for(t, 0) for t in out_ets], oracle, "misc",
                     note, ops)


def _region(args, body_lines, ret, t):
    a = ", ".join(f"%{n}: {ty}" for n, ty in args)
    body = "\n".join(f"    {l}" for l in body_lines)
    return f"{{\n  ^bb0({a}):\n{body}\n    \"stablehlo.return\"({ret}) : ({t}) -> ()\n  }}"


def simple_cases(full, fast) -> List:
    out = []
    for et in _types("stablehlo.broadcast", 0, fast):
        s, sizes = (2, 3), (2,)
        vals = _values(et, 6, f"broadcast/{et}")
        r = sizes + s
        exp = [vals[_flat(s, idx[len(sizes):])] for idx in _indices(r)]
        prog = single_op_program("stablehlo.broadcast", [tensor(s, et)], [tensor(r, et)], "broadcast_sizes = array<i64: 2>")
        out.append(_case("stablehlo.broadcast", et, "prepend2", prog, [make_array(vals, et, s)], [make_array(exp, et, r)], [et]))
    for et in _types("stablehlo.get_dimension_size", 0, fast):
        s = (2, 0, 5)
        prog = single_op_program("stablehlo.get_dimension_size", [tensor(s, et)], [tensor((), "i32")], "dimension = 2 : i64")
        out.append(_case("stablehlo.get_dimension_size", et, "dim2", prog, [make_array([], et, s)], [make_array([5], "i32", ())], ["i32"]))
    for et in _types("stablehlo.optimization_barrier", 0, fast):
        vals = _values(et, 4, f"ob/{et}")
        prog = single_op_program("stablehlo.optimization_barrier", [tensor((4,), et)], [tensor((4,), et)])
        out.append(_case("stablehlo.optimization_barrier", et, "identity", prog, [make_array(vals, et, (4,))],
                         [make_array(vals, et, (4,))], [et]))
    for et in _types("stablehlo.tuple", 0, fast):
        a = _values(et, 3, f"tuple/{et}")
        b = _values(et, 5, f"tuple/{et}/b")[3:5]
        ta, tb = tensor((3,), et), tensor((2,), et)
        tt = f"tuple<{ta}, {tb}>"
        pb = ProgramBuilder([ta, tb])
        t = pb.op("stablehlo.tuple", [(pb.arg(0), ta), (pb.arg(1), tb)], [tt])[0]
        x = pb.op("stablehlo.get_tuple_element", [(t, tt)], [tb], "index = 1 : i32")[0]
        out.append(_case("stablehlo.tuple", et, "get1", pb.text([(x, tb)]), [make_array(a, et, (3,)), make_array(b, et, (2,))],
                         [make_array(b, et, (2,))], [et], ("stablehlo.tuple", "stablehlo.get_tuple_element")))
        out.append(_case("stablehlo.get_tuple_element", et, "index1", pb.text([(x, tb)]),
                         [make_array(a, et, (3,)), make_array(b, et, (2,))], [make_array(b, et, (2,))], [et],
                         ("stablehlo.tuple", "stablehlo.get_tuple_element")))
    for op in ("stablehlo.replica_id", "stablehlo.partition_id"):
        if fast is not None and "ui32" not in fast:
            continue
        pb = ProgramBuilder([])
        r = pb.op(op, [], [tensor((), "ui32")])[0]
        out.append(_case(op, "ui32", "one_process", pb.text([(r, tensor((), "ui32"))]), [], [make_array([0], "ui32", ())],
                         ["ui32"], note="a single process: id 0"))
    return out


def region_cases(full, fast) -> List:
    out = []
    # map with a maximum body
    for et in _types("stablehlo.map", 0, fast):
        if kind(et) not in ("signed", "unsigned", "bool", "float"):
            continue
        a = _values(et, 6, f"map/{et}")
        b = _values(et, 12, f"map/{et}/b")[6:]
        if kind(et) == "float":
            pairs = [(x, y) for x, y in zip(a, b) if not (math.isnan(x) or math.isnan(y)) and not (x == 0 and y == 0)]
            a, b = [p[0] for p in pairs], [p[1] for p in pairs]
        exp = [(x or y) if kind(et) == "bool" else max(x, y) for x, y in zip(a, b)]
        n = len(a)
        t0 = tensor((), et)
        region = _region([("x", t0), ("y", t0)], [f'%m = "stablehlo.maximum"(%x, %y) : ({t0}, {t0}) -> {t0}'], "%m", t0)
        prog = single_op_program("stablehlo.map", [tensor((n,), et)] * 2, [tensor((n,), et)], "dimensions = array<i64: 0>", region)
        out.append(_case("stablehlo.map", et, "maximum", prog, [make_array(a, et, (n,)), make_array(b, et, (n,))],
                         [make_array(exp, et, (n,))], [et], ("stablehlo.map", "stablehlo.maximum")))
    # map on complex with an add-then-multiply body (x + y) * y: parts are quarters, so every
    # step is exact in complex<f32>
    for et in _types("stablehlo.map", 0, fast):
        if kind(et) != "complex":
            continue
        a = _values(et, 6, f"map/{et}")
        b = [complex(0.5, -1), complex(-1.5, 0.25), complex(2, 0), complex(0, 1), complex(-0.75, -0.5), complex(1, 1)]
        exp = [(x + y) * y for x, y in zip(a, b)]
        n = len(a)
        t0 = tensor((), et)
        region = _region([("x", t0), ("y", t0)], [f'%s = "stablehlo.add"(%x, %y) : ({t0}, {t0}) -> {t0}',
                                                  f'%m = "stablehlo.multiply"(%s, %y) : ({t0}, {t0}) -> {t0}'], "%m", t0)
        prog = single_op_program("stablehlo.map", [tensor((n,), et)] * 2, [tensor((n,), et)], "dimensions = array<i64: 0>", region)
        out.append(_case("stablehlo.map", et, "add_multiply", prog, [make_array(a, et, (n,)), make_array(b, et, (n,))],
                         [make_array(exp, et, (n,))], [et], ("stablehlo.map", "stablehlo.add", "stablehlo.multiply"),
                         oracle="python-exact"))
    # if: the predicate picks one of two operands
    for et in _types("stablehlo.if", 1, fast) if False else _types("stablehlo.select", 1, fast):
        a = _values(et, 3, f"if/{et}")
        b = _values(et, 6, f"if/{et}/b")[3:]
        ta = tensor((3,), et)
        for p in ((True, False) if full else (False,)):
            pb = ProgramBuilder([tensor((), "i1"), ta, ta])
            r1 = f'{{\n    "stablehlo.return"(%arg1) : ({ta}) -> ()\n  }}'
            r2 = f'{{\n    "stablehlo.return"(%arg2) : ({ta}) -> ()\n  }}'
            r = pb.op("stablehlo.if", [(pb.arg(0), tensor((), "i1"))], [ta], "", f"{r1}, {r2}")[0]
            out.append(_case("stablehlo.if", et, f"pred_{str(p).lower()}", pb.text([(r, ta)]),
                             [make_array([p], "i1", ()), make_array(a, et, (3,)), make_array(b, et, (3,))],
                             [make_array(a if p else b, et, (3,))], [et]))
    # while: count to n, doubling an accumulator (integers wrap)
    for et in _types("stablehlo.while", 0, fast):
        if kind(et) not in ("signed", "unsigned"):
            continue
        from .oracles import wrap
        from .values import bits
        ti, ta = tensor((), "i32"), tensor((), et)
        n, start = 5, 3
        acc = start
        for _ in range(n):
            acc = wrap(acc * 2, bits(et), kind(et) == "signed")
        start_v = wrap(start, bits(et), kind(et) == "signed")
        cond = (f'{{\n  ^bb0(%i: {ti}, %a: {ta}):\n    %c = "stablehlo.compare"(%i, %arg1) '
                f'{{comparison_direction = #stablehlo<comparison_direction LT>}} : ({ti}, {ti}) -> tensor<i1>\n'
                f'    "stablehlo.return"(%c) : (tensor<i1>) -> ()\n  }}')
        body = (f'{{\n  ^bb0(%i: {ti}, %a: {ta}):\n    %one = "stablehlo.constant"() {{value = dense<1> : {ti}}} : () -> {ti}\n'
                f'    %j = "stablehlo.add"(%i, %one) : ({ti}, {ti}) -> {ti}\n'
                f'    %b = "stablehlo.add"(%a, %a) : ({ta}, {ta}) -> {ta}\n'
                f'    "stablehlo.return"(%j, %b) : ({ti}, {ta}) -> ()\n  }}')
        pb = ProgramBuilder([ti, ti, ta])
        res = pb.op("stablehlo.while", [(pb.arg(0), ti), (pb.arg(2), ta)], [ti, ta], "", f"{cond}, {body}")
        out.append(_case("stablehlo.while", et, "double5", pb.text([(res[0], ti), (res[1], ta)]),
                         [make_array([0], "i32", ()), make_array([n], "i32", ()), make_array([start_v], et, ())],
                         [make_array([n], "i32", ()), make_array([acc], et, ())], ["i32", et],
                         ("stablehlo.while", "stablehlo.compare", "stablehlo.add", "stablehlo.constant"), oracle="python-int"))
    # while carrying values of every element type: an i32 counter runs to n while the body swaps
    # two tensors of the type (pure data movement, so it is defined for every admitted type); an
    # odd n ends swapped, an even n in place
    for et in _types("stablehlo.while", 0, fast):
        ti, ta = tensor((), "i32"), tensor((3,), et)
        vals = _values(et, 6, f"while/{et}")
        a, b = vals[:3], vals[3:]
        cond = (f'{{\n  ^bb0(%i: {ti}, %a: {ta}, %b: {ta}):\n    %c = "stablehlo.compare"(%i, %arg1) '
                f'{{comparison_direction = #stablehlo<comparison_direction LT>}} : ({ti}, {ti}) -> tensor<i1>\n'
                f'    "stablehlo.return"(%c) : (tensor<i1>) -> ()\n  }}')
        body = (f'{{\n  ^bb0(%i: {ti}, %a: {ta}, %b: {ta}):\n    %one = "stablehlo.constant"() {{value = dense<1> : {ti}}} : () -> {ti}\n'
                f'    %j = "stablehlo.add"(%i, %one) : ({ti}, {ti}) -> {ti}\n'
                f'    "stablehlo.return"(%j, %b, %a) : ({ti}, {ta}, {ta}) -> ()\n  }}')
        for n in ((5, 4) if full else (5,)):
            pb = ProgramBuilder([ti, ti, ta, ta])
            res = pb.op("stablehlo.while", [(pb.arg(0), ti), (pb.arg(2), ta), (pb.arg(3), ta)], [ti, ta, ta], "",
                        f"{cond}, {body}")
            ea, eb = (b, a) if n % 2 else (a, b)
            out.append(_case("stablehlo.while", et, f"swap{n}", pb.text([(res[0], ti), (res[1], ta), (res[2], ta)]),
                             [make_array([0], "i32", ()), make_array([n], "i32", ()), make_array(a, et, (3,)),
                              make_array(b, et, (3,))],
                             [make_array([n], "i32", ()), make_array(ea, et, (3,)), make_array(eb, et, (3,))],
                             ["i32", et, et], ("stablehlo.while", "stablehlo.compare", "stablehlo.add",
                                               "stablehlo.constant")))
    return out


def sort_cases(full, fast) -> List:
    out = []
    for et in _types("stablehlo.sort", 0, fast):
        if kind(et) not in ("signed", "unsigned", "float"):
            continue
        vals = _values(et, 12, f"sort/{et}")
        if kind(et) == "float":
            vals = [v for v in vals if not math.isnan(v)]
        n = len(vals)
        order = sorted(range(n), key=lambda i: vals[i])          # stable; -0 and +0 compare equal
        t0 = tensor((), et)
        region = (f'{{\n  ^bb0(%a: {t0}, %b: {t0}, %c: tensor<i32>, %d: tensor<i32>):\n'
                  f'    %lt = "stablehlo.compare"(%a, %b) {{comparison_direction = #stablehlo<comparison_direction LT>}} : ({t0}, {t0}) -> tensor<i1>\n'
                  f'    "stablehlo.return"(%lt) : (tensor<i1>) -> ()\n  }}')
        tv, ti = tensor((n,), et), tensor((n,), "i32")
        pb = ProgramBuilder([tv, ti])
        res = pb.op("stablehlo.sort", [(pb.arg(0), tv), (pb.arg(1), ti)], [tv, ti],
                    "dimension = 0 : i64, is_stable = true", region)
        out.append(_case("stablehlo.sort", et, "stable_lt_with_iota", pb.text([(res[0], tv), (res[1], ti)]),
                         [make_array(vals, et, (n,)), make_array(list(range(n)), "i32", (n,))],
                         [make_array([vals[i] for i in order], et, (n,)), make_array(order, "i32", (n,))], [et, "i32"],
                         ("stablehlo.sort", "stablehlo.compare"), note="NaN left out: where LT puts it is not fixed"))
    for et in _types("stablehlo.sort", 0, fast):
        if kind(et) not in ("bool", "complex"):
            continue
        t0 = tensor((), et)
        if kind(et) == "bool":
            # booleans compare as unsigned (false < true); the stable sort keeps equal ones in order
            vals = [True, False, True, True, False, False, True, False, True]
            key = [int(v) for v in vals]
            region = (f'{{\n  ^bb0(%a: {t0}, %b: {t0}, %c: tensor<i32>, %d: tensor<i32>):\n'
                      f'    %lt = "stablehlo.compare"(%a, %b) {{comparison_direction = #stablehlo<comparison_direction LT>, '
                      f'compare_type = #stablehlo<comparison_type UNSIGNED>}} : ({t0}, {t0}) -> tensor<i1>\n'
                      f'    "stablehlo.return"(%lt) : (tensor<i1>) -> ()\n  }}')
            ops = ("stablehlo.sort", "stablehlo.compare")
            variant = "stable_lt_with_iota"
        else:
            # a comparator written with real / imag and float compares: (re, im) lexicographic,
            # equal values kept in order by the stable sort
            vals = [complex(r, i) for r, i in ((1, 2), (-0.5, 3), (1, -1), (0.25, 0), (-0.5, -2), (1, 2), (2, 0.5),
                                                (0.25, 0), (-3, 1), (1, -1.5))]
            key = [(v.real, v.imag) for v in vals]
            c = tensor((), "f32" if et == "complex<f32>" else "f64")
            region = (f'{{\n  ^bb0(%a: {t0}, %b: {t0}, %c: tensor<i32>, %d: tensor<i32>):\n'
                      f'    %ra = "stablehlo.real"(%a) : ({t0}) -> {c}\n'
                      f'    %rb = "stablehlo.real"(%b) : ({t0}) -> {c}\n'
                      f'    %ia = "stablehlo.imag"(%a) : ({t0}) -> {c}\n'
                      f'    %ib = "stablehlo.imag"(%b) : ({t0}) -> {c}\n'
                      f'    %lr = "stablehlo.compare"(%ra, %rb) {{comparison_direction = #stablehlo<comparison_direction LT>}} : ({c}, {c}) -> tensor<i1>\n'
                      f'    %er = "stablehlo.compare"(%ra, %rb) {{comparison_direction = #stablehlo<comparison_direction EQ>}} : ({c}, {c}) -> tensor<i1>\n'
                      f'    %li = "stablehlo.compare"(%ia, %ib) {{comparison_direction = #stablehlo<comparison_direction LT>}} : ({c}, {c}) -> tensor<i1>\n'
                      f'    %t = "stablehlo.and"(%er, %li) : (tensor<i1>, tensor<i1>) -> tensor<i1>\n'
                      f'    %lt = "stablehlo.or"(%lr, %t) : (tensor<i1>, tensor<i1>) -> tensor<i1>\n'
                      f'    "stablehlo.return"(%lt) : (tensor<i1>) -> ()\n  }}')
            ops = ("stablehlo.sort", "stablehlo.real", "stablehlo.imag", "stablehlo.compare", "stablehlo.and",
                   "stablehlo.or")
            variant = "stable_lexicographic_with_iota"
        n = len(vals)
        order = sorted(range(n), key=lambda i: key[i])          # Python's sort is stable
        tv, ti = tensor((n,), et), tensor((n,), "i32")
        pb = ProgramBuilder([tv, ti])
        res = pb.op("stablehlo.sort", [(pb.arg(0), tv), (pb.arg(1), ti)], [tv, ti],
                    "dimension = 0 : i64, is_stable = true", region)
        out.append(_case("stablehlo.sort", et, variant, pb.text([(res[0], tv), (res[1], ti)]),
                         [make_array(vals, et, (n,)), make_array(list(range(n)), "i32", (n,))],
                         [make_array([vals[i] for i in order], et, (n,)), make_array(order, "i32", (n,))], [et, "i32"],
                         ops, note="equal keys: the stable sort keeps them in operand order"))
    return out


def case_cases(full, fast) -> List:
    """case: the index picks a branch; an index out of range picks the last branch (spec)."""
    out = []
    for et in _types("stablehlo.select", 1, fast):
        vals = [_values(et, 9, f"case/{et}")[3 * i:3 * i + 3] for i in range(3)]
        ta, ti = tensor((3,), et), tensor((), "i32")
        for idx in ((1, 5, -1, 0, 2) if full else (1, 5)):
            pb = ProgramBuilder([ti, ta, ta, ta])
            branches = ", ".join(f'{{\n    "stablehlo.return"(%arg{k + 1}) : ({ta}) -> ()\n  }}' for k in range(3))
            r = pb.op("stablehlo.case", [(pb.arg(0), ti)], [ta], "", branches)[0]
            pick = idx if 0 <= idx < 3 else 2
            variant = f"index{idx}" if idx >= 0 else f"index_minus{-idx}"
            out.append(_case("stablehlo.case", et, variant, pb.text([(r, ta)]),
                             [make_array([idx], "i32", ())] + [make_array(v, et, (3,)) for v in vals],
                             [make_array(vals[pick], et, (3,))], [et],
                             note="an index outside [0, branches) runs the last branch, as the spec says"))
    return out


def top_k_cases(full, fast) -> List:
    """chlo.top_k: the k largest along the last dimension, in descending order, with their
    indices; values pairwise distinct per row and no NaN (how equal values and NaN order is
    left to the comparator's definition)."""
    out = []
    op = "chlo.top_k"
    from stablehlo_ref import spec
    from .values import admitted
    for et in admitted(spec.op(op).operands[0].type):
        if fast is not None and et not in fast:
            continue
        if kind(et) in ("bool", "complex"):
            out += _top_k_bool_complex(op, et, full)
            continue
        if kind(et) not in ("signed", "unsigned", "float"):
            continue
        for shape, k in ([((2, 5), 3)] + ([((6,), 6), ((3, 4), 1)] if full else [])):
            rows = 1 if len(shape) == 1 else shape[0]
            n = shape[-1]
            pool = [v for v in _values(et, 64, f"topk/{et}") if not (isinstance(v, float) and math.isnan(v))]
            distinct = []
            for v in pool:
                if all(v != d for d in distinct):          # -0 == +0: one of them only
                    distinct.append(v)
            if len(distinct) < n:
                continue
            vals, exp_v, exp_i = [], [], []
            for r in range(rows):
                row = [distinct[(r * 3 + j * 5) % len(distinct)] for j in range(n)]
                if len(set(row)) != n:
                    row = distinct[r:r + n] if r + n <= len(distinct) else distinct[:n]
                order = sorted(range(n), key=lambda j: row[j], reverse=True)[:k]
                vals += row
                exp_v += [row[j] for j in order]
                exp_i += order
            rshape = shape[:-1] + (k,)
            pb = ProgramBuilder([tensor(shape, et)])
            res = pb.op(op, [(pb.arg(0), tensor(shape, et))], [tensor(rshape, et), tensor(rshape, "i32")], f"k = {k} : i64")
            out.append(_case(op, et, f"{'x'.join(map(str, shape))}_k{k}",
                             pb.text([(res[0], tensor(rshape, et)), (res[1], tensor(rshape, "i32"))]),
                             [make_array(vals, et, shape)], [make_array(exp_v, et, rshape), make_array(exp_i, "i32", rshape)],
                             [et, "i32"], note="distinct values, no NaN: the order of equal values is not at stake"))
    return out


def _top_k_bool_complex(op, et, full) -> List:
    """chlo.top_k on i1 and complex, as the CHLO legalization defines it: a stable sort with a
    GT comparator (booleans: true > false; complex: the spec's lexicographic (real, imag)
    compare), equal values in index order (is_stable defaults to true)."""
    out = []
    if kind(et) == "bool":
        rows = [[False, True, False, True, True], [True, False, False, False, True]]
        key = lambda v: (int(v),)                # noqa: E731
    else:
        rows = [[complex(1, 2), complex(-0.5, 3), complex(1, -1), complex(1, 2), complex(2, -0.25)],
                [complex(0.25, 0), complex(0.25, 0.5), complex(-3, 1), complex(0.25, -0.5), complex(0.25, 0)]]
        key = lambda v: (v.real, v.imag)          # noqa: E731
    for k in ((3, 5) if full else (3,)):
        shape, rshape = (2, 5), (2, k)
        exp_v, exp_i = [], []
        for row in rows:
            # descending by value, ties by ascending index
            order = sorted(range(5), key=lambda j: (tuple(-x for x in key(row[j])), j))[:k]
            exp_v += [row[j] for j in order]
            exp_i += order
        pb = ProgramBuilder([tensor(shape, et)])
        res = pb.op(op, [(pb.arg(0), tensor(shape, et))], [tensor(rshape, et), tensor(rshape, "i32")], f"k = {k} : i64")
        out.append(_case(op, et, f"2x5_k{k}_ties", pb.text([(res[0], tensor(rshape, et)), (res[1], tensor(rshape, "i32"))]),
                         [make_array([v for r in rows for v in r], et, shape)],
                         [make_array(exp_v, et, rshape), make_array(exp_i, "i32", rshape)], [et, "i32"],
                         note="equal values in index order (stable, the default); complex: lexicographic (real, imag), "
                              "the spec's compare GT"))
    return out


def all_misc(full, fast) -> List:
    return (simple_cases(full, fast) + region_cases(full, fast) + sort_cases(full, fast) + case_cases(full, fast)
            + top_k_cases(full, fast) + constant_cases(full, fast) + chlo_broadcast_cases(full, fast))


def constant_cases(full, fast) -> List:
    """constant: a program that returns a dense constant; the expected value is the constant
    itself. Float and complex values (NaN, +-inf, -0, subnormals included) are written as
    MLIR's hexadecimal dense form of their little-endian storage bytes, integers in decimal,
    booleans as true/false."""
    import numpy as np
    out = []
    for et in _all_value_types(fast):
        k = kind(et)
        if k == "float":
            from .values import float_specials
            vals = float_specials(float_format(et))       # NaN, +-inf, -0, subnormals, extremes
        else:
            vals = _values(et, 6, f"constant/{et}")
        n = len(vals)
        arr = make_array(vals, et, (n,))
        if k == "bool":
            lit = "[" + ", ".join("true" if v else "false" for v in vals) + "]"
        elif k in ("signed", "unsigned"):
            lit = "[" + ", ".join(str(int(v)) for v in vals) + "]"
        elif arr.dtype.itemsize * 8 != _storage_bits(et):
            # sub-byte floats: no byte-per-element hex form to rely on; their values (every
            # one finite: the f4/f6 formats have no inf or NaN) written as exact decimals
            if any(not math.isfinite(v) for v in vals):
                continue
            lit = "[" + ", ".join(repr(float(v)) for v in vals) + "]"
        else:
            data = np.ascontiguousarray(arr).tobytes()
            lit = '"0x' + data.hex().upper() + '"'
        t = tensor((n,), et)
        pb = ProgramBuilder([])
        r = pb.op("stablehlo.constant", [], [t], f"value = dense<{lit}> : {t}")[0]
        out.append(_case("stablehlo.constant", et, "values", pb.text([(r, t)]), [], [arr], [et],
                         note="floats written as their storage bytes (hexadecimal dense form); sub-byte floats as "
                              "exact decimals"))
    return out


def _storage_bits(et):
    from .values import bits
    return bits(et)


def _all_value_types(fast):
    from .values import all_element_types
    return [t for t in all_element_types() if kind(t) in ("bool", "signed", "unsigned", "float", "complex")
            and (fast is None or t in fast)]


def chlo_broadcast_cases(full, fast) -> List:
    """chlo.broadcast_select / broadcast_compare / broadcast_complex: numpy-style broadcasting
    of size-1 dimensions (3x1 with 1x4 -> 3x4; the select predicate 3x1), by index arithmetic."""
    from stablehlo_ref import spec
    from .values import admitted
    out = []
    sa, sb, sr = (3, 1), (1, 4), (3, 4)

    def at(vals, s, i, j):
        return vals[(i if s[0] != 1 else 0) * s[1] + (j if s[1] != 1 else 0)]

    for et in _types("stablehlo.select", 1, fast):
        t = _values(et, 12, f"bselect/{et}")
        f = _values(et, 16, f"bselect/{et}/f")[12:16]
        pred = [True, False, True]
        exp = [at(t, sr, i, j) if at(pred, sa, i, j) else at(f, sb, i, j) for i in range(3) for j in range(4)]
        prog = single_op_program("chlo.broadcast_select", [tensor(sa, "i1"), tensor(sr, et), tensor(sb, et)],
                                 [tensor(sr, et)])
        out.append(_case("chlo.broadcast_select", et, "pred3x1_true3x4_false1x4", prog,
                         [make_array(pred, "i1", sa), make_array(t, et, sr), make_array(f, et, sb)],
                         [make_array(exp, et, sr)], [et], note="numpy-style broadcasting of size-1 dimensions"))
    for et in admitted(spec.op("chlo.broadcast_compare").operands[0].type):
        k = kind(et)
        if k not in ("bool", "signed", "unsigned", "float", "complex") or (fast is not None and et not in fast):
            continue
        a = [v for v in _values(et, 8, f"bcompare/{et}") if not (isinstance(v, float) and math.isnan(v))][:3]
        b = [v for v in _values(et, 16, f"bcompare/{et}/b")[8:] if not (isinstance(v, float) and math.isnan(v))][:4]
        if len(a) < 3 or len(b) < 4:
            continue
        for d in (("LT", "EQ", "NE") if full else ("LT",)):
            if k in ("complex", "bool") and d == "LT":
                d = "NE"                           # complex: EQ/NE only; i1 order left to the other cases
            fn = {"LT": lambda x, y: x < y, "EQ": lambda x, y: x == y, "NE": lambda x, y: x != y}[d]
            exp = [fn(at(a, sa, i, j), at(b, sb, i, j)) for i in range(3) for j in range(4)]
            prog = single_op_program("chlo.broadcast_compare", [tensor(sa, et), tensor(sb, et)], [tensor(sr, "i1")],
                                     f"comparison_direction = #chlo<comparison_direction {d}>")
            variant = f"{d}_size1_both"
            if any(c.id.endswith(f"/{et}/{variant}") for c in out):
                continue
            out.append(_case("chlo.broadcast_compare", et, variant, prog,
                             [make_array(a, et, sa), make_array(b, et, sb)], [make_array(exp, "i1", sr)], ["i1"],
                             note="no NaN operands; -0 == +0"))
    for et in admitted(spec.op("chlo.broadcast_complex").operands[0].type):
        if et not in ("f32", "f64") or (fast is not None and et not in fast):
            continue
        ct = f"complex<{et}>"
        a = _values(et, 3, f"bcomplex/{et}")
        b = _values(et, 7, f"bcomplex/{et}/b")[3:7]
        exp = [complex(at(a, sa, i, j), at(b, sb, i, j)) for i in range(3) for j in range(4)]
        prog = single_op_program("chlo.broadcast_complex", [tensor(sa, et), tensor(sb, et)], [tensor(sr, ct)])
        out.append(_case("chlo.broadcast_complex", et, "size1_both", prog,
                         [make_array(a, et, sa), make_array(b, et, sb)], [make_array(exp, ct, sr)], [ct],
                         note="real part from lhs, imaginary part from rhs"))
    return out
