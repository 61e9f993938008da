"""More programs from JAX's ecosystem (tests/jax_ecosystem_more.py): jax.random, lax control
flow and scans, convolutions and pooling, sorting, FFT, complex, integer and narrow-float
arithmetic, jax.nn, ragged_dot, flax + optax training steps, optax optimizers, equinox layers
and more of jnp.linalg / jax.scipy.linalg, each with all of tests/test_jax_ecosystem.py's checks
(jax's artifact loads and validates, the program runs and matches XLA, our artifact is read by
jaxlib and is byte-identical to jaxlib's); and `jax.jit(f).lower(...).as_text()` programs with
the CHLO ops JAX writes there, run as is and legalized, each matched against XLA.

Skipped without jax/flax/optax/equinox (`pip install -e .[interop]`)."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest

os.environ.setdefault("JAX_PLATFORMS", "cpu")
pytest.importorskip("jax")
pytest.importorskip("flax")
pytest.importorskip("optax")
pytest.importorskip("equinox")

sys.path.insert(0, str(Path(__file__).resolve().parent))
import jax_ecosystem_more as M  # noqa: E402
import jax_ecosystem_programs as P  # noqa: E402


@pytest.mark.parametrize("name", sorted(M.PROGRAMS))
def test_program(name):
    r = M.PROGRAMS[name](np.random.default_rng(0))
    P.check_program(r[0], list(r[1]), r[2] if len(r) > 2 else None)


# the CHLO ops each lowered program must carry (what JAX writes today): the legalization is
# exercised, not skipped because JAX decomposed the op itself
_EXPECTED_CHLO = {
    "lowered_layernorm_rmsnorm": {"chlo.square"},
    "lowered_special": {"chlo.erf", "chlo.erfc", "chlo.erf_inv", "chlo.lgamma", "chlo.digamma", "chlo.polygamma",
                        "chlo.zeta", "chlo.bessel_i1e"},
    "lowered_complex_inverse": {"chlo.asin", "chlo.acos", "chlo.asinh", "chlo.acosh", "chlo.atan", "chlo.atanh",
                                "chlo.sinh", "chlo.cosh", "chlo.square"},
    "lowered_top_k_nextafter": {"chlo.top_k", "chlo.next_after"},
    "lowered_decoder": {"chlo.square"},
    "lowered_stats": {"chlo.erf", "chlo.erfc", "chlo.lgamma"},
    "lowered_special_more": {"chlo.lgamma", "chlo.erfc"},
    "lowered_narrow_specials": {"chlo.erf_inv", "chlo.erf", "chlo.top_k"},
    "lowered_qr_pivoting": set(),
    "lowered_svd_qr_algorithm": set(),
}


@pytest.mark.parametrize("name", sorted(M.LOWERED))
def test_lowered_text_with_chlo(name):
    r = M.LOWERED[name](np.random.default_rng(0))
    counts = M.check_lowered(r[0], list(r[1]))
    assert _EXPECTED_CHLO[name] <= set(counts), counts


def test_lowered_f64_special_functions():
    import jax
    r = M.lowered_special_f64(np.random.default_rng(0))
    with jax.enable_x64(True):
        counts = M.check_lowered(r[0], list(r[1]), rtol=1e-12, atol=1e-13)
    assert {"chlo.erf", "chlo.erfc", "chlo.erf_inv", "chlo.bessel_i1e", "chlo.zeta"} <= set(counts), counts


_COLLECTIVES = """
import sys
sys.path.insert(0, {tests!r})
import jax, numpy as np
from jax.sharding import PartitionSpec as P
import jax_ecosystem_programs as E
assert len(jax.devices()) == 4, jax.devices()
mesh = jax.make_mesh((4,), ("x",), axis_types=(jax.sharding.AxisType.Auto,))
rng = np.random.default_rng(0)
ops = [lambda a: jax.lax.ppermute(a, "x", [(i, (i + 1) % 4) for i in range(4)]),
       lambda a: jax.lax.pmax(a, "x"),
       lambda a: jax.lax.psum_scatter(a, "x", scatter_dimension=0, tiled=True),
       lambda a: jax.lax.all_to_all(a, "x", 0, 0, tiled=True),
       lambda a: jax.lax.pmean(a, "x")]
differ = 0
for op in ops:                 # one collective per program
    E.check_program(lambda a, op=op: jax.shard_map(op, mesh=mesh, in_specs=P("x"), out_specs=P("x"),
                                                   check_vma=False)(a), [E.f32(rng, 16, 3)])
def both(a):
    return tuple(op(a) for op in ops)
try:                           # all five in one manual computation
    E.check_program(lambda a: jax.shard_map(both, mesh=mesh, in_specs=P("x"), out_specs=(P("x"),) * 5,
                                            check_vma=False)(a), [E.f32(rng, 16, 3)])
except AssertionError as e:
    if "artifact differs" not in str(e):
        raise
    differ = 1
print("BYTES-DIFFER" if differ else "OK")
"""


def test_shard_map_collectives_four_devices():
    """ppermute, pmax, psum_scatter, all_to_all and pmean in shard_map over 4 XLA host devices:
    each alone and all five in one manual computation (the body's argument then has five uses,
    whose use-list order the artifact records) pass every check, byte identity included."""
    import subprocess
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=4", JAX_PLATFORMS="cpu")
    code = _COLLECTIVES.format(tests=str(Path(__file__).resolve().parent))
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "BYTES-DIFFER" not in r.stdout, "our artifact differs from jaxlib's"
    assert "OK" in r.stdout


def test_multi_platform_export():
    """jax.export for ("cpu", "cuda"): @main takes the platform index first (0 = cpu here) and
    branches on it; the program runs with index 0 and matches jax's own call on CPU, and our
    artifact is jaxlib's byte for byte."""
    import jax
    import jax.numpy as jnp
    from jax import export

    import stablehlo_ref as shlo
    from stablehlo_ref.serialization import artifact_version, deserialize, serialize_as

    def fn(x, w):
        return jax.nn.gelu(x @ w), jnp.argmax(x, axis=1)
    rng = np.random.default_rng(0)
    x, w = P.f32(rng, 4, 5), P.f32(rng, 5, 3)
    exp = export.export(jax.jit(fn), platforms=("cpu", "cuda"))(x, w)
    m = deserialize(exp.mlir_module_serialized)
    shlo.verify(m)
    text = exp.mlir_module()
    mt = shlo.parse(text, "-")
    P.compare_results(shlo.run(mt, np.int32(0), x, w), [np.asarray(v) for v in exp.call(x, w)])
    target = artifact_version(exp.mlir_module_serialized)
    ours = serialize_as(mt, target, writer_version=P.jaxlib_stablehlo_version())
    assert ours == P.jaxlib_serialize(text, target)
