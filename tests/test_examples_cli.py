"""The bundled example and the command line."""
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import stablehlo_ref
from stablehlo_ref.cli import main

REPO = Path(__file__).resolve().parent.parent
EX = REPO / "examples"


def _mlp_numpy(x, w1, b1, w2, b2):
    h = np.maximum(x.astype(np.float64) @ w1 + b1, 0)
    logits = h @ w2 + b2
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_mlp_example_matches_numpy():
    m = stablehlo_ref.load(EX / "mlp.mlir")
    with np.load(EX / "mlp_inputs.npz") as z:
        args = [z[f"arg_{i}"] for i in range(5)]
    (probs,) = stablehlo_ref.run(m, *args)
    assert probs.dtype == np.float32 and probs.shape == (4, 3)
    np.testing.assert_allclose(probs, _mlp_numpy(*args), rtol=1e-5)


def test_cli_run_example_writes_npz(tmp_path, capsys):
    out = tmp_path / "out.npz"
    rc = main(["run", str(EX / "mlp.mlir"), "--inputs", str(EX / "mlp_inputs.npz"), "-o", str(out)])
    assert rc == 0
    printed = capsys.readouterr().out
    assert "shape=(4, 3) dtype=float32" in printed
    with np.load(out) as z, np.load(EX / "mlp_inputs.npz") as inp:
        np.testing.assert_allclose(z["result_0"], _mlp_numpy(*[inp[f"arg_{i}"] for i in range(5)]), rtol=1e-5)


def test_cli_entry_point_subprocess():
    r = subprocess.run([sys.executable, "-m", "stablehlo_ref.cli", "run", str(EX / "mlp.mlir"),
                        "--inputs", str(EX / "mlp_inputs.npz")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "result #0" in r.stdout


CHECK_OK = """
func.func @ok() {
  %0 = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  %1 = stablehlo.add %0, %0 : tensor<2xi32>
  check.expect_eq_const %1, dense<[2, 4]> : tensor<2xi32>
  func.return
}
// -----
func.func @bad() {
  %0 = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
  check.expect_almost_eq_const %0, dense<[1.0, 2.5]> : tensor<2xf32>
  func.return
}
"""


def test_cli_check_counts_and_json(tmp_path, capsys):
    f = tmp_path / "t.mlir"
    f.write_text(CHECK_OK)
    j = tmp_path / "r.json"
    rc = main(["run", "--check", str(f), "--json", str(j)])
    out = capsys.readouterr().out.strip().splitlines()
    assert rc == 1
    assert out[-1] == "1 passed, 1 failed"
    data = json.loads(j.read_text())
    st = {c["function"]: c["status"] for c in data["cases"]}
    assert st == {"ok": "pass", "bad": "fail"}
    assert all(set(c) == {"file", "chunk", "function", "status", "reason", "seconds"} for c in data["cases"])


@pytest.mark.parametrize("text,code,needle", [
    ("func.func @main() {\n  %0 = stablehlo.add %x, %x : tensor<f32>\n}", 1, "t.mlir:2:"),
    ("func.func @main( {", 1, "t.mlir:1:"),
])
def test_cli_errors_are_one_line(tmp_path, capsys, text, code, needle):
    f = tmp_path / "t.mlir"
    f.write_text(text)
    rc = main(["print", str(f)])
    err = capsys.readouterr().err
    assert rc == code
    # MLIR's form: `file:line:col: error: message`, the source line, a caret under the column
    head, src, caret = err.rstrip("\n").split("\n")
    assert head.startswith(str(tmp_path / needle)) and ": error: " in head
    col = int(head[len(str(tmp_path)) + 1:].split(":")[2])
    assert src == text.split("\n")[int(head[len(str(tmp_path)) + 1:].split(":")[1]) - 1]
    assert caret == " " * (col - 1) + "^"


def test_cli_usage_errors_exit_2(tmp_path, capsys):
    assert main(["run", str(tmp_path / "missing.mlir")]) == 2
    assert main(["bogus"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err


def test_cli_wrong_argument_count(capsys):
    assert main(["run", str(EX / "mlp.mlir")]) == 2
    assert "takes 5 argument" in capsys.readouterr().err


def test_cli_print_roundtrip(capsys):
    assert main(["print", str(EX / "mlp.mlir")]) == 0
    text = capsys.readouterr().out
    assert stablehlo_ref.parse(text) == stablehlo_ref.load(EX / "mlp.mlir")
    assert main(["print", "--generic", str(EX / "mlp.mlir")]) == 0
    gtext = capsys.readouterr().out
    assert '"stablehlo.add"' in gtext
    assert stablehlo_ref.parse(gtext) == stablehlo_ref.load(EX / "mlp.mlir")


def test_split_chunks_keeps_file_line_numbers():
    from stablehlo_ref.checkrun import split_chunks
    text = "a\n// -----\nb\nc\n// -----\nd\n"
    lines = [[i + 1 for i, l in enumerate(c.split("\n")) if l.strip()] for c in split_chunks(text)]
    assert lines == [[1], [3, 4], [6]]


def test_cli_empty_input_file_is_a_usage_error(tmp_path, capsys):
    empty = tmp_path / "empty.npy"
    empty.write_bytes(b"")
    assert main(["run", str(EX / "mlp.mlir"), "--input", str(empty)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "empty.npy: input array is empty" in err and "Traceback" not in err


def test_cli_print_debuginfo(capsys):
    assert main(["print", "--debuginfo", str(EX / "mlp.mlir")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("#loc")                      # block-argument locations, before the module
    assert " loc(#loc" in out and out.rstrip().splitlines()[-1].startswith("#loc")
    assert stablehlo_ref.parse(out) == stablehlo_ref.load(EX / "mlp.mlir")
    assert main(["print", "--debuginfo", "--strip-debuginfo", str(EX / "mlp.mlir")]) == 2
    assert "exclude each other" in capsys.readouterr().err


def test_cli_check_runs_a_portable_artifact_as_one_chunk(tmp_path, capsys):
    """`run --check` on MLIR bytecode (upstream's interpret tests ship as artifacts): its
    public functions run as one chunk, check ops evaluated; bytes that are neither text nor an
    artifact are one usage error."""
    import stablehlo_ref as shlo
    ok = "\n".join([f"""func.func @{name}() {{
  %0 = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  %1 = stablehlo.add %0, %0 : tensor<2xi32>
  %2 = stablehlo.constant dense<{want}> : tensor<2xi32>
  stablehlo.custom_call @check.expect_eq(%1, %2) {{has_side_effect = true}} : (tensor<2xi32>, tensor<2xi32>) -> ()
  func.return
}}""" for name, want in (("ok", "[2, 4]"), ("bad", "[2, 5]"))])
    f = tmp_path / "t.mlirbc"
    f.write_bytes(shlo.serialize(shlo.parse(ok)))
    j = tmp_path / "r.json"
    rc = main(["run", "--check", str(f), "--json", str(j)])
    out = capsys.readouterr().out.strip().splitlines()
    assert rc == 1 and out[-1] == "1 passed, 1 failed"
    st = {c["function"]: (c["status"], c["chunk"]) for c in json.loads(j.read_text())["cases"]}
    assert st == {"ok": ("pass", 0), "bad": ("fail", 0)}
    g = tmp_path / "g.bin"
    g.write_bytes(b"\xff\xfe\x00")
    assert main(["run", "--check", str(g)]) == 2
    assert "neither UTF-8 text, MLIR bytecode nor a jax.export payload" in capsys.readouterr().err
