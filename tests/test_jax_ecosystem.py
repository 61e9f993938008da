"""Programs written with flax (nnx, linen), optax, equinox, jnp.linalg, shard_map and shape
polymorphism, exported with jax.export in JAX's default configuration (Shardy on): each is
loaded from jax's artifact, validated, run and matched against XLA, serialized, read by
jaxlib, and compared byte for byte with jaxlib's artifact (tests/jax_ecosystem_programs.py).

Skipped without jax/flax/optax/equinox (`pip install -e .[interop]`). Cases that do not pass
yet are strict xfails with the reason: the mark fails the suite once they pass."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

os.environ.setdefault("JAX_PLATFORMS", "cpu")
pytest.importorskip("jax")
pytest.importorskip("flax")
pytest.importorskip("optax")
pytest.importorskip("equinox")

sys.path.insert(0, str(Path(__file__).resolve().parent))
import jax_ecosystem_programs as P  # noqa: E402

_XFAIL: dict = {}     # name -> reason, for programs that do not pass yet


@pytest.mark.parametrize("name", sorted(P.PROGRAMS))
def test_program(name, request):
    if name in _XFAIL:
        request.applymarker(pytest.mark.xfail(strict=True, reason=_XFAIL[name]))
    r = P.PROGRAMS[name](np.random.default_rng(0))
    P.check_program(r[0], list(r[1]), r[2] if len(r) > 2 else None)


_FOUR_DEVICES = textwrap.dedent("""
    import sys
    sys.path.insert(0, {tests!r})
    import jax, numpy as np
    from jax.sharding import PartitionSpec as P
    import jax_ecosystem_programs as E
    assert len(jax.devices()) == 4, jax.devices()
    mesh = jax.make_mesh((4,), ("x",), axis_types=(jax.sharding.AxisType.Auto,))
    def fn(a, b):
        def body(a, b):
            return jax.lax.psum(a, "x") * 2, jax.lax.all_gather(b, "x", tiled=True)
        return jax.shard_map(body, mesh=mesh, in_specs=(P("x"), P("x")), out_specs=(P("x"), P()),
                             check_vma=False)(a, b)
    rng = np.random.default_rng(0)
    E.check_program(fn, [E.f32(rng, 8, 3), E.f32(rng, 8)])
    mesh2 = jax.make_mesh((2, 2), ("x", "y"), axis_types=(jax.sharding.AxisType.Auto,) * 2)
    def fn2(a):
        def body(a):
            return jax.lax.psum(a, "y") + jax.lax.axis_index("x").astype(a.dtype)
        return jax.shard_map(body, mesh=mesh2, in_specs=P("x", "y"), out_specs=P("x", None),
                             check_vma=False)(a)
    E.check_program(fn2, [E.f32(rng, 4, 6)])
    print("OK")
""")


def test_shard_map_four_devices():
    """shard_map with psum/all_gather over a 4-device mesh (and a 2x2 mesh): XLA host devices
    must be configured before jax starts, so this runs in a subprocess."""
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=4", JAX_PLATFORMS="cpu")
    code = _FOUR_DEVICES.format(tests=str(Path(__file__).resolve().parent))
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and "OK" in r.stdout, r.stderr[-3000:]
