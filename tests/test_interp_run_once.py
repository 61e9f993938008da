"""The first run of a function body in one pass (`plan.run_once`, `plan.run_once_framed`)
against the general path (`function_info`, `plan_block`, `Plan.execute`): the same results,
and the same errors (class, message, location) at the same ops."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from stablehlo_ref.errors import StableHLOError
from stablehlo_ref.interpreter import Interpreter
from stablehlo_ref.interpreter import plan as plan_mod
from stablehlo_ref.limits import Limits
from stablehlo_ref.text import parse


def _bodies(module):
    for f in module.functions.values():
        if f.regions and f.regions[0].blocks:
            yield f.regions[0].blocks[0]


def _outcome(module, args, limits, general):
    """What running @main gives: ("ok", results) or ("error", class, message, location);
    `general`: every function body is marked as run before, so that none runs in one pass."""
    if general:
        for b in _bodies(module):
            b._cache = plan_mod.RAN_ONCE
    try:
        out = Interpreter(module, limits=limits).call("main", list(args))
    except StableHLOError as e:
        return ("error", type(e).__name__, str(e), e.location)
    return ("ok", [np.asarray(v) for v in out])


def _same(a, b):
    assert a[0] == b[0], (a, b)
    if a[0] == "error":
        assert a == b
        return
    assert len(a[1]) == len(b[1])
    for x, y in zip(a[1], b[1]):
        assert x.dtype == y.dtype and x.shape == y.shape
        np.testing.assert_array_equal(x, y)


def _check(src, args=(), limits=None, mutate=None):
    limits = limits or Limits()
    results = []
    for general in (False, True):
        m = parse(src, "t.mlir")
        if mutate is not None:
            mutate(m)
        results.append(_outcome(m, args, limits, general))
    _same(*results)
    return results[0]


# ------------------------------------------------------------------ generated programs
_UNARY = ["stablehlo.negate", "stablehlo.abs", "stablehlo.exponential", "stablehlo.sqrt"]
_BINARY = ["stablehlo.add", "stablehlo.multiply", "stablehlo.subtract", "stablehlo.maximum"]


@st.composite
def programs(draw):
    """A @main on tensor<Nxf32> values of a few sizes: elementwise ops, broadcasts, iotas,
    calls of a helper (with or without regions of its own, its results used or not), a
    `stablehlo.case` (a region op in the body: the framed one-pass run), and limits that
    some of them may exceed."""
    sizes = draw(st.lists(st.sampled_from([1, 3, 8, 5000]), min_size=1, max_size=3))
    lines = []
    vals = {}            # size -> names of values of tensor<size x f32>
    n = [0]

    def new():
        n[0] += 1
        return f"%v{n[0]}"

    def typ(k):
        return f"tensor<{k}xf32>"

    for k in sizes:
        v = new()
        lines.append(f"{v} = stablehlo.iota dim = 0 : {typ(k)}")
        vals.setdefault(k, []).append(v)
    helper_regions = draw(st.booleans())
    for _ in range(draw(st.integers(1, 12))):
        kind = draw(st.sampled_from(["unary", "binary", "broadcast", "call", "case", "const",
                                     "reduce"]))
        k = draw(st.sampled_from(sorted(vals)))
        a = draw(st.sampled_from(vals[k]))
        v = new()
        if kind == "unary":
            lines.append(f"{v} = {draw(st.sampled_from(_UNARY))} {a} : {typ(k)}")
        elif kind == "binary":
            b = draw(st.sampled_from(vals[k]))
            lines.append(f"{v} = {draw(st.sampled_from(_BINARY))} {a}, {b} : {typ(k)}")
        elif kind == "broadcast":
            k2 = draw(st.sampled_from([2, 4, 4096]))
            lines.append(f"{v} = stablehlo.broadcast_in_dim {a}, dims = [1] : "
                         f"({typ(k)}) -> tensor<{k2}x{k}xf32>")
            continue          # (a value of another type: not used further)
        elif kind == "reduce":
            # a recognized body (never run: the plain one-pass run) or one that is run
            init = new()
            lines.append(f"{init} = stablehlo.constant dense<0.0> : tensor<f32>")
            op2 = draw(st.sampled_from(["", "%q = stablehlo.negate %p : tensor<f32>\n    "]))
            ret = "%q" if op2 else "%p"
            lines.append(f'{v} = "stablehlo.reduce"({a}, {init}) ({{\n'
                         f'  ^bb0(%l: tensor<f32>, %r: tensor<f32>):\n'
                         f'    %p = stablehlo.add %l, %r : tensor<f32>\n    {op2}'
                         f'stablehlo.return {ret} : tensor<f32>\n'
                         f'  }}) {{dimensions = array<i64: 0>}} : ({typ(k)}, tensor<f32>) -> tensor<f32>')
            continue          # (a value of another type: not used further)
        elif kind == "call":
            lines.append(f"{v} = func.call @helper{'_r' if helper_regions else ''}_{k}({a}) : "
                         f"({typ(k)}) -> {typ(k)}")
        elif kind == "case":
            idx = new()
            lines.append(f"{idx} = stablehlo.constant dense<{draw(st.integers(0, 1))}> : tensor<i32>")
            lines.append(f'{v} = "stablehlo.case"({idx}) ({{\n    stablehlo.return {a} : {typ(k)}\n'
                         f'  }}, {{\n    %neg = stablehlo.negate {a} : {typ(k)}\n'
                         f'    stablehlo.return %neg : {typ(k)}\n  }}) : (tensor<i32>) -> {typ(k)}')
        else:
            lines.append(f"{v} = stablehlo.constant dense<2.5> : {typ(k)}")
        vals[k].append(v)
    k = draw(st.sampled_from(sorted(vals)))
    ret = draw(st.sampled_from(vals[k]))
    body = "\n  ".join(lines)
    helpers = []
    for s in sorted(vals):
        t = typ(s)
        helpers.append(f"func.func private @helper_{s}(%x: {t}) -> {t} {{\n"
                       f"  %y = stablehlo.add %x, %x : {t}\n  return %y : {t}\n}}")
        helpers.append(f"func.func private @helper_r_{s}(%x: {t}) -> {t} {{\n"
                       f"  %c = stablehlo.constant dense<0> : tensor<i32>\n"
                       f'  %y = "stablehlo.case"(%c) ({{\n    %z = stablehlo.multiply %x, %x : {t}\n'
                       f"    stablehlo.return %z : {t}\n  }}) : (tensor<i32>) -> {t}\n"
                       f"  return %y : {t}\n}}")
    src = (f"func.func @main() -> {typ(k)} {{\n  {body}\n  return {ret} : {typ(k)}\n}}\n"
           + "\n".join(helpers))
    limits = draw(st.sampled_from([
        Limits(),
        Limits(max_tensor_elements=4096),
        Limits(max_tensor_bytes=20000),
        Limits(max_live_bytes=draw(st.integers(1, 200_000))),
        Limits(max_nesting=0),
    ]))
    return src, limits


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_one_pass_run_matches_the_general_path(prog):
    src, limits = prog
    _check(src, limits=limits)


# ------------------------------------------------------------------ errors at the same ops
def test_a_missing_kernel_is_reported_at_its_op():
    src = """func.func @main() -> tensor<2xf32> {
  %a = stablehlo.constant dense<1.0> : tensor<2xf32>
  %b = "foo.bar"(%a) : (tensor<2xf32>) -> tensor<2xf32>
  return %b : tensor<2xf32>
}"""
    out = _check(src)
    assert out[0] == "error" and "foo.bar" in out[2] and "t.mlir:3" in out[3]


@pytest.mark.parametrize("region", [False, True])
def test_a_use_before_its_definition_is_reported_at_the_using_op(region):
    extra = ('  %c = stablehlo.constant dense<0> : tensor<i32>\n'
             '  %k = "stablehlo.case"(%c) ({\n    stablehlo.return %a : tensor<2xf32>\n'
             '  }) : (tensor<i32>) -> tensor<2xf32>\n') if region else ""
    src = f"""func.func @main() -> tensor<2xf32> {{
  %a = stablehlo.constant dense<1.0> : tensor<2xf32>
{extra}  %b = stablehlo.negate %a : tensor<2xf32>
  %d = stablehlo.add %b, %b : tensor<2xf32>
  return %d : tensor<2xf32>
}}"""

    def swap(m):
        # move the add before the negate whose result it uses
        ops = m.functions["main"].regions[0].blocks[0].operations
        i = next(j for j, o in enumerate(ops) if o.name == "stablehlo.add")
        ops[i - 1], ops[i] = ops[i], ops[i - 1]
    out = _check(src, mutate=swap)
    assert out[0] == "error" and "used before it is defined" in out[2]
    assert out[3] is not None and "stablehlo.add" in out[2]


@pytest.mark.parametrize("region", [False, True])
def test_a_failing_kernel_raises_the_same_error_with_its_location(region):
    # a dynamic_slice of a custom call the interpreter does not know fails in its kernel
    pre = ('  %c = stablehlo.constant dense<0> : tensor<i32>\n'
           '  %k = "stablehlo.case"(%c) ({\n    stablehlo.return %a : tensor<2xf32>\n'
           '  }) : (tensor<i32>) -> tensor<2xf32>\n') if region else ""
    src = f"""func.func @main() -> tensor<2xf32> {{
  %a = stablehlo.constant dense<1.0> : tensor<2xf32>
{pre}  %b = stablehlo.custom_call @no_such_target(%a) : (tensor<2xf32>) -> tensor<2xf32>
  return %b : tensor<2xf32>
}}"""
    out = _check(src)
    assert out[0] == "error" and out[3] is not None and "t.mlir:" in out[3]


@pytest.mark.parametrize("limits", [Limits(max_tensor_elements=10), Limits(max_live_bytes=100),
                                    Limits(max_tensor_bytes=50)])
@pytest.mark.parametrize("region", [False, True])
def test_limits_are_errors_at_the_same_op(limits, region):
    pre = ('  %c = stablehlo.constant dense<0> : tensor<i32>\n'
           '  %k = "stablehlo.case"(%c) ({\n    stablehlo.return %a : tensor<8xf32>\n'
           '  }) : (tensor<i32>) -> tensor<8xf32>\n') if region else ""
    src = f"""func.func @main() -> tensor<8xf32> {{
  %a = stablehlo.iota dim = 0 : tensor<8xf32>
{pre}  %b = stablehlo.broadcast_in_dim %a, dims = [1] : (tensor<8xf32>) -> tensor<4x8xf32>
  %d = stablehlo.slice %b [0:1, 0:8] : (tensor<4x8xf32>) -> tensor<1x8xf32>
  %e = stablehlo.reshape %d : (tensor<1x8xf32>) -> tensor<8xf32>
  return %e : tensor<8xf32>
}}"""
    out = _check(src, limits=limits)
    assert out[0] == "error" and "LimitError" == out[1]


def test_the_next_run_plans_the_body_and_gives_the_same_results():
    src = """func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
  %a = stablehlo.multiply %x, %x : tensor<3xf32>
  %c = stablehlo.constant dense<0> : tensor<i32>
  %k = "stablehlo.case"(%c) ({
    %n = stablehlo.negate %a : tensor<3xf32>
    stablehlo.return %n : tensor<3xf32>
  }) : (tensor<i32>) -> tensor<3xf32>
  return %k : tensor<3xf32>
}"""
    m = parse(src)
    x = np.array([1, 2, 3], np.float32)
    block = m.functions["main"].regions[0].blocks[0]
    outs = []
    for _ in range(3):
        outs.append(Interpreter(m).call("main", [x])[0])
        if len(outs) == 1:
            assert block._cache.__class__.__name__ == "Plan" and block._cache.nops == -1
    assert block._cache.nops == len(block.operations)
    for o in outs:
        np.testing.assert_array_equal(o, -(x * x))


_UNRUN = """func.func @main(%x: tensor<4xf32>, %i: tensor<2x1xi32>, %u: tensor<2xf32>)
    -> (tensor<4xf32>, tensor<f32>) {
  %s = "stablehlo.scatter"(%x, %i, %u) <{scatter_dimension_numbers = #stablehlo.scatter<
      update_window_dims = [], inserted_window_dims = [0],
      scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %m = stablehlo.maximum %a, %b : tensor<f32>
    stablehlo.return %m : tensor<f32>
  }) : (tensor<4xf32>, tensor<2x1xi32>, tensor<2xf32>) -> tensor<4xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %r = stablehlo.reduce(%s init: %z) applies stablehlo.add across dimensions = [0]
    : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
  return %s, %r : tensor<4xf32>, tensor<f32>
}"""


@pytest.mark.parametrize("limits", [Limits(), Limits(max_nesting=0), Limits(max_live_bytes=20)])
def test_a_body_whose_regions_are_never_run_runs_in_the_plain_one_pass(limits):
    """A scatter or reduce whose body is recognized never runs it: the body holding them
    takes `run_once` (no frame, no analysis of the regions), with the results and errors of
    the general path."""
    m = parse(_UNRUN)
    block = m.functions["main"].regions[0].blocks[0]
    assert plan_mod.once_uses(block) is not None
    args = [np.arange(4, dtype=np.float32), np.array([[1], [3]], np.int32),
            np.array([5, -1], np.float32)]
    out = _check(_UNRUN, args, limits)
    if limits.max_nesting == 0:
        assert out[0] == "error" and "nested" in out[2]
    elif limits.max_live_bytes == 20:
        assert out[0] == "error" and out[1] == "LimitError"
    else:
        np.testing.assert_array_equal(out[1][0], np.array([0, 5, 2, 3], np.float32))
        assert out[1][1] == 10


def test_regions_that_may_run_keep_the_framed_one_pass():
    src = _UNRUN.replace("%m = stablehlo.maximum %a, %b : tensor<f32>",
                         "%n = stablehlo.negate %b : tensor<f32>\n"
                         "    %m = stablehlo.maximum %a, %n : tensor<f32>")
    m = parse(src)
    assert plan_mod.once_uses(m.functions["main"].regions[0].blocks[0]) is None
    args = [np.arange(4, dtype=np.float32), np.array([[1], [3]], np.int32),
            np.array([5, -1], np.float32)]
    out = _check(src, args)
    np.testing.assert_array_equal(out[1][0], np.array([0, 1, 2, 3], np.float32))


@pytest.mark.parametrize("arg_quantized", [False, True])
def test_quantized_values_take_the_quantization_plan_in_one_pass(arg_quantized):
    """Ops on quantized values (made by an op, or passed in) are planned with their
    quantization plan in the one-pass run as in the general path, also after plain ops."""
    q = "tensor<3x!quant.uniform<i8:f32, 0.5:2>>"
    if arg_quantized:
        src = f"""func.func @main(%q: {q}) -> tensor<3xf32> {{
  %n = stablehlo.negate %q : {q}
  %a = stablehlo.add %n, %q : {q}
  %f = stablehlo.uniform_dequantize %a : ({q}) -> tensor<3xf32>
  return %f : tensor<3xf32>
}}"""
        args = [np.array([3, -4, 7], np.int8)]
    else:
        src = f"""func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {{
  %y = stablehlo.abs %x : tensor<3xf32>
  %q = stablehlo.uniform_quantize %y : (tensor<3xf32>) -> {q}
  %n = stablehlo.negate %q : {q}
  %a = stablehlo.add %n, %q : {q}
  %f = stablehlo.uniform_dequantize %a : ({q}) -> tensor<3xf32>
  return %f : tensor<3xf32>
}}"""
        args = [np.array([1.5, -2.25, 3.0], np.float32)]
    out = _check(src, args)
    assert out[0] == "ok"


@pytest.mark.parametrize("limits", [Limits(max_tensor_elements=10), Limits(max_tensor_bytes=50),
                                    Limits(max_live_bytes=100)])
@pytest.mark.parametrize("op", ['"foo.bar"(%a)', 'stablehlo.negate %a', '"stablehlo.while"(%a)'])
def test_a_missing_kernel_or_a_limit_is_the_error_the_plan_gives_first(limits, op):
    # (the one pass checks every result's size in the same pass that looks for quantized
    # types, and reports what the plan reports first: a missing kernel over a size limit)
    types = ": (tensor<4x8xf32>) -> (tensor<8x8xf32>, tensor<16x8xf32>)"
    if "while" in op:
        op += ' ({\n  ^bb0(%x: tensor<4x8xf32>):\n    %p = stablehlo.constant dense<false> : tensor<i1>\n' \
              '    stablehlo.return %p : tensor<i1>\n  }, {\n  ^bb0(%x: tensor<4x8xf32>):\n' \
              '    stablehlo.return %x : tensor<4x8xf32>\n  })'
        types = ": (tensor<4x8xf32>) -> tensor<4x8xf32>"
        results, ret = "%b", "%b : tensor<4x8xf32>"
        sig = "tensor<4x8xf32>"
    elif "negate" in op:
        types = ": tensor<4x8xf32>"
        results, ret = "%b", "%b : tensor<4x8xf32>"
        sig = "tensor<4x8xf32>"
    else:
        results, ret = "%b:2", "%b#0, %b#1 : tensor<8x8xf32>, tensor<16x8xf32>"
        sig = "tensor<8x8xf32>, tensor<16x8xf32>"
    src = f"""func.func @main() -> ({sig}) {{
  %a = stablehlo.constant dense<1.0> : tensor<4x8xf32>
  {results} = {op} {types}
  return {ret}
}}"""
    out = _check(src, limits=limits)
    assert out[0] == "error"


def test_a_type_checked_once_is_checked_again_against_other_limits():
    # `once_bytes` keeps a type's bytes with the limits object it checked them against: the
    # same (shared) type under other limits takes the full checks again, in either order
    src = """func.func @main() -> tensor<8xf32> {
  %a = stablehlo.iota dim = 0 : tensor<8xf32>
  %b = stablehlo.add %a, %a : tensor<8xf32>
  return %b : tensor<8xf32>
}"""
    for limits in [Limits(), Limits(max_tensor_elements=4), Limits(), Limits(max_tensor_bytes=16),
                   Limits(max_live_bytes=40), Limits(max_live_bytes=64), Limits()]:
        out = _check(src, limits=limits)
        assert (out[0] == "ok") == (limits.max_tensor_elements >= 8 and limits.max_tensor_bytes >= 32
                                    and limits.max_live_bytes >= 64), (limits, out)
        assert parse(src).functions["main"].attributes["function_type"].type.results[0]._ob[0] \
            is limits or out[0] == "error"


@pytest.mark.parametrize("body", ["add", "maximum", "minimum", "multiply"])
@pytest.mark.parametrize("et", ["f32", "bf16", "i32", "ui8"])
def test_a_reduce_recognized_for_the_one_pass_run_gives_the_general_result(body, et):
    # (`regions_not_run` keeps the recognized body on the op for the reduce kernel)
    src = f"""func.func @main() -> tensor<3x{et}> {{
  %a = stablehlo.iota dim = 1 : tensor<3x4x{et}>
  %z = stablehlo.constant dense<{"1.0" if et[0] in "fb" else "1"}> : tensor<{et}>
  %r = "stablehlo.reduce"(%a, %z) ({{
  ^bb0(%l: tensor<{et}>, %q: tensor<{et}>):
    %p = stablehlo.{body} %l, %q : tensor<{et}>
    stablehlo.return %p : tensor<{et}>
  }}) {{dimensions = array<i64: 1>}} : (tensor<3x4x{et}>, tensor<{et}>) -> tensor<3x{et}>
  return %r : tensor<3x{et}>
}}"""
    _check(src)


def test_a_reduce_whose_body_is_replaced_after_its_first_run_uses_the_new_body():
    src = """func.func @main() -> tensor<3xf32> {
  %a = stablehlo.iota dim = 1 : tensor<3x4xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %r = "stablehlo.reduce"(%a, %z) ({
  ^bb0(%l: tensor<f32>, %q: tensor<f32>):
    %p = stablehlo.add %l, %q : tensor<f32>
    stablehlo.return %p : tensor<f32>
  }) {dimensions = array<i64: 1>} : (tensor<3x4xf32>, tensor<f32>) -> tensor<3xf32>
  return %r : tensor<3xf32>
}"""
    m = parse(src)
    first = Interpreter(m).call("main", [])
    assert first[0].tolist() == [6.0, 6.0, 6.0]
    other = parse(src.replace("stablehlo.add %l", "stablehlo.maximum %l"))
    red = next(o for o in m.walk() if o.name == "stablehlo.reduce")
    red.regions[0] = next(o for o in other.walk() if o.name == "stablehlo.reduce").regions[0]
    from stablehlo_ref.interpreter import reduction
    out = reduction.reduce(Interpreter(m), red, np.arange(12, dtype=np.float32).reshape(3, 4),
                           np.float32(0))
    assert np.asarray(out).tolist() == [3.0, 7.0, 11.0]


def test_terminators_have_no_kernel():
    # `run_once` looks a terminator up only where the op has no kernel
    from stablehlo_ref.interpreter.registry import KERNELS, TERMINATORS
    assert not [t for t in TERMINATORS if t in KERNELS]


def test_an_unchecked_type_matches_no_limits():
    # `run_once` and the constant checks compare `Type._ob[0]` with the limits in force
    from stablehlo_ref.ir.types import Type, TensorType, element_type
    assert Type._ob[0] is None
    t = TensorType((3, 7, 11), element_type("f32"))
    assert t._ob[0] is None or isinstance(t._ob[0], Limits)
