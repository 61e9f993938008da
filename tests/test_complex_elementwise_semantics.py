"""Complex element types of the elementwise ops whose complex semantics the generated suite
checks (conformance/generated: lexicographic maximum / minimum / clamp, principal-branch
inverse functions) or that have none (remainder: the spec says TBD; CHLO bessel_i1e: upstream's
legalization accepts f64/f32/f16/bf16 only): the interpreter computes the former and refuses
the latter with one clear error."""
import numpy as np
import pytest

from conformance.generated import oracles as O
from stablehlo_ref.errors import NotImplementedOpError
from stablehlo_ref.interpreter import run
from stablehlo_ref.text import parse

C64 = np.complex64


def _unary(op, et="complex<f32>", n=2):
    t = f"tensor<{n}x{et}>"
    return parse(f"""func.func @main(%a: {t}) -> {t} {{
  %0 = {op} %a : {t} -> {t}
  return %0 : {t}
}}""")


def _binary(op, et="complex<f32>", n=2, m=2):
    ta, tb, tr = f"tensor<{n}x{et}>", f"tensor<{m}x{et}>", f"tensor<{max(n, m)}x{et}>"
    if op.startswith("chlo."):
        body = f"%0 = {op} %a, %b : ({ta}, {tb}) -> {tr}"
    else:
        body = f"%0 = {op} %a, %b : {tr}"
    return parse(f"""func.func @main(%a: {ta}, %b: {tb}) -> {tr} {{
  {body}
  return %0 : {tr}
}}""")


@pytest.mark.parametrize("et,dt", [("complex<f32>", np.complex64), ("complex<f64>", np.complex128)])
def test_complex_remainder_has_no_semantics_and_is_refused(et, dt):
    a = np.array([5 + 2j, -3 + 1j], dt)
    b = np.array([2 + 1j, 1 - 1j], dt)
    with pytest.raises(NotImplementedOpError, match=r"stablehlo.remainder \(dtype complex"):
        run(_binary("stablehlo.remainder", et), a, b)
    with pytest.raises(NotImplementedOpError, match=r"chlo.broadcast_remainder \(dtype complex"):
        run(_binary("chlo.broadcast_remainder", et, 2, 1), a, b[:1])


@pytest.mark.parametrize("et,dt", [("complex<f32>", np.complex64), ("complex<f64>", np.complex128)])
def test_complex_bessel_i1e_has_no_semantics_and_is_refused(et, dt):
    with pytest.raises(NotImplementedOpError, match=r"chlo.bessel_i1e \(dtype complex"):
        run(_unary("chlo.bessel_i1e", et), np.array([1 + 1j, 0.5j], dt))


def test_complex_clamp_is_lexicographic():
    t, s = "tensor<5xcomplex<f32>>", "tensor<complex<f32>>"
    m = parse(f"""func.func @main(%lo: {s}, %x: {t}, %hi: {s}) -> {t} {{
  %0 = stablehlo.clamp %lo, %x, %hi : ({s}, {t}, {s}) -> {t}
  return %0 : {t}
}}""")
    x = np.array([-1 + 5j, -0.5 + 0.5j, 0 + 9j, 1 + 3j, 1 + 1j], C64)
    got, = run(m, np.array(-0.5 + 1j, C64), x, np.array(1 + 2j, C64))
    # below min (real), below min (same real, smaller imag), inside, above max (same real, larger
    # imag), inside (same real as max, smaller imag)
    assert got.tolist() == [-0.5 + 1j, -0.5 + 1j, 0 + 9j, 1 + 2j, 1 + 1j]


def test_complex_maximum_minimum_fall_through_to_the_imaginary_part():
    a = np.array([1 + 2j, -3 + 0j], C64)
    b = np.array([1 - 3j, -3 + 0.5j], C64)
    assert run(_binary("stablehlo.maximum"), a, b)[0].tolist() == [1 + 2j, -3 + 0.5j]
    assert run(_binary("stablehlo.minimum"), a, b)[0].tolist() == [1 - 3j, -3 + 0j]
    assert O.c_maximum(1 + 2j, 1 - 3j) == (1.0, 2.0)
    assert O.c_minimum(-3 + 0j, -3 + 0.5j) == (-3.0, 0.0)


@pytest.mark.parametrize("fn,z", [(O.c_acos, 2 + 0j), (O.c_asin, -3 + 0j), (O.c_acosh, 0.5 + 0j),
                                  (O.c_atanh, 2 + 0j), (O.c_atan, 2j), (O.c_asinh, -2j), (O.c_cbrt, -8 + 0j)])
def test_complex_oracles_leave_branch_cut_points_out(fn, z):
    with pytest.raises(ValueError, match="branch cut"):
        fn(z)


def test_complex_oracles_agree_with_numpy_off_the_cuts():
    z = 0.75 - 1.25j
    for fn, ref in [(O.c_acos, np.arccos), (O.c_asin, np.arcsin), (O.c_atan, np.arctan),
                    (O.c_acosh, np.arccosh), (O.c_asinh, np.arcsinh), (O.c_atanh, np.arctanh)]:
        assert abs(complex(fn(z)) - ref(z)) < 1e-14
    assert abs(complex(O.c_cbrt(z)) ** 3 - z) < 1e-14
    # complex atan2 restricted to real operands is the real atan2
    assert abs(complex(O.c_atan2(1.5 + 0j, 0.5 + 0j)) - np.arctan2(1.5, 0.5)) < 1e-15


# CHLO's broadcast ops admit any tensor; where the StableHLO op they legalize to (upstream's
# ChloLegalizeToStablehlo) does not admit the element type, there are no semantics to check and
# the interpreter refuses the program (it used to compute shifts on the bits of floats, complex
# and i1 values, and failed atan2 on integers with "'NoneType' object is not callable").
_NO_SEMANTICS = [("chlo.broadcast_shift_left", t) for t in ("i1", "f32", "bf16", "f8E4M3FN", "complex<f32>", "complex<f64>", "f64")] + \
    [("chlo.broadcast_shift_right_logical", t) for t in ("i1", "f16", "complex<f64>")] + \
    [("chlo.broadcast_shift_right_arithmetic", t) for t in ("i1", "f64", "f8E8M0FNU", "complex<f32>")] + \
    [("chlo.broadcast_atan2", t) for t in ("i1", "i4", "i32", "ui8", "ui64")] + \
    [(op, "i1") for op in ("chlo.broadcast_divide", "chlo.broadcast_subtract", "chlo.broadcast_power",
                           "chlo.broadcast_remainder", "chlo.broadcast_next_after", "chlo.broadcast_polygamma")] + \
    [(op, t) for op in ("chlo.broadcast_next_after", "chlo.broadcast_polygamma")
     for t in ("i8", "ui2", "i64", "complex<f32>")]


@pytest.mark.parametrize("op,et", _NO_SEMANTICS)
def test_broadcast_ops_refuse_types_their_stablehlo_op_does_not_admit(op, et):
    from conformance.generated.values import kind, make_array
    k = kind(et)
    v = {"complex": complex, "float": float, "bool": bool}.get(k, int)
    m = _binary(op, et, 2, 1)
    with pytest.raises(NotImplementedOpError, match=rf"{op} \(dtype {et}"):
        run(m, make_array([v(1), v(1)], et, (2,)), make_array([v(1)], et, (1,)))


@pytest.mark.parametrize("et", ["bf16", "f16", "f8E4M3FN", "f4E2M1FN"])
def test_broadcast_complex_of_narrow_floats_has_no_result_type(et):
    # complex<bf16> etc. are no StableHLO types (complex takes f32 or f64): the program
    # cannot be written, and the parser says so
    from stablehlo_ref.errors import ParseError
    with pytest.raises(ParseError, match=rf"complex<{et}>"):
        parse(f"""func.func @main(%a: tensor<2x{et}>, %b: tensor<1x{et}>) -> tensor<2xcomplex<{et}>> {{
  %0 = chlo.broadcast_complex %a, %b : (tensor<2x{et}>, tensor<1x{et}>) -> tensor<2xcomplex<{et}>>
  return %0 : tensor<2xcomplex<{et}>>
}}""")
