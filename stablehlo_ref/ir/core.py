"""Operations, values, blocks, regions and modules.

A `Module` wraps a `builtin.module` operation. Functions are `func.func` operations whose
attributes hold `sym_name`, `function_type`, optional `sym_visibility`, `arg_attrs` and
`res_attrs`. An operation keeps one attribute dict; which entries are inherent (printed in
`<{...}>` in the generic form, stored as properties in bytecode) is decided from the spec."""
from __future__ import annotations

from typing import Dict, Iterator, List, Optional

from .attributes import (Attribute, DictAttr, StringAttr, TypeAttr, UNKNOWN_LOC, ArrayAttr,
                         Location, describe_location)
from .types import FunctionType, Type


class Value:
    __slots__ = ("type", "name", "owner", "index")

    def __init__(self, type: Type, name: Optional[str] = None, owner=None, index: int = 0):
        self.type = type
        self.name = name          # the name hint from the text (without `%`), if any
        self.owner = owner        # the Operation that defines it, or the Block for arguments
        self.index = index

    def __repr__(self):
        return f"Value(%{self.name}: {self.type})"


class Operation:
    __slots__ = ("name", "operands", "results", "attributes", "regions", "location", "successors", "source",
                 "attr_dict_source", "_cache")

    def __init__(self, name: str, operands=None, result_types=None, attributes=None,
                 regions=None, location: Location = UNKNOWN_LOC, result_names=None):
        self.name = name
        self.operands: List[Value] = list(operands or [])
        self.results: List[Value] = [
            Value(t, (result_names[i] if result_names else None), self, i)
            for i, t in enumerate(result_types or [])]
        self.attributes: Dict[str, Attribute] = dict(attributes or {})
        self.regions: List[Region] = list(regions or [])
        self.location = location
        self.successors: list = []
        self.source: Optional[str] = None   # "file:line:col" where the parser found the op
        # where an op written in its custom form spells its attribute dictionary, and the names in
        # it: (file:line:col, names), else None. MLIR checks those attributes' declared
        # constraints while parsing and reports them there.
        self.attr_dict_source: Optional[tuple] = None
        # data the interpreter derives from the op once (decoded attributes, dispatch); code
        # that changes an op after running it resets this to None
        self._cache: Optional[dict] = None

    @property
    def dialect(self) -> str:
        return self.name.split(".", 1)[0]

    @property
    def short_name(self) -> str:
        return self.name.split(".", 1)[1] if "." in self.name else self.name

    def attr(self, name: str, default=None):
        return self.attributes.get(name, default)

    @property
    def result_types(self) -> List[Type]:
        return [r.type for r in self.results]

    def where(self) -> str:
        return describe_location(self.location) or self.source or self.name

    def walk(self) -> Iterator["Operation"]:
        """This op and every op nested in it, in pre-order (iterative: any depth)."""
        stack = [iter((self,))]
        while stack:
            op = next(stack[-1], None)
            if op is None:
                stack.pop()
                continue
            yield op
            if op.regions:
                stack.append(o for r in op.regions for b in r.blocks for o in b.operations)

    def __repr__(self):
        return f"Operation({self.name})"


class Block:
    __slots__ = ("arguments", "arg_locations", "arg_sources", "operations", "label", "parent", "_cache")

    def __init__(self, arg_types=(), arg_names=None, arg_locations=None, label: Optional[str] = None):
        self.arguments: List[Value] = [Value(t, arg_names[i] if arg_names else None, self, i)
                                       for i, t in enumerate(arg_types)]
        self.arg_locations = list(arg_locations) if arg_locations else [None] * len(self.arguments)
        # where the text parser found each argument's `%name` ("file:line:col"), or None;
        # upstream locates an argument written without `loc(...)` there
        self.arg_sources: List[Optional[str]] = [None] * len(self.arguments)
        self.operations: List[Operation] = []
        self.label = label
        self.parent = None
        self._cache = None       # the interpreter's plan of the block (see Operation._cache)

    def add_argument(self, type: Type, name=None, location=None, source: Optional[str] = None) -> Value:
        v = Value(type, name, self, len(self.arguments))
        self.arguments.append(v)
        self.arg_locations.append(location)
        self.arg_sources.append(source)
        return v

    @property
    def terminator(self) -> Optional[Operation]:
        return self.operations[-1] if self.operations else None


class Region:
    __slots__ = ("blocks",)

    def __init__(self, blocks=None):
        self.blocks: List[Block] = list(blocks or [])

    @property
    def entry(self) -> Block:
        return self.blocks[0]


class Module:
    """A module: the `builtin.module` operation plus the file-level parts that are not ops
    (attribute/type alias definitions used for printing, and `dialect_resources` blobs)."""

    def __init__(self, op: Operation, resources: Optional[dict] = None, source: Optional[str] = None):
        self.op = op
        self.resources: Dict[str, bytes] = dict(resources or {})   # dense_resource key -> raw bytes (no alignment header)
        self.source = source

    @property
    def body(self) -> Block:
        return self.op.regions[0].blocks[0]

    @property
    def name(self) -> Optional[str]:
        a = self.op.attributes.get("sym_name")
        return a.value if isinstance(a, StringAttr) else None

    @property
    def functions(self) -> Dict[str, Operation]:
        # (a plain loop: read on the first run of every freshly parsed module)
        out = {}
        for f in self.op.regions[0].blocks[0].operations:
            if f.name == "func.func":
                out[f.attributes["sym_name"].value] = f
        return out

    def function(self, name: str) -> Operation:
        fns = self.functions
        if name not in fns:
            from ..errors import StableHLOError
            raise StableHLOError(f"no function named @{name} in module (have: {', '.join('@' + n for n in fns) or 'none'})")
        return fns[name]

    def walk(self) -> Iterator[Operation]:
        return self.op.walk()

    def __eq__(self, other):
        from .equality import modules_equal
        return isinstance(other, Module) and modules_equal(self, other)

    __hash__ = None

    def __str__(self):
        from ..text.printer import print_module
        return print_module(self)


def function_type(func: Operation) -> FunctionType:
    return func.attributes["function_type"].type


def new_module(name: Optional[str] = None, attributes=None) -> Module:
    attrs = dict(attributes or {})
    if name is not None:
        attrs["sym_name"] = StringAttr(name)
    op = Operation("builtin.module", attributes=attrs, regions=[Region([Block()])])
    return Module(op)
