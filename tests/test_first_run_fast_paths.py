"""The general kernels' fast paths that a first run takes (session 2026-12-06, floor3)
against the general computations they skip: integer divide/remainder in the operands' own
dtype against `_int_div`/`_int_rem` (exhaustive for 8-bit types, hypothesis for wider)."""
import numpy as np
from hypothesis import given, settings, strategies as st

from stablehlo_ref.interpreter.elementwise import _int_div, _int_rem, _native_int_div_rem
from stablehlo_ref.interpreter.numerics import wrap_int
from stablehlo_ref.ir.types import ELEMENT_TYPES

INTS = ["i8", "i16", "i32", "i64", "ui8", "ui16", "ui32", "ui64"]


def _general(a, b, et, rem):
    return wrap_int((_int_rem if rem else _int_div)(a, b, et), et)


def _same(x, y):
    assert x.dtype == y.dtype and x.shape == y.shape
    assert np.array_equal(x, y), (x, y)


def _check(a, b, name):
    et = ELEMENT_TYPES[name]
    with np.errstate(all="ignore"):      # (as runs compute)
        for rem in (False, True):
            _same(_native_int_div_rem(a.copy(), b.copy(), et, rem), _general(a, b, et, rem))


def test_int_div_rem_exhaustive_8_bit():
    for name, dt in (("i8", np.int8), ("ui8", np.uint8)):
        info = np.iinfo(dt)
        v = np.arange(info.min, info.max + 1).astype(dt)
        a, b = np.meshgrid(v, v)
        _check(a.reshape(-1), b.reshape(-1), name)
        # (without zero divisors: the path that skips the fix-up)
        nz = b.reshape(-1) != 0
        _check(a.reshape(-1)[nz], b.reshape(-1)[nz], name)


_EDGES = st.sampled_from([0, 1, -1, 2, -2, 7, -7])


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(INTS), st.integers(1, 6), st.data())
def test_int_div_rem_matches_general(name, n, data):
    dt = np.dtype(ELEMENT_TYPES[name].dtype)
    info = np.iinfo(dt)
    vals = st.one_of(st.integers(int(info.min), int(info.max)), _EDGES.map(lambda x: x % (int(info.max) + 1) if info.min == 0 else x),
                     st.sampled_from([int(info.min), int(info.max)]))
    a = np.array(data.draw(st.lists(vals, min_size=n, max_size=n)), dtype=dt)
    b = np.array(data.draw(st.lists(vals, min_size=n, max_size=n)), dtype=dt)
    _check(a, b, name)
    _check(a.reshape(1, n), b.reshape(1, n), name)


# ---------------------------------------------------------------- select, clamp, slices
import stablehlo_ref as shlo  # noqa: E402
from stablehlo_ref.interpreter.numerics import from_compute, to_compute  # noqa: E402
from stablehlo_ref.text import parse  # noqa: E402
from stablehlo_ref.interpreter import run  # noqa: E402

_NP = {"i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64, "ui8": np.uint8,
       "ui64": np.uint64, "f16": np.float16, "f32": np.float32, "f64": np.float64}


def _bits_equal(x, y):
    x, y = np.asarray(x), np.asarray(y)
    assert x.dtype == y.dtype and x.shape == y.shape
    assert np.ascontiguousarray(x).tobytes() == np.ascontiguousarray(y).tobytes()


def _values(data, name, shape):
    dt = np.dtype(_NP[name])
    n = int(np.prod(shape)) if shape else 1
    if dt.kind == "f":
        raw = data.draw(st.lists(st.integers(0, 2 ** (8 * dt.itemsize) - 1), min_size=n,
                                 max_size=n))
        u = {2: np.uint16, 4: np.uint32, 8: np.uint64}[dt.itemsize]
        return np.array(raw, dtype=u).view(dt).reshape(shape)
    info = np.iinfo(dt)
    return np.array(data.draw(st.lists(st.integers(int(info.min), int(info.max)), min_size=n,
                                       max_size=n)), dtype=dt).reshape(shape)


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(sorted(_NP)), st.sampled_from([(), (3,), (2, 3)]), st.booleans(),
       st.data())
def test_clamp_matches_compute_path(name, shape, scalar_bounds, data):
    """clamp in the operands' own dtype (where it is taken) against the kernel's general
    computation (to the compute dtype and back), bit for bit (NaN payloads included), and
    a whole program's run against the same."""
    from stablehlo_ref.interpreter.elementwise import _clamp_native
    et = ELEMENT_TYPES[name]
    bshape = () if scalar_bounds else shape
    lo, x, hi = _values(data, name, bshape), _values(data, name, shape), _values(data, name, bshape)
    with np.errstate(all="ignore"):
        general = from_compute(np.minimum(np.maximum(to_compute(x, et), to_compute(lo, et)),
                                          to_compute(hi, et)), et)
    t = "x".join(map(str, shape))
    tt = f"tensor<{t}x{name}>" if shape else f"tensor<{name}>"
    bt = f"tensor<{t}x{name}>" if shape and not scalar_bounds else f"tensor<{name}>"
    src = f"""func.func @main(%a: {bt}, %b: {tt}, %c: {bt}) -> {tt} {{
  %0 = stablehlo.clamp %a, %b, %c : ({bt}, {tt}, {bt}) -> {tt}
  return %0 : {tt}
}}"""
    got = run(parse(src), lo, x, hi)[0]
    _bits_equal(got, general)
    if _clamp_native(et, lo, x, hi):
        assert name in ("f64", "i8", "i16", "i32", "i64", "ui8", "ui64")


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(sorted(_NP)), st.sampled_from([(), (3,), (2, 3)]), st.booleans(),
       st.data())
def test_select_matches_where(name, shape, scalar_pred, data):
    """select (a rank-0 predicate picks an operand itself) against np.where."""
    a, b = _values(data, name, shape), _values(data, name, shape)
    pshape = () if scalar_pred else shape
    p = np.array(data.draw(st.lists(st.booleans(), min_size=int(np.prod(pshape)),
                                    max_size=int(np.prod(pshape)))), dtype=bool).reshape(pshape)
    t = "x".join(map(str, shape))
    tt = f"tensor<{t}x{name}>" if shape else f"tensor<{name}>"
    pt = f"tensor<{t}xi1>" if pshape else "tensor<i1>"
    src = f"""func.func @main(%p: {pt}, %a: {tt}, %b: {tt}) -> {tt} {{
  %0 = stablehlo.select %p, %a, %b : {pt}, {tt}
  return %0 : {tt}
}}"""
    got = run(parse(src), p, a, b)[0]
    _bits_equal(got, np.where(p, a, b).astype(a.dtype, copy=False))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(1, 5), min_size=1, max_size=3), st.data())
def test_slices_match_numpy(shape, data):
    """slice and dynamic_slice (attributes read without the op cache) against numpy
    indexing, clamped starts included."""
    x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    start = [data.draw(st.integers(0, n)) for n in shape]
    limit = [data.draw(st.integers(s, n)) for s, n in zip(start, shape)]
    strides = [data.draw(st.integers(1, 3)) for _ in shape]
    sizes = [data.draw(st.integers(0, n)) for n in shape]
    starts = [data.draw(st.integers(-3, 8)) for _ in shape]
    t = "x".join(map(str, shape))
    out = [len(range(s, l, k)) for s, l, k in zip(start, limit, strides)]
    ot = "x".join(map(str, out))
    zt = "x".join(map(str, sizes))
    j = lambda v: ", ".join(map(str, v))  # noqa: E731
    idx = ", ".join(f"%s{i}" for i in range(len(shape)))
    params = ", ".join(f"%s{i}: tensor<i64>" for i in range(len(shape)))
    src = f"""func.func @main(%x: tensor<{t}xf32>, {params}) -> (tensor<{ot}xf32>, tensor<{zt}xf32>) {{
  %0 = stablehlo.slice %x [{", ".join(f"{a}:{b}:{c}" for a, b, c in zip(start, limit, strides))}] : (tensor<{t}xf32>) -> tensor<{ot}xf32>
  %1 = stablehlo.dynamic_slice %x, {idx}, sizes = [{j(sizes)}] : (tensor<{t}xf32>, {", ".join(["tensor<i64>"] * len(shape))}) -> tensor<{zt}xf32>
  return %0, %1 : tensor<{ot}xf32>, tensor<{zt}xf32>
}}"""
    got = run(parse(src), x, *[np.int64(s) for s in starts])
    _bits_equal(got[0], x[tuple(slice(a, b, c) for a, b, c in zip(start, limit, strides))])
    cl = [min(max(s, 0), n - k) for s, n, k in zip(starts, shape, sizes)]
    _bits_equal(got[1], x[tuple(slice(s, s + k) for s, k in zip(cl, sizes))])


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(["f32", "f64", "i8", "i32", "i64", "ui8", "ui64", "f16"]),
       st.sampled_from(["stablehlo.add", "stablehlo.multiply", "stablehlo.maximum",
                        "stablehlo.minimum", "stablehlo.and", "stablehlo.or", "stablehlo.xor"]),
       st.sampled_from([((2, 3), (0,)), ((2, 3), (1,)), ((2, 3), (0, 1)), ((4,), (0,)),
                        ((2, 2, 3), (0, 2))]),
       st.data())
def test_reduce_native_matches_conversions(name, prim, case, data):
    """A reduction by a primitive in the stored dtype (f32/f64, 8+-bit integers) against
    the conversions of the general computation (accumulator dtype, compute dtype), bit for
    bit."""
    from stablehlo_ref.interpreter.reduction import _PRIMITIVES, reduce_with_primitive
    from stablehlo_ref.interpreter.numerics import compute_dtype
    et = ELEMENT_TYPES[name]
    if et.is_float and prim in ("stablehlo.and", "stablehlo.or", "stablehlo.xor"):
        return
    shape, axes = case
    x, init = _values(data, name, shape), _values(data, name, ())
    _, fn, _ = _PRIMITIVES[prim]
    with np.errstate(all="ignore"):
        got = reduce_with_primitive(prim, x, axes, init, et)
        if et.is_float:
            acc = np.float64 if name == "f64" else np.float32
            ref = fn(fn.reduce(x.astype(acc), axis=axes), init.astype(acc)).astype(et.dtype)
        else:
            cd = compute_dtype(et)
            ref = from_compute(fn(fn.reduce(x.astype(cd), axis=axes), init.astype(cd)), et)
    _bits_equal(got, ref)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(["f32", "i8", "ui64", "f16"]), st.sampled_from([(3,), (2, 3), (1,)]),
       st.data())
def test_broadcast_scalar_matches_full(name, shape, data):
    """broadcast_in_dim of a rank-0 value (made without the op's plan) against np.full."""
    x = _values(data, name, ())
    t = "x".join(map(str, shape))
    src = f"""func.func @main(%x: tensor<{name}>) -> tensor<{t}x{name}> {{
  %0 = stablehlo.broadcast_in_dim %x, dims = [] : (tensor<{name}>) -> tensor<{t}x{name}>
  return %0 : tensor<{t}x{name}>
}}"""
    got = run(parse(src), x)[0]
    _bits_equal(got, np.full(shape, x, dtype=x.dtype))
    assert got.flags.writeable


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=2), st.data())
def test_pad_matches_reference(shape, data):
    """pad (attributes read without the op cache) against a reference built with numpy."""
    x = np.arange(1, int(np.prod(shape)) + 1, dtype=np.int32).reshape(shape)
    lo = [data.draw(st.integers(-2, 2)) for _ in shape]
    hi = [data.draw(st.integers(-2, 2)) for _ in shape]
    interior = [data.draw(st.integers(0, 2)) for _ in shape]
    # the reference: interior padding, then edges (negative edges crop)
    full = x
    for d, k in enumerate(interior):
        if k:
            n = full.shape[d]
            idx = np.arange(n) * (k + 1)
            shp = list(full.shape)
            shp[d] = (n - 1) * (k + 1) + 1
            z = np.full(shp, -7, dtype=np.int32)
            sl = [slice(None)] * full.ndim
            sl[d] = idx
            z[tuple(sl)] = full
            full = z
    for d in range(len(shape)):
        pads = [(0, 0)] * full.ndim
        pads[d] = (max(lo[d], 0), max(hi[d], 0))
        full = np.pad(full, pads, constant_values=-7)
        sl = [slice(None)] * full.ndim
        sl[d] = slice(max(-lo[d], 0), full.shape[d] - max(-hi[d], 0))
        full = full[tuple(sl)]
    if any(n < 0 for n in full.shape):
        return
    t = "x".join(map(str, shape))
    ot = "x".join(map(str, full.shape))
    j = lambda v: ", ".join(map(str, v))  # noqa: E731
    src = f"""func.func @main(%x: tensor<{t}xi32>, %v: tensor<i32>) -> tensor<{ot}xi32> {{
  %0 = stablehlo.pad %x, %v, low = [{j(lo)}], high = [{j(hi)}], interior = [{j(interior)}] : (tensor<{t}xi32>, tensor<i32>) -> tensor<{ot}xi32>
  return %0 : tensor<{ot}xi32>
}}"""
    got = run(parse(src), x, np.int32(-7))[0]
    _bits_equal(got, full)
