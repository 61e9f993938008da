"""Bad text of any kind gets one ParseError (or, once parsed, a VerificationError), never another
exception: mutated programs are parsed, verified and printed."""
from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings, strategies as st

from stablehlo_ref import parse, print_module
from stablehlo_ref.errors import StableHLOError
from stablehlo_ref.verifier import verify

_ROOT = Path(__file__).resolve().parent.parent
_SEEDS = [
    (_ROOT / "examples" / "mlp.mlir").read_text(),
    """#loc1 = loc("x.py":1:2)
module @m attributes {mhlo.num_partitions = 1 : i32} {
  func.func public @main(%arg0: tensor<4x!quant.uniform<i8:f32, 1.000000e-01:3>>, %arg1: tensor<2x3xf32> loc("a")) -> (tensor<3xf32>, tensor<i64>) {
    %c = stablehlo.constant dense<[1, 2]> : tensor<2xi64>
    %cst = stablehlo.constant dense<"0x0000803F00000040"> : tensor<2xf32>
    %0 = stablehlo.reduce(%arg1 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<3xf32> loc(#loc1)
    %1:2 = stablehlo.while(%iterArg = %c, %iterArg_0 = %c) : tensor<2xi64>, tensor<2xi64>
    cond {
      %2 = stablehlo.compare LT, %iterArg, %iterArg_0, SIGNED : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi1>
      %3 = stablehlo.reduce(%2 init: %2) applies stablehlo.and across dimensions = [0] : (tensor<2xi1>, tensor<2xi1>) -> tensor<i1>
      stablehlo.return %3 : tensor<i1>
    } do {
      stablehlo.return %iterArg, %iterArg_0 : tensor<2xi64>, tensor<2xi64>
    }
    %4 = "stablehlo.gather"(%arg1, %c) <{dimension_numbers = #stablehlo.gather<offset_dims = [0], collapsed_slice_dims = [1], start_index_map = [1]>, slice_sizes = array<i64: 2, 1>}> : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<2xf32>
    %5 = stablehlo.get_dimension_size %arg1, dim = 0 : (tensor<2x3xf32>) -> tensor<i32>
    %6 = stablehlo.convert %5 : (tensor<i32>) -> tensor<i64>
    return %0, %6 : tensor<3xf32>, tensor<i64>
  }
}
""",
]
_TOKENS = ["(", ")", "{", "}", "<", ">", "[", "]", ",", ":", "=", "%0", "%arg0", "tensor<", "x", "?",
           '"', "0x", "#", "!", "^bb0", "loc(", "-", "1e999", "99999999999999999999", "i1", "f32",
           "dense<", "@", "\\", "!quant.uniform<", "#stablehlo.", "-> ", "\n", "// ", "{-#"]


@st.composite
def mutated(draw):
    s = draw(st.sampled_from(_SEEDS))
    for _ in range(draw(st.integers(1, 4))):
        i = draw(st.integers(0, len(s)))
        kind = draw(st.integers(0, 2))
        if kind == 0:
            s = s[:i] + draw(st.sampled_from(_TOKENS)) + s[i:]
        elif kind == 1:
            s = s[:i] + s[i + draw(st.integers(1, 20)):]
        else:
            j = draw(st.integers(0, len(s)))
            s = s[:i] + s[j:j + draw(st.integers(1, 12))] + s[i:]
    return s


@settings(max_examples=400, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(mutated())
def test_mutated_text_raises_only_project_errors(text):
    try:
        m = parse(text, "fuzz.mlir")
        verify(m)
        print_module(m)
    except StableHLOError:
        pass


def test_specific_bad_inputs_are_parse_errors():
    import pytest
    from stablehlo_ref.errors import ParseError
    for text in ["func.func @f() -> tensor<i32> {\n %0 = stablehlo.constant dense<1.5> : tensor<i32>\n return %0 : tensor<i32>\n}",
                 "func.func @f() -> tensor<i32> {\n %0 = stablehlo.constant dense<true> : tensor<i32>\n return %0 : tensor<i32>\n}",
                 "func.func @f(%a: !) -> () {\n return\n}",
                 "func.func @f(%a: tensor<4x!quant.uniform<!foo.bar:f32, 1.0>>) -> () {\n return\n}",
                 "func.func @f() -> () {\n^ \n return\n}"]:
        with pytest.raises(ParseError):
            parse(text)
