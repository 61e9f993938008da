"""The cheaper first-run paths (what a first run of a freshly parsed small program pays for)
against the formulations they replace: the same results, bits and errors."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from stablehlo_ref.errors import CheckFailure, InterpreterError, StableHLOError
from stablehlo_ref.interpreter import Interpreter, check, evaluator, indexing, movement, run
from stablehlo_ref.ir.types import ELEMENT_TYPES
from stablehlo_ref.limits import Limits
from stablehlo_ref.text import parse


# ------------------------------------------------------------------ scatter dimension numbers
def _window_dims_reference(dims, rank, nu, k):
    """The checks `one_window` and `direct_targets` each made before they shared one."""
    if dims["input_batching_dims"] or dims["scatter_indices_batching_dims"]:
        return None
    uwd = dims["update_window_dims"]
    iwd = dims["inserted_window_dims"]
    s2o = dims["scatter_dims_to_operand_dims"]
    wid = [d for d in range(rank) if d not in iwd]
    if len(wid) != len(uwd) or len(s2o) != k or len(set(s2o)) != k \
            or len(set(iwd)) != len(iwd) or sorted(uwd) != uwd or len(set(uwd)) != len(uwd):
        return None
    if any(d < 0 or d >= rank for d in s2o) or any(d < 0 or d >= rank for d in iwd) \
            or any(a < 0 or a >= nu for a in uwd):
        return None
    return wid


_dims_lists = st.lists(st.integers(-2, 5), max_size=5)


@settings(max_examples=600, deadline=None)
@given(uwd=_dims_lists, iwd=_dims_lists, s2o=_dims_lists, ib=st.lists(st.integers(0, 3), max_size=1),
       rank=st.integers(0, 5), nu=st.integers(0, 5), k=st.integers(0, 5))
def test_the_shared_dimension_check_is_the_one_both_made(uwd, iwd, s2o, ib, rank, nu, k):
    dims = dict(update_window_dims=uwd, inserted_window_dims=iwd, input_batching_dims=ib,
                scatter_indices_batching_dims=ib, scatter_dims_to_operand_dims=s2o,
                index_vector_dim=0)
    assert indexing._window_dims(dims, rank, nu, k) == _window_dims_reference(dims, rank, nu, k)


# ------------------------------------------------------------------ constant callees
PROGRAM = """func.func @main() -> tensor<2x{t}> {{
  %0:3 = call @inputs() : () -> (tensor<2x{t}>, tensor<2x{t}>, tensor<3x{t}>)
  return %0#1 : tensor<2x{t}>
}}
func.func private @inputs() -> (tensor<2x{t}>, tensor<2x{t}>, tensor<3x{t}>) {{
  %c = stablehlo.constant dense<[{a}, {b}]> : tensor<2x{t}>
  %s = stablehlo.constant dense<{a}> : tensor<3x{t}>
  return %s, %c, %s : tensor<3x{t}>, tensor<2x{t}>, tensor<3x{t}>
}}"""


@settings(max_examples=40, deadline=None)
@given(t=st.sampled_from(["i1", "i8", "ui64", "f16", "bf16", "f32", "f64"]),
       a=st.integers(0, 1), b=st.integers(0, 1),
       limits=st.sampled_from([Limits(), Limits(max_tensor_elements=2), Limits(max_live_bytes=20)]))
def test_a_constant_callee_checked_and_run_in_one_pass_is_body_then_results(t, a, b, limits):
    lit = (lambda v: "true" if v else "false") if t == "i1" else \
        (lambda v: f"{v}.5") if t[0] in "fb" else str
    func = parse(PROGRAM.format(t=t, a=lit(a), b=lit(b))).functions["inputs"]
    ctx = Interpreter(parse("func.func @main() -> () {\n  return\n}"), limits=limits)
    body, out = evaluator._constants_once(ctx, func, limits)
    want = evaluator._constant_body(func, limits)
    assert body == want
    if want is None:
        assert out is None
        return
    ref = evaluator._run_constants(ctx, want)
    assert len(out) == len(ref)
    for x, y in zip(out, ref):
        assert x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes()
    assert out[0] is out[2]             # (one value returned twice is one object)


_CALLEES = [
    # (body of @f: () -> (tensor<2xf32>, ...), its result types)
    ("%c = stablehlo.constant dense<1.0> : tensor<2xf32>\n  return %c", "tensor<2xf32>"),
    ("%c = stablehlo.constant dense<1.0> : tensor<2xf32>\n  %d = stablehlo.constant dense<2.0> : tensor<3xf32>\n"
     "  return %d, %c, %d", "tensor<3xf32>, tensor<2xf32>, tensor<3xf32>"),
    ("%c = stablehlo.constant dense_resource<missing> : tensor<2xf32>\n  return %c", "tensor<2xf32>"),
    ("%c = stablehlo.constant dense<1.0> : tensor<2xf32>\n  %d = stablehlo.negate %c : tensor<2xf32>\n"
     "  return %d", "tensor<2xf32>"),
    ("%c = stablehlo.constant dense<1.0> : tensor<2xf32>\n  %t = stablehlo.tuple %c : tuple<tensor<2xf32>>\n"
     "  return %c", "tensor<2xf32>"),
    ("%c = stablehlo.constant dense<[1, 2]> : tensor<2xi64>\n  return %c", "tensor<2xi64>"),
    ("%c = stablehlo.constant dense<1.0> : tensor<4096xf32>\n  return %c", "tensor<4096xf32>"),
    ("return", ""),
]


@pytest.mark.parametrize("body,types", _CALLEES)
@pytest.mark.parametrize("limits", [Limits(), Limits(max_tensor_elements=2), Limits(max_live_bytes=20),
                                    Limits(max_tensor_bytes=10), Limits(max_live_bytes=8000)])
def test_a_discarded_callee_is_skipped_exactly_where_its_constant_body_is_literal(body, types, limits):
    src = f"func.func private @f() -> ({types}) {{\n  {body} : {types}\n}}" if types else \
        f"func.func private @f() -> () {{\n  {body}\n}}"
    func = parse(src).functions["f"]
    want = evaluator._constant_body(func, limits)
    got = evaluator._discarded_results(func, limits)
    assert got == (len(want[1]) if want is not None and want[2] else -1)
    assert evaluator._discarded_results(None, limits) == -1


def test_a_constant_callee_with_a_failing_constant_runs_the_general_way():
    src = """func.func @main() -> tensor<2xf32> {
  %0 = call @inputs() : () -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
func.func private @inputs() -> tensor<2xf32> {
  %c = stablehlo.constant dense_resource<missing> : tensor<2xf32>
  return %c : tensor<2xf32>
}"""
    errors = []
    for trace in (None, lambda op, values: None):
        with pytest.raises(InterpreterError) as e:
            run(parse(src), trace=trace)
        errors.append(str(e.value))
    assert errors[0] == errors[1]


# ------------------------------------------------------------------ check.expect_eq
_INT_TYPES = ["i1", "i8", "i16", "i32", "i64", "ui8", "ui32", "ui64"]


@settings(max_examples=300, deadline=None)
@given(name=st.sampled_from(_INT_TYPES), raw=st.lists(st.integers(0, 2**64 - 1), min_size=1, max_size=8),
       flip=st.one_of(st.none(), st.integers(0, 7)), other=st.sampled_from([None, "int64", "int32"]))
def test_identical_bytes_pass_expect_eq_as_the_elementwise_comparison_does(name, raw, flip, other):
    et = ELEMENT_TYPES[name]
    dt = et.dtype
    a = (np.array(raw, dtype=np.uint64) % 2).astype(dt) if name == "i1" else \
        np.array(raw, dtype=np.uint64).astype(np.dtype(f"u{dt.itemsize}")).view(dt)
    b = a.copy()
    if flip is not None:
        b[flip % b.size] = np.logical_not(b[flip % b.size]) if name == "i1" else b[flip % b.size] ^ dt.type(1)
    if other is not None:
        b = b.astype(other)
    want = "pass" if bool(np.all(a == b)) else "fail"
    try:
        check.expect_eq(a, b, et)
        got = "pass"
    except CheckFailure:
        got = "fail"
    assert got == want


# ------------------------------------------------------------------ movement kernels
def _clamped_reference(x_shape, sizes, starts):
    return [min(max(int(np.asarray(s).reshape(())), 0), x_shape[d] - sizes[d])
            for d, s in enumerate(starts)]


@settings(max_examples=200, deadline=None)
@given(shape=st.lists(st.integers(1, 6), min_size=1, max_size=3), data=st.data())
def test_clamped_starts_read_every_form_of_start_index_alike(shape, data):
    sizes = [data.draw(st.integers(1, n)) for n in shape]
    forms = [lambda v: np.array(v, dtype=np.int64), lambda v: np.int32(v),
             lambda v: np.array([v], dtype=np.int8), lambda v: np.array(v, dtype=np.uint64)]
    starts = []
    for _ in shape:
        v = data.draw(st.integers(-8, 8))
        form = data.draw(st.sampled_from(forms))
        starts.append(form(abs(v)) if form is forms[3] else form(v))
    assert movement._clamped_starts(tuple(shape), sizes, starts) == \
        _clamped_reference(tuple(shape), sizes, starts)


@pytest.mark.parametrize("dims, xshape", [((), ()), ((0,), (3,)), ((1,), (3,)), ((0, 1), (2, 3)),
                                          ((1, 0), (3, 2)), ((2, 0, 1), (4, 2, 3)),
                                          ((0, 2), (2, 4))])
def test_broadcast_in_dim_transposes_exactly_when_the_dims_are_out_of_order(dims, xshape):
    out_shape = (2, 3, 4)[:max(len(dims), 1)] if dims else (2, 3)
    if dims:
        out_shape = [1] * (max(dims) + 1)
        for i, d in enumerate(dims):
            out_shape[d] = xshape[i]
        out_shape = tuple(out_shape)
    x = np.arange(int(np.prod(xshape)), dtype=np.float32).reshape(xshape)
    t = lambda s: f"tensor<{'x'.join(map(str, s)) + 'x' if s else ''}f32>"  # noqa: E731
    src = f"""func.func @main(%x: {t(xshape)}) -> {t(out_shape)} {{
  %b = stablehlo.broadcast_in_dim %x, dims = [{', '.join(map(str, dims))}] : ({t(xshape)}) -> {t(out_shape)}
  return %b : {t(out_shape)}
}}"""
    got = run(parse(src), x)[0]
    order = sorted(range(len(dims)), key=dims.__getitem__)
    view = [1] * len(out_shape)
    for i, d in enumerate(dims):
        view[d] = xshape[i]
    want = np.broadcast_to(np.transpose(x, order).reshape(view), out_shape)
    np.testing.assert_array_equal(got, want)


# ------------------------------------------------------------------ recognized reduction bodies
def _recognize_reference(region):
    """`reduction.recognize_binary_body` as it was written with sets of ids."""
    from stablehlo_ref.interpreter.reduction import _PRIMITIVES
    if len(region.blocks) != 1:
        return None
    b = region.blocks[0]
    if len(b.arguments) != 2 or len(b.operations) != 2:
        return None
    inner, ret = b.operations
    if inner.name not in _PRIMITIVES or set(map(id, inner.operands)) != set(map(id, b.arguments)):
        return None
    if len(inner.operands) != 2 or len(ret.operands) != 1 or ret.operands[0] is not inner.results[0]:
        return None
    return inner.name


_BODY_OPERANDS = ["%a, %b", "%b, %a", "%a, %a", "%b, %b", "%a, %c", "%c, %c"]


@pytest.mark.parametrize("opname", ["add", "maximum", "subtract", "and"])
@pytest.mark.parametrize("operands", _BODY_OPERANDS)
@pytest.mark.parametrize("ret", ["%r", "%a", "%c"])
def test_recognized_reduce_bodies_are_the_set_based_ones(opname, operands, ret):
    from stablehlo_ref.interpreter.reduction import recognize_binary_body
    src = f"""func.func @main(%x: tensor<4xf32>, %c: tensor<f32>) -> tensor<f32> {{
  %0 = stablehlo.reduce(%x init: %c) across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
   reducer(%a: tensor<f32>, %b: tensor<f32>) {{
    %r = stablehlo.{opname} {operands} : tensor<f32>
    stablehlo.return {ret} : tensor<f32>
  }}
  return %0 : tensor<f32>
}}"""
    m = parse(src)
    op = m.functions["main"].regions[0].blocks[0].operations[0]
    assert recognize_binary_body(op.regions[0]) == _recognize_reference(op.regions[0])


# ------------------------------------------------------------------ reverse
@pytest.mark.parametrize("shape,dims", [((5,), [0]), ((4, 5), [0]), ((4, 5), [1]), ((4, 5), [0, 1]),
                                        ((4, 5), [1, 0]), ((2, 3, 4), [2, 0]), ((2, 3, 4), []),
                                        ((2, 0, 3), [1]), ((1, 2, 3, 4), [3, 1, 2])])
def test_reverse_indexes_the_view_np_flip_makes(shape, dims):
    t = "x".join(map(str, shape)) + "xi32"
    src = f"""func.func @main(%x: tensor<{t}>) -> tensor<{t}> {{
  %0 = stablehlo.reverse %x, dims = {dims} : tensor<{t}>
  return %0 : tensor<{t}>
}}"""
    op = parse(src).functions["main"].regions[0].blocks[0].operations[0]
    x = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    got = movement.reverse(None, op, x)
    want = np.flip(x, axis=tuple(dims)) if dims else x
    assert got.shape == want.shape and got.strides == want.strides
    assert got.tobytes() == want.tobytes()
    assert np.shares_memory(got, x) or not x.size


# ------------------------------------------------------------------ real / imag
@pytest.mark.parametrize("ct,rt", [("complex<f32>", "f32"), ("complex<f64>", "f64"), ("f32", "f32"),
                                   ("f64", "f64")])
@pytest.mark.parametrize("part", ["real", "imag"])
@pytest.mark.parametrize("scalar", [False, True])
def test_complex_parts_are_np_real_and_imag(ct, rt, part, scalar):
    from stablehlo_ref.interpreter import elementwise
    shape = "" if scalar else "3x"
    src = f"""func.func @main(%x: tensor<{shape}{ct}>) -> tensor<{shape}{rt}> {{
  %0 = stablehlo.{part} %x : (tensor<{shape}{ct}>) -> tensor<{shape}{rt}>
  return %0 : tensor<{shape}{rt}>
}}"""
    op = parse(src).functions["main"].regions[0].blocks[0].operations[0]
    dt = ELEMENT_TYPES[ct].dtype
    x = (np.array([1.5 - 2j, np.nan + 1j, -0.0 + np.inf * 1j]) if ct.startswith("complex")
         else np.array([1.5, np.nan, -0.0])).astype(dt)
    if scalar:
        x = x[0]
    got = getattr(elementwise, part)(None, op, x)
    rdt = ELEMENT_TYPES[rt].dtype
    if np.iscomplexobj(x):
        want = (np.real(x) if part == "real" else np.imag(x)).astype(rdt)
    else:
        want = x.copy() if part == "real" else np.zeros(np.shape(x), dtype=rdt)
    assert got.__class__ is want.__class__ and got.dtype == want.dtype
    assert np.asarray(got).tobytes() == np.asarray(want).tobytes()


@pytest.mark.parametrize("body,types", _CALLEES)
@pytest.mark.parametrize("limits", [Limits(), Limits(max_tensor_elements=2), Limits(max_live_bytes=20)])
@pytest.mark.parametrize("used", [False, True])
def test_a_call_without_args_is_call_or_call_discarded(body, types, limits, used):
    # (`run_once` calls `call_without_args` for a call op of no operands: the same results,
    # or the same error, as `call` (`call_discarded` where no result is used), first call
    # and second)
    src = f"func.func private @f() -> ({types}) {{\n  {body} : {types}\n}}" if types else \
        f"func.func private @f() -> () {{\n  {body}\n}}"

    def outcome(fast):
        m = parse(src)
        ctx = Interpreter(m, limits=limits)
        ctx.depth = 1
        got = []
        for _ in range(2):
            try:
                if fast:
                    out = ctx.call_without_args("f", used)
                else:
                    out = (ctx.call if used else ctx.call_discarded)("f", [])
            except StableHLOError as e:
                got.append((type(e).__name__, str(e)))
                continue
            got.append([None if v is None else (v.dtype, v.shape, v.tobytes()) for v in out])
        return got
    assert outcome(True) == outcome(False)
