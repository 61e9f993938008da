"""Which StableHLO version a module needs, from the spec's version facts: the version that
introduced each op (`since`), each attribute it sets that came later, each element type it uses
and each enum case it names. CHLO and the check dialect have no portable (VHLO) form at any
version.

    requirements(module) -> [Requirement]        every fact above the minimum version, in program order
    minimum_version(module) -> str               the oldest version that can carry the module
    beyond_target(module, target) -> [Requirement] what `target` cannot carry
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional

from .. import spec
from ..ir.attributes import ArrayAttr, EnumAttr
from ..ir.types import ElementType, QuantizedType, TensorType, TupleType

_NO_VHLO = ("chlo", "check")


@dataclass(frozen=True)
class Requirement:
    """`op` (its location in `where`) needs StableHLO `version` because of `reason`; version
    None means no version can carry it."""
    op: str
    where: str
    version: Optional[str]
    reason: str

    def message(self) -> str:
        if self.version is None:
            return f"{self.op}: {self.reason}"
        return f"{self.op}: {self.reason} needs StableHLO {self.version} or newer"


def _element_types(t):
    if isinstance(t, TupleType):
        for x in t.types:
            yield from _element_types(x)
    elif isinstance(t, TensorType):
        e = t.element_type
        yield e.storage_type if isinstance(e, QuantizedType) else e
        if isinstance(e, QuantizedType):
            yield e.expressed_type


def _enum_since(a) -> Optional[tuple]:
    if isinstance(a, ArrayAttr):
        for x in a.elements:
            r = _enum_since(x)
            if r:
                return r
        return None
    if isinstance(a, EnumAttr):
        try:
            case = spec.enum(a.kind).case(a.value)
        except KeyError:
            return None
        if case.since:
            return case.since, f"enum case {a.kind} {a.value}"
    return None


def _op_requirements(op) -> List[Requirement]:
    out = []
    where = op.where()
    dialect = op.name.split(".", 1)[0]
    if dialect in _NO_VHLO:
        return [Requirement(op.name, where, None, f"the {dialect} dialect has no portable (VHLO) form")]
    if spec.has_op(op.name):
        s = spec.op(op.name)
        out.append(Requirement(op.name, where, s.since, "the op"))
        for a in s.attributes:
            since = getattr(a, "since", None)
            if since and a.name in op.attributes:
                out.append(Requirement(op.name, where, since, f"attribute {a.name}"))
    for name, a in op.attributes.items():
        r = _enum_since(a)
        if r:
            out.append(Requirement(op.name, where, r[0], r[1]))
    seen = set()
    for v in list(op.operands) + list(op.results):
        for e in _element_types(v.type):
            if not isinstance(e, ElementType) or e.name in seen:
                continue
            seen.add(e.name)
            try:
                since = spec.element_type(e.name).since
            except KeyError:
                continue
            out.append(Requirement(op.name, where, since, f"element type {e.name}"))
    return out


def requirements(module) -> List[Requirement]:
    """Every version requirement of the module's ops above the minimum supported version (and
    every construct no version can carry), in program order."""
    floor = spec.parse_version(spec.minimum_version())
    out = []
    for op in module.op.walk():
        for r in _op_requirements(op):
            if r.version is None or spec.parse_version(r.version) > floor:
                out.append(r)
    return out


def minimum_version(module) -> Optional[str]:
    """The oldest StableHLO version whose portable form can carry the module; None when some
    construct (a CHLO op, say) has no portable form at all."""
    best = spec.minimum_version()
    for r in requirements(module):
        if r.version is None:
            return None
        if spec.parse_version(r.version) > spec.parse_version(best):
            best = r.version
    return best


def beyond_target(module, target: str) -> List[Requirement]:
    """Every requirement that StableHLO `target` does not meet."""
    t = spec.parse_version(target)
    return [r for r in requirements(module) if r.version is None or spec.parse_version(r.version) > t]


def _serializer_refusal(module, target: str) -> Optional[str]:
    """What the portable-artifact writer refuses at `target` (the facts the spec keeps in its VHLO
    windows, such as an attribute added in a later encoding), or None."""
    from ..errors import SerializationError
    from ..serialization import serialize
    try:
        serialize(module, target)
    except SerializationError as e:
        return str(e)
    return None


def version_report(module, target: Optional[str] = None):
    """(minimum version or None, [messages of what `target` cannot carry]) for a verified module:
    the spec's facts above, confirmed by the writer (its refusal at a version raises the
    minimum, and is listed for the target when the facts missed it)."""
    least = minimum_version(module)
    if least is not None and _serializer_refusal(module, spec.current_version()) is not None:
        least = None      # the writer cannot carry it at any version
    if least is not None:
        later = [v.version for v in spec.versions() if spec.parse_version(v.version) >= spec.parse_version(least)]
        least = None
        for v in later:
            if _serializer_refusal(module, v) is None:
                least = v
                break
    problems = []
    if target is not None:
        problems = [r.where + ": " + r.message() for r in beyond_target(module, target)]
        if not any(r.version is None for r in beyond_target(module, target)):
            refusal = _serializer_refusal(module, target)
            if refusal is not None and not problems:
                problems.append(refusal)
    return least, problems
