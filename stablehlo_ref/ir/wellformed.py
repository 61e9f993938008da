"""Is an op built the way its spec entry says — attributes of the declared kinds (enums of the
right enum with a known case, structs with fields of the right kinds), values and types that
are IR objects, locations that are locations? This is shape, not meaning: the verifier checks
the constraints. The bytecode reader refuses what is not well-formed (an artifact can put any
attribute anywhere), and the printer prints an op that is not well-formed in the generic form,
whose text holds anything, so that print -> parse gives the same op back."""
from __future__ import annotations

import functools
from typing import Optional

from .. import spec
from .attributes import (ArrayAttr, Attribute, BoolAttr, DenseArrayAttr, DenseElementsAttr,
                         DenseResourceAttr, DictAttr, EnumAttr, FloatAttr, IntegerAttr, Location,
                         StringAttr, StructAttr, SymbolRefAttr, TypeAttr, UnitAttr)
from .types import FunctionType, Type

_INTS = ("i64", "i32", "ui64", "ui32")


@functools.lru_cache(maxsize=None)
def enum_cases(kind: str):
    """The case names of the spec's enum `kind` (None for a kind the spec does not define)."""
    try:
        return frozenset(c.name for c in spec.enum(kind).cases)
    except (KeyError, spec.SpecError):
        return None


@functools.lru_cache(maxsize=None)
def _struct_fields(kind: str):
    """name -> field kind, for a struct kind named by its spec name or its mnemonic."""
    for st in spec.structs():
        if kind in (st.name, st.mnemonic):
            return {f.name: f.kind for f in st.fields}, {st.name, st.mnemonic}
    return None


def struct_field_kind(struct: str, field: str) -> Optional[str]:
    """The spec's kind of `field` of struct `struct` (None if either is unknown)."""
    known = _struct_fields(struct)
    return None if known is None else known[0].get(field)


def _field_ok(kind: str, v) -> bool:
    if v is None:
        return True                       # an omitted field (its default)
    if kind == "i64":
        # (a typed literal of i1, `-1 : i1`, is a boolean: not an integer field's value)
        return isinstance(v, int) and not isinstance(v, bool) or (
            isinstance(v, IntegerAttr) and not isinstance(v.value, bool) and getattr(v.type, "name", "") != "i1")
    if kind == "i64_list":
        return isinstance(v, (tuple, list)) and all(isinstance(x, int) and not isinstance(x, bool) for x in v) \
            or isinstance(v, (DenseArrayAttr, ArrayAttr))
    if kind == "f64":
        return isinstance(v, (int, float)) and not isinstance(v, bool) or isinstance(v, (FloatAttr, IntegerAttr))
    if kind == "bool":
        return isinstance(v, (bool, BoolAttr, IntegerAttr, UnitAttr))
    if kind == "type":
        return isinstance(v, (Type, TypeAttr))
    cases = enum_cases(kind)
    if cases is not None:
        if isinstance(v, EnumAttr):
            return v.value in cases
        if isinstance(v, StructAttr):
            return v.get("value") in cases
        return isinstance(v, str) and v in cases
    return True


def struct_problem(a: StructAttr, kind: Optional[str] = None) -> Optional[str]:
    """Why a struct attribute is not one of the spec's `kind` structs (None if it is)."""
    known = _struct_fields(kind or a.name)
    if known is None:
        return None
    fields, names = known
    if kind is not None and a.name not in names:
        return f"expected #{a.dialect}.{kind}, got #{a.dialect}.{a.name}"
    for name, v in a.fields:
        fk = fields.get(name)
        if fk is None:
            return f"#{a.name} has no field '{name}'"
        if not _field_ok(fk, v):
            return f"field '{name}' of #{a.name} must be {fk.replace('_', ' ')}, got {v!r}"
    return None


def attr_problem(kind: str, a) -> Optional[str]:
    """Why `a` is not an attribute of the spec's `kind` (None if it is)."""
    if not isinstance(a, Attribute):
        return f"expected an attribute, got {type(a).__name__}"
    ok = True
    if kind in ("dense_i64_array", "dense_bool_array"):
        ok = isinstance(a, DenseArrayAttr) and getattr(a.element_type, "name", None) == \
            ("i64" if kind == "dense_i64_array" else "i1")
    elif kind in _INTS:
        # MLIR's I64Attr/I32Attr/UI64Attr: the integer's own type is part of the attribute
        # (`dimension = 1 : i1` is not an i64 attribute, and would print as `true`)
        ok = isinstance(a, IntegerAttr) and getattr(a.type, "name", "i64") == kind
    elif kind == "i1":
        ok = isinstance(a, (BoolAttr, UnitAttr, IntegerAttr))
    elif kind in ("f32", "f64"):        # F32Attr/F64Attr: a float of that type
        ok = isinstance(a, FloatAttr) and getattr(a.type, "name", kind) == kind
    elif kind == "string":
        ok = isinstance(a, StringAttr)
    elif kind == "unit":
        ok = isinstance(a, (UnitAttr, BoolAttr))
    elif kind in ("dense_i64_elements", "dense_elements"):
        ok = isinstance(a, (DenseElementsAttr, DenseResourceAttr))
    elif kind == "replica_groups":      # (or, since 1.13, #stablehlo.replica_group_mesh_axes)
        ok = isinstance(a, (DenseElementsAttr, DenseResourceAttr, StructAttr))
    elif kind in ("array", "precision_config", "output_operand_aliases"):
        ok = isinstance(a, ArrayAttr)
        if ok and kind == "precision_config":
            cases = enum_cases("precision")
            ok = all(isinstance(e, EnumAttr) and e.value in cases or
                     isinstance(e, StructAttr) and e.get("value") in cases for e in a.elements)
        if ok and kind == "output_operand_aliases":
            ok = all(isinstance(e, StructAttr) and struct_problem(e, "output_operand_alias") is None
                     for e in a.elements)
    elif kind == "symbol_ref":
        ok = isinstance(a, (SymbolRefAttr, StringAttr))
    elif kind == "type":
        ok = isinstance(a, TypeAttr)
    elif kind == "dictionary":
        ok = isinstance(a, DictAttr)
    elif kind == "custom_call_api_version":
        ok = isinstance(a, (IntegerAttr, EnumAttr, StructAttr))
    elif enum_cases(kind) is not None:
        cases = enum_cases(kind)
        if isinstance(a, EnumAttr):
            ok = a.kind == kind and a.value in cases
        elif isinstance(a, StructAttr):
            ok = a.name == kind and a.get("value") in cases
        else:
            ok = False
    elif _struct_fields(kind) is not None:
        if not isinstance(a, StructAttr):
            ok = False
        else:
            return struct_problem(a, kind)
    if not ok:
        return f"must be {kind.replace('_', ' ')}, got {a}"
    return None


def op_problem(op) -> Optional[str]:
    """Why `op` is not built as its spec entry says (None if it is, or the op is not ours)."""
    for v in op.operands:
        if not isinstance(getattr(v, "type", None), Type):
            return "an operand without a type"
    for r in op.results:
        if not isinstance(r.type, Type):
            return "a result whose type is not a type"
    if not isinstance(op.location, Location):
        return f"location {op.location!r} is not a location"
    name = op.name
    if name == "func.func":
        return _func_problem(op)
    if name == "builtin.module":
        n = op.attributes.get("sym_name")
        if n is not None and not isinstance(n, StringAttr):
            return "sym_name must be a string"
        if len(op.regions) != 1 or len(op.regions[0].blocks) != 1 or op.regions[0].blocks[0].arguments:
            return "a module has one region of one block without arguments"
        return None
    if not spec.has_op(name):
        return None
    s = spec.op(name)
    for a in s.attributes:
        v = op.attributes.get(a.name)
        if v is None or a.kind == "any":
            continue
        p = attr_problem(a.kind, v)
        if p is not None:
            return f"attribute '{a.name}' {p}"
    return None


def _func_problem(op) -> Optional[str]:
    a = op.attributes
    name = a.get("sym_name")
    if not isinstance(name, StringAttr):
        return "func.func needs a string sym_name"
    ft = a.get("function_type")
    if not isinstance(ft, TypeAttr) or not isinstance(ft.type, FunctionType):
        return "func.func needs a function_type"
    vis = a.get("sym_visibility")
    if vis is not None and not (isinstance(vis, StringAttr) and vis.value in ("public", "private", "nested")):
        return "sym_visibility must be public, private or nested"
    for key, n in (("arg_attrs", len(ft.type.inputs)), ("res_attrs", len(ft.type.results))):
        v = a.get(key)
        if v is not None and not (isinstance(v, ArrayAttr) and len(v.elements) == n
                                  and all(isinstance(d, DictAttr) for d in v.elements)):
            return f"{key} must be an array of {n} dictionaries"
    if len(op.regions) != 1:
        return "func.func has one region"
    if op.regions[0].blocks:
        args = op.regions[0].blocks[0].arguments
        if [x.type for x in args] != list(ft.type.inputs):
            return "the entry block's arguments differ from the function type's inputs"
    return None


def _count_problem(what: str, n: int, members) -> Optional[str]:
    lo = sum(1 for m in members if not m.variadic and not m.optional)
    hi = None if any(m.variadic for m in members) else len(members)
    if n < lo or (hi is not None and n > hi):
        want = f"at least {lo}" if hi is None else (str(lo) if lo == hi else f"{lo} to {hi}")
        return f"has {n} {what}s, its spec says {want}"
    return None


def shape_problem(op) -> Optional[str]:
    """op_problem, and operand, result and region counts as the spec declares them."""
    p = op_problem(op)
    if p is not None or not spec.has_op(op.name):
        return p
    s = spec.op(op.name)
    if op.dialect in ("stablehlo", "chlo", "sdy"):
        from .types import ElementType
        for v in list(op.operands) + list(op.results):
            if isinstance(v.type, (ElementType, FunctionType)):    # (never their values)
                return f"a value of builtin type {v.type}"
    p = (_count_problem("operand", len(op.operands), s.operands)
         or _count_problem("result", len(op.results), s.results))
    if p is None and not any(r.variadic for r in s.regions) and len(op.regions) != len(s.regions):
        p = f"has {len(op.regions)} regions, its spec says {len(s.regions)}"
    return p


def _plain_attr(a, depth: int = 0) -> bool:
    """An Attribute of this IR all the way down (no undecoded foreign value inside)."""
    if depth > 64 or not isinstance(a, Attribute):
        return False
    if isinstance(a, ArrayAttr):
        return all(_plain_attr(e, depth + 1) for e in a.elements)
    if isinstance(a, DictAttr):
        return all(isinstance(k, str) and _plain_attr(v, depth + 1) for k, v in a.entries)
    if isinstance(a, TypeAttr):
        return _plain_type(a.type, depth + 1)
    if isinstance(a, StructAttr):
        return all(not hasattr(v, "kind") or isinstance(v, (Attribute, Type)) for _, v in a.fields)
    return True


def _plain_type(t, depth: int = 0) -> bool:
    from .types import ElementType, QuantizedType, TensorType, TupleType, UnrankedTensorType
    if depth > 64 or not isinstance(t, Type):
        return False
    if isinstance(t, (TensorType, UnrankedTensorType)):
        et = t.element_type
        if isinstance(et, QuantizedType):
            return _plain_quantized(et)
        return isinstance(et, ElementType)
    if isinstance(t, QuantizedType):
        return _plain_quantized(t)
    if isinstance(t, TupleType):
        return all(_plain_type(x, depth + 1) for x in t.types)
    if isinstance(t, FunctionType):
        return all(_plain_type(x, depth + 1) for x in (*t.inputs, *t.results))
    return True


def _plain_quantized(q) -> bool:
    from .types import ElementType
    if not isinstance(q.storage_type, ElementType) or not isinstance(q.expressed_type, ElementType):
        return False
    if (q.storage_min is None) != (q.storage_max is None):
        return False
    if q.storage_min is not None and not (type(q.storage_min) is int and type(q.storage_max) is int):
        return False
    return len(q.scales) == len(q.zero_points) and len(q.scales) >= 1


def read_problem(op) -> Optional[str]:
    """What the bytecode reader refuses in an op it built: shape_problem, and attributes, types
    and block arguments that are not plain IR."""
    for k, v in op.attributes.items():
        if not _plain_attr(v):
            return f"attribute '{k}' holds {type(v).__name__}, which has no StableHLO meaning here"
    for r in op.results:
        if not _plain_type(r.type):
            return f"a result of type {r.type!r}, which has no StableHLO meaning here"
    for region in op.regions:
        for b in region.blocks:
            for a in b.arguments:
                if not _plain_type(a.type):
                    return f"a block argument of type {a.type!r}, which has no StableHLO meaning here"
            for loc in b.arg_locations:
                if loc is not None and not isinstance(loc, Location):
                    return "a block argument location that is not a location"
    return shape_problem(op)
