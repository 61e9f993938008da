"""Compiled loop bodies that save a copy or a step: a select of small arrays whose false
operand is a new array nothing else reads puts the true operand into that array
(`plan._selects_in_place`); a reshape that drops the unit dimensions of a `dynamic_slice`
just before it takes the window with integer indices (`plan._Emitter.slice_reshape`); a
dynamic_update_slice in place of an update made by a `broadcast_in_dim` just before it
writes the broadcast's operand into the window (`plan._Emitter.broadcast_update`). Each
gives the bits of the general path (every op through its registered kernel), with the
fallbacks where the values are of another form or the array is held elsewhere."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from stablehlo_ref.interpreter import plan

from loop_helpers import run_both, values

ITERATIONS = 9           # past the compilation and the fused loop's start
TYPES = ["f16", "f32", "f64", "i8", "i32", "ui32", "i64"]


def _ctype(t):
    return "FLOAT" if t.startswith("f") else ("UNSIGNED" if t.startswith("ui") else "SIGNED")


# selects whose false operand is new (a sum, a difference), one read again (%a: by %m), one
# returned by the body (%b), one another in-place select's result (%s4 of %s3), one a loop
# value (%w)
SELECT_LOOP = """func.func @main(%v0: tensor<8x{t}>, %w0: tensor<8x{t}>) -> (tensor<8x{t}>, tensor<8x{t}>, tensor<8x{t}>, tensor<8x{t}>) {{
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %r:5 = stablehlo.while(%i = %c0, %v = %v0, %w = %w0, %b0 = %v0, %z = %w0) : tensor<i32>, tensor<8x{t}>, tensor<8x{t}>, tensor<8x{t}>, tensor<8x{t}>
   cond {{
    %n = stablehlo.constant dense<{n}> : tensor<i32>
    %lt = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  }} do {{
    %one = stablehlo.constant dense<1> : tensor<i32>
    %i2 = stablehlo.add %i, %one : tensor<i32>
    %a = stablehlo.add %v, %w : tensor<8x{t}>
    %p = stablehlo.compare LT, %v, %w, {ctype} : (tensor<8x{t}>, tensor<8x{t}>) -> tensor<8xi1>
    %s1 = stablehlo.select %p, %w, %a : tensor<8xi1>, tensor<8x{t}>
    %m = stablehlo.multiply %a, %v : tensor<8x{t}>
    %q = stablehlo.compare GT, %m, %s1, {ctype} : (tensor<8x{t}>, tensor<8x{t}>) -> tensor<8xi1>
    %b = stablehlo.subtract %v, %w : tensor<8x{t}>
    %s2 = stablehlo.select %q, %v, %b : tensor<8xi1>, tensor<8x{t}>
    %d = stablehlo.multiply %s2, %w : tensor<8x{t}>
    %s3 = stablehlo.select %p, %s1, %d : tensor<8xi1>, tensor<8x{t}>
    %s4 = stablehlo.select %q, %a, %s3 : tensor<8xi1>, tensor<8x{t}>
    %s5 = stablehlo.select %q, %s4, %w : tensor<8xi1>, tensor<8x{t}>
    %pb = stablehlo.compare NE, %p, %q, UNSIGNED : (tensor<8xi1>, tensor<8xi1>) -> tensor<8xi1>
    %pa = stablehlo.and %p, %q : tensor<8xi1>
    %pc = stablehlo.select %pb, %p, %pa : tensor<8xi1>, tensor<8xi1>
    %z2 = stablehlo.select %pc, %s5, %z : tensor<8xi1>, tensor<8x{t}>
    stablehlo.return %i2, %s4, %s2, %b, %z2 : tensor<i32>, tensor<8x{t}>, tensor<8x{t}>, tensor<8x{t}>, tensor<8x{t}>
  }}
  return %r#1, %r#2, %r#3, %r#4 : tensor<8x{t}>, tensor<8x{t}>, tensor<8x{t}>, tensor<8x{t}>
}}"""


def _recording(monkeypatch, name, check):
    """Wrap plan.`name` (a function or an `_Emitter` method) to count results `check` accepts."""
    hits = []
    owner, attr = (plan._Emitter, name[1:]) if name.startswith(".") else (plan, name)
    orig = getattr(owner, attr)

    def wrapped(*a, **k):
        r = orig(*a, **k)
        if check(r):
            hits.append(r)
        return r
    monkeypatch.setattr(owner, attr, wrapped)
    return hits


@pytest.mark.parametrize("t", TYPES)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), n=st.sampled_from([1, 2, ITERATIONS]))
def test_selects_in_place_match_the_general_path(t, data, n):
    v = values(t, (8,), data.draw)
    w = values(t, (8,), data.draw)
    run_both(SELECT_LOOP.format(t=t, n=n, ctype=_ctype(t)), v, w)


def test_only_selects_of_new_unread_arrays_are_made_in_place(monkeypatch):
    hits = _recording(monkeypatch, "_selects_in_place",
                      lambda r: any(len(e) == 7 and e[5] == "putmask_in_place" for e in r))
    t = "i32"
    v = np.arange(8, dtype=np.int32) - 3
    w = np.array([5, -2, 0, 7, 1, 1, -9, 4], np.int32)
    run_both(SELECT_LOOP.format(t=t, n=ITERATIONS, ctype=_ctype(t)), v, w)
    assert hits
    outs = {e[4] for r in hits for e in r if len(e) == 7 and e[5] == "putmask_in_place"}
    # %s2 (false operand %b, returned), %s1 (%a, read by %m), %s5 (%w, a loop value) and
    # %z2 (%z) are not: %s3 (of %d), %s4 (of %s3) and %pc (of %pa) are
    assert len(outs) == 3


def test_held_arrays_are_copied(monkeypatch):
    """Where the reference counts say an array is held elsewhere (here: every count, made
    high), the selects and the updates are made into copies (after the broadcast runs), as
    the general path makes them."""
    monkeypatch.setattr(plan.sys, "getrefcount", lambda x: 99)
    v = np.linspace(-2, 2, 8).astype(np.float32)
    w = np.float32(0.5) - v[::-1]
    run_both(SELECT_LOOP.format(t="f32", n=ITERATIONS, ctype="FLOAT"), v, w)
    xs = (np.arange(60, dtype=np.float32).reshape(5, 3, 4) - 20) / 7
    for off in (-4, 0, 3, 9):
        run_both(_scan("f32"), xs, np.int32(off))


# a scan over the rows of xs: a dynamic_slice of one row (clamped start), reshaped to drop
# its unit dimensions (one of them, or two: {rs}), and the carried value written into ys by
# a broadcast_in_dim of trailing dimensions just before the update (constants between them);
# a scalar into zs likewise; {extra}: more of the body's results
SCAN_LOOP = """func.func @main(%xs: tensor<5x3x4x{t}>, %off: tensor<i32>) -> (tensor<3x4x{t}>, tensor<6x3x4x{t}>, tensor<7x{t}>{extra_t}) {{
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %h0 = stablehlo.constant dense<{zero}> : tensor<3x4x{t}>
  %ys0 = stablehlo.constant dense<{zero}> : tensor<6x3x4x{t}>
  %zs0 = stablehlo.constant dense<{zero}> : tensor<7x{t}>
  %r:5 = stablehlo.while(%i = %c0, %h = %h0, %ys = %ys0, %zs = %zs0, %e = %c0) : tensor<i32>, tensor<3x4x{t}>, tensor<6x3x4x{t}>, tensor<7x{t}>, tensor<i32>
   cond {{
    %n = stablehlo.constant dense<{n}> : tensor<i32>
    %lt = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  }} do {{
    %one = stablehlo.constant dense<1> : tensor<i32>
    %i2 = stablehlo.add %i, %one : tensor<i32>
    %j = stablehlo.add %i, %off : tensor<i32>
    %z = stablehlo.constant dense<0> : tensor<i32>
    %row0 = stablehlo.dynamic_slice %xs, %j, %z, %z, sizes = [1, 3, 4] : (tensor<5x3x4x{t}>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x3x4x{t}>
    %row = stablehlo.reshape %row0 : (tensor<1x3x4x{t}>) -> tensor<3x4x{t}>
    %two = stablehlo.constant dense<2> : tensor<i32>
    %col0 = stablehlo.dynamic_slice %xs, %two, %j, %off, sizes = [1, 2, 1] : (tensor<5x3x4x{t}>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x2x1x{t}>
    %col = stablehlo.reshape %col0 : (tensor<1x2x1x{t}>) -> tensor<2x{t}>
    %h1 = stablehlo.add %h, %row : tensor<3x4x{t}>
    %hc = stablehlo.slice %h1 [0:1, 0:2] : (tensor<3x4x{t}>) -> tensor<1x2x{t}>
    %hr = stablehlo.reshape %hc : (tensor<1x2x{t}>) -> tensor<2x{t}>
    %h2c = stablehlo.add %hr, %col : tensor<2x{t}>
    %h2 = stablehlo.dynamic_update_slice %h1, %hc, %z, %z : (tensor<3x4x{t}>, tensor<1x2x{t}>, tensor<i32>, tensor<i32>) -> tensor<3x4x{t}>
    %k = stablehlo.subtract %j, %one : tensor<i32>
    %b = stablehlo.broadcast_in_dim %h2, dims = [1, 2] : (tensor<3x4x{t}>) -> tensor<1x3x4x{t}>
    %c00 = stablehlo.constant dense<0> : tensor<i32>
    %ys2 = stablehlo.dynamic_update_slice %ys, %b, %k, %c00, %c00 : (tensor<6x3x4x{t}>, tensor<1x3x4x{t}>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<6x3x4x{t}>
    %s0 = stablehlo.slice %h2c [1:2] : (tensor<2x{t}>) -> tensor<1x{t}>
    %s = stablehlo.reshape %s0 : (tensor<1x{t}>) -> tensor<{t}>
    %e0 = stablehlo.dynamic_slice %xs, %j, %one, %k, sizes = [1, 1, 1] : (tensor<5x3x4x{t}>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x1x1x{t}>
    %e1 = stablehlo.reshape %e0 : (tensor<1x1x1x{t}>) -> tensor<{t}>
    %s1 = stablehlo.add %s, %e1 : tensor<{t}>
    %sb = stablehlo.broadcast_in_dim %s1, dims = [] : (tensor<{t}>) -> tensor<1x{t}>
    %zs2 = stablehlo.dynamic_update_slice %zs, %sb, %j : (tensor<7x{t}>, tensor<1x{t}>, tensor<i32>) -> tensor<7x{t}>
    stablehlo.return %i2, %h2, %ys2, %zs2, %j : tensor<i32>, tensor<3x4x{t}>, tensor<6x3x4x{t}>, tensor<7x{t}>, tensor<i32>
  }}
  return %r#1, %r#2, %r#3{extra} : tensor<3x4x{t}>, tensor<6x3x4x{t}>, tensor<7x{t}>{extra_t}
}}"""


def _scan(t, n=ITERATIONS):
    return SCAN_LOOP.format(t=t, n=n, extra="", extra_t="",
                            zero="0.0" if t.startswith("f") else "0")


@pytest.mark.parametrize("t", TYPES)
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), off=st.integers(-3, 6), n=st.sampled_from([1, 3, ITERATIONS]))
def test_slice_reshape_and_broadcast_update_match_the_general_path(t, data, off, n):
    xs = values(t, (5, 3, 4), data.draw)
    run_both(_scan(t, n), xs, np.int32(off))


def test_slice_reshape_and_broadcast_update_are_used(monkeypatch):
    sr = _recording(monkeypatch, ".slice_reshape", lambda r: r is not None)
    bu = _recording(monkeypatch, ".broadcast_update", lambda r: r is not None)
    xs = np.arange(60, dtype=np.float32).reshape(5, 3, 4)
    run_both(_scan("f32"), xs, np.int32(1))
    assert len(sr) >= 3 and len(bu) >= 2


def test_values_read_elsewhere_and_held_arrays_take_the_general_steps():
    """The sliced row also read by another op, and the updated arrays also returned
    unchanged from the body (held: the update is made into a copy, after the broadcast
    runs)."""
    src = _scan("f32")
    src = src.replace("%h1 = stablehlo.add %h, %row : tensor<3x4x{t}>".format(t="f32"),
                      "%h1a = stablehlo.add %h, %row : tensor<3x4xf32>\n"
                      "    %h1 = stablehlo.add %h1a, %row0r : tensor<3x4xf32>\n"
                      "    %row0r = stablehlo.reshape %row0 : (tensor<1x3x4xf32>) -> tensor<3x4xf32>")
    # (%row0r is used before it is defined above: put it first)
    src = src.replace("    %h1 = stablehlo.add %h1a, %row0r : tensor<3x4xf32>\n"
                      "    %row0r = stablehlo.reshape %row0 : (tensor<1x3x4xf32>) -> tensor<3x4xf32>",
                      "    %row0r = stablehlo.reshape %row0 : (tensor<1x3x4xf32>) -> tensor<3x4xf32>\n"
                      "    %h1 = stablehlo.add %h1a, %row0r : tensor<3x4xf32>")
    src = src.replace("-> (tensor<3x4xf32>, tensor<6x3x4xf32>, tensor<7xf32>)",
                      "-> (tensor<3x4xf32>, tensor<6x3x4xf32>, tensor<7xf32>, tensor<6x3x4xf32>)")
    src = src.replace("%r:5 = stablehlo.while(%i = %c0, %h = %h0, %ys = %ys0, %zs = %zs0, %e = %c0) : "
                      "tensor<i32>, tensor<3x4xf32>, tensor<6x3x4xf32>, tensor<7xf32>, tensor<i32>",
                      "%r:6 = stablehlo.while(%i = %c0, %h = %h0, %ys = %ys0, %zs = %zs0, %e = %c0, "
                      "%old = %ys0) : tensor<i32>, tensor<3x4xf32>, tensor<6x3x4xf32>, tensor<7xf32>, "
                      "tensor<i32>, tensor<6x3x4xf32>")
    src = src.replace("stablehlo.return %i2, %h2, %ys2, %zs2, %j : tensor<i32>, tensor<3x4xf32>, "
                      "tensor<6x3x4xf32>, tensor<7xf32>, tensor<i32>",
                      "stablehlo.return %i2, %h2, %ys2, %zs2, %j, %ys : tensor<i32>, tensor<3x4xf32>, "
                      "tensor<6x3x4xf32>, tensor<7xf32>, tensor<i32>, tensor<6x3x4xf32>")
    src = src.replace("return %r#1, %r#2, %r#3 : tensor<3x4xf32>, tensor<6x3x4xf32>, tensor<7xf32>",
                      "return %r#1, %r#2, %r#3, %r#5 : tensor<3x4xf32>, tensor<6x3x4xf32>, "
                      "tensor<7xf32>, tensor<6x3x4xf32>")
    assert "%old" in src and "%r#5" in src and "%row0r" in src
    xs = (np.arange(60, dtype=np.float32).reshape(5, 3, 4) - 20) / 7
    out = run_both(src, xs, np.int32(2))
    assert not np.array_equal(out[1], out[3])       # the old ys differs from the new one
