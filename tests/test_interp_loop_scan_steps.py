"""The steps of array loops (a segment sum of a buffer updated in place, a recurrent scan
of small dots) in compiled loop bodies: a scatter into a known input called without an
argument list per call (`plan._bound_runner`), an update in place whose operand is held by
nothing else skipping the dead-slot count (`plan._update_in_place_runner`), the scatter by
`ufunc.at` with its kept index array (`indexing.scatter_at_kernel`), the small dots
(`linalg._dot_static_2d`) and the unary float kernels (`elementwise._unary_float_specializer`)
with astype's positional forms. Each gives the bits of the general path (every op through
its registered kernel), with the copies where the updated array is held elsewhere."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from stablehlo_ref.interpreter import plan

from loop_helpers import run_both, values

ITERATIONS = 9           # past the compilation and the fused loop's start


def _zero(t):
    return "0.0" if t.startswith("f") else "0"


# row = data[:4] * data[:4]; buf = dynamic_update_slice(buf, row, 3 * i); sums += the
# segment sum (a scatter-add into known zeros) of buf by seg; with `held`, the previous
# buffer is a loop value too (the update is made in a copy)
SEGMENT_LOOP = """func.func @main(%d0: tensor<16x{t}>, %seg0: tensor<16xi32>, %b0: tensor<16x{t}>) -> (tensor<16x{t}>, tensor<4x{t}>, tensor<16x{t}>) {{
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %z = stablehlo.constant dense<{zero}> : tensor<4x{t}>
  %r:6 = stablehlo.while(%i = %c0, %buf = %b0, %sums = %z, %d = %d0, %seg = %seg0, %prev = %b0) : tensor<i32>, tensor<16x{t}>, tensor<4x{t}>, tensor<16x{t}>, tensor<16xi32>, tensor<16x{t}>
   cond {{
    %n = stablehlo.constant dense<{n}> : tensor<i32>
    %lt = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  }} do {{
    %one = stablehlo.constant dense<1> : tensor<i32>
    %i2 = stablehlo.add %i, %one : tensor<i32>
    %x = stablehlo.slice %d [0:4] : (tensor<16x{t}>) -> tensor<4x{t}>
    %row = stablehlo.multiply %x, %x : tensor<4x{t}>
    %three = stablehlo.constant dense<3> : tensor<i32>
    %at = stablehlo.multiply %i, %three : tensor<i32>
    %buf2 = stablehlo.dynamic_update_slice %buf, %row, %at : (tensor<16x{t}>, tensor<4x{t}>, tensor<i32>) -> tensor<16x{t}>
    %zz = stablehlo.constant dense<{zero}> : tensor<4x{t}>
    %ix = stablehlo.broadcast_in_dim %seg, dims = [0] : (tensor<16xi32>) -> tensor<16x1xi32>
    %s = "stablehlo.scatter"(%zz, %ix, %buf2) ({{
    ^bb0(%a: tensor<{t}>, %c: tensor<{t}>):
      %t = stablehlo.add %a, %c : tensor<{t}>
      stablehlo.return %t : tensor<{t}>
    }}) {{scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}} : (tensor<4x{t}>, tensor<16x1xi32>, tensor<16x{t}>) -> tensor<4x{t}>
    %sums2 = stablehlo.add %sums, %s : tensor<4x{t}>
    stablehlo.return %i2, %buf2, %sums2, %d, %seg, {prev} : tensor<i32>, tensor<16x{t}>, tensor<4x{t}>, tensor<16x{t}>, tensor<16xi32>, tensor<16x{t}>
  }}
  return %r#1, %r#2, %r#5 : tensor<16x{t}>, tensor<4x{t}>, tensor<16x{t}>
}}"""


@pytest.mark.parametrize("t", ["f32", "f16", "f64", "i32"])
@pytest.mark.parametrize("held", [False, True])
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), n=st.sampled_from([1, 2, ITERATIONS]))
def test_segment_sum_loop_matches_the_general_path(t, held, data, n):
    src = SEGMENT_LOOP.format(t=t, n=n, zero=_zero(t), prev="%buf" if held else "%prev")
    d = values(t, (16,), data.draw)
    b = values(t, (16,), data.draw)
    # segment ids, some out of bounds (skipped by the scatter)
    seg = np.array(data.draw(st.lists(st.integers(-2, 5), min_size=16, max_size=16)), np.int32)
    with np.errstate(all="ignore"):
        run_both(src, d, seg, b)


def test_a_scatter_into_a_known_input_is_bound_without_an_argument_list(monkeypatch):
    made = []
    orig = plan._bound_runner

    def recording(fn, op, ins, out, kn, fast):
        r = orig(fn, op, ins, out, kn, fast)
        if op.name == "stablehlo.scatter":
            made.append(r.__code__.co_freevars)
        return r
    monkeypatch.setattr(plan, "_bound_runner", recording)
    rng = np.random.default_rng(5)
    d = rng.standard_normal(16).astype(np.float32)
    seg = rng.integers(-1, 5, 16).astype(np.int32)
    run_both(SEGMENT_LOOP.format(t="f32", n=ITERATIONS, zero="0.0", prev="%prev"), d, seg, d)
    assert made and all("c0" in names and "template" not in names for names in made)


# h = f(h @ w + x_i @ u) with f tanh or sine, sum(h) stacked; a batch of rows (`rows` > 0:
# matrix products) or one vector (rows == 0: vector-matrix products)
SCAN_LOOP = """func.func @main(%xs0: tensor<6x{hx}x{t}>, %w0: tensor<8x8x{t}>, %u0: tensor<8x8x{t}>, %h0: tensor<{hx}x{t}>) -> (tensor<{hx}x{t}>, tensor<6x{t}>) {{
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %zs = stablehlo.constant dense<0.0> : tensor<6x{t}>
  %r:6 = stablehlo.while(%i = %c0, %h = %h0, %out = %zs, %xs = %xs0, %w = %w0, %u = %u0) : tensor<i32>, tensor<{hx}x{t}>, tensor<6x{t}>, tensor<6x{hx}x{t}>, tensor<8x8x{t}>, tensor<8x8x{t}>
   cond {{
    %n = stablehlo.constant dense<{n}> : tensor<i32>
    %lt = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  }} do {{
    %z0 = stablehlo.constant dense<0> : tensor<i32>
    %xr = stablehlo.dynamic_slice %xs, %i, {zeros}, sizes = [1, {sizes}] : (tensor<6x{hx}x{t}>, tensor<i32>, {ztypes}) -> tensor<1x{hx}x{t}>
    %x = stablehlo.reshape %xr : (tensor<1x{hx}x{t}>) -> tensor<{hx}x{t}>
    %a = stablehlo.dot_general %h, %w, contracting_dims = [{c}] x [0] : (tensor<{hx}x{t}>, tensor<8x8x{t}>) -> tensor<{hx}x{t}>
    %b = stablehlo.dot_general %x, %u, contracting_dims = [{c}] x [1] : (tensor<{hx}x{t}>, tensor<8x8x{t}>) -> tensor<{hx}x{t}>
    %s = stablehlo.add %a, %b : tensor<{hx}x{t}>
    %h2 = {fn} %s : tensor<{hx}x{t}>
    %zero = stablehlo.constant dense<0.0> : tensor<{t}>
    %q = stablehlo.reduce(%h2 init: %zero) applies stablehlo.add across dimensions = [{dims}] : (tensor<{hx}x{t}>, tensor<{t}>) -> tensor<{t}>
    %qb = stablehlo.broadcast_in_dim %q, dims = [] : (tensor<{t}>) -> tensor<1x{t}>
    %out2 = stablehlo.dynamic_update_slice %out, %qb, %i : (tensor<6x{t}>, tensor<1x{t}>, tensor<i32>) -> tensor<6x{t}>
    %one = stablehlo.constant dense<1> : tensor<i32>
    %i2 = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %i2, %h2, %out2, %xs, %w, %u : tensor<i32>, tensor<{hx}x{t}>, tensor<6x{t}>, tensor<6x{hx}x{t}>, tensor<8x8x{t}>, tensor<8x8x{t}>
  }}
  return %r#1, %r#2 : tensor<{hx}x{t}>, tensor<6x{t}>
}}"""


def _scan_src(t, n, rows, fn):
    if rows:
        return SCAN_LOOP.format(t=t, n=n, fn=fn, hx=f"{rows}x8", zeros="%z0, %z0",
                                sizes=f"{rows}, 8", ztypes="tensor<i32>, tensor<i32>", c=1,
                                dims="0, 1")
    return SCAN_LOOP.format(t=t, n=n, fn=fn, hx="8", zeros="%z0", sizes="8",
                            ztypes="tensor<i32>", c=0, dims="0")


@pytest.mark.parametrize("t", ["f32", "f64", "f16"])
@pytest.mark.parametrize("rows", [0, 3])
@pytest.mark.parametrize("fn", ["stablehlo.tanh", "stablehlo.sine"])
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), n=st.sampled_from([1, ITERATIONS]))
def test_scan_loop_matches_the_general_path(t, rows, fn, data, n):
    hx = (rows, 8) if rows else (8,)

    def some(shape):
        # raw bits (NaN payloads, infinities, ...) or ordinary numbers (finite sums)
        if data.draw(st.booleans()):
            return values(t, shape, data.draw)
        k = int(np.prod(shape))
        v = data.draw(st.lists(st.integers(-40, 40), min_size=k, max_size=k))
        return (np.array(v, dtype=np.float64).reshape(shape) / 16).astype(dt)
    dt = values(t, (1,), data.draw).dtype
    xs = some((6,) + hx)
    w = (np.arange(64).reshape(8, 8) % 7 - 3).astype(dt) / 4
    u = some((8, 8))
    h = some(hx)
    with np.errstate(all="ignore"):
        run_both(_scan_src(t, n, rows, fn), xs, w, u, h)
