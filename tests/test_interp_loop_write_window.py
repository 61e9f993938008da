"""The shorter index a loop body's dynamic_update_slice in place writes through
(`plan._write_window_maker`: leading unit dimensions indexed by integers, trailing whole
dimensions left out) writes the same elements with the same values as the window the
general path takes (`plan._window`), for values of the window's shape and of the shapes a
`broadcast_in_dim` just before would take (trailing dimensions of it, rank 0 too)."""
import numpy as np
from hypothesis import given, settings, strategies as st

from stablehlo_ref.interpreter import plan

from loop_helpers import run_both


@st.composite
def _cases(draw):
    rank = draw(st.integers(1, 4))
    xshape = tuple(draw(st.integers(1, 5)) for _ in range(rank))
    sizes = tuple(draw(st.sampled_from([1, n, draw(st.integers(1, n))])) for n in xshape)
    bounds = tuple(zip(sizes, [n - k for n, k in zip(xshape, sizes)]))
    slots, known, frame = [], {}, []
    for k in range(rank):
        start = draw(st.integers(-2, xshape[k] + 2))
        slots.append(k)
        frame.append(np.int32(start))
        if draw(st.booleans()):
            known[k] = np.int32(start)
    starts = plan._start_getters(slots, known, bounds)
    # the value: the window's shape, or a trailing part of it (numpy broadcasts it)
    cut = draw(st.integers(0, rank))
    vshape = sizes[cut:]
    if vshape and draw(st.booleans()):
        vshape = tuple(1 if draw(st.booleans()) else n for n in vshape)
    return xshape, starts, frame, vshape


@settings(max_examples=400, deadline=None)
@given(case=_cases(), dt=st.sampled_from([np.float32, np.int8, np.float64]))
def test_write_window_writes_the_general_windows_elements(case, dt):
    xshape, starts, frame, vshape = case
    short = plan._write_window_maker(starts, xshape, (len(vshape),))
    if short is None:
        return
    x = np.arange(np.prod(xshape), dtype=dt).reshape(xshape)
    v = (np.arange(np.prod(vshape), dtype=dt) + 100).reshape(vshape)
    if not vshape:
        v = v.reshape(())[()]            # (a numpy scalar, as a fed broadcast's operand is)
    a, b = x.copy(), x.copy()
    a[plan._window(frame, starts)] = v
    b[short(frame)] = v
    assert a.tobytes() == b.tobytes()
    # the window read back through the short index holds the same elements
    assert np.array_equal(a[plan._window(frame, starts)].reshape(-1), np.ravel(b[short(frame)]))


# a scan that writes a row, a scalar and a column block through updates in place (leading unit
# dims, a unit dim in the middle, trailing whole dims, a rank-0 target)
LOOP = """func.func @main(%x0: tensor<6x3x4xf32>, %v0: tensor<5xf32>, %m0: tensor<4x5x2xf32>, %o: tensor<i32>) -> (tensor<6x3x4xf32>, tensor<5xf32>, tensor<4x5x2xf32>, tensor<f32>) {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %s0 = stablehlo.constant dense<0.0> : tensor<f32>
  %r:5 = stablehlo.while(%i = %c0, %x = %x0, %v = %v0, %m = %m0, %s = %s0) : tensor<i32>, tensor<6x3x4xf32>, tensor<5xf32>, tensor<4x5x2xf32>, tensor<f32>
   cond {
    %n = stablehlo.constant dense<9> : tensor<i32>
    %lt = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %i2 = stablehlo.add %i, %one : tensor<i32>
    %j = stablehlo.add %i, %o : tensor<i32>
    %z = stablehlo.constant dense<0> : tensor<i32>
    %fi = stablehlo.convert %i : (tensor<i32>) -> tensor<f32>
    %row = stablehlo.broadcast_in_dim %fi, dims = [] : (tensor<f32>) -> tensor<1x3x4xf32>
    %x2 = stablehlo.dynamic_update_slice %x, %row, %j, %z, %z : (tensor<6x3x4xf32>, tensor<1x3x4xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<6x3x4xf32>
    %e = stablehlo.broadcast_in_dim %fi, dims = [] : (tensor<f32>) -> tensor<1xf32>
    %v2 = stablehlo.dynamic_update_slice %v, %e, %j : (tensor<5xf32>, tensor<1xf32>, tensor<i32>) -> tensor<5xf32>
    %blk0 = stablehlo.dynamic_slice %x2, %j, %z, %z, sizes = [1, 3, 2] : (tensor<6x3x4xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x3x2xf32>
    %blk = stablehlo.slice %blk0 [0:1, 0:1, 0:2] : (tensor<1x3x2xf32>) -> tensor<1x1x2xf32>
    %m2 = stablehlo.dynamic_update_slice %m, %blk, %o, %j, %z : (tensor<4x5x2xf32>, tensor<1x1x2xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<4x5x2xf32>
    %s2 = stablehlo.add %s, %fi : tensor<f32>
    stablehlo.return %i2, %x2, %v2, %m2, %s2 : tensor<i32>, tensor<6x3x4xf32>, tensor<5xf32>, tensor<4x5x2xf32>, tensor<f32>
  }
  return %r#1, %r#2, %r#3, %r#4 : tensor<6x3x4xf32>, tensor<5xf32>, tensor<4x5x2xf32>, tensor<f32>
}"""


@settings(max_examples=20, deadline=None)
@given(off=st.integers(-3, 7))
def test_loop_updates_through_short_windows_match_the_general_path(off):
    x = np.arange(72, dtype=np.float32).reshape(6, 3, 4) / 7
    v = np.arange(5, dtype=np.float32) - 2
    m = np.arange(40, dtype=np.float32).reshape(4, 5, 2) * -1.5
    run_both(LOOP, x, v, m, np.int32(off))


def test_short_windows_are_made_for_the_loops_updates(monkeypatch):
    made = []
    orig = plan._write_window_maker

    def wrapped(*a):
        w = orig(*a)
        made.append(w is not None)
        return w
    monkeypatch.setattr(plan, "_write_window_maker", wrapped)
    run_both(LOOP, np.zeros((6, 3, 4), np.float32), np.zeros(5, np.float32),
             np.zeros((4, 5, 2), np.float32), np.int32(1))
    assert sum(made) >= 2
