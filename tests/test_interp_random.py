"""rng_bit_generator (bit-exact with XLA CPU: against jax when it is importable, else against
vectors pinned from XLA CPU) and rng (implementation-defined: deterministic, in range)."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import stablehlo_ref
from stablehlo_ref.errors import InterpreterError


def _bitgen_program(alg, n_state, et, shape, constant_state=None):
    rt = "tensor<" + "".join(f"{d}x" for d in shape) + et + ">"
    stt = f"tensor<{n_state}xui64>"
    if constant_state is None:
        head = f"func.func @main(%s: {stt}) -> ({stt}, {rt}) {{\n"
    else:
        head = (f"func.func @main() -> ({stt}, {rt}) {{\n"
                f"  %s = stablehlo.constant dense<{list(constant_state)}> : {stt}\n")
    return stablehlo_ref.parse(
        head
        + f"  %o, %b = stablehlo.rng_bit_generator %s, algorithm = {alg} : ({stt}) -> ({stt}, {rt})\n"
        + f"  return %o, %b : {stt}, {rt}\n}}")


def _bitgen(alg, state, et, shape):
    state = np.array(state, dtype=np.uint64)
    return stablehlo_ref.run(_bitgen_program(alg, len(state), et, shape), state)


def _bits(x):
    x = np.asarray(x).reshape(-1)
    return x.view(np.dtype(f"u{x.dtype.itemsize}")).tolist()


# (algorithm, state, element type, shape) -> (output state, output bits), from XLA CPU
PINNED = [
    # the spec's example
    ("THREE_FRY", [1, 2], "ui64", (2, 2), [1, 6],
     [9236835810183407956, 16087790271692313299, 18212823393184779219, 2658481902456610144]),
    ("THREE_FRY", [0x0123456789ABCDEF, 0x1111], "ui32", (5,), [0x0123456789ABCDEF, 0x1114],
     [0x3D344ACA, 0x06C746D0, 0x18C879B0, 0xB782232B, 0xD2812150]),
    ("THREE_FRY", [0x0123456789ABCDEF, 0x1111], "ui64", (5,), [0x0123456789ABCDEF, 0x1116],
     [0x06C746D03D344ACA, 0xB782232B18C879B0, 0x67823447D2812150, 0xA2A651038869C5DC,
      0xAF3EFA4A8E4288AE]),
    # 32-bit values pair up along the dimension that needs least padding
    ("THREE_FRY", [0, 0], "ui32", (3, 5), [0, 9],
     [1797259609, 2579123966, 1351547692, 3235790642, 1688610540, 3098264785, 87550854,
      2892874427, 2813178819, 1447157908, 2772180201, 2882477498, 645374554, 1993301756,
      755508351]),
    ("THREE_FRY", [0, 0], "ui32", (3, 3), [0, 6],
     [1797259609, 1351547692, 1688610540, 2579123966, 3235790642, 4229293427, 3098264785,
      2892874427, 1447157908]),
    ("THREE_FRY", [0x0123456789ABCDEF, 0x1111], "ui8", (2, 3), [0x0123456789ABCDEF, 4372],
     [202, 176, 80, 208, 43, 71]),
    ("PHILOX", [0x0123456789ABCDEF, 0x1111], "ui32", (5,), [0x0123456789ABCDEF, 0x1113],
     [0xD0E6F197, 0xC3C77EB1, 0xCDB9471B, 0x83989C2A, 0xE20EE230]),
    ("PHILOX", [0x0123456789ABCDEF, 0x1111], "ui64", (3,), [0x0123456789ABCDEF, 4371],
     [14107383659940475287, 9482500723082610459, 17609826312116953648]),
    # a 3-word state: the 128-bit counter carries into its high word
    ("PHILOX", [5, 2**64 - 1, 7], "ui16", (2, 3), [5, 1, 8],
     [37919, 20887, 849, 15426, 15911, 11399]),
    # DEFAULT is PHILOX, as on XLA CPU; float outputs are the same bits
    ("DEFAULT", [3, 4], "f32", (5,), [3, 6],
     [3144060952, 1693593194, 2328100114, 3250740911, 514065308]),
    ("DEFAULT", [0x0123456789ABCDEF, 0x1111], "ui32", (5,), [0x0123456789ABCDEF, 0x1113],
     [0xD0E6F197, 0xC3C77EB1, 0xCDB9471B, 0x83989C2A, 0xE20EE230]),
]


@pytest.mark.parametrize("alg,state,et,shape,new_state,bits", PINNED)
def test_rng_bit_generator_pinned(alg, state, et, shape, new_state, bits):
    s, b = _bitgen(alg, state, et, shape)
    assert s.dtype == np.uint64 and s.tolist() == new_state
    assert b.shape == shape
    assert _bits(b) == bits


def test_rng_bit_generator_constant_state_and_types():
    m = _bitgen_program("THREE_FRY", 2, "i64", (2, 2), constant_state=[1, 2])
    s, b = stablehlo_ref.run(m)
    assert b.dtype == np.int64 and _bits(b) == PINNED[0][5]
    _, b = _bitgen("THREE_FRY", [1, 2], "bf16", (4,))
    assert b.dtype.itemsize == 2 and b.shape == (4,)
    _, b = _bitgen("PHILOX", [1, 2], "f64", ())
    assert b.shape == () and b.dtype == np.float64


def test_rng_bit_generator_state_size_checked():
    with pytest.raises(InterpreterError, match="state of 2"):
        _bitgen("THREE_FRY", [1, 2, 3], "ui32", (2,))




def _jax():
    try:
        import jax as j
        return j
    except Exception:  # noqa: BLE001
        return None


_SHAPES = st.lists(st.integers(1, 7), min_size=0, max_size=3).map(tuple)


@settings(max_examples=40, deadline=None)
@given(alg=st.sampled_from(["THREE_FRY", "PHILOX", "DEFAULT"]),
       et=st.sampled_from(["ui8", "ui16", "ui32", "ui64"]), shape=_SHAPES,
       key=st.integers(0, 2**64 - 1), ctr=st.integers(0, 2**64 - 1))
def test_rng_bit_generator_matches_jax(alg, et, shape, key, ctr):
    j = _jax()
    if j is None:
        pytest.skip("jax not importable")
    from jax import lax
    algs = {"THREE_FRY": lax.RandomAlgorithm.RNG_THREE_FRY, "PHILOX": lax.RandomAlgorithm.RNG_PHILOX,
            "DEFAULT": lax.RandomAlgorithm.RNG_DEFAULT}
    dt = {"ui8": np.uint8, "ui16": np.uint16, "ui32": np.uint32, "ui64": np.uint64}[et]
    # 64-bit state needs x64; switched on for this call only, so that tests sharing the
    # process (which build float32 programs) keep jax's default
    prev = bool(j.config.jax_enable_x64)
    j.config.update("jax_enable_x64", True)
    try:
        with j.default_device(j.devices("cpu")[0]):
            js, jb = lax.rng_bit_generator(j.numpy.array([key, ctr], dtype=np.uint64), shape, dt,
                                           algorithm=algs[alg])
            js, jb = np.asarray(js), np.asarray(jb)
    finally:
        j.config.update("jax_enable_x64", prev)
    s, b = _bitgen(alg, [key, ctr], et, shape)
    assert np.array_equal(np.asarray(js), s)
    assert b.dtype == np.asarray(jb).dtype and np.array_equal(np.asarray(jb), b)


# ------------------------------------------------------------------ rng

def _rng_program(dist, et, shape, a, b, ops=1):
    rt = "tensor<" + "".join(f"{d}x" for d in shape) + et + ">"
    lines = [f"func.func @main() -> ({', '.join([rt] * ops)}) {{",
             f"  %a = stablehlo.constant dense<{a}> : tensor<{et}>",
             f"  %b = stablehlo.constant dense<{b}> : tensor<{et}>",
             f"  %s = stablehlo.constant dense<{list(shape)}> : tensor<{len(shape)}xi64>"]
    for i in range(ops):
        lines.append(f"  %r{i} = stablehlo.rng %a, %b, %s, distribution = {dist} : "
                     f"(tensor<{et}>, tensor<{et}>, tensor<{len(shape)}xi64>) -> {rt}")
    lines.append(f"  return {', '.join(f'%r{i}' for i in range(ops))} : {', '.join([rt] * ops)}\n}}")
    return stablehlo_ref.parse("\n".join(lines))


def test_rng_uniform_float_range_and_determinism():
    m = _rng_program("UNIFORM", "f32", (1000,), "-2.0", "3.0", ops=2)
    x, y = stablehlo_ref.run(m)
    x2, _ = stablehlo_ref.run(_rng_program("UNIFORM", "f32", (1000,), "-2.0", "3.0", ops=2))
    assert x.dtype == np.float32 and x.shape == (1000,)
    assert np.all(x >= -2) and np.all(x < 3)
    assert np.array_equal(x, x2)          # deterministic for the same program
    assert not np.array_equal(x, y)       # each op draws its own numbers
    assert abs(float(x.mean()) - 0.5) < 0.3


def test_rng_uniform_narrow_float_stays_half_open():
    (x,) = stablehlo_ref.run(_rng_program("UNIFORM", "bf16", (4000,), "0.0", "1.0"))
    xf = x.astype(np.float64)
    assert np.all(xf >= 0) and np.all(xf < 1)


@pytest.mark.parametrize("et,a,b", [("i32", -5, 5), ("ui8", 250, 255), ("i64", -2**62, 2**62),
                                    ("ui64", 0, 2**64 - 1), ("i4", -8, 7), ("i1", "false", "true")])
def test_rng_uniform_integers(et, a, b):
    (x,) = stablehlo_ref.run(_rng_program("UNIFORM", et, (500,), a, b))
    lo = {"false": 0, "true": 1}.get(a, a)
    hi = {"false": 0, "true": 1}.get(b, b)
    xi = x.astype(np.int64) if et != "ui64" else x
    assert xi.min() >= lo and (xi.astype(object).max() < hi)
    if hi - lo > 1:
        assert len(np.unique(xi)) > 1


def test_rng_normal_moments_and_shape():
    (x,) = stablehlo_ref.run(_rng_program("NORMAL", "f64", (100, 100), "1.5", "2.0"))
    assert x.shape == (100, 100)
    assert abs(x.mean() - 1.5) < 0.1 and abs(x.std() - 2.0) < 0.1


def test_rng_normal_needs_float():
    with pytest.raises(InterpreterError, match="NORMAL"):
        stablehlo_ref.run(_rng_program("NORMAL", "i32", (3,), 0, 1))


def test_rng_fresh_numbers_per_execution():
    m = stablehlo_ref.parse("""
func.func @main() -> tensor<2x4xf32> {
  %a = stablehlo.constant dense<0.0> : tensor<f32>
  %b = stablehlo.constant dense<1.0> : tensor<f32>
  %s = stablehlo.constant dense<[4]> : tensor<1xi64>
  %r0 = stablehlo.rng %a, %b, %s, distribution = UNIFORM : (tensor<f32>, tensor<f32>, tensor<1xi64>) -> tensor<4xf32>
  %r1 = func.call @draw(%a, %b, %s) : (tensor<f32>, tensor<f32>, tensor<1xi64>) -> tensor<4xf32>
  %r2 = func.call @draw(%a, %b, %s) : (tensor<f32>, tensor<f32>, tensor<1xi64>) -> tensor<4xf32>
  %x = stablehlo.reshape %r1 : (tensor<4xf32>) -> tensor<1x4xf32>
  %y = stablehlo.reshape %r2 : (tensor<4xf32>) -> tensor<1x4xf32>
  %c = stablehlo.concatenate %x, %y, dim = 0 : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<2x4xf32>
  return %c : tensor<2x4xf32>
}
func.func private @draw(%a: tensor<f32>, %b: tensor<f32>, %s: tensor<1xi64>) -> tensor<4xf32> {
  %r = stablehlo.rng %a, %b, %s, distribution = UNIFORM : (tensor<f32>, tensor<f32>, tensor<1xi64>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}""")
    (c,) = stablehlo_ref.run(m)
    assert not np.array_equal(c[0], c[1])
    (c2,) = stablehlo_ref.run(m)
    assert np.array_equal(c, c2)
