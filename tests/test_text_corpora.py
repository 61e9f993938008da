"""Every `// -----` chunk of the upstream corpora (testdata, interpret, math, vhlo, ops) parses,
unless upstream rejects it while parsing (an `expected-error` whose message is a parse-time
diagnostic), in which case it must fail with a ParseError. Every chunk that parses round-trips
through the printer, in pretty and generic form. Remaining gaps are listed, with a reason, in
`tests/known_failures/text.txt` (`case-id<TAB>reason`, case id `file#chunk`), which may only
shrink."""
from __future__ import annotations

import re

import pytest

from corpus import SHARED, corpus_files, load_known
from stablehlo_ref import ParseError, parse, print_module
from stablehlo_ref.checkrun import split_chunks
from stablehlo_ref.ir import assert_modules_equal

CORPORA = ("testdata", "interpret", "math", "vhlo", "ops")
FILES = [f for c in CORPORA for f in corpus_files(c, "**/*.mlir")]
KNOWN = load_known("text")

_EXPECTED = re.compile(r"expected-error\s*(?:@[-+\w]+)?\s*\{\{(.*?)\}\}")
_CODE_LINE = re.compile(r"^\s*[^/\s]", re.M)
# Diagnostics MLIR emits while parsing (custom-op parsers, the attribute/type parsers and the
# attribute verifiers they call), as opposed to op verifiers, which run after a module parsed.
_PARSE_DIAGNOSTIC = re.compile(
    r"^(custom op '|expected '|expected non-function type|expected ','|expected one of|"
    r"failed parsing|duplicated `|expected the inner-op|expected VHLO|Invalid tolerances|"
    r"unknown |undefined |use of undeclared|expected type|expected integer|expected SSA|"
    # the #stablehlo.dot_algorithm attribute verifier
    r"lhs component count must|rhs component count must|num primitive operations must|"
    r"dot algorithm not known)")


def chunk_expectation(chunk: str) -> str:
    """'skip' (no code), 'parse-error' (upstream rejects it while parsing) or 'parse'."""
    if not _CODE_LINE.search(chunk):
        return "skip"
    msgs = _EXPECTED.findall(chunk)
    if any(_PARSE_DIAGNOSTIC.match(m) for m in msgs):
        return "parse-error"
    return "parse"


def iter_chunks(rel: str):
    text = (SHARED / rel).read_text()
    for i, chunk in enumerate(split_chunks(text)):
        yield f"{rel}#{i}", chunk


def check_chunk(case: str, chunk: str, rel: str):
    """None when the chunk behaves as upstream does, else a one-line description."""
    want = chunk_expectation(chunk)
    if want == "skip":
        return None
    try:
        m = parse(chunk, rel)
    except ParseError as e:
        if want == "parse-error":
            return None
        return f"parse error: {str(e).splitlines()[0]}"
    except Exception as e:   # a crash instead of a ParseError is a bug either way
        return f"crash: {type(e).__name__}: {e}"
    if want == "parse-error":
        return "parsed, but upstream rejects it while parsing"
    for generic in (False, True):
        form = "generic" if generic else "pretty"
        try:
            printed = print_module(m, generic=generic)
            assert_modules_equal(m, parse(printed, f"<printed {form}>"))
        except (ParseError, AssertionError, Exception) as e:   # noqa: B014 - report any failure
            return f"round trip ({form}): {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    return None


@pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/stablehlo-tests not present")
@pytest.mark.parametrize("rel", FILES)
def test_corpus_chunks_parse_and_round_trip(rel):
    unexpected, fixed = [], []
    for case, chunk in iter_chunks(rel):
        problem = check_chunk(case, chunk, rel)
        if problem is None and case in KNOWN:
            fixed.append(case)
        elif problem is not None and case not in KNOWN:
            unexpected.append(f"{case}: {problem}")
    msg = []
    if unexpected:
        msg.append("new failures:\n  " + "\n  ".join(unexpected))
    if fixed:
        msg.append("now passing (remove from tests/known_failures/text.txt):\n  " + "\n  ".join(fixed))
    assert not msg, "\n".join(msg)


def test_known_failures_name_existing_cases():
    if not SHARED.is_dir():
        pytest.skip("../shared/stablehlo-tests not present")
    files = set(FILES)
    for case in KNOWN:
        assert case.rsplit("#", 1)[0] in files, f"known failure {case} names a missing file"


def test_expectation_classifier():
    assert chunk_expectation("// only a comment\n") == "skip"
    assert chunk_expectation("func.func @f() {\n  func.return\n}\n") == "parse"
    verify_err = "// expected-error@+1 {{'stablehlo.add' op requires the same type}}\nfunc.func @f()\n"
    assert chunk_expectation(verify_err) == "parse"
    parse_err = "// expected-error @+1 {{custom op 'stablehlo.add' expected single output}}\nfunc.func @f()\n"
    assert chunk_expectation(parse_err) == "parse-error"
