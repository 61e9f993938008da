"""bf16 arithmetic's faster paths give the bytes of the plain ones: `numerics.f64_to_bf16`
(f64 -> bf16 through f32, elements rounded onto a bf16 rounding boundary redone directly) is
`astype(bfloat16)` bit for bit, NaN payloads, subnormals and overflow included; and
`elementwise._bf16_exact` (+ - * / of bf16 arrays in f32) is the f64 computation rounded
once, over random bit patterns, cancellations, subnormal results and overflow (a result
holding a NaN goes the f64 way whole: its payload depends on numpy's loop)."""
import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from stablehlo_ref.interpreter import elementwise as E
from stablehlo_ref.interpreter.numerics import f64_to_bf16
from stablehlo_ref.text import parse

BF16 = ml_dtypes.bfloat16


def _f64_cases(rng):
    yield rng.integers(0, 2 ** 64, 200_000, dtype=np.uint64).view(np.float64)
    yield rng.standard_normal(100_000) * 10.0 ** rng.uniform(-50, 40, 100_000)
    # just off bf16's rounding boundaries (midpoints), on them, and f32 rounding onto them
    with np.errstate(all="ignore"):
        v = rng.integers(0, 2 ** 16, 50_000, dtype=np.uint16).view(BF16).astype(np.float32)
    v = v[np.isfinite(v)].astype(np.float64)
    ulp = np.abs(np.spacing(v.astype(np.float32)).astype(np.float64)) * 65536
    for d in (0.5, 0.5 + 2 ** -40, 0.5 - 2 ** -40, 0.5 + 2 ** -30, 0.5 - 2 ** -30):
        yield v + ulp * d
        yield v - ulp * d
    nan = np.uint64(0x7FF0000000000000) | rng.integers(1, 2 ** 52, 20_000, dtype=np.uint64)
    yield (nan | (rng.integers(0, 2, 20_000, dtype=np.uint64) << np.uint64(63))).view(np.float64)
    yield np.array([0.0, -0.0, np.inf, -np.inf, 2.0 ** -126, 2.0 ** -133, 2.0 ** -134,
                    2.0 ** -134 + 2.0 ** -160, 2.0 ** -134 - 2.0 ** -160, 3 * 2.0 ** -135,
                    2.0 ** 127 * (2 - 2.0 ** -8), 2.0 ** 127 * (2 - 2.0 ** -8) - 2.0 ** 90,
                    2.0 ** 127 * (2 - 2.0 ** -8) + 2.0 ** 90, 2.0 ** 128, 1e39, 1e-300])


def test_f64_to_bf16_is_astype_bit_for_bit():
    rng = np.random.default_rng(11)
    with np.errstate(all="ignore"):
        for x in _f64_cases(rng):
            assert f64_to_bf16(x).view(np.uint16).tobytes() == x.astype(BF16).view(np.uint16).tobytes()


def _op(name):
    m = parse(f"func.func @main(%a: tensor<8xbf16>, %b: tensor<8xbf16>) -> tensor<8xbf16> {{\n"
              f"  %0 = stablehlo.{name} %a, %b : tensor<8xbf16>\n  return %0 : tensor<8xbf16>\n}}")
    return m.op.regions[0].blocks[0].operations[0].regions[0].blocks[0].operations[0]


def _bits16(rng, n, exps=(0, 256), sign=True):
    m = rng.integers(0, 2 ** 7, n)
    e = rng.integers(exps[0], exps[1], n)
    s = rng.integers(0, 2, n) if sign else 0
    return (m | (e << 7) | (s << 15)).astype(np.uint16).view(BF16)


@pytest.mark.parametrize("name,fn", [("add", np.add), ("subtract", np.subtract),
                                     ("multiply", np.multiply), ("divide", np.divide)])
def test_bf16_exact_ops_match_the_f64_path(name, fn):
    rng = np.random.default_rng(12)
    et = E._rt(_op(name))
    n = 200_000
    near = rng.integers(0, 2 ** 16, n).astype(np.uint16)
    cases = [(_bits16(rng, n), _bits16(rng, n)),                           # anything
             (near.view(BF16), (near.astype(np.int32) + rng.integers(-3, 4, n)).astype(np.uint16).view(BF16)),
             (_bits16(rng, n, (0, 20)), _bits16(rng, n, (100, 160), False)),   # subnormal results
             (_bits16(rng, n, (230, 255)), _bits16(rng, n, (100, 140), False))]  # overflow
    with np.errstate(all="ignore"):
        for a, b in cases:
            keep = ~np.isnan(fn(a.astype(np.float32), b.astype(np.float32)))
            if not keep.all():
                assert E._bf16_exact(a, b, fn, et) is None   # (a NaN: the f64 way, whole)
            a, b = a[keep], b[keep]
            want = fn(E.to_compute(a, et), E.to_compute(b, et)).astype(BF16)
            got = E._bf16_exact(a, b, fn, et)
            assert got.view(np.uint16).tobytes() == want.view(np.uint16).tobytes()


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 2 ** 32 - 1), st.sampled_from(["add", "subtract", "multiply", "divide"]))
def test_bf16_kernels_through_the_op(seed, name):
    rng = np.random.default_rng(seed)
    op = _op(name)
    et = E._rt(op)
    fn = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.divide}[name]
    a = _bits16(rng, 300).reshape(3, 100)
    b = _bits16(rng, 300).reshape(3, 100)
    with np.errstate(all="ignore"):
        want = fn(E.to_compute(a, et), E.to_compute(b, et)).astype(BF16)
        got = E.KERNELS[op.name](None, op, a, b)
    assert got.dtype == BF16 and got.view(np.uint16).tobytes() == want.view(np.uint16).tobytes()
