"""Attributes that hold their op's default value (the spec's `default:`).

Upstream's printer leaves such attributes out of a declarative format's attr-dict, and its
deserializer drops them, so `{version = 0 : i32}` and no attribute at all are the same op;
structural equality treats them so."""
from __future__ import annotations

from functools import lru_cache
from typing import Any, Dict

from .attributes import (CUSTOM_CALL_API_VERSIONS, ArrayAttr, Attribute, BoolAttr, DictAttr, EnumAttr,
                         FloatAttr, IntegerAttr, StringAttr, StructAttr)

_API_VERSIONS = {name: i for i, name in enumerate(CUSTOM_CALL_API_VERSIONS)}
_NONE = object()


@lru_cache(maxsize=None)
def _defaults(op_name: str) -> Dict[str, Any]:
    from .. import spec
    if not spec.has_op(op_name):
        return {}
    return {a.name: a.default for a in spec.op(op_name).attributes if a.default is not None}


def _struct_value(v) -> Any:
    if isinstance(v, StructAttr) and len(v.fields) == 1:
        return v.fields[0][1]
    if isinstance(v, EnumAttr):
        return v.value
    return v


def default_of(op_name: str, attr_name: str) -> Any:
    """The spec's default value of an op's attribute (KeyError when the spec gives none)."""
    return _defaults(op_name)[attr_name]


def equals_default(attr: Attribute, default: Any) -> bool:
    if isinstance(default, bool):
        return isinstance(attr, BoolAttr) and attr.value is default
    if isinstance(default, (int, float)):
        return isinstance(attr, (IntegerAttr, FloatAttr)) and not isinstance(attr, BoolAttr) and attr.value == default
    if isinstance(default, str):
        if isinstance(attr, StringAttr):
            return attr.value == default
        if isinstance(attr, EnumAttr):
            return attr.value == default
        if isinstance(attr, IntegerAttr) and default in _API_VERSIONS:
            return attr.value == _API_VERSIONS[default]
        if isinstance(attr, StructAttr) and attr.name == "result_accuracy":
            f = dict(attr.fields)
            return (f.get("atol", 0.0) == 0 and f.get("rtol", 0.0) == 0 and f.get("ulps", 0) == 0
                    and _struct_value(f.get("mode", default)) == default)
        return False
    if isinstance(default, dict) and not default:
        return isinstance(attr, DictAttr) and not attr.entries
    if isinstance(default, (list, tuple)) and not default:
        return isinstance(attr, ArrayAttr) and not attr.elements
    return False


def is_default(op_name: str, attr_name: str, attr: Attribute) -> bool:
    """Whether `attr`, held by an `op_name` op under `attr_name`, is that op's default."""
    d = _defaults(op_name).get(attr_name, _NONE)
    return d is not _NONE and equals_default(attr, d)


def without_defaults(op_name: str, attributes: Dict[str, Attribute]) -> Dict[str, Attribute]:
    ds = _defaults(op_name)
    if not ds:
        return attributes
    return {k: v for k, v in attributes.items() if k not in ds or not equals_default(v, ds[k])}
