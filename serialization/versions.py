"""VHLO version windows: whether a VHLO type or attribute exists at a target version, and the
rewrites between the encodings of an op: downgrade (on write, refusing what the target cannot
express) and upgrade (on read, to the current encoding)."""
from __future__ import annotations

from typing import Dict, Optional, Tuple

from stablehlo_ref import spec as S
from stablehlo_ref.errors import SerializationError
from stablehlo_ref.ir.core import Operation
from stablehlo_ref.serialization.defaults import _DICT_CONFIG_APIS, default_value
from stablehlo_ref.serialization.numbering import LeafOp as VLeaf
from stablehlo_ref.serialization.op_mapping import _ver, tables
from stablehlo_ref.serialization.vhlo_values import VAttr, VType, _i64_tensor

# values (VType/VAttr) already checked to be expressible at a target version, per target
_OK_AT: Dict[tuple, set] = {}


def _ok_set(target) -> set:
    ok = _OK_AT.get(target)
    if ok is None or len(ok) > 16384:
        ok = _OK_AT[target] = set()
    return ok


def _check_type_at(t, target, where):
    if isinstance(t, VType):
        ok = _ok_set(target)
        if t in ok:
            return
        _check_type_at_uncached(t, target, where)
        ok.add(t)


def _check_type_at_uncached(t, target, where):
    if isinstance(t, VType):
        since = tables().type_since.get(t.kind)
        if since is not None and _ver(since) > target:
            raise SerializationError(f"{where}: type !vhlo.{t.kind} needs StableHLO {since} or newer")
        for x in t.args:
            _check_any_at(x, target, where)


def _check_any_at(x, target, where):
    if isinstance(x, VType):
        _check_type_at(x, target, where)
    elif isinstance(x, VAttr):
        since = tables().attr_since.get(x.kind)
        if since is not None and _ver(since) > target:
            raise SerializationError(f"{where}: attribute #vhlo.{x.kind} needs StableHLO {since} or newer")
        for y in x.args:
            _check_any_at(y, target, where)
    elif isinstance(x, tuple):
        for y in x:
            _check_any_at(y, target, where)


def _vhlo_element_type(t):
    """The element type of a VHLO tensor type (other VHLO types as they are)."""
    if isinstance(t, VType) and t.kind == "tensor_v1":
        return t.args[1]
    return t


def is_foreign(name: str) -> bool:
    """Ops of other dialects an artifact may carry beside VHLO (Shardy's, and the casts between
    the two): they pass through conversions unchanged (serialization/sdy_codec.py)."""
    return name.startswith("sdy.") or name == "builtin.unrealized_conversion_cast"


def unknown_op_message(name: str) -> str:
    """The error for an op no reader table knows: a VHLO op newer than ours, or another dialect."""
    dialect = name.split(".", 1)[0]
    if dialect == "vhlo":
        return f"unknown VHLO op {name} (this reader knows StableHLO up to {S.current_version()})"
    return (f"op {name} belongs to dialect {dialect!r}, which portable artifacts of this reader cannot hold "
            "(it reads VHLO, builtin and Shardy's sdy ops)")


def downgrade_op(op: Operation, target_str: str, steps: Optional[Dict[int, int]] = None,
                 writer_version: Optional[str] = None, leaves: Optional[dict] = None):
    """Rewrite a current-VHLO op in place to the encoding valid at target (recursively).
    `steps[id(op)]` counts the rewrites of each op (upstream recreates the op for each); with
    `writer_version`, only rewrites that a serializer of that version would do are counted
    (encodings newer than it did not exist there, so the op was created old). Leaf ops are
    made at target already: `LeafOp`s, and the direct path's ops named in `leaves`."""
    writer = _ver(writer_version) if writer_version else None
    target = _ver(target_str)
    for r in op.regions:
        for b in r.blocks:
            for o in b.operations:
                if o.__class__ is not VLeaf and (leaves is None or o.name not in leaves):
                    downgrade_op(o, target_str, steps, writer_version, leaves)
            if not is_foreign(op.name):
                for a in b.arguments:
                    _check_type_at(a.type, target, f"block argument of {op.name}")
    if op.name == "builtin.module" or is_foreign(op.name):
        return
    plan = _DOWN_PLANS.get((op.name, target_str))
    if plan is None:
        plan = _down_plan(op.name, target_str)
    ospec, encs, want, i, j, short, reqs = plan
    where = f"{ospec.name}"
    while i > j:
        newer, older = encs[i], encs[i - 1]
        for ch in newer.changes:
            m = ch.member
            if ch.member_kind == "attribute" and ch.change == "added":
                v = op.attributes.get(m)
                d = default_value(short, m, op.attributes)
                if v is not None and v != d:
                    raise SerializationError(f"{where}: attribute {m} = {_describe(v)} cannot be expressed in "
                                             f"StableHLO {target_str} ({older.name} has no {m}; needs {newer.from_})")
                op.attributes.pop(m, None)
            elif ch.member_kind == "attribute" and ch.change == "removed":
                if m == "padding":
                    lhs = op.operands[0].type
                    n = max(len(lhs.args[0]) - 2, 0) if isinstance(lhs, VType) and lhs.kind == "tensor_v1" else 0
                    op.attributes[m] = _i64_tensor([0] * (2 * n), (n, 2))
            elif ch.member_kind in ("operand", "result") and ch.variadic:
                count = len(op.operands) if ch.member_kind == "operand" else len(op.results)
                if count != 1:
                    raise SerializationError(f"{where}: {count} {ch.member_kind}s cannot be expressed in StableHLO "
                                             f"{target_str} ({older.name} takes exactly one; variadic needs {newer.from_})")
            elif ch.member_kind == "region" and ch.change == "added":
                if op.regions:
                    raise SerializationError(f"{where}: regions cannot be expressed in StableHLO {target_str} "
                                             f"({older.name} has none; needs {newer.from_})")
        op.name = older.name
        if steps is not None and (writer is None or target < _ver(newer.from_) <= writer):
            steps[id(op)] = steps.get(id(op), 0) + 1
        i -= 1
    # constraints (spec: downgrade_requires)
    for req in reqs:
        if "element types" in req.text:
            for a, r in zip(op.operands, op.results):
                if _vhlo_element_type(a.type) != _vhlo_element_type(r.type):
                    raise SerializationError(f"{where}: a reduction accumulating in a wider type needs StableHLO "
                                             f"{req.below} or newer (target {target_str})")
        elif "future" in req.text:
            if any(isinstance(o.type, VType) and o.type.kind == "future_v1" for o in op.operands):
                raise SerializationError(f"{where}: future-typed inputs need StableHLO {req.below} or newer")
        elif "backend_config" in req.text:
            bc = op.attributes.get("backend_config")
            if (bc is not None and bc.kind == "dict_v1") or op.attributes.get("api_version") in _DICT_CONFIG_APIS:
                apis = " or ".join(sorted(a.args[0] for a in _DICT_CONFIG_APIS))
                raise SerializationError(f"{where}: a dictionary backend_config or {apis} needs "
                                         f"StableHLO {req.below} or newer (target {target_str})")
    if op.attributes:
        ok = _ok_set(target)
        for name, a in op.attributes.items():
            try:
                if a in ok:
                    continue
            except TypeError:
                pass
            _check_any_at(a, target, f"{where}: attribute {name}")
            try:
                ok.add(a)
            except TypeError:
                pass
    for r in op.results:
        _check_type_at(r.type, target, f"{where}: result")


_DOWN_PLANS: Dict[Tuple[str, str], tuple] = {}


def _down_plan(name: str, target_str: str) -> tuple:
    """Per (VHLO op name, target): (op spec, its encodings, the encoding at target, index of
    `name`, index of that encoding, short name, the downgrade requirements that apply)."""
    ospec, _cur = tables().by_vhlo[name]
    encs = tables().encodings[ospec.name]
    want = ospec.vhlo_at(target_str)
    if want is None:
        raise SerializationError(f"{ospec.name}: op {ospec.name} is not available in StableHLO {target_str} "
                                 f"(its VHLO encodings cover {encs[0].from_} .. {encs[-1].to})")
    target = _ver(target_str)
    names = [e.name for e in encs]
    plan = (ospec, encs, want, names.index(name), names.index(want.name), ospec.name.split(".", 1)[1],
            tuple(req for req in want.downgrade_requires if not target >= _ver(req.below)))
    _DOWN_PLANS[(name, target_str)] = plan
    return plan


def _describe(v) -> str:
    if isinstance(v, VAttr) and v.kind == "tensor_v1":
        return f"tensor of {len(v.args[1])} bytes"
    return str(v)


_UPGRADE_PLANS: Dict[str, object] = {}


def _upgrade_plan(name: str):
    """(short op name, the encodings newer than `name`) for a known VHLO op, else None."""
    plan = _UPGRADE_PLANS.get(name, False)
    if plan is False:
        t = tables().by_vhlo.get(name)
        if t is None:
            plan = None
        else:
            ospec = t[0]
            encs = tables().encodings[ospec.name]
            i = [e.name for e in encs].index(name)
            plan = (ospec.name.split(".", 1)[1], tuple(encs[i + 1:]))
        _UPGRADE_PLANS[name] = plan
    return plan


def upgrade_op(op: Operation, skip: Optional[set] = None):
    """Rewrite a VHLO op of any version in place to the current encoding (recursively); ops
    named in `skip` (built as StableHLO ops by the reader) are left alone."""
    for r in op.regions:
        for b in r.blocks:
            if skip is None:
                for o in b.operations:
                    upgrade_op(o)
            else:
                for o in b.operations:
                    if o.name not in skip:
                        upgrade_op(o, skip)
    if op.name == "builtin.module" or is_foreign(op.name):
        return
    plan = _upgrade_plan(op.name)
    if plan is None:
        raise SerializationError(unknown_op_message(op.name))
    short, newer_encs = plan
    for newer in newer_encs:
        for ch in newer.changes:
            if ch.member_kind == "attribute" and ch.change == "added":
                if ch.member not in op.attributes:
                    op.attributes[ch.member] = default_value(short, ch.member, op.attributes)
            elif ch.member_kind == "attribute" and ch.change == "removed":
                op.attributes.pop(ch.member, None)
        op.name = newer.name
