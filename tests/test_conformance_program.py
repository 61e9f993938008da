"""User programs as conformance cases (the reference interpreter as oracle), random inputs,
the per-dtype rule, and the runner's --jobs."""
from __future__ import annotations

import threading
import time

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from stablehlo_ref.cli import main as cli_main
from stablehlo_ref.conformance import (Backend, BackendError, extract_cases, get_backend, program_case,
                                       program_rule, random_inputs, register_backend, run_program, run_suite)
from stablehlo_ref.conformance import backends as backends_mod
from stablehlo_ref.conformance.compare import compare_output
from stablehlo_ref.errors import UsageError
from stablehlo_ref.text import parse

PROGRAM = """
func.func @main(%a: tensor<4x8xf32>, %b: tensor<8x3xf32>, %i: tensor<4xi32>) -> (tensor<4x3xf32>, tensor<4xi32>) {
  %d = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  %j = stablehlo.multiply %i, %i : tensor<4xi32>
  return %d, %j : tensor<4x3xf32>, tensor<4xi32>
}
func.func @other(%x: tensor<2xbf16>, %p: tensor<3xi1>, %u: tensor<2xui8>) -> (tensor<2xbf16>, tensor<3xi1>, tensor<2xui8>) {
  %y = call @helper(%x) : (tensor<2xbf16>) -> tensor<2xbf16>
  %q = stablehlo.not %p : tensor<3xi1>
  return %y, %q, %u : tensor<2xbf16>, tensor<3xi1>, tensor<2xui8>
}
func.func private @helper(%x: tensor<2xbf16>) -> tensor<2xbf16> {
  %y = stablehlo.exponential %x : tensor<2xbf16>
  return %y : tensor<2xbf16>
}
"""

DYNAMIC = """
func.func @main(%a: tensor<?xf32>) -> tensor<?xf32> {
  %r = stablehlo.abs %a : tensor<?xf32>
  return %r : tensor<?xf32>
}
"""


class OffBackend(Backend):
    """Runs the reference and then spoils the first float output by a relative `off`."""
    name = "off"

    def __init__(self, off=1e-3):
        self.off = off
        self.ref = get_backend("reference")

    def run(self, program, inputs, timeout=None):
        outs = self.ref.run(program, inputs)
        for k, o in enumerate(outs):
            if o.dtype.kind == "f":
                o = o.copy()
                o.flat[1] = o.flat[1] * (1 + self.off) + self.off
                outs[k] = o
                break
        return outs


def test_reference_against_itself_api():
    rep = run_program(get_backend("reference"), PROGRAM, seed=7)
    assert rep.ok and rep.counts()["pass"] == 1, rep.format()
    case = program_case(PROGRAM, "other", seed=1)
    assert case.element_types == ["bf16", "i1", "ui8"]
    assert [r.kind for r in case.rules] == ["close", "exact", "exact"]
    assert "@main" in case.program and "@helper" in case.program and "@other" not in case.program
    assert "stablehlo.exponential" in case.ops and "stablehlo.not" in case.ops
    assert run_suite(get_backend("reference"), [case]).ok
    # explicit inputs: the expected values are the interpreter's
    a = np.ones((4, 8), np.float32)
    b = np.full((8, 3), 0.5, np.float32)
    i = np.arange(4, dtype=np.int32)
    case = program_case(PROGRAM, inputs=[a, b, i])
    np.testing.assert_array_equal(case.expected[0], np.full((4, 3), 4.0, np.float32))
    np.testing.assert_array_equal(case.expected[1], i * i)


def test_wrong_backend_is_caught_with_first_mismatch():
    rep = run_program(OffBackend(1e-3), PROGRAM, seed=3)
    o = rep.outcomes[0]
    assert o.status == "fail" and not rep.ok
    assert o.mismatch["index"] == [0, 1] and o.mismatch["output"] == 0 and o.mismatch["ulp"] > 64
    assert "first at [0, 1]" in o.message and "ULP apart" in o.message
    # an error far below the f32 bound (a different summation order) passes
    assert run_program(OffBackend(1e-7), PROGRAM, seed=3).ok


def test_registered_fake_backend_via_cli(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(backends_mod.BACKENDS, "off", lambda opt: OffBackend(float(opt or 1e-3)))
    p = tmp_path / "model.mlir"
    p.write_text(PROGRAM)
    assert cli_main(["conform", "--backend", "off", "--program", str(p), "--random-inputs", "5"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("FAIL: model.mlir@main: output 0:") and "ULP apart" in out
    assert cli_main(["conform", "--backend", "off:1e-8", "--program", str(p), "--random-inputs", "5"]) == 0
    assert "PASS: model.mlir@main" in capsys.readouterr().out
    # looser tolerances on the command line
    assert cli_main(["conform", "--backend", "off", "--program", str(p), "--random-inputs", "5",
                     "--rtol", "0.01", "--atol", "0.01"]) == 0
    capsys.readouterr()
    # --inputs from an npz, another entry, JSON report
    np.savez(tmp_path / "args.npz", arg_0=np.array([0.5, -1], ml_dtypes.bfloat16),
             arg_1=np.array([True, False, True]), arg_2=np.array([1, 2], np.uint8))
    js = tmp_path / "r.json"
    assert cli_main(["conform", "--backend", "reference", "--program", str(p), "--entry", "other",
                     "--inputs", str(tmp_path / "args.npz"), "--json", str(js)]) == 0
    assert "PASS: model.mlir@other" in capsys.readouterr().out
    import json
    assert json.loads(js.read_text())["summary"]["pass"] == 1


def test_register_backend_api():
    register_backend("off-test", lambda opt: OffBackend())
    try:
        b = get_backend("off-test")
        assert isinstance(b, OffBackend)
        assert not run_program(b, PROGRAM, seed=0).ok
    finally:
        backends_mod.BACKENDS.pop("off-test")


def test_program_usage_errors(tmp_path, capsys):
    with pytest.raises(UsageError, match="no function @nope"):
        program_case(PROGRAM, "nope")
    with pytest.raises(UsageError, match="dynamic shape"):
        program_case(DYNAMIC, seed=1)
    with pytest.raises(UsageError, match="takes 3 argument"):
        program_case(PROGRAM, inputs=[np.zeros((4, 8), np.float32)])
    with pytest.raises(UsageError, match="not both"):
        program_case(PROGRAM, inputs=[], seed=1)
    with pytest.raises(UsageError, match="does not match"):
        program_case(PROGRAM, inputs=[np.zeros((4, 7), np.float32), np.zeros((8, 3), np.float32),
                                      np.zeros(4, np.int32)])
    # a dynamic program runs with explicit inputs
    assert run_program(get_backend("reference"), DYNAMIC, inputs=[np.array([-1.0, 2.0], np.float32)]).ok
    p = tmp_path / "model.mlir"
    p.write_text(PROGRAM)

    def run(*a):
        rc = cli_main(["conform", *a])
        return rc, capsys.readouterr().err

    rc, err = run("--backend", "reference", "--program", str(p), "--inputs", "x.npz", "--random-inputs", "1")
    assert rc == 2 and "not both" in err and err.count("\n") == 1
    rc, err = run("--backend", "reference", "--program", str(p), "--corpus", str(tmp_path))
    assert rc == 2 and "--program goes with neither" in err
    rc, err = run("--backend", "reference", "--corpus", str(tmp_path), "--random-inputs", "1")
    assert rc == 2 and "--random-inputs goes with --program" in err
    rc, err = run("--backend", "reference", "--program", str(tmp_path / "missing.mlir"))
    assert rc == 2 and err.startswith("error:")
    rc, err = run("--backend", "reference", "--program", str(p), "--random-inputs", "1", "--jobs", "0")
    assert rc == 2 and "--jobs" in err


def test_program_from_artifact(tmp_path):
    from stablehlo_ref import serialize
    art = tmp_path / "m.mlirbc"
    art.write_bytes(serialize(parse(PROGRAM), "1.0.0"))
    rep = run_program(get_backend("reference"), str(art), seed=2)
    assert rep.ok, rep.format()
    assert run_program(get_backend("reference"), parse(PROGRAM), entry="other", seed=2).ok


def test_random_inputs_per_dtype():
    types = parse("""
func.func @main(%a: tensor<3x4xf32>, %b: tensor<5xi8>, %c: tensor<6xui4>, %d: tensor<2xcomplex<f64>>,
                %e: tensor<7xi1>, %f: tensor<100xbf16>, %g: tensor<100xi64>, %h: tensor<2x!quant.uniform<i8:f32, 0.5:-1>>) {
  return
}""").function("main").attributes["function_type"].type.inputs
    xs = random_inputs(types, 11)
    assert [x.shape for x in xs] == [(3, 4), (5,), (6,), (2,), (7,), (100,), (100,), (2,)]
    assert xs[0].dtype == np.float32 and np.all(np.abs(xs[0]) <= 1)
    assert xs[1].dtype == np.int8 and xs[1].min() >= -8 and xs[1].max() <= 8
    assert xs[2].dtype == ml_dtypes.uint4 and int(xs[2].astype(np.int64).max()) <= 15
    assert xs[3].dtype == np.complex128 and np.all(np.abs(xs[3].real) <= 1)
    assert xs[4].dtype == np.bool_
    assert xs[5].dtype == ml_dtypes.bfloat16 and len(set(xs[5].astype(np.float32).tolist())) > 10
    assert xs[6].min() >= -8 and xs[6].max() <= 8 and xs[7].dtype == np.int8
    again = random_inputs(types, 11)
    assert all(np.array_equal(x.view(np.uint8), y.view(np.uint8)) for x, y in zip(xs, again))
    other = random_inputs(types, 12)
    assert not np.array_equal(xs[0], other[0])


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(["f64", "f32", "f16", "bf16"]), st.integers(0, 2 ** 32 - 1))
def test_close_rule_bounds(et, seed):
    """The default rule accepts a few ULP (and small relative error) and rejects a 1% error."""
    rng = np.random.default_rng(seed)
    dt = {"f64": np.float64, "f32": np.float32, "f16": np.float16, "bf16": ml_dtypes.bfloat16}[et]
    e = rng.uniform(-10, 10, size=16).astype(dt)
    rule = program_rule(et)
    near = np.nextafter(e.astype(np.float64), np.inf).astype(dt) if et == "f64" else e
    assert compare_output(near, e, et, rule) is None
    far = (e.astype(np.float64) * 1.05 + 0.1).astype(dt)
    m = compare_output(far, e, et, rule)
    assert m is not None and m["count"] >= 1
    nan = e.copy()
    nan[0] = np.nan
    assert compare_output(nan, nan.copy(), et, rule) is None
    inf = e.copy()
    inf[0] = np.inf
    assert compare_output(inf, inf.copy(), et, rule) is None
    neg = inf.copy()
    neg[0] = -np.inf
    assert compare_output(neg, inf, et, rule) is not None


def test_integer_outputs_exact():
    rule = program_rule("i32")
    assert rule.kind == "exact"
    assert compare_output(np.array([1, 2], np.int32), np.array([1, 3], np.int32), "i32", rule)["index"] == [1]
    assert program_rule("complex<f32>").kind == "close"


# ---------------------------------------------------------------------------- --jobs

class SlowBackend(Backend):
    """Reference results after a delay that differs per call; counts concurrent calls."""
    name = "slow"

    def __init__(self, shared=None):
        self.ref = get_backend("reference")
        self.shared = shared if shared is not None else {"now": 0, "max": 0, "lock": threading.Lock(),
                                                         "clones": 0, "closed": 0}

    def clone(self):
        self.shared["clones"] += 1
        return SlowBackend(self.shared)

    def close(self):
        self.shared["closed"] += 1

    def run(self, program, inputs, timeout=None):
        s = self.shared
        with s["lock"]:
            s["now"] += 1
            s["max"] = max(s["max"], s["now"])
        try:
            time.sleep(0.05 if "add" in program else 0.01)
            if "subtract" in program:
                raise BackendError("no subtract here", "compile")
            return self.ref.run(program, inputs)
        finally:
            with s["lock"]:
                s["now"] -= 1


def _many_cases():
    text = "\n// -----\n".join(f"""
func.func @f{k}() {{
  %a = stablehlo.constant dense<[{k}, 2]> : tensor<2xi32>
  %r = stablehlo.{'add' if k % 3 == 0 else 'subtract' if k % 5 == 0 else 'multiply'} %a, %a : tensor<2xi32>
  check.expect_eq_const %r, dense<[{2 * k if k % 3 == 0 else 0 if k % 5 == 0 else k * k}, {4 if k % 3 == 0 else 0 if k % 5 == 0 else 4}]> : tensor<2xi32>
  func.return
}}""" for k in range(12))
    return extract_cases(text, "jobs.mlir")


def test_jobs_keeps_case_order_and_runs_concurrently():
    cases = _many_cases()
    serial = run_suite(SlowBackend(), cases)
    b = SlowBackend()
    seen = []
    par = run_suite(b, cases, jobs=4, progress=seen.append)
    assert [o.id for o in par.outcomes] == [c.id for c in cases]
    assert [o.status for o in par.outcomes] == [o.status for o in serial.outcomes]
    assert sorted(o.id for o in seen) == sorted(c.id for c in cases)
    assert b.shared["max"] > 1 and b.shared["clones"] == 3 and b.shared["closed"] == 3
    assert par.counts()["error"] == serial.counts()["error"] > 0


def test_cli_jobs(tmp_path, capsys):
    corpus = tmp_path / "c"
    corpus.mkdir()
    (corpus / "x.mlir").write_text("""
func.func @a() {
  %a = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  %r = stablehlo.add %a, %a : tensor<2xi32>
  check.expect_eq_const %r, dense<[2, 4]> : tensor<2xi32>
  func.return
}
func.func @b() {
  %a = stablehlo.constant dense<[1.0, 4.0]> : tensor<2xf32>
  %r = stablehlo.sqrt %a : tensor<2xf32>
  check.expect_almost_eq_const %r, dense<[1.0, 2.0]> : tensor<2xf32>
  func.return
}
""")
    assert cli_main(["conform", "--backend", "reference", "--corpus", str(corpus), "--jobs", "2"]) == 0
    assert "2 passed" in capsys.readouterr().out


def test_scalar_mismatch_reports_ulp():
    from stablehlo_ref.conformance import Rule
    m = compare_output(np.float64("nan"), np.float64("inf"), "f64", Rule("atol", atol=1e-4))
    assert m["index"] == [] and m["count"] == 1 and m["ulp"] > 0
    m = compare_output(np.float32(1.5), np.float32(1.0), "f32", program_rule("f32"))
    assert m["index"] == [] and m["ulp"] == 4194304


def test_jax_export_program_on_xla(tmp_path, capsys):
    """A jax.export payload as a user program, random inputs, on XLA against the reference."""
    import importlib.util
    if importlib.util.find_spec("jax") is None:
        pytest.skip("jax not importable")
    import jax
    import jax.numpy as jnp
    from jax import export

    def f(x, w, b):
        return jax.nn.relu(x @ w + b).sum(axis=0), jnp.argmax(x, axis=1)
    spec = [jax.ShapeDtypeStruct(s, jnp.float32) for s in ((16, 32), (32, 8), (8,))]
    p = tmp_path / "model.jaxexp"
    p.write_bytes(export.export(jax.jit(f))(*spec).serialize())
    assert cli_main(["conform", "--backend", "xla", "--program", str(p), "--random-inputs", "1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("PASS: model.jaxexp@main") and "output 1: i32, exact" in out


def test_lapack_program_on_xla(tmp_path, capsys):
    """A jax.export program calling LAPACK (@lapack_*_ffi): the XLA worker registers the targets
    jax registers and fills LAPACK's table before compiling (it crashed with exit -11 before)."""
    import importlib.util
    if importlib.util.find_spec("jax") is None:
        pytest.skip("jax not importable")
    import jax
    import jax.numpy as jnp
    from jax import export

    def f(a, b):
        return jnp.linalg.solve(a, b), jnp.linalg.det(a), jnp.linalg.cholesky(a @ a.T + 4 * jnp.eye(4))
    a = np.random.default_rng(0).standard_normal((4, 4)).astype(np.float32) + 4 * np.eye(4, dtype=np.float32)
    b = np.ones((4, 2), np.float32)
    p = tmp_path / "solve.mlirbc"
    p.write_bytes(export.export(jax.jit(f))(a, b).mlir_module_serialized)
    np.savez(tmp_path / "args.npz", arg_0=a, arg_1=b)
    assert cli_main(["conform", "--backend", "xla", "--program", str(p), "--inputs", str(tmp_path / "args.npz")]) == 0
    assert capsys.readouterr().out.startswith("PASS: solve.mlirbc@main")


POLY = """
module @poly attributes {jax.uses_shape_polymorphism = true} {
  func.func public @main(%arg0: tensor<?x?xf32>) -> tensor<?x?xf32> {
    %0 = stablehlo.get_dimension_size %arg0, dim = 0 : (tensor<?x?xf32>) -> tensor<i32>
    %1 = stablehlo.get_dimension_size %arg0, dim = 1 : (tensor<?x?xf32>) -> tensor<i32>
    %2 = call @inner(%0, %1, %arg0) : (tensor<i32>, tensor<i32>, tensor<?x?xf32>) -> tensor<?x?xf32>
    return %2 : tensor<?x?xf32>
  }
  func.func private @inner(%b: tensor<i32> {jax.global_constant = "b"}, %n: tensor<i32> {jax.global_constant = "n"}, %x: tensor<?x?xf32>) -> tensor<?x?xf32> {
    %z = stablehlo.constant dense<0.0> : tensor<f32>
    %p = stablehlo.pad %x, %z, low = [0, 1], high = [0, 2], interior = [0, 0] : (tensor<?x?xf32>, tensor<f32>) -> tensor<?x?xf32>
    return %p : tensor<?x?xf32>
  }
}
"""


def test_random_inputs_for_symbolic_dims(tmp_path, capsys):
    """--dim sizes jax's dimension variables (or argI.D) for --random-inputs."""
    m = parse(POLY)
    c = program_case(m, seed=3, dims={"b": 2, "n": 5})
    assert c.inputs[0].shape == (2, 5) and c.expected[0].shape == (2, 8)
    assert program_case(m, seed=3, dims={"arg0.0": 2, "arg0.1": 5}).inputs[0].tolist() == c.inputs[0].tolist()
    with pytest.raises(UsageError, match="no symbolic dimension 'k'.*b, n"):
        program_case(m, seed=3, dims={"k": 2})
    with pytest.raises(UsageError, match="dynamic shape.*--dim"):
        program_case(m, seed=3, dims={"b": 2})
    path = tmp_path / "poly.mlir"
    path.write_text(POLY)
    assert cli_main(["conform", "--backend", "reference", "--program", str(path), "--random-inputs", "1",
                     "--dim", "b=3", "--dim", "n=4"]) == 0
    assert cli_main(["conform", "--backend", "reference", "--program", str(path), "--random-inputs", "1",
                     "--dim", "b"]) == 2
    assert "NAME=SIZE" in capsys.readouterr().err
