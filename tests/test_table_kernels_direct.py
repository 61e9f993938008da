"""The elementwise table kernels' direct first-run paths (+ - * and the unary math ops on
native floats, resolved once per kernel) against the general helpers `_binary` and `_unary`
they bypass: the same bytes and dtype for every element type, rank 0 included, and for
operands of another dtype than the result's."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import stablehlo_ref as shlo
from stablehlo_ref.interpreter import elementwise as ew
from stablehlo_ref.interpreter.registry import KERNELS

_DT = {"f16": np.float16, "f32": np.float32, "f64": np.float64, "i8": np.int8,
       "i32": np.int32, "i64": np.int64, "ui8": np.uint8, "ui64": np.uint64, "i1": np.bool_,
       "bf16": None, "complex<f32>": np.complex64}


def _values(rng, et, shape):
    if et == "bf16":
        import ml_dtypes
        return (rng.standard_normal(shape) * 10).astype(ml_dtypes.bfloat16)
    if et in ("f8E4M3FN", "f8E5M2"):
        import ml_dtypes
        x = (rng.standard_normal(shape) * 10).astype(
            ml_dtypes.float8_e4m3fn if et == "f8E4M3FN" else ml_dtypes.float8_e5m2)
        if x.size:
            x.flat[0] = np.nan
        return x
    dt = _DT[et]
    if dt is np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if np.dtype(dt).kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(info.min, info.max, shape, endpoint=True, dtype=dt)
    x = rng.standard_normal(shape) * 1e3
    if np.dtype(dt).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    x = np.asarray(x.astype(dt))
    if x.size:
        x.flat[0] = np.nan
    return x


def _same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    assert a.tobytes() == b.tobytes()


def _find_op(name, et, shape, nin):
    t = f"tensor<{'x'.join(map(str, shape)) + 'x' if shape else ''}{et}>"
    ins = ", ".join(f"%a{i}" for i in range(nin))
    args = ", ".join(f"%a{i}: {t}" for i in range(nin))
    m = shlo.parse(f"func.func @main({args}) -> {t} {{\n  %0 = {name} {ins} : {t}\n"
                   f"  return %0 : {t}\n}}")
    for op in m.walk():
        if op.name == name:
            return op
    raise AssertionError(name)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@settings(max_examples=150, deadline=None)
@given(st.sampled_from(sorted(ew._BINARY_KERNELS)), st.sampled_from(sorted(_DT)),
       st.sampled_from([(), (3,), (2, 3)]), st.integers(0, 2 ** 32 - 1), st.booleans())
def test_binary_table_kernels_match_general(name, et, shape, seed, other_dtype):
    rng = np.random.default_rng(seed)
    op = _find_op(name, et, shape, 2)
    a, b = _values(rng, et, shape), _values(rng, et, shape)
    if other_dtype and et != "f64":
        b = b.astype(np.float64)        # (an operand not of the result's dtype)
    p, k = ew._BINARY_KERNELS[name]
    try:
        want = ew._binary(op, a, b, *p, **k)
    except Exception as e:  # noqa: BLE001 - the same error either way
        try:
            KERNELS[name](None, op, a, b)
        except Exception as e2:  # noqa: BLE001
            assert type(e2) is type(e) and str(e2) == str(e)
            return
        raise AssertionError("the direct kernel did not fail")
    _same(KERNELS[name](None, op, a, b), want)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@settings(max_examples=150, deadline=None)
@given(st.sampled_from(sorted(ew._UNARY_KERNELS)), st.sampled_from(sorted(_DT)),
       st.sampled_from([(), (3,), (2, 3)]), st.integers(0, 2 ** 32 - 1), st.booleans())
def test_unary_table_kernels_match_general(name, et, shape, seed, other_dtype):
    rng = np.random.default_rng(seed)
    op = _find_op(name, et, shape, 1)
    x = _values(rng, et, shape)
    if other_dtype:
        x = x.astype(np.float64) if et != "f64" else x.astype(np.float32)
    p, k = ew._UNARY_KERNELS[name]
    try:
        want = ew._unary(op, x, *p, **k)
    except Exception as e:  # noqa: BLE001 - the same error either way
        try:
            KERNELS[name](None, op, x)
        except Exception as e2:  # noqa: BLE001
            assert type(e2) is type(e) and str(e2) == str(e)
            return
        raise AssertionError("the direct kernel did not fail")
    _same(KERNELS[name](None, op, x), want)


def test_table_kernels_are_direct():
    # (the kernels registered are the direct ones, not `register_table`'s keyword closures)
    for name in list(ew._BINARY_KERNELS) + list(ew._UNARY_KERNELS):
        assert KERNELS[name].__code__.co_filename.endswith("elementwise.py")


def test_top_level_call_restores_blas_run_count_and_checks_results():
    # (the evaluator enters/leaves BLAS and checks plain results in line)
    from stablehlo_ref.interpreter import blas
    src = """func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.add %a, %a : tensor<2xf32>
  return %0 : tensor<2xf32>
}"""
    runs, started = blas._state["runs"], blas.RUN[0]
    out, = shlo.run(shlo.parse(src), np.array([1, 2], np.float32))
    assert out.dtype == np.float32 and out.tolist() == [2, 4]
    assert blas._state["runs"] == runs and blas.RUN[0] == started + 1


@pytest.mark.parametrize("et", ["f16", "f32", "f64", "bf16", "f8E4M3FN", "f8E5M2", "i8", "i32",
                                "ui8", "ui64", "i1", "complex<f32>", "i4"])
@pytest.mark.parametrize("direction", ["EQ", "NE", "LT", "GE"])
@pytest.mark.parametrize("ctype", [None, "FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED"])
def test_compare_plan_shared_across_ops_matches_direct_comparison(et, direction, ctype):
    # (compare's first run takes its plan from a table shared by ops of the same
    # direction, compare type and element type: the same one `_direct_comparison` decides,
    # and the same result as the general kernel's)
    ct = f", {ctype}" if ctype else ""
    src = f"""func.func @main(%a: tensor<3x{et}>, %b: tensor<3x{et}>) -> tensor<3xi1> {{
  %0 = stablehlo.compare {direction}, %a, %b{ct} : (tensor<3x{et}>, tensor<3x{et}>) -> tensor<3xi1>
  return %0 : tensor<3xi1>
}}"""
    for _ in range(2):       # (the second parse finds the plan made for the first)
        m = shlo.parse(src)
        op = next(o for o in m.walk() if o.name == "stablehlo.compare")
        rng = np.random.default_rng(0)
        if et == "i4":
            a = rng.integers(-8, 8, 3).astype(np.int8)
            b = rng.integers(-8, 8, 3).astype(np.int8)
        else:
            a, b = _values(rng, et, (3,)), _values(rng, et, (3,))
        try:
            got = KERNELS["stablehlo.compare"](None, op, a, b)
        except Exception as e:  # noqa: BLE001
            got = type(e)
        assert op._cache["compare"] is ew._direct_comparison(op)
        fresh = next(o for o in shlo.parse(src).walk() if o.name == "stablehlo.compare")
        fresh._cache = {"compare": None}          # (the general path, no direct comparison)
        try:
            want = KERNELS["stablehlo.compare"](None, fresh, a, b)
        except Exception as e:  # noqa: BLE001
            want = type(e)
        if isinstance(want, type):
            assert got is want
        else:
            _same(got, want)
