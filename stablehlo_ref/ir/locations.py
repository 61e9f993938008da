"""The location MLIR gives an op or a block argument that the text did not locate.

The text parser leaves such ops at the shared `UNKNOWN_LOC` and records where it found them
(`Operation.source`, `Block.arg_sources`, "file:line:col"); MLIR's parser gives them that
position as a FileLineColLoc. An explicit `loc(unknown)` is a distinct UnknownLoc instance and
stays unknown. Printing with debug info and writing artifacts both need these effective
locations."""
from __future__ import annotations

from typing import Optional

from .attributes import UNKNOWN_LOC, FileLineColLoc, Location, UnknownLoc
from .core import Block, Module, Operation


def source_location(source) -> Optional[FileLineColLoc]:
    """`file:line:col` (as the text parser records positions) -> FileLineColLoc."""
    if not isinstance(source, str):
        return None
    parts = source.rsplit(":", 2)
    if len(parts) != 3 or not parts[1].isdigit() or not parts[2].isdigit():
        return None
    return FileLineColLoc(parts[0], int(parts[1]), int(parts[2]))


def op_location(op: Operation, module: Optional[Module] = None) -> Location:
    loc = op.location
    if loc is None or loc is UNKNOWN_LOC:
        found = source_location(op.source)
        if found is not None:
            return found
        if module is not None and op is module.op and isinstance(module.source, str):
            # the module the parser made around top-level functions: MLIR locates it at the
            # buffer itself (line 0, column 0)
            return FileLineColLoc(module.source, 0, 0)
        return UNKNOWN_LOC
    return loc


def arg_location(block: Block, i: int) -> Location:
    loc = block.arg_locations[i] if i < len(block.arg_locations) else None
    if loc is not None:
        return loc
    sources = getattr(block, "arg_sources", None) or ()
    found = source_location(sources[i]) if i < len(sources) else None
    return found if found is not None else UnknownLoc()
