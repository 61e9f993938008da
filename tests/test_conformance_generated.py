"""The generated conformance suite (conformance/generated): oracles independent of the
interpreter, oracles checked against each other, determinism, the fast subset passing on
the reference backend, export."""
from __future__ import annotations

import ast
import importlib.util
import json
import math
import subprocess
import sys
import zlib
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from stablehlo_ref.conformance import get_backend, load_known_failures, run_suite
from stablehlo_ref.conformance.generated import FAST_TYPES, generate_cases
from stablehlo_ref.conformance.generated.formats import UNSPECIFIED, float_format, round_value

REPO = Path(__file__).resolve().parent.parent
GEN = REPO / "conformance" / "generated"
KNOWN = REPO / "tests" / "known_failures" / "generated_reference.txt"
UNCOVERED = REPO / "tests" / "known_failures" / "generated_uncovered.txt"

# Case and Rule are plain data; conformance/cases.py (upstream-program extraction) reads the
# interpreter's check tolerances, which no oracle uses
ALLOWED_EDGES = {"stablehlo_ref.conformance.cases",
                 # the package's lazy top-level API (imports inside functions only)
                 "stablehlo_ref"}


def _module_file(name: str):
    parts = name.split(".")
    if parts[0] != "stablehlo_ref":
        return None
    roots = {"serialization": REPO / "serialization", "conformance": REPO / "conformance", "specdata": REPO / "spec"}
    base = roots.get(parts[1], REPO / "stablehlo_ref" / parts[1]) if len(parts) > 1 else REPO / "stablehlo_ref"
    rest = parts[2:] if len(parts) > 1 and parts[1] in roots else parts[2:]
    if len(parts) > 1 and parts[1] not in roots:
        base = REPO / "stablehlo_ref" / parts[1]
    p = base.joinpath(*rest)
    if p.with_suffix(".py").is_file():
        return p.with_suffix(".py")
    if (p / "__init__.py").is_file():
        return p / "__init__.py"
    return None


def _imports(path: Path, modname: str):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    pkg = modname if path.name == "__init__.py" else modname.rsplit(".", 1)[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield a.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg.split(".")
                base = base[:len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            yield mod
            for a in node.names:
                yield f"{mod}.{a.name}"


def test_oracle_code_never_imports_the_interpreter():
    """Walks the imports of every module of conformance/generated, following them through
    stablehlo_ref's own modules: none may reach stablehlo_ref.interpreter."""
    todo = [(f"stablehlo_ref.conformance.generated.{p.stem}" if p.stem != "__init__" else
             "stablehlo_ref.conformance.generated", (f"stablehlo_ref.conformance.generated.{p.stem}",))
            for p in GEN.glob("*.py")]
    seen = set()
    while todo:
        name, chain = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        assert not name.startswith("stablehlo_ref.interpreter"), " -> ".join(chain)
        f = _module_file(name)
        if f is None or name in ALLOWED_EDGES:
            continue
        for m in _imports(f, name):
            if m.startswith("stablehlo_ref") and m not in seen:
                todo.append((m, chain + (m,)))
    assert "stablehlo_ref.conformance.generated.oracles" in seen


# ------------------------------------------------------------------ oracles against each other

NARROW = ["bf16", "f16", "f8E4M3FN", "f8E5M2", "f8E4M3FNUZ", "f8E5M2FNUZ", "f8E4M3", "f8E3M4",
          "f8E4M3B11FNUZ", "f6E2M3FN", "f6E3M2FN", "f4E2M1FN", "f32"]


@settings(max_examples=300, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False, width=64), st.sampled_from(NARROW))
def test_rounding_agrees_with_ml_dtypes(x, name):
    """One rounding from f64 two ways: our exact rounding of the value and ml_dtypes'/numpy's
    cast (itself a single rounding from f64), wherever the format fixes the result."""
    fmt = float_format(name)
    r = round_value(x, fmt)
    if r is UNSPECIFIED:
        return
    with np.errstate(all="ignore"):
        c = float(np.array(x, np.float64).astype(fmt.dtype).astype(np.float64))
    assert r == c or (math.isnan(r) and math.isnan(c)), (x, name, r, c)
    if r == 0:
        assert math.copysign(1, r) == math.copysign(1, c) or not fmt.has_neg_zero


@settings(max_examples=200, deadline=None)
@given(st.floats(min_value=1e-30, max_value=1e30, allow_nan=False), st.floats(min_value=1e-30, max_value=1e30))
def test_exact_arithmetic_agrees_with_ieee_f64(a, b):
    """Fraction arithmetic rounded once equals the hardware's correctly rounded f64 result."""
    from stablehlo_ref.conformance.generated import oracles as O
    f64 = float_format("f64")
    assert round_value(O.add(a, b), f64) == a + b
    assert round_value(O.multiply(a, b), f64) == a * b
    assert round_value(O.divide(a, b), f64) == a / b
    assert round_value(O.sqrt(a), f64) == math.sqrt(a)


@settings(max_examples=200, deadline=None)
@given(st.floats(min_value=-80, max_value=80, allow_nan=False))
def test_mpmath_oracles_agree_with_libm_to_one_ulp_in_f32(x):
    """Two oracles for f32 transcendentals: mpmath at 256 bits rounded once, and the f64 libm
    value rounded to f32; they may differ only by the double rounding (<= 1 ULP)."""
    from stablehlo_ref.conformance.generated import oracles as O
    from stablehlo_ref.conformance.generated.formats import workprec
    f32 = float_format("f32")
    for fn, ref in ((O.exponential, math.exp), (O.sine, math.sin), (O.tanh, math.tanh), (O.atan, math.atan)):
        with workprec():
            a = round_value(fn(x), f32)
        b = float(np.float32(ref(x)))
        ia = np.array(a, np.float32).view(np.int32).astype(np.int64)
        ib = np.array(b, np.float32).view(np.int32).astype(np.int64)
        assert abs(int(ia) - int(ib)) <= 1, (fn.__name__, x, a, b)


def test_round_ties_to_even_and_boundaries():
    f16 = float_format("f16")
    assert round_value(Fraction(2049), f16) == 2048.0           # a tie: to even
    assert round_value(Fraction(2051), f16) == 2052.0
    assert round_value(Fraction(65520), f16) == math.inf         # halfway above max: overflows
    assert round_value(Fraction(65519), f16) == 65504.0
    assert round_value(Fraction(1, 2 ** 25), f16) == 0.0         # half the smallest subnormal: to even (0)
    assert round_value(Fraction(3, 2 ** 26), f16) == 2.0 ** -24
    assert round_value(Fraction(-1, 2 ** 30), f16) == 0.0 and math.copysign(1, round_value(Fraction(-1, 2 ** 30), f16)) < 0
    assert round_value(Fraction(500), float_format("f8E4M3FN")) is UNSPECIFIED    # overflow without inf


# ------------------------------------------------------------------ the suite

def test_generation_is_deterministic():
    a = generate_cases(op="multiply")
    b = generate_cases(op="multiply")
    assert [c.id for c in a] == [c.id for c in b] and a
    for x, y in zip(a, b):
        assert x.program == y.program
        for p, q in zip(x.inputs + x.expected, y.inputs + y.expected):
            assert p.dtype == q.dtype and p.tobytes() == q.tobytes()


def test_cases_say_what_they_test():
    for c in generate_cases(op="compare") + generate_cases(op="convert") + generate_cases(op="transpose"):
        assert c.op and c.element_type and c.variant and c.oracle and c.provenance
        assert c.id == f"generated/{c.op}/{c.element_type}/{c.variant}"
        assert "func.func @main" in c.program


def test_fast_subset_passes_on_the_reference():
    cases = generate_cases()
    assert len(cases) > 500
    assert len({c.op for c in cases}) > 90 and set(FAST_TYPES) <= {c.element_type for c in cases}
    known = load_known_failures(str(KNOWN))
    with get_backend("reference") as b:
        rep = run_suite(b, cases, known=known, complete=False)
    # the fast subset draws fewer values per case than the full one, so a listed case may pass
    # here; staleness is judged by the full run (test_full_suite_passes_on_the_reference)
    assert not rep.regressions(), rep.format()[-3000:]


@pytest.mark.slow
def test_full_suite_passes_on_the_reference():
    cases = generate_cases(full=True)
    known = load_known_failures(str(KNOWN))
    with get_backend("reference") as b:
        rep = run_suite(b, cases, known=known, complete=True)
    assert rep.ok, rep.format()[-3000:]
    stale = [k for k in known if k not in {c.id for c in cases}]
    assert not stale, f"known failures naming no case: {stale}"
    # docs/ops.md's generated-cases column comes from counts.json
    from stablehlo_ref import docs
    counts = {}
    for c in cases:
        counts[c.op] = counts.get(c.op, 0) + 1
    assert docs.generated_counts() == counts, "conformance/generated/counts.json is stale: run `python -m stablehlo_ref.docs --generated-counts`"
    from stablehlo_ref.conformance.generated.coverage import covered_types
    assert docs.generated_types() == covered_types(cases), \
        "conformance/generated/types.json is stale: run `python -m stablehlo_ref.docs --generated-counts`"


def test_coverage_of_ops_with_kernels():
    """Every op with an interpreter kernel has generated cases, or is listed (with a reason)
    in generated_uncovered.txt; the list may only shrink."""
    from stablehlo_ref.docs import generated_counts, kernel_names
    listed = load_known_failures(str(UNCOVERED))
    covered = set(generated_counts())       # counts.json: checked against the generator by the slow test
    ops = {o for o in kernel_names() if o.startswith(("stablehlo.", "chlo."))}
    missing = sorted(ops - covered - set(listed))
    assert not missing, f"ops with a kernel and neither cases nor an entry in {UNCOVERED.name}: {missing}"
    stale = sorted(set(listed) & covered)
    assert not stale, f"now covered, remove from {UNCOVERED.name}: {stale}"


GAPS = REPO / "tests" / "known_failures" / "generated_type_gaps.txt"


def test_element_type_coverage():
    """Every element type the spec admits for an op with cases is exercised by a case, or is
    listed (with a reason) in generated_type_gaps.txt; the list may only shrink."""
    from stablehlo_ref.conformance.generated.coverage import load_gaps, load_types_json, type_gaps
    listed = load_gaps(GAPS)
    gaps = {(op, t) for op, ts in type_gaps(load_types_json()).items() for t in ts}
    missing = sorted(gaps - set(listed))
    assert not missing, f"admitted element types without a case and without an entry in {GAPS.name}: {missing}"
    stale = sorted(set(listed) - gaps)
    assert not stale, f"now covered (or no longer admitted), remove from {GAPS.name}: {stale}"


def test_element_type_coverage_reads_the_spec():
    from stablehlo_ref.conformance.generated.coverage import admitted_types, coverage_cell, type_gaps
    assert "complex<f32>" in admitted_types("stablehlo.sine") and "i32" not in admitted_types("stablehlo.sine")
    assert "i1" in admitted_types("stablehlo.and") and "f32" not in admitted_types("stablehlo.and")
    assert admitted_types("stablehlo.complex") == ["complex<f32>", "complex<f64>"]
    assert type_gaps({"stablehlo.and": ["i1"]})["stablehlo.and"][0] == "i2"
    assert coverage_cell("stablehlo.complex", {"stablehlo.complex": ["complex<f64>"]}) == "1/2"
    assert coverage_cell("stablehlo.complex", {}) == "-"


def test_export_layout_round_trips(tmp_path):
    from stablehlo_ref.conformance.generated.export import export_generated, load_generated_export
    cases = generate_cases(op="add")[:4] + generate_cases(op="transpose")[:2]
    path = export_generated(cases, str(tmp_path), target="1.0.0")
    m = json.loads(Path(path).read_text())
    assert m["target_version"] == "1.0.0" and len(m["cases"]) == len(cases)
    e = m["cases"][0]
    assert (tmp_path / e["program"]).is_file() and (tmp_path / e["artifact"]).is_file()
    import stablehlo_ref
    assert stablehlo_ref.artifact_version((tmp_path / e["artifact"]).read_bytes()) == "1.0.0"
    back = load_generated_export(str(tmp_path))
    with get_backend("reference") as b:
        rep = run_suite(b, back)
    assert rep.counts()["pass"] == len(cases)


def test_cli_generated_suite(tmp_path):
    out = subprocess.run([sys.executable, "-m", "stablehlo_ref.cli", "conformance", "--suite", "generated",
                          "--backend", "reference", "--op", "popcnt", "--json", str(tmp_path / "r.json")],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    rep = json.loads((tmp_path / "r.json").read_text())
    assert rep["summary"]["pass"] >= 1 and all(c["op"] == "stablehlo.popcnt" for c in rep["cases"])
    bad = subprocess.run([sys.executable, "-m", "stablehlo_ref.cli", "conformance", "--suite", "generated",
                          "--backend", "reference", "--corpus", str(tmp_path)], capture_output=True, text=True)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


# ------------------------------------------------------------------ third-party backends

HAVE_JAX = all(__import__("importlib").util.find_spec(m) is not None for m in ("jax", "jaxlib"))
KNOWN_XLA = REPO / "tests" / "known_failures" / "generated_xla.txt"


def _sample(cases, every):
    """A fixed sample: the cases whose id hashes to 0 modulo `every` (crc32, deterministic).
    Chosen by id alone, so adding or removing cases never changes whether an existing case is
    in the sample (a positional every-n-th sample shifts, and the pinned lists then go stale)."""
    return [c for c in cases if zlib.crc32(c.id.encode("utf-8")) % every == 0]


def _single_process(cases):
    """How many cases a one-process backend can run at all (multi-process cases are reported
    unsupported by every backend but the reference)."""
    return sum(1 for c in cases if c.num_replicas * c.num_partitions == 1 and not c.infeed)


def test_sample_is_chosen_by_id_alone():
    every = generate_cases(op="add") + generate_cases(op="transpose")
    picked = {c.id for c in _sample(every, 6)}
    assert picked and len(picked) < len(every)
    # dropping cases (or adding others before them) leaves the choice of the rest unchanged
    assert {c.id for c in _sample(every[1::2], 6)} == {c.id for c in every[1::2]} & picked
    assert {c.id for c in _sample(list(reversed(every)), 6)} == picked


def test_generated_sample_on_xla():
    """A fixed sample of the fast subset on XLA CPU (jax) against its pinned differences
    (tests/known_failures/generated_xla.txt; host-dependent ones, such as flushed
    subnormals, are `flaky:` entries)."""
    if not HAVE_JAX:
        pytest.skip("jax not importable")
    cases = _sample(generate_cases(), 6)
    known = load_known_failures(str(KNOWN_XLA))
    with get_backend("xla") as b:
        ok, why = b.available()
        assert ok, why
        rep = run_suite(b, cases, timeout=120, known=known, complete=False)
    assert rep.counts()["pass"] >= _single_process(cases) // 2, rep.format()[-3000:]
    assert not rep.regressions(), rep.format()[-3000:]


KNOWN_UPSTREAM = REPO / "tests" / "known_failures" / "generated_upstream.txt"
KNOWN_IREE = REPO / "tests" / "known_failures" / "generated_iree.txt"


def test_generated_sample_on_upstream():
    """The same fixed sample on upstream's C++ reference interpreter, against its pinned
    differences (tests/known_failures/generated_upstream.txt): an unlisted failure or a listed,
    non-flaky case that passes fails the test."""
    if not HAVE_JAX:
        pytest.skip("jax not importable (the upstream interpreter comes with the interop extra)")
    cases = _sample(generate_cases(), 6)
    known = load_known_failures(str(KNOWN_UPSTREAM))
    with get_backend("upstream") as b:
        ok, why = b.available()
        if not ok:
            pytest.skip(f"upstream interpreter unavailable: {why}")
        rep = run_suite(b, cases, timeout=120, known=known, complete=False)
    assert rep.counts()["pass"] >= _single_process(cases) // 2, rep.format()[-3000:]
    assert rep.ok, rep.format()[-3000:]


def _importable(name):
    try:
        return importlib.util.find_spec(name) is not None
    except ImportError:
        return False


HAVE_IREE = _importable("iree.compiler") and _importable("iree.runtime")

# real IREE deviations the sample always includes (besides the hashed 1-in-40 sample): i1 addition as
# xor, f8E4M3FN (no infinities; NaN is S.1111.111) compared, clamped and classified wrongly, a
# negative gather start index not clamped into range
IREE_DEVIATIONS = ["generated/stablehlo.add/i1/values", "generated/stablehlo.compare/f8E4M3FN/LT_FLOAT",
                   "generated/stablehlo.is_finite/f8E4M3FN/values", "generated/stablehlo.clamp/f8E4M3FN/values",
                   "generated/stablehlo.gather/i64/rows_3x4_n3"]


def test_generated_sample_on_iree():
    """A fixed sample (~1 s each to compile) through IREE's CPU backend against its pinned list
    (tests/known_failures/generated_iree.txt; its code is compiled for the host CPU, so ULP-level
    and subnormal differences are `flaky:` entries)."""
    if not HAVE_IREE:
        pytest.skip("iree.compiler / iree.runtime not importable")
    every = generate_cases()
    cases = _sample(every, 40)
    cases += [c for c in every if c.id in IREE_DEVIATIONS and c not in cases]
    known = load_known_failures(str(KNOWN_IREE))
    assert all(k in known and not known[k].startswith("flaky") for k in IREE_DEVIATIONS)
    with get_backend("iree") as b:
        ok, why = b.available()
        assert ok, why
        rep = run_suite(b, cases, timeout=120, known=known, complete=False)
    assert rep.counts()["pass"] >= _single_process(cases) // 2, rep.format()[-3000:]
    assert rep.ok, rep.format()[-3000:]


def test_generated_suite_takes_repeated_known_failures_files(tmp_path, capsys):
    """--known-failures is repeatable (and NAME=FILE names one backend's list) with --suite
    generated too: it was read as one path (an internal TypeError)."""
    from stablehlo_ref.cli import main
    a = tmp_path / "a.txt"
    a.write_text("generated/stablehlo.add/i8/no-such-variant\tflaky: listed, never run\n")
    b = tmp_path / "b.txt"
    b.write_text("# nothing\n")
    argv = ["conformance", "--suite", "generated", "--backend", "reference", "--pattern", "generated/stablehlo.add/i8/*",
            "--known-failures", str(a), "--known-failures", f"reference={b}", "--known-failures", f"xla={tmp_path / 'none.txt'}"]
    assert main(argv) == 0, capsys.readouterr()
    assert "passed" in capsys.readouterr().out
    assert main(argv[:-2] + ["--known-failures", str(tmp_path / "missing.txt")]) == 2
