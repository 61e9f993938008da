"""chlo.erf_inv's f32, f16 and bf16 results come from the plain evaluation of its rational
approximations, with the elements whose rounding the plain value cannot settle computed
again by the refined (double-double) f64 path: the bytes must be those of the refined f64
value rounded to the type."""
import numpy as np
import pytest

import stablehlo_ref
from stablehlo_ref.interpreter import chlo


def _bf16():
    import ml_dtypes
    return ml_dtypes.bfloat16


def _bits(a):
    a = np.asarray(a)
    return a.view({2: np.uint16, 4: np.uint32}[a.dtype.itemsize])


@pytest.mark.parametrize("name", ["f16", "bf16"])
@np.errstate(all="ignore")   # (kernels run as the interpreter runs them)
def test_every_f16_and_bf16_value(name):
    dt = np.float16 if name == "f16" else _bf16()
    y = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(dt).astype(np.float64)
    want = chlo.erf_inv(y).astype(dt)
    np.testing.assert_array_equal(_bits(chlo.erf_inv_narrow(y, dt)), _bits(want))


def test_f32_sample():
    rng = np.random.default_rng(15)
    y = rng.integers(0, 0x3F800001, 1_500_000, dtype=np.uint32).view(np.float32)
    edge = (1 - np.arange(0, 4000, dtype=np.float32) * np.float32(2.0 ** -24))
    y = np.concatenate([y, -y, edge, -edge, np.nextafter(edge, 2), rng.uniform(-1, 1, 100000),
                        [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, -1e-45, 1.5, -1.5]]
                       ).astype(np.float32).astype(np.float64)
    want = chlo.erf_inv(y).astype(np.float32)
    np.testing.assert_array_equal(_bits(chlo.erf_inv_narrow(y, np.float32)), _bits(want))


def test_an_unsettled_rounding_is_computed_again(monkeypatch):
    # plain values moved by up to half the tolerance (here widened to 2^-14, so that many
    # roundings change): the rounding check must send every element whose rounding could
    # change to the refined path, so the bytes stay the refined value's
    plain_of = chlo._erf_inv

    def off(y, refine):
        x = plain_of(y, refine)
        if not refine:
            sign = np.where(np.arange(x.size).reshape(x.shape) % 2, 1.0, -1.0)
            x = x * (1.0 + sign * 2.0 ** -15)
        return x
    monkeypatch.setattr(chlo, "_erf_inv", off)
    monkeypatch.setattr(chlo, "_ERFINV_PLAIN_TOL", 2.0 ** -14)
    rng = np.random.default_rng(3)
    y = rng.integers(0, 0x3C00, 20000, dtype=np.uint16).view(np.float16).astype(np.float64)
    y = np.concatenate([y, -y])
    want = off(y, True).astype(np.float16)
    moved = off(y, False).astype(np.float16)
    assert (_bits(moved) != _bits(want)).sum() > 100     # the moved value alone would differ
    np.testing.assert_array_equal(_bits(chlo.erf_inv_narrow(y, np.float16)), _bits(want))


@pytest.mark.parametrize("ty", ["f32", "f16", "bf16", "f64"])
def test_kernel_bytes(ty):
    dt = {"f32": np.float32, "f16": np.float16, "f64": np.float64}.get(ty) or _bf16()
    rng = np.random.default_rng(4)
    x = np.concatenate([rng.uniform(-1, 1, 61), [1.0, -1.0, 0.0, -0.0, 2.0, np.nan]]).astype(dt)
    t = f"tensor<{x.size}x{ty}>"
    src = (f"func.func @main(%a: {t}) -> {t} {{\n  %r = chlo.erf_inv %a : {t} -> {t}\n"
           f"  func.return %r : {t}\n}}\n")
    got = stablehlo_ref.run(stablehlo_ref.parse(src), x)[0]
    want = chlo.erf_inv(x.astype(np.float64)).astype(dt)
    assert np.asarray(got).dtype == dt
    np.testing.assert_array_equal(np.asarray(got).view(np.uint8), want.view(np.uint8))
