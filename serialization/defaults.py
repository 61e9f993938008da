"""The values upstream's StableHLO -> VHLO legalization fills in for attributes that are absent
(and its VHLO -> StableHLO step drops again), derived from the spec: an op attribute's
`default:` (spec/ops), an enum's default and a struct field's default (spec/attributes.yaml),
read through the attribute's kind. What the spec leaves to the op's semantics is derived here by
kind: an absent optional array, string or list is empty, an absent unit attribute false, and the
window attributes of an op with spatial dimensions are 1 (strides, dilations), 0 (padding) or
false (reversal) per dimension."""
from __future__ import annotations

from typing import Dict, Optional

import numpy as np

from stablehlo_ref import spec as S
from stablehlo_ref.serialization.op_mapping import _CHANNEL_FIELDS, flattened_structs, tables
from stablehlo_ref.serialization.vhlo_codec import enum_attr
from stablehlo_ref.serialization.vhlo_values import (NONE_TYPE_ATTR, VAttr, _bool, _bool_tensor, _f64_raw, _i64,
                                                     _i64_tensor, _string)

_EMPTY_ARRAY = VAttr("array_v1", ((),))
_EMPTY_DICT = VAttr("dict_v1", ((),))

# custom_call API versions newer than the first StableHLO (the typed FFI): their backend_config
# is a dictionary (upstream's getBackendConfigOrDefault)
_DICT_CONFIG_APIS = frozenset(enum_attr(S.enum("custom_call_api_version").name, c.name)
                              for c in S.enum("custom_call_api_version").cases if c.since is not None)


def _struct_value(kind: str, default) -> VAttr:
    """A struct attribute with every field at its default (result_accuracy)."""
    st = S.struct(kind)
    vals = {f.name: f.default for f in st.fields}
    return VAttr(st.vhlo.split(".", 1)[1], (_f64_raw(float(vals["atol"])), _f64_raw(float(vals["rtol"])),
                                            int(vals["ulps"]), enum_attr(st.field("mode").kind, vals["mode"])))


def _from_spec_default(kind: str, default) -> Optional[VAttr]:
    """The VHLO value of an op attribute's spec default, by the attribute's kind."""
    if kind == "i1":
        return _bool(default)
    if kind in ("i32", "i64"):
        return _i64(default)
    if kind == "string":
        return _string(default)
    if kind in ("array", "output_operand_aliases") and not default:
        return _EMPTY_ARRAY
    if kind == "dictionary" and not default:
        return _EMPTY_DICT
    if kind in S.load().enums:
        return enum_attr(kind, default)
    if kind in S.load().structs:
        return _struct_value(kind, default)
    return None


def _spatial_rank(short: str, attrs) -> Optional[int]:
    """The number of window dimensions of an op with a window (None: the op has none)."""
    if short in ("convolution", "dynamic_conv"):
        a = attrs.get("input_spatial_dimensions")
        return 0 if a is None or not a.args[0].args[0] else int(np.prod(a.args[0].args[0]))
    if short in ("reduce_window", "select_and_scatter"):
        a = attrs.get("window_dimensions")
        return int(a.args[0].args[0][0]) if a is not None and a.args[0].args[0] else 0
    return None


def _window_default(kind: str, name: str, n: int) -> Optional[VAttr]:
    if kind == "dense_bool_array":
        return _bool_tensor([False] * n)
    if kind == "dense_i64_elements":
        return _i64_tensor([0] * (2 * n), (n, 2))
    if kind == "dense_i64_array" and name != "window_dimensions":
        return _i64_tensor([1] * n)
    return None


def _absent_optional(kind: str) -> Optional[VAttr]:
    """The VHLO value of an optional attribute without a spec default, by its kind."""
    if kind in ("array", "output_operand_aliases"):
        return _EMPTY_ARRAY
    if kind == "string":
        return _string("")
    if kind == "unit":
        return _bool(False)
    if kind in ("dense_i64_array", "dense_i64_elements"):
        return _i64_tensor([])
    if kind == "precision_config":       # one precision per operand (lhs, rhs)
        return VAttr("array_v1", ((enum_attr("precision"),) * 2,))
    e = S.load().enums.get(kind)
    if e is not None and e.default is not None:
        return enum_attr(kind, e.default)
    return None


def _field_default(opname: str, name: str) -> Optional[VAttr]:
    """The default of a field of a struct attribute that VHLO spreads out as op attribute `name`,
    when the struct is optional in the op or the field was added after the struct."""
    for attr, st in flattened_structs(opname):
        field = _CHANNEL_FIELDS.get(name, name) if st.name == "channel_handle" else name
        if field not in st.field_names:
            continue
        f = st.field(field)
        if not (attr.optional or f.since is not None):
            return None
        if not f.has_default:
            return NONE_TYPE_ATTR        # an absent dot algorithm: every field none
        if f.kind == "i64":
            return _i64(f.default)
        if f.kind == "i64_list":
            return _i64_tensor(list(f.default))
    return None


_DEFAULTS: Dict[tuple, object] = {}
_BY_RANK = object()


def _rule(short: str, name: str):
    """What default_value returns for (op, attribute) when it does not depend on other
    attributes: a VAttr, None, or a (kind, name) pair for a window attribute."""
    key = (short, name)
    r = _DEFAULTS.get(key, _BY_RANK)
    if r is not _BY_RANK:
        return r
    opname = tables().stablehlo_name(short)
    r = None
    if opname is not None:
        ospec = S.op(opname)
        a = next((x for x in ospec.attributes if x.name == name), None)
        if a is not None and a.default is not None:
            r = _from_spec_default(a.kind, a.default)
        elif a is not None and a.optional:
            if a.kind in ("dense_i64_array", "dense_i64_elements", "dense_bool_array") and \
                    _spatial_rank(short, {}) is not None:     # a window attribute
                r = (a.kind, name)
            elif a.kind != "any":
                r = _absent_optional(a.kind)
        elif a is None:
            r = _field_default(opname, name)
    _DEFAULTS[key] = r
    return r


def window_kind(op_short: str, name: str) -> Optional[str]:
    """The kind of a window attribute (its default depends on the op's rank), else None."""
    r = _rule(op_short, name)
    return r[0] if r.__class__ is tuple and r[1] != "window_dimensions" else None


def default_value(op_short: str, name: str, attrs: Dict[str, VAttr]) -> Optional[VAttr]:
    """The VHLO value upstream fills in for attribute `name` of `op_short` when absent."""
    if name == "backend_config" and op_short == "custom_call":
        return _EMPTY_DICT if attrs.get("api_version") in _DICT_CONFIG_APIS else _string("")
    r = _rule(op_short, name)
    if r.__class__ is tuple:
        return _window_default(r[0], r[1], _spatial_rank(op_short, attrs))
    return r
