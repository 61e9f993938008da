"""The interpreter's resource limits and hostile-but-valid programs: tensor sizes checked from
the type before a kernel allocates, live memory, loop steps, wall time, nesting depth; results
checked against the declared types; rank-0 compare; recv without send."""
import sys
import numpy as np
import pytest

import stablehlo_ref
from stablehlo_ref.errors import InterpreterError, LimitError
from stablehlo_ref.ir.core import Block, Operation, Region
from stablehlo_ref.limits import Limits
from stablehlo_ref.text import parse


def _run(src, *args, **kw):
    return stablehlo_ref.run(parse(src, "t.mlir"), *args, **kw)


@pytest.mark.parametrize("body", [
    "%r = stablehlo.iota dim = 0 : tensor<100000000000xf32>",
    "%c = stablehlo.constant dense<1.0> : tensor<f32>\n"
    "  %r = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f32>) -> tensor<100000000000xf32>",
])
def test_huge_result_is_refused_before_allocation(body):
    src = f"func.func @main() -> tensor<100000000000xf32> {{\n  {body}\n  return %r : tensor<100000000000xf32>\n}}"
    with pytest.raises(LimitError) as e:
        _run(src)
    msg = str(e.value)
    assert "--max-tensor-elements" in msg and "t.mlir:" in msg and "stablehlo." in msg


def test_tensor_bytes_limit_is_an_argument():
    src = """func.func @main() -> tensor<1000xf32> {
  %r = stablehlo.iota dim = 0 : tensor<1000xf32>
  return %r : tensor<1000xf32>
}"""
    assert _run(src)[0].shape == (1000,)
    with pytest.raises(LimitError, match="--max-tensor-bytes"):
        _run(src, limits=Limits(max_tensor_bytes=1000))


def test_live_memory_limit():
    src = """func.func @main() -> tensor<f32> {
  %a = stablehlo.iota dim = 0 : tensor<100000xf32>
  %b = stablehlo.iota dim = 0 : tensor<100000xf32>
  %s = stablehlo.add %a, %b : tensor<100000xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %r = stablehlo.reduce(%s init: %z) applies stablehlo.add across dimensions = [0] : (tensor<100000xf32>, tensor<f32>) -> tensor<f32>
  return %r : tensor<f32>
}"""
    assert float(_run(src)[0]) == pytest.approx(2 * sum(range(100000)), rel=1e-3)
    with pytest.raises(LimitError, match="--max-live-bytes") as e:
        _run(src, limits=Limits(max_live_bytes=1_000_000))
    assert "t.mlir:" in str(e.value)


INFINITE = """func.func @main() -> tensor<i32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %r = stablehlo.while(%i = %c0) : tensor<i32>
   cond {
    %t = stablehlo.constant dense<true> : tensor<i1>
    stablehlo.return %t : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %n = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %n : tensor<i32>
  }
  return %r : tensor<i32>
}"""


def test_infinite_while_stops_at_max_steps():
    with pytest.raises(LimitError, match="--max-steps") as e:
        _run(INFINITE, limits=Limits(max_steps=10_000))
    assert "stablehlo.while" in str(e.value) and "t.mlir:3" in str(e.value)


def test_infinite_while_stops_at_timeout():
    with pytest.raises(LimitError, match="--timeout"):
        _run(INFINITE, limits=Limits(timeout=0.2))


def test_recv_without_send_is_a_clear_error():
    src = """func.func @main(%t: !stablehlo.token) -> tensor<2xf32> {
  %0:2 = "stablehlo.recv"(%t) {channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, is_host_transfer = false} : (!stablehlo.token) -> (tensor<2xf32>, !stablehlo.token)
  return %0#0 : tensor<2xf32>
}"""
    with pytest.raises(InterpreterError, match="recv") as e:
        _run(src, None)
    assert "t.mlir:2" in str(e.value)


@pytest.mark.parametrize("t", ["f16", "bf16", "f32", "f64", "f8E4M3FN", "f8E5M2", "i1", "i8",
                               "i32", "i64", "ui8", "ui32", "i4", "ui4"])
def test_rank0_compare_keeps_rank0(t):
    ctype = "TOTALORDER" if t.startswith(("f", "bf")) else ("UNSIGNED" if t.startswith(("ui", "i1")) else "SIGNED")
    src = f"""func.func @main(%a: tensor<{t}>, %b: tensor<{t}>) -> (tensor<i1>, tensor<i1>) {{
  %0 = stablehlo.compare GT, %a, %b, {ctype} : (tensor<{t}>, tensor<{t}>) -> tensor<i1>
  %1 = stablehlo.compare LE, %a, %b, {ctype} : (tensor<{t}>, tensor<{t}>) -> tensor<i1>
  return %0, %1 : tensor<i1>, tensor<i1>
}}"""
    from stablehlo_ref.ir.types import element_type
    dt = element_type(t).dtype
    one, zero = np.array(1).astype(dt), np.array(0).astype(dt)
    gt, le = _run(src, one, zero)
    assert gt.shape == () and le.shape == ()
    assert bool(gt) and not bool(le)


def test_results_are_checked_against_the_declared_types():
    # an invalid program (not verified): the declared result type is not what the body makes
    src = """func.func @main(%a: tensor<2xf32>) -> tensor<3xi8> {
  return %a : tensor<2xf32>
}"""
    with pytest.raises(InterpreterError, match="does not match the declared type tensor<3xi8>"):
        _run(src, np.zeros(2, np.float32))


def _nested_case(depth):
    """@main with `depth` `case` ops nested in each other's regions, built directly (the
    text parser has its own nesting limits)."""
    m = parse("""func.func @main() -> tensor<i32> {
  %c = stablehlo.constant dense<7> : tensor<i32>
  return %c : tensor<i32>
}""")
    body = m.function("main").regions[0].blocks[0]
    const, ret = body.operations
    c = const.results[0]
    t = c.type
    inner = Block()
    inner.operations.append(Operation("stablehlo.return", [c]))
    for _ in range(depth):
        case = Operation("stablehlo.case", [c], [t], regions=[Region([inner])])
        outer = Block()
        outer.operations += [case, Operation("stablehlo.return", [case.results[0]])]
        inner = outer
    case = inner.operations[0]
    body.operations[:] = [const, case, ret]
    ret.operands = [case.results[0]]
    return m


@pytest.mark.parametrize("depth", [200, 3000])
def test_deeply_nested_regions_run(depth):
    assert int(stablehlo_ref.run(_nested_case(depth))[0]) == 7


def test_nesting_limit_is_a_located_limit_error():
    with pytest.raises(LimitError, match="--max-nesting"):
        stablehlo_ref.run(_nested_case(300), limits=Limits(max_nesting=100))


def test_deep_call_recursion_is_a_limit_error_not_recursion_error():
    src = """func.func @main() -> tensor<i32> {
  %r = func.call @f() : () -> tensor<i32>
  return %r : tensor<i32>
}
func.func @f() -> tensor<i32> {
  %r = func.call @f() : () -> tensor<i32>
  return %r : tensor<i32>
}"""
    with pytest.raises(LimitError, match="call depth"):
        _run(src)


def _sort_program(n, body, t0="f32", t1="i32"):
    return f"""func.func @main(%a: tensor<{n}x{t0}>, %b: tensor<{n}x{t1}>) -> (tensor<{n}x{t0}>, tensor<{n}x{t1}>) {{
  %r:2 = "stablehlo.sort"(%a, %b) ({{
  ^bb0(%x: tensor<{t0}>, %y: tensor<{t0}>, %i: tensor<{t1}>, %j: tensor<{t1}>):
{body}
  }}) {{dimension = 0 : i64, is_stable = true}} : (tensor<{n}x{t0}>, tensor<{n}x{t1}>) -> (tensor<{n}x{t0}>, tensor<{n}x{t1}>)
  return %r#0, %r#1 : tensor<{n}x{t0}>, tensor<{n}x{t1}>
}}"""


LEX_ASC_DESC = """    %lt = stablehlo.compare LT, %x, %y, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %eq = stablehlo.compare EQ, %x, %y, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %gt = stablehlo.compare GT, %i, %j, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %a2 = stablehlo.and %eq, %gt : tensor<i1>
    %o = stablehlo.or %lt, %a2 : tensor<i1>
    stablehlo.return %o : tensor<i1>"""

BY_ABS = """    %ax = stablehlo.abs %x : tensor<f32>
    %ay = stablehlo.abs %y : tensor<f32>
    %lt = stablehlo.compare LT, %ax, %ay, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>"""


@pytest.mark.parametrize("body,expected", [
    (LEX_ASC_DESC, lambda a, b: np.lexsort((-b.astype(np.int64), a))),
    (BY_ABS, lambda a, b: np.argsort(np.abs(a), kind="stable")),
])
def test_sort_with_custom_comparator_matches_numpy(body, expected):
    rng = np.random.default_rng(1)
    n = 3000
    a = rng.integers(-50, 50, n).astype(np.float32)
    b = rng.integers(0, 20, n).astype(np.int32)
    x, y = _run(_sort_program(n, body), a, b)
    o = expected(a, b)
    np.testing.assert_array_equal(x, a[o])
    np.testing.assert_array_equal(y, b[o])


@pytest.mark.slow
def test_sort_of_a_million_with_custom_comparator_finishes():
    rng = np.random.default_rng(0)
    n = 10 ** 6
    a = rng.integers(0, 1000, n).astype(np.float32)
    b = rng.integers(0, 100, n).astype(np.int32)
    x, y = _run(_sort_program(n, LEX_ASC_DESC), a, b)
    o = np.lexsort((-b.astype(np.int64), a))
    np.testing.assert_array_equal(x, a[o])
    np.testing.assert_array_equal(y, b[o])


@pytest.mark.parametrize("k,n", [(3, 1000), (1, 5000), (200, 1000), (0, 300)])
def test_top_k_partition_matches_stable_sort(k, n):
    from stablehlo_ref.interpreter.sorting import _top_k_order
    rng = np.random.default_rng(k)
    key = rng.integers(0, 20, (4, n))      # many ties, so the tie rule is exercised
    np.testing.assert_array_equal(_top_k_order(key, k),
                                  np.argsort(key, axis=-1, kind="stable")[:, :k])


@pytest.mark.parametrize("calls", [0, 1, 1500])
def test_a_body_run_once_lifts_the_recursion_limit_only_for_calls_and_restores_it(calls):
    # main (run once) calls a chain of `calls` functions, each running once; the chain is
    # deeper than Python's default recursion limit allows without lifting it, and the
    # limit the caller had is back after the run (as after a run that calls nothing)
    chain = "".join(
        f"func.func private @f{i}() -> tensor<i32> {{\n"
        f"  %r = func.call @f{i + 1}() : () -> tensor<i32>\n  return %r : tensor<i32>\n}}\n"
        for i in range(calls - 1))
    if calls:
        chain += (f"func.func private @f{calls - 1}() -> tensor<i32> {{\n"
                  "  %c = stablehlo.constant dense<7> : tensor<i32>\n"
                  "  %r = stablehlo.add %c, %c : tensor<i32>\n  return %r : tensor<i32>\n}\n")
        body = "%r = func.call @f0() : () -> tensor<i32>"
    else:
        body = "%r = stablehlo.constant dense<14> : tensor<i32>"
    src = f"func.func @main() -> tensor<i32> {{\n  {body}\n  return %r : tensor<i32>\n}}\n" + chain
    old = sys.getrecursionlimit()
    try:
        sys.setrecursionlimit(1000)
        assert int(_run(src)[0]) == 14
        assert sys.getrecursionlimit() == 1000
    finally:
        sys.setrecursionlimit(old)
