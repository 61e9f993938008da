"""Verifiers of the Shardy (`sdy`) ops: meshes, sharding annotations and manual computations
(the structure Shardy's own verifier checks: meshes exist, shardings fit the tensor's rank and
use axes of their mesh once, manual computations' local types are the global ones divided
along the manual axes)."""
from __future__ import annotations

from ..ir.attributes import IntegerAttr, SymbolRefAttr
from ..ir.sdy import SdyAttr
from ..ir.types import TensorType
from .registry import verifier


def _module_meshes(check) -> dict:
    m = check.module
    if m is None or not m.op.regions or not m.op.regions[0].blocks:
        return {}
    return {o.attributes["sym_name"].value: o.attributes.get("mesh")
            for o in m.op.regions[0].blocks[0].operations
            if o.name == "sdy.mesh" and "sym_name" in o.attributes}


@verifier("sdy.mesh")
def mesh(op, check):
    m = check.module
    if m is not None and m.op.regions and m.op.regions[0].blocks:
        check(any(o is op for o in m.op.regions[0].blocks[0].operations), "C1",
              "sdy.mesh must be a direct child of the module")
    m = op.attributes["mesh"]
    names = [n for n, _ in m.mesh_axes]
    check(len(set(names)) == len(names), "C2", f"mesh has duplicate axis names: {names}")
    for n, s in m.mesh_axes:
        check(s > 0, "C2", f"axis {n!r} has size {s}, expected a positive size")
    total = 1
    for _, s in m.mesh_axes:
        total *= s
    ids = list(m.device_ids)
    if ids:
        if not names:
            check(len(ids) == 1 and ids[0] >= 0, "C3", "a mesh without axes takes a single non-negative device id")
        else:
            check(sorted(ids) == list(range(total)), "C3",
                  f"device_ids {ids} is not a permutation of 0..{total - 1} (the product of the axis sizes)")


def check_sharding(check, sharding: SdyAttr, t, cid: str, what: str, meshes=None):
    """A tensor sharding against the tensor type it annotates and the module's meshes."""
    ref = sharding.params[0]
    if isinstance(ref, SdyAttr):
        m = ref
    else:
        meshes = _module_meshes(check) if meshes is None else meshes
        name = ref.root if isinstance(ref, SymbolRefAttr) else str(ref)
        check(name in meshes, cid, f"{what}: unknown mesh @{name}")
        m = meshes[name]
    sizes = dict(m.mesh_axes)
    dims = sharding.params[1]
    if isinstance(t, TensorType):
        check(len(dims) == len(t.shape), cid,
              f"{what}: sharding has {len(dims)} dimension shardings, the tensor has rank {len(t.shape)}")
    seen = []
    for ref_ in [r for d in dims for r in d.params[0]] + list(sharding.params[2]) + list(sharding.params[3]):
        name, sub = ref_.params
        check(name in sizes, cid, f"{what}: unknown axis name {name!r} (mesh axes: {', '.join(sizes) or 'none'})")
        if sub is not None:
            pre, size = sub.params
            check(pre >= 1 and size > 1 and sizes[name] % (pre * size) == 0, cid,
                  f"{what}: sub-axis {name}:({pre}){size} does not divide axis of size {sizes[name]}")
        key = (name, None if sub is None else sub.params)
        check(key not in seen and (name, None) not in seen, cid, f"{what}: axis {name!r} is used more than once")
        seen.append(key)
    return m


@verifier("sdy.sharding_constraint", "sdy.reshard")
def sharding_annotation(op, check):
    check(op.operands[0].type == op.results[0].type, "C1",
          f"result type {op.results[0].type} differs from the input type {op.operands[0].type}")
    check_sharding(check, op.attributes["sharding"], op.results[0].type, "C2", op.name)


@verifier("sdy.sharding_group")
def sharding_group(op, check):
    g = op.attributes["group_id"]
    check(isinstance(g, IntegerAttr) and g.value >= 0, "C1", f"group_id must be non-negative, got {g}")


def _owner(root, term):
    """The op whose region ends with `term` (searched below `root`), or None."""
    stack = [root] if root is not None else []
    while stack:
        o = stack.pop()
        for r in o.regions:
            for b in r.blocks:
                if b.operations and b.operations[-1] is term:
                    return o
                stack.extend(b.operations)
    return None


@verifier("sdy.return")
def sdy_return(op, check):
    # The types are the local shards of the owner's results: sdy.manual_computation's C3
    # compares them; here the count.
    owner = _owner(check.func, op)
    if owner is not None and owner.name == "sdy.manual_computation":
        check(len(op.operands) == len(owner.results), "C1",
              f"sdy.return yields {len(op.operands)} values, the enclosing sdy.manual_computation "
              f"has {len(owner.results)} results")


def _local_type(check, sharding, t, manual, sizes, cid, what):
    if not isinstance(t, TensorType):
        return t
    shape = []
    for d, n in zip(sharding.params[1], t.shape):
        div = 1
        free_seen = False
        for r in d.params[0]:
            name, sub = r.params
            if name in manual:
                check(not free_seen, "C4", f"{what}: manual axis {name!r} comes after a free axis")
                div *= sizes[name] if sub is None else sub.params[1]
            else:
                free_seen = True
        if n is None:
            shape.append(None)
            continue
        check(n % div == 0, cid, f"{what}: dimension of size {n} does not split into {div} manual shards")
        shape.append(n // div)
    return TensorType(tuple(shape), t.element_type, t.encoding)


@verifier("sdy.manual_computation")
def manual_computation(op, check):
    a = op.attributes
    ins, outs = a["in_shardings"].params[0], a["out_shardings"].params[0]
    check(len(ins) == len(op.operands), "C1", f"{len(ins)} in_shardings for {len(op.operands)} operands")
    check(len(outs) == len(op.results), "C1", f"{len(outs)} out_shardings for {len(op.results)} results")
    meshes = _module_meshes(check)
    mesh_attr = None
    for i, (s, v) in enumerate(zip(ins, op.operands)):
        m = check_sharding(check, s, v.type, "C1", f"in_shardings[{i}]", meshes)
        check(mesh_attr is None or m == mesh_attr, "C1", "in/out shardings refer to different meshes")
        mesh_attr = m
    for i, (s, v) in enumerate(zip(outs, op.results)):
        m = check_sharding(check, s, v.type, "C1", f"out_shardings[{i}]", meshes)
        check(mesh_attr is None or m == mesh_attr, "C1", "in/out shardings refer to different meshes")
        mesh_attr = m
    sizes = dict(mesh_attr.mesh_axes) if mesh_attr is not None else {}
    manual = set(a["manual_axes"].params[0])
    for n in manual:
        check(n in sizes, "C4", f"manual axis {n!r} is not an axis of the mesh")
    check(len(op.regions) == 1 and len(op.regions[0].blocks) == 1, "C2", "the body must be a single block")
    block = op.regions[0].blocks[0]
    check(len(block.arguments) == len(op.operands), "C2",
          f"the body takes {len(block.arguments)} arguments for {len(op.operands)} operands")
    for i, (s, v, arg) in enumerate(zip(ins, op.operands, block.arguments)):
        local = _local_type(check, s, v.type, manual, sizes, "C3", f"operand #{i}")
        check(local == arg.type, "C3", f"operand #{i}: the body argument has type {arg.type}, "
                                       f"the local shard of {v.type} is {local}")
    term = block.operations[-1] if block.operations else None
    check(term is not None and term.name == "sdy.return", "C2", "the body must end with sdy.return")
    check(len(term.operands) == len(op.results), "C2",
          f"sdy.return yields {len(term.operands)} values for {len(op.results)} results")
    for i, (s, r, v) in enumerate(zip(outs, op.results, term.operands)):
        local = _local_type(check, s, r.type, manual, sizes, "C3", f"result #{i}")
        check(local == v.type, "C3", f"result #{i}: the body returns {v.type}, the local shard of {r.type} is {local}")
