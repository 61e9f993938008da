"""Structural equality of IR: same ops, attributes, types and value wiring (names of SSA values
do not matter). Locations are compared unless asked not to."""
from __future__ import annotations

from .attributes import DenseResourceAttr, DenseElementsAttr
from .defaults import without_defaults


class _Mismatch(Exception):
    pass


def modules_equal(a, b, *, compare_locations: bool = False) -> bool:
    try:
        assert_modules_equal(a, b, compare_locations=compare_locations)
        return True
    except AssertionError:
        return False


def assert_modules_equal(a, b, *, compare_locations: bool = False) -> None:
    """Raise AssertionError naming the first difference."""
    mapping: dict = {}
    _ops_equal(a.op, b.op, mapping, compare_locations, "module", a, b)


def _attr_eq(x, y, ma, mb):
    if isinstance(x, DenseResourceAttr) and isinstance(y, DenseResourceAttr):
        return x.type == y.type and ma.resources.get(x.key) == mb.resources.get(y.key)
    return x == y


def _ops_equal(x, y, mapping, locs, path, ma, mb):
    if x.name != y.name:
        raise AssertionError(f"{path}: op {x.name} != {y.name}")
    path = f"{path}/{x.name}"
    if len(x.operands) != len(y.operands):
        raise AssertionError(f"{path}: operand count {len(x.operands)} != {len(y.operands)}")
    for i, (u, v) in enumerate(zip(x.operands, y.operands)):
        if mapping.get(id(u)) is not v:
            raise AssertionError(f"{path}: operand #{i} wired differently")
    if x.result_types != y.result_types:
        raise AssertionError(f"{path}: result types {[str(t) for t in x.result_types]} != {[str(t) for t in y.result_types]}")
    for u, v in zip(x.results, y.results):
        mapping[id(u)] = v
    xa, ya = x.attributes, y.attributes
    if xa.keys() != ya.keys():      # an attribute holding its op's default equals an absent one
        xa, ya = without_defaults(x.name, xa), without_defaults(y.name, ya)
        if xa.keys() != ya.keys():
            raise AssertionError(f"{path}: attribute names {sorted(xa)} != {sorted(ya)}")
    for k in xa:
        if not _attr_eq(xa[k], ya[k], ma, mb):
            raise AssertionError(f"{path}: attribute {k}: {xa[k]!r} != {ya[k]!r}")
    if locs and x.location != y.location:
        raise AssertionError(f"{path}: location {x.location} != {y.location}")
    if len(x.regions) != len(y.regions):
        raise AssertionError(f"{path}: region count differs")
    for r1, r2 in zip(x.regions, y.regions):
        if len(r1.blocks) != len(r2.blocks):
            raise AssertionError(f"{path}: block count differs")
        for b1, b2 in zip(r1.blocks, r2.blocks):
            if [v.type for v in b1.arguments] != [v.type for v in b2.arguments]:
                raise AssertionError(f"{path}: block argument types differ")
            for u, v in zip(b1.arguments, b2.arguments):
                mapping[id(u)] = v
            if len(b1.operations) != len(b2.operations):
                raise AssertionError(f"{path}: op count {len(b1.operations)} != {len(b2.operations)}")
            for o1, o2 in zip(b1.operations, b2.operations):
                _ops_equal(o1, o2, mapping, locs, path, ma, mb)
