"""Parse and print: every chunk of the upstream corpora that parses round-trips
(`parse(print(parse(x))) == parse(x)`), in pretty and generic form."""
import pytest

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
