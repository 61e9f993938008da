"""PyTorch programs exported through torchax (tests/torchax_programs.py): each is loaded from
jax's artifact and from its text, validated, run and matched against XLA, serialized, read
by jaxlib, and compared byte for byte with jaxlib's artifact (the checks of
tests/test_jax_ecosystem.py). Skipped without torch and torchax (`pip install -e .[torch]`:
torch 2.9.1, with which torchax 0.0.13 imports; torch 2.13 removed overloads torchax looks up)."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

os.environ.setdefault("JAX_PLATFORMS", "cpu")
pytest.importorskip("jax")
pytest.importorskip("torch")
pytest.importorskip("torchax", exc_type=ImportError)

sys.path.insert(0, str(Path(__file__).resolve().parent))
import jax_ecosystem_programs as E  # noqa: E402
import torchax_programs as T  # noqa: E402

pytestmark = pytest.mark.interop


@pytest.mark.parametrize("name", T.NAMES)
def test_torch_program(name):
    fn, args = T.build(name)
    E.check_program(fn, args)
