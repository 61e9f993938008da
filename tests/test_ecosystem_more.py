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
