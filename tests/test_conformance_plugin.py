"""The conformance suite as pytest tests (stablehlo_ref.conformance.pytest_plugin)."""
from __future__ import annotations

import os
import subprocess
import sys

_PROGRAM = """func.func @add_op_test_si32() {
  %0 = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  %1 = stablehlo.add %0, %0 : tensor<2xi32>
  check.expect_eq_const %1, dense<[2, 4]> : tensor<2xi32>
  func.return
}

// -----

func.func @mul_op_test_f32() {
  %0 = stablehlo.constant dense<[1.5, 2.0]> : tensor<2xf32>
  %1 = stablehlo.multiply %0, %0 : tensor<2xf32>
  check.expect_almost_eq_const %1, dense<[2.25, 4.0]> : tensor<2xf32>
  func.return
}
"""


def _pytest(tmp_path, *extra):
    corpus = tmp_path / "mine"
    corpus.mkdir(exist_ok=True)
    (corpus / "ops.mlir").write_text(_PROGRAM)
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
           "-p", "stablehlo_ref.conformance.pytest_plugin", "--pyargs", "stablehlo_ref.conformance.suite",
           "--stablehlo-backend", "reference", "--stablehlo-corpus", str(corpus), *extra]
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)


def test_each_case_is_a_test(tmp_path):
    r = _pytest(tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "2 passed" in r.stdout


def test_known_failures_are_strict_xfails(tmp_path):
    kf = tmp_path / "known.txt"
    kf.write_text("mine/ops.mlir#0@add_op_test_si32\tpretend it fails\n")
    r = _pytest(tmp_path, "--stablehlo-known-failures", str(kf))
    assert r.returncode != 0                       # a listed case that passes fails the run
    assert "XPASS(strict)" in r.stdout and "1 passed" in r.stdout


def test_backend_is_required(tmp_path):
    corpus = tmp_path / "mine"
    corpus.mkdir()
    (corpus / "ops.mlir").write_text(_PROGRAM)
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
           "-p", "stablehlo_ref.conformance.pytest_plugin", "--pyargs", "stablehlo_ref.conformance.suite",
           "--stablehlo-corpus", str(corpus)]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert r.returncode != 0 and "--stablehlo-backend" in (r.stdout + r.stderr)
