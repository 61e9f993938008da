"""Attributes of the Shardy (`sdy`) dialect, which JAX (Shardy partitioner, on by default since
JAX 0.7) writes into programs: meshes, tensor shardings, manual axes and sharding rules.

One class, `SdyAttr(kind, params)`, holds every sdy attribute; `kind` is the attribute's
mnemonic and `params` its parameters in the order the dialect declares them (and encodes them
in bytecode). Nested sdy attributes (a sharding's dimension shardings, a dimension sharding's
axis references) are `SdyAttr`s themselves, as in MLIR, where each is a separate attribute.

    mesh_axis            (name: str, size: int)
    mesh                 (axes: tuple[mesh_axis], device_ids: tuple[int])
    sub_axis_info        (pre_size: int, size: int)
    axis_ref             (name: str, sub_axis_info: SdyAttr | None)
    dimension_sharding   (axes: tuple[axis_ref], is_closed: bool, priority: int | None)
    sharding             (mesh_or_ref: SymbolRefAttr | mesh, dim_shardings: tuple, replicated_axes: tuple,
                          unreduced_axes: tuple, reduction_op: "sum" | "max" | "min")
    sharding_per_value   (shardings: tuple[sharding])
    manual_axes          (names: tuple[str])
    dim_mapping          (factor_indices: tuple[int])
    tensor_mapping       (dim_mappings: tuple[dim_mapping])
    op_sharding_rule     (factor_sizes, operand_mappings, result_mappings, reduction_factors,
                          need_replication_factors, permutation_factors,
                          blocked_propagation_factors, is_custom_rule)
    axis_ref_list        (axes: tuple[axis_ref])

The text form (parse and print) is in text/syntax_sdy.py, the bytecode in
serialization/sdy_codec.py."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Optional, Tuple

from .attributes import Attribute

KINDS = ("mesh_axis", "mesh", "sub_axis_info", "axis_ref", "dimension_sharding", "sharding",
         "sharding_per_value", "manual_axes", "dim_mapping", "tensor_mapping", "op_sharding_rule",
         "axis_ref_list")

REDUCTION_OPS = ("sum", "max", "min")


@dataclass(frozen=True)
class SdyAttr(Attribute):
    """One attribute of the sdy dialect (see the module docstring for `params` per kind)."""

    kind: str
    params: tuple

    # -- accessors used by the verifier and interpreter
    @property
    def mesh_axes(self) -> Tuple[Tuple[str, int], ...]:
        """(name, size) of a mesh's axes."""
        assert self.kind == "mesh"
        return tuple((a.params[0], a.params[1]) for a in self.params[0])

    @property
    def device_ids(self) -> Tuple[int, ...]:
        assert self.kind == "mesh"
        return self.params[1]


def mesh_axis(name: str, size: int) -> SdyAttr:
    return SdyAttr("mesh_axis", (name, int(size)))


def mesh(axes, device_ids=()) -> SdyAttr:
    return SdyAttr("mesh", (tuple(mesh_axis(n, s) for n, s in axes), tuple(int(d) for d in device_ids)))


def axis_ref(name: str, sub: Optional[Tuple[int, int]] = None) -> SdyAttr:
    return SdyAttr("axis_ref", (name, None if sub is None else SdyAttr("sub_axis_info", (int(sub[0]), int(sub[1])))))


def dim_sharding(axes=(), closed: bool = True, priority: Optional[int] = None) -> SdyAttr:
    return SdyAttr("dimension_sharding", (tuple(axes), bool(closed), priority))


def sharding(mesh_or_ref, dims=(), replicated=(), unreduced=(), reduction: str = "sum") -> SdyAttr:
    return SdyAttr("sharding", (mesh_or_ref, tuple(dims), tuple(replicated), tuple(unreduced), reduction))


def mesh_size(m: SdyAttr) -> int:
    """Number of devices of a mesh (1 for a mesh without axes, as Shardy counts it)."""
    n = 1
    for _, s in m.mesh_axes:
        n *= s
    return n


def axis_size(ref: SdyAttr, axes: Dict[str, int]) -> int:
    """The size of an axis reference (a whole axis or a sub-axis) in a mesh given as name -> size."""
    name, sub = ref.params
    if sub is not None:
        return sub.params[1]
    return axes[name]
