"""Kernels of the Shardy (`sdy`) ops JAX writes.

Sharding annotations (`sdy.sharding_constraint`, `sdy.reshard`, `sdy.sharding_group`) do not
change values: on one device, and in this interpreter, which holds whole tensors, they are
identities. `sdy.manual_computation` (JAX's `shard_map`) runs its body once per device of the
mesh the module declares (`sdy.mesh`), each on its local shard of the operands (split along the
manual axes of each dimension's sharding), on a simulated process grid of one replica and as
many partitions as the mesh has devices: the collectives in the body (JAX writes them with
`use_global_device_ids`, device ids in the mesh's order) meet there. The results are put
together from the devices' local results along the out_shardings."""
from __future__ import annotations

import threading
from typing import Dict, List, Tuple

import numpy as np

from ..errors import InterpreterError, NotImplementedOpError
from ..ir.attributes import SymbolRefAttr
from ..ir.sdy import SdyAttr
from .collective import run_threads
from .registry import kernel, op_cache


@kernel("sdy.sharding_constraint", "sdy.reshard")
def sharding_annotation(ctx, op, x):
    return [x]


@kernel("sdy.sharding_group")
def sharding_group(ctx, op, x):
    return []


def find_mesh(module, sharding: SdyAttr, where) -> SdyAttr:
    """The mesh a sharding refers to: inline, or the `sdy.mesh` of the module with that name."""
    ref = sharding.params[0]
    if isinstance(ref, SdyAttr):
        return ref
    name = ref.root if isinstance(ref, SymbolRefAttr) else str(ref)
    for o in module.op.regions[0].blocks[0].operations if module.op.regions else ():
        if o.name == "sdy.mesh":
            sym = o.attributes.get("sym_name")
            if sym is not None and sym.value == name:
                return o.attributes["mesh"]
    raise InterpreterError(f"sharding refers to mesh @{name}, which the module does not declare", where)


class _Layout:
    """A mesh as the manual computation uses it: axis names and sizes in order, device ids."""

    def __init__(self, mesh: SdyAttr, manual: Tuple[str, ...], where):
        self.axes = list(mesh.mesh_axes)
        self.sizes = {n: s for n, s in self.axes}
        self.n = 1
        for _, s in self.axes:
            self.n *= s
        ids = mesh.device_ids
        self.device_ids = list(ids) if len(ids) == self.n else list(range(self.n))
        for m in manual:
            if m not in self.sizes:
                raise InterpreterError(f"manual axis {m!r} is not an axis of the mesh", where)
        self.manual = set(manual)

    def coords(self, linear: int) -> Dict[str, int]:
        out = {}
        for name, size in reversed(self.axes):
            linear, out[name] = divmod(linear, size)
        return out


def _axis_coord(ref: SdyAttr, coords, sizes) -> Tuple[int, int]:
    """(index, size) of a device along an axis reference (a whole axis or a sub-axis)."""
    name, sub = ref.params
    if sub is None:
        return coords[name], sizes[name]
    pre, size = sub.params
    return (coords[name] // pre) % size, size


def _dim_split(dim_sharding: SdyAttr, coords, layout: _Layout) -> Tuple[int, int]:
    """(chunk index, chunk count) of a device along one tensor dimension: the manual axes of the
    dimension sharding, major to minor."""
    idx, count = 0, 1
    for ref in dim_sharding.params[0]:
        if ref.params[0] not in layout.manual:
            continue
        i, s = _axis_coord(ref, coords, layout.sizes)
        idx = idx * s + i
        count *= s
    return idx, count


def _local_slices(sharding: SdyAttr, shape, coords, layout, where):
    dims = sharding.params[1]
    if len(dims) != len(shape):
        raise InterpreterError(f"sharding has {len(dims)} dimension shardings for a tensor of rank {len(shape)}", where)
    out = []
    for d, n in zip(dims, shape):
        i, c = _dim_split(d, coords, layout)
        if n % c:
            raise InterpreterError(f"dimension of size {n} does not split into {c} shards", where)
        k = n // c
        out.append(slice(i * k, (i + 1) * k))
    return tuple(out)


def _is_representative(sharding: SdyAttr, coords, layout) -> bool:
    """Whether a device's local result is the one to place: every axis that does not shard the
    result (free axes, and manual axes the result is replicated over) is at coordinate 0."""
    used = {r.params[0] for d in sharding.params[1] for r in d.params[0] if r.params[0] in layout.manual}
    return all(c == 0 for name, c in coords.items() if name not in used)


@kernel("sdy.manual_computation")
def manual_computation(ctx, op, *operands):
    where = op.where()
    cache = op_cache(op)
    a = op.attributes
    ins, outs = a["in_shardings"].params[0], a["out_shardings"].params[0]
    if len(ins) != len(operands) or len(outs) != len(op.results):
        raise InterpreterError("sdy.manual_computation: in/out shardings do not match its operands/results", where)
    grid_now = getattr(ctx, "process_grid", None)
    if grid_now is not None and grid_now.num_replicas * grid_now.num_partitions > 1:
        raise NotImplementedOpError("sdy.manual_computation inside a multi-process run", where)
    layout = cache.get("layout")
    if layout is None:
        shardings = list(ins) + list(outs)
        mesh = find_mesh(ctx.module, shardings[0], where) if shardings else None
        if mesh is None:
            raise InterpreterError("sdy.manual_computation: no sharding names a mesh", where)
        layout = cache["layout"] = _Layout(mesh, a["manual_axes"].params[0], where)
    from .collective import ProcessGrid, _Aborted
    from .evaluator import Interpreter
    grid = ProcessGrid(1, layout.n)
    region = op.regions[0]
    arrays = [np.asarray(x) for x in operands]
    per_device: List[list] = []
    for pos in range(layout.n):
        coords = layout.coords(pos)
        per_device.append([x[_local_slices(s, x.shape, coords, layout, where)] if x.ndim else x
                           for x, s in zip(arrays, ins)])
    results: List[object] = [None] * layout.n
    errors: List[object] = [None] * layout.n

    def work(pos):
        child = Interpreter(ctx.module, trace=ctx.trace, custom_call_handler=ctx.custom_call_handler,
                            limits=ctx.limits)
        child.process_grid = grid
        child.process_id = (0, layout.device_ids[pos])
        child.depth = 1
        pid = child.process_id
        try:
            with np.errstate(all="ignore"):
                results[pos] = child.run_region(region, per_device[pos], parent=None)
            grid.done(pid)
        except _Aborted:
            grid.done(pid, failed=True)
        except BaseException as e:  # noqa: BLE001 - re-raised in the calling thread
            errors[pos] = e
            grid.done(pid, failed=True)

    if layout.n == 1:
        work(0)
        for e in errors:
            if e is not None:
                raise e
    else:
        run_threads(work, [(i,) for i in range(layout.n)], errors)
    if any(r is None for r in results):
        raise InterpreterError("sdy.manual_computation: a device's run was aborted", where)
    out = []
    for k, (res, s) in enumerate(zip(op.results, outs)):
        shape = tuple(res.type.shape)
        first = np.asarray(results[0][k])
        full = np.empty(shape, dtype=first.dtype)
        for pos in range(layout.n):
            coords = layout.coords(pos)
            if not _is_representative(s, coords, layout):
                continue
            local = np.asarray(results[pos][k])
            sl = _local_slices(s, shape, coords, layout, where) if len(shape) else ()
            if full[sl].shape != local.shape:
                raise InterpreterError(f"sdy.manual_computation: result #{k} of a device has shape {local.shape}, "
                                       f"its shard of {shape} is {full[sl].shape}", where)
            full[sl] = local
        out.append(full)
    return out
