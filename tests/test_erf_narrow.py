"""erf and erfc rounded to f32/f16/bf16 through the cheap bounded form (`chlo.erf_narrow`):
the same bytes as the accurate f64 kernels rounded, whatever the values."""
import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import stablehlo_ref as shlo
from stablehlo_ref.interpreter import chlo

DTYPES = [np.float32, np.float16, ml_dtypes.bfloat16]
PAIRS = [(chlo.erf_narrow, chlo.erf), (chlo.erfc_narrow, chlo.erfc)]
SPECIALS = [np.nan, np.inf, -np.inf, 0.0, -0.0, 0.5, -0.5, np.nextafter(0.5, 0), 10.1, -10.1,
            np.nextafter(10.1, 11), 1e-300, 5e-324, 3.9, -3.9, 27.3]


def _same(narrow, accurate, x, dt):
    got, want = narrow(x, dt), accurate(x).astype(dt)
    assert got.shape == want.shape and got.tobytes() == want.tobytes()


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(-12, 12, width=32), min_size=64, max_size=300),
       st.sampled_from(range(3)), st.sampled_from(range(2)))
def test_narrow_erf_rounds_as_the_accurate_kernel(xs, d, k):
    x = np.array(xs + SPECIALS, np.float64)
    _same(*PAIRS[k], x, DTYPES[d])


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("pair", PAIRS)
def test_narrow_erf_on_many_values_and_shapes(pair, dt):
    rng = np.random.default_rng(3)
    for x in (rng.standard_normal((64, 1000)), rng.uniform(-11, 11, 50000),
              rng.uniform(-0.6, 0.6, 3000), np.array(SPECIALS * 8).reshape(8, -1), np.zeros(0)):
        _same(*pair, x.astype(np.float32).astype(np.float64), dt)


def test_the_fitted_form_is_used_and_few_elements_are_computed_again(monkeypatch):
    assert chlo._erfc_fit() is not None
    calls = []
    accurate = chlo.erf
    monkeypatch.setattr(chlo, "erf", lambda v: calls.append(v.size) or accurate(v))
    x = np.random.default_rng(4).standard_normal(100000)
    chlo.erf_narrow(x.astype(np.float32).astype(np.float64), np.float32)
    assert sum(calls) < 200


def test_elements_the_bound_leaves_open_are_computed_again(monkeypatch):
    # a cheaper form off by up to 2^-24 relative under a bound of 2^-20: many roundings are
    # left open, and each such element is taken from the accurate kernel
    fast = chlo._erfc_fast
    monkeypatch.setattr(chlo, "_ERF_NARROW_TOL", 2.0 ** -20)
    monkeypatch.setattr(chlo, "_erfc_fast", lambda a, fit: fast(a, fit) * (1 + 2.0 ** -24))
    x = np.random.default_rng(5).uniform(-6, 6, 20000).astype(np.float32).astype(np.float64)
    for narrow, accurate in PAIRS:
        _same(narrow, accurate, x, np.float32)


def test_a_fit_outside_its_bound_is_not_used(monkeypatch):
    monkeypatch.setattr(chlo, "_ERFC_FIT", [])
    monkeypatch.setattr(chlo, "_ERFC_FIT_DEGREE", 6)       # ~1e-6: far outside the bound
    assert chlo._erfc_fit() is None
    x = np.linspace(-5, 5, 1001)
    _same(chlo.erf_narrow, chlo.erf, x, np.float32)


def test_chlo_erf_program_uses_the_narrow_form():
    x = np.random.default_rng(6).standard_normal((32, 40)).astype(np.float32)
    m = shlo.parse("""func.func @main(%x: tensor<32x40xf32>) -> (tensor<32x40xf32>, tensor<32x40xf32>) {
  %0 = chlo.erf %x : tensor<32x40xf32> -> tensor<32x40xf32>
  %1 = chlo.erfc %x : tensor<32x40xf32> -> tensor<32x40xf32>
  return %0, %1 : tensor<32x40xf32>, tensor<32x40xf32>
}""")
    e, c = shlo.run(m, x)
    x64 = x.astype(np.float64)
    assert e.tobytes() == chlo.erf(x64).astype(np.float32).tobytes()
    assert c.tobytes() == chlo.erfc(x64).astype(np.float32).tobytes()
