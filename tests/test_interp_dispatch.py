"""The evaluator's cached dispatch: block plans, per-op caches, numpy error state."""
import numpy as np
import pytest

from stablehlo_ref.errors import NotImplementedOpError
from stablehlo_ref.interpreter import Interpreter, run
from stablehlo_ref.interpreter.registry import op_cache
from stablehlo_ref.interpreter.movement import broadcast_array
from stablehlo_ref.text import parse

PROGRAM = """
func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2x3xf32> {
  %0 = stablehlo.add %a, %b : tensor<2xf32>
  %1 = stablehlo.broadcast_in_dim %0, dims = [0] : (tensor<2xf32>) -> tensor<2x3xf32>
  return %1 : tensor<2x3xf32>
}
"""


def test_repeated_runs_reuse_the_block_plan():
    m = parse(PROGRAM)
    a = np.array([1, 2], np.float32)
    b = np.array([3, 4], np.float32)
    # the first run of a body without regions keeps no plan (`run_once`), the next one plans it
    first = run(m, a, b)[0]
    block = m.function("main").regions[0].blocks[0]
    assert block._cache is not None
    run(m, a, b)
    plan = block._cache
    assert plan.__class__.__name__ == "Plan"
    second = run(m, a, b)[0]
    assert block._cache is plan
    np.testing.assert_array_equal(first, second)
    np.testing.assert_array_equal(second, np.broadcast_to(np.array([[4], [6]], np.float32), (2, 3)))


def test_plan_is_rebuilt_when_the_block_changes():
    m = parse(PROGRAM)
    block = m.function("main").regions[0].blocks[0]
    run(m, np.zeros(2, np.float32), np.zeros(2, np.float32))
    old = block._cache
    ret = block.operations.pop()
    bcast = block.operations.pop()
    block.operations.append(ret)
    ret.operands = [block.operations[0].results[0]]
    # the function's declared result type changes with it (results are checked against it)
    from stablehlo_ref.ir.attributes import TypeAttr
    from stablehlo_ref.ir.types import FunctionType
    func = m.function("main")
    ft = func.attributes["function_type"].type
    func.attributes["function_type"] = TypeAttr(FunctionType(tuple(ft.inputs), (ret.operands[0].type,)))
    out = Interpreter(m).call("main", [np.ones(2, np.float32), np.ones(2, np.float32)])
    assert block._cache is not old
    np.testing.assert_array_equal(out[0], [2, 2])
    del bcast


def test_numpy_error_state_is_restored_after_a_run():
    before = np.geterr()
    m = parse(PROGRAM)
    big = np.array([3e38, 1], np.float32)
    out = run(m, big, big)[0]
    assert np.isinf(out[0, 0])
    assert np.geterr() == before


def test_garbage_collector_is_paused_during_a_run_and_restored():
    import gc
    src = """
func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.custom_call @probe(%a) : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}"""
    seen = []

    def handler(target, op, args):
        seen.append(gc.isenabled())
        if len(seen) == 2:
            raise ValueError("a failing custom call")
        return [args[0]]
    m = parse(src)
    x = np.ones(2, np.float32)
    assert gc.isenabled()
    Interpreter(m, custom_call_handler=handler).call("main", [x])
    assert seen == [False] and gc.isenabled()
    with pytest.raises(Exception):
        Interpreter(m, custom_call_handler=handler).call("main", [x])
    assert seen == [False, False] and gc.isenabled()
    gc.disable()
    try:
        Interpreter(m, custom_call_handler=handler).call("main", [x])
        assert not gc.isenabled()                # a process that turned it off keeps it off
    finally:
        gc.enable()


def test_unknown_op_raises_when_reached():
    m = parse(PROGRAM)
    op = m.function("main").regions[0].blocks[0].operations[0]
    op.name = "stablehlo.no_such_op"
    with pytest.raises(NotImplementedOpError):
        run(m, np.zeros(2, np.float32), np.zeros(2, np.float32))


def test_op_cache_is_per_op_and_survives():
    m = parse(PROGRAM)
    op = m.function("main").regions[0].blocks[0].operations[1]
    c = op_cache(op)
    c["x"] = 1
    assert op_cache(op)["x"] == 1
    shadow = type(op).__new__(type(op))    # made without __init__: a fresh dict every time
    assert op_cache(shadow) == {}


@pytest.mark.parametrize("shape", [(2, 3), (200, 300)])
def test_broadcast_array_small_copies_and_large_views(shape):
    x = np.arange(shape[0], dtype=np.int32)
    out = broadcast_array(x, [shape[0], 1], shape)
    np.testing.assert_array_equal(out, np.broadcast_to(x[:, None], shape))


def test_blas_threads_are_left_alone_for_single_threaded_sizes(monkeypatch):
    from stablehlo_ref.interpreter import blas

    class Fake:
        num_threads = 8

        def __init__(self):
            self.calls = []

        def set_num_threads(self, n):
            self.calls.append(n)
    fake = Fake()
    monkeypatch.setattr(blas, "_controllers", lambda: [fake])
    monkeypatch.setitem(blas._state, "current", None)
    blas.use_threads(2.0 * 4 * 5 * 6)            # a tiny dot: OpenBLAS runs it on one thread
    assert fake.calls == []
    blas.use_threads(2.0 * 256 * 512 * 64)        # a medium matmul: one thread, set once
    blas.use_threads(2.0 * 256 * 512 * 64)
    assert fake.calls == [1]
    monkeypatch.setitem(blas._state, "current", None)
