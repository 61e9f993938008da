"""Every command with good and bad input, as a new user drives them: exit code, the one
diagnostic, no traceback, and no output file left half-written or behind on error."""
import io
import json
import os
import stat
import sys
import threading
import zipfile
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import stablehlo_ref as shlo
from stablehlo_ref.cli import main

REPO = Path(__file__).resolve().parent.parent
MLP = REPO / "examples" / "mlp.mlir"
MLP_NPZ = REPO / "examples" / "mlp_inputs.npz"

TWO = """func.func @main(%x: tensor<2xf32>, %y: tensor<2xbf16>) -> (tensor<2xf32>, tensor<2xbf16>) {
  %0 = stablehlo.add %x, %x : tensor<2xf32>
  %c = stablehlo.compare GT, %x, %0 : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>
  return %0, %y : tensor<2xf32>, tensor<2xbf16>
}
"""
ONE = """func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.add %x, %x : tensor<2xf32>
  return %0 : tensor<2xf32>
}
"""
INVALID = """func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.add %a, %a : (tensor<2xf32>, tensor<2xf32>) -> tensor<3xf32>
  %1 = stablehlo.add %a, %a : (tensor<2xf32>, tensor<2xf32>) -> tensor<3xf32>
  return %a : tensor<2xf32>
}
"""
# argument names as jax.export records them
NAMED = """func.func public @main(%arg0: tensor<2xf32> {jax.arg_info = "params['w']", mhlo.sharding = "{replicated}"},
                          %arg1: tensor<2xf32> loc("bias")) -> (tensor<2xf32> {jax.result_info = ""}) {
  %0 = stablehlo.add %arg0, %arg1 : tensor<2xf32>
  return %0 : tensor<2xf32>
}
"""
LOOP = """func.func @main() -> tensor<i32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %c1 = stablehlo.constant dense<1> : tensor<i32>
  %c5 = stablehlo.constant dense<5> : tensor<i32>
  %r = stablehlo.while(%i = %c0) : tensor<i32>
    cond {
      %p = stablehlo.compare LT, %i, %c5 : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    } do {
      %n = stablehlo.add %i, %c1 : tensor<i32>
      stablehlo.return %n : tensor<i32>
    }
  return %r : tensor<i32>
}
"""
BIGCONST = """func.func @main() -> tensor<4xf32> {
  %0 = stablehlo.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %1 = stablehlo.constant dense<1.0> : tensor<f32>
  return %0 : tensor<4xf32>
}
"""


@pytest.fixture
def d(tmp_path):
    """A folder with the programs and arrays the tests use."""
    (tmp_path / "two.mlir").write_text(TWO)
    (tmp_path / "one.mlir").write_text(ONE)
    (tmp_path / "invalid.mlir").write_text(INVALID)
    (tmp_path / "named.mlir").write_text(NAMED)
    np.save(tmp_path / "x32.npy", np.array([1, 2], np.float32))
    np.save(tmp_path / "x64.npy", np.array([1, 2], np.float64))
    np.save(tmp_path / "xi32.npy", np.array([1, 2], np.int32))
    np.save(tmp_path / "bf.npy", np.array([1, 2], ml_dtypes.bfloat16))
    np.savez(tmp_path / "named.npz", y=np.array([1, 2], ml_dtypes.bfloat16), x=np.array([1, 2], np.float32))
    return tmp_path


def cli(capsys, monkeypatch, *argv, stdin=None):
    """(exit code, stdout, stderr); stdin bytes feed `-`."""
    if stdin is not None:
        class _In:
            buffer = io.BytesIO(stdin)
        monkeypatch.setattr(sys, "stdin", _In())
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err and "Traceback" not in out
    return rc, out, err


def one_error(err: str, needle: str):
    """Exactly one diagnostic: its first line holds `error: ` and `needle`; the lines after it
    (if any) are the source line and the caret."""
    lines = err.rstrip("\n").split("\n")
    assert "error: " in lines[0] and needle in lines[0], err
    assert len(lines) in (1, 3), err
    if len(lines) == 3:
        assert lines[2].strip() == "^"


def no_leftovers(folder: Path):
    assert not [p.name for p in folder.iterdir() if p.name.startswith(".tmp-")]


# ------------------------------------------------------------------ usage and I/O errors: exit 2
@pytest.mark.parametrize("argv, needle", [
    (["bogus"], "invalid choice"),
    (["run", "{d}/two.mlir"], "takes 2 argument"),
    (["run", "{d}/two.mlir", "--inputs", "{d}/named.npz", "--entry", "nosuch"], "no function @nosuch"),
    (["run", "{d}"], "is a directory"),
    (["validate", "{d}"], "is a directory"),
    (["inspect", "{d}"], "is a directory"),
    (["print", "{d}/missing.mlir"], "No such file"),
    (["validate", "/dev/zero"], "a character device"),
    (["run", "{d}/two.mlir", "--input", "{d}/x64.npy", "--input", "{d}/bf.npy"], "x64.npy is float64; the parameter is tensor<2xf32>"),
    (["run", "{d}/two.mlir", "--input", "{d}/xi32.npy", "--input", "{d}/bf.npy"], "pass --cast"),
    (["run", "{d}/one.mlir", "--input", "{d}/bf.npy"], "raw 2-byte elements"),
    (["run", "{d}/two.mlir", "--inputs", "{d}/x32.npy"], "is a .npy array, not an .npz archive"),
    (["run", "{d}/one.mlir", "--input", "{d}/named.npz"], "is an .npz archive, not a .npy array"),
    (["run", "{d}/one.mlir", "--input", "{d}/one.mlir"], "neither a .npy array nor a .npz archive"),
    (["run", "{d}/two.mlir", "--inputs", "{d}/two.mlir"], "neither a .npy array nor a .npz archive"),
    (["run", "{d}/one.mlir", "--input", "{d}/x32.npy", "--trace-op", "add"], "go with --trace"),
    (["run", "{d}/one.mlir", "--input", "{d}/x32.npy", "--json", "{d}/r.json"], "--json goes with --check"),
    (["run", "--check", "{d}/one.mlir", "--input", "{d}/x32.npy"], "does not go with --check"),
    (["run", "{d}/two.mlir", "--inputs", "{d}/named.npz", "-o", "{d}/out.npy"], "a .npy file holds one array"),
    (["convert", "{d}/one.mlir", "-o", "{d}/out.bc", "--target", "foo"], "expected X.Y.Z"),
    (["convert", "{d}/one.mlir", "-o", "{d}/out.bc", "--target", "1.0"], "expected X.Y.Z"),
    (["convert", "{d}/one.mlir", "-o", "{d}/out.bc", "--target", "1.99.0"], "outside the supported versions"),
    (["convert", "{d}/one.mlir", "-o", "{d}/no/such/dir/out.bc"], "no directory"),
    (["convert", "{d}/one.mlir", "-o", "{d}"], "is a directory"),
    (["print", "{d}/one.mlir", "--elide-constants", "-1"], "at least 0"),
    (["print", "{d}/one.mlir", "--debuginfo", "--strip-debuginfo"], "exclude each other"),
    (["spec", "nosuchop"], "unknown op"),
])
def test_usage_errors(d, capsys, monkeypatch, argv, needle):
    rc, out, err = cli(capsys, monkeypatch, *[a.format(d=d) for a in argv])
    assert rc == 2, err
    one_error(err, needle)
    assert not (d / "out.bc").exists() and not (d / "out.npy").exists() and not (d / "r.json").exists()
    no_leftovers(d)


def test_input_over_a_limit(d, capsys, monkeypatch):
    rc, _, err = cli(capsys, monkeypatch, "run", d / "one.mlir", "--input", d / "x32.npy", "--max-tensor-elements", "1")
    assert rc == 1
    one_error(err, "over the limit of 1 (raise the limit with --max-tensor-elements)")
    rc, _, err = cli(capsys, monkeypatch, "run", d / "one.mlir", "--input", d / "x32.npy", "--max-tensor-bytes", "0")
    assert rc == 2
    one_error(err, "must be positive")


@pytest.mark.parametrize("cmd", [["validate", "-"], ["run", "-"], ["run", "--check", "-"], ["print", "-"],
                                 ["inspect", "-"], ["convert", "-", "-o", "{d}/out.bc"]])
def test_empty_stdin_is_an_error(d, capsys, monkeypatch, cmd):
    rc, out, err = cli(capsys, monkeypatch, *[a.format(d=d) for a in cmd], stdin=b"")
    assert rc == 2
    one_error(err, "stdin: ")
    assert not (d / "out.bc").exists()


def test_no_command_prints_help_and_exits_2(capsys, monkeypatch):
    rc, out, err = cli(capsys, monkeypatch)
    assert rc == 2 and "usage:" in err


def test_stdin_read_once(d, capsys, monkeypatch):
    rc, _, err = cli(capsys, monkeypatch, "validate", "-", "-", stdin=ONE.encode())
    assert rc == 2
    one_error(err, "read only once")


# ------------------------------------------------------------------ invalid programs: exit 1
def test_validate_prints_every_diagnostic_in_mlir_form(d, capsys, monkeypatch):
    rc, out, err = cli(capsys, monkeypatch, "validate", d / "invalid.mlir")
    assert rc == 1 and out == ""
    lines = err.splitlines()
    assert len(lines) == 6
    assert lines[0].startswith(f"{d}/invalid.mlir:2:8: error: stablehlo.add: C1:")
    assert lines[1] == INVALID.splitlines()[1] and lines[2] == " " * 7 + "^"
    assert lines[3].startswith(f"{d}/invalid.mlir:3:8: error: ")


def test_stdin_diagnostics_name_stdin(capsys, monkeypatch):
    rc, out, err = cli(capsys, monkeypatch, "validate", "-", stdin=INVALID.encode())
    assert rc == 1 and err.startswith("-:2:8: error: ") and err.splitlines()[2] == " " * 7 + "^"


@pytest.mark.parametrize("data, needle", [
    (b"func.func @main( {", "expected"),
    (b"\xff\xfe\x00garbage", "neither UTF-8 text, MLIR bytecode nor a jax.export payload"),
    (b"ML\xefR\x01\x02", "error: "),
])
def test_bad_programs_exit_1(d, capsys, monkeypatch, data, needle):
    f = d / "bad.bin"
    f.write_bytes(data)
    for cmd in (["print", f], ["validate", f], ["run", f], ["inspect", f], ["convert", f, "-o", d / "out.bc"]):
        rc, out, err = cli(capsys, monkeypatch, *cmd)
        assert rc == 1, (cmd, err)
        one_error(err, needle)
    assert not (d / "out.bc").exists()
    no_leftovers(d)


def test_run_verifies_first(d, capsys, monkeypatch):
    np.save(d / "a.npy", np.zeros(2, np.float32))
    rc, out, err = cli(capsys, monkeypatch, "run", d / "invalid.mlir", "--input", d / "a.npy", "-o", d / "r.npz")
    assert rc == 1 and "C1" in err.splitlines()[0] and not (d / "r.npz").exists()


# ------------------------------------------------------------------ inputs from strangers
def test_pickled_object_array_is_never_loaded(d, capsys, monkeypatch):
    np.save(d / "obj.npy", np.array([{"a": 1}, None], dtype=object), allow_pickle=True)
    np.savez(d / "obj.npz", x=np.array([{"a": 1}, None], dtype=object))
    import pickle
    monkeypatch.setattr(pickle, "loads", lambda *a, **k: pytest.fail("unpickled user data"))
    monkeypatch.setattr(pickle, "load", lambda *a, **k: pytest.fail("unpickled user data"))
    rc, _, err = cli(capsys, monkeypatch, "run", d / "one.mlir", "--input", d / "obj.npy")
    assert rc == 2
    one_error(err, "Python objects (a pickle)")
    rc, _, err = cli(capsys, monkeypatch, "run", d / "one.mlir", "--inputs", d / "obj.npz")
    assert rc == 2
    one_error(err, "Python objects (a pickle)")


def test_structured_and_void_dtypes(d, capsys, monkeypatch):
    np.savez(d / "st.npz", x=np.zeros(2, dtype=[("a", "<f4"), ("b", "<i4")]))
    rc, _, err = cli(capsys, monkeypatch, "run", d / "one.mlir", "--inputs", d / "st.npz")
    assert rc == 2
    one_error(err, "structured dtype")
    np.savez(d / "v.npz", x=np.zeros(2, dtype="V3"))
    rc, _, err = cli(capsys, monkeypatch, "run", d / "one.mlir", "--inputs", d / "v.npz")
    assert rc == 2
    one_error(err, "raw 3-byte elements")


@pytest.mark.parametrize("data, needle", [
    (b"not a zip at all", "neither a .npy array nor a .npz archive"),
    (b"PK\x03\x04" + b"\x00" * 40, "not a valid .npz archive"),
    (b"\x93NUMPY\x01\x00\x10\x00{'descr': 1}   \n", "not a valid .npy array"),
])
def test_broken_array_files(d, capsys, monkeypatch, data, needle):
    (d / "bad.npz").write_bytes(data)
    rc, _, err = cli(capsys, monkeypatch, "run", d / "one.mlir", "--inputs", d / "bad.npz")
    assert rc == 2
    one_error(err, needle)


def test_zip_bomb_is_refused_from_its_header(d, capsys, monkeypatch):
    """A member declaring 16M elements for a 2-element parameter: refused after reading its
    header, without decompressing its 64 MiB."""
    path = d / "bomb.npz"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        with z.open("x.npy", "w", force_zip64=True) as f:
            np.lib.format.write_array_header_1_0(f, {"descr": "<f4", "fortran_order": False, "shape": (1 << 24,)})
            zero = bytes(1 << 20)
            for _ in range(64):
                f.write(zero)
    assert path.stat().st_size < 1 << 20
    read = [0]
    orig = zipfile.ZipExtFile.read

    def counting(self, n=-1):
        b = orig(self, n)
        read[0] += len(b)
        return b
    monkeypatch.setattr(zipfile.ZipExtFile, "read", counting)
    rc, _, err = cli(capsys, monkeypatch, "run", d / "one.mlir", "--inputs", path)
    assert rc == 2
    one_error(err, "has shape (16777216,); the parameter is tensor<2xf32>")
    assert read[0] < 1 << 16


def test_declared_size_past_member_data(d, capsys, monkeypatch):
    path = d / "short.npz"
    with zipfile.ZipFile(path, "w") as z:
        buf = io.BytesIO()
        np.lib.format.write_array_header_1_0(buf, {"descr": "<f4", "fortran_order": False, "shape": (2,)})
        z.writestr("x.npy", buf.getvalue() + b"\x00\x00")
    rc, _, err = cli(capsys, monkeypatch, "run", d / "one.mlir", "--inputs", path)
    assert rc == 2
    one_error(err, "header declares 8")


def test_named_inputs_bind_by_name(d, capsys, monkeypatch):
    rc, out, _ = cli(capsys, monkeypatch, "run", d / "two.mlir", "--inputs", d / "named.npz")
    assert rc == 0 and "[2. 4.]" in out
    with np.load(MLP_NPZ) as z:
        np.savez(d / "mlp_named.npz", **dict(zip(["b2", "x", "w2", "b1", "w1"],
                                                  [z["arg_4"], z["arg_0"], z["arg_3"], z["arg_2"], z["arg_1"]])))
    rc, named, _ = cli(capsys, monkeypatch, "run", MLP, "--inputs", d / "mlp_named.npz")
    rc2, ordered, _ = cli(capsys, monkeypatch, "run", MLP, "--inputs", MLP_NPZ)
    assert rc == rc2 == 0 and named == ordered
    np.savez(d / "wrong.npz", a=np.zeros(2, np.float32), b=np.zeros(2, ml_dtypes.bfloat16))
    rc, _, err = cli(capsys, monkeypatch, "run", d / "two.mlir", "--inputs", d / "wrong.npz")
    assert rc == 2
    one_error(err, "'a', 'b' name no argument of @main; expected x, y")


def test_recorded_argument_names(d, capsys, monkeypatch):
    np.savez(d / "n.npz", **{"params['w']": np.ones(2, np.float32), "bias": np.ones(2, np.float32)})
    rc, out, _ = cli(capsys, monkeypatch, "run", d / "named.mlir", "--inputs", d / "n.npz")
    assert rc == 0 and "[2. 2.]" in out
    np.savez(d / "m.npz", w=np.ones(2, np.float32))
    rc, _, err = cli(capsys, monkeypatch, "run", d / "named.mlir", "--inputs", d / "m.npz")
    assert rc == 2
    one_error(err, "expected params['w'], bias")


def test_cast_and_bf16_raw_bytes(d, capsys, monkeypatch):
    rc, out, _ = cli(capsys, monkeypatch, "run", d / "two.mlir", "--input", d / "x64.npy", "--input", d / "bf.npy",
                     "--cast", "-o", d / "r.npz")
    assert rc == 0
    with np.load(d / "r.npz") as z:
        np.testing.assert_array_equal(z["result_0"], np.array([2, 4], np.float32))
        assert z["result_1"].dtype.kind == "V"          # bf16 saved by numpy: raw bytes
        np.testing.assert_array_equal(z["result_1"].view(ml_dtypes.bfloat16), np.array([1, 2], ml_dtypes.bfloat16))


def test_inputs_from_stdin(d, capsys, monkeypatch):
    rc, out, _ = cli(capsys, monkeypatch, "run", MLP, "--inputs", "-", stdin=MLP_NPZ.read_bytes())
    assert rc == 0 and "shape=(4, 3)" in out


# ------------------------------------------------------------------ run's outputs and tracing
def test_output_npy_for_one_result(d, capsys, monkeypatch):
    rc, _, _ = cli(capsys, monkeypatch, "run", d / "one.mlir", "--input", d / "x32.npy", "-o", d / "r.npy")
    assert rc == 0
    np.testing.assert_array_equal(np.load(d / "r.npy"), np.array([2, 4], np.float32))


def test_trace_prints_locations_and_plain_numbers(d, capsys, monkeypatch):
    rc, _, err = cli(capsys, monkeypatch, "run", d / "two.mlir", "--inputs", d / "named.npz", "--trace")
    assert rc == 0
    lines = err.splitlines()
    assert lines == [f"{d}/two.mlir:2:8: stablehlo.add -> float32[2] [2. 4.]",
                     f"{d}/two.mlir:3:8: stablehlo.compare -> bool[2] [False False]"]
    (d / "loop.mlir").write_text(LOOP)
    rc, _, err = cli(capsys, monkeypatch, "run", d / "loop.mlir", "--trace", "--trace-op", "add", "--trace-first", "2")
    assert rc == 0
    assert err.splitlines() == [f"{d}/loop.mlir:10:12: stablehlo.add -> int32[] [1]",
                                f"{d}/loop.mlir:10:12: stablehlo.add -> int32[] [2]"]
    assert "np." not in err


def test_probe_writes_every_result(d, capsys, monkeypatch):
    (d / "loop.mlir").write_text(LOOP)
    rc, out, _ = cli(capsys, monkeypatch, "run", d / "loop.mlir", "--probe", d / "probe")
    assert rc == 0
    rows = (d / "probe" / "probe.tsv").read_text().splitlines()[1:]
    adds = [r.split("\t") for r in rows if "\tstablehlo.add\t" in r]
    assert len(adds) == 5
    assert [int(np.load(d / "probe" / a[0])) for a in adds] == [1, 2, 3, 4, 5]
    assert adds[0][2] == f"{d}/loop.mlir:10:12"


def test_progress_line_on_a_terminal(d, capsys, monkeypatch):
    from stablehlo_ref import runtrace
    (d / "loop.mlir").write_text(LOOP)
    made = []
    real = runtrace.progress_hook

    def spy(module, stream):
        h = real(module, stream)
        made.append(h)
        return h
    monkeypatch.setattr(runtrace, "progress_hook", spy)
    monkeypatch.setattr(runtrace, "_is_terminal", lambda s: True)
    rc, out, _ = cli(capsys, monkeypatch, "run", d / "loop.mlir")
    assert rc == 0 and len(made) == 1 and "result #0" in out
    monkeypatch.setattr(runtrace, "_is_terminal", lambda s: False)
    rc, out, _ = cli(capsys, monkeypatch, "run", d / "loop.mlir")
    assert len(made) == 1


# ------------------------------------------------------------------ print, convert, spec, inspect
def test_print_locations_only_with_debuginfo(d, capsys, monkeypatch):
    f = d / "loc.mlir"
    f.write_text(ONE.replace("tensor<2xf32>\n  return", 'tensor<2xf32> loc("here")\n  return'))
    rc, out, _ = cli(capsys, monkeypatch, "print", f)
    assert rc == 0 and "loc(" not in out
    rc, out, _ = cli(capsys, monkeypatch, "print", f, "--debuginfo")
    assert rc == 0 and 'loc("here")' in out


def test_print_output_emit_and_elide(d, capsys, monkeypatch):
    (d / "c.mlir").write_text(BIGCONST)
    rc, out, _ = cli(capsys, monkeypatch, "print", d / "c.mlir", "--elide-constants", "2", "-o", d / "p.mlir")
    assert rc == 0 and out == ""
    text = (d / "p.mlir").read_text()
    assert "dense_resource<__elided__> : tensor<4xf32>" in text and "dense<1.000000e+00>" in text
    rc, _, _ = cli(capsys, monkeypatch, "print", d / "c.mlir", "--emit", "bytecode", "-o", d / "p.mlirbc")
    assert rc == 0 and shlo.artifact_version((d / "p.mlirbc").read_bytes()) == shlo.spec.current_version()
    rc, _, err = cli(capsys, monkeypatch, "print", d / "c.mlir", "--emit", "bytecode", "--generic", "-o", d / "q")
    assert rc == 2 and not (d / "q").exists()


def test_convert_through_symlink_device_and_fifo(d, capsys, monkeypatch):
    real = d / "real.bc"
    real.write_bytes(b"old")
    link = d / "link.bc"
    link.symlink_to(real)
    rc, _, _ = cli(capsys, monkeypatch, "convert", d / "one.mlir", "-o", link)
    assert rc == 0 and link.is_symlink() and real.read_bytes()[:4] == b"ML\xefR"
    rc, _, _ = cli(capsys, monkeypatch, "convert", d / "one.mlir", "-o", os.devnull)
    assert rc == 0 and stat.S_ISCHR(os.stat(os.devnull).st_mode)
    if os.path.exists("/dev/full"):
        rc, _, err = cli(capsys, monkeypatch, "convert", d / "one.mlir", "-o", "/dev/full")
        assert rc == 2 and stat.S_ISCHR(os.stat("/dev/full").st_mode)
        one_error(err, "No space left on device")
    fifo = d / "ff"
    os.mkfifo(fifo)
    rc, _, err = cli(capsys, monkeypatch, "convert", d / "one.mlir", "-o", fifo)
    assert rc == 2
    one_error(err, "a FIFO with no reader")
    fd = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)      # a reader (the artifact fits the pipe buffer)
    try:
        rc, _, _ = cli(capsys, monkeypatch, "convert", d / "one.mlir", "-o", fifo)
        got = os.read(fd, 1 << 16)
    finally:
        os.close(fd)
    assert rc == 0 and got[:4] == b"ML\xefR" and stat.S_ISFIFO(os.stat(fifo).st_mode)
    no_leftovers(d)


def test_fifo_input_without_writer_does_not_hang(d, capsys, monkeypatch):
    fifo = d / "in"
    os.mkfifo(fifo)
    rc, _, err = cli(capsys, monkeypatch, "validate", fifo)
    assert rc == 2
    one_error(err, "a pipe with no writer")
    fd = os.open(fifo, os.O_RDWR)            # keeps a writer open while the command reads

    def feed():
        os.write(fd, ONE.encode())
        os.close(fd)
    t = threading.Timer(0.2, feed)
    t.start()
    rc, out, err = cli(capsys, monkeypatch, "validate", fifo)
    t.join()
    assert rc in (0, 2)          # fed in time: ok; a closed writer before the read: no writer
    if rc == 0:
        assert out.startswith(f"ok: {fifo} (minimum StableHLO version ")


def test_read_only_and_unchanged_on_error(d, capsys, monkeypatch):
    ro = d / "ro.bc"
    ro.write_bytes(b"keep")
    ro.chmod(0o444)
    rc, _, err = cli(capsys, monkeypatch, "convert", d / "one.mlir", "-o", ro)
    assert rc == 2 and ro.read_bytes() == b"keep"
    one_error(err, "read-only")
    out = d / "o.bc"
    out.write_bytes(b"old")
    rc, _, _ = cli(capsys, monkeypatch, "convert", d / "invalid.mlir", "-o", out, "--target", "1.0.0")
    assert out.read_bytes() == b"old" or rc == 0
    no_leftovers(d)


def test_unreadable_file(d, capsys, monkeypatch):
    f = d / "secret.mlir"
    f.write_text(ONE)
    f.chmod(0)
    if os.access(f, os.R_OK):
        pytest.skip("running as root: permission bits do not stop reads (directories, FIFOs and "
                    "devices are covered by the other tests)")
    rc, _, err = cli(capsys, monkeypatch, "validate", f)
    assert rc == 2
    one_error(err, "Permission denied")


def test_outputs_get_the_umask(d, capsys, monkeypatch):
    old = os.umask(0o027)
    try:
        from stablehlo_ref import fileio
        monkeypatch.setattr(fileio, "_UMASK", None)
        rc, _, _ = cli(capsys, monkeypatch, "convert", d / "one.mlir", "-o", d / "new.bc")
        assert rc == 0 and stat.S_IMODE(os.stat(d / "new.bc").st_mode) == 0o640
        (d / "kept.bc").write_bytes(b"x")
        os.chmod(d / "kept.bc", 0o604)
        rc, _, _ = cli(capsys, monkeypatch, "convert", d / "one.mlir", "-o", d / "kept.bc")
        assert rc == 0 and stat.S_IMODE(os.stat(d / "kept.bc").st_mode) == 0o604
    finally:
        os.umask(old)
        monkeypatch.setattr(fileio, "_UMASK", None)


def test_interrupted_write_leaves_old_file_and_no_temporary(d, monkeypatch):
    from stablehlo_ref import fileio
    out = d / "o.bin"
    out.write_bytes(b"old")
    for tmpfile in (getattr(os, "O_TMPFILE", 0), 0):
        monkeypatch.setattr(os, "O_TMPFILE", tmpfile, raising=False)

        def writer(f):
            f.write(b"new" * 1000)
            raise KeyboardInterrupt
        with pytest.raises(KeyboardInterrupt):
            fileio.write_output(str(out), writer)
        assert out.read_bytes() == b"old"
        no_leftovers(d)
        assert not fileio.pending_temporaries()


@pytest.mark.slow
@pytest.mark.parametrize("sig", ["SIGTERM", "SIGKILL"])
def test_killed_mid_write(d, sig):
    """SIGTERM: the handler removes the temporary; SIGKILL: the anonymous temporary (O_TMPFILE)
    never had a name. Either way the old file stays and nothing is left."""
    import subprocess
    out = d / "o.bin"
    out.write_bytes(b"old")
    code = f"""
import os, signal, sys
from stablehlo_ref import fileio
fileio.install_signal_cleanup()
if {sig == 'SIGTERM'!r}:
    os.O_TMPFILE = 0            # a named temporary, for the handler to remove
def writer(f):
    f.write(b"x" * (1 << 20)); f.flush()
    os.kill(os.getpid(), signal.{sig})
fileio.write_output({str(out)!r}, writer)
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == -getattr(__import__("signal"), sig), r.stderr
    assert out.read_bytes() == b"old"
    assert sorted(p.name for p in d.iterdir() if p.name.startswith(".tmp-")) == []


def test_spec_finds_other_dialects_and_spells_out_types(capsys, monkeypatch):
    rc, out, _ = cli(capsys, monkeypatch, "spec", "erf")
    assert rc == 0 and out.splitlines()[0] == "chlo.erf"
    rc, out, _ = cli(capsys, monkeypatch, "spec", "cosine")
    assert rc == 0 and "type classes:" in out
    line = next(l for l in out.splitlines() if l.strip().startswith("fp_complex_or_quantized_int_tensor:"))
    spelled = " ".join(l.strip() for l in out.split("type classes:")[1].splitlines())
    assert "f32" in spelled and "complex<f64>" in spelled and "!quant.uniform" in spelled
    rc, _, err = cli(capsys, monkeypatch, "spec", "erff")
    assert rc == 2
    one_error(err, "chlo.erf")


def test_inspect_text_and_artifact(d, capsys, monkeypatch):
    rc, out, _ = cli(capsys, monkeypatch, "inspect", d / "named.mlir", "--json")
    assert rc == 0
    info = json.loads(out)
    assert info["format"] == "text"
    assert [a["name"] for a in info["entry"]["arguments"]] == ["params['w']", "bias"]
    assert info["entry"]["arguments"][0]["sharding"] == "{replicated}"
    assert info["ops"] == {"func.func": 1, "func.return": 1, "stablehlo.add": 1}
    assert info["dialects"] == ["func", "stablehlo"] and info["minimum_version"] == "0.9.0"
    art = d / "a.mlirbc"
    art.write_bytes(shlo.serialize(shlo.load(d / "one.mlir"), "1.3.0"))
    rc, out, _ = cli(capsys, monkeypatch, "inspect", art)
    assert rc == 0
    assert "format: portable artifact" in out and "artifact: StableHLO 1.3.0" in out
    assert "producer StableHLO_v1.3.0" in out and "argument #0 arg_0: tensor<2xf32>" in out


def test_every_command_reads_stdin(d, capsys, monkeypatch):
    for cmd in (["validate", "-"], ["print", "-"], ["inspect", "-"], ["convert", "-", "-o", d / "s.bc"],
                ["run", "-", "--input", d / "x32.npy"]):
        rc, out, err = cli(capsys, monkeypatch, *cmd, stdin=ONE.encode())
        assert rc == 0, (cmd, err)
    check = b"func.func @t() {\n  %0 = stablehlo.constant dense<1> : tensor<i32>\n" \
            b"  check.expect_eq_const %0, dense<1> : tensor<i32>\n  func.return\n}\n"
    rc, out, _ = cli(capsys, monkeypatch, "run", "--check", "-", stdin=check)
    assert rc == 0 and out.strip() == "1 passed, 0 failed"


def test_check_of_a_file_with_nothing_to_run_fails(d, capsys, monkeypatch):
    # every function takes arguments (or is private): no case runs, which must not read as a pass
    for text in (ONE, "func.func private @p() {\n  func.return\n}\n", "// only a comment\n"):
        rc, out, _ = cli(capsys, monkeypatch, "run", "--check", "-", "--json", d / "c.json",
                         stdin=text.encode())
        assert rc == 1, text
        assert "ERROR: - chunk 0: no public function without arguments to run" in out
        assert out.strip().endswith("0 passed, 1 failed")
        cases = json.loads((d / "c.json").read_text())["cases"]
        assert [c["status"] for c in cases] == ["error"]
    good = d / "good.mlir"
    good.write_text("func.func @t() {\n  func.return\n}\n")
    rc, out, _ = cli(capsys, monkeypatch, "run", "--check", good, "-", stdin=ONE.encode())
    assert rc == 1 and out.strip().endswith("1 passed, 1 failed")


# ------------------------------------------------------------------ the Python API
def test_api_arguments_give_project_errors(d):
    with pytest.raises(shlo.UsageError, match="NUL byte"):
        shlo.load(b"func.func @main() {\x00}")
    with pytest.raises(shlo.UsageError, match="not int"):
        shlo.load(42)
    with pytest.raises(shlo.UsageError, match="not int"):
        shlo.parse(42)
    with pytest.raises(shlo.ParseError, match="not UTF-8"):
        shlo.parse(b"\xff\xfe")
    assert shlo.parse(ONE.encode()) == shlo.parse(ONE)
    with open(d / "one.mlir", "rb") as f:
        assert shlo.load(f) == shlo.parse(ONE)
    with pytest.raises(shlo.UsageError, match="is a directory"):
        shlo.load(d)


def test_api_trace_callback_and_all_diagnostics(d):
    m = shlo.parse(TWO, "two.mlir")
    seen = []
    res = shlo.run(m, np.array([1, 2], np.float32), np.array([1, 2], ml_dtypes.bfloat16),
                   trace=lambda op, results: seen.append((op.name, op.where(), [np.asarray(r).tolist() for r in results])))
    assert seen == [("stablehlo.add", "two.mlir:2:8", [[2.0, 4.0]]),
                    ("stablehlo.compare", "two.mlir:3:8", [[False, False]])]
    np.testing.assert_array_equal(res[0], [2, 4])
    errs = shlo.verify(shlo.parse(INVALID, "i.mlir"), all=True)
    assert [e.location for e in errs] == ["i.mlir:2:8", "i.mlir:3:8"]
    assert shlo.verify(m, all=True) == []
    with pytest.raises(shlo.VerificationError):
        shlo.verify(shlo.parse(INVALID))
    with pytest.raises(shlo.UsageError):
        shlo.run(m, np.zeros(2, np.float32), np.zeros(2, ml_dtypes.bfloat16), trace=42)


def test_internal_errors_are_one_line(d, capsys, monkeypatch):
    from stablehlo_ref import cli as cli_mod
    monkeypatch.setattr(cli_mod, "cmd_validate", lambda args: {}["boom"])
    monkeypatch.setattr(cli_mod.build_parser, "__defaults__", None, raising=False)
    p = cli_mod.build_parser()
    sub = next(a for a in p._actions if a.__class__.__name__ == "_SubParsersAction")
    sub.choices["validate"].set_defaults(fn=lambda args: {}["boom"])
    monkeypatch.setattr(cli_mod, "build_parser", lambda: p)
    rc, _, err = cli(capsys, monkeypatch, "validate", d / "one.mlir")
    assert rc == 70
    one_error(err, "internal error: KeyError")


def test_token_parameters_need_no_array(d, capsys, monkeypatch):
    (d / "tok.mlir").write_text("""func.func @main(%t: !stablehlo.token, %x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.add %x, %x : tensor<2xf32>
  return %0 : tensor<2xf32>
}
""")
    rc, out, _ = cli(capsys, monkeypatch, "run", d / "tok.mlir", "--input", d / "x32.npy")
    assert rc == 0 and "[2. 4.]" in out
    np.savez(d / "t.npz", x=np.array([1, 2], np.float32))
    rc, out, _ = cli(capsys, monkeypatch, "run", d / "tok.mlir", "--inputs", d / "t.npz")
    assert rc == 0 and "[2. 4.]" in out
    rc, _, err = cli(capsys, monkeypatch, "run", d / "tok.mlir")
    assert rc == 2
    one_error(err, "takes 1 argument(s) besides 1 token(s)")


def test_run_limits(d, capsys, monkeypatch):
    forever = d / "forever.mlir"
    forever.write_text(LOOP.replace("%p = stablehlo.compare LT, %i, %c5", "%p = stablehlo.compare GE, %i, %c0"))
    rc, out, err = cli(capsys, monkeypatch, "run", forever, "--max-steps", "100")
    assert rc == 1 and out == ""
    one_error(err, "--max-steps")
    rc, _, err = cli(capsys, monkeypatch, "run", forever, "--timeout", "0.5")
    assert rc == 1
    one_error(err, "--timeout")
    check = d / "c.mlir"
    check.write_text(LOOP.replace("@main() -> tensor<i32>", "@t() -> tensor<i32>"))
    rc, out, _ = cli(capsys, monkeypatch, "run", "--check", check, "--max-steps", "3")
    assert rc == 1 and "ERROR:" in out and "--max-steps" in out
    rc, _, err = cli(capsys, monkeypatch, "run", forever, "--max-steps", "0")
    assert rc == 2
    one_error(err, "--max-steps must be positive")
