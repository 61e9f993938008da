"""Parse and print: every chunk of the upstream corpora that parses round-trips
(`parse(print(parse(x))) == parse(x)`), in pretty and generic form."""
import math
import struct

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from corpus import SHARED, corpus_files
from stablehlo_ref import ParseError, parse, print_module
from stablehlo_ref.checkrun import split_chunks
from stablehlo_ref.ir import assert_modules_equal

FILES = corpus_files("interpret") + corpus_files("testdata") + corpus_files("math")


@pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/stablehlo-tests not present")
@pytest.mark.parametrize("rel", FILES)
def test_roundtrip(rel):
    text = (SHARED / rel).read_text()
    for chunk in split_chunks(text):
        try:
            m = parse(chunk, rel)
        except ParseError:
            continue   # parse coverage is measured by the corpus tests
        for generic in (False, True):
            printed = print_module(m, generic=generic)
            assert_modules_equal(m, parse(printed))


def test_locations_kept_and_aliases_resolved():
    text = '''
module {
  func.func @f(%a: tensor<f32> loc("x.py":1:2)) -> tensor<f32> {
    %0 = stablehlo.add %a, %a : tensor<f32> loc(#loc1)
    return %0 : tensor<f32> loc(#loc2)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc1 = loc("x.py":3:4)
#loc2 = loc(fused["a.py":1:1, callsite("f"("b.py":2:2) at "c.py":3:3)])
'''
    m = parse(text)
    add = m.functions["f"].regions[0].blocks[0].operations[0]
    assert add.location.filename == "x.py" and add.location.line == 3
    printed = print_module(m)
    assert 'loc("x.py":3:4)' in printed
    assert 'fused[' in printed and "callsite(" in printed
    m2 = parse(printed)
    assert_modules_equal(m, m2, compare_locations=True)
    assert "loc(" not in print_module(m, strip_debuginfo=True)


def test_parse_error_has_location():
    with pytest.raises(ParseError) as e:
        parse("func.func @f() {\n  %0 = stablehlo.constant dense<1> : tensor<i32>\n  %1 = stablehlo.frobnicate %0 : tensor<i32>\n}", "f.mlir")
    assert "f.mlir:3:8" in str(e.value)


def test_hex_dense_goes_through_frombuffer():
    m = parse('func.func @f() -> tensor<2xf32> {\n %0 = stablehlo.constant dense<"0x0000803F00000040"> : tensor<2xf32>\n return %0 : tensor<2xf32>\n}')
    op = m.functions["f"].regions[0].blocks[0].operations[0]
    assert list(op.attributes["value"].array) == [1.0, 2.0]


# ------------------------------------------------------------------ forward references

_FORWARD = '''func.func @main(%a: tensor<i1>, %b: tensor<f32>) -> tensor<f32> {
  %2 = "stablehlo.add"(%0, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %1 = "stablehlo.if"(%a) ({
    "stablehlo.return"(%0) : (tensor<f32>) -> ()
  }, {
    "stablehlo.return"(%b) : (tensor<f32>) -> ()
  }) : (tensor<i1>) -> tensor<f32>
  %0 = "stablehlo.negate"(%b) : (tensor<f32>) -> tensor<f32>
  "func.return"(%2) : (tensor<f32>) -> ()
}
'''


def test_forward_reference_in_generic_form_parses_and_the_verifier_reports_it():
    """MLIR's parser accepts a use before the definition (in the same region or a nested one)
    where the generic form spells its type; dominance is the verifier's check."""
    import stablehlo_ref as shlo
    m = shlo.parse(_FORWARD)
    fn = next(op for op in m.walk() if op.name == "func.func")
    ops = fn.regions[0].blocks[0].operations
    assert ops[0].operands[0] is ops[2].results[0]
    inner = ops[1].regions[0].blocks[0].operations[0]
    assert inner.operands[0] is ops[2].results[0]
    with pytest.raises(shlo.StableHLOError, match="does not dominate"):
        shlo.verify(m)
    # the ops using a later value print generic (the pretty form does not spell the type), and
    # both forms parse back to the same program
    p = shlo.print_module(m)
    assert '"stablehlo.add"(%2, %arg1)' in p and "stablehlo.negate %arg1" in p
    assert shlo.print_module(shlo.parse(p)) == p
    assert shlo.print_module(shlo.parse(shlo.print_module(m, generic=True))) == p


@pytest.mark.parametrize("edit, message", [
    (('%0 = "stablehlo.negate"', '%9 = "stablehlo.negate"'), r"2:24: use of undefined value '%0'"),
    (('(%b) : (tensor<f32>) -> tensor<f32>\n  "func', '(%b) : (tensor<f32>) -> tensor<i32>\n  "func'),
     r"8:3: definition of SSA value '%0' has type tensor<i32>, but it was used before with type tensor<f32>"),
    (('%2 = "stablehlo.add"(%0, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>', '%2 = stablehlo.add %0, %b : tensor<f32>'),
     r"2:22: use of undefined value '%0'"),
])
def test_forward_reference_errors(edit, message):
    import stablehlo_ref as shlo
    text = _FORWARD.replace(*edit)
    assert text != _FORWARD
    with pytest.raises(shlo.StableHLOError, match=message):
        shlo.parse(text, "f.mlir")


def test_forward_reference_into_a_sibling_region_is_not_resolved():
    """A value defined inside one region is not visible after it: a use in a later region
    names nothing."""
    import stablehlo_ref as shlo
    text = _FORWARD.replace('"stablehlo.return"(%b) : (tensor<f32>) -> ()\n  }',
                            '%7 = "stablehlo.negate"(%b) : (tensor<f32>) -> tensor<f32>\n'
                            '    "stablehlo.return"(%b) : (tensor<f32>) -> ()\n  }')
    text = text.replace('"func.return"(%2)', '"func.return"(%7)')
    with pytest.raises(shlo.StableHLOError, match="use of undefined value '%7'"):
        shlo.parse(text)


# findings of the issue-18 campaign round on the forward references (c8), each a regression test

def test_forward_reference_does_not_reach_into_the_next_function():
    import stablehlo_ref as shlo
    text = '''func.func @f(%x: tensor<f32>) -> tensor<f32> {
  %0 = "stablehlo.exponential"(%arg0) : (tensor<f32>) -> tensor<f32>
  func.return %0 : tensor<f32>
}
func.func @g(%arg0: tensor<f32>) -> tensor<f32> {
  func.return %arg0 : tensor<f32>
}
'''
    with pytest.raises(shlo.StableHLOError, match=r"2:32: use of undefined value '%arg0'"):
        shlo.parse(text)


def test_forward_reference_to_a_later_block_argument_prints_generic():
    import stablehlo_ref as shlo
    text = '''func.func @f(%a: tensor<f32>) {
  "stablehlo.return"(%arg2) : (tensor<i32>) -> ()
^bb1(%arg2: tensor<i32>):
  func.return
}
'''
    m = shlo.parse(text)
    p = shlo.print_module(m)
    assert '"stablehlo.return"(%' in p
    assert shlo.print_module(shlo.parse(p)) == p


@pytest.mark.parametrize("text, message", [
    ('%0 = stablehlo.dot_general %a, %a, contracting_dims = [0] x [0], algorithm = <lhs_precision_type = f32, '
     'rhs_precision_type = f32, accumulation_type = f32, lhs_component_count = 1, rhs_component_count = -1 : i64, '
     'num_primitive_operations = 1, allow_imprecise_accumulation = false> : (tensor<2xf32>, tensor<2xf32>) -> tensor<f32>',
     "expected an integer for rhs_component_count"),
    ('%0 = stablehlo.uniform_quantize %a : (tensor<2xf32>) -> tensor<2x!quant.uniform<i8:f32, 0x7FF8000000000000>>',
     "illegal scale"),
    ('%0 = stablehlo.uniform_quantize %a : (tensor<2xf32>) -> tensor<2x!quant.uniform<i8:f32, -1.0>>',
     "illegal scale"),
])
def test_campaign_findings_are_clear_errors(text, message):
    import stablehlo_ref as shlo
    src = f"func.func @f(%a: tensor<2xf32>) {{\n  {text}\n  func.return\n}}\n"
    with pytest.raises(shlo.StableHLOError, match=message):
        shlo.parse(src)


def test_reduce_precision_past_int32_prints_generic():
    import stablehlo_ref as shlo
    text = '''func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "stablehlo.reduce_precision"(%a) {exponent_bits = 1 : i32, mantissa_bits = 2147483648 : i32} : (tensor<2xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
'''
    m = shlo.parse(text)
    p = shlo.print_module(m)
    assert '"stablehlo.reduce_precision"' in p
    assert shlo.print_module(shlo.parse(p)) == p


def test_typed_i1_literal_is_not_an_integer_struct_field():
    """c9 finding: `index_vector_dim = -1 : i1` was taken as an integer (printed `true`)."""
    import stablehlo_ref as shlo
    text = '''func.func @f(%a: tensor<3x4xf32>, %i: tensor<2x1xi32>) -> tensor<2x4xf32> {
  %0 = "stablehlo.gather"(%a, %i) {dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = -1 : i1>, slice_sizes = array<i64: 1, 4>} : (tensor<3x4xf32>, tensor<2x1xi32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}
'''
    with pytest.raises(shlo.StableHLOError, match="index_vector_dim"):
        shlo.parse(text)


# ---------------------------------------------------------------- #complex.number (chlo.constant_like)

_CL = '''func.func @main(%a: tensor<2x{t}>) -> tensor<2x{t}> {{
  %0 = "chlo.constant_like"(%a) {{value = {v}}} : (tensor<2x{t}>) -> tensor<2x{t}>
  func.return %0 : tensor<2x{t}>
}}
'''


def _part_text(draw, x):
    """One way MLIR text may spell the double x: decimal, the double's hex bits, or inf/nan."""
    if math.isnan(x) or math.isinf(x) or draw(st.booleans()):
        if math.isnan(x) and draw(st.booleans()):
            return "nan"
        if math.isinf(x) and draw(st.booleans()):
            return "inf" if x > 0 else "-inf"
        return "0x%016X" % struct.unpack("<Q", struct.pack("<d", x))[0]
    r = repr(x)
    return r if ("." in r or "e" in r) else r + ".0"


@st.composite
def _complex_attr_case(draw):
    part = draw(st.sampled_from(["f32", "f64"]))
    re_, im = (draw(st.floats(width=draw(st.sampled_from([32, 64])))) for _ in range(2))
    return part, re_, im, _part_text(draw, re_), _part_text(draw, im), draw(st.booleans())


@settings(max_examples=300, deadline=None, derandomize=True)
@given(_complex_attr_case())
def test_complex_number_attribute_round_trips(c):
    """`#complex.number<:f32 re, im> [: complex<f32>]` parses to the parts rounded to the part type
    (read as doubles, as MLIR's parser reads them), prints back as text that reads back to the
    same attribute (NaN and inf as a double's hex bits), and prints the same the second time."""
    from stablehlo_ref.ir import ComplexAttr, element_type
    part, re_, im, re_text, im_text, typed = c
    t = f"complex<{part}>"
    v = f"#complex.number<:{part} {re_text}, {im_text}>" + (f" : {t}" if typed else "")
    m = parse(_CL.format(t=t, v=v))
    attr = m.functions["main"].regions[0].blocks[0].operations[0].attributes["value"]
    dt = np.float32 if part == "f32" else np.float64
    with np.errstate(all="ignore"):
        want = ComplexAttr(float(dt(re_)), float(dt(im)), element_type(t))
    assert attr == want and attr.type == element_type(t)
    assert all(np.signbit(a) == np.signbit(b) for a, b in ((attr.real, want.real), (attr.imag, want.imag))
               if a == a)
    printed = print_module(m)
    assert f"#complex.number<:{part} " in printed and f"> : {t}}}" in printed
    m2 = parse(printed)
    assert_modules_equal(m, m2)
    assert print_module(m2) == printed
    assert_modules_equal(m, parse(print_module(m, generic=True)))


@pytest.mark.parametrize("value, at, message", [
    ("#complex.number<f32 1.0, 2.0>", "f32", "expected ':'"),
    ("#complex.number<:f32 1.0 2.0>", " 2.0", "expected ','"),   # (at the end of the token before)
    ("#complex.number<:f32 1.0, 2.0", "}", "expected '>'"),
    ("#complex.number<:f32 1, 2.0>", "1,", "expected a float literal for the real part of #complex.number, got the integer 1"),
    ("#complex.number<:f32 1.0, x>", "x>", "expected a float literal for the imaginary part"),
    ("#complex.number<:f32 -0x3FF0000000000000, 2.0>", "-0x", "hexadecimal float literal (the bits of a double) takes no sign"),
    ("#complex.number<:f32 0x1FFFFFFFFFFFFFFFF, 2.0>", "0x", "does not fit in 64 bits"),
    ("#complex.number<:i32 1.0, 2.0>", "i32", "the parts of a #complex.number must be of a float type, got i32"),
    ("#complex.number<:f16 1.0, 2.0>", "f16", "complex<f16> is not a StableHLO element type"),
    ("#complex.number<:f32 1.0, 2.0> : complex<f64>", "complex<f64>",
     "#complex.number of f32 has type complex<f32>, not complex<f64>"),
])
def test_malformed_complex_number_is_one_parse_error_with_a_location(value, at, message):
    text = _CL.format(t="complex<f32>", v=value)
    line = text.splitlines()[1]
    col = line.index(value) + (value + "}").index(at) + 1
    with pytest.raises(ParseError) as e:
        parse(text, "c.mlir")
    err = str(e.value)
    assert err.startswith(f"c.mlir:2:{col}: ") and message in err, err
    assert err.count("c.mlir:") == 1


def test_constant_like_of_a_complex_number_verifies_runs_and_legalizes():
    import stablehlo_ref as shlo
    from stablehlo_ref.errors import SerializationError, VerificationError
    from stablehlo_ref.transforms.chlo_legalize import legalize_chlo
    from stablehlo_ref.verifier import verify
    for part, dt in (("f32", np.complex64), ("f64", np.complex128)):
        t = f"complex<{part}>"
        m = parse(_CL.format(t=t, v=f"#complex.number<:{part} -1.5, 2.5e-1>"))
        verify(m)
        out = shlo.run(m, np.zeros(2, dt))[0]
        assert out.dtype == dt and list(out) == [complex(-1.5, 0.25)] * 2
        assert legalize_chlo(m) == {"chlo.constant_like": 1}
        assert "chlo." not in print_module(m)
        out = shlo.run(m, np.zeros(2, dt))[0]
        assert out.dtype == dt and list(out) == [complex(-1.5, 0.25)] * 2
        for bad_t, v in ((t, f"#complex.number<:{'f64' if part == 'f32' else 'f32'} 1.0, 2.0>"),
                         (t, f"1.0 : {part}"), (part, f"#complex.number<:{part} 1.0, 2.0>")):
            with pytest.raises(VerificationError, match="value's type .* doesn't match element return type"):
                verify(parse(_CL.format(t=bad_t, v=v)))
    # VHLO has no complex attribute: a discardable one is refused by name, not as a repr
    m = parse('func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n'
              '  %0 = stablehlo.abs %a {foo = #complex.number<:f32 1.0, 2.0>} : tensor<2xf32>\n'
              '  func.return %0 : tensor<2xf32>\n}\n')
    with pytest.raises(SerializationError, match="a #complex.number attribute has no VHLO encoding"):
        shlo.serialize(m)
