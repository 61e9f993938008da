"""MLIR-style diagnostics (stablehlo_ref.diagnostics)."""
from hypothesis import given, strategies as st

from stablehlo_ref.diagnostics import format_diagnostic, format_error, source_excerpt, split_location
from stablehlo_ref.errors import ParseError, UsageError

SRC = "func.func @main() {\n  %0 = stablehlo.add %x, %x : tensor<f32>\n}\n"


def test_located_error_has_source_line_and_caret():
    got = format_diagnostic("bad", "t.mlir:2:8", sources={"t.mlir": SRC})
    assert got.splitlines() == ["t.mlir:2:8: error: bad",
                                "  %0 = stablehlo.add %x, %x : tensor<f32>",
                                "       ^"]


def test_without_source_or_location():
    assert format_diagnostic("bad", "t.mlir:2:8") == "t.mlir:2:8: error: bad"
    assert format_diagnostic("bad") == "error: bad"
    assert format_diagnostic("bad", "x.bc: byte 25", sources=SRC) == "x.bc: byte 25: error: bad"


def test_notes_and_errors():
    e = ParseError("expected ')'", "t.mlir:1:5")
    e.notes = [("t.mlir:2:3", "opened here")]
    got = format_error(e, sources=lambda f: SRC if f == "t.mlir" else None)
    lines = got.splitlines()
    assert lines[0] == "t.mlir:1:5: error: expected ')'"
    assert lines[1:3] == ["func.func @main() {", "    ^"]
    assert lines[3] == "t.mlir:2:3: note: opened here"
    assert lines[5] == "  ^"
    assert format_error(UsageError("cannot read x")) == "error: cannot read x"


def test_tabs_and_out_of_range_positions():
    assert source_excerpt("f:1:3", "\tab") == "\tab\n\t ^"
    assert source_excerpt("f:9:1", "a\nb") is None
    assert source_excerpt("f:1:99", "ab") == "ab\n  ^"
    assert split_location("C:\\x\\y.mlir:3:4") == ("C:\\x\\y.mlir", 3, 4)
    assert split_location("y.mlir:3") is None


@given(st.text(), st.text(max_size=30), st.integers(0, 50), st.integers(0, 50))
def test_never_raises(src, name, line, col):
    out = format_diagnostic("m", f"{name}:{line}:{col}", sources={name: src})
    assert out.startswith(f"{name}:{line}:{col}: error: m")
