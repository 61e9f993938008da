"""Upstream's VHLO downgrade cases (`../shared/stablehlo-tests/vhlo/vhlo_to_version_*.mlir`):
each `// -----` chunk converted to VHLO at the file's target. A chunk upstream rejects (an
`expected-error`, or a `not stablehlo-opt ... | FileCheck` file whose CHECK names the
failure) must raise SerializationError naming the rejected op; any other chunk must convert,
and every `vhlo.*` op, attribute or type its CHECK lines name must appear in the result."""
from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import REPO  # noqa: E402

import stablehlo_ref as shr  # noqa: E402
from stablehlo_ref.errors import ParseError, SerializationError  # noqa: E402
from stablehlo_ref.serialization import to_vhlo, _check_target  # noqa: E402

VHLO = REPO.parent / "shared" / "stablehlo-tests" / "vhlo"
_TARGET = re.compile(r"target=(\d+\.\d+\.\d+)")
_VNAME = re.compile(r"vhlo\.([a-z0-9_]+)")
_ILLEGAL = re.compile(r"'vhlo\.([a-z0-9_]+?)_v\d+'")


def _cases():
    out = []
    if not VHLO.is_dir():
        return out
    for f in sorted(VHLO.glob("vhlo_to_version_downgrade*.mlir")):
        text = f.read_text()
        m = _TARGET.search(text.splitlines()[0])
        if not m:
            continue
        chunks = text.split("\n// -----")
        for i in range(len(chunks)):
            out.append(f"{f.name}#{i}")
    return out


def _vhlo_names(op, acc):
    acc.add(op.name.split(".", 1)[1] if op.name.startswith("vhlo.") else op.name)
    for r in op.results:
        _type_names(r.type, acc)
    for a in op.attributes.values():
        _type_names(a, acc)
    for r in op.regions:
        for b in r.blocks:
            for v in b.arguments:
                _type_names(v.type, acc)
            for o in b.operations:
                _vhlo_names(o, acc)
    return acc


def _type_names(x, acc):
    kind = getattr(x, "kind", None)
    if isinstance(kind, str):
        acc.add(kind)
    for y in getattr(x, "args", ()) or ():
        if isinstance(y, (tuple, list)):
            for z in y:
                _type_names(z, acc)
        else:
            _type_names(y, acc)


@pytest.mark.parametrize("case", _cases() or ["(none)"])
def test_downgrade_case(case):
    if case == "(none)":
        pytest.skip("../shared corpora not present")
    name, idx = case.split("#")
    text = (VHLO / name).read_text()
    target = _check_target(_TARGET.search(text.splitlines()[0]).group(1))
    must_fail_file = text.startswith("// RUN: not ")
    chunk = text.split("\n// -----")[int(idx)]
    lines = chunk.splitlines()
    checks = [l.split(":", 1)[1] for l in lines if re.match(r"\s*//\s*CHECK(-[A-Z]+)?:", l)]
    rejected = []    # short op names upstream refuses
    for l in lines:
        if "expected-error" in l or (must_fail_file and re.match(r"\s*//\s*CHECK", l)):
            rejected += _ILLEGAL.findall(l)
    fails = must_fail_file or any("expected-error" in l for l in lines)
    try:
        module = shr.parse(chunk, name)
    except ParseError as e:
        pytest.fail(f"text parser: {e}")
    if fails:
        with pytest.raises(SerializationError) as ei:
            to_vhlo(module, target)
        msg = str(ei.value)
        for op in rejected:
            # upstream reports the function whose signature holds a too-new type; we name the
            # first op whose result has it, and the type
            ok = op in msg or (op == "func" and ("type !vhlo." in msg or "not available" in msg))
            assert ok, f"error does not name {op}: {msg}"
        return
    root = to_vhlo(module, target)
    have = _vhlo_names(root, set())
    for c in checks:
        for n in _VNAME.findall(c):
            assert n in have, f"{n} (CHECK: {c.strip()}) not in the VHLO at {target}"
