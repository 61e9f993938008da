"""The values upstream's StableHLO -> VHLO legalization fills in for attributes that are
absent (and its VHLO -> StableHLO step drops again), read from the spec's attribute defaults."""
from __future__ import annotations

from typing import Dict, Optional

import numpy as np

from stablehlo_ref.serialization.op_mapping import _DOT_ALGORITHM_FIELDS
from stablehlo_ref.serialization.vhlo_values import (DEFAULT_ACCURACY, NONE_TYPE_ATTR, VAttr, _bool, _i64,
                                                     _i64_tensor, _string, _bool_tensor)

def _n_spatial(attrs) -> int:
    a = attrs.get("input_spatial_dimensions")
    if a is None:
        return 0
    return int(np.prod(a.args[0].args[0])) if a.args[0].args[0] else 0


def _window_rank(attrs) -> int:
    a = attrs.get("window_dimensions")
    return int(a.args[0].args[0][0]) if a is not None and a.args[0].args[0] else 0


_DEFAULT_OPS = {
    "sym_visibility": {"func"}, "arg_attrs": {"func"}, "res_attrs": {"func"},
    "lower": {"cholesky"}, "is_stable": {"sort"}, "dimension": {"sort"},
    "version": {"composite"}, "composite_attributes": {"composite"},
    "has_side_effect": {"custom_call"}, "backend_config": {"custom_call"}, "api_version": {"custom_call"},
    "called_computations": {"custom_call"}, "operand_layouts": {"custom_call"}, "result_layouts": {"custom_call"},
    "output_operand_aliases": {"custom_call"}, "result_tilings": {"custom_call"},
    "indices_are_sorted": {"gather", "dynamic_gather", "scatter"}, "unique_indices": {"scatter"},
    "infeed_config": {"infeed"}, "layout": {"infeed"}, "outfeed_config": {"outfeed"},
    "is_host_transfer": {"send", "recv"}, "source_target_pairs": {"send", "recv"},
    "compare_type": {"compare"},
    "use_global_device_ids": {"all_gather", "all_reduce", "reduce_scatter", "collective_reduce"},
    "has_dynamic_root": {"collective_broadcast", "collective_reduce"},
    "known_expanding_dimensions": {"dynamic_broadcast_in_dim"}, "known_nonexpanding_dimensions": {"dynamic_broadcast_in_dim"},
}


def default_value(op_short: str, name: str, attrs: Dict[str, VAttr]) -> Optional[VAttr]:
    """The VHLO value upstream fills in for attribute `name` of `op_short` when absent."""
    ops = _DEFAULT_OPS.get(name)
    if ops is not None and op_short not in ops:
        return None
    if name == "sym_visibility":
        return _string("")
    if name in ("arg_attrs", "res_attrs", "called_computations", "operand_layouts", "result_layouts",
                "output_operand_aliases", "result_tilings", "layout"):
        return VAttr("array_v1", ((),))
    if name in ("channel_id", "channel_type"):
        return _i64(0)
    if name in ("use_global_device_ids", "has_dynamic_root", "lower", "indices_are_sorted", "unique_indices",
                "is_host_transfer", "has_side_effect"):
        return _bool(False)
    if name == "is_stable":
        return _bool(False)
    if name == "compare_type":
        return VAttr("comparison_type_v1", ("NOTYPE",))
    if name == "version":
        return _i64(0)
    if name == "composite_attributes":
        return VAttr("dict_v1", ((),))
    if name == "backend_config" and attrs.get("api_version") == VAttr("api_version_v1", ("API_VERSION_TYPED_FFI",)):
        return VAttr("dict_v1", ((),))       # upstream's getBackendConfigOrDefault()
    if name in ("backend_config", "infeed_config", "outfeed_config"):
        return _string("")
    if name == "api_version":
        return VAttr("api_version_v1", ("API_VERSION_ORIGINAL",))
    if name == "precision_config":
        return VAttr("array_v1", ((VAttr("precision_v1", ("DEFAULT",)),) * 2,))
    if name in _DOT_ALGORITHM_FIELDS:
        return NONE_TYPE_ATTR
    if name == "result_accuracy":
        return DEFAULT_ACCURACY
    if name in ("known_expanding_dimensions", "known_nonexpanding_dimensions", "source_target_pairs",
                "operand_batching_dims", "start_indices_batching_dims", "input_batching_dims",
                "scatter_indices_batching_dims"):
        return _i64_tensor([])
    if name == "dimension" and op_short == "sort":
        return _i64(-1)
    if op_short in ("convolution", "dynamic_conv"):
        n = _n_spatial(attrs)
        if name in ("window_strides", "lhs_dilation", "rhs_dilation"):
            return _i64_tensor([1] * n)
        if name == "padding":
            return _i64_tensor([0] * (2 * n), (n, 2))
        if name == "window_reversal":
            return _bool_tensor([False] * n)
    if op_short in ("reduce_window", "select_and_scatter"):
        n = _window_rank(attrs)
        if name in ("window_strides", "base_dilations", "window_dilations"):
            return _i64_tensor([1] * n)
        if name == "padding":
            return _i64_tensor([0] * (2 * n), (n, 2))
    return None
