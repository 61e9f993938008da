"""`dense_resource<key>` constants: their values, and inlining them as `dense<...>`.

A module keeps each blob of its `{-# dialect_resources: {builtin: {...}} #-}` section as raw
little-endian element bytes (`Module.resources`, alignment header removed). Upstream's VHLO has
no encoding for `dense_resource`, so a portable artifact can only carry such a constant once it
is inlined (`inline_resources`, or `stablehlo-ref convert --inline-resources`)."""
from __future__ import annotations

import numpy as np

from .attributes import DenseElementsAttr, DenseResourceAttr
from .core import Module, Operation


def resource_array(module: Module, attr: DenseResourceAttr, where: str = "") -> np.ndarray:
    """The (read-only, uncopied) array a `dense_resource` attribute names."""
    from ..errors import StableHLOError
    prefix = f"{where}: " if where else ""
    blob = module.resources.get(attr.key)
    if blob is None:
        have = ", ".join(sorted(module.resources)) or "none"
        raise StableHLOError(f"{prefix}dense_resource blob '{attr.key}' is not in the module's "
                             f"dialect_resources section (have: {have})")
    et = attr.type.element_type
    dtype = np.dtype(et.dtype)
    n = 1
    for d in attr.type.shape:
        n *= d
    if len(blob) != n * dtype.itemsize:
        raise StableHLOError(f"{prefix}dense_resource blob '{attr.key}' holds {len(blob)} bytes; "
                             f"{attr.type} needs {n * dtype.itemsize} ({n} x {dtype.itemsize})")
    return np.frombuffer(blob, dtype=dtype).reshape(tuple(attr.type.shape))


def inline_resources(module: Module) -> int:
    """Replace every `dense_resource` attribute of `module` by the `dense<...>` it holds (in
    place); blobs no longer referenced are dropped. Returns the number of attributes replaced."""
    count = 0

    def visit(op: Operation):
        nonlocal count
        for name, a in list(op.attributes.items()):
            if isinstance(a, DenseResourceAttr):
                op.attributes[name] = DenseElementsAttr(a.type, resource_array(module, a, op.where()))
                op._cache = None
                count += 1
        for region in op.regions:
            for block in region.blocks:
                for o in block.operations:
                    visit(o)

    visit(module.op)
    used = set()
    for op in module.walk():
        used.update(a.key for a in op.attributes.values() if isinstance(a, DenseResourceAttr))
    module.resources = {k: v for k, v in module.resources.items() if k in used}
    return count
