"""The verifier's machinery: the generic checks every op gets from its spec entry (operand,
result, attribute and region counts and kinds, operand types, well-formed quantized types), the
same-type trait checks registered for ops without a verifier of their own, and the module walk
behind `verify` and `collect`. The per-op checking functions come from the `registry`."""
from __future__ import annotations

import re
from typing import List, Optional
from .. import spec
from ..errors import VerificationError
from ..ir.sdy import SdyAttr
from ..ir.attributes import (ArrayAttr, BoolAttr, DenseArrayAttr, DenseElementsAttr, DenseResourceAttr, DictAttr,
                             EnumAttr, FloatAttr, IntegerAttr, StringAttr, StructAttr, SymbolRefAttr, TypeAttr,
                             UnitAttr)
from ..ir.core import Module, Operation
from ..ir.types import ElementType, OpaqueType, QuantizedType, TensorType, TokenType, TupleType, UnrankedTensorType
from .collective import mesh_symbol_problems
from .inference import inferred_types_problem
from .quantized import type_problem
from .registry import VERIFIERS, Check, Violation
from .shapes import SAME_TYPE_TRAITS, bounds, elem, same_type_traits

def make_error(op: Operation, cid: str, message: str, attr: Optional[str] = None) -> VerificationError:
    """The error of `op`; located at the op, or, for a declared attribute constraint of an
    attribute the op's custom form spells in its attribute dictionary, at that dictionary."""
    label = f"{cid}: " if cid else ""
    where = op.where()
    at = getattr(op, "attr_dict_source", None)
    if attr is not None and at is not None and attr in at[1] and where == op.source:
        where = at[0]
    err = VerificationError(f"{op.name}: {label}{message}", where)
    err.op = op
    err.constraint = cid
    err.source = where
    return err


# ------------------------------------------------------------------ operand type categories

_CLASS_WORDS = {"pred", "int", "sint", "uint", "fp", "float", "complex", "quantized", "index",
                "i32", "ui32", "fp32", "fp64", "i1"}


def _elem_classes(et) -> set:
    """The category words an element type answers to."""
    if isinstance(et, QuantizedType):
        return {"quantized"}
    if not isinstance(et, ElementType):
        return set()
    k = et.kind
    out = set()
    if k == "bool":
        out |= {"pred", "i1"}
    elif k == "signed":
        out |= {"int", "sint"}
        if et.bits == 32:
            out.add("i32")
    elif k == "unsigned":
        out |= {"int", "uint"}
        if et.bits == 32:
            out.add("ui32")
    elif k == "index":
        out |= {"index"}
    elif k == "float":
        out |= {"fp", "float"}
        if et.name == "f32":
            out.add("fp32")
        if et.name == "f64":
            out.add("fp64")
    elif k == "complex":
        out.add("complex")
    return out


def _parse_category(cat: str):
    """(allowed element class words or None for any, rank or None, static, allow_quantized, other
    kinds allowed) for a spec type name; None when the name is not understood (accept all)."""
    if cat in ("any", "future", "custom_call_value") or "buffer" in cat:
        return None
    kinds = set()
    if "token" in cat:
        kinds.add("token")
    if "tuple" in cat:
        kinds.add("tuple")
    if cat in ("token",):
        return (set(), None, False, False, {"token"}, False)
    if cat in ("tuple",):
        return (set(), None, False, False, {"tuple"}, False)
    if cat in ("dimension_tensor", "static_dimension_tensor"):
        # a 1-d tensor of integers or index values (a shape); static when the name says so
        return ({"int", "index"}, 1, cat.startswith("static"), False, set(), True)
    rank = None
    if "scalar" in cat or cat.startswith("0d"):
        rank = 0
    elif cat.startswith("1d") or "_1d_" in cat:
        rank = 1
    elif "_2d_" in cat:
        rank = 2
    static = "bounded" not in cat and ("static_shape" in cat or cat.startswith("static_1d") or cat.startswith("static_2d"))
    m = re.search(r"tensor_of\(([^)]*)\)", cat)
    if m:
        words = {w.strip() for w in m.group(1).split(",")}
        classes = set()
        for w in words:
            if w == "quantized_int":
                classes.add("quantized")
            elif w in _CLASS_WORDS:
                classes.add(w)
            else:
                return None
        return (classes, rank, static, "quantized" in classes, kinds, True)
    base = cat
    for pre in ("static_shape_", "static_1d_", "static_2d_", "scalar_", "any_", "ranked_"):
        if base.startswith(pre):
            base = base[len(pre):]
    if base in ("tensor", "tensor_or_per_axis_quantized_tensor", "tensor_or_token",
                "tensor_or_per_axis_quantized_tensor_or_token", "tensor_or_per_axis_quantized_tensor_or_token_or_tuple",
                "tensor_per_axis_quantized_tensor_or_bounded_tensor", "dimension_tensor") or base.startswith("dimension"):
        return (None, rank, static, True, kinds, True)
    if base == "non_quantized_tensor":
        return (None, rank, static, False, kinds, True)
    if not base.endswith("tensor"):
        return None
    words = base[:-len("tensor")].strip("_").replace("_or_", "_").split("_")
    classes = set()
    allow_q = False
    i = 0
    while i < len(words):
        w = words[i]
        if w == "quantized":
            allow_q = True
            classes.add("quantized")
            if i + 1 < len(words) and words[i + 1] == "int":
                i += 1
        elif w == "per" or w == "axis":
            pass
        elif w in _CLASS_WORDS:
            classes.add(w)
        elif w == "":
            pass
        else:
            return None
        i += 1
    if not classes:
        return None
    return (classes, rank, static, allow_q, kinds, True)


def _single_bounded(t) -> bool:
    """Exactly one dynamic dimension, and it has a bound (upstream's hasSingleBoundedDimension)."""
    bs = bounds(t)
    return bs is not None and sum(b is not None for b in bs) == 1 and sum(d is None for d in t.shape) == 1


_CAT_CACHE: dict = {}


def _holds_index(t) -> bool:
    """A tensor of `index` (or `tf32`, which names a dot algorithm's precision only) elements, or
    a tuple holding one."""
    if isinstance(t, TupleType):
        return any(_holds_index(x) for x in t.types)
    et = getattr(t, "element_type", None)
    return isinstance(et, ElementType) and (et.kind == "index" or et.name == "tf32")


def type_matches(t, cat: str, dialect=None) -> bool:
    """Whether type `t` is of the spec's category `cat`. StableHLO's tensors are ranked (its
    operand and result kinds are ranked tensor kinds); CHLO's may be unranked."""
    if cat not in _CAT_CACHE:
        _CAT_CACHE[cat] = _parse_category(cat)
    parsed = _CAT_CACHE[cat]
    if isinstance(t, UnrankedTensorType) and dialect == "stablehlo" and cat not in ("any", "custom_call_value"):
        return False
    if dialect in ("stablehlo", "chlo") and cat != "any" and "dimension" not in cat and _holds_index(t):
        # StableHLO and CHLO values hold booleans, integers, floats, complex or quantized
        # elements; `index` only in shape tensors
        return False
    if parsed is None:
        return True
    classes, rank, static, allow_q, kinds, tensors_ok = parsed
    if isinstance(t, TokenType):
        return "token" in kinds
    if isinstance(t, TupleType):
        return "tuple" in kinds
    if isinstance(t, UnrankedTensorType):
        return tensors_ok and rank is None and not static and dialect != "stablehlo"
    if isinstance(t, OpaqueType) and t.text.startswith(("memref<", "vector<")):
        return False  # builtin buffer and vector types are never tensors
    if not isinstance(t, TensorType):
        # other dialects' types are not ours to judge; a builtin scalar (`f64`, `index`), a
        # function type or `none` is never a StableHLO value
        return isinstance(t, OpaqueType)
    if not tensors_ok:
        return False
    if rank is not None and t.rank != rank:
        return False
    if static and not t.is_static:
        return False
    if "bounded" in cat and "static_shape" in cat and not t.is_static and not _single_bounded(t):
        return False   # statically shaped or single bounded dimension
    et = t.element_type
    if isinstance(et, ElementType) and et.name == "tf32":
        # tf32 names a dot algorithm's precision; no StableHLO tensor holds it (upstream's
        # HLO_Float admits 4/6/8/16/32/64-bit floats only)
        return False
    if isinstance(et, QuantizedType):
        if not allow_q:
            return False
        # per-axis quantization only where the category says so
        return et.quantized_dimension is None or "per_axis" in cat
    have = _elem_classes(et)
    if classes is None:
        # a StableHLO tensor holds booleans, integers, floats, complex or quantized values;
        # `index` only in a dimension (shape) tensor
        return "index" not in have or "dimension" in cat
    if "int" in classes and have & {"int"}:
        return True
    if "fp" in classes and "float" in have:
        return True
    return bool(have & classes)


# ------------------------------------------------------------------ attribute kinds

_INT_RANGES = {"i64": (-(1 << 63), (1 << 63) - 1), "i32": (-(1 << 31), (1 << 31) - 1),
               "ui64": (0, (1 << 64) - 1), "ui32": (0, (1 << 32) - 1)}
_ENUM_KINDS = ("comparison_direction", "comparison_type", "fft_type", "rng_distribution", "rng_algorithm",
               "transpose")


def _enum_ok(a, kind: str, dialect=None) -> bool:
    """An enum attribute of `kind` whose value is one of the spec's cases (and, for a StableHLO
    or CHLO op, one of its own dialect's enums: `#chlo<comparison_direction EQ>` is not
    StableHLO's)."""
    if not isinstance(a, EnumAttr) or a.kind != kind:
        return False
    if dialect in ("stablehlo", "chlo") and a.dialect != dialect:
        return False
    try:
        return a.value in {c.name for c in spec.enum(kind).cases}
    except (KeyError, LookupError):
        return True


def _attr_kind_ok(kind: str, a, dialect=None) -> bool:
    if kind.startswith("sdy_"):
        return isinstance(a, SdyAttr) and a.kind == kind[4:]
    if kind in ("dense_i64_array", "dense_bool_array"):
        return isinstance(a, DenseArrayAttr) and getattr(a.element_type, "name", None) == \
            ("i64" if kind == "dense_i64_array" else "i1")
    if kind in ("i64", "i32", "ui64", "ui32"):
        # the integer's type is part of the attribute (I64Attr is a signless i64)
        if not isinstance(a, IntegerAttr) or getattr(a.type, "name", "i64") != kind:
            return False
        lo, hi = _INT_RANGES[kind]
        return lo <= int(a.value) <= hi
    if kind == "precision_config":
        return isinstance(a, ArrayAttr) and all(_enum_ok(e, "precision", dialect) for e in a.elements)
    if kind == "i1":      # BoolAttr (`true`, `1 : i1`)
        return isinstance(a, BoolAttr) or (isinstance(a, IntegerAttr) and getattr(a.type, "name", None) == "i1")
    if kind == "unit":    # present or absent, never `= true`
        return isinstance(a, UnitAttr)
    if kind == "array":
        return isinstance(a, ArrayAttr)
    if kind == "dictionary":
        return isinstance(a, DictAttr)
    if kind == "symbol_ref":      # a flat symbol reference
        return isinstance(a, SymbolRefAttr) and not a.nested
    if kind == "type":
        return isinstance(a, TypeAttr)
    if kind == "custom_call_api_version":     # an i32 enum
        return (isinstance(a, IntegerAttr) and getattr(a.type, "name", None) == "i32"
                and int(a.value) in {c.value for c in spec.enum(kind).cases})
    if kind == "replica_groups":      # i64 elements, or mesh axes
        if isinstance(a, StructAttr):
            return a.name == "replica_group_mesh_axes"
        return _i64_elements(a)
    if kind == "output_operand_aliases":
        return isinstance(a, ArrayAttr) and all(isinstance(e, StructAttr) and e.name == "output_operand_alias"
                                                for e in a.elements)
    if kind in _STRUCT_KINDS:
        return isinstance(a, StructAttr) and a.name == _STRUCT_KINDS[kind]
    if kind in ("f32", "f64"):      # F32Attr/F64Attr: a float of that type
        return isinstance(a, FloatAttr) and getattr(a.type, "name", kind) == kind
    if kind == "string":
        return isinstance(a, StringAttr)
    if kind in _ENUM_KINDS:
        return _enum_ok(a, kind, dialect)
    if kind == "dense_i64_elements":
        return _i64_elements(a)
    if kind == "dense_elements":
        return isinstance(a, (DenseElementsAttr, DenseResourceAttr))
    return True


# attribute kinds that are one struct attribute each: kind -> the struct's mnemonic
_STRUCT_KINDS = {"gather_dimension_numbers": "gather", "scatter_dimension_numbers": "scatter",
                 "dot_dimension_numbers": "dot", "conv_dimension_numbers": "conv",
                 "ragged_dot_dimension_numbers": "ragged_dot", "channel_handle": "channel_handle",
                 "dot_algorithm": "dot_algorithm", "result_accuracy": "result_accuracy"}


def _i64_elements(a) -> bool:
    """A dense (or resource) elements attribute of signless 64-bit integers (I64ElementsAttr)."""
    if not isinstance(a, (DenseElementsAttr, DenseResourceAttr)):
        return False
    return getattr(elem(a.type), "name", None) == "i64"


# ------------------------------------------------------------------ generic checks from the spec

def _count_range(members):
    lo = sum(1 for m in members if not m.variadic and not m.optional)
    hi = None if any(m.variadic for m in members) else sum(1 for _ in members)
    return lo, hi


def _expect_count(check, what, n, lo, hi):
    if hi is None:
        check(n >= lo, "", f"expects at least {lo} {what}(s), got {n}")
    elif lo == hi:
        check(n == lo, "", f"expects {lo} {what}(s), got {n}")
    else:
        check(lo <= n <= hi, "", f"expects {lo} to {hi} {what}s, got {n}")


def generic_checks(op: Operation, check: Check, spec_op) -> None:
    lo, hi = _count_range(spec_op.operands)
    _expect_count(check, "operand", len(op.operands), lo, hi)
    lo, hi = _count_range(spec_op.results)
    _expect_count(check, "result", len(op.results), lo, hi)
    nreg = len(op.regions)
    if any(r.variadic for r in spec_op.regions):
        check(nreg >= len(spec_op.regions) - 1, "", f"expects at least {len(spec_op.regions) - 1} region(s), got {nreg}")
    else:
        check(nreg == len(spec_op.regions), "", f"expects {len(spec_op.regions)} region(s), got {nreg}")
    for a in spec_op.attributes:
        val = op.attributes.get(a.name)
        if val is None:
            check(a.optional or a.default is not None, "", f"requires attribute '{a.name}'")
            continue
        check(_attr_kind_ok(a.kind, val, op.dialect), "", f"attribute '{a.name}' must be {a.kind.replace('_', ' ')}, got {val}",
              attr=a.name)
    ra = op.attributes.get("result_accuracy")
    if isinstance(ra, StructAttr):
        mode = ra.get("mode")
        mode = mode.get("value") if isinstance(mode, StructAttr) else getattr(mode, "value", mode)
        if mode == "HIGHEST":
            check(all(float(ra.get(k, 0) or 0) == 0 for k in ("atol", "rtol", "ulps")), "",
                  "result_accuracy with mode HIGHEST must have all tolerances zero")
    # Operand and result type categories, when the members map one to one onto the values.
    for members, values, what in ((spec_op.operands, op.operands, "operand"),
                                  (spec_op.results, op.results, "result")):
        if not members:
            continue
        variadic = [k for k, m in enumerate(members) if m.variadic]
        if any(m.optional for m in members) or len(variadic) > 2:
            continue            # which value is which member is not known from counts alone
        if len(variadic) == 2:
            # two variadic groups of one size (reduce's inputs and init values, scatter's inputs
            # and updates), unless attributes give the sizes
            fixed = len(members) - 2
            if spec_op.has_trait("attr_sized_operands") or (len(values) - fixed) % 2:
                continue
            half = (len(values) - fixed) // 2
            expanded = []
            for m in members:
                expanded.extend([m] * half if m.variadic else [m])
            pairs = list(zip(expanded, values))
        elif not variadic:
            if len(members) != len(values):
                continue
            pairs = list(zip(members, values))
        else:
            # the members before the variadic one take the first values, those after it the
            # last values, the variadic member the rest
            k = variadic[0]
            after = len(members) - k - 1
            if len(values) < len(members) - 1:
                continue
            middle = values[k:len(values) - after]
            pairs = (list(zip(members[:k], values[:k])) + [(members[k], v) for v in middle]
                     + list(zip(members[k + 1:], values[len(values) - after:])))
        for i, (m, v) in enumerate(pairs):
            check(type_matches(v.type, m.type, op.dialect), "",
                  f"{what} #{i} ({m.name}) must be {m.type.replace('_', ' ')}, got {v.type}")


# ------------------------------------------------------------------ trait checks

def labelled_trait_check(op: Operation, check: Check) -> None:
    """The same-type traits of an op whose spec entry states them as its C1."""
    same_type_traits(op, check, "C1")


def unlabelled_trait_check(op: Operation, check: Check) -> None:
    """The same-type traits of an op whose spec entry has no constraint C1 (CHLO, legacy ops)."""
    same_type_traits(op, check, "")


def register_trait_checks() -> None:
    """Give every spec op that has a same-type trait and no verifier of its own the trait check;
    run once the verifier modules have registered their ops."""
    for name in spec.ops():
        name = name if isinstance(name, str) else name.name
        s = spec.op(name)
        if name in VERIFIERS or not any(s.has_trait(t) for t in SAME_TYPE_TRAITS):
            continue
        has_c1 = any(c.id == "C1" for c in s.constraints)
        VERIFIERS[name] = labelled_trait_check if has_c1 else unlabelled_trait_check


# ------------------------------------------------------------------ the walk

def _well_formed_types(op: Operation, check: Check) -> None:
    """Every tensor type an op uses must be well formed on its own: its bounds encoding and its
    quantized element type (upstream checks these as the type is built)."""
    for what, values in (("operand", op.operands), ("result", op.results)):
        for i, v in enumerate(values):
            msg = type_problem(v.type)
            check(msg is None, "", f"{what} #{i}: {msg}")
    for region in op.regions:
        for block in region.blocks:
            for j, a in enumerate(block.arguments):
                msg = type_problem(a.type)
                check(msg is None, "", f"block argument #{j}: {msg}")


def _verify_op(op: Operation, module: Optional[Module], func=None) -> Optional[VerificationError]:
    check = Check(op, module, func)
    try:
        if spec.has_op(op.name):
            generic_checks(op, check, spec.op(op.name))
        _well_formed_types(op, check)
        fn = VERIFIERS.get(op.name)
        if fn is not None:
            fn(op, check)
        if spec.has_op(op.name) and spec.op(op.name).has_trait("infer_type"):
            # what the op's own checks leave open: its results against the inferred types
            msg = inferred_types_problem(op)
            check(msg is None, "", msg or "")
    except Violation as v:
        return make_error(op, v.cid, v.message, v.attr)
    except (IndexError, KeyError, TypeError, ValueError, AttributeError, ZeroDivisionError) as e:
        # A malformed op that a verifier did not anticipate: still a verification error, not a crash.
        return make_error(op, "", f"malformed op ({type(e).__name__}: {e})")
    return None


def collect(module: Module) -> List[VerificationError]:
    """Every op's first constraint violation, in program order."""
    from ..deep import call_with_room
    return call_with_room(_collect, module)


def _undominated(op: Operation, visible: set) -> Optional[VerificationError]:
    """An operand defined neither earlier in the op's block nor in an enclosing scope (an
    artifact can number any value anywhere, e.g. a region using its own op's results)."""
    for i, v in enumerate(op.operands):
        if id(v) not in visible:
            return make_error(op, "", f"operand #{i} does not dominate this use")
    return None


_TERMINATORS = spec.terminators()


def _symbol_redefinition(module_op: Operation) -> Optional[VerificationError]:
    """A module's symbols (functions, meshes) have distinct names: the first op that reuses one."""
    seen = set()
    for region in module_op.regions:
        for block in region.blocks:
            for op in block.operations:
                name = op.attributes.get("sym_name")
                name = getattr(name, "value", name)
                if name is None:
                    continue
                if name in seen:
                    return make_error(op, "", f"redefinition of symbol named '{name}'")
                seen.add(name)
    return None


def _terminator_problems(op: Operation, region) -> List[VerificationError]:
    """A block of a region of a known op must end with a terminator (an op of an unknown
    dialect may be one, as MLIR assumes; that a terminator is last is checked in the walk)."""
    terms = spec.terminators()
    out = []
    for block in region.blocks:
        ops = block.operations
        if not ops:
            out.append(make_error(op, "", "empty block: expect at least a terminator"))
        elif ops[-1].name not in terms and (spec.has_op(ops[-1].name) or ops[-1].name.startswith("func.")):
            out.append(make_error(op, "", f"block with no terminator, has {ops[-1].name}"))
    return out


def _collect(module: Module) -> List[VerificationError]:
    errors = []

    def walk(op, func, visible, last=True):
        err = _verify_op(op, module, func)
        if err is None and op.operands:
            err = _undominated(op, visible)
        if err is None and not last and (op.name in _TERMINATORS or op.name == "func.return"):
            err = make_error(op, "", "must be the last operation in the parent block")
        if err is None and op.name == "builtin.module":
            err = _symbol_redefinition(op)
        if err is not None:
            errors.append(err)
        inner = op if op.name == "func.func" else func
        if op.name in ("func.func", "builtin.module") or (
                spec.has_op(op.name) and spec.op(op.name).has_trait("isolated_from_above")):
            visible = set()         # isolated from above: its regions see none of the values outside
        for region in op.regions:
            # one set for the whole walk: a region's values are added while it is walked and
            # removed after. Values of every block of a region count as visible in all of them
            # (StableHLO's regions have one block; dominance across a CFG is not checked here)
            added = []
            for block in region.blocks:
                added.extend(id(a) for a in block.arguments)
            multi = len(region.blocks) > 1
            if multi:
                added.extend(id(r) for block in region.blocks for child in block.operations for r in child.results)
            fresh = [k for k in added if k not in visible]
            visible.update(fresh)
            if op.name != "builtin.module":
                errors.extend(_terminator_problems(op, region))
            for block in region.blocks:
                n = len(block.operations)
                for k, child in enumerate(block.operations):
                    walk(child, inner, visible, k == n - 1)
                    if not multi:
                        for r in child.results:
                            if id(r) not in visible:
                                visible.add(id(r))
                                fresh.append(id(r))
            visible.difference_update(fresh)

    walk(module.op, None, set())
    if not errors:
        # symbol uses inside attributes are verified after the ops, as MLIR does
        errors.extend(make_error(op, "", msg) for op, msg in mesh_symbol_problems(module))
    return errors


def verify(module: Module) -> None:
    """Raise the first VerificationError of `module`, if any."""
    errs = collect(module)
    if errs:
        raise errs[0]
