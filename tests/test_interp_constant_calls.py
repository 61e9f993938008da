"""Calls to functions whose body is only constants (the @inputs/@expected functions of
jax-exported tests) return the constants without the callee being analysed or planned, and a
call none of whose results is used does not run such a callee at all. Both give what the
general path gives: results (bits, dtypes, the same object for a value returned twice) and
errors (limits, a missing resource, a wrong arity) are compared with the same program run
with a trace callback, which takes the general path everywhere."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from stablehlo_ref.errors import InterpreterError, LimitError, StableHLOError
from stablehlo_ref.interpreter import Interpreter, run
from stablehlo_ref.limits import Limits
from stablehlo_ref.text import parse

PROGRAM = """func.func @main() -> (tensor<{t}>, tensor<2x{t}>, tensor<3x{t}>, tensor<2x{t}>) {{
  %0:3 = call @inputs() : () -> (tensor<2x{t}>, tensor<2x{t}>, tensor<3x{t}>)
  %1 = call @expected() : () -> tensor<2x{t}>
  %2 = call @scalar() : () -> tensor<{t}>
  return %2, %0#0, %0#2, %0#1 : tensor<{t}>, tensor<2x{t}>, tensor<3x{t}>, tensor<2x{t}>
}}
func.func private @inputs() -> (tensor<2x{t}>, tensor<2x{t}>, tensor<3x{t}>) {{
  %c = stablehlo.constant dense<[{a}, {b}]> : tensor<2x{t}>
  %s = stablehlo.constant dense<{a}> : tensor<3x{t}>
  return %c, %c, %s : tensor<2x{t}>, tensor<2x{t}>, tensor<3x{t}>
}}
func.func private @expected() -> tensor<2x{t}> {{
  %c = stablehlo.constant dense<[{b}, {a}]> : tensor<2x{t}>
  return %c : tensor<2x{t}>
}}
func.func private @scalar() -> tensor<{t}> {{
  %c = stablehlo.constant dense<{b}> : tensor<{t}>
  return %c : tensor<{t}>
}}"""


def _general(module, *args, **kw):
    """The same run on the general path (a trace callback turns the fast paths off)."""
    return run(module, *args, trace=lambda op, values: None, **kw)


def _same(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert x.dtype == y.dtype and x.shape == y.shape
        assert np.asarray(x).tobytes() == np.asarray(y).tobytes()


def _literal(t, v):
    if t == "i1":
        return "true" if v else "false"
    if t[0] in "iu":
        return str(v)
    return repr(float(v))


@settings(max_examples=60, deadline=None)
@given(t=st.sampled_from(["i1", "i8", "i32", "i64", "ui8", "ui64", "f16", "bf16", "f32", "f64"]),
       a=st.integers(-2**63, 2**64 - 1) | st.floats(allow_nan=False, width=32),
       b=st.integers(-2**63, 2**64 - 1) | st.floats(allow_nan=False, width=32))
def test_constant_functions_give_what_the_general_path_gives(t, a, b):
    def fit(v):
        if t == "i1":
            return bool(v)
        if t[0] in "iu":
            bits = int(t.lstrip("ui"))
            lo, hi = (0, 2**bits - 1) if t[0] == "u" else (-2**(bits - 1), 2**(bits - 1) - 1)
            v = int(v) if not isinstance(v, float) else int(v) if abs(v) < 2**62 else 0
            return min(max(v, lo), hi)
        return float(v)
    src = PROGRAM.format(t=t, a=_literal(t, fit(a)), b=_literal(t, fit(b)))
    fast = run(parse(src))
    _same(fast, _general(parse(src)))


def test_a_value_returned_twice_is_one_object_as_on_the_general_path():
    src = PROGRAM.format(t="f32", a="1.5", b="2.5")
    interp = Interpreter(parse(src))
    interp.depth = 1                    # a call from inside a function, as call ops make it
    vals = interp.call("inputs", [])
    assert vals[0] is vals[1] and vals[0] is not vals[2]
    interp.depth = 0


def test_the_callees_are_not_planned_and_a_discarded_one_not_run():
    m = parse(PROGRAM.format(t="i32", a="1", b="2"))
    fns = m.functions
    interp = Interpreter(m)
    interp.call("main", [])
    for name in ("inputs", "expected", "scalar"):
        assert fns[name].regions[0].blocks[0]._cache is None
        assert (name in interp._consts or name in interp._discards) and name not in interp._entries
    assert fns["main"].regions[0].blocks[0]._cache is not None


@pytest.mark.parametrize("limits, flag", [(Limits(max_tensor_elements=2), "--max-tensor-elements"),
                                          (Limits(max_tensor_bytes=8), "--max-tensor-bytes"),
                                          (Limits(max_live_bytes=10), "--max-live-bytes")])
@pytest.mark.parametrize("callee", ["inputs", "expected"])
def test_limits_of_constant_functions_are_still_errors(limits, flag, callee):
    # @inputs' results are used, @expected's are not: both raise as on the general path
    src = """func.func @main() -> tensor<i32> {
  %0 = call @inputs() : () -> tensor<3xi32>
  %1 = call @expected() : () -> tensor<3xi32>
  %2 = stablehlo.constant dense<0> : tensor<i32>
  return %2 : tensor<i32>
}
func.func private @inputs() -> tensor<3xi32> {
  %c = stablehlo.constant dense<[1, 2, 3]> : tensor<3xi32>
  return %c : tensor<3xi32>
}
func.func private @expected() -> tensor<3xi32> {
  %c = stablehlo.constant dense<[1, 2, 3]> : tensor<3xi32>
  %d = stablehlo.constant dense<[4, 5, 6]> : tensor<3xi32>
  return %c : tensor<3xi32>
}"""
    if callee == "expected":
        src = src.replace("%0 = call @inputs() : () -> tensor<3xi32>\n", "")
    else:
        src = src.replace("%1 = call @expected() : () -> tensor<3xi32>\n", "")
    errors = []
    for go in (run, _general):
        with pytest.raises(LimitError) as e:
            go(parse(src), limits=limits)
        errors.append(str(e.value))
    assert flag in errors[0] and errors[0] == errors[1]


def test_a_discarded_call_to_a_missing_resource_still_fails():
    src = """func.func @main() -> tensor<i32> {
  %0 = call @inputs() : () -> tensor<2xi32>
  %1 = stablehlo.constant dense<0> : tensor<i32>
  return %1 : tensor<i32>
}
func.func private @inputs() -> tensor<2xi32> {
  %c = stablehlo.constant dense_resource<missing> : tensor<2xi32>
  return %c : tensor<2xi32>
}"""
    errors = []
    for go in (run, _general):
        with pytest.raises(StableHLOError) as e:
            go(parse(src))
        errors.append((type(e.value), str(e.value)))
    assert errors[0] == errors[1]


def test_a_call_with_arguments_to_a_constant_function_is_an_arity_error():
    src = """func.func @main(%x: tensor<i32>) -> tensor<i32> {
  %0 = call @k(%x) : (tensor<i32>) -> tensor<i32>
  return %0 : tensor<i32>
}
func.func private @k() -> tensor<i32> {
  %c = stablehlo.constant dense<1> : tensor<i32>
  return %c : tensor<i32>
}"""
    try:
        m = parse(src)
    except StableHLOError:
        pytest.skip("the parser refuses the mismatched call")
    for go in (run, _general):
        with pytest.raises(InterpreterError, match="takes 0 arguments"):
            go(m, np.int32(1))
