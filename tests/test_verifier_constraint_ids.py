"""Every constraint id a verifier can report exists in the spec entry of the op it verifies.

Statically: for each op in the `VERIFIERS` registry, walk the AST of its checking function and of
every function it reaches by name (in the verifier package and the `ir` helpers it imports),
collecting the string literals shaped like a constraint id (`C12`). The collection over-reaches
(a helper's literals count for every op that calls it), never under-reaches, so long as ids are
literals: the walk also rejects any `check(...)` whose id argument is computed, and any
f-string or %-format that builds an id. Dynamically: every error the ops corpus gets names a
constraint of its op's spec entry."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import SHARED, corpus_files  # noqa: E402

from stablehlo_ref import parse, spec  # noqa: E402
from stablehlo_ref.errors import StableHLOError  # noqa: E402
from stablehlo_ref.verifier import VERIFIERS, collect  # noqa: E402
from stablehlo_ref.verifier.citations import (_module_ast, cited_ids_not_in_spec, constraint_coverage,  # noqa: E402
                                              reportable_ids)


def test_verifier_functions_found():
    for name, fn in VERIFIERS.items():
        assert fn.__name__ in _module_ast(fn.__module__)[0], f"{name}: {fn.__module__}.{fn.__name__} not a top-level def"


def test_constraint_ids_are_literals():
    computed = set()
    for fn in set(VERIFIERS.values()):
        computed.update(reportable_ids(fn)[1])
    assert not computed, "constraint ids passed to check must be literals (or names bound to literals):\n  " + \
        "\n  ".join(sorted(computed))


def test_every_cited_id_is_in_the_ops_spec_entry():
    missing = cited_ids_not_in_spec()
    assert not missing, f"{len(missing)} cited id(s) not in the spec:\n  " + "\n  ".join(f"{o} {c}" for o, c in missing)


OPS_FILES = corpus_files("ops")


@pytest.mark.skipif(not OPS_FILES, reason="../shared/stablehlo-tests not present")
def test_reported_ids_exist_in_spec():
    from test_verifier import split_chunks
    bad = set()
    for rel in OPS_FILES:
        for chunk in split_chunks((SHARED / rel).read_text()):
            try:
                module = parse(chunk, rel)
            except StableHLOError:
                continue
            for e in collect(module):
                cid = e.constraint
                if cid and not (spec.has_op(e.op.name) and cid in {c.id for c in spec.op(e.op.name).constraints}):
                    bad.add(f"{e.op.name} {cid}")
    assert not bad, "reported ids missing from the spec: " + ", ".join(sorted(bad))


if __name__ == "__main__":
    m = cited_ids_not_in_spec()
    for o, c in m:
        print(o, c)
    print(len(m), "cited ids not in spec")


def test_every_spec_constraint_is_cited_by_a_check():
    """The other direction: every numbered constraint of every op has a check that cites it
    (docs/constraints.md shows the same table)."""
    gaps = [f"{op} {cid}" for op, rows in constraint_coverage().items() for cid, ok in rows if not ok]
    assert not gaps, f"{len(gaps)} constraint id(s) no check cites:\n  " + "\n  ".join(gaps)
