"""Verifiers of the windowed and mapping ops: reduce_window (window attributes, padding, inferred
result shape), select_and_scatter and map."""
from __future__ import annotations

from ..ir.types import TensorType
from .registry import verifier
from .shapes import (elem, elems_equal, ints, is_pred, promotable, ranked, reducer_body, region_args,
                     region_returns, shape_matches, shapes_compatible)


@verifier("stablehlo.reduce_window")
def reduce_window(op, check):
    n = len(op.operands) // 2
    ins, inits = [v.type for v in op.operands[:n]], [v.type for v in op.operands[n:]]
    check(n >= 1 and len(op.operands) % 2 == 0 and len(op.results) == n, "C1",
          "inputs, init_values and results must have the same count")
    check(all(shapes_compatible(ins[0], t) for t in ins), "C2", "all inputs must have the same shape")
    check(all(elems_equal(a, b) for a, b in zip(ins, inits)), "C3", "each input must have its init value's element type")
    a = ins[0]
    if not ranked(a):
        return
    R = a.rank
    wd = ints(op.attributes.get("window_dimensions"))
    check(len(wd) == R, "C4", f"window_dimensions must have {R} entries, has {len(wd)}")
    check(all(x > 0 for x in wd), "C5", f"window_dimensions {list(wd)} must be positive")
    out = {}
    for key, c1, c2 in (("window_strides", "C6", "C7"), ("base_dilations", "C8", "C9"), ("window_dilations", "C10", "C11")):
        v = op.attributes.get(key)
        vals = ints(v) if v is not None else ()
        vals = vals if len(vals) else (1,) * R     # absent or empty: all ones
        check(len(vals) == R, c1, f"{key} must have {R} entries, has {len(vals)}")
        check(all(x > 0 for x in vals), c2, f"{key} {list(vals)} must be positive")
        out[key] = vals
    p = op.attributes.get("padding")
    shp = tuple(getattr(getattr(p, "type", None), "shape", ())) if p is not None else ()
    if p is not None and shp not in ((0, 2), (0,)):      # absent or empty: no padding
        check(shp == (R, 2), "C12", f"padding must have shape [{R}, 2], has {list(shp)}")
        pv = ints(p)
        pads = [(pv[2 * i], pv[2 * i + 1]) for i in range(R)]
    else:
        pads = [(0, 0)] * R
    rets = reducer_body(check, op, op.regions[0], ins, inits, "C13", wd)
    check(all(shapes_compatible(op.results[0].type, r.type) for r in op.results), "C14", "all results must have the same shape")
    expect = []
    for i in range(R):
        s = a.shape[i]
        if s is None:
            expect.append(None)
            continue
        dil = (s - 1) * out["base_dilations"][i] + 1 if s > 0 else 0
        padded = dil + pads[i][0] + pads[i][1]
        win = (wd[i] - 1) * out["window_dilations"][i] + 1
        expect.append(0 if padded < win else (padded - win) // out["window_strides"][i] + 1)
    for r in op.results:
        check(shape_matches(r.type, expect), "C15", f"result type {r.type} does not match the inferred shape {expect}")
    if rets is not None:
        for r, t in zip(op.results, rets):
            check(elems_equal(r.type, t), "C16", f"result type {r.type} must have the body's element type ({t})")


@verifier("stablehlo.select_and_scatter")
def select_and_scatter(op, check):
    a, src, init = (v.type for v in op.operands)
    r = op.results[0].type
    check(elems_equal(a, src), "C1", f"operand and source must have the same element type (got {a}, {src})")
    check(elems_equal(a, init), "C3", f"init_value must have the operand's element type (got {init})")
    check(shapes_compatible(a, r), "C11", f"result must have the operand's shape (got {a}, {r})")
    if ranked(a):
        R = a.rank
        # an absent window_dimensions is an empty one (C4 then fails for a ranked operand)
        wd = ints(op.attributes.get("window_dimensions")) if op.attributes.get("window_dimensions") is not None else ()
        ws = ints(op.attributes.get("window_strides")) if op.attributes.get("window_strides") is not None else ()
        ws = ws if len(ws) else (1,) * R     # absent or empty: all ones
        check(len(wd) == R, "C4", f"window_dimensions must have {R} entries, has {len(wd)}")
        check(all(x > 0 for x in wd), "C5", f"window_dimensions {list(wd)} must be positive")
        check(len(ws) == R, "C6", f"window_strides must have {R} entries, has {len(ws)}")
        check(all(x > 0 for x in ws), "C7", f"window_strides {list(ws)} must be positive")
        p = op.attributes.get("padding")
        pads = [(0, 0)] * R
        shp = tuple(getattr(getattr(p, "type", None), "shape", ())) if p is not None else ()
        if p is not None and shp not in ((0,), (0, 2)):      # absent or empty: no padding
            check(shp == (R, 2), "C8", f"padding must have shape [{R}, 2], has {list(shp)}")
            v = ints(p)
            pads = [(v[2 * i], v[2 * i + 1]) for i in range(R)]
        if ranked(src):
            expect = []
            for s, w, st, (lo, hi) in zip(a.shape, wd, ws, pads):
                if s is None:
                    expect.append(None)
                    continue
                padded = s + lo + hi
                expect.append(0 if padded < w else (padded - w) // st + 1)
            check(shape_matches(src, expect), "C2", f"source shape {src} must be the window count {expect}")
    sel = op.regions[0] if op.regions else None
    if sel is not None and sel.blocks:
        args = region_args(sel)
        check(len(args) == 2 and all(ranked(t) and t.rank == 0 and elems_equal(t, a) for t in args), "C9",
              f"select must take two 0-d tensors of {elem(a)}")
        rets = region_returns(sel)
        if rets is not None:
            check(len(rets) == 1 and ranked(rets[0]) and rets[0].rank == 0 and is_pred(rets[0]), "C9",
                  "select must return a 0-d tensor of i1")
    if len(op.regions) > 1 and op.regions[1].blocks:
        # the scatter body folds source elements into init_value: the reduction-body rule with
        # one 0-d input of source's element type
        rets = reducer_body(check, op, op.regions[1], [TensorType((), elem(src))], [init], "C10")
        if rets:
            check(elems_equal(r, rets[0]), "C12", f"result element type must be the scatter body's ({rets[0]})")


@verifier("stablehlo.map")
def map_(op, check):
    r = op.results[0].type
    check(len(op.operands) >= 1, "C2", "expects at least one input")
    check(all(shapes_compatible(v.type, r) for v in op.operands), "C1", "all inputs must have the result's shape")
    dims = ints(op.attributes.get("dimensions"))
    if ranked(r):
        check(list(dims) == list(range(r.rank)), "C3", f"dimensions must be 0..{r.rank - 1} in order, got {list(dims)}")
    args = region_args(op.regions[0])
    check(len(args) == len(op.operands), "C4", f"computation must take {len(op.operands)} arguments, takes {len(args)}")
    for a, v in zip(args, op.operands):
        check(ranked(a) and a.rank == 0 and elems_equal(a, v.type), "C4",
              f"computation argument {a} must be a 0-d tensor of {elem(v.type)}")
    rets = region_returns(op.regions[0])
    if rets is not None:
        check(len(rets) == 1 and ranked(rets[0]) and rets[0].rank == 0 and elems_equal(rets[0], r), "C4",
              f"computation must return one 0-d tensor of {elem(r)}")
