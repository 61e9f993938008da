"""Verifiers of the indexing ops: gather, scatter, dynamic_gather and torch_index_select."""
from __future__ import annotations

from ..ir.attributes import StructAttr
from ..ir.types import TensorType
from .registry import verifier
from .shapes import (const_ints, dim_ok, elem, elems_equal, int_value, ints, ranked, reducer_body, shape_matches,
                     shapes_compatible, sorted_distinct)


@verifier("stablehlo.gather")
def gather(op, check):
    a, idx, r = op.operands[0].type, op.operands[1].type, op.results[0].type
    dn = op.attributes.get("dimension_numbers")
    if not isinstance(dn, StructAttr):
        return
    g = lambda k: tuple(dn.get(k, ()) or ())
    off, col, obd, sibd, sim = (g("offset_dims"), g("collapsed_slice_dims"), g("operand_batching_dims"),
                                g("start_indices_batching_dims"), g("start_index_map"))
    ivd = int(dn.get("index_vector_dim", 0) or 0)
    ss = ints(op.attributes.get("slice_sizes"))
    check(elems_equal(a, r, True), "C23", f"operand and result must have the same element type (got {a}, {r})")
    if ranked(a):
        check(a.rank == len(off) + len(col) + len(obd), "C1",
              f"operand rank {a.rank} must equal the number of offset_dims, collapsed_slice_dims and operand_batching_dims ({len(off) + len(col) + len(obd)})")
    if ranked(idx):
        check(0 <= ivd <= idx.rank, "C2", f"index_vector_dim {ivd} is out of range for {idx}")
        n = 1 if ivd == idx.rank else idx.shape[ivd]
        check(n is None or len(sim) == n, "C3", f"start_index_map has {len(sim)} entries but the index vector has {n}")
    check(sorted_distinct(off), "C4", f"offset_dims {list(off)} must be sorted and distinct")
    check(all(d >= 0 for d in off) and (not ranked(r) or all(d < r.rank for d in off)), "C5",
          f"offset_dims {list(off)} out of range for {r}")
    check(len(set(col + obd)) == len(col + obd), "C6", "collapsed_slice_dims and operand_batching_dims must be distinct")
    check(list(col) == sorted(col), "C7", f"collapsed_slice_dims {list(col)} must be sorted")
    if ranked(a):
        check(all(0 <= d < a.rank for d in col), "C8", f"collapsed_slice_dims {list(col)} out of range for {a}")
    check(all(0 <= d < len(ss) and ss[d] <= 1 for d in col), "C9", "slices must be at most 1 wide in collapsed dimensions")
    check(list(obd) == sorted(obd), "C10", f"operand_batching_dims {list(obd)} must be sorted")
    if ranked(a):
        check(all(0 <= d < a.rank for d in obd), "C11", f"operand_batching_dims {list(obd)} out of range for {a}")
    check(all(0 <= d < len(ss) and ss[d] <= 1 for d in obd), "C12", "slices must be at most 1 wide in operand batching dimensions")
    check(len(set(sibd)) == len(sibd), "C13", f"start_indices_batching_dims {list(sibd)} must be distinct")
    if ranked(idx):
        check(all(0 <= d < idx.rank for d in sibd), "C14", f"start_indices_batching_dims {list(sibd)} out of range for {idx}")
    check(ivd not in sibd, "C15", "index_vector_dim must not be a start_indices batching dimension")
    check(len(obd) == len(sibd), "C16", "operand_batching_dims and start_indices_batching_dims must have the same length")
    if ranked(a) and ranked(idx):
        check(all(dim_ok(a.shape[x], idx.shape[y]) for x, y in zip(obd, sibd)), "C17", "paired batching dimensions differ in size")
    check(len(set(sim + obd)) == len(sim + obd), "C18", "start_index_map and operand_batching_dims must be distinct")
    if ranked(a):
        check(all(0 <= d < a.rank for d in sim), "C19", f"start_index_map {list(sim)} out of range for {a}")
        check(len(ss) == a.rank, "C20", f"slice_sizes must have {a.rank} entries, has {len(ss)}")
        check(all(0 <= s and (d is None or s <= d) for s, d in zip(ss, a.shape)), "C21",
              f"slice_sizes {list(ss)} out of range for {a}")
    if ranked(a) and ranked(idx) and ranked(r):
        batch = [s for i, s in enumerate(idx.shape) if i != ivd]
        offs = [s for i, s in enumerate(ss) if i not in col and i not in obd]
        rank = len(batch) + len(off)
        if r.rank == rank and len(offs) == len(off):
            it_b, it_o = iter(batch), iter(offs)
            expect = [next(it_o) if i in off else next(it_b) for i in range(rank)]
            check(shape_matches(r, expect), "C22", f"result type {r} does not match the inferred shape {expect}")
        else:
            check(False, "C22", f"result rank {r.rank} does not match the inferred rank {rank}")


@verifier("stablehlo.scatter")
def scatter(op, check):
    nin = len(op.results)
    ins = [v.type for v in op.operands[:nin]]
    idx = op.operands[nin].type
    ups = [v.type for v in op.operands[nin + 1:]]
    dn = op.attributes.get("scatter_dimension_numbers")
    check(nin >= 1 and len(ups) == nin, "C5", "there must be as many updates as inputs (and at least one)")
    check(all(shapes_compatible(ins[0], t) for t in ins), "C1", "all inputs must have the same shape")
    check(all(shapes_compatible(ups[0], t) for t in ups), "C3", "all updates must have the same shape")
    check(all(elems_equal(a, b) for a, b in zip(ins, ups)), "C6", "updates must have the inputs' element types")
    if not isinstance(dn, StructAttr):
        return
    g = lambda k: tuple(dn.get(k, ()) or ())
    uwd, iwd, ibd, sibd, sd2od = (g("update_window_dims"), g("inserted_window_dims"), g("input_batching_dims"),
                                  g("scatter_indices_batching_dims"), g("scatter_dims_to_operand_dims"))
    ivd = int(dn.get("index_vector_dim", 0) or 0)
    a, u = ins[0], ups[0]
    if ranked(a):
        check(a.rank == len(uwd) + len(iwd) + len(ibd), "C2",
              f"input rank {a.rank} must equal the number of update_window_dims, inserted_window_dims and input_batching_dims")
    check(sorted_distinct(uwd), "C7", f"update_window_dims {list(uwd)} must be sorted and distinct")
    if ranked(u):
        check(all(0 <= d < u.rank for d in uwd), "C8", f"update_window_dims {list(uwd)} out of range for {u}")
    check(len(set(iwd + ibd)) == len(iwd + ibd), "C9", "inserted_window_dims and input_batching_dims must be distinct")
    check(list(iwd) == sorted(iwd), "C10", "inserted_window_dims must be sorted")
    if ranked(a):
        check(all(0 <= d < a.rank for d in iwd), "C11", f"inserted_window_dims {list(iwd)} out of range for {a}")
    check(list(ibd) == sorted(ibd), "C12", "input_batching_dims must be sorted")
    if ranked(a):
        check(all(0 <= d < a.rank for d in ibd), "C13", f"input_batching_dims {list(ibd)} out of range for {a}")
    check(len(set(sibd)) == len(sibd), "C14", "scatter_indices_batching_dims must be distinct")
    if ranked(idx):
        check(all(0 <= d < idx.rank for d in sibd), "C15", f"scatter_indices_batching_dims out of range for {idx}")
    check(ivd not in sibd, "C16", "index_vector_dim must not be a scatter_indices batching dimension")
    check(len(ibd) == len(sibd), "C17", "input_batching_dims and scatter_indices_batching_dims must have the same length")
    if ranked(a) and ranked(idx):
        check(all(dim_ok(a.shape[x], idx.shape[y]) for x, y in zip(ibd, sibd)), "C18", "paired batching dimensions differ in size")
    if ranked(idx):
        check(0 <= ivd <= idx.rank, "C22", f"index_vector_dim {ivd} is out of range for {idx}")
        n = 1 if ivd == idx.rank else idx.shape[ivd]
        check(n is None or len(sd2od) == n, "C19", f"scatter_dims_to_operand_dims has {len(sd2od)} entries but the index vector has {n}")
    check(len(set(sd2od + ibd)) == len(sd2od + ibd), "C20", "scatter_dims_to_operand_dims and input_batching_dims must be distinct")
    if ranked(a):
        check(all(0 <= d < a.rank for d in sd2od), "C21", f"scatter_dims_to_operand_dims out of range for {a}")
    if ranked(a) and ranked(idx) and ranked(u):
        batch = [s for i, s in enumerate(idx.shape) if i != ivd]
        check(u.rank == len(batch) + len(uwd), "C4", f"updates rank {u.rank} must be {len(batch) + len(uwd)}")
        win_dims = [i for i in range(a.rank) if i not in iwd and i not in ibd]
        sc = [i for i in range(u.rank) if i not in uwd]
        for k, ud in enumerate(uwd):
            if k < len(win_dims):
                check(u.shape[ud] is None or a.shape[win_dims[k]] is None or u.shape[ud] <= a.shape[win_dims[k]], "C4",
                      f"update window dimension {ud} is larger than the input")
        for k, ud in enumerate(sc):
            if k < len(batch):
                check(dim_ok(u.shape[ud], batch[k]), "C4", f"update scatter dimension {ud} must match the indices' size {batch[k]}")
    # the body combines an input element with an update element: its accumulators start from 0-d
    # tensors of the updates' element types
    rets = reducer_body(check, op, op.regions[0], ins, [TensorType((), elem(t)) for t in ups], "C23")
    check(all(shapes_compatible(r.type, i) for r, i in zip(op.results, ins)), "C24", "results must have the inputs' shapes")
    if rets is not None:
        for r, t in zip(op.results, rets):
            check(elems_equal(r.type, t), "C25", f"result type {r.type} must have the body's element type ({t})")


@verifier("stablehlo.dynamic_gather")
def dynamic_gather(op, check):
    # Same structure as gather, with slice_sizes an operand (checked only when constant-folded upstream).
    a = op.operands[0].type
    dn = op.attributes.get("dimension_numbers")
    if not isinstance(dn, StructAttr):
        return
    g = lambda k: tuple(dn.get(k, ()) or ())
    off, col, obd, sim = g("offset_dims"), g("collapsed_slice_dims"), g("operand_batching_dims"), g("start_index_map")
    r = op.results[0].type
    if ranked(a):
        check(a.rank == len(off) + len(col) + len(obd), "C1",
              f"offset_dims size ({len(off)}) plus collapsed_slice_dims size ({len(col)}) plus operand_batching_dims size ({len(obd)}) is not equal to operand rank ({a.rank})")
    check(sorted_distinct(off), "C4", f"offset_dims {list(off)} must be sorted and distinct")
    if ranked(r):
        check(all(0 <= d < r.rank for d in off), "C5", f"offset_dims {list(off)} out of range for {r}")
    check(list(col) == sorted(set(col)), "C6", f"collapsed_slice_dims {list(col)} must be sorted and distinct")
    check(len(set(sim + obd)) == len(sim + obd), "C9", "start_index_map and operand_batching_dims must be distinct")
    if ranked(a):
        check(all(0 <= d < a.rank for d in col), "C7", f"collapsed_slice_dims {list(col)} out of range for {a}")
        check(all(0 <= d < a.rank for d in sim), "C10", f"start_index_map {list(sim)} out of range for {a}")
    idx = op.operands[1].type
    ivd = int(dn.get("index_vector_dim", 0) or 0)
    if ranked(idx):
        check(0 <= ivd <= idx.rank, "C2", f"index_vector_dim {ivd} is out of range for {idx}")
        n = 1 if ivd == idx.rank else idx.shape[ivd] if 0 <= ivd < idx.rank else None
        check(n is None or len(sim) == n, "C3", f"start_index_map has {len(sim)} entries but the index vector has {n}")
    ss = op.operands[2].type
    if ranked(ss) and ranked(a) and ss.rank == 1 and ss.shape[0] is not None:
        check(ss.shape[0] == a.rank, "C11", f"slice_sizes size ({ss.shape[0]}) not equal to operand rank ({a.rank})")
    check(elems_equal(a, r, True), "C14", "operand and result must have the same element type")
    sizes = const_ints(op.operands[2])
    if sizes is not None and ranked(a) and len(sizes) == a.rank:
        check(all(0 <= d < len(sizes) and sizes[d] <= 1 for d in col), "C8",
              "slice_sizes of collapsed_slice_dims must be at most 1")
        check(all(0 <= d < len(sizes) and sizes[d] <= 1 for d in obd), "C12",
              "Expects that for each dim in operand_batching_dims, slice_sizes[dim] should be <= 1")
        for i, (s_, d) in enumerate(zip(sizes, a.shape)):
            check(s_ >= 0 and (d is None or s_ <= d), "C13",
                  f"slice size ({s_}) is out of bounds for operand dimension ({d}) at index {i}")


@verifier("stablehlo.torch_index_select")
def torch_index_select(op, check):
    a, idx, r = op.operands[0].type, op.operands[1].type, op.results[0].type
    d = int_value(op.attributes.get("dim"), 0)
    b = int_value(op.attributes.get("batch_dims"), 0)
    check(elems_equal(a, r), "", f"operand and result must have the same element type (got {a}, {r})")
    if ranked(a):
        check(0 <= d < a.rank, "", f"dim {d} is out of range for {a}")
        check(0 <= b <= d, "", f"batch_dims {b} must be between 0 and dim {d}")
    if ranked(a) and ranked(idx) and ranked(r) and 0 <= d < a.rank and b <= idx.rank:
        expect = list(a.shape[:d]) + list(idx.shape[b:]) + list(a.shape[d + 1:])
        check(shape_matches(r, expect), "", f"result {r} does not match the inferred shape {expect}")
