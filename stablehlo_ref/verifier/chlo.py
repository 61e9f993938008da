"""Verifiers of CHLO ops that need more than the spec's shared-type traits: the implicitly
broadcasting binary ops (numpy-style, right-aligned, or mapped by `broadcast_dimensions`),
broadcast_select, constant, constant_like, top_k, scan and ragged_dot. The CHLO spec entries carry
no constraint ids, so these diagnostics are unlabelled."""
from __future__ import annotations

from ..ir.attributes import StructAttr
from ..ir.types import ElementType, TensorType
from .registry import verifier
from .shapes import (dim_ok, elem, elems_equal, int_value, ints, is_pred, is_tensor, ranked, region_args,
                     region_returns, shape_matches, shapes_compatible)


def broadcast_shape(types, bdims=None):
    """The broadcast result shape of ranked tensor types (None entries are dynamic), or None when
    the shapes cannot broadcast; `bdims` maps the lower-rank of two operands into the higher."""
    if not all(ranked(t) for t in types):
        return ()
    rank = max(t.rank for t in types)
    lo, hi = sorted(types, key=lambda t: t.rank)[::len(types) - 1] if len(types) == 2 else (None, None)
    if bdims is not None and lo is not None and lo.rank != hi.rank:
        if len(bdims) != lo.rank or not all(0 <= d < rank for d in bdims):
            return None
        aligned = [[1] * rank, list(hi.shape)]
        for i, d in enumerate(bdims):
            aligned[0][d] = lo.shape[i]
    else:
        aligned = [[1] * (rank - t.rank) + list(t.shape) for t in types]
    out = []
    for sizes in zip(*aligned):
        static = {s for s in sizes if s is not None and s != 1}
        if len(static) > 1:
            return None
        if static:
            out.append(static.pop())
        elif any(s is None for s in sizes):
            out.append(None)
        else:
            out.append(1)
    return tuple(out)


def _check_broadcast(op, check, types, result):
    bd = op.attributes.get("broadcast_dimensions")
    shape = broadcast_shape(types, ints(bd) if bd is not None else None)
    check(shape is not None, "", f"operand shapes are not broadcast compatible ({', '.join(map(str, types))})")
    if shape and ranked(result):
        check(result.rank == len(shape) and all(dim_ok(a, b) or b == 1 and a is None for a, b in zip(result.shape, shape)),
              "", f"result type {result} does not match the broadcast shape {list(shape)}")


@verifier("chlo.broadcast_and", "chlo.broadcast_or", "chlo.broadcast_xor")
def broadcast_logical(op, check):
    a, b, r = op.operands[0].type, op.operands[1].type, op.results[0].type
    check(elems_equal(a, b), "", f"mismatched operand types ({a}, {b})")
    check(elems_equal(a, r), "", f"result element type must be the operands' ({r})")
    _check_broadcast(op, check, [a, b], r)


@verifier("chlo.broadcast_compare")
def broadcast_compare(op, check):
    a, b, r = op.operands[0].type, op.operands[1].type, op.results[0].type
    check(elems_equal(a, b, ignore_quant=True), "", f"mismatched operand types ({a}, {b})")
    check(is_pred(r), "", f"result must be a tensor of i1 (got {r})")
    _check_broadcast(op, check, [a, b], r)


@verifier("chlo.broadcast_complex")
def broadcast_complex(op, check):
    a, b, r = op.operands[0].type, op.operands[1].type, op.results[0].type
    check(elems_equal(a, b), "", f"mismatched operand types ({a}, {b})")
    ea, er = elem(a), elem(r)
    check(isinstance(er, ElementType) and er.is_complex and er.bits == 2 * ea.bits, "",
          f"result element type must be complex of {ea} (got {r})")
    _check_broadcast(op, check, [a, b], r)


@verifier("chlo.broadcast_select")
def broadcast_select(op, check):
    p, t, f = (v.type for v in op.operands)
    r = op.results[0].type
    check(is_pred(p), "", f"pred must be a tensor of i1 (got {p})")
    check(elems_equal(t, f), "", f"mismatched operand types ({t}, {f})")
    check(elems_equal(t, r), "", f"result element type must be the branches' ({r})")
    _check_broadcast(op, check, [p, t, f], r)


@verifier("chlo.constant")
def chlo_constant(op, check):
    v, r = op.attributes.get("value"), op.results[0].type
    vt = getattr(v, "type", None)
    if isinstance(vt, TensorType) and isinstance(r, TensorType):
        check(vt == r, "", f"the type of value ({vt}) must be the result type ({r})")


@verifier("chlo.constant_like")
def constant_like(op, check):
    a, r = op.operands[0].type, op.results[0].type
    check(shapes_compatible(a, r), "", f"result must have the operand's shape (got {a}, {r})")
    v = op.attributes.get("value")
    vt = getattr(v, "type", None)
    vt = getattr(vt, "element_type", vt)
    if isinstance(vt, ElementType) and is_tensor(r):
        check(vt == elem(r), "", f"value's type ({vt}) doesn't match element return type ({elem(r)})")


@verifier("chlo.top_k")
def top_k(op, check):
    a = op.operands[0].type
    k = int_value(op.attributes.get("k"), 0)
    check(len(op.results) == 2, "", f"expects 2 results (values, indices), got {len(op.results)}")
    vals, idx = op.results[0].type, op.results[1].type
    if not ranked(a):
        return
    check(a.rank >= 1, "", f"operand's rank must be at least 1, got {a}")
    check(k >= 0, "", f"k must be non-negative, got {k}")
    last = a.shape[-1]
    check(last is None or k <= last, "", f"operand's last dimension ({last}) must be at least k ({k})")
    expect = list(a.shape[:-1]) + [k]
    check(elems_equal(vals, a), "", f"values must have the operand's element type (got {vals})")
    for t in (vals, idx):
        check(not ranked(t) or (t.rank == len(expect) and all(dim_ok(x, y) for x, y in zip(t.shape, expect))), "",
              f"result {t} does not match the inferred shape {expect}")
    e = elem(idx)
    check(isinstance(e, ElementType) and e.name == "i32", "", f"indices must be a tensor of i32, got {idx}")


@verifier("chlo.scan")
def scan(op, check):
    """Inputs scanned along `dimension` with carries (inits): one scan size (scan_dim_size or the
    inputs' static sizes), body arguments the input slices then the carries, and results inferred
    from the body's terminator (outputs get the scan dimension back, carries as they are)."""
    seg = op.attributes.get("operandSegmentSizes")
    n_in, n_init = (ints(seg) + (0, 0))[:2] if seg is not None else (len(op.operands), 0)
    ins, inits = op.operands[:n_in], op.operands[n_in:n_in + n_init]
    check(n_in + len(op.results) - n_init > 0 or n_in > 0, "", "at least one of inputs or outputs must be present")
    d = int_value(op.attributes.get("dimension"), 0)
    size = int_value(op.attributes.get("scan_dim_size"))
    for i, v in enumerate(ins):
        t = v.type
        check(ranked(t), "", f"operand {i} is not ranked")
        check(0 <= d < t.rank, "", f"scan dimension of operand {i} is out of bounds")
        if t.shape[d] is None:
            continue
        check(size is None or size == t.shape[d], "", f"invalid scan dimension size of operand {i}")
        size = t.shape[d]
    region = op.regions[0] if op.regions else None
    args = region_args(region) if region is not None else []
    check(len(args) == n_in + n_init, "", f"expects {n_in + n_init} arguments in the body, but got {len(args)}")
    for i, v in enumerate(ins):
        t = v.type
        elem_t = TensorType(t.shape[:d] + t.shape[d + 1:], t.element_type)
        check(not ranked(args[i]) or (shapes_compatible(elem_t, args[i]) and elems_equal(elem_t, args[i])), "",
              f"operand and body argument {i} are incompatible")
    for j, v in enumerate(inits):
        a = args[n_in + j]
        check(shapes_compatible(v.type, a) and elems_equal(v.type, a), "",
              f"operand and body argument {n_in + j} are incompatible")
    rets = region_returns(region) if region is not None else None
    if rets is None:
        return
    check(len(rets) >= n_init, "", f"ScanOp body must return at least {n_init} values (carries)")
    n_out = len(rets) - n_init
    check(len(op.results) == len(rets), "", f"expects {len(rets)} results (the body's), got {len(op.results)}")
    for k, (t, r) in enumerate(zip(rets, op.results)):
        check(ranked(t), "", f"terminator operand {k} is not ranked")
        shape = list(t.shape)
        if k < n_out:
            shape.insert(d, size)
        check(not ranked(r.type) or (shape_matches(r.type, shape) and elems_equal(t, r.type)), "",
              f"result #{k} ({r.type}) is incompatible with the inferred type of shape {shape}")


@verifier("chlo.ragged_dot")
def ragged_dot(op, check):
    """Three modes by the kind of the lhs ragged dimension (non-contracting, contracting, batch):
    the dot_general rules on the batching/contracting dimensions, exactly one lhs ragged
    dimension, group_sizes shaped [batch..., prefix..., g], rhs group dimensions distinct from the
    batching and contracting ones (one in the non-contracting mode, of size g; none otherwise),
    and the result shape inferred from all of it."""
    lhs, rhs, gs = (v.type for v in op.operands)
    res = op.results[0].type
    dn = op.attributes.get("ragged_dot_dimension_numbers")
    if not isinstance(dn, StructAttr) or not (ranked(lhs) and ranked(rhs) and ranked(gs)):
        return
    g = lambda k: tuple(dn.get(k, ()) or ())
    lb, rb, lc, rc = (g("lhs_batching_dimensions"), g("rhs_batching_dimensions"),
                      g("lhs_contracting_dimensions"), g("rhs_contracting_dimensions"))
    lr, rg = g("lhs_ragged_dimensions"), g("rhs_group_dimensions")
    pc = op.attributes.get("precision_config")
    check(pc is None or len(getattr(pc, "elements", ()) or ()) in (0, 2), "",
          "expects precision config to be empty or have <= 2 elements")
    check(len(lb) == len(rb), "", "lhs and rhs should have the same number of batching dimensions")
    check(len(lc) == len(rc), "", "lhs and rhs should have the same number of contracting dimensions")
    for name, dims, t in (("lhs_batching_dimensions", lb, lhs), ("lhs_contracting_dimensions", lc, lhs),
                          ("rhs_batching_dimensions", rb, rhs), ("rhs_contracting_dimensions", rc, rhs)):
        check(len(set(dims)) == len(dims), "", f"has duplicated dimension from {name}")
        check(all(0 <= x < t.rank for x in dims), "", f"{name} value out of range for rank {t.rank}")
    for x in set(lb) & set(lc):
        check(False, "", f"has duplicated dimension from lhs_batching_dimensions and lhs_contracting_dimensions: {x}")
    for x in set(rb) & set(rc):
        check(False, "", f"has duplicated dimension from rhs_batching_dimensions and rhs_contracting_dimensions: {x}")
    for a, b in zip(lb, rb):
        check(dim_ok(lhs.shape[a], rhs.shape[b]), "", "batching dimension sizes must match for lhs/rhs")
    for a, b in zip(lc, rc):
        check(dim_ok(lhs.shape[a], rhs.shape[b]), "", "contracting dimension sizes must match for lhs/rhs")
    check(len(lr) == 1, "", "There must be exactly one ragged dimension in the lhs.")
    r = lr[0]
    check(0 <= r < lhs.rank, "", f"lhs_ragged_dim {r} out of range for lhs_rank {lhs.rank}")
    if r in lb:
        mode, prefix = "batch", list(lb[:lb.index(r)])
    elif r in lc:
        mode, prefix = "contracting", list(lb) + list(lc[:lc.index(r)])
    else:
        mode, prefix = "non-contracting", list(lb) + [i for i in range(r) if i not in lb and i not in lc]
    want = [lhs.shape[d] for d in prefix]
    if gs.rank != 1:
        check(gs.rank == len(want) + 1, "", f"expected group_sizes to have rank {len(want) + 1}, got {gs.rank}")
        fmt = lambda xs: ", ".join("?" if x is None else str(x) for x in xs)
        check(list(gs.shape[:-1]) == want, "",
              f"group_sizes is expected to have shape [{fmt(want + [gs.shape[-1]])}], got [{fmt(gs.shape)}]")
    groups = gs.shape[-1] if gs.rank else None
    for x in rg:
        check(0 <= x < rhs.rank, "", f"rhs_group_dim {x} out of range for rhs_rank {rhs.rank}")
    for other, name in ((rb, "rhs_batching_dimensions"), (rc, "rhs_contracting_dimensions")):
        for x in rg:
            check(x not in other, "", f"has duplicated dimension from rhs_group_dimensions and {name}: {x}")
    if mode in ("batch", "contracting"):
        check(not rg, "", "There must be zero group dimensions in the rhs when the ragged dimension is batch or contracting.")
    else:
        check(len(rg) == 1, "", "There must be exactly one group dimension in the rhs when the lhs ragged dimension "
              "is non-contracting.")
        check(dim_ok(groups, rhs.shape[rg[0]]), "",
              f"rhs group dimension is expected to have size={groups}, got {rhs.shape[rg[0]]}")
    expect = ([groups] if mode == "contracting" else []) + [lhs.shape[d] for d in lb]
    expect += [lhs.shape[i] for i in range(lhs.rank) if i not in lb and i not in lc]
    expect += [rhs.shape[i] for i in range(rhs.rank) if i not in rb and i not in rc and i not in rg]
    if ranked(res):
        check(res.rank == len(expect) and all(dim_ok(a, b) for a, b in zip(res.shape, expect)), "",
              f"inferred shape '{expect}' is incompatible with return type of operation {res}")
