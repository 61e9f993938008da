"""docs/ops.md and the README status section are generated (python -m stablehlo_ref.docs) and
must be current; the corpus-cases column depends on ../shared and is not compared."""
from __future__ import annotations

import difflib
import subprocess
import sys
from pathlib import Path

import pytest

from stablehlo_ref import docs, spec

REPO = Path(__file__).resolve().parent.parent
FIX = "run `python -m stablehlo_ref.docs` and commit docs/ops.md and README.md"


def _diff(old: str, new: str) -> str:
    lines = list(difflib.unified_diff(old.splitlines(), new.splitlines(), "committed", "generated", lineterm="", n=0))
    return "\n".join(lines[:30])


@pytest.fixture(scope="module")
def rows():
    return docs.op_statuses(corpus=None)


def test_ops_md_is_current(rows):
    path = REPO / "docs" / "ops.md"
    assert path.is_file(), f"docs/ops.md is missing: {FIX}"
    committed = docs.mask_corpus_column(path.read_text(encoding="utf-8"))
    generated = docs.mask_corpus_column(docs.render_ops_md(rows))
    assert committed == generated, f"docs/ops.md is stale: {FIX}\n{_diff(committed, generated)}"


def test_readme_status_is_current(rows):
    text = (REPO / "README.md").read_text(encoding="utf-8")
    assert docs.BEGIN in text and docs.END in text, "README.md lacks the status markers"
    generated = docs.update_readme(text, docs.render_summary(rows))
    assert text == generated, f"the README status section is stale: {FIX}\n{_diff(text, generated)}"


def test_one_row_per_spec_op(rows):
    assert [r.name for r in rows] == [o.name for o in spec.ops()]
    md = docs.render_ops_md(rows)
    for o in spec.ops():
        assert f"| `{o.name}` |" in md


def test_columns(rows):
    by = {r.name: r for r in rows}
    assert by["stablehlo.add"].parse_print == "pretty" and by["stablehlo.add"].interpret == "kernel"
    assert by["stablehlo.while"].parse_print == "pretty"           # hand-written parser
    assert by["func.return"].interpret == "evaluator"
    assert by["stablehlo.dot_general"].vhlo_encodings == ("vhlo.dot_general_v1", "vhlo.dot_general_v2")
    assert by["chlo.erf"].vhlo_encodings == ()
    for r in rows:
        assert r.parse_print in ("pretty", "partial", "generic")
        assert r.interpret in ("kernel", "evaluator", "no")


def test_corpus_counts_count_cases_not_mentions(tmp_path):
    (tmp_path / "interpret").mkdir()
    (tmp_path / "testdata" / "quantized").mkdir(parents=True)
    (tmp_path / "interpret" / "a.mlir").write_text(
        'func.func @f() {\n  %0 = stablehlo.add %a, %a : tensor<f32>\n  %1 = "stablehlo.add"(%0, %0)'
        ' : (tensor<f32>, tensor<f32>) -> tensor<f32>\n  check.expect_eq_const %1, dense<1.0> : tensor<f32>\n'
        '  func.return\n}\n// -----\nfunc.func @g() {\n  %0 = stablehlo.custom_call @check.expect_close(%x)'
        ' {comparison_direction = #stablehlo<comparison_direction EQ>}\n  return\n}\n')
    (tmp_path / "testdata" / "quantized" / "b.mlir").write_text(
        "func.func @main() {\n  %0 = call @inputs() : () -> tensor<f32>\n  %1 = stablehlo.add %0, %0 : tensor<f32>\n}\n")
    counts = docs.corpus_counts(tmp_path)
    assert counts["stablehlo.add"] == 2                 # two cases, one of them naming it twice
    assert counts["func.func"] == 3 and counts["func.return"] == 2 and counts["func.call"] == 1
    assert counts["stablehlo.custom_call"] == 1
    assert "check.expect_close" not in counts            # @check.expect_close is a call target
    assert counts["check.expect_eq_const"] == 1
    assert docs.corpus_counts(tmp_path / "absent") is None


def test_mask_and_previous_counts(tmp_path, rows):
    # a count no other column holds (the generated-cases column has small numbers)
    md = docs.render_ops_md(docs.op_statuses(corpus={"stablehlo.add": 98765}))
    assert "| `stablehlo.add` |" in md and " | 98765 |" in md
    masked = docs.mask_corpus_column(md)
    assert " | 98765 |" not in masked and masked.count("\n") == md.count("\n")
    p = tmp_path / "ops.md"
    p.write_text(md)
    prev = docs._previous_counts(p)
    assert prev["stablehlo.add"] == "98765" and prev["stablehlo.abs"] == "0"
    again = docs.render_ops_md(docs.op_statuses(corpus=None, previous=prev))
    assert again == md


def test_update_readme_needs_markers():
    assert docs.update_readme(f"a\n{docs.BEGIN}\nold\n{docs.END}\nb\n", "new") == f"a\n{docs.BEGIN}\nnew\n{docs.END}\nb\n"
    with pytest.raises(ValueError, match="markers"):
        docs.update_readme("no markers here", "x")


def test_check_command_reports_current():
    r = subprocess.run([sys.executable, "-m", "stablehlo_ref.docs", "--check"], cwd=REPO,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr


def test_command_rewrites_and_checks(tmp_path, monkeypatch, capsys):
    (tmp_path / "spec").mkdir()
    (tmp_path / "README.md").write_text(f"# x\n\n{docs.BEGIN}\nold table\n{docs.END}\n\nrest\n")
    monkeypatch.setattr(docs, "REPO", tmp_path)
    monkeypatch.setattr(docs, "SHARED", tmp_path / "no-corpus")
    assert docs.main(["--check"]) == 1
    assert "stale: docs/ops.md, docs/constraints.md, docs/not_implemented.md, README.md" in capsys.readouterr().err
    assert docs.main([]) == 0
    assert (tmp_path / "docs" / "ops.md").read_text().startswith("# Op status")
    readme = (tmp_path / "README.md").read_text()
    assert "old table" not in readme and readme.endswith(f"{docs.END}\n\nrest\n")
    assert docs.main(["--check"]) == 0
    (tmp_path / "README.md").write_text("no markers\n")
    assert docs.main([]) == 2
    assert "markers" in capsys.readouterr().err


def test_not_implemented_md_is_current_and_lists_every_raise():
    path = REPO / "docs" / "not_implemented.md"
    assert path.is_file(), f"docs/not_implemented.md is missing: {FIX}"
    generated = docs.render_not_implemented_md()
    assert path.read_text(encoding="utf-8") == generated, f"docs/not_implemented.md is stale: {FIX}"
    raises = sum(p.read_text(encoding="utf-8").count("raise NotImplementedOpError(")
                 for p in (REPO / "stablehlo_ref").rglob("*.py") if p.name != "docs.py")
    assert generated.count("| not implemented: ") == raises > 0


def test_constraints_md_is_current_and_has_no_gap():
    path = REPO / "docs" / "constraints.md"
    assert path.is_file(), f"docs/constraints.md is missing: {FIX}"
    generated = docs.render_constraints_md()
    committed = path.read_text(encoding="utf-8")
    assert committed == generated, f"docs/constraints.md is stale: {FIX}\n{_diff(committed, generated)}"
    rows = [line for line in generated.splitlines() if line.startswith("| `")]
    assert rows and all(line.endswith("| — |") for line in rows), "a constraint id is not cited by any check"
