"""The conformance suite: case extraction, comparison, backends, runner, known-failure
policy, CLI. Corpus samples read ../shared/stablehlo-tests when present; the XLA and
upstream backends run only where jax is importable."""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from stablehlo_ref.cli import main as cli_main
from stablehlo_ref.conformance import (Backend, BackendError, BackendUnsupported, Case, NotRunnable, Rule,
                                       compare_output, extract_cases, get_backend, load_cases,
                                       load_known_failures, run_suite, strip_checks)
from stablehlo_ref.errors import UsageError

from corpus import KNOWN, SHARED

HAVE_JAX = importlib.util.find_spec("jax") is not None and importlib.util.find_spec("jaxlib") is not None

TESTDATA_STYLE = """
module @jit_main {
  func.func public @main() -> (tensor<3xf32> {jax.result_info = ""}) {
    %0 = call @inputs() : () -> tensor<3xf32>
    %1 = call @expected() : () -> tensor<3xf32>
    %2 = stablehlo.abs %0 : tensor<3xf32>
    stablehlo.custom_call @check.expect_close(%2, %1) {has_side_effect = true} : (tensor<3xf32>, tensor<3xf32>) -> ()
    return %2 : tensor<3xf32>
  }
  func.func private @inputs() -> (tensor<3xf32> {mhlo.layout_mode = "default"}) {
    %cst = stablehlo.constant dense<[-1.5, 2.0, -0.0]> : tensor<3xf32>
    return %cst : tensor<3xf32>
  }
  func.func private @expected() -> (tensor<3xf32> {mhlo.layout_mode = "default"}) {
    %cst = stablehlo.constant dense<[1.5, 2.0, 0.0]> : tensor<3xf32>
    return %cst : tensor<3xf32>
  }
}
"""

INTERPRET_STYLE = """
func.func @add_i32() {
  %a = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  %r = stablehlo.add %a, %a : tensor<2xi32>
  check.expect_eq_const %r, dense<[2, 4]> : tensor<2xi32>
  func.return
}
func.func @sqrt_c64() {
  %a = stablehlo.constant dense<[(4.0, 0.0)]> : tensor<1xcomplex<f32>>
  %r = stablehlo.sqrt %a : tensor<1xcomplex<f32>>
  check.expect_almost_eq_const %r, dense<[(2.0, 0.0)]> : tensor<1xcomplex<f32>>, tolerance = 0.01
  func.return
}

// -----

func.func @two_computed() {
  %a = stablehlo.constant dense<[1.0, 4.0]> : tensor<2xf64>
  %r = stablehlo.sqrt %a : tensor<2xf64>
  %e = stablehlo.multiply %a, %a : tensor<2xf64>
  %s = stablehlo.sqrt %e : tensor<2xf64>
  %t = stablehlo.sqrt %s : tensor<2xf64>
  check.expect_close %r, %t, max_ulp_difference = 2 : tensor<2xf64>, tensor<2xf64>
  func.return
}

// -----

func.func @no_checks() {
  func.return
}
"""

CHECK_EQ_STYLE = """
func.func public @main() -> tensor<i1> {
  %cst = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %a = stablehlo.constant dense<[-1.0, -2.0]> : tensor<2xf32>
  %r = stablehlo.negate %a : tensor<2xf32>
  %ok = stablehlo.custom_call @check.eq(%cst, %r) : (tensor<2xf32>, tensor<2xf32>) -> tensor<i1>
  return %ok : tensor<i1>
}
"""


# ---------------------------------------------------------------------------- extraction

def test_import_needs_no_optional_dependencies():
    code = ("import sys; import stablehlo_ref.conformance as c; "
            "bad = [m for m in ('jax', 'jaxlib', 'iree') if m in sys.modules]; "
            "assert not bad, bad; print(c.get_backend('iree').name)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "iree"


def test_custom_call_check_becomes_a_case():
    errors = []
    [case] = extract_cases(TESTDATA_STYLE, "testdata/abs.mlir", errors)
    assert case.id == "testdata/abs.mlir#0@main" and not errors
    assert "check." not in case.program and "func.func @main() -> tensor<3xf32>" in case.program
    assert "@expected" not in case.program or "call @expected" in case.program
    np.testing.assert_array_equal(case.expected[0], np.array([1.5, 2.0, 0.0], np.float32))
    assert case.rules == [Rule("ulp", max_ulp=3, check="@check.expect_close")]
    assert case.expected_from == ["constant"] and case.element_types == ["f32"]
    assert case.ops == ("stablehlo.abs",) and case.inputs == []
    out = get_backend("reference").run(case.program, [])
    assert compare_output(out[0], case.expected[0], "f32", case.rules[0]) is None


def test_check_dialect_ops_become_cases():
    errors = []
    cases = {c.id: c for c in extract_cases(INTERPRET_STYLE, "interpret/x.mlir", errors)}
    assert set(cases) == {"interpret/x.mlir#0@add_i32", "interpret/x.mlir#0@sqrt_c64",
                          "interpret/x.mlir#1@two_computed"}
    assert errors == []          # a chunk without checks is no case (and no error)
    add = cases["interpret/x.mlir#0@add_i32"]
    assert add.rules[0].kind == "exact" and "sqrt" not in add.program    # the other function is gone
    np.testing.assert_array_equal(add.expected[0], [2, 4])
    # complex: returned as real and imaginary parts, the check's tolerance per part
    c = cases["interpret/x.mlir#0@sqrt_c64"]
    assert c.labels == ["0.real", "0.imag"] and c.element_types == ["f32", "f32"]
    assert c.rules[0] == Rule("atol", atol=0.01, check="check.expect_almost_eq_const")
    assert "stablehlo.real" in c.program and "stablehlo.imag" in c.program
    # two computed values: the expected one comes from the reference interpreter, marked so
    t = cases["interpret/x.mlir#1@two_computed"]
    assert t.expected_from == ["reference"] and t.rules[0] == Rule("ulp", max_ulp=2, check="check.expect_close")
    np.testing.assert_allclose(t.expected[0], [1.0, 2.0])
    assert "stablehlo.multiply" in t.ops
    for case in cases.values():
        outs = get_backend("reference").run(case.program, case.inputs)
        assert len(outs) == len(case.expected)


def test_check_eq_with_expected_first_and_used_result():
    [case] = extract_cases(CHECK_EQ_STYLE, "t.mlir")
    np.testing.assert_array_equal(case.expected[0], [1.0, 2.0])
    assert case.rules[0].kind == "atol" and case.rules[0].atol == 1e-4
    assert "func.func @main() -> tensor<2xf32>" in case.program


def test_unrunnable_shapes_are_reported_not_raised():
    text = """
func.func @in_region() {
  %a = stablehlo.constant dense<1> : tensor<i32>
  %r = "stablehlo.case"(%a) ({
    check.expect_eq_const %a, dense<1> : tensor<i32>
    stablehlo.return %a : tensor<i32>
  }) : (tensor<i32>) -> tensor<i32>
  func.return
}
func.func @serialized() {
  %a = stablehlo.constant dense<1> : tensor<i32>
  check.expect_serialized_eq %a, probe_id = "x" : tensor<i32>
  func.return
}
"""
    errors = []
    assert extract_cases(text, "u.mlir", errors) == []
    reasons = dict(errors)
    assert "region" in reasons["u.mlir#0@in_region"]
    assert "no value comparison" in reasons["u.mlir#0@serialized"]
    with pytest.raises(NotRunnable):
        strip_checks(text)
    errors.clear()
    assert extract_cases("func.func @f() { check.expect_eq_const", "bad.mlir", errors) == []
    assert errors[0][0] == "bad.mlir#0@" and errors[0][1].startswith("parse error")


def test_strip_checks_for_the_benchmarks():
    text, labels = strip_checks(TESTDATA_STYLE)
    assert labels == ["0"] and "check." not in text


# ---------------------------------------------------------------------------- comparison

def test_compare_rules():
    ulp3 = Rule("ulp", max_ulp=3)
    x = np.array([1.0, np.nan, -0.0], np.float32)
    assert compare_output(x, x.copy(), "f32", ulp3) is None                 # NaN == NaN
    y = x.copy()
    y[0] = np.nextafter(np.nextafter(np.float32(1.0), np.float32(2)), np.float32(2))
    assert compare_output(y, x, "f32", ulp3) is None
    m = compare_output(y, x, "f32", Rule("ulp", max_ulp=1))
    assert m["index"] == [0] and m["ulp"] == 2 and m["count"] == 1
    assert compare_output(y, x, "f32", Rule("ulp", max_ulp=1), extra_ulps=1) is None
    m = compare_output(np.array([1, 2], np.int32), np.array([1, 3], np.int32), "i32", Rule("atol", atol=5))
    assert m["index"] == [1] and m["actual"] == "2" and m["expected"] == "3"       # ints: exact
    m = compare_output(np.zeros(3, np.float32), np.zeros(2, np.float32), "f32", ulp3)
    assert "shape" in m["message"]
    assert compare_output(np.array([1.00005]), np.array([1.0]), "f64", Rule("atol", atol=1e-4)) is None


# ---------------------------------------------------------------------------- backends and runner

class WrongBackend(Backend):
    """Returns what the reference returns, with every f32 output nudged by 1%."""
    name = "wrong"

    def run(self, program, inputs, timeout=None):
        if "stablehlo.add" in program:
            raise BackendUnsupported("add is not implemented")
        if "complex<" in program:
            raise BackendError("failed to compile: complex sqrt", "compile")
        outs = get_backend("reference").run(program, inputs)
        return [o * np.float32(1.01) if o.dtype == np.float32 else o for o in outs]


def _inline_cases():
    return (extract_cases(TESTDATA_STYLE, "testdata/abs.mlir")
            + extract_cases(INTERPRET_STYLE, "interpret/x.mlir"))


def test_wrong_backend_fails_with_a_useful_report():
    cases = _inline_cases()
    rep = run_suite(WrongBackend(), cases, timeout=30)
    status = {o.id: o for o in rep.outcomes}
    abs_ = status["testdata/abs.mlir#0@main"]
    assert abs_.status == "fail"
    m = abs_.mismatch
    assert m["index"] == [0] and m["actual"] == repr(float(np.float32(1.5) * np.float32(1.01)))
    assert m["expected"] == "1.5" and m["ulp"] > 3 and m["label"] == "0"
    assert "first at [0]" in abs_.message and "ULP apart" in abs_.message
    assert status["interpret/x.mlir#0@add_i32"].status == "unsupported"
    err = status["interpret/x.mlir#0@sqrt_c64"]
    assert err.status == "error" and err.stage == "compile" and "sqrt" in err.message
    assert not rep.ok
    by_op = rep.by_op()
    assert by_op["stablehlo.abs"]["fail"] == 1 and by_op["stablehlo.add"]["unsupported"] == 1
    text = rep.format()
    assert "FAIL: testdata/abs.mlir#0@main" in text and "stablehlo.abs" in text
    js = rep.to_json()
    assert js["summary"]["fail"] == 1 and js["summary"]["unsupported"] == 1
    json.dumps(js)
    # unsupported alone passes unless strict
    only_add = [c for c in cases if c.id.endswith("add_i32")]
    assert run_suite(WrongBackend(), only_add).ok
    assert not run_suite(WrongBackend(), only_add, strict=True).ok


def test_reference_timeout_is_an_error():
    text = """
func.func @spin() {
  %c0 = stablehlo.constant dense<0> : tensor<i64>
  %c1 = stablehlo.constant dense<1> : tensor<i64>
  %r = stablehlo.while(%i = %c0) : tensor<i64>
    cond {
      %t = stablehlo.compare GE, %i, %c0 : (tensor<i64>, tensor<i64>) -> tensor<i1>
      stablehlo.return %t : tensor<i1>
    } do {
      %n = stablehlo.add %i, %c1 : tensor<i64>
      stablehlo.return %n : tensor<i64>
    }
  check.expect_eq_const %r, dense<0> : tensor<i64>
  func.return
}
"""
    [case] = extract_cases(text, "spin.mlir")
    rep = run_suite(get_backend("reference"), [case], timeout=0.5)
    assert rep.outcomes[0].status == "error" and rep.outcomes[0].stage == "timeout"


def test_known_failures_policy(tmp_path):
    cases = _inline_cases()
    ids = [c.id for c in cases]
    abs_id = "testdata/abs.mlir#0@main"
    sqrt_id = "interpret/x.mlir#0@sqrt_c64"
    # both failing cases pinned: ok
    rep = run_suite(WrongBackend(), cases, known={abs_id: "1% off", sqrt_id: "no sqrt"})
    assert rep.ok and not rep.regressions() and not rep.stale()
    # a failure not listed: a regression
    rep = run_suite(WrongBackend(), cases, known={abs_id: "1% off"})
    assert not rep.ok and [o.id for o in rep.regressions()] == [sqrt_id]
    # a listed case that now passes, and an entry naming no case: stale
    two = "interpret/x.mlir#1@two_computed"
    gone = "interpret/x.mlir#0@renamed"
    rep = run_suite(WrongBackend(), cases, known={abs_id: "x", sqrt_id: "y", two: "z", gone: "w",
                                                  "other/file.mlir#0@main": "not in this run"})
    assert not rep.ok and sorted(rep.stale()) == sorted([two, gone])
    assert "now passing" in rep.format()
    # a `flaky:` entry (host-dependent outcome) may pass or fail: never stale
    rep = run_suite(WrongBackend(), cases, known={abs_id: "x", sqrt_id: "flaky: host FTZ",
                                                  two: "flaky: host FTZ"})
    assert rep.ok and not rep.stale()
    # a filtered run cannot judge entries it did not run
    rep = run_suite(WrongBackend(), cases, known={abs_id: "x", sqrt_id: "y", gone: "w"}, complete=False)
    assert rep.ok
    assert set(ids) >= {abs_id, sqrt_id, two}
    p = tmp_path / "k.txt"
    p.write_text("# comment\n\ntestdata/abs.mlir#0@main\t1% off\n")
    assert load_known_failures(str(p)) == {abs_id: "1% off"}
    p.write_text("testdata/abs.mlir#0@main\n")
    with pytest.raises(UsageError, match="no reason"):
        load_known_failures(str(p))


# ---------------------------------------------------------------------------- CLI

def test_cli_conform(tmp_path, capsys):
    corpus = tmp_path / "mycorpus"
    corpus.mkdir()
    (corpus / "abs.mlir").write_text(TESTDATA_STYLE)
    (corpus / "x.mlir").write_text(INTERPRET_STYLE)
    out = tmp_path / "rep.json"
    rc = cli_main(["conform", "--backend", "reference", "--corpus", str(corpus), "--json", str(out)])
    text = capsys.readouterr().out
    assert rc == 0, text
    assert "reference: 4 passed, 0 failed" in text
    rep = json.loads(out.read_text())
    assert rep["summary"]["pass"] == 4 and rep["ok"] is True
    assert {c["id"] for c in rep["cases"]} >= {"mycorpus/abs.mlir#0@main"}
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".tmp")] == []
    # filters
    rc = cli_main(["conform", "--backend", "reference", "--corpus", str(corpus), "--op", "add",
                   "--json", str(out)])
    assert rc == 0 and json.loads(out.read_text())["summary"]["pass"] == 1
    rc = cli_main(["conform", "--backend", "reference", "--corpus", str(corpus), "--pattern", "*#1@*"])
    assert rc == 0 and "1 passed" in capsys.readouterr().out
    # known failures: a listed case that passes fails the run
    kf = tmp_path / "known.txt"
    kf.write_text("mycorpus/abs.mlir#0@main\tpinned\n")
    rc = cli_main(["conform", "--backend", "reference", "--corpus", str(corpus), "--known-failures", str(kf)])
    assert rc == 1 and "now passing" in capsys.readouterr().out


def test_export_and_reload(tmp_path, capsys):
    corpus = tmp_path / "c"
    corpus.mkdir()
    (corpus / "x.mlir").write_text(INTERPRET_STYLE + """
// -----

func.func @bf16_case() {
  %a = stablehlo.constant dense<[1.5, -2.0]> : tensor<2xbf16>
  %r = stablehlo.negate %a : tensor<2xbf16>
  check.expect_eq_const %r, dense<[-1.5, 2.0]> : tensor<2xbf16>
  func.return
}
""")
    out = tmp_path / "exported"
    assert cli_main(["conform", "--export", str(out), "--corpus", str(corpus)]) == 0
    assert "wrote 4 case(s)" in capsys.readouterr().out
    index = json.loads((out / "cases.json").read_text())
    assert len(index["cases"]) == 4 and all((out / e["program"]).exists() for e in index["cases"])
    original = {c.id: c for c in load_cases([str(corpus)])}
    back = load_cases([str(out)])
    assert [c.id for c in back] == list(original)
    for c in back:
        o = original[c.id]
        assert c.program == o.program and c.rules == o.rules and c.element_types == o.element_types
        for a, b in zip(c.expected, o.expected):
            assert a.dtype == b.dtype and a.tobytes() == b.tobytes()
    rc = cli_main(["conform", "--backend", "reference", "--corpus", str(out)])
    assert rc == 0 and "4 passed" in capsys.readouterr().out


def test_cli_conform_usage_errors(tmp_path, capsys):
    def run(*argv):
        rc = cli_main(["conform", *argv])
        err = capsys.readouterr().err
        return rc, err
    rc, err = run("--backend", "nosuch", "--corpus", str(tmp_path))
    assert rc == 2 and err.startswith("error: unknown backend") and err.count("\n") == 1
    rc, err = run("--corpus", str(tmp_path))
    assert rc == 2 and "--backend" in err
    rc, err = run("--backend", "reference", "--corpus", str(tmp_path / "missing"))
    assert rc == 2 and "does not exist" in err
    rc, err = run("--backend", "reference", "--corpus", str(tmp_path), "--known-failures", str(tmp_path / "k"))
    assert rc == 2 and "cannot read known-failures" in err
    rc, err = run("--backend", "reference", "--corpus", str(tmp_path))
    assert rc == 2 and "no cases" in err


# ---------------------------------------------------------------------------- real corpora

def _sample(corpus: str, n: int):
    d = SHARED / corpus
    if not d.is_dir():
        pytest.skip(f"../shared/stablehlo-tests/{corpus} not present")
    files = sorted(p for p in d.glob("*.mlir"))
    step = max(1, len(files) // n)
    return [str(p) for p in files[::step][:n]]


def _pinned(path: Path) -> dict:
    return load_known_failures(str(path)) if path.exists() else {}


def _cases_of(files, corpus):
    cases = []
    for f in files:
        cases.extend(extract_cases(Path(f).read_text(), f"{corpus}/{Path(f).name}"))
    return cases


def test_reference_passes_corpus_sample():
    files = _sample("testdata", 40) + _sample("interpret", 15)
    cases = [c for c in _cases_of(files[:40], "testdata") + _cases_of(files[40:], "interpret")]
    known = {}
    for name in ("testdata", "interpret"):
        known.update(_pinned(KNOWN / f"{name}.txt"))
    assert len(cases) > 50
    rep = run_suite(get_backend("reference"), cases, timeout=60, known=known, complete=False)
    assert rep.ok, rep.format()


def _backend_sample(name: str):
    if not HAVE_JAX:
        pytest.skip("jax not importable")
    cases = _cases_of(_sample("testdata", 30), "testdata")
    # and a few hand-written programs where hardware backends differ from the spec (pinned)
    cases += _cases_of([str(SHARED / "interpret" / f) for f in ("ceil.mlir", "maximum.mlir", "scatter.mlir")
                        if (SHARED / "interpret" / f).exists()], "interpret")
    known = _pinned(KNOWN / f"conformance_{name}.txt")
    with get_backend(name) as b:
        ok, why = b.available()
        assert ok, why
        rep = run_suite(b, cases, timeout=120, known=known, complete=False)
    assert len(rep.outcomes) >= 25
    assert rep.ok, rep.format()


def test_xla_backend_sample():
    _backend_sample("xla")


def test_upstream_backend_sample():
    _backend_sample("upstream")


HAVE_IREE = importlib.util.find_spec("iree") is not None and all(
    importlib.util.find_spec(m) is not None for m in ("iree.compiler", "iree.runtime"))

# interpret/ cases where IREE needed adapter work (packed i4 and empty results, const-eval
# off for complex constants) or differs from the spec (pinned in conformance_iree.txt)
IREE_INTERPRET = {"ceil.mlir": ["#2@ceil_op_test_f32"], "maximum.mlir": ["#15@max_op_test_c64"],
                  "add.mlir": ["#2@add_op_test_si4", "#20@add_op_tensor_shape_with_zero_dim_size"],
                  "iota.mlir": ["#0@iota_op_test_si4_dim_0"], "multiply.mlir": ["#13@mul_op_test_c64"]}


def test_iree_backend_sample():
    """A fixed sample (24 cases, ~1 s each to compile) through IREE against its pinned list."""
    if not HAVE_IREE:
        pytest.skip("iree.compiler / iree.runtime not importable")
    cases = _cases_of(_sample("testdata", 18), "testdata")[:18]
    for f, ids in IREE_INTERPRET.items():
        if (SHARED / "interpret" / f).exists():
            want = {f"interpret/{f}{i}" for i in ids}
            cases += [c for c in _cases_of([str(SHARED / "interpret" / f)], "interpret") if c.id in want]
    assert len(cases) <= 25
    known = _pinned(KNOWN / "conformance_iree.txt")
    with get_backend("iree") as b:
        ok, why = b.available()
        assert ok, why
        rep = run_suite(b, cases, timeout=120, known=known, complete=False)
    assert len(rep.outcomes) >= 20
    assert rep.counts()["pass"] >= 15, rep.format()
    assert rep.ok, rep.format()


def test_cli_list_backends(capsys, monkeypatch):
    from stablehlo_ref.conformance import backends
    monkeypatch.setattr(backends, "BACKENDS", {"reference": backends.BACKENDS["reference"],
                                               "iree": backends.BACKENDS["iree"]})
    monkeypatch.setattr(backends, "_has_module", lambda name: False)
    assert cli_main(["conform", "--list-backends"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("reference: available")
    assert out[1].startswith("iree: unavailable: iree.compiler and iree.runtime not importable (pip install")


def test_upstream_worker_survives_an_abort():
    """upstream's interpreter aborts its process on an op it does not know: that case is
    reported (unsupported), the worker restarts and the next case runs."""
    if not HAVE_JAX:
        pytest.skip("jax not importable")
    bad = """
func.func @main() {
  %a = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %r = stablehlo.custom_call @no_such_target(%a) : (tensor<2xf32>) -> tensor<2xf32>
  check.expect_eq_const %r, dense<[1.0, 2.0]> : tensor<2xf32>
  func.return
}
"""
    cases = extract_cases(bad, "bad.mlir") + extract_cases(TESTDATA_STYLE, "abs.mlir")
    with get_backend("upstream") as b:
        rep = run_suite(b, cases, timeout=120)
    first, second = rep.outcomes
    assert first.status in ("unsupported", "error") and first.message, first
    assert "abort" in first.message or "nsupported" in first.message
    assert second.status == "pass", second


COMPLEX_MAIN_PROGRAM = """
func.func @main(%a: tensor<2x3xcomplex<f32>>, %s: tensor<complex<f32>>, %n: tensor<3xi32>, %d: tensor<2xcomplex<f64>>)
    -> (tensor<2x3xcomplex<f32>>, tensor<3xi32>, tensor<2xcomplex<f64>>, tensor<2x3xcomplex<f32>>) {
  %b = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<complex<f32>>) -> tensor<2x3xcomplex<f32>>
  %m = stablehlo.multiply %a, %b : tensor<2x3xcomplex<f32>>
  %e = stablehlo.exponential %d : tensor<2xcomplex<f64>>
  return %m, %n, %e, %a : tensor<2x3xcomplex<f32>>, tensor<3xi32>, tensor<2xcomplex<f64>>, tensor<2x3xcomplex<f32>>
}
"""


def _complex_main_inputs():
    nan = np.frombuffer(np.array([0x7FC01234], np.uint32).tobytes(), np.float32)[0]   # a NaN payload
    a = np.empty((2, 3), np.complex64)
    a.real = [[1.5, -0.0, np.inf], [nan, 3e-45, -2.0]]
    a.imag = [[-0.0, np.inf, 1.0], [0.5, -np.inf, nan]]
    return [a, np.array(0.25 - 2j, np.complex64), np.array([1, -2, 3], np.int32),
            np.array([1 + 1j, -0.5 + 3j], np.complex128)]


def _bits(a):
    a = np.asarray(a)
    return a.view(np.uint8).tobytes(), a.dtype, a.shape


def test_complex_parts_rewrite_keeps_the_values():
    """upstream's bindings cannot pass or return complex tensors: the upstream backend sends
    @main's complex arguments and results as real and imaginary parts (ComplexParts). The
    rewritten program, run on our interpreter, gives the original's values bit for bit
    (NaN payloads, signed zeros, infinities, subnormals; rank 0; complex<f32> and <f64>)."""
    from stablehlo_ref.conformance.backends import COMPLEX_MAIN, ComplexParts
    parts = ComplexParts.rewrite(COMPLEX_MAIN_PROGRAM)
    assert parts.inputs_complex == [True, True, False, True]
    assert parts.outputs_complex == [True, False, True, True]
    assert f"@{COMPLEX_MAIN}" in parts.program and "complex<" in parts.program
    ref = get_backend("reference")
    args = _complex_main_inputs()
    split = parts.inputs(args)
    assert [a.dtype for a in split] == [np.float32] * 4 + [np.int32] + [np.float64] * 2
    assert split[2].shape == () and split[3].shape == ()
    raw = ref.run(parts.program, split)
    assert [r.dtype.kind for r in raw] == ["f", "f", "i", "f", "f", "f", "f"]     # no complex crosses
    want = ref.run(COMPLEX_MAIN_PROGRAM, args)
    got = parts.outputs(raw)
    assert [_bits(g) for g in got] == [_bits(w) for w in want]
    assert _bits(got[3]) == _bits(args[0])
    # programs with no complex argument or result are left alone
    assert ComplexParts.rewrite("func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
                                "  return %a : tensor<2xf32>\n}\n") is None


def test_upstream_backend_runs_complex_arguments_and_results():
    """The same program through upstream's interpreter (complex<f32> and complex<f64> in and
    out): the identity result comes back bit for bit, the computed ones match ours."""
    if not HAVE_JAX:
        pytest.skip("jax not importable")
    args = _complex_main_inputs()
    want = get_backend("reference").run(COMPLEX_MAIN_PROGRAM, args)
    with get_backend("upstream") as b:
        got = b.run(COMPLEX_MAIN_PROGRAM, args, timeout=120)
    assert [g.dtype for g in got] == [np.complex64, np.int32, np.complex128, np.complex64]
    assert _bits(got[3]) == _bits(args[0])
    np.testing.assert_array_equal(got[1], want[1])
    np.testing.assert_allclose(got[2], want[2], rtol=1e-15)
    np.testing.assert_array_equal(got[0][0, :2], want[0][0, :2])     # finite products: exact in f32


def test_worker_timeout_restarts_the_worker():
    if not HAVE_JAX:
        pytest.skip("jax not importable")
    spin = """
func.func @main() {
  %c0 = stablehlo.constant dense<0> : tensor<i64>
  %c1 = stablehlo.constant dense<1> : tensor<i64>
  %r = stablehlo.while(%i = %c0) : tensor<i64>
    cond {
      %t = stablehlo.compare GE, %i, %c0 : (tensor<i64>, tensor<i64>) -> tensor<i1>
      stablehlo.return %t : tensor<i1>
    } do {
      %n = stablehlo.add %i, %c1 : tensor<i64>
      stablehlo.return %n : tensor<i64>
    }
  check.expect_eq_const %r, dense<0> : tensor<i64>
  func.return
}
"""
    cases = extract_cases(spin, "spin.mlir") + extract_cases(TESTDATA_STYLE, "abs.mlir")
    with get_backend("upstream") as b:
        b.available()
        rep = run_suite(b, cases, timeout=2)
    first, second = rep.outcomes
    assert first.status == "error" and first.stage == "timeout" and "restarted" in first.message
    assert second.status == "pass"
