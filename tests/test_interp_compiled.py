"""Compiled blocks (`plan._compile`) give what the step-by-step run gives: calls inlined into
the calling block (callees with regions, callees returning their arguments or one value
twice, recursion, errors located in the callee), ops folded when their operands are known
when compiling, constants bound into the ops that read them. Every block is compiled on its
first run here (`_COMPILE_AFTER_RUNS = 0`), and the upstream corpora are run that way too."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import stablehlo_ref
from stablehlo_ref.errors import StableHLOError
from stablehlo_ref.interpreter import plan
from stablehlo_ref.text import parse

from corpus import SHARED, check_file_against_known, corpus_files, load_known


@pytest.fixture
def compile_at_once(monkeypatch):
    monkeypatch.setattr(plan, "_COMPILE_AFTER_RUNS", 0)


def _both(src, *args, entry="main"):
    """(compiled at once, never compiled) results of running `src`."""
    old_after, old_max = plan._COMPILE_AFTER_RUNS, plan._MAX_COMPILED_STEPS
    try:
        plan._COMPILE_AFTER_RUNS = 0
        compiled = stablehlo_ref.run(parse(src), *args, entry=entry)
        plan._COMPILE_AFTER_RUNS, plan._MAX_COMPILED_STEPS = 16, -1
        stepwise = stablehlo_ref.run(parse(src), *args, entry=entry)
    finally:
        plan._COMPILE_AFTER_RUNS, plan._MAX_COMPILED_STEPS = old_after, old_max
    assert len(compiled) == len(stepwise)
    for a, b in zip(compiled, stepwise):
        assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    return compiled


CALLS = """
func.func @main(%x: tensor<4xf32>, %n: tensor<i32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<f32>, tensor<i32>) {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %r:3 = stablehlo.while(%i = %c0, %a = %x, %b = %x) : tensor<i32>, tensor<4xf32>, tensor<4xf32>
   cond {
    %lt = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %i2 = func.call @inc(%i, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %p:2 = func.call @swap(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
    %s = func.call @scaled_sum(%p#0) : (tensor<4xf32>) -> tensor<4xf32>
    %t:2 = func.call @twice(%s) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
    %u = stablehlo.add %t#0, %t#1 : tensor<4xf32>
    stablehlo.return %i2, %u, %p#1 : tensor<i32>, tensor<4xf32>, tensor<4xf32>
  }
  %f = func.call @fact(%n) : (tensor<i32>) -> tensor<i32>
  %z = func.call @total(%r#1) : (tensor<4xf32>) -> tensor<f32>
  return %r#1, %r#2, %z, %f : tensor<4xf32>, tensor<4xf32>, tensor<f32>, tensor<i32>
}
func.func private @inc(%a: tensor<i32>, %b: tensor<i32>) -> tensor<i32> {
  %s = stablehlo.add %a, %b : tensor<i32>
  return %s : tensor<i32>
}
func.func private @swap(%a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  return %b, %a : tensor<4xf32>, tensor<4xf32>
}
func.func private @twice(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %h = stablehlo.constant dense<0.5> : tensor<f32>
  %hb = stablehlo.broadcast_in_dim %h, dims = [] : (tensor<f32>) -> tensor<4xf32>
  %m = stablehlo.multiply %a, %hb : tensor<4xf32>
  return %m, %m : tensor<4xf32>, tensor<4xf32>
}
func.func private @scaled_sum(%a: tensor<4xf32>) -> tensor<4xf32> {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %k = stablehlo.constant dense<0.25> : tensor<f32>
  %s = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
  %m = stablehlo.multiply %s, %k : tensor<f32>
  %c = stablehlo.constant dense<2> : tensor<i32>
  %w:2 = stablehlo.while(%j = %c, %v = %a) : tensor<i32>, tensor<4xf32>
   cond {
    %zero = stablehlo.constant dense<0> : tensor<i32>
    %gt = stablehlo.compare GT, %j, %zero, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %gt : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %j2 = stablehlo.subtract %j, %one : tensor<i32>
    %mb = stablehlo.broadcast_in_dim %m, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %v2 = stablehlo.add %v, %mb : tensor<4xf32>
    stablehlo.return %j2, %v2 : tensor<i32>, tensor<4xf32>
  }
  return %w#1 : tensor<4xf32>
}
func.func private @total(%a: tensor<4xf32>) -> tensor<f32> {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %s = stablehlo.reduce(%a init: %z) across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
   reducer(%p: tensor<f32>, %q: tensor<f32>) {
    %h = func.call @half_sum(%p, %q) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    stablehlo.return %h : tensor<f32>
  }
  return %s : tensor<f32>
}
func.func private @half_sum(%a: tensor<f32>, %b: tensor<f32>) -> tensor<f32> {
  %s = stablehlo.add %a, %b : tensor<f32>
  return %s : tensor<f32>
}
func.func private @fact(%n: tensor<i32>) -> tensor<i32> {
  %one = stablehlo.constant dense<1> : tensor<i32>
  %le = stablehlo.compare LE, %n, %one, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
  %r = "stablehlo.if"(%le) ({
    stablehlo.return %one : tensor<i32>
  }, {
    %m = stablehlo.subtract %n, %one : tensor<i32>
    %f = func.call @fact(%m) : (tensor<i32>) -> tensor<i32>
    %p = stablehlo.multiply %n, %f : tensor<i32>
    stablehlo.return %p : tensor<i32>
  }) : (tensor<i1>) -> tensor<i32>
  return %r : tensor<i32>
}
"""


@pytest.mark.parametrize("n", [0, 1, 5, 20])
def test_inlined_calls_match_the_step_by_step_run(n):
    x = np.array([1.5, -2.0, 0.25, 3.0], np.float32)
    a, b, z, f = _both(CALLS, x, np.int32(n))
    assert int(f) == int(np.prod(np.arange(1, max(n, 1) + 1, dtype=np.int64)).astype(np.int32))


def test_calls_are_inlined(compile_at_once, monkeypatch):
    """Once compiled, only the entry and the recursive calls go through the evaluator."""
    from stablehlo_ref.interpreter.evaluator import Interpreter
    m = parse(CALLS)
    args = (np.ones(4, np.float32), np.int32(4))
    first = stablehlo_ref.run(m, *args)
    called = []
    real, real_top = Interpreter.call, Interpreter._call_top

    def counting(self, name, a):
        called.append(name)
        return real(self, name, a)

    def counting_top(self, name, *rest):
        # (`run` enters the top-level call directly, without `call`)
        if self.depth == 0 and not called:
            called.append(name)
        return real_top(self, name, *rest)
    monkeypatch.setattr(Interpreter, "call", counting)
    monkeypatch.setattr(Interpreter, "_call_top", counting_top)
    again = stablehlo_ref.run(m, *args)
    assert set(called) == {"main", "fact"}, called
    assert called.count("fact") == 3            # fact(4) inlined; fact(3), (2), (1) called
    for a, b in zip(first, again):
        assert a.tobytes() == b.tobytes()


def test_error_in_an_inlined_callee_is_located_at_the_callee_op(compile_at_once):
    src = """
func.func @main(%x: tensor<4xi32>, %i: tensor<i32>) -> tensor<4xi32> {
  %r = func.call @bad(%x, %i) : (tensor<4xi32>, tensor<i32>) -> tensor<4xi32>
  return %r : tensor<4xi32>
}
func.func private @bad(%x: tensor<4xi32>, %i: tensor<i32>) -> tensor<4xi32> {
  %y = stablehlo.custom_call @no_such_target(%x) : (tensor<4xi32>) -> tensor<4xi32>
  return %y : tensor<4xi32>
}"""
    with pytest.raises(StableHLOError) as e:
        stablehlo_ref.run(parse(src), np.arange(4, dtype=np.int32), np.int32(0))
    assert "no_such_target" in str(e.value)
    assert ":7:" in str(e.value.location)


@pytest.mark.parametrize("t", ["i8", "ui16", "i32", "f16", "f32", "bf16", "f64"])
def test_folded_constant_arithmetic_matches(t):
    src = f"""
func.func @main(%x: tensor<3x{t}>) -> (tensor<3x{t}>, tensor<3xi1>) {{
  %c = stablehlo.constant dense<7> : tensor<{t}>
  %d = stablehlo.constant dense<100> : tensor<{t}>
  %p = stablehlo.multiply %c, %d : tensor<{t}>
  %q = stablehlo.add %p, %p : tensor<{t}>
  %b = stablehlo.broadcast_in_dim %q, dims = [] : (tensor<{t}>) -> tensor<3x{t}>
  %s = stablehlo.subtract %x, %b : tensor<3x{t}>
  %e = stablehlo.compare LT, %s, %b : (tensor<3x{t}>, tensor<3x{t}>) -> tensor<3xi1>
  %m = stablehlo.select %e, %s, %b : tensor<3xi1>, tensor<3x{t}>
  return %m, %e : tensor<3x{t}>, tensor<3xi1>
}}""".replace("dense<7>", "dense<7.0>" if "f" in t else "dense<7>") \
        .replace("dense<100>", "dense<100.0>" if "f" in t else "dense<100>")
    from stablehlo_ref.ir.types import element_type
    x = np.array([1, 2, 3]).astype(element_type(t).dtype)
    _both(src, x)


def test_select_with_a_bound_operand_in_a_loop():
    src = """
func.func @main(%x: tensor<f32>) -> tensor<f32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = stablehlo.while(%i = %c0, %a = %x) : tensor<i32>, tensor<f32>
   cond {
    %n = stablehlo.constant dense<30> : tensor<i32>
    %lt = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %i2 = stablehlo.add %i, %one : tensor<i32>
    %three = stablehlo.constant dense<3> : tensor<i32>
    %m = stablehlo.remainder %i, %three : tensor<i32>
    %zero = stablehlo.constant dense<0> : tensor<i32>
    %e = stablehlo.compare EQ, %m, %zero, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %k = stablehlo.constant dense<-1.5> : tensor<f32>
    %h = stablehlo.constant dense<0.5> : tensor<f32>
    %ah = stablehlo.multiply %a, %h : tensor<f32>
    %s = stablehlo.select %e, %k, %ah : tensor<i1>, tensor<f32>
    %s2 = stablehlo.add %s, %a : tensor<f32>
    stablehlo.return %i2, %s2 : tensor<i32>, tensor<f32>
  }
  return %r#1 : tensor<f32>
}"""
    _both(src, np.float32(2.0))


KNOWN = {name: load_known(name) for name in ("interpret", "math", "testdata")}
FILES = [(name, rel) for name in KNOWN for rel in corpus_files(name, "**/*.mlir" if name == "interpret" else "*.mlir")]


@pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/stablehlo-tests not present")
@pytest.mark.parametrize("corpus,rel", [pytest.param(c, r, id=r) for c, r in FILES])
def test_corpus_with_every_block_compiled(corpus, rel, compile_at_once):
    """The corpora run as `tests/test_corpus_interpret.py` runs them, with every block
    compiled (calls inlined, constants folded) from its first run."""
    _, unexpected, fixed = check_file_against_known(rel, KNOWN[corpus])
    assert not unexpected, unexpected
    assert not fixed, fixed


@pytest.mark.parametrize("t", ["f16", "f32", "f64"])
def test_unary_scalar_specializers_match_the_general_kernels(t):
    from stablehlo_ref.interpreter.registry import KERNELS, SPECIALIZERS
    from stablehlo_ref.ir.types import element_type
    dt = element_type(t).dtype
    values = np.array([0.0, -0.0, 1.0, -1.0, 0.5, 3.0, -7.25, 1e-3, 100.0, 1e4, np.inf, -np.inf,
                       np.nan, np.finfo(dt).tiny, np.finfo(dt).max, -np.finfo(dt).max,
                       np.finfo(dt).smallest_subnormal], dtype=dt)
    checked = 0
    for name in sorted(SPECIALIZERS):
        # (the table kernels: each is named after its op)
        if not name.startswith("stablehlo.") or KERNELS[name].__qualname__ != name:
            continue
        src = f"""func.func @main(%x: tensor<{t}>) -> tensor<{t}> {{
  %r = {name} %x : tensor<{t}>
  return %r : tensor<{t}>
}}"""
        op = parse(src).function("main").regions[0].blocks[0].operations[0]
        special = SPECIALIZERS[name](op)
        assert special is not None, name
        with np.errstate(all="ignore"):
            for v in values:
                got = special(None, op, v)
                want = np.asarray(KERNELS[name](None, op, np.asarray(v)))
                assert got.__class__ is dt.type, name
                assert np.asarray(got).tobytes() == want.tobytes(), (name, v, got, want)
            got = special(None, op, values)             # a whole array of the type
            want = KERNELS[name](None, op, values)
            assert got.dtype == want.dtype and got.tobytes() == want.tobytes(), name
        checked += 1
    assert checked >= 10


def test_a_merged_sequence_names_the_step_that_raised():
    def boom(a, b):
        raise ValueError("no")
    seq = ((lambda a, b: a + b, 0, 1, -1, 2), (boom, 2, 1, -1, 3), (lambda a, b: a, 3, 3, -1, 4))
    run = plan._sequence_runner(seq)
    f = [1, 2, None, None, None]
    with pytest.raises(ValueError) as e:
        run(None, f)
    assert e.value._stablehlo_sequence_index == 1 and f[2] == 3
    assert plan._failed_op(["first", "second", "third"], e.value) == "second"
    # entries of one and three operands (a bound kernel, a select) in the same loop
    mixed = ((lambda ctx, a: ctx - a, 0, -1, -2, 2), (lambda ctx, c, a, b: a if c else b, 5, 0, 1, 3),
             (boom, 2, 1, -1, 4))
    run = plan._sequence_runner(mixed)
    f = [1, 2, None, None, None, False]
    with pytest.raises(ValueError) as e:
        run(0, f)
    assert e.value._stablehlo_sequence_index == 2 and f[2] == -1 and f[3] == 2


def test_known_values_are_stored_in_every_new_frame():
    """A compiled loop body in a function called several times (a new frame each time)."""
    src = """
func.func @main(%x: tensor<f32>) -> tensor<f32> {
  %a = func.call @loop(%x) : (tensor<f32>) -> tensor<f32>
  %b = func.call @loop(%a) : (tensor<f32>) -> tensor<f32>
  %c = func.call @loop(%b) : (tensor<f32>) -> tensor<f32>
  return %c : tensor<f32>
}
func.func private @loop(%x0: tensor<f32>) -> tensor<f32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = stablehlo.while(%i = %c0, %x = %x0) : tensor<i32>, tensor<f32>
   cond {
    %n = stablehlo.constant dense<20> : tensor<i32>
    %lt = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %i2 = stablehlo.add %i, %one : tensor<i32>
    %k = stablehlo.constant dense<1.5> : tensor<f32>
    %y = stablehlo.multiply %x, %k : tensor<f32>
    %z = stablehlo.subtract %y, %k : tensor<f32>
    %w = stablehlo.add %z, %x : tensor<f32>
    stablehlo.return %i2, %w : tensor<i32>, tensor<f32>
  }
  return %r#1 : tensor<f32>
}"""
    _both(src, np.float32(0.75))


@pytest.mark.parametrize("t", ["ui8", "i16", "ui32", "i32", "ui64", "i64"])
@pytest.mark.parametrize("amounts", ["[3, 3, 3, 3]", "[0, 1, 7, 5]", "[1, 200, 2, 3]", "[250, 250, 250, 250]"])
def test_shifts_by_known_amounts_match(t, amounts):
    src = f"""func.func @main(%x: tensor<4x{t}>) -> (tensor<4x{t}>, tensor<4x{t}>, tensor<4x{t}>) {{
  %s = stablehlo.constant dense<{amounts}> : tensor<4x{t}>
  %a = stablehlo.shift_left %x, %s : tensor<4x{t}>
  %b = stablehlo.shift_right_logical %x, %s : tensor<4x{t}>
  %c = stablehlo.shift_right_arithmetic %x, %s : tensor<4x{t}>
  return %a, %b, %c : tensor<4x{t}>, tensor<4x{t}>, tensor<4x{t}>
}}"""
    from stablehlo_ref.ir.types import element_type
    dt = element_type(t).dtype
    x = np.array([1, -3, 77, -128], dtype=np.int64).astype(dt)
    _both(src, x)



SHIFT_TYPES = ["ui8", "i8", "i16", "ui16", "ui32", "i32", "ui64", "i64"]


@settings(max_examples=40, deadline=None)
@given(t=st.sampled_from(SHIFT_TYPES), amount=st.integers(-200, 200),
       xs=st.lists(st.integers(-(1 << 63), (1 << 64) - 1), min_size=6, max_size=6))
def test_shifts_by_a_uniform_amount_match_the_elementwise_shift(t, amount, xs):
    """A shift by a broadcast scalar (threefry's rotations: the amount read from one element,
    a shift by that scalar; in a loop body, where the plan's specialized kernel runs, and in a
    one-pass run, where the general kernel does) gives the bits of the element-wise shift by
    the same amounts as an array, compiled and not, amounts within and past the width and
    negative."""
    T = f"tensor<2x3x{t}>"
    src = f"""func.func @main(%x: {T}, %s: tensor<{t}>, %v: {T}) -> ({T}, {T}, {T}, {T}, {T}, {T}) {{
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %r:7 = stablehlo.while(%i = %c0, %o0 = %x, %o1 = %x, %o2 = %x, %o3 = %x, %o4 = %x, %o5 = %x) : tensor<i32>, {T}, {T}, {T}, {T}, {T}, {T}
   cond {{
    %n = stablehlo.constant dense<3> : tensor<i32>
    %lt = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  }} do {{
    %one = stablehlo.constant dense<1> : tensor<i32>
    %i2 = stablehlo.add %i, %one : tensor<i32>
    %b = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<{t}>) -> {T}
    %a0 = stablehlo.shift_left %o0, %b : {T}
    %a1 = stablehlo.shift_right_logical %o1, %b : {T}
    %a2 = stablehlo.shift_right_arithmetic %o2, %b : {T}
    %e0 = stablehlo.shift_left %o3, %v : {T}
    %e1 = stablehlo.shift_right_logical %o4, %v : {T}
    %e2 = stablehlo.shift_right_arithmetic %o5, %v : {T}
    stablehlo.return %i2, %a0, %a1, %a2, %e0, %e1, %e2 : tensor<i32>, {T}, {T}, {T}, {T}, {T}, {T}
  }}
  %b = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<{t}>) -> {T}
  %a0 = stablehlo.shift_left %r#1, %b : {T}
  %a1 = stablehlo.shift_right_logical %r#2, %b : {T}
  %e0 = stablehlo.shift_left %r#4, %v : {T}
  %e1 = stablehlo.shift_right_logical %r#5, %v : {T}
  return %a0, %a1, %r#3, %e0, %e1, %r#6 : {T}, {T}, {T}, {T}, {T}, {T}
}}"""
    from stablehlo_ref.ir.types import element_type
    dt = element_type(t).dtype
    bits = dt.itemsize * 8
    x = np.array([v & ((1 << bits) - 1) for v in xs], dtype=np.uint64).astype(dt).reshape(2, 3)
    s = np.array(amount & ((1 << bits) - 1), dtype=np.uint64).astype(dt)
    out = _both(src, x, s, np.full((2, 3), s, dtype=dt))
    for got, want in zip(out[:3], out[3:]):
        assert got.tobytes() == want.tobytes()


def test_uniform_value_recognizes_broadcast_scalars_and_splats():
    from stablehlo_ref.interpreter.elementwise import uniform_value
    m = parse("""func.func @main(%s: tensor<ui32>, %v: tensor<4xui32>) -> (tensor<4xui32>) {
  %b = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<ui32>) -> tensor<2x4xui32>
  %r = stablehlo.reshape %b : (tensor<2x4xui32>) -> tensor<8xui32>
  %c = stablehlo.constant dense<7> : tensor<4xui32>
  %d = stablehlo.constant dense<[1, 1, 2, 1]> : tensor<4xui32>
  %e = stablehlo.constant dense<[5, 5, 5, 5]> : tensor<4xui32>
  %w = stablehlo.broadcast_in_dim %v, dims = [1] : (tensor<4xui32>) -> tensor<2x4xui32>
  return %c : tensor<4xui32>
}""")
    ops = {op.results[0].name: op.results[0] for op in m.functions["main"].regions[0].blocks[0].operations
           if op.results}
    assert [uniform_value(ops[k]) for k in "brcdew"] == [True, True, True, False, True, False]

UPDATE_LOOP = """
func.func @main(%x: tensor<6xf32>, %buf: tensor<8x6xf32>) -> (tensor<8x6xf32>, tensor<8x6xf32>, tensor<6xf32>) {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %r:4 = stablehlo.while(%i = %c0, %h = %x, %b = %buf, %k = %buf) : tensor<i32>, tensor<6xf32>, tensor<8x6xf32>, tensor<8x6xf32>
   cond {
    %n = stablehlo.constant dense<8> : tensor<i32>
    %lt = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %i2 = stablehlo.add %i, %one : tensor<i32>
    %h2 = stablehlo.sine %h : tensor<6xf32>
    %row = stablehlo.reshape %h2 : (tensor<6xf32>) -> tensor<1x6xf32>
    %zero = stablehlo.constant dense<0> : tensor<i32>
    BODY
  }
  return %r#2, %r#3, %r#1 : tensor<8x6xf32>, tensor<8x6xf32>, tensor<6xf32>
}
func.func private @put(%b: tensor<8x6xf32>, %row: tensor<1x6xf32>, %i: tensor<i32>, %j: tensor<i32>) -> tensor<8x6xf32> {
  %u = stablehlo.dynamic_update_slice %b, %row, %i, %j : (tensor<8x6xf32>, tensor<1x6xf32>, tensor<i32>, tensor<i32>) -> tensor<8x6xf32>
  return %u : tensor<8x6xf32>
}"""

UPDATE_BODIES = {
    # the update is the buffer's last use (in an inlined callee): made in place
    "in_place": """%b2 = func.call @put(%b, %row, %i, %zero) : (tensor<8x6xf32>, tensor<1x6xf32>, tensor<i32>, tensor<i32>) -> tensor<8x6xf32>
    stablehlo.return %i2, %h2, %b2, %k : tensor<i32>, tensor<6xf32>, tensor<8x6xf32>, tensor<8x6xf32>""",
    # the old buffer is read after the update
    "old_read_after": """%b2 = stablehlo.dynamic_update_slice %b, %row, %i, %zero : (tensor<8x6xf32>, tensor<1x6xf32>, tensor<i32>, tensor<i32>) -> tensor<8x6xf32>
    %s = stablehlo.add %b2, %b : tensor<8x6xf32>
    stablehlo.return %i2, %h2, %s, %k : tensor<i32>, tensor<6xf32>, tensor<8x6xf32>, tensor<8x6xf32>""",
    # the new buffer is carried twice (two loop values hold one array)
    "carried_twice": """%b2 = stablehlo.dynamic_update_slice %b, %row, %i, %zero : (tensor<8x6xf32>, tensor<1x6xf32>, tensor<i32>, tensor<i32>) -> tensor<8x6xf32>
    %m = stablehlo.multiply %k, %k : tensor<8x6xf32>
    stablehlo.return %i2, %h2, %b2, %b2 : tensor<i32>, tensor<6xf32>, tensor<8x6xf32>, tensor<8x6xf32>""",
    # a view of the old buffer (a reshape) is used after the update
    "view_used_after": """%v = stablehlo.reshape %b : (tensor<8x6xf32>) -> tensor<48xf32>
    %b2 = stablehlo.dynamic_update_slice %b, %row, %i, %zero : (tensor<8x6xf32>, tensor<1x6xf32>, tensor<i32>, tensor<i32>) -> tensor<8x6xf32>
    %v2 = stablehlo.reshape %v : (tensor<48xf32>) -> tensor<8x6xf32>
    %s = stablehlo.add %b2, %v2 : tensor<8x6xf32>
    stablehlo.return %i2, %h2, %s, %k : tensor<i32>, tensor<6xf32>, tensor<8x6xf32>, tensor<8x6xf32>""",
    # the old buffer goes on as another loop value
    "old_carried": """%b2 = stablehlo.dynamic_update_slice %b, %row, %i, %zero : (tensor<8x6xf32>, tensor<1x6xf32>, tensor<i32>, tensor<i32>) -> tensor<8x6xf32>
    stablehlo.return %i2, %h2, %b2, %b : tensor<i32>, tensor<6xf32>, tensor<8x6xf32>, tensor<8x6xf32>""",
}


@pytest.mark.parametrize("case", sorted(UPDATE_BODIES))
def test_updates_in_loops_match_and_leave_inputs_alone(case):
    src = UPDATE_LOOP.replace("BODY", UPDATE_BODIES[case])
    x = np.linspace(0, 1, 6).astype(np.float32)
    buf = np.arange(48, dtype=np.float32).reshape(8, 6)
    keep = buf.copy()
    _both(src, x, buf)
    assert buf.tobytes() == keep.tobytes()          # the caller's array is never written


def test_update_is_made_in_place_when_nothing_else_holds_the_buffer(compile_at_once, monkeypatch):
    from stablehlo_ref.interpreter import movement
    copies = []
    real = movement.dynamic_update_slice_specialized

    def counting(op, known=None):
        k = real(op, known)

        def run(ctx, op, *a):
            copies.append(1)
            return k(ctx, op, *a)
        return run
    monkeypatch.setattr(movement, "dynamic_update_slice_specialized", counting)
    src = UPDATE_LOOP.replace("BODY", UPDATE_BODIES["in_place"])
    buf = np.zeros((8, 6), np.float32)
    stablehlo_ref.run(parse(src), np.ones(6, np.float32), buf)
    # the first update copies (the caller holds the buffer), the other seven are in place
    assert len(copies) == 1
    assert not buf.any()


I1_COMPARE_LOOP = """
func.func @main(%p0: tensor<i1>, %q0: tensor<i1>) -> (tensor<i32>, tensor<6xi32>) {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %z = stablehlo.constant dense<0> : tensor<6xi32>
  %r:4 = stablehlo.while(%i = %c0, %p = %p0, %q = %q0, %acc = %z) : tensor<i32>, tensor<i1>, tensor<i1>, tensor<6xi32>
   cond {
    %n = stablehlo.constant dense<9> : tensor<i32>
    %lt = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %i2 = stablehlo.add %i, %one : tensor<i32>
    %e = stablehlo.compare EQ, %p, %q, UNSIGNED : (tensor<i1>, tensor<i1>) -> tensor<i1>
    %ne = stablehlo.compare NE, %p, %q, UNSIGNED : (tensor<i1>, tensor<i1>) -> tensor<i1>
    %l = stablehlo.compare LT, %p, %q, SIGNED : (tensor<i1>, tensor<i1>) -> tensor<i1>
    %le = stablehlo.compare LE, %p, %q, UNSIGNED : (tensor<i1>, tensor<i1>) -> tensor<i1>
    %g = stablehlo.compare GT, %p, %q : (tensor<i1>, tensor<i1>) -> tensor<i1>
    %ge = stablehlo.compare GE, %p, %q, SIGNED : (tensor<i1>, tensor<i1>) -> tensor<i1>
    %e1 = stablehlo.reshape %e : (tensor<i1>) -> tensor<1xi1>
    %ne1 = stablehlo.reshape %ne : (tensor<i1>) -> tensor<1xi1>
    %l1 = stablehlo.reshape %l : (tensor<i1>) -> tensor<1xi1>
    %le1 = stablehlo.reshape %le : (tensor<i1>) -> tensor<1xi1>
    %g1 = stablehlo.reshape %g : (tensor<i1>) -> tensor<1xi1>
    %ge1 = stablehlo.reshape %ge : (tensor<i1>) -> tensor<1xi1>
    %v = stablehlo.concatenate %e1, %ne1, %l1, %le1, %g1, %ge1, dim = 0 : (tensor<1xi1>, tensor<1xi1>, tensor<1xi1>, tensor<1xi1>, tensor<1xi1>, tensor<1xi1>) -> tensor<6xi1>
    %w = stablehlo.convert %v : (tensor<6xi1>) -> tensor<6xi32>
    %acc2 = stablehlo.add %acc, %w : tensor<6xi32>
    %p2 = stablehlo.xor %p, %q : tensor<i1>
    %q2 = stablehlo.compare LT, %p, %q, UNSIGNED : (tensor<i1>, tensor<i1>) -> tensor<i1>
    %q3 = stablehlo.compare NE, %q2, %ne, UNSIGNED : (tensor<i1>, tensor<i1>) -> tensor<i1>
    stablehlo.return %i2, %p2, %q3, %acc2 : tensor<i32>, tensor<i1>, tensor<i1>, tensor<6xi32>
  }
  return %r#0, %r#3 : tensor<i32>, tensor<6xi32>
}"""


@pytest.mark.parametrize("p", [False, True])
@pytest.mark.parametrize("q", [False, True])
def test_i1_comparisons_in_a_compiled_loop_match(p, q):
    _both(I1_COMPARE_LOOP, np.bool_(p), np.bool_(q))


def test_i1_comparison_functions_match_numpy():
    import itertools
    a = np.array([False, False, True, True])
    b = np.array([False, True, False, True])
    for d, fn in plan._CMP_I1.items():
        want = plan._CMP[d](a, b)
        assert (fn(a, b) == want).all() and fn(a, b).dtype == want.dtype
        for x, y in itertools.product([np.False_, np.True_], repeat=2):
            got = fn(x, y)
            assert got.__class__ is np.bool_ and got == plan._CMP[d](x, y)


FUSED_LOOP = """
func.func @main(%x0: tensor<4xi32>, %d0: tensor<i32>) -> (tensor<i32>, tensor<4xi32>) {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %r:3 = stablehlo.while(%i = %c0, %x = %x0, %d = %d0) : tensor<i32>, tensor<4xi32>, tensor<i32>
   cond {
    %n = stablehlo.constant dense<30> : tensor<i32>
    %lt = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %i2 = stablehlo.add %i, %one : tensor<i32>
    %b = stablehlo.broadcast_in_dim %i, dims = [] : (tensor<i32>) -> tensor<4xi32>
    %y = stablehlo.add %x, %b : tensor<4xi32>
    %d2 = stablehlo.subtract %d, %one : tensor<i32>
    %k = stablehlo.custom_call @CHECK_D(%d2) : (tensor<i32>) -> tensor<i32>
    stablehlo.return %i2, %y, %d : tensor<i32>, tensor<4xi32>, tensor<i32>
  }
  return %r#0, %r#1 : tensor<i32>, tensor<4xi32>
}"""


def test_fused_loop_swaps_and_carries_values_as_the_blocks_do():
    # results that are body arguments (returned in another position) are read before stored
    src = """
func.func @main(%a0: tensor<i32>, %b0: tensor<i32>) -> (tensor<i32>, tensor<i32>, tensor<i32>) {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %r:3 = stablehlo.while(%i = %c0, %a = %a0, %b = %b0) : tensor<i32>, tensor<i32>, tensor<i32>
   cond {
    %n = stablehlo.constant dense<7> : tensor<i32>
    %lt = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %i2 = stablehlo.add %i, %one : tensor<i32>
    %s = stablehlo.add %a, %b : tensor<i32>
    stablehlo.return %i2, %b, %s : tensor<i32>, tensor<i32>, tensor<i32>
  }
  return %r#0, %r#1, %r#2 : tensor<i32>, tensor<i32>, tensor<i32>
}"""
    out = _both(src, np.int32(1), np.int32(1))
    assert [int(v) for v in out] == [7, 21, 34]


def test_fused_loop_counts_steps_and_locates_errors(compile_at_once):
    from stablehlo_ref.limits import Limits
    src = FUSED_LOOP.replace("    %k = stablehlo.custom_call @CHECK_D(%d2) : (tensor<i32>) -> tensor<i32>\n", "")
    x = np.arange(4, dtype=np.int32)
    i, y = stablehlo_ref.run(parse(src), x, np.int32(3))
    assert int(i) == 30 and y.tolist() == [435, 436, 437, 438]
    with pytest.raises(StableHLOError, match="loop iterations"):
        stablehlo_ref.run(parse(src), x, np.int32(3), limits=Limits(max_steps=12))
    from stablehlo_ref.errors import InterpreterError
    from stablehlo_ref.interpreter.evaluator import Interpreter
    for exc in (ValueError, InterpreterError):
        seen = []

        def handler(target, op, args):
            seen.append(int(args[0]))
            if len(seen) == 10:          # in the fused part of the loop
                raise exc("bad d")
            return [args[0]]
        with pytest.raises(StableHLOError) as e:
            Interpreter(parse(FUSED_LOOP), custom_call_handler=handler).call("main", [x, np.int32(3)])
        assert "bad d" in str(e.value) and len(seen) == 10
        assert str(e.value.location).endswith(":15:10")     # the custom_call


@pytest.mark.parametrize("t", ["i8", "ui8", "i16", "ui32", "i32", "i64", "ui64"])
@pytest.mark.parametrize("name", ["stablehlo.divide", "stablehlo.remainder"])
def test_integer_divide_and_remainder_specializers_match_the_general_kernels(t, name):
    import itertools
    from stablehlo_ref.interpreter.registry import KERNELS, SPECIALIZERS
    from stablehlo_ref.ir.types import element_type
    dt = element_type(t).dtype
    ii = np.iinfo(dt)
    if dt.itemsize == 1:
        values = np.arange(ii.min, ii.max + 1)         # every pair
    else:
        values = [ii.min, ii.min + 1, ii.max - 1, ii.max, 0, 1, 2, 3, 7, 100, 12345]
        if ii.min:
            values += [-1, -2, -3, -7, -100, -12345]
    values = [dt.type(v) for v in values]
    src = f"""func.func @main(%x: tensor<{t}>, %y: tensor<{t}>) -> tensor<{t}> {{
  %r = {name} %x, %y : tensor<{t}>
  return %r : tensor<{t}>
}}"""
    op = parse(src).function("main").regions[0].blocks[0].operations[0]
    special = SPECIALIZERS[name](op)
    general = KERNELS[name]
    with np.errstate(all="ignore"):
        for a, b in itertools.product(values, values):
            got = special(None, op, a, b)
            want = np.asarray(general(None, op, np.asarray(a), np.asarray(b)))
            assert got.__class__ is dt.type and np.asarray(got).tobytes() == want.tobytes(), (a, b, got, want)


@pytest.mark.parametrize("t", ["i8", "ui8", "i32", "ui32", "i64", "ui64"])
@pytest.mark.parametrize("name", ["stablehlo.divide", "stablehlo.remainder", "stablehlo.sign"])
def test_integer_array_specializers_match_the_general_kernels(t, name):
    from stablehlo_ref.interpreter.registry import KERNELS, SPECIALIZERS
    from stablehlo_ref.ir.types import element_type
    dt = element_type(t).dtype
    ii = np.iinfo(dt)
    edge = [ii.min, ii.min + 1, ii.max - 1, ii.max, 0, 1, 2, 3, 7] + ([-1, -2, -3, -7] if ii.min else [])
    rng = np.random.default_rng(5)
    unary = name == "stablehlo.sign"
    sig = f"%x: tensor<6x{t}>" if unary else f"%x: tensor<6x{t}>, %y: tensor<6x{t}>"
    operands = "%x" if unary else "%x, %y"
    src = f"""func.func @main({sig}) -> tensor<6x{t}> {{
  %r = {name} {operands} : tensor<6x{t}>
  return %r : tensor<6x{t}>
}}"""
    op = parse(src).function("main").regions[0].blocks[0].operations[0]
    general = KERNELS[name]
    with np.errstate(all="ignore"):
        for trial in range(200):
            x = rng.choice(np.array(edge, dtype=dt), 6).astype(dt)
            if unary:
                got = SPECIALIZERS[name](op)(None, op, x)
                want = general(None, op, x)
            else:
                # divisors: any (zeros, -1), one repeated value, or known when compiling
                y = rng.choice(np.array(edge, dtype=dt), 6).astype(dt)
                if trial % 2:
                    y[:] = y[0]
                special = SPECIALIZERS[name](op, [None, y] if trial % 3 == 0 else None)
                got = special(None, op, x, y)
                want = general(None, op, x, y)
            assert got.dtype == want.dtype and got.shape == want.shape and got.tobytes() == want.tobytes()


@pytest.mark.parametrize("t", ["f32", "f64", "i8", "ui8", "i16", "i32", "ui32", "i64", "ui64"])
@pytest.mark.parametrize("name", ["stablehlo.maximum", "stablehlo.minimum"])
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_max_min_specializers_match_the_general_kernels(t, name, data):
    """maximum / minimum specialized for arrays of a native type: the general kernel's bytes
    for any bit patterns (NaN payloads, signed zeros, infinities, integer extremes), and the
    general kernel itself for what the fast path does not take (rank 0, another dtype)."""
    from stablehlo_ref.interpreter.registry import KERNELS, SPECIALIZERS
    from stablehlo_ref.ir.types import element_type
    dt = element_type(t).dtype
    udt = np.dtype(f"u{dt.itemsize}")
    n = data.draw(st.integers(1, 12))
    src = f"""func.func @main(%x: tensor<{n}x{t}>, %y: tensor<{n}x{t}>) -> tensor<{n}x{t}> {{
  %r = {name} %x, %y : tensor<{n}x{t}>
  return %r : tensor<{n}x{t}>
}}"""
    op = parse(src).function("main").regions[0].blocks[0].operations[0]
    special = SPECIALIZERS[name](op)
    assert special is not None
    general = KERNELS[name]
    top = (1 << (8 * dt.itemsize)) - 1
    nice = [0, top, 1 << (8 * dt.itemsize - 1)]
    if dt.kind == "f":
        nice += [np.array(v, dt).view(udt).item() for v in (1.0, -1.0, np.inf, -np.inf, np.nan)]
    bits = st.one_of(st.integers(0, top), st.sampled_from(nice))
    x, y = (np.array(data.draw(st.lists(bits, min_size=n, max_size=n)), dtype=udt).view(dt)
            for _ in range(2))
    with np.errstate(all="ignore"):
        got = special(None, op, x, y)
        want = general(None, op, x, y)
        assert got.dtype == want.dtype == dt and got.tobytes() == want.tobytes(), (x, y, got, want)
        # rank 0 (numpy scalars of a loop), and an operand of another dtype: the general kernel
        a, b = x[0], y[0]
        assert np.asarray(special(None, op, a, b)).tobytes() == \
            np.asarray(general(None, op, a, b)).tobytes()
        other = x.astype(np.float64 if dt != np.float64 else np.float32)
        assert np.asarray(special(None, op, other, y)).tobytes() == \
            np.asarray(general(None, op, other, y)).tobytes()


_FLOAT_SPECIALIZED = [("stablehlo.log_plus_one", 1), ("stablehlo.exponential_minus_one", 1),
                      ("stablehlo.rsqrt", 1), ("stablehlo.logistic", 1), ("stablehlo.atan2", 2),
                      ("stablehlo.power", 2), ("stablehlo.remainder", 2)]


def _elementwise_op(name, arity, ty):
    """The op of a function applying elementwise op `name` to `arity` operands of type `ty`."""
    src = f"""func.func @main({", ".join(f"%x{i}: {ty}" for i in range(arity))}) -> {ty} {{
  %r = {name} {", ".join(f"%x{i}" for i in range(arity))} : {ty}
  return %r : {ty}
}}"""
    return parse(src).function("main").regions[0].blocks[0].operations[0]


@pytest.mark.parametrize("t", ["f16", "f32", "f64"])
@pytest.mark.parametrize("name,arity", _FLOAT_SPECIALIZED)
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_float_specializers_match_the_general_kernels(t, name, arity, data):
    """log1p, expm1, rsqrt, logistic (unary) and atan2, power, a float remainder (binary)
    specialized for f32/f64 arrays: the general kernel's bytes for any bit patterns (NaN
    payloads, signed zeros, infinities, subnormals), numpy scalars as a loop passes them,
    and the general kernel itself for another dtype or shape."""
    from stablehlo_ref.interpreter.registry import KERNELS, SPECIALIZERS
    from stablehlo_ref.ir.types import element_type
    dt = element_type(t).dtype
    udt = np.dtype(f"u{dt.itemsize}")
    n = data.draw(st.integers(1, 12))
    op = _elementwise_op(name, arity, f"tensor<{n}x{t}>")
    special = SPECIALIZERS[name](op)
    if t == "f16" and arity == 2:
        assert special is None       # (binary f16 ops keep the general kernel)
        return
    assert special is not None
    general = KERNELS[name]
    top = (1 << (8 * dt.itemsize)) - 1
    nice = [0, 1, 1 << (8 * dt.itemsize - 1)] + [
        np.array(v, dt).view(udt).item()
        for v in (1.0, -1.0, 0.5, 2.0, -2.5, 1e-30, np.inf, -np.inf, np.nan)]
    bits = st.one_of(st.integers(0, top), st.sampled_from(nice))
    xs = [np.array(data.draw(st.lists(bits, min_size=n, max_size=n)), dtype=udt).view(dt)
          for _ in range(arity)]
    with np.errstate(all="ignore"):
        got = special(None, op, *xs)
        want = general(None, op, *xs)
        assert got.dtype == want.dtype == dt and got.tobytes() == want.tobytes(), (xs, got, want)
        scal = [x[0] for x in xs]
        assert np.asarray(special(None, op, *scal), dt).tobytes() == \
            np.asarray(general(None, op, *scal), dt).tobytes()
        other = [x.astype(np.float64 if dt != np.float64 else np.float32) for x in xs]
        assert np.asarray(special(None, op, *other)).tobytes() == \
            np.asarray(general(None, op, *other)).tobytes()
        if arity == 2 and n > 1:       # (shapes that broadcast: the general kernel decides)
            assert np.asarray(special(None, op, xs[0], xs[1][:1])).tobytes() == \
                np.asarray(general(None, op, xs[0], xs[1][:1])).tobytes()


@pytest.mark.parametrize("name,arity", _FLOAT_SPECIALIZED)
def test_float_specializers_leave_other_types_to_the_general_kernel(name, arity):
    from stablehlo_ref.interpreter.registry import SPECIALIZERS
    for t in ("bf16", "complex<f32>", "i32"):
        got = SPECIALIZERS[name](_elementwise_op(name, arity, f"tensor<3x{t}>"))
        # (remainder's integer specializer takes i32)
        assert got is None or (t == "i32" and name == "stablehlo.remainder"
                               and got.__name__ != "remainder_float")


@pytest.mark.parametrize("t", ["f16", "bf16", "i1", "complex<f32>"])
def test_max_min_specializers_leave_other_types_to_the_general_kernel(t):
    from stablehlo_ref.interpreter.registry import SPECIALIZERS
    for name in ("stablehlo.maximum", "stablehlo.minimum"):
        src = f"""func.func @main(%x: tensor<3x{t}>, %y: tensor<3x{t}>) -> tensor<3x{t}> {{
  %r = {name} %x, %y : tensor<3x{t}>
  return %r : tensor<3x{t}>
}}"""
        op = parse(src).function("main").regions[0].blocks[0].operations[0]
        assert SPECIALIZERS[name](op) is None


INVARIANT_LOOP = """
func.func @main(%x: tensor<4xf32>, %seg: tensor<8xi32>) -> (tensor<4xf32>, tensor<8xf32>) {
  %a = func.call @loop(%x, %seg) : (tensor<4xf32>, tensor<8xi32>) -> tensor<8xf32>
  %y = stablehlo.negate %x : tensor<4xf32>
  %b = func.call @loop(%y, %seg) : (tensor<4xf32>, tensor<8xi32>) -> tensor<8xf32>
  %c = stablehlo.add %a, %b : tensor<8xf32>
  return %x, %c : tensor<4xf32>, tensor<8xf32>
}
func.func private @loop(%x0: tensor<4xf32>, %seg0: tensor<8xi32>) -> tensor<8xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %z = stablehlo.constant dense<0.0> : tensor<8xf32>
  %r:4 = stablehlo.while(%i = %c0, %x = %x0, %seg = %seg0, %acc = %z) : tensor<i32>, tensor<4xf32>, tensor<8xi32>, tensor<8xf32>
   cond {
    %n = stablehlo.constant dense<12> : tensor<i32>
    %lt = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %i2 = stablehlo.add %i, %one : tensor<i32>
    %b = stablehlo.broadcast_in_dim %x, dims = [1] : (tensor<4xf32>) -> tensor<2x4xf32>
    %e = stablehlo.exponential %b : tensor<2x4xf32>
    %f = stablehlo.reshape %e : (tensor<2x4xf32>) -> tensor<8xf32>
    %idx = stablehlo.reshape %seg : (tensor<8xi32>) -> tensor<8x1xi32>
    %s = "stablehlo.scatter"(%acc, %idx, %f) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
    ^bb0(%p: tensor<f32>, %q: tensor<f32>):
      %t = stablehlo.add %p, %q : tensor<f32>
      stablehlo.return %t : tensor<f32>
    }) : (tensor<8xf32>, tensor<8x1xi32>, tensor<8xf32>) -> tensor<8xf32>
    stablehlo.return %i2, %x, %seg, %s : tensor<i32>, tensor<4xf32>, tensor<8xi32>, tensor<8xf32>
  }
  return %r#3 : tensor<8xf32>
}"""


def test_loop_invariant_ops_are_kept_across_iterations_and_loops(monkeypatch):
    from stablehlo_ref.interpreter import elementwise, registry
    x = np.array([0.5, -1.0, 2.0, 0.25], np.float32)
    seg = np.array([0, 3, 3, 7, 1, 0, 9, 3], np.int32)      # one out of bounds
    out = _both(INVARIANT_LOOP, x, seg)
    # the same by hand: 12 iterations adding exp(x) tiled twice into acc at seg, per loop
    def loop(v):
        acc = np.zeros(8, np.float32)
        e = np.tile(np.exp(v.astype(np.float64)).astype(np.float32), 2)
        for _ in range(12):
            for j, t in enumerate(seg):
                if 0 <= t < 8:
                    acc[t] = np.float32(acc[t] + e[j])
        return acc
    assert out[1].tobytes() == (loop(x) + loop(-x)).tobytes()
    # the exponential runs once per loop (twice), not once per iteration
    calls = []
    real = registry.KERNELS["stablehlo.exponential"]

    def counting(ctx, op, *a):
        calls.append(1)
        return real(ctx, op, *a)
    monkeypatch.setattr(plan, "_COMPILE_AFTER_RUNS", 0)
    monkeypatch.setitem(registry.KERNELS, "stablehlo.exponential", counting)
    monkeypatch.delitem(registry.SPECIALIZERS, "stablehlo.exponential")
    again = stablehlo_ref.run(parse(INVARIANT_LOOP), x, seg)
    assert again[1].tobytes() == out[1].tobytes()
    assert len(calls) == 2


def _invariant_operators_loop(n):
    T = f"tensor<{n}xf32>"
    B = f"tensor<{n}xi1>"
    return f"""
func.func @main(%v0: {T}, %w0: {T}) -> ({T}, tensor<i32>) {{
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %z = stablehlo.constant dense<0.0> : {T}
  %r:4 = stablehlo.while(%i = %c0, %v = %v0, %w = %w0, %acc = %z) : tensor<i32>, {T}, {T}, {T}
   cond {{
    %n = stablehlo.constant dense<7> : tensor<i32>
    %lt = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  }} do {{
    %one = stablehlo.constant dense<1> : tensor<i32>
    %i2 = stablehlo.add %i, %one : tensor<i32>
    %zero = stablehlo.constant dense<0.0> : {T}
    %eq = stablehlo.compare EQ, %v, %zero, FLOAT : ({T}, {T}) -> {B}
    %canon = stablehlo.select %eq, %zero, %v : {B}, {T}
    %le = stablehlo.compare LE, %canon, %w, TOTALORDER : ({T}, {T}) -> {B}
    %s = stablehlo.select %le, %v, %w : {B}, {T}
    %d = stablehlo.subtract %s, %w : {T}
    %acc2 = stablehlo.add %acc, %d : {T}
    stablehlo.return %i2, %v, %w, %acc2 : tensor<i32>, {T}, {T}, {T}
  }}
  return %r#3, %r#0 : {T}, tensor<i32>
}}"""


@pytest.mark.parametrize("n", [8, 512])
def test_loop_invariant_operators_and_selects_of_large_arrays_are_kept(n, monkeypatch):
    """Compares, selects and subtractions of loop-invariant arrays (a search's queries
    canonicalized each iteration, as jnp.searchsorted's loop does) are kept across
    iterations where the result has `_MEMO_FAST_ELEMENTS` elements or more (below, they join
    the body's sequence of operators); the results are those of the op-by-op run and of
    numpy, also for a second run on other arrays (the kept results belong to the operand
    objects they were computed from)."""
    kept = []
    real = plan._memo_runner

    def counting(run, ins, out):
        kept.append(out)
        return real(run, ins, out)
    monkeypatch.setattr(plan, "_memo_runner", counting)
    rng = np.random.default_rng(n)
    src = _invariant_operators_loop(n)
    for trial in range(2):
        v = rng.standard_normal(n).astype(np.float32)
        w = rng.standard_normal(n).astype(np.float32)
        v[:3] = [0.0, -0.0, np.nan]
        w[:3] = [-0.0, 0.0, 1.0]
        acc, i = _both(src, v, w)
        canon = np.where(v == 0, np.float32(0), v)

        def key(x):                     # (IEEE total order: -0 before +0, NaN last)
            i = x.view(np.int32).astype(np.int64)
            return np.where(i < 0, -(i & 0x7FFFFFFF) - 1, i)
        d = np.where(key(canon) <= key(w), v, w) - w
        want = np.zeros(n, np.float32)
        for _ in range(7):
            want = want + d
        assert int(i) == 7 and acc.tobytes() == want.tobytes()
    if n >= plan._MEMO_FAST_ELEMENTS:
        assert len(kept) >= 5          # (eq, canon, le, s, d: per compiled loop)
    else:
        assert not kept


def _iota_mask_program(n):
    return f"""func.func @main(%x: tensor<{n}xf32>) -> tensor<{n}xf32> {{
  %i = stablehlo.iota dim = 0 : tensor<{n}xi32>
  %c = stablehlo.constant dense<3> : tensor<{n}xi32>
  %m = stablehlo.remainder %i, %c : tensor<{n}xi32>
  %z = stablehlo.constant dense<0> : tensor<{n}xi32>
  %p = stablehlo.compare EQ, %m, %z, SIGNED : (tensor<{n}xi32>, tensor<{n}xi32>) -> tensor<{n}xi1>
  %f = stablehlo.convert %i : (tensor<{n}xi32>) -> tensor<{n}xf32>
  %y = stablehlo.multiply %x, %f : tensor<{n}xf32>
  %r = stablehlo.select %p, %y, %x : tensor<{n}xi1>, tensor<{n}xf32>
  return %r : tensor<{n}xf32>
}}"""


@pytest.mark.parametrize("n", [12, 100_000])
def test_iota_is_folded_when_a_block_is_compiled(n, monkeypatch):
    """An iota (no operands) is computed once when its block is compiled, with the ops of
    known operands after it (a mask of positions, as torchax's and jax's programs build):
    the compiled block does not run it again; one over the fold bound (256 KiB) runs each
    time. The results are the op-by-op run's and numpy's."""
    from stablehlo_ref.interpreter import registry
    calls = []
    real = registry.KERNELS["stablehlo.iota"]

    def counting(ctx, op, *a):
        calls.append(1)
        return real(ctx, op, *a)
    monkeypatch.setitem(registry.KERNELS, "stablehlo.iota", counting)
    monkeypatch.delitem(registry.SPECIALIZERS, "stablehlo.iota", raising=False)
    monkeypatch.setattr(plan, "_COMPILE_AFTER_RUNS", 0)
    x = np.random.default_rng(1).standard_normal(n).astype(np.float32)
    m = parse(_iota_mask_program(n))
    outs = [stablehlo_ref.run(m, x)[0] for _ in range(2)]     # (the first run, compiled)
    calls.clear()
    outs += [stablehlo_ref.run(m, x)[0] for _ in range(3)]
    pos = np.arange(n)
    want = np.where(pos % 3 == 0, x * pos.astype(np.float32), x)
    for o in outs:
        assert o.tobytes() == want.tobytes()
    assert len(calls) == (0 if n * 4 <= plan._FOLD_MAX_BYTES else 3)
    monkeypatch.setitem(registry.KERNELS, "stablehlo.iota", real)
    _both(_iota_mask_program(n), x)


def test_dot_general_keeps_the_arrangement_of_an_operand_only_while_it_is_the_same_object():
    from stablehlo_ref.interpreter.registry import KERNELS, SPECIALIZERS
    src = """func.func @main(%x: tensor<3x4xf32>, %w: tensor<5x4xf32>) -> tensor<3x5xf32> {
  %r = stablehlo.dot_general %x, %w, contracting_dims = [1] x [1] : (tensor<3x4xf32>, tensor<5x4xf32>) -> tensor<3x5xf32>
  return %r : tensor<3x5xf32>
}"""
    op = parse(src).function("main").regions[0].blocks[0].operations[0]
    special = SPECIALIZERS["stablehlo.dot_general"](op)
    general = KERNELS["stablehlo.dot_general"]
    rng = np.random.default_rng(3)
    w = rng.standard_normal((5, 4)).astype(np.float32)
    for _ in range(3):
        x = rng.standard_normal((3, 4)).astype(np.float32)
        assert special(None, op, x, w).tobytes() == general(None, op, x, w).tobytes()
    w2 = w + np.float32(1)                           # another object: arranged anew
    assert special(None, op, x, w2).tobytes() == general(None, op, x, w2).tobytes()
    assert special(None, op, x, w).tobytes() == general(None, op, x, w).tobytes()


@pytest.mark.parametrize("t", ["f32", "f64"])
@pytest.mark.parametrize("body", ["add", "multiply", "maximum"])
def test_float_reduce_specializer_matches_the_general_kernel(t, body):
    from stablehlo_ref.interpreter.evaluator import Interpreter
    from stablehlo_ref.interpreter.registry import KERNELS, SPECIALIZERS
    from stablehlo_ref.ir.types import element_type
    dt = element_type(t).dtype
    rng = np.random.default_rng(11)
    for dims, shape, rshape in [("[0]", "5", ""), ("[0, 1]", "3x4", ""), ("[1]", "3x4", "3x"),
                                ("[]", "3x4", "3x4x"), ("[0]", "0", "")]:
        src = f"""func.func @main(%x: tensor<{shape}x{t}>, %i: tensor<{t}>) -> tensor<{rshape}{t}> {{
  %r = stablehlo.reduce(%x init: %i) applies stablehlo.{body} across dimensions = {dims} : (tensor<{shape}x{t}>, tensor<{t}>) -> tensor<{rshape}{t}>
  return %r : tensor<{rshape}{t}>
}}"""
        module = parse(src)
        op = module.function("main").regions[0].blocks[0].operations[0]
        special = SPECIALIZERS["stablehlo.reduce"](op)
        ctx = Interpreter(module)
        for k in range(20):
            x = (rng.standard_normal([int(s) for s in shape.split("x")]) * 10).astype(dt)
            if k % 7 == 0 and x.size:
                x.flat[0] = np.nan
            for init in (dt.type(rng.standard_normal()), np.asarray(dt.type(1.5))):
                want = KERNELS["stablehlo.reduce"](ctx, op, x, init)
                got = special(ctx, op, x, init)
                assert type(got) is type(want) and np.asarray(got).dtype == np.asarray(want).dtype
                assert np.asarray(got).tobytes() == np.asarray(want).tobytes()


@pytest.mark.parametrize("body", ["add", "multiply", "maximum", "minimum", "and", "or", "xor"])
def test_bool_reduce_specializer_matches_the_general_kernel(body):
    from stablehlo_ref.interpreter.evaluator import Interpreter
    from stablehlo_ref.interpreter.registry import KERNELS, SPECIALIZERS
    rng = np.random.default_rng(12)
    for dims, shape, rshape in [("[0]", "7", ""), ("[0, 1]", "3x4", ""), ("[1]", "3x4", "3x"),
                                ("[]", "3x4", "3x4x"), ("[0]", "0", "")]:
        src = f"""func.func @main(%x: tensor<{shape}xi1>, %i: tensor<i1>) -> tensor<{rshape}i1> {{
  %r = stablehlo.reduce(%x init: %i) applies stablehlo.{body} across dimensions = {dims} : (tensor<{shape}xi1>, tensor<i1>) -> tensor<{rshape}i1>
  return %r : tensor<{rshape}i1>
}}"""
        module = parse(src)
        op = module.function("main").regions[0].blocks[0].operations[0]
        special = SPECIALIZERS["stablehlo.reduce"](op)
        ctx = Interpreter(module)
        for k in range(12):
            x = rng.random([int(s) for s in shape.split("x")]) < (k % 4) / 3
            for init in (np.bool_(k % 2), np.asarray(np.bool_(k % 3 == 0))):
                want = KERNELS["stablehlo.reduce"](ctx, op, x, init)
                got = special(ctx, op, x, init)
                assert type(got) is type(want) and np.asarray(got).dtype == np.asarray(want).dtype
                assert np.asarray(got).tobytes() == np.asarray(want).tobytes()


# ------------------------------------------------------------- one-element scatters (x.at[i].set(v))

SCATTER_LOOP = """
func.func @main(%buf: tensor<8x6xf32>) -> (tensor<8x6xf32>, tensor<8x6xf32>) {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %r:3 = stablehlo.while(%i = %c0, %b = %buf, %k = %buf) : tensor<i32>, tensor<8x6xf32>, tensor<8x6xf32>
   cond {
    %n = stablehlo.constant dense<10> : tensor<i32>
    %lt = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %i2 = stablehlo.add %i, %one : tensor<i32>
    %two = stablehlo.constant dense<2> : tensor<i32>
    %fi = stablehlo.convert %i : (tensor<i32>) -> tensor<f32>
    %v = stablehlo.add %fi, %fi : tensor<f32>
    INDEX
    BODY
  }
  return %r#1, %r#2 : tensor<8x6xf32>, tensor<8x6xf32>
}"""

SCATTER_INDEX = {
    # [i, 2] as a 2-vector (index_vector_dim 0); i reaches 8 and 9: out of bounds, skipped
    "vector": """%i1 = stablehlo.reshape %i : (tensor<i32>) -> tensor<1xi32>
    %t1 = stablehlo.reshape %two : (tensor<i32>) -> tensor<1xi32>
    %idx = stablehlo.concatenate %i1, %t1, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>""",
    # the same as a 1x2 array with index_vector_dim 1
    "row": """%i1 = stablehlo.reshape %i : (tensor<i32>) -> tensor<1x1xi32>
    %t1 = stablehlo.reshape %two : (tensor<i32>) -> tensor<1x1xi32>
    %idx = stablehlo.concatenate %i1, %t1, dim = 1 : (tensor<1x1xi32>, tensor<1x1xi32>) -> tensor<1x2xi32>""",
    # [2, i] through scatter_dims_to_operand_dims = [1, 0]
    "swapped": """%i1 = stablehlo.reshape %i : (tensor<i32>) -> tensor<1xi32>
    %t1 = stablehlo.reshape %two : (tensor<i32>) -> tensor<1xi32>
    %idx = stablehlo.concatenate %i1, %t1, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>""",
}

_SCATTER_OP = """"stablehlo.scatter"(%B, %idx, %V) <{{scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0, 1], scatter_dims_to_operand_dims = {s2o}, index_vector_dim = {ivd}>}}> ({{
    ^bb0(%p: tensor<f32>, %q: tensor<f32>):
      stablehlo.return %q : tensor<f32>
    }}) : (tensor<8x6xf32>, {it}, {ut}) -> tensor<8x6xf32>"""

SCATTER_BODIES = {
    "in_place": "%b2 = SCATTER(%b)\n    stablehlo.return %i2, %b2, %k : tensor<i32>, tensor<8x6xf32>, tensor<8x6xf32>",
    "old_read_after": "%b2 = SCATTER(%b)\n    %s = stablehlo.add %b2, %b : tensor<8x6xf32>\n"
                      "    stablehlo.return %i2, %s, %k : tensor<i32>, tensor<8x6xf32>, tensor<8x6xf32>",
    "carried_twice": "%b2 = SCATTER(%b)\n    stablehlo.return %i2, %b2, %b2 : tensor<i32>, tensor<8x6xf32>, tensor<8x6xf32>",
    "old_carried": "%b2 = SCATTER(%b)\n    stablehlo.return %i2, %b2, %b : tensor<i32>, tensor<8x6xf32>, tensor<8x6xf32>",
}


def _scatter_loop_expected(case, form, buf):
    b, k = buf.copy(), buf.copy()
    for i in range(10):
        r, c = (2, i) if form == "swapped" else (i, 2)
        b2 = b.copy()
        if r < 8 and c < 6:
            b2[r, c] = np.float32(2 * i)
        if case == "in_place":
            b = b2
        elif case == "old_read_after":
            b = b2 + b
        elif case == "carried_twice":
            b, k = b2, b2
        else:
            b, k = b2, b
    return b, k


@pytest.mark.parametrize("form", sorted(SCATTER_INDEX))
@pytest.mark.parametrize("case", sorted(SCATTER_BODIES))
def test_one_element_scatters_in_loops_match_and_leave_inputs_alone(case, form):
    s2o = "[1, 0]" if form == "swapped" else "[0, 1]"
    ivd, it = (1, "tensor<1x2xi32>") if form == "row" else (0, "tensor<2xi32>")
    op = _SCATTER_OP.format(s2o=s2o, ivd=ivd, it=it, ut="tensor<1xf32>" if form == "row" else "tensor<f32>")
    if form == "row":
        op = "%v1 = stablehlo.reshape %v : (tensor<f32>) -> tensor<1xf32>\n    %b2 = " + op.replace("%V", "%v1")
    body = SCATTER_BODIES[case].replace("%b2 = SCATTER(%b)" if form == "row" else "SCATTER(%b)",
                                        op.replace("%B", "%b").replace("%V", "%v"))
    src = SCATTER_LOOP.replace("INDEX", SCATTER_INDEX[form]).replace("BODY", body)
    buf = np.arange(48, dtype=np.float32).reshape(8, 6)
    keep = buf.copy()
    got = _both(src, buf)                           # compiled and stepwise agree
    want = _scatter_loop_expected(case, form, buf)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g), w)
    assert buf.tobytes() == keep.tobytes()          # the caller's array is never written


def test_one_element_scatter_is_made_in_place_when_nothing_else_holds_the_buffer(compile_at_once, monkeypatch):
    from stablehlo_ref.interpreter import indexing
    copies = []
    real = indexing.point_scatter_kernel

    def counting(form):
        k = real(form)

        def run(ctx, op, *a):
            copies.append(1)
            return k(ctx, op, *a)
        run.position = k.position
        run.runs_no_region = True
        return run
    monkeypatch.setattr(indexing, "point_scatter_kernel", counting)
    op = _SCATTER_OP.format(s2o="[0, 1]", ivd=0, it="tensor<2xi32>", ut="tensor<f32>").replace("%B", "%b").replace("%V", "%v")
    src = SCATTER_LOOP.replace("INDEX", SCATTER_INDEX["vector"]).replace(
        "BODY", SCATTER_BODIES["in_place"].replace("SCATTER(%b)", op))
    buf = np.zeros((8, 6), np.float32)
    out = stablehlo_ref.run(parse(src), buf)
    # the first update copies (the caller holds the buffer), the other nine are in place
    assert len(copies) == 1
    assert not buf.any()
    assert [float(out[0][i, 2]) for i in range(8)] == [2.0 * i for i in range(8)]


LONE_STEPS = """
func.func @main(%x0: tensor<3xf32>, %y: tensor<3xf32>, %p: tensor<3xi1>) -> (tensor<3xf32>, tensor<f32>) {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %d0 = stablehlo.constant dense<0.0> : tensor<f32>
  %w:3 = stablehlo.while(%i = %c0, %x = %x0, %dd = %d0) : tensor<i32>, tensor<3xf32>, tensor<f32>
   cond {
    %n = stablehlo.constant dense<3> : tensor<i32>
    %lt = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %n3 = stablehlo.constant dense<3> : tensor<i32>
    %i2 = stablehlo.add %i, %one : tensor<i32>
    %c = stablehlo.constant dense<0.0> : tensor<f32>
    %a = stablehlo.OPA %x, %y : tensor<3xf32>
    %r = stablehlo.reduce(%a init: %c) applies stablehlo.add across dimensions = [0] : (tensor<3xf32>, tensor<f32>) -> tensor<f32>
    %b = stablehlo.broadcast_in_dim %r, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %s = stablehlo.select %p, %b, %x : tensor<3xi1>, tensor<3xf32>
    %z = stablehlo.constant dense<0> : tensor<i32>
    %k = stablehlo.remainder %i, %n3 : tensor<i32>
    %ds = stablehlo.dynamic_slice %s, %k, sizes = [2] : (tensor<3xf32>, tensor<i32>) -> tensor<2xf32>
    %q = stablehlo.OPB %ds, %ds : tensor<2xf32>
    %u = stablehlo.dynamic_update_slice %s, %q, %z : (tensor<3xf32>, tensor<2xf32>, tensor<i32>) -> tensor<3xf32>
    %e = stablehlo.tanh %u : tensor<3xf32>
    %d = stablehlo.dot_general %e, %y, contracting_dims = [0] x [0] : (tensor<3xf32>, tensor<3xf32>) -> tensor<f32>
    %m = stablehlo.OPB %s, %a : tensor<3xf32>
    stablehlo.return %i2, %m, %d : tensor<i32>, tensor<3xf32>, tensor<f32>
  }
  return %w#1, %w#2 : tensor<3xf32>, tensor<f32>
}
"""


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(["add", "multiply", "subtract", "maximum"]),
       st.sampled_from(["add", "divide", "minimum"]),
       st.lists(st.floats(-4, 4, width=32), min_size=6, max_size=6),
       st.lists(st.booleans(), min_size=3, max_size=3))
def test_steps_alone_between_other_ops_match_the_step_by_step_run(opa, opb, xs, ps):
    """A sequence step (an operator, a select) that ends up alone between other runners gets
    its own runner, made when the block is finished (`plan._LazyRunner`): the same bytes."""
    src = LONE_STEPS.replace("OPA", opa).replace("OPB", opb)
    x = np.array(xs[:3], dtype=np.float32)
    y = np.array(xs[3:], dtype=np.float32)
    _both(src, x, y, np.array(ps))


def test_identity_operand_names_are_those_it_looks_at_first():
    """`plan._identity_operand` returns early for names outside `_INT_IDENTITIES` (and
    compare): the i1 identities' names must be among them."""
    assert set(plan._I1_IDENTITIES) <= set(plan._INT_IDENTITIES)


SCAN_CASE = """
func.func @main(%xs: tensor<40xf32>, %ks: tensor<40xi32>) -> (tensor<40xf32>, tensor<f32>) {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %out0 = stablehlo.constant dense<0.0> : tensor<40xf32>
  %r:3 = stablehlo.while(%i = %c0, %c = %z, %out = %out0) : tensor<i32>, tensor<f32>, tensor<40xf32>
   cond {
    %n = stablehlo.constant dense<40> : tensor<i32>
    %lt = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  } do {
    %s = stablehlo.dynamic_slice %xs, %i, sizes = [1] : (tensor<40xf32>, tensor<i32>) -> tensor<1xf32>
    %x = stablehlo.reshape %s : (tensor<1xf32>) -> tensor<f32>
    %ks1 = stablehlo.dynamic_slice %ks, %i, sizes = [1] : (tensor<40xi32>, tensor<i32>) -> tensor<1xi32>
    %k = stablehlo.reshape %ks1 : (tensor<1xi32>) -> tensor<i32>
    %zero = stablehlo.constant dense<0.0> : tensor<f32>
    %pos = stablehlo.compare GT, %x, %zero, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %p = stablehlo.convert %pos : (tensor<i1>) -> tensor<i32>
    %sel = stablehlo.add %p, %k : tensor<i32>
    %c2 = "stablehlo.case"(%sel) ({
      %h = stablehlo.constant dense<0.9> : tensor<f32>
      %m = stablehlo.multiply %c, %h : tensor<f32>
      stablehlo.return %m : tensor<f32>
    }, {
      %a = stablehlo.add %c, %x : tensor<f32>
      stablehlo.return %a : tensor<f32>
    }, {
      %d = stablehlo.subtract %x, %c : tensor<f32>
      stablehlo.return %d : tensor<f32>
    }) : (tensor<i32>) -> tensor<f32>
    %b = stablehlo.broadcast_in_dim %c2, dims = [] : (tensor<f32>) -> tensor<1xf32>
    %o2 = stablehlo.dynamic_update_slice %out, %b, %i : (tensor<40xf32>, tensor<1xf32>, tensor<i32>) -> tensor<40xf32>
    %one = stablehlo.constant dense<1> : tensor<i32>
    %i2 = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %i2, %c2, %o2 : tensor<i32>, tensor<f32>, tensor<40xf32>
  }
  return %r#2, %r#1 : tensor<40xf32>, tensor<f32>
}"""


def test_scan_with_case_on_scalars_compiled_as_stepwise():
    """A scan whose step reads one element (dynamic_slice + reshape to rank 0), converts a
    predicate to an index (out-of-range indices: the last branch) and picks a branch by
    `case`: compiled (rank-0 values as numpy scalars) and stepwise give the same bytes, and
    the values by hand."""
    rng = np.random.default_rng(11)
    xs = rng.standard_normal(40).astype(np.float32)
    xs[[3, 9]] = [np.nan, -0.0]
    ks = rng.integers(-1, 3, 40).astype(np.int32)
    out, c = _both(SCAN_CASE, xs, ks)
    want, acc = np.zeros(40, np.float32), np.float32(0)
    for i in range(40):
        sel = int(xs[i] > 0) + int(ks[i])
        if sel == 0:
            acc = np.float32(acc * np.float32(0.9))
        elif sel == 1:
            acc = np.float32(acc + xs[i])
        else:
            acc = np.float32(xs[i] - acc)
        want[i] = acc
    assert out.tobytes() == want.tobytes() and c.tobytes() == np.float32(acc).tobytes()



NESTED_LOOPS = """
func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = stablehlo.while(%i = %c0, %a = %x) : tensor<i32>, tensor<8xf32>
   cond {
    %n = stablehlo.constant dense<30> : tensor<i32>
    %lt = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  } do {
    %z = stablehlo.constant dense<0> : tensor<i32>
    %q:2 = stablehlo.while(%j = %z, %b = %a) : tensor<i32>, tensor<8xf32>
     cond {
      %m = stablehlo.constant dense<3> : tensor<i32>
      %lt2 = stablehlo.compare LT, %j, %m, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt2 : tensor<i1>
    } do {
      %d = stablehlo.subtract %i, %j : tensor<i32>
      %df = stablehlo.convert %d : (tensor<i32>) -> tensor<f32>
      %h = stablehlo.constant dense<0.5> : tensor<8xf32>
      %bh = stablehlo.multiply %b, %h : tensor<8xf32>
      %dfb = stablehlo.broadcast_in_dim %df, dims = [] : (tensor<f32>) -> tensor<8xf32>
      %b2 = stablehlo.add %bh, %dfb : tensor<8xf32>
      %one2 = stablehlo.constant dense<1> : tensor<i32>
      %j2 = stablehlo.add %j, %one2 : tensor<i32>
      stablehlo.return %j2, %b2 : tensor<i32>, tensor<8xf32>
    }
    %one = stablehlo.constant dense<1> : tensor<i32>
    %i2 = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %i2, %q#1 : tensor<i32>, tensor<8xf32>
  }
  return %r#1 : tensor<8xf32>
}"""


def test_inner_loop_entered_again_runs_fused_as_stepwise():
    """An inner loop entered on every outer iteration (fused from its first iteration once
    its blocks are compiled): compiled and stepwise bytes, the values by hand, and the
    iterations of every entry counted against max_steps."""
    from stablehlo_ref.limits import Limits
    x = np.linspace(-2, 2, 8).astype(np.float32)
    out = _both(NESTED_LOOPS, x)[0]
    want = x.copy()
    for i in range(30):
        for j in range(3):
            want = (want * np.float32(0.5) + np.float32(i - j)).astype(np.float32)
    assert out.tobytes() == want.tobytes()
    m = parse(NESTED_LOOPS)
    for _ in range(3):
        assert stablehlo_ref.run(m, x)[0].tobytes() == want.tobytes()
    # 30 outer + 90 inner iterations: a limit below that stops the run in a later entry
    stablehlo_ref.run(parse(NESTED_LOOPS), x, limits=Limits(max_steps=120))
    with pytest.raises(StableHLOError, match="loop iterations"):
        stablehlo_ref.run(parse(NESTED_LOOPS), x, limits=Limits(max_steps=100))


# A loop body that holds a loop of its own runs step by step for its first runs, then
# compiled, on the same frame. The step-by-step runs stored the body's iota there (the same
# cached array the compiled block preloads), but not the constants of the call the compiled
# block inlines (the step-by-step run called it in a frame of its own): those must still be
# stored (they were skipped, and the reduce read None). Found through jax.scipy.optimize's
# BFGS as jax.export writes it.
PRELOAD_AFTER_STEPWISE_RUNS = """
func.func @main(%arg0: tensor<6xf32>) -> tensor<f32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %r:3 = stablehlo.while(%i = %c0, %x = %arg0, %acc = %z) : tensor<i32>, tensor<6xf32>, tensor<f32>
  cond {
    %n = stablehlo.constant dense<8> : tensor<i32>
    %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %io = stablehlo.iota dim = 0 : tensor<6xi32>
    %one = stablehlo.constant dense<1> : tensor<i32>
    %h = stablehlo.constant dense<0.5> : tensor<6xf32>
    %bc = stablehlo.broadcast_in_dim %c0, dims = [] : (tensor<i32>) -> tensor<6xi32>
    %io2 = stablehlo.add %io, %bc : tensor<6xi32>
    %iof = stablehlo.convert %io2 : (tensor<6xi32>) -> tensor<6xf32>
    %x1 = stablehlo.add %x, %iof : tensor<6xf32>
    %x2 = stablehlo.add %x1, %h : tensor<6xf32>
    %w:2 = stablehlo.while(%j = %c0, %y = %x2) : tensor<i32>, tensor<6xf32>
    cond {
      %two = stablehlo.constant dense<2> : tensor<i32>
      %q = stablehlo.compare LT, %j, %two, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %q : tensor<i1>
    } do {
      %one1 = stablehlo.constant dense<1> : tensor<i32>
      %j2 = stablehlo.add %j, %one1 : tensor<i32>
      %y2 = stablehlo.negate %y : tensor<6xf32>
      stablehlo.return %j2, %y2 : tensor<i32>, tensor<6xf32>
    }
    %m = func.call @inf_norm(%w#1) : (tensor<6xf32>) -> tensor<f32>
    %a2 = stablehlo.add %acc, %m : tensor<f32>
    %i2 = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %i2, %x2, %a2 : tensor<i32>, tensor<6xf32>, tensor<f32>
  }
  return %r#2 : tensor<f32>
}
func.func private @inf_norm(%arg0: tensor<6xf32>) -> tensor<f32> {
  %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %cst_0 = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %0 = stablehlo.abs %arg0 : tensor<6xf32>
  %1 = stablehlo.reduce(%0 init: %cst_0) applies stablehlo.maximum across dimensions = [0] : (tensor<6xf32>, tensor<f32>) -> tensor<f32>
  %2 = stablehlo.maximum %cst, %1 : tensor<f32>
  return %2 : tensor<f32>
}
"""


def test_compiled_body_preloads_inlined_constants_after_stepwise_runs():
    x = np.arange(6, dtype=np.float32) - 3
    # x_k = x + k * (iota + 0.5); the inner loop negates twice; the norm is max|x_k|
    want = sum(float(np.max(np.abs(x + (k + 1) * (np.arange(6) + 0.5)))) for k in range(8))
    module = parse(PRELOAD_AFTER_STEPWISE_RUNS)
    for _ in range(2):              # (the second run starts from the compiled blocks)
        got, = stablehlo_ref.run(module, x)
        assert got.dtype == np.float32 and float(got) == want
