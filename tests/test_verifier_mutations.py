"""Mutation tests of the verifier: change one attribute value, type or operand of a valid program
and verify the result.

* Property (hypothesis): whatever the mutation, `collect` returns VerificationErrors (possibly
  none) and raises nothing; the parser either reads the mutant or raises a StableHLOError.
* Differential (interop, needs jaxlib): a mutant that jaxlib's MLIR verifier rejects
  (`ir.Module.parse` + `operation.verify()`, StableHLO and CHLO registered) must not be accepted
  by ours; such a mutant would be a missing check.

The seeds are small valid programs written here (and, when ../shared is present, the first chunks
of a few `interpret/` files; with MUTATION_CORPUS=all every short `interpret/` chunk and every
valid `ops/` chunk). A mutation is textual and touches the op lines only: an integer inside an
attribute or a shape, an element type, which SSA value an operand names, an enum case, a boolean,
a tensor's rank, or one attribute entry dropped.

CI runs a few hundred mutants (seed 14, 400 draws: without ../shared 191 distinct mutants of the 16
seeds above that jaxlib reads, none accepted by us and rejected by jaxlib). The longer
differential run, its command and its numbers, are in docs/verifier.md.
"""
from __future__ import annotations

import os
import random
import re
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import SHARED  # noqa: E402

from stablehlo_ref import parse  # noqa: E402
from stablehlo_ref.errors import StableHLOError, VerificationError  # noqa: E402
from stablehlo_ref.verifier import collect  # noqa: E402

SEEDS = [
    """func.func @main(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = stablehlo.add %a, %b : tensor<2x3xf32>
  %1 = stablehlo.transpose %0, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
  func.return %1 : tensor<3x2xf32>
}""",
    """func.func @main(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}""",
    """func.func @main(%a: tensor<3xi32>) -> tensor<2x3x4xi32> {
  %0 = stablehlo.broadcast_in_dim %a, dims = [1] : (tensor<3xi32>) -> tensor<2x3x4xi32>
  func.return %0 : tensor<2x3x4xi32>
}""",
    """func.func @main(%a: tensor<4x6xf32>) -> tensor<2x2xf32> {
  %0 = stablehlo.slice %a [1:3, 0:6:3] : (tensor<4x6xf32>) -> tensor<2x2xf32>
  func.return %0 : tensor<2x2xf32>
}""",
    """func.func @main(%a: tensor<2x3xf32>, %b: tensor<2x5xf32>) -> tensor<2x8xf32> {
  %0 = stablehlo.concatenate %a, %b, dim = 1 : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
  func.return %0 : tensor<2x8xf32>
}""",
    """func.func @main(%a: tensor<2x3xf32>, %p: tensor<f32>) -> tensor<5x9xf32> {
  %0 = stablehlo.pad %a, %p, low = [1, 2], high = [2, 2], interior = [0, 1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<5x9xf32>
  func.return %0 : tensor<5x9xf32>
}""",
    """func.func @main(%a: tensor<4x5xf32>, %z: tensor<f32>) -> tensor<5xf32> {
  %0 = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [0] : (tensor<4x5xf32>, tensor<f32>) -> tensor<5xf32>
  func.return %0 : tensor<5xf32>
}""",
    """func.func @main(%a: tensor<2x3xi32>, %b: tensor<2x3xi32>) -> tensor<2x3xi1> {
  %0 = stablehlo.compare GT, %a, %b, SIGNED : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi1>
  func.return %0 : tensor<2x3xi1>
}""",
    """func.func @main(%a: tensor<6xf32>) -> tensor<2x3xf32> {
  %0 = stablehlo.reshape %a : (tensor<6xf32>) -> tensor<2x3xf32>
  %1 = stablehlo.iota dim = 1 : tensor<2x3xf32>
  %2 = stablehlo.multiply %0, %1 : tensor<2x3xf32>
  func.return %2 : tensor<2x3xf32>
}""",
    """func.func @main(%a: tensor<3x4x2xf32>, %i: tensor<2x2xi64>) -> tensor<2x2x2xf32> {
  %0 = "stablehlo.gather"(%a, %i) {dimension_numbers = #stablehlo.gather<offset_dims = [1, 2], collapsed_slice_dims = [0], start_index_map = [0, 1], index_vector_dim = 1>, slice_sizes = array<i64: 1, 2, 2>} : (tensor<3x4x2xf32>, tensor<2x2xi64>) -> tensor<2x2x2xf32>
  func.return %0 : tensor<2x2x2xf32>
}""",
    """func.func @main(%a: tensor<1x8x8x3xf32>, %k: tensor<3x3x3x4xf32>) -> tensor<1x8x8x4xf32> {
  %0 = stablehlo.convolution(%a, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x8x8x3xf32>, tensor<3x3x3x4xf32>) -> tensor<1x8x8x4xf32>
  func.return %0 : tensor<1x8x8x4xf32>
}""",
    """func.func @main(%a: tensor<4x6xf32>, %i: tensor<i32>) -> tensor<2x6xf32> {
  %0 = stablehlo.dynamic_slice %a, %i, %i, sizes = [2, 6] : (tensor<4x6xf32>, tensor<i32>, tensor<i32>) -> tensor<2x6xf32>
  func.return %0 : tensor<2x6xf32>
}""",
    """func.func @main(%a: tensor<4x6xf32>) -> tensor<4x3xf32> {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = "stablehlo.reduce_window"(%a, %z) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %s = stablehlo.maximum %x, %y : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {window_dimensions = array<i64: 1, 2>, window_strides = array<i64: 1, 2>} : (tensor<4x6xf32>, tensor<f32>) -> tensor<4x3xf32>
  func.return %0 : tensor<4x3xf32>
}""",
    """func.func @main(%a: tensor<5xf32>) -> (tensor<5xf32>, tensor<5xi32>) {
  %i = stablehlo.iota dim = 0 : tensor<5xi32>
  %0:2 = "stablehlo.sort"(%a, %i) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>, %u: tensor<i32>, %v: tensor<i32>):
    %c = stablehlo.compare LT, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }) {dimension = 0 : i64, is_stable = true} : (tensor<5xf32>, tensor<5xi32>) -> (tensor<5xf32>, tensor<5xi32>)
  func.return %0#0, %0#1 : tensor<5xf32>, tensor<5xi32>
}""",
    """func.func @main(%a: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %0 = "stablehlo.all_reduce"(%a) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %s = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<8x4xf32>) -> tensor<8x4xf32>
  func.return %0 : tensor<8x4xf32>
}""",
    """func.func @main(%a: tensor<2x2x!quant.uniform<i8:f32, 0.5:3>>) -> tensor<2x2xf32> {
  %0 = stablehlo.uniform_dequantize %a : (tensor<2x2x!quant.uniform<i8:f32, 0.5:3>>) -> tensor<2x2xf32>
  func.return %0 : tensor<2x2xf32>
}""",
    """func.func @main(%a: tensor<i1>, %b: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "stablehlo.if"(%a) ({
    stablehlo.return %b : tensor<3xf32>
  }, {
    %n = stablehlo.negate %b : tensor<3xf32>
    stablehlo.return %n : tensor<3xf32>
  }) : (tensor<i1>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}""",
]

_ELEMENT_TYPES = ("f32", "f16", "bf16", "f64", "i1", "i8", "i32", "i64", "ui8", "complex<f32>")
_INT = re.compile(r"(?<![\w.%#@])-?\d+(?![\w.])")
_SHAPE_DIM = re.compile(r"(?<=[<x])(\d+)(?=x)")
_ELEM = re.compile(r"(?<=x)(f32|f16|bf16|f64|i1|i8|i32|i64|ui8)(?=>)|(?<=tensor<)(f32|f16|bf16|f64|i1|i8|i32|i64|ui8)(?=>)")
_SSA = re.compile(r"(?<=[(, ])%([a-z]\w*|\d+)(?=[,) ])")


_CHECK_OP = re.compile(r"\s*(?:%[\w#:, %]*=\s*)?\"?check\.")


def _seed_texts():
    """SEEDS, and when ../shared is present the first chunk of the first 60 `interpret/` files
    (MUTATION_CORPUS=all: every chunk under 3000 characters of every `interpret/` file and every
    valid chunk of the `ops/` suites)."""
    out = list(SEEDS)
    interp = SHARED / "interpret"
    if interp.is_dir():
        from stablehlo_ref.checkrun import split_chunks
        every = os.environ.get("MUTATION_CORPUS") == "all"
        for p in sorted(interp.glob("*.mlir"))[:None if every else 60]:
            chunks = split_chunks(p.read_text())
            for chunk in chunks if every else chunks[:1]:
                # the interpreter's check.* ops are not in jaxlib's registry: drop them
                chunk = "\n".join(ln for ln in chunk.split("\n") if not _CHECK_OP.match(ln))
                if len(chunk) < 3000:
                    out.append(chunk)
    ops = SHARED / "ops"
    if ops.is_dir() and os.environ.get("MUTATION_CORPUS") == "all":
        # the valid chunks of the verifier, printer and round-trip suites: many more ops
        from verifier_suite import expected_lines, split_chunks as chunks_of
        for p in sorted(ops.glob("*.mlir")):
            for chunk in chunks_of(p.read_text()):
                if not expected_lines(chunk) and len(chunk.strip()) < 3000:
                    out.append(chunk)
    return out


_ENUM_CASE = re.compile(r"(?<=#stablehlo<)(\w+) (\w+)(?=>)|(?<=#chlo<)(\w+) (\w+)(?=>)")
_COMPARE_DIR = re.compile(r"(?<=compare )\b(EQ|NE|LT|LE|GT|GE)\b|(?<=, )\b(SIGNED|UNSIGNED|FLOAT|TOTALORDER)\b(?= :)")
_BOOL = re.compile(r"\b(true|false)\b")
_RANKED = re.compile(r"tensor<((?:\d+x)*)([a-z][\w<>]*?)>")
_ATTR_ENTRY = re.compile(r"(?<=[{,]) ?\w+ = (?:[^,{}<>\[\]]|<[^<>]*>|\[[^\[\]]*\])+(?=[,}])")
_KINDS = ("int", "dim", "elem", "ssa", "enum", "bool", "rank", "drop")


def mutate(text: str, rng: random.Random) -> str:
    """One textual mutation of an op line (not the function signature): an integer, a shape
    dimension, an element type, an operand name, an enum case, a boolean, a tensor's rank (a
    dimension added or dropped) or one `name = value` entry of an attribute dictionary dropped."""
    lines = text.split("\n")
    ops = [i for i, ln in enumerate(lines) if ("stablehlo." in ln or "chlo." in ln) and "func.func" not in ln]
    if not ops:
        return text
    i = rng.choice(ops)
    line = lines[i]
    kind = rng.choice(_KINDS)
    pattern = {"int": _INT, "dim": _SHAPE_DIM, "elem": _ELEM, "ssa": _SSA, "enum": _COMPARE_DIR, "bool": _BOOL,
               "rank": _RANKED, "drop": _ATTR_ENTRY}[kind]
    hits = list(pattern.finditer(line))
    if kind == "enum":
        hits += list(_ENUM_CASE.finditer(line))
    if not hits:
        return text
    m = rng.choice(hits)
    if kind == "enum":
        cases = ("EQ", "NE", "LT", "GE", "SIGNED", "FLOAT", "DEFAULT", "HIGHEST", "FFT", "IRFFT", "UNIFORM",
                 "NORMAL", "DEFAULT", "THREE_FRY", "NO_TRANSPOSE", "ADJOINT", "TRANSPOSE", "TOTALORDER")
        word = m.group(0).split(" ")[-1]
        new = m.group(0)[:len(m.group(0)) - len(word)] + rng.choice([c for c in cases if c != word])
    elif kind == "bool":
        new = "false" if m.group(0) == "true" else "true"
    elif kind == "rank":
        dims = [d for d in m.group(1).split("x") if d]
        if dims and rng.random() < 0.5:
            del dims[rng.randrange(len(dims))]
        else:
            dims.insert(rng.randrange(len(dims) + 1), str(rng.choice((1, 2, 3))))
        new = "tensor<" + "".join(d + "x" for d in dims) + m.group(2) + ">"
    elif kind == "drop":
        # the entry and one comma next to it, so the dictionary still reads
        start, end = m.start(), m.end()
        if line[start - 1:start] == ",":
            start -= 1
        elif line[end:end + 1] == ",":
            end += 1
        lines[i] = line[:start] + line[end:]
        return "\n".join(lines)
    elif kind in ("int", "dim"):
        v = int(m.group(0))
        new = str(rng.choice([v + 1, v - 1, 0, 1, 2 * v + 1, -1]) if kind == "int" else max(0, rng.choice([v + 1, v - 1, 1, 2 * v])))
    elif kind == "elem":
        new = rng.choice([t for t in _ELEMENT_TYPES if t != m.group(0)])
    else:
        names = sorted(set(re.findall(r"%([a-z]\w*|\d+)\b", text)) - {m.group(1)})
        if not names:
            return text
        new = "%" + rng.choice(names)
    lines[i] = line[:m.start()] + new + line[m.end():]
    return "\n".join(lines)


def _verify(text: str):
    """None when the text does not parse, else the list of our verification errors."""
    try:
        module = parse(text, "mutant.mlir")
    except StableHLOError:
        return None
    errs = collect(module)
    assert all(isinstance(e, VerificationError) for e in errs)
    return errs


def test_seeds_are_valid():
    for s in SEEDS:
        assert _verify(s) == [], s


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(st.integers(0, len(SEEDS) - 1), st.integers(0, 2 ** 32 - 1))
def test_mutants_get_diagnostics_or_pass_never_a_crash(seed, salt):
    text = mutate(SEEDS[seed], random.Random(salt))
    _verify(text)     # any exception other than a parse error fails the property


# ------------------------------------------------------------------ differential, against jaxlib


@pytest.fixture(scope="module")
def jaxlib_verifies():
    pytest.importorskip("jax")
    from jax._src.interpreters import mlir as jmlir
    from jaxlib.mlir import ir
    ctx = jmlir.make_ir_context()
    ctx.allow_unregistered_dialects = False

    def verifies(text: str):
        """True / False for jaxlib's verdict, None when the text uses what jaxlib cannot read."""
        with ctx:
            try:
                module = ir.Module.parse(text)
            except Exception:   # noqa: BLE001 - jaxlib raises MLIRError for any rejection
                return False
            try:
                return bool(module.operation.verify())
            except Exception:   # noqa: BLE001
                return False
    return verifies


def test_mutants_jaxlib_rejects_we_reject(jaxlib_verifies):
    n = int(os.environ.get("MUTATIONS", "400"))
    rng = random.Random(int(os.environ.get("MUTATION_SEED", "14")))
    seeds = [s for s in _seed_texts() if _verify(s) == [] and jaxlib_verifies(s)]
    assert len(seeds) >= len(SEEDS) - 2
    missed, seen = [], set()
    counts = dict.fromkeys(("both reject", "both accept", "only we reject", "only jaxlib rejects"), 0)
    for k in range(n):
        seed = seeds[k % len(seeds)]
        text = mutate(seed, rng)
        if text == seed or text in seen:
            continue
        seen.add(text)
        ours = _verify(text)
        we_reject = ours is None or bool(ours)     # (a parse error is a rejection too)
        they_reject = not jaxlib_verifies(text)
        if we_reject:
            counts["both reject" if they_reject else "only we reject"] += 1
        elif they_reject:
            counts["only jaxlib rejects"] += 1
            missed.append(text)
        else:
            counts["both accept"] += 1
    print(f"{len(seen)} distinct mutants of {len(seeds)} seeds: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    assert not missed, f"{len(missed)} mutant(s) jaxlib rejects and we accept; first:\n{missed[0]}"
