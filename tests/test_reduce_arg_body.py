"""JAX's argmax/argmin reduction body (`recognize_arg_body`) computed by whole-array
reductions (`arg_reduce`): the same bytes as the general path (`tree_reduce`, the body run
pairwise), for every input it does not hand back to that path, and the fallback where it does
(NaNs, zeros of both signs)."""
import glob
import os

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import stablehlo_ref
from stablehlo_ref.interpreter import reduction
from stablehlo_ref.interpreter.reduction import arg_reduce, recognize_arg_body, tree_reduce
from stablehlo_ref.ir.types import ELEMENT_TYPES
from stablehlo_ref.text import parse

BODY = """
   reducer(%a: tensor<@T@>, %b: tensor<@T@>) (%ia: tensor<@I@>, %ib: tensor<@I@>)  {
    %2 = stablehlo.compare  @DIR@, %a, %b,  @CT@ : (tensor<@T@>, tensor<@T@>) -> tensor<i1>
    %3 = stablehlo.compare  NE, %a, %a,  @CT@ : (tensor<@T@>, tensor<@T@>) -> tensor<i1>
    %4 = stablehlo.or %2, %3 : tensor<i1>
    %5 = stablehlo.compare  EQ, %a, %b,  @CT@ : (tensor<@T@>, tensor<@T@>) -> tensor<i1>
    %6 = stablehlo.compare  LT, %ia, %ib,  @ICT@ : (tensor<@I@>, tensor<@I@>) -> tensor<i1>
    %7 = stablehlo.and %5, %6 : tensor<i1>
    %8 = stablehlo.or %4, %7 : tensor<i1>
    %9 = stablehlo.select %4, %a, %b : tensor<i1>, tensor<@T@>
    %10 = stablehlo.select %8, %ia, %ib : tensor<i1>, tensor<@I@>
    stablehlo.return %9, %10 : tensor<@T@>, tensor<@I@>
  }
"""

PROG = """
func.func @main(%x: tensor<@S@x@T@>, %i: tensor<@S@x@I@>, %v0: tensor<@T@>, %i0: tensor<@I@>) -> (tensor<@R@@T@>, tensor<@R@@I@>) {
  %r:2 = stablehlo.reduce(%x init: %v0), (%i init: %i0) across dimensions = [@D@] : (tensor<@S@x@T@>, tensor<@S@x@I@>, tensor<@T@>, tensor<@I@>) -> (tensor<@R@@T@>, tensor<@R@@I@>)
""" + BODY + """
  func.return %r#0, %r#1 : tensor<@R@@T@>, tensor<@R@@I@>
}
"""

FLOATS = ("f16", "bf16", "f32", "f64")
INTS = ("i8", "ui8", "i16", "ui16", "i32", "ui32", "ui64", "i64")
CT = {t: "FLOAT" for t in FLOATS}
CT.update({t: ("UNSIGNED" if t.startswith("u") else "SIGNED") for t in INTS})


def _fill(text, **kw):
    for k, v in kw.items():
        text = text.replace(f"@{k}@", v)
    assert "@" not in text.replace("@main", "")
    return text


def _program(t, it, direction, shape, dims, ict=None):
    out = [d for k, d in enumerate(shape) if k not in dims]
    return _fill(PROG, T=t, I=it, DIR=direction, CT=CT[t], ICT=ict or CT[it],
                 S="x".join(map(str, shape)), R="".join(f"{d}x" for d in out),
                 D=", ".join(map(str, dims)))


def _reduce_op(src):
    m = parse(src)
    return [o for o in m.functions["main"].regions[0].blocks[0].operations
            if o.name == "stablehlo.reduce"][0]


class _Ctx:
    trace = None

    def region_runner(self, region):         # (never reached: the body runs straight)
        raise AssertionError("the body should run by its kernels")


def _general(op, x, i, v0, i0, dims):
    return tree_reduce(_Ctx(), op.regions[0], [x, i], [v0, i0], tuple(dims))


def _same(a, b):
    for x, y in zip(a, b):
        x, y = np.asarray(x), np.asarray(y)
        assert x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes(), (x, y)


def _draw_x(data, t, size, nans, zeros):
    et = ELEMENT_TYPES[t]
    dt = et.dtype
    if et.is_float:
        pool = [1.0, -1.0, 2.5, np.inf, -np.inf, 7.0, -300.0, 65504.0 if t == "f16" else 1e30]
        if zeros:
            pool += [0.0, -0.0]
        vals = np.array(data.draw(st.lists(st.sampled_from(pool), min_size=size, max_size=size)),
                        dtype=np.float64).astype(dt)
        if nans and size:
            ubits = {2: np.uint16, 4: np.uint32, 8: np.uint64}[dt.itemsize]
            if t == "bf16":
                pays = [0x7FC0, 0xFFC1, 0x7F81]
            elif t == "f16":
                pays = [0x7E00, 0xFE01, 0x7C01]
            elif t == "f32":
                pays = [0x7FC00000, 0xFFC00001, 0x7F800003]
            else:
                pays = [0x7FF8000000000000, 0xFFF8000000000005, 0x7FF0000000000001]
            view = vals.view(ubits)
            for _ in range(data.draw(st.integers(1, 3))):
                view[data.draw(st.integers(0, size - 1))] = data.draw(st.sampled_from(pays))
        return vals
    info = np.iinfo(dt)
    pool = [0, 1, 2, int(info.max), int(info.min), int(info.max) - 1]
    return np.array(data.draw(st.lists(st.sampled_from(pool), min_size=size, max_size=size)),
                    dtype=dt)


def _draw_init(data, t, kind):
    et = ELEMENT_TYPES[t]
    dt = et.dtype
    if et.is_float:
        return np.asarray(data.draw(st.sampled_from(
            [-np.inf if kind == "max" else np.inf, 0.0, -0.0, 2.5, 7.0])), dtype=np.float64).astype(dt)
    info = np.iinfo(dt)
    return np.asarray(data.draw(st.sampled_from(
        [int(info.min) if kind == "max" else int(info.max), 0, 2, int(info.max), int(info.min)])),
        dtype=dt)


SHAPES = [((15,), (0,)), ((4, 5), (1,)), ((4, 5), (0,)), ((3, 4, 2), (0, 2)), ((3, 4, 2), (2, 0)),
          ((2, 3, 4), (0, 1, 2)), ((1,), (0,)), ((6, 1), (0,)), ((3,), (0,))]


@settings(max_examples=300, deadline=None)
@given(data=st.data(), t=st.sampled_from(FLOATS + INTS), it=st.sampled_from(["i32", "ui32", "i64", "i8"]),
       direction=st.sampled_from(["GT", "LT"]), shape_dims=st.sampled_from(SHAPES),
       nans=st.booleans(), zeros=st.booleans(), iota=st.booleans())
@np.errstate(all="ignore")   # (kernels run as the interpreter runs them)
def test_arg_reduce_gives_the_general_paths_bytes(data, t, it, direction, shape_dims, nans,
                                                   zeros, iota):
    shape, dims = shape_dims
    src = _program(t, it, direction, shape, dims)
    op = _reduce_op(src)
    rec = recognize_arg_body(op.regions[0])
    assert rec is not None and rec[0] == ("max" if direction == "GT" else "min")
    size = int(np.prod(shape))
    x = _draw_x(data, t, size, nans, zeros).reshape(shape)
    idt = ELEMENT_TYPES[it].dtype
    if iota:
        i = np.broadcast_to(np.arange(shape[dims[0]], dtype=idt).reshape(
            [-1 if k == dims[0] else 1 for k in range(len(shape))]), shape).copy()
    else:
        info = np.iinfo(idt)
        i = np.array(data.draw(st.lists(st.sampled_from([0, 1, 3, int(info.max), int(info.min)]),
                                        min_size=size, max_size=size)), dtype=idt).reshape(shape)
    v0 = _draw_init(data, t, rec[0])
    i0 = np.asarray(data.draw(st.sampled_from([0, 2, int(np.iinfo(idt).max)])), dtype=idt)
    want = _general(op, x, i, v0, i0, dims)
    got = arg_reduce(rec[0], x, i, v0, i0, tuple(dims), rec[1], rec[2])
    if got is None:
        # handed back only for NaNs or zeros of both signs
        assert ELEMENT_TYPES[t].is_float and (nans or zeros)
        return
    _same(got, want)
    # and the whole program, fast and traced (a trace runs the body as a region)
    seen = []
    fast = stablehlo_ref.run(parse(src), x, i, v0, i0)
    traced = stablehlo_ref.run(parse(src), x, i, v0, i0,
                               trace=lambda op, results: seen.append(op.name))
    assert "stablehlo.select" in seen
    _same(fast, traced)
    _same(fast, want)


@settings(max_examples=100, deadline=None)
@given(data=st.data(), t=st.sampled_from(FLOATS), direction=st.sampled_from(["GT", "LT"]),
       shape_dims=st.sampled_from(SHAPES))
def test_programs_with_nans_and_signed_zeros_give_the_general_paths_bytes(data, t, direction,
                                                                          shape_dims):
    shape, dims = shape_dims
    src = _program(t, "i32", direction, shape, dims)
    size = int(np.prod(shape))
    x = _draw_x(data, t, size, data.draw(st.booleans()), True).reshape(shape)
    i = np.arange(size, dtype=np.int32).reshape(shape)
    v0 = _draw_init(data, t, "max" if direction == "GT" else "min")
    i0 = np.int32(0)
    fast = stablehlo_ref.run(parse(src), x, i, v0, i0)
    traced = stablehlo_ref.run(parse(src), x, i, v0, i0, trace=lambda op, results: None)
    _same(fast, traced)


def test_empty_reduced_dimension_gives_the_inits():
    src = _program("f32", "i32", "GT", (0, 3), (0,))
    x = np.zeros((0, 3), np.float32)
    i = np.zeros((0, 3), np.int32)
    v0, i0 = np.float32(-np.inf), np.int32(5)
    fast = stablehlo_ref.run(parse(src), x, i, v0, i0)
    traced = stablehlo_ref.run(parse(src), x, i, v0, i0, trace=lambda op, results: None)
    _same(fast, traced)
    _same(fast, [np.full(3, -np.inf, np.float32), np.full(3, 5, np.int32)])


def test_the_fallbacks():
    x = np.array([1.0, np.nan, 2.0], np.float32)
    i = np.arange(3, dtype=np.int32)
    f32, i32 = ELEMENT_TYPES["f32"], ELEMENT_TYPES["i32"]
    assert arg_reduce("max", x, i, np.float32(-np.inf), np.int32(0), (0,), f32, i32) is None
    x = np.array([-0.0, 0.0, -1.0], np.float32)
    assert arg_reduce("max", x, i, np.float32(-np.inf), np.int32(0), (0,), f32, i32) is None
    x = np.array([-0.0, -0.0, -1.0], np.float32)
    v, k = arg_reduce("max", x, i, np.float32(-np.inf), np.int32(0), (0,), f32, i32)
    assert np.signbit(v) and k == 0
    # the init wins ties by its lower index, and its bits where equal
    x = np.array([3.0, 3.0], np.float32)
    v, k = arg_reduce("max", x, np.array([4, 2], np.int32), np.float32(3.0), np.int32(1), (0,),
                      f32, i32)
    assert v == 3.0 and k == 1


def _variant(text, old, new):
    assert old in text
    return text.replace(old, new)


def test_variants_outside_the_pattern_are_not_recognized():
    base = _program("f32", "i32", "GT", (5,), (0,))
    assert recognize_arg_body(_reduce_op(base).regions[0])[0] == "max"
    bad = [
        _variant(base, "stablehlo.compare  GT, %a, %b,  FLOAT", "stablehlo.compare  GE, %a, %b,  FLOAT"),
        _variant(base, "stablehlo.compare  GT, %a, %b,  FLOAT", "stablehlo.compare  GT, %a, %b,  TOTALORDER"),
        _variant(base, "stablehlo.compare  LT, %ia, %ib,  SIGNED", "stablehlo.compare  GT, %ia, %ib,  SIGNED"),
        _variant(base, "stablehlo.compare  LT, %ia, %ib,  SIGNED", "stablehlo.compare  LT, %ia, %ib,  UNSIGNED"),
        _variant(base, "stablehlo.compare  LT, %ia, %ib,  SIGNED", "stablehlo.compare  LT, %ib, %ia,  SIGNED"),
        _variant(base, "stablehlo.select %4, %a, %b", "stablehlo.select %4, %b, %a"),
        _variant(base, "stablehlo.select %4, %a, %b", "stablehlo.select %8, %a, %b"),
        _variant(base, "stablehlo.select %8, %ia, %ib", "stablehlo.select %4, %ia, %ib"),
        _variant(base, "stablehlo.and %5, %6", "stablehlo.or %5, %6"),
        _variant(base, "stablehlo.compare  NE, %a, %a", "stablehlo.compare  NE, %b, %b"),
        _variant(base, "stablehlo.compare  EQ, %a, %b,  FLOAT", "stablehlo.compare  NE, %a, %b,  FLOAT"),
        _variant(base, "stablehlo.return %9, %10", "stablehlo.return %9, %ia"),
    ]
    for src in bad:
        op = _reduce_op(src)
        assert recognize_arg_body(op.regions[0]) is None, src


def test_a_variant_runs_by_the_general_path():
    # GE (ties keep the left operand) is not the pattern: the program still runs, by the tree
    src = _variant(_program("f32", "i32", "GT", (6,), (0,)),
                   "stablehlo.compare  GT, %a, %b,  FLOAT", "stablehlo.compare  GE, %a, %b,  FLOAT")
    x = np.array([1, 3, 3, 0, 3, 2], np.float32)
    fast = stablehlo_ref.run(parse(src), x, np.arange(6, dtype=np.int32), np.float32(-np.inf),
                             np.int32(0))
    traced = stablehlo_ref.run(parse(src), x, np.arange(6, dtype=np.int32), np.float32(-np.inf),
                               np.int32(0), trace=lambda op, results: None)
    _same(fast, traced)


TESTDATA = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "stablehlo-tests",
                        "testdata")


def test_jax_bodies_are_recognized_and_taken(monkeypatch):
    # JAX's bodies as the argmax/argmin programs hold them (argmax: GT, argmin: LT; floats
    # FLOAT, integers SIGNED/UNSIGNED): recognized, and a run computes them by `arg_reduce`
    for t in FLOATS + INTS:
        for direction in ("GT", "LT"):
            src = _program(t, "i32", direction, (15,), (0,))
            rec = recognize_arg_body(_reduce_op(src).regions[0])
            assert rec is not None and rec[0] == ("max" if direction == "GT" else "min")
            assert rec[1] is ELEMENT_TYPES[t] and rec[2] is ELEMENT_TYPES["i32"]
    calls = []
    real = reduction.arg_reduce

    def spy(*a):
        r = real(*a)
        calls.append(r is not None)
        return r
    monkeypatch.setattr(reduction, "arg_reduce", spy)
    src = _program("f32", "i32", "LT", (15,), (0,))
    x = np.arange(15, dtype=np.float32)[::-1].copy()
    out = stablehlo_ref.run(parse(src), x, np.arange(15, dtype=np.int32), np.float32(np.inf),
                            np.int32(0))
    assert calls == [True] and int(np.asarray(out[1])) == 14


@pytest.mark.skipif(not os.path.isdir(TESTDATA), reason="upstream testdata not present")
def test_testdata_argmax_bodies_are_recognized():
    files = sorted(glob.glob(os.path.join(TESTDATA, "argm*.mlir")))
    assert files
    for f in files:
        m = parse(open(f).read())
        ops = [o for fn in m.functions.values() for b in fn.regions[0].blocks
               for o in b.operations if o.name == "stablehlo.reduce"]
        assert ops and all(recognize_arg_body(o.regions[0]) is not None for o in ops), f
