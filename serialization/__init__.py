"""StableHLO portable artifacts: read and write MLIR bytecode of the VHLO dialect.

    serialize(module, target="1.0.0", strip_debuginfo=False) -> bytes
    deserialize(data) -> Module
    artifact_version(data) -> str

Writing converts StableHLO to the current VHLO, downgrades it to `target` (refusing, with a
SerializationError naming the op or attribute, what the target cannot express) and writes the
bytecode version that target uses, laid out exactly as upstream lays it out. Reading accepts
any bytecode version 0..6 and any VHLO version from 0.9.0 to the current one, upgrades to the
current VHLO and converts to StableHLO (dropping attributes equal to their defaults, as
upstream does).

Layout (bytes -> IR -> VHLO -> StableHLO, and back):
    encoding           varints, zigzag, sections, Cursor / Emitter
    dialect_codec      the interface of a dialect's attribute/type encodings
    builtin_codec      builtin attributes and types, dense element data
    vhlo_values        VType / VAttr / Blob and small VHLO constructors
    vhlo_codec         VHLO attribute/type codes (enums and element names from the spec)
    reader / writer    MLIR bytecode files; numbering: upstream's entry order for writing
    op_mapping         which VHLO encodings encode each op (from the spec)
    defaults           values of absent attributes (from the spec's defaults)
    versions           version windows, downgrade and upgrade between encodings
    stablehlo_to_vhlo, vhlo_to_stablehlo   the IR conversions
    jax_export         the jax.export payload around an artifact
"""
from __future__ import annotations

import re
from typing import Optional

from stablehlo_ref import spec as S
from stablehlo_ref.deep import call_with_room
from stablehlo_ref.errors import SerializationError
from stablehlo_ref.limits import DEFAULT, Limits
from stablehlo_ref.ir import attributes as A
from stablehlo_ref.ir.core import Module, Operation
from stablehlo_ref.ir.wellformed import read_problem
from stablehlo_ref.ir.locations import op_location
from stablehlo_ref.serialization.builtin_codec import BuiltinCodec
from stablehlo_ref.serialization.dialect_codec import DialectWriter
from stablehlo_ref.serialization.encoding import MAGIC
from stablehlo_ref.serialization.op_mapping import inherent_names, tables
from stablehlo_ref.serialization.reader import properties_reader, read_file
from stablehlo_ref.serialization.numbering import Direct
from stablehlo_ref.serialization.stablehlo_to_vhlo import NotDirect, leaf_context, op_to_vhlo
from stablehlo_ref.serialization.versions import downgrade_op, upgrade_op
from stablehlo_ref.serialization.vhlo_codec import VhloCodec
from stablehlo_ref.serialization.sdy_codec import SdyCodec, has_sdy, insert_casts, remove_casts
from stablehlo_ref.serialization.stablehlo_to_vhlo import type_to_vhlo
from stablehlo_ref.serialization.vhlo_to_stablehlo import type_from_vhlo
from stablehlo_ref.serialization.versions import unknown_op_message
from stablehlo_ref.serialization.vhlo_to_stablehlo import from_vhlo_direct, op_from_vhlo
from stablehlo_ref.serialization.writer import write_file

__all__ = ["serialize", "serialize_as", "deserialize", "artifact_version", "read_vhlo", "write_vhlo", "vhlo_ops"]

_CODECS = [BuiltinCodec(), VhloCodec(), SdyCodec()]
_CODEC_MAP = {c.name: c for c in _CODECS}


def _check_target(target: str):
    try:
        v = S.parse_version(target)
    except S.SpecError:
        raise SerializationError(f"bad target version {target!r}: expected MAJOR.MINOR.PATCH such as 1.0.0") from None
    lo, hi = S.parse_version(S.minimum_version()), S.parse_version(S.current_version())
    if v < lo:
        raise SerializationError(f"target {target} is older than the minimum supported version {S.minimum_version()}")
    if v > hi:
        raise SerializationError(f"target {target} is newer than the current version {S.current_version()}")
    return f"{v[0]}.{v[1]}.0"


def _props_writer(op: Operation, w: DialectWriter) -> bool:
    if op.name == "builtin.module":
        w.optional_attr(op.attributes.get("sym_name"))
        w.optional_attr(op.attributes.get("sym_visibility"))
        return True
    names = inherent_names(op.name)
    if not names:
        return False
    for n in names:
        a = op.attributes.get(n)
        if a is None:
            raise SerializationError(f"{op.name}: attribute {n} is missing")
        w.attr(a)
    return True


def _make_dict_of(version: int):
    cache = {}

    def dict_of(op: Operation):
        r = cache.get(id(op), 0)
        if r != 0:
            return r
        if not op.attributes:
            cache[id(op)] = None
            return None
        if version >= 5:
            inherent = set(inherent_names(op.name) or ())
            items = [(k, v) for k, v in op.attributes.items() if k not in inherent]
        else:
            items = list(op.attributes.items())
        d = A.DictAttr(tuple(sorted(items, key=lambda kv: kv[0].encode()))) if items else None
        cache[id(op)] = d
        return d
    return dict_of


def _strip_locations(op: Operation):
    op.location = A.UNKNOWN_LOC
    for r in op.regions:
        for b in r.blocks:
            b.arg_locations = [None] * len(b.arguments)
            for o in b.operations:
                _strip_locations(o)


def to_vhlo(module: Module, target: str, steps=None, writer_version=None, leaves: bool = True) -> Operation:
    """StableHLO module -> VHLO module op at `target` (a checked, patch-0 version). With
    `leaves` (the default), ops that need no more are made as light `LeafOp`s directly at
    target; without, every op is built at the current version and downgraded (the general
    path, which writes the same bytes)."""
    root = op_to_vhlo(module.op, {}, leaf_context(target, writer_version, steps) if leaves else None)
    # (a module the text parser made around top-level functions is located at the buffer)
    root.location = op_location(module.op, module)
    if has_sdy(root):
        insert_casts(root, type_to_vhlo, type_from_vhlo)
    downgrade_op(root, target, steps, writer_version)
    return root


def _to_vhlo_direct(module: Module, target: str, steps, writer_version):
    """to_vhlo on the direct path: (VHLO module op whose leaf ops are the StableHLO ops
    themselves, their numbering.Direct), or (to_vhlo's tree, None) for a module the direct
    path cannot write."""
    direct = Direct(type_to_vhlo)
    try:
        root = op_to_vhlo(module.op, {}, leaf_context(target, writer_version, steps, direct))
    except NotDirect:
        steps.clear()
        return to_vhlo(module, target, steps, writer_version), None
    root.location = op_location(module.op, module)
    downgrade_op(root, target, steps, writer_version, direct.names)
    return root, direct


def write_vhlo(root: Operation, target: str, producer_version: str, steps=None, direct=None) -> bytes:
    """Write a VHLO module op; `steps` (op id -> rewrite count) replays upstream's use-list
    order changes so that the bytes match upstream's."""
    version = S.bytecode_version(target)
    return write_file(root, version=version, producer="StableHLO_v" + producer_version, codecs=_CODECS,
                        dict_of=_make_dict_of(version), props_writer=_props_writer, rewrites=steps,
                        isolated_of=_isolated_from_above, direct=direct)


def _isolated_from_above(op: Operation) -> bool:
    # functions are (their bodies refer to nothing outside); other ops are decided by their uses
    return op.name == "vhlo.func_v1" or op.name == "sdy.manual_computation"


def serialize(module: Module, target: str = "1.0.0", strip_debuginfo: bool = False) -> bytes:
    """Write `module` as a portable artifact for StableHLO version `target`."""
    return serialize_as(module, target, strip_debuginfo)


def serialize_as(module: Module, target: str = "1.0.0", strip_debuginfo: bool = False,
                 writer_version: Optional[str] = None) -> bytes:
    """serialize(), laid out byte for byte as the serializer of StableHLO `writer_version`
    (default: ours) lays it out. Only the use-list orders depend on it: an older serializer
    creates ops directly in encodings that ours reaches by rewriting newer ones."""
    if not isinstance(module, Module):
        raise SerializationError("serialize() expects a Module")
    return call_with_room(_serialize_as, module, target, strip_debuginfo, writer_version)


def _serialize_as(module, target, strip_debuginfo, writer_version):
    conv = _check_target(target)
    if writer_version is not None:
        _check_target(writer_version)
    steps = {}
    if strip_debuginfo:
        root = to_vhlo(module, conv, steps, writer_version)
        _strip_locations(root)
        return write_vhlo(root, conv, target, steps)
    root, direct = _to_vhlo_direct(module, conv, steps, writer_version)
    return write_vhlo(root, conv, target, steps, direct)


def read_vhlo(data, limits: Optional[Limits] = None):
    """Portable artifact -> (VHLO module op as stored, bytecode version, producer)."""
    root, f = _read_vhlo(data, limits)
    return root, f.version, f.producer


def _read_vhlo(data, limits):
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise SerializationError("deserialize() expects bytes")
    if isinstance(data, bytearray):
        data = bytes(data)
    root, f = read_file(data, _CODEC_MAP, limits or DEFAULT)
    if root.name != "builtin.module":
        raise SerializationError(f"the top-level operation is {root.name}, expected builtin.module", "byte 0")
    if f.op_props:
        _apply_properties(root, f)
    return root, f


def _apply_properties(op: Operation, f):
    props = f.op_props.get(id(op))
    if props is not None:
        r = properties_reader(f, props)
        if op.name == "builtin.module":
            for n in ("sym_name", "sym_visibility"):
                a = r.optional_attr()
                if a is not None:
                    op.attributes[n] = a
        else:
            names = inherent_names(op.name)
            if names is None:
                raise SerializationError(unknown_op_message(op.name), f"byte {props[0]}")
            for n in names:
                op.attributes[n] = r.attr()
        if not r.cur.at_end():
            r.cur.fail(f"trailing bytes in the properties of {op.name}")
    op_props = f.op_props
    for reg in op.regions:
        for b in reg.blocks:
            for o in b.operations:
                if o.regions or id(o) in op_props:
                    _apply_properties(o, f)


def deserialize(data, limits: Optional[Limits] = None) -> Module:
    """Read a portable artifact (any version 0.9.0 .. current) into a StableHLO Module.
    `limits` bounds element counts, blob sizes and nesting, checked before allocating."""
    return call_with_room(_deserialize, data, limits or DEFAULT, limits=limits)


def _deserialize(data, limits: Limits) -> Module:
    root, f = _read_vhlo(data, limits)
    producer = f.producer
    checks = None
    try:
        if f.direct:
            # (a file of VHLO ops only: no casts to remove; the reader's StableHLO ops are
            # named in f.direct_names, and no op of the file has such a name)
            upgrade_op(root, f.direct_names)
            checks = from_vhlo_direct(root, f.direct_names, f.unchecked)
            new = root
        else:
            upgrade_op(root)
            new = op_from_vhlo(root, {}, None)
            remove_casts(new)
    except SerializationError as e:
        if producer and producer not in e.message:
            e.message += f" (artifact produced by {producer})"
        raise
    except (KeyError, IndexError, ValueError, TypeError, AttributeError) as e:
        raise SerializationError(f"malformed VHLO program ({type(e).__name__}: {e}); artifact produced by {producer}") from None
    # what was read must be built as the spec says: an artifact can put any attribute, type or
    # location anywhere, and nothing downstream (verifier, printer, interpreter) expects that
    for op in (checks if checks is not None else new.walk()):
        problem = read_problem(op)
        if problem is not None:
            raise SerializationError(f"{op.name}: {problem}", f"byte {f.op_offsets.get(id(op), '?')}")
    return Module(new)


_VERSION_RE = re.compile(rb"StableHLO_v(\d+)\.(\d+)\.(\d+)")


def artifact_version(data) -> str:
    """The StableHLO version named in an artifact's producer string (`StableHLO_vX.Y.Z`)."""
    b = bytes(data[:4096]) if not isinstance(data, bytes) else data[:4096]
    if len(b) < 4 or b[:4] != MAGIC:
        raise SerializationError("not a portable artifact: missing the MLIR bytecode magic", "byte 0")
    head = b.split(b"\x00", 1)[0]
    m = _VERSION_RE.search(head)
    if not m:
        raise SerializationError("the producer string names no StableHLO version (expected StableHLO_vX.Y.Z)", "byte 5")
    return ".".join(x.decode() for x in m.groups())


def vhlo_ops() -> dict:
    """The serializer's op mapping: StableHLO/func op name -> the VHLO op names it reads and
    writes, oldest first (ops without a VHLO encoding, such as chlo's, are absent)."""
    return {name: tuple(v.name for v in encs) for name, encs in tables().encodings.items()}
