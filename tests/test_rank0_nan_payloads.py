"""Rank-0 float add/multiply/subtract/divide in compiled loop bodies and a full float reduce
with a scalar init keep the kernels' NaN payloads (numpy's scalar operators may keep the
other operand's payload than its ufuncs: `numerics.SCALAR_NAN_ORDER`)."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import stablehlo_ref
from stablehlo_ref.interpreter import control, numerics, plan, reduction
from stablehlo_ref.ir.types import ELEMENT_TYPES

_BITS = {"f16": (np.float16, np.uint16, [0x7E01, 0xFE02, 0x7C03, 0x3C00, 0x8000, 0x7C00]),
         "f32": (np.float32, np.uint32, [0x7FC00001, 0xFFC00002, 0x7F800003, 0x3F800000,
                                         0x80000000, 0x7F800000]),
         "f64": (np.float64, np.uint64, [0x7FF8000000000001, 0xFFF8000000000002,
                                         0x7FF0000000000003, 0x3FF0000000000000,
                                         0x8000000000000000, 0x7FF0000000000000])}


def _loop(t, name):
    T = f"tensor<{t}>"
    return f"""func.func @main(%n: tensor<i32>, %a: {T}, %b: {T}) -> {T} {{
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %c1 = stablehlo.constant dense<1> : tensor<i32>
  %r:3 = stablehlo.while(%i = %c0, %x = %a, %y = %b) : tensor<i32>, {T}, {T}
   cond {{
    %p = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  }} do {{
    %s = stablehlo.{name} %x, %y : {T}
    %z = stablehlo.{name} %y, %s : {T}
    %j = stablehlo.add %i, %c1 : tensor<i32>
    stablehlo.return %j, %s, %z : tensor<i32>, {T}, {T}
  }}
  return %r#1 : {T}
}}"""


def _bits(x, ut):
    return int(np.asarray(x).view(ut))


def _kernel_chain(name, t, n, a, b):
    dt, ut, _ = _BITS[t]
    uf = {"add": np.add, "multiply": np.multiply, "subtract": np.subtract, "divide": np.divide}[name]
    x, y = np.array([a], dt), np.array([b], dt)
    with np.errstate(all="ignore"):
        for _ in range(n):
            s = uf(x, y)
            y = uf(y, s)
            x = s
    return x[0]


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(sorted(_BITS)), st.sampled_from(["add", "multiply", "subtract", "divide"]),
       st.integers(0, 12), st.data())
def test_rank0_float_ops_in_loops_keep_the_kernels_nan_payloads(t, name, n, data):
    """Every run of the program (interpreted, then compiled: the fifth on), with the scalar-loop
    runner on and off, gives the bits of the ufuncs applied op by op."""
    dt, ut, pool = _BITS[t]
    a = np.array(data.draw(st.sampled_from(pool)), ut).view(dt)
    b = np.array(data.draw(st.sampled_from(pool)), ut).view(dt)
    want = _bits(_kernel_chain(name, t, n, a, b), ut)
    m = stablehlo_ref.parse(_loop(t, name))
    for _ in range(6):
        assert _bits(stablehlo_ref.run(m, np.int32(n), a, b)[0], ut) == want
    old = control.scalar_loop
    control.scalar_loop = lambda ctx, op, args: None
    try:
        m = stablehlo_ref.parse(_loop(t, name))
        for _ in range(6):
            assert _bits(stablehlo_ref.run(m, np.int32(n), a, b)[0], ut) == want
    finally:
        control.scalar_loop = old


@pytest.mark.parametrize("t", sorted(_BITS))
@pytest.mark.parametrize("body", ["add", "multiply"])
def test_full_reduce_with_a_scalar_init_keeps_the_general_paths_nan_payload(t, body):
    """A full f16/f32/f64 sum or product with a scalar init (f32/f64: the specialized
    kernel, its scalars combined by the Python operator) gives the general reduction's bits."""
    dt, ut, pool = _BITS[t]
    T = f"tensor<{t}>"
    src = f"""func.func @main(%x: tensor<3x{t}>, %i: {T}) -> {T} {{
  %r = stablehlo.reduce(%x init: %i) applies stablehlo.{body} across dimensions = [0]
     : (tensor<3x{t}>, {T}) -> {T}
  return %r : {T}
}}"""
    m = stablehlo_ref.parse(src)
    op = m.functions["main"].regions[0].blocks[0].operations[0]
    kernel = reduction.reduce_specialized(op)
    for xb in pool[:3]:
        for ib in pool[:3]:
            x = np.array([xb, pool[3], pool[4]], ut).view(dt)
            # (an init as a numpy scalar, as ops on rank-0 values make it, and as a 0-d array)
            for init in (np.array(ib, ut).view(dt)[()], np.array(ib, ut).view(dt)):
                with np.errstate(all="ignore"):     # (the general path's reduction)
                    want = _bits(reduction.reduce_with_primitive(
                        "stablehlo." + body, x, (0,), init, ELEMENT_TYPES[t]), ut)
                    if kernel is not None:
                        assert _bits(kernel(None, op, x, init), ut) == want, (hex(xb), hex(ib))
                for _ in range(6):
                    got = stablehlo_ref.run(m, x, init)[0]
                    assert _bits(got, ut) == want, (hex(xb), hex(ib))


def test_the_scalar_nan_order_table_is_probed_for_every_float_type():
    assert set(numerics.SCALAR_NAN_ORDER) == {(n, c) for n in ("add", "multiply", "subtract",
                                                               "divide") for c in "efd"}
    for (name, c), order in numerics.SCALAR_NAN_ORDER.items():
        key = ("stablehlo." + name, c)
        fn = plan._RANK0_FLOAT_OPERATORS.get(key)
        if order is None or order == "swapped" and name in ("subtract", "divide"):
            assert fn is None
        else:
            assert fn is not None
