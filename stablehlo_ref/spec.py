"""The machine-readable StableHLO op spec: loading, validation and typed access.

The data lives in the ``spec/`` folder of the repository, installed as the
package ``stablehlo_ref.specdata``: one YAML file per op under
``ops/<dialect>/<name>.yaml``, plus ``element_types.yaml`` and ``versions.yaml``,
each validated against the JSON Schemas in ``schema/``.  Everything is loaded
and validated once per process (:func:`load` is cached); the accessors below
are what the parser, verifier, interpreter, serializer and CLI read.

Validation costs more than the rest of a small run, so ``spec/validated.json`` holds the
documents already validated, with the SHA-256 of the files they came from: :func:`load` reads
it when that digest is the files' own, and reads and validates the YAML files otherwise (an
edited spec/ is validated at every load until ``python -m stablehlo_ref.spec --write``
rewrites the bundle). ``python -m stablehlo_ref.spec --check`` (``stablehlo-ref spec --check``)
and the test suite validate the YAML files whatever the bundle says.
"""

from __future__ import annotations

import functools
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

__all__ = [
    "SpecError", "UnknownOpError",
    "OperandSpec", "AttributeSpec", "RegionSpec", "ConstraintSpec", "SyntaxSpec", "VhloChange",
    "DowngradeRequirement", "VhloSpec",
    "OpSpec", "ElementTypeSpec", "VersionSpec", "Spec", "EnumCaseSpec", "EnumSpec", "StructFieldSpec", "StructSpec",
    "load", "op", "ops", "has_op", "element_types", "element_type", "versions", "current_version",
    "minimum_version", "parse_version", "vhlo_name", "op_for_vhlo", "ops_for_vhlo", "bytecode_version",
    "check_consistency", "format_op_table", "format_op", "enum", "enums", "struct", "structs",
    "struct_by_mnemonic", "enum_for_vhlo", "terminators",
]

DIALECTS = ("stablehlo", "chlo", "func", "check", "sdy")

try:
    from .errors import StableHLOError as _Base
except ImportError:  # the spec loader must stay usable on its own
    class _Base(Exception):  # type: ignore[no-redef]
        pass


class SpecError(_Base, ValueError):
    """The spec files are missing, malformed, or a query about versions cannot be answered."""


class UnknownOpError(_Base, KeyError):
    """An op name that the spec does not define."""

    def __str__(self) -> str:  # KeyError would print the repr of the message
        return str(self.args[0]) if self.args else "unknown op"


# --------------------------------------------------------------------------- records


@dataclass(frozen=True)
class OperandSpec:
    """An operand or a result of an op."""

    name: str
    type: str
    variadic: bool = False
    optional: bool = False


@dataclass(frozen=True)
class AttributeSpec:
    """An attribute of an op; ``default`` is None when the attribute has no default."""

    name: str
    kind: str
    optional: bool = False
    default: Any = None


@dataclass(frozen=True)
class RegionSpec:
    name: str
    signature: str
    variadic: bool = False


@dataclass(frozen=True)
class ConstraintSpec:
    """A verification rule, labelled as the StableHLO spec labels it (C1, C2, ...)."""

    id: str
    text: str


@dataclass(frozen=True)
class SyntaxSpec:
    """How the op is written in pretty form: exactly one of the three is set."""

    format: str | None = None
    custom: str | None = None
    generic: bool = False


@dataclass(frozen=True)
class VhloChange:
    """How one VHLO encoding differs from the previous one of the same op.

    ``member_kind`` is attribute, operand, result or region; ``default`` is the
    value the older encoding implies for an added member (None: absent), i.e.
    a downgrade is only possible when the member has that value.
    """

    member_kind: str
    member: str
    change: str
    default: Any = None
    from_: str | None = None
    to: str | None = None
    variadic: bool | None = None


@dataclass(frozen=True)
class DowngradeRequirement:
    """A condition the op must meet to be written for a target version older than ``below``."""

    below: str
    text: str


@dataclass(frozen=True)
class VhloSpec:
    """One versioned VHLO encoding of an op, valid for versions from_ .. to (inclusive).

    ``operands``, ``results``, ``attributes`` and ``regions`` name the members of
    the encoding in declaration order (which is the order of its properties);
    a trailing "..." marks a variadic member.  VHLO flattens some StableHLO
    structs, so its attribute names can differ from the op's (dot_general_v1
    has lhs_batching_dimensions, ... instead of dot_dimension_numbers).
    """

    name: str
    from_: str
    to: str  # a version or "current"
    changes: tuple[VhloChange, ...] = ()
    note: str | None = None
    downgrade_requires: tuple[DowngradeRequirement, ...] = ()
    traits: tuple[str, ...] = ()
    operands: tuple[str, ...] = ()
    results: tuple[str, ...] = ()
    attributes: tuple[str, ...] = ()
    regions: tuple[str, ...] = ()

    def contains(self, version: str) -> bool:
        v = parse_version(version)
        hi = parse_version(current_version() if self.to == "current" else self.to)
        return parse_version(self.from_) <= v <= hi


@dataclass(frozen=True)
class OpSpec:
    name: str
    dialect: str
    short_name: str
    summary: str
    since: str
    status: str
    traits: tuple[str, ...]
    operands: tuple[OperandSpec, ...]
    results: tuple[OperandSpec, ...]
    attributes: tuple[AttributeSpec, ...]
    regions: tuple[RegionSpec, ...]
    constraints: tuple[ConstraintSpec, ...]
    syntax: SyntaxSpec
    vhlo: tuple[VhloSpec, ...]

    def has_trait(self, trait: str) -> bool:
        return trait in self.traits

    def attribute(self, name: str) -> AttributeSpec:
        for a in self.attributes:
            if a.name == name:
                return a
        raise KeyError(f"{self.name} has no attribute {name!r}")

    def constraint(self, cid: str) -> ConstraintSpec:
        for c in self.constraints:
            if c.id == cid:
                return c
        raise KeyError(f"{self.name} has no constraint {cid!r}")

    def vhlo_at(self, version: str) -> VhloSpec | None:
        """The VHLO encoding in effect at ``version``, or None if there is none."""
        for v in self.vhlo:
            if v.contains(version):
                return v
        return None


@dataclass(frozen=True)
class ElementTypeSpec:
    text: str
    kind: str
    bits: int
    numpy: str | None
    vhlo: str
    since: str
    spec_name: str | None = None
    exponent_bits: int | None = None
    mantissa_bits: int | None = None
    component: str | None = None


@dataclass(frozen=True)
class EnumCaseSpec:
    name: str
    value: int              # the VHLO encoding of the case
    since: str | None = None


@dataclass(frozen=True)
class EnumSpec:
    """An enum attribute (``spec/attributes.yaml``): its cases in VHLO order, how text writes it,
    its default (None: none) and its VHLO attribute."""

    name: str
    dialect: str
    text: str               # enum_attr | bare | integer
    default: str | None
    vhlo_name: str
    vhlo_from: str
    vhlo_to: str
    cases: tuple[EnumCaseSpec, ...]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.cases)

    @property
    def vhlo_table(self) -> tuple[str | None, ...]:
        """Case names indexed by VHLO value; None where no case has that value."""
        out: list[str | None] = [None] * (max(c.value for c in self.cases) + 1)
        for c in self.cases:
            out[c.value] = c.name
        return tuple(out)

    def value(self, name: str) -> int:
        for c in self.cases:
            if c.name == name:
                return c.value
        raise KeyError(f"{name!r} is not a case of {self.name}")

    def case(self, name: str) -> EnumCaseSpec:
        for c in self.cases:
            if c.name == name:
                return c
        raise KeyError(f"{name!r} is not a case of {self.name}")


_NO_DEFAULT = object()


@dataclass(frozen=True)
class StructFieldSpec:
    name: str
    kind: str               # i64 | i64_list | f64 | bool | type | an enum's name
    default: Any = None     # as written in the spec (lists as tuples); see has_default
    has_default: bool = False
    since: str | None = None


@dataclass(frozen=True)
class StructSpec:
    """A struct attribute (`#stablehlo.gather<...>`): fields in text order with their defaults.
    ``vhlo`` is "flattened" (the fields are attributes of the op in VHLO), "none", or the name
    of the VHLO attribute that holds it."""

    name: str
    dialect: str
    mnemonic: str
    vhlo: str
    fields: tuple[StructFieldSpec, ...]
    since: str | None = None
    vhlo_from: str | None = None

    @property
    def field_names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fields)

    def field(self, name: str) -> StructFieldSpec:
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(f"#{self.dialect}.{self.mnemonic} has no field {name!r}")


@dataclass(frozen=True)
class VersionSpec:
    version: str
    bytecode: int
    adds: tuple[str, ...]
    last_for: tuple[str, ...] = ()
    current: bool = False


@dataclass(frozen=True)
class Spec:
    ops: Mapping[str, OpSpec]
    element_types: tuple[ElementTypeSpec, ...]
    versions: tuple[VersionSpec, ...]
    current: str
    minimum_supported: str
    compatibility_requirements: Mapping[str, str] = field(default_factory=dict)
    vhlo_types: tuple[tuple[str, str, str], ...] = ()       # (name, from, to)
    vhlo_attributes: tuple[tuple[str, str, str], ...] = ()  # (name, from, to)
    vhlo_to_ops: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    element_types_by_text: Mapping[str, ElementTypeSpec] = field(default_factory=dict)
    enums: Mapping[str, EnumSpec] = field(default_factory=dict)
    structs: Mapping[str, StructSpec] = field(default_factory=dict)


# --------------------------------------------------------------------------- loading


def _data_root():
    """The spec data folder: the installed package, else the checkout's spec/."""
    try:
        from importlib.resources import files

        root = files("stablehlo_ref.specdata")
        if root.joinpath("versions.yaml").is_file():
            return root
    except (ModuleNotFoundError, TypeError, FileNotFoundError):
        pass
    root = Path(__file__).resolve().parent.parent / "spec"
    if not (root / "versions.yaml").is_file():
        raise SpecError(f"spec data not found: neither package stablehlo_ref.specdata nor {root} holds versions.yaml")
    return root


def _yaml_loader():
    import yaml

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _read_yaml(traversable, loader) -> Any:
    import yaml

    text = traversable.read_text(encoding="utf-8")
    try:
        return yaml.load(text, Loader=loader)
    except yaml.YAMLError as e:
        raise SpecError(f"{traversable}: not valid YAML: {e}") from None


def _op_files(root) -> list:
    out = []
    ops_dir = root.joinpath("ops")
    for d in DIALECTS:
        ddir = ops_dir.joinpath(d)
        if not ddir.is_dir():
            continue
        out.extend(sorted((p for p in ddir.iterdir() if p.name.endswith(".yaml")), key=lambda p: p.name))
    return out


def _inline_refs(node, defs):
    """Replace local "#/$defs/x" references by their targets: validation is then ~40% faster."""
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            target = _inline_refs(defs[ref[len("#/$defs/"):]], defs)
            rest = {k: _inline_refs(v, defs) for k, v in node.items() if k != "$ref"}
            return {**target, **rest}
        return {k: _inline_refs(v, defs) for k, v in node.items() if k != "$defs"}
    if isinstance(node, list):
        return [_inline_refs(x, defs) for x in node]
    return node


def _validator(root, name: str):
    from jsonschema import Draft202012Validator

    schema = json.loads(root.joinpath("schema", name).read_text(encoding="utf-8"))
    return Draft202012Validator(_inline_refs(schema, schema.get("$defs", {})))


def _validate(validator, doc, where: str) -> None:
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
    if errors:
        lines = []
        for e in errors[:5]:
            path = "/".join(str(p) for p in e.absolute_path) or "(top)"
            lines.append(f"  at {path}: {e.message}")
        raise SpecError(f"{where}: does not match its schema:\n" + "\n".join(lines))


def _op_from_doc(doc: dict, where: str) -> OpSpec:
    name = doc["name"]
    dialect, _, short = name.partition(".")
    expected = f"{short}.yaml"
    if not where.endswith(expected) or Path(where).parent.name != dialect:
        raise SpecError(f"{where}: op {name} must live in ops/{dialect}/{expected}")

    def values(items):
        return tuple(OperandSpec(i["name"], i["type"], bool(i.get("variadic", False)), bool(i.get("optional", False)))
                     for i in items)

    vhlo = []
    for v in doc["vhlo"]:
        changes = []
        for c in v.get("changes", ()):
            kind = next(k for k in ("attribute", "operand", "result", "region") if k in c)
            changes.append(VhloChange(kind, c[kind], c["change"], c.get("default"), c.get("from"), c.get("to"),
                                      c.get("variadic")))
        vhlo.append(VhloSpec(
            v["name"], str(v["from"]), str(v["to"]), tuple(changes), v.get("note"),
            tuple(DowngradeRequirement(str(d["below"]), d["text"]) for d in v.get("downgrade_requires", ())),
            tuple(v.get("traits", ())), tuple(v.get("operands", ())), tuple(v.get("results", ())),
            tuple(v.get("attributes", ())), tuple(v.get("regions", ()))))
    syn = doc["syntax"]
    return OpSpec(
        name=name, dialect=dialect, short_name=short, summary=doc["summary"], since=str(doc["since"]),
        status=doc["status"], traits=tuple(doc["traits"]),
        operands=values(doc["operands"]), results=values(doc["results"]),
        attributes=tuple(AttributeSpec(a["name"], a["kind"], bool(a.get("optional", False)), a.get("default"))
                         for a in doc["attributes"]),
        regions=tuple(RegionSpec(r["name"], r["signature"], bool(r["variadic"])) for r in doc["regions"]),
        constraints=tuple(ConstraintSpec(c["id"], c["text"]) for c in doc["constraints"]),
        syntax=SyntaxSpec(syn.get("format"), syn.get("custom"), bool(syn.get("generic", False))),
        vhlo=tuple(vhlo),
    )


# The spec as the YAML files hold it, already validated: `spec/validated.json` (written by
# `python -m stablehlo_ref.spec --write`) holds every document with the digest of the files it
# came from. `load` uses it when that digest is the spec files' own, so a run neither imports
# PyYAML and jsonschema nor validates 187 documents (~0.4 s); when any spec or schema file
# differs (an edited spec/), `load` reads and validates the YAML files as before, at every
# load until the bundle is rewritten. `check` and the test suite always validate the YAML.
BUNDLE_NAME = "validated.json"
_BUNDLE_FORMAT = 1


def _source_files(root) -> list:
    """(name, file) of every file that `_read_documents` reads, in a fixed order."""
    out = [(f"ops/{Path(str(f)).parent.name}/{f.name}", f) for f in _op_files(root)]
    out += [(n, root.joinpath(n)) for n in ("element_types.yaml", "versions.yaml", "attributes.yaml")]
    sdir = root.joinpath("schema")
    out += [(f"schema/{f.name}", f)
            for f in sorted((f for f in sdir.iterdir() if f.name.endswith(".json")), key=lambda f: f.name)]
    return out


def source_digest(root=None) -> str:
    """SHA-256 over the names and bytes of the spec's YAML files and JSON Schemas."""
    import hashlib

    h = hashlib.sha256()
    for name, f in _source_files(root or _data_root()):
        data = f.read_bytes()
        h.update(f"{name}\0{len(data)}\0".encode())
        h.update(data)
    return h.hexdigest()


def _read_documents(root) -> dict:
    """Every spec document read from its YAML file and validated against its schema:
    {"ops": [[where, doc], ...], "element_types": doc, "versions": doc, "attributes": doc}."""
    loader = _yaml_loader()
    op_validator = _validator(root, "op.schema.json")
    op_docs = []
    for f in _op_files(root):
        where = f"ops/{Path(str(f)).parent.name}/{f.name}"
        doc = _read_yaml(f, loader)
        _validate(op_validator, doc, where)
        op_docs.append([where, doc])
    docs: dict = {"ops": op_docs}
    for key in ("element_types", "versions", "attributes"):
        doc = _read_yaml(root.joinpath(f"{key}.yaml"), loader)
        _validate(_validator(root, f"{key}.schema.json"), doc, f"{key}.yaml")
        docs[key] = doc
    return docs


def _read_bundle(root, digest: str) -> dict | None:
    """The bundle's documents when it was written from files with this digest; else None."""
    f = root.joinpath(BUNDLE_NAME)
    try:
        bundle = json.loads(f.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(bundle, dict) or bundle.get("format") != _BUNDLE_FORMAT or bundle.get("digest") != digest:
        return None
    return bundle.get("documents")


def _load_documents(root) -> dict:
    docs = _read_bundle(root, source_digest(root))
    return docs if docs is not None else _read_documents(root)


@functools.lru_cache(maxsize=None)
def load() -> Spec:
    """The spec (once per process): from the validated bundle when it matches the spec files,
    else read from the YAML files and schema-validated."""
    return _spec_from_documents(_load_documents(_data_root()))


def _spec_from_documents(docs: dict) -> Spec:
    ops_by_name: dict[str, OpSpec] = {}
    for where, doc in docs["ops"]:
        o = _op_from_doc(doc, where)
        if o.name in ops_by_name:
            raise SpecError(f"{where}: op {o.name} is defined twice")
        ops_by_name[o.name] = o
    if not ops_by_name:
        raise SpecError("no op files found under the spec's ops/ folder")

    et_doc = docs["element_types"]
    ets = tuple(ElementTypeSpec(e["text"], e["kind"], e["bits"], e["numpy"], e["vhlo"], str(e["since"]),
                                e.get("spec_name"), e.get("exponent_bits"), e.get("mantissa_bits"), e.get("component"))
                for e in et_doc["element_types"])

    v_doc = docs["versions"]
    vs = tuple(VersionSpec(str(v["version"]), v["bytecode"], tuple(v["adds"]), tuple(v.get("last_for", ())),
                           bool(v.get("current", False)))
               for v in v_doc["versions"])
    vs = tuple(sorted(vs, key=lambda v: parse_version(v.version)))

    vhlo_to_ops: dict[str, list[str]] = {}
    for o in ops_by_name.values():
        for v in o.vhlo:
            vhlo_to_ops.setdefault(v.name, []).append(o.name)
    # a VHLO name shared by several ops (vhlo.return_v1) lists the stablehlo op first
    vhlo_map = {k: tuple(sorted(v, key=lambda n: (not n.startswith("stablehlo."), n))) for k, v in vhlo_to_ops.items()}

    def windows(key):
        return tuple((w["name"], str(w["from"]), str(w["to"])) for w in v_doc.get(key, ()))

    enums_by_name, structs_by_name = _attributes_from_doc(docs["attributes"])

    return Spec(
        ops=dict(sorted(ops_by_name.items())), element_types=ets, versions=vs,
        current=str(v_doc["current"]), minimum_supported=str(v_doc["minimum_supported"]),
        compatibility_requirements={k: str(v) for k, v in v_doc.get("compatibility_requirements", {}).items()},
        vhlo_types=windows("vhlo_types"), vhlo_attributes=windows("vhlo_attributes"),
        vhlo_to_ops=vhlo_map, element_types_by_text={e.text: e for e in ets},
        enums=enums_by_name, structs=structs_by_name,
    )


def bundle_text(root=None) -> str:
    """The text of `spec/validated.json` for the spec files as they are now: reads and validates
    every YAML file and runs the consistency checks (SpecError when any fails). One op per line."""
    root = root or _data_root()
    digest = source_digest(root)
    docs = _read_documents(root)
    problems = check_consistency(_spec_from_documents(docs))
    if problems:
        raise SpecError("the spec is not consistent:\n" + "\n".join(f"  {p}" for p in problems))
    if json.loads(json.dumps(docs)) != docs:
        raise SpecError("the spec holds values that JSON cannot carry over unchanged (non-string keys, NaN, dates)")
    dump = functools.partial(json.dumps, ensure_ascii=False, allow_nan=False)
    lines = ["{", f' "format": {_BUNDLE_FORMAT},', f' "digest": {dump(digest)},', ' "documents": {', '  "ops": [']
    lines += [f"   {dump(entry)}{',' if i + 1 < len(docs['ops']) else ''}" for i, entry in enumerate(docs["ops"])]
    lines.append("  ],")
    lines += [f'  {dump(k)}: {dump(docs[k])}{"," if k != "attributes" else ""}'
              for k in ("element_types", "versions", "attributes")]
    lines += [" }", "}", ""]
    return "\n".join(lines)


def check(root=None) -> list[str]:
    """Validate every YAML file against its schema, run the consistency checks and compare the
    bundle with the files: the problems found (empty when all is well)."""
    root = root or _data_root()
    try:
        text = bundle_text(root)
    except SpecError as e:
        return [str(e)]
    try:
        current = root.joinpath(BUNDLE_NAME).read_text(encoding="utf-8")
    except OSError:
        current = None
    if current != text:
        return [f"{BUNDLE_NAME} does not match the spec files (run `python -m stablehlo_ref.spec --write`); "
                "until it does, every load reads and validates the YAML files"]
    return []


def _frozen(v):
    return tuple(_frozen(x) for x in v) if isinstance(v, list) else v


def _attributes_from_doc(doc: dict) -> tuple[dict, dict]:
    enums_by_name: dict[str, EnumSpec] = {}
    for e in doc["enums"]:
        cases = tuple(EnumCaseSpec(c["name"], c.get("value", i), c.get("since")) for i, c in enumerate(e["cases"]))
        if len({c.value for c in cases}) != len(cases) or len({c.name for c in cases}) != len(cases):
            raise SpecError(f"attributes.yaml: enum {e['name']} repeats a case name or value")
        if e.get("default") is not None and e["default"] not in {c.name for c in cases}:
            raise SpecError(f"attributes.yaml: enum {e['name']}: default {e['default']} is not one of its cases")
        v = e["vhlo"]
        enums_by_name[e["name"]] = EnumSpec(e["name"], e["dialect"], e["text"], e.get("default"), v["name"],
                                            str(v["from"]), str(v.get("to", "current")), cases)
    structs_by_name: dict[str, StructSpec] = {}
    for st in doc["structs"]:
        fields = tuple(StructFieldSpec(f["name"], f["kind"], _frozen(f.get("default")), "default" in f, f.get("since"))
                       for f in st["fields"])
        v = st["vhlo"]
        structs_by_name[st["name"]] = StructSpec(st["name"], st["dialect"], st["mnemonic"],
                                                 v if isinstance(v, str) else v["name"], fields, st.get("since"),
                                                 None if isinstance(v, str) else str(v["from"]))
    for st in structs_by_name.values():
        for f in st.fields:
            if f.kind not in ("i64", "i64_list", "f64", "bool", "type") and f.kind not in enums_by_name:
                raise SpecError(f"attributes.yaml: field {st.name}.{f.name} has unknown kind {f.kind}")
    return enums_by_name, structs_by_name


# --------------------------------------------------------------------------- accessors


def enum(name: str) -> EnumSpec:
    """An enum attribute by name ("comparison_direction", "custom_call_api_version", ...)."""
    s = load()
    try:
        return s.enums[name]
    except KeyError:
        raise KeyError(f"unknown enum attribute {name!r}{_suggest(name, s.enums)}") from None


def enums() -> list[EnumSpec]:
    return list(load().enums.values())


def struct(name: str) -> StructSpec:
    """A struct attribute by name ("gather_dimension_numbers", "result_accuracy", ...)."""
    s = load()
    try:
        return s.structs[name]
    except KeyError:
        raise KeyError(f"unknown struct attribute {name!r}{_suggest(name, s.structs)}") from None


def structs() -> list[StructSpec]:
    return list(load().structs.values())


@functools.lru_cache(maxsize=None)
def struct_by_mnemonic(dialect: str, mnemonic: str) -> StructSpec | None:
    """The struct written `#dialect.mnemonic<...>` in text, or None."""
    for st in load().structs.values():
        if st.dialect == dialect and st.mnemonic == mnemonic:
            return st
    return None


@functools.lru_cache(maxsize=None)
def enum_for_vhlo(vhlo_attr: str) -> EnumSpec | None:
    """The enum encoded as VHLO attribute `vhlo_attr` ("vhlo.precision_v1" or "precision_v1")."""
    if not vhlo_attr.startswith("vhlo."):
        vhlo_attr = "vhlo." + vhlo_attr
    for e in load().enums.values():
        if e.vhlo_name == vhlo_attr:
            return e
    return None


@functools.lru_cache(maxsize=None)
def terminators() -> frozenset:
    """Names of the ops with the `terminator` trait."""
    return frozenset(o.name for o in load().ops.values() if "terminator" in o.traits)


def _suggest(name: str, candidates: Iterable[str]) -> str:
    import difflib

    close = difflib.get_close_matches(name, list(candidates), n=3, cutoff=0.6)
    return f"; did you mean {', '.join(close)}?" if close else ""


def op(name: str) -> OpSpec:
    """The spec of op ``name`` (full name, e.g. "stablehlo.add")."""
    s = load()
    try:
        return s.ops[name]
    except KeyError:
        hint = ""
        if "." not in name and f"stablehlo.{name}" in s.ops:
            hint = f"; use the full name stablehlo.{name}"
        raise UnknownOpError(f"unknown op {name!r}: not in the StableHLO spec{hint or _suggest(name, s.ops)}") from None


def ops() -> list[OpSpec]:
    """Every op, sorted by name."""
    return list(load().ops.values())


def has_op(name: str) -> bool:
    return name in load().ops


def element_types() -> list[ElementTypeSpec]:
    return list(load().element_types)


def element_type(text_name: str) -> ElementTypeSpec:
    """An element type by its text spelling (i8, ui4, bf16, f8E4M3FN, complex<f32>, ...)."""
    s = load()
    try:
        return s.element_types_by_text[text_name]
    except KeyError:
        raise KeyError(f"unknown element type {text_name!r}{_suggest(text_name, s.element_types_by_text)}") from None


def versions() -> list[VersionSpec]:
    """Every StableHLO version from the minimum supported to the current one, oldest first."""
    return list(load().versions)


def current_version() -> str:
    return load().current


def minimum_version() -> str:
    return load().minimum_supported


@functools.lru_cache(maxsize=1024)
def parse_version(version: str) -> tuple[int, int, int]:
    """"1.2.3" -> (1, 2, 3); "current" means the current version."""
    if version == "current":
        version = current_version()
    parts = str(version).strip().split(".")
    if len(parts) != 3 or not all(p.isdigit() for p in parts):
        raise SpecError(f"bad version {version!r}: expected MAJOR.MINOR.PATCH such as 1.2.3")
    return (int(parts[0]), int(parts[1]), int(parts[2]))


def _check_supported(version: str) -> tuple[int, int, int]:
    v = parse_version(version)
    s = load()
    lo, hi = parse_version(s.minimum_supported), parse_version(s.current)
    if not lo <= v <= hi:
        raise SpecError(f"version {version} is outside the supported range {s.minimum_supported} .. {s.current}")
    return v


def vhlo_name(op_name: str, version: str) -> str | None:
    """The VHLO encoding of ``op_name`` in effect at ``version`` (None if the op has none then).

    As upstream, windows are inclusive and compared on the full version, so a patch
    release between two windows (exponential at 1.8.5: v1 ends at 1.8.0, v2 starts
    at 1.9.0) has no encoding and gets None.
    """
    _check_supported(version)
    v = op(op_name).vhlo_at(version)
    return v.name if v else None


def ops_for_vhlo(vhlo_op_name: str) -> list[OpSpec]:
    """Every op that the VHLO op encodes (vhlo.return_v1 encodes stablehlo.return and func.return)."""
    s = load()
    return [s.ops[n] for n in s.vhlo_to_ops.get(vhlo_op_name, ())]


def op_for_vhlo(vhlo_op_name: str) -> OpSpec:
    """The op that a VHLO op name decodes to.

    vhlo.return_v1 is shared by stablehlo.return and func.return; this returns
    stablehlo.return, and a reader picks func.return when the parent is a function.
    """
    found = ops_for_vhlo(vhlo_op_name)
    if not found:
        raise UnknownOpError(f"unknown VHLO op {vhlo_op_name!r}{_suggest(vhlo_op_name, load().vhlo_to_ops)}")
    return found[0]


def bytecode_version(version: str) -> int:
    """The MLIR bytecode format version that a portable artifact for ``version`` uses."""
    v = _check_supported(version)
    best = None
    for vs in load().versions:
        if parse_version(vs.version) <= v:
            best = vs
        else:
            break
    if best is None:
        raise SpecError(f"no bytecode version known for {version}")
    return best.bytecode


# --------------------------------------------------------------------------- consistency


def check_consistency(spec: Spec | None = None) -> list[str]:
    """Cross-file checks that a schema cannot express; returns problems (empty when all is well)."""
    s = spec or load()
    problems: list[str] = []
    known = {v.version for v in s.versions}
    cur = parse_version(s.current)
    if s.current not in known:
        problems.append(f"versions.yaml: current {s.current} is not in the version list")
    if [v.version for v in s.versions if v.current] != [s.current]:
        problems.append("versions.yaml: exactly the current version must be marked current")
    for o in s.ops.values():
        if o.since not in known:
            problems.append(f"{o.name}: since {o.since} is not a known version")
        ids = [c.id for c in o.constraints]
        if len(ids) != len(set(ids)):
            problems.append(f"{o.name}: duplicate constraint ids")
        if o.vhlo:
            # Upstream windows are written in minor releases (v1 up to 1.8.0, v2 from 1.9.0), so the
            # patch releases in between (1.8.1 ..) have no encoding: windows are contiguous when no
            # X.Y.0 release lies strictly between one window's end and the next one's start.
            minors = sorted(parse_version(v.version) for v in s.versions if v.version.endswith(".0"))
            prev_hi = None
            for i, w in enumerate(o.vhlo):
                lo = parse_version(w.from_)
                hi = cur if w.to == "current" else parse_version(w.to)
                if w.from_ not in known:
                    problems.append(f"{o.name}: {w.name} starts at {w.from_}, which is not a known version")
                if hi > cur:
                    problems.append(f"{o.name}: {w.name} ends after the current version")
                if lo > hi:
                    problems.append(f"{o.name}: {w.name} window is empty")
                if i == 0 and w.from_ != o.since:
                    problems.append(f"{o.name}: first VHLO window starts at {w.from_}, not at since {o.since}")
                if prev_hi is not None and (lo <= prev_hi or any(prev_hi < m < lo for m in minors)):
                    problems.append(f"{o.name}: {w.name} does not start right after the previous window")
                prev_hi = hi
            if o.vhlo[-1].to != "current":
                problems.append(f"{o.name}: last VHLO window does not end at current")
        for a in o.attributes:
            e = s.enums.get(a.kind)
            if e is not None and a.default is not None and a.default not in e.names:
                problems.append(f"{o.name}: default {a.default} of {a.name} is not a case of {e.name}")
            st = s.structs.get(a.kind)
            if st is not None and st.dialect != o.dialect and o.dialect != "stablehlo":
                problems.append(f"{o.name}: attribute {a.name} is a {st.dialect} struct")
        syn = o.syntax
        if sum((syn.format is not None, syn.custom is not None, syn.generic)) != 1:
            problems.append(f"{o.name}: syntax must be exactly one of format, custom, generic")
    for en in s.enums.values():
        for v in [en.vhlo_from] + [c.since for c in en.cases if c.since]:
            if v not in known:
                problems.append(f"enum {en.name}: version {v} is not a known version")
    for e in s.element_types:
        if e.since not in known:
            problems.append(f"element type {e.text}: since {e.since} is not a known version")
    return problems


# --------------------------------------------------------------------------- formatting


def format_op_table() -> str:
    """One line per op: name, dialect, since, status."""
    rows = [(o.name, o.dialect, o.since, o.status) for o in ops()]
    w = max(len(r[0]) for r in rows)
    head = f"{'op':<{w}}  {'dialect':<9}  {'since':<7}  status"
    return "\n".join([head] + [f"{n:<{w}}  {d:<9}  {s:<7}  {st}" for n, d, s, st in rows])


def format_op(name: str) -> str:
    """A full readable entry for one op."""
    o = op(name)
    import textwrap

    out = [o.name, textwrap.fill(o.summary, 100, initial_indent="  ", subsequent_indent="  "),
           f"  since {o.since}, status {o.status}"]
    if o.traits:
        out.append(f"  traits: {', '.join(o.traits)}")

    def vals(title, items):
        if items:
            out.append(f"  {title}:")
            for i in items:
                flags = "".join([", variadic" if i.variadic else "", ", optional" if i.optional else ""])
                out.append(f"    {i.name}: {i.type}{flags}")

    vals("operands", o.operands)
    vals("results", o.results)
    if o.attributes:
        out.append("  attributes:")
        for a in o.attributes:
            extra = ", optional" if a.optional else ""
            if a.default is not None:
                extra += f", default {a.default!r}"
            out.append(f"    {a.name}: {a.kind}{extra}")
    if o.regions:
        out.append("  regions:")
        for r in o.regions:
            out.append(f"    {r.name}{' (variadic)' if r.variadic else ''}: {r.signature}")
    if o.constraints:
        out.append("  constraints:")
        for c in o.constraints:
            out.append(textwrap.fill(f"({c.id}) {c.text}", 100, initial_indent="    ",
                                     subsequent_indent="    " + " " * (len(c.id) + 3)))
    syn = o.syntax
    out.append("  syntax: " + (syn.format if syn.format is not None else
                               f"custom ({syn.custom})" if syn.custom else "generic form only"))
    if o.vhlo:
        out.append("  vhlo:")
        for v in o.vhlo:
            out.append(f"    {v.name}: {v.from_} .. {v.to}")
            for c in v.changes:
                detail = f" ({c.from_} -> {c.to})" if c.change == "renamed" else ""
                default = ""
                if c.change == "added":
                    default = (f", default {c.default!r}" if c.default is not None
                               else ", no default (absent from older encodings)")
                out.append(f"      {c.member_kind} {c.member} {c.change}{detail}{default}")
            if v.note:
                out.append(f"      note: {v.note}")
            for d in v.downgrade_requires:
                out.append(f"      for targets below {d.below}: {d.text}")
    return "\n".join(out)


def main(argv=None) -> int:
    """`python -m stablehlo_ref.spec --check | --write`."""
    import argparse
    import sys

    ap = argparse.ArgumentParser(prog="python -m stablehlo_ref.spec",
                                 description="Validate the spec files, or rewrite spec/" + BUNDLE_NAME + " from them.")
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--check", action="store_true", help="validate every file and compare the bundle with them")
    g.add_argument("--write", action="store_true", help="validate every file and rewrite the bundle")
    args = ap.parse_args(argv)
    root = _data_root()
    if args.write:
        try:
            text = bundle_text(root)
        except SpecError as e:
            print(f"error: {e}", file=sys.stderr)
            return 1
        Path(str(root.joinpath(BUNDLE_NAME))).write_text(text, encoding="utf-8")
        print(f"wrote {root.joinpath(BUNDLE_NAME)}")
        return 0
    problems = check(root)
    for p in problems:
        print(f"error: {p}", file=sys.stderr)
    if not problems:
        print(f"spec: {len(_source_files(root))} files valid and consistent; {BUNDLE_NAME} up to date")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
