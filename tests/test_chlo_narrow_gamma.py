"""lgamma and digamma for f32, f16 and bf16 results take a cheaper f64 form and compute again
by the accurate kernel only the elements whose rounding the cheap form's error bound leaves
open (chlo.lgamma_narrow, chlo.digamma_narrow): the result's bytes must be those of the
accurate kernel's f64 value rounded to the type, for every input: NaN (payload and sign),
infinities, signed zeros, subnormals, the poles, the zeros of both functions, reflection at
negative x, huge values."""
import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from stablehlo_ref.interpreter import chlo, run
from stablehlo_ref.text import parse

F32_MAX = float(np.finfo(np.float32).max)
PAIRS = [(chlo.lgamma, chlo.lgamma_narrow), (chlo.digamma, chlo.digamma_narrow)]
PAIR_IDS = ["lgamma", "digamma"]


def _mismatches(accurate, narrow, x, dtype):
    """The inputs (as the type) whose narrow result's bytes differ from the accurate value's
    rounding, the f64 values taken from the type's values as the interpreter takes them."""
    with np.errstate(all="ignore"):
        x64 = np.asarray(x).astype(np.float64)
        want = accurate(x64).astype(dtype)
    got = narrow(x64, dtype)
    assert got.dtype == np.dtype(dtype) and got.shape == x64.shape
    u = {2: np.uint16, 4: np.uint32}[np.dtype(dtype).itemsize]
    bad = want.view(u) != got.view(u)
    return x[bad], want[bad], got[bad]


def _assert_same_bytes(accurate, narrow, x, dtype):
    xs, want, got = _mismatches(accurate, narrow, x, dtype)
    assert xs.size == 0, (accurate.__name__, xs.size, xs[:8], want[:8], got[:8])


# ------------------------------------------------------------------ every f16 and bf16 value

@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16], ids=["f16", "bf16"])
@pytest.mark.parametrize("accurate,narrow", PAIRS, ids=PAIR_IDS)
def test_every_16_bit_value(accurate, narrow, dtype):
    x = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(dtype)
    _assert_same_bytes(accurate, narrow, x, dtype)


# ------------------------------------------------------------------ f32

def _ulp_steps(points, k):
    """Every f32 within k steps of each (nonzero) point, by the integer view: the points'
    next-after neighbourhoods."""
    p = np.asarray(points, np.float32)
    p = p[p != 0]
    bits = p.view(np.int32).astype(np.int64)[:, None] + np.arange(-k, k + 1)
    bits = bits[(bits >= -(1 << 31)) & (bits < (1 << 31))]
    return bits.astype(np.int32).view(np.float32)


def _near(points, rng, count):
    """Random f32 at log-uniform distances (1e-8 to 0.5, relative) on both sides of each point."""
    p = np.asarray(points, np.float64)
    d = 10.0 ** rng.uniform(-8, np.log10(0.5), (p.size, count))
    s = rng.choice([-1.0, 1.0], (p.size, count))
    return (p[:, None] * (1 + s * d)).astype(np.float32).reshape(-1)


def _lgamma_zeros():
    return [1.0, 2.0] + [r[0] for r in chlo._roots("lgamma")]


def _digamma_zeros():
    return [chlo._X0[0]] + [r[0] for r in chlo._roots("digamma")]


def _f32_inputs():
    rng = np.random.default_rng(20240531)
    n = 60_000
    mag = 10.0 ** rng.uniform(-40, np.log10(F32_MAX), n)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, F32_MAX, -F32_MAX, 1e30,
                        -1e30, 1e-45, -1e-45, 1.17549435e-38, -1.17549435e-38, 0.5, -0.5],
                       np.float32)
    payloads = np.array([0x7FC00001, 0xFFC12345, 0x7F800001, 0xFFBFFFFF], np.uint32).view(np.float32)
    poles = -np.arange(0.0, 41.0)
    bounds = [0.5, 1.0, 1.5, 2.0, 2.5, 3.5, 6.0, 10.0, -0.5, -1.5, -2.5, -3.5,
              chlo._X0[0] - 1 / 16, chlo._X0[0] + 1 / 16, 2.0 ** 23, -(2.0 ** 23) + 0.5]
    zeros = _lgamma_zeros() + _digamma_zeros()
    parts = [
        rng.uniform(-30, 30, n),
        mag * rng.choice([-1.0, 1.0], n),
        np.abs(rng.standard_normal(n)) + 0.1,
        rng.standard_normal(n) * 5,
        _near(zeros, rng, 400),
        _near(poles[1:], rng, 200),
        _ulp_steps(zeros, 300),
        _ulp_steps(poles[1:], 300),
        _ulp_steps(bounds, 300),
        rng.uniform(-1e-30, 1e-30, 2000),
        special,
        payloads,
    ]
    return np.concatenate([np.asarray(p, np.float32) for p in parts])


_F32 = []


@pytest.mark.parametrize("accurate,narrow", PAIRS, ids=PAIR_IDS)
def test_f32_values_at_many_scales(accurate, narrow):
    if not _F32:
        _F32.append(_f32_inputs())
    x = _F32[0]
    assert x.size > 300_000
    _assert_same_bytes(accurate, narrow, x, np.float32)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(width=32, allow_nan=True, allow_infinity=True, allow_subnormal=True),
                min_size=1, max_size=40))
def test_f32_hypothesis(values):
    x = np.array(values, np.float32)
    for accurate, narrow in PAIRS:
        _assert_same_bytes(accurate, narrow, x, np.float32)


@pytest.mark.parametrize("accurate,narrow", PAIRS, ids=PAIR_IDS)
def test_shapes_and_scalars(accurate, narrow):
    for x in (np.float32(0.75), np.zeros((0, 3), np.float32),
              np.linspace(-4.2, 4.2, 24, dtype=np.float32).reshape(2, 3, 4)):
        _assert_same_bytes(accurate, narrow, np.asarray(x), np.float32)


@pytest.mark.parametrize("accurate,narrow", PAIRS, ids=PAIR_IDS)
def test_few_elements_are_computed_again(accurate, narrow, monkeypatch):
    """The cheap form decides nearly every element of ordinary inputs by itself (the accurate
    kernel is called on the open ones only), including poles in arrays with negative elements
    and lgamma's zeros at 1 and 2 themselves."""
    seen = []
    name = accurate.__name__

    def counting(x):
        seen.append(np.asarray(x).size)
        return accurate(x)
    monkeypatch.setattr(chlo, name, counting)
    rng = np.random.default_rng(7)
    for x in (rng.uniform(-30, 30, 100_000), np.abs(rng.standard_normal(100_000)) + 0.1,
              rng.uniform(0.5, 3.5, 100_000)):
        seen.clear()
        narrow(x.astype(np.float32).astype(np.float64), np.float32)
        assert sum(seen) < 100, (name, sum(seen))
    seen.clear()
    narrow(np.array([-3.0, -1.0, -0.0, 0.0, 1.0, 2.0, 3.0, -2.5, -40.0]), np.float32)
    assert sum(seen) == 0


# ------------------------------------------------------------------ through the interpreter

_PROGRAM = """func.func @main(%x: tensor<50xf32>, %y: tensor<50xf32>) -> (tensor<50xf32>, tensor<50xf32>) {
  %0 = chlo.lgamma %x : tensor<50xf32> -> tensor<50xf32>
  %1 = chlo.digamma %y : tensor<50xf32> -> tensor<50xf32>
  return %0, %1 : tensor<50xf32>, tensor<50xf32>
}
"""


def test_registered_for_narrow_results():
    for name, narrow in (("chlo.lgamma", chlo.lgamma_narrow), ("chlo.digamma", chlo.digamma_narrow)):
        assert chlo._REAL_UNARY_KERNELS[name][1]["narrow"] is narrow


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_interpreter_program(seed):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(50) * 5).astype(np.float32)
    x[:6] = [1.0, 2.0, -3.0, 0.0, np.nan, np.inf]
    y = (np.abs(rng.standard_normal(50)) + 0.5).astype(np.float32)
    y[:4] = [-2.0, -0.0, chlo._X0[0], -np.inf]
    module = parse(_PROGRAM)
    lg, dg = run(module, x, y)
    with np.errstate(all="ignore"):
        want_lg = chlo.lgamma(x.astype(np.float64)).astype(np.float32)
        want_dg = chlo.digamma(y.astype(np.float64)).astype(np.float32)
    assert np.asarray(lg).dtype == np.float32 and np.asarray(dg).dtype == np.float32
    assert np.asarray(lg).tobytes() == want_lg.tobytes()
    assert np.asarray(dg).tobytes() == want_dg.tobytes()
