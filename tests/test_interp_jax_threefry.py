"""JAX's threefry2x32 loop (jax_threefry.py) run as one vectorized kernel gives what the loop
run op by op gives, for any loop values (rotation amounts of 0, 32 and past the width, keys
and counters near the u32 and i32 limits, any start of the iteration counter, counters of a
few words and of many); it is the Threefry-2x32 hash of random.py; a loop that differs from
JAX's in one op runs op by op; iterations count against max_steps as the while kernel counts
them; a trace sees every op."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import stablehlo_ref
from stablehlo_ref.errors import LimitError
from stablehlo_ref.interpreter import control, jax_threefry
from stablehlo_ref.interpreter.random import threefry2x32
from stablehlo_ref.limits import Limits
from stablehlo_ref.text import parse


def _program(shape, edit=None):
    tt = "x".join(str(d) for d in shape) + "xui32"
    src = jax_threefry._THREEFRY_LOOP.replace("TT", tt)
    if edit is not None:
        old, new = edit
        assert old in src
        src = src.replace(old, new, 1)
    return src


def _op_by_op(src, *args, **kw):
    saved = control.threefry_loop
    control.threefry_loop = lambda ctx, op: None
    try:
        return stablehlo_ref.run(parse(src), *args, **kw)
    finally:
        control.threefry_loop = saved


def _run_spied(src, *args, **kw):
    """(results, whether the known loop ran for the `while`)."""
    seen = []
    saved = control.threefry_loop

    def spy(ctx, op):
        r = saved(ctx, op)
        seen.append(r is not None)
        return r
    control.threefry_loop = spy
    try:
        out = stablehlo_ref.run(parse(src), *args, **kw)
    finally:
        control.threefry_loop = saved
    return out, any(seen)


def _same(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert np.asarray(x).dtype == np.asarray(y).dtype and np.shape(x) == np.shape(y)
        assert np.asarray(x).tobytes() == np.asarray(y).tobytes()


ROT = (np.array([13, 15, 26, 6], np.uint32), np.array([17, 29, 16, 24], np.uint32))
U32 = st.integers(0, (1 << 32) - 1)
I32 = st.integers(-(1 << 31), (1 << 31) - 1)


def _args(i, j, x0, x1, keys, ra, rb):
    return (np.int32(i), np.int32(j), x0, x1, *(np.uint32(k) for k in keys), ra, rb)


@settings(max_examples=60, deadline=None)
@given(data=st.data(),
       shape=st.sampled_from([(1,), (3,), (8,), (9,), (40,), (2, 3), (5, 7), (4, 1, 3)]))
def test_threefry_loop_matches_the_loop_run_op_by_op(data, shape):
    n = int(np.prod(shape))
    x0 = np.array(data.draw(st.lists(U32, min_size=n, max_size=n)), np.uint32).reshape(shape)
    x1 = np.array(data.draw(st.lists(U32, min_size=n, max_size=n)), np.uint32).reshape(shape)
    keys = data.draw(st.lists(st.one_of(U32, st.sampled_from([0, (1 << 32) - 1])), min_size=3, max_size=3))
    amount = st.one_of(st.integers(0, 40), st.sampled_from([32, 33, 64, (1 << 32) - 1, (1 << 31)]), U32)
    if data.draw(st.booleans()):
        ra, rb = ROT
    else:
        ra = np.array(data.draw(st.lists(amount, min_size=4, max_size=4)), np.uint32)
        rb = np.array(data.draw(st.lists(amount, min_size=4, max_size=4)), np.uint32)
    i = data.draw(st.one_of(st.integers(-2, 6), st.sampled_from([0, 5])))
    j = data.draw(st.one_of(st.integers(-3, 3), I32, st.sampled_from([(1 << 31) - 3, -(1 << 31)])))
    src = _program(shape)
    args = _args(i, j, x0, x1, keys, ra, rb)
    got, used = _run_spied(src, *args)
    assert used
    _same(got, _op_by_op(src, *args))
    # the operands are not written
    assert x0.tobytes() == args[2].tobytes() and x1.tobytes() == args[3].tobytes()


@pytest.mark.parametrize("shape", [(2,), (3,), (4096,), (64, 4)])
def test_threefry_loop_is_the_threefry2x32_hash(shape):
    # JAX's threefry2x32(k0, k1, x): x + (k0, k1), then this loop from i = j = 0 with the
    # keys (k1, k0 ^ k1 ^ 0x1BD11BDA, k0) and the rotations (ROT[0], ROT[1])
    rng = np.random.default_rng(7)
    n = int(np.prod(shape))
    x0 = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32).reshape(shape)
    x1 = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32).reshape(shape)
    k0, k1 = 0x12345678, 0xFEDCBA98
    k2 = k0 ^ k1 ^ 0x1BD11BDA
    args = _args(0, 0, x0 + np.uint32(k0), x1 + np.uint32(k1), (k1, k2, k0), *ROT)
    got, used = _run_spied(_program(shape), *args)
    assert used
    want = threefry2x32(k0, k1, x0, x1)
    assert got[2].tobytes() == want[0].tobytes() and got[3].tobytes() == want[1].tobytes()


@pytest.mark.parametrize("edit", [
    ("stablehlo.compare LT, %iterArg, %c_12", "stablehlo.compare LE, %iterArg, %c_12"),
    ("%c_12 = stablehlo.constant dense<5> : tensor<i32>", "%c_12 = stablehlo.constant dense<4> : tensor<i32>"),
    ("%9 = stablehlo.or %5, %8", "%9 = stablehlo.xor %5, %8"),
    ("%13 = stablehlo.add %3, %10", "%13 = stablehlo.add %3, %9"),
    ("%c_0 = stablehlo.constant dense<32> : tensor<ui32>", "%c_0 = stablehlo.constant dense<31> : tensor<ui32>"),
    ("%21 = stablehlo.slice %arg6 [2:3]", "%21 = stablehlo.slice %arg6 [1:2]"),
    ("return %0, %42, %48, %arg4, %arg5, %arg3, %arg7, %arg6", "return %0, %42, %48, %arg4, %arg5, %arg3, %arg6, %arg7"),
])
def test_a_loop_that_differs_runs_op_by_op(edit):
    src = _program((5,), edit)
    x = np.arange(5, dtype=np.uint32)
    args = _args(0, 0, x, x * np.uint32(7), (1, 2, 3), *ROT)
    got, used = _run_spied(src, *args)
    assert not used
    _same(got, _op_by_op(src, *args))


def test_rank0_counters_run_op_by_op():
    src = jax_threefry._THREEFRY_LOOP.replace("TT", "ui32")
    args = _args(0, 0, np.uint32(3), np.uint32(4), (1, 2, 3), *ROT)
    got, used = _run_spied(src, *args)
    assert not used
    _same(got, _op_by_op(src, *args))


def test_threefry_loop_counts_iterations_against_max_steps():
    src = _program((4,))
    x = np.arange(4, dtype=np.uint32)
    args = _args(0, 0, x, x, (1, 2, 3), *ROT)
    limits = Limits(max_steps=3)
    with pytest.raises(LimitError) as known:
        stablehlo_ref.run(parse(src), *args, limits=limits)
    with pytest.raises(LimitError) as general:
        _op_by_op(src, *args, limits=limits)
    assert str(known.value) == str(general.value)
    stablehlo_ref.run(parse(src), *args, limits=Limits(max_steps=5))


def test_threefry_loop_is_not_used_under_a_trace():
    src = _program((3,))
    x = np.arange(3, dtype=np.uint32)
    seen = []
    stablehlo_ref.run(parse(src), *_args(0, 0, x, x, (1, 2, 3), *ROT),
                      trace=lambda op, results: seen.append(op.name))
    assert seen.count("stablehlo.shift_left") == 20


def test_small_and_vector_rounds_agree():
    rng = np.random.default_rng(3)
    for n in (1, 2, 5, 8):
        x0 = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
        x1 = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
        for ra, rb in ((list(ROT[0]), list(ROT[1])), ([0, 32, 33, (1 << 32) - 1], [1, 31, 64, 5])):
            a = jax_threefry.threefry_rounds(x0, x1, 5, (1 << 32) - 1, 7, ra, rb, (1 << 31) - 2, 5)
            b = jax_threefry.threefry_rounds_small(x0, x1, 5, (1 << 32) - 1, 7, ra, rb, (1 << 31) - 2, 5)
            assert a[0].tobytes() == b[0].tobytes() and a[1].tobytes() == b[1].tobytes()
            assert a[2:] == b[2:]
