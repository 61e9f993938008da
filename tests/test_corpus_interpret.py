"""Every file of the upstream `interpret/`, `math/` and `testdata/` corpora through
`run --check`, against the committed known-failure lists (which may only shrink)."""
import pytest

from corpus import SHARED, check_file_against_known, corpus_files, load_known

CORPORA = {
    "interpret": corpus_files("interpret", "**/*.mlir"),     # incl. interpret/chlo/
    "math": corpus_files("math"),
    "testdata": corpus_files("testdata"),
    "testdata_dynamic": corpus_files("testdata", "dynamic/*.mlir"),
    "testdata_quantized": corpus_files("testdata", "quantized/*.mlir"),
}
KNOWN = {name: load_known(name) for name in CORPORA}
PARAMS = [pytest.param(name, rel, id=rel) for name, files in CORPORA.items() for rel in files]


@pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/stablehlo-tests not present")
@pytest.mark.parametrize("corpus,rel", PARAMS)
def test_corpus_file(corpus, rel):
    _, unexpected, fixed = check_file_against_known(rel, KNOWN[corpus])
    msgs = []
    if unexpected:
        msgs.append("new failures (fix them, do not list them):\n  " + "\n  ".join(unexpected))
    if fixed:
        msgs.append(f"now passing: remove from tests/known_failures/{corpus}.txt:\n  " + "\n  ".join(fixed))
    assert not msgs, "\n".join(msgs)


def test_known_failure_lists_have_reasons():
    for name in CORPORA:
        for key, reason in load_known(name).items():
            assert reason, key
