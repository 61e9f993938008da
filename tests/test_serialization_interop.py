"""Portable artifacts against jaxlib's serializer (skipped without jax).

  * ours -> jaxlib: for a sample of `../shared/stablehlo-tests/testdata` programs (every
    program whose file is small, up to a cap, in a fixed order), our artifact at 1.0.0 and at
    jaxlib's current version is accepted by `stablehlo.deserialize_portable_artifact` and
    prints the same module as jaxlib's own artifact of that text.
  * jaxlib -> ours: jaxlib's artifacts at several targets read by us run to the same results
    as the text; a `jax.export(...).serialize()` payload's module runs to jax's results.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest

os.environ.setdefault("JAX_PLATFORMS", "cpu")
jax = pytest.importorskip("jax")
pytest.importorskip("jaxlib")

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import REPO  # noqa: E402

import stablehlo_ref as shr  # noqa: E402
from stablehlo_ref.errors import StableHLOError  # noqa: E402
from stablehlo_ref.serialization import deserialize, serialize  # noqa: E402

TESTDATA = REPO.parent / "shared" / "stablehlo-tests" / "testdata"
_SAMPLE = 60          # programs, spread over the sorted file list
_MAX_BYTES = 20_000   # larger files make the sample slow without adding coverage


def _programs():
    if not TESTDATA.is_dir():
        return []
    files = sorted(p for p in TESTDATA.glob("*.mlir") if p.stat().st_size <= _MAX_BYTES)
    step = max(1, len(files) // _SAMPLE)
    return [p.name for p in files[::step][:_SAMPLE]]


def _jax_mods():
    from jax._src.interpreters import mlir as jmlir
    from jaxlib.mlir import ir
    from jaxlib.mlir.dialects import stablehlo
    return jmlir, ir, stablehlo


_CTX = None


def _ctx():
    global _CTX
    if _CTX is None:
        jmlir, _, stablehlo = _jax_mods()
        _CTX = jmlir.make_ir_context()
    return _CTX


def _jaxlib_print(data: bytes) -> str:
    _, _, stablehlo = _jax_mods()
    with _ctx():
        m = stablehlo.deserialize_portable_artifact(_ctx(), data)
        return m.operation.get_asm(enable_debug_info=False)


def _jaxlib_serialize(text: str, target: str) -> bytes:
    _, _, stablehlo = _jax_mods()
    return stablehlo.serialize_portable_artifact_str(text, target)


def _current():
    return _jax_mods()[2].get_current_version()


@pytest.mark.parametrize("name", _programs() or ["(none)"])
def test_ours_accepted_by_jaxlib(name):
    if name == "(none)":
        pytest.skip("../shared corpora not present")
    text = (TESTDATA / name).read_text()
    try:
        module = shr.parse(text, "-")
    except StableHLOError as e:
        pytest.skip(f"text parser: {e}")
    for target in ("1.0.0", _current()):
        try:
            theirs = _jaxlib_serialize(text, target)
        except Exception:   # upstream cannot write this program at that target
            with pytest.raises(StableHLOError):
                serialize(module, target)
            continue
        ours = serialize(module, target)
        assert _jaxlib_print(ours) == _jaxlib_print(theirs), f"{name} at {target}"


def _run_all(module):
    """Results of every public function without arguments (testdata programs are closed)."""
    from stablehlo_ref.interpreter.evaluator import Interpreter
    out = {}
    for f in module.functions.values():
        ft = f.attributes["function_type"].type
        if ft.inputs:
            continue
        name = f.attributes["sym_name"].value
        try:
            out[name] = [np.asarray(r) for r in Interpreter(module).call(name, [])]
        except StableHLOError as e:
            out[name] = type(e).__name__
    return out


def _same(a, b):
    assert a.keys() == b.keys()
    for k in a:
        if isinstance(a[k], str) or isinstance(b[k], str):
            assert a[k] == b[k], k
            continue
        for x, y in zip(a[k], b[k]):
            assert x.dtype == y.dtype and x.shape == y.shape
            np.testing.assert_array_equal(x.reshape(-1).view(np.uint8), y.reshape(-1).view(np.uint8))


@pytest.mark.parametrize("name", (_programs() or ["(none)"])[::4])
def test_jaxlib_artifacts_read_and_run(name):
    if name == "(none)":
        pytest.skip("../shared corpora not present")
    text = (TESTDATA / name).read_text()
    try:
        module = shr.parse(text, "-")
    except StableHLOError as e:
        pytest.skip(f"text parser: {e}")
    want = _run_all(module)
    for target in ("0.9.0", "1.0.0", "1.7.0", _current()):
        try:
            data = _jaxlib_serialize(text, target)
        except Exception:
            continue
        _same(_run_all(deserialize(data)), want)


def test_jax_export_payload():
    pytest.importorskip("flatbuffers")    # jax.export's serialization needs it
    import jax.numpy as jnp
    from jax import export

    def f(x, w):
        return jnp.tanh(x @ w).sum(axis=0), jnp.cumsum(x, axis=1)

    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 8)).astype(np.float32)
    w = rng.standard_normal((8, 3)).astype(np.float32)
    exp = export.export(jax.jit(f))(x, w)
    payload = exp.serialize()
    back = export.deserialize(payload)
    module = deserialize(bytes(back.mlir_module_serialized))
    theirs = f(x, w)
    # the payload itself, as users get it in a file, is read by load()
    for m in (module, shr.load_bytes(bytes(payload), "payload")):
        ours = shr.run(m, x, w)
        for a, b in zip(ours, theirs):
            np.testing.assert_allclose(a, np.asarray(b), rtol=1e-5, atol=1e-5)
