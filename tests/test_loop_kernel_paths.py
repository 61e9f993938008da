"""Kernel paths that loops take: a scatter writing one window of its update over its input
(`x.at[i].set(row)`, the `window_replace_form` kernel) gives what the general scatter kernel
gives, for windows inside the input, wholly outside it in a dimension (nothing written) and
overlapping it in part (the elements inside written); and the paths for two numpy scalars
(a loop over scalars) of power, atan2, remainder, maximum and minimum (also 0-d arrays),
and float divide of arrays and scalars, give the general kernel's bits, NaN payloads
included."""
import itertools

import numpy as np
from hypothesis import given, settings, strategies as st

import stablehlo_ref as shlo
from stablehlo_ref.interpreter import indexing
from stablehlo_ref.interpreter.registry import KERNELS, SPECIALIZERS
from stablehlo_ref.text import parse


def _ty(shape, et):
    return "tensor<" + "".join(f"{d}x" for d in shape) + et + ">"


def _scatter_src(xs, ids, us, uwd, iwd, s2o, ivd, et="f32"):
    tx, ti, tu = _ty(xs, et), _ty(ids, "i32"), _ty(us, et)
    return f"""func.func @main(%x: {tx}, %i: {ti}, %u: {tu}) -> {tx} {{
  %0 = "stablehlo.scatter"(%x, %i, %u) <{{scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = {list(uwd)}, inserted_window_dims = {list(iwd)}, scatter_dims_to_operand_dims = {list(s2o)}, index_vector_dim = {ivd}>}}> ({{
  ^bb0(%a: tensor<{et}>, %b: tensor<{et}>):
    stablehlo.return %b : tensor<{et}>
  }}) : ({tx}, {ti}, {tu}) -> {tx}
  return %0 : {tx}
}}"""


@st.composite
def window_scatters(draw):
    rank = draw(st.integers(1, 3))
    xs = tuple(draw(st.lists(st.integers(1, 5), min_size=rank, max_size=rank)))
    k = draw(st.integers(1, rank))
    s2o = draw(st.permutations(range(rank)))[:k]
    inserted = tuple(sorted(d for d in range(rank) if draw(st.booleans())))
    window = [1 if d in inserted else draw(st.integers(1, xs[d])) for d in range(rank)]
    # the index array: (k,) with index_vector_dim 0, (1, k) / (k, 1) with one scatter dim,
    # or, for one component, (1,) with an implicit index vector dimension
    layout = draw(st.sampled_from(["flat", "row", "col"] + (["implicit"] if k == 1 else [])))
    ids, ivd, ns = {"flat": ((k,), 0, 0), "row": ((1, k), 1, 1), "col": ((k, 1), 0, 1),
                    "implicit": ((1,), 1, 1)}[layout]
    wins = [window[d] for d in range(rank) if d not in inserted]
    scatter_first = draw(st.booleans())
    us = tuple([1] * ns + wins) if scatter_first else tuple(wins + [1] * ns)
    uwd = tuple(range(ns, ns + len(wins))) if scatter_first else tuple(range(len(wins)))
    starts = [draw(st.integers(-3, xs[d] + 1)) for d in s2o]
    return xs, ids, us, uwd, inserted, tuple(s2o), ivd, starts


@settings(max_examples=300, deadline=None)
@given(window_scatters(), st.integers(0, 2 ** 32 - 1))
def test_window_replace_scatter_matches_the_general_kernel(case, seed):
    xs, ids, us, uwd, iwd, s2o, ivd, starts = case
    rng = np.random.default_rng(seed)
    module = parse(_scatter_src(xs, ids, us, uwd, iwd, s2o, ivd))
    op = module.op.regions[0].blocks[0].operations[0].regions[0].blocks[0].operations[0]
    form = indexing.window_replace_form(op)
    assert form is not None
    fast = indexing.window_replace_kernel(form)
    x = rng.standard_normal(xs).astype(np.float32)
    u = rng.standard_normal(us).astype(np.float32)
    idx = np.array(starts, dtype=np.int32).reshape(ids)
    keep = x.copy()
    got, = fast(None, op, x, idx, u)
    want, = KERNELS["stablehlo.scatter"](None, op, x, idx, u)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes()
    assert x.tobytes() == keep.tobytes()          # the input is left as it was
    # and through a whole run
    out, = shlo.run(module, x, idx, u)
    assert out.tobytes() == want.tobytes()


def test_window_replace_form_is_only_the_replace_of_one_window():
    row = _scatter_src((7, 2), (1,), (2,), (0,), (0,), (0,), 0)
    op = parse(row).op.regions[0].blocks[0].operations[0].regions[0].blocks[0].operations[0]
    assert indexing.window_replace_form(op) is not None
    # two index vectors: not one window
    two = _scatter_src((7, 2), (2, 1), (2, 2), (1,), (0,), (0,), 1)
    op = parse(two).op.regions[0].blocks[0].operations[0].regions[0].blocks[0].operations[0]
    assert indexing.window_replace_form(op) is None
    # an update body that adds
    add = row.replace("stablehlo.return %b", "%s = stablehlo.add %a, %b : tensor<f32>\n    stablehlo.return %s")
    op = parse(add).op.regions[0].blocks[0].operations[0].regions[0].blocks[0].operations[0]
    assert indexing.window_replace_form(op) is None


_SPECIALS = [0.0, -0.0, 1.0, -1.0, 2.5, -2.5, 0.5, np.inf, -np.inf, np.nan, 1e-30, 3e38, -7.0,
             1e-45, 65504.0, 1.0000001]


def _binary_op(name, t):
    m = parse(f"""func.func @main(%a: tensor<{t}>, %b: tensor<{t}>) -> tensor<{t}> {{
  %0 = stablehlo.{name} %a, %b : tensor<{t}>
  return %0 : tensor<{t}>
}}""")
    return m.op.regions[0].blocks[0].operations[0].regions[0].blocks[0].operations[0]


def _check_scalar_binary(name, t, pairs):
    dt = {"f32": np.float32, "f64": np.float64}[t]
    op = _binary_op(name, t)
    fast = SPECIALIZERS[f"stablehlo.{name}"](op)
    general = KERNELS[f"stablehlo.{name}"]
    with np.errstate(all="ignore"):
        for a, b in pairs:
            got = fast(None, op, dt(a), dt(b))
            want = general(None, op, np.array(a, dt), np.array(b, dt))
            assert type(got) is dt
            assert np.asarray(got).tobytes() == np.asarray(want).tobytes(), (name, t, a, b)


def test_binary_float_scalars_match_the_general_kernel_on_special_values():
    for name, t in itertools.product(("power", "atan2", "remainder"), ("f32", "f64")):
        _check_scalar_binary(name, t, itertools.product(_SPECIALS, _SPECIALS))


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(["power", "atan2", "remainder"]), st.sampled_from(["f32", "f64"]),
       st.floats(width=32), st.floats(width=32))
def test_binary_float_scalars_match_the_general_kernel(name, t, a, b):
    _check_scalar_binary(name, t, [(a, b)])


def _nan(dt, bits):
    u = np.uint32 if dt == np.float32 else np.uint64
    return np.frombuffer(np.array([bits], dtype=u).tobytes(), dt)[0]


def test_max_min_of_scalars_match_the_general_kernel():
    floats = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, 1e-45, -3e38, 2.5]
    cases = {
        "f32": [np.float32(v) for v in floats] + [_nan(np.float32, b) for b in (
            0x7FC00001, 0xFFC00000, 0x7F800001, 0xFF812345)],     # quiet and signaling
        "f64": [np.float64(v) for v in floats] + [_nan(np.float64, b) for b in (
            0x7FF8000000000001, 0xFFF8000000000000, 0x7FF0000000000001)],
        "i8": [np.int8(v) for v in (-128, -1, 0, 1, 127)],
        "i32": [np.int32(v) for v in (-2 ** 31, -1, 0, 7, 2 ** 31 - 1)],
        "ui32": [np.uint32(v) for v in (0, 1, 2 ** 31, 2 ** 32 - 1)],
        "i64": [np.int64(v) for v in (-2 ** 63, -1, 0, 2 ** 63 - 1)],
    }
    for t, vals in cases.items():
        for name in ("maximum", "minimum"):
            op = _binary_op(name, t)
            fast = SPECIALIZERS[f"stablehlo.{name}"](op)
            general = KERNELS[f"stablehlo.{name}"]
            with np.errstate(all="ignore"):
                for a, b in itertools.product(vals, vals):
                    want = general(None, op, np.array(a), np.array(b))
                    # numpy scalars, 0-d arrays, or one of each (a dynamic_slice's element)
                    for x, y in ((a, b), (np.array(a), b), (a, np.array(b)),
                                 (np.array(a), np.array(b))):
                        got = fast(None, op, x, y)
                        assert type(got) is type(a), (t, name)
                        assert np.asarray(got).tobytes() == np.asarray(want).tobytes(), \
                            (t, name, a, b)


def test_float_divide_matches_the_general_kernel():
    rng = np.random.default_rng(5)
    for t, dt in (("f16", np.float16), ("f32", np.float32), ("f64", np.float64)):
        op = _binary_op("divide", t)
        fast = SPECIALIZERS["stablehlo.divide"](op)
        general = KERNELS["stablehlo.divide"]
        specials = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 3e-8, 6e4], dt)
        a = np.concatenate([np.repeat(specials, len(specials)), rng.standard_normal(50).astype(dt)])
        b = np.concatenate([np.tile(specials, len(specials)), rng.standard_normal(50).astype(dt)])
        with np.errstate(all="ignore"):
            for x, y in ((a, b), (a.reshape(-1, 1), b.reshape(-1, 1)), (a[3], b[7]),
                         (np.array(a[5]), b[2])):
                got = fast(None, op, x, y)
                want = general(None, op, x, y)
                assert type(got) is type(want) and np.asarray(got).dtype == dt
                assert np.asarray(got).tobytes() == np.asarray(want).tobytes(), t
