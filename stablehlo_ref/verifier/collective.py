"""Verifiers of the collective and communication ops: all_reduce, reduce_scatter, all_gather,
all_to_all, collective_permute, collective_broadcast, collective_reduce (replica-group structure,
reduction bodies), send/recv (source-target pairs, channel types), infeed/outfeed, the token ops
after_all/create_token and replica_id/partition_id."""
from __future__ import annotations

import numpy as np

from ..ir.attributes import IntegerAttr, StructAttr, SymbolRefAttr, UnitAttr
from ..ir.types import ElementType, TokenType, TupleType
from ..limits import check_tensor
from .registry import verifier
from .shapes import (const_ints, dim_ok, elem, elems_equal, int_value, is_tensor, promotable, ranked, region_args,
                     region_returns, shapes_compatible, types_compatible)


def _replica_group_ids(op, check, cid):
    """The replica_groups attribute as a 2-d integer numpy array, read without materializing a
    huge splat: sizes come from the type first (a splat of more than one id repeats an id, or is
    all padding)."""
    a = op.attributes.get("replica_groups")
    if isinstance(a, StructAttr) and a.name == "replica_group_mesh_axes":
        _mesh_axes_check(check, a)
        return None
    arr = getattr(a, "array", None)
    if arr is None:
        return None
    check(arr.ndim == 2, cid, f"replica groups should be a rank 2 tensor, got rank {arr.ndim}")
    n = int(np.prod(arr.shape, dtype=object))
    if n > 1 and any(st == 0 for st in arr.strides):
        # a broadcast splat (`dense<0> : tensor<NxMxi64>`): one id, repeated
        v = int(arr.reshape(-1)[0])
        return ("splat", v, tuple(arr.shape))
    check_tensor(arr.shape, 64, f"{op.name} replica_groups", op.where())
    return arr


def _mesh_axes_check(check, a):
    """`#stablehlo.replica_group_mesh_axes<mesh = M, axes = [...]>`: M names a mesh symbol or is an
    inline `#stablehlo.mesh`; against an inline mesh every axis is an `#stablehlo.axis_ref` to one
    of its axes. (Whether a named mesh exists is a symbol use, checked once the module's ops
    verify: `mesh_symbol_problems`.)"""
    mesh, axes = a.get("mesh"), a.get("axes") or ()
    check(isinstance(mesh, SymbolRefAttr) and not mesh.nested or (isinstance(mesh, StructAttr) and mesh.name == "mesh"),
          "", "replica_groups: mesh must be a FlatSymbolRefAttr or MeshAttr")
    if isinstance(mesh, StructAttr):
        text = lambda v: getattr(v, "value", v)
        names = {text(m.get("name")) for m in (mesh.get("axes") or ()) if isinstance(m, StructAttr)}
        for ax in axes:
            check(isinstance(ax, StructAttr) and ax.name == "axis_ref", "", "replica_groups: expected AxisRefAttr in axes list")
            check(text(ax.get("name")) in names, "", f"replica_groups: axis '{text(ax.get('name'))}' not found in mesh definition")


def mesh_symbol_problems(module):
    """(op, message) for every collective whose `replica_group_mesh_axes` names a mesh symbol the
    module does not define. Like MLIR's symbol-use verification, this runs only on a module whose
    ops otherwise verify."""
    defined = set()
    for top in module.op.regions[0].blocks[0].operations if module.op.regions and module.op.regions[0].blocks else ():
        name = top.attributes.get("sym_name")
        if name is not None:
            defined.add(getattr(name, "value", name))
    for op in module.walk():
        a = op.attributes.get("replica_groups")
        if isinstance(a, StructAttr) and a.name == "replica_group_mesh_axes":
            mesh = a.get("mesh")
            if isinstance(mesh, SymbolRefAttr) and mesh.root not in defined:
                yield op, f"replica_groups: mesh symbol '{mesh.root}' not found"


def _process_count(op, check, mode):
    """How many ids a process group may name, from the module's `mhlo.num_replicas` /
    `mhlo.num_partitions` (None when the module does not say: the run checks it then)."""
    mod = check.module
    attrs = getattr(getattr(mod, "op", None), "attributes", None) or {}
    rep, part = attrs.get("mhlo.num_replicas"), attrs.get("mhlo.num_partitions")
    rep = int(rep.value) if isinstance(rep, IntegerAttr) else None
    part = int(part.value) if isinstance(part, IntegerAttr) else None
    if mode == "flattened_ids":
        return rep * part if rep is not None and part is not None else None
    if mode == "cross_partition":
        return part
    return rep


def _mode(op, partitions_with_channel=False):
    """The process-group mode of a collective: cross_replica without a channel; with one,
    cross_partition (all_to_all, collective_broadcast, collective_reduce) or
    cross_replica_and_partition, or flattened_ids with use_global_device_ids."""
    ch = op.attributes.get("channel_handle")
    h = ch.get("handle") if isinstance(ch, StructAttr) else None
    has_channel = h is not None and int(h) > 0
    if op.attributes.get("use_global_device_ids") is not None:
        return "flattened_ids"
    if not has_channel:
        return "cross_replica"
    return "cross_partition" if partitions_with_channel else "cross_replica_and_partition"


def _groups(op, check, cid_dup, cid_range, allow_padding=False, require_all=True, cid_count=None,
            partitions_with_channel=False):
    """The replica groups as lists of ids (padding -1 dropped); checks rank, negatives, duplicates,
    that the ids cover 0..n-1 and, where the module gives the process grid, the count (cid_count)
    and range (cid_range) of the ids."""
    arr = _replica_group_ids(op, check, cid_range)
    if arr is None:
        return None
    if isinstance(op.attributes.get("use_global_device_ids"), UnitAttr):
        # global device ids name devices through the groups: there must be some
        size = arr[2] if isinstance(arr, tuple) else arr.shape
        check(int(np.prod(size)) > 0, "", "if `use_global_device_ids` is set, the replica groups cannot be empty")
    if isinstance(arr, tuple):
        _, v, shape = arr
        if v == -1 and allow_padding:
            return [[] for _ in range(shape[0])]
        check(v >= 0, cid_range, f"invalid replica id {v}")
        check(False, cid_dup, f"replica id #{v} seen more than once")
    groups = [[int(x) for x in row] for row in arr.tolist()]
    seen = set()
    for g in groups:
        for x in g:
            if x == -1 and allow_padding:
                continue
            check(x >= 0, cid_range, f"invalid replica id {x}")
            check(x not in seen, cid_dup, f"replica id #{x} seen more than once")
            seen.add(x)
    if seen and (not allow_padding or require_all):
        for i in range(max(seen) + 1):
            check(i in seen, cid_range, f"replica id #{i} not seen in replica groups")
    count = _process_count(op, check, _mode(op, partitions_with_channel))
    if count is not None and seen:
        check(max(seen) < count, cid_range, f"replica id {max(seen)} is out of range for {count} processes")
        if cid_count is not None:
            check(len(seen) == count, cid_count,
                  f"replica_groups name {len(seen)} ids, but the process grid has {count}")
    return [[x for x in g if x != -1] for g in groups]


def _channel_check(op, check, cid):
    if op.attributes.get("use_global_device_ids") is None:
        return
    ch = op.attributes.get("channel_handle")
    h = ch.get("handle") if isinstance(ch, StructAttr) else None
    check(h is not None and int(h) > 0, cid,
          f"channel_id must be positive when use_global_device_ids is set but got: {h}")


def _reduction_body(op, check, operand_types, cid, result_types=None):
    region = op.regions[0]
    n = len(operand_types)
    args = region_args(region)
    check(len(args) == 2 * n, cid, f"reduction region must take {2 * n} parameters, but takes {len(args)}")
    rets = region_returns(region) or []
    check(len(rets) > 0, cid, "the reduction region is expected to return some value(s)")
    check(all(not isinstance(t, TupleType) and is_tensor(t) for t in rets), cid,
          f"reduction region must produce tensor-typed results, but produces {', '.join(map(str, rets))}")
    check(len(rets) == n, cid, f"reduction region must produce {n} tensors, but produces {len(rets)}")
    for i, t in enumerate(operand_types):
        r = rets[i]
        check(ranked(r) and r.rank == 0, cid, f"the shape of reduction-region's result type at index {i} ({r}) must be 0-d")
        for a in (args[i], args[i + n]):
            check(a == r or (ranked(a) and ranked(r) and shapes_compatible(a, r) and elems_equal(a, r)), cid,
                  f"the type of reduction-region's parameter ({a}) differs from the result type ({r})")
        check(promotable(elem(t), elem(r)), cid,
              f"the reduction region's element type {elem(r)} is not promotable from {elem(t)}")
    if result_types is not None:
        for res, r in zip(result_types, rets):
            check(elems_equal(res, r), cid, f"result element type must be {elem(r)}, got {res}")


@verifier("stablehlo.all_reduce")
def all_reduce(op, check):
    _groups(op, check, "C1", "C3", allow_padding=True, cid_count="C2")
    _channel_check(op, check, "C4")
    check(len(op.operands) == len(op.results), "C6", "requires the same number of operands and results")
    _reduction_body(op, check, [op.operands[0].type] if op.operands else [], "C5")
    rets = region_returns(op.regions[0]) if op.regions else None
    for v, r in zip(op.operands, op.results):
        check(shapes_compatible(v.type, r.type), "C6", f"result {r.type} must have the shape of operand {v.type}")
        if rets:
            check(elems_equal(r.type, rets[0]), "C7", f"result element type must be {elem(rets[0])}, got {r.type}")


@verifier("stablehlo.reduce_scatter")
def reduce_scatter(op, check):
    a, r = op.operands[0].type, op.results[0].type
    d = int_value(op.attributes.get("scatter_dimension"), 0)
    check(d >= 0, "C2", f"scatter_dimension {d} must be non-negative")
    if ranked(a):
        check(d < a.rank, "C2", f"scatter_dimension {d} is out of range for {a}")
    _groups(op, check, "C3", "C5", cid_count="C4")
    _channel_check(op, check, "C6")
    _reduction_body(op, check, [a], "C7")
    rets = region_returns(op.regions[0]) if op.regions else None
    if rets:
        check(elems_equal(r, rets[0]), "C9", f"result element type must be {elem(rets[0])}, got {r}")
    if ranked(a) and ranked(r):
        check(a.rank == r.rank, "C8", f"operand and result must have the same rank ({a}, {r})")
        sa, sr = a.shape[d], r.shape[d]
        check(sa != 0, "C1", "operand dimension size at scatter_dimension cannot be zero")
        if sa is not None and sr is not None:
            check(sr != 0 and sa % sr == 0, "C8",
                  f"operand scatter dimension has size {sa}, expected to be a multiple of result scatter dimension size {sr}")
        check(all(dim_ok(x, y) for i, (x, y) in enumerate(zip(a.shape, r.shape)) if i != d), "C8",
              f"result {r} must have the operand shape outside scatter_dimension")


@verifier("stablehlo.all_gather")
def all_gather(op, check):
    d = int_value(op.attributes.get("all_gather_dim"), 0)
    check(d >= 0, "C1", f"all_gather_dim {d} must be non-negative")
    _groups(op, check, "C2", "C4", cid_count="C3")
    _channel_check(op, check, "C5")
    check(len(op.operands) == len(op.results), "C6", "requires the same number of operands and results")
    for v, r in zip(op.operands, op.results):
        a, t = v.type, r.type
        if not (ranked(a) and ranked(t)):
            continue
        check(d < a.rank, "C1", f"all_gather_dim {d} is out of range for {a}")
        check(a.rank == t.rank, "C6", f"operand and result must have the same rank ({a}, {t})")
        check(a.shape[d] != 0, "C6", "dimension size of operand at 'all_gather_dim' cannot be zero")
        if a.shape[d] is not None and t.shape[d] is not None:
            check(t.shape[d] % a.shape[d] == 0, "C6",
                  f"result gather dimension has size {t.shape[d]}, expected to be a multiple of operand gather dimension size {a.shape[d]}")
        check(all(dim_ok(x, y) for i, (x, y) in enumerate(zip(a.shape, t.shape)) if i != d), "C6",
              "operand and result should have the same shape except for the dimension size at 'all_gather_dim'")
        check(elems_equal(a, t, True), "C6", f"result {t} must have the operand's element type")


@verifier("stablehlo.all_to_all")
def all_to_all(op, check):
    sd = int_value(op.attributes.get("split_dimension"), 0)
    cd = int_value(op.attributes.get("concat_dimension"), 0)
    sc = int_value(op.attributes.get("split_count"), 1)
    check(sd >= 0, "C1", f"split_dimension {sd} must be non-negative")
    check(cd >= 0, "C3", f"concat_dimension {cd} must be non-negative")
    check(sc > 0, "C4", f"split_count {sc} must be positive")
    check(len(op.operands) == len(op.results), "C9", "requires the same number of operands and results")
    groups = _groups(op, check, "C5", "C7", cid_count="C6", partitions_with_channel=True)
    arr = getattr(op.attributes.get("replica_groups"), "array", None)
    if groups is not None and arr is not None:
        check(arr.shape[1] == sc and all(len(g) == sc for g in groups), "C8", f"group size of replica_groups must be {sc}")
    for v, r in zip(op.operands, op.results):
        a, t = v.type, r.type
        if not ranked(a):
            continue
        check(sd < a.rank, "C1", f"split_dimension {sd} is out of bounds for input rank {a.rank}")
        check(cd < a.rank, "C3", f"concat_dimension {cd} is out of bounds for input rank {a.rank}")
        if a.shape[sd] is not None:
            check(a.shape[sd] % sc == 0, "C2",
                  f"split dimension has size {a.shape[sd]}, expected to be a multiple of split_count {sc}")
        check(elems_equal(a, t, True), "C9", f"requires the same element type for operand and result ({a}, {t})")
        if ranked(t):
            expect = list(a.shape)
            if expect[sd] is not None:
                expect[sd] //= sc
            if expect[cd] is not None:
                expect[cd] *= sc
            check(t.rank == a.rank and all(dim_ok(x, y) for x, y in zip(t.shape, expect)), "C9",
                  f"result {t} does not match the inferred shape {expect}")


@verifier("stablehlo.collective_permute")
def collective_permute(op, check):
    arr = _pairs_array(op, check)
    if arr is not None:
        check(arr.ndim == 2, "C1", f"expect source_target_pairs attribute to be of rank 2, but got rank {arr.ndim}")
        check(arr.shape[1] == 2, "C1", f"expect source_target_pairs attribute of shape (N, 2), but got {tuple(arr.shape)}")
        src = [int(x) for x in arr[:, 0]]
        dst = [int(x) for x in arr[:, 1]]
        check(all(x >= 0 for x in src + dst), "C4", "replica ids in source_target_pairs must be >= 0")
        check(len(set(src)) == len(src), "C2", "duplicate sources not allowed")
        check(len(set(dst)) == len(dst), "C3", "duplicate targets not allowed")
    for v, r in zip(op.operands, op.results):
        check(shapes_compatible(v.type, r.type) and elems_equal(v.type, r.type, True), "C5",
              f"result {r.type} must have the operand type {v.type}")


def _dynamic_root(op, check, cid, what):
    if op.attributes.get("has_dynamic_root") is None:
        return len(op.operands)
    check(len(op.operands) >= 2, cid, f"{what} with has_dynamic_root=true needs a root operand")
    root = op.operands[-1].type
    check(ranked(root) and root.rank == 1 and str(elem(root)) in ("i32", "si32"), cid,
          f"last operand of {what} with has_dynamic_root=true must be a rank-1 i32 tensor")
    n = len(op.operands) - 1
    if root.shape[0] is not None:
        check(root.shape[0] == n, cid,
              f"last operand of {what} with has_dynamic_root=true must have the same number of elements as data operands ({n}), but got {root.shape[0]}")
    return n


@verifier("stablehlo.collective_broadcast")
def collective_broadcast(op, check):
    check(len(op.operands) >= 1, "C3", "collective_broadcast requires at least one data operand")
    # no padding in collective_broadcast's groups: every id is a process (C2)
    arr = _replica_group_ids(op, check, "C2")
    if arr is not None:
        low = arr[1] if isinstance(arr, tuple) else (int(arr.min()) if arr.size else 0)
        check(low >= 0, "C2", f"replica_groups values must be positive, but was given {low}")
    groups = _groups(op, check, "C1", "C2", allow_padding=True, require_all=False, partitions_with_channel=True)
    n = _dynamic_root(op, check, "C4", "collective_broadcast")
    check(len(op.results) == n, "C5", f"expects {n} results, got {len(op.results)}")
    for i, (v, r) in enumerate(zip(op.operands[:n], op.results)):
        msg = f"result #{i} ({r.type}) must have the type of operand #{i} ({v.type})"
        if n < len(op.operands):
            check(types_compatible(v.type, r.type), "C4", msg)
        else:
            check(types_compatible(v.type, r.type), "C3", msg)
    root = const_ints(op.operands[-1]) if n < len(op.operands) else None
    if root is not None and groups:
        size = min(len(g) for g in groups)
        check(all(0 <= x < size for x in root), "C6",
              f"dynamic root indices {list(root)} must lie within a process group of {size}")


@verifier("stablehlo.collective_reduce")
def collective_reduce(op, check):
    _groups(op, check, "C1", "C2", allow_padding=True, require_all=False, partitions_with_channel=True)
    _channel_check(op, check, "C5")
    n = _dynamic_root(op, check, "C3", "collective_reduce")
    check(len(op.results) == n, "C3", f"expects {n} results, got {len(op.results)}")
    for i, (v, r) in enumerate(zip(op.operands[:n], op.results)):
        check(shapes_compatible(v.type, r.type), "C3", f"result #{i} ({r.type}) must have the shape of operand #{i} ({v.type})")
    if op.regions:
        _reduction_body(op, check, [op.operands[0].type], "C4")


@verifier("stablehlo.infeed")
def infeed(op, check):
    rs = [r.type for r in op.results]
    check(len(rs) >= 1, "C1", "result is expected to be at least of size 1, but got 0")
    check(all(not isinstance(t, TokenType) for t in rs[:-1]), "C2",
          "all result types except the last are expected to be tensors")
    check(isinstance(rs[-1], TokenType), "C3", f"last element of result types is expected to be of token type, but got {rs[-1]}")
    layout = op.attributes.get("layout")
    if op.name == "stablehlo.infeed" and layout is not None and hasattr(layout, "elements"):
        n = len(rs) - 1
        check(len(layout.elements) == n, "",
              f"layout-attribute size must be {n} (which is the number of op-results - 1 (for token result)), "
              f"but got {len(layout.elements)}")
        for item in layout.elements:
            check(hasattr(item, "elements"), "", f"layout-attribute elements are expected to be arrays, but got {item}")
            for leaf in item.elements:
                check(isinstance(leaf, IntegerAttr), "",
                      f"layout-attribute's leaf elements are expected to be of type integer, but got {leaf}")


@verifier("stablehlo.recv")
def recv(op, check):
    rs = [r.type for r in op.results]
    check(len(rs) >= 1 and isinstance(rs[-1], TokenType), "",
          "the last result is expected to be of token type")
    check(all(not isinstance(t, TokenType) for t in rs[:-1]), "", "all results except the last are expected to be tensors")
    _source_target_pairs(op, check)
    _host_transfer_channel(op, check, "HOST_TO_DEVICE")


@verifier("stablehlo.send")
def send(op, check):
    check(len(op.operands) >= 1 and isinstance(op.operands[-1].type, TokenType), "",
          "the last operand is expected to be a token")
    _source_target_pairs(op, check)
    _host_transfer_channel(op, check, "DEVICE_TO_HOST")


def _pairs_array(op, check):
    """source_target_pairs as a numpy array; a broadcast splat of more than one pair repeats its
    source (C2) and is not expanded."""
    arr = getattr(op.attributes.get("source_target_pairs"), "array", None)
    if arr is None or arr.size == 0:
        return None
    if arr.ndim == 2 and arr.shape[0] > 1 and any(st == 0 for st in arr.strides):
        check(False, "C2", "duplicate sources not allowed")
    check_tensor(arr.shape, 64, f"{op.name} source_target_pairs", op.where())
    return arr


def _source_target_pairs(op, check):
    arr = _pairs_array(op, check)
    if arr is None:
        return
    check(arr.ndim == 2 and arr.shape[1] == 2, "C1", f"source_target_pairs must have shape (N, 2), got {tuple(arr.shape)}")
    src, dst = [int(x) for x in arr[:, 0]], [int(x) for x in arr[:, 1]]
    check(len(set(src)) == len(src), "C2", "duplicate sources not allowed")
    check(len(set(dst)) == len(dst), "C3", "duplicate targets not allowed")
    check(all(x >= 0 for x in src + dst), "C4", "process ids in source_target_pairs must be non-negative")


def _host_transfer_channel(op, check, host_kind):
    """send/recv: the channel type matches is_host_transfer (1 = DEVICE_TO_DEVICE, 2 = DEVICE_TO_HOST,
    3 = HOST_TO_DEVICE)."""
    ch = op.attributes.get("channel_handle")
    t = ch.get("type") if isinstance(ch, StructAttr) else None
    if t is None:
        return
    t = int(t)
    host = getattr(op.attributes.get("is_host_transfer"), "value", False)
    names = {1: "DEVICE_TO_DEVICE", 2: "DEVICE_TO_HOST", 3: "HOST_TO_DEVICE"}
    cid = "C5"
    if host:
        check(names.get(t) == host_kind, cid, f"channel_type should be {host_kind} when is_host_transfer is true")
    else:
        check(t in (0, 1), cid, "channel_type should be DEVICE_TO_DEVICE when is_host_transfer is false")


@verifier("stablehlo.outfeed")
def outfeed(op, check):
    check(len(op.operands) >= 1 and isinstance(op.operands[-1].type, TokenType), "",
          "the last operand must be a token")
    check(all(not isinstance(v.type, TokenType) for v in op.operands[:-1]), "", "all inputs before the token must be tensors")


@verifier("stablehlo.after_all", "stablehlo.create_token")
def tokens(op, check):
    check(all(isinstance(v.type, TokenType) for v in op.operands), "", "all inputs must be tokens")
    check(len(op.results) == 1 and isinstance(op.results[0].type, TokenType), "", "the result must be a token")


@verifier("stablehlo.replica_id", "stablehlo.partition_id")
def process_id(op, check):
    r = op.results[0].type
    e = elem(r)
    check(ranked(r) and r.rank == 0 and isinstance(e, ElementType) and e.name == "ui32", "",
          f"result must be a 0-d tensor of ui32, got {r}")
