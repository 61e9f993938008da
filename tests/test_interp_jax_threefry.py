"""JAX's threefry2x32 loop (jax_threefry.py) run as one vectorized kernel gives what the loop
run op by op gives, in each form JAX writes (i32 or i64 counters; rank-0 keys broadcast in
the body or keys of the words' type), for any loop values (rotation amounts of 0, 32 and past
the width, keys and counters near the u32, i32 and i64 limits, any start of the iteration
counter, counters of a few words and of many); it is the Threefry-2x32 hash of random.py; a
loop that differs from JAX's in one op or one attribute runs op by op; iterations count
against max_steps as the while kernel counts them; a trace sees every op; the loops of
upstream testdata's random programs are recognized."""
import glob
import os

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import stablehlo_ref
from stablehlo_ref.errors import LimitError
from stablehlo_ref.interpreter import control, jax_loops, jax_threefry
from stablehlo_ref.ir.attributes import StringAttr

from corpus import SHARED
from stablehlo_ref.interpreter.random import threefry2x32
from stablehlo_ref.limits import Limits
from stablehlo_ref.text import parse


FORMS = [("i32", "ui32"), ("i64", "ui32"), ("i32", "same"), ("i64", "same")]


def _program(shape, edit=None, form=("i32", "ui32")):
    tt = "x".join(str(d) for d in shape) + "xui32"
    counter, keys = form
    src = jax_threefry.loop_text(tt, counter, tt if keys == "same" else keys)
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
I64 = st.integers(-(1 << 63), (1 << 63) - 1)


def _args(i, j, x0, x1, keys, ra, rb, form=("i32", "ui32")):
    """The loop's operands; `keys` are 3 ints (broadcast to the words' shape where the form's
    keys have the words' type) or 3 arrays of the words' shape."""
    ct = np.int32 if form[0] == "i32" else np.int64
    if form[1] == "same":
        keys = [np.broadcast_to(np.asarray(k, np.uint32), np.shape(x0)).copy() for k in keys]
    else:
        keys = [np.uint32(k) for k in keys]
    return (ct(i), ct(j), x0, x1, *keys, ra, rb)


@pytest.mark.parametrize("form", FORMS)
@settings(max_examples=40, deadline=None)
@given(data=st.data(),
       shape=st.sampled_from([(1,), (3,), (8,), (9,), (40,), (2, 3), (1, 1), (5, 7), (4, 1, 3)]))
def test_threefry_loop_matches_the_loop_run_op_by_op(form, data, shape):
    n = int(np.prod(shape))
    words = st.lists(U32, min_size=n, max_size=n)
    x0 = np.array(data.draw(words), np.uint32).reshape(shape)
    x1 = np.array(data.draw(words), np.uint32).reshape(shape)
    key = st.one_of(U32, st.sampled_from([0, (1 << 32) - 1]))
    if form[1] == "same" and data.draw(st.booleans()):
        # a key per word
        keys = [np.array(data.draw(st.lists(key, min_size=n, max_size=n)), np.uint32).reshape(shape)
                for _ in range(3)]
    else:
        keys = data.draw(st.lists(key, min_size=3, max_size=3))
    amount = st.one_of(st.integers(0, 40), st.sampled_from([32, 33, 64, (1 << 32) - 1, (1 << 31)]), U32)
    if data.draw(st.booleans()):
        ra, rb = ROT
    else:
        ra = np.array(data.draw(st.lists(amount, min_size=4, max_size=4)), np.uint32)
        rb = np.array(data.draw(st.lists(amount, min_size=4, max_size=4)), np.uint32)
    i = data.draw(st.one_of(st.integers(-2, 6), st.sampled_from([0, 5])))
    if form[0] == "i32":
        j = data.draw(st.one_of(st.integers(-3, 3), I32, st.sampled_from([(1 << 31) - 3, -(1 << 31)])))
    else:
        j = data.draw(st.one_of(st.integers(-3, 3), I32, I64,
                                st.sampled_from([(1 << 63) - 3, -(1 << 63), (1 << 32) - 2, (1 << 31) - 2])))
    src = _program(shape, form=form)
    args = _args(i, j, x0, x1, keys, ra, rb, form)
    saved = [np.array(a, copy=True) for a in args]
    got, used = _run_spied(src, *args)
    assert used
    _same(got, _op_by_op(src, *args))
    # the operands are not written
    for a, b in zip(args, saved):
        assert np.asarray(a).tobytes() == b.tobytes()


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("shape", [(2,), (3,), (4096,), (64, 4)])
def test_threefry_loop_is_the_threefry2x32_hash(shape, form):
    # JAX's threefry2x32(k0, k1, x): x + (k0, k1), then this loop from i = j = 0 with the
    # keys (k1, k0 ^ k1 ^ 0x1BD11BDA, k0) and the rotations (ROT[0], ROT[1])
    rng = np.random.default_rng(7)
    n = int(np.prod(shape))
    x0 = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32).reshape(shape)
    x1 = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32).reshape(shape)
    k0, k1 = 0x12345678, 0xFEDCBA98
    k2 = k0 ^ k1 ^ 0x1BD11BDA
    args = _args(0, 0, x0 + np.uint32(k0), x1 + np.uint32(k1), (k1, k2, k0), *ROT, form)
    got, used = _run_spied(_program(shape, form=form), *args)
    assert used
    want = threefry2x32(k0, k1, x0, x1)
    assert got[2].tobytes() == want[0].tobytes() and got[3].tobytes() == want[1].tobytes()


# one op or one attribute changed ("CT": the form's counter type)
EDITS = [
    ("stablehlo.compare LT, %iterArg, %c_12", "stablehlo.compare LE, %iterArg, %c_12"),
    ("stablehlo.compare LT, %iterArg, %c_12, SIGNED", "stablehlo.compare LT, %iterArg, %c_12, UNSIGNED"),
    ("%c_12 = stablehlo.constant dense<5> : tensor<CT>", "%c_12 = stablehlo.constant dense<4> : tensor<CT>"),
    ("%c_4 = stablehlo.constant dense<1> : tensor<CT>", "%c_4 = stablehlo.constant dense<2> : tensor<CT>"),
    ("%9 = stablehlo.or %5, %8", "%9 = stablehlo.xor %5, %8"),
    ("%13 = stablehlo.add %3, %10", "%13 = stablehlo.add %3, %9"),
    ("%c_0 = stablehlo.constant dense<32> : tensor<ui32>", "%c_0 = stablehlo.constant dense<31> : tensor<ui32>"),
    ("%21 = stablehlo.slice %arg6 [2:3]", "%21 = stablehlo.slice %arg6 [1:2]"),
    ("%46 = stablehlo.convert %45", "%46 = stablehlo.convert %0"),
    ("return %0, %42, %48, %arg4, %arg5, %arg3, %arg7, %arg6", "return %0, %42, %48, %arg4, %arg5, %arg3, %arg6, %arg7"),
    ("return %0, %42, %48, %arg4, %arg5, %arg3,", "return %0, %42, %48, %arg5, %arg4, %arg3,"),
]
BROADCAST_EDITS = [
    ("%41 = stablehlo.broadcast_in_dim %arg3", "%41 = stablehlo.broadcast_in_dim %arg5"),
    ("%44 = stablehlo.add %40, %43", "%44 = stablehlo.subtract %40, %43"),
]
SAME_TYPE_EDITS = [
    ("%42 = stablehlo.add %33, %arg3", "%42 = stablehlo.add %33, %arg5"),
    ("%44 = stablehlo.add %40, %arg4", "%44 = stablehlo.subtract %40, %arg4"),
]


def _near_misses():
    for form in FORMS:
        extra = SAME_TYPE_EDITS if form[1] == "same" else BROADCAST_EDITS
        for old, new in EDITS + extra:
            yield form, (old.replace("CT", form[0]), new.replace("CT", form[0]))


@pytest.mark.parametrize("form,edit", list(_near_misses()))
def test_a_loop_that_differs_runs_op_by_op(form, edit):
    src = _program((5,), edit, form)
    x = np.arange(5, dtype=np.uint32)
    args = _args(0, 0, x, x * np.uint32(7), (1, 2, 3), *ROT, form)
    got, used = _run_spied(src, *args)
    assert not used
    _same(got, _op_by_op(src, *args))


def _run_module_spied(module, *args):
    seen = []
    saved = control.threefry_loop

    def spy(ctx, op):
        r = saved(ctx, op)
        seen.append(r is not None)
        return r
    control.threefry_loop = spy
    try:
        out = stablehlo_ref.run(module, *args)
    finally:
        control.threefry_loop = saved
    return out, any(seen)


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("where", ["while", "call"])
def test_a_loop_with_an_added_attribute_runs_op_by_op(form, where):
    # (the while op's attributes, and the call's, are compared with the template's too)
    src = _program((5,), form=form)
    x = np.arange(5, dtype=np.uint32)
    args = _args(0, 0, x, x * np.uint32(7), (1, 2, 3), *ROT, form)
    module = parse(src)
    loop = module.functions["main"].regions[0].blocks[0].operations[0]
    target = loop if where == "while" else loop.regions[1].blocks[0].operations[0]
    assert target.name == ("stablehlo.while" if where == "while" else "func.call")
    target.attributes["tag"] = StringAttr("x")
    got, used = _run_module_spied(module, *args)
    assert not used
    _same(got, _op_by_op(src, *args))
    _, used = _run_module_spied(parse(src), *args)
    assert used


def test_forms_do_not_mix():
    # keys of the words' type under the broadcast body (and the reverse) do not parse as a
    # loop of either template; a form's template does not match another form's loop
    for form in FORMS:
        module = parse(_program((3,), form=form))
        loop = module.functions["main"].regions[0].blocks[0].operations[0]
        assert jax_threefry._loop_form(loop)[1:] == (form[0], "3xui32" if form[1] == "same" else "ui32")
        for other in FORMS:
            t_funcs, t_loop = jax_threefry._template(
                ("3xui32", other[0], "3xui32" if other[1] == "same" else "ui32"))
            assert jax_loops.same_loop(_Ctx(module.functions), loop, t_funcs, t_loop) == (other == form)


class _Ctx:
    def __init__(self, functions):
        self.functions = functions


_TESTDATA = str(SHARED / "testdata")


@pytest.mark.skipif(not os.path.isdir(_TESTDATA), reason="../shared/stablehlo-tests not present")
def test_upstream_random_programs_loops_are_recognized():
    # every threefry loop of upstream testdata's random_* programs (i64 counters; keys
    # broadcast or of the words' type) runs as the known loop, with the results of op by op
    from stablehlo_ref.interpreter import run
    files = sorted(glob.glob(os.path.join(_TESTDATA, "random_*.mlir")))
    assert files
    for f in files:
        with open(f) as fh:
            text = fh.read()
        module = parse(text)
        loops = [op for fn in module.functions.values() for op in _walk(fn)
                 if op.name == "stablehlo.while" and len(op.operands) == 9]
        assert loops, f
        ctx = _Ctx(module.functions)
        for op in loops:
            assert jax_threefry._matches_threefry_loop(ctx, op) is not None, f
        a = run(parse(text))
        b = _op_by_op(text)
        _same(a, b)


def _walk(op):
    for r in op.regions:
        for b in r.blocks:
            for o in b.operations:
                yield o
                yield from _walk(o)


def test_rank0_counters_run_op_by_op():
    src = jax_threefry.loop_text("ui32")
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
        karr = [rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32) for _ in range(3)]
        for ra, rb in ((list(ROT[0]), list(ROT[1])), ([0, 32, 33, (1 << 32) - 1], [1, 31, 64, 5])):
            for bits, j in ((32, (1 << 31) - 2), (64, (1 << 63) - 2), (64, (1 << 32) - 3)):
                for vk, sk in (((5, (1 << 32) - 1, 7), (5, (1 << 32) - 1, 7)),
                               (karr, [k.tolist() for k in karr])):
                    a = jax_threefry.threefry_rounds(x0, x1, *vk, ra, rb, j, 5, None, bits)
                    b = jax_threefry.threefry_rounds_small(x0, x1, *sk, ra, rb, j, 5, None, bits)
                    assert a[0].tobytes() == b[0].tobytes() and a[1].tobytes() == b[1].tobytes()
                    assert a[2] == b[2]


def test_chunked_rounds_equal_the_whole_array_rounds(monkeypatch):
    """Counters of more than two chunks run chunk by chunk: the same words as the rounds over
    the whole array (int and per-word keys, a chunk that does not divide the size, 2-D
    counters), the same j, and every iteration's tick taken (before any word is computed)."""
    rng = np.random.default_rng(4)
    monkeypatch.setattr(jax_threefry, "_CHUNK", 64)
    for shape in ((1000,), (7, 43)):
        n = int(np.prod(shape))
        x0 = rng.integers(0, 1 << 32, shape, dtype=np.uint64).astype(np.uint32)
        x1 = rng.integers(0, 1 << 32, shape, dtype=np.uint64).astype(np.uint32)
        karr = [rng.integers(0, 1 << 32, shape, dtype=np.uint64).astype(np.uint32) for _ in range(3)]
        for keys in ((5, (1 << 32) - 1, 7), karr):
            for bits, j in ((32, (1 << 31) - 3), (64, 11)):
                ticks = []
                got = jax_threefry.threefry_rounds(x0, x1, *keys, list(ROT[0]), list(ROT[1]), j, 5,
                                                   lambda: ticks.append(1), bits)
                want = jax_threefry._threefry_rounds(x0, x1, *keys, list(ROT[0]), list(ROT[1]), j, 5,
                                                     None, bits)
                assert len(ticks) == 5 and got[2] == want[2]
                assert got[0].shape == shape and got[0].tobytes() == want[0].tobytes()
                assert got[1].tobytes() == want[1].tobytes()
                assert n > 2 * jax_threefry._CHUNK
