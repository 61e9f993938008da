"""The first run's Python paths for one-element operands (session 35) against the numpy
computation they replace: a direct comparison of 0-d operands in Python against numpy's
comparison ufunc on the same operands (value, type of the result)."""
import numpy as np
from hypothesis import given, settings, strategies as st

from stablehlo_ref.interpreter import elementwise as ew
from stablehlo_ref.interpreter.registry import KERNELS
from stablehlo_ref.text import parse

DIRS = {"EQ": np.equal, "NE": np.not_equal, "LT": np.less, "LE": np.less_equal,
        "GT": np.greater, "GE": np.greater_equal}
TYPES = {"i1": (np.bool_, None), "i8": (np.int8, "SIGNED"), "i16": (np.int16, "SIGNED"),
         "i32": (np.int32, "SIGNED"), "i64": (np.int64, "SIGNED"),
         "ui8": (np.uint8, "UNSIGNED"), "ui16": (np.uint16, "UNSIGNED"),
         "ui32": (np.uint32, "UNSIGNED"), "ui64": (np.uint64, "UNSIGNED"),
         "f16": (np.float16, "FLOAT"), "f32": (np.float32, "FLOAT"),
         "f64": (np.float64, "FLOAT")}


def _compare_op(direction, et, ctype):
    ct = f", {ctype}" if ctype else ""
    m = parse(f"""func.func @main(%a: tensor<{et}>, %b: tensor<{et}>) -> tensor<i1> {{
  %0 = stablehlo.compare {direction}, %a, %b{ct} : (tensor<{et}>, tensor<{et}>) -> tensor<i1>
  return %0 : tensor<i1>
}}""")
    return m.functions["main"].regions[0].blocks[0].operations[0]


def _value(dt, data):
    if dt is np.bool_:
        return np.bool_(data.draw(st.booleans()))
    if np.issubdtype(dt, np.integer):
        info = np.iinfo(dt)
        edge = [info.min, info.max, 0, 1, -1 if info.min else 2]
        return dt(data.draw(st.one_of(st.sampled_from(edge), st.integers(info.min, info.max))))
    special = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0]
    x = data.draw(st.one_of(st.sampled_from(special),
                            st.floats(allow_nan=False, width=np.finfo(dt).bits)))
    return dt(x)


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(sorted(DIRS)), st.sampled_from(sorted(TYPES)), st.booleans(),
       st.data())
def test_scalar_compare_matches_the_ufunc(direction, et, as_scalars, data):
    dt, ctype = TYPES[et]
    op = _compare_op(direction, et, ctype)
    a, b = _value(dt, data), _value(dt, data)
    if data.draw(st.booleans()):
        b = a
    if not as_scalars:
        a, b = np.asarray(a), np.asarray(b)
    got = KERNELS["stablehlo.compare"](None, op, a, b)
    want = DIRS[direction](a, b)
    assert got.__class__ is want.__class__ is np.bool_
    assert bool(got) == bool(want), (a, b, direction)


def test_scalar_compare_is_taken_only_for_exact_types():
    assert set(ew._PY_COMPARISONS) == set(DIRS.values())
    assert all(np.dtype(t).kind in "biuf" for t in ew._PY_EXACT)


def test_clamped_starts_read_numpy_scalars_as_rank_0_arrays():
    from stablehlo_ref.interpreter.movement import _clamped_starts
    for t in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64):
        info = np.iinfo(t)
        for v in (info.min, info.max, 0, 1, 3):
            for s in (t(v), np.asarray(t(v)), np.asarray([t(v)])):
                assert _clamped_starts((7, 9), (2, 3), [s, t(1)]) == \
                    [min(max(int(v), 0), 5), 1]


_FOLDS = {"stablehlo.add": (np.add, np.logical_or), "stablehlo.multiply": (np.multiply, np.logical_and),
          "stablehlo.maximum": (np.maximum, np.logical_or),
          "stablehlo.minimum": (np.minimum, np.logical_and),
          "stablehlo.and": (np.bitwise_and, np.logical_and),
          "stablehlo.or": (np.bitwise_or, np.logical_or),
          "stablehlo.xor": (np.bitwise_xor, np.logical_xor)}


def _float_bits(dt, data):
    # any bit pattern: subnormals, near-overflow values, NaN payloads, signed zeros
    bits = np.finfo(dt).bits
    ut = {16: np.uint16, 32: np.uint32, 64: np.uint64}[bits]
    return np.array([data.draw(st.integers(0, 2 ** bits - 1))], ut).view(dt)[0]


@settings(max_examples=1500, deadline=None)
@given(st.sampled_from(sorted(TYPES)), st.sampled_from(["replace"] + sorted(_FOLDS)), st.data())
def test_fold_one_matches_the_ufunc_at_fold(et, body, data):
    """`_fold_one` (a one-element scatter in Python) against what the general path's
    `apply_updates` does with one target: `ufunc.at` (an assignment for a replace), bit for
    bit, or it declines."""
    from stablehlo_ref.interpreter.indexing import _fold_one
    dt = TYPES[et][0]
    if np.dtype(dt).kind == "f":
        if body in ("stablehlo.and", "stablehlo.or", "stablehlo.xor"):
            return
        if data.draw(st.booleans()):
            a, b = _float_bits(dt, data), _float_bits(dt, data)
        else:
            a, b = _value(dt, data), _value(dt, data)
    else:
        a, b = _value(dt, data), _value(dt, data)
    x = np.array([a], dt)
    u = np.array([b], dt)
    got = _fold_one(body, x.dtype, x.dtype.kind, x.item(0), u.item(0))
    if got is None:
        return
    out = x.copy()
    with np.errstate(all="ignore"):         # (as runs store: an overflow is an infinity)
        out[0] = got
    want = x.copy()
    if body == "replace":
        want[np.array([0])] = u
    else:
        fn = _FOLDS[body][1 if x.dtype.kind == "b" else 0]
        with np.errstate(all="ignore"):
            fn.at(want, np.array([0]), u)
    assert out.tobytes() == want.tobytes(), (a, b, body, out, want)


def test_pad_fills_the_padding_value_bits_as_they_are():
    """pad's fill with a padding value of the operand's dtype (`ndarray.fill`) against
    `np.copyto`, NaN payloads (signaling ones too) and signed zeros included."""
    import ml_dtypes
    from stablehlo_ref.interpreter.movement import pad
    cases = [(np.float16, np.uint16, [0x7C01, 0x7E00, 0xFC01, 0x8000, 1]),
             (np.float32, np.uint32, [0x7F800001, 0x7FC00000, 0xFF800123, 0x80000000]),
             (np.float64, np.uint64, [0x7FF0000000000001, 0xFFF8000000000123, 1 << 63]),
             (ml_dtypes.bfloat16, np.uint16, [0x7F81, 0xFFC1, 0x8000]),
             (np.int8, np.uint8, [0x80, 0x7F]), (np.bool_, np.uint8, [1])]
    m = parse("""func.func @main(%x: tensor<2x3xf32>, %v: tensor<f32>) -> tensor<5x8xf32> {
  %0 = stablehlo.pad %x, %v, low = [1, 0], high = [1, 3], interior = [1, 2] : (tensor<2x3xf32>, tensor<f32>) -> tensor<5x8xf32>
  return %0 : tensor<5x8xf32>
}""")
    op = m.functions["main"].regions[0].blocks[0].operations[0]
    for dt, ut, bits in cases:
        x = np.arange(6).reshape(2, 3).astype(dt)
        for b in bits:
            v = np.array(b, ut).view(dt).reshape(())
            for val in (v, v[()]):
                got = pad(None, op, x, val)
                want = np.empty((5, 8), dt)
                np.copyto(want, np.asarray(val).reshape(()), casting="unsafe")
                want[1::2, 0:7:3] = x
                assert got.dtype == want.dtype and got.tobytes() == want.tobytes()
